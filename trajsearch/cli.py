"""``trajsearch``: a thin typer CLI over the library façade.

Read commands print a readable view by default and JSON with ``--json``.
Every command takes ``--uri`` (a local path for embedded Milvus Lite, or
``http://host:19530`` for a Milvus server) and ``--traces``.
"""

from __future__ import annotations

import json
import os
import sys

# pymilvus' keepalive pings trip milvus-lite's in-process server into logging GOAWAY noise
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
import logging  # noqa: E402

# milvus-lite logs a traceback when it cannot open a store; the CLI says why in one line instead
logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, List, Optional

import typer
from contextlib import contextmanager
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)
from rich.markup import escape
from rich.table import Table


if TYPE_CHECKING:
    from .backend import Backend

app = typer.Typer(
    help="Search past AI-agent runs: ingest trace dumps, find similar runs, show the steps that matter.",
    no_args_is_help=True,
    add_completion=False,
)
out = Console()
err = Console(stderr=True)

UriOpt = typer.Option(None, "--uri", envvar="TRAJSEARCH_URI", help="Milvus URI: local path (embedded, default ./.trajsearch/milvus.db) or http://host:19530.")
TracesOpt = typer.Option(None, "--traces", envvar="TRAJSEARCH_TRACES", help="Trace store: path, file:///abs/path or s3://bucket/prefix (default ./.trajsearch/traces).")
TenantOpt = typer.Option(None, "--tenant", "-t", envvar="TRAJSEARCH_TENANT", show_default="default",
                         help="Tenant to read or write (embedded store). With --server the key's tenant applies.")
ServerOpt = typer.Option(None, "--server", "-s", envvar="TRAJSEARCH_SERVER",
                         help="A trajsearch server (host:port) instead of the embedded store; the key comes from $TRAJSEARCH_API_KEY.")
CaOpt = typer.Option(None, "--ca", envvar="TRAJSEARCH_TLS_CA", help="With --server: CA certificate (PEM) to verify it (turns TLS on).")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts.")


@contextmanager
def _backend(server: str | None, ca: Path | None, uri: str | None, traces: str | None,
             tenant: str | None) -> Iterator[Backend]:
    """The embedded store or the server, with library and service errors as one line each."""
    from .backend import open_backend
    from .indexer import IngestError
    from .store.index import SchemaMismatchError
    from .store.lock import StoreOpenError
    from .store.traces import TraceStoreError

    try:
        with open_backend(server=server, ca=ca, uri=uri, traces=traces, tenant=tenant) as backend:
            yield backend
    except typer.Exit:
        raise
    except (ValueError, PermissionError) as exc:  # bad input, a tenant the key does not hold
        _fail(_plain(exc))
    except (LookupError, ConnectionError, TimeoutError, StoreOpenError, SchemaMismatchError,
            TraceStoreError, IngestError) as exc:  # not found, server down, store in use, ...
        _fail(_plain(exc), code=1)


def _plain(exc: BaseException) -> str:
    return str(exc).strip("'\"") or type(exc).__name__


def _print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _fail(message: str, code: int = 2) -> None:
    """One line on stderr and exit: 2 for bad input, 1 for a failure."""
    err.print(f"[red]error:[/red] {escape(message)}", highlight=False)
    raise typer.Exit(code)


