"""``vercel-ai``: Vercel AI SDK telemetry spans (``ai.*`` attributes), as OTLP/JSON or span JSON.

The AI SDK (``experimental_telemetry: {isEnabled: true}`` in v3-v6,
``LegacyOpenTelemetry`` from ``@ai-sdk/otel`` in v7) records one span tree per
call (v7 places each ``ai.toolCall`` under the model-call span that asked
for it, and a sub-agent's call, one made inside a tool's ``execute``, under
that tool's span: its tools are steps of the run, as every span format's).
Records: OTLP/JSON requests, or spans as the OpenTelemetry JS SDK holds them
(``name``, ``spanContext.traceId`` / ``spanId``, ``parentSpanId`` or
``parentSpanContext.spanId``, ``startTime`` / ``endTime`` as ``[s, ns]``,
``status.code``, flat ``attributes``, ``events``), one per line, in a JSON
array, or pretty-printed (see ``_otlp``). Spans are grouped into one
trajectory per trace across every file of the input; spans that are not the
SDK's (an HTTP handler, the app's own root span) keep the tree connected and
are read as generic OpenTelemetry spans.

Mapping (``ai.operationId``, else the span name)
- ``ai.generateText`` / ``ai.streamText`` / ``ai.generateObject`` /
  ``ai.streamObject``: the call (agent). Its ``ai.prompt`` (JSON: ``system``,
  ``prompt`` or ``messages``) gives the task: the prompt text, else the latest
  user message (a chat UI sends the whole conversation with every call; the
  run answers its last turn); ``ai.telemetry.functionId``,
  ``ai.telemetry.metadata.*``, the provider and ``ai.response.finishReason``
  go to metadata (the outermost call's, under an app's own root span too).
- ``ai.generateText.doGenerate`` / ``ai.streamText.doStream`` (and the object
  variants): one model call. Input = ``ai.prompt.messages`` (AI SDK messages:
  string or ``text`` / ``reasoning`` / ``tool-call`` / ``tool-result`` parts);
  output = ``ai.response.text`` (``ai.result.text`` before v4),
  ``ai.response.reasoning`` (the thought), ``ai.response.toolCalls`` /
  ``ai.result.toolCalls`` (``toolCallId``, ``toolName``, ``input`` or ``args``),
  ``ai.response.object`` / ``ai.result.object``. Text that requested no tool
  is a ``respond`` step, and so is text beside calls the provider ran all of
  (a provider tool: ``{"type": "provider"}`` in ``ai.prompt.tools``, the call
  marked ``providerExecuted``; OpenAI's or Anthropic's ``web_search``): the
  SDK runs none of them and stops, its ``result.text`` that text; else it is
  the calls' thought. Model = ``ai.response.model``, else ``ai.model.id``.
  The tools in ``ai.prompt.tools``, after those the run called, are its
  ``tools_available``.
- ``ai.toolCall``: a step: action = ``ai.toolCall.name``, arguments =
  ``ai.toolCall.args`` (``ai.toolCall.input``; JSON-decoded), observation =
  ``ai.toolCall.result`` (``ai.toolCall.output``), error = the ``exception``
  event or the ERROR status message (set when the tool threw), or an MCP
  tool's result flagged ``isError`` (an MCP client does not throw). A tool call
  a model requested whose execution was not traced is still a step, its result
  taken from the next call's ``tool-result`` message.
  AI SDK 5's ``streamText`` runs its tools in the stream's callbacks, so where
  the context manager does not carry the call's context there (none, or one
  that does not follow async work; with Node's ``AsyncLocalStorage`` the
  spans stay in the run's trace) each ``ai.toolCall`` span is the root of a
  trace of its own: such a span joins the run whose model call requested it
  (same ``toolCallId`` and tool name, ``_detached_key``) as that call's tool
  step, with its own result, error and times (the only record of them when
  the run stops after that call, v5's default ``stepCountIs(1)``). Those ids
  repeat across runs and within one (Kimi K2's ``functions.runSql:1``,
  OpenRouter's Gemini ``tool_0_runSql``), so the spool pairs them by time: the
  span joins a run whose time span holds it, after the model call that asked
  (of runs going on at once, the one that asked for its arguments; see
  ``spool._placed``). One that fits no run of the input holds no task and is
  passed over, not read as a run "ai.toolCall (no input recorded)".
- ``ai.embed`` / ``ai.embedMany`` / ``ai.rerank`` (and their ``do*`` spans):
  not steps; a trace made only of them (a RAG app exports one per query: each
  SDK call its own trace) holds no agent run and nothing wrong: it is passed
  over as "not an agent run" (``PassedOver``: a line at info level, counted
  in the ingest's summary), by the rule every span adapter shares
  (``_spans.no_agent_work``), not rejected; so is a trace of no AI SDK call,
  model call or tool at all.
- a call span with no model-call span below it (exported alone) stands for
  its own model call (its ``ai.response.*`` is the answer).
- a trace whose spans record no input (``recordInputs: false``, the SDK's
  privacy switch: no ``ai.prompt``, ``ai.prompt.messages``) is still a run,
  its tools, errors and answer recorded: its task is the outermost call as the
  SDK names it (operation and ``functionId``) with "(no input recorded)",
  ``metadata.task_source = "span name"`` (as OTel GenAI's content capture off).
- a span read twice (a batch sent again, two dumps of one run in one input) counts once (``_once``).
- trajectory_id = ``vercel:<traceId>``; created_at = the earliest span start;
  outcome: an ERROR status on the root span (an answer that is not the
  object asked for, ``AI_NoObjectGeneratedError`` of ``generateObject`` or
  ``Output.object``, is also that answer's ``respond`` step's error), or on
  the last model call with nothing answered after it (``streamText`` leaves its root unmarked when the
  provider fails) -> failure (infra_error for timeouts, rate limits, 5xx,
  connection errors, retries spent, but not for a tool's exception that
  aborted the run, AI SDK 4's ``AI_ToolExecutionError``, whatever it says),
  else ``unknown`` (the SDK records no verdict).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL
from trajsearch.model import Trajectory

from ._common import Context, PassedOver, RecordError
from ._otlp import (
    attributes,
    clean_ids,
    is_span_record,
    node_from_span,
    raw_items,
    run_named_by_root,
    span_error,
    span_events,
    span_ids,
    span_offered,
    span_status,
    span_time,
    with_current_instruction,
)
from ._spans import (ANSWER, EMBEDS, OFFERED, REFUSED, STAND_IN, Message, Node, SpanFormat, maybe_json,
                     no_agent_work, span_trajectory, start_order, text_of, untyped_model_calls)
from ._vendor import SdkToolOutput, sdk_output

NAME = "vercel-ai"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"ai\.operationId"|"ai\.(?:generateText|streamText|generateObject|streamObject)(?:\.do\w+)?"')
GROUPED = True
ID_PREFIX = "vercel"

_CALLS = ("ai.generateText", "ai.streamText", "ai.generateObject", "ai.streamObject")
_MODEL_CALLS = tuple(f"{c}.{d}" for c in _CALLS for d in ("doGenerate", "doStream"))
_EMBEDS = ("ai.embed", "ai.embedMany", "ai.embed.doEmbed", "ai.embedMany.doEmbed", "ai.rerank", "ai.rerank.doRerank")
_KNOWN = (*_CALLS, *_MODEL_CALLS, "ai.toolCall", *_EMBEDS)
#: The error a call throws when the model's answer is not the object asked for (``NoObjectGeneratedError``, name
#: ``AI_NoObjectGeneratedError``: ``generateObject``'s ``parseAndValidateObjectResult``, ``Output.object``'s
#: ``parseCompleteOutput``): "No object generated: could not parse the response." / "... did not match schema.",
#: carrying that answer's ``text``.
_NO_OBJECT = re.compile(r"\b(?:AI_)?NoObjectGeneratedError\b|^No object generated\b")


def _operation(span: dict[str, Any], attrs: dict[str, Any]) -> str | None:
    op = attrs.get("ai.operationId")
    if isinstance(op, str) and op.startswith("ai."):
        return op
    name = str(span.get("name") or "")
    return name if name in _KNOWN else None


def matches(record: Any) -> bool:
    if not is_span_record(record):
        return False
    for n, (kind, _resource, item) in enumerate(raw_items(record)):
        if n >= 500:  # a big OTLP request: its first spans decide
            break
        if kind != "span":
            continue
        attrs = attributes(item.get("attributes"))
        if "openinference.span.kind" in attrs:  # converted by openinference-vercel: OpenInference's
            return False
        if _operation(item, attrs) and any(k.startswith("ai.") for k in attrs):
            return True
    return False


# -- messages ----------------------------------------------------------------------------


def _part_text(part: dict[str, Any]) -> str:
    return text_of(part.get("text", part.get("content")))


def _tool_output(value: Any) -> SdkToolOutput:
    """A tool result as the SDK stores it: v5+ ``{"type": "text"|"json"|"error-text"|..., "value"}``
    (``sdk_tool_output``), else raw (v4's ``result``)."""
    said = sdk_output(value)
    return said if said is not None else SdkToolOutput(text_of(value))


def sdk_messages(raw: Any) -> list[dict[str, Any]]:
    """AI SDK messages (``ai.prompt.messages``, or ``messages`` of ``ai.prompt``) -> message dicts."""
    raw = maybe_json(raw)
    if isinstance(raw, dict):
        raw = raw.get("messages") if isinstance(raw.get("messages"), list) else [raw]
    out: list[dict[str, Any]] = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, str):
            out.append(asdict(Message("user", item)))
            continue
        if not isinstance(item, dict):
            continue
        role = str(item.get("role") or "user")
        content = item.get("content")
        if isinstance(content, str):
            out.append(asdict(Message(role, content)))
            continue
        texts, reasoning, calls = [], [], []
        for part in content if isinstance(content, list) else []:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(_part_text(part))
            elif kind in ("reasoning", "redacted-reasoning"):
                reasoning.append(_part_text(part))
            elif kind == "tool-call":
                calls.append({"id": part.get("toolCallId"), "name": part.get("toolName"),
                              "arguments": maybe_json(part.get("input", part.get("args")))})
            elif kind == "tool-result":
                output = part.get("output", part.get("result"))
                text, failed = _tool_output(output).as_result()  # a denial (AI SDK 6 tool approval): no tool ran
                out.append(asdict(Message("tool", text, call_id=part.get("toolCallId"), failed=failed)))
        if texts or reasoning or calls:
            out.append(asdict(Message(role, "\n".join(t for t in texts if t), "\n".join(r for r in reasoning if r),
                                      calls)))
    return out


