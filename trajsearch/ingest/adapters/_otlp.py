"""OpenTelemetry spans and GenAI log events as JSON -> :class:`~._spans.Node`, for the span adapters.

Record shapes read (one record may hold many spans):

- OTLP/JSON (``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``,
  what the OTLP file exporter and the collector's ``file`` exporter write):
  ``{"resourceSpans": [{"resource", "scopeSpans": [{"spans": [...]}]}]}`` and
  ``{"resourceLogs": [{"resource", "scopeLogs": [{"logRecords": [...]}]}]}``;
  ids are hex strings (or base64 when written by protobuf's JSON printer),
  times ``*UnixNano``, attribute values ``{"stringValue" | "intValue" | ... |
  "arrayValue" | "kvlistValue": ...}``, ``status.code`` 2 /
  ``STATUS_CODE_ERROR`` for an error;
- the OpenTelemetry Python SDK's ``to_json`` (``ConsoleSpanExporter`` /
  ``ConsoleLogExporter`` output, concatenated pretty objects; any-agent's
  ``AgentTrace`` dump ``{"spans": [...], "final_output"}``, or any object
  whose values are lists of spans): ``name``,
  ``context.trace_id`` / ``span_id`` (``0x``-prefixed hex, or integers),
  ``parent_id`` or ``parent.span_id``, ISO or epoch-ns ``start_time`` /
  ``end_time``, ``status.status_code`` (``ERROR``) and ``status.description``,
  ``attributes``, ``events``; log records: ``body``, ``event_name`` (or the
  ``event.name`` attribute), ``trace_id``, ``span_id``, ``timestamp``;
- the OpenTelemetry JS SDK's ``ReadableSpan`` as JSON: ``spanContext.traceId``
  / ``spanId`` (``_spanContext`` when a ``Span`` object was stringified), ``parentSpanId`` or ``parentSpanContext.spanId``,
  ``startTime`` / ``endTime`` as ``[seconds, nanoseconds]``, ``status.code``;
- flat span objects (Phoenix / OpenInference exports, many back-ends):
  ``context.trace_id`` / ``span_id`` or top-level ``trace_id`` / ``traceId``,
  ``parent_id``, ``status_code``, ``status_message``, attributes flat or nested.

Trace and span ids are normalised to lower-case hex (``0x`` dropped, base64
and integer ids converted), so one trace read from a console dump and from an
OTLP file is the same run; other ids (``"s01"``) are kept as they are.

GenAI log events (``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``, and
``gen_ai.client.inference.operation.details`` with ``gen_ai.input.messages`` /
``gen_ai.output.messages``) are where instrumentations such as
``opentelemetry-instrumentation-openai-v2`` put message content. As log
records they become ``event`` nodes keyed by their span's trace id, so the
spool groups them with their span wherever they were read (same file or a
sibling file); :func:`merge_events` folds them into that span before assembly.
The same event names as span events are read directly.

Attributes of both conventions are understood on every span, since one trace
often carries both (see ``otel_genai`` and ``openinference`` for the mapping).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import asdict, dataclass, replace
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, RecordError, clip_task
from ._spans import (
    Evaluation,
    Message,
    Node,
    SpanFormat,
    first_user_text,
    flatten,
    indexed,
    iso_seconds,
    maybe_json,
    normalise_message,
    normalise_messages,
    span_trajectory,
    task_from_input,
    text_of,
)
from ._spans.assembly import _ordered

_GENAI_ROLES = {
    "invoke_agent": "agent", "create_agent": "agent", "invoke_workflow": "agent",
    "agent_step": "chain", "workflow": "chain",
    "execute_tool": "tool", "agent_handoff": "tool",
    "chat": "llm", "text_completion": "llm", "generate_content": "llm", "completion": "llm", "call_llm": "llm",
    "responses": "llm",
    "retrieval": "retriever", "retrieve": "retriever",
    "embeddings": "other", "rerank": "other", "guardrail_check": "other", "transcription": "other",
    "speech_generation": "other",
}
_OI_ROLES = {
    "AGENT": "agent", "CHAIN": "chain", "TOOL": "tool", "LLM": "llm", "RETRIEVER": "retriever",
    "EVALUATOR": "evaluator", "RERANKER": "other", "EMBEDDING": "other", "GUARDRAIL": "other", "PROMPT": "other",
}
#: OpenLLMetry (Traceloop) ``traceloop.span.kind`` and ``llm.request.type``.
_TRACELOOP_ROLES = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
_ERROR_CODES = {"2", "STATUS_CODE_ERROR", "ERROR", "SPAN_STATUS_CODE_ERROR", "STATUSCODE.ERROR"}
_CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id", "gen_ai.session.id", "conversation.id",
                      "gcp.vertex.agent.session_id")
_MESSAGE_EVENT = re.compile(r"^gen_ai\.(system|user|assistant|tool|developer)\.message$")
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"
_HEX = re.compile(r"^[0-9a-fA-F]+$")


# -- values ------------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` object -> a plain Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in _values(value["arrayValue"])]
    if "kvlistValue" in value:
        return {kv["key"]: any_value(kv.get("value")) for kv in _values(value["kvlistValue"])
                if isinstance(kv, dict) and isinstance(kv.get("key"), str)}
    return None if not value else value


def _values(holder: Any) -> list[Any]:
    values = holder.get("values") if isinstance(holder, dict) else None
    return values if isinstance(values, list) else []


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``[{"key", "value": AnyValue}]`` or a (possibly nested) dict -> flat dotted dict."""
    if isinstance(raw, list):
        return {kv["key"]: any_value(kv.get("value")) for kv in raw
                if isinstance(kv, dict) and isinstance(kv.get("key"), str) and kv["key"]}
    if isinstance(raw, dict):
        return flatten(raw)
    return {}


