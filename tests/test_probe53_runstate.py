"""OpenAI Agents SDK ``RunState.to_json()`` files (probe RS, round 53): a run paused for a person's approval (or any
run, ``result.to_state()``) saved as the SDK's own resumable state was refused as an "unrecognised dump format"
though ``openai-agents`` is a supported format. Every file here was written by ``openai-agents`` 0.24.0 itself
(schema 1.21) with its ``agents.testing.ScriptedModel`` (``.real/runstate/SOURCE.md``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

STATES = Path(__file__).parent / "fixtures" / "openai-agents" / ".real" / "runstate"


def _run(name: str, **kwargs: object) -> Trajectory:
    [parsed] = list(read_dump(STATES / name, **kwargs))  # type: ignore[arg-type]
    assert parsed.error is None, parsed.error
    assert parsed.fmt == "openai-agents"
    assert parsed.trajectory is not None
    return parsed.trajectory


def _calls(run: Trajectory) -> list[tuple[str | None, object, str | None]]:
    return [(s.action, s.arguments, s.observation) for s in run.steps if s.action != "respond"]


def test_a_run_paused_for_approval_is_read_with_its_task_tools_and_the_call_waiting() -> None:
    """The state ``result.to_state().to_json()`` writes when a tool needs approval: the user's request, the tool
    that ran with its result, and the call waiting for a person, the last step, with no result and no error (a
    paused run has not failed)."""
    run = _run("runstate-paused.json")
    assert run.task == "What's the weather in Lyon? Then cancel my order A-1042."
    assert _calls(run) == [("get_weather", {"city": "Lyon"}, "sunny in Lyon"),
                           ("cancel_order", {"order_id": "A-1042"}, None)]
    waiting = run.steps[-1]
    assert waiting.action == "cancel_order" and waiting.error is None
    assert waiting.thought == "It is sunny in Lyon. Cancelling your order now."
    assert run.outcome == Outcome.unknown and run.failure is None
    assert run.metadata["run_state"] == "paused for approval"
    assert run.metadata["awaiting_approval"] == ["cancel_order"]
    assert run.metadata["agents"] == ["Support"]


def test_the_same_file_read_with_format_openai_agents() -> None:
    """``--format openai-agents``, the format a user is told it is, reads it too."""
    assert _run("runstate-paused.json", fmt="openai-agents").task.startswith("What's the weather in Lyon?")


def test_a_finished_run_state_ends_on_its_answer() -> None:
    run = _run("runstate-finished.json")
    assert run.task == "What's the weather in Lyon?"
    assert _calls(run) == [("get_weather", {"city": "Lyon"}, "sunny in Lyon")]
    assert (run.steps[-1].action, run.steps[-1].arguments) == ("respond", {"content": "It is sunny in Lyon today."})
    assert run.metadata["run_state"] == "finished"
    assert "awaiting_approval" not in run.metadata


def test_a_handoff_is_a_step_and_both_agents_are_named() -> None:
    run = _run("runstate-handoff-paused.json")
    assert run.task == "Please cancel order B-77 and refund me."
    assert [s.action for s in run.steps] == ["transfer_to_refunds_agent", "cancel_order"]
    assert run.metadata["agents"] == ["Triage", "Refunds agent"]
    assert run.metadata["awaiting_approval"] == ["cancel_order"]


def test_a_tool_that_raised_is_a_failed_step_and_the_run_goes_on() -> None:
    """The SDK gives the model its default "An error occurred while running the tool" and the run goes on: that
    call failed (the state keeps only those words), the run did not."""
    run = _run("runstate-tool-error.json")
    [lookup] = [s for s in run.steps if s.action == "lookup_order"]
    assert lookup.error and "An error occurred while running the tool" in lookup.error
    assert run.steps[-1].arguments == {"content": "Sorry, the order service is down."}
    assert run.outcome != Outcome.failure


def test_a_conversation_given_as_input_is_asked_its_latest_request() -> None:
    run = _run("runstate-list-input.json")
    assert run.task == "Cancel order D-1 please."
    assert run.steps[-1].action == "cancel_order" and run.steps[-1].observation is None


def test_two_saved_states_are_two_runs_with_stable_ids() -> None:
    """Each file is its own run (no trace to group by): ids differ between files and are the same read again."""
    first = [p.trajectory.trajectory_id for p in read_dump(STATES) if p.trajectory]
    again = [p.trajectory.trajectory_id for p in read_dump(STATES) if p.trajectory]
    assert len(first) == len(set(first)) == 19 and first == again


def test_ingest_dry_run_reads_a_run_state(tmp_path: Path) -> None:
    """The batch indexer's check of a file before ingesting it, where the user first met the refusal."""
    out = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(STATES / "runstate-paused.json"),
                          "--dry-run"], cwd=Path(__file__).parents[1],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr + out.stdout
    assert "unrecognised" not in (out.stdout + out.stderr)
    assert "format openai-agents; runs 1; rejected 0; steps 2" in out.stdout + out.stderr


