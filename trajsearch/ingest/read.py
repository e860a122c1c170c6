"""Read dump files into trajectories: one ``Parsed`` per record, never stopping at a bad one.

Operators feed us whatever their agents wrote, so every record gets its own
verdict: a trajectory, or a specific reason naming the file, the position and
the field.

The pieces: ``sources`` turns files into JSON values (gzip, JSONL, arrays,
concatenated objects), ``detect`` asks the adapters which format a file is,
the adapters map records to trajectories, and ``spool`` groups the spans of
span formats into runs. This module plans the *units* of an input (a file; or
every span file of one format under a directory, read together since a trace
may be spread over them; or a folder that holds one run in several files, for
an adapter with ``run_folder(path)``) and reads them: per record, per whole
file (formats where a file is one run, ``WHOLE_FILE``), per group of spans, or
per run folder (its files handed over together to the adapter's
``read_folder(files, ctx)`` as ``{relative path: JSON value}``).

Each ``Parsed`` carries its unit, its ordinal ``seq`` in the unit and, for
JSONL, a ``cursor`` (byte offset, line number) after it: what a checkpoint
needs to resume a unit exactly where the last committed record ended.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
import logging
import os
import re
import select
import shutil
import socket
import stat
import sys
import tempfile
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import IO, Any, Callable, ContextManager, Iterable, Iterator, Mapping, NamedTuple

from pydantic import ValidationError

from trajsearch import config, jsontext
from trajsearch.fsutil import pid_alive
from trajsearch.model import FORMER_IDS, Failure, Step, Trajectory, valid_tenant
from trajsearch.represent import INGESTED_FROM, run_content, source_mark, stream_mark
from trajsearch.vocab import GROUP_BY

from . import sources
from .adapters import Context, RecordError, adapter_for, adapter_hooks, archive_format, is_grouped, side_path
from .adapters.atif import TRIAL_VERDICT_METADATA
from .adapters._agent_cli import EXPORT_PREFIX
from .adapters._common import (DEFAULT_SUCCESS_THRESHOLD, DEFAULT_TENANT, RUNNING_FROM, TENANT_SET_BY, TIME_ZONE,
                               PassedOver, clipped_fields, stream_copy)
from .detect import (SideFile, StoreKind, detect_format, forced_format, head_text_reader, session_store_kind,
                     walked_format)
from .sources import PEEK_BYTES, STREAMS_PREFIX, OnBytes, Record
from .spool import Spool

log = logging.getLogger(__name__)

DUMP_SUFFIXES = (".jsonl", ".ndjson", ".json", ".traj")
#: Files that sit beside runs in known dump layouts but hold no runs, passed over by name even when
#: --format is forced (else by content: ``side_file`` of the adapters, see detect.SideFile).
SIDECAR_NAMES = frozenset({"preds.json", "all_preds.jsonl"})
#: Rejections a summary keeps in memory to name (an ingest's report, a dry run's per file); an ingest writes every
#: one to its dead-letter file.
KEPT_REJECTIONS = 100


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
    """What one checkpoint entry covers: one file, every span file of one format under an input, or the
    files of one run folder (``folder``; its key is the folder)."""

    key: str
    fmt: str | None
    files: tuple[Path, ...]
    error: str | None = None
    folder: bool = False
    #: ``fmt`` named by ``--format``, not detected: a file that then gives no run and no rejection is one, saying so
    forced: bool = False

    @property
    def grouped(self) -> bool:
        return self.fmt is not None and is_grouped(self.fmt)

    @property
    def size(self) -> int:
        return sum(_size(f) for f in self.files)

    def streamed(self, streams: Mapping[str, str]) -> bool:
        """Whether this unit was read from a stream (a pipe, stdin): ``streams`` holds their copies' paths. Such a
        unit is read whole, never checkpointed: a rerun cannot read the stream again."""
        return any(str(f) in streams for f in self.files)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# -- errors ------------------------------------------------------------------------------


def _loc(parts: tuple[Any, ...]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _given(value: Any) -> str:
    """A value a record gave, as its JSON says it (``null``, ``"succeeded"``; a list or an object by its kind), for
    a field of a wrong type or word: "Input should be 'success', 'failure', ..." alone left the writer of a
    thousand-line dump to find what their writer had put there (probe 51, NC2). Written as :mod:`trajsearch.jsontext`
    writes JSON: a C1 control given (U+009B, a CSI to a terminal) went raw into the message, the dead-letter file
    and the terminal that printed it (review RNC2, D6)."""
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return _clipped(jsontext.dumps(value, default=str), 60)


def _clipped(said: str, most: int) -> str:
    return said if len(said) <= most else said[:most - 3] + "..."


def _field_path(parts: tuple[Any, ...]) -> str:
    """A field's path as an error names it: a key a record gave is its writer's text like a value, its controls
    escaped and its length clipped (a 2,000-character key of controls filled the message and the dead-letter
    line, raw; review RNC2, D6)."""
    return _clipped(jsontext.dumps(_loc(parts))[1:-1], 120)


def _fields_of(class_name: Any) -> list[str]:
    """The fields of the project's model named ``class_name`` (``Failure``, ``Step``), for the object a field
    expects; none for another class."""
    model = {"Failure": Failure, "Step": Step, "Trajectory": Trajectory}.get(class_name)
    return list(model.model_fields) if model is not None else []


#: What other writers call the model's fields, by model (the OpenAI / LangChain / OpenTelemetry words a writer of
#: its own agent reaches for), for :func:`_unexpected`.
_OTHER_NAMES: dict[type, dict[str, str]] = {
    Step: {**dict.fromkeys(("tool", "tool_name", "name", "function", "tool_call"), "action"),
           **dict.fromkeys(("tool_input", "input", "args", "parameters", "params", "tool_args"), "arguments"),
           **dict.fromkeys(("output", "result", "tool_output", "tool_result", "response", "content"), "observation"),
           **dict.fromkeys(("reasoning", "thinking", "rationale", "plan"), "thought"),
           **dict.fromkeys(("step", "step_index", "i", "idx", "number"), "index"),
           **dict.fromkeys(("timestamp", "start_time", "started"), "started_at"),
           **dict.fromkeys(("end_time", "ended", "finished_at"), "ended_at")},
    Trajectory: {**dict.fromkeys(("id", "run_id", "trace_id", "session_id"), "trajectory_id"),
                 **dict.fromkeys(("prompt", "instruction", "goal", "query", "question", "input"), "task"),
                 **dict.fromkeys(("status", "result", "success", "passed"), "outcome"),
                 **dict.fromkeys(("score",), "reward"),
                 **dict.fromkeys(("model", "model_name", "model_version", "llm"), "model_id"),
                 # the schema's versions: the agent's own (its code, prompt, policy), the environment's, each tool's
                 **dict.fromkeys(("version", "agent_version", "app_version", "policy", "prompt_version"),
                                 "policy_version"),
                 **dict.fromkeys(("environment", "env", "environment_version", "benchmark_version"), "env_version"),
                 **dict.fromkeys(("tools",), "tools_available"),
                 **dict.fromkeys(("messages", "events", "turns", "actions", "trajectory"), "steps"),
                 **dict.fromkeys(("timestamp", "created", "start_time", "started_at"), "created_at"),
                 **dict.fromkeys(("meta", "extra", "attributes"), "metadata")},
    Failure: {**dict.fromkeys(("message", "exception", "reason"), "error"),
              **dict.fromkeys(("root_cause",), "cause"), **dict.fromkeys(("resolution", "solution"), "fix")},
}


def _model_at(parts: tuple[Any, ...]) -> type | None:
    """The model holding the field at ``parts`` (``("steps", 0, "tool")``: a Step), or None."""
    held = [part for part in parts[:-1] if not isinstance(part, int)]
    return {(): Trajectory, ("steps",): Step, ("failure",): Failure}.get(tuple(held))


def _unexpected(parts: tuple[Any, ...], record: Any = None) -> str:
    """"unexpected field 'X'", asking after the schema's field a writer likely meant (``obervation``,
    ``trajectoryId``; ``tool``, ``output``, ``agent_version``: other writers' words): a newcomer read "unexpected
    field 'steps[0].tool'" and was left to search the schema for what to call it (probe 52, NC3). A question, not a
    fact: a close spelling is a guess (``model_version`` was said to be 'tool_versions', ``agent_version``
    'env_version'), and none is made of a field the object at hand already holds (``record``: the record
    validated) (review RNC3, D7)."""
    said = f"unexpected field '{_field_path(parts)}'"
    model, name = _model_at(parts), parts[-1] if parts else None
    if model is None or not isinstance(name, str):
        return said
    fields = list(model.model_fields)
    folded = {re.sub(r"[^a-z0-9]", "", f): f for f in fields}
    meant = (folded.get(re.sub(r"[^a-z0-9]", "", name.lower())) or _OTHER_NAMES.get(model, {}).get(name.lower())
             or next(iter(difflib.get_close_matches(name, fields, n=1, cutoff=0.75)), None))
    held = _object_at(record, parts[:-1])
    if not meant or meant == name or (isinstance(held, dict) and held.get(meant) not in (None, "", [], {})):
        return said
    return f"{said} (did you mean '{meant}'?)"


def _object_at(record: Any, parts: tuple[Any, ...]) -> Any:
    """The value at ``parts`` of ``record`` (``("steps", 0)``: its first step), or None where it has none."""
    for part in parts:
        try:
            record = record[part]
        except (KeyError, IndexError, TypeError):
            return None
    return record


def describe_validation_error(exc: ValidationError, limit: int = 3) -> str:
    """A pydantic ValidationError as one line naming each offending field path (and, where the adapters'
    :func:`~.adapters._common.validated` kept what was validated on it as ``record``, no field it already has)."""
    record = getattr(exc, "record", None)
    parts = []
    for err in exc.errors():
        loc, kind, value = _field_path(err["loc"]), err["type"], err.get("input")
        ctx = err.get("ctx") or {}
        if kind == "missing":
            parts.append(f"missing required field '{loc}'")
        elif kind == "string_too_long":
            parts.append(f"field '{loc}' too long: {len(value)} characters, limit {ctx.get('max_length')}")
        elif kind == "too_long":
            parts.append(f"field '{loc}' has too many items: {len(value)}, limit {ctx.get('max_length')}")
        elif kind == "extra_forbidden":
            parts.append(_unexpected(err["loc"], record))
        elif kind == "string_pattern_mismatch":
            parts.append(f"field '{loc}' value {str(value)[:60]!r} does not match {ctx.get('pattern')}")
        elif kind == "model_type":  # "a valid dictionary or instance of Failure": Python's words, not the schema's
            parts.append(f"field '{loc}': should be an object ({', '.join(_fields_of(ctx.get('class_name')))}), "
                         f"got {_given(value)}")
        elif loc and kind != "value_error":  # pydantic's words for a wrong type or word: the value given after them
            parts.append(f"field '{loc}': {err['msg']}, got {_given(value)}")
        elif loc:  # our validators' own words, without pydantic's "Value error, " before them
            parts.append(f"field '{loc}': {err['msg'].removeprefix('Value error, ')}")
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
    except PassedOver:  # no run and nothing wrong: the caller counts it (see PassedOverGroups)
        raise
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
    passed_over: PassedOverGroups | None = None  # counts the groups that hold no run (see PassedOverGroups)

    def __post_init__(self) -> None:
        if self.group_by not in GROUP_BY:
            raise ValueError(f"group_by must be one of {', '.join(GROUP_BY)}, got {self.group_by!r}")


def run_key(tenant: str, trajectory_id: str) -> str:
    """What a shard is chosen by: a run's identity (tenant + trajectory id)."""
    return f"{tenant}\x1f{trajectory_id}"


