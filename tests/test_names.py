"""Issue 22: trec_eval's and ir_measures' names resolve to the metric that computes the same
quantity, and an unknown name is never matched to a metric of a similar spelling but another
meaning. The numbers behind these names are compared with pytrec_eval in
tests/test_profiles.py (test_trec_eval_spellings_under_the_profile) and test_crosscheck.py."""

from __future__ import annotations

import pytest

from sqlmetrics.catalog import parse_request
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
    ("num_rel_ret", "hits", None),
    # ir_measures
    ("P@5", "precision", 5),
    ("nDCG@10", "ndcg", 10),
    ("AP", "map", None),
    ("AP@10", "map", 10),
    ("R@100", "recall", 100),
    ("RR", "mrr", None),
    ("RR@10", "mrr", 10),
    ("Success@10", "hit_rate", 10),
    ("NumRelRet", "hits", None),
]


@pytest.mark.parametrize(("text", "metric", "k"), SPELLINGS)
def test_other_tools_spellings(text: str, metric: str, k: int | None) -> None:
    request = parse_request(text)
    assert (request.metric.name, request.k, request.label) == (metric, k, text)


@pytest.mark.parametrize("text", ["set_P@5", "set_recall@10", "NumRelRet@3"])
def test_whole_list_set_measures_take_no_cutoff(text: str) -> None:
    with pytest.raises(SqlmetricsError, match="whole-list measure and takes no cutoff"):
        parse_request(text)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("bpref", "judged non-relevant"),
        ("Bpref", "judged non-relevant"),
        ("gm_map", "geometric mean"),
        ("iprec_at_recall_0.10", "interpolated precision"),
        ("IPrec@0.1", "interpolated precision"),
        ("11pt_avg", "interpolated precision"),
        ("num_ret", "sums it over topics"),
        ("NumRel", "sums it over topics"),
        ("Rprec_mult_0.20", "multiples of R"),
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
    ],
)
def test_suggestions_name_the_same_quantity(text: str, meant: str) -> None:
    with pytest.raises(SqlmetricsError, match=f"Did you mean '{meant}'"):
        parse_request(text)


@pytest.mark.parametrize("text", ["set_ndcg", "score_prec", "brpef", "foo@10", "mpa_cut_x"])
def test_no_suggestion_from_a_merely_similar_spelling(text: str) -> None:
    """The nearest spelling is often another quantity (set_ndcg is not set_f, brpef not
    rprec): beyond a one-letter typo or a known synonym nothing is suggested."""
    with pytest.raises(SqlmetricsError, match="Run `sqlmetrics metrics`") as raised:
        parse_request(text)
    assert "Did you mean" not in str(raised.value)
