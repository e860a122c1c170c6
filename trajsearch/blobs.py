"""Encoded blobs in a run's text, told and replaced by a short placeholder naming what they were.

Agents' tool outputs and arguments carry images and files as base64: data URIs (``data:image/png;base64,...``,
alone, in a markdown image, in OpenAI's ``image_url``), the ``data`` of a typed content part (Anthropic's
``{"type": "image", "source": {"type": "base64", ...}}``), a screenshot a browser or computer-use tool printed
bare. Not one word of it is searchable, yet indexed as it stands it fills a step row's kept head and tail, the
lexical leg's terms and the window's vector (a 64x64 PNG is 2,568 characters, a screenshot hundreds of thousands).
:func:`without_blobs` puts ``[image/png, 48 KB base64]`` in its place, so the text around it is what is indexed.

Only what is clearly an encoded blob goes: a data URI whose payload is at least :data:`MIN_URI_PAYLOAD` characters,
or a run of the base64 alphabet at least :data:`MIN_RUN` characters long with no space in it that mixes upper and
lower case letters and digits and is base64 by its content: its first bytes are a known file's (a PNG's, a PDF's, a
WAV's) or text (a PEM, a Secret's value, PowerShell's UTF-16 ``-EncodedCommand``), or it reads as random bytes encoded
(:func:`_looks_random`: at least :data:`MIN_SYMBOLS` of the 64 symbols, its 8-character pieces hardly ever repeated) or
as uncompressed ones (:func:`_looks_raw`: audio's silence, a raw pixel buffer). A git SHA (short), a hex digest
(one case of letters, 22 symbols), a JWT (its segments dotted), minified code (punctuated), a long word and a long
identifier (``Handler0Factory...``: few symbols, pieces repeated) are none of these. Base64 wrapped in lines of one
width (``base64`` at its default of 76 columns, MIME, PEM) is one run. A blob ingest clipped
(``[... N characters clipped ...]`` in its middle) is two runs, each replaced. Slashes JSON escaped (``\\/``, as PHP's
``json_encode`` writes them) are read as slashes, in a data URI and a bare run. A message's image part is named the
same way (:func:`image_placeholder`).
"""

from __future__ import annotations

import base64
import codecs
import re
from typing import Any

#: Shortest payload of a data URI replaced (a tiny inline icon is left as it is: it costs the index little).
MIN_URI_PAYLOAD = 100
#: Shortest bare run of base64 replaced: far longer than any identifier, hash or token a run's text names.
MIN_RUN = 1_000

#: A media type (``image/png``), its slash JSON escaped or not: what a data URI and a part name a blob by.
_TYPE = r"[\w.+-]{1,100}+\\?/[\w.+-]{1,100}+"
#: Each part bounded and possessive (a type's names and a parameter's name and value at most 100 characters, at most 4
#: parameters), so a match tried from any ``data:`` reads a bounded stretch: an output of ``![](data:x;base64,`` left
#: open 60,000 times, or of ``data:image/png;a=`` repeated, reads in linear time.
_URI = re.compile(rf"data:({_TYPE})?(?:;[\w.+-]{{1,100}}+=[^;,\s\"')]{{0,100}}+){{0,4}}+;base64,"
                  rf"((?:[A-Za-z0-9+/_-]|\\/){{{MIN_URI_PAYLOAD},}}+=*+)")
#: A media type as a part names it: what else a part says there is not put in a row.
_MEDIA_TYPE = re.compile(_TYPE)
#: Fewest distinct symbols in a bare run's first :data:`SAMPLE` characters that random bytes encoded show (1,000 of
#: them miss one of the 64 once in 10^5; hex has 22, the CamelCase identifiers and UUID lists tried fewer than 40).
MIN_SYMBOLS = 48
#: How much of a bare run its content is judged by (a screenshot's run is hundreds of thousands of characters).
SAMPLE = 4_096
#: A run is whole (possessive: never a shorter part of a longer one) and no segment of a dotted token (a JWT's
#: payload can pass 1,000 characters). Its ``\/`` are JSON's escaped slashes; a run starts at none of their ``/``
#: (else each ``\/`` of a run just short of :data:`MIN_RUN` starts a re-reading of the rest: 13 MB of them 35 s).
_RUN = re.compile(rf"(?<![A-Za-z0-9+/_.-])(?!(?<=\\)/)(?:[A-Za-z0-9+/_-]|\\/){{{MIN_RUN},}}+=*+(?!\.[A-Za-z0-9_-])")
#: Base64 wrapped in lines (GNU ``base64`` prints 76 columns, MIME 76, PEM 64): at least 10 lines of 60 to 76 symbols
#: (:func:`_wrapped_placeholder` asks them to be of one width), and a last one, shorter or padded.
_WRAPPED = re.compile(r"(?m)^(?:[A-Za-z0-9+/]{60,76}+\r?\n){9,}+(?:[A-Za-z0-9+/]{1,76}+=*+(?:\r?\n|$))?")
#: A file's first bytes -> its media type: what a bare run is named by (a data URI names its own).
_MAGIC = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
          (b"%PDF-", "application/pdf"), (b"PK\x03\x04", "application/zip"), (b"\x1f\x8b", "application/gzip"),
          (b"BM", "image/bmp"), (b"OggS", "audio/ogg"), (b"fLaC", "audio/flac"), (b"ID3", "audio/mpeg"))
