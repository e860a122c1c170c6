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

Such a call's future is cancelled only once this pool's lock is let go (:func:`_cancel`): a cancel runs grpcio's
done callback, which takes grpcio's server lock, and grpcio's polling thread holds that lock while it asks
:meth:`TenantCalls.admits` about the next call and submits it. Cancelled under the lock, the two waited for each
other for good: every call, the health check's too, hung once a queued call expired as another arrived (probe 52,
RSV3).
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Collection


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


def _cancel(futures: list[Future]) -> None:
    """Cancel the futures of calls taken out of their queue, never under :class:`TenantCalls`' lock (the module's
    docstring: grpcio's done callback takes grpcio's lock, held by the thread that waits for ours)."""
    for future in futures:
        future.cancel()


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
            gone = self._drop_given_up(tenant)
            admitted = self._running.get(tenant, 0) + len(self._queues.get(tenant, ())) < self.limit
        _cancel(gone)
        return admitted

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
            gone = self._drop_given_up(tenant)
            queued = len(self._queues.get(tenant, ()))
        _cancel(gone)
        return queued

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

    def _drop_given_up(self, tenant: str) -> list[Future]:
        """Take the calls of ``tenant`` whose client left out of its queue (under the lock) and return their futures,
        for the caller to cancel once it has let the lock go (:func:`_cancel`): grpcio counts a call toward its
        ``maximum_concurrent_rpcs``, every tenant's bound, until its future is done, and a cancelled call's close
        needs no handler."""
        queue = self._queues.get(tenant)
        if not queue:
            return []
        kept: deque[tuple[Future, Callable[..., Any], tuple, dict]] = deque()
        gone: list[Future] = []
        for item in queue:  # (each call asked once: its state may change between two looks)
            (gone.append(item[0]) if _call_gone(item[2]) else kept.append(item))
        if not gone:
            return []
        if kept:
            self._queues[tenant] = kept
        else:
            del self._queues[tenant]
            self._turns.remove(tenant)
        return gone

    def _may_start(self, tenant: str) -> bool:
        """Whether ``tenant``'s next call may start on a free worker (the rule of the module's docstring)."""
        if self._running.get(tenant, 0) < self.share:
            return True
        if sum(self._running.values()) >= self.spare:
            return False
        return all(self._running.get(t, 0) >= self.share for t in self._turns if t != tenant)

    def _next(self) -> tuple[str, tuple[Future, Callable[..., Any], tuple, dict]] | list[Future] | None:
        """The next call to run, the tenants taken in turn (waits under the lock); None once shut down; or the
        futures of calls whose client left, taken out of their queues, for the worker to cancel without the lock
        before it asks again (a tenant whose calls all lost their client waits for nothing)."""
        while True:
            gone = [future for tenant in list(self._turns) for future in self._drop_given_up(tenant)]
            if gone:
                return gone
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
            if isinstance(taken, list):
                _cancel(taken)
                continue
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


class WriteShares:
    """The service's write slots (``Ingest``, ``Delete``) shared among tenants: while another tenant has a key that
    may write, one tenant holds at most all of them but one (``slots - 1``: two slots at least, or none is kept), so
    the others' writes are not all shut out by it (with three tenants or more, the one slot kept is still first come
    among them). The slots themselves are the servicer's; this only refuses a tenant past its share, before it takes
    one. Without it a tenant's parallel batch indexers (an Ingest stream holds its slot for as long as it is open:
    hours) took every slot, and every other tenant's ingest and delete were refused until they ended (probe 53, SV4).
    A tenant alone among the writers (one team's deployment) keeps every slot: one kept for tenants that do not exist
    halved ``--workers 4``'s two (review RSV4). ``writers`` names the tenants with a key that may write, asked at each
    :meth:`take` (the key file may have changed)."""

    def __init__(self, slots: int, writers: Callable[[], Collection[str]]) -> None:
        if slots < 2:
            raise ValueError("a share of the write slots needs two of them at least")
        self.slots = slots
        self._writers = writers
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}

    def share(self, tenant: str) -> int:
        """How many write slots ``tenant`` may hold now: all but one while another tenant may write, else all."""
        return self.slots - 1 if any(other != tenant for other in self._writers()) else self.slots

    def take(self, tenant: str) -> Callable[[], None] | None:
        """A share for one write of ``tenant`` (call what is returned once the write has ended), or None if ``tenant``
        already holds its :meth:`share` of them."""
        share = self.share(tenant)
        with self._lock:
            if self._held.get(tenant, 0) >= share:
                return None
            self._held[tenant] = self._held.get(tenant, 0) + 1
        released = threading.Event()

        def release() -> None:
            if released.is_set():
                return
            released.set()
            with self._lock:
                self._held[tenant] -= 1
                if not self._held[tenant]:
                    del self._held[tenant]

        return release

    def held(self, tenant: str) -> int:
        with self._lock:
            return self._held.get(tenant, 0)
