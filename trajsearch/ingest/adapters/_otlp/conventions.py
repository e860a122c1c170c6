"""Span attributes -> a :class:`~trajsearch.ingest.adapters._spans.Node`: what each convention calls things.

One trace often carries several conventions at once (an agent framework's
own spans around an instrumented model client), so every span is read for all
of them (see ``otel_genai`` and ``openinference`` for the mapping):

- OpenTelemetry GenAI semantic conventions (``gen_ai.operation.name``,
  ``gen_ai.input.messages`` / ``gen_ai.output.messages``, ``gen_ai.tool.*``,
  the older ``gen_ai.prompt`` / ``gen_ai.completion``, evaluation events,
  ``gen_ai.retrieval.query.text`` / ``gen_ai.retrieval.documents``);
- OpenInference (``openinference.span.kind``, ``llm.input_messages.N.*``,
  ``input.value`` / ``output.value``, ``retrieval.documents.N.*``,
  evaluations and annotations);
- OpenLLMetry / Traceloop (``traceloop.span.kind``, ``traceloop.entity.*``;
  its LangChain callback records ``{"input_str", "inputs", ...}`` / ``{"output",
  "kwargs"}`` give the inputs and the output: ``events.callback_envelope``);
- frameworks' own attributes: any-agent's ``gen_ai.output``, Google ADK's
  ``gcp.vertex.agent.*`` (Gemini requests and responses), VeADK's (the runner's
  arguments and last event as ``input.value`` / ``output.value``, a tool's call
  with its declaration as ``gen_ai.tool.input``), Pydantic AI /
  Logfire's ``events``, ``pydantic_ai.all_messages`` (from
  ``pydantic_ai.new_message_index``: a run's own messages) and logfire v1's
  ``request_data`` / ``response_data`` (a span named by its template is named
  by ``logfire.msg``), LiteLLM's tool calls left in
  ``gen_ai.completion.N.function_call.*``, autogen's ``output.value``
  ``thought``, the Agents SDK instrumentation's ``gen_ai.handoff.*``, Mastra's
  span types (``mastra.span.type``: the model step holds the call's text and
  tool calls, ``mastra.model_step.*`` / ``input`` / ``output``; its
  ``error.message``), the Langfuse SDK's (v3 and later) ``langfuse.observation.*``
  (``type`` gives the role; ``input`` / ``output``, ``model.name``, ``level``
  ``ERROR`` with its ``status_message``), AutoGen's runtime spans (``autogen
  publish|process ...``, and Semantic Kernel's port's ``agent_runtime ...``:
  the trace each was linked from, the team's task and each agent's turn in
  the ``message`` it delivered), CrewAI's crew and task
  records and Haystack's tracer's spans (read as the convention keys they
  stand for: ``_FRAMEWORK_KEYS``).

Where the attributes are in a record is ``shapes``' business; the GenAI
events carried as span events are read through ``events``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict
from typing import Any

from .._common import as_dict, as_list, decisive_line, short
from .._vendor import decode, message_dicts, output_dicts
from .._spans import EMBEDS, OFFERED, RESUMED, UNTYPED_MESSAGES, Message, Node, error_text, evaluation, indexed, maybe_json, normalise_message, normalise_messages, text_of
from .._spans.messages import (adk_tool_error, crew_task_descriptions, failed_tool_results, haystack_agent_turns,
                               response_output, result_text, tool_message)
from .harbor import is_harbor_export, read_as_atif
from .events import (EVALUATION_EVENT, NO_MESSAGE, callback_envelope, event_messages, exception_text, genai_evaluation,
                     returned_error, span_event_messages, span_offered, system_message, tool_io)
from .shapes import span_events, span_ids, span_links, span_status
from .values import attributes, clean_ids, span_time

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
#: What OpenInference writes for a value its TraceConfig hides (``OPENINFERENCE_HIDE_INPUTS`` and the other
#: ``OPENINFERENCE_HIDE_*`` switches, ``openinference.instrumentation.config.REDACTED_VALUE``): no value recorded.
OI_REDACTED = "__REDACTED__"
#: OpenLLMetry (Traceloop) ``traceloop.span.kind`` and ``llm.request.type``.
_TRACELOOP_ROLES = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
_CONVERSATION_KEYS = ("gen_ai.conversation.id", "session.id", "gen_ai.session.id", "conversation.id",
                      "gcp.vertex.agent.session_id")


def _evaluations(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """GenAI ``gen_ai.evaluation.result`` events and OpenInference ``(trace.)evaluations`` / annotations."""
    out = [genai_evaluation(ev) for name, ev in events
           if name == EVALUATION_EVENT or "gen_ai.evaluation.name" in ev]
    for prefix in ("trace.evaluations.", "evaluations.", "trace.annotations.", "annotations."):
        kind = "annotation" if "annotation" in prefix else "evaluation"
        out += [evaluation(item.get(f"{kind}.name"), item.get(f"{kind}.label"), item.get(f"{kind}.score"),
                           item.get(f"{kind}.explanation")) for item in indexed(attrs, prefix)]
    return [e for e in out if e is not None]


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
        inputs = [*system_message(config.get("system_instruction")), *_gemini_messages(request.get("contents"))]
    outputs: list[dict[str, Any]] = []
    if isinstance(response, dict):
        content = response.get("content")
        if content is None and isinstance(response.get("candidates"), list) and response["candidates"]:
            content = (response["candidates"][0] or {}).get("content")
        outputs = [dict(m, role="assistant") for m in _gemini_messages(content)]
    return inputs, outputs


def _adk_runner_messages(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]] | None:
    """ADK's runner invocation as VeADK traces it: ``input.value`` the runner's arguments (``{"user_id",
    "session_id", "new_message": <Content as JSON>}``), ``output.value`` the last ``Event`` (``{"content":
    <Content>, "author", ...}``): (the user's message, the answer). None for any other span."""
    args = maybe_json(attrs.get("input.value"))
    if not (isinstance(args, dict) and "new_message" in args and {"user_id", "session_id"} <= args.keys()):
        return None
    event = maybe_json(attrs.get("output.value"))
    said = event.get("content") if isinstance(event, dict) else None
    return _gemini_messages(maybe_json(args["new_message"])), \
        [dict(m, role="assistant") for m in _gemini_messages(said)] if isinstance(said, dict) else []


#: A whole text part of a Gemini ``Content`` in JSON (``"text": "..."``, its string closed).
_TEXT_PART = re.compile(r'"text"\s*:\s*("(?:[^"\\]|\\.)*")')
#: The end of a ``Content``'s parts in JSON: its last part closed, then the list.
_PARTS_END = re.compile(r'\}\s*\]')


def cut_runner_request(cut: str) -> tuple[str, bool] | None:
    """The user's words in ADK's runner arguments (see :func:`_adk_runner_messages`) that an exporter cut short:
    (the text parts of ``new_message`` that are whole before the cut, whether the message's parts all were);
    None for any other text, or when no part is whole."""
    head, found, message = cut.partition('"new_message"')
    if not (found and '"session_id"' in head and '"user_id"' in head):
        return None
    parts = list(_TEXT_PART.finditer(message))
    texts = [t for t in (maybe_json(p.group(1)) for p in parts) if isinstance(t, str) and t.strip()]
    return ("\n".join(texts), bool(_PARTS_END.search(message, parts[-1].end()))) if texts else None


def _declared_call(arguments: Any) -> Any:
    """The arguments of VeADK's ``gen_ai.tool.input``, which records the call with the tool's declaration
    (``{"name", "description", "parameters": {...}}``): its ``parameters``; anything else as it is."""
    value = maybe_json(arguments)
    if isinstance(value, dict) and isinstance(value.get("parameters"), dict) \
            and set(value) <= {"name", "description", "parameters"}:
        return value["parameters"]
    return arguments


#: Why the spans of Monocle (monocle2ai, LF AI & Data) make no run: their own convention, which no adapter reads.
MONOCLE = ("Monocle spans (monocle2ai: span.type agentic.request / agentic.invocation / agentic.tool.invocation / "
           "inference, their content in data.input / data.output events), a convention trajsearch does not read")


def is_monocle(attrs: dict[str, Any]) -> bool:
    """Whether a span's attributes are Monocle's: its instrumentation's version, or one of its span types."""
    kind = str(attrs.get("span.type") or "")
    return "monocle_apptrace.version" in attrs or kind.startswith(("agentic.", "inference"))


def _status_text(message: str | None) -> str | None:
    """A status message that is an error object written as text (OpenLLMetry's Agents SDK instrumentation
    writes the SDK's ``{"message", "data"}`` error as its Python repr) as the error's words, else as it is."""
    if not message or not message.lstrip().startswith("{"):
        return message
    error = decode(message.strip(), literal=True)  # JSON or a Python literal; anything else stays text
    return (error_text(error) or message) if isinstance(error, dict) and "message" in error else message


#: The span-name namespaces of autogen-core's agent runtime (``autogen``) and of Semantic Kernel's port of it
#: (``agent_runtime``: ``semantic_kernel/agents/runtime/core/telemetry/constants.py``), the orchestrations' runtime.
_RUNTIME_NAMESPACES = ("autogen ", "agent_runtime ")


def _autogen_runtime(name: str, attrs: dict[str, Any]) -> bool:
    """A span of AutoGen's agent runtime (``autogen publish|process|send|ack <topic>``, ``messaging.*``) or of
    Semantic Kernel's port of it (``agent_runtime create|send|process|ack <agent>``), which starts a trace for
    every message it sends, linked to the trace that sent it: a team's or an orchestration's turns are one chain
    of traces (see ``spool``). Other spans' links (a batch consumer's) tie no run together."""
    return name.startswith(_RUNTIME_NAMESPACES) and "messaging.operation" in attrs


def _autogen_team_task(attrs: dict[str, Any]) -> str | None:
    """The task a team was given, from the ``GroupChatStart`` message AutoGen's runtime records on the span
    delivering it (``message``: ``{"messages": [{"source": "user", "content", "type": "TextMessage"}]}``), which
    it writes whether or not message content is captured; None for any other message."""
    message = maybe_json(attrs.get("message"))
    said = [m.get("content") for m in as_list(message.get("messages") if isinstance(message, dict) else None)
            if isinstance(m, dict) and m.get("source") == "user" and isinstance(m.get("content"), str)]
    return "\n".join(said) if said else None


def _autogen_reply(attrs: dict[str, Any]) -> dict[str, Any] | None:
    """An agent's turn in a team, from the ``GroupChatMessage`` AutoGen's runtime records on the span delivering
    it (``message``: ``{"message": {"source": <agent>, "content", "type": "TextMessage"}}``), content capture or
    not: ``{"agent", "text"}`` (see ``adapter``: the turn's step where no model call recorded one); else None."""
    message = maybe_json(attrs.get("message"))
    said = message.get("message") if isinstance(message, dict) and set(message) == {"message"} else None
    if not (isinstance(said, dict) and isinstance(said.get("content"), str) and said.get("source") not in (None, "user")):
        return None
    return {"agent": str(said["source"]), "text": said["content"]}


#: ``error.type`` values that name no type, so a span's words alone are its error: the conventions' fallback
#: ``_OTHER`` (``ErrorTypeValues.OTHER``; set by opentelemetry-instrumentation-genai-openai-agents on every failed
#: agent and tool span, the words in the status message, and by util-genai for an abandoned stream) and Mastra's
#: ``unknown`` (the words in ``error.message``).
_NAMELESS_ERROR_TYPES = frozenset({"_OTHER", "unknown"})


def span_error(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]], failed: bool, message: str | None,
               output: Any = None) -> str | None:
    """A span's error: its ``exception`` event (``<type>: <message>``), else its ``error.type`` with the status
    message or Mastra's ``error.message`` (the words alone where the type names none: ``_OTHER``, ``unknown``), else
    the ERROR status's message. Where the exception's words say nothing of their own (:func:`_says_nothing`: beeai's
    ``ToolError: Tool Error``, whose cause its output renders, ``RuntimeError(builtins): population service
    unavailable ...``; a redacted ``[sanitized exception message]``), the decisive line of the span's ``output`` (its
    output.value) where that holds an error line (DEC32: of the 19 exception events of the real spans in
    tests/fixtures and the shared data, only those two said less than their span's output; every other one's message
    was the tool's own raise, which no output said better)."""
    exc = next((ev for name, ev in events if name == "exception" or "exception.type" in ev), None)
    parts = []
    if exc:
        kind, text = exc.get("exception.type") or exc.get("exception.name"), exc.get("exception.message")
        if _says_nothing(kind, text) and isinstance(output, str) and (said := decisive_line(output, last_line=False)):
            return said
        parts.append(exception_text(kind, text))
    elif attrs.get("error.type"):  # ADK sets type and status description alike ("TOOL_ERROR")
        kind, said = str(attrs["error.type"]), str(message or attrs.get("error.message") or "")  # (Mastra's words)
        if said and kind in _NAMELESS_ERROR_TYPES:
            parts.append(said)
        else:
            parts.append(kind + (f": {said}" if said and said != kind else ""))
    elif failed:
        parts.append(message or NO_MESSAGE)
    return "; ".join(p for p in parts if p) or None


