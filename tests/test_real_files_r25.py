"""Real files of the formats trajsearch reads, from sources it had not seen (round 25, AUD5).

A Harbor trial Harbor never finished but whose agent had timed out: ``exception.txt`` holds the timeout, no
``result.json`` was written, and the run read as outcome unknown."""
from __future__ import annotations

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
