"""The web pages for engineers: a Starlette app over the library façade, signed in by API key.

Pages (server-rendered with Jinja2, autoescaped; one small script of our own):

- ``/`` search: one box for a pasted error, log line, command, trajectory id, trace URI or
  free text (an id or trace URI means "runs like this one"), filters, the mode, one result
  per run with its matching step and neighbours, the query's terms marked;
- ``/runs/<id>`` a run from the trace store: failure summary, the steps as a timeline of
  ``<details>``, the matched step opened and marked (``#step-N``), similar runs;
  ``?format=json`` downloads the trace;
- ``/compare/<id>?with=<other>`` the run beside a successful similar one, aligned step by
  step on their actions, the first divergence marked;
- ``/trace?uri=<trace_uri>`` opens the run a trace URI names (if it is the key's);
- ``/signin`` (API key), ``/signout``; ``/signin/once/<token>`` for ``trajsearch ui``.

Security: the tenant is the key's (see :mod:`.session` for cookies and CSRF); a run of
another tenant, outside the key's pins, malformed or missing is one and the same 404; every
response carries a Content-Security-Policy allowing only this app's own script and style.
"""

from __future__ import annotations

import logging
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable
from urllib.parse import quote as urlquote, unquote_to_bytes, urlencode, urlsplit

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..backend import damaged_trace_advice
from ..model import outcome_shown
from ..search import TrajSearch
from ..service.auth import KeyRing, Principal
from ..service.observe import LOOPBACK_HOSTS, host_name, log_event, misdirected
from ..vocab import MODES, OUTCOMES
from . import views
from .views.common import MAX_QUERY_BYTES, MAX_QUERY_CHARS, SERVER_ANSWERED
from .session import (CSRF_COOKIE, SESSION_COOKIE, OneTimeTokens, Session, SessionStore, cookie_name, new_token,
                      same_token)

log = logging.getLogger("trajsearch.web")
STATIC = Path(__file__).parent / "static"

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),  # pasted errors travel in query strings: never to other sites
    (b"cross-origin-opener-policy", b"same-origin"),
]
NO_STORE = (b"cache-control", b"no-store")  # pages hold a tenant's runs: not for shared caches or disk
MAX_BODY = 64 * 1024  # only the sign-in and sign-out forms are ever posted


class BodyTooLarge(Exception):
    pass


class SignInRequired(Exception):
    """The page needs a session; the handler redirects to the sign-in page."""


