"""``pydantic-ai``: a Pydantic AI agent's message history as apps save it (``result.all_messages_json()``).

Records: the history of one conversation, a JSON list of ``ModelRequest`` / ``ModelResponse`` messages
(``pydantic_ai/messages.py``, from 0.0.13, December 2024: ``kind`` ``request`` / ``response``, each with ``parts``
told by their ``part_kind``), as ``result.all_messages_json()``, ``ModelMessagesTypeAdapter.dump_json(...)`` or
``to_jsonable_python(result.all_messages())`` write it: a file of one history (a JSON array, or one message a
line), or a history a JSONL line (an array of arrays too). A history is all its conversation's runs: each
``run`` given the history before it as ``message_history`` appends its own prompt and messages; a line of a file
that continues one before it of the same ``conversation_id`` (1.89 on) is joined to it (an app logging each run's
``new_messages_json()`` a line; before 1.89 such lines keep no id that links them and stay histories of their own).

Mapping
- task: the first ``user-prompt`` part's text (or a realtime session's ``speech`` part's ``transcript``, 2.28 on: the
  person's in a request, the model's in a response its text); later ones (the next turns) are kept in
  ``metadata.user_prompts`` and are the observation of the answer before them;
- steps: one per ``tool-call`` (and ``builtin-tool-call``: a provider's own tool, web search) of a response (action =
  ``tool_name``, arguments = ``args`` decoded, thought = the response's ``thinking``, and its text where it also calls
  tools), its observation the ``tool-return`` with its ``tool_call_id`` (before March 2025 ids were ``null``: the
  earliest unanswered call of its tool, the order pydantic-ai answered in); the error of the call is a ``retry-prompt``
  answering it (arguments that failed validation, a ``ModelRetry`` the tool raised, an unknown tool; 1.0.10 here) or
  its return's ``outcome`` (from March 2026: ``failed``; later 2.x, 2.78 here, also ``retried``, in a retry-prompt's
  place; ``denied`` and ``interrupted`` are calls not run: ``not run: denied: <its text>``, as is a 1.x return of
  ``ToolDenied``'s default text, "The tool call was denied.", its only mark before ``outcome``); a response's text is a
  ``respond`` step, as is a call of the output tool (``final_result``: pydantic-ai answers it ``Final result
  processed.``, 2.x marks it ``tool_kind: output``), its arguments the output; a ``retry-prompt`` without a tool
  (``retry-feedback`` in 2.x: output that failed validation, an output validator's ``ModelRetry``) is the error of the
  ``respond`` it answers;
- trajectory_id = ``pydantic-ai:<conversation_id>`` (from April 2026) or ``pydantic-ai:<run_id>`` (from November
  2025) of the first message; a history before them keeps no id: ``pydantic-ai:<digest>`` of its first message, which
  holds the time to the microsecond its parts were made (``timestamp``), so two saves of one conversation (after each
  turn) are one run (read together, the longer kept: ``read.DistinctIds``), and a file moved or renamed keeps its
  runs' ids; a first message with no timestamp anywhere (written by hand, not by pydantic-ai) is named by its file
  and place (``file_run_key``) instead;
- model_id = the last response's ``model_name``; created_at = the first timestamp; ``metadata.total_tokens``
  the responses' ``usage`` summed;
- outcome: ``unknown``: a history holds what was said, not whether the task was done; a response 2.x marks
  ``state: interrupted`` or ``incomplete`` (a usage limit crossed, a stream cancelled or cut) was not acted on: its
  calls nothing answered are ``not run: the response was interrupted: ...``, as is its text.
- refused: the messages of pydantic-ai before 0.0.13 (``role`` instead of ``kind``) are not detected.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL, not_run
from trajsearch.model import Trajectory

from ._agent_cli import finish_steps, iso_time
from ._common import (ITEM_AT, Context, RecordError, as_dict, as_list, build, clip_task, file_run_key, item_positions,
                      json_digest, json_kind, safe_id, tool_arguments)
from ._spans.messages import PYDANTIC_AI_DENIED

NAME = "pydantic-ai"
#: A file is read whole (see ``split``): a history may be saved one message a line.
WHOLE_FILE = True
ID_PREFIX = "pydantic-ai"

_KINDS = frozenset({"request", "response"})
#: What pydantic-ai answers a call of its output tool with (``_tool_execution.py``, every version).
_FINAL_RESULT = "Final result processed."
#: ... and the calls it did not run or whose output it did not use (``_tool_status.py``, 2.78: a final result had
#: come, ``end_strategy='early'``; a tool's retry first; the output function failed ...): each such call not run.
_SKIPPED = frozenset({"Output tool not used - a final result was already processed.",
                      "Result tool not used - a final result was already processed.",  # its 0.0.x wording
                      "Tool not executed - a final result was already processed.",
                      "Output not used as the final result - addressing tool retries from this round first.",
                      "Output tool processed, but its value will not be the final result of the agent run.",
                      "Output tool not used - output function execution failed.",
                      "Output tool not used - output failed validation."})
#: A tool return's ``outcome`` (since March 2026) that is its call's error, and those of calls not run.
_FAILED = frozenset({"failed", "retried"})
_NOT_RUN = frozenset({"denied", "interrupted"})
#: A response's ``state`` (2.x) when the run did not act on it: stopped (a usage limit, a cancelled stream), cut off.
_STOPPED = frozenset({"interrupted", "incomplete"})
#: Parts that say the model's last response could not be used: a tool-less ``retry-prompt``, 2.x's own part.
_FEEDBACK = frozenset({"retry-prompt", "retry-feedback"})


def _message(item: Any) -> bool:
    """A dumped ``ModelRequest`` / ``ModelResponse``: its ``kind``, and ``parts`` each with a ``part_kind``."""
    return _fault(item) is None


def _fault(item: Any) -> str | None:
    """What keeps ``item`` from being a dumped message, None when nothing does."""
    if not isinstance(item, dict):
        return f"expected a JSON object, got {json_kind(item)}"
    if item.get("kind") not in _KINDS:
        return f"its 'kind' is {item.get('kind')!r}, not 'request' or 'response'"
    if not isinstance(item.get("parts"), list):
        return f"its 'parts' is {json_kind(item.get('parts'))}, not an array"
    return next((f"its part {k} has no 'part_kind'" for k, p in enumerate(item["parts"], 1)
                 if not (isinstance(p, dict) and isinstance(p.get("part_kind"), str))), None)


def _history(item: Any) -> bool:
    return isinstance(item, list) and bool(item) and all(_message(m) for m in item[:5])


def matches(record: Any) -> bool:
    """A message with at least one part (the first of a history saved as an array, or a line each), or a history
    (a JSONL line of one)."""
    return (_message(record) and bool(record["parts"])) or _history(record)


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The histories of a file: one, its messages an array's items or a line each; or one per item (a JSONL line, an
    array of arrays); with where it is (``ITEM_AT``: its first item), which names a history that has no id. An item
    that continues a history of its conversation (its ``conversation_id``, 1.89 on) before it is joined to it
    (:func:`_continues`): an app that logs each run's ``new_messages_json()`` a line writes a conversation's turns a
    line each, one saving ``all_messages_json()`` after each turn the history so far again."""
    items = document if isinstance(document, list) else [document]
    positions = item_positions(items)
    loose: list[Any] = []  # the messages of a history saved an item each
    out: list[tuple[str, Any]] = []
    conversations: dict[str, list[tuple[dict[str, Any], list[str]]]] = {}  # its histories, their messages' JSON
    for n, (position, item) in enumerate(zip(positions, items), 1):
        conversation = _conversation(item) if isinstance(item, list) else None
        said = [json.dumps(m, sort_keys=True) for m in item] if conversation is not None else []
        if conversation is not None and _joined(conversations.get(conversation, []), said, item):
            continue
        if isinstance(item, list):
            out.append((position, history := {"messages": list(item), ITEM_AT: n}))
            if conversation is not None:
                conversations.setdefault(conversation, []).append((history, said))
        elif _message(item):
            loose.append(item)
        else:  # neither a message nor a history: its own error (at its line), the rest still read
            out.append((position, item))
    yield from out
    if loose:
        yield "file" if len(items) == len(loose) else "messages", {"messages": loose, ITEM_AT: 1}


