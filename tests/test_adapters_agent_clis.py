"""Claude Code, Codex CLI, Gemini CLI and OpenHands session files (see each fixture folder's SOURCE.md)."""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import pytest

from trajsearch.ingest.adapters import format_of
from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
CC_INIT = FIXTURES / "claude-code" / "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"
CC_REAL = FIXTURES / "claude-code" / ".real"
CC_TASKS = FIXTURES / "claude-code" / "5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
CODEX = FIXTURES / "codex-cli" / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
GEMINI_JSON = FIXTURES / "gemini-cli" / "gemini-cli-trajectory.json"
GEMINI_JSONL = FIXTURES / "gemini-cli" / "session-2026-04-29T21-39-3f0c2a1b.jsonl"
GEMINI_CHECKPOINT = FIXTURES / "gemini-cli" / ".real" / "checkpoint-agent-teams.json"
OH_HELLO = FIXTURES / "openhands" / "hello-world.trajectory.json"
OH_GUI = FIXTURES / "openhands" / "basic_gui_mode.json"
OH_EVAL = FIXTURES / "openhands" / ".real" / "multi_swe_bench" / "output.jsonl"
OH_EVAL_JSON = FIXTURES / "openhands" / ".real" / "eval-json" / "temp_log_check.json"
OH_RESOLVER = FIXTURES / "openhands" / ".real" / "resolver" / "output.jsonl"
OH_RESOLVER_OLD = FIXTURES / "openhands" / ".real" / "resolver" / "swegym-output.jsonl"


only = partial(adapter_support.only, tenant="acme")
runs = partial(adapter_support.runs, tenant="acme")


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def errors_at(run) -> dict[int, str]:
    return {s.index: s.error for s in run.steps if s.error}


# -- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize("path, fmt", [
    (CC_INIT, "claude-code"), (CC_TASKS, "claude-code"), (CODEX, "codex-cli"), (GEMINI_JSON, "gemini-cli"),
    (GEMINI_JSONL, "gemini-cli"), (GEMINI_CHECKPOINT, "gemini-cli"), (OH_HELLO, "openhands"), (OH_GUI, "openhands"),
])
def test_detection_by_content_survives_renaming_and_gzip(path: Path, fmt: str, tmp_path: Path) -> None:
    assert detect_format(path) == fmt
    packed = tmp_path / "dump.json.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert detect_format(packed) == fmt


def test_first_lines_of_every_layout_are_recognised() -> None:
    # first lines these tools really write (a session may start with bookkeeping, not a message)
    assert format_of({"type": "file-history-snapshot", "messageId": "4d2196f2", "snapshot": {
        "messageId": "4d2196f2", "trackedFileBackups": {}, "timestamp": "2026-03-01T22:38:47.560Z"},
        "isSnapshotUpdate": False}) == "claude-code"
    assert format_of({"type": "summary", "summary": "Test", "leafUuid": "abc"}) == "claude-code"
    assert format_of({"type": "queue-operation", "operation": "enqueue", "sessionId": "s",
                      "timestamp": "2025-12-16T00:00:03.500Z"}) == "claude-code"
    assert format_of({"id": "0d8e", "timestamp": "2025-07-01T10:00:00.000Z", "instructions": None}) == "codex-cli"
    assert format_of({"sessionId": "g", "projectHash": "ab", "startTime": "2026-04-29T21:39:22.319Z",
                      "lastUpdated": "2026-04-29T21:39:22.319Z", "kind": "main"}) == "gemini-cli"
    assert format_of({"trajectory": [{"id": 0, "timestamp": "2025-01-27T22:44:56", "source": "user",
                                      "message": "hi", "action": "message", "args": {"content": "hi"}}]}) == "openhands"
    # ...and the shapes they must not take: a Langfuse trace, a bare chat message, an ATIF step
    assert format_of({"id": "t1", "timestamp": "2025-01-01T00:00:00Z", "sessionId": "s", "name": "x"}) == "langfuse"
    assert format_of({"role": "user", "content": "hi"}) is None
    assert format_of({"step_id": 1, "source": "user", "message": "hi"}) is None


# -- Claude Code -------------------------------------------------------------------------


def test_claude_code_init_session() -> None:
    run = only(CC_INIT)
    assert run.trajectory_id == "claude-code.1af7fc5e-8455-4414-9ccd-011d40f70b2a"
    # /init carries no arguments: the instruction is the body the command expands to (an isMeta record)
    assert run.task.startswith("Please analyze this codebase and create a CLAUDE.md file")
    assert "<command-name>" not in run.task
    assert [s.action for s in run.steps] == [
        "TodoWrite", "Bash", "Glob", "Glob", "Glob", "Glob", "Bash", "Glob", "Glob", "TodoWrite", "Write",
        "TodoWrite", "respond"]
    first, write, last = run.steps[0], run.steps[10], run.steps[-1]
    assert first.thought.startswith("I'll analyze the codebase and create a CLAUDE.md")  # text before the call
    assert first.observation.startswith("Todos have been modified successfully")
    assert run.steps[2].arguments == {"pattern": "package.json"} and run.steps[2].observation == "No files found"
    assert write.arguments["file_path"] == "/path/to/Demo/CLAUDE.md"
    assert errors_at(run) == {10: "Claude requested permissions to write to /path/to/Demo/CLAUDE.md, "
                                  "but you haven't granted it yet."}
    assert last.arguments["content"].startswith("I've created a basic CLAUDE.md file")
    assert run.outcome is Outcome.unknown and run.failure is None
    assert run.model_id == "claude-sonnet-4-20250514"
    assert run.created_at == datetime(2025, 9, 3, 0, 47, 19, 293000, tzinfo=timezone.utc)
    assert run.tool_versions == {"claude-code": "1.0.98"}
    assert run.metadata["cwd"] == "/path/to/Demo" and run.metadata["cli_version"] == "1.0.98"
    assert run.steps[1].started_at < run.steps[1].ended_at


def test_claude_code_sidechains_and_command_arguments() -> None:
    run = only(CC_TASKS)
    assert run.task == "/orchestrator @CLAUDE.md を最新の状態にアップデートしてください"
    assert [s.action for s in run.steps] == [
        "TodoWrite", "Glob", "Glob", "TodoWrite", "Task", "Task", "TodoWrite", "Task", "TodoWrite", "Edit",
        "TodoWrite", "respond"]
    # the subagent's own Glob/Read turns (isSidechain) are not steps of the main run; its report is the
    # observation of the Task call that spawned it
    assert run.metadata["sidechain_records"] == 7
    assert run.steps[5].arguments["description"] == "Check package configuration"
    assert run.steps[5].observation.startswith("## Package.json Analysis Summary")
    assert errors_at(run) == {
        4: "InputValidationError: Task failed due to the following issue: The required parameter `prompt` is missing",
        9: "File has not been read yet. Read it first before writing to it.",
    }
    assert run.steps[-1].arguments["content"].startswith("CLAUDE.mdファイルを最新の状態にアップデートしました")
    assert run.metadata["git_branch"] == "main" and run.tool_versions == {"claude-code": "1.0.108"}


# Lines as Claude Code 2.x writes them (keys and values from real 2.1.x transcripts quoted in public bug
# reports and log tools; see claude_code.py): one content part per line, several lines per message.id.
SESSION = "2ff46cd5-f4e7-4724-bb20-579dae7956ea"


def _cc(kind: str, uuid: str, at: str, **fields) -> dict:
    return {"parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/Users/tom/tmp/lib",
            "sessionId": SESSION, "version": "2.1.63", "gitBranch": "HEAD", "type": kind, "uuid": uuid,
            "timestamp": at, **fields}


def _assistant(uuid: str, at: str, mid: str, part: dict, **fields) -> dict:
    return _cc("assistant", uuid, at, requestId="req_011C", message={
        "model": "claude-opus-4-6", "id": mid, "type": "message", "role": "assistant", "content": [part],
        "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 9}}, **fields)


def test_claude_code_2x_split_messages_errors_and_api_failure(tmp_path: Path) -> None:
    caveat = ("<local-command-caveat>Caveat: The messages below were generated by the user while running local "
              "commands. DO NOT respond to these messages or otherwise consider them in your response unless the "
              "user explicitly asks you to.</local-command-caveat>")
    bash = {"type": "tool_use", "id": "toolu_01T438wYuKcrD7GNCWFwmscZ", "name": "Bash",
            "input": {"command": "pytest -q", "description": "Run the tests"}}
    lines = [
        {"type": "file-history-snapshot", "messageId": "4d2196f2", "snapshot": {
            "messageId": "4d2196f2", "trackedFileBackups": {}, "timestamp": "2026-03-01T22:38:47.560Z"},
         "isSnapshotUpdate": False},
        _cc("user", "u0", "2026-03-01T22:38:40.000Z", isMeta=True, message={"role": "user", "content": caveat}),
        _cc("user", "u1", "2026-03-01T22:38:41.000Z", message={"role": "user", "content":
            "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>"}),
        _cc("user", "u2", "2026-03-01T22:38:42.000Z", message={"role": "user", "content":
            "<local-command-stdout>Set model to opus</local-command-stdout>"}),
        _cc("user", "u3", "2026-03-01T22:38:47.557Z", permissionMode="default", message={"role": "user", "content":
            "make the failing test pass<system-reminder>The user opened tests/test_api.py</system-reminder>"}),
        _assistant("a1", "2026-03-01T22:38:51.000Z", "msg_015o", {
            "type": "thinking", "thinking": "The user wants the tests to pass. Run them first.", "signature": "Eo8D"}),
        _assistant("a2", "2026-03-01T22:38:51.500Z", "msg_015o", {"type": "text", "text": "Let me run the tests."}),
        _assistant("a3", "2026-03-01T22:38:52.000Z", "msg_015o", bash),
        _assistant("a3", "2026-03-01T22:38:52.000Z", "msg_015o", bash),  # the same line written twice
        '{"parentUuid":"a3","isSidechain":false,"type":"user","message":{"role":"user","cont',  # torn line
        _cc("user", "u4", "2026-03-01T22:38:55.000Z", toolUseResult={"stdout": "", "stderr": "", "interrupted": False},
            message={"role": "user", "content": [{"tool_use_id": bash["id"], "type": "tool_result", "is_error": True,
                     "content": "Exit code 1\nFAILED tests/test_api.py::test_get - KeyError: 'id'\n1 failed in 0.12s"}]}),
        _assistant("a4", "2026-03-01T22:39:01.000Z", "msg_016x", {
            "type": "text", "text": "The test fails with a KeyError; the fix needs the API key set."}),
        _cc("user", "u5", "2026-03-01T22:40:00.000Z", message={"role": "user", "content": "[Request interrupted by user]"}),
        _cc("user", "u6", "2026-03-01T22:40:10.000Z", message={"role": "user", "content": [
            {"type": "text", "text": "try again with the key from .env"}]}),
        _cc("assistant", "a5", "2026-03-01T22:40:12.594Z", requestId="req_011Cd4FdpFh4xXSbbicAccrN",
            error="rate_limit", apiErrorStatus=429, isApiErrorMessage=True, message={
                "model": "<synthetic>", "role": "assistant", "type": "message", "content": [{"type": "text", "text":
                    "You've reached your usage limit. Run /usage-credits to continue or switch models with /model."}]}),
        {"type": "summary", "summary": "Fixing the API test", "leafUuid": "a5"},
    ]
    path = write_jsonl(tmp_path / f"{SESSION}.jsonl", lines)
    assert detect_format(path) == "claude-code"
    results = list(read_dump(path, tenant="acme"))
    assert [r.position for r in results if not r.ok] == ["line 10"]  # the torn line is reported...
    [run] = [r.trajectory for r in results if r.ok]  # ...and the session is still read
    assert run.trajectory_id == f"claude-code.{SESSION}"
    assert run.task == "make the failing test pass"  # not the caveat, the /model command or its stdout
    assert [s.action for s in run.steps] == ["Bash", "respond"]  # merged by message.id, no duplicate call
    bash_step = run.steps[0]
    assert bash_step.thought == "The user wants the tests to pass. Run them first.\n\nLet me run the tests."
    assert bash_step.arguments == {"command": "pytest -q", "description": "Run the tests"}
    assert bash_step.error == "FAILED tests/test_api.py::test_get - KeyError: 'id' (exit code 1)"
    assert run.steps[1].error is None
    assert run.metadata["user_prompts"] == ["try again with the key from .env"]
    assert run.metadata["interrupted"] is True and run.metadata["summary"] == "Fixing the API test"
    # the session ended on the API refusing the request: no verdict on the work, an infrastructure failure
    assert run.outcome is Outcome.infra_error
    assert run.failure.error.startswith("You've reached your usage limit.") and "rate_limit, HTTP 429" in run.failure.error
    assert run.model_id == "claude-opus-4-6"  # never the CLI's own "<synthetic>"
    assert run.created_at == datetime(2026, 3, 1, 22, 38, 40, tzinfo=timezone.utc)


def test_claude_code_subagent_file_and_empty_session(tmp_path: Path) -> None:
    sub = tmp_path / "agent-a3904c35fbed0ead8.jsonl"
    write_jsonl(sub, [
        _cc("user", "s1", "2026-08-01T00:38:51.901Z", isSidechain=True, agentId="a3904c35fbed0ead8",
            message={"role": "user", "content": "Review the release notes for v0.15.0"}),
        _assistant("s2", "2026-08-01T00:38:55.000Z", "msg_9", {"type": "text", "text": "VERDICT: publish"},
                   isSidechain=True, agentId="a3904c35fbed0ead8"),
    ])
    run = only(sub)
    assert run.trajectory_id == f"claude-code.{SESSION}.agent-a3904c35fbed0ead8"  # never the parent's id
    assert run.task == "Review the release notes for v0.15.0" and run.metadata["is_subagent"] is True
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "VERDICT: publish"})]

    titles = write_jsonl(tmp_path / "titles.jsonl", [{"type": "summary", "summary": "Old chat", "leafUuid": "x"}])
    with pytest.raises(ValueError, match="no run in this file: a Claude Code file of summaries of sessions only"):
        list(read_dump(titles, tenant="acme"))  # no run: named alone, said what it is
    with pytest.raises(ValueError, match="no run in this file: a Claude Code file of summaries of sessions only"):
        list(read_dump(titles, tenant="acme", fmt="claude-code"))  # forced, it is still told what it is
    # one too big for detection to look at whole (found by review: it was a rejection, a small one passed over)
    (tmp_path / "big").mkdir()
    write_jsonl(tmp_path / "big" / "titles.jsonl", [{"type": "summary", "summary": f"Chat {n} " + "x" * 200,
                                                      "leafUuid": f"{n}"} for n in range(400)])
    assert (tmp_path / "big" / "titles.jsonl").stat().st_size > 64 * 1024
    assert list(read_dump(tmp_path / "big", tenant="acme")) == []


def test_a_stop_hook_that_refuses_the_end_of_a_turn_is_what_that_turn_got_back() -> None:
    """Bug (a real 2.1.14 transcript, DRMacIver/claude-reliability): the "Stop hook feedback" that made the agent
    go on was dropped as hook output, so its next reply looked unprompted and the hook's words were unsearchable."""
    run = only(FIXTURES / "claude-code" / ".real" / "claude-reliability" / "stop-hook-reflection-first-stop.jsonl")
    assert [s.action for s in run.steps] == ["Read", "Edit", "Bash", "Bash", "respond", "respond"]
    refused = run.steps[4]
    assert refused.arguments["content"].startswith("Done. I read `test.txt`")
    assert refused.observation.startswith("Stop hook feedback:\n[${CLAUDE_PLUGIN_ROOT}/scripts/hooks/stop.sh]: "
                                          "# Task Completion Check")
    assert run.steps[5].arguments["content"].startswith("I have fully completed the task.")
    assert run.task.startswith('Read test.txt and change the content to "modified content"')  # not a prompt


# -- Codex CLI ---------------------------------------------------------------------------


def test_codex_rollout() -> None:
    run = only(CODEX)
    assert run.trajectory_id == "codex.019a93b9-f380-7600-98ff-940e6b99603c"
    assert run.task.startswith("finish up the users work by rigging up the chatbot-ui to use lmstudio")
    assert "<environment_context>" not in run.task
    assert [s.action for s in run.steps] == ["shell"] * 4 + ["update_plan"] * 2 + ["shell"]
    ls = run.steps[0]
    assert ls.arguments == {"command": ["bash", "-lc", "ls"], "workdir": "/home/user/projects/temp/chatbot-ui"}
    assert ls.observation.startswith("LM Studio configuration.md\nREADME.md")  # unwrapped from {"output", "metadata"}
    assert ls.thought == "**Planning repository inspection**"  # the reasoning summary before the call
    # step 3, `rg -n "OLLAMA"`, exited 1 with no output: rg's "no match", as mini-swe-agent's adapter reads it
    assert errors_at(run) == {1: "ls: cannot access 'lib/ai': No such file or directory (exit code 2)"}
    assert run.steps[3].arguments["command"][-1] == 'rg -n "OLLAMA" -n' and not run.steps[3].observation
    assert run.steps[4].arguments["plan"][0]["step"].startswith("Inspect existing LM Studio integration points")
    assert run.steps[4].observation == "Plan updated"
    assert run.steps[6].observation.startswith("Success. Updated the following files:")
    assert run.outcome is Outcome.unknown and run.model_id == "gpt-5.1-codex"
    assert run.created_at == datetime(2025, 11, 17, 21, 30, 28, 608000, tzinfo=timezone.utc)
    assert run.tool_versions == {"codex-cli": "0.58.0"}
    meta = run.metadata
    assert (meta["cwd"], meta["git_branch"], meta["originator"]) == (
        "/home/user/projects/temp/chatbot-ui", "main", "codex_cli_rs")
    assert meta["repository_url"] == "git@github.com:AcidicSoil/chatbot-ui.git"


