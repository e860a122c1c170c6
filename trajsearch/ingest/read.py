"""Read dump files into trajectories: one ``Parsed`` per record, never stopping at a bad one.

Operators feed us whatever their agents wrote, so every record gets its own
verdict: a trajectory, or a specific reason naming the file, the position and
the field.

Streaming, so memory stays flat however large the dump:
- JSONL is parsed line by line (a line over ``MAX_LINE_BYTES`` is skipped with
  an error); a resumed read seeks straight to the byte offset after the last
  committed line (for ``.gz`` the stream is decompressed up to it).
- JSON arrays, and OTLP files holding one big ``resourceSpans`` list, are read
  item by item with ``ijson`` when it is installed; without it a JSON file is
  loaded whole (memory bound: one file). A single-run file (``.traj``,
  ``.traj.json``, ATIF) is one record.
- ``.gz`` files (recognised by their magic bytes) are decompressed on the fly;
  a truncated stream yields the records before the break, then one error.
- Span formats (OTel GenAI, OpenInference, LangSmith, Langfuse) are grouped
  into runs through an on-disk spool (SQLite in a temporary directory), so a
  trace may be spread over many lines and files of one input and the memory
  bound is one run, not one file. A directory's span files of one format form
  one *unit*; every other file is a unit of its own.

Each ``Parsed`` carries its unit, its ordinal ``seq`` in the unit and, for
JSONL, a ``cursor`` (byte offset, line number) after it: what a checkpoint
needs to resume a unit exactly where the last committed record ended.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Mapping

from pydantic import ValidationError

from trajsearch.model import Trajectory, valid_tenant

from .adapters import FORMATS, Context, RecordError, adapter_for, format_of, is_grouped
from .adapters._common import DEFAULT_TENANT
from .adapters._spans import Node

try:  # optional: streams JSON arrays and big OTLP objects item by item
    import ijson
except ImportError:  # pragma: no cover - exercised only where ijson is missing
    ijson = None

#: A longer JSONL line is skipped with an error instead of being held in memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
PEEK_BYTES = 64 * 1024
DUMP_SUFFIXES = (".jsonl", ".ndjson", ".json", ".traj")
#: Files that sit beside runs in known dump layouts but hold no runs.
SIDECAR_NAMES = frozenset({"preds.json"})
GROUP_BY = ("trace", "conversation")

_SIGNATURES = (
    ("native", re.compile(r'^[\[\s]*\{\s*"trajectory_id"\s*:')),
    (
        "mini-swe-agent",
        re.compile(
            r'"trajectory_format"\s*:\s*"mini-swe-agent|"mini_version"\s*:|"agent_type"\s*:\s*"minisweagent'
        ),
    ),
    ("tau-bench", re.compile(r'"traj"\s*:\s*\[')),
    ("atif", re.compile(r'"schema_version"\s*:\s*"ATIF', re.I)),
    ("swe-agent", re.compile(r'"environment"\s*:\s*"swe_main"|"swe_agent_version"\s*:|"replay_config"\s*:')),
    ("openinference", re.compile(r'"openinference\.span\.kind"|"key"\s*:\s*"openinference\.span\.kind"')),
    ("otel-genai", re.compile(r'"resourceSpans"[\s\S]*"gen_ai\.|"gen_ai\.operation\.name"')),
    ("langsmith", re.compile(r'"run_type"\s*:\s*"(?:chain|llm|tool|retriever|prompt|parser|embedding)"')),
    ("langfuse", re.compile(r'"traceId"\s*:[\s\S]*"type"\s*:\s*"(?:GENERATION|SPAN|EVENT|TOOL|AGENT)"')),
)
_GZIP_ERRORS = (EOFError, OSError, zlib.error)


@dataclass(frozen=True)
class Parsed:
    """The verdict on one record: exactly one of ``trajectory`` and ``error`` is set.

    ``fmt``, ``unit``, ``seq`` and ``cursor`` say where it came from, for
    per-format counts and checkpoints (see the module docstring).
    """

    source: str
    position: str
    trajectory: Trajectory | None = None
    error: str | None = None
    fmt: str | None = None
    unit: str | None = None
    seq: int = -1
    cursor: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if (self.trajectory is None) == (self.error is None):
            raise ValueError("Parsed needs exactly one of 'trajectory' and 'error'")

    @property
    def ok(self) -> bool:
        return self.trajectory is not None

    def __str__(self) -> str:
        what = self.trajectory.trajectory_id if self.trajectory else f"error: {self.error}"
        return f"{self.source}, {self.position}: {what}"


@dataclass(frozen=True)
class Unit:
    """What one checkpoint entry covers: one file, or every span file of one format under an input."""

    key: str
    fmt: str | None
    files: tuple[Path, ...]
    error: str | None = None

    @property
    def grouped(self) -> bool:
        return self.fmt is not None and is_grouped(self.fmt)

    @property
    def size(self) -> int:
        return sum(_size(f) for f in self.files)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# -- opening and peeking -----------------------------------------------------------------


class _Source:
    """A dump file opened for reading (gunzipped if needed), reporting raw bytes consumed."""

    def __init__(self, path: Path, on_bytes: Callable[[int], None] | None = None) -> None:
        self.raw = open(path, "rb")
        magic = self.raw.read(2)
        self.raw.seek(0)
        self.stream: IO[bytes] = gzip.GzipFile(fileobj=self.raw, mode="rb") if magic == b"\x1f\x8b" else self.raw
        self.on_bytes = on_bytes
        self._reported = 0

    def report(self) -> None:
        if self.on_bytes is not None:
            try:
                pos = self.raw.tell()
            except (OSError, ValueError):
                return
            if pos > self._reported:
                self.on_bytes(pos - self._reported)
                self._reported = pos

    def close(self) -> None:
        self.report()
        try:
            if self.stream is not self.raw:
                self.stream.close()
        finally:
            self.raw.close()

    def __enter__(self) -> _Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


def _format_of_first_item(path: Path) -> str | None:
    """The format of the first element of a JSON array, read incrementally."""
    if ijson is None:
        return None
    try:
        with _open(path) as f:
            for item in ijson.items(f, "item", use_float=True):
                return format_of(item)
    except (ValueError, *_GZIP_ERRORS, Exception):  # ijson raises its own JSONError subclasses
        return None
    return None


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
    if name.endswith(".traj"):
        return "swe-agent"
    head = _peek(p)
    fmt = _format_of_text(head)
    if fmt is None and head.lstrip("\ufeff \t\r\n").startswith("["):
        fmt = _format_of_first_item(p)
    if fmt is None and name.endswith(".json") and (ijson is None or _size(p) <= PEEK_BYTES * 16):
        fmt = _format_of_whole_json(p)
    if fmt is None:
        raise ValueError(
            f"{p}: unrecognised dump format; supported formats: {', '.join(FORMATS)} "
            "(pass fmt= to force one)"
        )
    return fmt


# -- records -----------------------------------------------------------------------------

#: (position, record, error, cursor after it)
Record = tuple[str, Any, str | None, tuple[int, int] | None]


def _json_error(exc: json.JSONDecodeError) -> str:
    return f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"


def _whole_file(path: Path, on_bytes: Callable[[int], None] | None = None) -> Iterator[Record]:
    """A JSON array (one record per element) or a single JSON object, loaded at once."""
    try:
        with _Source(path, on_bytes) as src:
            data = json.loads(src.stream.read())
    except json.JSONDecodeError as exc:
        yield "file", None, _json_error(exc), None
        return
    except UnicodeDecodeError as exc:
        yield "file", None, f"not UTF-8 text: {exc.reason} at byte {exc.start}", None
        return
    except _GZIP_ERRORS as exc:
        yield "file", None, f"truncated or corrupt gzip stream: {exc}", None
        return
    if isinstance(data, list):
        for number, item in enumerate(data, 1):
            yield f"record {number}", item, None, None
    else:
        yield "record 1", data, None, None


def _streamed(path: Path, prefix: str, wrap: Callable[[Any], Any] | None,
              on_bytes: Callable[[int], None] | None) -> Iterator[Record]:
    """Items under ``prefix`` (``item`` = the elements of a top-level array), one at a time."""
    number = 0
    src = _Source(path, on_bytes)
    try:
        for item in ijson.items(src.stream, prefix, use_float=True):
            number += 1
            yield f"record {number}", wrap(item) if wrap else item, None, None
            src.report()
        if number == 0 and prefix == "item":
            return
    except _GZIP_ERRORS as exc:
        yield f"record {number + 1}", None, f"truncated or corrupt gzip stream after record {number}: {exc}", None
    except UnicodeDecodeError as exc:
        yield f"record {number + 1}", None, f"not UTF-8 text: {exc.reason}", None
    except Exception as exc:  # ijson.JSONError and its incomplete-input variant
        yield f"record {number + 1}", None, f"malformed JSON after record {number}: {exc}", None
    finally:
        src.close()


def _lines(path: Path, cursor: tuple[int, int] | None = None,
           on_bytes: Callable[[int], None] | None = None) -> Iterator[Record]:
    """One record per non-blank line, read incrementally, from ``cursor`` (offset, line) if given."""
    offset, number = cursor or (0, 0)
    src = _Source(path, on_bytes)
    try:
        f = src.stream
        if offset:
            f.seek(offset)
        while raw := f.readline(MAX_LINE_BYTES + 1):
            number += 1
            offset += len(raw)
            position = f"line {number}"
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while raw and not raw.endswith(b"\n"):
                    raw = f.readline(1 << 20)
                    offset += len(raw)
                yield position, None, f"line longer than the {MAX_LINE_BYTES}-byte limit; skipped", (offset, number)
                continue
            if not raw.strip():
                continue
            try:
                yield position, json.loads(raw), None, (offset, number)
            except json.JSONDecodeError as exc:
                yield position, None, f"malformed JSON: {exc.msg} at column {exc.colno}", (offset, number)
            except UnicodeDecodeError as exc:
                yield position, None, f"not UTF-8 text: {exc.reason} at byte {exc.start}", (offset, number)
            src.report()
    except _GZIP_ERRORS as exc:
        yield f"line {number + 1}", None, f"truncated or corrupt gzip stream after line {number}: {exc}", None
    finally:
        src.close()


def _records(path: Path, fmt: str, cursor: tuple[int, int] | None = None,
             on_bytes: Callable[[int], None] | None = None) -> tuple[Iterator[Record], bool]:
    """The records of one file, and whether ``cursor`` was honoured (only JSONL can seek)."""
    head = _peek(path).lstrip("\ufeff \t\r\n")
    otlp_object = re.match(r'\{\s*"resourceSpans"', head) is not None
    if head.startswith("["):
        return (_streamed(path, "item", None, on_bytes) if ijson is not None else _whole_file(path, on_bytes)), False
    if fmt in ("mini-swe-agent", "swe-agent", "atif"):
        return _whole_file(path, on_bytes), False
    if head.startswith("{") and otlp_object and ijson is not None and (
        not _first_line_is_json(head) or (len(head) >= PEEK_BYTES and "\n" not in head)
    ):
        # one OTLP request holding every span of the file (pretty-printed, or one huge line)
        return _streamed(path, "resourceSpans.item", lambda rs: {"resourceSpans": [rs]}, on_bytes), False
    if head.startswith("{") and not _first_line_is_json(head):
        return _whole_file(path, on_bytes), False  # a pretty-printed single object
    return _lines(path, cursor, on_bytes), True


def _first_line_is_json(head: str) -> bool:
    line = head.split("\n", 1)[0]
    if len(line) >= PEEK_BYTES:  # longer than the peek: assume one JSON document per line
        return True
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


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


def _convert(fmt: str, build: Callable[[], Trajectory]) -> tuple[Trajectory | None, str | None]:
    try:
        return build(), None
    except ValidationError as exc:
        return None, describe_validation_error(exc)
    except RecordError as exc:
        return None, str(exc)
    except Exception as exc:  # a malformed shape the adapter did not foresee
        return None, f"cannot convert {fmt} record: {type(exc).__name__}: {exc}"


# -- options -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadOptions:
    """How records become runs, beyond the format: grouping, joined outcomes, a shard filter."""

    group_by: str = "trace"
    outcomes: Any = None  # an outcomes.OutcomeTable
    keep: Callable[[str], bool] | None = None  # shard filter on a run key (see shard.run_key)
    spool_dir: str | None = None

    def __post_init__(self) -> None:
        if self.group_by not in GROUP_BY:
            raise ValueError(f"group_by must be one of {', '.join(GROUP_BY)}, got {self.group_by!r}")


def run_key(tenant: str, trajectory_id: str) -> str:
    """What a shard is chosen by: a run's identity (tenant + trajectory id)."""
    return f"{tenant}\x1f{trajectory_id}"


