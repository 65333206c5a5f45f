"""evaluate: binds the inputs in an engine (DuckDB by default, or your own connection), checks
them, runs the composed query there and returns the small result as a DataFrame."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from sqlmetrics.checks import (
    check_items,
    check_labels,
    duplicate_example,
    refuse_bad_rows,
    refuse_nan_ratings,
    resolve_inputs,
)
from sqlmetrics.compose import CHECKS, Options
from sqlmetrics.engines import open_engine
from sqlmetrics.errors import SqlmetricsError
from sqlmetrics.profiles import resolve
from sqlmetrics.trec import TrecFile

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
    connection: object = None,
    dialect: str | None = None,
    timeout: float | None = None,
    progress: bool = False,
    items: object = None,
    history: object = None,
    profile: str | None = None,
) -> pd.DataFrame:
    """Evaluates recommendations against interactions where they live: on DuckDB, or in your
    engine through ``connection``.

    Args:
        recommendations: Parquet/CSV path, glob or folder, a TREC run (``read_run``),
            DataFrame, Arrow table, a table name in ``connection``, a ``sqlmetrics.Query`` (a
            SELECT of yours, in the engine's dialect) or, on Spark, a Spark DataFrame. Columns
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
        population: "all" users with a relevant interaction, or "common" (also recommended).
        duplicates: "error" on repeated (user, item) recommendations, or "first" to keep the
            best-placed one.
        connection: where the query runs: a DuckDB connection, a SQLAlchemy Engine or
            Connection (the dialect comes from it), a PEP 249 (DB-API) connection (with
            ``dialect=``) or a SparkSession. Only the result leaves the engine; nothing is
            written there (Spark DataFrames become temporary views, dropped afterwards).
        dialect: the sqlglot dialect of a DB-API connection (e.g. "postgres", "snowflake"),
            or of a SQLAlchemy engine whose dialect sqlmetrics does not know.
        timeout: cancel the query on the engine after this many seconds.
        progress: show the engine's progress bar (DuckDB's, or Spark's stages).
        items: optional, in any of the same forms: one row per item (item_id, and category
            for ild). When given it is the catalogue of coverage and gini.
        history: optional, in any of the same forms: what each user consumed before (user_id,
            item_id), for serendipity.
        profile: compute each metric as one library defines it ("trec_eval", "ranx",
            "sklearn", "spark", ...; see docs/profiles.md): the profile picks the metric
            variant and sets ties, population and how relevance is read.

    Returns:
        A DataFrame: the group columns, ``users``, and one column per metric named as requested.
        ``users`` counts the population; under a profile that averages some metrics over fewer
        users (MS Recommenders, LensKit: docs/profiles.md), it counts the widest of them.
        ``result.attrs["diagnostics"]`` holds the counts of METRICS.md "Results" per group;
        ``result.attrs["passes"]`` is 1, or how many passes over the users DuckDB's memory
        limit required (the numbers are the same either way).
    """
    resolved = resolve(profile, metrics, ties=ties, population=population, columns=columns)
    requests, columns = resolved.requests, resolved.columns
    options = Options(
        ties=resolved.ties,
        threshold=threshold,
        population=resolved.population,
        duplicates=duplicates,
    )
    group_by = [group_by] if isinstance(group_by, str) else list(group_by)
    with open_engine(connection, dialect=dialect, timeout=timeout, progress=progress) as engine:
        if engine.name != "duckdb" and any(
            isinstance(value, TrecFile) for value in (recommendations, interactions)
        ):
            raise SqlmetricsError(
                f"TREC files are read by DuckDB, not {engine.name}: drop connection=, or load "
                "the run and qrels into tables of your database first"
            )
        recs = engine.bind(recommendations, "recommendations")
        truth = engine.bind(interactions, "interactions")
        catalogue = None if items is None else engine.bind(items, "items")
        past = None if history is None else engine.bind(history, "history")
        rating = any(request.metric.reads == "rated" for request in requests)
        inputs = resolve_inputs(recs, truth, columns, group_by, catalogue, past, rating=rating)
        check_labels(requests, group_by, inputs)
        check_items(engine, inputs, requests)
        result, diagnostics, passes = engine.evaluate(
            requests, inputs, options, per_user, recommendations=recs
        )
        refuse_bad_rows(engine, inputs, diagnostics, requests)
        if inputs.rating is not None:
            refuse_nan_ratings(engine, inputs, inputs.rating)
        diagnostics = diagnostics.drop(columns=list(CHECKS))
        duplicated = int(diagnostics["duplicate_recommendations"].sum())
        if duplicated and options.duplicates == "error":
            example = duplicate_example(engine, inputs)
            raise SqlmetricsError(
                f"recommendations repeat a ({inputs.user.name}, {inputs.item.name}) pair in "
                f"{duplicated} row(s), e.g. "
                f"{example[:2] if example else '?'} appears "
                f"{example[2] if example else 'several'} times; deduplicate them, or pass "
                "duplicates='first' (CLI: --duplicates first) to keep the best-placed row"
            )
    result.attrs["diagnostics"] = diagnostics
    result.attrs["passes"] = passes  # > 1 when the memory limit made it split the users
    return result


def read_diagnostics(frame: pd.DataFrame) -> pd.DataFrame:
    """The diagnostics that ``evaluate`` attached to its result."""
    value = frame.attrs.get("diagnostics")
    if value is None:
        raise SqlmetricsError(
            "this DataFrame carries no diagnostics; it did not come from evaluate"
        )
    return value  # type: ignore[no-any-return]


__all__ = ["evaluate", "read_diagnostics"]
