"""Scale curve of the embedded default (issue 12): the same benchmark at 10k, 100k, 300k rows.

What a user needs to know before outgrowing Milvus Lite: at which size (rows in the queried
tenant) and query rate a single embedded process stops answering in time, with the figures
behind it. For each size in ``--rows``, in one run:

- **build**: a synthetic collection made exactly like ``scripts/bench_hybrid.py``'s (runs
  recombined from real row texts of ../shared/data, real vectors plus noise, the full schema
  through ``TrajectoryIndex.upsert`` in batches of 1,000, one big tenant of ~70% and three small
  ones of ~10%), until ``size`` rows (all levels, passages included) exist; then a flush and a
  close (which saves the in-process BM25 beside the store). Build time, build peak RSS, disk size.
- **serve**, in a fresh process (so memory is a server's, not the builder's): open the store,
  embed the queries with the real model (timed apart, not in the figures), then in the big
  tenant and in one small tenant: ``search_filtered(k=10, grouped, one hit per run)`` in modes
  dense, lexical and hybrid (rotating order, ``bench_hybrid.bench_filters``: the legs alone too),
  and ``Runtime.context_for`` on real task texts (exemplars + warnings, rendered). Dense QPS:
  1/p50, and measured with ``--threads`` threads sharing the store, each working through the
  queries (a service's case: Milvus Lite allows one process per store). Then the floor: the
  tenant's dense rows' vectors are read into numpy and the same grouped question (best row per
  run, top 10 runs) is answered exactly, one BLAS thread, per query; for ``--check`` queries the
  façade's runs are compared with numpy's.
- **memory**: process RSS (Milvus Lite runs in-process, pure Python) after opening, after the
  timings (current and peak), then with the floor's matrices loaded; disk of the store directory.

Each size runs in its own child processes (build, then serve), so one size's memory never
counts in the next one's. 1M rows: the 100k -> 300k slope of build time, peak RSS and disk is
extrapolated; 1M is run only if it fits the memory available and builds in under 20 minutes
(``--million auto``, the default), else the script says why not.

Stores can be kept and reused (``--cache DIR``: ``DIR/rows-N``, rebuilt when the parameters
differ). The pool of real vectors is cached in ``--workdir`` like bench_hybrid's; ``--seed-vectors``
takes vectors of the same texts from other caches of the same digest format (bench_hybrid's
``pool-*.npz``, the evaluations' ``--emb-cache``), read only.

Figures of 2026-12-01 (shared 2-core machine, load average 2-9 from other sessions' tests and
benchmarks; two passes over the same stores, the second reusing them: p50 of pass 1 / pass 2, ms;
k=10 one hit per run; 20 queries, 10 context_for tasks; tenant rows = dense rows, passages apart):

| rows | tenant rows | dense     | lexical | hybrid    | context_for | numpy floor | dense QPS (2 threads) |
|------|-------------|-----------|---------|-----------|-------------|-------------|-----------------------|
| 10k  | 4,322       | 37 / 44   | 15 / 19 | 52 / 57   | 65 / 39     | 0.4 / 0.3   | 20 / 22               |
| 10k  | 701         | 21 / 14   | 13 / 10 | 28 / 23   | 27 / 23     | 0.1 / 0.1   | 41 / 63               |
| 100k | 43,835      | 200 / 236 | 19 / 20 | 208 / 263 | 173 / 195   | 7.1 / 8.9   | 4.7 / 3.9             |
| 100k | 6,971       | 56 / 50   | 14 / 16 | 65 / 63   | 85 / 45     | 0.5 / 0.9   | 11 / 20               |
| 300k | 133,981     | 666 / 718 | 26 / 28 | 676 / 718 | 728 / 694   | 32 / 31     | 1.3 / 1.4             |
| 300k | 18,585      | 165 / 129 | 17 / 15 | 183 / 152 | 121 / 137   | 1.3 / 2.7   | 6.0 / 7.7             |

Build (upsert + flush + close): 16 s, 151 s, 581 s (600-660 rows/s, 516 at 300k); disk 76 MiB,
654 MiB, 1.9 GiB (a third of it the saved BM25); serving RSS after the timings 0.7, 1.8, 3.9 GiB
(the embedding model ~0.37 of it), peak 0.8, 2.6, 6.3 GiB (loading the saved BM25 on the first
lexical query); build peak 1.0, 3.3, 5.9 GiB. Façade runs = numpy's in every check. Two threads
answer no faster than one (QPS ~ 1/p50). 1M rows, extrapolated from 100k -> 300k: peak RSS
~17 GiB, build ~35 min, disk ~6 GiB: not run (over the 20-minute build limit, and over 80% of
the memory the shared machine had free).

On 2026-12-02, with Milvus Lite's dense search through trajsearch/store/lite_search.py (the engine's
executor without its per-row Python loops and its copy of the vectors), the code before and after
alternated on the same cached stores, two runs each (load 0.2-1.4): 100k, 43,835 rows: dense 74-90 ->
21-23 ms, hybrid 85-87 -> 21-22 ms, context_for 26-27 -> 15-16 ms, floor 6-7 ms; 100k, 6,971 rows: dense
18-26 -> 8-11 ms, hybrid 17-22 -> 9-10 ms; 300k, 133,981 rows: dense 262-296 -> 30-44 ms, hybrid 258-299
-> 34-45 ms, context_for 55-64 -> 26-35 ms, floor 20-21 ms; 300k, 18,585 rows: dense 46-51 -> 12-17 ms.
Façade runs = numpy's in every check; memory unchanged.
Later that day, with live rows kept between writes and hits and gets read in one Arrow take per
segment, the code before and after alternated (load 0.9-1.1): 100k, 43,835 rows: dense 16 -> 8 ms,
hybrid 16 -> 11 ms, context_for 22 -> 15 ms (floor 6-7 ms); 6,971 rows: dense 7 -> 4 ms. 300k (after
only): 133,981 rows dense 21 ms, hybrid 28 ms, context_for 27 ms, floor 24 ms; 18,585 rows dense 7 ms.

    python scripts/bench_scale.py --rows 10000
    python scripts/bench_scale.py --cache /tmp/trajsearch-bench-scale/cache \\
        --seed-vectors /tmp/retrieval/bench/pool-all-MiniLM-L6-v2.npz --json scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

import bench_hybrid  # noqa: E402
from _common import BIG_TENANT as BIG, SMALL_TENANTS, CachedEmbedder, Stopwatch, embed_each, load_model  # noqa: E402
from _common import machine_note, open_store, p50, p95, peak_rss_mb, read_real_runs, rss_mb, table  # noqa: E402
from _common import collection_sizes, load_vector_cache, save_vector_cache, text_key  # noqa: E402

from trajsearch import config  # noqa: E402
from trajsearch.store.filters import Filters  # noqa: E402
from trajsearch.vocab import DENSE_LEVELS  # noqa: E402

K = bench_hybrid.K
SMALL = SMALL_TENANTS[0]
MODES = bench_hybrid.MODES
GIB = 1024.0
MILLION = 1_000_000
BUILD_LIMIT_S = 20 * 60


# -- build (child process) -------------------------------------------------------------------


def seed_pool_cache(texts: list[str], cache: Path, seeds: list[Path]) -> int:
    """Copy into ``cache`` the vectors of ``texts`` found in ``seeds`` (vector caches of the
    ``_common.load_vector_cache`` format, as ``bench_hybrid.pool_vectors`` and ``DiskCachedEmbedder``
    write them); the seeds are only read."""
    have = load_vector_cache(cache)
    wanted = {text_key(t) for t in texts} - set(have)
    added = 0
    for seed in seeds:
        if not wanted or not seed.exists():
            continue
        with np.load(seed) as data:
            keys = data["keys"].tolist()
            hits = [i for i, k in enumerate(keys) if k in wanted]
            if hits:
                vectors = data["vectors"][hits]
                for i, v in zip(hits, vectors):
                    have[keys[i]] = np.asarray(v, dtype=np.float32)
                    wanted.discard(keys[i])
                    added += 1
    if added:
        save_vector_cache(cache, have)
    return added


def make_factory(runs: list, model: Any, args: argparse.Namespace, stamp: Any) -> bench_hybrid.RowFactory:
    """bench_hybrid's factory, its pool cache seeded from ``--seed-vectors`` first."""
    def seed(texts: list[str], cache: Path) -> str:
        return f"{seed_pool_cache(texts, cache, args.seed_vectors or [])} taken from --seed-vectors; "

    return bench_hybrid.make_factory(runs, model, args, stamp, prepare=seed)


