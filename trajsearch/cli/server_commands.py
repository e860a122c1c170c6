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
        said = {"status": api.api.health()}
        if not api.api.api_key:  # a liveness probe holds no key: the counters are its tenant's, not shown
            note = f"set ${API_KEY_ENV} for the server's per-method counters (those of the key's tenant)"
        else:
            try:
                said["metrics"], note = api.api.metrics(), ""
            except Unauthenticated as exc:  # a stale key where the probe runs: the server is up all the same
                note = f"the server refused ${API_KEY_ENV} for its counters: {exc}"
        print_json(said)
        if note:
            err.print(f"note: {note}", markup=False, highlight=False)


def _need_server() -> str:
    fail("this command talks to a server: pass --server HOST:PORT or set $TRAJSEARCH_SERVER")
    return ""
