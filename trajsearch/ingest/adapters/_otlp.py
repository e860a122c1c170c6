"""OpenTelemetry spans as JSON -> :class:`~._spans.Node`, for the OTel GenAI and OpenInference adapters.

Two record shapes are read:

- OTLP/JSON (``ExportTraceServiceRequest``, what the OTLP file exporter and
  the collector's ``file`` exporter write, one request per line or one per
  file): ``{"resourceSpans": [{"resource": {"attributes": [...]}, "scopeSpans":
  [{"spans": [...]}]}]}``; ids are hex strings, times ``*UnixNano`` (strings
  or numbers), attribute values ``{"stringValue" | "intValue" | "doubleValue" |
  "boolValue" | "arrayValue" | "kvlistValue": ...}``, ``status.code`` 2 or
  ``STATUS_CODE_ERROR`` for an error;
- flat span objects, one per line (Phoenix / OpenInference exports, many
  tracing back-ends): ``{"name", "context": {"trace_id", "span_id"}`` (or
  top-level ``trace_id`` / ``span_id`` / ``traceId``), ``"parent_id"``,
  ``"start_time"``, ``"end_time"`` (ISO or epoch), ``"status_code"``,
  ``"status_message"``, ``"attributes"`` (flat dotted keys or nested),
  ``"events"``}.

Attributes of both conventions are understood on every span, since one trace
often carries both (see ``otel_genai`` and ``openinference`` for the mapping).
"""

from __future__ import annotations

from typing import Any, Iterator

from ._common import Context, RecordError
from ._spans import (
    Evaluation,
    Node,
    flatten,
    indexed,
    iso_seconds,
    maybe_json,
    normalise_message,
    normalise_messages,
    text_of,
)

