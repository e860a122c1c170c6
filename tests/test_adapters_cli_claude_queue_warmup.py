"""Claude Code files found by probe C (round p42) on real session folders: prompts logged only in the queue's log,
warm-up files with local commands, Edit refusals quoting code, side files of ``~/.claude`` (each fixture's origin is
in ``tests/fixtures/claude-code/.real/SOURCE.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

from adapter_support import only

CC_REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".real"


def test_a_prompt_taken_into_the_running_turn_from_the_queue_log_is_a_later_prompt() -> None:
    """D7 (real, carollynn2253/Clauding, Claude Code 2.1.56): a prompt typed while the agent worked is logged only as
    ``queue-operation`` ``enqueue`` (with its ``content``) then ``remove`` when the turn took it in; no user record,
    no attachment. It was nowhere in the run, though the agent answered it ("Got it — I'll skip showing file
    content ..."). Now it is a later prompt of the run."""
    run = only(CC_REAL / "clauding" / "4b442843-0136-446a-8ead-79736f7c9bcb.jsonl", tenant="acme")
    assert run.task == "2"
    assert run.metadata["user_prompts"] == ["I don't need to view file here, I can read in other IDE"]
    assert run.steps[-1].arguments["content"].startswith("Got it — I'll skip showing file content")


def test_a_queued_prompt_recorded_as_a_user_record_is_not_read_twice() -> None:
    """D7 (real, Zatoichi-42/claude-zibe, Claude Code 2.1.92): the same file logs a prompt ``dequeue``d into the next
    turn (then written as a user record: read once, from it) and one ``remove``d into the running turn (written
    nowhere else: now read, where the turn took it in, before the agent's answer to it)."""
    run = only(CC_REAL / "zibe" / "4eb362e5-e40d-4f92-be47-a5eb907628b9.jsonl", tenant="acme")
    assert run.task.startswith("before we decide examine your instructions")
    assert run.metadata["user_prompts"] == [
        "show me the list of changes necessary to avoid this quiet failure in the future from blocking progress"]
    assert run.steps[-1].arguments["content"].startswith("Here is the full list")


ARCHON = CC_REAL / "archon"


@pytest.mark.parametrize("name, commands", [
    ("e17ea2d6-d680-40e6-8257-a6fb7d6f7d74.jsonl", "/doctor, /status"),
    ("ec6348c3-0d8b-4c6c-a512-c9842f4f3a71.jsonl", "/status, /model"),
])
def test_a_warmup_with_local_commands_only_is_no_run(name: str, commands: str) -> None:
    """D9 (real, UGZ6/Archon, Claude Code 2.0.24): a session file holding the CLI's own "Warmup" sidechain and local
    commands only was a phantom run: of the warm-up (task "Warmup", a subagent, its greeting as a step), or of
    ``/model`` with no step. Each half alone was already passed over; both together are too."""
    with pytest.raises(SideFile, match=f"slash commands only \\({commands}: no prompt sent"):
        detect_format(ARCHON / name)


def test_a_session_after_the_warmup_in_the_same_file_is_a_run() -> None:
    """Found with D9 (real, UGZ6/Archon, Claude Code 2.0.24): a file opening with the warm-up was passed over whole by
    its first record, though the user's prompt and the model's answer follow it. Only the warm-up is no run."""
    [run] = [p.trajectory for p in read_dump(ARCHON, tenant="acme")]
    assert run.trajectory_id == "claude-code.99bfcf9c-dff3-4b28-8828-fc2be6fd1e26"
    assert run.task == "." and run.metadata["sidechain_records"] == 2
    assert run.steps[-1].arguments["content"].startswith("I'm ready to assist you")


def test_an_edit_refused_for_two_matches_fails_with_the_message_not_the_quoted_code() -> None:
    """D8 (real, olivia215215/cabinet-governance, a 2.1.138 subagent): "Found 2 matches of the string to replace, but
    replace_all is false. ...\\nString: <old_string>": the step's error was the last line of the quoted code
    (``<Text className="ai-summary-title">今日小结</Text>``); it is the CLI's message."""
    run = only(CC_REAL / "olivia" / "c11efbf6-8e99-4d9b-9ae7-74981e78dedd" / "subagents"
               / "agent-a82286363b08dbd8c.jsonl", tenant="acme")
    [error] = [s.error for s in run.steps if s.error]
    assert error.startswith("Found 2 matches of the string to replace, but replace_all is false.")
    assert "今日小结" not in error


@pytest.mark.parametrize("path, said", [
    ("aistrad/telemetry/1p_failed_events.e384d2d9-96ff-46bf-a98d-d21d9507e862."
     "dcb6dd6a-8190-4bbd-adb3-f326912e4ce2.json", "Claude Code's spool of usage events"),
    ("clauding/tasks/4b442843-0136-446a-8ead-79736f7c9bcb/5.json", "an item of Claude Code's task list"),
])
def test_claude_codes_telemetry_spool_and_task_list_are_side_files(path: str, said: str) -> None:
    """D5 (real: aistrad/work's ``~/.claude/telemetry/``, carollynn2253/Clauding's ``~/.claude/tasks/<session>/``):
    rejected as "unrecognised dump format"; like ``todos/`` and ``sessions/``, passed over with what they are."""
    with pytest.raises(SideFile, match=f"no run in this file: {said}"):
        detect_format(CC_REAL / path)
    assert list(read_dump((CC_REAL / path).parent, tenant="acme")) == []
