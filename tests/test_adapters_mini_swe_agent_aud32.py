"""mini-swe-agent 2.4.6 files audited in round 32 (AUDMS32): real files its ``mini`` wrote (``fixtures/mini-swe-agent/.aud32``,
how each was made in the README beside them), read through the public reader."""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

AUD32 = Path(__file__).parent / "fixtures/mini-swe-agent/.aud32"


def test_a_responses_api_turn_the_agent_rejected_keeps_what_the_model_wrote() -> None:
    """Bug (AUDMS32): a Responses API model (2.x ``litellm_response``) whose reply had no function call is rejected
    with a format error that keeps the reply in ``extra.response`` as a whole ``{"object": "response", "output"}``;
    the step read only a chat completion's ``choices`` there and lost the model's words (no thought)."""
    run = only(AUD32 / "responses-format-error.traj.json")
    assert (run.task, run.outcome, run.metadata["exit_status"]) == ("Say hello.", Outcome.failure,
                                                                    "RepeatedFormatError")
    (step,) = run.steps
    assert step.action is None and step.thought == "Just thinking out loud."
    assert step.error == "No tool calls found in the response. Every response MUST include at least one tool call."