def normal_id(value: Any, nbytes: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id as lower-case hex; other ids unchanged.

    ``0x``-prefixed hex (the Python SDK's console output), integers (its
    ``to_json`` context objects as any-agent dumps them) and base64 (protobuf's
    JSON printer) are all the same id in different clothes.
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"{value:0{nbytes * 2}x}" if value >= 0 else str(value)
    text = str(value).strip()
    if text[:2].lower() == "0x" and _HEX.match(text[2:]):
        return text[2:].lower()
    if len(text) == nbytes * 2 and _HEX.match(text):
        return text.lower()
    if len(text) == 4 * ((nbytes + 2) // 3) and text.endswith("="):
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return text
        if len(raw) == nbytes:
            return raw.hex()
    return text


def _time(value: Any) -> float | None:
    """Unix seconds from ISO text, epoch s/ms/us/ns, or a JS ``[seconds, nanoseconds]`` pair."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        seconds = value[0] + value[1] / 1e9
        return seconds if seconds > 0 else None
    return iso_seconds(value)


# -- record shapes -----------------------------------------------------------------------


def _js_context(record: dict[str, Any]) -> dict[str, Any]:
    """The JS SDK's span context: ``spanContext`` (a copied ReadableSpan) or ``_spanContext`` (a stringified Span)."""
    for key in ("spanContext", "_spanContext"):
        if isinstance(record.get(key), dict):
            return record[key]
    return {}


def _span_ids_present(record: dict[str, Any]) -> bool:
    ctx = record.get("context") if isinstance(record.get("context"), dict) else None
    sctx = _js_context(record) or None
    return bool(
        (ctx and ("span_id" in ctx or "spanId" in ctx))
        or (sctx and "spanId" in sctx)
        or "span_id" in record or "spanId" in record
    )


def _is_flat_span(record: dict[str, Any]) -> bool:
    return _span_ids_present(record) and "name" in record and ("attributes" in record or "span_kind" in record)


def _event_name(record: dict[str, Any], attrs: dict[str, Any] | None = None) -> str:
    attrs = attrs if attrs is not None else attributes(record.get("attributes"))
    return str(record.get("event_name") or record.get("eventName") or attrs.get("event.name") or "")


def is_log_record(record: Any) -> bool:
    """A flat OpenTelemetry log record (console ``to_json`` or one OTLP ``logRecord``)."""
    if not isinstance(record, dict) or "name" in record:
        return False
    timed = any(k in record for k in ("observed_timestamp", "observedTimeUnixNano", "timeUnixNano", "timestamp"))
    leveled = any(k in record for k in ("severity_number", "severityNumber", "severity_text", "severityText"))
    return (timed or leveled) and ("body" in record or bool(_event_name(record)))


def _span_lists(record: dict[str, Any]) -> list[list[Any]]:
    """The lists of spans a wrapper object holds: any-agent's ``{"spans": [...]}``, or spans keyed by operation."""
    if _span_ids_present(record):
        return []
    return [v for v in record.values()
            if isinstance(v, list) and any(isinstance(s, dict) and _is_flat_span(s) for s in v[:5])]


def _is_container(record: dict[str, Any]) -> bool:
    return bool(_span_lists(record))


def is_span_record(record: Any) -> bool:
    """Whether ``record`` holds OpenTelemetry spans or log records in one of the shapes above."""
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("resourceSpans"), list) or isinstance(record.get("resourceLogs"), list):
        return True
    return _is_flat_span(record) or _is_container(record) or is_log_record(record)


def raw_items(record: Any) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``("span" | "log", resource attributes, item)`` for every span and log record of one record."""
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object holding spans, got {type(record).__name__}")
    if "resourceSpans" in record or "resourceLogs" in record:
        for kind, top, scopes, items in (("span", "resourceSpans", ("scopeSpans", "instrumentationLibrarySpans"), "spans"),
                                         ("log", "resourceLogs", ("scopeLogs", "instrumentationLibraryLogs"), "logRecords")):
            for res in _list(record.get(top)):
                resource = _resource_of(res)
                for scope in _list(res.get(scopes[0]) or res.get(scopes[1])):
                    for item in _list(scope.get(items)):
                        yield kind, resource, item
        return
    if lists := _span_lists(record):
        for spans in lists:
            for span in spans:
                if isinstance(span, dict):
                    yield "span", _resource_of(span), span
        return
    if _is_flat_span(record):
        yield "span", _resource_of(record), record
        return
    if is_log_record(record):
        yield "log", _resource_of(record), record
        return
    raise RecordError("not a span: expected 'resourceSpans' or a span with 'name', ids and 'attributes'")


def _list(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a list (anything else: none)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _resource_of(item: dict[str, Any]) -> dict[str, Any]:
    res = item.get("resource")
    return attributes(res.get("attributes")) if isinstance(res, dict) else {}


def raw_spans(record: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(resource attributes, span) for every span of a record (log records left out)."""
    for kind, resource, item in raw_items(record):
        if kind == "span":
            yield resource, item


def sample_attribute_keys(record: Any, limit: int = 200) -> set[str]:
    """Attribute keys (and GenAI event names) of the first spans and logs of a record (for detection)."""
    keys: set[str] = set()
    for kind, _resource, item in raw_items(record):
        attrs = attributes(item.get("attributes"))
        keys.update(attrs.keys())
        if kind == "log" and (name := _event_name(item, attrs)):
            keys.add(name)
        if len(keys) > limit:
            break
    return keys


def sample_span_names(record: Any, limit: int = 50) -> list[str]:
    """Names of the first spans of a record (for detection)."""
    names = []
    for kind, _resource, item in raw_items(record):
        if kind == "span":
            names.append(str(item.get("name") or ""))
        if len(names) >= limit:
            break
    return names


def _ids(span: dict[str, Any]) -> tuple[str, str, str | None]:
    ctx = span.get("context") if isinstance(span.get("context"), dict) else {}
    sctx = _js_context(span)
    trace = next((v for v in (span.get("traceId"), span.get("trace_id"), ctx.get("trace_id"), ctx.get("traceId"),
                              sctx.get("traceId")) if v not in (None, "")), None)
    span_id = next((v for v in (span.get("spanId"), span.get("span_id"), ctx.get("span_id"), ctx.get("spanId"),
                                sctx.get("spanId")) if v not in (None, "")), None)
    parent: Any = span.get("parentSpanId") or span.get("parent_span_id") or span.get("parent_id") or span.get("parentId")
    for holder in ("parent", "parentSpanContext"):
        if not parent and isinstance(span.get(holder), dict):
            parent = span[holder].get("span_id") or span[holder].get("spanId")
    if trace is None or span_id is None:
        raise RecordError(f"span {span.get('name')!r} has no trace id or span id")
    return normal_id(trace, 16) or str(trace), normal_id(span_id, 8) or str(span_id), normal_id(parent, 8)


def _status(span: dict[str, Any]) -> tuple[bool, str | None]:
    status = span.get("status") if isinstance(span.get("status"), dict) else {}
    code = status.get("code", status.get("status_code", span.get("status_code")))
    message = status.get("message") or status.get("description") or span.get("status_message") or None
    return str(code).strip().upper() in _ERROR_CODES, message


def _events(span: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(str(ev.get("name") or ""), attributes(ev.get("attributes"))) for ev in _list(span.get("events"))]


def _evaluations(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """GenAI ``gen_ai.evaluation.result`` events and OpenInference ``(trace.)evaluations`` / annotations."""
    out: list[dict[str, Any]] = []

    def add(name: Any, label: Any, score: Any, explanation: Any) -> None:
        if label is None and score is None:
            return
        try:
            value = float(score) if score is not None and not isinstance(score, bool) else (1.0 if score else None)
        except (TypeError, ValueError):
            value = None
        out.append(vars(Evaluation(str(name or "evaluation"), str(label) if label is not None else None, value,
                                   str(explanation) if explanation else None)))

    for name, ev in events:
        if name == "gen_ai.evaluation.result" or "gen_ai.evaluation.name" in ev:
            add(ev.get("gen_ai.evaluation.name"), ev.get("gen_ai.evaluation.score.label"),
                ev.get("gen_ai.evaluation.score.value"), ev.get("gen_ai.evaluation.explanation"))
    for prefix in ("trace.evaluations.", "evaluations.", "trace.annotations.", "annotations."):
        kind = "annotation" if "annotation" in prefix else "evaluation"
        for item in indexed(attrs, prefix):
            add(item.get(f"{kind}.name"), item.get(f"{kind}.label"), item.get(f"{kind}.score"),
                item.get(f"{kind}.explanation"))
    return out


# -- messages ----------------------------------------------------------------------------


def _msg(message: Message | None) -> list[dict[str, Any]]:
    return [asdict(message)] if message is not None else []


def _oi_messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    msgs = [normalise_message(m) for m in indexed(attrs, prefix)]
    return [vars(m) for m in msgs if m is not None]


def _legacy_messages(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]], which: str) -> list[dict[str, Any]]:
    """Older GenAI conventions: ``gen_ai.prompt`` / ``gen_ai.completion`` (JSON or text, flattened, or events)."""
    key = f"gen_ai.{which}"
    if key in attrs:
        value = maybe_json(attrs[key])
        msgs = normalise_messages(value)
        if which == "completion" and isinstance(value, str):
            msgs = [dict(m, role="assistant") for m in msgs]
        return msgs
    flat = indexed(attrs, f"{key}.")
    if flat:
        return normalise_messages(flat)
    for name, ev in events:
        if name in (f"gen_ai.content.{which}", f"gen_ai.{which}") and key in ev:
            msgs = normalise_messages(maybe_json(ev[key]))
            return [dict(m, role="assistant") for m in msgs] if which == "completion" else msgs
    return []


