"""The per-call path of every TrajSearch RPC, as one ``grpc.ServerInterceptor``.

For each call of ``trajsearch.v1.TrajSearch`` (the health service passes
through untouched) the interceptor

1. assigns a request id (the caller's ``x-request-id`` if well formed) and
   echoes it in the initial metadata, and in the trailing metadata of an
   error the server ends the call with (so a client can tell the server's
   refusal from an answer lost on its way: :data:`ENDED_HERE`);
2. finds the key's principal: no key, an unknown key, or two *different* keys
   in one call (``authorization`` and ``x-api-key``) -> ``UNAUTHENTICATED``;
   a method marked :func:`requires` ``("write")`` with a read key ->
   ``PERMISSION_DENIED``;
3. parses the request bytes itself (:mod:`.wire`): gRPC's own deserialiser
   answers invalid UTF-8 with ``INTERNAL``, this one with ``INVALID_ARGUMENT``
   naming the field;
4. checks the deadline, publishes it to the trace reads (:data:`DEADLINE`),
   runs the servicer method with a :class:`Call` (principal, request id,
   log fields) in place of the gRPC context;
5. maps exceptions to status codes (:func:`status_of`; input is never
   ``INTERNAL``, a full disk is ``RESOURCE_EXHAUSTED``, error text is clipped
   and never names the trace-store root);
6. counts the call (:class:`.observe.Metrics`) and writes one JSON log line.

An interceptor sees everything this needs: the method name, the metadata,
the request and the servicer's result or exception. The servicer only
declares the role a method needs (:func:`requires`) and reads its caller
from the :class:`Call`.

One gRPC quirk is handled here: when a client-streaming call is cancelled
(or its deadline passes) while the server waits for the next message,
grpcio may end the request iterator as if the client had finished sending,
and only afterwards mark the call cancelled. A stream that ends normally is
therefore accounted when the call terminates (``add_callback``), when its
final state is known, instead of being logged as ``OK`` too early.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator

import grpc
from pydantic import ValidationError

from ..indexer import IngestError, disk_full
from ..store.traces import TraceAccessError, TraceCorruptError, TraceNotFoundError, TraceStoreError
from . import wire
from .auth import KeyRing, Principal, keys_from_metadata
from .fair import given_up
from .observe import Metrics, log_event
from .protos import pb2
from .trace_reads import DEADLINE, TraceStoreBusy
from .validate import ENDED_HERE, FieldError, clip

if TYPE_CHECKING:
    from .answers import AnswerBudget
    from .fair import TenantCalls, WriteShares

log = logging.getLogger("trajsearch.service")

SERVICE_NAME = "trajsearch.v1.TrajSearch"
PREFIX = f"/{SERVICE_NAME}/"
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
#: Trailing metadata that tells a gRPC client's retry policy not to retry this answer.
NO_RETRY = (("grpc-retry-pushback-ms", "-1"),)
#: Most seconds a unary call's request message may take to come once the server has taken the call up (the pages
#: wait as long for a posted form: ``web.server.BODY_TIMEOUT_S``). A client sends it with the call's headers; one
#: that does not held a place among the server's concurrent calls until it hung up (probe 54, SV5).
REQUEST_WAIT_S = 30.0


class Abort(Exception):
    """End the call with ``code`` and ``message`` (what the client sees)."""

    def __init__(self, code: grpc.StatusCode, message: str, *, retry: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.retry = retry


def requires(role: str) -> Callable[[Callable], Callable]:
    """Mark a servicer method as needing a key of ``role`` (methods without the mark need ``read``)."""

    def mark(method: Callable) -> Callable:
        method.required_role = role  # type: ignore[attr-defined]
        return method

    return mark


@dataclass
class Call:
    """What a handler knows about its caller: the key's principal, the request id, the gRPC context."""

    principal: Principal
    request_id: str
    context: grpc.ServicerContext
    fields: dict[str, Any] = field(default_factory=dict)
    keys: KeyRing | None = None  # the ring the key was found in: a long call asks it again (:meth:`check_key`)

    @property
    def tenant(self) -> str:
        return self.principal.tenant

    def note(self, **fields: Any) -> None:
        """Add fields to the call's log line (counts, never request text)."""
        self.fields.update(fields)

    def check_key(self) -> None:
        """Refuse the rest of a long call (an ingest stream: up to 50,000 records, however long they take) once its
        key has left the key file: a key removed in a rotation or an incident went on writing until the stream ended."""
        if self.keys is not None and not self.keys.holds(self.principal):
            raise Abort(grpc.StatusCode.UNAUTHENTICATED, "this API key was removed from the server's key file "
                                                         "(or its entry changed) while the call ran: the rest of it "
                                                         "is refused", retry=False)

    def check_deadline(self) -> None:
        if expired(self.context):
            raise Abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded before the work was done")


