"""Probe 48 (area N): the newest versions of the agents' own formats (see each fixture folder's SOURCE.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

from acp_support import gemini_shell_run

FIXTURES = Path(__file__).parent / "fixtures"
OH_ACP = FIXTURES / "openhands" / ".real" / "sdk-acp" / "0a1b2c3d00004000800000000000ac01"
OH_SDK_RUN = FIXTURES / "openhands" / ".real" / "sdk" / "0a1b2c3d00004000800000000000f019"


def _one(path: Path):
    [result] = read_dump(path, tenant="acme")
    assert result.ok, result.error
    return result.trajectory


def test_openhands_acp_agent_tool_calls_are_steps() -> None:
    """Bug: a conversation of the SDK's ``ACPAgent`` (Claude Code / Codex / Gemini CLI over ACP, SDK 1.12+) records its
    tools as ``ACPToolCallEvent``s, which were dropped: the run read as one ``finish`` step, the failing test run
    lost, and its model was the SDK's placeholder ``acp-managed``."""
    run = _one(OH_ACP)
    assert [(s.action, s.arguments.get("command") or s.arguments.get("file_path")) for s in run.steps] == [
        ("read", "/workspace/project/test_calc.py"), ("execute", "python -m pytest -q"),
        ("edit", "/workspace/project/calc.py"), ("execute", "python -m pytest -q"), ("finish", None)]
    read, failed, edit, passed, _ = run.steps
    assert read.observation.startswith("1\tfrom calc import add") and read.error is None
    assert failed.error == "FAILED test_calc.py::test_add - assert 0 == 4 (exit code 1)"
    assert edit.observation == "/workspace/project/calc.py\n    return a + b" and edit.error is None
    assert passed.error is None and passed.observation.endswith("1 passed in 0.01s")
    assert read.started_at < read.ended_at  # the start and the end of one call, one step
    assert run.model_id is None and run.metadata["acp_server"] == "claude-code"  # not "acp-managed"
    assert run.outcome is Outcome.unknown and run.metadata["agent_class"] == "ACPAgent"


def test_openhands_acp_agent_named_model_and_its_events_as_lines(tmp_path: Path) -> None:
    """An ``ACPAgent`` told its model (``acp_model``, which the SDK copies to ``llm.model``) has that model; the same
    events as JSON lines (a stream's shape) keep their tool calls; a call that ends in the event that starts it (a
    server that reports it ``failed`` at once) is one step with its error."""
    folder = tmp_path / OH_ACP.name
    shutil.copytree(OH_ACP, folder)
    state = json.loads((folder / "base_state.json").read_text())
    state["agent"]["acp_model"] = state["agent"]["llm"]["model"] = "claude-sonnet-4-6"
    (folder / "base_state.json").write_text(json.dumps(state))
    assert _one(folder).model_id == "claude-sonnet-4-6"
    events = [json.loads(p.read_text()) for p in sorted((OH_ACP / "events").glob("event-*.json"))]
    refused = {**events[3], "id": "5f0e1d2c-0000-4000-8000-000000000abc", "tool_call_id": "toolu_05Grep",
               "title": "grep", "tool_kind": "search", "status": "failed", "is_error": True,
               "raw_input": {"pattern": "add"}, "raw_output": "Permission denied by the user", "content": None}
    lines = tmp_path / "conversation.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in events[:-2] + [refused] + events[-2:]))
    run = _one(lines)
    assert [s.action for s in run.steps] == ["read", "execute", "edit", "execute", "search", "finish"]
    assert run.steps[4].error == "Permission denied by the user"


def test_openhands_agent_server_event_page_is_a_run(tmp_path: Path) -> None:
    """Bug: the V1 agent server's answer to ``GET /api/conversations/<id>/events/search`` (``EventPage``:
    ``{"items": [SDK events], "next_page_id"}``), saved as a file, was "unrecognised dump format"."""
    events = [json.loads(p.read_text()) for p in sorted((OH_SDK_RUN / "events").glob("event-*.json"))]
    page = tmp_path / "events.json"
    page.write_text(json.dumps({"items": events, "next_page_id": None}))
    run = _one(page)
    assert run.task.startswith("List the files in /nonexistent_dir_xyz")
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor", "finish"]
    assert run.steps[2].error.startswith("Invalid `path` parameter")


