"""Spans no convention typed (no ``gen_ai.operation.name``, no ``openinference.span.kind``: both conventions
require one) that record a model's messages are model calls where they are a leaf of their run; read as "other"
their task and answer were lost. Around model calls or tools (Strands' event-loop cycles, an app's own span) they are
containers. Untyped spans of one tool call (``gen_ai.tool.call.*``) are tool runs. Fixtures built by hand from the GenAI and OpenInference semantic conventions (see each folder's README/SOURCE)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapter_support import only, runs

from trajsearch.model import Trajectory

FIXTURES = Path(__file__).parent / "fixtures"


def test_an_untyped_genai_model_span_gives_the_task_and_the_answer() -> None:
    run = only(FIXTURES / "otel-genai" / ".edge" / "untyped-model-spans.otlp.json")
    assert run.task == "What is the weather in Paris?"
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}, "rainy"), ("respond", {"content": "It is rainy."}, None)]
    assert run.created_at.year == 2025  # nanoseconds since the epoch, as OTLP has them (2025-10-09)


def test_an_untyped_openinference_model_span_gives_the_answer() -> None:
    run = only(FIXTURES / "openinference" / ".derived" / "untyped-model-spans.jsonl")
    assert run.task == "What is the weather in Paris?"
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    assert run.steps[-1].arguments == {"content": "It is rainy in Paris."}


def _steps(run: Trajectory) -> list[tuple[str, Any]]:
    return [(s.action, s.arguments) for s in run.steps]


def test_an_untyped_span_around_model_calls_is_no_model_call() -> None:
    """An app's own span recording the run's messages around its typed calls (hand-built, see SOURCE.md): read as a
    model call, the answer came twice, or first when the span ends with the first call."""
    for name in ("untyped-wrapper-around-calls.otlp.json", "untyped-wrapper-ends-with-first-call.otlp.json"):
        run = only(FIXTURES / "otel-genai" / ".edge" / name)
        assert _steps(run) == [("get_weather", {"city": "Paris"}), ("respond", {"content": "Rainy."})], name


def test_an_untyped_openinference_agent_span_around_its_calls_is_no_model_call() -> None:
    run = only(FIXTURES / "openinference" / ".derived" / "untyped-agent-span.jsonl")
    assert _steps(run) == [("get_weather", {"city": "Paris"}), ("respond", {"content": "It is rainy in Paris."})]
    assert run.metadata["agent_name"] == "weather_agent"


def test_strands_event_loop_cycles_without_their_chat_spans_keep_the_agents_answer(tmp_path: Path) -> None:
    """Strands' ``execute_event_loop_cycle`` spans have no type and carry the cycle's messages as events, around
    its ``chat`` and ``execute_tool`` spans. With the chat spans not exported (a sampler, a filter) the last cycle
    records only its input: read as a model call it hid the answer on the agent's span."""
    real = json.loads((FIXTURES / "otel-genai" / ".real" / "strands_tool_call_spans.json").read_text())
    real["sessionSpans"] = [s for s in real["sessionSpans"] if s["name"] != "chat"]
    path = tmp_path / "strands_no_chat_spans.json"
    path.write_text(json.dumps(real))
    first, second = runs(path)
    assert [s.action for s in first.steps] == ["respond"]
    assert [s.action for s in second.steps] == ["search_flights", "search_hotels", "book_flight", "book_hotel",
                                                "respond"]
    assert second.steps[-1].arguments["content"].startswith("Great! I've successfully booked both for you")


def test_an_untyped_span_of_the_last_tool_call_keeps_its_result_and_error() -> None:
    """``gen_ai.tool.call.*`` keys are defined for ``execute_tool`` alone: without the operation name the span is a
    tool's run. Read as "other", the last tool's result and error were lost (no model call after it held them)."""
    ran = only(FIXTURES / "otel-genai" / ".edge" / "untyped-tool-last.otlp.json")
    assert [(s.action, s.arguments, s.observation) for s in ran.steps] == [("get_weather", {"city": "Paris"}, "rainy")]
    failed = only(FIXTURES / "otel-genai" / ".edge" / "untyped-tool-error.otlp.json")
    assert [s.action for s in failed.steps] == ["get_weather"]
    assert "weather service timed out" in (failed.steps[0].error or "")
