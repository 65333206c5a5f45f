"""The keyword options of the public functions, declared once (sqlmetrics/options.py): the
signatures users see keep every keyword and default, mypy checks a call's keywords, a call's
options are checked before any input is read, and the command line takes its flags and their
defaults from the same declaration."""

from __future__ import annotations

import inspect
import pydoc
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest

import sqlmetrics
from sqlmetrics.cli.parser import build_parser
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.options import CompareOptions, EvaluateOptions, declared
from sqlmetrics.reporting import ReportOptions

ROOT = Path(__file__).resolve().parents[1]

# Every keyword and its default as the signatures spelled them out before the declaration
# (git show 0fe332d:sqlmetrics/run.py, api.py, reporting/__init__.py): users' calls rely on them.
SOURCES = {
    "checks": "read",
    "connection": None,
    "dialect": None,
    "timeout": None,
    "items": None,
    "history": None,
}
DEFINITIONS = {
    "columns": None,
    "ties": "id",
    "threshold": 0.0,
    "population": "all",
    "duplicates": "error",
    "ranks": "consecutive",
    "profile": None,
}
RESAMPLING = {"ci_method": "t", "replicates": 1000, "seed": 0}
BEFORE = {
    "evaluate": {
        "group_by": (),
        "per_user": False,
        **DEFINITIONS,
        **SOURCES,
        "progress": False,
        "ci": None,
        **RESAMPLING,
        "distributions": (),
        "segment": None,
        "baseline": None,
        "exposure_k": None,
        "exposure_patience": 0.85,
        "sampled": None,
    },
    "compare": {
        "baseline": inspect.Parameter.empty,
        "group_by": "model",
        "ci": 0.95,
        **RESAMPLING,
        "test": "t",
        "alpha": 0.05,
        **DEFINITIONS,
        **SOURCES,
        "progress": False,
    },
    "to_sql": {
        "group_by": (),
        "interactions_group_by": None,
        "per_user": False,
        **DEFINITIONS,
        "dialect": "duckdb",
        "pretty": True,
        "checks": False,
        "items": None,
        "history": None,
        "ci": None,
        **RESAMPLING,
        "baseline": None,
    },
    "report": {
        "group_by": (),
        "segment": None,
        "baseline": None,
        "k_max": 100,
        "small_segment": 30,
        "exposure_k": None,
        "exposure_patience": 0.85,
        **DEFINITIONS,
        **SOURCES,
    },
}


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_the_signatures_keep_every_keyword_and_its_default(name: str) -> None:
    parameters = inspect.signature(getattr(sqlmetrics, name)).parameters.values()
    keywords = {p.name: p.default for p in parameters if p.kind is p.KEYWORD_ONLY}
    assert keywords == BEFORE[name]


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_help_shows_every_keyword_with_its_default(name: str) -> None:
    text = pydoc.render_doc(getattr(sqlmetrics, name), renderer=pydoc.plaintext)
    for keyword, default in BEFORE[name].items():
        shown = "" if default is inspect.Parameter.empty else f" = {default!r}"
        assert f"{keyword}: '" in text and f"'{shown}" in text, keyword


def test_every_option_of_evaluate_and_report_has_its_docstring_line() -> None:
    evaluate_doc = inspect.getdoc(sqlmetrics.evaluate) or ""
    for item in declared(EvaluateOptions):
        assert f"\n    {item.name}: " in evaluate_doc, item.name
    report_doc = inspect.getdoc(sqlmetrics.report) or ""
    for item in declared(ReportOptions):
        if item.name not in {option.name for option in declared(EvaluateOptions)}:
            assert f"\n    {item.name}: " in report_doc, item.name
    compare_doc = inspect.getdoc(sqlmetrics.compare) or ""
    for item in declared(CompareOptions):  # its own, in its prose; the others are evaluate's
        if item.name not in {option.name for option in declared(EvaluateOptions)}:
            assert re.search(rf"``[^`]*\b{item.name}\b[^`]*``", compare_doc), item.name


