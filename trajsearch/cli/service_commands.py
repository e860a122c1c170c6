"""Service commands for the ``trajsearch`` CLI: ``serve``, ``ui``, ``mcp`` and ``keys``.

``register(app)`` mounts them on the main typer app; ``python -m
trajsearch.service`` runs the same commands. Talking *to* a server is not a
separate group: every read and write command of the main CLI takes
``--server`` (or ``$TRAJSEARCH_SERVER``), with the API key from
``$TRAJSEARCH_API_KEY`` (never a command-line argument, where ``ps`` would
show it).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Optional
from urllib.parse import urlsplit

import typer

from ..bounds import MAX_K, MAX_QUERY_CHARS, SERVER_MAX_K
from ..vocab import LOG_LEVEL_ALIASES, LOG_LEVELS
from .options import Ca, ContextEnvVersions, ContextPolicyVersions, ContextTools, EmbeddingModel, Traces, Uri, choice
from .output import plain

ServerOpt = typer.Option("127.0.0.1:50051", "--server", "-s", envvar="TRAJSEARCH_SERVER",
                         help="Address of a running trajsearch server (host:port).")

#: ``--log-level`` of the processes that log (serve, ui): the JSON log lines' threshold (``observe.configure_logging``).
_LOG_LEVEL = choice(LOG_LEVELS, upper=True, aliases=LOG_LEVEL_ALIASES)
_LOG_LEVEL_HELP = f"{' | '.join(LOG_LEVELS)}: the least severe log line written (JSON lines on stderr)."
#: ``serve``'s flag for each ``Limits`` bound it refuses (each error had said "--max-k:", whichever was out of range).
_LIMIT_FLAGS = {"max_k": "--max-k", "max_text_chars": "--max-text"}

keys_app = typer.Typer(help="Create API keys (only their hashes go into the server's key file).", no_args_is_help=True)


def _say(message: str) -> None:
    sys.stderr.write(message + "\n")


def _fail(message: str, code: int = 2) -> None:
    _say(f"error: {message}")
    raise typer.Exit(code)


# -- serve / mcp -------------------------------------------------------------------------------


def serve(
    ctx: typer.Context,
    address: str = typer.Option("127.0.0.1:50051", "--address", "-a", envvar="TRAJSEARCH_LISTEN",
                                help="host:port to listen on (port 0 picks a free one). Beyond loopback: TLS, or --insecure."),
    uri: Uri = None,
    traces: Traces = None,
    model: EmbeddingModel = None,
    keys: Optional[Path] = typer.Option(None, "--keys", envvar="TRAJSEARCH_KEYS_FILE",
                                        help="API key file, TOML or JSON (`trajsearch keys new --tenant NAME --append "
                                             "FILE` makes one; default: the JSON in $TRAJSEARCH_KEYS)."),
    tls_cert: Optional[Path] = typer.Option(None, "--tls-cert",
                                            help="Server certificate chain, PEM (default: none: plaintext, on loopback "
                                                 "only unless --insecure)."),
    tls_key: Optional[Path] = typer.Option(None, "--tls-key",
                                           help="Server private key, PEM, with --tls-cert (default: none)."),
    tls_client_ca: Optional[Path] = typer.Option(None, "--tls-client-ca",
                                                 help="Require client certs signed by this CA (gRPC and --http; "
                                                      "with --tls-cert/--tls-key; default: none: any client holding "
                                                      "a key)."),
    insecure: bool = typer.Option(False, "--insecure",
                                  help="Allow plaintext on a non-loopback address (behind a TLS proxy or on a private network)."),
    metrics_address: Optional[str] = typer.Option(None, "--metrics",
                                                  help="host:port for GET /metrics (Prometheus text, every tenant). "
                                                       "Plain HTTP: beyond loopback only with --insecure (default: "
                                                       "none: no metrics endpoint)."),
    http: Optional[str] = typer.Option(None, "--http",
                                       help="host:port for the web pages (sign-in with the same keys), served by this "
                                            "process. Beyond loopback: TLS (--tls-cert/--tls-key), or --insecure "
                                            "(default: none: gRPC only)."),
    public_url: Optional[str] = typer.Option(None, "--public-url", envvar="TRAJSEARCH_PUBLIC_URL",
                                             help="With --http behind a reverse proxy: the pages' address as "
                                                  "browsers open it, e.g. https://ts.example.com; its host is "
                                                  "answered and may sign in, its cookies Secure (default: none: the "
                                                  "--http address alone)."),
    max_workers: int = typer.Option(8, "--workers", min=1,
                                    help="RPC worker threads. One stays free for another tenant's call: with 2, "
                                         "a tenant's calls run one at a time."),
    trace_reads: int = typer.Option(0, "--trace-reads", min=0,
                                    help="Trace-store reads that may wait at once (0: a quarter of --workers)."),
    page_reads: int = typer.Option(8, "--page-reads", min=1,
                                   help="With --http: trace-store reads the web pages may have in flight at once, "
                                        "beside --trace-reads (the store sees at most the two added up)."),
    trace_timeout: float = typer.Option(10.0, "--trace-timeout", min=0.1,
                                        help="Seconds a call waits for the trace store before UNAVAILABLE."),
    write_slots: int = typer.Option(0, "--write-slots", min=0,
                                    help="Ingest/Delete calls in progress at once; more get UNAVAILABLE (0: half of "
                                         "--workers). While another tenant has a write key, one tenant holds all "
                                         "of them but one (with two slots or more)."),
    ingest_idle: float = typer.Option(600.0, "--ingest-idle", min=1.0,
                                      help="Seconds an Ingest stream may send no batch before the server ends it "
                                           "and frees its write slot (a client frozen or gone)."),
    max_k: int = typer.Option(SERVER_MAX_K, "--max-k", help=f"Largest k a caller may ask for (at most {MAX_K})."),
    max_text: int = typer.Option(MAX_QUERY_CHARS, "--max-text",
                                 help=f"Longest query text (characters; at most {MAX_QUERY_CHARS}, the longest a "
                                      "search takes)."),
    max_message_mb: int = typer.Option(32, "--max-message-mb", min=1, help="Largest gRPC request (MiB)."),
    answer_budget_mb: int = typer.Option(0, "--answer-budget-mb", min=0,
                                         help="MiB of answers over 64 KiB (large traces) held at once until their "
                                              "callers read them, half per key; more are refused "
                                              "RESOURCE_EXHAUSTED (0: 512 MiB)."),
    search_cap: int = typer.Option(0, "--search-cap", help="search_past_runs calls per session (0: the runtime's default)."),
    grace: float = typer.Option(10.0, "--grace", help="Seconds to drain in-flight calls on SIGTERM."),
    writes_grace: Optional[float] = typer.Option(
        None, "--writes-grace", min=0.0, envvar="TRAJSEARCH_WRITES_GRACE",
        help="Seconds past --grace to wait for the batch each write in progress is writing before the index is "
             "closed under it. Keep --grace plus this under your scheduler's kill: a server killed waiting loses "
             "the write anyway and never closes its index (Kubernetes kills 30 s after SIGTERM unless the pod's "
             "grace period, named above, says otherwise, docker stop 10 s, systemd 90 s). Default: 60, in a "
             "Kubernetes pod 25 minus --grace."),
    tenant_share: int = typer.Option(0, "--tenant-share", min=0,
                                     help="RPC workers one tenant's calls may hold while another tenant has "
                                          "calls waiting or running (0: half of --workers); past it, the workers "
                                          "no other tenant can take, all but one (a tenant alone: all but one)."),
    log_level: str = typer.Option("INFO", "--log-level", callback=_LOG_LEVEL,
                                   help=_LOG_LEVEL_HELP),
) -> None:
    """Serve the index over gRPC: one process owns the data directory, every other one connects here.

    On SIGTERM, calls in flight get --grace seconds and writes --writes-grace more: keep both under your scheduler's
    kill (a Kubernetes pod's terminationGracePeriodSeconds, 30 unless set).
    """
    from ..service.observe import log_event
    from ..service.server import (
        PUBLIC_URL_WITHOUT_PAGES, TLS, InsecureAddressError, ServiceServer, check_address, check_http_address,
        check_metrics_address, check_public_url, is_loopback, serve_forever, serve_metrics,
    )
    from ..service.validate import LimitError, Limits

    if bool(tls_cert) != bool(tls_key):
        _fail("--tls-cert and --tls-key go together")
    if tls_client_ca and not tls_cert:  # (ignored, it served plaintext to anyone: mutual TLS asked for, none given)
        _fail("--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for in a TLS handshake")
    try:  # before anything slow is opened: a refused address fails at once
        check_address(address, tls=tls_cert is not None, insecure=insecure)
        if http:
            _host_port(http, "--http")
            check_http_address(http, tls=tls_cert is not None, insecure=insecure)
        metrics_at = "%s:%d" % _host_port(metrics_address, "--metrics") if metrics_address else None
        if metrics_at:
            check_metrics_address(metrics_at, insecure=insecure)
    except InsecureAddressError as exc:
        _fail(str(exc))
    public_origin = None
    if public_url is not None:
        # a value from the environment is named as such: "give --http too" puzzled whoever typed no --public-url
        # (by name: click 8.5's ParameterSource is not click.core's)
        from_env = getattr(ctx.get_parameter_source("public_url"), "name", "") == "ENVIRONMENT"
        source = f" (--public-url is $TRAJSEARCH_PUBLIC_URL={public_url!r} here)" if from_env else ""
        if not http:
            _fail(PUBLIC_URL_WITHOUT_PAGES + (f"{source}, or unset it to serve gRPC alone" if source else ""))
        try:
            public_origin = check_public_url(public_url, insecure=insecure)
        except ValueError as exc:  # InsecureAddressError included
            _fail(f"{exc}{source}")
    _log_json(ctx, log_level)
    _quiet_libraries()
    keyring = _load_keys(keys)
    try:
        limits = Limits(max_message_bytes=max_message_mb * 1024 * 1024, max_k=max_k, max_text_chars=max_text)
    except LimitError as exc:
        _fail(f"{_LIMIT_FLAGS[exc.name]} {exc.said}")
    tls = TLS(tls_cert, tls_key, tls_client_ca) if tls_cert and tls_key else None
    from ..service.descriptors import file_limit, raise_file_limit

    files_before = file_limit()
    files = raise_file_limit()  # before the index opens its files: the connection cap is a quarter of it
    ts = _open_index(uri, traces, model)
    try:
        server = ServiceServer(ts, keyring, address=address, tls=tls, limits=limits, max_workers=max_workers,
                               search_cap=search_cap or None, trace_slots=trace_reads or None,
                               trace_timeout=trace_timeout, write_slots=write_slots or None, insecure=insecure,
                               http_address=http, page_reads=page_reads, public_url=public_url,
                               answer_budget=answer_budget_mb * 2**20 or None, ingest_idle=ingest_idle,
                               tenant_share=tenant_share or None)
    except (OSError, ValueError) as exc:
        _cannot_listen(ts, exc)
    metrics_url = ""
    if metrics_at:
        try:
            metrics_port = serve_metrics(server.metrics, metrics_at, insecure=insecure).server_port
            metrics_url = f"http://{metrics_at.rpartition(':')[0]}:{metrics_port}/metrics"
        except OSError as exc:
            ts.close()
            _fail(f"--metrics {metrics_address}: cannot listen: {_os_error(exc)}", code=1)
    if tls is None and not is_loopback(server.address):
        log_event(logging.getLogger("trajsearch.service"), logging.WARNING, "plaintext",
                  address=server.address, note="--insecure: API keys travel unencrypted to this address")
    if server.web is not None and tls is None and not is_loopback(server.web.address):
        log_event(logging.getLogger("trajsearch.service"), logging.WARNING, "plaintext",
                  address=server.web.address, note="--insecure: sign-in keys and cookies travel unencrypted")
    public_host = urlsplit(public_origin).hostname if public_origin else None
    if public_host and public_origin.startswith("http://") and not is_loopback(f"[{public_host}]:0"):
        log_event(logging.getLogger("trajsearch.service"), logging.WARNING, "plaintext",
                  address=public_origin, note="--insecure: browsers send sign-in keys and cookies unencrypted")
    web = f", web pages on {server.web.url}" if server.web is not None else ""
    web += f" (opened as {public_origin})" if public_origin else ""
    web += f", metrics on {metrics_url}" if metrics_url else ""  # its port too where --metrics asked for port 0
    raised = f", file limit raised from {files_before} to {files}" if files != files_before else ""
    _say(f"trajsearch serving on {server.address}{web} ({len(keyring)} keys, index {ts.location[0]}, at most "
         f"{server.connection_cap} gRPC connections per address bound{raised})")
    if serve_forever(server, grace=grace, writes_grace=writes_grace):
        # a write abandoned past --writes-grace may wait on its store for good (an S3 or NFS write that never
        # returns): its thread held the process open after "stopped", the index already closed, until the kill.
        # Exit 1 (as a failed ingest): runs were lost and their callers must send them again; a 0 told a scheduler
        # all was well
        sys.stderr.flush()
        logging.shutdown()
        os._exit(1)


def ui(
    ctx: typer.Context,
    address: str = typer.Option("127.0.0.1:8080", "--address", "-a", help="host:port on this machine (loopback only)."),
    tenant: str = typer.Option("default", "--tenant", "-t", envvar="TRAJSEARCH_TENANT",
                               help="The tenant whose runs the generated key reads (as for the embedded CLI)."),
    uri: Uri = None,
    traces: Traces = None,
    model: EmbeddingModel = None,
    keys: Optional[Path] = typer.Option(None, "--keys",
                                        help="Sign in with the keys of this file (default: none: a read-only key "
                                             "made for this run, printed as it starts)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the one-time sign-in link in the default browser."),
    trace_timeout: float = typer.Option(120.0, "--trace-timeout", min=0.1,  # views.search.PAGE_READ_TIMEOUT
                                        help="Seconds a page waits for a run's trace before 'The trace store did "
                                             "not answer' (a long session on a network mount may take a while)."),
    log_level: str = typer.Option("WARNING", "--log-level", callback=_LOG_LEVEL,
                                   help=_LOG_LEVEL_HELP),
) -> None:
    """The web pages for one engineer on this machine: the embedded store, on 127.0.0.1 only.

    A read key for --tenant is made for this run (held in memory, never written) and a one-time
    sign-in link printed; the pages still sign in by key, so the tenant comes from the key.
    """
    from ..service.auth import KeyConfigError, KeyRing, key_entry, new_key
    from ..service.server import allowed_hosts, is_loopback
    from ..web import WebConfig, WebServer, create_app
    from ..web.session import OneTimeTokens

    host, port = _host_port(address, "--address")
    if not is_loopback(address):
        _fail(f"refusing to serve the ui on {host}: it is for one user on this machine (127.0.0.1); to serve "
              "others, run trajsearch serve --http with --keys and TLS")
    _log_json(ctx, log_level)
    _quiet_libraries()
    key = None
    if keys is not None:
        keyring = _load_keys(keys)
    else:
        key = new_key()
        try:
            keyring = KeyRing.from_entries([key_entry(key, tenant=tenant, role="read", key_id="ui-local")])
        except (KeyConfigError, ValueError) as exc:
            _fail(f"--tenant: {exc}")
    ts = _open_index(uri, traces, model)
    one_time = OneTimeTokens()
    config = WebConfig(allowed_hosts=allowed_hosts(address), trace_timeout=trace_timeout, ui_tenant=key is not None)
    app = create_app(ts, keyring, config=config, one_time=one_time)
    try:
        web = WebServer(app, address)
    except (OSError, ValueError) as exc:
        _cannot_listen(ts, exc)
    _say(f"trajsearch ui on {web.url} (index {ts.location[0]})")
    if key is not None:
        principal = keyring.authenticate(key)
        link = f"{web.url}/signin/once/{one_time.issue(principal)}"
        _say(f"  sign in once:  {link}")
        _say(f"  or with key:   {key}   (tenant {tenant}, read-only, valid until this process stops)")
        if open_browser:
            import webbrowser

            webbrowser.open(link)
    elif open_browser:
        import webbrowser

        webbrowser.open(web.url)
    _run_until_signal(web)
    ts.close()


def _run_until_signal(web) -> None:  # web: WebServer
    """Serve until SIGTERM / SIGINT, then let in-flight requests finish."""
    import signal
    import threading

    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        web.start()
        while not stop.wait(0.5) and web.thread is not None and web.thread.is_alive():
            pass
    finally:
        web.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _load_keys(path: Path | None):  # -> KeyRing
    """The key file (``None``: JSON in ``$TRAJSEARCH_KEYS``), or one line saying why it cannot serve and exit 2.

    ``serve`` and ``ui --keys`` read the same file, so they refuse a bad one in the same words.
    """
    from ..service.auth import KeyConfigError, KeyRing

    try:
        return KeyRing.load(path)
    except KeyConfigError as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot read the key file: {_os_error(exc)}")


def _cannot_listen(ts, exc: OSError | ValueError) -> None:  # ts: TrajSearch
    """A server that could not start listening (address in use, bad address): close the index it was
    given, say why in one line, exit 1."""
    ts.close()
    _fail(_os_error(exc) if isinstance(exc, OSError) else str(exc), code=1)


def _open_index(uri: str | None, traces: str | None, model: str | None):  # -> TrajSearch
    """The index, or one line saying why not (a store in use, read-only, another model) and exit 1."""
    from ..indexer import error_chain
    from ..search import TrajSearch
    from ..store.index import SchemaMismatchError
    from ..store.lock import StoreOpenError
    from .connect import opening, quiet_rpc_errors, store_named
    from .disk import disk_full_line, store_disk_full
    from .output import say_interrupted, stopped

    quiet_rpc_errors()  # a full disk: pymilvus' traceback before the line below
    named = store_named(None, uri)
    try:
        with opening(named):
            # the model made first: a server's, not its first query's, and a broken one fails before the store opens
            return TrajSearch.open(uri, traces=traces, model=model, warm=True)
    except (KeyboardInterrupt, SystemExit) as exc:  # a large store's open is long (~30 s at 172k rows), as connect's
        if stopped(exc):
            say_interrupted(f"interrupted while opening {named}: nothing read or written")
        raise
    except (StoreOpenError, SchemaMismatchError) as exc:
        # (TrajSearch.open may report a mismatch as "in use": the failed open still held the lock)
        mismatch = next((e for e in error_chain(exc) if isinstance(e, SchemaMismatchError)), None)
        if mismatch is None:  # in use (by whom, and how to free it) or read-only
            _fail(_first_line(exc), code=1)
        message = _first_line(mismatch)  # another model or schema version built this index
        if "re-index" not in message:
            message += ": serve it with the --model it was built with, or give a new --uri to index afresh"
        _fail(message, code=1)
    except ValueError as exc:  # a bad --uri / --traces / --model value
        _fail(_first_line(exc))
    except Exception as exc:  # noqa: BLE001 (Milvus, the model: say it plainly, in one line)
        if store_disk_full(exc, uri, traces):  # opening removes an interrupted ingest's half-written runs: a write
            _fail(f"cannot open the index: {disk_full_line(exc, uri, traces)}", code=1)
        if isinstance(exc, OSError):  # e.g. the parent of a new data directory is not writable
            _fail(f"cannot open the index: {_os_error(exc)}: point --uri at a directory this user can write", code=1)
        _fail(f"cannot open the index ({type(exc).__name__}): {_first_line(exc)}", code=1)


def _log_json(ctx: typer.Context, level: str) -> None:
    """trajsearch's loggers as JSON lines on stderr while this command runs, put back as they were when it ends: run
    in-process (typer's CliRunner, an embedding program), its stderr is closed once it returns, and a handler left
    on it made every record the process logged later a "--- Logging error ---" (round 23's fresh-clone CI)."""
    from ..service.observe import configure_logging

    ctx.call_on_close(configure_logging(level))


def _quiet_libraries() -> None:
    """Libraries that log tracebacks for errors this CLI reports in one line."""
    logging.getLogger("milvus_lite").setLevel(logging.CRITICAL)


def _first_line(exc: BaseException) -> str:
    """The first line of the message alone (a message ending in a quoted value keeps its closing quote:
    probe I, I2)."""
    return (plain(exc).strip() or type(exc).__name__).splitlines()[0]


def _os_error(exc: OSError) -> str:
    """``Read-only file system: /x/LOCK`` rather than ``[Errno 30] Read-only file system: '/x/LOCK'``."""
    if exc.strerror and exc.filename:
        return f"{exc.strerror}: {exc.filename}"
    return _first_line(exc)


def _host_port(value: str, option: str) -> tuple[str, int]:
    host, _, port = value.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        _fail(f"{option}: expected host:port, got {value!r}")
    return host or "127.0.0.1", int(port)


def mcp(
    ctx: typer.Context,
    server: str = ServerOpt,
    env_version: ContextEnvVersions = [],
    policy_version: ContextPolicyVersions = [],
    tool: ContextTools = [],
    http: bool = typer.Option(False, "--http", help="Streamable HTTP instead of stdio."),
    host: str = typer.Option("127.0.0.1", "--host", help="HTTP bind address (keep it on loopback)."),
    port: int = typer.Option(8765, "--port", help="HTTP port."),
    insecure: bool = typer.Option(False, "--insecure", help="Allow --host beyond loopback (the HTTP endpoint has no auth)."),
    ca: Ca = None,
    run_idle: Optional[float] = typer.Option(None, "--run-idle", help="Seconds without a search (counted from the end of the last one the cap let through) after which the next one starts a new run with a fresh search cap (default 15 minutes): one stdio process serves every conversation of its host (a stateful HTTP session keeps its own cap). Below a minute, a model's pause between two searches of one conversation often starts a new run: the cap then hardly holds."),
) -> None:
    """MCP server exposing search_past_runs (filters from the key and this context; capped per session)."""
    from ..service.mcp_server import run_mcp
    from ..service.server import is_loopback

    if http and not insecure and not is_loopback(f"{host}:{port}"):
        _fail(f"refusing to serve MCP over HTTP on {host}: the endpoint has no authentication of its own and "
              "searches with this process's API key; keep it on 127.0.0.1, or pass --insecure")
    _log_json(ctx, "WARNING")  # stdout is the protocol: logs go to stderr, and only warnings
    try:
        run_mcp(server, env_versions=env_version, policy_versions=policy_version, tools_available=tool,
                http=http, host=host, port=port, tls=ca is not None, root_certificates=str(ca) if ca else None,
                **({"run_idle": run_idle} if run_idle is not None else {}))
    except ValueError as exc:
        _fail(_first_line(exc))
    except OSError as exc:
        _fail(_os_error(exc), code=1)


# -- keys --------------------------------------------------------------------------------------


@keys_app.command("new")
def keys_new(
    tenant: str = typer.Option(..., "--tenant", "-t", help="The one tenant this key may read and write."),
    role: str = typer.Option("read", "--role", help="read | write"),
    key_id: str = typer.Option("", "--id", help="A label for logs, unique in the key file (default TENANT-ROLE, or TENANT-ROLE-2... if taken)."),
    append: Optional[Path] = typer.Option(None, "--append", help="Append the entry to this TOML key file."),
) -> None:
    """Make a key: the key goes to stdout (shown once), the hashed entry to the key file or stderr."""
    import tomli_w

    from ..service.auth import key_entry, new_key

    key = new_key()
    try:
        entry = key_entry(key, tenant=tenant, role=role, key_id=key_id)
    except ValueError as exc:
        _fail(str(exc))
    if append:
        entry = _append_entry(append, entry, explicit_id=bool(key_id))
        _say(f"appended key {entry['id']!r} (tenant {tenant}, role {role}) to {append}")
    else:
        _say("add this to the server's key file:\n" + tomli_w.dumps({"keys": [entry]}))
    sys.stdout.write(key + "\n")


def _append_entry(path: Path, entry: dict, *, explicit_id: bool) -> dict:
    """Append ``entry`` to the key file, only if the server would still load the file afterwards.

    A default id already in the file becomes the first free ``TENANT-ROLE-N``; an explicit ``--id`` is refused.
    """
    import tomli_w

    from ..service.auth import KeyConfigError, KeyRing, free_key_id, key_file_entries, key_file_text

    if path.suffix == ".json":
        _fail(f"{path}: --append writes TOML; add the entry printed without --append to a JSON key file by hand")
    try:
        text = key_file_text(path) if path.exists() else ""
        taken = {str(e.get("id")) for e in key_file_entries(text, path) if isinstance(e, dict)}
        if explicit_id and entry["id"] in taken:
            _fail(f"{path} already has a key with id {entry['id']!r}: choose another --id")
        entry = {**entry, "id": free_key_id(entry["id"], taken)}
        after = text + ("\n" if text and not text.endswith("\n") else "") + "\n" + tomli_w.dumps({"keys": [entry]})
        KeyRing.from_entries(key_file_entries(after, path), origin=str(path))
    except KeyConfigError as exc:
        _fail(f"not appending, the key file would not load: {exc}")
    except OSError as exc:
        _fail(f"cannot read the key file: {_os_error(exc)}", code=1)
    try:
        with path.open("a") as fh:
            fh.write(after[len(text):])
    except OSError as exc:
        _fail(f"cannot append to the key file: {_os_error(exc)}", code=1)
    return entry


@keys_app.command("hash")
def keys_hash() -> None:
    """Print the sha256 of a key read from stdin (to write a key file by hand)."""
    from ..service.auth import hash_key, key_problem

    key = sys.stdin.readline().strip()
    if not key:
        _fail("no key on stdin")
    problem = key_problem(key)  # the client refuses such a key: its hash would let no client in
    if problem:
        _fail(f"the key on stdin {problem}")
    sys.stdout.write(hash_key(key) + "\n")


def register(app: typer.Typer) -> None:
    """Mount ``serve``, ``ui``, ``mcp`` and ``keys`` on the main CLI."""
    app.command("serve")(serve)
    app.command("ui")(ui)
    app.command("mcp")(mcp)
    app.add_typer(keys_app, name="keys")


def main() -> None:
    """``python -m trajsearch.service``: these commands alone, run as ``trajsearch`` runs them (an error in one line,
    SIGTERM an exit through the command's ``with`` blocks: see ``trajsearch.cli.main``)."""
    from . import main as run

    app = typer.Typer(help="trajsearch service commands.", no_args_is_help=True, add_completion=False)
    register(app)
    run(app)


if __name__ == "__main__":
    main()
