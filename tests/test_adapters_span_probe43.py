"""OpenInference span exports of round 43's probe D read through the public reader: Google ADK 2.13 and smolagents
1.26 under OpenInference's instrumentors, OpenLIT's smolagents spans.

The fixtures (``fixtures/<format>/.real/probe43``, see each SOURCE.md) are trimmed from files the released
instrumentation packages wrote with the OTel SDK's own encoders.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
OI = FIXTURES / "openinference" / ".real" / "probe43"


def test_adk_two_model_calls_on_one_span_keep_the_thought_and_the_answer() -> None:
    """Bug (probe D, D1: ADK 2.13 under ``openinference-instrumentation-google-adk`` 1.0.5): both model calls of the
    turn are written onto one LLM span, the answer's text over the first call's, beside that call's
    ``tool_calls``; the answer was read as the thought of ``get_weather`` and the run had no answer. The span's
    own input history holds the first call's turn ("Checking both." and both calls), answered by the tools that
    ran inside it."""
    run = adapter_support.only(OI / "adk-2.13-oi-adk-1.0.5-parallel-tools.otlp.jsonl")
    assert [(s.action, s.thought) for s in run.steps] == [
        ("get_weather", "Checking both."), ("get_population", None), ("respond", None)]
    assert run.steps[2].arguments == {"content": "Oslo is rainy at 8 C; the census service is down."}


def test_adk_tool_result_is_the_response_inside_its_function_response() -> None:
    """Bug (probe D, D6: the same file): a TOOL span's ``output.value`` is the ADK ``FunctionResponse`` envelope
    (``{"id": "adk-…", "name", "response"}``); the observation is the tool's own result, as the model was sent it."""
    run = adapter_support.only(OI / "adk-2.13-oi-adk-1.0.5-parallel-tools.otlp.jsonl")
    assert [s.observation for s in run.steps[:2]] == [
        '{"status": "success", "report": "Rainy, 8 C in Oslo"}',
        '{"status": "error", "error_message": "No census data for Oslo"}']
