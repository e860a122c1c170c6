"""Agent-context benchmark: ``Runtime.context_for`` p50/p95 at ~10k rows of real runs, with
the searches such a call makes timed beside it, in one run (target: context p50 <= 50 ms).

What an agent pays before its first step is one ``context_for`` call. Exemplar and warning
digests are now worked out at ingest (stored in the summary and failure rows' ``steps``), and
diversity compares the stored summary vectors, so a call should cost its searches plus a little
assembly. This script checks that at size, and shows how big "a little" is.

Store. Every real run of ../shared/data (tau-bench airline and mini-swe-agent, parsed with
``read_dump``) goes through ``TrajSearch.add`` with the real model into an embedded Milvus Lite
store, then copies of real runs (the same run under a new trajectory id, ``<id>+c<n>``, a
day older per copy, in a seeded shuffled order over both datasets) until the tenant holds
``--rows`` rows of the searched levels (task, summary, step, failure: ``index.count(tenant)``, the
rows bench_core.py counts); the passage rows (clipped parts of long outputs, lexical only, kept in
a partition of their own) come on top and are reported apart. Vectors come
through a ``DiskCachedEmbedder`` (``--emb-cache``): a copy shares its source's texts and a rerun
shares everything, so only texts never embedded before cost model time. The store is kept in
``--work`` and reused when present (``add`` skips unchanged runs); ``--fresh`` rebuilds it.

Queries. Held-out in-domain tasks: the tasks of ``--queries`` real runs spread over both
datasets (two thirds tau-bench), each asked with that run and all its copies excluded
(``exclude_trajectory_ids``), so exemplars come from other runs; and the novel tasks of
scripts/ood_tasks.txt (nothing like the library: the plan-from-scratch path). Each task is
asked ``--repeat`` times (rounds over all tasks, operation order rotated per task), after an
untimed warm-up on other tasks. Per task, timed one after another:

- query embedding alone: the model's ``encode`` of the one task text (ONNX Runtime fp32);
- ``ts.search`` dense / lexical / hybrid (k=10, one hit per run, tenant filter), the query
  embedding included (the façade's query-vector cache is emptied before each call);
- ``Runtime.context_for`` (text, default budget), the query embedding included, and inside it:
  how many searches it made and texts it embedded, the time in the searches (``search_filtered``,
  embedding included, and ``lexical_runs``), in the by-key run lookups (``TrajSearch.runs``:
  summary rows with digests and vectors; ``score_runs``: the rows of runs found by what they
  touched), in the model, and the rest (rerank, diversity, digests to views, token counting,
  rendering).

Reported: median (p50) and p95 of each, in ms, for held-out tasks that got exemplars and for
the novel tasks apart; strategy counts and rendered tokens. The machine's load average is
printed before and after (a shared machine: other processes run, timings are noisy).

    python scripts/bench_context.py                              # ~10k rows, 32 held-out tasks
    python scripts/bench_context.py --work /tmp/ctx --repeat 5   # reuse a store, more samples
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DiskCachedEmbedder, Stopwatch, TimedEmbedder, load_model, machine_note, open_store  # noqa: E402
from _common import OOD_TASKS, ood_tasks, p50, p95, peak_rss_mb, read_real_runs, spread, store_dir, table  # noqa: E402

from trajsearch.model import Trajectory  # noqa: E402
from trajsearch.represent import represent  # noqa: E402
from trajsearch.runtime import NoveltyConfig, Runtime, RuntimeContext, Strategy  # noqa: E402
from trajsearch.runtime.calibration import calibrate  # noqa: E402
from trajsearch.search import TrajSearch  # noqa: E402

TENANT = "bench"
TARGET_MS = 50.0
K = 10


# -- store ---------------------------------------------------------------------------------


def copy_of(run: Trajectory, n: int) -> Trajectory:
    """``run`` under a new id (``<id>+c<n>``), ``n`` days older: the same texts, another run."""
    return run.model_copy(update={"trajectory_id": f"{run.trajectory_id}+c{n}",
                                  "created_at": run.created_at - timedelta(days=n)})


def library(real: list[Trajectory], target: int, ts: TrajSearch,
            seed: int) -> tuple[list[Trajectory], dict[str, list[str]]]:
    """Every real run, then copies (a seeded shuffle of all runs, round after round) until their
    rows reach ``target``; and the ids of each real run's copies."""
    sizes = {r.trajectory_id: sum(row.level != "passage" for row in represent(r, window=ts.window)) for r in real}
    runs, rows = list(real), sum(sizes.values())
    copies: dict[str, list[str]] = {r.trajectory_id: [] for r in real}
    order = list(real)
    random.Random(seed).shuffle(order)
    n = 0
    while rows < target:
        n += 1
        for run in order:
            if rows >= target:
                break
            runs.append(copy_of(run, n))
            copies[run.trajectory_id].append(runs[-1].trajectory_id)
            rows += sizes[run.trajectory_id]
    return runs, copies