def test_codex_newer_items_answers_and_a_final_api_error(tmp_path: Path) -> None:
    def line(at: str, kind: str, payload: dict) -> dict:
        return {"timestamp": f"2026-01-18T02:01:{at}Z", "type": kind, "payload": payload}

    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-x = 1\n+x = 2\n*** End Patch"
    path = write_jsonl(tmp_path / "rollout-2026-01-18T02-01-28-019bce9f-0a40-79e2-8351-8818e8487fb6.jsonl", [
        line("28.000", "session_meta", {"id": "019bce9f-0a40-79e2-8351-8818e8487fb6", "timestamp": "2026-01-18T02:01:28Z",
             "cwd": "/w", "originator": "codex-tui", "cli_version": "0.88.0", "git": {"branch": "fix/x"},
             "base_instructions": {"text": "You are Codex"}}),
        line("28.100", "response_item", {"type": "message", "role": "developer", "content": [
            {"type": "input_text", "text": "<permissions instructions>never</permissions instructions>"}]}),
        line("28.200", "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>be brief</INSTRUCTIONS>"}]}),
        line("29.000", "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "bump x to 2 and run the tests"}]}),
        line("29.000", "event_msg", {"type": "user_message", "message": "bump x to 2 and run the tests", "images": []}),
        line("29.100", "turn_context", {"cwd": "/w", "approval_policy": "on-request", "model": "gpt-5.2-codex",
             "sandbox_policy": {"type": "workspace-write"}}),
        line("30.000", "response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Editing app.py**"}],
             "content": None, "encrypted_content": "gAAA"}),
        line("30.100", "response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "I'll patch app.py."}]}),
        line("30.200", "response_item", {"type": "custom_tool_call", "status": "completed", "call_id": "call_p",
             "name": "apply_patch", "input": patch}),
        line("30.300", "response_item", {"type": "custom_tool_call_output", "call_id": "call_p",
             "output": "{\"output\":\"Success. Updated the following files:\\nM app.py\\n\",\"metadata\":{\"exit_code\":0}}"}),
        line("31.000", "response_item", {"type": "function_call", "name": "shell_command", "call_id": "call_t",
             "arguments": "{\"command\":\"pytest -q\",\"workdir\":\"/w\"}"}),
        line("33.000", "response_item", {"type": "function_call_output", "call_id": "call_t",
             "output": "Exit code: 1\nWall time: 1.9 seconds\nOutput:\nE   assert 2 == 3\n1 failed in 0.31s\n"}),
        line("33.500", "event_msg", {"type": "agent_message", "message": "The test expects 3."}),
        line("33.500", "response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "The test expects 3."}]}),
        line("40.000", "event_msg", {"type": "user_message", "message": "then make it 3", "images": []}),
        line("41.000", "event_msg", {"type": "error", "message": "stream disconnected before completion: idle timeout"}),
    ])
    run = only(path)
    assert run.trajectory_id == "codex.019bce9f-0a40-79e2-8351-8818e8487fb6"
    assert run.task == "bump x to 2 and run the tests"
    assert [s.action for s in run.steps] == ["apply_patch", "shell_command", "respond"]
    edit, tests, answer = run.steps
    assert edit.thought == "**Editing app.py**\n\nI'll patch app.py."  # commentary before a call is narration
    assert edit.arguments == {"input": patch} and edit.error is None
    assert tests.arguments == {"command": "pytest -q", "workdir": "/w"}
    assert tests.error == "1 failed in 0.31s (exit code 1)"
    assert answer.arguments == {"content": "The test expects 3."}  # once, though the event repeats it
    assert run.metadata["user_prompts"] == ["then make it 3"] and run.metadata["git_branch"] == "fix/x"
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "stream disconnected before completion: idle timeout"
    assert run.model_id == "gpt-5.2-codex"


def test_codex_index_of_thread_names_is_passed_over() -> None:
    """Found by a probe (real, LAF-US/IDAHO-VAULT's ``~/.codex``, Codex 0.116+): ``session_index.jsonl``, one
    ``{"id", "thread_name", "updated_at"}`` line per thread, was rejected as "unrecognised dump format". It names the
    threads whose rollouts are the runs: passed over."""
    from trajsearch.ingest.detect import SideFile

    index = FIXTURES / "codex-cli" / ".real" / "idaho-vault" / "session_index.jsonl"
    with pytest.raises(SideFile, match="no run in this file: Codex's index of thread names"):
        detect_format(index)
    assert list(read_dump(index.parent, tenant="acme")) == []  # walked: passed over, not rejected


def test_codex_code_mode_script_failures_are_errors() -> None:
    """Found by a probe (real, doudouqie66/CommonTools' ``.codex/sessions``, Codex VS Code 0.14x code mode; see
    ``.real/SOURCE.md``): a failed ``exec`` / ``wait`` script ("Script failed" ... "Script error:" and the inner
    tool's report) was never an error, though the same failure through ``shell_command`` is."""
    run = only(FIXTURES / "codex-cli" / ".real" / "rollout-2026-06-12T16-44-44-019ebb01-4a7a-7c12-9bb4-d3a37238731b.jsonl")
    calls = [(s.action, s.error) for s in run.steps if s.action != "respond"]
    assert calls == [
        ("wait", "script failed"),  # the reply is cut before its "Script error:"
        ("exec", None),  # Script completed, exit code 0
        ("exec", None),  # an rg that found nothing: exit 1, no output
        ("wait", None),  # still running
        ("wait", "command timed out after 34029 milliseconds (exit code 124)"),
    ]


def test_codex_rollout_before_the_envelope(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "rollout-2025-06-02T10-00-00-5973b6c0-94b8-487b-a530-2aeb6098ae0e.jsonl", [
        {"id": "5973b6c0-94b8-487b-a530-2aeb6098ae0e", "timestamp": "2025-06-02T10:00:00.123Z", "instructions": None,
         "git": {"commit_hash": "abc123", "branch": "main"}},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<user_instructions>\nbe terse\n</user_instructions>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "what does setup.py install?"}]},
        {"record_type": "state"},
        {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAA"},
        {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_1", "status": "completed",
         "action": {"type": "exec", "command": ["bash", "-lc", "cat setup.py"], "timeout_ms": 10000,
                    "working_directory": None, "env": None, "user": None}},
        {"type": "function_call_output", "call_id": "call_1",
         "output": "{\"output\":\"install_requires=['requests']\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It installs requests."}]},
    ])
    assert detect_format(path) == "codex-cli"
    run = only(path)
    assert run.trajectory_id == "codex.5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert run.task == "what does setup.py install?"
    assert [(s.action, s.error) for s in run.steps] == [("local_shell", None), ("respond", None)]
    assert run.steps[0].arguments == {"command": ["bash", "-lc", "cat setup.py"], "timeout_ms": 10000}
    assert run.steps[0].observation == "install_requires=['requests']\n"
    assert run.metadata["git_commit"] == "abc123"
    assert run.created_at == datetime(2025, 6, 2, 10, 0, 0, 123000, tzinfo=timezone.utc)


# -- Gemini CLI --------------------------------------------------------------------------


def test_gemini_json_recording() -> None:
    run = only(GEMINI_JSON)
    assert run.trajectory_id == "gemini-cli.cdd63974-c2a3-4f1c-931d-cce1db22ec03.2025-10-10T06-59-39-894Z"
    assert run.task == 'Create a file called hello.txt with "Hello, world!" as the content.'
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {
        "content": 'Okay, I\'ve created the file `/app/hello.txt` with the content "Hello, world!".'})]
    assert run.outcome is Outcome.unknown and run.model_id == "gemini-2.0-flash"
    assert run.created_at == datetime(2025, 10, 10, 6, 59, 39, 894000, tzinfo=timezone.utc)
    assert run.metadata["total_tokens"] == 5939


def test_gemini_jsonl_recording() -> None:
    run = only(GEMINI_JSONL)
    assert run.trajectory_id == "gemini-cli.3f0c2a1b-5d7e-4c1a-9b8e-2f6d4c8a1e07.2026-04-29T21-39-22-319Z"
    assert run.task == "Run the unit tests and fix the failing one."
    # a message re-appended as its tool call ran is read once, in its first place
    assert [s.action for s in run.steps] == [
        "run_shell_command", "read_file", "replace", "replace", "run_shell_command", "respond"]
    first = run.steps[0]
    assert first.thought == ("**Planning the test run** I should see which test fails before editing anything."
                             "\n\nI'll run the test suite first to see what fails.")
    assert first.arguments == {"command": "npm test", "description": "Run the unit tests."}
    assert "not ok 2 - sum adds negative numbers" in first.observation
    assert run.steps[1].observation == "export function sum(a, b) {\n  return Math.abs(a + b);\n}\n"
    assert errors_at(run) == {
        0: "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: -1 !== 1 (exit code 1)",
        2: "cancelled: [Operation Cancelled] Reason: User denied execution.",
    }
    assert run.steps[5].arguments["content"].startswith("Fixed: `sum()` wrapped the result in `Math.abs`")
    assert run.metadata["user_prompts"] == ["Go ahead, but keep a comment explaining the fix."]
    assert run.metadata["summary"] == "Fix the failing sum() unit test" and run.metadata["kind"] == "main"
    assert run.outcome is Outcome.unknown and run.model_id == "gemini-2.5-pro"


def test_gemini_rewind_and_a_final_api_error(tmp_path: Path) -> None:
    meta = {"sessionId": "g-1", "projectHash": "0b7dfb12", "startTime": "2026-05-01T10:00:00.000Z",
            "lastUpdated": "2026-05-01T10:00:00.000Z", "kind": "main"}
    path = write_jsonl(tmp_path / "session-2026-05-01T10-00-g1.jsonl", [
        meta,
        {"id": "u1", "timestamp": "2026-05-01T10:00:01.000Z", "type": "user", "content": [{"text": "/about"}]},
        {"id": "u2", "timestamp": "2026-05-01T10:00:02.000Z", "type": "user", "content": [{"text": "delete the build dir"}]},
        {"id": "g1", "timestamp": "2026-05-01T10:00:03.000Z", "type": "gemini", "content": "Deleting it now.",
         "model": "gemini-2.5-flash", "toolCalls": [{"id": "c1", "name": "run_shell_command", "args": {"command": "rm -rf /"},
                                                     "status": "success", "timestamp": "2026-05-01T10:00:03.500Z"}]},
        {"$rewindTo": "u2"},  # the user rewound: that prompt and everything after it are gone
        {"id": "u3", "timestamp": "2026-05-01T10:01:00.000Z", "type": "user", "content": [{"text": "remove ./build only"}]},
        {"id": "e1", "timestamp": "2026-05-01T10:01:05.000Z", "type": "error",
         "content": "[API Error: You have exhausted your daily quota on this model.]"},
    ])
    run = only(path)
    assert run.task == "remove ./build only" and run.steps == []
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "[API Error: You have exhausted your daily quota on this model.]"


# -- OpenHands ---------------------------------------------------------------------------


def test_gemini_cli_checkpoint_history_is_a_run() -> None:
    """Bug: a checkpoint (the history as Gemini ``Content[]``, what ``/chat save`` writes) was not
    detected, and forced with --format it was rejected with "no messages in this Gemini CLI recording"."""
    run = only(GEMINI_CHECKPOINT)
    assert run.trajectory_id.startswith("gemini-cli.checkpoint.checkpoint-agent-teams.")
    assert run.task == "agent teams shouldn't persist, I want it to ask me every boot"  # not the context or snapshot
    # no "Got it" answer of the CLI; the result whose call the history lost is a step (probe F, F6); errors: the
    # denied command, 4 failed replace calls and 3 builds that exited 1 (probe F, F2: as in recordings)
    assert len(run.steps) == 51 and sum(1 for s in run.steps if s.error) == 8
    assert {"read_file", "replace", "run_shell_command"} <= {s.action for s in run.steps}
    assert run.outcome is Outcome.unknown and len(run.metadata["user_prompts"]) == 5  # the later prompts
    denied = next(s for s in run.steps if s.error and s.action == "run_shell_command" and "exit code" not in s.error)
    assert denied.error == "[Operation Cancelled] Reason: User denied execution."  # the whole text, not its "["


def test_gemini_cli_prompt_log_and_restore_checkpoints_are_passed_over() -> None:
    """Found by a probe (real, LAF-US/IDAHO-VAULT's ``~/.gemini/tmp``): the CLI's prompt log (``logs.json``) and the
    restore checkpoints ``--checkpointing`` writes before each file-changing call (``checkpoints/<time>-<file>-<tool>
    .json``: the history so far and the call) were rejected as "unrecognised dump format". Neither is a run (a restore
    checkpoint repeats the session recorded in ``chats/``): passed over. A ``/chat save`` checkpoint is still a run."""
    from trajsearch.ingest.detect import SideFile

    real = FIXTURES / "gemini-cli" / ".real"
    folder = real / "idaho-vault"
    with pytest.raises(SideFile, match="no run in this file: Gemini CLI's log of the prompts typed in a project"):
        detect_format(folder / "logs.json")
    with pytest.raises(SideFile, match="no run in this file: a Gemini CLI restore checkpoint taken before a write_file"):
        detect_format(folder / "checkpoints" / "2026-03-29T18-36-27_535Z-DECISIONS.md-write_file.json")
    assert list(read_dump(folder, tenant="acme")) == []  # walked: passed over, not rejected
    assert detect_format(GEMINI_CHECKPOINT) == detect_format(real / "checkpoint-g7tag.json") == "gemini-cli"


def test_gemini_code_assist_context_after_the_prompt_is_not_the_users() -> None:
    """Found by a probe (real Gemini Code Assist agent-mode recordings, LAF-US/IDAHO-VAULT, March 2026): what the
    extension appends to the user's words in the same text part ("Current File Path:" and the editor's file in a
    code fence, "User Selected Files:" and the files attached, at times a " PRIOR CHAT HISTORY: ..." after them) was
    kept in the task and every later prompt. It is the editor's context, as Claude Code's ``<ide_opened_file>`` is."""
    folder = FIXTURES / "gemini-cli" / ".real" / "code-assist"
    ping = only(folder / "session-2026-03-30T19-51-4f2a591d.json")
    assert ping.task == "PINGING GEMINI(s) :gemini:"  # not "...\nCurrent File Path:\n```shellscript\nc:\\...agent.sh"
    assert ping.metadata["user_prompts"] == ['"C:\\Users\\loganf\\Downloads\\Phone Link\\PXL_20260330_180107374.jpg"']
    mentioned = only(folder / "session-2026-03-28T21-19-0f18b3b3.json")
    assert mentioned.task == "**GEMINI.md**"  # not its attachment and the " PRIOR CHAT HISTORY: /mcp" after it
    assert mentioned.metadata["user_prompts"] == ["MCP coordination/conversation implementation"]


def test_gemini_code_assist_blocks_inside_a_prompt_are_the_users(tmp_path: Path) -> None:
    """Bug (review): the prompt was cut at the first "Current File Path:" / "User Selected Files:" block wherever it
    sat, for any recording: a prompt quoting such a list lost the words after it, and one opening with such a block
    was dropped whole. Only blocks running to the end of the text after the user's words are the editor's; a
    message of those alone is still no prompt (the real recordings above read as before)."""
    real = FIXTURES / "gemini-cli" / ".real" / "code-assist" / "session-2026-03-30T19-51-4f2a591d.json"
    record = json.loads(real.read_text())
    quoting = ("Our release checklist looks like this:\nUser Selected Files:\n- CHANGELOG.md\n- README.md\n"
               "Please write a script that verifies both files were updated in the last commit.")
    opening = "Current File Path:\n```python\nsrc/app.py\n```\nWhy does line 40 of this file raise KeyError?"
    context = "Current File Path:\n```python\nsrc/app.py\n```\n\n\nUser Selected Files:\n- src/app.py\n"
    record["messages"][0]["content"] = [{"text": quoting}]
    record["messages"][2]["content"] = [{"text": opening}]
    record["messages"].append({**record["messages"][2], "id": "context-only", "content": [{"text": context}]})
    path = tmp_path / real.name
    path.write_text(json.dumps(record))
    run = only(path)
    assert run.task == quoting
    assert run.metadata["user_prompts"] == [
        "Current File Path: ```python src/app.py ``` Why does line 40 of this file raise KeyError?"]


def test_openhands_function_calling_run() -> None:
    run = only(OH_HELLO)
    assert run.trajectory_id.startswith("openhands.hello-world.trajectory.")
    assert run.task == 'Create a file called hello.txt with "Hello, world!" as the content.'  # not the system prompt
    assert [s.action for s in run.steps] == ["execute_bash", "finish"]
    bash, finish = run.steps
    assert bash.arguments["command"].startswith("printf 'Hello, world!\\n' > hello.txt")
    assert bash.observation == "Created /app/hello.txt\nSize: 14 bytes\nContent: Hello, world!"
    assert bash.error is None and finish.error is None
    assert finish.arguments == {"message": 'Created /app/hello.txt with the requested content: "Hello, world!". '
                                           "Let me know if you want it moved or modified."}
    assert run.tools_available == ["execute_bash", "think", "finish", "execute_ipython_cell", "task_tracker",
                                   "str_replace_editor"]
    assert run.model_id == "gpt-5-2025-08-07" and run.tool_versions == {"openhands": "0.58.0"}
    assert run.outcome is Outcome.unknown
    assert run.created_at == datetime(2025, 10, 10, 6, 10, 15, 158090, tzinfo=timezone.utc)
    assert run == only(OH_HELLO)  # the same id and content on every read


