"""``openai-agents``: traces of the OpenAI Agents SDK (Python and JS) as its exporters write them; a saved ``RunState``.

Records are what ``Trace.export()`` and ``Span.export()`` return: a trace
``{"object": "trace", "id": "trace_...", "workflow_name", "group_id",
"metadata"}`` and spans ``{"object": "trace.span", "id": "span_...",
"trace_id", "parent_id", "started_at", "ended_at", "span_data": {"type", ...},
"error": {"message", "data"} | null}``, one per line (a custom
``TracingProcessor``), in a JSON array, or as the batch payload ``{"data":
[...]}`` that ``BackendSpanExporter`` posts. Spans are grouped into one
trajectory per ``trace_id`` across every file of the input (a trace's spans
may arrive in several batches), or with ``group_by="conversation"`` per
``group_id``.

Logfire's ``instrument_openai_agents()`` spans (OTLP / OTel span JSON) are the
same records: each OTel span, named by a Logfire message template (``Agent
run: {name!r}``, ``Function: {name}``, ``Handoff: {from_agent} → {to_agent}``
...), carries its span's ``span_data.export()`` as attributes and its error as
``error``; its ``OpenAI Agents trace: {name}`` span is the trace record. They
are read as the SDK's export (OTel trace id as the trace id); other spans of
such a file are not.

A run saved with ``RunState.to_json()`` / ``to_string()`` (``result.to_state()``: mostly a run paused for a
person's approval) holds no spans but the run's items: :mod:`._agents_run_state` turns it into the nodes a trace of
it would give, read as below, one run per saved state (its mapping there); the steps whose calls wait for approval
are ``metadata.awaiting_approval_steps`` (their indexes; ``awaiting_approval`` names their tools).

Mapping (``span_data.type``)
- ``function``: a step: action = ``name``, arguments = ``input`` (the model's
  JSON arguments, decoded), observation = ``output`` (a tool output object's
  text: an MCP tool's result is the repr of ``{'type': 'text', 'text': ...}``),
  error = the span's
  ``error`` (``message: data.error``), set only when the tool failed; a
  ``ShellTool`` call (input ``{"commands", ...}``) whose command the output
  shows ended ``exit code: N`` or ``status: timeout`` failed with it, as did a
  ``SandboxAgent``'s ``exec_command`` / ``write_stdin`` whose output says
  ``Process exited with code N`` (N not 0, as any agent's shell: grep's silent
  exit 1 is no error) or ``Command timed out after N seconds.``. A tool paused
  for approval is recorded at the interruption (no output) and again when the
  resumed run executes it: the first record is dropped.
- ``handoff``: a step: action = the handoff tool the model called
  (``transfer_to_<agent>``, else the call the SDK answered ``{"assistant":
  <to_agent>}``: a ``tool_name_override``), arguments = that call's
  arguments, else ``{"from_agent", "to_agent"}``. With no model call
  recorded (Responses models), the name the SDK that wrote the span gives
  it: the Python SDK lower-cases the agent name, the JS SDK
  (``@openai/agents``, told by its ``...sssZ`` times) keeps its case.
- ``generation`` (Chat Completions models): a model call: ``input`` / ``output``
  are chat messages (a streamed call's output, and LiteLLM's or AnyLLM's, is
  one Responses object, read as a response's; the JS SDK's output is the raw
  completion object, its ``choices[].message`` read); its text that requested no
  tool is a ``respond`` step and the thought of the tool calls it requested;
  model = ``model``. A model call under a ``guardrail`` span is the
  guardrail's check, and one inside a tool (an agent used as a tool) is that
  tool's work: neither is the agent talking.
- ``response`` (Responses API models): a model call. Its export holds only
  ``response_id`` and ``usage`` (kept in metadata); when a processor also
  stored ``input`` (Responses input items) and ``response`` (the response
  object), they are read like a generation's (Logfire's spans hold both): a
  hosted tool's item (``web_search_call``, ``file_search_call``,
  ``code_interpreter_call``, ``image_generation_call``, and a tool search:
  ``tool_search_call`` then ``tool_search_output``, the tools it found), run by
  OpenAI inside the response, is a step with its result (no function span
  records it).
- ``agent``: an agent run (name, tools, handoffs to metadata);
  ``custom`` spans ``task`` / ``turn`` (newer SDKs): containers; ``guardrail``:
  name and ``triggered`` to metadata; ``mcp_tools``, ``speech``,
  ``speech_group``, other ``custom`` spans: not steps; ``transcription``: its
  output is the spoken instruction when nothing else gives the task.
- several runs in one trace (``Runner.run`` called twice inside ``with
  trace(...)``: each a ``task`` span, before 0.1 an ``agent`` span, under the
  trace record): what each later run asked is kept in
  ``metadata.user_prompts``, as for a conversation of several traces (each
  trace's first run a turn); a later run of the same trace counts where it
  continues the conversation (its input holds the earlier turns:
  ``to_input_list()`` plus the user's next message, a session; or its
  response continues a ``previous_response_id`` / ``conversation``); a run
  given only an earlier run's output or a text the app built (the SDK's
  deterministic and parallel workflow patterns) is a stage, not a request.
- task: the latest user message of the first generation / response input,
  else a transcription's text; when no span recorded any input (the default
  for Responses models), the workflow and agent names stand in for it
  (``metadata.task_source = "workflow name"``): the trace record's, else
  the root ``task`` span's ``name`` (the JS SDK ends no trace of a run that
  raised, so writes no trace record).
- trajectory_id = ``oai-agents:<trace_id>``; model_id = the first model call's
  model; created_at = the earliest span start.
- outcome: the SDK records no verdict; an error on an ``agent``, ``task`` or
  ``turn`` span (a run that raised: max turns, guardrail tripwire, model
  error), or a guardrail span with ``triggered`` (the tripwire's own record),
  or a function span whose tool raised and ended the run (the SDK's fatal
  "Error running tool", not the "(non-fatal)" one given back to the model,
  with no model call or tool started after it: before the 0.2x refactor a
  run that is not streamed marks no agent span) -> failure (infra_error for
  timeouts, rate limits, 5xx, connection errors, but not for a tool's own
  error, whatever it says), else ``unknown``. Where that error is the SDK
  refusing what the model said ("Tool not found", "Custom tool not found" for
  a call of a tool the agent lacks, "Invalid JSON provided" for an answer that
  is not the ``output_type``), it is that call's or answer's step's error, not
  a step of its own. Spans inside a function span are an agent used as a tool: their
  error is that call's, and the outer run's spans decide. One error written
  on nested spans (the JS SDK's on the turn, agent and task) is one failure;
  a JS tripwire error reads "Guardrail tripwire triggered: <guardrail>".
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL
from trajsearch.model import Step, Trajectory

from ._agents_run_state import META_KEYS, is_run_state, run_state_nodes
from ._common import Context, RecordError, clip_task
from ._otlp import attributes, clean_ids, is_span_record, raw_spans, span_ids, span_time
from ._spans import (
    ANSWER,
    CONTINUES,
    REFUSED,
    RUN_START,
    ancestors,
    Node,
    error_text,
    SpanFormat,
    iso_seconds,
    maybe_json,
    normalise_messages,
    response_output,
    responses_messages,
    span_trajectory,
    start_order,
    text_of,
)
from ._vendor import decode

NAME = "openai-agents"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"object": *"trace\.span"[\s\S]*"span_data"|"span_data": *\{[\s\S]*"object": *"trace')
GROUPED = True
ID_PREFIX = "oai-agents"


def _is_item(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if record.get("object") == "trace":
        return isinstance(record.get("id"), str)
    if record.get("object") == "trace.span" or ("object" not in record and "trace_id" in record):
        return isinstance(record.get("span_data"), dict)
    return False


def matches(record: Any) -> bool:
    if isinstance(record, dict) and isinstance(record.get("data"), list):
        return any(_is_item(item) for item in record["data"][:20])
    return _is_item(record) or _is_logfire(record) or is_run_state(record)


# -- Logfire's spans of an Agents SDK run ------------------------------------------------

#: The message templates ``logfire.instrument_openai_agents()`` names its spans by (``logfire/_internal/
#: integrations/openai_agents.py``), by the Agents SDK span type each records; task and turn spans inline their
#: names in the template and carry ``sdk_span_type``.
_LOGFIRE_TEMPLATES = {
    "OpenAI Agents trace: {name}": "trace", "Agent run: {name!r}": "agent", "Function: {name}": "function",
    "Chat completion with {gen_ai.request.model!r}": "generation", "Responses API": "response",
    "Responses API with {gen_ai.request.model!r}": "response", "Guardrail {name!r} {triggered=}": "guardrail",
    "Handoff: {from_agent} → {to_agent}": "handoff", "Custom span: {name}": "custom",
    "Speech → Text with {gen_ai.request.model!r}": "transcription", "Text → Speech": "speech",
    "Text → Speech group": "speech_group", "MCP: list tools from server {server}": "mcp_tools",
}


def _logfire_kind(attrs: dict[str, Any]) -> str | None:
    """The Agents SDK span type a Logfire span records, None for a span Logfire's integration did not write."""
    if attrs.get("sdk_span_type") in ("task", "turn") and "logfire.msg_template" in attrs:
        return "custom"
    return _LOGFIRE_TEMPLATES.get(str(attrs.get("logfire.msg_template")))