def expired(context: grpc.ServicerContext) -> bool:
    remaining = context.time_remaining()
    return remaining is not None and remaining <= 0


def _cancelled(context: grpc.ServicerContext) -> bool:
    """Whether the client went away. Only reliable once the call has terminated (see the module doc).

    grpcio's public API cannot tell a finished call from a cancelled one after
    the fact (``is_active()`` is False for both), so this reads the state its
    ``is_active()`` reads; without it, fall back to ``is_active()``.
    """
    gone = given_up(getattr(context, "_state", None))
    return gone if gone is not None else not context.is_active()


class ServiceInterceptor(grpc.ServerInterceptor):
    """Auth, request parsing, deadlines, status mapping, metrics and logs for every TrajSearch RPC."""

    def __init__(self, keys: KeyRing, metrics: Metrics, answers: AnswerBudget | None = None,
                 calls: TenantCalls | None = None, writes: WriteShares | None = None,
                 stopping: threading.Event | None = None) -> None:
        self.keys = keys
        self.stopping = stopping or threading.Event()  # set by the server when gRPC cancels what still runs
        self.metrics = metrics
        self.answers = answers
        self.calls = calls  # the workers, shared among tenants (see .fair); None: grpcio's own pool, in arrival order
        self.writes = writes  # one tenant's share of the write slots (see .fair); None: first come, first served
        methods = pb2.DESCRIPTOR.services_by_name["TrajSearch"].methods_by_name
        self._request_types = {name: getattr(pb2, m.input_type.name) for name, m in methods.items()}

    def intercept_service(self, continuation: Callable, details: grpc.HandlerCallDetails) -> Any:
        handler = continuation(details)
        if handler is None or not details.method.startswith(PREFIX):
            return handler
        name = details.method[len(PREFIX):]
        request_type = self._request_types[name]
        # (on grpcio's polling thread: the tenant by the keys as last read, no file looked at)
        tenant = self._tenant_of(details.invocation_metadata)
        behavior = handler.stream_unary if handler.request_streaming else handler.unary_unary
        # writes (Ingest, Delete) run on grpcio's own pool, not on their tenant's share of the workers: they have a
        # bound of their own (the service's write slots, refused at once past it), and an Ingest stream lasts as
        # long as its client sends (a batch indexer: hours; a frozen one: --ingest-idle). On the tenant's share, a
        # tenant with two streams open had no worker left for its agents' searches while another tenant had calls
        # waiting (probe 52, SV3)
        shared = self.calls is not None and getattr(behavior, "required_role", "read") != "write"
        crowded = shared and not self.calls.admits(tenant)  # type: ignore[union-attr]
        if handler.response_streaming:
            raise TypeError(f"{name}: server-streaming methods are not supported by the interceptor")
        # every call is served as a request stream, a unary one too: grpcio runs a unary handler only once its request
        # message has come, so a call whose message never came was refused nothing, held one of the server's
        # --max-concurrent-rpcs (and a worker) for as long as its client kept it open, and needed no key to: 64 such
        # calls shut every tenant out (probe 54, SV5). Served so, the call is authenticated from its headers at once,
        # and its one message is waited for at most REQUEST_WAIT_S
        if handler.request_streaming:
            def parsed(raw_requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:
                return _Requests(request_type, raw_requests)
        else:
            def parsed(raw_requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:
                return wire.parse(request_type, _one_request(raw_requests, context, self.stopping))

        def handle(raw_requests: Iterator[bytes], context: grpc.ServicerContext) -> Any:
            return self._run(name, behavior, context, lambda: parsed(raw_requests, context), crowded)

        return grpc.stream_unary_rpc_method_handler(self._scheduled(handle, tenant, shared and not crowded),
                                                    response_serializer=handler.response_serializer)

    def _tenant_of(self, metadata: Any) -> str:
        """The tenant whose share of the workers a call takes: its key's, or "" (no key, an unknown one, two)."""
        keys = set(keys_from_metadata(metadata))
        principal = self.keys.peek(next(iter(keys))) if len(keys) == 1 else None
        return principal.tenant if principal is not None else ""

    def _scheduled(self, handle: Callable, tenant: str, shared: bool) -> Callable:
        """``handle`` run on the tenant's share of the workers if ``shared`` (else on grpcio's own pool: a write, or a
        refusal, quick)."""
        if shared:
            handle.experimental_thread_pool = self.calls.executor(tenant)  # type: ignore[union-attr]
        return handle

    # -- one call ------------------------------------------------------------------------------

    def _hold_answer(self, principal: Principal, result: Any, context: grpc.ServicerContext) -> None:
        """Take a large answer's size from the server's budget until its call ends (see :mod:`.answers`)."""
        if self.answers is None or not hasattr(result, "ByteSize"):
            return
        release = self.answers.take(principal.key_id, result.ByteSize())
        if release is not None and not context.add_callback(release):
            release()  # the call is already over: nothing holds the answer

    def _run(self, name: str, behavior: Callable, context: grpc.ServicerContext, request: Callable[[], Any],
             crowded: bool = False) -> Any:
        metadata = context.invocation_metadata() or ()
        supplied = next((val for key, val in metadata if key == "x-request-id"), "")
        request_id = supplied if isinstance(supplied, str) and _REQUEST_ID_RE.match(supplied) else uuid.uuid4().hex
        context.send_initial_metadata((("x-request-id", request_id),))
        started = time.perf_counter()
        try:
            principal, refusal = self._authenticate(name, metadata, getattr(behavior, "required_role", "read"))
        except Exception as exc:  # noqa: BLE001 (outside the call's try below: gRPC told the client "UNKNOWN:
            # Exception calling application: <the error's text>", and neither the log nor the metrics had the call)
            code, message, retry = status_of(exc, name, request_id, context)
            principal, refusal = None, Abort(code, message, retry=retry)
        tenant = principal.tenant if principal else ""
        self.metrics.enter(tenant)
        code, message, retry, fields = grpc.StatusCode.OK, "", True, {}
        settle_later = False
        release_write: Callable[[], None] | None = None
        remaining = context.time_remaining()
        token = DEADLINE.set(time.monotonic() + remaining if remaining is not None else None)
        try:
            if refusal is not None:
                raise refusal
            if crowded:
                raise Abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                            f"this key's tenant has {getattr(self.calls, 'limit', 0)} calls in progress or waiting "
                            "at this server, the most one tenant may have: retry once some of them have ended")
            if self.writes is not None and getattr(behavior, "required_role", "read") == "write":
                release_write = self.writes.take(tenant)
                if release_write is None:  # (its own writes only: other tenants' are none of its business)
                    held = self.writes.held(tenant)
                    raise Abort(grpc.StatusCode.UNAVAILABLE,
                                f"this key's tenant has {held} write{'s' if held != 1 else ''} in progress at this "
                                "server (an Ingest stream holds its place until it ends), the most one tenant may have "
                                "while one is kept for other tenants: retry once one of them has ended")
            call = Call(principal, request_id, context, keys=self.keys)
            fields = call.fields
            call.check_deadline()
            req = request()
            result = behavior(req, call)
            self._hold_answer(principal, result, context)
            if isinstance(req, _Requests) and req.ended:
                settle_later = True  # a clean end of the stream or a cancellation: known when the call ends
            elif not context.is_active():  # the client gave up (deadline or cancel) while we worked
                code = grpc.StatusCode.DEADLINE_EXCEEDED if expired(context) else grpc.StatusCode.CANCELLED
            return result
        except Abort as exc:
            code, message, retry = exc.code, str(exc), exc.retry
        except Exception as exc:  # noqa: BLE001 (every failure becomes a status, none escapes raw)
            code, message, retry = status_of(exc, name, request_id, context)
        finally:
            DEADLINE.reset(token)
            if release_write is not None:  # (a stream's handler returns once its stream has ended)
                release_write()
            finish = (lambda final: self._finish(name, final, started, request_id, principal, context, message,
                                                 fields))
            if not settle_later:
                finish(code)
            elif not context.add_callback(lambda: finish(self._settled(context))):
                finish(self._settled(context))  # already over
        context.set_trailing_metadata(((ENDED_HERE, request_id),) + (() if retry else NO_RETRY))
        context.abort(code, clip(message))

    @staticmethod
    def _settled(context: grpc.ServicerContext) -> grpc.StatusCode:
        if not _cancelled(context):
            return grpc.StatusCode.OK
        return grpc.StatusCode.DEADLINE_EXCEEDED if expired(context) else grpc.StatusCode.CANCELLED

    def _authenticate(self, name: str, metadata: Any, role: str) -> tuple[Principal | None, Abort | None]:
        keys = set(keys_from_metadata(metadata))
        if len(keys) > 1:
            return None, Abort(grpc.StatusCode.UNAUTHENTICATED,
                               "two different API keys in one call: send exactly one "
                               "('authorization: Bearer <key>' or 'x-api-key')")
        principal = self.keys.authenticate(next(iter(keys), None))
        if principal is None:
            return None, Abort(grpc.StatusCode.UNAUTHENTICATED,
                               "missing or unknown API key: send metadata 'authorization: Bearer <key>'")
        if not principal.can(role):
            return principal, Abort(grpc.StatusCode.PERMISSION_DENIED,
                                    f"{name} needs a key with role '{role}'; this key's role is '{principal.role}'")
        return principal, None

    def _finish(self, name: str, code: grpc.StatusCode, started: float, request_id: str,
                principal: Principal | None, context: grpc.ServicerContext, message: str,
                fields: dict[str, Any]) -> None:
        ms = (time.perf_counter() - started) * 1000
        tenant = principal.tenant if principal else ""
        self.metrics.record(name, code.name, ms, tenant)
        log_event(
            log, logging.INFO if code == grpc.StatusCode.OK else logging.WARNING, "rpc",
            method=name, request_id=request_id, code=code.name, ms=round(ms, 2),
            key_id=principal.key_id if principal else None, tenant=principal.tenant if principal else None,
            peer=context.peer(), **({"error": clip(message, 300)} if message else {}), **fields,
        )


class _Alarms:
    """One thread that runs the functions given to :meth:`after` when their time comes: a ``threading.Timer`` per
    wait started a thread for every unary call (WhoAmI's median over loopback 0.56 -> 0.9 ms). Nearly every alarm is
    cancelled (the request came): the thread is woken only for an alarm due before all others, and cancelled ones are
    dropped once they are half the heap (else every call of the last 30 s stayed in it)."""

    def __init__(self) -> None:
        self._due: list[list[Any]] = []  # heap of [when, n, function or None once cancelled or taken]
        self._cancelled = 0  # entries of the heap cancelled
        self._changed = threading.Condition()
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def after(self, seconds: float, function: Callable[[], None]) -> Callable[[], None]:
        """Run ``function`` in ``seconds`` unless the returned cancel is called first."""
        entry = [time.monotonic() + seconds, next(self._order), function]
        with self._changed:
            heapq.heappush(self._due, entry)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="alarms", daemon=True)
                self._thread.start()
            if self._due[0] is entry:  # (a later one: the thread wakes for an earlier alarm anyway)
                self._changed.notify()
        return lambda: self._cancel(entry)

    def _cancel(self, entry: list[Any]) -> None:
        with self._changed:
            if entry[2] is None:  # run, or cancelled before
                return
            entry[2] = None
            self._cancelled += 1
            if self._cancelled * 2 > len(self._due):
                self._due = [e for e in self._due if e[2] is not None]
                heapq.heapify(self._due)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._changed.wait(self._due[0][0] - time.monotonic() if self._due else None)
                entry = heapq.heappop(self._due)
                function, entry[2] = entry[2], None
                if function is None:
                    self._cancelled -= 1
            if function is not None:
                try:
                    function()
                except Exception:  # noqa: BLE001 (one alarm's failure must not stop the others)
                    log.exception("an alarm failed")