def error_key(source: str, position: str) -> str:
    """Shard key of a rejected record (it has no trajectory id): where it sits."""
    return f"{source}\x1f{position}"


# -- units -------------------------------------------------------------------------------


def _dump_files(root: Path) -> list[Path]:
    def wanted(p: Path) -> bool:
        name = p.name.removesuffix(".gz")
        hidden = any(part.startswith(".") for part in p.relative_to(root).parts)
        return p.is_file() and not hidden and name.endswith(DUMP_SUFFIXES) and name not in SIDECAR_NAMES

    return sorted(p for p in root.rglob("*") if wanted(p))


def plan_units(path: str | Path, fmt: str | None = None) -> list[Unit]:
    """The units of one input: each file, except that span files of one format are read together.

    A single file whose format cannot be detected raises ValueError now; in a
    directory such a file becomes a unit carrying the error.
    """
    p = Path(path)
    if fmt is not None:
        adapter_for(fmt)
    if not p.exists():
        raise FileNotFoundError(f"no such dump file or directory: {p}")
    if not p.is_dir():
        return [Unit(str(p), fmt or detect_format(p), (p,))]
    units: list[Unit] = []
    spans: dict[str, list[Path]] = {}
    for file in _dump_files(p):
        try:
            file_fmt = fmt or detect_format(file)
        except (ValueError, OSError) as exc:
            units.append(Unit(str(file), None, (file,), error=str(exc)))
            continue
        if is_grouped(file_fmt):
            spans.setdefault(file_fmt, []).append(file)
        else:
            units.append(Unit(str(file), file_fmt, (file,)))
    for span_fmt, files in spans.items():
        units.append(Unit(f"{p}#{span_fmt}", span_fmt, tuple(files)))
    return units


