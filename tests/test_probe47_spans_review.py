"""Review of round 47's span fixes for tools the model's provider ran and the Agents SDK's ``ShellTool``, read
through the public reader on files the released packages wrote (``fixtures/openai-agents/.real/probeD47``,
``fixtures/otel-genai/.real/probeD47``: see each folder's SOURCE.md).
"""

from __future__ import annotations

from pathlib import Path

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
AGENTS = FIXTURES / "openai-agents" / ".real" / "probeD47"
D47 = FIXTURES / "otel-genai" / ".real" / "probeD47"


def test_a_shell_command_that_printed_exit_code_0_itself_is_no_failure() -> None:
    """The SDK writes ``exit code: N`` only for a non-zero code (``render_shell_outputs``); a command that prints the
    line itself (``...; echo "exit code: $?"``, as agents do to see the code) ended with ``exit code: 0``, and the
    passing test run was read as a failed step, ``OK (exit code 0)``."""
    tests, grep = adapter_support.only(AGENTS / "agents-0.24-shell-command-echoes-exit-code-0.jsonl").steps
    assert tests.action == "shell" and tests.observation is not None and tests.observation.endswith("exit code: 0")
    assert tests.error is None
    assert (grep.action, grep.error) == ("shell", None)


def test_gemini_code_run_twice_in_a_chat_keeps_each_turns_own_result() -> None:
    """Two chat turns each run the same code (Gemini runs it: id-less ``server_tool_call`` parts); the second turn's
    input history holds the first turn's run and result, which went to the second turn's step: both read
    10:15:02, the 10:17:45 the second run printed was lost."""
    run = adapter_support.only(D47 / "ggenai-1.3b0-chat-same-code-twice.otlp.json")
    assert [s.action for s in run.steps] == ["code_execution", "respond", "code_execution", "respond"]
    assert [s.observation for s in run.steps if s.action == "code_execution"] == ["10:15:02\n", "10:17:45\n"]


def test_a_code_run_after_a_function_call_in_one_turn_is_paired_with_the_code() -> None:
    """One Gemini response asks for ``get_weather`` and runs code, its result in the same message. The id-less result
    was paired with the turn's first call: ``get_weather`` read ``66.2`` (and lost the app's answer to it, which comes
    by id in the next call's input), the code run had no result."""
    run = adapter_support.only(D47 / "ggenai-1.3b0-function-call-then-code.otlp.json")
    weather, code, answer = run.steps
    assert (weather.action, weather.arguments) == ("get_weather", {"city": "Porto"})
    assert weather.observation is not None and '"temp_c": 19' in weather.observation
    assert (code.action, code.observation, code.error) == ("code_execution", "66.2\n", None)
    assert answer.arguments["content"] == "Porto: 19 C (66.2 F) and sunny."


def test_a_hosted_web_search_is_not_taken_by_an_app_tool_of_the_same_name() -> None:
    """One trace, two agents: one with OpenAI's hosted ``web_search`` (its call and result in the response), then one
    whose own function tool is named ``web_search``. The function span took the hosted call by name: the hosted
    search (``Oslo weather today``) was lost and the wiki search was two steps."""
    run = adapter_support.only(AGENTS / "logfire-5.4-agents-0.24-hosted-and-app-web-search.otlp.json")
    assert [(s.action, (s.arguments or {}).get("query")) for s in run.steps] == [
        ("web_search", "Oslo weather today"), ("respond", None), ("web_search", "Oslo office snow policy"),
        ("respond", None)]
    hosted, _, wiki, _ = run.steps
    assert hosted.observation is not None and "www.yr.no" in hosted.observation
    assert wiki.observation == "wiki: Oslo office closed on snow days"


def test_a_failed_hosted_mcp_call_is_a_failed_step_and_the_answer_stays() -> None:
    """A ``HostedMCPTool`` call OpenAI reports failed (``status: failed``, ``error``, ``output: null``): the call had
    no result, and the answer after it was read as its thought, the run answering nothing."""
    run = adapter_support.only(AGENTS / "logfire-5.4-agents-0.24-hosted-mcp-call-failed.otlp.json")
    assert [(s.action, s.error) for s in run.steps] == [
        ("ask_question", None), ("read_wiki_structure", "Repository not found"), ("respond", None)]
    assert run.steps[1].thought is None
    assert run.steps[2].arguments["content"] == "Codex is Apache-2.0."


def test_a_provider_run_tools_failure_is_said_in_words_not_as_its_json() -> None:
    """A failed hosted search's error was its result's JSON (``{"status": "failed"}``); a failed Gemini code run
    recorded by pydantic-ai (a built-in ``tool_call_response``) its ``{"outcome": "OUTCOME_FAILED", "output": ...}``:
    the error says which tool failed, or what the code printed."""
    for path in (D47 / "pa-2.78-web-search-failed.otlp.json",
                 AGENTS / "logfire-5.4-agents-0.24-web-search-failed.otlp.json"):
        search = adapter_support.only(path).steps[0]
        assert (search.action, search.error) == ("web_search", "web_search failed"), path
    failed, ran, _ = adapter_support.only(D47 / "pa-2.78-google-code-execution-fails-then-runs.otlp.json").steps
    assert failed.error == "Traceback (most recent call last): ZeroDivisionError: division by zero"
    assert ran.error is None


def test_a_hosted_file_search_repr_whose_query_holds_a_bracket_is_a_step_with_what_it_found() -> None:
    """opentelemetry-instrumentation-openai-agents-v2 writes a tool-calling turn's items as their ``str()``. A file
    search whose query held a ``]`` (a pasted ``[E42]``) was cut at it, did not parse, and the whole
    ``ResponseFileSearchToolCall(...)`` repr was the next call's thought; the search's results were never read."""
    run = adapter_support.only(D47 / "oai-agents-otel-v2-0.1-file-search-bracket-query-then-tool.otlp.json")
    assert [s.action for s in run.steps] == ["file_search", "quota_of", "respond"]
    search, quota, _ = run.steps
    assert search.arguments == {"queries": ["what does [E42] mean", "error code E42"]}
    assert search.observation == "[E42] disk quota exceeded: free space or raise the quota."
    assert quota.thought is None and quota.observation == "10.0 of 10 GB"


def test_an_anthropic_server_tool_error_fails_its_step() -> None:
    """Review R2B, D3: only ``status`` / ``outcome`` told a provider tool's failure; Anthropic's error result as
    pydantic-ai dumps it (``{"error_code": ..., "type": "web_search_tool_result_error"}``) read as a search that
    worked."""
    run = adapter_support.only(D47 / "pa-2.78-web-search-anthropic-error.otlp.json")
    assert [(s.action, s.error) for s in run.steps] == [
        ("web_search", "web_search failed: max_uses_exceeded"), ("respond", None)]
