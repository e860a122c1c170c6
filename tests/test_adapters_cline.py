"""Cline task folders (``.../saoudrizwan.claude-dev/tasks/<task id>/``), read from real files users committed
(trimmed: tests/fixtures/cline/.r28/README.md)."""

from __future__ import annotations

import base64
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
ROO = REAL / "ac8aa7b4-319c-4925-a139-4f4adca81921"  # Roo Code, results as text (before native tool calls)
ORCHESTRATOR = REAL / "bc93a6f7-cd2e-4686-a832-46e3cd14d338"


def test_a_task_folder_is_one_run_with_its_task_steps_model_and_cost() -> None:
    run = only(ACCEPTED)
    assert run.trajectory_id == "cline.1769053680585"  # the task id inside the exported folder's name
    assert run.task.startswith("You have been given a Dockerized codebase for an unfinished 3D multiplayer Unity")
    assert "<environment_details>" not in run.task and "task_progress" not in run.task
    assert run.model_id == "claude-sonnet-4-5-20250929" and run.tool_versions == {"cline": "3.51.0"}
    assert run.created_at.isoformat() == "2026-01-22T03:48:00.628000+00:00"  # the first UI message
    assert [s.action for s in run.steps] == ["read_file", "execute_command", "execute_command", "respond"]
    read, uuidgen, _, completion = run.steps
    # attempt_completion, as Cline 4.x's submit_and_exit: a respond step, its result the run's closing answer
    assert completion.arguments["content"].startswith("I have successfully secured") and completion.observation is None
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
    completion = next(s for s in later.steps if s.action == "respond"
                      and s.arguments["content"].startswith("## Marine Response Application"))
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


def test_a_folder_not_named_for_its_task_gets_the_same_id_however_it_is_named(tmp_path: Path) -> None:
    """The real MRA history was committed at its repository's root: read from two checkouts, one run, not two."""
    ids = set()
    for name in ("MRA04242026", "my-clone"):
        shutil.copytree(LATER, tmp_path / name)
        ids.add(only(tmp_path / name).trajectory_id)
    assert ids == {"cline.1777073160794"}  # the first message's ts
    roo = tmp_path / "checkout"  # Roo Code 2026 keeps the task's id in history_item.json (TaskHistoryStore.ts)
    shutil.copytree(ROO, roo)
    (roo / "history_item.json").write_text(json.dumps({"id": ROO.name, "number": 1, "ts": 1755635332532,
                                                       "task": "Bonjour", "tokensIn": 0, "tokensOut": 0}))
    assert only(roo).trajectory_id == f"cline.{ROO.name}"


def test_a_task_that_ended_on_the_providers_error_is_an_infra_error(tmp_path: Path) -> None:
    folder = tmp_path / "1769064454592"
    shutil.copytree(REAL / "1769064454592", folder)
    failed = json.loads((REAL / "ui-only" / "ui_messages.json").read_text())[-1]  # a real api_req_failed ask
    (folder / "ui_messages.json").write_text(json.dumps([failed]))
    run = only(folder)
    assert run.outcome is Outcome.infra_error and run.metadata["ended_by"] == "api_req_failed"
    assert run.failure.error.startswith("Failed to create stream: inference request failed")


def test_a_ui_log_renamed_is_refused_naming_the_file_that_holds_the_run(tmp_path: Path) -> None:
    shutil.copy(REAL / "ui-only" / "ui_messages.json", tmp_path / "ui_messages2.json")  # as CoreGems/Cline-Xray has
    with pytest.raises(ValueError, match="ingest the whole task folder .*, or save this file as ui_messages.json"):
        list(read_dump(tmp_path / "ui_messages2.json"))


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
    ({"version": 3, "messages": []}, "Roo Code's since 2026 {\"version\": 2, \"messages\": [...]}; found an object"),
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
    """Roo Code (and Kilo Code) keep the same folder; the real Roo tasks found are from before native tool calls,
    so these result texts are the ones its source writes (RooCodeInc/Roo-Code @ cb836567: ``Task.ts`` wraps the task
    in ``<user_message>``, ``responses.ts`` states errors and denials as JSON, ``ExecuteCommandTool.ts`` words a
    command's result)."""
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
    shutil.copy(REAL / "ui-only" / "ui_messages.json", tmp_path / "ui_messages.json")  # another task's UI alone
    results = list(read_dump(tmp_path))
    assert sorted(r.trajectory.trajectory_id for r in results if r.ok) == \
        sorted([only(Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "full-session-five.jsonl")
                .trajectory_id, "cline.1777073160794", "cline.1767644899093"])
    [error] = [r.error for r in results if not r.ok]
    assert "package.json: unrecognised dump format" in error


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