def _joined(histories: list[tuple[dict[str, Any], list[str]]], said: list[str], item: list[Any]) -> bool:
    """Join a line to the latest history of its conversation it continues (:func:`_continues`); False when none."""
    for history, gathered in reversed(histories):
        if (rest := _continues(said, item, gathered)) is not None:
            history["messages"].extend(item[len(said) - len(rest):])
            gathered.extend(rest)
            return True
    return False


def _continues(said: list[str], item: list[Any], gathered: list[str]) -> list[str] | None:
    """What of a line (its messages' JSON) continues the history gathered so far of its conversation, None when it
    does not: a later save of it (it opens with the whole history: the rest), or the next run's new messages (none
    the history holds, and no system prompt, which only a conversation's first run sends: all of it). A line that
    shares a head and then differs (a run forked off the same history: regenerate, two follow-ups of one seed, which
    inherit its id) or opens afresh with a system prompt (an app reusing a fixed id) is a history of its own."""
    if said[:len(gathered)] == gathered or gathered[:len(said)] == said:  # a later save, or an earlier one
        return said[len(gathered):]
    fresh = not set(said) & set(gathered)
    opens = any(p["part_kind"] == "system-prompt" for p in item[0]["parts"])
    return said if fresh and not opens else None


def _conversation(history: list[Any]) -> str | None:
    """The ``conversation_id`` (1.89 on) of a history whose messages are all pydantic-ai's (one that is not stays its
    own item, its error its own), else None."""
    first = history[0] if history else None
    conversation = first.get("conversation_id") if isinstance(first, dict) else None
    return conversation if isinstance(conversation, str) and conversation and all(map(_message, history)) else None