def build(ts: TrajSearch, runs: list[Trajectory]) -> tuple[Any, float]:
    with Stopwatch() as sw:
        report = ts.add(runs)
        ts.index.flush()
    return report, sw.seconds


# -- timing --------------------------------------------------------------------------------


class Probe:
    """Times what a ``context_for`` call spends in searches, run lookups and the model, by
    wrapping the façade's ``search_filtered`` and ``lexical_runs`` (searches), ``runs`` and
    ``score_runs`` (lookups by key) on the instance (the runtime calls them through the
    instance) and the embedder (a :class:`TimedEmbedder`)."""

    def __init__(self, ts: TrajSearch, embedder: TimedEmbedder) -> None:
        self.ts, self.embedder = ts, embedder
        self.searches = 0
        self.search_s = self.runs_s = 0.0
        ts.search_filtered = self._timed(ts.search_filtered, "search")  # type: ignore[method-assign]
        ts.lexical_runs = self._timed(ts.lexical_runs, "search")  # type: ignore[method-assign]
        ts.runs = self._timed(ts.runs, "runs")  # type: ignore[method-assign]
        ts.score_runs = self._timed(ts.score_runs, "runs")  # type: ignore[method-assign]

    def _timed(self, fn: Callable[..., Any], kind: str) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if kind == "search":
                    self.searches += 1
                    self.search_s += time.perf_counter() - start
                else:
                    self.runs_s += time.perf_counter() - start
        return wrapper

    def reset(self) -> None:
        """Before each timed call: counters to zero, the query-vector cache emptied (the
        ``embedder`` setter makes a fresh one), so every call embeds its query."""
        self.searches, self.search_s, self.runs_s = 0, 0.0, 0.0
        self.embedder.seconds, self.embedder.texts = 0.0, 0
        self.ts.embedder = self.embedder


def measure(ts: TrajSearch, rt: Runtime, probe: Probe, model: Any, ctx: RuntimeContext, task: str,
            exclude: list[str], rotate: int, out: dict[str, list[float]], result: dict[str, Any]) -> None:
    """One round of every operation on ``task``, in rotated order; times (s) into ``out``."""

    def embed() -> None:
        start = time.perf_counter()
        model.encode([task])
        out["embed"].append(time.perf_counter() - start)

    def searcher(mode: str) -> Callable[[], None]:
        def run() -> None:
            probe.reset()
            start = time.perf_counter()
            ts.search(task, tenant=ctx.tenant, k=K, mode=mode, exclude_trajectory_ids=exclude)
            out[mode].append(time.perf_counter() - start)
        return run

    def context() -> None:
        probe.reset()
        start = time.perf_counter()
        prompt = rt.context_for(task, ctx, exclude_trajectory_ids=exclude)
        total = time.perf_counter() - start
        out["context"].append(total)
        out["ctx_searches"].append(probe.searches)
        out["ctx_search"].append(probe.search_s)
        out["ctx_runs"].append(probe.runs_s)
        out["ctx_embed"].append(probe.embedder.seconds)
        out["ctx_texts"].append(probe.embedder.texts)
        out["ctx_rest"].append(total - probe.search_s - probe.runs_s)
        result.update(strategy=prompt.strategy, tokens=prompt.tokens, exemplars=len(prompt.exemplars),
                      warnings=len(prompt.warnings))

    ops = [embed, searcher("dense"), searcher("lexical"), searcher("hybrid"), context]
    rotate %= len(ops)
    for op in ops[rotate:] + ops[:rotate]:
        op()


def ms(values: list[float], q: Callable[[list[float]], float]) -> float:
    return q(values) * 1e3 if values else float("nan")


# -- main ----------------------------------------------------------------------------------