def _prompt_messages(raw: Any) -> list[dict[str, Any]]:
    """``ai.prompt`` of a call: ``{"system", "prompt"}`` or ``{"system", "messages"}``."""
    prompt = maybe_json(raw)
    if isinstance(prompt, str):
        return [asdict(Message("user", prompt))] if prompt.strip() else []
    if not isinstance(prompt, dict):
        return []
    out = [asdict(Message("system", text_of(prompt["system"])))] if prompt.get("system") else []
    if isinstance(prompt.get("prompt"), str):
        out.append(asdict(Message("user", prompt["prompt"])))
    elif isinstance(prompt.get("prompt"), list):
        out.extend(sdk_messages(prompt["prompt"]))
    if isinstance(prompt.get("messages"), list):
        out.extend(sdk_messages(prompt["messages"]))
    return out


def _tool_calls(raw: Any) -> list[dict[str, Any]]:
    calls = maybe_json(raw)
    out = []
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict) and call.get("toolName"):
            out.append({"id": call.get("toolCallId"), "name": call["toolName"],
                        "arguments": maybe_json(call.get("input", call.get("args")))})
    return out


#: How ``ai.prompt.tools`` declares a tool of the provider's: ``provider`` (AI SDK 6), ``provider-defined`` (v4-v5).
_PROVIDER_TOOL_TYPES = ("provider", "provider-defined")


