"""Definition profiles: which sqlmetrics metric reproduces each library's definition.

A profile is data, not a code path: for every metric name a library defines (``map`` for the
uncut form, ``map@k`` with a cutoff) the sqlmetrics metric file that computes the same number,
plus the options that make the inputs mean what the library takes them to mean (tie policy,
population, which interactions count as relevant). The mapping lives in this module as a plain
dict rather than a YAML file so it is typed (mypy checks every entry), ships inside the package
without a YAML parser at run time, and is imported without reading files. ``docs/profiles.md``
is generated from it (a test keeps them in sync) and ``tests/test_profiles.py`` runs every
profile against the library itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlmetrics.catalog.metrics import MetricRequest, metrics, parse_requests
from sqlmetrics.catalog.profile import RELEVANCE, Profile
from sqlmetrics.catalog.trec_profiles import TREC_EVAL, TREC_EVAL_9
from sqlmetrics.errors import SqlmetricsError

__all__ = ["PROFILES", "RELEVANCE", "Profile", "get_profile", "profile_requests", "resolve"]


def _both(*pairs: tuple[str, str]) -> dict[str, str]:
    """The same metric with and without a cutoff."""
    return {form: metric for name, metric in pairs for form in (name, f"{name}@k")}


PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        TREC_EVAL,
        TREC_EVAL_9,
        Profile(
            name="ranx",
            library="ranx 0.3.21",
            metrics={
                **_both(
                    ("hits", "hits"),
                    ("hit_rate", "hit_rate"),
                    ("precision", "precision"),
                    ("recall", "recall"),
                    ("f1", "f1"),
                    ("mrr", "mrr"),
                    ("map", "map"),
                    ("dcg", "dcg"),
                    ("dcg_exp", "dcg_exp"),
                    ("ndcg", "ndcg"),
                    ("ndcg_exp", "ndcg_exp"),
                ),
                "r_precision": "r_precision",
                "rbp": "rbp_graded",  # rbp.9 (p = 0.9; rbp@0.8 is rbp.8), the grade as gain
            },
            notes=(
                "ranx breaks equal scores by the order the run was built in (numba argsort), "
                "so results on tied scores are arbitrary; compared on tie-free data only.",
                "relevance_level=L means relevance >= L: threshold=L-1 for integer grades; "
                "ranx drops the lower grades from NDCG too, as sqlmetrics does.",
                "Users without a run score 0 with make_comparable=True (population all); "
                "without it ranx refuses the run.",
                "dcg_exp / ndcg_exp are ranx's dcg_burges / ndcg_burges (2^rel - 1).",
                "rbp is ranx's rbp.p (written rbp.9 in ranx for p = 0.9; rbp@0.9 or rbp(p=0.9) "
                "here): each relevant item's grade is its gain (rbp_graded); sqlmetrics' own rbp "
                "is binary.",
            ),
            references=("AmenRa/ranx: ranx/metrics/*.py",),
        ),
        Profile(
            name="sklearn",
            library="scikit-learn 1.9 (ndcg_score, dcg_score)",
            metrics=_both(("ndcg", "ndcg_scored"), ("dcg", "dcg")),
            ties="average",
            population="common",
            notes=(
                "ndcg_score / dcg_score see only the scored items: the ideal DCG sorts the "
                "relevances of the recommended items (ndcg_scored), relevant items never "
                "scored do not exist for it, and users without recommendations have no row.",
                "Equal scores get the tie-averaged DCG (sklearn's default ignore_ties=False).",
                "ndcg_score needs at least 2 scored items per user; a user whose scored items "
                "are all non-relevant scores 0, and a user without any relevant interaction "
                "(a row of zeros in y_true) is outside sqlmetrics' population.",
            ),
            references=("scikit-learn: sklearn/metrics/_ranking.py (ndcg_score, dcg_score)",),
        ),
        Profile(
            name="spark",
            library="Apache Spark 4.3 MLlib RankingMetrics / ML RankingEvaluator",
            metrics={
                "map": "map",  # meanAveragePrecision
                "map@k": "map_min",  # meanAveragePrecisionAt(k)
                "precision@k": "precision",  # precisionAt(k)
                "recall@k": "recall",  # recallAt(k)
                "ndcg@k": "ndcg",  # ndcgAt(k), binary labels
            },
            relevance="every_row",
            notes=(
                "The ground truth is a set of items per user: every interaction row is "
                "relevant, gain 1 (RankingEvaluator's only form). Spark's graded NDCG (RDD "
                "API with relevance values) is profile 'spark_graded'.",
                "Spark takes each user's list already ordered: sqlmetrics' ranking rule "
                "(score descending, item id descending) decides that order.",
                "Spark averages over the rows it is given, and counts a row without labels "
                "as 0; sqlmetrics' population is the users with a relevant interaction "
                "(users without recommendations score 0).",
                "No MRR or hit rate in Spark (apache/spark#12461 was closed).",
            ),
            references=(
                "apache/spark: mllib/src/main/scala/org/apache/spark/mllib/evaluation/"
                "RankingMetrics.scala; ml/evaluation/RankingEvaluator.scala",
            ),
        ),
        Profile(
            name="spark_graded",
            library="Apache Spark 4.3 MLlib RankingMetrics with relevance values (3.4+)",
            metrics={
                "map": "map",  # meanAveragePrecision
                "map@k": "map_min",  # meanAveragePrecisionAt(k)
                "precision@k": "precision",  # precisionAt(k)
                "recall@k": "recall",  # recallAt(k)
                "ndcg@k": "ndcg_exp",  # ndcgAt(k), graded: gain 2^rel - 1
            },
            notes=(
                "RankingMetrics on (predictions, labels, relevance values) rows. It matches "
                "when each user's labels are the relevant items (relevance above the "
                "threshold, one label per item, with the largest relevance) in relevance-"
                "descending order: Spark's ideal DCG walks the labels in the order given, not "
                "sorted, so another order gives a smaller ideal and a larger NDCG (even above "
                "1). Non-relevant labels would count as relevant for MAP, precision and recall.",
                "ndcgAt(k) with relevance values gains 2^rel - 1 (ndcg_exp); its natural-log "
                "discount gives the same ratio as log2. MAP, precision and recall read the "
                "labels as a set, as in profile 'spark'.",
                "From Scala or Java only: pyspark's RankingMetrics hands the JVM the first two "
                "columns (PythonMLLibAPI.newRankingMetrics), so its ndcgAt stays binary "
                "whatever the relevance values (that is profile 'spark').",
                "Spark takes each list already ordered: sqlmetrics' ranking rule (score "
                "descending, item id descending) decides that order.",
                "Rows: the users with a relevant interaction (users without recommendations "
                "get an empty prediction list and score 0); Spark averages over the rows it is "
                "given.",
            ),
            references=(
                "apache/spark: mllib/src/main/scala/org/apache/spark/mllib/evaluation/"
                "RankingMetrics.scala (ndcgAt with relevance values, since 3.4)",
            ),
        ),
        Profile(
            name="recommenders",
            library="MS Recommenders 1.2.1 (recommenders.evaluation.python_evaluation)",
            metrics={
                "precision@k": "precision",  # precision_at_k
                "recall@k": "recall",  # recall_at_k
                "map@k": "map_min",  # map_at_k
                "ndcg@k": "ndcg",  # ndcg_at_k, score_type='binary'
            },
            population="common",
            populations={"ndcg@k": "all"},
            relevance="every_row",
            notes=(
                "Every row of rating_true is relevant (the rating only matters for "
                "ndcg_at_k's score_type 'raw'/'exp', not reproduced); duplicate rows would "
                "count twice there, deduplicate them first.",
                "precision_at_k, recall_at_k and map_at_k average over the users present in "
                "both tables (merge_ranking_true_pred's common_users): population='common'; "
                "ndcg_at_k averages over every user of rating_true, a user without "
                "recommendations scoring 0 (population all for ndcg@k, in the same query).",
                "map@k is map_at_k (divided by min(|R|, k)); map(), divided by |R|, is "
                "sqlmetrics map@k with population='common' and the relevance column ignored.",
                "The lists are ordered with a pandas sort of the predictions and ranked by "
                "cumcount: equal scores keep the input row order, which is arbitrary; "
                "compared on tie-free data only.",
                "relevancy_method='top_k' (the default); 'by_threshold' is not reproduced "
                "(recommenders-team/recommenders#2154).",
            ),
            references=(
                "recommenders-team/recommenders: recommenders/evaluation/python_evaluation.py "
                "(merge_ranking_true_pred, precision_at_k, recall_at_k, map_at_k, map, "
                "ndcg_at_k, get_top_k_items)",
            ),
        ),
        Profile(
            name="rectools",
            library="RecTools 0.19.0 (rectools.metrics)",
            metrics={
                "precision@k": "precision",  # Precision(k)
                "recall@k": "recall",  # Recall(k)
                "f1@k": "f1",  # F1Beta(k, beta=1)
                "hit_rate@k": "hit_rate",  # HitRate(k)
                "mrr@k": "mrr",  # MRR(k)
                "map@k": "map",  # MAP(k), divide_by_k=False
                "ndcg@k": "ndcg_ideal_k",  # NDCG(k), divide_by_achievable=False
            },
            relevance="every_row",
            ranks="literal",
            notes=(
                "Every interaction row is relevant (RecTools reads no relevance); duplicate "
                "rows count twice (MobileTeleSystems/RecTools#164): deduplicate them first.",
                "Users are those of the interactions table; a user without recommendations "
                "scores 0 (population all).",
                "RecTools takes the ranks as given (the Rank column); sqlmetrics' ranking rule "
                "gives them from scores, so tied scores are compared too. A rank column is read "
                'as RecTools reads it (ranks="literal"): each rank is the position, gaps and '
                "repeats included (ranks 9, 1, 3, 5, 7 or 1, 1, 2); k keeps the rows ranked "
                "<= k, so Precision@k can exceed 1 and NDCG sums 1/log2(rank + 1) over every "
                "row; MAP counts a repeated rank once: (hits ranked <= r) / r per rank r holding "
                "a hit (a NULL, fractional or below-1 rank is refused).",
                "NDCG(k) divides by the DCG of k relevant items (sum over i = 1..k of "
                "1/log2(i + 1)) whatever the user's |R| (ndcg_ideal_k); NDCG(k, "
                "divide_by_achievable=True) is sqlmetrics ndcg@k with the relevance column "
                "ignored (columns={'relevance': None}). NDCG's log_base cancels out.",
                "Options not reproduced: MAP(divide_by_k=True), Precision(r_precision=True), "
                "debias_config.",
            ),
            references=(
                "MobileTeleSystems/RecTools: rectools/metrics/classification.py (Precision, "
                "Recall, F1Beta, HitRate, calc_confusions), rectools/metrics/ranking.py (MAP, "
                "NDCG, MRR)",
            ),
        ),
        Profile(
            name="replay",
            library="RePlay 0.22.0 (replay.metrics)",
            metrics={
                "precision@k": "precision",  # Precision
                "recall@k": "recall",  # Recall
                "hit_rate@k": "hit_rate",  # HitRate
                "mrr@k": "mrr",  # MRR
                "map@k": "map_min",  # MAP
                "ndcg@k": "ndcg",  # NDCG, binary
            },
            relevance="every_row",
            notes=(
                "The ground truth is a list of items per user: every interaction row is "
                "relevant, gain 1; repeated items count twice in MAP's min(k, |R|), "
                "deduplicate them first.",
                "Users are those of the ground truth; a user without recommendations scores "
                "0 (population all).",
                "Equal scores: item id descending (a stable sort by score and item id), the "
                "same rule as ties='id', so tied scores are compared too.",
            ),
            references=(
                "sb-ai-lab/RePlay: replay/metrics/base_metric.py (sorting, users), "
                "replay/metrics/map.py, ndcg.py, precision.py, recall.py, hitrate.py, mrr.py",
            ),
        ),
        Profile(
            name="torchmetrics",
            library="torchmetrics 1.9.0 (torchmetrics.functional.retrieval)",
            metrics={
                **_both(
                    ("precision", "precision"),  # retrieval_precision (adaptive_k=False)
                    ("precision_listed", "precision_listed"),  # adaptive_k=True
                    ("recall", "recall_scored"),  # retrieval_recall
                    ("hit_rate", "hit_rate"),  # retrieval_hit_rate
                    ("mrr", "mrr"),  # retrieval_reciprocal_rank
                    ("map", "map_hits"),  # retrieval_average_precision
                    ("ndcg", "ndcg_scored"),  # retrieval_normalized_dcg
                ),
                "r_precision": "r_precision_scored",  # retrieval_r_precision
            },
            population="common",
            notes=(
                "A query is a user's scored items: preds = the scores, target = their "
                "relevance; relevant items never recommended do not exist for it (recall "
                "divides by the relevant items in the list, NDCG's ideal sorts the list's "
                "relevances, R-precision's R is the relevant items in the list: "
                "r_precision_scored), users without recommendations have no query "
                "(population='common').",
                "precision_listed@k is retrieval_precision(top_k=k, adaptive_k=True): k becomes "
                "min(k, the number of scored items); precision@k is adaptive_k=False (divided "
                "by k).",
                "Users whose list holds no relevant item score 0 in torchmetrics "
                "(empty_target_action='neg' in the module classes); sqlmetrics scores the "
                "same 0, but a user without any relevant interaction is outside its "
                "population, so the means differ when such users have lists.",
                "torchmetrics 1.8+ treats scores <= 0 as not retrieved for precision, recall, "
                "AP and MRR (Lightning-AI/torchmetrics PR #3160) but not for hit rate; "
                "sqlmetrics ranks them like any score. Compared on positive scores.",
                "Equal scores: topk / argsort order, arbitrary, except NDCG, which averages "
                "over the tie orders like scikit-learn: on tied scores use profile='sklearn' "
                "for ndcg (the same ndcg_scored with ties='average'). Compared on tie-free "
                "data, and NDCG also on tied data against the sklearn profile.",
                "torchmetrics computes in float32 (.float()): it is compared to 1e-6, not 1e-9.",
            ),
            references=(
                "Lightning-AI/torchmetrics: src/torchmetrics/functional/retrieval/precision.py, "
                "recall.py, hit_rate.py, reciprocal_rank.py, average_precision.py, ndcg.py, "
                "r_precision.py",
            ),
        ),
        Profile(
            name="torchrec",
            library="TorchRec (torchrec.metrics: NE, Calibration, AUPRC, GAUC)",
            metrics={
                "ne": "ne",  # NE
                "calibration": "calibration",  # Calibration
                "average_precision": "average_precision",  # AUPRC: a Riemann sum
                "pr_auc": "average_precision",  # AUPRC, which is not trapezoidal
                "gauc": "user_auc",  # GAUC: the plain mean of the sessions' AUCs
            },
            notes=(
                "A session is a user's scored rows (predictions = the scores, labels = "
                "relevant or not); weights are the weight column (columns={'weight': ...}), "
                "1 without one.",
                "GAUC averages the AUCs of the sessions with both labels, unweighted "
                "(user_auc); TorchRec also skips a session whose predictions are all equal, "
                "which user_auc counts at 0.5, and orders equal predictions as argsort does, "
                "where user_auc counts a tie 1/2: equal on sessions without ties.",
                "NE takes log2 of the predictions clamped to [1e-12, 1 - 1e-12] and of the "
                "base rate (the same ratio as ne's natural logarithms); where every row is "
                "relevant or none TorchRec's clamped base rate gives a huge number, ne NULL.",
                "Calibration is 0 in TorchRec where no row is relevant, NULL here.",
                "AUPRC sums each distinct prediction's recall step times its precision, from "
                "recall 0 at precision 1: average_precision (scikit-learn's), not the "
                "trapezoids of sqlmetrics' pr_auc, so pr_auc under this profile is "
                "average_precision.",
            ),
            references=(
                "pytorch/torchrec: torchrec/metrics/ne.py, calibration.py, auprc.py, gauc.py",
            ),
        ),
        Profile(
            name="recbole",
            library="RecBole 1.2 (recbole.evaluator.metrics: GAUC, AUC)",
            metrics={
                "gauc": "gauc_positives",  # GAUC: each user's AUC weighted by its positives
                "auc": "auc",  # AUC: over every scored row, regardless of the users
            },
            notes=(
                "RecBole scores every item of the catalogue for each user (full sort); "
                "sqlmetrics reads the scored rows given, so the two agree when the "
                "recommendations hold a score for each item RecBole would rank.",
                "GAUC weighs each user's AUC by the user's positives (gauc_positives); "
                "sqlmetrics' gauc weighs by the scored rows, and TorchRec's (profile torchrec, "
                "user_auc) not at all. Users with no positive or no negative are skipped, as "
                "RecBole's warning says. Ties take the mean rank (1/2 a pair), as its "
                "rec.meanrank.",
            ),
            references=("RUCAIBox/RecBole: recbole/evaluator/metrics.py (GAUC, AUC)",),
        ),
        Profile(
            name="lenskit",
            library="LensKit 2025.8.1 (lenskit.metrics.ranking)",
            metrics={
                "precision": "precision",  # Precision()
                "precision@k": "precision_listed",  # Precision(k)
                "recall": "recall",  # Recall()
                "recall@k": "recall_capped",  # Recall(k)
                "hit_rate": "hit_rate",  # Hit()
                "hit_rate@k": "hit_rate",  # Hit(k)
                "mrr": "mrr",  # RecipRank()
                "mrr@k": "mrr",  # RecipRank(k)
                "map": "map_listed",  # AveragePrecision()
                "map@k": "map_listed",  # AveragePrecision(k)
                "ndcg": "ndcg_clipped",  # NDCG()
                "ndcg@k": "ndcg_clipped",  # NDCG(k)
            },
            # Precision and AveragePrecision of an empty list are NaN, which the summaries skip.
            populations={form: "common" for form in ("precision", "precision@k", "map", "map@k")},
            relevance="every_row",
            notes=(
                "The test items are relevant with gain 1 (NDCG's default gain=None); every "
                "interaction row counts. NDCG(gain='rating') is not reproduced through the "
                "profile.",
                "NDCG's default LogRankWeight discounts position i by log2(max(i, 2)) "
                "(ndcg_clipped), not log2(i + 1); LogRankWeight(offset=1) gives sqlmetrics "
                "ndcg.",
                "Precision@k divides by the list truncated to k (precision_listed), Recall@k "
                "by min(|R|, k) (recall_capped), AveragePrecision by min(|R|, the truncated "
                "list's length) (map_listed).",
                "A user of the test data without recommendations scores 0 in Recall, Hit, "
                "RecipRank and NDCG (population all); LensKit's Precision and "
                "AveragePrecision give NaN for an empty list, which its summaries skip: the "
                "profile averages those two over the users with recommendations (population "
                "common, NULL per user), in the same query.",
                "LensKit takes each list already ordered; sqlmetrics' ranking rule decides "
                "that order, so tied scores are compared too.",
            ),
            references=(
                "lenskit/lkpy: src/lenskit/metrics/ranking/_pr.py (Precision, Recall), "
                "_map.py (AveragePrecision), _hit.py, _recip.py, _dcg.py (NDCG), "
                "_weighting.py (LogRankWeight), _base.py (truncate)",
            ),
        ),
    )
}


def get_profile(name: str) -> Profile:
    profile = PROFILES.get(name)
    if profile is None:
        raise SqlmetricsError(
            f"unknown profile {name!r}; use one of {', '.join(PROFILES)} "
            "(`sqlmetrics profiles` shows what each changes)"
        )
    return profile


def _form(request: MetricRequest) -> str:
    return request.metric.name if request.k is None else f"{request.metric.name}@k"


def profile_requests(profile: Profile, texts: Sequence[str] | str) -> list[MetricRequest]:
    """The requests as the profile's library defines them, labelled as the user typed them."""
    requests = []
    for request in parse_requests(texts):
        metric = profile.metrics.get(_form(request))
        reason = profile.unsupported.get(_form(request))
        if reason is not None:
            raise SqlmetricsError(
                f"profile {profile.name!r} cannot reproduce {request.label!r}: {reason}"
            )
        if metric is None:
            raise SqlmetricsError(
                f"{profile.library} (profile {profile.name!r}) does not define "
                f"{request.label!r}; it defines {', '.join(profile.metrics)}"
            )
        population = profile.populations.get(_form(request))
        requests.append(
            MetricRequest(
                metrics()[metric],
                request.k,
                request.label,
                # the @x of a level metric (iprec_at_recall@0.1) travels with the request
                score_threshold=request.score_threshold,
                population=population,
                # named parameters (gains, gmax) travel to the metric that takes them
                parameters=request.parameters if metric == request.metric.name else (),
            )
        )
    return requests


