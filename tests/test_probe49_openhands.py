"""Probe 49 (area X2): OpenHands V1 / ACP leftovers and the names of a stream's copy.

Real files only: the ACP-backed SDK conversation ``openhands/.real/sdk-acp/`` (built as the SDK writes it, see its
SOURCE.md) and the ACP sub-agent events of the fork that adds them (see ``openhands/.real/sdk-acp-subagents/
SOURCE.md``); mini-swe-agent's ``.real/test_data/github_issue.traj.json`` and Harbor's ATIF
``.real/terminus_2/hello-world-invalid-json.trajectory.json`` (see their folders' SOURCE.md). Plumbing: the fast
hashing test embedder.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import run_cli
from trajsearch.cli import app
from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_dump, read_inputs
from trajsearch.search import TrajSearch

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"
ATIF = FIXTURES / "atif" / ".real" / "terminus_2" / "hello-world-invalid-json.trajectory.json"


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch) -> None:
    """The embedded store, tenant ``acme``, the hashing embedder."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
    monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")


def _stream(data: bytes, *args: str) -> str:
    """``trajsearch ingest - ARGS --json`` with ``data`` on standard input: its summary."""
    result = CliRunner().invoke(app, ["ingest", "-", "-q", "--json", *args], input=data)
    assert result.exit_code == 0, result.stderr
    return result.stdout


# -- item 5: a stream's copy is named as the operator named it ------------------------------------------------------


@pytest.mark.parametrize("dump, name", [(MINI, "github_issue.traj.json"), (ATIF, "hello.trajectory.json")])
def test_a_named_stream_streamed_twice_is_one_run_not_two(embedded, dump: Path, name: str) -> None:
    """Bug: mini-swe-agent (a trajectory without an ``instance_id``) and ATIF name a file's run by its folders; a
    stream's copy lives in a random temporary folder (``trajsearch-streams-<host>-<pid>-<random>/stream-0/``), so its
    run's id held that folder, even with ``--stream-name``: every rerun of ``zcat dump | trajsearch ingest -`` added
    the run again. Now the copy's own folders name nothing: the second ingest finds the run unchanged."""
    first = json.loads(_stream(dump.read_bytes(), "--stream-name", name))
    again = json.loads(_stream(dump.read_bytes(), "--stream-name", name))
    assert first["ingested"] == 1 and again["ingested"] == 0 and again["unchanged"] == 1
    code, out, err = run_cli("stats", "--json")
    assert code == 0 and json.loads(out)["trajectories"] == 1, err


# -- item 1: an ACP server's sub-agent sessions are not the run's steps ----------------------------------------------

OH_SUBAGENTS = FIXTURES / "openhands" / ".real" / "sdk-acp-subagents" / "0a1b2c3d00004000800000000000ac05"


def _one(path: Path):
    [result] = read_dump(path, tenant="acme")
    assert result.ok, result.error
    return result.trajectory


def _subagent_events() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((OH_SUBAGENTS / "events").glob("event-*.json"))]


def test_openhands_acp_sub_agent_sessions_calls_are_not_the_runs_steps(tmp_path: Path) -> None:
    """Bug: an ACP agent whose server ran sub-agent sessions (the SDK fork storing ACP's unstable sub-agent sessions:
    a child's calls as ``ACPToolCallEvent`` with its ``acp_session_id``) read every child's call as a step of the run:
    three steps the root never took, and child-b's call, cancelled by the client, a failed step of the run. The
    root's ``Run spawn`` call (which answers for its children) and its reply are the run; the children are counted."""
    for source in (OH_SUBAGENTS, _lines(tmp_path / "events.jsonl", _subagent_events())):
        run = _one(source)
        assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps] == [
            ("execute", {"title": "Run spawn"}, "spawned", None),
            ("finish", {"message": run.task}, run.task, None)]
        assert run.metadata["acp_subagent_sessions"] == 4 and run.metadata["acp_subagent_calls"] == 3


def test_openhands_acp_call_closed_before_an_interrupt_with_a_childs_event_between_is_cancelled(
        tmp_path: Path) -> None:
    """The fork writes a child's events from the conversation's emitter, which takes the state lock event by event:
    between the SDK's close of the root's calls (``_cancel_inflight_tool_calls``, under the lock) and the
    ``InterruptEvent`` ``arun`` writes once it takes the lock again, a child's snapshot can land. The root's call,
    its output streamed as content, was read as failed on its own; it was cancelled."""
    events = _subagent_events()
    start = events[2]  # the root's "Run spawn", in progress
    streamed = [{"type": "content", "content": {"type": "text", "text": "spawned child-a, child-c, child-b",
                                                "annotations": None, "field_meta": None}, "field_meta": None}]
    close = {**start, "id": "dd000000-0000-4000-8000-000000000001", "timestamp": "2026-12-05T09:02:07.000000",
             "status": "failed", "is_error": True, "content": streamed}
    child = {**events[-4], "id": "dd000000-0000-4000-8000-000000000002", "timestamp": "2026-12-05T09:02:07.001000"}
    stop = {"id": "dd000000-0000-4000-8000-000000000003", "timestamp": "2026-12-05T09:02:07.002000",
            "source": "user", "reason": "User requested interrupt", "kind": "InterruptEvent"}
    assert child["kind"] == "ACPSubagentEvent" and child["stop_reason"] == "cancelled"  # child-b, now idle
    run = _one(_folder(tmp_path / OH_SUBAGENTS.name, events[:4] + [close, child, stop]))
    assert [s.action for s in run.steps] == ["execute"]
    assert run.steps[0].error == "cancelled: the turn was interrupted"
    assert run.steps[0].observation == "spawned child-a, child-c, child-b"


