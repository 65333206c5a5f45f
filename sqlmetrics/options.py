"""The keyword options of the public functions, each declared once: its type, its default, how a
value is checked and its command-line flag.

Each function's options are a ``TypedDict`` (``EvaluateOptions``, ``CompareOptions``,
``QueryOptions``, ``SqlOptions``; ``reporting.ReportOptions``) whose fields are
``Annotated[type, Option(default, ...)]``; the function takes them as
``**options: Unpack[EvaluateOptions]``, so that mypy and the editors check and complete every
keyword. ``@takes`` gives the function the signature ``help()`` and the API reference show (every
keyword with its default), ``filled`` the options of a call with their defaults, each given value
checked once, and the command line adds the flags of the same fields (cli/parser.py).
"""

from __future__ import annotations

import ast
import functools
import inspect
import math
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict, TypeVar

from sqlmetrics.catalog.profiles import PROFILES
from sqlmetrics.compose.inputs import CHECK_DEPTHS, DUPLICATES, POPULATIONS, RANKS, TIES
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.stats.resampling import CI_METHODS, TESTS
from sqlmetrics.stats.sampled import Sampled

Check = Callable[[str, Any], None]


@dataclass(frozen=True)
class Flag:
    """An option's command-line flag (``--name``, underscores as dashes), for argparse."""

    help: str
    choices: Sequence[str] | None = None
    type: Callable[[str], Any] | None = None
    metavar: str | None = None


@dataclass(frozen=True)
class Option:
    """What a keyword option is besides its type: its default, the check of a given value
    (None: checked where it is read), its flag (None: the command line has none, or its own)."""

    default: Any
    check: Check | None = None
    flag: Flag | None = None


def choice(choices: Sequence[str]) -> Check:
    def check(name: str, value: object) -> None:
        if value not in choices:
            raise SqlmetricsError(f"{name} must be one of {', '.join(choices)}; got {value!r}")

    return check


