"""Browser sessions and CSRF tokens for the web pages.

Sign-in takes an API key (the same keys as gRPC, :class:`~trajsearch.service.auth.KeyRing`);
the key's principal (tenant, role, pins, and the hash of the key itself, so that a key rotated in place in
the key file ends its sessions: ``KeyRing.holds``) is kept server-side and the browser gets only an
opaque random session id:

- ``ts_session_<port>``: 32 random bytes, HttpOnly, SameSite=Lax, Path=/, Secure when served over TLS.
  The server stores a SHA-256 of it (a memory dump does not hand out live sessions), with the
  principal, a CSRF token and an expiry. A new id at every sign-in (no fixation); sign-out and
  expiry drop it. Lax rather than Strict so that a link to a run pasted in chat opens signed in
  (a top-level GET, and every GET here only reads); cross-site POSTs never carry it.
- ``ts_csrf_<port>``: the sign-in form's token before there is a session (double-submit: the form's
  hidden field must equal this HttpOnly, SameSite=Strict cookie). Once signed in, forms carry
  the session's own token. Every POST also fails when ``Origin`` names another site.

The key itself is never stored, logged, or put in a cookie or URL.

Cookies are scoped to a host name, not to a port (RFC 6265 section 8.5): the browser sends them to
every port of the host. So each name carries the port of the ``Host`` the page was served as
(:func:`cookie_name`): a second instance on the same host (``serve --http`` beside ``trajsearch ui``)
reads and writes only its own cookies, and signing in to one no longer signs the other out. Any other
listener on the same host still *receives* these cookies when the browser visits it; the name cannot
stop that (only another host name or a path the listener cannot guess could), which is why the
README's Security section says what holds.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from ..service.auth import Principal

SESSION_COOKIE = "ts_session"
CSRF_COOKIE = "ts_csrf"
_HOST_PORT = re.compile(r"(?:\[[^\]]*\]|[^:\[\]]*):(\d{1,5})", re.ASCII)
SESSION_SECONDS = 12 * 3600
#: Live sessions per key: signing in past it signs out that key's least recently used session,
#: never another key's (the keys are the operator's, so all sessions together stay bounded too).
MAX_SESSIONS_PER_KEY = 200


def cookie_name(base: str, host: str) -> str:
    """``base`` for a page served as ``host`` (the Host header): ``ts_session_18643`` on port 18643, ``base``
    alone when the Host names no port (the scheme's default, e.g. behind a proxy on 443)."""
    match = _HOST_PORT.fullmatch(host.strip())
    return f"{base}_{match.group(1)}" if match else base


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)


def same_token(a: str | None, b: str | None) -> bool:
    """Constant-time comparison; a missing or empty token never matches."""
    if not a or not b:
        return False
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


@dataclass
class Session:
    principal: Principal
    csrf: str = field(default_factory=new_token)
    expires: float = 0.0


class SessionStore:
    """Session id -> :class:`Session`, in memory (a restart signs everyone out).

    Each key (tenant and key id) holds at most ``max_per_key`` sessions: a sign-in past that drops
    the least recently used session *of that key*, so no caller's sign-ins can push out anyone else's.
    """

    def __init__(self, *, seconds: float = SESSION_SECONDS, max_per_key: int = MAX_SESSIONS_PER_KEY) -> None:
        self.seconds = seconds
        self.max_per_key = max_per_key
        self._by_digest: dict[str, Session] = {}
        self._by_key: dict[tuple[str, str], OrderedDict[str, None]] = {}  # per key, least recently used first
        self._lock = threading.Lock()

    @staticmethod
    def _owner(session: Session) -> tuple[str, str]:
        return session.principal.tenant, session.principal.key_id

    def create(self, principal: Principal) -> tuple[str, Session]:
        """A fresh session id (for the cookie) and its session."""
        token = new_token()
        digest = _digest(token)
        session = Session(principal, expires=time.monotonic() + self.seconds)
        with self._lock:
            self._by_digest[digest] = session
            mine = self._by_key.setdefault(self._owner(session), OrderedDict())
            mine[digest] = None
            while len(mine) > self.max_per_key:
                oldest, _ = mine.popitem(last=False)
                self._by_digest.pop(oldest, None)
        return token, session

    def get(self, token: str | None) -> Session | None:
        if not token or len(token) > 128:
            return None
        digest = _digest(token)
        with self._lock:
            session = self._by_digest.get(digest)
            if session is None:
                return None
            if session.expires <= time.monotonic():
                self._forget(digest)
                return None
            self._by_key[self._owner(session)].move_to_end(digest)
            return session

    def drop(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._forget(_digest(token))

    def _forget(self, digest: str) -> None:
        session = self._by_digest.pop(digest, None)
        if session is None:
            return
        owner = self._owner(session)
        mine = self._by_key[owner]
        mine.pop(digest, None)
        if not mine:
            del self._by_key[owner]

    def __len__(self) -> int:
        return len(self._by_digest)


class OneTimeTokens:
    """Sign-in links for ``trajsearch ui``: each token signs in once, as the principal it was made for."""

    def __init__(self) -> None:
        self._by_digest: dict[str, Principal] = {}
        self._lock = threading.Lock()

    def issue(self, principal: Principal) -> str:
        token = new_token()
        with self._lock:
            self._by_digest[_digest(token)] = principal
        return token

    def redeem(self, token: str | None) -> Principal | None:
        digest = _link_digest(token)
        with self._lock:
            return self._by_digest.pop(digest, None) if digest else None

    def holds(self, token: str | None) -> bool:
        """Whether ``token`` would sign in, without using it up (a HEAD of its link)."""
        digest = _link_digest(token)
        with self._lock:
            return digest is not None and digest in self._by_digest


def _link_digest(token: str | None) -> str | None:
    """The digest a one-time token is held by; None for what no issued token can be (empty, or longer than any)."""
    return _digest(token) if token and len(token) <= 128 else None
