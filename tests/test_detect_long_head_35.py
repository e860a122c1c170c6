"""Round 35 (DETC35): a file of OTLP requests whose first line runs past detection's 64 KiB peek (a span holding a
long prompt or tool result) is detected as its short variant is. Each case is a real fixture (its folder's README says
where from) whose first line's longest prose string grows by 200 KB or 1 MB, as a long first prompt makes it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest

from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
#: A JSON string value (not a key: no colon after it).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"(?!\s*:)')


def _verdicts(path: Path) -> list[tuple]:
    """What reading the file alone gives, without the file's own path (the two copies live in two folders)."""
    return [(r.fmt, str(r.trajectory.outcome), len(r.trajectory.steps)) if r.ok
            else (r.fmt, str(r.error).replace(str(path), "FILE")) for r in read_inputs([path])]


def _padded(source: Path, folder: Path, size: int) -> Path:
    """A copy of ``source`` whose first line's longest string holding a space (prose, no id or type) is ``size``
    bytes longer."""
    first, newline, rest = source.read_text(encoding="utf-8").partition("\n")
    prose = max((m for m in _STRING.finditer(first) if " " in m.group()), key=lambda m: len(m.group()))
    path = folder / source.name
    folder.mkdir()
    path.write_text(first[:prose.end() - 1] + " lorem" * (size // 6) + first[prose.end() - 1:] + newline + rest,
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("size", [200_000, 1_000_000])
@pytest.mark.parametrize("fixture", [
    "openinference/.real/probe48/autogen-agentchat-0.7.5-oi-0.1.22-team.otlp.jsonl",
    "otel-genai/.real/probeD45-runtime/af-1.26-sequential-de.subset.otlp.json",
    "otel-genai/.released/haystack-3.4-pipeline-span-only.otlp.jsonl",  # no run: said so, not "unrecognised"
    "openinference/.real/agno-3.1-plus-openai.otlp.jsonl",
    "openai-agents/.real/logfire-openai-agents-handoff-de.otlp.json",  # was read as otel-genai: no run in it
])
def test_otlp_with_a_first_line_past_the_peek_reads_as_its_short_variant(fixture: str, size: int,
                                                                         tmp_path: Path) -> None:
    """Bug: the first line of an OTLP file was parsed only when its head named no envelope, to spare parsing a 59 MB
    one-line export; its head's signature decided instead, and a long attribute before the words a format is told by
    made the file "unrecognised" (every run lost) or a file of another span format (Logfire's OpenAI Agents spans read
    as otel-genai: "not an agent run"). Such a line is parsed now up to ``LONG_SPANS_LINE`` (8 MiB)."""
    source = FIXTURES / fixture
    short = tmp_path / "short" / source.name
    short.parent.mkdir()
    short.write_bytes(source.read_bytes())
    assert _verdicts(_padded(source, tmp_path / "long", size)) == _verdicts(short)


def _with_first_line(tmp_path: Path, make: Callable[[dict], str]) -> Path:
    """A copy of a real Claude Code session whose first line is ``make`` of its first record."""
    source = FIXTURES / "claude-code/.real/claudeless/plan-mode-session.jsonl"
    first, rest = source.read_text(encoding="utf-8").split("\n", 1)
    path = tmp_path / source.name
    path.write_text(make(json.loads(first)) + "\n" + rest, encoding="utf-8")
    return path


def test_a_whole_first_line_past_the_peek_is_not_said_cut_short(tmp_path: Path) -> None:
    """Bug: a JSON Lines file whose first line names no format and runs past the peek, before a whole-file format's
    records (a Claude Code session, its first record of a type no adapter knows holding a 200 KB string near its
    start), was rejected as "line 1 is malformed JSON: cut short": the peek's cut, taken for the writer's. Its first
    line is whole JSON, so the file is "unrecognised", as for such a line that fits the peek but whose later lines'
    signature is in the head."""
    path = _with_first_line(tmp_path, lambda record: json.dumps(
        {"type": "queue-operation-x", "note": "lorem " * 40_000, **record} | {"type": "queue-operation-x"}))
    results = list(read_inputs([path]))
    assert len(results) == 1 and "cut short" not in str(results[0].error), str(results[0].error)[:300]
    assert "unrecognised dump format" in str(results[0].error)


def test_a_first_line_its_writer_cut_past_the_peek_is_still_said_cut_short(tmp_path: Path) -> None:
    """A Claude Code session whose first line (a 210 KB prompt) its writer cut keeps the hint main gave: the line's
    fault and ``--format claude-code`` to read the session without it; the long-line change above must not take a
    line the peek cut for one read whole (review DETC35, 1)."""
    path = _with_first_line(tmp_path, lambda record: json.dumps({**record, "note": "lorem " * 35_000})[:-40])
    results = list(read_inputs([path]))
    assert len(results) == 1 and "cut short" in str(results[0].error), str(results[0].error)[:300]
    assert "--format claude-code" in str(results[0].error), str(results[0].error)[:300]