def _event_body(body: Any) -> dict[str, Any]:
    body = maybe_json(any_value(body))
    if isinstance(body, dict):
        return body
    return {"content": body} if body not in (None, "") else {}


def _content(value: Any) -> Any:
    """An event's ``content``: a list of parts (possibly JSON-encoded, as Strands writes it) or text."""
    decoded = maybe_json(value) if isinstance(value, str) else value
    if isinstance(decoded, list):
        return decoded
    if isinstance(decoded, dict) and ("type" in decoded or "text" in decoded):
        return [decoded]
    return value if isinstance(value, str) or value is None else text_of(value)


def event_messages(name: str, body: Any, attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(input messages, output messages) carried by one GenAI event (a log record or a span event).

    ``gen_ai.<role>.message`` bodies hold ``content``, an assistant's
    ``tool_calls`` (``[{"id", "function": {"name", "arguments"}}]``) and a tool
    message's ``id``; ``gen_ai.choice`` holds ``message`` (and ``index``,
    ``finish_reason``). When an instrumentation puts these fields in the
    event's attributes instead of a body (span events), the attributes are used.
    ``gen_ai.client.inference.operation.details`` carries
    ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
    ``gen_ai.system_instructions`` attributes (lists of parts messages).
    """
    fields = _event_body(body) or {k: v for k, v in attrs.items() if k not in ("gen_ai.system", "event.name")}
    match = _MESSAGE_EVENT.match(name)
    if match:
        role = str(fields.get("role") or match.group(1))
        raw = {"role": "system" if role == "developer" else role, "content": _content(fields.get("content")),
               "tool_calls": maybe_json(fields.get("tool_calls")) or None,
               "tool_call_id": fields.get("id") or fields.get("tool_call_id")}
        return _msg(normalise_message({k: v for k, v in raw.items() if v is not None})), []
    if name == "gen_ai.choice":
        message = maybe_json(fields.get("message"))
        if not isinstance(message, dict):
            message = {"content": message} if message not in (None, "") else {
                k: fields[k] for k in ("content", "tool_calls") if k in fields}
        message = {**message, "role": message.get("role") or "assistant", "content": _content(message.get("content")),
                   "tool_calls": maybe_json(message.get("tool_calls"))}
        return [], _msg(normalise_message(message))
    if name == _DETAILS_EVENT:
        source = {**attrs, **{k: v for k, v in fields.items() if k.startswith("gen_ai.")}}
        inputs = normalise_messages(source["gen_ai.input.messages"]) if "gen_ai.input.messages" in source else []
        outputs = normalise_messages(source["gen_ai.output.messages"]) if "gen_ai.output.messages" in source else []
        system = _system_message(source.get("gen_ai.system_instructions"))
        return ([*system, *inputs] if system and not any(m["role"] == "system" for m in inputs) else inputs), outputs
    return [], []


def _system_message(raw: Any) -> list[dict[str, Any]]:
    raw = maybe_json(raw)
    if raw in (None, "", []):
        return []
    if isinstance(raw, list):
        text = "\n".join(text_of(p.get("content", p.get("text"))) if isinstance(p, dict) else text_of(p) for p in raw)
    else:
        text = text_of(raw)
    return [asdict(Message("system", text))] if text.strip() else []


def _span_event_messages(events: list[tuple[str, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for name, ev in events:
        if _MESSAGE_EVENT.match(name) or name in ("gen_ai.choice", _DETAILS_EVENT):
            ins, outs = event_messages(name, ev.get("body") if "body" in ev else None, ev)
            inputs.extend(ins)
            outputs.extend(outs)
    return inputs, outputs


def _logfire_events(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pydantic AI / Logfire put the GenAI events of a model call in one JSON ``events`` attribute."""
    raw = maybe_json(attrs.get("events"))
    if not isinstance(raw, list):
        return [], []
    inputs: list[dict[str, Any]] = []
    outputs: list[dict[str, Any]] = []
    for ev in raw:
        if isinstance(ev, dict) and isinstance(ev.get("event.name"), str):
            ins, outs = event_messages(ev["event.name"], {k: v for k, v in ev.items() if k != "event.name"}, {})
            inputs.extend(ins)
            outputs.extend(outs)
    return inputs, outputs


