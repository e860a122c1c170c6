"""Round 30's readers together (review RT-ING): Harbor's Cursor stream beside its ATIF, a Cursor stream cut before
its ``init``, and a format forced on a file that is not its own. Fixtures: Harbor's cursor/copilot trials
(tests/fixtures/atif/.real/harbor-0.26-cursor-copilot) and Cursor's streams (tests/fixtures/cursor-cli/.newcli30)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
HARBOR = FIXTURES / "atif" / ".real" / "harbor-0.26-cursor-copilot"
CURSOR = FIXTURES / "cursor-cli" / ".newcli30"
CURSOR_STREAMS = [*sorted(CURSOR.glob("*.jsonl")), HARBOR / "hello-cursor__Xq2Lm" / "agent" / "cursor-cli.txt"]
CLAUDE_STREAMS = [FIXTURES / "claude-code" / ".real" / "headless-stream-json.jsonl",
                  FIXTURES / "claude-code" / ".real" / "harbor-datagen" / "etl_checkpoint_resume_bug.stream.jsonl",
                  FIXTURES / "claude-code" / ".r28" / "agent-sdk-0.3.337" / "stream-json-stdout.jsonl"]


def _dry_run(*args: str | Path) -> str:
    code, out, err = run_cli("ingest", *map(str, args), "--dry-run")
    return " ".join((out + err).split())


def test_harbors_cursor_stream_beside_its_atif_is_not_a_second_run(newcomer, tmp_path: Path) -> None:
    """Harbor's cursor-cli agent tees its stream to ``agent/cursor-cli.txt`` and converts it to the ATIF beside it:
    a trial copied without ``result.json`` is one run, as Copilot's is (RT-ING 1: the stream was a second run)."""
    trial = tmp_path / "hello-cursor__Xq2Lm"
    shutil.copytree(HARBOR / "hello-cursor__Xq2Lm", trial)
    said = _dry_run(trial / "agent" / "cursor-cli.txt", trial / "agent" / "trajectory.json")
    assert "trajectory.json: format atif; runs 1; rejected 0; steps 8" in said, said
    assert "format cursor-cli" not in said, said


@pytest.mark.parametrize("stream", CURSOR_STREAMS, ids=lambda p: p.name)
def test_a_cursor_stream_cut_before_its_init_is_still_cursors(stream: Path, tmp_path: Path) -> None:
    """The line after ``init`` is the echoed prompt, ``{"type": "user", "message", "session_id"}``: Claude Code's
    reader took it, every tool call lost (RT-ING 2)."""
    lines = stream.read_text().splitlines(keepends=True)
    (tmp_path / "whole.jsonl").write_text("".join(lines))  # out of Harbor's trial, where its ATIF is the run
    (tmp_path / "cut.jsonl").write_text("".join(lines[1:]))
    assert detect_format(tmp_path / "cut.jsonl") == "cursor-cli"
    [whole], [part] = ([r.trajectory for r in read_inputs([tmp_path / name]) if r.ok]
                       for name in ("whole.jsonl", "cut.jsonl"))
    assert [s.action for s in part.steps] == [s.action for s in whole.steps] and part.task == whole.task


@pytest.mark.parametrize("stream", CLAUDE_STREAMS, ids=lambda p: p.name)
def test_claude_codes_stream_json_cut_before_its_init_is_still_claude_codes(stream: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(stream.read_text().splitlines(keepends=True)[1:]))
    assert detect_format(cut) == "claude-code"


COPILOT_HISTORY = FIXTURES / "copilot" / ".copilot2-30" / (
    "session_a4a1f3c2-5b0e-4f1e-9d37-2f6f0c8e7b15_1759553607577.json")
MIGRATED = FIXTURES / "copilot" / ".rting30" / "a4a1f3c2-5b0e-4f1e-9d37-2f6f0c8e7b15.jsonl"
ATIF = HARBOR / "hello-cursor__Xq2Lm" / "agent" / "trajectory.json"


@pytest.mark.parametrize(("source", "fmt", "said_instead"), [
    (ATIF, "cursor-cli", "not a Cursor CLI stream"),
    (CLAUDE_STREAMS[2], "cursor-cli", "not a Cursor CLI stream"),  # it was read as a Cursor run, no word said
    (ATIF, "copilot-cli", "the log does not open with session.start naming its sessionId"),
    (CURSOR / "stream.jsonl", "copilot-cli", "the log does not open with session.start naming its sessionId"),
    (ATIF, "goose", "not a goose session"),
    (FIXTURES / "crush" / ".newcli30" / "crush-sessions.jsonl", "goose", "not a goose session"),
    (FIXTURES / "goose" / ".copilot2-30" / "20260301_1.md", "goose", "no run in this file: goose's Markdown export"),
    # a q-cli save's history is `{"history": [{"user", "assistant"}]}`: it was read as a browser-use run (RT2 2)
    (FIXTURES / "q-cli" / ".qcli30" / "mx11-printer-test.json", "browser-use", "not a browser-use history"),
    (ATIF, "browser-use", "not a browser-use history"),  # it was "a browser-use history whose `history` is NoneType"
], ids=lambda v: v.name if isinstance(v, Path) else v[:16])
def test_a_format_forced_on_another_tools_file_says_it_is_not_one(newcomer, tmp_path: Path, source: Path, fmt: str,
                                                                    said_instead: str) -> None:
    """``--format X`` on a file X's tool did not write (or wrote and holds no run): refused as not X's run, not for a
    prompt X's file would lack, nor line by line as malformed JSON (RT-ING 3, RT-IDX 5)."""
    path = tmp_path / source.name  # out of Harbor's trial, where its ATIF is the run
    shutil.copy(source, path)
    said = _dry_run(path, "--format", fmt)
    assert "runs 0; rejected 1" in said and said_instead in said, said


def test_a_history_session_migrated_into_a_log_keeps_its_turns_before_the_migration() -> None:
    """``copilot --resume`` of a session kept before the event logs writes its whole old session in one
    ``session.import_legacy`` event and deletes the old file (Copilot CLI 0.0.343's code): that event's timeline is
    read, or every turn before the migration was lost (RT-ING 6)."""
    [kept] = [r.trajectory for r in read_inputs([COPILOT_HISTORY])]
    [log] = [r.trajectory for r in read_inputs([MIGRATED])]
    assert log.trajectory_id == "copilot-cli.a4a1f3c2-5b0e-4f1e-9d37-2f6f0c8e7b15" and log.task == kept.task
    assert [s.action for s in log.steps] == [s.action for s in kept.steps] + ["respond"]
    assert [s.error for s in log.steps[:-1]] == [s.error for s in kept.steps]
    assert log.metadata["user_prompts"][-1] == "Now summarise the design doc in three bullet points."


def test_harbors_atif_of_a_cursor_session_names_its_tools_as_cursors_stream_does(tmp_path: Path) -> None:
    """Harbor's ATIF keeps Cursor's call keys (``shellToolCall``) as tool names: read as the stream reads them
    (``shell``), so a search by tool name finds both readings of one session (RT-ING 1)."""
    stream = tmp_path / "cursor-cli.txt"  # out of its trial, where its ATIF is the run
    stream.write_bytes(CURSOR_STREAMS[-1].read_bytes())
    [converted] = [r.trajectory for r in read_inputs([ATIF])]
    [own] = [r.trajectory for r in read_inputs([stream])]
    assert [s.action for s in converted.steps] == [s.action for s in own.steps] == [
        "shell", "shell", "shell", "await", "read", "edit", "shell", "respond"]