def disk_mib(path: Path) -> dict[str, float]:
    """Allocated size of the store directory: the Milvus Lite data, the saved BM25, the rest."""
    parts = {"milvus": 0, "lexical": 0, "other": 0}
    for root, _, files in os.walk(path):
        for name in files:
            p = Path(root) / name
            try:
                size = p.stat().st_blocks * 512
            except OSError:
                continue
            rel = p.relative_to(path).parts
            part = "lexical" if ".lexical" in name else "milvus" if rel[0] == "milvus.db" else "other"
            parts[part] += size
    out = {k: v / 2**20 for k, v in parts.items()}
    out["total"] = sum(out.values())
    return out


def build_params(args: argparse.Namespace, rows: int) -> dict[str, Any]:
    return {"rows": rows, "pool": args.pool, "swap": args.swap, "noise": args.noise, "seed": args.seed,
            "model": args.model}


def phase_build(args: argparse.Namespace, rows: int, store: Path) -> dict[str, Any]:
    started = time.perf_counter()

    def stamp(msg: str) -> None:
        print(f"  [build {rows}: {time.perf_counter() - started:4.0f} s] {msg}", flush=True)

    real = read_real_runs()
    model, _ = load_model(args.model)
    factory = make_factory(real.runs, model, args, stamp)
    shutil.rmtree(store, ignore_errors=True)
    store.mkdir(parents=True)
    rss_before = rss_mb()
    ts = open_store(store, CachedEmbedder(model))
    levels: list[tuple[str, str]] = []
    try:
        with Stopwatch() as up:
            runs, n_rows, _ = factory.upsert_until(ts.index, rows,
                                                   counts=lambda r: levels.append((r["tenant"], r["level"])) or True)
        stamp(f"upserted {n_rows} rows of {len(runs)} runs in {up.seconds:.0f} s, RSS {rss_mb():.0f} MiB")
        with Stopwatch() as fl:
            ts.index.flush()
    finally:
        with Stopwatch() as cl:
            ts.close()
    out = {
        "params": build_params(args, rows), "rows": n_rows, "runs": len(runs),
        "big_runs": sum(t.tenant == BIG for t in runs),
        "levels": dict(Counter(level for _, level in levels)),
        "passages": dict(Counter(tenant for tenant, level in levels if level == "passage")),
        "upsert_s": up.seconds, "flush_s": fl.seconds, "close_s": cl.seconds,
        "build_s": up.seconds + fl.seconds + cl.seconds,
        "build_peak_rss_mb": peak_rss_mb(), "build_rss_before_mb": rss_before,
        "disk_mib": disk_mib(store), "load": os.getloadavg(),
    }
    stamp(f"flush {fl.seconds:.1f} s, close {cl.seconds:.1f} s; peak RSS {out['build_peak_rss_mb']:.0f} MiB; "
          f"disk {out['disk_mib']['total']:.0f} MiB")
    return out