def _is_logfire(record: Any) -> bool:
    return is_span_record(record) and any(_logfire_kind(attributes(span.get("attributes")))
                                          for _resource, span in raw_spans(record))


def _logfire_items(record: Any) -> Iterator[dict[str, Any]]:
    """Logfire's spans as the Agents SDK's own export: Logfire writes each span's ``span_data.export()`` as its
    attributes (``model`` as ``gen_ai.request.model``, a task's or turn's ``data`` spread out, a response's input
    as ``raw_input``) and the span's error as ``error``; its trace span is the trace record."""
    spans = [(attributes(span.get("attributes")), span) for _resource, span in raw_spans(record)]
    traces = {span_ids(span)[1] for attrs, span in spans if _logfire_kind(attrs) == "trace"}
    for attrs, span in spans:
        kind = _logfire_kind(attrs)
        if kind is None:
            continue
        trace_id, span_id, parent = span_ids(span)
        data = {k: None if v == "null" else maybe_json(v)  # Logfire writes a None field as JSON
                for k, v in attrs.items() if not k.startswith(("logfire.", "code.", "gen_ai."))}
        if kind == "trace":
            yield {"object": "trace", "id": trace_id, "workflow_name": data.get("name"),
                   "group_id": data.get("group_id"), "metadata": data.get("metadata")}
            continue
        data.update(type=kind, model=attrs.get("gen_ai.request.model"))
        if kind == "custom" and data.get("sdk_span_type"):
            data["data"] = dict(data)
        if kind == "response":
            data["input"] = data.get("raw_input")
        yield {"object": "trace.span", "id": span_id, "trace_id": trace_id,
               "parent_id": None if parent in traces else parent, "error": data.pop("error", None),
               "started_at": span_time(span.get("startTimeUnixNano") or span.get("start_time")),
               "ended_at": span_time(span.get("endTimeUnixNano") or span.get("end_time")), "span_data": data}


