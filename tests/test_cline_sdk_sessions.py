"""Cline 4.x and the Cline CLI: ``~/.cline/data/sessions/<id>/<id>.messages.json``, read from files the real CLI
wrote and one the Cline team committed (tests/fixtures/cline/.aud31/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from adapter_support import only, runs

SESSIONS = Path(__file__).parent / "fixtures" / "cline" / ".aud31" / "sessions"
FIXED = SESSIONS / "1796629670996_c5s1h"
DELEGATED = SESSIONS / "1796629691264_utjj7"


def test_a_walk_of_the_sessions_folder_reads_each_session_and_passes_over_their_manifests() -> None:
    results = list(read_dump(SESSIONS))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert sorted(r.trajectory.trajectory_id for r in results) == [
        "cline.1784094124598_rruoq", "cline.1796629670996_c5s1h", "cline.1796629691264_utjj7",
        "cline.1796629691264_utjj7__agent_1796629692137_qkcs87", "cline.1796629753671_hz7r2"]


def test_a_walk_of_a_home_folder_reads_clines_data_folder_and_passes_over_its_state(tmp_path: Path) -> None:
    """``~/.cline/data`` (``legacy-state-reader.ts``): ``sessions/`` (4.x), ``tasks/`` (3.x outside VS Code), and
    Cline's own ``globalState.json``, ``secrets.json``, ``state/``, ``settings/``."""
    data = tmp_path / "home" / ".cline" / "data"
    shutil.copytree(FIXED, data / "sessions" / FIXED.name)
    task = Path(__file__).parent / "fixtures" / "cline" / ".r28" / "1777073160794"
    shutil.copytree(task, data / "tasks" / task.name)
    for name, said in (("globalState.json", {"apiProvider": "anthropic"}), ("secrets.json", {}),
                       ("state/taskHistory.json", []), ("settings/cline_mcp_settings.json", {"mcpServers": {}})):
        (data / name).parent.mkdir(exist_ok=True)
        (data / name).write_text(json.dumps(said))
    for walked in (tmp_path / "home", data):
        assert sorted(r.trajectory_id for r in runs(walked)) == ["cline.1777073160794", "cline.1796629670996_c5s1h"]


def test_a_session_is_one_run_named_by_its_session_id_with_its_task_steps_and_usage(tmp_path: Path) -> None:
    run = only(FIXED / "1796629670996_c5s1h.messages.json")
    assert run.task == "Fix the failing test in test_calc.py"  # without the <user_input mode="act"> wrapper
    assert run.model_id == "fake-coder" and run.metadata["provider"] == "openai-compatible"
    assert run.tool_versions == {"cline": "3.0.65"}
    assert run.metadata["tokens_in"] == 4800 and run.metadata["api_requests"] == 4
    assert [s.action for s in run.steps] == ["run_commands", "read_files", "run_commands", "respond"]
    test, read, grep, _ = run.steps
    assert test.thought.startswith("I should run the tests first.")
    assert test.error == "AssertionError: add(2, 3) != 5 (exit code 1)"  # the shared exit-code rule
    assert read.error.startswith("Error reading file: ENOENT") and read.observation.startswith("Error reading")
    assert grep.error is None  # grep's exit 1 with no output: no match, not a failure
    copy = tmp_path / "elsewhere"
    shutil.copytree(FIXED, copy)
    assert only(copy).trajectory_id == run.trajectory_id == "cline.1796629670996_c5s1h"


def test_a_teams_session_reads_its_prompts_and_operation_results() -> None:
    run = only(SESSIONS / "1784094124598_rruoq")
    assert run.task.startswith("can you update @apps/examples/desktop-app/webview/components/agent-sidebar.tsx")
    assert run.model_id == "anthropic/claude-opus-4.8-fast" and run.metadata["cost_usd"] > 0
    first, second = run.metadata["user_prompts"]  # the later prompts, unwrapped
    assert first == "can you make the filter icon smaller?" and second.startswith("awesome! the Sessions button")
    edit, read = run.steps[:2]
    assert edit.action == "editor" and edit.observation.startswith("Edited /Users/example/dev/cline/apps")
    assert read.action == "read_files" and read.observation.startswith("462 | \tchildren: ReactNode;")


def test_a_sub_agents_session_is_its_own_run_linked_to_its_parent() -> None:
    lead, child = sorted(runs(DELEGATED), key=lambda r: len(r.trajectory_id))
    assert [s.action for s in lead.steps] == ["spawn_agent", "respond"] and not lead.metadata.get("is_subagent")
    assert child.task == "List the files for the lead."
    assert child.metadata["is_subagent"] is True and child.metadata["parent_session_id"] == "1796629691264_utjj7"
    assert child.steps[0].observation == "calc.py\ntest_calc.py"


def test_a_session_that_ended_on_the_providers_error_is_an_infra_error_not_an_answer() -> None:
    run = only(SESSIONS / "1796629753671_hz7r2")
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "Invalid request: tool schema rejected by the provider"
    assert run.steps == []  # the error is not the model's answer


def test_a_roo_code_subtask_names_its_parent_and_the_parent_its_subtasks(tmp_path: Path) -> None:
    """Roo Code 3.5x's history_item.json (``packages/types/src/history.ts``): ``parentTaskId``, ``childIds``."""
    real = Path(__file__).parent / "fixtures" / "cline" / ".r28"
    parent, child = real / "bc93a6f7-cd2e-4686-a832-46e3cd14d338", real / "ac8aa7b4-319c-4925-a139-4f4adca81921"
    for folder, item in ((parent, {"childIds": [child.name]}), (child, {"parentTaskId": parent.name,
                                                                         "rootTaskId": parent.name})):
        shutil.copytree(folder, tmp_path / folder.name)
        (tmp_path / folder.name / "history_item.json").write_text(json.dumps(
            {"id": folder.name, "number": 1, "ts": 1755635332532, "task": "x", "tokensIn": 0, "tokensOut": 0,
             "totalCost": 0, **item}))
    lead, sub = only(tmp_path / parent.name), only(tmp_path / child.name)
    assert lead.metadata["subagent_sessions"] == [child.name] and not lead.metadata.get("is_subagent")
    assert sub.metadata["is_subagent"] is True and sub.metadata["parent_session_id"] == parent.name
