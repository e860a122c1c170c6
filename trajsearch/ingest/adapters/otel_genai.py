"""``otel-genai``: OpenTelemetry spans following the GenAI semantic conventions, as OTLP/JSON.

Records: OTLP/JSON export requests (``resourceSpans`` -> ``scopeSpans`` ->
``spans``; one per line or one per file) or flat span objects (see ``_otlp``).
Spans are grouped into one trajectory per trace (``traceId``), or with
``group_by="conversation"`` per ``gen_ai.conversation.id`` (traces without one
stay alone), across every file of the input.

Mapping
- span role by ``gen_ai.operation.name``: ``invoke_agent`` / ``create_agent``
  / ``invoke_workflow`` = agent, ``execute_tool`` = tool, ``chat`` /
  ``text_completion`` / ``generate_content`` = model call.
- steps: one per ``execute_tool`` span, in parent/start-time order: action =
  ``gen_ai.tool.name``, arguments = ``gen_ai.tool.call.arguments`` (JSON-decoded),
  observation = ``gen_ai.tool.call.result``, error = ``error.type`` with the
  status message or the ``exception`` event (``exception.type: message``) when
  the span status is ERROR. The thought of a tool step is the text of the model
  call whose output requested it (``gen_ai.output.messages`` part
  ``tool_call`` with the same ``gen_ai.tool.call.id``). Model text that asked
  for no tool is a ``respond`` step. Tool calls a model requested but no span
  executed are kept as steps, their results taken from later
  ``gen_ai.input.messages`` (``tool_call_response`` parts).
- messages: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (parts
  ``text``, ``tool_call``, ``tool_call_response``, ``reasoning``), else the
  older ``gen_ai.prompt`` / ``gen_ai.completion`` (JSON, flattened
  ``gen_ai.prompt.N.content``, or ``gen_ai.content.prompt`` events).
- task: the first user message of the root span (an ``invoke_agent`` span may
  carry ``gen_ai.input.messages``), else of the first model call.
- trajectory_id = ``otel:<traceId>`` (``otel:conversation:<id>`` when grouped by
  conversation); model_id = ``gen_ai.response.model`` / ``gen_ai.request.model``
  of the first model call; created_at = the earliest span start; metadata keeps
  ``gen_ai.agent.name`` / ``.id``, ``gen_ai.conversation.id``, ``service.name``
  and the provider.
- outcome: ``gen_ai.evaluation.result`` events (``gen_ai.evaluation.name``,
  ``.score.label``, ``.score.value``, ``.explanation``): a pass/fail label (or a
  score of 1/0 on a success/correctness metric) decides, a failing one winning;
  else an ERROR status on the root span -> failure (infra_error for timeouts,
  rate limits, 5xx, connection errors); else ``unknown``. A root span that
  ended OK says the code did not raise, not that the task was done.
"""

from __future__ import annotations

import re
from typing import Any

from ._otlp import OtlpFormat, is_span_record, otlp_nodes, sample_attribute_keys

NAME = "otel-genai"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"resource(?:Spans|Logs)"[\s\S]*"gen_ai\.|"gen_ai\.operation\.name"|"(?:event_name|eventName)": *"gen_ai\.')
GROUPED = True
ID_PREFIX = "otel"
_FORMAT = OtlpFormat(NAME, ID_PREFIX, name_when_no_input=True, latest_user_message=True)


def matches(record: Any) -> bool:
    if not is_span_record(record):
        return False
    keys = sample_attribute_keys(record)
    return any(k.startswith("gen_ai.") for k in keys) and "openinference.span.kind" not in keys


# The rest of the span-adapter protocol is shared: see ``_otlp.otlp_nodes`` and ``_spans.SpanFormat``.
nodes = otlp_nodes
trajectory_id = _FORMAT.trajectory_id
assemble_trajectory = _FORMAT.assemble_trajectory