# -- serve (child process) ----------------------------------------------------------------------


class Floor:
    """The tenant's dense rows in memory, ordered by run: the exact grouped top-K with numpy."""

    def __init__(self, ts: Any, tenant: str) -> None:
        ids, vecs = [], []
        expr = Filters(tenant=tenant, levels=DENSE_LEVELS).to_expr()
        for row in ts.index.iterate(["trajectory_id", "embedding"], expr=expr, tenant=tenant):
            ids.append(row["trajectory_id"])
            vecs.append(row["embedding"])
        runs, codes = np.unique(np.array(ids), return_inverse=True)
        order = np.argsort(codes, kind="stable")
        self.matrix = np.asarray(vecs, dtype=np.float32)[order]
        self.runs = runs
        self.starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
        self.rows = len(ids)

    def grouped(self, q: np.ndarray) -> tuple[float, list[str]]:
        """Seconds for the best row per run and the top K runs (one BLAS thread), and those runs."""
        q = np.asarray(q, dtype=np.float32)
        with threadpool_limits(1, user_api="blas"):
            start = time.perf_counter()
            best = np.maximum.reduceat(self.matrix @ q, self.starts)
            top = np.argpartition(-best, min(K, len(best) - 1))[:K]
            top = top[np.argsort(-best[top])]
            seconds = time.perf_counter() - start
        return seconds, [str(self.runs[i]) for i in top]


