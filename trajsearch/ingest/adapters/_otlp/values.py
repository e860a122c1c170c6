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


#: The members of an ``AnyValue`` (its ``oneof value``: one is set), by their JSON names.
_ANY_MEMBERS = ("stringValue", "boolValue", "intValue", "doubleValue", "bytesValue", "arrayValue", "kvlistValue")
_PROTO_NAME = re.compile(r"_([a-z])")


def _json_name(name: str) -> str:
    """A protobuf field name as its JSON name (``string_value`` -> ``stringValue``); a JSON name as it is."""
    return _PROTO_NAME.sub(lambda m: m.group(1).upper(), name)


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` object -> a plain Python value.

    Its members by their JSON names or protobuf's (``string_value``); a member written null is unset: Phoenix's
    REST API (``/v1/projects/{p}/spans/otlpv1``) writes every member, the unset ones null, so a ``bool_value``
    comes after ``"string_value": null``. Any other object (a log record's body as an SDK's console writes it)
    is returned as it is."""
    if not isinstance(value, dict):
        return value
    named = {_json_name(k): k for k in value}
    if not named.keys() & _ANY_MEMBERS:
        return value if value else None
    member = next((m for m in _ANY_MEMBERS if m in named and value[named[m]] is not None), None)
    if member is None:
        return None
    held = value[named[member]]
    if member == "intValue":
        try:
            return int(held)
        except (TypeError, ValueError):
            return held
    if member == "arrayValue":
        return [any_value(v) for v in _values(held)]
    if member == "kvlistValue":
        return {kv["key"]: any_value(kv.get("value")) for kv in _values(held)
                if isinstance(kv, dict) and isinstance(kv.get("key"), str)}
    return held


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
