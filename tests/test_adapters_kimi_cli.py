"""Kimi Code CLI sessions (MoonshotAI/kimi-cli): a session's context file, its model context as JSON lines. Fixtures:
tests/fixtures/kimi-cli/.newfmt2-30 (real files Kimi wrote, trimmed; README.md there says where from)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.actions import INTERRUPTED, NOT_RUN
from trajsearch.ingest.adapters._agent_cli import NEVER_ANSWERED
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 - the fixture

KIMI = Path(__file__).parent / "fixtures" / "kimi-cli" / ".newfmt2-30"
SESSION = "d8447fa8-9d8e-41af-9fc6-a12e4a196b6c"
MAIN, SUB = KIMI / f"{SESSION}.jsonl", KIMI / f"{SESSION}_read_1.jsonl"
NEW_ID = "0f2c9a4e-1b7d-4c8e-9a35-6d2e8f1b7c40"


def _runs(*paths: Path) -> dict:
    results = list(read_inputs(list(paths)))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def test_a_context_file_is_a_run_of_its_tool_calls_with_the_commands_that_failed() -> None:
    runs = _runs(MAIN, SUB)
    run = runs[f"kimi-cli.{SESSION}"]
    assert run.task.startswith("You will be provided with a partial code base and an issue statement")
    assert len(run.steps) == 47 and run.outcome is Outcome.unknown and run.model_id is None
    assert run.metadata["session_id"] == SESSION and run.metadata["context_tokens"] == 36444
    assert [s.action for s in run.steps[:2]] == ["ReadContext", "Bash"]
    assert run.steps[1].arguments == {"command": "cd /testbed && find . -name \"_column_transformer.py\" -type f"}
    failed = {s.index: s.error for s in run.steps if s.error}
    assert failed == {23: "ERROR: not found: /testbed/sklearn/compose/tests/test_column_transformer.py::"
                          "test_column_transformer_mixed_types (exit code 4)",
                      37: "E NameError: name 'VarianceThreshold' is not defined (exit code 1)"}
    # grep's exit code 1 with no output answers "no": Kimi wrote it as a failure, the step did not fail
    grep = run.steps[4]
    assert grep.arguments["command"].startswith("cd /testbed && grep -n") and grep.error is None
    assert grep.observation == "<system>Command failed with exit code: 1.</system>"
    assert run.steps[-1].action == "respond"
    sub = runs[f"kimi-cli.{SESSION}.read_1"]
    assert sub.metadata["is_subagent"] is True and sub.metadata["parent_session_id"] == SESSION
    assert sub.task.startswith("You are assisting the main agent by gathering project context.")
    # Kimi before 2025-10-30 wrote a file tool's failure as its bare message, no ERROR: (real line 92)
    assert len(sub.steps) == 20
    assert {s.index: s.error for s in sub.steps if s.error} == {17: "`/testbed` is not a file."}


def _line(**record) -> str:
    return json.dumps(record)


def _session_folder(home: Path) -> Path:
    """A session as Kimi 1.x keeps it (``soul/context.py``, ``subagents/store.py``): a folder named by its id."""
    folder = home / ".kimi" / "sessions" / "5d41402abc4b2a76b9719d911017c592" / NEW_ID
    (folder / "subagents" / "a1").mkdir(parents=True)
    call = {"type": "function", "id": "tool_1", "function": {"name": "ReadFile", "arguments": '{"path": "app.py"}'}}
    (folder / "context.jsonl").write_text("\n".join([
        _line(role="_system_prompt", content="You are Kimi Code CLI"),
        _line(role="_checkpoint", id=0),
        _line(role="user", content=[{"type": "text", "text": "fix the crash in app.py"}]),
        _line(role="_usage", token_count=1200),
        _line(role="assistant", content=[{"type": "think", "think": "read it first", "encrypted": None},
                                         {"type": "text", "text": "Reading app.py."}], tool_calls=[call]),
        _line(role="tool", tool_call_id="tool_1", content=[
            {"type": "text", "text": "<system>ERROR: `app.py` does not exist.</system>"}]),
        _line(role="user", content=[{"type": "text", "text": "<system>CHECKPOINT 1</system>"}]),
        _line(role="user", content="it is in src/"),
        _line(role="assistant", content=[{"type": "text", "text": "Found it in src/app.py."}]),
    ]) + "\n")
    (folder / "wire.jsonl").write_text(_line(type="metadata", protocol_version="1.3") + "\n")
    (folder / "state.json").write_text("{}")
    (folder / "subagents" / "a1" / "context.jsonl").write_text("\n".join([
        _line(role="_checkpoint", id=0), _line(role="user", content="look for tests"),
        _line(role="assistant", content="None found.")]) + "\n")
    return folder


def test_a_home_walk_reads_a_session_folder_its_sub_agent_and_passes_its_other_files_over(tmp_path: Path) -> None:
    _session_folder(tmp_path)
    runs = _runs(tmp_path)
    assert set(runs) == {f"kimi-cli.{NEW_ID}", f"kimi-cli.{NEW_ID}.a1"}
    run = runs[f"kimi-cli.{NEW_ID}"]
    assert run.task == "fix the crash in app.py" and run.metadata["user_prompts"] == ["it is in src/"]
    read, answer = run.steps
    assert read.action == "ReadFile" and read.arguments == {"path": "app.py"}
    assert read.thought == "read it first\n\nReading app.py." and read.error == "`app.py` does not exist."
    assert answer.action == "respond" and answer.arguments == {"content": "Found it in src/app.py."}
    assert runs[f"kimi-cli.{NEW_ID}.a1"].metadata["parent_session_id"] == NEW_ID
    # a copy keeping the session's folder is the same run
    copy = tmp_path / "backup" / NEW_ID
    shutil.copytree(tmp_path / ".kimi" / "sessions" / "5d41402abc4b2a76b9719d911017c592" / NEW_ID, copy)
    assert set(_runs(copy / "context.jsonl")) == {f"kimi-cli.{NEW_ID}"}


def test_a_bad_context_file_is_refused_naming_the_file_and_the_line(newcomer, tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text(_line(role="_checkpoint", id=0) + "\n" + _line(role="system", content="x") + "\n")
    empty = tmp_path / f"{NEW_ID}.jsonl"
    empty.write_text(_line(role="_checkpoint", id=0) + "\n" + _line(role="_usage", token_count=3) + "\n")
    code, out, err = run_cli("ingest", str(odd), str(empty), "--dry-run")
    said = " ".join((out + err).split())
    assert f"{odd}: format kimi-cli; runs 0; rejected 1" in said, said
    assert "a message of role 'system'; a Kimi CLI context line is a message of role assistant, tool, user" in said
    assert f"{empty}: format kimi-cli; runs 0; rejected 1" in said and "no user prompt" in said, said
    wire = _session_folder(tmp_path / "home") / "wire.jsonl"
    code, out, err = run_cli("ingest", str(wire), "--dry-run")
    assert "the run is the context.jsonl beside it" in " ".join((out + err).split()), out + err


def test_the_cli_reads_the_sessions_and_finds_a_run_by_its_tool_error(newcomer) -> None:
    code, out, err = run_cli("ingest", str(KIMI), "--dry-run")
    said = out + err
    assert code == 0 and f"{MAIN}: format kimi-cli; runs 1; rejected 0; steps 47; errors 2" in said, said
    assert run_cli("ingest", str(KIMI))[0] == 0
    code, out, err = run_cli("search", "NameError: name 'VarianceThreshold' is not defined", "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], err
    assert json.loads(out)[0]["trajectory_id"] == f"kimi-cli.{SESSION}"
    code, out, _ = run_cli("formats", "--json")
    [kimi] = [f for f in json.loads(out) if f["format"] == "kimi-cli"]
    assert "Kimi" in kimi["description"], kimi


def _write(path: Path, *records: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(_line(**record) + "\n" for record in records))
    return path


def test_a_2025_file_rotated_by_clear_is_its_session_s_not_a_sub_agent(tmp_path: Path) -> None:
    """2025 Kimi rotated ``<id>.jsonl`` to ``<id>_<n>.jsonl`` (``utils/path.next_available_rotation``), the same
    helper naming sub-agents ``<id>_sub_<n>``: a number alone is a rotation, named as the 2026 layout's."""
    records = ({"role": "_checkpoint", "id": 0}, {"role": "user", "content": "fix the build"})
    rotated = _write(tmp_path / f"{NEW_ID}_1.jsonl", *records)
    sub = _write(tmp_path / f"{NEW_ID}_sub_1.jsonl", *records)
    runs = _runs(rotated, sub)
    assert set(runs) == {f"kimi-cli.{NEW_ID}.context_1", f"kimi-cli.{NEW_ID}.sub_1"}
    old = runs[f"kimi-cli.{NEW_ID}.context_1"].metadata
    assert old["session_id"] == NEW_ID and not old.get("is_subagent") and not old.get("parent_session_id")
    assert runs[f"kimi-cli.{NEW_ID}.sub_1"].metadata["parent_session_id"] == NEW_ID


