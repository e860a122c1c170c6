"""Dump files as streams of JSON values: gzip, zstd, JSONL, arrays, big OTLP objects, concatenated JSON.

This module knows bytes and JSON, not formats: it yields ``(position,
value, error, cursor)`` per record and never stops at a bad one.

- gzip and Zstandard files (recognised by their magic bytes, whatever their
  name: ``.gz``, ``.zst``; Codex CLI rewrites a rollout idle for a week as
  ``rollout-*.jsonl.zst``) are decompressed on the fly (:func:`_text_bytes`,
  the one place that chooses; zstd with ``backports.zstd``, Python 3.14's
  ``compression.zstd``: its memory stays bounded by what is read, a file of
  2 GB of zeros decoded a read at a time); a truncated or corrupt stream yields
  the records before the break, then one error (:func:`stream_fault`).
- UTF-16 files (told by their byte-order mark: what Windows PowerShell's ``>``
  writes) are decoded on the fly to UTF-8, so every reader below sees UTF-8 (a
  damaged code unit as a bad UTF-8 byte: it costs its line, as in UTF-8); a
  UTF-8 byte-order mark is passed over before a streamed JSON value.
- JSONL is parsed line by line (a line over ``MAX_LINE_BYTES`` is skipped with
  an error); a resumed read seeks straight to the byte offset after the last
  committed line (a compressed stream is decompressed up to it). A line damaged
  as crashes and unserialised writers damage transcripts (NUL bytes, records
  run together, a record cut short before a whole one) gives its whole records
  (:func:`_line_parts`).
- JSON arrays, and OTLP files holding big ``resourceSpans`` / ``resourceLogs``
  lists (or Tempo's ``batches``), are read item by item with ``ijson`` (memory
  bound: one item), through every request of the file.
- A pretty-printed object is one record; several pretty-printed objects one
  after another (what OpenTelemetry's ``ConsoleSpanExporter`` prints) are one
  record each.
- :func:`whole_document` gives a file as one value (a JSON document, or the
  list of its lines' values) for formats where a file is one run;
  :func:`listed_items` the items of one list of a big document (an Inspect AI
  JSON log's ``samples``, its bare NaN read as Python's json reads it) one at a
  time, :func:`document_value` a small value beside it (the log's ``eval``),
  read no further than its end.
- :class:`ZipMembers` reads a zip archive's members one at a time (stored,
  deflated or Zstandard: Inspect AI's ``.eval`` logs), from its central
  directory, or from the members' own headers when a cut-short archive lost it.
"""

from __future__ import annotations

import codecs
import gzip
import io
import itertools
import json
import re
import secrets
import struct
import sys
import zipfile
import zlib
from array import array
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Callable, Iterator

import ijson

if sys.version_info >= (3, 14):  # zstd is in the standard library from 3.14; backports.zstd is that module before
    from compression.zstd import ZstdDecompressor, ZstdError, ZstdFile
else:
    from backports.zstd import ZstdDecompressor, ZstdError, ZstdFile

from ..model import json_depth as depth

#: A longer JSONL line is skipped with an error instead of being held in memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
#: A record nested deeper than this is rejected: no format needs it, and deeper values
#: exhaust the recursion of every JSON consumer downstream (parsers, pydantic, encoders).
MAX_DEPTH = 200
PEEK_BYTES = 64 * 1024
#: What decoding a compressed file raises where its bytes are cut short (EOFError, gzip's and zstd's alike) or damaged:
#: not an OSError, which a caller catching only those lets through (and Click takes an EOFError for "Aborted.").
STREAM_FAULTS = (EOFError, zlib.error, ZstdError)
#: What reading a file's text may raise: a broken gzip or zstd stream, or the disk's error (damaged UTF-16 reads on:
#: see ``_damaged_utf16``).
GZIP_ERRORS = (OSError, *STREAM_FAULTS)
#: The first bytes of each compression read (a gzip member's, a Zstandard frame's, RFC 8878), by its name.
MAGIC = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}
#: The names those files go by (``x.jsonl.gz``; ``x.jsonl.zst``, as ``zstd`` and Codex CLI name them): a dump's name
#: is its name without one (see :func:`plain_name`).
COMPRESSED_SUFFIXES = (".gz", ".zst", ".zstd")
#: What zstd says of a frame whose window (the text a decoder holds to look back in) is over the 128 MB it is
#: given by default (``ZSTD_WINDOWLOG_LIMIT_DEFAULT``, 2**27): written with ``zstd --long=28`` or more. Sound, and
#: not read: a window of 2 GB (``--long=31``) would be that much memory for a file, per worker (a stream of
#: unknown size, ``zstd --long=31 < x``, fills it); the error says how to decompress it instead.
_ZSTD_WINDOW_TOO_LARGE = "Frame requires too much memory for decoding"
#: What zstd says of a frame written with a dictionary (``zstd -D dict``, a library's ``ZstdCompressor(zstd_dict=)``)
#: decoded without it. The frame's header names the dictionary (its ``Dictionary_ID``, :func:`zstd_dictionary_id`).
_ZSTD_NEEDS_DICTIONARY = "Dictionary mismatch"
#: What zstd says of a frame it cannot decode, damaged, and also of one written with a dictionary whose header does
#: not name it (``zstd -D dict --no-dictID``: "Data corruption detected", or for a small file "Dictionary is
#: corrupted", review RALL-A): nothing tells the two apart, so the message names both.
_ZSTD_CORRUPT = ("Data corruption detected", "Dictionary is corrupted")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)

#: What a file listed by the ingest but removed before it was read gives (a harness's clean-up, ``rsync --delete``):
#: not "empty" nor "corrupt gzip", which would send the operator looking for a fault in its bytes.
GONE = "no longer exists (removed after the ingest listed it)"

#: (position, record, error, cursor after it: (byte offset, line number) for JSONL)
Record = tuple[str, Any, str | None, tuple[int, int] | None]
OnBytes = Callable[[int], None] | None


def compression(head: bytes) -> str | None:
    """The compression a file whose first bytes are ``head`` is in (``gzip``, ``zstd``), else None. A zstd file may
    open with a skippable frame (magic ``0x184D2A5?``: what ``pzstd`` writes first), which decoding passes over."""
    if head[1:4] == b"\x2a\x4d\x18" and head[:1] and head[0] & 0xF0 == 0x50:
        return "zstd"
    return next((name for name, magic in MAGIC.items() if head.startswith(magic)), None)


def zstd_dictionary_id(head: bytes) -> int | None:
    """The id of the dictionary the first zstd frame in ``head`` was written with (its header's ``Dictionary_ID``,
    RFC 8878 3.1.1.1: 0 to 4 bytes after the descriptor and the window byte, as the descriptor's low 2 bits say),
    else None (no dictionary, or not a zstd frame). Skippable frames before it (``pzstd``'s) are passed over."""
    at = 0
    while len(head) >= at + 8 and head[at + 1:at + 4] == b"\x2a\x4d\x18" and head[at] & 0xF0 == 0x50:
        at += 8 + int.from_bytes(head[at + 4:at + 8], "little")
    if head[at:at + 4] != MAGIC["zstd"] or len(head) <= at + 4:
        return None
    descriptor = head[at + 4]
    size = (0, 1, 2, 4)[descriptor & 0x03]
    start = at + 5 + (0 if descriptor & 0x20 else 1)  # a Window_Descriptor byte unless Single_Segment
    found = int.from_bytes(head[start:start + size], "little") if size and len(head) >= start + size else 0
    return found or None


def plain_name(name: str) -> str:
    """A file's name without the suffix of a compression read (:data:`COMPRESSED_SUFFIXES`): what says which dump it
    is (``x.traj.json.zst``: a ``.traj.json``)."""
    return next((name.removesuffix(suffix) for suffix in COMPRESSED_SUFFIXES if name.endswith(suffix)), name)


def plain_twin(path: Path) -> Path | None:
    """The file beside a compressed one named as it is without the compression's suffix (``x.jsonl`` beside
    ``x.jsonl.zst``), else None."""
    plain = plain_name(path.name)
    twin = path.with_name(plain)
    return twin if plain != path.name and twin.is_file() else None


#: How much of a compressed twin and of its plain file are compared at a time (see :func:`compressed_twin`).
_COMPARED = 1 << 16


def compressed_twin(path: Path) -> bool:
    """Whether ``path`` is a compressed copy of the start of the file beside it (``x.jsonl.zst`` beside ``x.jsonl``),
    which is read instead: Codex CLI compresses a rollout idle for a week (``x.jsonl.zst``, the plain file removed)
    and, to append to it, writes it out plain again before it removes the ``.zst``, so both lie there a while (or
    for good, in a copy taken then), the plain one the ``.zst``'s text and more. Only then: a file beside it of the
    same name whose text is not the start of the plain one's (``results.json.gz``, a backup of other runs beside
    ``results.json``) holds runs of its own, and is read. Compared a chunk at a time, only for such pairs; a
    compressed file that cannot be read to its end is not a copy (read, it says what is wrong with it)."""
    if (plain := plain_twin(path)) is None:
        return False
    try:
        with open(path, "rb") as raw, open(plain, "rb") as whole:
            text = decompressed(raw)
            if text is raw:  # named as compressed, and not: a file of its own
                return False
            with text:
                while chunk := text.read(_COMPARED):
                    if whole.read(len(chunk)) != chunk:
                        return False
    except GZIP_ERRORS:
        return False
    return True


def stream_fault(exc: BaseException, path: Path, where: str = " stream") -> str:
    """What a file whose text cannot all be read is, said of it ``where`` it stopped (`` stream after line 20``;
    "": the file): "truncated or corrupt zstd stream after line 20: <the decoder's words>" (or gzip). A zstd file
    sound but written with a window over what a file is given (see :data:`_ZSTD_WINDOW_TOO_LARGE`) or with a
    dictionary (:data:`_ZSTD_NEEDS_DICTIONARY`, :func:`zstd_dictionary_id`) is told as such, with the command that
    reads it; a plain file's read error (a disk's, a network mount's) as one."""
    try:
        with open(path, "rb") as raw:
            head = raw.read(PEEK_BYTES)
    except OSError:
        head = b""
    kind = compression(head[:4])
    after = where.removeprefix(" stream").strip()
    if after in ("after line 0", "after record 0"):  # nothing read: "not read after line 0" says no more
        after = ""
    dictionary = zstd_dictionary_id(head) if kind == "zstd" else None
    if kind == "zstd" and (dictionary or _ZSTD_NEEDS_DICTIONARY in str(exc)):
        named = f" (dictionary id {dictionary})" if dictionary else ""
        return (f"zstd written with a dictionary{named}, which trajsearch is not given: "
                f"{f'not read {after}; ' if after else ''}decompress it first with that dictionary "
                f"(zstd -d -D DICTIONARY {path.name}) and ingest that")
    if kind == "zstd" and _ZSTD_WINDOW_TOO_LARGE in str(exc):
        return ("zstd written with a window over 128 MB (zstd --long=28 or more), more memory than trajsearch gives "
                f"a file: {f'not read {after}; ' if after else ''}decompress it first (zstd -d --long=31 "
                f"{path.name}) and ingest that")
    if kind == "zstd" and any(said in str(exc) for said in _ZSTD_CORRUPT):
        return (f"truncated or corrupt zstd{where}: {exc} (truncated, corrupt, or written with a dictionary its "
                "header does not name: zstd -D DICTIONARY --no-dictID)")
    return f"{f'truncated or corrupt {kind}' if kind else 'read error'}{where}: {exc}"


