"""Issue 22: trec_eval's and ir_measures' names resolve to the metric that computes the same
quantity, and an unknown name is never matched to a metric of a similar spelling but another
meaning. The numbers behind these names are compared with pytrec_eval in
tests/test_profiles.py (test_trec_eval_spellings_under_the_profile) and test_crosscheck.py."""

from __future__ import annotations

import pytest

from sqlmetrics.catalog.metrics import parse_request
from sqlmetrics.errors import SqlmetricsError

SPELLINGS = [
    # trec_eval, as it prints them
    ("P_5", "precision", 5),
    ("P.5", "precision", 5),
    ("recall_10", "recall", 10),
    ("ndcg_cut_10", "ndcg", 10),
    ("map_cut_10", "map", 10),
    ("recip_rank", "mrr", None),
    ("Rprec", "r_precision", None),
    ("success_10", "hit_rate", 10),
    ("set_P", "precision", None),
    ("set_recall", "recall", None),
    ("set_F", "f1", None),
    ("relative_P_5", "recall_capped", 5),
    ("set_relative_P", "recall_capped", None),
    ("num_rel_ret", "num_rel_ret", None),  # summed over users, as trec_eval's 'all' line
    ("num_ret", "num_ret", None),
    ("num_rel", "num_rel", None),
    ("gm_map", "gm_map", None),
    ("11pt_avg", "iprec_11pt_avg", None),
    # ir_measures
    ("P@5", "precision", 5),
    ("nDCG@10", "ndcg", 10),
    ("AP", "map", None),
    ("AP@10", "map", 10),
    ("R@100", "recall", 100),
    ("RR", "mrr", None),
    ("RR@10", "mrr", 10),
    ("Success@10", "hit_rate", 10),
    ("NumRelRet", "num_rel_ret", None),
    ("NumRet", "num_ret", None),
    ("NumRel", "num_rel", None),
]

# trec_eval's float parameters: (text, metric, level)
LEVELS = [
    ("iprec_at_recall_0.10", "iprec_at_recall", 0.1),
    ("iprec_at_recall_1.00", "iprec_at_recall", 1.0),
    ("iprec_at_recall", "iprec_at_recall", 0.0),
    # ir_measures' IPrec computes 9.0.8's cutoffs (its pytrec_eval provider)
    ("IPrec@0.1", "iprec_at_recall_trec9", 0.1),
    ("Rprec_mult_0.20", "rprec_mult", 0.2),
    ("Rprec_mult_2.00", "rprec_mult", 2.0),
    ("rprec_mult", "rprec_mult", 1.0),  # R-precision
]


@pytest.mark.parametrize(("text", "metric", "level"), LEVELS)
def test_float_parameters(text: str, metric: str, level: float) -> None:
    request = parse_request(text)
    assert (request.metric.name, request.score_threshold, request.label) == (metric, level, text)


@pytest.mark.parametrize("text", ["iprec_at_recall@-0.1", "rprec_mult@x", "IPrec@"])
def test_float_parameters_are_numbers(text: str) -> None:
    with pytest.raises(SqlmetricsError, match="must be a number of at least 0"):
        parse_request(text)


@pytest.mark.parametrize(("text", "metric", "k"), SPELLINGS)
def test_other_tools_spellings(text: str, metric: str, k: int | None) -> None:
    request = parse_request(text)
    assert (request.metric.name, request.k, request.label) == (metric, k, text)


@pytest.mark.parametrize("text", ["set_P@5", "set_recall@10", "NumRelRet@3"])
def test_whole_list_set_measures_take_no_cutoff(text: str) -> None:
    with pytest.raises(SqlmetricsError, match="takes no cutoff"):
        parse_request(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("relstring", "a string of relevance values"),
    ],
)
def test_measures_not_computed_say_why_and_suggest_nothing(text: str, reason: str) -> None:
    with pytest.raises(SqlmetricsError, match=reason) as raised:
        parse_request(text)
    assert "Did you mean" not in str(raised.value)
    assert "sqlmetrics metrics" in str(raised.value)


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("ndgc@10", "ndcg"),  # two letters swapped
        ("precison@5", "precision"),  # one letter left out
        ("mean_average_precision@10", "map"),  # a synonym
        ("reciprocal_rank", "mrr"),
        ("set_recal", "set_recall"),  # not score_recall, the nearest metric name
        ("brpef", "bpref"),  # two letters swapped
    ],
)
def test_suggestions_name_the_same_quantity(text: str, meant: str) -> None:
    with pytest.raises(SqlmetricsError, match=f"Did you mean '{meant}'"):
        parse_request(text)


@pytest.mark.parametrize("text", ["set_ndcg", "score_prec", "rprecs_x", "foo@10", "mpa_cut_x"])
def test_no_suggestion_from_a_merely_similar_spelling(text: str) -> None:
    """The nearest spelling is often another quantity (set_ndcg is not set_f, rprecs_x not
    rprec): beyond a one-letter typo or a known synonym nothing is suggested."""
    with pytest.raises(SqlmetricsError, match="Run `sqlmetrics metrics`") as raised:
        parse_request(text)
    assert "Did you mean" not in str(raised.value)
