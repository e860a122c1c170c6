"""``ingest`` and ``formats``: getting trace dumps into the index, and saying which dumps it reads.

Ingest is the one command that writes: it alone needs progress bars, dry runs, shards, workers,
checkpoints and a summary of what landed and what was rejected.

Its report is read in logs and pagers as often as on a terminal (cron, CI, ``| less``), where Rich lays
text out at 80 columns: its lines are printed unwrapped (``soft_wrap``: a terminal wraps them itself, a
log keeps each whole), and a dry run lists its files as lines there, not as a table (probe E, E5).
"""

from __future__ import annotations

import json
import logging
import signal
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, List, Optional

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.table import Table

from .connect import connect, note_unused_key, opening, store_named
from .disk import DiskFull
from ..ingest.interrupts import raise_when_out_of_locks
from ..vocab import GROUP_BY
from .options import AsJson, Ca, Server, Tenant, Traces, Uri, choice
from .output import err, fail, fail_now, leave_now, out, print_json, say_interrupted, sigterm_exits, stopped
from .progress import LOG_EVERY, progress

if TYPE_CHECKING:
    from ..ingest.read import Streams
    from ..results import IngestReport


#: Rejections printed after the summary; the rest are in the dead-letter file.
SHOWN_REJECTIONS = 10