def test_openhands_acp_agent_turn_that_timed_out_is_the_runs_error(tmp_path: Path) -> None:
    """An ``ACPAgent`` whose server went silent (``_emit_turn_timeout``: the call in flight closed as ``failed``, the
    SDK's "ACP prompt timed out ..." as an agent message, status ``error``, no ``ConversationErrorEvent``) broke on
    that timeout: not on the cancelled call's "tool call failed", and the notice is no reply of the agent's; the call
    in flight was cancelled (review of probe 48 N: it read as failed on its own)."""
    folder = tmp_path / OH_ACP.name
    shutil.copytree(OH_ACP, folder)
    events = [json.loads(p.read_text()) for p in sorted((folder / "events").glob("event-*.json"))]
    prompt, start = events[1], events[4]  # a call that started (pending), of the first turn
    said = ("ACP prompt timed out after 1800s with no activity from the agent. The agent may have stalled, or it may "
            "have completed its work but the response was not received.")
    more = [
        {**prompt, "id": "7d1c0000-0000-4000-8000-000000000001", "timestamp": "2026-12-04T10:20:00.000000",
         "llm_message": {**prompt["llm_message"], "content": [{"type": "text", "text": "Now run the linter."}]}},
        {**start, "id": "7d1c0000-0000-4000-8000-000000000002", "timestamp": "2026-12-04T10:20:02.000000",
         "tool_call_id": "toolu_09Bash", "raw_input": {"command": "ruff check ."}},
        {**start, "id": "7d1c0000-0000-4000-8000-000000000003", "timestamp": "2026-12-04T10:50:03.000000",
         "tool_call_id": "toolu_09Bash", "raw_input": {"command": "ruff check ."}, "status": "failed",
         "is_error": True},
        {"id": "7d1c0000-0000-4000-8000-000000000004", "timestamp": "2026-12-04T10:50:03.100000", "source": "agent",
         "llm_message": {"role": "assistant", "content": [{"type": "text", "text": said}], "thinking_blocks": []},
         "activated_skills": [], "extended_content": [], "kind": "MessageEvent"},
    ]
    for n, event in enumerate(more, len(events)):
        event["parent_id"] = (events + more)[n - 1]["id"]
        (folder / "events" / f"event-{n:05d}-{event['id']}.json").write_text(json.dumps(event))
    state = json.loads((folder / "base_state.json").read_text())
    state.update(execution_status="error", leaf_event_id=more[-1]["id"])
    (folder / "base_state.json").write_text(json.dumps(state))
    run = _one(folder)
    assert run.outcome is Outcome.infra_error and run.failure.error == said
    assert [s.action for s in run.steps][-2:] == ["finish", "execute"]
    assert run.steps[-1].error == ("cancelled: the turn broke before the call ended (ACP prompt timed out after 1800s "
                                   "with no activity from the agent.)") and run.steps[-1].observation is None
    assert run.metadata["user_prompts"] == ["Now run the linter."]


def test_openhands_acp_agent_codex_command_records(tmp_path: Path) -> None:
    """Codex over ACP (agentclientprotocol/codex-acp ``CodexToolCallMapper``) starts a command with ``raw_input`` its
    ``ExecCommandBeginEvent`` (``command`` an argv list) and ends it with ``raw_output`` its ``ExecCommandEndEvent``
    (``formatted_output``, ``exit_code``, ...): the observation is that output, not the record as JSON, and the error
    its exit code; a search that matched nothing (exit code 1, no output) is no error."""
    events = [json.loads(p.read_text()) for p in sorted((OH_ACP / "events").glob("event-*.json"))]
    start, end = events[4], events[5]

    def command(call: str, line: str, exit_code: int, output: str) -> list[dict]:
        begin = {"call_id": call, "turn_id": "1", "command": ["/bin/zsh", "-lc", line], "cwd": "/workspace/project",
                 "parsed_cmd": [{"type": "unknown", "cmd": line}], "source": "agent"}
        ended = {**begin, "stdout": output, "stderr": "", "aggregated_output": output, "exit_code": exit_code,
                 "duration": {"secs": 0, "nanos": 412000000}, "formatted_output": output,
                 "status": "completed" if exit_code == 0 else "failed"}
        ids = {"tool_call_id": call, "title": line, "raw_input": begin}
        return [{**start, **ids, "id": f"8e2d0000-0000-4000-8000-{call[-12:]:0>12}", "status": "in_progress"},
                {**end, **ids, "id": f"8e2d0000-0000-4000-8001-{call[-12:]:0>12}", "content": None,
                 "status": "failed" if exit_code else "completed", "is_error": bool(exit_code), "raw_output": ended}]
    codex = command("call_pytest", "python -m pytest -q", 1,
                    "FAILED test_calc.py::test_add - assert 0 == 4\n1 failed in 0.02s\n") + \
        command("call_grep", "rg nothing", 1, "")
    lines = tmp_path / "codex-acp.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in events[:4] + codex + events[-2:]))
    run = _one(lines)
    assert [s.action for s in run.steps] == ["read", "execute", "execute", "finish"]
    failed, nothing = run.steps[1:3]
    assert failed.observation.startswith("FAILED test_calc.py::test_add")
    assert failed.error == "FAILED test_calc.py::test_add - assert 0 == 4 (exit code 1)"
    assert nothing.observation is None and nothing.error is None


