"""Trajectories -> trace store + index rows: a bounded, pipelined, idempotent writer.

Three stages run at once, joined by queues of at most ``queue_depth`` batches
(so memory is bounded by a few batches whatever the size of the input):

1. the caller's thread reads and batches items (parsing is the caller's);
2. a *prepare* thread skips runs whose content hash is already indexed,
   builds the rows of the rest and embeds them (numpy / torch / onnxruntime
   release the GIL, so this overlaps with the other two); a run read with no
   verdict of its own keeps the one an outcome file gave its stored copy
   (:func:`~trajsearch.ingest.outcomes.keep_verdict`), so a dump ingested again
   without its ``--outcomes`` is unchanged, not judged anew by nothing;
3. a *write* thread stores the traces, then the rows, then reports the batch
   as committed (``on_commit``: checkpoints and dead letters hang off it).

Order of writes per batch, so an interruption at any point leaves nothing
pointing nowhere and nothing that a rerun would wrongly skip:
traces first (retried on transient errors; if they still fail the batch
fails and no row of it is written), then the old rows of changed runs are
deleted, then every row but the ``task`` rows, then the ``task`` rows: the
task row carries the content hash a rerun checks, so a run counts as indexed
only once all its rows are in. Row ids are deterministic, so a rerun that
redoes a batch rewrites the same rows.

A run may name runs it takes the place of (``metadata["supersedes"]``, set by
adapters: a Codex thread's run read with its history after a rollout of it
was read alone, under an id of its own). Those of its tenant still stored are
removed, traces then rows as ``delete`` does, once the batch's rows are in
(an interruption leaves a run twice, never none), whether the run was
written or unchanged: a rerun after an interruption finishes the removal. It
can only remove runs of the record's own tenant, which its writer can delete
anyway.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import re
import queue
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from .digest import row_steps
from .embed import Embedder, document_encoder
from .ingest.outcomes import file_verdict, has_own_verdict, keep_verdict
from .model import Trajectory, former_ids, superseded, valid_id
from .results import IngestReport, Rejection
from .represent import (INGESTED_FROM, WINDOW_TOKENS_SINCE, Row, Summarizer, WindowConfig, content_hash, embed_rows,
                        extractive_summary, file_digest, indexed_text, indexed_version, marked_digest,
                        represent_indexed, row_id, stored_digest, token_cap)
from .store.fields import MAX_TOOLS
from .store.filters import Filters
from .store.index import TrajectoryIndex
from .store.traces import (TraceAccessError, TraceCorruptError, TraceNotFoundError, TraceStore, TraceStoreError,
                           TraceStoreSetupError)
from .touched import read_once

if TYPE_CHECKING:
    from .ingest.read import Parsed

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (tenant, trajectory_id)

@dataclass(frozen=True)
class Marker:
    """An item that only travels through the pipeline, to reach ``on_commit`` in order (e.g. "unit done")."""

    payload: Any


class IngestError(RuntimeError):
    """A batch could not be written (after retries); nothing of it points at missing data."""


@dataclass(frozen=True)
class RetryPolicy:
    """Retries of transient trace-store and index write errors, with exponential backoff."""

    attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0

    def run(self, what: str, fn: Callable[[], Any], transient: Callable[[BaseException], bool]) -> Any:
        for attempt in range(1, self.attempts + 1):
            try:
                return fn()
            except Exception as exc:
                if attempt == self.attempts or not transient(exc):
                    raise
                delay = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
                log.warning("%s failed (attempt %d/%d): %s; retrying in %.1fs", what, attempt, self.attempts, exc, delay)
                time.sleep(delay)
        raise AssertionError("unreachable")


#: Errors of a full disk (or quota): retrying in a second cannot help, freeing space can.
DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_DISK_FULL_TEXTS = tuple(os.strerror(n) for n in DISK_FULL_ERRNOS)


#: The errors whose text is read for a full disk: Milvus (Lite) passes the engine's ENOSPC on quoted in one.
_QUOTING_ERRORS = ("MilvusException", "MilvusUnavailableException")


def disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc``, or an error it was raised from or while handling, says a disk is full: an ``OSError`` of
    ENOSPC or EDQUOT, or a Milvus error whose message quotes one (Milvus Lite passes the engine's ENOSPC on so).
    Other errors' text is not read: it may quote a caller's value (a filter's, a trace URI, a run's error
    text), which said a server's disk was full of a search given "No space left on device" (review RO 5)."""
    return any((isinstance(link, OSError) and link.errno in DISK_FULL_ERRNOS)
               or (type(link).__name__ in _QUOTING_ERRORS and any(t in str(link) for t in _DISK_FULL_TEXTS))
               for link in error_chain(exc))