def _lines(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _folder(folder: Path, events: list[dict], state: dict | None = None) -> Path:
    """The fixture's conversation folder holding ``events`` (each appended to the one before, as the SDK links
    them), its ``base_state.json`` (``state``, else the sub-agent fixture's) ending at the last."""
    (folder / "events").mkdir(parents=True)
    for n, event in enumerate(events):
        linked = {**event, "parent_id": events[n - 1]["id"]} if n else event
        (folder / "events" / f"event-{n:05d}-{event['id']}.json").write_text(json.dumps(linked))
    state = state or json.loads((OH_SUBAGENTS / "base_state.json").read_text())
    (folder / "base_state.json").write_text(json.dumps({**state, "leaf_event_id": events[-1]["id"]}))
    return folder


# -- item 2: a call closed by the SDK long before the InterruptEvent -------------------------------------------------

OH_ACP = FIXTURES / "openhands" / ".real" / "sdk-acp" / "0a1b2c3d00004000800000000000ac01"


def acp_events() -> list[dict]:
    """The ACP fixture's events, in order."""
    return [json.loads(p.read_text()) for p in sorted((OH_ACP / "events").glob("event-*.json"))]


def gemini_acp_call(n: int, command: str, report: str, status: str = "completed") -> list[dict]:
    """A gemini-cli shell call over ACP as the SDK records it (the fixture's call start and end events, ``n`` its
    place): ``report`` the text gemini-cli sends as the call's content, ``status`` how it closed the call."""
    events = acp_events()
    start, end = events[4], events[5]
    call = {"tool_call_id": f"run_shell_command-17648400{n:05d}",
            "title": command + " [current working directory /workspace/project]", "raw_input": None}
    said = [{"type": "content", "content": {"type": "text", "text": report, "annotations": None,
                                            "field_meta": None}, "field_meta": None}]
    return [{**start, **call, "id": f"ff100000-0000-4000-8000-0000000000{n:02d}", "status": "in_progress",
             "content": []},
            {**end, **call, "id": f"ff100000-0000-4000-8000-0000000001{n:02d}", "status": status,
             "is_error": status == "failed", "raw_output": None, "content": said}]


def _acp_state(server: str | None, command: list[str]) -> dict:
    """The ACP fixture's ``base_state.json`` for another server (``ACPAgent.acp_server``, ``acp_command``)."""
    state = json.loads((OH_ACP / "base_state.json").read_text())
    return {**state, "agent": {**state["agent"], "acp_server": server, "acp_command": command}}


def test_openhands_acp_codex_call_interrupted_is_cancelled_when_the_sdk_wrote_its_interrupt_late(
        tmp_path: Path) -> None:
    """Bug: a codex-acp command the user interrupted while it streamed output (the SDK's close: ``failed``, its
    ``raw_input`` the ``ExecCommandBeginEvent``, the output it gathered as content, no ``raw_output``) read as failed
    on its own, its error a line of that output, when the ``InterruptEvent`` came more than a second after the close:
    ``astep`` flushes the agent's file credentials first (Codex's ChatGPT ``auth.json``, saved to the credential store
    over HTTP when Codex rotated its token) and ``arun`` then waits for the state lock. codex-acp ends its own calls
    with a ``raw_output`` record; gemini-cli, which sends no input, keeps the one-second rule (its failure, then an
    interrupt, keeps its error)."""
    events = acp_events()
    begin = {"call_id": "call_pytest", "turn_id": "1", "command": ["/bin/zsh", "-lc", "python -m pytest -q"],
             "cwd": "/workspace/project", "parsed_cmd": [{"type": "unknown", "cmd": "python -m pytest -q"}],
             "source": "agent"}
    start = {**events[4], "id": "ee100000-0000-4000-8000-000000000001", "tool_call_id": "call_pytest",
             "title": "python -m pytest -q", "status": "in_progress", "raw_input": begin, "content": None,
             "timestamp": "2026-12-04T10:15:06.000000"}
    streamed = [{"type": "content", "content": {"type": "text", "text": "collected 214 items\n\nFAILED tests/a.py",
                                                "annotations": None, "field_meta": None}, "field_meta": None}]
    close = {**start, "id": "ee100000-0000-4000-8000-000000000002", "timestamp": "2026-12-04T10:15:40.000000",
             "status": "failed", "is_error": True, "content": streamed}
    stop = {"id": "ee100000-0000-4000-8000-000000000003", "timestamp": "2026-12-04T10:15:43.500000",
            "source": "user", "reason": "User requested interrupt", "kind": "InterruptEvent"}
    codex = _acp_state("codex", ["npx", "-y", "@zed-industries/codex-acp"])
    run = _one(_folder(tmp_path / OH_ACP.name, events[:2] + [start, close, stop], codex))
    assert run.steps[-1].error == "cancelled: the turn was interrupted"
    assert run.steps[-1].observation == "collected 214 items\n\nFAILED tests/a.py"
    gemini = [{**e, "tool_call_id": "read_many_files-1", "title": "a.py", "raw_input": None} for e in (start, close)]
    gemini[1]["content"] = [{**streamed[0], "content": {**streamed[0]["content"],
                                                        "text": "Error reading files (a.py): ENOENT"}}]
    run = _one(_lines(tmp_path / "gemini-interrupted.jsonl", events[:2] + gemini + [stop]))
    assert run.steps[-1].error == "Error reading files (a.py): ENOENT"


# -- item 3: gemini-cli over ACP in debug mode -----------------------------------------------------------------------


def test_openhands_acp_gemini_in_debug_mode_keeps_its_commands_exit_codes(tmp_path: Path) -> None:
    """gemini-cli (``packages/core/src/tools/shell.ts``) shows a command that printed output as that output alone,
    ``completed``: its exit code is not sent (nothing to read). In debug mode (``--debug``, or ``DEBUG=1`` /
    ``true`` in its environment, which an OpenHands ``ACPAgent`` passes on from its own) it shows the report it gives
    the model instead, ``Output: ...`` then ``Exit Code: N`` and the process group: a failing command read as
    success, and one that printed nothing too ("Command exited with code" is then not shown). A search's no match
    (exit code 1, no output) stays none."""
    events = acp_events()
    reports = [("python -m pytest -q", "Output: F\nFAILED test_calc.py::test_add - assert 0 == 4\n"
                "1 failed in 0.02s\nExit Code: 1\nProcess Group PGID: 4242"),
               ("./scripts/deploy.sh --check", "Output: (empty)\nExit Code: 3\nProcess Group PGID: 4243"),
               ("grep -rn TODO src", "Output: (empty)\nExit Code: 1\nProcess Group PGID: 4244"),
               ("python -m pytest -q", "Output: .\n1 passed in 0.01s\nProcess Group PGID: 4245")]
    calls = [e for n, (command, report) in enumerate(reports, 1) for e in gemini_acp_call(n, command, report)]
    run = _one(_lines(tmp_path / "gemini-debug.jsonl", events[:2] + calls + events[-2:]))
    assert [s.error for s in run.steps] == [
        "FAILED test_calc.py::test_add - assert 0 == 4 (exit code 1)", "exit code 3", None, None, None]


# -- FX2 item 1: a stream's copy given no folders is still flagged ---------------------------------------------------

#: Two CS 294-264 homework agents' runs of one instance (real files, see mini-swe-agent/.real/SOURCE.md).
HW4 = FIXTURES / "mini-swe-agent" / ".real" / "cs264-hw4"
HW4_RUNS = [HW4 / who / "results" / "astropy__astropy-7166" / "astropy__astropy-7166.traj.json"
            for who in ("23phillipsm", "mbhaskar1")]


def test_two_systems_runs_of_one_instance_streamed_without_folders_are_flagged(embedded) -> None:
    """Bug: ``cat A/x.traj.json | trajsearch ingest -`` then B's: a mini-swe-agent run with its own
    ``instance_id`` is named after its configuration's folder, which a stream's copy given no folders does not
    have; both runs got ``run.astropy__astropy-7166``, B silently replaced A, and nothing said so (the id once
    held the copy's ``stream-0``, which the summary's ``named_after_stream_copy`` warned about). Now flagged
    again; ``--stream-name`` with the folders keeps the two runs apart."""
    for run in HW4_RUNS:
        summary = json.loads(_stream(run.read_bytes()))
        assert summary["named_after_stream_copy"]["runs"] == 1, summary
    for run in HW4_RUNS:
        name = "/".join(run.parts[-4:])
        summary = json.loads(_stream(run.read_bytes(), "--stream-name", name))
        assert not summary["named_after_stream_copy"]["runs"], summary
        assert summary["ingested"] == 1 and not summary["replaced"], summary
    code, out, err = run_cli("stats", "--json")  # the unnamed streams' one run, and each system's own
    assert code == 0 and json.loads(out)["trajectories"] == 3, err


# -- FX2 item 2: the late-interrupt rule only for servers that end their own calls ----------------------------------


def _failed_then_interrupted() -> tuple[list[dict], str]:
    """The ACP fixture's events with a call given an input that failed on its own (Qwen Code's ``emitError``: no
    ``raw_output``) and the user's interrupt 25 s later; and the call's error."""
    events = acp_events()
    start = {**events[4], "id": "ab100000-0000-4000-8000-000000000001", "tool_call_id": "call_8f2e",
             "tool_kind": "edit", "title": "WriteFile: Writing to src/config.ts", "status": "pending",
             "raw_input": {"file_path": "/workspace/project/src/config.ts", "content": "export const x = 1;\n"},
             "raw_output": None, "content": [], "timestamp": "2026-12-04T10:15:06.000000"}
    said = "EACCES: permission denied, open '/workspace/project/src/config.ts'"
    fail = {**start, "id": "ab100000-0000-4000-8000-000000000002", "status": "failed", "is_error": True,
            "content": [{"type": "content", "content": {"type": "text", "text": said, "annotations": None,
                                                        "field_meta": None}, "field_meta": None}],
            "timestamp": "2026-12-04T10:15:06.400000"}
    stop = {"id": "ab100000-0000-4000-8000-000000000003", "timestamp": "2026-12-04T10:15:31.000000",
            "source": "user", "reason": "User requested interrupt", "kind": "InterruptEvent"}
    return events[:2] + [start, fail, stop], said


def test_openhands_acp_qwen_call_that_failed_keeps_its_error_when_the_user_interrupted_later(tmp_path: Path) -> None:
    """Bug: a call that failed on its own was read "cancelled: the turn was interrupted" when the user interrupted
    the turn 25 s later, because its server had sent an input: the late-interrupt rule took every server that sends
    ``raw_input`` to end its own calls with ``raw_output``. Qwen Code (``qwen --acp``, an ``ACPAgent`` of
    ``acp_server`` "custom"; QwenLM/qwen-code ``packages/cli/src/acp-integration/session/emitters/
    ToolCallEmitter.ts``: ``emitStart`` sends the call's args as ``rawInput``, ``emitError`` ends a call that threw
    as ``failed`` with its message as content and no ``rawOutput``) does not. Only Claude Code's and codex-acp's
    calls (``acp_server`` claude-code / codex, or their packages in ``acp_command``) take the rule; any other
    server, and a run whose server is not known (its events alone), keeps the one-second window."""
    run_events, said = _failed_then_interrupted()
    qwen = _acp_state("custom", ["qwen", "--acp"])
    for source in (_folder(tmp_path / OH_ACP.name, run_events, qwen), _lines(tmp_path / "q.jsonl", run_events)):
        assert _one(source).steps[-1].error == said
    claude = _acp_state(None, ["npx", "-y", "@agentclientprotocol/claude-agent-acp"])  # built without settings
    run = _one(_folder(tmp_path / "claude" / OH_ACP.name, run_events, claude))
    assert run.steps[-1].error == "cancelled: the turn was interrupted"


# -- FX2 item 3: gemini-cli's shell report: the exit code and error of its closing block only ----------------------

#: A real gemini-cli chat recording (see gemini-cli/SOURCE.md, ``.real/agung/``): its ``mkdir ... && git init`` call
#: succeeded, ``Output: Initialized empty Git repository ...`` then ``Process Group PGID: 11698``.
AGUNG = FIXTURES / "gemini-cli" / ".real" / "agung" / "chats" / "session-2026-04-12T01-18-01b2c62e.json"

#: Reports of commands that succeeded whose output holds the report's own words (shell.ts >= 0.27 writes ``Error:``
#: only when the command could not run, ``Exit Code:`` only when not 0; before 0.27 every line, ``(none)`` if empty).
_SUCCEEDED = {
    'grep -h "^Error:" build.log': "Output: Error: Cannot find module 'left-pad'\nError: Cannot find module 'is-odd'"
                                   "\nProcess Group PGID: 4246",
    'python run_tests.py; echo "Exit Code: $?"': "Output: 12 passed\nExit Code: 0\nProcess Group PGID: 4247",
    "cat ci-summary.txt": "Output: job lint: Exit Code: 0\nExit Code: 1\njob test: ok\nProcess Group PGID: 4248",
    "tail -2 deploy.log": "Command: tail -2 deploy.log\nDirectory: (root)\nOutput: Error: retrying\nExit Code: 1\n"
                          "Error: (none)\nExit Code: 0\nSignal: (none)\nBackground PIDs: (none)\n"
                          "Process Group PGID: 4249",
}
#: And of commands that failed, both layouts.
_FAILED = {
    "npm test": ("Output: 3 passing\n1 failing\nExit Code: 1\nProcess Group PGID: 4250", "1 failing (exit code 1)"),
    "make check": ("Command: make check\nDirectory: (root)\nOutput: make: *** No rule to make target 'check'.  Stop."
                   "\nError: (none)\nExit Code: 2\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4251",
                   "make: *** No rule to make target 'check'. Stop. (exit code 2)"),
    "./missing.sh": ("Command: ./missing.sh\nDirectory: (root)\nOutput: (empty)\nError: spawn ./missing.sh ENOENT\n"
                     "Exit Code: (none)\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: (none)",
                     "spawn ./missing.sh ENOENT"),
    # cut short by the CLI (coreToolScheduler.truncateAndSaveToFile: its words, then the report's first and last lines)
    "npm run test:all": ("Tool output was too large and has been truncated.\nThe full output has been saved to: "
                         "/home/u/.gemini/tmp/0f3a/run_shell_command_1775957004099_0.output\nTo read the complete "
                         "output, use the read_file tool with the absolute file path above.\nThe truncated output "
                         "below shows the beginning and end of the content. The marker '... [CONTENT TRUNCATED] ...' "
                         "indicates where content was removed.\nThis allows you to efficiently examine different "
                         "parts of the output without loading the entire file.\nTruncated part of the output:\n"
                         "Output: > test:all\n... [CONTENT TRUNCATED] ...\nTests: 2 failed, 480 passed\n"
                         "Exit Code: 1\nProcess Group PGID: 4252", "Tests: 2 failed, 480 passed (exit code 1)"),
}


def _agung_shell_errors(tmp_path: Path, reports: dict[str, str]) -> dict[str, str | None]:
    """Command -> the step error read from the real ``agung`` recording with its ``git init`` call replaced by one
    shell call per ``reports`` item (command -> the report gemini-cli gave the model), as the CLI records them."""
    session = json.loads(AGUNG.read_text())
    [call] = [c for c in session["messages"][4]["toolCalls"] if "git init" in c["args"]["command"]]
    calls = []
    for n, (command, report) in enumerate(reports.items()):
        response = {**call["result"][0]["functionResponse"], "id": f"run_shell_command_17759570040{n:02d}_0",
                    "response": {"output": report}}
        calls.append({**call, "id": response["id"], "args": {**call["args"], "command": command},
                      "result": [{"functionResponse": response}]})
    session["messages"][4] = {**session["messages"][4], "toolCalls": calls}
    path = tmp_path / AGUNG.name
    path.write_text(json.dumps(session))
    return {s.arguments.get("command"): s.error for s in _one(path).steps if s.arguments}


def test_gemini_session_command_that_succeeded_printing_the_reports_words_is_no_failure(tmp_path: Path) -> None:
    """Bug: gemini-cli's shell report was read for the first ``Exit Code:`` line anywhere and its last ``Error:``
    line, the command's output included: a command that succeeded printing such lines (a grep of a build log's
    errors, a test script echoing its exit code, a CI summary) read as failed. Only the report's closing block
    (``Exit Code`` / ``Signal`` / ``Background PIDs`` / ``Process Group PGID``, each once, in that order) holds its
    exit code, and since 0.27 an ``Error:`` line only a call that failed (its status then says so); the layout of
    before 0.27 (``Command:`` first, every line written) keeps its own ``Error:`` line before the block."""
    errors = _agung_shell_errors(tmp_path, {**_SUCCEEDED, **{c: r for c, (r, _) in _FAILED.items()}})
    assert {c: errors[c] for c in _SUCCEEDED} == dict.fromkeys(_SUCCEEDED)
    assert {c: errors[c] for c in _FAILED} == {c: e for c, (_, e) in _FAILED.items()}


def test_openhands_acp_gemini_in_debug_mode_a_command_that_succeeded_printing_the_reports_words(
        tmp_path: Path) -> None:
    """The same report, shown as a ``completed`` call's content by gemini-cli over ACP in debug mode (the reviewer's
    cases): no failure; a ``failed`` call's report keeps its ``Error:`` line."""
    events = acp_events()
    calls = [e for n, (c, r) in enumerate(list(_SUCCEEDED.items())[:3]) for e in gemini_acp_call(n, c, r)]
    calls += gemini_acp_call(9, "./missing.sh", "Output: (empty)\nError: spawn ./missing.sh ENOENT", "failed")
    run = _one(_lines(tmp_path / "gemini-debug.jsonl", events[:2] + calls + events[-2:]))
    assert [s.error for s in run.steps] == [None, None, None, "spawn ./missing.sh ENOENT", None]


def _too_large(report: str, last_lines: bool, locale_sep: str = ",", long_lines: bool = False) -> str:
    """``report`` as gemini-cli 0.26+ gives it to the model when over 40,000 characters (``formatTruncatedToolOutput``
    in ``utils/fileUtils.ts``): 0.26-0.28 its last 1,000 lines after "Showing the last N of M lines" (``long_lines``:
    with its " (some long lines truncated)" warning) and "..."; 0.29 on its first 20% and last 80% of the characters
    kept with "... [N characters omitted] ..." between."""
    where = "For full output see: /home/u/.gemini/tmp/proj/tool-outputs/session-1a32/run_shell_command_x.txt"
    if last_lines:
        lines = report.splitlines()
        kept = lines[-1000:]
        warning = " (some long lines truncated)" if long_lines else ""
        return (f"Output too large. Showing the last {len(kept):,} of {len(lines):,} lines{warning}. {where}\n...\n"
                + "\n".join(kept)).replace(",", locale_sep)
    head, tail = report[:8000], report[-32000:]
    return (f"Output too large. Showing first 8,000 and last 32,000 characters. {where}".replace(",", locale_sep)
            + f"\n{head}\n\n... [{len(report) - 40000:,} characters omitted] ...\n\n{tail}")


def test_gemini_session_long_failing_command_cut_by_the_cli_keeps_its_failure(tmp_path: Path) -> None:
    """Bug (regression): gemini-cli 0.26+ cuts a shell report over 40,000 characters and puts its own header first
    ("Output too large. Showing ... For full output see: <file>"); the report was read only when it started with
    ``Command:``/``Output:``, so a long failing pytest run (the commonest long output) read as a success. The header
    is dropped; when the report's start was cut (0.26-0.34) its closing block is read, if it is the shell tool's
    (``Process Group PGID``/``Background PIDs``); another tool's cut output ending in "Exit Code: 1" is no failure."""
    dots = "\n".join(f"tests/test_{n}.py {'.' * 40} [{n // 100:3d}%]" for n in range(9400))
    failing = (f"Output: ============ test session starts ============\ncollected 2412 items\n{dots}\n"
               "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200\n"
               "======= 1 failed, 2411 passed in 92.31s =======\nExit Code: 1\nProcess Group PGID: 15038")
    passing = failing.replace("FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200\n", "") \
        .replace("1 failed, 2411 passed", "2412 passed").replace("Exit Code: 1\n", "")
    error = "FAILED tests/test_api.py::test_login - AssertionError: assert 401 == 200 (exit code 1)"
    reports = {
        "pytest -q  # 0.26": (_too_large(failing, last_lines=True), error),
        "pytest -q  # 0.26, a long line cut": (_too_large(failing, last_lines=True, long_lines=True), error),
        "pytest -q  # 0.35": (_too_large(failing, last_lines=False), error),
        "pytest -q  # 0.35, de-DE": (_too_large(failing, last_lines=False, locale_sep="."), error),
        "pytest -q  # 0.26, passed": (_too_large(passing, last_lines=True), None),
        "pytest -q  # 0.35, passed": (_too_large(passing, last_lines=False), None),
        "cat ci.log  # not the shell tool's block": (_too_large(dots + "\nExit Code: 1", last_lines=True), None),
    }
    errors = _agung_shell_errors(tmp_path, {c: r for c, (r, _) in reports.items()})
    assert {c: errors[c] for c in reports} == {c: e for c, (_, e) in reports.items()}


# -- review RF: a stream named with the instance's or the container's folders only ----------------------------------

@pytest.mark.parametrize("folders", ["{id}/{id}.traj.json", "trajs/{id}/{id}.traj.json", "trajs/{id}.traj.json"])
def test_two_systems_runs_streamed_named_by_the_instance_folder_alone_are_flagged(embedded, folders: str) -> None:
    """Bug (review RF): ``--stream-name astropy__astropy-7166/astropy__astropy-7166.traj.json`` (or under
    ``trajs/``, SWE-agent's and mini-swe-agent's own layouts) names no run folder: once the instance's and the
    container's folders were stripped the name was "", so both systems' runs got ``run.astropy__astropy-7166``, B
    silently replaced A, unwarned. The copy's ``stream-<n>`` stands in then, as with no folders, and is warned of."""
    name = folders.format(id="astropy__astropy-7166")
    for run in HW4_RUNS:
        summary = json.loads(_stream(run.read_bytes(), "--stream-name", name))
        assert summary["named_after_stream_copy"]["runs"] == 1, summary


# -- review RF: the servers that end their own calls, by their executables and packages named whole ----------------

@pytest.mark.parametrize(("command", "ends_own"), [
    (["npx", "-y", "@zed-industries/claude-code-acp@0.4.2"], True),
    (["C:\\Users\\ana\\AppData\\Roaming\\npm\\codex-acp.cmd"], True),
    (["/home/ana/.local/bin/claude-agent-acp"], True),
    (["npx", "-y", "codex-acp-proxy", "--upstream", "http://127.0.0.1:9000"], False),
    (["/opt/claude-code-acp-fork/run.sh"], False),
    (["node", "/usr/lib/node_modules/@zed-industries/claude-code-acp/dist/index.js"], True),
    (["node", "/usr/lib/node_modules/other-acp/dist/index.js"], False)],
    ids=["npm-package-versioned", "windows-shim", "executable-path", "other-package", "other-script",
         "node-module-path", "other-node-module"])
def test_openhands_acp_late_interrupt_rule_takes_only_the_known_servers_named_whole(
        tmp_path: Path, command: list[str], ends_own: bool) -> None:
    """Bug (review RF): the servers that end their own calls (``claude-agent-acp``, ``claude-code-acp``, ``codex-acp``)
    were spotted in ``acp_command`` by substring, so a server of another name holding one (a proxy package
    ``codex-acp-proxy``, a fork's script) took the late-interrupt rule: its call that failed on its own read
    "cancelled: the turn was interrupted" when the user interrupted 25 s later. Named whole: a path's last part or a
    package's name, its scope and version aside. The Qwen test's events, a server "custom" run by ``command``."""
    run_events, said = _failed_then_interrupted()
    run = _one(_folder(tmp_path / OH_ACP.name, run_events, _acp_state("custom", command)))
    assert run.steps[-1].error == ("cancelled: the turn was interrupted" if ends_own else said)


#: A real ``/chat save`` checkpoint (a gemini-cli developer's, see gemini-cli/SOURCE.md): its ``npm run build`` calls
#: failed, their reports ending ``Exit Code: 1`` and ``Process Group PGID``.
CHECKPOINT = FIXTURES / "gemini-cli" / ".real" / "checkpoint-agent-teams.json"


def _masked(report: str, saved: str) -> str:
    """``report`` as gemini-cli masks an older shell output in its history (``ToolOutputMaskingService``:
    ``formatShellPreview``, the report split at its section names, the output's first and last 10 lines of more than
    20, the other sections whole; then ``formatMaskedSnippet``)."""
    parts = re.split(r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): ", report, flags=re.M)

    def simple(text: str) -> str:
        lines = text.split("\n")
        return text if len(lines) <= 20 else \
            "\n".join(lines[:10]) + f"\n\n... [{len(lines) - 20} lines omitted] ...\n\n" + "\n".join(lines[-10:])
    preview = ([simple(parts[0].strip())] if parts[0].strip() else []) + [
        f"{name}: {simple(body.strip()) if name == 'Output' else body.strip()}"
        for name, body in zip(parts[1::2], parts[2::2])]
    return f"<tool_output_masked>\n{chr(10).join(preview)}\n\nOutput too large. Full output available at: {saved}\n" \
           "</tool_output_masked>"


def test_gemini_checkpoint_failed_command_masked_in_the_history_keeps_its_failure(tmp_path: Path) -> None:
    """Bug: gemini-cli (0.3x on) masks older tool outputs in the history it keeps (a ``/chat save`` checkpoint holds
    it so: ``<tool_output_masked>``, a preview, "Output too large. Full output available at: <file>"); a shell
    report so masked keeps its ``Exit Code:`` line, but was not read (it starts with the tag), so a build that failed
    read as a success. The real checkpoint's failing builds, each masked as the CLI masks it."""
    history = json.loads(CHECKPOINT.read_text())
    errors = [(s.action, s.error) for s in _one(CHECKPOINT).steps]
    failed = [n for n, c in enumerate(history) for p in c.get("parts", [])
              if "Exit Code: 1" in str((p.get("functionResponse") or {}).get("response"))]
    assert len(failed) >= 3
    for n in failed:
        response = history[n]["parts"][0]["functionResponse"]["response"]
        response["output"] = _masked(response["output"], f"/Users/u/.gemini/tmp/p/tool-outputs/session-s/r_{n}.txt")
    path = tmp_path / CHECKPOINT.name
    path.write_text(json.dumps(history))
    assert [(s.action, s.error) for s in _one(path).steps] == errors
    assert sum(1 for _, e in errors if e and "(exit code 1)" in e) >= len(failed)


# -- LEFT32: a sub-conversation exported with its details is linked to its parent ------------------------------------

OH_SDK = FIXTURES / "openhands" / ".real" / "sdk" / "313131310000400080000000000000a0"
OH_CLOUD = FIXTURES / "openhands" / ".real" / "cloudexport" / "2c6ec633e00c4c5da99601de500e5752.cut.json"


def test_an_exported_sub_conversation_is_a_sub_agent_run_of_its_parent(tmp_path: Path) -> None:
    """Bug (LEFT32, 3): the app server starts a conversation with ``parent_conversation_id`` (a sub-conversation in
    its parent's sandbox: ``AppConversationInfo``); exported with its events (``{conversation, events}``), its details
    were dropped: the run was named by its file, an unrelated run, no link to its parent. Now it is its conversation's
    run (as its folder's), ``is_subagent`` with its parent's id; the parent names its ``sub_conversation_ids``."""
    events = [json.loads(p.read_text()) for p in sorted((OH_SDK / "events").glob("event-*.json"))]
    parent_id, child_id = "31313131-0000-4000-8000-0000000000b1", "31313131-0000-4000-8000-0000000000a0"
    child = tmp_path / "child.json"
    child.write_text(json.dumps({"conversation": {"id": child_id, "parent_conversation_id": parent_id,
                                                  "sub_conversation_ids": []}, "events": events}))
    run = _one(child)
    assert run.trajectory_id == _one(OH_SDK).trajectory_id == "openhands.313131310000400080000000000000a0"
    assert run.metadata["is_subagent"] is True and run.metadata["parent_conversation_id"] == parent_id.replace("-", "")
    parent = tmp_path / "parent.json"
    parent.write_text(json.dumps({"conversation": {"id": parent_id, "sub_conversation_ids": [child_id]},
                                  "events": events}))
    run = _one(parent)
    assert "is_subagent" not in run.metadata and run.metadata["sub_conversation_ids"] == [child_id.replace("-", "")]
    # the V0 API's ConversationInfo of a V1 conversation names its children too
    export = json.loads(OH_CLOUD.read_text())
    export["conversation"]["sub_conversation_ids"] = [child_id.replace("-", "")]
    cloud = tmp_path / "cloud.json"
    cloud.write_text(json.dumps(export))
    assert _one(cloud).metadata["sub_conversation_ids"] == [child_id.replace("-", "")]


def test_an_agent_server_conversation_folder_naming_its_parent_is_a_sub_agent_run(tmp_path: Path) -> None:
    """Review of LEFT32, 3: the agent server keeps each conversation it ran as ``<conversations>/<id hex>/`` with
    ``base_state.json``, ``events/`` and ``meta.json`` (``ConversationService``: a ``StoredConversation``, whose
    ``parent_conversation_id`` a child started with ``StartConversationRequest(parent_conversation_id=...)`` keeps,
    software-agent-sdk ``test_parent_child_conversations.py``). Only an export's details linked a child; its folder
    was an unrelated run. Read from ``meta.json``, as the export's are; the folder is one run, its ``meta.json`` part
    of it, not a file of its own."""
    parent_id, child_id = "31313131-0000-4000-8000-0000000000b1", "31313131-0000-4000-8000-0000000000a0"
    folder = tmp_path / "conversations" / child_id.replace("-", "")
    shutil.copytree(OH_SDK, folder)
    (folder / "meta.json").write_text(json.dumps({
        "id": child_id, "title": "echo some steps", "parent_conversation_id": parent_id, "sub_conversation_ids": [],
        "created_at": "2026-03-01T10:00:00Z", "updated_at": "2026-03-01T10:05:00Z", "secrets": {}}))
    [result] = read_inputs([tmp_path / "conversations"], tenant="acme")
    assert result.ok, result.error
    assert result.trajectory.trajectory_id == "openhands." + child_id.replace("-", "")
    assert (result.trajectory.metadata["is_subagent"], result.trajectory.metadata["parent_conversation_id"]) == (
        True, parent_id.replace("-", ""))


def test_conversation_details_whose_ids_are_no_uuids_or_name_itself_its_parent_link_nothing(tmp_path: Path) -> None:
    """Review of LEFT32, 8: an export's conversation id became its run id as written (``../../Etc/Passwd`` gave
    ``openhands.../../etc/passwd``), and a conversation naming itself its parent (which the agent server refuses)
    was a sub-agent of itself. Every OpenHands conversation id is a UUID: anything else names none, the run is
    named by its file; a parent that is the conversation itself is no parent. The V0 path reads the same details:
    an app-server parent on V0 events links as on SDK ones."""
    events = [json.loads(p.read_text()) for p in sorted((OH_SDK / "events").glob("event-*.json"))]
    own = "31313131-0000-4000-8000-0000000000a0"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"conversation": {"id": "../../Etc/Passwd ", "parent_conversation_id": "x",
                                                "sub_conversation_ids": [" X-Y ", own]}, "events": events}))
    run = _one(odd)
    assert run.trajectory_id.startswith("openhands.odd.")
    assert not run.metadata.keys() & {"is_subagent", "parent_conversation_id"}
    assert run.metadata["sub_conversation_ids"] == [own.replace("-", "")]
    itself = tmp_path / "itself.json"
    itself.write_text(json.dumps({"conversation": {"id": own, "parent_conversation_id": own}, "events": events}))
    assert "is_subagent" not in _one(itself).metadata
    export = json.loads(OH_CLOUD.read_text())
    export["conversation"]["parent_conversation_id"] = own
    cloud = tmp_path / "cloud.json"
    cloud.write_text(json.dumps(export))
    assert _one(cloud).metadata["parent_conversation_id"] == own.replace("-", "")


