"""``vercel-ai-chat``: a Vercel AI SDK chat as apps persist it (``UIMessage[]``, AI SDK 5 on).

A module of its own, not a reader in ``vercel_ai``: that one reads the SDK's OpenTelemetry spans (grouped by trace
across an input), this one a saved conversation (a whole file is one run); they share no shape.

Records: the ``UIMessage`` objects of one chat (``packages/ai/src/ui/ui-messages.ts``: ``id``, ``role`` ``user`` /
``assistant`` / ``system``, ``parts`` each told by its ``type``: ``text``, ``reasoning``, ``step-start``,
``tool-<name>``, ``dynamic-tool``, ``source-url``, ``source-document``, ``file``, ``data-<name>``; ``metadata``), as
``useChat``'s ``messages`` or ``toUIMessageStream``'s ``onFinish`` give them: a JSON array (one message a line
too; the docs' chat-persistence example, ``saveChat``, writes the array to ``.chats/<id>.json``), or an object
``{"id": <chat id>, "messages": [...]}`` (the chat as ``useChat`` holds it, as apps save it); an array of such
objects is a run each.

Mapping
- task: the first user message's text parts; later user messages (the next turns) are ``metadata.user_prompts`` and
  the observation of the answer before them;
- steps: one per tool part (``tool-<name>``, or ``dynamic-tool`` with its ``toolName``): arguments = ``input``,
  observation = ``output`` (JSON where not text), error = ``errorText`` (``state: output-error``); a call the user
  denied (``output-denied``, or an ``approval`` of ``approved: false``) is ``not run: denied: <reason>``, one
  awaiting approval or never answered (``approval-requested``, ``input-available``, ``input-streaming``: the stream
  stopped) ``not run: ...`` too; an assistant's text is a ``respond`` step, unless tool calls follow it within
  the same model step (``step-start`` parts divide them): then the thought of those calls, as is its reasoning;
- trajectory_id = ``vercel-ai-chat:<chat id>``, else ``vercel-ai-chat:<digest>`` of the first message (the same
  chat saved again after more turns keeps its id; the longer is kept: ``read.DistinctIds``);
- outcome: ``unknown`` (a chat holds what was said, not whether the task was done).
- not detected: Gemini's ``{role, parts}`` contents (parts without ``type``), chat-completion messages
  (``content``), the SDK's ``ModelMessage[]`` / ``steps`` (``content`` parts) and v4's ``toolInvocations``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL, not_run
from trajsearch.model import Trajectory

from ._agent_cli import finish_steps
from ._common import Context, RecordError, build, clip_task, item_positions, json_kind, safe_id, tool_arguments
from ._vendor import result_text

NAME = "vercel-ai-chat"
#: A file is one chat (a JSON array of its messages, or a ``{id, messages}`` object): read whole.
WHOLE_FILE = True
ID_PREFIX = "vercel-ai-chat"
#: The docs' chat-persistence example keeps a chat a file in ``.chats/<id>.json`` (``getChatFile``): a walk reads it.
SESSION_FOLDERS = (".chats",)

_ROLES = frozenset({"user", "assistant", "system"})
#: The part types of a UIMessage besides ``tool-<name>`` and ``data-<name>`` (``ui-messages.ts``, AI SDK 5-7).
_PARTS = frozenset({"text", "reasoning", "step-start", "dynamic-tool", "source-url", "source-document", "file"})
#: Tool states with no result: the call was not run (yet) when the chat was saved, and why.
_UNANSWERED = {"input-streaming": "the stream stopped while the model wrote its input",
               "input-available": "no result was recorded",
               "approval-requested": "awaiting the user's approval",
               "approval-responded": "approved, no result was recorded"}


def _part_type(part: Any) -> bool:
    kind = part.get("type") if isinstance(part, dict) else None
    return isinstance(kind, str) and (kind in _PARTS or kind.startswith(("tool-", "data-")))


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


def _chat(item: Any) -> bool:
    """A chat saved with its id: ``{"id": <chat id>, "messages": [UIMessage, ...]}``."""
    return (isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("messages"), list)
            and bool(item["messages"]) and all(_fault(m) is None for m in item["messages"][:5]))


def matches(record: Any) -> bool:
    """A UIMessage (the first of a chat saved as an array) or a persisted chat object."""
    return _fault(record) is None or _chat(record)


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The chats of a file: one object; an array of them (a run each); else the array's messages, one chat."""
    items = document if isinstance(document, list) else [document]
    if all(_chat(item) for item in items):
        yield from zip(item_positions(items), items)
    else:
        yield "file", {"messages": items}


def _text(parts: list[dict[str, Any]], kind: str = "text") -> str:
    return "\n\n".join(t for p in parts if p["type"] == kind and isinstance(t := p.get("text"), str) and t.strip())


def _tool_step(part: dict[str, Any], thought: str | None) -> dict[str, Any]:
    name = part.get("toolName") if part["type"] == "dynamic-tool" else part["type"].removeprefix("tool-")
    step: dict[str, Any] = {"thought": thought, "action": name if isinstance(name, str) and name else UNNAMED_TOOL,
                            "arguments": tool_arguments(part.get("input", part.get("rawInput")))}
    state, approval = part.get("state"), part.get("approval")
    approval = approval if isinstance(approval, dict) else {}
    if state == "output-denied" or approval.get("approved") is False:
        reason = approval.get("reason")
        step["error"] = not_run(f"denied: {reason}" if isinstance(reason, str) and reason else "denied")
    elif state == "output-error":
        step["error"] = str(part.get("errorText") or "the tool failed")
    elif state == "output-available":
        step["observation"] = result_text(part.get("output")) or ""
    else:
        step["error"] = not_run(_UNANSWERED.get(state, f"its state is {state!r}"))
    return step


def _segments(parts: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    """An assistant message's model steps: its parts between ``step-start`` parts."""
    segment: list[dict[str, Any]] = []
    for part in parts:
        if part["type"] == "step-start":
            if segment:
                yield segment
            segment = []
        else:
            segment.append(part)
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


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if not (isinstance(record, dict) and isinstance(record.get("messages"), list)):
        raise RecordError(f"not an AI SDK UIMessage nor a persisted chat ({{id, messages}}): {_fault(record)}")
    messages = record["messages"]
    if not messages:
        raise RecordError("an empty AI SDK chat: no messages")
    for n, msg in enumerate(messages, 1):
        if (fault := _fault(msg)) is not None:
            raise RecordError(f"message {n} of the AI SDK chat is no UIMessage: {fault}")
    prompts: list[str] = []
    metadata: dict[str, Any] = {}
    steps = _steps(messages, prompts)
    if not prompts:
        raise RecordError("an AI SDK chat with no user text: no task")
    if len(prompts) > 1:
        metadata["user_prompts"] = prompts[1:]
    chat_id = record.get("id")
    if not (isinstance(chat_id, str) and chat_id):
        canonical = json.dumps(messages[0], sort_keys=True, ensure_ascii=False)
        chat_id = hashlib.blake2b(canonical.encode(), digest_size=10).hexdigest()
    return build({"trajectory_id": f"{ID_PREFIX}:{safe_id(chat_id)}", "task": clip_task(prompts[0]),
                  "steps": finish_steps(steps, metadata), "metadata": metadata}, ctx)
