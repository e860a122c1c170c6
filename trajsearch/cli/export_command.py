"""``export``: the runs that best match a query, written as a few-shot or fine-tuning dataset.

A file is written whole or not at all, so a trainer never reads half an export.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, List, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ..bounds import MAX_EXPORT_RUNS
from .connect import connect
from .options import (Ca, EnvVersions, Levels, Mode, PolicyVersions, Server, SuccessOutcomes, TaskFamilies, Tenant,
                      Tools, Traces, Uri, searched)
from .output import err, fail, plain, say_interrupted, signals_held, stopped
from .query_commands import _no_runs_said, _say_filtered_out


def _outcome_noted(ctx: typer.Context) -> str:
    """What a note says after each ``--outcome`` value: export keeps successes unless told otherwise, and "nothing
    found inside --outcome success" blamed a flag the user never typed (a tenant of failures only); the default is
    marked so, with the flag that widens it."""
    if getattr(ctx.get_parameter_source("outcome"), "name", "") in ("COMMANDLINE", "ENVIRONMENT"):
        return ""
    return " (the default: add --outcome failure, repeatable, to export others)"


def export(
    ctx: typer.Context,
    query: str = typer.Option(..., "--query", "-q", callback=searched,
                              help="Rank runs by similarity to this (a task, free text or an error line), as search does."),
    tenant: Tenant = None,
    fmt: str = typer.Option("openai-chat", "--format", "-f", help="openai-chat | sharegpt | jsonl (our trajectory JSON)."),
    out_file: Optional[Path] = typer.Option(None, "--out", "-o", help="Write here (default stdout)."),
    k: int = typer.Option(100, "-k", "--limit", min=1, max=MAX_EXPORT_RUNS, help="How many runs (one record per run, best first)."),
    outcome: SuccessOutcomes = ["success"],
    level: Levels = [],
    env_version: EnvVersions = [],
    policy_version: PolicyVersions = [],
    task_family: TaskFamilies = [],
    tool: Tools = [],
    mode: Mode = "auto",
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Per record: compress each run as the agent runtime does until it fits; runs that never fit are left out."),
    system: Optional[str] = typer.Option(None, "--system", help="A system prompt for every record (chat formats)."),
    provenance: str = typer.Option("inline", "--provenance", help="inline: a metadata key on each record; sidecar: OUT.provenance.jsonl, line for line, leaving the chat records exactly in the trainer's schema."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
) -> None:
    """Export the runs that best match --query as a few-shot or fine-tuning dataset, one record per run with its provenance."""
    from ..export import FORMATS, PROVENANCE, write

    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if provenance not in PROVENANCE:
        fail(f"--provenance must be inline or sidecar, got {provenance!r}")
    if provenance == "sidecar" and (out_file is None or fmt == "jsonl"):
        fail("--provenance sidecar needs --out FILE and a chat format (jsonl keeps provenance in each trajectory)")
    with connect(server, ca, uri, traces, tenant) as api:
        try:
            job = api.export(query, fmt=fmt, k=k, outcome=outcome, levels=level, env_version=env_version,
                             policy_version=policy_version, task_family=task_family, tools=tool, mode=mode,
                             max_tokens=max_tokens, system=system)
        except (ValueError, PermissionError) as exc:
            fail(plain(exc))
        if not job.found and (said := _no_runs_said(api)):  # not "exported 0 of 0" and an empty file: a wrong tenant
            fail(f"{said}: nothing to export", code=1)
        if not job.found:  # a filter misspelt (or never recorded) is said, as search says it
            _say_filtered_out([], {"--outcome": outcome, "--env-version": env_version,
                                   "--policy-version": policy_version, "--task-family": task_family, "--tool": tool},
                              lambda: api.search(query, levels=level, k=1, mode=mode),
                              lambda **options: api.search(query, **options), {"--outcome": _outcome_noted(ctx)},
                              level)
        show = not quiet and err.is_terminal and job.found > 1
        columns = (TextColumn("[bold]exporting"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        try:
            with _output(out_file) as (stream, sidecar), Progress(*columns, console=err, disable=not show) as progress:
                bar = progress.add_task("export", total=job.found)
                write(job, stream, fmt=fmt, provenance=provenance, sidecar=sidecar,
                      on_record=lambda _: progress.advance(bar))
        except OSError as exc:
            if out_file is None:
                raise
            # a full disk: "error: OSError: [Errno 28] No space left on device" had named no file
            fail(f"cannot write {out_file}: {exc.strerror or exc}; nothing was written (no partial file is left)",
                 code=1)
    where = f" to {out_file}" if out_file else ""
    left = [f"{n} {why}" for n, why in ((job.too_long, f"over --max-tokens {max_tokens}"),
                                         (job.missing_trace, "without a readable trace")) if n]
    err.print(f"exported {job.written} of {job.found} matching runs{where}" + (f" ({'; '.join(left)} left out)"
                                                                          if left else ""), highlight=False)
    if job.stopped:
        err.print(f"[yellow]note:[/yellow] {escape(job.stopped)}", highlight=False)


@contextmanager
def _output(path: Path | None) -> Iterator[tuple[Any, Any]]:
    """stdout, or ``path`` written whole or not at all (a temp file renamed at the end), and its sidecar. Stopped
    (Ctrl-C, SIGTERM) while writing, it says what it leaves: stdout cut short, or ``path`` as it was or whole."""
    if path is None:
        try:
            yield sys.stdout, None
        except BaseException as exc:
            if stopped(exc):
                say_interrupted("interrupted: export stopped, what it wrote to stdout is cut short")
            raise
        return
    import tempfile

    path = path.resolve()
    sidecar_path = path.with_name(path.name + ".provenance.jsonl")
    made = []
    renamed = False
    try:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                         delete=False, encoding="utf-8") as stream, \
             tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{sidecar_path.name}.", suffix=".tmp",
                                         delete=False, encoding="utf-8") as sidecar:
            made = [stream.name, sidecar.name]
            yield stream, sidecar
        with signals_held():  # a stop between the two renames left the file without its sidecar
            os.replace(stream.name, path)
            if os.path.getsize(sidecar.name):
                os.replace(sidecar.name, sidecar_path)
            renamed = True
    except BaseException as exc:
        if stopped(exc):
            say_interrupted(f"interrupted: export stopped, {path} " + ("written whole" if renamed else
                                                                       "left as it was"))
        raise
    finally:
        for name in made:
            Path(name).unlink(missing_ok=True)