# -- RT1: an export's former id; one conversation id -----------------------------------------------------------------


def _export(path: Path, conversation: dict) -> Path:
    """The real SDK conversation's events exported with ``conversation`` (``{conversation, events}``)."""
    events = [json.loads(p.read_text()) for p in sorted((OH_SDK / "events").glob("event-*.json"))]
    path.write_text(json.dumps({"conversation": conversation, "events": events}))
    return path


def test_an_sdk_export_stored_before_its_id_changed_is_replaced_not_kept_twice(embedded, tmp_path: Path) -> None:
    """Bug (RT1, 1): LEFT32 named an SDK export by its conversation (``openhands.<hex>``); before, it was named by its
    file (``openhands.<stem>.<digest>``), and no former id was kept: re-ingesting an export a store already held
    stored the run a second time (``runs 2``). Now the file's id is its former one, and the old copy is replaced. The
    old id is the one round 32's base (2dafb438) gave this export, read with it."""
    export = _export(tmp_path / "export.json", {"id": "31313131-0000-4000-8000-0000000000a0", "title": "x"})
    run = _one(export)
    before = run.model_copy(update={"trajectory_id": "openhands.export.d92140777e", "metadata": {
        k: v for k, v in run.metadata.items() if k not in ("former_ids", "sub_conversation_ids")}})
    home = tmp_path / "home"
    with TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=HashingEmbedder()) as ts:
        ts.add([before])
    code, out, err = run_cli("ingest", str(export), "-q", "--json")
    assert code == 0, err
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    assert json.loads(out)["trajectories"] == 1


def test_a_folder_and_its_export_read_one_conversation_id_alike(tmp_path: Path) -> None:
    """Bug (RT1, 3): a folder's run id was its ``base_state.json`` id lowercased without dashes, an export's its
    conversation id read as a UUID: an id written in braces (``{3131...A0}``, a UUID as ``uuid.UUID`` reads it)
    named the folder's run ``openhands.{3131...a0}`` and its export's ``openhands.3131...a0``, two runs. Both read it
    with one helper now; the folder's id that is no UUID stays as it was named."""
    written = "{31313131-0000-4000-8000-0000000000A0}"
    folder = tmp_path / "conversation"
    shutil.copytree(OH_SDK, folder)
    state = json.loads((folder / "base_state.json").read_text())
    (folder / "base_state.json").write_text(json.dumps({**state, "id": written}))
    export = _export(tmp_path / "export.json", {"id": written})
    assert _one(folder).trajectory_id == _one(export).trajectory_id == "openhands.313131310000400080000000000000a0"
    (folder / "base_state.json").write_text(json.dumps({**state, "id": "My-Conv-1"}))
    assert _one(folder).trajectory_id == "openhands.myconv1"
