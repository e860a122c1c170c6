"""Qwen Code sessions (``~/.qwen/projects/<project>/chats/<id>.jsonl``) and headless output (``qwen -p
--output-format stream-json|json``), read from files the real, unmodified CLI wrote (``@qwen-code/qwen-code@0.24.4``
against a local fake model server: tests/fixtures/qwen-code/SOURCE.md), and from other versions' real files."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import SideFile, read_dump
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
QWEN = FIXTURES / "qwen-code" / ".real"
PARENT = "59b9c1ae-bd6a-4093-a77d-a45cee05bfb7"
SUBAGENT = QWEN / "subagents" / PARENT / "agent-general-purpose-call_031746_0.jsonl"
NEVER_FINISHED = "tool call never finished (no result recorded: the session stopped while it ran)"


def test_a_session_is_read_with_its_steps_errors_and_later_prompt() -> None:
    run = only(QWEN / "fix-then-continue.jsonl")
    assert detect_format(QWEN / "fix-then-continue.jsonl") == "qwen-code"
    assert run.trajectory_id == "qwen-code.34cc400c-2aff-4b58-a243-98c9d890aec4"
    assert run.task == "fix the failing test in this repo"
    assert run.model_id == "fake-coder" and run.tool_versions == {"qwen-code": "0.24.4"}
    assert run.outcome == Outcome.unknown and run.failure is None
    assert [s.action for s in run.steps] == ["run_shell_command", "read_file", "read_file", "edit",
                                             "run_shell_command", "respond", "write_file", "run_shell_command",
                                             "respond"]
    test, missing, _, edit, rerun, answer, _, grep, _ = run.steps
    assert test.thought == "Run the tests first.\n\nLet me run the tests."  # the thought part, then the narration
    assert test.error == "AssertionError: add(2, 3) != 5 (exit code 1)"  # by the shell result's exitCode
    assert test.observation.startswith("Traceback (most recent call last):")  # the command's output, not the report
    assert missing.error == "File not found: /tmp/p54/qw/run/proj/missing.py"
    assert edit.error is None and edit.arguments["new_string"] == "return a + b"
    assert rerun.error is None and rerun.observation == "ok\nOK"
    assert answer.arguments == {"content": "Fixed: `add` now returns a + b and the test passes."}
    assert grep.error is None  # grep's exit 1 with no output: no match, recorded `success`
    assert run.metadata["user_prompts"] == ["notes: write NOTES.md and look for TODOs"]
    assert test.started_at is not None and test.ended_at >= test.started_at


def test_a_prompt_with_an_at_file_reference_is_the_users_words_and_is_not_taken_for_claude_code() -> None:
    """``explain @calc.py briefly``: the file opens with the CLI's ``at_command`` system record (a Claude Code
    look-alike, which Claude Code's detection took for its own), and the prompt's record holds the file's content
    after the words."""
    path = QWEN / "at-file-reference.jsonl"
    assert detect_format(path) == "qwen-code"
    run = only(path)
    assert run.task == "explain @calc.py briefly"
    assert run.steps[0].action == "run_shell_command"
    assert run.metadata["compactions"] == 1  # `qwen --continue -p "/compress"`, appended to the same file
    # a prompt opening with a path is the user's words, sent to the model: not taken for a slash command
    assert only(QWEN / "path-first-prompt.jsonl").task == "/tmp/p54/qw/run/proj/calc.py has a bug [[apierror]]"
    command = QWEN / "compress-command.stream-json.jsonl"  # that command's own output: the CLI's words, no run
    with pytest.raises(SideFile, match=r"the headless output of a command Qwen Code answered itself \('Context "
                                       r"compressed \(1200 -> ~1073\)\.'\): no model turn, no run"):
        detect_format(command)


def test_a_rewound_turn_is_left_out_of_the_run() -> None:
    """An ACP session (``qwen --acp``, as an editor drives it): two prompts, a rewind to the second's start
    (``qwen/control/session/rewind``), a third prompt. The CLI re-roots its ``parentUuid`` chain; what it undid
    (eight ``echo`` calls) is no step, as it is none of the model's history after the rewind."""
    run = only(QWEN / "acp-rewind.jsonl")
    assert run.task == "[[notes]] write notes"
    assert run.metadata["user_prompts"] == ["[[fix]] fix the test"]
    assert run.metadata["rewound_prompts"] == ["[[loop]] echo some steps"]
    assert not [s for s in run.steps if "echo step" in str(s.arguments)]
    assert [s.action for s in run.steps][:3] == ["write_file", "run_shell_command", "respond"]
    assert run.steps[3].error == "AssertionError: add(2, 3) != 5 (exit code 1)"


