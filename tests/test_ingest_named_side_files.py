"""A shell glob over a session folder names the CLI's side files too (probe C of round p42, D6).

``trajsearch ingest ~/.codex/*`` names ``history.jsonl`` beside ``sessions/``; ``ingest subagents/*`` names each
``agent-<id>.meta.json`` beside its transcript. A side file named among other inputs ended the whole ingest (exit 2,
nothing read); it is passed over now with a line saying what it is, as in a walked folder, and the rest is read.
Named on its own it is still an error that says what it is.

Real files (origins in each folder's SOURCE.md): ``codex-cli/.real/ocodex/history.jsonl`` and
``codex-cli/.real/ocodex-sessions/rollout-…jsonl``, both of ``.codex/`` of JaydenXsoe/ocodex at 317a6db6; the
workflow folder ``claude-code/.real/claude-backup/subagents/…/workflows/wf_9cab1d1d-783/`` (side files only).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
HISTORY = FIXTURES / "codex-cli" / ".real" / "ocodex" / "history.jsonl"
ROLLOUT = FIXTURES / "codex-cli" / ".real" / "ocodex-sessions" / \
    "rollout-2025-08-31T12-14-27-18a59085-ee11-4ef3-b460-f942642861b3.jsonl"
WORKFLOW = FIXTURES / "claude-code" / ".real" / "claude-backup" / "subagents" / \
    "3e89eb15-32e7-43f8-8734-8d47310263ea" / "workflows" / "wf_9cab1d1d-783"


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    """``~/.codex`` as the ocodex repository keeps it: the prompts' history beside the sessions folder."""
    codex = tmp_path / ".codex"
    (codex / "sessions" / "2025" / "08" / "31").mkdir(parents=True)
    shutil.copy(HISTORY, codex / "history.jsonl")
    shutil.copy(ROLLOUT, codex / "sessions" / "2025" / "08" / "31" / ROLLOUT.name)
    return codex


def count(summary: dict, key: str) -> int:
    """A dry run's count (summed over its files) or an ingest's."""
    return sum(f[key] for f in summary["files"]) if summary.get("dry_run") else summary[key]


def globbed(folder: Path) -> list[str]:
    """What the shell gives for ``folder/*``."""
    return sorted(str(p) for p in folder.iterdir() if not p.name.startswith("."))


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "ingest"])
def test_a_side_file_in_a_glob_is_passed_over_and_the_rest_is_read(codex_home: Path, home: Path, dry_run: bool,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        code, out, err = run_cli("ingest", *globbed(codex_home), "-t", "acme", "--json",
                                 *(["--dry-run"] if dry_run else []))
    assert code == 0, out + err  # nothing rejected: the side file is no rejection
    assert count(json.loads(out), "runs" if dry_run else "ingested") == 1
    assert f"passed over: {codex_home / 'history.jsonl'}: no run in this file: Codex's history" in caplog.text


def test_a_side_file_named_alone_is_still_an_error(codex_home: Path, home: Path) -> None:
    code, out, err = run_cli("ingest", str(codex_home / "history.jsonl"), "-t", "acme", "--dry-run")
    assert code == 2
    assert "no run in this file: Codex's history of the prompts typed" in err


def test_a_glob_of_side_files_only_is_an_error_naming_each(home: Path) -> None:
    named = globbed(WORKFLOW)
    code, out, err = run_cli("ingest", *named, "-t", "acme", "--dry-run")
    assert code == 2, out + err
    flat = " ".join(err.split())
    assert f"none of the {len(named)} inputs holds a run" in flat
    assert "a Claude Code workflow's journal" in flat and "a Claude Code subagent's metadata" in flat


def test_an_unreadable_input_beside_a_side_file_is_still_a_rejection(codex_home: Path, home: Path,
                                                                      tmp_path: Path) -> None:
    """Exit 3 (some rejected, the rest landed) as documented: the side file changes nothing of it."""
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    code, out, err = run_cli("ingest", *globbed(codex_home), str(empty), "-t", "acme", "--json", "--dry-run")
    assert code == 3, out + err
    assert count(json.loads(out), "rejected") == 1
