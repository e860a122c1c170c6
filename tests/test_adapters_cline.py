"""Cline task folders (``.../saoudrizwan.claude-dev/tasks/<task id>/``), read from real files users committed
(trimmed: tests/fixtures/cline/.r28/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import SideFile, read_dump
from trajsearch.model import Outcome

from adapter_support import only

REAL = Path(__file__).parent / "fixtures" / "cline" / ".r28"
ACCEPTED = REAL / "exported_conversation_1769053680585"
LATER = REAL / "1777073160794"


def test_a_task_folder_is_one_run_with_its_task_steps_model_and_cost() -> None:
    run = only(ACCEPTED)
    assert run.trajectory_id == "cline.1769053680585"  # the task id inside the exported folder's name
    assert run.task.startswith("You have been given a Dockerized codebase for an unfinished 3D multiplayer Unity")
    assert "<environment_details>" not in run.task and "task_progress" not in run.task
    assert run.model_id == "claude-sonnet-4-5-20250929" and run.tool_versions == {"cline": "3.51.0"}
    assert run.created_at.isoformat() == "2026-01-22T03:48:00.628000+00:00"  # the first UI message
    assert [s.action for s in run.steps] == ["read_file", "execute_command", "execute_command", "attempt_completion"]
    read, uuidgen, _, _ = run.steps
    assert read.arguments["path"] == "ActionSystem.cs" and read.observation.startswith("using System;")
    assert read.thought.startswith("This is a complex task")  # the thinking block before the call
    # a result without exit code ("Command executed."), read by what its output ends on
    assert uuidgen.error == "bash: uuidgen: command not found"
    assert run.metadata["api_requests"] == 3 and run.metadata["cost_usd"] > 0
    assert run.metadata["files_edited"][0].endswith("BeginTurnGA.cs")


def test_an_accepted_completion_is_a_success_and_one_with_feedback_is_not() -> None:
    run = only(ACCEPTED)
    assert run.outcome is Outcome.success
    assert run.metadata["outcome_basis"] == "attempt_completion, and no feedback from the user after it"
    later = only(LATER)  # its completion got the user's feedback, and the task went on to a plan it never acted on
    assert later.outcome is Outcome.unknown and "outcome_basis" not in later.metadata
    completion = next(s for s in later.steps if s.action == "attempt_completion")
    assert completion.error is None
    assert "What model are you operating at?" in later.metadata["user_prompts"]


def test_exit_codes_denials_and_calls_not_run_are_step_errors() -> None:
    run = only(LATER)
    errors = {s.action: s.error for s in run.steps if s.error}
    assert errors == {"execute_command": "npm error ERESOLVE could not resolve (exit code 1)",
                      "replace_in_file": "not run: denied by the user"}
    assert run.metadata["resumptions"] == 5
    assert run.steps[0].started_at.isoformat() == "2026-04-24T23:26:13.494000+00:00"  # each message's own ts
    skipped = only(REAL / "1769064454592")  # parallel reads, Cline answering all but the first "not executed"
    assert [s.error for s in skipped.steps] == [None] + ["not run: a tool has already been used in this message"] * 3


def test_the_run_id_is_the_task_id_wherever_the_folder_is_read_from(tmp_path: Path) -> None:
    copy = tmp_path / "elsewhere" / LATER.name
    shutil.copytree(LATER, copy)
    assert only(copy).trajectory_id == only(LATER).trajectory_id == "cline.1777073160794"
    assert only(copy / "api_conversation_history.json").trajectory_id == "cline.1777073160794"  # a file of it named


def test_a_task_that_ended_on_the_providers_error_is_an_infra_error(tmp_path: Path) -> None:
    folder = tmp_path / "1769064454592"
    shutil.copytree(REAL / "1769064454592", folder)
    failed = json.loads((REAL / "ui-only" / "ui_messages.json").read_text())[-1]  # a real api_req_failed ask
    (folder / "ui_messages.json").write_text(json.dumps([failed]))
    run = only(folder)
    assert run.outcome is Outcome.infra_error and run.metadata["ended_by"] == "api_req_failed"
    assert run.failure.error.startswith("Failed to create stream: inference request failed")


def test_a_lone_ui_log_is_refused_naming_the_file_that_holds_the_run() -> None:
    [result] = list(read_dump(REAL / "ui-only"))
    assert not result.ok
    assert "UI messages of a task (ui_messages.json), without the api_conversation_history.json" in result.error
    with pytest.raises(ValueError, match="ingest the whole task folder"):
        list(read_dump(REAL / "ui-only" / "ui_messages.json"))


def test_the_tasks_other_files_are_passed_over_and_a_walk_reads_every_task(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    for folder in (ACCEPTED, LATER):
        shutil.copytree(folder, tasks / folder.name)
    (tasks / LATER.name / "settings.json").write_text('{"mode": "act"}')
    (tasks / LATER.name / "focus_chain_taskid_1777073160794.md").write_text("- [ ] a step\n")
    results = list(read_dump(tasks))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert sorted(r.trajectory.trajectory_id for r in results) == ["cline.1769053680585", "cline.1777073160794"]


@pytest.mark.parametrize("history, said", [
    ([], "api_conversation_history.json holds no messages"),
    ({"role": "user"}, "holds no messages (a Cline task's conversation is a JSON array"),
    ([{"role": "assistant", "content": "hi"}], "opens with an assistant message"),
    ([{"role": "user", "content": "hi"}, "oops"], "message 1 is not a {role: user|assistant, content} message"),
    ([{"role": "user", "content": [{"type": "text", "text": "<environment_details>x</environment_details>"}]}],
     "the first user message holds no task text"),
])
def test_a_bad_history_gets_a_specific_error(tmp_path: Path, history, said) -> None:
    folder = tmp_path / "1700000000000"
    folder.mkdir()
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    [result] = list(read_dump(folder))
    assert not result.ok and said in result.error


def test_roo_codes_shapes_are_read_as_clines(tmp_path: Path) -> None:
    """Roo Code (and Kilo Code) keep the same folder; no real Roo history was found, so its result texts are the
    ones its source writes (RooCodeInc/Roo-Code @ cb836567: ``Task.ts`` wraps the task in ``<user_message>``,
    ``responses.ts`` states errors and denials as JSON, ``ExecuteCommandTool.ts`` words a command's result)."""
    folder = tmp_path / "0b9f4c2e-6a1d-4f0e-9a53-2d1c7e8b9a10"
    folder.mkdir()
    calls = [("t1", "execute_command", {"command": "npm test"}),
             ("t2", "read_file", {"path": ".env"}),
             ("t3", "write_to_file", {"path": "a.js"}),
             ("t4", "attempt_completion", {"result": "Fixed."})]
    results = [
        "Command executed in terminal within working directory '/w'. Command execution was not successful, inspect "
        "the cause and adjust as needed.\nExit code: 1\nOutput:\nError: Cannot find module 'jest'",
        '{"status":"error","type":"access_denied","message":"Access blocked by .rooignore","path":".env"}',
        '{"status":"denied","message":"The user denied this operation."}',
        "<user_message>\nthe tests still fail\n</user_message>",
    ]
    history = [{"role": "user", "content": [{"type": "text", "text": "<user_message>\nfix the tests\n</user_message>"},
                                            {"type": "text", "text": "<environment_details>\n# Current Mode\n"
                                             "<slug>code</slug>\n<name>Code</name>\n<model>gemini-2.5-pro</model>\n"
                                             "</environment_details>"}]}]
    for (call_id, name, args), result in zip(calls, results):
        thinking = {"type": "reasoning", "text": f"Next: {name}.", "summary": []}
        call = {"type": "tool_use", "id": call_id, "name": name, "input": args}
        history.append({"role": "assistant", "content": [thinking, call]})
        history.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id,
                                                     "content": result}]})
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert run.trajectory_id == "cline.0b9f4c2e-6a1d-4f0e-9a53-2d1c7e8b9a10" and run.task == "fix the tests"
    assert [s.error for s in run.steps] == ["Error: Cannot find module 'jest' (exit code 1)",
                                            "not run: Access blocked by .rooignore",
                                            "not run: denied by the user", None]
    assert run.steps[0].observation == "Error: Cannot find module 'jest'"
    assert run.steps[0].thought == "Next: execute_command." and run.model_id == "gemini-2.5-pro"
    assert run.outcome is Outcome.unknown and run.metadata["user_prompts"] == ["the tests still fail"]


