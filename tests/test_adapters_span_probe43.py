"""Span exports of round 43's probe D read through the public reader: Google ADK 2.13 and smolagents 1.26 under
OpenInference's instrumentors, OpenLIT's smolagents spans.

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


def test_smolagents_managed_agent_call_has_the_sub_agents_result_and_time() -> None:
    """Bug (probe D, D5: smolagents 1.26 under ``openinference-instrumentation-smolagents`` 0.1.43): a managed
    agent's call has no TOOL span, only the sub-agent's ``weather_agent.run`` AGENT span beside the model call that
    asked for it; the ``weather_agent`` step had no result and ended when the model call did, before the sub-agent
    started. Its result and interval are the sub-agent run's."""
    run = adapter_support.only(OI / "smolagents-1.26-oi-0.1.43-managed-agent.otlp.jsonl")
    call, answer = run.steps
    assert (call.action, call.arguments) == (
        "weather_agent", {"task": "Find the weather and population of Oslo", "additional_args": {}})
    assert call.observation == "None"  # what the sub-agent returned: it used up its steps
    assert (call.started_at.isoformat(), call.ended_at.isoformat()) == (
        "2026-12-04T15:05:27.188908+00:00", "2026-12-04T15:05:27.343313+00:00")
    assert (answer.action, answer.observation) == ("final_answer", "Team report: Oslo rainy 8 C; population unknown.")


def test_tool_call_ids_reused_across_turns_keep_each_turns_calls() -> None:
    """Bug (probe D, D7: OpenLIT 1.45 with smolagents 1.26, a server numbering tool-call ids per response as
    Xinference and TGI do): both turns' chat spans ask for ``call_get_weather_0`` / ``call_get_population_1`` with
    the same arguments, so the second was taken for the first recorded twice and dropped; the second turn's failing
    ``get_population`` (its span records no arguments) lost its arguments. A tool ran between them: two turns."""
    run = adapter_support.only(FIXTURES / "otel-genai" / ".real" / "probe43" /
                               "openlit-1.45-smolagents-reused-call-ids.otlp.jsonl")
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("get_weather", {"city": "Oslo"}), ("get_population", {"city": "Oslo"})] * 2
    assert [bool(s.error) for s in run.steps] == [False, True, False, True]


def test_tools_an_agents_last_model_call_asked_for_that_nothing_ran_are_marked_not_run() -> None:
    """R1-4 (review of D7; smolagents 1.26 under OpenInference 0.1.43, at its step limit): the final-answer call
    smolagents makes after its last step asked for ``get_weather`` and ``get_population`` again; no tool span ran
    them and no model call came after. They were steps with no observation and no error, tools that ran and
    printed nothing; they are kept (the model asked for them) and say they were not run. The whole probe file reads
    as 10 steps, its team files as 12; this excerpt keeps the last step and the final call."""
    run = adapter_support.only(OI / "smolagents-1.26-oi-0.1.43-last-step.otlp.jsonl")
    assert [(s.action, s.observation, s.error) for s in run.steps] == [
        ("get_weather", "Rainy, 8 C in Oslo", None),
        ("get_population", None, "ConnectionError: census service unreachable for Oslo"),
        ("get_weather", None, NOT_RUN),
        ("get_population", None, NOT_RUN)]
    assert run.steps[0].started_at is not None and run.steps[2].started_at is None


NOT_RUN = "not run: the agent stopped after its model asked for it (no tool span ran it, no later model call saw a result)"
