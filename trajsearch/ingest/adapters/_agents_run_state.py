"""An OpenAI Agents SDK ``RunState.to_json()`` document as the span nodes of one run (read by ``openai_agents``).

``result.to_state().to_json()`` (``to_string()`` is its JSON) is what an app saves to resume a run later: the usual
reason is a tool with ``needs_approval`` that paused the run for a person (human in the loop), but any finished run
can be saved so. It holds no spans and no times, but the run itself, in the shape every schema since 1.0 keeps
(``openai-agents-python`` ``src/agents/run_state.py``): ``$schemaVersion``, ``original_input`` (the user's text or
a Responses input list), ``current_agent: {name}``, ``generated_items[]`` (``{type: message_output_item |
tool_call_item | tool_call_output_item | handoff_call_item | handoff_output_item | reasoning_item |
tool_approval_item ..., raw_item: <Responses API item>, agent: {name}}``, in run order; schema 1.21's
``session_items``, read where saved, are the same and the items a handoff's input filter took out of them) and
``current_step`` (``{type: "next_step_interruption", data: {interruptions: [tool_approval_item ...]}}`` while
approvals wait, ``next_step_run_again`` between turns, null otherwise). The JS SDK's ``state.toString()`` is the
same state in camelCase with its own protocol items (:func:`_python_names`), and keeps its final step
(``next_step_final_output``) and, in ``modelResponses[].providerData``, the response with its model;
``JSON.stringify(result)`` of a JS run result wraps it as ``{"state": ...}``.

Those items become the nodes a trace of the same run would give (:mod:`openai_agents` assembles both alike): one
agent node per stretch of items an agent produced, one model call per run of consecutive model output items (the
first one given ``original_input``, so the task is the user's request as for a trace: :func:`_asked`), one tool
node per answered function call (paired by id with its oldest unanswered call: ids may repeat), one handoff node per
handoff, one tool node per call of a tool OpenAI ran (a hosted tool's item holds its result) and per tool search
(``tool_search_call_item``, answered by a ``tool_search_output_item``: :func:`_as_call`), in its place. A call
waiting for approval has no answer: its step has no result and no error (paused, not failed); a call a person
rejected (its id in the state's approval records, or answered with the SDKs' default rejection message or, a tool
rejected for good, the sticky one: :func:`_rejected`) ran nothing: its step is denied, the message the reason; a
call a tool input guardrail rejected (its message given to the model: :func:`_blocked`) is not run either. The SDK's
default tool error text given back to the model ("An error occurred while running the tool...") is that call's
error. The document records no verdict but its guardrails' (``input_guardrail_results``,
``output_guardrail_results``): a state saved after one tripped (a streamed run's ``result.to_state()`` once the app
caught the tripwire; an input guardrail's, before any item) fails as its trace would (:func:`_guardrails`); else the
run's outcome stays unknown.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL, not_run

from ._common import RecordError
from ._spans import RUN_START, Node, found_tools, maybe_json, responses_messages, text_of
from ._spans.messages import DENIED

#: Items of the model's output (one model call's, until a tool's or handoff's answer comes).
_MODEL_ITEMS = {"message_output_item", "tool_call_item", "handoff_call_item", "reasoning_item",
                "mcp_approval_request_item", "tool_search_call_item", "compaction_item"}
#: Calls of tools the app runs (answered by a later output item); any other call item a tool OpenAI ran.
_APP_CALLS = {"function_call", "custom_tool_call", "computer_call", "shell_call", "local_shell_call",
              "apply_patch_call"}
#: ``default_tool_error_function`` (``agents/tool.py``): what the model is told when a function tool raised.
_TOOL_ERROR = "An error occurred while running the tool"
#: ``metadata.run_state``, by ``current_step.type``.
_STATES = {"next_step_interruption": "paused for approval", "next_step_run_again": "between turns",
           "next_step_final_output": "finished"}  # (the JS SDK keeps the final step; the Python SDK none)
#: ``DEFAULT_APPROVAL_REJECTION_MESSAGE`` (both SDKs): the output of a call a person rejected, where the state keeps
#: no record of the decision (the JS SDK's after the resumed run).
_REJECTED = "Tool execution was not approved."
#: How a nested handoff's summary of the conversation begins (``agents/handoffs/history.py``; the older wording
#: "For context, here is the conversation so far:" begins alike).
_NESTED = "For context, here is the conversation so far"
#: The info keys of the root node that ``openai_agents`` copies to the run's metadata.
META_KEYS = ("run_state", "awaiting_approval", "run_state_schema", "trace_id")  # (the SDK's trace, where saved)


#: The JS SDK's (``@openai/agents``, ``RunState.toJSON()`` in agents-core ``runState.ts``) names for the fields read
#: here, in camelCase, by the Python SDK's; and those of its protocol items (``types/protocol.ts``).
_JS_FIELDS = {"originalInput": "original_input", "generatedItems": "generated_items", "currentAgent": "current_agent",
              "currentStep": "current_step", "modelResponses": "model_responses", "rawItem": "raw_item",
              "sourceAgent": "source_agent", "targetAgent": "target_agent", "callId": "call_id",
              "providerData": "provider_data", "inputGuardrailResults": "input_guardrail_results",
              "outputGuardrailResults": "output_guardrail_results",
              "toolInputGuardrailResults": "tool_input_guardrail_results"}


def _state(record: Any) -> dict[str, Any] | None:
    """The state a record is: ``RunState.to_json()`` (Python), ``state.toString()`` (JS), or the JS
    ``JSON.stringify(result)`` of a run result, ``{"state": <its state>}``; else None."""
    if isinstance(record, dict) and list(record) == ["state"]:
        record = record["state"]
    if not (isinstance(record, dict) and isinstance(record.get("$schemaVersion"), str)):
        return None
    fields = ("generated_items", "original_input", "current_agent")
    js = ("generatedItems", "originalInput", "currentAgent")
    if isinstance(record.get(fields[0]), list) and fields[1] in record and isinstance(record.get(fields[2]), dict):
        return record
    if isinstance(record.get(js[0]), list) and js[1] in record and isinstance(record.get(js[2]), dict):
        return _python_names(record)
    return None


def _python_names(value: Any) -> Any:
    """A JS state in the Python SDK's names: its camelCase fields renamed (:data:`_JS_FIELDS`), a tool result item
    (``function_call_result``, its ``output`` a ``{"type": "text", "text"}`` object) as a Responses
    ``function_call_output``, a ``hosted_tool_call`` as the Responses item it was. Message contents and tool
    arguments are left as they are."""
    if isinstance(value, list):
        return [_python_names(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {_JS_FIELDS.get(k, k): v if k in ("content", "arguments", "context") else _python_names(v)
           for k, v in value.items()}
    if out.get("type") == "function_call_result":
        output = out.get("output")
        text = output.get("text") if isinstance(output, dict) and output.get("type") == "text" else None
        out.update(type="function_call_output", output=text if isinstance(text, str) else output)
    hosted = out.get("provider_data") if out.get("type") == "hosted_tool_call" else None
    if isinstance(hosted, dict) and isinstance(hosted.get("type"), str):
        # a tool OpenAI ran (agents-openai ``openaiResponsesConverter``): the Responses item is ``providerData``,
        # less its ``status`` and its result (``output``; an image's ``result``), kept beside it
        out = {**hosted, "status": out.get("status")} | (
            {"result" if hosted["type"] == "image_generation_call" else "output": out["output"]}
            if out.get("output") is not None else {})
    return out


def is_run_state(record: Any) -> bool:
    """Whether ``record`` is a run state (:func:`_state`)."""
    return _state(record) is not None


def state_key(state: dict[str, Any]) -> str:
    """The run's group key: a digest of its input and items, so each saved state is its own run and reading the
    same file again gives the same id (a resumed run keeps its trace id, so two saves of it would share one). A
    state with no item (an input guardrail refused the request: it cannot be resumed) is digested whole, its trace
    id with it, so two refusals of one request are two runs."""
    kept = [state.get("original_input"), state.get("generated_items")] if state.get("generated_items") else state
    digest = hashlib.sha256(json.dumps(kept, sort_keys=True, default=str).encode()).hexdigest()
    return f"state-{digest[:20]}"


def _agent_name(item: dict[str, Any], current: str | None = None) -> str:
    """The agent whose item this is: its ``agent``, else (a JS handoff output) the agent that handed off."""
    for field in ("agent", "source_agent"):
        agent = item.get(field)
        if isinstance(agent, dict) and agent.get("name"):
            return str(agent["name"])
    return current or "agent"


def _models(state: dict[str, Any]) -> list[str | None]:
    """The model of each model response, in order, where the state keeps the response (the JS SDK's
    ``providerData``: the Responses API object); the Python SDK's keeps none."""
    out: list[str | None] = []
    for response in state.get("model_responses") or []:
        data = response.get("provider_data") if isinstance(response, dict) else None
        model = data.get("model") if isinstance(data, dict) else None
        out.append(str(model) if model else None)
    return out


