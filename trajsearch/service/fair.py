"""RPC workers shared among tenants, so that one tenant's slow calls cannot hold all of them.

grpcio's sync server runs every call on one pool of threads, in arrival order. Eight cold ``Failures`` calls of one
tenant (seconds each: clustering, trace reads) took all eight workers, and another tenant's 5 ms ``Search`` waited
6.3 s behind them: trace reads had a per-tenant share (:mod:`.trace_reads`), the workers had none.

:class:`TenantCalls` is the pool the interceptor hands each TrajSearch call to (grpcio runs a handler on the
executor its behaviour names, ``experimental_thread_pool``), under the tenant of the call's key:

- a tenant's calls below its ``share`` start on any free worker; past it, a call starts only while every worker
  but one is taken at most (the last stays free for a tenant below its share: the next to arrive, or one whose
  calls are all running) and no other tenant with calls queued is below its share. So a tenant alone uses every
  worker but one, two tenants queued at their share use the workers left over between them (8 workers, share 3:
  seven run, not six), and a tenant whose one call is running still finds a worker for its next;
- calls past that wait in their tenant's queue without holding a worker, and free workers take the tenants'
  queues in turn (round robin), so a tenant with a hundred calls queued does not delay another's one call;
- a tenant with ``limit`` calls running or queued has its next ones refused ``RESOURCE_EXHAUSTED`` by the
  interceptor (:meth:`TenantCalls.admits`): one tenant's flood would otherwise fill grpcio's own bound of
  concurrent calls (``maximum_concurrent_rpcs``), which refuses every tenant alike.

Calls whose key is unknown share one bucket (``""``), so a flood of bad keys is one tenant's worth.

A queued call whose client gave up (cancelled, or its deadline passed: an agent's 10 s timeout, then its retry) is
dropped from its queue, never run: it counted toward its tenant's ``limit`` until a worker reached it, so a tenant
whose slow calls held the workers was refused ``RESOURCE_EXHAUSTED`` for calls nobody awaited, and each one, once
dequeued, took a worker and (cancelled before its deadline) ran its whole search for nobody (probe 52, SV3).
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable


def given_up(state: Any) -> bool | None:
    """Whether the client of the gRPC call whose state is ``state`` has gone (cancelled, or its deadline passed);
    None if ``state`` is not one grpcio's sync server keeps. grpcio tells a handler only once it runs (and then
    cannot tell a finished call from a cancelled one), so this reads the state its ``is_active()`` reads: ``client``,
    which its close-on-server callback sets to ``"cancelled"`` as soon as the client goes, queued or not."""
    client = getattr(state, "client", None)
    return client == "cancelled" if isinstance(client, str) else None


def _call_gone(args: tuple) -> bool:
    """Whether a call grpcio submitted (``context.run, handler, rpc_event, state, ...``) lost its client."""
    return any(given_up(arg) for arg in args)


class TenantCalls:
    """``workers`` threads shared by tenants: ``share`` of one tenant's calls at once while others wait (more only
    on workers no other tenant can take, one kept back), at most ``limit`` of them running or queued."""

    def __init__(self, workers: int, *, share: int | None = None, limit: int = 32) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.workers = workers
        self.share = max(1, min(workers, share or workers // 2))
        self.spare = max(self.share, workers - 1)  # workers taken at most by calls past a share: one kept back
        self.limit = max(self.share, limit)
        self._changed = threading.Condition(threading.Lock())
        self._queues: dict[str, deque[tuple[Future, Callable[..., Any], tuple, dict]]] = {}
        self._turns: deque[str] = deque()  # tenants with queued calls, in the order they are served
        self._running: dict[str, int] = {}
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False
        self._executors: dict[str, _TenantExecutor] = {}

    # -- what the interceptor asks -----------------------------------------------------------------

    def admits(self, tenant: str) -> bool:
        """Whether ``tenant`` may have one more call running or queued (calls whose client left are not counted)."""
        with self._changed:
            self._drop_given_up(tenant)
            return self._running.get(tenant, 0) + len(self._queues.get(tenant, ())) < self.limit

    def executor(self, tenant: str) -> ThreadPoolExecutor:
        """The executor grpcio submits ``tenant``'s call to (one per tenant, kept: tenants are the key ring's)."""
        with self._changed:
            executor = self._executors.get(tenant)
            if executor is None:
                executor = self._executors[tenant] = _TenantExecutor(self, tenant)
            return executor

    def waiting(self, tenant: str) -> int:
        """``tenant``'s calls queued for a worker."""
        with self._changed:
            self._drop_given_up(tenant)
            return len(self._queues.get(tenant, ()))

    # -- the pool ----------------------------------------------------------------------------------

    def submit(self, tenant: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        future: Future = Future()
        with self._changed:
            if self._closed:
                raise RuntimeError("cannot schedule new calls after shutdown")
            queue = self._queues.get(tenant)
            if queue is None:
                queue = self._queues[tenant] = deque()
                self._turns.append(tenant)
            queue.append((future, fn, args, kwargs))
            if not self._idle and len(self._threads) < self.workers:
                thread = threading.Thread(target=self._work, name=f"tenant_rpc_{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
            self._changed.notify_all()
        return future

    def shutdown(self) -> None:
        """Let the workers end once the queues are empty (the server has stopped: nothing more arrives)."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def _drop_given_up(self, tenant: str) -> None:
        """Take the calls of ``tenant`` whose client left out of its queue (under the lock). Their futures are
        cancelled: grpcio counts a call toward its ``maximum_concurrent_rpcs``, every tenant's bound, until its
        future is done, and a cancelled call's close needs no handler."""
        queue = self._queues.get(tenant)
        if not queue or not any(_call_gone(args) for _, _, args, _ in queue):
            return
        kept = deque(item for item in queue if not _call_gone(item[2]) or not item[0].cancel())
        if kept:
            self._queues[tenant] = kept
        else:
            del self._queues[tenant]
            self._turns.remove(tenant)

    def _may_start(self, tenant: str) -> bool:
        """Whether ``tenant``'s next call may start on a free worker (the rule of the module's docstring)."""
        if self._running.get(tenant, 0) < self.share:
            return True
        if sum(self._running.values()) >= self.spare:
            return False
        return all(self._running.get(t, 0) >= self.share for t in self._turns if t != tenant)

    def _next(self) -> tuple[str, tuple[Future, Callable[..., Any], tuple, dict]] | None:
        """The next call to run, the tenants taken in turn (waits under the lock); None once shut down."""
        while True:
            for tenant in list(self._turns):  # a tenant whose calls all lost their client waits for nothing
                self._drop_given_up(tenant)
            if sum(self._running.values()) < self.workers:
                for _ in range(len(self._turns)):
                    tenant = self._turns[0]
                    self._turns.rotate(-1)
                    if self._may_start(tenant):
                        queue = self._queues[tenant]
                        item = queue.popleft()
                        if not queue:
                            del self._queues[tenant]
                            self._turns.remove(tenant)
                        self._running[tenant] = self._running.get(tenant, 0) + 1
                        return tenant, item
            if self._closed and not self._queues:
                return None
            self._idle += 1
            try:
                self._changed.wait()
            finally:
                self._idle -= 1

    def _work(self) -> None:
        while True:
            with self._changed:
                taken = self._next()
            if taken is None:
                return
            tenant, (future, fn, args, kwargs) = taken
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        future.set_result(fn(*args, **kwargs))
                    except BaseException as exc:  # noqa: BLE001 (handed to grpcio, as its own pool does)
                        future.set_exception(exc)
            finally:
                with self._changed:
                    self._running[tenant] -= 1
                    if not self._running[tenant]:
                        del self._running[tenant]
                    self._changed.notify_all()


class _TenantExecutor(ThreadPoolExecutor):
    """What grpcio takes as a call's executor (it checks the type): submits go to the tenant's queue."""

    def __init__(self, calls: TenantCalls, tenant: str) -> None:
        super().__init__(max_workers=1)  # starts no thread: submit is replaced
        self._calls = calls
        self._tenant = tenant

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        return self._calls.submit(self._tenant, fn, *args, **kwargs)
