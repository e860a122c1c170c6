"""Probe 47 (B2): SWE-agent and mini-swe-agent runs of other models and versions, read through ``read_dump``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures" / "swe-agent"
EXIT_RUN = FIXTURES / ".real" / "function_calling_exit" / "marshmallow-code__marshmallow-1867.traj"


def _read(path: Path):
    runs = [p.trajectory for p in read_dump(path) if p.trajectory]
    assert len(runs) == 1
    return runs[0]


def test_model_typing_exit_is_the_agent_quitting_not_an_infrastructure_error():
    """SWE-agent 1.x ends a run whose model runs ``exit`` with ``exit_status: exit_command`` and no patch: the
    agent gave up, which must not be blamed on the harness or the model API."""
    run = _read(EXIT_RUN)
    assert run.outcome is Outcome.failure
    assert run.failure is not None and run.failure.cause is None
    assert run.failure.error.startswith("exit_command: ")
    assert "exit" in run.failure.error and "nothing handed in" in run.failure.error
    assert run.steps[-1].action == "exit" and run.steps[-1].observation == "Exited"
    assert [s.action for s in run.steps[:3]] == ["create", "edit", "bash"]
    assert run.metadata["exit_status"] == "exit_command"


def test_person_typing_exit_gives_no_verdict(tmp_path: Path):
    """The same stop typed by a person driving SWE-agent (``--agent.model.name human``) is theirs: unknown."""
    record = json.loads(EXIT_RUN.read_text())
    record["replay_config"]["agent"]["model"]["name"] = "human"
    target = tmp_path / "human_run" / EXIT_RUN.name
    target.parent.mkdir()
    target.write_text(json.dumps(record))
    run = _read(target)
    assert run.model_id == "human"
    assert run.outcome is Outcome.unknown
    assert run.failure is None


def test_exit_command_timeout_stays_an_agent_failure(tmp_path: Path):
    """``exit_command_timeout`` (too many commands timed out) shares the prefix and stays a plain agent failure."""
    target = tmp_path / "run" / EXIT_RUN.name
    target.parent.mkdir()
    shutil.copy(EXIT_RUN, target)
    record = json.loads(target.read_text())
    record["info"]["exit_status"] = "exit_command_timeout"
    target.write_text(json.dumps(record))
    run = _read(target)
    assert run.outcome is Outcome.failure
    assert run.failure is not None and "quit with nothing" not in run.failure.error


MINI = Path(__file__).parent / "fixtures" / "mini-swe-agent"


def test_mini_human_mode_commands_are_steps_with_their_errors():
    """2.x's ``mini`` saves a command the user typed in human mode as a ``user`` message with ``extra.actions``, its
    output as the next ``user`` message: each is a step (not a nudge with no action) whose error is read from the
    output, and the submitting one is not an error for its "action was not executed" placeholder."""
    run = _read(MINI / ".real" / "human_mode" / "last_mini_run.traj.json")
    commands = [s.arguments["command"] for s in run.steps if s.action == "bash"]
    assert commands == ["ls tests", "pytest tests/test_io.py -x", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]
    failing = next(s for s in run.steps if s.arguments and s.arguments.get("command") == "pytest tests/test_io.py -x")
    assert failing.error is not None and "FileNotFoundError" in failing.error and "exit code 1" in failing.error
    assert "human mode" in (failing.thought or "")
    assert run.steps[-1].error is None
    assert not any(s.observation and s.observation.startswith("User command:") for s in run.steps)
    assert run.outcome.value == "success"
