"""``langfuse``: Langfuse exports: traces with their observations and scores.

Records, any mix (one per line, a JSON array, or one object per file):
- the UI's "download trace" file: ``{"trace": {...}, "observations": [...]}``
  (``scores`` on the trace or beside it); the trace's ``input`` / ``output`` /
  ``metadata`` / ``scores`` are JSON text there, ``input`` / ``output``
  often JSON-encoded twice; the newer server-side download
  ``{"observations": [...], "scores": [...]}`` has no trace object (its name,
  session, user and tags ride on each observation) and may leave out the
  input / output of large traces, keeping Langfuse's own extraction of a
  generation's tool calls (``toolCallNames`` + ``toolCalls``);
- a trace as the public API returns it (``GET /api/public/traces/{id}``):
  ``id``, ``name``, ``timestamp``, ``input``, ``output``, ``sessionId``,
  ``userId``, ``tags``, ``metadata``, with ``observations`` and ``scores`` as
  lists of objects (lists of ids are skipped); a list page ``{"data": [...],
  "meta": {...}}`` of traces, observations or scores;
- flat rows as the blob-storage / table exports write them, camelCase or
  snake_case (``trace_id``, ``parent_observation_id``, ``start_time``,
  ``status_message``, ``provided_model_name``, ``data_type``, ``string_value``):
  observations (``id``, ``traceId``, ``type``, ``parentObservationId``,
  ``name``, ``startTime``, ``endTime``, ``input``, ``output``, ``level``,
  ``statusMessage``, ``model``, ``metadata``), scores (``traceId``, ``name``,
  ``value``, ``stringValue``, ``dataType``, ``comment``, ``observationId``) and
  traces without nested lists;
- an ingestion request ``{"batch": [{"type": "trace-create" | "span-create" |
  "span-update" | "generation-create" | "tool-create" | ... | "score-create",
  "body": {...}}]}``: an ``*-update`` completes the observation of the same id.
Everything is grouped by trace id across every file of the input
(``group_by="conversation"``: by ``sessionId``).

Mapping
- observation role by ``type``: ``TOOL`` = step, ``GENERATION`` = model call,
  ``RETRIEVER`` = step, ``AGENT`` / ``CHAIN`` / ``SPAN`` = container,
  ``EVALUATOR`` = evaluation (``EVENT`` / ``EMBEDDING`` / ``GUARDRAIL``
  ignored). A ``SPAN`` is a tool execution when the instrumentation says so
  (``metadata.attributes``: OpenInference ``openinference.span.kind = TOOL``,
  GenAI ``gen_ai.operation.name = execute_tool`` or a ``gen_ai.tool.name`` /
  ``tool.name``), or when it is childless and named like a tool a generation
  asked for (LangChain and agno trace tools as spans); BeeAI's ``….start-N`` /
  ``….finish-N`` lifecycle spans are not executions, its ReAct ``agent.react.*``
  events give the tool steps and the final answer (see ``_react``). A
  generation nested in another (agno: the framework's call wrapping the SDK's)
  is one model call. Tools executed at the same instant keep the order the
  model asked for them in.
- steps: action = the tool's name (``gen_ai.tool.name`` / ``tool.name`` /
  ``ai.toolCall.name``, else
  the observation name without ``execute_tool`` / ``running tool:`` /
  ``tool.`` prefixes), arguments = ``input`` (JSON or Python-literal text
  decoded; else the tool-argument attributes), observation = ``output`` (a
  LangChain ``ToolMessage``'s content; else the tool-response attributes),
  error = ``statusMessage`` when ``level`` is ``ERROR`` (``WARNING`` is not an
  error) or a ``ToolMessage`` with ``status: error``. The tool call id
  (``gen_ai.tool.call.id``, ``metadata.tool_call_id``, the ``ToolMessage``'s
  ``tool_call_id``) ties the execution to the generation that requested it, so
  a call and its execution are one step. Generation outputs (Chat Completions,
  Responses, Anthropic, Gemini, LangChain, GenAI ``parts``) give the thought of
  those steps, or a ``respond`` step when no tool was asked for.
- task: the user's instruction: the trace ``input`` (text, a chat message
  list, ``messages`` / ``contents`` / ``new_message``, or the usual
  ``input`` / ``query`` / ``message`` keys), else the input of a top-level
  observation, else the first user message of the earliest generation; a
  decorator's ``{"args": [...], "kwargs": {...}}`` is not an instruction (its
  longest text argument is the last resort).
- trajectory_id = ``lf:<trace id>``; model_id = the first generation's
  ``model`` / ``providedModelName``; created_at = the earliest timestamp;
  metadata keeps ``name``, ``sessionId``, ``userId``, ``tags``, ``release``,
  ``version``, ``environment`` and every score.
- outcome: only trace-level scores (no ``observationId``) named like
  success / correctness / reward (``correctness``, ``task_success``,
  ``reward``, ...) decide: a ``CATEGORICAL`` pass/fail label, a ``BOOLEAN``, or
  a ``NUMERIC`` value that is also the reward (fractional values against the
  operator's success threshold); a resolution label (``resolved``,
  ``incorrect``...) decides under any name. Toxicity, hallucination,
  helpfulness, relevance, ratings stay in metadata. Else a top-level
  observation at level ``ERROR`` -> failure (infra_error for timeouts, rate
  limits, 5xx, connection errors); else ``unknown``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, RecordError, json_object
from ._spans import Node, iso_seconds, text_of
from ._vendor import (
    Score,
    as_list,
    call_args_text,
    call_id,
    decode,
    first_user_text,
    instruction,
    is_empty,
    message_dicts,
    output_dicts,
    result_text,
    trajectory,
)
from ._spans import trajectory_id as _span_trajectory_id

NAME = "langfuse"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(
    r'"(?:traceId|trace_id)"\s*:[\s\S]*"type"\s*:\s*"(?:GENERATION|SPAN|EVENT|TOOL|AGENT|CHAIN|RETRIEVER)"'
    r'|"trace"\s*:\s*\{[\s\S]*"observations"\s*:\s*\['
)
GROUPED = True
ID_PREFIX = "lf"
OBSERVATION_TYPES = {
    "TOOL": "tool", "GENERATION": "llm", "RETRIEVER": "retriever", "AGENT": "agent", "CHAIN": "chain",
    "SPAN": "chain", "EVALUATOR": "evaluator", "EVENT": "other", "EMBEDDING": "other", "GUARDRAIL": "other",
}
_SNAKE = {
    "trace_id": "traceId", "parent_observation_id": "parentObservationId", "start_time": "startTime",
    "end_time": "endTime", "status_message": "statusMessage", "provided_model_name": "providedModelName",
    "model_parameters": "modelParameters", "observation_id": "observationId", "data_type": "dataType",
    "string_value": "stringValue", "session_id": "sessionId", "user_id": "userId", "trace_name": "traceName",
}
_INGESTION = re.compile(r"^(trace|score|span|generation|event|agent|tool|chain|retriever|evaluator|embedding|guardrail|"
                        r"observation)-(create|update)$")
_TOOL_PREFIX = re.compile(r"^(?:execute_tool|running tool:|tool[.:]|tool call:|calling tool:)\s*", re.I)
_LIFECYCLE = re.compile(r"\.(start|finish)(-\d+)?$")
_EVENT_SUFFIX = re.compile(r"\.(success|error|finish|start)(-\d+)?$")
_NOT_TOOL_KINDS = ("AGENT", "CHAIN", "LLM", "RETRIEVER", "EMBEDDING", "RERANKER", "GUARDRAIL", "EVALUATOR")
#: Node.info keys for the adapter's own use (all start with "_"), removed before a group is assembled.
_TYPE, _RAW, _SCORES, _TARGET, _THOUGHT, _TRACE_INFO = "_type", "_raw", "_scores", "_target", "_thought", "_trace"
_ITERATION = re.compile(r"^iteration-\d+$")
#: Where instrumentations put a tool's arguments, result and call id in ``metadata.attributes``
#: (GenAI semconv, pydantic-ai/logfire, OpenInference, Google ADK, Vercel AI SDK).
_ARGUMENT_ATTRIBUTES = ("gen_ai.tool.call.arguments", "tool_arguments", "tool.parameters",
                        "gcp.vertex.agent.tool_call_args", "ai.toolCall.args", "input.value")
_RESULT_ATTRIBUTES = ("gen_ai.tool.call.result", "tool_response", "gcp.vertex.agent.tool_response",
                      "ai.toolCall.result", "output.value")
_CALL_ID_ATTRIBUTES = ("gen_ai.tool.call.id", "tool_call.id", "ai.toolCall.id", "tool_call_id")


def _camel(record: dict[str, Any]) -> dict[str, Any]:
    """Snake_case export columns under the camelCase names the API uses (a camelCase key wins)."""
    if not any(k in record for k in _SNAKE):
        return record
    out = dict(record)
    for snake, camel in _SNAKE.items():
        if snake in out:
            value = out.pop(snake)
            out.setdefault(camel, value)
    return out


def _kind(record: dict[str, Any]) -> str | None:
    if isinstance(record.get("trace"), dict) and ("observations" in record or "id" in record["trace"]):
        return "export"
    if "id" not in record and isinstance(record.get("observations"), list) and any(
            isinstance(o, dict) and ("traceId" in o or "trace_id" in o) for o in record["observations"][:5]):
        return "download"  # the server-side download: observations and scores, no trace object
    if isinstance(record.get("batch"), list) and any(
            isinstance(e, dict) and _INGESTION.match(str(e.get("type", ""))) for e in record["batch"][:20]):
        return "ingestion"
    if isinstance(record.get("data"), list) and isinstance(record.get("meta"), dict):
        return "page" if any(isinstance(d, dict) and _kind(_camel(d)) for d in record["data"][:5]) else None
    record = _camel(record)
    if "traceId" in record and str(record.get("type", "")).upper() in OBSERVATION_TYPES:
        return "observation"
    if "traceId" in record and "name" in record and ("value" in record or "dataType" in record):
        return "score"
    if "id" in record and ("observations" in record or "scores" in record or (
            "timestamp" in record and ("sessionId" in record or "input" in record) and "run_type" not in record)):
        return "trace"
    return None


def matches(record: Any) -> bool:
    return isinstance(record, dict) and "trajectory_id" not in record and _kind(record) is not None


# -- records -> nodes --------------------------------------------------------------------


def _score(raw: Any) -> Score | None:
    raw = decode(raw)
    if not isinstance(raw, dict):
        return None
    raw = _camel(raw)
    kind = str(raw.get("dataType") or "NUMERIC").upper()
    value = raw.get("value")
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else \
        (1.0 if value is True else 0.0 if value is False else None)
    label = raw.get("stringValue") if isinstance(raw.get("stringValue"), str) else None
    if label is None and isinstance(value, str):
        label = value
    if kind == "BOOLEAN" and label is not None and number is None:
        flag = label.strip().lower()
        number = 1.0 if flag in ("true", "1", "yes") else 0.0 if flag in ("false", "0", "no") else None
    if kind == "BOOLEAN":
        label = None  # "True"/"False" is not a pass/fail label; the value decides
    return Score(str(raw.get("name") or "score"), number, label, raw.get("comment") or None,
                 raw.get("source") or None, str(raw["observationId"]) if raw.get("observationId") else None)


def _scores(raw: Any) -> list[dict[str, Any]]:
    return [s.to_json() for item in as_list(raw) if (s := _score(item)) is not None]


def _trace_node(trace: dict[str, Any], seq: int) -> Node:
    trace = _camel(trace)
    inputs, outputs = decode(trace.get("input")), decode(trace.get("output"))
    metadata = decode(trace.get("metadata"))
    return Node(
        id=f"trace:{trace['id']}", parent=None, role="agent", name=str(trace.get("name") or "trace"), seq=seq,
        start=iso_seconds(trace.get("timestamp")),
        input_text=None if is_empty(inputs) else text_of(inputs),
        output_text=None if is_empty(outputs) else text_of(outputs),
        info={k: v for k, v in {
            "trace_name": trace.get("name"), "conversation_id": trace.get("sessionId"), "user_id": trace.get("userId"),
            "tags": trace.get("tags") or None, "release": trace.get("release"), "version": trace.get("version"),
            "environment": trace.get("environment") if trace.get("environment") not in (None, "default") else None,
            "trace_metadata": {k: v for k, v in metadata.items() if isinstance(v, (str, int, float, bool))} or None
            if isinstance(metadata, dict) else None,
            _SCORES: _scores(trace.get("scores")) or None,
        }.items() if v not in (None, "", [], {})},
    )


def _attributes(metadata: Any) -> dict[str, Any]:
    if not isinstance(metadata, dict):
        return {}
    attrs = decode(metadata.get("attributes"))
    return attrs if isinstance(attrs, dict) else {}


def _tool_output(value: Any) -> tuple[Any, str | None, str | None]:
    """(result, call id, error) of a tool's output; a LangChain ``ToolMessage`` gives all three."""
    if isinstance(value, dict):
        msg = value
        if isinstance(msg.get("kwargs"), dict) and isinstance(msg.get("id"), list) and msg["id"]:  # "lc" form
            msg = dict(msg["kwargs"], type=str(msg["id"][-1]).lower().removesuffix("message"))
        if msg.get("type") == "tool" and "content" in msg:
            content = decode(msg["content"])
            error = text_of(content) if str(msg.get("status") or "").lower() == "error" else None
            return content, call_id(msg.get("tool_call_id")), error
    return value, None, None