def read_unit(
    unit: Unit,
    ctx: Context,
    *,
    options: ReadOptions = ReadOptions(),
    skip: int = 0,
    cursor: tuple[int, int] | None = None,
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[Parsed]:
    """The records of one unit, from ordinal ``skip`` on (JSONL: seeking to ``cursor``)."""
    if unit.error is not None or unit.fmt is None:
        if skip == 0:
            yield _shardable(Parsed(unit.key, "file", error=unit.error or "no format", unit=unit.key, seq=0), options)
        return
    if unit.grouped:
        yield from _read_grouped(unit, ctx, options, skip, on_bytes)
    else:
        yield from _read_records(unit, ctx, options, skip, cursor, on_bytes)


def _shardable(parsed: Parsed, options: ReadOptions) -> Parsed | None:
    if options.keep is None:
        return parsed
    if parsed.trajectory is not None:
        key = run_key(parsed.trajectory.tenant, parsed.trajectory.trajectory_id)
    else:
        key = error_key(parsed.source, parsed.position)
    return parsed if options.keep(key) else None


def _finish(trajectory: Trajectory, options: ReadOptions) -> Trajectory:
    return options.outcomes.apply(trajectory) if options.outcomes is not None else trajectory


def _read_records(unit: Unit, ctx: Context, options: ReadOptions, skip: int,
                  cursor: tuple[int, int] | None, on_bytes: Callable[[int], None] | None) -> Iterator[Parsed]:
    path, fmt = unit.files[0], unit.fmt
    adapter = adapter_for(fmt)
    source = str(path)
    ctx = replace(ctx, source=path)  # adapters derive ids from the file's own name
    records, seeked = _records(path, fmt, cursor if skip else None, on_bytes)
    seq = skip if (cursor and skip and seeked) else 0
    for position, record, error, after in records:
        seq += 1
        if seq <= skip:
            continue
        trajectory = None
        if error is None:
            trajectory, error = _convert(fmt, lambda: _finish(adapter.to_trajectory(record, ctx), options))
        parsed = Parsed(source, position, trajectory=trajectory, error=error, fmt=fmt, unit=unit.key,
                        seq=seq - 1, cursor=after)
        if (kept := _shardable(parsed, options)) is not None:
            yield kept


class _Spool:
    """Spans on disk, grouped by trace: constant memory whatever the size of the input."""

    def __init__(self, directory: str | None) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="trajsearch-spool-", dir=directory)
        self.db = sqlite3.connect(os.path.join(self._dir.name, "spool.db"), isolation_level=None)
        self.db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA temp_store=FILE;"
            "CREATE TABLE span (gkey TEXT, seq INTEGER, payload TEXT);"
            "CREATE TABLE grp (gkey TEXT PRIMARY KEY, first INTEGER, conv TEXT, source TEXT, position TEXT);"
        )
        self.db.execute("BEGIN")
        self.count = 0

    def add(self, key: str, node: Node, conversation: str | None, source: str, position: str) -> None:
        self.db.execute("INSERT INTO span VALUES (?, ?, ?)", (key, node.seq, node.to_json()))
        self.db.execute("INSERT OR IGNORE INTO grp VALUES (?, ?, NULL, ?, ?)", (key, node.seq, source, position))
        if conversation:
            self.db.execute("UPDATE grp SET conv = ? WHERE gkey = ? AND conv IS NULL", (conversation, key))
        self.count += 1

    def groups(self, by: str) -> Iterator[tuple[str, str, str, list[Node]]]:
        """(group key, first source, first position, nodes) in order of first appearance."""
        self.db.execute("COMMIT")
        self.db.execute("CREATE INDEX span_key ON span (gkey, seq)")
        if by == "conversation":
            query = ("SELECT COALESCE(conv, gkey) AS k, MIN(first) AS f FROM grp GROUP BY k ORDER BY f")
        else:
            query = "SELECT gkey, first FROM grp ORDER BY first"
        keys = [row[0] for row in self.db.execute(query)]
        for key in keys:
            if by == "conversation":
                members = [r[0] for r in self.db.execute(
                    "SELECT gkey FROM grp WHERE COALESCE(conv, gkey) = ? ORDER BY first", (key,))]
            else:
                members = [key]
            first = self.db.execute("SELECT source, position FROM grp WHERE gkey = ?", (members[0],)).fetchone()
            nodes: list[Node] = []
            for member in members:
                nodes.extend(Node.from_json(r[0]) for r in self.db.execute(
                    "SELECT payload FROM span WHERE gkey = ? ORDER BY seq", (member,)))
            yield key, first[0], first[1], nodes

    def close(self) -> None:
        self.db.close()
        self._dir.cleanup()


