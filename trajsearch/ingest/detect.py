"""Which format a dump file is in: asked of the adapters, in one place.

Every adapter owns its detection (see ``adapters/__init__``): ``matches(record)``
on the file's first record (a first line longer than the 64 KiB peek is read
whole, up to ``WHOLE_PARSE_BYTES``, of OTLP ``LONG_SPANS_LINE``; in JSON Lines whose first line names no format,
on the next lines, for the formats read record by record), an optional ``SIGNATURE`` regex searched in the
first 64 KiB when no record can be parsed from them (a big pretty-printed
document), and optional ``SUFFIXES`` of file names that imply the format when
the content says nothing (a bare message list in ``*.traj.json``). A text format's ``HEAD`` (a regex matched at
the file's start; or a text rendering's, as goose's YAML export of its JSON session) is asked before all of them.
"""

from __future__ import annotations

import codecs
import json
import re
import sqlite3
import zipfile
from contextlib import closing
from pathlib import Path
from typing import IO, Any, Iterator, NamedTuple

import ijson

from .adapters import (ADAPTERS, ARCHIVE_FORMATS, FORMATS, archive_format, format_by_place, format_of,
                       native, is_grouped, side_file, side_path, why_not_a_run)
from .adapters.openinference import CREW_OUTPUT_LOG
from .sources import (
    GONE,
    GZIP_ERRORS,
    PEEK_BYTES,
    TOO_DEEP,
    ZIP_MAGIC,
    Source,
    ZipMembers,
    compression,
    decompressed,
    is_jsonl,
    document_head,
    first_line_record,
    is_zip,
    json_items,
    open_dump,
    parse,
    peek,
    peek_full,
    plain_name,
    pretty_printed,
    reads_as_lines,
    spans_envelope,
    stream_fault,
    whole_document,
)

#: A pretty-printed document up to this size is parsed whole to detect its format.
WHOLE_PARSE_BYTES = 64 * 1024 * 1024


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _first_array_item(path: Path) -> Any:
    try:
        return _array_head(path)
    except (ValueError, *GZIP_ERRORS, ijson.JSONError):
        return None


def _array_head(path: Path) -> Any:
    """A JSON array's first item (None for an empty array); raises what reading it met."""
    with Source(path) as src:
        return next(json_items(src, "item"), None)


def _first_document(path: Path) -> Any:
    try:
        return _document_head(path)
    except (ValueError, RecursionError, *GZIP_ERRORS):
        return None


def _document_head(path: Path) -> Any:
    """The first JSON value of a pretty-printed file (later concatenated values are not read); raises what
    parsing it met. None when that value runs past the first ``WHOLE_PARSE_BYTES`` of the text (a gzip's size on
    disk does not tell): cut off there, a valid document would look malformed."""
    with open_dump(path) as f:
        data = f.read(WHOLE_PARSE_BYTES + 1)
    text = data.decode("utf-8", errors="replace")
    try:
        return json.JSONDecoder().raw_decode(text.lstrip("\ufeff \t\r\n"))[0]
    except ValueError:
        if len(data) > WHOLE_PARSE_BYTES:
            return None
        raise


def first_record(path: Path, head: str) -> Any:
    """The first record of a file as the reader will see it, when it can be had cheaply."""
    text = head.lstrip("\ufeff \t\r\n")
    if not text:
        return None
    if is_jsonl(text):
        return first_line_record(text.split("\n", 1)[0])[0]
    if text.startswith("["):
        return _first_array_item(path)
    if pretty_printed(text):
        if listed := _listed_runs(head):
            return document_head(path, listed)
        return _first_document(path) if _size(path) <= WHOLE_PARSE_BYTES else None
    if text.lstrip("\0").startswith("{") and "\n" not in text and peek_full(head):  # the peek ended in line 1
        return _first_long_line(path, LONG_SPANS_LINE if spans_envelope(text) else WHOLE_PARSE_BYTES)
    return first_line_record(text.split("\n", 1)[0])[0]


def _listed_runs(head: str) -> str | None:
    """The member listing the runs of a document whose head shows a format that streams them (its adapter's
    ``LISTED_RUNS`` and ``SIGNATURE``: an Inspect AI JSON log's ``samples``): such a document is judged by the members
    before that list, read alone, where parsing it whole held the document (up to 64 MB: some 350 MB) in memory
    that its reader no longer needs."""
    return next((mod.LISTED_RUNS for mod in ADAPTERS.values()
                 if getattr(mod, "LISTED_RUNS", None) and mod.SIGNATURE.search(head)), None)


#: How many lines after the first detection reads of a JSON Lines file whose first line names no format.
LATER_LINES = 20


