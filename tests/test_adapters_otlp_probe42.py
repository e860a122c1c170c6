"""OTel span exports of round 42's probe D read through the public reader: OpenLLMetry events mode, Zipkin v2 JSON,
AutoGen 0.7 team runs.

The fixtures (``fixtures/otel-genai/probe42``, see its README.md) are trimmed from files the released
instrumentation packages wrote with the OTel SDK's own encoders.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / "probe42"


def _acts(run) -> list[tuple[str, str | None]]:
    return [(s.action, s.observation) for s in run.steps]


def test_openllmetry_event_mode_tool_calls_beside_the_message_are_kept() -> None:
    """Bug (OpenLLMetry ``opentelemetry-instrumentation-openai`` 0.62.4, ``use_attributes=False``): its
    ``gen_ai.choice`` body holds ``tool_calls`` beside ``message`` (``{"index", "message": {"content": null},
    "finish_reason": "tool_calls", "tool_calls": [...]}``); only ``message.tool_calls`` was read, so the run kept
    its final answer alone and lost both ``get_weather`` calls with their results."""
    run = adapter_support.only(PROBE / "openllmetry-0.62.4-events-tool-calls.otlp.jsonl")
    assert run.task == "What is the weather in London and Berlin?"
    acts = _acts(run)
    assert acts[:2] == [("get_weather", "London: 18C cloudy"), ("get_weather", "Berlin: 18C cloudy")]
    assert [s.arguments for s in run.steps[:2]] == [{"city": "London"}, {"city": "Berlin"}]
    assert acts[2][0] == "respond" and len(acts) == 3
