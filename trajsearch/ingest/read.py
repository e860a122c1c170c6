"""Read dump files into trajectories: one ``Parsed`` per record, never stopping at a bad one.

Operators feed us whatever their agents wrote, so every record gets its own
verdict: a trajectory, or a specific reason naming the file, the position and
the field. JSONL is parsed line by line (a dump may be larger than memory);
JSON arrays and single-run files are loaded one file at a time. ``.gz`` files
(recognised by their magic bytes) are decompressed on the fly, and a
truncated stream yields the records before the break, then one error.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Iterator, Mapping

from pydantic import ValidationError

from trajsearch.model import Trajectory, valid_tenant

from .adapters import FORMATS, Context, RecordError, adapter_for, format_of

#: A longer JSONL line is skipped with an error instead of being held in memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
PEEK_BYTES = 64 * 1024
DUMP_SUFFIXES = (".jsonl", ".ndjson", ".json")
#: Files that sit beside runs in known dump layouts but hold no runs.
SIDECAR_NAMES = frozenset({"preds.json"})

_SIGNATURES = (
    ("native", re.compile(r'^[\[\s]*\{\s*"trajectory_id"\s*:')),
    (
        "mini-swe-agent",
        re.compile(
            r'"trajectory_format"\s*:\s*"mini-swe-agent|"mini_version"\s*:|"agent_type"\s*:\s*"minisweagent'
        ),
    ),
    ("tau-bench", re.compile(r'"traj"\s*:\s*\[')),
)
_GZIP_ERRORS = (EOFError, OSError, zlib.error)


@dataclass(frozen=True)
class Parsed:
    """The verdict on one record: exactly one of ``trajectory`` and ``error`` is set."""

    source: str
    position: str
    trajectory: Trajectory | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        if (self.trajectory is None) == (self.error is None):
            raise ValueError("Parsed needs exactly one of 'trajectory' and 'error'")

    @property
    def ok(self) -> bool:
        return self.trajectory is not None

    def __str__(self) -> str:
        what = self.trajectory.trajectory_id if self.trajectory else f"error: {self.error}"
        return f"{self.source}, {self.position}: {what}"


def _open(path: Path) -> IO[bytes]:
    with open(path, "rb") as raw:
        magic = raw.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def _peek(path: Path) -> str:
    """Up to PEEK_BYTES of decoded text (whatever is readable of a broken .gz)."""
    chunks: list[bytes] = []
    size = 0
    try:
        with _open(path) as f:
            while size < PEEK_BYTES and (chunk := f.read(4096)):
                chunks.append(chunk)
                size += len(chunk)
    except _GZIP_ERRORS:
        pass
    return b"".join(chunks).decode("utf-8", errors="replace")


def _format_of_text(head: str) -> str | None:
    text = head.lstrip("\ufeff \t\r\n")
    if not text:
        return None
    try:
        first = json.loads(text.split("\n", 1)[0])
    except ValueError:
        first = None
    if isinstance(first, list) and first:
        first = first[0]
    if isinstance(first, dict):
        return format_of(first)
    return next((fmt for fmt, sig in _SIGNATURES if sig.search(text)), None)


def _format_of_whole_json(path: Path) -> str | None:
    try:
        with _open(path) as f:
            data = json.loads(f.read())
    except (ValueError, *_GZIP_ERRORS):
        return None
    return format_of(data[0] if isinstance(data, list) and data else data)


def detect_format(path: str | Path) -> str:
    """The dump format of one file, by its name and then by peeking at its content.

    Raises ValueError naming the file and the supported formats when unsure.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{p} is a directory: formats are detected per file")
    name = p.name.removesuffix(".gz")
    if name.endswith(".traj.json"):
        return "mini-swe-agent"
    fmt = _format_of_text(_peek(p))
    if fmt is None and name.endswith(".json"):
        fmt = _format_of_whole_json(p)
    if fmt is None:
        raise ValueError(
            f"{p}: unrecognised dump format; supported formats: {', '.join(FORMATS)} "
            "(pass fmt= to force one)"
        )
    return fmt


# -- records -----------------------------------------------------------------------------

Record = tuple[str, Any, str | None]  # (position, record, error)


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"


def _whole_file(path: Path) -> Iterator[Record]:
    """A JSON array (one record per element) or a single JSON object."""
    try:
        with _open(path) as f:
            data = json.loads(f.read())
    except json.JSONDecodeError as exc:
        yield "file", None, _json_error(exc)
        return
    except UnicodeDecodeError as exc:
        yield "file", None, f"not UTF-8 text: {exc.reason} at byte {exc.start}"
        return
    except _GZIP_ERRORS as exc:
        yield "file", None, f"truncated or corrupt gzip stream: {exc}"
        return
    if isinstance(data, list):
        for number, item in enumerate(data, 1):
            yield f"record {number}", item, None
    else:
        yield "record 1", data, None


