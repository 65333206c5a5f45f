"""Deterministic synthetic recommendations and interactions for the benchmark.

    python bench/generate.py --rows 1e7

writes ``bench/data/1e7/recommendations.parquet`` (user_id BIGINT, item_id BIGINT, score DOUBLE)
and ``bench/data/1e7/interactions.parquet`` (user_id BIGINT, item_id BIGINT, relevance INT),
plus ``meta.json`` with the counts and the files' SHA-256. The same ``--rows`` gives the same
bytes on every run (numpy's PCG64 seeded per chunk of users, pyarrow's writer, fixed row groups).

The recipe (that of the earlier study, shared/reference/perf.md):

- users = rows / 100, ids 1..users; each gets a list of 100 distinct items drawn from a catalogue
  of 100,000 items with Zipf-like popularity p(i) ~ (i + 10) ** -0.9 (item ids are a fixed
  permutation of the popularity ranks, so id order says nothing about popularity);
- scores are uniform in [0, 1) rounded to 4 decimals, so equal scores occur (about 5% of users
  have a tie among their top 11 and about 1% one straddling ranks 10/11); rows are clustered by
  user but not sorted by score;
- about 2% of users get no recommendations at all (their rows are dropped after drawing);
- each user has 0-20 relevant interactions (uniform, so ~4.8% have none), relevance 1/2/3 with
  probability .6/.3/.1; ~20% of them (binomial) are items of the user's own list, picked with
  weight 1 / (position + 5) so they sit near the top; the rest are drawn from the popularity
  distribution outside the list. (user, item) pairs are distinct in both files.

Memory stays small (one chunk of 10,000 users at a time): 1e8 rows take about a minute.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

SEED = 20261121
N_ITEMS = 100_000
LIST_LEN = 100
MAX_TRUTH = 20
CHUNK_USERS = 10_000
P_NO_RECS = 0.02
P_IN_LIST = 0.2
RELEVANCE_P = (0.6, 0.3, 0.1)
REC_DRAWS = 130  # popularity draws per user before de-duplication (100 distinct needed)
TRUTH_DRAWS = 48  # draws for the out-of-list relevant items (at most 20 needed)
ROW_GROUP_ROWS = 1024 * 1024  # pyarrow's (and so pandas') default row-group size
GENERATOR_VERSION = 1

BENCH = Path(__file__).resolve().parent
DATA = BENCH / "data"


def parse_rows(text: str) -> int:
    """``1e7``, ``10000000`` or ``10_000_000`` as an int (a multiple of 100)."""
    value = float(text.replace("_", ""))
    rows = round(value)
    if rows < 100 or rows % 100:
        raise argparse.ArgumentTypeError(f"--rows must be a multiple of 100 (got {text})")
    return rows


def rows_label(rows: int) -> str:
    """The folder name for a scale: ``1e7`` for 10,000,000, otherwise the number itself."""
    exponent = round(math.log10(rows))
    return f"1e{exponent}" if 10**exponent == rows else str(rows)


def data_dir(rows: int) -> Path:
    return DATA / rows_label(rows)


def _popularity_cdf() -> np.ndarray:
    weights = (np.arange(N_ITEMS, dtype=np.float64) + 10.0) ** -0.9
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _first_distinct(keys: np.ndarray, n_rows: int, width: int) -> tuple[np.ndarray, np.ndarray]:
    """For a (n_rows, width) matrix of keys unique across rows (row * N_ITEMS + item): the
    distinct keys of each row in the order of first appearance, as (row, position-in-row)."""
    flat = keys.ravel()
    _, first = np.unique(flat, return_index=True)
    first.sort()
    kept = flat[first]
    row = first // width
    starts = np.searchsorted(row, np.arange(n_rows))
    position = np.arange(kept.size) - starts[row]
    return kept, position


def _draw_items(rng: np.random.Generator, cdf: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    ranks = np.searchsorted(cdf, rng.random(shape), side="right")
    return np.minimum(ranks, N_ITEMS - 1)


def _chunk(
    chunk: int, first_user: int, n: int, cdf: np.ndarray, item_ids: np.ndarray
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, int]]:
    rng = np.random.default_rng([SEED, chunk])
    has_recs = rng.random(n) >= P_NO_RECS
    n_truth = rng.integers(0, MAX_TRUTH + 1, n)
    rows = np.arange(n, dtype=np.int64)

    # 100 distinct popular items per user, in draw order (= position before shuffling).
    draws = _draw_items(rng, cdf, (n, REC_DRAWS))
    kept, position = _first_distinct(rows[:, None] * N_ITEMS + draws, n, REC_DRAWS)
    counts = np.bincount(kept // N_ITEMS, minlength=n)
    if counts.min() < LIST_LEN:  # never seen in practice; a slow exact top-up keeps it correct
        extra: list[np.ndarray] = []
        for row in np.flatnonzero(counts < LIST_LEN):
            have = set((kept[kept // N_ITEMS == row] % N_ITEMS).tolist())
            while len(have) < LIST_LEN:
                item = int(_draw_items(rng, cdf, (1, 1))[0, 0])
                if item not in have:
                    have.add(item)
                    extra.append(np.array([row * N_ITEMS + item]))
        kept = np.concatenate([kept, *extra])
        order = np.argsort(kept // N_ITEMS, kind="stable")
        kept = kept[order]
        row_of = kept // N_ITEMS
        position = np.arange(kept.size) - np.searchsorted(row_of, np.arange(n))[row_of]
    take = position < LIST_LEN
    rec_items = (kept[take] % N_ITEMS).reshape(n, LIST_LEN)  # popularity ranks

    # Scores: position j holds the j-th largest score of the user.
    scores = -np.sort(-np.round(rng.random((n, LIST_LEN)), 4), axis=1)

    # Relevant items inside the list, weighted towards the top (Gumbel top-m without replacement).
    in_list = rng.binomial(n_truth, P_IN_LIST)
    log_w = -np.log(np.arange(LIST_LEN) + 5.0)
    keys = log_w + rng.gumbel(size=(n, LIST_LEN))
    order = np.argsort(-keys, axis=1, kind="stable")
    rank_of = np.empty_like(order)
    np.put_along_axis(rank_of, order, np.arange(LIST_LEN)[None, :].repeat(n, 0), axis=1)
    chosen = rank_of < in_list[:, None]
    truth_in_rows = np.nonzero(chosen)[0]
    truth_in_items = rec_items[chosen]

    # The other relevant items: popular items outside the list, distinct.
    out_list = n_truth - in_list
    cand = _draw_items(rng, cdf, (n, TRUTH_DRAWS))
    cand_keys = rows[:, None] * N_ITEMS + cand
    rec_keys = np.sort((rows[:, None] * N_ITEMS + rec_items).ravel())
    hit = np.searchsorted(rec_keys, cand_keys)
    in_recs = rec_keys[np.minimum(hit, rec_keys.size - 1)] == cand_keys
    cand_keys = np.where(in_recs, -1, cand_keys)  # -1 = discarded draw
    kept_t, position_t = _first_distinct(cand_keys, n, TRUTH_DRAWS)
    valid = kept_t >= 0
    kept_t, position_t = kept_t[valid], position_t[valid]
    row_t = kept_t // N_ITEMS
    position_t = np.arange(kept_t.size) - np.searchsorted(row_t, np.arange(n))[row_t]
    counts_t = np.bincount(row_t, minlength=n)
    if (counts_t < out_list).any():
        raise RuntimeError("not enough distinct out-of-list draws; raise TRUTH_DRAWS")
    take_t = position_t < out_list[row_t]
    truth_out_rows = row_t[take_t]
    truth_out_items = kept_t[take_t] % N_ITEMS

    t_rows = np.concatenate([truth_in_rows, truth_out_rows])
    t_items = np.concatenate([truth_in_items, truth_out_items])
    shuffle = np.lexsort((rng.random(t_rows.size), t_rows))  # by user, random within user
    t_rows, t_items = t_rows[shuffle], t_items[shuffle]
    relevance = rng.choice(np.array([1, 2, 3], dtype=np.int32), size=t_rows.size, p=RELEVANCE_P)

    # Recommendation rows: users with a list only, rows shuffled within each user.
    permutation = np.argsort(rng.random((n, LIST_LEN)), axis=1)
    shuffled_items = np.take_along_axis(rec_items, permutation, axis=1)
    shuffled_scores = np.take_along_axis(scores, permutation, axis=1)
    listed = np.flatnonzero(has_recs)
    user_ids = rows + first_user

    recs = {
        "user_id": np.repeat(user_ids[listed], LIST_LEN),
        "item_id": item_ids[shuffled_items[listed].ravel()],
        "score": shuffled_scores[listed].ravel(),
    }
    truth = {
        "user_id": user_ids[t_rows],
        "item_id": item_ids[t_items],
        "relevance": relevance,
    }
    top11 = scores[listed, :11]
    stats = {
        "users": n,
        "users_with_recs": int(has_recs.sum()),
        "users_with_truth": int((n_truth > 0).sum()),
        "population_without_recs": int(((n_truth > 0) & ~has_recs).sum()),
        "listed_without_truth": int(((n_truth == 0) & has_recs).sum()),
        "relevant_in_list": int(in_list[has_recs].sum()),
        "users_tie_in_top11": int((top11[:, 1:] == top11[:, :-1]).any(axis=1).sum()),
        "users_tie_at_10_11": int((top11[:, 9] == top11[:, 10]).sum()),
    }
    return recs, truth, stats


class _GroupedWriter:
    """A ParquetWriter that always writes full row groups of ``ROW_GROUP_ROWS`` rows."""

    def __init__(self, path: Path, schema: Any) -> None:
        import pyarrow.parquet as pq

        self.schema = schema
        self.writer = pq.ParquetWriter(path, schema, compression="snappy")
        self.pending: list[Any] = []
        self.pending_rows = 0
        self.rows = 0

    def write(self, columns: dict[str, np.ndarray]) -> None:
        import pyarrow as pa

        table = pa.table(columns, schema=self.schema)
        self.pending.append(table)
        self.pending_rows += table.num_rows
        self.rows += table.num_rows
        if self.pending_rows >= ROW_GROUP_ROWS:
            self._flush(final=False)

    def _flush(self, final: bool) -> None:
        import pyarrow as pa

        if not self.pending:
            return
        table = pa.concat_tables(self.pending)
        full = table.num_rows if final else table.num_rows - table.num_rows % ROW_GROUP_ROWS
        if full:
            self.writer.write_table(table.slice(0, full), row_group_size=ROW_GROUP_ROWS)
        rest = table.slice(full)
        self.pending = [rest] if rest.num_rows else []
        self.pending_rows = rest.num_rows

    def close(self) -> None:
        self._flush(final=True)
        self.writer.close()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def generate(rows: int, out: Path | None = None, quiet: bool = False) -> dict[str, Any]:
    """Writes the two Parquet files and meta.json for ``rows`` and returns the metadata."""
    import pyarrow as pa

    start = time.perf_counter()
    out = out or data_dir(rows)
    out.mkdir(parents=True, exist_ok=True)
    users = rows // LIST_LEN
    cdf = _popularity_cdf()
    item_ids = np.random.default_rng([SEED, 0xC0FFEE]).permutation(N_ITEMS).astype(np.int64) + 1
    rec_schema = pa.schema(
        [("user_id", pa.int64()), ("item_id", pa.int64()), ("score", pa.float64())]
    )
    truth_schema = pa.schema(
        [("user_id", pa.int64()), ("item_id", pa.int64()), ("relevance", pa.int32())]
    )
    recs_tmp = out / "recommendations.parquet.tmp"
    truth_tmp = out / "interactions.parquet.tmp"
    recs_writer = _GroupedWriter(recs_tmp, rec_schema)
    truth_writer = _GroupedWriter(truth_tmp, truth_schema)
    totals: dict[str, int] = {}
    n_chunks = -(-users // CHUNK_USERS)
    for chunk in range(n_chunks):
        first = chunk * CHUNK_USERS
        n = min(CHUNK_USERS, users - first)
        recs, truth, stats = _chunk(chunk, first + 1, n, cdf, item_ids)
        recs_writer.write(recs)
        truth_writer.write(truth)
        for key, value in stats.items():
            totals[key] = totals.get(key, 0) + value
        if not quiet and n_chunks > 10 and (chunk + 1) % max(1, n_chunks // 10) == 0:
            print(f"  {chunk + 1}/{n_chunks} chunks", file=sys.stderr, flush=True)
    recs_writer.close()
    truth_writer.close()
    recs_path = out / "recommendations.parquet"
    truth_path = out / "interactions.parquet"
    os.replace(recs_tmp, recs_path)
    os.replace(truth_tmp, truth_path)
    meta: dict[str, Any] = {
        "generator_version": GENERATOR_VERSION,
        "seed": SEED,
        "rows_requested": rows,
        "label": rows_label(rows),
        "recommendation_rows": recs_writer.rows,
        "interaction_rows": truth_writer.rows,
        **totals,
        "population": totals["users_with_truth"],
        "row_group_rows": ROW_GROUP_ROWS,
        "recommendations_bytes": recs_path.stat().st_size,
        "interactions_bytes": truth_path.stat().st_size,
        "recommendations_sha256": _sha256(recs_path),
        "interactions_sha256": _sha256(truth_path),
        "seconds": round(time.perf_counter() - start, 2),
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=parse_rows, required=True, help="1e5, 1e6, 1e7 or 1e8")
    parser.add_argument("--out", type=Path, help="folder (default bench/data/<rows>)")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    meta = generate(args.rows, args.out, args.quiet)
    print(
        f"{meta['label']}: {meta['recommendation_rows']:,} recommendation rows "
        f"({meta['recommendations_bytes'] / 1e6:.1f} MB), {meta['interaction_rows']:,} "
        f"interaction rows, {meta['users']:,} users ({meta['population']:,} with a relevant "
        f"item, {meta['population_without_recs']:,} of them without recommendations), "
        f"{meta['users_tie_at_10_11']:,} users tied at ranks 10/11, in {meta['seconds']} s "
        f"-> {args.out or data_dir(args.rows)}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