def public_origin(url: str) -> str:
    """The origin (``scheme://host[:port]``, lower-case) of ``url``, the pages' address as a browser opens it
    through a reverse proxy (``serve --public-url``); ValueError naming the option for anything else.

    Only an origin: the pages' links and redirects are absolute paths, so they are served at the root of a host.
    """
    parts = urlsplit(url.strip())
    try:
        port = parts.port
    except ValueError:
        port = -1
    if (parts.scheme.lower() not in ("http", "https") or not parts.hostname or port == -1
            or parts.username is not None or parts.password is not None):
        raise ValueError(f"--public-url: expected the pages' address as a browser opens it, "
                         f"https://HOST[:PORT], got {url!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"--public-url: the pages are served at the root of their host (their links are absolute "
                         f"paths): give https://HOST[:PORT] without a path, got {url!r}")
    scheme = parts.scheme.lower()
    host = _ascii_host(parts.hostname, url)
    host = f"[{host}]" if ":" in host else host
    shown = port and port != {"http": 80, "https": 443}[scheme]  # as a browser's Origin header writes it
    return f"{scheme}://{host}{f':{port}' if shown else ''}"


def _ascii_host(host: str, url: str) -> str:
    """``host`` as browsers send it in Host and Origin: an internationalised name in its ASCII form (UTS #46, as
    browsers map it: ``Bücher.example`` -> ``xn--bcher-kva.example``); kept as typed, such a host matched no
    request, and the pages answered every one 421."""
    if host.isascii():
        return host
    import idna  # required by anyio, which Starlette requires

    try:
        return idna.encode(host, uts46=True).decode("ascii")
    except idna.IDNAError as exc:
        raise ValueError(f"--public-url: {host!r} is not a host name a browser can open ({exc}), "
                         f"got {url!r}") from None


@dataclass
class WebConfig:
    """``secure_cookies``: served over TLS (cookies get Secure). ``allowed_hosts``: Host header values
    (without port) this app answers; None answers any (behind a proxy that checks it). ``trace_reads``: the
    pages' trace-store reads in flight at once (``serve --page-reads``). ``trace_timeout``: seconds a page waits
    for a trace (``ui --trace-timeout``); None: the server's ``--trace-timeout`` under ``serve``, else
    :data:`~.views.search.PAGE_READ_TIMEOUT`.

    ``public_url``: the address browsers open the pages at, through a reverse proxy in front of this listener
    (``serve --public-url``). A proxy sends either the browser's Host (Caddy, Traefik) or the upstream's (nginx's
    default): the first was refused 421 by a loopback listener's rebinding guard, the second let no one sign in,
    as the browser's Origin named another host. Its host is answered as well as ``allowed_hosts``, its origin may
    post the forms, and an https one makes the cookies Secure (the browser speaks TLS to the proxy)."""

    secure_cookies: bool = False
    allowed_hosts: tuple[str, ...] | None = None
    public_url: str | None = None
    trace_reads: int = views.PAGE_READ_SLOTS
    trace_timeout: float | None = None
    #: the pages of ``trajsearch ui`` signed in with the key it made for its ``--tenant``: a tenant holding no runs
    #: is told to start it with another (a key of a keys file, or ``serve``'s, is the operator's to change)
    ui_tenant: bool = False
    title: str = "trajsearch"
    #: nav entries (label, path)
    nav: list[tuple[str, str]] = field(default_factory=lambda: [("Search", "/"), ("Failure modes", "/failures")])

    def __post_init__(self) -> None:
        if self.public_url is None:
            return
        self.public_url = public_origin(self.public_url)
        self.secure_cookies = self.secure_cookies or self.public_url.startswith("https://")
        if self.allowed_hosts is not None:  # first: the name a 421 tells the browser to use
            public_host = host_name(urlsplit(self.public_url).netloc)
            self.allowed_hosts = tuple(dict.fromkeys((public_host, *self.allowed_hosts)))


class Web:
    """State shared by every request: the façade, keys, sessions, caches and templates."""

    def __init__(self, ts: TrajSearch, keys: KeyRing, config: WebConfig, one_time: OneTimeTokens | None) -> None:
        self.ts = ts
        self.keys = keys
        self.config = config
        self.sessions = SessionStore()
        self.one_time = one_time or OneTimeTokens()
        self.facts = views.TraceFacts(ts, reads=config.trace_reads, timeout=config.trace_timeout)
        self.facets = views.Facets(ts)
        self.asset_version = _asset_version()
        self.env = Environment(loader=PackageLoader("trajsearch.web", "templates"), autoescape=True,
                               undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
        self.env.globals.update(run_link=views.run_link, compare_link=compare_link, outcomes=OUTCOMES,
                                modes=MODES, level_choices=views.LEVEL_CHOICES,
                                score_meanings=views.SCORE_MEANINGS, similar_ranking=views.SIMILAR_RANKING,
                                when=views.when, outcome_shown=outcome_shown,
                                max_query_chars=MAX_QUERY_CHARS, max_query_bytes=MAX_QUERY_BYTES)
        self.env.filters["num"] = lambda x, digits=3: "—" if x is None else f"{x:.{digits}f}"

    # -- sessions --------------------------------------------------------------------------------

    def session(self, request: Request) -> Session | None:
        """The request's session, while the key it signed in with is still one of the server's (see KeyRing)."""
        token = _cookie(request, SESSION_COOKIE)
        session = self.sessions.get(token)
        if session is not None and not self.keys.holds(session.principal):
            self.sessions.drop(token)
            return None
        return session

    def require(self, request: Request) -> Session:
        session = self.session(request)
        if session is None:
            raise SignInRequired()
        request.scope.setdefault("state", {})["tenant"] = session.principal.tenant
        return session

    def set_session_cookie(self, request: Request, response: Response, token: str) -> None:
        response.set_cookie(_cookie_name(request, SESSION_COOKIE), token, httponly=True, samesite="lax",
                            secure=self.config.secure_cookies, path="/")

    # -- rendering -------------------------------------------------------------------------------

    def render(self, request: Request, name: str, *, status: int = 200, session: Session | None = None,
               **context: Any) -> HTMLResponse:
        session = session if session is not None else self.session(request)
        html = self.env.get_template(name).render(
            request=request, session=session, principal=session.principal if session else None,
            csrf=session.csrf if session else "", nav=self.config.nav, path=request.url.path,
            asset_version=self.asset_version, title=self.config.title, **context,
        )
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, status: int, heading: str, message: str) -> HTMLResponse:
        return self.render(request, "error.html", status=status, heading=heading, message=message,
                           request_id=request.scope.get("state", {}).get("request_id", ""))


def compare_link(trajectory_id: str, other: str | None = None) -> str:
    link = "/compare/" + urlquote(trajectory_id, safe="")
    return link + ("?" + urlencode({"with": other}) if other else "")


def _cookie_name(request: Request, base: str) -> str:
    """This instance's name for a cookie: the port of the Host served, as cookies do not isolate ports."""
    return cookie_name(base, request.headers.get("host", ""))


def _cookie(request: Request, base: str) -> str | None:
    return request.cookies.get(_cookie_name(request, base))


def _asset_version() -> str:
    stamp = max((p.stat().st_mtime_ns for p in STATIC.iterdir()), default=0)
    return format(stamp % (1 << 40), "x")


#: Most characters of the address a sign-in returns to (``next``): room for any page's address and a search of a few
#: lines; a pasted log's search is returned to as its page (see :func:`on_sign_in_required`).
NEXT_MOST_CHARS = 4000


def _safe_next(value: str | None) -> str:
    """A local path to return to after sign-in; anything else (another host, ``//x``, ``/\\x``) is ``/``."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")) or len(value) > NEXT_MOST_CHARS:
        return "/"
    if any(ord(c) < 32 for c in value):
        return "/"
    parts = urlsplit(value)
    return value if not parts.scheme and not parts.netloc else "/"


def _origin_ok(request: Request) -> bool:
    """A POST comes from these pages: ``Origin`` (when sent) names this host or the pages' ``--public-url`` (a proxy
    may send the upstream's Host), and the fetch is not cross-site."""
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return False
    origin = request.headers.get("origin")
    if origin is None:
        return True  # older clients: the CSRF token decides
    public = _web(request).config.public_url
    if public is not None and origin.strip().lower().rstrip("/") == public:
        return True
    host = request.headers.get("host", "")
    parts = urlsplit(origin)
    return bool(host) and parts.netloc == host and parts.scheme in ("http", "https")


# -- endpoints -----------------------------------------------------------------------------------


def _web(request: Request) -> Web:
    return request.app.state.web


def _head(request: Request, status: int, media_type: str = "text/html",
          headers: dict[str, str] | None = None) -> Response | None:
    """A HEAD's answer, once the request's sign-in and arguments are checked (and a run page's run looked up): the
    status a GET would get, with its headers but no body and none of its work (None for a GET). Starlette answers
    HEAD by running the GET's endpoint and dropping the body, so a signed-in HEAD of a search or failures URL (a
    link checker's, a chat app's preview, a monitor) ran the whole search or clustering for nothing sent (round 27,
    CLISVC4), and of a run or compare page read the traces and searched for similar runs (round 28). The page
    unrendered, its length is not known: none is said. A GET that the work itself then fails (an error page: a
    search's, a trace damaged) is answered 200 by HEAD: only what is checked before the work is said (a run page's
    trace is asked for, not read: :func:`views.trace_held`)."""
    if request.method != "HEAD":
        return None
    response = Response(status_code=status, media_type=media_type, headers=headers)
    del response.headers["content-length"]
    return response


def search_page(request: Request) -> Response:
    web = _web(request)
    session = web.require(request)
    principal = session.principal
    form = views.SearchForm.parse(request.query_params)
    status = 400 if form.errors else 200
    if (head := _head(request, status)) is not None:
        return head
    outcome = views.search(web.ts, principal, form, web.facts, ui_tenant=web.config.ui_tenant)
    facets = web.facets.get(principal)
    return web.render(request, "search.html", status=status, session=session, form=form,
                      result=outcome, facets=facets, models=web.facts.models(principal))


def run_page(request: Request) -> Response:
    web = _web(request)
    session = web.require(request)
    trajectory_id = request.path_params["trajectory_id"]
    as_json = request.query_params.get("format") == "json"
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in trajectory_id)[:80]
    attachment = {"content-disposition": f'attachment; filename="{name}.json"'}
    if request.method == "HEAD":  # the run and its trace looked up (404 as the GET's), the trace neither read nor shown
        run = views.visible_run(web.ts, session.principal, trajectory_id)
        views.trace_held(web.ts, session.principal, run, web.facts.reads)
        return _head(request, 200, "application/json", attachment) if as_json else _head(request, 200)
    if as_json:
        run = views.visible_run(web.ts, session.principal, trajectory_id)
        trajectory = views.load_trace(web.ts, session.principal, run, web.facts.reads)
        return JSONResponse(trajectory.model_dump(mode="json"), headers=attachment)
    view = views.run_view(web.ts, session.principal, trajectory_id, q=request.query_params.get("q", ""),
                          match=request.query_params.get("match"), facts=web.facts)
    return web.render(request, "run.html", session=session, view=view)


