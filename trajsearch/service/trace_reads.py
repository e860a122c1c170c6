"""Trace-store reads on their own bounded threads, so a slow object store cannot stall the service.

A sync gRPC server has one pool of threads for every call. An object store
that accepts connections and never answers used to hold all of them (each
``GetTrace`` waiting out botocore's retries), and every tenant's ``Search``
and ``WhoAmI`` timed out behind them. :class:`TraceReads` wraps the server's
trace store so that each read

- takes one of ``slots`` permits, of which one tenant holds at most
  ``per_tenant`` (half, at least one): one tenant's reads, however many or
  slow, leave the other tenants their share;
- waits for a permit a short bounded time (``queue_wait``, or less of the
  call's deadline), as reads of a healthy store free them in milliseconds;
  at most ``waiters`` callers (default: as many as there are permits) wait
  at once (and a tenant at most its share of them). A read that finds no permit in that time, or no
  place to wait, fails with :class:`TraceStoreBusy`; so at most ``slots``
  calls ever wait on the store and ``waiters`` more for a permit, and the other
  worker threads stay free;
- runs on a daemon thread of its own, holding its permit until the store
  answers or botocore gives up (its own connect/read timeouts and bounded
  retries), not merely until its caller stopped waiting;
- is waited for at most ``timeout`` seconds, or what is left of the call's
  deadline (:data:`DEADLINE`, set per call by the interceptor), then fails
  with :class:`TraceStoreTimeout`.

A consumer of many reads (the web pages) takes a :meth:`TraceReads.budget` of
its own over the same store, so that its reads never take the agents' permits.

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
    """A :class:`TraceStore` whose ``get`` and ``exists`` run bounded and time-limited; everything else is delegated."""

    def __init__(self, store: TraceStore, *, slots: int = 2, timeout: float = 10.0, per_tenant: int | None = None,
                 queue_wait: float = 2.0, waiters: int | None = None) -> None:
        if slots < 1:
            raise ValueError("slots must be at least 1")
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if queue_wait < 0:
            raise ValueError("queue_wait must not be negative")
        self.store = store
        self.slots = slots
        self.per_tenant = min(slots, per_tenant or max(1, slots // 2))
        if self.per_tenant < 1:
            raise ValueError("per_tenant must be at least 1")
        self.timeout = timeout
        self.queue_wait = queue_wait
        # callers that may wait for a permit at once, and of them one tenant's (its share, at least one)
        self.waiters = max(1, waiters or slots)
        self.tenant_waiters = max(1, self.waiters * self.per_tenant // slots)
        self._changed = threading.Condition(threading.Lock())
        self._busy = 0
        self._held: dict[str, int] = {}  # tenant -> permits held
        self._waiting: dict[str, int] = {}  # tenant -> callers waiting for a permit

    @property
    def location(self) -> str:
        return self.store.location

    @property
    def in_flight(self) -> int:
        """Reads the store has not answered yet (including ones whose callers gave up)."""
        return self._busy

    @property
    def waiting(self) -> int:
        """Callers waiting for a permit."""
        with self._changed:
            return sum(self._waiting.values())

    def budget(self, *, slots: int, queue_wait: float, waiters: int, timeout: float | None = None) -> TraceReads:
        """Reads of the same store with permits of their own: a consumer of many reads (the web
        page's model column and filter) queues on these and never takes the agents' permits. Each is
        waited for ``timeout`` s (None: as long as this one's)."""
        return TraceReads(self.store, slots=slots, timeout=timeout or self.timeout, queue_wait=queue_wait,
                          waiters=waiters)

    def __getattr__(self, name: str) -> Any:  # put, delete, uri_for, ...
        return getattr(self.store, name)

    def _remaining(self) -> float | None:
        deadline = DEADLINE.get()
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def _acquire(self, tenant: str) -> None:
        """A permit for ``tenant`` (within its share), waited for at most ``queue_wait`` s, or TraceStoreBusy."""
        wait = self.queue_wait
        left = self._remaining()
        if left is not None:
            wait = min(wait, left)

        def free() -> bool:
            return self._busy < self.slots and self._held.get(tenant, 0) < self.per_tenant

        with self._changed:
            if not free():
                waiting = sum(self._waiting.values())
                if wait <= 0 or waiting >= self.waiters or self._waiting.get(tenant, 0) >= self.tenant_waiters:
                    raise TraceStoreBusy(f"trace reads busy: {self._busy} of {self.slots} in progress "
                                         f"({self.per_tenant} per tenant), retry shortly")
                self._waiting[tenant] = self._waiting.get(tenant, 0) + 1
                try:
                    if not self._changed.wait_for(free, timeout=wait):
                        raise TraceStoreBusy(f"trace reads busy: no free slot of {self.slots} "
                                             f"({self.per_tenant} per tenant) within {wait:.1f} s, retry shortly")
                finally:
                    self._waiting[tenant] -= 1
                    if not self._waiting[tenant]:
                        del self._waiting[tenant]
            self._busy += 1
            self._held[tenant] = self._held.get(tenant, 0) + 1

    def _release(self, tenant: str) -> None:
        with self._changed:
            self._busy -= 1
            self._held[tenant] -= 1
            if not self._held[tenant]:
                del self._held[tenant]
            self._changed.notify_all()

    def get(self, uri: str, *, tenant: str) -> Trajectory:
        return self._bounded(lambda: self.store.get(uri, tenant=tenant), tenant)

    def exists(self, uri: str, *, tenant: str) -> bool:
        """Whether the store holds the trace, asked as :meth:`get` reads it (an S3 HEAD waits as a GET does): a HEAD
        of a run page had asked the store outside the pages' permits and deadline (review RT-SERVE, 4)."""
        return self._bounded(lambda: self.store.exists(uri, tenant=tenant), tenant)

    def _bounded(self, ask: Any, tenant: str) -> Any:
        """``ask()``'s answer, asked on a thread of its own under one of ``tenant``'s permits, waited for as long as
        the timeout or the call's deadline allows."""
        self._acquire(tenant)
        result: Future = Future()

        def read() -> None:
            """The permit is given back before the caller has the outcome: given back after, a caller's next read
            could find its own finished read's permit still taken (313 of 500 one-after-another reads were
            refused "trace reads busy" with no wait allowed and a fine thread switch interval)."""
            answer, failure = None, None
            try:
                answer = ask()
            except BaseException as exc:  # noqa: BLE001 (handed to the waiting caller)
                failure = exc
            self._release(tenant)
            if failure is None:
                result.set_result(answer)
            else:
                result.set_exception(failure)

        try:
            threading.Thread(target=read, name="trace-read", daemon=True).start()
        except BaseException:
            self._release(tenant)
            raise
        wait = self.timeout
        left = self._remaining()
        if left is not None:
            wait = min(wait, left)
        try:
            return result.result(timeout=wait)
        except FutureTimeout:
            raise TraceStoreTimeout(f"the trace store did not answer within {wait:.1f} s") from None
