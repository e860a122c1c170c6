"""The JSON shapes OpenTelemetry spans and log records are written in -> (resource, item) pairs.

Record shapes read (one record may hold many spans):

- OTLP/JSON (``ExportTraceServiceRequest`` / ``ExportLogsServiceRequest``,
  what the OTLP file exporter and the collector's ``file`` exporter write):
  ``{"resourceSpans": [{"resource", "scopeSpans": [{"spans": [...]}]}]}`` and
  ``{"resourceLogs": [{"resource", "scopeLogs": [{"logRecords": [...]}]}]}``;
  ids are hex strings (or base64 when written by protobuf's JSON printer),
  times ``*UnixNano``, attribute values ``{"stringValue" | "intValue" | ... |
  "arrayValue" | "kvlistValue": ...}``, ``status.code`` 2 /
  ``STATUS_CODE_ERROR`` for an error; also with protobuf's field names
  (``resource_spans``, ``string_value``: its JSON printer's
  ``preserving_proto_field_name``), which its parsers accept alike, also bare
  ``Span`` objects so named in a list (Phoenix's REST API, ``GET
  /v1/projects/{p}/spans/otlpv1``: ``{"data": [Span...], "next_cursor"}``); also one
  ``ResourceSpans`` / ``ResourceLogs`` alone (``{"resource", "scopeSpans"}``,
  per line or as the items of an array), as a receiver storing each writes;
  also Grafana Tempo's trace JSON, ``{"batches": [ResourceSpans...]}``;
- the OpenTelemetry Python SDK's ``to_json`` (``ConsoleSpanExporter`` /
  ``ConsoleLogExporter`` output, concatenated pretty objects; any-agent's
  ``AgentTrace`` dump ``{"spans": [...], "final_output"}``, or any object
  whose values are lists of spans): ``name``,
  ``context.trace_id`` / ``span_id`` (``0x``-prefixed hex, or integers),
  ``parent_id`` or ``parent.span_id``, ISO or epoch-ns ``start_time`` /
  ``end_time``, ``status.status_code`` (``ERROR``) and ``status.description``,
  ``attributes``, ``events``; log records: ``body``, ``event_name`` (or the
  ``event.name`` attribute), ``trace_id``, ``span_id``, ``timestamp``;
- the OpenTelemetry Go SDK's ``stdouttrace`` output (``tracetest.SpanStub``:
  ``Name``, ``SpanContext`` / ``Parent`` ``{TraceID, SpanID}``, RFC 3339
  ``StartTime``, ``Attributes`` ``[{Key, Value: {Type, Value}}]``), one per
  line or pretty-printed one after another;
- the OpenTelemetry JS SDK's ``ReadableSpan`` as JSON: ``spanContext.traceId``
  / ``spanId`` (``_spanContext`` when a ``Span`` object was stringified), ``parentSpanId`` or ``parentSpanContext.spanId``,
  ``startTime`` / ``endTime`` as ``[seconds, nanoseconds]``, ``status.code``; its ``LogRecord`` as
  ``JSON.stringify`` writes it (Gemini CLI's and VS Code Copilot Chat's file exporters): ``hrTime``
  ``[seconds, nanoseconds]``, ``spanContext``, ``_body``, ``_eventName``, ``attributes`` a plain object; the
  ``Resource`` of both as its object (``_rawAttributes`` pairs); a metrics export beside them
  (``{resource, scopeMetrics}``, as OTLP's ``resourceMetrics``) holds no span and is passed over;
- flat span objects (Phoenix / OpenInference exports, many back-ends):
  ``context.trace_id`` / ``span_id`` or top-level ``trace_id`` / ``traceId``,
  ``parent_id``, ``status_code``, ``status_message``, attributes flat or nested;
  also a row of Phoenix's ``get_spans_dataframe()`` written by pandas
  (``to_json(orient="records")``, lines or a list), whose column names are
  dotted: ``"context.span_id"``, ``"attributes.input.value"``, ...;
- Jaeger 2's query API (``/api/v3/traces``, ``/api/v3/traces/<id>``: api_v3's streamed ``TracesData`` as
  grpc-gateway writes it, ``{"result": {"resourceSpans": [...]}}`` a chunk, one after another);
- a CloudWatch event as AgentCore's toolkit and a Logs Insights query give it: ``{"timestamp",
  "raw_otel_json": <one span or log record above>}``; an application's own JSON log line in the same
  stream (``{"timestamp", "level", "message", "logger"}``, no OTel key) holds no span and is passed over;
- Jaeger's JSON (its query API and the UI's "Download JSON": ``{"data":
  [{"traceID", "spans", "processes"}]}``, or one such trace): ``operationName``,
  ``traceID`` / ``spanID``, the parent in ``references`` (``CHILD_OF``),
  ``startTime`` and ``duration`` in microseconds, ``tags`` and ``logs[].fields``
  as ``[{key, type, value}]`` (an event's name in its ``event`` field), the
  status in the ``otel.status_code`` / ``otel.status_description`` (or
  ``error``) tags, the resource in ``processes[processID]``;
- Zipkin v2 JSON (what every OTel SDK's Zipkin exporter sends, what Zipkin's ``/api/v2/trace/<id>`` and Jaeger's
  Zipkin-compatible endpoints return: an array of ``{traceId, id, parentId, name, timestamp, duration, kind,
  localEndpoint, tags, annotations}``, read one span a record; ``/api/v2/traces``, the usual bulk dump, returns an
  array of such arrays, read one trace a record): times in microseconds, every attribute a text
  tag (an array attribute a JSON array), the status in the ``otel.status_code`` tag and its description in
  ``error``, events as annotations. The Python exporter cuts every tag (and event attribute) at 128 characters
  unless told otherwise (``ZipkinExporter(max_tag_value_length=...)``; no environment variable sets it).

Whatever the shape, the SDK itself cuts every string attribute value (of spans and their events) at
``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` characters when that is set (the spec's attribute limits; Python's
``_clean_attribute_value`` keeps ``value[:limit]``), so an OTLP file is cut as a Zipkin one is, at any length.
JSON cut so it no longer parses is no message anyone sent, so (:func:`uncut_span`) a cut message list keeps only
its whole messages and any other cut JSON value is left out of the attributes; the span notes what was cut
(``tags_cut``: the keys, the length they were cut at, the cut texts and who cut them), which the run's metadata
then says, and from which a tool's cut input and output are read back as cut text, marked as cut (see
``adapter``: what a tool returned is still what it returned, up to the cut).

Trace and span ids are normalised to lower-case hex (``0x`` dropped, base64
and integer ids converted, see ``values``), so one trace read from a console
dump and from an OTLP file is the same run; other ids (``"s01"``) are kept as
they are.

This module knows where things are in each shape (detection, the items of a
record, a span's ids, status and events); what the attributes *mean* is
``conventions``' business, the GenAI events ``events``'.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any, Iterable, Iterator

from .._common import RecordError
from .._spans import maybe_json
from .values import attributes, normal_id

_ERROR_CODES = {"2", "STATUS_CODE_ERROR", "ERROR", "SPAN_STATUS_CODE_ERROR", "STATUSCODE.ERROR"}


def _js_context(record: dict[str, Any]) -> dict[str, Any]:
    """The JS SDK's span context: ``spanContext`` (a copied ReadableSpan) or ``_spanContext`` (a stringified Span)."""
    for key in ("spanContext", "_spanContext"):
        if isinstance(record.get(key), dict):
            return record[key]
    return {}


