"""Claude Code 2.1.332 and Codex 0.171 files found by probe C (round p45): a sub-agent's newer ``.meta.json``, the
CLI's frame around a sub-agent's report, a ``/review`` session's synthetic turn. The fixtures
(``claude-code/.real/probe-c45/``, ``codex-cli/.real/probe-c45/``) are written by the released CLIs, trimmed; their
origin is in each folder's ``SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
CC = FIXTURES / "claude-code" / ".real" / "probe-c45"


@pytest.mark.parametrize("meta", [
    CC / "bg-agent" / "subagents" / "agent-aa125eb4df964d3e8.meta.json",
    CC / "fg-agent" / "subagents" / "agent-a786a39ac5909245e.meta.json",
], ids=["background-12-keys", "foreground-11-keys"])
def test_a_2_1_3xx_subagents_metadata_is_passed_over(meta: Path) -> None:
    """Bug (probe C, C2): 2.1.332 writes 11-12 keys into ``agent-<id>.meta.json`` (``toolUseId``, ``spawnDepth``,
    ``requestShape``, ``model``, ``finished``, ...); it was told by its key count, so every sub-agent's file was
    "unrecognised dump format" and each ingest of a user's projects exited 3. It is one agent's flat launch
    settings, whatever keys a version adds: passed over."""
    with pytest.raises(SideFile, match="no run in this file: a Claude Code subagent's metadata"):
        detect_format(meta)
    assert list(read_dump(meta.parent, tenant="acme")) == []  # walked: passed over, not a rejection
