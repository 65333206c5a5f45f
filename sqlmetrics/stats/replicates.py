"""The replicates of the statistics query: a Poisson bootstrap and a sign-flip randomization
test over hash buckets of users (query.py's module docstring says how)."""

from __future__ import annotations

from sqlglot import exp

from sqlmetrics.stats import nodes
from sqlmetrics.stats.draws import uniform_draw
from sqlmetrics.stats.resampling import POISSON_CDF, POISSON_MAX, Resampling


def resampled(
    source: str, groups: int, metrics: int, resampling: Resampling, flips: bool
) -> list[exp.CTE]:
    """CTEs ending in ``stats_replicates``: per group and replicate, b{i} the bootstrap mean of
    metric i (sum of weight x bucket sum / sum of weight x bucket count) and, with ``flips``,
    f{i} the sign-flipped sum of the buckets' sums. ``source`` has g0.., u and d0.. values."""
    keys = nodes.keys(groups)
    # The buckets in use: fewer than `buckets` when no group has that many users.
    used = exp.select(
        exp.Add(this=exp.func("MAX", exp.column("bucket")), expression=exp.Literal.number(1))
    ).from_("stats_buckets")
    return [
        nodes.cte(
            "stats_units", _units(source, keys, metrics, resampling.buckets, resampling.segmented)
        ),
        nodes.cte("stats_buckets", _bucket_sums(keys, metrics)),
        nodes.cte("stats_digits", _digits()),
        nodes.cte("stats_replicate_numbers", _numbers("replicate", resampling.replicates)),
        nodes.cte("stats_bucket_numbers", _numbers("bucket", resampling.buckets, used.subquery())),
        nodes.cte("stats_draws", _draws(resampling.seed)),
        nodes.cte("stats_weights", _weights()),
        nodes.cte("stats_weighed", _weighed(groups, metrics)),
        nodes.cte("stats_replicates", _replicated(keys, metrics, flips)),
    ]


def _units(
    source: str, keys: list[exp.Expr], metrics: int, buckets: int, segmented: bool = False
) -> exp.Select:
    """Each user's values with its bucket: its rank within its group, modulo ``buckets``
    (``segmented``: within its group but the last column, its segment, ranked by segment then
    user, so that the n-th users of two segments do not share a draw)."""
    text = exp.DataType.build("varchar")
    # The user's text, which dialects.py sorts by bytes everywhere: the same buckets (and so
    # the same draws) on every engine, whatever the user column's type or collation.
    order = [exp.Ordered(this=exp.cast(exp.column("u"), text))]
    partition = keys
    if segmented and keys:
        partition = keys[:-1]
        order.insert(0, exp.Ordered(this=exp.cast(keys[-1].copy(), text)))
    in_order = exp.Window(
        this=exp.RowNumber(),
        partition_by=[key.copy() for key in partition] or None,
        order=exp.Order(expressions=order),
    )
    return exp.select(
        *(key.copy() for key in keys),
        exp.alias_(
            exp.Mod(
                this=exp.paren(exp.Sub(this=in_order, expression=exp.Literal.number(1))),
                expression=exp.Literal.number(buckets),
            ),
            "bucket",
        ),
        *(exp.column(f"d{i}") for i in range(metrics)),
    ).from_(source)


def _bucket_sums(keys: list[exp.Expr], metrics: int) -> exp.Select:
    """Per group and bucket, bn{i} the count and bs{i} the sum of metric i's values."""
    return nodes.grouped(
        exp.select(
            *(key.copy() for key in keys),
            exp.column("bucket"),
            *(exp.alias_(exp.func("COUNT", exp.column(f"d{i}")), f"bn{i}") for i in range(metrics)),
            *(exp.alias_(exp.func("SUM", exp.column(f"d{i}")), f"bs{i}") for i in range(metrics)),
        ).from_("stats_units"),
        [*keys, exp.column("bucket")],
    )


def _digits() -> exp.Query:
    """0..9 as column ``digit``."""
    # 0..n-1 from a cross join of digits: no generate_series (MySQL, SQLite and
    # ClickHouse spell it differently or not at all), no recursive CTE (Spark before 4).
    return exp.union(
        *(exp.select(exp.alias_(exp.Literal.number(d), "digit")) for d in range(10)),
        distinct=False,
    )


