"""Benchmark rebuilding the embedded lexical index from the collection (a stale saved copy).

    python scripts/bench_rebuild.py build /tmp/lexrebuild-x/milvus.db --rows 30000
    python scripts/bench_rebuild.py measure /tmp/lexrebuild-x/milvus.db --repeat 3

``build`` fills a Milvus Lite store with synthetic rows shaped like real ones (the
corpus of ``bench_lexical.py``: real rows with lines swapped, ~2,000 chars each)
and random 384-d vectors, written straight to the collection (no lexical mirror).
``measure`` times the stages of a rebuild on that store, side by side and
interleaved (the machine is shared), reports medians, and checks that the old
and new rebuilds answer real-line queries identically.

Figures of 2026-11-30, shared 2-core machine, nearly idle (1e7-int sum 0.30 s),
3 rounds each, tokenizer memo cleared before each stage (a fresh process):

| rows | stage                                              | old     | new    |
|------|----------------------------------------------------|---------|--------|
| 110k | rebuild, end to end                                | 178.4 s | 65.3 s |
| 30k  | rebuild, end to end                                | 47.0 s  | 18.9 s |
| 30k  | fetch (query_iterator pages of 5,000 / iterate())  | 8.7 s   | 7.8 s  |
| 30k  | count (upsert pages + refresh / from_rows)         | 40.1 s  | 12.4 s |

Where the old rebuild's time went (30k rows): ``tokenize`` per row 21 s, ``Counter``
5 s, per-row vocabulary and array bookkeeping 6 s, base build 1 s, fetch 9 s.
The fetch has a floor: Milvus Lite materialises every column of every row (the
vector too) whatever ``output_fields`` says, ~15 s for 110k rows returning only ids.
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import time
from pathlib import Path
from itertools import islice
from typing import Any, Callable, Iterable, Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_lexical import _cpu_ref, load_material, make_queries, make_rows  # noqa: E402

from trajsearch.store.index import COLLECTION, LEXICAL_FIELDS, IndexSettings, TrajectoryIndex  # noqa: E402
from trajsearch.store.filters import Filters  # noqa: E402
from trajsearch.store.lexical import LexicalIndex  # noqa: E402
from trajsearch.store import tokenize as tokenizer_module  # noqa: E402

SETTINGS = IndexSettings(embedder="bench-random", dim=384, window=3, stride=2)


def build(path: str, rows: int, seed: int) -> None:
    rng = random.Random(seed)
    mat = load_material()
    big, small = rows - rows // 10, rows // 20
    tenants = [("big", big), ("small-a", small), ("small-b", rows - big - small)]
    index = TrajectoryIndex(path, SETTINGS)
    vec_rng = np.random.default_rng(seed)
    t0, done = time.perf_counter(), 0
    for tenant, n in tenants:
        for start in range(0, n, 1_000):
            batch = make_rows(rng, mat, tenant, min(1_000, n - start), start)
            vecs = vec_rng.standard_normal((len(batch), SETTINGS.dim)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            for i, (r, v) in enumerate(zip(batch, vecs)):
                r.update(step_index=i, step_end=i + 2, task_id=r["trajectory_id"], tool_versions={}, reward=None,
                         quality_score=None, steps=[], trace_uri="", content_hash=f"{i:064d}", embedding=v.tolist())
            index.client.insert(COLLECTION, data=batch)
            done += len(batch)
            print(f"\r{done:,} rows, {time.perf_counter() - t0:.0f} s", end="", flush=True)
    index.client.flush(COLLECTION)
    print(f"\nbuilt {done:,} rows in {time.perf_counter() - t0:.0f} s")
    index.close()


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _cold() -> None:
    """Forget the tokenizer's word memo: a rebuild runs in a fresh process (after a crash)."""
    tokenizer_module._tokens_of.clear()
    tokenizer_module._wholes_of.clear()


def old_rebuild(index: TrajectoryIndex) -> LexicalIndex:
    """The rebuild before 2026-11-30: query_iterator pages of 5,000, upserted page by page,
    the base built on the first search."""
    return _upsert_all(_pages(index, 5_000))


