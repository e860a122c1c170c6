"""Trace-store reads on their own bounded threads, so a slow object store cannot stall the service.

A sync gRPC server has one pool of threads for every call. An object store
that accepts connections and never answers used to hold all of them (each
``GetTrace`` waiting out botocore's retries), and every tenant's ``Search``
and ``WhoAmI`` timed out behind them. :class:`TraceReads` wraps the server's
trace store so that each read

- takes one of ``slots`` permits without waiting: when all are taken (the
  store is slow) the read fails at once with :class:`TraceStoreBusy`, so at
  most ``slots`` calls ever wait on the store, and the others keep their threads;
- runs on a daemon thread of its own, holding its permit until the store
  answers or botocore gives up (its own connect/read timeouts and bounded
  retries), not merely until its caller stopped waiting;
- is waited for at most ``timeout`` seconds, or what is left of the call's
  deadline (:data:`DEADLINE`, set per call by the interceptor), then fails
  with :class:`TraceStoreTimeout`.

Both are :class:`TraceStoreError`, which the service answers with
``UNAVAILABLE`` (not retried by clients: the store already retried) and the
agent runtime treats as "show the row without its trace". Writes and
deletes go straight to the wrapped store (their botocore timeouts bound them).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, TimeoutError as FutureTimeout
from contextvars import ContextVar
from typing import Any

from ..model import Trajectory
from ..store.traces import TraceStore, TraceStoreError

#: The monotonic time by which the current call must be answered (None: no deadline).
DEADLINE: ContextVar[float | None] = ContextVar("trajsearch_deadline", default=None)


class TraceStoreBusy(TraceStoreError):
    """Every trace-read slot is taken by a read the store has not answered yet."""


class TraceStoreTimeout(TraceStoreError):
    """The store did not answer within the read timeout (or the call's deadline)."""


class TraceReads:
    """A :class:`TraceStore` whose ``get`` runs bounded and time-limited; everything else is delegated."""

    def __init__(self, store: TraceStore, *, slots: int = 2, timeout: float = 10.0) -> None:
        if slots < 1:
            raise ValueError("slots must be at least 1")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        self.store = store
        self.slots = slots
        self.timeout = timeout
        self._free = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._busy = 0

    @property
    def location(self) -> str:
        return self.store.location

    @property
    def in_flight(self) -> int:
        """Reads the store has not answered yet (including ones whose callers gave up)."""
        return self._busy

    def __getattr__(self, name: str) -> Any:  # put, delete, exists, uri_for, ...
        return getattr(self.store, name)

    def get(self, uri: str, *, tenant: str) -> Trajectory:
        if not self._free.acquire(blocking=False):
            raise TraceStoreBusy(f"all {self.slots} trace-read slots are waiting on the trace store")
        with self._lock:
            self._busy += 1
        result: Future = Future()

        def read() -> None:
            try:
                result.set_result(self.store.get(uri, tenant=tenant))
            except BaseException as exc:  # noqa: BLE001 (handed to the waiting caller)
                result.set_exception(exc)
            finally:
                with self._lock:
                    self._busy -= 1
                self._free.release()

        try:
            threading.Thread(target=read, name="trace-read", daemon=True).start()
        except BaseException:
            with self._lock:
                self._busy -= 1
            self._free.release()
            raise
        wait = self.timeout
        deadline = DEADLINE.get()
        if deadline is not None:
            wait = max(0.0, min(wait, deadline - time.monotonic()))
        try:
            return result.result(timeout=wait)
        except FutureTimeout:
            raise TraceStoreTimeout(f"the trace store did not answer within {wait:.1f} s") from None