def _format_of_later_lines(path: Path, head: str) -> tuple[str, Any] | None:
    """The format the first of the next ``LATER_LINES`` lines that names one names, and that line's record, in a file
    read line by line whose first line names none: a record cut by a writer that died mid-line, one with a misspelt
    ``trajectory_id``, a chunk of ``split -b`` starting mid-record, a banner a script printed before its records.
    Detection looked at the first line only, so the file was "unrecognised" and every good record after that line was
    lost, where ``--format`` kept them (probe 51, NC2). A line that is a side file's record names no format here.

    Text before the records is a banner, of any number of lines; text after one (the line after the record that
    names the format, or any after a record) makes the file a text that quotes records between its paragraphs (a
    chat's Markdown that pastes a span), no run of their format. Stopping at any second line of text, as 18911a11
    did for that chat, made a two-line banner "unrecognised" (review RT-IDX, finding 1).

    The caller takes only a format that reads a file record by record (native, tau-bench, spans), or a record that
    is a whole run in a line (a JSON array: Pydantic AI's history a JSONL line): a later record of a whole-file
    format's session is no file's first (another CLI's records may look like it: Qwen Code's like Claude Code's);
    that one is only told (:func:`_later_session`)."""
    if not reads_as_lines(head.lstrip("\ufeff \t\r\n")):
        return None
    try:
        with open_dump(path) as f:
            later = _later_lines(f)
            seen_record = False
            for raw, record in later:
                if record is None:
                    if seen_record and _prose(raw):
                        return None  # text after a record: a text that quotes records, no file of them
                    continue  # a banner's line, or another cut record
                seen_record = True
                if (fmt := None if side_file(record) else format_of(record)) is not None:
                    after = next(later, None)
                    return (fmt, record) if after is None or after[1] is not None or not _prose(after[0]) else None
    except (OSError, *GZIP_ERRORS):
        return None
    return None


def _later_lines(f: IO[bytes]) -> Iterator[tuple[bytes, Any]]:
    """The non-blank lines among the ``LATER_LINES`` after the first (and one more, to tell what follows the last),
    each with its JSON value (None: no JSON), up to ``WHOLE_PARSE_BYTES`` together: a folder's other JSONL may have
    huge lines."""
    budget = WHOLE_PARSE_BYTES - len(f.readline(WHOLE_PARSE_BYTES))
    for _ in range(LATER_LINES + 1):
        raw = f.readline(budget + 1) if budget > 0 else b""
        if not raw or len(raw) > budget:
            return
        budget -= len(raw)
        if raw.strip():
            yield raw, parse(raw.decode("utf-8", errors="replace"))[0]


def _prose(raw: bytes) -> bool:
    """A line of text, not a record cut short (which opens as an object or a history does)."""
    return not raw.lstrip().startswith((b'{"', b'[{'))


def _whole_file(fmt: str | None) -> bool:
    return fmt is not None and getattr(ADAPTERS[fmt], "WHOLE_FILE", False)


def _later_session(path: Path, head: str, fmt: str) -> str | None:
    """What detection says of a file whose first line is not JSON and whose next lines are a whole-file format's
    (a Codex, Claude Code, Gemini CLI session whose first line a writer cut): it was "unrecognised dump format", the
    fault and the format both untold, where before the next lines were read it said the first line's fault (review
    RNC2, D2). None for a first line that is JSON naming no format: another tool's session whose later records
    look like that format's is unrecognised, as it was (its caller asks only where the first line gave no record:
    one past the peek parsed whole is JSON, though the peek cut it)."""
    first = head.lstrip("\ufeff \t\r\n").partition("\n")[0]
    fault = first_line_record(first)[1]
    if fault is None or fault == TOO_DEEP:
        return None
    return (f"{path}: line 1 is {fault}; the lines after it are {fmt} records, and a {fmt} file is read whole "
            f"as one session, so its format is not taken from its later lines: if the file is that session, pass "
            f"--format {fmt} to read it without its first line")


#: How long a first line of OTLP requests or Tempo traces that runs past the peek is parsed whole to detect its
#: format: a span with a long prompt or tool result (a 200 KB string) put the signature past the head, and the file
#: was "unrecognised", or another span format's (review ROB35). Longer, its head's signature decides: parsing a
#: 59 MB one-line export whole took 9 s and 400 MB to say what the head said.
LONG_SPANS_LINE = 8 * 1024 * 1024


def _first_long_line(path: Path, most: int) -> Any:
    """The first line's JSON value when that line runs past the peek: a run of a user's own agent in native JSONL
    holding one long tool output is such a line, and with its keys in another order than the model's (``json.dumps(
    sort_keys=True)``, a JS or Go writer) no signature is at its head, so the file was "unrecognised" (probe 50,
    NC). Decoded as ``peek`` decodes the head (a bad byte replaced): the reader, not detection, names the bad byte.
    None when the line runs past ``most`` bytes too (``LONG_SPANS_LINE`` for OTLP requests or Tempo traces), or is no
    JSON."""
    try:
        with open_dump(path) as f:
            line = f.readline(most + 1)
    except (OSError, *GZIP_ERRORS):
        return None
    if len(line) > most:
        return None
    return first_line_record(line.decode("utf-8", errors="replace").lstrip("\ufeff"))[0]


