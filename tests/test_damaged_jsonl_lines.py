"""JSON Lines damaged as real agent transcripts are (round 32, SRC32): NUL bytes a crash left before a record
(anthropics/claude-code#49876, #76059), two records run together on one line, and a record cut short with a whole
one written on after it (anthropics/claude-code#81843, github/copilot-cli#4098). Each cost its whole line, every
record on it lost; now the whole records are read and what was skipped is one rejection naming it.

Each file is a real Claude Code transcript of tests/fixtures/claude-code (its SOURCE.md says where it comes from)
damaged here, at test time, as those issues describe."""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from cli_support import newcomer, run_cli  # noqa: F401
from trajsearch.ingest.read import Parsed, read_inputs

REAL = Path(__file__).parent / "fixtures/claude-code/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"


def _lines() -> list[bytes]:
    return REAL.read_bytes().split(b"\n")[:-1]


def _write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / REAL.name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _read(path: Path) -> tuple[list[tuple[str, str, str]], list[Parsed]]:
    """The steps of the one run read from ``path`` (action, arguments, observation) and its rejections."""
    read = list(read_inputs([path], tenant="t"))
    runs = [parsed.trajectory for parsed in read if parsed.trajectory]
    assert len(runs) == 1, read
    steps = [(step.action, repr(step.arguments), str(step.observation)) for step in runs[0].steps]
    return steps, [parsed for parsed in read if parsed.error]


@pytest.fixture(scope="module")
def whole() -> list[tuple[str, str, str]]:
    """The steps of the transcript as Claude Code wrote it."""
    return _read(REAL)[0]


def test_a_record_after_the_zeros_a_crash_left_on_its_line_is_read(tmp_path: Path, whole) -> None:
    """#49876: a block of NUL bytes mid-file, the next record appended after it on its line; #76059: a last line of
    zeros. The record's line was "not UTF-8 text" (the parse took the zeros for UTF-16), its tool call lost."""
    lines = _lines()
    lines[9] = b"\x00" * 4096 + lines[9]
    lines.append(b"\x00" * 700)
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [(parsed.position, parsed.error) for parsed in rejected] == [
        ("line 10", "malformed line: 4096 NUL bytes at bytes 1-4096 (zeros a crash leaves where what was written "
                    "never reached the disk): skipped; 1 whole record on this line read"),
        ("line 30", "malformed line: 700 NUL bytes at bytes 1-700 (zeros a crash leaves where what was written "
                    "never reached the disk): skipped; no whole record on this line read")]


def test_two_records_run_together_on_one_line_are_both_read(tmp_path: Path, whole) -> None:
    """A newline lost between two records (``{...}{...}``): both were lost, one rejection "Extra data"."""
    lines = _lines()
    lines[8:10] = [lines[8] + lines[9]]
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole and not rejected


@pytest.mark.parametrize("between", ["\ufeff", " \ufeff "], ids=["bom", "spaced-bom"])
def test_two_records_run_together_across_a_byte_order_mark_are_both_read(tmp_path: Path, whole, between) -> None:
    """``cat`` of a transcript with no final newline and one a Windows tool wrote with a byte-order mark: the mark
    sits between two records on one line, space there as between the values of a JSON file (both were lost to
    "Extra data"; review SRC33 item 6)."""
    lines = _lines()
    lines[8:10] = [lines[8] + between.encode() + lines[9]]
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole and not rejected


def test_a_record_cut_short_then_written_whole_on_its_line_costs_only_the_cut(tmp_path: Path, whole) -> None:
    """#81843 and copilot-cli#4098: a record cut off, then the whole record written on after it, on the same line
    (here the same record, as #4098 saw: the whole one keeps the cut one's ids). Both were lost. A record cut after
    a member that is an object (``..."usage": {...}``) may be that cut record alone: nothing is taken from it."""
    lines = _lines()
    lines[9] = lines[9][:400] + lines[9]
    cut_at_member = lines[5][:lines[5].index(b',"requestId"')]  # ends with its message object, whole
    assert cut_at_member.endswith(b"}")
    lines.insert(20, cut_at_member)
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [(parsed.position, parsed.error) for parsed in rejected] == [
        ("line 10", "malformed line: bytes 1-400, a record cut short, the next one written on after it: skipped; "
                    "1 whole record on this line read"),
        ("line 21", f"malformed JSON: cut short: the line ends inside its JSON value, after column "
                    f"{len(cut_at_member)}")]


