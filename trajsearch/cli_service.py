"""Service commands for the ``trajsearch`` CLI: ``serve``, ``mcp`` and ``keys``.

``register(app)`` mounts them on the main typer app; ``python -m
trajsearch.service`` runs the same commands. Talking *to* a server is not a
separate group: every read and write command of the main CLI takes
``--server`` (or ``$TRAJSEARCH_SERVER``), with the API key from
``$TRAJSEARCH_API_KEY`` (never a command-line argument, where ``ps`` would
show it).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import List, Optional

import typer

ServerOpt = typer.Option("127.0.0.1:50051", "--server", "-s", envvar="TRAJSEARCH_SERVER",
                         help="Address of a running trajsearch server (host:port).")
CaOpt = typer.Option(None, "--ca", envvar="TRAJSEARCH_TLS_CA", help="CA certificate (PEM) to verify the server: turns TLS on.")

keys_app = typer.Typer(help="Create API keys (only their hashes go into the server's key file).", no_args_is_help=True)


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")


def _fail(message: str, code: int = 2) -> None:
    _say(f"error: {message}")
    raise typer.Exit(code)


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
              "that process owns it: connect to it (trajsearch search ... --server HOST:PORT) instead")
    try:
        server = ServiceServer(ts, keyring, address=address, tls=tls, limits=limits, max_workers=max_workers,
                               search_cap=search_cap or None)
    except OSError as exc:
        ts.close()
        _fail(str(exc))
    if metrics_address:
        host, _, port = metrics_address.rpartition(":")
        start_metrics_http(server.metrics, host or "127.0.0.1", int(port))
    _say(f"trajsearch serving on {server.address} ({len(keyring)} keys, index {ts.location[0]})")
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


def register(app: typer.Typer) -> None:
    """Mount ``serve``, ``mcp`` and ``keys`` on the main CLI."""
    app.command("serve")(serve)
    app.command("mcp")(mcp)
    app.add_typer(keys_app, name="keys")


def main() -> None:
    app = typer.Typer(help="trajsearch service commands.", no_args_is_help=True, add_completion=False)
    register(app)
    app()


if __name__ == "__main__":
    main()