def _items(record: Any) -> Iterator[dict[str, Any]]:
    if is_span_record(record) and (rebuilt := list(_logfire_items(record))):  # each span's attributes decoded once
        yield from rebuilt
        return
    if isinstance(record, dict) and isinstance(record.get("data"), list) and "object" not in record:
        for item in record["data"]:
            if _is_item(item):
                yield item
        return
    if not _is_item(record):
        raise RecordError("not an Agents SDK trace or span: expected 'object': 'trace' / 'trace.span' "
                          "(a span with 'trace_id' and 'span_data'), or a {'data': [...]} batch of them")
    yield record


# -- records -> nodes --------------------------------------------------------------------


def _trace_node(item: dict[str, Any], seq: int) -> tuple[str, Node, str | None]:
    trace_id = str(item["id"])
    info = {"workflow_name": item.get("workflow_name"), "group_id": item.get("group_id"),
            "trace_metadata": item.get("metadata")}
    node = Node(id=trace_id, parent=None, role="chain", name=str(item.get("workflow_name") or "trace"), seq=seq,
                info={k: v for k, v in info.items() if v not in (None, "", {})})
    return trace_id, node, str(item["group_id"]) if item.get("group_id") else None


def _span_node(item: dict[str, Any], seq: int) -> tuple[str, Node, str | None]:
    trace_id, span_id = item.get("trace_id"), item.get("id") or item.get("span_id")
    if not trace_id or not span_id:
        raise RecordError(f"span {span_id or '?'} has no 'trace_id' or 'id'")
    data = item["span_data"]
    kind = str(data.get("type") or "custom")
    node = Node(id=str(span_id), parent=str(item.get("parent_id") or trace_id), role="other", name=kind, seq=seq,
                start=iso_seconds(item.get("started_at")), end=iso_seconds(item.get("ended_at")),
                error=error_text(item.get("error")))
    if kind == "function":
        node.role, node.name = "tool", str(data.get("name") or UNNAMED_TOOL)
        node.tool = node.name
        node.arguments = maybe_json(data.get("input"))
        node.result = _tool_output(data["output"]) if data.get("output") is not None else None
        if isinstance(data.get("mcp_data"), dict):
            node.info = {"mcp_data": data["mcp_data"]}
    elif kind == "handoff":
        node.role, node.name = "tool", "handoff"
        node.info = {"from_agent": data.get("from_agent"), "to_agent": data.get("to_agent")}
        node.arguments = {k: v for k, v in node.info.items() if v}
        node.tool = _handoff_name(str(data.get("to_agent") or ""), keep_case=_written_by_js(item))
    elif kind == "generation":
        node.role, node.name = "llm", "generation"
        node.input_messages = normalise_messages(data.get("input")) if data.get("input") else []
        node.output_messages = _generation_output(data.get("output"))
        node.model = str(data["model"]) if data.get("model") else None
    elif kind == "response":
        node.role, node.name = "llm", "response"
        response = data.get("response") if isinstance(data.get("response"), dict) else {}
        node.input_messages = responses_messages(data.get("input")) if data.get("input") is not None else []
        node.output_messages = responses_messages(response["output"], output=True) if response.get("output") else []
        node.model = str(response["model"]) if response.get("model") else None
        node.info = {k: v for k, v in {"response_id": data.get("response_id") or response.get("id")}.items() if v}
        if response.get("previous_response_id") or response.get("conversation"):
            node.info[CONTINUES] = True  # the server holds the history: a run's input is only the user's next words
    elif kind == "agent":
        node.role, node.name = "agent", str(data.get("name") or "agent")
        node.info = {k: v for k, v in {"agent_name": data.get("name"), "tools": data.get("tools"),
                                       "handoffs": data.get("handoffs"), "output_type": data.get("output_type")}.items()
                     if v not in (None, [], "")}
    elif kind == "custom" and isinstance(data.get("data"), dict) and data["data"].get("sdk_span_type") in ("task", "turn"):
        inner = data["data"]
        node.role = "chain"
        node.name = "task" if inner["sdk_span_type"] == "task" else f"turn {inner.get('turn', '')}".strip()
        # a task span's ``name`` is its run's workflow name (both SDKs): a JS run that raised writes no trace record
        workflow = inner.get("name") if inner["sdk_span_type"] == "task" else None
        node.info = {k: v for k, v in {"sdk_span_type": inner["sdk_span_type"], "agent_name": inner.get("agent_name"),
                                       "usage": inner.get("usage"), "workflow_name": workflow}.items()
                     if v not in (None, "", {})}
    elif kind == "guardrail":
        node.name = f"guardrail {data.get('name') or ''}".strip()
        node.info = {"guardrail": data.get("name"), "triggered": bool(data.get("triggered"))}
    elif kind == "transcription":
        node.name = "transcription"
        node.output_text = text_of(data.get("output")) if data.get("output") else None
        node.model = str(data["model"]) if data.get("model") else None
    else:
        node.name = str(data.get("name") or kind)
    if node.role in ("agent", "chain"):
        _refusal(node, item.get("error"))
    if not item.get("parent_id") and (node.role == "agent" or node.info.get("sdk_span_type") == "task"):
        node.info[RUN_START] = True  # one ``Runner.run`` of the trace: a later one's request is a later turn
    return str(trace_id), clean_ids(node), None