_ALARMS = _Alarms()


def next_within(messages: Iterator[Any], context: grpc.ServicerContext, seconds: float, message: str) -> Any:
    """The client's next message of ``messages``, the call ended by the server if it does not come within ``seconds``:
    cancelled with ``DEADLINE_EXCEEDED`` and ``message``, which the client reads (gRPC's public ``cancel()`` would
    tell it only ``CANCELLED``) and which :class:`Abort` raised here puts in the server's log. Only the wait is timed.
    A client's own ending (``StopIteration``, ``grpc.RpcError``) is raised as it is."""
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        core = getattr(getattr(context, "_rpc_event", None), "call", None)
        try:
            core.cancel(grpc.StatusCode.DEADLINE_EXCEEDED.value[0], message)
        except Exception:  # noqa: BLE001 (grpcio's inner call changed): cancelled without words
            context.cancel()

    cancel = _ALARMS.after(seconds, expire)
    try:
        got = next(messages)
    except (grpc.RpcError, StopIteration):
        if expired.is_set():
            raise Abort(grpc.StatusCode.DEADLINE_EXCEEDED, message) from None
        raise
    finally:
        cancel()
    if expired.is_set():  # it came as the call was being ended: ended all the same
        raise Abort(grpc.StatusCode.DEADLINE_EXCEEDED, message)
    return got


