"""Round p51, area FM2: format leftovers of the ATIF, Gemini CLI and ADK readers, each on a file the format's own
writer wrote or one built as it writes them (``fixtures/<format>/.probe51/SOURCE.md`` says how)."""

from __future__ import annotations

from pathlib import Path

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