#: The errors the SDK marks a call of a tool the agent has not with, ``{"tool_name"}`` their data: a function call's,
#: and (0.2x, ``run_internal/turn_resolution.py``) a Responses custom tool call's (``custom_tool_call``).
_NOT_FOUND = ("Tool not found", "Custom tool not found")


def _refusal(node: Node, error: Any) -> None:
    """Mark an agent or turn span whose error is the SDK refusing what the model said (``REFUSED``): ``SpanError(
    "Tool not found", {"tool_name"})`` for a call of a tool the agent has not (then ``ModelBehaviorError: Tool X not
    found in agent Y``; :data:`_NOT_FOUND`), ``SpanError("Invalid JSON provided")`` for a final answer that does not
    parse as the agent's ``output_type`` (``util/_json.validate_json``); the SDK attaches either to the current span,
    the turn's since the 0.2x refactor, the agent's before."""
    message = error.get("message") if isinstance(error, dict) else None
    data = error.get("data") if isinstance(error, dict) and isinstance(error.get("data"), dict) else {}
    if message in _NOT_FOUND and isinstance(data.get("tool_name"), str) and data["tool_name"]:
        node.info[REFUSED] = data["tool_name"]
        node.error = f"{message}: {data['tool_name']}"
    elif message == "Invalid JSON provided":
        node.info[REFUSED] = ANSWER


