"""Record formats: one run as a training record of each format a fine-tuning tool reads.

Each format is written from one neutral conversation of the run (:func:`_turns`:
the task, then per step what the agent did and got back), so the formats agree on
what a run says and differ only in how they spell it:

``openai-chat``
    OpenAI's fine-tuning chat format, one JSON object per line (the API reference's
    ``FineTuneChatRequestInput``; the fine-tuning guide's tool-calling examples)::

        {"messages": [...], "tools": [...], "parallel_tool_calls": false}

    ``messages``: an optional ``system`` message (``system=``), the task as the
    ``user`` message (unless the agent never saw it: see :func:`_turns`), then per step
    an ``assistant`` message whose ``tool_calls`` hold
    ``{"id", "type": "function", "function": {"name", "arguments": <JSON string>}}``
    (its ``content`` the step's thought, or null) followed by a ``tool`` message with
    that ``tool_call_id`` and the observation (and error) as ``content``. tau-bench's
    ``respond`` action (the agent talking to the user) becomes a plain ``assistant``
    message and the user's reply a ``user`` message. ``tools``: a function definition
    per tool the run called, its ``parameters`` a JSON Schema inferred from the
    arguments seen (the dumps carry no tool schemas). The schema is written down in
    :data:`.schemas.OPENAI_CHAT_SCHEMA` and checked by :func:`.schemas.validate_openai_chat`.
``sharegpt``
    ``{"conversations": [{"from": ..., "value": ...}], "system": ..., "tools": ...}`` as
    LLaMA-Factory reads it (``formatting: sharegpt``, its default tags; axolotl reads
    the same field names): ``human`` / ``observation`` turns at odd positions,
    ``gpt`` / ``function_call`` at even ones, an even count (consecutive turns of one
    side are joined, a trailing observation dropped, and agent turns before the first human one: a
    run whose task the agent never saw may open with the agent's greeting; a call before it goes with its
    result); a tool call is a
    ``function_call`` turn holding ``{"name", "arguments"}`` as JSON and its result an
    ``observation``; ``tools`` is the function list as a JSON string. Checked by
    :func:`.schemas.validate_sharegpt`.
``jsonl``
    Our own trajectory JSON (``schemas/trajectory.schema.json``), one per line, the
    provenance under ``metadata.trajsearch``: it ingests again as ``native``, which passes
    the provenance over (where a copy was found is no part of the run), so a run exported
    and ingested again into its tenant counts as unchanged.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from ..actions import RESPOND  # the agent talking to the user (re-exported: trajsearch.export.RESPOND)
from ..model import TASK_SEEN_BY_AGENT, Step, Trajectory


FORMATS = ("openai-chat", "sharegpt", "jsonl")


def to_record(run: Trajectory, fmt: str, *, system: str | None = None,
              provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run as a record of ``fmt`` (provenance inline when given)."""
    if fmt == "jsonl":
        data = run.model_dump(mode="json")
        if provenance is not None:
            data["metadata"] = {**data.get("metadata", {}), "trajsearch": provenance}
        return data
    turns = _turns(run)
    record = _openai_chat(run, turns, system) if fmt == "openai-chat" else _sharegpt(turns, system)
    if provenance is not None:
        record["metadata"] = provenance
    return record


@dataclass
class _Turn:
    kind: str  # user | assistant | call | result
    text: str = ""
    name: str = ""
    arguments: Any = None
    call_id: str = ""


def _turns(run: Trajectory) -> list[_Turn]:
    """The run as a neutral conversation: the task, then per step what the agent did and got back.

    The task opens it only when it is what the agent was told (:func:`opens_with_task`): a user simulator's
    script as the first user message would teach a model to act on what no real user says (tau-bench's
    "this is incorrect, but is meant to test the agent"). Without it the conversation starts at the steps,
    with the simulated user's opening turn (or the agent's greeting, which tau2 writes before it)."""
    turns = _step_turns(run)
    return [_Turn("user", run.task), *turns] if opens_with_task(run, turns) else turns


def opens_with_task(run: Trajectory, turns: list[_Turn]) -> bool:
    """Whether the task is the conversation's first user message: not when the adapter says the agent never
    saw it, nor when the steps open with a user message saying it (a task read from that message; at most an
    agent's greeting before it). A user message after the agent's first call or result is a later turn, not
    the opening: a person sending the first prompt again mid-run does not make the task go."""
    if run.metadata.get(TASK_SEEN_BY_AGENT) is False and turns:
        return False
    first = next((t for t in turns if t.kind != "assistant"), None)
    return first is None or first.kind != "user" or first.text.strip() != run.task.strip()


def _step_turns(run: Trajectory) -> list[_Turn]:
    """Per step what the agent did (said, called) and got back (a result, the user's reply)."""
    turns: list[_Turn] = []
    for n, step in enumerate(run.steps):
        if not step.action:
            if step.thought:
                turns.append(_Turn("assistant", step.thought))
            if step.observation or step.error:
                turns.append(_Turn("user", _result_text(step)))
            continue
        if step.action == RESPOND and isinstance(step.arguments, dict) and isinstance(
                step.arguments.get("content"), str):
            turns.append(_Turn("assistant", step.arguments["content"]))
            if step.observation or step.error:
                turns.append(_Turn("user", _result_text(step)))
            continue
        call_id = f"call_{n}"
        turns.append(_Turn("call", step.thought or "", name=tool_name(step.action),
                           arguments=_arguments(step.arguments), call_id=call_id))
        turns.append(_Turn("result", _result_text(step), call_id=call_id))
    return turns


