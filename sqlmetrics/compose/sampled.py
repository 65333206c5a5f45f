"""The query of evaluate's ``sampled=``: per group, the held-out positives counted at each
sampled rank r' (the histogram stats/sampled.py corrects), and the counts that check the lists
are what the form promises (each list's sampled negatives, lists without a positive, positives
absent from their list). A few rows per group: nothing per user travels back.

Its rows: ``kind`` ("histogram", "negatives", "without_positive", "missing", "repeated"), the
group columns (``group_1``...), ``value`` (the sampled rank; a list's number of negatives; 0)
and ``rows`` (positives at that rank; lists with that many negatives; lists; positives;
repeated (user, item) pairs).
"""

from __future__ import annotations

from sqlglot import exp

from sqlmetrics.compose.inputs import Inputs, Options, input_stages
from sqlmetrics.compose.ranking import order_ids_as_text
from sqlmetrics.compose.stages import (
    bind_placeholders,
    group_key,
    number,
    stage,
    widen_keys,
    with_ctes,
)
from sqlmetrics.errors import SqlmetricsError

KINDS = ("histogram", "negatives", "without_positive", "missing", "repeated")


def sampled_query(inputs: Inputs, options: Options) -> exp.Query:
    """The histogram and list counts of ``sampled=`` over the bound inputs (DuckDB's
    semantics; the engine renders it in its dialect)."""
    if options.ties == "average":
        raise SqlmetricsError(
            "sampled= counts each positive at a whole sampled rank; ties='average' splits "
            "tied ranks: use ties='id' (the default), 'optimistic' or 'pessimistic'"
        )
    keys = [group_key(i) for i in range(len(inputs.groups))]
    positives = bind_placeholders(
        widen_keys(stage("sampled_positives"), keys), threshold=number(options.threshold)
    )
    ranks = widen_keys(_ordered(stage("sampled_ranks"), inputs, options), keys)
    ctes = [
        *input_stages(inputs, options, keys, None, rating=False),
        ("sampled_positives", positives),
        ("sampled_ranks", ranks),
        ("sampled_lists", widen_keys(stage("sampled_lists"), keys)),
        ("sampled_missing", widen_keys(stage("sampled_missing"), keys)),
        ("sampled_repeats", widen_keys(stage("sampled_repeats"), keys)),
    ]
    branches = [
        _counted("histogram", "sampled_ranks", keys, exp.column("sampled_rank"), ("positive", 1)),
        _counted("negatives", "sampled_lists", keys, exp.column("negatives")),
        _counted("without_positive", "sampled_lists", keys, None, ("positives", 0)),
        _counted("missing", "sampled_missing", keys, None),
        _counted("repeated", "sampled_repeats", keys, None),
    ]
    union = exp.union(*branches, distinct=False)
    # A SELECT over the union rather than the union itself: dialects.py gives ClickHouse its
    # settings (join_use_nulls: the LEFT JOIN's unmatched positive is NULL) on a SELECT only.
    names = ("kind", *keys, "value", "rows")
    query = exp.select(*(exp.column(name, "sampled_rows") for name in names)).from_(
        union.subquery("sampled_rows")
    )
    return with_ctes(query, ctes)


def _counted(
    kind: str,
    source: str,
    keys: list[str],
    value: exp.Expr | None,
    where: tuple[str, int] | None = None,
) -> exp.Select:
    """``kind``'s rows: per group (and ``value``), the rows of ``source`` (those whose column
    ``where[0]`` is ``where[1]``)."""
    grouped: list[exp.Expr] = [exp.column(key) for key in keys]
    counted = exp.select(
        exp.alias_(exp.Literal.string(kind), "kind"),
        *[exp.column(key) for key in keys],
        exp.alias_(value if value is not None else exp.Literal.number(0), "value"),
        exp.alias_(exp.Count(this=exp.Star()), "rows"),
    ).from_(source)
    if where is not None:
        column, literal = where
        counted = counted.where(
            exp.EQ(this=exp.column(column), expression=exp.Literal.number(literal))
        )
    if value is not None:
        grouped.append(value.copy())
    if grouped:
        counted = counted.group_by(*grouped)
    return counted


def _ordered(ranks: exp.Select, inputs: Inputs, options: Options) -> exp.Select:
    """sampled_ranks.sql's order for the input and the tie policy: a rank column as given;
    ``id_text`` the item id as text; ``pessimistic`` (``optimistic``) ranks a positive below
    (above) every negative of its score."""
    window = next(w for w in ranks.find_all(exp.Window) if w.args.get("order") is not None)
    if inputs.rank is not None:
        by_rank = [exp.Ordered(this=exp.column("pos", "r"), nulls_first=False)]
        window.set(
            "order", exp.Order(expressions=[*by_rank, *window.args["order"].expressions[1:]])
        )
        return ranks
    if options.ties == "id_text":
        order_ids_as_text(ranks)
    elif options.ties in ("optimistic", "pessimistic"):
        score = window.args["order"].expressions[0]
        window.set("order", exp.Order(expressions=[score]))
        window.set(
            "spec",
            exp.WindowSpec(
                kind="RANGE", start="UNBOUNDED", start_side="PRECEDING", end="CURRENT ROW"
            ),
        )
        if options.ties == "optimistic":
            # the negatives tied with the positive are not above it
            tied = window.copy()
            tied.set("order", None)
            tied.set("spec", None)
            tied.set("partition_by", [*tied.args["partition_by"], exp.column("score", "r")])
            # 1 + SUM(...) OVER (...) AS sampled_rank
            alias = window.parent.parent if window.parent is not None else None
            if not isinstance(alias, exp.Alias):
                raise SqlmetricsError("sampled_ranks.sql: the sampled rank is not where expected")
            alias.set("this", exp.Sub(this=alias.this.copy(), expression=tied))
    return ranks
