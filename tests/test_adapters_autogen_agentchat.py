"""AutoGen AgentChat team kinds as autogen-agentchat 0.7.5 itself saves them (tests/fixtures/autogen-agentchat/
.aud33b/README.md)."""

from __future__ import annotations

import json
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


FIX = Path(__file__).parent / "fixtures" / "autogen-agentchat" / ".aud33fix"


def test_a_magentic_one_state_keeps_each_agents_call_when_call_ids_repeat_across_agents() -> None:
    """Call ids are not unique across agents (Ollama's client numbers its calls per instance from "0", llama.cpp
    servers give ""): a later agent's summary is still its own calls, as no event of the thread requested that id.
    Read before as the first agent's call alone."""
    state = only(FIX / "mag2_team_state.json")
    called = [(s.action, s.arguments, s.observation) for s in state.steps if s.action != "respond"]
    assert called == [("get_weather", {"city": "Oslo"}, "Oslo: sunny, 24 C"),
                      ("get_weather", {"city": "Paris"}, "Paris: sunny, 24 C")]
    assert called == [(s.action, s.arguments, s.observation) for s in only(FIX / "mag2_taskresult.json").steps
                      if s.action != "respond"]


def test_a_summary_call_id_of_no_string_is_no_call_already_read(tmp_path: Path) -> None:
    """A hand-edited summary whose call id is a list is read as its call (its result, whose call_id no longer
    matches, a step of its own), not refused with a TypeError (main read it)."""
    state = json.loads((FIX / "mag2_team_state.json").read_text(encoding="utf-8"))
    thread = state["agent_states"]["MagenticOneOrchestrator"]["message_thread"]
    next(m for m in thread if m["type"] == "ToolCallSummaryMessage")["tool_calls"][0]["id"] = ["x"]
    (edited := tmp_path / "state.json").write_text(json.dumps(state), encoding="utf-8")
    calls = [s.arguments for s in only(edited).steps if s.action == "get_weather"]
    assert calls[0] == {"city": "Oslo"} and calls[-1] == {"city": "Paris"}


def test_a_magentic_one_states_task_is_its_orchestrators_even_with_a_participant_named_user() -> None:
    """A MagenticOne thread never holds the task (the orchestrator keeps it in ``task``), so a "user" message in it
    is a reply mid-run, here a ``UserProxyAgent`` named "user": read before as the state's task."""
    state = only(FIX / "maguser_team_state.json")
    assert state.task == only(FIX / "maguser_taskresult.json").task == "Weather in Oslo?"


SOM = Path(__file__).parent / "fixtures" / "autogen-agentchat" / ".som33"


def test_a_society_of_mind_agents_inner_team_state_is_read_as_the_runs_last_steps() -> None:
    """A ``SocietyOfMindAgent`` keeps its inner team's work in its own state (``inner_team_state``), not in the outer
    thread, until its turn ends; here its model failed after the inner team ran, and the team state saved then
    reads the same run as ``run_stream()``'s items: the inner agent's call and answer, under its own name, each
    once (the task handed to the inner team is the outer one, not repeated). Read before as the task alone."""
    state, streamed = only(SOM / "failed_team_state.json"), only(SOM / "failed_messages.json")
    read = [[(s.action, s.arguments, s.observation) for s in run.steps] for run in (state, streamed)]
    assert read[0] == read[1] == [("get_weather", {"city": "Paris"}, "Paris: sunny, 24 C"),
                                  ("respond", {"content": "Paris is sunny, 24 C."}, None)]
    assert state.trajectory_id == streamed.trajectory_id and state.task == "What should I pack for Paris?"
    assert state.metadata["agents"] == streamed.metadata["agents"] == ["researcher"]