@pytest.mark.parametrize("record", [
    {"$schemaVersion": "1.21", "generated_items": []},  # no agent, no input: not a state
    {"generated_items": [], "original_input": "x", "current_agent": {"name": "a"}},  # no schema version
])
def test_other_shapes_are_not_taken_for_a_run_state(tmp_path: Path, record: dict[str, object]) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(path)


def test_a_rejected_call_is_denied_and_the_next_call_of_the_same_tool_waits() -> None:
    """A person rejected the first ``delete_file`` (``state.reject``); the resumed run's model asked again and the
    run paused again. The rejected call ran nothing: its step is denied (the SDK's rejection message as the
    reason), not a result; the call now waiting was read as "not run: the agent stopped", an error, as a tool of the
    same name had a result before it."""
    run = _run("runstate-rejected-then-paused.json")
    assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps] == [
        ("delete_file", {"path": "/etc/hosts"}, None, "not run: denied: Tool execution was not approved."),
        ("delete_file", {"path": "/tmp/app.log"}, None, None)]
    assert run.metadata["awaiting_approval"] == ["delete_file"]


def test_a_state_saved_inside_a_trace_keeps_its_workflow() -> None:
    """``state.to_string()`` of a run inside ``trace("Cleanup workflow", group_id=...)``: the state's ``trace``."""
    run = _run("runstate-traced-paused.json")
    assert run.metadata["workflow_name"] == "Cleanup workflow" and run.metadata["group_id"] == "thread-9"
    assert run.metadata["trace_id"] == "trace_a9ef00d1e7c947b383089fbe1912d2ba"  # to find it among the traces
    assert [(s.action, s.observation, s.error) for s in run.steps] == [("delete_file", None, None)]


def test_a_js_sdk_run_state_is_read_alike() -> None:
    """``@openai/agents`` 0.20's ``result.state.toString()``: the same state in camelCase (``originalInput``,
    ``generatedItems[].rawItem`` with ``callId``, a tool result as ``function_call_result`` whose ``output`` is
    ``{"type": "text", "text"}``), its final step kept (``next_step_final_output``)."""
    paused = _run("js-runstate-paused.json")
    assert paused.task == "What's the weather in Lyon? Then cancel my order A-1042."
    assert _calls(paused) == [("get_weather", {"city": "Lyon"}, "sunny in Lyon"),
                              ("cancel_order", {"order_id": "A-1042"}, None)]
    assert paused.steps[-1].error is None and paused.metadata["awaiting_approval"] == ["cancel_order"]
    done = _run("js-runstate-rejected-finished.json")
    assert [(s.action, s.error) for s in done.steps] == [
        ("get_weather", None), ("cancel_order", "not run: denied: Tool execution was not approved."), ("respond", None)]
    assert done.metadata["run_state"] == "finished"
    handoff = _run("js-runstate-handoff-paused.json")
    assert [s.action for s in handoff.steps] == ["transfer_to_Refunds_agent", "cancel_order"]
    assert handoff.metadata["agents"] == ["Triage", "Refunds agent"]  # (the JS handoff output names no agent)


def test_a_js_run_result_printed_with_json_stringify() -> None:
    """A user's ``console.log(JSON.stringify(result, null, 2))`` of a real run (gpt-4.1, schema 1.4), kept in
    github.com/Nabhag8848/ai-engineering ``agents/index.ts`` at 6cb733d: ``{"state": <the run state>}``; the model
    is the one the response object it keeps names."""
    run = _run("js-result-stringify-1.4.json")
    assert run.task == "Hello World"
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "World"})]
    assert run.model_id == "gpt-4.1-2025-04-14" and run.metadata["workflow_name"] == "Agent workflow"


def test_a_state_with_no_items_says_so(tmp_path: Path) -> None:
    """A state saved before the run produced anything (``RunState(...)`` of a run not started yet): it was
    refused as a trace that "has no spans: only its trace record was read", which no such file has."""
    state = json.loads((STATES / "runstate-finished.json").read_text())
    state.update(generated_items=[], session_items=[], model_responses=[])
    (tmp_path / "state.json").write_text(json.dumps(state, indent=2))
    [parsed] = list(read_dump(tmp_path / "state.json"))
    assert parsed.error and "RunState" in parsed.error and "no generated items" in parsed.error
    assert "trace record" not in parsed.error


@pytest.mark.parametrize("name, steps", [
    ("runstate-0.8-schema1.0-paused.json", [("get_weather", "sunny in Lyon", None), ("cancel_order", None, None)]),
    ("runstate-0.8-schema1.0-rejected-then-paused.json", [
        ("cancel_order", None, "not run: denied: Tool execution was not approved."), ("cancel_order", None, None)])])
