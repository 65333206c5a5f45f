"""plan.choose_plan: which stages run for a call, decided in one place, and compose() following it.

The numbers of every plan are compared elsewhere (tests/test_plans.py, test_curves.py,
test_golden.py on both DuckDB plans, the engine matrix); here each row of plan.py's table is
reached by the call a user would make, and the composed SQL has that plan's stages.
"""

from __future__ import annotations

import pytest
from sqlglot import exp

from sqlmetrics.catalog.metrics import parse_requests
from sqlmetrics.compose.inputs import READ_CHECKED, Group, Inputs, Options
from sqlmetrics.compose.plan import choose_plan
from sqlmetrics.compose.query import compose

PLAN = ("lists", "ranked", "judged", "per_user", "scored")


def inputs(rank: bool = False, groups: tuple[str, ...] = ()) -> Inputs:
    column = exp.to_identifier
    return Inputs(
        recommendations=exp.to_table("recs"),
        interactions=exp.to_table("truth"),
        user=column("user_id"),
        item=column("item_id"),
        score=None if rank else column("score"),
        rank=column("rank") if rank else None,
        relevance=column("relevance"),
        groups=tuple(Group(name, column(name), in_interactions=False) for name in groups),
    )


# A call (metrics, dialect, ties, how) and its plan: lists, ranked, judged, per_user, scored.
# how: "" a summary, "per_user", "portable" (the dbt package's stages), "rank" (a rank column).
# fmt: off
CASES = [
    ("ndcg@10,recall@10", "duckdb", "id", "", "top_lists", "ranked_top_k", "judged_hits", "columns", None),  # noqa: E501
    ("ndcg@50", "duckdb", "id", "", "score_lists", "ranked_top_k", "judged_hits", "columns", None),
    ("ndcg@50,ndcg_clipped@50", "duckdb", "id", "", "sorted_lists", "ranked_top_k", "joined", "columns", None),  # noqa: E501
    ("ndcg@1:20", "duckdb", "id", "", "top_lists", "ranked_top_k", "judged_hits", "curves", None),
    ("ndcg@1:20", "duckdb", "id", "per_user", "top_lists", "ranked_top_k", "judged_hits", "columns", None),  # noqa: E501
    ("ndcg@1:7", "duckdb", "id", "", "top_lists", "ranked_top_k", "judged_hits", "columns", None),
    ("ndcg@10", "postgres", "id", "", None, "ranked", "joined_hits", "columns", None),
    ("ndcg@10", "duckdb", "id", "portable", None, "ranked", "joined_hits", "columns", None),
    ("ndcg@10", "duckdb", "id_text", "", "top_lists", "ranked_top_k", "judged_hits", "columns", None),  # noqa: E501
    ("ndcg@10", "duckdb", "optimistic", "", None, "ranked_by_relevance", "joined", "columns", None),
    ("ndcg@10", "duckdb", "average", "", None, "ranked_average", "joined", "columns", None),
    ("ndcg@10", "duckdb", "id", "rank", None, "ranked_given", "joined", "columns", None),
    ("ndcg", "duckdb", "id", "", None, "ranked", "joined_hits", "columns", None),
    ("r_precision", "duckdb", "id", "", None, "ranked", "joined_hits", "columns", None),
    ("map,bpref,iprec_at_recall@0.5,num_ret", "duckdb", "id_text", "", None, "ranked", "joined_hits", "columns", None),  # noqa: E501
    ("r_precision,ndcg_rel", "duckdb", "id", "", None, "ranked", "joined", "columns", None),
    ("ndcg@10,coverage@10", "duckdb", "id", "", "top_lists", "ranked_top_k", "joined", "columns", None),  # noqa: E501
    ("ndcg@10,gauc", "duckdb", "id", "", None, "ranked", "joined", "columns", "scored_positives"),
    ("ndcg@10,auc", "duckdb", "id", "", None, "ranked", "joined", "columns", "scored"),
    ("gauc", "spark", "id", "", None, "ranked", None, "columns", "scored"),
]
# fmt: on


@pytest.mark.parametrize(("metrics", "dialect", "ties", "how", *PLAN), CASES)
def test_each_choice_is_made_by_the_call_a_user_makes(
    metrics: str,
    dialect: str,
    ties: str,
    how: str,
    lists: str | None,
    ranked: str,
    judged: str | None,
    per_user: str,
    scored: str | None,
) -> None:
    requests, options = parse_requests(metrics.split(",")), Options(ties=ties)
    plan = choose_plan(
        requests,
        inputs(rank=how == "rank"),
        options,
        dialect,
        per_user=how == "per_user",
        portable=how == "portable",
    )
    assert {name: getattr(plan, name) for name in PLAN} == {
        "lists": lists,
        "ranked": ranked,
        "judged": judged,
        "per_user": per_user,
        "scored": scored,
    }
    assert plan.own == (dialect == "duckdb" and how != "portable")
    assert plan.same_bits == (dialect == "duckdb")
    assert (plan.curve is not None) == (plan.per_user == "curves")
    described = plan.describe()
    for choice in ("groups: ", "lists: ", "ranked: ", "per_user: "):
        assert choice in described