def _pick(profile: Profile, option: str, given: str, default: str, wanted: str) -> str:
    """The profile's value unless the caller asked for the same explicitly; a different
    explicit value is refused rather than silently changing the library's number."""
    if given not in (default, wanted):
        raise SqlmetricsError(
            f"profile {profile.name!r} sets {option}={wanted!r} (that is how "
            f"{profile.library} computes it); drop {option}={given!r} or the profile"
        )
    return wanted


@dataclass(frozen=True)
class Resolved:
    """What evaluate and to_sql run once a profile (or none) is applied."""

    requests: list[MetricRequest]
    ties: str
    population: str
    columns: dict[str, str | None] | None
    ranks: str = "consecutive"
    checks: str = "read"


def resolve(
    profile: str | None,
    texts: Sequence[str] | str,
    *,
    ties: str,
    population: str,
    columns: Mapping[str, str | None] | None,
    ranks: str = "consecutive",
    checks: str = "read",
) -> Resolved:
    """The requests and options for ``profile``; without one, the arguments as given."""
    if profile is None:
        given = dict(columns or {}) or None
        return Resolved(parse_requests(texts), ties, population, given, ranks, checks)
    chosen = get_profile(profile)
    resolved_columns = dict(columns or {})
    if chosen.relevance == "every_row":
        resolved_columns["relevance"] = None
    return Resolved(
        requests=profile_requests(chosen, texts),
        ties=_pick(chosen, "ties", ties, "id", chosen.ties),
        population=population
        if population in chosen.other_populations
        else _pick(chosen, "population", population, "all", chosen.population),
        columns=resolved_columns or None,
        ranks=_pick(chosen, "ranks", ranks, "consecutive", chosen.ranks),
        # the whole-list audit is never turned off by a profile
        checks="full" if "full" in (checks, chosen.checks) else checks,
    )


def _own_population(profile: Profile, form: str) -> str:
    population = profile.populations.get(form)
    return f" (population {population})" if population else ""


def describe_profiles() -> list[dict[str, str]]:
    """Every profile: its library, what each metric name maps to, and the options it sets."""
    return [
        {
            "profile": profile.name,
            "library": profile.library,
            "metrics": ", ".join(
                f"{name}={metric}" + _own_population(profile, name)
                for name, metric in profile.metrics.items()
            ),
            "ties": profile.ties,
            "population": profile.population,
            "relevance": profile.relevance,
            "ranks": profile.ranks,
            "not_reproduced": ", ".join(profile.unsupported),
            "notes": " ".join(profile.notes),
            "references": "; ".join(profile.references),
        }
        for profile in PROFILES.values()
    ]
