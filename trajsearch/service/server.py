"""The gRPC server process: the library façade behind API keys, bounds, deadlines and logs.

One server process owns the data directory of the embedded default (Milvus
Lite allows one process per directory); every other process goes through it.
Against a Milvus server URI several servers can share one collection.

The pieces: :mod:`.servicer` (the handlers), :mod:`.interceptor` (per call:
request id, key -> tenant and role, request parsing, deadline, status codes,
metrics, one JSON log line), :mod:`.trace_reads` (trace-store reads on their
own bounded threads, so a slow object store costs ``GetTrace`` an
``UNAVAILABLE`` and nothing else), :mod:`.observe` (metrics and logs). This
module assembles them into a :class:`ServiceServer` and refuses to listen in
plaintext beyond loopback unless told to (:func:`check_address`). With
``http_address`` the same process also serves the web pages (:mod:`trajsearch.web`)
on a thread of its own, over the same façade, bounded trace reads and keys.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import os
import signal
import socket
import threading
from concurrent import futures
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from ..search import TrajSearch
from . import validate as v
from .answers import DEFAULT_BUDGET, AnswerBudget
from .auth import KeyRing
from .descriptors import connection_budget
from .fair import TenantCalls, WriteShares
from .interceptor import SERVICE_NAME, ServiceInterceptor
from .observe import LOOPBACK_HOSTS, Metrics, log_event, start_metrics_http
from .protos import pb2_grpc
from .servicer import INGEST_IDLE_S, Service
from .trace_reads import TraceReads

log = logging.getLogger("trajsearch.service")

__all__ = ["SERVICE_NAME", "Service", "ServiceServer", "TLS", "InsecureAddressError", "allowed_hosts",
           "check_address", "check_http_address", "check_metrics_address", "check_public_url", "serve_forever",
           "serve_metrics", "writes_grace_for"]


class InsecureAddressError(ValueError):
    """Plaintext was asked for on an address other machines can reach."""


def is_loopback(address: str) -> bool:
    """Whether ``host:port`` (or a ``unix:`` socket) is reachable only from this machine."""
    if address.startswith(("unix:", "unix-abstract:")):
        return True
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name, or "" / "0.0.0.0" / "::" (every interface)


def check_address(address: str, *, tls: bool, insecure: bool) -> None:
    """Refuse plaintext on a non-loopback address unless ``insecure`` says it is meant."""
    _refuse_plaintext(address, tls=tls, insecure=insecure, what="plaintext gRPC",
                      exposed="API keys and results")


def check_http_address(address: str, *, tls: bool, insecure: bool) -> None:
    """The web pages' twin of :func:`check_address`: sign-in keys and session cookies travel over it."""
    _refuse_plaintext(address, tls=tls, insecure=insecure, what="the web pages in plaintext",
                      exposed="API keys typed at sign-in and session cookies")


def check_metrics_address(address: str, *, insecure: bool) -> None:
    """The ``--metrics`` listener's twin of :func:`check_address`: it has no TLS, and it names every tenant."""
    _refuse_plaintext(address, tls=None, insecure=insecure, what="metrics over plain HTTP",
                      exposed="every tenant's name, call counts and error rates")


def allowed_hosts(address: str) -> tuple[str, ...] | None:
    """The Host header values an HTTP listener on ``address`` answers (the web pages, ``--metrics``).

    On a loopback address the address itself (first: the one a refusal names) and the loopback names: a
    page of another site whose name was rebound to 127.0.0.1 (DNS rebinding) sends that name, and is
    refused. 127.0.0.2 and other 127/8 aliases are loopback too, and are reached by their own literal
    (probe I, I1: they answered every page 421). Beyond loopback any (the operator's names are unknown here).
    """
    if not is_loopback(address):
        return None
    if address.startswith(("unix:", "unix-abstract:")):
        return LOOPBACK_HOSTS
    bound = address.rpartition(":")[0].lower()
    return tuple(dict.fromkeys((bound, *LOOPBACK_HOSTS)))


def serve_metrics(metrics: Metrics, address: str, *, insecure: bool = False) -> Any:
    """Start ``GET /metrics`` on ``address`` (``host:port``) under the rules of every other listener."""
    check_metrics_address(address, insecure=insecure)
    host, _, port = address.rpartition(":")
    return start_metrics_http(metrics, host.strip("[]"), int(port), allowed_hosts=allowed_hosts(address))


