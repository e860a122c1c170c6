"""Helpers shared by the scripts in ``scripts/``: data locations, dump reading,
store set-up, timing statistics, memory, embedder wrappers, synthetic runs and
plain-text tables.

Not part of the package: scripts import it as ``from _common import ...``
(``scripts/`` is on ``sys.path`` when a script in it runs), before anything
from ``trajsearch``; trajsearch itself is imported inside the functions that
need it, so importing this module stays cheap.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import statistics
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

import numpy as np

if TYPE_CHECKING:
    from trajsearch.model import Outcome, Trajectory
    from trajsearch.represent import Row
    from trajsearch.search import TrajSearch

# Set here, once, for every script: this module is imported before any model library is.
# The models are local (never ask the hub), and tokenizers would warn about forks
# after using its thread pool (milvus-lite starts its server as a subprocess).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRAJSEARCH_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
TAU_FILE = DATA / "tau-bench" / "gpt-4o-airline.json"
SWE_DIR = DATA / "mini-swe-agent-dev"


# -- data --------------------------------------------------------------------------------


def swe_files() -> list[Path]:
    """Every mini-swe-agent run file, in a stable order."""
    return sorted(SWE_DIR.glob("*/*/*.traj.json"))


def read_runs(paths: Iterable[Path], *, tenant: str = "default", limit: int | None = None,
              outcomes: Path | None = None) -> tuple[list, list[str]]:
    """Trajectories parsed from dump files with ``read_dump``, and the rejection messages;
    ``outcomes``: a verdict file joined onto them (see ``trajsearch.ingest.outcomes``)."""
    from trajsearch.ingest.outcomes import OutcomeTable
    from trajsearch.ingest.read import read_dump

    table = OutcomeTable.load(outcomes) if outcomes else None
    runs, errors = [], []
    for path in paths:
        for parsed in read_dump(path, tenant=tenant, outcomes=table):
            if parsed.error is not None:
                errors.append(str(parsed))
            else:
                runs.append(parsed.trajectory)
            if limit is not None and len(runs) >= limit:
                return runs, errors
    return runs, errors


@dataclass
class RealRuns:
    """The real runs of both datasets, as :func:`read_real_runs` parsed them."""

    tau: list  # tau-bench airline runs
    swe: list  # mini-swe-agent runs
    rejected: list[str]  # read_dump's rejection messages, tau-bench's first
    seconds: float  # time to parse both

    @property
    def runs(self) -> list:
        """Every run, tau-bench first (the order the scripts have always used)."""
        return self.tau + self.swe


def read_real_runs(tenant: str = "default") -> RealRuns:
    """Both real datasets, parsed and timed in one call.

    Every benchmark and evaluation here starts from the same two dumps and reports
    them apart (they differ in length, tools and in what a failure looks like), so
    they are read together but kept in two lists.
    """
    with Stopwatch() as sw:
        tau, tau_rejected = read_runs([TAU_FILE], tenant=tenant)
        swe, swe_rejected = read_runs(swe_files(), tenant=tenant)
    return RealRuns(tau, swe, tau_rejected + swe_rejected, sw.seconds)


OOD_TASKS = Path(__file__).resolve().parent / "ood_tasks.txt"


def ood_tasks(path: Path = OOD_TASKS) -> list[str]:
    """Out-of-domain tasks (nothing like the library), one a line; ``#`` lines are comments."""
    lines = [line.strip() for line in Path(path).read_text().splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def collection_sizes(text: str) -> list[int]:
    """A benchmark's ``--rows 10000,100000``: the collection sizes it builds, smallest first."""
    return sorted(int(n) for n in text.split(","))


def spread(items: Sequence[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over ``items`` (a deterministic, representative subset)."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


# -- model and store --------------------------------------------------------------------


def load_model(spec: str) -> tuple[Any, float]:
    """``trajsearch.embed.load_embedder(spec)``, used once, and the seconds it took (the ONNX session is made at the
    first encode, so a load alone no longer holds it: review RT-SERVE, 3).

    A first load can dwarf a small run (torch starts in 10-30 s, the ONNX export
    runs once per machine), so scripts time it on its own rather than let it leak
    into the first measured step.
    """
    from trajsearch.embed import load_embedder

    with Stopwatch() as sw:
        model = load_embedder(spec)
        model.encode(["warm-up"])
    return model, sw.seconds


def store_dir(path: Path, *, fresh: bool = False) -> Path:
    """``path``, created, for one store; emptied first when ``fresh``.

    Evaluations cache their store between runs (re-ingest skips unchanged runs, so a
    rerun pays only for the queries) and wipe it on ``--fresh``.
    """
    if fresh:
        shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True, exist_ok=True)
    return path


def ungated_runtime(ts: TrajSearch) -> Any:
    """A ``Runtime`` whose novelty gate is open (no threshold, not even a tenant's own): its
    ``exemplars(...).best_similarity`` is the similarity novelty is judged on, whatever it is.
    An older checkout has no per-tenant thresholds (``NoveltyConfig.per_tenant``) to turn off."""
    from trajsearch.runtime import AdviceConfig, NoveltyConfig, Runtime, RuntimeConfig

    per_tenant = {"per_tenant": False} if "per_tenant" in NoveltyConfig.__dataclass_fields__ else {}
    return Runtime(ts, RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.0, 0.0, **per_tenant))))


