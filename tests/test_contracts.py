"""What every metric file must look like, checked on the AST, so a new file cannot drift."""

from __future__ import annotations

import math

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from sqlmetrics import to_sql
from sqlmetrics.catalog.metrics import metrics, sql_folder
from sqlmetrics.compose.per_user import CUTOFF_CONSTANTS
from sqlmetrics.compose.stages import stage

# judged.sql's hits_through_position is compose's stand-in for hits_so_far under
# ranks="literal" (compose._hits_so_far): no metric file reads it by that name.
STAND_INS = {"hits_through_position"}
JUDGED_COLUMNS = {column.alias_or_name for column in stage("judged").expressions} - STAND_INS
SOURCE_COLUMNS = {
    source: {column.alias_or_name for column in stage(source).expressions} - STAND_INS
    for source in ("judged", "scored", "rated", "judgements", "pool")
}
# judgements_ideal.sql's own columns (the ideal order by gain read at a listed position): the
# composer reads it in judgements' place for the metrics that read them
SOURCE_COLUMNS["judgements"] |= {
    column.alias_or_name for column in stage("judgements_ideal").expressions
} - {"user_id", "pos"}
# Per-user queries over a stage; the metrics over the lists are checked apart below.
METRICS = sorted(name for name, metric in metrics().items() if metric.reads in SOURCE_COLUMNS)
LIST_METRICS = sorted(name for name, metric in metrics().items() if metric.reads == "lists")
# What a metric over the lists may read: the lists (ranked) and the stages global to all groups.
LIST_SOURCES = {
    "ranked": "user_id INT, item_id INT, pos INT",
    "catalogue": "item_id INT",
    "popularity": "item_id INT, users INT",
    "short_head": "item_id INT",
    "input_interactions": "user_id INT, item_id INT",
    "consumed": "user_id INT, item_id INT",
    "input_items": "item_id INT, category VARCHAR",
    "input_history": "user_id INT, item_id INT",
    "truth": "user_id INT, item_id INT",
    "intents": "user_id INT, intent VARCHAR, item_id INT, relevant INT",
    "intent_ideal": "user_id INT, pos INT, gain DOUBLE",
    # the overlap metrics': the baseline model's rows of ranked, and rbo's depths
    "baseline_lists": "baseline_user INT, item_id INT, pos INT",
    "depths": "depth INT, weight DOUBLE",
}


def test_judged_offers_the_documented_columns() -> None:
    assert {
        "user_id",
        "pos",
        "hit",
        "gain",
        "exp_gain",
        "relevance",
        "ideal_pos",
        "hits_so_far",
        "scored_ideal_pos",
        "n_relevant",
        "n_relevant_listed",
        "list_length",
        "dcg_so_far",
        "gain_so_far",
        "ideal_dcg_at_pos",
        "ideal_gain_at_pos",
        "ideal_excess_at_pos",
        "level_weight_at_pos",
        "err_stop",
        "ideal_err_stop",
    } == JUDGED_COLUMNS


def test_scored_and_rated_offer_the_documented_columns() -> None:
    assert {
        "user_id",
        "score",
        "positives",
        "negatives",
        "negatives_below_in_list",
        "negatives_below_in_group",
        "negatives_in_group",
        "positives_in_group",
        "positives_at_or_above_in_list",
        "negatives_at_or_above_in_list",
        "positives_at_or_above_in_group",
        "negatives_at_or_above_in_group",
        "positives_at_score_in_group",
        "negatives_at_score_in_group",
    } == SOURCE_COLUMNS["scored"]
    assert {"user_id", "score", "rating", "mean_rating"} == SOURCE_COLUMNS["rated"]


def test_judgements_offers_the_documented_columns() -> None:
    assert {
        "user_id",
        "pos",
        "hit",
        "nonrelevant_so_far",
        "n_relevant",
        "n_nonrelevant",
        "list_length",
        "gain",
        "ideal_gain_pos",
        "gains_dcg_so_far",
        "gains_gain_so_far",
        "gains_ideal_dcg_at_pos",
        "gains_ideal_excess_at_pos",
        "gains_level_weight_at_pos",
    } == SOURCE_COLUMNS["judgements"]