def test_the_first_run_state_schema_is_read_alike(name: str, steps: list[tuple[str, str | None, str | None]]) -> None:
    """``openai-agents`` 0.8.0, the first with ``RunState`` (schema 1.0): the same items; a rejection is kept in
    ``context.approvals[tool].rejected`` (later schemas: ``function_tool_approvals``)."""
    run = _run(name)
    assert run.metadata["run_state_schema"] == "1.0" and run.metadata["run_state"] == "paused for approval"
    assert [(s.action, s.observation, s.error) for s in run.steps] == steps


def test_formats_names_the_run_state() -> None:
    """``trajsearch formats``, where a user checks whether a file is read, said only "traces ... as its exporters
    write them": a saved RunState holds no trace."""
    out = subprocess.run([sys.executable, "-m", "trajsearch.cli", "formats"], cwd=Path(__file__).parents[1],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "RunState" in out.stdout


def test_a_hosted_tool_in_a_js_state_is_a_step() -> None:
    """The JS SDK keeps a tool OpenAI ran (web search) as ``hosted_tool_call``, the Responses item in its
    ``providerData``: the search was lost, the run reading as if the model booked without looking."""
    run = _run("js-runstate-web-search-paused.json")
    assert [s.action for s in run.steps] == ["web_search", "book_trip"]
    assert run.steps[0].arguments == {"type": "search", "query": "weather Lyon this weekend"}
    assert run.steps[1].thought == "Sunny this weekend; booking." and run.steps[1].observation is None


# Round 53 review (RRS), fixed by FRRS: files written by the SDKs themselves (``.real/runstate/rrs-*``, SOURCE.md).


def test_a_tool_rejected_for_good_is_denied_for_every_call_it_refused() -> None:
    """``state.reject(item, always_reject=True, rejection_message=...)`` records ``rejected: true`` (no ids) and the
    message; the call a person rejected and the later one the SDK refused by itself ran nothing: both denied, not
    results a tool returned."""
    run = _run("rrs-always-reject.json")
    refused = [(s.action, s.arguments, s.observation, s.error) for s in run.steps if s.action == "cancel_order"]
    assert refused == [("cancel_order", {"order_id": "A-1"}, None, "not run: denied: Refused by the on-call manager."),
                       ("cancel_order", {"order_id": "A-2"}, None, "not run: denied: Refused by the on-call manager.")]


def test_a_call_id_repeated_across_turns_keeps_each_call() -> None:
    """openai-agents 0.8.0 saved two calls that shared the id ``call_0`` (a provider numbering calls per response):
    each answer is its own call's, so the failed lookup is not read as a failed weather call."""
    run = _run("rrs-08-repeat.json")
    assert [(s.action, s.arguments, s.observation is not None, s.error is not None) for s in run.steps] == [
        ("lookup_order", {"order_id": "C-9"}, True, True),
        ("get_weather", {"city": "Lyon"}, True, False),
        ("cancel_order", {"order_id": "B-1"}, False, False)]
    assert run.steps[1].observation == "sunny in Lyon"
    assert run.metadata["awaiting_approval"] == ["cancel_order"]


def test_a_handoff_with_an_input_filter_keeps_the_first_agents_steps() -> None:
    """``handoff(input_filter=remove_all_tools)``: ``generated_items`` loses the first agent's tool call; the
    state's ``session_items`` keep it."""
    run = _run("rrs-filter-handoff.json")
    assert run.task == "Please cancel order B-77."
    assert _calls(run) == [("get_weather", {"city": "Paris"}, "sunny in Paris"),
                           ("cancel_order", {"order_id": "B-77"}, None)]
    assert run.metadata["agents"] == ["Triage", "Refunds agent"]


def test_a_nested_handoff_history_keeps_the_task_and_the_first_agents_steps() -> None:
    """``RunConfig(nest_handoff_history=True)`` makes ``original_input`` the SDK's summary of the conversation: the
    task is the user's request it records, and the first agent's steps come from ``session_items``."""
    run = _run("rrs-nested-handoff.json")
    assert run.task == "Please cancel order B-77."
    assert [s.action for s in run.steps] == ["get_weather", "transfer_to_refunds_agent", "cancel_order"]
    assert run.metadata["agents"] == ["Triage", "Refunds agent"]


def test_a_nested_handoff_history_keeps_a_request_over_several_lines() -> None:
    """The summary records a request over lines as the JSON item (``N. {"content": ..., "role": "user"}``)."""
    run = _run("frrs-nested-multiline.json")
    assert run.task == "Please cancel order B-77.\nIt was sent to Paris."
    assert [s.action for s in run.steps] == ["get_weather", "transfer_to_refunds_agent", "cancel_order"]
