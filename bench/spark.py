"""sqlmetrics on Spark against Spark MLlib's RankingEvaluator (issue 18), one local session.

    python bench/spark.py --rows 1e6 1e7 --rounds 3

On bench's Parquet files (bench/generate.py; generated if missing) and one SparkSession
(``local[2]``, no UI, driver on loopback), each round times, in alternating order:

- **sqlmetrics 7**: ``sqlmetrics.evaluate(spark.read.parquet(recs), spark.read.parquet(truth),
  SEVEN, connection=spark, columns={"relevance": None})``: the seven metrics at k = 10 with
  Spark's definitions (see ``SEVEN``: profile="spark" itself refuses mrr, hit_rate and f1);
- **sqlmetrics 4 (profile)**: ``evaluate(..., ["ndcg@10", "map@10", "precision@10",
  "recall@10"], connection=spark, profile="spark")``: the four Spark has;
- **RankingEvaluator 4**: each user's top 10 by score (then item id) collected into an ordered
  array, the relevant items into a label array, joined (users with a relevant item; no
  recommendations: an empty list), persisted, then ``RankingEvaluator`` for
  meanAveragePrecisionAtK, precisionAtK, ndcgAtK and recallAtK; the collection is in its time.

Wall seconds, CPU seconds of the driver (this Python process) plus the JVM (from
/proc/<jvm pid>/stat), medians over rounds, the ratio RankingEvaluator / sqlmetrics 7, the load
average. Nothing is cached across runs (clearCache, unpersist). The numbers must agree to 1e-9
where the definitions agree, also with sqlmetrics on DuckDB (untimed). Then Spark's plan for the
query (``--plan``, default on): ``to_sql(..., dialect="spark")`` run on temporary views, its
formatted plan written to bench/results/spark_plan_<rows>.txt, Exchange nodes and stages counted,
and the jobs/stages of one ``evaluate`` call. Results: bench/results/spark_<rows>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
# bench/profile.py would shadow the standard library's profile, which pyspark imports (cProfile):
# bench/ leaves sys.path, and generate.py is loaded from its file.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
_spec = importlib.util.spec_from_file_location("bench_generate", BENCH / "generate.py")
assert _spec is not None and _spec.loader is not None
_generate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_generate)
data_dir, generate, parse_rows, rows_label = (
    _generate.data_dir,
    _generate.generate,
    _generate.parse_rows,
    _generate.rows_label,
)

RESULTS = BENCH / "results"
K = 10
# Spark's definitions (profile="spark": relevance every_row, map@k = map_min@k) for the seven
# names; profile="spark" refuses mrr, hit_rate and f1 (Spark has none), so the seven-metric call
# spells the profile out: the same SQL for the four, which the checks below hold to 1e-9.
SEVEN = [f"{m}@{K}" for m in ("ndcg", "map_min", "mrr", "precision", "recall", "hit_rate", "f1")]
PROFILE_FOUR = [f"{m}@{K}" for m in ("ndcg", "map", "precision", "recall")]
SPARK_NAMES = {  # RankingEvaluator metricName -> sqlmetrics column of the seven-metric call
    "meanAveragePrecisionAtK": f"map_min@{K}",
    "precisionAtK": f"precision@{K}",
    "ndcgAtK": f"ndcg@{K}",
    "recallAtK": f"recall@{K}",
}
PROFILE_NAMES = {f"map@{K}": f"map_min@{K}"}  # profile column -> seven-metric column
EVERY_K = [f"{m}@{k}" for m in ("ndcg", "map_min", "mrr", "precision", "recall", "hit_rate", "f1")
           for k in range(1, 101)]  # fmt: skip
TOOLS = (
    "sqlmetrics7",
    "bare7",
    "sqlmetrics4_profile",
    "ranking_evaluator",
    "recommenders",
    "sqlmetrics7_every_k",
    "top_k_window",
    "hit_positions",
)
DEFAULT_TOOLS = ("sqlmetrics7", "sqlmetrics4_profile", "ranking_evaluator")
LABELS = {
    "sqlmetrics7": "sqlmetrics, 7 metrics",
    "bare7": "to_sql's query alone, 7",
    "sqlmetrics4_profile": "sqlmetrics, 4 (profile=spark)",
    "ranking_evaluator": "RankingEvaluator, 4",
    "recommenders": "MS Recommenders Spark, 4",
    "sqlmetrics7_every_k": "sqlmetrics, 7 at k = 1..100",
    "top_k_window": "top 10 per user alone (window)",
    "hit_positions": "hit positions counted (no sort)",
}
# The two ranking plans alone (issue 18: can any plan rank in less than RankingEvaluator's
# half?): each user's top K by a window (what sqlmetrics and RankingEvaluator both do), and
# each relevant recommended item's position counted as 1 + the user's items ranked above it
# (hits are few; no sort), both summarised as the hits within K and the sum of 1 / position.
TOP_K_WINDOW = f"""
SELECT COUNT(*) AS hits, SUM(1.0D / pos) AS reciprocal_ranks
FROM (
  SELECT user_id, item_id,
    ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos
  FROM recs
) AS ranked
INNER JOIN (SELECT DISTINCT user_id, item_id FROM truth WHERE relevance > 0) AS relevant
  USING (user_id, item_id)
