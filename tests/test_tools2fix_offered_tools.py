"""Round 33 (TOOLS2 review fixes): which tools a pydantic-ai or Langfuse run lists as offered. A span whose
``model_request_parameters`` an attribute-length limit cut keeps its whole ``gen_ai.tool.definitions`` list; the
request's built-in tools are listed beside its function tools; a tool the request withheld is not listed; Langfuse's
OpenAI integration's legacy ``input.functions`` is read as ``input.tools``. Fixtures: ``.tools2fix`` folders, each
derived from a real file (README.md beside them says how)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import runs

FIXTURES = Path(__file__).parent / "fixtures"
OTEL = FIXTURES / "otel-genai/.tools2fix"


def test_a_cut_request_parameters_value_keeps_the_whole_definitions_list() -> None:
    """pydantic-ai 2.68 under ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=1024``: its ``model_request_parameters``
    (1555 characters) is cut, its ``gen_ai.tool.definitions`` (395) is whole; each run still lists the tool it was
    offered and did not call."""
    listed = [(run.tools_used, run.tools_available) for run in runs(OTEL / "pa-2.68-delegation-cut1024.otlp.json")]
    assert listed == [(["joke_factory"], ["joke_factory", "check_stock"]),
                      (["check_stock"], ["check_stock", "joke_factory"])]


def test_built_in_tools_are_listed_beside_the_function_tools() -> None:
    """pydantic-ai's own ``gen_ai.tool.definitions`` holds function and output tools only; the request's
    ``native_tools`` (``web_search``) is listed too, though this run never called it."""
    (run,) = runs(OTEL / "pa-2.78-web-search-offered-not-called.otlp.json")
    assert (run.tools_used, run.tools_available) == (["to_fahrenheit", "respond"], ["to_fahrenheit", "web_search"])


def test_tools_the_request_withheld_are_not_listed() -> None:
    """``defer_loading`` (no visibility entry) and ``tool_visibility: withheld`` keep a tool out of the request."""
    (run,) = runs(OTEL / "pa-2.78-web-search-tools-withheld.otlp.json")
    assert run.tools_available == ["web_search"]


def test_langfuse_generations_list_the_legacy_functions_their_input_offered() -> None:
    """The OpenAI integration records ``functions=`` as ``input.functions``: ``[{"name", "parameters"}]``."""
    (run,) = runs(FIXTURES / "langfuse/.tools2fix/lf2_observe_openai_functions.ingestion.jsonl")
    assert run.tools_available == ["get_weather", "get_population", "convert_temperature"]


def test_an_indexed_list_missing_its_first_items_names_no_tool() -> None:
    """LiteLLM's ``llm.request.functions.<i>.*`` with index 0 evicted (the SDK's attribute-count limit drops the
    oldest attributes): ``get_population`` alone would pass for the whole list; a partial list names none."""
    listed = [run.tools_available for run in runs(OTEL / "litellm_default-first-function-evicted.traces.jsonl")]
    assert listed == [[], [], []]


def test_definitions_that_name_no_tool_list_no_built_ins_alone(tmp_path: Path) -> None:
    """The definitions text cut mid-item (no length limit said so) names no tool: the span lists none, not its
    request's built-in ``web_search`` alone as if that were all it was offered (read-through RT3 3)."""
    source = OTEL / "pa-2.78-web-search-offered-not-called.otlp.json"
    text = source.read_text().replace('"stringValue": "[{\\"type\\":\\"function\\",\\"name\\":\\"to_fahrenheit\\",'
                                      '\\"description\\":\\"Celsius to Fahrenheit.\\"',
                                      '"stringValue": "[{\\"type\\":\\"function\\",\\"name\\":\\"to_fahr')
    cut = tmp_path / source.name
    cut.write_text(text)
    assert text != source.read_text()
    (run,) = runs(cut)
    assert run.tools_available == []
