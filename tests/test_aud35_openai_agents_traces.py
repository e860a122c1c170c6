"""Agents SDK traces written by openai-agents 0.25.0 itself (audit AUDOAI35): what its newer items and errors
record, read as the runs they were. Fixture: ``fixtures/openai-agents/.aud35/`` (its README)."""

from __future__ import annotations

import json
from pathlib import Path

import adapter_support
from trajsearch.model import Outcome, Trajectory

TRACES = Path(__file__).parent / "fixtures" / "openai-agents" / ".aud35" / "agents-0.25-responses-with-input.jsonl"


def _run(workflow: str) -> Trajectory:
    return next(r for r in adapter_support.runs(TRACES) if r.metadata.get("workflow_name") == workflow)


def test_a_tool_search_openai_ran_is_a_step_with_the_tools_it_found() -> None:
    """The response searched the agent's deferred tools (``tool_search_call``, ``execution: "server"``; its
    ``tool_search_output`` loads ``lookup_order``), then called the tool found. No function span records the search:
    it was lost, the run starting at ``lookup_order``; now it is a step, as a saved RunState of such a run reads."""
    run = _run("Tool search workflow")
    assert [s.action for s in run.steps] == ["tool_search", "lookup_order", "respond"]
    search = run.steps[0]
    assert (search.arguments, search.observation, search.error) == ({"query": "order status"}, "lookup_order", None)
    assert run.steps[1].observation == "order C-9: shipped"


def test_a_call_of_a_custom_tool_the_agent_lacks_is_that_calls_error() -> None:
    """The model called the Responses custom tool ``drop_table``, which the agent lacks: the SDK marks the turn span
    "Custom tool not found" ``{"tool_name": "drop_table"}`` and raises. The call read as a tool that ran and printed
    nothing, beside an unnamed step "chain turn 1 failed"; now the call is the one step, failed, as for a function
    tool the agent lacks ("Tool not found")."""
    run = _run("Ghost custom tool workflow")
    assert [s.action for s in run.steps] == ["drop_table"]
    call = run.steps[0]
    assert (call.arguments, call.observation, call.error) == ("DROP TABLE orders", None,
                                                            "Custom tool not found: drop_table")
    assert run.outcome is Outcome.failure and run.task == "Clean the orders table."


def test_a_sandbox_command_that_exited_non_zero_is_that_steps_error() -> None:
    """A ``SandboxAgent``'s ``exec_command`` returns the command's exit code in its text (``Process exited with code
    1``) and raises nothing, so its span has no error: the failing test run read as a step that succeeded. Now its
    error is the failure's decisive line with the code; grep's silent exit 1 (no match) stays no error."""
    run = adapter_support.only(TRACES.with_name("agents-0.25-sandbox-exec-with-input.jsonl"))
    commands = [(s.arguments or {}).get("cmd", "")[:22] for s in run.steps if s.action == "exec_command"]
    assert commands == ["printf 'def add(a, b):", "python3 -m unittest -q", "ls", "grep -n TODO calc.py",
                        "python3 -c 'import sys"]
    assert [s.error for s in run.steps[:5]] == [None, "AssertionError: 3 != 4 (exit code 1)", None, None,
                                                "no such fixture: db (exit code 1)"]
    assert "Process exited with code 1" in run.steps[1].observation and run.outcome is Outcome.unknown


def test_a_sandbox_command_that_timed_out_is_that_steps_error(tmp_path: Path) -> None:
    """A ``SandboxAgent``'s ``exec_command`` that times out returns ``Command timed out after N seconds.`` as its
    output, with no exit code, and raises nothing: it read as a step that succeeded, where a ``ShellTool`` call's
    ``status: timeout`` is an error. The real trace, its ``ls`` call's output replaced by the SDK's timeout text
    (``sandbox/capabilities/tools/shell_tool.py``)."""
    timed_out = "Chunk ID: 3f2a1b\nWall time: 10.0031 seconds\nOutput:\nCommand timed out after 10.000 seconds."
    lines = TRACES.with_name("agents-0.25-sandbox-exec-with-input.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        span = json.loads(line)
        data = span.get("span_data") or {}
        if data.get("name") == "exec_command" and json.loads(data["input"])["cmd"] == "ls":
            data["output"] = timed_out
            lines[n] = json.dumps(span)
    trace = tmp_path / "timed-out.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    step = adapter_support.only(trace).steps[2]
    assert (step.arguments, step.error) == ({"cmd": "ls"}, "Command timed out after 10.000 seconds.")


def test_tool_searches_run_before_their_outputs_are_answered_in_order(tmp_path: Path) -> None:
    """A server tool search has no ``call_id``: its ``tool_search_output`` answers the oldest search not yet answered
    (the SDK pairs anonymous ones so, ``run_internal/items.py``). With two searches before their outputs the first
    had no result and the second both; now each has its own. The real trace, a second search and output added."""
    lines = TRACES.read_text().splitlines()
    for n, line in enumerate(lines):
        span = json.loads(line)
        output = ((span.get("span_data") or {}).get("response") or {}).get("output") or []
        if output and output[0].get("type") == "tool_search_call":
            search, found = output[0], output[1]
            first = {**search, "id": "tsc_0", "arguments": {"query": "refund policy"}}
            loaded = {**found, "id": "tso_0", "tools": [{**found["tools"][0], "name": "refund_policy"}]}
            span["span_data"]["response"]["output"] = [first, search, loaded, found, *output[2:]]
            lines[n] = json.dumps(span)
    trace = tmp_path / "two-searches.jsonl"
    trace.write_text("\n".join(lines) + "\n")
    run = next(r for r in adapter_support.runs(trace) if r.metadata.get("workflow_name") == "Tool search workflow")
    assert [(s.action, s.arguments, s.observation) for s in run.steps[:3]] == [
        ("tool_search", {"query": "refund policy"}, "refund_policy"),
        ("tool_search", {"query": "order status"}, "lookup_order"),
        ("lookup_order", {"order_id": "C-9"}, "order C-9: shipped")]