def _by_signature(head: str) -> str | None:
    """The first format whose ``SIGNATURE`` the head holds; in a file of OTLP requests (or Tempo traces), a span
    format's only: a mini-swe-agent prompt (``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``) in a traced run's spans,
    whose first request runs past the peek, is no mini-swe-agent trajectory. A JSON format's only in a file that
    opens as JSON (see ``_opens_as_json``): a README, docs page or YAML spec quoting a format's words (OpenHands'
    benchmark READMEs, the Vercel AI SDK's telemetry page) was read as that format and every line rejected; a text
    format (``read_text``: aider's history, SpecStory's Markdown) is told by its text."""
    spans = spans_envelope(head)
    json_text = _opens_as_json(head)
    return next((name for name, mod in ADAPTERS.items() if (not spans or is_grouped(name))
                 and (json_text or hasattr(mod, "read_text"))
                 and getattr(mod, "SIGNATURE", None) is not None and mod.SIGNATURE.search(head)), None)


#: A line of a JSON text: every one opens with a JSON token (no JSON string holds a raw line break); ``NaN`` and
#: ``Infinity`` as Python's ``json.dump`` writes them.
_JSON_LINE = re.compile(r'\s*(?:[\[\]{}",:]|-?\d|-?Infinity\b|NaN\b|true\b|false\b|null\b)')
#: A Markdown code fence: JSON between fences is a text quoting it.
_FENCE = re.compile(r"\s*(?:```|~~~)")
#: A JSON document written again as a JSON string (ADK 1.x's eval results): a quote, ``{`` or ``[``, then an escaped
#: quote (``"{\"key\"``, ``"{\n  \"key\"``): a CSV cell (``"{""key""``) or prose in quotes is no such string.
_STRING_OF_JSON = re.compile(r'"[\[{](?:\s|\\[nrt]|[\[{])*\\"')


def _opens_as_json(head: str) -> bool:
    """Whether a file's head opens as JSON (``{`` or ``[`` after a BOM, a crash's NUL bytes and blank lines; or
    a JSON document written again as a JSON string, :data:`_STRING_OF_JSON`, as ADK 1.x wrote its eval results), or as
    JSON after a banner: lines of text, then from the first line opening with ``{`` or ``[`` mostly JSON (JSON
    Lines or a pretty-printed document under a script's note). A tool's lines teed into the file (``2>&1 | tee``: a
    warning between records, a closing ``# done``) may follow it; a Markdown fence, or text holding at least half
    the bytes from there, is a text quoting JSON (a README's code block, a docs page), no file of a JSON format."""
    text = head.lstrip("\ufeff\0 \t\r\n")
    if text.startswith(("{", "[")) or _STRING_OF_JSON.match(text):
        return True
    lines = [line for line in text.split("\n") if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith(("{", "["))), None)
    if start is None:
        return False
    other = [line for line in lines[start:] if not _JSON_LINE.match(line)]
    return (not any(_FENCE.match(line) for line in other)
            and 2 * sum(map(len, other)) < sum(map(len, lines[start:])))


def _by_head(head: str) -> str | None:
    """The format whose ``HEAD`` the file opens with: a text format's own first line, which no JSON file holds, told
    before any record (a JSON line an aider history quotes in a reply is no run of that line's format); after a byte
    order mark, as every JSON sniffer allows."""
    head = head.lstrip("\ufeff")
    return next((name for name, mod in ADAPTERS.items()
                 if (pattern := getattr(mod, "HEAD", None)) is not None and pattern.match(head)), None)


def head_text_reader(adapter: Any, head: str) -> Any:
    """A JSON format's reader of its file that opens with the format's ``HEAD`` (``read_head_text``: goose's YAML
    export, an ``opencode export`` after the CLI's line), given the file's ``head``; None otherwise (the format's
    JSON files). Reading takes the file's records from it, and detection the document it asks ``side_document``."""
    reader = getattr(adapter, "read_head_text", None)
    return reader if reader is not None and adapter.HEAD.match(head.lstrip("\ufeff")) else None


def _text_not_a_run(head: str) -> str | None:
    """Why a text file an agent wrote, told by its head, holds no run, and what to export instead: the first
    adapter's ``text_not_a_run`` that says (goose's Markdown export)."""
    return next((said for mod in ADAPTERS.values() if hasattr(mod, "text_not_a_run")
                 and (said := mod.text_not_a_run(head.lstrip("\ufeff")))), None)


def _by_suffix(name: str) -> str | None:
    return next((fmt for fmt, mod in ADAPTERS.items()
                 if any(name.endswith(s) for s in getattr(mod, "SUFFIXES", ()))), None)