def trace_page(request: Request) -> Response:
    web = _web(request)
    session = web.require(request)
    trajectory_id = views.run_for_trace_uri(web.ts, session.principal, request.query_params.get("uri", ""),
                                            web.facts.reads)
    views.visible_run(web.ts, session.principal, trajectory_id)  # indexed for this key, else the same 404
    return RedirectResponse(views.run_link(trajectory_id), status_code=303)


def compare_page(request: Request) -> Response:
    web = _web(request)
    session = web.require(request)
    other = request.query_params.get("with") or None
    if request.method == "HEAD":  # both runs and traces looked up (404 as the GET's), none read, no similar run sought
        for trajectory_id in (request.path_params["trajectory_id"], other):
            if trajectory_id is not None:
                run = views.visible_run(web.ts, session.principal, trajectory_id)
                views.trace_held(web.ts, session.principal, run, web.facts.reads)
        return _head(request, 200)
    view = views.compare_view(web.ts, session.principal, request.path_params["trajectory_id"], other,
                              web.facts.reads)
    return web.render(request, "compare.html", session=session, view=view)


def failures_page(request: Request) -> Response:
    web = _web(request)
    session = web.require(request)
    form = views.FailuresForm.parse(dict(request.query_params))
    status = 400 if form.errors else 200
    if (head := _head(request, status)) is not None:
        return head
    report = views.failures_view(web.ts, session.principal, form)
    no_runs = (views.no_runs_said(web.ts, session.principal, ui_tenant=web.config.ui_tenant)
               if not report.total and not form.errors else "")
    return web.render(request, "failures.html", status=status, session=session, form=form,
                      report=report, periods=views.PERIODS, no_runs=no_runs)


