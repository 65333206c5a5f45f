"""One benchmarked tool per call, run in a child process by ``bench/run.py``.

    python bench/tools.py TOOL --recs R.parquet --truth T.parquet [--k 10] [--warmup-recs ...]

Prints one JSON object on stdout: the metric means, ``load_s`` (Parquet to the library's input
form), ``compute_s`` (everything after, ranking included), CPU seconds of that timed section, the
population size and the library's version. Before the timed call the same code runs once on a tiny
warm-up input (``warmup_s``), so one-time costs such as numba's JIT or lazy imports stay out of
the timing. Only the standard library is imported at module level: this file also runs in the
RecTools virtual environment, which has neither duckdb nor polars.

Every implementation computes the same seven numbers over the same population: users with at
least one relevant interaction (relevance > 0); such a user without recommendations scores 0.
Ranking is score descending, then item id descending (sqlmetrics' default ``ties="id"``), in
every implementation that controls its own sort (polars, pandas, RecTools' rank column).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from collections.abc import Callable
from importlib import metadata
from typing import Any

METRICS = ("ndcg", "map", "mrr", "precision", "recall", "hit_rate", "f1")
MULTI_KS = (1, 5, 10, 20, 50, 100)

Result = dict[str, Any]


def labels(k: int) -> list[str]:
    return [f"{metric}@{k}" for metric in METRICS]


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Timer:
    """Marks the end of loading; ``done()`` gives (load_s, compute_s, cpu_s)."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.cpu_start = _cpu()
        self.loaded = self.start

    def load_done(self) -> None:
        self.loaded = time.perf_counter()

    def done(self) -> dict[str, float]:
        end = time.perf_counter()
        return {
            "load_s": self.loaded - self.start,
            "compute_s": end - self.loaded,
            "total_s": end - self.start,
            "cpu_s": _cpu() - self.cpu_start,
        }


# ------------------------------------------------------------------------------------------------
# sqlmetrics: the Parquet paths straight into evaluate (DuckDB reads them in place).
# ------------------------------------------------------------------------------------------------


def run_sqlmetrics(
    recs: str, truth: str, k: int, ks: tuple[int, ...] = (), memory_limit: str | None = None
) -> Result:
    import duckdb

    import sqlmetrics

    wanted = [label for cut in (ks or (k,)) for label in labels(cut)]
    timer = Timer()  # with a memory limit the connection is made (and closed) in the timed
    # section, as evaluate makes and closes its own without one
    connection = duckdb.connect(config={"memory_limit": memory_limit}) if memory_limit else None
    frame = sqlmetrics.evaluate(recs, truth, wanted, connection=connection)
    if connection is not None:
        connection.close()
    timing = timer.done()
    row = frame.iloc[0]
    return {
        **timing,
        "metrics": {label: float(row[label]) for label in wanted},
        "users": int(row["users"]),
        "passes": int(frame.attrs.get("passes", 1)),  # > 1: split by the memory limit
        "version": _version("sqlmetrics") + f" (duckdb {_version('duckdb')})",
    }


def run_sqlmetrics_full(recs: str, truth: str, k: int) -> Result:
    """evaluate with checks="full": repeated items looked for anywhere in each list."""
    import sqlmetrics

    timer = Timer()
    frame = sqlmetrics.evaluate(recs, truth, labels(k), checks="full")
    timing = timer.done()
    row = frame.iloc[0]
    return {
        **timing,
        "metrics": {label: float(row[label]) for label in labels(k)},
        "users": int(row["users"]),
        "version": _version("sqlmetrics") + f" (duckdb {_version('duckdb')})",
    }