def _read_grouped(unit: Unit, ctx: Context, options: ReadOptions, skip: int,
                  on_bytes: Callable[[int], None] | None) -> Iterator[Parsed]:
    fmt = unit.fmt
    adapter = adapter_for(fmt)
    seq = 0
    spool = _Spool(options.spool_dir)
    try:
        span_seq = 0
        for path in unit.files:
            file_ctx = replace(ctx, source=path)
            for position, record, error, _ in _records(path, fmt, None, on_bytes)[0]:
                if error is None:
                    try:
                        for key, node, conversation in adapter.nodes(record, file_ctx, span_seq):
                            spool.add(key, node, conversation, str(path), position)
                            span_seq = max(span_seq, node.seq) + 1
                    except RecordError as exc:
                        error = str(exc)
                    except Exception as exc:
                        error = f"cannot read {fmt} record: {type(exc).__name__}: {exc}"
                if error is not None:
                    seq += 1
                    if seq > skip:
                        parsed = Parsed(str(path), position, error=error, fmt=fmt, unit=unit.key, seq=seq - 1)
                        if (kept := _shardable(parsed, options)) is not None:
                            yield kept
        tenant = ctx.tenant or DEFAULT_TENANT
        for key, source, position, nodes in spool.groups(options.group_by):
            seq += 1
            if seq <= skip:
                continue
            if options.keep is not None and not options.keep(run_key(tenant, adapter.trajectory_id(key, options.group_by))):
                continue
            group_ctx = replace(ctx, source=Path(source))
            trajectory, error = _convert(fmt, lambda: _finish(
                adapter.assemble_trajectory(key, nodes, group_ctx, options.group_by), options))
            yield Parsed(source, f"{options.group_by} {key} (first span at {position})", trajectory=trajectory,
                         error=error, fmt=fmt, unit=unit.key, seq=seq - 1)
    finally:
        spool.close()


