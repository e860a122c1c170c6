"""Round 32: Cline 3.x's words to the user read as 4.x's are (``_WORDS``), on real task folders and UI logs
(tests/fixtures/cline/.r28/README.md, .r28ui/README.md); a Cline 4.x sub-agent's outcome from the real sessions.db
beside its session (.cline32/README.md)."""

from __future__ import annotations

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


def test_a_lone_ui_logs_completion_reads_as_the_folders_does() -> None:
    run = only(CLINE / ".r28ui" / "Cline-Xray")
    assert "attempt_completion" not in {s.action for s in run.steps}
    assert run.steps[-2].action == "respond" and run.steps[-2].arguments["content"]


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