def error_key(source: str, position: str) -> str:
    """Shard key of a rejected record (it has no trajectory id): where it sits."""
    return f"{source}\x1f{position}"


# -- streams -----------------------------------------------------------------------------

#: The input that means standard input (``zcat dump.gz | trajsearch ingest -``).
STDIN = "-"


def is_stream(path: str | Path) -> bool:
    """Whether an input can be read only once: standard input, a pipe (``<(zcat dump.gz)`` names
    ``/dev/fd/63``), a named FIFO, a socket or a character device. Detecting a format, reading its records and
    fingerprinting it for the checkpoint each open a file again, and a pipe gives its bytes to the first only."""
    if str(path) == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _absolute(path: str | Path) -> Path:
    """The input's absolute path, links resolved, except a stream's: ``/dev/fd/63`` resolves to the text of its
    link, ``pipe:[1641421]``, which is no path."""
    return Path(path).absolute() if is_stream(path) else Path(path).resolve()


_STREAMS_DIR = re.compile(rf"{STREAMS_PREFIX}(?P<host>.+)-(?P<pid>\d+)-[^-]+$")


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9.]", "_", socket.gethostname()) or "host"
#: The folder of a stream's copy inside the temporary folder, numbered per stream (two may share a name).
_STREAM_FOLDER = "stream-{}"


class Streams:
    """Inputs that can be read only once (see :func:`is_stream`), each copied in one pass to a temporary file
    for the life of a ``with`` block: what reads the copy may open it as often as it needs.

    The copy keeps the input's name, or takes the one the operator gives (``--stream-name``): adapters detect
    formats and derive run ids from it. An unnamed standard input becomes ``stdin``, ``<(...)`` its fd number
    (``63``): such ids collide from one stream to the next, which :class:`NamedAfterSpool` tells.
    :meth:`given` maps a copy's path back to what the operator named, for rejections and summaries: the copy is
    gone once the block ends. A stream is read whole on every ingest: no checkpoint can resume it.
    """

    def __init__(self) -> None:
        _sweep_orphaned_copies()
        self._dir = tempfile.TemporaryDirectory(prefix=f"{STREAMS_PREFIX}{_host()}-{os.getpid()}-")
        self.names: dict[str, str] = {}  # the copy's path -> the input as named
        #: the copy's path -> the mark its runs carry to the indexer (``represent.SOURCE_MARK``): of the file the
        #: operator named it after (``--stream-name``, a file here), or of a dump never seen before
        self.marks: dict[str, str] = {}

    def take(self, path: Path, name: str | None = None) -> Path:
        """``path`` itself, or for a stream its copy, read to the end now (a named FIFO waits for its writer).
        ``name`` is the copy's file name, or a relative path whose folders a format reads too (SWE-agent's run
        folder: ``run1/django__django-11099.traj``)."""
        if not is_stream(path):
            return path
        relative = _copy_name(name) if name is not None else Path("stdin" if str(path) == STDIN else path.name)
        copy = Path(self._dir.name).resolve() / _STREAM_FOLDER.format(len(self.names)) / relative
        copy.parent.mkdir(parents=True)
        with _open_stream(path) as source, open(copy, "wb") as target:
            _copy_stream(source, target)
        self.names[str(copy)] = "standard input" if str(path) == STDIN else str(path)
        # the file the name names, if it does: a bare name (``--stream-name results.json``, the help's shape) of no
        # file here would give every dump piped under it one mark, and each other's runs replaced in silence (ROP 4)
        self.marks[str(copy)] = source_mark(name) if name is not None and Path(name).is_file() else stream_mark()
        return copy

    def given(self, text: str) -> str:
        """``text`` (a source, an error) naming the inputs as the operator did, not by their copies."""
        return as_given(text, self.names)

    def __enter__(self) -> Streams:
        return self

    def __exit__(self, *exc: object) -> None:
        self._dir.cleanup()


def _copy_name(name: str) -> Path:
    """The operator's name for a stream's copy: a file name or a relative path, inside the copy's folder."""
    relative = PurePosixPath(name)
    if not name.strip() or relative.is_absolute() or ".." in relative.parts or not relative.name:
        raise ValueError(f"--stream-name {name!r}: give a file name (airline.json) or a relative path "
                         "(run1/django__django-11099.traj)")
    return Path(*relative.parts)


def _sweep_orphaned_copies() -> None:
    """Remove the stream copies of ingests that died without cleaning up (SIGKILL, a crash): each is a whole
    dump, and a nightly job that times out would otherwise fill ``$TMPDIR`` night after night."""
    for folder in Path(tempfile.gettempdir()).glob(f"{STREAMS_PREFIX}*"):
        owner = _STREAMS_DIR.match(folder.name)
        if owner and owner["host"] == _host() and folder.is_dir() and not pid_alive(int(owner["pid"])):
            shutil.rmtree(folder, ignore_errors=True)


class NamedAfterSpool:
    """The runs of a stream whose id or task id holds a name that only its temporary copy had (``stdin``, a
    pipe's ``63``, the copy's folders): the next stream read the same way gets the same ids and silently replaces
    them (or, with a random folder in the id, every rerun adds them again). Counted, the first few named, so
    that the summary can say so. ``names``: the copies' paths -> the inputs as named (see :class:`Streams`)."""

    def __init__(self, names: Mapping[str, str], kept: int = 5) -> None:
        self.names = names
        self.runs = 0
        self.kept = kept
        self.examples: list[str] = []
        self.streams: set[str] = set()

    def __call__(self, parsed: Parsed) -> Parsed:
        """``parsed`` (read from its copy, before :func:`parsed_as_given`), counted when it is named so."""
        run = parsed.trajectory
        given = self.names.get(parsed.source)
        if run is not None and given is not None and _spooled(run, Path(parsed.source)):
            self.runs += 1
            self.streams.add(given)
            if len(self.examples) < self.kept:
                self.examples.append(run.trajectory_id)
        return parsed

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "streams": sorted(self.streams), "examples": self.examples}


def _spooled(run: Trajectory, copy: Path) -> bool:
    """Whether ``run``'s id or task id holds a name of ``copy`` that the operator did not give."""
    split = stream_copy(copy)
    if split is None:
        return False
    folders, given = split
    names = [folders.parent.name, folders.name]
    if len(given.parts) == 1 and (given.name == "stdin" or given.name.isdigit()):  # unnamed: the placeholder
        names.append(given.name)
    ids = (run.trajectory_id, run.task_id or "")
    return any(re.search(rf"(?<![A-Za-z0-9]){re.escape(name)}(?![A-Za-z0-9])", text) for name in names for text in ids)


def as_given(text: str, names: Mapping[str, str]) -> str:
    """``text`` with each stream's copy named as the operator named the stream (``names``: see :class:`Streams`)."""
    for copy, name in names.items():
        text = text.replace(copy, name)
    return text


def marked(parsed: Parsed, marks: Mapping[str, str]) -> Parsed:
    """``parsed`` (read from its file or a stream's copy, before :func:`parsed_as_given`) with its run marked with
    the file it was read from (``represent.SOURCE_MARK``), for an indexer that cannot see that file: a stream's
    by ``marks`` (:attr:`Streams.marks`), any other by its path."""
    if (run := parsed.trajectory) is None:
        return parsed
    mark = next((m for copy, m in marks.items() if parsed.source == copy or parsed.source.startswith(copy + os.sep)),
                None) or source_mark(parsed.source)
    return replace(parsed, trajectory=run.model_copy(update={"metadata": {**run.metadata, INGESTED_FROM: mark}}))


def parsed_as_given(parsed: Parsed, names: Mapping[str, str]) -> Parsed:
    """A record of a stream's copy as of the stream the operator named: the copy is gone after the ingest."""
    error = as_given(parsed.error, names) if parsed.error is not None else None
    return replace(parsed, source=as_given(parsed.source, names), error=error)


def _copy_stream(source: IO[bytes], target: IO[bytes], chunk: int = 1 << 20) -> None:
    """``source`` to its end into ``target``, waiting for its writer at most a second at a time: the kernel may
    hand a SIGTERM to another thread (numpy's, gRPC's), and Python acts on it only once this one runs again,
    so a blocking read from a stalled writer would never end the ingest (nor remove its copy)."""
    try:
        fd = source.fileno()
    except OSError:  # no file descriptor (a test's in-memory stdin): nothing to wait on
        shutil.copyfileobj(source, target, chunk)
        return
    while True:
        if not select.select([fd], [], [], 1.0)[0]:
            continue
        data = os.read(fd, chunk)
        if not data:
            return
        target.write(data)


def _open_stream(path: Path) -> ContextManager[IO[bytes]]:
    """The stream's bytes; standard input is left open (it is not ours to close)."""
    if str(path) != STDIN:
        return open(path, "rb")
    if sys.stdin is None or sys.stdin.isatty():
        raise ValueError("'-' reads a dump from standard input, which is a terminal here: pipe one in "
                         "(zcat dump.jsonl.gz | trajsearch ingest -)")
    return nullcontext(sys.stdin.buffer)


# -- units -------------------------------------------------------------------------------


def _adapter_paths(name: str, fmt: str | None = None) -> tuple[tuple[str, ...], ...]:
    """The paths the adapters declare under ``name``, as path parts; under a forced format only its own (another
    producer's sessions are not of that format). ``SESSION_FOLDERS``: the hidden folders the agent CLIs keep their
    sessions in (``.claude/projects``, ``.codex/sessions``, ``.gemini/tmp``), walked where other hidden folders are
    not (or the files of a pattern directly in one: ``.chats/*.json``). ``SESSION_STORES``: the binary stores
    frameworks keep sessions in (``.adk/session.db``), handed in, hidden or not, when a walk finds no dump, for
    detection to name them and say how to export their runs (a file of one's name elsewhere, ``crush.db`` copied out
    of ``.crush/``, or of a bare name, ``conversations.db``, when its tables say it is one); beside dumps, named so."""
    return tuple(tuple(Path(path).parts) for mod in adapter_hooks(name, fmt) for path in getattr(mod, name))


def _in_session_folder(parts: tuple[str, ...], folder: tuple[str, ...]) -> bool:
    """Whether ``parts`` (a path from a hidden part on) lies in the session folder ``folder``: anywhere below it, or,
    where its last part is a file pattern (``.chats/*.json``, the AI SDK example's chats: other apps keep other files
    in a folder of that name), a file of that pattern directly in it."""
    if "*" in folder[-1]:
        return len(parts) == len(folder) and parts[:-1] == folder[:-1] and fnmatchcase(parts[-1], folder[-1])
    return len(parts) > len(folder) and parts[:len(folder)] == folder