def _waiting(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls waiting for approval: the interruptions (``tool_approval_item``) of ``current_step``."""
    step = state.get("current_step") if isinstance(state.get("current_step"), dict) else {}
    data = step.get("data") if isinstance(step.get("data"), dict) else {}
    return [i for i in data.get("interruptions") or [] if isinstance(i, dict) and isinstance(i.get("raw_item"), dict)]


def _rejected(state: dict[str, Any]) -> tuple[set[str], dict[str, set[str]]]:
    """(call ids a person rejected, {tool: outputs that mark its calls rejected}), from the approval records:
    ``context.function_tool_approvals[].decision`` (schema 1.18 on; its tool ``tool_key``), ``context.approvals``
    before (keyed by tool). ``rejected`` is a list of call ids, or ``True`` after ``reject(always_reject=True)``:
    every later call of the tool was refused with no id recorded, its output the ``sticky_rejection_message`` (or
    the default one, :data:`_REJECTED`); ``rejection_messages`` keys the calls rejected with a message."""
    context = state.get("context") if isinstance(state.get("context"), dict) else {}
    legacy = context.get("approvals") if isinstance(context.get("approvals"), dict) else {}
    owned = context.get("function_tool_approvals") if isinstance(context.get("function_tool_approvals"), list) else []
    records = [*legacy.items(), *((r.get("tool_key"), r.get("decision")) for r in owned if isinstance(r, dict))]
    ids: set[str] = set()
    sticky: dict[str, set[str]] = {}
    for tool, record in records:
        if not isinstance(record, dict):
            continue
        rejected, messages = record.get("rejected"), record.get("rejection_messages")
        ids |= {str(c) for c in rejected} if isinstance(rejected, list) else set()
        ids |= {str(c) for c in messages} if isinstance(messages, dict) else set()
        if rejected is True and isinstance(record.get("sticky_rejection_message"), str):
            sticky.setdefault(str(tool), set()).add(record["sticky_rejection_message"])
    return ids, sticky


def _items(state: dict[str, Any]) -> list[Any]:
    """The run's items: ``session_items`` where saved (schema 1.21: ``generated_items`` and, in the same order, the
    items a handoff's ``input_filter`` or ``nest_handoff_history`` took from it: the earlier agents' steps), else
    ``generated_items``."""
    session = state.get("session_items")
    return session if isinstance(session, list) and session else state["generated_items"]


def _asked(given: Any) -> Any:
    """The run's input, where a nested handoff (``nest_handoff_history``, ``agents/handoffs/history.py``) put a
    summary of the earlier agents' conversation in it (an assistant message: a preamble, then numbered records
    between ``<CONVERSATION HISTORY>`` markers, ``N. user: text`` or, for a text over lines, ``N. {json item}``;
    the items it forwards as they were after it): the summary read as the user messages it records (none, if it
    records none: the request was not kept)."""
    if not isinstance(given, list):
        return given
    out: list[Any] = []
    for item in given:
        asked = _summary_requests(item)
        out.extend([item] if asked is None else asked)
    return out


def _summary_requests(item: Any) -> list[dict[str, Any]] | None:
    """The user messages a nested handoff's summary message records (:func:`_asked`); None for any other item."""
    if not (isinstance(item, dict) and item.get("role") == "assistant"):
        return None
    content = item.get("content")
    parts = [content] if isinstance(content, str) else [
        p.get("text") for p in content or [] if isinstance(p, dict) and isinstance(p.get("text"), str)]
    lines = "\n".join(parts).splitlines()
    if not (lines and lines[0].startswith(_NESTED)):
        return None
    records: list[str] = []
    for line in lines[2:-1]:  # (between the markers, which an app may rename)
        if re.match(r"\d+\. ", line) or not records:
            records.append(re.sub(r"^\d+\. ", "", line))
        else:
            records[-1] += "\n" + line
    asked = []
    for record in records:
        said = maybe_json(record)
        if isinstance(said, dict) and said.get("role") == "user":
            asked.append({"role": "user", "content": said.get("content")})
        elif (head := re.match(r"user(?: \([^)]*\))?: ", record)) is not None:
            asked.append({"role": "user", "content": record[head.end():]})
    return asked


