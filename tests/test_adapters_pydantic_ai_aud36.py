"""Pydantic AI deferred tool approvals as pydantic-ai-slim 1.66.0 saved them, before a tool return's ``outcome``
(tests/fixtures/pydantic-ai/.aud36/README.md)."""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

AUD36 = Path(__file__).parent / "fixtures" / "pydantic-ai" / ".aud36"


def test_a_call_the_user_denied_before_outcome_is_a_call_not_run_and_the_approved_one_ran() -> None:
    """1.x answers a denied call with a plain ``tool-return`` of ``ToolDenied``'s default message: no result of the
    tool (before, read as a call that ran and returned that text), worded as 2.x's ``outcome: denied``."""
    run = only(AUD36 / "v1.66-approvals.json")
    assert run.task == "Clean up the workspace: delete .env and build/app.log"
    denied, approved, answer = run.steps
    assert (denied.action, denied.arguments) == ("delete_file", {"path": ".env"})
    assert denied.error == "not run: denied: The tool call was denied." and denied.observation is None
    assert (approved.observation, approved.error) == ("deleted build/app.log", None)
    assert answer.action == "respond" and answer.error is None
    assert run.trajectory_id == "pydantic-ai:fe07e1a7-73d5-4698-bc14-10797eebd5ad"  # the first run's id
    assert run.outcome is Outcome.unknown
