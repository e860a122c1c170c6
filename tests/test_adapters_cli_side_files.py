"""Agent-CLI files found by probe H (round p39) on real dotfiles and session backups: side files passed over,
look-alike outputs refused by name, snapshots, error lines (each fixture's origin is in its folder's SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

FIXTURES = Path(__file__).parent / "fixtures"


def test_codex_history_of_prompts_is_passed_over() -> None:
    """``~/.codex/history.jsonl`` (one ``{"session_id", "ts", "text"}`` line per prompt typed; real, JaydenXsoe/ocodex)
    was rejected as "unrecognised dump format"; like ``session_index.jsonl`` beside it, it holds no run."""
    history = FIXTURES / "codex-cli" / ".real" / "ocodex" / "history.jsonl"
    with pytest.raises(SideFile, match=r"no run in this file: Codex's history of the prompts typed"):
        detect_format(history)
    assert list(read_dump(history.parent, tenant="acme")) == []
