"""Reads on an embedded store, in-process against through gRPC, side by side in one run (issue 12).

pymilvus serves a local path by running Milvus Lite's gRPC server inside this process;
``TrajectoryIndex.reads`` asks the engine directly instead (trajsearch/store/lite.py).
This script times the same work both ways on one store, alternating per task:

- ``Runtime.context_for`` for real tasks of ../shared/data (held out: each run and its
  copies excluded), whose searches and lookups by key are all reads;
- ``ts.search`` dense, lexical and hybrid (k=10, one hit per run) for the same tasks;

and checks that both ways return the same runs in the same order.

Store: every real run of ../shared/data plus copies (``scripts/bench_context.py``'s library)
until ``--rows`` rows, embedded with the *hashing test embedder* (fast and deterministic:
read costs do not depend on what the vectors mean, and no model time hides them), kept in
``--work`` and reused.

    python scripts/bench_reads.py                    # 10k rows, 32 tasks, 3 rounds
    python scripts/bench_reads.py --rows 30000 --repeat 5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_note, open_store, p50, p95, read_real_runs, spread, store_dir, table  # noqa: E402

from bench_context import TENANT, build, library  # noqa: E402
from trajsearch.embed import HashingEmbedder  # noqa: E402
from trajsearch.model import Trajectory  # noqa: E402
from trajsearch.search import TrajSearch  # noqa: E402
from trajsearch.runtime import Runtime, RuntimeContext  # noqa: E402
from trajsearch.store.lite import InProcessReads  # noqa: E402

WAYS = ("in-process", "gRPC")


def arguments(doc: str, work: Path) -> argparse.Namespace:
    """The options of the side-by-side read benchmarks (this one and bench_lite_search.py)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000, help="rows of the searched levels (as bench_context)")
    ap.add_argument("--tasks", type=int, default=32, help="real tasks (2/3 tau-bench, 1/3 mini-swe-agent)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds over the tasks")
    ap.add_argument("--work", type=Path, default=work)
    ap.add_argument("--fresh", action="store_true", help="rebuild the store")
    return ap.parse_args()


def hashing_library(args: argparse.Namespace) -> tuple[TrajSearch, dict[str, list[str]], list[Trajectory]]:
    """bench_context's library (real runs plus copies up to ``--rows``) with the hashing test embedder,
    built in ``--work`` or reused: the store, each real run's copies, and ``--tasks`` real runs to ask."""
    real = read_real_runs(TENANT)
    ts = open_store(store_dir(args.work, fresh=args.fresh) / f"store-{args.rows}", HashingEmbedder())
    runs, copies = library(real.runs, args.rows, ts, 0)
    report, seconds = build(ts, runs)
    print(f"store: {len(runs)} runs ({report.ingested} ingested now, {report.unchanged} unchanged, "
          f"{seconds:.0f} s), {ts.index.count(TENANT)} rows, hashing test embedder")
    tasks = spread(real.tau, args.tasks * 2 // 3) + spread(real.swe, args.tasks - args.tasks * 2 // 3)
    return ts, copies, tasks


def side_by_side(times: dict[tuple[str, str], list[float]], calls: Sequence[str], ways: Sequence[str]) -> str:
    """A table of each call's p50 and p95 (ms) both ways, and the second way's time over the first's."""
    rows = []
    for name in calls:
        a, b = times[(name, ways[0])], times[(name, ways[1])]
        rows.append([name, f"{1000 * p50(a):.1f}", f"{1000 * p95(a):.1f}", f"{1000 * p50(b):.1f}",
                     f"{1000 * p95(b):.1f}", f"{p50(b) / p50(a):.2f}x"])
    return table(["call", f"{ways[0]} p50", "p95", f"{ways[1]} p50", "p95", f"{ways[1]} / {ways[0]}"], rows)


def main() -> int:
    args = arguments(__doc__, Path("/tmp/trajsearch-bench-reads"))
    print(f"# trajsearch reads: in-process against gRPC\n\n{machine_note()}\n")
    ts, copies, tasks = hashing_library(args)
    try:
        direct = ts.index.reads
        if not isinstance(direct, InProcessReads):
            print("this store's engine is not reachable in-process: nothing to compare")
            return 1
        ways = {"in-process": direct, "gRPC": ts.index.client}
        rt, ctx = Runtime(ts), RuntimeContext(tenant=TENANT)

        def calls(run: Any) -> dict[str, Callable[[], list[str]]]:
            exclude = [run.trajectory_id, *copies[run.trajectory_id]]
            out: dict[str, Callable[[], list[str]]] = {
                "context_for": lambda: [e.trajectory_id for e in rt.context_for(
                    run.task, ctx, exclude_trajectory_ids=exclude).exemplars]}
            for mode in ("dense", "lexical", "hybrid"):
                out[f"search {mode}"] = lambda mode=mode: [h.trajectory_id for h in ts.search(
                    run.task[:300], tenant=TENANT, k=10, mode=mode, exclude_trajectory_ids=exclude)]
            return out

        times: dict[tuple[str, str], list[float]] = {}
        differ = 0
        for round_ in range(args.repeat + 1):  # round 0 warms both ways up, untimed
            for i, run in enumerate(tasks):
                for name, call in calls(run).items():
                    answers = []
                    for way in WAYS if (i + round_) % 2 else WAYS[::-1]:  # who goes first alternates
                        ts.index.reads = ways[way]
                        start = time.perf_counter()
                        answers.append(call())
                        if round_:
                            times.setdefault((name, way), []).append(time.perf_counter() - start)
                    differ += answers[0] != answers[1]
        ts.index.reads = direct
        with_exemplars = sum(bool(rt.context_for(run.task, ctx, exclude_trajectory_ids=[
            run.trajectory_id, *copies[run.trajectory_id]]).exemplars) for run in tasks)
    finally:
        ts.close()

    print(f"\n## {len(tasks)} tasks x {args.repeat} rounds, p50 / p95 in ms (no model time: hashing test embedder)\n")
    print(side_by_side(times, ("context_for", "search dense", "search lexical", "search hybrid"), WAYS))
    print(f"\ncontext_for gave exemplars for {with_exemplars} of {len(tasks)} tasks (the rest: a new task, one search)")
    print(f"answers that differ between the two ways: {differ} of {len(tasks) * 4 * (args.repeat + 1)}")
    print(f"\n{machine_note()}")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
