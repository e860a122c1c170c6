"""Span exports of probes D, F and A (round 45) whose steps were assembled wrong, read through the public reader.

The fixtures (``fixtures/openinference/.real/probeD45``, ``fixtures/otel-genai/.real/probeD45``, see their
SOURCE.md, and the ones named in each test) are what the released packages wrote, unmodified.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
OI_D = FIXTURES / "openinference" / ".real" / "probeD45"
OTEL_D = FIXTURES / "otel-genai" / ".real" / "probeD45"
OI_A = FIXTURES / "openinference" / ".real" / "probeA45"


# -- CrewAI: tools named for people, called by their function name (D2) -----------------------


def test_crewai_tool_with_a_display_name_is_one_step_per_call() -> None:
    """D2: CrewAI gives the model ``sanitize_tool_name("Weather Lookup") == "weather_lookup"``, while OpenInference's
    TOOL span names the tool "Weather Lookup" and records no call id. Each call was two steps, the model's copy of
    the failed one without its error. Now one step per call, with the span's time and error and the model's
    thought, in the order the model asked (CrewAI ran the two in a thread pool; the second started first)."""
    run = adapter_support.only(OI_D / "crewai-1.15-oi-1.1.21-spaced-tool-names-de.otlp.json")
    assert [s.action for s in run.steps] == ["Weather Lookup", "Hotel Price Search", "respond", "respond"]
    weather, hotel = run.steps[:2]
    assert weather.thought == "Ich prüfe Wetter und Hotels."
    assert weather.observation == "Sonnig, 24 °C in Lissabon" and weather.started_at is not None
    assert hotel.error == "ConnectionError: hotel API unreachable for Lissabon" and hotel.started_at is not None


def test_crewai_delegation_is_one_step_per_delegation() -> None:
    """D2, hierarchical crew: CrewAI's own "Delegate work to coworker" tool, called ``delegate_work_to_coworker``,
    was two steps per delegation (the model's call without a time, then the tool span)."""
    run = adapter_support.only(OI_D / "crewai-1.15-oi-1.1.21-hierarchical-de.otlp.json")
    assert [s.action for s in run.steps] == [
        "Delegate work to coworker", "get_weather", "Delegate work to coworker", "respond"]
    first = run.steps[0]
    assert first.thought == "Ich delegiere die Recherche."
    assert first.arguments["coworker"] == "Reiseforscher" and first.started_at is not None
    assert all(s.started_at is not None for s in run.steps)


def test_crewai_tool_that_raised_is_a_failed_step_without_a_tool_span() -> None:
    """D4: OpenLLMetry traces no CrewAI tool; a tool that raised is only CrewAI's fixed text handed to the model,
    ``f"Error executing tool: {e}"``. It read as a successful result ("errors 0"); now it is the step's error."""
    run = adapter_support.only(OTEL_D / "crewai-1.15-openllmetry-0.62.4-spaced-tool-names-de.otlp.json")
    assert [s.action for s in run.steps] == ["weather_lookup", "hotel_price_search", "respond", "respond"]
    weather, hotel = run.steps[:2]
    assert weather.error is None
    assert hotel.error == "Error executing tool: hotel API unreachable for Lissabon"


# -- CrewAI traced by its OpenInference instrumentor alone: each task's result (D5) ----------


def test_crewai_task_results_without_model_spans_are_each_agents_answer() -> None:
    """D5: with no LLM span, the researcher's result (given to the writer as context) was in no step: only the crew's
    final answer was. Each task's ``TaskOutput.raw`` on its ``_execute_core`` span is now its agent's answer."""
    run = adapter_support.only(OI_D / "crewai-1.15-oi-1.1.21-sequential-no-openai-instr-de.otlp.json")
    assert [s.action for s in run.steps] == ["get_weather", "get_hotel_prices", "respond", "respond"]
    researcher, writer = (s.arguments["content"] for s in run.steps[2:])
    assert researcher == "- Wetter: sonnig, 24 °C\n- Hotelpreise: nicht verfügbar (API nicht erreichbar)"
    assert writer.startswith("Lissabon lockt mit Sonne und 24 °C.")
    assert run.steps[1].error == "ConnectionError: hotel API unreachable for Lissabon"


# -- Agent Framework: a handoff its middleware answered (D6) ---------------------------------


def test_agent_framework_handoff_has_its_result_and_time() -> None:
    """D6: the handoff middleware answers ``handoff_to_billing`` itself (no ``execute_tool`` span) and the next
    agent's input leaves the answer out; only ``invoke_agent triage``'s output messages hold it. The step had no
    result and no time; now the middleware's answer, at the end of the model call that asked."""
    results = list(read_dump(OTEL_D / "af-1.26-handoff-refund-de.otlp.json"))  # (and the workflow.build trace)
    [run] = [r.trajectory for r in results
             if r.ok and r.trajectory.trajectory_id == "otel:471742c3fd8992f6e36a2d266fb6761b"]
    assert [s.action for s in run.steps] == ["handoff_to_billing", "lookup_order", "refund_order", "respond"]
    handoff = run.steps[0]
    assert handoff.observation == '{"handoff_to": "billing"}' and handoff.error is None
    assert handoff.thought == "Ich leite Sie an die Buchhaltung weiter."
    assert handoff.started_at is not None and handoff.started_at < run.steps[1].started_at


# -- Agents SDK: what the model said that the SDK refused (F2) -------------------------------

AGENTS_F = FIXTURES / "openai-agents" / ".real" / "probeF45" / "oai-agents-0.24-ghost-tool-bad-json.jsonl"


def _agents_run(trace_id: str) -> Trajectory:
    return next(r for r in adapter_support.runs(AGENTS_F) if r.trajectory_id == f"oai-agents:{trace_id}")


def test_agents_call_of_a_tool_the_agent_lacks_is_that_calls_error() -> None:
    """F2: the model called ``launch_rocket``, which the agent lacks; the SDK runs nothing, marks the turn span "Tool
    not found" ``{"tool_name": "launch_rocket"}`` and raises ``ModelBehaviorError``. The call read as a tool that ran
    and printed nothing, beside an unnamed step "chain turn 1 failed"; now the call is the one step, failed."""
    run = _agents_run("trace_7d749854b42a423f9a991a631a243e23")
    assert [s.action for s in run.steps] == ["launch_rocket"]
    [call] = run.steps
    assert (call.arguments, call.observation, call.error) == ({"target": "moon"}, None, "Tool not found: launch_rocket")
    assert run.outcome is Outcome.failure


def test_agents_answer_that_is_not_the_structured_output_is_the_answers_error() -> None:
    """F2: an agent with ``output_type=Weather`` answered ``{"city": "Lyon", "temp": ``; the SDK marks the turn span
    "Invalid JSON provided". The error was an unnamed step of its own after an answer with none."""
    run = _agents_run("trace_126d40969684460c81237a12e36c2054")
    assert [s.action for s in run.steps] == ["respond"]
    assert run.steps[0].error == "Invalid JSON provided"
    assert run.outcome is Outcome.failure


# -- Harbor's OTel export: words that came with a tool call (A3) ------------------------------


def test_harbor_otel_export_words_with_a_call_are_its_thought() -> None:
    """A3: harbor-atif2otel writes an agent step as an LLM span from its time to the next step's (the message as its
    output, no calls) and the step's calls as TOOL spans beside it, 1 ms after the step's time. The words came with
    the call, but read as two ``respond`` answers before each call; now the steps are those of the ATIF: the two
    calls, each with its words as thought, then ``finish`` with the last words, and no answer of the root's own."""
    run = adapter_support.only(OI_A / "harbor-0.26-atif2otel-0.1.1-openhands.otlp.jsonl")
    assert [s.action for s in run.steps] == ["execute_ipython_cell", "execute_ipython_cell", "finish"]
    first, second, finish = run.steps
    assert first.thought.startswith("Running Python code interactively: import random")
    assert second.thought == first.thought
    assert second.observation.startswith("The coin flip result is: Heads")
    assert finish.thought == "All done! What's next on the agenda?"