def throughput(ts: Any, queries: list[str], filters: Filters, threads: int) -> dict[str, float]:
    """Dense grouped searches per second with ``threads`` threads sharing the store, each working
    through the queries once (the measured counterpart of 1/p50)."""
    def work(offset: int) -> None:
        for i in range(len(queries)):
            ts.search_filtered(queries[(i + offset) % len(queries)], filters, k=K, group_size=1, mode="dense")

    pool = [threading.Thread(target=work, args=(n * len(queries) // threads,)) for n in range(threads)]
    with Stopwatch() as sw:
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    return {"threads": threads, "qps": threads * len(queries) / sw.seconds}


def phase_serve(args: argparse.Namespace, rows: int, store: Path) -> dict[str, Any]:
    from trajsearch.runtime import Runtime, RuntimeContext

    started = time.perf_counter()

    def stamp(msg: str) -> None:
        print(f"  [serve {rows}: {time.perf_counter() - started:4.0f} s] {msg}", flush=True)

    out: dict[str, Any] = {"load_start": os.getloadavg()}
    rng = random.Random(args.seed)
    real = read_real_runs()
    model, _ = load_model(args.model)
    cached = CachedEmbedder(model)
    model.encode(["warm up the model"])
    out["rss_model_mb"] = rss_mb()
    with Stopwatch() as sw:
        ts = open_store(store, cached)
    out["open_s"], out["rss_open_mb"] = sw.seconds, rss_mb()
    calls = [0]
    search = ts.index.search

    def counting(*a: Any, **kw: Any) -> Any:  # dense calls per query: the grouped search's follow-ups
        calls[0] += 1
        return search(*a, **kw)

    ts.index.search = counting
    trace_reads = [0]
    get_trace = ts.get_trace

    def counting_trace(*a: Any, **kw: Any) -> Any:
        trace_reads[0] += 1
        return get_trace(*a, **kw)

    ts.get_trace = counting_trace
    try:
        out["tenant_rows"] = {t: ts.index.count(t) for t in (BIG, SMALL)}
        stamp(f"opened in {out['open_s']:.1f} s, RSS {out['rss_open_mb']:.0f} MiB (model alone "
              f"{out['rss_model_mb']:.0f}); rows in '{BIG}' {out['tenant_rows'][BIG]}, '{SMALL}' "
              f"{out['tenant_rows'][SMALL]} (dense partitions)")
        queries = bench_hybrid.pick_queries(ts, real.runs, args.queries, rng)
        tasks = rng.sample(list(dict.fromkeys(r.task for r in real.runs if r.task)), args.context_queries)
        texts = [q for _, q in queries] + tasks
        vectors, encode_s = embed_each(model, texts, warmup=["warm up the model"])
        cached.add(texts, vectors)
        out["encode_ms_p50"] = p50(encode_s) * 1e3
        out["queries"] = {"log": sum(k == "log" for k, _ in queries), "prose": sum(k == "prose" for k, _ in queries),
                          "context": len(tasks)}
        probe = queries[0][1]
        with Stopwatch() as sw:
            ts.index.lexical_search(probe, Filters(tenant=BIG), limit=ts.fusion.pool)
        out["first_lexical_s"] = sw.seconds
        stamp(f"{len(queries)} queries + {len(tasks)} tasks embedded (p50 {out['encode_ms_p50']:.0f} ms, not in the "
              f"figures); first lexical query (loads the saved BM25) {sw.seconds:.1f} s; RSS {rss_mb():.0f} MiB")

        runtime = Runtime(ts)
        out["tenants"] = {}
        for tenant in (BIG, SMALL):
            res: dict[str, Any] = {"rows": out["tenant_rows"][tenant]}
            _, notes = bench_hybrid.bench_filters(ts, queries, Filters(tenant=tenant), tenant, calls)
            times = notes["times_ms"]
            for name in (*MODES, "lexical leg", "dense leg"):
                res[name] = {"p50": p50(times[name]), "p95": p95(times[name]), "n": len(times[name])}
            res["dense_fallback"] = notes["dense_fallback"]
            if args.threads:
                res["throughput"] = throughput(ts, [q for _, q in queries], Filters(tenant=tenant), args.threads)
            stamp(f"'{tenant}': " + ", ".join(f"{m} p50 {res[m]['p50']:.0f} ms" for m in MODES)
                  + (f"; dense {res['throughput']['qps']:.1f} QPS with {args.threads} threads" if args.threads else "")
                  + f"; RSS {rss_mb():.0f} MiB")
            if args.context_queries:
                ctx = RuntimeContext(tenant=tenant)
                for task in tasks[:2]:  # warm-up
                    runtime.context_for(task, ctx)
                ctx_ms, strategies, tokens = [], [], []
                reads0, misses0 = trace_reads[0], cached.misses
                for task in tasks:
                    with Stopwatch() as sw:
                        got = runtime.context_for(task, ctx)
                    ctx_ms.append(sw.seconds * 1e3)
                    strategies.append(got.strategy.value)
                    tokens.append(got.tokens)
                res["context"] = {"p50": p50(ctx_ms), "p95": p95(ctx_ms), "n": len(ctx_ms),
                                  "strategies": {s: strategies.count(s) for s in set(strategies)},
                                  "tokens_p50": p50(tokens), "trace_reads": trace_reads[0] - reads0,
                                  "model_calls": cached.misses - misses0}
                stamp(f"'{tenant}': context_for p50 {res['context']['p50']:.0f} ms "
                      f"({res['context']['strategies']}, {res['context']['trace_reads']} trace reads)")
            out["tenants"][tenant] = res
        out["rss_after_timing_mb"], out["peak_rss_serve_mb"] = rss_mb(), peak_rss_mb()

        # the floor: the same grouped question, exactly, over the same tenant's vectors
        for tenant in (BIG, SMALL):
            with Stopwatch() as sw:
                floor = Floor(ts, tenant)
            secs, agree = [], []
            for _, q in queries:
                s, runs = floor.grouped(cached.table[q])
                secs.append(s)
            for _, q in queries[:args.check]:  # do the façade's runs match numpy's? (ties aside)
                hits = ts.search_filtered(q, Filters(tenant=tenant), k=K, group_size=1, mode="dense")
                agree.append(len({h.trajectory_id for h in hits} & set(floor.grouped(cached.table[q])[1])) / K)
            res = out["tenants"][tenant]
            res["floor"] = {"p50": p50(secs) * 1e3, "p95": p95(secs) * 1e3, "rows": floor.rows,
                            "load_s": sw.seconds, "runs_agree": float(np.mean(agree)) if agree else float("nan")}
            stamp(f"'{tenant}': numpy floor over {floor.rows} rows p50 {res['floor']['p50']:.2f} ms "
                  f"(read in {sw.seconds:.0f} s); façade dense runs = numpy's: {res['floor']['runs_agree']:.2f}")
            out[f"rss_floor_{tenant}_mb"] = rss_mb()
            del floor
    finally:
        ts.close()
    out["peak_rss_total_mb"] = peak_rss_mb()
    out["misses"] = cached.misses
    out["load_end"] = os.getloadavg()
    return out


# -- parent: the curve -------------------------------------------------------------------------


def child(args: argparse.Namespace, phase: str, rows: int, store: Path) -> dict[str, Any]:
    result = args.workdir / f"{phase}-{rows}-{os.getpid()}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--phase", phase, "--size", str(rows),
           "--store", str(store), "--result", str(result), *args.passthrough]
    code = subprocess.call(cmd)
    if code != 0:
        raise SystemExit(f"{phase} at {rows} rows failed (exit {code})")
    data = json.loads(result.read_text())
    result.unlink()
    return data


def one_size(args: argparse.Namespace, rows: int) -> dict[str, Any]:
    print(f"\n## {rows} rows — {machine_note()}", flush=True)
    store = (args.cache / f"rows-{rows}") if args.cache else args.workdir / f"run-{os.getpid()}-{rows}"
    meta = store / "build.json"
    build = None
    if args.cache and meta.exists() and not args.fresh:
        build = json.loads(meta.read_text())
        if build.get("params") != build_params(args, rows):
            build = None
        else:
            build["cached"] = True
            print(f"  reusing {store} (built in {build['build_s']:.0f} s)", flush=True)
    if build is None:
        build = child(args, "build", rows, store)
        build["cached"] = False
        if args.cache:
            meta.write_text(json.dumps(build, indent=2))
    serve = child(args, "serve", rows, store)
    if not args.cache:
        shutil.rmtree(store, ignore_errors=True)
    return {"rows": build["rows"], "build": build, "serve": serve}


def extrapolate(curve: list[dict], key: Any, n: int) -> float:
    """Linear from the two largest sizes (slope per row) to ``n`` rows."""
    (n1, y1), (n2, y2) = [(c["rows"], key(c)) for c in curve[-2:]]
    return y2 + (y2 - y1) / (n2 - n1) * (n - n2)


def mem_available_mb() -> tuple[float, float]:
    info = {}
    with open("/proc/meminfo") as fh:
        for line in fh:
            name, value = line.split(":")
            info[name] = int(value.split()[0]) / 1024
    return info["MemTotal"], info["MemAvailable"]


def crossing(points: list[tuple[int, float]], limit: float) -> str:
    """Tenant rows where p50 reaches ``limit`` (log-log interpolation between measured sizes)."""
    points = sorted(points)
    if points[0][1] > limit:
        return f"below {points[0][0]:,} (already {points[0][1]:.0f} ms there)"
    for (x1, y1), (x2, y2) in zip(points, points[1:]):
        if y1 <= limit < y2:
            t = (np.log(limit) - np.log(y1)) / (np.log(y2) - np.log(y1))
            return f"~{int(round(float(np.exp(np.log(x1) + t * (np.log(x2) - np.log(x1)))), -3)):,}"
    (x1, y1), (x2, y2) = points[-2:]
    if y2 <= y1:
        return f"above {x2:,} (not reached)"
    slope = (np.log(y2) - np.log(y1)) / (np.log(x2) - np.log(x1))
    guess = float(np.exp(np.log(x2) + (np.log(limit) - np.log(y2)) / slope))
    return f"~{int(round(guess, -3)):,} (extrapolated beyond {x2:,})"


def report(curve: list[dict], args: argparse.Namespace, wall: float, million_note: str) -> None:
    print(f"\n# scale curve ({machine_note()})\n")
    print(f"k={K}, one hit per run, medians of {args.queries} queries per tenant (p95 beside them), "
          f"context_for over {args.context_queries} real tasks; query embedding excluded; "
          "numpy floor = the same grouped question answered exactly over the tenant's vectors in memory "
          "(one BLAS thread).\n")
    threads = args.threads
    head = ["rows", "tenant (dense + passage rows)", "dense p50/p95", "lexical p50/p95", "hybrid p50/p95",
            "numpy floor p50", "dense / floor", "context_for p50/p95",
            "dense QPS: 1/p50" + (f" ({threads} threads)" if threads else ""), "runs = numpy"]
    body = []
    for c in curve:
        for tenant, r in c["serve"]["tenants"].items():
            ctx = r.get("context", {})
            body.append([
                f"{c['rows']:,}", f"{tenant} ({r['rows']:,} + {c['build'].get('passages', {}).get(tenant, 0):,})",
                *(f"{r[m]['p50']:.0f} / {r[m]['p95']:.0f} ms" for m in MODES),
                f"{r['floor']['p50']:.2f} ms", f"{r['dense']['p50'] / r['floor']['p50']:.0f}x",
                f"{ctx['p50']:.0f} / {ctx['p95']:.0f} ms" if ctx else "-",
                f"{1e3 / r['dense']['p50']:.1f}"
                + (f" ({r['throughput']['qps']:.1f})" if r.get("throughput") else ""),
                r["floor"]["runs_agree"],
            ])
    print(table(head, body))
    head = ["rows", "runs", "build (rows/s)", "disk: Milvus + BM25", "build peak RSS", "serve RSS: open / after timing",
            "serve peak RSS", "+ numpy floor", "open / first lexical", "load avg (1 min)"]
    body = []
    for c in curve:
        b, s = c["build"], c["serve"]
        d = b["disk_mib"]
        body.append([
            f"{c['rows']:,}", f"{b['runs']:,}",
            f"{b['build_s']:.0f} s ({b['rows'] / b['build_s']:.0f}){' cached' if b.get('cached') else ''}",
            f"{d['milvus']:.0f} + {d['lexical']:.0f} MiB", f"{b['build_peak_rss_mb']:.0f} MiB",
            f"{s['rss_open_mb']:.0f} / {s['rss_after_timing_mb']:.0f} MiB", f"{s['peak_rss_serve_mb']:.0f} MiB",
            f"{s[f'rss_floor_{BIG}_mb']:.0f} MiB", f"{s['open_s']:.1f} / {s['first_lexical_s']:.1f} s",
            f"{s['load_start'][0]:.1f}-{s['load_end'][0]:.1f}",
        ])
    print()
    print(table(head, body))
    model_mb = curve[0]["serve"]["rss_model_mb"]
    print(f"\nRSS includes the embedding model ({model_mb:.0f} MiB with the interpreter, before the store opens). "
          "The build ran in its own process; serving in a fresh one.")
    ctx_notes = []
    for c in curve:
        for tenant, r in c["serve"]["tenants"].items():
            ctx = r.get("context")
            if ctx:
                ctx_notes.append(f"{c['rows']:,}/{tenant}: {ctx['strategies']}, tokens p50 {ctx['tokens_p50']:.0f}, "
                                 f"trace reads {ctx['trace_reads']}, model calls {ctx['model_calls']}")
    if ctx_notes:
        print("context_for: " + "; ".join(ctx_notes))
    print(f"\n1M rows: {million_note}")

    # where Milvus Lite stops meeting a latency target, by rows in the queried tenant
    points = {m: [(r["rows"], r[m]["p50"]) for c in curve for r in c["serve"]["tenants"].values()]
              for m in ("dense", "hybrid")}
    points["context"] = [(r["rows"], r["context"]["p50"]) for c in curve for r in c["serve"]["tenants"].values()
                         if r.get("context")]
    print("\n## where a single Milvus Lite process stops meeting a p50 target (rows in the queried tenant, "
          "log-log interpolation)\n")
    head = ["operation", "p50 <= 50 ms up to", "p50 <= 250 ms up to"]
    body = [[name, crossing(p, 50), crossing(p, 250)] for name, p in points.items() if len(p) >= 2]
    print(table(head, body))
    print(f"\ntotal wall time {wall / 60:.1f} min")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="10000,100000,300000", help="comma-separated collection sizes (all rows)")
    ap.add_argument("--queries", type=int, default=20, help="search queries per tenant (2/3 log lines, 1/3 tasks)")
    ap.add_argument("--context-queries", type=int, default=10, help="real tasks for context_for per tenant (0: skip)")
    ap.add_argument("--threads", type=int, default=2, help="threads for the measured dense QPS (0: skip)")
    ap.add_argument("--check", type=int, default=5, help="queries whose façade runs are compared with numpy's")
    bench_hybrid.add_factory_options(ap)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=config.default_model())
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/trajsearch-bench-scale"))
    ap.add_argument("--cache", type=Path, help="keep the stores here (rows-N) and reuse them when the parameters match")
    ap.add_argument("--fresh", action="store_true", help="rebuild cached stores")
    ap.add_argument("--seed-vectors", type=Path, nargs="*", help="npz caches (keys, vectors by text digest) to "
                                                                 "take pool vectors from, read only")
    ap.add_argument("--million", choices=("auto", "yes", "no"), default="auto",
                    help="1M rows: auto runs it only if the extrapolation says it fits memory and builds in < 20 min")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--phase", choices=("build", "serve"), help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--store", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)

    if args.phase:
        fn = phase_build if args.phase == "build" else phase_serve
        args.result.write_text(json.dumps(fn(args, args.size, args.store), default=str))
        return 0

    args.passthrough = [
        "--queries", str(args.queries), "--context-queries", str(args.context_queries), "--check", str(args.check),
        "--threads", str(args.threads),
        "--pool", str(args.pool), "--swap", str(args.swap), "--noise", str(args.noise), "--seed", str(args.seed),
        "--model", args.model, "--workdir", str(args.workdir),
        *(["--vectors-from", str(args.vectors_from)] if args.vectors_from else []),
        *(["--seed-vectors", *map(str, args.seed_vectors)] if args.seed_vectors else []),
    ]
    started = time.perf_counter()
    print(f"# trajsearch scale curve (Milvus Lite)\n\n{machine_note()}", flush=True)
    sizes = collection_sizes(args.rows)
    curve = [one_size(args, n) for n in sizes]

    million_note = ("not asked for (--million no)" if args.million == "no" else "in --rows" if MILLION in sizes
                    else "fewer than two sizes to extrapolate from")
    if MILLION not in sizes and len(curve) >= 2 and args.million != "no":
        total, available = mem_available_mb()
        peak = extrapolate(curve, lambda c: max(c["build"]["build_peak_rss_mb"], c["serve"]["peak_rss_total_mb"]),
                           MILLION)
        build_s = extrapolate(curve, lambda c: c["build"]["build_s"], MILLION)
        disk = extrapolate(curve, lambda c: c["build"]["disk_mib"]["total"], MILLION)
        serve_rss = extrapolate(curve, lambda c: c["serve"]["rss_after_timing_mb"], MILLION)
        fits = peak < 0.8 * available
        fast = build_s < BUILD_LIMIT_S
        million_note = (
            f"extrapolated from {curve[-2]['rows']:,} and {curve[-1]['rows']:,} rows: peak RSS {peak / GIB:.1f} GiB "
            f"(serving RSS {serve_rss / GIB:.1f} GiB; {total / GIB:.0f} GiB in the machine, {available / GIB:.1f} GiB "
            f"available now), build {build_s / 60:.0f} min, disk {disk / GIB:.1f} GiB. "
            + ("Fits memory" if fits else "Does NOT fit the memory available (limit: 80% of it)")
            + (" and builds in under 20 min" if fast else "; the build would take over 20 min") + ". ")
        if args.million == "yes" or (fits and fast):
            million_note += "Run below."
            curve.append(one_size(args, MILLION))
            print(f"1M rows: {million_note}")
        else:
            million_note += "Not run."
    report(curve, args, time.perf_counter() - started, million_note)
    if args.json:
        args.json.write_text(json.dumps({"curve": curve, "million": million_note, "args": vars(args)},
                                        indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
