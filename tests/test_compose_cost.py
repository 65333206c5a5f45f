"""Composing and rendering without needless copies, parses and walks of the tree.

The SQL itself is held by the snapshots (tests/test_dialects.py); these tests hold what makes
composing cheaper: the helpers hand their arguments over instead of copying them, a stage is
bound in place, the QUALIFY rewrite and the users' relations behave as the whole-tree walks
they replace did.
"""

from __future__ import annotations

import pytest
from sqlglot import exp, parse_one, transforms
from sqlglot.dialects.dialect import Dialect

from sqlmetrics.compose.stages import bind_placeholders, call, cast_to, number, stage
from sqlmetrics.engines import duckdb_limits
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.render import users_sql
from sqlmetrics.render.dialects import render
from sqlmetrics.render.rules.qualify import qualify_clause


def test_a_stage_is_bound_in_place_without_a_copy() -> None:
    judged = stage("judged")
    bound = bind_placeholders(judged, gmax=number(4))
    assert bound is judged
    assert not [p for p in judged.find_all(exp.Placeholder) if p.name == "gmax"]


def test_a_cast_hands_its_value_over_and_reads_as_the_builders() -> None:
    value = exp.column("x")
    cast = cast_to(value, "double")
    assert cast.this is value
    assert cast.sql("duckdb") == exp.cast(exp.column("x"), "double").sql("duckdb")
    # the builder's rule: a value already cast to the type is not cast again
    already = exp.cast(exp.column("x"), "double")
    assert cast_to(already, "DOUBLE") is already


def test_a_function_hands_its_arguments_over_and_reads_as_the_builders() -> None:
    value = exp.column("x")
    count = call("COUNT", value)
    assert count.this is value
    assert count == exp.func("COUNT", exp.column("x"))
    assert call("COALESCE", exp.column("x"), exp.Literal.number(0)).sql() == "COALESCE(x, 0)"


def _as_a_transform(tree: exp.Expr) -> exp.Expr:
    """The QUALIFY rewrite as a transform of the whole tree, the reference qualify_clause keeps."""

    def rewrite(node: exp.Expr) -> exp.Expr:
        if not isinstance(node, exp.Select) or not node.args.get("qualify"):
            return node
        return transforms.eliminate_qualify(node)

    return tree.transform(rewrite, copy=False)


def test_qualify_is_rewritten_as_a_whole_tree_transform_would() -> None:
    queries = [
        # at the root, in a CTE, in a derived table, in a union, and one inside another
        "SELECT a, b FROM t QUALIFY ROW_NUMBER() OVER (PARTITION BY a ORDER BY b) = 1",
        "WITH c AS (SELECT a FROM t QUALIFY SUM(a) OVER () > 1) SELECT a FROM c",
        "SELECT x.a FROM (SELECT a FROM t QUALIFY RANK() OVER (ORDER BY a) < 3) AS x",
        "SELECT a FROM t QUALIFY MAX(a) OVER () = a UNION ALL SELECT a FROM u",
        "SELECT y.a FROM (SELECT a FROM (SELECT a FROM t QUALIFY MIN(a) OVER () = a) AS z "
        "QUALIFY MAX(a) OVER () = a) AS y QUALIFY COUNT(*) OVER () > 0",
    ]
    postgres = Dialect.get_or_raise("postgres")
    for sql in queries:
        want = _as_a_transform(parse_one(sql, read="duckdb")).sql("postgres")
        assert qualify_clause(parse_one(sql, read="duckdb"), postgres).sql("postgres") == want


def test_an_empty_meta_is_not_left_on_subqueries() -> None:
    relation = exp.select("a").from_("t").subquery("s")
    assert not users_sql.is_users_relation(relation)
    assert relation._meta is None  # each copy of the tree would copy an empty dict


def test_the_users_tables_are_recorded_by_hold_and_forgotten_after() -> None:
    users = users_sql.users_relation(parse_one("SELECT * FROM clicks").assert_is(exp.Query), "r")
    tree = exp.select("*").from_(users, copy=False).join("views", on="TRUE", copy=False)
    walked = {"clicks"}
    held = users_sql.hold(tree)
    assert users_sql.users_tables(tree) == walked
    users_sql.put_back(tree, held, tree)
    assert tree._meta is None
    assert users_sql.users_tables(tree) == set()  # put back: nothing held any more
    assert "clicks" in render(tree, "postgres")


def _grouped(count: int) -> exp.Select:
    sums = [exp.alias_(exp.func("SUM", exp.column(f"x{j}")), f"s{j}") for j in range(count)]
    return exp.select("g", *sums).from_("t").group_by("g")


def test_duckdbs_width_is_looked_for_only_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The aggregate calls of the whole query bound each GROUP BY's: under the limit, no select
    is looked through; past it, each GROUP BY is counted on its own."""
    monkeypatch.setattr(duckdb_limits, "MAX_AGGREGATES", 3)
    duckdb_limits.refuse_too_wide(exp.union(_grouped(3), _grouped(3)))  # 6, but 3 per GROUP BY
    with pytest.raises(SqlmetricsError, match="4 aggregates in one GROUP BY"):
        duckdb_limits.refuse_too_wide(_grouped(4))
    looked: list[exp.Expr] = []
    monkeypatch.setattr(duckdb_limits, "widest_group_by", lambda q: looked.append(q) or 0)
    duckdb_limits.refuse_too_wide(_grouped(3))
    assert looked == []
