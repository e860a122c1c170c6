"""The RPC handlers: validate the request, call the library façade inside the key's tenant, convert.

Every handler receives the parsed request and a :class:`~.interceptor.Call`
(the key's principal, the request id); authentication, roles, deadlines,
status codes, metrics and logs are the interceptor's. Handlers never read a
tenant from the request: the proto has no such field, and an ingested record
naming another tenant is rejected. A key's pinned versions bound every read
and write (see :mod:`.auth`).
"""

from __future__ import annotations

import json
import re
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

import grpc
from cachetools import LRUCache, TTLCache
from pydantic import ValidationError

from ..bounds import MAX_EXAMPLES, MAX_EXPORT_RUNS, MAX_GROUP_SIZE, MAX_MODES
from ..indexer import Indexer, superseded
from ..model import MAX_TOOL_VALUES, Trajectory, former_ids
from ..represent import received_mark
from ..results import OTHER_RUN_REPLACED, Hit
from ..search import TrajSearch, said_meant
from ..store.filters import Filters
from ..store.traces import TraceNotFoundError
from ..toolspec import MAX_CALL_TEXT_CHARS
from ..vocab import FAILED_OUTCOMES, KINDS, MODES
from ..weak_match import weak_match_note
from . import convert
from . import validate as v
from .auth import narrow
from .interceptor import _REQUEST_ID_RE, Abort, Call, next_within, requires, validation_message
from .observe import Metrics
from .protos import pb2, pb2_grpc
from .validate import INGEST_CALL_HEADER

MAX_SESSIONS = 10_000  # per API key: a key's new sessions evict only that key's oldest ones
#: Why a pinned key may not write a record whose id is a run outside its pins. Writing would replace
#: (destroy) that run; the reason names only the id the caller sent, never the run's versions or
#: content. The refusal itself tells that the id is taken, which no behaviour can hide short of
#: writing the record under another id: the least a write can reveal.
HIDDEN_ID = ("trajectory_id: this API key cannot write a run of this id (it names a run this key may "
             "not see or replace); use another trajectory_id")
#: Why a pinned key may not write a record naming, in ``metadata.supersedes``, a run outside its pins: ingest
#: would remove that run (see ``indexer``). As HIDDEN_ID, it names nothing of the run.
HIDDEN_SUPERSEDED = ("metadata.supersedes: this API key cannot remove a run it names (a run this key may not see "
                     "or replace); leave it out")
#: The same for ``metadata.former_ids`` (``model.FORMER_IDS``), whose run ingest removes when it holds this content.
HIDDEN_FORMER = HIDDEN_SUPERSEDED.replace("metadata.supersedes", "metadata.former_ids", 1)
_TOOLS_LIMITS = v.Limits(max_values=MAX_TOOL_VALUES)  # an agent may have many tools; each name is still bounded
#: An export pages by excluding the runs it has: at most 32 excluded, ``export -k 300 --server`` stopped at 100 runs
#: where the embedded store wrote all. Each id is still bounded, and the request by the message size.
_EXCLUDE_LIMITS = v.Limits(max_values=MAX_EXPORT_RUNS)
_TOOL_MAX_K = 5  # the runtime tool's bounds (trajsearch.runtime.tool)
#: Said with a k over this server's bound, lower than the library's (a caller reads the library's in the docs).
_SERVER_K = " (this server's --max-k)"
#: How long an Ingest stream may send nothing before the server ends it (``serve --ingest-idle``). A stream has no
#: deadline (an ingest lasts as long as its input), so a client frozen or gone (SIGSTOP, a host lost without a
#: connection reset) held its write slot for good; a client's own input is read between batches, run by run.
INGEST_IDLE_S = 600.0
#: A call's indexer is kept between its streams while it remembers at most this many runs (about 250 bytes each);
#: past it the next stream starts a new one, and counts a run it shares with an earlier stream again.
_CALL_RUNS_KEPT = 500_000