def ingest(
    paths: List[Path] = typer.Argument(..., help="Dump files or directories (.jsonl, .json, .traj, .traj.json, OTLP JSON; .gz or .zst ok), a pipe or FIFO, or - for standard input."),
    stream_name: List[str] = typer.Option([], "--stream-name", help="The file name a streamed input (-, <(...), a FIFO) stands for, e.g. 2026-12-04-airline.json or a SWE-agent run's run1/INSTANCE.traj: formats detect and take run ids from it (repeatable: one per stream, in order)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="Force a format instead of detecting it per file (see `trajsearch formats`)."),
    tenant: Tenant = None,
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", help="Join verdicts: a JSON/JSONL/CSV file of run id -> outcome/reward (e.g. a SWE-bench report), or a directory of them (the harness's logs: a report.json per instance). The summary says how many runs it matched."),
    group_by: str = typer.Option("trace", "--group-by", callback=choice(GROUP_BY), help="Span formats: one run per 'trace' or per 'conversation' (session)."),
    success_threshold: float = typer.Option(0.5, "--success-threshold", min=0.0, max=1.0, help="A graded run (reward from 0 to 1) at or above this is a success, below it a failure."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing: print per file the detected format, runs, "
                                 "steps, first task, tools, errors and outcomes (progress on stderr, as an ingest's)."),
    set_field: List[str] = typer.Option([], "--set", help="Default for a field the dump leaves empty, e.g. --set env_version=ci-v9 (repeatable; tags and tools_available comma-separated: tags added to the run's own, tools_available for a run that lists none)."),
    dead_letter: Optional[Path] = typer.Option(None, "--dead-letter", help="JSONL of rejected records, appended to (default: under the data directory; with --server, written only when named)."),
    rejects: Optional[Path] = typer.Option(None, "--rejects", hidden=True),
    shard: str = typer.Option("0/1", "--shard", help="Take shard i/N of the runs (by hash of tenant + trajectory_id); run N of these, anywhere."),
    workers: int = typer.Option(1, "--workers", "-w", min=1, help="Run N local worker processes against one store (serves a local Milvus Lite path over 127.0.0.1)."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (default: under the data directory, one per job)."),
    restart: bool = typer.Option(False, "--restart", help="Ignore the checkpoint and read every input again (unchanged runs are still skipped)."),
    state_dir: Optional[Path] = typer.Option(None, "--state-dir", help="Where checkpoints and dead letters go (default: ingest in $TRAJSEARCH_HOME)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar (or progress lines)."),
    log_every: float = typer.Option(LOG_EVERY, "--log-every", min=0.0, help="When stderr is no terminal (cron, CI): a "
                                    "progress line at most every SECONDS (0: at every update), a dry run's too."),
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Index trace dumps: streamed, resumable (kill it and rerun), shardable. Bad records go to a dead-letter file; the rest lands.

    A pipe is read too (`ingest <(zcat dump.jsonl.gz)`, a named FIFO, `-` for standard input):
    copied once to a temporary file and read whole on every run (no checkpoint can resume a stream).
    --stream-name gives the copy the dump's file name, which some formats take run ids from.

    With --server the records are parsed here and streamed to the server under the key's tenant
    (a write key); checkpoints, shards and workers are for the embedded store or a Milvus URI.
    Its progress counts the bytes read (within a file too) and the runs sent.

    \b
    Exit status (the records that read well land in every case):
    0 every record read landed (or was unchanged, or the checkpoint had its input done);
    3 some records or inputs were rejected, the rest landed (the dead-letter file lists them):
      a rerun too, whose checkpoint had those inputs done, as over --server, which reads them again;
      a file holding a run in a form not read (Cursor's json output, an Agentless log) is one, named or
      read by a walk (a walk passes .log files over, and notes a session database beside dumps);
    4 nothing landed: every record read was rejected;
    1 a failure: a batch not written, a worker failed, the store held by another ingest;
    2 a bad argument, a missing input, inputs holding no file to read at all (an empty
      folder, files not named as dumps), or a tool's side file named alone (Continue's
      sessions.json): nothing made. Dumps read that hold no run exit 0, and side files met
      in a walk or among other inputs are passed over (with --json, "no_run" says why);
    130, 143 stopped by Ctrl-C, SIGTERM: what was written stays, and a rerun finishes the rest.
    --dry-run exits as the ingest would (writing nothing).
    """
    from ..config import default_uri, home, local_time_zone
    from ..ingest.batch import IngestJob, Shard
    from ..ingest.read import Streams, is_stream

    for path in [*paths, *([outcomes] if outcomes else [])]:
        if not (is_stream(path) or path.exists()):
            fail(f"{path}: no such file or directory")
    _inputs_holding_nothing(paths, fmt)
    if len(stream_name) > sum(map(is_stream, paths)):
        fail(f"--stream-name given {len(stream_name)} time(s) for {sum(map(is_stream, paths))} streamed input(s)")
    try:
        job_shard = Shard.parse(shard)
        defaults = dict(parse_set(item) for item in set_field)
        local_time_zone()  # (make_context checks it too; here before workers start, which would each fail on it)
    except ValueError as exc:
        fail(str(exc))
    if not dry_run:  # said before a pipe is read
        _check_job_options(server, workers, job_shard.count, dead_letter or rejects, checkpoint, restart, state_dir)
    names, silent = iter(stream_name), quiet or as_json  # --json: its stdout is the summary, no progress
    try:
        with Streams() as streams:
            try:
                paths = [streams.take(p, next(names, None)) if is_stream(p) else p for p in paths]
                outcomes = streams.take(outcomes) if outcomes else None
            except (ValueError, OSError) as exc:
                fail(str(exc))
            given = _as_given(paths, streams)  # a pipe's copy is gone by the summary
            if dry_run:
                would = _dry_run(paths, fmt, tenant or _key_tenant(server, ca), defaults, group_by, outcomes,
                                 success_threshold, as_json, streams, tenant_set_by="server" if server else "cli",
                                 quiet=silent, log_every=log_every)
                if code := exit_status([would]):
                    raise typer.Exit(code)
                return
            if server:
                with _remote_dead_letter(dead_letter or rejects) as keep_rejections:
                    try:
                        results = _ingest_remote(paths, server, ca, uri, traces, tenant, fmt=fmt, defaults=defaults,
                                                 group_by=group_by, outcomes=outcomes,
                                                 success_threshold=success_threshold, streams=streams,
                                                 quiet=silent, log_every=log_every)
                    except _ServerStopped as stopped:  # what was refused here is known: kept as a finished one's
                        keep_rejections({"rejections": stopped.rejections})
                        raise
                    keep_rejections(results[0])
            else:
                states = state_dir or home() / "ingest"
                job = IngestJob(paths=[p.resolve() for p in paths], fmt=fmt, tenant=tenant or "default",
                                defaults=defaults, group_by=group_by, outcomes=outcomes.resolve() if outcomes else None,
                                success_threshold=success_threshold, shard=job_shard, checkpoint=checkpoint,
                                dead_letter=dead_letter or rejects, resume=not restart, state_dir=states.resolve(),
                                streams=streams.names, stream_marks=streams.marks, tenant_set_by="cli")
                results = _ingest_here(job, workers, uri or default_uri(), traces, silent, log_every)
    except _ServerStopped as stopped:  # said once the copies of piped input are removed (see leave_now)
        if stopped.code == EXIT_FAILED:
            fail_now(str(stopped), code=EXIT_FAILED)
        leave_now(stopped.code)  # interrupted: said already
    _ingest_summary(results, as_json, paths, fmt, given)
    if code := exit_status(results):
        raise typer.Exit(code)


def _key_tenant(server: str | None, ca: Path | None) -> str:
    """The tenant records are read under when --tenant is not given: over --server the key's (a native record
    naming it is the key's own), else the default tenant."""
    if not server:
        return "default"
    with connect(server, ca, None, None, None) as api:
        return api.tenant_name()


@contextmanager
def _remote_dead_letter(path: Path | None) -> Iterator[Callable[[dict[str, Any]], None]]:
    """``--dead-letter FILE`` over --server: a function that appends an ingest result's rejections (those refused
    here and the server's) to ``path`` as a local ingest appends its own, and has the summary name the file. The flag
    had been taken and nothing written, while the summary and exit status 3 point at "the dead-letter file".

    A rejection the file holds already (the same source, position and reason) is not written again: a rerun of a
    local ingest writes none (its checkpoint skips what it read), and over --server, which keeps no checkpoint,
    each rerun had appended them all once more."""
    from ..ingest.checkpoint import DeadLetter

    if path is None:
        yield lambda result: None
        return
    dead = DeadLetter(path)  # writable: :func:`_check_job_options` opened it
    kept = _dead_letter_lines(path)

    def keep(result: dict[str, Any]) -> None:
        for rejection in result.get("rejections") or []:
            line = (rejection["source"], rejection["position"], rejection["reason"])
            if line not in kept:
                kept.add(line)
                dead.write(*line[:2], rejection.get("format"), line[2])
        dead.sync()
        result["dead_letter"] = str(path)

    try:
        yield keep
    finally:
        dead.close()


def _dead_letter_lines(path: Path) -> set[tuple[str, str, str]]:
    """The (source, position, reason) of each line of the dead-letter file at ``path`` (none if it is new); a line
    that is not one (a line cut by a process killed mid-write) is no rejection written."""
    lines: set[tuple[str, str, str]] = set()
    with open(path, encoding="utf-8", errors="replace") as f:
        for text in f:
            try:
                line = json.loads(text)
                lines.add((line["source"], line["position"], line["reason"]))
            except (ValueError, TypeError, KeyError):
                continue
    return lines


def _check_job_options(server: str | None, workers: int, shards: int, dead_letter: Path | None,
                       checkpoint: Path | None, restart: bool, state_dir: Path | None = None) -> None:
    from ..fsutil import file_in_the_way

    if server and (workers > 1 or shards > 1 or checkpoint or restart or state_dir):
        fail("--workers, --shard, --checkpoint, --restart and --state-dir apply to a store this process writes, not "
             "to --server")
    if workers > 1 and shards > 1:
        fail("use either --workers or --shard, not both")
    if workers > 1 and (dead_letter or checkpoint):
        fail("--dead-letter/--checkpoint with --workers: each worker writes its own (under --state-dir)")
    for option, path, what in (("--dead-letter", dead_letter, "dead-letter"), ("--checkpoint", checkpoint, "checkpoint")):
        if path and path.is_dir():  # a natural guess, as --state-dir takes one (probe G, G3)
            fail(f"{option} {path} is a directory: give a file path, or --state-dir {path} to have each job write "
                 f"its own {what} file there")
    if state_dir and (blocker := file_in_the_way(state_dir)) is not None:  # "[Errno 17] File exists: 'a-file'"
        what = "is a file" if blocker == state_dir else f"lies under {blocker}, which is a file"
        fail(f"--state-dir {state_dir} {what}: give a folder (made if not there), where each job keeps its "
             "checkpoint and dead-letter file")
    if dead_letter:  # before anything is read or sent (it had been "error: [Errno 17] File exists: 'a-file'")
        from ..ingest.checkpoint import DeadLetter
        try:
            DeadLetter(dead_letter).close()
        except OSError as exc:
            parent = dead_letter.parent
            why = f"{parent} is a file, not a folder" if parent.exists() and not parent.is_dir() else (
                f"{exc.strerror}: {exc.filename}" if exc.strerror else str(exc))
            fail(f"--dead-letter {dead_letter}: cannot write it ({why})")


def _inputs_holding_nothing(paths: List[Path], fmt: str | None) -> None:
    """Exit 2 before anything is made (a store, a checkpoint, a dead-letter file) when the inputs hold no file to
    read at all: folders empty, or of files not named as dumps (a share not mounted, the wrong folder: a nightly job
    pointed there exited 0, "ingested 0 runs" read as a quiet night, round 24, NEWB). Among inputs that do, each
    folder that holds none is said, and the rest are read. A run set the ingest recognises and finds no run in (an
    OpenHands evaluation that finished no instance, a Harbor job whose trials never ran) is read, not refused: it
    exits 0 saying so (review FRCLI2, 1)."""
    from ..ingest.read import holds_input, is_stream, plan_inputs

    empty = [p for p in paths if not is_stream(p) and p.is_dir() and not holds_input(p, fmt)]
    if len(empty) < len(paths):  # a file named (read whatever its name) or a folder holding a dump
        for folder in empty:
            _no_dump_file_line([folder])
        return
    try:
        if plan_inputs(paths, fmt):  # a folder it cannot list: a rejection, said by the ingest
            return
    except (ValueError, OSError) as exc:  # only archives, or dumps under hidden folders: said so
        fail(str(exc))
    if not _side_files_line(paths, fmt):  # a tool's side files not named as dumps (telemetry.log) are said so
        _no_dump_file_line(paths)
    raise typer.Exit(EXIT_BAD_INPUT)


#: ``ingest``'s exit status, for a scheduler (see its --help and the README). 0 and 1 keep their old meaning, and 2
#: (a bad argument, nothing written) is what ``fail`` and typer itself exit with; 3 and 4 are ingest's own.
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_REJECTED, EXIT_NOTHING_LANDED = 0, 1, 2, 3, 4


def exit_status(results: list[dict[str, Any]]) -> int:
    """What the ingest's summary says in one number: a failure first, then no run landed, then some rejected.

    Inputs holding no file to read at all exit 2 before this (see :func:`_inputs_holding_nothing`), as does a tool's
    side file named as the only input (``detect.SideFile``: the operator's mistake, as a wrong path is); what was read
    and held no run (a results file of no simulations, an evaluation that finished no instance, a Harbor trial that
    never ran, side files met in a walk or among other inputs) exits 0, its summary saying so. A file holding a run in
    a form not read is a rejection where it is read: its run is lost. A walk reads Cursor's ``json`` output (a
    ``.json``), passes an Agentless ``.log`` over by name, and hands in a session database only where it found no
    dump (beside dumps, a note names it).

    The inputs' records count whichever run of the job read them: those an earlier run committed and this one did
    not read again (``landed_earlier``, ``rejected_earlier``: the checkpoint's) as well as this run's. A rerun of an
    ingest that rejected a line exits 3 again, as it does over --server, where every record is read again."""
    if any(r.get("error") for r in results):
        return EXIT_FAILED
    rejected = sum((r.get("rejected") or 0) + (r.get("rejected_earlier") or 0) for r in results)
    landed = sum((r.get("ingested") or 0) + (r.get("unchanged") or 0) + (r.get("landed_earlier") or 0)
                 for r in results)
    if rejected and not landed:
        return EXIT_NOTHING_LANDED
    return EXIT_REJECTED if rejected else EXIT_OK


def _ingest_here(job: Any, workers: int, uri: str, traces: str | None, quiet: bool,
                 log_every: float) -> list[dict[str, Any]]:
    """The job run into a store this process (or its workers) writes: each process's result."""
    from ..ingest.batch import run_ingest, run_workers
    from ..indexer import IngestError, disk_full
    from ..store.lock import StoreOpenError

    if workers > 1:
        note_unused_key(uri)  # the workers open the store themselves: said here, as connect says it
        _check_worker_locations(uri, traces)
        try:
            results = _run_workers_with_progress(run_workers, job, workers, uri, traces, quiet, log_every)
        except StoreOpenError as exc:  # the store held by another process: said as a single process says it
            fail(str(exc), code=EXIT_FAILED)
        except Exception as exc:  # noqa: BLE001 - a full disk met before the workers started (the store's creation)
            if not disk_full(exc):
                raise
            results = [{"disk_full": True}]
        if any(r.get("disk_full") for r in results):  # said as a single process says it (probe 49, O1)
            fail(_disk_full_message(None, sum(r.get("committed") or 0 for r in results), uri, traces, job.state_dir),
                 code=EXIT_FAILED)
        return results
    columns = (TextColumn("[bold]ingesting"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TextColumn("{task.fields[runs]} runs"), TimeElapsedColumn(), TimeRemainingColumn())
    runs = [0]  # records committed
    index_log = logging.getLogger("trajsearch.store.index")
    level = index_log.level
    try:
        with connect(None, None, uri, traces, job.tenant, quiet=quiet, warm=True) as api, \
                progress(*columns, console=err, label="ingesting", quiet=quiet, log_every=log_every) as bar:
            ts = api.api
            task = bar.add_task("ingest", total=None, runs=0)

            def on_records(n: int) -> None:
                runs[0] += n
                bar.update(task, runs=runs[0])

            try:
                with _said_when_interrupted(lambda: f"{runs[0]} records committed, each batch whole; {_RESUME}"), \
                        _stopping_said_at_once(lambda: _cut_short(runs[0])), sigterm_exits(out_of_locks=True):
                    result = run_ingest(ts, job, on_plan=lambda total: bar.update(task, total=total),
                                        on_bytes=lambda n: bar.advance(task, n), on_records=on_records)
            except (ValueError, OSError, IngestError) as exc:
                if disk_full(exc):
                    # closing the store then fails to save its lexical copy too: the line below says the disk is full
                    index_log.setLevel(logging.ERROR)
                    raise DiskFull() from exc
                if isinstance(exc, IngestError):
                    fail(f"{exc}", code=EXIT_FAILED)
                fail(str(exc))  # unknown format, bad outcome file, unreadable input...: nothing written
    except Exception as exc:  # noqa: BLE001 - a full disk, whichever step met it first (closing the store too)
        if not disk_full(exc):
            raise
        fail(_disk_full_message(exc, runs[0], uri, traces, job.state_dir), code=EXIT_FAILED)
    finally:
        index_log.setLevel(level)
    return [result.to_dict()]


def _check_worker_locations(uri: str, traces: str | None) -> None:
    """Refuse a store path Milvus Lite would refuse or a trace store location that is none before a worker starts
    (exit 2, nothing written), as one process's open refuses them. Not by catching ValueError around the workers'
    run: any ValueError met while they ran had been said as a bad argument of which nothing was written (review
    FRCLI2, 4)."""
    from ..store.index import is_server_uri, local_store_path
    from ..store.traces import open_trace_store

    try:
        if not is_server_uri(uri):
            local_store_path(uri)
        if traces:
            open_trace_store(traces)
    except ValueError as exc:
        fail(str(exc))


#: What a rerun of an interrupted ingest into a store this process writes does.
_RESUME = "rerun the same command to resume (what is done is skipped)"


@contextmanager
def _said_when_interrupted(said: Callable[[], str]) -> Iterator[None]:
    """On Ctrl-C or SIGTERM (exit 130, 143), one line first: ``interrupted: `` and ``said()``, what is written and
    what a rerun does (probe G, G5: both exited in silence, and "safe to interrupt" was the README's word only)."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit) as exc:
        if stopped(exc):
            say_interrupted(f"interrupted: {said()}")
        raise


#: Said at once on Ctrl-C of an ingest into a store this process (or its workers) writes.
STOPPING = ("stopping: the batch being written is finished first (each batch is written whole); the one being "
            "embedded is dropped")


@contextmanager
def _stopping_said_at_once(cut: Callable[[], str] | None = None) -> Iterator[None]:
    """On Ctrl-C, a line at once: the batch being written is finished before the process stops (each batch whole),
    and the one being embedded is dropped once its model call returns (``Indexer.add``), which on the real model took
    11-16 s with nothing shown, as if the ingest hung. A second Ctrl-C then leaves at once (exit 130) after the line
    ``interrupted: `` and ``cut()``, what cutting the batch short leaves: it had left the process with the store
    closed under the batch's write, whose retries were logged, and exit -2 (review NEWB, 6). Without ``cut`` (the
    workers, which ``run_workers`` stops itself), the second Ctrl-C is Python's own. Left alone where SIGINT is not
    Python's (ignored in a background job) or off the main thread, where no handler can be set."""
    if threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    hits, printing = [0], [False]

    def stopping(signum: int, frame: Any) -> None:
        hits[0] += 1
        if printing[0]:  # a Ctrl-C while the line is being printed: taken up once it is out, not inside rich's print
            return
        if hits[0] == 1:
            printing[0] = True
            err.print(STOPPING, highlight=False)
            printing[0] = False
        if hits[0] == 1 or cut is None:
            raise_when_out_of_locks(frame, KeyboardInterrupt())
            return
        err.show_cursor()  # a progress bar's hidden cursor: its own restoring is skipped
        err.print(f"interrupted: {cut()}", highlight=False, markup=False)
        leave_now(128 + signal.SIGINT)

    signal.signal(signal.SIGINT, stopping)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _sent_so_far(sent: int) -> str:
    """What an ingest over --server that stopped early has done, and what its rerun does: the server writes each
    batch of the stream whole as it arrives and keeps it, and holds no checkpoint (probe G, G4)."""
    return (f"{sent} runs and records sent to the server, which writes them in whole batches as they arrive and "
            "keeps those it wrote; rerun the same command to finish: it sends everything again, the runs already "
            "written counted unchanged")


def _disk_full_message(exc: BaseException | None, committed: int, uri: str, traces: str | None,
                       state_dir: Path | None) -> str:
    """One line for an ingest a full disk stopped: which disk, what is kept, what to do. A full disk is no crash:
    no traceback, and no retry of it either (probe G, G1)."""
    from .disk import FREE_AND_RERUN, full_disk

    kept = f" ({committed} records read and committed)" if committed else ""
    return (f"no space left{full_disk(exc, uri, traces, state_dir)}: the batches before this one are committed{kept}, "
            f"the one being written is not; {FREE_AND_RERUN} the same command to resume")


class _ServerStopped(Exception):
    """An ingest over --server stopped mid-stream: the server went away (its message, exit 1) or the user interrupted
    it (said already, exit 130 or 143). The process leaves at once, outside the progress bar, the channel and the
    piped inputs' copies (``cli.output.leave_now``)."""

    def __init__(self, message: str, code: int = EXIT_FAILED, report: IngestReport | None = None) -> None:
        super().__init__(message)
        self.code = code
        #: the records refused before it stopped (here: unparsed or too large; by the server, in streams it answered),
        #: as an ingest result's ``rejections`` (for --dead-letter): the report is the CLI's, filled as ``add`` goes
        self.rejections = [vars(r) for r in report.rejected] if report is not None else []


def _ingest_remote(paths: List[Path], server: str, ca: Path | None, uri: str | None, traces: str | None,
                   tenant: str | None, *, fmt: str | None, defaults: dict[str, Any], group_by: str,
                   outcomes: Path | None, success_threshold: float, streams: Any, quiet: bool = False,
                   log_every: float = LOG_EVERY) -> list[dict[str, Any]]:
    """Parse here, stream to the server: the tenant is the key's (a --tenant naming another is refused)."""
    from ..ingest.batch import JobResult
    from ..ingest.outcomes import OutcomeTable
    from ..ingest.read import (ClippedRuns, NamedAfterSpool, PassedOverGroups, as_given, marked, parsed_as_given,
                                plan_inputs, read_inputs)
    from ..service.client import DeadlineExceeded, RemoteIngestReport, ResourceExhausted, Unavailable

    started = time.monotonic()
    with connect(server, ca, uri, traces, tenant, quiet=quiet) as api:
        key_tenant = api.api.whoami()["tenant"]
        if tenant and tenant != key_tenant:
            fail(f"--tenant {tenant!r} is not the key's tenant ({key_tenant!r})")
        try:  # planned as a local ingest plans (before the bar: an error is not framed by an empty one)
            table = OutcomeTable.load(outcomes) if outcomes else None
            units, passed_over, renamed = plan_inputs(paths, fmt), PassedOverGroups(), []
        except (ValueError, OSError) as exc:
            fail(str(exc))
        total = sum(u.size for u in units)
        columns = (TextColumn("[bold]ingesting"), BarColumn(), DownloadColumn(),
                   TextColumn("{task.fields[runs]} runs sent"), TimeElapsedColumn(), TimeRemainingColumn())
        with progress(*columns, console=err, label="ingesting over --server", quiet=quiet, log_every=log_every,
                      runs="runs and records sent to the server") as bar:
            task = bar.add_task("ingest", total=total or None, runs=0)
            # lazy: an input that cannot be read is a rejection, not the end; its bytes move the bar as read
            parsed = read_inputs(paths, fmt=fmt, tenant=key_tenant, defaults=defaults, group_by=group_by,
                                 outcomes=table, success_threshold=success_threshold, units=units,
                                 passed_over=passed_over, renamed=renamed, tenant_set_by="server",
                                 on_bytes=lambda n: bar.advance(task, n))
            clipped, spooled = ClippedRuns(), NamedAfterSpool(streams.names)
            sent, report = [0], RemoteIngestReport()
            # each run marked with the file it was read from: the server sees no file (probe 50, OP 1)
            records = _sent((clipped(parsed_as_given(marked(spooled(p), streams.marks), streams.names))
                             for p in parsed), bar, task, sent, total)
            try:
                with _said_when_interrupted(lambda: _sent_so_far(sent[0])):
                    api.api.add(records, report=report)  # each batch bounded (Client.add), not the ingest
            except (Unavailable, DeadlineExceeded, ResourceExhausted) as exc:  # the server gone, stuck or its disk full
                # gRPC's thread may still be reading the records: the caller leaves without waiting for it
                # (the disk's message names its request id: said once)
                why = f"RESOURCE_EXHAUSTED: {exc.details}" if isinstance(exc, ResourceExhausted) else str(exc)
                said = f"the server at {server} stopped the ingest ({why}): {_sent_so_far(sent[0])}"
                raise _ServerStopped(said, report=report) from None
            except KeyboardInterrupt:  # said by _said_when_interrupted
                raise _ServerStopped("interrupted", 128 + signal.SIGINT, report) from None
            except SystemExit as exc:  # SIGTERM (output.sigterm_exits), said likewise
                if exc.code != 128 + signal.SIGTERM:
                    raise
                raise _ServerStopped("interrupted", exc.code, report) from None
    # a local ingest's result, so its every field reaches --server too, with no checkpoint: every input is read
    result = JobResult(report, None, None, len(units), 0, time.monotonic() - started,
                       streamed=sum(u.streamed(streams.names) for u in units),
                       renamed=[(as_given(s, streams.names), old, new) for s, old, new in renamed],
                       outcomes=table, clipped=clipped, spooled=spooled, passed_over=passed_over)
    return [dict(result.to_dict(), results=report.results)]


def _sent(records: Iterator[Any], bar: Any, task: int, sent: list[int], total: int) -> Iterator[Any]:
    """``records`` as they go to the server, counted in ``sent[0]`` and on ``bar`` (probe G, G3: an ingest over
    --server said nothing for 12 minutes), whose bytes move as the inputs are read (``read_inputs``' ``on_bytes``:
    a large file had shown 0.0 MB until its end). The server writes a stream's batches as they arrive; its counts of
    what it wrote come at the end."""
    for record in records:
        sent[0] += 1
        bar.update(task, runs=sent[0])
        yield record
    bar.update(task, completed=total)  # what no read told: an input that could not be read, a file past its runs


def _dry_run(paths: List[Path], fmt: str | None, tenant: str, defaults: dict[str, Any], group_by: str,
             outcomes: Path | None, success_threshold: float, as_json: bool, streams: Any,
             tenant_set_by: str, quiet: bool, log_every: float) -> dict[str, int]:
    """Print what each input holds; return what an ingest of it would do, for :func:`exit_status`: a dry run
    is a scheduler's pre-flight check, so it exits as the ingest would. ``tenant_set_by``: ``server`` over --server
    (a record of another tenant is told to use a key of its tenant, not --tenant)."""
    from dataclasses import replace

    from ..ingest.outcomes import OutcomeTable
    from ..ingest.preview import preview
    from ..ingest.read import KEPT_REJECTIONS, plan_inputs

    try:  # planned before the bar, as an ingest's (an error is not framed by an empty bar)
        table_of_outcomes = OutcomeTable.load(outcomes) if outcomes else None
        units = plan_inputs(paths, fmt)
    except (ValueError, OSError) as exc:
        fail(str(exc))
    total = sum(u.size for u in units)
    columns = (TextColumn("[bold]dry run, reading"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    # the progress a real ingest shows (on stderr: stdout is the listing's), of the bytes read: no run is written
    with progress(*columns, console=err, label="dry run, reading", quiet=quiet, log_every=log_every, runs=None) as bar:
        task = bar.add_task("dry run", total=total or None)
        try:
            files = preview(paths, fmt=fmt, tenant=tenant, defaults=defaults, group_by=group_by,
                            outcomes=table_of_outcomes, success_threshold=success_threshold,
                            tenant_set_by=tenant_set_by, units=units, on_bytes=lambda n: bar.advance(task, n))
        except (ValueError, OSError) as exc:
            fail(str(exc))
        bar.update(task, completed=total)  # what no read told (a file that could not be read), as --server's ends
    files = [replace(f, source=streams.given(f.source), rejections=[{k: streams.given(v) for k, v in r.items()}
                                                                    for r in f.rejections]) for f in files]
    joined = table_of_outcomes.counts() if table_of_outcomes is not None else None
    would = {"ingested": sum(f.runs for f in files), "rejected": sum(f.rejected for f in files), "units": len(files)}
    no_run = _nothing_read_line(paths, fmt, _as_given(paths, streams)) if not files else None
    if as_json:
        print_json({"dry_run": True, "files": [f.to_dict() for f in files], "outcomes": joined,
                    **({"no_run": no_run} if no_run else {})})
    else:
        _print_files(files)
    if as_json:
        return would
    for f in files:
        lines, untold = _rejection_lines(f.rejections, f.rejected, of=f.source)
        for line in lines:
            err.print(f"  [yellow]rejected[/yellow] {escape(f.source)}, {escape(line)}", highlight=False,
                      soft_wrap=True)
        if untold:
            err.print(f"  … and {untold} more rejection(s) in {escape(f.source)} (--json lists "
                      f"the first {KEPT_REJECTIONS})", highlight=False, soft_wrap=True)
        if f.renamed:
            err.print(f"  {f.renamed} run(s) in {escape(f.source)} share an id with a different run: "
                      "kept under a distinct id (id+hash)", highlight=False, soft_wrap=True)
        if f.repeated:
            err.print(f"  {f.repeated} run(s) in {escape(f.source)} repeat a run read before (the same id and "
                      "content, or an earlier save of it): stored once, not counted in its runs", highlight=False,
                      soft_wrap=True)
        if f.replaced:
            err.print(f"  {f.replaced} run(s) in {escape(f.source)} saved again later in a file read after it: "
                      "replaced by that later copy, not counted in its runs", highlight=False, soft_wrap=True)
    _clipped_line([{"runs": f.clipped, "examples": [f.first_clipped]} for f in files if f.clipped])
    if joined:
        _outcomes_line([joined])
    return would


#: How many positions a dry run's line of one reason names before "and N more".
_POSITIONS_NAMED = 5


def _rejection_lines(rejections: list[dict[str, str]], rejected: int, of: str = "") -> tuple[list[str], int]:
    """Rejections as a summary says them: one line per reason of a source (its positions named, up to
    ``_POSITIONS_NAMED``; ``source:`` first when the rejections name theirs, as an ingest's report does, not a dry
    run's of one file), at most ``SHOWN_REJECTIONS`` lines; and how many rejections they leave untold. A file whose
    every record names another tenant printed the same 250-character reason ten times (review of probe 50 NC), and
    the ingest itself still did, hiding an eleventh record's other reason (probe 51, NC2). A reason opening with its
    file's path (``of``: the file a dry run's lines are said under) is said without it: "rejected x.jsonl:file:
    x.jsonl: empty file" named the file twice."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for rejection in rejections:
        source = rejection.get("source", "")
        reason = rejection["reason"].removeprefix(f"{source or of}: ") if source or of else rejection["reason"]
        by_reason.setdefault((source, reason), []).append(rejection["position"])
    lines, told = [], 0
    for (source, reason), positions in list(by_reason.items())[:SHOWN_REJECTIONS]:
        more = len(positions) - _POSITIONS_NAMED
        named = ", ".join(positions[:_POSITIONS_NAMED]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"{source}:{named}: {reason}" if source else f"{named}: {reason}")
        told += len(positions)
    return lines, rejected - told


#: How many files of a folder that gave nothing :func:`_side_files_line` looks at, and how many it names.
_SIDE_FILES_LOOKED_AT, _SIDE_FILES_NAMED = 200, 5


def _side_files_line(paths: List[Path], fmt: str | None, said_lines: list[str] | None = None) -> bool:
    """Say what the files of the folders named are when the walk read none of them: side files a CLI writes beside
    its runs (Gemini CLI's ``logs.json``, its telemetry file, ...), passed over in a walk in silence, as each is
    named alone (``detect.SideFile``; probe C, C7: "its files hold no record of their format" was said of them).
    Whether every file looked at was one (else the caller's hint on files of no format is said too: review 2, D3).
    The line said is added to ``said_lines`` (for --json's ``no_run``)."""
    from ..ingest.detect import SideFile, walked_format

    said: list[str] = []
    others = 0
    files = (f for p in paths if p.is_dir() for f in sorted(p.rglob("*")) if f.is_file())
    for _, file in zip(range(_SIDE_FILES_LOOKED_AT), files):
        try:
            walked_format(file, fmt)
            others += 1
        except SideFile as exc:
            said.append(str(exc))
        except (ValueError, OSError):
            others += 1
    if said:
        line = (f"no run in the input: {len(said)} file(s) passed over as holding none: "
                + "; ".join(said[:_SIDE_FILES_NAMED]) + (" …" if len(said) > _SIDE_FILES_NAMED else ""))
        _note(line, said_lines)
    return bool(said) and not others


_DRY_RUN_COLUMNS = ("file", "format", "runs", "rejected", "passed over", "steps", "errors", "outcomes", "first task",
                    "tools", "model")


def _print_files(files: list[Any]) -> None:
    """What each file holds: a table on a terminal; else one line per file, its path whole (``| less``, a CI log,
    ``> file``: Rich lays a table out at 80 columns there, one word per line, and the path cut to ``…43/…``)."""
    rows = [_file_cells(f) for f in files]
    if out.is_terminal:
        table = Table(*_DRY_RUN_COLUMNS, title="dry run: nothing written")
        for cells in rows:
            table.add_row(escape(_short_path(cells[0])), *map(escape, cells[1:]))
        out.print(table)
        return
    out.print("dry run: nothing written", highlight=False)
    for path, *cells in rows:
        said = "; ".join(f"{name} {cell}" for name, cell in zip(_DRY_RUN_COLUMNS[1:], cells) if cell)
        out.print(f"{path}: {said}", markup=False, highlight=False, soft_wrap=True)


def _cell_label(label: str) -> str:
    """A label in a cell of counts joined by commas, quoted where it has one itself ("submitted, not evaluated"):
    ``failure 1, submitted, not evaluated 1`` read as three outcomes."""
    return f'"{label}"' if "," in label else label


def _file_cells(f: Any) -> list[str]:
    """A file's dry-run cells, in the order of ``_DRY_RUN_COLUMNS``."""
    tools = ", ".join(list(f.tools)[:6]) + (" …" if len(f.tools) > 6 else "")
    return [f.source, f.fmt or "?", str(f.runs), str(f.rejected), _passed_over([f.passed_over], "{groups}: {why}"),
            str(f.steps), f"{f.errors}, {f.not_run} not run" if f.not_run else str(f.errors),
            ", ".join(f"{_cell_label(k)} {v}" for k, v in sorted(f.outcomes.items())),
            " ".join((f.task or "").split())[:60],
            tools, ", ".join(list(f.models)[:2])]


def _verdicts_told(joins: list[dict[str, Any]]) -> str:
    """The verdicts given, by outcome, so that they add up to the runs given one (those an older SWE-bench report
    failed by leaving them out among them), and the runs the file says it did not evaluate (probe E2, E2-4)."""
    given: dict[str, int] = {}
    for join in joins:
        for outcome, n in join.get("outcomes", {}).items():
            given[outcome] = given.get(outcome, 0) + n
    unlisted = sum(j.get("unlisted", 0) for j in joins)
    told = ", ".join(f"{n} {outcome}" + (f" ({unlisted} of them not listed as resolved in it)"
                                         if outcome == "failure" and unlisted else "")
                     for outcome, n in sorted(given.items()))
    not_evaluated = sum(j.get("not_evaluated", 0) for j in joins)
    return (f": {told}" if told else "") + (
        f"; {not_evaluated} not evaluated by it (their own outcome kept)" if not_evaluated else "")


def _other_runs_replaced_line(results: list[dict[str, Any]]) -> None:
    """A warning when stored runs were replaced by different runs of another dump file that had their ids (probe 49,
    O4: a second folder's ``results.json`` replaced the first's runs of the same tasks, counted "ingested" only)."""
    if not (count := sum(r.get("other_runs_replaced") or 0 for r in results)):
        return
    examples = (e for r in results for e in r.get("other_runs_replaced_examples") or ())
    first = next(examples, {"trajectory_id": "?", "now_from": "?"})
    was = f"was from {escape(first['was_from'])}, " if first.get("was_from") else ""  # (the store keeps a digest)
    err.print(f"[yellow]{count} stored run(s) replaced by a different run of the same id from another file[/yellow] "
              f"(e.g. {escape(first['trajectory_id'])}: {was}now from {escape(first['now_from'])}; its steps and the "
              "stored run's part ways); the earlier runs are no longer searchable. If they are other runs, not "
              "newer copies of them, give the runs distinct ids (where the format takes them from the files' names, "
              "as tau-bench's does, distinct file names) and ingest the earlier file again",
              highlight=False, soft_wrap=True)


def _verdicts_kept_line(results: list[dict[str, Any]]) -> None:
    """The runs read with no verdict of their own that kept the one an earlier outcomes file gave them (probe E2,
    E2-C: an ingest without --outcomes had made 37 evaluated failures "submitted, not evaluated" in silence)."""
    if kept := sum(r.get("verdicts_kept") or 0 for r in results):
        why = ("this outcomes file has none for them" if any(r.get("outcomes") for r in results)
               else "no --outcomes this time")
        out.print(f"{kept} run(s) keep the verdict an earlier outcomes file gave: {why}", highlight=False,
                  soft_wrap=True)


def _outcomes_line(joins: list[dict[str, Any]]) -> None:
    """How many of the runs read the outcome file had a verdict for; a warning when none. Each worker joins the
    runs of its own shard: their counts add up (the file's own counts, verdicts and entries, are each worker's)."""
    runs, matched = sum(j["runs"] for j in joins), sum(j["matched"] for j in joins)
    if not runs:  # nothing read (a rerun the checkpoint skips): no "a verdict for 0 of 0"
        return
    name = escape(joins[0]["file"])
    if runs and not matched:
        err.print(f"[yellow]outcomes file {name} joined no verdict[/yellow]: none of its {joins[0]['verdicts']} ids is "
                  f"the trajectory id, source run id or task id of the {runs} run(s) read; their outcomes are the "
                  "dumps' own", highlight=False, soft_wrap=True)
    else:
        out.print(f"outcomes file {name}: a verdict for {matched} of {runs} run(s) read{_verdicts_told(joins)}",
                  highlight=False, soft_wrap=True)
    if invalid := max(j.get("invalid", 0) for j in joins):
        entries = escape(next(j["invalid_entries"] for j in joins if j.get("invalid")))
        err.print(f"[yellow]outcomes file {name}: {invalid} verdict(s) left out[/yellow] (those runs keep "
                  f"their own outcome): {entries}", highlight=False, soft_wrap=True)
    conflicting, ambiguous = max(j.get("conflicting", 0) for j in joins), sum(j.get("ambiguous", 0) for j in joins)
    if conflicting:
        err.print(f"[yellow]outcomes file {name}: {conflicting} id(s) judged differently by its reports[/yellow] (one "
                  "report per model?): each run took the verdict of the report whose folder names it"
                  + (f"; {ambiguous} run(s) matched none and keep their own outcome" if ambiguous else ""),
                  highlight=False, soft_wrap=True)


def _passed_over(counts: Iterable[dict[str, dict[str, int]] | None], said: str = "{groups} passed over: {why}") -> str:
    """What the read passed over as holding no run (``read.PassedOverGroups``, summed over the workers), e.g. "2
    trace(s) passed over: embedding calls only" (``said``'s wording); "" when nothing was."""
    from ..ingest.read import by_grouping

    merged = by_grouping((by, reason, n) for count in counts for by, reasons in (count or {}).items()
                         for reason, n in reasons.items())
    return "; ".join(said.format(groups=f"{sum(reasons.values())} {by}(s)", why=", ".join(
        reason if len(reasons) == 1 else f"{n} {reason}" for reason, n in sorted(reasons.items())))
        for by, reasons in sorted(merged.items()))


def _clipped_line(clips: list[dict[str, Any]]) -> None:
    """A warning when runs were read with a field clipped: the index holds their head and tail, not the middle."""
    from ..model import MAX_STEP_FIELD_CHARS, MAX_TASK_CHARS

    runs = sum(c["runs"] for c in clips)
    if not runs:
        return
    first = next(e for c in clips for e in c["examples"])
    err.print(f"[yellow]{runs} run(s) had a field over its limit[/yellow] ({MAX_STEP_FIELD_CHARS:,} characters for a "
              f"step's thought, output or error, or its arguments as JSON, {MAX_TASK_CHARS:,} for a task): kept with its head and tail, the middle "
              f"clipped and marked in the text, e.g. {escape(first['trajectory_id'])}: {escape(first['fields'][0])}",
              highlight=False, soft_wrap=True)


def _named_after_stream_copy_line(counts: list[dict[str, Any]]) -> None:
    """A warning when a streamed input's runs took their ids from its temporary copy's name (``stdin``, ``63``):
    the next dump streamed the same way gets the same ids and replaces them, and nothing else would say so."""
    runs = sum(c["runs"] for c in counts)
    if not runs:
        return
    streams = ", ".join(sorted({s for c in counts for s in c["streams"]}))
    example = next(e for c in counts for e in c["examples"])
    err.print(f"[yellow]{runs} run(s) of {escape(streams)} took their id from the name of its temporary copy[/yellow] "
              f"(e.g. {escape(example)}; this format takes ids from the file name): a different dump streamed the "
              "same way gets the same ids and replaces these runs. Name the stream after the dump's file: "
              "--stream-name FILE (e.g. 2026-12-04-airline.json; a relative path keeps a run folder: "
              "run1/<instance>.traj)", highlight=False, soft_wrap=True)


def _short_path(path: str, limit: int = 48) -> str:
    return path if len(path) <= limit else "…" + path[-(limit - 1):]


def parse_set(item: str) -> tuple[str, Any]:
    """One `--set FIELD=VALUE` (ingest and delete --from read a dump with the same defaults)."""
    from ..model import Trajectory

    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--set expects FIELD=VALUE, got {item!r}")
    if key.strip() == "tenant":
        raise ValueError("--set tenant=...: the tenant is --tenant's (or, with --server, the key's)")
    if key.strip() not in Trajectory.model_fields:
        fields = ", ".join(sorted(set(Trajectory.model_fields) - {"tenant"}))
        raise ValueError(f"--set {key.strip()}: no such run field; --set takes one of {fields}")
    key = key.strip()
    try:
        parsed = json.loads(value) if value.startswith(("[", "{")) else value
    except ValueError:
        if Trajectory.model_fields[key].annotation in (str, str | None):  # --set task=[WIP] fix login: text
            parsed = value
        else:
            raise ValueError(_not_json(key, value)) from None
    if isinstance(parsed, str) and key in _LIST_FIELDS:  # --set tags=nightly,ci
        parsed = [part.strip() for part in parsed.split(",") if part.strip()]
    _check_set(key, parsed, item)
    return key, parsed


def _not_json(key: str, value: str) -> str:
    """Why ``--set KEY=VALUE`` with a value opening ``[`` or ``{`` that is no JSON is refused, and how to quote it:
    ``--set tags=["nightly","ci"]`` typed unquoted reaches us as ``[nightly,ci]`` (the shell ate the quotes), which
    tagged every run '[nightly' and 'ci]' (review RNC3, D6)."""
    if key in _LIST_FIELDS:
        words = [part.strip(" []\"'") for part in value.split(",") if part.strip(" []\"'")]
        return (f"--set {key}={value}: not JSON (did the shell take its quotes?): give the words comma-separated, "
                f"--set {key}={','.join(words)}, or quote the JSON, --set '{key}={json.dumps(words)}'")
    return (f"--set {key}={value}: not JSON (did the shell take its quotes?): quote it, "
            f"--set '{key}={{\"key\": \"value\"}}'")


#: The run fields that hold a list of words, which ``--set`` takes comma-separated: ``--set tags=nightly`` had
#: tagged every run n, i, g, h, t, l, y (a default's tags are added to the run's one by one) (probe 52, NC3).
_LIST_FIELDS = ("tags", "tools_available")


def _check_set(key: str, value: Any, item: str) -> None:
    """Refuse a ``--set`` value no run could take before anything is read (exit 2): ``--set reward=abc`` or
    ``quality_score=2`` rejected every record of the dump that left the field empty, each with the same reason, and
    let the others land (probe 52, NC3)."""
    from pydantic import ValidationError

    from ..ingest.read import describe_validation_error
    from ..model import Trajectory

    try:
        Trajectory.model_validate({"trajectory_id": "set", "tenant": "default", "task": "set", key: value})
    except ValidationError as exc:
        raise ValueError(f"--set {item}: {describe_validation_error(exc).removeprefix('invalid trajectory: ')}") \
            from None


def _run_workers_with_progress(run_workers: Any, job: Any, workers: int, uri: str, traces: str | None,
                               quiet: bool, log_every: float) -> list[dict[str, Any]]:
    columns = (TextColumn(f"[bold]ingesting ({workers} workers)"), BarColumn(), TextColumn("{task.fields[runs]} runs"),
               TimeElapsedColumn(), TimeRemainingColumn())
    with progress(*columns, console=err, label=f"ingesting ({workers} workers)", quiet=quiet,
                  log_every=log_every) as bar:
        task = bar.add_task("ingest", total=None, runs=0)
        written = [0]

        def poll(stats: list[dict[str, Any]]) -> None:
            opened()  # the workers run: the store is open (run_workers opens it once, then starts them)
            if not stats:
                return
            total = max((s.get("bytes_total") or 0) for s in stats) or None
            done = sum((s.get("bytes_read") or 0) for s in stats) / max(len(stats), 1)
            written[0] = sum((s.get("ingested") or 0) + (s.get("unchanged") or 0) for s in stats)
            bar.update(task, total=total, completed=done, runs=written[0])

        problems: list[str] = []
        # run_workers stops the workers after the batch in hand and polls their final checkpoints: the count is theirs
        with _said_when_interrupted(lambda: _workers_stopped(written[0], problems)), _stopping_said_at_once(), \
                opening(store_named(None, uri), quiet=quiet) as opened:
            return run_workers(job, workers=workers, uri=uri, traces=traces, poll=poll, on_stopped=problems.extend)


def _cut_short(committed: int) -> str:
    """What an ingest a second Ctrl-C stopped mid-batch left: its committed records, and the batch it was writing
    half-written, which the next open of the store removes."""
    return (f"{committed} records committed; a second interruption stopped the batch being written before its end: "
            f"a run of it left half-written is removed by the next open of the store; {_RESUME}")


def _workers_stopped(committed: int, problems: list[str]) -> str:
    """What interrupted workers left: each batch whole, or not when something cut one short (probe G, G1: the
    line said "each batch whole" while the server was gone under the workers and the next open removed the runs
    they had in hand)."""
    if not problems:
        return f"{committed} runs committed by the workers, each batch whole; {_RESUME}"
    return (f"at least {committed} runs committed by the workers, but {'; '.join(problems)}: a run being written "
            f"then is left half-written, and the next open of the store removes it; {_RESUME}")


def _ingest_summary(results: list[dict[str, Any]], as_json: bool, paths: List[Path], fmt: str | None,
                    given: list[str]) -> None:
    """The ingest's results, read (``given``: the inputs as named, for a pipe not its copy in ``paths``)."""
    if as_json:
        summary = results[0] if len(results) == 1 else {"workers": results}
        print_json({**summary, "no_run": _nothing_read_line(paths, fmt, given)} if _read_nothing(results) else summary)
        return
    by_format: dict[str, dict[str, int]] = {}
    for r in results:
        for name, counts in (r.get("by_format") or {}).items():
            row = by_format.setdefault(name, {"ingested": 0, "unchanged": 0, "replaced": 0, "rejected": 0})
            for what, n in counts.items():
                row[what] = row.get(what, 0) + n
    totals = {k: sum(r.get(k) or 0 for r in results)
              for k in ("read", "ingested", "unchanged", "replaced", "rejected", "rows_written")}
    replaced = f", replaced by a later copy {totals['replaced']}" if totals["replaced"] else ""
    out.print(
        f"read {totals['read']}: ingested {totals['ingested']} runs ({totals['rows_written']} rows), "
        f"unchanged {totals['unchanged']}{replaced}, rejected {totals['rejected']}", soft_wrap=True,
    )
    restored = sum(r.get("traces_restored") or 0 for r in results)
    if restored:
        out.print(f"{restored} unchanged run(s) had lost their trace in the trace store: written again", soft_wrap=True)
    renamed = [item for r in results for item in (r.get("renamed") or [])]
    if renamed:
        out.print(f"{len(renamed)} run(s) shared an id with a different run of the same input and were kept under "
                  f"a distinct id, e.g. {renamed[0]['trajectory_id']} -> {renamed[0]['renamed_to']}", soft_wrap=True)
    _outcomes_line([r["outcomes"] for r in results if r.get("outcomes")])
    _other_runs_replaced_line(results)
    _verdicts_kept_line(results)
    if superseded := sum(r.get("superseded") or 0 for r in results):
        out.print(f"{superseded} stored run(s) superseded: a run read now takes their place (e.g. a run moved from "
                  "the id an older version gave it, a Codex thread read with the history a rollout of it was read "
                  "without)", highlight=False, soft_wrap=True)
    _clipped_line([r["clipped"] for r in results if r.get("clipped")])
    _named_after_stream_copy_line([r["named_after_stream_copy"] for r in results if r.get("named_after_stream_copy")])
    if streamed := max((r.get("units_streamed") or 0) for r in results):
        out.print(f"{streamed} input(s) read from a pipe, whole: no checkpoint resumes a stream (a rerun reads it "
                  "again, its unchanged runs skipped)", soft_wrap=True)
    passed = _passed_over(r.get("passed_over") for r in results)
    if passed:
        out.print(passed, highlight=False, soft_wrap=True)
    if done := _inputs_already_done(results):
        out.print(f"{done} input(s) already done per the checkpoint (--restart reads them again)", soft_wrap=True)
    if _read_nothing(results):
        _nothing_read_line(paths, fmt, given)
    _rejected_earlier_line(results)
    if len(by_format) > 1 or any(v["rejected"] for v in by_format.values()):
        shown = ("ingested", "unchanged", *(("replaced",) if totals["replaced"] else ()), "rejected")
        table = Table("format", *shown)
        for name, counts in sorted(by_format.items()):
            table.add_row(name, *(str(counts[what]) for what in shown))
        out.print(table)
    for r in results:
        lines, untold = _rejection_lines(r.get("rejections") or [], r.get("rejected") or 0)
        for line in lines:
            err.print(f"  [yellow]rejected[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
        if r.get("dead_letter") and r.get("rejected"):
            more = f"… and {untold} more rejection(s); " if untold > 0 else ""
            err.print(f"  {more}all rejections: {escape(str(r['dead_letter']))}", highlight=False, soft_wrap=True)
        elif untold > 0:  # --server: no dead-letter file here, the server's report only
            err.print(f"  … and {untold} more rejection(s) (--json lists those the report holds)", soft_wrap=True)
        if r.get("error"):
            err.print(f"[red]error[/red] ({r.get('shard', 'ingest')}): {escape(str(r['error']))}", soft_wrap=True)


def _rejected_earlier_line(results: list[dict[str, Any]]) -> None:
    """Say the rejections an earlier run of the job made in the records this one did not read again: the rerun
    exits 3 for them (see :func:`exit_status`), and its "rejected 0" alone would not say why."""
    if rejected := sum(r.get("rejected_earlier") or 0 for r in results):
        files = sorted({str(r["dead_letter"]) for r in results if r.get("dead_letter")})
        # "written to", not "all rejections: FILE": the file may have been mended, moved or removed since (FRALLB 3)
        where = f" (they were written to {escape(', '.join(files))})" if files else ""
        err.print(f"[yellow]{rejected} record(s) of the input(s) read before were rejected then[/yellow]{where}: "
                  "mend them and rerun, or --restart to read every input again", highlight=False, soft_wrap=True)


def _read_nothing(results: list[dict[str, Any]]) -> bool:
    """Whether an ingest read no record, passed over no run and failed in nothing, nor had read its inputs before:
    the summary then says why (:func:`_nothing_read_line`)."""
    return not (any(r.get("read") or r.get("error") for r in results) or _inputs_already_done(results)
                or _passed_over(r.get("passed_over") for r in results))


def _nothing_read_line(paths: List[Path], fmt: str | None, given: list[str]) -> dict[str, Any]:
    """Say why an ingest or a dry run read no run: the files were a tool's side files (each named, with what it is:
    a Harbor job's own files without its trials), or they hold no record of their format. Said on stderr under
    --json too, as the walk's warnings and the no-dump-file line are. Returns the same for --json's ``no_run``: the
    inputs (as ``given``) and the lines said. ``{"files": []}`` (or a result of zeros) alone on stdout told a script
    nothing of why, nor which inputs held no run (round 27, CLISVC4)."""
    said: list[str] = []
    if not _side_files_line(paths, fmt, said):
        _no_record_line(given, said)
    return {"inputs": given, "why": said}


def _as_given(paths: List[Path], streams: Streams) -> list[str]:
    """The inputs ``paths`` as the operator named them (a pipe as ``standard input``, not by its copy)."""
    return [streams.given(str(p)) for p in paths]


def _no_record_line(given: list[str], said_lines: list[str]) -> None:
    """Say that the dump files read in the inputs ``given`` held no record of their format, nor were a tool's side
    files (said by :func:`_side_files_line`); the first few inputs are named, as that line names its files (a glob
    of 10,000 folders was one enormous line), all of them in --json's ``no_run.inputs``."""
    named = ", ".join(given[:_SIDE_FILES_NAMED]) + (f", … ({len(given)} inputs)" if len(given) > _SIDE_FILES_NAMED
                                                    else "")
    _note(f"no run in the input: the files of {named} hold no record of their format (a tau2-bench "
          "results.json of the directory layout, for one, keeps its runs in simulations/ beside it: ingest that "
          "directory); --dry-run lists what each file holds", said_lines)


def _note(line: str, said_lines: list[str] | None) -> None:
    """``line`` (``no run in the input: ...``) said on stderr, its head in yellow, and kept in ``said_lines``."""
    head, sep, rest = line.partition(":")
    err.print(f"[yellow]{escape(head)}[/yellow]{sep}{escape(rest)}", highlight=False, soft_wrap=True)
    if said_lines is not None:
        said_lines.append(line)


def _no_dump_file_line(paths: List[Path]) -> None:
    """Say that the walk found no file to read at all (an empty folder, a share not mounted): "its files hold no
    record of their format" was said of it, sending the operator looking for a format fault in files not there.
    A folder of files not named as dumps (``agent.log``, ``run.txt``) is said so, naming some: it had been called
    "an empty folder, or a share not mounted?" too."""
    from ..ingest.adapters import ARCHIVE_FORMATS
    from ..ingest.read import DUMP_SUFFIXES, passed_over_by_name

    others = _files_not_named_as_dumps(paths)
    if others:
        why = f" ({passed_over_by_name(others, more=len(others) >= _OTHERS_COUNTED)})"
    else:
        why = " (an empty folder, or a share not mounted?)"
    err.print(f"[yellow]no run in the input[/yellow]: no dump file ({', '.join(DUMP_SUFFIXES)}, or one .gz, .zst; "
              f"{', '.join(ARCHIVE_FORMATS)} archives) in "
              + escape(", ".join(map(str, paths)) + why), highlight=False, soft_wrap=True)


#: How many files :func:`_files_not_named_as_dumps` counts at most: a message's figure, not a census of a share.
_OTHERS_COUNTED = 1000


def _files_not_named_as_dumps(paths: List[Path]) -> list[Path]:
    """Files under the folders in ``paths`` (hidden ones aside), which a walk that found no dump passed over by name."""
    found: list[Path] = []
    for root in (p for p in paths if p.is_dir()):
        for file in root.rglob("*"):
            if len(found) >= _OTHERS_COUNTED:
                return found
            if not any(part.startswith(".") for part in file.relative_to(root).parts) and file.is_file():
                found.append(file)
    return found


def _inputs_already_done(results: list[dict[str, Any]]) -> int:
    """The inputs no process read again: every worker plans every input, so with --workers those that every
    worker's checkpoint had done (see batch.run_workers), not the sum of each worker's count."""
    if len(results) == 1:
        return results[0].get("units_already_done") or 0
    return min((r.get("units_done_by_every_worker") or 0) for r in results)


def formats(as_json: AsJson = False) -> None:
    """List the dump formats `ingest` reads (detected per file; force one with --format NAME).

    With --server too: `ingest --server` reads the dumps here and sends the server runs, not files."""
    from ..ingest.adapters import ADAPTERS

    # a docstring's summary is its first paragraph (wrapped: its first line alone may stop mid-sentence)
    rows = [(name, " ".join((mod.__doc__ or "").strip().split("\n\n")[0].split()).removeprefix(f"``{name}``:").strip())
            for name, mod in ADAPTERS.items()]
    if as_json:
        print_json([{"format": n, "description": d} for n, d in rows])
        return
    table = Table("format", "what it reads")
    for name, description in rows:
        table.add_row(name, escape(description))
    out.print(table)
