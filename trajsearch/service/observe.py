"""Structured JSON logs with request ids, and per-method call / error / latency metrics.

Logs are one JSON object per line on stderr (python-json-logger). They carry
the request id, the method, the key's label and tenant, the status code and
the latency, never the API key and never query or trajectory text. Fields
go in as ``extra`` (:func:`log_event`), so they are attributes of the record.

:class:`Metrics` keeps its counters in a ``prometheus_client`` registry of its
own (one per server): calls by method, code and tenant, a latency histogram by
method and tenant, calls in flight by tenant. The operator's HTTP endpoint
(:func:`start_metrics_http`) exposes all of it; the ``Metrics`` RPC shows a
caller only its own tenant's (:meth:`Metrics.snapshot`). A window of recent
latencies per method and tenant gives the RPC exact p50 / p99.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sys
import threading
import time
import warnings
from collections import deque
from typing import Any, Callable, Iterable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from socketserver import ThreadingMixIn

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, make_wsgi_app
from pythonjsonlogger.core import RESERVED_ATTRS
from pythonjsonlogger.json import JsonFormatter as _JsonFormatter

LOGGER = "trajsearch.service"
BUCKETS_MS = (1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000)
_WINDOW = 2048


class JsonFormatter(_JsonFormatter):
    """``{"ts": ..., "level": ..., "logger": ..., "msg": ..., **extra fields}``, non-ASCII kept; not uvicorn's
    ``color_message`` (its message again, a terminal's colour codes around its numbers: ANSI escapes in the JSON)."""

    def __init__(self) -> None:
        super().__init__(
            ["levelname", "name", "message"],
            rename_fields={"levelname": "level", "name": "logger", "message": "msg"},
            timestamp="ts",
            json_ensure_ascii=False,
            reserved_attrs=[*RESERVED_ATTRS, "color_message"],
        )


class _JsonLines(logging.StreamHandler):
    """The JSON lines of one caller of :func:`configure_logging`: known by its class on the root logger, where an
    embedding program's own handlers stay beside it."""


#: The JSON logging of trajsearch's loggers in force, by the callers that asked for it and have not ended (each its
#: handler and level; the last one asked for is applied), and the logging as it was before the first.
_LOGGING = threading.Lock()
_IN_FORCE: list[tuple[logging.Handler, int]] = []
_BEFORE: dict[str, Any] = {}
#: The least a record of another library (the MCP SDK, grpc, uvicorn, ``warnings``) must weigh to be logged, where
#: no one else's handler is on the root logger (the CLI's own process).
OTHERS_LEVEL = logging.WARNING


def configure_logging(level: str = "INFO", stream: Any = None) -> Callable[[], None]:
    """Send every ``trajsearch`` logger to ``stream`` (stderr) as JSON lines, and every other library's warnings and
    errors (``warnings`` included) too: one line per record, a traceback inside it, as a host reading an MCP server's
    stderr line by line takes it (the MCP spec leaves stderr's form to the server). Left alone, the MCP SDK's
    ``MCPServer()`` put a RichHandler on the root logger (``logging.basicConfig``, which does nothing once the root
    has a handler; modelcontextprotocol/python-sdk#1656, #2527): an unknown prompt asked of ``trajsearch mcp`` wrote
    a boxed traceback of 150 lines, and each refused tool call nine lines of INFO quoting the caller's arguments.

    In a program that logs for itself (a command run in-process, a server embedded), its logging stays as it was:
    its handlers stay on the root beside this one and keep the other libraries' records (:func:`_unclaimed`), the
    root's level is its own (raised to WARNING, its INFO records went nowhere while the command ran), and its
    ``logging.captureWarnings(True)`` holds after the end.

    Returns the function that ends this caller's logging, for a caller that ends before its process does (a command
    run in-process): the loggers go back to the logging of a caller that asked before it and is still running, or
    else as they were before any. Put back as each caller found them instead, two callers ending in the order they
    started (an embedding program's two servers) left the first one's handler, on a stream perhaps closed, and the
    second logged nowhere meanwhile."""
    handler = _JsonLines(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(_unclaimed)
    ours = logging.getLogger("trajsearch")
    with _LOGGING:
        wanted = logging.getLevelName(level.upper())
        if not isinstance(wanted, int):  # (an unknown level raises here, before anything is changed)
            raise ValueError(f"Unknown level: {level.upper()!r}")
        if not _IN_FORCE:
            root, showwarning = logging.getLogger(), warnings.showwarning
            _BEFORE.update(ours=dict(handlers=ours.handlers[:], level=ours.level, propagate=ours.propagate),
                           root_level=root.level, root_handled=bool(root.handlers))
            logging.captureWarnings(True)  # (warnings.showwarning wrote two lines: the warning and its source line)
            _BEFORE["captured"] = warnings.showwarning is showwarning  # (already: the embedding program's)
            _BEFORE["excepthook"] = threading.excepthook
            threading.excepthook = _thread_crashed
        mine = (handler, wanted)
        _IN_FORCE.append(mine)
        _apply(*mine)

    def end() -> None:
        with _LOGGING:
            if mine not in _IN_FORCE:  # ended already
                return
            _IN_FORCE.remove(mine)
            if _IN_FORCE:
                _apply(*_IN_FORCE[-1])
                return
            if not _BEFORE["captured"]:
                logging.captureWarnings(False)
            if threading.excepthook is _thread_crashed:  # (else the embedding program's own, set since: kept)
                threading.excepthook = _BEFORE["excepthook"]
            ours.handlers[:] = _BEFORE["ours"]["handlers"]
            ours.setLevel(_BEFORE["ours"]["level"])
            ours.propagate = _BEFORE["ours"]["propagate"]
            root = logging.getLogger()
            root.handlers[:] = [h for h in root.handlers if not isinstance(h, _JsonLines)]
            if not _BEFORE["root_handled"]:
                root.setLevel(_BEFORE["root_level"])

    return end


def _thread_crashed(args: threading.ExceptHookArgs) -> None:
    """A server thread's uncaught exception as one record, ``thread crashed`` with the thread's name and the error's
    first line, its traceback only where the log is at DEBUG: Python's own hook wrote the traceback raw on stderr,
    a dozen lines among the JSON lines, which a log collector reading them line by line took for a dozen records of
    no form (round 27, CLISVC4). A thread's ``SystemExit`` is no crash, as for Python's hook."""
    if not issubclass(args.exc_type, SystemExit):
        log_crash(args.thread.name if args.thread else "?", (args.exc_type, args.exc_value, args.exc_traceback))


def log_crash(thread_name: str, exc_info: Any) -> None:
    """``exc_info``, a server thread's uncaught exception, logged as one record (see :func:`_thread_crashed`)."""
    logger = logging.getLogger(LOGGER)
    exc_type, exc_value = exc_info[0], exc_info[1]
    text = str(exc_value).strip().splitlines() if exc_value is not None else []
    error = exc_type.__name__ + (f": {text[0]}" if text else "")
    logger.error("thread crashed", extra={"thread_name": thread_name, "error": error},
                 exc_info=exc_info if logger.isEnabledFor(logging.DEBUG) else None)


def _unclaimed(record: logging.LogRecord) -> bool:
    """Whether ``record`` is trajsearch's, or else no logger on its way to the root, the root included, has a handler
    but trajsearch's: what Python's last resort would have printed. A library that gave its loggers one (grpc's
    NullHandler) chose silence, and keeps it: Milvus Lite's in-process gRPC server logs an ERROR with a traceback
    ("AllocTimestamp: Method not implemented") at every store opened; a program that logs for itself (a handler on
    its root) keeps the other libraries' records. trajsearch's own come through ``trajsearch``'s handler alone,
    whatever handler an embedding program put on their way (one on ``trajsearch.service`` took them all)."""
    if record.name.partition(".")[0] == "trajsearch":
        return True
    logger: logging.Logger | None = logging.getLogger(record.name)
    while logger is not None:
        if any(not isinstance(h, _JsonLines) for h in logger.handlers):
            return False
        logger = logger.parent
    return True


def _apply(handler: logging.Handler, level: int) -> None:
    """trajsearch's loggers at ``level`` through ``handler`` alone, and ``handler`` on the root beside the program's
    own handlers; the root at :data:`OTHERS_LEVEL` or above where it has none (the CLI's own process)."""
    ours = logging.getLogger("trajsearch")
    ours.handlers[:] = [handler]
    ours.setLevel(level)
    ours.propagate = False
    root = logging.getLogger()
    root.handlers[:] = [h for h in root.handlers if not isinstance(h, _JsonLines)] + [handler]
    if not _BEFORE["root_handled"]:
        root.setLevel(max(level, OTHERS_LEVEL))


def log_event(logger: logging.Logger, level: int, msg: str, **fields: Any) -> None:
    logger.log(level, msg, extra=fields)


class Metrics:
    """Thread-safe per-method, per-tenant counters: ``enter`` when a call starts, ``record`` when it ends."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._calls = Counter("trajsearch_rpc_calls", "RPCs finished, by method, status code and tenant",
                              ["method", "code", "tenant"], registry=self.registry)
        self._latency = Histogram("trajsearch_rpc_latency_ms", "RPC latency in milliseconds",
                                  ["method", "tenant"], buckets=BUCKETS_MS, registry=self.registry)
        self._in_flight = Gauge("trajsearch_rpc_in_flight", "RPCs in progress, by tenant ('' before a key is known)",
                                ["tenant"], registry=self.registry)
        self._lock = threading.Lock()
        self._recent: dict[tuple[str, str], deque] = {}
        self.started = time.monotonic()

    def enter(self, tenant: str = "") -> None:
        self._in_flight.labels(tenant).inc()

    def record(self, method: str, code: str, ms: float, tenant: str = "") -> None:
        self._in_flight.labels(tenant).dec()
        self._calls.labels(method, code, tenant).inc()
        self._latency.labels(method, tenant).observe(ms)
        with self._lock:
            self._recent.setdefault((method, tenant), deque(maxlen=_WINDOW)).append(ms)

    @property
    def in_flight(self) -> int:
        """Calls in progress, all tenants."""
        return int(sum(s.value for m in self._in_flight.collect() for s in m.samples))

    def snapshot(self, tenant: str | None = None) -> dict[str, Any]:
        """``{"methods": {name: {calls, errors, codes, mean_ms, p50_ms, p99_ms}}, "in_flight": n, "uptime_s": s}``.

        With ``tenant``, only that tenant's calls; without, the whole server's.
        """
        mine = (lambda t: t == tenant) if tenant is not None else (lambda t: True)
        methods: dict[str, dict[str, Any]] = {}
        for metric in self._calls.collect():
            for s in metric.samples:
                if s.name.endswith("_total") and mine(s.labels["tenant"]) and s.value:
                    stats = methods.setdefault(s.labels["method"], {"calls": 0, "errors": 0, "codes": {}})
                    n = int(s.value)
                    stats["calls"] += n
                    stats["codes"][s.labels["code"]] = stats["codes"].get(s.labels["code"], 0) + n
                    if s.labels["code"] != "OK":
                        stats["errors"] += n
        total_ms: dict[str, float] = {}
        for metric in self._latency.collect():
            for s in metric.samples:
                if s.name.endswith("_sum") and mine(s.labels["tenant"]):
                    total_ms[s.labels["method"]] = total_ms.get(s.labels["method"], 0.0) + s.value
        with self._lock:
            recent = {key: list(values) for key, values in self._recent.items() if mine(key[1])}
        for name, stats in methods.items():
            window = sorted(ms for (method, _), values in recent.items() if method == name for ms in values)
            stats["mean_ms"] = total_ms.get(name, 0.0) / stats["calls"] if stats["calls"] else 0.0
            stats["p50_ms"] = percentile(window, 50)
            stats["p99_ms"] = percentile(window, 99)
        in_flight = sum(int(s.value) for m in self._in_flight.collect() for s in m.samples if mine(s.labels["tenant"]))
        return {"methods": dict(sorted(methods.items())), "in_flight": in_flight,
                "uptime_s": time.monotonic() - self.started}

    def prometheus(self) -> str:
        """Every counter in the Prometheus text exposition format."""
        return generate_latest(self.registry).decode()


def percentile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (0.0 when empty)."""
    if not sorted_values:
        return 0.0
    rank = max(1, min(len(sorted_values), math.ceil(q / 100 * len(sorted_values))))
    return float(sorted_values[rank - 1])


class _ThreadingWSGIServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One record (:func:`log_crash`), not socketserver's traceback between two rules of dashes on stderr; a
        client gone mid-request (a scraper's timeout, its connection reset) is no crash: a debug record."""
        exc_info = sys.exc_info()
        if isinstance(exc_info[1], ConnectionError):
            logging.getLogger(LOGGER).debug("metrics client disconnected",
                                            extra={"error": f"{exc_info[0].__name__}: {exc_info[1]}"})
            return
        log_crash(threading.current_thread().name, exc_info)


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:  # the RPC log is the log
        pass


def start_metrics_http(metrics: Metrics, host: str, port: int, *,
                       allowed_hosts: tuple[str, ...] | None = None) -> WSGIServer:
    """Serve ``GET /metrics`` (Prometheus text, via prometheus_client) and ``GET /metrics.json`` in a thread.

    With ``allowed_hosts`` a request whose Host header (its port aside) is not one of them gets 421
    (a page of another site whose name was rebound to this address must not read the counters);
    any other path is 404. Returns the HTTP server (``server_port``; ``shutdown()`` stops it).
    """
    prometheus_app = make_wsgi_app(metrics.registry)
    allowed = None if allowed_hosts is None else {h.lower() for h in allowed_hosts}
    own = (allowed_hosts or LOOPBACK_HOSTS)[0]

    def plain(start_response: Any, status: str, text: str, kind: str = "text/plain; charset=utf-8",
              *more: tuple[str, str]) -> list[bytes]:
        body = text.encode()
        start_response(status, [("Content-Type", kind), ("Content-Length", str(len(body))), *more])
        return [body]

    def answer(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        if allowed is not None and host_name(environ.get("HTTP_HOST", "")) not in allowed:
            return plain(start_response, "421 Misdirected Request",
                         misdirected(own, environ["wsgi.url_scheme"], environ.get("SERVER_PORT")))
        path = environ.get("PATH_INFO")
        if path not in ("/metrics", "/metrics.json"):
            return plain(start_response, "404 Not Found", "not found: GET /metrics or /metrics.json\n")
        if environ["REQUEST_METHOD"] not in ("GET", "HEAD"):
            return plain(start_response, "405 Method Not Allowed", f"{path} answers GET (and HEAD) only\n",
                         "text/plain; charset=utf-8", ("Allow", "GET, HEAD"))
        if path == "/metrics.json":
            return plain(start_response, "200 OK", json.dumps(metrics.snapshot()), "application/json")
        return prometheus_app(dict(environ, REQUEST_METHOD="GET"), start_response)  # (it refused HEAD: 405)

    def app(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        """HEAD answered as GET without its body (RFC 9110 9.1: wherever GET is; wsgiref writes what it is given)."""
        body = answer(environ, start_response)
        return [] if environ["REQUEST_METHOD"] == "HEAD" else body

    server = make_server(host, port, app, server_class=_ThreadingWSGIServer, handler_class=_QuietHandler)
    threading.Thread(target=server.serve_forever, name="trajsearch-metrics", daemon=True).start()
    return server


#: The Host names a listener on a loopback address answers (web pages, ``--metrics``): no other site's name.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
#: A Host header: a name (or a bracketed IPv6 address) and at most a port.
_HOST = re.compile(r"(\[[^\]]*\]|[^:\[\]]*)(?::\d{1,5})?", re.ASCII)


def misdirected(host: str, scheme: str, port: int | str | None) -> str:
    """The 421 refusal of a Host header not allowed: the address to use instead, the listener's own ``host`` and
    the port it listens on (what the server got the request on: a refusal naming ``http://127.0.0.2`` alone sent the
    user to port 80, review rev1 D8). The one refusal of every HTTP listener (metrics, the web pages)."""
    return f"unknown host: open this page as {scheme}://{host}{f':{port}' if port else ''}\n"


def host_name(host: str) -> str:
    """A Host header's name, lower-case and without its port (``[::1]:80`` -> ``[::1]``); a header that is
    not ``name[:port]`` (``[::1]evil``, ``localhost:x``, padded) is returned whole, so it matches no allowed
    host. The one parser of every HTTP listener's Host check (metrics, the web pages)."""
    host = host.lower()
    match = _HOST.fullmatch(host)
    return match.group(1) if match else host