def is_tau_bench(run: Trajectory) -> bool:
    """A run of tau-bench or tau2-bench (their adapters' ``source_format``), as opposed to a coding agent's."""
    return str(run.metadata.get("source_format")).startswith("tau")


def store_for(name: str, inputs: Sequence[str | Path]) -> Path:
    """The default cached store of evaluation ``name`` over ``inputs`` (files, folders or flags):
    one per set of inputs, because a cached store keeps what earlier runs ingested, and two dumps
    of one domain (tau-bench and tau2 airline) would otherwise share a tenant and find each other's runs."""
    key = "\0".join(sorted(str(Path(i).resolve()) if Path(i).exists() else str(i) for i in inputs))
    return Path(f"/tmp/trajsearch-{name}-{hashlib.sha256(key.encode()).hexdigest()[:8]}")


def scratch_dir(workdir: Path) -> Path:
    """A fresh directory for this process under ``workdir`` (``run-<pid>``).

    Benchmarks build their store from nothing; one directory per process means two
    runs at once never open the same Milvus Lite file (it is locked while open).
    """
    return store_dir(workdir / f"run-{os.getpid()}", fresh=True)


def open_store(directory: Path, embedder: Any) -> TrajSearch:
    """The embedded store kept in ``directory``: Milvus Lite's ``milvus.db`` with the
    trace files beside it, so one path holds (and wipes, or caches) the whole store."""
    from trajsearch.search import TrajSearch

    return TrajSearch.open(str(directory / "milvus.db"), traces=str(directory / "traces"), embedder=embedder)


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
class WrappedEmbedder:
    """An embedder around another one (``inner``).

    The store records the embedder's ``name`` and ``dim`` and refuses another model's
    vectors, so a wrapper passes the inner model's on unchanged.
    """

    inner: Any

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim


@dataclass
class TimedEmbedder(WrappedEmbedder):
    """Wraps an embedder and accumulates the time spent in ``encode`` and ``encode_documents``
    (ingest breakdown)."""

    seconds: float = 0.0
    texts: int = 0

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        return self._timed(self.inner.encode, texts, batch_size)

    def encode_documents(self, texts: Sequence[str], *, batch_size: int = 64, max_tokens: int | None = None) -> np.ndarray:
        from trajsearch.embed import document_encoder

        return self._timed(document_encoder(self.inner, max_tokens=max_tokens), texts, batch_size)

    def _timed(self, encode: Callable[..., np.ndarray], texts: Sequence[str], batch_size: int) -> np.ndarray:
        start = time.perf_counter()
        try:
            return encode(texts, batch_size=batch_size)
        finally:
            self.seconds += time.perf_counter() - start
            self.texts += len(texts)


@dataclass
class CachedEmbedder(WrappedEmbedder):
    """Serves precomputed vectors by text, so query embedding is timed apart from search.

    A text not in the table is embedded by ``inner`` (and counted in ``misses``),
    so results stay correct even when the table is incomplete. Documents (what ingest
    embeds, through ``encode_documents``: the inner embedder's bulk path) have a table
    of their own, so a query never gets a document's vector for the same text, nor
    the other way round.
    """

    table: dict[str, np.ndarray] = field(default_factory=dict)
    documents: dict[int | None, dict[str, np.ndarray]] = field(default_factory=dict)  # by token cap (None: whole)
    misses: int = 0

    def add(self, texts: Sequence[str], vectors: Any, table: dict[str, np.ndarray] | None = None) -> None:
        table = self.table if table is None else table
        for text, vector in zip(texts, vectors):
            table[text] = np.asarray(vector, dtype=np.float32)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        return self._cached(self.table, self.inner.encode, texts, batch_size)

    def encode_documents(self, texts: Sequence[str], *, batch_size: int = 64, max_tokens: int | None = None) -> np.ndarray:
        from trajsearch.embed import document_encoder

        return self._cached(self.documents.setdefault(max_tokens, {}), document_encoder(self.inner, max_tokens=max_tokens),
                            texts, batch_size)

    def _cached(self, table: dict[str, np.ndarray], encode: Callable[..., np.ndarray], texts: Sequence[str],
                batch_size: int) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in table]
        if missing:
            self.misses += len(missing)
            self.add(missing, encode(missing, batch_size=batch_size), table)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([table[t] for t in texts])