class Source:
    """A dump file opened for reading (decompressed and decoded if needed: see :func:`_text_bytes`), reporting raw
    bytes consumed. Opening it reads the text's first bytes, so it raises :data:`GZIP_ERRORS` as reading does (a
    gzip cut inside its first block): readers open it where they catch those."""

    def __init__(self, path: Path, on_bytes: OnBytes = None) -> None:
        self.raw = open(path, "rb")
        try:
            self.stream: IO[bytes] = _text_bytes(self.raw)
        except BaseException:
            self.raw.close()
            raise
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

    @property
    def seeks_cheaply(self) -> bool:
        """Whether going back in the text is a seek: not for a compressed or decoded file, whose text is read again
        from its first byte (see :meth:`rewind`)."""
        return self.stream is self.raw

    def rewind(self, at: int = 0) -> None:
        """Back to the file's first byte, to read it again (bytes already reported are not reported twice); with
        ``at``, on to that byte of its text."""
        self._close_stream()
        self.raw.seek(0)
        self.stream = _text_bytes(self.raw)
        if at:
            _skip_to(self.stream, at)

    def _close_stream(self) -> None:
        """Close what reads the raw file (a decompressor, a decoder), not the file."""
        if self.stream is not self.raw:
            self.stream.close()

    def close(self) -> None:
        self.report()
        try:
            self._close_stream()
        finally:
            self.raw.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: What UTF-16 decoding says of a file that ends inside a character (cut at an odd byte, or between the halves of a
#: surrogate pair): the cut character is dropped, as a UTF-8 file cut the same way loses only its cut line.
_CUT_AT_THE_END = ("truncated data", "unexpected end of data")
_DAMAGED_UTF16 = "trajsearch.damaged-utf16"


def _damaged_utf16(exc: UnicodeError) -> tuple[str, int]:
    """A UTF-16 fault costs what the same fault costs in UTF-8: a cut last character is dropped, and a bad code unit
    (a lone surrogate) becomes one byte 0xFF in the UTF-8 text (see :class:`_Utf8FromUtf16`), which the parse of
    the line holding it refuses ("not UTF-8 text"), so one damaged line is lost, not the rest of the file. Not
    U+FFFD: a record whose id or argument was silently altered would be kept."""
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    return ("" if exc.reason in _CUT_AT_THE_END else "\udcff"), exc.end


codecs.register_error(_DAMAGED_UTF16, _damaged_utf16)


class _Utf8FromUtf16(io.RawIOBase):
    """UTF-16 bytes (a byte-order mark first) read as UTF-8 bytes, one chunk at a time: the JSON parsers, the line
    reader and the format detection all read UTF-8, and a file is never loaded whole to re-encode it. Not
    seekable: a resumed JSON lines read reads up to its cursor (counted in UTF-8 bytes) instead. Closing it
    closes ``stream`` only when it ``owns`` it. A damaged code unit reads as an invalid UTF-8 byte
    (:func:`_damaged_utf16`), never as an error that would end the read. Each chunk is one ``read1`` of the
    stream, decoded as it comes: a gzip cut mid-stream raises on the read after the last bytes it had, so every
    line before the cut is passed on, as in UTF-8 (a text wrapper's read of many chunks lost those it held)."""

    def __init__(self, stream: IO[bytes], owns: bool) -> None:
        super().__init__()
        self._stream = stream
        self._decoder = codecs.getincrementaldecoder("utf-16")(errors=_DAMAGED_UTF16)  # the BOM says which order
        self._owns = owns
        self._pending = b""
        self._ended = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending:
            if self._ended:
                return 0
            data = self._stream.read1(1 << 16)  # type: ignore[attr-defined]
            self._ended = not data
            text = self._decoder.decode(data, final=self._ended)
            self._pending = text.encode("utf-8", "surrogateescape")  # a damaged unit's U+DCFF: byte 0xFF
        size = min(len(buffer), len(self._pending))
        buffer[:size], self._pending = self._pending[:size], self._pending[size:]
        return size

    def close(self) -> None:
        if not self.closed and self._owns:
            self._stream.close()
        super().close()


def _text_bytes(raw: IO[bytes]) -> IO[bytes]:
    """The text of an open file as UTF-8 bytes: decompressed when its first bytes are a compression's
    (:func:`decompressed`), decoded when it is UTF-16. Closing what it returns leaves ``raw`` open."""
    stream = decompressed(raw)
    return _as_utf8(stream, owns=stream is not raw)


def decompressed(raw: IO[bytes]) -> IO[bytes]:
    """The bytes an open file holds: read through gzip or Zstandard when its first bytes say it is compressed (not
    its name), else ``raw`` itself. The one place a dump's decompressor is chosen. Closing what it returns leaves
    ``raw`` open."""
    kind = compression(raw.read(4))
    raw.seek(0)
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "zstd":  # frame after frame (``cat a.zst b.zst``), skippable ones passed over, as gzip's members
        return ZstdFile(raw)  # type: ignore[return-value]
    return raw


def _as_utf8(stream: Any, owns: bool) -> IO[bytes]:
    """``stream`` itself, or read through :class:`_Utf8FromUtf16` when its byte-order mark says UTF-16."""
    if stream.peek(2)[:2] in _UTF16_BOMS:
        return io.BufferedReader(_Utf8FromUtf16(stream, owns))
    return stream


def _skip_utf8_bom(stream: IO[bytes]) -> None:
    """Pass over a UTF-8 byte-order mark (Notepad's "UTF-8 with BOM", PowerShell's ``-Encoding UTF8``), which a
    JSON parser reading bytes takes for a stray character before the value."""
    if stream.peek(3)[:3] == codecs.BOM_UTF8:  # type: ignore[attr-defined]
        stream.read(3)


#: ijson's pure-Python parser: slower than its C backend, but it reads integers of any size (see ``json_items``).
_ANY_INTEGER = ijson.get_backend("python")


def json_items(src: Source, prefix: str, every_value: bool = False, at: int = 0, *,
               one_list: bool = False, nonfinite: bool = False) -> Iterator[Any]:
    """The items under ``prefix`` of a JSON file (``item``: a top-level array's), numbers as int or float. With
    ``at``, the items of a top-level array from that byte of its text on (where an item starts, or the space before
    it), ``src`` read from there (see :func:`_items_after`). ``one_list``: read no further than the end of the list
    the first item is in (an Inspect log's ``samples``, whose ``reductions`` after it are not needed).

    ``every_value``: of every top-level value of the file, one after another (JSONL, or concatenated pretty
    values), where ijson otherwise stops at the second value with "trailing garbage".

    ijson's C backend, with ``use_float``, stops at an integer of 2**63 or more ("integer overflow"): the
    ids a Python OpenTelemetry span dump holds as ints (VeADK's ``tracer.dump()``, ADK web's debug trace: half of
    all span ids, every trace id). Then the file is read again with the pure-Python parser, from its start, the
    items already given skipped.

    ``nonfinite``: bare ``NaN``, ``Infinity`` and ``-Infinity`` read as a whole read reads them (see
    :class:`_FiniteText`), and a file that ends inside a string (an escape cut: a lexical error to ijson) said to be
    cut short ("premature EOF"), as one cut elsewhere is.
    """
    given = 0
    text = _json_text(src, at, nonfinite)
    try:
        for item in _items(text, prefix, every_value, ijson, one_list):
            given += 1
            yield _finite(text, item)
        return
    except ijson.JSONError as exc:
        if isinstance(text, _FiniteText) and text.cut:
            raise ijson.IncompleteJSONError("premature EOF (inside a string or a value)") from exc
        if "integer overflow" not in str(exc):
            raise
    src.rewind(at)
    text = _json_text(src, at, nonfinite)
    for item in itertools.islice(_items(text, prefix, every_value, _ANY_INTEGER, one_list), given, None):
        yield _finite(text, item)


_OPENS = ("start_map", "start_array")
_CLOSES = ("end_map", "end_array")


def _items(text: IO[bytes], prefix: str, every_value: bool, backend: Any, one_list: bool = False) -> Iterator[Any]:
    """What ``ijson.items(text, prefix)`` gives, built from the parser's basic events (``backend.basic_parse``) by
    :func:`_built`, which builds nothing past :data:`MAX_DEPTH`. ijson's ``items`` and ``parse`` build a prefix
    string for every level they are in, so a value 40,000 levels deep took 3.9 GB and one of 100,000 levels, in a
    0.4 MB Inspect log, exhausted the machine (review INSP29, finding 1); basic events hold no prefix, and the path
    is joined only at the depth of ``prefix``. ``one_list``: no further than the end of the first item's list."""
    levels = prefix.count(".") + 1 if prefix else 0
    path: list[str] = []  # what ijson names each container the parser is in: a map's current key, ``item``
    events = iter(backend.basic_parse(text, use_float=True, multiple_values=every_value))
    given = False
    for event, value in events:
        if event == "map_key":
            path[-1] = value
        elif event in _CLOSES:
            path.pop()
            if given and one_list and len(path) < levels:
                return
        elif len(path) == levels and ".".join(path) == prefix:
            given = True
            yield _built(events, event, value)
        elif event in _OPENS:
            path.append("item" if event == "start_array" else "")


def _built(events: Iterator[tuple[str, Any]], event: str, value: Any) -> Any:
    """The value that opens with ``event``, its other events drawn from ``events`` to its end. A list or object opened
    past :data:`MAX_DEPTH` is kept empty, its contents drawn and dropped: memory stays the parser's stack, the value
    still nests past the limit for every depth check to refuse, and its other members still name it (an Inspect
    sample's id). Built here rather than by ``ijson.ObjectBuilder``, whose method call per event made the parse
    slower still."""
    if event not in _OPENS:
        return value
    root: Any = {} if event == "start_map" else []
    stack, key = [root], None  # the containers open, innermost last; the key of the next member of a map
    for event, value in events:
        if event == "map_key":
            key = value
            continue
        if event in _CLOSES:
            stack.pop()
            if not stack:
                return root
            continue
        child = {} if event == "start_map" else [] if event == "start_array" else value
        parent = stack[-1]
        if type(parent) is list:
            parent.append(child)
        else:
            parent[key] = child
        if event in _OPENS:
            if len(stack) < MAX_DEPTH:
                stack.append(child)
            else:
                _dropped(events)
    raise ijson.IncompleteJSONError("premature EOF")  # not reached: the parser raises where a value is cut short


def _dropped(events: Iterator[tuple[str, Any]]) -> None:
    """Draw the events of a list or object just opened, to its end."""
    level = 1
    for event, _ in events:
        level += (event in _OPENS) - (event in _CLOSES)
        if not level:
            return


def _json_text(src: Source, at: int, nonfinite: bool = False) -> IO[bytes]:
    """What a JSON parser reads of ``src``: its text past a UTF-8 byte-order mark; read from byte ``at`` of a
    top-level array, the rest of the array, opened again (``[`` and its items from there). ``nonfinite``: through
    :class:`_FiniteText`."""
    if not at:
        _skip_utf8_bom(src.stream)
        text = src.stream
    else:
        text = io.BufferedReader(_Joined(b"[", src.stream))
    return _FiniteText(text) if nonfinite else text


#: The bare words Python's json, pydantic's ``ser_json_inf_nan="constants"`` and so Inspect's JSON log writer write
#: for a float not finite, which ijson refuses.
_NONFINITE = ("NaN", "Infinity", "-Infinity")
#: A bare word cut at the end of a chunk, held for the next (``-`` too: ``-Infinity`` or a negative number).
_WORD_START = re.compile(rb"(?:N|Na|-|-?I|-?In|-?Inf|-?Infi|-?Infin|-?Infini|-?Infinit)\Z")
#: JSON text outside its strings, and whole strings: where it stops, a string opens that is not closed.
_OUTSIDE = re.compile(rb'(?:[^"]++|"(?:[^"\\]++|\\.)*+")*+', re.S)
#: A string's text after its opening quote: where it stops, its closing quote or a last ``\\`` (an escape cut).
_INSIDE = re.compile(rb'(?:[^"\\]++|\\.)*+', re.S)
#: What may follow a bare word (or the text's end): past anything else it is damage (``NaNny``), left for ijson
#: to name, not made a value.
_AFTER_WORD = frozenset(b",]} \t\r\n")
#: How much :class:`_FiniteText` reads at a time: a word or an escape may be cut by it.
_CHUNK = 1 << 16
#: The longest last line of a chunk read again with the next (see ``_FiniteText._rewritten``).
_HELD_LINE = 1 << 16


class _FiniteText(io.RawIOBase):
    """JSON text with its bare ``NaN``, ``Infinity`` and ``-Infinity`` (outside strings: inside one they are words)
    rewritten as strings that stand in for them, a chunk at a time: a word, an escape or a short last line cut by a
    chunk's end is read with the next. So a log that Inspect wrote with NaN scores (every unscored sample's, since
    0.3.2xx) streams instead of being read whole (an 84 MB log: 56 MB peak against 315 MB). ``rewritten``: how many
    words so far; ``cut``: the text ended inside a string or a word (a file cut short), which ijson calls a lexical
    error.

    A word's stand-in is a string of U+FDD0, 128 random bits drawn for this read, and the word (``stand_ins``: each
    one's float, which :func:`_finite` puts back): a string the text itself holds is never taken for one, as a
    fixed stand-in was (``"\ufdd0NaN"``, a sample's input, read as NaN), unless it guesses those bits."""

    def __init__(self, stream: IO[bytes]) -> None:
        super().__init__()
        self._stream = stream
        self._held = b""
        self._pending = b""
        self._in_string = False
        self._ended = False
        self.rewritten = 0
        self.cut = False
        tag = f"\ufdd0{secrets.token_hex(16)}"
        # json's own float objects, a whole read's: its NaN, in a list or a dict, equal to one of a whole read's
        self.stand_ins = {f"{tag}{word}": json.loads(word) for word in _NONFINITE}
        self._opening = f'"{tag}'.encode()

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        """Up to ``size`` bytes; a chunk without a word is passed on as read, not copied (ijson reads this)."""
        while not self._pending and not self._ended:
            data = self._stream.read(_CHUNK)
            self._ended = not data
            if self._ended:  # what was held, read to its end: what is still held is a cut string or word
                self._pending = self._rewritten(self._held, final=True) if self._held else b""
                self._pending, self.cut = self._pending + self._held, self._in_string or bool(self._held)
            else:
                self._pending = self._rewritten(self._held + data)
        if size is None or size < 0 or size >= len(self._pending):
            size = len(self._pending)
        data, self._pending = self._pending[:size], self._pending[size:]
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _rewritten(self, text: bytes, final: bool = False) -> bytes:
        """``text`` with its bare words rewritten, up to what the next chunk decides (held): its last line, when short,
        read again with the next chunk (so no string is followed across chunks: the next starts outside any), else
        a word or an escape cut at its end. ``final``: the text's end, nothing read after it."""
        out: list[bytes] = []
        at = 0
        if self._in_string and (at := self._string_end(text, 0, out)) < 0:
            return b"".join(out)
        line = text.rfind(b"\n", at) + 1  # where the last line starts, outside any string
        limit = line if not final and line and len(text) - line <= _HELD_LINE else len(text)
        for start, end in _bare_words(text, at, limit):
            if start < at:  # in a string passed over
                continue
            reach = _OUTSIDE.match(text, _line_start(text, at, start), start).end()
            if reach < start:  # inside a string that opens at ``reach``
                out.append(text[at:reach + 1])
                if (at := self._string_end(text, reach + 1, out)) < 0:
                    return b"".join(out)
            elif end == len(text) or text[end] in _AFTER_WORD:  # else damage (``NaNny``), left as written
                out += (text[at:start], self._opening + text[start:end] + b'"')
                self.rewritten += 1
                at = end
        if at <= limit < len(text):  # (``at`` past it: a string holding a newline, which the parser refuses)
            out.append(text[at:limit])
            self._held = text[limit:]
            return b"".join(out)
        reach = _OUTSIDE.match(text, _line_start(text, at, len(text))).end()
        if reach < len(text):  # a string opens there, not closed in this chunk
            out.append(text[at:reach + 1])
            self._string_end(text, reach + 1, out)
            return b"".join(out)
        start = _WORD_START.search(text, max(at, len(text) - 9))
        end = start.start() if start else len(text)
        out.append(text[at:end])
        self._held = text[end:]
        return b"".join(out)

    def _string_end(self, text: bytes, at: int, out: list[bytes]) -> int:
        """Past the string whose text starts at ``at``, its text put in ``out``; -1 where it runs past ``text`` (its
        last ``\\``, if any, held)."""
        end = _INSIDE.match(text, at).end()
        if text[end:end + 1] == b'"':
            out.append(text[at:end + 1])
            self._in_string, self._held = False, b""
            return end + 1
        out.append(text[at:end])
        self._in_string, self._held = True, text[end:]
        return -1


def _bare_words(text: bytes, at: int, end: int) -> Iterator[tuple[int, int]]:
    """Where each ``NaN``, ``Infinity`` and ``-Infinity`` of ``text[at:end]`` starts and ends, in strings or not, in
    order: found by ``bytes.find`` (a regex searching every byte took 1.5 s for 84 MB)."""
    nan, inf = text.find(b"NaN", at, end), text.find(b"Infinity", at, end)
    while nan >= 0 or inf >= 0:
        if inf < 0 or 0 <= nan < inf:
            yield nan, nan + 3
            nan = text.find(b"NaN", nan + 3, end)
        else:
            yield inf - (inf > at and text[inf - 1] == 0x2D), inf + 8  # 0x2D: -Infinity's minus
            inf = text.find(b"Infinity", inf + 8, end)


def _line_start(text: bytes, at: int, end: int) -> int:
    """Where the last line of ``text[at:end]`` starts (``at`` is outside a string): a JSON string holds no newline
    (it is written ``\\n``), so whether a word is in a string is told by its line alone, not by every string before
    it (a pretty-printed 84 MB log: 0.23 s of CPU, against 0.60 s scanned whole; a one-line log is scanned whole)."""
    return max(at, text.rfind(b"\n", at, end) + 1)


def _finite(text: IO[bytes], value: Any) -> Any:
    """``value``, parsed from ``text``, as a whole read gives it: the stand-ins of the bare words ``text`` rewrote
    made floats again, in place (nothing to do where ``text`` is no :class:`_FiniteText` or rewrote none yet)."""
    if isinstance(text, _FiniteText) and text.rewritten:
        return _restored(value, text.stand_ins)
    return value


def _restored(value: Any, stand_ins: dict[str, float]) -> Any:
    """``value`` with its strings that are ``stand_ins`` made their floats, in place."""
    if type(value) is str:
        return stand_ins.get(value, value)
    if type(value) is dict:
        for key, item in value.items():
            if type(item) in (str, dict, list):
                value[key] = _restored(item, stand_ins)
    elif type(value) is list:
        for index, item in enumerate(value):
            if type(item) in (str, dict, list):
                value[index] = _restored(item, stand_ins)
    return value


class _Joined(io.RawIOBase):
    """``head``, then what ``stream`` holds: the rest of an array read again from one of its items on."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        super().__init__()
        self._head, self._stream = head, stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._head or self._stream.read(len(buffer))
        self._head = self._head[len(buffer):]
        data = data[:len(buffer)]
        buffer[:len(data)] = data
        return len(data)


@contextmanager
def open_dump(path: Path) -> Iterator[IO[bytes]]:
    """The file's text as UTF-8 bytes, read as a :class:`Source` reads it (decompressed, decoded when UTF-16); the
    file closed after. Opening it raises what reading does (a gzip cut inside its first block)."""
    with Source(path) as src:
        yield src.stream


def whole_text(path: Path) -> tuple[str | None, str | None]:
    """A small text dump read whole as the Markdown formats read it (decompressed, UTF-8 with bad bytes replaced, a
    byte order mark dropped): ``(text, None)``, or ``(None, why not)`` for a file that cannot be read."""
    try:
        with open_dump(path) as stream:
            return stream.read().decode("utf-8", errors="replace").lstrip("\ufeff"), None
    except GZIP_ERRORS as exc:  # (OSError among them)
        return None, f"cannot read {path}: {exc}"


def peek(path: Path) -> str:
    """Up to PEEK_BYTES of decoded text (whatever is readable of a broken .gz or .zst)."""
    chunks: list[bytes] = []
    size = 0
    try:
        with open_dump(path) as f:
            while size < PEEK_BYTES and (chunk := f.read(4096)):
                chunks.append(chunk)
                size += len(chunk)
    except GZIP_ERRORS:
        pass
    return b"".join(chunks).decode("utf-8", errors="replace")


def peek_full(head: str) -> bool:
    """Whether ``peek`` stopped at its limit, not at the file's end: a one-line file that fits the peek is read from
    the head, which holds it whole (read again as raw bytes, a Langfuse export or a native run with one Latin-1 byte
    was "unrecognised" or "binary", not the reader's "line 1: not UTF-8 text"; review of probe 50 NC). The head's
    UTF-8 is never shorter than the bytes it was decoded from (a bad byte became U+FFFD, three bytes)."""
    return len(head.encode("utf-8")) >= PEEK_BYTES


def first_line_is_json(head: str) -> bool:
    line = head.split("\n", 1)[0]
    if len(line) >= PEEK_BYTES:  # longer than the peek: assume one JSON document per line
        return True
    try:
        json.loads(line)
    except RecursionError:  # JSON, only too deep: the line reader will say so
        return True
    except json.JSONDecodeError:
        return False
    except ValueError as exc:  # a number too long for Python (the line reader says so), or not UTF-8
        # whole JSON but for the number? (the first line of an array, ``[{... 5,000 digits ...},``, is not)
        return not isinstance(exc, UnicodeError) and first_line_is_json(_LONG_DIGITS.sub("0", line))
    return True


#: A run of digits longer than any number Python reads from text (``sys.get_int_max_str_digits()``, 4300).
_LONG_DIGITS = re.compile(r"\d{4000,}")


def is_jsonl(head: str) -> bool:
    """A first line that is a whole JSON value with more lines after it: JSON Lines, whatever its first value; or a
    first line that is a broken record before a whole one (:func:`_broken_first_line`)."""
    first, _, rest = head.partition("\n")
    return bool(rest.strip()) and len(first) < PEEK_BYTES and (first_line_is_json(first)
                                                               or _broken_first_line(first, rest))


def _broken_first_line(first: str, rest: str) -> bool:
    """Whether a first line that opens an object and does not close it (a record cut by a writer that died mid-line,
    a Windows path's ``\\`` unescaped, a trailing comma) is the broken first record of JSON Lines: the next line is a
    whole JSON object of its own, at the line's start (probe 51, NC2: such a file was read as one document, and the
    one bad line cost every good record after it). So too a first line that opens with ``[`` and is no JSON: a tool's
    note teed with its output (``[ripgrep] fallback: ...``, Claude Code's stderr before its stream-json), which as a
    document cost the whole file, with no line named.

    A JSON document written one item per line is not: its first line only opens the wrapper's first member
    (``{"resourceSpans": [``, any-agent's ``{"spans": [``), its items end with ``,`` or the line after an item
    starts with one (or closes the wrapper), and a head that holds the whole file parses as one value. Read as JSON
    Lines, such a file lost its first trace or was stored as a run of 0 steps, replacing the good one on re-ingest
    (review RNC2, D1). A cut line may end anywhere, after a ``[`` or a ``:`` too: its next records still start
    their own lines, with no comma between them. A first line that could only open a wrapper (``{"spans": [``,
    also a record cut right after its first key, ``{"timestamp":``) is judged by the line after the next: where
    there is none, a wrapper's one long item looks like a lone record (probe 52, NC3: with the key alone taken for a
    wrapper, a JSONL file whose first record was cut after ``{"timestamp":`` was read as one malformed document)."""
    opened = first.strip()
    nexts = list(itertools.islice((line for line in rest.split("\n") if line.strip()), 2))
    if not opened.startswith(("{", "[")) or (_WRAPPER_OPENING.fullmatch(opened) and len(nexts) < 2):
        return False
    following = nexts[0] if nexts else ""
    if following.rstrip().endswith(",") or (len(nexts) > 1 and nexts[1].lstrip().startswith((",", "]", "}"))):
        return False
    if not following.startswith("{"):  # a whole value other than a record (``null``, a number, a history of
        # records: Pydantic AI's a line): a bad line of JSON Lines too; a document's next line is a member
        # (``"key": ...``) or its close, never a whole value
        return (_one_value(following) or following.startswith("[{") and _cut_by_head(following, rest)) \
            and not _one_value(first + "\n" + rest)
    try:
        value = json.loads(following)
    except RecursionError:
        return not _one_value(first + "\n" + rest)
    except ValueError:  # a next line the head cut (longer than what is left of the peek) still opens a record
        return _cut_by_head(following, rest)
    return isinstance(value, dict) and bool(value) and not _one_value(first + "\n" + rest)


def _cut_by_head(following: str, rest: str) -> bool:
    """Whether the line after a broken first one is a record (or a history of them, ``[{"``) that runs past the
    peek: the head's last line, opening as one does. A history of a tool's long return easily passes 64 KiB."""
    return following == rest.rstrip("\r\n").rsplit("\n", 1)[-1] and following.startswith(('{"', '[{"'))


#: A first line that only opens a document's first member: ``{"resourceSpans": [``, ``{"spans": [``, ``{"runs":``.
_WRAPPER_OPENING = re.compile(r'\{\s*"[^"\\]*"\s*:\s*[\[{]?')


def _one_value(text: str) -> bool:
    """Whether ``text`` is one JSON value: a document, not lines of records."""
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


def pretty_printed(head: str) -> bool:
    """Whether ``head`` (stripped of leading whitespace) opens one or more pretty-printed JSON objects: an object
    not closed on its first line, which is no JSON Lines file's (:func:`is_jsonl`)."""
    return head.startswith("{") and not first_line_is_json(head) and not is_jsonl(head)


def reads_as_lines(head: str) -> bool:
    """Whether :func:`records` reads a file of this ``head`` (stripped) line by line: JSON Lines, one line of JSON, or
    text that opens no JSON document (a banner a script printed before its records)."""
    return is_jsonl(head) or not (head.startswith("[") or _big_object_lists(head) is not None or pretty_printed(head))


def json_error(exc: json.JSONDecodeError) -> str:
    """Python's message with where: "Unterminated string starting at" takes the place after a colon, as Python
    writes it (not "starting at at line 59")."""
    where = f"line {exc.lineno} column {exc.colno}"
    return f"malformed JSON: {exc.msg}: {where}" if exc.msg.endswith(" at") else f"malformed JSON: {exc.msg} at {where}"


TOO_DEEP = f"JSON nested deeper than {MAX_DEPTH} levels; rejected"


def _depth_checked(value: Any) -> tuple[Any, str | None]:
    """A parsed value, or TOO_DEEP for one nested past ``MAX_DEPTH`` (later code walks it recursively)."""
    return (None, TOO_DEEP) if depth(value, MAX_DEPTH) > MAX_DEPTH else (value, None)


def loads(text: str | bytes, limit: int = MAX_DEPTH, **options: Any) -> Any:
    """``json.loads`` of a text read as JSON where it is JSON (tool arguments, a reply's body, a side file, an outcome
    file), else as text or not at all: a ValueError, as for any text that is no JSON, also where it is nested deeper
    than ``limit`` (a record's own bound; a tool argument's is the model's ``MAX_ARGUMENT_DEPTH``) or than Python reads
    at all. Such text is an agent's runaway output (``[[[...]]]``): its RecursionError, raised here or by a later walk
    of the value parsed (lone surrogates mended, messages flattened), refused the run, or, met splitting a file or
    telling a side file, ended the ingest."""
    try:
        value = json.loads(text, **options)
    except RecursionError:
        raise ValueError(f"JSON nested deeper than {limit} levels") from None
    if depth(value, limit) > limit:
        raise ValueError(f"JSON nested deeper than {limit} levels")
    return value


#: One decoder for every ``raw_decode`` (building one per stretch of a hostile line cost a fifth of its time).
_DECODER = json.JSONDecoder()


def parse(raw: str | bytes, unit: str = "line") -> tuple[Any, str | None]:
    """``(value, None)`` for one JSON text, or ``(None, reason)``: malformed, not UTF-8, or too deep. ``unit``:
    what the text is to its file, as a reason names it (a ``line``; a ``record`` of an array, maybe of lines)."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, _parse_error(exc, unit)
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text: {exc.reason} at byte {exc.start}" + (f" of the {unit}" if unit != "line" else "")
    except ValueError as exc:
        return None, _too_long_number(exc)
    except RecursionError:
        return None, TOO_DEEP
    return _depth_checked(value)


def _parse_error(exc: json.JSONDecodeError, unit: str = "line") -> str:
    """Why one JSON text (a line) is malformed. A text that ends inside its value is said to be cut short: Python's
    words for it name the next line's first column ("Expecting ',' delimiter (column 1)" of a record a writer
    stopped mid-way) or a control character (the line's own newline, inside a string), which sent a user looking
    for a fault that is not there (probe 51, NC2). The last line of a file has no newline: cut inside a string
    (``split -b``'s chunk, a writer killed mid-record) it is "Unterminated string", cut inside ``true`` or a
    number "Expecting value" at a value that only stops early (review RNC2, D3)."""
    text = exc.doc.rstrip()
    where = f"line {exc.lineno} column {exc.colno} of the {unit}" if exc.lineno > 1 else f"column {exc.colno}"
    if exc.msg == "Unterminated string starting at":  # no closing quote anywhere after it: the text ends inside it
        return f"malformed JSON: cut short: the {unit} ends inside a string starting at {where}"
    if _cut_short(exc):
        return f"malformed JSON: cut short: the {unit} ends inside its JSON value" + (
            f", after column {len(text)}" if "\n" not in text else "")
    return f"malformed JSON: {exc.msg.removesuffix(' at')} ({where})"  # a msg may end "starting at"


def _cut_short(exc: json.JSONDecodeError) -> bool:
    """Whether a JSON text fails only because it ends inside its value (:func:`_parse_error`)."""
    text = exc.doc.rstrip()
    return exc.msg == "Unterminated string starting at" or exc.pos >= len(text) or bool(
        _CUT_VALUE.fullmatch(text[exc.pos:]))


#: What is left at the error of a text cut inside a literal, a number's fraction or exponent, or a \\u escape.
_CUT_VALUE = re.compile(r"t(r(u)?)?|f(a(l(s)?)?)?|n(u(l)?)?|-|[.eE][+-]?|u[0-9a-fA-F]{0,3}")


def _too_long_number(exc: ValueError) -> str:
    """Python's refusal of an integer of more digits than ``sys.get_int_max_str_digits()`` (4300): one record's
    fault, where it ended the whole ingest with no file named (review RNC2, 7)."""
    return f"malformed JSON: a number too long to read ({str(exc).split(';')[0]})"


def _values(text: str) -> Iterator[tuple[int, int | None, Any, json.JSONDecodeError | str | None]]:
    """Every JSON value in ``text``, one after another (whitespace between them): ``(start, end, value, None)``,
    ``(start, end, None, TOO_DEEP)`` for one nested too deep; ``(start, None, None, error)`` for one no parser takes,
    which ends it (where it would end is not known)."""
    pos = 0
    while (pos := _space_after(text, pos)) < len(text):
        start = pos
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            yield start, None, None, exc
            return
        except ValueError as exc:
            yield start, None, None, _too_long_number(exc)
            return
        except RecursionError:
            yield start, None, None, TOO_DEEP
            return
        yield start, pos, *_depth_checked(value)


def read_text(path: Path, on_bytes: OnBytes = None) -> tuple[str | None, str | None]:
    """(text, None) of the whole file, or (None, error) when it is not readable UTF-8."""
    try:
        with Source(path, on_bytes) as src:
            return src.stream.read().decode("utf-8"), None
    except FileNotFoundError:
        return None, GONE
    except UnicodeDecodeError as exc:
        return None, f"not UTF-8 text: {exc.reason} at byte {exc.start}"
    except GZIP_ERRORS as exc:
        return None, stream_fault(exc, path)


def loaded_values(path: Path, on_bytes: OnBytes = None) -> Iterator[Record]:
    """A whole file loaded at once: each top-level JSON value (usually one; concatenated objects: several). After a
    value no parser takes, the values after it are each parsed on their own (:func:`value_texts`): one bad record of
    ``jq . runs.jsonl`` output or of hand-written concatenated objects lost every record after it (probe 52, NC3)."""
    text, error = read_text(path, on_bytes)
    if error is not None:
        yield "file", None, error, None
        return
    for number, (_, _, value, exc) in enumerate(_values(text or ""), 1):
        if exc is None:
            yield f"record {number}", value, None, None
            continue
        reason = exc if isinstance(exc, str) else json_error(exc)
        yield ("file" if number == 1 else f"record {number}"), None, reason, None
        texts = value_texts(io.BytesIO((text or "").encode()), open_arrays=False)
        for later, value, error in told_apart(texts, number - 1):
            if later > number:  # the bad one is said above, in the words of the parser that read the whole text
                yield f"record {later}", value, error, None
        return


#: The temporary folders of ``read.Streams`` (a stream's copy: ``<prefix><host>-<pid>-<random>/stream-<n>/<name>``):
#: the owner's host name and pid in the name so that the next ingest on that host can remove the copies of one that
#: was killed (``read._sweep_orphaned_copies``); a container sharing $TMPDIR has a host name of its own, and its pids
#: are not ours. Here for the adapters that name a run by its file's folder, which a copy's is not.
STREAMS_PREFIX = "trajsearch-streams-"


class Values(list):  # type: ignore[type-arg]
    """The values of a file that holds several (JSONL lines, concatenated objects), with where each was read
    (``positions``: ``line N``, ``record N``): an adapter that reads each as a run of its own names it so, right
    after a malformed line too."""

    def __init__(self, read: list[Record]) -> None:
        super().__init__(r[1] for r in read)
        self.positions = [r[0] for r in read]


def whole_document(path: Path, on_bytes: OnBytes = None) -> tuple[Any, list[Record]]:
    """A file as one value, for formats where a file is one run, and the errors met reading it.

    One JSON value (a document, or a file of one line) is itself; several
    (JSONL lines, concatenated objects) become the list of their values
    (:class:`Values`), a malformed one reported and skipped so one bad line
    does not lose the run. ``None`` when nothing was readable. JSON Lines whose
    lines are arrays (a history a line) is read line by line, as any JSON Lines:
    loaded whole, a line cut short lost every line after it.
    """
    peeked = peek(path)
    head = peeked.lstrip(_TEXT_SPACE)
    if head.startswith("[") and not (is_jsonl(head) or _lines_after_long_first(path, peeked)) or pretty_printed(head):
        found = list(loaded_values(path, on_bytes))
    else:
        found = list(lines(path, None, on_bytes))
    values = Values([r for r in found if r[2] is None])
    errors = [r for r in found if r[2] is not None]
    return (values[0] if len(values) == 1 else values or None), errors


def _lines_after_long_first(path: Path, peeked: str) -> bool:
    """Whether a file whose first line runs past the peek has more lines: JSON Lines, as :func:`first_line_is_json`
    takes a line that long to be (a history a line whose first history holds a tool's long return). Loaded whole,
    a later line cut short lost every line after it. The first line is read through, not kept. ``peeked``: the peek
    as read (a byte order mark stripped, it no longer looked full)."""
    if "\n" in peeked.lstrip(_TEXT_SPACE) or not peek_full(peeked):
        return False
    try:
        with open_dump(path) as f:
            while (chunk := f.readline(1 << 20)) and not chunk.endswith(b"\n"):
                pass
            while chunk := f.read(4096):
                if chunk.strip():
                    return True
    except GZIP_ERRORS:  # (OSError among them)
        pass
    return False


def streamed(path: Path, prefix: str, wrap: Callable[[Any], Any] | None, on_bytes: OnBytes = None) -> Iterator[Record]:
    """Items under ``prefix`` (``item`` = the elements of a top-level array), one at a time."""
    return streamed_lists(path, {prefix: wrap}, on_bytes)


#: What ends or opens a value inside a JSON array, and what ends a string (its closing quote, or an escape).
_ARRAY_TOKEN = re.compile(rb'[\[\]{},"]')
_STRING_TOKEN = re.compile(rb'[\\"]')
_SPACE = b" \t\r\n"
#: JSON's whitespace as text, and a byte-order mark (a file's own; one a concatenation put between two records).
_TEXT_SPACE = _SPACE.decode() + "\ufeff"


def value_texts(stream: IO[bytes], open_arrays: bool = True, chunk: int = 1 << 20, *, inside: bool = False,
                ends: list[int] | None = None) -> Iterator[bytes]:
    """The text of each top-level value ``stream`` holds, one after another (concatenated pretty-printed objects), and
    with ``open_arrays`` of each item of a top-level array instead of the array: cut by brackets and commas outside
    strings, without parsing, so one value that no parser takes (a number of more digits than Python reads, a byte
    that is not UTF-8, a bad escape) costs itself alone, as a line does in JSON Lines (:func:`parse` then says why).
    Memory is one value. Text that is no value is given as it stands: :func:`parse` refuses it.

    ``inside``: ``stream`` starts inside an opened array, at one of its items. ``ends``: set, as each item of an
    opened array is given, to the byte of the stream after the comma or bracket that ends it, and whether that was
    the array's closing bracket."""
    item, in_string, escaped = bytearray(), False, False
    depth = floor = int(inside)  # floor: 1 inside an opened array
    chunks = iter(lambda: stream.read(chunk), b"")
    read = 0  # the bytes of the stream up to the end of ``data``
    if not inside:  # a BOM is no value's text (review RNC3, D1)
        if (head := stream.read(len(codecs.BOM_UTF8))) != codecs.BOM_UTF8:
            chunks = itertools.chain([head], chunks)
        else:
            read = len(head)
    for data in chunks:
        read, pos = read + len(data), 0
        while pos < len(data):
            if in_string:
                if escaped:
                    item += data[pos:pos + 1]
                    pos, escaped = pos + 1, False
                    continue
                found = _STRING_TOKEN.search(data, pos)
                if found is None:
                    item += data[pos:]
                    break
                end = found.end()
                item += data[pos:end]
                pos, escaped = end, found.group() == b"\\"
                in_string = escaped  # an escape goes on inside the string; its quote ends it
                continue
            if depth == 0 and not item.strip(_SPACE):  # between top-level values: an array to open?
                while pos < len(data) and data[pos] in _SPACE:
                    pos += 1
                if pos == len(data):
                    break
                if open_arrays and data[pos:pos + 1] == b"[":
                    depth, floor, pos = 1, 1, pos + 1
                    continue
            found = _ARRAY_TOKEN.search(data, pos)
            if found is None:
                item += data[pos:]
                break
            token, at = found.group(), found.start()
            if floor == 1 and depth == 1 and token in (b",", b"]"):  # an item of the opened array ends
                item += data[pos:at]
                if ends is not None:
                    ends[:] = [read - len(data) + at + 1, token == b"]"]
                if item.strip(_SPACE) or token == b",":
                    yield bytes(item)
                item, pos = bytearray(), at + 1
                if token == b"]":
                    depth = floor = 0
                continue
            item += data[pos:at + 1]
            pos = at + 1
            if token == b'"':
                in_string = True
            elif token in (b"[", b"{"):
                depth += 1
            elif token in (b"]", b"}") and depth > floor:
                depth -= 1
                if depth == 0:  # a top-level value closes
                    yield bytes(item)
                    item = bytearray()
    if item.strip(_SPACE):
        yield bytes(item)


def streamed_lists(path: Path, lists: dict[str, Callable[[Any], Any] | None],
                   on_bytes: OnBytes = None) -> Iterator[Record]:
    """Items under each prefix of ``lists`` in turn, of every top-level value, each wrapped by its function.

    One pass per prefix (ijson's C parser skips the rest fast; memory stays one item): an OTLP file holding
    ``resourceSpans`` *and* ``resourceLogs`` needs both lists. Every top-level value is read, as a collector's
    JSONL or ``jq .`` output holds one request per export; a parse error ends the file.
    """
    number = 0
    try:
        with Source(path, on_bytes) as src:
            try:
                for index, (prefix, wrap) in enumerate(lists.items()):
                    if index:
                        src.rewind()
                    for item in json_items(src, prefix, every_value=True):
                        number += 1
                        yield _item(number, item, wrap)
                        src.report()
            except Exception as exc:  # ijson.JSONError and its incomplete-input variant, or a byte not UTF-8
                if "item" not in lists or isinstance(exc, GZIP_ERRORS):
                    raise
                yield from _items_after(src, path, number, lists["item"], exc)
    except FileNotFoundError:  # only opening it can raise this: an open file removed is still read
        yield "file", None, GONE, None
    except GZIP_ERRORS as exc:
        yield f"record {number + 1}", None, stream_fault(exc, path, f" stream after record {number}"), None
    except UnicodeDecodeError as exc:
        yield f"record {number + 1}", None, f"not UTF-8 text: {exc.reason}", None
    except Exception as exc:  # ijson.JSONError and its incomplete-input variant
        yield f"record {number + 1}", None, f"malformed JSON after record {number}: {exc}", None


#: What ijson says of a file that ends inside its array: its C parser, its pure-Python one (see :func:`json_items`).
_CUT_SHORT = ("premature EOF", "Incomplete ")


def document_value(path: Path, key: str) -> Any:
    """The value of ``key`` at the top of a JSON document, read no further than its end (an Inspect AI JSON log's
    ``eval``, before its samples); None where the file holds no such key or is not read so (not JSON, a list)."""
    try:
        with Source(path) as src:
            return next(json_items(src, key, nonfinite=True), None)
    except Exception:  # ijson.JSONError, a byte not UTF-8, a broken stream: the whole read says why
        return None


def document_head(path: Path, before: str) -> dict[str, Any] | None:
    """The members of a JSON document's top-level object that come before its member ``before`` (an Inspect AI JSON
    log's header, before its ``samples``), read no further: what detection judges such a log by, where parsing the
    document whole held it all in memory. None where the file is no object, or is not read so (malformed)."""
    head: dict[str, Any] = {}
    try:
        with Source(path) as src:
            text = _json_text(src, 0, nonfinite=True)
            events = iter(ijson.basic_parse(text, use_float=True))
            if next(events, None) != ("start_map", None):
                return None  # a list or a scalar at the top
            for event, key in events:
                if event != "map_key" or key == before:  # the object's end, or ``before``
                    break
                head[key] = _built(events, *next(events))
            _finite(text, head)  # a NaN in the results' metrics before the samples: every log with an unscored sample
    except Exception:  # ijson.JSONError, a byte not UTF-8, a broken stream: the reader says why
        return None
    return head


class Unstreamable(Exception):
    """The streaming parser refused a value that a whole read may take (a number past a float's range, ``1e400``,
    which Python's json reads as infinity; or damage, which the whole read names), after ``given`` items: the caller
    reads the file whole, those items passed over. (``NaN`` and ``Infinity`` are streamed: see :class:`_FiniteText`.)"""

    def __init__(self, given: int, why: Exception) -> None:
        super().__init__(f"not streamed after item {given}: {why}")
        self.given = given


def listed_items(path: Path, key: str, on_bytes: OnBytes = None) -> Iterator[tuple[Any, str | None]]:
    """``(item, None)`` for each item of the list under ``key`` at the top of a JSON document (an Inspect AI JSON
    log's ``samples``), one at a time: memory holds one item, where a whole read holds the document (an 84 MB log:
    388 MB); its bare ``NaN`` and ``Infinity`` (Inspect's unscored samples) as a whole read reads them. A file cut
    short (in a string's escape too) or damaged gives its items before the break, then ``(None, why)``; a value the
    parser refuses but a whole read may take raises :class:`Unstreamable`. No item: the list is empty, absent or
    null. Nothing after the list is read (its NaN or its cut cost nothing: Inspect's ``reductions`` repeat each
    sample's scores)."""
    given = 0
    try:
        with Source(path, on_bytes) as src:
            for item in json_items(src, f"{key}.item", one_list=True, nonfinite=True):
                given += 1
                yield item, (TOO_DEEP if depth(item, MAX_DEPTH) > MAX_DEPTH else None)
                src.report()
            src.raw.seek(0, io.SEEK_END)  # the rest, passed over, is counted as read
    except FileNotFoundError:  # only opening it can raise this: an open file removed is still read
        yield None, GONE
    except GZIP_ERRORS as exc:
        yield None, stream_fault(exc, path, f" stream after item {given}")
    except UnicodeDecodeError as exc:
        yield None, f"not UTF-8 text after item {given}: {exc.reason}"
    except Exception as exc:  # ijson.JSONError and its incomplete-input variant
        if not any(words in str(exc) for words in _CUT_SHORT):
            raise Unstreamable(given, exc) from exc
        yield None, f"cut short: the file ends inside item {given + 1} ({str(exc).splitlines()[0]})"
_ARRAY_CUT_SHORT = "malformed JSON: cut short: the record ends inside its JSON value"


def _item(number: int, item: Any, wrap: Callable[[Any], Any] | None) -> Record:
    """The record of the ``number``-th item a parser gave: wrapped by ``wrap``, or refused as too deep."""
    if depth(item, MAX_DEPTH) > MAX_DEPTH:
        return f"record {number}", None, TOO_DEEP, None
    return f"record {number}", wrap(item) if wrap else item, None, None


#: How many items the parser, resumed after a record it could not read, must give before the next it cannot read
#: for it to be resumed again: a file of many bad records is read by the scanner alone past that, each resumption
#: costing a seek and a chunk's read (see :func:`_items_after`).
_RESUMED_FOR = 100

#: How many times the parser is resumed in a compressed or decoded file, each resumption reading its text again from
#: the first byte: past that the scanner reads the rest. A gzip array with a bad record every ~100 records was read
#: in quadratic time, 9.8 s of CPU for 32,000 records where the scanner alone took 2.6 s (review RNC4, D4).
_COSTLY_RESUMPTIONS = 3


def _items_after(src: Source, path: Path, given: int, wrap: Callable[[Any], Any] | None,
                 fault: Exception) -> Iterator[Record]:
    """The items of a top-level array after the first ``given``, once the streaming parser has stopped at one it
    could not read (``fault``): that one parsed on its own (:func:`value_texts`, :func:`told_apart`), then the
    parser resumed on the items after it. A record of a JSON array with a 5,000-digit number, a byte that is not
    UTF-8 or a bad escape lost every record after it, where a JSON Lines file loses the one line (probe 52, NC3);
    then every record after it was read by the scanner, four to six times slower than the parser: 49 s for a
    142 MB array with one bad escape in its 11th record, 11 s without it (probe 53, NC4). ``src`` is read again
    from where the parser last started (the bytes it reported are not reported again), the items it gave from there
    passed over. An array cut short is not: nothing follows the cut, and reading a 172 MB array again took five
    times the first read, at 100% (review RNC3, D3). Never silent: where the texts told apart end before the record
    the parser stopped at, the parser's own error is said (review RNC3, D1). A parser that stops again within
    :data:`_RESUMED_FOR` items is not resumed again, nor one resumed :data:`_COSTLY_RESUMPTIONS` times in a file that
    does not seek cheaply: the scanner reads the rest."""
    number, at, counted = given, 0, given  # where the parser last started, and the items it gave from there
    resumptions = 0
    try:
        while True:
            if any(words in str(fault) for words in _CUT_SHORT):
                yield f"record {number + 1}", None, _ARRAY_CUT_SHORT, None
                return
            src.rewind(at)
            ends: list[int] = []
            texts = value_texts(src.stream, inside=bool(at), ends=ends)
            last = None
            for last in itertools.islice(texts, counted):  # the records the parser gave, as the scanner cut them
                pass
            stopped_at = number
            if last is not None and parse(last, "record")[1] is not None:
                # the parser's last record and the next with no comma between them: one text to the scanner, whose
                # next text is the record after them (review RALL-A: that record was dropped without a word)
                number += 1
                yield f"record {number}", None, f"malformed JSON after record {stopped_at}: {fault}", None
            resumable = ((counted >= _RESUMED_FOR or not at)
                         and (src.seeks_cheaply or resumptions < _COSTLY_RESUMPTIONS))
            told = 0
            for number, value, error in told_apart(itertools.islice(texts, 1) if resumable else texts, 0, wrap,
                                                   first=number + 1):
                told += 1
                yield f"record {number}", value, error, None
                src.report()
            if number == stopped_at:
                yield f"record {number + 1}", None, f"malformed JSON after record {number}: {fault}", None
                return
            if not resumable or told > 1 or not ends or ends[1]:  # read to the end, out of step, or the array closed
                return
            at, counted, resumptions = at + ends[0], 0, resumptions + 1
            src.rewind(at)
            try:
                for item in json_items(src, "item", every_value=True, at=at):
                    counted += 1
                    number += 1
                    yield _item(number, item, wrap)
                    src.report()
                return
            except GZIP_ERRORS:
                raise
            except Exception as exc:  # ijson.JSONError and its incomplete-input variant, or a byte not UTF-8
                fault = exc
    except GZIP_ERRORS as exc:
        yield f"record {number + 1}", None, stream_fault(exc, path, f" stream after record {number}"), None


#: What :func:`told_apart` says, and stops at, when it can no longer tell where a value ends.
NOT_TOLD_APART = ("could not be told apart: not read (a quote in record {} is not where a JSON string can end or "
                  "start: a \\ or \" left unescaped, as in a Windows path \"C:\\work\\\"?)")


def told_apart(texts: Iterator[bytes], given: int, wrap: Callable[[Any], Any] | None = None, *,
               first: int | None = None) -> Iterator[tuple[int, Any, str | None]]:
    """``(number, value, error)`` of each of ``texts`` (:func:`value_texts`) after the first ``given``, numbered from
    ``first`` (else ``given + 1``), each value wrapped by ``wrap``. A text no parser takes costs itself alone only while the scanner that cut
    them followed its strings: a Windows path written unescaped and ending in a backslash (``"cwd": "C:\\work\\"``)
    reads as an escaped quote, the string goes on past its end and every quote after it is out of step, so the texts
    after it were fragments (259 rejections of a tau-bench dump's inner messages) or several records taken as one
    (34 runs lost, the message naming one). So after a bad text whose quotes are not where strings stand
    (:func:`_strings_in_place`), one error says the records after it are not read, and nothing more is given
    (review RNC3, D2)."""
    for number, text in enumerate(itertools.islice(texts, given, None), given + 1 if first is None else first):
        value, error = parse(text, "record")
        yield number, (wrap(value) if wrap and error is None else value), error
        if error is not None and not _strings_in_place(text):
            yield number + 1, None, f"records after record {number} " + NOT_TOLD_APART.format(number)
            return


#: A JSON string as a scanner that follows its escapes reads it; one cut short runs to the text's end.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)', re.S)


#: What may stand before a string (a comma left out: after another value, a number's last digit, true's, null's, an
#: object's or list's end: a key deleted by hand with its comma, review R2-FNC).
_BEFORE_STRING = b'{[,:"0123456789el}]'


def _strings_in_place(text: bytes) -> bool:
    """Whether every string of ``text`` (as :func:`value_texts` read them) stands where JSON has strings: after
    ``{ [ , :`` or nothing, and before ``} ] , :`` or nothing (or another value: a comma left out). A backslash before a closing quote that was meant as
    a character, or a stray quote, turns the text between two strings into one, which then stands before a word
    (``"C:\\work\\",\n "task_id"``: the "string" ``",\n "`` before ``task_id``). A bad byte, a bad escape, a long
    number, a trailing or missing comma leave every string in place: the scanner was in step."""
    for found in _STRING.finditer(text):
        before, after = found.start() - 1, found.end()
        while before >= 0 and text[before] in _SPACE:
            before -= 1
        while after < len(text) and text[after] in _SPACE:
            after += 1
        if (before >= 0 and text[before] not in _BEFORE_STRING) or (after < len(text) and text[after] not in b'}],:"'):
            return False
    return True


def lines(path: Path, cursor: tuple[int, int] | None = None, on_bytes: OnBytes = None) -> Iterator[Record]:
    """One record per non-blank line, read incrementally, from ``cursor`` (offset, line) if given; a record
    pretty-printed over several lines among them is one record (:func:`_spread_record`)."""
    offset, number = cursor or (0, 0)
    try:
        with Source(path, on_bytes) as src:
            f = src.stream
            if offset:
                _skip_to(f, offset)
            held: bytes | None = None  # a line read past a spread record's end, read next
            within = False  # whether ``held`` is the rest of the line that ended that record (``}{``)
            while raw := held if held is not None else f.readline(MAX_LINE_BYTES + 1):
                number += 0 if within else 1
                held, within = None, False
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
                value, error = parse(raw)
                if error is not None and (opened := _opened_by(raw)):
                    spread, held = _spread_record(raw, opened, f)
                    if len(spread) > 1:
                        first, number = number, number + len(spread) - 1
                        offset += sum(len(more) for more in spread[1:])
                        value, error = parse(b"".join(spread), "record")
                        position = f"lines {first}-{number}"
                        within = not spread[-1].endswith(b"\n")
                if error is not None and position == f"line {number}" and (parts := _line_parts(raw)) is not None:
                    start, (ends, items) = offset - len(raw), parts
                    del parts  # (each record is let go once given)
                    for index in range(len(items) - 1):  # a cursor mid-line: the rest of the line read again
                        item, items[index] = items[index], None
                        yield position, *_part(item), (start + ends[index], number - 1)
                    value, error = _part(items[-1])
                    del ends, items
                yield position, value, error, (offset, number - within)  # a cursor mid-line: that line read again
                src.report()
    except FileNotFoundError:  # only opening it can raise this: an open file removed is still read
        yield "file", None, GONE, None
    except GZIP_ERRORS as exc:
        yield f"line {number + 1}", None, stream_fault(exc, path, f" stream after line {number}"), None


#: A run of NUL bytes: no JSON text holds one (a string holds it as ``\u0000``). A crash leaves them where a file was
#: extended but what was written there never reached the disk (ext4's delayed allocation, NTFS), and the writer's
#: next record is appended after them, on their line (anthropics/claude-code#49876, #76059).
_NOT_NULS = re.compile(rb"[^\x00]+")
#: A line whose first bytes but JSON's whitespace are NUL bytes (a crash's zeros: see :func:`_line_parts`).
_OPENS_WITH_ZEROS = re.compile(rb"[ \t\r\n]*\x00")
#: What a scan back through a JSON value stops at (in the reversed text); a quote's backslashes, which follow it there.
_BACKWARD_TOKEN = re.compile(r'[\]\[{}"]')
_BACKSLASHES = re.compile(r"\\*")
#: How many pieces skipped together a rejection names (a hostile line of a million, one rejection: "and N more").
_NAMED = 3
#: What NUL bytes ending a stretch skipped are (before a record, or at the line's end): zeros a crash leaves. A NUL
#: inside a string (``"x\0y"``) is a writer's fault, not named so.
_ZEROS = " (zeros a crash leaves where what was written never reached the disk)"
#: What a run of NUL bytes is, among the pieces of a damaged line; what an ``{}`` or ``[]`` there is (no record has
#: nothing in it: skipped, as a whole line of it is by the adapters, not read as a record cut short).
_NUL = "NUL bytes"
_EMPTY = "an empty record"
#: The parts of a damaged line: their ends, and their records or reasons (two lists: no tuple per record).
_Parts = tuple["array[int]", list[Any]]


def _line_parts(raw: bytes) -> _Parts | None:
    """The whole records of a JSON Lines line that is no one JSON value, where they can be told without a guess, and
    what is skipped around them, in order: for each record and each stretch skipped, the byte of the line after it
    and the record, or the reason (one for each stretch, saying what its pieces are and how many records the line
    gave); None where the line holds no such record and no NUL byte a crash left (at its start or its end, space
    aside): its own parse error stands (a NUL inside a string is "Invalid control character at column N", as it says).

    Three damages of real transcripts, each a rejection of the whole line, every record on it lost: NUL bytes before
    a record (a crash's zeros, the next write appended after them: "not UTF-8 text", the zeros read as UTF-16); two
    records run together, a newline lost (``{...}{...}``: QwenLM/qwen-code#3606); a record cut short with a whole one
    written on after it (``{"type":"user","mess{...}``: the writers of one Claude Code session appending unserialised,
    anthropics/claude-code#81843; Copilot CLI's ``events.jsonl``, github/copilot-cli#4098; a Codex rollout,
    openai/codex#24425). Claude Code itself skips such a line since 2.1.121. Nothing inside a record is taken for one
    (see :func:`_text_parts`); time linear in the line's length, whatever it holds, and memory that of its records
    and a few bytes each: a stretch skipped keeps a count and the words of its first ``_NAMED`` pieces only (a line of a
    million ``\\0{`` held a tuple and a sentence for each, 290 times the line's size), and no part is a tuple (a 50 MB
    line of small records run together peaked at 1.6 GB, three times its records)."""
    size = len(raw.rstrip(b"\r\n"))  # the line without its newline (read up to it, not copied: see _pieces)
    ends, items = array("q"), []
    named: list[str] = []
    more = read = stretch_end = 0
    zeros_last = False  # the stretch ends in NUL bytes: before a record or at the line's end, a crash's zeros

    def close_stretch() -> None:
        ends.append(stretch_end)
        items.append(f"malformed line: {'; '.join(named)}{f'; and {more} more' if more else ''}"
                     f"{_ZEROS if zeros_last else ''}: skipped")

    for start, end, item in _pieces(raw, size):
        if not isinstance(item, str):
            if named:
                close_stretch()
                named, more = [], 0
            ends.append(end)
            items.append(item)
            read += 1
            continue
        if len(named) < _NAMED:
            named.append(f"{end - start} NUL byte{'s' * (end - start > 1)} at {_bytes(start, end)}" if item is _NUL
                         else f"{_bytes(start, end)}, {item.removesuffix('; rejected')}")  # TOO_DEEP: then skipped
        else:
            more += 1
        stretch_end, zeros_last = end, item is _NUL
    if named:
        close_stretch()
    if not read and not (_OPENS_WITH_ZEROS.match(raw) or raw.rstrip(_SPACE)[-1:] == b"\x00"):  # a copy: no record held
        return None
    records = f"; {f'{read} whole record' + 's' * (read > 1) if read else 'no whole record'} on this line read"
    for index, item in enumerate(items):
        if isinstance(item, str):
            items[index] = item + records
    return ends, items


def _part(item: Any) -> tuple[Any, str | None]:
    """A part of a damaged line (:func:`_line_parts`) as ``(value, error)``: a str is why it is skipped."""
    return (None, item) if isinstance(item, str) else (item, None)


def first_line_record(line: str) -> tuple[Any, str | None]:
    """``parse`` of a file's first line as :func:`lines` reads it: where that line is damaged (NUL bytes before its
    record, two records run together, a record cut short before a whole one) its first whole record, so detection
    names the format the reader then reads (a Copilot CLI or Qwen Code session whose first line a crash damaged was
    refused whole, "pass --format", where with it the record was read); else the line's own parse error."""
    value, error = parse(line)
    if error is None or error == TOO_DEEP:
        return value, error
    _, items = _line_parts(line.encode()) or ((), ())
    return next(((item, None) for item in items if not isinstance(item, str)), (None, error))


def _pieces(line: bytes, size: int) -> Iterator[tuple[int, int, Any]]:
    """The pieces of a damaged line's first ``size`` bytes in order, by their bytes: ``(start, end, record)``, or
    ``(start, end, what)`` for a piece skipped (``_NUL`` for a run of NUL bytes). Each stretch between NUL bytes is
    decoded from the line itself, not from a copy of its bytes."""
    at = 0
    for chunk in _NOT_NULS.finditer(line, 0, size):
        if chunk.start() > at:
            yield at, chunk.start(), _NUL
        yield from _chunk_parts(line, chunk.start(), chunk.end())
        at = chunk.end()
    if size > at:
        yield at, size, _NUL


def _bytes(start: int, end: int) -> str:
    """Where a piece of a line is, in bytes from 1 (a column of json's counts characters: these are not columns)."""
    return f"bytes {start + 1}-{end}" if end - start > 1 else f"byte {end}"


def _chunk_parts(line: bytes, start: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """The parts of ``line[start:end]``, a stretch of a line between NUL bytes, placed by their bytes in ``line``."""
    try:
        text = str(memoryview(line)[start:end], "utf-8")
    except UnicodeDecodeError:
        yield start, end, "not UTF-8 text"
        return
    if not text.strip(_TEXT_SPACE):
        return
    found = _text_parts(text)
    if found is None:
        yield start, end, "no whole record"
        return
    for a, b, item in _in_bytes(text, found):
        yield start + a, start + b, item


def _in_bytes(text: str, parts: Iterator[tuple[int, int, Any]]) -> Iterator[tuple[int, int, Any]]:
    """``parts`` of ``text`` placed by its UTF-8 bytes, not its characters (counted in one pass: they are in order)."""
    if text.isascii():
        yield from parts
        return
    char = byte = 0
    for a, b, item in parts:
        byte_a = byte + len(text[char:a].encode("utf-8"))
        byte, char = byte_a + len(text[a:b].encode("utf-8")), b
        yield byte_a, byte, item


def _text_parts(text: str) -> Iterator[tuple[int, int, Any]] | None:
    """The parts of one stretch of a line, no NUL in it, that holds whole JSON records and is no one JSON value,
    ``(start, end, record or why it is skipped)``: the records at its start one after another (``{...}{...}``, read
    by :func:`_values`), then a fragment skipped (``a record cut short``) and the records at its end after it; None
    where none can be taken without a guess. Each is a non-empty object or array, as records are (an empty one, and
    one too deep, is a piece skipped, named so), and:

    - one at the start only where what follows it opens another (``{``, ``[``) or nothing: ``{"a": 1} and more"}``
      is a line of a string a writer broke with raw newlines (Copilot CLI's tool output, github/copilot-cli#2649),
      its ``{"a": 1}`` that string's text;
    - one at the end only after a fragment that opens as a record does, is JSON as far as it goes, and cannot go on
      with it: ``{"a": {"b": 1}`` may be a record cut after its member ``{"b": 1}``, and a fragment damaged
      otherwise (a ``\\`` unescaped) says nothing of where its record ends (:func:`_apart`).

    The records at the start are all read before any is given (text after the last makes them a string's), and held
    as two lists, their ends and values."""
    ends, items = array("q"), []
    at, deep = len(text), False
    for start, end, value, error in _values(text):
        if end is None or (error is None and not isinstance(value, (dict, list))):
            at, deep = start, error == TOO_DEEP  # deeper than Python's parser goes: where it ends is not known
            break
        following = _space_after(text, end)
        if following < len(text) and text[following] not in "{[":
            return None
        ends.append(end)
        items.append(error or value or _EMPTY)
    if at == len(text):
        return _leading(text, ends, items) if ends else None
    if text[at] not in "{[":
        return None
    tail = () if deep else _records_at_end(text, at)
    if not tail and not ends:
        return None
    cut = tail[0][0] if tail else len(text)
    what = TOO_DEEP if deep else "a record cut short" + (", the next one written on after it" if tail else "")
    return itertools.chain(_leading(text, ends, items), [(at, _space_before(text, cut), what)], tail)


def _leading(text: str, ends: "array[int]", items: list[Any]) -> Iterator[tuple[int, int, Any]]:
    """The records at the start of ``text`` (:func:`_text_parts`), each placed from the end of the one before it."""
    at = 0
    for end, item in zip(ends, items):
        yield _space_after(text, at), end, item
        at = end


def _space_after(text: str, at: int) -> int:
    """Where the JSON whitespace (or byte-order marks: a file's own, a concatenated one's) at ``at`` ends."""
    while at < len(text) and text[at] in _TEXT_SPACE:
        at += 1
    return at


def _space_before(text: str, at: int) -> int:
    """Where the JSON whitespace (or byte-order marks) that ends at ``at`` starts."""
    while at > 0 and text[at - 1] in _TEXT_SPACE:
        at -= 1
    return at


def _records_at_end(text: str, fragment: int) -> list[tuple[int, int, Any]]:
    """The whole records, one after another, that end ``text`` after the fragment that opens at ``fragment``, as
    :func:`_text_parts` takes them: found from the end back (:func:`_opening`), each parsed once."""
    found: list[tuple[int, int, Any]] = []
    backward = text[::-1]
    end = _space_before(text, len(text))
    while (start := _opening(backward, end)) is not None and start > fragment:
        value, error = parse(text[start:end], "record")
        if error is not None or not (isinstance(value, (dict, list)) and value):
            break
        found.append((start, end, value))
        end = _space_before(text, start)
    found.reverse()
    for index, (start, end, _) in enumerate(found[:2]):  # (a second may be the first's: see _apart)
        apart = _apart(text[fragment:end], start - fragment)
        if apart is None:
            return []
        if apart:
            return found[index:]
    return []


def _apart(text: str, cut: int) -> bool | None:
    """Whether the fragment ``text[:cut]`` (a record's opening) and the record ``text[cut:]`` after it are two: True
    where together they are no start of any JSON text, the fault at or after the cut; False where they may be one
    record's start (JSON as far as they go: the fragment cut just before its member, or inside a string that the
    record, holding no quote, may be the text of: only the first two records after a fragment are tried, so a run of
    them is not parsed again and again); None where the fragment is faulty before the cut (or too deep, or holds a
    number too long): where its record ends cannot be told."""
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if _cut_short(exc):
            return False
        return True if exc.pos >= cut else None
    except (ValueError, RecursionError):
        return None
    return False


def _opening(backward: str, end: int) -> int | None:
    """Where the JSON object or array that ends just before ``end`` of a text opens, found back from its last bracket
    through its strings (``backward``: the text reversed, scanned forward), else None (no bracket ends there, or
    none opens it)."""
    at = len(backward) - end  # the last character, in the reversed text
    if at >= len(backward) or backward[at] not in "}]":
        return None
    level = 0
    while (token := _BACKWARD_TOKEN.search(backward, at)) is not None:
        at = token.end()
        if token.group() == '"':  # back to the quote that opens the string (one with an even run of backslashes)
            while (at := backward.find('"', at) + 1) and (len(_BACKSLASHES.match(backward, at).group()) % 2):
                pass
            if not at:
                return None
            continue
        level += 1 if token.group() in "}]" else -1
        if level == 0:
            return len(backward) - at
    return None


#: All a line's bytes but its quotes and brackets: what counting its brackets outside strings deletes (its escapes
#: first: see :func:`_depth_change`); and a string of the rest, holding brackets.
_NOT_COUNTED = bytes(sorted(set(range(256)) - set(b'"[]{}')))
_BRACKETS_STRING = re.compile(rb'"[^"]*"')


def _depth_change(raw: bytes) -> int | None:
    """How many more brackets ``raw`` (one line) opens than it closes, outside its strings; None where the line ends
    inside a string, which no line of a pretty-printed value does (a record a writer stopped mid-string).

    Its escapes taken out (``\\\\``, then ``\\"``), and all but its quotes and brackets, each string of no bracket
    is ``""`` and taken out too (two quotes that follow each other are an empty string or one closing and one
    opening: without them every other quote still opens or closes as it did, and every bracket is in or out of a
    string as it was). What is left is short (a line's brackets, its strings that hold some): a line's strings
    taken out with a regex held a piece for each gap between two (``{``, ``:``), 30 times the line (a 50 MB line of
    small records run together: 1.5 GB). A ``\\`` outside a string, which only a damaged line holds (one cut
    mid-string, a record after it), is taken for an escape too: the count there is a guess either way, and it decides
    whether a spread is tried and where one stops (:func:`_spread_record`)."""
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    left = raw.translate(None, _NOT_COUNTED).replace(b'""', b"")
    if left.count(b'"') % 2:
        return None
    bare = _BRACKETS_STRING.sub(b"", left) if b'"' in left else left
    return bare.count(b"{") + bare.count(b"[") - bare.count(b"}") - bare.count(b"]")


def _opened_by(raw: bytes) -> int:
    """How deep a line that is no whole JSON value leaves a record it starts (``{``, jq's and ``indent=``'s first
    line of a pretty-printed object), else 0."""
    if not raw.lstrip(_SPACE).startswith((b"{", b"[")):
        return 0
    return max(_depth_change(raw) or 0, 0)


def _spread_record(raw: bytes, depth: int, f: IO[bytes]) -> tuple[list[bytes], bytes | None]:
    """The lines of a record pretty-printed into a JSON Lines file (``jq . run.json >> runs.jsonl``, a loop writing
    one run with ``indent=2``), from its first line ``raw`` (which leaves it ``depth`` brackets deep) to the line
    that closes it, and the line read past them, if any, to be read next. Each of its lines was a record of its own:
    ~20 rejections ("Extra data", "cut short"), the run lost (probe 53, NC4). A line that is a whole JSON object at
    the start of its line, or one that ends inside a string, is no part of it: a record a writer stopped mid-way
    before whole ones stays the one line (its lines so far are returned; the caller rejects them as one). A record
    of more than ``MAX_LINE_BYTES`` stops there too. A line that closes it and opens the next (``}{``: ``json.dump(run,
    f, indent=2)`` in a loop writing no newline) ends it after its first character, the rest returned as the line to
    read next: the two were one rejection "lines 2-48 Extra data", both runs lost (review RNC4, Q3).

    So does a line that opens a value at its first column, in a record indented as every writer but ``indent=0``
    indents: the start of the next record (a compact line, or jq's ``{``). A line cut short outside a string
    (``..."steps": [``) took the pretty records after it for its rest, one rejection "lines 2-50" naming neither
    the cut line nor them, both runs lost; or the next line's own fault ("a number too long") for the cut line's
    (review RNC4, D5)."""
    spread, size = [raw], len(raw)
    indented = raw.strip(_SPACE) not in (b"{", b"[")  # a compact line's rest, or an indenting writer's lines
    while depth > 0 and size <= MAX_LINE_BYTES and (line := f.readline(MAX_LINE_BYTES + 1)):
        change = _depth_change(line)
        if change is None or line.startswith(b"\x00") or (line.startswith((b"{", b"["))
                                                            and (indented or _whole_object(line))):
            return spread, line  # (NUL bytes: a crash's zeros before the next record, see _line_parts)
        if depth == 1 and line.startswith((b"}", b"]")) and line[1:].lstrip(_SPACE).startswith((b"{", b"[")):
            spread.append(line[:1])
            return spread, line[1:]
        indented = indented or line.startswith((b" ", b"\t"))
        spread.append(line)
        size += len(line)
        depth += change
    return spread, None


def _whole_object(line: bytes) -> bool:
    """Whether ``line`` is a whole JSON object with a member: a record of its own, never a line inside another record
    pretty-printed (whose objects with members span lines, at any indent); a lone ``{`` line before whole records took
    them for its rest, one rejection, every one of them lost (the fuzz test's ``lines=['{']``)."""
    value, error = parse(line)
    return error is None and isinstance(value, dict) and bool(value)


def _skip_to(stream: IO[bytes], offset: int) -> None:
    """To byte ``offset`` of the text: a seek, or for a decoded UTF-16 file (see :class:`_Utf8FromUtf16`) a read."""
    if stream.seekable():
        stream.seek(offset)
        return
    while offset > 0 and (chunk := stream.read(min(offset, 1 << 20))):
        offset -= len(chunk)


_OTLP_OBJECT = re.compile(r'\{\s*"(?:resourceSpans|resourceLogs)"')
#: Grafana Tempo's trace JSON, what its ``/api/traces/<id>`` returns and Grafana's trace view exports.
_TEMPO_OBJECT = re.compile(r'\{\s*"batches"\s*:\s*\[\s*\{\s*"resource"')
#: The top-level lists of a file that is one OTLP request (its spans, then its log records: they are joined to
#: their spans later) or one Tempo trace, each item rewrapped as a request of one.
_OTLP_LISTS: dict[str, Callable[[Any], Any] | None] = {
    "resourceSpans.item": lambda rs: {"resourceSpans": [rs]},
    "resourceLogs.item": lambda rl: {"resourceLogs": [rl]},
}
_TEMPO_LISTS: dict[str, Callable[[Any], Any] | None] = {"batches.item": lambda rs: {"resourceSpans": [rs]}}


def spans_envelope(head: str) -> bool:
    """Whether a file's head opens an OTLP request or a Tempo trace: a file of spans, whatever other formats' words
    its spans carry (a traced agent's prompt, a converted session)."""
    text = head.lstrip(_TEXT_SPACE)
    return bool(_OTLP_OBJECT.match(text) or _TEMPO_OBJECT.match(text))


def _big_object_lists(head: str) -> dict[str, Callable[[Any], Any] | None] | None:
    """The lists to stream of a file of OTLP requests or Tempo traces whose first one is pretty-printed or one line
    longer than the peek (one huge request, or the first of several); None for any other file."""
    if not head.startswith("{") or (first_line_is_json(head) and (len(head) < PEEK_BYTES or "\n" in head)):
        return None
    if _OTLP_OBJECT.match(head):
        return _OTLP_LISTS
    return _TEMPO_LISTS if _TEMPO_OBJECT.match(head) else None


def records(path: Path, cursor: tuple[int, int] | None = None, on_bytes: OnBytes = None) -> tuple[Iterator[Record], bool]:
    """The records of one file by its shape, and whether ``cursor`` was honoured (only JSONL can seek)."""
    head = peek(path).lstrip(_TEXT_SPACE)
    if is_jsonl(head):
        return lines(path, cursor, on_bytes), True
    if head.startswith("["):
        return streamed(path, "item", None, on_bytes), False
    if (lists := _big_object_lists(head)) is not None:
        return streamed_lists(path, lists, on_bytes), False
    if pretty_printed(head):
        return loaded_values(path, on_bytes), False  # pretty-printed object(s)
    return lines(path, cursor, on_bytes), True


#: A zip member's local header (APPNOTE 4.3.7): signature, version, flags, method, time, date, CRC-32, sizes, name
#: and extra field lengths.
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_MAGIC = b"PK\x03\x04"
#: How a zip archive opens: its first member's local header, or (holding none) its end of central directory.
ZIP_MAGIC = (_LOCAL_MAGIC, b"PK\x05\x06")
#: The compression methods a member is read in (APPNOTE 4.4.5): stored, deflated, and Zstandard, which Inspect AI
#: writes its ``.eval`` logs in and Python's ``zipfile`` reads only from 3.14.
_ZIP_METHODS = {0: "stored", 8: "deflated", 93: "zstd"}
#: The most a zip member is read up to, decompressed: a member over it is a rejection of its own (as a line over
#: ``MAX_LINE_BYTES`` is), not a memory error that stops the ingest (a zip bomb: 4 MB of zip holding 4 GB). Real
#: Inspect AI samples are far below it (the largest of 44 real agent logs: 2.6 MB).
MAX_MEMBER_BYTES = 1 << 30
#: What ``zipfile`` raises for a damaged archive besides ``BadZipFile`` (a flipped byte in its directory: "zip file
#: version 19.9" is a NotImplementedError, a bad name a UnicodeDecodeError, a short field a struct.error, ...).
_ZIP_DAMAGE = (zipfile.BadZipFile, NotImplementedError, ValueError, EOFError, struct.error, OverflowError)


@dataclass(frozen=True)
class _Member:
    name: str
    method: int
    offset: int  # of its local header
    size: int  # compressed
    length: int  # decompressed
    crc: int


def is_zip(path: Path) -> bool:
    """Whether a file's first bytes are a zip archive's."""
    try:
        with open(path, "rb") as f:
            return f.read(4) in ZIP_MAGIC
    except OSError:
        return False


class ZipMembers:
    """A zip archive's members, each read whole when asked (:meth:`read`), so that memory holds one member at a time.

    The members are listed from the archive's central directory; an archive cut short (a copy or a download that
    stopped, an eval killed while writing) has none, and is listed from the members' own headers, from the first on,
    up to the first that is not whole: ``damage`` then says so; so is one whose directory is damaged. Whatever a
    damaged archive makes ``zipfile`` raise is a ``BadZipFile`` here, naming the damage: when no member can be
    listed, and from :meth:`read` for a member that cannot be read."""

    def __init__(self, path: Path) -> None:
        self.path, self.damage = path, None
        self._size = path.stat().st_size
        try:
            with zipfile.ZipFile(path) as archive:
                self._members = {i.filename: _Member(i.filename, i.compress_type, i.header_offset, i.compress_size,
                                                     i.file_size, i.CRC) for i in archive.infolist() if not i.is_dir()}
        except _ZIP_DAMAGE as exc:
            why = f"{type(exc).__name__}: {exc}" if not isinstance(exc, zipfile.BadZipFile) else str(exc)
            self._members = self._salvaged()
            if not self._members:
                raise zipfile.BadZipFile(f"not a zip archive, or one cut short or damaged before its first whole "
                                         f"member ({why})") from None
            self.damage = (f"a zip archive cut short or damaged (its central directory unread: {why}); its first "
                           f"{len(self._members)} whole member(s) were read, the rest is lost")

    @property
    def names(self) -> list[str]:
        return list(self._members)

    def read(self, name: str) -> bytes:
        """A member's bytes, decompressed (never past the size the archive gives it, nor past ``MAX_MEMBER_BYTES``)
        and checked against its CRC-32; ``BadZipFile`` saying why they cannot be (cut short, damaged, too big, a
        compression method not read)."""
        member = self._members[name]
        if member.method not in _ZIP_METHODS:
            raise zipfile.BadZipFile(f"{name}: compression method {member.method} is not read (only "
                                     f"{', '.join(_ZIP_METHODS.values())})")
        if member.length > MAX_MEMBER_BYTES:
            raise zipfile.BadZipFile(f"{name}: {member.length} bytes decompressed, over the "
                                     f"{MAX_MEMBER_BYTES / (1 << 30):g} GiB a member is read up to; skipped")
        with open(self.path, "rb") as f:
            f.seek(member.offset)
            header = f.read(_LOCAL_HEADER.size)
            if len(header) < _LOCAL_HEADER.size or header[:4] != _LOCAL_MAGIC:
                raise zipfile.BadZipFile(f"{name}: no member header where the archive's directory puts it")
            *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
            start = f.seek(name_length + extra_length, io.SEEK_CUR)
            if start + member.size > self._size:  # checked before its bytes are read: a damaged size asks for GBs
                raise zipfile.BadZipFile(f"{name}: cut short or damaged (its {member.size} bytes run past the "
                                         f"archive's end, {self._size - start} after its header)")
            packed = f.read(member.size)
        try:
            data = _unpacked(packed, member.method, member.length + 1)  # a byte more tells a member longer than said
        except (zlib.error, ZstdError, EOFError) as exc:
            raise zipfile.BadZipFile(f"{name}: damaged {_ZIP_METHODS[member.method]} data ({exc})") from None
        if len(data) != member.length:
            raise zipfile.BadZipFile(f"{name}: damaged ({'more than' if len(data) > member.length else 'only'} "
                                     f"{min(len(data), member.length)} bytes decompressed, where the archive says "
                                     f"{member.length})")
        if zlib.crc32(data) != member.crc:
            raise zipfile.BadZipFile(f"{name}: damaged (its CRC-32 does not match)")
        return data

    def _salvaged(self) -> dict[str, _Member]:
        """The whole members of an archive without its central directory, read from their local headers in order:
        up to the first cut short, or one whose sizes its header leaves to a data descriptor after it (a streamed
        write), which cannot be found without the directory."""
        members: dict[str, _Member] = {}
        size = self._size  # the size __init__ read: one size of the archive, though it grows (an eval writing)
        with open(self.path, "rb") as f:
            while (header := f.read(_LOCAL_HEADER.size))[:4] == _LOCAL_MAGIC and len(header) == _LOCAL_HEADER.size:
                _, _, flags, method, _, _, crc, packed, length, name_length, extra_length = _LOCAL_HEADER.unpack(header)
                offset = f.tell() - _LOCAL_HEADER.size
                name = f.read(name_length).decode("utf-8" if flags & 0x800 else "cp437", "replace")
                extra = f.read(extra_length)
                if packed == 0xFFFFFFFF or length == 0xFFFFFFFF:  # zip64: the sizes are in the extra field
                    length, packed = _zip64_sizes(extra) or (None, None)
                if flags & 0x8 or packed is None or f.tell() + packed > size:
                    break
                members[name] = _Member(name, method, offset, packed, length, crc)
                f.seek(packed, io.SEEK_CUR)
        return members


def _zip64_sizes(extra: bytes) -> tuple[int, int] | None:
    """The sizes in a local header's zip64 extra field (decompressed, then compressed), else None."""
    at = 0
    while at + 4 <= len(extra):
        kind, length = struct.unpack_from("<HH", extra, at)
        if kind == 1 and length >= 16:
            return struct.unpack_from("<QQ", extra, at + 4)
        at += 4 + length
    return None


def _unpacked(packed: bytes, method: int, most: int) -> bytes:
    """A member's data decompressed, up to ``most`` bytes (what is past them is not made, whatever it claims: a zip
    bomb costs no more than its size said). A Zstandard member may be several frames (Inspect AI starts one every
    200 MiB of a member)."""
    if method == 0:
        return packed if len(packed) <= most else packed[:most]
    if method == 8:
        return zlib.decompressobj(-15).decompress(packed, most)
    frames: list[bytes] = []
    made = 0
    while packed and made < most:
        frame = ZstdDecompressor()
        frames.append(frame.decompress(packed, most - made))
        made += len(frames[-1])
        if not frame.eof:  # at ``most``, or cut short
            break
        packed = frame.unused_data
    return b"".join(frames)
