"""evaluate: binds the inputs in an engine (DuckDB by default, or your own connection), checks
them, runs the composed query there and returns the small result as a DataFrame."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from sqlmetrics.attrs import Table, read
from sqlmetrics.catalog.metrics import MetricRequest
from sqlmetrics.catalog.profiles import resolve
from sqlmetrics.compose.diagnostics import CHECKS, KIND
from sqlmetrics.compose.distributions import distributions_of, finish_distributions
from sqlmetrics.compose.inputs import Inputs, Options
from sqlmetrics.compose.plan import repeats_depth
from sqlmetrics.compose.query import compose_checks
from sqlmetrics.engines import connection_of, open_engine
from sqlmetrics.engines.base import SEPARATE_DIAGNOSTICS, Engine, Source, diagnostics_frame
from sqlmetrics.engines.checks import (
    check_items,
    check_labels,
    duplicate_example,
    refuse_bad_rows,
    refuse_nan_ratings,
    resolve_inputs,
)
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.io.trec_reader import TrecFile, load
from sqlmetrics.stats.inference import finish_ci, finish_compare, with_intervals
from sqlmetrics.stats.query import compose_ci, compose_compare
from sqlmetrics.stats.resampling import TESTS, Resampling, has_interval, without_interval

if TYPE_CHECKING:
    import pandas as pd


def evaluate(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    *,
    group_by: Sequence[str] | str = (),
    per_user: bool = False,
    columns: Mapping[str, str | None] | None = None,
    ties: str = "id",
    threshold: float = 0.0,
    population: str = "all",
    duplicates: str = "error",
    ranks: str = "consecutive",
    checks: str = "read",
    connection: object = None,
    dialect: str | None = None,
    timeout: float | None = None,
    progress: bool = False,
    items: object = None,
    history: object = None,
    profile: str | None = None,
    ci: float | None = None,
    ci_method: str = "t",
    replicates: int = 1000,
    seed: int = 0,
    distributions: Sequence[str] = (),
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
        columns: your column names, e.g. ``{"user": "customer_id", "score": "pred"}``.
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
            item_id), for serendipity.
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
    resampling = None if ci is None else Resampling(ci, ci_method, replicates, seed)
    if resampling is not None and per_user:
        raise SqlmetricsError("ci is an interval per group; per_user does not apply to it")

    if distributions and per_user:
        raise SqlmetricsError(
            "distributions summarise the per-user values per group; with per_user the rows "
            "are the values themselves: drop one of the two"
        )

    def run(
        engine: Engine, requests: Sequence[MetricRequest], inputs: Inputs, options: Options
    ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
        wanted = _distribution_indexes(requests, distributions)
        groups = [group.name for group in inputs.groups]
        together = (
            resampling is not None and resampling.method == "t" and engine.dialect == "duckdb"
        )
        if wanted and not together:
            spread = [requests[i] for i in wanted]
            values, _, _ = engine.evaluate(spread, inputs, options, True, recommendations=recs)
            labels = [request.label for request in spread]
            spreads = distributions_of(values, labels, groups)
        if resampling is None:
            result, diagnostics, passes = engine.evaluate(
                requests, inputs, options, per_user, recommendations=recs
            )
            if wanted:
                result.attrs["distributions"] = Table.of(spreads)
            return result, diagnostics, passes
        means = [request for request in requests if has_interval(request)]
        missing = without_interval(requests)
        if not missing:  # one query: the values, their intervals and the diagnostics
            frame, diagnostics = _statistics(
                engine,
                inputs,
                requests,
                lambda diagnosed: compose_ci(
                    requests,
                    inputs,
                    options,
                    resampling,
                    engine.dialect,
                    diagnostics=diagnosed,
                    score_floor=engine.score_floor(requests, inputs, options, recs),
                    distributions=wanted if together else (),
                ),
                options,
            )
            result, moments, unknown = finish_ci(frame, requests, groups, resampling)
            if together and wanted:
                spreads = finish_distributions(frame, requests, groups, wanted)
        else:
            # A micro or group-level metric's value is not a mean of per-user values: evaluate
            # computes every value (and the diagnostics), the statistics query the intervals.
            result, diagnostics, _ = engine.evaluate(
                requests, inputs, options, False, recommendations=recs
            )
            intervals: pd.DataFrame | None = None
            moments = None
            unknown = []
            if means:
                # the wanted requests are means: their indexes among them
                among = [means.index(requests[i]) for i in wanted] if together else []
                query = compose_ci(
                    means, inputs, options, resampling, engine.dialect, distributions=among
                )
                rows = engine._frame(query)
                intervals, moments, unknown = finish_ci(rows, means, groups, resampling)
                if among:
                    spreads = finish_distributions(rows, means, groups, among)
            result = with_intervals(result, intervals, requests, groups)
            result.attrs["notes"] = [
                f"no interval for {', '.join(missing)}: a micro (ratio of sums), group-level or "
                "over-the-lists metric has no per-user value of the population to resample "
                "(docs/METRICS.md)"
            ]
        if unknown:
            result.attrs["notes"] = [*result.attrs.get("notes", []), *unknown]
        result.attrs["moments"] = None if moments is None else Table.of(moments)
        if wanted:
            result.attrs["distributions"] = Table.of(spreads)
        return result, diagnostics, 1

    recs: Source | None = None

    def bound(source: Source) -> None:
        nonlocal recs
        recs = source

    result, diagnostics, passes = _evaluated(
        recommendations,
        interactions,
        metrics,
        run,
        bound,
        group_by=group_by,
        columns=columns,
        ties=ties,
        threshold=threshold,
        population=population,
        duplicates=duplicates,
        ranks=ranks,
        checks=checks,
        connection=connection,
        dialect=dialect,
        timeout=timeout,
        progress=progress,
        items=items,
        history=history,
        profile=profile,
    )
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


def _distribution_indexes(
    requests: Sequence[MetricRequest], labels: Sequence[str] | str
) -> list[int]:
    """The requests whose distributions evaluate's ``distributions`` asks for."""
    labels = [labels] if isinstance(labels, str) else list(labels)
    index = {request.label: i for i, request in enumerate(requests)}
    wanted = []
    for label in labels:
        if label not in index:
            raise SqlmetricsError(
                f"distributions={label!r} is not one of the metrics asked for; "
                f"choose among {', '.join(index)}"
            )
        if not has_interval(requests[index[label]]):
            raise SqlmetricsError(
                f"{label} is not a mean over users (a micro, group-level or over-the-lists "
                "metric): it has no per-user values to spread; leave it out of distributions"
            )
        wanted.append(index[label])
    return list(dict.fromkeys(wanted))


