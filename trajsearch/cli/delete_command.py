"""``delete``: removing runs, by id or as a dump gave them, so a bad batch can be undone without
starting the store again."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer

from .connect import connect
from .ingest_commands import parse_set
from ..vocab import GROUP_BY
from .options import AsJson, Ca, Server, Tenant, Traces, Uri, choice, run_ids
from .output import err, fail, out, print_json, say_interrupted, stopped

#: Ids named in the readable report before "…".
SHOWN_IDS = 10
#: A stored run whose trace is gone: a delete that stopped half-way removed it and left the rows for a rerun (traces
#: go first), so ``--from`` finishes the job; its content cannot be compared, and a run the dump's content matches
#: under the other id the dump may name is taken first (probe G, D1).
TRACE_GONE = "trace gone"


def delete(
    trajectory_ids: Optional[List[str]] = typer.Argument(
        None, help="Runs to remove, by trajectory id.", callback=run_ids),
    dumps: List[Path] = typer.Option([], "--from", help="Remove the runs these dump files or folders gave an ingest (repeatable: name every input of that ingest, as ids are kept distinct across them), with its --format, --group-by, --set, --outcomes and --success-threshold. A stored run is removed only if it is the dump's run (same content)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="With --from: the format `ingest` was forced to."),
    group_by: str = typer.Option("trace", "--group-by", callback=choice(GROUP_BY), help="With --from, span formats: 'trace' or 'conversation', as at ingest."),
    set_field: List[str] = typer.Option([], "--set", help="With --from: the --set FIELD=VALUE of the ingest (repeatable)."),
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", help="With --from: the --outcomes of the ingest (not needed for a run whose dump holds no verdict: it is its stored run with the verdict an outcomes file gave it, as a re-ingest without --outcomes keeps it)."),
    success_threshold: float = typer.Option(0.5, "--success-threshold", min=0.0, max=1.0, help="With --from: the --success-threshold of the ingest."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Remove nothing: say which runs are there to remove."),
    tenant: Tenant = None,
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Remove runs from the index and the trace store: named by id, or the runs a dump gave (undo an ingest).

    Safe to interrupt: a run's trace goes before its rows, so a delete stopped half-way (Ctrl-C, a trace store that
    fails) leaves the runs it did not finish in the index, and the same command run again finishes them.

    Exit status: 0 every run named was removed (or, with --dry-run, is there);
    1 some were not in the tenant's index, or (--from) the stored run of that id is another run than the dump's
    (kept: an ingest with other inputs or options stored it); the others were removed; 2 a bad argument: nothing removed.
    """
    from ..ingest.read import is_stream
    if not trajectory_ids and not dumps:
        fail("name the runs to remove (trajectory ids) or a dump with --from")
    try:  # the ids are checked as they are parsed (run_ids), all before any is removed
        defaults = dict(parse_set(item) for item in set_field)
    except ValueError as exc:
        fail(str(exc))
    for path in [*dumps, *([outcomes] if outcomes else [])]:
        if is_stream(path):
            fail(f"{path}: --from reads files and folders, not a stream (save it first, under the name it was "
                 "ingested with)")
        if not path.exists():
            fail(f"{path}: no such file or directory")
    with connect(server, ca, uri, traces, tenant) as api:
        named = list(trajectory_ids or ())
        other: list[str] = []
        absent: list[str] = []
        if dumps:
            ours, other, absent = _runs_of(dumps, api, fmt=fmt, group_by=group_by, defaults=defaults,
                                           outcomes=outcomes, success_threshold=success_threshold)
            named += ours
        named = list(dict.fromkeys(named))
        if dry_run:
            there = [t for t in named if api.run(t) is not None]
        else:
            if len(named) > 100 and not as_json:
                err.print(f"removing {len(named)} runs…", highlight=False)
            removed: list[str] = []
            with _said_when_stopped(removed):  # absent: a trace an interrupted delete left goes too
                there = api.delete(list(dict.fromkeys([*named, *absent])), done=removed.extend)
    found = set(there)
    missing = list(dict.fromkeys(t for t in [*named, *absent] if t not in found))
    _report(there, missing, other, dry_run, as_json)
    if missing or other:
        raise typer.Exit(1)


