"""Agent frameworks' own spans as their released instrumentation writes them: probe D of round 42
(probe D of round 42, defects D5-D8; generators in fixtures/otel-genai/.released/generators).

Fixtures: ``fixtures/otel-genai/.released/`` and ``fixtures/openinference/.released/`` (sources in the
``SOURCE.md`` beside them): spans the real, unmodified PyPI packages wrote (OTel SDK 1.45.2's own OTLP/JSON
encoder, one export request per line, as the collector's file exporter writes) around a local stand-in model
server, trimmed to the spans of one run. Everything goes through the public reader (``read_dump``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
OTEL = FIXTURES / "otel-genai" / ".released"
OPENINFERENCE = FIXTURES / "openinference" / ".released"


def test_langgraph_model_error_is_one_step_for_the_failed_call_not_one_per_chain() -> None:
    """D8 (langgraph 1.2.24 ``create_react_agent`` + opentelemetry-instrumentation-langchain 0.62.4, the model
    answering HTTP 500): the call's exception, with the same status on every chain it left, gave a "chain X failed"
    step for ``RunnableSequence``, ``call_model``, ``agent`` and ``LangGraph.workflow``, and none for the model call
    that failed."""
    run = only(OTEL / "langgraph-1.2-openllmetry-0.62-model-500.otlp.jsonl")
    [step] = run.steps
    assert step.action is None and step.observation == "llm ChatOpenAI.chat failed" and step.thought is None
    assert step.error is not None and "Error code: 500" in step.error
    assert run.outcome is Outcome.infra_error and run.failure is not None and "500" in run.failure.error


CREW_TASKS = "What is the weather in London and Berlin?\nWrite a one-line weather report."


@pytest.mark.parametrize("path", [OTEL / "crewai-1.15-openllmetry-0.62-with-openai.otlp.jsonl",
                                  OTEL / "crewai-1.15-openllmetry-0.62-crewai-only.otlp.jsonl",
                                  OPENINFERENCE / "crewai-1.15-openinference-crewai-1.1.21-only.otlp.jsonl"],
                         ids=lambda p: p.name)
def test_a_crews_task_is_its_tasks_descriptions_and_its_answer_the_crews_result(path: Path) -> None:
    """D5 / D6 (crewai 1.15.30, a sequential crew of two tasks): under OpenLLMetry with the OpenAI instrumentor the
    task was CrewAI's prompt template ("Current Task: ... you MUST return the actual complete content ..."), the
    second task nowhere; with its CrewAI instrumentor alone "crewai.workflow (no input recorded)", no answer; under
    OpenInference's CrewAI instrumentor alone a JSON dump of the first agent's config, no answer. The tasks are in
    ``crewai.crew.tasks`` / ``crew_tasks``, the answer in ``crewai.crew.result`` / the ``CrewOutput``'s ``raw``."""
    run = only(path)
    assert run.task == CREW_TASKS
    assert run.steps[-1].action == "respond" and run.steps[-1].arguments == {"content": "Hello there!"}
    assert "task_source" not in run.metadata


@pytest.mark.parametrize(("name", "task"), [
    ("haystack-3.4-agent.otlp.jsonl", "What is the weather in London and Berlin?"),
    ("haystack-3.4-agent-in-pipeline.otlp.jsonl", "What is the weather in London and Berlin? (pipeline)"),
])
def test_a_haystack_agent_traced_by_haystacks_own_tracer_is_read(name: str, task: str) -> None:
    """D7 (haystack-ai 3.4.1 ``Agent`` with ``OpenAIChatGenerator`` and a ``get_weather`` tool, traced by
    opentelemetry-haystack 2.0.0 with content tracing; run directly and as a ``Pipeline`` component): the file was an
    "unrecognised dump format", and forced as otel-genai "not an agent run ... and no input", though
    ``haystack.agent.input`` holds the request, the ``.step.llm`` / ``.step.tool`` spans the calls and results."""
    run = only(OTEL / name)
    assert run.task == task
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("get_weather", {"city": "London"}, "London: 18C cloudy"),
        ("get_weather", {"city": "Berlin"}, "Berlin: 18C cloudy"),
        ("respond", {"content": "Summary: London: 18C cloudy; Berlin: 18C cloudy"}, None),
    ]
    assert run.model_id == "gpt-4o-2024-08-06" and run.metadata["source_format"] == "otel-genai"


def test_a_haystack_pipeline_without_an_agent_is_said_to_be_one() -> None:
    """D7: a Haystack pipeline's own spans (here the ``haystack.pipeline.run`` span of the pipeline above, alone) hold
    no agent run; detection says what they are rather than "unrecognised dump format"."""
    with pytest.raises(ValueError, match="Haystack pipeline spans .* not an agent run"):
        detect_format(OTEL / "haystack-3.4-pipeline-span-only.otlp.jsonl")