WHERE pos <= {K}
"""
HIT_POSITIONS = f"""
WITH hit AS (
  SELECT /*+ BROADCAST(relevant) */ recs.user_id, recs.item_id, recs.score
  FROM recs
  INNER JOIN (SELECT DISTINCT user_id, item_id FROM truth WHERE relevance > 0) AS relevant
    ON recs.user_id = relevant.user_id AND recs.item_id = relevant.item_id
),
positioned AS (
  SELECT /*+ BROADCAST(hit) */ hit.user_id, hit.item_id,
    1 + COUNT_IF(listed.score > hit.score
      OR (listed.score = hit.score AND listed.item_id > hit.item_id)) AS pos
  FROM hit INNER JOIN recs AS listed ON hit.user_id = listed.user_id
  GROUP BY hit.user_id, hit.item_id
)
SELECT COUNT(*) AS hits, SUM(1.0D / pos) AS reciprocal_ranks FROM positioned WHERE pos <= {K}
"""
# MS Recommenders pins old numpy/pandas: it lives in its own venv (same pyspark 4.3), and its
# pure-Python spark_evaluation module is imported from there, after this venv's packages.
RECOMMENDERS_VENV = BENCH / ".venv-recommenders"


def session(partitions: int, memory: str) -> Any:
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("sqlmetrics-bench")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", memory)
        .config("spark.sql.shuffle.partitions", str(partitions))
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


class Cpu:
    """CPU seconds of this process (all threads) plus the JVM's (utime + stime)."""

    def __init__(self, spark: Any) -> None:
        self.pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
        self.tick = os.sysconf("SC_CLK_TCK")

    def jvm(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.tick  # fields 14 and 15 of stat

    def now(self) -> tuple[float, float]:
        return time.process_time(), self.jvm()


def run_sqlmetrics(spark: Any, recs: str, truth: str, profile: bool) -> dict[str, float]:
    import sqlmetrics

    if profile:
        frame = sqlmetrics.evaluate(
            spark.read.parquet(recs),
            spark.read.parquet(truth),
            PROFILE_FOUR,
            connection=spark,
            profile="spark",
        )
    else:
        frame = sqlmetrics.evaluate(
            spark.read.parquet(recs),
            spark.read.parquet(truth),
            SEVEN,
            connection=spark,
            columns={"relevance": None},
        )
    row = frame.iloc[0]
    return {str(c): float(row[c]) for c in frame.columns if "@" in str(c)}


def lists(spark: Any, recs: str, truth: str) -> Any:
    """(prediction, label) arrays of double per user with a relevant item: the top K by score
    descending then item id descending (sqlmetrics' ties='id'), in rank order."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    ranked = Window.partitionBy("user_id").orderBy(F.desc("score"), F.desc("item_id"))
    top = (
        spark.read.parquet(recs)
        .withColumn("pos", F.row_number().over(ranked))
        .where(F.col("pos") <= K)
        .groupBy("user_id")
        .agg(F.sort_array(F.collect_list(F.struct("pos", "item_id"))).alias("top"))
        .select("user_id", F.expr("transform(top, t -> cast(t.item_id as double))").alias("p"))
    )
    labels = (
        spark.read.parquet(truth)
        .where(F.col("relevance") > 0)
        .groupBy("user_id")
        .agg(F.collect_set(F.col("item_id").cast("double")).alias("label"))
    )
    return labels.join(top, "user_id", "left").select(
        F.coalesce("p", F.expr("cast(array() as array<double>)")).alias("prediction"), "label"
    )


def run_sqlmetrics_every_k(spark: Any, recs: str, truth: str) -> dict[str, float]:
    """The seven metrics at every k from 1 to 100 in one call (issue 21's Spark target: at most
    2x one cutoff); the k = 10 columns are checked against the seven-metric call."""
    import sqlmetrics

    frame = sqlmetrics.evaluate(
        spark.read.parquet(recs),
        spark.read.parquet(truth),
        EVERY_K,
        connection=spark,
        columns={"relevance": None},
    )
    return {name: float(frame.iloc[0][name]) for name in SEVEN}


def run_bare(spark: Any, recs: str, truth: str) -> dict[str, float]:
    """The bare query of ``to_sql`` for the seven metrics (no checks, no diagnostics) on
    temporary views of the two files: what the metrics alone cost."""
    import sqlmetrics

    sql = sqlmetrics.to_sql(SEVEN, "recs", "truth", dialect="spark", columns={"relevance": None})
    spark.read.parquet(recs).createOrReplaceTempView("recs")
    spark.read.parquet(truth).createOrReplaceTempView("truth")
    row = spark.sql(sql).collect()[0].asDict()
    return {str(c): float(v) for c, v in row.items() if "@" in str(c)}


def run_ranking_plan(spark: Any, recs: str, truth: str, sql: str) -> dict[str, float]:
    spark.read.parquet(recs).createOrReplaceTempView("recs")
    spark.read.parquet(truth).createOrReplaceTempView("truth")
    row = spark.sql(sql).collect()[0]
    return {"hits": float(row["hits"]), "reciprocal_ranks": float(row["reciprocal_ranks"])}


def run_ranking_evaluator(spark: Any, recs: str, truth: str) -> dict[str, float]:
    from pyspark.ml.evaluation import RankingEvaluator

    data = lists(spark, recs, truth).persist()
    try:
        return {
            name: float(RankingEvaluator(metricName=name, k=K).evaluate(data))
            for name in SPARK_NAMES
        }
    finally:
        data.unpersist(blocking=True)


def run_recommenders(spark: Any, recs: str, truth: str) -> dict[str, float]:
    """MS Recommenders' SparkRankingEvaluation (relevancy_method='top_k'): its own top-k
    (row_number over score descending only: equal scores in arbitrary order), collect_list,
    an inner join with the ground truth's lists (users in both: population 'common'), then
    pyspark.mllib RankingMetrics, one Spark job per metric."""
    if not any("venv-recommenders" in p for p in sys.path):
        sys.path.extend(str(p) for p in RECOMMENDERS_VENV.glob("lib/python3*/site-packages"))
    from recommenders.evaluation.spark_evaluation import SparkRankingEvaluation

    evaluation = SparkRankingEvaluation(
        spark.read.parquet(truth).where("relevance > 0"),
        spark.read.parquet(recs),
        k=K,
        col_user="user_id",
        col_item="item_id",
        col_rating="relevance",
        col_prediction="score",
    )
    return {
        "meanAveragePrecisionAtK": float(evaluation.map_at_k()),
        "precisionAtK": float(evaluation.precision_at_k()),
        "ndcgAtK": float(evaluation.ndcg_at_k()),
        "recallAtK": float(evaluation.recall_at_k()),
    }


def measure(spark: Any, cpu: Cpu, work: Callable[[], dict[str, float]]) -> dict[str, Any]:
    spark.catalog.clearCache()
    spark.sparkContext._jvm.java.lang.System.gc()
    load = os.getloadavg()[0]
    py0, jvm0 = cpu.now()
    start = time.perf_counter()
    values = work()
    wall = time.perf_counter() - start
    py1, jvm1 = cpu.now()
    return {
        "wall_s": wall,
        "cpu_s": (py1 - py0) + (jvm1 - jvm0),
        "jvm_cpu_s": jvm1 - jvm0,
        "driver_cpu_s": py1 - py0,
        "load1": load,
        "values": values,
    }


def jobs_between(spark: Any, work: Callable[[], object]) -> tuple[int, int, int]:
    """(jobs, stages, stages skipped) Spark ran for ``work``: job ids are sequential, so two
    marker jobs before and after bound them."""
    sc = spark.sparkContext
    tracker = sc.statusTracker()

    def marker(tag: str) -> int:
        sc.setJobGroup(tag, tag)
        sc.parallelize([1], 1).count()
        sc.setLocalProperty("spark.jobGroup.id", None)
        return max(tracker.getJobIdsForGroup(tag))

    first = marker(f"before-{time.monotonic_ns()}")
    work()
    last = marker(f"after-{time.monotonic_ns()}")
    stages = skipped = 0
    for job_id in range(first + 1, last):
        job = tracker.getJobInfo(job_id)
        for stage_id in job.stageIds if job else ():
            info = tracker.getStageInfo(stage_id)
            if info is None or info.numTasks == 0 or info.numActiveTasks < 0:
                continue
            stages += 1
            if info.numCompletedTasks == 0:
                skipped += 1
    return last - first - 1, stages, skipped


def plan(spark: Any, recs: str, truth: str, label: str) -> dict[str, Any]:
    """Spark's plans: for ``to_sql``'s query (the metrics alone) on temporary views ``recs``
    and ``truth``, and for the query ``evaluate`` runs (metrics and diagnostics in one), caught
    on its way to Spark. Each: Exchange nodes, scans, windows, joins, and the jobs and stages
    (run / skipped: with AQE each shuffle stage is a job, later jobs list it as skipped)."""
    import sqlmetrics
    from sqlmetrics.engines import spark as spark_engine

    sql = sqlmetrics.to_sql(SEVEN, "recs", "truth", dialect="spark", columns={"relevance": None})
    spark.read.parquet(recs).createOrReplaceTempView("recs")
    spark.read.parquet(truth).createOrReplaceTempView("truth")
    frame = spark.sql(sql)
    before = _explain(frame)
    start = time.perf_counter()
    jobs, stages, skipped = jobs_between(spark, frame.collect)
    query_s = time.perf_counter() - start
    final = _explain(frame)  # AQE's final plan once executed

    caught: dict[str, str] = {}
    fetch = spark_engine.SparkEngine.fetch

    def catching(self: Any, text: str) -> Any:
        caught.setdefault("sql", text)
        # planned under the settings the engine runs its query with
        settings = self._set(spark_engine._QUERY_SETTINGS)
        try:
            caught.setdefault("plan", _explain(self.spark.sql(text)))
        finally:
            self._set(settings)
        return fetch(self, text)

    spark_engine.SparkEngine.fetch = catching  # type: ignore[method-assign]
    start = time.perf_counter()
    try:
        evaluate_jobs = jobs_between(
            spark, lambda: run_sqlmetrics(spark, recs, truth, profile=False)
        )
    finally:
        spark_engine.SparkEngine.fetch = fetch  # type: ignore[method-assign]
    evaluate_s = time.perf_counter() - start
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"spark_plan_{label}.txt"
    path.write_text(
        f"-- sqlmetrics.to_sql({SEVEN}, 'recs', 'truth', dialect='spark', "
        "columns={'relevance': None})\n"
        f"{sql}\n\n-- explain('formatted'), before execution\n{before}\n\n"
        f"-- after execution (AQE final plan)\n{final}\n\n"
        f"-- the query evaluate() runs (metrics and diagnostics)\n{caught.get('sql')}\n\n"
        f"-- its explain('formatted')\n{caught.get('plan')}\n"
    )
    return {
        "plan_file": str(path.relative_to(BENCH.parent)),
        "to_sql": {
            **counts(before),
            "sql_chars": len(sql),
            "wall_s": query_s,
            "jobs": jobs,
            "stages": stages,
            "stages_skipped": skipped,
            "final_plan": counts(final),
        },
        "evaluate": {
            **counts(caught.get("plan", "")),
            "sql_chars": len(caught.get("sql", "")),
            "wall_s": evaluate_s,
            "jobs": evaluate_jobs[0],
            "stages": evaluate_jobs[1],
            "stages_skipped": evaluate_jobs[2],
        },
    }


WHOLE_LIST_COUNTS = """    SELECT
      user_id AS user_id,
      item_id AS item_id,
      ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos,
      score AS score,
      COUNT(*) OVER (PARTITION BY user_id) AS list_length,
      COUNT(score) OVER (PARTITION BY user_id) AS scored_length,
      COUNT(item_id) OVER (PARTITION BY user_id) AS named_length
    FROM input_recommendations
  ) AS _t"""
GROUPED_COUNTS = """    SELECT w.user_id, w.item_id, w.pos, w.score,
      l.list_length, l.scored_length, l.named_length
    FROM (
      SELECT user_id, item_id, score,
        ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY score DESC, item_id DESC) AS pos
      FROM input_recommendations) AS w
    JOIN (SELECT user_id, COUNT(*) AS list_length, COUNT(score) AS scored_length,
        COUNT(item_id) AS named_length
      FROM input_recommendations GROUP BY user_id) AS l ON w.user_id = l.user_id
  ) AS _t"""


def ab_lengths(
    spark: Any, recs: str, truth: str, label: str, rounds: int, settings: bool = False
) -> None:
    """evaluate's query as it is against the same query with ranked's whole-list window counts
    (list_length, scored_length, named_length) taken from a GROUP BY user_id instead: the
    remedy docs/benchmark.md recommends, measured without changing sqlmetrics. ``settings``
    (--ab-settings): each also without the session settings the Spark engine runs its query
    with (``_QUERY_SETTINGS``), so four variants; wall and CPU seconds, medians."""
    import sqlglot

    import sqlmetrics
    from sqlmetrics.engines import spark as spark_engine

    caught: list[str] = []
    fetch = spark_engine.SparkEngine.fetch

    def catching(self: Any, text: str) -> Any:
        caught.append(text)
        return fetch(self, text)

    spark_engine.SparkEngine.fetch = catching  # type: ignore[method-assign]
    try:
        sqlmetrics.evaluate(
            spark.read.parquet(recs),
            spark.read.parquet(truth),
            SEVEN,
            connection=spark,
            columns={"relevance": None},
        )
    finally:
        spark_engine.SparkEngine.fetch = fetch  # type: ignore[method-assign]
    sql = sqlglot.transpile(caught[0], read="spark", write="spark", pretty=True)[0]
    if WHOLE_LIST_COUNTS not in sql:
        raise SystemExit("--ab-lengths: ranked's window counts are not in evaluate's query")
    edited = sql.replace(WHOLE_LIST_COUNTS, GROUPED_COUNTS)
    views = re.findall(r"\bsqlmetrics_(?:recommendations|interactions)_\w+", sql)
    for view in dict.fromkeys(views):
        path = recs if "_recommendations_" in view else truth
        spark.read.parquet(path).createOrReplaceTempView(view)
    conf = spark_engine._QUERY_SETTINGS
    variants: list[tuple[str, str, dict[str, str]]] = [
        ("as is", sql, dict(conf)),
        ("grouped", edited, dict(conf)),
    ]
    if settings:
        variants = [
            (f"{name} {'with' if on else 'without'} settings", text, conf if on else {})
            for name, text, conf in variants
            for on in (True, False)
        ]

    @contextlib.contextmanager
    def applied(settings: dict[str, str]) -> Any:
        previous = {key: spark.conf.get(key, None) for key in settings}
        for key, value in settings.items():
            spark.conf.set(key, value)
        try:
            yield
        finally:
            for key, before in previous.items():
                if before is None:
                    spark.conf.unset(key)
                else:
                    spark.conf.set(key, before)

    def run(text: str, settings: dict[str, str]) -> list[Any]:
        with applied(settings):
            return spark.sql(text).collect()

    for name, text, conf in variants:
        with applied(conf):  # planned under the settings, as it runs
            print(f"{label} {name}: {json.dumps(counts(_explain(spark.sql(text))))}")
    reference = sorted(map(tuple, run(sql, {})), key=str)  # as is, without the settings
    for name, text, conf in variants:
        rows = sorted(map(tuple, run(text, conf)), key=str)
        worst = max(
            (
                abs(a - b)
                for mine, theirs in zip(rows, reference, strict=True)
                for a, b in zip(mine, theirs, strict=True)
                if isinstance(a, float) and isinstance(b, float)
            ),
            default=0.0,
        )
        same = all(
            a == b
            for mine, theirs in zip(rows, reference, strict=True)
            for a, b in zip(mine, theirs, strict=True)
            if not (isinstance(a, float) and isinstance(b, float))
        )
        print(f"{label} {name} against the query as is: same counts {same}, within {worst:.1e}")
        if not same or worst > 1e-9:
            raise SystemExit(f"--ab-lengths: {name} differs from the query as is")
    cpu = Cpu(spark)
    seconds: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in variants}
    for round_ in range(rounds):
        for name, text, conf in variants if round_ % 2 == 0 else variants[::-1]:
            spark.catalog.clearCache()
            spark.sparkContext._jvm.java.lang.System.gc()
            load = os.getloadavg()[0]
            py0, jvm0 = cpu.now()
            start = time.perf_counter()
            run(text, conf)
            wall = time.perf_counter() - start
            py1, jvm1 = cpu.now()
            seconds[name].append((wall, (py1 - py0) + (jvm1 - jvm0)))
            print(
                f"{label} round {round_ + 1} evaluate's query {name}: {wall:.2f} s  "
                f"CPU {(py1 - py0) + (jvm1 - jvm0):.1f} s  load {load:.1f}",
                flush=True,
            )
    for name, runs in seconds.items():
        if runs:
            print(
                f"{label} median {name}: {statistics.median(w for w, _ in runs):.2f} s  "
                f"CPU {statistics.median(c for _, c in runs):.1f} s"
            )
    for view in dict.fromkeys(views):
        spark.catalog.dropTempView(view)


def counts(explained: str) -> dict[str, int]:
    """Operators in the tree part of an ``explain("formatted")``; the timings in ``plan`` are
    of single cold runs, not comparable with the rounds."""
    # after execution AQE prints the final plan, then the initial one: count the final one
    tree = explained.split("\n\n(")[0].split("== Initial Plan ==")[0]
    return {
        "exchanges": len(re.findall(r"(?<![\w])Exchange \(", tree)),
        "broadcast_exchanges": len(re.findall(r"BroadcastExchange \(", tree)),
        "reused_exchanges": len(re.findall(r"ReusedExchange", tree)),
        "scans": len(re.findall(r"Scan parquet", tree)),
        "windows": len(re.findall(r"(?<![\w])Window \(", tree)),
        "window_group_limits": len(re.findall(r"WindowGroupLimit \(", tree)),
        "joins": len(re.findall(r"Join \w+", tree)),
    }


def _explain(frame: Any) -> str:
    """``explain("formatted")`` as a string (it prints)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        frame.explain("formatted")
    return buffer.getvalue()