async def signin(request: Request) -> Response:
    """The sign-in form (GET) and its submission (POST) on one route: a method neither takes is answered 405 naming
    both (``Allow``), where two routes of one path named only the first one's (Starlette's router)."""
    if request.method == "POST":
        return await signin_submit(request)
    return await run_in_threadpool(signin_page, request)


def signin_page(request: Request) -> Response:
    web = _web(request)
    target = _safe_next(request.query_params.get("next"))
    if web.session(request) is not None:
        return RedirectResponse(target, status_code=303)
    return _signin_form(request, target)


def _signin_form(request: Request, target: str, *, status: int = 200, message: str = "") -> Response:
    web = _web(request)
    token = _cookie(request, CSRF_COOKIE) or ""
    if not (20 <= len(token) <= 64) or not token.replace("-", "").replace("_", "").isalnum():
        token = new_token()
    response = web.render(request, "signin.html", status=status, session=None, signin_csrf=token, next=target,
                          message=message)
    response.set_cookie(_cookie_name(request, CSRF_COOKIE), token, httponly=True, samesite="strict",
                        secure=web.config.secure_cookies, path="/signin")
    return response


async def signin_submit(request: Request) -> Response:
    web = _web(request)
    form = await request.form(max_files=0, max_fields=10, max_part_size=16384)
    target = _safe_next(str(form.get("next") or ""))
    if not _origin_ok(request) or not same_token(str(form.get("csrf") or ""), _cookie(request, CSRF_COOKIE)):
        log_event(log, logging.WARNING, "signin_refused", reason="csrf")
        return _signin_form(request, target, status=403,
                            message="This form has expired or did not come from this page: sign in again.")
    principal = web.keys.authenticate(str(form.get("key") or "").strip())
    if principal is None:
        log_event(log, logging.WARNING, "signin_refused", reason="unknown key")
        return _signin_form(request, target, status=401, message="That key was not accepted.")
    return _signed_in(request, principal, target)


