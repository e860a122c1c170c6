"""mini-swe-agent runs that reached their step limit with no terminal to ask for new limits: real files its ``mini``
1.17.5 and 2.3.0 wrote (``fixtures/mini-swe-agent/.limit-eof``, how in the README beside them), read through the
public reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome, Trajectory

from adapter_support import only

LIMIT_EOF = Path(__file__).parent / "fixtures/mini-swe-agent/.limit-eof"
MARSHMALLOW = Path(__file__).parent / "fixtures/mini-swe-agent/deepseek_chat_dev/marshmallow-code__marshmallow-1343"


@pytest.mark.parametrize("name", ["unattended-1.17.5.traj.json", "unattended-2.3.0.traj.json"])
def test_a_limit_reached_with_no_terminal_is_the_agents_failure(name: str) -> None:
    """Bug: up to 2.3.0 the interactive agent (``mini``, ``-y`` too) answers ``LimitsExceeded`` by asking for new
    limits with ``input()``; unattended (stdin not a terminal) that raises ``EOFError``, the exit status saved. The run
    read as the harness's or the model API's failure (``infra_error``), though it stopped on its own budget, as
    2.3.1+ (mini-swe-agent #850) records it: ``LimitsExceeded``, the agent's failure. The saved traceback says so."""
    run = only(LIMIT_EOF / name)
    assert run.task == "List the files."
    assert run.outcome is Outcome.failure
    assert run.metadata["exit_status"] == "EOFError"  # as saved
    assert run.failure is not None and run.failure.cause is None
    assert run.failure.error == "LimitsExceeded: no error output recorded"  # as a clean stop after `ls` reads
    assert [s.arguments for s in run.steps] == [{"command": "ls"}]  # the one step the limit allowed, nothing lost


def test_a_limit_reached_with_no_terminal_reads_as_the_same_limit_recorded_cleanly(tmp_path: Path) -> None:
    """Bug: a limit that ended at the new-limits prompt got its own error text ("the run reached its limit; asked for
    new ones, ... ended on EOFError ..."), while the same stop recorded as ``LimitsExceeded`` reads "LimitsExceeded:
    last failing step N (...)": one failure mode split in two for search and grouping, the failing step lost. A real
    2.2.7 run that stopped on its limit, and the same run ending as 2.3.0's unattended ``mini`` ended it (its real
    ``exit`` message): one error; the prompt's exception stays the saved exit status."""
    clean_path = MARSHMALLOW / f"{MARSHMALLOW.name}.traj.json"
    raw = json.loads(clean_path.read_text())
    eof = json.loads((LIMIT_EOF / "unattended-2.3.0.traj.json").read_text())
    raw["messages"][-1] = eof["messages"][-1]
    raw["info"].update({"exit_status": "EOFError", "submission": ""})
    at_prompt_path = tmp_path / MARSHMALLOW.name / clean_path.name
    at_prompt_path.parent.mkdir()
    at_prompt_path.write_text(json.dumps(raw))
    clean, at_prompt = only(clean_path), only(at_prompt_path)
    assert clean.failure is not None and at_prompt.failure is not None
    assert clean.failure.error.startswith("LimitsExceeded: last failing step ")
    assert at_prompt.failure == clean.failure
    assert (at_prompt.outcome, at_prompt.metadata["exit_status"]) == (Outcome.failure, "EOFError")


@pytest.mark.parametrize("name", ["limits-raised-1.17.5.traj.json", "limits-raised-2.3.0.traj.json"])
def test_a_model_call_failing_after_new_limits_were_given_stays_the_harness_failure(name: str) -> None:
    """Bug: the interactive agent queries the model again inside its ``except LimitsExceeded``, once a person gave new
    limits; an exception of that call (here the deterministic model out of replies: ``IndexError``; in real use a
    ``RateLimitError``...) is chained to ``LimitsExceeded`` too. It read as the agent's ``LimitsExceeded`` failure,
    "ended on" a limit the person had just raised. Only an exception raised at the new-limits prompt is the stop's."""
    run = only(LIMIT_EOF / name)
    assert run.outcome is Outcome.infra_error
    assert run.metadata["exit_status"] == "IndexError"
    assert run.failure is not None and run.failure.cause is not None
    assert run.failure.error.startswith("IndexError: list index out of range")


def _harbor_trial(tmp_path: Path, raw_name: str) -> Path:
    """The real boto3 Harbor trial (``atif/.real/harbor-mini-retry``) with the real limit-EOF file ``raw_name`` as the
    raw mini-swe-agent trajectory beside its ATIF, as Harbor runs ``mini-swe-agent --yolo ... </dev/null``."""
    trial = tmp_path / "trial"
    shutil.copytree(Path(__file__).parent / "fixtures/atif/.real/harbor-mini-retry/"
                    "011_boto__boto3__step14__bucket___u6YTY7M", trial)
    shutil.copy(LIMIT_EOF / raw_name, trial / "agent/mini-swe-agent.trajectory.json")
    return trial


def _harbor_saw_the_exit(trial: Path) -> None:
    """Harbor's record of a 2.x run that re-raised its exception (mini-swe-agent exits 1; Harbor's command pipes
    ``2>&1`` into ``tee`` under ``pipefail``): ``NonZeroAgentExitCodeError`` with the console's last line."""
    result = json.loads((trial / "result.json").read_text())
    result["exception_info"] = {"exception_type": "NonZeroAgentExitCodeError",
                                "exception_message": "Command failed (exit 1): mini-swe-agent --yolo ... "
                                                     "--exit-immediately\nstdout: EOFError: EOF when reading a line"
                                                     "\nstderr: None"}
    (trial / "result.json").write_text(json.dumps(result))


def _trial_run(trial: Path) -> Trajectory:
    """The one run read from a Harbor trial folder."""
    runs = [p.trajectory for p in read_inputs([trial]) if p.trajectory is not None]
    assert len(runs) == 1
    return runs[0]


@pytest.mark.parametrize("raw_name", ["unattended-1.17.5.traj.json", "unattended-2.3.0.traj.json"])
def test_a_harbor_trial_whose_mini_swe_agent_reached_its_limit_keeps_the_verifiers_verdict(
        tmp_path: Path, raw_name: str) -> None:
    """Bug: Harbor runs mini-swe-agent with no terminal; a raw trajectory beside the trial's ATIF that ended on the
    limit's ``EOFError`` made the trial an ``infra_error`` (the model API's or harness's failure), its verdict set
    aside. Where the agent exited 0 (1.x catches the exception), the verifier's verdict stands, as for an agent that
    stopped on its own (2.3.1+)."""
    run = _trial_run(_harbor_trial(tmp_path, raw_name))
    assert run.outcome is Outcome.failure and "agent_exit_status" not in run.metadata
    assert run.failure is not None and run.failure.cause.startswith("verifier tests failed: ")


def test_a_harbor_trial_whose_2x_mini_swe_agent_exited_1_at_the_limit_is_the_agents_failure(tmp_path: Path) -> None:
    """Bug: 2.x re-raises the prompt's ``EOFError`` and exits 1, so Harbor records ``NonZeroAgentExitCodeError``
    beside the raw file; the raw file's EOFError made the trial an ``infra_error`` with an infrastructure cause. The
    agent's process failing on its own limit is the agent's failure, as Harbor counts it."""
    trial = _harbor_trial(tmp_path, "unattended-2.3.0.traj.json")
    _harbor_saw_the_exit(trial)
    run = _trial_run(trial)
    assert run.outcome is Outcome.failure and "agent_exit_status" not in run.metadata
    assert run.failure is not None and run.failure.error.startswith("NonZeroAgentExitCodeError: ")
    assert run.failure.cause is not None and run.failure.cause.startswith("the agent's process exited non-zero")