#: The SDK's tool output objects (``ToolOutputText`` / ``Image`` / ``FileContent`` and their dicts), by ``type``: the
#: fields each may have, and those of which it holds one (an MCP text block as JSON, before 0.1, adds ``annotations``
#: and ``meta``). A dict of a tool's own with another field (a directory listing's ``{"type": "file", "path"}``) is none.
_OUTPUT_OBJECTS = {
    "text": ({"text", "annotations", "meta", "_meta"}, {"text"}),
    "image": ({"image_url", "file_id", "detail"}, {"image_url", "file_id"}),
    "file": ({"file_data", "file_url", "file_id", "filename"}, {"file_data", "file_url", "file_id"}),
}
#: ``str()`` of a returned ``ToolOutputText`` (a pydantic model): ``type='text' text='...'``.
_TEXT_OUTPUT_STR = re.compile(r"""^type='text' text=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")$""", re.S)


def _output_object(block: Any) -> bool:
    """Whether a decoded value is one of the SDK's tool output objects (``_OUTPUT_OBJECTS``)."""
    if not isinstance(block, dict) or block.get("type") not in _OUTPUT_OBJECTS:
        return False
    fields, needed = _OUTPUT_OBJECTS[block["type"]]
    return set(block) - {"type"} <= fields and any(isinstance(block.get(k), str) for k in needed)


def _tool_output(output: Any) -> str:
    """A function span's output as text. The SDK writes ``str()`` of what the tool returned
    (``FunctionSpanData.export``), so a tool output object arrives as its Python repr: an MCP tool's
    ``ToolOutputTextDict`` (``{'type': 'text', 'text': ...}``, a list of them for several blocks; before 0.1 the
    blocks' JSON), a returned ``ToolOutputText`` (``type='text' text='...'``). Those are their text (an image or
    file object, JSON); any other output, a tool's own dicts included, stays as written."""
    if isinstance(output, str) and (found := _TEXT_OUTPUT_STR.match(output.strip())):
        return str(ast.literal_eval(found.group(1)))
    value = decode(output, literal=True)
    blocks = value if isinstance(value, list) and value else [value]
    if all(_output_object(b) for b in blocks):
        return "\n".join(b["text"] if b["type"] == "text" else text_of(b) for b in blocks)
    return text_of(output)


def _generation_output(output: Any) -> list[dict[str, Any]]:
    """A generation's output messages: chat messages, or a Responses object's items (:func:`response_output`), or
    (the JS SDK's Chat Completions model) the raw completion objects, whose ``choices[].message`` are the
    messages."""
    if not output:
        return []
    if (said := response_output(output)) is not None:
        return said
    items = output if isinstance(output, list) else [output]
    if any(isinstance(i, dict) and isinstance(i.get("choices"), list) for i in items):
        output = [c["message"] for i in items if isinstance(i, dict) for c in i.get("choices") or []
                  if isinstance(c, dict) and isinstance(c.get("message"), dict)]
    return [dict(m, role="assistant") if m["role"] == "user" else m for m in normalise_messages(output)]


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    """(trace id, node, conversation id) for every trace and span of one record (a ``RunState.to_json()`` document:
    the nodes of its run); ``ctx`` is unused."""
    if is_run_state(record):
        yield from ((key, node, None) for key, node in run_state_nodes(record, seq))
        return
    for n, item in enumerate(_items(record)):
        yield (_trace_node if item.get("object") == "trace" else _span_node)(item, seq + n)


# -- assembly ----------------------------------------------------------------------------


#: A time as the JS SDK writes it, ``new Date().toISOString()`` (agents-core ``tracing/utils.ts`` ``timeIso``); the
#: Python SDK writes ``datetime.now(timezone.utc).isoformat()`` (``tracing/util.py`` ``time_iso``): ``+00:00``, and
#: microseconds.
_JS_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def _written_by_js(item: dict[str, Any]) -> bool:
    """Whether a span was exported by the JS SDK (``@openai/agents``), told by its times (:data:`_JS_TIME`)."""
    return all(isinstance(item.get(k), str) and _JS_TIME.match(item[k]) for k in ("started_at", "ended_at"))


