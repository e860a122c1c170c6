"""OpenLLMetry (traceloop) 0.62.4 instrumentations of probe D (round 46) read through the public reader: LlamaIndex's
workflow agents (a ``call_tool`` step is a tool call; a ReAct agent's final "Thought: ... Answer: ..."), Agno's
``FunctionExecutionResult`` reprs and team runs, Haystack's wrapper span around ``OpenAIChatGenerator``.

The fixtures (``fixtures/otel-genai/.real/probeD46`` and ``fixtures/openinference/.real/probeD46``, see their
SOURCE.md) are files the released packages wrote, whole or as a subset of their spans with every span left as written.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support
from trajsearch.ingest.detect import detect_format

FIXTURES = Path(__file__).parent / "fixtures"
PROBE = FIXTURES / "otel-genai" / ".real" / "probeD46"
FAILED = "census service unreachable for Hamburg"
ANSWER = "In Hamburg regnet es bei 8 °C; die Einwohnerzahl ist nicht abrufbar."


def test_llamaindex_react_agent_tool_calls_are_read_from_their_call_tool_spans() -> None:
    """A1 a (ReActAgent): the ``call_tool`` task spans (``tool.name``, ``tool.arguments``, LlamaIndex's
    ``ToolCallResult``) were chains, so the run had no tool step and each reasoning turn was an answer. They are
    the tool steps, the ReAct turn that asked for each its thought, and ``tool_output.is_error`` the step's error."""
    run = adapter_support.only(PROBE / "li-0.14-oll-0.62.4-react-de.subset.otlp.json")
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "respond"]
    weather, population, answer = run.steps
    assert weather.arguments == {"city": "Hamburg"} and weather.observation == "Hamburg: Regen, 8 °C"
    assert weather.error is None and weather.started_at is not None
    assert (weather.thought or "").startswith("Thought: Ich brauche das Wetter.")
    assert population.observation == FAILED and population.error == FAILED


def test_llamaindex_react_answer_is_the_answer_without_its_scaffolding() -> None:
    """A8 (OpenLLMetry's file and OpenInference's twin): the answer kept "Thought: ...\\nAnswer: ..."; it is the
    ``Answer:`` part, the thought the step's thought, as LlamaIndex's ``ReActOutputParser`` splits it."""
    twin = FIXTURES / "openinference" / ".real" / "probeD46" / "li-0.14-oi-li-react-de.subset.otlp.json"
    for path in (PROBE / "li-0.14-oll-0.62.4-react-de.subset.otlp.json", twin):
        answer = adapter_support.only(path).steps[-1]
        assert answer.action == "respond" and answer.arguments == {"content": ANSWER}
        assert answer.thought == "Ich kann antworten."


def test_llamaindex_function_agent_failed_tool_is_an_error_and_steps_have_times() -> None:
    """A1 b (FunctionAgent, both tools asked at once): the steps were rebuilt from the next model input, without
    times, and the failed ``get_population`` (``is_error: true``) was a success."""
    run = adapter_support.only(PROBE / "li-0.14-oll-0.62.4-single-de.subset.otlp.json")
    weather, population, answer = run.steps
    assert (weather.action, weather.error, weather.thought) == ("get_weather", None, "Ich prüfe beides.")
    assert population.action == "get_population" and population.error == FAILED
    assert weather.started_at is not None and population.started_at is not None
    assert answer.arguments == {"content": ANSWER}


def test_llamaindex_instrumentor_alone_is_a_run_with_its_request_and_tools() -> None:
    """A1 c (LlamaIndexInstrumentor without the OpenAI one: no model-call span): "unrecognised dump format", and
    forced, a tool's input as the task. Its ``traceloop.span.kind`` spans are OpenLLMetry's; the task is the user's
    words in LlamaIndex's ``AgentInput`` event, the tools their ``call_tool`` spans."""
    path = PROBE / "li-0.14-oll-0.62.4-single-no-openai-instr-de.subset.otlp.json"
    assert detect_format(path) == "otel-genai"
    run = adapter_support.only(path)
    assert run.task == "Wetter und Einwohnerzahl von Hamburg?"
    assert [(s.action, s.error) for s in run.steps] == [("get_weather", None), ("get_population", FAILED)]


def test_agno_tool_results_are_read_from_function_execution_result_reprs() -> None:
    """A2: every result was ``FunctionExecutionResult``'s repr and the failed tool (``status='failure'``) a
    success. The result is its ``result``; a failure's ``error`` is the step's error (and what the model saw)."""
    run = adapter_support.only(PROBE / "agno-3.1.10-oll-0.62.4-single-de.otlp.json")
    weather, population, _ = run.steps
    assert (weather.action, weather.observation, weather.error) == ("get_weather", "Hamburg: Regen, 8 °C", None)
    assert (population.action, population.observation, population.error) == ("get_population", FAILED, FAILED)


def test_agno_team_delegation_result_is_the_members_answer_and_the_run_is_the_teams() -> None:
    """A2, A7 (Team leader delegating to Researcher then Writer): each delegation's result was
    ``<generator object ...>``, and the run was labelled with the first member's name. The result is the member's
    answer the leader's next model call was given; the run's agent is the team (``agno.team.name``)."""
    run = adapter_support.only(PROBE / "agno-3.1.10-oll-0.62.4-team-de.subset.otlp.json")
    delegations = [s for s in run.steps if s.action == "delegate_task_to_member"]
    assert [s.observation for s in delegations] == [
        "Hamburg: Regen, 8 °C.", "Reisenotiz: Hamburg empfängt Sie mit Regen bei 8 °C – Schirm einpacken!"]
    assert run.metadata["agent_name"] == "Reise"


def test_haystack_wrapper_span_is_no_answer_and_a_failed_tool_is_an_error() -> None:
    """A3 (``haystack.components.agents.Agent``): OpenLLMetry's ``haystack.openai.chat`` span records the
    generator's result dict's key, "replies", as its completion, so each model call added an answer "replies"
    (the run's last); and the tool Haystack's ToolInvoker caught ("Failed to invoke Tool ... Error: ...") was a
    success."""
    run = adapter_support.only(PROBE / "haystack-2.31-oll-0.62.4-agent-de.subset.otlp.json")
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "respond"]
    assert run.steps[-1].arguments == {"content": ANSWER}
    population = run.steps[1]
    assert population.error and population.error.startswith("Failed to invoke Tool `get_population`")
    assert run.steps[0].error is None


def test_llamaindex_legacy_agent_step_with_a_tool_event_is_no_second_tool_call() -> None:
    """Review 1, D1 (llama-index 0.12 ``FunctionCallingAgent``): OpenLLMetry copies LlamaIndex's
    ``AgentToolCallEvent`` (``tool.name``, ``tool.description``) onto the agent step span around the model call and
    the tool, so reading every task with ``tool.name`` as a tool gave ``get_weather`` twice, one observation the
    step's ``TaskStepOutput`` JSON. Only a ``call_tool`` span (no ``tool.description``) is a tool call."""
    path = FIXTURES / "otel-genai" / ".real" / "rev1-46" / "li-0.12.52-oll-0.62.4-legacy-fcagent-de.subset.otlp.json"
    run = adapter_support.only(path)
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    assert run.steps[0].observation == "Hamburg: Regen, 8 °C" and run.steps[0].error is None
