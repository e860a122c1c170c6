"""Web pages for engineers: search past runs, read a run, compare it with a successful one.

``create_app(ts, keys)`` builds the ASGI app (Starlette, Jinja2); :class:`WebServer` serves
it on a thread of the process that serves gRPC (``trajsearch serve --http``) or alone
(``trajsearch ui``).
"""

from __future__ import annotations

from .app import WebConfig, create_app, web_of
from .server import WebServer

__all__ = ["WebConfig", "WebServer", "create_app", "web_of"]