def text_key(text: str) -> str:
    """What a vector cache keys a text by (its blake2b digest, 12 bytes).

    Every cache of real vectors (``DiskCachedEmbedder``'s, bench_hybrid's pool, bench_scale's
    seeds) uses this one key and :func:`load_vector_cache`'s format, so one can seed another.
    """
    import hashlib  # noqa: PLC0415

    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def load_vector_cache(path: Path) -> dict[str, np.ndarray]:
    """Vectors by :func:`text_key` from an ``.npz`` of ``keys`` and ``vectors``; empty when there is none."""
    if not path.exists():
        return {}
    with np.load(path) as data:
        return dict(zip(data["keys"].tolist(), data["vectors"]))


def save_vector_cache(path: Path, vectors: dict[str, np.ndarray]) -> None:
    """Write ``vectors`` (by :func:`text_key`) where :func:`load_vector_cache` reads them; whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, keys=np.array(list(vectors)), vectors=np.stack(list(vectors.values())))
    tmp.replace(path)


class DiskCachedEmbedder(WrappedEmbedder):
    """Vectors by text digest, kept in an ``.npz`` between runs, scripts and checkouts.

    Evaluations embed the same real texts over and over (every window of every run, in each
    script's own store, before and after a change); with one cache file only new texts cost
    model time. ``save`` after an ingest.
    """

    def __init__(self, inner: Any, path: Path) -> None:
        super().__init__(inner)
        self.path = Path(path)
        self.table: dict[str, np.ndarray] = load_vector_cache(self.path)
        self.new = 0

    key = staticmethod(text_key)

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        return self._lookup([self.key(t) for t in texts], texts, self.inner.encode, batch_size)

    def encode_documents(self, texts: Sequence[str], *, batch_size: int = 64, max_tokens: int | None = None) -> np.ndarray:
        """Documents as queries (same vectors, same keys), but texts cut at ``max_tokens`` have keys of their
        own, per bulk path (their vectors are that path's: int8 on CPUs with VNNI and no AMX)."""
        if not max_tokens:
            return self.encode(texts, batch_size=batch_size)
        from trajsearch.embed import document_encoder
        from trajsearch.embed.bulk import choose

        path = choose(getattr(self.inner, "bulk", None)) if hasattr(self.inner, "encode_documents") else ""
        keys = [self.key(f"\x00{max_tokens}{path}\x00{t}") for t in texts]
        return self._lookup(keys, texts, document_encoder(self.inner, max_tokens=max_tokens), batch_size)

    def _lookup(self, keys: list[str], texts: Sequence[str], encode: Callable[..., np.ndarray], batch_size: int) -> np.ndarray:
        todo = {k: t for k, t in zip(keys, texts) if k not in self.table}
        if todo:
            vectors = encode(list(todo.values()), batch_size=batch_size)
            self.table.update(zip(todo, np.asarray(vectors, dtype=np.float32)))
            self.new += len(todo)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.table[k] for k in keys])

    def save(self) -> None:
        if self.new:
            save_vector_cache(self.path, self.table)
            self.new = 0


def embed_each(model: Any, texts: Sequence[str], *, warmup: Sequence[str]) -> tuple[list[np.ndarray], list[float]]:
    """Each of ``texts`` embedded on its own, and the seconds each took.

    An agent embeds one query at a time, so this is the query-embedding latency it
    sees. Benchmarks report it apart and then serve these vectors to the façade from
    a :class:`CachedEmbedder`, so their search timings hold no model time.
    ``warmup`` is encoded first, untimed (the first call pays one-off costs).
    """
    model.encode(list(warmup))
    vectors, seconds = [], []
    for text in texts:
        start = time.perf_counter()
        vectors.append(model.encode([text])[0])
        seconds.append(time.perf_counter() - start)
    return vectors, seconds


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


# -- synthetic runs ----------------------------------------------------------------------

#: Tenants of the benchmarks' synthetic stores: one big (~70% of the runs) and three
#: small ones (~10% each), so a tenant filter is timed where it keeps most rows and
#: where it keeps few.
BIG_TENANT, SMALL_TENANTS = "acme", ("t1", "t2", "t3")
ENV_VERSIONS = ("env-1", "env-2", "env-3", "env-4")


