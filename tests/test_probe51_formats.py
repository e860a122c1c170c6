"""Round p51, area FM2: format leftovers of the ATIF, Gemini CLI and ADK readers, each on a file the format's own
writer wrote or one built as it writes them (``fixtures/<format>/.probe51/SOURCE.md`` says how)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

from acp_support import gemini_shell_run

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
    an ``infra_error``. (The review of FM2 keeps the node a step: its event is a function node's, see below.)"""
    run = _run(FIXTURES / "adk-session" / ".real" / "wf-agent-model-429-first.session.json")
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


def _stream_output(path: Path) -> str:
    """The shell tool's display in one of the real stream-json files above: what gemini-cli's ACP server sends as a
    ``completed`` call's content too (``acpSession.ts``: ``toToolCallContent(toolResult)``, the ``returnDisplay``)."""
    events = [json.loads(line) for line in path.read_text().splitlines()]
    return next(e["output"] for e in events if e["type"] == "tool_result")


def test_openhands_acp_gemini_command_failing_in_its_own_words_is_failed(tmp_path: Path) -> None:
    """Bug (FM2, leftover 4): gemini-cli driven over ACP by the OpenHands SDK sends the same display as its stream-json
    (a failed command's output alone, ``completed``): git's ``fatal:`` and npm's report read as successes. A ``cat``
    of a file ending on "fatal: ..." stays one. Events built as in ``test_probe48_newest`` (the SDK's
    ``ACPToolCallEvent`` from the real ACP fixture: ``acp_support``), the contents the real CLI's displays."""
    where = " [current working directory /workspace/project]"
    lines = gemini_shell_run(tmp_path / "gemini-acp.jsonl", [
        ("git log -1" + where, _stream_output(GEMINI / "git-log-not-a-repo.jsonl")),
        ("npm run build" + where, _stream_output(GEMINI / "npm-missing-script.jsonl")),
        ("cat notes.txt" + where, _stream_output(GEMINI / "cat-notes-fatal-line.jsonl"))])
    run = _run(lines)
    assert [s.error for s in run.steps if s.action == "execute"] == [
        "fatal: not a git repository (or any of the parent directories): .git", 'npm error Missing script: "build"',
        None]


# Round p51, review of FM2 (FRFM2): the fixes above on the commands agents run most, each on the real output.
GEMINI_RFM = FIXTURES / "gemini-cli" / ".real" / "probe-frfm51"


@pytest.mark.parametrize(("name", "error"), [
    ("run-then-tail-pytest.jsonl", "FAILED tests/test_worker.py::test_retry - KeyError: 'user_id'"),
    ("run-or-tail-worker.jsonl", "KeyError: 'user_id'"),
])
def test_gemini_stream_json_run_then_tail_of_its_log_is_the_run_failing(name: str, error: str) -> None:
    """Bug (review of FM2, 1): a command line that runs a program into a log and then prints the log's end
    (``pytest ... > suite.log 2>&1; tail -n 3 suite.log``, ``python3 worker.py > run.log 2>&1 || tail -n 6 run.log``)
    was read by its last command alone, a ``tail`` that only prints: the failing suite and the crashed worker read
    as successes. Only commands that run nothing (``cd``, ``export``...) may come before a printer."""
    (step,) = [s for s in _run(GEMINI_RFM / name).steps if s.action == "run_shell_command"]
    assert step.error == error


def test_atif_terminus_keystrokes_that_run_then_tail_are_the_run_failing() -> None:
    """The same as Terminus-2 keystrokes (``python3 worker.py > worker.log 2>&1; tail -n 6 worker.log`` and its
    Enter): the worker's traceback read as a printed log's; a ``tail`` alone of that log still does not fail."""
    run = _run(ATIF / "terminus-run-then-tail" / "run.trajectory.json")
    (ran,) = [s for s in run.steps if "python3 worker.py" in str((s.arguments or {}).get("keystrokes"))]
    assert ran.error == "KeyError: 'user_id'"
    alone = _run(ATIF / "terminus-tail-log" / "worker-log.trajectory.json")
    assert all(s.error is None for s in alone.steps if "worker.log" in str((s.arguments or {}).get("keystrokes")))


