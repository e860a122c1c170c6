"""OTLP's encodings of values, ids and times -> plain Python values.

OTLP/JSON wraps every attribute value in an ``AnyValue`` object and writes
attributes as ``[{"key", "value"}]``; the SDKs' console output nests them or
flattens them instead. Trace and span ids are hex (``0x``-prefixed in the
Python SDK's console output), integers (its ``to_json`` context objects as
any-agent dumps them) or base64 (protobuf's JSON printer); times are
epoch nanoseconds, ISO text or the JS SDK's ``[seconds, nanoseconds]``.
Every shape in ``shapes`` reads its values through these, so one trace read
from a console dump and from an OTLP file is the same run; they sit apart
from the shapes because they know encodings, not record layouts.
:func:`clean_ids` does the same for the tool-call ids inside a finished node
(the Agents SDK and Vercel AI adapters use it too).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

from .._spans import Node, flatten, iso_seconds

_HEX = re.compile(r"^[0-9a-fA-F]+$")


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` object -> a plain Python value."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "arrayValue" in value:
        return [any_value(v) for v in _values(value["arrayValue"])]
    if "kvlistValue" in value:
        return {kv["key"]: any_value(kv.get("value")) for kv in _values(value["kvlistValue"])
                if isinstance(kv, dict) and isinstance(kv.get("key"), str)}
    return None if not value else value


def _values(holder: Any) -> list[Any]:
    values = holder.get("values") if isinstance(holder, dict) else None
    return values if isinstance(values, list) else []


def attributes(raw: Any) -> dict[str, Any]:
    """OTLP ``[{"key", "value": AnyValue}]`` or a (possibly nested) dict -> flat dotted dict."""
    if isinstance(raw, list):
        return {kv["key"]: any_value(kv.get("value")) for kv in raw
                if isinstance(kv, dict) and isinstance(kv.get("key"), str) and kv["key"]}
    if isinstance(raw, dict):
        return flatten(raw)
    return {}


def normal_id(value: Any, nbytes: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id as lower-case hex; other ids unchanged.

    ``0x``-prefixed hex (the Python SDK's console output), integers (its
    ``to_json`` context objects as any-agent dumps them) and base64 (protobuf's
    JSON printer) are all the same id in different clothes.
    """
    if value is None or value == "" or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"{value:0{nbytes * 2}x}" if value >= 0 else str(value)
    text = str(value).strip()
    if text[:2].lower() == "0x" and _HEX.match(text[2:]):
        return text[2:].lower()
    if len(text) == nbytes * 2 and _HEX.match(text):
        return text.lower()
    if len(text) == 4 * ((nbytes + 2) // 3) and text.endswith("="):
        try:
            raw = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            return text
        if len(raw) == nbytes:
            return raw.hex()
    return text


def span_time(value: Any) -> float | None:
    """Unix seconds from ISO text, epoch s/ms/us/ns, or a JS ``[seconds, nanoseconds]`` pair."""
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, (int, float)) for v in value):
        seconds = value[0] + value[1] / 1e9
        return seconds if seconds > 0 else None
    return iso_seconds(value)


def _scalar_id(value: Any) -> str | None:
    return str(value) if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "" else None


def clean_ids(node: Node) -> Node:
    """Call ids as strings or None everywhere in a node (assembly matches calls to results by them)."""
    node.call_id = _scalar_id(node.call_id)
    for message in (*node.input_messages, *node.output_messages):
        message["call_id"] = _scalar_id(message.get("call_id"))
        message["calls"] = [
            dict(c, id=_scalar_id(c.get("id")), name=c.get("name") if isinstance(c.get("name"), str) else None)
            for c in message.get("calls") or [] if isinstance(c, dict)
        ]
    return node