@pytest.mark.parametrize(
    ("metrics", "judgements"),
    [
        ("bpref,gm_bpref,num_nonrel_judged_ret,map", "judged_pairs"),
        ("bpref,unj@5", "judgements"),  # unj counts the recommended items nobody judged
        ("rbp_resid", "judgements"),
        ("map", None),
    ],
)
def test_judgements_are_the_judged_pairs_unless_a_metric_reads_the_unjudged(
    metrics: str, judgements: str | None
) -> None:
    plan = choose_plan(parse_requests(metrics.split(",")), inputs(), Options(ties="id_text"))
    assert plan.judgements == judgements
    assert (f"judgements: {judgements}" in plan.describe()) == (judgements is not None)


def test_recommendation_only_groups_take_arms_and_no_curve() -> None:
    requests = parse_requests("ndcg@1:20")
    arms = choose_plan(requests, inputs(groups=("model",)), Options())
    assert (arms.groups, arms.curve) == ("arms", None)
    crossed = choose_plan(requests, inputs(groups=("model",)), Options(), cross_arms=True)
    assert (crossed.groups, crossed.per_user) == ("crossed", "columns")
    assert choose_plan(requests, inputs(), Options()).groups == "crossed"


@pytest.mark.parametrize(
    ("metrics", "dialect", "present", "absent"),
    [
        ("ndcg@10", "duckdb", {"top_lists", "truth_lists"}, {"ranked", "per_user_lists"}),
        ("ndcg@50", "duckdb", {"top_lists", "truth_lists"}, {"ranked"}),
        ("ndcg@1:20", "duckdb", {"per_user_lists", "truth_lists"}, {"ranked"}),
        ("ndcg@10", "postgres", {"ranked", "joined", "judged"}, {"top_lists", "truth_lists"}),
        ("ndcg@10,gauc", "duckdb", {"ranked", "scored"}, {"top_lists", "truth_lists"}),
    ],
)
def test_compose_assembles_the_chosen_plan(
    metrics: str, dialect: str, present: set[str], absent: set[str]
) -> None:
    query = compose(parse_requests(metrics.split(",")), inputs(), Options(), dialect=dialect)
    ctes = {cte.alias for cte in query.find_all(exp.CTE)}
    assert present <= ctes
    assert not absent & ctes


@pytest.mark.parametrize(
    ("metrics", "dialect", "checks", "repeats", "depth"),
    [
        ("ndcg@10,recall@5", "spark", "read", "ranked", 10),  # among ranked's first 10 rows
        ("ndcg@10", "duckdb", "read", "lists", 10),  # the top-k lists' items
        ("ndcg@10", "spark", "full", "lists", None),  # the audit: list_counts.sql, anywhere
        ("ndcg", "spark", "read", "lists", None),  # no cutoff: the whole list
        ("ndcg@10", "spark", "reader", "none", 0),  # the input's reader refused them
    ],
)
def test_where_the_diagnostics_count_repeats_is_a_plan_choice(
    metrics: str, dialect: str, checks: str, repeats: str, depth: int | None
) -> None:
    requests = parse_requests(metrics.split(","))
    options = Options(checks=READ_CHECKED if checks == "reader" else checks)
    plan = choose_plan(requests, inputs(), options, dialect, diagnostics=True)
    assert (plan.repeats, plan.repeats_depth) == (repeats, depth)
    assert f"repeats: {repeats}" in plan.describe()
    kept_apart = choose_plan(requests, inputs(), options, dialect, diagnostics=True, chained=False)
    assert (kept_apart.diagnostics, kept_apart.repeats) == ("apart", repeats)
    without = choose_plan(requests, inputs(), options, dialect)
    assert (without.repeats, without.repeats_depth, without.diagnostics) == (None, None, None)


@pytest.mark.parametrize(
    ("metrics", "dialect", "checks", "diagnostics", "lengths"),
    [
        ("ndcg@10", "duckdb", "read", True, "lists"),  # the top-k lists count them
        ("ndcg@10", "spark", "read", True, "ranked"),  # chained, no row per list
        ("ndcg@10", "spark", "full", True, "list_counts"),  # repeats anywhere: each whole list
        ("ndcg,map", "spark", "read", False, "list_counts"),
        ("map,recall@10,num_ret", "duckdb", "reader", False, "ranked_judged"),  # a TREC run's
    ],
)
def test_which_stage_gives_the_lists_lengths_is_a_plan_choice(
    metrics: str, dialect: str, checks: str, diagnostics: bool, lengths: str
) -> None:
    options = Options(ties="id_text", checks=READ_CHECKED if checks == "reader" else checks)
    requests = parse_requests(metrics.split(","))
    plan = choose_plan(requests, inputs(), options, dialect, diagnostics=diagnostics)
    assert plan.lengths == lengths
    assert f"lengths: {lengths}" in plan.describe()