def error_chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and the errors it was raised from or while handling, outermost first (each once: a cycle ends it)."""
    seen: list[BaseException] = []
    while exc is not None and all(exc is not s for s in seen):
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _trace_error_is_transient(exc: BaseException) -> bool:
    # access and corruption errors are the caller's or the data's fault, a full disk the operator's: retrying cannot
    # help; nor can it bring back a trace that is not there (files removed, a bucket emptied: 3.5 s a run of a
    # re-ingest lost to retries, probe 50), which S3 and the file store say at once and for good
    return isinstance(exc, (TraceStoreError, OSError)) and not disk_full(exc) \
        and not isinstance(exc, (TraceAccessError, TraceCorruptError, TraceStoreSetupError, TraceNotFoundError))


def _index_error_is_transient(exc: BaseException) -> bool:
    name = type(exc).__name__
    return (isinstance(exc, (ConnectionError, TimeoutError, OSError)) or name in (
        "MilvusException", "MilvusUnavailableException", "_InactiveRpcError", "RpcError")) and not disk_full(exc)


def indexed_rows(run: Trajectory, *, window: WindowConfig,
                 summarizer: Summarizer | Callable[[Trajectory], str] = extractive_summary) -> list[Row]:
    """The rows of ``run`` as the index stores them (:func:`~trajsearch.represent.represent`), its summary and failure
    rows holding its digests (:func:`~trajsearch.digest.row_steps`: what an exemplar or a warning shows of it, worked
    out here once, so that showing one never reads the trace). Both are of the run without its encoded blobs, removed
    once here for all of them: each pass reads every text of the run (README, "An encoded blob": what a pass costs).
    Its steps are read once too (:func:`~trajsearch.touched.read_once`), for the summary's ``Touched:`` line and the
    exemplar digest's key actions, each of which read them whole (README, "What a run touched")."""
    indexed = indexed_text(run)
    with read_once(indexed):
        rows = represent_indexed(indexed, window=window, summarizer=summarizer)
        for row in rows:
            row.steps = row.steps or row_steps(indexed, row.level) or []
    return rows


def _record(
    trajectory: Trajectory, row: Row, *, trace_uri: str, chash: str, vector: Any
) -> dict[str, Any]:
    """The index record of one of ``trajectory``'s :func:`indexed_rows`."""
    return {
        "id": row_id(trajectory.tenant, trajectory.trajectory_id, row.level, row.step_index, row.part),
        "tenant": trajectory.tenant,
        "trajectory_id": trajectory.trajectory_id,
        "level": row.level,
        "step_index": row.step_index,
        "step_end": row.step_end,
        "task_id": trajectory.task_id or "",
        "task_family": trajectory.task_family or "",
        "policy_version": trajectory.policy_version or "",
        "env_version": trajectory.env_version or "",
        "tool_versions": trajectory.tool_versions,
        "tools": (trajectory.tools_available or trajectory.tools_used)[:MAX_TOOLS],
        "outcome": trajectory.outcome.value,
        "reward": trajectory.reward,
        "quality_score": trajectory.quality_score,
        "created_at": int(trajectory.created_at.timestamp()),
        "text": row.text,
        "steps": row.steps,  # step rows: their steps; summary and failure rows: the run's digest
        "trace_uri": trace_uri,
        "content_hash": chash,
        "embedding": vector,
    }


def reusable_vectors(index: TrajectoryIndex, run: Trajectory, rows: Sequence[Row], stored_hash: str,
                     window: WindowConfig) -> dict[int, Any]:
    """``id(row)`` -> the stored vector of each row of ``run`` that an older representation (told by
    ``stored_hash``) indexed with the same text and the same vector recipe (step windows: only since
    ``WINDOW_TOKENS_SINCE``). Empty when ``run`` itself changed: re-indexing after an upgrade then
    embeds only what the new representation changed (the summaries, for versions 4 and 5)."""
    version = indexed_version(run, window, stored_hash)
    if version is None:
        return {}
    ids = [row_id(run.tenant, run.trajectory_id, r.level, r.step_index, r.part) for r in rows]
    stored = {r["id"]: r for r in index.get(ids, Filters(tenant=run.tenant), fields=["text", "embedding"])}
    return {id(r): stored[i]["embedding"] for r, i in zip(rows, ids)
            if i in stored and r.vector_of is None and stored[i]["text"] == r.text
            and (r.level != "step" or version >= WINDOW_TOKENS_SINCE)}


@dataclass
class _Batch:
    """Items in input order, and what the prepare stage made of their trajectories."""

    items: list[Any]
    runs: dict[Key, tuple[Trajectory, str]] = field(default_factory=dict)  # key -> (run, fmt), last wins
    #: (key, fmt, content hash) of each earlier copy that a later one in the batch replaced
    repeats: list[tuple[Key, str, str]] = field(default_factory=list)
    #: key -> the former ids (``model.FORMER_IDS``) of its earlier copies in the batch: one run read from two folders
    #: in one job, which a store written before may hold under each folder's id
    repeats_former: dict[Key, list[str]] = field(default_factory=dict)
    hashes: dict[Key, str] = field(default_factory=dict)
    stored: dict[Key, str] = field(default_factory=dict)
    #: key -> trace uri of each run already indexed (where its stored verdict is read)
    stored_uris: dict[Key, str] = field(default_factory=dict)
    #: runs read with no verdict of their own that keep the one an outcome file gave their stored copy
    kept_verdicts: set[Key] = field(default_factory=set)
    todo: list[Key] = field(default_factory=list)
    records: dict[Key, list[dict[str, Any]]] = field(default_factory=dict)
    #: key -> the dump file each run was read from (items that say, as ``ingest.read.Parsed`` does)
    sources: dict[Key, str] = field(default_factory=dict)
    #: key -> :func:`~trajsearch.represent.file_digest` of where each run was read from: of its file, or as its
    #: reader marked it (``represent.SOURCE_MARK``: a server's stream, a piped dump)
    digests: dict[Key, str] = field(default_factory=dict)
    #: key -> the stored copy of a changed run, read from its trace once (None: unreadable)
    stored_runs: dict[Key, Trajectory | None] = field(default_factory=dict)
    #: key -> (the file the stored run was written from, None when not known here; the file of the run replacing
    #: it): another file's run
    others: dict[Key, tuple[str | None, str]] = field(default_factory=dict)


