"""A pydantic-ai run resumed after a deferred tool approval, read from pydantic-ai's own OpenTelemetry spans.

The run asks for two calls of a ``requires_approval`` tool and stops (``DeferredToolRequests``); the app denies one
(``ToolDenied()``) and approves the other, and resumes with ``deferred_tool_results``. pydantic-ai-slim 1.66.0 wrote
both traces (instrumentation versions 2 and 3), and 2.78.0 (version 5, its default): fixtures in
fixtures/otel-genai/.aud36/pydantic-ai-approval, see its README.
The resumed run's own messages (``pydantic_ai.new_message_index``) open with the calls' results: the task was read
as the denial's words (version 3) and the denied call was lost; with version 2 (no ``execute_tool`` span) the
approved call was lost too.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures" / "otel-genai" / ".aud36" / "pydantic-ai-approval"
PROMPT = "Clean up the workspace: delete .env and build/app.log"


@pytest.mark.parametrize("name", ["pa-1.66-instr-v2", "pa-1.66-instr-v3", "pa-2.78-instr-v5"])
def test_a_resumed_run_keeps_its_prompt_the_denied_call_and_the_approved_calls_result(name: str) -> None:
    """The resumed run's task is the user's prompt, the denied call a step not run (denied), the approved call a step
    with its result, then the answer; the run that stopped for the approvals reads as before."""
    first, resumed = adapter_support.runs(FIXTURES / f"{name}-approval-resumed.console.json")
    assert first.task == resumed.task == PROMPT
    assert [s.arguments for s in first.steps] == [{"path": ".env"}, {"path": "build/app.log"}]
    assert all("awaiting the user's approval" in (s.error or "") for s in first.steps)
    assert [(s.action, s.arguments, s.observation, s.error) for s in resumed.steps] == [
        ("delete_file", {"path": ".env"}, None, "not run: denied"),
        ("delete_file", {"path": "build/app.log"}, "deleted build/app.log", None),
        ("respond", {"content": "I deleted build/app.log; you declined deleting .env, so it stays."}, None, None)]


def test_a_resumed_run_given_a_new_prompt_reads_it_as_its_task_not_as_the_denied_calls_error() -> None:
    """Resumed with ``user_prompt`` too, pydantic-ai sends the prompt after the one call's result in the same user
    message (1.66 ``_agent_graph.py``: "Add user prompt if provided, after all tool return parts"): the prompt is the
    task, the denied call's error only the denial (review AUDOTPAI36, 1: the prompt was read as part of the result)."""
    _, resumed = adapter_support.runs(FIXTURES / "pa-1.66-instr-v3-approval-resumed-new-prompt.console.json")
    assert resumed.task == "Also tell me what is left"
    assert [(s.action, s.arguments, s.observation, s.error) for s in resumed.steps] == [
        ("delete_file", {"path": ".env"}, None, "not run: denied"),
        ("respond", {"content": "You declined deleting .env, so .env and build/app.log are left."}, None, None)]
