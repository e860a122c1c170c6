"""Round 32: Cline 3.x's words to the user read as 4.x's are (``_WORDS``), on real task folders and UI logs
(tests/fixtures/cline/.r28/README.md, .r28ui/README.md); a Cline 4.x sub-agent's outcome from the real sessions.db
beside its session (.cline32/README.md)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from trajsearch.ingest.adapters import read_with_value
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from adapter_support import only

CLINE = Path(__file__).parent / "fixtures" / "cline"


def test_a_3x_completion_is_a_respond_step_as_4xs_submission_and_still_the_accepted_verdict() -> None:
    run = only(CLINE / ".r28" / "exported_conversation_1769053680585")
    closing = run.steps[-1]
    assert closing.action == "respond" and closing.arguments["content"].startswith("I have successfully secured")
    assert closing.observation is None  # no one replied: the run's closing answer, not a turn of a dialogue
    assert run.outcome is Outcome.success  # its last call was the completion, and the user let it stand


def test_a_3x_question_is_a_respond_step_its_answer_the_observation_as_4xs_ask_question() -> None:
    run = only(CLINE / ".r28" / "1777073160794")
    assert "ask_followup_question" not in {s.action for s in run.steps}
    asked = run.steps[4]
    assert asked.action == "respond" and asked.arguments["content"].startswith("I've analyzed the codebase")
    assert "options" in asked.arguments  # the rest of the call's arguments kept beside its words


def test_a_lone_ui_logs_completion_is_a_respond_step() -> None:
    run = only(CLINE / ".r28ui" / "Cline-Xray")
    assert "attempt_completion" not in {s.action for s in run.steps}
    assert run.steps[-2].action == "respond" and run.steps[-2].arguments["content"]


def test_a_ui_log_read_alone_closes_as_its_folder_does() -> None:
    folder = CLINE / ".r28" / "exported_conversation_1769053680585"
    alone, whole = only(folder / "ui_messages.json"), only(folder)
    said = [[(s.action, s.arguments["content"], s.observation) for s in r.steps if s.action == "respond"]
            for r in (alone, whole)]
    assert said[0] == said[1] and said[0] and alone.outcome is whole.outcome is Outcome.success


def test_3xs_plan_mode_respond_is_a_respond_step_as_its_other_words_to_the_user() -> None:
    run = only(CLINE / ".r28" / "1777073160794")
    assert not {"plan_mode_respond", "act_mode_respond"} & {s.action for s in run.steps}
    last = run.steps[-1]
    assert last.action == "respond" and last.arguments["content"].startswith("## Phase 4 Deployment Plan")
    assert "task_progress" in last.arguments


def _history(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    """A Cline 3.x task folder of ``messages``: synthetic (no real task folder found on GitHub has an answered
    question), each message in the form Cline 3.x writes it (``ToolResultUtils.pushToolResult``'s
    ``[<tool> for '<arg>'] Result:`` block, then the handler's ``formatResponse.toolResult``)."""
    folder = tmp_path / "tasks" / "1700000000000"
    folder.mkdir(parents=True)
    (folder / "api_conversation_history.json").write_text(json.dumps(
        [{"role": "user", "content": [{"type": "text", "text": "<task>\nfix it\n</task>"}]}, *messages]))
    return folder


def _said(role: str, *texts: str) -> dict[str, Any]:
    return {"role": role, "content": [{"type": "text", "text": t} for t in texts]}


def test_a_3x_answered_question_reads_as_4xs_its_answer_bare_its_options_a_list(tmp_path: Path) -> None:
    run = only(_history(tmp_path, [  # AskFollowupQuestionToolHandler.ts: toolResult(`<answer>\n${text}\n</answer>`)
        _said("assistant", "<ask_followup_question>\n<question>Which file?</question>\n"
                           '<options>["a.py","b.py"]</options>\n</ask_followup_question>'),
        _said("user", "[ask_followup_question for 'Which file?'] Result:", "<answer>\na.py\n</answer>"),
        _said("assistant", "<attempt_completion>\n<result>Fixed a.py</result>\n</attempt_completion>")]))
    asked = run.steps[0]
    assert (asked.action, asked.arguments, asked.observation) == (
        "respond", {"options": ["a.py", "b.py"], "content": "Which file?"}, "a.py")  # as 4.x's ask_question
    assert run.outcome is Outcome.success


def test_3xs_plan_and_act_mode_respond_are_respond_steps_the_users_reply_bare_an_echo_none(tmp_path: Path) -> None:
    run = only(_history(tmp_path, [  # native tool calls: PlanModeRespondHandler.ts, ActModeRespondHandler.ts
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t0", "name": "plan_mode_respond",
                                           "input": {"response": "Plan: edit a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0", "content": [
            {"type": "text", "text": "<user_message>\ngo on\n</user_message>"}]}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "act_mode_respond",
                                           "input": {"response": "Editing a.py now"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text":
            "[Message displayed. Now proceed with your next tool call - it must be a different tool (read_file, "
            "replace_in_file, execute_command, etc.), not act_mode_respond again.]"}]}]}]))
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("respond", {"content": "Plan: edit a.py"}, "go on"),
        ("respond", {"content": "Editing a.py now"}, None)]  # Cline's echo, as submit_and_exit's: no one replied