def _one_request(raw_requests: Iterator[bytes], context: grpc.ServicerContext, stopping: threading.Event) -> bytes:
    """The one request message of a unary call, waited for at most :data:`REQUEST_WAIT_S`. A wait the server's
    stopping ends is said to be the server's doing (``stopping`` set), as an Ingest stream's is: it was logged
    CANCELLED, the client's."""
    try:
        return next_within(raw_requests, context, REQUEST_WAIT_S,
                           f"the request message of this call did not come within {REQUEST_WAIT_S:g} s of its start: "
                           "send it with the call")
    except (grpc.RpcError, StopIteration) as exc:
        if stopping.is_set():
            raise Abort(grpc.StatusCode.UNAVAILABLE, "the server stopped before this call's request message came "
                                                     "(its --grace ran out): send it again once the server is "
                                                     "back") from None
        if isinstance(exc, grpc.RpcError):
            raise
        # (grpcio ends the stream so too when the message is over --max-message-mb: the client reads gRPC's own
        # RESOURCE_EXHAUSTED, the log this; a 40 MiB Search said the client sent none)
        raise Abort(grpc.StatusCode.INVALID_ARGUMENT, "the call ended without a request message this server could "
                                                      "read (none was sent, or one larger than it takes: "
                                                      "--max-message-mb; a unary call carries exactly one)") from None


