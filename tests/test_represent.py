"""Representations: what of a run becomes searchable, and the schema kept in sync."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from trajsearch.model import Failure, Trajectory, json_schema
from trajsearch.represent import WindowConfig, decisive_error, represent, row_id

from conftest import failing_run, make_run

ROOT = Path(__file__).resolve().parents[1]


def test_json_schema_file_is_in_sync():
    on_disk = json.loads((ROOT / "schemas" / "trajectory.schema.json").read_text())
    assert on_disk == json_schema(), "regenerate: python -m trajsearch.model > schemas/trajectory.schema.json"


def test_rows_per_level():
    run = failing_run("r1", "ModuleNotFoundError: No module named 'yaml'", env_version="v1")
    rows = represent(run)
    assert [r.level for r in rows] == ["task", "summary", "step", "failure"]
    task, summary, window, failure = rows
    assert task.text == run.task
    assert "Goal: Fix the failing unit test" in summary.text
    assert "Outcome: failure" in summary.text
    assert "ModuleNotFoundError" in summary.text
    assert (window.step_index, window.step_end) == (0, 1)
    assert "pip install -r requirements.txt" in window.text and "python -m app" in window.text
    assert failure.text.startswith("Task: Fix the failing unit test")
    assert "Error: ModuleNotFoundError: No module named 'yaml'" in failure.text
    assert failure.step_index == 1  # points at the step that failed


def test_successful_run_has_no_failure_row():
    rows = represent(make_run("ok"))
    assert "failure" not in {r.level for r in rows}
    summary = rows[1].text
    assert "bash -> edit" in summary and "Outcome: success" in summary


def test_windows_cover_every_step_with_configurable_size_and_stride():
    steps = [("bash", {"command": f"cmd {i}"}, f"out {i}") for i in range(10)]
    run = make_run("w", steps=steps)
    for size, stride in [(2, 2), (3, 2), (5, 3), (4, 1)]:
        windows = [r for r in represent(run, window=WindowConfig(size, stride)) if r.level == "step"]
        covered = sorted({p for w in windows for p in range(w.step_index, w.step_end + 1)})
        assert covered == list(range(10))
        assert all(w.step_end - w.step_index + 1 <= size for w in windows)
        assert all(w.step_index % stride == 0 for w in windows)
        assert [s["index"] for s in windows[0].steps] == list(range(windows[0].step_end + 1))
    with pytest.raises(ValueError):
        WindowConfig(6, 2)
    with pytest.raises(ValueError):
        WindowConfig(3, 4)


def test_long_outputs_are_clipped_keeping_the_error_tail():
    noise = "\n".join(f"collecting item {i}" for i in range(5_000))
    run = make_run("long", steps=[("bash", {"command": "pytest"}, noise + "\nE   KeyError: 'user_id'\n1 failed")])
    window = represent(run)[2]
    assert len(window.text) < 3_000
    assert "KeyError: 'user_id'" in window.text
    assert "chars cut" in window.text


def test_decisive_error_is_extracted_when_no_failure_record():
    traceback = "Traceback (most recent call last):\n  File \"x.py\", line 3, in <module>\nValueError: bad literal"
    run = make_run(
        "t",
        outcome="failure",
        steps=[("bash", {"command": "ls"}, "ok"), ("bash", {"command": "python x.py"}, traceback), ("bash", {"command": "ls"}, "ok")],
    )
    assert decisive_error(run) == ("ValueError: bad literal", 1)
    exit_code = make_run("e", outcome="failure", steps=[("bash", {"command": "make"}, "<returncode>137</returncode>\nKilled")])
    error, position = decisive_error(exit_code)
    assert error.startswith("exit code 137") and position == 0
    nothing = make_run("n", outcome="infra_error", steps=[], metadata={"exit_status": "InternalServerError"})
    assert decisive_error(nothing) == ("run ended with outcome infra_error (exit status InternalServerError) after 0 steps", -1)
    explicit = make_run("x", outcome="failure", failure=Failure(error="quota exceeded", cause="too many calls", fix="batch them"))
    text = represent(explicit)[-1].text
    assert "Cause: too many calls" in text and "Fix: batch them" in text


def test_row_ids_are_deterministic_and_tenant_scoped():
    assert row_id("acme", "r1", "step", 4) == row_id("acme", "r1", "step", 4)
    assert row_id("acme", "r1", "step", 4) != row_id("beta", "r1", "step", 4)
    assert row_id("acme", "r1", "failure", 3) == row_id("acme", "r1", "failure", 7)  # one failure row per run


def test_model_rejects_bad_records():
    with pytest.raises(ValidationError, match="tenant"):
        make_run("r", tenant='acme" or 1')
    with pytest.raises(ValidationError, match="strictly increasing"):
        Trajectory.model_validate({
            "trajectory_id": "r", "tenant": "acme", "task": "t",
            "steps": [{"index": 1}, {"index": 1}],
        })
    with pytest.raises(ValidationError, match="task"):
        Trajectory.model_validate({"trajectory_id": "r", "tenant": "acme", "task": "x" * 20_001})


def test_a_sessions_later_requests_are_searchable(hashing_ts):
    """Bug (real multi-prompt sessions: Claude Code 2.1 resumed twice, OpenHands' replay trajectory): an agent CLI
    keeps a session's later prompts in ``metadata.user_prompts``, and no row held them, so a run could not be found
    by what the user asked after the first prompt."""
    from adapter_support import only

    fixtures = ROOT / "tests" / "fixtures"
    resumed = only(fixtures / "claude-code" / ".real" / "143b8ac3-becf-41e0-a3ab-73a4d00f4b54.jsonl")
    chat = only(fixtures / "openhands" / ".real" / "runtime-trajs" / "basic_interactions.json")
    [summary] = [r for r in represent(chat) if r.level == "summary"]
    assert "Later requests: No, I mean by Goldbach's conjecture! | Finish please" in summary.text
    hashing_ts.add([resumed.model_copy(update={"tenant": "acme"}), chat.model_copy(update={"tenant": "acme"})])
    for asked, run in (("TRIGGER400 summarize everything", resumed), ("mean", chat)):  # words of a later prompt only
        hits = hashing_ts.search(asked, tenant="acme", levels="summary", mode="lexical", k=1)
        assert [h.trajectory_id for h in hits] == [run.trajectory_id]