def test_pool_offers_the_documented_columns() -> None:
    assert {
        "user_id",
        "pos",
        "hit",
        "relevant_so_far",
        "nonrelevant_so_far",
        "unjudged_so_far",
        "n_relevant",
        "n_nonrelevant",
        "list_length",
    } == SOURCE_COLUMNS["pool"]


@pytest.mark.parametrize("name", METRICS)
def test_metric_file_is_a_per_user_query_over_its_stage(name: str) -> None:
    metric = metrics()[name]
    query = metric.query
    assert [table.name for table in query.find_all(exp.Table)] == [metric.reads]
    outputs = [projection.alias_or_name for projection in query.expressions]
    assert outputs == (
        ["user_id", "numerator", "denominator"] if metric.micro else ["user_id", name]
    )
    group = [column.name for column in query.args["group"].expressions]
    judged = metric.reads == "judged"
    assert group == (["user_id", "n_relevant", "list_length"] if judged else ["user_id"])
    assert {column.name for column in query.find_all(exp.Column)} <= SOURCE_COLUMNS[metric.reads]
    # Besides $k, a cutoff metric may read a constant computed from k (per_user.CUTOFF_CONSTANTS).
    placeholders = {node.name for node in query.find_all(exp.Placeholder)} - (
        set(CUTOFF_CONSTANTS) if metric.requires_cutoff else set()
    )
    assert placeholders == (
        {"k"}
        if metric.takes_cutoff
        else {"score_threshold"}
        if metric.takes_score_threshold
        else set()
    )
    # The metrics over scored and rated rows are micro: their per-user parts add up over any
    # users. Those over judged and judgements are per-user values over the population.
    assert metric.reads in ("judged", "judgements", "pool") or metric.micro
    # Never a one-argument LOG: its base differs between engines (LOG2 parses with its base).
    assert all(node.args.get("expression") is not None for node in query.find_all(exp.Log))


@pytest.mark.parametrize("name", METRICS)
def test_metric_file_runs_verbatim_in_duckdb(name: str) -> None:
    text = (sql_folder() / f"{name}.sql").read_text()
    connection = duckdb.connect()
    connection.execute(
        "CREATE TABLE scored (user_id INT, score DOUBLE, positives INT, negatives INT,"
        " negatives_below_in_list DOUBLE, negatives_below_in_group DOUBLE,"
        " negatives_in_group INT, positives_in_group INT, positives_at_or_above_in_list INT,"
        " negatives_at_or_above_in_list INT, positives_at_or_above_in_group INT,"
        " negatives_at_or_above_in_group INT, positives_at_score_in_group INT,"
        " negatives_at_score_in_group INT)"
    )
    connection.execute("INSERT INTO scored VALUES (1, 0.5, 1, 1, 0.5, 0.5, 1, 1, 1, 1, 1, 1, 1, 1)")
    connection.execute(
        "CREATE TABLE rated (user_id INT, score DOUBLE, rating DOUBLE, mean_rating DOUBLE)"
    )
    connection.execute("INSERT INTO rated VALUES (1, 0.5, 1, 1)")
    connection.execute(
        "CREATE TABLE judged (user_id INT, pos INT, hit INT, gain DOUBLE, exp_gain DOUBLE,"
        " relevance DOUBLE, ideal_pos INT, scored_ideal_pos INT, hits_so_far INT,"
        " n_relevant INT, n_relevant_listed INT, list_length INT, dcg_so_far DOUBLE,"
        " gain_so_far DOUBLE, ideal_dcg_at_pos DOUBLE, ideal_gain_at_pos DOUBLE,"
        " ideal_excess_at_pos DOUBLE, level_weight_at_pos DOUBLE, err_stop DOUBLE,"
        " ideal_err_stop DOUBLE)"
    )
    connection.execute(
        "INSERT INTO judged VALUES (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3, 1, 1, 1, 1, 0, 1, 0.5, 0.5)"
    )
    connection.execute(
        "CREATE TABLE judgements (user_id INT, pos INT, hit INT, nonrelevant_so_far INT,"
        " n_relevant INT, n_nonrelevant INT, list_length INT, gain DOUBLE, ideal_gain_pos INT,"
        " gains_dcg_so_far DOUBLE, gains_gain_so_far DOUBLE, gains_ideal_dcg_at_pos DOUBLE,"
        " gains_ideal_excess_at_pos DOUBLE, gains_level_weight_at_pos DOUBLE)"
    )
    connection.execute("INSERT INTO judgements VALUES (1, 2, 1, 1, 1, 1, 3, 2, 1, 1, 2, 2, 1, 1)")
    connection.execute(
        "CREATE TABLE pool (user_id INT, pos INT, hit INT, relevant_so_far INT,"
        " nonrelevant_so_far INT, unjudged_so_far INT, n_relevant INT, n_nonrelevant INT,"
        " list_length INT)"
    )
    connection.execute("INSERT INTO pool VALUES (1, 1, 1, 1, 0, 0, 1, 0, 3)")
    parameters: dict[str, float] | None = {"k": 3} if "$k" in text else None
    for name, constant in CUTOFF_CONSTANTS.items():
        if f"${name}" in text:
            parameters = {"k": 3, name: constant(3)}
    if "$score_threshold" in text:
        parameters = {"score_threshold": 0.5}
    rows = connection.execute(text, parameters).fetchall()
    assert len(rows) == 1 and rows[0][0] == 1


