"""Run the web app on uvicorn in a thread of this process (beside the gRPC server, or alone for ``ui``).

The listening socket is bound in the constructor, so a port in use fails at once
(as an OSError naming the address) and port 0 picks a free one (``.address``).
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import uvicorn

from .views.common import MAX_QUERY_BYTES

log = logging.getLogger("trajsearch.web")

#: Most bytes of a request's head (its line, with the search form's query string, and headers) uvicorn buffers
#: before refusing it. h11's own bound is 16 KiB, checked whenever the head is still incomplete: over a network,
#: where the head arrives in ~1.4 KB segments, a search of 14,000 characters of a pasted log (17.5 KB as a URL)
#: was refused with uvicorn's bare "Invalid HTTP request received." (on loopback, read whole, it passed: the
#: bound seemed ~100 KB). Room for a query of the page's whole limit in any script (12 bytes a character
#: percent-encoded at worst) and the headers; a longer paste is cut to its head and tail by the page, and one
#: longer than this as a URL is stopped by the page's script with a word of why (uvicorn's answer is a bare 400).
MAX_REQUEST_HEAD = MAX_QUERY_BYTES + 64 * 1024


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


class WebServer:
    """``start()`` serves ``app`` on a daemon thread; ``stop()`` finishes in-flight requests and returns."""

    def __init__(self, app: Any, address: str = "127.0.0.1:8080", *, tls_cert: Path | None = None,
                 tls_key: Path | None = None) -> None:
        host, port = split_address(address)
        try:
            self.socket = _bind(host, port)
        except OSError as exc:
            raise OSError(f"cannot listen on {address}: {exc.strerror or exc}") from None
        bound = self.socket.getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        self.address = f"{shown}:{bound[1]}"
        self.scheme = "https" if tls_cert else "http"
        self.url = f"{self.scheme}://{self.address}"
        extra: dict[str, Any] = {}
        if tls_cert and tls_key:
            extra = {"ssl_certfile": str(tls_cert), "ssl_keyfile": str(tls_key),
                     "ssl_version": ssl.PROTOCOL_TLS_SERVER}
        # limit_concurrency: past it uvicorn answers 503 at once instead of queueing work for the façade,
        # which the gRPC workers share
        self.config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                                     timeout_graceful_shutdown=5, server_header=False, limit_concurrency=128,
                                     h11_max_incomplete_event_size=MAX_REQUEST_HEAD, **extra)
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