def _statistics(
    engine: Engine,
    inputs: Inputs,
    requests: Sequence[MetricRequest],
    query: Callable[[bool], exp.Query],
    options: Options,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A statistics query's rows (sqlmetrics/stats/query.py) and evaluate's diagnostics, from
    the same query where the engine takes them together."""
    separate = engine.dialect in SEPARATE_DIAGNOSTICS
    frame = engine._frame(query(not separate))
    if separate:
        counted = engine._frame(compose_checks(requests, inputs, options, engine.dialect))
    else:
        counted = frame.loc[frame[KIND].astype(str) == "diagnostics"].reset_index(drop=True)
    diagnostics = diagnostics_frame(counted, inputs)
    groups = [group.name for group in inputs.groups]
    if groups:  # the statistics query's union has no order: evaluate's, by group, NULL last
        diagnostics = diagnostics.sort_values(groups, na_position="last", kind="stable")
    return frame, diagnostics.reset_index(drop=True)


def _evaluated(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    run: Callable[
        [Engine, Sequence[MetricRequest], Inputs, Options],
        tuple[pd.DataFrame, pd.DataFrame, int],
    ],
    bound: Callable[[Source], None],
    *,
    group_by: Sequence[str] | str,
    columns: Mapping[str, str | None] | None,
    ties: str,
    threshold: float,
    population: str,
    duplicates: str,
    ranks: str,
    checks: str,
    connection: object,
    dialect: str | None,
    timeout: float | None,
    progress: bool,
    items: object,
    history: object,
    profile: str | None,
) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """Binds and checks the inputs, runs ``run`` in the engine, and refuses what the
    diagnostics say evaluate refuses: evaluate's steps, for evaluate and compare."""
    trec_files = any(isinstance(value, TrecFile) for value in (recommendations, interactions))
    resolved = resolve(
        profile,
        metrics,
        ties=ties,
        population=population,
        columns=columns,
        ranks=ranks,
        # trec_eval refuses a repeated document anywhere in a run
        checks="full" if trec_files else checks,
    )
    requests, columns = resolved.requests, resolved.columns
    options = Options(
        ties=resolved.ties,
        threshold=threshold,
        population=resolved.population,
        duplicates=duplicates,
        ranks=resolved.ranks,
        checks=resolved.checks,
    )
    group_by = [group_by] if isinstance(group_by, str) else list(group_by)
    given = {"recommendations": recommendations, "interactions": interactions}
    connection = connection_of(connection, {**given, "items": items, "history": history})
    with open_engine(connection, dialect=dialect, timeout=timeout, progress=progress) as engine:
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
        recs = engine.bind(recommendations, "recommendations")
        bound(recs)
        truth = engine.bind(interactions, "interactions")
        catalogue = None if items is None else engine.bind(items, "items")
        past = None if history is None else engine.bind(history, "history")
        rating = any(request.metric.reads == "rated" for request in requests)
        inputs = resolve_inputs(recs, truth, columns, group_by, catalogue, past, rating=rating)
        check_labels(requests, group_by, inputs)
        check_items(engine, inputs, requests)
        result, diagnostics, passes = run(engine, requests, inputs, options)
        # where the numbers come from: the engine and the dialect its SQL was written in
        result.attrs["engine"] = engine.name
        result.attrs["dialect"] = engine.dialect
        refuse_bad_rows(engine, inputs, diagnostics, requests, options.ranks)
        if inputs.rating is not None:
            refuse_nan_ratings(engine, inputs, inputs.rating)
        diagnostics = diagnostics.drop(columns=list(CHECKS))
        duplicated = int(diagnostics["duplicate_recommendations"].sum())
        if duplicated and options.duplicates == "error":
            _refuse_repeats(engine, inputs, duplicated, repeats_depth(requests, options))
    if isinstance(interactions, TrecFile) and interactions.parsed is not None:
        notes = interactions.parsed.notes(interactions.path)
        if notes:
            result.attrs["notes"] = [*result.attrs.get("notes", []), *notes]
    return result, diagnostics, passes


def _refuse_repeats(engine: Engine, inputs: Inputs, rows: int, depth: int | None) -> None:
    """The message refusing ``rows`` repeated recommendations, with an example, found among
    the first ``depth`` positions of each list (or anywhere)."""
    example = duplicate_example(engine, inputs, depth)
    where = "" if depth is None else f" among the first {depth} positions of their lists"
    shown = f"{example[:2]} appears {example[2]} times" if example else "?"
    raise SqlmetricsError(
        f"recommendations repeat a ({inputs.user.name}, {inputs.item.name}) pair in {rows} "
        f"row(s){where}, e.g. {shown}; deduplicate them, or pass duplicates='first' (CLI: "
        "--duplicates first) to keep the best-placed row"
    )


def compare(
    recommendations: object,
    interactions: object,
    metrics: Sequence[str] | str,
    *,
    baseline: str,
    group_by: Sequence[str] | str = "model",
    ci: float = 0.95,
    ci_method: str = "t",
    replicates: int = 1000,
    seed: int = 0,
    test: str = "t",
    alpha: float = 0.05,
    columns: Mapping[str, str | None] | None = None,
    ties: str = "id",
    threshold: float = 0.0,
    population: str = "all",
    duplicates: str = "error",
    ranks: str = "consecutive",
    checks: str = "read",
    connection: object = None,
    dialect: str | None = None,
    timeout: float | None = None,
    progress: bool = False,
    items: object = None,
    history: object = None,
    profile: str | None = None,
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
    group_by = [group_by] if isinstance(group_by, str) else list(group_by)
    if not group_by:
        raise SqlmetricsError(
            "compare needs the column that names the model: group_by='model' (CLI: --group-by)"
        )
    if not isinstance(baseline, str) or not baseline:
        raise SqlmetricsError(
            f"baseline must be the name of a model (a value of {group_by[0]}), not {baseline!r}"
        )
    if test not in TESTS:
        raise SqlmetricsError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise SqlmetricsError(f"alpha must be a number between 0 and 1, like 0.05, not {alpha!r}")
    resampling = Resampling(ci, ci_method, replicates, seed)
    model = group_by[0]
    notes: list[str] = []
    recs: Source | None = None

    def bound(source: Source) -> None:
        nonlocal recs
        recs = source

    def run(
        engine: Engine, requests: Sequence[MetricRequest], inputs: Inputs, options: Options
    ) -> tuple[pd.DataFrame, pd.DataFrame, int]:
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
        frame, diagnostics = _statistics(
            engine,
            inputs,
            requests,
            lambda diagnosed: compose_compare(
                requests,
                inputs,
                options,
                resampling,
                0,
                baseline,
                engine.dialect,
                diagnostics=diagnosed,
                score_floor=engine.score_floor(requests, inputs, options, recs),
            ),
            options,
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
        groups = [group.name for group in inputs.groups]
        result, paired = finish_compare(
            frame, requests, groups, model, baseline, resampling, test, alpha
        )
        notes.extend(paired)
        return result, diagnostics, 1

    result, diagnostics, _ = _evaluated(
        recommendations,
        interactions,
        metrics,
        run,
        bound,
        group_by=group_by,
        columns=columns,
        ties=ties,
        threshold=threshold,
        population=population,
        duplicates=duplicates,
        ranks=ranks,
        checks=checks,
        connection=connection,
        dialect=dialect,
        timeout=timeout,
        progress=progress,
        items=items,
        history=history,
        profile=profile,
    )
    result.attrs["diagnostics"] = Table.of(diagnostics)
    result.attrs["notes"] = notes
    result.attrs["compare"] = {
        "baseline": baseline,
        "model": model,
        "level": resampling.level,
        "method": resampling.method,
        "replicates": resampling.replicates,
        "seed": resampling.seed,
        "test": test,
        "alpha": alpha,
    }
    return result


def read_diagnostics(frame: pd.DataFrame) -> pd.DataFrame:
    """The diagnostics that ``evaluate`` (or ``compare``) attached to its result, as a DataFrame."""
    return read(frame, "diagnostics")


def read_distributions(frame: pd.DataFrame) -> pd.DataFrame:
    """The spread of the per-user values that ``evaluate(..., distributions=...)`` attached to
    its result, as a DataFrame."""
    return read(frame, "distributions")


__all__ = ["compare", "evaluate", "read_diagnostics", "read_distributions"]