def _tool_name(name: str, attrs: dict[str, Any]) -> str:
    named = attrs.get("gen_ai.tool.name") or attrs.get("tool.name") or attrs.get("ai.toolCall.name") or \
        attrs.get("tool_name")
    if isinstance(named, str) and named.strip():
        return named.strip()
    return _EVENT_SUFFIX.sub("", _TOOL_PREFIX.sub("", name)).strip() or name


def _observation_node(obs: dict[str, Any], seq: int) -> Node:
    obs = _camel(obs)
    if not obs.get("id") or not obs.get("traceId"):
        raise RecordError("Langfuse observation without 'id' or 'traceId'")
    kind = str(obs.get("type", "")).upper()
    role = OBSERVATION_TYPES.get(kind, "other")
    level = str(obs.get("level") or "DEFAULT").upper()
    metadata = decode(obs.get("metadata"))
    attrs = _attributes(metadata)
    span_kind = str(attrs.get("openinference.span.kind") or "").upper()
    name = str(obs.get("name") or kind.lower() or "observation")
    if kind == "SPAN" and (span_kind == "TOOL" or attrs.get("gen_ai.operation.name") == "execute_tool" or (
            (attrs.get("gen_ai.tool.name") or attrs.get("tool.name")) and span_kind not in _NOT_TOOL_KINDS)):
        role = "tool"
    if role == "tool" and _LIFECYCLE.search(name) and is_empty(obs.get("output")):
        role = "other"  # BeeAI's tool.<name>.start-N / .finish-N events: the .success-N span carries the result
    inputs, raw_output = decode(obs.get("input")), obs.get("output")
    outputs = decode(raw_output)
    node = Node(
        id=str(obs["id"]), parent=str(obs.get("parentObservationId") or f"trace:{obs['traceId']}"),
        role=role, name=name, seq=seq,
        start=iso_seconds(obs.get("startTime")), end=iso_seconds(obs.get("endTime")),
        error=(str(obs.get("statusMessage") or "level ERROR") if level == "ERROR" else None),
        input_text=None if is_empty(inputs) else text_of(inputs),
        output_text=None if is_empty(outputs) else text_of(outputs),
        info={_TYPE: kind},
    )
    if isinstance(attrs.get("target"), str) and attrs["target"].startswith(("agent.react.", "tool.")):
        node.info[_TARGET] = attrs["target"]  # BeeAI's event spans, see _react
        if isinstance(attrs.get("thought"), str) and attrs.get("tool.name"):
            node.info[_THOUGHT] = attrs["thought"]
    trace_info = {k: v for k, v in {"trace_name": obs.get("traceName"), "conversation_id": obs.get("sessionId"),
                                    "user_id": obs.get("userId"), "tags": obs.get("tags"),
                                    "release": obs.get("release")}.items() if v}
    if trace_info:  # what newer exports repeat of the trace on each observation
        node.info[_TRACE_INFO] = trace_info
    if role == "llm":
        node.input_messages = message_dicts(inputs)
        node.output_messages = output_dicts(outputs)
        if not any(m.get("calls") for m in node.output_messages) and (names := as_list(obs.get("toolCallNames"))):
            # Langfuse's own extraction (newer exports): names, and {id, arguments} in the same order
            details = [decode(c) for c in as_list(obs.get("toolCalls"))]
            calls = [{"id": call_id(d.get("id")) if isinstance(d, dict) else None, "name": str(name),
                      "arguments": decode(d.get("arguments"), literal=True) if isinstance(d, dict) else None}
                     for name, d in zip(names, details + [None] * len(names)) if name]
            if calls:
                node.output_messages.append({"role": "assistant", "text": "", "reasoning": "", "call_id": None,
                                             "calls": calls})
        model = obs.get("model") or obs.get("providedModelName") or attrs.get("gen_ai.response.model") or \
            attrs.get("gen_ai.request.model") or attrs.get("llm.model_name")
        node.model = str(model) if model and str(model).lower() not in ("unknown", "none") else None
        return node
    node.tool = _tool_name(name, attrs) if role in ("tool", "chain") else name
    args = decode(inputs, literal=True)
    if is_empty(args):
        args = next((decode(v, literal=True) for k in _ARGUMENT_ATTRIBUTES if not is_empty(v := attrs.get(k))), None)
        if args is None and isinstance(metadata, dict) and isinstance(metadata.get("inputs"), dict):
            args = metadata["inputs"]  # LangChain's callback handler keeps a tool's kwargs here
    node.arguments = args
    result, result_call, result_error = _tool_output(outputs)
    if result is outputs and isinstance(raw_output, str):
        result = raw_output  # text as written, not re-serialised
    if is_empty(result):
        result = next((v for k in _RESULT_ATTRIBUTES if not is_empty(v := attrs.get(k))), result)
    node.result = result_text(result)
    node.call_id = call_id(next((attrs[k] for k in _CALL_ID_ATTRIBUTES if attrs.get(k)), None) or
                           (metadata.get("tool_call_id") if isinstance(metadata, dict) else None) or result_call)
    if result_error and not node.error:
        node.error = result_error
    return node