def _provider_tools(raw: Any) -> set[str]:
    """The names of the provider tools a model call was given (``ai.prompt.tools``: one JSON object a tool)."""
    tools = maybe_json(raw)
    declared = (maybe_json(t) for t in (tools if isinstance(tools, list) else []))
    return {str(t["name"]) for t in declared if isinstance(t, dict) and t.get("type") in _PROVIDER_TOOL_TYPES
            and t.get("name")}


def _all_run_by_provider(raw_calls: Any, provider_tools: set[str], finish: Any) -> bool:
    """Whether the provider ran every call of a response (OpenAI's ``web_search``, Anthropic's ``web_search``...):
    marked ``providerExecuted`` (``streamText`` records it), or a provider tool where the model did not stop for
    tools (``generateText`` records no mark; a provider tool the app executes, Anthropic's ``bash``, stops so)."""
    raw = maybe_json(raw_calls)
    calls = [c for c in raw if isinstance(c, dict) and c.get("toolName")] if isinstance(raw, list) else []
    return bool(calls) and all(c.get("providerExecuted") is True
                               or c["toolName"] in provider_tools and finish != "tool-calls" for c in calls)


def _output(attrs: dict[str, Any], provider_tools: set[str] | None = None) -> list[dict[str, Any]]:
    """A call's response as messages. Where the provider ran every call (:func:`_all_run_by_provider`), the SDK runs
    nothing and stops: the text the model wrote after the provider's results is the answer (``result.text``), not the
    calls' reason, so it follows them as a message of its own."""
    text = attrs.get("ai.response.text", attrs.get("ai.result.text"))
    obj = attrs.get("ai.response.object", attrs.get("ai.result.object"))
    if not text and obj is not None:
        text = text_of(obj)
    raw_calls = attrs.get("ai.response.toolCalls", attrs.get("ai.result.toolCalls"))
    calls = _tool_calls(raw_calls)
    reasoning = text_of(attrs.get("ai.response.reasoning")) if attrs.get("ai.response.reasoning") else ""
    if not (text or calls or reasoning):
        return []
    said = text_of(text) if text else ""
    finish = attrs.get("ai.response.finishReason", attrs.get("ai.finishReason"))
    if said and _all_run_by_provider(raw_calls, provider_tools or set(), finish):
        return [asdict(Message("assistant", "", reasoning, calls)), asdict(Message("assistant", said))]
    return [asdict(Message("assistant", said, reasoning, calls))]


