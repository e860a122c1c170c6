"""The batch indexer: dumps in, checkpointed and sharded, through the pipelined :class:`Indexer`.

One call of :func:`run_ingest` is one *job*: inputs (files or directories),
how to read them (format, tenant, defaults, grouping, an outcome file), where
to write (an open :class:`TrajSearch`) and which shard of the runs to take.

Sharding: worker ``i`` of ``N`` keeps the runs whose ``tenant + trajectory_id``
hashes to ``i`` (blake2b, so every machine and Python agrees), and the
rejected records whose ``source + position`` does. Every worker therefore
reads every input (parsing costs about 1% of embedding on these machines)
but writes disjoint runs: no two workers ever write or replace the same run,
work is balanced even when one file holds most of the dump, and a run keeps
its worker whichever file it sits in. Sharding by file would save the
parsing but leave one big file to one worker and let two workers race on a
run that appears in two files.

:func:`run_workers` runs ``N`` such workers as local processes against one
store; with a local Milvus Lite path it first serves that path over gRPC on
127.0.0.1 (one process per data directory is all Milvus Lite allows).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from .adapters import read_with, read_with_value
from .adapters._common import DEFAULT_SUCCESS_THRESHOLD
from .orphans import ingest_of
from .checkpoint import Checkpoint, DeadLetter, job_id
from .outcomes import OutcomeTable
from ..fsutil import own_private, pid_alive, private_dir
from ..indexer import IngestReport, Marker
from ..represent import clip
from .read import (KEPT_REJECTIONS, ClippedRuns, DistinctIds, NamedAfterSpool, Parsed, PassedOverGroups, ReadOptions,
                   Unit, fingerprint, make_context, marked, parsed_as_given, plan_inputs, read_unit)

log = logging.getLogger(__name__)



@dataclass(frozen=True)
class Shard:
    """Worker ``index`` of ``count`` (0-based)."""

    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"shard must be i/N with 0 <= i < N, got {self.index}/{self.count}")

    @classmethod
    def parse(cls, spec: str) -> Shard:
        try:
            i, n = spec.split("/")
            return cls(int(i), int(n))
        except ValueError:
            raise ValueError(f"--shard expects i/N with 0 <= i < N (e.g. 0/4), got {spec!r}") from None

    def owns(self, key: str) -> bool:
        if self.count == 1:
            return True
        digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") % self.count == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class IngestJob:
    paths: Sequence[Path]
    fmt: str | None = None
    tenant: str = "default"
    defaults: Mapping[str, Any] = field(default_factory=dict)
    group_by: str = "trace"
    outcomes: Path | None = None
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD
    shard: Shard = Shard()
    checkpoint: Path | None = None
    dead_letter: Path | None = None
    resume: bool = True
    state_dir: Path | None = None
    store_label: str | None = None  # what the checkpoint ties to (default: the index URI)
    #: inputs that were streams (a pipe, a FIFO, stdin), by the path of their copy: what the operator named
    #: (see read.Streams). A stream is read whole each time: its units are left out of the checkpoint
    streams: Mapping[str, str] = field(default_factory=dict)
    #: the same copies' marks (``read.Streams.marks``): which file the indexer is told a stream's runs are of
    stream_marks: Mapping[str, str] = field(default_factory=dict)
    #: how the caller named ``tenant`` (``Context.tenant_set_by``): what a record of another tenant is told to do
    tenant_set_by: str = "python"

    def to_json(self) -> str:
        """The job as JSON, to hand to a worker process (see :mod:`trajsearch.ingest.worker`)."""
        data = {f: getattr(self, f) for f in self.__dataclass_fields__}
        data["paths"] = [str(p) for p in self.paths]
        data["shard"] = str(self.shard)
        data["defaults"] = dict(self.defaults)
        data["streams"] = dict(self.streams)
        data["stream_marks"] = dict(self.stream_marks)
        return json.dumps(data, default=str)

    @classmethod
    def from_json(cls, text: str) -> IngestJob:
        data = json.loads(text)
        data["paths"] = [Path(p) for p in data["paths"]]
        data["shard"] = Shard.parse(data["shard"])
        for name in ("outcomes", "checkpoint", "dead_letter", "state_dir"):
            data[name] = Path(data[name]) if data.get(name) else None
        return cls(**data)


@dataclass
class JobResult:
    report: IngestReport
    checkpoint: Path | None  # None over --server: every input is read, none skipped as done
    dead_letter: Path | None
    units: int
    skipped_units: int
    seconds: float
    error: str | None = None
    streamed: int = 0  # units read from a stream: read whole, never checkpointed
    skipped_keys: list[str] = field(default_factory=list)  # the units the checkpoint had done (see run_workers)
    renamed: list[tuple[str, str, str]] = field(default_factory=list)  # (source, original id, new id)
    outcomes: OutcomeTable | None = None  # the job's outcome file, counting the runs it had a verdict for
    clipped: ClippedRuns | None = None  # the runs read with an over-long field clipped
    spooled: NamedAfterSpool | None = None  # the runs of a stream named after its temporary copy
    passed_over: PassedOverGroups | None = None  # the groups read that hold no run (a trace of embedding calls)
    #: the records of the inputs that an earlier run of the job committed and this one did not read again (done per
    #: the checkpoint, or the head of one it resumed): landed, and rejected (in the dead-letter file). With this run's
    #: counts they say what the inputs hold, as an ingest over --server, which reads everything again, says it
    landed_earlier: int = 0
    rejected_earlier: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {**self.report.to_dict(), "units": self.units, "units_already_done": self.skipped_units,
                "units_streamed": self.streamed,
                "landed_earlier": self.landed_earlier, "rejected_earlier": self.rejected_earlier,
                "seconds": round(self.seconds, 2), "checkpoint": _named(self.checkpoint),
                "dead_letter": _named(self.dead_letter), "error": self.error,
                "renamed": [{"source": s, "trajectory_id": old, "renamed_to": new} for s, old, new in self.renamed],
                "outcomes": self.outcomes.counts() if self.outcomes is not None else None,
                "clipped": self.clipped.to_dict() if self.clipped is not None else None,
                "named_after_stream_copy": self.spooled.to_dict() if self.spooled is not None else None,
                "passed_over": self.passed_over.to_dict() if self.passed_over is not None else None}


def _named(path: Path | None) -> str | None:
    return str(path) if path is not None else None


@lru_cache(maxsize=1)
def reader_fingerprint() -> str:
    """A digest of the reading code, every source file of ``trajsearch.ingest`` (computed once per process). An
    upgrade may read the same files otherwise (a fixed step, another run id), so a checkpoint written by other
    reading code must not let a rerun skip them as done; re-reading costs unchanged runs only the content-hash
    comparison."""
    root = Path(__file__).parent
    digest = hashlib.blake2b(digest_size=8)
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def identity(job: IngestJob, store: str, traces: str, outcomes: OutcomeTable | None = None) -> dict[str, Any]:
    """What a checkpoint belongs to: the same inputs read the same way, by the same reading code, into the same
    store (other verdicts, other code or another ``TRAJSEARCH_LOCAL_TZ``, which times a local clock's runs, make
    another job: its runs must be read again)."""
    from ..config import local_time_zone

    return {"store": job.store_label or store, "traces": traces, "tenant": job.tenant, "format": job.fmt,
            "reader": reader_fingerprint(), "local_tz": (local_time_zone() or (None,))[0],
            "group_by": job.group_by, "defaults": dict(job.defaults),
            "outcomes": outcomes.fingerprint() if outcomes is not None else None, "shard": str(job.shard),
            "success_threshold": job.success_threshold}


def default_paths(state_dir: Path, ident: dict[str, Any], shard: Shard) -> tuple[Path, Path]:
    """(checkpoint, dead-letter) paths of a job under the state directory."""
    jid = job_id(ident)
    suffix = f"-shard{shard.index}of{shard.count}" if shard.count > 1 else ""
    return state_dir / f"checkpoint-{jid}.json", state_dir / f"dead-letter-{jid}{suffix}.jsonl"


def run_ingest(
    ts: Any,
    job: IngestJob,
    *,
    on_bytes: Callable[[int], None] | None = None,
    on_records: Callable[[int], None] | None = None,
    on_plan: Callable[[int], None] | None = None,
    indexer_options: Mapping[str, Any] | None = None,
) -> JobResult:
    """Ingest ``job`` into ``ts`` (a :class:`~trajsearch.search.TrajSearch`), resumably.

    ``on_plan(total_bytes)`` is called once the inputs are planned,
    ``on_bytes(n)`` as the input bytes whose records are committed grow (see
    :class:`_CommittedBytes`) and ``on_records(n)`` as records are committed
    (for a progress bar). Argument errors (missing path, unknown
    format, a side file named on its own, a bad outcome file) raise ValueError /
    FileNotFoundError before anything is written (an unreadable or undetectable file
    is a rejection like any bad record); a failed batch raises
    :class:`~trajsearch.indexer.IngestError` after the checkpoint
    covers every batch before it.
    """
    from ..config import home

    started = time.monotonic()
    _sweep_temporaries(ts, job.tenant)
    ctx = make_context(job.paths[0] if job.paths else ".", tenant=job.tenant, defaults=job.defaults,
                       success_threshold=job.success_threshold, tenant_set_by=job.tenant_set_by)
    outcomes = OutcomeTable.load(job.outcomes) if job.outcomes else None
    units: list[Unit] = plan_inputs(job.paths, job.fmt)
    ident = identity(job, *ts.location, outcomes)
    state_dir = Path(job.state_dir or home() / "ingest")
    ckpt_path, dl_path = default_paths(state_dir, ident, job.shard)
    checkpoint = Checkpoint.open(Path(job.checkpoint or ckpt_path), ident, resume=job.resume)
    dead = DeadLetter(Path(job.dead_letter or dl_path))
    if state_dir.resolve() == (home() / "ingest").resolve():  # trajsearch's own, 0755 where an older version made it
        own_private(state_dir, 0o700)
    options = ReadOptions(group_by=job.group_by, outcomes=outcomes,
                          keep=job.shard.owns if job.shard.count > 1 else None, spool_dir=None)

    streamed = {unit.key for unit in units if unit.streamed(job.streams)}
    plan, skipped = _plan(units, checkpoint, streamed)
    earlier = [checkpoint.committed(unit.key) for unit in units if unit.key not in streamed]  # not written again
    total = sum(step.unit.size for step in plan if not step.noted)
    if on_plan:
        on_plan(total)
    checkpoint.stats.update(units=len(units), shard=str(job.shard), bytes_total=total, bytes_read=0)
    done = _CommittedBytes(on_bytes)

    distinct, clipped, spooled = DistinctIds(ctx, options), ClippedRuns(), NamedAfterSpool(job.streams)
    passed_over = PassedOverGroups()
    reading = replace(options, passed_over=passed_over)  # (a unit done already is re-read, not counted again)

    def items() -> Iterator[Any]:
        for step in plan:
            unit = step.unit
            if step.noted:
                for parsed in read_unit(unit, ctx, options=options):
                    distinct.remember(parsed)
                continue
            done.start(unit.key)
            for parsed in read_unit(unit, ctx, options=reading, on_bytes=done.read):
                if parsed.seq < step.written:
                    distinct.remember(parsed)
                    continue
                parsed = distinct(parsed)
                done.record(unit.key)
                yield clipped(_as_named(spooled(parsed), job) if unit.key in streamed else parsed)
            done.unit_read(unit.key)
            if unit.key not in streamed:
                done.record(None)
                yield Marker(("unit-done", unit.key))

    def on_commit(batch: list[Any], report: IngestReport) -> None:
        reached = done.committed(len(batch))
        for item in batch:
            if isinstance(item, Marker):
                checkpoint.finish(item.payload[1])
            elif isinstance(item, Parsed):
                if item.error is not None:
                    dead.write(item.source, item.position, item.fmt, item.error)
                if item.unit is not None:
                    checkpoint.advance(item.unit, item.seq, item.cursor, rejected=item.error is not None)
        checkpoint.stats.update(ingested=report.ingested, unchanged=report.unchanged, bytes_read=reached,
                                rejected=report.total_rejected, updated=time.time())
        checkpoint.save(before=dead.sync)  # rejections are durable before the checkpoint that covers them
        # told once saved (a Ctrl-C met in a callback left the batch's records to be read again: review FRCLI2's
        # order), the runs before the bytes (a line between them said "0.5 of 9.9 MB done, 0 runs written")
        if on_records:
            on_records(sum(1 for item in batch if not isinstance(item, Marker)))
        done.credit(reached)

    # a restart also checks that unchanged runs still have their trace (a store emptied since)
    indexer = ts.indexer(**{"verify_traces": not job.resume, **dict(indexer_options or {})})
    error = None
    try:
        report = indexer.add(items(), on_commit=on_commit, max_kept_rejections=KEPT_REJECTIONS)
    except BaseException:
        _close_state(checkpoint, dead, failing=True)
        raise
    done.finish()
    _close_state(checkpoint, dead, failing=False)
    return JobResult(report, checkpoint.path, dead.path, len(units), len(skipped), time.monotonic() - started, error,
                     streamed=len(streamed), skipped_keys=skipped, renamed=distinct.renamed, outcomes=outcomes,
                     clipped=clipped, spooled=spooled, passed_over=passed_over,
                     landed_earlier=sum(n for n, _ in earlier), rejected_earlier=sum(n for _, n in earlier))


class _CommittedBytes:
    """The input bytes whose records are committed, told to ``on_bytes`` as they grow: a progress bar of the work left.

    The bytes read had been told as the reader went, which runs ahead of the embedding and writing by the pipeline's
    queues, and over a whole file at once for a JSON document: the bar stood at 100% while most runs were still to be
    written (round 24, NEWB: 3.4 of 3.4 MB at 0 runs written of a 115-run tau-bench file). Each item handed to the
    indexer is marked, in order, with how far the reading was when it was handed over; a committed batch credits its
    last item's mark. The records of a unit read whole by then share its bytes evenly (a document's records are all
    parsed from its last bytes), so the bar moves run by run there too.
    """

    def __init__(self, on_bytes: Callable[[int], None] | None) -> None:
        self.on_bytes = on_bytes
        self.bytes_read = 0
        self.credited = 0
        #: per item handed over, in order: (its unit, its ordinal there, the bytes read then); None: a marker
        self.marks: deque[tuple[str | None, int, int]] = deque()
        #: per unit being read or committed: [bytes read before it, after it (None: still reading), records]
        self.units: dict[str, list[Any]] = {}

    def read(self, n: int) -> None:
        self.bytes_read += n

    def start(self, unit: str) -> None:
        self.units[unit] = [self.bytes_read, None, 0]

    def record(self, unit: str | None) -> None:
        """An item is handed to the indexer: a record of ``unit``, or (None) a marker."""
        if unit is not None:
            self.units[unit][2] += 1
        self.marks.append((unit, self.units[unit][2] if unit is not None else 0, self.bytes_read))

    def unit_read(self, unit: str) -> None:
        self.units[unit][1] = self.bytes_read

    def committed(self, items: int) -> int:
        """The next ``items`` items handed over are committed: how far that reaches, to :meth:`credit` once saved."""
        reached = self.credited
        for _ in range(min(items, len(self.marks))):
            unit, ordinal, mark = self.marks.popleft()
            span = self.units.get(unit) if unit is not None else None
            if span is not None and span[1] is not None:  # its unit read whole: an even share of its bytes
                mark = span[0] + (span[1] - span[0]) * ordinal // max(span[2], 1)
            reached = max(reached, mark)
        return reached

    def finish(self) -> None:
        """Every item is committed: what is left (a file's end past its last record, a unit of none) is done too."""
        self.credit(self.bytes_read)

    def credit(self, reached: int) -> None:
        if reached > self.credited:
            if self.on_bytes:
                self.on_bytes(reached - self.credited)
            self.credited = reached


class _Step(NamedTuple):
    """How a job reads one unit: ``noted`` (done per the checkpoint: its runs only shown to
    :meth:`DistinctIds.remember`), or written from record ``written`` on, the records before it only noted."""

    unit: Unit
    noted: bool = False
    written: int = 0


def _plan(units: list[Unit], checkpoint: Checkpoint, streamed: set[str]) -> tuple[list[_Step], list[str]]:
    """The job's steps, and the units done per the checkpoint that are not written again.

    Run ids depend on every run read before (see :class:`DistinctIds`), so a rerun reads what it skips writing:
    the units done before the first one read anew, and the head of a unit resumed where its committed records end,
    are read again for their ids only (parsing costs a fraction of embedding), and once a unit is read anew (new,
    changed, a stream), the units after it are written again whole, done or not: their ids may now differ from the
    ones written (a run that shared an id with no run before may now share it), and the runs that kept theirs cost
    only the content-hash comparison. Done units after the last one written are not read at all (probe G, G1).
    """
    steps: list[_Step] = []
    anew = False  # a unit before this one is read anew: the ids of the later runs may differ from those written
    for unit in units:
        if unit.key in streamed:
            steps.append(_Step(unit))
            anew = True
            continue
        done, skip, _ = checkpoint.resume_point(unit.key, _fingerprint(unit))
        if done and not anew:
            steps.append(_Step(unit, noted=True))
            continue
        if anew:  # written again whole: a kill meanwhile must not leave it done, or resumed after runs not rewritten
            checkpoint.reset(unit.key, _fingerprint(unit))
            skip = 0
        steps.append(_Step(unit, written=skip))
        anew = True
    skipped = [step.unit.key for step in steps if step.noted]
    while steps and steps[-1].noted:
        steps.pop()
    return steps, skipped


def _fingerprint(unit: Unit) -> str:
    """A unit's fingerprint for the checkpoint: its files' (``read.fingerprint``), and those of the files its runs are
    read with (``adapters.read_with``: an OpenHands attempt file's aggregate, which came later) and the part of one
    they depend on (``adapters.read_with_value``: a Continue session's entry in its index), so that a unit done is
    read again when what it was read with changed, not only when it did (probe 48, L4)."""
    own = fingerprint(unit)
    fmt = unit.fmt if unit.forced else None  # under --format, its adapter's alone
    beside = tuple(dict.fromkeys(p for f in unit.files for p in read_with(f, fmt) if p not in unit.files))
    if value := "".join(read_with_value(f, fmt) for f in unit.files):  # a Continue session's own entry in its index
        own = f"{own}={hashlib.blake2b(value.encode(), digest_size=8).hexdigest()}"
    return f"{own}+{fingerprint(replace(unit, files=beside))}" if beside else own


def _sweep_temporaries(ts: Any, tenant: str) -> None:
    """Remove what writers killed mid-write left in the trace store (a file store's temp files)."""
    sweep = getattr(ts.traces, "sweep_temporaries", None)
    if sweep is not None and (removed := sweep(tenant)):
        log.info("removed %d temporary file(s) that a killed ingest left in the trace store", removed)


def _close_state(checkpoint: Checkpoint, dead: DeadLetter, *, failing: bool) -> None:
    """Save the checkpoint and close the dead-letter file. When the ingest is failing already, an error here (the
    full disk that failed it) is logged, not raised: the failure is the news, and the checkpoint saved at each
    commit stands (probe G, G1: the checkpoint's ENOSPC hid the batch's error)."""
    for step in (lambda: checkpoint.save(force=True, before=dead.sync), dead.close):
        try:
            step()
        except OSError as exc:
            if not failing:
                raise
            log.debug("ingest state not saved after the failure: %s", exc)


def _as_named(parsed: Parsed, job: IngestJob) -> Parsed:
    """A record of a stream's copy as of the stream the operator named, its run marked with the file the stream
    stands for (the copy's name is no file's: probe 50, OP 1), and out of the checkpoint: nothing can resume a
    stream, a rerun reads it whole."""
    return replace(parsed_as_given(marked(parsed, job.stream_marks), job.streams), unit=None)


# -- local workers -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalServer:
    """``milvus-lite server`` for a local data directory, on 127.0.0.1, for the life of a ``with`` block."""

    def __init__(self, data_dir: str, *, timeout: float = 60.0) -> None:
        self.data_dir = str(Path(data_dir).expanduser().resolve())
        self.port = free_port()
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> LocalServer:
        self._check_free()  # first: a data directory that is a file, or under one, is said so, not FileExistsError
        private_dir(Path(self.data_dir).parent)
        private_dir(Path(self.data_dir))  # the engine's 0644 segments stay private (probe I, I5)
        # through orphans.py: the server asks to die with this process (a kill -9 of ingest included)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trajsearch.ingest.orphans", str(os.getpid()), "milvus-lite", "server",
             "--data-dir", self.data_dir, "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                if self.proc.poll() is not None:
                    detail = (self.proc.stderr.read() or b"").decode(errors="replace")[-2000:]
                    raise RuntimeError(f"milvus-lite server for {self.data_dir} exited at start: {detail}")
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"milvus-lite server for {self.data_dir} did not listen within {self.timeout:.0f} s")

    def _check_free(self) -> None:
        """Raise :class:`StoreOpenError` (a clean one-line error) when another process holds the data directory.

        The server of a killed ingest (its parent gone) is closing: that one is waited for, up to ``timeout``,
        and the wait is said. Any other holder is a live process, waited for only as briefly as a
        single-process open waits (probe G, G4: the workers waited 60 s in silence, then failed as a crash)."""
        from ..store.lock import StoreOpenError, diagnose, holders, is_locked

        data = Path(self.data_dir)
        wait = None
        if is_locked(data) and (closing := [pid for pid, cmd in holders(data) if _orphaned_server(cmd)]):
            log.warning("the data directory %s is held by the milvus-lite server (process %d) of an ingest that "
                        "ended: waiting up to %.0f s for it to close", data, closing[0], self.timeout)
            wait = self.timeout
        busy = diagnose(data) if wait is None else diagnose(data, wait=wait)
        if busy:
            raise StoreOpenError(busy)

    @property
    def stopped(self) -> bool:
        """Whether the server has exited (on its own, or killed) before this ``with`` block ended."""
        return self.proc is not None and self.proc.poll() is not None

    def __exit__(self, *exc: object) -> None:
        from .orphans import STOP

        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(STOP)  # the server ignores SIGINT and SIGTERM: see orphans.py
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _orphaned_server(cmd: str) -> bool:
    """Whether a command line is a ``milvus-lite server`` started by :class:`LocalServer` whose ingest has died (it
    is then closing, on the signal :mod:`.orphans` asked for)."""
    pid = ingest_of(cmd)
    return pid is not None and not pid_alive(pid)


