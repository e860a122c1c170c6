"""Real files of the formats trajsearch reads, from sources it had not seen (round 25, AUD5).

A Harbor trial Harbor never finished but whose agent had timed out: ``exception.txt`` holds the timeout, no
``result.json`` was written, and the run read as outcome unknown."""
from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
TIMED_OUT = FIXTURES / "atif/.real/harbor-timeout-unfinished/011_atlassian-api__atlassian-pyt__xznBdt8"


def _runs(path: Path) -> list[Trajectory]:
    """The runs a folder or file reads as (its other files passed over or rejected)."""
    return [p.trajectory for p in read_inputs([path]) if p.trajectory is not None]


def test_a_trial_that_timed_out_and_was_never_finished_is_the_agents_failure() -> None:
    """Harbor writes ``exception.txt`` when the trial's exception happens and ``result.json`` only when the trial
    is finalised; this one's agent ran out of its 600 s, then Harbor crashed before writing ``result.json``. The
    timeout is the agent's own failure, with its cause, and no reward."""
    parsed = list(read_inputs([TIMED_OUT]))
    assert [p.error for p in parsed if p.trajectory is None and "unrecognised" in (p.error or "")] == []
    [run] = [p.trajectory for p in parsed if p.trajectory is not None]
    assert run.outcome is Outcome.failure and run.reward is None
    assert run.failure is not None
    assert run.failure.error == "AgentTimeoutError: Agent execution timed out after 600.0 seconds"
    assert run.failure.cause is not None and run.failure.cause.startswith("the agent ran out of time")
    assert run.metadata["trial_exception"] == "AgentTimeoutError"
    assert run.metadata["outcome_basis"] == "Harbor trial exception.txt"
    assert len(run.steps) == 5 and run.model_id == "bedrock/us.amazon.nova-premier-v1:0"


GUI_RUN = FIXTURES / "openhands/basic_gui_mode.json"


def test_an_openhands_run_stopped_in_error_with_no_reason_says_so_naming_its_last_failing_step(tmp_path: Path) -> None:
    """OpenHands 0.13-0.30 recorded no reason with the error state (the ``reason`` field came in 0.31), whatever
    exception stopped the run; a later server records none for a runtime error its session reports. OpenHands' own
    GUI run ended so (its last state made ``error``, as each writes it): its ``http.server`` call that never finished
    (exit -1) was read as why the run stopped, though the agent went on to answer. The error now says no reason was
    recorded, naming that step as the last failing one."""
    events = json.loads(GUI_RUN.read_text())
    for extras in ({"agent_state": "error"}, {"agent_state": "error", "reason": ""}):
        [last] = [e for e in events if e.get("observation") == "agent_state_changed"][-1:]
        last["extras"] = extras
        path = tmp_path / f"{len(extras)}.json"
        path.write_text(json.dumps(events))
        [run] = _runs(path)
        assert run.outcome is Outcome.infra_error and run.failure is not None
        assert run.failure.error.startswith("the agent stopped in state error; OpenHands recorded no reason; "
                                            "last failing step 1: command did not finish (exit code -1)")
        assert run.failure.cause == "infrastructure: the agent stopped in state error (no reason recorded)"