def test_a_cut_line_in_a_session_is_reported_and_loses_no_other_record(tmp_path: Path) -> None:
    """A line cut short in the middle of a real session (its 7th, a telemetry record): the reader reports the line and
    hands over the rest, whose next record names the lost one as its parent. The chain went no further back: the
    steps before the cut were dropped as if rewound (8 steps of 9, ``rewound_records`` 6)."""
    lines = (QWEN / "fix-then-continue.jsonl").read_text().splitlines(keepends=True)
    lines[6] = lines[6][:80] + "\n"
    cut = tmp_path / "cut.jsonl"
    cut.write_text("".join(lines))
    results = list(read_dump(cut))
    assert [r.error for r in results if not r.ok] == [
        "malformed JSON: cut short: the line ends inside its JSON value, after column 80"]
    [run] = [r.trajectory for r in results if r.ok]
    assert len(run.steps) == 9 and "rewound_records" not in run.metadata
    assert run.steps[0].error == "AssertionError: add(2, 3) != 5 (exit code 1)"


def test_a_session_whose_first_line_is_longer_than_the_detection_head_is_read() -> None:
    """``qwen -p "<prompt>" < log.txt``: the piped text heads the prompt, the prompt's record an 83 kB first line,
    longer than the 64 KiB detection looks at."""
    path = QWEN / "piped-log-prompt.jsonl"
    assert len(path.read_text().split("\n", 1)[0]) > 64 * 1024
    assert detect_format(path) == "qwen-code"
    run = only(path)
    assert run.task.startswith("log line 1\nlog line 2\n") and run.outcome == Outcome.infra_error


def test_a_session_that_ended_on_an_api_error_is_an_infrastructure_error() -> None:
    run = only(QWEN / "api-error.jsonl")
    assert run.outcome == Outcome.infra_error
    assert run.failure.error == "400 Invalid request: tool schema rejected by the provider"
    assert [(s.action, s.error) for s in run.steps] == [("run_shell_command", None)]


def test_a_context_overflow_the_cli_compressed_away_is_counted_not_the_outcome() -> None:
    run = only(QWEN / "context-overflow-compressed.jsonl")
    assert run.outcome == Outcome.unknown  # the CLI compressed its history and the session went on
    assert run.metadata["compactions"] == 1
    assert len(run.metadata["api_errors"]) == 2
    assert run.metadata["api_errors"][0].startswith("400 This model's maximum context length is 8192 tokens.")
    assert run.steps[0].error == "exit code 3"
    assert run.steps[-1].action == "respond"


def test_a_background_agents_report_joins_its_call_and_its_own_file_is_a_linked_run() -> None:
    parent, child = only(QWEN / "background-agent.jsonl"), only(SUBAGENT)
    call = parent.steps[0]
    assert call.action == "agent" and call.arguments["subagent_type"] == "general-purpose"
    assert call.observation.startswith("Background agent launched successfully.")
    assert call.observation.endswith("add is defined in calc.py line 1.")  # the <task-notification>'s result
    assert [s.action for s in parent.steps[1:]] == ["respond", "respond"]  # before and after the report
    assert child.trajectory_id == f"qwen-code.{PARENT}.agent-general-purpose-call_031746_0"
    assert child.task == "[[SUBTASK]] find where add is defined"
    assert child.metadata["is_subagent"] is True and child.metadata["parent_session_id"] == PARENT
    assert [s.action for s in child.steps] == ["grep_search", "respond"]
    meta = SUBAGENT.with_name("agent-general-purpose-call_031746_0.meta.json")
    with pytest.raises(SideFile, match="a Qwen Code sub-agent's settings, no run: its run is "
                                       "agent-general-purpose-call_031746_0.jsonl beside it"):
        detect_format(meta)


