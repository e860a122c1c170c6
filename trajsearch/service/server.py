"""The gRPC server: the library façade behind API keys, bounds, deadlines and logs.

One server process owns the data directory of the embedded default (Milvus
Lite allows one process per directory); every other process goes through it.
Against a Milvus server URI several servers can share one collection.

Every RPC goes through :meth:`Service._call`: assign a request id, find the
key's principal (``UNAUTHENTICATED`` without one), check the role
(``PERMISSION_DENIED``), check the deadline, run the handler with the key's
tenant, map exceptions to status codes, count, log one JSON line.
Handlers never read a tenant from the request: the proto has no such field,
and an ingested record naming another tenant is rejected.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import signal
import threading
import time
import uuid
from collections import OrderedDict
from concurrent import futures
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from pydantic import ValidationError

from ..model import Trajectory
from ..results import Hit
from ..search import TrajSearch
from ..vocab import MODES
from ..store.traces import TraceAccessError, TraceCorruptError, TraceNotFoundError, TraceStoreError
from . import convert
from . import validate as v
from .auth import KeyRing, Principal, key_from_metadata
from .observe import Metrics, log_event
from .protos import pb2, pb2_grpc

log = logging.getLogger("trajsearch.service")

SERVICE_NAME = "trajsearch.v1.TrajSearch"
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_MAX_SESSIONS = 10_000
_TOOLS_LIMITS = v.Limits(max_values=256)  # an agent may have many tools; each name is still bounded


class _Abort(Exception):
    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Call:
    """What a handler knows about its caller: the key's principal and the request id."""

    principal: Principal
    request_id: str
    context: grpc.ServicerContext

    @property
    def tenant(self) -> str:
        return self.principal.tenant


def rpc(role: str = "read") -> Callable:
    """Mark a servicer method as an RPC needing ``role``; the wrapper does auth, logs, metrics."""

    def decorate(handler: Callable) -> Callable:
        @functools.wraps(handler)
        def method(self: Service, request: Any, context: grpc.ServicerContext) -> Any:
            return self._call(handler.__name__, role, handler, request, context)

        return method

    return decorate


def _narrow(requested: tuple[str, ...], pinned: tuple[str, ...]) -> tuple[str, ...] | None:
    """Requested values ANDed with a key's pinned ones; None when nothing can match."""
    if not pinned:
        return requested
    if not requested:
        return pinned
    both = tuple(x for x in requested if x in pinned)
    return both or None


def _validation_message(exc: ValidationError, prefix: str = "") -> str:
    parts = []
    for err in exc.errors()[:3]:
        where = ".".join(str(p) for p in err["loc"]) or "record"
        parts.append(f"{prefix}{where}: {err['msg']}")
    more = len(exc.errors()) - 3
    return "; ".join(parts) + (f" (and {more} more)" if more > 0 else "")