def duckdb_reference(recs: str, truth: str, population: str = "all") -> dict[str, float]:
    import sqlmetrics

    frame = sqlmetrics.evaluate(
        recs, truth, SEVEN, columns={"relevance": None}, population=population
    )
    row = frame.iloc[0]
    return {str(c): float(row[c]) for c in frame.columns if "@" in str(c)}


def agreement(
    runs: dict[str, list[dict[str, Any]]],
    reference: dict[str, float],
    common: dict[str, float] | None = None,
) -> list[str]:
    """The checks, as lines; raises when a pair that must agree differs by more than 1e-9.
    MS Recommenders is held to nothing: it orders equal scores arbitrarily (reported)."""
    lines, failures = [], []
    seven = runs["sqlmetrics7"][0]["values"] if runs.get("sqlmetrics7") else reference

    def check(what: str, mine: float, theirs: float, strict: bool = True) -> None:
        diff = abs(mine - theirs)
        lines.append(f"  {what:<55} {mine:.12f} {theirs:.12f} diff {diff:.1e}")
        if diff > 1e-9 and strict:
            failures.append(what)

    for name, value in reference.items():
        check(f"{name}: Spark sqlmetrics vs DuckDB sqlmetrics", seven[name], value)
    if runs.get("ranking_evaluator"):
        theirs = runs["ranking_evaluator"][0]["values"]
        for spark_name, name in SPARK_NAMES.items():
            check(
                f"{name}: sqlmetrics vs RankingEvaluator {spark_name}",
                seven[name],
                theirs[spark_name],
            )
    if runs.get("sqlmetrics4_profile"):
        for name, value in runs["sqlmetrics4_profile"][0]["values"].items():
            column = PROFILE_NAMES.get(name, name)
            check(f"{name} (profile=spark) vs {column} (7-metric call)", value, seven[column])
    if runs.get("bare7"):
        for name, value in runs["bare7"][0]["values"].items():
            check(f"{name}: to_sql's query vs the 7-metric call", value, seven[name])
    if runs.get("sqlmetrics7_every_k"):
        for name, value in runs["sqlmetrics7_every_k"][0]["values"].items():
            check(f"{name}: every k vs the 7-metric call", value, seven[name])
    if runs.get("top_k_window") and runs.get("hit_positions"):
        window, counted = runs["top_k_window"][0]["values"], runs["hit_positions"][0]["values"]
        for name, value in window.items():
            check(f"{name}: top-{K} window vs hit positions counted", value, counted[name])
    if runs.get("recommenders") and common is not None:
        theirs = runs["recommenders"][0]["values"]
        for spark_name, name in SPARK_NAMES.items():
            check(
                f"{name} (DuckDB, population=common) vs Recommenders {spark_name}",
                common[name],
                theirs[spark_name],
                strict=False,
            )
    if failures:
        print("\n".join(lines))
        raise SystemExit(f"numbers disagree beyond 1e-9: {failures}")
    return lines