def bind_refusal(address: str) -> str | None:
    """Why this host will not let ``address`` be listened on in full (``Address already in use``), found by binding
    each of its places here. grpcio names no cause ("Failed to bind to address ...; set GRPC_VERBOSITY=debug ..."),
    and of a name with two places (``localhost``: 127.0.0.1 and ::1) it listens on the one it can: ``serve --address
    localhost:P`` beside another server on 127.0.0.1:P said "serving" on ::1 alone, while clients of 127.0.0.1:P went
    on reaching the other one. A place in use (or forbidden) is a refusal; one this host lacks (no IPv6: no ::1, or
    no AF_INET6 sockets at all under ``ipv6.disable=1``) only when no place binds, as grpcio then serves on the rest.
    None when all bind, or ``address`` is no host:port (a ``unix:`` path): grpcio's words then stand."""
    host, _, port = address.rpartition(":")
    if not port.isdigit() or address.startswith(("unix:", "unix-abstract:")):
        return None
    if host.lower() == "localhost":  # grpcio binds both loopbacks for it, whatever /etc/hosts names
        places = [(socket.AF_INET, ("127.0.0.1", int(port))), (socket.AF_INET6, ("::1", int(port)))]
    else:
        try:
            found = socket.getaddrinfo(host.strip("[]") or None, int(port), type=socket.SOCK_STREAM)
        except OSError as exc:
            return exc.strerror or str(exc)
        places = [(family, place) for family, *_, place in found]
    refused = []
    for family, place in places:
        try:  # the socket too: a kernel booted without IPv6 refuses an AF_INET6 one (EAFNOSUPPORT)
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as grpcio binds: TIME_WAIT is no refusal
                probe.bind(place)
        except OSError as exc:
            refused.append((exc, place[0]))
    taken = [(exc, where) for exc, where in refused if exc.errno in (errno.EADDRINUSE, errno.EACCES)]
    if not taken and len(refused) < len(places):
        return None
    exc, where = (taken or refused)[0]
    return f"{exc.strerror or exc}{f' (on {where})' if len(places) > 1 else ''}"


#: Most connections the gRPC port keeps open, per address it is bound to ("localhost" is two: IPv4 and IPv6); more
#: are closed as they are accepted. None: :func:`.descriptors.connection_budget`, read when a server is made (after
#: ``serve`` raised its file limit). grpcio bounds none, and holds a connection that never speaks HTTP/2 for its
#: handshake timeout (120 s): 400 idle TCP connections (a port scanner, a load balancer's TCP checks left open, a
#: hostile client) took every descriptor of a process allowed 256, and every tenant's call failed "failed to connect
#: to all addresses", the index and traces unopenable (probe 53, SV4).
MAX_GRPC_CONNECTIONS: int | None = None
#: Seconds a connection has to make its TLS handshake and send HTTP/2's preface and settings (grpcio's default: 120):
#: one that does not is closed, and with it the place it held among :data:`MAX_GRPC_CONNECTIONS`. A client's take
#: at most a few round trips.
GRPC_HANDSHAKE_S = 10.0
#: Seconds a client connection with no call in progress is kept (then closed with a GOAWAY: a gRPC client opens a
#: new one at its next call, unseen by its caller): an agent's channel left open between tasks holds no descriptor.
GRPC_IDLE_S = 300.0
#: Calls one connection may have open at once (HTTP/2's SETTINGS_MAX_CONCURRENT_STREAMS; grpcio sets none). An answer
#: of at most 64 KiB is not counted in the answer budget (:data:`.answers.UNCOUNTED`) and stays in memory until its
#: caller reads it: with no cap, 4 connections that never read held 5,548 answered GetTrace calls of a 60 KB trace,
#: RSS 215 -> 973 MB (probe 54, RSV5). Past the cap a client's next call waits for one of its own to end (a gRPC
#: client queues it) or is refused REFUSED_STREAM; --max-concurrent-rpcs (64) stays the lower bound for a client that
#: reads its answers.
GRPC_MAX_STREAMS = 100


#: How long a stopping server waits, past its grace, for the batch each write in progress is writing (one batch of
#: large runs takes about a minute on CPU; a scheduler's own stop timeout, then SIGKILL, may come first).
WRITES_GRACE_S = 60.0
#: Kubernetes kills a pod's containers this long after SIGTERM unless the pod says otherwise
#: (``terminationGracePeriodSeconds``), and the time kept from it to close the index (save the lexical index).
KUBERNETES_STOP_S, CLOSE_S = 30.0, 5.0