def test_a_compacted_context_s_task_is_its_summary_and_kimi_s_own_notes_are_no_prompts(tmp_path: Path) -> None:
    """Compaction rotates context.jsonl and opens the new one with its summary as a user message; D-Mail, /init
    and background-task notes are user messages Kimi writes too, each opening with ``<system>``."""
    folder = tmp_path / "sessions" / "5d41" / NEW_ID
    _write(folder / "context.jsonl",
           {"role": "_system_prompt", "content": "You are Kimi Code CLI"}, {"role": "_checkpoint", "id": 0},
           {"role": "user", "content": [
               {"type": "text", "text": "<system>Previous context has been compacted. Here is the compaction "
                                        "output:</system>"},
               {"type": "text", "text": "The user asked to port the parser to Rust; two modules are done."}]},
           {"role": "user", "content": [{"type": "text", "text": "<system>You just got a D-Mail from your future "
                                                                 "self.</system>"}]},
           {"role": "user", "content": "now the lexer"},
           {"role": "assistant", "content": "Done."})
    [run] = _runs(folder / "context.jsonl").values()
    assert run.task.startswith("(continued after compaction) The user asked to port the parser to Rust"), run.task
    assert run.metadata["compacted"] is True and run.metadata["user_prompts"] == ["now the lexer"]