def run_sqlmetrics_bare(recs: str, truth: str, k: int) -> Result:
    """The metrics alone: to_sql's query (no checks, no diagnostics) on a DuckDB connection
    over the same Parquet files, the floor evaluate's checks are measured against."""
    import duckdb
    from sqlglot import exp

    import sqlmetrics

    timer = Timer()
    connection = duckdb.connect()
    for name, path in (("recommendations", recs), ("interactions", truth)):
        read = exp.select("*").from_(exp.func("read_parquet", exp.Literal.string(path)))
        view = exp.Create(this=exp.to_table(name), kind="VIEW", expression=read)
        connection.execute(view.sql("duckdb"))
    frame = connection.execute(sqlmetrics.to_sql(labels(k))).df()
    connection.close()
    timing = timer.done()
    row = frame.iloc[0]
    return {
        **timing,
        "metrics": {label: float(row[label]) for label in labels(k)},
        "users": int(row["users"]),
        "version": _version("sqlmetrics") + f" (duckdb {_version('duckdb')})",
    }


def run_sqlmetrics_multik(recs: str, truth: str, k: int) -> Result:
    return run_sqlmetrics(recs, truth, k, ks=MULTI_KS)


def run_sqlmetrics_1gb(recs: str, truth: str, k: int) -> Result:
    return run_sqlmetrics(recs, truth, k, memory_limit="1GB")


def run_sqlmetrics_gauc(recs: str, truth: str, k: int) -> Result:
    """Per-user AUC over whole lists (issue #4): no peer computes it in this form (perf.md)."""
    import sqlmetrics

    timer = Timer()
    frame = sqlmetrics.evaluate(recs, truth, ["gauc"])
    timing = timer.done()
    return {
        **timing,
        "metrics": {"gauc": float(frame["gauc"].iloc[0])},
        "users": int(frame["users"].iloc[0]),  # users with a scored row
        "single_class_users": int(sqlmetrics.read_diagnostics(frame)["single_class_users"].sum()),
        "version": _version("sqlmetrics") + f" (duckdb {_version('duckdb')})",
    }


# ------------------------------------------------------------------------------------------------
# polars: one lazy query; the top k per user by a sort within each group, ideal DCG by top_k.
# ------------------------------------------------------------------------------------------------


def polars_top_k(recs: str, k: int) -> Any:
    """user_id, item_id, pos of each user's k best rows (score descending, then item id
    descending): sorted within the user's group only, then unnested with their positions.
    (Faster here than a window rank over all rows, a global sort, or top_k_by + re-sort: see
    bench/README.md.)"""
    import polars as pl

    return (
        pl.scan_parquet(recs)
        .group_by("user_id")
        .agg(pl.col("item_id").sort_by("score", "item_id", descending=[True, True]).head(k))
        .with_columns(pl.int_ranges(1, pl.col("item_id").list.len() + 1).alias("pos"))
        .explode("item_id", "pos")
    )


def polars_query(recs: str, truth: str, k: int) -> Any:
    """The LazyFrame computing the seven means and the population size."""
    import polars as pl

    user, item, pos, rel = "user_id", "item_id", "pos", "relevance"
    relevant = pl.scan_parquet(truth).filter(pl.col(rel) > 0)
    top = polars_top_k(recs, k)
    hits = (
        top.join(relevant, on=[user, item], how="inner")
        .sort(user, pos)
        .with_columns(pl.int_range(1, pl.len() + 1).over(user).alias("nth_hit"))
        .group_by(user)
        .agg(
            (pl.col(rel) / (pl.col(pos) + 1).log(2)).sum().alias("dcg"),
            pl.len().alias("hits"),
            (pl.col("nth_hit") / pl.col(pos)).sum().alias("ap_sum"),
            (1.0 / pl.col(pos).min()).alias("rr"),
        )
    )
    ideal_gains = pl.col(rel).top_k(k).sort(descending=True).cast(pl.Float64)
    per_user = (
        relevant.group_by(user)
        .agg(
            pl.len().alias("n_rel"),
            (ideal_gains / (ideal_gains.cum_count() + 1).log(2)).sum().alias("idcg"),
        )
        .join(hits, on=user, how="left")
        .with_columns(pl.col("dcg", "hits", "ap_sum", "rr").fill_null(0))
    )
    n_rel, n_hits = pl.col("n_rel"), pl.col("hits")
    return per_user.select(
        (pl.col("dcg") / pl.col("idcg")).mean().alias(f"ndcg@{k}"),
        (pl.col("ap_sum") / n_rel).mean().alias(f"map@{k}"),
        pl.col("rr").mean().alias(f"mrr@{k}"),
        (n_hits / k).mean().alias(f"precision@{k}"),
        (n_hits / n_rel).mean().alias(f"recall@{k}"),
        (n_hits > 0).cast(pl.Float64).mean().alias(f"hit_rate@{k}"),
        (2 * n_hits / (k + n_rel)).mean().alias(f"f1@{k}"),
        pl.len().alias("users"),
    )


