"""Benchmark re-ingesting a store after a representation upgrade, side by side in one run.

A store is built from the real dumps in ../shared/data (real model) by the previous representation
(version 3: no definitions in the summaries' Touched line; monkeypatched here, as the tests do),
copied, and each copy re-ingested with today's code three ways, in one process, each round in a
rotated order (the machine is shared):

- *today*: rows whose text and vector recipe are unchanged keep their stored vectors
  (``indexer.reusable_vectors``), and the changed runs of a batch are deleted by one filtered delete
  per tenant (``TrajectoryIndex.delete_runs``);
- *before*: every row embedded again, and one filtered delete per run (how stop 33 re-ingested);
- *fresh*: the same runs into an empty store (what a re-ingest competes with).

Then today's re-ingested store is checked against the fresh one: the same row ids, texts, and
vectors (cosine >= 0.9999). Reported: medians over ``--rounds`` of seconds and texts embedded.

    python scripts/bench_reingest.py                # 1 round, about 6 minutes on 2 cores
    python scripts/bench_reingest.py --rounds 3
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Iterator
from unittest.mock import patch

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Stopwatch, load_model, machine_note, open_store, read_real_runs, table  # noqa: E402
from eval_generalise import tenant_of  # noqa: E402 - one tenant per repository / domain, as there

import trajsearch.indexer as indexer_module  # noqa: E402
import trajsearch.represent as represent_module  # noqa: E402
from trajsearch.store.index import TrajectoryIndex  # noqa: E402
from trajsearch.touched import Touched, touched  # noqa: E402


@contextmanager
def version_3() -> Iterator[None]:
    """The representation before this one: version 3, no definitions in the Touched line."""
    def without_definitions(run: Any) -> Touched:
        found = touched(run)
        found.defined = {}
        return found

    with patch.object(represent_module, "REPRESENTATION_VERSION", 3), patch.object(represent_module, "touched", without_definitions):
        yield


@contextmanager
def as_before() -> Iterator[None]:
    """Today's code re-ingesting as stop 33 did: no stored vector kept, one delete per run."""
    def one_by_one(self: TrajectoryIndex, runs: Any) -> None:
        for run in runs:
            original(self, [run])

    original = TrajectoryIndex.delete_runs
    with patch.object(indexer_module, "reusable_vectors", lambda *a, **k: {}), \
            patch.object(TrajectoryIndex, "delete_runs", one_by_one):
        yield


class Counted:
    """The model, counting the texts it embeds."""

    def __init__(self, model: Any) -> None:
        self.model, self.texts = model, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def encode(self, texts: Any, **kw: Any) -> Any:
        self.texts += len(texts)
        return self.model.encode(texts, **kw)

    def encode_documents(self, texts: Any, **kw: Any) -> Any:
        self.texts += len(texts)
        return self.model.encode_documents(texts, **kw)


def ingest(directory: Path, runs: list, model: Counted) -> tuple[float, int, Any]:
    model.texts = 0
    with open_store(directory, model) as ts, Stopwatch() as sw:
        report = ts.add(runs)
    return sw.seconds, model.texts, report


def rows_of(directory: Path, model: Counted) -> dict[str, tuple[str, np.ndarray]]:
    with open_store(directory, model) as ts:
        return {r["id"]: (r["text"], np.asarray(r["embedding"], dtype=np.float32))
                for r in ts.index.iterate(["id", "text", "embedding"])}


def same_store(a: dict, b: dict) -> str:
    if set(a) != set(b):
        return f"different rows: {len(set(a) ^ set(b))} ids in one store only"
    texts = sum(a[i][0] != b[i][0] for i in a)
    cosines = [float(a[i][1] @ b[i][1] / (np.linalg.norm(a[i][1]) * np.linalg.norm(b[i][1]))) for i in a]
    return f"{len(a)} rows, same ids; texts differing {texts}; lowest vector cosine {min(cosines):.6f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    args = ap.parse_args()
    print(f"# trajsearch: re-ingest after a representation upgrade\n\n{machine_note()}\n")
    real = read_real_runs()
    runs = [r.model_copy(update={"tenant": tenant_of(r)}) for r in real.tau + real.swe]
    model = Counted(load_model(args.model)[0])
    work = Path(tempfile.mkdtemp(prefix="trajsearch-bench-reingest-"))
    try:
        with version_3():
            seconds, texts, report = ingest(work / "v3", runs, model)
        print(f"{len(runs)} runs, {report.rows} rows; the version-3 store took {seconds:.1f} s ({texts} texts embedded)\n")
        results: dict[str, list[tuple[float, int]]] = {"today": [], "before": [], "fresh": []}
        ways = list(results)
        for round_ in range(args.rounds):
            for way in ways[round_ % 3:] + ways[: round_ % 3]:
                target = work / f"{way}-{round_}"
                if way != "fresh":
                    shutil.copytree(work / "v3", target)
                with as_before() if way == "before" else nullcontext():
                    seconds, texts, report = ingest(target, runs, model)
                assert report.ingested == len(runs), report
                results[way].append((seconds, texts))
        check = same_store(rows_of(work / "today-0", model), rows_of(work / "fresh-0", model))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [[way, f"{statistics.median(s for s, _ in got):.1f}", f"{statistics.median(t for _, t in got):.0f}"]
            for way, got in results.items()]
    print(table(["re-ingest", "seconds (median)", "texts embedded"], rows))
    print(f"\ntoday's re-ingested store against the fresh one: {check}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
