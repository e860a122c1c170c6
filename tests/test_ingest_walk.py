"""The directory walk of ``ingest``: which hidden folders it enters, with a format forced or detected.

Fixtures: a real Claude Code transcript and a real Gemini CLI session file (sources in the ``SOURCE.md`` beside
each), laid out as a home directory keeps them.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from adapter_support import runs
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
GEMINI = FIXTURES / "gemini-cli" / ".real" / "session-2025-10-27T19-55-981c87cb.json"


def _home(root: Path) -> Path:
    """A home directory holding one Claude Code session and one Gemini CLI session in their CLIs' folders."""
    projects = root / ".claude" / "projects" / "-home-u-proj"
    chats = root / ".gemini" / "tmp" / ("ab" * 32) / "chats"
    for folder in (projects, chats):
        folder.mkdir(parents=True)
    shutil.copy(CLAUDE, projects)
    shutil.copy(GEMINI, chats)
    return root


def test_a_forced_format_walks_only_its_own_clis_session_folders(tmp_path: Path, caplog) -> None:
    """Review (F8 of e0f9fbf): with ``--format claude-code`` the walk of a home directory entered every agent CLI's
    session folder, so the Gemini session under ``.gemini/tmp`` was read as Claude Code and rejected ("no user
    prompt"). Under a forced format only that CLI's folders are walked; the others are left out as hidden folders,
    and the walk says so. Detected, both are read."""
    home = _home(tmp_path / "home")
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        forced = runs(home, fmt="claude-code", tenant="acme")
    assert [r.metadata["source_format"] for r in forced] == ["claude-code"]
    assert ("1 file(s) under hidden folders not read (.gemini: 1): only claude-code's session folders "
            "(.claude/projects) are walked") in caplog.text
    assert sorted(r.metadata["source_format"] for r in runs(home, tenant="acme")) == ["claude-code", "gemini-cli"]


def test_a_walk_names_the_dump_named_entries_it_cannot_read(tmp_path: Path, caplog) -> None:
    """Probe E (round 40, O3): a dangling ``*.jsonl`` link (its file removed) and a FIFO in a dump folder were
    skipped without a word; a missing file usually means a lost batch. The walk names them; under a hidden folder
    nothing is named, and the real run beside them is read."""
    folder = tmp_path / "default__gpt-4o"  # the run's id takes its folder's name
    shutil.copytree(FIXTURES / "swe-agent" / "default__gpt-4o", folder)
    (folder / "gone.jsonl").symlink_to(tmp_path / "deleted.jsonl")
    os.mkfifo(folder / "feed.jsonl")  # a collector's pipe, nobody writing
    (folder / ".git").mkdir()
    (folder / ".git" / "old.jsonl").symlink_to(tmp_path / "nothing.jsonl")
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = runs(folder, tenant="acme")
    assert [r.trajectory_id for r in read] == ["swe-agent.default__gpt-4o.astropy__astropy-12907"]
    assert ("2 dump-named entries not read: not a regular file (a dangling link, a FIFO: name a FIFO to read it): "
            "feed.jsonl, gone.jsonl") in caplog.text
    assert "old.jsonl" not in caplog.text and "hidden" not in caplog.text


def test_the_walk_message_names_a_pattern_entry_as_files_not_a_clis_folder(tmp_path: Path, home: Path) -> None:
    """RT2 6: the message listed ``.chats/*.json`` among "the agent CLIs' session folders": an app's files."""
    (tmp_path / "dumps" / ".x").mkdir(parents=True)
    (tmp_path / "dumps" / ".x" / "a.json").write_text("{}")
    _, out, err = run_cli("ingest", str(tmp_path / "dumps"), "-t", "acme", "--dry-run")
    assert "only the agents' and apps' session folders (" in out + err, out + err
    assert ".chats (its *.json files)) are walked" in out + err and ".chats/*.json" not in out + err, out + err
