"""Core benchmark: ingest rate next to the raw model, and search / expansion latency
at 10k and 100k rows next to raw pymilvus calls on the same collection, in one run.

Part A - ingest. Real runs from ../shared/data (a spread of tau-bench runs and of
mini-swe-agent runs, parsed with ``read_dump``) go through ``TrajSearch.add``
with the real model (the configured default) into a fresh embedded store; just
before, the raw model encodes exactly the texts ``add`` embeds (same batch
size). Reported: trajectories/s, texts/s, the share of ``add`` spent inside the
embedder, and raw/add as a ratio.

Part B - latency. Rows carry real texts (the rows of part A: task, summary,
step windows, failure, recombined into synthetic runs of 10-40 windows) and
cheap vectors (part A's real vectors plus small Gaussian noise, re-normalised),
written through ``TrajectoryIndex.upsert`` in batches of 1,000 with the full
schema (``indexer._record``), over four tenants, one holding ~70%.
After a flush, ~100 queries per operation are timed, the façade and the raw
pymilvus call alternating per query: grouped dense search (k=10, tenant),
ungrouped, grouped with env_version + outcome filters, grouped in a small
tenant, ``expand(before=2, after=2)`` and ``similar_runs(trajectory_id)``.
Query vectors are computed once beforehand with the real model (timed and
reported on their own); the façade is given them through a cache, so its
times hold no model time. The raw baseline uses the same filter expression,
limit, output fields and search params, precomputed; key lookups (expand, the
anchor and task rows of similar_runs) use pymilvus' primary-key ``get``, as
the index does. Rows marked [alt] are not like for like: they put the hybrid
modes, Python-side grouping and filter-expression key lookups in scale.

    python scripts/bench_core.py                          # 10k and 100k rows
    python scripts/bench_core.py --rows 10000 --queries 50 --ingest-runs 40
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import shutil
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import BIG_TENANT as BIG, SMALL_TENANTS as SMALL, CachedEmbedder, Stopwatch, SyntheticRuns  # noqa: E402
from _common import TimedEmbedder, embed_each, load_model, machine_note, open_store, p50, p95  # noqa: E402
from _common import peak_rss_mb, raw_encode, raw_encoder_name, read_real_runs, rss_mb, scratch_dir  # noqa: E402
from _common import collection_sizes, spread, table  # noqa: E402

from trajsearch import config  # noqa: E402
from trajsearch.model import Outcome, Trajectory  # noqa: E402
from trajsearch.represent import Row, represent, row_id  # noqa: E402
from trajsearch.search import Hit, TrajSearch  # noqa: E402
from trajsearch.store.filters import Filters  # noqa: E402
from trajsearch.store.index import COLLECTION, OUTPUT_FIELDS, SEARCH_PARAMS  # noqa: E402

K = 10


# -- part A: ingest ----------------------------------------------------------------------


def bench_ingest(model: Any, runs: list[Trajectory], workdir: Path) -> tuple[dict, list[dict]]:
    """Ingest through the façade, then raw-encode the same texts; return figures and rows."""
    timed = TimedEmbedder(model)
    ts = open_store(workdir / "ingest", timed)
    texts = [row.text for t in runs for row in represent(t, window=ts.window)]
    model.encode(texts[:16])  # warm-up (first call pays one-off costs)
    with Stopwatch() as raw:
        raw_encode(model, texts, batch_size=64)
    with Stopwatch() as add:
        report = ts.add(runs)
    assert report.rows == len(texts), (report.rows, len(texts))
    rows = list(ts.index.iterate(["text", "level", "trajectory_id", "task_id", "task_family", "outcome",
                                  "tools", "step_index", "step_end", "steps", "embedding"]))
    ts.close()
    figures = {
        "runs": report.ingested,
        "texts": report.rows,
        "chars_per_text": sum(map(len, texts)) / max(len(texts), 1),
        "add_s": add.seconds,
        "embed_in_add_s": timed.seconds,
        "raw_encode_s": raw.seconds,
        "runs_per_s": report.ingested / add.seconds,
        "texts_per_s": report.rows / add.seconds,
        "raw_texts_per_s": len(texts) / raw.seconds,
    }
    figures["ratio"] = figures["raw_texts_per_s"] / figures["texts_per_s"]
    return figures, rows


# -- part B: synthetic rows from real material -------------------------------------------


class RowFactory(SyntheticRuns):
    """Synthetic runs whose rows carry real texts and perturbed real vectors."""

    def __init__(self, pool: list[dict], *, noise: float, seed: int) -> None:
        super().__init__(noise=noise, seed=seed, trace_root="/tmp/trajsearch-bench")
        self.runs: dict[str, dict[str, Any]] = defaultdict(lambda: {"steps": []})
        for row in pool:
            run = self.runs[row["trajectory_id"]]
            if row["level"] == "step":
                run["steps"].append(row)
            else:
                run[row["level"]] = row
        for run in self.runs.values():
            run["steps"].sort(key=lambda r: r["step_index"])
        self.sources = [r for r in self.runs.values() if "task" in r and "summary" in r and r["steps"]]
        self.all_steps = [s for r in self.sources for s in r["steps"]]
        self.failures = [r["failure"] for r in self.runs.values() if "failure" in r]

    def run(self) -> tuple[Trajectory, list[dict]]:
        """One synthetic run (10-40 step windows) and its full-schema records."""
        src = self.rng.choice(self.sources)
        traj = self.trajectory(
            Outcome(src["task"]["outcome"]),
            has_failure="failure" in src,
            task=src["task"]["text"] or "task",
            task_id=src["task"]["task_id"] or None,
            task_family=src["task"]["task_family"] or None,
            tools_available=list(src["task"]["tools"] or []),
        )
        steps = self.windows(src)
        picked: list[tuple[Row, Any]] = [
            (Row("task", -1, -1, src["task"]["text"]), src["task"]["embedding"]),
            (Row("summary", -1, -1, src["summary"]["text"]), src["summary"]["embedding"]),
        ]
        for i, s in enumerate(steps):
            picked.append((Row("step", 2 * i, 2 * i + 2, s["text"], list(s["steps"] or [])), s["embedding"]))
        if traj.outcome is not Outcome.success:
            f = src.get("failure") or self.rng.choice(self.failures)
            position = min(max(int(f["step_index"]), 0), 2 * len(steps))
            picked.append((Row("failure", position, position, f["text"]), f["embedding"]))
        return traj, self.records(traj, picked)


def fill(index: Any, factory: RowFactory, target: int, made: list[Trajectory]) -> tuple[int, float]:
    """Upsert synthetic runs until the collection holds ``target`` rows; flush. Returns (rows, seconds)."""
    missing = target - index.count()
    start = time.perf_counter()
    made += factory.upsert_until(index, missing)[0]
    index.flush()
    return index.count(), time.perf_counter() - start


# -- part B: timing ----------------------------------------------------------------------


def paired(n: int, ours: Callable[[int], Any], raw: Callable[[int], Any], warmup: int = 3) -> tuple[list, list]:
    """Time ``ours(i)`` and ``raw(i)`` for i in 0..n-1, alternating which goes first."""
    for i in range(min(warmup, n)):
        ours(i)
        raw(i)
    t_ours, t_raw = [], []
    for i in range(n):
        order = ((ours, t_ours), (raw, t_raw)) if i % 2 == 0 else ((raw, t_raw), (ours, t_ours))
        for fn, sink in order:
            start = time.perf_counter()
            fn(i)
            sink.append(time.perf_counter() - start)
    return t_ours, t_raw


def bench_scale(ts: TrajSearch, vectors: dict[str, list[float]], queries: list[str], runs: list[Trajectory],
                rng: random.Random) -> tuple[list[list], dict]:
    """Time each operation through the façade and as raw pymilvus calls; rows for the table."""
    client = ts.index.client
    n = len(queries)
    out: list[list] = []
    notes: dict[str, Any] = {"fallback": {}}
    qv = [vectors[q] for q in queries]

    def raw_search(vec: list[float], expr: str, limit: int, grouped: bool) -> list:
        kwargs = {"group_by_field": "trajectory_id", "group_size": 1} if grouped else {}
        return client.search(COLLECTION, data=[vec], filter=expr, limit=limit, output_fields=OUTPUT_FIELDS,
                             search_params=SEARCH_PARAMS, **kwargs)[0]

    def record(name: str, ours: list[float], raw: list[float]) -> None:
        out.append([name, len(ours), p50(ours) * 1e3, p95(ours) * 1e3, p50(raw) * 1e3, p95(raw) * 1e3,
                    p50(ours) / p50(raw), p95(ours) / p95(raw)])
        if not name.startswith(" "):
            print(f"  {name}: ours p50 {p50(ours) * 1e3:.0f} ms, raw p50 {p50(raw) * 1e3:.0f} ms", flush=True)

    def grouped_pair(name: str, ours: Callable[[int], Any], expr: str | Callable[[int], str], k: int = K,
                     vec: Callable[[int], list[float]] = lambda i: qv[i], split: bool = False) -> None:
        """A grouped façade call against one raw grouped search; notes how often Milvus'
        best-effort group_by came back with fewer than ``k`` runs (the façade then
        re-searches ungrouped with over-fetch and groups in Python)."""
        short: set[int] = set()

        def raw(i: int) -> None:
            hits = raw_search(vec(i), expr(i) if callable(expr) else expr, k, True)
            if len({h["entity"]["trajectory_id"] for h in hits}) < k:
                short.add(i)

        t_ours, t_raw = paired(n, ours, raw)
        record(name, t_ours, t_raw)
        notes["fallback"][name] = f"{len(short)}/{n}"
        if split and 0 < len(short) < n:
            plain = [i for i in range(n) if i not in short]
            record("  ...queries without fallback", [t_ours[i] for i in plain], [t_raw[i] for i in plain])
            record("  ...queries with fallback", [t_ours[i] for i in sorted(short)], [t_raw[i] for i in sorted(short)])

    big = Filters(tenant=BIG).to_expr()

    # 1. dense, grouped by trajectory, tenant filter
    grouped_pair(f"search grouped k={K} ({BIG})",
                 lambda i: ts.search(queries[i], tenant=BIG, k=K, mode="dense"), big, split=True)

    # 2. dense, ungrouped
    ours, raw = paired(n, lambda i: ts.search(queries[i], tenant=BIG, k=K, group_by_trajectory=False, mode="dense"),
                       lambda i: raw_search(qv[i], big, K, False))
    record(f"search ungrouped k={K}", ours, raw)

    # 3. grouped, env_version + outcome filters
    grouped_pair("search grouped + env + outcome",
                 lambda i: ts.search(queries[i], tenant=BIG, k=K, env_version="env-2", outcome="failure",
                                     mode="dense"),
                 Filters(tenant=BIG, env_versions=("env-2",), outcomes=("failure",)).to_expr())

    # 4. grouped, a small tenant
    grouped_pair(f"search grouped k={K} ({SMALL[0]}, ~10%)",
                 lambda i: ts.search(queries[i], tenant=SMALL[0], k=K, mode="dense"),
                 Filters(tenant=SMALL[0]).to_expr())

    # 5. expand(before=2, after=2) around a step hit of each query
    hits: list[Hit] = []
    for q in queries:
        found = ts.search(q, tenant=BIG, levels="step", k=1, group_by_trajectory=False, mode="dense")
        if found:
            hits.append(found[0])
    keyed = []
    for h in hits:
        first, last = max(0, h.step_index - 2), h.step_end + 2
        keyed.append([row_id(BIG, h.trajectory_id, "step", s) for s in ts.window.starts_covering(first, last)])
    sizes: list[int] = []
    ours, raw = paired(len(hits), lambda i: sizes.append(len(ts.expand(hits[i], before=2, after=2))),
                       lambda i: client.get(COLLECTION, ids=keyed[i], output_fields=["step_index", "steps", "tenant"]))
    record("expand(before=2, after=2)", ours, raw)
    notes["expand_steps_p50"] = p50(sizes)

    # 6. similar_runs by trajectory id: anchor row by key, grouped search, task rows by key
    ids = [t.trajectory_id for t in rng.sample([t for t in runs if t.tenant == BIG], n)]
    similar_exprs = [Filters(tenant=BIG, levels=("step", "failure"), exclude_trajectory_ids=(t,)).to_expr()
                     for t in ids]
    key = Filters(tenant=BIG)
    short: set[int] = set()

    def raw_similar(i: int) -> None:
        tid = ids[i]
        anchor = client.get(COLLECTION, ids=[row_id(BIG, tid, "failure", -1)], output_fields=OUTPUT_FIELDS)
        if not anchor:
            anchor = client.get(COLLECTION, ids=[row_id(BIG, tid, "task", -1)], output_fields=OUTPUT_FIELDS)
        found = raw_search(vectors[anchor[0]["text"]], similar_exprs[i], 5, True)
        if len({h["entity"]["trajectory_id"] for h in found}) < 5:
            short.add(i)
        client.get(COLLECTION, ids=[row_id(BIG, h["entity"]["trajectory_id"], "task", -1) for h in found],
                   output_fields=["trajectory_id", "text", "tenant"])

    ours, raw = paired(n, lambda i: ts.similar_runs(trajectory_id=ids[i], tenant=BIG, k=5, mode="dense"),
                       raw_similar)
    record("similar_runs(trajectory_id) k=5, dense", ours, raw)
    notes["fallback"]["similar_runs(trajectory_id) k=5, dense"] = f"{len(short)}/{n}"

    # Not like for like, for scale. (a) The hybrid modes (dense + in-process BM25, fused)
    # against the same raw dense calls: similar_runs defaults to hybrid, search(mode="auto")
    # picks it for log-like queries; the first call builds the BM25 index (in the warm-up).
    # (b) Grouping in Python over an ungrouped over-fetch (what the fallback does) against
    # Milvus' own group_by, both raw.
    ours, raw = paired(n, lambda i: ts.similar_runs(trajectory_id=ids[i], tenant=BIG, k=5), raw_similar)
    record("[alt] similar_runs k=5 hybrid (default) vs raw dense", ours, raw)
    ours, raw = paired(n, lambda i: ts.search(queries[i], tenant=BIG, k=K, mode="hybrid"),
                       lambda i: raw_search(qv[i], big, K, True))
    record(f"[alt] search grouped k={K} hybrid vs raw dense", ours, raw)

    def python_grouped(i: int) -> None:
        rows = raw_search(qv[i], big, K * 20, False)
        seen: dict[str, Any] = {}
        for h in rows:
            seen.setdefault(h["entity"]["trajectory_id"], h)
        list(seen.values())[:K]

    ours, raw = paired(n, python_grouped, lambda i: raw_search(qv[i], big, K, True))
    record(f"[alt] raw ungrouped limit={K * 20} + group in Python vs raw group_by", ours, raw)

    # (c) Why rows are fetched with a primary-key get: the same key lookup written as a
    # filter expression with the tenant (what index.get did before) makes milvus-lite scan.
    m = min(n, len(keyed))
    ours, raw = paired(m, lambda i: client.query(COLLECTION, filter=key.ids_expr(keyed[i]),
                                                 output_fields=["step_index", "steps"]),
                       lambda i: client.get(COLLECTION, ids=keyed[i], output_fields=["step_index", "steps"]))
    record("[alt] raw query 'id in [..] and tenant == ..' vs raw get(ids)", ours, raw)
    return out, notes


# -- main --------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", default="10000,100000", help="collection sizes to time at, ascending")
    ap.add_argument("--queries", type=int, default=100, help="queries per operation")
    ap.add_argument("--ingest-runs", type=int, default=60, help="real runs for part A (2/3 tau-bench, 1/3 mini-swe)")
    ap.add_argument("--noise", type=float, default=0.02, help="per-dimension std of the vector perturbation")
    ap.add_argument("--model", default=config.default_model())
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/trajsearch-bench"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reuse-pool", action="store_true",
                    help="skip part A and reuse the rows+vectors it saved last time (for iterating on part B)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    sizes = collection_sizes(args.rows)
    rng = random.Random(args.seed)
    started = time.perf_counter()

    workdir = scratch_dir(args.workdir)
    print(f"# trajsearch core benchmark\n\n{machine_note()}\nwork dir: {workdir}\n")

    # -- data and model
    real = read_real_runs()
    n_swe = args.ingest_runs // 3
    subset = spread(real.tau, args.ingest_runs - n_swe) + spread(real.swe, n_swe)
    print(f"parsed {len(real.runs)} real runs with read_dump in {real.seconds:.1f} s")
    model, seconds = load_model(args.model)
    print(f"model {args.model} loaded in {seconds:.1f} s\n")

    # -- part A
    pool_cache = args.workdir / "pool.pkl"
    if args.reuse_pool and pool_cache.exists():
        ingest, pool = None, pickle.loads(pool_cache.read_bytes())
        print(f"## A. ingest: skipped (--reuse-pool: {len(pool)} rows from {pool_cache})\n")
    else:
        ingest, pool = bench_ingest(model, subset, workdir)
        pool_cache.write_bytes(pickle.dumps(pool))
    if ingest:
        print("## A. ingest (TrajSearch.add, real model, embedded Milvus Lite, fresh store)\n")
        print(table(
            ["runs", "texts", "chars/text", "add s", "runs/s", "texts/s", "embed share of add",
             "raw encode texts/s", "raw / add"],
            [[ingest["runs"], ingest["texts"], round(ingest["chars_per_text"]), ingest["add_s"],
              ingest["runs_per_s"], ingest["texts_per_s"], f"{ingest['embed_in_add_s'] / ingest['add_s']:.0%}",
              ingest["raw_texts_per_s"], ingest["ratio"]]],
        ))
        print(f"\n(raw = {raw_encoder_name(model)} on the same {ingest['texts']} texts, batch 64, measured "
              f"just before add; 'embed share' = time inside the embedder during add; RSS {rss_mb():.0f} MiB)\n")

    # -- queries: real texts, embedded once, one at a time (an agent's query latency)
    # tasks and decisive-failure texts of all real runs (what agents and engineers ask with)
    texts = [t.task for t in real.runs]
    texts += [row.text for t in real.runs for row in represent(t) if row.level == "failure"]
    distinct = list(dict.fromkeys(texts))
    queries = rng.sample(distinct, min(args.queries, len(distinct)))
    queries += [queries[i % len(queries)] for i in range(args.queries - len(queries))]  # repeat if short
    query_vectors, per_query = embed_each(model, queries, warmup=queries[:3])
    vectors: dict[str, list[float]] = {r["text"]: list(r["embedding"]) for r in pool}
    vectors.update((q, vec.tolist()) for q, vec in zip(queries, query_vectors))
    cached = CachedEmbedder(model)
    cached.add(list(vectors), list(vectors.values()))

    # -- part B
    factory = RowFactory(pool, noise=args.noise, seed=args.seed)
    ts = open_store(workdir / "scale", cached)
    made: list[Trajectory] = []
    results: list[list] = []
    builds = []
    notes_all = {}
    try:
        for size in sizes:
            rows, seconds = fill(ts.index, factory, size, made)
            builds.append(f"{rows} rows ({len([t for t in made if t.tenant == BIG])} of {len(made)} runs in "
                          f"'{BIG}'): upsert+flush {seconds:.1f} s, RSS {rss_mb():.0f} MiB")
            print(f"[{time.perf_counter() - started:.0f} s] {builds[-1]}", flush=True)
            timed, notes = bench_scale(ts, vectors, queries, made, rng)
            notes_all[rows] = notes
            results += [[f"{rows // 1000}k", *r] for r in timed]
            print(f"[{time.perf_counter() - started:.0f} s] timed at {rows} rows", flush=True)
    finally:
        ts.close()

    print("\n## B. latency, ms (façade vs raw pymilvus on the same collection, same run)\n")
    print(f"query embedding alone (real model, one query at a time, {len(queries)} queries): "
          f"p50 {p50(per_query) * 1e3:.1f} ms, p95 {p95(per_query) * 1e3:.1f} ms — not included below\n")
    print(table(["rows", "operation", "n", "ours p50", "ours p95", "raw p50", "raw p95", "ratio p50", "ratio p95"],
                results))
    print()
    for line in builds:
        print("build:", line)
    for rows, notes in notes_all.items():
        shorts = "; ".join(f"{name.strip()}: {count}" for name, count in notes["fallback"].items())
        print(f"at {rows} rows, Milvus group_by came back with fewer runs than asked (the façade then re-searches "
              f"ungrouped with over-fetch) for: {shorts}; expand returned {notes['expand_steps_p50']:.0f} steps (p50)")
    print(f"vector-cache misses (texts the façade had to embed during timing): {cached.misses}")
    print(f"peak RSS {peak_rss_mb():.0f} MiB; total {time.perf_counter() - started:.0f} s")

    if args.json:
        args.json.write_text(json.dumps({
            "ingest": ingest,  # None with --reuse-pool
            "query_embedding_ms": {"p50": p50(per_query) * 1e3, "p95": p95(per_query) * 1e3},
            "latency": [dict(zip(["rows", "operation", "n", "ours_p50", "ours_p95", "raw_p50", "raw_p95",
                                  "ratio_p50", "ratio_p95"], r)) for r in results],
            "notes": {str(k): v for k, v in notes_all.items()},
            "peak_rss_mb": peak_rss_mb(),
        }, indent=2, default=float))
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