#: A RIFF file's form type -> its media type (a ``.wav``'s PCM, however uncompressed, starts so).
_RIFF = {b"WEBP": "image/webp", b"WAVE": "audio/wav"}


def without_blobs(value: Any) -> Any:
    """``value`` (a text, or JSON: a tool's arguments) with each encoded blob replaced by its placeholder; ``value``
    itself, the same object, where it holds none, so a caller tells a change by identity."""
    if isinstance(value, str):
        if len(value) < MIN_URI_PAYLOAD or ("base64," not in value and len(value) < MIN_RUN):
            return value
        text = _WRAPPED.sub(_wrapped_placeholder, _RUN.sub(_run_placeholder, _URI.sub(_uri_placeholder, value)))
        return value if text == value else text
    if isinstance(value, dict):
        items = {key: without_blobs(item) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    if isinstance(value, list):
        found = [without_blobs(item) for item in value]
        return value if all(new is old for new, old in zip(found, value)) else found
    return value


def placeholder(media_type: str, chars: int) -> str:
    """What stands for a blob of ``chars`` base64 characters of ``media_type``."""
    return f"[{media_type}, {max(round(chars / 1024), 1):,} KB base64]"


def image_placeholder(part: dict[str, Any]) -> str:
    """What stands for a message's image content part: its :func:`placeholder` where the part holds the image's base64
    (Anthropic's ``source``, MCP's ``data`` and ``mimeType``, Gemini's ``inlineData``, OpenAI's data URI in
    ``image_url``), the same words a blob in text gets; ``[image]`` where it holds none (a URL, a file's path) or too
    little to be worth naming (under :data:`MIN_URI_PAYLOAD` characters, as a data URI in text)."""
    url = part.get("image_url")
    url = url.get("url") if isinstance(url, dict) else url
    if isinstance(url, str) and (match := _URI.match(url)):
        return _uri_placeholder(match)
    source = next((s for s in (part.get("source"), part.get("inlineData")) if isinstance(s, dict)), part)
    data, media_type = source.get("data"), source.get("media_type") or source.get("mimeType")
    if isinstance(data, str) and len(data) >= MIN_URI_PAYLOAD and _decoded(data[:64]) is not None:
        named = isinstance(media_type, str) and _MEDIA_TYPE.fullmatch(media_type)
        return placeholder(_unescaped(media_type) if named else _sniffed(data) or "image", len(data))
    return "[image]"


def _uri_placeholder(match: re.Match[str]) -> str:
    payload = _unescaped(match[2])
    return placeholder(_unescaped(match[1] or "") or _sniffed(payload) or "data", len(payload))


def _run_placeholder(match: re.Match[str]) -> str:
    run = _unescaped(match[0])
    kind = _kind(run)
    return placeholder(kind, len(run)) if kind else match[0]


def _unescaped(text: str) -> str:
    """``text`` with its slashes as they were before JSON escaped them (``\\/``: PHP's ``json_encode``, a tool's output
    that is itself JSON, logged as JSON again)."""
    return text.replace("\\/", "/")


def _wrapped_placeholder(match: re.Match[str]) -> str:
    """A block of base64 lines wrapped at one width (the last shorter) as one run; its line break kept.

    A shorter last line is the block's only where the run then ends on a multiple of 4 characters, as GNU
    ``base64``, MIME and PEM pad it: else it is a line printed next to the block (``0``, ``FAILED`` after an image
    whose every line is full, 1 in 57 of them), kept as text (review RT3, 4). A word of 4 characters (``Done``,
    ``exit``) there cannot be told from the block's end and goes with it."""
    block = match[0]
    lines = block.splitlines()
    if len(lines[-1]) < len(lines[0]) and sum(map(len, lines)) % 4:
        last = block.rstrip("\r\n").rfind("\n") + 1
        return _wrapped(block[:last]) + block[last:]
    return _wrapped(block)


def _wrapped(block: str) -> str:
    """:func:`_wrapped_placeholder` of a ``block`` whose last line is the run's."""
    lines = block.splitlines()
    run = "".join(lines)
    if len(run) < MIN_RUN or len({len(line) for line in lines[:-1]}) > 1 or len(lines[-1]) > len(lines[0]):
        return block
    kind = _kind(run)
    return placeholder(kind, len(run)) + block[len(block.rstrip("\r\n")):] if kind else block


def _kind(run: str) -> str | None:
    """What the base64 ``run`` (no data URI to name it) holds, by its content; None where it is not clearly base64."""
    if not (re.search("[A-Z]", run) and re.search("[a-z]", run) and re.search("[0-9]", run)):
        return None  # one case of letters: hex, a word repeated
    head = _decoded(run[:SAMPLE])
    if head is None:
        return None
    return _sniffed(run) or _text_kind(head) or ("data" if _looks_random(run[:SAMPLE]) or _looks_raw(head) else None)


def _text_kind(head: bytes) -> str | None:
    """``"PEM"`` or ``"text"`` where the decoded ``head`` is printable text, UTF-8 or UTF-16 (a certificate, a Secret's
    value, a JSON encoded): what the row names it, the text itself is not indexed (the run never showed it in clear)."""
    text = codecs.getincrementaldecoder(_text_encoding(head))("strict")
    try:
        shown = text.decode(head[:768])  # a character cut at the end waits, unread
    except UnicodeDecodeError:
        return None
    if len(shown) < 64 or not all(c.isprintable() or c in "\n\r\t" for c in shown):
        return None
    return "PEM" if shown.startswith("-----BEGIN") else "text"


def _text_encoding(head: bytes) -> str:
    """The encoding the decoded ``head`` reads in, if text: UTF-16 where it opens with a byte order mark (.NET's and
    Windows' "Unicode" files) or every second byte is 0, as in ASCII's characters (little-endian: PowerShell's
    ``-EncodedCommand``); else UTF-8, a byte order mark skipped."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    if head[0:768:2].count(0) > 0.9 * len(head[0:768:2]):
        return "utf-16-be"
    return "utf-16-le" if head[1:768:2].count(0) > 0.9 * len(head[1:768:2]) else "utf-8-sig"


def _looks_random(sample: str) -> bool:
    """Whether ``sample`` reads as random bytes (compressed, encrypted) in base64: nearly all 64 symbols, and its
    8-character pieces nearly all different (a long identifier repeats its words: ``Handler1Factory``)."""
    if len(set(sample)) < MIN_SYMBOLS:
        return False
    pieces = [sample[i:i + 8] for i in range(0, len(sample) - 7, 4)]
    return len(set(pieces)) >= 0.95 * len(pieces)


def _looks_raw(head: bytes) -> bool:
    """Whether the decoded ``head`` reads as uncompressed bytes with no header (a raw pixel buffer, audio samples, an
    array of integers): a tenth or more of them 0x00 or 0xFF (black and white, silence, a number's high bytes).
    The words of a long identifier decode to one of these about once in 100 bytes; the most of the 2,831 runs of 300
    or more mixed-case symbols on this machine that decode and are not sniffed, text or random: 1 in 15.4 (6.5%, the
    Cython-mangled symbols of scikit-learn's ``_argkmin``, whose ``__`` before a digit decodes to 0xFF)."""
    return head.count(0) + head.count(255) >= len(head) / 10


def _decoded(run: str) -> bytes | None:
    """The bytes of the base64 (standard or URL-safe, not both) ``run``, its tail past a multiple of 4 left out
    (a run clipped in its middle ends anywhere); None where it is no base64."""
    body = run.rstrip("=")
    if ("+" in body or "/" in body) and ("-" in body or "_" in body):
        return None
    body = body[: len(body) // 4 * 4]
    try:
        return base64.b64decode(body, altchars=b"-_" if "-" in body or "_" in body else None, validate=True)
    except ValueError:  # binascii.Error is one
        return None


def _sniffed(payload: str) -> str | None:
    """The media type the first bytes of the base64 ``payload`` show, if one of :data:`_MAGIC`'s."""
    head = _decoded(payload[:64]) or b""
    if head[:4] == b"RIFF" and head[8:12] in _RIFF:
        return _RIFF[head[8:12]]
    return next((kind for magic, kind in _MAGIC if head.startswith(magic)), None)
