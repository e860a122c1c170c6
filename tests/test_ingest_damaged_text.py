"""Damaged dump files cost what they damage, not the whole job (review 1 of round p42, F0 and F6).

Every file here is a real Claude Code session, ``claude-code/1af7fc5e-...jsonl`` (see ``claude-code/SOURCE.md``),
saved as the damage leaves it:

- a gzip whose writer died before its first flush (the 10-byte header, or a few bytes more) or whose first block
  is corrupt: with ``--format`` (no detection to refuse it first) it aborted the whole ingest ("Aborted.", an
  ``EOFError`` out of the reader) and every other input was lost; it is one rejected file, as before b70bc17;
- UTF-16 (PowerShell's ``>``) cut by one byte (a copy of a live session) or holding one bad code unit: the strict
  decoder lost the rest of the 64 Ki-character chunk holding the fault (a small file: all of it, refused as "not
  valid UTF-16"); now it loses what the same fault loses in UTF-8: the one damaged line.
"""

from __future__ import annotations

import codecs
import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest

from trajsearch.ingest.read import read_dump

SESSION = Path(__file__).parent / "fixtures" / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


def verdicts(path: Path, fmt: str | None = None) -> list[tuple[str, Any]]:
    """Every verdict of a path, by file name: its run (as a dict) or its error."""
    return [(Path(p.source).name, p.trajectory.model_dump(mode="json") if p.trajectory else p.error)
            for p in read_dump(path, fmt=fmt)]


def session_copy(folder: Path) -> Path:
    folder.mkdir(exist_ok=True)
    return Path(shutil.copy(SESSION, folder / SESSION.name))


def broken_gzips(folder: Path) -> list[Path]:
    """The session gzipped, then cut to the header (``a_``), a few bytes past it (``b_``), its first block
    overwritten (``c_``)."""
    folder.mkdir(exist_ok=True)
    whole = gzip.compress(SESSION.read_bytes())
    damaged = {"a_header_only": whole[:10], "b_cut_in_first_block": whole[:12],
               "c_corrupt_first_block": whole[:10] + b"\xff" * 50 + whole[60:]}
    paths = []
    for name, data in damaged.items():
        path = folder / f"{name}.jsonl.gz"
        path.write_bytes(data)
        paths.append(path)
    return paths


@pytest.mark.parametrize("fmt", [None, "claude-code"], ids=["detected", "forced"])
def test_a_gzip_broken_in_its_first_block_is_one_rejected_file_among_good_ones(tmp_path: Path, fmt: str | None) -> None:
    expected = verdicts(session_copy(tmp_path / "good"))
    assert len(expected) == 1 and isinstance(expected[0][1], dict)
    folder = tmp_path / "walk"
    broken = broken_gzips(folder)
    session_copy(folder)
    got = verdicts(folder, fmt)
    assert [name for name, _ in got] == sorted([p.name for p in broken] + [SESSION.name])
    assert (SESSION.name, expected[0][1]) in got
    errors = [verdict for name, verdict in got if name != SESSION.name]
    assert len(errors) == 3 and all(isinstance(e, str) and "gzip" in e for e in errors), errors


@pytest.mark.parametrize("name", ["a_header_only", "c_corrupt_first_block"])
def test_a_forced_read_of_one_broken_gzip_says_why(tmp_path: Path, name: str) -> None:
    path = next(p for p in broken_gzips(tmp_path) if p.name.startswith(name))
    [(_, error)] = verdicts(path, "claude-code")
    assert isinstance(error, str) and "truncated or corrupt gzip stream" in error


def utf16(data: bytes) -> bytes:
    return codecs.BOM_UTF16_LE + data.decode("utf-8").encode("utf-16-le")


def saved(folder: Path, data: bytes) -> Path:
    """``data`` under the session's name (its run id derives from it), in a folder of its own."""
    folder.mkdir()
    path = folder / SESSION.name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gzip"])
def test_a_utf16_session_cut_by_one_byte_reads_its_complete_records(tmp_path: Path, gz: bool) -> None:
    """Cut inside its last character (the final newline): the run is the whole session's, where the file was
    refused as "not valid UTF-16"."""
    expected = verdicts(session_copy(tmp_path / "utf8"))
    cut = utf16(SESSION.read_bytes())[:-1]
    assert verdicts(saved(tmp_path / "cut", gzip.compress(cut) if gz else cut)) == expected


def test_a_bad_utf16_code_unit_costs_its_line_as_a_bad_utf8_byte_does(tmp_path: Path) -> None:
    """One line damaged mid-file (a lone low surrogate in UTF-16, a stray 0xFF in UTF-8, in the same place of
    line 15): the same run from the other 28 lines either way, where UTF-16 lost every line from the fault on."""
    text = SESSION.read_bytes()
    start = sum(len(line) for line in text.splitlines(keepends=True)[:14])
    at = text.index(b'"', start + 200)  # inside line 15's JSON, on an ASCII character
    bad_utf8 = text[:at] + b"\xff" + text[at + 1:]
    encoded = utf16(text)
    unit = 2 + 2 * len(text[:at].decode("utf-8"))
    bad_utf16 = encoded[:unit] + b"\x00\xdc" + encoded[unit + 2:]
    whole = verdicts(session_copy(tmp_path / "whole"))
    from_utf8 = verdicts(saved(tmp_path / "utf8", bad_utf8))
    assert [v for v in from_utf8 if isinstance(v[1], str)] == [(SESSION.name, "not UTF-8 text: invalid start byte at byte 200")]
    assert from_utf8 != whole and any(isinstance(run, dict) for _, run in from_utf8)
    assert verdicts(saved(tmp_path / "utf16", bad_utf16)) == from_utf8