_READS = "trajsearch reads JSON, JSON lines and their gzip or zstd, and " + ", ".join(
    f"{suffix} archives ({fmt})" for suffix, fmt in ARCHIVE_FORMATS.items())
#: What a file of no format is told beside the formats: an agent of a user's own (its chat messages saved with
#: ``json.dump``) is in none of them, and "--format NAME" alone left that user no way in (probe 50, NC).
_OWN_RUNS = ("runs of an agent of your own: write each as one JSON object per line, as the JSON Schema that "
             "`python -m trajsearch.model` prints describes (schemas/trajectory.schema.json; format native)")
#: Files trajsearch does not read, told by their first bytes or their name: said so rather than "unrecognised".
_TABLE = ("export it as JSON instead: Phoenix, get_spans_dataframe().to_json(orient='records'); Langfuse, the "
          "export's JSON or JSONL choice; LangSmith (whose bulk export writes Parquet), client.list_runs(...) written "
          "one run.json() per line, or pandas.read_parquet(f).to_json(orient='records', lines=True)")
_UNREADABLE_MAGIC = {b"PAR1": f"a Parquet file: {_TABLE}",
                     **dict.fromkeys(ZIP_MAGIC, "a zip archive (unpack it first)"),
                     b"\xfd7zXZ\x00": "xz-compressed (decompress it first: xz -d)",
                     **{b"BZh%d" % size: "bzip2-compressed (decompress it first: bunzip2)" for size in range(1, 10)}}
#: How a tar archive under each compression read is unpacked.
_UNTAR = {"gzip": "a gzipped tar archive (unpack it first: tar xzf)",
          "zstd": "a zstd-compressed tar archive (unpack it first: tar --zstd -xf)"}
_SQLITE_MAGIC = b"SQLite format 3\x00"
#: A tar header block: 512 bytes, POSIX ustar's (and GNU tar's) ``magic`` field at offset 257.
_TAR_BLOCK = 512


def _is_tar_header(block: bytes) -> bool:
    """Whether ``block`` is a tar archive's first header: ``ustar`` at offset 257 (POSIX ``ustar\\0``, GNU
    ``ustar  \\0``) and its checksum right (its bytes summed, the checksum field counted as 8 spaces; unsigned as
    POSIX says, or signed as Sun's and NeXT's tar summed them), so that no JSON text is taken for one."""
    if len(block) < _TAR_BLOCK or block[257:262] != b"ustar":
        return False
    try:
        stored = int(block[148:156].replace(b"\x00", b" ").strip() or b"x", 8)
    except ValueError:
        return False
    rest = block[:148] + block[156:_TAR_BLOCK]
    unsigned = sum(rest) + 8 * 32
    return stored in (unsigned, unsigned - 256 * sum(b >= 0x80 for b in rest))


def _magic_kind(head: bytes) -> str | None:
    """What a file whose first bytes (decompressed already, if it was gzip or zstd) are ``head`` is, when it is an
    archive or a compression trajsearch does not read."""
    if _is_tar_header(head):
        return "a tar archive (unpack it first: tar xf)"
    return next((what for magic, what in _UNREADABLE_MAGIC.items() if head.startswith(magic)), None)


def _decompressed_head(path: Path) -> bytes:
    """The first bytes a gzip or zstd file holds (what of them a cut one gives: its fault is told elsewhere)."""
    try:
        with open(path, "rb") as raw, decompressed(raw) as f:
            return f.read(_TAR_BLOCK)
    except GZIP_ERRORS:
        return b""


#: AG2's (AutoGen 0.2's) ``autogen.runtime_logging``: its tables (``autogen/logger/sqlite_logger.py``), or the
#: file logger's lines (``file_logger.py``: a session line, then a JSON object per client, agent, event and chat
#: completion, each with the ``session_id``; its failures to log as text lines between them).
_AG2_TABLES = frozenset({"chat_completions", "agents", "oai_wrappers", "oai_clients", "events", "function_calls"})
#: Its ids are Python's ``id()`` of the agent, client or wrapper, or a chat completion's uuid.
_AG2_FILE_LOG = re.compile(r'\A(?:Started new session with Session ID: [0-9a-f-]{36}\s*$|\{"(?:(?:source_id|client_id|'
                           r'wrapper_id|id)": \d+|invocation_id": "[0-9a-f-]{36}"), '
                           r'[^\n]*"session_id": "[0-9a-f-]{36}")', re.M)
_AG2_LOG = ("AG2's runtime log (autogen.runtime_logging.start(logger_type={kind!r})), which trajsearch does not read: "
            "its chat completions and events are kept per model client and agent, not as a run's steps; trace the "
            "agents with AG2's OpenTelemetry instead (autogen.opentelemetry.instrument_agent / instrument_pattern) "
            "and ingest the spans, exported as OTLP/JSON (read as otel-genai)")