#: A message redacted to a placeholder in brackets, words only (Phoenix PXI's ``[sanitized exception message]``); no
#: list's repr (``ValueError: ['a', 'b']``), which says what was wrong.
_REDACTED = re.compile(r"\[[a-z][a-z ]*\]", re.I)


def _says_nothing(kind: Any, text: Any) -> bool:
    """Whether an exception's message says nothing its class does not: none, its class's name in words (beeai's
    ``ToolError`` raised as ``Tool Error``), or a placeholder in brackets where it was redacted."""
    said = str(text or "").strip()
    name = str(kind or "").rsplit(".", 1)[-1]
    return not said or said.replace(" ", "").lower() == name.lower() or bool(_REDACTED.fullmatch(said))


def _legacy_function_calls(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    """Calls written as ``gen_ai.completion.N.function_call.{name,arguments}`` (LiteLLM's OTel callback)."""
    return [{"id": c.get("function_call.id") or c.get("tool_call.id"), "name": c["function_call.name"],
             "arguments": maybe_json(c.get("function_call.arguments"))}
            for c in indexed(attrs, "gen_ai.completion.") if c.get("function_call.name")]


def _mastra_messages(attrs: dict[str, Any], role: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A Mastra model step's request and its ``{"text", "toolCalls"}`` output (``mastra.model_step.*`` in 1.x,
    ``input`` / ``output`` in 0.x, the request under ``body``); an agent run's input and answer."""
    if role == "agent":
        given = _first(attrs, "mastra.agent_run.input", "input")
        said = maybe_json(_first(attrs, "mastra.agent_run.output", "output"))
        inputs = normalise_messages(given) if given is not None else []
        text = said.get("text") if isinstance(said, dict) else said
        return inputs, ([{"role": "assistant", "text": text}] if isinstance(text, str) and text else [])
    request = maybe_json(_first(attrs, "mastra.model_step.input", "input"))
    if isinstance(request, dict) and isinstance(request.get("body"), dict):
        request = request["body"].get("messages")
    said = maybe_json(_first(attrs, "mastra.model_step.output", "output"))
    said = said if isinstance(said, dict) else {}
    calls = [{"id": c.get("toolCallId"), "name": c.get("toolName"), "arguments": maybe_json(c.get("args"))}
             for c in as_list(said.get("toolCalls")) if isinstance(c, dict)]
    text = said.get("text") if isinstance(said.get("text"), str) else ""
    return normalise_messages(request) if request else [], ([{"role": "assistant", "text": text, "calls": calls}]
                                                           if text or calls else [])


def _logfire_request(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages of logfire's first OpenAI instrumentation (``instrument_openai(version=1)``, all older
    logfire): the request as sent (``request_data.messages``) and the reply (``response_data.message``, or
    its ``choices``)."""
    request, response = maybe_json(attrs.get("request_data")), maybe_json(attrs.get("response_data"))
    inputs = normalise_messages(request.get("messages")) if isinstance(request, dict) else []
    reply = response.get("message") if isinstance(response, dict) else None
    if reply is None and isinstance(response, dict) and isinstance(response.get("choices"), list):
        reply = [c.get("message") for c in response["choices"] if isinstance(c, dict)]
    outputs = [dict(m, role="assistant") for m in normalise_messages(reply)] if reply else []
    return inputs, outputs


def _langfuse_messages(attrs: dict[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A Langfuse SDK generation's messages: its input (the request's keyword arguments, ``messages`` among them,
    as ``langfuse.openai`` records them; or messages) and its output (the reply)."""
    request = maybe_json(attrs.get("langfuse.observation.input"))
    if isinstance(request, dict) and "messages" in request:
        request = request["messages"]
    reply = maybe_json(attrs.get("langfuse.observation.output"))
    return (normalise_messages(request) if request else [],
            [dict(m, role="assistant") for m in normalise_messages(reply)] if reply else [])


def _new_messages(attrs: dict[str, Any]) -> tuple[Any, bool]:
    """A pydantic-ai agent run's messages without the conversation history it was given
    (``pydantic_ai.new_message_index``: where this run's own messages start), so a later turn's task is its own;
    and whether the run was resumed (:data:`~.._spans.nodes.RESUMED`)."""
    messages = maybe_json(attrs["pydantic_ai.all_messages"])
    start = attrs.get("pydantic_ai.new_message_index")
    if isinstance(messages, list) and isinstance(start, int) and not isinstance(start, bool) and 0 < start < len(messages):
        # a run resumed with ``deferred_tool_results`` opens with the results of the calls the history's last
        # response asked for (approved and run, or denied): that response is kept, so those calls are its steps
        resumed = _answers_calls(messages[start])
        return messages[start - 1 if resumed else start:], resumed
    return messages, False


def _answers_calls(message: Any) -> bool:
    """Whether a GenAI message holds ``tool_call_response`` parts (pydantic-ai's tool returns)."""
    return isinstance(message, dict) and any(isinstance(p, dict) and p.get("type") == "tool_call_response"
                                             for p in as_list(message.get("parts")))


#: Mastra's own span types (``mastra.span.type``): a model step (one call: text and tool calls) is the model
#: call; the model generation around all steps, the inference inside one and streamed chunks are not.
_MASTRA_ROLES = {"agent_run": "agent", "workflow_run": "chain", "model_step": "llm", "tool_call": "tool",
                 "mcp_tool_call": "tool", "model_generation": "other", "model_inference": "other", "model_chunk": "other"}


#: The Langfuse SDK's (v3 and later, OpenTelemetry-based) observation types (``langfuse.observation.type``).
_LANGFUSE_ROLES = {"agent": "agent", "generation": "llm", "tool": "tool", "retriever": "retriever",
                   "chain": "chain", "span": "chain", "evaluator": "evaluator", "embedding": "other",
                   "guardrail": "other", "event": "other"}


#: Embedding and rerank calls as each convention names them: ``gen_ai.operation.name``, OpenInference's span
#: kind, OpenLLMetry's older ``llm.request.type``, Langfuse's observation type (see ``_spans.no_agent_work``).
_EMBEDS = {"embeddings": "embedding", "embedding": "embedding", "rerank": "rerank", "reranker": "rerank"}


def _embeds(attrs: dict[str, Any], span: dict[str, Any]) -> str | None:
    """"embedding" or "rerank" for a span of such a call, else None."""
    for kind in (attrs.get("gen_ai.operation.name"), attrs.get("openinference.span.kind") or span.get("span_kind"),
                 attrs.get("llm.request.type"), attrs.get("langfuse.observation.type")):
        if (found := _EMBEDS.get(str(kind or "").lower())) is not None:
            return found
    return None


def _llamaindex_call_tool(attrs: dict[str, Any]) -> bool:
    """Whether an OpenLLMetry LlamaIndex ``task`` span is a workflow agent's ``call_tool`` step, one tool call.
    Its ``dispatcher_wrapper`` marks that span with ``tool.name`` and ``tool.arguments`` only; it also copies
    LlamaIndex's ``AgentToolCallEvent`` onto whichever span is current (``span_utils.set_tool``: ``tool.name``,
    ``tool.description``, ``tool.arguments``), which the legacy agents (``FunctionCallingAgentWorker``,
    ``ReActAgentWorker``, up to llama-index 0.12) fire inside an agent step holding the model call and the tool's
    own span: that step is no tool call (it would give each call twice)."""
    return bool(attrs.get("tool.name")) and "tool.description" not in attrs


#: The GenAI keys of one tool call, which the conventions define for an ``execute_tool`` span alone: a span with
#: one and no operation name is a tool's run (read as "other", the last tool's result and error were lost).
_TOOL_CALL_KEYS = ("gen_ai.tool.call.id", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")


def _role(attrs: dict[str, Any], span: dict[str, Any], name: str) -> str:
    if (mastra := _MASTRA_ROLES.get(str(attrs.get("mastra.span.type") or ""))) is not None:
        return mastra
    if (langfuse := _LANGFUSE_ROLES.get(str(attrs.get("langfuse.observation.type") or ""))) is not None:
        return langfuse
    op = str(attrs.get("gen_ai.operation.name") or "").lower()
    oi_kind = str(attrs.get("openinference.span.kind") or span.get("span_kind") or "").upper()
    role = _GENAI_ROLES.get(op) or _OI_ROLES.get(oi_kind)
    if role:
        return role
    if (kind := str(attrs.get("traceloop.span.kind") or "").lower()) in _TRACELOOP_ROLES:
        return "tool" if kind == "task" and _llamaindex_call_tool(attrs) else _TRACELOOP_ROLES[kind]
    if str(attrs.get("llm.request.type") or "").lower() in ("chat", "completion"):
        return "llm"
    if any(attrs.get(k) is not None for k in _TOOL_CALL_KEYS):
        return "tool"
    head = name.split(" ", 1)[0].lower()  # span names as the conventions spell them, "chat gpt-4o"
    return _GENAI_ROLES.get(head, "other") if head in ("call_llm", "execute_tool", "invoke_agent") else "other"


def _untyped_messages(attrs: dict[str, Any], span: dict[str, Any], inputs: list[dict[str, Any]],
                      outputs: list[dict[str, Any]]) -> bool:
    """Whether a span no convention typed (no :data:`_KIND_KEYS`; GenAI and OpenInference require one) records a
    model's messages and names no agent: read as "other", a model call's task and answer were lost. Whether it is
    one the run's tree tells (``_spans.untyped_model_calls``). OpenInference's explicit ``UNKNOWN`` is typed."""
    typed = any(attrs.get(k) for k in _KIND_KEYS) or span.get("span_kind")
    return not typed and bool(inputs or outputs) and not any(attrs.get(k) for k in _AGENT_NAME_KEYS) \
        and _embeds(attrs, span) is None


#: The tool name of the summary span Google ADK writes after a batch of parallel tool calls
#: (``trace_merged_tool_calls``: arguments "N/A", the merged responses); each call has its own ``execute_tool``
#: span, so this one is no call.
_ADK_MERGED_TOOLS = "(merged tools)"

#: OpenInference's name for an Agents SDK handoff span (input: the agent handing off; output: the one taking over).
_HANDOFF_SPAN = re.compile(r"^handoff to (.+)$")


#: Agent frameworks' own spans, read as the convention keys their attributes stand for (filled where a span has
#: none of its own). CrewAI under OpenLLMetry (opentelemetry-instrumentation-crewai): a task's description, the
#: crew's tasks and result; under OpenInference's CrewAI instrumentor: the crew's tasks. Haystack's tracer
#: (haystack-ai, opentelemetry-haystack): an agent's input and output, a model call's request and replies
#: (``{"messages"}`` / ``{"replies"}`` of Haystack ``ChatMessage`` dicts), a tool's name, arguments and result.
_FRAMEWORK_KEYS = {
    "crewai.task.description": "input.value", "crewai.crew.tasks": "input.value", "crew_tasks": "input.value",
    "crewai.crew.result": "output.value",
    "haystack.agent.input": "input.value", "haystack.agent.output": "output.value",
    "haystack.agent.step.llm.input": "gen_ai.input.messages", "haystack.agent.step.llm.output": "gen_ai.output.messages",
    "haystack.tool.name": "gen_ai.tool.name", "haystack.agent.step.tool.input": "gen_ai.tool.call.arguments",
    "haystack.agent.step.tool.output": "gen_ai.tool.call.result",
}
#: CrewAI's task lists, read as their descriptions (:func:`~.._spans.messages.crew_task_descriptions`).
_CREW_TASK_LISTS = ("crewai.crew.tasks", "crew_tasks")
#: Their span names, as the GenAI operations they are (Haystack's agent, its steps, model calls and tool calls).
_FRAMEWORK_OPERATIONS = {"haystack.agent.run": "invoke_agent", "haystack.agent.step": "agent_step",
                         "haystack.agent.step.llm": "chat", "haystack.agent.step.tool": "execute_tool"}


#: MLflow's span types (``mlflow.entities.SpanType``) as the GenAI operations MLflow's own GenAI export names them
#: (``mlflow/tracing/export/genai_semconv/translator.py``), but for three it maps otherwise: a retriever and a
#: reranker are a retrieval / rerank here (MLflow: ``execute_tool``, so a RAG trace's search reads as a search, not a
#: tool call), a chain a workflow step (MLflow leaves it without an operation).
_MLFLOW_OPERATIONS = {"CHAT_MODEL": "chat", "LLM": "generate_content", "EMBEDDING": "embeddings",
                      "TOOL": "execute_tool", "AGENT": "invoke_agent", "CHAIN": "workflow", "RETRIEVER": "retrieval",
                      "RERANKER": "rerank"}


#: The keys of a model request as MLflow records one (Chat Completions' and DSPy's ``messages`` / ``prompt``, the
#: Responses API's ``input``, Gemini's ``contents``): a model-typed span without any is a module around the call.
_MLFLOW_REQUEST_KEYS = ("messages", "prompt", "input", "contents")


def _mlflow_as_genai(name: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """A span in MLflow's own convention (``mlflow.openai.autolog()``, ``@mlflow.trace``, ``mlflow.dspy.autolog()``;
    MLflow's OTLP export by default and its ``Trace.to_dict()``: ``mlflow.spanType``, ``mlflow.spanInputs`` /
    ``mlflow.spanOutputs``, every value JSON-encoded) read as the convention keys MLflow's GenAI export
    (``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV``) gives it, so that a trace reads the same exported either way (but for the
    retriever, reranker and chain spans :data:`_MLFLOW_OPERATIONS` maps otherwise): a tool's
    inputs and outputs are its arguments and result, an agent's span name its name, a model call's request's
    ``model`` the model asked for; its inputs and outputs, the request and reply whole, are ``input.value`` /
    ``output.value`` (as OpenInference keeps them; their messages: :func:`node_from_span`), as any other span's are.
    A convention key the span has wins. Two DSPy marks: its ``Predict`` module is typed ``LLM`` with the signature's
    fields as inputs (no request: a step around the ``LM`` call, which is the model call), and its tool spans are
    named ``Tool.<the name the model called>``."""
    kind = maybe_json(attrs["mlflow.spanType"])
    kind = kind if isinstance(kind, str) else None  # a span type that is no name is no type, not a failed record
    inputs, outputs = (maybe_json(attrs[k]) if k in attrs else None
                       for k in ("mlflow.spanInputs", "mlflow.spanOutputs"))
    request = as_dict(inputs)
    model_call = kind in ("CHAT_MODEL", "LLM") and any(k in request for k in _MLFLOW_REQUEST_KEYS)
    read = dict(attrs)
    if kind in _MLFLOW_OPERATIONS:
        read.setdefault("gen_ai.operation.name", _MLFLOW_OPERATIONS[kind] if model_call or kind not in
                        ("CHAT_MODEL", "LLM") else "workflow")
    given = {"gen_ai.response.model": maybe_json(attrs.get("mlflow.llm.model"))
             or (as_dict(outputs).get("model") if model_call else None),  # the reply's, as the API gives it
             "gen_ai.provider.name": maybe_json(attrs.get("mlflow.llm.provider")),
             "gen_ai.request.model": request.get("model") if model_call else None,
             "gen_ai.agent.name": name if kind == "AGENT" else None}
    if kind == "TOOL":
        given |= {"gen_ai.tool.name": name.removeprefix("Tool."), "gen_ai.tool.call.arguments": inputs,
                  "gen_ai.tool.call.result": outputs}
    else:
        given |= {"input.value": inputs, "output.value": outputs}
    for standard, value in given.items():
        if value is not None and value != "":
            read.setdefault(standard, value)
    return read


#: The span-kind keys of the tracers read here by their own keys beside GenAI's: the Langfuse SDK's (v3 and later)
#: and OpenLLMetry's (Traceloop). MLflow's store translates both (``mlflow/tracing/otel/translation``).
TRACER_KIND_KEYS = ("langfuse.observation.type", "traceloop.span.kind")
#: The keys by which a span says what it is: GenAI's operation, OpenInference's kind, Mastra's, Langfuse's and
#: OpenLLMetry's own types and OpenLLMetry's older request type.
_KIND_KEYS = ("gen_ai.operation.name", "openinference.span.kind", "mastra.span.type", "llm.request.type",
              *TRACER_KIND_KEYS)
#: The keys naming the agent a span represents: GenAI's, OpenInference's, pydantic-ai's and Agno's team.
_AGENT_NAME_KEYS = ("gen_ai.agent.name", "agent.name", "agent_name", "agno.team.name")


def is_mlflow(attrs: dict[str, Any]) -> bool:
    """A span in MLflow's own convention: ``mlflow.spanType`` and no OpenInference, GenAI, Langfuse or Traceloop
    key. MLflow's store adds ``mlflow.spanType`` / ``spanInputs`` / ``spanOutputs`` to the other tracers' spans it
    keeps (``mlflow/tracing/otel/translation``), copies of what their own keys say, which they are read by: read as
    MLflow's, a Langfuse tool span's arguments were its ``{"args": [], "kwargs": {...}}`` wrapper (review RT-IDX)."""
    return "mlflow.spanType" in attrs and not any(k in attrs for k in ("openinference.span.kind", *TRACER_KIND_KEYS)) \
        and not any(k.startswith("gen_ai.") for k in attrs)


def _as_conventions(name: str, attrs: dict[str, Any]) -> dict[str, Any]:
    """``attrs`` with what a framework's own attributes hold under the convention keys they stand for
    (:data:`_FRAMEWORK_KEYS`, :data:`_FRAMEWORK_OPERATIONS`, MLflow's: :func:`_mlflow_as_genai`)."""
    if is_mlflow(attrs):
        attrs = _mlflow_as_genai(name, attrs)
    if not any(k in attrs for k in _FRAMEWORK_KEYS) and name not in _FRAMEWORK_OPERATIONS:
        return attrs
    read = dict(attrs)
    if name in _FRAMEWORK_OPERATIONS:
        read.setdefault("gen_ai.operation.name", _FRAMEWORK_OPERATIONS[name])
    for key, standard in _FRAMEWORK_KEYS.items():
        if attrs.get(key) is not None and read.get(standard) is None:
            value = maybe_json(attrs[key])
            listed = value.get("messages", value.get("replies")) if isinstance(value, dict) else None
            if key in _CREW_TASK_LISTS:  # the crew's request: its tasks' descriptions
                read[standard] = crew_task_descriptions(value) or attrs[key]
            else:
                read[standard] = listed if standard.endswith(".messages") and isinstance(listed, list) else attrs[key]
            if standard == "gen_ai.output.messages" and isinstance(listed, list) and listed:  # a reply's meta
                read.setdefault("gen_ai.response.model", as_dict(as_dict(listed[0]).get("meta")).get("model"))
    return read


def _blocks_text(record: dict[str, Any]) -> str:
    """The text of a LlamaIndex ``ChatMessage`` or ``ToolOutput`` as JSON: its text ``blocks``."""
    return "".join(b["text"] for b in as_list(record.get("blocks")) if isinstance(b, dict) and isinstance(b.get("text"), str))


def _llamaindex_agent_input(value: Any) -> str | None:
    """The user's latest words in LlamaIndex's ``AgentInput`` event (``{"input": [ChatMessage], "current_agent_name"}``,
    ``agent/workflow/workflow_events.py``), which a workflow agent's first step returns and OpenLLMetry records as
    that step's output: the run's request where no model call's input is traced; None for anything else."""
    said = maybe_json(value)
    if not (isinstance(said, dict) and set(said) == {"input", "current_agent_name"} and isinstance(said["input"], list)):
        return None
    users = [_blocks_text(m) for m in said["input"] if isinstance(m, dict) and m.get("role") == "user"]
    return users[-1] if users and users[-1].strip() else None


def _llamaindex_tool_result(value: Any) -> tuple[str, str | None, bool] | None:
    """(result, call id, failed) of LlamaIndex's ``ToolCallResult`` as OpenLLMetry's LlamaIndex instrumentation
    records a workflow agent's ``call_tool`` step (``{"tool_name", "tool_kwargs", "tool_id", "tool_output":
    ToolOutput}``); None for anything else. The result is what the model is given, the ``ToolOutput``'s text
    (its text ``blocks``; older releases' ``content``) else its ``raw_output``; a tool that raised is caught by
    the agent and returned as a ``ToolOutput`` with ``is_error`` (``agent/workflow/base_agent.py``), no span fails."""
    said = maybe_json(value)
    if not (isinstance(said, dict) and {"tool_name", "tool_kwargs", "tool_output"} <= said.keys()
            and isinstance(said["tool_output"], dict)):
        return None
    output = said["tool_output"]
    text = _blocks_text(output) or text_of(output.get("content")) or text_of(output.get("raw_output"))
    call_id = said.get("tool_id")
    return text, str(call_id) if call_id else None, output.get("is_error") is True


#: Agno's ``FunctionExecutionResult`` (``agno/tools/function.py``) as its ``str()``, pydantic's ``name=repr`` fields,
#: which OpenLLMetry's Agno instrumentation records as a tool's output (``_tool_wrappers.py``: ``str(result)``):
#: the status, the result's repr and the error's (``None`` or a string), then the other fields if any.
_AGNO_RESULT = re.compile(r"status='(success|failure)' result=(.*) error=(None|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")"
                          r"(?= \w+=|$)", re.DOTALL)
#: An object's default repr, ``<module.Class object at 0x...>`` or a generator's ``<generator object NAME at 0x...>``.
_OBJECT_REPR = re.compile(r"<[\w.]+ object (?:\S+ )?at 0x[0-9a-fA-F]+>$")


def _agno_tool_result(value: Any) -> tuple[str | None, None, bool] | None:
    """(result, no call id, failed) of Agno's ``FunctionExecutionResult`` repr (:data:`_AGNO_RESULT`); None for
    anything else. A tool that raised is caught by Agno as ``status='failure'`` with the exception's words as
    ``error`` (what its model is then given), its span OK; a result that is an object's repr (a team's
    delegation returns a generator) says nothing: no result, for the model's next input to give."""
    found = _AGNO_RESULT.match(value) if isinstance(value, str) else None
    if found is None:
        return None
    status, result, error = found.groups()
    if status == "failure":
        return (_repr_text(error) if error != "None" else None), None, True
    if result == "None" or _OBJECT_REPR.match(result):
        return None, None, False
    return _repr_text(result), None, False


def _repr_text(text: str) -> str:
    """A string's Python repr as the string; any other repr as it is."""
    try:
        said = ast.literal_eval(text)
    except Exception:  # literal_eval raises several kinds on non-literals
        return text
    return said if isinstance(said, str) else text


#: The spans OpenLLMetry's Haystack instrumentation opens around ``OpenAIChatGenerator.run`` /
#: ``OpenAIGenerator.run`` (``wrap_openai.py``), and what their completions hold: ``_set_span_completions`` iterates
#: the component's result dict, so each "completion" is one of its keys, never the model's words (the request
#: itself is traced by the OpenAI instrumentation, inside).
_HAYSTACK_OPENAI_SPANS = ("haystack.openai.chat", "haystack.openai.completion")
_HAYSTACK_RESULT_KEYS = ("replies", "meta")


def _haystack_key_completions(name: str, outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``outputs`` without the completions of :data:`_HAYSTACK_OPENAI_SPANS` that are the result dict's keys."""
    if name not in _HAYSTACK_OPENAI_SPANS:
        return outputs
    return [m for m in outputs if m.get("calls") or (m.get("text") or "").strip() not in _HAYSTACK_RESULT_KEYS]


#: A ReAct agent's final turn as LlamaIndex's ``ReActOutputParser`` reads it (``agent/react/output_parser.py``,
#: ``extract_final_response``): ``Thought: <thought>`` then ``Answer: <answer>`` on a line of its own.
_REACT_ANSWER = re.compile(r"\s*Thought:(.*?)^Answer:(.*)", re.DOTALL | re.MULTILINE)


def _react_answer(message: dict[str, Any]) -> dict[str, Any]:
    """A model's answer in ReAct's ``Thought: ... Answer: ...`` form as the answer alone, the thought its reasoning
    (as the agent itself splits it); a turn that names an ``Action:`` before its answer is a tool step's, kept."""
    found = _REACT_ANSWER.match(message.get("text") or "")
    if message.get("role") != "assistant" or message.get("calls") or found is None \
            or re.search(r"^Action:", found.group(1), re.MULTILINE) or not found.group(2).strip():
        return message
    return {**message, "text": found.group(2).strip(), "reasoning": message.get("reasoning") or found.group(1).strip()}


def _first(attrs: dict[str, Any], *keys: str) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) is not None), None)