def test_roo_codes_result_headers_answer_their_calls() -> None:
    """Roo Code says more between the tool's name and ``] Result:`` (``[read_file for 'x'. Reading multiple files at
    once is ...]``, ``[switch_mode to 'orchestrator' because: ...]``, ``[new_task completed] Result: <the subtask's
    report>`` then ``[new_task in 💻 Code mode: '...']``): each answers its call, none is the user's words."""
    run = only(ROO)
    by = {}
    for s in run.steps:
        by.setdefault(s.action, []).append(s)
    assert by["read_file"][0].observation.startswith("<files>\n<file><path>mcps/internal/servers/roo-state-manager")
    assert by["switch_mode"][0].observation.startswith("Successfully switched from 💻 Code mode to 🪃 Orchestrator")
    reported = [s.observation.split("\n", 1)[0] for s in by["new_task"] if s.observation]
    assert reported == ["# 📋 RAPPORT DE CONFORMITÉ - Audit des corrections de troncature",
                        "# Mission de Finalisation Critique - Points Restants Post-Audit : ACCOMPLIE"]
    # the subtasks the user resumed the task from by hand, and the last, got no result
    assert [s.error for s in run.steps if s.error] == [
        "tool call never finished (no result recorded: the task stopped while it ran)"] * 2
    prompts = run.metadata["user_prompts"]
    assert not [p for p in prompts if p.startswith(("[read_file", "[switch_mode", "[new_task", "<files>", "Successf"))]
    assert prompts[0].startswith("Je te passe en mode Code")  # the feedback on the completion before the summary


def test_clines_own_new_task_header_answers_its_call(tmp_path: Path) -> None:
    """Cline's ``new_task`` result is ``[new_task for creating a new task] Result:`` (cline/cline
    ``ToolResultUtils.ts`` toolDescription)."""
    folder = tmp_path / "1733000000000"
    folder.mkdir()
    history = [{"role": "user", "content": [{"type": "text", "text": "<task>\nsplit the work\n</task>"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "<new_task>\n<context>do X</context>\n"
                                                  "</new_task>"}]},
               {"role": "user", "content": [{"type": "text", "text": "[new_task for creating a new task] Result:"},
                                            {"type": "text", "text": "The user has created a new task with the "
                                                                     "provided context."}]}]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert run.steps[0].error is None and run.steps[0].observation.startswith("The user has created a new task")
    assert "user_prompts" not in run.metadata


def test_a_tools_output_quoting_a_users_words_is_output_not_a_prompt(tmp_path: Path) -> None:
    """A real MCP tool's output (a conversation tree of past tasks) quotes their ``<user_message>``s."""
    tree = only(ROO).steps[0]  # after the condensing summary Roo Code wrote as the assistant's, no step since round 35
    assert tree.action == "use_mcp_tool" and tree.observation.startswith("Conversation Tree (Mode: chain)")
    assert "<user_message>\n    | Mais non tu perds la boule" in tree.observation
    assert not [p for p in only(ROO).metadata["user_prompts"] if "tu perds la boule" in p]
    folder = tmp_path / "1733000000000"  # a file read before native tool calls: its text in the block after
    folder.mkdir()
    notes = "# Notes\nCline wraps replies as <feedback>\nlike this\n</feedback> in its prompts."
    history = [{"role": "user", "content": [{"type": "text", "text": "<task>\nread the notes\n</task>"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "<read_file>\n<path>notes.md</path>\n"
                                                  "</read_file>"}]},
               {"role": "user", "content": [{"type": "text", "text": "[read_file for 'notes.md'] Result:"},
                                            {"type": "text", "text": notes}]}]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert run.steps[0].observation == notes and "user_prompts" not in run.metadata