def _numbers(name: str, below: int, limit: exp.Expr | None = None) -> exp.Select:
    """0..below-1 (and below ``limit``) as column ``name``."""
    places = len(str(below - 1))
    number: exp.Expr = exp.Literal.number(0)
    for place in range(places):
        term = exp.Mul(
            this=exp.column("digit", f"p{place}"), expression=exp.Literal.number(10**place)
        )
        number = term if place == 0 else exp.Add(this=number, expression=term)
    listed = exp.select(exp.alias_(number, name)).from_(
        exp.alias_(exp.to_table("stats_digits"), "p0")
    )
    for place in range(1, places):
        listed = listed.join(
            exp.alias_(exp.to_table("stats_digits"), f"p{place}"), join_type="cross"
        )
    condition: exp.Expr = exp.LT(this=exp.column(name), expression=exp.Literal.number(below))
    if limit is not None:
        condition = exp.and_(condition, exp.LT(this=exp.column(name), expression=limit))
    return exp.select(name).from_(listed.subquery("numbers")).where(condition)


def _draws(seed: int) -> exp.Select:
    """A uniform draw per (bucket, replicate)."""
    # The draws depend on (bucket, replicate) alone, so they are computed once, not per group.
    draws = exp.select(
        exp.column("bucket", "stats_bucket_numbers"),
        exp.column("replicate", "stats_replicate_numbers"),
        exp.alias_(
            uniform_draw(
                exp.column("bucket", "stats_bucket_numbers"),
                exp.column("replicate", "stats_replicate_numbers"),
                seed,
            ),
            "draw",
        ),
    ).from_("stats_bucket_numbers")
    return draws.join("stats_replicate_numbers", join_type="cross")


def _weights() -> exp.Select:
    """Per (bucket, replicate), the bootstrap weight w and the randomization sign."""
    # Poisson(1) by inversion: the weight is the number of CDF values at or below the draw.
    weight = exp.Case(
        ifs=[
            exp.If(
                this=exp.LT(this=exp.column("draw"), expression=exp.Literal.number(repr(bound))),
                true=exp.Literal.number(k),
            )
            for k, bound in enumerate(POISSON_CDF)
        ],
        default=exp.Literal.number(POISSON_MAX),
    )
    sign = exp.Case(
        ifs=[
            exp.If(
                this=exp.LT(this=exp.column("draw"), expression=exp.Literal.number("0.5")),
                true=exp.Literal.number(-1),
            )
        ],
        default=exp.Literal.number(1),
    )
    return exp.select(
        exp.column("bucket"),
        exp.column("replicate"),
        exp.alias_(weight, "w"),
        exp.alias_(sign, "sign"),
    ).from_("stats_draws")


def _weighed(groups: int, metrics: int) -> exp.Select:
    """Each group's bucket sums beside the weight and sign of each replicate."""
    weighed = exp.select(
        *(exp.column(f"g{i}", "stats_buckets") for i in range(groups)),
        exp.column("replicate", "stats_weights"),
        exp.column("w", "stats_weights"),
        exp.column("sign", "stats_weights"),
        *(exp.column(f"bn{i}", "stats_buckets") for i in range(metrics)),
        *(exp.column(f"bs{i}", "stats_buckets") for i in range(metrics)),
    ).from_("stats_buckets")
    return weighed.join(
        "stats_weights",
        on=exp.EQ(
            this=exp.column("bucket", "stats_buckets"),
            expression=exp.column("bucket", "stats_weights"),
        ),
    )


def _weighted(value: str) -> exp.Expr:
    return exp.func("SUM", exp.Mul(this=exp.column("w"), expression=exp.column(value)))


def _replicated(keys: list[exp.Expr], metrics: int, flips: bool) -> exp.Select:
    """Per group and replicate, the bootstrap means b{i} and (with ``flips``) the sums f{i}."""
    statistics = [
        exp.alias_(exp.Div(this=_weighted(f"bs{i}"), expression=_weighted(f"bn{i}")), f"b{i}")
        for i in range(metrics)
    ]
    if flips:
        statistics += [
            exp.alias_(
                exp.func("SUM", exp.Mul(this=exp.column("sign"), expression=exp.column(f"bs{i}"))),
                f"f{i}",
            )
            for i in range(metrics)
        ]
    return nodes.grouped(
        exp.select(*(key.copy() for key in keys), exp.column("replicate"), *statistics).from_(
            "stats_weighed"
        ),
        [*keys, exp.column("replicate")],
    )