def test_versions_before_native_tool_calls_xml_tags_and_results_in_blocks_of_their_own(tmp_path: Path) -> None:
    """Cline before native tool calls (cline/cline @ ee9c865c, ``src/core/Cline.ts``): the call an XML tag in the
    assistant's text, the result the ``[tool for 'x'] Result:`` line and then its text in a block of its own."""
    folder = tmp_path / "1733000000000"
    test_output = ("Command executed.\nOutput:\n1 failing\n\n  1) adds:\n     AssertionError: expected 4 to equal 5"
                       "\n\nnpm ERR! Test failed.  See above for more details.")
    write_error = ("The tool execution failed with the following error:\n<error>\nError writing file: EACCES: "
                       "permission denied, open 'add.js'\n</error>")
    folder.mkdir()
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nrun the tests\n</task>"},
                                     {"type": "text", "text": "<environment_details>\n</environment_details>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "<thinking>Run them first.</thinking>\n\n"
                                           "<execute_command>\n<command>npm test</command>\n"
                                           "<requires_approval>false</requires_approval>\n</execute_command>"}]},
        {"role": "user", "content": [{"type": "text", "text": "[execute_command for 'npm test'] Result:"},
                                     {"type": "text", "text": test_output},
                                     {"type": "text", "text": "<environment_details>\n</environment_details>"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "<write_to_file>\n<path>add.js</path>\n<content>\n"
                                           "module.exports = (a, b) => a + b\n</content>\n</write_to_file>"}]},
        {"role": "user", "content": [{"type": "text", "text": "[write_to_file for 'add.js'] Result:"},
                                     {"type": "text", "text": write_error}]},
    ]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert [s.action for s in run.steps] == ["execute_command", "write_to_file"]
    test, write = run.steps
    assert test.arguments == {"command": "npm test", "requires_approval": "false"}
    assert test.thought == "<thinking>Run them first.</thinking>"
    assert test.error == "AssertionError: expected 4 to equal 5" and test.observation.startswith("1 failing")
    assert write.arguments["path"] == "add.js"
    assert write.error == "Error writing file: EACCES: permission denied, open 'add.js'"


