"""OTel span exports of round 42's probe D read through the public reader: OpenLLMetry events mode, Zipkin v2 JSON,
AutoGen 0.7 team runs.

The fixtures (``fixtures/otel-genai/.real/probe42``, see its README.md) are trimmed from files the released
instrumentation packages wrote with the OTel SDK's own encoders.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "probe42"


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


def test_zipkin_v2_json_reads_as_the_same_run_as_its_otlp_twin() -> None:
    """Bug (pydantic-ai 2.68 spans written by ``opentelemetry-exporter-zipkin-json``'s v2 encoder, what every OTel
    SDK's Zipkin exporter sends and Zipkin's ``/api/v2/trace/<id>`` returns): each span (``traceId``, ``id``,
    ``parentId``, µs ``timestamp`` / ``duration``, attributes as text ``tags``) was rejected as "not a span"; the
    run now reads as the OTLP/JSON export of the same spans does."""
    zipkin = adapter_support.only(PROBE / "pydantic-ai-2.68-v5-parallel-tools.zipkin.json")
    otlp = adapter_support.only(PROBE / "pydantic-ai-2.68-v5-parallel-tools.otlp.jsonl")
    assert zipkin.trajectory_id == otlp.trajectory_id == "otel:16b7b93f7fe4f8f03ad9f4ae89d41bba"
    assert (zipkin.task, zipkin.model_id, zipkin.metadata) == (otlp.task, otlp.model_id, otlp.metadata)
    untimed = {"started_at", "ended_at"}  # Zipkin rounds to microseconds
    assert [s.model_dump(exclude=untimed) for s in zipkin.steps] == [s.model_dump(exclude=untimed) for s in otlp.steps]
    assert _acts(zipkin) == [("get_weather", "sunny in London"), ("get_weather", "sunny in Berlin"), ("respond", None)]
    assert abs((zipkin.created_at - otlp.created_at).total_seconds()) < 1e-5  # Zipkin keeps microseconds


def test_a_zipkin_spans_error_status_and_exception_annotation_fail_the_step() -> None:
    """Bug (same exporter, a pydantic-ai tool raising ``ValueError('database offline')``): the status is the
    ``otel.status_code: ERROR`` tag, the exception event an annotation whose value is ``{"exception": {...}}``."""
    run = adapter_support.only(PROBE / "pydantic-ai-2.68-v5-tool-raises.zipkin.json")
    assert run.task == "Look up x"
    assert run.outcome.value == "failure"
    [step] = run.steps
    assert (step.action, step.arguments, step.error) == ("lookup", {"q": "x"}, "ValueError: database offline")