@app.command()
def ingest(
    paths: List[Path] = typer.Argument(..., help="Dump files or directories (.jsonl, .json, .traj, .traj.json, OTLP JSON; .gz ok)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help="Force a format instead of detecting it per file (see `trajsearch formats`)."),
    tenant: str = TenantOpt,
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", help="Join verdicts: a JSON/JSONL/CSV file of run id -> outcome/reward (e.g. a SWE-bench report)."),
    group_by: str = typer.Option("trace", "--group-by", help="Span formats: one run per 'trace' or per 'conversation' (session)."),
    success_threshold: float = typer.Option(0.5, "--success-threshold", min=0.0, max=1.0, help="A graded run (reward from 0 to 1) at or above this is a success, below it a failure."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing: print per file the detected format, runs, steps, first task, tools, errors and outcomes."),
    set_field: List[str] = typer.Option([], "--set", help="Default for a field the dump leaves empty, e.g. --set env_version=ci-v9 (repeatable)."),
    dead_letter: Optional[Path] = typer.Option(None, "--dead-letter", help="JSONL of rejected records (default: under the data directory)."),
    rejects: Optional[Path] = typer.Option(None, "--rejects", hidden=True),
    shard: str = typer.Option("0/1", "--shard", help="Take shard i/N of the runs (by hash of tenant + trajectory_id); run N of these, anywhere."),
    workers: int = typer.Option(1, "--workers", "-w", help="Run N local worker processes against one store (serves a local Milvus Lite path over 127.0.0.1)."),
    checkpoint: Optional[Path] = typer.Option(None, "--checkpoint", help="Checkpoint file (default: under the data directory, one per job)."),
    restart: bool = typer.Option(False, "--restart", help="Ignore the checkpoint and read every input again (unchanged runs are still skipped)."),
    state_dir: Optional[Path] = typer.Option(None, "--state-dir", help="Where checkpoints and dead letters go (default: $TRAJSEARCH_HOME/ingest)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Index trace dumps: streamed, resumable (kill it and rerun), shardable. Bad records go to a dead-letter file; the rest lands.

    With --server the records are parsed here and streamed to the server under the key's tenant
    (a write key); checkpoints, shards and workers are for the embedded store or a Milvus URI.
    """
    from .config import default_uri, home
    from .ingest.batch import IngestJob, Shard, run_ingest, run_workers
    from .indexer import IngestError

    for path in paths:
        if not path.exists():
            _fail(f"{path}: no such file or directory")
    try:
        job_shard = Shard.parse(shard)
        defaults = dict(_key_value(item) for item in set_field)
    except ValueError as exc:
        _fail(str(exc))
    if dry_run:
        _dry_run(paths, fmt, tenant or "default", defaults, group_by, outcomes, success_threshold, as_json)
        return
    if server:
        if workers > 1 or job_shard.count > 1 or checkpoint or restart:
            _fail("--workers, --shard, --checkpoint and --restart apply to a store this process writes, not to --server")
        _ingest_remote(paths, server, ca, uri, traces, tenant, fmt=fmt, defaults=defaults, group_by=group_by,
                       success_threshold=success_threshold, as_json=as_json)
        return
    tenant = tenant or "default"
    states = state_dir or home() / "ingest"
    show = not (quiet or as_json) and err.is_terminal
    job = IngestJob(paths=[p.resolve() for p in paths], fmt=fmt, tenant=tenant, defaults=defaults,
                    group_by=group_by, outcomes=outcomes.resolve() if outcomes else None,
                    success_threshold=success_threshold, shard=job_shard, checkpoint=checkpoint,
                    dead_letter=dead_letter or rejects, resume=not restart, state_dir=states.resolve())
    if workers > 1:
        if job_shard.count > 1:
            _fail("use either --workers or --shard, not both")
        if dead_letter or checkpoint:
            _fail("--dead-letter/--checkpoint with --workers: each worker writes its own (under --state-dir)")
        results = _run_workers_with_progress(run_workers, job, workers, uri or default_uri(), traces, show)
        _ingest_summary(results, as_json)
        if any(r.get("error") for r in results):
            raise typer.Exit(1)
        return
    columns = (TextColumn("[bold]ingesting"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TextColumn("{task.fields[runs]} runs"), TimeElapsedColumn(), TimeRemainingColumn())
    with _backend(None, None, uri, traces, tenant) as api, Progress(*columns, console=err, disable=not show) as progress:
        ts = api.api
        task = progress.add_task("ingest", total=None, runs=0)
        runs = [0]

        def on_records(n: int) -> None:
            runs[0] += n
            progress.update(task, runs=runs[0])

        try:
            result = run_ingest(ts, job, on_plan=lambda total: progress.update(task, total=total),
                                on_bytes=lambda n: progress.advance(task, n), on_records=on_records)
        except (ValueError, FileNotFoundError) as exc:  # unknown format, bad outcome file...: nothing written
            _fail(str(exc))
        except IngestError as exc:
            _fail(f"{exc}", code=1)
    _ingest_summary([result.to_dict()], as_json)


def _ingest_remote(paths: List[Path], server: str, ca: Path | None, uri: str | None, traces: str | None,
                   tenant: str | None, *, fmt: str | None, defaults: dict[str, Any], group_by: str,
                   success_threshold: float, as_json: bool) -> None:
    """Parse here, stream to the server: the tenant is the key's (a --tenant naming another is refused)."""
    from .ingest.read import read_dump

    with _backend(server, ca, uri, traces, tenant) as api:
        key_tenant = api.api.whoami()["tenant"]
        if tenant and tenant != key_tenant:
            _fail(f"--tenant {tenant!r} is not the key's tenant ({key_tenant!r})")
        records = (p for path in paths for p in read_dump(path, fmt=fmt, tenant=key_tenant, defaults=defaults,
                                                          group_by=group_by, success_threshold=success_threshold))
        report = api.api.add(records, timeout=3600)
    _ingest_summary([dict(report.to_dict(), results=report.results)], as_json)


def _dry_run(paths: List[Path], fmt: str | None, tenant: str, defaults: dict[str, Any], group_by: str,
             outcomes: Path | None, success_threshold: float, as_json: bool) -> None:
    from .ingest.outcomes import OutcomeTable
    from .ingest.preview import preview

    try:
        table_of_outcomes = OutcomeTable.load(outcomes) if outcomes else None
        files = preview(paths, fmt=fmt, tenant=tenant, defaults=defaults, group_by=group_by,
                        outcomes=table_of_outcomes, success_threshold=success_threshold)
    except (ValueError, FileNotFoundError) as exc:
        _fail(str(exc))
    if as_json:
        _print_json({"dry_run": True, "files": [f.to_dict() for f in files]})
        return
    table = Table("file", "format", "runs", "rejected", "steps", "errors", "outcomes", "first task", "tools", "model",
                  title="dry run: nothing written")
    for f in files:
        outcomes_text = ", ".join(f"{k} {v}" for k, v in sorted(f.outcomes.items()))
        task = " ".join((f.task or "").split())[:60]
        tools = ", ".join(list(f.tools)[:6]) + (" …" if len(f.tools) > 6 else "")
        model = ", ".join(list(f.models)[:2])
        table.add_row(escape(_short_path(f.source)), f.fmt or "?", str(f.runs), str(f.rejected), str(f.steps),
                      str(f.errors), outcomes_text, escape(task), escape(tools), escape(model))
    out.print(table)
    for f in files:
        if f.first_rejection:
            err.print(f"  [yellow]rejected[/yellow] {escape(f.source)}, {escape(f.first_rejection)}", highlight=False)
        if f.renamed:
            err.print(f"  {f.renamed} run(s) in {escape(f.source)} share an id with a different run: "
                      "kept under a distinct id (id+hash)", highlight=False)


def _short_path(path: str, limit: int = 48) -> str:
    return path if len(path) <= limit else "…" + path[-(limit - 1):]


def _key_value(item: str) -> tuple[str, Any]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--set expects FIELD=VALUE, got {item!r}")
    try:
        parsed = json.loads(value) if value[:1] in "[{" else value
    except ValueError:
        parsed = value
    return key.strip(), parsed


def _run_workers_with_progress(run_workers: Any, job: Any, workers: int, uri: str, traces: str | None,
                               show: bool) -> list[dict[str, Any]]:
    columns = (TextColumn(f"[bold]ingesting ({workers} workers)"), BarColumn(), TextColumn("{task.fields[runs]} runs"),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err, disable=not show) as progress:
        task = progress.add_task("ingest", total=None, runs=0)

        def poll(stats: list[dict[str, Any]]) -> None:
            if not stats:
                return
            total = max((s.get("bytes_total") or 0) for s in stats) or None
            done = sum((s.get("bytes_read") or 0) for s in stats) / max(len(stats), 1)
            runs = sum((s.get("ingested") or 0) + (s.get("unchanged") or 0) for s in stats)
            progress.update(task, total=total, completed=done, runs=runs)

        return run_workers(job, workers=workers, uri=uri, traces=traces, poll=poll)


def _ingest_summary(results: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        _print_json(results[0] if len(results) == 1 else {"workers": results})
        return
    by_format: dict[str, dict[str, int]] = {}
    for r in results:
        for name, counts in (r.get("by_format") or {}).items():
            row = by_format.setdefault(name, {"ingested": 0, "unchanged": 0, "rejected": 0})
            for what, n in counts.items():
                row[what] += n
    totals = {k: sum(r.get(k) or 0 for r in results) for k in ("read", "ingested", "unchanged", "rejected", "rows_written")}
    out.print(
        f"read {totals['read']}: ingested {totals['ingested']} runs ({totals['rows_written']} rows), "
        f"unchanged {totals['unchanged']}, rejected {totals['rejected']}"
    )
    restored = sum(r.get("traces_restored") or 0 for r in results)
    if restored:
        out.print(f"{restored} unchanged run(s) had lost their trace in the trace store: written again")
    renamed = [item for r in results for item in (r.get("renamed") or [])]
    if renamed:
        out.print(f"{len(renamed)} run(s) shared an id with a different run of the same input and were kept under "
                  f"a distinct id, e.g. {renamed[0]['trajectory_id']} -> {renamed[0]['renamed_to']}")
    done = sum(r.get("units_already_done") or 0 for r in results)
    if done:
        out.print(f"{done} input(s) already done per the checkpoint (--restart reads them again)")
    if len(by_format) > 1 or any(v["rejected"] for v in by_format.values()):
        table = Table("format", "ingested", "unchanged", "rejected")
        for name, counts in sorted(by_format.items()):
            table.add_row(name, str(counts["ingested"]), str(counts["unchanged"]), str(counts["rejected"]))
        out.print(table)
    for r in results:
        for rej in (r.get("rejections") or [])[:10]:
            err.print(f"  [yellow]rejected[/yellow] {escape(rej['source'])}:{escape(rej['position'])}: {escape(rej['reason'])}",
                      highlight=False)
        if r.get("rejected"):
            err.print(f"  all rejections: {r.get('dead_letter')}")
        if r.get("error"):
            err.print(f"[red]error[/red] ({r.get('shard', 'ingest')}): {r['error']}")


@app.command()
def formats(as_json: bool = JsonOpt) -> None:
    """List the dump formats `ingest` reads (detected per file; force one with --format NAME)."""
    from .ingest.adapters import ADAPTERS

    rows = [(name, (mod.__doc__ or "").strip().splitlines()[0].removeprefix(f"``{name}``:").strip())
            for name, mod in ADAPTERS.items()]
    if as_json:
        _print_json([{"format": n, "description": d} for n, d in rows])
        return
    table = Table("format", "what it reads")
    for name, description in rows:
        table.add_row(name, escape(description))
    out.print(table)


@app.command()
def search(
    text: str = typer.Argument(..., help="Query: a task, free text, or a pasted error line."),
    tenant: Optional[str] = TenantOpt,
    level: List[str] = typer.Option([], "--level", "-l", help="task | summary | step | failure (repeatable)."),
    outcome: List[str] = typer.Option([], "--outcome", help="success | failure | infra_error | unknown (repeatable)."),
    env_version: List[str] = typer.Option([], "--env-version"),
    task_family: List[str] = typer.Option([], "--task-family"),
    tool: List[str] = typer.Option([], "--tool", help="Keep runs that had any of these tools."),
    k: int = typer.Option(5, "-k", help="How many runs (or rows without grouping)."),
    group_size: int = typer.Option(1, "--group-size", help="Hits per run."),
    no_group: bool = typer.Option(False, "--no-group", help="Do not group hits by run."),
    expand: int = typer.Option(0, "--expand", "-e", help="Show N steps before and after each step hit."),
    mode: str = typer.Option("auto", "--mode", "-m", help="dense | lexical | hybrid | auto (hybrid for log-like queries)."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Find the rows most similar to TEXT inside the filters."""
    with _backend(server, ca, uri, traces, tenant) as api:
        hits = api.search(text, levels=level, outcome=outcome, env_version=env_version, task_family=task_family,
                          tools=tool, k=k, group_size=group_size, group_by_trajectory=not no_group, mode=mode)
        context = {h.id: api.expand(h, before=expand, after=expand) for h in hits if expand and h.step_index >= 0}
    if as_json:
        _print_json([dict(h.to_dict(), context=[vars(s) for s in context.get(h.id, [])]) for h in hits])
        return
    if not hits:
        out.print("no matches")
    for rank, h in enumerate(hits, 1):
        out.print(f"[bold]{rank}. {escape(h.trajectory_id)}[/bold]  {_where(h)}  score={h.score:.3f}  outcome={h.outcome}")
        for step in context.get(h.id) or []:
            marker = ">" if h.step_index <= step.position <= h.step_end else " "
            out.print(f"   {marker} {_one_line(step.text, 160)}", markup=False)
        if h.id not in context:
            out.print(f"   {_one_line(h.text, 300)}", markup=False)


@app.command()
def similar(
    text: Optional[str] = typer.Argument(None, help="Error text or description of the broken run."),
    trajectory_id: Optional[str] = typer.Option(None, "--id", help="Find runs like this indexed run."),
    tenant: Optional[str] = TenantOpt,
    outcome: List[str] = typer.Option([], "--outcome"),
    k: int = typer.Option(5, "-k"),
    mode: str = typer.Option("hybrid", "--mode", "-m", help="dense | lexical | hybrid."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Runs like this broken one: one result per run, with its best matching step."""
    if (text is None) == (trajectory_id is None):
        _fail("give either TEXT or --id TRAJECTORY_ID")
    with _backend(server, ca, uri, traces, tenant) as api:
        matches = api.similar_runs(trajectory_id, text, k=k, outcome=outcome, mode=mode)
    if as_json:
        _print_json([m.to_dict() for m in matches])
        return
    if not matches:
        out.print("no similar runs")
    for rank, m in enumerate(matches, 1):
        out.print(f"[bold]{rank}. {escape(m.trajectory_id)}[/bold]  score={m.score:.3f}  outcome={m.outcome}")
        out.print(f"   task: {_one_line(m.task, 200)}", markup=False)
        out.print(f"   best {_where(m.best)}: {_one_line(m.best.text, 240)}", markup=False)


@app.command()
def show(
    trajectory_id: str = typer.Argument(..., help="The run to show."),
    tenant: Optional[str] = TenantOpt,
    steps: Optional[str] = typer.Option(None, "--steps", help="Step positions to show, e.g. 3:8 (default: all)."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Show a run (or a step range of it) from the trace store."""
    with _backend(server, ca, uri, traces, tenant) as api:
        found = api.show(trajectory_id)
    if found is None:
        _fail(f"no trajectory {trajectory_id!r}" + (f" in tenant {api.tenant!r}" if api.tenant else ""), code=1)
    run, trajectory = found
    first, last = _range(steps, len(trajectory.steps))
    chosen = trajectory.steps[first:last]
    if as_json:
        data = trajectory.model_dump(mode="json")
        data["steps"] = [s.model_dump(mode="json") for s in chosen]
        data["trace_uri"] = run.trace_uri
        _print_json(data)
        return
    out.print(f"[bold]{escape(trajectory.trajectory_id)}[/bold]  outcome={trajectory.outcome.value}  "
              f"reward={trajectory.reward}  env={escape(str(trajectory.env_version))}")
    out.print(f"task: {trajectory.task}", markup=False)
    out.print(f"trace: {run.trace_uri}", markup=False)
    from .represent import step_text

    for step in chosen:
        out.print(step_text(step), markup=False)


@app.command()
def stats(
    tenant: Optional[str] = TenantOpt,
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Counts of runs and rows in the index for a tenant."""
    with _backend(server, ca, uri, traces, tenant) as api:
        data = api.stats()
    if as_json:
        _print_json(data)
        return
    where = data.get("uri") or server
    table = Table(title=f"trajsearch @ {where} (tenant {data['tenant']})")
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("runs", str(data["trajectories"]))
    for name, n in sorted(data["runs_by_outcome"].items()):
        table.add_row(f"  {name}", str(n))
    table.add_row("rows", str(data["rows"]))
    for name, n in sorted(data["rows_by_level"].items()):
        table.add_row(f"  {name}", str(n))
    out.print(table)


@app.command()
def exemplars(
    task: str = typer.Argument(..., help="The task the agent is about to do (or, with --warnings, an error)."),
    tenant: Optional[str] = TenantOpt,
    env_version: List[str] = typer.Option([], "--env-version", help="Runtime context: applicable env versions."),
    policy_version: List[str] = typer.Option([], "--policy-version", help="Runtime context: applicable policy versions."),
    tool: List[str] = typer.Option([], "--tool", help="Runtime context: tools the agent has now."),
    k: int = typer.Option(0, "-k", help="How many (0: the runtime's default)."),
    budget: int = typer.Option(0, "--budget", help="Token budget of the rendered context (0: the runtime's default)."),
    warnings: bool = typer.Option(False, "--warnings", help="Similar failed runs (what not to do) instead."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The exemplar (or warning) context an agent would get for TASK, exactly as rendered for its prompt."""
    with _backend(server, ca, uri, traces, tenant) as api:
        result = api.advice("warnings" if warnings else "exemplars", task, env_version=env_version,
                            policy_version=policy_version, tools=tool, k=k or None, budget=budget or None)
    if as_json:
        _print_json({"strategy": result.strategy, "items": result.items, "context": json.loads(result.json or "{}")})
    else:
        out.print(result.text or f"(nothing applicable: {result.strategy or 'no similar failures'})", markup=False)


@app.command()
def failures(
    tenant: Optional[str] = TenantOpt,
    since: Optional[str] = typer.Option(None, "--since", help="Only this period before --until (7d, 24h, 2w, 90m), compared with the period of the same length before it. Default: every failure, no trend."),
    until: Optional[str] = typer.Option(None, "--until", help="End of the period: an ISO date or time (default now)."),
    env_version: List[str] = typer.Option([], "--env", "--env-version", help="Keep runs of these env versions (repeatable)."),
    model: List[str] = typer.Option([], "--model", help="Keep runs of these model ids (read from each failure's trace: rows carry no model id)."),
    tool: List[str] = typer.Option([], "--tool", help="Keep runs that had any of these tools."),
    outcome: List[str] = typer.Option([], "--outcome", help="failure | infra_error (default both)."),
    limit: int = typer.Option(20, "--limit", "-n", min=1, max=1000, help="How many modes to show (the rest are counted)."),
    examples: int = typer.Option(3, "--examples", min=1, max=20, help="Example runs per mode, most representative first."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Failure modes: the failed runs inside the filters grouped by cause, with counts, share, trend and example runs."""
    from .failures import parse_duration, parse_time

    try:
        since_seconds = parse_duration(since) if since else None
        until_epoch = parse_time(until)
    except ValueError as exc:
        _fail(str(exc))
    with _backend(server, ca, uri, traces, tenant) as api:
        report = api.failures(since=since_seconds, until=until_epoch, env_version=env_version, model=model,
                              tools=tool, outcome=outcome, limit=limit, examples=examples)
    if as_json:
        _print_json(report.to_dict())
        return
    _show_failures(report, since)


def _show_failures(report: Any, since: str | None) -> None:
    from datetime import datetime, timezone

    from .represent import clip

    def day(epoch: int) -> str:
        return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")

    def line(text: str) -> None:
        out.print(text, markup=False, highlight=False, soft_wrap=True)

    if report.since is not None:
        period = f"the {since} up to {day(report.until)} (the {since} before: {_plural(report.previous_total, 'failure')})"
    else:
        period = "all time"
    line(f"{_plural(report.total, 'failure')} in tenant {report.tenant}, {period}: "
         f"{_plural(report.templates, 'distinct error template')}, {_plural(len(report.modes) + report.other_modes, 'mode')}")
    for n, mode in enumerate(report.modes, 1):
        line("")
        line(f"{n}. {mode.label}  {_plural(mode.count, 'failure')} ({mode.share:.0%}){_trend_text(mode)}")
        where = [f"env {_counts_text(mode.env_versions)}"]
        if mode.models:
            sampled = "" if mode.models_sampled >= mode.count else f" (of {mode.models_sampled} runs read)"
            where.append(f"model {_counts_text(mode.models)}{sampled}")
        if mode.failing_tools:
            where.append(f"failing step {_counts_text(mode.failing_tools)}")
        elif mode.tools:
            where.append(f"tools {_counts_text(mode.tools)}")
        line("   " + " · ".join(where))
        if len(mode.templates) > 1:
            line(f"   {len(mode.templates)} templates, e.g. {_one_line(mode.templates[1]['template'], 110)}")
        for example in mode.examples:
            line(f"   - {example.trajectory_id}: {clip(' '.join(example.error.split()), 40, 80)}")
    if report.other_modes:
        line(f"\n({report.other_modes} more modes hold {_plural(report.other_failures, 'failure')}: --limit to see them)")
    if report.rare:
        line(f"({_plural(report.rare, 'failure')} of errors too rare to compare by meaning: grouped by exact template)")


def _plural(n: int | None, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _trend_text(mode: Any) -> str:
    if mode.previous is None:
        return ""
    if mode.trend == "new":
        return "  new (none the period before)"
    change = f", {mode.change:+.0%}" if mode.change is not None else ""
    arrow = {"up": "up", "down": "down", "flat": "flat"}.get(mode.trend, mode.trend)
    return f"  {arrow} from {mode.previous}{change}"


def _counts_text(counts: dict[str, int], top: int = 3) -> str:
    items = list(counts.items())
    text = ", ".join(f"{k} {v}" for k, v in items[:top])
    return text + (f", +{len(items) - top} more" if len(items) > top else "")


@app.command()
def export(
    query: str = typer.Option(..., "--query", "-q", help="Rank runs by similarity to this (a task, free text or an error line), as search does."),
    tenant: Optional[str] = TenantOpt,
    fmt: str = typer.Option("openai-chat", "--format", "-f", help="openai-chat | sharegpt | jsonl (our trajectory JSON)."),
    out_file: Optional[Path] = typer.Option(None, "--out", "-o", help="Write here (default stdout)."),
    k: int = typer.Option(100, "-k", "--limit", min=1, max=10_000, help="How many runs (one record per run, best first)."),
    outcome: List[str] = typer.Option(["success"], "--outcome", help="success | failure | infra_error | unknown (repeatable; default success)."),
    level: List[str] = typer.Option([], "--level", "-l", help="Rank by rows of these levels (task | summary | step | failure; default all)."),
    env_version: List[str] = typer.Option([], "--env-version", "--env"),
    policy_version: List[str] = typer.Option([], "--policy-version"),
    task_family: List[str] = typer.Option([], "--task-family"),
    tool: List[str] = typer.Option([], "--tool", help="Keep runs that had any of these tools."),
    mode: str = typer.Option("auto", "--mode", "-m", help="dense | lexical | hybrid | auto, as in search."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=16, help="Per record: compress each run as the agent runtime does until it fits; runs that never fit are left out."),
    system: Optional[str] = typer.Option(None, "--system", help="A system prompt for every record (chat formats)."),
    provenance: str = typer.Option("inline", "--provenance", help="inline: a metadata key on each record; sidecar: OUT.provenance.jsonl, line for line, leaving the chat records exactly in the trainer's schema."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    server: Optional[str] = ServerOpt,
    ca: Optional[Path] = CaOpt,
    uri: Optional[str] = UriOpt,
    traces: Optional[str] = TracesOpt,
) -> None:
    """Export the runs that best match --query as a few-shot or fine-tuning dataset, one record per run with its provenance."""
    from .export import FORMATS, PROVENANCE, write

    if fmt not in FORMATS:
        _fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if provenance not in PROVENANCE:
        _fail(f"--provenance must be inline or sidecar, got {provenance!r}")
    if provenance == "sidecar" and (out_file is None or fmt == "jsonl"):
        _fail("--provenance sidecar needs --out FILE and a chat format (jsonl keeps provenance in each trajectory)")
    with _backend(server, ca, uri, traces, tenant) as api:
        try:
            job = api.export(query, fmt=fmt, k=k, outcome=outcome, levels=level, env_version=env_version,
                             policy_version=policy_version, task_family=task_family, tools=tool, mode=mode,
                             max_tokens=max_tokens, system=system)
        except (ValueError, PermissionError) as exc:
            _fail(_plain(exc))
        show = not quiet and err.is_terminal and job.found > 1
        columns = (TextColumn("[bold]exporting"), BarColumn(), TextColumn("{task.completed}/{task.total} runs"),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with _output(out_file) as (stream, sidecar), Progress(*columns, console=err, disable=not show) as progress:
            bar = progress.add_task("export", total=job.found)
            write(job, stream, fmt=fmt, provenance=provenance, sidecar=sidecar,
                  on_record=lambda _: progress.advance(bar))
    where = f" to {out_file}" if out_file else ""
    left = [f"{n} {why}" for n, why in ((job.too_long, f"over --max-tokens {max_tokens}"),
                                         (job.missing_trace, "without a readable trace")) if n]
    err.print(f"exported {job.written} of {job.found} matching runs{where}" + (f" ({'; '.join(left)} left out)"
                                                                          if left else ""), highlight=False)
    if job.stopped:
        err.print(f"[yellow]note:[/yellow] {escape(job.stopped)}", highlight=False)


@contextmanager
def _output(path: Path | None) -> Iterator[tuple[Any, Any]]:
    """stdout, or ``path`` written whole or not at all (a temp file renamed at the end), and its sidecar."""
    if path is None:
        yield sys.stdout, None
        return
    import tempfile

    path = path.resolve()
    sidecar_path = path.with_name(path.name + ".provenance.jsonl")
    made = []
    try:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp",
                                         delete=False, encoding="utf-8") as stream, \
             tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{sidecar_path.name}.", suffix=".tmp",
                                         delete=False, encoding="utf-8") as sidecar:
            made = [stream.name, sidecar.name]
            yield stream, sidecar
        os.replace(stream.name, path)
        if os.path.getsize(sidecar.name):
            os.replace(sidecar.name, sidecar_path)
    finally:
        for name in made:
            Path(name).unlink(missing_ok=True)


@app.command()
def whoami(server: Optional[str] = ServerOpt, ca: Optional[Path] = CaOpt) -> None:
    """The tenant and role of $TRAJSEARCH_API_KEY on the server."""
    with _backend(server or _need_server(), ca, None, None, None) as api:
        _print_json(api.api.whoami())


@app.command()
def health(server: Optional[str] = ServerOpt, ca: Optional[Path] = CaOpt) -> None:
    """The server's gRPC health status and its per-method counters."""
    with _backend(server or _need_server(), ca, None, None, None) as api:
        _print_json({"status": api.api.health(), "metrics": api.api.metrics()})


def _need_server() -> str:
    _fail("this command talks to a server: pass --server HOST:PORT or set $TRAJSEARCH_SERVER")
    return ""


SAMPLE = Path(__file__).parent / "samples" / "sample.jsonl"
DEMO_TOOLS = ["get_user_details", "get_reservation_details", "cancel_reservation", "search_direct_flight",
              "update_reservation_flights", "send_certificate", "transfer_to_human_agents", "respond"]


@app.command()
def demo(
    home: Path = typer.Option(Path(".trajsearch/demo"), "--home", help="Where the demo index and traces go."),
) -> None:
    """Ingest the bundled sample dump, then show what an agent and an engineer get back.

    1. exemplars and a failure warning for an airline task, as the budgeted prompt context;
    2. a task from nowhere near the library: nothing but "plan from scratch";
    3. an engineer pasting an error line: runs like this broken one, with the matching steps.
    """
    from .ingest.read import read_dump
    from .runtime import Runtime, RuntimeContext
    from .search import TrajSearch

    err.print(f"[bold]1/4[/bold] loading the embedding model and the index at {home}")
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces")) as ts:
        err.print(f"[bold]2/4[/bold] ingesting {SAMPLE.name} (re-running the demo changes nothing)")
        report = ts.add(read_dump(SAMPLE, tenant="demo"))
        out.print(f"ingested {report.ingested}, unchanged {report.unchanged}, rejected {len(report.rejected)}")

        runtime = Runtime(ts)
        ctx = RuntimeContext(tenant="demo", env_version="airline-v1", tools_available=DEMO_TOOLS)
        task = ("A customer wants to cancel two upcoming reservations and be refunded "
                "to the original payment method.")
        err.print("[bold]3/4[/bold] agent runtime: exemplars + failure warning for a new task")
        out.rule(f"agent task: {task}")
        context = runtime.context_for(task, ctx)
        out.print(f"strategy={context.strategy.value}  best similarity={context.best_similarity:.2f}  "
                  f"tokens={context.tokens}", markup=False)
        out.print(context.text, markup=False)
        novel = "Write a short poem about the autumn harvest festival."
        out.rule(f"agent task: {novel}")
        nothing = runtime.context_for(novel, ctx)
        out.print(f"strategy={nothing.strategy.value}  exemplars={len(nothing.exemplars)}  tokens={nothing.tokens}",
                  markup=False)

        error = "ModuleNotFoundError: No module named 'pytest'"
        err.print("[bold]4/4[/bold] engineer: runs like this broken one")
        out.rule(f"similar runs: {error}")
        for rank, match in enumerate(ts.similar_runs(text=error, tenant="demo", k=3), 1):
            out.print(f"{rank}. {match.trajectory_id}  score={match.score:.3f}  outcome={match.outcome}", markup=False)
            for step in ts.expand(match.best, before=1, after=1) if match.best.step_index >= 0 else []:
                marker = ">" if match.best.step_index <= step.position <= match.best.step_end else " "
                out.print(f"   {marker} {_one_line(step.text, 150)}", markup=False)


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


from .cli_service import register as _register_service  # noqa: E402 - the service commands mount onto app

_register_service(app)

_DEBUG = {"on": False}


@app.callback()
def _options(debug: bool = typer.Option(False, "--debug", envvar="TRAJSEARCH_DEBUG",
                                       help="Show the full traceback of an unexpected error.")) -> None:
    """Search past AI-agent runs: ingest trace dumps, find similar runs, show the steps that matter."""
    _DEBUG["on"] = debug


def main() -> None:
    """The ``trajsearch`` command: an unexpected error is one line (exit 1), its traceback with --debug."""
    try:
        app(standalone_mode=True)
    except SystemExit:
        raise
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence of a command-line tool
        if _DEBUG["on"] or os.environ.get("TRAJSEARCH_DEBUG"):
            raise
        text = " ".join(str(exc).split())[:500] or type(exc).__name__
        err.print(f"[red]error:[/red] {escape(type(exc).__name__)}: {escape(text)} (run with --debug for the traceback)",
                  highlight=False)
        sys.exit(1)


if __name__ == "__main__":
    main()
