"""Which format a dump file is in: asked of the adapters, in one place.

Every adapter owns its detection (see ``adapters/__init__``): ``matches(record)``
on the file's first record (for generic GenAI spans, also on the other records
of the file's head: a more specific span format among them wins), an optional
``SIGNATURE`` regex searched in the
first 64 KiB when no record can be parsed from them (a big pretty-printed
document), and optional ``SUFFIXES`` of file names that imply the format when
the content says nothing (a bare message list in ``*.traj.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ijson

from .adapters import ADAPTERS, FORMATS, format_of, why_not_a_run
from .sources import GZIP_ERRORS, PEEK_BYTES, first_line_is_json, is_jsonl, open_dump, parse, peek

#: A pretty-printed document up to this size is parsed whole to detect its format.
WHOLE_PARSE_BYTES = 64 * 1024 * 1024


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _first_array_item(path: Path) -> Any:
    try:
        with open_dump(path) as f:
            for item in ijson.items(f, "item", use_float=True):
                return item
    except (ValueError, *GZIP_ERRORS, Exception):  # ijson raises its own JSONError subclasses
        return None
    return None


def _first_document(path: Path) -> Any:
    """The first JSON value of a pretty-printed file (later concatenated values are not read)."""
    try:
        with open_dump(path) as f:
            text = f.read(WHOLE_PARSE_BYTES + 1).decode("utf-8", errors="replace")
        return json.JSONDecoder().raw_decode(text.lstrip("\ufeff \t\r\n"))[0]
    except (ValueError, RecursionError, *GZIP_ERRORS):
        return None


def first_record(path: Path, head: str) -> Any:
    """The first record of a file as the reader will see it, when it can be had cheaply."""
    text = head.lstrip("\ufeff \t\r\n")
    if not text:
        return None
    if is_jsonl(text):
        return parse(text.split("\n", 1)[0])[0]
    if text.startswith("["):
        return _first_array_item(path)
    if text.startswith("{") and not first_line_is_json(text):
        return _first_document(path) if _size(path) <= WHOLE_PARSE_BYTES else None
    return parse(text.split("\n", 1)[0])[0]


def _head_records(head: str, limit: int = 50) -> list[Any]:
    """The JSON values that lie whole in a file's head (JSON lines, or concatenated pretty-printed objects)."""
    decoder, text, out, at = json.JSONDecoder(), head.lstrip("\ufeff \t\r\n"), [], 0
    while at < len(text) and len(out) < limit:
        try:
            value, end = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            break
        out.append(value)
        at = end
        while at < len(text) and text[at] in " \t\r\n,":
            at += 1
    return out


def _specific_spans(fmt: str, head: str) -> str:
    """A file of generic GenAI spans whose head also holds spans of a more specific format (an SDK's own spans
    written first, then OpenInference's) is of that format: the one whose conventions say most about it."""
    if fmt != "otel-genai":
        return fmt
    found = {format_of(r) for r in _head_records(head)} - {None, "otel-genai"}
    return next((f for f in FORMATS if f in found and getattr(ADAPTERS[f], "GROUPED", False)), fmt)


def _by_signature(head: str) -> str | None:
    return next((name for name, mod in ADAPTERS.items()
                 if getattr(mod, "SIGNATURE", None) is not None and mod.SIGNATURE.search(head)), None)


def _by_suffix(name: str) -> str | None:
    return next((fmt for fmt, mod in ADAPTERS.items()
                 if any(name.endswith(s) for s in getattr(mod, "SUFFIXES", ()))), None)


def detect_format(path: str | Path) -> str:
    """The dump format of one file: by its first record, its head's signature, then its name.

    Raises ValueError naming the file and the supported formats when unsure.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{p} is a directory: formats are detected per file")
    head = peek(p)
    record = first_record(p, head)
    fmt = format_of(record) if record is not None else None
    fmt = _specific_spans(fmt, head) if fmt else None
    fmt = fmt or _by_signature(head[:PEEK_BYTES]) or _by_suffix(p.name.removesuffix(".gz"))
    if fmt is None:
        reason = why_not_a_run(record) if record is not None else None
        if reason:
            raise ValueError(f"{p}: no run in this file: {reason}")
        raise ValueError(
            f"{p}: unrecognised dump format; supported formats: {', '.join(FORMATS)} "
            "(pass --format NAME to force one)"
        )
    return fmt