@pytest.mark.parametrize("name", METRICS)
def test_rendered_sql_reparses_to_itself(name: str) -> None:
    request = name if not metrics()[name].takes_cutoff else f"{name}@5"
    sql = to_sql(request, "analytics.recs", "analytics.truth", pretty=False)
    assert sqlglot.parse_one(sql, read="duckdb").sql("duckdb") == sql


@pytest.mark.parametrize("name", LIST_METRICS)
def test_list_metric_file_reads_the_lists(name: str) -> None:
    metric = metrics()[name]
    query = metric.query
    tables = {table.name for table in query.find_all(exp.Table)}
    assert "ranked" in tables and tables <= set(LIST_SOURCES)
    outputs = [projection.alias_or_name for projection in query.expressions]
    if metric.group_level:
        assert outputs == [name] and not query.args.get("group")
    else:
        assert outputs == ["user_id", name]
        assert [column.name for column in query.args["group"].expressions] == ["user_id"]
    assert metric.requires_cutoff or metric.reads_whole_list  # ap_ia reads every position
    placeholders = {node.name for node in query.find_all(exp.Placeholder)}
    assert placeholders <= {"k", *CUTOFF_CONSTANTS} and (placeholders or metric.reads_whole_list)
    assert all(node.args.get("expression") is not None for node in query.find_all(exp.Log))