def _call_envelope(arguments: Any) -> Any:
    """The keyword arguments of smolagents' tool-call record (``{"args": [], "sanitize_inputs_outputs": ...,
    "kwargs": {...}}``, what OpenInference's smolagents instrumentor puts in a tool's ``input.value``) or of
    BeeAI's (``{"input": {...}, "options": ...}``)."""
    value = maybe_json(arguments)
    if isinstance(value, dict) and isinstance(value.get("kwargs"), dict) and not value.get("args") \
            and set(value) <= {"args", "kwargs", "sanitize_inputs_outputs"}:
        return value["kwargs"]
    if isinstance(value, dict) and isinstance(value.get("input"), dict) and set(value) == {"input", "options"}:
        return value["input"]
    return arguments


def node_from_span(span: dict[str, Any], resource: dict[str, Any], seq: int) -> tuple[str, Node, str | None]:
    """(trace id, node, conversation id) of one span."""
    trace, span_id, parent = span_ids(span)
    recorded = attributes(span.get("attributes"))
    hidden = {k for k, v in recorded.items() if v == OI_REDACTED}
    mlflow = is_mlflow(recorded)  # told before its keys are read as the GenAI keys they stand for
    attrs = _as_conventions(str(span.get("name") or ""), {k: v for k, v in recorded.items() if k not in hidden})
    events = span_events(span)
    failed, message = span_status(span)
    if attrs.get("langfuse.observation.level") == "ERROR":  # the Langfuse SDK's own error mark
        failed, message = True, message or attrs.get("langfuse.observation.status_message")
    message = _status_text(message)
    name = str(span.get("name") or attrs.get("gen_ai.operation.name") or attrs.get("openinference.span.kind")
               or span.get("span_kind") or "span")
    if "{" in name and isinstance(attrs.get("logfire.msg"), str) and attrs["logfire.msg"].strip():
        name = attrs["logfire.msg"].strip()  # logfire names a span by its message template; the message is filled in
    role = _role(attrs, span, name)
    start = span_time(span.get("startTimeUnixNano") or span.get("start_time") or span.get("startTime"))
    end = span_time(span.get("endTimeUnixNano") or span.get("end_time") or span.get("endTime"))

    inputs = normalise_messages(attrs["gen_ai.input.messages"]) if "gen_ai.input.messages" in attrs else []
    outputs = normalise_messages(attrs["gen_ai.output.messages"]) if "gen_ai.output.messages" in attrs else []
    inputs = inputs or _legacy_messages(attrs, events, "prompt") or _oi_messages(attrs, "llm.input_messages.")
    outputs = outputs or _legacy_messages(attrs, events, "completion") or _oi_messages(attrs, "llm.output_messages.")
    if role == "llm" and not outputs and "gen_ai.output" in attrs:  # any-agent
        outputs = _any_agent_output(attrs["gen_ai.output"])
    if role == "llm" and not outputs and (said := response_output(attrs.get("output.value"))) is not None:
        outputs = said  # the Agents SDK's Responses object for a streamed chat call, as OpenInference copies it
    if role == "llm" and not any(m.get("calls") for m in outputs) and (called := _legacy_function_calls(attrs)):
        # LiteLLM writes the new-style output without its tool calls, which stay in the older flat keys
        last = outputs[-1] if outputs else {"role": "assistant", "text": ""}
        outputs = [*outputs[:-1], {**last, "calls": called}]
    if role == "llm" and outputs and not any(m.get("text") or m.get("reasoning") for m in outputs):
        said = maybe_json(attrs.get("output.value"))  # autogen's CreateResult keeps the text sent with calls apart
        if isinstance(said, dict) and isinstance(said.get("thought"), str) and said["thought"].strip():
            outputs = [{**outputs[0], "reasoning": said["thought"].strip()}, *outputs[1:]]
    if role == "llm":
        outputs = [_react_answer(m) for m in _haystack_key_completions(name, outputs)]
    if role == "chain" and not outputs and (turns := haystack_agent_turns(attrs.get("output.value"))):
        role, outputs = "agent", turns  # its model's turns are on its span alone (``_spans.assembly._agent_turns``)
    if not inputs and not outputs and ("gcp.vertex.agent.llm_request" in attrs or "gcp.vertex.agent.llm_response" in attrs):
        inputs, outputs = _adk_messages(attrs)
    if not inputs and not outputs and (runner := _adk_runner_messages(attrs)) is not None:
        inputs, outputs = runner
        role = "agent" if role == "other" else role  # the agent app's run, the trace's root
    if not inputs and not outputs:
        ev_in, ev_out = span_event_messages(events)
        if not ev_in and not ev_out:
            ev_in, ev_out = _logfire_events(attrs)
        if not ev_in and not ev_out:
            ev_in, ev_out = _logfire_request(attrs)
        inputs, outputs = ev_in, ev_out
    untyped = role == "other" and _untyped_messages(attrs, span, inputs, outputs)
    role = "llm" if untyped else role  # read as a model call, which it stays if a leaf of its run
    if "mastra.span.type" in attrs and role in ("llm", "agent") and (not (inputs or outputs) or role == "llm"):
        m_in, m_out = _mastra_messages(attrs, role)
        inputs, outputs = m_in or inputs, m_out or outputs
    if role == "llm" and not (inputs or outputs) and "langfuse.observation.type" in attrs:
        inputs, outputs = _langfuse_messages(attrs)
    if role == "llm" and mlflow:  # MLflow keeps a call's request and reply whole, as the API has them
        inputs = inputs or message_dicts(attrs.get("input.value"))
        outputs = outputs or output_dicts(attrs.get("output.value"))
    resumed = False
    if not inputs and role != "llm" and "pydantic_ai.all_messages" in attrs:  # (instrumentation v2: "agent run")
        own, resumed = _new_messages(attrs)
        inputs = normalise_messages(own)
    if role == "llm" and inputs and (failed_ids := failed_tool_results(attrs.get("input.value"))):
        inputs = [dict(m, failed=True) if m["role"] == "tool" and m.get("call_id") in failed_ids else m for m in inputs]
    if "gen_ai.system_instructions" in attrs and not any(m["role"] == "system" for m in inputs):
        inputs = [*system_message(attrs["gen_ai.system_instructions"]), *inputs]

    tool = _first(attrs, "gen_ai.tool.name", "tool.name")
    if role == "tool" and tool == _ADK_MERGED_TOOLS:
        role, tool = "other", None
    handoff = {k: attrs[f"gen_ai.handoff.{k}"] for k in ("from_agent", "to_agent") if attrs.get(f"gen_ai.handoff.{k}")}
    if not handoff and not tool and (named := _HANDOFF_SPAN.match(name)):  # OpenInference's Agents SDK spans
        handoff = {k: v for k, v in (("from_agent", attrs.get("input.value")), ("to_agent", named.group(1))) if v}
    if handoff and not tool:  # opentelemetry-instrumentation-openai-agents: the handoff tool the model called
        tool = re.sub(r"[^a-zA-Z0-9_]", "_", f"transfer_to_{handoff.get('to_agent', '')}".replace(" ", "_")).lower()
    if role == "tool" and not tool and name == "error" and isinstance(maybe_json(attrs.get("input.value")), dict):
        role = "other"  # BeeAI records a failing tool's error as a TOOL span of its own, inside the tool's
    if role == "tool" and not tool:
        tool = attrs.get("traceloop.entity.name") or name.removeprefix("execute_tool").strip() or None
        tool = tool.removesuffix(".__call__") if tool else None  # DSPy's tool spans are named after the method
    arguments = _first(attrs, "gen_ai.tool.call.arguments", "gen_ai.tool.args", "tool_arguments",
                       "gcp.vertex.agent.tool_call_args", "tool.arguments")
    if arguments is None:
        arguments = _declared_call(attrs.get("gen_ai.tool.input"))
    if arguments is None and handoff:
        arguments = handoff
    if arguments is None and role in ("tool", "retriever") and "input.value" not in hidden:  # (else the schema)
        arguments = _first(attrs, "input.value", "gen_ai.retrieval.query.text", "traceloop.entity.input",
                           "tool.parameters", "langfuse.observation.input")
        arguments = _call_envelope(arguments)
    arguments, _ = callback_envelope(arguments, "input", "traceloop.entity.input" in attrs)
    result = _first(attrs, "gen_ai.tool.call.result", "gen_ai.tool.output")
    if result is None and role == "tool":
        result = _first(attrs, "gen_ai.output", "tool_response", "gcp.vertex.agent.tool_response", "traceloop.entity.output")
    if result is None:
        result = _first(attrs, "output.value", "langfuse.observation.output")
    result, _ = callback_envelope(result, "output", "traceloop.entity.output" in attrs)
    said = tool_message(result) if role == "tool" else None  # LangChain's ToolMessage, whole
    if said is None and role == "tool":  # LlamaIndex's ToolCallResult, Agno's FunctionExecutionResult (OpenLLMetry)
        said = _llamaindex_tool_result(result) or _agno_tool_result(result)
    result, call_of_message, failed_tool = said if said is not None else (result, None, False)
    failed_tool = failed_tool or (role == "tool" and str(attrs.get("gen_ai.tool.status") or "").lower() == "error")
    if role == "retriever":  # the documents' contents, where recorded, over the output's serialisation (reprs)
        docs = indexed(attrs, "retrieval.documents.")
        result = "\n".join(text_of(d.get("document.content")) for d in docs if d.get("document.content")) or result
        if result is None:  # the GenAI conventions' list of the documents found (ids and scores)
            result = attrs.get("gen_ai.retrieval.documents")
    result_said = result_text(result) if result is not None else None
    model = _first(attrs, "gen_ai.response.model", "gen_ai.request.model", "llm.model_name",
                   "langfuse.observation.model.name")
    conversation = next((str(attrs[k]) for k in _CONVERSATION_KEYS if attrs.get(k)), None)
    input_text = _first(attrs, "input.value", "traceloop.entity.input", "langfuse.observation.input") \
        if role != "tool" else attrs.get("input.value")
    if input_text is None and role == "chain":
        input_text = _llamaindex_agent_input(attrs.get("traceloop.entity.output"))
    output = _first(attrs, "output.value", "langfuse.observation.output")
    info = {
        "agent_name": next((attrs[k] for k in _AGENT_NAME_KEYS if attrs.get(k)), None),
        "agent_id": attrs.get("gen_ai.agent.id"),
        "conversation_id": conversation,
        "service": resource.get("service.name"),
        "provider": attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or attrs.get("llm.provider"),
        "user_id": attrs.get("user.id"),
        "finish_reasons": attrs.get("gen_ai.response.finish_reasons") if role == "llm" else None,
        "convention": "monocle" if is_monocle(attrs) else None,  # (see OtlpFormat: the reason such a trace is no run)
    } if role in ("agent", "chain") or parent is None else {
        "finish_reasons": attrs.get("gen_ai.response.finish_reasons")} if role == "llm" else {}
    node = Node(
        id=span_id, parent=parent, role=role, name=name, start=start, end=end, seq=seq,
        tool=str(tool) if tool else None,
        call_id=_first(attrs, "gen_ai.tool.call.id", "tool.id", "tool_call.id") or call_of_message,
        arguments=maybe_json(arguments),
        result=result_said,
        error=span_error(attrs, events, failed, message, output),
        input_messages=inputs, output_messages=outputs,
        input_text=text_of(input_text) if input_text is not None else None,
        output_text=text_of(output) if output is not None else None,
        model=str(model) if model else None,
        evaluations=_evaluations(attrs, events),
        info={k: v for k, v in info.items() if v},
    )
    if offered := span_offered(attrs, events, (span.get("tags_cut") or {}).get("keys", ())):
        node.info[OFFERED] = offered
    if role == "other" and (embeds := _embeds(attrs, span)) is not None:
        node.info[EMBEDS] = embeds
    if resumed:
        node.info[RESUMED] = True
    if untyped:
        node.info[UNTYPED_MESSAGES] = True
    if role == "evaluator":  # an evaluator span: its output is the verdict
        verdict = maybe_json(node.output_text)
        if isinstance(verdict, dict):
            said = evaluation(name, verdict.get("label"), verdict.get("score"), verdict.get("explanation"))
        else:
            said = evaluation(name, verdict.strip(), None) if isinstance(verdict, str) and verdict.strip() else None
        node.evaluations += [said] if said else []
    if _autogen_runtime(name, attrs):  # a team run's traces, task and turns (see ``adapter._team_turns``)
        if causes := span_links(span):
            node.info["caused_by"] = causes
        if (task := _autogen_team_task(attrs)) is not None:
            node.role, node.input_text = "chain", task
        if (reply := _autogen_reply(attrs)) is not None:
            node.info["agent_reply"] = reply
    tool_io(node)  # Strands records a tool's input and result as events on its span
    if failed_tool and not node.error:  # it returned its failure (Strands' gen_ai.tool.status) rather than raising
        node.error = returned_error(node)
    if node.role == "tool" and node.error in (None, attrs.get("error.type")):  # so did a Google ADK tool (its words
        node.error = adk_tool_error(attrs, node.result) or node.error  # over the bare type TOOL_ERROR ADK 2.x sets)
    if is_harbor_export(resource):  # spans made from a trial's ATIF trajectory: its text says what they do not
        read_as_atif(node)
    return trace, clean_ids(node), conversation