def _text(content: Any) -> str:
    """A part's content as text: a string as is; a validation error's details (``loc``: ``msg`` a line); a tool's
    multimodal return as a prompt's (:func:`_prompt`); any other value (a tool's return value) as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(isinstance(e, dict) and "msg" in e for e in content):
        return "\n".join(f"{'.'.join(str(p) for p in as_list(e.get('loc'))) or 'output'}: {e['msg']}"
                         for e in content)
    if isinstance(content, list) and any(isinstance(p, dict) and isinstance(p.get("kind"), str) for p in content):
        return _prompt(content)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def _prompt(content: Any) -> str:
    """A user prompt's text: a string, or the strings and ``text-content`` parts of a multimodal one (an image, a
    file, a cache point left out)."""
    if isinstance(content, str):
        return content.strip()
    return "\n".join(p if isinstance(p, str) else str(p.get("content", "")) for p in as_list(content)
                     if isinstance(p, str) or isinstance(p, dict) and p.get("kind") == "text-content").strip()


def _words(part: dict[str, Any]) -> str:
    """What a part says: a request's ``user-prompt`` (:func:`_prompt`), a response's ``text``, or the ``transcript``
    of a ``speech`` part (2.28 on, a realtime session's history: the person's in a request, the model's in a response,
    which pydantic-ai itself turns into a user prompt and a text part when it sends the history on); else empty."""
    kind = part["part_kind"]
    if kind == "user-prompt":
        return _prompt(part.get("content"))
    said = part.get("transcript") if kind == "speech" else part.get("content") if kind == "text" else None
    return said if isinstance(said, str) and said.strip() else ""


def _tool_name(part: dict[str, Any]) -> str:
    name = part.get("tool_name")
    return name if isinstance(name, str) and name else UNNAMED_TOOL


class _Steps:
    """The steps of a history, read message by message."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.by_call: dict[str, dict[str, Any]] = {}
        self.unpaired: list[dict[str, Any]] = []  # the calls of no id (before March 2025) not answered yet
        self.said: list[dict[str, Any]] = []  # the respond steps of the last response
        self.prompts: list[str] = []
        self.output_tools: set[str] = set()  # the names of the calls pydantic-ai answered as its output tool's
        self.stopped: list[tuple[str, list[dict[str, Any]]]] = []  # the steps of responses not acted on, their state

    def response(self, msg: dict[str, Any]) -> None:
        parts, when = msg["parts"], iso_time(msg.get("timestamp"))
        thinking = "\n\n".join(p["content"] for p in parts if p["part_kind"] == "thinking"
                               and isinstance(p.get("content"), str) and p["content"].strip()) or None
        text = "\n\n".join(t for t in map(_words, parts) if t)
        calls = [p for p in parts if p["part_kind"] in ("tool-call", "builtin-tool-call")]
        self.said, made = [], len(self.steps)
        thought = "\n\n".join(t for t in (thinking, text if calls else None) if t) or None
        for call in calls:
            step = {"thought": thought, "action": _tool_name(call),
                    "arguments": tool_arguments(call.get("args")), "started_at": when}
            if call.get("tool_kind") == "output":
                self.output_tools.add(step["action"])
                self.said.append(step)
            self.steps.append(step)
            if isinstance(call.get("tool_call_id"), str):
                self.by_call[call["tool_call_id"]] = step
            else:
                self.unpaired.append(step)
        for ret in (p for p in parts if p["part_kind"] == "builtin-tool-return"):
            self._returned(ret)
        if text and not calls:
            step = {"thought": thinking, "action": "respond", "arguments": {"content": text}, "started_at": when}
            self.steps.append(step)
            self.said.append(step)
        if msg.get("state") in _STOPPED:
            self.stopped.append((msg["state"], self.steps[made:]))

    def finish(self, metadata: dict[str, Any]) -> list[dict[str, Any]]:
        """The steps, each call of the output tool (``output_tools``: an earlier one whose arguments failed
        validation too) a ``respond`` step, its arguments the output; the steps of a response the run stopped at,
        which nothing answered, not run; numbered and kept within the step limit as every session's are
        (``finish_steps``: a longer history is read clipped, noted in ``metadata``)."""
        for state, made in self.stopped:
            for step in made:
                if "observation" not in step and "error" not in step:
                    step["error"] = not_run(f"the response was {state}: the run stopped before acting on it")
        for step in self.steps:
            if step["action"] in self.output_tools:
                output = step["arguments"]
                step["action"], step["arguments"] = "respond", {
                    "content": output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)}
        return finish_steps(self.steps, metadata)

    def request(self, msg: dict[str, Any]) -> None:
        for part in msg["parts"]:
            kind = part["part_kind"]
            if kind in ("user-prompt", "speech") and (text := _words(part)):
                if self.prompts:  # the next turn: the person's answer to the words before
                    for step in self.said:
                        step.setdefault("observation", text)
                self.prompts.append(text)
                self.said = []
            elif kind in ("tool-return", "builtin-tool-return"):
                self._returned(part)
            elif kind in _FEEDBACK:
                # a tool's: the call it answers (an unknown tool's too); else the answer it refused
                answering = [self._answered(part)] if part.get("tool_name") else self.said[-1:]
                for answered in filter(None, answering):
                    answered["error"] = _text(part.get("content")) or "the model was asked to try again"

    def _answered(self, part: dict[str, Any]) -> dict[str, Any] | None:
        """The step of the call a return or retry-prompt answers: the one of its ``tool_call_id``; pydantic-ai before
        March 2025 (f3be7141b) kept no id (``null``) and answered calls in their order: the earliest call of its tool
        not answered yet."""
        if isinstance(call_id := part.get("tool_call_id"), str):
            return self.by_call.get(call_id)
        name = _tool_name(part)
        step = next((s for s in self.unpaired if s["action"] == name), None)
        if step is not None:
            self.unpaired.remove(step)
        return step

    def _returned(self, part: dict[str, Any]) -> None:
        step = self._answered(part)
        if step is None:  # a return whose call this history does not hold
            step = {"action": _tool_name(part)}
            self.steps.append(step)
        content, outcome = part.get("content"), part.get("outcome")
        if outcome is None and content == PYDANTIC_AI_DENIED:  # 1.x (before 1.67): the denial as 2.x marks it
            outcome = "denied"
        if content == _FINAL_RESULT:  # the output, its call's step a respond one (``finish``)
            self.output_tools.add(step["action"])
            self.said.append(step)
            return
        step["ended_at"] = iso_time(part.get("timestamp"))
        text = _text(content)
        if outcome in _FAILED:  # the text is the error alone, as a 1.x retry-prompt's is
            step["error"] = text or f"the tool call {outcome}"
        elif outcome in _NOT_RUN:  # worded as every call not run is: ``not run: denied: <reason>``
            step["error"] = not_run(f"{outcome}: {text}" if text else outcome)
        elif isinstance(content, str) and content in _SKIPPED:
            step["error"] = not_run(content)
        else:
            step["observation"] = text