def test_openhands_sdk_responses_api_reasoning_is_the_thought(tmp_path: Path) -> None:
    """Bug: a model the SDK calls through the OpenAI Responses API (GPT-5, Codex models: ``Message.
    from_llm_responses_output``) leaves ``reasoning_content`` null and keeps its reasoning in
    ``responses_reasoning_item`` (``summary``/``content`` texts, ``encrypted_content``): that reasoning was lost
    from every step's thought. Anthropic's ``thinking_blocks`` alone are read too."""
    folder = tmp_path / OH_SDK_RUN.name
    shutil.copytree(OH_SDK_RUN, folder)
    files = sorted((folder / "events").glob("event-*.json"))
    first, second = (p for p in files if json.loads(p.read_text())["kind"] == "ActionEvent" and
                     json.loads(p.read_text())["tool_name"] == "terminal")
    item = {"id": "rs_0a1b2c3d", "summary": ["**Listing the directory**\n\nThe user wants it listed first."],
            "content": None, "encrypted_content": "gAAAAB-opaque", "status": None}
    event = json.loads(first.read_text())
    first.write_text(json.dumps({**event, "reasoning_content": None, "responses_reasoning_item": item}))
    event = json.loads(second.read_text())
    blocks = [{"type": "thinking", "thinking": "Create the file, then show it.", "signature": "sig"},
              {"type": "redacted_thinking", "data": "opaque"}]
    second.write_text(json.dumps({**event, "reasoning_content": None, "thinking_blocks": blocks}))
    run = _one(folder)
    assert run.steps[0].thought == ("**Listing the directory**\n\nThe user wants it listed first.\n\n"
                                    "First I'll list the requested directory.")
    assert run.steps[1].thought == ("Create the file, then show it.\n\n"
                                    "That directory is missing; I'll create the file instead.")


def test_openhands_acp_agent_gemini_calls_without_input(tmp_path: Path) -> None:
    """Gemini CLI over ACP (google-gemini/gemini-cli ``packages/cli/src/acp/acpSession.ts``) sends no ``rawInput``:
    a call is its title (the invocation's description) and kind. Its shell tool reports a command that failed
    printing nothing as ``completed``, its display "Command exited with code: N" (``shell.ts``): that is the step's
    error (review of probe 48 N: it was none), unless it is a search's "no match"."""
    check = "./scripts/deploy.sh --check [current working directory /workspace/project] (Check the deploy)"
    lines = gemini_shell_run(tmp_path / "gemini-acp.jsonl", [
        (check, "Command exited with code: 3"),
        ("grep -rn TODO src [current working directory /workspace/project]", "Command exited with code: 1")])
    run = _one(lines)
    assert [s.action for s in run.steps] == ["execute", "execute", "finish"]
    assert run.steps[0].arguments == {"title": check}
    assert run.steps[0].error == "exit code 3" and run.steps[0].observation == "Command exited with code: 3"
    assert run.steps[1].error is None


def test_openhands_agent_server_event_pages_say_they_are_part_of_a_conversation(tmp_path: Path) -> None:
    """The agent server answers 100 events at most per page: a first page that has a next one is a run that says
    the rest is elsewhere (``metadata.next_page_id``), a later page is refused saying what it is."""
    events = [json.loads(p.read_text()) for p in sorted((OH_SDK_RUN / "events").glob("event-*.json"))]
    first, later = tmp_path / "page-1.json", tmp_path / "page-2.json"
    first.write_text(json.dumps({"items": events[:6], "next_page_id": events[6]["id"]}))
    later.write_text(json.dumps({"items": events[6:], "next_page_id": None}))
    run = _one(first)
    assert run.metadata["next_page_id"] == events[6]["id"] and len(run.steps) == 2
    [refused] = read_dump(later, tenant="acme")
    assert not refused.ok and "one page of the agent server's events" in refused.error


