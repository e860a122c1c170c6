"""Continue's chat sessions (``~/.continue/sessions/<sessionId>.json``, its IDE extensions' and its ``cn`` CLI's),
read from real session files users committed (tests/fixtures/continue/.continue30/README.md says where each came
from) and one built from the source's types where no real file of that version was found."""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from trajsearch.actions import ran
from trajsearch.ingest import detect
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import SideFile, read_inputs
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import newcomer, run_cli, unnoted  # noqa: F401

REAL = Path(__file__).parent / "fixtures" / "continue" / ".continue30"
AGENT = REAL / "02044b99-f94b-4df0-a981-3b26d054b6b0.json"  # agent mode, late 2025: toolCallStates
CHAT = REAL / "3dfacc9e-042b-44bd-ae17-fe4ee14e70af.json"  # chat mode, early 2025
REASONING = REAL / "reasoning-0390200c.json"
SERVER_ERA = REAL / "server-era" / "4f8252d3-12fb-45cf-85df-9fc09ff4adcc.json"  # Continue before 0.8 (2023)
SINGLE_STATE = REAL / "built" / "toolcallstate-2025-06.json"  # built: toolCallState, 2024-11 to 2025-07
CN = REAL / "cn-cli"  # the cn CLI 1.5.44 (2026-03): a session, one it saved at a launch never used, their index
CN_SESSION = CN / "e00926af-e2ae-429b-8fc2-2c4f66629d7f.json"
CN_UNUSED = CN / "8d09f851-177c-4231-9458-ef3829257a99.json"
HISTORY_FIRST = REAL / "history-first" / "137b80ac-9b85-4618-af60-f392b1ff7e53.json"  # 2024-11: history written first
CANCELED = "tool call canceled (the user rejected it or stopped the session)"  # the GUI keeps no output of one


def test_an_agent_session_is_its_calls_with_their_outputs_errors_and_the_later_prompt() -> None:
    assert detect_format(AGENT) == "continue"
    run = only(AGENT)
    assert run.trajectory_id == "continue.02044b99-f94b-4df0-a981-3b26d054b6b0"
    assert run.task.startswith("After generating the cleanup report, implement only the items categorized as")
    assert run.model_id == "GPT-5.2" and run.outcome is Outcome.unknown and run.failure is None
    assert run.metadata["mode"] == "agent" and run.metadata["model_provider"] == "openai"
    # its dateCreated in the sessions.json beside it (1771582394527 ms), not the checkout's file time
    assert run.created_at.isoformat() == "2026-02-20T10:13:14.527000+00:00" and "created_at_basis" not in run.metadata
    assert run.metadata["workspace"] == "file:///c%3A/laragon/www/hms"
    assert run.metadata["user_prompts"][0].startswith("The previous PowerShell command failed with exit code 1.")
    actions = [s.action for s in run.steps]
    assert len(actions) == 21 and actions[:4] == ["file_glob_search", "file_glob_search", "grep_search", "ls"]
    first, glob_md = run.steps[0], run.steps[1]
    assert first.arguments == {"pattern": "**/*cleanup*report*.*"}  # parsedArgs
    assert first.thought.startswith("**Considering file deletion method**")  # the thinking message before the calls
    assert glob_md.thought is None  # the reasoning belongs to the first call of the turn
    assert first.observation == "No matches found. Build, secrets, etc. dirs and files are not included."
    # a terminal command whose output item says "Command failed with exit code 1": its decisive line and the code
    assert run.steps[17].error == "An empty pipe element is not allowed. (exit code 1)"
    assert run.steps[19].error == CANCELED and run.metadata["canceled_calls"] == 1
    assert run.steps[20].action == "respond" and run.steps[20].arguments["content"].startswith("```shell")
    assert [s.error for s in run.steps[:16]] == [None] * 15 + ["D truncate() (exit code 1)"]


