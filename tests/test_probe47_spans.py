"""Span exports of probe D (round 47), read through the public reader: tools the model's provider ran (server /
built-in tools: web search, code execution, image generation, an MCP server the provider calls) recorded inside the
model call's own output messages, as pydantic-ai's instrumentation and the GenAI semantic conventions'
``server_tool_call`` parts write them.

The fixtures (``fixtures/otel-genai/.real/probeD47``, see its SOURCE.md) are files the released packages wrote, or,
where no package at hand writes the shape, the writer's own expected output put in an OTLP/JSON span.
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
D47 = FIXTURES / "otel-genai" / ".real" / "probeD47"


def test_a_provider_run_web_search_keeps_its_result_and_the_answer_after_it() -> None:
    """pydantic-ai 2.78 with the ``WebSearch`` capability on OpenAI Responses: the model's one message holds the
    search call, its result (``tool_call_response``, ``builtin: true``) and the answer. The result and the answer
    were read as the model's words before the call: the search had no result, its thought was the result's JSON
    followed by the answer, and the run had no answer at all."""
    run = adapter_support.only(D47 / "pa-2.78-web-search-answer.otlp.json")
    search, answer = run.steps
    assert (search.action, search.arguments) == ("web_search", {"type": "search", "query": "Lisbon weather today"})
    assert search.observation is not None and "ipma.pt" in search.observation and search.error is None
    assert search.thought is None
    assert answer.action == "respond" and answer.arguments["content"].startswith("Lisbon today: sunny, a high of 24")


OI = FIXTURES / "openinference" / ".real" / "probeD47"


def test_the_same_search_through_openinferences_pydantic_ai_processor_keeps_result_and_answer() -> None:
    """The same run through ``openinference-instrumentation-pydantic-ai``'s span processor (read by the
    ``openinference`` adapter) lost the answer into the search's thought the same way."""
    run = adapter_support.only(OI / "pa-2.78-oi-pa-0.1.30-web-search-answer.otlp.json")
    assert [(s.action, s.error) for s in run.steps] == [("web_search", None), ("respond", None)]
    search, answer = run.steps
    assert search.observation is not None and "ipma.pt" in search.observation and search.thought is None
    assert answer.arguments["content"].startswith("Lisbon today: sunny, a high of 24")
    run = adapter_support.only(OI / "pa-2.78-oi-pa-0.1.30-web-search-then-tool.otlp.json")
    assert [s.action for s in run.steps] == ["web_search", "to_fahrenheit", "respond"]
    assert run.steps[0].observation is not None and run.steps[0].thought is None


def test_a_provider_run_search_before_an_app_tool_is_one_step_with_its_result() -> None:
    """The same agent with a function tool too: the model searches (the provider runs it) and asks for
    ``to_fahrenheit`` in one response; the app runs the tool, the next call answers. The search's result was its
    thought and it had no observation."""
    run = adapter_support.only(D47 / "pa-2.78-web-search-then-tool.otlp.json")
    assert [(s.action, s.error) for s in run.steps] == [("web_search", None), ("to_fahrenheit", None),
                                                        ("respond", None)]
    search, convert, answer = run.steps
    assert search.observation is not None and '"status": "completed"' in search.observation
    assert search.thought is None
    assert convert.observation == "75.2"
    assert answer.arguments["content"] == "Lisbon today: sunny, 24 °C (75.2 °F) at most."


def test_semconv_server_tool_call_parts_are_steps_with_their_results() -> None:
    """Microsoft.Extensions.AI's ``OpenTelemetryChatClient`` writes hosted tools (code interpreter, image
    generation, a provider-called MCP server) as the semantic conventions' ``server_tool_call`` /
    ``server_tool_call_response`` parts. Those parts were skipped: the run was one ``respond`` step saying
    "Processing with tools..." and the three tools the provider ran were lost."""
    run = adapter_support.only(D47 / "meai-server-tool-parts.otlp.json")
    assert run.task == "Execute code and generate an image"
    assert [s.action for s in run.steps] == ["code_interpreter", "image_generation", "myTool"]
    code, image, mcp = run.steps
    assert code.thought == "Processing with tools..."
    assert (code.arguments, code.observation) == ({"code": "print('hello')"}, "hello")
    assert image.observation is not None and "https://example.com/image.png" in image.observation
    assert mcp.arguments == {"param1": "value1"} and mcp.observation is not None and "Tool result" in mcp.observation
    assert not any(s.error for s in run.steps)


AGENTS = FIXTURES / "openai-agents" / ".real" / "probeD47"


def test_an_agents_sdk_hosted_web_search_is_a_step_with_its_result() -> None:
    """openai-agents 0.24 under Logfire's ``instrument_openai_agents()``: the response span's ``response`` holds a
    ``web_search_call`` item (OpenAI ran the hosted ``WebSearchTool`` inside the response) before the answer. The
    search was dropped: the run read as if the agent answered from memory."""
    run = adapter_support.only(AGENTS / "logfire-5.4-agents-0.24-web-search-answer.otlp.json")
    assert [s.action for s in run.steps] == ["web_search", "respond"]
    search, answer = run.steps
    assert search.arguments == {"type": "search", "query": "Oslo weather today"}
    assert search.observation is not None and "www.yr.no" in search.observation and search.error is None
    assert answer.arguments["content"].startswith("Oslo today: light snow")