def _jaeger_traces(record: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The traces of a Jaeger JSON document (``{"data": [trace, ...]}`` or one trace), else None."""
    traces = record.get("data") if isinstance(record.get("data"), list) else [record]
    if traces and all(isinstance(t, dict) and isinstance(t.get("spans"), list) and "traceID" in t for t in traces):
        return traces
    return None


def _tags(tags: Any) -> dict[str, Any]:
    return {str(t["key"]): t.get("value") for t in _list(tags) if "key" in t}


def _from_jaeger(span: dict[str, Any], processes: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(resource attributes, the flat span) of one Jaeger span."""
    tags = _tags(span.get("tags"))
    process = processes.get(str(span.get("processID"))) if isinstance(processes, dict) else None
    resource = {**_tags(process.get("tags")), "service.name": process.get("serviceName")} \
        if isinstance(process, dict) else {}
    parent = next((r.get("spanID") for r in _list(span.get("references")) if r.get("refType") == "CHILD_OF"), None)
    start = span.get("startTime") if isinstance(span.get("startTime"), (int, float)) else None
    end = start + span["duration"] if start is not None and isinstance(span.get("duration"), (int, float)) else None
    failed = str(tags.get("otel.status_code") or "").upper() == "ERROR" or tags.get("error") in (True, "true")
    events = [{"name": str(fields.get("event") or "log"), "attributes": {k: v for k, v in fields.items() if k != "event"}}
              for fields in (_tags(log.get("fields")) for log in _list(span.get("logs")))]
    flat = {
        "name": span.get("operationName"),
        "context": {"trace_id": span.get("traceID"), "span_id": span.get("spanID")},
        "parent_id": parent,
        "start_time": start * 1000 if start is not None else None,  # microseconds -> nanoseconds
        "end_time": end * 1000 if end is not None else None,
        "status": {"status_code": "ERROR" if failed else "UNSET", "description": tags.get("otel.status_description")},
        "attributes": {k: v for k, v in tags.items() if not k.startswith("otel.status_")},
        "events": events,
    }
    return resource, flat


def _is_zipkin(record: dict[str, Any]) -> bool:
    """A Zipkin v2 span: ``traceId`` and ``id`` (OTLP's and the JS SDK's spans say ``spanId``), with a field only
    Zipkin's span has."""
    zipkin_only = isinstance(record.get("localEndpoint"), dict) or isinstance(record.get("remoteEndpoint"), dict) \
        or isinstance(record.get("tags"), dict) or isinstance(record.get("annotations"), list)
    return isinstance(record.get("traceId"), str) and isinstance(record.get("id"), str) and "spanId" not in record \
        and zipkin_only and not isinstance(record.get("timestamp"), str)


def _is_zipkin_trace(record: Any) -> bool:
    """A Zipkin trace as ``/api/v2/traces`` lists them: a non-empty array of Zipkin v2 spans."""
    return isinstance(record, list) and bool(record) and all(isinstance(s, dict) and _is_zipkin(s) for s in record)


def _zipkin_event(annotation: dict[str, Any]) -> dict[str, Any]:
    """A Zipkin annotation as the span event an OTel exporter made it from: its value is ``{"<name>": {attributes}}``
    (Python), ``"<name>":{attributes}`` (Java) or the name alone (JS); its timestamp in microseconds."""
    value = str(annotation.get("value") or "")
    decoded = next((d for d in (maybe_json(value), maybe_json("{" + value + "}")) if isinstance(d, dict)), None)
    name, attrs = next(iter(decoded.items())) if decoded is not None and len(decoded) == 1 else (value, {})
    stamp = annotation.get("timestamp")
    return {"name": name, "attributes": attrs if isinstance(attrs, dict) else {},
            "timestamp": stamp * 1000 if isinstance(stamp, (int, float)) else None}


#: How JSON that holds objects starts (an object, or an array of objects); a text that merely starts with "[" or
#: "{" ("[draft] ...") is no JSON cut short.
_OBJECT_JSON = re.compile(r'\s*(\[\s*)?\{\s*"')


def _cut_json(value: Any, limit: int) -> bool:
    """Whether a text value is JSON holding objects cut by the exporter: as long as the span's longest value (the
    exporter cuts every value at one length), and no longer parsing, not even as values joined by commas (OpenLIT
    writes a chat's tool-call arguments so, ``{"city": "Oslo"}, {"city": "Paris"}``), because it stops short
    (:func:`_stops_short`), bare (:data:`_MARKED_CUT`)."""
    return isinstance(value, str) and len(value) == limit and bool(_OBJECT_JSON.match(value)) \
        and maybe_json(value) is value and maybe_json(f"[{value}]") == f"[{value}]" \
        and _stops_short(f"[{value}") and not _MARKED_CUT.search(value)


#: How the end of a value cut by whoever said so reads (``… [cut by trajsearch]``, ``...``, ``[truncated]``): the
#: SDK and the exporters keep ``value[:limit]``, adding nothing (review 2, D2: a hand-trimmed export).
_MARKED_CUT = re.compile(r"(?:…|\.\.\.)\s*(?:\[[^\]\n]{0,80}\])?\s*$|\[(?:truncated|cut)\b[^\]\n]{0,80}\]\s*$", re.I)
#: The end of a literal, number or ``\\u`` escape cut inside (``tr``, ``nul``, ``1.``, ``-``, ``u00``) from where the
#: decoder stops.
_CUT_TOKEN = re.compile(r"(?:t(?:r(?:u)?)?|f(?:a(?:l(?:s)?)?)?|n(?:u(?:l)?)?|-|\.|[eE][-+]?|u[0-9a-fA-F]{0,3})\s*$")


def _stops_short(text: str) -> bool:
    """Whether JSON text fails only because it ends too soon (a string, object or array left open, a literal
    cut inside), not because of what it holds: NDJSON, JSON followed by a log line, a tool's own non-JSON text
    fail before their end (review 2, D2: a tool result of three JSON lines was taken as cut by the SDK)."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()) \
            or bool(_CUT_TOKEN.fullmatch(text, exc.pos))
    except RecursionError:  # nested past what Python reads: an agent's runaway text, no JSON an SDK cut
        return False
    return False


def _limit_like(length: int) -> bool:
    """Whether a length is one a cut limit is set to: a power of two (1024, 4096), one less (New Relic's 4095), a
    round thousand (10000). The SDKs have no default limit (``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` unset)."""
    return length >= 100 and (length & (length - 1) == 0 or length & (length + 1) == 0 or length % 1000 == 0)


def shared_lengths(items: Iterable[dict[str, Any]]) -> frozenset[int]:
    """The lengths two or more string attribute values (of spans and their events) of these spans reach: the
    SDK cuts every value of a trace at one limit, so a limit is the length its cut values share."""
    counts = Counter(len(v) for span in items for attrs in (attributes(span.get("attributes")), *(
        attributes(ev.get("attributes")) for ev in _list(span.get("events")))) for v in attrs.values()
        if isinstance(v, str))
    return frozenset(length for length, n in counts.items() if n > 1)


def _whole_items(text: str) -> str | None:
    """The items of a JSON array cut short that are whole (every one closed before the cut), as a JSON array
    text; None when it is no array or none is whole."""
    depth, quoted, escaped, end = 0, False, False, 0
    for i, ch in enumerate(text):
        if quoted:
            escaped, quoted = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            quoted = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            end = i + 1 if depth == 1 else end
    return text[:end] + "]" if end and text.lstrip().startswith("[") else None


def _uncut(values: dict[str, Any], limit: int) -> tuple[dict[str, Any], dict[str, str]]:
    """Attributes (or event attributes) with JSON cut at ``limit`` read honestly (a message list as its whole
    messages, any other cut JSON left out), and the cut values by key, as they were left."""
    kept: dict[str, Any] = {}
    cut: dict[str, str] = {}
    for key, value in values.items():
        if not _cut_json(value, limit):
            kept[key] = value
            continue
        cut[key] = value
        if (whole := _whole_items(value)) is not None:
            kept[key] = whole
    gone = tuple(m.group(1) for m in map(_FLAT_CONTENT.match, cut) if m)  # (OpenInference's flattened messages)
    return ({k: v for k, v in kept.items() if not k.startswith(gone)} if gone else kept), cut


#: The content of one message of a flattened message list (``llm.input_messages.3.message.content``): cut, the
#: whole message is left out, as from a message list cut in one value (no message with nothing said).
_FLAT_CONTENT = re.compile(r"^(.*\.\d+\.message\.)content$")


def _longest(values: list[Any]) -> int:
    return max((len(v) for v in values if isinstance(v, str)), default=0)


#: Who cut a span's values: the Python Zipkin exporter (its tags at 128 characters by default), or the SDK
#: (``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``, or ``SpanLimits`` in code), whatever the exporter.
ZIPKIN_CUT, SDK_CUT = "the exporter", "the SDK"


def uncut_span(span: dict[str, Any], by: str = SDK_CUT, shared: frozenset[int] = frozenset()) -> dict[str, Any]:
    """A span (in any shape above) whose attribute values were cut at one length, read honestly (see
    :func:`_uncut`), its attributes and events' attributes flat and ``tags_cut`` saying what was cut, where, by
    whom; any other span as it is. The SDKs cut every string value (span and event attributes alike) at
    ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` (Python ``value[:limit]``, JS ``substring``, Go by runes), whatever the
    exporter, so a cut value is as long as the span's longest; the Python Zipkin exporter cuts its tags the same way.

    Every span has a longest value, so for the SDK that length must also look like a limit: one a limit is set to
    (:func:`_limit_like`) or one other values of the trace reach too (``shared``, :func:`shared_lengths`)."""
    attrs = attributes(span.get("attributes"))
    events = [{**ev, "attributes": attributes(ev.get("attributes"))} for ev in _list(span.get("events"))]
    at = _longest([*attrs.values(), *(v for e in events for v in e["attributes"].values())])
    if by == SDK_CUT and not (_limit_like(at) or at in shared):
        return span
    attrs, texts = _uncut(attrs, at)
    cut, event_texts, kept = list(texts), {}, []
    for n, event in enumerate(events):
        attrs_left, event_cut = _uncut(event["attributes"], at)
        cut += [f"{event['name']}.{k}" for k in event_cut]
        event_texts.update({n: event_cut} if event_cut else {})
        if not event_cut or any(k in attrs_left for k in event_cut):  # (a message event cut bare is no message)
            kept.append({**event, "attributes": attrs_left})
    if not cut:
        return span
    return {**span, "attributes": attrs, "events": kept, "tags_cut": {
        "keys": cut, "at": at, "texts": texts, "events": events, "event_texts": event_texts, "by": by}}


def _zipkin_tag(value: Any) -> Any:
    """A Zipkin tag (always text): an OTel array attribute, which the exporters write as a JSON array of scalars, as
    the list it was; anything else as it is (message JSON stays the text it is in OTLP too)."""
    decoded = maybe_json(value) if isinstance(value, str) and value.startswith("[") else None
    return decoded if isinstance(decoded, list) and not any(isinstance(v, (dict, list)) for v in decoded) else value


def _from_zipkin(record: dict[str, Any]) -> dict[str, Any]:
    """A Zipkin v2 span (what every OTel SDK's Zipkin exporter sends and Zipkin's ``/api/v2/trace/<id>`` returns:
    ``traceId``, ``id``, ``parentId``, ``name``, ``timestamp`` / ``duration`` in microseconds, ``localEndpoint``,
    ``tags`` holding the attributes as text, the status in the ``otel.status_code`` tag and its description in
    ``error``, events as ``annotations``) as the flat span this module reads; any other record as it is."""
    if not _is_zipkin(record):
        return record
    tags = record.get("tags") if isinstance(record.get("tags"), dict) else {}
    events = [_zipkin_event(a) for a in _list(record.get("annotations"))]
    start, took = record.get("timestamp"), record.get("duration")
    start = start if isinstance(start, (int, float)) else None
    failed = str(tags.get("otel.status_code") or "").upper() == "ERROR" or "error" in tags
    endpoint = record.get("localEndpoint") if isinstance(record.get("localEndpoint"), dict) else {}
    return uncut_span({
        "name": record.get("name") or "",
        "context": {"trace_id": record["traceId"], "span_id": record["id"]},
        "parent_id": record.get("parentId"),
        "start_time": start * 1000 if start is not None else None,  # microseconds -> nanoseconds
        "end_time": (start + took) * 1000 if start is not None and isinstance(took, (int, float)) else None,
        "status": {"status_code": "ERROR" if failed else "UNSET",
                   "description": tags.get("error") or tags.get("otel.status_description") or None},
        "attributes": {k: _zipkin_tag(v) for k, v in tags.items()
                       if not k.startswith("otel.status_") and not (k == "error" and failed)},
        "events": events,
        "resource": {"attributes": {"service.name": endpoint["serviceName"]} if endpoint.get("serviceName") else {}},
    }, by=ZIPKIN_CUT)


def _undotted(record: dict[str, Any]) -> dict[str, Any]:
    """A Phoenix spans-dataframe row (``"context.span_id"``, ``"attributes.<key>"`` columns; an empty cell is
    null) as the flat span it was made from; any other record as it is."""
    if "context.span_id" not in record or "context" in record:
        return record
    span = {k: v for k, v in record.items() if not k.startswith(("context.", "attributes."))}
    span["context"] = {k.removeprefix("context."): v for k, v in record.items() if k.startswith("context.")}
    span["attributes"] = {k.removeprefix("attributes."): v for k, v in record.items()
                          if k.startswith("attributes.") and v is not None}
    return span


def _proto_named_span(record: dict[str, Any]) -> bool:
    """One OTLP ``Span`` with protobuf's field names (``start_time_unix_nano``, its attributes ``[{key, value}]``):
    what Phoenix's REST API lists (``GET /v1/projects/{p}/spans/otlpv1``, ``{"data": [Span...]}``)."""
    return "start_time_unix_nano" in record and not isinstance(record.get("attributes"), dict)


def _camel_named(record: dict[str, Any]) -> dict[str, Any]:
    """OTLP/JSON printed with protobuf's field names (``MessageToJson(..., preserving_proto_field_name=True)``:
    ``resource_spans``, ``scope_spans``, ``string_value``), which protobuf's parsers accept, with the JSON names
    (``resourceSpans``...), also one such ``Span`` alone (:func:`_proto_named_span`); any other record as it is.
    Every key of an OTLP message is a field name (attribute names are ``key`` values), so all are renamed."""
    if not (_PROTO_NAMED_TOPS & record.keys() or _proto_named_span(record)):
        return record

    def renamed(value: Any) -> Any:
        if isinstance(value, dict):
            return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k): renamed(v) for k, v in value.items()}
        return [renamed(v) for v in value] if isinstance(value, list) else value

    return renamed(record)


#: The top-level field names of an OTLP request, or of one ``ResourceSpans`` / ``ResourceLogs``, as protobuf names them.
_PROTO_NAMED_TOPS = frozenset({"resource_spans", "resource_logs", "scope_spans", "scope_logs"})
#: Where a ``ResourceSpans`` / ``ResourceLogs`` keeps its scopes (``instrumentationLibrary*``: OTLP before 0.15),
#: and the request field that lists it.
_RESOURCE_LISTS = {"scopeSpans": "resourceSpans", "instrumentationLibrarySpans": "resourceSpans",
                   "scopeLogs": "resourceLogs", "instrumentationLibraryLogs": "resourceLogs"}


def _as_request(record: dict[str, Any]) -> dict[str, Any]:
    """A bare ``ResourceSpans`` (or ``ResourceLogs``: ``{"resource", "scopeSpans": [...]}``, one element of an OTLP
    request's list, what a receiver storing each one writes: Copilot CLI's captured export, Lunary's) as the
    request holding it; any other record as it is."""
    if "resourceSpans" in record or "resourceLogs" in record:
        return record
    top = next((_RESOURCE_LISTS[k] for k in _RESOURCE_LISTS if isinstance(record.get(k), list)), None)
    return {top: [record]} if top else record


def _from_tempo(record: dict[str, Any]) -> dict[str, Any]:
    """Grafana Tempo's trace JSON (``{"batches": [ResourceSpans...]}``: what its ``/api/traces/<id>`` returns and
    Grafana's trace view exports) as the OTLP request it holds; any other record as it is."""
    batches = record.get("batches")
    if "resourceSpans" in record or not isinstance(batches, list):
        return record
    holds_spans = any(_RESOURCE_LISTS.keys() & b.keys() for b in _list(batches))
    return {"resourceSpans": batches} if holds_spans else record


def _is_go_stub(record: dict[str, Any]) -> bool:
    context = record.get("SpanContext")
    return "Name" in record and isinstance(context, dict) and "TraceID" in context and "SpanID" in context


def _go_attributes(pairs: Any) -> dict[str, Any]:
    """Go's ``[{"Key", "Value": {"Type", "Value"}}]`` (``attribute.KeyValue`` as JSON) as a plain dict."""
    return {str(kv["Key"]): kv["Value"].get("Value") if isinstance(kv.get("Value"), dict) else kv.get("Value")
            for kv in _list(pairs) if "Key" in kv}


def _go_time(value: Any) -> Any:
    """An RFC 3339 time; Go's zero time (``0001-01-01T00:00:00Z``, the exporter's ``WithoutTimestamps()``) is none."""
    return None if not isinstance(value, str) or value.startswith("0001-01-01") else value


def _from_go_stub(record: dict[str, Any]) -> dict[str, Any]:
    """A span as the OpenTelemetry Go SDK's ``stdouttrace`` exporter prints it (``tracetest.SpanStub`` as JSON:
    ``Name``, ``SpanContext`` / ``Parent`` ``{TraceID, SpanID}`` (all zeros: no parent), RFC 3339 ``StartTime`` /
    ``EndTime``, ``Attributes`` and ``Resource`` as ``[{Key, Value: {Type, Value}}]``, ``Events`` ``[{Name,
    Attributes, Time}]``, ``Status.Code`` ``Unset`` / ``Error`` / ``Ok`` (Go's 1 is an error, not OTLP's 2)) as the
    flat span this module reads; any other record as it is. The Go twin of Python's ``ConsoleSpanExporter``."""
    if not _is_go_stub(record):
        return record
    context, parent = record["SpanContext"], record.get("Parent") if isinstance(record.get("Parent"), dict) else {}
    parent_id = parent.get("SpanID") if str(parent.get("SpanID") or "").strip("0") else None  # a root's: all zeros
    status = record.get("Status") if isinstance(record.get("Status"), dict) else {}
    failed = status.get("Code") in ("Error", 1)
    return {
        "name": record.get("Name"),
        "context": {"trace_id": context.get("TraceID"), "span_id": context.get("SpanID")},
        "parent_id": parent_id,
        "start_time": _go_time(record.get("StartTime")),
        "end_time": _go_time(record.get("EndTime")),
        "status": {"status_code": "ERROR" if failed else "UNSET", "description": status.get("Description") or None},
        "attributes": _go_attributes(record.get("Attributes")),
        "events": [{"name": ev.get("Name"), "timestamp": _go_time(ev.get("Time")),
                    "attributes": _go_attributes(ev.get("Attributes"))} for ev in _list(record.get("Events"))],
        "resource": {"attributes": _go_attributes(record.get("Resource"))},
    }


def _is_hr_time(value: Any) -> bool:
    """The JS SDK's ``HrTime``: ``[seconds, nanoseconds]``."""
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                               for v in value)