_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(action: str) -> str:
    """A recorded action as a function name OpenAI accepts (``^[A-Za-z0-9_-]{1,64}$``): other
    characters become ``_`` (``functions.bash`` -> ``functions_bash``), at most 64 of them."""
    return _NOT_NAME.sub("_", action)[:64] or "tool"


def _arguments(arguments: Any) -> dict[str, Any]:
    """Function arguments are a JSON object; anything else is wrapped as ``{"input": ...}``."""
    if isinstance(arguments, dict):
        return arguments
    return {} if arguments is None else {"input": arguments}


def _result_text(step: Step) -> str:
    parts = [step.observation or ""]
    if step.error and step.error not in parts[0]:
        parts.append(f"error: {step.error}")
    return "\n".join(p for p in parts if p)


def _openai_chat(run: Trajectory, turns: list[_Turn], system: str | None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for turn in turns:
        if turn.kind in ("user", "assistant"):
            messages.append({"role": turn.kind, "content": turn.text})
        elif turn.kind == "call":
            messages.append({
                "role": "assistant", "content": turn.text or None,
                "tool_calls": [{"id": turn.call_id, "type": "function", "function": {
                    "name": turn.name, "arguments": json.dumps(turn.arguments, ensure_ascii=False)}}],
            })
        else:
            messages.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.text})
    record: dict[str, Any] = {"messages": messages}
    functions = tool_schemas(turns)
    if functions:
        record["tools"] = [{"type": "function", "function": f} for f in functions]
        record["parallel_tool_calls"] = False  # one call per assistant turn, as the runs made them
    return record


_HUMAN_SIDE = ("human", "observation")


def _sharegpt(turns: list[_Turn], system: str | None) -> dict[str, Any]:
    conversation: list[dict[str, str]] = []
    for turn in turns:
        if turn.kind == "call":
            item = {"from": "function_call",
                    "value": json.dumps({"name": turn.name, "arguments": turn.arguments}, ensure_ascii=False)}
        else:
            item = {"from": {"user": "human", "assistant": "gpt", "result": "observation"}[turn.kind],
                    "value": turn.text}
        last = conversation[-1] if conversation else None
        if last is None and turn.kind != "user":
            continue  # the agent's greeting before any user turn (tau2 writes it), a call and its result before
            # one (a compressed run): sharegpt opens with a human, not a result whose call is gone
        if last is None or (last["from"] in _HUMAN_SIDE) != (item["from"] in _HUMAN_SIDE):
            conversation.append(item)  # the sides alternate: as it should be
        elif item["from"] == "function_call":
            conversation[-1] = item  # words and then a call in one model turn: the call is the turn
        elif last["from"] != "function_call":
            last["value"] = f"{last['value']}\n\n{item['value']}".strip()  # one side twice in a row: one turn
        # (a reply right after a call, with no result between, cannot happen: every call has its result)
    if conversation and conversation[-1]["from"] in _HUMAN_SIDE:
        conversation.pop()  # the final tool result or user reply has no answer to learn from
    record: dict[str, Any] = {"conversations": conversation}
    if system:
        record["system"] = system
    functions = tool_schemas(turns)
    if functions:
        record["tools"] = json.dumps(functions, ensure_ascii=False)
    return record


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def tool_schemas(turns: list[_Turn]) -> list[dict[str, Any]]:
    """A function definition per tool called, its parameters inferred from the arguments seen."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        if turn.kind == "call":
            seen.setdefault(turn.name, []).append(turn.arguments)
    out = []
    for name, calls in seen.items():
        properties: dict[str, Any] = {}
        for arguments in calls:
            for key, value in arguments.items():
                kind = next((t for cls, t in _JSON_TYPES if isinstance(value, cls)), None)
                known = properties.setdefault(key, {"type": kind} if kind else {})
                if kind and known.get("type") not in (None, kind):
                    known.pop("type")  # seen with two types: leave it open
        required = [key for key in properties if all(key in arguments for arguments in calls)]
        out.append({"name": name, "description": f"The {name} tool, as the recorded runs called it.",
                    "parameters": {"type": "object", "properties": properties, "required": required}})
    return out


def record_text(record: dict[str, Any], fmt: str) -> str:
    """What of a record a model reads: message contents, tool names and arguments (for counting tokens)."""
    if fmt == "jsonl":
        lines = [record.get("task", "")]
        for step in record.get("steps", []):
            lines += [step.get("thought") or "", step.get("action") or "",
                      json.dumps(step.get("arguments"), ensure_ascii=False) if step.get("arguments") is not None
                      else "", step.get("observation") or "", step.get("error") or ""]
        return "\n".join(line for line in lines if line)
    if fmt == "sharegpt":
        return "\n".join([record.get("system", ""), *(t["value"] for t in record["conversations"])]).strip()
    lines = []
    for message in record["messages"]:
        lines.append(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            lines.append(f"{call['function']['name']} {call['function']['arguments']}")
    return "\n".join(line for line in lines if line)