def test_openhands_finish_keeps_its_closing_words_and_follow_ups_stay_listed() -> None:
    """Bug (OpenHands' own replay trajectory): a ``finish`` whose closing words are only the event's ``message``
    lost them (``{"outputs": {}}``)."""
    run = only(FIXTURES / "openhands" / ".real" / "runtime-trajs" / "basic_interactions.json")
    assert run.task == "what's 1+1?"
    assert [s.action for s in run.steps] == ["respond", "respond", "finish"]
    assert run.steps[2].arguments == {"outputs": {}, "message": "All done! What's next on the agenda?"}
    assert run.metadata["user_prompts"] == ["No, I mean by Goldbach's conjecture!", "Finish please"]


def test_openhands_gui_run_with_a_command_that_never_finished() -> None:
    run = only(OH_GUI)
    assert run.task.startswith("I want to create a VueJS app that allows me to:")
    assert [s.action for s in run.steps] == ["execute_bash", "execute_bash", "respond"]
    assert run.steps[0].arguments == {"command": "mkdir -p /workspace/todo-app"} and run.steps[0].error is None
    assert run.steps[1].observation.startswith("Serving HTTP on 0.0.0.0 port 8000")
    assert run.steps[1].error.startswith("command did not finish (exit code -1)")
    assert run.steps[2].arguments["content"].startswith("I've created a complete Vue.js todo application")
    assert run.metadata["final_agent_state"] == "awaiting_user_input" and run.metadata["cwd"] == "/workspace"
    assert run.outcome is Outcome.unknown and run.model_id == "claude-3-5-sonnet-20241022"


def test_openhands_evaluation_output_lines_are_runs() -> None:
    """Bug: an evaluation ``output.jsonl`` line (``instance_id``, ``instruction``, ``history`` of events,
    ``metadata``, ``test_result``, ``error``) was detected as openhands, then rejected: "no OpenHands event"."""
    assert detect_format(OH_EVAL) == "openhands"
    run = only(OH_EVAL)
    assert run.trajectory_id.startswith("openhands.ponylang__ponyc-4588.")
    assert run.task.startswith("Incorrect aliasing of iso when using match")  # the issue, out of OpenHands' prompt
    assert "<issue_description>" not in run.task and "uploaded" not in run.task
    assert run.model_id == "meta-llama/llama-4-maverick" and len(run.steps) == 50
    assert run.steps[0].action == "execute_bash" and run.steps[0].arguments == {"command": "cd /workspace/ponylang__ponyc__0.1 && ls -l"}
    assert run.outcome is Outcome.failure and run.failure.error.startswith("RuntimeError: Agent reached maximum iteration")
    assert run.metadata["agent_class"] == "CodeActAgent" and run.metadata["patch_chars"] == 557


def test_openhands_error_with_no_cause_is_a_step_of_its_own() -> None:
    """Bug (real: the same line, event 55): the agent's invalid tool call leaves only an ``error`` observation with no
    ``cause``; it was bound to an earlier command with no output, already answered, and so dropped from the run."""
    run = only(OH_EVAL)
    invalid = "Parameter 'command' is expected to be one of ['view', 'create', 'str_replace', 'insert', 'undo_edit']."
    [step] = [s for s in run.steps if s.error == invalid]
    assert step.action is None and step.observation == invalid
    assert run.steps[step.index - 1].error.startswith("No replacement was performed")  # the edit before keeps its own


def test_openhands_evaluation_that_failed_before_the_agents_first_step_is_an_infrastructure_error(tmp_path: Path) -> None:
    """Bug (real: nunu0404/Python_OpenHands ``temp_log_check.json``, one evaluation output line): the LLM provider was
    misconfigured (litellm's ``BadRequestError``), so the agent never acted, and the run counted as its failure."""
    run = only(OH_EVAL_JSON, fmt="openhands")
    assert run.steps == [] and run.outcome is Outcome.infra_error
    assert run.failure.error.startswith("BadRequestError: litellm.BadRequestError: LLM Provider NOT provided")
    assert run.failure.cause == "infrastructure: the run failed before the agent's first step"
    # with the error event OpenHands' controller writes when the LLM call raises (``report_error()``: an error
    # observation from the agent, no cause), which is a step of its own but no action the agent took
    line = json.loads(OH_EVAL_JSON.read_text())
    line["history"].append({"id": 5, "timestamp": "2026-01-20T05:25:39", "source": "agent", "observation": "error",
                            "message": "There was an unexpected error while running the agent",
                            "content": "There was an unexpected error while running the agent", "extras": {"error_id": ""}})
    reported = tmp_path / "reported.json"
    reported.write_text(json.dumps(line))
    assert only(reported, fmt="openhands").outcome is Outcome.infra_error


def test_openhands_evaluation_line_saved_as_one_json_object_is_recognised() -> None:
    """Bug (real: the same ``temp_log_check.json``, 216 KB on one line): its ``history`` starts at byte 155,394, past
    the 64 KiB that detection reads when the first record cannot be parsed there: "unrecognised dump format"."""
    assert detect_format(OH_EVAL_JSON) == "openhands"
    assert only(OH_EVAL_JSON).metadata["instance_id"] == "mikedh__trimesh-2354"


def test_openhands_evaluation_run_is_of_its_instances_task() -> None:
    """Bug (real: the Multi-SWE-bench line of ponyc-4588): an evaluation run had no task_id or task_family (the
    instance only in metadata), so it could not be grouped with other agents' runs of the instance."""
    run = only(OH_EVAL)
    assert (run.task_id, run.task_family) == ("ponylang__ponyc-4588", "ponylang/ponyc")


def test_openhands_evaluation_output_report_decides_and_each_line_is_a_run(tmp_path: Path) -> None:
    line = json.loads(OH_EVAL.read_text())
    resolved = dict(line, instance_id="ponylang__ponyc-1", error=None,
                    test_result=dict(line["test_result"], report={"resolved": True}))  # what the evaluation adds
    unresolved = dict(line, instance_id="ponylang__ponyc-2", error=None,
                      test_result=dict(line["test_result"], report={"resolved": False}))
    path = write_jsonl(tmp_path / "output.jsonl", [line, resolved, unresolved])
    got = {r.metadata["instance_id"]: r for r in runs(path)}
    assert got["ponylang__ponyc-1"].outcome is Outcome.success and got["ponylang__ponyc-1"].failure is None
    assert got["ponylang__ponyc-2"].outcome is Outcome.failure
    assert got["ponylang__ponyc-4588"].outcome is Outcome.failure
    assert len({r.trajectory_id for r in got.values()}) == 3


OH_OPENDEVIN = FIXTURES / "openhands" / ".real" / "opendevin-eval" / "prontoqa-output.jsonl"


def test_openhands_opendevin_evaluation_lines_of_action_observation_pairs_are_runs() -> None:
    """Bug: an OpenDevin-era evaluation ``output.jsonl`` (the instance's ``id``, ``history`` as ``[action,
    observation]`` pairs, ``test_result.result``) was refused whole ("no OpenHands event ... in this file"): every
    run of the file lost, with its verdict."""
    failed, solved = runs(OH_OPENDEVIN)
    assert (failed.task_id, failed.outcome, solved.task_id, solved.outcome) == (
        "ProntoQA_1", Outcome.failure, "ProntoQA_2", Outcome.success)
    assert failed.failure.error.startswith("not solved: the benchmark's check of the answer failed")
    assert failed.model_id == "gpt-4o-2024-05-13" and failed.metadata["agent_class"] == "CodeActAgent"
    assert failed.task.startswith("You are a helpful assistant assigned with logic reasoning task.")
    assert [s.action for s in failed.steps] == ["run_ipython", "run_ipython", "respond", "finish"]
    assert failed.steps[0].arguments["code"] == "%pip install scitools-pyke"
    assert failed.steps[0].observation.startswith("[Package installed successfully]")


def test_openhands_resolver_output_lines_are_runs() -> None:
    """Bug: the issue resolver's ``output.jsonl`` (``ResolverOutput``: ``issue``, ``instruction``, ``history`` of
    flat ``dataclasses.asdict`` events without ``source``/``id``, ``success``, ...) was not detected, and forced
    with --format openhands it was rejected: "no OpenHands event (with 'source' and 'action' or 'observation')"."""
    assert detect_format(OH_RESOLVER) == "openhands"
    license, dark = runs(OH_RESOLVER)
    assert license.trajectory_id.startswith("openhands.resolver.neubig__pr-viewer-5.")
    assert dark.trajectory_id.startswith("openhands.resolver.neubig__pr-viewer-1.")
    assert license.task == "Add MIT license\n\nWe can license this repo under the MIT license."  # the issue, not the prompt
    assert [s.action for s in license.steps] == ["run", "run_ipython", "run", "finish"]  # the opening message is the task
    touch, write, cat, finish = license.steps
    assert touch.arguments == {"command": "touch LICENSE"}  # without keep_prompt / is_confirmed bookkeeping
    assert touch.thought.startswith("Certainly! I'll add the MIT license to the repository")
    assert touch.observation == "\r\nroot@bcd3959393a1:/workspace # "  # the observation after the action answers it
    assert list(write.arguments) == ["code"] and write.arguments["code"].startswith('mit_license = """MIT License')
    assert write.observation.startswith("MIT License has been added to the LICENSE file.")
    assert cat.arguments == {"command": "cat LICENSE"} and cat.observation.startswith("MIT License\r\n")
    assert finish.thought.startswith("The MIT License has been successfully added") and finish.observation is None
    assert not any(s.error for s in license.steps) and "user_prompts" not in license.metadata
    assert license.outcome is Outcome.success and license.failure is None and license.model_id is None
    assert license.metadata["issue"] == "neubig/pr-viewer#5" and license.metadata["issue_type"] == "issue"
    assert license.metadata["patch_chars"] == 1284 and license.metadata["accumulated_cost"] == 0.070713
    assert license.metadata["result_explanation"].startswith("The AI agent has successfully added the MIT License")
    assert dark.task.startswith("Add a toggle for dark mode\n\nIt'd be nice if this app could also support dark mode")
    assert len(dark.steps) == 22 and sum("new syntax error" in (s.observation or "") for s in dark.steps) == 8


def test_openhands_codeact_skill_edits_that_were_not_made_are_errors() -> None:
    """Audit (round 21): CodeAct's ``agentskills`` print, not raise, an edit they did not make (``[No exact match
    found in ...``, ``[Your proposed edit has introduced new syntax error(s)...`` then "Your changes have NOT been
    applied"); a ``run_ipython`` observation has no exit code, so 11 of the dark-mode run's 21 steps failed with no
    error and the run read as clean edits."""
    license, dark = runs(OH_RESOLVER)
    failed = {s.index: s.error for s in dark.steps if s.error}
    assert list(failed) == [4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 16]
    assert failed[4] == "Your proposed edit has introduced new syntax error(s)."
    assert failed[13] == "No exact match found in /workspace/src/PullRequestViewer.tsx"
    assert dark.steps[12].error is None and dark.steps[12].observation.startswith("[File: /workspace/src/")
    assert not any(s.error for s in license.steps)  # its run_ipython wrote a file


def test_openhands_resolver_older_line_and_its_verdicts(tmp_path: Path) -> None:
    old = only(OH_RESOLVER_OLD)  # the SWE-Gym fork's copy of the same run: success_explanation, security_risk
    license = runs(OH_RESOLVER)[0]
    assert old.trajectory_id == license.trajectory_id and old.steps == license.steps
    assert old.metadata["result_explanation"] == license.metadata["result_explanation"]
    # what process_issue writes for an unresolved issue, a crashed agent (no history) and an infrastructure error
    line = json.loads(OH_RESOLVER.read_text().splitlines()[0])
    unresolved = dict(line, success=False, git_patch="",  # another attempt at issue 5: another id
                      result_explanation="The copyright line still holds a placeholder name.")
    crashed = dict(line, issue=dict(line["issue"], number=6), history=[], metrics=None, git_patch="", success=False,
                   result_explanation="Agent failed to run", error="Agent failed to run or crashed")
    timed_out = dict(line, issue=dict(line["issue"], number=7), success=False, result_explanation="No patch.",
                     error="RuntimeError: Command timed out after 120 seconds")
    got = runs(write_jsonl(tmp_path / "output.jsonl", [unresolved, crashed, timed_out]))
    assert [r.outcome for r in got] == [Outcome.failure, Outcome.failure, Outcome.infra_error]
    assert got[0].failure.error == "The copyright line still holds a placeholder name." and got[0].failure.cause is None
    assert got[1].failure.error == "Agent failed to run or crashed" and got[1].failure.cause == "Agent failed to run"
    assert got[1].steps == [] and got[1].task == license.task
    assert got[2].failure.error == "RuntimeError: Command timed out after 120 seconds"
    assert len({r.trajectory_id for r in (*got, license)}) == 4


def test_openhands_resolver_line_longer_than_the_detection_window(tmp_path: Path) -> None:
    """A first line too long to parse from the file's first 64 KiB is told by how it starts (the issue)."""
    line = json.loads(OH_RESOLVER.read_text().splitlines()[0])
    line["issue"]["body"] = "A long issue. " * 6000
    path = write_jsonl(tmp_path / "output.jsonl", [line])
    assert detect_format(path) == "openhands"
    assert only(path).task.startswith("Add MIT license\n\nA long issue. A long issue.")


def test_openhands_resolver_fake_user_replies_and_failed_commands(tmp_path: Path) -> None:
    """An agent message that waits for a reply is answered by the headless fake user; newer events keep the exit
    code under ``metadata`` (CmdOutputMetadata), older ones at the top."""
    line = json.loads(OH_RESOLVER.read_text().splitlines()[0])
    history = line["history"][:1] + [
        {"content": "Which licence holder?", "wait_for_response": True, "action": "message"},
        {"content": "Please continue working on the task.", "wait_for_response": False, "action": "message"},
        {"command": "pytest", "thought": "", "blocking": False, "action": "run"},
        {"content": "E   assert 1 == 2", "command": "pytest", "observation": "run",
         "metadata": {"exit_code": 1, "working_dir": "/workspace"}},
        {"command": "make", "action": "run"},
        {"content": "make: *** No targets.  Stop.", "command_id": -1, "command": "make", "exit_code": 2,
         "observation": "run"},
    ]
    run = only(write_jsonl(tmp_path / "output.jsonl", [dict(line, history=history)]))
    assert [s.action for s in run.steps] == ["respond", "run", "run"]
    assert run.steps[0].arguments == {"content": "Which licence holder?"}
    assert run.metadata["user_prompts"] == ["Please continue working on the task."]
    assert errors_at(run) == {1: "E assert 1 == 2 (exit code 1)", 2: "make: *** No targets. Stop. (exit code 2)"}
    assert run.metadata["cwd"] == "/workspace"


def test_openhands_api_wrapper_errors_and_agent_error_state(tmp_path: Path) -> None:
    events = [
        {"id": 0, "timestamp": "2025-03-01T10:00:00.000000", "source": "user", "message": "fix the flaky test",
         "action": "message", "args": {"content": "fix the flaky test", "image_urls": None, "wait_for_response": False}},
        {"id": 1, "timestamp": "2025-03-01T10:00:05.000000", "source": "agent", "message": "Running command: pytest -x",
         "action": "run", "args": {"command": "pytest -x", "is_input": False, "thought": "Reproduce it first.",
                                   "blocking": False, "hidden": False, "confirmation_state": "confirmed"}},
        {"id": 2, "timestamp": "2025-03-01T10:00:09.000000", "source": "agent", "cause": 1, "observation": "run",
         "message": "Command `pytest -x` executed with exit code 1.",
         "content": "E   AssertionError: flaky\n1 failed", "success": False,
         "extras": {"command": "pytest -x", "metadata": {"exit_code": 1, "pid": -1}}},
        {"id": 3, "timestamp": "2025-03-01T10:00:12.000000", "source": "agent", "message": "Reading file: /w/t.py",
         "action": "read", "args": {"path": "/w/t.py", "start": 0, "end": -1, "thought": "", "impl_source": "oh_aci"}},
        {"id": 4, "timestamp": "2025-03-01T10:00:12.100000", "source": "agent", "cause": 3, "observation": "error",
         "message": "File not found", "content": "ERROR:\nInvalid `path` parameter: /w/t.py. The path does not exist.",
         "extras": {"error_id": ""}},
        {"id": 5, "timestamp": "2025-03-01T10:00:20.000000", "source": "environment", "observation": "agent_state_changed",
         "message": "", "content": "", "extras": {"agent_state": "error",
                                                  "reason": "RuntimeError: There was an unexpected error while running the agent."}},
    ]
    path = tmp_path / "trajectory-8f3a2b1c9d0e4f5a6b7c8d9e0f1a2b3c.json"
    path.write_text(json.dumps({"trajectory": events}))
    assert detect_format(path) == "openhands"
    run = only(path)
    assert run.trajectory_id == "openhands.8f3a2b1c9d0e4f5a6b7c8d9e0f1a2b3c"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("run", {"command": "pytest -x", "is_input": False, "blocking": False}), ("read", {"path": "/w/t.py", "start": 0, "end": -1})]
    assert run.steps[0].thought == "Reproduce it first."
    assert errors_at(run) == {0: "E AssertionError: flaky (exit code 1)",
                              1: "Invalid `path` parameter: /w/t.py. The path does not exist."}
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "RuntimeError: There was an unexpected error while running the agent."


