"""Google ADK tools that report failure by returning it, read through the public reader.

ADK sends a tool's dict to the model as it is; its docs ("Function tools") and samples have a tool fail without
raising by returning ``{"status": "error", "error_message": ...}``, so the tool's span has an OK status. The
fixtures are ADK 2.13 runs whose tools return such dicts: ADK's own spans (scope ``gcp.vertex.agent``,
``fixtures/otel-genai/.real/probeADK``) and the same SDK under OpenInference's ADK instrumentor
(``fixtures/openinference/.real/probe43``); see each SOURCE.md.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"


def test_adk_own_spans_tool_returning_status_error_is_a_step_error() -> None:
    """Bug (probe D, observation 2: ``google-adk`` 2.13, its own OTel spans): ``get_news`` returned
    ``{"status": "error", "error_message": ...}`` and the step had no error, so the failure was found by no error
    search. Its error is the tool's ``error_message``; the result stays as the model saw it, and the other branch's
    tool (no status) has no error."""
    run = adapter_support.only(FIXTURES / "otel-genai" / ".real" / "probeADK" /
                               "adk-2.13-news-tool-returns-error.latest.otlp.json")
    weather, news = run.steps[:2]
    assert (news.action, news.error) == ("get_news", "news service unreachable for Zürich")
    assert news.observation == '{"status": "error", "error_message": "news service unreachable for Zürich"}'
    assert (weather.action, weather.error) == ("get_weather", None)


def test_openinference_adk_tool_returning_status_error_is_a_step_error() -> None:
    """The same under ``openinference-instrumentation-google-adk`` 1.0.5 (the TOOL span's ``output.value`` the whole
    ``FunctionResponse``): ``get_population``'s ``status: error`` is its step's error; ``get_weather``'s
    ``status: success`` is no error."""
    run = adapter_support.only(FIXTURES / "openinference" / ".real" / "probe43" /
                               "adk-2.13-oi-adk-1.0.5-parallel-tools.otlp.jsonl")
    assert [(s.action, s.error) for s in run.steps] == [
        ("get_weather", None), ("get_population", "No census data for Oslo"), ("respond", None)]


def test_adk_function_tools_error_dict_is_the_step_error_not_its_bare_type() -> None:
    """ADK's own ``FunctionTool`` answers a call missing a mandatory argument with ``{"error": "Invoking ...
    failed ..."}`` (ADK takes a dict with an ``error`` for a failure); ADK 2.x marks that span with nothing but
    ``TOOL_ERROR``, which was the step's whole error. The error is the words the model was given."""
    run = adapter_support.only(FIXTURES / "otel-genai" / ".real" / "probeADK" /
                               "adk-2.13-missing-argument.latest.otlp.json")
    missing, called = run.steps[:2]
    assert missing.action == "get_weather" and missing.error is not None
    assert missing.error.startswith("Invoking `get_weather()` failed as the following mandatory input parameters")
    assert (called.arguments, called.error) == ({"city": "Oslo"}, None)