# Cline 4.x's sessions.db, as the real cline@3.0.65 wrote it beside the sessions of tests/fixtures/cline/.aud31
# (tests/fixtures/cline/.cline32/README.md).
SESSIONS_DB = CLINE / ".cline32" / "db" / "sessions.db"
DELEGATED = CLINE / ".aud31" / "sessions" / "1796629691264_utjj7"
SUB = "1796629691264_utjj7__agent_1796629692137_qkcs87"


def _data_folder(tmp_path: Path, status: str | None = None, code: int | None = None) -> Path:
    """``~/.cline/data`` holding the delegated session and the database; ``status``: the sub-agent's row set so, as
    ``applySubagentStatusBySessionId`` sets it when the sub-agent ends."""
    data = tmp_path / ".cline" / "data"
    shutil.copytree(DELEGATED, data / "sessions" / DELEGATED.name)
    (data / "db").mkdir()
    for name in ("sessions.db", "sessions.db-wal"):  # as Cline left them: every row in the write-ahead log
        shutil.copyfile(SESSIONS_DB.with_name(name), data / "db" / name)
    if status is not None:
        with closing(sqlite3.connect(data / "db" / "sessions.db")) as db, db:
            db.execute("UPDATE sessions SET status = ?, exit_code = ? WHERE session_id = ?", (status, code, SUB))
    return data


def _runs(data: Path) -> dict[str, Any]:
    results = list(read_dump(data))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def test_a_sub_agents_status_is_read_from_clines_sessions_db_beside_its_session(tmp_path: Path) -> None:
    runs = _runs(_data_folder(tmp_path))  # the real row: completed, which says nothing of success
    sub = runs[f"cline.{SUB}"]
    assert sub.metadata["session_status"] == "completed" and sub.metadata["session_status_from"] == "sessions.db"
    assert sub.outcome is Outcome.unknown
    lead = runs["cline.1796629691264_utjj7"]
    assert lead.metadata["session_status_from"] == "manifest"  # the lead's own manifest, as before


def test_a_sub_agent_that_failed_or_was_cancelled_has_that_outcome(tmp_path: Path) -> None:
    failed = _runs(_data_folder(tmp_path / "a", "failed", 1))[f"cline.{SUB}"]
    assert failed.outcome is Outcome.infra_error
    assert failed.failure.error == "Cline ended the session on an error (sessions.db status failed, exit code 1)"
    cancelled = _runs(_data_folder(tmp_path / "b", "cancelled", 0))[f"cline.{SUB}"]
    assert cancelled.outcome is Outcome.unknown and cancelled.metadata["interrupted"] is True


def test_a_change_of_the_sub_agents_row_alone_is_what_an_ingest_checkpoint_sees(tmp_path: Path) -> None:
    data = _data_folder(tmp_path)
    sub = data / "sessions" / DELEGATED.name / "agent_1796629692137_qkcs87.messages.json"
    lead = data / "sessions" / DELEGATED.name / f"{DELEGATED.name}.messages.json"
    before = read_with_value(sub), read_with_value(lead)
    with closing(sqlite3.connect(data / "db" / "sessions.db")) as db, db:
        db.execute("UPDATE sessions SET status = 'failed', exit_code = 1 WHERE session_id = ?", (SUB,))
    assert read_with_value(sub) != before[0] and "failed" in read_with_value(sub)
    assert read_with_value(lead) == before[1]


def test_the_real_databases_rows_are_read_from_its_log_and_nothing_is_written_beside_it(tmp_path: Path) -> None:
    data = _data_folder(tmp_path)  # the main file 4 KiB with no table, every row in sessions.db-wal
    before = {p.name: p.read_bytes() for p in (data / "db").iterdir()}
    sub = _runs(data)[f"cline.{SUB}"]
    assert sub.metadata["session_status"] == "completed" and sub.metadata["session_status_from"] == "sessions.db"
    # opened in place, SQLite would write a -shm beside it and, closing, fold the -wal into the main file
    assert {p.name: p.read_bytes() for p in (data / "db").iterdir()} == before


def test_a_database_that_cannot_be_read_says_why_and_the_run_is_kept(tmp_path: Path) -> None:
    data = _data_folder(tmp_path)
    (data / "db" / "sessions.db-wal").unlink()
    (data / "db" / "sessions.db").write_bytes(b"SQLite format 3\x00" + b"\x07" * 5000)  # not a database after all
    sub = _runs(data)[f"cline.{SUB}"]
    assert sub.outcome is Outcome.unknown and "session_status" not in sub.metadata
    assert sub.metadata["session_status_unread"].startswith(str(data / "db" / "sessions.db") + ": ")