def versions(spark: Any) -> dict[str, str]:
    import pyspark

    import sqlmetrics

    system = spark.sparkContext._jvm.java.lang.System
    java = f"Java {system.getProperty('java.version')} ({system.getProperty('java.vm.name')})"
    git = shutil.which("git")
    commit = "?"
    if git:
        commit = subprocess.run(
            [git, "-C", str(BENCH), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
    return {
        "sqlmetrics": getattr(sqlmetrics, "__version__", "?"),
        "commit": commit,
        "pyspark": pyspark.__version__,
        "spark": spark.version,
        "java": java,
        "python": platform.python_version(),
        "cpus": str(os.cpu_count()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=parse_rows, nargs="+", default=[parse_rows("1e6")])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--partitions", type=int, default=8, help="spark.sql.shuffle.partitions")
    parser.add_argument("--driver-memory", default="6g")
    parser.add_argument(
        "--tools",
        default=",".join(DEFAULT_TOOLS),
        help=f"of {', '.join(TOOLS)} (recommenders: from bench/.venv-recommenders)",
    )
    parser.add_argument("--no-plan", action="store_true")
    parser.add_argument("--plan-only", action="store_true", help="the plans, no timing")
    parser.add_argument(
        "--ab-lengths",
        action="store_true",
        help="only: evaluate's query against it with list lengths from a GROUP BY (rounds)",
    )
    parser.add_argument(
        "--ab-settings",
        action="store_true",
        help="with --ab-lengths: each also without the Spark engine's session settings",
    )
    args = parser.parse_args(argv)
    tools = [t for t in args.tools.split(",") if t]
    unknown = set(tools) - set(TOOLS)
    if unknown:
        parser.error(f"unknown tools {sorted(unknown)}; known: {', '.join(TOOLS)}")

    started = time.perf_counter()
    spark = session(args.partitions, args.driver_memory)
    cpu = Cpu(spark)
    info = versions(spark)
    print(
        f"Spark {info['spark']} (pyspark {info['pyspark']}), {info['java']}, local[2], "
        f"driver memory {args.driver_memory}, spark.sql.shuffle.partitions={args.partitions}, "
        f"AQE {spark.conf.get('spark.sql.adaptive.enabled')}; "
        f"session {time.perf_counter() - started:.1f} s"
    )
    works = {
        "sqlmetrics7": lambda r, t: run_sqlmetrics(spark, r, t, profile=False),
        "sqlmetrics4_profile": lambda r, t: run_sqlmetrics(spark, r, t, profile=True),
        "bare7": lambda r, t: run_bare(spark, r, t),
        "ranking_evaluator": lambda r, t: run_ranking_evaluator(spark, r, t),
        "recommenders": lambda r, t: run_recommenders(spark, r, t),
        "sqlmetrics7_every_k": lambda r, t: run_sqlmetrics_every_k(spark, r, t),
        "top_k_window": lambda r, t: run_ranking_plan(spark, r, t, TOP_K_WINDOW),
        "hit_positions": lambda r, t: run_ranking_plan(spark, r, t, HIT_POSITIONS),
    }
    warmed = False
    for rows in args.rows:
        label = rows_label(rows)
        folder = data_dir(rows)
        if not (folder / "meta.json").exists():
            generate(rows)
        meta = json.loads((folder / "meta.json").read_text())
        recs = str(folder / "recommendations.parquet")
        truth = str(folder / "interactions.parquet")
        if args.ab_lengths:
            ab_lengths(spark, recs, truth, label, args.rounds, args.ab_settings)
            continue
        if args.plan_only:
            result = plan(spark, recs, truth, label)
            (RESULTS / f"spark_plan_{label}.json").write_text(json.dumps(result, indent=1))
            print(f"{label} plan: {json.dumps(result)}")
            continue
        if not warmed:  # JIT, class loading, the first job: once, untimed
            for tool in tools:
                works[tool](recs, truth)
            warmed = True
        runs: dict[str, list[dict[str, Any]]] = {tool: [] for tool in tools}
        for round_ in range(args.rounds):
            order = tools if round_ % 2 == 0 else tools[::-1]
            for tool in order:
                out = measure(spark, cpu, lambda tool=tool, r=recs, t=truth: works[tool](r, t))
                runs[tool].append(out)
                print(
                    f"{label} round {round_ + 1}/{args.rounds} {LABELS[tool]:<30} "
                    f"{out['wall_s']:7.2f} s  CPU {out['cpu_s']:6.1f} s "
                    f"(JVM {out['jvm_cpu_s']:.1f})  load {out['load1']:.2f}",
                    flush=True,
                )
        reference = duckdb_reference(recs, truth)
        common = duckdb_reference(recs, truth, "common") if "recommenders" in tools else None
        lines = agreement(runs, reference, common)
        print(f"{label}: numbers (first round), diff = |a - b|:")
        print("\n".join(lines))
        summary: dict[str, Any] = {}
        for tool, outs in runs.items():
            summary[tool] = {
                "median_wall_s": statistics.median(o["wall_s"] for o in outs),
                "min_wall_s": min(o["wall_s"] for o in outs),
                "median_cpu_s": statistics.median(o["cpu_s"] for o in outs),
                "median_jvm_cpu_s": statistics.median(o["jvm_cpu_s"] for o in outs),
            }
        if "sqlmetrics7" in summary and "recommenders" in summary:
            summary["ratio_recommenders_wall"] = (
                summary["recommenders"]["median_wall_s"] / summary["sqlmetrics7"]["median_wall_s"]
            )
            print(
                f"{label}: Recommenders / sqlmetrics 7 = {summary['ratio_recommenders_wall']:.2f}x"
            )
        if "sqlmetrics7" in summary and "ranking_evaluator" in summary:
            mine, theirs = summary["sqlmetrics7"], summary["ranking_evaluator"]
            ratio = theirs["median_wall_s"] / mine["median_wall_s"]
            summary["ratio_wall"] = ratio
            summary["ratio_cpu"] = theirs["median_cpu_s"] / mine["median_cpu_s"]
            print(
                f"{label}: RankingEvaluator / sqlmetrics 7 = {ratio:.2f}x wall, "
                f"{summary['ratio_cpu']:.2f}x CPU (target >= 2x)"
            )
        for tool in tools:
            s = summary[tool]
            versus = ""
            if "ranking_evaluator" in summary and tool != "ranking_evaluator":
                theirs = summary["ranking_evaluator"]
                s["ratio_ranking_evaluator_wall"] = theirs["median_wall_s"] / s["median_wall_s"]
                s["ratio_ranking_evaluator_cpu"] = theirs["median_cpu_s"] / s["median_cpu_s"]
                versus = (
                    f"  RankingEvaluator / this {s['ratio_ranking_evaluator_wall']:.2f}x wall, "
                    f"{s['ratio_ranking_evaluator_cpu']:.2f}x CPU"
                )
            print(
                f"{label} median {LABELS[tool]:<30} {s['median_wall_s']:7.2f} s "
                f"(min {s['min_wall_s']:.2f})  CPU {s['median_cpu_s']:6.1f} s{versus}"
            )
        result: dict[str, Any] = {
            "rows": rows,
            "meta": {
                k: meta.get(k)
                for k in ("recommendation_rows", "interaction_rows", "population")
                if k in meta
            },
            "versions": info,
            "partitions": args.partitions,
            "driver_memory": args.driver_memory,
            "runs": runs,
            "summary": summary,
            "agreement": lines,
            "duckdb_reference": reference,
            "duckdb_reference_common": common,
            "loadavg_after": os.getloadavg(),
        }
        if not args.no_plan:
            result["plan"] = plan(spark, recs, truth, label)
            print(f"{label} plan: {json.dumps(result['plan'])}")
        RESULTS.mkdir(parents=True, exist_ok=True)
        suffix = "" if tools == list(DEFAULT_TOOLS) else "_" + "_".join(tools)
        (RESULTS / f"spark_{label}{suffix}.json").write_text(json.dumps(result, indent=1))
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