def test_a_session_of_one_call_per_item_reads_an_errored_call_by_its_message() -> None:
    """Continue 2024-11 to 2025-07 kept one ``toolCallState`` per item; a failed call's output is the GUI's "Tool Call
    Error" item around the tool's message (status ``errored`` since 2025-04)."""
    run = only(SINGLE_STATE)
    assert run.trajectory_id == "continue.5b0e61c2-3a3c-4f5e-9f58-0c7f2d8e1a44"
    assert run.task == "Why does the cart total ignore the discount code?"
    assert run.model_id == "Claude 3.7 Sonnet" and run.metadata["model_provider"] == "anthropic"
    assert [s.action for s in run.steps] == ["read_file", "builtin_file_glob_search", "builtin_run_terminal_command",
                                             "respond"]
    failed, found, canceled, answer = run.steps
    assert failed.error == "ENOENT: no such file or directory, open '/home/dev/shop/src/cart/totals.ts'"
    assert failed.thought == "Let me look at the totals code."
    assert found.error is None and found.observation == "src/cart/total.ts"
    assert canceled.error == CANCELED and canceled.arguments == {"command": "npm test -- cart"}
    assert answer.arguments == {"content": "The discount is applied after rounding in src/cart/total.ts; apply it "
                                           "first."}
    assert run.metadata["user_prompts"] == ["apply the fix"]


def test_a_chat_session_is_its_replies_and_a_reasoning_models_thought() -> None:
    chat = only(CHAT)
    assert chat.task == "1+1" and chat.model_id == "DeepSeek-R1-Free"
    assert [s.action for s in chat.steps] == ["respond"] * 4 and len(chat.metadata["user_prompts"]) == 3
    thought = only(REASONING)
    assert thought.trajectory_id == "continue.0390200c-5538-4880-af0b-be04a0a99f4f"  # the file's sessionId
    assert thought.created_at.isoformat() == "2025-03-31T11:11:20.923000+00:00"  # the reasoning's startAt
    assert thought.steps[0].thought.startswith("Okay, so I need to help rephrase a given text")


def test_a_session_of_continues_python_server_era_is_read() -> None:
    run = only(SERVER_ERA)
    assert run.trajectory_id == "continue.4f8252d3-12fb-45cf-85df-9fc09ff4adcc"
    assert run.task == "help me fix this" and run.created_at.isoformat().startswith("2023-10-17T02:32:34")
    assert run.metadata["title"] == 'Fixing "failed to write commit object" error'
    [answer] = run.steps
    assert answer.action == "respond" and answer.arguments["content"].startswith("This error usually happens")


def test_the_id_is_the_sessions_own_however_the_file_is_named_or_wherever_it_lies(tmp_path: Path) -> None:
    moved = tmp_path / "backup" / "old chat.json"
    moved.parent.mkdir()
    shutil.copy(AGENT, moved)
    assert only(moved).trajectory_id == only(AGENT).trajectory_id


def test_the_index_and_a_session_never_used_are_passed_over_in_a_walk_and_refused_named_alone(tmp_path: Path) -> None:
    sessions = tmp_path / "repo" / ".continue" / "sessions"
    sessions.mkdir(parents=True)
    for path in (AGENT, CHAT, REAL / "sessions.json", CN_UNUSED):
        shutil.copy(path, sessions / path.name)
    (tmp_path / "repo" / ".continue" / "dev_data").mkdir()
    (tmp_path / "repo" / ".continue" / "dev_data" / "chatInteraction.jsonl").write_text('{"modelTitle": "x"}\n')
    results = list(read_inputs([tmp_path / "repo"]))  # the hidden session folder walked, the index passed over
    assert [r.error for r in results if not r.ok] == []  # the index and the unused session passed over, no rejection
    assert sorted(r.trajectory.trajectory_id for r in results) == [
        "continue.02044b99-f94b-4df0-a981-3b26d054b6b0", "continue.3dfacc9e-042b-44bd-ae17-fe4ee14e70af"]
    with pytest.raises(SideFile, match=r"sessions\.json: no run in this file: Continue's index of its sessions "
                                       r".*~/\.continue/sessions/<sessionId>\.json"):
        detect_format(sessions / "sessions.json")
    # the cn CLI saves a session on every launch (history []): a real one, named alone, is refused as what it is
    with pytest.raises(SideFile, match=r"8d09f851-.*\.json: no run in this file: a Continue session opened and never "
                                       r"used \(history empty\)"):
        detect_format(sessions / CN_UNUSED.name)