def _hidden_part(parts: tuple[str, ...], walked: tuple[tuple[str, ...], ...]) -> str | None:
    """The hidden file or folder a walked path lies under (``.git``, ``.venv``, a cache, an editor's settings: no
    runs there), else None. An agent CLI's own session folder (one of ``walked``) is not hidden from the walk: a
    backup of ``~/.claude`` or a project that committed its ``.gemini/tmp`` keeps its sessions there."""
    for at, part in enumerate(parts):
        if part.startswith(".") and not any(_in_session_folder(parts[at:], folder) for folder in walked):
            return part
    return None


#: Archives (which may hold dumps) and compressions trajsearch does not read, by the end of a file's name: a walk
#: names those it passes over, as it names hidden folders (detection tells them by their bytes when named).
_ARCHIVES = {".tar": "tar", ".tar.gz": "tar", ".tgz": "tar", ".tar.bz2": "tar", ".tbz2": "tar", ".tar.xz": "tar",
             ".txz": "tar", ".tar.zst": "tar", ".zip": "zip", ".7z": "7-Zip", ".rar": "rar"}
#: Binary protobuf files, as OTLP exports name them (``harbor traces export --encoding pb``, ``*.binpb``).
_PROTOBUF = (".pb", ".binpb")
PROTOBUF = "binary protobuf"
_COMPRESSIONS = {".bz2": "bzip2", ".xz": "xz", ".lz4": "lz4"}  # (gzip and zstd are read: see sources)


def _packed_kind(name: str) -> str | None:
    """What a file passed over by the walk is, by its name: an archive, a dump under a compression trajsearch
    does not read (``x.json.bz2``) or a binary protobuf export; None for any other file (a log, a script)."""
    lower = name.lower()
    if kind := next((kind for suffix, kind in _ARCHIVES.items() if lower.endswith(suffix)), None):
        return kind
    if lower.endswith(_PROTOBUF):  # an OTLP export written as binary protobuf (--encoding pb): nothing says so else
        return PROTOBUF
    stem, dot, suffix = lower.rpartition(".")
    kind = _COMPRESSIONS.get(dot + suffix)
    return kind if kind is not None and stem.endswith(DUMP_SUFFIXES) else None


def _dump_named(name: str) -> bool:
    """Whether a file's name is a dump's (``.jsonl``, ``.json``, ``.traj``, ... or one compressed: ``.gz``, ``.zst``),
    not a sidecar's."""
    if archive_format(Path(name)) is not None:  # an archive an adapter reads itself (Inspect AI's .eval)
        return True
    name = sources.plain_name(name)
    return name.endswith(DUMP_SUFFIXES) and name not in SIDECAR_NAMES


#: A folder's documents and licences, by the start of their names (any ``*.md`` too): no runs.
_DOCUMENTS = ("README", "LICENSE", "LICENCE", "COPYING", "NOTICE", "CHANGELOG")


def _known_side_file(path: Path) -> bool:
    """Whether a file not named as a dump is one a producer writes beside its runs (``SIDECAR_NAMES``, or one an
    adapter's ``side_path`` names: a Harbor trial's ``trial.log``, SWE-agent's ``<id>.debug.log``, mini-swe-agent's
    ``minisweagent.log``, ...), or a document (``README.md``, ``LICENSE``), so that a walk passing it over has
    nothing to tell: named, they hid the one file that mattered (a run kept as ``session.log``) among hundreds."""
    name = sources.plain_name(path.name)
    return name in SIDECAR_NAMES or name.upper().startswith(_DOCUMENTS) or name.lower().endswith(".md") \
        or side_path(path, None) is not None


#: How many of the files passed over by name a message names, and how many a walk counts at most.
NAMED_OTHERWISE_SHOWN, NAMED_OTHERWISE_COUNTED = 8, 1000


def passed_over_by_name(files: list[Path], *, base: Path | None = None, more: bool = False) -> str:
    """What a walk that found no dump says of the files it passed over by name (shown relative to ``base``; ``more``:
    there are more than ``files``): the largest first, as a dump of runs outweighs the notes beside it (the first
    three by name had hidden ``runs.log`` behind ``n1.txt`` to ``n3.txt``), and how to have one read."""
    def size(file: Path) -> int:
        try:
            return file.stat().st_size
        except OSError:  # gone since the walk
            return 0

    largest = sorted(files, key=lambda f: (-size(f), str(f)))[:NAMED_OTHERWISE_SHOWN]
    shown = ", ".join(_shown(f.relative_to(base) if base else f) for f in largest)
    return (f"{len(files)}{'+' if more else ''} file(s) passed over by name, the largest first: {shown}"
            f"{', …' if len(files) > len(largest) else ''}; name a file itself to read it, with --format NAME where "
            "its format is not detected")


#: How many session databases the walk's note names with their export command.
_STORES_NAMED = 3
#: The files SQLite keeps beside a database (its write-ahead log, its shared memory, its rollback journal): a
#: store's, passed over with it unsaid (no format reads them, and the store is named).
_SQLITE_SIBLINGS = ("-wal", "-shm", "-journal")


def _stores_not_read(stored: dict[Path, StoreKind | None], root: Path) -> str:
    """The walk's note on the session databases it found beside dumps, which it does not read (said on every ingest
    of the folder: short): a line each, its format and the command that writes its sessions as a file to ingest (a
    walk that finds no dump hands them in, to be refused with the whole account)."""
    def line(path: Path, kind: StoreKind | None) -> str:
        kind = kind or session_store_kind(path)
        if kind is None:  # where a store lies, not one (a Git LFS pointer, another database)
            return f"{_shown(path.relative_to(root))}: not a session database trajsearch knows"
        at = kind.text.find(EXPORT_PREFIX)
        return f"{_shown(path.relative_to(root))}: {kind.fmt}: {kind.text[at:] if at >= 0 else kind.text}"

    shown = sorted(stored)[:_STORES_NAMED]
    more = f"\n  and {len(stored) - len(shown)} more (ingest one alone for its command)" \
        if len(stored) > len(shown) else ""
    return (f"{len(stored)} session database(s) not read, each with the command that writes its sessions to ingest:"
            + "".join(f"\n  {line(p, stored[p])}" for p in shown) + more)


def _walked_name(p: Path, fmt: str | None, taken: bool) -> bool:
    """Whether a walk under ``fmt`` (None: any) reads ``p`` by its name: an archive an adapter reads itself (Inspect
    AI's ``.eval``) when it is a zip (a text ``notes.eval`` is no log) and the walk is that format's or any; else a
    dump's name (:func:`_dump_named`), or a file an adapter's ``walked_file`` takes where it lies (a Harbor trial's
    ``agent/claude-code.txt``: ``taken``, asked once by the walk). Under a text format forced (``read_text``: Aider's
    Markdown), only those: a project's ``package.json`` is no history, and a walk of the project would refuse it.
    What is not read so is passed over by name."""
    if (own := archive_format(p)) is not None:
        return fmt in (None, own) and sources.is_zip(p)
    return taken or (_dump_named(p.name) and not (fmt and adapter_hooks("read_text", fmt)))