class Service(pb2_grpc.TrajSearchServicer):
    """The servicer. ``ts`` is shared by all calls; writes are serialised by one lock."""

    def __init__(self, ts: TrajSearch, keys: KeyRing, *, limits: v.Limits | None = None,
                 metrics: Metrics | None = None, search_cap: int | None = None) -> None:
        self.ts = ts
        self.keys = keys
        self.limits = limits or v.Limits()
        self.metrics = metrics or Metrics()
        self.search_cap = search_cap
        self._write_lock = threading.Lock()
        self._sessions: OrderedDict[tuple[str, str], tuple[Any, threading.Lock]] = OrderedDict()
        self._sessions_lock = threading.Lock()
        self._rt: Any = None

    # -- the common path ---------------------------------------------------------------------

    def _call(self, name: str, role: str, handler: Callable, request: Any, context: grpc.ServicerContext) -> Any:
        metadata = context.invocation_metadata()
        supplied = next((val for key, val in metadata if key == "x-request-id"), "")
        request_id = supplied if isinstance(supplied, str) and _REQUEST_ID_RE.match(supplied) else uuid.uuid4().hex
        context.send_initial_metadata((("x-request-id", request_id),))
        started = time.perf_counter()
        self.metrics.enter()
        code, message, principal, fields = grpc.StatusCode.OK, "", None, {}
        try:
            principal = self.keys.authenticate(key_from_metadata(metadata))
            if principal is None:
                raise _Abort(grpc.StatusCode.UNAUTHENTICATED,
                             "missing or unknown API key: send metadata 'authorization: Bearer <key>'")
            if not principal.can(role):
                raise _Abort(grpc.StatusCode.PERMISSION_DENIED,
                             f"{name} needs a key with role 'write'; this key's role is '{principal.role}'")
            call = Call(principal, request_id, context)
            self._check_deadline(call)
            result = handler(self, request, call)
            if isinstance(result, tuple):
                result, fields = result
            if not context.is_active():  # the client gave up (deadline or cancel) while we worked
                code = (grpc.StatusCode.DEADLINE_EXCEEDED if _expired(context) else grpc.StatusCode.CANCELLED)
            return result
        except _Abort as exc:
            code, message = exc.code, str(exc)
        except Exception as exc:  # noqa: BLE001 (every failure becomes a status, none escapes raw)
            code, message = self._status_of(exc, name, request_id, context)
        finally:
            ms = (time.perf_counter() - started) * 1000
            self.metrics.record(name, code.name, ms)
            log_event(
                log, logging.INFO if code in (grpc.StatusCode.OK,) else logging.WARNING, "rpc",
                method=name, request_id=request_id, code=code.name, ms=round(ms, 2),
                key_id=principal.key_id if principal else None, tenant=principal.tenant if principal else None,
                peer=context.peer(), **({"error": message} if message else {}), **fields,
            )
        context.abort(code, message)

    def _status_of(self, exc: Exception, name: str, request_id: str,
                   context: grpc.ServicerContext) -> tuple[grpc.StatusCode, str]:
        if isinstance(exc, grpc.RpcError):  # reading a client stream that ended badly
            if _expired(context):
                return grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded while reading the request stream"
            return grpc.StatusCode.CANCELLED, "the client cancelled the request stream"
        if isinstance(exc, v.FieldError):
            return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
        if isinstance(exc, ValidationError):
            return grpc.StatusCode.INVALID_ARGUMENT, _validation_message(exc)
        if isinstance(exc, TraceAccessError):
            return grpc.StatusCode.INVALID_ARGUMENT, f"trace_uri: {exc}"
        if isinstance(exc, TraceNotFoundError):
            return grpc.StatusCode.NOT_FOUND, f"trace_uri: {exc}"
        if isinstance(exc, TraceCorruptError):
            log.error("corrupt trace (request %s): %s", request_id, exc)
            return grpc.StatusCode.DATA_LOSS, f"stored trace is unreadable (request id {request_id})"
        if isinstance(exc, TraceStoreError):
            log.error("trace store failed (request %s): %s", request_id, exc)
            return grpc.StatusCode.UNAVAILABLE, f"trace store unavailable (request id {request_id})"
        if isinstance(exc, PermissionError):
            return grpc.StatusCode.PERMISSION_DENIED, str(exc)
        if isinstance(exc, LookupError):
            return grpc.StatusCode.NOT_FOUND, str(exc).strip("'\"")
        if isinstance(exc, ValueError):
            return grpc.StatusCode.INVALID_ARGUMENT, str(exc)
        if type(exc).__module__.startswith("pymilvus"):
            log.exception("index call failed in %s (request %s)", name, request_id)
            return grpc.StatusCode.UNAVAILABLE, f"index unavailable (request id {request_id})"
        log.exception("unexpected error in %s (request %s)", name, request_id)
        return grpc.StatusCode.INTERNAL, f"internal error (request id {request_id})"

    @staticmethod
    def _check_deadline(call: Call) -> None:
        if _expired(call.context):
            raise _Abort(grpc.StatusCode.DEADLINE_EXCEEDED, "deadline exceeded before the work was done")

    # -- reads -------------------------------------------------------------------------------

    @rpc()
    def Search(self, req: Any, call: Call) -> Any:
        lim = self.limits
        text = v.text("text", req.text, lim)
        k = v.bounded("k", req.k, 1, lim.max_k, default=10)
        group_size = v.bounded("group_size", req.group_size, 1, 10, default=1)
        mode = v.choice("mode", req.mode, MODES, default="auto")
        env = _narrow(v.strings("env_versions", req.env_versions, lim), call.principal.env_versions)
        policy = _narrow(v.strings("policy_versions", req.policy_versions, lim), call.principal.policy_versions)
        kwargs: dict[str, Any] = dict(
            levels=v.levels("levels", req.levels, lim),
            outcome=v.outcomes("outcomes", req.outcomes, lim),
            task_family=v.strings("task_families", req.task_families, lim),
            tools=v.strings("tools", req.tools, lim),
            exclude_trajectory_ids=v.identifiers("exclude_trajectory_ids", req.exclude_trajectory_ids, lim),
            k=k, group_by_trajectory=not req.no_group, group_size=group_size,
        )
        kwargs["mode"] = mode
        if env is None or policy is None:  # the key's pinned versions exclude every requested one
            return pb2.SearchResponse(), {"hits": 0}
        self._check_deadline(call)
        hits = self.ts.search(text, tenant=call.tenant, env_version=env, policy_version=policy, **kwargs)
        return pb2.SearchResponse(hits=[convert.hit_to_pb(h) for h in hits]), {"hits": len(hits), "k": k}

    @rpc()
    def SimilarRuns(self, req: Any, call: Call) -> Any:
        lim = self.limits
        anchor = req.WhichOneof("anchor")
        if anchor is None:
            raise v.FieldError("anchor", "give exactly one of trajectory_id or text")
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id) if anchor == "trajectory_id" else None
        text = v.text("text", req.text, lim) if anchor == "text" else None
        k = v.bounded("k", req.k, 1, lim.max_k, default=5)
        outcomes = v.outcomes("outcomes", req.outcomes, lim)
        mode = v.choice("mode", req.mode, MODES, default="hybrid")
        env = _narrow(v.strings("env_versions", req.env_versions, lim), call.principal.env_versions)
        if env is None:
            return pb2.SimilarRunsResponse(), {"matches": 0}
        try:
            matches = self.ts.similar_runs(trajectory_id, text, tenant=call.tenant, k=k, outcome=outcomes,
                                           env_version=env, mode=mode)
        except LookupError:
            raise _Abort(grpc.StatusCode.NOT_FOUND, f"trajectory_id: no trajectory {trajectory_id!r}") from None
        return pb2.SimilarRunsResponse(matches=[convert.match_to_pb(m) for m in matches]), {"matches": len(matches)}

    @rpc()
    def Expand(self, req: Any, call: Call) -> Any:
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id)
        step_index = v.bounded("step_index", req.step_index, 0, 10**6)
        step_end = v.bounded("step_end", req.step_end or step_index, step_index, 10**6)
        half = self.limits.max_context_steps
        before = v.bounded("before", req.before, 0, half)
        after = v.bounded("after", req.after, 0, half)
        if before + after > half:
            raise v.FieldError("after", f"before + after must be at most {half}")
        hit = Hit(id="", score=0.0, level="step", text="", tenant=call.tenant, trajectory_id=trajectory_id,
                  step_index=step_index, step_end=step_end, trace_uri="", outcome="")
        steps = self.ts.expand(hit, before=before, after=after, tenant=call.tenant)
        return pb2.ExpandResponse(steps=[convert.step_to_pb(s) for s in steps]), {"steps": len(steps)}

    @rpc()
    def Run(self, req: Any, call: Call) -> Any:
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id)
        level = v.choice("level", req.level, ("task", "summary", "failure"), default="task")
        hit = self.ts.run(trajectory_id, tenant=call.tenant, level=level)
        if hit is None:
            return pb2.RunResponse(found=False)
        return pb2.RunResponse(found=True, hit=convert.hit_to_pb(hit))

    @rpc()
    def GetTrace(self, req: Any, call: Call) -> Any:
        uri = v.text("trace_uri", req.trace_uri, self.limits, max_chars=1024)
        trajectory = self.ts.get_trace(uri, tenant=call.tenant)
        return pb2.GetTraceResponse(trajectory_json=trajectory.model_dump_json())

    @rpc()
    def Stats(self, req: Any, call: Call) -> Any:
        data = self.ts.stats(tenant=call.tenant)
        return pb2.StatsResponse(
            tenant=call.tenant, trajectories=data["trajectories"], rows=data["rows"],
            rows_by_level=data["rows_by_level"], runs_by_outcome=data["runs_by_outcome"], embedder=data["embedder"],
        )

    @rpc()
    def Metrics(self, req: Any, call: Call) -> Any:
        snap = self.metrics.snapshot()
        return pb2.MetricsResponse(
            methods=[pb2.MethodMetrics(method=name, **stats) for name, stats in snap["methods"].items()],
            in_flight=snap["in_flight"], uptime_s=snap["uptime_s"],
        )

    @rpc()
    def WhoAmI(self, req: Any, call: Call) -> Any:
        return pb2.WhoAmIResponse(tenant=call.tenant, role=call.principal.role, key_id=call.principal.key_id)

    # -- agent runtime -----------------------------------------------------------------------

    def _runtime(self) -> Any:
        """The agent runtime over this server's façade (built on first use)."""
        with self._sessions_lock:
            if self._rt is None:
                from ..runtime import Runtime, RuntimeConfig

                config = RuntimeConfig(tool_cap=self.search_cap) if self.search_cap else RuntimeConfig()
                self._rt = Runtime(self.ts, config)
            return self._rt

    def _runtime_context(self, call: Call, ctx: Any) -> Any | None:
        """The trusted context: the key's tenant, versions narrowed by the key's pins (None: no match)."""
        from ..runtime import RuntimeContext

        lim = self.limits
        env = _narrow(v.strings("context.env_versions", ctx.env_versions, lim), call.principal.env_versions)
        policy = _narrow(v.strings("context.policy_versions", ctx.policy_versions, lim), call.principal.policy_versions)
        tools = v.strings("context.tools_available", ctx.tools_available, _TOOLS_LIMITS)
        if env is None or policy is None:
            return None
        now = datetime.fromtimestamp(ctx.now, timezone.utc) if ctx.now > 0 else datetime.now(timezone.utc)
        return RuntimeContext(tenant=call.tenant, env_version=env, policy_version=policy, tools_available=tools, now=now)

    @rpc()
    def Exemplars(self, req: Any, call: Call) -> Any:
        return self._advice(call, "exemplars", v.text("task", req.task, self.limits), req)

    @rpc()
    def Warnings(self, req: Any, call: Call) -> Any:
        return self._advice(call, "warnings", v.text("text", req.text, self.limits), req)

    def _advice(self, call: Call, kind: str, text: str, req: Any) -> Any:
        rt = self._runtime()
        k = v.bounded("k", req.k, 1, 10, default=0) or None
        budget = v.bounded("token_budget", req.token_budget, 50, 32_000, default=0) or None
        ctx = self._runtime_context(call, req.context)
        if ctx is None:  # the key's pins and the asked versions do not meet: nothing applies
            empty = "plan_from_scratch" if kind == "exemplars" else ""
            return pb2.ContextResponse(strategy=empty), {"items": 0}
        self._check_deadline(call)
        result = rt.advice(kind, text, ctx, k=k, budget=budget)
        items = [pb2.ContextItem(provenance=convert.provenance_to_pb(item["provenance"]), text=item["text"],
                                 json=json.dumps(item["view"] if item["view"] is not None else item["provenance"],
                                                 ensure_ascii=False, default=str))
                 for item in result.items]
        reply = pb2.ContextResponse(strategy=result.strategy, items=items, text=result.text, json=result.json)
        return reply, {"items": len(items), **({"strategy": result.strategy} if result.strategy else {})}

    @rpc()
    def SearchPastRuns(self, req: Any, call: Call) -> Any:
        rt = self._runtime()
        session_id = v.text("session_id", req.session_id, self.limits, max_chars=128)
        ctx = self._runtime_context(call, req.context)
        arguments: dict[str, Any] = {"query": req.query}
        if req.k:
            arguments["k"] = req.k
        if req.kind:
            arguments["kind"] = req.kind
        if ctx is None:  # the key's pins exclude the requested versions: nothing is applicable
            result: dict[str, Any] = {"status": "ok", "kind": req.kind or "exemplars", "query": req.query, "results": []}
        else:
            tool, lock = self._session_tool(rt, call, session_id, ctx)
            self._check_deadline(call)
            with lock:  # two concurrent calls of one session must not both pass the cap
                tool.ctx = ctx
                result = tool(arguments)
        return pb2.SearchPastRunsResponse(
            result_json=json.dumps(result, ensure_ascii=False, default=str),
            text=result.get("instruction") or result.get("error") or "",
            capped=result.get("status") == "limit_reached", searches_left=int(result.get("searches_left", 0)),
        ), {"status": result.get("status"), "session": session_id[:16]}

    def _session_tool(self, rt: Any, call: Call, session_id: str, ctx: Any) -> tuple[Any, threading.Lock]:
        """The session's tool executor (its use count is the cap), oldest sessions evicted first."""
        key = (call.principal.key_id, session_id)
        with self._sessions_lock:
            entry = self._sessions.get(key)
            if entry is None:
                entry = (rt.tool(ctx), threading.Lock())
                self._sessions[key] = entry
                if len(self._sessions) > _MAX_SESSIONS:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(key)
            return entry

    # -- writes ------------------------------------------------------------------------------

    @rpc(role="write")
    def Ingest(self, request_iterator: Iterator[Any], call: Call) -> Any:
        lim = self.limits
        response = pb2.IngestResponse()
        position = 0
        for batch in request_iterator:
            self._check_deadline(call)
            if len(batch.records) > lim.max_batch_records:
                raise v.FieldError("records", f"a batch holds at most {lim.max_batch_records} records, "
                                              f"got {len(batch.records)}")
            if position + len(batch.records) > lim.max_stream_records:
                raise v.FieldError("records", f"a stream holds at most {lim.max_stream_records} records: "
                                              "open another stream for the rest")
            accepted: list[tuple[Any, Trajectory]] = []
            for record in batch.records:
                result = pb2.RecordResult(position=position, source=record.source[:1024])
                position += 1
                trajectory, reason = self._parse_record(record.json, call.tenant)
                if trajectory is None:
                    result.status = pb2.RecordResult.REJECTED
                    result.reason = reason
                    result.trajectory_id = _loose_id(record.json)
                    response.rejected += 1
                else:
                    result.status = pb2.RecordResult.ACCEPTED
                    result.trajectory_id = trajectory.trajectory_id
                    accepted.append((result, trajectory))
                response.results.append(result)
            if accepted:
                with self._write_lock:
                    report = self.ts.add([t for _, t in accepted])
                response.ingested += report.ingested
                response.unchanged += report.unchanged
                response.rows_written += report.rows
        return response, {"records": position, "ingested": response.ingested, "rejected": response.rejected}

    @staticmethod
    def _parse_record(text: str, tenant: str) -> tuple[Trajectory | None, str]:
        try:
            data = json.loads(text)
        except ValueError as exc:
            return None, f"json: not valid JSON ({exc})"
        if not isinstance(data, dict):
            return None, "json: expected one trajectory object"
        named = data.setdefault("tenant", tenant)
        if named != tenant:
            return None, f"tenant: {str(named)[:64]!r} is not the tenant of this API key"
        try:
            return Trajectory.model_validate(data), ""
        except ValidationError as exc:
            return None, _validation_message(exc)

    @rpc(role="write")
    def Delete(self, req: Any, call: Call) -> Any:
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id)
        with self._write_lock:
            found = self.ts.run(trajectory_id, tenant=call.tenant) is not None
            if found:
                self.ts.delete(trajectory_id, tenant=call.tenant)
        return pb2.DeleteResponse(deleted=found)