def _results(state: dict[str, Any], field: str) -> list[dict[str, Any]]:
    """The guardrail results a state records in ``field`` (``input_guardrail_results``, ...): its entries that are
    objects; a field that is no list records none (the run's items are still read)."""
    results = state.get(field)
    return [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []


def _named(result: dict[str, Any]) -> str | None:
    """The name of a guardrail result's guardrail (``guardrail.name``), None where it has none."""
    guardrail = result.get("guardrail")
    name = guardrail.get("name") if isinstance(guardrail, dict) else None
    return str(name) if name else None


def _guardrails(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The input and output guardrails the run ran (``input_guardrail_results``, ``output_guardrail_results``:
    ``{guardrail: {name}, output: {tripwireTriggered}, agent?: {name}}``), each ``{guardrail, triggered, agent}``
    (its agent None for an input guardrail: the SDKs run those on the starting agent). A state saved after a
    tripwire raised (a streamed run's ``result.to_state()``) records the one that tripped."""
    out = []
    for result in [*_results(state, "input_guardrail_results"), *_results(state, "output_guardrail_results")]:
        output, agent = result.get("output"), result.get("agent")
        tripped = isinstance(output, dict) and output.get("tripwireTriggered") is True  # (both SDKs' name)
        out.append({"guardrail": _named(result), "triggered": tripped,
                    "agent": agent.get("name") if isinstance(agent, dict) else None})
    return out


def _blocked(state: dict[str, Any]) -> dict[str, str | None]:
    """{message: guardrail name} of the tool input guardrails that rejected a call (``tool_input_guardrail_results``,
    ``output.behavior`` ``{type: "reject_content", message}``): the call's output is that message, given to the
    model instead of running the tool. The record names no call: the message is what tells the call."""
    out = {}
    for result in _results(state, "tool_input_guardrail_results"):
        output = result.get("output")
        behavior = output.get("behavior") if isinstance(output, dict) else None
        if isinstance(behavior, dict) and isinstance(behavior.get("message"), str):  # (allow and raise have none)
            out[behavior["message"]] = _named(result)
    return out


def _run_state(state: dict[str, Any], items: list[dict[str, Any]]) -> str:
    step = state.get("current_step") if isinstance(state.get("current_step"), dict) else {}
    if step.get("type") in _STATES:
        return _STATES[str(step["type"])]
    if items and items[-1].get("type") == "message_output_item":
        return "finished"
    return "unfinished"


def run_state_nodes(record: Any, seq: int = 0) -> Iterator[tuple[str, Node]]:
    """(group key, node) for the run a ``RunState.to_json()`` document holds (see the module docstring)."""
    state = _state(record)
    if state is None:
        return
    key = state_key(state)
    items = [i for i in _items(state) if isinstance(i, dict) and isinstance(i.get("raw_item"), dict)
             and i.get("type") != "tool_approval_item"]  # (a call's copy, its approval asked: not a model output)
    guardrails = _guardrails(state)
    tripped = any(g["triggered"] for g in guardrails)
    if not items and not tripped:  # (else read as a trace "with no spans")
        raise RecordError(f"a RunState (schema {state['$schemaVersion']}) saved before its run produced anything: "
                          "no generated items, no step to read")
    trace = state.get("trace") if isinstance(state.get("trace"), dict) else {}
    waiting = _waiting(state)
    info = {"workflow_name": trace.get("workflow_name"), "group_id": trace.get("group_id"), "trace_id": trace.get("id"),
            "run_state": "guardrail tripped" if tripped else _run_state(state, items),
            "run_state_schema": state["$schemaVersion"],
            "awaiting_approval": [str(w["raw_item"].get("name") or UNNAMED_TOOL) for w in waiting]}
    yield key, Node(id=key, parent=None, role="chain", name=str(trace.get("workflow_name") or "RunState"), seq=seq,
                    info={k: v for k, v in info.items() if v not in (None, "", [])})
    pending: dict[str, list[dict[str, Any]]] = {}  # unanswered calls by id, oldest first (ids may repeat)
    rejected, sticky = _rejected(state)
    blocked = _blocked(state)
    agent: Node | None = None
    agents: list[Node] = []
    said: list[dict[str, Any]] = []  # the current model call's output items
    asked = False  # whether a model call was given the run's input yet
    models = _models(state)
    made = 0  # model calls read
    n = seq

    def node(**fields: Any) -> Node:
        nonlocal n
        n += 1
        return Node(id=f"{key}/{n - seq}", seq=n, **fields)

    def model_call(refused: bool = False) -> Iterator[tuple[str, Node]]:
        """The model call of the output items read (``said``); ``refused``: the call the run's request was meant
        for, which an input guardrail stopped before the model answered."""
        nonlocal said, asked, made
        if (said or refused) and agent is not None:
            llm = node(parent=agent.id, role="llm", name="response",
                       # a tool search is its own step, answered by its output item (``responses_messages``
                       # would make it a call OpenAI ran with no answer)
                       output_messages=responses_messages([r for r in said if r.get("type") != "tool_search_call"],
                                                          output=True),
                       input_messages=[] if asked else responses_messages(_asked(state.get("original_input"))),
                       model=models[made] if made < len(models) else None)
            asked, said, made = True, [], made + 1
            yield key, llm

    for item in items:
        kind, raw = str(item.get("type")), item["raw_item"]
        name = _agent_name(item, agent.name if agent else None)
        if agent is None or agent.name != name:
            yield from model_call()
            agent = node(parent=key, role="agent", name=name, info={"agent_name": name})
            agents.append(agent)
            if n == seq + 1:
                agent.info[RUN_START] = True
            yield key, agent
        if kind == "tool_call_item" and raw.get("type") not in _APP_CALLS and (ran := _hosted(raw)):
            yield from model_call()  # a tool OpenAI ran, its result in the item: its step, in its place
            call, result, failed = ran
            yield key, _tool_node(node, agent, call, result, result if failed else None)
            continue
        if kind in _MODEL_ITEMS:
            said.append(raw)
            if kind in ("tool_call_item", "handoff_call_item", "tool_search_call_item") and (called := _call_key(raw)):
                pending.setdefault(called, []).append(_as_call(raw))
            continue
        yield from model_call()
        # an answer is its id's oldest unanswered call's: SDKs before 0.20 (and models such as llama.cpp's or Kimi's
        # that number calls per turn) let ids repeat across turns, and parallel calls are answered in call order
        answers = kind in ("tool_call_output_item", "handoff_output_item", "tool_search_output_item")
        queue = pending.get(_call_key(raw)) if answers else None
        call = queue.pop(0) if queue else {}
        output = item.get("output", raw.get("output"))
        if kind == "handoff_output_item":
            source, target = item.get("source_agent"), item.get("target_agent")
            handed = {"from_agent": source.get("name") if isinstance(source, dict) else None,
                      "to_agent": target.get("name") if isinstance(target, dict) else None}
            yield key, node(parent=agent.id, role="tool", name="handoff", tool=call.get("name"),
                            call_id=raw.get("call_id"), arguments=maybe_json(call.get("arguments")) or None,
                            info={k: v for k, v in handed.items() if v})
        elif kind == "tool_search_output_item" and call:
            yield key, _tool_node(node, agent, call, found_tools(raw), None)
        elif kind == "tool_call_output_item" and call:
            result = text_of(maybe_json(output)) if output is not None else None
            error = result if result and result.startswith(_TOOL_ERROR) else None
            if (str(raw.get("call_id")) in rejected or result == _REJECTED
                    or result in sticky.get(str(call.get("name")), ())):  # no tool ran: its output is the rejection
                result, error = None, f"{DENIED}: {result}" if result else DENIED
            elif result in blocked:  # a tool input guardrail's rejection: the model was given it, no tool ran
                by = f"the tool input guardrail {blocked[result]}" if blocked[result] else "a tool input guardrail"
                result, error = None, not_run(f"rejected by {by}: {result}")
            yield key, _tool_node(node, agent, call, result, error)
    if agent is None:  # an input guardrail tripped before the model answered: the run is the request it refused
        name = _agent_name({"agent": state["current_agent"]})
        agent = node(parent=key, role="agent", name=name, info={"agent_name": name, RUN_START: True})
        agents.append(agent)
        yield key, agent
        yield from model_call(refused=True)
    yield from model_call()
    for guardrail in guardrails:  # as a trace's guardrail spans: a tripped one fails the run
        wanted = guardrail.pop("agent")  # (an output guardrail's: the agent that gave the final output)
        owner = agents[0] if wanted is None else next((a for a in reversed(agents) if a.name == wanted), agents[-1])
        yield key, node(parent=owner.id, role="other", name=f"guardrail {guardrail['guardrail'] or ''}".strip(),
                        info=guardrail)
    for wait in (w for w in waiting if pending.get(str(w["raw_item"].get("call_id")))):
        pending[str(wait["raw_item"].get("call_id"))].pop(0)
        owner = next((a for a in reversed(agents) if a.name == _agent_name(wait, agent.name if agent else None)),
                     agent)
        if owner is not None:  # waiting for a person: no result, and no error
            yield key, _tool_node(node, owner, wait["raw_item"], None, None, awaiting_approval=True)


def _call_key(raw: dict[str, Any]) -> str | None:
    """The key pairing a call with its answer: its ``call_id``; a tool search's, where it has none (the hosted
    ``tool_search_call``, ``execution: "server"``), the same for every such search, as the SDK pairs an anonymous
    search with the next anonymous ``tool_search_output`` (``run_internal/items.py``)."""
    if raw.get("call_id"):
        return str(raw["call_id"])
    return "tool_search" if raw.get("type") in ("tool_search_call", "tool_search_output") else None


def _as_call(raw: dict[str, Any]) -> dict[str, Any]:
    """A call item as a tool call (``name``, ``arguments``): a tool search (its ``arguments``, the query) named
    ``tool_search``; a ``program`` (code the model wrote, whose tool calls name it as their ``caller``, answered by
    a ``program_output``) by the tool that runs it, ``programmatic_tool_calling`` (both SDKs' name for it), its
    ``code`` the argument; any other as it is."""
    if raw.get("type") == "tool_search_call":
        return {**raw, "name": "tool_search"}
    if raw.get("type") == "program":
        return {**raw, "name": "programmatic_tool_calling", "arguments": {"code": raw.get("code")}}
    return raw


def _hosted(raw: dict[str, Any]) -> tuple[dict[str, Any], str | None, bool] | None:
    """(call, result, failed) of a tool OpenAI ran (a hosted tool's Responses item, read as a response's output is:
    ``responses_messages``), None for an item that is no such call."""
    said = responses_messages([raw], output=True)
    calls = [c for m in said for c in m.get("calls") or []]
    if len(calls) != 1:
        return None
    results = [m for m in said if m.get("role") == "tool"]
    call = {"call_id": calls[0].get("id"), "name": calls[0].get("name"), "arguments": calls[0].get("arguments")}
    return call, results[0]["text"] if results else None, bool(results and results[0].get("failed"))


def _tool_node(node: Any, agent: Node, call: dict[str, Any], result: str | None, error: str | None,
               **info: Any) -> Node:
    name = str(call.get("name") or UNNAMED_TOOL)
    return node(parent=agent.id, role="tool", name=name, tool=name, call_id=call.get("call_id"),
                arguments=maybe_json(call.get("arguments")), result=result, error=error, info=info)
