"""Round 30 audit of the tracing-SDK adapters, on files the newest released instrumentations wrote (see the fixtures'
README.md / SOURCE.md).

MLflow (``mlflow.openai.autolog()``, ``@mlflow.trace``, DSPy's autolog) writes spans in its own convention; its OTLP
export keeps it unless ``MLFLOW_ENABLE_OTEL_GENAI_SEMCONV`` is set, and a trace saved or fetched from MLflow or
Databricks (``Trace.to_dict()``) is in it too. Such a file was refused ("does not read yet") although it holds the
whole run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter_support import only, runs
from trajsearch.ingest.detect import detect_format
from trajsearch.model import Outcome, Trajectory

OTEL = Path(__file__).parent / "fixtures" / "otel-genai"
OPENINFERENCE = Path(__file__).parent / "fixtures" / "openinference" / ".real"
MLFLOW_GENAI = OTEL / ".audotel30" / "mlflow-3.17-openai-autolog.genai-semconv.otlp.jsonl"
DATABRICKS = OTEL / ".real" / "mlflow" / "databricks-agent-trace.mlflow.json"


def _read(run: Trajectory) -> tuple:
    """What a run says, apart from its id: task, model, agent and each step."""
    return (run.task, run.model_id, run.metadata.get("agent_name"),
            [(s.action, s.arguments, s.observation, s.error) for s in run.steps])


@pytest.mark.parametrize("name", ["mlflow-3.17-openai-autolog.otlp.jsonl", "mlflow-3.17-openai-responses.otlp.jsonl"])
def test_mlflow_own_convention_over_otlp_is_the_run_its_genai_export_gives(name: str) -> None:
    """MLflow 3.17's default OTLP export of an autologged OpenAI tool loop (Chat Completions, or the same loop on the
    Responses API) is read as the same run as its GenAI semantic-convention export of the loop: the user's question,
    each tool span a step with its arguments and result (the raising one with its error), the answer, the model and
    the agent's name."""
    assert detect_format(OTEL / ".audotel30" / name) == "otel-genai"
    own, genai = only(OTEL / ".audotel30" / name), only(MLFLOW_GENAI)
    assert _read(own) == _read(genai)
    assert own.task == "What's the weather and population of Oslo?"
    assert own.model_id == "gpt-4o-mini-2024-07-18" and own.metadata["agent_name"] == "city_agent"
    weather, population, answer = own.steps
    assert (weather.action, weather.arguments, weather.observation) == ("get_weather", {"city": "Oslo"},
                                                                       "Rainy, 8 C in Oslo")
    assert population.action == "get_population" and population.arguments == {"city": "Oslo"}
    assert population.error == "ConnectionError: census service unreachable"
    assert answer.action == "respond" and "population service failed" in answer.arguments["content"]


def test_mlflow_anthropic_autolog_call_is_read_from_the_messages_api_request_and_reply() -> None:
    """``mlflow.anthropic.autolog()`` keeps the Messages API request and reply whole: the reply's ``tool_use`` blocks
    are the calls the tool spans ran, its text before them their thought."""
    run = only(OTEL / ".audotel30" / "mlflow-3.17-anthropic-autolog.otlp.jsonl")
    assert run.task == "What's the weather and population of Oslo?" and run.model_id == "claude-sonnet-4-5"
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "respond"]
    weather, population, answer = run.steps
    assert weather.thought == "Let me look both up." and weather.observation == "Rainy, 8 C in Oslo"
    assert population.error == "ConnectionError: census service unreachable"
    assert answer.arguments == {"content": "Oslo is rainy at 8 C; the population service failed."}


def test_mlflow_langgraph_autolog_run_that_a_tool_ended_is_a_failure_with_its_calls() -> None:
    """``mlflow.langchain.autolog()`` of a LangGraph ReAct agent whose tool raised (the graph re-raises it): the
    graph's request is the task, the model call's tool calls are the steps the tool spans ran, and the run failed
    with the tool's exception."""
    run = only(OTEL / ".audotel30" / "mlflow-3.17-langgraph-1.2-react-tool-raises.otlp.jsonl")
    assert run.task == "What's the weather and population of Oslo?" and run.model_id == "gpt-4o-mini"
    assert [(s.action, s.arguments) for s in run.steps] == [("get_weather", {"city": "Oslo"}),
                                                            ("get_population", {"city": "Oslo"})]
    assert run.steps[0].observation == "Rainy, 8 C in Oslo"
    assert run.steps[1].error == "ConnectionError: census service unreachable"
    assert run.outcome == Outcome.failure and run.failure is not None
    assert run.failure.error == "ConnectionError: census service unreachable"


def test_mlflow_trace_json_is_read_as_its_request_and_answer() -> None:
    """A Databricks agent's MLflow trace (``{"info", "data": {"spans"}}``: a ResponsesAgent ``predict`` span over a
    ``CHAT_MODEL`` call) is the user's question and the model's answer, with the model the reply names (the request's
    is ``<redacted>``)."""
    run = only(DATABRICKS)
    assert run.task == "What is a good apple pie recipe to use on Thanksgiving"
    assert run.model_id == "gpt-4.1-2025-04-14"
    [answer] = run.steps
    assert answer.action == "respond" and answer.arguments["content"].startswith("Absolutely! Here")