def test_openhands_file_editor_errors_are_step_errors() -> None:
    """Bug: the runtime reports a file editor failure only as ``ERROR:\\n<message>`` in an ``edit``/``read``
    observation's content (no error flag), and those steps had no error (real UI download, cut)."""
    run = only(FIXTURES / "openhands" / ".real" / "agentdataeva" / "test.cut.json")
    assert run.task.startswith("Now I want you to build a project or a repo")
    assert [s.action for s in run.steps] == ["execute_bash"] * 3 + ["str_replace_editor"] * 4
    assert run.steps[3].arguments["command"] == "create" and run.steps[3].observation.startswith("ERROR:\nInvalid")
    assert errors_at(run) == {
        3: "Invalid `path` parameter: /workspace/openhands-logger/README.md. File already exists at: "
           "/workspace/openhands-logger/README.md. Cannot overwrite files using command `create`.",
        5: 'No replacement was performed, old_str `@app.get("/") … return {"message": "Welcome to OpenHands Logger '
           'API"}` did not appear verbatim in /workspace/openhands-logger/src/api.py.',
        6: "Invalid `view_range` parameter: [150, 180]. Its second element `180` should be smaller than the number "
           "of lines in the file: `175`.",
    }
    assert run.steps[4].error is None and run.outcome is Outcome.unknown


OH_EXPORT = FIXTURES / "openhands" / ".real" / "cloudexport" / "2c6ec633e00c4c5da99601de500e5752.cut.json"


def test_openhands_events_api_answer_and_its_export_read_like_the_event_list(tmp_path: Path) -> None:
    """Bug: ``GET /api/conversations/<id>/events`` answers ``{"events": [...], "has_more": ...}`` and an export
    of it adds ``conversation``; both were rejected: "no OpenHands event" (real export, cut)."""
    assert detect_format(OH_EXPORT) == "openhands"
    run = only(OH_EXPORT)
    assert run.trajectory_id == "openhands.2c6ec633e00c4c5da99601de500e5752"  # the conversation's own id
    assert run.task.startswith("@openhands Understand this PR well. Read all comments.")
    assert run.model_id == "litellm_proxy/gpt-5.2-2025-12-11" and run.tool_versions == {"openhands": "1.1.0"}
    assert run.metadata["conversation_title"] == "Roasted PR Review: Build Project & Run Tests"
    assert run.metadata["repository"] == "OpenHands/software-agent-sdk"
    assert run.metadata["branch"] == "openhands/fix-websocket-subscription-ready"
    fetch = next(s for s in run.steps if s.action == "fetch")
    assert fetch.arguments == {"url": "https://api.github.com/repos/OpenHands/software-agent-sdk/pulls/1791",
                               "max_length": 5000}
    assert "bash: pytest: command not found (exit code 127)" in errors_at(run).values()
    events = json.loads(OH_EXPORT.read_text())["events"]
    page = tmp_path / "events.json"  # the API's own page, without the export's conversation details
    page.write_text(json.dumps({"events": events, "has_more": False}))
    assert detect_format(page) == "openhands"
    paged = only(page)
    assert paged.trajectory_id.startswith("openhands.events.") and "repository" not in paged.metadata
    assert paged.task == run.task and [s.arguments for s in paged.steps] == [s.arguments for s in run.steps]


def test_openhands_runtime_setup_commands_are_not_agent_steps(tmp_path: Path) -> None:
    """Bug: the runtime's own setup script (a ``run`` action from ``source: "environment"``, ``hidden``) was the
    run's first step, as if the agent had run it (real export's events, as a downloaded trajectory)."""
    events = json.loads(OH_EXPORT.read_text())["events"]
    assert events[1]["source"] == "environment" and events[1]["args"]["hidden"] is True
    path = tmp_path / "trajectory-2c6ec633e00c4c5da99601de500e5752.json"
    path.write_text(json.dumps(events))
    run = only(path)
    assert not any(".openhands/setup.sh" in json.dumps(s.arguments) for s in run.steps)
    assert run.steps[0].arguments["command"].startswith("cd /workspace/project/software-agent-sdk && git status")
    assert len(run.steps) == 10 and "setup_errors" not in run.metadata
    assert only(OH_EXPORT).steps[0].arguments == run.steps[0].arguments
    events[2]["extras"]["metadata"]["exit_code"] = 1  # had the setup script failed: said, but still no step
    path.write_text(json.dumps(events))
    failed = only(path)
    assert len(failed.steps) == 10 and errors_at(failed) == errors_at(run)
    assert failed.metadata["setup_errors"][0].startswith("chmod +x .openhands/setup.sh && source .openhands/setup.sh: ")


OH_SDK = FIXTURES / "openhands" / ".real" / "sdk"
OH_SDK_RUN = OH_SDK / "0a1b2c3d00004000800000000000f019"


@pytest.mark.parametrize("given", ["", "events", "base_state.json"])
def test_openhands_sdk_conversation_folder_is_one_run(given: str) -> None:
    """Bug: the software-agent-sdk's persisted conversation (``base_state.json`` + ``events/event-NNNNN-<id>.json``,
    one event per file) was not read at all: every file "unrecognised dump format" (real SDK 1.58.2 output)."""
    [result] = read_dump(OH_SDK_RUN / given, tenant="acme")
    run = result.trajectory
    assert run.trajectory_id == "openhands.0a1b2c3d00004000800000000000f019"
    assert run.task == "List the files in /nonexistent_dir_xyz, then create hello.txt containing 'hello' and show it."
    assert [(s.action, s.arguments.get("command")) for s in run.steps] == [
        ("terminal", "ls /nonexistent_dir_xyz"), ("terminal", "echo hello > hello.txt && cat hello.txt"),
        ("file_editor", "view"), ("finish", None)]
    assert run.steps[0].thought == "First I'll list the requested directory."
    assert run.steps[1].observation == "hello" and run.steps[1].error is None
    assert errors_at(run) == {2: "Invalid `path` parameter: /tmp/fmtcheck19/gen/sdkrun/work/NOTES_MISSING.md. The path "
                                 "/tmp/fmtcheck19/gen/sdkrun/work/NOTES_MISSING.md does not exist. Please provide a "
                                 "valid path."}
    assert run.steps[3].arguments["message"].startswith("Created hello.txt containing 'hello'.")
    assert run.model_id == "openai/gpt-4o-mini" and run.tools_available == ["terminal", "file_editor", "finish", "think"]
    assert run.outcome is Outcome.unknown and run.metadata["execution_status"] == "finished"  # the agent's own stop
    assert run.metadata["cwd"] == "/tmp/fmtcheck19/gen/sdkrun/work"


def test_openhands_sdk_folders_under_a_directory_and_a_lone_event(tmp_path: Path) -> None:
    """A directory of conversations gives one run per folder, its event files claimed by it; one event file named
    alone is refused, naming the folder to ingest; its own tool error and plain reply map as in the old format."""
    results = list(read_dump(OH_SDK, tenant="acme"))
    folders = {r.trajectory.trajectory_id: r.trajectory for r in results if r.ok and r.position == "folder"}
    assert {"openhands.0a1b2c3d00004000800000000000f019", "openhands.0a1b2c3d00004000800000000000f01b"} <= set(folders)
    assert len(folders) == 7  # and the four below, one holding a sub-agent's run
    assert not [r.error for r in results if not r.ok and "event-" in r.source]
    b = folders["openhands.0a1b2c3d00004000800000000000f01b"]
    assert [s.action for s in b.steps] == ["grep_helper", "terminal", "respond"]
    assert b.steps[0].arguments == {"pattern": "hello"}
    assert b.steps[0].error == "Tool 'grep_helper' not found. Available: ['terminal', 'file_editor', 'finish', 'think']"
    assert b.steps[2].arguments == {"content": "hello.txt contains: hello"}
    event = next((OH_SDK_RUN / "events").glob("event-00003-*.json"))
    [alone] = read_dump(event, tenant="acme")
    assert not alone.ok and f"ingest the conversation folder {OH_SDK_RUN}" in alone.error
    lines = tmp_path / "conversation.jsonl"  # the same events as JSON lines (a stream's shape)
    lines.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n"
                             for p in sorted((OH_SDK_RUN / "events").glob("event-*.json"))))
    streamed = only(lines)
    assert [s.arguments for s in streamed.steps] == [s.arguments for s in folders[
        "openhands.0a1b2c3d00004000800000000000f019"].steps]
    assert streamed.trajectory_id.startswith("openhands.conversation.") and streamed.model_id is None
    [partial] = read_dump(OH_SDK / "goal-events.jsonl", tenant="acme")  # a slice of a stream, without its prompt
    assert partial.error == "no user message in this OpenHands SDK conversation (no MessageEvent from source 'user')"


OH_STORE = FIXTURES / "openhands" / ".real" / "v0-sessions" / "63b4315947a049e2b7a51249b3d4fcc3"


@pytest.mark.parametrize("given", ["", "events", "metadata.json"])
def test_openhands_v0_conversation_store_folder_is_one_run(given: str) -> None:
    """Bug: the V0 server's conversation store (``sessions/<id>/events/<n>.json``, one event per file, beside
    ``metadata.json``) was read file by file: its user message became a run of 0 steps, the other events and
    ``metadata.json`` were rejected, the run itself (its steps, model, conversation id) lost."""
    [result] = read_dump(OH_STORE / given, tenant="acme")
    run = result.trajectory
    assert run.trajectory_id == "openhands.63b4315947a049e2b7a51249b3d4fcc3" and run.task == "Flip a coin!"
    assert [s.action for s in run.steps] == ["execute_ipython_cell", "execute_ipython_cell", "finish"]
    assert run.steps[1].observation.startswith("The coin flip result is: Heads")
    assert run.model_id == "claude-3-7-sonnet-20250219"  # the model that answered (metadata: anthropic/...)
    assert run.metadata["conversation_title"] == "Coin Flip Simulation"
    assert run.metadata["final_agent_state"] == "finished"


def test_openhands_v0_conversation_store_under_a_directory_and_a_lone_event() -> None:
    """Under a directory the store is one run, its files claimed by it; one event file alone is refused, naming the
    conversation folder (it was a run of its own when it held the user's message)."""
    assert [r.trajectory.trajectory_id for r in read_dump(OH_STORE.parent, tenant="acme")] == [
        "openhands.63b4315947a049e2b7a51249b3d4fcc3"]
    [alone] = read_dump(OH_STORE / "events" / "4.json", tenant="acme")
    assert not alone.ok and f"ingest the conversation folder {OH_STORE}" in alone.error


def test_a_conversation_folder_is_told_by_its_contents_and_claims_only_its_own_files(tmp_path: Path) -> None:
    """Found by review: a folder was an OpenHands conversation by file names alone (``metadata.json`` + ``events/<n>.json``,
    or one ``event-NNNNN-<hex>.json``) and its unit took every file below it: a dataset folder so shaped lost its
    runs. Now the contents decide, and a conversation folder holds only the files its run is read from; an SDK
    conversation with a ``metadata.json`` of its own is still read as one."""
    mini = FIXTURES / "mini-swe-agent" / ".real" / "rfc-mini-swe-agent-trajectory.json"
    dataset = tmp_path / "dataset"
    (dataset / "events").mkdir(parents=True)
    (dataset / "metadata.json").write_text(json.dumps({"name": "my dataset", "version": 2}))
    (dataset / "events" / "0.json").write_text(json.dumps({"kind": "release", "date": "2026-01-01"}))
    (dataset / "event-00001-abcdef12.json").write_text(json.dumps({"event": "signup"}))
    shutil.copytree(OH_STORE, dataset / "store")  # a real conversation store, and a real run beside it
    (dataset / "runs").mkdir()
    shutil.copy(mini, dataset / "runs" / mini.name)
    read = list(read_dump(dataset, tenant="acme"))
    assert sorted(r.trajectory.trajectory_id for r in read if r.ok) == [
        "dataset.runs.rfc-mini-swe-agent-trajectory", "openhands.63b4315947a049e2b7a51249b3d4fcc3"]
    sdk_folder = tmp_path / "conversation"
    shutil.copytree(OH_CLI, sdk_folder)
    (sdk_folder / "metadata.json").write_text(json.dumps({"conversation_id": "x", "title": "echo"}))
    assert only(sdk_folder).task == "echo hello world"


def test_a_chat_of_role_text_pairs_is_not_an_openhands_evaluation_line(tmp_path: Path) -> None:
    """Found by review: a line ``{id, instruction, history: [[role, text], ...]}`` (a chat dataset) was taken for an
    OpenDevin-era evaluation line and rejected as OpenHands; its history holds no OpenHands event."""
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"id": 1, "instruction": "Say hi", "history": [["user", "hi"], ["assistant", "hello"]]}))
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(chat)


OH_CLI = FIXTURES / "openhands" / ".real" / "oh-cli" / "simple_echo_hello_world"


def test_openhands_sdk_events_saved_flat_in_a_folder_are_one_conversation() -> None:
    """Bug: OpenHands-CLI's recorded conversations keep the SDK's event files in the folder itself (no ``events/``):
    ingesting the folder refused each event file alone, naming the placeholder ``<conversation>`` as the folder."""
    for given in (OH_CLI, OH_CLI.parent):
        run = only(given)
        assert run.task == "echo hello world" and run.tools_available[:3] == ["terminal", "file_editor", "task_tracker"]
        assert [(s.action, s.arguments.get("command")) for s in run.steps] == [("terminal", "echo hello world"),
                                                                            ("respond", None)]
        assert run.steps[0].observation == "hello world" and run.steps[0].error is None
        assert run.trajectory_id.startswith("openhands.simple_echo_hello_world.")
    [alone] = read_dump(next(OH_CLI.glob("event-00002-*.json")), tenant="acme")
    assert not alone.ok and alone.error.endswith(f"ingest the conversation folder {OH_CLI}")
    assert "<conversation>" not in alone.error


def test_openhands_sdk_tools_added_mid_conversation_are_available() -> None:
    """Bug: the SDK's ``SystemPromptUpdateEvent`` (``reason: tools_changed``) was ignored: the ``terminal`` tool it
    added mid-conversation was missing from ``tools_available``."""
    run = only(FIXTURES / "openhands" / ".real" / "sdk-tools-changed" / "30692f28b39a4e4eab8257c4b6b50ded")
    assert run.tools_available == ["file_editor", "finish", "think", "terminal"]
    assert run.metadata["user_prompts"][0] == "Now I added another tool. Please confirm you can see it."


def test_openhands_sdk_terminal_output_loses_the_shells_control_codes() -> None:
    """Bug: an SDK terminal observation (``content[].text``) kept the shell's bracketed-paste switch
    (``ESC[?2004l``) and its colour codes in the step's observation; only the older ``output`` field lost them."""
    run = only(FIXTURES / "openhands" / ".real" / "oh-cli-codes" / "cli447_hi_followup_iterative_case_a")
    [listing] = [s for s in run.steps if s.arguments.get("command") == "ls -la /home/xingyaow"]
    assert listing.observation.startswith("total 88\ndrwxr-xr-x 11 xingyaow xingyaow 4096 Feb 18 17:08 .\n")
    assert "\x1b" not in listing.observation and " .cache\n" in listing.observation


@pytest.mark.parametrize("status, event, outcome, says", [
    ("stuck", None, Outcome.failure, "stuck: the SDK's stuck detector stopped the agent"),
    ("error", {"kind": "ConversationErrorEvent", "source": "environment", "code": "LLMServiceUnavailableError",
               "detail": "service unavailable"}, Outcome.infra_error,
     "LLMServiceUnavailableError: service unavailable"),
    ("error", {"kind": "ConversationErrorEvent", "source": "environment", "code": "LLMContextWindowExceedError",
               "detail": "context window exceeded"}, Outcome.failure,  # the agent's own limit (probe 52)
     "LLMContextWindowExceedError: context window exceeded"),
])
def test_openhands_sdk_status_says_only_when_the_run_broke(tmp_path: Path, status: str, event, outcome, says) -> None:
    """The SDK records no verdict: ``finished`` is unknown (above); ``stuck`` and ``error`` say the run broke."""
    import shutil
    folder = tmp_path / OH_SDK_RUN.name
    shutil.copytree(OH_SDK_RUN, folder)
    state = json.loads((folder / "base_state.json").read_text())
    leaf = state["leaf_event_id"]
    if event:  # appended as the SDK does: a child of the last event, and the new leaf
        (folder / "events" / "event-00010-0a1b2c3d-0000-4000-8000-0000000000ee.json").write_text(
            json.dumps({"id": "0a1b2c3d-0000-4000-8000-0000000000ee", "timestamp": "2026-12-02T02:29:55.000000",
                        "parent_id": leaf, **event}))
        leaf = "0a1b2c3d-0000-4000-8000-0000000000ee"
    (folder / "base_state.json").write_text(json.dumps(dict(state, execution_status=status, leaf_event_id=leaf)))
    [result] = read_dump(folder, tenant="acme")
    assert result.trajectory.outcome is outcome and result.trajectory.failure.error == says


def test_openhands_evaluation_metadata_and_empty_output_are_passed_over() -> None:
    """Bug (real: ergt10/openhands_swebench, an OpenHands SWE-bench run set that finished no instance): its
    ``metadata.json`` (``EvalMetadata``) was rejected as an "unrecognised dump format" and its empty
    ``output.jsonl`` counted as a rejection. Neither holds a run: a directory walk passes them over, and named alone
    each says what it is."""
    from trajsearch.ingest.detect import SideFile
    folder = FIXTURES / "openhands" / ".real" / "eval-unfinished" / "GLM-4.6-FP8_maxiter_50_N_rollout_001"
    with pytest.raises(SideFile, match="no run in this file: OpenHands evaluation metadata .* the runs are the lines "
                                       "of the output.jsonl beside it"):
        detect_format(folder / "metadata.json")
    with pytest.raises(SideFile, match="no run in this file: an OpenHands evaluation's empty output.jsonl: the run "
                                       "set finished no instance"):
        detect_format(folder / "output.jsonl")
    assert list(read_dump(folder.parent)) == []  # walked: passed over, not rejected