def _sqlite_tables(path: Path) -> dict[str, set[str]] | None:
    """An SQLite database's tables and their columns, or None where it cannot be read. Opened ``immutable``: read-only
    alone, SQLite makes a ``-shm`` beside a WAL database (a project's committed ``.crush/crush.db``), and a walk, a
    dry run too, would write into the folder it reads; the tables are the database file's (a ``-wal`` not
    checkpointed is not read: a store's tables are made when it is, long before its sessions)."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)) as db:
            names = [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return {name: {column for (column,) in db.execute("SELECT name FROM pragma_table_info(?)", (name,))}
                    for name in names}
    except sqlite3.Error:
        return None


class StoreKind(NamedTuple):
    """An agent's session database: the format whose ``session_store`` told it, and what it says (the store and the
    command that exports its sessions, which it gives whole: :data:`_agent_cli.EXPORT_PREFIX`)."""
    fmt: str
    text: str


def _store_kind(path: Path, tables: dict[str, set[str]], fmt: str | None = None) -> StoreKind | None:
    """What an agent's session database of ``tables`` is (an adapter's ``session_store``; under a forced ``fmt``,
    that adapter's only), or None."""
    named = ADAPTERS.items() if fmt is None else [(fmt, ADAPTERS[fmt])]
    told = ((name, mod.session_store(path, tables)) for name, mod in named if hasattr(mod, "session_store"))
    return next((StoreKind(name, text) for name, text in told if text), None)


def session_store_kind(path: Path, fmt: str | None = None) -> StoreKind | None:
    """What ``path`` is when it is an agent's session database (Crush's, goose's, OpenCode's, Q CLI's, ADK's), told
    by its tables wherever it lies, with the command that exports its sessions; else None (not SQLite, or another
    database). A walk asks it of a file named as a store out of its folder (a ``crush.db`` copied out of
    ``.crush/``), so that it is refused with that command, not a ``--format`` hint no format can follow, and of each
    store it names beside dumps."""
    try:
        with open(path, "rb") as f:
            if f.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC:
                return None
    except OSError:
        return None
    tables = _sqlite_tables(path)
    return _store_kind(path, tables, fmt) if tables is not None else None


def _sqlite_kind(path: Path) -> str:
    """What an SQLite database is, by its tables (read once): AG2's runtime log, an agent's session store (an
    adapter's ``session_store``: Google ADK's, OpenCode's, goose's, Crush's, Q CLI's, with how to export its
    sessions), or another database."""
    tables = _sqlite_tables(path)
    if tables is None:
        return "an SQLite database"
    if {"chat_completions", "agents"} <= set(tables) <= _AG2_TABLES | {"version"}:
        return f"no run in this file: {_AG2_LOG.format(kind='sqlite')}"
    store = _store_kind(path, tables)
    return store.text if store else "an SQLite database"


def _ag2_log_kind(head: str) -> str | None:
    """What the text of AG2's file runtime logger is (see ``_AG2_LOG``)."""
    return _AG2_LOG.format(kind="file") if _AG2_FILE_LOG.search(head.lstrip("\ufeff \t\r\n")[:PEEK_BYTES]) else None


def _container_kind(path: Path) -> str | None:
    """What a file is when its bytes say it is an archive or a compression trajsearch does not read (tar, zip,
    bzip2, xz, Parquet; an SQLite database: AG2's runtime log, Google ADK's session store, or another),
    gzipped or zstd-compressed or not: asked before its format, since the text of a tar's members (a
    results.json after the 512-byte header) would otherwise pass for a dump, each member boundary costing runs."""
    try:
        with open(path, "rb") as f:
            head = f.read(_TAR_BLOCK)
    except OSError:
        return None
    if (outer := compression(head)) is not None:
        inner = _decompressed_head(path)
        if (twice := compression(inner)) is not None:  # a download saved with its Content-Encoding: gzip left on
            return "gzip inside gzip (gunzip it once)" if outer == twice == "gzip" else \
                f"{twice} inside {outer} (decompress it once)"
        if _is_tar_header(inner):
            return _UNTAR[outer]
        kind = _magic_kind(inner)
        return f"{kind}, inside {outer}" if kind is not None else None
    kind = _magic_kind(head)
    if kind is None and head.startswith(_SQLITE_MAGIC):
        kind = _sqlite_kind(path)
    if kind is None and head[4:8] == b"\x28\xb5\x2f\xfd":  # the Collector's file exporter: length + zstd frame
        kind = "zstd-compressed, as the OpenTelemetry Collector's file exporter writes with compression: zstd " \
               "(write it uncompressed, or decompress it first)"
    return kind