def test_a_result_no_pending_call_of_its_tool_takes_is_passed_over(tmp_path: Path) -> None:
    """The orchestrator's ``use_mcp_tool`` tag was cut off (``[Response interrupted ...]``), so no call of it is in the
    history; its error result must not land on the ``new_task`` still pending (here with its subtask's results
    taken out, as a task whose subtask never reported would be)."""
    folder = tmp_path / ORCHESTRATOR.name
    shutil.copytree(ORCHESTRATOR, folder)
    refused = 'Tool "use_mcp_tool" is not allowed in orchestrator mode.'
    history = json.loads((folder / "api_conversation_history.json").read_text())
    assert only(folder).steps[3].observation.startswith("J'ai identifié et corrigé la boucle infinie")
    history = [m for m in history if not str(m["content"][0].get("text")).startswith("[new_task ")]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert not [s for s in run.steps if s.error == refused]
    assert run.steps[3].action == "new_task" and run.steps[3].error.startswith("tool call never finished")


def test_a_call_pending_when_the_task_was_resumed_takes_no_later_result(tmp_path: Path) -> None:
    """The real MRA task: its first question was interrupted (``[TASK RESUMPTION]``, no answer), and later questions
    were answered; each answer is its own question's, not the interrupted one's."""
    folder = tmp_path / LATER.name
    shutil.copytree(LATER, folder)
    history = json.loads((folder / "api_conversation_history.json").read_text())
    at = next(n for n, m in enumerate(history) if str(m["content"][0].get("text")).startswith("[TASK RESUMPTION]"))
    history[at + 1:at + 1] = [  # as the task goes on at its message 47
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t47", "name": "ask_followup_question",
                                           "input": {"question": "## Phase 1: Storage Refactor - Complete"}}]},
        {"role": "user", "content": [{"type": "text", "text": "[ask_followup_question for '## Phase 1: Storage "
                                      "Refactor - Complete'] Result:\n<answer>\nApproved - Proceed to Phase 2: Auth "
                                      "Refactor\n</answer>"}]}]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    asks = [s for s in only(folder).steps if s.action == "respond"
            and s.arguments["content"].startswith(("I've analyzed the codebase", "## Phase 1"))]  # the questions
    assert [s.observation for s in asks] == [None, "Approved - Proceed to Phase 2: Auth Refactor"]  # bare


def test_a_roo_tasks_folder_reads_each_task_and_passes_over_roos_own_files(tmp_path: Path) -> None:
    """Roo Code 2026 writes ``tasks/<id>/history_item.json`` and ``tasks/_index.json`` (``globalFileNames.ts``)."""
    tasks = tmp_path / "tasks"
    for folder in (ROO, ORCHESTRATOR):
        shutil.copytree(folder, tasks / folder.name)
        (tasks / folder.name / "history_item.json").write_text(json.dumps({"id": folder.name, "ts": 1, "task": "x"}))
    (tasks / "_index.json").write_text(json.dumps({"version": 1, "entries": []}))
    results = list(read_dump(tasks))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert sorted(r.trajectory.trajectory_id for r in results) == [f"cline.{ROO.name}", f"cline.{ORCHESTRATOR.name}"]


def test_roo_codes_v2_history_reads_as_the_same_steps(tmp_path: Path) -> None:
    """Roo Code since PR #11386 saves ``{"version": 2, "messages": [...]}`` with the AI SDK's parts; here the real
    Roo task converted as its ``anthropicToRoo.ts`` converts (``tool-call`` parts, ``tool`` messages of
    ``tool-result``, a reasoning item of its own): the same run."""
    folder = tmp_path / "0b9f4c2e-6a1d-4f0e-9a53-2d1c7e8b9a10"
    folder.mkdir()
    calls = [("c1", "execute_command", {"command": "npm test"}), ("c2", "attempt_completion", {"result": "Fixed."})]
    outputs = ["Command executed in terminal within working directory '/w'. Command execution was not successful, "
               "inspect the cause and adjust as needed.\nExit code: 1\nOutput:\nError: Cannot find module 'jest'",
               "<user_message>\nthe tests still fail\n</user_message>"]
    messages: list = [{"role": "user", "content": [{"type": "text", "text": "<user_message>\nfix the tests\n"
                                                                            "</user_message>"}], "ts": 1769000000000}]
    for (call_id, name, args), output in zip(calls, outputs):
        messages.append({"type": "reasoning", "encrypted_content": "gAAA", "summary": [
            {"type": "summary_text", "text": f"Next: {name}."}]})
        messages.append({"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": call_id, "toolName": name, "input": args}]})
        messages.append({"role": "tool", "content": [{"type": "tool-result", "toolCallId": call_id, "toolName": name,
                                                      "output": {"type": "text", "value": output}}]})
    (folder / "api_conversation_history.json").write_text(json.dumps({"version": 2, "messages": messages}))
    run = only(folder)
    assert [(s.action, s.error) for s in run.steps] == [
        ("execute_command", "Error: Cannot find module 'jest' (exit code 1)"), ("respond", None)]
    assert run.steps[0].thought == "Next: execute_command." and run.steps[0].arguments == {"command": "npm test"}
    assert run.outcome is Outcome.unknown and run.metadata["user_prompts"] == ["the tests still fail"]