def _js_resource(resource: dict[str, Any]) -> dict[str, Any]:
    """The attributes of the JS SDK's ``Resource`` as ``JSON.stringify`` writes it: ``_rawAttributes``
    ``[[key, value], ...]`` (``@opentelemetry/resources`` 2.x), ``_attributes`` / ``_syncAttributes`` (1.x)."""
    pairs = resource.get("_rawAttributes")
    if isinstance(pairs, list):
        return {str(p[0]): p[1] for p in pairs if isinstance(p, list) and len(p) == 2 and p[1] is not None}
    found = next((resource[k] for k in ("_attributes", "_syncAttributes") if isinstance(resource.get(k), dict)), {})
    return attributes(found)


def _from_js_log(record: dict[str, Any]) -> dict[str, Any]:
    """A log record of the OpenTelemetry JS SDK as ``JSON.stringify`` writes it (Gemini CLI's ``FileLogExporter``,
    VS Code Copilot Chat's file exporter: ``LogRecordImpl``'s own fields, its getters left out): ``hrTime`` /
    ``hrTimeObserved`` ``[s, ns]``, ``spanContext {traceId, spanId}`` (absent when no span was active), ``_body``,
    ``_eventName``, ``_severityNumber`` / ``_severityText`` (the public names where a copy was written), a plain
    ``attributes`` object, the ``Resource`` object, as the flat log record this module reads; any other record as
    it is."""
    stamp = record.get("hrTime")
    if not _is_hr_time(stamp) or "name" in record or not isinstance(record.get("attributes"), dict):
        return record
    context = record.get("spanContext") if isinstance(record.get("spanContext"), dict) else {}

    def own(name: str) -> Any:
        return record.get(f"_{name}", record.get(name))

    flat = {
        "timeUnixNano": stamp[0] * 1_000_000_000 + stamp[1],
        "event_name": own("eventName"), "body": own("body"),
        "severity_number": own("severityNumber"), "severity_text": own("severityText"),
        "trace_id": context.get("traceId"), "span_id": context.get("spanId"),
        "attributes": record["attributes"],
        "resource": {"attributes": _resource_of(record)},
    }
    return {k: v for k, v in flat.items() if v is not None}