def test_a_session_named_by_its_user_keeps_its_layout_s_ids(tmp_path: Path) -> None:
    """``kimi --session my-task`` names the session's folder as given: the files beside tell the layout."""
    folder = tmp_path / ".kimi" / "sessions" / "5d41" / "my-task"
    records = ({"role": "_checkpoint", "id": 0}, {"role": "user", "content": "fix the build"})
    _write(folder / "context.jsonl", *records)
    _write(folder / "wire.jsonl", {"type": "metadata", "protocol_version": "1.3"})
    _write(folder / "subagents" / "a1b2c3d4" / "context.jsonl", *records)
    runs = _runs(tmp_path)
    assert set(runs) == {"kimi-cli.my-task", "kimi-cli.my-task.a1b2c3d4"}
    assert runs["kimi-cli.my-task"].metadata["session_id"] == "my-task"
    assert runs["kimi-cli.my-task.a1b2c3d4"].metadata["parent_session_id"] == "my-task"


def test_a_record_kimi_adds_later_is_passed_over_as_its_own(tmp_path: Path) -> None:
    """Kimi's ``Session.is_empty`` takes every role opening with ``_`` for its own record: a new one is no
    message, even the first line."""
    path = _write(tmp_path / f"{NEW_ID}.jsonl", {"role": "_title", "content": "Build fix"},
                  {"role": "_checkpoint", "id": 0}, {"role": "user", "content": "fix the build"},
                  {"role": "_plan", "id": 3}, {"role": "assistant", "content": "Fixed."})
    [run] = _runs(path).values()
    assert run.task == "fix the build" and [s.action for s in run.steps] == ["respond"]


