"""``delete``: removing runs, by id or as a dump gave them, so a bad batch can be undone without
starting the store again."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .connect import connect
from .options import AsJson, Ca, Server, Tenant, Traces, Uri
from .output import err, fail, out, print_json

#: Ids named in the readable report before "…".
SHOWN_IDS = 10


def delete(
    trajectory_ids: Optional[List[str]] = typer.Argument(None, help="Runs to remove, by trajectory id."),
    dumps: List[Path] = typer.Option([], "--from", help="Remove every run this dump file or folder holds, read as `ingest` reads it (repeatable; with its --format and --group-by)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="With --from: the format `ingest` was forced to."),
    group_by: str = typer.Option("trace", "--group-by", help="With --from, span formats: 'trace' or 'conversation', as at ingest."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Remove nothing: say which runs are there to remove."),
    tenant: Tenant = None,
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Remove runs from the index and the trace store: named by id, or every run of a dump (undo an ingest).

    Exit status: 0 every run named was removed (or, with --dry-run, is there);
    1 some were not in the tenant's index (the others were removed); 2 a bad argument: nothing removed.
    """
    from ..model import valid_id

    if not trajectory_ids and not dumps:
        fail("name the runs to remove (trajectory ids) or a dump with --from")
    for trajectory_id in trajectory_ids or ():  # all checked before any is removed
        try:
            valid_id(trajectory_id)
        except ValueError as exc:
            fail(str(exc))
    for path in dumps:
        if not path.exists():
            fail(f"{path}: no such file or directory")
    with connect(server, ca, uri, traces, tenant) as api:
        named = list(dict.fromkeys([*(trajectory_ids or ()), *_runs_of(dumps, fmt, group_by, api)]))
        if dry_run:
            there = [t for t in named if api.run(t) is not None]
        else:
            if len(named) > 100 and not as_json:
                err.print(f"removing up to {len(named)} runs…", highlight=False)
            there = api.delete(named)
    missing = [t for t in named if t not in set(there)]
    _report(there, missing, dry_run, as_json)
    if missing:
        raise typer.Exit(1)


def _runs_of(dumps: List[Path], fmt: str | None, group_by: str, api) -> list[str]:  # api: Backend
    """The trajectory ids the dumps give under the tenant, as ingest reads them (ids made distinct the same way);
    records that do not read as runs were never ingested and are counted, not removed."""
    if not dumps:
        return []
    from ..ingest.read import read_dump

    tenant = api.api.whoami()["tenant"] if api.remote else api.tenant
    ids: list[str] = []
    unread = 0
    for path in dumps:
        try:
            for parsed in read_dump(path, fmt=fmt, tenant=tenant, group_by=group_by):
                if parsed.trajectory is None:
                    unread += 1
                else:
                    ids.append(parsed.trajectory.trajectory_id)
        except (ValueError, OSError) as exc:
            fail(str(exc))
    if unread:
        err.print(f"{unread} record(s) of the dump(s) do not read as runs (ingest rejected them): nothing to remove",
                  highlight=False)
    return ids


def _report(there: list[str], missing: list[str], dry_run: bool, as_json: bool) -> None:
    if as_json:
        print_json({"would_remove" if dry_run else "removed": there, "not_found": missing})
        return
    verb = "would remove" if dry_run else "removed"
    out.print(f"{verb} {len(there)} run(s)" + (f": {_ids(there)}" if there else ""), markup=False)
    if missing:
        out.print(f"not in the index: {len(missing)} run(s): {_ids(missing)}", markup=False)


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN_IDS]) + (f" … (+{len(ids) - SHOWN_IDS})" if len(ids) > SHOWN_IDS else "")