def test_an_agents_sdk_hosted_search_beside_a_function_tool_keeps_both() -> None:
    run = adapter_support.only(AGENTS / "logfire-5.4-agents-0.24-web-search-then-tool.otlp.json")
    assert [(s.action, s.error) for s in run.steps] == [("web_search", None), ("to_fahrenheit", None),
                                                        ("respond", None)]
    assert run.steps[0].observation is not None and '"status": "completed"' in run.steps[0].observation
    assert run.steps[1].observation == "26.6"


def test_an_agents_sdk_shell_command_that_exited_non_zero_is_the_steps_error() -> None:
    """openai-agents 0.24's ``ShellTool``: the SDK renders a failed command as its output then ``exit code: 1`` and
    records no span error (the executor did not raise). The failing test run read as a step that succeeded. It is
    the step's error now, in the failure's words; grep finding nothing (exit code 1, no output) is an answer, not a
    failure, as for every other shell tool trajsearch reads."""
    run = adapter_support.only(AGENTS / "agents-0.24-shell-tool-unittest-fails.jsonl")
    tests, grep = run.steps
    assert tests.action == grep.action == "shell"
    assert tests.arguments["commands"] == ["ls", "python3 -m unittest -q"]
    assert tests.error == "AssertionError: 3 != 4 (exit code 1)"
    assert grep.arguments["commands"] == ["grep -rn TODO calc.py"] and grep.error is None


def test_gemini_code_execution_as_server_tool_parts_keeps_each_run_and_its_failure() -> None:
    """opentelemetry-instrumentation-google-genai 1.3b0 writes Gemini's own code execution as id-less
    ``server_tool_call`` / ``server_tool_call_response`` parts in the model's output. Both runs of code were lost (the
    run was one ``respond`` step of the words before and after them); each is a step with its output now, paired by
    place, and the one whose ``outcome`` is ``OUTCOME_FAILED`` failed with its traceback."""
    run = adapter_support.only(D47 / "ggenai-1.3b0-code-execution-fails-then-runs.otlp.json")
    assert [s.action for s in run.steps] == ["code_execution", "code_execution", "respond"]
    failed, ran, answer = run.steps
    assert failed.thought == "I'll compute the mean with Python."
    assert failed.arguments == {"code": "values = []\nprint(sum(values) / len(values))", "language": "PYTHON"}
    assert failed.error is not None and "ZeroDivisionError: division by zero" in failed.error
    assert (ran.observation, ran.error) == ("6.0\n", None)
    assert answer.arguments["content"] == "The mean of 3, 5 and 10 is 6.0."


def test_a_hosted_search_written_as_its_python_repr_is_a_step_not_the_next_calls_thought() -> None:
    """opentelemetry-instrumentation-openai-agents-v2 0.1.0 writes a tool-calling Responses turn's items as their
    ``str()``: the web search OpenAI ran became the thought of the ``to_fahrenheit`` call, a 300-character
    ``ResponseFunctionWebSearch(...)`` repr. It is the search's step, with its query and sources."""
    run = adapter_support.only(D47 / "oai-agents-otel-v2-0.1-web-search-then-tool.otlp.json")
    assert [s.action for s in run.steps] == ["web_search", "to_fahrenheit", "respond"]
    search, convert, _ = run.steps
    assert search.arguments == {"query": "Oslo weather today"}
    assert search.observation is not None and "www.yr.no" in search.observation
    assert convert.thought is None and convert.observation == "26.6"


def test_a_provider_run_search_whose_status_is_failed_is_a_failed_step() -> None:
    """A hosted search OpenAI reports ``status: failed`` (pydantic-ai's built-in result, the Agents SDK's Responses
    item under Logfire) is that step's error, not a search that worked."""
    for path in (D47 / "pa-2.78-web-search-failed.otlp.json",
                 AGENTS / "logfire-5.4-agents-0.24-web-search-failed.otlp.json"):
        search, answer = adapter_support.only(path).steps
        assert (search.action, search.error) == ("web_search", "web_search failed"), path
        assert answer.action == "respond" and answer.error is None
    for path in (D47 / "pa-2.78-web-search-answer.otlp.json",
                 AGENTS / "logfire-5.4-agents-0.24-web-search-answer.otlp.json"):
        assert adapter_support.only(path).steps[0].error is None


def test_a_shell_command_that_exited_non_zero_fails_its_step_under_the_otel_instrumentor_too() -> None:
    """The same ShellTool run through opentelemetry-instrumentation-openai-agents-v2 0.1.0: the ``execute_tool
    shell`` span ends OK with ``exit code: 1`` in its result, and the turn's call is written as a
    ``ResponseFunctionShellToolCall(...)`` repr, which was each step's thought. The failing test run is the step's
    error, the repr the call it is."""
    run = adapter_support.only(D47 / "oai-agents-otel-v2-0.1-shell-tool-unittest-fails.otlp.json")
    tests, grep, answer = run.steps
    assert (tests.action, tests.error, tests.thought) == ("shell", "AssertionError: 3 != 4 (exit code 1)", None)
    assert tests.arguments == {"commands": ["ls", "python3 -m unittest -q"], "timeout_ms": 60000,
                               "max_output_length": 4096}
    assert (grep.action, grep.error, grep.thought) == ("shell", None, None)
    assert answer.action == "respond"