def test_mlflow_dspy_react_is_its_tool_calls_with_the_model_text_before_each() -> None:
    """DSPy under ``mlflow.dspy.autolog()``: each ``Predict.forward`` module span (typed ``LLM``, the signature's
    fields in) is a step around its ``LM.__call__`` model call, not a model call of its own that made a step of its
    JSON output; the ``LM``'s completions (a list of strings) are the model's text; ``Tool.get_weather`` is the
    ``get_weather`` the model called."""
    run = only(OTEL / ".audotel30" / "mlflow-3.17-dspy-3.4-react.otlp.jsonl")
    assert run.task == "What's the weather and population of Oslo?"
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "respond", "respond"]
    weather, population, _, answer = run.steps
    assert weather.arguments == {"city": "Oslo"} and weather.observation == "Rainy, 8 C in Oslo"
    assert "I need the weather first." in (weather.thought or "")
    assert population.error == "ConnectionError: census service unreachable"
    assert "Oslo is rainy at 8 C; the population service failed." in answer.arguments["content"]


def _as_mlflow_stored(source: Path, folder: Path) -> Path:
    """``source`` (OTLP/JSON, a document or one request a line) with what MLflow's store adds to another tracer's
    spans (``mlflow/tracing/otel/translation``: ``translate_loaded_span`` / ``translate_span_when_storing``): the
    span type its convention's kind stands for, and copies of its input and output, JSON-encoded as MLflow keeps
    them."""
    types = {"LLM": "LLM", "TOOL": "TOOL", "AGENT": "AGENT", "CHAIN": "CHAIN", "chat": "CHAT_MODEL",
             "execute_tool": "TOOL", "invoke_agent": "AGENT"}

    def add(doc: dict) -> dict:
        for resource in doc["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    said = {a["key"]: a["value"].get("stringValue") for a in span.get("attributes", [])}
                    kind = types.get(said.get("openinference.span.kind") or said.get("gen_ai.operation.name") or "")
                    if kind:
                        span["attributes"] += [{"key": key, "value": {"stringValue": value}} for key, value in (
                            ("mlflow.spanType", json.dumps(kind)),
                            ("mlflow.spanInputs", said.get("input.value") or said.get("gen_ai.input.messages")),
                            ("mlflow.spanOutputs", said.get("output.value") or said.get("gen_ai.output.messages")))
                            if value]
        return doc

    text = source.read_text()
    lines = [json.dumps(add(json.loads(text)))] if source.suffix == ".json" else \
        [json.dumps(add(json.loads(line))) for line in text.splitlines() if line.strip()]
    (stored := folder / source.name).write_text("\n".join(lines) + "\n")
    return stored


@pytest.mark.parametrize("source", [
    OPENINFERENCE / "autogen_single.otlp.json",
    OPENINFERENCE / "dspy-react.otlp.json",
    OPENINFERENCE / "llamaindex-function-agent-plus-openai.otlp.json",
    OTEL / ".real" / "oai-agents-otel-v2-0.1-chat.otlp.jsonl",
])
def test_other_tracers_spans_that_mlflow_stored_read_as_without_its_keys(source: Path, tmp_path: Path) -> None:
    """MLflow's store adds ``mlflow.spanType`` / ``spanInputs`` / ``spanOutputs`` to the OpenInference and GenAI
    spans it keeps; those spans are read by their own convention, as before: no tool call twice (autogen), no
    wrapper's ``{"kwargs"}`` arguments (DSPy), no ``FunctionTool.acall`` step or message-object text (LlamaIndex), no
    span name as the agent's name (the Agents SDK under opentelemetry-instrumentation-openai-agents-v2)."""
    stored = _as_mlflow_stored(source, tmp_path)
    assert detect_format(stored) == detect_format(source)
    assert [_read(run) for run in runs(stored)] == [_read(run) for run in runs(source)]


@pytest.mark.parametrize("bad_type", ['["TOOL"]', '{"type": "TOOL"}'])
def test_mlflow_span_type_that_is_no_name_leaves_the_rest_of_the_run_whole(bad_type: str, tmp_path: Path) -> None:
    """A span whose ``mlflow.spanType`` is a JSON list or object (no span type MLflow writes) is read as a
    span of no type; the record is not lost to a ``TypeError``, and the run keeps its task, tool calls and answer."""
    source = OTEL / ".audotel30" / "mlflow-3.17-openai-autolog.otlp.jsonl"
    bad = tmp_path / source.name
    bad.write_text(source.read_text().replace('"\\"TOOL\\""', json.dumps(bad_type), 1))
    assert bad.read_text() != source.read_text()
    run = only(bad)
    assert run.task == "What's the weather and population of Oslo?"
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "respond"]
    assert run.steps[-1].arguments["content"] == "Oslo is rainy at 8 C; the population service failed."


def test_mlflow_2_trace_json_names_the_model_its_reply_names() -> None:
    """An MLflow 2.16 ``Trace.to_json()`` (old span layout) of a Bedrock chat model: the question, the answer, and the
    model the reply names (``"model": "anthropic.claude-v2"``), the request naming none."""
    run = only(OTEL / ".audotel30" / "mlflow-2.16-bedrock-blog.trace.json")
    assert run.task.startswith("When is the next launch window for Mars?")
    assert run.model_id == "anthropic.claude-v2"
    [answer] = run.steps
    assert answer.action == "respond" and answer.arguments["content"].startswith("Based on the provided spacecraft")


def test_text_file_quoting_an_mlflow_span_is_no_span_file() -> None:
    """A Markdown chat export that quotes an MLflow span line is not detected as MLflow spans (it was: twelve
    "malformed JSON" rejections of its lines and a "not an agent run"); it stays unrecognised, as on main."""
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(OTEL / ".audotel30fix" / "cursor-chat-quoting-mlflow.md")