def _signed_in(request: Request, principal: Principal, target: str) -> Response:
    web = _web(request)
    web.sessions.drop(_cookie(request, SESSION_COOKIE))  # a fresh id at every sign-in
    token, _ = web.sessions.create(principal)
    log_event(log, logging.INFO, "signin", tenant=principal.tenant, key_id=principal.key_id)
    response = RedirectResponse(target, status_code=303)
    web.set_session_cookie(request, response, token)
    response.delete_cookie(_cookie_name(request, CSRF_COOKIE), path="/signin")
    return response


def signin_once(request: Request) -> Response:
    web = _web(request)
    if request.method == "HEAD":  # a link preview's or checker's HEAD must not use up the one sign-in it gives
        kept = web.one_time.holds(request.path_params["token"])
        return _head(request, 303, headers={"location": "/"}) if kept else _head(request, 403)
    principal = web.one_time.redeem(request.path_params["token"])
    if principal is None:
        return _signin_form(request, "/", status=403,
                            message="That sign-in link was already used or is not valid: sign in with the key.")
    return _signed_in(request, principal, "/")


async def signout(request: Request) -> Response:
    web = _web(request)
    form = await request.form(max_files=0, max_fields=10, max_part_size=16384)
    session = web.session(request)
    if session is not None:
        if not _origin_ok(request) or not same_token(str(form.get("csrf") or ""), session.csrf):
            return web.error(request, 403, "Not signed out", "This form has expired: reload the page and try again.")
        web.sessions.drop(_cookie(request, SESSION_COOKIE))
        log_event(log, logging.INFO, "signout", tenant=session.principal.tenant, key_id=session.principal.key_id)
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(_cookie_name(request, SESSION_COOKIE), path="/")
    return response


def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def favicon(request: Request) -> Response:
    return RedirectResponse(f"/static/favicon.svg?v={_web(request).asset_version}", status_code=301)


# -- errors --------------------------------------------------------------------------------------


async def on_sign_in_required(request: Request, exc: Exception) -> Response:
    """To the sign-in, which returns to this address; a page's address without its query where the whole is longer
    than the sign-in keeps: a search of a pasted log (up to 61 KB), percent-encoded again into ``/signin?next=``,
    came to ~1.7 times that, over the server's head bound, and an expired session's next search was answered 431."""
    path = request.url.path
    wanted = (path + (f"?{request.url.query}" if request.url.query else ""), path)
    target = next((address for address in wanted if len(address) <= NEXT_MOST_CHARS), None)
    return RedirectResponse("/signin" + (f"?{urlencode({'next': target})}" if target else ""), status_code=303)


async def on_not_found(request: Request, exc: Exception) -> Response:
    return _web(request).error(request, 404, "Not found", views.NOT_FOUND_TEXT)


async def on_unavailable(request: Request, exc: Exception) -> Response:
    log_event(log, logging.WARNING, "trace_unavailable", request_id=request.scope.get("state", {}).get("request_id"),
              detail=str(exc)[:300])
    return _web(request).error(request, 503, "The trace store did not answer",
                               "The run is indexed but its trace could not be read in time: try again shortly.")


