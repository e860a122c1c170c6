"""Span exports of round 44's probe F read through the public reader: the OpenAI Agents SDK (0.0.19, 0.24) and the
AI SDK 7 (``@ai-sdk/otel``, GenAI semconv spans).

The fixtures (``fixtures/<format>/.real/probeF44``, see each SOURCE.md) were written by the released packages
against a local fake model server; only the model's replies were scripted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.model import Trajectory

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
AGENTS = FIXTURES / "openai-agents" / ".real" / "probeF44"


@pytest.mark.parametrize("name", ["oai-agents-0.24-two-runs-one-trace.jsonl", "oai-agents-0.0.19-two-runs-one-trace.jsonl"])
@pytest.mark.parametrize("group_by", ["trace", "conversation"])
def test_agents_sdk_two_runs_in_one_trace_keep_the_second_request(name: str, group_by: str) -> None:
    """Bug (probe F, F2): two ``Runner.run`` calls inside one ``trace()`` (each a ``task`` span, in 0.0.19 an
    ``agent`` span, under the trace record) lost the second request: the second answer read as a reply to the
    first."""
    run = adapter_support.only(AGENTS / name, group_by=group_by)
    assert run.task == "Hi there"
    assert run.metadata["user_prompts"] == ["Tell me my password"]
    assert [s.arguments["content"] for s in run.steps] == ["Hello! How can I help?", "Your password is hunter2."]


def test_agents_sdk_mcp_tool_result_is_its_text_not_a_dict_repr() -> None:
    """Bug (probe F, F6): the SDK writes ``str()`` of an MCP tool's ``ToolOutputTextDict`` as the function span's
    output; the step's observation was that repr, ``{'type': 'text', 'text': ...}``."""
    run = adapter_support.only(AGENTS / "oai-agents-0.24-mcp.jsonl")
    assert [(s.action, s.observation) for s in run.steps if s.action == "read_note"] == [
        ("read_note", "note groceries: buy milk"), ("read_note", "Error executing tool read_note")]


OTEL = FIXTURES / "otel-genai" / ".real" / "probeF44"


def _by_trace(path: Path) -> dict[str, Trajectory]:
    return {run.trajectory_id.split(":")[1][:8]: run for run in adapter_support.runs(path)}


def test_ai_sdk_7_call_the_sdk_refused_is_a_step_error() -> None:
    """Bug (probe F, F4): a call to a tool that does not exist, or with arguments that do not parse, runs no tool (no
    ``execute_tool`` span); ``@ai-sdk/otel`` writes the SDK's ``error-text`` into the next ``chat`` input as the bare
    error text (``AI_NoSuchToolError: ...``), which read as the tool's successful result."""
    runs = _by_trace(OTEL / "ai7-refused-and-pending-calls.otlp.json")
    [unknown] = [s for s in runs["36fd5de1"].steps if s.action == "delete_db"]
    assert unknown.error.startswith("AI_NoSuchToolError: Model tried to call unavailable tool 'delete_db'")
    [bad] = [s for s in runs["4c552f1f"].steps if s.action == "get_weather"]
    assert bad.error.startswith("AI_InvalidToolInputError: Invalid input for tool get_weather")
    assert [s.error for s in runs["36fd5de1"].steps if s.action == "respond"] == [None]


def test_ai_sdk_7_calls_awaiting_approval_are_not_run_and_a_denied_call_is_kept() -> None:
    """Bug (probe F, F5): calls left awaiting approval (``needsApproval``: no ``execute_tool`` span, the last model
    call's finish reason ``tool-calls``) looked like tools that ran and printed nothing; a call the user denied
    (``{"denied": true, "reason"}`` in the resumed call's input) was no step at all."""
    pending = _by_trace(OTEL / "ai7-approval-denied.otlp.json")
    assert [(s.action, s.error.startswith("not run:")) for s in pending["316cfc12"].steps] == [
        ("get_weather", True), ("run_sql", True)]
    assert [(s.action, s.error) for s in pending["43a17d97"].steps] == [
        ("get_weather", None), ("run_sql", "not run: denied: no database access today"), ("respond", None)]
    agent = _by_trace(OTEL / "ai7-refused-and-pending-calls.otlp.json")["d224e069"]
    assert [(s.action, (s.error or "")[:8]) for s in agent.steps] == [("get_weather", "not run:"), ("run_sql", "Error: p")]