KIMI_CODE = Path(__file__).parent / "fixtures" / "kimi-cli" / ".aud33" / ".kimi-code" / "sessions" / "wd_work_1a2b"
#: Sessions Kimi Code imported from the Python CLI, as its migration wrote them (.fixaud33/README.md)
IMPORTED = Path(__file__).parent / "fixtures" / "kimi-cli" / ".fixaud33" / ".kimi-code" / "sessions" \
    / "wd_proj_33c5ea5aa7eb"
TYPED = {"type": "turn.prompt", "input": [{"type": "text", "text": "list the tests"}], "origin": {"kind": "user"}}


def _events(*events: dict) -> list[dict]:
    """Kimi Code loop events (``loop/events.ts``) as its wire log records them."""
    return [{"type": "context.append_loop_event", "event": e} for e in events]


def _append(wire: Path, *records: dict) -> None:
    """``records`` appended to a Kimi Code wire log, a second apart (``time``: Unix ms)."""
    with wire.open("a", encoding="utf-8") as out:
        for at, record in enumerate(records):
            out.write(json.dumps({**record, "time": 1779256810000 + at * 1000}) + "\n")


def test_a_kimi_code_agent_s_wire_log_is_a_run_with_its_tool_calls_and_failures(tmp_path: Path) -> None:
    """Kimi Code (the TypeScript rewrite, MoonshotAI/kimi-code) keeps no context file: each agent's wire.jsonl is
    its run (.aud33: the project's own session fixtures, README.md there)."""
    session = tmp_path / "sample-main"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    wire = session / "agents" / "main" / "wire.jsonl"
    reminder = {**TYPED, "input": [{"type": "text", "text": "a background task finished"}],
                "origin": {"kind": "system_trigger", "name": "bg"}}
    steer = {**TYPED, "type": "turn.steer", "input": [{"type": "text", "text": "and the docs"}]}
    events = [{"type": "content.part", "part": {"type": "think", "think": "look first"}},
              {"type": "content.part", "part": {"type": "text", "text": "Listing them."}},
              {"type": "tool.call", "toolCallId": "Bash:1", "name": "Bash", "args": {"command": "ls tests"}},
              {"type": "tool.result", "toolCallId": "Bash:1",
               "result": {"output": "ls: tests: No such file or directory\nCommand failed with exit code: 1.",
                          "isError": True}},
              {"type": "tool.call", "toolCallId": "Bash:2", "name": "Bash", "args": {"command": "grep -r TODO ."}},
              {"type": "tool.result", "toolCallId": "Bash:2",
               "result": {"output": "Process exited with code 1\nCommand failed with exit code: 1.", "isError": True}},
              {"type": "tool.call", "toolCallId": "Read:2", "name": "Read", "args": {"path": "README.md"}},
              {"type": "tool.result", "toolCallId": "Read:2",
               "result": {"output": [{"type": "text", "text": "# sample"}]}}]
    _append(wire, TYPED, reminder, steer, *_events(*events))
    results = {r.trajectory.trajectory_id if r.ok else r.source: r for r in read_inputs([session])}
    run = results["kimi-cli.sample-main"].trajectory
    assert run.task == "hi" and run.metadata["user_prompts"] == ["list the tests", "and the docs"]
    assert run.model_id == "kimi-k2"
    assert run.created_at.isoformat() == "2026-05-20T05:59:51.085000+00:00" and run.outcome is Outcome.unknown
    assert [(s.action, s.error) for s in run.steps] == [
        ("respond", None), ("Bash", "ls: tests: No such file or directory (exit code 1)"), ("Bash", None),
        ("Read", None)]  # grep's 1 with no output answers "no"
    bash, read = run.steps[1], run.steps[3]
    assert bash.thought == "look first\n\nListing them." and bash.arguments == {"command": "ls tests"}
    assert bash.started_at.isoformat() == "2026-05-20T06:00:15+00:00" and read.observation == "# sample"
    # the sub-agent only set up (its head and config.update) holds no run and nothing wrong: passed over
    assert set(results) == {"kimi-cli.sample-main"}