_DONE = object()


def _former_ids(batch: _Batch, key: Key) -> list[str]:
    """The former ids of a batch's run and of its earlier copies in the batch (``_Batch.repeats_former``)."""
    return list(dict.fromkeys([*former_ids(batch.runs[key][0]), *batch.repeats_former.get(key, ())]))


class Indexer:
    """Writes trajectories into the index and the trace store (see the module docstring)."""

    def __init__(
        self,
        index: TrajectoryIndex,
        embedder: Embedder,
        traces: TraceStore,
        *,
        summarizer: Summarizer | Callable[[Trajectory], str] = extractive_summary,
        batch_size: int = 32,
        embed_batch_size: int = 64,
        rows_per_batch: int = 256,
        queue_depth: int = 2,
        retry: RetryPolicy = RetryPolicy(),
        put_concurrency: int = 8,
        verify_traces: bool = False,
        write_lock: str | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.traces = traces
        self.summarizer = summarizer
        self.window = WindowConfig(index.settings.window, index.settings.stride)
        self.batch_size = batch_size
        self.embed_batch_size = embed_batch_size
        self.rows_per_batch = rows_per_batch
        self.queue_depth = queue_depth
        self.retry = retry
        self.put_concurrency = put_concurrency
        #: Check that unchanged runs still have their trace, and write it again where it is gone
        #: (an object store emptied or restored from an old backup); costs one lookup per run.
        self.verify_traces = verify_traces
        #: A lock file that every writer of one store takes around its index writes. Several
        #: workers writing at once to one ``milvus-lite server`` interleave its write-ahead log
        #: (measured: "Invalid IPC stream" on recovery, acknowledged batches lost after a kill),
        #: so their writes take turns; embedding, the expensive part, still runs in parallel.
        self.write_lock = write_lock
        self._pool: ThreadPoolExecutor | None = None
        #: Vectors of texts embedded lately, by digest of the text: the same text comes again
        #: across runs (a task's trials, a shared first step) and is embedded once.
        self._recent: OrderedDict[bytes, Any] = OrderedDict()
        self._recent_lock = threading.Lock()  # the write stage re-prepares runs now and then, concurrently
        self.recent_size = 8_192
        self.texts_embedded = 0  # distinct texts sent to the model (the rest came from _recent)
        #: key -> content hash of each run this indexer wrote, over all its :meth:`add` calls (a server's
        #: ingest stream adds batch by batch): a run written again is a later copy replacing an earlier one
        self.written: dict[Key, str] = {}
        #: the runs of ``written`` whose kept verdict a report counted: a run read twice, its copies in two batches,
        #: each keeping the verdict, is one run that kept it
        self.verdicts_counted: set[Key] = set()
        #: :func:`~trajsearch.represent.file_digest` -> the dump file, of the first files this indexer read runs
        #: of (a bound: an ingest of a million one-run files): the stored trace keeps the digest only, so an
        #: earlier file is named when this process met it
        self._dump_files: dict[str, str] = {}
        #: the stored runs the latest :meth:`add` call replaced with a different run of another file (see
        #: ``_note_other_files``): a server marks their records in its answer. Of one call, not of all: a run
        #: replaced twice in one stream (in two of its batches) is said both times (review ROP, 7)
        self.other_runs: set[Key] = set()
        self._digest_key: bytes | None = None  # the trace store's, read once (b"": it has none)

    def forget_vectors(self) -> None:
        """Drop the vectors kept for texts met again: an indexer kept between the streams of one call (the server's
        ``x-ingest-call``) needs only what tells its runs apart."""
        with self._recent_lock:
            self._recent.clear()

    # -- the pipeline ------------------------------------------------------------------------

    def add(
        self,
        items: Iterable[Trajectory | Parsed | Marker],
        *,
        on_progress: Callable[[int], None] | None = None,
        on_commit: Callable[[list[Any], IngestReport], None] | None = None,
        max_kept_rejections: int | None = None,
    ) -> IngestReport:
        """Index trajectories (or parsed dump records, whose errors become rejections).

        ``on_commit(items, report)`` is called after each batch is durably
        written, with the batch's items (trajectories, ``Parsed`` records and
        ``Marker`` objects) in input order. ``on_progress(n)`` gets the number
        of records committed. Raises :class:`IngestError` when a batch cannot
        be written; every batch before it is committed.
        """
        report = IngestReport()
        self._kept = max_kept_rejections
        self.other_runs = set()
        written = self.written
        now: dict[Key, str] = {}  # what this call wrote: its later batches' store lookups may predate those writes
        to_prepare: queue.Queue = queue.Queue(self.queue_depth)
        to_write: queue.Queue = queue.Queue(self.queue_depth)
        failure: list[BaseException] = []
        stop = threading.Event()

        def put(q: queue.Queue, value: Any) -> bool:
            while not stop.is_set():
                try:
                    q.put(value, timeout=0.1)
                    return True
                except queue.Full:
                    continue
            return False

        def get(q: queue.Queue) -> Any:
            while not stop.is_set():
                try:
                    return q.get(timeout=0.1)
                except queue.Empty:
                    continue
            return _DONE

        def prepare_loop() -> None:
            while (batch := get(to_prepare)) is not _DONE:
                self._prepare(batch)
                if not put(to_write, batch):
                    return
            put(to_write, _DONE)

        def write_loop() -> None:
            while (batch := get(to_write)) is not _DONE:
                self._write(batch, report, written, now)
                if on_commit:
                    on_commit(batch.items, report)
                if on_progress:
                    on_progress(sum(1 for i in batch.items if not isinstance(i, Marker)))

        stages = [_Stage("ingest-prepare", prepare_loop, stop, failure),
                  _Stage("ingest-write", write_loop, stop, failure)]
        try:
            for batch in self._batches(items):
                if not put(to_prepare, batch):
                    break
            put(to_prepare, _DONE)
        except BaseException:
            stop.set()
            raise
        finally:
            _join(stages, stop, failure)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if failure:
            exc = failure[0]
            if isinstance(exc, IngestError):
                raise exc
            raise IngestError(f"ingest stopped: {type(exc).__name__}: {exc}") from exc
        self.index.flush()
        return report

    def _batches(self, items: Iterable[Any]) -> Iterator[_Batch]:
        """Cut the input into batches of about ``rows_per_batch`` rows (at most ``batch_size`` runs)."""
        pending: list[Any] = []
        runs = rows = 0
        for item in items:
            pending.append(item)
            run = item if isinstance(item, Trajectory) else getattr(item, "trajectory", None)
            if run is not None:
                runs += 1
                rows += 3 + (len(run.steps) + self.window.stride - 1) // self.window.stride
            if runs >= self.batch_size or rows >= self.rows_per_batch or len(pending) >= 4 * self.rows_per_batch:
                yield _Batch(pending)
                pending, runs, rows = [], 0, 0
        if pending:
            yield _Batch(pending)

    # -- stage 2: skip unchanged runs, build and embed rows --------------------------------

    def encode_documents(
        self, texts: Sequence[str], *, batch_size: int | None = None, max_tokens: int | None = None
    ) -> np.ndarray:
        """Vectors of ``texts`` for the index (the embedder's bulk path where it has one; ``max_tokens``:
        each text's first so many tokens), each distinct text embedded once, and texts embedded
        lately not again."""
        keys = [_text_key(text, max_tokens) for text in texts]
        with self._recent_lock:
            todo = {key: text for key, text in zip(keys, texts) if key not in self._recent}
            if todo:
                encode = document_encoder(self.embedder, max_tokens=max_tokens)
                vectors = encode(list(todo.values()), batch_size=batch_size or self.embed_batch_size)
                self.texts_embedded += len(todo)
                self._recent.update(zip(todo, vectors))
            found = []
            for key in keys:
                self._recent.move_to_end(key)
                found.append(self._recent[key])
            while len(self._recent) > self.recent_size:
                self._recent.popitem(last=False)
        return np.stack(found).astype(np.float32, copy=False) if found else np.empty((0, 0), np.float32)

    def _remember(self, rows: Sequence[Row], vectors: dict[int, Any]) -> None:
        """Take stored vectors (``id(row)`` -> vector) as if these rows' texts had just been embedded."""
        with self._recent_lock:
            for row in rows:
                if id(row) in vectors:
                    self._recent[_text_key(row.text, token_cap(row))] = np.asarray(vectors[id(row)], dtype=np.float32)
            while len(self._recent) > self.recent_size:
                self._recent.popitem(last=False)

    def rows_of(self, run: Trajectory) -> list[dict[str, Any]]:
        """The index rows of one run, embedded, as :meth:`add` writes them (nothing is written)."""
        rows = indexed_rows(run, window=self.window, summarizer=self.summarizer)
        vectors = embed_rows(self, rows)
        chash, uri = content_hash(run, self.window), self.traces.uri_for(run.tenant, run.trajectory_id)
        return [_record(run, row, trace_uri=uri, chash=chash, vector=vector.tolist()) for row, vector in zip(rows, vectors)]

    def _prepare(self, batch: _Batch, only: set[Key] | None = None) -> None:
        if only is None:
            for item in batch.items:
                run = item if isinstance(item, Trajectory) else getattr(item, "trajectory", None)
                if run is not None:
                    fmt = getattr(item, "fmt", None) or run.metadata.get("source_format") or "trajectory"
                    key = (run.tenant, run.trajectory_id)
                    if key in batch.runs:  # last one wins, in input order; the earlier copy is still counted
                        earlier, earlier_fmt = batch.runs.pop(key)
                        batch.repeats.append((key, earlier_fmt, content_hash(earlier, self.window)))
                        batch.repeats_former.setdefault(key, []).extend(former_ids(earlier))
                    batch.runs[key] = (run, str(fmt))
                    source = getattr(item, "source", None)
                    if digest := marked_digest(run) or (file_digest(str(source)) if source else None):
                        batch.digests[key] = digest
                        if source and len(self._dump_files) < 65_536:  # as new stores keep it, and older ones
                            self._dump_files.setdefault(self._stored_digest(digest), str(source))
                            self._dump_files.setdefault(digest, str(source))
                    else:
                        batch.digests.pop(key, None)
                    if source:
                        batch.sources[key] = str(source)
                    else:
                        batch.sources.pop(key, None)
            batch.hashes = {k: content_hash(t, self.window) for k, (t, _) in batch.runs.items()}
            batch.stored, batch.stored_uris = self._stored_hashes(list(batch.runs))
            self._keep_verdicts(batch)
            self._keep_former_verdicts(batch)
            self._note_other_files(batch)
            keys = [k for k in batch.runs if batch.stored.get(k) != batch.hashes[k]]
            batch.todo = keys
        else:
            keys = [k for k in batch.runs if k in only]
            batch.todo = list(dict.fromkeys([*batch.todo, *keys]))
        pending = []
        for key in keys:
            rows = indexed_rows(batch.runs[key][0], window=self.window, summarizer=self.summarizer)
            pending += [(key, row) for row in rows]
            if key in batch.stored:  # indexed before, by an older representation: keep what is unchanged
                run, stored = batch.runs[key][0], batch.stored[key]
                known = self._index_call("lookup", lambda run=run, rows=rows, stored=stored:
                                         reusable_vectors(self.index, run, rows, stored, self.window))
                self._remember(rows, known)
        vectors = embed_rows(self, [row for _, row in pending])
        for key in keys:
            batch.records[key] = []
        for (key, row), vector in zip(pending, vectors):
            run = batch.runs[key][0]
            batch.records[key].append(_record(
                run, row, trace_uri=self.traces.uri_for(*key), chash=batch.hashes[key], vector=vector.tolist(),
            ))

    def _keep_verdicts(self, batch: _Batch, keys: Iterable[Key] | None = None) -> None:
        """Give each run read with no verdict of its own (of ``keys``, else of all), whose stored copy differs, the
        verdict an outcome file gave that copy (see :func:`~trajsearch.ingest.outcomes.keep_verdict`): read from its
        trace, as only the trace holds the verdict's basis. Unchanged apart from it, the run is then unchanged."""
        for key in list(batch.runs if keys is None else keys):
            run, fmt = batch.runs[key]
            if key not in batch.stored or batch.stored[key] == batch.hashes[key] or has_own_verdict(run):
                continue
            stored = self._stored_copy(batch, key)
            kept = keep_verdict(run, stored) if stored is not None else None
            if kept is None and stored is not None and (basis := file_verdict(stored)) is not None:
                log.warning("%s: the stored run had the verdict of %s, but this is another attempt at the task (another "
                            "model or other work): its verdict is not kept", key[1], basis)
            if kept is not None:
                read, batch.hashes[key] = batch.hashes[key], content_hash(kept, self.window)
                batch.runs[key] = (kept, fmt)
                batch.kept_verdicts.add(key)
                # an earlier copy the same as this one, read alike, is unchanged with it (not "replaced")
                batch.repeats = [(k, f, batch.hashes[key] if (k, h) == (key, read) else h) for k, f, h in batch.repeats]

    def _keep_former_verdicts(self, batch: _Batch) -> None:
        """Give each run read with no verdict of its own, new under its id, the verdict an outcome file gave its copy
        stored under a former id (``model.FORMER_IDS``; the same run: ``ingest.read.same_run_anywhere``), which
        ``_remove_superseded`` then removes: a store written before round 27 keeps its verdicts through the move."""
        from .ingest.read import same_run_anywhere  # (the ingest package imports this module)

        wanting = {key: run for key, (run, _) in batch.runs.items()
                   if key not in batch.stored and not has_own_verdict(run) and _former_ids(batch, key)}
        former: dict[Key, list[Key]] = {}  # every run naming it: attempts from same-named folders share one
        for key, run in wanting.items():
            for old in _former_ids(batch, key):
                former.setdefault((run.tenant, old), []).append(key)
        if not former:
            return
        _, uris = self._stored_hashes(list(former))
        for old, uri in uris.items():
            if (stored := self._stored_run(old, uri, quiet=True)) is None:
                continue
            for key in former[old]:
                run, fmt = batch.runs[key]
                if key in batch.kept_verdicts or not same_run_anywhere(stored, run):
                    continue
                if (kept := keep_verdict(run, stored)) is None:
                    break
                read, batch.hashes[key] = batch.hashes[key], content_hash(kept, self.window)
                batch.runs[key] = (kept, fmt)
                batch.kept_verdicts.add(key)
                batch.repeats = [(k, f, batch.hashes[key] if (k, h) == (key, read) else h) for k, f, h in batch.repeats]
                break

    def _note_other_files(self, batch: _Batch) -> None:
        """Note each changed run whose stored copy was written from another dump file (its trace's
        ``metadata.ingested_from``) and whose steps part ways with it (:func:`~trajsearch.ingest.read.parts_ways`):
        a different run that took the id, which replaces the stored one (probe 49, O4: ``runA/results.json`` then
        ``runB/results.json`` of tau-bench, another model's run of task 2 replaced the first in silence). A
        re-ingest of the same file is an update, and so is the same run from another file (a dump moved, a copy
        re-graded, read again after an upgrade): said nothing of. An earlier save of a session the store holds
        later (Entire's checkpoints, a session folder's backups, a copy taken mid-run: fewer steps, all of them the
        stored run's first) gives way to the stored copy, which stays, as within one ingest
        (``ingest.read.DistinctIds``), by :func:`~trajsearch.ingest.read.saved_earlier` (``continues`` but the
        session's start, which a format without times takes from each file's mtime); a stored earlier save met
        again in its later one is an update, said nothing of (a Copilot chat exported while it ran). An unchanged
        run reads no trace, so a rerun pays nothing for this, a changed run one trace read (shared with
        ``_keep_verdicts``), without retries: a trace that cannot be read has nothing to compare. Runs read from
        files here are checked, and runs their reader marked with the file it read (``represent.SOURCE_MARK``:
        ``ingest --server`` and a dump piped in, whose files this process never sees; probe 50, OP 1)."""
        from .ingest.read import parts_ways, saved_earlier  # (the ingest package imports this module)

        for key, digest in list(batch.digests.items()):
            if key not in batch.stored or batch.stored[key] == batch.hashes[key]:
                continue
            stored = self._stored_copy(batch, key, quiet=True)
            before = str(stored.metadata.get(INGESTED_FROM) or "") if stored is not None else ""
            was = self._dump_files.get(before)
            if before and not re.fullmatch(r"[0-9a-f]{16}", before):  # written before digests: the file's path
                was, before = before, file_digest(before)
            if not before or before in (self._stored_digest(digest), digest):  # (the second: a store's before keys)
                continue
            run, fmt = batch.runs[key]
            if saved_earlier(run, stored):  # an earlier save: the later stays
                batch.runs[key], batch.hashes[key] = (stored, fmt), content_hash(stored, self.window)
                batch.digests.pop(key)
                batch.sources.pop(key, None)
                batch.kept_verdicts.discard(key)
            elif parts_ways(run, stored) and not saved_earlier(stored, run):
                batch.others[key] = (was, batch.sources.get(key) or "a stream of the server's ingest")

    def _stored_digest(self, digest: str) -> str:
        """What a trace of this store keeps of a dump file's digest (:func:`~trajsearch.represent.stored_digest`,
        by the trace store's key where it has one)."""
        if self._digest_key is None:
            key = getattr(self.traces, "digest_key", None)
            self._digest_key = (key() if callable(key) else None) or b""
        return stored_digest(digest, self._digest_key)

    def _stored_copy(self, batch: _Batch, key: Key, *, quiet: bool = False) -> Trajectory | None:
        """The stored copy of a batch's run, read from the trace store at most once per batch (``quiet``: with
        no retry and no warning when it cannot be read, for a check that can do without it)."""
        if key not in batch.stored_runs:
            batch.stored_runs[key] = self._stored_run(key, batch.stored_uris[key], quiet=quiet)
        return batch.stored_runs[key]

    def _as_stored(self, batch: _Batch, key: Key) -> Trajectory:
        """A batch's run as its trace is stored: with the dump file it was read from, when the item or the run's
        reader said (a reader's mark is never stored: its digest is)."""
        run = batch.runs[key][0]
        if (digest := batch.digests.get(key)) is None or run.metadata.get(INGESTED_FROM) == (
                digest := self._stored_digest(digest)):
            return run
        return run.model_copy(update={"metadata": {**run.metadata, INGESTED_FROM: digest}})

    def _stored_run(self, key: Key, uri: str, *, quiet: bool = False) -> Trajectory | None:
        """The stored copy of a run, from the trace store; None (logged, unless ``quiet``: then not retried
        either) when its trace cannot be read."""
        if quiet:
            try:
                return self.traces.get(uri, tenant=key[0])
            except Exception as exc:  # noqa: BLE001 - nothing to compare with: the run is written as read
                log.debug("the stored trace of %s cannot be read: %s", key[1], exc)
                return None
        try:
            return self.retry.run(f"trace store read of {key[1]}", lambda: self.traces.get(uri, tenant=key[0]),
                                  _trace_error_is_transient)
        except TraceNotFoundError:  # one line, at once: the run is written as read, and its trace with it
            log.warning("the stored trace of %s is missing (%s): the run is written again as read; a verdict an "
                        "outcome file gave it before is not kept", key[1], uri)
            return None
        except Exception as exc:  # noqa: BLE001 - its verdict cannot be told: the run is written as read
            log.warning("the stored trace of %s cannot be read (%s): its verdict, if an outcome file gave one, is "
                        "not kept", key[1], exc)
            return None

    # -- stage 3: traces, then rows, then the commit ---------------------------------------

    def _write(self, batch: _Batch, report: IngestReport, written: dict[Key, str], now: dict[Key, str]) -> None:
        # A run may recur in a later batch of this call whose lookup ran before this one's write: re-check
        # against what this call already wrote (same content: unchanged; else rewrite it). Only this call's:
        # an earlier call's writes were committed before this call's lookups, which see the store as it is now
        # (a run deleted since is written again, never skipped on memory alone).
        self._recheck_written(batch, now)
        stale = {k for k in batch.runs if k not in batch.todo and k in now and now[k] != batch.hashes[k]}
        if stale:
            self._prepare(batch, only=stale)
        batch.todo = todo = [k for k in batch.todo if now.get(k) != batch.hashes[k]]
        replace = [k for k in todo if k in batch.stored or k in written]
        if todo:
            uris = self._put_traces([self._as_stored(batch, k) for k in todo])
            for key, uri in zip(todo, uris):
                if uri != self.traces.uri_for(*key):  # a store that names traces its own way
                    for record in batch.records[key]:
                        record["trace_uri"] = uri
            rows = [r for k in todo for r in batch.records[k] if r["level"] != "task"]
            tasks = [r for k in todo for r in batch.records[k] if r["level"] == "task"]
            with file_lock(self.write_lock):
                # the runs in flight are recorded first: a writer killed mid-batch leaves no half run visible
                in_flight = [(r["tenant"], r["trajectory_id"], r["id"], r["content_hash"]) for r in tasks]
                self._index_call("run record", lambda: self.index.begin_runs(in_flight))
                if replace:  # one delete for many runs: each costs a scan
                    self._index_call(f"delete of {len(replace)} run(s)", lambda: self.index.delete_runs(replace))
                for chunk in _chunks(rows, 1000):
                    self._index_call("row upsert", lambda chunk=chunk: self.index.upsert(chunk))
                for chunk in _chunks(tasks, 1000):
                    self._index_call("task row upsert", lambda chunk=chunk: self.index.upsert(chunk))
                self._index_call("run record", self.index.end_runs)
        report.superseded += self._remove_superseded(batch, written, now)
        if self.verify_traces:
            report.traces_restored += self._restore_traces([self._as_stored(batch, k) for k in batch.runs
                                                            if k not in todo])
        for key, (run, fmt) in batch.runs.items():
            if key in todo:  # written again: a later copy replacing one this ingest wrote, the run counted once
                what = "replaced" if key in written else "ingested"
                report.rows += len(batch.records[key])
                written[key] = now[key] = batch.hashes[key]
            else:
                what = "unchanged"
            _tally(report, fmt, what)
        report.verdicts_kept += len(batch.kept_verdicts - self.verdicts_counted)
        self.verdicts_counted |= batch.kept_verdicts
        others = [key for key in todo if key in batch.others]
        report.note_other_runs([(key[1], *batch.others[key]) for key in others])
        self.other_runs.update(others)
        for key, fmt, chash in batch.repeats:  # a copy of a run that a later copy in the same batch replaced
            _tally(report, fmt, "unchanged" if chash == batch.hashes[key] else "replaced")
        for item in batch.items:
            if getattr(item, "error", None) is not None:
                report.rejected_count += 1
                report.count(getattr(item, "fmt", None) or "unknown", "rejected")
                if self._kept is None or len(report.rejected) < self._kept:
                    report.rejected.append(Rejection(item.source, item.position, item.error, item.fmt))

    def _recheck_written(self, batch: _Batch, now: dict[Key, str]) -> None:
        """Give the batch's runs that this call wrote in an earlier batch, after this batch's lookup found them new,
        the verdict an outcome file gave what was written (``_keep_verdicts``, against the store as it is now): a run
        read twice, the first copy taking the verdict of its stored copy under a former id (``_keep_former_verdicts``)
        which ``_remove_superseded`` then removed, so that the second copy, met in a later batch, no longer finds it
        and would write the run again without it."""
        missed = [key for key in batch.todo if key in now and key not in batch.stored
                  and now[key] != batch.hashes[key] and not has_own_verdict(batch.runs[key][0])]
        if not missed:
            return
        stored, uris = self._stored_hashes(missed)
        batch.stored.update(stored)
        batch.stored_uris.update(uris)
        read = {key: batch.hashes[key] for key in missed}
        self._keep_verdicts(batch, [key for key in missed if key in stored])
        changed = {key for key in missed if batch.hashes[key] != read[key] and batch.hashes[key] != now[key]}
        if changed:  # still another version than the one written: its records, prepared as read, are redone
            self._prepare(batch, only=changed)

    def _remove_superseded(self, batch: _Batch, written: dict[Key, str], now: dict[Key, str]) -> int:
        """Remove the stored runs that the batch's runs supersede (see the module docstring), traces first, then
        rows; how many. One the batch itself holds is left alone: it was just written, as read. A run stored under
        a former id of a batch's run (``model.FORMER_IDS``) goes only when it is that run (read from its trace:
        ``ingest.read.same_run_anywhere``, with the verdict an outcomes file gave it): another attempt whose folder
        bore the same name stays, and so does a run whose trace cannot be read."""
        keys = list(dict.fromkeys((run.tenant, old) for run, _ in batch.runs.values() for old in superseded(run)
                                  if (run.tenant, old) not in batch.runs))
        former: dict[Key, list[Trajectory]] = {}  # every run naming it: attempts from same-named folders share one
        for key, (run, _) in batch.runs.items():
            for old in _former_ids(batch, key):
                if (run.tenant, old) not in batch.runs:
                    former.setdefault((run.tenant, old), []).append(run)
        _, uris = self._stored_hashes(list(dict.fromkeys([*keys, *former])))
        uris = {key: uri for key, uri in uris.items() if key in keys or self._is_former_copy(key, uri, former[key])}
        for (tenant, old), uri in uris.items():
            self.retry.run(f"trace store delete of {old}", lambda uri=uri, tenant=tenant:
                           self.traces.delete(uri, tenant=tenant), _trace_error_is_transient)
        if uris:
            with file_lock(self.write_lock):
                self._index_call(f"delete of {len(uris)} superseded run(s)", lambda: self.index.delete_runs(list(uris)))
            log.info("removed %d run(s) superseded by runs of this batch: %s", len(uris), ", ".join(k[1] for k in uris))
        for key in uris:  # gone: a later copy of it is written again, not skipped as unchanged
            written.pop(key, None)
            now.pop(key, None)
        return len(uris)

    def _is_former_copy(self, key: Key, uri: str, runs: list[Trajectory]) -> bool:
        """Whether the run stored under ``key``, a former id of each of ``runs``, is one of them (see
        ``_remove_superseded``)."""
        from .ingest.read import same_run_anywhere  # (the ingest package imports this module)

        stored = self._stored_run(key, uri, quiet=True)
        if stored is None:
            return False
        if not (kept := any(same_run_anywhere(stored, keep_verdict(run, stored) or run) for run in runs)):
            log.info("%s is kept: another run than %s, which name it as their former id", key[1],
                     ", ".join(run.trajectory_id for run in runs))
        return kept

    def _restore_traces(self, runs: list[Trajectory]) -> int:
        """Write again the traces of indexed, unchanged runs that the trace store no longer has."""
        missing = [run for run in runs if not self.retry.run(
            f"trace store lookup of {run.trajectory_id}",
            lambda run=run: self.traces.exists(self.traces.uri_for(run.tenant, run.trajectory_id), tenant=run.tenant),
            _trace_error_is_transient)]
        if missing:
            log.warning("restoring %d trace(s) missing from the trace store", len(missing))
            self._put_traces(missing)
        return len(missing)

    def _put_traces(self, runs: list[Trajectory]) -> list[str]:
        """Store every trace of a batch, several at once (object stores and fsync are latency-bound)."""

        def put(run: Trajectory) -> str:
            return self.retry.run(f"trace store write of {run.trajectory_id}", lambda: self.traces.put(run),
                                  _trace_error_is_transient)

        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.put_concurrency, thread_name_prefix="ingest-trace-put")
        futures = [self._pool.submit(put, run) for run in runs]
        uris: list[str] = []
        for run, future in zip(runs, futures):
            try:
                uris.append(future.result())
            except Exception as exc:
                for other in futures:
                    other.cancel()
                if isinstance(exc, TraceStoreSetupError):  # a rerun fails the same way until the setup changes
                    raise IngestError(f"{exc} (no row of this batch was written, earlier batches are committed)") \
                        from exc
                raise IngestError(
                    f"trace store write of {run.trajectory_id!r} failed after {self.retry.attempts} attempts: {exc}; "
                    "no row of this batch was written (traces go first), earlier batches are committed: "
                    "rerun the same command to resume"
                ) from exc
        return uris

    def _index_call(self, what: str, fn: Callable[[], Any]) -> Any:
        try:
            return self.retry.run(f"index {what}", fn, _index_error_is_transient)
        except Exception as exc:
            raise IngestError(f"index {what} failed: {type(exc).__name__}: {exc}") from exc

    def _stored_hashes(self, keys: list[Key]) -> tuple[dict[Key, str], dict[Key, str]]:
        """Content hashes and trace uris of runs already indexed, read from their task rows by key."""
        found: dict[Key, str] = {}
        uris: dict[Key, str] = {}
        fields = ["trajectory_id", "content_hash", "trace_uri"]
        for tenant in {t for t, _ in keys}:
            ids = [row_id(tenant, trajectory_id, "task", -1) for t, trajectory_id in keys if t == tenant]
            rows = self.retry.run(
                "index lookup",
                lambda tenant=tenant, ids=ids: self.index.get(ids, Filters(tenant=tenant), fields=fields),
                _index_error_is_transient,
            )
            for row in rows:
                found[(tenant, row["trajectory_id"])] = row["content_hash"]
                uris[(tenant, row["trajectory_id"])] = row["trace_uri"]
        return found, uris