def writes_grace_for(grace: float, environ: Any = os.environ) -> float:
    """How long past ``grace`` a stopping server waits for writes when the operator did not say (``--writes-grace``):
    :data:`WRITES_GRACE_S`, or in a Kubernetes pod (every container there has ``KUBERNETES_SERVICE_HOST``) what is
    left of its default stop of 30 s once the index is closed. 10 s of grace and 60 s for a write outlived the pod's
    SIGKILL: a write in progress was lost all the same, and the index was never closed (its lexical index rebuilt
    from every row at the next start)."""
    if environ.get("KUBERNETES_SERVICE_HOST"):
        return max(0.0, KUBERNETES_STOP_S - CLOSE_S - grace)
    return WRITES_GRACE_S


PUBLIC_URL_WITHOUT_PAGES = "--public-url names the address of the web pages: give --http too"


def check_public_url(url: str, *, insecure: bool) -> str:
    """The origin of ``--public-url`` (:func:`~trajsearch.web.app.public_origin`), under the rule of every listener:
    an ``http://`` one beyond loopback is where browsers type their keys in the clear, whatever the listener
    behind the proxy speaks (``--tls-cert`` does not help), so it needs ``--insecure``. ValueError otherwise."""
    from ..web.app import public_origin

    origin = public_origin(url)
    parts = urlsplit(origin)
    if parts.scheme == "http":
        _refuse_plaintext(parts.netloc if parts.port else f"{parts.netloc}:80", tls=False, insecure=insecure,
                          what="the web pages in plaintext (--public-url)",
                          exposed="API keys typed at sign-in and session cookies",
                          remedy=f"Give --public-url https://{parts.netloc} (the proxy in front terminating TLS), "
                                 f"or pass --insecure if only a private network lies between the browsers and "
                                 f"{parts.hostname}")
    return origin


def _refuse_plaintext(address: str, *, tls: bool | None, insecure: bool, what: str, exposed: str,
                      remedy: str | None = None) -> None:
    """One rule for every listener: serving ``what`` on ``address`` without TLS needs a loopback address
    or an explicit ``--insecure``, since ``exposed`` would travel in the clear. ``tls=None``: the listener
    has no TLS at all (``--metrics``), so the message does not offer ``--tls-cert/--tls-key``; ``remedy``
    replaces the advice that ends the message."""
    if tls or insecure or is_loopback(address):
        return
    if remedy is None:
        remedy = ("This listener has no TLS (--tls-cert/--tls-key are for gRPC and --http): listen on 127.0.0.1"
                  if tls is None else "Use --tls-cert/--tls-key, or listen on 127.0.0.1")
        remedy += ", or pass --insecure if a TLS-terminating proxy or a private network stands in front"
    raise InsecureAddressError(f"refusing to serve {what} on {address}, which other machines can reach: {exposed} "
                               f"would cross the network in the clear. {remedy}")


def _web_server(ts: TrajSearch, keys: KeyRing, address: str, tls: TLS | None, page_reads: int | None,
                public_url: str | None = None) -> Any:
    from ..web import WebConfig, WebServer, create_app

    config = WebConfig(secure_cookies=tls is not None, allowed_hosts=allowed_hosts(address), public_url=public_url,
                       **({"trace_reads": page_reads} if page_reads else {}))
    return WebServer(create_app(ts, keys, config=config), address,
                     tls_cert=tls.cert if tls else None, tls_key=tls.key if tls else None,
                     tls_client_ca=tls.client_ca if tls else None)