def _ingestion(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """An ingestion batch's events as export records (observation rows carry their raw body for merging)."""
    for event in record["batch"]:
        if not isinstance(event, dict) or not isinstance(event.get("body"), dict):
            continue
        found = _INGESTION.match(str(event.get("type", "")))
        if not found:
            continue
        what, body = found.group(1), _camel(event["body"])
        if what == "trace":
            yield {"_trace": body}
        elif what == "score":
            yield {"_score": body}
        else:
            kind = str(body.get("type") or what).upper() if what == "observation" else what.upper()
            yield {"_observation": dict(body, type=kind)}


def _one(record: dict[str, Any], ctx: Context, seq: int) -> Iterator[tuple[str, Node, str | None]]:
    record = _camel(record)
    kind = _kind(record)
    if kind == "observation":
        node = _observation_node(record, seq)
        yield str(record["traceId"]), node, record.get("sessionId") or None
    elif kind == "score":
        score = _score(record)
        trace_id = str(record["traceId"])
        if score is not None:
            yield trace_id, Node(id=f"score:{record.get('id') or seq}", parent=f"trace:{trace_id}", role="evaluator",
                                 name=score.name, seq=seq, info={_SCORES: [score.to_json()]}), None
    elif kind == "trace":
        trace_id = str(record["id"])
        root = _trace_node(record, seq)
        yield trace_id, root, record.get("sessionId")
        for n, obs in enumerate(as_list(record.get("observations")), 1):
            if isinstance(obs, dict):  # the list endpoint gives ids only
                obs = dict(_camel(obs), traceId=obs.get("traceId") or obs.get("trace_id") or trace_id)
                yield trace_id, _observation_node(obs, seq + n), None
    else:
        raise RecordError("not a Langfuse trace, observation or score (expected 'traceId' with a 'type', or a trace "
                          "'id' with 'observations' / 'scores' / 'timestamp')")


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    record = json_object(record)
    kind = _kind(record)
    if kind == "export":  # the UI's "download trace"
        trace = dict(record["trace"])
        if not trace.get("id"):
            raise RecordError("Langfuse trace export without 'trace.id'")
        trace["scores"] = as_list(trace.get("scores")) + as_list(record.get("scores"))
        trace["observations"] = [o for o in as_list(record.get("observations")) if isinstance(o, dict)]
        yield from _one(trace, ctx, seq)
        return
    if kind == "download":
        items: list[Any] = [o for o in record["observations"] if isinstance(o, dict)] + \
            [dict(s, dataType=s.get("dataType") or "NUMERIC") for s in as_list(record.get("scores")) if isinstance(s, dict)]
    elif kind == "page":
        items = record["data"]
    elif kind == "ingestion":
        items = list(_ingestion(record))
    else:
        items = [record]
    n = seq
    for item in items:
        if not isinstance(item, dict):
            continue
        if "_trace" in item:
            item = dict(item["_trace"])
            item.setdefault("timestamp", None)
            item.setdefault("observations", [])
        elif "_score" in item:
            item = dict(item["_score"], dataType=item["_score"].get("dataType") or "NUMERIC")
        elif "_observation" in item:
            body = item["_observation"]
            if not body.get("id") or not body.get("traceId"):
                raise RecordError(f"Langfuse ingestion event {body.get('type', '').lower()} without 'id' or 'traceId'")
            node = _observation_node(body, n)
            node.info[_RAW] = body
            yield str(body["traceId"]), node, None
            n += 1
            continue
        for key, node, conversation in _one(item, ctx, n):
            n = max(n, node.seq) + 1
            yield key, node, conversation


# -- grouped nodes -> a trajectory -------------------------------------------------------


def _merged(group: list[Node]) -> list[Node]:
    """Observations sent as a create and later updates (ingestion events): one node per id, fields merged."""
    by_id: dict[str, list[Node]] = {}
    for node in group:
        by_id.setdefault(node.id, []).append(node)
    if all(len(v) == 1 for v in by_id.values()):
        return group
    out = []
    for versions in by_id.values():
        raws = [n.info.get(_RAW) for n in sorted(versions, key=lambda n: n.seq)]
        if len(versions) == 1 or not all(isinstance(r, dict) for r in raws):
            out.append(versions[-1] if len(versions) > 1 else versions[0])
            continue
        body: dict[str, Any] = {}
        for raw in raws:
            body.update({k: v for k, v in raw.items() if not is_empty(v) and not (k == "type" and body.get("type") and
                                                                                v in ("SPAN", "OBSERVATION"))})
        out.append(_observation_node(body, versions[0].seq))
    return out


def _tools_as_spans(group: list[Node]) -> None:
    """Childless SPAN observations named like (or answering) a tool call a generation made are tool executions."""
    calls = [c for n in group if n.role == "llm" for m in n.output_messages for c in m.get("calls") or []]
    names = {c.get("name") for c in calls}
    ids = {c.get("id") for c in calls if c.get("id")}
    parents = {n.parent for n in group}
    for n in group:
        if n.role == "chain" and n.info.get(_TYPE) == "SPAN" and n.id not in parents and (
                n.tool in names or n.name in names or (n.call_id and n.call_id in ids)):
            n.role = "tool"


def _one_model_call(group: list[Node]) -> None:
    """A generation nested inside another is the same model call traced twice: keep the one with an answer."""
    by_id = {n.id: n for n in group}
    for node in group:
        if node.role != "llm":
            continue
        parent, seen = by_id.get(node.parent or ""), set()
        while parent is not None and parent.role != "llm" and parent.id not in seen:
            seen.add(parent.id)
            parent = by_id.get(parent.parent or "")
        if parent is None or parent.role != "llm":
            continue
        if parent.output_messages:
            node.role = "other"
        else:
            parent.role = "chain"


def _order(node: Node) -> tuple[float, int]:
    return (node.start if node.start is not None else float("inf"), node.seq)


def _react(group: list[Node]) -> None:
    """BeeAI's ReAct agent (``openinference-instrumentation-beeai``): steps from its event spans.

    Each ``iteration-N`` span holds ``agent.react.update`` / ``partial_update``
    events carrying ``thought``, ``tool.name``, ``tool.parameters`` and, once
    the tool ran, its output; ``agent.react.success`` carries the final answer;
    the generation of an iteration records no output (its tokens were
    streamed) and the ``tool.<name>.*`` events repeat the call. The last update
    per iteration and tool becomes the tool step, the iteration's generation
    gets the thought and the call (or the final answer) as its output.
    """
    events = [n for n in group if str(n.info.get(_TARGET, "")).startswith("agent.react.")]
    if not events:
        return
    by_id = {n.id: n for n in group}

    def iteration(node: Node) -> str | None:
        seen: set[str] = set()
        current = by_id.get(node.parent or "")
        while current is not None and current.id not in seen:
            if _ITERATION.match(current.name):
                return current.id
            seen.add(current.id)
            current = by_id.get(current.parent or "")
        return node.parent

    for node in group:
        if str(node.info.get(_TARGET, "")).startswith("tool."):
            node.role = "other"
    chosen: dict[tuple[str | None, str | None], Node] = {}
    finals: dict[str | None, Node] = {}
    for node in sorted(events, key=_order):
        target = node.info[_TARGET]
        if target in ("agent.react.update", "agent.react.partial_update") and _THOUGHT in node.info and node.result:
            chosen[(iteration(node), node.tool)] = node
        elif target == "agent.react.success" and node.output_text:
            finals[iteration(node)] = node
    generations: dict[str | None, list[Node]] = {}
    for node in sorted(group, key=_order):
        if node.role == "llm":
            generations.setdefault(iteration(node), []).append(node)
    for (it, _tool), node in chosen.items():
        node.role, node.call_id = "tool", f"react:{node.id}"
    for it, gens in generations.items():
        if gens[0].output_messages:
            continue
        calls = [n for (i, _t), n in chosen.items() if i == it]
        if calls:
            gens[0].output_messages = [{"role": "assistant", "text": calls[0].info.get(_THOUGHT, "").strip(),
                                        "reasoning": "", "call_id": None,
                                        "calls": [{"id": n.call_id, "name": n.tool, "arguments": n.arguments} for n in calls]}]
        elif it in finals:
            gens[0].output_messages = output_dicts(decode(finals[it].output_text))


def _parallel_calls_in_call_order(group: list[Node]) -> None:
    """Tool executions that started at the same instant keep the order the model asked for them in."""
    rank: dict[tuple[str, str], int] = {}
    n = 0
    for node in sorted((g for g in group if g.role == "llm"), key=_order):
        for msg in node.output_messages:
            for call in msg.get("calls") or []:
                if call.get("id"):
                    rank.setdefault(("id", call["id"]), n)
                rank.setdefault(("name", str(call.get("name"))), n)
                n += 1
    slots: dict[tuple[str | None, float | None], list[Node]] = {}
    for node in group:
        if node.role == "tool" and node.start is not None:
            slots.setdefault((node.parent, node.start), []).append(node)
    for tied in slots.values():
        if len(tied) > 1:
            seqs = sorted(t.seq for t in tied)
            ranked = sorted(tied, key=lambda t: (
                rank.get(("id", t.call_id or ""), rank.get(("name", t.tool or ""), n)), t.seq))
            for node, seq in zip(ranked, seqs):
                node.seq = seq


def _task(group: list[Node]) -> str:
    ordered = sorted(group, key=_order)
    trace = next((n for n in ordered if n.id.startswith("trace:")), None)  # a conversation's first trace
    ids = {n.id for n in group}
    top = trace.id if trace else None
    tops = [n for n in ordered if n is not trace and (n.parent is None or n.parent not in ids or n.parent == top)]
    heads = ([trace] if trace else []) + tops
    for node in heads:
        if node.role != "llm" and (text := instruction(node.input_text)):
            return text
    for node in ordered:
        if node.role == "llm":
            if text := first_user_text(node.input_messages):
                return text
        elif node.role in ("agent", "chain") and (text := instruction(node.input_text)):
            return text
    for node in heads + ordered:
        if text := call_args_text(node.input_text):
            return text
    name = trace.name if trace else (ordered[0].name if ordered else "trace")
    raise RecordError(f"no task: trace {name!r} has no input and no generation has a user message")


def trajectory_id(key: str, by: str = "trace") -> str:
    return _span_trajectory_id(ID_PREFIX, key, by)


def assemble_trajectory(key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
    group = _merged(group)
    _tools_as_spans(group)
    _react(group)
    _one_model_call(group)
    _parallel_calls_in_call_order(group)
    scores = [Score(**s) for n in group for s in n.info.get(_SCORES) or []]
    trace_info = next((n.info[_TRACE_INFO] for n in sorted(group, key=_order) if n.info.get(_TRACE_INFO)), {})
    group = [n for n in group if not n.id.startswith("score:")]  # score rows: kept as scores only
    if not group:
        raise RecordError(f"trace {key}: only scores, no trace or observation")
    task = _task(group)
    for n in group:
        for k in [k for k in n.info if k.startswith("_")]:
            del n.info[k]
    root = next((n for n in sorted(group, key=_order) if n.id.startswith("trace:")), None)
    if root is not None and not root.error:  # a failed top-level observation is the run failing
        root.error = next((n.error for n in group if n.parent == root.id and n.error and n.role != "tool"), None)
    extra: dict[str, Any] = {"observations": sum(1 for n in group if not n.id.startswith("trace:"))}
    if root is None:  # without its trace record, the observations still form a run
        for n in group:
            if n.parent and n.parent.startswith("trace:"):
                n.parent = None
        extra.update(trace_info)  # what the observations repeat of their trace
    return trajectory(NAME, ID_PREFIX, key, group, ctx, by=by, task=task, scores=scores, extra=extra)