@pytest.mark.parametrize("name", LIST_METRICS)
def test_list_metric_file_runs_verbatim_in_duckdb(name: str) -> None:
    """Two users with lists (1, 2) and (1, 3) of categories a, b, a: every value is known."""
    connection = duckdb.connect()
    for table, columns in LIST_SOURCES.items():
        connection.execute(f"CREATE TABLE {table} ({columns})")
    connection.execute("INSERT INTO ranked VALUES (1, 1, 1), (1, 2, 2), (2, 1, 1), (2, 3, 2)")
    connection.execute("INSERT INTO catalogue VALUES (1), (2), (3), (4)")
    connection.execute("INSERT INTO popularity VALUES (1, 2), (2, 1)")
    connection.execute("INSERT INTO short_head VALUES (1), (2)")  # 2 + 1 of 3: under 80% before 2
    connection.execute("INSERT INTO input_interactions VALUES (1, 1), (2, 1), (2, 2)")
    connection.execute("INSERT INTO consumed SELECT * FROM input_interactions")
    connection.execute("INSERT INTO input_items VALUES (1, 'a'), (2, 'b'), (3, 'a')")
    connection.execute("INSERT INTO input_history VALUES (1, 3), (2, 2)")
    connection.execute("INSERT INTO truth VALUES (1, 1), (2, 3)")
    # user 1: intent x {1, 2}, y {2}; user 2: x {9}, unlisted. The greedy ideal: user 1 item 2
    # (x, y: 2), then item 1 (x again: 0.5); user 2 item 9 (1)
    connection.execute("INSERT INTO intents VALUES (1, 'x', 1, 1), (1, 'x', 2, 1), (1, 'y', 2, 1)")
    connection.execute("INSERT INTO intents VALUES (2, 'x', 9, 1)")
    connection.execute("INSERT INTO intent_ideal VALUES (1, 1, 2.0), (1, 2, 0.5), (2, 1, 1.0)")
    # the baseline lists user 1 (2, 1) and not user 2; p = 0.9
    connection.execute("INSERT INTO baseline_lists VALUES (1, 2, 1), (1, 1, 2)")
    connection.execute("INSERT INTO depths VALUES (1, 1.0), (2, 0.9)")
    text = (sql_folder() / f"{name}.sql").read_text()
    parameters = {"k": 2}
    parameters |= {c: f(2) for c, f in CUTOFF_CONSTANTS.items() if f"${c}" in text}
    rows = connection.execute(text, parameters).fetchall()
    expected = {
        "coverage": [(0.75,)],  # items 1, 2, 3 of 4
        "entropy": [(1.5,)],  # exposures 2, 1, 1 of 4
        "gini": [(0.375,)],  # 0, 1, 1, 2: (-3*0 - 1*1 + 1*1 + 3*2) / (4 * 4)
        "personalization": [(0.5,)],  # one pair sharing 1 of 2
        "novelty": [(1, 0.5), (2, 0.5)],  # -log2(2/2) = 0, -log2(1/2) = 1 (item 3 as 1)
        "arp": [(1, 1.5), (2, 1.0)],  # (2 + 1) / 2, (2 + 0) / 2
        "aplt": [(1, 0.0), (2, 0.5)],  # item 3 alone in the tail
        "aclt": [(1, 0.0), (2, 1.0)],
        # 2 users consumed: item 1 -> log2(2/2) = 0, item 2 -> 1, item 3 (nobody) -> 1; over k = 2
        "surprisal": [(1, 0.5), (2, 0.5)],
        "tail_coverage": [(0.5,)],  # the tail {3, 4}: 3 shown
        # head shown 2 + 1 of 2 * 2 - 1 (user 2 consumed 2); tail 0 + 1 of 2 * 2 - 1 (user 1, 3):
        # P = 1, 1/3; |1 - 1/3| / (1 + 1/3), in the same float steps as the SQL
        "pop_rsp": [((1 - 1 / 3) / (1 + 1 / 3),)],
        # relevant: user 1 {1} (head) found, user 2 {3} (tail) found, neither consumed: P = 1, 1
        "pop_reo": [(0.0,)],
        "ild": [(1, 1.0), (2, 0.0)],  # a, b differ; a, a do not
        # user 1: relevant item 1 (a), history all a -> 0; user 2: relevant 3 (a), history b -> 1
        "serendipity": [(1, 0.0), (2, 0.5)],
        # user 1 (m = 2) gains item 1 1 (x), item 2 0.5 (x again) + 1 (y); user 2 nothing
        "p_ia": [(1, 0.75), (2, 0.0)],  # (1 + 2) / (2 * 2)
        "s_recall": [(1, 1.0), (2, 0.0)],
        "ap_ia": [(1, 0.75), (2, 0.0)],  # x (1/1 + 2/2) / 2, y (1/2) / 1
        "err_ia": [(1, 0.7), (2, 0.0)],  # (1 + 1.5/2) / (2 * (1 + 0.5/2))
        "nerr_ia": [(1, (1 + 1.5 / 2) / (2 + 0.5 / 2)), (2, 0.0)],
        "alpha_ndcg": [(1, (1 + 1.5 / math.log2(3)) / (2 + 0.5 / math.log2(3))), (2, 0.0)],
        # user 1 (1, 2) against (2, 1): both items within 2; user 2 has no baseline list: 0
        "intersection": [(1, 1.0), (2, 0.0)],
        "unexpectedness": [(1, 0.0), (2, 0.0)],  # 1 - 2/2; RePlay's 0 without a baseline
        # user 1: depth 1 {1} vs {2} shares 0, depth 2 shares 2 of 2: 0.9 * 1 / (1 + 0.9)
        "rbo": [(1, 0.9 / 1.9), (2, 0.0)],
    }[name]
    assert sorted(rows) == [pytest.approx(row, rel=1e-12) for row in expected]


def test_aliases_are_unique() -> None:
    seen: dict[str, str] = {}
    for metric in metrics().values():
        for name in (metric.name, *metric.aliases):
            assert name not in seen, f"{name} names both {seen[name]} and {metric.name}"
            seen[name] = metric.name