def test_roo_codes_v2_image_result_is_named_not_dropped(tmp_path: Path) -> None:
    """A v2 ``tool-result`` whose ``output`` is the AI SDK's ``content`` (a text and an ``image-data`` part, as
    provider-utils' ``content-part.ts`` types it; built by hand): the image was dropped, now named as a placeholder
    (the AI SDK readers share one decoder of these outputs)."""
    folder = tmp_path / "0b9f4c2e-6a1d-4f0e-9a53-2d1c7e8b9a11"
    folder.mkdir()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(2000)).decode()
    (folder / "api_conversation_history.json").write_text(json.dumps({"version": 2, "messages": [
        {"role": "user", "content": [{"type": "text", "text": "<user_message>\nlook at it\n</user_message>"}]},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "c1", "toolName": "read_file", "input": {"path": "a.png"}}]},
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "c1", "toolName": "read_file", "output": {
            "type": "content", "value": [{"type": "text", "text": "a.png"},
                                         {"type": "image-data", "data": png, "mediaType": "image/png"}]}}]}]}))
    [read] = [s for s in only(folder).steps if s.action == "read_file"]
    assert read.observation == "a.png\n[image/png, 3 KB base64]"


def test_a_completion_cline_did_not_run_is_no_success(tmp_path: Path) -> None:
    """Parallel calls: Cline ran the command and skipped the completion (``Tool [attempt_completion] was not
    executed because ...``); the task ended there."""
    folder = tmp_path / "1769000000000"
    folder.mkdir()
    history = [{"role": "user", "content": [{"type": "text", "text": "<task>\nfix it\n</task>"}]},
               {"role": "assistant", "content": [
                   {"type": "tool_use", "id": "a", "name": "execute_command", "input": {"command": "npm test"}},
                   {"type": "tool_use", "id": "b", "name": "attempt_completion", "input": {"result": "Fixed."}}]},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "a", "content": "[execute_command for 'npm test'] Result:\n"
                    "Command failed with exit code 1.\nOutput:\n1 failing"},
                   {"type": "tool_result", "tool_use_id": "b", "content": "Tool [attempt_completion] was not executed "
                    "because a tool has already been used in this message. Only one tool may be used per message."}]}]
    (folder / "api_conversation_history.json").write_text(json.dumps(history))
    run = only(folder)
    assert run.steps[-1].error == "not run: a tool has already been used in this message"
    assert run.outcome is Outcome.unknown


def test_a_task_metadata_file_alone_is_refused_naming_the_file_that_holds_the_run(tmp_path: Path) -> None:
    folder = tmp_path / "1769053680585"
    folder.mkdir()
    shutil.copy(ACCEPTED / "task_metadata.json", folder)
    [result] = list(read_dump(folder))
    assert not result.ok and "metadata of a task (task_metadata.json), without the api_conversation_history.json" \
        in result.error


# A task's ui_messages.json committed without its history (4 of the 7 real Cline files found on GitHub): the run as the
# UI showed it (tests/fixtures/cline/.r28ui/README.md).
UI_ONLY = Path(__file__).parent / "fixtures" / "cline" / ".r28ui"