def _dump_files(root: Path, *, tell_hidden: bool = False, fmt: str | None = None,
                unlisted: list[tuple[Path, str]] | None = None) -> list[Path]:
    """The dump files under ``root``, each once; ``tell_hidden``: warn of those left out under hidden folders, and
    of the archives and compressed dumps passed over (see :func:`_packed_kind`), so that a walk which reads
    nothing says why; then a walk that found nothing but those raises ValueError saying so; ``fmt``: the format
    forced, whose CLI's session folders alone are walked (see :func:`_adapter_paths`); ``unlisted``: gets the
    folders that could not be listed or entered, outside hidden ones (see :func:`_walk`)."""
    hidden: dict[str, set[tuple[int, int] | str]] = {}  # per hidden folder, the files left out (by identity)
    not_files: list[str] = []  # named as dumps, but a dangling link, a FIFO, a socket: nothing to read
    packed: list[str] = []  # archives and compressed dumps: read by no reader
    twins: list[str] = []  # compressed copies of the start of a dump beside them (see sources.compressed_twin)
    walked, stores = _adapter_paths("SESSION_FOLDERS", fmt), _adapter_paths("SESSION_STORES", fmt)
    # session stores found, with what they are where asked: handed in only where the walk found no dump (see below)
    stored: dict[Path, StoreKind | None] = {}
    # a store by where it lies (.crush/crush.db): a file name alone (conversations.db, opencode.db) is no place, other
    # apps use it too: such a file, as one named as a store out of its folder, is asked its tables (crush.db, ...)
    placed = tuple(store for store in stores if len(store) > 1)
    store_names = {store[-1] for store in stores}
    kinds: dict[Path, StoreKind | None] = {}  # of those, what each is: asked once (its -wal asks too)

    def at_store(p: Path) -> bool:
        """Whether ``p`` lies where a store does (.crush/crush.db): its own path, not the walk's part of it, so that
        a walk of goose's sessions folder itself finds goose/sessions/sessions.db."""
        return any(p.absolute().parts[-len(store):] == store for store in placed)

    def store_kind(p: Path) -> StoreKind | None:
        """What ``p``, lying out of its store's folder, is when named as a store (crush.db) and its tables say so."""
        if p.name in store_names and p not in kinds:
            kinds[p] = session_store_kind(p, fmt) if p.is_file() else None
        return kinds.get(p)

    def store_sibling(p: Path) -> bool:
        """Whether ``p`` is a store's ``-wal``, ``-shm`` or ``-journal``, where the store lies or out of it."""
        db = next((p.with_name(p.name[:-len(end)]) for end in _SQLITE_SIBLINGS if p.name.endswith(end)), None)
        return db is not None and (at_store(db) or store_kind(db) is not None)
    # SESSION_PIECES: a pattern on a file's path, the files an agent CLI keeps its sessions in pieces of, none a run
    # alone (OpenCode's ``storage/``)
    piecers = adapter_hooks("SESSION_PIECES", fmt)
    walkers = adapter_hooks("walked_file", fmt)  # files not named as dumps that hold a run where they lie
    pieces: dict[Any, list[Path]] = {}  # per adapter, the files of its CLI's session storage: no run alone, named once
    others: list[Path] = []  # files not named as dumps, nor archives: named where the walk found nothing else
    unknown: list[Path] = []  # of those, the ones no producer is known to write beside runs: told beside dumps
    # (sorted out only where they are told: each asks every adapter's side_path, which may read the file's JSON)

    def wanted(p: Path) -> bool:
        if at_store(p):
            if p.is_file():
                stored[p] = None
            return False
        if (mod := next((m for m in piecers if m.SESSION_PIECES.search(p.as_posix())), None)) is not None:
            if p.is_file():
                pieces.setdefault(mod, []).append(p)
            return False
        taken = any(mod.walked_file(p) for mod in walkers)  # (claude_code's may read a trial's JSON: asked once)
        if not _walked_name(p, fmt, taken):
            if _hidden_part(p.relative_to(root).parts, walked) is None and p.is_file():
                if (store := store_kind(p)) is not None:  # a crush.db copied out of .crush/, a conversations.db
                    stored[p] = store
                elif store_sibling(p):  # its -wal, -shm: passed over with it, unsaid
                    pass
                elif (kind := _packed_kind(p.name)) and not _known_side_file(p):  # (one an adapter reads with a run)
                    packed.append(f"{_shown(p.relative_to(root))} ({kind})")
                else:  # counted up to a message's figure, not a census of a share
                    if len(others) < NAMED_OTHERWISE_COUNTED:
                        others.append(p)
                    if tell_hidden and len(unknown) < NAMED_OTHERWISE_COUNTED and not _known_side_file(p):
                        unknown.append(p)
            return False
        # a file an adapter walks may be hidden itself (.aider.chat.history.md): only its folders are asked
        inside = p.relative_to(root).parts
        own = inside[:-1] if taken else inside
        if (part := _hidden_part(own, walked)) is not None:
            # counted by identity: a file reached by two hidden paths is one file left out; not one inside an agent's
            # session folder (a hidden folder before it) that its adapter calls bookkeeping (SpecStory's
            # .specstory/.project.json): no run to read by naming it (side_path asked there only: it may read JSON)
            in_session_folder = any(q.startswith(".") for q in own[:own.index(part)])
            if p.is_file() and not (in_session_folder and side_path(p, None)):
                hidden.setdefault(part, set()).add(_identity(p))
            return False
        if not p.is_file():
            if not p.is_dir():
                not_files.append(_shown(p.relative_to(root)))
            return False
        if sources.compressed_twin(p):
            twins.append(_shown(p.relative_to(root)))
            return False
        return True

    denied: list[tuple[Path, str]] = []
    tree = _walk(root, walked, denied)
    denied = [(d, why) for d, why in denied  # a hidden folder's files are not read anyway (said below)
              if not d.is_relative_to(root) or _hidden_part(d.relative_to(root).parts, walked) is None]
    if unlisted is not None:
        unlisted.extend(denied)
    found = sorted(p for p in tree.entries if wanted(p))
    files, seen = [], set()
    for path in (_where(tree.real.get(p, p), tree.folders) for p in found):  # a file under a link: where it lies
        identity = _identity(path)  # a file linked twice in the tree is read once, by the first path walked to it
        if identity not in seen:
            seen.add(identity)
            files.append(path)
    hidden = {part: left for part, ids in hidden.items() if (left := ids - seen)}  # read through a link: not left out
    if stored and not files:  # only a session store: a rejection whose message says how to export its sessions
        files = sorted(stored)
    elif stored and tell_hidden:  # beside dumps (eval results, sessions already exported): a note, not a rejection
        log.warning("%s", _stores_not_read(stored, root))
    if tell_hidden and twins:  # said as every file passed over is: a compressed file's runs were lost unsaid
        log.warning("passed over %d compressed cop%s of the start of the file beside it, which is read: %s",
                    len(twins), "y" if len(twins) == 1 else "ies",
                    ", ".join(twins[:5]) + (" …" if len(twins) > 5 else ""))
    if tell_hidden and tree.looped:
        log.warning("%d link(s) to a folder that holds them not followed (a loop): %s", len(tree.looped),
                    ", ".join(tree.looped[:5]) + (" …" if len(tree.looped) > 5 else ""))
    under_hidden = ""
    if hidden:
        whose = "the agents' and apps'" if fmt is None else f"{fmt}'s"
        under_hidden = (f"{sum(map(len, hidden.values()))} file(s) under hidden folders not read ("
                        + ", ".join(f"{name}: {len(ids)}" for name, ids in sorted(hidden.items()))
                        + f"): only {whose} session folders ("
                        + (", ".join(map(_shown_folder, walked)) or "none")
                        + ") are walked; name a hidden folder to read it")
    if tell_hidden and not_files:
        log.warning("%d dump-named entr%s not read: not a regular file (a dangling link, a FIFO: name a FIFO to read "
                    "it): %s", len(not_files), "y" if len(not_files) == 1 else "ies",
                    ", ".join(not_files[:5]) + (" …" if len(not_files) > 5 else ""))
    proto = sorted(p for p in packed if p.endswith(f"({PROTOBUF})"))
    packed = sorted(p for p in packed if p not in proto)
    what = "; ".join(f"{len(found)} {label} trajsearch does not read: " + ", ".join(found[:5])
                     + (" …" if len(found) > 5 else "") + f": {advice} to read their runs"
                     for found, label, advice in ((packed, "archive(s) / compressed file(s)", "unpack them"),
                                                  (proto, "OTLP export(s) in protobuf", "export them as OTLP/JSON"))
                     if found)
    what = "; ".join(filter(None, [what] + [mod.pieces_note(sorted(found)) for mod, found in pieces.items()]))
    if tell_hidden and not files and not denied and (what or under_hidden):  # what the walk found is all it says
        # the files beside an archive too: "runs.log" had gone unsaid beside "dump.zip" (review NEWB, 7)
        only = "; and ".join(filter(None, (what, under_hidden, others and passed_over_by_name(others, base=root))))
        raise ValueError(f"{_shown(root)}: no dump file here, only {only}")
    if tell_hidden and under_hidden:
        log.warning("%s", under_hidden)
    if tell_hidden and what:
        log.warning("passed over %s", what)
    if tell_hidden and files and unknown:
        # beside the dumps read too: a run kept as `run.log` or `trace.txt` was lost unsaid (round 26, AUD6)
        log.warning("%s", passed_over_by_name(unknown, base=root, more=len(unknown) >= NAMED_OTHERWISE_COUNTED))
    return sorted(files)


def holds_input(root: Path, fmt: str | None = None) -> bool:
    """Whether a walk of the folder ``root`` finds a file to read (a dump, a session store) or a folder it cannot
    list (read as a rejection): one that finds neither holds nothing to ingest, which the CLI says before it makes
    anything (exit 2). Said nothing of: the ingest's own walk warns of what it passes over. The first file named as a
    dump outside hidden folders answers at once (a folder of dumps is not walked twice); only a folder without one
    is walked as the ingest walks it (an agent CLI's hidden session folders, a session store)."""
    for folder, subfolders, files in os.walk(root):
        if any(_dump_named(name) for name in files):
            return True
        subfolders[:] = [name for name in subfolders if not name.startswith(".")]
    unlisted: list[tuple[Path, str]] = []
    return bool(_dump_files(root, fmt=fmt, unlisted=unlisted) or unlisted)


def _where(path: Path, folders: set[Path]) -> Path:
    """Where a file reached by a link to it lies, when that is in a folder the walk read (``exp5/best.traj.json ->
    ../runs/x/x.traj.json``) and is named as a dump: run ids are made of folder and file names, and the link's
    made the run a second one, under another id, on the next ingest (a folder link is read where it lies too).
    A link to a file outside the walk, or to a file not named as a dump (a blob store's ``sha256-…``), is read at
    the link's path: the link's name is all that says what the file is."""
    if not path.is_symlink():
        return path
    try:
        target = path.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, or a loop of links: reading it says so
        return path
    return target if target.parent in folders and _dump_named(target.name) else path


class _Tree(NamedTuple):
    """What :func:`_walk` found: every entry as walked, where each reached through a link to a folder really lies,
    the links not followed for making a loop (shown relative to the root), and the folders listed, where they lie."""

    entries: list[Path]
    real: dict[Path, Path]
    looped: list[str]
    folders: set[Path]


def _shown_folder(folder: tuple[str, ...]) -> str:
    """A walked session folder as a walk's message names it: an entry ending in a file pattern as the folder and
    the files of it read (``.chats (its *.json files)``), no agent's folder of that name."""
    if "*" in folder[-1]:
        return f"{'/'.join(folder[:-1])} (its {folder[-1]} files)"
    return "/".join(folder)