def _own_archive(path: Path) -> str | None:
    """The format of a zip archive an adapter reads itself (``read_archive``): by its name, as its producer names
    them (``ARCHIVES``: Inspect AI's ``.eval``), else by its members (``archive_members``: a log renamed, or piped in);
    None for a file that is no zip (detected as any other) or a zip no adapter reads."""
    if not is_zip(path):
        return None
    if fmt := archive_format(path):
        return fmt
    try:
        names = ZipMembers(path).names
    except (zipfile.BadZipFile, OSError):
        return None
    return next((fmt for fmt, mod in ADAPTERS.items()
                 if (claims := getattr(mod, "archive_members", None)) is not None and claims(names)), None)


def _table_kind(path: Path) -> str | None:
    return f"a CSV file: {_TABLE}" if path.suffix.lower() in (".csv", ".tsv") else None


def _broken_kind(path: Path) -> str | None:
    """Why a file holds no text to detect a format in: empty, a gzip or zstd file that does not decompress, or binary
    bytes. Asked only once detection failed, so reading a broken one to its end costs nothing on good input."""
    if not path.exists():  # listed, then removed (a harness's clean-up, rsync --delete): no fault of its bytes
        return GONE
    if _size(path) == 0:
        return "empty file (0 bytes): no run to read"
    head = b""
    try:
        with open_dump(path) as f:
            head = f.read(8192)
            while f.read(1 << 20):  # a compressed file's corruption shows only where it is
                pass
    except GZIP_ERRORS as exc:
        return stream_fault(exc, path, "")
    if not head.strip():
        with open(path, "rb") as raw:
            packed = compression(raw.read(4))
        kind = "whitespace only" if head else f"a {packed} of nothing" if packed else "a byte-order mark only"
        return f"empty file ({kind}): no run to read"
    text = codecs.getincrementaldecoder("utf-8")()
    try:
        text.decode(head, final=False)  # a character cut at the end of the head is no fault
    except UnicodeDecodeError:
        with open(path, "rb") as raw:  # UTF-16 is decoded on the fly (see sources): its damage reads as bad UTF-8
            utf16 = raw.read(2) in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
        return ("UTF-16 by its byte-order mark, but not valid UTF-16 text; re-encode it as UTF-8" if utf16
                else _binary(path, "not UTF-8"))
    return _binary(path, "it holds NUL bytes") if b"\x00" in head else None


#: Names binary protobuf files go by: OTLP exports (``harbor traces export --format otel --encoding pb``, the
#: Collector's file exporter with ``format: proto``) that trajsearch reads only as OTLP/JSON.
_PROTOBUF_SUFFIXES = (".pb", ".binpb", ".protobuf", ".otlp")


def _binary(path: Path, why: str) -> str:
    """What a binary file is said to be: protobuf by its name (export OTLP as JSON instead), else binary bytes (an
    SQLite database, Google ADK's or AG2's among them, is told by :func:`_container_kind`)."""
    if path.suffix.lower() in _PROTOBUF_SUFFIXES:
        return (f"binary protobuf ({why}), as OTLP is written with --encoding pb or the Collector's format: proto; "
                f"export it as OTLP/JSON instead (--encoding json, format: json); {_READS}")
    return f"binary, not text ({why}); {_READS}"


#: A span or log record as the OpenTelemetry JS SDK's ``ConsoleSpanExporter`` / ``ConsoleLogRecordExporter`` print
#: it: ``console.dir`` of a plain object (util.inspect: unquoted keys, single-quoted strings, ``undefined``).
_JS_CONSOLE = re.compile(r"\A\{\s*resource: \{.*?^\s*traceId: ('[0-9a-f]{32}'|undefined),\r?$", re.S | re.M)


def _js_console_kind(head: str) -> str | None:
    """What a file of the JS SDK's console exporter output is, and how to export JSON instead: Node prints
    JavaScript objects, not JSON, and cuts strings past 10,000 characters and arrays past 100 items (a run's
    message history often is longer), so it is no faithful record to read."""
    if not _JS_CONSOLE.search(head.lstrip("\ufeff \t\r\n")[:PEEK_BYTES]):
        return None
    return ("the OpenTelemetry JS SDK's console exporter output (ConsoleSpanExporter: JavaScript objects as Node's "
            "console.dir prints them, not JSON, with strings over 10,000 characters cut): export the spans as "
            "JSON instead, with @opentelemetry/exporter-trace-otlp-http into a collector's file exporter, "
            "or with @opentelemetry/exporter-zipkin")


#: CrewAI's ``output_log_file`` written as text (its default, ``logs.txt``; ``crewai/utilities/file_handler.py``): a
#: line per task start and result, ``<time>: task_name="...", task="...", agent="...", status="started"`` (before
#: task names, ``agent=`` first).
_CREW_TEXT_LOG = re.compile(r'\A\d{4}-\d\d-\d\d \d\d:\d\d:\d\d: (?:task_name|task|agent)=".*?'
                            r'\bstatus="(?:started|completed)"', re.S)


