"""``whoami`` and ``health``: questions about a server itself, so they need ``--server``."""

from __future__ import annotations

from .connect import connect
from .options import Ca, Server
from .output import fail, print_json


def whoami(server: Server = None, ca: Ca = None) -> None:
    """The tenant and role of $TRAJSEARCH_API_KEY on the server."""
    with connect(server or _need_server(), ca, None, None, None) as api:
        print_json(api.api.whoami())


def health(server: Server = None, ca: Ca = None) -> None:
    """The server's gRPC health status and its per-method counters."""
    with connect(server or _need_server(), ca, None, None, None) as api:
        print_json({"status": api.api.health(), "metrics": api.api.metrics()})


def _need_server() -> str:
    fail("this command talks to a server: pass --server HOST:PORT or set $TRAJSEARCH_SERVER")
    return ""
