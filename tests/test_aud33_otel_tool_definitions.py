"""Round 33 audit of the OpenTelemetry span adapters against the GenAI semantic conventions after 1.41.

``gen_ai.tool.definitions`` (on ``invoke_agent`` and model-call spans, and on the
``gen_ai.client.inference.operation.details`` event) says which tools the agent had; it was read nowhere, so every
OTel run had an empty ``tools_available`` (which filters and the staleness check read), even one that failed before
calling any tool. A ``gen_ai.evaluation.result`` written as a log record (not a span event) was dropped.
Fixtures: ``fixtures/otel-genai/.aud33`` (README.md there) and the real files named below.
"""

from __future__ import annotations

from pathlib import Path

from adapter_support import runs
from trajsearch.model import Outcome

OTEL = Path(__file__).parent / "fixtures" / "otel-genai"
AUD33 = OTEL / ".aud33"


def test_agent_that_failed_before_any_tool_keeps_the_tools_it_had() -> None:
    """opentelemetry-util-genai's ``invoke_agent planner`` span lists ``get_weather``; its first model call got
    HTTP 500: no step, an infra error, and the tool it was given."""
    (run,) = runs(AUD33 / "util-genai-1.1-model-500-before-any-tool.otlp.jsonl")
    assert (run.outcome, run.steps, run.task) == (Outcome.infra_error, [], "please fail now")
    assert run.tools_available == ["get_weather"]


def test_workflow_of_two_agents_lists_their_tools_once() -> None:
    """An ``invoke_workflow`` span over two ``invoke_agent`` spans that each list ``get_weather``."""
    (run,) = runs(AUD33 / "util-genai-1.1-workflow-two-agents.otlp.jsonl")
    assert run.metadata["root_span"] == "invoke_workflow trip_planner"
    assert run.tools_available == ["get_weather"]
    assert "tools_offered" not in run.metadata


def test_each_shape_of_tool_definitions_names_its_tools() -> None:
    """The Chat Completions shape (Semantic Kernel), a built-in tool named by its type (google-genai), Mastra's bare
    names, ADK's definitions on the inference details log event rather than on a span, and Strands' own
    ``gen_ai.agent.tools`` (a JSON list of names)."""
    cases = {".real/semantic-kernel-spans.otlp.json": ["WeatherPlugin-get_weather",  # the called first
                                                       "WeatherPlugin-convert_temperature"],
             ".real/probeD47/ggenai-1.3b0-function-call-then-code.otlp.json": ["get_weather", "code_execution"],
             ".real/mastra1.71_agent.traces.jsonl": ["get_weather", "get_population"],
             ".real/adk-event-only-logs.console.json": ["get_weather", "convert_temperature"],
             ".real/strands-latest-conventions.otlp.json": ["get_weather", "get_population"]}
    for name, tools in cases.items():
        assert [run.tools_available for run in runs(OTEL / name)] == [tools], name


def test_evaluation_result_log_record_is_the_runs_evaluation() -> None:
    """Splunk's util-genai writes each evaluator verdict as a ``gen_ai.evaluation.result`` log record of the judged
    ``invoke_agent`` span (not a span event): its name, label, score and explanation were dropped with the log. A
    relevance score decides no outcome; it is kept, and is the reward. Its ``gen_ai.agent.tools`` are the tools."""
    (run,) = runs(AUD33 / "splunk-util-genai-0.1.15-evaluation-log.otlp.jsonl")
    assert run.metadata["evaluations"] == [
        {"name": "relevance", "label": "Not Relevant", "score": 0.1,
         "explanation": "The answer gives opening hours; the question asked for the refund window."}]
    assert (run.outcome, run.reward, run.tools_available) == (Outcome.unknown, 0.1, ["lookup_policy"])
