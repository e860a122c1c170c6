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
        "cline.1796629691264_utjj7__agent_1796629692137_qkcs87", "cline.1796629753671_hz7r2",
        "cline.1796630362512_jfjr6"]


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


DATA = SESSIONS.parent  # the real ~/.cline/data cline@3.0.65 wrote: sessions/ beside cache/, locks/, logs/, settings/


def test_a_walk_of_clines_real_data_folder_reads_the_sessions_and_passes_over_its_own_folders() -> None:
    """cline@3.0.65's own files (``cache/feature-flags.json``, ``locks/hub/...``, ``logs/hooks.jsonl``,
    ``settings/providers.json``) were rejected as unrecognised dumps."""
    results = list(read_dump(DATA))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert len(results) == 6


def test_a_pre_august_2026_sub_agent_file_named_by_its_root_is_its_own_run(tmp_path: Path) -> None:
    """Before cline/cline accd7e5809 a sub-agent's (teammate's) file said ``sessionId: <root id>``, no ``origin``."""
    folder = shutil.copytree(DELEGATED, tmp_path / DELEGATED.name)
    child = folder / "agent_1796629692137_qkcs87.messages.json"
    said = json.loads(child.read_text())
    said["sessionId"] = DELEGATED.name
    del said["origin"]
    child.write_text(json.dumps(said))
    lead, sub = sorted(runs(folder), key=lambda r: len(r.trajectory_id))
    assert lead.trajectory_id == "cline.1796629691264_utjj7"
    assert sub.trajectory_id == "cline.1796629691264_utjj7__agent_1796629692137_qkcs87"
    assert sub.metadata["parent_session_id"] == DELEGATED.name and sub.metadata["is_subagent"] is True
    assert lead.metadata["subagent_sessions"] == ["1796629691264_utjj7__agent_1796629692137_qkcs87"]


def test_a_cline_3_task_folder_without_its_ui_log_claims_no_token_counts() -> None:
    """Cline 3.x's history has ``metrics`` of its own shape (``tokens: {prompt, completion}``): not 4.x's."""
    run = only(Path(__file__).parent / "fixtures" / "cline" / ".r28" / "1777073160794")
    assert "tokens_in" not in run.metadata and "api_requests" not in run.metadata


def test_a_session_cline_cancelled_or_ended_on_an_error_says_so_from_its_manifest(tmp_path: Path) -> None:
    stopped = only(SESSIONS / "1796630362512_jfjr6")  # real: ``sleep 30`` aborted, manifest status cancelled
    assert stopped.outcome is Outcome.unknown and stopped.metadata["interrupted"] is True
    assert stopped.metadata["session_status"] == "cancelled"
    assert stopped.steps[0].error == "cancelled: Command failed: Command was aborted"  # stopped, not a failure
    failed = shutil.copytree(FIXED, tmp_path / FIXED.name)  # an error written into no message (MAX_TOKENS ...)
    manifest = failed / f"{FIXED.name}.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "status": "failed", "exit_code": 1}))
    run = only(failed)
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "Cline ended the session on an error (manifest status failed, exit code 1)"
    assert only(FIXED).outcome is Outcome.unknown and "interrupted" not in only(FIXED).metadata  # completed


def test_clines_own_reminders_and_notices_are_not_the_users_prompts(tmp_path: Path) -> None:
    """``addUserReminderMessage`` (``userRunSpan: 0``, no kind), ``metadata.kind`` notices; a message the user
    queued while the run went on (``consumePendingUserMessage``: ``userRunSpan: 0`` too) is the user's."""
    session = shutil.copytree(FIXED, tmp_path / FIXED.name) / f"{FIXED.name}.messages.json"
    said = json.loads(session.read_text())
    said["messages"][1:1] = [
        {"role": "user", "content": [{"type": "text", "text": "[SYSTEM] This run is not complete until you call one "
                                      "of these terminal completion tools: submit_and_exit."}],
         "metadata": {"userRunSpan": 0}},
        {"role": "user", "content": [{"type": "text", "text": "Also check calc.py"}], "metadata": {"userRunSpan": 0}},
        {"role": "user", "content": "Loop detected", "metadata": {"kind": "loop_detection_notice"}}]
    said["messages"].append({"role": "user", "content": "[SYSTEM] Too many mistakes; stopping.",
                             "metadata": {"kind": "mistake_stop_notice"}})
    session.write_text(json.dumps(said))
    run = only(session)
    assert run.metadata["user_prompts"] == ["Also check calc.py"]
    assert run.outcome is Outcome.failure and run.failure.error == "mistake limit reached"


