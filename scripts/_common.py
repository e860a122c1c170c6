"""Helpers shared by the scripts in ``scripts/``: data locations, dump reading,
timing statistics, memory, a query-vector cache and plain-text tables.

Not part of the package: scripts import it as ``from _common import ...``
(``scripts/`` is on ``sys.path`` when a script in it runs).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRAJSEARCH_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
TAU_FILE = DATA / "tau-bench" / "gpt-4o-airline.json"
SWE_DIR = DATA / "mini-swe-agent-dev"


# -- data --------------------------------------------------------------------------------


def swe_files() -> list[Path]:
    """Every mini-swe-agent run file, in a stable order."""
    return sorted(SWE_DIR.glob("*/*/*.traj.json"))


def read_runs(paths: Iterable[Path], *, tenant: str = "default", limit: int | None = None) -> tuple[list, list[str]]:
    """Trajectories parsed from dump files with ``read_dump``, and the rejection messages."""
    from trajsearch.ingest.read import read_dump

    runs, errors = [], []
    for path in paths:
        for parsed in read_dump(path, tenant=tenant):
            if parsed.error is not None:
                errors.append(str(parsed))
            else:
                runs.append(parsed.trajectory)
            if limit is not None and len(runs) >= limit:
                return runs, errors
    return runs, errors


def spread(items: Sequence[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over ``items`` (a deterministic, representative subset)."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


# -- timing and memory -------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=float), q))


def p50(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def p95(values: Sequence[float]) -> float:
    return percentile(values, 95)


class Stopwatch:
    """``with Stopwatch() as sw: ...; sw.seconds``"""

    def __enter__(self) -> Stopwatch:
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start


def _status(key: str) -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def rss_mb() -> float:
    """Current resident set size of this process (Milvus Lite runs in-process), MiB."""
    return _status("VmRSS")


def peak_rss_mb() -> float:
    """Peak resident set size of this process so far, MiB."""
    return _status("VmHWM")


def machine_note() -> str:
    load = os.getloadavg()
    return (
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f}/{load[1]:.2f}/{load[2]:.2f} "
        "(shared machine: other workers run here, timings are noisy)"
    )


# -- embeddings --------------------------------------------------------------------------


@dataclass
class TimedEmbedder:
    """Wraps an embedder and accumulates the time spent in ``encode`` (ingest breakdown)."""

    inner: Any
    seconds: float = 0.0
    texts: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        start = time.perf_counter()
        try:
            return self.inner.encode(texts, batch_size=batch_size)
        finally:
            self.seconds += time.perf_counter() - start
            self.texts += len(texts)


@dataclass
class CachedEmbedder:
    """Serves precomputed vectors by text, so query embedding is timed apart from search.

    A text not in the table is embedded by ``inner`` (and counted in ``misses``),
    so results stay correct even when the table is incomplete.
    """

    inner: Any
    table: dict[str, np.ndarray] = field(default_factory=dict)
    misses: int = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def add(self, texts: Sequence[str], vectors: Any) -> None:
        for text, vector in zip(texts, vectors):
            self.table[text] = np.asarray(vector, dtype=np.float32)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.table]
        if missing:
            self.misses += len(missing)
            self.add(missing, self.inner.encode(missing, batch_size=batch_size))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.table[t] for t in texts])


def raw_encoder_name(embedder: Any) -> str:
    """What :func:`raw_encode` runs for this embedder (for report captions)."""
    model = getattr(embedder, "_model", None)
    if model is not None and hasattr(model, "encode"):
        return f"{type(model).__name__}.encode"
    return f"{type(embedder).__name__}.encode (the backend's own encode: no thinner layer to call)"


def raw_encode(embedder: Any, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
    """The model itself, without trajsearch's wrapper where we can reach it."""
    model = getattr(embedder, "_model", None)
    if model is not None and hasattr(model, "encode"):
        return np.asarray(
            model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False),
            dtype=np.float32,
        )
    return embedder.encode(texts, batch_size=batch_size)


# -- output ------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table (readable as plain text too)."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            if value != value:  # NaN
                return "-"
            return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
        return str(value)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in body)) if body else len(h) for i, h in enumerate(headers)]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)) + " |"  # noqa: E731
    out = [line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out.extend(line(r) for r in body)
    return "\n".join(out)
