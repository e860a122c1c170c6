"""Service commands for the ``trajsearch`` CLI: ``serve``, ``mcp``, ``keys``, and ``remote ...``.

``register(app)`` mounts them on the main typer app. ``remote`` commands talk
to a running server (``--server host:port`` or ``$TRAJSEARCH_SERVER``) with
the API key from ``$TRAJSEARCH_API_KEY`` (never a command-line argument, where
``ps`` would show it). ``python -m trajsearch.service`` runs the same commands.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer

ServerOpt = typer.Option("127.0.0.1:50051", "--server", "-s", envvar="TRAJSEARCH_SERVER",
                         help="Address of a running trajsearch server (host:port).")
CaOpt = typer.Option(None, "--ca", envvar="TRAJSEARCH_TLS_CA", help="CA certificate (PEM) to verify the server: turns TLS on.")
JsonOpt = typer.Option(False, "--json", help="Print JSON for scripts.")

remote_app = typer.Typer(help="Talk to a running trajsearch server (key from $TRAJSEARCH_API_KEY).",
                         no_args_is_help=True)
keys_app = typer.Typer(help="Create API keys (only their hashes go into the server's key file).", no_args_is_help=True)


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")


def _fail(message: str, code: int = 2) -> None:
    _say(f"error: {message}")
    raise typer.Exit(code)


def _dump(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# -- serve / mcp -------------------------------------------------------------------------------


def serve(
    address: str = typer.Option("127.0.0.1:50051", "--address", "-a", envvar="TRAJSEARCH_LISTEN",
                                help="host:port to listen on (port 0 picks a free one; use 0.0.0.0 only with TLS)."),
    uri: Optional[str] = typer.Option(None, "--uri", envvar="TRAJSEARCH_URI",
                                      help="Milvus URI: local path (embedded; this process owns it) or http://host:19530."),
    traces: Optional[str] = typer.Option(None, "--traces", envvar="TRAJSEARCH_TRACES", help="Trace store location."),
    model: Optional[str] = typer.Option(None, "--model", envvar="TRAJSEARCH_MODEL", help="Embedding model."),
    keys: Optional[Path] = typer.Option(None, "--keys", envvar="TRAJSEARCH_KEYS_FILE",
                                        help="API key file (TOML or JSON); else JSON in $TRAJSEARCH_KEYS."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert", help="Server certificate chain (PEM)."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key", help="Server private key (PEM)."),
    tls_client_ca: Optional[Path] = typer.Option(None, "--tls-client-ca", help="Require client certs signed by this CA."),
    metrics_address: Optional[str] = typer.Option(None, "--metrics", help="host:port for GET /metrics (Prometheus text)."),
    max_workers: int = typer.Option(8, "--workers", help="RPC worker threads."),
    max_k: int = typer.Option(100, "--max-k", help="Largest k a caller may ask for."),
    max_text: int = typer.Option(20_000, "--max-text", help="Longest query text (characters)."),
    max_message_mb: int = typer.Option(32, "--max-message-mb", help="Largest gRPC message (MiB)."),
    search_cap: int = typer.Option(0, "--search-cap", help="search_past_runs calls per session (0: the runtime's default)."),
    grace: float = typer.Option(10.0, "--grace", help="Seconds to drain in-flight calls on SIGTERM."),
    log_level: str = typer.Option("INFO", "--log-level"),
) -> None:
    """Serve the index over gRPC: one process owns the data directory, every other one connects here."""
    from .search import TrajSearch
    from .service.auth import KeyConfigError, KeyRing
    from .service.observe import configure_logging, start_metrics_http
    from .service.server import TLS, ServiceServer, serve_forever
    from .service.validate import Limits

    configure_logging(log_level)
    if bool(tls_cert) != bool(tls_key):
        _fail("--tls-cert and --tls-key go together")
    try:
        keyring = KeyRing.load(keys)
    except (KeyConfigError, OSError) as exc:
        _fail(str(exc))
    limits = Limits(max_message_bytes=max_message_mb * 1024 * 1024, max_k=max_k, max_text_chars=max_text)
    tls = TLS(tls_cert, tls_key, tls_client_ca) if tls_cert and tls_key else None
    try:
        ts = TrajSearch.open(uri, traces=traces, model=model)
    except Exception as exc:  # noqa: BLE001 (a locked data dir, a wrong model: say it plainly)
        _fail(f"cannot open the index: {exc}. If another process serves this data directory, "
              "that process owns it: connect to it (trajsearch remote ... --server HOST:PORT) instead")
    try:
        server = ServiceServer(ts, keyring, address=address, tls=tls, limits=limits, max_workers=max_workers,
                               search_cap=search_cap or None)
    except OSError as exc:
        ts.close()
        _fail(str(exc))
    if metrics_address:
        host, _, port = metrics_address.rpartition(":")
        start_metrics_http(server.metrics, host or "127.0.0.1", int(port))
    _say(f"trajsearch serving on {server.address} ({len(keyring)} keys, index {ts.index.uri})")
    serve_forever(server, grace=grace)


def mcp(
    server: str = ServerOpt,
    env_version: List[str] = typer.Option([], "--env-version", help="Runtime context: applicable env versions."),
    policy_version: List[str] = typer.Option([], "--policy-version", help="Runtime context: applicable policy versions."),
    tool: List[str] = typer.Option([], "--tool", help="Runtime context: tools the agent has now."),
    http: bool = typer.Option(False, "--http", help="Streamable HTTP instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address (keep it on loopback)."),
    port: int = typer.Option(8765, "--port", help="HTTP port."),
    ca: Optional[Path] = CaOpt,
) -> None:
    """MCP server exposing search_past_runs (filters from the key and this context; capped per session)."""
    from .service.mcp_server import run_mcp
    from .service.observe import configure_logging

    configure_logging("WARNING")  # stdout is the protocol: logs go to stderr, and only warnings
    try:
        run_mcp(server, env_versions=env_version, policy_versions=policy_version, tools_available=tool,
                http=http, host=host, port=port, tls=ca is not None, root_certificates=str(ca) if ca else None)
    except ValueError as exc:
        _fail(str(exc))


# -- keys --------------------------------------------------------------------------------------


@keys_app.command("new")
def keys_new(
    tenant: str = typer.Option(..., "--tenant", "-t", help="The one tenant this key may read and write."),
    role: str = typer.Option("read", "--role", help="read | write"),
    key_id: str = typer.Option("", "--id", help="A label for logs (default TENANT-ROLE)."),
    append: Optional[Path] = typer.Option(None, "--append", help="Append the entry to this TOML key file."),
) -> None:
    """Make a key: the key goes to stdout (shown once), the hashed entry to the key file or stderr."""
    from .service.auth import key_entry, new_key

    key = new_key()
    try:
        entry = key_entry(key, tenant=tenant, role=role, key_id=key_id)
    except ValueError as exc:
        _fail(str(exc))
    toml = "\n[[keys]]\n" + "".join(f"{k} = {json.dumps(v)}\n" for k, v in entry.items())
    if append:
        with append.open("a") as fh:
            fh.write(toml)
        _say(f"appended key {entry['id']!r} (tenant {tenant}, role {role}) to {append}")
    else:
        _say("add this to the server's key file:" + toml)
    sys.stdout.write(key + "\n")


@keys_app.command("hash")
def keys_hash() -> None:
    """Print the sha256 of a key read from stdin (to write a key file by hand)."""
    from .service.auth import hash_key

    key = sys.stdin.readline().strip()
    if not key:
        _fail("no key on stdin")
    sys.stdout.write(hash_key(key) + "\n")


# -- remote ------------------------------------------------------------------------------------


def _client(server: str, ca: Path | None):
    from .service.client import Client

    try:
        return Client(server, tls=ca is not None, root_certificates=ca)
    except ValueError as exc:
        _fail(str(exc))


def _remote(fn):
    """Run ``fn`` and turn service errors into one line on stderr and exit code 1."""
    from .service.client import ServiceError

    try:
        return fn()
    except ServiceError as exc:
        _fail(str(exc), code=1)
    except ValueError as exc:
        _fail(str(exc))


@remote_app.command("search")
def remote_search(
    text: str = typer.Argument(..., help="Query: a task, free text, or a pasted error line."),
    level: List[str] = typer.Option([], "--level", "-l"),
    outcome: List[str] = typer.Option([], "--outcome"),
    env_version: List[str] = typer.Option([], "--env-version"),
    task_family: List[str] = typer.Option([], "--task-family"),
    tool: List[str] = typer.Option([], "--tool"),
    k: int = typer.Option(5, "-k"),
    group_size: int = typer.Option(1, "--group-size"),
    no_group: bool = typer.Option(False, "--no-group"),
    mode: str = typer.Option("", "--mode", help="dense | lexical | hybrid (where the server has it)."),
    expand: int = typer.Option(0, "--expand", "-e", help="Show N steps before and after each step hit."),
    server: str = ServerOpt,
    ca: Optional[Path] = CaOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Search on the server, inside the key's tenant."""
    with _client(server, ca) as c:
        hits = _remote(lambda: c.search(text, levels=level, outcome=outcome, env_version=env_version,
                                        task_family=task_family, tools=tool, k=k, group_size=group_size,
                                        group_by_trajectory=not no_group, mode=mode))
        context = {h.id: _remote(lambda h=h: c.expand(h, before=expand, after=expand))
                   for h in hits if expand and h.step_index >= 0}
    if as_json:
        _dump([dict(h.to_dict(), context=[vars(s) for s in context.get(h.id, [])]) for h in hits])
        return
    if not hits:
        print("no matches")
    for rank, h in enumerate(hits, 1):
        where = f"steps {h.step_index}-{h.step_end}" if h.step_index >= 0 else h.level
        print(f"{rank}. {h.trajectory_id}  {h.level}  {where}  score={h.score:.3f}  outcome={h.outcome}")
        for step in context.get(h.id) or []:
            marker = ">" if h.step_index <= step.position <= h.step_end else " "
            print(f"   {marker} {_one_line(step.text, 160)}")
        if h.id not in context:
            print(f"   {_one_line(h.text, 300)}")