def _crew_log_kind(head: str) -> str | None:
    """What CrewAI's text ``output_log_file`` is: no run (see ``openinference.CREW_OUTPUT_LOG``)."""
    return CREW_OUTPUT_LOG if _CREW_TEXT_LOG.search(head.lstrip("\ufeff \t\r\n")[:PEEK_BYTES]) else None


#: Agentless' log of one SWE-bench instance (``localization_logs/<instance>.log``, ``repair_logs/<instance>.log``:
#: Python's ``%(asctime)s - %(levelname)s - %(message)s``), opened by ``Processing bug <instance>`` or the stage's
#: ``================ localize|repairing <instance> ================`` (OpenAutoCoder/Agentless ``agentless/fl``,
#: ``agentless/repair``).
_AGENTLESS_LOG = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} - [A-Z]+ - "
                            r"(?:Processing bug (\S+)|={16} (?:localize|repairing) (\S+) ={16})$", re.M)


def _agentless_log_kind(head: str) -> str | None:
    """What Agentless' text log of an instance is: the prompts and raw answers of its fixed localization and repair
    stages as log lines for people, no agent steps to read (Agentless runs no agent loop)."""
    text = head.lstrip("\ufeff \t\r\n")[:PEEK_BYTES]
    if not _AGENTLESS_LOG.match(text):
        return None
    named = list(dict.fromkeys(a or b for a, b in _AGENTLESS_LOG.findall(text)))  # a concatenated log: several
    which = f"instance {named[0]} (" if len(named) == 1 else f"instances {', '.join(named)} (those its head names; "
    return (f"Agentless' text log of SWE-bench {which}its localization or "
            "repair prompts and answers as log lines, no structured steps): not a run trajsearch reads")


#: The OpenTelemetry Collector's ``debug`` exporter (``logging`` before 0.86) at ``verbosity: detailed``: its log
#: lines (``<time>\tinfo\tResourceSpans #0``) and the text it prints each span, log record and attribute as
#: (``Span #0``, ``    Trace ID       : <hex>``, ``     -> gen_ai.operation.name: Str(chat)``).
_COLLECTOR_DEBUG = re.compile(r"^(?:\S+\t\w+\t)?Resource(?:Spans|Logs) #\d+\s*$.*?"
                              r"^\s*(?:Trace ID\s*: [0-9a-f]{32}|-> [\w.]+: (?:Str|Int|Bool|Double|Map|Slice)\()",
                              re.S | re.M)


def _collector_debug_kind(head: str) -> str | None:
    """What a file of the Collector's ``debug`` exporter output is, and how to export JSON instead: text for
    people, its attribute values in Go's notation and its messages unquoted, no record to read."""
    if not _COLLECTOR_DEBUG.search(head[:PEEK_BYTES]):
        return None
    return ("the OpenTelemetry Collector's debug exporter output (text for people, not JSON): export the spans as "
            "OTLP/JSON instead, with the Collector's file exporter (exporters: file: path: ./traces.jsonl) in the "
            "traces pipeline beside debug, or an OTLP file exporter in the application")


def _json_fault(path: Path, head: str) -> str | None:
    """Why a JSON array or pretty-printed document gave no first record to detect a format by: its parser's
    words. Asked only once detection failed: "unrecognised format" would hide a file that is not valid JSON."""
    text = head.lstrip("\ufeff \t\r\n")
    try:
        if text.startswith("["):
            _array_head(path)
        elif pretty_printed(text) and _size(path) <= WHOLE_PARSE_BYTES:
            _document_head(path)
    except (ValueError, ijson.JSONError) as exc:
        return f"malformed JSON: {str(exc).strip().splitlines()[0]}"
    except RecursionError:
        return TOO_DEEP
    return None


class SideFile(ValueError):
    """A file a producer writes beside its runs that holds none (predictions, a report): a directory
    walk passes it over; named on its own it is an error that says what it is."""


def _side_document(fmt: str, path: Path, head: str) -> str | None:
    """What a whole-file document is when its adapter's ``side_document`` says it holds no run (a session file
    of summaries only); asked only of a file whose whole text is in the ``head`` peeked (of a .gz: the text it
    holds, not its size on disk), so detection never reads a big file twice. Not asked of a file with a malformed
    record: what is left of it is no file of no run, and its reading reports the record (a line cut short)."""
    hook = getattr(ADAPTERS[fmt], "side_document", None)
    if hook is None or peek_full(head):
        return None
    if reader := head_text_reader(ADAPTERS[fmt], head):  # the document after a CLI's line, as reading takes it
        _, document, error, _ = next(reader(path), ("", None, "nothing read", None))
        return hook(document) if error is None else None
    document, errors = whole_document(path)
    return hook(document) if document is not None and not errors else None


