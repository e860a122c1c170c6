"""Round 35's first read-through (RT1 3): reading a file peeks its head only for a format whose files may open with
a text head (``read_head_text``: goose's YAML export, an ``opencode export`` after the CLI's line). Round 35 moved
the head check into detection and read.py then peeked every file once more while reading it (one more open and
64 KiB read, a .gz/.zst head decompressed again): 313 peeks against 218 for real-formats + mini-swe-agent-dev.
The count is of ``sources.peek`` calls while the planned units are read (detection's own peeks come before): one,
the records' reader's (``sources.records`` / ``whole_document``), or the head check's for goose; two on main.
Real runs: ``tests/fixtures/claude-code`` (its SOURCE.md) and goose/.copilot2-30 (its README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest import sources
from trajsearch.ingest.read import plan_inputs, read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_SESSION = FIXTURES / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
GOOSE_YAML = FIXTURES / "goose" / ".copilot2-30" / "20260301_1.yaml"


def _read_counting_peeks(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """(runs read, ``sources.peek`` calls while reading) for one file, detected first."""
    units = plan_inputs([path], None)
    peeked: list[Path] = []
    peek = sources.peek
    monkeypatch.setattr(sources, "peek", lambda p: peeked.append(p) or peek(p))
    runs = [p.trajectory for p in read_inputs([path], tenant="t", units=units) if p.trajectory]
    return len(runs), len(peeked)


def test_a_file_is_peeked_once_when_read_the_head_check_only_for_a_format_with_a_text_head(
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert _read_counting_peeks(CLAUDE_SESSION, monkeypatch) == (1, 1)  # JSON: the records' reader's, alone
    assert _read_counting_peeks(GOOSE_YAML, monkeypatch) == (1, 1)  # goose's YAML export: the head check's