def test_a_sub_agent_that_failed_is_its_calls_error() -> None:
    """A foreground sub-agent whose provider answered HTTP 400: Qwen records the ``agent`` call ``success``, its
    result "Subagent execution failed.", and says why only in its display's ``terminateReason``."""
    call = only(QWEN / "failed-subagent.jsonl").steps[0]
    assert call.action == "agent" and call.observation == "Subagent execution failed."
    assert call.error == "Failed to run subagent: 400 Invalid request: tool schema rejected by the provider"
    [call, _] = only(QWEN / "failed-subagent.stream-json.jsonl").steps  # its headless output: the CLI's word only
    assert call.action == "agent" and call.error == "Subagent execution failed."


def test_a_cancelled_call_and_a_call_cut_off_by_the_run_budget_are_errors() -> None:
    cancelled = only(QWEN / "cancelled-command.jsonl")
    assert cancelled.steps[0].error == "[Operation Cancelled] Reason: Tool call cancelled by user."
    assert cancelled.metadata["ended_by"].startswith("the user: the last call was cancelled")
    assert cancelled.outcome == Outcome.unknown
    for name in ("max-tool-calls.jsonl", "max-tool-calls.stream-json.jsonl"):
        run = only(QWEN / name)
        assert [s.error for s in run.steps] == [None, None, NEVER_FINISHED], name


def test_headless_stream_json_is_a_run_of_its_own_saying_where_its_prompt_is() -> None:
    run = only(QWEN / "fix.stream-json.jsonl")
    assert detect_format(QWEN / "fix.stream-json.jsonl") == "qwen-code"
    session = "34cc400c-2aff-4b58-a243-98c9d890aec4"
    assert run.trajectory_id == f"qwen-code.{session}.headless-4ca89fd7"
    assert run.task.startswith("(headless `qwen` output does not record the prompt; the agent's first words:) "
                               "Run the tests first.")
    assert run.metadata["session_file"] == f"~/.qwen/projects/<project>/chats/{session}.jsonl"
    # the same work as the session's first prompt: its text is the call's narration, not an answer of its own
    assert [s.action for s in run.steps] == ["run_shell_command", "read_file", "read_file", "edit",
                                             "run_shell_command", "respond"]
    assert run.steps[0].error == "AssertionError: add(2, 3) != 5 (exit code 1)"
    assert run.steps[1].error == "File not found: /tmp/p54/qw/run/proj/missing.py"
    assert run.steps[3].thought == "The add function subtracts."
    assert run.outcome == Outcome.unknown and run.tool_versions == {"qwen-code": "0.24.4"}


def test_headless_output_leaves_a_foreground_sub_agents_lines_to_its_call() -> None:
    """An ``agent`` call with ``run_in_background: false``: the sub-agent's own messages are in the stream, marked by
    ``parent_tool_use_id``; they are its call's work (its answer is the call's result), not the run's steps."""
    run = only(QWEN / "foreground-agent.stream-json.jsonl")
    assert [(s.action, s.observation) for s in run.steps] == [
        ("agent", "add is defined in calc.py line 1."), ("respond", None)]


def test_headless_json_output_of_a_continued_session_is_another_run() -> None:
    run = only(QWEN / "continue.output-format-json.json")
    assert run.trajectory_id == "qwen-code.34cc400c-2aff-4b58-a243-98c9d890aec4.headless-761d7d6f"
    assert [(s.action, s.error) for s in run.steps] == [("write_file", None), ("run_shell_command", None),
                                                        ("respond", None)]