class _Requests:
    """The request stream, parsed message by message; ``ended`` once the iterator ran out normally."""

    def __init__(self, request_type: Any, raw: Iterator[bytes]) -> None:
        self.request_type = request_type
        self.raw = raw
        self.ended = False
        self.position = 0

    def __iter__(self) -> _Requests:
        return self

    def __next__(self) -> Any:
        try:
            data = next(self.raw)
        except StopIteration:
            self.ended = True
            raise
        index, self.position = self.position, self.position + 1
        try:
            return wire.parse(self.request_type, data)
        except FieldError as exc:
            raise FieldError(f"batches[{index}].{exc.field}", str(exc).split(": ", 1)[-1]) from None


def status_of(exc: Exception, name: str, request_id: str,
              context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str, bool]:
    """(code, message, retryable) for an exception a handler raised."""
    if isinstance(exc, grpc.RpcError):  # reading a client stream that ended badly
        if expired(context):
            return grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded while reading the request stream", True
        # (grpcio tells neither apart; the client reads gRPC's own RESOURCE_EXHAUSTED for a message too large)
        return grpc.StatusCode.CANCELLED, ("the request stream broke off: the client cancelled it, or sent a "
                                           "message larger than this server takes (--max-message-mb)"), True
    if disk_full(exc):  # the operator's to fix, not the caller's to retry (probe 49, O2: said UNAVAILABLE, "resend")
        log.error("no space left on the server's disk in %s (request %s): %s", name, request_id, exc)
        done = "; the batches of a stream before it are committed" if name == "Ingest" else ""
        return (grpc.StatusCode.RESOURCE_EXHAUSTED, "no space left on the server's disk (its trace store or index): "
                f"the {'write in hand' if name == 'Ingest' else 'request'} was not done (request id {request_id})"
                f"{done}. Free space on the server, then send again", False)
    if isinstance(exc, FieldError):
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc), True
    if isinstance(exc, ValidationError):
        return grpc.StatusCode.INVALID_ARGUMENT, validation_message(exc), True
    if isinstance(exc, TraceAccessError):  # its text names the store's location: log it, don't send it
        log.info("trace_uri refused (request %s): %s", request_id, exc)
        return grpc.StatusCode.INVALID_ARGUMENT, "trace_uri: not a trace URI of this server for this key's tenant", True
    if isinstance(exc, TraceNotFoundError):
        return grpc.StatusCode.NOT_FOUND, "trace_uri: no such trace", True
    if isinstance(exc, TraceCorruptError):
        log.error("corrupt trace (request %s): %s", request_id, exc)
        return grpc.StatusCode.DATA_LOSS, f"stored trace is unreadable (request id {request_id})", True
    if isinstance(exc, TraceStoreBusy):  # every trace-read slot this tenant may use is taken: not the store's fault
        log.warning("trace reads busy (request %s): %s", request_id, exc)
        return grpc.StatusCode.UNAVAILABLE, f"trace reads busy: retry shortly (request id {request_id})", False
    if isinstance(exc, TraceStoreError):  # slow or down; the store already retried
        log.error("trace store failed (request %s): %s", request_id, exc)
        return grpc.StatusCode.UNAVAILABLE, f"trace store unavailable (request id {request_id})", False
    if isinstance(exc, IngestError):  # a write the store or index refused after the indexer's retries
        log.error("ingest failed (request %s): %s", request_id, exc)
        return (grpc.StatusCode.UNAVAILABLE, "writing failed: the trace store or the index is unavailable "
                f"(request id {request_id}); earlier batches of this stream are committed: resend the rest", True)
    if isinstance(exc, PermissionError):
        return grpc.StatusCode.PERMISSION_DENIED, str(exc), True
    if isinstance(exc, LookupError):
        return grpc.StatusCode.NOT_FOUND, str(exc).strip("'\""), True
    if isinstance(exc, ValueError):  # the library's own checks: they name the argument first
        return grpc.StatusCode.INVALID_ARGUMENT, str(exc), True
    if type(exc).__module__.startswith("pymilvus"):
        log.exception("index call failed in %s (request %s)", name, request_id)
        return grpc.StatusCode.UNAVAILABLE, f"index unavailable (request id {request_id})", True
    log.exception("unexpected error in %s (request %s)", name, request_id)
    return grpc.StatusCode.INTERNAL, f"internal error (request id {request_id})", True


def validation_message(exc: ValidationError, prefix: str = "") -> str:
    """The first three errors of a pydantic ValidationError as ``field: message; ...``."""
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "record"
        parts.append(f"{prefix}{where}: {err['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")