@contextmanager
def _said_when_stopped(removed: list[str]) -> Iterator[None]:
    """On Ctrl-C, SIGTERM or an error (a trace store that fails), one line first: how many runs went, and that a rerun
    finishes the rest, which are still in the index (traces go first, then rows: probe G, D1, where both stopped
    with no word of the runs already gone)."""
    try:
        yield
    except (KeyboardInterrupt, SystemExit, Exception) as exc:
        if isinstance(exc, (ValueError, PermissionError)) and not removed:
            raise  # a key refused, or a read key: its one line says so, and the same command would fail again
        if isinstance(exc, SystemExit) and not stopped(exc):
            raise
        how = "interrupted" if stopped(exc) else "stopped by an error"
        done = f"removed {len(removed)} run(s) with their traces" + (f" ({_ids(removed)})" if removed else "")
        line = f"{how}: {done}; the others are still in the index: rerun the same command to finish"
        if stopped(exc):  # Ctrl-C or SIGTERM
            say_interrupted(line)
        else:
            err.print(line, highlight=False)
        raise


def _runs_of(dumps: List[Path], api: Any, **read: Any) -> tuple[list[str], list[str], list[str]]:  # api: Backend
    """The stored runs the dumps gave, read as an ingest of them all (``read``: its options) read them, under the
    tenant: ``(ids to remove, ids kept, ids not stored)``. A run is removed where the stored run is it (the same
    content) under its id, or under the distinct id an ingest gives a run whose id another input held; a stored
    run of that id with other content (another input's, or read with other options) is kept, as is one whose
    trace cannot be read to tell; one whose trace is gone goes (see ``TRACE_GONE``). So does the same run stored under
    a former id (``model.former_ids``: a mini-swe-agent run under the folder-named id it had before round 27, a tau2
    run of no known domain under ``tau2.tau2...`` before round 28, the same content, its place aside:
    ``ingest.read.same_run_anywhere``), which its ingest would have removed; another attempt stored there is kept.
    A run read with no verdict of its own is compared with the verdict an outcomes file gave the stored run put
    back, as ingest compares it
    (``ingest.outcomes.keep_verdict``). Records that do not read as runs are counted."""
    from ..ingest.outcomes import OutcomeTable, keep_verdict
    from ..ingest.read import distinct_id, read_inputs, same_run_anywhere, same_run
    from ..model import Trajectory, former_ids

    tenant = api.tenant_name()
    try:
        outcomes = read.pop("outcomes")
        table = OutcomeTable.load(outcomes) if outcomes else None
        parsed = list(read_inputs(dumps, tenant=tenant, outcomes=table, **read))
    except (ValueError, OSError) as exc:
        fail(str(exc))
    ours: list[str] = []
    other: list[str] = []
    absent: list[str] = []
    for run in (p.trajectory for p in parsed if p.trajectory is not None):
        former = former_ids(run)
        stored = [(tid, kept) for tid in dict.fromkeys((run.trajectory_id, distinct_id(run), *former))
                  if (kept := _stored_run(api, tid)) is not None]
        match = next((tid for tid, kept in stored if isinstance(kept, Trajectory)
                      and (same_run_anywhere if tid in former else same_run)(kept, keep_verdict(run, kept) or run)),
                     next((tid for tid, kept in stored if kept is TRACE_GONE), None))
        (ours if match is not None else other if stored else absent).append(match or run.trajectory_id)
    if unread := sum(p.trajectory is None for p in parsed):
        err.print(f"{unread} record(s) of the dump(s) do not read as runs (ingest rejected them): nothing to remove",
                  highlight=False)
    return ours, other, absent


def _stored_run(api: Any, trajectory_id: str) -> Any:
    """The stored run of that id, None when there is none, False when its trace cannot be read, ``TRACE_GONE`` when
    the index holds the run and the trace store no trace of it."""
    try:
        found = api.show(trajectory_id)
    except LookupError:
        return TRACE_GONE
    except ValueError:
        return False
    return None if found is None else found[1]


def _report(there: list[str], missing: list[str], other: list[str], dry_run: bool, as_json: bool) -> None:
    if as_json:
        print_json({"would_remove" if dry_run else "removed": there, "not_found": missing, "kept_other_run": other})
        return
    verb = "would remove" if dry_run else "removed"
    out.print(f"{verb} {len(there)} run(s)" + (f": {_ids(there)}" if there else ""), markup=False)
    if missing:
        out.print(f"not in the index: {len(missing)} run(s): {_ids(missing)}", markup=False)
    if other:
        out.print(f"kept {len(other)} run(s) whose id the dump names but whose stored content is another run's "
                  f"(another input of the ingest, or other --set/--outcomes): {_ids(other)}", markup=False)


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN_IDS]) + (f" … (+{len(ids) - SHOWN_IDS})" if len(ids) > SHOWN_IDS else "")