def test_headless_output_that_ended_on_an_api_error_is_an_infrastructure_error() -> None:
    run = only(QWEN / "api-error.stream-json.jsonl")
    assert run.outcome == Outcome.infra_error
    assert run.failure.error == "400 Invalid request: tool schema rejected by the provider"
    assert [s.action for s in run.steps] == ["run_shell_command"]  # the CLI's "[API Error: ...]" text is no answer


@pytest.mark.parametrize("name, said", [
    ("meta.json", "Qwen Code's auto-memory state of a project (meta.json), no run"),
    ("extract-cursor.json", "Qwen Code's auto-memory extraction cursor"),
])
def test_the_auto_memorys_files_beside_a_projects_sessions_are_no_runs(name: str, said: str) -> None:
    """Found walking a real ``~/.qwen/projects``: the files Qwen Code's auto-memory keeps in a project's folder were
    "unrecognised dump format", failing the ingest of the folder."""
    with pytest.raises(SideFile, match=re.escape(said)):
        detect_format(QWEN / "project" / name)


def test_other_versions_real_files_are_read() -> None:
    """Qwen Code 0.18.1's session (splitrail's test data) and 0.12.5's ``--output-format json`` (an agent-run
    report), which trajsearch refused as Qwen Code's before it read the format."""
    session = only(FIXTURES / "claude-code" / ".real" / "not-claude" / "qwen_code.jsonl")
    assert session.task == "List the files here." and session.tool_versions == {"qwen-code": "0.18.1"}
    assert [(s.action, s.error) for s in session.steps] == [("list_directory", "Path must be absolute: ."),
                                                            ("respond", None)]
    output = FIXTURES / "claude-code" / ".real" / "not-claude" / "qwen-0.12.5-output-format-json.json"
    run = only(output)
    assert run.tool_versions == {"qwen-code": "0.12.5"} and run.model_id == "coder-model"
    [forced] = list(read_dump(output, fmt="claude-code", tenant="acme"))
    assert forced.error == "this is Qwen Code 0.12.5's headless output (shaped like Claude Code's): read it with " \
                           "--format qwen-code"


def test_cli_ingest_of_a_qwen_folder_keeps_the_good_sessions_and_reports_the_bad_one(
        home: Path, tmp_path: Path) -> None:
    project = tmp_path / "dot" / ".qwen" / "projects" / "-tmp-p54-qw-run-proj"
    shutil.copytree(QWEN, project / "chats")
    shutil.move(project / "chats" / "subagents", project / "subagents")
    for kept in ("meta.json", "extract-cursor.json"):  # the auto-memory's files beside the sessions: no runs
        shutil.move(project / "chats" / "project" / kept, project / kept)
    (project / "chats" / "project").rmdir()
    # a session cut at its head: the prompt's line lost, the rest as the CLI wrote it
    lines = (QWEN / "api-error.jsonl").read_text().splitlines(keepends=True)
    (project / "chats" / "cut.jsonl").write_text("".join(lines[1:]))
    dead = tmp_path / "dead-letter.jsonl"
    code, out, err = run_cli("ingest", str(tmp_path / "dot" / ".qwen" / "projects"), "-t", "acme", "--json",
                             "--dead-letter", str(dead))
    summary = json.loads(out)
    assert (summary["ingested"], summary["rejected"]) == (18, 1), out + err  # 11 sessions, 1 sub-agent, 6 outputs
    [bad] = [json.loads(line) for line in dead.read_text().splitlines()]
    assert "cut.jsonl" in json.dumps(bad) and "no user prompt in this Qwen Code session" in json.dumps(bad)
    code, out, err = run_cli("show", "qwen-code.34cc400c-2aff-4b58-a243-98c9d890aec4", "-t", "acme")
    assert code == 0 and "AssertionError: add(2, 3) != 5 (exit code 1)" in out, out + err
