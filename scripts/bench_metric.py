"""Inner product against COSINE for the embedded dense index, side by side on one store.

Milvus Lite 3.x answers a FLAT search in numpy, and for ``COSINE`` it divides every stored
vector in scope by its norm on every query; trajsearch's vectors are unit length, so ``IP``
ranks them identically without that work. This script measures what that costs, on a copy of
an existing store (its own rows, nothing re-embedded): the copy's dense index is set to one
metric, then the other (release, drop, create, load: the rows stay), in alternating rounds,
and the same queries run as ``TrajSearch.search_filtered`` does them (dense, k=10, one hit per
run) in the store's biggest and smallest tenant. Queries are stored step vectors of the
tenant plus noise (no model needed). Reported per metric and tenant: p50 / p95 in ms, the
ratio IP / COSINE of the p50s, and whether both metrics returned the same runs in the same
order with scores within 1e-5.

A store to run it on: ``python scripts/bench_scale.py --rows 100000 --cache DIR`` leaves one
in ``DIR/rows-100000`` (any trajsearch store directory holding ``milvus.db`` will do).

    python scripts/bench_metric.py --store /tmp/trajsearch-bench-scale/cache/rows-100000
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from _common import machine_note, p50, p95, table  # noqa: E402

from trajsearch.store.filters import Filters  # noqa: E402
from trajsearch.store.index import COLLECTION, IndexSettings, TrajectoryIndex  # noqa: E402
from trajsearch.store.migrate import replace_dense_index  # noqa: E402

K = 10


def set_metric(index: TrajectoryIndex, metric: str) -> float:
    """Rebuild the copy's FLAT index with ``metric`` as an upgrade does (rows untouched); the seconds it took."""
    start = time.perf_counter()
    replace_dense_index(index, metric)
    index.client.load_collection(COLLECTION)
    index.search_params = {"metric_type": metric, "params": {}}
    return time.perf_counter() - start


def queries(index: TrajectoryIndex, tenant: str, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    vectors = [np.asarray(r["embedding"], dtype=np.float32)
               for r in index.iterate(["embedding"], expr=Filters(tenant=tenant, levels=("step",)).to_expr(),
                                      tenant=tenant, levels=("step",))]
    picked = [vectors[i] for i in rng.choice(len(vectors), size=min(n, len(vectors)), replace=False)]
    noisy = [v + rng.normal(scale=0.3 / np.sqrt(v.size), size=v.size).astype(np.float32) for v in picked]
    return [v / np.linalg.norm(v) for v in noisy]


def _same(a: list[tuple[str, float]], b: list[tuple[str, float]]) -> bool:
    """The same runs in the same order, with scores within 1e-5."""
    return [t for t, _ in a] == [t for t, _ in b] and all(abs(x - y) < 1e-5 for (_, x), (_, y) in zip(a, b))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True,
                    help="a store directory holding milvus.db (copied, not changed)")
    ap.add_argument("--queries", type=int, default=20, help="queries per tenant")
    ap.add_argument("--rounds", type=int, default=4, help="alternating rounds (each metric gets half)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(machine_note())
    work = Path(tempfile.mkdtemp(prefix="bench-metric-"))
    try:
        shutil.copytree(args.store, work / "store")
        settings_probe = IndexSettings("all-MiniLM-L6-v2", 384, 3, 2)
        index = TrajectoryIndex(str(work / "store" / "milvus.db"), settings_probe)  # migrates an older copy first
        sizes = {t: index.count(t) for t in index.tenants()}
        tenants = list(dict.fromkeys([max(sizes, key=sizes.get), min(sizes, key=sizes.get)]))  # one, if only one
        rng = np.random.default_rng(args.seed)
        asked = {t: queries(index, t, args.queries, rng) for t in tenants}
        times: dict[tuple[str, str], list[float]] = {}
        answers: dict[tuple[str, str], list[list[tuple[str, float]]]] = {}
        switches = []
        for round_ in range(args.rounds):
            metric = ("IP", "COSINE")[round_ % 2]
            switches.append(set_metric(index, metric))
            for tenant in tenants:
                f = Filters(tenant=tenant)
                index.search(asked[tenant][0], f, limit=K, group_by_trajectory=True)  # warm
                got = []
                for q in asked[tenant]:
                    start = time.perf_counter()
                    hits = index.search(q, f, limit=K, group_by_trajectory=True)
                    times.setdefault((metric, tenant), []).append(time.perf_counter() - start)
                    got.append([(h["trajectory_id"], h["score"]) for h in hits])
                answers.setdefault((metric, tenant), got)
        rows = []
        for tenant in tenants:
            ip, cos = times[("IP", tenant)], times[("COSINE", tenant)]
            same = all(_same(a, b) for a, b in zip(answers[("IP", tenant)], answers[("COSINE", tenant)]))
            rows.append([tenant, sizes[tenant], f"{p50(cos) * 1e3:.1f} / {p95(cos) * 1e3:.1f}",
                         f"{p50(ip) * 1e3:.1f} / {p95(ip) * 1e3:.1f}", f"{p50(ip) / p50(cos):.2f}",
                         "yes" if same else "NO"])
        print(f"\n{sum(sizes.values())} rows; dense search, k={K}, one hit per run; {args.queries} queries per tenant "
              f"x {args.rounds // 2} rounds per metric, alternating; index rebuilds took p50 {p50(switches):.1f} s\n")
        print(table(["tenant", "rows (dense levels)", "COSINE p50 / p95 ms", "IP p50 / p95 ms", "IP / COSINE",
                     "same runs, order, scores"], rows))
        print("\n" + machine_note())
        index.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