def _run_key(messages: list[dict[str, Any]], record: dict[str, Any], ctx: Context) -> str:
    """The history's id: its conversation's or first run's id, else a digest of its first message when that holds
    pydantic-ai's timestamps, else its file and place (see the module's docstring)."""
    first = messages[0]
    for key in ("conversation_id", "run_id"):
        if isinstance(first.get(key), str) and first[key]:
            return first[key]
    if any(isinstance(p.get("timestamp"), str) for p in first["parts"]) or isinstance(first.get("timestamp"), str):
        return json_digest(first)
    return file_run_key(ctx, record.get(ITEM_AT))


def _total_tokens(messages: list[dict[str, Any]]) -> int | None:
    """The responses' ``usage`` summed: ``total_tokens`` where kept (before 1.0), else input and output tokens."""
    total = 0
    for m in messages:
        usage = as_dict(m.get("usage"))
        spent = usage.get("total_tokens")
        if not isinstance(spent, int):
            spent = sum(v for k in ("input_tokens", "output_tokens", "request_tokens", "response_tokens")
                        if isinstance(v := usage.get(k), int))
        total += spent
    return total or None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if not (isinstance(record, dict) and isinstance(record.get("messages"), list)):
        raise RecordError("not a Pydantic AI message (a ModelRequest or ModelResponse: 'kind' request or response, "
                          f"'parts' each with a 'part_kind') nor a history (a JSON array of them): {_fault(record)}")
    messages = record["messages"]
    for n, msg in enumerate(messages, 1):
        if (fault := _fault(msg)) is not None:
            raise RecordError(f"message {n} of the Pydantic AI history is no ModelRequest or ModelResponse: {fault}")
    if not messages:
        raise RecordError("an empty Pydantic AI message history")
    steps = _Steps()
    for msg in messages:
        (steps.response if msg["kind"] == "response" else steps.request)(msg)
    if not steps.prompts:
        raise RecordError("a Pydantic AI message history with no user prompt: no task")
    metadata: dict[str, Any] = {}
    if len(steps.prompts) > 1:
        metadata["user_prompts"] = steps.prompts[1:]
    if (tokens := _total_tokens(messages)) is not None:
        metadata["total_tokens"] = tokens
    fields: dict[str, Any] = {"trajectory_id": f"{ID_PREFIX}:{safe_id(_run_key(messages, record, ctx))}",
                              "task": clip_task(steps.prompts[0]), "steps": steps.finish(metadata),
                              "metadata": metadata}
    models = [m["model_name"] for m in messages if m["kind"] == "response" and isinstance(m.get("model_name"), str)]
    if models:
        fields["model_id"] = models[-1]
    times = [t for m in messages for t in (iso_time(x.get("timestamp")) for x in (m, *m["parts"])) if t is not None]
    if times:
        fields["created_at"] = min(times)
    return build(fields, ctx)