def _handoff_name(agent: str, *, keep_case: bool = False) -> str:
    """The SDK's default handoff tool name: the Python SDK's ``Handoff.default_tool_name`` lower-cases it
    (``transform_string_function_style``), the JS SDK's ``transfer_to_${toFunctionToolName(agent.name)}``
    (agents-core ``handoff.ts``, ``utils/tools.ts``) keeps the agent name's case."""
    name = re.sub(r"[^a-zA-Z0-9_]", "_", re.sub(r"\s", "_", f"transfer_to_{agent}"))
    return name if keep_case else name.lower()


def _handed_to(group: list[Node]) -> dict[str, str]:
    """The agent each handoff call handed over to, by call id: the SDK answers a handoff tool call with
    ``{"assistant": <agent name>}``, which the next model input carries."""
    found: dict[str, str] = {}
    for node in group:
        for m in node.input_messages if node.role == "llm" else []:
            result = maybe_json(m.get("text")) if m.get("role") == "tool" and m.get("call_id") else None
            if isinstance(result, dict) and list(result) == ["assistant"]:
                found[str(m["call_id"])] = str(result["assistant"])
    return found


def _match_handoffs(group: list[Node]) -> None:
    """Each handoff span's model call: by the SDK's default tool name, else the agent its result names
    (a ``tool_name_override``), else the first unused ``transfer_to...`` call."""
    calls = [c for n in sorted(group, key=lambda n: (n.start or 0.0, n.seq)) if n.role == "llm"
             for m in n.output_messages for c in m.get("calls", []) if c.get("name")]
    handed_to = _handed_to(group)
    used: set[int] = set()
    for node in (n for n in group if n.name == "handoff" and n.role == "tool"):
        agent = str(node.info.get("to_agent") or "")
        target = node.tool or _handoff_name(agent)  # named by the SDK that wrote the span (:func:`_span_node`)
        found = next((i for i, c in enumerate(calls)
                      if i not in used and str(c["name"]).lower() == target.lower()), None)
        if found is None:
            found = next((i for i, c in enumerate(calls)
                          if i not in used and agent and handed_to.get(str(c.get("id"))) == agent), None)
        if found is None:
            found = next((i for i, c in enumerate(calls)
                          if i not in used and str(c["name"]).startswith("transfer_to")), None)
        node.tool = calls[found]["name"] if found is not None else target
        if found is not None:
            used.add(found)
            node.call_id = calls[found].get("id")
            if calls[found].get("arguments") not in (None, {}, ""):
                node.arguments = calls[found]["arguments"]


def _without_interrupted_calls(group: list[Node]) -> list[Node]:
    """The spans without a tool call that paused for approval: the SDK records it at the interruption
    (no output, no error) and again when the resumed run executes it, with the same input."""
    def call(n: Node) -> tuple[Any, str]:
        return n.tool, json.dumps(n.arguments, sort_keys=True, default=str)

    ran: dict[tuple[Any, str], float] = {}  # each call that ran: when its last run started
    for n in group:
        if n.role == "tool" and n.name != "handoff" and (n.result is not None or n.error):
            ran[call(n)] = max(ran.get(call(n), 0.0), n.start or 0.0)
    return [n for n in group if not (n.role == "tool" and n.name != "handoff" and n.result is None and not n.error
                                     and call(n) in ran and (n.end or n.start or 0.0) <= ran[call(n)])]


def _silence_guardrail_models(group: list[Node]) -> None:
    """A guardrail agent's model calls are its check (the guardrail span says whether it tripped), not the
    agent talking to the user: their words make no steps."""
    by_id = {n.id: n for n in group}
    for node in group:
        if node.role == "llm" and any("guardrail" in a.info for a in ancestors(node, by_id)):
            node.output_messages, node.output_text = [], None


def _task(group: list[Node]) -> tuple[str | None, str]:
    ordered = sorted(group, key=start_order)
    for node in ordered:  # the latest user message: a run given a conversation's history answers its last turn
        users = [m["text"] for m in node.input_messages
                 if m.get("role") == "user" and str(m.get("text") or "").strip() and not m.get("call_id")]
        if node.role == "llm" and users:
            return users[-1], "model input"
    for node in ordered:
        if node.name == "transcription" and (node.output_text or "").strip():
            return node.output_text, "transcription"
    return None, "workflow name"


