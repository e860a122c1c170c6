"""Probe 50 (area NF): the newest releases of the span and session writers, read through the public readers (each
fixture's SOURCE.md says how it was written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

ADK = Path(__file__).parent / "fixtures" / "adk-session" / ".real"


def _run(path: Path) -> Trajectory:
    runs = [p.trajectory for p in read_dump(path, tenant="t") if p.trajectory is not None]
    assert len(runs) == 1, runs
    return runs[0]


@pytest.mark.parametrize("name", ["sequential-raises", "parallel-raises"])
def test_adk_tool_that_raised_under_a_workflow_agent_is_a_step_with_no_response(name: str) -> None:
    """Bug: under ADK 2.13's ``SequentialAgent`` / ``ParallelAgent`` a tool's exception leaves no error event, only
    the call with no answer (the runner's own agent gets an ``errorCode`` event): the step read as a call with no
    result and no error, though ``get_flights`` raised and the run stopped there. The step says it got no response;
    the run is not failed for it, since a stopped run leaves the very same session (see
    ``test_adk_call_the_session_ends_with_outside_a_node_is_no_failure``)."""
    run = _run(ADK / f"{name}.session.json")
    step = next(s for s in run.steps if s.action == "get_flights")
    assert step.error == NO_RESPONSE
    assert run.outcome is Outcome.unknown and run.failure is None
    assert all(s.error is None for s in run.steps if s.action == "get_weather")


def test_adk_session_waiting_for_the_users_credential_is_no_failure(tmp_path: Path) -> None:
    """The same rule leaves a long-running call alone: ``credential.session.json`` as ADK holds it while the user has
    not yet answered ``adk_request_credential`` (its first four events: the call in ``longRunningToolIds``, the
    tool's interim answer) ends with that call unanswered, and is no failure."""
    session = json.loads((ADK / "credential.session.json").read_text())
    session["events"] = session["events"][:4]
    waiting = tmp_path / "waiting.session.json"
    waiting.write_text(json.dumps(session))
    run = _run(waiting)
    assert run.outcome is not Outcome.failure and all(s.error is None for s in run.steps), run


def test_adk_workflow_function_and_tool_nodes_are_steps() -> None:
    """Bug: an ADK 2 ``Workflow``'s function and tool nodes write their result as an event with ``output`` and no
    content: each was passed over, so of ``fetch -> get_weather -> summariser`` only the summary was a step."""
    run = _run(ADK / "workflow-tool-node.session.json")
    assert [s.action for s in run.steps] == ["fetch", "get_weather", "respond"]
    assert "Rome" in (run.steps[0].observation or "") and "sunny in Rome" in (run.steps[1].observation or "")
    assert all(s.error is None for s in run.steps)


def test_adk_workflow_node_that_raised_is_its_failed_step() -> None:
    """Bug: a ``Workflow`` node that raised (``errorCode`` event naming it in ``nodeInfo.path``) was a step with no
    action ("agent app failed") and the node before it was lost; it is the node's failed step now."""
    run = _run(ADK / "workflow-node-raises.session.json")
    assert [s.action for s in run.steps] == ["fetch", "check"]
    assert run.steps[1].error == "ValueError: bad data: cannot parse row 2"
    assert run.outcome is Outcome.failure and run.failure is not None and "cannot parse row 2" in run.failure.error


def test_adk_call_of_a_run_the_client_stopped_is_no_failure() -> None:
    """The rule above, kept from reading a stop as a failure: ADK 2.13's runner records an exception of its own agent
    (``nodeInfo.path`` set) as an ``errorCode`` event, so a call of that agent with no answer and no error is a run
    the client stopped (it stopped reading ``run_async``): its step says so, the run is interrupted, not failed."""
    run = _run(ADK / "stopped-during-tool.session.json")
    assert [s.action for s in run.steps] == ["slow_search"]
    assert run.steps[0].error == "no response: the run was stopped while the tool ran"
    assert run.outcome is Outcome.unknown and run.failure is None and run.metadata.get("interrupted") is True


@pytest.mark.parametrize("name", ["abort-signal-during-tool", "abort-signal-during-model"])
def test_adk_invocation_its_client_aborted_is_interrupted_not_failed(name: str) -> None:
    """Bug: ADK 2.13 seals a run its client aborted (``adk api_server`` / ``adk web`` on a disconnect) with
    ``errorCode: INVOCATION_ABORTED`` events: read as the agent's failure ("INVOCATION_ABORTED: Invocation was
    aborted by client."), the model's abort a step with no action ("agent app failed"). It is a stop: the run
    interrupted, not failed; a call in flight keeps ADK's abort error as its step's error."""
    run = _run(ADK / f"{name}.session.json")
    assert run.outcome is not Outcome.failure and run.failure is None
    assert run.metadata.get("interrupted") is True
    assert [s.action for s in run.steps] == ["slow_search"]
    assert (run.steps[0].error == "Invocation was aborted by client.") == name.endswith("tool")


def test_adk_single_turn_sub_agent_that_raised_fails_its_call_and_its_tool() -> None:
    """Bug: ADK 2.x's agent tool (a ``mode="single_turn"`` sub-agent) answers the call that ran a sub-agent that
    raised with the string "Error running sub-agent: ..." (no exception): the call read as a success; and the
    sub-agent's ``errorCode`` event (its node path) was laid on every call then pending, the coordinator's too, so
    the tool that raised read "no response: the invocation stopped with ..." instead of its own error."""
    run = _run(ADK / "single-turn-subagent-raises.session.json")
    steps = {s.action: s for s in run.steps}
    assert (steps["flight_helper"].error or "").startswith("Error running sub-agent: ")
    assert steps["get_flights"].error == "ConnectionError: flight service down"


def test_adk_single_turn_sub_agents_words_are_its_calls_result_not_the_agent_talking() -> None:
    """Bug: the words of a ``mode="single_turn"`` sub-agent (run as the coordinator's tool; its events' branch
    ``weather_helper@<call id>``) were a ``respond`` step, as if the agent had answered the user, though they are the
    call's result (its step's observation) and the coordinator answers after it."""
    run = _run(ADK / "single-turn-subagent.session.json")
    assert [s.action for s in run.steps] == ["weather_helper", "get_weather", "respond"]
    assert "sunny in Rome" in (run.steps[0].observation or "")
    assert str(run.steps[-1].arguments["content"]).startswith("Coordinator:")


@pytest.mark.parametrize("name", ["wf-seq-raises", "wf-parallel-agent-raises"])
def test_adk_tool_that_raised_in_a_workflow_agent_node_is_its_failed_step(name: str) -> None:
    """Bug: a ``SequentialAgent`` / ``ParallelAgent`` run as a node of ADK 2's ``Workflow`` records its tool's
    exception as an ``errorCode`` event authored by its sub-agent (``flight_agent``) with the node's path
    (``pipeline@1/trip@1``): read as a function node ``trip`` that raised, a step of its own, while ``get_flights``
    read "the run was stopped" and the run interrupted. The event is the agent's: its call failed with it."""
    run = _run(ADK / f"{name}.session.json")
    assert [s.action for s in run.steps] == (["get_flights"] if name == "wf-seq-raises" else
                                            ["get_weather", "get_flights"])
    assert run.steps[-1].error == "ConnectionError: flight service down"
    assert run.outcome is Outcome.failure and run.failure is not None and "flight service down" in run.failure.error
    assert not run.metadata.get("interrupted")


def test_adk_nested_workflow_function_node_that_raised_is_still_its_step() -> None:
    """The rule above keeps a node's own event (authored by the workflow enclosing it, ``inner`` for
    ``outer@1/inner@1/broken@1``) a step of that node."""
    run = _run(ADK / "wf-nested-raises.session.json")
    assert [s.action for s in run.steps] == ["fetch", "broken"]
    assert run.steps[1].error == "ValueError: bad inner row" and run.outcome is Outcome.failure


def test_adk_task_sub_agent_waiting_for_the_user_is_no_stop() -> None:
    """Bug: a ``mode="task"`` sub-agent that asks the user a question ends the invocation normally (ADK counts it
    paused: ``_is_paused_task_reply``, its reply in the call's ``isolationScope``); the call that started it read
    "the run was stopped while the tool ran" and the run interrupted. The call waits for the user's answer."""
    run = _run(ADK / "task-waiting-user.session.json")
    assert all(s.error is None for s in run.steps), [(s.action, s.error) for s in run.steps]
    assert not run.metadata.get("interrupted") and run.outcome is not Outcome.failure
    assert any("Which city do you mean?" in (s.observation or "") + str(s.arguments or "") + (s.thought or "")
               for s in run.steps)


def test_adk_call_the_session_ends_with_outside_a_node_is_no_failure() -> None:
    """Bug: a ``SequentialAgent``'s call with no answer was read as a tool that raised, the run failed "its exception
    is not in the session"; ``seq-stopped.session.json`` is the same shape left by a client that stopped the run (a
    closed ``adk web`` tab, a killed process, a session fetched mid-run look the same). The step says either may have
    happened; the run's outcome is not guessed."""
    run = _run(ADK / "seq-stopped.session.json")
    assert [s.action for s in run.steps] == ["slow_search"]
    assert run.steps[0].error == NO_RESPONSE
    assert run.outcome is Outcome.unknown and run.failure is None


NO_RESPONSE = "no response: the session ends with this call (the tool raised, or the run was stopped)"


def test_adk_users_answer_within_a_resumed_invocation_is_kept() -> None:
    """Bug: ADK 2.x resumes an invocation that waited for the user (a ``mode="task"`` agent's question) under the
    same ``invocationId``, and only an invocation's first message was read: the user's answer ("Rome, Italy") was
    in no field of the run, the task's later steps reading as done on the first request alone."""
    run = _run(ADK / "task-asks-then-answered.session.json")
    assert run.task == "Weather for my trip?" and run.metadata.get("user_prompts") == ["Rome, Italy"]
    assert [s.action for s in run.steps] == ["weather_task", "respond", "get_weather", "finish_task", "respond"]
    assert all(s.error is None for s in run.steps) and not run.metadata.get("interrupted")