def test_naming_continues_home_reads_its_sessions_and_passes_over_its_other_files(tmp_path: Path) -> None:
    """``trajsearch ingest ~/.continue``: its dev data, index and config (as fabien-lessirard/dotfiles committed them)
    are no dump of any format, and say so rather than fail the walk."""
    home = tmp_path / ".continue"
    shutil.copytree(CN, home / "sessions")
    own = {"dev_data/0.2.0/toolUsage.jsonl": '{"toolCallId":"c1","functionName":"Read","accepted":true}\n',
           "index/globalContext.json": '{"selectedModelsByProfileId": {}}',
           "input_history.json": '[{"type": "doc", "content": []}]',
           "package.json": '{"name": "continue-config", "version": "1.0.0"}',
           "tsconfig.json": '{"compilerOptions": {"target": "ESNext"}}'}
    for name, text in own.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    results = list(read_inputs([home]))
    assert [r.error for r in results if not r.ok] == []
    assert [r.trajectory.trajectory_id for r in results] == ["continue.e00926af-e2ae-429b-8fc2-2c4f66629d7f"]
    with pytest.raises(SideFile, match=r"toolUsage\.jsonl: no run in this file: Continue's own dev data .*, "
                                       r"no session: those are in ~/\.continue/sessions/<sessionId>\.json"):
        detect_format(home / "dev_data" / "0.2.0" / "toolUsage.jsonl")


def test_a_cut_short_file_and_a_session_never_asked_anything_are_rejected_by_name(tmp_path: Path) -> None:
    cut = tmp_path / "cut.json"
    cut.write_text(CHAT.read_text(encoding="utf-8")[:3000], encoding="utf-8")
    session = json.loads(CHAT.read_text(encoding="utf-8"))
    session["history"] = [i for i in session["history"] if i["message"]["role"] != "user"]
    empty = tmp_path / "never-asked.json"
    empty.write_text(json.dumps(session, indent=2), encoding="utf-8")
    [broken], [unasked] = list(read_inputs([cut])), list(read_inputs([empty]))
    assert not broken.ok and broken.fmt == "continue" and "malformed JSON" in broken.error
    assert broken.source == str(cut)
    assert not unasked.ok and unasked.source == str(empty)
    assert unasked.error == ("history: no user message with text (4 items): the session was opened and never asked "
                             "anything")