@pytest.mark.parametrize("name", ["ruff-fix.jsonl", "make-i-ignored.jsonl", "newton-error-number.jsonl",
                                  "git-log-subjects.jsonl"])
def test_gemini_stream_json_successful_output_that_looks_failed_is_no_failure(name: str) -> None:
    """Bugs (review of FM2, 2, 4, 5): real successes read failed by their last line: ruff's ``Found 1 error (1
    fixed, 0 remaining).`` (``--fix``, exit 0), ``make -i`` that ignored gcc's errors (``make: [Makefile:2: all]
    Error 1 (ignored)``, exit 0), a script's result ``error: 6.0e-06`` and ``git log --format=%s`` whose oldest
    subject starts ``error:``."""
    (step,) = [s for s in _run(GEMINI_RFM / name).steps if s.action == "run_shell_command"]
    assert step.observation and step.error is None


@pytest.mark.parametrize(("name", "error"), [
    ("git-push-rejected.jsonl", "error: failed to push some refs to '/tmp/p51/FRFM2/gem/bare.git'"),
    ("git-show-nosuchrev.jsonl",
     "fatal: ambiguous argument 'nosuchrev': unknown revision or path not in the working tree."),
])
def test_gemini_stream_json_git_failure_followed_by_its_advice_is_failed(name: str, error: str) -> None:
    """Bug (review of FM2, 6): git's last words of failure followed by its advice (a rejected push's ``hint:``
    lines, the usage after an unknown revision of ``git show``) read as a success."""
    (step,) = [s for s in _run(GEMINI_RFM / name).steps if s.action == "run_shell_command"]
    assert step.error == error


def test_openhands_acp_gemini_ruff_fix_and_git_show(tmp_path: Path) -> None:
    """The same over ACP (the display gemini-cli sends as a ``completed`` call's content): ruff's fixed-all tally is
    a success, ``git show nosuchrev`` (git only prints) failed."""
    where = " [current working directory /workspace/project]"
    lines = gemini_shell_run(tmp_path / "gemini-acp.jsonl", [
        ("ruff check --fix app.py" + where, _stream_output(GEMINI_RFM / "ruff-fix.jsonl")),
        ("cd repo && git show nosuchrev" + where, _stream_output(GEMINI_RFM / "git-show-nosuchrev.jsonl")),
        ("python3 worker.py > run.log 2>&1 || tail -n 6 run.log" + where,
         _stream_output(GEMINI_RFM / "run-or-tail-worker.jsonl"))])
    assert [s.error for s in _run(lines).steps if s.action == "execute"] == [
        None, "fatal: ambiguous argument 'nosuchrev': unknown revision or path not in the working tree.",
        "KeyError: 'user_id'"]


ADK = FIXTURES / "adk-session" / ".real"


@pytest.mark.parametrize(("name", "node", "outcome"), [
    ("wf-function-node-genai-429.session.json", "embed_rows", Outcome.infra_error),
    ("wf-agent-model-429-first.session.json", "summariser", Outcome.infra_error),
    ("wf-agent-litellm-429-first.session.json", "summariser", Outcome.infra_error),
    ("wf-function-node-status-notfound.session.json", "load_user", Outcome.failure),
])
def test_adk_workflow_node_failing_with_a_status_keeps_its_step(name: str, node: str, outcome: Outcome) -> None:
    """Bug (review of FM2, 3): an ADK 2 ``Workflow`` function node whose exception carries a status (google-genai's
    429 from a function calling Gemini itself; an app's exception with ``status = "NOT_FOUND"``) lost its failed
    step, read as the agent's turn error: the node never ran as far as the run said. An agent node that wrote
    nothing leaves the very same event, so both are steps; a model provider's outage (``RESOURCE_EXHAUSTED``,
    LiteLLM's ``RateLimitError``) is the run's ``infra_error`` whichever called the model, an app's own error the
    run's failure."""
    run = _run(ADK / name)
    (failed,) = [s for s in run.steps if s.error]
    assert failed.action == node
    assert run.outcome is outcome
    assert run.failure is not None and run.failure.error == failed.error
