"""Span exports of review rev1 (round 44) read through the public reader: AI SDK 6 and 7 tool approvals, the
OpenAI Agents SDK's multi-run workflows and a tool's own ``type: file`` dicts.

The fixtures (``fixtures/<format>/.real/rev1``, see each SOURCE.md) were written by the released packages against
a local fake model server; only the model's replies were scripted.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"


def test_ai_sdk_6_calls_awaiting_approval_are_not_run_and_a_denied_call_is_kept() -> None:
    """Bug (rev1, D1): AI SDK 6 (``experimental_telemetry``) calls left awaiting approval read as tools that ran and
    printed nothing (the finish reason ``tool-calls`` was kept only on the call span, not on its model calls), and
    the call the user denied (``{"type": "execution-denied", "reason"}`` in the resumed call's input) vanished."""
    runs = {run.trajectory_id.split(":")[1][:8]: run
            for run in adapter_support.runs(FIXTURES / "vercel-ai" / ".real" / "rev1" / "ai6-approval-denied.otlp.json")}
    assert [(s.action, s.observation, (s.error or "")[:8]) for s in runs["4c928ceb"].steps] == [
        ("get_weather", None, "not run:"), ("run_sql", None, "not run:")]
    assert [(s.action, s.observation is None, s.error) for s in runs["189cb766"].steps] == [
        ("get_weather", False, None), ("run_sql", True, "not run: denied: no database access today"), ("respond", True, None)]


def test_ai_sdk_7_denied_call_in_a_conversation_is_an_error_not_a_result() -> None:
    """Bug (rev1, D2): with ``--group-by conversation`` the asking trace and the resumed one are one run, so a step
    already held the denied call, and the denial ``{"denied": true, "reason"}`` became its successful result."""
    run = adapter_support.only(FIXTURES / "otel-genai" / ".real" / "rev1" / "ai7-approval-denied-conv.otlp.json",
                               group_by="conversation")
    assert [(s.action, s.observation, s.error) for s in run.steps if s.action == "run_sql"] == [
        ("run_sql", None, "not run: denied: no database access today")]
    assert [(s.action, s.error) for s in run.steps if s.action != "run_sql"] == [("get_weather", None), ("respond", None)]


AGENTS = FIXTURES / "openai-agents" / ".real" / "rev1"


@pytest.mark.parametrize("name", ["oai-agents-0.24-deterministic-flow.jsonl", "oai-agents-0.0.19-deterministic-flow.jsonl"])
@pytest.mark.parametrize("group_by", ["trace", "conversation"])
def test_agents_sdk_workflow_stage_given_an_earlier_output_is_no_later_request(name: str, group_by: str) -> None:
    """Bug (rev1, D3): the SDK's deterministic flow (three ``Runner.run`` calls in one ``trace()``, the later two
    given the first agent's outline) kept the outline as a user's later request: a run that does not continue the
    conversation (its input holds no earlier turn) is a stage of the app's workflow."""
    run = adapter_support.only(AGENTS / name, group_by=group_by)
    assert run.task == "A story about a cat and an old mill"
    assert "user_prompts" not in run.metadata
    assert [s.arguments["content"][:14] for s in run.steps] == ["Outline: 1. A ", "good quality, ", "Once upon a ti"]


def test_agents_sdk_tool_own_dicts_typed_file_stay_as_written() -> None:
    """Bug (rev1, D7): a function tool's own list of dicts typed ``file`` (a directory listing) was taken for the SDK's
    tool output objects and rewritten from its repr to JSON (``False`` -> ``false``): only ``ToolOutputText`` /
    ``Image`` / ``FileContent`` shapes are decoded."""
    run = adapter_support.only(AGENTS / "oai-agents-0.24-own-file-dicts.jsonl")
    [listing] = [s.observation for s in run.steps if s.action == "list_files"]
    assert listing == ("[{'type': 'file', 'path': 'src/main.py', 'size': 1204, 'executable': False}, "
                       "{'type': 'file', 'path': 'src/util.py', 'size': 311, 'executable': None}]")
