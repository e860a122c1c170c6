"""mini-swe-agent files audited in round 32 (AUDMS32): real files its ``mini`` (2.4.6, 1.15.0) wrote
(``fixtures/mini-swe-agent/.aud32``, how each was made in the README beside them), read through the public reader."""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only, runs

AUD32 = Path(__file__).parent / "fixtures/mini-swe-agent/.aud32"


def test_a_responses_api_turn_the_agent_rejected_keeps_what_the_model_wrote() -> None:
    """Bug (AUDMS32): a Responses API model (2.x ``litellm_response``) whose reply had no function call is rejected
    with a format error that keeps the reply in ``extra.response`` as a whole ``{"object": "response", "output"}``;
    the step read only a chat completion's ``choices`` there and lost the model's words (no thought)."""
    run = only(AUD32 / "responses-format-error.traj.json")
    assert (run.task, run.outcome, run.metadata["exit_status"]) == ("Say hello.", Outcome.failure,
                                                                    "RepeatedFormatError")
    (step,) = run.steps
    assert step.action is None and step.thought == "Just thinking out loud."
    assert step.error == "No tool calls found in the response. Every response MUST include at least one tool call."


def test_each_mini_session_saved_to_the_cli_default_file_is_a_run_of_its_own() -> None:
    """Bug (AUDMS32): 2.x's ``mini`` saves every session to ``~/.config/mini-swe-agent/last_mini_run.traj.json``
    (no instance id), each overwriting the last; named by that path alone, every session had one id, so ingesting
    the folder after each session replaced the run stored before with the next session. Two real sessions (two
    homes here) are two runs; each names its former, path-only id so that a store written before replaces it there."""
    a, b = (only(AUD32 / f"home-{s}/.config/mini-swe-agent/last_mini_run.traj.json") for s in "ab")
    assert (a.task, b.task) == ("Session a: say hello.", "Session b: say hello.")
    assert a.trajectory_id != b.trajectory_id
    assert a.trajectory_id.startswith("config.mini-swe-agent.last_mini_run.")
    assert a.metadata["former_ids"][0] == b.metadata["former_ids"][0] == "config.mini-swe-agent.last_mini_run"


def test_a_command_the_user_interrupted_is_the_step_error() -> None:
    """Bug (AUDMS32 review): Ctrl+C while a command runs makes ``mini`` answer the turn ``Interrupted by user: ...``
    (1.x: the command's only reply; 2.x: a ``UserInterruption`` message after the call's placeholder). It read as a
    clean reply, so a command the user cut off looked like one that finished."""
    old = only(AUD32 / "interrupted-1x.traj.json")
    assert [s.error for s in old.steps] == ["interrupted by the user: Temporary interruption caught.", None]
    new = only(AUD32 / "interrupted-2x.traj.json")
    assert [(s.action, s.error) for s in new.steps] == [
        ("bash", "not run: action was not executed"),
        (None, "interrupted by the user: Temporary interruption caught."),
        ("bash", None)]
    assert old.outcome == new.outcome == Outcome.success


def test_a_rejected_responses_api_turn_keeps_its_reasoning_and_the_calls_it_tried() -> None:
    """Review AUDMS32 (nits 4-5, and the untested ``function_call`` reading): a rejected Responses API turn whose
    output holds only reasoning and calls (one to a tool the agent does not have, one with no name) kept no reasoning,
    and a nameless call read ``tried None``. Fixture: the real format-error run with its response's ``output``
    replaced (README beside it)."""
    (step,) = only(AUD32 / "derived-responses-unknown-tool.traj.json").steps
    assert step.action is None
    assert step.thought.splitlines() == [
        "The file is at /x; I open it.", 'tried str_replace_editor {"path": "/x"}', "tried a nameless call {}"]


def test_ingesting_a_home_folder_finds_the_session_mini_saved_there() -> None:
    """Review AUDMS32: a walk of a home folder skipped ``~/.config/mini-swe-agent`` (a hidden folder; only the agent
    CLIs' session folders are walked), so the session ``mini`` saves there by default was never found."""
    (run,) = runs(AUD32 / "home-a")
    assert run.task == "Session a: say hello."