def test_the_cli_dry_run_then_finds_the_session_by_a_tool_error_line(newcomer, tmp_path: Path) -> None:  # noqa: F811
    code, out, err = run_cli("formats")
    assert code == 0 and "continue" in out.split(), out + err
    code, out, err = run_cli("ingest", str(AGENT), "--dry-run")
    assert code == 0 and "format continue; runs 1; rejected 0; steps 21; errors 4" in out, out + err
    code, out, err = run_cli("ingest", str(REAL / "sessions.json"), "--dry-run")  # named alone: refused, and why
    assert code != 0 and "sessions.json: no run in this file: Continue's index of its sessions" in out + err
    code, out, err = run_cli("ingest", str(REAL), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "An empty pipe element is not allowed. (exit code 1)", "-t", "acme", "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == "continue.02044b99-f94b-4df0-a981-3b26d054b6b0", out


def test_a_cli_session_reads_its_tool_results_errors_and_refusals(tmp_path: Path) -> None:
    """The ``cn`` CLI's shape (``extensions/cli/src/services/ChatHistoryService.ts``: ``addAssistantMessage`` and
    ``addToolResult``; ``stream/streamChatResponse.helpers.ts``: the contents of an errored and a refused call): one
    "Tool Result" output item a call, status ``done``, ``errored`` or ``canceled``. Built from that source for the
    refusal its policy words: the committed CLI sessions found hold no canceled call (see the real one below)."""
    def call(cid: str, name: str, args: dict, status: str, result: str) -> dict:
        return {"toolCallId": cid, "status": status, "parsedArgs": args,
                "toolCall": {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}},
                "output": [{"content": result, "name": "Tool Result", "description": "Tool execution result"}]}
    history = [
        {"message": {"role": "user", "content": "make the build pass"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "Reading the config first."}, "contextItems": [],
         "toolCallStates": [
             call("c1", "Read", {"filepath": "tsconfig.json"}, "errored",
                  "Error executing tool Read: File tsconfig.json does not exist"),
             call("c2", "Bash", {"command": "rm -rf dist"}, "canceled", "Command blocked by security policy")]},
        {"message": {"role": "assistant", "content": "There is no tsconfig.json to fix."}, "contextItems": []},
    ]
    session = tmp_path / "cli.json"
    session.write_text(json.dumps({"sessionId": "8e3f8f4c-0b3b-4a59-9f3e-2d1c6a0f7b55", "title": "Untitled Session",
                                   "workspaceDirectory": "/home/dev/app", "history": history,
                                   "usage": {"totalCost": 0.0123, "promptTokens": 900, "completionTokens": 40}}))
    run = only(session)
    priced = json.loads(session.read_text())
    priced["usage"]["totalCost"] = "lots"  # not a number: no cost
    session.write_text(json.dumps(priced))
    assert "cost_usd" not in only(session).metadata
    read, bash, answer = run.steps
    assert read.error == "Error executing tool Read: File tsconfig.json does not exist"
    assert read.thought == "Reading the config first." and read.arguments == {"filepath": "tsconfig.json"}
    assert bash.error == "not run: tool call canceled: Command blocked by security policy" and not ran(bash)
    assert answer.action == "respond" and run.metadata["canceled_calls"] == 1
    assert run.metadata["cost_usd"] == 0.0123 and run.model_id is None


def _canceled_calls(tmp_path: Path) -> Path:
    """A session of three canceled calls: one the GUI's user skipped, one the CLI's user denied, one bare."""
    rejected = {"name": "Tool Call Rejected", "description": "User skipped the tool call", "hidden": True,
                "content": "The user skipped the tool call."}
    def call(cid: str, output: list[dict]) -> dict:
        return {"toolCallId": cid, "status": "canceled", "parsedArgs": {"command": "make"}, "output": output,
                "toolCall": {"id": cid, "function": {"name": "run_terminal_command", "arguments": "{}"}}}
    history = [{"message": {"role": "user", "content": "build it"}, "contextItems": []},
               {"message": {"role": "assistant", "content": ""}, "contextItems": [], "toolCallStates": [
                   call("a", [rejected]), call("b", [{"name": "Tool Result", "content": "Permission denied by user"}]),
                   call("c", [])]}]
    session = tmp_path / "s.json"
    session.write_text(json.dumps({"sessionId": "0b7c1f7e-58a1-4c53-9d63-2f4f1c3e9a10", "title": "Build",
                                   "workspaceDirectory": "/home/dev/app", "history": history}))
    return session


def test_a_canceled_call_is_not_run_only_when_the_file_says_it_never_started(tmp_path: Path) -> None:
    """``canceled`` (``core/index.d.ts``): the CLI's refusal and the GUI's "Tool Call Rejected" item for a pending call
    the user skipped (``gui/src/redux/thunks/cancelToolCall.ts``) mean it never ran; a bare one may be a terminal
    command the user stopped mid-run (``LumpToolbar.tsx``): still an error, and a call that ran."""
    skipped, denied, stopped = only(_canceled_calls(tmp_path)).steps
    assert skipped.error == "not run: tool call canceled: the user skipped it" and not ran(skipped)
    assert denied.error == "not run: tool call canceled: Permission denied by user" and not ran(denied)
    assert stopped.error == CANCELED and ran(stopped)