# -- spans -> nodes ----------------------------------------------------------------------


def _node(span: dict[str, Any], resource: dict[str, Any], seq: int) -> tuple[str, Node, str | None]:
    attrs = attributes(span.get("attributes"))
    op = _operation(span, attrs)
    if op is None:
        return node_from_span(span, resource, seq)
    trace, span_id, parent = span_ids(span)
    events = span_events(span)
    failed, message = span_status(span)
    node = Node(
        id=span_id, parent=parent, role="other", name=op, seq=seq,
        start=span_time(span.get("startTime") or span.get("startTimeUnixNano") or span.get("start_time")),
        end=span_time(span.get("endTime") or span.get("endTimeUnixNano") or span.get("end_time")),
        error=span_error(attrs, events, failed, message),
    )
    model = attrs.get("ai.response.model") or attrs.get("gen_ai.response.model") or attrs.get("ai.model.id")
    if op in _CALLS:
        node.role = "agent"
        node.input_messages = _prompt_messages(attrs.get("ai.prompt"))
        node.output_messages = _output(attrs)
        node.model = str(model) if model else None
        metadata = {k.removeprefix("ai.telemetry.metadata."): v for k, v in attrs.items()
                    if k.startswith("ai.telemetry.metadata.")}
        node.info = {k: v for k, v in {
            "function_id": attrs.get("ai.telemetry.functionId"),
            "provider": attrs.get("ai.model.provider"),
            "finish_reason": attrs.get("ai.response.finishReason", attrs.get("ai.finishReason")),
            "service": resource.get("service.name"),
            "telemetry_metadata": metadata,
        }.items() if v not in (None, "", {})}
        if node.error and _NO_OBJECT.search(node.error):  # the answer failed the schema: that answer's error
            node.info[REFUSED] = ANSWER
    elif op in _MODEL_CALLS:
        node.role = "llm"
        node.input_messages = sdk_messages(attrs.get("ai.prompt.messages"))
        node.output_messages = _output(attrs, _provider_tools(attrs.get("ai.prompt.tools")))
        node.model = str(model) if model else None
        if reason := attrs.get("ai.response.finishReason", attrs.get("ai.finishReason")):
            node.info["finish_reasons"] = [reason]  # ``tool-calls`` as the last: the SDK stopped, calls unrun
        if offered := span_offered(attrs, events):  # ``ai.prompt.tools``: the run's tools_available
            node.info[OFFERED] = offered
    elif op == "ai.toolCall":
        node.role = "tool"
        node.tool = str(attrs.get("ai.toolCall.name") or UNNAMED_TOOL)
        node.call_id = attrs.get("ai.toolCall.id")
        node.arguments = maybe_json(attrs.get("ai.toolCall.args", attrs.get("ai.toolCall.input")))
        result = attrs.get("ai.toolCall.result", attrs.get("ai.toolCall.output"))
        node.result = text_of(maybe_json(result)) if result is not None else None
    elif op in _EMBEDS:
        node.info = {EMBEDS: "rerank" if op.startswith("ai.rerank") else "embedding"}
    return trace, clean_ids(node), None


#: The group of an ``ai.toolCall`` span traced apart from its run, and its stand-ins' id (:func:`_detached_key`).
_DETACHED = "vercel-tool-call:"