def js_sdk_resource(record: Any) -> dict[str, Any] | None:
    """The resource attributes of a JS SDK object as a file exporter that ``JSON.stringify``s them writes it (a
    ``ReadableSpan``, a ``LogRecord``, a metrics export's ``ResourceMetrics``); None for any other record."""
    if not isinstance(record, dict) or not (_is_hr_time(record.get("hrTime")) or _is_hr_time(record.get("startTime"))
                                            or isinstance(record.get("scopeMetrics"), list)):
        return None
    resource = record.get("resource")
    return _js_resource(resource) if isinstance(resource, dict) else {}


def _metrics(record: dict[str, Any]) -> bool:
    """Metrics (OTLP's ``resourceMetrics``, the JS SDK's ``ResourceMetrics`` ``{resource, scopeMetrics}``), which
    file exporters write beside the spans and logs: no span, passed over."""
    return any(isinstance(record.get(k), list) for k in ("resourceMetrics", "resource_metrics", "scopeMetrics")) \
        and not ("resourceSpans" in record or "resourceLogs" in record)


def _unwrapped(record: dict[str, Any]) -> dict[str, Any]:
    """The span or log record inside a CloudWatch event as AgentCore's toolkit and a Logs Insights query give it
    (``{"timestamp", "raw_otel_json": {...}}``), the ``TracesData`` of one chunk of Jaeger 2's query API
    (``/api/v3/traces``: ``api_v3.QueryService`` streams ``TracesData``, which grpc-gateway writes as
    ``{"result": {"resourceSpans": [...]}}``, one object a chunk), or the spans of an MLflow trace (read as
    ``conventions._mlflow_as_genai`` says); any other record as it is."""
    inside = record.get("raw_otel_json")
    if isinstance(inside, dict) and set(record) <= {"timestamp", "raw_otel_json"}:
        return inside
    inside = record.get("result")
    if set(record) == {"result"} and isinstance(inside, dict) \
            and any(isinstance(inside.get(k), list) for k in ("resourceSpans", "resource_spans")):
        return inside
    inside = record.get("data")  # an MLflow trace (``Trace.to_dict()``): ``{"info": TraceInfo, "data": {"spans"}}``
    if set(record) == {"info", "data"} and isinstance(inside, dict) and isinstance(inside.get("spans"), list):
        return inside
    return record