def _tally(report: IngestReport, fmt: str, what: str) -> None:
    """Count one run read as ``what`` (ingested, unchanged or replaced), in all and for its format."""
    setattr(report, what, getattr(report, what) + 1)
    report.count(fmt, what)


def _text_key(text: str, max_tokens: int | None) -> bytes:
    """A text's key among the vectors embedded lately (the token cap is part of it)."""
    salt = f"{max_tokens or ''}\x1f".encode()
    return hashlib.blake2b(salt + text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


@contextmanager
def file_lock(path: str | None) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` for the block (nothing when ``path`` is None)."""
    if path is None:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class _Stage:
    """One of the pipeline's threads, and whether it has ended, as it says itself: a KeyboardInterrupt raised inside
    ``Thread.join`` marks the thread stopped while it runs on Python 3.11 (``_wait_for_tstate_lock`` releases the
    thread's lock on any exception), so ``is_alive()`` then lies and the store was closed under the batch being
    written. The wait is a bare lock's, in C: a signal's exception leaves it with the lock untouched."""

    def __init__(self, name: str, fn: Callable[[], None], stop: threading.Event,
                 failure: list[BaseException]) -> None:
        self.name = name
        self.ended = False
        self._running = threading.Lock()
        self._running.acquire()  # released by the thread, last
        self._fn, self._stop, self._failure = fn, stop, failure
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def _run(self) -> None:
        try:
            self._fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            self._failure.append(exc)
            self._stop.set()
        finally:
            self.ended = True
            self._running.release()

    def wait(self, timeout: float) -> bool:
        """Whether the thread has ended, waiting up to ``timeout`` seconds for it to."""
        if not self.ended:
            self._running.acquire(timeout=timeout)
        return self.ended


def _join(stages: list[_Stage], stop: threading.Event, failure: list[BaseException]) -> None:
    """Wait for the pipeline's threads to end (``stop`` set once one failed). An interruption meanwhile (Ctrl-C, a
    SIGTERM: met here once every batch is handed over, as the last ones are written) sets ``stop`` and is raised once
    they have ended, the batch being written finished: leaving at once closed the store under that write, its runs
    stored but not checkpointed, or left half-written (review RVME36 3)."""
    interrupted: BaseException | None = None
    while True:
        try:  # the whole wait: a worker's signal is raised at the next line of this code (see ingest.interrupts)
            for s in stages:
                while not s.wait(0.2):
                    if failure:
                        stop.set()
            break
        except BaseException as exc:  # noqa: BLE001 - raised below, once the batch in hand is written
            interrupted = interrupted or exc
            stop.set()
    if interrupted is not None:
        raise interrupted


def _chunks(items: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
