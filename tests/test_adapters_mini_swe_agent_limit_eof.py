"""mini-swe-agent runs that reached their step limit with no terminal to ask for new limits: real files its ``mini``
1.17.5 and 2.3.0 wrote (``fixtures/mini-swe-agent/.limit-eof``, how in the README beside them), read through the
public reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.model import Outcome

from adapter_support import only

LIMIT_EOF = Path(__file__).parent / "fixtures/mini-swe-agent/.limit-eof"


@pytest.mark.parametrize("name", ["unattended-1.17.5.traj.json", "unattended-2.3.0.traj.json"])
def test_a_limit_reached_with_no_terminal_is_the_agents_failure(name: str) -> None:
    """Bug: up to 2.3.0 the interactive agent (``mini``, ``-y`` too) answers ``LimitsExceeded`` by asking for new
    limits with ``input()``; unattended (stdin not a terminal) that raises ``EOFError``, the exit status saved. The run
    read as the harness's or the model API's failure (``infra_error``), though it stopped on its own budget, as
    2.3.1+ (mini-swe-agent #850) records it: ``LimitsExceeded``, the agent's failure. The saved traceback says so."""
    run = only(LIMIT_EOF / name)
    assert run.task == "List the files."
    assert run.outcome is Outcome.failure
    assert run.metadata["exit_status"] == "EOFError"  # as saved
    assert run.failure is not None and run.failure.cause is None
    assert run.failure.error.startswith("LimitsExceeded: ")
    assert "EOFError: EOF when reading a line" in run.failure.error
    assert [s.arguments for s in run.steps] == [{"command": "ls"}]  # the one step the limit allowed, nothing lost