@remote_app.command("similar")
def remote_similar(
    text: Optional[str] = typer.Argument(None, help="Error text or description of the broken run."),
    trajectory_id: Optional[str] = typer.Option(None, "--id", help="Find runs like this indexed run."),
    outcome: List[str] = typer.Option([], "--outcome"),
    k: int = typer.Option(5, "-k"),
    server: str = ServerOpt,
    ca: Optional[Path] = CaOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Runs like this broken one, one per run."""
    if (text is None) == (trajectory_id is None):
        _fail("give either TEXT or --id TRAJECTORY_ID")
    with _client(server, ca) as c:
        matches = _remote(lambda: c.similar_runs(trajectory_id, text, k=k, outcome=outcome))
    if as_json:
        _dump([m.to_dict() for m in matches])
        return
    for rank, m in enumerate(matches, 1):
        print(f"{rank}. {m.trajectory_id}  score={m.score:.3f}  outcome={m.outcome}")
        print(f"   task: {_one_line(m.task, 200)}")
    if not matches:
        print("no similar runs")


@remote_app.command("show")
def remote_show(
    trajectory_id: str = typer.Argument(..., help="The run to show."),
    server: str = ServerOpt,
    ca: Optional[Path] = CaOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Show a stored run."""
    from .represent import step_text

    with _client(server, ca) as c:
        run = _remote(lambda: c.run(trajectory_id))
        if run is None:
            _fail(f"no trajectory {trajectory_id!r}", code=1)
        trajectory = _remote(lambda: c.get_trace(run.trace_uri))
    if as_json:
        _dump(dict(trajectory.model_dump(mode="json"), trace_uri=run.trace_uri))
        return
    print(f"{trajectory.trajectory_id}  outcome={trajectory.outcome.value}  env={trajectory.env_version}")
    print(f"task: {trajectory.task}")
    for step in trajectory.steps:
        print(step_text(step))


@remote_app.command("ingest")
def remote_ingest(
    paths: List[Path] = typer.Argument(..., help="Dump files or directories."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f"),
    batch_size: int = typer.Option(64, "--batch-size"),
    server: str = ServerOpt,
    ca: Optional[Path] = CaOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Stream dumps to the server (write key). The tenant is the key's."""
    from .ingest.read import read_dump

    for path in paths:
        if not path.exists():
            _fail(f"{path}: no such file or directory")
    with _client(server, ca) as c:
        tenant = _remote(c.whoami)["tenant"]
        records = (p for path in paths for p in read_dump(path, fmt=fmt, tenant=tenant))
        report = _remote(lambda: c.add(records, batch_size=batch_size, timeout=3600))
    if as_json:
        _dump(dict(report.to_dict(), results=report.results))
        return
    print(f"ingested {report.ingested} runs ({report.rows} rows), unchanged {report.unchanged}, "
          f"rejected {len(report.rejected)}")
    for r in report.rejected[:20]:
        _say(f"  rejected {r}")


@remote_app.command("stats")
def remote_stats(server: str = ServerOpt, ca: Optional[Path] = CaOpt) -> None:
    """Counts of runs and rows in the key's tenant."""
    with _client(server, ca) as c:
        _dump(_remote(c.stats))


@remote_app.command("whoami")
def remote_whoami(server: str = ServerOpt, ca: Optional[Path] = CaOpt) -> None:
    """The tenant and role of $TRAJSEARCH_API_KEY."""
    with _client(server, ca) as c:
        _dump(_remote(c.whoami))


@remote_app.command("health")
def remote_health(server: str = ServerOpt, ca: Optional[Path] = CaOpt) -> None:
    """The server's gRPC health status, and its per-method counters."""
    with _client(server, ca) as c:
        _dump({"status": _remote(c.health), "metrics": _remote(c.metrics)})


@remote_app.command("exemplars")
def remote_exemplars(
    task: str = typer.Argument(..., help="The task the agent is about to do."),
    env_version: List[str] = typer.Option([], "--env-version"),
    policy_version: List[str] = typer.Option([], "--policy-version"),
    tool: List[str] = typer.Option([], "--tool", help="Tools available now."),
    k: int = typer.Option(0, "-k"),
    budget: int = typer.Option(0, "--budget", help="Token budget (0: runtime default)."),
    warnings: bool = typer.Option(False, "--warnings", help="Failed runs (what not to do) instead."),
    server: str = ServerOpt,
    ca: Optional[Path] = CaOpt,
    as_json: bool = JsonOpt,
) -> None:
    """The exemplar (or warning) context an agent would get for TASK."""
    with _client(server, ca) as c:
        verb = c.warnings if warnings else c.exemplars
        result = _remote(lambda: verb(task, env_version=env_version, policy_version=policy_version,
                                      tools_available=tool, k=k, token_budget=budget))
    if as_json:
        _dump({"strategy": result.strategy, "items": result.items, "context": json.loads(result.json or "{}")})
    else:
        print(result.text or f"(nothing applicable: {result.strategy or 'no warnings'})")


def register(app: typer.Typer) -> None:
    """Mount ``serve``, ``mcp``, ``keys`` and ``remote`` on the main CLI."""
    app.command("serve")(serve)
    app.command("mcp")(mcp)
    app.add_typer(keys_app, name="keys")
    app.add_typer(remote_app, name="remote")


def main() -> None:
    app = typer.Typer(help="trajsearch service commands.", no_args_is_help=True, add_completion=False)
    register(app)
    app()


if __name__ == "__main__":
    main()