#: A function span's error where the SDK re-raised the tool's exception (``SpanError(message="Error running tool",
#: data={"tool_name", "error"})``, then ``raise UserError(f"Error running tool {name}: {e}")``, 0.0.3 to 0.2x); a tool
#: error given back to the model is "Error running tool (non-fatal)".
_FATAL_TOOL_ERROR = re.compile(r"^Error running tool(?:: (?P<detail>.*))?$", re.S)


def _tool_that_ended(group: list[Node]) -> tuple[str, str] | None:
    """(tool, error) of a run that raised because its tool raised, where no agent span says so (before the 0.2x
    refactor, ``Runner.run`` marks the agent span only when streamed): the last function span with the SDK's fatal
    message after whose end no model call or tool started (0.2x also writes that message for arguments that are no
    JSON, given back to the model: a run that went on), its error as the SDK raised it."""
    work = [n.start for n in group if n.role in ("llm", "tool") and n.start is not None]
    tools = (n for n in group if n.role == "tool" and n.name != "handoff" and n.error and n.end is not None)
    for node in sorted(tools, key=lambda n: n.end or 0.0, reverse=True):
        found = _FATAL_TOOL_ERROR.match(node.error or "")
        if found and not any(start > (node.end or 0.0) for start in work):
            detail = found.group("detail")
            return str(node.tool), f"Error running tool {node.tool}" + (f": {detail}" if detail else "")
    return None


def _tool_of(node: Node, by_id: dict[str, Node]) -> Node | None:
    """The function span ``node`` ran inside (an agent used as a tool: ``Agent.as_tool`` / ``agent.asTool()``)."""
    return next((a for a in ancestors(node, by_id) if a.role == "tool" and a.name != "handoff"), None)


def _container(node: Node) -> bool:
    return node.role == "agent" or node.info.get("sdk_span_type") in ("task", "turn")


def _nested_failures_to_tools(group: list[Node], by_id: dict[str, Node]) -> None:
    """An agent used as a tool whose run raised failed that tool call, not the run: the SDK gives the model the
    tool's error ("Error running tool (non-fatal)", its details redacted by default) and the outer run goes on, or
    re-raises it, and then the outer spans carry it too. The inner run's error becomes the call's (unless the call
    already names it: the fatal "Error running tool: ..."), also where the call recorded none (a function tool that
    runs ``Runner.run`` itself and catches its exception, its span then without error): the only record of the
    inner failure is then the call's. No inner span fails the run or makes a step (one whose error is a refusal of
    what the inner model said keeps it: its step's error)."""
    told: set[str] = set()  # the calls given their inner run's error
    for node in sorted(group, key=lambda n: n.seq):  # spans end, so are written, inner first
        tool = _tool_of(node, by_id) if node.error and _container(node) and not node.info.get(REFUSED) else None
        if tool is None:
            continue
        if tool.id not in told and not _FATAL_TOOL_ERROR.match(tool.error or ""):
            tool.error = node.error
            told.add(tool.id)
        node.error = None


#: The JS SDK's tripwire exceptions (``InputGuardrailTripwireTriggered``, ``OutputGuardrailTripwireTriggered``,
#: agents-core ``errors.ts``), by ``error.name`` as it writes a run's error (``getRunnerSpanErrorDetails``).
_JS_TRIPWIRE = re.compile(r"\b(?:Input|Output)GuardrailTripwireTriggered\b")
#: Its message (agents-core's runner, the realtime session): "Input guardrail triggered: " and the guardrail's
#: ``outputInfo`` as JSON, the only record of why it tripped (its span keeps only the name and ``triggered``).
_JS_TRIPWIRE_INFO = re.compile(r"\b(?:Input|Output) guardrail triggered: (?P<info>.+)$", re.S)


def _js_tripwire_error(error: str, tripped: list[str]) -> str:
    """A JS tripwire error as the Python SDK words it, named by the guardrails, with the guardrail's verdict."""
    found = _JS_TRIPWIRE_INFO.search(error)
    info = found.group("info").strip() if found else ""
    named = f"Guardrail tripwire triggered: {', '.join(tripped)}"
    return f"{named}: {info}" if info not in ("", "undefined") else named  # (JSON.stringify of no outputInfo)


