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