def run_polars(recs: str, truth: str, k: int) -> Result:
    timer = Timer()
    query = polars_query(recs, truth, k)  # lazy: scanning is part of collect
    timer.load_done()
    row = query.collect().row(0, named=True)
    timing = timer.done()
    return {
        **timing,
        "metrics": {label: float(row[label]) for label in labels(k)},
        "users": int(row["users"]),
        "version": _version("polars"),
    }


# ------------------------------------------------------------------------------------------------
# pandas: read_parquet, sort_values + groupby().cumcount() for positions, merge, groupby sums.
# ------------------------------------------------------------------------------------------------


def top_k_frame(recs: Any, k: int, pos: str = "pos") -> Any:
    """user_id, item_id and the 1-based position of each user's k best rows (score descending,
    then item id descending): one two-key sort, then groupby().head(k). (Faster than sorting by
    user, score and item and numbering every row: see bench/README.md.)"""
    ordered = recs.sort_values(["score", "item_id"], ascending=[False, False])
    top = ordered.groupby("user_id", sort=False).head(k)[["user_id", "item_id"]]
    return top.assign(**{pos: top.groupby("user_id", sort=False).cumcount() + 1})


def pandas_per_user(recs: Any, truth: Any, k: int) -> Any:
    """Per population user: n_rel, idcg, dcg, hits, ap_sum, rr (pandas DataFrames in and out)."""
    import numpy as np
    import pandas as pd

    relevant = truth[truth["relevance"] > 0]
    top = top_k_frame(recs, k)
    hits = top.merge(relevant, on=["user_id", "item_id"])
    hits = hits.sort_values(["user_id", "pos"])
    hits["nth_hit"] = hits.groupby("user_id", sort=False).cumcount() + 1
    hits["gain"] = hits["relevance"] / np.log2(hits["pos"] + 1)
    hits["precision_at_hit"] = hits["nth_hit"] / hits["pos"]
    per_hit_user = hits.groupby("user_id").agg(
        dcg=("gain", "sum"),
        hits=("pos", "size"),
        ap_sum=("precision_at_hit", "sum"),
        first=("pos", "min"),
    )
    ideal = relevant.sort_values(["user_id", "relevance"], ascending=[True, False])
    ideal_pos = ideal.groupby("user_id", sort=False).cumcount() + 1
    ideal_gain = (ideal["relevance"] / np.log2(ideal_pos + 1)).where(ideal_pos <= k, 0.0)
    per_user = pd.DataFrame(
        {
            "n_rel": relevant.groupby("user_id").size(),
            "idcg": ideal_gain.groupby(ideal["user_id"]).sum(),
        }
    ).join(per_hit_user)
    per_user["rr"] = 1.0 / per_user["first"]
    return per_user.fillna(0.0)


def _means_from_per_user(per_user: Any, k: int) -> dict[str, float]:
    hits, n_rel = per_user["hits"], per_user["n_rel"]
    return {
        f"ndcg@{k}": float((per_user["dcg"] / per_user["idcg"]).mean()),
        f"map@{k}": float((per_user["ap_sum"] / n_rel).mean()),
        f"mrr@{k}": float(per_user["rr"].mean()),
        f"precision@{k}": float((hits / k).mean()),
        f"recall@{k}": float((hits / n_rel).mean()),
        f"hit_rate@{k}": float((hits > 0).mean()),
        f"f1@{k}": float((2 * hits / (k + n_rel)).mean()),
    }