@pytest.mark.parametrize(
    ("call", "arguments"),
    [
        ("evaluate", {"tie": "id"}),
        ("compare", {"baseline": "a", "tests": "t"}),
        ("to_sql", {"dialects": "duckdb"}),
        ("report", {"kmax": 10}),
    ],
)
def test_an_unknown_keyword_is_refused_as_python_refuses_it(
    call: str, arguments: dict[str, Any]
) -> None:
    function = getattr(sqlmetrics, call)
    given = ["ndcg@10"] if call == "to_sql" else ["missing.parquet", "missing.parquet", "ndcg@10"]
    (unknown,) = [name for name in arguments if name != "baseline"]
    with pytest.raises(
        TypeError, match=rf"^{call}\(\) got an unexpected keyword argument '{unknown}'$"
    ):
        function(*given, **arguments)


@pytest.mark.parametrize(
    ("call", "arguments", "message"),
    [
        ("evaluate", {"ties": "random"}, "ties must be one of id, id_text"),
        ("evaluate", {"threshold": float("nan")}, "threshold must be a number >= 0 and finite"),
        ("compare", {"baseline": "a", "alpha": 5}, "alpha must be a number between 0 and 1"),
        ("compare", {"baseline": "a", "test": "wilcoxon"}, "test must be one of t, randomization"),
        ("report", {"small_segment": -1}, "small_segment must be a whole number"),
        ("report", {"checks": "all"}, "checks must be one of read, full"),
    ],
)
def test_a_bad_option_is_refused_before_any_input_is_read(
    call: str, arguments: dict[str, Any], message: str
) -> None:
    # the inputs do not exist: the option is refused first, by name
    with pytest.raises(SqlmetricsError, match=message):
        getattr(sqlmetrics, call)("missing.parquet", "missing.parquet", ["ndcg@10"], **arguments)


def test_the_command_line_flags_take_the_declared_defaults() -> None:
    commands = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for command, declaration in (
        ("evaluate", EvaluateOptions),
        ("compare", CompareOptions),
        ("report", ReportOptions),
    ):
        flags = {action.dest: action for action in commands[command]._actions}
        for item in declared(declaration):
            if item.option.flag is None:
                continue
            action = flags[item.name]
            assert action.default == item.option.default, (command, item.name)
            assert action.help == item.option.flag.help, (command, item.name)


def test_mypy_checks_every_keyword_of_a_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = pytest.importorskip("mypy.api")
    calls = tmp_path / "calls.py"
    calls.write_text(
        textwrap.dedent(
            """
            import sqlmetrics

            sqlmetrics.evaluate("r", "i", ["ndcg@10"], ties="average", ci=0.9, group_by="model")
            sqlmetrics.compare("r", "i", "ndcg@10", baseline="a", alpha=0.01, progress=True)
            sqlmetrics.to_sql("ndcg@10", dialect="bigquery", checks=True, pretty=False)
            sqlmetrics.report("r", "i", "ndcg@10", k_max=20, segment="country")
            sqlmetrics.evaluate("r", "i", "ndcg@10", threshold="high")
            sqlmetrics.to_sql("ndcg@10", tie="id")
            """
        )
    )
    monkeypatch.setenv("MYPYPATH", str(ROOT))
    out, _, status = api.run(
        [
            str(calls),
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
        ]
    )
    errors = [line for line in out.splitlines() if ": error: " in line]
    assert [line.split(":")[1] for line in errors] == ["8", "9"], out
    assert 'Argument "threshold" to "evaluate" has incompatible type "str"' in errors[0]
    assert 'Unexpected keyword argument "tie" for "to_sql"' in errors[1]
    assert status == 1


def test_group_by_none_is_no_group() -> None:
    """A caller forwarding an optional setting passes None: no group, not a TypeError."""
    import pandas as pd

    recs = pd.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "score": [0.9, 0.8]})
    truth = pd.DataFrame({"user_id": [1], "item_id": [2]})
    none = sqlmetrics.evaluate(recs, truth, ["ndcg@2"], group_by=None)  # type: ignore[arg-type]
    pd.testing.assert_frame_equal(none, sqlmetrics.evaluate(recs, truth, ["ndcg@2"]))
    assert sqlmetrics.to_sql(["ndcg@2"], group_by=None) == sqlmetrics.to_sql(["ndcg@2"])  # type: ignore[arg-type]
