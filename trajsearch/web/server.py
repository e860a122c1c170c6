"""Run the web app on uvicorn in a thread of this process (beside the gRPC server, or alone for ``ui``).

The listening socket is bound in the constructor, so a port in use fails at once
(as an OSError naming the address) and port 0 picks a free one (``.address``).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import h11
import uvicorn
from uvicorn.config import create_ssl_context
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.utils import get_remote_addr

from ..service.descriptors import connection_budget
from .views.common import MAX_QUERY_BYTES, MAX_QUERY_CHARS, SERVER_ANSWERED

log = logging.getLogger("trajsearch.web")

#: Most bytes of a request's head (its line, with the search form's query string, and headers) read before it is
#: refused (431, saying why). h11's own bound is 16 KiB, checked whenever the head is still incomplete: over a
#: network, where the head arrives in ~1.4 KB segments, a search of 14,000 characters of a pasted log (17.5 KB as a
#: URL) was refused with uvicorn's bare "Invalid HTTP request received.". Room for the longest query the page's
#: script sends and 20 KiB of headers (a host's cookies are every port's: other apps' on localhost come along).
MAX_REQUEST_HEAD = MAX_QUERY_BYTES + 20 * 1024
#: Most seconds a connection may take to send a request's head, from its opening (or from the first byte of the next
#: request on a connection kept alive): uvicorn reads a head for as long as it comes, so a client sending it slowly,
#: or nothing, held its connection and its buffer for good (review RWEB2, D3). Ample for 80 KB over a slow link.
HEAD_TIMEOUT_S = 30.0
#: Most seconds a request's body (a posted form: at most ``MAX_BODY``, 64 KiB) may take to arrive once its head has:
#: the app awaits the body for as long as it comes, so a client declaring a length and trickling bytes (or none) held
#: its connection, a request's place among :data:`MAX_PAGES_AT_ONCE` and its buffer for good (probe 52, SV3).
BODY_TIMEOUT_S = 30.0
#: How long what a client still sends after its head was refused is read and dropped before the connection closes:
#: closed at once, the bytes still arriving are answered with a reset, which may take the refusal with it.
LINGER_S = 2.0
#: Most requests in progress at once; past it a request is answered 503 at once instead of queueing work for the
#: façade, which the gRPC workers share. Requests, not connections: uvicorn's ``limit_concurrency`` counts open
#: connections too, so 128 idle ones (a browser's spare and kept-alive sockets, a careless client's pool) made every
#: page answer a bare 503 "Service Unavailable" until they closed, up to :data:`HEAD_TIMEOUT_S` later (probe 52, SV3).
MAX_PAGES_AT_ONCE = 128


#: Most connections the pages keep open (a quarter of the process's descriptors, :mod:`trajsearch.service.descriptors`:
#: uvicorn bounds none, and ~1000 idle ones under systemd's default of 1024 left gRPC none, probe 52, SV3); one more
#: closes the connection quiet the longest (no request in progress: a browser's spare or kept-alive socket, a head whose
#: last bytes came longest ago), or itself when every one is answering a request. A head still arriving counts from its
#: last bytes: a search of a pasted log arriving in segments outlasts connections that went quiet before it (review of
#: probe 52, RSV3), while a head trickled a byte at a time cannot hold its place: counted as busy, 64 sockets of one
#: byte each had kept every visitor out (review R2-FSV). None: :func:`connection_budget` as a connection comes, so a
#: limit ``serve`` raises after this module is imported (``--public-url`` imports it first) counts (review RALL-B).
MAX_CONNECTIONS: int | None = None


def _most_connections() -> int:
    return MAX_CONNECTIONS if MAX_CONNECTIONS is not None else connection_budget()


class BoundedHead(H11Protocol):
    """uvicorn's h11 protocol with a request's head bounded in size and in time, and its body in time, each refusal
    said in words: a head over :data:`MAX_REQUEST_HEAD` is answered 431 (h11 said only "Invalid HTTP request
    received."), one not whole within :data:`HEAD_TIMEOUT_S` 408 (a connection that sent nothing is closed), a body
    not whole within :data:`BODY_TIMEOUT_S` of its head 408 (the app is told the client left). Always h11, so the
    bounds hold whether or not httptools (``uvicorn[standard]``) is installed.

    Over TLS it makes the handshake itself (``tls_context`` on uvicorn's config), from the accept: given the context,
    asyncio called the protocol only once the handshake was done, so a connection that never sent its hello (400 of
    them, under a limit of 256 files) was counted nowhere, held its descriptor for asyncio's 60 s, and left gRPC unable
    to accept any call (review of probe 52, RSV3). A handshaking connection counts toward :data:`MAX_CONNECTIONS`, idle,
    and has :data:`HEAD_TIMEOUT_S` to finish."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0  # read of the head awaited
        self._head_timer: asyncio.TimerHandle | None = None
        self._body_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self.idle_since: float | None = None  # since when it is quiet: no request, or a head's last bytes (None: busy)
        self._early: list[bytes] | None = None  # during a TLS handshake: what arrived before it was seen done

    def connection_made(self, transport: asyncio.BaseTransport) -> None:  # type: ignore[override]
        tls = getattr(self.config, "tls_context", None)
        if tls is not None and transport.get_extra_info("sslcontext") is None:
            self._shake_hands(transport, tls)  # (called again with the TLS transport once it is done)
            return
        super().connection_made(transport)  # type: ignore[arg-type]
        self.idle_since = self.loop.time()
        self._wait_for_head()
        if len(self.connections) > _most_connections():
            self._make_room()

    def _shake_hands(self, transport: asyncio.BaseTransport, tls: ssl.SSLContext) -> None:
        """Count the connection from its accept and make the TLS handshake, in :data:`HEAD_TIMEOUT_S` at most."""
        self.connections.add(self)
        self.transport = transport  # type: ignore[assignment]  (what closing it, or losing it, reads meanwhile)
        self.client = get_remote_addr(transport)  # type: ignore[arg-type]
        self.idle_since = self.loop.time()
        self._early = []
        if len(self.connections) > _most_connections():
            self._make_room()
        if transport.is_closing():
            return
        shaking = self.loop.create_task(self.loop.start_tls(  # type: ignore[arg-type]
            transport, self, tls, server_side=True, ssl_handshake_timeout=HEAD_TIMEOUT_S))
        shaking.add_done_callback(self._shaken)

    def _shaken(self, shaking: asyncio.Task) -> None:
        early, self._early = self._early or [], None
        if shaking.cancelled() or shaking.exception() is not None:  # (asyncio closed the connection)
            self.connections.discard(self)
            return
        self.connection_made(shaking.result())
        for data in early:  # (a request sent as soon as the handshake ended: asyncio passes it on before this)
            self.data_received(data)

    def _make_room(self) -> None:
        """Close the connection quiet the longest to keep :data:`MAX_CONNECTIONS` (this one, the newest, if no other
        is: every other is answering a request, and this one has none yet)."""
        idle = [c for c in self.connections if isinstance(c, BoundedHead) and c.idle_since is not None
                and not c.transport.is_closing()]
        oldest = min(idle, key=lambda c: c.idle_since or 0.0, default=self)
        log.info("web connection closed: %d open, the most kept (%s idle)", len(self.connections), oldest.client)
        oldest._stop_waiting()
        oldest.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.conn.their_state is h11.IDLE:
            self.idle_since = self.loop.time()

    def data_received(self, data: bytes) -> None:
        if self._early is not None:
            self._early.append(data)
            return
        if self._refused:  # read and dropped until the connection closes
            return
        if self.conn.their_state is h11.IDLE:  # (part of) a request's head
            self._head_bytes += len(data)
            if self._head_bytes > MAX_REQUEST_HEAD:
                self._refuse(431, "Request Header Fields Too Large", (
                    f"This request's head (its address, with a search's text, and its headers) is over "
                    f"{MAX_REQUEST_HEAD:,} bytes, more than this server reads. Search a shorter text: its last part, "
                    f"where an error most often is (up to {MAX_QUERY_CHARS:,} characters are searched whole)."))
                return
            self._wait_for_head()
            self.idle_since = self.loop.time()  # quiet from its last bytes (see MAX_CONNECTIONS)
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is whole: the request is the app's
            self._head_bytes = 0
            self.idle_since = None
            self._stop_waiting()
        if self.conn.their_state is h11.SEND_BODY:  # its body is still to come
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(BODY_TIMEOUT_S, self._body_too_slow)
        else:
            self._stop_waiting_for_body()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        self._stop_waiting_for_body()
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:  # what the app still answers is dropped (uvicorn
            # says nothing): its request's log line said the app's 200 for a page no one received (round 25's list)
            cycle.scope.setdefault("state", {}).setdefault(SERVER_ANSWERED, 499)
        super().connection_lost(exc)

    def _wait_for_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._head_too_slow)

    def _stop_waiting(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _stop_waiting_for_body(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _body_too_slow(self) -> None:
        self._body_timer = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing():
            return
        cycle = self.cycle
        answered = cycle is not None and cycle.response_started
        if cycle is not None:  # the app, awaiting the body, is told the client left; what it answers is not sent
            # (its request's one log line says the 408 sent, not 499 beside this refusal's own line: review RSV4)
            cycle.scope.setdefault("state", {})[SERVER_ANSWERED] = 408
            cycle.disconnected = True
            cycle.message_event.set()
        if answered:  # (it answered without the body: the answer is out, the rest of the body is not awaited)
            self.transport.close()
            return
        self._refuse(408, "Request Timeout", f"This request's body did not arrive within {BODY_TIMEOUT_S:g} seconds "
                                             "of its head. Send it again.", logged=cycle is None)

    def _head_too_slow(self) -> None:
        self._head_timer = None
        if self.conn.their_state is not h11.IDLE or self.transport.is_closing():
            return
        if not self._head_bytes:  # opened and never used (a browser's spare connection): nothing to answer
            self.transport.close()
            return
        self._refuse(408, "Request Timeout", f"This request's head did not arrive within {HEAD_TIMEOUT_S:g} "
                                             "seconds. Send it again.")

    def _refuse(self, status: int, reason: str, text: str, *, logged: bool = True) -> None:
        """Answer ``status`` with ``text`` and close, reading and dropping what still comes for :data:`LINGER_S`
        (h11 answers no request it has not read: the answer is written as is). ``logged=False``: the app logs the
        request's line itself."""
        body = text.encode()
        if logged:
            log.info("web request refused %d: %s (%s)", status, reason, self.client)
        self._refused = True
        self._stop_waiting()
        self._stop_waiting_for_body()
        self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: %d\r\n"
                             b"connection: close\r\n\r\n%s" % (status, reason.encode(), len(body), body))
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_S, self.transport.close)


class PagesAtOnce:
    """Pure ASGI: at most ``limit`` requests in progress; one more is answered 503 at once, saying why (what
    uvicorn's ``limit_concurrency`` did, without counting connections that wait for no answer)."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.in_progress = 0  # (the event loop's one thread counts: no lock)

    def __getattr__(self, name: str) -> Any:  # the app's own attributes (web_of(app).web) stay readable
        return getattr(self.app, name)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self.in_progress < self.limit:
            self.in_progress += 1
            try:
                await self.app(scope, receive, send)
            finally:
                self.in_progress -= 1
            return
        log.warning("web request refused 503: %d requests in progress (%s)", self.in_progress, scope.get("client"))
        body = (f"This server is answering {self.limit} requests at once, the most it takes: try again in a few "
                "seconds.").encode()
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"retry-after", b"5"),
                                (b"x-content-type-options", b"nosniff"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8080`` for IPv6) -> (host, port); ValueError naming the address."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"expected host:port, got {address!r}")
    host = host.strip("[]") or "127.0.0.1"
    return host, int(port)


def _bind(host: str, port: int) -> socket.socket:
    try:
        family = socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart must not wait out TIME_WAIT
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def listen(address: str) -> socket.socket:
    """A socket listening on ``host:port`` (``:0``: a free port), bound before a server starts so that a port in use
    fails at once, as an OSError naming the address."""
    host, port = split_address(address)
    try:
        return _bind(host, port)
    except OSError as exc:
        raise OSError(f"cannot listen on {address}: {exc.strerror or exc}") from None


class WebServer:
    """``start()`` serves ``app`` on a daemon thread; ``stop()`` finishes in-flight requests and returns.

    ``tls_cert``/``tls_key``: HTTPS; with ``tls_client_ca`` too, only clients presenting a certificate that CA signed
    finish the handshake (mutual TLS)."""

    def __init__(self, app: Any, address: str = "127.0.0.1:8080", *, tls_cert: Path | None = None,
                 tls_key: Path | None = None, tls_client_ca: Path | None = None) -> None:
        self.socket = listen(address)
        bound = self.socket.getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        self.address = f"{shown}:{bound[1]}"
        self.scheme = "https" if tls_cert else "http"
        self.url = f"{self.scheme}://{self.address}"
        tls = None
        if tls_cert and tls_key:  # the protocol makes the handshake (see BoundedHead), with uvicorn's context
            # with a client CA (serve --tls-client-ca: mutual TLS) the pages ask for a certificate of it, as gRPC does:
            # without, any machine reaching --http got the sign-in page and could try keys (probe 53, SV4)
            tls = create_ssl_context(str(tls_cert), str(tls_key), None, ssl.PROTOCOL_TLS_SERVER,
                                     ssl.CERT_REQUIRED if tls_client_ca else ssl.CERT_NONE,
                                     str(tls_client_ca) if tls_client_ca else None, None)
        # no limit_concurrency: uvicorn's counts idle connections as requests (see MAX_PAGES_AT_ONCE)
        self.config = uvicorn.Config(PagesAtOnce(app, MAX_PAGES_AT_ONCE), log_config=None, access_log=False,
                                     lifespan="off", timeout_graceful_shutdown=5, server_header=False,
                                     http=BoundedHead, h11_max_incomplete_event_size=MAX_REQUEST_HEAD)
        self.config.tls_context = tls  # type: ignore[attr-defined]
        self.server = uvicorn.Server(self.config)
        self.thread: threading.Thread | None = None

    def start(self) -> WebServer:
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.socket]},
                                       name="web", daemon=True)
        self.thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout)
        self.socket.close()