def _record(record: dict[str, Any]) -> dict[str, Any]:
    """A record in the shape the readers below expect: unwrapped, a JS log record, a Go span stub or a Zipkin span
    flat, undotted, with the JSON field names, Tempo's ``batches`` or a bare ``ResourceSpans`` inside its request."""
    flat = _from_zipkin(_from_go_stub(_from_js_log(_unwrapped(record))))
    return _as_request(_from_tempo(_camel_named(_undotted(flat))))


#: Keys a span or log record has some of (in any shape above); an application's own log line has none.
_OTEL_KEYS = frozenset({"name", "body", "attributes", "context", "resource", "events", "status",
                        "traceId", "trace_id", "spanId", "span_id", "resourceSpans", "resourceLogs"})


def _app_log_line(record: dict[str, Any]) -> bool:
    """An application's own JSON log line (``{"timestamp", "level", "message", "logger"}``: AgentCore's runtime
    log stream holds them beside the OTel records), with no key of a span or log record: no span, passed over.
    A record with any such key (a span without ids, say) is still read, and rejected if malformed."""
    return isinstance(record.get("level"), str) and isinstance(record.get("message"), str) \
        and not _OTEL_KEYS & record.keys()


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


def event_name(record: dict[str, Any], attrs: dict[str, Any] | None = None) -> str:
    attrs = attrs if attrs is not None else attributes(record.get("attributes"))
    return str(record.get("event_name") or record.get("eventName") or attrs.get("event.name") or "")