class Service(pb2_grpc.TrajSearchServicer):
    """The servicer. ``ts`` is shared by all calls; writes are serialised by one lock."""

    def __init__(self, ts: TrajSearch, *, limits: v.Limits | None = None, metrics: Metrics | None = None,
                 search_cap: int | None = None, write_slots: int = 4, ingest_idle: float = INGEST_IDLE_S) -> None:
        self.ts = ts
        self.limits = limits or v.Limits()
        self.metrics = metrics or Metrics()
        self.search_cap = search_cap
        self._write_lock = threading.Lock()
        # writes wait on one lock and on the trace store: at most write_slots calls may hold worker threads
        self._writers = threading.BoundedSemaphore(write_slots)
        self.write_slots = write_slots
        self.ingest_idle = ingest_idle
        self._writes = 0  # writes in progress, for drain(): the index must outlive them
        self._holding: dict[tuple[str, str], int] = {}  # the write slots held, by tenant and call ("Ingest", "Delete")
        self._writes_done = threading.Condition()
        self._draining = threading.Event()
        self.halting = threading.Event()  # the server is stopping: gRPC may cancel the calls still running (read by
        # the interceptor too: a unary call waiting for its message then)
        # (tenant, key id) -> LRU of session id -> (tool, lock); the keys are the key ring's, so few
        self._sessions: dict[tuple[str, str], LRUCache] = {}
        self._sessions_lock = threading.Lock()
        self._rt: Any = None
        # (tenant, key id, call) -> the indexer of that Ingest call, between two of its streams (see INGEST_CALL_HEADER)
        self._call_indexers: TTLCache = TTLCache(maxsize=max(4, write_slots), ttl=ingest_idle)

    # -- reads -------------------------------------------------------------------------------

    def Search(self, req: Any, call: Call) -> Any:
        lim = self.limits
        text = v.searched_by("text", req.text, lim)
        k = v.bounded("k", req.k, 1, lim.max_k, default=10, note=_SERVER_K)
        group_size = v.bounded("group_size", req.group_size, 1, MAX_GROUP_SIZE, default=1)
        mode = v.choice("mode", req.mode, MODES, default="auto")
        env = narrow(v.strings("env_versions", req.env_versions, lim), call.principal.env_versions)
        policy = narrow(v.strings("policy_versions", req.policy_versions, lim), call.principal.policy_versions)
        kwargs: dict[str, Any] = dict(
            levels=v.levels("levels", req.levels, lim),
            outcome=v.outcomes("outcomes", req.outcomes, lim),
            task_family=v.strings("task_families", req.task_families, lim),
            tools=v.strings("tools", req.tools, lim),
            exclude_trajectory_ids=v.identifiers("exclude_trajectory_ids", req.exclude_trajectory_ids, _EXCLUDE_LIMITS),
            k=k, group_by_trajectory=not req.no_group, group_size=group_size, mode=mode,
            created_after=_created_after(req),
        )
        if env is None or policy is None:  # the key's pinned versions exclude every requested one
            call.note(hits=0)
            return pb2.SearchResponse()
        call.check_deadline()
        hits = self._outcomes_told(call, self.ts.search(text, tenant=call.tenant, env_version=env,
                                                        policy_version=policy, **kwargs))
        call.note(hits=len(hits), k=k)
        return pb2.SearchResponse(hits=[convert.hit_to_pb(h) for h in hits], note=weak_match_note(hits) or "")

    def SimilarRuns(self, req: Any, call: Call) -> Any:
        lim = self.limits
        anchor = req.WhichOneof("anchor")
        if anchor is None:
            raise v.FieldError("anchor", "give exactly one of trajectory_id or text")
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id) if anchor == "trajectory_id" else None
        text = v.searched_by("text", req.text, lim) if anchor == "text" else None
        k = v.bounded("k", req.k, 1, lim.max_k, default=5, note=_SERVER_K)
        outcomes = v.outcomes("outcomes", req.outcomes, lim)
        mode = v.choice("mode", req.mode, MODES, default="hybrid")
        created_after = _created_after(req)
        env = narrow(v.strings("env_versions", req.env_versions, lim), call.principal.env_versions)
        policy = narrow(v.strings("policy_versions", req.policy_versions, lim), call.principal.policy_versions)
        if trajectory_id is not None and self._visible_run(call, trajectory_id) is None:
            raise self._no_run(call, trajectory_id)
        if env is None or policy is None:  # the key's pinned versions exclude every requested one
            call.note(matches=0)
            return pb2.SimilarRunsResponse()
        try:
            matches = self.ts.similar_runs(trajectory_id, text, tenant=call.tenant, k=k, outcome=outcomes,
                                           env_version=env, policy_version=policy, created_after=created_after,
                                           mode=mode)
        except LookupError:
            raise self._no_run(call, trajectory_id) from None
        self._outcomes_told(call, [m.best for m in matches])
        call.note(matches=len(matches))
        return pb2.SimilarRunsResponse(matches=[convert.match_to_pb(m) for m in matches],
                                       note=weak_match_note(m.best for m in matches) or "")

    def Expand(self, req: Any, call: Call) -> Any:
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id)
        step_index = v.bounded("step_index", req.step_index, 0, 10**6)
        step_end = v.bounded("step_end", req.step_end or step_index, step_index, 10**6)
        half = self.limits.max_context_steps
        before = v.bounded("before", req.before, 0, half)
        after = v.bounded("after", req.after, 0, half)
        if before + after > half:
            raise v.FieldError("after", f"before + after must be at most {half}")
        if call.principal.env_versions or call.principal.policy_versions:
            if self._visible_run(call, trajectory_id) is None:  # outside the key's pins: like another tenant's
                call.note(steps=0)
                return pb2.ExpandResponse()
        hit = Hit(id="", score=0.0, level="step", text="", tenant=call.tenant, trajectory_id=trajectory_id,
                  step_index=step_index, step_end=step_end, trace_uri="", outcome="")
        steps = self.ts.expand(hit, before=before, after=after, tenant=call.tenant)
        call.note(steps=len(steps))
        return pb2.ExpandResponse(steps=[convert.step_to_pb(s) for s in steps])

    def Run(self, req: Any, call: Call) -> Any:
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id)
        level = v.choice("level", req.level, ("task", "summary", "failure"), default="task")
        hit = self.ts.run(trajectory_id, tenant=call.tenant, level=level)
        if hit is None or not call.principal.sees(hit.env_version or None, hit.policy_version or None):
            return pb2.RunResponse(found=False)
        return pb2.RunResponse(found=True, hit=convert.hit_to_pb(hit))

    def GetTrace(self, req: Any, call: Call) -> Any:
        uri = v.text("trace_uri", req.trace_uri, self.limits, max_chars=1024)
        trajectory = self.ts.get_trace(uri, tenant=call.tenant)
        if not call.principal.sees(trajectory.env_version, trajectory.policy_version):
            raise TraceNotFoundError(uri)  # outside the key's pins: answered exactly like a missing trace
        return pb2.GetTraceResponse(trajectory_json=trajectory.model_dump_json())

    def Stats(self, req: Any, call: Call) -> Any:
        pins = call.principal  # a pinned key counts only the runs it can see, as its searches find
        data = self.ts.stats(tenant=call.tenant, env_version=pins.env_versions, policy_version=pins.policy_versions)
        return pb2.StatsResponse(
            tenant=call.tenant, trajectories=data["trajectories"], rows=data["rows"],
            rows_by_level=data["rows_by_level"], runs_by_outcome=data["runs_by_outcome"], embedder=data["embedder"],
            lexical=data["lexical"], window_size=data["window"]["size"], window_stride=data["window"]["stride"],
        )

    def Metrics(self, req: Any, call: Call) -> Any:
        snap = self.metrics.snapshot(tenant=call.tenant)  # this key's tenant only; the operator has --metrics
        return pb2.MetricsResponse(
            methods=[pb2.MethodMetrics(method=name, **stats) for name, stats in snap["methods"].items()],
            in_flight=snap["in_flight"], uptime_s=snap["uptime_s"],
        )

    def Failures(self, req: Any, call: Call) -> Any:
        from ..failures import ModeConfig, failure_modes

        lim = self.limits
        since = v.bounded("since_seconds", req.since_seconds, 1, 100 * 365 * 86400, default=0) or None
        until = v.timestamp("until", req.until)
        env = narrow(v.strings("env_versions", req.env_versions, lim), call.principal.env_versions)
        policy = narrow(v.strings("policy_versions", req.policy_versions, lim), call.principal.policy_versions)
        models = v.strings("models", req.models, lim)
        tools = v.strings("tools", req.tools, _TOOLS_LIMITS)
        outcomes = v.choices("outcomes", req.outcomes, FAILED_OUTCOMES, lim)
        limit = v.bounded("limit", req.limit, 1, MAX_MODES, default=20)
        examples = v.bounded("examples", req.examples, 1, MAX_EXAMPLES, default=3)
        if env is None or policy is None:  # the key's pins exclude every requested version: no failures
            until_s = int(until.timestamp()) if until else int(time.time())
            call.note(modes=0)
            response = pb2.FailuresResponse(tenant=call.tenant, until=until_s)
            if since:
                response.since, response.previous_total = until_s - since, 0
            return response
        call.check_deadline()
        # model ids come from traces: read no more at once than one tenant's share of the trace-read slots
        config = ModeConfig(trace_workers=getattr(self.ts.traces, "per_tenant", None) or ModeConfig.trace_workers)
        try:
            report = failure_modes(self.ts, tenant=call.tenant, since=since, until=until, env_version=env,
                                   policy_version=policy, model=models, tools=tools, outcome=outcomes, limit=limit,
                                   examples=examples, config=config)
        except ValueError as exc:  # the library's "model: too many failures to read every trace": our field name
            if not str(exc).startswith("model: "):
                raise
            raise v.FieldError("models", str(exc).removeprefix("model: ")) from None
        call.note(failures=report.total, modes=len(report.modes))
        return convert.failure_report_to_pb(report)

    def WhoAmI(self, req: Any, call: Call) -> Any:
        return pb2.WhoAmIResponse(tenant=call.tenant, role=call.principal.role, key_id=call.principal.key_id,
                                  max_message_bytes=self.limits.max_message_bytes)

    def _outcomes_told(self, call: Call, hits: list[Hit]) -> list[Hit]:
        """``hits``, each carrying its run's outcome as a reader is told it where the index knows it
        (:meth:`TrajSearch.outcomes_known`, one lookup by key): a client showing them read each successful run's
        whole trace for it, one GetTrace per run shown (a SWE-agent trace is megabytes)."""
        known = self.ts.outcomes_known(hits, tenant=call.tenant) if hits else {}
        for hit in hits:
            hit.outcome_shown = known.get(hit.trajectory_id)
        return hits

    def _hidden(self, call: Call, trajectory_ids: Sequence[str]) -> set[str]:
        """Those of these ids that the key's tenant holds runs of outside the key's pins (none for an
        unpinned key), in one lookup by key."""
        if not (call.principal.env_versions or call.principal.policy_versions) or not trajectory_ids:
            return set()
        return {trajectory_id for trajectory_id, hit in self.ts.runs(trajectory_ids, tenant=call.tenant).items()
                if not call.principal.sees(hit.env_version or None, hit.policy_version or None)}

    def _no_run(self, call: Call, trajectory_id: str | None) -> Abort:
        """NOT_FOUND of an id no run this key sees has, naming the ids of the runs it sees it most likely meant
        (:meth:`TrajSearch.nearest_run_ids`, said as the CLI says them: ``search.said_meant``): the answers have no
        field for them, and a client that guessed them from a word search of the id named other runs."""
        nearest = self.ts.nearest_run_ids(trajectory_id or "", Filters(
            tenant=call.tenant, env_versions=call.principal.env_versions,
            policy_versions=call.principal.policy_versions))
        return Abort(grpc.StatusCode.NOT_FOUND, f"trajectory_id: no trajectory {v.shown(trajectory_id)}"
                     + said_meant(nearest))

    def _visible_run(self, call: Call, trajectory_id: str) -> Hit | None:
        """The run's task row if it exists for this key (its tenant and inside its pins)."""
        hit = self.ts.run(trajectory_id, tenant=call.tenant)
        if hit is None or not call.principal.sees(hit.env_version or None, hit.policy_version or None):
            return None
        return hit

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
        env = narrow(v.strings("context.env_versions", ctx.env_versions, lim), call.principal.env_versions)
        policy = narrow(v.strings("context.policy_versions", ctx.policy_versions, lim), call.principal.policy_versions)
        tools = v.strings("context.tools_available", ctx.tools_available, _TOOLS_LIMITS)
        now = v.timestamp("context.now", ctx.now)
        if env is None or policy is None:
            return None
        extra = {"now": now} if now is not None else {}
        return RuntimeContext(tenant=call.tenant, env_version=env, policy_version=policy, tools_available=tools,
                              **extra)

    def Exemplars(self, req: Any, call: Call) -> Any:
        task = v.searched_by("task", req.task, self.limits, max_chars=MAX_CALL_TEXT_CHARS)
        return self._advice(call, "exemplars", task, req)

    def Warnings(self, req: Any, call: Call) -> Any:
        text = v.searched_by("text", req.text, self.limits, max_chars=MAX_CALL_TEXT_CHARS)
        return self._advice(call, "warnings", text, req)

    def _advice(self, call: Call, kind: str, text: str, req: Any) -> Any:
        from ..runtime.tool import UNREADABLE, NO_RESULTS

        k, budget = v.advice_size(req.k, req.token_budget)
        ctx = self._runtime_context(call, req.context)
        rt = self._runtime()
        tool_kind = "exemplars" if kind == "exemplars" else "failures"
        if ctx is None:  # the key's pins and the asked versions do not meet: nothing applies, and the answer says so
            return self._no_context(call, kind, UNREADABLE, NO_RESULTS[tool_kind][UNREADABLE])
        call.check_deadline()
        result = rt.advice(kind, text, ctx, k=k, budget=budget,
                           readable=(call.principal.env_versions, call.principal.policy_versions))
        if result.reason and not result.text:  # nothing found; runs the budget left out answer as before, their
            # note (which fits any budget taken here) the text, the json holding how many (the client reads it)
            return self._no_context(call, kind, result.reason, result.note)
        items = [pb2.ContextItem(kind=item["kind"], provenance=convert.provenance_to_pb(item["provenance"]),
                                 text=item["text"],
                                 json=json.dumps(item["view"] if item["view"] is not None else item["provenance"],
                                                 ensure_ascii=False, default=str))
                 for item in result.items]
        call.note(items=len(items), **({"strategy": result.strategy} if result.strategy else {}))
        return pb2.ContextResponse(strategy=result.strategy, items=items, text=result.text, json=result.json)

    @staticmethod
    def _no_context(call: Call, kind: str, reason: str, note: str) -> Any:
        """An empty context as the wire says it: the text a prompt gets is the note, the json the reason and note,
        in the tool's words (:data:`trajsearch.runtime.tool.NO_RESULTS`). Text and json '' read alike whether the
        query was like nothing, the context's versions held no run, or the key could read none; only the pinned case
        had said why (review RRT2, 2)."""
        call.note(items=0, reason=reason)
        return pb2.ContextResponse(strategy="plan_from_scratch" if kind == "exemplars" else "", text=note,
                                   json=json.dumps({"reason": reason, "note": note}, ensure_ascii=False))

    def SearchPastRuns(self, req: Any, call: Call) -> Any:
        session_id = v.text("session_id", req.session_id, self.limits, max_chars=128)
        query = v.searched_by("query", req.query, self.limits, max_chars=MAX_CALL_TEXT_CHARS)
        k = v.bounded("k", req.k, 1, _TOOL_MAX_K, default=0)
        kind = v.choice("kind", req.kind, KINDS, default="exemplars")
        ctx = self._runtime_context(call, req.context)
        rt = self._runtime()
        arguments: dict[str, Any] = {"query": query, "kind": kind, **({"k": k} if k else {})}
        from ..runtime import RuntimeContext

        # ctx None: the key's pins exclude the requested versions, nothing is searched; the session's tool still
        # answers (the reason and note of every kind, the cap spent and told as on any other search)
        tool, lock = self._session_tool(rt, call, session_id, ctx or RuntimeContext(tenant=call.tenant))
        call.check_deadline()
        with lock:  # two concurrent calls of one session must not both pass the cap
            if ctx is not None:
                tool.ctx = ctx
            tool.readable = (call.principal.env_versions, call.principal.policy_versions)  # never past the pins
            result = tool(arguments, readable=ctx is not None)
        call.note(status=result.get("status"), session=session_id[:16])
        return pb2.SearchPastRunsResponse(
            result_json=json.dumps(result, ensure_ascii=False, default=str),
            text=result.get("instruction") or result.get("error") or "",
            capped=result.get("status") == "limit_reached", searches_left=int(result.get("searches_left", 0)),
        )

    def _session_tool(self, rt: Any, call: Call, session_id: str, ctx: Any) -> tuple[Any, threading.Lock]:
        """The session's tool executor (its use count is the cap).

        Each API key keeps its own :data:`MAX_SESSIONS` most recently used sessions: a key (or tenant)
        opening session after session evicts its own oldest, never another key's capped one.
        """
        with self._sessions_lock:
            key = (call.tenant, call.principal.key_id)
            mine = self._sessions.get(key)
            if mine is None:
                mine = self._sessions[key] = LRUCache(maxsize=MAX_SESSIONS)
            entry = mine.get(session_id)
            if entry is None:
                entry = mine[session_id] = (rt.tool(ctx), threading.Lock())
            return entry

    # -- writes ------------------------------------------------------------------------------

    @contextmanager
    def _writing(self, method: str, tenant: str) -> Iterator[None]:
        """A write slot for this ``method``'s call of ``tenant``, or UNAVAILABLE at once when every one is taken,
        saying which of them the caller's own tenant holds: an Ingest stream holds its slot for as long as it is open
        (a batch indexer's, hours for a big dump), so two streams of one tenant refused another tenant's Delete "busy
        with 2 writes (a slow trace store or index?)", blaming a store that was idle (review of probe 52, RSV3).
        Other tenants' writes are not named: what they do at this server is none of the caller's business (review
        RSV4 of probe 53: "2 open Ingest streams" told any key of them)."""
        if not self._writers.acquire(blocking=False):
            with self._writes_done:
                mine = ", ".join(f"{n} {'open Ingest stream' if m == 'Ingest' else m}{'s' if n > 1 else ''}"
                                 for (t, m), n in sorted(self._holding.items()) if t == tenant)
            whose = f"this key's tenant holds {mine}" if mine else "none of them this key's tenant's"
            raise Abort(grpc.StatusCode.UNAVAILABLE,
                        f"the server is busy with {self.write_slots} write{'s' if self.write_slots != 1 else ''}, the "
                        f"most it runs at once ({whose}; an Ingest stream holds its slot until it ends): retry shortly")
        try:
            with self._writes_done:
                self._writes += 1
                self._holding[tenant, method] = self._holding.get((tenant, method), 0) + 1
            try:
                yield
            finally:
                with self._writes_done:
                    self._writes -= 1
                    self._holding[tenant, method] -= 1
                    if not self._holding[tenant, method]:
                        del self._holding[tenant, method]
                    self._writes_done.notify_all()
        finally:
            self._writers.release()

    def stopping(self) -> None:
        """The server's grace runs out: a stream gRPC cancels from now on was cancelled by the server, not its
        client."""
        self.halting.set()

    def drain(self, timeout: float, abandon: threading.Event | None = None) -> int:
        """Start no more batches, and wait up to ``timeout`` s (or until ``abandon`` is set) for the writes in
        progress to end; returns how many have not.

        A server stopping closes the index: closed under a write, the batch in hand failed half-written (its rows
        part in, ``MilvusException: should create connection first`` retried and logged), its runs removed only
        by the store's next open. gRPC's own grace cancels the calls but not their threads, so the server waits
        here for the batch each is writing; an Ingest ends at its next batch."""
        self._draining.set()
        deadline = time.monotonic() + timeout
        with self._writes_done:
            while self._writes and not (abandon is not None and abandon.is_set()):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._writes_done.wait(min(left, 0.1))
            return self._writes

    @requires("write")
    def Ingest(self, batches: Iterator[Any], call: Call) -> Any:
        with self._writing("Ingest", call.tenant):
            return self._ingest(batches, call)

    def _ingest(self, batches: Iterator[Any], call: Call) -> Any:
        lim = self.limits
        response = pb2.IngestResponse()
        position = 0
        # one per call: a run two of its batches (probe G, G7) or two of its streams hold is counted once
        indexer, kept_as = self._call_indexer(call)
        self._note_ingest(call, position, response)
        for batch in _Idle(batches, call, self.ingest_idle, self.halting):
            call.check_deadline()
            call.check_key()
            if self._draining.is_set():
                raise Abort(grpc.StatusCode.UNAVAILABLE,
                            f"the server is stopping: this stream's batches before record {position} are committed, "
                            "the rest is not; send it again once the server is back (runs already written count "
                            "unchanged)")
            if len(batch.records) > lim.max_batch_records:
                raise v.FieldError("records", f"a batch holds at most {lim.max_batch_records} records, "
                                              f"got {len(batch.records)}")
            if position + len(batch.records) > lim.max_stream_records:
                raise v.FieldError("records", f"a stream holds at most {lim.max_stream_records} records: "
                                              "open another stream for the rest")
            parsed: list[tuple[Any, Trajectory | None, str]] = []
            for record in batch.records:
                result = pb2.RecordResult(position=position, source=record.source[:1024])
                position += 1
                trajectory, reason = self._parse_record(record.json, call)
                if trajectory is None:
                    result.trajectory_id = _loose_id(record.json)
                parsed.append((result, trajectory, reason))
            with self._write_lock:  # the check and the write are one step: no run can appear between them
                hidden = self._hidden(call, [i for _, t, _ in parsed if t is not None
                                             for i in (t.trajectory_id, *superseded(t), *former_ids(t))])
                for n, (result, trajectory, reason) in enumerate(parsed):
                    if trajectory is not None and trajectory.trajectory_id in hidden:
                        result.trajectory_id = trajectory.trajectory_id
                        parsed[n] = (result, None, HIDDEN_ID)
                    elif trajectory is not None and hidden.intersection(superseded(trajectory)):
                        result.trajectory_id = trajectory.trajectory_id
                        parsed[n] = (result, None, HIDDEN_SUPERSEDED)
                    elif trajectory is not None and hidden.intersection(former_ids(trajectory)):
                        result.trajectory_id = trajectory.trajectory_id
                        parsed[n] = (result, None, HIDDEN_FORMER)
                accepted = [trajectory for _, trajectory, _ in parsed if trajectory is not None]
                report = indexer.add(accepted) if accepted else None
                others = {i for _, i in indexer.other_runs} if accepted else set()  # (of a batch's copies, the last)
            for result, trajectory, reason in reversed(parsed):
                if trajectory is None:
                    result.status = pb2.RecordResult.REJECTED
                    result.reason = v.clip(reason, 500)
                    response.rejected += 1
                else:
                    result.status = pb2.RecordResult.ACCEPTED
                    result.trajectory_id = trajectory.trajectory_id
                    if trajectory.trajectory_id in others:  # probe 50, OP 1: said as a local ingest says it
                        others.discard(trajectory.trajectory_id)
                        result.reason = OTHER_RUN_REPLACED
            response.results.extend(result for result, _, _ in parsed)
            if report is not None:
                response.ingested += report.ingested
                response.unchanged += report.unchanged
                response.rows_written += report.rows
                response.verdicts_kept += report.verdicts_kept
                response.superseded += report.superseded
            self._note_ingest(call, position, response)
        # kept only where the client will open another stream (this one ended at the bound), without its vectors:
        # each call's indexer kept 10 minutes, 12.6 MB of them, was the rule for every ingest (review RZ1)
        if kept_as is not None and position >= lim.max_stream_records and len(indexer.written) <= _CALL_RUNS_KEPT:
            indexer.forget_vectors()
            with self._sessions_lock:
                self._call_indexers[kept_as] = indexer
        return response

    @staticmethod
    def _note_ingest(call: Call, records: int, response: Any) -> None:
        """The stream's counts so far on its log line, kept up to date batch by batch: a stream that ends early (the
        client cancelled or went away, a batch refused, the server stopping) is logged with what it committed before,
        where its line had named no record, so the operator could not tell whether any run of it was written."""
        call.note(records=records, ingested=response.ingested, unchanged=response.unchanged,
                  rejected=response.rejected)

    def _call_indexer(self, call: Call) -> tuple[Indexer, tuple[str, str, str] | None]:
        """The indexer of this stream's client call (the one its earlier stream left), or a new one; and the key to
        keep it under for the call's next stream (None: the client names no call). Taken out while in use: a second
        stream naming the same call at once gets its own."""
        named = next((value for key, value in call.context.invocation_metadata() or ()
                      if key == INGEST_CALL_HEADER), "")
        if not (isinstance(named, str) and _REQUEST_ID_RE.match(named)):
            return self.ts.indexer(), None
        key = (call.tenant, call.principal.key_id, named)
        with self._sessions_lock:
            indexer = self._call_indexers.pop(key, None)
        return indexer or self.ts.indexer(), key

    @staticmethod
    def _parse_record(text: str, call: Call) -> tuple[Trajectory | None, str]:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return None, f"json: not valid JSON ({v.clip(str(exc), 200)})"
        if not isinstance(data, dict):
            return None, "json: expected one trajectory object"
        if data.get("tenant") is None:  # "tenant": null is no tenant named, as when the field is left out
            data["tenant"] = call.tenant
        named = data["tenant"]
        if named != call.tenant:
            return None, f"tenant: {v.shown(named)} is not the tenant of this API key"
        try:
            trajectory = Trajectory.model_validate(data)
        except ValidationError as exc:
            return None, validation_message(exc)
        except (ValueError, RecursionError) as exc:  # a validator that gave up on a pathological value
            return None, f"json: {v.clip(str(exc), 200)}"
        for name, pinned in (("env_version", call.principal.env_versions),
                             ("policy_version", call.principal.policy_versions)):
            if pinned and getattr(trajectory, name) not in pinned:
                return None, f"{name}: this API key may only write runs of {name} {list(pinned)}"
        return received_mark(trajectory, call.tenant), ""

    @requires("write")
    def Delete(self, req: Any, call: Call) -> Any:
        trajectory_id = v.identifier("trajectory_id", req.trajectory_id)
        with self._writing("Delete", call.tenant), self._write_lock:
            # A run outside the key's pins is not there for it. A trace left with no run (probe G, D1) has no
            # versions to hold against pins: only a key without pins removes it (the façade says if one was there).
            hit = self.ts.run(trajectory_id, tenant=call.tenant)
            versions = (hit.env_version or None, hit.policy_version or None) if hit is not None else (None, None)
            found = call.principal.sees(*versions) and self.ts.delete(trajectory_id, tenant=call.tenant)
        return pb2.DeleteResponse(deleted=found)