def test_a_bad_session_file_is_named_in_its_error(tmp_path: Path) -> None:
    """``writeEmptyMessagesFile`` writes ``messages: []`` at every session's start."""
    said = json.loads((FIXED / f"{FIXED.name}.messages.json").read_text())
    for name, messages in (("empty", []), ("junk", [1])):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.messages.json").write_text(json.dumps({**said, "messages": messages}))
    empty, junk = (next(iter(read_dump(tmp_path / n))) for n in ("empty", "junk"))
    assert "empty.messages.json: a Cline session with no messages yet" in empty.error
    assert "junk.messages.json: message 0 is not a" in junk.error and "api_conversation" not in junk.error


def test_submit_and_exit_is_the_runs_closing_answer_and_ask_question_a_turn_the_user_answered(tmp_path: Path) -> None:
    """``@cline/core``'s ``submit_and_exit`` (``summary``, ``verified``: ends the run; the CLI answers "Submission
    recorded (verified): ...", ``apps/cli/src/utils/approval.ts``) and ``ask_question`` (``question``, ``options``:
    the user's choice is the result): words to the user, not tools. A session the real CLI wrote, with those two
    calls appended as ``definitions.ts`` shapes them (no real session holding them was found). The manifest says
    ``completed``, which Cline writes for every run not stopped: the submission is no verdict."""
    folder = tmp_path / FIXED.name
    shutil.copytree(FIXED, folder)
    session = folder / f"{FIXED.name}.messages.json"
    said = json.loads(session.read_text())
    def call(cid: str, name: str, args: dict, result: str) -> list[dict]:
        return [{"role": "assistant", "ts": 1796629673000, "content": [
                    {"type": "tool_use", "id": cid, "name": name, "input": args}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "name": name,
                                              "content": result}]}]
    said["messages"] += call("c8", "ask_question", {"question": "Keep going?", "options": ["yes", "no"],
                                                    "content": "a stray argument"}, "yes") \
        + call("c9", "ask_question", {"question": "Fix add or the test?",
                                      "options": ["add", "the test"]}, "add") \
        + call("c10", "submit_and_exit", {"summary": "add now returns a + b; the test passes.", "verified": True},
               "Submission recorded (verified): add now returns a + b; the test passes.")
    session.write_text(json.dumps(said))
    run = only(session)
    stray, ask, submit = run.steps[-3:]
    assert stray.arguments == {"content": "Keep going?", "options": ["yes", "no"]}  # the question, not the argument
    assert ask.action == "respond" and ask.arguments == {"content": "Fix add or the test?",
                                                         "options": ["add", "the test"]}
    assert ask.observation == "add" and ask.error is None
    assert submit.action == "respond" and submit.observation is None and submit.error is None
    assert submit.arguments == {"content": "add now returns a + b; the test passes.", "verified": True}
    assert run.outcome is Outcome.unknown and "ask_question" not in run.tools_used


def test_a_manifest_that_cannot_be_read_leaves_the_run_saying_its_status_was_not_read(tmp_path: Path) -> None:
    """Review RT1, 6: a manifest nested deeper than JSON is read to lost the whole session (``cannot convert cline
    record: RecursionError``), and one cut short (Cline rewrites it at shutdown) said nothing, where a database that
    cannot be read says ``session_status_unread``. Both keep the run and say why its status was not read, in the
    words a bad line of a dump gets (review RT2, 2: "not a JSON object" read as if Cline had written an array)."""
    session = shutil.copytree(FIXED, tmp_path / FIXED.name)
    manifest = session / f"{FIXED.name}.json"
    for text, why in (("[" * 100_000 + "]" * 100_000, "nested"), (manifest.read_text()[:40], "cut short"),
                      ('["completed"]', "not a JSON object")):
        manifest.write_text(text)
        run = only(session)
        assert run.metadata["session_status_unread"].startswith(f"{manifest}: ")
        assert why in run.metadata["session_status_unread"]
        assert "session_status" not in run.metadata