# Review of probe 48 N (the OpenHands V1 ACP / event-page reading), each case built from the fixtures as the writers'
# source makes it: OpenHands/software-agent-sdk ``agent/acp_agent.py`` and ``openhands-agent-server`` ``event_router``
# / ``event_service``; agentclientprotocol/claude-agent-acp ``src/acp-agent.ts``; zed-industries/codex-acp
# ``src/thread.rs``; google-gemini/gemini-cli ``packages/cli/src/acp/acpSession.ts`` and ``core/src/tools/shell.ts``.

def _acp_events() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((OH_ACP / "events").glob("event-*.json"))]


def _lines(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _shown(text: str) -> list[dict]:
    """A text content block as the SDK dumps an ACP server's (``_serialize_tool_content``)."""
    return [{"type": "content", "content": {"annotations": None, "field_meta": None, "text": text, "type": "text"},
             "field_meta": None}]


def test_openhands_event_page_fetched_newest_first_is_read_in_order(tmp_path: Path) -> None:
    """Bug: a page asked for with ``sort_order=TIMESTAMP_DESC`` (the agent server lists it from its log's end) was
    read backwards: every call's observation came before it and was lost, the run ended on its first command."""
    events = [json.loads(p.read_text()) for p in sorted((OH_SDK_RUN / "events").glob("event-*.json"))]
    page = tmp_path / "events.json"
    page.write_text(json.dumps({"items": events[::-1], "next_page_id": None}))
    run = _one(page)
    assert [s.action for s in run.steps] == ["terminal", "terminal", "file_editor", "finish"]
    assert run.steps[1].observation == "hello" and run.steps[2].error.startswith("Invalid `path` parameter")
    assert run.task.startswith("List the files in /nonexistent_dir_xyz")
    listed = tmp_path / "events-newest-first.json"  # the pages of such a search saved as one list
    listed.write_text(json.dumps(events[::-1]))
    assert [(s.action, s.observation) for s in _one(listed).steps] == [(s.action, s.observation) for s in run.steps]


def test_openhands_later_event_page_of_a_multi_turn_conversation_is_refused(tmp_path: Path) -> None:
    """Bug: the second page of a conversation whose user wrote again (real SDK conversation, its follow-up message on
    that page) was read as a run of its own, the follow-up its task; a page of the newest events (descending) too. A
    search filtered by kind or source says so."""
    folder = FIXTURES / "openhands" / ".real" / "sdk-tools-changed" / "30692f28b39a4e4eab8257c4b6b50ded"
    events = [json.loads(p.read_text()) for p in sorted((folder / "events").glob("event-*.json"))]
    pages = {"later.json": {"items": events[5:], "next_page_id": None},
             "middle.json": {"items": events[5:8], "next_page_id": events[8]["id"]},
             "newest.json": {"items": events[::-1][:4], "next_page_id": events[::-1][4]["id"]},
             "by-kind.json": {"items": [e for e in events if e["kind"] == "MessageEvent"], "next_page_id": None},
             "by-source.json": {"items": [e for e in events if e["source"] == "agent"], "next_page_id": None}}
    for name, page in pages.items():
        (tmp_path / name).write_text(json.dumps(page))
    said = {name: next(iter(read_dump(tmp_path / name, tenant="acme"))) for name in pages}
    assert not any(r.ok for r in said.values()), {n: r.trajectory.task for n, r in said.items() if r.ok}
    assert "one page of the agent server's events" in said["later.json"].error
    assert "one page of the agent server's events" in said["middle.json"].error
    assert "newest events (sort_order=TIMESTAMP_DESC)" in said["newest.json"].error
    assert "filtered by kind (?kind=MessageEvent)" in said["by-kind.json"].error
    assert "filtered by source (?source=agent)" in said["by-source.json"].error
    first = tmp_path / "first.json"
    first.write_text(json.dumps({"items": events[:5], "next_page_id": events[5]["id"]}))
    assert _one(first).task == "Hello. Please confirm you can see my tools."


def test_openhands_acp_call_running_across_a_user_message_is_one_step(tmp_path: Path) -> None:
    """Bug: a user's message the agent server persisted while an ACP call ran (``LocalConversation`` does not hold
    the state lock during the prompt) split that call in two: its start a step with no result, its end another."""
    events = _acp_events()
    prompt = events[1]
    mid = {**prompt, "id": "dd000000-0000-4000-8000-000000000001", "timestamp": "2026-12-04T10:15:07.000000",
           "llm_message": {**prompt["llm_message"], "content": [{"type": "text", "text": "Also run ruff when done."}]}}
    run = _one(_lines(tmp_path / "mid.jsonl", events[:5] + [mid] + events[5:]))
    assert [s.action for s in run.steps] == ["read", "execute", "edit", "execute", "finish"]
    assert run.steps[1].arguments["command"] == "python -m pytest -q"
    assert run.steps[1].error == "FAILED test_calc.py::test_add - assert 0 == 4 (exit code 1)"
    assert run.metadata["user_prompts"] == ["Also run ruff when done."]


def test_openhands_acp_results_as_content_blocks_and_mcp_results(tmp_path: Path) -> None:
    """Bug: Claude Code's ``rawOutput`` of a Task (``chunk.content``: text blocks) and Codex's MCP ``CallToolResult``
    (``end_mcp_tool_call``) were kept as JSON, and a failed MCP call's error was that JSON."""
    events = _acp_events()
    report = [{"type": "text", "text": "package.json declares react 18 and vite 5."},
              {"type": "text", "text": "agentId: a1b2c3 (for resuming)"}]
    task_in = {"description": "Analyse package.json", "prompt": "Summarise package.json", "subagent_type": "general"}
    task = [{**events[2], "id": "aa000000-0000-4000-8000-000000000001", "tool_call_id": "toolu_07Task",
             "title": "Task", "tool_kind": "think"},
            {**events[3], "id": "aa000000-0000-4000-8000-000000000002", "tool_call_id": "toolu_07Task",
             "title": "Analyse package.json", "tool_kind": "think", "raw_input": task_in, "raw_output": report,
             "content": [c for b in report for c in _shown(b["text"])]}]
    mcp_in = {"server": "docs", "tool": "search", "arguments": {"q": "calc"}}
    result = {"content": [{"type": "text", "text": "No document titled calc"}], "isError": True}
    mcp = [{**events[2], "id": "aa000000-0000-4000-8000-000000000003", "tool_call_id": "call_mcp1",
            "title": "Tool: docs/search", "status": "in_progress", "tool_kind": "other", "raw_input": mcp_in},
           {**events[2], "id": "aa000000-0000-4000-8000-000000000004", "tool_call_id": "call_mcp1",
            "title": "Tool: docs/search", "status": "failed", "is_error": True, "tool_kind": "other",
            "raw_input": mcp_in, "raw_output": result, "content": _shown("No document titled calc")}]
    run = _one(_lines(tmp_path / "blocks.jsonl", events[:2] + task + mcp + events[-2:]))
    done, failed = run.steps[:2]
    assert done.observation == "package.json declares react 18 and vite 5.\nagentId: a1b2c3 (for resuming)"
    assert done.error is None
    assert failed.action == "Tool: docs/search" and failed.observation == "No document titled calc"
    assert failed.error == "No document titled calc"


def test_openhands_acp_codex_failed_patch_says_why(tmp_path: Path) -> None:
    """Bug: codex-acp's failed ``apply_patch`` (``end_patch_apply``: ``raw_output`` the ``PatchApplyEndEvent``,
    ``stdout`` empty, the reason in ``stderr``) was "tool call failed" with no observation."""
    events = _acp_events()
    changes = {"/workspace/project/calc.py": {"type": "update", "unified_diff": "@@ -1,2 +1,2 @@\n def add(a, b):\n"
                                              "-    return a - c\n+    return a + b\n", "move_path": None}}
    diff = [{"type": "diff", "path": "/workspace/project/calc.py", "old_text": "def add(a, b):\n    return a - c\n",
             "new_text": "def add(a, b):\n    return a + b\n", "field_meta": None}]
    begin = {"call_id": "call_patch1", "turn_id": "1", "auto_approved": True, "changes": changes}
    why = "Failed to find expected lines in /workspace/project/calc.py:\n    return a - c"
    end = {"call_id": "call_patch1", "turn_id": "1", "stdout": "", "stderr": why, "success": False,
           "changes": changes, "status": "failed"}
    start = {**events[6], "id": "cc000000-0000-4000-8000-000000000001", "tool_call_id": "call_patch1",
             "title": "Edit /workspace/project/calc.py", "status": "in_progress", "raw_input": begin, "content": diff}
    ended = {**start, "id": "cc000000-0000-4000-8000-000000000002", "status": "failed", "is_error": True,
             "raw_output": end}
    run = _one(_lines(tmp_path / "patch.jsonl", events[:2] + [start, ended] + events[-2:]))
    assert run.steps[0].observation == why
    assert run.steps[0].error == "Failed to find expected lines in /workspace/project/calc.py:"


def test_openhands_acp_call_cancelled_at_a_timeout_is_cancelled_not_failed(tmp_path: Path) -> None:
    """Bug: a call in flight when the turn timed out, closed by the SDK (``_cancel_inflight_tool_calls``: a
    ``failed`` event carrying what the server had sent, Claude Code's description of the command), had that
    description as its error and observation; so had one the user interrupted (``InterruptEvent`` after it); a call
    that failed on its own, long before, keeps its error."""
    events = _acp_events()
    said = ("ACP prompt timed out after 1800s with no activity from the agent. The agent may have stalled, or it may "
            "have completed its work but the response was not received.")
    ran = {"command": "python -m pytest -q tests/", "description": "Run the full test suite"}
    start = {**events[4], "id": "bb000000-0000-4000-8000-000000000001", "tool_call_id": "toolu_09Bash",
             "timestamp": "2026-12-04T10:20:02.000000"}
    cancel = {**start, "id": "bb000000-0000-4000-8000-000000000002", "timestamp": "2026-12-04T10:50:03.004000",
              "title": "`python -m pytest -q tests/`", "status": "failed", "is_error": True, "raw_input": ran,
              "content": _shown("Run the full test suite")}
    note = {"id": "bb000000-0000-4000-8000-000000000003", "timestamp": "2026-12-04T10:50:03.005000",
            "source": "agent", "llm_message": {"role": "assistant", "content": [{"type": "text", "text": said}],
                                               "thinking_blocks": []},
            "activated_skills": [], "extended_content": [], "kind": "MessageEvent"}
    run = _one(_lines(tmp_path / "timeout.jsonl", events[:2] + [start, cancel, note]))
    assert run.outcome is Outcome.infra_error and run.failure.error == said
    step = run.steps[-1]
    assert step.arguments == ran and step.observation is None
    assert step.error == ("cancelled: the turn broke before the call ended (ACP prompt timed out after 1800s with no "
                          "activity from the agent.)")
    stop = {"id": "bb000000-0000-4000-8000-000000000004", "timestamp": "2026-12-04T10:50:03.006000", "source": "user",
            "reason": "User requested interrupt", "kind": "InterruptEvent"}  # LocalConversation.arun, once cancelled
    run = _one(_lines(tmp_path / "interrupted.jsonl", events[:2] + [start, cancel, stop]))
    assert run.steps[-1].error == "cancelled: the turn was interrupted" and run.steps[-1].observation is None
    gemini = {**cancel, "timestamp": "2026-12-04T10:20:03.000000", "raw_input": None,
              "content": _shown("Error reading files (a.py): ENOENT")}
    run = _one(_lines(tmp_path / "failed-then-stalled.jsonl", events[:2] + [start, gemini, note]))
    assert run.steps[-1].error == "Error reading files (a.py): ENOENT"


def test_openhands_acp_model_the_server_reported(tmp_path: Path) -> None:
    """Bug: an ``ACPAgent`` not told its model (no ``acp_model``) had none although the SDK keeps the one its server
    reported (``agent_state.acp_current_model_id``, codex-acp's ``gpt-5.2-codex/medium``); Claude Code's alias
    ``default`` (the fixture's) names no model."""
    assert _one(OH_ACP).model_id is None
    folder = tmp_path / OH_ACP.name
    shutil.copytree(OH_ACP, folder)
    state = json.loads((folder / "base_state.json").read_text())
    state["agent"].update(acp_command=["npx", "-y", "@zed-industries/codex-acp"], acp_server="codex")
    state["agent_state"].update(acp_agent_name="codex-acp", acp_agent_version="0.12.0",
                                acp_current_model_id="gpt-5.2-codex/medium", acp_available_models=[
                                    {"model_id": "gpt-5.2-codex/medium", "name": "gpt-5.2-codex (medium)",
                                     "description": None}])
    (folder / "base_state.json").write_text(json.dumps(state))
    assert _one(folder).model_id == "gpt-5.2-codex/medium"


def test_openhands_acp_claude_code_refusal_read_as_claude_code_reads_it(tmp_path: Path) -> None:
    """Bug: Claude Code's refusal of a call (``<tool_use_error>``) kept its tags in the step's error: its results
    are now read by ``claude_code``'s own rule."""
    events = _acp_events()
    refused = "<tool_use_error>File does not exist.</tool_use_error>"
    read = {**events[3], "id": "ee000000-0000-4000-8000-000000000001", "tool_call_id": "toolu_0R",
            "title": "Read missing.py", "status": "failed", "is_error": True,
            "raw_input": {"file_path": "/workspace/project/missing.py"}, "raw_output": refused,
            "content": _shown("```\n" + refused + "\n```")}
    grep = {**events[5], "id": "ee000000-0000-4000-8000-000000000002", "tool_call_id": "toolu_0G",
            "title": "`grep -rn foo .`", "raw_input": {"command": "grep -rn foo .", "description": "Search"},
            "raw_output": "Exit code 1", "content": _shown("```console\nExit code 1\n```")}
    run = _one(_lines(tmp_path / "refused.jsonl", events[:2] + [read, grep] + events[-2:]))
    assert run.steps[0].error == "File does not exist."
    assert run.steps[1].error is None  # grep's "no match"


# Review R2X of probe 48 (fix F2OH): which way an event page runs, and which ACP calls the SDK closed.

OH_TICKS = FIXTURES / "openhands" / ".real" / "sdk" / "313131310000400080000000000000a0"


def _clock_stepped_back(events: list[dict], after: int) -> list[dict]:
    """The events with the clock stepped back an hour after the first ``after``: the SDK stamps naive local time
    (``event/base.py``: ``datetime.now().isoformat()``), so a conversation resumed under another TZ or across a
    daylight-saving fall-back is logged so."""
    from datetime import datetime, timedelta
    return events[:after] + [{**e, "timestamp": (datetime.fromisoformat(e["timestamp"]) - timedelta(hours=1))
                              .isoformat()} for e in events[after:]]


def test_openhands_event_list_whose_clock_stepped_back_is_not_reversed(tmp_path: Path) -> None:
    """Bug: a list or page of events whose first time was later than its last (the clock stepped back an hour
    mid-run) was read as newest first and reversed whole: every observation came before its call and was lost (the
    run read as three commands with no output and an unknown outcome), and the page was refused as the newest events
    of a descending search. The order is the tree's (each event's ``parent_id`` the one appended before it); without
    one, a list is newest first only if its times never rise."""
    events = [json.loads(p.read_text()) for p in sorted((OH_TICKS / "events").glob("event-*.json"))]
    expected = [(s.action, s.observation, s.error) for s in _one(OH_TICKS).steps]
    assert [o for _, o, _ in expected] == ["tick 0", "tick 1", "tick 2"]
    stepped = _clock_stepped_back(events, 5)
    assert stepped[0]["timestamp"] > stepped[-1]["timestamp"]
    listed, page, newest = tmp_path / "events.json", tmp_path / "page.json", tmp_path / "newest-first.json"
    listed.write_text(json.dumps(stepped))
    page.write_text(json.dumps({"items": stepped, "next_page_id": None}))
    newest.write_text(json.dumps({"items": stepped[::-1], "next_page_id": None}))  # TIMESTAMP_DESC: the log walked back
    for path in (listed, page, newest):
        run = _one(path)
        assert [(s.action, s.observation, s.error) for s in run.steps] == expected, path.name
        assert run.outcome is Outcome.failure and run.task == "S_MAXITER: print ticks forever."
    untreed = [{k: v for k, v in e.items() if k != "parent_id"} for e in stepped]  # an SDK before the tree
    listed.write_text(json.dumps(untreed))
    assert [(s.action, s.observation, s.error) for s in _one(listed).steps] == expected
    listed.write_text(json.dumps([{k: v for k, v in e.items() if k != "parent_id"} for e in events][::-1]))
    assert [(s.action, s.observation, s.error) for s in _one(listed).steps] == expected  # newest first, times fall


def _later(event: dict, seconds: float) -> dict:
    from datetime import datetime, timedelta
    return {**event, "timestamp": (datetime.fromisoformat(event["timestamp"]) + timedelta(seconds=seconds)).isoformat()}


def _acp_notice(text: str, at: str) -> dict:
    """The SDK's message as its turn broke (``_emit_turn_error`` / ``_emit_turn_timeout``)."""
    return {"id": "bb000000-0000-4000-8000-000000000003", "timestamp": at, "source": "agent",
            "llm_message": {"role": "assistant", "content": [{"type": "text", "text": text}], "thinking_blocks": []},
            "activated_skills": [], "extended_content": [], "kind": "MessageEvent"}


def test_openhands_acp_call_that_failed_just_before_the_turn_broke_keeps_its_error(tmp_path: Path) -> None:
    """Bug: a call gemini-cli reported failed (``acpSession.ts``: ``status: 'failed'``, the error as content, no
    ``rawOutput``) 1.2 s before the SDK's "ACP error: ..." notice (the next model call broke) read as cancelled by
    the SDK: its error lost. ``_cancel_inflight_tool_calls`` skips a call already ended and re-emits the state it
    gathered; a close written at once before the notice (output streamed as content, codex-acp's) is still one."""
    events = _acp_events()
    start = {**events[4], "id": "bb000000-0000-4000-8000-000000000001", "tool_call_id": "read_many_files-1",
             "title": "a.py", "raw_input": None, "content": None, "timestamp": "2026-12-04T10:20:02.000000"}
    failed = {**start, "id": "bb000000-0000-4000-8000-000000000002", "timestamp": "2026-12-04T10:20:03.000000",
              "status": "failed", "is_error": True, "content": _shown("Error reading files (a.py): ENOENT")}
    said = "ACP error: Internal error: [API Error: got status: 400 INVALID_ARGUMENT.]"
    run = _one(_lines(tmp_path / "failed-then-error.jsonl",
                      events[:2] + [start, failed, _acp_notice(said, "2026-12-04T10:20:04.200000")]))
    assert run.steps[-1].error == "Error reading files (a.py): ENOENT"
    assert run.outcome is Outcome.infra_error and run.failure.error == said
    ran = {"command": "pytest -q", "cwd": "/workspace/project"}
    codex = {**start, "tool_call_id": "call_7", "title": "Run pytest -q", "raw_input": ran}
    streamed = {**codex, "id": "bb000000-0000-4000-8000-000000000002", "timestamp": "2026-12-04T10:50:03.004000",
                "status": "failed", "is_error": True, "content": _shown("```sh\ncollected 214 items\n```\n")}
    run = _one(_lines(tmp_path / "streamed-then-timeout.jsonl", events[:2] + [codex, streamed, _acp_notice(
        "ACP prompt timed out after 1800s with no activity from the agent.", "2026-12-04T10:50:03.005000")]))
    assert run.steps[-1].error.startswith("cancelled: the turn broke before the call ended")
    assert run.steps[-1].observation == "```sh\ncollected 214 items\n```\n"  # the output so far


def test_openhands_acp_call_the_sdk_closed_before_a_retry_is_cancelled(tmp_path: Path) -> None:
    """Bug: a call in flight when the ACP server answered a retriable error (-32603), closed by the SDK after its
    sleep (``_cancel_inflight_tool_calls`` before the turn's next attempt; no notice follows, the next attempt's calls
    do) read as failed, its error Claude Code's description of the command ("Run the full test suite")."""
    events = _acp_events()
    ran = {"command": "python -m pytest -q tests/", "description": "Run the full test suite"}
    start = {**events[4], "id": "bb000000-0000-4000-8000-000000000001", "tool_call_id": "toolu_09Bash",
             "timestamp": "2026-12-04T10:15:02.000000"}
    cancel = {**start, "id": "bb000000-0000-4000-8000-000000000002", "timestamp": "2026-12-04T10:15:40.004000",
              "title": "`python -m pytest -q tests/`", "status": "failed", "is_error": True, "raw_input": ran,
              "content": _shown("Run the full test suite")}  # the state the SDK gathered from the silent frames
    again = [_later(e, 60) for e in events[2:]]
    run = _one(_lines(tmp_path / "retried.jsonl", events[:2] + [start, cancel] + again))
    first, *rest = run.steps
    assert first.arguments == ran and first.observation is None
    assert first.error == ("cancelled: the SDK gave the call up before it ended (its attempt of the turn was dropped, "
                           "as before a retry)")
    assert [(s.action, s.observation, s.error) for s in rest] == [
        (s.action, s.observation, s.error) for s in _one(OH_ACP).steps]
