"""GitHub Copilot: VS Code's Copilot Chat (chats saved by "Chat: Export Chat...") and Copilot CLI's session logs,
read from real files committed on GitHub (tests/fixtures/copilot/.copilot29/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest import detect
from trajsearch.ingest.read import read_dump, read_inputs
from trajsearch.model import Outcome

from adapter_support import only, runs
from cli_support import newcomer, run_cli, unnoted  # noqa: F401

REAL = Path(__file__).parent / "fixtures" / "copilot" / ".copilot29"
MCP_TOOLS = REAL / "mcp_tools.json"  # agent mode, three MCP calls kept with the model's rounds
MCP_ERROR = REAL / "mcp_tool_error.json"  # an MCP call answered isError
FETCH = REAL / "fetch_web_page.json"  # an export without the request's result: steps from the response parts
FAILED = REAL / "request_failed.json"  # a request its provider refused (401)
COMPLETED = REAL / "completed_chat_trimmed.json"  # FETCH's chat exported again once it had ended, with its rounds
CANCELED = REAL / "canceled.json"  # Copilot Chat 0.36: the last request stopped by the user, a round's reasoning
KEPT = REAL / "kept_session.json"  # a chatSessions file: built-in tools (replace_string_in_file, grep_search)
KEPT_LOG = REAL / "kept_session.jsonl"  # the same chat as VS Code keeps it since 2026: {kind: 0, v: <the chat>}
CLI_TOOLS = REAL / "cli" / "c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl"  # Copilot CLI 0.0.354: two calls, an answer
CLI_TWO_PROMPTS = REAL / "cli" / "cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl"


def test_an_exported_agent_chat_is_one_run_of_its_rounds_calls() -> None:
    run = only(MCP_TOOLS)
    assert run.trajectory_id == "copilot-chat.request_603bd3c1-5404-4a45-882f-bae7460ba833"  # the first request's
    assert run.metadata["copilot_session_id"] == "ee843e6a-d4f3-4e9d-bf1a-7c51fe4b033a"  # result.metadata.sessionId
    assert run.task == "вызови метод update_entry_fields"
    assert run.model_id == "claude-sonnet-4" and run.metadata["model_vendor"] == "copilot"
    assert run.tool_versions == {"copilot-chat": "0.31.3"}
    assert run.created_at.isoformat() == "2025-10-02T19:21:40.204000+00:00"
    assert [s.action for s in run.steps] == ["mcp_micmicai-mcp_get_documents", "mcp_micmicai-mcp_get_entries",
                                             "mcp_micmicai-mcp_update_entry_fields", "respond"]
    entries = run.steps[1]
    assert entries.arguments == {"document_id": "18", "first": 5, "page": 1}
    assert entries.observation.startswith('{"entries":{"data":[{"id":"686"')  # toolCallResults: what the model saw
    assert entries.thought.startswith("Теперь получу записи")  # the round's text before its call
    assert all(s.error is None for s in run.steps) and run.outcome is Outcome.unknown
    assert run.steps[-1].arguments["content"].startswith("Метод `update_entry_fields` был успешно вызван!")


def test_a_call_the_tool_answered_with_an_error_is_a_step_error() -> None:
    run = only(MCP_ERROR)
    [call, answer] = run.steps
    assert call.action == "mcp_micmicai-mcp_update_entry_fields"
    assert call.arguments == {"entry_id": "invalid_id", "fields": {}}
    assert call.error == ("Error calling tool 'update_entry_fields': 400: GraphQL ошибка при обновлении полей: "
                          "Internal server error")
    assert answer.action == "respond" and answer.error is None


def test_an_export_without_the_models_rounds_is_read_from_what_the_chat_showed() -> None:
    run = only(FETCH)
    assert run.trajectory_id == "copilot-chat.request_962e76d4-743c-490e-9609-c8f65ef52f56"  # the first request's
    assert [s.action for s in run.steps] == ["copilot_fetchWebPage", "vscode_fetchWebPage_internal", "respond"]
    fetch = run.steps[1]
    assert fetch.arguments == {"message": "Fetching 3 resources"}
    assert fetch.observation.splitlines()[1] == "https://www.wwf.ru/species/snow-leopard/"  # the URIs it fetched
    assert run.steps[0].thought.startswith("Я помогу вам найти информацию о снежных барсах")


def test_a_chat_whose_last_request_failed_at_the_provider_is_an_infra_error() -> None:
    run = only(FAILED)
    assert run.outcome is Outcome.infra_error and not run.steps
    assert "Authentication Error, LiteLLM Virtual Key expected" in run.failure.error
    assert run.model_id == "germes-120b" and run.metadata["model_vendor"] == "oaicopilot"


def test_a_built_in_tools_result_is_its_observation() -> None:
    """Built-in tools keep what they returned as the element tree prompt-tsx rendered for the model."""
    edit, grep = [s for s in only(KEPT).steps if s.action != "respond"]
    assert edit.action == "replace_string_in_file" and edit.observation == (
        "The following files were successfully edited:\n/Users/svarlamov/projects/testing-git/index.ts\n")
    assert grep.action == "grep_search" and "console.log('Bonjour');" in grep.observation
    fetch = only(COMPLETED).steps[0]
    assert fetch.action == "fetch_webpage"
    assert fetch.observation.startswith("Here is some relevant context from the web page https://ru.wikipedia.org/")


def test_a_request_the_user_canceled_is_no_failure() -> None:
    run = only(CANCELED)  # its last request: errorDetails {"code": "canceled", "message": "Canceled"}, no isCanceled
    assert run.outcome is Outcome.unknown and run.failure is None
    assert run.metadata["canceled_requests"] == 1 and "last_request_error" not in run.metadata


def test_a_rounds_reasoning_is_its_thought() -> None:
    [answer] = only(CANCELED).steps
    assert answer.action == "respond" and answer.arguments["content"].startswith("Вы просите проанализировать")
    assert answer.thought.startswith('The user has written "Проанализиуй фразу длинную"')  # round.thinking.text


def test_a_chat_exported_while_running_and_once_ended_is_one_run() -> None:
    running, ended = only(FETCH), only(COMPLETED)
    assert running.trajectory_id == ended.trajectory_id  # the first request's id, kept in both
    assert ended.metadata["copilot_session_id"] == "bbb2707b-03c4-4495-816f-57f46571da5a"  # the ended one's alone


@pytest.mark.parametrize("order", [(FETCH, COMPLETED), (COMPLETED, FETCH)], ids=["running-first", "ended-first"])
def test_a_chat_exported_while_running_and_once_ended_ingested_one_after_the_other_stores_the_later(
        newcomer, order: tuple[Path, Path]) -> None:
    """Review LEFT30 3: in two ingests the two exports read as two runs of one id whose steps part ways (the parts
    the chat showed, then the model's rounds), so the later file replaced the earlier with the warning for a
    different run: the running export ingested second lost the rounds. The export made while the request ran is
    an earlier save of the other, as within one ingest: the ended one is stored, nothing is said."""
    for export in order:
        code, out, err = run_cli("ingest", str(export), "-q")
        assert code == 0, err
        assert "replaced by a different run" not in " ".join(err.split()), err
    code, out, err = run_cli("stats", "--json")
    assert code == 0 and json.loads(out)["trajectories"] == 1, err
    code, out, err = run_cli("show", only(COMPLETED).trajectory_id, "--json")
    assert code == 0, err
    assert [s["action"] for s in json.loads(out)["steps"]] == [s.action for s in only(COMPLETED).steps], out


def test_a_dry_run_of_a_chat_exported_while_running_then_once_ended_counts_the_run_the_ingest_stores(
        newcomer) -> None:
    """Review LEFT30 4: read in this order, the dry run said ``runs 1`` for each export where the ingest stores one
    run ("replaced by a later copy 1"); the earlier export's run is counted replaced, not among its runs."""
    code, out, err = run_cli("ingest", str(FETCH), str(COMPLETED), "--dry-run")
    assert code == 0, out + err
    assert "fetch_web_page.json: format copilot-chat; runs 0;" in out, out
    assert "completed_chat_trimmed.json: format copilot-chat; runs 1;" in out, out
    said = " ".join(err.split())
    assert "fetch_web_page.json saved again later in a file read after it: replaced by that later copy" in said, said


def test_exports_of_one_chat_made_while_it_ran_and_once_it_ended_read_together_are_the_later_only(
        tmp_path: Path) -> None:
    """An export made while the chat's last request ran (no ``result`` yet: its steps are the parts the chat showed)
    and one made after (the model's rounds) are one chat; read together they were two runs, the second kept under
    ``<id>+<digest>``. The later holds every step the earlier had settled: it alone is kept, whichever is read first."""
    kept = json.loads(KEPT.read_text(encoding="utf-8"))
    running = {**kept, "requests": kept["requests"][:2]}  # exported during its second request: it has no result yet
    running["requests"][1] = {k: v for k, v in running["requests"][1].items() if k != "result"}
    for first, second in ((running, kept), (kept, running)):
        folder = tmp_path / f"{len(first['requests'])}-first"
        folder.mkdir()
        (folder / "a.json").write_text(json.dumps(first), encoding="utf-8")
        (folder / "b.json").write_text(json.dumps(second), encoding="utf-8")
        [run] = {r.trajectory.trajectory_id: r.trajectory for r in read_inputs([folder]) if r.ok}.values()
        assert run.trajectory_id == only(KEPT).trajectory_id and len(run.steps) == len(only(KEPT).steps), folder
    for pair in ((FETCH, COMPLETED), (COMPLETED, FETCH)):  # real: one request, exported running and once ended
        [run] = {r.trajectory.trajectory_id: r.trajectory for r in read_inputs(pair) if r.ok}.values()
        assert [s.action for s in run.steps] == ["fetch_webpage", "respond"], pair


def test_a_kept_jsonl_session_is_read_as_the_chat_its_edits_make(tmp_path: Path) -> None:
    kept = only(KEPT)
    logged = only(KEPT_LOG)  # one {kind: 0} line: the whole chat
    assert (logged.trajectory_id, logged.task, logged.steps) == (kept.trajectory_id, kept.task, kept.steps)
    assert logged.metadata["vscode_session_id"] == "331fed7f-cfd6-409c-8502-06a56322b636"
    chat = json.loads(KEPT.read_text(encoding="utf-8"))
    requests = chat["requests"]
    edits = [{"kind": 0, "v": {**chat, "requests": requests[:1], "customTitle": None}},  # as a chat grows
             {"kind": 2, "k": ["requests"], "v": [{**requests[1], "response": []}]},
             {"kind": 2, "k": ["requests", 1, "response"], "v": requests[1]["response"]},
             {"kind": 2, "k": ["requests"], "v": [requests[2], {"message": {"text": "undone"}}]},
             {"kind": 2, "k": ["requests"], "i": 2, "v": [requests[2]]},  # cut at 2, then appended
             {"kind": 1, "k": ["customTitle"], "v": "Bonjour to hello"},
             {"kind": 3, "k": ["isImported"]}]
    path = tmp_path / "chatSessions" / "331fed7f-cfd6-409c-8502-06a56322b636.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(e) + "\n" for e in edits), encoding="utf-8")
    grown = only(path)
    assert grown.steps == kept.steps and grown.metadata["title"] == "Bonjour to hello"
    path.write_text(path.read_text(encoding="utf-8") + '{"kind": 1, "k": ["requests", 7, "result"], "v": {}}\n',
                    encoding="utf-8")
    [result] = list(read_dump(path))
    assert not result.ok and "edit 8 of the chat session log (kind 1 at ['requests', 7, 'result'])" in result.error


def test_the_id_is_the_chats_wherever_the_file_lies(tmp_path: Path) -> None:
    moved = tmp_path / "elsewhere" / "renamed.json"
    moved.parent.mkdir()
    shutil.copy(MCP_ERROR, moved)
    assert only(moved).trajectory_id == only(MCP_ERROR).trajectory_id


def test_a_kept_session_is_named_as_its_export_and_an_unused_one_is_refused(tmp_path: Path) -> None:
    chat = json.loads(MCP_TOOLS.read_text(encoding="utf-8"))
    kept = {"version": 3, **chat, "sessionId": "a8969187-e0be-4408-95dc-a5781793b48f", "creationDate": 1759432800000,
            "customTitle": "update entry fields"}
    path = tmp_path / "chatSessions" / "a8969187-e0be-4408-95dc-a5781793b48f.json"
    path.parent.mkdir()
    path.write_text(json.dumps(kept), encoding="utf-8")
    run = only(path)
    assert run.trajectory_id == only(MCP_TOOLS).trajectory_id  # the chat kept and exported: one run
    assert run.metadata["vscode_session_id"] == "a8969187-e0be-4408-95dc-a5781793b48f"
    assert run.metadata["title"] == "update entry fields" and run.created_at.isoformat().startswith("2025-10-02T19:20")
    path.write_text(json.dumps({**kept, "requests": []}), encoding="utf-8")
    [result] = list(read_dump(path))
    assert not result.ok and "holds no requests" in result.error


def test_a_chat_too_big_to_parse_for_detection_is_told_by_its_head(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(json.loads(MCP_TOOLS.read_text(encoding="utf-8")), indent=2), encoding="utf-8")
    # a stand-in for a chat past the 64 MiB detection parses whole (such a file is too big for the tests to write)
    monkeypatch.setattr(detect, "WHOLE_PARSE_BYTES", 4096)
    assert detect.detect_format(path) == "copilot-chat"
    assert len(runs(path)) == 1


def test_the_cli_reads_a_folder_of_exports_and_finds_a_run_by_its_tool_error(newcomer, tmp_path: Path) -> None:  # noqa: F811
    code, out, err = run_cli("ingest", str(REAL), "--dry-run")
    assert code == 0, out + err
    assert out.count("format copilot-chat; runs 1; rejected 0") == len(list(REAL.glob("*.json"))) - 1, out
    assert "kept_session.jsonl: format copilot-chat; runs 0; rejected 0" in out, out  # kept_session.json's run
    assert "fetch_web_page.json: format copilot-chat; runs 0; rejected 0" in out, out  # saved again once ended
    code, out, err = run_cli("ingest", str(REAL), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "GraphQL Internal server error calling update_entry_fields", "-t", "acme",
                             "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == "copilot-chat.request_465c6a97-e584-42eb-ac5c-18340882bbbc", out


def test_a_walk_of_workspace_storage_reads_the_kept_chats_and_passes_over_workspace_json(tmp_path: Path) -> None:
    workspace = tmp_path / "workspaceStorage" / "3f2a9c0e1b7d4e5f8a6b2c1d0e9f8a7b"
    (workspace / "chatSessions").mkdir(parents=True)
    (workspace / "workspace.json").write_text('{"folder": "file:///home/u/project"}', encoding="utf-8")
    shutil.copy(MCP_ERROR, workspace / "chatSessions" / "4d94cc58-21b2-4fa8-a208-72d86a8990ef.json")
    results = list(read_dump(tmp_path / "workspaceStorage"))
    assert [(r.ok, r.error) for r in results] == [(True, None)]


def test_a_copilot_cli_session_log_is_one_run_of_its_tool_calls() -> None:
    run = only(CLI_TOOLS)
    assert run.trajectory_id == "copilot-cli.c8963ad7-e7b1-414c-a9fc-930905e76708"
    assert run.task == "Explain the contents of /one.ts" and run.tool_versions == {"copilot-cli": "0.0.354"}
    assert run.created_at.isoformat() == "2025-11-07T01:12:11.309000+00:00" and run.outcome is Outcome.unknown
    assert [(s.action, s.arguments) for s in run.steps[:2]] == [
        ("report_intent", {"intent": "Reading proposed API file"}), ("view", {"path": "/one.ts"})]
    assert run.steps[0].thought == "I'll examine the contents of that file for you."  # the message's text
    assert run.steps[1].observation.lstrip().startswith("diff --git a/one.ts b/one.ts")
    assert run.steps[2].action == "respond" and "proposed VS Code API for Data Channels" in \
        run.steps[2].arguments["content"]
    later = only(CLI_TWO_PROMPTS)
    assert later.task == "what is 1+1" and later.metadata["user_prompts"] == ["what is 2+2"]
    assert [s.arguments["content"] for s in later.steps] == ["1 + 1 = 2", "2 + 2 = 4"]
    assert later.steps[0].started_at < later.steps[1].started_at


def _failing_cli_log(tmp_path: Path) -> Path:
    """The real log with its view call failing as Copilot CLI records a failed call (``success: false``,
    ``error: {"message": "Path does not exist", "code": "failure"}``, as a shared 1.0.6x session quotes it), and a
    shell call after it that exits 1 (``<exited with exit code 1>``, the shell tool's closing line)."""
    lines = [json.loads(line) for line in CLI_TOOLS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for event in lines:
        if event["type"] == "tool.execution_complete" and event["data"]["toolCallId"].startswith("tooluse_z-5b"):
            event["data"] = {"toolCallId": event["data"]["toolCallId"], "success": False,
                             "error": {"message": "Path does not exist", "code": "failure"}}
    shell = [{"type": "tool.execution_start", "data": {"toolCallId": "call_sh1", "toolName": "bash",
                                                       "arguments": {"command": "npm test"}}},
             {"type": "tool.execution_complete", "data": {"toolCallId": "call_sh1", "success": True, "result": {
                 "content": "npm error Missing script: \"test\"\n<exited with exit code 1>"}}}]
    path = tmp_path / "session-state" / "c8963ad7-e7b1-414c-a9fc-930905e76708" / "events.jsonl"
    path.parent.mkdir(parents=True)
    path.write_text("\n".join(json.dumps(e) for e in lines[:-1] + shell + lines[-1:]) + "\n", encoding="utf-8")
    return path


def test_a_failed_call_and_a_command_exiting_1_are_step_errors(tmp_path: Path) -> None:
    run = only(_failing_cli_log(tmp_path))
    errors = {s.action: s.error for s in run.steps if s.error}
    assert errors == {"view": "Path does not exist", "bash": 'npm error Missing script: "test" (exit code 1)'}
    assert run.trajectory_id == only(CLI_TOOLS).trajectory_id  # the log's session id, wherever it lies


def _cli_log_with(tmp_path: Path, *events: dict) -> Path:
    """The real log with ``events`` before its last event, under ``tmp_path``."""
    lines = CLI_TOOLS.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(lines[:-1] + [json.dumps(e) for e in events] + lines[-1:]) + "\n", encoding="utf-8")
    return path


def _shell(call: str, command: str, output: str, **data) -> list[dict]:
    return [{"type": "tool.execution_start", "data": {"toolCallId": call, "toolName": "bash",
                                                       "arguments": {"command": command}}},
            {"type": "tool.execution_complete", "data": {"toolCallId": call, "success": True,
                                                          "result": {"content": output}, **data}}]


def test_a_newer_clis_shell_exit_code_is_read_from_its_closing_line_and_telemetry(tmp_path: Path) -> None:
    """Copilot CLI 1.0.x closes a command's output ``<shellId: N completed with exit code N>`` and records the code
    in the call's ``toolTelemetry`` (shapes quoted from real 1.0.x sessions)."""
    path = _cli_log_with(
        tmp_path,
        *_shell("c1", "go vet ./...", "pattern ./...: directory prefix . does not contain main module\n"
                "<shellId: 0 completed with exit code 1>", toolTelemetry={"metrics": {"exit_code": 1}}),
        *_shell("c2", "make lint", "lint.go:3: unused variable x\n<shellId: 1 completed with exit code 2>"),
        *_shell("c3", "go build ./...", "queue/retry.go:12:2: undefined: backoffCap",
                toolTelemetry={"metrics": {"exit_code": 1}}),
        *_shell("c4", "ls", "a.go\n<shellId: 2 completed with exit code 0>"))
    errors = {s.arguments["command"]: s.error for s in only(path).steps if s.action == "bash"}
    assert errors == {"go vet ./...": "pattern ./...: directory prefix . does not contain main module (exit code 1)",
                      "make lint": "lint.go:3: unused variable x (exit code 2)",
                      "go build ./...": "queue/retry.go:12:2: undefined: backoffCap (exit code 1)", "ls": None}


def test_tool_requests_that_are_not_calls_make_no_steps(tmp_path: Path) -> None:
    message = {"type": "assistant.message", "data": {"content": "", "toolRequests": [
        "a", None, {"toolCallId": "x1", "arguments": {}}, {"toolCallId": "x2", "name": "view", "arguments": {}}]}}
    steps = only(_cli_log_with(tmp_path, message)).steps
    assert [s.action for s in steps] == ["report_intent", "view", "view", "respond"]


def test_a_session_that_ended_on_its_error_is_an_infra_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    error = {"type": "session.error", "data": {"errorType": "query", "message": "Execution failed: 503 Service "
                                                                                "Unavailable"}}
    path.write_text(CLI_TWO_PROMPTS.read_text(encoding="utf-8").rstrip("\n") + "\n" + json.dumps(error) + "\n",
                    encoding="utf-8")
    run = only(path)
    assert run.outcome is Outcome.infra_error and run.failure.error == "Execution failed: 503 Service Unavailable"


def test_the_cli_walks_copilot_session_state_and_finds_a_run_by_its_tool_error(newcomer, tmp_path: Path) -> None:  # noqa: F811
    home = tmp_path / "home-dir"
    log = _failing_cli_log(home / ".copilot")
    (log.parent / "workspace.yaml").write_text("id: c8963ad7-e7b1-414c-a9fc-930905e76708\n", encoding="utf-8")
    code, out, err = run_cli("ingest", str(home), "--dry-run")
    assert code == 0 and "format copilot-cli; runs 1; rejected 0; steps 4; errors 2" in out, out + err
    code, out, err = run_cli("ingest", str(home), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "view failed: Path does not exist", "-t", "acme", "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == "copilot-cli.c8963ad7-e7b1-414c-a9fc-930905e76708", out


def test_a_walk_passes_over_a_sessions_own_files_and_a_workspaces_other_storage(newcomer, tmp_path: Path) -> None:  # noqa: F811
    """Copilot CLI 1.0.x's session folder (``events.jsonl`` beside the CLI's and the agent's own files) and VS Code's
    workspace storage (other extensions', the chat's edit sessions, Copilot Chat's debug logs) in the layouts real
    sessions show: only the runs are read, the walk ends clean."""
    home = tmp_path / "home-dir"
    session = home / ".copilot" / "session-state" / "c8963ad7-e7b1-414c-a9fc-930905e76708"
    (session / "files").mkdir(parents=True)
    shutil.copy(CLI_TOOLS, session / "events.jsonl")
    (session / "files" / "notes.json").write_text('{"todo": ["run the tests"]}', encoding="utf-8")
    (session / "checkpoints").mkdir()
    (session / "checkpoints" / "index.json").write_text('[{"n": 1}]', encoding="utf-8")
    workspace = home / "Code" / "User" / "workspaceStorage" / "ea5a1ca5dadc3ad0beccff305108f99e"
    for name, text in {"chatEditingSessions/4d94cc58/state.json": '{"version": 2, "recentSnapshot": {}}',
                       "GitHub.copilot-chat/debug-logs/c5b0d19a/main.jsonl":
                           '{"type":"session_start","status":"ok","copilotVersion":"0.37.0"}\n',
                       "ms-python.python/cache.json": '{"interpreters": []}'}.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text, encoding="utf-8")
    (workspace / "chatSessions").mkdir()
    shutil.copy(KEPT_LOG, workspace / "chatSessions")
    (workspace / "GitHub.copilot-chat" / "transcripts").mkdir()  # VS Code's transcripts in Copilot CLI's shape
    shutil.copy(CLI_TWO_PROMPTS, workspace / "GitHub.copilot-chat" / "transcripts")
    code, out, err = run_cli("ingest", str(home), "--dry-run")
    assert code == 0 and "rejected 1" not in out, out + err
    assert "events.jsonl: format copilot-cli; runs 1" in out and "kept_session.jsonl: format copilot-chat; runs 1" \
        in out and "cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl: format copilot-cli; runs 1" in out, out



#: A chat VS Code kept in 2026 (CodinGame/monaco-vscode-api's demo; see .aud32/README.md): four requests, the first
#: naming no model.
KEPT_2026 = Path(__file__).parent / "fixtures" / "copilot" / ".aud32" / "b9394793-20e4-4dc7-a7ec-8a39c986dc76.jsonl"
_COMMAND = "python .\\reflexive_analyst.py"


def _terminal_call(call_id: str, exit_code: int, output: str, **more: object) -> dict:
    """A ``run_in_terminal`` invocation as VS Code serializes it (``IChatTerminalToolInvocationData``): the chat
    shows a shortened command; the command, its output and its exit code are in ``toolSpecificData``."""
    return {"kind": "toolInvocationSerialized", "toolId": "run_in_terminal", "toolCallId": call_id,
            "invocationMessage": {"value": "Running `python .\\\\reflexive\\_analyst.py`"}, "isComplete": True,
            "isConfirmed": {"type": 4}, "toolSpecificData": {
                "kind": "terminal", "commandLine": {"original": _COMMAND, "forDisplay": _COMMAND}, "language": "pwsh",
                "terminalCommandOutput": {"text": output}, "terminalCommandState": {"exitCode": exit_code}}, **more}


def _kept_with(tmp_path: Path, request: dict) -> Path:
    """KEPT_2026 with ``request`` appended as VS Code appends a request to the log (``kind: 2`` at ``requests``)."""
    path = tmp_path / KEPT_2026.name
    path.write_text(KEPT_2026.read_text(encoding="utf-8") + json.dumps({"kind": 2, "k": ["requests"], "v": [request]})
                    + "\n", encoding="utf-8")
    return path


def _request(response: list, result: dict | None = None) -> dict:
    """A request of 2026 that ended (``modelState`` 1) with ``response`` and ``result``."""
    return {"requestId": "request_aud32", "timestamp": 1788660324401, "modelId": "copilot/gpt-5.6-luna",
            "message": {"text": "Iniciar análisis"}, "response": response, "result": result or {"timings": {}},
            "modelState": {"value": 1, "completedAt": 1788660449956}}


def test_the_model_is_the_first_a_request_names() -> None:
    """A kept chat whose first request names no model (VS Code 2026 writes ``modelId`` as the picker had one)
    takes the first request's that does."""
    run = only(KEPT_2026)
    assert run.task == "lol" and run.model_id == "toto" and run.metadata["model_vendor"] == "toto"
    assert [s.action for s in run.steps] == ["respond"] * 3 + ["edit", "respond"]


def test_an_edit_the_chat_made_with_no_call_is_a_step() -> None:
    """A request whose response holds an edit (``textEditGroup``) and no call: the edit is a step of its own."""
    edit = only(KEPT_2026).steps[3]
    assert edit.action == "edit" and edit.arguments == {"path": "/workspace/test.md", "text": "Hello world"}


def test_a_terminal_call_is_its_command_its_output_and_its_exit_code(tmp_path: Path) -> None:
    """A request read from the calls its chat showed: a terminal call's arguments are the command it ran (not the
    chat's shortened ``Running ...``), its observation the command's output, its error the exit code; a call the user
    denied (``isConfirmed: {type: 0}``) or skipped (``{type: 5}``) was not run."""
    denied = _terminal_call("call_denied", 0, "", isConfirmed={"type": 0})
    del denied["toolSpecificData"]["terminalCommandOutput"], denied["toolSpecificData"]["terminalCommandState"]
    skipped = dict(denied, toolCallId="call_skipped", isConfirmed={"type": 5})
    run = only(_kept_with(tmp_path, _request([_terminal_call("call_vyGd", 1, "Traceback ...\nKeyError: 'r'"),
                                              denied, skipped, {"value": "El script falló."}])))
    failed, refused, passed_over, answer = run.steps[5:]
    assert failed.action == "run_in_terminal" and failed.arguments == {"command": _COMMAND}
    assert failed.observation == "Traceback ...\nKeyError: 'r'" and failed.error == "KeyError: 'r' (exit code 1)"
    assert refused.arguments == {"command": _COMMAND} and refused.error == "not run: the user denied the tool call"
    assert passed_over.error == "not run: the user skipped the tool call"
    assert answer.action == "respond" and answer.error is None


def test_a_subagents_calls_follow_the_call_that_ran_it(tmp_path: Path) -> None:
    """A ``runSubagent`` call kept with the model's rounds (their ids ``<toolCallId>__vscode-<n>``): the calls the
    subagent made, shown in the response with its ``subAgentInvocationId`` but in no round, follow it as steps;
    read from the response alone, the subagent's prompt and answer are the call's arguments and observation. The
    subagent's calls carry ``arguments.subagent``, the name of the call that ran it, as copilot-cli's do."""
    subagent = {"kind": "toolInvocationSerialized", "toolId": "runSubagent", "toolCallId": "call_Ehct",
                "invocationMessage": "Iniciar análisis reflexivo", "isComplete": True, "isConfirmed": {"type": 1},
                "toolSpecificData": {"kind": "subagent", "agentName": "reflexive-analyst",
                                     "description": "Iniciar análisis reflexivo", "prompt": "Examina el CSV.",
                                     "result": "344 registros."}}
    inner = _terminal_call("call_vyGd", 0, "ok", subAgentInvocationId="call_Ehct")
    # the real export's subagent terminal calls (shell integration off): no output, no exit code, only a timestamp
    inner["toolSpecificData"].pop("terminalCommandOutput")
    inner["toolSpecificData"]["terminalCommandState"] = {"timestamp": 1788645361000}
    rounds = {"metadata": {"toolCallRounds": [
        {"response": "Voy a iniciar el análisis.", "toolCalls": [
            {"id": "call_Ehct__vscode-1788645360673", "name": "runSubagent",
             "arguments": '{"agentName":"reflexive-analyst","prompt":"Examina el CSV."}'}]},
        {"response": "El análisis concluyó.", "toolCalls": []}],
        "toolCallResults": {"call_Ehct__vscode-1788645360673": {"content": [{"value": "344 registros."}]}}}}
    kept = only(_kept_with(tmp_path, _request([subagent, inner, {"value": "El análisis concluyó."}], rounds)))
    assert [s.action for s in kept.steps[5:]] == ["runSubagent", "run_in_terminal", "respond"]
    assert kept.steps[5].observation == "344 registros."
    assert kept.steps[6].arguments == {"command": _COMMAND, "subagent": "runSubagent"}  # as copilot-cli marks its
    assert kept.steps[6].observation is None and kept.steps[6].error is None
    shown = only(_kept_with(tmp_path, _request([subagent, inner, {"value": "El análisis concluyó."}])))
    assert [s.action for s in shown.steps[5:]] == ["runSubagent", "run_in_terminal", "respond"]
    assert shown.steps[5].arguments == {"agentName": "reflexive-analyst", "description": "Iniciar análisis reflexivo",
                                        "prompt": "Examina el CSV."}
    assert shown.steps[5].observation == "344 registros."
    assert shown.steps[6].arguments == {"command": _COMMAND, "subagent": "runSubagent"}


def _export(tmp_path: Path, *requests: dict) -> Path:
    """A chat exported ("Chat: Export Chat...") of ``requests``."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"responderUsername": "GitHub Copilot", "responderAvatarIconUri": {"id": "copilot"},
                                "initialLocation": "panel", "requests": list(requests)}), encoding="utf-8")
    return path


@pytest.mark.parametrize("where", ["resolvedModel", "autoModeResolution", "round"])
def test_auto_mode_reads_as_the_model_it_chose(tmp_path: Path, where: str) -> None:
    """A request made in Auto (``modelId: copilot/auto``, VS Code's default picker in 2026, as the real Sept 2026
    export has it): the model is the one Auto chose, which the request keeps in ``result.metadata.resolvedModel``,
    the response's ``autoModeResolution`` part and its rounds' ``modelId``; any of them will do."""
    response = [{"kind": "autoModeResolution", "resolved": {"id": "gpt-5.6-luna", "name": "GPT-5.6 Luna"}}] \
        if where == "autoModeResolution" else []
    metadata = {"toolCallRounds": [{"response": "Listo.", "toolCalls": [], "modelId": "gpt-5.6-luna"}]} \
        if where == "round" else {"resolvedModel": "gpt-5.6-luna"} if where == "resolvedModel" else {}
    request = dict(_request(response + [{"value": "Listo."}], {"metadata": metadata}), modelId="copilot/auto")
    run = only(_export(tmp_path, request))
    assert run.model_id == "gpt-5.6-luna" and run.metadata["model_vendor"] == "copilot"
    assert run.metadata["auto_model"] is True


def _round_call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "name": name, "arguments": json.dumps(arguments)}


def test_a_round_call_is_matched_to_its_invocation_by_id_not_by_tool(tmp_path: Path) -> None:
    """Copilot Chat 2026 names a round call ``<toolCallId>__vscode-<n>`` and its invocation ``<toolCallId>``, whose
    tool may be named otherwise (the real export's round ``file_search``, invocation ``copilot_findFiles``); a call
    the chat showed no invocation of (``true`` here) does not take the next same-named call's (``false``, exit 1)."""
    found = {"kind": "toolInvocationSerialized", "toolId": "copilot_findFiles", "toolCallId": "call_38lF",
             "isComplete": True, "isConfirmed": {"type": 1},
             "resultDetails": [{"$mid": 1, "external": "file:///w/data.csv", "path": "/w/data.csv"}]}
    rounds = {"metadata": {"toolCallRounds": [{"response": "", "toolCalls": [
        _round_call("call_38lF__vscode-1788645360680", "file_search", {"query": "**/*.csv"}),
        _round_call("call_true__vscode-1788645360681", "run_in_terminal", {"command": "true"}),
        _round_call("call_vyGd__vscode-1788645360682", "run_in_terminal", {"command": _COMMAND})]}]}}
    steps = only(_kept_with(tmp_path, _request([found, _terminal_call("call_vyGd", 1, "KeyError: 'r'")],
                                               rounds))).steps[5:]
    assert [(s.action, s.observation, s.error) for s in steps] == [
        ("file_search", "file:///w/data.csv", None), ("run_in_terminal", None, None),
        ("run_in_terminal", "KeyError: 'r'", "KeyError: 'r' (exit code 1)")]


def test_an_edit_made_with_no_call_is_a_step_beside_the_rounds_too(tmp_path: Path) -> None:
    """A request Copilot kept its rounds of (it does for all its own, edit mode too) whose edit no call made: the
    edit is a step before the answer; an edit group naming no file and no text is none."""
    response = [{"kind": "textEditGroup", "uri": {"$mid": 1, "fsPath": "/w/a.py", "path": "/w/a.py"},
                 "edits": [[{"text": "print(1)", "range": {"startLineNumber": 1}}]]},
                {"kind": "textEditGroup", "uri": {}, "edits": "nope"}, {"value": "I edited a.py"}]
    rounds = {"metadata": {"toolCallRounds": [{"response": "I edited a.py", "toolCalls": []}]}}
    steps = only(_kept_with(tmp_path, _request(response, rounds))).steps[5:]
    assert [(s.action, s.arguments) for s in steps] == [("edit", {"path": "/w/a.py", "text": "print(1)"}),
                                                        ("respond", {"content": "I edited a.py"})]
    shown = only(_kept_with(tmp_path, _request(response))).steps[5:]
    assert [s.action for s in shown] == ["edit", "respond"]


def test_a_request_vscode_sent_itself_is_no_user_prompt(tmp_path: Path) -> None:
    """VS Code 2026 sends a request itself when a background terminal ends (``isSystemInitiated``, "`npm test`
    completed"): its steps are the chat's, its text no prompt of the user's."""
    notice = dict(_request([{"value": "The tests passed."}]), requestId="request_sys", isSystemInitiated=True,
                  message={"text": "`npm test` completed"})
    run = only(_kept_with(tmp_path, notice))
    assert run.metadata["user_prompts"] == ["test", "lol", "lol"] and run.steps[-1].arguments == {
        "content": "The tests passed."}


def _subagent_episode() -> list[dict]:
    """A ``task`` sub-agent as Copilot CLI 1.0.x logs it in its session's own log (no file of its own): field names from
    github/copilot-sdk's generated ``session-events.ts`` (every event of a sub-agent carries ``agentId``, the spawning
    call's id; ``data.parentToolCallId`` the deprecated same) and the real lines quoted by those who read such logs
    (``subagent.started``/``failed`` with ``agentId`` and ``data.toolCallId``; the sub-agent's prompt as an unmarked
    ``user.message``, 1.0.82); ids and texts made up."""
    sub = {"agentId": "toolu_task1"}
    return [
        {"type": "assistant.message", "id": "s1", "data": {"content": "", "model": "gpt-5-mini", "toolRequests": [
            {"toolCallId": "toolu_task1", "name": "task", "arguments": {
                "description": "List the spec files", "prompt": "List the files under specs/", "agent_type": "explore",
                "name": "spec-lister", "mode": "sync"}}]}},
        {"type": "tool.execution_start", "id": "s2", "data": {"toolCallId": "toolu_task1", "toolName": "task"}},
        {"type": "subagent.started", "id": "s3", **sub, "data": {
            "toolCallId": "toolu_task1", "agentName": "explore", "agentDisplayName": "spec-lister",
            "model": "claude-haiku-4.5"}},
        {"type": "user.message", "id": "s4", "data": {"content": "List the files under specs/"}},
        {"type": "assistant.message", "id": "s5", **sub, "data": {
            "content": "Looking.", "model": "claude-haiku-4.5", "toolRequests": [
                {"toolCallId": "call_sub1", "name": "bash", "arguments": {"command": "ls specs"}}]}},
        {"type": "tool.execution_start", "id": "s6", **sub, "data": {
            "toolCallId": "call_sub1", "toolName": "bash", "arguments": {"command": "ls specs"}}},
        {"type": "tool.execution_complete", "id": "s7", **sub, "data": {"toolCallId": "call_sub1", "success": True,
            "result": {"content": "ls: cannot access 'specs'\n<shellId: 0 completed with exit code 2>"}}},
        {"type": "assistant.message", "id": "s8", "data": {
            "content": "There are no spec files.", "model": "claude-haiku-4.5", "parentToolCallId": "toolu_task1"}},
        {"type": "tool.execution_complete", "id": "s9", "data": {
            "toolCallId": "toolu_task1", "success": True, "result": {"content": "There are no spec files."}}},
        {"type": "subagent.completed", "id": "s10", **sub, "data": {"toolCallId": "toolu_task1", "totalToolCalls": 1}},
    ]


HEADLESS_30 = Path(__file__).parent / "fixtures" / "copilot" / ".copilot2-30" / "session.jsonl"


def _with_episode(tmp_path: Path, episode: list[dict]) -> Path:
    """The real headless log (.copilot2-30) with ``episode`` before its second turn."""
    events = [json.loads(line) for line in HEADLESS_30.read_text().splitlines()]
    second_turn = [i for i, e in enumerate(events) if e["type"] == "assistant.turn_start"][1]
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(json.dumps(e) for e in events[:second_turn] + episode + events[second_turn:]) + "\n")
    return log


def test_a_subagents_events_in_the_sessions_log_are_its_calls_not_the_sessions_turns(tmp_path: Path) -> None:
    """Copilot CLI logs a sub-agent's events in its session's log. Main took the sub-agent's prompt for the user's
    second prompt, its last reply for one of the session's answers, and its model for one the session used."""
    before, run = only(HEADLESS_30), only(_with_episode(tmp_path, _subagent_episode()))
    assert run.task == before.task and run.metadata.get("user_prompts") is None
    assert run.metadata.get("models") is None  # gpt-5-mini only: the sub-agent's claude-haiku-4.5 is not the session's
    added = run.steps[len(before.steps) - 1:-1]
    assert [(s.action, s.arguments.get("subagent")) for s in added] == [("task", None), ("bash", "task")]
    task, bash = added
    assert task.observation == "There are no spec files." and task.arguments["name"] == "spec-lister"
    assert bash.thought == "Looking." and "exit code 2" in bash.error
    assert run.steps[-1].action == "respond" and run.steps[-1].arguments == before.steps[-1].arguments
    assert len(run.steps) == len(before.steps) + 2


def test_a_user_prompt_in_a_sub_agents_words_after_it_is_the_users(tmp_path: Path) -> None:
    """A sub-agent's prompt, logged as an unmarked ``user.message``, is passed over once: the user typing the same
    words later was dropped too, the prompt lost and its answer folded into the turn before (review RT1, 5)."""
    asked = [{"type": "user.message", "id": "u1", "data": {"content": "List the files under specs/"}},
             {"type": "assistant.message", "id": "u2", "data": {"content": "specs/ is empty.", "model": "gpt-5-mini"}}]
    run = only(_with_episode(tmp_path, _subagent_episode() + asked))
    assert run.metadata.get("user_prompts") == ["List the files under specs/"]
    assert [s.arguments for s in run.steps if s.action == "respond"][-2] == {"content": "specs/ is empty."}


def test_a_subagents_lifecycle_and_instance_id_are_its_own(tmp_path: Path) -> None:
    """``subagent.started`` names the sub-agent's model (the SDK's ``SubagentStartedData``) and, written without
    ``agentId``, the branch before this took it for a model the session used. The SDK calls ``agentId`` a
    "sub-agent instance identifier" (the changelog's task sub-agents: ``math-helper-0``), not the spawning call's id:
    ``subagent.started`` ties the two (``data.toolCallId``); the branch before this marked such a sub-agent's calls
    ``subagent: "subagent"``, not ``task``."""
    unmarked_start = [{k: v for k, v in e.items() if not (e["type"] == "subagent.started" and k == "agentId")}
                      for e in _subagent_episode()]
    assert only(_with_episode(tmp_path, unmarked_start)).metadata.get("models") is None
    named = json.loads(json.dumps(_subagent_episode()).replace('"agentId": "toolu_task1"',
                                                               '"agentId": "spec-lister-0"'))
    run = only(_with_episode(tmp_path, named))
    assert [(s.action, s.arguments.get("subagent")) for s in run.steps if s.action in ("task", "bash")] == [
        ("task", None), ("bash", "task")]