def _lines(path: Path) -> Iterator[Record]:
    """One record per non-blank line, read incrementally."""
    number = 0
    try:
        with _open(path) as f:
            while raw := f.readline(MAX_LINE_BYTES + 1):
                number += 1
                position = f"line {number}"
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    while raw and not raw.endswith(b"\n"):
                        raw = f.readline(1 << 20)
                    yield position, None, f"line longer than the {MAX_LINE_BYTES}-byte limit; skipped"
                    continue
                if not raw.strip():
                    continue
                try:
                    yield position, json.loads(raw), None
                except json.JSONDecodeError as exc:
                    yield position, None, f"malformed JSON: {exc.msg} at column {exc.colno}"
                except UnicodeDecodeError as exc:
                    yield position, None, f"not UTF-8 text: {exc.reason} at byte {exc.start}"
    except _GZIP_ERRORS as exc:
        yield f"line {number + 1}", None, f"truncated or corrupt gzip stream after line {number}: {exc}"


def _records(path: Path, fmt: str) -> Iterator[Record]:
    head = _peek(path).lstrip("\ufeff \t\r\n")
    if fmt == "mini-swe-agent" or head.startswith("["):
        return _whole_file(path)
    return _lines(path)


# -- errors ------------------------------------------------------------------------------


def _loc(parts: tuple[Any, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """A pydantic ValidationError as one line naming each offending field path."""
    parts = []
    for err in exc.errors():
        loc, kind, value = _loc(err["loc"]), err["type"], err.get("input")
        ctx = err.get("ctx") or {}
        if kind == "missing":
            parts.append(f"missing required field '{loc}'")
        elif kind == "string_too_long":
            parts.append(f"field '{loc}' too long: {len(value)} characters, limit {ctx.get('max_length')}")
        elif kind == "too_long":
            parts.append(f"field '{loc}' has too many items: {len(value)}, limit {ctx.get('max_length')}")
        elif kind == "extra_forbidden":
            parts.append(f"unexpected field '{loc}'")
        elif kind == "string_pattern_mismatch":
            parts.append(f"field '{loc}' value {str(value)[:60]!r} does not match {ctx.get('pattern')}")
        elif loc:
            parts.append(f"field '{loc}': {err['msg']}")
        else:
            parts.append(err["msg"].removeprefix("Value error, "))
    more = f" (+{len(parts) - limit} more)" if len(parts) > limit else ""
    return "invalid trajectory: " + "; ".join(parts[:limit]) + more


# -- entry point -------------------------------------------------------------------------


def _read_file(path: Path, fmt: str, ctx: Context) -> Iterator[Parsed]:
    adapter = adapter_for(fmt)
    source = str(path)
    ctx = replace(ctx, source=path)  # adapters derive ids from the file's own name
    for position, record, error in _records(path, fmt):
        if error is None:
            try:
                yield Parsed(source, position, trajectory=adapter.to_trajectory(record, ctx))
                continue
            except ValidationError as exc:
                error = describe_validation_error(exc)
            except RecordError as exc:
                error = str(exc)
            except Exception as exc:  # a malformed shape the adapter did not foresee
                error = f"cannot convert {fmt} record: {type(exc).__name__}: {exc}"
        yield Parsed(source, position, error=error)


def _dump_files(root: Path) -> list[Path]:
    def wanted(p: Path) -> bool:
        name = p.name.removesuffix(".gz")
        hidden = any(part.startswith(".") for part in p.relative_to(root).parts)
        return p.is_file() and not hidden and name.endswith(DUMP_SUFFIXES) and name not in SIDECAR_NAMES

    return sorted(p for p in root.rglob("*") if wanted(p))


def _read_tree(root: Path, fmt: str | None, ctx: Context) -> Iterator[Parsed]:
    for path in _dump_files(root):
        try:
            file_fmt = fmt or detect_format(path)
        except (ValueError, OSError) as exc:
            yield Parsed(str(path), "file", error=str(exc))
            continue
        yield from _read_file(path, file_fmt, ctx)


def read_dump(
    path: str | Path,
    *,
    fmt: str | None = None,
    tenant: str | None = "default",
    defaults: Mapping[str, Any] | None = None,
) -> Iterator[Parsed]:
    """Parse a dump file (or every dump file under a directory, in sorted order).

    ``fmt`` forces a format (else detected per file). ``tenant`` is the trusted
    operator's: adapters stamp it on every run and native records naming
    another tenant are rejected; ``None`` keeps a native record's own tenant
    (other formats then get "default"). ``defaults`` fills Trajectory fields a
    record leaves empty (e.g. ``env_version``, ``model_id``; for tau-bench
    ``task_family`` is also the domain). Argument problems, a missing path and
    an undetectable single file raise ValueError/FileNotFoundError now; record
    problems come back as ``Parsed.error``.
    """
    p = Path(path)
    if tenant is not None:
        valid_tenant(tenant)
    defaults = dict(defaults or {})
    unknown = sorted(set(defaults) - set(Trajectory.model_fields))
    if unknown or "tenant" in defaults:
        raise ValueError(
            "defaults may only name Trajectory fields other than 'tenant' (pass tenant=); "
            f"got {unknown or ['tenant']}"
        )
    if fmt is not None:
        adapter_for(fmt)
    if not p.exists():
        raise FileNotFoundError(f"no such dump file or directory: {p}")
    ctx = Context(source=p, tenant=tenant, defaults=defaults)
    if p.is_dir():
        return _read_tree(p, fmt, ctx)
    return _read_file(p, fmt or detect_format(p), ctx)
