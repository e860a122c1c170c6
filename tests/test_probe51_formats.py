"""Round p51, area FM2: format leftovers of the ATIF, Gemini CLI and ADK readers, each on a file the format's own
writer wrote or one built as it writes them (``fixtures/<format>/.probe51/SOURCE.md`` says how)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
ATIF = FIXTURES / "atif" / ".probe51"


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_atif_a_printed_log_ending_on_a_traceback_is_no_failed_call() -> None:
    """Bug (FM2, leftover 1): Harbor's opencode converter keeps a command's output, not its exit code; ``tail`` of a
    worker's log ending on the traceback it logged read as the failed call "KeyError: 'user_id'", and ``cat`` of
    notes holding an ``ERROR:root:`` line as failed too. tail's own complaint about a missing file still fails."""
    run = _run(ATIF / "opencode-tail-log" / "agent" / "trajectory.json")
    by_command = {s.arguments["command"]: s for s in run.steps if s.action == "bash"}
    assert by_command["tail -n 6 /tmp/fmtcheck30/work/worker.log"].error is None
    assert by_command["cd /tmp/fmtcheck30/work && cat notes.txt"].error is None
    missing = by_command["tail -n 6 /tmp/fmtcheck30/work/worker.log.1"]
    assert missing.error == ("tail: cannot open '/tmp/fmtcheck30/work/worker.log.1' for reading: "
                             "No such file or directory")


def test_atif_terminus_keystrokes_that_print_a_log_are_no_failed_call() -> None:
    """Bug (FM2, leftover 1): Terminus-2 keeps the terminal screen, no exit code; its ``tail -n 6 worker.log`` (the
    keystrokes end on the Enter, ``\\n``, which hid the printing program) read as failed with the logged
    traceback's last line."""
    run = _run(ATIF / "terminus-tail-log" / "worker-log.trajectory.json")
    (tail,) = [s for s in run.steps if (s.arguments or {}).get("keystrokes") == "tail -n 6 worker.log\n"]
    assert "KeyError: 'user_id'" in (tail.observation or "")
    assert tail.error is None


def test_adk_workflow_agent_node_whose_model_failed_first_is_no_tool_step() -> None:
    """Bug (FM2, leftover 2): an ADK 2 ``Workflow``'s ``LlmAgent`` node whose Gemini call got a 429 before the agent
    wrote anything (ADK: an error event authored by the workflow, ``errorCode: RESOURCE_EXHAUSTED``) read as a tool
    step ``summariser`` that failed, the run a failure of the agent; it is the model provider's: the turn's error,
    an ``infra_error``. The function node before it stays a step."""
    run = _run(FIXTURES / "adk-session" / ".real" / "wf-agent-model-429-first.session.json")
    assert [s.action for s in run.steps if s.action is not None] == ["fetch"]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and run.failure.error.startswith("RESOURCE_EXHAUSTED: 429 RESOURCE_EXHAUSTED")


GEMINI = FIXTURES / "gemini-cli" / ".real" / "probe-fm51"


@pytest.mark.parametrize(("name", "error"), [
    ("git-log-not-a-repo.jsonl", "fatal: not a git repository (or any of the parent directories): .git"),
    ("git-checkout-pathspec.jsonl", "error: pathspec 'nosuch-branch' did not match any file(s) known to git"),
    ("npm-missing-script.jsonl", 'npm error Missing script: "build"'),
    ("make-compile-error.jsonl", "hello.c:1:25: error: ‘undefined_thing’ undeclared (first use in this function)"),
    ("gcc-compile-error.jsonl", "hello.c:1:25: error: ‘undefined_thing’ undeclared (first use in this function)"),
    ("node-uncaught.jsonl", "Error: Cannot find module './config.json'"),
    ("pip-no-distribution.jsonl", "ERROR: No matching distribution found for nosuchpkg-zz9"),
])
def test_gemini_stream_json_command_failing_in_its_own_words_is_failed(name: str, error: str) -> None:
    """Bug (FM2, leftover 3): Gemini CLI 0.61's stream-json gives a failed command's output alone (``success``, no
    exit code); one ending on git's ``fatal:``, npm's report, make's ``***``, a compiler's errors, Node's stack or
    pip's ``ERROR:`` read as a success, the step without an error."""
    (step,) = [s for s in _run(GEMINI / name).steps if s.action == "run_shell_command"]
    assert step.error == error


def test_gemini_stream_json_printed_file_ending_on_fatal_is_no_failure() -> None:
    """The guard of the fix above: ``cat notes.txt`` whose last line is the file's "fatal: ..." succeeded."""
    (step,) = [s for s in _run(GEMINI / "cat-notes-fatal-line.jsonl").steps if s.action == "run_shell_command"]
    assert step.observation.endswith("fatal: remember to rotate the key")
    assert step.error is None


OH_ACP = FIXTURES / "openhands" / ".real" / "sdk-acp" / "0a1b2c3d00004000800000000000ac01"


def _stream_output(name: str) -> str:
    """The shell tool's display in one of the real stream-json files above: what gemini-cli's ACP server sends as a
    ``completed`` call's content too (``acpSession.ts``: ``toToolCallContent(toolResult)``, the ``returnDisplay``)."""
    events = [json.loads(line) for line in (GEMINI / name).read_text().splitlines()]
    return next(e["output"] for e in events if e["type"] == "tool_result")


def test_openhands_acp_gemini_command_failing_in_its_own_words_is_failed(tmp_path: Path) -> None:
    """Bug (FM2, leftover 4): gemini-cli driven over ACP by the OpenHands SDK sends the same display as its stream-json
    (a failed command's output alone, ``completed``): git's ``fatal:`` and npm's report read as successes. A ``cat``
    of a file ending on "fatal: ..." stays one. Events built as in ``test_probe48_newest`` (the SDK's
    ``ACPToolCallEvent`` from the real ACP fixture), the contents the real CLI's displays."""
    events = [json.loads(p.read_text()) for p in sorted((OH_ACP / "events").glob("event-*.json"))]
    start, end = events[4], events[5]

    def shell(n: int, command: str, shown: str) -> list[dict]:
        call = {"tool_call_id": f"run_shell_command-176484000000{n}", "raw_input": None,
                "title": f"{command} [current working directory /workspace/project]"}
        said = [{"type": "content", "content": {"type": "text", "text": shown, "annotations": None,
                                                "field_meta": None}, "field_meta": None}]
        return [{**start, **call, "id": f"ff000000-0000-4000-8000-00000000000{n}", "status": "in_progress",
                 "content": []},
                {**end, **call, "id": f"ff000000-0000-4000-8000-00000000001{n}", "status": "completed",
                 "is_error": False, "raw_output": None, "content": said}]
    calls = shell(1, "git log -1", _stream_output("git-log-not-a-repo.jsonl")) + \
        shell(2, "npm run build", _stream_output("npm-missing-script.jsonl")) + \
        shell(3, "cat notes.txt", _stream_output("cat-notes-fatal-line.jsonl"))
    lines = tmp_path / "gemini-acp.jsonl"
    lines.write_text("".join(json.dumps(e) + "\n" for e in events[:2] + calls + events[-2:]))
    run = _run(lines)
    assert [s.error for s in run.steps if s.action == "execute"] == [
        "fatal: not a git repository (or any of the parent directories): .git", 'npm error Missing script: "build"',
        None]