def test_a_dry_run_names_what_it_skipped_and_counts_every_record_read(newcomer, tmp_path: Path) -> None:  # noqa: F811
    lines = _lines()
    lines[20] = b"\x00" * 512 + lines[20]
    lines[16:18] = [lines[16] + lines[17]]
    lines[5] = lines[5][:100] + lines[5]
    code, out, err = run_cli("ingest", str(_write(tmp_path, lines)), "--dry-run")
    assert code == 3, out + err  # some records rejected
    assert "runs 1; rejected 2; steps 13;" in " ".join(out.split()), out + err
    said = " ".join(err.split())  # the rejections, each named
    assert "line 6: malformed line: bytes 1-100, a record cut short, the next one written on after it" in said, err
    assert "line 20: malformed line: 512 NUL bytes at bytes 1-512" in said, err  # (the records run together: 17)


@contextmanager
def _alarm(seconds: int) -> Iterator[None]:
    def stop(*_: object) -> None:
        raise TimeoutError(f"over {seconds} s: not linear in the line's length")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_hostile_lines_are_read_in_time_linear_in_their_length(tmp_path: Path, whole) -> None:
    """10 MB of zeros before a record, a line of 10 MB of ``{``, one of five million ``\\0{`` (ten million pieces):
    each read once. The alarm is one that only a scan per piece over the rest of the line goes past, even at C speed
    (``str.find`` from each piece to the line's end: some 2,800 s), where these take seconds (review finding 4)."""
    lines = _lines()
    lines[9] = b"\x00" * 10_000_000 + lines[9]
    lines[20:20] = [b"{" * 10_000_000, b"\x00{" * 5_000_000]
    with _alarm(300):
        steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [parsed.position for parsed in rejected] == ["line 10", "line 21", "line 22"]
    assert rejected[2].error.endswith("; and 9999997 more: skipped; no whole record on this line read")


@pytest.mark.parametrize("damage", [lambda lines: [b"\x00" * 100 + lines[0], *lines[1:]],
                                    lambda lines: [lines[0] + lines[1], *lines[2:]],
                                    lambda lines: [lines[0][:100] + lines[0], *lines[1:]]],
                         ids=["zeros", "run together", "cut then whole"])
def test_a_session_whose_first_line_is_damaged_is_read(tmp_path: Path, whole, damage) -> None:
    """The first line holds the session's prompt: lost, the whole session was refused ("no user prompt in this
    Claude Code session")."""
    steps, _ = _read(_write(tmp_path, damage(_lines())))
    assert steps == whole


def test_a_hostile_line_costs_memory_of_its_records_not_of_its_pieces(tmp_path: Path) -> None:
    """A line of a million ``\\0{`` (2 MB, two million pieces skipped) held a tuple and a sentence per piece: 595 MB
    (a 64 MB line, the longest read: some 18 GB). Read in a process of its own, whose peak is measured."""
    lines = _lines()
    lines[20:20] = [b"\x00{" * 1_000_000]
    path = _write(tmp_path, lines)
    code = ("import re, sys; from pathlib import Path; from trajsearch.ingest.read import read_inputs; "
            "print(sum(1 for p in read_inputs([Path(sys.argv[1])], tenant='t') if p.error), "
            "int(re.search(r'VmHWM:\\s*(\\d+)', Path('/proc/self/status').read_text()).group(1)) // 1024)")
    done = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True)
    # the child's own peak, its memory's high-water mark (VmHWM, new at exec): RUSAGE_CHILDREN holds any earlier
    # child's, and Linux carries the parent's peak into a child's ru_maxrss across exec (a full run's worker: 1.6 GB)
    rejected, peak_mb = done.stdout.split()
    assert rejected == "1", done.stdout + done.stderr
    assert int(peak_mb) < 350, peak_mb  # the reader and its imports; the line costs some 10 MB


@pytest.mark.parametrize("line", [b'{"a": 1} and more"}', b'{"a":{"b{"c":"d\\q{"e":1}'],
                         ids=["a broken string's text", "faulty before the cut"])
