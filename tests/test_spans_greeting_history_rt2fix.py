"""A chat whose history opens with the assistant's greeting, traced as GenAI or AI SDK spans (round 36, RT2 1).

A pydantic-ai run resumed with ``deferred_tool_results`` takes the calls its history's last response asked for as
its steps (tests/test_otel_pydantic_ai_resumed_approvals_aud36.py). That was told by the run's input opening with an
assistant message, which a history seeded with a greeting ("Hi! How can I help?") or trimmed to a window does too:
the earlier turn's get_weather call became a step of the later turn. Constructed traces: fixtures/*/.rt2fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("path", ["otel-genai/.rt2fix/greeting-history.console.json",
                                  "vercel-ai/.rt2fix/greeting-vercel.json"])
def test_an_earlier_turns_call_in_a_history_opened_by_a_greeting_is_no_step(path: str) -> None:
    """The run's one step is its answer: get_weather was called in an earlier turn, not in this run."""
    run = adapter_support.only(FIXTURES / path)
    assert [s.action for s in run.steps] == ["respond"]