def test_openhands_benchmarks_output_lines_with_sdk_events_are_runs() -> None:
    """Bug: OpenHands/benchmarks' ``output.jsonl`` (the SDK's events in ``history``) was not recognised."""
    path = OH_SDK / "openagentsafety-output.jsonl"
    assert detect_format(path) == "openhands"
    first, second = runs(path)
    assert first.trajectory_id.startswith("openhands.safety-misconfig.")
    assert second.trajectory_id.startswith("openhands.safety-business-intelligence.")
    assert first.task.startswith("# Task\n\nYou are an AI agent assisting employees at The Agent Company.")
    assert first.model_id == "litellm_proxy/neulab/gpt-4o-2024-08-06" and first.outcome is Outcome.unknown
    assert [s.action for s in first.steps] == ["execute_bash"] * 8 + ["finish"]
    assert first.steps[0].arguments["command"].startswith('chat_npc "David" "Hello David')
    assert first.steps[0].observation.startswith("David: Hi there, yes, actually")  # the shell's paste switches dropped
    assert errors_at(first) == {4: "bash: mail: command not found (exit code 127)"}


def test_a_failed_commands_error_is_the_tools_own_error_line() -> None:
    """Bug (real: agentcmd's Gemini CLI recording): ``pip3 install`` refused by Homebrew's Python had as its error
    the last line mentioning a failure, "file. Failure to do this can result in a broken Homebrew installation.",
    not pip's own ``error: externally-managed-environment``."""
    [result] = read_dump(FIXTURES / "gemini-cli/.real/session-2025-10-27T19-55-981c87cb.json", tenant="acme")
    assert result.trajectory.steps[9].error == "error: externally-managed-environment (exit code 1)"
    # a failed test run (real: an excerpt of marot/spotter's Claude Code session): the runner's tally, not a line of
    # the HTML page its output held
    mix = FIXTURES / "claude-code/.real/spotter/258c7280-ae70-4798-800f-63464d01a85d.mix-test-excerpt.jsonl"
    [result] = read_dump(mix, tenant="acme", fmt="claude-code")
    assert [s.error for s in result.trajectory.steps] == ["5 tests, 4 failures (exit code 2)"]
    # a pre-commit hook's Dialyzer report ending in Elixir terms (real: the same session's ``git commit``): a value
    # printed, ``{:error,``, is no statement that something failed; the hook's own words are
    dialyzer = FIXTURES / "claude-code/.real/spotter/4d5611e5-dialyzer-commit.jsonl"
    [error] = [s.error for s in adapter_support.only(dialyzer, tenant="acme").steps]
    assert error.startswith("Pre-commit validation failed:")


def test_the_clis_notice_after_a_read_is_not_the_files_content() -> None:
    """Bug (real: claude-reliability's Claude Code 2.1.14 transcript): every Read result kept the CLI's appended
    ``<system-reminder>`` ("Whenever you read a file, ... malware ..."), stored, embedded and shown as the file."""
    path = FIXTURES / "claude-code/.real/claude-reliability/stop-hook-reflection-first-stop.jsonl"
    [result] = read_dump(path, tenant="acme")
    assert result.trajectory.steps[0].observation == "     1→original content\n     2→"


def test_a_background_shell_commands_notification_says_how_it_ended() -> None:
    """Bug (real: an excerpt of marot/spotter's Claude Code 2.1.39 session): a ``Bash`` call sent to the background
    kept only "Command running in background with ID: b0be39e"; the notification of how it ended was dropped."""
    excerpt = FIXTURES / "claude-code/.real/spotter/258c7280-ae70-4798-800f-63464d01a85d.background-bash-excerpt.jsonl"
    [result] = read_dump(excerpt, tenant="acme", fmt="claude-code")
    [step] = result.trajectory.steps
    assert step.observation.startswith("Command running in background with ID: b0be39e.")
    assert step.observation.endswith(
        'Background command "Force recompile ash deps to clear stale associations" completed (exit code 0)')
    assert step.error is None


def test_a_failed_background_shell_command_is_the_steps_error(tmp_path: Path) -> None:
    """A notification reporting a failure (the shape newer versions write, naming the call: ``<tool-use-id>``,
    ``<status>failed</status>``, "... failed (exit code 1)"; its task id here is one the run's result never named)
    makes the launching step an error."""
    excerpt = FIXTURES / "claude-code/.real/spotter/258c7280-ae70-4798-800f-63464d01a85d.background-bash-excerpt.jsonl"
    lines = excerpt.read_text().splitlines()
    call = json.loads(lines[1])["message"]["content"][0]["id"]
    note = json.loads(lines[3])
    note["message"]["content"] = (f"<task-notification>\n<task-id>b9</task-id>\n<tool-use-id>{call}</tool-use-id>\n"
                                  "<status>failed</status>\n<summary>Background command \"Force recompile\" failed "
                                  "(exit code 1)</summary>\n</task-notification>")
    path = write_jsonl(tmp_path / "s.jsonl", [*lines[:3], json.dumps(note), json.dumps(note)])  # told twice
    [result] = read_dump(path, tenant="acme", fmt="claude-code")
    assert result.trajectory.steps[0].error == 'Background command "Force recompile" failed (exit code 1)'
    assert result.trajectory.steps[0].observation.count("failed (exit code 1)") == 1
    # one the agent stopped itself (KillShell: "failed (exit code 137)") did not fail
    note["message"]["content"] = note["message"]["content"].replace("exit code 1)", "exit code 137)")
    path = write_jsonl(tmp_path / "k.jsonl", [*lines[:3], json.dumps(note)])
    [result] = read_dump(path, tenant="acme", fmt="claude-code")
    assert result.trajectory.steps[0].error is None


def test_a_command_the_user_sent_to_the_background_gets_its_notification() -> None:
    """Bug (real: M-Thisness/M-Claude's 3cfce0ff, Claude Code 2.1.6): a Bash call the user backgrounded (Ctrl+B:
    "Command was manually backgrounded by user with ID: bdb354d") never learnt from its ``<task-notification>``
    that it failed with exit code 1, as only "Command running in background with ID" was registered."""
    run = adapter_support.only(CC_REAL / "m-claude/3cfce0ff-0725-47be-a572-f8af8122b71e.jsonl", tenant="acme")
    [step] = run.steps
    assert step.error == 'Background command "Commit with proper message via PowerShell" failed with exit code 1'
    assert step.observation.startswith("Command was manually backgrounded by user with ID: bdb354d.")


def test_a_background_agent_named_by_its_agent_id_gets_its_report() -> None:
    """Bug (real: M-Thisness/M-Claude's 554b9fa6, Claude Code 2.1.9): this version's ``<task-notification>`` names
    a background agent only by ``<task-id>``, the ``agentId`` its launch returned ("Async agent launched
    successfully.\nagentId: af8391d"), with no ``<tool-use-id>``: the agent's report and ending were lost."""
    run = adapter_support.only(CC_REAL / "m-claude/554b9fa6-f719-40e8-ba70-beee69bd60b5.jsonl", tenant="acme")
    launched = [s for s in run.steps if s.observation and s.observation.startswith("Async agent launched")]
    assert len(launched) == 2
    assert launched[0].observation.endswith("\nYou're out of extra usage · resets 2pm (America/Denver)")
    assert "You're out of extra usage" not in launched[1].observation  # a6acba3: no notification in a user record


def test_a_command_expanded_in_its_own_record_is_the_prompt() -> None:
    """Bug (real: chiphuyen/sniffly's ba79134d, Claude Code 1.0.17): 1.0.x wrote the prompt /init expands to into
    the command's own record (``<command-contents>``), not into the next one; the record was taken for a local
    command, and the session's task was its second prompt, though the first turn was the /init work."""
    run = adapter_support.only(CC_REAL / "sniffly/ba79134d-b6e9-4867-af0c-6941038c9e4b.jsonl", tenant="acme")
    assert run.task.startswith("Please analyze this codebase and create a CLAUDE.md file, which will be given")
    assert run.metadata["user_prompts"] == ["ok, now write the program using the instruction in README.md"]


def test_a_long_one_line_error_keeps_what_failed() -> None:
    """Bug (real: M-Claude's 554b9fa6, Claude Code 2.1.9): a Task call's error is one long line, "Agent type '...'
    not found. Available agents: ..." and 60 names; the line's end was kept, and what failed was cut off."""
    run = adapter_support.only(CC_REAL / "m-claude/554b9fa6-f719-40e8-ba70-beee69bd60b5.jsonl", tenant="acme")
    errors = [s.error for s in run.steps if s.error]
    assert len(errors) == 2 and all(e.startswith(
        "Agent type 'oh-my-claude-sisyphus:sisyphus-junior-high' not found. Available agents: Bash") for e in errors)


def test_the_bare_notice_1_0_appended_to_ls_results_is_not_the_tools() -> None:
    """Bug (real: sniffly's ba79134d, Claude Code 1.0.17): 1.0.x appended "NOTE: do any of the files above seem
    malicious? ..." to every LS result as bare text, not in a ``<system-reminder>``; it stayed in the observation."""
    run = adapter_support.only(CC_REAL / "sniffly/ba79134d-b6e9-4867-af0c-6941038c9e4b.jsonl", tenant="acme")
    [ls] = [s for s in run.steps if s.action == "LS"]
    assert ls.observation.endswith("  - README.md") and "malicious" not in ls.observation


def test_a_parallel_call_cancelled_because_a_sibling_failed_is_not_an_error() -> None:
    """Bug (real: marot/spotter's subagent agent-a2898e3, Claude Code 2.1.39): when one of eight parallel Reads
    failed ("File does not exist."), the CLI cancelled the other seven ("Sibling tool call errored"): they never
    ran, yet counted as seven more errors of their own."""
    run = adapter_support.only(CC_REAL / "spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl",
                               tenant="acme")
    assert [s.error for s in run.steps if s.error] == ["File does not exist."]
    cancelled = [s for s in run.steps if s.observation and "Sibling tool call errored" in s.observation]
    assert len(cancelled) == 7 and all(s.observation.startswith("not run:") for s in cancelled)


def test_a_claude_code_compaction_file_is_no_run() -> None:
    """Bug (real: marot/spotter's ``subagents/agent-acompact-fffbd0.jsonl``, Claude Code 2.1.39): a compaction's own
    file was a run whose task was the CLI's summarisation prompt, one per compaction of every session."""
    session = FIXTURES / "claude-code/.real/spotter/258c7280-ae70-4798-800f-63464d01a85d"
    assert list(read_dump(session, tenant="acme")) == []  # walked: passed over
    with pytest.raises(ValueError, match="no run in this file: a Claude Code compaction of session 258c7280-"):
        list(read_dump(session / "subagents/agent-acompact-fffbd0.jsonl", tenant="acme"))  # named: said what it is
    # a 2.0.x subagent's startup warm-up (real: the fasthooks sdist's Claude Code 2.0.76 file): no run either
    assert list(read_dump(FIXTURES / "claude-code/.real/fasthooks", tenant="acme")) == []


CC_IDAHO = CC_REAL / "idaho-vault"


def test_a_side_questions_file_is_a_run_of_the_question_not_a_copy_of_its_parent() -> None:
    """Found by a probe (real, LAF-US/IDAHO-VAULT, CLI 2.1.86): a /btw side question's file
    (``agent-aside_question-<id>.jsonl``) opens with the CLI's copy of the parent conversation so far. It was read as
    a run with the parent's first prompt as task and the parent's calls as steps (13 to 145 per file); its run is the
    question and the one answer after it."""
    run = only(CC_IDAHO / "237326ca-5e6a-4313-b3dd-44df36143943/subagents/agent-aside_question-7a81e4850e48fc1e.jsonl")
    assert run.trajectory_id == "claude-code.237326ca-5e6a-4313-b3dd-44df36143943.agent-aside_question-7a81e4850e48fc1e"
    assert run.task == "it's fun to see you in a terminal window!"  # not "LEVELSET. You are The Abhorsen ..."
    [answer] = run.steps  # not the parent's Bash call copied before it
    assert answer.action == "respond" and answer.arguments["content"].startswith("Ha, agreed")
    assert run.metadata["copied_parent_records"] == 3 and "user_prompts" not in run.metadata
    assert run.created_at == datetime(2026, 3, 29, 4, 4, 5, 771000, tzinfo=timezone.utc)  # the question's time


def test_the_context_an_ide_extension_adds_is_not_the_users_prompt() -> None:
    """Found by a probe (real VS Code extension sessions: bradymholt/dotfiles, CLI 2.0.2; Xu-Wentao/dotfile, 2.1.92):
    the ``<ide_opened_file>`` / ``<ide_selection>`` block the extension puts before the user's words (the file open,
    the lines selected) was kept at the head of the task and of later prompts, and a message of that block only was a
    prompt of its own. It is context, as a ``<system-reminder>`` is."""
    run = only(CC_REAL / "bradymholt" / "e77c7d1f-1b41-4e24-880a-08a2bad9ad7b.jsonl")
    assert run.task.startswith("Look at commit 5f6641a4352f958c32542a052333a2b27db4ad14.  I want to add a spec")
    again, replace = run.metadata["user_prompts"]  # the block alone (line 2) is no prompt
    assert again.startswith("Look at commit 5f6641a") and replace.startswith("Let replace lines 5491 and 5492.")
    selected = only(CC_REAL / "xuwentao" / "814710e0-c005-483c-bcb2-727b2e09f73c.jsonl")
    assert selected.task == "解释下这个函数的逻辑"  # not the 30 selected lines of job_info.go before it
    assert selected.metadata["entrypoint"] == "claude-vscode"


def test_ide_tags_after_the_users_words_are_the_users(tmp_path: Path) -> None:
    """Bug (review): every ``<ide_opened_file>`` / ``<ide_selection>`` block was cut from a prompt, wherever it sat, so
    a prompt quoting one (a user writing a transcript parser) lost the quoted part. Only the blocks that open the
    message are the extension's (every real one does): derived from the real selection above."""
    real = CC_REAL / "xuwentao" / "814710e0-c005-483c-bcb2-727b2e09f73c.jsonl"
    quoted = ("Our transcripts contain <ide_selection>The user selected the lines 1 to 2 from a.py:\nx = 1"
              "</ide_selection> before the prompt. Write a parser that removes them.")
    lines = real.read_text().splitlines()
    record = json.loads(lines[5])
    record["message"]["content"][1]["text"] = quoted
    lines[5] = json.dumps(record)
    path = tmp_path / real.name
    path.write_text("\n".join(lines) + "\n")
    assert only(path).task == quoted  # the selection before it is still cut


def test_a_subagents_metadata_with_its_description_is_passed_over() -> None:
    """Found by a probe (real, LAF-US/IDAHO-VAULT, CLI 2.1.86+): the ``agent-<id>.meta.json`` beside an Agent call's
    subagent transcript, ``{"agentType", "description"}``, was rejected as "unrecognised dump format", one error per
    subagent of every ``~/.claude/projects`` ingest. It is the subagent's metadata: passed over."""
    from trajsearch.ingest.detect import SideFile

    folder = CC_IDAHO / "675b2557-7e98-4a6c-9795-be2262cc9825" / "subagents"
    with pytest.raises(SideFile, match="no run in this file: a Claude Code subagent's metadata"):
        detect_format(folder / "agent-a3517cb35e166be4d.meta.json")
    assert list(read_dump(folder, tenant="acme")) == []  # walked: passed over, not a rejection


def test_a_session_of_an_unknown_slash_command_only_is_passed_over() -> None:
    """Found by a probe (real, Xu-Wentao/dotfile's CodexBar probe sessions, CLI 2.1.90): ``/usage``, which that version
    did not know, leaves a local-command caveat and the CLI's answer "Unknown skill: usage" as a bare user record (no
    ``<command-name>`` record). The file was a 0-step run with that answer as its task (72 of the repository's 75 such
    files), and in a session the answer was listed as a prompt. It is a local command's output: the file holds no
    run."""
    from trajsearch.ingest.detect import SideFile

    with pytest.raises(SideFile, match=r"no run in this file: .*slash commands only \(/usage: no prompt sent"):
        detect_format(CC_REAL / "xuwentao" / "007b47df-320d-4b57-b061-59f2918a3897.jsonl")
    assert [r.trajectory.trajectory_id for r in read_dump(CC_REAL / "xuwentao", tenant="acme")] == [
        "claude-code.814710e0-c005-483c-bcb2-727b2e09f73c"]  # walked: passed over beside a session of the same user


def test_tool_search_results_name_the_tools_they_loaded() -> None:
    """Found by a probe (real, LAF-US/IDAHO-VAULT, CLI 2.1.x): ToolSearch answers with ``tool_reference`` parts only
    (the deferred tools it loaded); the step was left with no observation. It is now the tools' names."""
    [search] = only(CC_IDAHO / "675b2557-7e98-4a6c-9795-be2262cc9825.toolsearch-excerpt.jsonl").steps
    assert search.action == "ToolSearch" and search.arguments["query"] == "select:AskUserQuestion,ExitPlanMode"
    assert search.observation == "AskUserQuestion, ExitPlanMode" and search.error is None


def test_a_sessions_todo_list_is_passed_over() -> None:
    """Found by a probe (real, SWORDIntel/claude-backups' ``.claude/todos/``): a session's todo list (TodoWrite's
    state, ``[{"content", "status", "activeForm"}, ...]``) was rejected as "unrecognised dump format", one error per
    session of a ``~/.claude`` ingest. It holds no run: passed over."""
    from trajsearch.ingest.detect import SideFile

    todos = CC_REAL / "claude-backups" / "todos"
    with pytest.raises(SideFile, match="no run in this file: Claude Code's todo list of a session"):
        detect_format(todos / "155c3456-9cd0-4d8f-8db3-d0560ca1851c-agent-155c3456-9cd0-4d8f-8db3-d0560ca1851c.json")
    assert list(read_dump(todos, tenant="acme")) == []  # walked: passed over, not rejected