def test_nothing_inside_a_record_is_taken_for_one(tmp_path: Path, whole, line) -> None:
    """A line of a tool output a writer broke with raw newlines (github/copilot-cli#2649) may hold ``{"a": 1}`` as
    text; a fragment faulty before its cut (a ``\\`` unescaped) says nothing of where its record ends, so what
    follows may be inside it. Each stays one rejection with its parse error, nothing read from it (review
    finding 3)."""
    lines = _lines()
    lines.insert(20, line)
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [parsed.position for parsed in rejected] == ["line 21"]
    assert rejected[0].error.startswith("malformed JSON: "), rejected[0].error


COPILOT = Path(__file__).parent / "fixtures/copilot/.copilot2-30/session.jsonl"
QWEN = Path(__file__).parent / "fixtures/qwen-code/.real/piped-log-prompt.jsonl"  # its first line is 83 KB


@pytest.mark.parametrize("real", [COPILOT, QWEN], ids=["copilot-cli", "qwen-code"])
@pytest.mark.parametrize("damage", [lambda lines: [b"\x00" * 100 + lines[0], *lines[1:]],
                                    lambda lines: [lines[0] + lines[1], *lines[2:]]],
                         ids=["zeros", "run together"])
def test_a_session_detected_by_its_first_record_is_read_when_that_line_is_damaged(tmp_path: Path, real, damage) -> None:
    """Detection parsed the first line itself: a Copilot CLI or Qwen Code session (whose head names no format) with
    that line damaged was refused whole, "pass --format ... to read it without its first line", where the reader
    read that line's record (review finding 2)."""
    intact = [parsed.trajectory for parsed in read_inputs([real], tenant="t") if parsed.trajectory]
    path = tmp_path / real.name
    path.write_bytes(b"\n".join(damage(real.read_bytes().split(b"\n"))))
    runs = [parsed.trajectory for parsed in read_inputs([path], tenant="t") if parsed.trajectory]
    assert [len(run.steps) for run in runs] == [len(run.steps) for run in intact] and runs


def test_a_nul_inside_a_record_is_not_called_a_crash_s_zeros(tmp_path: Path, whole) -> None:
    """A raw NUL byte inside a string is a writer's fault, not a crash's zeros (review SRC32 finding 7), and not pieces
    of no whole record either (``bytes 1-24, no whole record; 1 NUL byte at byte 25; ...``, review item 7): the line
    holds no record to read, so its own parse error names the fault, as for any other control character."""
    lines = _lines()
    lines.insert(20, b'{"type":"user","text":"x\x00y"}')
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [(parsed.position, parsed.error) for parsed in rejected] == [
        ("line 21", "malformed JSON: Invalid control character (column 25)")]


def test_zeros_a_crash_left_after_a_space_are_still_named(tmp_path: Path, whole) -> None:
    """A space before the zeros that open a line, and a cut record after them: still the crash's zeros and a piece of
    no whole record, not the parse's "Expecting value" (round 33 took zeros only at the line's very first byte;
    review SRC33 item 7)."""
    lines = _lines()
    lines.insert(20, b" \x00\x00" + lines[20][:50])
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [(parsed.position, parsed.error) for parsed in rejected] == [
        ("line 21", "malformed line: 2 NUL bytes at bytes 2-3; bytes 4-53, no whole record: skipped; no whole record "
                    "on this line read")]


def test_what_is_skipped_beside_a_record_is_named_for_what_it_is(tmp_path: Path, whole) -> None:
    """``{}`` written before a record on its line is whole and empty, not "a record cut short"; a whole record nested
    deeper than Python's parser goes, after another, is too deep, as the same record on a line of its own is said to
    be, not "a record cut short" (review SRC32 item 7)."""
    lines = _lines()
    lines[9] = b"{}" + lines[9]
    lines[20] = lines[20] + b"[" * 2000 + b"]" * 2000
    steps, rejected = _read(_write(tmp_path, lines))
    assert steps == whole
    assert [(parsed.position, parsed.error) for parsed in rejected] == [
        ("line 10", "malformed line: bytes 1-2, an empty record: skipped; 1 whole record on this line read"),
        ("line 21", f"malformed line: bytes {len(lines[20]) - 3999}-{len(lines[20])}, JSON nested deeper than 200 "
                    "levels: skipped; 1 whole record on this line read")]
