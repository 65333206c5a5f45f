"""evaluate: binds the inputs in an engine (DuckDB by default, or your own connection), checks
them, runs the composed query there and returns the small result as a DataFrame."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar, cast

from sqlmetrics.attrs import Table
from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.catalog.profiles import resolve
from sqlmetrics.compose.diagnostics import CHECKS, KIND
from sqlmetrics.compose.distributions import distributions_of, finish_distributions
from sqlmetrics.compose.inputs import READ_CHECKED, Inputs, Options, refuse_unknown_baseline
from sqlmetrics.compose.plan import repeats_depth
from sqlmetrics.engines import connection_of, open_engine
from sqlmetrics.engines.base import Engine, Source
from sqlmetrics.engines.checks import (
    check_history,
    check_items,
    check_labels,
    refuse_bad_rows,
    refuse_nan_ratings,
    refuse_repeats,
    resolve_inputs,
)
from sqlmetrics.engines.exposure import item_group_column, with_exposure
from sqlmetrics.engines.statistics import statistics_rows
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.trec_reader import TrecFile, load, with_notes
from sqlmetrics.options import CompareOptions, EvaluateOptions, Running, filled, group_list, takes
from sqlmetrics.sampling import sampled_steps
from sqlmetrics.stats.gaps import check_segment, segment_gaps, with_segment
from sqlmetrics.stats.inference import finish_ci, finish_compare, with_intervals
from sqlmetrics.stats.query import compose_ci, compose_compare
from sqlmetrics.stats.resampling import (
    Resampling,
    distribution_indexes,
    has_interval,
    without_interval,
)

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import Unpack

T = TypeVar("T")
Replicated = tuple["pd.DataFrame", list[str]]  # the statistics query's rows, its labels


@takes(EvaluateOptions)
def evaluate(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    **options: Unpack[EvaluateOptions],
) -> pd.DataFrame:
    """Evaluates recommendations against interactions where they live: on DuckDB, or in your
    engine through ``connection``.

    Args:
        recommendations: Parquet/CSV path, glob or folder, a TREC run (``read_run``),
            DataFrame, Arrow table, a table name in ``connection``, a ``sqlmetrics.Query`` (a
            SELECT of yours, in the engine's dialect) or a Spark DataFrame (without
            ``connection=``, Spark DataFrames of one session are evaluated in it, as if
            ``connection=`` named it; beside local data they are refused). Columns
            user_id, item_id and score (or rank).
        interactions: the ground truth, in any of the same forms (TREC qrels: ``read_qrels``).
            Columns user_id, item_id and optionally relevance (1 when absent).
        metrics: names with optional cutoffs, like ``["ndcg@10", "map@10", "recall@20"]``.
        group_by: columns to evaluate separately (see METRICS.md for the population rule).
        per_user: one row per (group, user) instead of one per group.
        columns: your column names, e.g. ``{"user": "customer_id", "weight": "w"}``.
        ties: "id" (score desc, then item id desc), "id_text" (then the item id's text desc,
            byte order, as trec_eval), "optimistic", "pessimistic" or "average".
        threshold: an interaction is relevant when its relevance is above this.
        population: "all" users with a relevant interaction, or "common" (also recommended);
            trec_eval's, where any interaction is a judgement: "judged" (users recommended to
            with any interaction; one judged with nothing relevant scores 0) and "all_judged"
            (every user with an interaction, 0 without recommendations; trec_eval -c).
        duplicates: "error" on repeated (user, item) recommendations, or "first" to keep the
            best-placed one.
        ranks: how a rank column is read: "consecutive" wants each list ranked 1, 2, ..., n
            (a gap or a repeat is refused); "literal" takes each rank as the item's position,
            gaps and repeats included (RecTools' reading; docs/METRICS.md says what each
            metric does with a repeated rank). Scores are always ranked 1..n.
        checks: how deep a repeated (user, item) is refused: "read" within the part of each
            list the metrics read (the first k positions of the deepest cutoff; the whole list
            for a metric without one), where it can change a number; "full" anywhere in the
            list (an audit that reads every list whole). TREC files and the trec_eval profiles
            always check the whole list, as trec_eval does. Every other check reads every row.
        connection: where the query runs: a DuckDB connection, a SQLAlchemy Engine or
            Connection (the dialect comes from it), a PEP 249 (DB-API) connection (with
            ``dialect=``) or a SparkSession. Only the result leaves the engine; nothing is
            written there (Spark DataFrames become temporary views, dropped afterwards).
        dialect: the sqlglot dialect of a DB-API connection whose driver reaches more than
            one database (psycopg: "postgres" or "redshift"), or of a SQLAlchemy engine whose
            dialect sqlmetrics does not know; checked against the database the driver
            reaches (a dialect that does not fit is refused).
        timeout: cancel the query on the engine after this many seconds (on Spark also the
            jobs it starts afterwards: the call returns at the deadline even while Spark
            still plans the query).
        progress: show the engine's progress bar (DuckDB's, or Spark's stages).
        items: optional, in any of the same forms: one row per item (item_id, and category
            for ild). When given it is the catalogue of coverage and gini.
        history: optional, in any of the same forms: what each user consumed before (user_id,
            item_id), for serendipity; the popularity metrics (novelty, arp, surprisal, the
            long tail's) count it instead of the interactions.
        profile: compute each metric as one library defines it ("trec_eval", "ranx",
            "sklearn", "spark", ...; see docs/profiles.md): the profile picks the metric
            variant and sets ties, population and how relevance is read.
        ci: a confidence level such as 0.95: adds ``<metric>_lo`` and ``<metric>_hi`` after
            each metric that is a mean over users (NaN for micro and group-level metrics,
            which have no per-user value to resample; docs/METRICS.md, "Intervals and tests").
        ci_method: "t" (Student's t-interval over the users) or "bootstrap" (a Poisson
            bootstrap of the users in SQL, percentile interval).
        replicates: the bootstrap's number of replicates, at least 2 / (1 - ci) (40 at 0.95)
            so that each end of the interval has a replicate beyond it.
        seed: the bootstrap's seed: the same seed gives the same interval on every engine.
        distributions: labels of requested metrics that are means over users: how their
            per-user values spread, per group, in ``read_distributions(result)`` (the
            group columns, ``metric``, ``users`` with a value, ``users_at_0``, and
            ``quantiles``: the values at 0 %, 1 %, .., 100 %, the smallest value with at
            least that share of the users at or below it). On DuckDB with ``ci`` (the
            t-interval) they come from the same query; otherwise from one per-user query.
        segment: a column of both inputs that sorts users into segments (like country,
            each user's on their rows): one row per group and segment, and in
            ``read_gaps(result)`` per group and metric the gaps between the segments:
            ``range`` (highest minus lowest) and ``mad`` (mean absolute difference over the
            pairs of segments), with intervals under ``ci`` and ``ci_method="bootstrap"``
            (docs/reference/results.md).
        baseline: the model (first ``group_by`` column) the overlap metrics compare lists with;
            with ``segment``, each model's gaps are compared with the baseline's too.
        sampled: ``Sampled(n_items=n, negatives=m)``: each list is a user's held-out positive(s)
            among m negatives sampled from n items; ``read_sampled(result)`` gives corrected
            full-catalogue estimates (docs/how-to/sampled-metrics.md).
        exposure_k: with ``items`` and its ``columns["item_group"]`` column (a provider, a
            category), ``read_exposure(result)`` gives per group and item group its share of
            the exposure in the top k, of the catalogue and of the relevant items.
        exposure_patience: the exposure's discount: position p weighs patience^(p - 1)
            (0.85, LensKit's ``GeometricRankWeight``).

    Returns:
        A DataFrame: the group columns, ``users``, and one column per metric named as requested.
        ``users`` counts the population; under a profile that averages some metrics over fewer
        users (MS Recommenders, LensKit: docs/profiles.md), it counts the widest of them.
        ``read_diagnostics(result)`` gives the counts of METRICS.md "Results" per group (its
        attrs hold them as values, so that results concatenate and merge like any frame;
        pandas drops attrs from a join of parts that differ, as two calls' results do);
        ``result.attrs["passes"]`` is 1, or how many passes over the users DuckDB's memory
        limit required (the numbers are the same either way); ``result.attrs["engine"]`` and
        ``["dialect"]`` say where they were computed and in which SQL.
    """
    given = filled(EvaluateOptions, options, "evaluate")
    ci, per_user, segment = given["ci"], given["per_user"], given["segment"]
    resampling = None
    if ci is not None:
        resampling = Resampling(ci, *_resampled(given), segmented=segment is not None)
    if segment is not None:
        group_by = group_list(given["group_by"])
        given["group_by"] = with_segment(group_by, segment, per_user, given["baseline"])
    if resampling is not None and per_user:
        raise SqlmetricsError("ci is an interval per group; per_user does not apply to it")
    if given["distributions"] and per_user:
        raise SqlmetricsError(
            "distributions summarise the per-user values per group; with per_user the rows "
            "are the values themselves: drop one of the two"
        )
    run: Run = functools.partial(
        _evaluate_run, resampling, per_user, given["distributions"], segment
    )
    if given["exposure_k"] is not None:
        run = with_exposure(run, given["exposure_k"], given["exposure_patience"])
    steps, finished = sampled_steps(run, given)  # sampled=: its histogram after the metrics
    result, diagnostics, passes = _evaluated(recommendations, interactions, metrics, steps, given)
    diagnostics = finished(result, diagnostics)
    refuse_unknown_baseline(result, given["baseline"], group_list(given["group_by"]))
    result.attrs["diagnostics"] = Table.of(diagnostics)
    result.attrs["passes"] = passes  # > 1 when the memory limit made it split the users
    if resampling is not None:
        result.attrs["ci"] = {
            "level": resampling.level,
            "method": resampling.method,
            "replicates": resampling.replicates,
            "seed": resampling.seed,
        }
    return result


def _resampled(options: EvaluateOptions | CompareOptions) -> tuple[str, int, int]:
    """The interval method, replicates and seed of a call's options."""
    return options["ci_method"], options["replicates"], options["seed"]


@dataclasses.dataclass(frozen=True)
class Bound:
    """A call's inputs bound in its engine, its requests and the options they resolved to."""

    engine: Engine
    requests: Sequence[MetricRequest]
    inputs: Inputs
    options: Options
    recommendations: Source

    @property
    def groups(self) -> list[str]:
        return [group.name for group in self.inputs.groups]

    def evaluate(
        self, requests: Sequence[MetricRequest], per_user: bool
    ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        return self.engine.evaluate(
            requests, self.inputs, self.options, per_user, recommendations=self.recommendations
        )

    def score_floor(self) -> float | None:
        return self.engine.score_floor(
            self.requests, self.inputs, self.options, self.recommendations
        )


Run = Callable[[Bound], "tuple[pd.DataFrame, pd.DataFrame, int]"]


def _evaluate_run(
    resampling: Resampling | None,
    per_user: bool,
    distributions: Sequence[str],
    segment: str | None,
    bound: Bound,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """evaluate's queries in the engine: the values (with their intervals under ``ci``) and
    the diagnostics, the distributions asked for, and the gaps between segments."""
    requests = bound.requests
    if segment is not None:
        check_segment(bound.inputs.groups, segment)
    wanted = distribution_indexes(requests, distributions)
    together = (
        resampling is not None and resampling.method == "t" and bound.engine.dialect == "duckdb"
    )
    spreads = None
    if wanted and not together:
        spread = [requests[i] for i in wanted]
        values, _, _ = bound.evaluate(spread, True)
        spreads = distributions_of(values, [request.label for request in spread], bound.groups)
    replicates: Replicated | None = None
    if resampling is None:
        result, diagnostics, passes = bound.evaluate(requests, per_user)
    else:
        passes = 1
        interval = _with_ci if without_interval(requests) else _ci_in_one_query
        result, diagnostics, found, replicates = interval(
            bound, resampling, wanted if together else []
        )
        spreads = found if together else spreads
    if spreads is not None:  # when distributions are wanted
        result.attrs["distributions"] = Table.of(spreads)
    if segment is not None:
        labels = [request.label for request in requests]
        resampled = replicates if resampling and resampling.method == "bootstrap" else None
        baseline = bound.inputs.baseline
        gaps = segment_gaps(result, labels, bound.groups, segment, resampling, resampled, baseline)
        result.attrs["gaps"] = Table.of(gaps)
        if resampling and resampling.method != "bootstrap":
            result.attrs["notes"] = [
                *result.attrs.get("notes", []),
                "the gaps between segments get intervals from the bootstrap: ci_method='bootstrap'",
            ]
    return result, diagnostics, passes


def _ci_in_one_query(
    bound: Bound, resampling: Resampling, wanted: Sequence[int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, Replicated]:
    """Every request is a mean over users: one query gives the values, their intervals, the
    diagnostics and the distributions ``wanted`` (indexes of the requests)."""
    requests, inputs, engine = bound.requests, bound.inputs, bound.engine
    frame, diagnostics = statistics_rows(
        bound.engine,
        bound.requests,
        bound.inputs,
        bound.options,
        lambda diagnosed: compose_ci(
            requests,
            inputs,
            bound.options,
            resampling,
            engine.dialect,
            diagnostics=diagnosed,
            score_floor=bound.score_floor(),
            distributions=wanted,
        ),
    )
    result, moments, unknown = finish_ci(frame, requests, bound.groups, resampling)
    spreads = finish_distributions(frame, requests, bound.groups, wanted) if wanted else None
    replicated = (frame, [request.label for request in requests])
    return _noted(result, moments, unknown), diagnostics, spreads, replicated


def _with_ci(
    bound: Bound, resampling: Resampling, wanted: Sequence[int]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame | None, Replicated | None]:
    """A micro or group-level metric's value is not a mean of per-user values: evaluate
    computes every value (and the diagnostics), the statistics query the intervals of the
    means (and the distributions ``wanted``)."""
    requests, groups = bound.requests, bound.groups
    result, diagnostics, _ = bound.evaluate(requests, False)
    means = [request for request in requests if has_interval(request)]
    intervals: pd.DataFrame | None = None
    moments = None
    unknown: list[str] = []
    spreads = replicated = None
    if means:
        # the wanted requests are means: their indexes among them
        among = [means.index(requests[i]) for i in wanted]
        query = compose_ci(
            means,
            bound.inputs,
            bound.options,
            resampling,
            bound.engine.dialect,
            distributions=among,
        )
        rows = bound.engine._frame(query)
        intervals, moments, unknown = finish_ci(rows, means, groups, resampling)
        replicated = (rows, [request.label for request in means])
        if among:
            spreads = finish_distributions(rows, means, groups, among)
    result = with_intervals(result, intervals, requests, groups)
    result.attrs["notes"] = [
        f"no interval for {', '.join(without_interval(requests))}: a micro (ratio of sums), "
        "group-level or over-the-lists metric has no per-user value of the population to "
        "resample (docs/METRICS.md)"
    ]
    return _noted(result, moments, unknown), diagnostics, spreads, replicated


def _noted(
    result: pd.DataFrame, moments: pd.DataFrame | None, unknown: Sequence[str]
) -> pd.DataFrame:
    """``result`` with the moments of its intervals, and the notes on those unknown."""
    if unknown:
        result.attrs["notes"] = [*result.attrs.get("notes", []), *unknown]
    result.attrs["moments"] = None if moments is None else Table.of(moments)
    return result


def _evaluated(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    run: Run,
    given: Running,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Binds and checks the inputs, runs ``run`` in the engine, and refuses what the
    diagnostics say evaluate refuses: evaluate's steps, for evaluate and compare."""

    def refused(bound: Bound) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        result, diagnostics, passes = run(bound)
        # where the numbers come from: the engine and the dialect its SQL was written in
        result.attrs["engine"] = bound.engine.name
        result.attrs["dialect"] = bound.engine.dialect
        return result, _refused(bound, diagnostics), passes

    found, read = bound_call(recommendations, interactions, metrics, given, refused)
    with_notes(found[0], read)
    return found


def bound_call(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    given: Running,
    body: Callable[[Bound], T],
) -> tuple[T, object]:
    """``body`` on the inputs bound and checked in their engine (TREC files parsed once, for
    every step), and the interactions as read."""
    trec_files = any(isinstance(value, TrecFile) for value in (recommendations, interactions))
    resolved = _resolved(metrics, given, isinstance(recommendations, TrecFile))
    requests = resolved[0]
    inputs_given = {"recommendations": recommendations, "interactions": interactions}
    sources = {**inputs_given, "items": given["items"], "history": given["history"]}
    connection = connection_of(given["connection"], sources)
    with open_engine(
        connection, dialect=given["dialect"], timeout=given["timeout"], progress=given["progress"]
    ) as engine:
        if engine.name != "duckdb" and trec_files:
            raise SqlmetricsError(
                f"TREC files are read by DuckDB, not {engine.name}: drop connection=, or load "
                "the run and qrels into tables of your database first"
            )
        if isinstance(interactions, TrecFile) and any(r.metric.reads == "pool" for r in requests):
            # infap reads the qrels lines of a negative rel (the pool's unjudged documents)
            interactions = dataclasses.replace(interactions, unjudged=True)
        # a TREC file is parsed here, once, for every step below
        recommendations, interactions = (
            load(value) if isinstance(value, TrecFile) else value
            for value in (recommendations, interactions)
        )
        found = body(_bind(engine, recommendations, interactions, given, resolved))
    return found, interactions


def _resolved(
    metrics: Sequence[str] | str, given: Running, trec_run: bool
) -> tuple[Sequence[MetricRequest], Options, Mapping[str, str | None] | None]:
    """The requests, the options they resolve to under the profile, and the column names."""
    resolved = resolve(
        given["profile"],
        metrics,
        ties=given["ties"],
        population=given["population"],
        columns=given["columns"],
        ranks=given["ranks"],
        checks=given["checks"],
    )
    options = Options(
        ties=resolved.ties,
        threshold=given["threshold"],
        population=resolved.population,
        duplicates=given["duplicates"],
        ranks=resolved.ranks,
        # a TREC run's reader refuses a document listed twice for a query while parsing: the
        # query need not count them again
        checks=READ_CHECKED if trec_run else resolved.checks,
    )
    return resolved.requests, options, resolved.columns


def _bind(
    engine: Engine,
    recommendations: object,
    interactions: object,
    given: Running,
    resolved: tuple[Sequence[MetricRequest], Options, Mapping[str, str | None] | None],
) -> Bound:
    """The inputs bound in ``engine``, their columns resolved and checked against the
    requests."""
    requests, options, columns = resolved
    group_by = group_list(given["group_by"])
    recs = engine.bind(recommendations, "recommendations")
    truth = engine.bind(interactions, "interactions")
    items, history = given["items"], given["history"]
    catalogue = None if items is None else engine.bind(items, "items")
    past = None if history is None else engine.bind(history, "history")
    segment = cast("Mapping[str, str | None]", given).get("segment")  # evaluate's, not compare's
    if segment is not None and segment not in recs.columns:
        raise SqlmetricsError(
            f"segment {segment!r} is not a column of the recommendations (its columns: "
            f"{', '.join(recs.columns)}); each user's segment must be in both inputs"
        )
    rating = any(request.metric.reads == "rated" for request in requests)
    inputs = resolve_inputs(recs, truth, columns, group_by, catalogue, past, rating=rating)
    baseline = cast("Mapping[str, str]", given).get("baseline")
    group_column = item_group_column(catalogue, columns)  # the exposure's, exposure_k
    inputs = dataclasses.replace(inputs, baseline=baseline, item_group=group_column)
    check_labels(requests, group_by, inputs)
    check_items(engine, inputs, requests)
    check_history(engine, inputs, requests)
    return Bound(engine, requests, inputs, options, recs)


def _refused(bound: Bound, diagnostics: pd.DataFrame) -> pd.DataFrame:
    """Refuses what the diagnostics say evaluate refuses; the diagnostics users see."""
    engine, inputs, options = bound.engine, bound.inputs, bound.options
    refuse_bad_rows(engine, inputs, diagnostics, bound.requests, options.ranks)
    if inputs.rating is not None:
        refuse_nan_ratings(engine, inputs, inputs.rating)
    diagnostics = diagnostics.drop(columns=list(CHECKS))
    duplicated = int(diagnostics["duplicate_recommendations"].sum())
    if duplicated and options.duplicates == "error":
        depth = repeats_depth(bound.requests, options)
        refuse_repeats(engine, inputs, duplicated, depth)
    return diagnostics


@takes(CompareOptions)
def compare(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    *,
    baseline: str,
    **options: Unpack[CompareOptions],
) -> pd.DataFrame:
    """Compares every model with ``baseline``, paired by user, where the data lives.

    The first ``group_by`` column holds the model (the others, like a segment, are compared
    within each of their values). For each model, metric (a mean over users) and group, over
    the users both the model and the baseline have a value for: ``baseline`` and ``value``
    (their means), ``difference``, ``relative_difference``, ``difference_lo``/``_hi`` (the
    ``ci`` interval of the paired difference, by ``ci_method``), ``p_t`` (paired t-test; 0
    when every difference is the same nonzero number, 1 when every one is 0),
    ``p_randomization`` (sign-flip randomization test, ``replicates`` flips of hash buckets of
    users, ``seed``), ``p_holm`` (the p-value of ``test``, "t" or "randomization", adjusted by
    Holm-Bonferroni over every row of the result) and ``significant`` (``p_holm < alpha``).
    ``users`` counts the pairs. Models evaluated on different users (population="common" or
    "judged", or interactions grouped by model) are compared on their common users, and
    ``result.attrs["notes"]`` says so. The other arguments are evaluate's.
    """
    given = filled(CompareOptions, options, "compare")
    group_by = given["group_by"] = group_list(given["group_by"])
    if not group_by:
        raise SqlmetricsError(
            "compare needs the column that names the model: group_by='model' (CLI: --group-by)"
        )
    if not isinstance(baseline, str) or not baseline:
        raise SqlmetricsError(
            f"baseline must be the name of a model (a value of {group_by[0]}), not {baseline!r}"
        )
    resampling = Resampling(given["ci"], *_resampled(given))
    notes: list[str] = []
    run = functools.partial(_compare_run, baseline, group_by[0], resampling, given, notes)
    result, diagnostics, _ = _evaluated(recommendations, interactions, metrics, run, given)
    result.attrs["diagnostics"] = Table.of(diagnostics)
    result.attrs["notes"] = notes
    result.attrs["compare"] = {
        "baseline": baseline,
        "model": group_by[0],
        "level": resampling.level,
        "method": resampling.method,
        "replicates": resampling.replicates,
        "seed": resampling.seed,
        "test": given["test"],
        "alpha": given["alpha"],
    }
    return result


def _compare_run(
    baseline: str,
    model: str,
    resampling: Resampling,
    given: CompareOptions,
    notes: list[str],
    bound: Bound,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """compare's query in the engine: the paired differences of every model with
    ``baseline`` (and the diagnostics); what it leaves out goes to ``notes``."""
    requests = bound.requests
    missing = without_interval(requests)
    if len(missing) == len(requests):
        raise SqlmetricsError(
            f"{', '.join(missing)}: compare pairs per-user values, and micro (ratio of "
            "sums), group-level and over-the-lists metrics have none; compare a metric that "
            "is a mean over users"
        )
    if missing:
        notes.append(
            f"not compared: {', '.join(missing)} (micro, group-level or over the lists: no "
            "per-user value of the population)"
        )
    frame, diagnostics = statistics_rows(
        bound.engine,
        bound.requests,
        bound.inputs,
        bound.options,
        lambda diagnosed: compose_compare(
            requests,
            bound.inputs,
            bound.options,
            resampling,
            0,
            baseline,
            bound.engine.dialect,
            diagnostics=diagnosed,
            score_floor=bound.score_floor(),
        ),
    )
    counted = frame.loc[frame[KIND].astype(str) == "users"]
    models = sorted({str(value) for value in counted[model] if value is not None})
    if baseline not in models:
        raise SqlmetricsError(
            f"baseline {baseline!r} is not among the models of {model}: "
            f"{', '.join(models) or 'none'}"
        )
    if len(models) < 2:
        raise SqlmetricsError(
            f"{model} has only the baseline {baseline!r}; there is no model to compare"
        )
    result, paired = finish_compare(
        frame, requests, bound.groups, model, baseline, resampling, given["test"], given["alpha"]
    )
    notes.extend(paired)
    return result, diagnostics, 1


__all__ = ["compare", "evaluate"]