def _walk_context(parts: tuple[str, ...], walked: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """What decides, beyond their path below it, whether the entries under a folder (``parts``, relative to the
    root) are hidden (see :func:`_hidden_part`): None when all are (a hidden folder no session folder lies in:
    ``.venv``, ``.git``); the hidden path on the way into a session folder (``.claude``: only ``projects`` below
    it is walked); else nothing (``()``). Two paths to one folder with one context list the same files."""
    for at, part in enumerate(parts):
        if not part.startswith("."):
            continue
        tail = parts[at:]
        if any(len(folder) > len(tail) and folder[:len(tail)] == tail for folder in walked):
            return tail
        if not any(tail[:len(folder)] == folder for folder in walked):
            return None
    return ()


def _walk(root: Path, walked: tuple[tuple[str, ...], ...] = (),
          unlisted: list[tuple[Path, str]] | None = None) -> _Tree:
    """Every entry under ``root`` (as ``rglob("*")`` lists them), through links to folders too, each folder listed
    once (see :class:`_Tree`). ``walked``: the session folders hidden folders are walked for (see
    :func:`_adapter_paths`). A link to a folder on its own path or above ``root`` (``loop -> ..``, a link to
    ``/``) is not followed, and named. ``unlisted`` gets each folder that could not be listed (permission denied:
    a container's output folder of mode 0700) or listed but not entered (mode 0744, what ``chmod -R 644`` leaves),
    with why: ``rglob`` passed over the first in silence, and the second ended the whole ingest (a file's stat
    raised PermissionError).

    ``rglob`` does not follow a link to a folder, so a dump tree arranged with links (``latest -> 2026-12-04/``, a
    folder of links to each experiment's results) read nothing from them, and the walk said "no run in the input".
    A linked folder's files are read where they lie, as a linked folder named as an input is (see
    :func:`plan_units`): run ids are made of folder names, and must not hang on a link's name.
    A folder reached again (``run-2/prev -> ../run-1``, ``latest -> 2026-12-04``) is not listed again when its
    entries would be judged alike (see :func:`_walk_context`): a tree of such links, each run linking the one
    before, was walked once per path through it, for seconds to minutes. The folders under hidden ones are walked
    last, and no link in them is followed (``.venv/lib64 -> lib``): what they hold is not read, only counted, and
    a folder a hidden path and another both lead to is listed through the other, its files read."""
    entries: list[Path] = []
    real: dict[Path, Path] = {}
    looped: list[str] = []
    folders: set[Path] = set()
    listed: set[tuple[tuple[int, int], tuple[str, ...] | None]] = set()  # (folder identity, context) listed
    identities: set[tuple[int, int]] = set()  # every folder identity listed, in whatever context
    above = tuple(_dir_identity(folder) for folder in (root, *root.parents))
    Todo = tuple[Path, "Path | None", tuple[tuple[int, int], ...]]
    # the folders to list, in turn: those on no link first (a link to one of them is then passed over, so
    # that paths do not grow link by link: run-400/prev/prev/...), then those reached by a link, then the hidden
    real_ones: list[Todo] = [(root, None, above)]
    linked: list[Todo] = []
    dead: list[Todo] = []
    while real_ones or linked or dead:
        folder, real_folder, chain = (real_ones or linked or dead).pop()
        context = _walk_context(folder.relative_to(root).parts, walked)
        key = (chain[-1], context)
        if key in listed or (context is None and chain[-1] in identities):
            continue
        listed.add(key)
        identities.add(chain[-1])
        try:
            with os.scandir(folder) as listing:
                children = list(listing)
        except FileNotFoundError:  # removed since it was listed: nothing there
            continue
        except OSError as exc:
            if unlisted is not None:
                unlisted.append((real_folder or folder, (exc.strerror or str(exc)).lower()))
            continue
        if (why := _cannot_enter(children)) is not None:
            if unlisted is not None:
                unlisted.append((real_folder or folder, why))
            continue
        folders.add(real_folder or folder)
        for child in children:
            path = folder / child.name
            entries.append(path)
            if real_folder is not None:
                real[path] = real_folder / child.name
            try:
                if not child.is_dir():  # a link to a folder is a folder here
                    continue
                hidden = context is None or _walk_context(path.relative_to(root).parts, walked) is None
                if hidden and child.is_symlink():  # what it leads to is not read, only counted: not followed
                    continue
                ident = _dir_identity(path)
                target = path.resolve() if child.is_symlink() else real.get(path)
            except (OSError, RuntimeError):  # RuntimeError: a loop of links, where resolve() raises
                continue
            if ident in chain:
                looped.append(_shown(path.relative_to(root)))
                continue
            todo = dead if hidden else linked if child.is_symlink() else real_ones
            todo.append((path, target, chain + (ident,)))
    return _Tree(entries, real, sorted(looped), folders)


def _cannot_enter(children: list[os.DirEntry[str]]) -> str | None:
    """Why the folder just listed as ``children`` cannot be entered, if it cannot: one that may be read but not
    searched (mode 0644: ``chmod -R 644`` on a dump tree) lists its names, and then no entry of it can be
    stat'ed, opened or walked (``is_file()`` raised PermissionError, ending the whole ingest)."""
    if not children:
        return None
    try:
        os.lstat(children[0].path)
    except PermissionError as exc:
        return (f"it can be listed but not entered ({(exc.strerror or str(exc)).lower()}: a folder's files are "
                "reached through its x permission, which chmod -R 644 takes away)")
    except OSError:  # removed since it was listed: the others are still read
        return None
    return None


def _dir_identity(path: Path) -> tuple[int, int]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino


def _identity(path: Path) -> tuple[int, int] | str:
    """What tells one file from another however it is reached (a link, a second name): its device and inode; its
    path when it cannot be stat'ed (removed since it was listed: reading it says so)."""
    try:
        stat = path.stat()
    except OSError:
        return str(path)
    return stat.st_dev, stat.st_ino


def _misnamed(path: Path) -> str | None:
    """Why a path cannot be read as a dump when a name in it is not UTF-8 (a Latin-1 name from a Windows-made zip or
    an old share, which Python holds as lone surrogates): run ids and task ids are made of names, and no JSON,
    terminal or index field takes such a character. None when every name is UTF-8."""
    for part in reversed(path.parts):
        bad = next((ch for ch in part if "\udc80" <= ch <= "\udcff"), None)
        if bad is not None:
            return (f"the name '{_shown(part)}' is not UTF-8 (byte 0x{ord(bad) - 0xDC00:02X}): rename it "
                    "(convmv -f latin1 -t utf8, for one): run ids are made of names")
    return None


def _shown(path: str | Path) -> str:
    """A path as text any output takes (JSON, a terminal, the checkpoint): a byte of a name that is not UTF-8
    escaped as ``\\xe9`` (see :func:`_misnamed`); other paths as they are."""
    text = str(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    return text


def _misnamed_unit(path: Path) -> Unit | None:
    """A rejection of its own for a file whose path is not UTF-8 (see :func:`_misnamed`), named with the byte
    escaped, so that the other inputs are read."""
    if (why := _misnamed(path)) is None:
        return None
    return Unit(_shown(path), None, (path,), error=f"{_shown(path)}: {why}")


def _unreadable_unit(path: Path) -> Unit | None:
    """A rejection of its own for a file this user may not read (a container's output of mode 0600), saying so:
    detection took the refused open for a corrupt gzip ("truncated or corrupt gzip: [Errno 13] Permission
    denied"). None when it opens (or is gone: reading it says so)."""
    try:
        os.close(os.open(path, os.O_RDONLY))
    except PermissionError as exc:
        return Unit(_shown(path), None, (path,),
                    error=f"{_shown(path)}: not readable: {(exc.strerror or str(exc)).lower()} (let this user read it)")
    except OSError:
        return None
    return None


def _run_folder(path: Path, fmt: str | None) -> Unit | None:
    """The unit of the run folder ``path`` stands for (the folder, or a part an adapter names, e.g. its state
    file), by the adapters that keep a run as a folder of files (``run_folder``)."""
    for mod in adapter_hooks("run_folder", fmt):
        if (folder := mod.run_folder(path)) is not None:
            files = mod.folder_files(folder) if hasattr(mod, "folder_files") else _dump_files(folder)
            return Unit(str(folder), mod.NAME, tuple(files), folder=True)
    return None


def _side_folder(unit: Unit, *, named: Path) -> bool:
    """Whether a run folder holds no run of its own, as ``side_path`` tells of a file by where it lies (the raw
    session a Harbor trial's ATIF run was converted from): passed over with a line saying so, or, where the input
    named is that folder (or a part of it), ``SideFile``, as for a side file named."""
    if not (what := side_path(Path(unit.key), unit.fmt)):
        return False
    if Path(unit.key) == named or Path(unit.key) in named.parents:  # the folder, its events/ or its state named
        raise SideFile(f"{named}: no run in this folder: {what}")
    log.info("passed over: %s: no run in this folder: %s", unit.key, what)
    return True


def plan_units(path: str | Path, fmt: str | None = None) -> list[Unit]:
    """The units of one input: each file, except that span files of one format are read together and the
    files of a run folder make one unit.

    A single file whose format cannot be detected raises ValueError now; in a
    directory such a file becomes a unit carrying the error. The path is resolved first: adapters derive run
    ids from where a file lies, which must not depend on how its path was written (``x.traj`` or ``./runs/x.traj``).
    """
    if fmt is not None:
        adapter_for(fmt)
    if is_stream(path):
        raise ValueError(f"{path}: a pipe or FIFO gives its bytes once, and a dump is opened more than once (to "
                         "detect its format, then to read it): copy it first (read.Streams; the CLI's ingest does)")
    p = Path(path).resolve()
    if not p.exists():
        raise FileNotFoundError(f"no such dump file or directory: {_shown(p)}")
    if not p.is_dir():
        if why := _misnamed(p):
            raise ValueError(f"{_shown(p)}: {why}")
        if (unreadable := _unreadable_unit(p)) is not None:
            raise ValueError(unreadable.error)
        if (folder := _run_folder(p, fmt)) is None:
            return [Unit(str(p), forced_format(p, fmt) if fmt else detect_format(p), (p,), forced=fmt is not None)]
        if folder.files and all(f.parent == p.parent for f in folder.files):
            return [folder]  # a run whose files lie beside the one named (Cline's): not all else under that folder
        p = Path(folder.key)  # a file standing for its run folder (OpenHands' state file): the folder, walked below
    units: list[Unit] = []
    spans: dict[str, list[Path]] = {}
    unlisted: list[tuple[Path, str]] = []
    listed = _dump_files(p, tell_hidden=True, fmt=fmt, unlisted=unlisted)
    units.extend(Unit(_shown(d), None, (d,), error=f"{_shown(d)}: folder not read: {why}; its runs are not "
                      "read (let this user list and enter it: chmod a+rx)") for d, why in unlisted)
    bad = [u for u in (_misnamed_unit(f) or _unreadable_unit(f) for f in listed) if u is not None]
    units.extend(bad)
    files = [f for f in listed if f not in {u.files[0] for u in bad}]
    folders = {u.key: u for u in (_run_folder(d, fmt) for d in sorted({f.parent for f in files})) if u is not None}
    units.extend(u for u in folders.values() if not _side_folder(u, named=p))
    claimed = {f for u in folders.values() for f in u.files}
    for file in (f for f in files if f not in claimed):
        try:
            file_fmt = walked_format(file, fmt)
        except SideFile as exc:  # predictions or a report beside the runs: nothing to read, nothing wrong
            log.info("passed over: %s", exc)
            continue
        except (ValueError, OSError) as exc:
            units.append(Unit(str(file), None, (file,), error=str(exc)))
            continue
        except RecursionError as exc:  # telling it (or a side file) recursed too deep: the others are still read
            units.append(Unit(str(file), None, (file,), error=f"{_shown(file)}: {too_deep(exc)}"))
            continue
        if is_grouped(file_fmt):
            spans.setdefault(file_fmt, []).append(file)
        else:
            units.append(Unit(str(file), file_fmt, (file,), forced=fmt is not None))
    for span_fmt, files in spans.items():
        units.append(Unit(f"{p}#{span_fmt}", span_fmt, tuple(files)))
    return units


def plan_inputs(paths: Iterable[str | Path], fmt: str | None = None) -> list[Unit]:
    """The units of several inputs: as :func:`plan_units` each, except that the span files of one format
    are read together across all the inputs (a trace's spans and its log records often sit in files
    named one by one, ``ingest spans.json logs.json``, and join only when read together), that a file
    that cannot be read or detected is a unit carrying its error (see :func:`_input_units`), and that a side
    file among several inputs is passed over (see :func:`_named_units`)."""
    if fmt is not None:
        adapter_for(fmt)  # a bad --format is the operator's error, not one input's
    units: list[Unit] = []
    spans: dict[str, list[Unit]] = {}
    for unit in _named_units(list(paths), fmt):
        if unit.error is None and unit.grouped:
            spans.setdefault(unit.fmt, []).append(unit)  # type: ignore[arg-type]
        else:
            units.append(unit)
    for span_fmt, group in spans.items():
        if len(group) == 1:
            units.append(group[0])
        else:  # a key of its own, stable for the same inputs (the checkpoint resumes by it)
            digest = hashlib.sha1("\n".join(u.key for u in group).encode()).hexdigest()[:12]
            units.append(Unit(f"{group[0].key}+{len(group) - 1}#{span_fmt}#{digest}", span_fmt,
                              tuple(f for u in group for f in u.files)))
    return units


def _named_units(paths: list[str | Path], fmt: str | None) -> list[Unit]:
    """The units of every input named. A side file (``SideFile``: a CLI's metadata, history or log beside its
    sessions) named on its own is an error that says what it is; among several inputs it is passed over with a
    line saying so, as in a walked folder: ``ingest subagents/*`` or ``ingest ~/.codex/*`` name one by the shell's
    glob, not by choice. Only side files named: an error naming each."""
    units: list[Unit] = []
    side_files: list[SideFile] = []
    taken: set[tuple[int, int] | str] = set()
    repeats: dict[str, int] = {}
    for path in paths:
        try:
            units += _once(_input_units(path, fmt), taken, repeats)
        except SideFile as exc:
            side_files.append(exc)
    if repeats:
        log.warning("named more than once, read once: %s", ", ".join(
            f"{key} ({n + 1} times)" for key, n in list(repeats.items())[:5]) + (" …" if len(repeats) > 5 else ""))
    if len(side_files) == len(paths) == 1:
        raise side_files[0]
    if side_files and len(side_files) == len(paths):
        raise SideFile(f"none of the {len(paths)} inputs holds a run: " + "; ".join(map(str, side_files)))
    for exc in side_files:
        log.warning("passed over: %s", exc)
    return units


def _once(units: list[Unit], taken: set[tuple[int, int] | str], repeats: dict[str, int]) -> list[Unit]:
    """``units`` less the files an earlier input already gave (``taken``, by :func:`_identity`: the same file named
    again, inside a folder named, through ``..`` or a link), each unit left with none counted in ``repeats``: read
    twice, its runs were counted twice in a dry run and its time spent twice. A span group keeps its other files;
    another unit that shares some files (none known) is kept whole."""
    kept = []
    for unit in units:
        identities = {f: _identity(f) for f in unit.files}  # one stat a file
        fresh = tuple(f for f in unit.files if identities[f] not in taken)
        if unit.files and not fresh:
            repeats[unit.key] = repeats.get(unit.key, 0) + 1
            continue
        taken.update(identities.values())
        kept.append(replace(unit, files=fresh) if unit.grouped else unit)
    return kept


def _input_units(path: str | Path, fmt: str | None) -> list[Unit]:
    """:func:`plan_units` of one input of several, where a file named on its own that cannot be read or
    detected is a rejection (a unit carrying the error, as in a directory) rather than the end of the job:
    one bad input must not keep the others out. A side file (``SideFile``) raises: :func:`_named_units` says
    whether it ends the job."""
    try:
        return plan_units(path, fmt)
    except (SideFile, FileNotFoundError):
        raise
    except (ValueError, OSError, RecursionError) as exc:
        p = _absolute(path)
        why = f"{_shown(p)}: {too_deep(exc)}" if isinstance(exc, RecursionError) else str(exc)
        return [Unit(_shown(p), None, (p,), error=why)]


def read_unit(
    unit: Unit,
    ctx: Context,
    *,
    options: ReadOptions = ReadOptions(),
    skip: int = 0,
    cursor: tuple[int, int] | None = None,
    on_bytes: OnBytes = None,
) -> Iterator[Parsed]:
    """The records of one unit, from ordinal ``skip`` on (JSONL: seeking to ``cursor``)."""
    if unit.error is not None or unit.fmt is None:
        parsed = Parsed(unit.key, "file", error=unit.error or "no format", unit=unit.key, seq=0)
        if skip == 0 and (kept := _shardable(parsed, options)) is not None:  # another shard's rejection: not ours
            yield kept
        return
    if unit.folder:
        yield from _read_folder(unit, ctx, options, skip, on_bytes)
    elif unit.grouped:
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


def _count_passed_over(options: ReadOptions, source: str, position: str, fmt: str, exc: PassedOver) -> None:
    """A record's or run folder's :class:`PassedOver` logged and counted, by the shard that would have kept its
    error (``error_key``), so that ``--workers`` count it once."""
    log.info("passed over %s: %s: %s", source, position, exc.detail)
    if options.passed_over is not None and (options.keep is None or options.keep(error_key(source, position))):
        options.passed_over.add(source, fmt, exc.unit, exc.reason)


def _finish(trajectory: Trajectory, options: ReadOptions) -> Trajectory:
    return options.outcomes.apply(trajectory) if options.outcomes is not None else trajectory


def _joined(parsed: Parsed, options: ReadOptions) -> Parsed:
    """A run the shard keeps, with its verdict joined: joined after the shard filter, so that the outcome file
    counts the runs this reader keeps (a worker of ``--workers 2`` parses every run but keeps half)."""
    if parsed.trajectory is None or options.outcomes is None:
        return parsed
    trajectory, error = _convert(parsed.fmt or "?", lambda: _finish(parsed.trajectory, options))
    return replace(parsed, trajectory=trajectory, error=error)


def _split(adapter: Any, document: Any) -> Iterator[tuple[str, Any]]:
    """The runs of a whole-file document: the adapter's ``split``, else a list of runs or one run."""
    if hasattr(adapter, "split"):
        yield from adapter.split(document)
    elif isinstance(document, list) and document and all(adapter.matches(item) for item in document):
        yield from ((f"record {n}", item) for n, item in enumerate(document, 1))
    else:
        yield "file", document


def _file_records(path: Path, adapter: Any, cursor: tuple[int, int] | None,
                  on_bytes: OnBytes) -> tuple[Iterator[Record], bool]:
    """A file's records as the adapter takes them, and whether ``cursor`` was honoured."""
    # an archive it reads itself, member by member; or a text of its own that is no JSON (Aider's Markdown); the
    # head peeked only for a format with a text head (goose, opencode), not once more for every file
    own = adapter.read_archive if hasattr(adapter, "read_archive") and sources.is_zip(path) \
        else getattr(adapter, "read_text", None)
    if own is None and hasattr(adapter, "read_head_text"):
        own = head_text_reader(adapter, sources.peek(path))
    if own is not None:
        def read_own() -> Iterator[Record]:
            yield from own(path)
            if on_bytes is not None:
                on_bytes(_size(path))

        return read_own(), False
    if not getattr(adapter, "WHOLE_FILE", False):
        return sources.records(path, cursor, on_bytes)

    def whole(given: int = 0, report: OnBytes = on_bytes) -> Iterator[Record]:
        document, errors = sources.whole_document(path, report)
        yield from errors
        if document is not None:
            try:
                for position, record in itertools.islice(_split(adapter, document), given, None):
                    yield position, record, None, None
            except RecordError as exc:
                yield "file", None, str(exc), None

    reported = 0

    def counted(size: int) -> None:
        nonlocal reported
        reported += size
        if on_bytes is not None:
            on_bytes(size)

    if hasattr(adapter, "read_streamed") and (streamed := adapter.read_streamed(path, counted)) is not None:
        def streamed_then_whole(records: Iterator[Record]) -> Iterator[Record]:
            """The runs streamed, or, past a value the streaming parser refuses but a whole read takes (``1e400``,
            infinity to Python's json; or damage, which the whole read then names), the runs after those given from a
            whole read."""
            try:
                yield from records
            except sources.Unstreamable as exc:
                yield from whole(exc.given, None)
                if on_bytes is not None and _size(path) > reported:  # the bytes the streaming parser did not report
                    on_bytes(_size(path) - reported)

        return streamed_then_whole(streamed), False
    return whole(), False


def _read_records(unit: Unit, ctx: Context, options: ReadOptions, skip: int,
                  cursor: tuple[int, int] | None, on_bytes: OnBytes) -> Iterator[Parsed]:
    path, fmt = unit.files[0], unit.fmt
    adapter = adapter_for(fmt)
    source = str(path)
    ctx = replace(ctx, source=path)  # adapters derive ids from the file's own name
    if hasattr(adapter, "file_hints"):  # what the whole file says, whichever record a resumed read starts at
        ctx = replace(ctx, hints=adapter.file_hints(
            record for _, record, error, _ in sources.records(path)[0] if error is None))
    records, seeked = _file_records(path, adapter, cursor if skip else None, on_bytes)
    records = _past_too_deep(records)
    seq = skip if (cursor and skip and seeked) else 0
    for position, record, error, after in records:
        seq += 1
        if seq <= skip:
            continue
        trajectory = None
        if error is None:
            try:
                trajectory, error = _convert(fmt, lambda: adapter.to_trajectory(record, ctx))
            except PassedOver as exc:  # no run and nothing wrong (an aider session started and quit): counted
                _count_passed_over(options, source, position, fmt, exc)
                continue
        parsed = Parsed(source, position, trajectory=trajectory, error=error, fmt=fmt, unit=unit.key,
                        seq=seq - 1, cursor=after)
        if (kept := _shardable(parsed, options)) is not None:
            yield _joined(kept, options)
    if unit.forced and seq == 0 and (why := _nothing_read_as(fmt, path)):  # a file of another format
        parsed = Parsed(source, "file", error=why, fmt=fmt, unit=unit.key, seq=0)
        if (kept := _shardable(parsed, options)) is not None:
            yield kept


def too_deep(exc: RecursionError) -> str:
    """Why a file (or what is left of it) is not read: JSON nested deeper than Python's recursion limit, met where an
    adapter reads the whole file (splitting it into runs, telling its format, reading a side file) rather than one
    record. Said as the file's rejection: as an exception it ended the ingest (exit 1) and lost the other files'
    runs (a Codex rollout whose question reply held ``[[[...]]]``, round 35)."""
    return f"not read: JSON nested deeper than Python reads ({exc})"


def _past_too_deep(records: Iterator[Record]) -> Iterator[Record]:
    """``records``, and in place of the rest of them the file's rejection (:func:`too_deep`), where reading them
    recursed too deep: the one place that catches it for every adapter's splitting and own reading of a file.
    Defence in depth, as are plan_units' and _input_units' catches: the adapters parse nested JSON through
    ``sources.loads``, and no input known reaches these (cline.py and detect.py, not audited in ROB35, might)."""
    try:
        yield from records
    except RecursionError as exc:
        yield "file", None, too_deep(exc), None


def _nothing_read_as(fmt: str, path: Path) -> str | None:
    """Why a file read under ``--format`` gave no record at all, unless detection takes it for that format too (a
    tau2-bench results.json whose runs lie in simulations/ beside it holds none: the summary says so). Said as a
    rejection, where ``--format claude-code`` on a tau2-bench results file had passed its 50 runs over in silence
    (read 0, exit 0)."""
    if _size(path) == 0:
        return "empty file (0 bytes): no run to read"
    try:
        detected = detect_format(path)
    except (ValueError, OSError):
        detected = None
    if detected == fmt:
        return None
    hint = f"; detected, it reads as {detected} (drop --format to read it so)" if detected else ""
    return f"no record of the format named (--format {fmt}) in this file{hint}"


def _read_folder(unit: Unit, ctx: Context, options: ReadOptions, skip: int, on_bytes: OnBytes) -> Iterator[Parsed]:
    """A run folder as one run: every file parsed, handed over together. A file that cannot be read (the last
    event of a run that was killed, cut short) is left out and named: in the error where the run is not read (the
    adapter's own words would blame a file that is there), in a warning where it is (it may have lost steps)."""
    if skip:
        return
    root, adapter = Path(unit.key), adapter_for(unit.fmt)  # type: ignore[arg-type]
    files: dict[str, Any] = {}
    trajectory, error, unread = None, None, []
    for path in unit.files:
        document, errors = sources.whole_document(path, on_bytes)
        if errors or document is None:
            unread.append(f"{path.relative_to(root)}: {errors[0][2] if errors else 'no JSON value in this file'}")
            continue
        files[path.relative_to(root).as_posix()] = document
    if not files:
        error = "; ".join(unread) or "no files in this run folder"
    else:
        folder_ctx = replace(ctx, source=root)
        try:
            trajectory, error = _convert(unit.fmt, lambda: adapter.read_folder(files, folder_ctx))
        except PassedOver as exc:  # no run and nothing wrong (an OpenHands conversation a hook stopped): counted
            if not unread:
                _count_passed_over(options, unit.key, "folder", unit.fmt, exc)
                return
            error = exc.detail  # no run in the files read, but the run may be in one that was not (a later prompt)
        if unread and error is not None:
            error = f"{error}; not read: {'; '.join(unread)}"
        elif unread:
            log.warning("%s: run read without %s", unit.key, "; ".join(unread))
    parsed = Parsed(unit.key, "folder", trajectory=trajectory, error=error, fmt=unit.fmt, unit=unit.key, seq=0)
    if (kept := _shardable(parsed, options)) is not None:
        yield _joined(kept, options)


def _read_grouped(unit: Unit, ctx: Context, options: ReadOptions, skip: int,
                  on_bytes: OnBytes) -> Iterator[Parsed]:
    fmt = unit.fmt
    adapter = adapter_for(fmt)
    seq = 0
    spool = Spool(options.spool_dir)
    try:
        span_seq = 0
        for path in unit.files:
            file_ctx = replace(ctx, source=path)
            for position, record, error, _ in sources.records(path, None, on_bytes)[0]:
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
            try:
                trajectory, error = _convert(fmt, lambda: adapter.assemble_trajectory(key, nodes, group_ctx,
                                                                                       options.group_by))
            except PassedOver as exc:  # the group holds no run and nothing wrong (a trace of embedding calls)
                log.info("passed over %s %s: %s", options.group_by, key, exc.detail)
                if options.passed_over is not None:
                    options.passed_over.add(source, fmt, options.group_by, exc.reason)
                continue
            yield _joined(Parsed(source, f"{options.group_by} {key} (first span at {position})", trajectory=trajectory,
                                 error=error, fmt=fmt, unit=unit.key, seq=seq - 1), options)
    finally:
        spool.close()


#: Where a run was read: (file, format, position in the file).
_Where = tuple[str, str, str]


#: Metadata an adapter takes from where a run was read, not from the run, for a run that names itself wherever it
#: lies (one naming its former ids, ``model.FORMER_IDS``: a mini-swe-agent run): its output folder's name and the
#: id that folder gave it. The same such file copied to two folders holds one run. Other runs' digests keep them:
#: a digest names a renamed run (``<id>+<digest>``), so a digest that moved would add its run again.
PLACE_METADATA = frozenset({"config", FORMER_IDS})


def run_digest(run: Trajectory) -> str:
    """The run's content, its id aside (and a time its file's mtime gave it: the same run in two files; and, for a
    run named wherever it lies, the place it was read from: :data:`PLACE_METADATA`)."""
    place = PLACE_METADATA if FORMER_IDS in run.metadata else frozenset()
    body = run_content(run, without=frozenset({"trajectory_id"}), metadata_without=place)
    return hashlib.blake2b(body.encode(), digest_size=8).hexdigest()


def distinct_id(run: Trajectory, digest: str | None = None) -> str:
    """The id :class:`DistinctIds` gives ``run`` when another run of the job already holds its id."""
    return f"{run.trajectory_id[:183]}+{(digest or run_digest(run))[:8]}"


def _unrenamed(run: Trajectory) -> Trajectory:
    metadata = {k: v for k, v in run.metadata.items() if k != "original_trajectory_id"}
    return run.model_copy(update={"metadata": metadata})


def same_run(stored: Trajectory, read: Trajectory) -> bool:
    """Whether ``stored`` is the run ``read`` as ingest stored it: the same content, whatever id
    :class:`DistinctIds` gave it (and the original id it then noted), and, of a tool that wrote local time without a
    zone (both carry ``TIME_ZONE``), whatever ``TRAJSEARCH_LOCAL_TZ`` each was read under: the same wall times, so
    that ``delete --from`` undoes an ingest made under another zone (RT1 finding 2)."""
    if run_digest(_unrenamed(stored)) == run_digest(_unrenamed(read)):
        return True
    return TIME_ZONE in stored.metadata and TIME_ZONE in read.metadata \
        and run_digest(_on_wall_clock(_unrenamed(stored))) == run_digest(_on_wall_clock(_unrenamed(read)))


def _on_wall_clock(run: Trajectory) -> Trajectory:
    """``run`` with its times' wall clock read as UTC and no word of the zone: what no ``TRAJSEARCH_LOCAL_TZ`` moves
    (a time the file gave with its zone reads the same under any, so relabelling it changes nothing)."""
    def wall(when: datetime | None) -> datetime | None:
        return None if when is None else when.replace(tzinfo=timezone.utc)
    return run.model_copy(update={
        "created_at": wall(run.created_at),
        "steps": [s.model_copy(update={"started_at": wall(s.started_at), "ended_at": wall(s.ended_at)})
                  for s in run.steps],
        "metadata": {k: v for k, v in run.metadata.items() if k != TIME_ZONE}})


#: What a verdict sets on a run (``ingest.outcomes.OutcomeTable.apply``): a judgment of the run, not the run.
_VERDICT_FIELDS = frozenset({"trajectory_id", "outcome", "reward", "failure"})
#: The task a Harbor trial's verdict groups its run under (``atif.trial_task``), with the verdict.
_TRIAL_TASK_FIELDS = frozenset({"task_id", "task_family"})


def same_run_anywhere(stored: Trajectory, read: Trajectory) -> bool:
    """Whether ``stored``, kept under one of ``read``'s former ids (``model.FORMER_IDS``), is ``read``: the same
    content, its id, its place and its verdict aside on both sides (a store written before round 27 holds neither
    the former ids nor, maybe, the folder name this read gave; an outcomes file may have judged either; a Harbor
    trial's verdict, its metadata and the task it groups the run under, an older version may not have read), or the
    same attempt begun at the same instant (:func:`_same_start`: a save taken mid-run, a copy an older reader
    read; for a Harbor trial's run, the trial's task aside too). Another attempt that held the id never is: its
    replies and its start differ."""
    def body(run: Trajectory) -> str:
        return run_content(_unrenamed(run), without=_VERDICT_FIELDS | _TRIAL_TASK_FIELDS,
                           metadata_without=PLACE_METADATA | TRIAL_VERDICT_METADATA)
    if body(stored) == body(read):
        return True
    if TRIAL_VERDICT_METADATA.isdisjoint(read.metadata):
        return _same_start(stored, read)
    return _same_start(*(run.model_copy(update=dict.fromkeys(_TRIAL_TASK_FIELDS)) for run in (stored, read)))


def _same_start(one: Trajectory, other: Trajectory) -> bool:
    """The same model's run of the same task whose first steps began at the same sub-second instant, as the file
    saved it (mini-swe-agent 2.x marks every message): no reader change moves it and no other attempt shares it.
    Whole seconds do not count (attempts started together share them), nor a time a file's mtime gave."""
    starts = [run.steps[0].started_at if run.steps else None for run in (one, other)]
    return starts[0] is not None and starts[0] == starts[1] and starts[0].microsecond != 0 \
        and one.task_id == other.task_id and one.model_id == other.model_id


class DistinctIds:
    """No run lost in silence: two different runs sharing an id within one job both survive.

    Producers reuse ids (Harbor's agents write one ``session_id`` into several
    trajectory files; a hand-merged dump may hold two versions of a run).
    Indexing both under one id would let the second silently replace the
    first, so a run whose id was already seen *with other content* gets a
    distinct, stable id: ``<id>+<8 hex of its content>`` (the same content
    gets the same id on every re-ingest), with the original id kept in
    ``metadata.original_trajectory_id``. A repeat with identical content is
    passed through unchanged (the index counts it as unchanged).
    One session saved at several times (backups of a session folder, Entire's checkpoints: growing copies of
    one transcript) is one run, not several: given the ``ctx`` and ``options`` it was read with, a copy that
    continues the one kept under its id (see :func:`continues`) takes the id, and an earlier copy met after a
    later one gives way to it (the later copy, read again from its file, is passed on: unchanged).
    The kept copy is read again only when the two could be one session (same task, begun at the same time), and a
    file's runs are read again once for a series of its runs: two versions of a file of N runs (one benchmark file
    in two folders) would otherwise read that file N times.
    The memory is one job's (one read of the inputs). A resumed job writes only the runs after its checkpoint, but
    it must give them the ids an uninterrupted read gives: the runs it does not write again are shown to
    :meth:`remember` first, else a run sharing an id with one of them would take the bare id and replace it.
    """

    def __init__(self, ctx: Context | None = None, options: ReadOptions | None = None) -> None:
        self._seen: dict[tuple[str, str], _Seen] = {}  # id -> its kept copy's digest, place and session
        self._ctx, self._options = ctx, options
        self._runs_of = lru_cache(maxsize=1)(self._read_runs)  # the last file read again: its runs by position
        self.renamed: list[tuple[str, str, str]] = []  # (source, original id, new id)

    _digest = staticmethod(run_digest)

    def __call__(self, parsed: Parsed) -> Parsed:
        run = parsed.trajectory
        if run is None:
            return parsed
        key, digest = (run.tenant, run.trajectory_id), self._digest(run)
        first = self._seen.setdefault(key, _Seen(digest, self._locator(parsed), _session(run)))
        if first.digest == digest:
            return parsed
        kept = self._reread(first.where) if first.session == _session(run) else None
        if kept is not None and continues(run, kept):
            self._seen[key] = _Seen(digest, self._locator(parsed), _session(run))
            return parsed  # the same session saved later: it replaces the copy kept under the id
        if kept is not None and continues(kept, run):
            return replace(parsed, trajectory=kept)  # an earlier save of the copy kept: that copy stands
        new_id = distinct_id(run, digest)
        self._seen.setdefault((run.tenant, new_id), _Seen(digest, None, None))
        self.renamed.append((parsed.source, run.trajectory_id, new_id))
        renamed = run.model_copy(update={
            "trajectory_id": new_id,
            "metadata": {**run.metadata, "original_trajectory_id": run.trajectory_id},
        })
        return replace(parsed, trajectory=renamed)

    def remember(self, parsed: Parsed) -> None:
        """Take note of a run read again but not written again (its input done per the checkpoint, or before the
        point a resumed input goes on from), so that the runs after it get the ids an uninterrupted read gives
        them (probe G, G1). A rename it needs was reported by the job that wrote it, so none is noted here."""
        reported = len(self.renamed)
        self(parsed)
        del self.renamed[reported:]

    def _locator(self, parsed: Parsed) -> _Where | None:
        """Where a run can be read again (a file read on its own), not the run itself: remembering every run of
        a job would cost its size in memory, and runs sharing an id are few."""
        if self._ctx is None or parsed.fmt is None or parsed.unit != parsed.source:
            return None
        return parsed.source, parsed.fmt, parsed.position

    def _reread(self, where: _Where | None) -> Trajectory | None:
        if where is None or self._ctx is None:
            return None
        source, fmt, position = where
        return self._runs_of(source, fmt).get(position)

    def _read_runs(self, source: str, fmt: str) -> dict[str, Trajectory]:
        """A file's runs by position, read again on its own as it was read in the job."""
        unit = Unit(source, fmt, (Path(source),))
        return {p.position: p.trajectory for p in read_unit(unit, self._ctx, options=self._options or ReadOptions())
                if p.trajectory is not None}


class _Seen(NamedTuple):
    """The copy kept under an id: its content's digest, where to read it again, and its session (see
    :func:`_session`), which a copy of the same session shares."""

    digest: str
    where: _Where | None
    session: tuple[str, Any] | None


def _session(run: Trajectory) -> tuple[str, Any]:
    """What every saved copy of one session shares (:func:`continues` requires it): its task and start time."""
    return run.task, run.created_at


def continues(later: Trajectory, earlier: Trajectory) -> bool:
    """Whether ``later`` is ``earlier``'s session saved again at a later time: the same task begun at the same time,
    its steps opening with every step ``earlier`` took, as it took them (action, arguments, thought, start), and at
    least as full. Results may have grown meanwhile (a pending call answered, a background task's report added),
    so observations and errors are not compared; a run that went otherwise from some step on is another run. Steps
    of a part still running when ``earlier`` was saved (``RUNNING_FROM``) are not compared either: a later save
    holds that part as it ended, maybe read otherwise (a Copilot chat's request, once its rounds are kept)."""
    return _session(later) == _session(earlier) and _fullness(later) > _fullness(earlier) \
        and _opens(later, earlier, _decision)


def saved_earlier(earlier: Trajectory, later: Trajectory) -> bool:
    """Whether ``earlier`` is an earlier save of the run ``later`` holds, met in another ingest (the store's copy,
    or the copy read now): ``later`` holds more settled steps, or as many and more steps, and opens with every step
    ``earlier`` had settled as it was done (:func:`_deed`). :func:`continues` without the session's start, which a
    format without times takes from each file's mtime, so two files' saves never share it; a Copilot chat exported
    while its last request ran is thus an earlier save of its export once ended, in either order of ingest."""
    return _fullness(later)[:2] > _fullness(earlier)[:2] and _opens(later, earlier, _deed)


def _opens(later: Trajectory, earlier: Trajectory, same: Callable[[Any], tuple[Any, ...]]) -> bool:
    """Whether ``later``'s steps open with every step ``earlier`` had settled (:func:`_settled`), as ``same`` tells."""
    taken = _settled(earlier)
    return len(later.steps) >= taken and \
        [same(s) for s in later.steps[:taken]] == [same(s) for s in earlier.steps[:taken]]


def parts_ways(one: Trajectory, other: Trajectory) -> bool:
    """Whether two runs of one id went different ways: neither's steps open the other's, compared by what was
    done (each step's action, arguments and start: :func:`_deed`), not by what came back or what the agent was
    read to think, which a later save or a newer reader may hold otherwise (round 16 read SWE-agent 1.1's thinking
    into thoughts: a run stored before it is still that run). A re-graded copy, the same dump read again, a
    session saved earlier or later part no ways; another model's or another trial's run of the task does."""
    shared = min(len(one.steps), len(other.steps))
    return [_deed(s) for s in one.steps[:shared]] != [_deed(s) for s in other.steps[:shared]]


def _deed(step: Any) -> tuple[Any, ...]:
    return step.action, step.arguments, step.started_at


def _decision(step: Any) -> tuple[Any, ...]:
    return (*_deed(step), step.thought)


def _settled(run: Trajectory) -> int:
    """How many of a run's steps had settled when its file was saved: all, but those of a part still running then
    (``RUNNING_FROM``)."""
    at = run.metadata.get(RUNNING_FROM)
    return at if isinstance(at, int) and 0 <= at <= len(run.steps) else len(run.steps)


def _fullness(run: Trajectory) -> tuple[int, int, int]:
    """How much of a session a copy holds: its settled steps, its steps, then the length of what it holds."""
    return _settled(run), len(run.steps), len(run_content(run))


class ClippedRuns:
    """The runs read with a field clipped to its limit (see ``adapters._common.clip``): counted, the first
    few named, for the summary to say what the index never saw (a clip is no rejection, so nothing else would)."""

    def __init__(self, kept: int = 10) -> None:
        self.kept = kept
        self.examples: list[dict[str, Any]] = []
        #: the clipped runs' ids: a copy of one (the same id and content, stored once) is no other run clipped, as
        #: ``--dry-run`` counts it (it had said 2 runs where the ingest of the same folder said 3)
        self._ids: set[str] = set()

    @property
    def runs(self) -> int:
        return len(self._ids)

    def __call__(self, parsed: Parsed) -> Parsed:
        if parsed.trajectory is not None and parsed.trajectory.trajectory_id not in self._ids \
                and (fields := clipped_fields(parsed.trajectory)):
            self._ids.add(parsed.trajectory.trajectory_id)
            if len(self.examples) < self.kept:
                self.examples.append({"source": parsed.source, "trajectory_id": parsed.trajectory.trajectory_id,
                                      "fields": fields})
        return parsed

    def to_dict(self) -> dict[str, Any]:
        return {"runs": self.runs, "examples": self.examples}


class PassedOverGroups:
    """The units read that hold no run and nothing wrong (an adapter's :class:`PassedOver`: a trace of embedding
    calls only, an aider session started and quit, a copy line of a run read elsewhere), counted by file, format,
    unit (``trace``, ``session``, ``line``, ``record``: ``by``) and reason: neither a run nor a rejection, so nothing
    else would tell an input whose traces or sessions were all passed over from an empty one."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str, str]] = Counter()  # (source, format, group_by, reason) -> groups

    def add(self, source: str, fmt: str, by: str, reason: str) -> None:
        self.counts[(source, fmt, by, reason)] += 1

    def of(self, source: str) -> dict[str, dict[str, int]]:
        """The counts of one file, as :meth:`to_dict`'s."""
        return by_grouping((by, reason, n) for (src, _, by, reason), n in self.counts.items() if src == source)

    def sources(self) -> dict[str, str]:
        """The files that held a group passed over, with their format."""
        return {source: fmt for source, fmt, _, _ in self.counts}

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{group_by: {reason: groups}}``, e.g. ``{"trace": {"embedding calls only": 2}}``."""
        return by_grouping((by, reason, n) for (_, _, by, reason), n in self.counts.items())


def by_grouping(counts: Iterable[tuple[str, str, int]]) -> dict[str, dict[str, int]]:
    """``(group_by, reason, groups)`` counts summed as ``{group_by: {reason: groups}}``
    (:meth:`PassedOverGroups.to_dict`'s shape; the CLI sums the workers' this way too)."""
    out: dict[str, dict[str, int]] = {}
    for by, reason, n in counts:
        out.setdefault(by, {})[reason] = out.get(by, {}).get(reason, 0) + n
    return out


def fingerprint(unit: Unit) -> str:
    """Identity of a unit's content: size, mtime and the first 64 KiB of each file."""
    digest = hashlib.blake2b(digest_size=16)
    for path in unit.files:
        try:
            stat = path.stat()
            digest.update(os.fsencode(path) + f"|{stat.st_size}|{stat.st_mtime_ns}|".encode())  # a name in any bytes
            with open(path, "rb") as f:
                digest.update(f.read(PEEK_BYTES))
        except OSError as exc:
            digest.update(os.fsencode(path) + f"|unreadable {exc}".encode())
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
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD,
) -> Iterator[Parsed]:
    """Parse a dump file (or every dump file under a directory, in sorted order).

    ``fmt`` forces a format (else detected per file). ``tenant`` is the trusted
    operator's: adapters stamp it on every run and native records naming
    another tenant are rejected; ``None`` keeps a native record's own tenant
    (other formats then get "default"). ``defaults`` fills Trajectory fields a
    record leaves empty (e.g. ``env_version``, ``model_id``; for tau-bench
    ``task_family`` is also the domain). ``group_by`` (``trace`` or
    ``conversation``) groups span formats; ``outcomes`` (an
    :class:`~trajsearch.ingest.outcomes.OutcomeTable`) joins verdicts;
    ``success_threshold`` is the reward at or above which a graded run is a success.
    Argument problems, a missing path and an undetectable single file raise
    ValueError/FileNotFoundError now; record problems come back as
    ``Parsed.error``.
    """
    return read_inputs([path], fmt=fmt, tenant=tenant, defaults=defaults, group_by=group_by, outcomes=outcomes,
                       success_threshold=success_threshold, units=plan_units(path, fmt))


def read_inputs(
    paths: Iterable[str | Path],
    *,
    fmt: str | None = None,
    tenant: str | None = "default",
    defaults: Mapping[str, Any] | None = None,
    group_by: str = "trace",
    outcomes: Any = None,
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD,
    units: list[Unit] | None = None,
    passed_over: PassedOverGroups | None = None,
    renamed: list[tuple[str, str, str]] | None = None,
    tenant_set_by: str = "python",
    on_bytes: OnBytes = None,
) -> Iterator[Parsed]:
    """Several inputs read as one ingest job reads them (:func:`plan_inputs`: spans joined across inputs, a file
    that cannot be read a rejection; one run id kept distinct across all: :class:`DistinctIds`), so that what a
    preview or a ``delete --from`` reads is what the ingest of the same inputs stored. Options as :func:`read_dump`;
    ``units``: the inputs' units, if the caller planned them already; ``passed_over`` counts the groups that hold
    no run (see :class:`PassedOverGroups`); ``renamed`` gets each run kept under a distinct id, as
    ``(source, original id, new id)`` (what an ingest's summary says: ``JobResult.renamed``); ``tenant_set_by``:
    how the caller named ``tenant`` (``Context.tenant_set_by``: the CLI's --tenant, a --server key's); ``on_bytes(n)``
    as input bytes are read (:func:`read_unit`'s: a progress bar moving within a large file too)."""
    paths = list(paths)
    ctx = make_context(paths[0] if paths else ".", tenant=tenant, defaults=defaults,
                       success_threshold=success_threshold, tenant_set_by=tenant_set_by)
    options = ReadOptions(group_by=group_by, outcomes=outcomes, passed_over=passed_over)
    units = plan_inputs(paths, fmt) if units is None else units
    distinct = DistinctIds(ctx, options)
    if renamed is not None:
        distinct.renamed = renamed
    return (distinct(parsed) for unit in units
            for parsed in read_unit(unit, ctx, options=options, on_bytes=on_bytes))


def make_context(path: str | Path, *, tenant: str | None = "default", defaults: Mapping[str, Any] | None = None,
                 success_threshold: float = DEFAULT_SUCCESS_THRESHOLD, tenant_set_by: str = "python") -> Context:
    """Validate the operator's tenant, defaults and success threshold; the adapters' context (``tenant_set_by``: how
    the caller named the tenant, see ``Context``)."""
    if tenant is not None:
        valid_tenant(tenant)
    config.local_time_zone()  # a zone named wrong is the operator's error, said once, not each local time's run's
    if tenant_set_by not in TENANT_SET_BY:
        raise ValueError(f"tenant_set_by must be one of {sorted(TENANT_SET_BY)}, got {tenant_set_by!r}")
    if isinstance(success_threshold, bool) or not isinstance(success_threshold, (int, float)) \
            or not 0.0 <= success_threshold <= 1.0:
        raise ValueError(f"success_threshold must be a number from 0 to 1, got {success_threshold!r}")
    defaults = dict(defaults or {})
    unknown = sorted(set(defaults) - set(Trajectory.model_fields))
    if unknown or "tenant" in defaults:
        raise ValueError(
            "defaults may only name Trajectory fields other than 'tenant' (pass tenant=); "
            f"got {unknown or ['tenant']}"
        )
    return Context(source=Path(path), tenant=tenant, defaults=defaults, success_threshold=float(success_threshold),
                   tenant_set_by=tenant_set_by)