def _pages(index: TrajectoryIndex, batch: int) -> Iterator[dict]:
    iterator = index.client.query_iterator(COLLECTION, batch_size=batch, filter="", output_fields=LEXICAL_FIELDS)
    while page := iterator.next():
        yield from page
    iterator.close()


def _upsert_all(rows: Iterable[dict]) -> LexicalIndex:
    lexical, batch = LexicalIndex(), []
    for row in rows:
        batch.append(row)
        if len(batch) >= 5_000:
            lexical.upsert(batch)
            batch = []
    lexical.upsert(batch)
    lexical.refresh()
    return lexical


def _same_results(old: LexicalIndex, new: LexicalIndex, sample: list[dict], n_queries: int = 100) -> str:
    """Do both indexes answer exactly alike (ids, scores, order), for real lines as queries?"""
    assert sorted(old.ids()) == sorted(new.ids()), "different rows"
    rng = random.Random(1)
    compared = 0
    for tenant in old.tenants():
        rows = [r for r in sample if r["tenant"] == tenant] or sample
        for query in make_queries(rng, rows, n_queries):
            for f in (Filters(tenant=tenant), Filters(tenant=tenant, levels=("step",), outcomes=("failure",))):
                assert old.search(query, f, 20) == new.search(query, f, 20), (tenant, query, f)
                compared += 1
    return f"identical results for {compared} queries x filters over {len(old.tenants())} tenants"


def measure(path: str, repeat: int, variants: list[str]) -> None:
    index = TrajectoryIndex(path, SETTINGS)
    n = index.count()
    print(f"store: {n:,} rows; load average / 1e7-int sum: {os.getloadavg()[0]:.1f} / {_cpu_ref():.2f} s")
    rows: list[dict] = []
    stages: dict[str, Callable[[], Any]] = {
        "old rebuild (end to end)": lambda: old_rebuild(index),
        "new rebuild (end to end)": lambda: index._mirror._rebuild(),
        "fetch: query_iterator pages of 5,000 (old)": lambda: sum(1 for _ in _pages(index, 5_000)),
        "fetch: iterate() (new)": lambda: sum(1 for _ in index._mirror._rows()),
        "count: upsert pages of 5,000 + refresh (old)": lambda: _upsert_all(rows),
        "count: LexicalIndex.from_rows (new)": lambda: LexicalIndex.from_rows(rows),
    }
    chosen = {k: v for k, v in stages.items() if not variants or any(s in k for s in variants)}
    if any(k.startswith("count") for k in chosen):
        rows = list(index.iterate(LEXICAL_FIELDS, batch_size=5_000))
    times: dict[str, list[float]] = {k: [] for k in chosen}
    built: dict[str, LexicalIndex] = {}
    for r in range(repeat):
        for name, fn in chosen.items():
            built.pop(name, None)
            _cold()
            gc.collect()
            secs, got = _timed(fn)
            times[name].append(secs)
            if isinstance(got, LexicalIndex):
                built[name], got = got, len(got)
            print(f"  round {r + 1}: {name}: {secs:.1f} s ({got:,} rows)", flush=True)
    print(f"\n| stage ({n:,} rows, {repeat} rounds, cold tokenizer memo) | median s | per 100k rows |\n|---|---|---|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| {name} | {med:.1f} | {med * 100_000 / n:.0f} s |")
    for old, new in (("old rebuild (end to end)", "new rebuild (end to end)"),
                     ("count: upsert pages of 5,000 + refresh (old)", "count: LexicalIndex.from_rows (new)")):
        if old in built and new in built:
            sample = rows or list(islice(index.iterate(LEXICAL_FIELDS), 5_000))
            print(f"{new} vs {old}: {_same_results(built[old], built[new], sample)}")
    index._mirror._dirty = False  # measured, not meant to be saved
    index.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("path")
    b.add_argument("--rows", type=int, default=30_000)
    b.add_argument("--seed", type=int, default=7)
    m = sub.add_parser("measure")
    m.add_argument("path")
    m.add_argument("--repeat", type=int, default=3)
    m.add_argument("--only", nargs="*", default=[], help="substrings of stage names to run")
    args = ap.parse_args()
    if args.cmd == "build":
        build(args.path, args.rows, args.seed)
    else:
        measure(args.path, args.repeat, args.only)


if __name__ == "__main__":
    main()
