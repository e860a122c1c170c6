"""OpenInference's ``agent.name`` ("the name of the agent that this span represents", ``spec/semantic_conventions.md``)
is the run's agent, as the GenAI conventions' ``gen_ai.agent.name`` is: it was not kept (real traces:
openinference-instrumentation-google-adk 1.0.5 around ADK 2.13, and Agno 3.1's OpenInference spans)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import only, runs

REAL = Path(__file__).parent / "fixtures" / "openinference" / ".real"


def test_an_adk_run_traced_by_openinference_keeps_its_agent_s_name() -> None:
    found = runs(REAL / "probe43" / "adk-2.13-openinference-adk-1.0.5.zipkin.json")
    assert [(r.metadata.get("agent_name"), r.metadata.get("conversation_id")) for r in found] == [
        ("city_agent", "s1"), ("city_agent", "s2"), ("city_agent", "s3")]


def test_an_agno_run_traced_by_openinference_keeps_its_agent_s_name() -> None:
    assert only(REAL / "agno-3.1-plus-openai.otlp.jsonl").metadata["agent_name"] == "WeatherAgent"