def _probability(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise SqlmetricsError(f"{name} must be a number between 0 and 1, like 0.05, not {value!r}")


def _test(name: str, value: object) -> None:
    if value not in TESTS:
        raise SqlmetricsError(f"{name} must be one of {', '.join(TESTS)}, not {value!r}")


def _count(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SqlmetricsError(f"{name} must be a whole number of users, like 30")


def _column_name(name: str, value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise SqlmetricsError(f"{name} must be the name of a column, like 'country', not {value!r}")


def _cutoff_or_none(name: str, value: object) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise SqlmetricsError(f"{name} must be a whole number >= 1 (a cutoff), like 10")


def _finite(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SqlmetricsError(f"{name} must be a number >= 0, got {value!r}")
    if not (value >= 0 and math.isfinite(value)):  # NaN, inf and 1e400 too
        raise SqlmetricsError(f"{name} must be a number >= 0 and finite, got {value!r}")


def _sampled(name: str, value: object) -> None:
    if value is not None and not isinstance(value, Sampled):
        raise SqlmetricsError(
            f"{name} must be sqlmetrics.Sampled(n_items=..., negatives=...), not {value!r}"
        )


def _model_name(name: str, value: object) -> None:
    if value is not None and (not isinstance(value, str) or not value):
        raise SqlmetricsError(
            f"{name} must be the name of a model (a value of the first group_by column), "
            f"not {value!r}"
        )


class Definitions(TypedDict, total=False):
    """How the metrics read the inputs: every entry point takes these."""

    columns: Annotated[Mapping[str, str | None] | None, Option(None)]
    ties: Annotated[
        str,
        Option(
            "id",
            choice(TIES),
            Flag(
                "how equal scores are ordered (default: id = item id descending; id_text = the "
                "id's text descending, byte order, as trec_eval)",
                TIES,
            ),
        ),
    ]
    threshold: Annotated[
        float,
        Option(0.0, _finite, Flag("relevant means relevance above this (default 0)", type=float)),
    ]
    population: Annotated[
        str,
        Option(
            "all",
            choice(POPULATIONS),
            Flag(
                "all: users with a relevant interaction; common: those also recommended; judged "
                "(trec_eval's default): users recommended to with any interaction; all_judged "
                "(trec_eval -c): every user with an interaction",
                POPULATIONS,
            ),
        ),
    ]
    duplicates: Annotated[
        str,
        Option(
            "error",
            choice(DUPLICATES),
            Flag(
                "repeated (user, item) recommendations: fail, or keep the best-placed", DUPLICATES
            ),
        ),
    ]
    ranks: Annotated[
        str,
        Option(
            "consecutive",
            choice(RANKS),
            Flag(
                "how a rank column is read: 1, 2, ..., n per list (consecutive, the default), or "
                "each rank as the position, gaps and repeats included (literal, as RecTools)",
                RANKS,
            ),
        ),
    ]
    profile: Annotated[
        str | None,
        Option(
            None,
            flag=Flag(
                "compute each metric as this library defines it (see `sqlmetrics profiles`)",
                list(PROFILES),
            ),
        ),
    ]


class Sources(TypedDict, total=False):
    """Where evaluate, compare and report read the inputs and run the query."""

    checks: Annotated[
        str,
        Option(
            "read",
            choice(CHECK_DEPTHS),
            Flag(
                "how deep a repeated (user, item) recommendation is refused: within what the "
                "metrics read (read, the default: the first k of the deepest cutoff) or anywhere "
                "in each list (full, an audit that reads every list whole)",
                CHECK_DEPTHS,
            ),
        ),
    ]
    connection: Annotated[object, Option(None)]
    dialect: Annotated[str | None, Option(None)]
    timeout: Annotated[
        float | None,
        Option(None, flag=Flag("cancel the query after this long", type=float, metavar="SECONDS")),
    ]
    items: Annotated[object, Option(None)]
    history: Annotated[object, Option(None)]


class Intervals(TypedDict, total=False):
    """How intervals and tests resample (checked with the level, stats.resampling)."""

    ci_method: Annotated[
        str,
        Option(
            "t",
            flag=Flag(
                "t: Student's t over the users; bootstrap: a Poisson bootstrap in SQL (default t)",
                CI_METHODS,
            ),
        ),
    ]
    replicates: Annotated[
        int,
        Option(
            1000,
            flag=Flag("bootstrap replicates and randomization-test flips (default 1000)", type=int),
        ),
    ]
    seed: Annotated[
        int, Option(0, flag=Flag("the bootstrap's and the flips' seed (default 0)", type=int))
    ]


class Grouped(TypedDict, total=False):
    """The columns evaluated separately: every entry point's."""

    group_by: Annotated[Sequence[str] | str, Option(())]


class Running(Grouped, Definitions, Sources, total=False):
    """What evaluate and compare share: how they read the inputs, and where."""

    progress: Annotated[bool, Option(False)]


class Exposure(TypedDict, total=False):
    """The exposure table between item groups (evaluate's and report's)."""

    exposure_k: Annotated[
        int | None,
        Option(
            None,
            _cutoff_or_none,
            Flag(
                "each item group's share of the exposure in the top K (the items table's "
                "--item-group-column), its catalogue share and relevant share",
                type=int,
                metavar="K",
            ),
        ),
    ]
    exposure_patience: Annotated[
        float,
        Option(
            0.85,
            _probability,
            Flag(
                "the exposure discount: position p weighs patience^(p - 1) (default 0.85, "
                "LensKit's)",
                type=float,
                metavar="P",
            ),
        ),
    ]


class EvaluateOptions(Running, Intervals, Exposure, total=False):
    """``evaluate``'s keyword options."""

    per_user: Annotated[bool, Option(False)]
    ci: Annotated[float | None, Option(None)]
    distributions: Annotated[Sequence[str], Option(())]
    segment: Annotated[str | None, Option(None, _column_name)]
    baseline: Annotated[
        str | None,
        Option(
            None,
            _model_name,
            Flag(
                "the model the overlap metrics (intersection, rbo, unexpectedness) compare each "
                "model's lists with: a value of the first --group-by column",
                metavar="MODEL",
            ),
        ),
    ]
    sampled: Annotated[Sampled | None, Option(None, _sampled)]


class CompareOptions(Running, Intervals, total=False):
    """``compare``'s keyword options besides ``baseline``."""

    group_by: Annotated[Sequence[str] | str, Option("model")]
    ci: Annotated[float, Option(0.95)]
    test: Annotated[
        str,
        Option(
            "t",
            _test,
            Flag("the test whose p-values Holm's correction and the mark read (default t)", TESTS),
        ),
    ]
    alpha: Annotated[
        float,
        Option(0.05, _probability, Flag("the significance level (default 0.05)", type=float)),
    ]


class QueryOptions(Grouped, Definitions, Intervals, total=False):
    """``composed_query``'s keyword options: ``to_sql``'s but ``pretty``."""

    per_user: Annotated[bool, Option(False)]
    interactions_group_by: Annotated[Sequence[str] | None, Option(None)]
    dialect: Annotated[str, Option("duckdb")]
    checks: Annotated[bool | str, Option(False)]
    items: Annotated[str | None, Option(None)]
    history: Annotated[str | None, Option(None)]
    ci: Annotated[float | None, Option(None)]
    baseline: Annotated[str | None, Option(None)]


class SqlOptions(QueryOptions, total=False):
    """``to_sql``'s keyword options."""

    pretty: Annotated[bool, Option(True)]


@dataclass(frozen=True)
class Declared:
    """One keyword option of a declaration: its name, what it is, its type as written."""

    name: str
    option: Option
    annotation: str


@functools.cache
def declared(declaration: type) -> tuple[Declared, ...]:
    """The options a TypedDict declares, its bases' first, in the order written."""
    hints = typing.get_type_hints(declaration, include_extras=True)
    found = []
    for name, forward in declaration.__annotations__.items():
        options = [
            item for item in getattr(hints[name], "__metadata__", ()) if isinstance(item, Option)
        ]
        if len(options) != 1:
            raise TypeError(f"{declaration.__name__}.{name} is not Annotated[type, Option(...)]")
        found.append(Declared(name, options[0], _type_text(forward)))
    return tuple(found)


def _type_text(annotation: object) -> str:
    """``Annotated[T, Option(...)]``'s T as written (a string annotation), or its repr."""
    text = getattr(annotation, "__forward_arg__", annotation)
    if not isinstance(text, str):
        return repr(text)
    tree = ast.parse(text, mode="eval").body
    if isinstance(tree, ast.Subscript) and isinstance(tree.slice, ast.Tuple):
        return ast.unparse(tree.slice.elts[0])
    return text


Function = TypeVar("Function", bound=Callable[..., Any])


def takes(declaration: type) -> Callable[[Function], Function]:
    """Gives a function taking ``**options: Unpack[declaration]`` the signature that lists
    them as keyword arguments with their defaults (``help()``, ``inspect.signature``, the API
    reference)."""

    def signed(function: Function) -> Function:
        own = inspect.signature(function)
        kept = [
            parameter
            for parameter in own.parameters.values()
            if parameter.kind is not inspect.Parameter.VAR_KEYWORD
        ]
        keywords = [
            inspect.Parameter(
                item.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=item.option.default,
                annotation=item.annotation,
            )
            for item in declared(declaration)
        ]
        function.__signature__ = own.replace(parameters=[*kept, *keywords])  # type: ignore[attr-defined]
        return function

    return signed


Declaration = TypeVar("Declaration")


def filled(declaration: type[Declaration], given: Mapping[str, Any], function: str) -> Declaration:
    """``given`` with every option it leaves out at its default, each given value checked:
    the one place a call's options are checked before anything is read."""
    names = {item.name: item.option for item in declared(typing.cast("type", declaration))}
    for name in given:
        if name not in names:
            # what Python itself says of a keyword a signature lacks
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")
    for name, value in given.items():
        check = names[name].check
        if check is not None:
            check(name, value)
    values = {name: given.get(name, option.default) for name, option in names.items()}
    return typing.cast("Declaration", values)


def defaults(declaration: type) -> dict[str, Any]:
    """Every option of ``declaration`` at its default."""
    return {item.name: item.option.default for item in declared(declaration)}


def group_list(group_by: Sequence[str] | str | None) -> list[str]:
    """``group_by`` as a list: one column may be given as its name, and None is no group (as
    a caller forwarding an optional setting passes it)."""
    if group_by is None:
        return []
    return [group_by] if isinstance(group_by, str) else list(group_by)