def _one_failure(group: list[Node], by_id: dict[str, Node], tripped: list[str]) -> None:
    """A run's error written on several nested spans is one failure: the JS SDK sets the same "Error in agent run"
    on the turn, the agent and the task span (agents-core ``run.ts`` ``recordNonStreamingError``), so an agent or
    turn span whose error a span below it already carries keeps none (the innermost tells it, where it surfaced).
    A JS tripwire error, where a guardrail span says it ``triggered``, is told as the Python SDK tells it
    ("Guardrail tripwire triggered") with the guardrail's name, then its verdict from the JS message."""
    for node in (n for n in group if n.error and _container(n) and n.parent in by_id):
        if any(c.error == node.error and _container(c) and any(a is node for a in ancestors(c, by_id))
               for c in group):
            node.error = None
    for node in (n for n in group if tripped and n.error and _JS_TRIPWIRE.search(n.error)):
        node.error = _js_tripwire_error(node.error, tripped)


class _Format(SpanFormat):
    def assemble_trajectory(self, key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
        # a span exported twice (a batch re-posted, a JSONL and a batch dump of one run) counts once
        group = list({n.id: n for n in sorted(group, key=lambda n: n.seq, reverse=True)}.values())
        group.sort(key=lambda n: n.seq)
        if not any(n.parent is not None for n in group):
            raise RecordError(f"{by} {key} has no spans: only its trace record was read")
        group = _without_interrupted_calls(group)
        _silence_guardrail_models(group)
        _match_handoffs(group)
        starts = [n.start for n in group if n.start is not None]
        ends = [n.end for n in group if n.end is not None]
        for node in group:  # the trace record has no times: it spans its spans
            if node.parent is None and node.start is None and starts:
                node.start, node.end = min(starts) - 1e-6, max(ends) if ends else None
        ids = {n.id for n in group}
        roots = [n for n in group if not n.parent or n.parent not in ids]
        root = min(roots or group, key=start_order)
        by_id = {n.id: n for n in group}
        _nested_failures_to_tools(group, by_id)
        tripped = [str(n.info["guardrail"] or "guardrail") for n in group
                   if n.info.get("triggered") and _tool_of(n, by_id) is None]
        _one_failure(group, by_id, tripped)
        failure = next((n.error for n in sorted(group, key=lambda n: n.seq) if n.error and _container(n)), None)
        failure = failure or (f"Guardrail tripwire triggered: {', '.join(tripped)}" if tripped else None)
        ended_by = None if failure or root.error else _tool_that_ended(group)
        if ended_by:
            failure = ended_by[1]
        if failure and not root.error:
            root.error = failure
        agents = list(dict.fromkeys(n.name for n in sorted(group, key=lambda n: (n.start or 0.0, n.seq))
                                    if n.role == "agent"))  # in the order they started (spans end inner first)
        task, source = _task(group)
        if task is None:
            workflow = root.info.get("workflow_name") or root.name
            task = f"{workflow}" + (f" ({', '.join(agents)})" if agents else "") + " (no input recorded)"
        root.input_text = task
        run = span_trajectory(self.name, self.prefix, key, group, ctx, by=by)
        extra: dict[str, Any] = {"task_source": source}
        guardrails = [n.info for n in group if "guardrail" in n.info]
        if guardrails:
            extra["guardrails"] = guardrails
        responses = [n.info["response_id"] for n in group if n.info.get("response_id")]
        if responses:
            extra["response_ids"] = responses[:50]
        if agents:
            extra["agents"] = agents
        extra.update({k: root.info[k] for k in META_KEYS if k in root.info})  # a saved RunState's
        if waiting := _awaiting_steps(run.steps, group):
            extra["awaiting_approval_steps"] = waiting
        if ended_by:
            extra["outcome_basis"] = f"error status of the tool {ended_by[0]!r}, which ended the run"
        return run.model_copy(update={"task": clip_task(task.strip()), "metadata": {**run.metadata, **extra}})


def _awaiting_steps(steps: list[Step], group: list[Node]) -> list[int]:
    """The indexes of the steps whose calls a saved RunState holds waiting for a person's approval (its tool nodes
    marked ``awaiting_approval``): each the last unanswered step (no result, no error) of that tool and arguments, so
    a reader of the run (``trajsearch show``) can tell a paused call from one whose result was not recorded."""
    taken: list[int] = []
    for node in (n for n in group if n.role == "tool" and n.info.get("awaiting_approval")):
        index = next((s.index for s in reversed(steps) if s.index not in taken and s.action == node.tool
                      and s.arguments == node.arguments and s.observation is None and s.error is None), None)
        if index is not None:
            taken.append(index)
    return sorted(taken)


_FORMAT = _Format(NAME, ID_PREFIX)
trajectory_id = _FORMAT.trajectory_id
assemble_trajectory = _FORMAT.assemble_trajectory
