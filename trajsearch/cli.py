"""``trajsearch``: a thin typer CLI over the library façade.

Read commands print a readable view by default and JSON with ``--json``.
Every command takes ``--uri`` (a local path for embedded Milvus Lite, or
``http://host:19530`` for a Milvus server) and ``--traces``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table


app = typer.Typer(
    help="Search past AI-agent runs: ingest trace dumps, find similar runs, show the steps that matter.",
    no_args_is_help=True,
    add_completion=False,
)
out = Console()
err = Console(stderr=True)

UriOpt = typer.Option(None, "--uri", envvar="TRAJSEARCH_URI", help="Milvus URI: local path (embedded, default ./.trajsearch/milvus.db) or http://host:19530.")
TracesOpt = typer.Option(None, "--traces", envvar="TRAJSEARCH_TRACES", help="Trace store: path, file:///abs/path or s3://bucket/prefix (default ./.trajsearch/traces).")
TenantOpt = typer.Option("default", "--tenant", "-t", envvar="TRAJSEARCH_TENANT", help="Tenant to read or write.")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts.")


def _open(uri: str | None, traces: str | None):
    from .search import TrajSearch  # heavy imports only when a command runs

    return TrajSearch.open(uri, traces=traces)


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _fail(message: str) -> None:
    err.print(f"[red]error:[/red] {message}")
    raise typer.Exit(2)


@app.command()
def ingest(
    paths: List[Path] = typer.Argument(..., help="Dump files or directories (.jsonl, .traj.json, tau-bench .json; .gz ok)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="Override format auto-detection."),
    tenant: str = TenantOpt,
    rejects: Optional[Path] = typer.Option(None, "--rejects", help="Write rejected records (source, position, reason) as JSONL here."),
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Index trace dumps. Re-running on the same dump changes nothing; bad records are reported, good ones land."""
    from .ingest.read import read_dump

    for path in paths:
        if not path.exists():
            _fail(f"{path}: no such file or directory")
    with _open(uri, traces) as ts:
        records = (parsed for path in paths for parsed in read_dump(path, fmt=fmt, tenant=tenant))
        try:
            with Progress(
                TextColumn("[bold]ingesting"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                TimeElapsedColumn(), TimeRemainingColumn(), console=err, disable=not err.is_terminal,
            ) as progress:
                task = progress.add_task("ingest", total=None)
                report = ts.add(records, on_progress=lambda n: progress.advance(task, n))
        except ValueError as exc:  # unknown format and the like: nothing sensible to continue with
            _fail(str(exc))
    if rejects:
        with rejects.open("w") as fh:
            for r in report.rejected:
                fh.write(json.dumps(vars(r)) + "\n")
    if as_json:
        _print_json(report.to_dict())
    else:
        out.print(
            f"ingested {report.ingested} runs ({report.rows} rows), "
            f"unchanged {report.unchanged}, rejected {len(report.rejected)}"
        )
        for r in report.rejected[:20]:
            err.print(f"  [yellow]rejected[/yellow] {r}")
        if len(report.rejected) > 20:
            err.print(f"  … and {len(report.rejected) - 20} more (use --rejects FILE)")


@app.command()
def search(
    text: str = typer.Argument(..., help="Query: a task, free text, or a pasted error line."),
    tenant: str = TenantOpt,
    level: List[str] = typer.Option([], "--level", "-l", help="task | summary | step | failure (repeatable)."),
    outcome: List[str] = typer.Option([], "--outcome", help="success | failure | infra_error | unknown (repeatable)."),
    env_version: List[str] = typer.Option([], "--env-version"),
    task_family: List[str] = typer.Option([], "--task-family"),
    tool: List[str] = typer.Option([], "--tool", help="Keep runs that had any of these tools."),
    k: int = typer.Option(5, "-k", help="How many runs (or rows without grouping)."),
    group_size: int = typer.Option(1, "--group-size", help="Hits per run."),
    no_group: bool = typer.Option(False, "--no-group", help="Do not group hits by run."),
    expand: int = typer.Option(0, "--expand", "-e", help="Show N steps before and after each step hit."),
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Find the rows most similar to TEXT inside the filters."""
    with _open(uri, traces) as ts:
        try:
            hits = ts.search(
                text, tenant=tenant, levels=level, outcome=outcome, env_version=env_version,
                task_family=task_family, tools=tool, k=k, group_size=group_size, group_by_trajectory=not no_group,
            )
        except ValueError as exc:
            _fail(str(exc))
        context = {h.id: ts.expand(h, before=expand, after=expand) for h in hits if expand and h.step_index >= 0}
    if as_json:
        _print_json([dict(h.to_dict(), context=[vars(s) for s in context.get(h.id, [])]) for h in hits])
        return
    if not hits:
        out.print("no matches")
    for rank, h in enumerate(hits, 1):
        out.print(f"[bold]{rank}. {h.trajectory_id}[/bold]  {_where(h)}  score={h.score:.3f}  outcome={h.outcome}")
        for step in context.get(h.id) or []:
            marker = ">" if h.step_index <= step.position <= h.step_end else " "
            out.print(f"   {marker} {_one_line(step.text, 160)}", markup=False)
        if h.id not in context:
            out.print(f"   {_one_line(h.text, 300)}", markup=False)


@app.command()
def similar(
    text: Optional[str] = typer.Argument(None, help="Error text or description of the broken run."),
    trajectory_id: Optional[str] = typer.Option(None, "--id", help="Find runs like this indexed run."),
    tenant: str = TenantOpt,
    outcome: List[str] = typer.Option([], "--outcome"),
    k: int = typer.Option(5, "-k"),
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Runs like this broken one: one result per run, with its best matching step."""
    if (text is None) == (trajectory_id is None):
        _fail("give either TEXT or --id TRAJECTORY_ID")
    with _open(uri, traces) as ts:
        try:
            matches = ts.similar_runs(trajectory_id, text, tenant=tenant, k=k, outcome=outcome)
        except (ValueError, LookupError) as exc:
            _fail(str(exc).strip("'\""))
    if as_json:
        _print_json([m.to_dict() for m in matches])
        return
    if not matches:
        out.print("no similar runs")
    for rank, m in enumerate(matches, 1):
        out.print(f"[bold]{rank}. {m.trajectory_id}[/bold]  score={m.score:.3f}  outcome={m.outcome}")
        out.print(f"   task: {_one_line(m.task, 200)}", markup=False)
        out.print(f"   best {_where(m.best)}: {_one_line(m.best.text, 240)}", markup=False)


@app.command()
def show(
    trajectory_id: str = typer.Argument(..., help="The run to show."),
    tenant: str = TenantOpt,
    steps: Optional[str] = typer.Option(None, "--steps", help="Step positions to show, e.g. 3:8 (default: all)."),
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Show a run (or a step range of it) from the trace store."""
    with _open(uri, traces) as ts:
        try:
            run = ts.run(trajectory_id, tenant=tenant)
        except ValueError as exc:
            _fail(str(exc))
        if run is None:
            _fail(f"no trajectory {trajectory_id!r} in tenant {tenant!r}")
        trajectory = ts.get_trace(run.trace_uri, tenant=tenant)
    first, last = _range(steps, len(trajectory.steps))
    chosen = trajectory.steps[first:last]
    if as_json:
        data = trajectory.model_dump(mode="json")
        data["steps"] = [s.model_dump(mode="json") for s in chosen]
        data["trace_uri"] = run.trace_uri
        _print_json(data)
        return
    out.print(f"[bold]{trajectory.trajectory_id}[/bold]  outcome={trajectory.outcome.value}  reward={trajectory.reward}  env={trajectory.env_version}")
    out.print(f"task: {trajectory.task}", markup=False)
    out.print(f"trace: {run.trace_uri}", markup=False)
    from .represent import step_text

    for step in chosen:
        out.print(step_text(step), markup=False)


@app.command()
def stats(
    tenant: str = TenantOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Counts of runs and rows in the index for a tenant."""
    with _open(uri, traces) as ts:
        data = ts.stats(tenant=tenant)
    if as_json:
        _print_json(data)
        return
    table = Table(title=f"trajsearch @ {data['uri']} (tenant {tenant})")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("runs", str(data["trajectories"]))
    for name, n in sorted(data["runs_by_outcome"].items()):
        table.add_row(f"  {name}", str(n))
    table.add_row("rows", str(data["rows"]))
    for name, n in sorted(data["rows_by_level"].items()):
        table.add_row(f"  {name}", str(n))
    out.print(table)


def _range(spec: str | None, n: int) -> tuple[int, int]:
    if not spec:
        return 0, n
    try:
        a, _, b = spec.partition(":")
        first = int(a) if a else 0
        last = int(b) + 1 if b else (n if _ == ":" else first + 1)
    except ValueError:
        _fail(f"--steps {spec!r}: expected N, N:M, N: or :M")
    return max(0, first), min(n, last)


def _where(hit) -> str:
    """``step 4-6`` for a hit with a step range, else just its level."""
    return f"{hit.level} {hit.step_index}-{hit.step_end}" if hit.step_index >= 0 else hit.level


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


if __name__ == "__main__":
    app()