def test_a_lone_ui_log_is_read_as_the_run_it_records() -> None:
    run = only(UI_ONLY / "mcp-vscode-server")
    assert run.trajectory_id == "cline.1760534080239" == only(UI_ONLY / "mcp-vscode-server" / "ui_messages.json") \
        .trajectory_id  # the first message's ts, as the folder's run gets it
    assert run.task.startswith("我要做一个mcp server，使用typescript语言。")
    assert [s.action for s in run.steps] == [
        "list_files", "load_mcp_documentation", "read_file", "respond", *["execute_command"] * 5,
        "write_to_file", "respond", "list_files", "read_file", "use_mcp_tool", "execute_command",
        "respond", "use_mcp_tool", "respond"]
    listed, build, mcp = run.steps[0], run.steps[8], run.steps[13]
    assert listed.arguments == {"path": "mcp-vscode-server"} and listed.observation == "No files found."
    assert build.arguments["command"].endswith("npm install") and "error TS18048" in build.error  # its output's end
    written = run.steps[9]  # an existing file written whole (no SEARCH block): write_to_file, as the history names it
    assert written.arguments["content"].startswith("# VSCode Commands MCP Server") and written.thought.startswith("太棒了")
    assert mcp.arguments["toolName"] == "open_explorer" and "VSCode extension is not connected" in mcp.error
    assert run.metadata["user_prompts"][0].startswith("非常好，但是我想要使用api的方法来实现")  # feedback on a completion
    assert run.outcome is Outcome.unknown  # its last call is no completion
    assert "ui_messages.json alone" in run.metadata["read_from"] and run.metadata["api_requests"] > 0
    xray = only(UI_ONLY / "Cline-Xray")  # the task as a say of kind task (Cline 3.5x), the model from modelInfo
    assert xray.task.startswith("in my jiras->list UI") and xray.model_id == "claude-opus-4-5-20251101"
    assert [s.action for s in xray.steps][-2:] == ["respond", "execute_command"]
    assert xray.steps[1].action == "replace_in_file" and xray.steps[1].arguments["diff"].startswith("------- SEARCH")


def test_a_lone_ui_logs_outcome_is_the_folders_rule(tmp_path: Path) -> None:
    failed = only(UI_ONLY / "fineye")
    assert failed.outcome is Outcome.infra_error and failed.metadata["ended_by"] == "api_req_failed"
    messages = json.loads((UI_ONLY / "mcp-vscode-server" / "ui_messages.json").read_text())
    end = next(n for n, m in enumerate(messages) if m.get("ask") == "completion_result")
    for name, kept in (("accepted", messages[:end + 1]), ("answered", messages[:end + 2])):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ui_messages.json").write_text(json.dumps(kept, ensure_ascii=False))
    accepted, answered = only(tmp_path / "accepted"), only(tmp_path / "answered")
    assert accepted.outcome is Outcome.success and accepted.metadata["outcome_basis"].startswith("attempt_completion")
    assert messages[end + 1]["say"] == "user_feedback" and answered.outcome is Outcome.unknown


def test_a_lone_ui_log_gets_the_id_its_folder_would_where_the_folder_names_its_task(tmp_path: Path) -> None:
    """Ingesting the whole folder later replaces the run rather than adding a second."""
    alone = tmp_path / "tasks" / "1769053680585"  # where Cline keeps it
    alone.mkdir(parents=True)
    shutil.copy(ACCEPTED / "ui_messages.json", alone)
    assert only(alone).trajectory_id == only(ACCEPTED).trajectory_id == "cline.1769053680585"


def test_a_folder_not_named_by_its_task_keeps_its_id_beside_a_ui_log(tmp_path: Path) -> None:
    """The real Roo Code task committed at a repository's root: its id stays the history's first ts, as before
    lone UI logs were read (a store filled then gets no second copy); its UI log alone can only take the UI's."""
    for name in ("checkout", "ui-alone"):
        shutil.copytree(ROO, tmp_path / name / "myproj")
    (tmp_path / "ui-alone" / "myproj" / "api_conversation_history.json").unlink()
    history = json.loads((ROO / "api_conversation_history.json").read_text())
    assert only(tmp_path / "checkout" / "myproj").trajectory_id == f"cline.{history[0]['ts']}" \
        == "cline.1755635332532"
    alone = only(tmp_path / "ui-alone" / "myproj")
    assert alone.trajectory_id == "cline.1755635332197"  # the UI's first message, 335 ms before the request
    # the second todo-list call's JSON holds a raw control character (as the real file does): read, not dropped
    assert [s.action for s in alone.steps] == ["update_todo_list", "update_todo_list", "new_task"]