class SyntheticRuns:
    """What the benchmarks' synthetic-run factories share: runs recombined from real
    material, spread over the tenants, with perturbed real vectors.

    Scale benchmarks need far more rows than the real dumps hold, yet real texts and
    vectors (a random corpus would time another index). A subclass sets ``sources``
    (dicts whose ``"steps"`` lists a real run's step windows) and implements
    :meth:`run`: pick a source, then call :meth:`trajectory`, :meth:`windows` and
    :meth:`records` in that order; :meth:`upsert_until` writes the runs. Every draw
    comes from one seeded ``random.Random`` (and one numpy generator for the noise),
    so a seed always builds the same collection.
    """

    sources: list[dict]

    def __init__(self, *, noise: float, seed: int, trace_root: str) -> None:
        self.rng = random.Random(seed)
        self.np_rng = np.random.default_rng(seed)
        self.noise = noise
        self.trace_root = trace_root  # only written into the rows' trace URIs: nothing is stored there
        self.made = 0
        self.start = datetime(2026, 1, 1, tzinfo=timezone.utc)

    def run(self) -> tuple[Trajectory, list[dict]]:
        """One synthetic run and its records (the subclass's recombination)."""
        raise NotImplementedError

    def trajectory(self, outcome: Outcome, *, has_failure: bool, **fields: Any) -> Trajectory:
        """The next run's metadata around ``fields`` (task, tools, ... of its source).

        Its tenant follows the 70/10/10/10 split; a quarter of the runs whose source has
        no failure row fail anyway (the sources have few failed runs, and the failure
        filters need some); env and policy versions are drawn, and each run starts a
        minute after the previous one.
        """
        from trajsearch.model import Outcome, Trajectory

        number = self.made
        self.made += 1
        roll = self.rng.random()
        tenant = BIG_TENANT if roll < 0.7 else SMALL_TENANTS[int((roll - 0.7) / 0.1) % 3]
        if not has_failure and self.rng.random() < 0.25:
            outcome = Outcome.failure
        return Trajectory(
            trajectory_id=f"syn-{number:06d}",
            tenant=tenant,
            env_version=self.rng.choice(ENV_VERSIONS),
            policy_version=f"policy-{self.rng.randint(1, 3)}",
            outcome=outcome,
            reward=1.0 if outcome is Outcome.success else 0.0,
            created_at=self.start + timedelta(minutes=number),
            **fields,
        )

    def windows(self, source: dict) -> list:
        """10-40 step windows: ``source``'s own, continued with the windows of other real runs."""
        n = self.rng.randint(10, 40)
        windows = list(source["steps"])
        while len(windows) < n:
            windows.extend(self.rng.choice(self.sources)["steps"])
        return windows[:n]

    def records(self, traj: Trajectory, picked: list[tuple[Row, Any]]) -> list[dict]:
        """Full-schema records of ``traj``'s (row, real vector) pairs, each vector perturbed.

        ``indexer._record`` is the one row layout, so the synthetic rows carry
        every field (and index) a real ingest writes.
        """
        from trajsearch.indexer import _record

        uri = f"file://{self.trace_root}/traces/{traj.tenant}/{traj.trajectory_id}.json.gz"
        return [_record(traj, row, trace_uri=uri, chash="bench", vector=self.perturb(vector)) for row, vector in picked]

    def upsert_until(self, index: Any, target: int, *, counts: Callable[[dict], bool] = lambda record: True,
                     batch: int = 1_000) -> tuple[list[Trajectory], int, int]:
        """Make runs and upsert their records into ``index``, ``batch`` at a time (bulk
        ingest's write size), until ``target`` of the records ``counts`` accepts exist.

        Not flushed: each benchmark times the flush its own way. Returns the runs made,
        the records written and how many of them ``counts`` accepted.
        """
        made: list[Trajectory] = []
        pending: list[dict] = []
        written = counted = 0
        while counted < target:
            traj, records = self.run()
            made.append(traj)
            pending.extend(records)
            counted += sum(map(counts, records))
            while len(pending) >= batch:
                index.upsert(pending[:batch])
                written += batch
                pending = pending[batch:]
        index.upsert(pending)
        return made, written + len(pending), counted

    def perturb(self, vector: Any) -> list[float]:
        """``vector`` plus Gaussian noise (std ``noise`` per dimension), re-normalised: near its
        real source, yet distinct, so copies of one real row are distinct points to the index."""
        v = np.asarray(vector, dtype=np.float32) + self.np_rng.normal(0.0, self.noise, len(vector)).astype(np.float32)
        return (v / np.linalg.norm(v)).tolist()


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
