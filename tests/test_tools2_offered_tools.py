"""Round 33 (TOOLS2): the tools a run was offered, from three more sources read through ``_otlp.span_offered`` /
``offered_tools`` into ``Node.info[OFFERED]``: LiteLLM's ``llm.request.functions.<i>.name``, pydantic-ai's
``model_request_parameters`` (its ``function_tools``, ``native_tools`` / ``builtin_tools``, ``output_tools``), and a
Langfuse generation whose ``input`` holds the request's ``tools``. On main each of these runs had no tool list, so
``--tool`` found them only by the tools they called. Fixtures: the real files named below (README.md beside each).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_support import runs

FIXTURES = Path(__file__).parent / "fixtures"


def test_litellm_runs_list_the_functions_their_requests_offered() -> None:
    """LiteLLM's OTel callback writes ``llm.request.functions.<i>.name`` on its model-call span; each of the three
    calls offered both tools, whichever (or none) it called."""
    listed = [(run.tools_used, run.tools_available)
              for run in runs(FIXTURES / "otel-genai/.real/litellm_default.traces.jsonl")]
    assert listed == [(["get_weather"], ["get_weather", "get_population"]),
                      (["get_population"], ["get_population", "get_weather"]),
                      (["respond"], ["get_weather", "get_population"])]


def test_pydantic_ai_runs_in_langfuse_list_their_request_parameters_tools() -> None:
    """pydantic-ai's ``model_request_parameters`` in a Langfuse export: an object (1.26: five function tools, three
    called, and the output tool ``final_result``)."""
    (jokes,) = runs(FIXTURES / "langfuse/.tools2/pydantic-ai-tools-2025-12-04.json")
    assert jokes.tools_available == ["get_pun_suggestion", "get_dad_joke_suggestion", "get_one_liner_suggestion",
                                     "final_result", "get_car_joke_suggestion", "get_tree_joke_suggestion"]


@pytest.mark.parametrize(("name", "tools"), [("pa-2.78-web-search-answer", ["web_search"]),
                                             ("pa-2.78-google-code-execution-fails-then-runs", ["code_execution"])])
def test_pydantic_ai_otlp_runs_list_their_built_in_tools(name: str, tools: list[str]) -> None:
    """Over OTLP ``model_request_parameters`` is a JSON text whose 2.x ``native_tools`` name a provider's built-in
    tool by its ``kind``, the name its calls carry."""
    (run,) = runs(FIXTURES / f"otel-genai/.real/probeD47/{name}.otlp.json")
    assert run.tools_available == tools


def test_langfuse_generations_list_the_tools_their_input_offered() -> None:
    """The Langfuse v2 SDK's OpenAI integration records a chat completion's request as the generation's ``input``:
    ``{"messages", "tools"}``, the tools in the Chat Completions API's ``{"type": "function", "function"}`` shape."""
    (run,) = runs(FIXTURES / "langfuse/.real/lf2_observe_openai.ingestion.jsonl")
    assert run.tools_available == ["get_weather", "get_population", "convert_temperature"]
