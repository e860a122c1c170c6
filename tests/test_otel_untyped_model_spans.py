"""Spans no convention typed (no ``gen_ai.operation.name``, no ``openinference.span.kind``: both conventions
require one) that record a model's messages are model calls; read as "other" their task and answer were lost.
Fixtures built by hand from the GenAI and OpenInference semantic conventions (see each folder's README/SOURCE)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"


def test_an_untyped_genai_model_span_gives_the_task_and_the_answer() -> None:
    run = only(FIXTURES / "otel-genai" / ".edge" / "untyped-model-spans.otlp.json")
    assert run.task == "What is the weather in Paris?"
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}, "rainy"), ("respond", {"content": "It is rainy."}, None)]


def test_an_untyped_openinference_model_span_gives_the_answer() -> None:
    run = only(FIXTURES / "openinference" / ".derived" / "untyped-model-spans.jsonl")
    assert run.task == "What is the weather in Paris?"
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    assert run.steps[-1].arguments == {"content": "It is rainy in Paris."}