def _any_agent_output(raw: Any) -> list[dict[str, Any]]:
    """any-agent's ``gen_ai.output`` of a model call: ``[{"tool.name", "tool.args"}]`` or the answer text."""
    value = maybe_json(raw)
    if isinstance(value, list) and value and all(isinstance(v, dict) and "tool.name" in v for v in value):
        calls = [{"id": v.get("tool.id") or v.get("tool.call.id"), "name": v["tool.name"],
                  "arguments": maybe_json(v.get("tool.args"))} for v in value]
        return [asdict(Message("assistant", calls=calls))]
    text = raw if isinstance(raw, str) else text_of(raw)
    return [asdict(Message("assistant", text))] if text.strip() else []


def _gemini_messages(contents: Any) -> list[dict[str, Any]]:
    """Gemini ``contents`` (``[{"role": "user"|"model", "parts": [text | function_call | function_response]}]``)."""
    out: list[dict[str, Any]] = []
    for content in contents if isinstance(contents, list) else [contents]:
        if not isinstance(content, dict):
            continue
        role = {"model": "assistant"}.get(str(content.get("role") or "user"), str(content.get("role") or "user"))
        texts, calls = [], []
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            call = part.get("function_call") or part.get("functionCall")
            response = part.get("function_response") or part.get("functionResponse")
            if isinstance(call, dict):
                calls.append({"id": call.get("id"), "name": call.get("name"), "arguments": maybe_json(call.get("args"))})
            elif isinstance(response, dict):
                out.append(asdict(Message("tool", text_of(response.get("response")), call_id=response.get("id"))))
            elif part.get("text") and not part.get("thought"):
                texts.append(str(part["text"]))
        if texts or calls:
            out.append(asdict(Message(role, "\n".join(texts), calls=calls)))
    return out


