"""Round 35's audit of the SWE-agent adapter against SWE-agent 1.1.0, read through the public reader.

Fixture ``fixtures/swe-agent/.aud35`` (see its README.md): a run SWE-agent 1.1.0 itself wrote, its model API
failing (HTTP 500) after the agent's edit, so that SWE-agent handed in the diff: ``submitted (exit_error)``.
Other stops are made in ``tmp_path`` from it, re-ended as ``agents.py``'s ``forward_with_handling`` ends a run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter_support import only
from trajsearch.model import Outcome

RUN = Path(__file__).parent / "fixtures" / "swe-agent" / ".aud35" / "out" / "demo__greet-api" / "demo__greet-api.traj"
API_ERROR = ("Exit due to unknown error: litellm.InternalServerError: InternalServerError: OpenAIException - "
             "The server had an error while processing your request.")


def test_autosubmission_after_a_model_api_error_is_an_infra_error() -> None:
    """Bug (AUDSWA35): every ``submitted (...)`` read as the agent's failure, though SWE-agent 1.1 writes
    ``submitted (exit_error)`` when the model API's error stopped a run that had edited (its ``attempt_autosubmission
    _after_error``); the same error before any edit, ``exit_error``, was an infra_error already."""
    run = only(RUN)
    assert [s.action for s in run.steps] == ["str_replace_editor", None]  # the fix, then SWE-agent's stop
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == f"submitted (exit_error): {API_ERROR}"
    assert run.failure.cause.startswith("infrastructure")
    assert run.metadata["submission_chars"] > 0  # the diff SWE-agent handed in is still counted


@pytest.mark.parametrize(("status", "message", "outcome"), [
    ("submitted (exit_environment_error)", "Exit due to environment error: Runtime did not start within 60s",
     Outcome.infra_error),
    ("submitted (exit_api)", "Exit due to retry error: RetryError[<Future state=finished raised RateLimitError>]",
     Outcome.infra_error),
    # a limit the agent hit stays its failure
    ("submitted (exit_cost)", "Exit due to cost limit", Outcome.failure),
    ("submitted (exit_context)", "Exit due to context window", Outcome.failure),
    ("submitted (exit_format)", "Exit due to repeated format/blocklist/bash syntax errors", Outcome.failure),
])
def test_autosubmission_reads_as_its_stop(tmp_path: Path, status: str, message: str, outcome: Outcome) -> None:
    record = json.loads(RUN.read_text())
    record["trajectory"][-1].update(thought=message, response=message)
    record["info"]["exit_status"] = status
    path = tmp_path / "out" / RUN.parent.name / RUN.name
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(record))
    run = only(path)
    assert (run.outcome, run.failure.error.split(":")[0]) == (outcome, status)
    assert (run.failure.cause is not None) == (outcome is Outcome.infra_error)