def test_a_kimi_code_log_keeps_its_turns_before_a_compaction_and_one_opening_on_it_takes_its_summary(
        tmp_path: Path) -> None:
    """Kimi Code's log is never rotated: the turns before a compaction stay in it, so the task stays the first prompt
    (the vis app's hand-made fixture, messages with no turn, read as imported ones); a log opening on a compaction
    (a shape Kimi Code is not seen to write) takes its summary as the task, as a compacted Python context file does."""
    [kept] = read_inputs([KIMI_CODE / "sample-compaction" / "agents" / "main" / "wire.jsonl"])
    assert kept.ok, kept.error
    assert kept.trajectory.trajectory_id == "kimi-cli.sample-compaction"
    assert kept.trajectory.task == "before compaction"
    assert kept.trajectory.metadata["user_prompts"] == ["after compaction"]
    assert [s.arguments for s in kept.trajectory.steps] == [{"content": "assistant reply"}]
    wire = tmp_path / "s1" / "agents" / "main" / "wire.jsonl"
    wire.parent.mkdir(parents=True)
    wire.write_text('{"type":"metadata","protocol_version":"1.4","created_at":1779256791085}\n', encoding="utf-8")
    _append(wire, {"type": "context.apply_compaction", "summary": "compacted summary"}, {
        **TYPED, "input": [{"type": "text", "text": "after compaction"}]})
    [opened] = read_inputs([wire])
    assert opened.trajectory.task == "(continued after compaction) compacted summary"
    assert opened.trajectory.metadata["user_prompts"] == ["after compaction"]


def test_a_session_kimi_code_imported_from_the_python_cli_is_its_run_and_keeps_it_when_resumed(tmp_path: Path) -> None:
    """Kimi Code's first launch imports the Python CLI's sessions as wire logs of messages alone, no turn
    (.fixaud33: two of its migration's own outputs): each is the imported session's run, not a log "never asked
    anything"; resumed, the imported turns stay its first ones."""
    runs = _runs(IMPORTED.parent.parent)  # a walk of the home: the state.json files passed over
    assert set(runs) == {"kimi-cli.ses_with-tool-calls", "kimi-cli.ses_recent-protocol-1.10"}
    hook = runs["kimi-cli.ses_with-tool-calls"]
    assert hook.task == "run echo hi" and "user_prompts" not in hook.metadata  # the reminder is Kimi's own
    assert hook.metadata["imported_from_session_id"] == "with-tool-calls"
    assert [(s.action, s.arguments, s.error) for s in hook.steps] == [
        ("Shell", {"command": "echo hi"}, f"{NOT_RUN}blocked by a hook: Shell blocked by hook")]
    recent = runs["kimi-cli.ses_recent-protocol-1.10"]
    assert recent.task == "hi" and recent.metadata["user_prompts"] == ["探索这个项目"]
    assert recent.steps[0].arguments == {"content": "Hello! How can I help you today?"}
    assert recent.steps[0].thought.startswith('The user said "hi".')
    # the two calls the Python file left unanswered: the import's placeholder result is no answer
    assert [(s.action, s.error) for s in recent.steps[1:]] == [
        ("Shell", None), ("Shell", NEVER_ANSWERED), ("Shell", NEVER_ANSWERED)]
    assert "./AGENTS.md" in recent.steps[1].observation
    resumed = tmp_path / "ses_with-tool-calls"
    shutil.copytree(IMPORTED / "ses_with-tool-calls", resumed)
    wire = resumed / "agents" / "main" / "wire.jsonl"
    commit = {"type": "tool.call", "toolCallId": "Bash_0", "name": "Bash", "args": {"command": "git commit -am x"}}
    _append(wire, {**TYPED, "input": [{"type": "text", "text": "now commit it"}]},
            {"type": "context.append_message", "message": {
                "role": "user", "content": [{"type": "text", "text": "now commit it"}], "toolCalls": [],
                "origin": {"kind": "user"}}},
            *_events(commit, {"type": "tool.result", "toolCallId": "Bash_0", "result": {"output": "[main 1a2b] x"}}))
    run = _runs(resumed)["kimi-cli.ses_with-tool-calls"]
    assert run.task == "run echo hi" and run.metadata["user_prompts"] == ["now commit it"]
    assert [s.action for s in run.steps] == ["Shell", "Bash"]


