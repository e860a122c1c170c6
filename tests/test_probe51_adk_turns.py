"""Round p51, area FADK: an ADK session's later user turns, on sessions ADK 2.13's own ``Runner`` wrote
(``fixtures/adk-session/.real/SOURCE.md``, "Added in probe 51 (area FADK)"). ADK marks a user turn with the user's
event (author ``user``) opening a new invocation; the session keeps the conversation, so such a turn is the user's
whatever its model calls hold (a workflow's nodes start afresh, a model may fail before it speaks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

REAL = Path(__file__).parent / "fixtures" / "adk-session" / ".real"


def _run(name: str) -> Trajectory:
    (parsed,) = list(read_dump(REAL / name, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


@pytest.mark.parametrize("name", ["wf-agent-model-fails-second-turn.session.json",
                                  "agent-model-fails-second-turn.session.json"])
def test_adk_second_turn_whose_model_failed_first_is_the_users_turn_and_fails_the_run(name: str) -> None:
    """Bug (FM2, fixed FADK): a second user turn whose model raised before it spoke (a ``Workflow``'s agent node, and
    a plain ``LlmAgent``: ``errorCode: TimeoutError``) was read as a workflow's stage: its prompt missing from
    ``user_prompts``, and the run's outcome ``unknown`` (the first turn's answer read as the run's last word)."""
    run = _run(name)
    assert run.task == "Summarise the Rome rows"
    assert run.metadata["user_prompts"] == ["And again, please"]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and run.failure.error == "TimeoutError: model call timed out after 60s"
    # the first turn's answer is its own respond step, not the thought of the second turn's first step
    assert [(s.action, s.arguments) for s in run.steps if s.action == "respond"] == [
        ("respond", {"content": "Rome: 3 rows, all valid."})]
    assert all(not s.thought for s in run.steps)


def test_adk_workflow_second_turn_keeps_its_answer_apart_from_its_first_node() -> None:
    """Bug (FADK): in a ``Workflow`` run twice (``fetch`` then an agent), the first turn's answer was the thought of
    the second turn's ``fetch`` (words followed by a tool no model asked for, read as a code agent's) and no
    ``respond`` step of it was left."""
    run = _run("wf-two-turns.session.json")
    assert [(s.action, (s.arguments or {}).get("content"), s.thought) for s in run.steps] == [
        ("fetch", None, None), ("respond", "Summary #1: 3 rows.", None),
        ("fetch", None, None), ("respond", "Summary #2: 3 rows.", None)]
    assert run.metadata["user_prompts"] == ["And again, please"]


def test_adk_workflow_node_that_raised_after_the_agent_answered_fails_the_run() -> None:
    """Bug (FADK): a ``Workflow`` whose function node after the agent raised (``run_async`` raises; ADK's
    ``errorCode: ValueError`` event) read as ``unknown``: the agent's answer before it was taken as the run's end."""
    run = _run("wf-agent-then-function-raises.session.json")
    assert run.outcome is Outcome.failure
    assert run.failure is not None and run.failure.error == "ValueError: bad summary: no row count"
    assert run.steps[-1].action == "broken" and run.steps[-1].error == "ValueError: bad summary: no row count"


@pytest.mark.parametrize(("name", "node"), [("wf-agent-then-function.session.json", "check"),
                                            ("wf-agent-then-function-raises.session.json", "broken")])
def test_adk_workflow_agents_answer_before_a_function_node_stays_its_answer(name: str, node: str) -> None:
    """Bug (FADK): a ``Workflow``'s agent node answering before a function node (given that answer: a check, a
    parser) lost its ``respond`` step: its words were read as the thought of the function's step, as a smolagents code
    agent's words are of the code it wrote. The workflow ran the node after the agent, on its output."""
    run = _run(name)
    assert [(s.action, (s.arguments or {}).get("content"), s.thought) for s in run.steps] == [
        ("fetch", None, None), ("respond", "Summary #1: 3 rows.", None), (node, None, None)]


