"""The formats' schemas and checks: what each consumer accepts, so a bad record is caught before upload.

OpenAI's upload and LLaMA-Factory's converter reject or silently mangle records
that break their rules; :data:`OPENAI_CHAT_SCHEMA`, :func:`validate_openai_chat`
and :func:`validate_sharegpt` write those rules down (the tests run every exported
record through them).
"""

from __future__ import annotations

import json
from typing import Any


#: OpenAI's fine-tuning chat example (API reference: ``FineTuneChatRequestInput``; fine-tuning guide,
#: "function calling" examples), as a JSON Schema: only these top-level keys, these roles, tool calls
#: of type ``function`` whose ``arguments`` is a string; assistant ``weight`` 0 or 1.
OPENAI_CHAT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["messages"],
    "additionalProperties": False,
    "properties": {
        "messages": {"type": "array", "minItems": 1, "items": {"oneOf": [
            {"type": "object", "additionalProperties": False, "required": ["role", "content"],
             "properties": {"role": {"enum": ["system", "developer"]}, "content": {"type": "string"},
                            "name": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["role", "content"],
             "properties": {"role": {"const": "user"}, "content": {"type": "string"}, "name": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["role"],
             "anyOf": [{"required": ["content"], "properties": {"content": {"type": "string"}}},
                       {"required": ["tool_calls"]}],
             "properties": {
                 "role": {"const": "assistant"}, "content": {"type": ["string", "null"]},
                 "name": {"type": "string"}, "weight": {"enum": [0, 1]},
                 "tool_calls": {"type": "array", "minItems": 1, "items": {
                     "type": "object", "additionalProperties": False, "required": ["id", "type", "function"],
                     "properties": {
                         "id": {"type": "string"}, "type": {"const": "function"},
                         "function": {"type": "object", "additionalProperties": False,
                                      "required": ["name", "arguments"],
                                      "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}}},
                     }}},
             }},
            {"type": "object", "additionalProperties": False, "required": ["role", "content", "tool_call_id"],
             "properties": {"role": {"const": "tool"}, "content": {"type": "string"},
                            "tool_call_id": {"type": "string"}}},
        ]}},
        "tools": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["type", "function"],
            "properties": {"type": {"const": "function"}, "function": {
                "type": "object", "required": ["name"],
                "properties": {"name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                               "description": {"type": "string"}, "parameters": {"type": "object"},
                               "strict": {"type": "boolean"}}}}}},
        "parallel_tool_calls": {"type": "boolean"},
        "functions": {"type": "array"},
    },
}


def validate_openai_chat(record: dict[str, Any], *, allow_metadata: bool = True) -> list[str]:
    """What is wrong with one openai-chat record (empty: nothing).

    The schema's shape checks plus what a schema cannot say: at least one assistant
    message; every ``tool`` message answers a tool call id of an earlier assistant
    message; ``arguments`` parse as a JSON object; tool names match ``tools``.
    ``allow_metadata`` accepts our inline provenance key.
    """
    problems = []
    data = dict(record)
    if allow_metadata:
        data.pop("metadata", None)
    problems += _schema_errors(data, OPENAI_CHAT_SCHEMA)
    if problems:
        return problems
    messages = data["messages"]
    if not any(m["role"] == "assistant" for m in messages):
        problems.append("messages: no assistant message to learn from")
    open_calls: set[str] = set()
    names = {t["function"]["name"] for t in data.get("tools", [])}
    for n, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            open_calls.add(call["id"])
            try:
                if not isinstance(json.loads(call["function"]["arguments"]), dict):
                    problems.append(f"messages[{n}]: arguments of {call['id']} are not a JSON object")
            except ValueError:
                problems.append(f"messages[{n}]: arguments of {call['id']} are not JSON")
            if names and call["function"]["name"] not in names:
                problems.append(f"messages[{n}]: tool {call['function']['name']!r} is not in tools")
        if message["role"] == "tool" and message["tool_call_id"] not in open_calls:
            problems.append(f"messages[{n}]: tool message answers no earlier tool call ({message['tool_call_id']})")
    return problems


def validate_sharegpt(record: dict[str, Any]) -> list[str]:
    """What is wrong with one sharegpt record as LLaMA-Factory's converter reads it (empty: nothing).

    ``conversations`` of ``{"from", "value"}`` strings; after an optional leading
    ``system`` turn, ``human``/``observation`` at odd positions and
    ``gpt``/``function_call`` at even ones, an even count; ``function_call`` values
    are JSON ``{"name", "arguments"}``; ``tools`` (if any) a JSON string of a list.
    """
    problems = []
    turns = record.get("conversations")
    if not isinstance(turns, list) or not turns:
        return ["conversations: missing or empty"]
    if turns[0].get("from") == "system":
        turns = turns[1:]
    for n, turn in enumerate(turns):
        if set(turn) != {"from", "value"} or not isinstance(turn.get("value"), str):
            problems.append(f"conversations[{n}]: expected {{'from', 'value'}} with a string value")
            continue
        allowed = ("human", "observation") if n % 2 == 0 else ("gpt", "function_call")
        if turn["from"] not in allowed:
            problems.append(f"conversations[{n}]: {turn['from']!r} where {' or '.join(allowed)} must be")
        if turn["from"] == "function_call":
            try:
                call = json.loads(turn["value"])
                if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
                    problems.append(f"conversations[{n}]: a function_call is JSON {{'name', 'arguments'}}")
            except ValueError:
                problems.append(f"conversations[{n}]: function_call value is not JSON")
    if len(turns) % 2:
        problems.append("conversations: an odd number of turns (the last must be gpt or function_call)")
    if "tools" in record:
        try:
            if not isinstance(json.loads(record["tools"]), list):
                problems.append("tools: not a JSON list")
        except (TypeError, ValueError):
            problems.append("tools: not a JSON string")
    if "system" in record and not isinstance(record["system"], str):
        problems.append("system: not a string")
    return problems


def _schema_errors(data: Any, schema: dict[str, Any]) -> list[str]:
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema ships with the test extras
        return []
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or 'record'}: {e.message[:200]}"
            for e in validator.iter_errors(data)]