def test_a_kimi_code_call_the_user_rejected_is_not_run_and_one_stopped_is_interrupted(tmp_path: Path) -> None:
    """Kimi Code writes a call the user rejected (or a rule denied) and one the user stopped as failed results,
    in its own words (``agent/permission``, ``loop/tool-call.ts``): the call did not run, or was interrupted,
    rather than failing by itself."""
    session = tmp_path / "s2"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    rejected = ('Tool "Bash" was not run because the user rejected the approval request. Do not re-attempt the exact '
                "same call \u2014 think about why it was rejected, then adjust your approach or ask the user what "
                "they would prefer.")
    stopped = ('The user manually interrupted "Bash" (and anything else running at the same time). This was a '
               "deliberate user action, not a system error, timeout, or capacity limit. Do not retry automatically "
               "or guess at the cause \u2014 wait for the user's next instruction.")
    calls = [("c1", "rm -rf build", rejected), ("c2", "sleep 100", stopped),
             ("c3", "git push", 'Tool "Bash" was denied by permission rule. Pushing is not allowed here.')]
    _append(session / "agents" / "main" / "wire.jsonl", TYPED, *_events(*(e for call, command, said in calls for e in (
        {"type": "tool.call", "toolCallId": call, "name": "Bash", "args": {"command": command}},
        {"type": "tool.result", "toolCallId": call, "result": {"output": said, "isError": True}}))))
    run = _runs(session / "agents" / "main" / "wire.jsonl")["kimi-cli.s2"]
    assert [s.error for s in run.steps[1:]] == [
        f'{NOT_RUN}Tool "Bash" was not run because the user rejected the approval request.', INTERRUPTED,
        f'{NOT_RUN}Tool "Bash" was denied by permission rule.']


def test_a_kimi_code_sub_agent_is_its_own_run_under_its_session_and_task_files_are_no_runs(tmp_path: Path) -> None:
    """A sub-agent's log (``agents/agent-n``) is a run of its own naming its session; the background tasks' and cron
    jobs' files Kimi Code keeps in a session's and an agent's folder (``tasks/<id>.json``, ``cron/<id>.json``) hold no
    run: a walk of the home passes them over rather than refusing them as unrecognised."""
    session = tmp_path / ".kimi-code" / "sessions" / "wd_work_1a2b" / "sample-main"
    shutil.copytree(KIMI_CODE / "sample-main", session)
    _append(session / "agents" / "agent-0" / "wire.jsonl", {
        **TYPED, "input": [{"type": "text", "text": "find the tests"}]})
    task = {"taskId": "bash-abcd1234", "kind": "bash", "command": "npm test", "status": "completed"}
    for place in (session / "tasks", session / "agents" / "main" / "tasks", session / "agents" / "main" / "cron"):
        place.mkdir(parents=True)
        (place / "bash-abcd1234.json").write_text(json.dumps(task), encoding="utf-8")
    runs = _runs(tmp_path)
    assert set(runs) == {"kimi-cli.sample-main", "kimi-cli.sample-main.agent-0"}
    sub = runs["kimi-cli.sample-main.agent-0"]
    assert sub.task == "find the tests" and sub.metadata["is_subagent"] is True
    assert sub.metadata["parent_session_id"] == "sample-main" and "session_id" not in sub.metadata


