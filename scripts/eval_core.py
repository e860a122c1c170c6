"""Retrieval quality on the real runs in ../shared/data, leave-one-out.

Every run of tau-bench (200 runs, 50 tasks x 4 trials) and mini-swe-agent
(84 runs, 23 SWE-bench instances x up to 4 agent configurations) is ingested
with the real model into one tenant (so the two datasets compete with each
other, as they would in a mixed store). Then, for every run whose task has at
least one other run:

- query with the run's task text, exclude the run itself
  (``exclude_trajectory_ids``), one hit per run (grouped), and find the first
  hit that is another run of the same task (``task_id``: the tau-bench task id,
  the SWE-bench ``instance_id``) -> recall@1, recall@5, MRR@10;
  reported for several ``levels``: ``task`` alone, ``task+summary``, and (for
  reference) ``summary`` and ``step`` alone; in the façade's default search
  mode (``auto``: dense for prose, hybrid for log-like text) and dense only
  (``--modes``);
- bonus: ``similar_runs(trajectory_id)`` for every failed run (its anchor is
  the run's failure row: the decisive error, prefixed by the task) -> the same
  figures for "runs like this broken one", hybrid (its default) and dense;
- a chance row: the expected figures of a random ranking, for scale.

Caveat: the runs of one task share their instruction verbatim (4 trials of a
tau-bench task, 4 agent configurations of a SWE-bench instance), so task ->
task retrieval is close to an exact-match test here; the summary, step and
similar_runs rows are the informative ones.

The store is cached under /tmp (re-ingest skips unchanged runs), so reruns
only pay for the queries:

    python scripts/eval_core.py                 # /tmp/trajsearch-eval/<model>
    python scripts/eval_core.py --fresh --json /tmp/eval.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from math import comb
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import SWE_DIR, TAU_FILE, CachedEmbedder, Stopwatch, load_model, machine_note, open_store  # noqa: E402
from _common import peak_rss_mb, read_real_runs, store_dir, table  # noqa: E402

from trajsearch import config  # noqa: E402
from trajsearch.fusion import resolve_mode  # noqa: E402
from trajsearch.model import Outcome  # noqa: E402

TENANT = "eval"
LEVEL_SETS = {
    "task": ("task",),
    "task+summary": ("task", "summary"),
    "summary": ("summary",),
    "step": ("step",),
}
DATASETS = ("tau-bench", "mini-swe-agent")


def _rank(task_ids: list[str], wanted: str) -> int | None:
    """1-based position of the first hit of the wanted task, or None."""
    return next((i for i, t in enumerate(task_ids, 1) if t == wanted), None)


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    if not n:
        return {"n": 0, "r1": float("nan"), "r5": float("nan"), "mrr": float("nan")}
    return {
        "n": n,
        "r1": sum(1 for r in ranks if r == 1) / n,
        "r5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "mrr": sum(1 / r for r in ranks if r is not None) / n,
    }


def _chance(candidates: int, relevant: int, k: int) -> dict[str, float]:
    """Expected recall@1/@5 and MRR@k of a random ranking (first relevant hit at r)."""
    total = comb(candidates, relevant)
    first = [comb(candidates - r, relevant - 1) / total for r in range(1, candidates + 1)]
    return {"r1": first[0], "r5": sum(first[:5]), "mrr": sum(p / r for r, p in enumerate(first[:k], 1))}


def _chance_rows(name: str, queries: list, dataset: dict, by_task: dict, n_runs: int, k: int) -> list[list]:
    rows = []
    for subset in (*DATASETS, "overall"):
        picked = [t for t in queries if subset == "overall" or dataset[t.trajectory_id] == subset]
        chances = [_chance(n_runs - 1, len(by_task[t.task_id]) - 1, k) for t in picked]
        mean = {m: sum(c[m] for c in chances) / max(len(chances), 1) for m in ("r1", "r5", "mrr")}
        rows.append([name, subset, len(picked), mean["r1"], mean["r5"], mean["mrr"]])
    return rows


def _rows(name: str, by_dataset: dict[str, list[int | None]]) -> list[list]:
    rows = []
    everything: list[int | None] = []
    for dataset in DATASETS:
        ranks = by_dataset.get(dataset, [])
        everything += ranks
        m = _metrics(ranks)
        rows.append([name, dataset, m["n"], m["r1"], m["r5"], m["mrr"]])
    m = _metrics(everything)
    rows.append([name, "overall", m["n"], m["r1"], m["r5"], m["mrr"]])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=None, help="cached store (default /tmp/trajsearch-eval/<model>)")
    ap.add_argument("--fresh", action="store_true", help="wipe the cached store first")
    ap.add_argument("--model", default=config.default_model())
    ap.add_argument("--modes", default="auto,dense",
                    help="search modes for the task queries, comma-separated (the façade's default is auto)")
    ap.add_argument("--k", type=int, default=10, help="hits per query (MRR cut-off)")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    store = store_dir(args.store or Path("/tmp/trajsearch-eval") / re.sub(r"[^A-Za-z0-9_.-]+", "-", args.model),
                      fresh=args.fresh)
    print(f"# trajsearch quality evaluation (leave-one-out)\n\n{machine_note()}\nstore: {store}\n")

    real = read_real_runs(tenant=TENANT)
    runs = real.runs
    dataset = {t.trajectory_id: "tau-bench" for t in real.tau} | {t.trajectory_id: "mini-swe-agent" for t in real.swe}
    print(f"parsed {len(real.tau)} tau-bench + {len(real.swe)} mini-swe-agent runs in {real.seconds:.1f} s "
          f"({len(real.rejected)} rejected) from {TAU_FILE.parent} and {SWE_DIR}")
    for line in real.rejected[:5]:
        print("  rejected:", line)

    model, seconds = load_model(args.model)
    print(f"model {args.model} loaded in {seconds:.1f} s")
    ts = open_store(store, model)
    try:
        done = [0]

        def progress(n: int) -> None:
            done[0] += n
            if done[0] % 64 < n or done[0] == len(runs):
                print(f"  ingest {done[0]}/{len(runs)} runs", flush=True)

        with Stopwatch() as sw:
            report = ts.add(runs, on_progress=progress)
        rate = f"{report.rows / sw.seconds:.1f} texts/s" if report.rows else "cached"
        print(f"ingest: {report.ingested} new/changed, {report.unchanged} unchanged, "
              f"{len(report.rejected)} rejected, {report.rows} rows embedded in {sw.seconds:.1f} s ({rate})")
        stats = ts.stats(tenant=TENANT)
        print(f"store: {stats['trajectories']} runs, {stats['rows']} rows {stats['rows_by_level']}\n")

        by_task: dict[str, list[str]] = defaultdict(list)
        for t in runs:
            by_task[t.task_id or ""].append(t.trajectory_id)
        queries = [t for t in runs if t.task_id and len(by_task[t.task_id]) > 1]
        skipped = len(runs) - len(queries)

        # Query embedding once, up front (the searches below hit the cache).
        embedder = CachedEmbedder(model)
        ts.embedder = embedder
        with Stopwatch() as sw:
            texts = list(dict.fromkeys(t.task for t in queries))
            embedder.add(texts, model.encode(texts))
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        for mode in modes:
            hybrid = sum(1 for t in queries if resolve_mode(mode, t.task) == "hybrid")
            print(f"search mode {mode!r}: {hybrid} of {len(queries)} task queries resolve to hybrid")
        print(f"embedded {len(texts)} distinct query texts in {sw.seconds:.1f} s; "
              f"{len(queries)} queries, {skipped} runs skipped (no other run of their task)\n")

        results: dict[str, dict[str, list[int | None]]] = {}
        leaks = 0
        timings = {}
        for mode in modes:
            for name, levels in LEVEL_SETS.items():
                ranks: dict[str, list[int | None]] = defaultdict(list)
                with Stopwatch() as sw:
                    for t in queries:
                        hits = ts.search(t.task, tenant=TENANT, levels=levels, k=args.k, mode=mode,
                                         exclude_trajectory_ids=[t.trajectory_id])
                        leaks += sum(1 for h in hits if h.trajectory_id == t.trajectory_id)
                        ranks[dataset[t.trajectory_id]].append(_rank([h.task_id for h in hits], t.task_id))
                results[f"task -> {name}, {mode}"] = ranks
                timings[f"{name} {mode}"] = sw.seconds / max(len(queries), 1)

        rows = []
        for name, ranks in results.items():
            rows += _rows(name, ranks)

        # Bonus: "runs like this broken one" by id (anchor = the run's failure row),
        # in its default mode (hybrid) and dense only.
        failed = [t for t in queries if t.outcome in (Outcome.failure, Outcome.infra_error)]
        for mode in ("hybrid", "dense"):
            sim: dict[str, list[int | None]] = defaultdict(list)
            with Stopwatch() as sw:
                for t in failed:
                    matches = ts.similar_runs(trajectory_id=t.trajectory_id, tenant=TENANT, k=5, mode=mode)
                    leaks += sum(1 for m in matches if m.trajectory_id == t.trajectory_id)
                    sim[dataset[t.trajectory_id]].append(_rank([m.best.task_id for m in matches], t.task_id))
            timings[f"similar_runs {mode}"] = sw.seconds / max(len(failed), 1)
            rows += _rows(f"similar_runs(id), failed runs, {mode}", sim)
        rows += _chance_rows("chance (random ranking)", queries, dataset, by_task, len(runs), args.k)

        print(table(["query -> levels, mode", "dataset", "queries", "recall@1", "recall@5", f"MRR@{args.k}"], rows))
        print(f"\n(similar_runs returns k=5 runs, so its MRR is MRR@5.) excluded run leaked into results: {leaks} times")
        print("mean seconds per query incl. filter/grouping: "
              + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in timings.items())
              + f"; anchors embedded on demand: {embedder.misses}")
        outcomes = Counter((dataset[t.trajectory_id], t.outcome.value) for t in failed)
        print(f"failed-run anchors: {dict(outcomes)}")
        print(f"peak RSS {peak_rss_mb():.0f} MiB")

        if args.json:
            payload = {
                "rows": [dict(zip(["query", "dataset", "n", "recall@1", "recall@5", "mrr"], r)) for r in rows],
                "leaks": leaks,
                "ingest": report.to_dict(),
                "queries": len(queries),
                "skipped": skipped,
            }
            args.json.write_text(json.dumps(payload, indent=2))
    finally:
        ts.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