_GENAI_ROLES = {
    "invoke_agent": "agent", "create_agent": "agent", "invoke_workflow": "agent",
    "execute_tool": "tool",
    "chat": "llm", "text_completion": "llm", "generate_content": "llm", "completion": "llm",
    "retrieval": "retriever", "retrieve": "retriever",
    "embeddings": "other",
}
_OI_ROLES = {
    "AGENT": "agent", "CHAIN": "chain", "TOOL": "tool", "LLM": "llm", "RETRIEVER": "retriever",
    "EVALUATOR": "evaluator", "RERANKER": "other", "EMBEDDING": "other", "GUARDRAIL": "other", "PROMPT": "other",
}
_ERROR_CODES = {2, "2", "STATUS_CODE_ERROR", "ERROR", "error"}
_CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id", "gen_ai.session.id", "conversation.id")


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
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv.get("key"): any_value(kv.get("value")) for kv in (value["kvlistValue"] or {}).get("values", [])}
    return None if not value else value


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``[{"key", "value": AnyValue}]`` or a (possibly nested) dict -> flat dotted dict."""
    if isinstance(raw, list):
        return {kv.get("key"): any_value(kv.get("value")) for kv in raw if isinstance(kv, dict) and kv.get("key")}
    if isinstance(raw, dict):
        return flatten(raw)
    return {}


def is_span_record(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("resourceSpans"), list):
        return True
    ctx = record.get("context")
    has_ids = isinstance(ctx, dict) and "span_id" in ctx or "span_id" in record or "spanId" in record
    return bool(has_ids and "name" in record and ("attributes" in record or "span_kind" in record))


def sample_attribute_keys(record: Any, limit: int = 200) -> set[str]:
    """Attribute keys of the first spans of a record (for format detection)."""
    keys: set[str] = set()
    for _resource, span in raw_spans(record):
        keys.update(attributes(span.get("attributes")).keys())
        if len(keys) > limit:
            break
    return keys


def raw_spans(record: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """(resource attributes, span) for every span in an OTLP request or a flat span record."""
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object holding spans, got {type(record).__name__}")
    if "resourceSpans" not in record:
        if not is_span_record(record):
            raise RecordError("not a span: expected 'resourceSpans' or a span with 'name', ids and 'attributes'")
        yield {}, record
        return
    for rs in record.get("resourceSpans") or []:
        if not isinstance(rs, dict):
            continue
        resource = attributes((rs.get("resource") or {}).get("attributes"))
        for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
            for span in (ss or {}).get("spans") or []:
                if isinstance(span, dict):
                    yield resource, span


def _ids(span: dict[str, Any]) -> tuple[str, str, str | None]:
    ctx = span.get("context") if isinstance(span.get("context"), dict) else {}
    trace = span.get("traceId") or span.get("trace_id") or ctx.get("trace_id") or ctx.get("traceId")
    span_id = span.get("spanId") or span.get("span_id") or ctx.get("span_id") or ctx.get("spanId")
    parent = span.get("parentSpanId") or span.get("parent_span_id") or span.get("parent_id") or span.get("parentId")
    if not trace or not span_id:
        raise RecordError(f"span {span.get('name')!r} has no trace id or span id")
    return str(trace), str(span_id), str(parent) if parent else None


def _status(span: dict[str, Any]) -> tuple[bool, str | None]:
    status = span.get("status") if isinstance(span.get("status"), dict) else {}
    code = status.get("code", span.get("status_code"))
    message = status.get("message") or span.get("status_message") or None
    return code in _ERROR_CODES, message


def _events(span: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for ev in span.get("events") or []:
        if isinstance(ev, dict):
            out.append((str(ev.get("name") or ""), attributes(ev.get("attributes"))))
    return out


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


def _error(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]], failed: bool, message: str | None) -> str | None:
    exc = next((ev for name, ev in events if name == "exception" or "exception.type" in ev), None)
    parts = []
    if exc:
        kind, text = exc.get("exception.type"), exc.get("exception.message")
        parts.append(f"{kind}: {text}" if kind and text else str(kind or text or ""))
    elif attrs.get("error.type") and (failed or message):
        parts.append(str(attrs["error.type"]) + (f": {message}" if message else ""))
    elif attrs.get("error.type"):
        parts.append(str(attrs["error.type"]))
    elif failed:
        parts.append(message or "error status")
    return "; ".join(p for p in parts if p) or None


def node_from_span(span: dict[str, Any], resource: dict[str, Any], seq: int) -> tuple[str, Node, str | None]:
    """(trace id, node, conversation id) of one span."""
    trace, span_id, parent = _ids(span)
    attrs = attributes(span.get("attributes"))
    events = _events(span)
    failed, message = _status(span)
    op = str(attrs.get("gen_ai.operation.name") or "").lower()
    oi_kind = str(attrs.get("openinference.span.kind") or span.get("span_kind") or "").upper()
    role = _GENAI_ROLES.get(op) or _OI_ROLES.get(oi_kind) or "other"
    name = str(span.get("name") or op or oi_kind or "span")
    start = iso_seconds(span.get("startTimeUnixNano") or span.get("start_time") or span.get("startTime"))
    end = iso_seconds(span.get("endTimeUnixNano") or span.get("end_time") or span.get("endTime"))

    inputs = normalise_messages(attrs["gen_ai.input.messages"]) if "gen_ai.input.messages" in attrs else []
    outputs = normalise_messages(attrs["gen_ai.output.messages"]) if "gen_ai.output.messages" in attrs else []
    inputs = inputs or _legacy_messages(attrs, events, "prompt") or _oi_messages(attrs, "llm.input_messages.")
    outputs = outputs or _legacy_messages(attrs, events, "completion") or _oi_messages(attrs, "llm.output_messages.")
    if "gen_ai.system_instructions" in attrs and not any(m["role"] == "system" for m in inputs):
        inputs = [{"role": "system", "text": text_of(maybe_json(attrs["gen_ai.system_instructions"])), "reasoning": "",
                   "calls": [], "call_id": None}, *inputs]

    tool = attrs.get("gen_ai.tool.name") or attrs.get("tool.name")
    if role == "tool" and not tool:
        tool = name.removeprefix("execute_tool").strip() or None
    arguments = attrs.get("gen_ai.tool.call.arguments")
    if arguments is None and role in ("tool", "retriever"):
        arguments = attrs.get("input.value", attrs.get("tool.parameters"))
    result = attrs.get("gen_ai.tool.call.result")
    if result is None:
        result = attrs.get("output.value")
    if role == "retriever" and result is None:
        docs = indexed(attrs, "retrieval.documents.")
        result = "\n".join(text_of(d.get("document.content")) for d in docs) or None
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model") or attrs.get("llm.model_name")
    conversation = next((str(attrs[k]) for k in _CONVERSATION_KEYS if attrs.get(k)), None)
    info = {
        "agent_name": attrs.get("gen_ai.agent.name"),
        "agent_id": attrs.get("gen_ai.agent.id"),
        "conversation_id": conversation,
        "service": resource.get("service.name"),
        "provider": attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or attrs.get("llm.provider"),
        "user_id": attrs.get("user.id"),
    } if role in ("agent", "chain") or parent is None else {}
    node = Node(
        id=span_id, parent=parent, role=role, name=name, start=start, end=end, seq=seq,
        tool=str(tool) if tool else None,
        call_id=attrs.get("gen_ai.tool.call.id") or attrs.get("tool.id") or attrs.get("tool_call.id"),
        arguments=maybe_json(arguments),
        result=text_of(maybe_json(result)) if result is not None else None,
        error=_error(attrs, events, failed, message),
        input_messages=inputs, output_messages=outputs,
        input_text=text_of(attrs.get("input.value")) if attrs.get("input.value") is not None else None,
        output_text=text_of(attrs.get("output.value")) if attrs.get("output.value") is not None else None,
        model=str(model) if model else None,
        evaluations=_evaluations(attrs, events),
        info={k: v for k, v in info.items() if v},
    )
    if role == "evaluator":  # an evaluator span: its output is the verdict
        verdict = maybe_json(node.output_text)
        if isinstance(verdict, dict):
            node.evaluations.append(vars(Evaluation(name, verdict.get("label"), verdict.get("score"), verdict.get("explanation"))))
        elif isinstance(verdict, str) and verdict.strip():
            node.evaluations.append(vars(Evaluation(name, verdict.strip())))
    return trace, node, conversation


def otlp_nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    """(trace id, node, conversation id) for every span of one record: the adapter ``nodes`` of both formats.

    OTel GenAI and OpenInference spans are read the same way (see the module
    docstring); the two adapters differ only in detection and id prefix.
    ``ctx`` is unused, kept for the adapter protocol.
    """
    for n, (resource, span) in enumerate(raw_spans(record)):
        yield node_from_span(span, resource, seq + n)
