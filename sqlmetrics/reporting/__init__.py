"""``sqlmetrics.report``: one self-contained HTML page of a model review (issue 20).

data.py asks evaluate for the numbers, charts.py draws them (matplotlib, inline SVG), page.py
lays out the page. The page needs the optional extra ``sqlmetrics[report]`` (matplotlib).
"""

from __future__ import annotations

import datetime
import platform
import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any

from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import (
    Declared,
    Definitions,
    Exposure,
    Flag,
    Grouped,
    Option,
    Sources,
    declared,
    filled,
    group_list,
    takes,
)
from sqlmetrics.reporting import charts, common, data, page
from sqlmetrics.reporting.data import DEFAULT_K_MAX, LARGEST_K_MAX

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import Unpack


class Report:
    """A rendered report: ``.html`` (the page), ``.save(path)``, and the frames it was drawn
    from (``.summary``: evaluate's result with the summary's labels; ``.curves``: metric@k for
    k = 1..k_max, a row per model, metric and k with ``value``, ``lo`` and ``hi``;
    ``.distributions``: the spread of the per-user values, ``read_distributions(result)``;
    ``.segments``: every segment, also those the page leaves out; ``.exposure``: the exposure
    between item groups, ``read_exposure(result)``, with ``exposure_k``).
    Jupyter shows it through ``_repr_html_``."""

    def __init__(self, html: str, results: data.Results) -> None:
        self.html = html
        self.summary: pd.DataFrame = results.main
        self.curves: pd.DataFrame = results.curves
        self.distributions: pd.DataFrame | None = results.distributions
        self.segments: pd.DataFrame | None = results.segments
        self.exposure: pd.DataFrame | None = results.exposure

    def save(self, path: str, *, force: bool = False) -> None:
        """Writes the page to ``path``; an existing file that is not a sqlmetrics report is
        refused unless ``force``."""
        from sqlmetrics.io.files import refuse_foreign_file, write_file

        if path == "":
            raise SqlmetricsError("report: the file name is empty; give one, like report.html")
        refuse_foreign_file(path, page.GENERATOR, force)
        write_file(path, self.html.encode("utf-8"))

    def _repr_html_(self) -> str:
        # In a frame of its own: the page's styles (body, table, h1...) stay off the notebook's.
        import html

        return (
            f'<iframe srcdoc="{html.escape(self.html, quote=True)}" title="sqlmetrics report" '
            'style="width:100%;height:900px;border:1px solid #ddd"></iframe>'
        )

    def __repr__(self) -> str:
        return f"<sqlmetrics Report: {len(self.html):,} characters of HTML; .save(path) writes it>"


