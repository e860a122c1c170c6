"""AutoGen AgentChat team kinds as autogen-agentchat 0.7.5 itself saves them (tests/fixtures/autogen-agentchat/
.aud33b/README.md)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import only

AUD = Path(__file__).parent / "fixtures" / "autogen-agentchat" / ".aud33b"


def test_a_magentic_one_team_state_keeps_its_task_and_its_agents_tool_calls() -> None:
    """A MagenticOne orchestrator keeps the task apart from its thread (``task``), and of its agents only their chat
    messages: a ``ToolCallSummaryMessage`` (its ``tool_calls`` and ``results``) is all that is left of a call. Read
    before as a run whose task was the orchestrator's ledger and which had no call."""
    state, result = only(AUD / "magentic_team_state.json"), only(AUD / "magentic_taskresult.json")
    assert state.task == result.task == "What is the weather in Oslo?"
    called = [(s.action, s.arguments, s.observation) for s in state.steps if s.action != "respond"]
    assert called == [("get_weather", {"city": "Oslo"}, "Oslo: sunny, 24 C")]
    assert [(s.action, s.arguments, s.observation) for s in result.steps if s.action != "respond"] == called
    assert state.steps[-1].arguments == {"content": "Oslo: sunny, 24 C."}