def test_a_bare_canceled_call_of_a_tool_cancelable_only_while_pending_never_ran(tmp_path: Path) -> None:
    """Only a running terminal command (``LumpToolbar.tsx``) and an applied edit (``AcceptRejectDiffButtons.tsx``)
    are canceled after they start; a ``read_file`` canceled with no output was pending (a new message sent,
    ``Chat.tsx``), so it never ran. An edit of 2025's first half keeps its ``builtin_`` name and may have run."""
    def call(cid: str, tool: str) -> dict:
        return {"toolCallId": cid, "status": "canceled", "parsedArgs": {"filepath": "a.py"}, "output": [],
                "toolCall": {"id": cid, "function": {"name": tool, "arguments": "{}"}}}
    history = [{"message": {"role": "user", "content": "look"}, "contextItems": []},
               {"message": {"role": "assistant", "content": ""}, "contextItems": [], "toolCallStates": [
                   call("a", "read_file"), call("b", "builtin_edit_existing_file"), call("c", "multi_edit")]}]
    session = tmp_path / "s.json"
    session.write_text(json.dumps({"sessionId": "5d0e2b7a-1f3c-4e8a-9b6d-7c2a1e4f8b90", "title": "Look",
                                   "workspaceDirectory": "/home/dev/app", "history": history}))
    pending, edit, multi = only(session).steps
    assert pending.error == "not run: tool call canceled before it ran (the user skipped it or moved on)"
    assert not ran(pending)
    assert edit.error == multi.error == CANCELED and ran(edit) and ran(multi)


def test_a_dry_run_tells_calls_not_run_apart_from_failed_steps(tmp_path: Path) -> None:
    """A dry run said "errors 3" for two refused calls and one that may have run: a user read three failures."""
    session = _canceled_calls(tmp_path)
    code, out, err = run_cli("ingest", str(session), "-t", "acme", "--dry-run", "--json")
    assert code == 0, out + err
    said = json.loads(out)["files"][0]
    assert said["step_errors"] == 1 and said["steps_not_run"] == 2, said
    code, out, err = run_cli("ingest", str(session), "-t", "acme", "--dry-run")
    assert code == 0 and "errors 1, 2 not run;" in " ".join(out.split()), out + err


def test_a_real_cli_session_reads_its_errored_and_unfinished_calls_and_its_indexed_start() -> None:
    """fabien-lessirard/dotfiles committed the cn CLI's sessions (1.5.44, ``editorState`` beside each prompt)."""
    run = only(CN_SESSION)
    assert run.trajectory_id == "continue.e00926af-e2ae-429b-8fc2-2c4f66629d7f" and run.task == "analyze my project"
    assert run.model_id is None  # the CLI keeps no model in its sessions
    assert run.metadata["cost_usd"] == 2.881939 and "canceled_calls" not in run.metadata
    assert run.created_at.isoformat() == "2026-03-02T15:19:40.580000+00:00"  # sessions.json's dateCreated
    assert [s.action for s in run.steps] == ["Bash", "Bash", "respond", "Read", "MultiEdit", "MultiEdit", "Read",
                                             "MultiEdit", "respond", "Bash", "respond"]
    assert run.steps[4].error.startswith("Edit at index 0: string not found in file:")  # status errored
    assert run.steps[4].observation.startswith("Edit at index 0: string not found in file:")
    assert run.steps[9].error == "tool call never finished (status calling when the session was saved)"
    assert run.steps[9].arguments["command"].startswith("firebase deploy")
    assert [i for i, s in enumerate(run.steps) if s.error] == [4, 9]


