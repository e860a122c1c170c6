"""Run times written as local time without a zone (aider, Trae Agent, SpecStory before its ``Z``), read in the zone
the file gives, else the one ``TRAJSEARCH_LOCAL_TZ`` names, else as UTC said to be a guess; and Kimi CLI's times,
which only the ``wire.jsonl`` beside its context file holds. Fixtures: the real files of tests/fixtures/aider/.aider29,
trae-agent/.trae29, specstory/.left30 and kimi-cli/.time31 (a real session's wire and context lines, as quoted in
a committed OpenCode export) (their README.md say where from); other Kimi cases are built in the shape
``wire/file.py`` writes."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from trajsearch.ingest.adapters import read_with
from trajsearch.ingest.read import read_inputs

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

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


@pytest.mark.parametrize("zone", ["Mars/Olympus", "-00:90", "+15:00"])
def test_a_zone_that_names_none_is_refused_before_anything_is_read(monkeypatch, zone: str) -> None:
    """An operator's mistake, not the data's: refused where reading starts (the CLI: exit 2), so no run is rejected
    and checkpointed as done (an offset's minutes under 60, its span within UTC-14..+14)."""
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", zone)
    with pytest.raises(ValueError, match=re.escape(f"TRAJSEARCH_LOCAL_TZ={zone!r} names no time zone")):
        read_inputs([AIDER])


def test_the_cli_refuses_a_zone_that_names_none_and_ingests_nothing(newcomer, monkeypatch,  # noqa: F811
                                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "Europe/Berln")
    history = tmp_path / "calc" / ".aider.chat.history.md"
    history.parent.mkdir()
    shutil.copy(AIDER, history)
    for workers in ("1", "2"):  # refused before the workers start too, not each worker's failure
        code, out, err = run_cli("ingest", "--workers", workers, str(history))
        assert code == 2 and unnoted(err) == [
            "error: TRAJSEARCH_LOCAL_TZ='Europe/Berln' names no time zone: give an IANA name (Europe/Berlin), an "
            "offset from UTC (+02:00), UTC, or local (this machine's zone)"]
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "Europe/Berlin")  # fixed: read now, no checkpoint holds it back
    code, out, err = run_cli("ingest", str(history))
    assert code == 0 and "already done" not in out + err and "rejected 0" in out


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
    # a name agreeing with the title (a UTC user's, or a build naming files in local time) tells no zone: the
    # operator's is used, not UTC taken as proven
    agreeing = renamed.with_name("2025-04-30_13-43-task-002-progress-and-updates.md")
    renamed.rename(agreeing)
    run = _runs(agreeing)[0]
    assert run.created_at == _utc(2025, 4, 30, 11, 43, 26)
    assert run.metadata["created_at_zone"] == "Europe/Berlin (TRAJSEARCH_LOCAL_TZ)"
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
        '{"timestamp": 1e300, "message": {"type": "ToolCall", "payload": {"id": "tool_X"}}}',  # out of range: too
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


KIMI = FIXTURES / "kimi-cli" / ".time31" / ".kimi" / "sessions" / "887904812217cca9bc2b9adb875daf42" \
    / "e7c42e0c-15c7-4391-99b2-e65bd66c0314"


def test_a_real_kimi_session_is_timed_by_its_real_wire_lines(tmp_path: Path) -> None:
    """Kimi's own lines: the context's string ``content`` is the ``TurnBegin``'s part list's text, the call's id
    pairs its ``ToolCall`` and ``ToolResult`` (``"extras": null`` and the rest beside); an earlier turn and call
    (lines 448-490) are another turn's."""
    run = _runs(KIMI / "context.jsonl")[0]
    assert run.trajectory_id == "kimi-cli.e7c42e0c-15c7-4391-99b2-e65bd66c0314"
    assert run.created_at == datetime.fromtimestamp(1772194541.8626204, timezone.utc)  # wire line 1245
    shell = run.steps[0]
    assert shell.action == "Shell" and shell.started_at == datetime.fromtimestamp(1772194553.382178, timezone.utc)
    assert shell.ended_at == datetime.fromtimestamp(1772194553.471541, timezone.utc)
    # compacted: the task is a summary no turn typed; the run starts at the last turn begun before its first call
    folder = tmp_path / KIMI.relative_to(FIXTURES / "kimi-cli" / ".time31")
    shutil.copytree(KIMI, folder)
    lines = (folder / "context.jsonl").read_text().splitlines()
    lines[1] = _line(role="user", content="<system>Previous context has been compacted. Here is the compaction "
                                          "output:</system>\nThe user hardened SSH; check the containers.")
    (folder / "context.jsonl").write_text("\n".join(lines) + "\n")
    assert _runs(folder / "context.jsonl")[0].created_at == datetime.fromtimestamp(1772194541.8626204, timezone.utc)


def test_a_kimi_call_id_used_twice_takes_each_call_s_own_times(tmp_path: Path) -> None:
    """Some providers number calls per turn (``Shell:0``): the i-th call of an id is timed by the i-th ToolCall and
    ToolResult of it, not all by the first."""
    context = _kimi_session(tmp_path, [
        _event(100.0, "TurnBegin", user_input=[{"type": "text", "text": "list the files"}]),
        _event(101.0, "ToolCall", **CALL), _event(102.0, "ToolResult", tool_call_id="tool_Vq3"),
        _event(201.0, "ToolCall", **CALL), _event(203.0, "ToolResult", tool_call_id="tool_Vq3"),
    ])
    lines = context.read_text().splitlines()
    context.write_text("\n".join(lines[:5] + lines[3:]) + "\n")  # the call and its answer twice
    first, second = [step for step in _runs(context)[0].steps if step.action == "Shell"]
    assert (first.started_at.timestamp(), first.ended_at.timestamp()) == (101.0, 102.0)
    assert (second.started_at.timestamp(), second.ended_at.timestamp()) == (201.0, 203.0)


def test_another_zone_reads_a_local_clock_s_runs_again_and_delete_from_undoes_them_under_any(
        newcomer, monkeypatch, tmp_path: Path) -> None:  # noqa: F811
    """RT1 findings 1 and 2: the zone times the run, so a changed TRAJSEARCH_LOCAL_TZ is another job (the run is read
    again and replaces itself under its id, not skipped as done); and ``delete --from`` finds the run it stored
    whatever zone either read it in (the wall times the same)."""
    history = tmp_path / "calc" / ".aider.chat.history.md"
    history.parent.mkdir()
    shutil.copy(AIDER, history)
    code, out, err = run_cli("ingest", str(history))
    assert code == 0 and "ingested 1" in out, out + err
    monkeypatch.setenv("TRAJSEARCH_LOCAL_TZ", "Asia/Tokyo")
    code, out, err = run_cli("ingest", str(history))
    assert code == 0 and "already done" not in out + err and "ingested 1" in out, out + err
    monkeypatch.delenv("TRAJSEARCH_LOCAL_TZ")
    code, out, err = run_cli("delete", "--from", str(history), "--dry-run")
    assert code == 0 and out.startswith("would remove 1 run(s)") and "kept" not in out, out + err