def run_pandas(recs: str, truth: str, k: int) -> Result:
    import pandas as pd

    timer = Timer()
    recs_frame = pd.read_parquet(recs)
    truth_frame = pd.read_parquet(truth)
    timer.load_done()
    per_user = pandas_per_user(recs_frame, truth_frame, k)
    means = _means_from_per_user(per_user, k)
    timing = timer.done()
    return {**timing, "metrics": means, "users": len(per_user), "version": _version("pandas")}


# ------------------------------------------------------------------------------------------------
# pytrec_eval and ranx: dict-of-dicts of str ids, built from pyarrow columns.
# ------------------------------------------------------------------------------------------------


def _nested_dicts(path: str, value: str, cast: Callable[[Any], Any]) -> dict[str, dict[str, Any]]:
    """{str(user_id): {str(item_id): value}} from a Parquet file, in one pass over its rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["user_id", "item_id", value])
    users = table.column("user_id").cast(pa.string()).to_pylist()
    items = table.column("item_id").cast(pa.string()).to_pylist()
    values = table.column(value).to_pylist()
    nested: dict[str, dict[str, Any]] = {}
    for user, item, x in zip(users, items, values, strict=True):
        inner = nested.get(user)
        if inner is None:
            inner = nested[user] = {}
        inner[item] = cast(x)
    return nested


def _relevant_qrels(truth: str) -> dict[str, dict[str, int]]:
    qrels = _nested_dicts(truth, "relevance", int)
    return {
        u: kept for u, items in qrels.items() if (kept := {i: r for i, r in items.items() if r > 0})
    }


def run_pytrec_eval(recs: str, truth: str, k: int) -> Result:
    import pytrec_eval

    timer = Timer()
    qrels = _relevant_qrels(truth)
    run = _nested_dicts(recs, "score", float)
    timer.load_done()
    measures = {f"ndcg_cut.{k}", f"map_cut.{k}", "recip_rank", f"P.{k}", f"recall.{k}"}
    measures.add(f"success.{k}")
    results = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    sums = dict.fromkeys(labels(k), 0.0)
    for user in qrels:  # trec_eval -c: users of the qrels missing from the run score 0
        scores = results.get(user)
        if scores is None:
            continue
        precision, recall = scores[f"P_{k}"], scores[f"recall_{k}"]
        rr = scores["recip_rank"]  # not cut at k in trec_eval: 1/rank of the first hit
        sums[f"ndcg@{k}"] += scores[f"ndcg_cut_{k}"]
        sums[f"map@{k}"] += scores[f"map_cut_{k}"]
        sums[f"mrr@{k}"] += rr if rr * k >= 1 - 1e-9 else 0.0
        sums[f"precision@{k}"] += precision
        sums[f"recall@{k}"] += recall
        sums[f"hit_rate@{k}"] += scores[f"success_{k}"]
        if precision + recall > 0:
            sums[f"f1@{k}"] += 2 * precision * recall / (precision + recall)
    means = {label: total / len(qrels) for label, total in sums.items()}
    timing = timer.done()
    return {
        **timing,
        "metrics": means,
        "users": len(qrels),
        "version": _version("pytrec_eval-terrier"),
    }


def run_ranx(recs: str, truth: str, k: int) -> Result:
    from ranx import Qrels, Run, evaluate

    timer = Timer()
    qrels = Qrels(_relevant_qrels(truth))
    run = Run(_nested_dicts(recs, "score", float))
    timer.load_done()
    names = {
        "ndcg": "ndcg",
        "map": "map",
        "mrr": "mrr",
        "precision": "precision",
        "recall": "recall",
        "hit_rate": "hit_rate",
        "f1": "f1",
    }
    wanted = {f"{ranx_name}@{k}": f"{ours}@{k}" for ours, ranx_name in names.items()}
    scores = evaluate(qrels, run, list(wanted), make_comparable=True)
    means = {ours: float(scores[theirs]) for theirs, ours in wanted.items()}
    timing = timer.done()
    return {**timing, "metrics": means, "users": len(qrels.keys()), "version": _version("ranx")}


# ------------------------------------------------------------------------------------------------
# RecTools (own virtual environment): its reco frame needs a rank column, made with pandas.
# ------------------------------------------------------------------------------------------------


def run_rectools(recs: str, truth: str, k: int) -> Result:
    import pandas as pd
    from rectools.metrics import MAP, MRR, NDCG, F1Beta, HitRate, Precision, Recall, calc_metrics

    timer = Timer()
    recs_frame = pd.read_parquet(recs)
    truth_frame = pd.read_parquet(truth)
    timer.load_done()
    reco = top_k_frame(recs_frame, k, pos="rank")  # RecTools wants the rank; pandas makes it
    interactions = truth_frame.loc[truth_frame["relevance"] > 0, ["user_id", "item_id"]]
    metrics = {
        # Binary gain: RecTools' NDCG ignores graded relevance (a definition difference).
        f"ndcg@{k}": NDCG(k=k, divide_by_achievable=True),
        f"map@{k}": MAP(k=k),
        f"mrr@{k}": MRR(k=k),
        f"precision@{k}": Precision(k=k),
        f"recall@{k}": Recall(k=k),
        f"hit_rate@{k}": HitRate(k=k),
        f"f1@{k}": F1Beta(k=k),
    }
    values = calc_metrics(metrics, reco, interactions)
    timing = timer.done()
    return {
        **timing,
        "metrics": {label: float(values[label]) for label in labels(k)},
        "users": int(interactions["user_id"].nunique()),
        "version": _version("rectools") + f" (pandas {_version('pandas')})",
    }


TOOLS: dict[str, Callable[[str, str, int], Result]] = {
    "sqlmetrics": run_sqlmetrics,
    "sqlmetrics_multik": run_sqlmetrics_multik,
    "sqlmetrics_1gb": run_sqlmetrics_1gb,
    "sqlmetrics_gauc": run_sqlmetrics_gauc,
    "sqlmetrics_bare": run_sqlmetrics_bare,
    "sqlmetrics_full": run_sqlmetrics_full,
    "polars": run_polars,
    "pandas": run_pandas,
    "pytrec_eval": run_pytrec_eval,
    "ranx": run_ranx,
    "rectools": run_rectools,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run one benchmarked tool; JSON on stdout.")
    parser.add_argument("tool", choices=sorted(TOOLS))
    parser.add_argument("--recs", required=True)
    parser.add_argument("--truth", required=True)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--warmup-recs")
    parser.add_argument("--warmup-truth")
    args = parser.parse_args(argv)
    function = TOOLS[args.tool]
    out: Result = {"tool": args.tool}
    try:
        if args.warmup_recs and args.warmup_truth:
            start = time.perf_counter()
            function(args.warmup_recs, args.warmup_truth, args.k)
            out["warmup_s"] = time.perf_counter() - start
        out.update(function(args.recs, args.truth, args.k))
    except MemoryError:
        out["error"] = "MemoryError"
    except Exception as error:  # reported to the parent, which prints it in the table
        text = str(error).strip().splitlines()
        out["error"] = f"{type(error).__name__}: {text[0] if text else ''}"[:500]
    bad = [name for name, x in out.get("metrics", {}).items() if not math.isfinite(x)]
    if bad:
        out["error"] = f"non-finite values for {', '.join(bad)}"
    print(json.dumps(out), flush=True)
    return 1 if "error" in out else 0


if __name__ == "__main__":
    sys.exit(main())