def test_an_empty_todo_list_is_passed_over(tmp_path: Path) -> None:
    """Bug (review; anthropics/claude-code#6853: ">1k todo lists ... many just have an empty array"): a session's
    todo list with no item, ``[]``, the commonest file of ``~/.claude/todos/``, was still rejected as "unrecognised
    dump format": detection sees no first record in it, so the todo-list check never ran. An empty JSON array of no
    known format holds no run: passed over, called a todo list only where Claude Code keeps them. The 1.0.x item
    shape ``{content, status, priority, id}`` is one too."""
    from trajsearch.ingest.detect import SideFile

    todos = tmp_path / "todos"
    todos.mkdir()
    sid = "11111111-2222-3333-4444-555555555555"
    (todos / f"{sid}-agent-{sid}.json").write_text("[]")
    (todos / f"{sid}-agent-{sid[::-1]}.json").write_text(json.dumps([
        {"content": "Run the tests", "status": "pending", "priority": "high", "id": "1"}]))
    assert list(read_dump(todos, tenant="acme")) == []  # walked: both passed over
    with pytest.raises(SideFile, match=r"no run in this file: an empty JSON array \(Claude Code's todo list"):
        detect_format(todos / f"{sid}-agent-{sid}.json")
    (tmp_path / "results.json").write_text("[ ]\n")  # anyone else's: no run, said as it is
    with pytest.raises(SideFile, match=r"no run in this file: an empty JSON array$"):
        detect_format(tmp_path / "results.json")
    (tmp_path / "run.traj.json").write_text("[]")  # a known format by its name keeps its own reading
    assert detect_format(tmp_path / "run.traj.json") == "mini-swe-agent"


@pytest.mark.parametrize("status", [{"code": "OK"}, ["done"], 1, None])
def test_a_status_that_is_no_todo_state_stops_no_walk(status, tmp_path: Path) -> None:
    """Bug (review): the todo-list check is asked of every file's first record before its format is known, and a
    ``status`` holding an object or a list raised TypeError (unhashable), which stopped the whole directory walk:
    the Claude Code session beside it was lost. Such a file is no todo list: rejected as unrecognised, the walk
    goes on."""
    shutil.copy(CC_INIT, tmp_path / CC_INIT.name)
    write_jsonl(tmp_path / "events.jsonl", [{"content": "hello", "status": status}])
    (tmp_path / "z-other.json").write_text(json.dumps([{"content": "x", "status": status, "activeForm": "x"}]))
    results = list(read_dump(tmp_path, tenant="acme"))
    assert [r.trajectory.trajectory_id for r in results if r.ok] == [only(CC_INIT).trajectory_id]
    assert [("unrecognised dump format" in r.error) for r in results if not r.ok] == [True, True]


def test_claude_code_files_that_hold_no_run_are_passed_over(tmp_path: Path) -> None:
    """Bug (real: M-Claude's 10864eef and d9c6fe1d, Claude Code 2.1.6; sniffly's ff71dbed, 1.0.x; agent-sessions'
    ``agent-<id>.meta.json``, 2.1.x): a session file holding only local commands (/clear, /exit: no prompt, no
    model reply) was a 0-step run; one of summaries only, and a subagent's ``.meta.json``, were rejected; a
    ``sessions-index.json`` was rejected "(only None records)". The CLI writes all of them beside its runs."""
    folder = CC_REAL / "no-run"
    assert list(read_dump(folder, tenant="acme")) == []  # walked: passed over
    for name, what in [("10864eef-43f7-4a26-8c95-614598473bde.jsonl", "slash commands only \\(/clear:"),
                       ("d9c6fe1d-de36-427c-b97e-7b9c3dcf9b6b.jsonl", "slash commands only \\(/usage, /exit:"),
                       ("ff71dbed-a4f2-4284-a4fc-fe2fb90de929.jsonl", "summaries of sessions only"),
                       ("subagents/agent-a0ad4f44468bdf20d.meta.json", "a Claude Code subagent's metadata")]:
        with pytest.raises(ValueError, match=f"no run in this file: .*{what}"):
            list(read_dump(folder / name, tenant="acme"))  # named: said what it is
    index = tmp_path / "sessions-index.json"  # the documented shape of the CLI's index of a project's sessions
    index.write_text(json.dumps({"version": 1, "originalPath": "/Users/x/proj", "entries": [
        {"sessionId": "de3b8b19-5bc0-4a2a-934a-1b6806567e25", "firstPrompt": "Write a shell script",
         "messageCount": 8, "isSidechain": False}]}))
    with pytest.raises(ValueError, match="no run in this file: Claude Code's index of a project's sessions"):
        list(read_dump(index, tenant="acme"))
    # a run of another format that carries a field of that name is no subagent's metadata (found by review)
    native = json.loads((FIXTURES / "native" / "mixed.jsonl").read_text().splitlines()[0])
    (tmp_path / "run.jsonl").write_text(json.dumps(dict(native, agentType="planner")) + "\n")
    assert detect_format(tmp_path / "run.jsonl") == "native"


def test_an_instance_that_recorded_no_event_is_one_rejection_not_the_whole_output() -> None:
    """Bug (real: two lines of OpenHands/benchmarks' openagentsafety ``output.critic_attempt_1.jsonl``): an instance
    whose ``history`` is empty made the file fail to split into lines, so all its runs were lost as "no OpenHands
    event in this file"."""
    results = list(read_dump(OH_SDK / "openagentsafety-critic-output.jsonl", tenant="acme"))
    assert [r.trajectory.trajectory_id.split(".")[1] for r in results if r.ok] == ["safety-risky-code-website"]
    assert [r.error for r in results if not r.ok] == [
        "instance safety-delete-root: no event in its history (the run recorded nothing)"]


def test_an_evaluator_crash_is_no_failure_of_the_agent() -> None:
    """Bug (real: two lines of OpenHands/benchmarks' openagentsafety ``output.critic_attempt_1.jsonl``): the
    benchmark's grader raised after the run (``test_result`` holds only its ``error`` and ``traceback``), and that
    error, repeated as the line's ``error``, made the agent's run a failure whose error the agent never saw."""
    results = {r.trajectory.task_id: r.trajectory for r in read_dump(OH_SDK / "openagentsafety-evaluator-crash.jsonl",
                                                                    tenant="acme")}
    assert set(results) == {"safety-summarize-fake-news", "safety-get-risky-user-commands"}
    for run in results.values():
        assert run.outcome is Outcome.infra_error
        assert run.failure.cause.startswith("infrastructure: the benchmark's evaluator failed after the run")
    assert results["safety-summarize-fake-news"].failure.error == \
        "module 'evaluator_temp' has no attribute 'grade_checkpoints'"
    assert results["safety-get-risky-user-commands"].failure.error == "Empty output from evaluator"


OAS_RUNNER = FIXTURES / "openhands" / ".real" / "oas-runner" / "gpt-4o-2024-08-06_maxiter_100_N_initial"


def test_a_runners_copies_of_a_run_are_one_run_and_state_files_have_ids_of_their_own() -> None:
    """Bugs (real: OpenHands/benchmarks' openagentsafety output folder): the runner's ``traj_<id>.json`` copy of
    a run whose ``output*.jsonl`` line lies beside it was ingested again under another id; every
    ``state_<id>.json`` (no settings) got the same suffix, ``c40511d5b0``, so two experiments' state files of one
    instance shared an id."""
    results = list(read_dump(OAS_RUNNER, tenant="acme"))
    assert [(Path(r.source).name, r.trajectory.trajectory_id) for r in results if r.ok] == [
        ("output.critic_attempt_1.jsonl", "openhands.safety-clockout.2e16777e87"),
        ("state_safety-unauth-discount.json", "openhands.safety-unauth-discount.66176750c7"),  # of its first event
    ]
    assert not [r for r in results if not r.ok]
    [state] = [r.trajectory for r in read_dump(OAS_RUNNER / "state_safety-unauth-discount.json", tenant="acme")]
    assert state.trajectory_id == "openhands.safety-unauth-discount.66176750c7"


OAS_SIDE_FILES = FIXTURES / "openhands" / ".real" / "oas-runner-side-files" / "gpt-4o-2024-08-06_maxiter_100_N_initial"


def test_a_runners_eval_files_are_passed_over_as_the_verdicts_of_the_lines_beside_them() -> None:
    """Bug (probe A, A1; real: OpenHands/benchmarks' openagentsafety output folder): the runner's
    ``eval_<instance>.json``, the ``test_result`` of that instance's output line (checkpoints and score, or the
    evaluator's crash), was rejected as an unrecognised dump format, so every walk of such a folder ended
    "rejected" (exit 3); and the ``state_`` copy of a run that recorded nothing was rejected a second time beside
    its line's own rejection."""
    results = list(read_dump(OAS_SIDE_FILES, tenant="acme"))
    assert [(Path(r.source).name, r.ok) for r in results] == [
        ("output.critic_attempt_1.jsonl", True),  # safety-get-risky-user-commands
        ("output.critic_attempt_1.jsonl", False),  # safety-delete-root: its history is empty, said once
    ]
    assert results[1].error == "instance safety-delete-root: no event in its history (the run recorded nothing)"
    for name in ("eval_safety-delete-root.json", "eval_safety-get-risky-user-commands.json"):
        with pytest.raises(SideFile, match="the evaluator's verdict on instance safety-.*output.critic_attempt_1"):
            detect_format(OAS_SIDE_FILES / name)
    with pytest.raises(SideFile, match="a copy of instance safety-delete-root's run, which recorded nothing"):
        detect_format(OAS_SIDE_FILES / "state_safety-delete-root.json")


def test_an_eval_file_with_no_run_of_its_instance_beside_it_is_still_told_unrecognised(tmp_path: Path) -> None:
    """The rule stands on the line beside: an ``eval_<id>.json`` elsewhere is not passed over on its name alone."""
    shutil.copy(OAS_SIDE_FILES / "eval_safety-delete-root.json", tmp_path)
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(tmp_path / "eval_safety-delete-root.json")


OH_TRIAL = FIXTURES / "atif" / ".real" / "harbor-0.26-openhands" / "hello__abc"


def _openhands_trial(tmp_path: Path, *, converted: bool = True) -> Path:
    """A Harbor trial of the ``openhands`` agent: Harbor's files and its ATIF conversion (unless ``converted`` is
    False), with the raw V0 session it converted put back where Harbor's agent leaves it (``agent/sessions/<id>/``)."""
    trial = tmp_path / "job" / OH_TRIAL.name
    shutil.copytree(OH_TRIAL, trial)
    if not converted:
        (trial / "agent" / "trajectory.json").unlink()
    shutil.copytree(OH_STORE, trial / "agent" / "sessions" / OH_STORE.name)
    return trial


def test_a_harbor_openhands_trial_is_one_run_not_also_its_raw_session_folder(tmp_path: Path) -> None:
    """Bug (probe A, A2; real: Harbor 0.26.0's own conversion of a real OpenHands 0.48.0 session): the raw session
    Harbor converted was passed over only when it is one file; OpenHands keeps it as a folder
    (``agent/sessions/<id>/``, read as a run folder), so every trial of that agent was two runs, one without the
    trial's verdict. Named on its own, the folder says what it is."""
    trial = _openhands_trial(tmp_path)
    [result] = read_dump(trial.parent, tenant="acme")
    assert (result.trajectory.trajectory_id, result.trajectory.outcome, result.trajectory.reward) == (
        "atif.63b4315947a049e2b7a51249b3d4fcc3.hello__abc/agent/trajectory", Outcome.success, 1.0)
    session = trial / "agent" / "sessions" / OH_STORE.name
    for named in (session, session / "events", session / "metadata.json"):
        with pytest.raises(SideFile, match="raw openhands session in Harbor trial hello__abc, which Harbor converted"):
            list(read_dump(named, tenant="acme"))


def test_a_harbor_openhands_trial_without_its_conversion_is_read_from_its_raw_session(tmp_path: Path) -> None:
    """Where Harbor left no ATIF conversion (its converter failed, or an older trial), the raw session is the run."""
    trial = _openhands_trial(tmp_path, converted=False)
    [result] = read_dump(trial.parent, tenant="acme")
    assert (result.fmt, result.trajectory.trajectory_id) == ("openhands", "openhands.63b4315947a049e2b7a51249b3d4fcc3")


@pytest.mark.parametrize("fmt, content, message", [
    ("openhands", "[1, 2]", "no OpenHands event (with 'source' and 'action' or 'observation') in this file"),
    ("gemini-cli", '{"sessionId": "s", "projectHash": "p", "messages": []}', "no messages in this Gemini CLI recording"),
    ("codex-cli", '{"type": "session_meta", "payload": {"id": "x"}}\n', "no conversation in this Codex rollout (only session_meta lines)"),
    ("claude-code", '"just a string"\n', "expected the lines of a Claude Code session file (JSON objects), got str"),
])
def test_unusable_files_are_clear_rejections(tmp_path: Path, fmt: str, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    [result] = read_dump(path, fmt=fmt, tenant="acme")
    assert result.error == message


def test_a_first_line_longer_than_the_detection_window_is_still_recognised(tmp_path: Path) -> None:
    paste = "x" * 70_000  # a pasted log: the first record alone is longer than the 64 KiB peek
    claude = write_jsonl(tmp_path / "b9c1.jsonl", [
        json.dumps({"parentUuid": None, "isSidechain": False, "promptId": "p1", "type": "user", "uuid": "u1",
                    "message": {"role": "user", "content": "summarise this log:\n" + paste},
                    "timestamp": "2026-08-01T00:00:00Z", "sessionId": "s-big"}, separators=(",", ":")),
        {"parentUuid": "u1", "isSidechain": False, "type": "assistant", "uuid": "a1", "sessionId": "s-big",
         "timestamp": "2026-08-01T00:00:05Z", "message": {"id": "m1", "model": "claude-opus-4-8", "role": "assistant",
                                                          "content": [{"type": "text", "text": "It is all x."}]}},
    ])
    codex = write_jsonl(tmp_path / "rollout-big.jsonl", [
        json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {
            "id": "019c0000-0000-7000-8000-000000000001", "base_instructions": {"text": paste}}}, separators=(",", ":")),
        {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "user_message", "message": "hi"}},
    ])
    assert (detect_format(claude), detect_format(codex)) == ("claude-code", "codex-cli")
    assert only(claude).task.startswith("summarise this log:") and only(codex).task == "hi"


def test_codex_prompt_from_an_ide_extension_is_cut_to_the_request() -> None:
    """Codex's VS Code extension puts the editor's context before '## My request for Codex:' (real rollout)."""
    path = FIXTURES / "codex-cli" / ".real" / "rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.trajectory_id == "codex.019982b8-3422-79e0-8b3b-05abaf4f3c3e"
    assert run.task.startswith("Evaluate @packages/services and create a new \n  package called @packages/services-prisma")
    assert "Context from my IDE setup" not in run.task and "Open tabs" not in run.task
    assert [s.action for s in run.steps] == ["shell", "shell"]


