"""A per-server budget of answers held until their callers read them.

Answers may be as large as the largest trace (``MAX_RESPONSE_BYTES``, 256 MiB) so that ``GetTrace`` of a large
run works, while requests stay bounded by ``--max-message-mb``. gRPC keeps an answer's serialised bytes until the
caller has read them, and a caller that never reads (an HTTP/2 window of 0) keeps them for as long as its
connection lives: eleven unread 120 MB traces took a server from 0.28 to 4.16 GB. Every answer over
:data:`UNCOUNTED` bytes therefore takes its size from this budget before it is returned, and gives it back when its
call ends (``context.add_callback``); one key may hold at most ``per_key`` of it, so one key's unread answers
cannot shut the others out. Beyond either bound the call is refused ``RESOURCE_EXHAUSTED`` (to be retried later).

Answers up to ``--max-message-mb`` (32 MiB) were not counted, on the grounds that the worker threads and
``maximum_concurrent_rpcs`` bound them: they do not, since grpcio frees both once the handler has returned its
answer, whether or not the caller reads it. One read key's 60 unread ``GetTrace`` calls of a 5.5 MB trace took a
server from 0.65 to 1.46 GB, and nothing refused the 61st (probe 54, SV5).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from typing import Callable

import grpc

from .interceptor import Abort
from .validate import MAX_RESPONSE_BYTES

#: The default budget: two answers of the largest size at once, one per key.
DEFAULT_BUDGET = 2 * MAX_RESPONSE_BYTES
#: Answers of at most this many bytes are not counted: HTTP/2's initial flow-control window (RFC 9113, 6.9.2: 65,535
#: bytes), what a connection is sent before its client need read anything. They are bounded by the connections
#: (``MAX_GRPC_CONNECTIONS``: a quarter of the file descriptors, 64-4096) times the calls each may have open
#: (``GRPC_MAX_STREAMS``, 100) times 64 KiB, not by this budget: 6.25 MiB a connection, 1.6 GB for the 256 connections
#: of a process allowed 1,024 descriptors. grpcio set no cap on a connection's calls: 4 connections held 5,548
#: unread answers, RSS 215 -> 973 MB (probe 54, RSV5); with the cap, 399 (RSS 215 -> 272 MB).
UNCOUNTED = 2**16


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f}"


class AnswerBudget:
    """Bytes of answers over ``threshold`` that calls may hold at once: ``total`` in all, ``per_key`` per key."""

    def __init__(self, total: int = DEFAULT_BUDGET, *, threshold: int = UNCOUNTED, per_key: int | None = None) -> None:
        if total <= 0:
            raise ValueError("the answer budget must be positive")
        self.total = total
        self.per_key = per_key or max(1, total // 2)
        self.threshold = threshold
        self.held = 0
        self._by_key: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def take(self, key_id: str, size: int) -> Callable[[], None] | None:
        """Hold ``size`` bytes for a call of ``key_id``; the function that gives them back (call it once), or
        None when the answer is small enough not to count. Raises :class:`Abort` (``RESOURCE_EXHAUSTED``) when
        the budget or the key's share cannot hold it."""
        if size <= self.threshold:
            return None
        bound = min(self.total, self.per_key)
        if size > bound:
            raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, (
                f"this answer is {_mib(size)} MiB, over the {_mib(bound)} MiB of large answers this server holds "
                "for one key at once (half its --answer-budget-mb): ask its operator to raise that"))
        with self._lock:
            mine = self._by_key[key_id]
            if mine + size > self.per_key:
                why = (f"this key's answers not yet read by their callers hold {_mib(mine)} MiB of the "
                       f"{_mib(self.per_key)} MiB one key may hold")
            elif self.held + size > self.total:  # how much other keys hold is not said: they may be other tenants'
                why = (f"this server's {_mib(self.total)} MiB budget for answers not yet read by their callers "
                       f"(--answer-budget-mb) cannot take it now, {_mib(mine)} MiB of it this key's")
            else:
                self._by_key[key_id] = mine + size
                self.held += size
                return self._release(key_id, size)
        raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED, (
            f"this answer is {_mib(size)} MiB and {why}: retry once those calls have ended (read their answers, "
            "or cancel them)"))

    def _release(self, key_id: str, size: int) -> Callable[[], None]:
        done = threading.Event()

        def release() -> None:
            with self._lock:
                if done.is_set():
                    return
                done.set()
                self.held -= size
                self._by_key[key_id] -= size
                if not self._by_key[key_id]:
                    del self._by_key[key_id]

        return release
