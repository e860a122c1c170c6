"""Run times written as local time without a zone (aider, Trae Agent, SpecStory before its ``Z``), read in the zone
the file gives, else the one ``TRAJSEARCH_LOCAL_TZ`` names, else as UTC said to be a guess; and Kimi CLI's times,
which only the ``wire.jsonl`` beside its context file holds. Fixtures: the real files of tests/fixtures/aider/.aider29,
trae-agent/.trae29 and specstory/.left30 (their README.md say where from); Kimi's wire log is built in the shape
``wire/file.py`` writes (no real one was found committed)."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from trajsearch.ingest.adapters import read_with
from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
AIDER = FIXTURES / "aider" / ".aider29" / "calculator" / ".aider.chat.history.md"  # started at 2025-05-04 17:02:36
TRAE = FIXTURES / "trae-agent" / ".trae29" / "success_task_done.json"  # 2025-10-14T16:31:09.253473 to 16:42:10.553632
SPECSTORY = FIXTURES / "specstory" / ".left30" / "cursor-2025" / ".specstory" / "history"
MINSKY = SPECSTORY / "2025-04-30_17-43-task-002-progress-and-updates.md"  # titled (2025-04-30 13:43:26)
UNKNOWN = "unknown: the tool wrote local time, read as UTC (TRAJSEARCH_LOCAL_TZ sets the zone)"


def _runs(path: Path) -> list:
    results = list(read_inputs([path]))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return [r.trajectory for r in results]


def _utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)


def test_an_aider_start_is_read_as_utc_said_to_be_a_guess_or_in_the_zone_the_operator_names(monkeypatch) -> None:
    run = _runs(AIDER)[0]
    assert run.created_at == _utc(2025, 5, 4, 17, 2, 36) and run.metadata["created_at_zone"] == UNKNOWN
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "America/New_York")  # summer time: UTC-4
    run = _runs(AIDER)[0]
    assert run.created_at == _utc(2025, 5, 4, 21, 2, 36)
    assert run.metadata["created_at_zone"] == "America/New_York (TRAJSEARCH_LOCAL_TZ)"
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "+05:30")
    assert _runs(AIDER)[0].created_at == _utc(2025, 5, 4, 11, 32, 36)


def test_a_zone_that_names_none_is_an_error_naming_the_variable(monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "Mars/Olympus")
    [result] = list(read_inputs([AIDER]))
    assert not result.ok and "TRAJSEARCH_LOCAL_TZ='Mars/Olympus' names no time zone" in result.error


def test_a_trae_run_takes_the_zone_its_end_time_and_its_mtime_give_and_its_steps_too(tmp_path: Path) -> None:
    copy = tmp_path / "trajectory.json"
    shutil.copy(TRAE, copy)
    # the recorder saves the file as it sets end_time: written at 16:42:10.55 in UTC+8 is 08:42:10.55 UTC
    saved = _utc(2025, 10, 14, 8, 42, 10, 800000).timestamp()
    os.utime(copy, (saved, saved))
    run = _runs(copy)[0]
    eight = timezone(timedelta(hours=8))
    assert run.created_at == datetime(2025, 10, 14, 16, 31, 9, 253473, tzinfo=eight)
    assert run.metadata["created_at_zone"] == "UTC+08:00 (the file's last time against its mtime)"
    assert run.steps[0].ended_at == datetime(2025, 10, 14, 16, 31, 23, 392124, tzinfo=eight)
    # a copy or a checkout resets the mtime to no zone's offset: then the guess, said so
    later = saved + 3 * 86400 + 1234
    os.utime(copy, (later, later))
    run = _runs(copy)[0]
    assert run.created_at == _utc(2025, 10, 14, 16, 31, 9, 253473) and run.metadata["created_at_zone"] == UNKNOWN


def test_an_early_specstory_title_s_local_time_takes_the_zone_of_its_file_s_utc_name(monkeypatch, tmp_path) -> None:
    run = _runs(MINSKY)[0]
    assert run.created_at == _utc(2025, 4, 30, 17, 43, 26)  # the title's 13:43:26 in New York's summer time
    assert run.metadata["created_at_zone"].startswith("UTC-04:00")
    assert run.trajectory_id == "specstory.20250430T134326.b2349bcf7617"  # the id as before: the title's digits
    # renamed, the file says no zone: the operator's, else UTC said to be a guess; the id stays
    renamed = tmp_path / ".specstory" / "history" / "progress.md"
    renamed.parent.mkdir(parents=True)
    shutil.copy(MINSKY, renamed)
    run = _runs(renamed)[0]
    assert run.created_at == _utc(2025, 4, 30, 13, 43, 26) and run.metadata["created_at_zone"] == UNKNOWN
    assert run.trajectory_id == "specstory.20250430T134326.b2349bcf7617"
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "Europe/Berlin")
    assert _runs(renamed)[0].created_at == _utc(2025, 4, 30, 11, 43, 26)
    # since mid-2025 SpecStory writes UTC with a Z: read as it says, whatever the operator's zone, no guess said
    folder = FIXTURES / "specstory" / ".specstory29" / "claude-code-2026" / ".specstory" / "history"
    run = _runs(folder / "2026-01-16_16-48-38Z-the-code-in-specstory.md")[0]
    assert run.created_at == _utc(2026, 1, 16, 16, 48, 38) and "created_at_zone" not in run.metadata


def _line(**record) -> str:
    return json.dumps(record)


def _event(when: float, kind: str, **payload) -> str:
    return json.dumps({"timestamp": when, "message": {"type": kind, "payload": payload}})


SESSION = "0f2c9a4e-1b7d-4c8e-9a35-6d2e8f1b7c40"
CALL = {"type": "function", "id": "tool_Vq3", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}


def _kimi_session(home: Path, wire: list[str] | None) -> Path:
    """A Kimi 1.x session folder: its context file and (Kimi since 2025-11-26) its wire log."""
    folder = home / ".kimi" / "sessions" / "5d41402abc4b2a76b9719d911017c592" / SESSION
    folder.mkdir(parents=True)
    (folder / "context.jsonl").write_text("\n".join([
        _line(role="_system_prompt", content="You are Kimi Code CLI"), _line(role="_checkpoint", id=0),
        _line(role="user", content=[{"type": "text", "text": "list the files"}]),
        _line(role="assistant", content=[{"type": "text", "text": "Listing."}], tool_calls=[CALL]),
        _line(role="tool", tool_call_id="tool_Vq3", content=[{"type": "text", "text": "<system>ok</system>app.py"}]),
        _line(role="assistant", content="One file: app.py."),
    ]) + "\n")
    if wire is not None:
        (folder / "wire.jsonl").write_text("\n".join(wire) + "\n")
    return folder / "context.jsonl"


def test_a_kimi_session_s_start_and_its_calls_times_are_its_wire_log_s(tmp_path: Path) -> None:
    context = _kimi_session(tmp_path, [
        _line(type="metadata", protocol_version="1.3"),
        _event(1770983400.25, "TurnBegin", user_input=[{"type": "text", "text": "list the files"}]),
        _event(1770983400.5, "StepBegin", n=1),
        '{"timestamp": 1770983401.0, "message": {"type": "ContentPart", "payl',  # a line cut short: passed over
        _event(1770983403.0, "ToolCall", **CALL),
        _event(1770983404.5, "ToolResult", tool_call_id="tool_Vq3", return_value={"is_error": False}),
        _event(1770983406.0, "TurnEnd"),
    ])
    run = _runs(context)[0]
    assert run.created_at == datetime.fromtimestamp(1770983400.25, timezone.utc)
    assert "created_at_basis" not in run.metadata  # no longer dated by the file's mtime
    shell, answer = run.steps
    assert shell.started_at == datetime.fromtimestamp(1770983403.0, timezone.utc)
    assert shell.ended_at == datetime.fromtimestamp(1770983404.5, timezone.utc)
    assert answer.action == "respond" and answer.started_at is None  # a reply names no call to time it by
    assert read_with(context) == (context.with_name("wire.jsonl"),)  # a checkpoint reads the run again as it grows
    # without its wire log (Kimi before 2025-11-26), dated by its file as before
    run = _runs(_kimi_session(tmp_path / "older", None))[0]
    assert run.metadata["created_at_basis"] == "file mtime" and run.steps[0].started_at is None
