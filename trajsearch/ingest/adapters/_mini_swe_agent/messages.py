"""One stored mini-swe-agent message, whatever API wrote it -> ``{role, text, calls, call_id, extra, reasoning}``.

mini-swe-agent saves the messages its model client exchanged, so a
trajectory holds chat completions (``content`` a string or a list of text
parts, Anthropic style), tool calls (``tool_calls`` + ``role: "tool"``
replies) or OpenAI Responses API items (a whole ``{"object": "response",
"output": [...]}`` per model turn, ``function_call_output`` replies), plus
the harness's ``extra`` (timestamps, saved actions, return codes). The step
walk (``steps``) reads only the one shape made here, so a new model API
changes this module alone.
"""

from __future__ import annotations

import re
from typing import Any

from .._common import as_list, content_text, timestamp, tool_arguments

def _key(value: Any) -> str | None:
    """A call id usable as a key (ids are strings; anything else matches nothing)."""
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _parts_text(content: Any) -> str:
    """Text of a content value: a string, or parts (``text`` / ``input_text`` / ``output_text`` ...)."""
    if isinstance(content, list):
        texts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    texts.append(text)
            elif isinstance(part, str):
                texts.append(part)
        return "\n".join(texts)
    return content_text(content)


def _call(raw: Any) -> dict[str, Any] | None:
    """A tool call (chat completions nested ``function``, or flat Responses API item) as id/name/arguments."""
    if not isinstance(raw, dict):
        return None
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    return {
        "id": _key(raw.get("id") or raw.get("call_id")),
        "name": fn.get("name"),
        "arguments": tool_arguments(fn.get("arguments")),
    }


def normalise(msg: dict[str, Any]) -> dict[str, Any]:
    """One stored message as ``{role, text, calls, call_id, extra, reasoning}`` whatever API wrote it."""
    extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
    kind = msg.get("type")
    if msg.get("object") == "response" or isinstance(msg.get("output"), list) and "role" not in msg:
        texts, calls, reasoning = [], [], []
        for item in as_list(msg.get("output")):
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message":
                texts.append(_parts_text(item.get("content")))
            elif item.get("type") == "function_call":
                calls.append(_call(item))
            elif item.get("type") == "reasoning":
                reasoning.append(_parts_text(item.get("summary")) or _parts_text(item.get("content")))
        return {"role": "assistant", "text": "\n".join(t for t in texts if t), "calls": [c for c in calls if c],
                "extra": extra, "reasoning": "\n".join(r for r in reasoning if r) or None, "model": msg.get("model")}
    if kind == "function_call_output":
        output = msg.get("output")
        return {"role": "tool", "text": output if isinstance(output, str) else _parts_text(output),
                "call_id": _key(msg.get("call_id")), "extra": extra}
    if kind == "function_call":
        return {"role": "assistant", "text": "", "calls": [_call(msg)], "extra": extra}
    calls = [c for c in (_call(c) for c in as_list(msg.get("tool_calls"))) if c]
    return {
        "role": msg.get("role"),
        "text": _parts_text(msg.get("content")),
        "calls": calls,
        "call_id": _key(msg.get("tool_call_id")),
        "extra": extra,
        "reasoning": msg.get("reasoning_content") if isinstance(msg.get("reasoning_content"), str) else None,
    }


def message_time(msg: dict[str, Any], extra: dict[str, Any]) -> Any:
    response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
    return timestamp(extra.get("timestamp")) or timestamp(msg.get("timestamp")) or timestamp(
        response.get("created") or msg.get("created_at"))


#: The header a CS 294-264 homework agent (the course's ReAct scaffold, ``message_id_to_context``) writes before each
#: message of the log it renders into a run file's ``context``.
_LOGGED = re.compile(r'^-{28}\n\|MESSAGE\(role="(\w+)", id=(\d+)\)\|\n', re.M)


def logged_messages(context: Any) -> list[dict[str, Any]]:
    """The messages of a ``context`` log (``|MESSAGE(role="user", id=1)|`` headers), in order; [] if it is none.

    The scaffold numbers its messages 0, 1, 2, ...: a header that is not the next number is text inside a
    message (a model echoing the log's format, an agent that nests its headers), not a new one."""
    if not isinstance(context, str):
        return []
    headers, expected = [], 0
    for header in _LOGGED.finditer(context):
        if int(header.group(2)) == expected:
            headers.append(header)
            expected += 1
    ends = [h.start() for h in headers[1:]] + [len(context)]
    # each message is rendered "<header><content>\n", and the messages are joined with "\n"
    return [{"role": h.group(1), "content": context[h.end():end].removesuffix("\n" if end == len(context) else "\n\n")}
            for h, end in zip(headers, ends)]
