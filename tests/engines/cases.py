"""The golden fixtures as engine-neutral cases: tables to create, to_sql arguments, expectations.

A fixture (fixtures/*.yaml) gives the input rows, the options and the expected rows. Here each
becomes the two tables' columns and rows, the keyword arguments of ``to_sql`` that an engine's
test renders with (``group_by`` columns present in the interactions rows are
``interactions_group_by``; interactions without a relevance column get
``columns={"relevance": None}``), and the metrics: the fixture's own, and every metric at the
fixture's cutoffs (compared with DuckDB's values for the same query).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

from sqlmetrics.catalog.metrics import metrics, parse_request
from sqlmetrics.compose.lists import reads_baseline

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
TOLERANCE = 1e-9

Row = dict[str, Any]


@dataclass(frozen=True)
class Table:
    """A table to create: columns in order with a type each (int, float or str)."""

    columns: tuple[tuple[str, str], ...]
    rows: tuple[tuple[Any, ...], ...]

    @staticmethod
    def of(rows: Sequence[Row], default: Sequence[str]) -> Table:
        names: list[str] = []
        for row in rows:
            names += [name for name in row if name not in names]
        names = names or list(default)
        columns = tuple((name, _kind([row.get(name) for row in rows])) for name in names)
        return Table(columns, tuple(tuple(row.get(name) for name in names) for row in rows))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]

    def nullable(self, name: str) -> bool:
        index = self.names.index(name)
        return any(row[index] is None for row in self.rows)


def _kind(values: Sequence[Any]) -> str:
    present = [value for value in values if value is not None]
    if any(isinstance(value, str) for value in present):
        return "str"
    if any(isinstance(value, float) for value in present):
        return "float"
    return "int"


@dataclass(frozen=True)
class Case:
    """One fixture: its tables, its to_sql options, its metrics and expected rows."""

    name: str
    recommendations: Table
    interactions: Table
    options: dict[str, Any]
    metrics: list[str]
    expect: list[Row]
    all_metrics: list[str] = field(default_factory=list)
    items: Table | None = None  # the optional items table (catalogue, categories)
    history: Table | None = None  # the optional history table (serendipity)

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments of to_sql that reproduce the fixture's evaluate call."""
        options = dict(self.options)
        groups = list(options.pop("group_by", []))
        kwargs: dict[str, Any] = dict(options)
        if groups:
            kwargs["group_by"] = groups
            kwargs["interactions_group_by"] = [g for g in groups if g in self.interactions.names]
        columns = dict(kwargs.pop("columns", {}))
        if "relevance" not in self.interactions.names:
            columns["relevance"] = None
        if "rank" in self.recommendations.names and "score" not in self.recommendations.names:
            columns["rank"] = "rank"
        if columns:
            kwargs["columns"] = columns
        return kwargs


def read_yaml(path: Path) -> Any:
    """A fixture's YAML, parsed by libyaml where PyYAML was built with it (a tenth of the pure
    Python parser's CPU, the same values on every fixture): the engine tests, test_golden and
    test_dbt read every fixture at each collection, in each pytest-xdist worker."""
    text = path.read_text(encoding="utf-8")
    if hasattr(yaml, "CSafeLoader"):
        return yaml.load(text, Loader=yaml.CSafeLoader)
    return yaml.safe_load(text)


@functools.cache  # a Case is frozen: the test files that build their matrix from it share it
def load_case(path: Path) -> Case:
    data: dict[str, Any] = read_yaml(path)
    options = dict(data.get("options", {}))
    groups = set(options.get("group_by", []))
    requested = [key for key in data["expect"][0] if key not in groups | {"users"}]
    recommendations = Table.of(data["given"]["recommendations"], ["user_id", "item_id", "score"])
    interactions = Table.of(data["given"]["interactions"], ["user_id", "item_id"])
    return Case(
        name=path.stem,
        recommendations=recommendations,
        interactions=interactions,
        options=options,
        metrics=requested,
        expect=list(data["expect"]),
        all_metrics=every_metric(
            requested,
            options,
            recommendations,
            interactions,
            items="items" in data["given"],
            history="history" in data["given"],
        ),
        items=Table.of(data["given"]["items"], ["item_id"]) if "items" in data["given"] else None,
        history=(
            Table.of(data["given"]["history"], ["user_id", "item_id"])
            if "history" in data["given"]
            else None
        ),
    )


# "every" asks every metric at each cutoff of a fixture: a curve fixture's 16 cutoffs would
# be ~900 labels (MariaDB refuses the 128 list-metric CTEs; minutes per engine), so it takes
# its first, middle and last, and the fixture's own labels at every cutoff.
EVERY_MAX_CUTOFFS = 4


