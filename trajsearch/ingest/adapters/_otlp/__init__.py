"""OpenTelemetry spans and GenAI log events as JSON -> ``_spans.Node``, for the span adapters.

OTel GenAI, OpenInference and Vercel AI (and the Agents SDK adapter, for its
ids) read spans through this package. Reading one span answers four separate
questions, one module each, since each changes for its own reason (a new
exporter, a new convention, a new event name):

- ``shapes``: where the spans and log records are in a record (OTLP/JSON,
  the Python SDK's console / ``to_json`` output, any-agent's ``{"spans"}``
  container, the JS SDK's ``ReadableSpan`` and ``LogRecord``, Zipkin v2, flat span objects), and
  a span's ids, status, events and links in each of them;
- ``values``: OTLP's encodings of values, ids and times (``AnyValue``,
  hex / ``0x`` / base64 / integer ids, nanoseconds, ``[s, ns]`` pairs), so one
  trace read from a console dump and from an OTLP file is the same run;
- ``conventions``: what the attributes mean: the GenAI semantic conventions,
  OpenInference, OpenLLMetry and frameworks' own attributes (one trace often
  carries several; see ``otel_genai`` and ``openinference`` for the mapping);
- ``events``: GenAI events (``gen_ai.*.message``, ``gen_ai.choice``,
  ``gen_ai.client.inference.operation.details``), as log records joined to
  their span after the spool has grouped them, or as span events;
- ``harbor``: spans Harbor's OTel export made from a trial's ATIF, whose text
  alone says what they do (a failed command, a placeholder message), read as
  the ATIF reader reads that text;

and ``adapter`` binds them into the span-adapter protocol (``otlp_nodes``,
:class:`OtlpFormat`). Everything the one module offered is importable from here.
"""

from __future__ import annotations

from .adapter import OtlpFormat, current_instruction, otlp_nodes, run_named_by_root, with_current_instruction
from .conventions import MONOCLE, TRACER_KIND_KEYS, is_monocle, node_from_span, span_error
from .events import event_messages, merge_events, node_from_log, offered_tools, span_offered
from .shapes import (
    is_log_record,
    is_span_record,
    js_sdk_resource,
    raw_items,
    raw_spans,
    sample_attribute_keys,
    sample_span_names,
    span_events,
    span_ids,
    span_links,
    span_status,
)
from .values import any_value, attributes, clean_ids, normal_id, span_time

__all__ = [
    "MONOCLE",
    "OtlpFormat",
    "TRACER_KIND_KEYS",
    "any_value",
    "attributes",
    "clean_ids",
    "current_instruction",
    "event_messages",
    "is_log_record",
    "is_monocle",
    "is_span_record",
    "js_sdk_resource",
    "merge_events",
    "node_from_log",
    "node_from_span",
    "normal_id",
    "offered_tools",
    "otlp_nodes",
    "raw_items",
    "raw_spans",
    "run_named_by_root",
    "sample_attribute_keys",
    "sample_span_names",
    "span_error",
    "span_events",
    "span_offered",
    "span_ids",
    "span_links",
    "span_status",
    "span_time",
    "with_current_instruction",
]
