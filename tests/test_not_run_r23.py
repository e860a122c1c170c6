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


def test_the_submitting_call_ran_and_a_later_call_of_its_turn_did_not(tmp_path: Path) -> None:
    """mini-swe-agent 2.x's CLI (real 2.4.6 run, and Harbor's ATIF of it) pads the submitting call and any later call
    of its turn with "action was not executed"; with a second call (``cat calc.py``) after the submitting one, the
    exit message went to the later call and the submit kept ``not run`` (mini's own file), or neither was ``not run``
    and the cat read calc.py (ATIF)."""
    submit = {"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt"}
    record = json.loads(MINI_SUBMIT.read_text())
    turn, placeholder, exit_message = record["messages"][-3:]
    turn["tool_calls"].append({"function": {"arguments": json.dumps({"command": "cat calc.py"}), "name": "bash"},
                               "id": "call_2", "type": "function"})
    turn["extra"]["actions"].append({"command": "cat calc.py", "tool_call_id": "call_2"})
    record["messages"] = record["messages"][:-1] + [{**copy.deepcopy(placeholder), "tool_call_id": "call_2"},
                                                    exit_message]
    mini = tmp_path / "cfg" / "inst" / "inst.traj.json"
    mini.parent.mkdir(parents=True)
    mini.write_text(json.dumps(record))

    harbor = tmp_path / "trial"
    shutil.copytree(HARBOR_MINI, harbor)
    atif = json.loads((HARBOR_MINI / "agent/trajectory.json").read_text())
    last = atif["steps"][-1]
    last["tool_calls"].append({"tool_call_id": "call_2", "function_name": "bash", "arguments": {"command": "cat calc.py"}})
    results = last["observation"]["results"]
    results.append({"source_call_id": "call_2", "content": results[0]["content"]})
    results[0]["source_call_id"] = last["tool_calls"][0]["tool_call_id"]
    (harbor / "agent/trajectory.json").write_text(json.dumps(atif))

    for run in (_only(mini), _only(harbor / "agent/trajectory.json")):
        ran, padded = run.steps[-2:]
        assert ran.arguments == submit and ran.error is None
        assert padded.arguments == {"command": "cat calc.py"} and padded.error == "not run: action was not executed"
        assert "calc.py" not in touched(run).read
    assert _only(mini).steps[-2].observation.startswith("diff --git a/hello.py b/hello.py")


def test_git_restore_writes_unless_it_only_unstages_whatever_the_order_of_its_flags() -> None:
    """``git restore -W -S F`` and ``--worktree --staged F`` set F back too (a write); only ``--staged``/``-S``
    without ``--worktree``/``-W`` only unstages. The order of the flags decided it."""
    def write(command: str) -> bool:
        return is_write(Step(index=0, action="run_shell_command", arguments={"command": command}))

    assert all(write(c) for c in ("git restore -W -S calc.py", "git restore --worktree --staged calc.py",
                                  "git restore -S -W calc.py", "git restore --staged --worktree calc.py"))
    assert not any(write(c) for c in ("git restore --staged calc.py", "git restore -S calc.py"))