@pytest.mark.parametrize(("name", "steps"), [
    ("agent-two-turns.session.json", [("get_weather", {"city": "Rome"}), ("respond", "It is sunny in Rome."),
                                      ("get_weather", {"city": "Paris"}), ("respond", "It is sunny in Paris.")]),
    ("sequential-two-turns.session.json", [("get_weather", {"city": "Rome"}), ("respond", "It is sunny in Rome."),
                                           ("respond", "Summary #1: 3 rows."), ("get_weather", {"city": "Paris"}),
                                           ("respond", "It is sunny in Paris."), ("respond", "Summary #2: 3 rows.")]),
])
def test_adk_two_turns_of_an_agent_and_a_sequential_agent_are_unchanged(name: str, steps: list) -> None:
    """The guard of the fixes above: a plain ``LlmAgent`` and a ``SequentialAgent`` asked twice, both answering,
    keep both turns' steps, the second prompt, and no verdict (a clean exit is not a success)."""
    run = _run(name)
    assert run.task == "Weather in Rome?"
    assert run.metadata["user_prompts"] == ["And in Paris?"]
    assert run.outcome is Outcome.unknown and run.failure is None
    assert [(s.action, s.arguments["content"] if s.action == "respond" else s.arguments) for s in run.steps] == steps


def _steps(run: Trajectory) -> list[tuple[str | None, str | None]]:
    return [(s.action, s.error) for s in run.steps]


@pytest.mark.parametrize("name, steps", [
    ("wf-check-after-agent-retried-ok.session.json",
     [("fetch", None), ("respond", None),
      ("check_once_flaky", "ConnectionError: validation service unreachable"), ("check_once_flaky", None)]),
    ("wf-no-agent-retried-ok.session.json",
     [("fetch_flaky", "ConnectionError: rows service unreachable"), ("fetch_flaky", None), ("check_any", None)]),
    ("wf-fetch-before-agent-retried-ok.session.json",
     [("fetch_flaky", "ConnectionError: rows service unreachable"), ("fetch_flaky", None), ("respond", None)]),
    ("wf-sub-workflow-retried-ok.session.json",
     [("sub_fetch", "ConnectionError: rows service unreachable"), ("sub_fetch", None), ("check_any", None)]),
    ("wf-agent-tool-raises-retried-ok.session.json",
     [("flaky_weather", "ConnectionError: weather service unreachable"), ("flaky_weather", None), ("respond", None)]),
])
def test_adk_workflow_node_retried_after_an_error_is_no_failure_of_the_run(name: str, steps: list) -> None:
    """Bug (RADK, fixed FRADK): a ``Workflow`` function node given ADK's ``RetryConfig`` whose first attempt raised
    and whose retry returned (ADK's node runner writes the attempt's ``errorCode`` event before it retries, under
    the same ``nodeInfo.path``; a sub-workflow retried whole runs its child again under the same path too) left the
    error the run's: a run that completed read ``failure`` ("ConnectionError:
    validation service unreachable"). The failed attempt stays a step with its error, where it happened."""
    run = _run(name)
    assert run.outcome is Outcome.unknown and run.failure is None
    assert _steps(run) == steps


def test_adk_workflow_agent_node_retried_after_its_model_failed_is_no_infra_error() -> None:
    """Bug (RADK, fixed FRADK): an agent node retried after its model call timed out (the error event authored by
    the workflow, path ``pipeline@1/summariser@1``, then the agent's answer on the same path) read ``infra_error``,
    the error's step listed last, after the ``check`` node that ran on the answer. The failed attempt is a step of
    its own, before the answer."""
    run = _run("wf-agent-retried-then-check.session.json")
    assert run.outcome is Outcome.unknown and run.failure is None
    assert _steps(run) == [("fetch", None), (None, "TimeoutError: model call timed out after 60s"),
                           ("respond", None), ("check", None)]


@pytest.mark.parametrize("name, error", [
    ("wf-retried-every-attempt-fails.session.json", "ConnectionError: rows service unreachable"),
    ("wf-retried-ok-then-node-raises.session.json", "ValueError: bad rows: no row count"),
])
def test_adk_workflow_node_whose_retries_failed_still_fails_the_run(name: str, error: str) -> None:
    """The guards: a node whose every attempt raised, and a later node raising for good after a retried one
    recovered: the run failed with that error."""
    run = _run(name)
    assert run.outcome is Outcome.failure
    assert run.failure is not None and run.failure.error == error
    assert run.steps[-1].error == error