def run_workers(
    job: IngestJob,
    *,
    workers: int,
    uri: str,
    traces: str | None = None,
    poll: Callable[[list[dict[str, Any]]], None] | None = None,
    env: Mapping[str, str] | None = None,
    on_stopped: Callable[[list[str]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run ``job`` as ``workers`` local processes, worker ``i`` taking shard ``i/N``; their JSON reports.

    Each worker is ``python -m trajsearch.ingest.worker`` given its job as JSON.
    A local Milvus Lite path is served by one ``milvus-lite server`` on
    127.0.0.1 for the duration (one process per data directory is all Milvus
    Lite allows). ``poll(stats)`` is called about twice a second with each
    worker's checkpoint stats (for a combined progress bar), and once more
    with their final ones when an interruption has stopped the workers;
    ``on_stopped(problems)`` is then told what may have cut a batch short
    (none: each batch the workers had in hand was written whole).
    """
    from ..store.index import is_server_uri, local_store_path

    if workers < 1:
        raise ValueError("--workers must be at least 1")
    if not is_server_uri(uri):  # milvus-lite's server takes any path: a store no other command could then open
        local_store_path(uri)
    state_dir = Path(job.state_dir or ".")
    server = None if is_server_uri(uri) else LocalServer(uri)
    threads = max(1, (os.cpu_count() or 1) // workers)
    child_env = {**os.environ, **(env or {}), "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    run_id = job_id({"job": job.to_json(), "uri": uri, "workers": workers})
    checkpoints = [state_dir / f"checkpoint-workers-{run_id}-{i}of{workers}.json" for i in range(workers)]
    with server or nullcontext():
        state_dir.mkdir(parents=True, exist_ok=True)  # after the store's checks: $TRAJSEARCH_HOME a file is said so
        target = server.uri if server else uri
        from ..search import TrajSearch

        # the collection created once (workers racing to create it collide), and the model made first: a broken one
        # fails here, before any worker's checkpoint is written
        TrajSearch.open(target, traces=traces, warm=True).close()
        procs = []
        for i in range(workers):
            err = open(state_dir / f"worker-{i}of{workers}.log", "w+b")
            part = replace(job, shard=Shard(i, workers), checkpoint=checkpoints[i], store_label=uri)
            # writes to one milvus-lite server take turns (see Indexer.write_lock); a Milvus server needs no lock
            lock = str(state_dir / f"index-writes-{run_id}.lock") if server else None
            spec = json.dumps({"job": part.to_json(), "uri": target, "traces": traces, "write_lock": lock,
                               "parent_pid": os.getpid()})
            cmd = [sys.executable, "-m", "trajsearch.ingest.worker", spec]
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=child_env)
            procs.append((proc, _Output(proc), err))
        try:
            while any(p.poll() is None for p, _, _ in procs):
                if poll:
                    poll(_worker_stats(checkpoints))
                time.sleep(0.5)
        except BaseException:  # Ctrl-C or SIGTERM: the workers stop after the batch in hand (see worker.main)
            _stop_workers(procs, server, checkpoints, poll, on_stopped)
            raise
        results = []
        for i, (p, out, err) in enumerate(procs):
            result = out.result()
            result.setdefault("error", None)
            if p.returncode != 0 and not result.get("error"):
                result["error"] = _exited(i, p, err)
            result["shard"] = f"{i}/{workers}"
            result["exit_code"] = p.returncode
            results.append(result)
            err.close()
        relay_warnings(results)
        return _with_inputs_done(results)


class _Output:
    """A worker's standard output, its result as JSON, read through a pipe as it comes. Not a file under the state
    directory: on a full disk that file took nothing, and the parent said "worker 0 exited with 1:" and no reason
    (probe 49, O1). Read by a thread, so that a result larger than the pipe's buffer (a unit key per input) cannot
    block the worker's exit."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._read, args=(proc.stdout,), daemon=True)
        self.reader.start()

    def _read(self, stream: Any) -> None:
        with stream:
            for chunk in iter(lambda: stream.read(65536), b""):
                self.chunks.append(chunk)

    def result(self) -> dict[str, Any]:
        """The worker's result (once it has exited); ``{}`` when it printed none, or not JSON."""
        self.reader.join()
        text = b"".join(self.chunks).decode(errors="replace")
        try:
            result = json.loads(text) if text.strip() else {}
        except ValueError:
            return {}
        return result if isinstance(result, dict) else {}


def relay_warnings(results: list[dict[str, Any]]) -> None:
    """Log here the warnings the workers logged (their ``warnings``, dropped from the results), each once: every
    worker walks every input, so the walk's (files under hidden folders, archives passed over) come from all of
    them alike. A worker's stderr is a file under the state directory: said only there, an ingest with
    ``--workers`` told nothing of the files it passed over that the same ingest in one process tells."""
    said: set[tuple[str, int, str]] = set()
    for result in results:
        for name, level, message in result.pop("warnings", None) or ():
            if (name, level, message) not in said:
                said.add((name, level, message))
                logging.getLogger(name).log(level, "%s", message)


def _stop_workers(procs: list[tuple[subprocess.Popen, Any, Any]], server: LocalServer | None,
                  checkpoints: list[Path], poll: Callable[[list[dict[str, Any]]], None] | None,
                  on_stopped: Callable[[list[str]], None] | None) -> None:
    """After an interruption: let the workers finish the batch in hand, then report their final checkpoints and
    what may have cut a batch short. Always both, a second Ctrl-C included (probe G, G2: it skipped the final
    poll, and the count said was the last progress poll's)."""
    problems: list[str] = []
    try:
        for p, _, _ in procs:
            if p.poll() is None:
                p.terminate()
        for p, _, _ in procs:  # a second Ctrl-C ends this wait, and the workers with this process
            p.wait()
        problems = _cut_short(procs, server)
    except BaseException:
        problems = ["a second interruption stopped the workers mid-batch"]
        raise
    finally:
        if poll:  # what they committed, from their final checkpoints (probe G, G5: the last poll's was stale)
            poll(_worker_stats(checkpoints))
        if on_stopped:
            on_stopped(problems)


def _cut_short(procs: list[tuple[subprocess.Popen, Any, Any]], server: LocalServer | None) -> list[str]:
    """What may have cut short the batch a stopped worker had in hand: its loopback server gone before it (probe G,
    G1: a signal to the process group killed it), a worker that reported a failed batch or ended otherwise than
    on the interruption. An interrupted worker does not report a batch that failed meanwhile: the server is the
    one cause seen."""
    problems = ["the store's milvus-lite server ended before the workers"] if server and server.stopped else []
    for i, (p, out, err) in enumerate(procs):
        if error := out.result().get("error"):
            problems.append(f"worker {i} failed: {error}")
        elif p.returncode not in (0, 128 + signal.SIGINT, 128 + signal.SIGTERM):
            problems.append(_exited(i, p, err))
    return problems


#: How much of the end of a worker's log its exit is said with: its last lines, each clipped.
LOG_TAIL_BYTES, LOG_TAIL_LINES, LOG_LINE_CHARS = 16_384, 5, 300


def _exited(i: int, proc: subprocess.Popen, err: Any) -> str:
    """A worker's exit, with the last lines of its log (its stderr): what it said as it ended (a traceback's last
    line is the error). "worker 1 exited with 1" alone left the cause to be dug out of a file (CI at f198fa74). Only
    the log's end is read, and each line clipped: a log may be large, its last line too (review RVME36, 2)."""
    end = err.seek(0, os.SEEK_END)
    err.seek(max(0, end - LOG_TAIL_BYTES))
    lines = err.read().decode(errors="replace").strip().splitlines()[-LOG_TAIL_LINES:]
    tail = " | ".join(clip(line, LOG_LINE_CHARS) for line in lines)
    return f"worker {i} exited with {proc.returncode}" + (f" (its log ends: {tail})" if tail else " (its log is empty)")


def _with_inputs_done(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The workers' results, each with ``units_done_by_every_worker``: every worker plans every input and keeps its
    own checkpoint, so an input is done only if every worker skipped it (the sum of their counts is up to N times
    the inputs). The workers' lists of skipped units are dropped: the count is what a report needs."""
    done = [set(r.pop("skipped_keys", None) or ()) for r in results]
    common = len(set.intersection(*done)) if done and all("units_already_done" in r for r in results) else 0
    return [dict(r, units_done_by_every_worker=common) for r in results]


def _worker_stats(checkpoints: list[Path]) -> list[dict[str, Any]]:
    stats = []
    for path in checkpoints:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        stats.append(data.get("stats") or {})
    return stats