class _Idle:
    """An Ingest stream's batches, the stream ended by the server once its client sends none for ``seconds``.

    Only the waits for a batch are timed, not the server's writing of one. The call is cancelled with a status the
    client reads (gRPC's public ``cancel()`` would tell it only ``CANCELLED``), which wakes the handler waiting for
    a batch; it then ends with the same words in the server's log. A stream read while the server stops (gRPC
    cancels what is left after ``--grace``) is said to be the server's doing too: it was logged as the client's."""

    def __init__(self, batches: Iterator[Any], call: Call, seconds: float, stopping: threading.Event) -> None:
        self.batches = batches
        self.call = call
        self.seconds = seconds
        self.stopping = stopping
        self.message = (f"the server received no batch of this Ingest stream for {seconds:g} s (the client frozen, "
                        "its input that slow, or its network gone) and ended it: the batches before are committed; "
                        "send the rest again")

    def __iter__(self) -> _Idle:
        return self

    def __next__(self) -> Any:
        try:
            return next_within(self.batches, self.call.context, self.seconds, self.message)
        except (grpc.RpcError, StopIteration):
            # a stream gRPC cancels may also end as a plain end of its requests (grpcio reads a closed call so):
            # once the server's grace ran out, either is its doing (review RZ1: logged as the client's now and then)
            if self.stopping.is_set():
                raise Abort(grpc.StatusCode.UNAVAILABLE, "the server stopped before this Ingest stream ended (its "
                                                         "--grace ran out): the batches before are committed; send "
                                                         "the rest again once the server is back") from None
            raise


def _loose_id(text: str) -> str:
    """A trajectory id to echo in a rejection, if the record has a plausible one."""
    match = re.search(r'"trajectory_id"\s*:\s*"([A-Za-z0-9_.:@/+=-]{1,192})"', text[:4096])
    return match.group(1) if match else ""


def _created_after(req: Any) -> int | None:
    """A Search or SimilarRuns request's ``created_after`` (None where unset: any time), refused in the library's
    words outside the epoch seconds a filter takes."""
    if not req.HasField("created_after"):
        return None
    return v.bounded("created_after", req.created_after, 0, 2**53 - 1)
