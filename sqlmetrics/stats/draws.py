"""The deterministic draws of the bootstrap and the randomization test (stats/query.py), the
same in every dialect.

Engines' own hash functions differ (DuckDB's hash, PostgreSQL's hashtext, Spark's xxhash64;
SQLite has none), so the same seed would resample differently on each. The draw is instead
integer arithmetic that every dialect computes alike: a keyed hash of (bucket, replicate)
modulo the prime 2^31 - 1, in rounds of squaring (non-linear, so that neighbouring buckets and
replicates are not correlated) and multiplying. Every operand is below 2^31 and every product
below 2^62, so a BIGINT never overflows (PostgreSQL and Spark's ANSI mode raise on overflow).
"""

from __future__ import annotations

from sqlglot import exp

DRAW_PRIME = 2_147_483_647
_DRAW_MULTIPLIERS = (1_103_515_245, 48_271, 69_621)
_DRAW_CONSTANTS = (1_013_904_223, 362_436_069)


def draw_keys(seed: int) -> tuple[int, int]:
    """The two keys a seed contributes to the hash (computed here, bound as literals)."""
    x = (seed * 40_503 + 2_654_435_769) % DRAW_PRIME
    first = (x * x + 12_345) % DRAW_PRIME
    return first, (first * first + 67_890) % DRAW_PRIME


def draw_value(bucket: int, replicate: int, seed: int) -> float:
    """uniform_draw's number, computed in Python (the tests check the SQL against it)."""
    first, second = draw_keys(seed)
    a1, a2, a3 = _DRAW_MULTIPLIERS
    h = (bucket * a1 + replicate * a2 + first) % DRAW_PRIME
    h = (h * h + _DRAW_CONSTANTS[0]) % DRAW_PRIME
    h = (h * a3 + replicate + second) % DRAW_PRIME
    h = (h * h + _DRAW_CONSTANTS[1]) % DRAW_PRIME
    h = (h * a2 + bucket) % DRAW_PRIME
    return h / DRAW_PRIME


def uniform_draw(bucket: exp.Expr, replicate: exp.Expr, seed: int) -> exp.Expr:
    """A number in [0, 1) from (bucket, replicate, seed), the same on every engine: draw_value
    in SQL. ``bucket`` and ``replicate`` are non-negative integer columns below 2^31."""
    first, second = draw_keys(seed)
    a1, a2, a3 = _DRAW_MULTIPLIERS

    def big(value: int | exp.Expr) -> exp.Expr:
        node = exp.Literal.number(value) if isinstance(value, int) else value.copy()
        return exp.cast(node, "BIGINT")

    def mod(value: exp.Expr) -> exp.Expr:
        # In parentheses: every dialect's SQL then reads back as the same tree.
        return exp.paren(exp.Mod(this=exp.paren(value), expression=big(DRAW_PRIME)))

    h = mod(
        exp.Add(
            this=exp.Add(
                this=exp.Mul(this=big(bucket), expression=big(a1)),
                expression=exp.Mul(this=big(replicate), expression=big(a2)),
            ),
            expression=big(first),
        )
    )
    h = mod(exp.Add(this=exp.Mul(this=h, expression=h.copy()), expression=big(_DRAW_CONSTANTS[0])))
    h = mod(
        exp.Add(
            this=exp.Add(this=exp.Mul(this=h, expression=big(a3)), expression=big(replicate)),
            expression=big(second),
        )
    )
    h = mod(exp.Add(this=exp.Mul(this=h, expression=h.copy()), expression=big(_DRAW_CONSTANTS[1])))
    h = mod(exp.Add(this=exp.Mul(this=h, expression=big(a2)), expression=big(bucket)))
    return exp.Div(this=exp.cast(h, "DOUBLE"), expression=exp.cast(big(DRAW_PRIME), "DOUBLE"))
