"""``whoami`` and ``health``: questions about a server itself, so they need ``--server``."""

from __future__ import annotations

from .connect import connect
from .options import Ca, Server
from .output import err, fail, print_json


def whoami(server: Server = None, ca: Ca = None) -> None:
    """The tenant and role of $TRAJSEARCH_API_KEY on the server."""
    with connect(server or _need_server(), ca, None, None, None) as api:
        print_json(api.api.whoami())


def health(server: Server = None, ca: Ca = None) -> None:
    """The server's gRPC health status (no API key needed) and, with $TRAJSEARCH_API_KEY, its per-method counters."""
    from ..service.auth import API_KEY_ENV
    from ..service.client import Unauthenticated

    with connect(server or _need_server(), ca, None, None, None, require_key=False) as api:
        if not api.api.api_key:  # a liveness probe holds no key: the counters are its tenant's, not shown
            print_json({"status": api.api.health()})
            err.print(f"note: set ${API_KEY_ENV} for the server's per-method counters (those of the key's tenant)",
                      markup=False, highlight=False)
            return
        status = api.api.health()
        try:
            print_json({"status": status, "metrics": api.api.metrics()})
        except Unauthenticated as exc:  # a stale key where the probe runs: the server is up all the same
            print_json({"status": status})
            err.print(f"note: the server refused ${API_KEY_ENV} for its counters: {exc}", markup=False, highlight=False)


def _need_server() -> str:
    fail("this command talks to a server: pass --server HOST:PORT or set $TRAJSEARCH_SERVER")
    return ""