def _loose_id(text: str) -> str:
    """A trajectory id to echo in a rejection, if the record has a plausible one."""
    match = re.search(r'"trajectory_id"\s*:\s*"([A-Za-z0-9_.:@/+=-]{1,192})"', text[:4096])
    return match.group(1) if match else ""


def _expired(context: grpc.ServicerContext) -> bool:
    remaining = context.time_remaining()
    return remaining is not None and remaining <= 0


# -- the server process ------------------------------------------------------------------------


@dataclass(frozen=True)
class TLS:
    """Server certificate and key (PEM paths); with ``client_ca`` clients must present a cert."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    def credentials(self) -> grpc.ServerCredentials:
        pair = [(Path(self.key).read_bytes(), Path(self.cert).read_bytes())]
        if self.client_ca:
            return grpc.ssl_server_credentials(pair, root_certificates=Path(self.client_ca).read_bytes(),
                                               require_client_auth=True)
        return grpc.ssl_server_credentials(pair)


class ServiceServer:
    """A running server: ``start()``, then ``stop(grace)`` drains in-flight calls and closes the index."""

    def __init__(self, ts: TrajSearch, keys: KeyRing, *, address: str = "127.0.0.1:50051",
                 tls: TLS | None = None, limits: v.Limits | None = None, max_workers: int = 8,
                 max_concurrent_rpcs: int = 64, search_cap: int | None = None, close_index: bool = True) -> None:
        self.limits = limits or v.Limits()
        self.metrics = Metrics()
        self.service = Service(ts, keys, limits=self.limits, metrics=self.metrics, search_cap=search_cap)
        self.ts = ts
        self.close_index = close_index
        options = [
            ("grpc.max_receive_message_length", self.limits.max_message_bytes),
            ("grpc.max_send_message_length", self.limits.max_message_bytes),
            ("grpc.so_reuseport", 0),  # a second server on the same port must fail, not share it
        ]
        self.server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="rpc"),
                                  options=options, maximum_concurrent_rpcs=max_concurrent_rpcs)
        pb2_grpc.add_TrajSearchServicer_to_server(self.service, self.server)
        self.health = health.HealthServicer(experimental_non_blocking=True)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        try:
            if tls:
                self.port = self.server.add_secure_port(address, tls.credentials())
            else:
                self.port = self.server.add_insecure_port(address)
        except RuntimeError as exc:
            raise OSError(f"cannot listen on {address}: {exc}") from None
        if not self.port:
            raise OSError(f"cannot listen on {address}")
        self.address = f"{address.rsplit(':', 1)[0]}:{self.port}"
        self._stopped = threading.Event()

    def start(self) -> ServiceServer:
        self.server.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log_event(log, logging.INFO, "serving", address=self.address, uri=self.ts.location[0])
        return self

    def stop(self, grace: float = 10.0) -> None:
        """Refuse new calls, let in-flight ones finish (up to ``grace`` s), then close the index."""
        if self._stopped.is_set():
            return
        self._stopped.set()
        log_event(log, logging.INFO, "draining", in_flight=self.metrics.in_flight, grace_s=grace)
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()
        if self.close_index:
            self.ts.close()
        log_event(log, logging.INFO, "stopped")

    def wait(self) -> None:
        self.server.wait_for_termination()

    def __enter__(self) -> ServiceServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop(grace=2.0)


def serve_forever(server: ServiceServer, *, grace: float = 10.0) -> None:
    """Run until SIGTERM / SIGINT, then drain in-flight calls (a second signal stops at once)."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        if stop.is_set():
            server.server.stop(0)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.start()
        while not stop.wait(0.5):
            pass
        server.stop(grace)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