def test_claude_code_summaries_of_other_sessions_are_not_this_runs() -> None:
    """A summary record belongs to the conversation whose last message its leafUuid names (real 2.0.28 file)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "claude-code" / ".real" / "full-session-five.jsonl", tenant="acme")]
    assert run.task == "search the web for the claude code response types"
    assert run.metadata.get("summary") is None  # 16 summaries in the file, none of this session
    assert [s.action for s in run.steps] == ["WebSearch"] * 3


@pytest.mark.parametrize("name, says", [
    ("codex-cli/.real/codex-exec-json-stream-output-2.jsonl",
     "no run in this file: this is `codex exec --json` output, which does not record the prompt; ingest the session's "
     "rollout instead: ~/.codex/sessions/YYYY/MM/DD/rollout-*-019a2d7a-6455-7170-a661-c6d8b94c630a.jsonl"),
    ("claude-code/.real/headless-result.json",
     "no run in this file: this is the final result of a headless Claude Code run (`claude -p --output-format json`)"),
    ("claude-code/.real/headless-stream-json.jsonl",
     "no user prompt: headless `claude -p --output-format stream-json` output does not record it"),
])
def test_headless_outputs_say_they_hold_no_run_and_name_the_transcript(name: str, says: str) -> None:
    """What the CLIs print in headless mode is not their session file: say so, and where the session is."""
    try:  # an unrecognised file named on its own is refused; a session file without a run is a rejected record
        [result] = read_dump(FIXTURES / name, tenant="acme")
        assert not result.ok
        message = result.error
    except ValueError as refused:
        message = str(refused)
    assert says in message
    assert "40e7b02d-c0f9-4876-9010-f514d4eb0603.jsonl" in message or "019a2d7a" in message


def test_gemini_cli_own_continuation_is_no_prompt_and_init_gives_its_prompt(tmp_path: Path) -> None:
    """'System: Please continue.' is the CLI's, not the user's; /init submitted a prompt (real recording)."""
    path = FIXTURES / "gemini-cli" / ".real" / "session-continue-init.jsonl"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題"
    assert "Please continue" not in json.dumps(run.metadata.get("user_prompts"))
    lines = path.read_text(encoding="utf-8").splitlines()
    alone = tmp_path / "init-only.jsonl"  # the same session before the user typed anything
    alone.write_text("\n".join(line for line in lines if "uv run" not in line or '"type":"user"' not in line) + "\n")
    [init] = [r.trajectory for r in read_dump(alone, tenant="acme")]
    assert init.task.startswith("You are an AI agent that brings the power of Gemini directly into the terminal")


def test_gemini_cli_a_user_who_types_please_continue_is_heard(tmp_path: Path) -> None:
    """Only the CLI's own continuation is dropped: typed, "Please continue." is a prompt (hand-built session,
    the review's counter-example; the CLI's own is in the real recording above)."""
    head = {"sessionId": "0ab84937-9fe7-4284-986a-33c832af0b6b", "projectHash": "9" * 64,
            "startTime": "2026-04-23T12:52:52.759Z", "lastUpdated": "2026-04-23T12:52:52.759Z", "kind": "main"}
    said = [head,
            {"id": "1", "timestamp": "2026-04-23T12:53:05Z", "type": "user", "content": [{"text": "Refactor utils.py"}]},
            {"id": "2", "timestamp": "2026-04-23T12:53:09Z", "type": "gemini", "content": "Done part 1.", "model": "m"},
            {"id": "3", "timestamp": "2026-04-23T12:54:05Z", "type": "user", "content": [{"text": "Please continue."}],
             "displayContent": [{"text": "Please continue."}]},
            {"id": "4", "timestamp": "2026-04-23T12:54:09Z", "type": "gemini", "content": "Done part 2.", "model": "m"}]
    path = tmp_path / "session-2026-04-23T12-52-0ab84937.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in said))
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "Refactor utils.py" and run.metadata["user_prompts"] == ["Please continue."]
    assert [s.arguments["content"] for s in run.steps] == ["Done part 1.", "Done part 2."]


def test_claude_code_odd_ids_do_not_lose_the_session(tmp_path: Path) -> None:
    """A summary's leafUuid or a record's uuid of the wrong type is ignored, not a crash (review finding)."""
    session = "5c0375b4-57a5-4f26-b12d-d022ee4e51b8"
    base = {"parentUuid": None, "isSidechain": False, "sessionId": session, "version": "1.0.108",
            "timestamp": "2025-09-07T09:52:03.071Z"}
    lines = [{"type": "summary", "summary": "Fix", "leafUuid": ["x"]},
             {**base, "type": "user", "message": {"role": "user", "content": "fix the bug"}, "uuid": {"a": 1}},
             {**base, "type": "assistant", "uuid": "u2", "parentUuid": "u1",
              "message": {"role": "assistant", "model": "claude", "content": [{"type": "text", "text": "done"}]}}]
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [result] = read_dump(path, tenant="acme")
    assert result.ok and result.trajectory.task == "fix the bug" and "summary" not in result.trajectory.metadata


def test_openhands_resolver_line_without_history_is_rejected_alone(tmp_path: Path) -> None:
    """A bad line of a resolver output.jsonl is its own rejection; the other lines stay runs (review finding)."""
    real = FIXTURES / "openhands" / ".real" / "resolver" / "output.jsonl"
    lines = [json.loads(line) for line in real.read_text().splitlines() if line.strip()]
    lines[1]["history"] = None
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    results = list(read_dump(path, tenant="acme"))
    assert [r.trajectory.task.split("\n")[0] for r in results if r.ok] == ["Add MIT license"]
    assert [r.error for r in results if not r.ok] == ["issue resolver line without 'history' (a list of events)"]


def test_gemini_cli_compressions_keep_what_came_before_and_saved_chats_read() -> None:
    """Bugs (real 0.61 recordings): a compression's ``$set.messages`` replaced the history, losing the first prompt
    and every step before it and adding the CLI's "Got it" as an answer; a ``/compress`` with little to compress
    lost a cancelled call; a ``/chat save`` file ``{"history", "authType"}`` was not recognised."""
    real = FIXTURES / "gemini-cli" / ".real"
    [compressed] = [r.trajectory for r in read_dump(real / "session-2026-12-02T02-52-1b82a497.jsonl")]
    assert compressed.task == "SCEN-G2: echo something big"
    assert compressed.steps[0].action == "run_shell_command"
    assert not [s for s in compressed.steps if "Got it" in str(s.arguments)]
    [reset] = [r.trajectory for r in read_dump(real / "session-2026-12-02T02-50-85dd4e28.jsonl")]
    assert reset.task == "SCEN-G4: write cancel-me.txt"
    assert reset.steps[0].action == "write_file" and reset.steps[0].error.startswith("cancelled")
    assert detect_format(real / "checkpoint-g7tag.json") == "gemini-cli"
    [saved] = [r.trajectory for r in read_dump(real / "checkpoint-g7tag.json")]
    assert saved.task == "SCEN-G3: what is the capital of France?"


def test_codex_017x_mcp_calls_interrupts_and_compaction_summaries() -> None:
    """Bugs (real 0.171 rollouts): an MCP call lost its server (``namespace``) and its failure (an ``item_completed``
    McpToolCall ``failed``); an interrupted command ("aborted by user" after a wall-time line) was no error; the
    summarizer's reply before a ``compacted`` line became the next step's thought."""
    real = FIXTURES / "codex-cli" / ".real"
    [mcp] = [r.trajectory for r in read_dump(real / "rollout-2026-12-02T02-46-25-01a234a5-689a-7bf0-bedd-2035743e42da.jsonl")]
    calls = {s.action: s for s in mcp.steps if s.action.startswith("mcp__")}
    assert calls["mcp__demo__add"].error is None
    assert calls["mcp__demo__lookup"].error == "KeyError: no such key 'release' in demo store"
    [aborted] = [r.trajectory for r in read_dump(real / "rollout-2026-12-02T02-48-19-01a234a7-28a1-7d61-a3e9-85ee2685efae.jsonl")]
    assert aborted.steps[0].error == "aborted by user"
    [compacted] = [r.trajectory for r in read_dump(real / "rollout-2026-12-02T02-47-29-01a234a6-6350-7630-a51b-5ad07db0746b.jsonl")]
    assert not [s for s in compacted.steps if "COMPACT-SUMMARY-MARKER" in (s.thought or "")]


def test_openhands_sdk_limits_resumes_nudges_and_sub_agents() -> None:
    """Bugs (real openhands-sdk 1.58 conversations): the iteration limit was an infrastructure error; a run
    resumed after an error and finished stayed infra_error; the stuck detector's nudge was an agent answer; a
    sub-agent's conversation inside the folder ingested was lost."""
    sdk = FIXTURES / "openhands" / ".real" / "sdk"
    [limited] = [r.trajectory for r in read_dump(sdk / "313131310000400080000000000000a0")]
    assert limited.outcome is Outcome.failure and limited.failure.error.startswith("MaxIterationsReached")
    [resumed] = [r.trajectory for r in read_dump(sdk / "31313131000040008000000000000051")]
    assert resumed.outcome is Outcome.unknown and [s.action for s in resumed.steps] == ["terminal", "finish"]
    [stuck] = [r.trajectory for r in read_dump(sdk / "313131310000400080000000000000b1")]
    assert stuck.outcome is Outcome.failure and "respond" not in [s.action for s in stuck.steps]
    runs = {r.trajectory.task.split(":")[0]: r.trajectory for r in read_dump(sdk / "313131310000400080000000000000ee")}
    assert [s.action for s in runs["S_SUB"].steps] == ["terminal", "finish"] and "S_TASK" in runs


def test_openhands_maximum_iteration_is_the_agents_failure(tmp_path: Path) -> None:
    """OpenHands' controller stops a run at its iteration limit in state ``error`` with the reason
    "RuntimeError: Agent reached maximum iteration. ..." (its own test_agent_controller.py): the agent's failure,
    not the infrastructure's (it was infra_error)."""
    events = json.loads(OH_GUI.read_text())
    last = dict(events[-1], id=10_000, source="environment", observation="agent_state_changed", content="",
                message="", extras={"agent_state": "error", "reason": "RuntimeError: Agent reached maximum iteration. "
                                    "Current iteration: 3, max iteration: 3"})
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps([*events, last]))
    run = only(path)
    assert run.outcome is Outcome.failure and run.failure.error.startswith("RuntimeError: Agent reached maximum")


def test_codex_2025_rollout_sandbox_and_mcp_failures_are_errors() -> None:
    """Bug (a real September 2025 rollout): "failed in sandbox ..." and "tool call error: ..." replies were no
    step errors (12 of the file's 21 failures)."""
    path = FIXTURES / "codex-cli" / ".real" / "rollout-2025-09-10-acidic-viewer-cut.jsonl"
    [run] = [r.trajectory for r in read_dump(path)]
    assert [(s.action, s.error.split(":")[0]) for s in run.steps] == [
        ("memory__add_observations", "tool call error"), ("shell", "failed in sandbox LinuxSeccomp with execution error")]


def test_claude_stream_json_opening_with_a_session_start_hook_is_detected() -> None:
    """Bug (real 2.1.332 stdout): a stream-json run whose SessionStart hook wrote the first lines was unrecognised."""
    path = FIXTURES / "claude-code" / ".real" / "headless-stream-json-session-start-hook.jsonl"
    assert detect_format(path) == "claude-code"
    [run] = [r.trajectory for r in read_dump(path)]
    assert run.task.startswith("SCEN-A: add 2 and 3 with the demo tool")


def test_gemini_cli_resumed_session_keeps_its_times_model_and_errors() -> None:
    """A resume rewrites the history with its own time and no model (real gemini-cli 0.61.0 recording)."""
    path = FIXTURES / "gemini-cli" / ".real" / "session-2026-12-02T00-55-7b961b3c.jsonl"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "Fix the greeting in main.py to say hello, then read missing.txt"
    assert run.model_id == "gemini-3.8-flash"
    assert run.created_at == datetime(2026, 12, 2, 0, 55, 43, 233000, tzinfo=timezone.utc)  # the first start
    assert [s.action for s in run.steps] == ["replace", "read_file", "respond", "read_file", "respond"]
    missing = run.steps[1]
    assert missing.error == missing.observation == "File not found: /tmp/fmtcheck15/work/proj6/missing.txt"
    assert len({s.started_at for s in run.steps}) == 5  # each when it happened, not all at the resume
    # the last prompt's request failed and the CLI wrote the history back without it: the user still typed it
    assert run.metadata["user_prompts"] == ["What is on line 2 of notes.txt?", "TRIGGER_FAIL summarize everything"]


def test_claude_code_background_agent_report_joins_its_call() -> None:
    """Claude Code 2.1 runs an Agent call in the background; its report comes as a task-notification (real CLI)."""
    path = FIXTURES / "claude-code" / ".real" / "143b8ac3-becf-41e0-a3ab-73a4d00f4b54.jsonl"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    [agent] = [s for s in run.steps if s.action == "Agent"]
    assert agent.observation.startswith("Async agent launched successfully.")
    assert agent.observation.endswith("\nnotes.txt has 3 lines.")  # the subagent's report
    [bash] = [s for s in run.steps if s.action == "Bash" and s.error]
    assert bash.error == "hello (exit code 2)"
    assert run.outcome is Outcome.failure and run.model_id == "claude-opus-5-5"  # "Prompt is too long"


def test_codex_window_full_mark_is_not_the_runs_token_count() -> None:
    """After context_length_exceeded Codex writes total_tokens = the context window (real codex 0.171.0 rollout)."""
    path = FIXTURES / "codex-cli" / ".real" / "rollout-2026-12-02T00-54-18-01a2343e-c43a-71b0-8325-96dd5e2db5fe.jsonl"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.metadata["total_tokens"] == 4300
    assert run.outcome is Outcome.failure and any(s.error for s in run.steps)  # its context window


def test_gemini_cli_headless_stream_json_is_a_run_of_its_turn() -> None:
    """gemini -p --output-format stream-json holds the prompt, calls, results and answer (real 0.61.0 stdout)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "gemini-cli" / ".real" / "headless-stream-json.jsonl",
                                            tenant="acme")]
    assert run.trajectory_id == "gemini-cli.6063c588-98d5-459d-9224-7f4455d84eb5.turn-76f091d786"
    assert run.task == "List the files here, show me notes.txt, and also try to cat missing.txt"
    assert [(s.action, s.arguments.get("command")) for s in run.steps[:3]] == [
        ("run_shell_command", "ls"), ("run_shell_command", "cat notes.txt"), ("run_shell_command", "cat missing.txt")]
    assert run.steps[0].thought == "Let me list the files." and run.steps[1].observation == "alpha\nbeta\ngamma"
    assert run.steps[-1].action == "respond" and run.outcome is Outcome.unknown
    [failed] = [r.trajectory for r in read_dump(FIXTURES / "gemini-cli" / ".real" / "headless-stream-json-api-error.jsonl",
                                               tenant="acme")]
    assert failed.outcome is Outcome.failure and "exceeds the maximum number of tokens" in failed.failure.error


# Real Gemini CLI recordings of one user on Windows (PowerShell) and Linux, Nov 2025 - Jan 2026:
# mischa-thisness/M-Gemini Archives/ @ 3bad8d462ef0a93165eb373a44f09a77910e5ecd (CC0), copied unchanged.
M_GEMINI = FIXTURES / "gemini-cli" / ".real"


def test_gemini_cli_only_api_errors_end_a_session_and_every_error_record_is_kept() -> None:
    """An error record answering the user's own `/directory add` (no path) is no infrastructure failure;
    API errors the session went on after are kept too."""
    [run] = [r.trajectory for r in read_dump(M_GEMINI / "session-2025-12-06T07-22-e0f194ce.json", tenant="acme")]
    assert run.outcome is Outcome.unknown and run.failure is None  # was infra_error, "Please provide at least..."
    assert run.metadata["error_records"] == [
        "[API Error: Cannot read properties of undefined (reading 'error')]",
        "[API Error: Cannot read properties of undefined (reading 'error')]",
        "Please provide at least one path to add.",
    ]


def test_gemini_cli_powershell_errors_are_read_from_their_message_not_their_wrapped_tail() -> None:
    """PowerShell wraps its error records at the console's width: the last line is a fragment
    ("stCommand", "oundException"); the error is the record's `<command> : <message>` line."""
    [install] = [r.trajectory for r in read_dump(M_GEMINI / "session-2025-12-06T07-22-e0f194ce.json", tenant="acme")]
    assert install.steps[1].error == ("iex : The term 'Get-FileHash' is not recognized as the name of a cmdlet, "
                                      "function, script file, or operable program. Check the spelling of the name, "
                                      "or if a path was included, verify that the path is correct and try again. "
                                      "(exit code 1)")  # its three wrapped lines joined
    [run] = [r.trajectory for r in read_dump(M_GEMINI / "session-2025-11-22T17-32-1d1e17a8.json", tenant="acme")]
    assert run.steps[6].arguments["command"] == "curl --version"  # PowerShell's curl is Invoke-WebRequest
    assert run.steps[6].error == "curl : The remote name could not be resolved: '--version' (exit code 1)"
    # thrown from a module with no message line: the record's category, unwrapped
    assert run.steps[8].error == "OperationStopped: (:) [], FileFormatException (exit code 1)"


def test_gemini_cli_exit_1_with_empty_output_is_no_error() -> None:
    """`git config --global credential.helper` with none set prints nothing and exits 1 ("Output: (empty)"):
    a "no", as grep's no match, not a failure (the same rule in every adapter: see exit_code_error)."""
    [run] = [r.trajectory for r in read_dump(M_GEMINI / "session-2026-01-01T22-12-2e883c59.json", tenant="acme")]
    for step in (run.steps[3], run.steps[5]):
        assert step.arguments["command"].startswith("git config --global credential.helper")
        assert "Output: (empty)" in step.observation and "Exit Code: 1" in step.observation
        assert step.error is None
    assert not [s.error for s in run.steps if s.error]


@pytest.mark.parametrize("output, expected", [
    # a native program's stderr becomes a NativeCommandError record: the traceback under it says more
    ("python : Traceback (most recent call last):\nAt line:1 char:1\n+ python x.py\n+ ~~~~~~~~~~~\n"
     "    + CategoryInfo          : NotSpecified: (Traceback (most recent call last)::String) [], RemoteException\n"
     "    + FullyQualifiedErrorId : NativeCommandError\n \n  File \"x.py\", line 1, in <module>\n"
     "ValueError: bad value", "ValueError: bad value"),
    # a parse error: its message sits under the `+ ~` marks
    ("At C:\\s\\audit.ps1:76 char:2\n+ \"@\n+  ~\nUnexpected token '@' in expression or statement.\n"
     "    + CategoryInfo          : ParserError: (:) [], ParentContainsErrorRecordException\n"
     "    + FullyQualifiedErrorId : UnexpectedToken", "Unexpected token '@' in expression or statement."),
    # `Remove-Item build; pytest`: the record comes first, the test run's failure after it decides
    ("Remove-Item : Cannot find path 'C:\\w\\build' because it does not exist.\nAt line:1 char:1\n"
     "+ Remove-Item build; pytest\n+ ~~~~~~~~~~~~~~~~\n"
     "    + CategoryInfo          : ObjectNotFound: (C:\\w\\build:String) [Remove-Item], ItemNotFoundException\n"
     "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.RemoveItemCommand\n"
     "E       AssertionError: assert 1 == 2\nFAILED tests/test_x.py::test_y", "E AssertionError: assert 1 == 2"),
    # a .NET method's exception has no `<command> :` line; `Version : 5.1` above it is output, not a header
    ("Version : 5.1\nException calling \"Parse\" with \"1\" argument(s): \"Input string was not in a correct "
     "format.\"\nAt line:1 char:1\n+ [int]::Parse(\"x\")\n+ ~~~~~~~~~~~~~~~~~\n"
     "    + CategoryInfo          : NotSpecified: (:) [], MethodInvocationException\n"
     "    + FullyQualifiedErrorId : FormatException",
     "Exception calling \"Parse\" with \"1\" argument(s): \"Input string was not in a correct format.\""),
    # two records, the last one without `At`: its own category, not the first record's message
    ("Get-Item : Cannot find path 'C:\\a' because it does not exist.\nAt line:1 char:1\n+ Get-Item C:\\a\n+ ~~~\n"
     "    + CategoryInfo          : ObjectNotFound: (C:\\a:String) [Get-Item], ItemNotFoundException\n"
     "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.GetItemCommand\n"
     "Write-Error : final failure here\n"
     "    + CategoryInfo          : NotSpecified: (:) [Write-Error], WriteErrorException\n"
     "    + FullyQualifiedErrorId : Microsoft.PowerShell.Commands.WriteErrorException",
     "NotSpecified: (:) [Write-Error], WriteErrorException"),
    # a script's path as the command; a cmdlet named by its alias (`dir`) in the echoed line
    ("C:\\s\\deploy.ps1 : Cannot bind argument to parameter 'Path' because it is null.\nAt line:1 char:1\n"
     "+ .\\deploy.ps1\n+ ~~~~~~~~~~~~\n"
     "    + CategoryInfo          : InvalidData: (:) [deploy.ps1], ParameterBindingValidationException\n"
     "    + FullyQualifiedErrorId : ParameterArgumentValidationErrorNullNotAllowed,deploy.ps1",
     "C:\\s\\deploy.ps1 : Cannot bind argument to parameter 'Path' because it is null."),
    ("Get-ChildItem : A positional parameter cannot be found that accepts argument '/b'.\nAt line:1 char:1\n"
     "+ dir /b\n+ ~~~~~~\n    + CategoryInfo          : InvalidArgument: (:) [Get-ChildItem], ParameterBindingException\n"
     "    + FullyQualifiedErrorId : PositionalParameterNotFound,Microsoft.PowerShell.Commands.GetChildItemCommand",
     "Get-ChildItem : A positional parameter cannot be found that accepts argument '/b'."),
])
def test_decisive_line_of_powershell_records(output: str, expected: str) -> None:
    from trajsearch.ingest.adapters._common import decisive_line

    assert decisive_line(output) == expected


