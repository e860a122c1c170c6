"""``vercel-ai-chat``: a Vercel AI SDK chat as apps persist it (``UIMessage[]``, AI SDK 5 on, and 4.2's ``parts``).

A module of its own, not a reader in ``vercel_ai``: that one reads the SDK's OpenTelemetry spans (grouped by trace
across an input), this one a saved conversation (a whole file is one run); they share no shape.

Records: the ``UIMessage`` objects of one chat (``packages/ai/src/ui/ui-messages.ts``: ``id``, ``role`` ``user`` /
``assistant`` / ``system``, ``parts`` each told by its ``type``: ``text``, ``reasoning``, ``step-start``,
``tool-<name>``, ``dynamic-tool``, ``source-url``, ``source-document``, ``file``, ``data-<name>``, and AI SDK 7's
``custom`` and ``reasoning-file``; ``metadata``), as
``useChat``'s ``messages`` or ``toUIMessageStream``'s ``onFinish`` give them: a JSON array (one message a line
too; the docs' chat-persistence example, ``saveChat``, writes the array to ``.chats/<id>.json``), or an object
``{"id": <chat id>, "messages": [...]}`` (the chat as ``useChat`` holds it, as apps save it); an array of such
objects is a run each (a blank or broken one rejected alone). AI SDK 4.2-4.3 messages with ``parts`` (its
``packages/ui-utils/src/types.ts``) are read too: ``tool-invocation`` parts hold the call in ``toolInvocation``
(``state`` ``partial-call`` / ``call`` / ``result``, ``toolName``, ``args``, ``result``), ``reasoning`` parts their
text in ``reasoning``, ``source`` parts a source.

Mapping
- task: the first user message's text parts; later user messages (the next turns) are ``metadata.user_prompts`` and
  the observation of the answer before them;
- steps: one per tool part (``tool-<name>``, or ``dynamic-tool`` with its ``toolName``): arguments = ``input``,
  observation = ``output`` (JSON where not text), error = ``errorText`` (``state: output-error``); a call the user
  denied (``output-denied``, or an ``approval`` of ``approved: false``) is ``not run: denied: <reason>``, one
  awaiting approval or never answered (``approval-requested``, ``input-available``, ``input-streaming``: the stream
  stopped) ``not run: ...`` too; an assistant's text is a ``respond`` step, unless tool calls follow it within
  the same model step (``step-start`` parts divide them, and a provider-executed tool's result): then the thought
  of those calls, as is its reasoning;
- trajectory_id = ``vercel-ai-chat:<chat id>``, else ``vercel-ai-chat:<digest>`` of the first message where that
  has an ``id`` (the SDK gives every message one), else the file and place (``file_run_key``: ``{"role": "user",
  "parts": [{"type": "text", "text": "hi"}]}`` opens many chats). The same chat saved again after more turns keeps
  its id, so a later ingest replaces it; two copies in one ingest are kept apart (``read.DistinctIds``: no session
  start tells that one continues the other);
- outcome: ``unknown`` (a chat holds what was said, not whether the task was done);
- the messages' ``metadata`` as the SDK's docs attach it: ``createdAt`` the run's time, ``model`` its model,
  ``totalTokens`` summed ``metadata.total_tokens`` (not the cookbook's ``usage``: its last step's alone); an
  app's other keys are not read.
- a saved ``ModelMessage[]`` too (``packages/provider-utils/src/types/*-model-message.ts``: a history as
  ``[...messages, ...response.messages]``, AI SDK 4 to 7): read as the UIMessages it would be, each assistant message
  a model step, each ``tool-call`` answered by the ``tool-result`` (``output`` ``json`` / ``text`` / ``content``,
  ``error-text`` / ``error-json`` an error, ``execution-denied`` a denial; 4's ``result`` / ``isError``) or approval
  (``tool-approval-request`` / ``-response``) of its id. Told by a tool part as only the SDK writes it (``tool-call``
  with ``toolCallId``, in an assistant or tool message, within the head ``detect`` reads). ``response.messages``
  alone holds no prompt, a result's ``steps`` only the provider's request bodies: refused, saying so.
- not detected: Gemini's ``{role, parts}`` contents (parts without ``type``), chat-completion and Anthropic messages
  and v4's ``toolInvocations``; a ``ModelMessage[]`` with no tool part is not told from a chat-completion list (as
  those, unrecognised: ``--format vercel-ai-chat`` reads it).
- a walk reads only the JSON files directly in a ``.chats`` folder (the example's ``<id>.json``); another file there
  that is no chat (an app's settings) or a chat with no messages yet (``createChat``'s) is passed over, named so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL, not_run
from trajsearch.model import Trajectory

from ..sources import whole_document
from ._agent_cli import finish_steps, first_time
from ._common import (ITEM_AT, Context, RecordError, build, clip_task, file_run_key, item_positions, json_digest,
                      json_kind, safe_id, tool_arguments)
from ._spans.messages import denied_error
from ._vendor import result_text, sdk_tool_output

NAME = "vercel-ai-chat"
#: A file is one chat (a JSON array of its messages, or a ``{id, messages}`` object): read whole.
WHOLE_FILE = True
ID_PREFIX = "vercel-ai-chat"
#: The docs' chat-persistence example keeps a chat a file in ``.chats/<id>.json`` (``getChatFile``): a walk reads
#: those, not the rest of a folder other apps name so too (a plugin's notes, ``.chats/chats.db``, attachments).
SESSION_FOLDERS = (".chats/*.json",)

_ROLES = frozenset({"user", "assistant", "system"})
#: The part types of a UIMessage besides ``tool-<name>`` and ``data-<name>`` (``ui-messages.ts``, AI SDK 5-7: ``custom``
#: and ``reasoning-file`` from 7; ``source`` AI SDK 4.2's).
_PARTS = frozenset({"text", "reasoning", "step-start", "dynamic-tool", "source-url", "source-document", "file",
                    "custom", "reasoning-file", "source"})
#: AI SDK 4.2-4.3's tool states, as 5's: a call streaming, made, answered.
_V4_STATES = {"partial-call": "input-streaming", "call": "input-available", "result": "output-available"}
#: Tool states with no result: the call was not run (yet) when the chat was saved, and why.
_UNANSWERED = {"input-streaming": "the stream stopped while the model wrote its input",
               "input-available": "no result was recorded",
               "approval-requested": "awaiting the user's approval",
               "approval-responded": "approved, no result was recorded"}


#: The content parts of a ``ModelMessage`` (``packages/provider-utils/src/types/content-part.ts``, AI SDK 5-7; 4's
#: ``redacted-reasoning``), and those only the AI SDK writes (camelCase ids, hyphenated types: Anthropic's are
#: ``tool_use`` / ``tool_result`` with ``id`` / ``tool_use_id``), which alone tell such a list from chat-completion's.
_MODEL_PARTS = frozenset({"text", "image", "file", "reasoning", "redacted-reasoning", "custom", "reasoning-file",
                          "tool-call", "tool-result", "tool-approval-request", "tool-approval-response"})
_MODEL_MARKS = {"tool-call": "toolCallId", "tool-result": "toolCallId", "tool-approval-request": "approvalId",
                "tool-approval-response": "approvalId"}
#: Where a message that is no ModelMessage keeps its calls, and whose it is (read as one, its calls were lost).
_OTHER_CALLS = {"toolInvocations": "as AI SDK 4's UIMessage", "tool_calls": "as a chat-completion message",
                "function_call": "as a chat-completion message"}
#: A saved ``ModelMessage[]`` opens with a system or user message chat-completion writes alike; its head tells it
#: by a tool part only the SDK writes (a ``tool-call`` / ``tool-result`` type, a ``toolCallId``) in an assistant or
#: tool message, in any key order (a ``sort_keys`` dump, Postgres ``jsonb``'s); the ``role`` keeps out the SDK's
#: stream parts (a saved ``fullStream``), which share the tool parts' shape.
SIGNATURE = re.compile(r'\A(?=[\s\S]*?"type"\s*:\s*"tool-(?:call|result)")(?=[\s\S]*?"toolCallId"\s*:)'
                       r'(?=[\s\S]*?"role"\s*:\s*"(?:assistant|tool)")')


def _part_type(part: Any) -> bool:
    kind = part.get("type") if isinstance(part, dict) else None
    return isinstance(kind, str) and (kind in _PARTS or kind.startswith(("tool-", "data-"))) and (
        kind != "text" or isinstance(part.get("text"), str))  # (Crush's rows: {type: "text", data: {text}})


def _fault(item: Any) -> str | None:
    """What keeps ``item`` from being a UIMessage, None when nothing does."""
    if not isinstance(item, dict):
        return f"expected a JSON object, got {json_kind(item)}"
    if item.get("role") not in _ROLES:
        return f"its 'role' is {item.get('role')!r}, not user, assistant or system"
    if not isinstance(item.get("parts"), list) or not item["parts"]:
        return f"its 'parts' is {json_kind(item.get('parts'))}, not a non-empty array"
    return next((f"its part {k} is no UIMessage part (a 'type' text, reasoning, tool-<name> ...)"
                 for k, p in enumerate(item["parts"], 1) if not _part_type(p)), None)


def _model_fault(item: Any) -> str | None:
    """What keeps ``item`` from being a ``ModelMessage`` (``generateText``'s ``response.messages``), None when
    nothing does."""
    if not isinstance(item, dict):
        return f"expected a JSON object, got {json_kind(item)}"
    if "parts" in item:  # (AI SDK 4.2's UIMessage keeps a 'content' text beside its parts)
        return "it has 'parts', as a UIMessage"
    if (calls := next((k for k in _OTHER_CALLS if k in item), None)) is not None:
        return f"it has '{calls}', {_OTHER_CALLS[calls]}, not read"
    if item.get("role") not in (*_ROLES, "tool"):
        return f"its 'role' is {item.get('role')!r}, not system, user, assistant or tool"
    content = item.get("content")
    if isinstance(content, str) and item["role"] != "tool":
        return None
    if item["role"] == "tool" and not isinstance(content, list):
        return f"its 'content' is {json_kind(content)}, not the array of tool-result parts a tool message holds"
    if not isinstance(content, list):
        return f"its 'content' is {json_kind(content)}, not a text or an array of parts"
    return next((fault for k, p in enumerate(content, 1) if (fault := _model_part_fault(p, k)) is not None), None)


def _model_part_fault(part: Any, k: int) -> str | None:
    """What keeps ``part`` (the ``k``-th) from being a ModelMessage content part, None when nothing does: a tool
    part's ids pair calls with results and approvals, so one that is no string is refused, not guessed at."""
    if not (isinstance(part, dict) and part.get("type") in _MODEL_PARTS):
        return f"its part {k} is no ModelMessage part (a 'type' text, reasoning, tool-call, tool-result ...)"
    return next((f"its part {k}'s '{key}' is {json_kind(part[key])}, not a string"
                 for key in ("toolCallId", "approvalId") if key in part and not isinstance(part[key], str)), None)


def _sdk_model_message(item: Any) -> bool:
    """A ModelMessage holding a part only the AI SDK writes (a tool call, result or approval with its id)."""
    return _model_fault(item) is None and isinstance(item["content"], list) and any(
        isinstance(p.get(_MODEL_MARKS.get(p["type"], "")), str) for p in item["content"])


def _chat(item: Any) -> bool:
    """A chat saved with its id: ``{"id": <chat id>, "messages": [UIMessage, ...]}``."""
    return (isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("messages"), list)
            and bool(item["messages"]) and all(_fault(m) is None for m in item["messages"][:5]))