def test_only_the_tasks_own_files_are_passed_over_beside_its_history(tmp_path: Path) -> None:
    folder = tmp_path / LATER.name
    shutil.copytree(LATER, folder)
    (folder / "context_history.json").write_text("[]")
    session = Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "full-session-five.jsonl"
    shutil.copy(session, folder)  # another agent's run that happens to lie there: read as its own
    (folder / "package.json").write_text('{"name": "app"}')  # no file of Cline's: not passed over as one
    shutil.copy(REAL / "ui-only" / "ui_messages.json", tmp_path / "ui_messages.json")  # not a task's: refused
    results = list(read_dump(tmp_path))
    assert sorted(r.trajectory.trajectory_id.split(".")[0] for r in results if r.ok) == ["claude-code", "cline"]
    errors = sorted(r.error for r in results if not r.ok)
    assert len(errors) == 2 and "package.json: unrecognised dump format" in errors[0]
    assert "ingest the whole task folder" in errors[1]


def test_the_ui_messages_old_name_is_read_alike(tmp_path: Path) -> None:
    folder = tmp_path / ACCEPTED.name
    shutil.copytree(ACCEPTED, folder)
    (folder / "ui_messages.json").rename(folder / "claude_messages.json")  # before Cline 2.x
    assert only(folder).metadata["api_requests"] == 3


def test_new_instructions_after_a_completion_take_its_success_back(tmp_path: Path) -> None:
    folder = tmp_path / ACCEPTED.name
    shutil.copytree(ACCEPTED, folder)
    history = json.loads((folder / "api_conversation_history.json").read_text())
    history.append({"role": "user", "content": [  # Cline's resumption of a completed task (responses.ts), with words
        {"type": "text", "text": "[TASK RESUMPTION] This task was interrupted 2 hours ago. It may or may not be "
                                 "complete, so please reassess the task context."},
        {"type": "text", "text": "New instructions for task continuation:\n<user_message>\nnow add a test for "
                                 "BeginTurnGA\n</user_message>"}]})
    history.append({"role": "assistant", "content": [{"type": "text", "text": "I'll add the test next."}]})
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert run.outcome is Outcome.unknown and run.metadata["user_prompts"] == ["now add a test for BeginTurnGA"]
    assert run.steps[-1].action == "respond"