def _adk_messages(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Google ADK: ``gcp.vertex.agent.llm_request`` / ``llm_response`` (Gemini request and response JSON)."""
    request = maybe_json(attrs.get("gcp.vertex.agent.llm_request"))
    response = maybe_json(attrs.get("gcp.vertex.agent.llm_response"))
    inputs: list[dict[str, Any]] = []
    if isinstance(request, dict):
        config = request.get("config") if isinstance(request.get("config"), dict) else {}
        inputs = [*_system_message(config.get("system_instruction")), *_gemini_messages(request.get("contents"))]
    outputs: list[dict[str, Any]] = []
    if isinstance(response, dict):
        content = response.get("content")
        if content is None and isinstance(response.get("candidates"), list) and response["candidates"]:
            content = (response["candidates"][0] or {}).get("content")
        outputs = [dict(m, role="assistant") for m in _gemini_messages(content)]
    return inputs, outputs


# -- spans -> nodes ----------------------------------------------------------------------


def _scalar_id(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


def clean_ids(node: Node) -> Node:
    """Call ids as strings or None everywhere in a node (assembly matches calls to results by them)."""
    node.call_id = _scalar_id(node.call_id)
    for message in (*node.input_messages, *node.output_messages):
        message["call_id"] = _scalar_id(message.get("call_id"))
        message["calls"] = [
            dict(c, id=_scalar_id(c.get("id")), name=c.get("name") if isinstance(c.get("name"), str) else None)
            for c in message.get("calls") or [] if isinstance(c, dict)
        ]
    return node


def _error(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]], failed: bool, message: str | None) -> str | None:
    exc = next((ev for name, ev in events if name == "exception" or "exception.type" in ev), None)
    parts = []
    if exc:
        kind, text = exc.get("exception.type") or exc.get("exception.name"), exc.get("exception.message")
        parts.append(f"{kind}: {text}" if kind and text else str(kind or text or ""))
    elif attrs.get("error.type") and (failed or message):
        parts.append(str(attrs["error.type"]) + (f": {message}" if message else ""))
    elif attrs.get("error.type"):
        parts.append(str(attrs["error.type"]))
    elif failed:
        parts.append(message or "error status")
    return "; ".join(p for p in parts if p) or None


def _role(attrs: dict[str, Any], span: dict[str, Any], name: str) -> str:
    op = str(attrs.get("gen_ai.operation.name") or "").lower()
    oi_kind = str(attrs.get("openinference.span.kind") or span.get("span_kind") or "").upper()
    role = _GENAI_ROLES.get(op) or _OI_ROLES.get(oi_kind)
    if role:
        return role
    if (kind := str(attrs.get("traceloop.span.kind") or "").lower()) in _TRACELOOP_ROLES:
        return _TRACELOOP_ROLES[kind]
    if str(attrs.get("llm.request.type") or "").lower() in ("chat", "completion"):
        return "llm"
    head = name.split(" ", 1)[0].lower()  # span names as the conventions spell them, "chat gpt-4o"
    return _GENAI_ROLES.get(head, "other") if head in ("call_llm", "execute_tool", "invoke_agent") else "other"


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) is not None), None)


def node_from_span(span: dict[str, Any], resource: dict[str, Any], seq: int) -> tuple[str, Node, str | None]:
    """(trace id, node, conversation id) of one span."""
    trace, span_id, parent = _ids(span)
    attrs = attributes(span.get("attributes"))
    events = _events(span)
    failed, message = _status(span)
    name = str(span.get("name") or attrs.get("gen_ai.operation.name") or attrs.get("openinference.span.kind")
               or span.get("span_kind") or "span")
    role = _role(attrs, span, name)
    start = _time(span.get("startTimeUnixNano") or span.get("start_time") or span.get("startTime"))
    end = _time(span.get("endTimeUnixNano") or span.get("end_time") or span.get("endTime"))

    inputs = normalise_messages(attrs["gen_ai.input.messages"]) if "gen_ai.input.messages" in attrs else []
    outputs = normalise_messages(attrs["gen_ai.output.messages"]) if "gen_ai.output.messages" in attrs else []
    inputs = inputs or _legacy_messages(attrs, events, "prompt") or _oi_messages(attrs, "llm.input_messages.")
    outputs = outputs or _legacy_messages(attrs, events, "completion") or _oi_messages(attrs, "llm.output_messages.")
    if role == "llm" and not outputs and "gen_ai.output" in attrs:  # any-agent
        outputs = _any_agent_output(attrs["gen_ai.output"])
    if not inputs and not outputs and ("gcp.vertex.agent.llm_request" in attrs or "gcp.vertex.agent.llm_response" in attrs):
        inputs, outputs = _adk_messages(attrs)
    if not inputs and not outputs:
        ev_in, ev_out = _span_event_messages(events)
        if not ev_in and not ev_out:
            ev_in, ev_out = _logfire_events(attrs)
        inputs, outputs = ev_in, ev_out
    if not inputs and role in ("agent", "chain") and "pydantic_ai.all_messages" in attrs:
        inputs = normalise_messages(attrs["pydantic_ai.all_messages"])
    if "gen_ai.system_instructions" in attrs and not any(m["role"] == "system" for m in inputs):
        inputs = [*_system_message(attrs["gen_ai.system_instructions"]), *inputs]

    tool = _first(attrs, "gen_ai.tool.name", "tool.name")
    handoff = {k: attrs[f"gen_ai.handoff.{k}"] for k in ("from_agent", "to_agent") if attrs.get(f"gen_ai.handoff.{k}")}
    if handoff and not tool:  # opentelemetry-instrumentation-openai-agents: the handoff tool the model called
        tool = re.sub(r"[^a-zA-Z0-9_]", "_", f"transfer_to_{handoff.get('to_agent', '')}".replace(" ", "_")).lower()
    if role == "tool" and not tool:
        tool = attrs.get("traceloop.entity.name") or name.removeprefix("execute_tool").strip() or None
    arguments = _first(attrs, "gen_ai.tool.call.arguments", "gen_ai.tool.args", "tool_arguments",
                       "gcp.vertex.agent.tool_call_args")
    if arguments is None and handoff:
        arguments = handoff
    if arguments is None and role in ("tool", "retriever"):
        arguments = _first(attrs, "input.value", "traceloop.entity.input", "tool.parameters")
        if isinstance(maybe_json(arguments), dict) and set(maybe_json(arguments)) == {"inputs"} and \
                "traceloop.entity.input" in attrs:
            arguments = maybe_json(arguments)["inputs"]
    result = _first(attrs, "gen_ai.tool.call.result")
    if result is None and role == "tool":
        result = _first(attrs, "gen_ai.output", "tool_response", "gcp.vertex.agent.tool_response", "traceloop.entity.output")
    if result is None:
        result = attrs.get("output.value")
    if role == "retriever" and result is None:
        docs = indexed(attrs, "retrieval.documents.")
        result = "\n".join(text_of(d.get("document.content")) for d in docs) or None
    model = _first(attrs, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name")
    conversation = next((str(attrs[k]) for k in _CONVERSATION_KEYS if attrs.get(k)), None)
    input_text = _first(attrs, "input.value", "traceloop.entity.input") if role != "tool" else attrs.get("input.value")
    info = {
        "agent_name": attrs.get("gen_ai.agent.name") or attrs.get("agent_name"),
        "agent_id": attrs.get("gen_ai.agent.id"),
        "conversation_id": conversation,
        "service": resource.get("service.name"),
        "provider": attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or attrs.get("llm.provider"),
        "user_id": attrs.get("user.id"),
        "finish_reasons": attrs.get("gen_ai.response.finish_reasons") if role == "llm" else None,
    } if role in ("agent", "chain") or parent is None else {}
    node = Node(
        id=span_id, parent=parent, role=role, name=name, start=start, end=end, seq=seq,
        tool=str(tool) if tool else None,
        call_id=_first(attrs, "gen_ai.tool.call.id", "tool.id", "tool_call.id"),
        arguments=maybe_json(arguments),
        result=text_of(maybe_json(result)) if result is not None else None,
        error=_error(attrs, events, failed, message),
        input_messages=inputs, output_messages=outputs,
        input_text=text_of(input_text) if input_text is not None else None,
        output_text=text_of(attrs.get("output.value")) if attrs.get("output.value") is not None else None,
        model=str(model) if model else None,
        evaluations=_evaluations(attrs, events),
        info={k: v for k, v in info.items() if v},
    )
    if role == "evaluator":  # an evaluator span: its output is the verdict
        verdict = maybe_json(node.output_text)
        if isinstance(verdict, dict):
            node.evaluations.append(vars(Evaluation(name, verdict.get("label"), verdict.get("score"),
                                                    verdict.get("explanation"))))
        elif isinstance(verdict, str) and verdict.strip():
            node.evaluations.append(vars(Evaluation(name, verdict.strip())))
    return trace, clean_ids(node), conversation


def node_from_log(log: dict[str, Any], seq: int) -> tuple[str, Node] | None:
    """(trace id, ``event`` node) of a GenAI log record; None for other logs. RecordError without ids."""
    attrs = attributes(log.get("attributes"))
    name = _event_name(log, attrs)
    if not name.startswith("gen_ai."):
        return None
    inputs, outputs = event_messages(name, log.get("body"), attrs)
    trace = normal_id(log.get("traceId") or log.get("trace_id"), 16)
    span_id = normal_id(log.get("spanId") or log.get("span_id"), 8)
    if not trace or not span_id:
        raise RecordError(f"log event {name!r} has no trace_id/span_id: it cannot be joined to its span")
    body = _event_body(log.get("body"))
    info = {"event": name}
    if name == "gen_ai.choice":
        info.update({"index": body.get("index"), "finish_reason": body.get("finish_reason")})
    when = _time(log.get("timeUnixNano") or log.get("timestamp") or log.get("observedTimeUnixNano")
                 or log.get("observed_timestamp"))
    node = Node(id=f"{span_id}#event{seq}", parent=span_id, role="event", name=name, start=when, seq=seq,
                input_messages=inputs, output_messages=outputs, info={k: v for k, v in info.items() if v is not None})
    return trace, clean_ids(node)


def otlp_nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    """(trace id, node, conversation id) for every span and GenAI log event of one record.

    The adapter ``nodes`` of OTel GenAI and OpenInference (see the module
    docstring); ``ctx`` is unused, kept for the adapter protocol. A GenAI log
    record without ids is reported after the record's other items are kept.
    """
    orphans: list[str] = []
    for n, (kind, resource, item) in enumerate(raw_items(record)):
        if kind == "span":
            yield node_from_span(item, resource, seq + n)
            continue
        try:
            found = node_from_log(item, seq + n)
        except RecordError as exc:
            orphans.append(str(exc))
            continue
        if found is not None:
            yield found[0], found[1], None
    if orphans:
        more = f" (+{len(orphans) - 1} more)" if len(orphans) > 1 else ""
        raise RecordError(orphans[0] + more)


# -- assembly ----------------------------------------------------------------------------


def merge_events(nodes: list[Node]) -> list[Node]:
    """Fold ``event`` nodes (GenAI log records) into their spans; drop spans read twice.

    A span's own message attributes win; else its events give the input
    messages in the order they were emitted and the output messages (choices)
    by ``index``. Events whose span was never exported become a model-call node
    of their own, so logs without spans still make a run.
    """
    spans: dict[str, Node] = {}
    events: dict[str, list[Node]] = {}
    seen: set[tuple[Any, ...]] = set()
    for node in nodes:
        if node.role == "event":
            # one event read twice (a console dump and an OTLP file of the same run): same span, name, time, content
            key = (node.parent, node.name, round(node.start * 1e6) if node.start else None,
                   json.dumps([node.input_messages, node.output_messages, node.info], sort_keys=True, default=str))
            if key not in seen:
                seen.add(key)
                events.setdefault(node.parent or "", []).append(node)
        elif node.id not in spans or _richer(node, spans[node.id]):
            spans[node.id] = node
    for span_id, group in events.items():
        group.sort(key=lambda n: (n.seq, n.start or 0.0))
        inputs = [m for n in group for m in n.input_messages]
        choices = sorted((n for n in group if n.output_messages), key=lambda n: (n.info.get("index") or 0, n.seq))
        outputs = [m for n in choices for m in n.output_messages]
        span = spans.get(span_id)
        if span is None:
            starts = [n.start for n in group if n.start]
            span = spans[span_id] = Node(id=span_id, parent=None, role="llm", name="gen_ai events", seq=group[0].seq,
                                         start=min(starts) if starts else None, end=max(starts) if starts else None)
        if not span.input_messages:
            span.input_messages = inputs
        if not span.output_messages:
            span.output_messages = outputs
        if span.role == "other" and (inputs or outputs):
            span.role = "llm"
        reasons = [n.info["finish_reason"] for n in choices if n.info.get("finish_reason")]
        if reasons:
            span.info = {**span.info, "finish_reasons": reasons}
    return sorted(spans.values(), key=lambda n: n.seq)


def _richer(new: Node, old: Node) -> bool:
    return len(new.input_messages) + len(new.output_messages) > len(old.input_messages) + len(old.output_messages)


#: Framework wording around the user's words in the first user message (smolagents' "New task:").
_TASK_WRAPPER = re.compile(r"^\s*New task:\s*\n")


def current_instruction(nodes: list[Node]) -> str | None:
    """The run's own instruction: the *latest* user message of the message list the task is read from.

    A chat app sends a conversation's whole history with every call, so the
    first user message of a call is where the conversation started, not what
    this run was asked; the latest one is. None when the task comes from a
    root input text instead (see ``_spans._task``).
    """
    order = _ordered(nodes)
    if not order:
        return None
    root = order[0][0]
    if first_user_text(root.input_messages):
        messages = root.input_messages
    elif task_from_input(root.input_text):
        return None
    else:
        messages = next((n.input_messages for n, _ in order
                         if n.role in ("llm", "agent") and first_user_text(n.input_messages)), [])
    users = [m["text"] for m in messages  # (a user-role message answering a tool call is a tool result)
             if m.get("role") in ("user", "human") and str(m.get("text") or "").strip() and not m.get("call_id")]
    if not users:
        return None
    return clip_task(_TASK_WRAPPER.sub("", users[-1]).strip() or users[-1].strip())


def with_current_instruction(run: Trajectory, nodes: list[Node]) -> Trajectory:
    task = current_instruction(nodes)
    return run.model_copy(update={"task": task}) if task and task != run.task else run


@dataclass(frozen=True)
class OtlpFormat(SpanFormat):
    """A span format read through this module: log events merged, spans read twice kept once.

    With ``latest_user_message`` the task is the latest user message of the
    first message list (see :func:`current_instruction`). With
    ``name_when_no_input``, a trace whose spans record no input at all
    (content capture off: ``opentelemetry-instrumentation-openai-v2`` keeps
    prompts out of spans and logs unless told otherwise) is still a run: its
    task names the operation that ran and says that no input was recorded
    (``metadata.task_source = "span name"``), rather than the run being lost.
    A trace of embedding calls only is no agent run and is rejected.
    """

    name_when_no_input: bool = False
    latest_user_message: bool = False

    def assemble_trajectory(self, key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
        nodes = merge_events(group)
        try:
            run = span_trajectory(self.name, self.prefix, key, nodes, ctx, by=by)
            return with_current_instruction(run, nodes) if self.latest_user_message else run
        except RecordError as exc:
            if not (self.name_when_no_input and nodes and str(exc).startswith("no task")):
                raise
        if not any(n.role in ("llm", "tool", "agent", "chain", "retriever") for n in nodes):
            kinds = ", ".join(sorted({n.name.split(" ", 1)[0] for n in nodes}))
            raise RecordError(f"not an agent run: the {by} holds only {kinds} spans and no input")
        ids = {n.id for n in nodes}
        roots = [n for n in nodes if not n.parent or n.parent not in ids or n.parent == n.id]
        root = min(roots or nodes, key=lambda n: (n.start if n.start is not None else float("inf"), n.seq))
        nodes = [replace(n, input_text=f"{root.name} (no input recorded)") if n is root else n for n in nodes]
        run = span_trajectory(self.name, self.prefix, key, nodes, ctx, by=by)
        return run.model_copy(update={"metadata": {**run.metadata, "task_source": "span name"}})