def test_a_kimi_code_log_is_told_by_its_place_and_its_files_named_when_forced(newcomer, tmp_path: Path) -> None:
    """Review RT1 #8, #9, #12: a wire log whose head lacks ``created_at`` (as third-party readers write it) was
    "unrecognised"; its place and its dotted records tell it. Forced as kimi-cli, Kimi Code's state.json is named as
    when given alone, and a log that lost its head is refused naming the wire log's head, not only the Python CLI's
    context file. A log with turns but no prompt is still refused (only a log of its set-up alone is passed over)."""
    main = tmp_path / "ses_x" / "agents" / "main" / "wire.jsonl"
    shutil.copytree(KIMI_CODE / "sample-main", main.parent.parent.parent)
    head, *rest = main.read_text().splitlines(keepends=True)
    main.write_text(json.dumps({k: v for k, v in json.loads(head).items() if k != "created_at"}) + "\n" + "".join(rest))
    [run] = _runs(main).values()
    assert run.trajectory_id == "kimi-cli.ses_x" and run.task == "hi"
    assert run.created_at.isoformat() == "2026-05-20T05:59:51.100000+00:00"  # its first record's time
    code, out, err = run_cli("ingest", str(tmp_path / "ses_x" / "state.json"), "--format", "kimi-cli", "--dry-run")
    assert "Kimi Code's state.json of a session, no run" in out + err, out + err
    main.write_text("".join(rest))
    code, out, err = run_cli("ingest", str(main), "--format", "kimi-cli", "--dry-run")
    assert 'nor a Kimi Code wire log, opening with its head {"type": "metadata"' in out + err, out + err
    sub = tmp_path / "ses_x" / "agents" / "agent-0" / "wire.jsonl"
    _append(sub, {"type": "usage.record", "model": "kimi-k2"})
    [refused] = list(read_inputs([sub]))
    assert not refused.ok and "never asked anything" in refused.error


AUD35 = Path(__file__).parent / "fixtures" / "kimi-cli" / ".aud35"


def test_a_call_the_user_rejected_is_not_run_in_either_layout() -> None:
    """Kimi writes a call the user rejected as a failed result (``ToolRejectedError``: ``<system>ERROR: The tool call
    is rejected by the user. ...</system>``; in 2025 the bare message, no ``ERROR:``): the harness never ran it, so
    it is not run (the 2025 one read as a success, the 2026 one as the command's failure), the feedback kept."""
    session = "3b9e6f0a-7c21-4d8e-b5a4-91c0d2e7f635"
    old = "0c5e2a71-9d3b-4f68-a2e1-7b4d8c6f0e93"
    runs = _runs(AUD35 / ".kimi" / "sessions" / "5d41402abc4b2a76b9719d911017c592" / session / "context.jsonl",
                 AUD35 / f"{old}.jsonl")
    run = runs[f"kimi-cli.{session}"]
    assert run.task == "clean the build folder and run the tests"
    assert run.metadata["user_prompts"] == ["keep build/, just run the tests"]
    assert [(s.action, s.error) for s in run.steps] == [
        ("Shell", f"{NOT_RUN}rejected by the user"),
        ("Shell", f"{NOT_RUN}rejected by the user: use pytest -x tests/unit"),
        ("Shell", "FAILED tests/unit/test_app.py::test_start - AssertionError (exit code 1)"),
        ("respond", None)]
    before = runs[f"kimi-cli.{old}"]
    assert [(s.action, s.error) for s in before.steps] == [("Bash", f"{NOT_RUN}rejected by the user"),
                                                          ("respond", None)]