async def on_damaged(request: Request, exc: Exception) -> Response:
    log_event(log, logging.ERROR, "trace_damaged", request_id=request.scope.get("state", {}).get("request_id"),
              detail=str(exc)[:300])
    return _web(request).error(request, 502, f"The trace of {_which_run(exc)} is damaged",
                               "The run is indexed but its stored trace cannot be read: "
                               + damaged_trace_advice(getattr(exc, "trajectory_id", None)) + ".")


async def on_missing(request: Request, exc: Exception) -> Response:
    log_event(log, logging.WARNING, "trace_missing", request_id=request.scope.get("state", {}).get("request_id"),
              trajectory_id=str(exc)[:200])
    return _web(request).error(request, 404, f"The trace of {_which_run(exc)} is missing",
                               "The run is indexed, but the trace store has no trace for it: it was deleted, or "
                               "these pages read another trace store than the run was ingested into (--traces). "
                               "Re-ingest the run, or serve the pages with the --traces it was ingested with.")


def _which_run(exc: Exception) -> str:
    """The run whose trace could not be read, as a page heading names it: the compare page reads two, and "the
    trace of this run is missing" on ``/compare/A?with=B`` sent the reader to re-ingest A, whose trace was fine."""
    trajectory_id = exc.trajectory_id if isinstance(exc, views.TraceDamaged) else str(exc)
    return f"run {trajectory_id}" if trajectory_id else "this run"


