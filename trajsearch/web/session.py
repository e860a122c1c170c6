"""Browser sessions and CSRF tokens for the web pages.

Sign-in takes an API key (the same keys as gRPC, :class:`~trajsearch.service.auth.KeyRing`);
the key's principal (tenant, role, pins) is kept server-side and the browser gets only an
opaque random session id:

- ``ts_session``: 32 random bytes, HttpOnly, SameSite=Lax, Path=/, Secure when served over TLS.
  The server stores a SHA-256 of it (a memory dump does not hand out live sessions), with the
  principal, a CSRF token and an expiry. A new id at every sign-in (no fixation); sign-out and
  expiry drop it. Lax rather than Strict so that a link to a run pasted in chat opens signed in
  (a top-level GET, and every GET here only reads); cross-site POSTs never carry it.
- ``ts_csrf``: the sign-in form's token before there is a session (double-submit: the form's
  hidden field must equal this HttpOnly, SameSite=Strict cookie). Once signed in, forms carry
  the session's own token. Every POST also fails when ``Origin`` names another site.

The key itself is never stored, logged, or put in a cookie or URL.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

from ..service.auth import Principal

SESSION_COOKIE = "ts_session"
CSRF_COOKIE = "ts_csrf"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 10_000


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
    """Session id -> :class:`Session`, in memory (a restart signs everyone out), least recently used evicted."""

    def __init__(self, *, seconds: float = SESSION_SECONDS, max_sessions: int = MAX_SESSIONS) -> None:
        self.seconds = seconds
        self.max_sessions = max_sessions
        self._by_digest: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def create(self, principal: Principal) -> tuple[str, Session]:
        """A fresh session id (for the cookie) and its session."""
        token = new_token()
        session = Session(principal, expires=time.monotonic() + self.seconds)
        with self._lock:
            self._by_digest[_digest(token)] = session
            while len(self._by_digest) > self.max_sessions:
                self._by_digest.popitem(last=False)
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
                del self._by_digest[digest]
                return None
            self._by_digest.move_to_end(digest)
            return session

    def drop(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._by_digest.pop(_digest(token), None)

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
        if not token or len(token) > 128:
            return None
        with self._lock:
            return self._by_digest.pop(_digest(token), None)
