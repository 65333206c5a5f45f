"""The trec_eval profiles: trec_eval 10.0 (``trec_eval``, the default) and 9.0.8
(``trec_eval_9``, which pytrec_eval computes). They differ in iprec_at_recall's and 11pt_avg's
recall cutoffs (10 rounds x * num_rel, 9 takes floor(x * num_rel + 0.9)); trec_eval 9 also
reads scores as 32-bit floats, which ``read_run(single_precision=True)`` and
``trec_eval(version=9)`` reproduce.
"""

from __future__ import annotations

import dataclasses

from sqlmetrics.catalog.profile import Profile

TREC_EVAL = Profile(
    name="trec_eval",
    library="trec_eval 10.0",
    metrics={
        "map": "map",  # map
        "map@k": "map",  # map_cut.k
        "ndcg": "ndcg",  # ndcg
        "ndcg@k": "ndcg",  # ndcg_cut.k
        "precision": "precision",  # set_P
        "precision@k": "precision",  # P.k
        "recall": "recall",  # set_recall
        "recall@k": "recall",  # recall.k
        "hit_rate@k": "hit_rate",  # success.k
        "mrr": "mrr",  # recip_rank
        "r_precision": "r_precision",  # Rprec
        "hits": "hits",  # num_rel_ret per topic (its mean)
        "f1": "f1",  # set_F (beta 1)
        "recall_capped": "recall_capped",  # set_relative_P
        "recall_capped@k": "recall_capped",  # relative_P.k
        "num_ret": "num_ret",  # num_ret (summed)
        "num_rel": "num_rel",  # num_rel (summed)
        "num_rel_ret": "num_rel_ret",  # num_rel_ret (summed)
        "gm_map": "gm_map",  # gm_map
        "iprec_at_recall": "iprec_at_recall",  # iprec_at_recall.x
        # ir_measures' IPrec@x, which its pytrec_eval computes with 9.0.8's cutoffs
        "iprec_at_recall_trec9": "iprec_at_recall_trec9",
        "iprec_11pt_avg": "iprec_11pt_avg",  # 11pt_avg
        "rprec_mult": "rprec_mult",  # Rprec_mult.x
        "bpref": "bpref",  # bpref
        "gm_bpref": "gm_bpref",  # gm_bpref
        "infap": "infap",  # infAP
        "set_map": "set_map",  # set_map
        "utility": "utility",  # utility (coefficients 1, -1, 0, 0)
        "bin_g": "bin_g",  # binG
        "normalized_gain": "normalized_gain",  # G
        "ndcg_rel": "ndcg_rel",  # ndcg_rel
        "rndcg": "rndcg",  # Rndcg
        "num_nonrel_judged_ret": "num_nonrel_judged_ret",  # num_nonrel_judged_ret (summed)
        # trec_eval 10's additions
        "dcg": "dcg",  # dcg (whole list, gain = rel)
        "ideal_dcg": "ideal_dcg",  # ideal_dcg
        "rbp": "rbp_scaled",  # rbp (p = 0.9; rbp@0.8 is rbp.p=0.8)
        "rbp_resid": "rbp_resid",  # rbp_resid
        "unj@k": "unj",  # unj_5, unj_10, unj_20
        # custom gains of the rel levels: ndcg.1=3,2=9 (ndcg_cut takes none in trec_eval;
        # ndcg@k is ir_measures' nDCG(gains=...)@k)
        "ndcg_gains": "ndcg_gains",
        "ndcg_gains@k": "ndcg_gains",
        "dcg_gains": "dcg_gains",  # dcg.1=3,2=9
        "ideal_dcg_gains": "ideal_dcg_gains",  # ideal_dcg.1=3,2=9
        "ndcg_rel_gains": "ndcg_rel_gains",  # ndcg_rel.1=3,2=9
        "rndcg_gains": "rndcg_gains",  # Rndcg.1=3,2=9
        "normalized_gain_gains": "normalized_gain_gains",  # G.1=3,2=9
    },
    ties="id_text",
    checks="full",  # trec_eval refuses a repeated docno anywhere in a topic's list
    other_populations=("judged", "all_judged"),
    notes=(
        "The sqlmetrics defaults, except the order of equal scores: docno descending, "
        "compared as strings (strcmp), which ties='id_text' reproduces (the item id's "
        "text in byte order: 9, 100, 10), integer ids included.",
        "relevant means relevance >= trec_eval's -l level (1): threshold=L-1 for "
        "integer grades; trec_eval's ndcg ignores -l, sqlmetrics' threshold also "
        "zeroes the gains it excludes.",
        "Population: users with a relevant interaction, 0 when not recommended "
        "(sqlmetrics' default). trec_eval's own populations are options of the "
        "profile: population='judged' (trec_eval's default: the users with a list "
        "and any judgement, a user judged with nothing relevant scoring 0) and "
        "population='all_judged' (trec_eval -c: every user with a judgement, 0 "
        "without a list).",
        "trec_eval 10.0 (June 2026): iprec_at_recall's and 11pt_avg's recall cutoffs are "
        "round(x * |R|) (lround), where 9.0.8 took floor(x * |R| + 0.9) (profile "
        "trec_eval_9); every other definition is the same in both and checked against "
        "pytrec_eval (9.0.8), the two cutoffs against hand-derived fixtures. 10 adds rbp, "
        "rbp_resid, unj (unj_5, unj_10, unj_20), dcg and ideal_dcg.",
        "rbp is rbp_scaled: each rel over the query's largest when that exceeds 1, what "
        "trec_eval's own test output holds (out.test.aql, graded qrels.rel_level) and what "
        "its m_rbp.c means (it reads the minimum and maximum it rescales by uninitialised, "
        "so a build may print other values on graded qrels); on binary qrels it is "
        "sqlmetrics' rbp, as in ir_measures, LensKit and ranx; ranx multiplies by the raw "
        "grade (rbp_graded). rbp_resid and unj count an "
        "item the interactions lack (or a qrels rel < 0) as unjudged; rbp_resid is 0 when "
        "no listed item is unjudged, as trec_eval.",
        "TREC files: read_run / read_qrels (CLI --input-format trec) read them as "
        "trec_eval 10 does (any whitespace, fields after the tag ignored, # comments, "
        "rel by atol, a blank or duplicate qrels line refused); sqlmetrics.trec_eval() "
        "(CLI --format trec) prints trec_eval's report with its query conventions: the "
        "queries of the run with judgements (-c: of the qrels, --trec-complete), judged "
        "queries with nothing relevant as 0, num_* summed, -M (--trec-max), -N "
        "(--trec-num-docs), -l "
        "(--trec-level; ndcg keeps every positive rel as its gain; -c -q prints a line "
        "for each qrels query without a run, as 10 does). trec_eval 10.0 without -c "
        "stops when a qrels query has no run ('result qid not found in qrels', exit 4): "
        "the report evaluates the run's queries there, as 9.0.8 did. A qrels line with "
        "a negative rel (trec_eval: in the pool, not judged) is read only when infap is "
        "asked, the one measure that tells it from a document never judged; otherwise "
        "it is left out.",
        "Custom gains of the rel levels (trec_eval's -m ndcg.1=3,2=9,4=4.5, dcg.1=3, "
        "ideal_dcg.1=3, ndcg_rel.1=3, Rndcg.1=3, G.1=3; ir_measures' "
        "nDCG(gains={1:3,2:9})@10) are ndcg_gains, dcg_gains, ideal_dcg_gains, "
        "ndcg_rel_gains, rndcg_gains and normalized_gain_gains: a level listed takes its "
        "gain (0 or negative too; level 0 may be given one), a level not listed keeps its "
        "rel, a document outside the qrels gains 0; the ideal list sorts the judged "
        "documents by gain and stops at the first gain of 0 or less. trec_eval sorts the "
        "levels with a comparator that truncates the difference of two gains to an "
        "integer, so two levels whose gains differ by less than 1 can be ordered either "
        "way in its ideal list (which way depends on its C library's qsort): sqlmetrics "
        "sorts by the gain. Under custom gains ndcg_rel and G count as relevant the "
        "documents of positive gain, and Rndcg takes a point where the ideal's gain "
        "changes; for a query with a rel >= -l but no positive gain trec_eval's Rndcg "
        "divides 0 by 0 and prints -nan (its 'all' line too), which the report prints; "
        "rndcg_gains itself is 0 there, as sqlmetrics' 0 / 0 cases are.",
        "recip_rank has no cutoff in trec_eval: mrr@k is not a trec_eval measure.",
        "trec_eval's names are accepted as written (P_5, P.5, ndcg_cut_10, recip_rank, "
        "Rprec, success_10, set_P, set_recall, set_F, relative_P_5, set_relative_P, "
        "num_rel_ret), and so are ir_measures' (P@5, nDCG@10, AP, AP@10, R@100, RR, "
        "Success@10, NumRelRet).",
        "num_ret, num_rel, num_rel_ret and num_nonrel_judged_ret are summed over "
        "users, as trec_eval's 'all' line (hits is num_rel_ret per user, averaged).",
        "gm_map: per user max(AP, 1e-5) (pytrec_eval reports its log), the summary the "
        "geometric mean. iprec_at_recall@x (trec_eval iprec_at_recall_0.10; ir_measures' "
        "IPrec@0.1 is iprec_at_recall_trec9, 9.0.8's cutoffs, as ir_measures computes it "
        "through pytrec_eval) and rprec_mult@x (Rprec_mult_0.20) take trec_eval's "
        "float parameter; iprec_11pt_avg is 11pt_avg.",
        "bpref and gm_bpref read the judged non-relevant documents, the interactions at "
        "or below the threshold (rel 0 in qrels); a recommended item the interactions "
        "lack is skipped, as trec_eval skips a document outside the pool. gm_bpref: "
        "per user max(bpref, 1e-5), the summary the geometric mean.",
        "set_map is num_rel_ret^2 / (num_ret x num_rel) over the whole list; utility is "
        "trec_eval's with its default coefficients 1, -1, 0, 0 (2 num_rel_ret - "
        "num_ret, averaged), other coefficients are not offered.",
        "bin_g is binG (m_binG.c): each relevant item listed scores 1 / log2(2 + the "
        "items above it that are not relevant), the sum over |R_u|; relevant means "
        "rel >= -l, as map.",
        "ndcg_rel (m_ndcg_rel.c), normalized_gain (G, m_G.c) and rndcg (Rndcg, "
        "m_Rndcg.c) compare the list with its ideal order position by position, gain "
        "= rel; like ndcg they read every positive rel whatever -l is (Rndcg is 0 "
        "for a query with nothing at -l, as trec_eval).",
        "infap is infAP (m_infap.c): walking the whole list, each relevant item at "
        "position p scores 1/p + ((p - 1 - items outside the pool above it) / p) x "
        "(r - 1 + 1e-5) / (r - 1 + n + 2e-5), r the relevant items through it and n "
        "the judged non-relevant ones above it; the sum over |R_u|. A negative "
        "relevance is a document of the pool left unjudged (qrels rel < 0), an item "
        "the interactions lack one outside the pool; relevant means rel >= -l.",
        "Not computed: the measures of -m all_trec listed "
        "in the table below; requesting one says so.",
    ),
    references=(
        "usnistgov/trec_eval (v10.0; v9.0.8): m_gm_map.c, m_num_ret.c, m_num_rel.c, "
        "m_iprec_at_recall.c, m_11pt_avg.c, m_Rprec_mult.c, m_bpref.c, m_gm_bpref.c, "
        "form_res_rels.c (rel < 0: RELVALUE_UNJUDGED)",
        "usnistgov/trec_eval: get_trec_results.c (ties), m_map.c, m_map_cut.c, "
        "m_ndcg.c, m_ndcg_cut.c, m_P.c, m_set_P.c, m_recall.c, m_success.c, "
        "m_recip_rank.c, m_Rprec.c, m_set_recall.c, m_set_F.c, m_rel_P.c, "
        "m_set_rel_P.c, m_num_rel_ret.c, m_set_map.c, m_utility.c, m_binG.c, "
        "m_G.c, m_ndcg_rel.c, m_Rndcg.c, gain_init.c (gain = rel level), m_infap.c "
        "(INFAP_EPSILON 1e-5, trec_eval.h)",
    ),
)