def is_log_record(record: Any) -> bool:
    """A flat OpenTelemetry log record (console ``to_json`` or one OTLP ``logRecord``)."""
    if not isinstance(record, dict) or "name" in record:
        return False
    timed = any(k in record for k in ("observed_timestamp", "observedTimeUnixNano", "timeUnixNano", "timestamp"))
    leveled = any(k in record for k in ("severity_number", "severityNumber", "severity_text", "severityText"))
    return (timed or leveled) and ("body" in record or bool(event_name(record)))


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
    record = _record(record)
    if isinstance(record.get("resourceSpans"), list) or isinstance(record.get("resourceLogs"), list):
        return True
    return _is_flat_span(record) or _is_container(record) or is_log_record(record) or _jaeger_traces(record) is not None


def raw_items(record: Any) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """``("span" | "log", resource attributes, item)`` for every span and log record of one record."""
    if _is_zipkin_trace(record):
        for span in record:
            yield from raw_items(span)
        return
    if not isinstance(record, dict):
        raise RecordError(f"expected a JSON object holding spans, got {type(record).__name__}")
    record = _record(record)
    if _app_log_line(record) or _metrics(record):
        return
    if "resourceSpans" in record or "resourceLogs" in record:
        for kind, top, scopes, items in (("span", "resourceSpans", ("scopeSpans", "instrumentationLibrarySpans"), "spans"),
                                         ("log", "resourceLogs", ("scopeLogs", "instrumentationLibraryLogs"), "logRecords")):
            for res in _list(record.get(top)):
                resource = _resource_of(res)
                for scope in _list(res.get(scopes[0]) or res.get(scopes[1])):
                    for item in _list(scope.get(items)):
                        yield kind, resource, item
        return
    if (traces := _jaeger_traces(record)) is not None:
        for trace in traces:
            for span in _list(trace.get("spans")):
                resource, flat = _from_jaeger(span, trace.get("processes") or {})
                yield "span", resource, flat
        return
    if lists := _span_lists(record):
        for spans in lists:
            for span in spans:
                if isinstance(span, dict):  # AgentCore's ``sessionSpans`` also hold the spans' content logs
                    span = _camel_named(_undotted(span))
                    yield "log" if is_log_record(span) else "span", _resource_of(span), span
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
    if not isinstance(res, dict):
        return {}
    return attributes(res.get("attributes")) if "attributes" in res else _js_resource(res)


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
        if kind == "log" and (name := event_name(item, attrs)):
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


def span_ids(span: dict[str, Any]) -> tuple[str, str, str | None]:
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


def span_status(span: dict[str, Any]) -> tuple[bool, str | None]:
    status = span.get("status") if isinstance(span.get("status"), dict) else {}
    code = status.get("code", status.get("status_code", span.get("status_code")))
    message = status.get("message") or status.get("description") or span.get("status_message") or None
    return str(code).strip().upper() in _ERROR_CODES, message


def span_events(span: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [(str(ev.get("name") or ""), attributes(ev.get("attributes"))) for ev in _list(span.get("events"))]


def span_links(span: dict[str, Any]) -> list[str]:
    """The trace ids a span links to (OTLP ``links[].traceId``, the Python SDK's ``links[].context.trace_id``),
    its own trace left out: where a runtime that starts a trace per message says which trace sent it."""
    own = span_ids(span)[0]
    found = []
    for link in _list(span.get("links")):
        context = link.get("context") if isinstance(link.get("context"), dict) else link
        trace = normal_id(context.get("traceId") or context.get("trace_id"), 16)
        if trace and trace != own and trace not in found:
            found.append(trace)
    return found