def _detached_key(call_id: Any, tool: Any) -> str | None:
    """The key that ties an AI SDK 5 ``ai.toolCall`` traced apart (a trace of its own) to the model call that asked
    for it: its call id and tool name. Not its arguments: the span records them as the tool's schema parsed them
    (defaults filled in, values coerced), the model call as the model wrote them."""
    if not call_id or not tool:
        return None
    digest = hashlib.blake2b(f"{call_id}\0{tool}".encode(), digest_size=8).hexdigest()
    return f"{_DETACHED}{digest}"


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    """(trace id, node, conversation id) for every span of one record; ``ctx`` is unused.

    A model call also yields, in its trace, a stand-in (``STAND_IN``) for each tool call it requested: its id that
    call's :func:`_detached_key`, its parent and times the model call's, its arguments the call's. An
    ``ai.toolCall`` span with no parent (AI SDK 5's ``streamText``: its own trace) is filed under that key, so the
    spool puts it in a stand-in's place in the run whose time span holds it (the key alone repeats across runs)."""
    for n, (kind, resource, item) in enumerate(raw_items(record)):
        if kind != "span":
            continue
        trace, node, conversation = _node(item, resource, seq + n)
        if node.role == "tool" and node.parent is None and node.name == "ai.toolCall":
            if key := _detached_key(node.call_id, node.tool):
                yield key, node, conversation
                continue
        yield trace, node, conversation
        if node.role == "llm":
            for message in node.output_messages:
                for call in message.get("calls") or ():
                    if key := _detached_key(call.get("id"), call.get("name")):
                        yield trace, Node(id=key, parent=node.parent, role="other", name="ai.toolCall",
                                          start=node.start, end=node.end, arguments=call.get("arguments"),
                                          seq=node.seq, info={STAND_IN: True}), conversation


def _call_label(group: list[Node]) -> str | None:
    """The outermost SDK call as the SDK names it in ``operation.name``: operation and ``functionId``."""
    calls = [n for n in group if n.name in _CALLS]
    if not calls:
        return None
    outer = min(calls, key=start_order)
    return " ".join(str(p) for p in (outer.name, outer.info.get("function_id")) if p)


def _once(group: list[Node]) -> list[Node]:
    """``group`` without the copies of a span read twice (an exporter's batch sent again, two dumps of one run in
    one input): each copy's answer was a step of its own. Only a copy the same in all but its read order: spans
    that share an id but differ are kept."""
    seen: set[str] = set()
    kept: list[Node] = []
    for node in group:
        if (same := json.dumps({**asdict(node), "seq": None}, default=str, sort_keys=True)) not in seen:
            seen.add(same)
            kept.append(node)
    return kept


class _Format(SpanFormat):
    def assemble_trajectory(self, key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
        # the spool put each tool call traced apart in its stand-in's place, under the call that requested it (where
        # AI SDK 6 traces it); a stand-in left is a call whose span is not in the input (the model call's request
        # and the next prompt's result still make it a step)
        group = [n for n in group if not n.info.get(STAND_IN)]
        group = untyped_model_calls(_once(group))
        if key.startswith(_DETACHED) and all(n.role == "tool" and n.parent is None for n in group):
            names = ", ".join(sorted({n.tool or n.name for n in group}))
            raise PassedOver("AI SDK 5 tool call traced apart from its run",
                             f"not an agent run: AI SDK 5's streamText traced the call of {names} apart from the run "
                             "that requested it, and no run in this input holds it (at its time)")
        if (why := no_agent_work(group)) is not None:
            raise PassedOver(why, f"not an agent run: {why}")
        if not any(n.role in ("agent", "llm", "tool") for n in group):
            names = ", ".join(sorted({n.name for n in group}))
            raise PassedOver("no AI SDK call", f"not an agent run: it holds only {names} spans")
        calls = [n for n in group if n.role == "agent" and n.name in _CALLS]
        if any(n.role == "llm" for n in group):
            for n in calls:  # the model id of a run is the one its model calls answered with
                n.model = None
        else:  # a call exported without its model-call spans stands for its own model call
            for n in calls:
                n.role = "llm"
        try:
            run = with_current_instruction(span_trajectory(self.name, self.prefix, key, group, ctx, by=by), group)
        except RecordError as exc:  # ``recordInputs: false``: the prompts were kept out, the run was still recorded
            if not str(exc).startswith("no task"):
                raise
            run = run_named_by_root(self, key, group, ctx, by, "no input recorded", _call_label(group))
        if calls:  # under an app's own root span (a route handler): the outermost call's telemetry still applies
            outer = min(calls, key=start_order)
            run = run.model_copy(update={"metadata": {
                **run.metadata, **{k: v for k, v in outer.info.items() if k not in run.metadata}}})
        return run


_FORMAT = _Format(NAME, ID_PREFIX)
trajectory_id = _FORMAT.trajectory_id
assemble_trajectory = _FORMAT.assemble_trajectory