def main() -> int:
    default_work = Path(tempfile.gettempdir()) / "trajsearch-bench-context"
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000, help="rows of the searched levels (passages come on top)")
    ap.add_argument("--queries", type=int, default=32, help="held-out in-domain tasks (2/3 tau-bench, 1/3 mini-swe)")
    ap.add_argument("--novel", type=int, default=0, help="novel tasks from --ood (0: all of them)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds over all tasks (samples per task)")
    ap.add_argument("--warmup", type=int, default=4, help="untimed warm-up tasks (other runs' tasks)")
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--work", type=Path, default=default_work, help="where the store is kept and reused")
    ap.add_argument("--emb-cache", type=Path, help="vectors by text between runs (default: <work>/emb-cache.npz)")
    ap.add_argument("--ood", type=Path, default=OOD_TASKS)
    ap.add_argument("--fresh", action="store_true", help="rebuild the store")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    started = time.perf_counter()
    print(f"# trajsearch agent-context benchmark\n\n{machine_note()}\nwork dir: {args.work}\n")
    real = read_real_runs(TENANT)
    print(f"parsed {len(real.runs)} real runs ({len(real.tau)} tau-bench, {len(real.swe)} mini-swe-agent) "
          f"with read_dump in {real.seconds:.1f} s")
    model, seconds = load_model(args.model)
    print(f"model {args.model} ({type(model).__name__}) loaded in {seconds:.1f} s")

    # -- store: real runs plus copies up to --rows, embedded through the disk cache ---------------
    cache = DiskCachedEmbedder(model, args.emb_cache or args.work / "emb-cache.npz")
    cached_before = len(cache.table)
    ts = open_store(store_dir(args.work / f"store-{args.rows}", fresh=args.fresh), cache)
    runs, copies = library(real.runs, args.rows, ts, args.seed)
    report, build_s = build(ts, runs)
    embedded = len(cache.table) - cached_before
    cache.save()
    levels = Counter(row["level"] for row in ts.index.iterate(["level"], tenant=TENANT))
    passages = ts.index.count() - ts.index.count(TENANT)  # one tenant: the rest is its passage partition
    print(f"store: {len(runs)} runs ({len(real.runs)} real + {len(runs) - len(real.runs)} copies), "
          f"{report.ingested} ingested now, {report.unchanged} unchanged, in {build_s:.0f} s; "
          f"{embedded} texts embedded by the model "
          f"(emb cache {cache.path}: {len(cache.table)} texts)")
    print(f"rows: {ts.index.count(TENANT)} ({', '.join(f'{n} {lvl}' for lvl, n in levels.most_common())}), "
          f"and {passages} passage rows\n")

    # -- queries ----------------------------------------------------------------------------------
    timed = TimedEmbedder(model)  # queries go to the model itself: the disk cache would serve stored tasks
    probe = Probe(ts, timed)
    rt = Runtime(ts)
    ctx = RuntimeContext(tenant=TENANT)
    n_tau = round(args.queries * 2 / 3)
    held = spread(real.tau, n_tau) + spread(real.swe, args.queries - n_tau)
    held_ids = {r.trajectory_id for r in held}
    novel = ood_tasks(args.ood)
    novel = novel[: args.novel] if args.novel else novel
    warm = [r for r in spread(real.tau[1:], 40) + spread(real.swe[1:], 20) if r.trajectory_id not in held_ids]
    warm = spread(warm, args.warmup)

    def exclude(run: Trajectory | None) -> list[str]:
        return [run.trajectory_id, *copies[run.trajectory_id]] if run is not None else []

    # the tenant's novelty threshold is measured on its first call and cached (NoveltyConfig.recalibrate_seconds):
    # one search per sampled task and per probe task; the first time also embeds the probes
    calibrations = []
    for _ in range(3):
        with Stopwatch() as sw:
            calibration = calibrate(ts, TENANT)
        calibrations.append(sw.seconds * 1000)
    print(f"novelty calibration of the tenant (once per {NoveltyConfig().recalibrate_seconds:.0f} s): first "
          f"{calibrations[0]:.0f} ms, then median {statistics.median(calibrations[1:]):.0f} ms; threshold "
          f"{calibration.threshold:.3f} ({calibration.basis}; {calibration.tasks} tasks)\n")

    for run in warm:  # untimed: first calls pay one-off costs (ONNX session, Milvus segments, tokenizer)
        measure(ts, rt, probe, model, ctx, run.task, exclude(run), 0, defaultdict(list), {})

    tasks = [("held", r.task, exclude(r)) for r in held] + [("novel", t, []) for t in novel]
    samples: dict[tuple[str, int], dict[str, list[float]]] = {}  # by (column, task number)
    results: dict[tuple[str, int], dict[str, Any]] = {}
    with Stopwatch() as timing:
        for round_ in range(args.repeat):
            for i, (group, task, excluded) in enumerate(tasks):
                result: dict[str, Any] = {}
                out = defaultdict(list)
                measure(ts, rt, probe, model, ctx, task, excluded, i + round_, out, result)
                results[(group, i)] = result
                # held-out tasks that got no exemplars are reported on their own row
                key = group if group == "novel" or result["exemplars"] else "held-none"
                bucket = samples.setdefault((key, i), defaultdict(list))
                for name, values in out.items():
                    bucket[name].extend(values)

    def pooled(key: str) -> dict[str, list[float]]:
        pool = defaultdict(list)
        for (k, _), bucket in samples.items():
            if k == key:
                for name, values in bucket.items():
                    pool[name].extend(values)
        return pool

    groups = [("held", "held-out tasks with exemplars"), ("novel", "novel tasks (ood_tasks.txt)"),
              ("held-none", "held-out tasks without exemplars")]
    pools = {key: pooled(key) for key, _ in groups}
    groups = [(key, label) for key, label in groups if pools[key]["context"]]
    n_tasks = {key: sum(1 for (k, _) in samples if k == key) for key, _ in groups}

    print(f"## Latency at {ts.index.count(TENANT)} rows (ms; {args.repeat} rounds, "
          f"p50 = median; {timing.seconds:.0f} s of timed calls)\n")
    headers = ["operation"]
    for key, label in groups:
        headers += [f"{label} p50", "p95"]
    rows_out = []
    spec = [
        ("query embedding alone (model.encode, 1 text)", "embed"),
        ("ts.search dense (k=10, grouped), embedding incl.", "dense"),
        ("ts.search lexical (k=10, grouped)", "lexical"),
        ("ts.search hybrid (k=10, grouped), embedding incl.", "hybrid"),
        ("**Runtime.context_for** (text, budget 2000)", "context"),
        ("  in it: time in its searches (embedding incl.)", "ctx_search"),
        ("  in it: model (query embedding)", "ctx_embed"),
        ("  in it: run lookups by key (ts.runs, ts.score_runs)", "ctx_runs"),
        ("  in it: the rest (rerank, diversity, render)", "ctx_rest"),
    ]
    for label, name in spec:
        row: list[Any] = [label]
        for key, _ in groups:
            row += [ms(pools[key][name], p50), ms(pools[key][name], p95)]
        rows_out.append(row)
    for label, name in (("  in it: searches per call (p50 / max)", "ctx_searches"),
                        ("  in it: texts embedded per call (p50 / max)", "ctx_texts")):
        row = [label]
        for key, _ in groups:
            row += [f"{p50(pools[key][name]):.0f}", f"max {max(pools[key][name]):.0f}"]
        rows_out.append(row)
    print(table(headers, rows_out))
    print("\n(each row's median on its own: the parts of context_for need not add up to its median; "
          "'in it: time in its searches' includes the model time of the row below it)")
    print("tasks per column: " + ", ".join(f"{label} {n_tasks[key]} x {args.repeat} = "
                                         f"{len(pools[key]['context'])} samples" for key, label in groups))

    # -- strategies and tokens --------------------------------------------------------------------
    print("\n## Strategies and tokens (one render per task)\n")
    stats_rows = []
    for group, label in (("held", "held-out in-domain"), ("novel", "novel (ood_tasks.txt)")):
        found = [r for (g, _), r in results.items() if g == group]
        if not found:
            continue
        strategies = Counter(r["strategy"].value for r in found)
        tokens = [r["tokens"] for r in found]
        stats_rows.append([
            label, len(found),
            " ".join(f"{s.value} {strategies.get(s.value, 0)}" for s in Strategy),
            f"{p50([r['exemplars'] for r in found]):.0f}", f"{p50([r['warnings'] for r in found]):.0f}",
            f"{p50(tokens):.0f}", f"{max(tokens)}",
        ])
    print(table(["tasks", "n", "strategies", "exemplars p50", "warnings p50", "tokens p50", "tokens max"], stats_rows))

    held_p50 = ms(pools["held"]["context"], p50) if "held" in pools and pools["held"]["context"] else float("nan")
    verdict = "met" if held_p50 <= TARGET_MS else "NOT met"
    print(f"\ntarget context_for p50 <= {TARGET_MS:.0f} ms (held-out tasks with exemplars): "
          f"{held_p50:.1f} ms, {verdict}")
    print(f"\n{machine_note()}")
    print(f"peak RSS of this process {peak_rss_mb():.0f} MiB; "
          f"wall time {time.perf_counter() - started:.0f} s")
    ts.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