def forced_format(path: Path, fmt: str) -> str:
    """``fmt``, forced on a file by the operator, unless that format's own rules call the file a side file holding
    no run (``SideFile``, as detection says): forcing a format says how to read a file, not that it holds a run,
    and a side file read anyway gave no run and no reason. An archive or a compression trajsearch does not read
    is refused as detection refuses it: no format reads it (but the archive the format reads itself); so is a text
    the format's own tool wrote that holds no run (goose's Markdown export: ``text_not_a_run``)."""
    if (own := _own_archive(path)) == fmt:
        return fmt
    if own is not None:
        raise ValueError(f"{path}: an {own} log (a zip archive trajsearch reads as {own}), not {fmt}: drop --format, "
                         f"or pass --format {own}")
    if kind := _container_kind(path):
        raise ValueError(f"{path}: {kind}; {_READS}")
    head = peek(path)
    if (own_text := getattr(ADAPTERS[fmt], "text_not_a_run", None)) and (said := own_text(head.lstrip("\ufeff"))):
        raise ValueError(f"{path}: no run in this file: {said}")  # as detection says, not a JSON error a line
    own_side_file = getattr(ADAPTERS[fmt], "side_file", None)
    record = first_record(path, head) if own_side_file is not None else None
    if what := (record is not None and own_side_file(record)) or _side_document(fmt, path, head) \
            or side_path(path, fmt):
        raise SideFile(f"{path}: no run in this file: {what}")
    return fmt


def walked_format(file: Path, fmt: str | None) -> str:
    """The format of a file met in a folder walk: ``fmt`` if forced, else detected; but an empty file is judged as
    detection judges it, forced or not (raising SideFile for one it passes over: an evaluation still running has an
    empty output.jsonl, a Claude Code subagent that wrote nothing leaves empty files). Forced, such a file had been a
    rejection ("empty file") that failed a real folder which ingests clean without --format; a file named alone
    under --format is still one (``read._nothing_read_as``)."""
    if fmt is None or _size(file) == 0:
        detected = detect_format(file)  # an empty file: raises, SideFile or the ValueError that says it is empty
        if fmt is None:
            return detected
    return forced_format(file, fmt)


def detect_format(path: str | Path) -> str:
    """The dump format of one file: by its first record, its head's signature, then its name.

    Raises ValueError naming the file and the supported formats when unsure.
    """
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{p} is a directory: formats are detected per file")
    if fmt := _own_archive(p):
        return fmt
    if kind := _container_kind(p):
        if what := side_path(p, None):  # an archive a format reads with its run: unpacked, it would be read apart
            raise SideFile(f"{p}: no run in this file: {what}")
        raise ValueError(f"{p}: {kind}; {_READS}")
    head = peek(p)
    if fmt := _by_head(head):  # a text format's history is no JSON record: where it lies is still asked
        if what := _side_document(fmt, p, head) or side_path(p, fmt):
            raise SideFile(f"{p}: no run in this file: {what}")
        return fmt
    record = first_record(p, head)
    if record is not None and (what := side_file(record)):  # before the formats: it may look like one of them
        raise SideFile(f"{p}: no run in this file: {what}")
    fmt = format_of(record) if record is not None else None
    fmt = format_by_place(p, fmt) or fmt
    reason = why_not_a_run(record) if fmt is None and record is not None else None
    later, later_record = (_format_of_later_lines(p, head) if fmt is None and not reason else None) or (None, None)
    session_record = _whole_file(later) and not isinstance(later_record, list)  # not a run of its own: see above
    fmt = fmt or (None if session_record else later)
    if fmt is None and not (reason and native.wrapped_runs(record)):  # told as that, not by its runs' words
        fmt = _by_signature(head[:PEEK_BYTES]) or _by_suffix(plain_name(p.name))
    if fmt is not None and (what := _side_document(fmt, p, head)):
        raise SideFile(f"{p}: no run in this file: {what}")
    if what := side_path(p, fmt):
        raise SideFile(f"{p}: no run in this file: {what}")
    if record is None and not head.strip("\ufeff \t\r\n") and (kind := _broken_kind(p)):
        raise ValueError(f"{p}: {kind}")  # an empty x.traj.json is no run of the format its name says
    if fmt is None:
        if reason:
            raise ValueError(f"{p}: no run in this file: {reason}")
        if session_record and record is None and (said := _later_session(p, head, later)):
            raise ValueError(said)
        if kind := _table_kind(p):
            raise ValueError(f"{p}: {kind}; {_READS}")
        if kind := _crew_log_kind(head) or _ag2_log_kind(head) or _agentless_log_kind(head) or _text_not_a_run(head):
            raise ValueError(f"{p}: no run in this file: {kind}")
        if kind := _broken_kind(p) or _js_console_kind(head) or _collector_debug_kind(head) or _json_fault(p, head):
            raise ValueError(f"{p}: {kind}")
        raise ValueError(f"{p}: unrecognised dump format; supported formats: {', '.join(FORMATS)} "
                         f"(pass --format NAME to force one; {_OWN_RUNS})")
    return fmt
