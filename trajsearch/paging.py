"""Pages of one ranking of runs, continued by a page token: how an export (or any caller) reads more runs than one
search returns.

An export paged by sending every run it had as an exclusion: at 10,000 runs each page's request carried 10,000 ids
and took seconds to filter. A page token instead says where the previous page ended (its offset) and which question
it answered (a digest of the tenant, text, filters and mode). It carries no tenant and no filter: the caller's
request and credentials still say them, and a token given with another question is refused, so a token can never
widen what its caller may read; a made-up offset reaches only what a deeper search would.

The ranking itself is kept a while (:class:`Rankings`), grown by doubling, so reading ``n`` runs page by page ranks
about ``2n`` runs in all, not ``n`` runs per page. A token whose ranking was dropped (kept too long, a server
restarted, another replica) is answered by ranking again to its depth: slower, the same runs.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import threading
from typing import Any, Callable, NamedTuple

from cachetools import TTLCache

from .bounds import MAX_EXPORT_RUNS
from .results import Hit

#: How long a ranking is kept after its last page, and how many are kept (each holds at most MAX_EXPORT_RUNS hits).
KEPT_S = 600.0
KEPT = 8
_PREFIX = "p1."


class Page(NamedTuple):
    """One page of runs, best first, and the token of the next page ("" when there is none)."""

    hits: list[Hit]
    next_page_token: str


def question_digest(**question: Any) -> str:
    """A digest of everything that decides a ranking (the tenant, text, filters, mode): what a page token is bound to."""
    canonical = json.dumps(question, sort_keys=True, default=list, ensure_ascii=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def page_token(offset: int, digest: str) -> str:
    """The token of the page starting at ``offset`` of the ranking ``digest`` names (opaque to callers)."""
    raw = json.dumps({"o": offset, "q": digest}, separators=(",", ":")).encode("ascii")
    return _PREFIX + base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def token_offset(token: str, digest: str, k: int) -> int:
    """The offset ``token`` continues from, for a page of ``k`` runs of the ranking ``digest`` names.

    Raises ValueError naming ``page_token``: a token not made here, one of another question (text, filters, mode or
    tenant differ), or one past the most runs paged (``MAX_EXPORT_RUNS``)."""
    try:
        if not token.startswith(_PREFIX):
            raise ValueError
        body = token[len(_PREFIX):]
        fields = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        offset, made_for = fields["o"], fields["q"]
    except (ValueError, TypeError, KeyError, binascii.Error, UnicodeDecodeError):
        raise ValueError("page_token: not a page token (pass back the next_page_token of the previous page "
                         "unchanged)") from None
    if made_for != digest:
        raise ValueError("page_token: it continues another search (its text, filters or mode differ): send the "
                         "page token with the same question that returned it")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 1 <= offset <= MAX_EXPORT_RUNS - k:
        raise ValueError(f"page_token: at most {MAX_EXPORT_RUNS} runs are read page by page")
    return offset


class _Ranking:
    """One question's runs, ranked to a depth that doubles as pages ask for more."""

    def __init__(self, rank: Callable[[int], list[Hit]]) -> None:
        self._rank = rank
        self._lock = threading.Lock()
        self.hits: list[Hit] = []
        self.depth = 0

    def page(self, offset: int, k: int) -> tuple[list[Hit], bool]:
        """The runs ``offset`` to ``offset + k``, and whether any may come after them."""
        with self._lock:
            need = offset + k
            if need > self.depth and len(self.hits) == self.depth:  # deeper, and the last ranking came back full
                self.depth = min(MAX_EXPORT_RUNS, max(need, 2 * self.depth))
                self.hits = self._rank(self.depth)
            more = len(self.hits) > need or len(self.hits) == self.depth < MAX_EXPORT_RUNS  # full: it may grow
            return self.hits[offset:need], more


class Rankings:
    """The rankings being paged through, kept ``KEPT_S`` after their last page (the façade holds one)."""

    def __init__(self, kept: int = KEPT, seconds: float = KEPT_S) -> None:
        self._kept: TTLCache = TTLCache(maxsize=kept, ttl=seconds)
        self._lock = threading.Lock()

    def page(self, digest: str, token: str, k: int, rank: Callable[[int], list[Hit]]) -> Page:
        """The page ``token`` names ("" = the first) of ``k`` runs of the ranking ``digest`` names; ``rank(depth)``
        ranks its first ``depth`` runs. A first page is ranked alone (a plain search's cost) and not kept."""
        if not token:
            hits = rank(k)
            return Page(hits, page_token(k, digest) if len(hits) == k and k < MAX_EXPORT_RUNS else "")
        offset = token_offset(token, digest, k)
        with self._lock:
            ranking = self._kept.get(digest) or _Ranking(rank)
            self._kept[digest] = ranking  # (re)set: kept KEPT_S after its last page
        hits, more = ranking.page(offset, k)
        end = offset + len(hits)
        return Page(hits, page_token(end, digest) if more and len(hits) == k and end < MAX_EXPORT_RUNS else "")