def every_metric(
    requested: Sequence[str],
    options: dict[str, Any],
    recommendations: Table,
    interactions: Table,
    items: bool = False,
    history: bool = False,
) -> list[str]:
    """Every metric at each cutoff the fixture asks for (and without one), under its options,
    that the tables can feed: the metrics over scores need a score column, the rating metrics
    a rating column, those reading item categories or a history those tables."""
    cutoffs = sorted({k for k in (parse_request(label).k for label in requested) if k}) or [3]
    own: list[str] = []
    if len(cutoffs) > EVERY_MAX_CUTOFFS:  # a curve fixture: its own labels at every k
        cutoffs = [cutoffs[0], cutoffs[len(cutoffs) // 2], cutoffs[-1]]
        own = [f"{r.metric.name}@{r.k}" for r in map(parse_request, requested) if r.k]
    labels: list[str] = []
    for metric in metrics().values():
        if options.get("ties") == "average" and not metric.ties_average:
            continue
        if (metric.needs_items and not items) or (metric.needs_history and not history):
            continue
        if reads_baseline(metric) and "baseline" not in options:
            continue  # the overlap metrics compare the lists with a baseline model's
        if metric.reads in ("scored", "rated") and "score" not in recommendations.names:
            continue
        if metric.reads == "rated" and "rating" not in interactions.names:
            continue
        if metric.needs_intent and "intent" not in interactions.names:
            continue
        if (
            metric.walks_positions
            and options.get("ranks") == "literal"
            and "score" not in recommendations.names
        ):
            continue  # a walk in position order (bpref's) needs what a repeated rank leaves open
        if metric.takes_cutoff:
            labels += [f"{metric.name}@{k}" for k in cutoffs]
        if not metric.requires_cutoff:
            labels.append(metric.name)
    return labels + [label for label in own if label not in labels]


def load_cases() -> list[Case]:
    return [load_case(path) for path in sorted(FIXTURES.glob("*.yaml"))]


def extra_cases() -> list[Case]:
    """Inputs the fixtures lack, checked against DuckDB's values: NULL scores (NULLs rank last),
    a rank column, string ids with a group column only the recommendations have."""
    recommendations = Table.of(
        [
            {"user_id": 1, "item_id": 10, "score": None},
            {"user_id": 1, "item_id": 11, "score": 0.4},
            {"user_id": 1, "item_id": 12, "score": 0.3},
            {"user_id": 1, "item_id": 13, "score": 0.2},
            {"user_id": 2, "item_id": 20, "score": 0.9},
            {"user_id": 2, "item_id": 21, "score": None},
            {"user_id": 2, "item_id": 22, "score": 0.9},
            {"user_id": 3, "item_id": 30, "score": 0.5},
        ],
        [],
    )
    interactions = Table.of(
        [
            {"user_id": 1, "item_id": 10, "relevance": 2},
            {"user_id": 1, "item_id": 13, "relevance": 1},
            {"user_id": 1, "item_id": 99, "relevance": 3},
            {"user_id": 2, "item_id": 21, "relevance": 1},
            {"user_id": 2, "item_id": 22, "relevance": 2},
            {"user_id": 4, "item_id": 40, "relevance": 1},
        ],
        [],
    )
    ranked = Table.of(
        [
            {"user_id": 1, "item_id": 10, "rank": 3},
            {"user_id": 1, "item_id": 11, "rank": 1},
            {"user_id": 1, "item_id": 12, "rank": 2},
            {"user_id": 2, "item_id": 20, "rank": 2},
            {"user_id": 2, "item_id": 22, "rank": 1},
        ],
        [],
    )
    arms = Table.of(
        [
            {"arm": "A", "user_id": "u1", "item_id": "x", "score": 0.5},
            {"arm": "A", "user_id": "u1", "item_id": "y", "score": 0.5},
            {"arm": "B", "user_id": "u1", "item_id": "y", "score": 0.9},
            {"arm": "B", "user_id": "u2", "item_id": "z", "score": 0.1},
        ],
        [],
    )
    arm_truth = Table.of(
        [{"user_id": "u1", "item_id": "x"}, {"user_id": "u2", "item_id": "z"}],
        [],
    )
    # The copy of (1, 12) with a NULL score must lose to the one scored 0.3.
    duplicated = Table(
        recommendations.columns, (*recommendations.rows, (1, 12, None), (2, 20, 0.1))
    )
    cases = [
        ("extra_null_scores", recommendations, interactions, {}),
        ("extra_null_scores_optimistic", recommendations, interactions, {"ties": "optimistic"}),
        ("extra_null_scores_pessimistic", recommendations, interactions, {"ties": "pessimistic"}),
        ("extra_null_scores_average", recommendations, interactions, {"ties": "average"}),
        ("extra_null_scores_first", duplicated, interactions, {"duplicates": "first"}),
        (
            "extra_threshold_common",
            recommendations,
            interactions,
            {"threshold": 1, "population": "common"},
        ),
        ("extra_rank_column", ranked, interactions, {}),
        ("extra_string_arms", arms, arm_truth, {"group_by": ["arm"]}),
    ]
    # Profiles whose metrics average over different populations in one query (NULL per user
    # outside a metric's own): their own metric names, not every metric.
    profiled = [
        ("extra_profile_lenskit", ["precision@2", "map@2", "ndcg@2", "recall@3", "precision"]),
        ("extra_profile_recommenders", ["precision@2", "map@2", "ndcg@2", "ndcg@3"]),
    ]
    return [
        Case(
            name,
            recs,
            truth,
            options,
            [],
            [],
            every_metric(["ndcg@2", "ndcg@3"], options, recs, truth),
        )
        for name, recs, truth, options in cases
    ] + [
        Case(
            name, recommendations, interactions, {"profile": name.rsplit("_", 1)[1]}, [], [], labels
        )
        for name, labels in profiled
    ]


BAD_ROWS = "extra_bad_rows"
REPEATS = "extra_repeats_read"


def bad_rows_case() -> Case:
    """Rows evaluate refuses or reports, for the checks only: NULL user and item ids in both
    tables, a repeated recommendation, NULL and negative relevance, a repeated interaction."""
    recommendations = Table.of(
        [
            {"user_id": 1, "item_id": 10, "score": 0.9},
            {"user_id": 1, "item_id": 10, "score": 0.8},
            {"user_id": 1, "item_id": None, "score": 0.7},
            {"user_id": None, "item_id": 11, "score": 0.6},
            {"user_id": 2, "item_id": 20, "score": None},
            {"user_id": 2, "item_id": 21, "score": 0.5},
            {"user_id": 2, "item_id": 22, "score": 0.5},
        ],
        [],
    )
    interactions = Table.of(
        [
            {"user_id": 1, "item_id": 10, "relevance": 1},
            {"user_id": 1, "item_id": 10, "relevance": 2},
            {"user_id": 1, "item_id": 12, "relevance": None},
            {"user_id": 2, "item_id": 21, "relevance": -1},
            {"user_id": None, "item_id": 21, "relevance": 1},
            {"user_id": 3, "item_id": None, "relevance": 1},
        ],
        [],
    )
    return Case(BAD_ROWS, recommendations, interactions, {}, [], [], ["ndcg@2", "precision@3"])


def repeats_case() -> Case:
    """evaluate's checks (to_sql's checks="read"): a repeat counts within the deepest cutoff
    only. User 1 repeats item 10 at positions 1 and 4, user 2 item 20 at 1 and 3: at
    precision@3 one row (user 2's) repeats an item within the first 3 (the audit, checks=True,
    counts two)."""
    recommendations = Table.of(
        [
            {"user_id": 1, "item_id": 10, "score": 0.9},
            {"user_id": 1, "item_id": 11, "score": 0.8},
            {"user_id": 1, "item_id": 12, "score": 0.7},
            {"user_id": 1, "item_id": 10, "score": 0.1},
            {"user_id": 2, "item_id": 20, "score": 0.9},
            {"user_id": 2, "item_id": 21, "score": 0.8},
            {"user_id": 2, "item_id": 20, "score": 0.7},
        ],
        [],
    )
    interactions = Table.of(
        [
            {"user_id": 1, "item_id": 11, "relevance": 1},
            {"user_id": 2, "item_id": 21, "relevance": 2},
        ],
        [],
    )
    labels = ["ndcg@2", "precision@3"]
    return Case(REPEATS, recommendations, interactions, {"checks": "read"}, [], [], labels)


def plain(value: Any) -> Any:
    """An engine's value as a plain Python value: Decimal and numpy numbers as float/int."""
    if isinstance(value, Decimal):
        return float(value)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        return value.item()
    return value


def same(got: Any, want: Any) -> bool:
    got, want = plain(got), plain(want)
    if isinstance(want, float) or isinstance(got, float):
        if got is None or want is None:
            return got is None and want is None
        if math.isnan(float(want)):
            return math.isnan(float(got))
        return math.isclose(float(got), float(want), rel_tol=0, abs_tol=TOLERANCE)
    if isinstance(want, int) and isinstance(got, (int, float)):
        return got == want
    return bool(got == want)


def compare(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], expect: Sequence[Row], where: str
) -> None:
    """The result's columns (case-insensitively: Snowflake upper-cases unquoted names) and
    values (to 1e-9) are exactly the expected rows, in order."""
    want_columns = list(expect[0]) if expect else []
    assert [c.lower() for c in columns] == [c.lower() for c in want_columns], (where, columns)
    assert len(rows) == len(expect), (where, rows, expect)
    for got_row, want_row in zip(rows, expect, strict=True):
        for column, got in zip(want_columns, got_row, strict=True):
            want = want_row[column]
            assert same(got, want), (where, column, plain(got), want)


def as_expect(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[Row]:
    """Rows from a reference engine in the shape of a fixture's ``expect``."""
    return [{c: plain(v) for c, v in zip(columns, row, strict=True)} for row in rows]