async def on_http(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return _web(request).error(request, 404, "Not found", "There is no page at this address.")
    page = _web(request).error(request, exc.status_code, "Request refused", str(exc.detail or ""))
    page.headers.update(exc.headers or {})  # a 405's Allow, which RFC 9110 (15.5.6) says it MUST carry
    return page


async def on_value_error(request: Request, exc: Exception) -> Response:
    return _web(request).error(request, 400, "Cannot search that", str(exc)[:300])


async def on_too_large(request: Request, exc: Exception) -> Response:
    return PlainTextResponse("request body too large", status_code=413)


async def on_client_gone(request: Request, exc: Exception) -> Response:
    """The client left before its request's body had arrived (a tab closed mid-sign-in, a network dropped, a body too
    slow: the server's 408): nothing to answer and no fault of the server's, so the request's one log line says 499
    (nginx's "client closed request"). Left to :func:`on_error` it was two tracebacks at ERROR, this app's and
    uvicorn's (the error handler re-raises), for each one (probe 53, SV4). A body too slow says the 408 the server
    sent in its place (one line, not 499 beside the server's "refused 408": review RSV4)."""
    return Response(status_code=request.scope.get("state", {}).get(SERVER_ANSWERED, 499))


async def on_error(request: Request, exc: Exception) -> Response:
    request_id = request.scope.get("state", {}).get("request_id", "")
    log.exception("web request failed", extra={"request_id": request_id})
    return _web(request).error(request, 500, "Something went wrong",
                               f"The server could not answer this page (request id {request_id}).")


# -- per-request headers, host check and log line ------------------------------------------------


class Guard:
    """Pure ASGI: a request id, the Host check, security headers on every response, one log line."""

    def __init__(self, app: ASGIApp, config: WebConfig) -> None:
        self.app = app
        self.allowed = None if config.allowed_hosts is None else {h.lower() for h in config.allowed_hosts}
        self.own = (config.allowed_hosts or LOOPBACK_HOSTS)[0]
        self.public = urlsplit(config.public_url) if config.public_url else None  # where a refusal sends the browser

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state["request_id"] = secrets.token_hex(8)
        started = time.perf_counter()
        status = 0
        refusal = self._refusal(scope)
        received = 0

        async def bounded_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > MAX_BODY:
                raise BodyTooLarge()
            return message

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", []))
                headers.extend(HEADERS)
                if not scope["path"].startswith("/static/"):
                    headers.append(NO_STORE)
                message = dict(message, headers=headers)
            await send(message)

        try:
            if refusal is not None:  # (logged as any request: a refused client, a misdirected link, are the operator's)
                status = refusal[0]
                await _refuse(*refusal, scope, receive, send)
            else:
                await self.app(scope, bounded_receive, send_with_headers)
        finally:  # (the status the client got: not the app's, when the server answered in its place or none)
            log_event(log, logging.INFO, "http", request_id=state["request_id"], method=scope["method"],
                      path=_loggable(scope["path"]), status=state.get(SERVER_ANSWERED, status),
                      tenant=state.get("tenant", ""), ms=round((time.perf_counter() - started) * 1000, 1))

    def _refusal(self, scope: Scope) -> tuple[int, str] | None:
        """The status and text a request is refused with before the app sees it (a Host not the pages', a body too
        large, a query that is not UTF-8), or None."""
        if self.allowed is not None and _host(scope) not in self.allowed:
            if self.public is not None:
                return 421, misdirected(self.public.netloc, self.public.scheme, None)
            port = (scope.get("server") or (None, None))[1]  # the listener's, as it took the request
            return 421, misdirected(self.own, scope.get("scheme", "http"), port)
        declared = _header(scope, b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
            return 413, "request body too large"
        garbled = _not_utf8(scope.get("query_string", b""))
        if garbled is not None:  # (decoded as is, its text was searched as replacement characters)
            return 400, (f"The address's parameter {garbled!r} is not UTF-8 text once percent-decoded (as a browser "
                         "sends a form): encode it as UTF-8.")
        return None


async def _refuse(status: int, text: str, scope: Scope, receive: Receive, send: Send) -> None:
    """Answer ``status`` with ``text`` before the app sees the request, with the pages' security headers."""
    response = PlainTextResponse(text, status_code=status)
    response.raw_headers.extend(HEADERS)
    await response(scope, receive, send)


def _not_utf8(query: bytes) -> str | None:
    """The name of the first parameter of ``query`` (a raw query string) whose name or value is not UTF-8 once
    percent-decoded, or None: Starlette decodes such bytes as U+FFFD, silently."""
    for pair in query.split(b"&"):
        name, _, value = pair.partition(b"=")
        try:
            for part in (name, value):
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            return unquote_to_bytes(name).decode("utf-8", "replace")
    return None


def _loggable(path: str) -> str:
    """The path for the log line: a one-time sign-in token is a credential, so it is left out."""
    if path.startswith("/signin/once/"):
        return "/signin/once/…"
    return path[:200]


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return value.decode("latin-1")
    return None


def _host(scope: Scope) -> str:
    """The Host header's name without its port (:func:`~trajsearch.service.observe.host_name`)."""
    return host_name(_header(scope, b"host") or "")


def create_app(ts: TrajSearch, keys: KeyRing, *, config: WebConfig | None = None,
               one_time: OneTimeTokens | None = None) -> ASGIApp:
    """The ASGI app; ``app.state.web`` (via :func:`web_of`) holds the sessions and one-time tokens."""
    config = config or WebConfig()
    web = Web(ts, keys, config, one_time)
    routes = [
        Route("/", search_page, methods=["GET"]),
        Route("/runs/{trajectory_id:path}", run_page, methods=["GET"]),
        Route("/trace", trace_page, methods=["GET"]),
        Route("/compare/{trajectory_id:path}", compare_page, methods=["GET"]),
        Route("/failures", failures_page, methods=["GET"]),
        Route("/signin", signin, methods=["GET", "POST"]),
        Route("/signin/once/{token}", signin_once, methods=["GET"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    handlers: dict[Any, Any] = {
        SignInRequired: on_sign_in_required,
        views.NotFound: on_not_found,
        views.TraceUnavailable: on_unavailable,
        views.TraceDamaged: on_damaged,
        views.TraceMissing: on_missing,
        HTTPException: on_http,
        ValueError: on_value_error,
        BodyTooLarge: on_too_large,
        ClientDisconnect: on_client_gone,
        Exception: on_error,
    }
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.web = web
    guarded = Guard(app, config)
    guarded.web = web  # type: ignore[attr-defined]
    return guarded


def web_of(app: Any) -> Web:
    return app.web


def loopback_hosts(extra: Iterable[str] = ()) -> tuple[str, ...]:
    return (*LOOPBACK_HOSTS, *extra)
