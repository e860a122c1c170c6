"""Milvus Lite's dense search: the engine's own executor against trajsearch's, side by side (issue 12).

milvus-lite 3.2.2 walks every row of the searched partitions in Python twice per dense search
(newest version per key, live-row mask) and copies the partition's whole vector matrix before
a product that takes a tenth of the copy's time; trajsearch/store/lite_search.py answers the
same search without the walks and the copy, bit for bit the same. This script times both on
one store, alternating per query (who goes first alternates too), and compares every answer
whole (ids, order, scores, fields):

- ``TrajectoryIndex.search`` grouped (k=10, one row per run) and ungrouped (k=10), tenant
  filter only: every level of the tenant, the search the scale table times;
- ``ts.search`` hybrid (k=10, one hit per run);
- ``Runtime.context_for`` for real tasks of ../shared/data (each run and its copies excluded).

Store: every real run of ../shared/data plus copies (``scripts/bench_context.py``'s library)
until ``--rows`` rows in one tenant, embedded with the *hashing test embedder* (fast and
deterministic: the executor's costs do not depend on what the vectors mean, and no model time
hides them), kept in ``--work`` and reused.

    python scripts/bench_lite_search.py                       # 10k rows, 32 tasks, 3 rounds
    python scripts/bench_lite_search.py --rows 50000 --repeat 2
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_note  # noqa: E402

from bench_context import TENANT  # noqa: E402
from bench_reads import arguments, hashing_library, side_by_side  # noqa: E402
from trajsearch.runtime import Runtime, RuntimeContext  # noqa: E402
from trajsearch.store import lite_search  # noqa: E402
from trajsearch.store.filters import Filters  # noqa: E402

WAYS = ("trajsearch", "engine")
CALLS = ("dense grouped", "dense", "hybrid", "context_for")


def main() -> int:
    args = arguments(__doc__, Path("/tmp/trajsearch-bench-lite-search"))
    print(f"# trajsearch: Milvus Lite dense search, the engine's executor against trajsearch's\n\n{machine_note()}\n")
    if not lite_search.install():
        print("this milvus-lite is not the version trajsearch's executor replaces: nothing to compare")
        return 1
    ts, copies, tasks = hashing_library(args)
    try:
        ts.index.flush()
        rt, ctx, tenant = Runtime(ts), RuntimeContext(tenant=TENANT), Filters(tenant=TENANT)

        def calls(run: Any) -> dict[str, Callable[[], Any]]:
            exclude = [run.trajectory_id, *copies[run.trajectory_id]]
            query = ts.embed([run.task[:300]])[0]
            return {
                "dense grouped": lambda: ts.index.search(query, tenant, limit=10, group_by_trajectory=True),
                "dense": lambda: ts.index.search(query, tenant, limit=10),
                "hybrid": lambda: [h.to_dict() for h in ts.search(run.task[:300], tenant=TENANT, k=10, mode="hybrid")],
                "context_for": lambda: rt.context_for(run.task, ctx, exclude_trajectory_ids=exclude).text,
            }

        times: dict[tuple[str, str], list[float]] = {}
        differ = compared = 0
        for round_ in range(args.repeat + 1):  # round 0 warms both ways up, untimed
            for i, run in enumerate(tasks):
                for name, call in calls(run).items():
                    answers = []
                    for way in WAYS if (i + round_) % 2 else WAYS[::-1]:
                        lite_search.install() if way == "trajsearch" else lite_search.uninstall()
                        start = time.perf_counter()
                        answers.append(call())
                        if round_:
                            times.setdefault((name, way), []).append(time.perf_counter() - start)
                    differ += answers[0] != answers[1]
                    compared += 1
        lite_search.install()
    finally:
        ts.close()

    print(f"\n## {len(tasks)} tasks x {args.repeat} rounds, p50 / p95 in ms (no model time: hashing test embedder)\n")
    print(side_by_side(times, CALLS, WAYS))
    print(f"\nanswers that differ between the two executors: {differ} of {compared}")
    print(f"\n{machine_note()}")
    return 0 if differ == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