def matches(record: Any) -> bool:
    """A UIMessage (the first of a chat saved as an array), a persisted chat object, or a ModelMessage holding a tool
    part (``response.messages`` opens with the model's); a history opening with the prompt is told by ``SIGNATURE``."""
    return _fault(record) is None or _chat(record) or _sdk_model_message(record)


def side_path(path: Path, fmt: str | None) -> str | None:
    """What a file in a ``.chats`` folder that is no chat is: one with no messages yet (``createChat`` writes ``[]``,
    examples/next's ``{id, messages: []}``), or another app's file there (its settings): not the list of formats."""
    if fmt is not None or path.parent.name != ".chats" or path.suffix != ".json":
        return None
    document, _ = whole_document(path)
    if document == [] or (isinstance(document, dict) and document.get("messages") == []):
        return "an AI SDK chat with no messages yet (a chat created, nothing said)"
    return "a file in .chats/ that is no AI SDK chat (the AI SDK example keeps a chat's UIMessage array there)"


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The chats of a file: one object; an array of them (a run each, a blank or broken one rejected alone, not
    the whole array read as one chat's messages: every item holds ``messages``, whatever it is, or one is a chat);
    else the array's messages, one chat."""
    items = document if isinstance(document, list) else [document]
    if items and (all(isinstance(item, dict) and "messages" in item for item in items) or any(map(_chat, items))):
        yield from zip(item_positions(items), (
            {**item, ITEM_AT: n} if isinstance(item, dict) else item for n, item in enumerate(items, 1)))
    else:
        yield "file", {"messages": items, ITEM_AT: 1}


def _text(parts: list[dict[str, Any]], kind: str = "text") -> str:
    """The parts' texts of ``kind`` (AI SDK 4.2's ``reasoning`` part holds its text in ``reasoning``)."""
    return "\n\n".join(t for p in parts if p["type"] == kind and isinstance(t := p.get("text", p.get("reasoning")), str)
                       and t.strip())


def _from_v4(part: dict[str, Any]) -> dict[str, Any]:
    """AI SDK 4.2-4.3's ``tool-invocation`` part as 5's ``dynamic-tool`` part (a 5 tool named ``invocation`` has no
    ``toolInvocation``)."""
    call = part["toolInvocation"] if isinstance(part["toolInvocation"], dict) else {}
    return {"type": "dynamic-tool", "toolName": call.get("toolName"), "input": call.get("args"),
            "state": _V4_STATES.get(call.get("state"), call.get("state")), "output": call.get("result")}


def _tool_step(part: dict[str, Any], thought: str | None) -> dict[str, Any]:
    if "toolInvocation" in part:
        part = _from_v4(part)
    name = part.get("toolName") if part["type"] == "dynamic-tool" else part["type"].removeprefix("tool-")
    step: dict[str, Any] = {"thought": thought, "action": name if isinstance(name, str) and name else UNNAMED_TOOL,
                            "arguments": tool_arguments(part.get("input", part.get("rawInput")))}
    state, approval = part.get("state"), part.get("approval")
    approval = approval if isinstance(approval, dict) else {}
    if state == "output-denied" or approval.get("approved") is False:
        step["error"] = denied_error(approval.get("reason"))
    elif state == "output-error":
        step["error"] = str(part.get("errorText") or "the tool failed")
    elif state == "output-available":
        step["observation"] = result_text(part.get("output")) or ""
    else:
        step["error"] = not_run(_UNANSWERED.get(state, f"its state is {state!r}"))
    return step


def _segments(parts: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """An assistant message's model steps: its parts between ``step-start`` parts, and a text or reasoning after a
    provider-executed tool (``providerExecuted``: its result came within the step, so what the model says next
    answers it, as after a step of its own)."""
    segment: list[dict[str, Any]] = []
    answered = False  # a provider-executed tool ran in this segment
    for part in parts:
        if part["type"] == "step-start" or (answered and part["type"] in ("text", "reasoning")):
            if segment:
                yield segment
            segment, answered = [], False
        if part["type"] != "step-start":
            segment.append(part)
            answered = answered or part.get("providerExecuted") is True
    if segment:
        yield segment


def _steps(messages: list[dict[str, Any]], prompts: list[str]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    said: list[dict[str, Any]] = []  # the respond steps since the last user message
    for msg in messages:
        if msg["role"] == "user":
            if text := _text(msg["parts"]):
                if prompts:
                    for step in said:
                        step.setdefault("observation", text)
                prompts.append(text)
                said = []
        elif msg["role"] == "assistant":
            for segment in _segments(msg["parts"]):
                text, reasoning = _text(segment), _text(segment, "reasoning") or None
                calls = [p for p in segment if p["type"] == "dynamic-tool" or p["type"].startswith("tool-")]
                thought = "\n\n".join(t for t in (reasoning, text if calls else None) if t) or None
                steps.extend(_tool_step(call, thought) for call in calls)
                if text and not calls:
                    steps.append(step := {"thought": reasoning, "action": "respond", "arguments": {"content": text}})
                    said.append(step)
    return steps


def _tool_outcomes(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each ``tool-call``'s outcome in a ModelMessage list, in the calls' order, as a UIMessage tool part's ``state``
    and the fields that go with it: its ``tool-result`` (an answer, an error, ``execution-denied``) or approval (a
    ``tool-approval-request`` and the user's ``tool-approval-response``, matched by ``approvalId``). Paired in
    order, each to the earliest earlier call of its ``toolCallId`` still unanswered: providers repeat ids (Kimi K2's
    ``functions.run:1``, a mock's ``call_0``), and the SDK writes a step's results in its calls' order."""
    outcomes: list[dict[str, Any]] = []
    waiting: dict[str, list[dict[str, Any]]] = {}  # a call id's unanswered calls, the earliest first
    asked: dict[str, dict[str, Any]] = {}  # an approval id's call
    for part in (p for m in messages if isinstance(m["content"], list) for p in m["content"]):
        call, kind = part.get("toolCallId"), part["type"]
        if kind == "tool-call":
            outcomes.append(outcome := {"state": "input-available"})
            waiting.setdefault(call, []).append(outcome)
        elif kind == "tool-approval-request" and (queue := waiting.get(call)):
            asked[part.get("approvalId")] = outcome = next((o for o in queue if "approval" not in o), queue[-1])
            outcome.update(state="approval-requested", approval={})
        elif kind == "tool-approval-response" and (outcome := asked.get(part.get("approvalId"))) is not None:
            outcome.update(state="approval-responded",
                           approval={"approved": part.get("approved"), "reason": part.get("reason")})
        elif kind == "tool-result" and (queue := waiting.get(call)):
            queue.pop(0).update(_result_state(part))
    return outcomes


def _result_state(part: dict[str, Any]) -> dict[str, Any]:
    """A ``tool-result`` part as a UIMessage tool part's state: its ``output`` (AI SDK 5 on, ``sdk_tool_output``:
    an answer, an error or a denial), or AI SDK 4's ``result`` and ``isError``."""
    output = part.get("output")
    if not isinstance(output, dict):
        if part.get("isError") is True:
            return {"state": "output-error", "errorText": result_text(part.get("result"))}
        return {"state": "output-available", "output": part.get("result")}
    said = sdk_tool_output(output)
    if said.denied:
        return {"state": "output-denied", "approval": {"approved": False, "reason": said.text}}
    if said.failed:
        return {"state": "output-error", "errorText": said.text}
    return {"state": "output-available", "output": said.text}


def _as_ui_parts(message: dict[str, Any], outcomes: Iterator[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ModelMessage's content as the UIMessage parts ``_steps`` reads: its text and reasoning, each tool call a
    ``dynamic-tool`` part with the next of ``outcomes`` (the calls' in order: see ``_tool_outcomes``)."""
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    parts: list[dict[str, Any]] = []
    for part in content:
        if part["type"] in ("text", "reasoning") and isinstance(part.get("text"), str):
            parts.append({"type": part["type"], "text": part["text"]})
        elif part["type"] == "tool-call":
            parts.append({"type": "dynamic-tool", "toolName": part.get("toolName"),
                          "input": part.get("input", part.get("args")),
                          "providerExecuted": part.get("providerExecuted"),
                          **next(outcomes)})
    return parts


def _model_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A ``ModelMessage[]`` (a history saved as ``[...messages, ...response.messages]``) as UIMessages, each assistant
    message one model step. A message with no text, reasoning or call (an image alone) is left out; ``tool``
    messages give their results to the calls (``_tool_outcomes``)."""
    outcomes = iter(_tool_outcomes(messages))
    return [{"role": m["role"], "parts": parts} for m in messages
            if m["role"] in _ROLES and (parts := _as_ui_parts(m, outcomes))]


def _is_model_message(message: Any) -> bool:
    """Whether ``message`` is shaped as a ModelMessage (``content``, no ``parts``) rather than a UIMessage."""
    return isinstance(message, dict) and "content" in message and "parts" not in message


def _message_fault(message: Any, model: bool) -> str | None:
    """What keeps ``message`` from being a ModelMessage (``model``: the chat's first is one) or a UIMessage, None
    when nothing does: a chat is one kind throughout."""
    fault = _model_fault(message) if model else _fault(message)
    return None if fault is None else f"{fault} (the chat's first is a {'ModelMessage' if model else 'UIMessage'})"


def _unread_result(messages: list[Any]) -> str | None:
    """Why a saved ``generateText`` / ``streamText`` result or its ``steps`` is refused, None for anything else: a
    result holds ``steps``, a step (``StepResult``, AI SDK 4 to 7) its ``finishReason``; neither has a ``role``."""
    first = messages[0] if messages else None
    if isinstance(first, dict) and "role" not in first and ("steps" in first or "finishReason" in first):
        return ("an AI SDK generateText/streamText result or its 'steps' (StepResult[]): not read, their prompt is "
                "only in each step's request body, in the provider's own shape (save the history instead: "
                "[...messages, ...response.messages])")
    return None


def _attached(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What an app attached to its messages' ``metadata`` (``toUIMessageStream``'s ``messageMetadata``), in the
    shapes the SDK's docs write it (``25-message-metadata.mdx``: ``createdAt`` ms and ``model`` at the start,
    ``totalTokens`` at the finish): the first time and model, the tokens summed over the answers. Any other key is
    the app's own: not guessed at. Without a time there, AI SDK 4's message ``createdAt`` (a ``Date``, saved ISO)."""
    attached = [m["metadata"] for m in messages if isinstance(m.get("metadata"), dict)]
    times = (*(a.get("createdAt") for a in attached), *(m.get("createdAt") for m in messages))
    models = [m for a in attached if isinstance(m := a.get("model"), str) and m]
    tokens = [t for a in attached if (t := _total_tokens(a)) is not None]
    return {key: value for key, value in (
        ("created_at", first_time(*times)), ("model_id", models[0] if models else None),
        ("total_tokens", sum(tokens) if tokens else None)) if value is not None}


def _total_tokens(attached: dict[str, Any]) -> int | None:
    """A message's tokens: the docs' ``totalTokens`` (the ``finish`` part's ``totalUsage``). Not the cookbook's
    ``usage``: set at each ``finish-step`` and merged, it keeps the last step's alone."""
    value = attached.get("totalTokens")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if isinstance(record, dict) and not isinstance(record.get("messages"), list):  # (split gives every dict them)
        said = f"its 'messages' is {json_kind(record['messages'])}" if "messages" in record else "it has no 'messages'"
        raise RecordError(f"chat {record.get(ITEM_AT)}: {said}, not an array of UIMessages")
    if not isinstance(record, dict):
        raise RecordError(f"not an AI SDK UIMessage nor a persisted chat ({{id, messages}}): {_fault(record)}")
    messages = record["messages"]
    if not messages:
        raise RecordError("an empty AI SDK chat: no messages")
    if why := _unread_result(messages):
        raise RecordError(why)
    model = _is_model_message(messages[0])
    for n, msg in enumerate(messages, 1):
        if (fault := _message_fault(msg, model)) is not None:
            raise RecordError(f"not an AI SDK chat: message {n}: {fault}")
    history = _model_history(messages) if model else None
    messages = history if history is not None else messages
    prompts: list[str] = []
    attached = _attached(messages)
    metadata: dict[str, Any] = {"total_tokens": attached.pop("total_tokens")} if "total_tokens" in attached else {}
    steps = _steps(messages, prompts)
    if not prompts:
        raise RecordError("an AI SDK chat with no user text: no task" + (
            "" if history is None else " (generateText's response.messages alone? save them after the prompt: "
                                       "[...messages, ...response.messages])"))
    if len(prompts) > 1:
        metadata["user_prompts"] = prompts[1:]
    chat_id, first_id = record.get("id"), messages[0].get("id")
    if not (isinstance(chat_id, str) and chat_id):
        chat_id = json_digest(messages[0]) if isinstance(first_id, str) and first_id \
            else file_run_key(ctx, record.get(ITEM_AT))
    return build({"trajectory_id": f"{ID_PREFIX}:{safe_id(chat_id)}", "task": clip_task(prompts[0]),
                  "steps": finish_steps(steps, metadata), "metadata": metadata, **attached}, ctx)