@dataclass(frozen=True)
class TLS:
    """Server certificate and key (PEM paths); with ``client_ca`` clients must present a cert."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        pair = [(Path(self.key).read_bytes(), Path(self.cert).read_bytes())]
        if self.client_ca:
            return grpc.ssl_server_credentials(pair, root_certificates=Path(self.client_ca).read_bytes(),
                                               require_client_auth=True)
        return grpc.ssl_server_credentials(pair)


class ServiceServer:
    """A running server: ``start()``, then ``stop(grace)`` drains in-flight calls and closes the index.

    ``trace_slots`` trace-store reads may wait at once (default a quarter of the
    workers, at least 1, always fewer than the workers), each at most
    ``trace_timeout`` seconds or the call's deadline; ``write_slots`` write
    calls (``Ingest``, ``Delete``; default half the workers) may be in progress,
    more are refused with ``UNAVAILABLE``, and (with two or more, while another tenant has a write key) one
    tenant's past all of them but one (:class:`.fair.WriteShares`);
    an ``Ingest`` whose client sends no batch for ``ingest_idle`` seconds is ended, its slot freed. However slow the
    store, the other worker threads stay free for searches. The web pages (``http_address``) read
    traces on ``page_reads`` permits of their own (default 8), so the store sees
    at most ``trace_slots + page_reads`` reads at once. Answers over 64 KiB (a large run's
    trace) hold at most ``answer_budget`` bytes until their callers read them, half of it per
    key (:mod:`.answers`). Plaintext on a non-loopback
    ``address`` needs ``insecure=True``. ``public_url``: the address browsers open the
    pages at through a reverse proxy (see :class:`~trajsearch.web.WebConfig`). One tenant's
    calls run on at most ``tenant_share`` workers (default half) while another's wait, and a
    tenant with half of ``max_concurrent_rpcs`` running or queued is refused (:mod:`.fair`).
    """

    def __init__(self, ts: TrajSearch, keys: KeyRing, *, address: str = "127.0.0.1:50051",
                 tls: TLS | None = None, limits: v.Limits | None = None, max_workers: int = 8,
                 max_concurrent_rpcs: int = 64, search_cap: int | None = None, close_index: bool = True,
                 trace_slots: int | None = None, trace_timeout: float = 10.0, write_slots: int | None = None,
                 insecure: bool = False, http_address: str | None = None, page_reads: int | None = None,
                 answer_budget: int | None = None, public_url: str | None = None,
                 ingest_idle: float = INGEST_IDLE_S, tenant_share: int | None = None) -> None:
        check_address(address, tls=tls is not None, insecure=insecure)
        if http_address is not None:
            check_http_address(http_address, tls=tls is not None, insecure=insecure)
            if public_url is not None:
                check_public_url(public_url, insecure=insecure)
        elif public_url is not None:
            raise ValueError(PUBLIC_URL_WITHOUT_PAGES)
        self.limits = limits or v.Limits()
        self.metrics = Metrics()
        self.ts = ts
        self.close_index = close_index
        slots = trace_slots or max(1, max_workers // 4)
        self._store = ts.traces
        if max_workers > 1:
            slots = min(slots, max_workers - 1)
        store = ts.traces.store if isinstance(ts.traces, TraceReads) else ts.traces
        self.trace_reads = TraceReads(store, slots=slots, timeout=trace_timeout)
        writes = write_slots or max(1, max_workers // 2)
        if max_workers > 1:
            writes = min(writes, max_workers - 1)
        self.service = Service(ts, limits=self.limits, metrics=self.metrics, search_cap=search_cap,
                               write_slots=writes, ingest_idle=ingest_idle)
        self.connection_cap = MAX_GRPC_CONNECTIONS or connection_budget()
        options = [
            ("grpc.max_receive_message_length", self.limits.max_message_bytes),
            ("grpc.max_send_message_length", max(self.limits.max_message_bytes, v.MAX_RESPONSE_BYTES)),
            ("grpc.so_reuseport", 0),  # a second server on the same port must fail, not share it
            ("grpc.max_allowed_incoming_connections", self.connection_cap),
            ("grpc.server_handshake_timeout_ms", int(GRPC_HANDSHAKE_S * 1000)),
            ("grpc.max_connection_idle_ms", int(GRPC_IDLE_S * 1000)),
            ("grpc.max_concurrent_streams", GRPC_MAX_STREAMS),
        ]
        self.answers = AnswerBudget(answer_budget or DEFAULT_BUDGET)
        # TrajSearch calls run on workers shared among tenants; grpcio's own pool keeps the health service, refusals
        # and writes (bounded by their slots), with a thread beyond the writes: a health check must not wait for a
        # stream that lasts hours (--workers 1 has one write slot)
        self.calls = TenantCalls(max_workers, share=tenant_share, limit=max(1, max_concurrent_rpcs // 2))
        # one tenant's parallel ingests leave another a write slot (with one slot none can be kept: first come)
        self.write_shares = WriteShares(writes, lambda: keys.tenants("write")) if writes > 1 else None
        interceptor = ServiceInterceptor(keys, self.metrics, self.answers, self.calls, self.write_shares,
                                         self.service.halting)
        own = max(max_workers, writes + 1)
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=own, thread_name_prefix="rpc"),
                                  interceptors=[interceptor],
                                  options=options, maximum_concurrent_rpcs=max_concurrent_rpcs)
        pb2_grpc.add_TrajSearchServicer_to_server(self.service, self.server)
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        ts.traces = self.trace_reads  # every read of this façade, the runtime's included, is bounded
        try:  # a server not made leaves the façade's trace store as it found it, whatever stopped it
            self.port = self._listen(address, tls)
            self.address = f"{address.rsplit(':', 1)[0]}:{self.port}"
            # the web pages, on a thread of this process, over the same façade and keys
            self.web = None if http_address is None else _web_server(ts, keys, http_address, tls, page_reads,
                                                                     public_url)
        except BaseException:
            self.server.stop(0)
            self._restore()
            raise
        self._stopped = threading.Event()
        self._stop_now = threading.Event()

    def _listen(self, address: str, tls: TLS | None) -> int:
        """Bind grpcio to ``address`` and return its port; an OSError naming the cause when it cannot."""
        refusal = bind_refusal(address)  # before grpcio, which listens on what it can of a name
        if refusal:
            raise OSError(f"cannot listen on {address}: {refusal}")
        try:
            port = (self.server.add_secure_port(address, tls.credentials()) if tls
                    else self.server.add_insecure_port(address))
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {address}: {exc}") from None
        if not port:
            raise OSError(f"cannot listen on {address}")
        return port

    def _restore(self) -> None:
        self.ts.traces = self._store

    def start(self) -> ServiceServer:
        self.server.start()
        if self.web is not None:
            self.web.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log_event(log, logging.INFO, "serving", address=self.address, uri=self.ts.location[0],
                  trace_slots=self.trace_reads.slots, grpc_connections=self.connection_cap,
                  **({"http": self.web.url} if self.web else {}))
        return self

    def stop(self, grace: float = 10.0, writes_grace: float = WRITES_GRACE_S) -> int:
        """Refuse new calls, let in-flight ones finish (up to ``grace`` s), then close the index.

        The calls still running then are cancelled, but a write among them is let finish the batch it is writing
        (up to ``writes_grace`` s more, or until :meth:`stop_now`): the index is closed after it, so the store is
        left with each batch whole, not with one half-written. Returns how many writes were abandoned so."""
        if self._stopped.is_set():
            return 0
        self._stopped.set()
        # the service is told when gRPC is about to cancel what still runs (the grace's end), not before: a stream
        # ending within the grace is its client's whole answer (test_graceful_stop_drains_in_flight_calls)
        cancelling = threading.Timer(max(0.0, grace - 0.1), self.service.stopping)
        cancelling.daemon = True
        if grace > 0.1:
            cancelling.start()
        else:  # (no grace: gRPC cancels at once, before a timer's thread could say so)
            self.service.stopping()
        log_event(log, logging.INFO, "draining", in_flight=self.metrics.in_flight, grace_s=grace,
                  writes_grace_s=writes_grace)
        self.health.enter_graceful_shutdown()
        # gRPC and the pages drain at once: the pages' drain awaited first, then gRPC's, made stop spend the grace
        # twice, and the Kubernetes default of --writes-grace (25 s minus the grace) ran past the pod's kill
        grpc_stopped = self.server.stop(grace)
        if self.web is not None:
            self.web.stop(grace)
        grpc_stopped.wait()
        self.calls.shutdown()
        cancelling.cancel()
        left = self.service.drain(writes_grace, self._stop_now)
        if left:
            log_event(log, logging.WARNING, "writes_abandoned", writes=left, writes_grace_s=writes_grace,
                      detail="the index is closed under them: the runs they were writing are removed by the "
                             "store's next open, and their callers must send them again")
        self._restore()
        if self.close_index:
            self.ts.close()
        log_event(log, logging.INFO, "stopped")
        return left

    def stop_now(self) -> None:
        """Stop without waiting any longer (a second signal): calls cancelled, writes in progress abandoned."""
        self._stop_now.set()
        self.server.stop(0)

    def wait(self) -> None:
        self.server.wait_for_termination()

    def __enter__(self) -> ServiceServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop(grace=2.0)


def serve_forever(server: ServiceServer, *, grace: float = 10.0, writes_grace: float | None = None) -> int:
    """Run until SIGTERM / SIGINT, then drain in-flight calls (a second signal stops at once); writes in progress
    are waited for ``writes_grace`` s more (None: :func:`writes_grace_for`). Returns how many writes were abandoned
    (their threads may still wait on the store)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():
            server.stop_now()
        stop.set()

    if writes_grace is None:
        writes_grace = writes_grace_for(grace)
        if not writes_grace and os.environ.get("KUBERNETES_SERVICE_HOST"):  # said at the start, not when it is late
            log_event(log, logging.WARNING, "no_writes_grace", grace_s=grace,
                      detail=f"in a Kubernetes pod --writes-grace is {KUBERNETES_STOP_S - CLOSE_S:g} s minus --grace: "
                             "a write still running when the grace ends is abandoned at once; give --grace less, "
                             "or --writes-grace with terminationGracePeriodSeconds")
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.start()
        while not stop.wait(0.5):
            pass
        return server.stop(grace, writes_grace)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
