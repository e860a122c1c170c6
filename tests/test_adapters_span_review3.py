"""Who a span run's agent is, under a root that is no agent: review 3 of round 41 (``/tmp/p41/review3/REPORT.md``,
F5), on the real committed fixtures it names (sources in ``fixtures/otel-genai/.real/SOURCE.md`` and
``fixtures/openinference/.real/SOURCE.md``: strands-agents/evals ``tests/strands_evals/mappers/fixtures/`` at
4190bbbc57e2e80a16ba1e005dc99d8301c61e6d, unmodified; traceloop-sdk 0.62.4 with langgraph 1.2.24, captured here).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
IDENTITY = ("agent_name", "agent_id", "provider")


@pytest.mark.parametrize(("path", "identity"), [
    # the SDK's ``Agent workflow`` span (provider only) is outermost; the coordinator, first to run, is below it
    ("otel-genai/.real/openai_agents_genai_adot_spans.json", ("coordinator", "agent", "openai")),
    ("openinference/.real/openai_agents_openinference_adot_spans.json", ("coordinator", None, None)),
    # the Claude Agent SDK's ``ClaudeAgentSDK.query`` span (provider only, no name) around the sub-agents it
    # delegated to, whose spans its instrumentation names ``Agent`` (the tool's name)
    ("openinference/.real/claude_agent_sdk_adot_spans.json", ("Agent", None, "anthropic")),
])
def test_an_agents_sdk_run_is_credited_to_its_first_agent_not_to_the_nameless_workflow_span(
        path: str, identity: tuple) -> None:
    """F5: with the identity taken from the outermost agent span whatever it recorded, the OpenAI Agents SDK's runs
    under ADOT's ``POST /invocations`` root were credited to no agent: their outermost agent span is the SDK's
    ``Agent workflow``, which names none (the Claude Agent SDK's ADOT run likewise). Now it comes from the outermost
    agent span that names one, with the provider its nameless wrapper records."""
    run = only(FIXTURES / path)
    assert tuple(run.metadata.get(k) for k in IDENTITY) == identity


def test_an_agents_id_recorded_on_an_inner_span_of_the_same_agent_is_kept() -> None:
    """F5: traceloop's LangGraph capture names the agent ``LangGraph`` on ``invoke_agent LangGraph`` (no id) and
    again, with its id, on the ``LangGraph.workflow`` span inside it: both are the one agent, so the run keeps the
    id (lost when only the outermost span counted)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "traceloop_langgraph.traces.jsonl")
             if r.ok]  # its other trace only built the agent (create_agent), no run
    assert tuple(run.metadata.get(k) for k in IDENTITY) == (
        "LangGraph", "01a234bc-a0de-76f2-bc4d-242e4db279a1", "langgraph")