# trec_eval 10's measures that 9.0.8 lacks
ONLY_IN_10 = ("dcg", "ideal_dcg", "rbp", "rbp_resid", "unj@k", "dcg_gains", "ideal_dcg_gains")


def _nine(profile: Profile) -> Profile:
    """trec_eval 9.0.8: the same measures but 10's additions, the recall cutoffs of 9."""
    renamed = {"iprec_at_recall": "iprec_at_recall_trec9", "iprec_11pt_avg": "iprec_11pt_avg_trec9"}
    return dataclasses.replace(
        profile,
        name="trec_eval_9",
        library="trec_eval 9.0.8 (pytrec-eval-terrier 0.5.11)",
        metrics={
            form: renamed.get(metric, metric)
            for form, metric in profile.metrics.items()
            if form not in ONLY_IN_10
        },
        unsupported={
            form: "it is a measure of trec_eval 10.0, not 9.0.8; use profile 'trec_eval'"
            for form in ONLY_IN_10
        },
        notes=(
            "trec_eval 9.0.8, as pytrec_eval computes it: the trec_eval profile's definitions "
            "except iprec_at_recall and 11pt_avg, whose recall cutoffs are floor(x * |R| + "
            "0.9) (iprec_at_recall_trec9, iprec_11pt_avg_trec9) where 10 rounds x * |R|. "
            "trec_eval 9 reads scores as 32-bit floats: read_run(..., single_precision=True) "
            "and trec_eval(..., version=9) (CLI --trec-version 9) compare them so; scores "
            "given in a table are compared as given. 9.0.8 has no comments: under version 9 "
            "a line starting with # is refused (9.0.8 reads it as data or stops at it).",
            *profile.notes,
        ),
    )


TREC_EVAL_9 = _nine(TREC_EVAL)