def _whole_users(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SqlmetricsError(f"{name} must be a whole number of users, like 30")


class ReportOptions(Grouped, Definitions, Sources, Exposure, total=False):
    """``report``'s keyword options: evaluate's (but its intervals and rows per user), and the
    page's own."""

    segment: Annotated[
        str | None,
        Option(
            None,
            flag=Flag(
                "break each metric down by this column of both inputs (each user's, like country)",
                metavar="COLUMN",
            ),
        ),
    ]
    baseline: Annotated[
        str | None,
        Option(
            None,
            flag=Flag("compare every model with this one (a --group-by value)", metavar="MODEL"),
        ),
    ]
    k_max: Annotated[
        int,
        Option(
            DEFAULT_K_MAX,
            flag=Flag(
                f"the curves run k = 1..K, K up to {LARGEST_K_MAX} (default {DEFAULT_K_MAX}); "
                "-m ndcg is summarised at K",
                type=int,
                metavar="K",
            ),
        ),
    ]
    small_segment: Annotated[
        int,
        Option(
            common.DEFAULT_SMALL_SEGMENT,
            _whole_users,
            Flag(
                "segments with fewer users are marked small (default "
                f"{common.DEFAULT_SMALL_SEGMENT})",
                type=int,
                metavar="USERS",
            ),
        ),
    ]


@takes(ReportOptions)
def report(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    **options: Unpack[ReportOptions],
) -> Report:
    """A report of ``metrics`` per model: the inputs and options are evaluate's.

    Args:
        metrics: like evaluate's; ``ndcg`` is summarised at ``ndcg@k_max``, ``ndcg@10`` at 10,
            and every metric with a cutoff gets its curve k = 1..k_max. Beyond-accuracy metrics
            (coverage, gini, novelty, personalization...) get a chart of their own.
        group_by: the column(s) naming the models.
        segment: a column to break each metric down by (in both inputs, like a country).
        baseline: the model the others are compared with (a value of ``group_by``).
        k_max: the curves' deepest cutoff.
        small_segment: segments with fewer users than this are marked small.
        exposure_k: with ``items`` and its ``columns["item_group"]``: a section with each
            item group's share of the exposure in the top k per model, beside its share of
            the catalogue and of the relevant items (evaluate's ``read_exposure``).
        exposure_patience: the exposure's discount, patience^(position - 1) (0.85).
    """
    given: dict[str, Any] = dict(filled(ReportOptions, options, "report"))
    group_by = given["group_by"] = group_list(given["group_by"])
    segment, baseline = given["segment"], given["baseline"]
    if segment is not None and segment in group_by:
        raise SqlmetricsError(f"segment {segment!r} is also a group_by column; choose another")
    the_plan = data.plan(metrics, given["k_max"])
    drawing = charts.import_in_background()
    evaluating = {name: given[name] for name in EVALUATE_OPTIONS}
    results = data.gather(
        recommendations,
        interactions,
        the_plan,
        group_by=group_by,
        segment=segment,
        options=evaluating,
        baseline=baseline,
        exposure={name: given[name] for name in ("exposure_k", "exposure_patience")},
    )
    drawing.join()
    models = common.model_names(results.main, group_by)
    if baseline is not None and baseline not in models:
        raise SqlmetricsError(
            f"baseline {baseline!r} is not one of the models ({', '.join(models)}); "
            "name a value of the group_by column"
        )
    comparison = None
    if baseline is not None:
        inputs = {"recommendations": recommendations, "interactions": interactions}
        comparison = data.baseline_comparison(
            {**inputs, "group_by": group_by, **evaluating}, the_plan.summary, baseline
        )
    context = _context(recommendations, interactions, metrics, the_plan, results, given)
    return Report(page.render(results, the_plan, context, comparison), results)


# The options report passes on to evaluate (and compare): how the inputs are read, and where.
EVALUATE_OPTIONS = tuple(item.name for item in (*declared(Definitions), *declared(Sources)))
# Shown on the page's list of options: the others are inputs, described on their own.
_UNSHOWN = ("connection", "items", "history")


def _context(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    the_plan: data.Plan,
    results: data.Results,
    given: Mapping[str, Any],
) -> common.Context:
    """What the page says of how it was made: inputs, options, versions, its command line."""
    line = command(recommendations, interactions, metrics, given)
    shown = {name: given[name] for name in EVALUATE_OPTIONS if name not in _UNSHOWN}
    return common.Context(
        inputs=_inputs(recommendations, interactions, given["items"], given["history"]),
        options={**shown, "metrics": list(the_plan.metrics)},
        versions=versions(),
        engine=results.engine,
        created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        command=line,
        command_note=no_command(recommendations, interactions, given) if line is None else "",
        group_by=given["group_by"],
        segment=given["segment"],
        baseline=given["baseline"],
        small_segment=given["small_segment"],
        exposure_k=given["exposure_k"],
    )


def versions() -> dict[str, str]:
    from importlib.metadata import version

    import duckdb

    from sqlmetrics._version import __version__

    found = {
        "sqlmetrics": __version__,
        "DuckDB": duckdb.__version__,
        "sqlglot": version("sqlglot"),
        "Python": platform.python_version(),
    }
    try:
        import matplotlib

        found["matplotlib"] = matplotlib.__version__
    except ImportError:  # pragma: no cover - the charts refuse first
        pass
    return found


def _described(value: object) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        return value
    return f"a {type(value).__module__.split('.')[0]} {type(value).__name__} in memory"


def _inputs(
    recommendations: object, interactions: object, items: object, history: object
) -> dict[str, str]:
    described = {
        "recommendations": _described(recommendations),
        "interactions": _described(interactions),
    }
    if items is not None:
        described["items"] = _described(items)
    if history is not None:
        described["history"] = _described(history)
    return described


def command(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    options: Mapping[str, Any],
) -> str | None:
    """The ``sqlmetrics report`` command that makes the same page (``options``: report's, every
    one given); None when an input is an object in memory or the run went through a connection
    the command line cannot name (one that is not SQLAlchemy's: the CLI's --connection takes a
    URL; see no_command)."""
    files = [recommendations, interactions, options.get("items"), options.get("history")]
    if not all(value is None or isinstance(value, str) for value in files):
        return None
    words = ["sqlmetrics", "report", str(recommendations), str(interactions)]
    through = _connection_words(options)
    if through is None:
        return None
    words += through
    words += ["-m", ",".join([metrics] if isinstance(metrics, str) else metrics)]
    for column in options["group_by"]:
        words += ["--group-by", column]
    page_options = [item for item in declared(ReportOptions) if item.name not in EVALUATE_OPTIONS]
    words += _flag_words(page_options, options, always=("k_max",))
    for role, name in (options.get("columns") or {}).items():
        flag = f"--{role.replace('_', '-')}-column"
        words += ["--no-relevance"] if name is None else [flag, name]
    words += _flag_words([*declared(Definitions), *declared(Sources)], options)
    for option in ("items", "history"):
        if options.get(option) is not None:
            words += [f"--{option}", str(options[option])]
    return " ".join(shlex.quote(word) for word in [*words, "-o", "report.html"])


def _flag_words(
    items: Sequence[Declared], options: Mapping[str, Any], always: Sequence[str] = ()
) -> list[str]:
    """The flags of the options with one, where they are not the default (or ``always``)."""
    words = []
    for item in items:
        value = options.get(item.name, item.option.default)
        if item.option.flag is not None and (item.name in always or value != item.option.default):
            words += [f"--{item.name.replace('_', '-')}", str(value)]
    return words


def _connection_words(options: Mapping[str, Any]) -> list[str] | None:
    """The command line's words for the options' connection ([] without one); None when a
    command line cannot name it."""
    connection = options.get("connection")
    if connection is None:
        return []
    url = connection_url(connection)
    if url is None:
        return None
    dialect = options.get("dialect")
    return ["--connection", url, *([] if dialect is None else ["--dialect", str(dialect)])]


def connection_url(connection: object) -> str | None:
    """A SQLAlchemy Engine's or Connection's URL for a command line, its password shown as
    *** (and any query parameter naming a password, secret or token left out); None for
    another kind of connection."""
    url = getattr(connection, "url", None) or getattr(
        getattr(connection, "engine", None), "url", None
    )
    if url is None or not hasattr(url, "render_as_string"):
        return None
    secret = [
        key for key in url.query if any(w in key.lower() for w in ("password", "secret", "token"))
    ]
    return str(url.difference_update_query(secret).render_as_string(hide_password=True))


def no_command(recommendations: object, interactions: object, options: Mapping[str, Any]) -> str:
    """Why no command line reproduces the page (command gave none)."""
    files = [recommendations, interactions, options.get("items"), options.get("history")]
    if not all(value is None or isinstance(value, str) for value in files):
        return (
            "The inputs are objects in memory, so no command line reproduces this page; the "
            "options above do, with the same objects."
        )
    connection = options.get("connection")
    kind = f"{type(connection).__module__.split('.')[0]} {type(connection).__name__}"
    return (
        f"The inputs are tables read through your {kind}, which a command line cannot name "
        "(its --connection takes a SQLAlchemy URL, --spark a Spark master); the options above "
        "reproduce this page through the same connection."
    )


__all__ = ["Report", "ReportOptions", "report"]