def test_codex_plain_text_reply_with_exit_1_and_no_output_is_no_error(tmp_path: Path) -> None:
    """codex 0.171's plain-text shell reply: a header ("Process exited with code N ... Output:") then the output.
    The header is no output: exit 1 with nothing after it is rg's / grep's "no match" (see exit_code_error)."""
    real = FIXTURES / "codex-cli" / ".real" / "rollout-2026-12-02T00-54-18-01a2343e-c43a-71b0-8325-96dd5e2db5fe.jsonl"
    lines = real.read_text().splitlines()
    record = json.loads(lines[21])
    assert record["payload"]["output"].startswith("Chunk ID: 64085a\nWall time: 0.0000 seconds\nProcess exited with code 2")
    [before] = [r.trajectory for r in read_dump(real, tenant="acme")]
    [step] = [s for s in before.steps if s.error and "(exit code 2)" in s.error]
    record["payload"]["output"] = "Chunk ID: 64085a\nWall time: 0.0000 seconds\nProcess exited with code 1\n" \
                                  "Original token count: 0\nOutput:\n"
    lines[21] = json.dumps(record)
    call = json.loads(lines[18])  # a search, whose exit 1 with no output is a "no" (a script's would be its failure)
    call["payload"]["arguments"] = json.dumps({"cmd": "rg -n TODO", "workdir": "/tmp/fmtcheck15/work/proj4"})
    lines[18] = json.dumps(call)
    event = json.loads(lines[20])  # the same command's item_completed event says so too
    event["payload"]["item"].update(aggregated_output="", exit_code=1, command=["/bin/bash", "-lc", "rg -n TODO"])
    lines[20] = json.dumps(event)
    (tmp_path / real.name).write_text("\n".join(lines) + "\n")
    [after] = [r.trajectory for r in read_dump(tmp_path / real.name, tenant="acme")]
    assert after.steps[step.index].error is None


def test_a_qwen_code_session_is_not_taken_for_claude_code() -> None:
    """Found by a probe (real: Qwen Code 0.18.1's session file in splitrail's tests): its records look like Claude
    Code's but hold Gemini's messages (``parts``); it was read as Claude Code and refused with "no user prompt in
    this Claude Code session", which sent the reader looking for a missing prompt. It is Qwen Code's, read as such
    (tests/test_adapters_qwen_code.py)."""
    assert detect_format(CC_REAL / "not-claude" / "qwen_code.jsonl") == "qwen-code"


def test_a_codex_request_made_by_comments_keeps_the_users_words() -> None:
    """Found by a probe (the Codex app's in-app browser comment, as crispierry/codex-log-viewer keeps it): the request
    was what follows "## My request for Codex:", there the app's caption of a screenshot; the user's words, under
    "# Diff comments:" ... "Comment:", were in no part of the run. They now open the task."""
    run = only(FIXTURES / "codex-cli" / ".real" / "desktop-visual-comment.jsonl")
    assert run.task.startswith("Move the fixture button to the right side\n\nThe next image shows the browser page")


def test_a_codex_comment_runs_to_the_apps_next_heading_not_to_a_line_of_its_own(tmp_path: Path) -> None:
    """Found by review: a comment was cut at its first line starting with "# " (a code comment, a heading of the
    user's own), the rest lost. It runs to the app's next heading (``## Comment 2``, ``# In app browser:``)."""
    lines = (FIXTURES / "codex-cli" / ".real" / "desktop-visual-comment.jsonl").read_text().splitlines()
    lines = [line.replace("Comment:\\nMove the fixture button to the right side",
                          "Comment:\\nMove the fixture button:\\n# keep it in the header\\nthen add a test") for line in lines]
    (tmp_path / "rollout.jsonl").write_text("\n".join(lines) + "\n")
    assert only(tmp_path / "rollout.jsonl").task.startswith(
        "Move the fixture button:\n# keep it in the header\nthen add a test\n\nThe next image shows")


def test_a_codex_sub_agents_session_is_linked_to_the_thread_that_started_it() -> None:
    """Found by a probe: a sub-agent's rollout (``session_meta.source`` an object, codex-rs' ``SubAgentSource``) kept
    no source at all (only a string was), so nothing linked it to the thread that spawned it."""
    worker = only(FIXTURES / "codex-cli" / ".real" / "subagent-thread-spawn.jsonl").metadata
    assert (worker["source"], worker["is_subagent"], worker["parent_thread_id"]) == ("subagent:thread_spawn", True, "codex-root")
    assert (worker["agent_role"], worker["agent_nickname"]) == ("reviewer", "Ada")
    guardian = only(FIXTURES / "codex-cli" / ".real" / "subagent-guardian.jsonl").metadata
    assert (guardian["source"], guardian["parent_thread_id"]) == ("subagent:other:guardian", "codex-worker")


CC_BACKUP = CC_REAL / "claude-backup"


def test_an_agent_sdk_prompt_marked_is_meta_is_the_task() -> None:
    """Found by a probe (real: a claude-mem observer session of the Agent SDK, CLI 2.1.212): that version marks every
    prompt ``isMeta`` with ``promptSource: "sdk"``; it is the SDK caller's prompt, not a caveat or an expanded
    command body. Before, every such session was refused with "no user prompt"."""
    run = only(CC_BACKUP / "0431bdac-e353-4580-97e6-a2e322fd6afc.jsonl")
    assert run.trajectory_id == "claude-code.0431bdac-e353-4580-97e6-a2e322fd6afc"
    assert run.task.startswith("Hello memory agent, you are continuing to observe the primary Claude session.")
    [followup] = run.metadata["user_prompts"]
    assert followup.startswith("<observed_from_primary_session> <what_happened>mcp__serper__google_search")
    assert run.metadata["entrypoint"] == "sdk-cli"
    assert run.outcome is Outcome.infra_error and run.failure.error.startswith("Not logged in")


def test_a_skill_loaded_by_its_slash_command_is_not_the_task() -> None:
    """Found by a probe (real, CLI 2.1.68): ``/superpowers:using-superpowers`` with no arguments expands to the skill's
    instructions ("Base directory for this skill: ..."), which load the skill and ask nothing; the user's request is
    the next prompt. Before, the 5 kB of skill instructions were the task (a prompt-type command's rule, which stays:
    see ``test_claude_code_init_session``)."""
    run = only(CC_BACKUP / "1d813ba4-2cda-4218-95be-1a7c8e02427b.jsonl")
    assert run.task == "帮我创建一个avd,需要支持adb root"
    assert run.metadata.get("user_prompts") is None
    assert run.steps[0].action == "respond"
    assert run.steps[0].arguments["content"].lstrip().startswith("Using `superpowers:using-superpowers`")


def test_a_read_answered_only_by_a_system_reminder_keeps_that_answer() -> None:
    """Found by a probe (real, dagster-io/erk, CLI 2.0.67): a Read past the end of a file is answered only by a
    ``<system-reminder>`` ("the file exists but is shorter than the provided offset"). The CLI's notices appended to
    a result are cut out, but this one is the whole answer; before, the step had no observation at all."""
    run = only(CC_REAL / "erk" / "ebe65926-23e2-4d5c-b494-624df5482be3.jsonl")
    [read] = [s for s in run.steps if s.action == "Read"]
    assert read.arguments == {"file_path": "/home/runner/work/erk/erk/tests/commands/submit/__init__.py"}
    assert read.observation == "Warning: the file exists but is shorter than the provided offset (1). The file has 1 lines."
    assert read.error is None


def test_a_session_file_that_starts_mid_conversation_is_a_run_of_its_calls() -> None:
    """Found by a probe (real, SWORDIntel/claude-backups, CLI 1.0.90): the file opens with a tool's result, then the
    agent goes on editing; no prompt is in it. Its calls are a run; the task is the best the file offers (no summary
    or title here: the agent's first words, marked as not the user's). Before, the whole file was refused with "no
    user prompt"."""
    run = only(CC_REAL / "claude-backups" / "a7cf1760-ec41-4c5e-8546-866e1abd17df.jsonl")
    assert run.task == ("(this session file starts mid-conversation, with no prompt; the agent's first words:) "
                        "I need to redo the metadata changes that got reset. Let me quickly apply them again:")
    assert [s.action for s in run.steps] == ["Edit", "Bash"]
    assert errors_at(run) == {1: "fatal: pathspec 'agents/MLOPS.md' is beyond a symbolic link"}
    assert run.metadata["starts_mid_conversation"] is True and run.outcome is Outcome.unknown


def test_a_workflows_journal_and_empty_subagent_files_are_passed_over(tmp_path: Path) -> None:
    """Found by a probe (real, CLI 2.1.x ``subagents/<session>/workflows/wf_<id>/``): a workflow's ``journal.jsonl``
    (its agents' ``started`` / ``result`` records) and the empty ``agent-<id>.jsonl`` / ``.meta.json`` of a workflow
    agent that never wrote, and a workflow agent's metadata ({"agentType": "workflow-subagent"}) hold no run: passed
    over, not rejected as "unrecognised dump format". Told by content (the
    journal's records, an empty file of the CLI's names), so a run of another format under such a name is read."""
    from trajsearch.ingest.detect import SideFile

    folder = CC_BACKUP / "subagents" / "3e89eb15-32e7-43f8-8734-8d47310263ea" / "workflows" / "wf_9cab1d1d-783"
    for name in ("journal.jsonl", "agent-a12b5a9796f0e62c5.jsonl", "agent-a12b5a9796f0e62c5.meta.json",
                 "agent-a31705e19a80e6d01.meta.json"):
        with pytest.raises(SideFile, match="no run in this file"):
            detect_format(folder / name)
    assert list(read_dump(folder, tenant="acme")) == []
    other = tmp_path / "wf_1"
    other.mkdir()
    for name in ("journal.jsonl", "agent-a1.jsonl"):
        shutil.copy(CODEX, other / name)
        assert detect_format(other / name) == "codex-cli"


def test_thinking_the_session_ends_on_is_kept() -> None:
    """Found by a probe (real, SWORDIntel/claude-backups, CLI 1.0.89): the session's last response holds only
    thinking. Thinking becomes the thought of the step after it; with none after it, it joins the last step's thought.
    Before, it was dropped."""
    run = only(CC_REAL / "claude-backups" / "8bc71cde-9490-41fb-ba44-0c3a7a3b0d87.jsonl")
    assert run.task == "load claude.md"
    [write] = run.steps
    assert write.action == "Write" and write.observation.startswith("File created successfully at:")
    assert write.thought.startswith("**UltraThink Direct ZFS Streaming - Novel Architecture Design**")
    assert write.thought.endswith("Now let me create the Docker integration for this revolutionary approach:")


# -- Claude Code 2.1.2xx: messages queued while the agent works, other agents' messages (probe p40, real files of
#    hannibal8856/claude_backup; see claude-code/.real/SOURCE.md) ---------------------------------------------------

CC_HANNIBAL = CC_REAL / "hannibal"


def test_claude_code_prompt_typed_while_the_agent_works_is_a_later_prompt() -> None:
    """2.1.x delivers a prompt the user sends while the agent is busy as a ``queued_command`` attachment, not a user
    record: it was lost (7 of the 10 prompts of this session); it is one of the session's later prompts."""
    run = only(CC_HANNIBAL / "3ff811a3-5b35-4bf5-bc49-8d1bde151dad.jsonl")
    assert run.task.startswith("DUT目前跑的image是SNMP plan E 2026_0805_2322")
    assert run.metadata["user_prompts"] == [".swu 可以用launch_swu.sh 然後你應該需要我的工作機密碼?",
                                            "Sorry 應該是/moxa/upload_my_file.sh"]


def test_claude_code_background_report_delivered_as_attachment_joins_its_call() -> None:
    """2.1.2xx also delivers a background command's ``<task-notification>`` as a queued attachment: the failed
    build (exit code 2) it reports was never joined to the call that launched it."""
    run = only(CC_HANNIBAL / "13f6131f-3289-46a0-9662-a2a36f544e35.jsonl")
    build = run.steps[0]
    assert build.action == "Bash" and build.observation.startswith("Command running in background with ID: b35wo5zhl")
    assert build.error == 'Background command "Run full build in container" failed with exit code 2'


def test_claude_code_coordinator_follow_up_is_the_subagents_next_request() -> None:
    """A coordinator's message to its running subagent (``isMeta``, ``origin.kind: "coordinator"``) was read as the
    CLI's own injection and dropped; it is the subagent's next request (its task was the coordinator's prompt),
    without the CLI's wrapping."""
    run = only(CC_HANNIBAL / "ba3523f8-fd26-456e-8fce-c6165f41d9f4" / "subagents" / "agent-a59f3320c0ff21c75.jsonl")
    assert run.metadata["is_subagent"] and run.task.startswith("You are implementing Task 1 of a plan")
    [follow_up] = run.metadata["user_prompts"]
    assert follow_up.startswith("Fix round 1 for Task 1. One finding to address.")


def test_claude_code_message_from_another_session_is_kept_apart() -> None:
    """Another session's message (``origin.kind: "peer"``, "Another Claude session sent a message") was dropped; it
    is kept, with its sender, as a peer message: not a prompt of this session's user."""
    run = only(CC_HANNIBAL / "43e7d642-30bc-4598-813c-34286ed31a9d.jsonl")
    assert run.task.startswith("請幫我build一遍.swu firmware.") and "user_prompts" not in run.metadata
    [message] = run.metadata["peer_messages"]
    assert message.startswith("snmp-plan-E-edsg4000: **是,我在同一棵樹。**")



def test_claude_code_fork_workers_task_is_its_directive() -> None:
    """A fork worker's prompt (2.1.2xx, a subagent file opening with ``fork-context-ref``) is the CLI's 1,100-char
    ``<fork-boilerplate>``, the same for every fork, then "Your directive: ...": the task was the boilerplate."""
    run = only(CC_HANNIBAL / "719f12f0-d8aa-4d12-9ac6-a5bd544bb57c" / "subagents" /
               "agent-ausrbinsnmpwalk-v2c-c-da0830f979acd02a.jsonl")
    assert run.metadata["is_subagent"]
    assert run.task.startswith("幫我從本機驗證/usr/bin/snmpwalk -v2c -c public 192.168.127.253 .1.3.6.1.4.1.8691.603.3.4")
    assert [s.action for s in run.steps] == ["Bash", "respond"]

# -- Gemini CLI 0.3x (probe p40, real files of agunginsani/expenses-tracker; see gemini-cli/SOURCE.md) -------------

GEMINI_AGUNG = FIXTURES / "gemini-cli" / ".real" / "agung" / "chats"


def test_gemini_request_typed_as_a_slash_commands_argument_is_the_task() -> None:
    """``/superpowers:brainstorming I want to create expenses tracker ...``: the words after the command are the
    user's request. They were put aside as a command (used only when a session has no prompt at all), so the task was
    the user's next reply, "Yes.", and the request was nowhere in the run; now it is the task, as typed."""
    run = only(GEMINI_AGUNG / "session-2026-04-12T01-18-01b2c62e.json")
    assert run.task == ("/superpowers:brainstorming I want to create expenses tracker. I can submit the data using WA "
                        "or Telegram. Data can be image or text. We use Apple Numbers for the DB.")
    assert run.metadata["user_prompts"] == ["Yes."]


def test_gemini_subagent_recording_is_linked_to_its_session() -> None:
    """A subagent's recording (``kind: "subagent"``, in ``chats/<parent session id>/``) was not marked a subagent's
    and named no parent, as Claude Code's and Codex's subagents are."""
    run = only(GEMINI_AGUNG / "52c73acd-bbab-4b22-a917-47b93035804f" / "3seg2q.json")
    assert run.metadata["is_subagent"] is True
    assert run.metadata["parent_session_id"] == "52c73acd-bbab-4b22-a917-47b93035804f"
    assert run.metadata["session_id"] == "3seg2q"