def fingerprint(unit: Unit) -> str:
    """Identity of a unit's content: size, mtime and the first 64 KiB of each file."""
    digest = hashlib.blake2b(digest_size=16)
    for path in unit.files:
        try:
            stat = path.stat()
            digest.update(f"{path}|{stat.st_size}|{stat.st_mtime_ns}|".encode())
            with open(path, "rb") as f:
                digest.update(f.read(PEEK_BYTES))
        except OSError as exc:
            digest.update(f"{path}|unreadable {exc}".encode())
    return digest.hexdigest()


# -- entry point -------------------------------------------------------------------------


def read_dump(
    path: str | Path,
    *,
    fmt: str | None = None,
    tenant: str | None = "default",
    defaults: Mapping[str, Any] | None = None,
    group_by: str = "trace",
    outcomes: Any = None,
) -> Iterator[Parsed]:
    """Parse a dump file (or every dump file under a directory, in sorted order).

    ``fmt`` forces a format (else detected per file). ``tenant`` is the trusted
    operator's: adapters stamp it on every run and native records naming
    another tenant are rejected; ``None`` keeps a native record's own tenant
    (other formats then get "default"). ``defaults`` fills Trajectory fields a
    record leaves empty (e.g. ``env_version``, ``model_id``; for tau-bench
    ``task_family`` is also the domain). ``group_by`` (``trace`` or
    ``conversation``) groups span formats; ``outcomes`` (an
    :class:`~trajsearch.ingest.outcomes.OutcomeTable`) joins verdicts.
    Argument problems, a missing path and an undetectable single file raise
    ValueError/FileNotFoundError now; record problems come back as
    ``Parsed.error``.
    """
    ctx = make_context(path, tenant=tenant, defaults=defaults)
    units = plan_units(path, fmt)
    options = ReadOptions(group_by=group_by, outcomes=outcomes)
    return (parsed for unit in units for parsed in read_unit(unit, ctx, options=options))


def make_context(path: str | Path, *, tenant: str | None = "default", defaults: Mapping[str, Any] | None = None) -> Context:
    """Validate the operator's tenant and defaults; the adapters' context."""
    if tenant is not None:
        valid_tenant(tenant)
    defaults = dict(defaults or {})
    unknown = sorted(set(defaults) - set(Trajectory.model_fields))
    if unknown or "tenant" in defaults:
        raise ValueError(
            "defaults may only name Trajectory fields other than 'tenant' (pass tenant=); "
            f"got {unknown or ['tenant']}"
        )
    return Context(source=Path(path), tenant=tenant, defaults=defaults)