def test_a_session_written_history_first_is_detected_past_the_size_parsed_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before 2024-11 (36fc4a5da0) Continue saved ``JSON.stringify(session)``, ``history`` first: past the size
    detection parses whole, its opening still names it."""
    monkeypatch.setattr(detect, "WHOLE_PARSE_BYTES", 1024)  # stands for a session of over 64 MiB
    assert detect_format(HISTORY_FIRST) == "continue"
    assert only(HISTORY_FIRST).task == "python code for hello world"


def test_an_index_changed_alone_is_read_again_by_the_next_ingest(newcomer, tmp_path: Path) -> None:  # noqa: F811
    """A session's start is its entry's ``dateCreated`` in ``sessions.json`` beside it: the index changed (Continue
    rewrites it; one copied in after the sessions) re-reads the sessions on the next ingest of the folder, which
    the checkpoint skipped as done while the session files stayed the same (``read_with_value``, round 30's re-read)."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for path in (AGENT, CHAT, REAL / "sessions.json"):
        shutil.copy(path, sessions / path.name)
    run_id = "continue.02044b99-f94b-4df0-a981-3b26d054b6b0"

    def started() -> str:
        code, out, err = run_cli("ingest", str(sessions), "-t", "acme")
        assert code == 0, out + err
        code, out, err = run_cli("show", run_id, "-t", "acme", "--json")
        assert code == 0, out + err
        return json.loads(out)["created_at"]

    assert started().startswith("2026-02-20T10:13:14.527")
    index = json.loads((sessions / "sessions.json").read_text())
    for entry in index:
        if entry["sessionId"] == run_id.removeprefix("continue."):
            entry["dateCreated"] = "1771500000000"
    (sessions / "sessions.json").write_text(json.dumps(index, indent=2))
    assert started().startswith("2026-02-19T11:20:00")


def test_an_index_changed_for_another_session_reads_none_again(newcomer, tmp_path: Path) -> None:  # noqa: F811
    """Continue rewrites ``sessions.json`` on every save: an entry added for a new session changes none of the
    others' starts, so the next ingest reads only what changed, not every session beside the index (round 31 fix:
    the whole index was what the checkpoint compared, and each new session re-read them all)."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    for path in (AGENT, CHAT, REAL / "sessions.json"):
        shutil.copy(path, sessions / path.name)
    code, out, err = run_cli("ingest", str(sessions), "-t", "acme")
    assert code == 0 and "ingested 2 runs" in out + err, out + err
    index = json.loads((sessions / "sessions.json").read_text())
    index.append({**index[0], "sessionId": "8d09f851-177c-4231-9458-ef3829257a99", "dateCreated": "1771519371109"})
    (sessions / "sessions.json").write_text(json.dumps(index, indent=2))
    code, out, err = run_cli("ingest", str(sessions), "-t", "acme")
    said = " ".join((out + err).split())
    assert code == 0 and "read 0:" in said and "2 input(s) already done per the checkpoint" in said, said


def test_a_renamed_session_is_timed_as_the_checkpoint_sees_it_not_by_an_index_entry_it_does_not_watch(
        newcomer, tmp_path: Path) -> None:  # noqa: F811
    """RT1 finding 3: the checkpoint sees a session file's name, not its record, so the index entry a run is timed by
    is the one its name (Continue's ``<sessionId>.json``) finds; a renamed copy is timed by its own reasoning, index
    beside it or not, and an index added later leaves the stored run what a fresh read gives (it was skipped as done
    while a fresh read took the new entry's date)."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    copy = sessions / REASONING.name
    shutil.copy(REASONING, copy)
    code, out, err = run_cli("ingest", str(sessions), "-t", "acme")
    assert code == 0 and "ingested 1 runs" in out + err, out + err
    alone = only(copy).created_at
    (sessions / "sessions.json").write_text(json.dumps([{
        "sessionId": "0390200c-5538-4880-af0b-be04a0a99f4f", "title": "t", "dateCreated": "1771500000000",
        "workspaceDirectory": ""}]))
    run_cli("ingest", str(sessions), "-t", "acme")
    code, out, err = run_cli("show", "continue.0390200c-5538-4880-af0b-be04a0a99f4f", "-t", "acme", "--json")
    stored = datetime.fromisoformat(json.loads(out)["created_at"])
    assert code == 0 and stored == only(copy).created_at == alone


COMPACTED = Path(__file__).parent / "fixtures" / "continue" / ".aud33" / "5b0e7c1a-3f2d-4e8a-9c41-7d2e1f0a6b93.json"


def test_a_cli_session_compacted_mid_turn_keeps_its_calls_its_summary_standing_for_the_lost_prompt() -> None:
    """The cn CLI's compaction replaces the history with its summary item (``compaction.ts``): an automatic one
    mid-turn leaves no user message. Refused on main as "never asked anything"; the summary is no reply step."""
    run = only(COMPACTED)
    assert run.trajectory_id == "continue.5b0e7c1a-3f2d-4e8a-9c41-7d2e1f0a6b93"
    assert run.task.startswith("## Conversation summary\n\nThe user asked to analyze their project")
    assert run.metadata["compacted"] is True
    assert [s.action for s in run.steps] == ["Read", "MultiEdit", "MultiEdit", "Read", "MultiEdit", "respond"]
    assert run.steps[1].error.startswith("Edit at index 0: string not found in file:")


def test_a_prompt_after_the_cli_s_compaction_is_the_task_and_the_summary_no_step(tmp_path: Path) -> None:
    session = json.loads(COMPACTED.read_text())
    session["history"].insert(1, {"message": {"role": "user", "content": "continue with the roles column"},
                                  "contextItems": [], "editorState": "continue with the roles column"})
    (path := tmp_path / COMPACTED.name).write_text(json.dumps(session))
    run = only(path)
    assert run.task == "continue with the roles column" and run.metadata["compacted"] is True
    assert run.steps[0].action == "Read" and "Conversation summary" not in (run.steps[0].thought or "")
    # the summary is all that is left of the session before the compaction: kept, not lost (review AUDED33 nit 3)
    assert run.metadata["compaction_summary"].startswith("## Conversation summary\n\nThe user asked to analyze")


def test_the_cli_s_own_continue_after_an_automatic_compaction_is_no_prompt(tmp_path: Path) -> None:
    """Once a turn it compacted ends, the cn CLI adds the user message ``continue`` itself and runs on
    (``stream/streamChatResponse.ts`` ``handleAutoContinuation``): so a finished auto-compacted session was read with
    the task "continue"; the summary, which holds the real task, stays it."""
    session = json.loads(COMPACTED.read_text())
    session["history"] += [{"message": {"role": "user", "content": "continue"}, "contextItems": []},
                           {"message": {"role": "assistant", "content": "The roles column is in place."},
                            "contextItems": []}]
    (path := tmp_path / COMPACTED.name).write_text(json.dumps(session))
    run = only(path)
    assert run.task.startswith("## Conversation summary\n\nThe user asked to analyze their project")
    assert run.metadata.get("user_prompts") is None and "compaction_summary" not in run.metadata
    assert [s.action for s in run.steps][-2:] == ["respond", "respond"]


def test_a_summary_that_is_not_the_cli_s_compaction_item_is_named_in_the_refusal(tmp_path: Path) -> None:
    session = json.loads(COMPACTED.read_text())
    session["history"][0]["conversationSummary"] = {"text": "not the message's"}
    (path := tmp_path / COMPACTED.name).write_text(json.dumps(session))
    [result] = list(read_inputs([path]))
    assert not result.ok and result.error == (
        "history: no user message with text (7 items): an item's conversationSummary is no cn CLI compaction (an "
        "assistant message of the same text) to stand for the task")