def test_a_history_that_cannot_be_read_is_an_error_naming_it_not_a_lone_ui_read(tmp_path: Path) -> None:
    folder = shutil.copytree(ACCEPTED, tmp_path / "checkout")
    history = (folder / "api_conversation_history.json").read_text()
    (folder / "api_conversation_history.json").write_text(history[:len(history) // 2])  # cut short
    [result] = list(read_dump(folder))
    assert not result.ok and "api_conversation_history.json: could not be read" in result.error


def test_a_lone_ui_log_is_told_after_a_bom_or_with_its_keys_sorted(tmp_path: Path) -> None:
    messages = json.loads((UI_ONLY / "fineye" / "ui_messages.json").read_text())
    for name, text in (("bom", "\ufeff" + json.dumps(messages)), ("sorted", json.dumps(messages, sort_keys=True))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "ui_messages.json").write_text(text, encoding="utf-8")
        assert only(tmp_path / name).steps == only(UI_ONLY / "fineye").steps


def test_a_lone_ui_logs_browser_and_new_task_calls_are_steps(tmp_path: Path) -> None:
    """As Cline's BrowserToolHandler.ts and NewTaskHandler.ts write them (no real log with them found)."""
    def said(kind: str, text: str, ask: bool = False) -> dict[str, object]:
        return {"ts": 1700000000000 + len(ui), "type": "ask" if ask else "say", "ask" if ask else "say": kind,
                "text": text}
    ui: list[dict[str, object]] = []
    for message in (said("task", "check the page's title"), said("api_req_started", "{}"),
                    said("text", "I will open the site."),
                    said("browser_action_launch", "http://localhost:3000", ask=True),
                    said("browser_action_result", ""),  # the spinner while the page loads
                    said("browser_action_result", json.dumps({"screenshot": "data:image/webp;base64,AAAA",
                                                              "logs": "[error] 404 /favicon.ico",
                                                              "currentUrl": "http://localhost:3000/"})),
                    said("api_req_started", "{}"),
                    said("browser_action", json.dumps({"action": "click", "coordinate": "450,300"})),
                    said("browser_action_result", json.dumps({"logs": "", "currentUrl": "http://localhost:3000/a"})),
                    said("api_req_started", "{}"), said("browser_action", json.dumps({"action": "close"})),
                    said("api_req_started", "{}"), said("new_task", "the context handed on", ask=True),
                    said("user_feedback", "not yet: fix the title first")):
        ui.append(message)
    (tmp_path / "ui_messages.json").write_text(json.dumps(ui))
    run = only(tmp_path)
    launch, click, close, new_task = run.steps
    assert launch.action == click.action == close.action == "browser_action"
    assert launch.arguments == {"action": "launch", "url": "http://localhost:3000"}
    assert launch.thought == "I will open the site."  # the thought of the call, not an answer of its own
    assert launch.observation == "http://localhost:3000/\n[error] 404 /favicon.ico"  # not the screenshot
    assert click.arguments == {"action": "click", "coordinate": "450,300"}
    assert click.observation == "http://localhost:3000/a\n(No new logs)"
    assert close.arguments == {"action": "close"} and close.observation is None
    assert new_task.action == "new_task" and new_task.arguments == {"context": "the context handed on"}
    assert new_task.observation == "not yet: fix the title first"  # the user declined it, as its result says


def test_a_lone_ui_log_under_its_old_name_is_read_alike(tmp_path: Path) -> None:
    shutil.copy(UI_ONLY / "Cline-Xray" / "ui_messages.json", tmp_path / "claude_messages.json")  # before Cline 2.x
    assert only(tmp_path).steps == only(UI_ONLY / "Cline-Xray").steps


def test_a_ui_log_that_is_not_clines_or_opens_without_the_task_gets_a_specific_error(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "ui_messages.json").write_text('[{"id": 1, "label": "OK"}]')  # another tool's file
    [other] = list(read_dump(tmp_path / "other"))
    assert not other.ok and "unrecognised dump format" in other.error
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "ui_messages.json").write_text(json.dumps(
        json.loads((UI_ONLY / "fineye" / "ui_messages.json").read_text())[1:]))  # its first message cut off
    [cut] = list(read_dump(tmp_path / "cut"))
    assert not cut.ok and "ui_messages.json: the first message is not the task" in cut.error
