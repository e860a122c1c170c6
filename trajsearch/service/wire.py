"""Request bytes -> messages, naming the field when the bytes are not a valid message.

gRPC's own deserialisation turns any undecodable request (invalid UTF-8 in a
string field, a truncated message) into ``INTERNAL: Exception deserializing
request!`` before the servicer sees it, and logs nothing of ours. The service
therefore receives raw bytes (its interceptor installs no deserializer) and
parses them here: a request protobuf refuses becomes a :class:`FieldError`
(``INVALID_ARGUMENT``) whose field is found by walking the wire format, e.g.
``context.env_versions[1]: not valid UTF-8``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from .validate import FieldError

_VARINT, _I64, _LEN, _SGROUP, _EGROUP, _I32 = 0, 1, 2, 3, 4, 5


def parse(message_type: Any, data: bytes) -> Any:
    """``message_type.FromString(data)``, or a FieldError naming what is wrong and where."""
    try:
        return message_type.FromString(data)
    except Exception:  # noqa: BLE001 (DecodeError, or anything else a parser may raise on garbage)
        field, problem = locate(message_type.DESCRIPTOR, data)
        raise FieldError(field or "request", problem or f"not a valid {message_type.DESCRIPTOR.name} message") from None


def locate(descriptor: Descriptor, data: bytes, prefix: str = "") -> tuple[str, str]:
    """The first field of ``data`` that cannot be decoded as ``descriptor``, and why ("", "" if none found)."""
    pos, seen = 0, defaultdict(int)
    while pos < len(data):
        tag, pos = _varint(data, pos)
        if tag is None:
            return prefix.rstrip(".") or "request", "malformed field tag"
        number, wire_type = tag >> 3, tag & 7
        field = descriptor.fields_by_number.get(number)
        name = f"{prefix}{field.name}" if field else f"{prefix}field {number}"
        if field is not None and _repeated(field):
            name, seen[number] = f"{name}[{seen[number]}]", seen[number] + 1
        if number == 0:
            return name, "field number 0 is not allowed"
        if wire_type == _VARINT:
            value, pos = _varint(data, pos)
            if value is None:
                return name, "truncated number"
        elif wire_type in (_I64, _I32):
            pos += 8 if wire_type == _I64 else 4
            if pos > len(data):
                return name, "truncated number"
        elif wire_type == _LEN:
            size, pos = _varint(data, pos)
            if size is None or pos + size > len(data):
                return name, "truncated value"
            payload, pos = data[pos:pos + size], pos + size
            if field is None:
                continue
            if field.type == FieldDescriptor.TYPE_STRING:
                try:
                    payload.decode("utf-8")
                except UnicodeDecodeError:
                    return name, "not valid UTF-8"
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                where, problem = locate(field.message_type, payload, f"{name}.")
                if problem:
                    return where, problem
        else:
            return name, f"unsupported wire type {wire_type}"
    return "", ""


def _repeated(field: FieldDescriptor) -> bool:
    is_repeated = getattr(field, "is_repeated", None)  # protobuf >= 5.29; label is deprecated
    return bool(is_repeated) if is_repeated is not None else field.label == FieldDescriptor.LABEL_REPEATED


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    value, shift = 0, 0
    while pos < len(data) and shift < 70:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None, pos
