"""A call its harness did not run, read alike by every adapter and every rule (review FRALLA, round 23): worded
``not run: ...`` (:data:`trajsearch.actions.NOT_RUN`), and neither a read, a write nor a test run."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_inputs
from trajsearch.model import Step, Trajectory
from trajsearch.represent import recoveries
from trajsearch.steps import is_read, is_test_run, is_write, verified
from trajsearch.touched import touched

FIXTURES = Path(__file__).parent / "fixtures"
MINI_RFC = FIXTURES / "mini-swe-agent/.real/rfc-mini-swe-agent-trajectory.json"
MINI_SUBMIT = FIXTURES / "mini-swe-agent/.real/mini-2.4.6-toolcall-submission.traj.json"
HARBOR_MINI = FIXTURES / "atif/.real/harbor-0.26-mini-swe-agent/mini-2.4.6-toolcall-submission"
REFUSAL = "Command not executed. The user rejected your command with the following message: use printf"


def _only(path: Path) -> Trajectory:
    [parsed] = read_inputs([path])
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def _refused(tmp_path: Path, command: str | None = None) -> Trajectory:
    """The real 1.x run with its first command refused in confirm mode (the reply mini-swe-agent gives), that command
    ``command`` where given."""
    record = json.loads(MINI_RFC.read_text())
    record["messages"][3] = {"role": "user", "content": REFUSAL, "extra": {"interrupt_type": "UserRejection"}}
    if command is not None:
        record["messages"][2]["content"] = record["messages"][2]["content"].replace(
            'echo "Hello, world!" > hello.txt', command)
    path = tmp_path / "cfg" / MINI_RFC.name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(record))
    return _only(path)


def test_a_command_refused_in_confirm_mode_wrote_and_read_nothing(tmp_path: Path) -> None:
    """mini-swe-agent's confirm-mode refusal was worded as it came, not ``not run: ``: a refused ``echo ... >
    hello.txt`` listed hello.txt changed, a refused ``cat hello.txt`` was a read of it that got past its own error."""
    write = _refused(tmp_path)
    assert write.steps[0].error == "not run: " + REFUSAL
    assert not is_write(write.steps[0]) and touched(write).changed == []
    read = _refused(tmp_path, "cat hello.txt")
    assert read.steps[0].arguments == {"command": "cat hello.txt"} and not is_read(read.steps[0])
    # got past by the next ``cat hello.txt``, that ran (the run's own), not by itself
    assert read.steps[1].arguments == {"command": "cat hello.txt"}
    assert [r for r in recoveries(read.steps) if r[0] == 0] == [(0, "not run: " + REFUSAL, 1)]


def test_a_refused_test_run_takes_no_pass_back() -> None:
    """``pytest -q`` passed, then the user refused the same command: the run read as not verified (its last test
    run had not passed), though the refused one ran nothing."""
    ok = Step(index=0, action="Bash", arguments={"command": "pytest -q"}, observation="5 passed in 0.1s")
    refused = Step(index=1, action="Bash", arguments={"command": "pytest -q"},
                   error="not run: The user doesn't want to proceed with this tool use.")
    run = Trajectory(trajectory_id="t", tenant="default", task="x", steps=[ok, refused])
    assert not is_test_run(refused) and is_test_run(ok)
    assert verified(run, reward_at_least=None)
