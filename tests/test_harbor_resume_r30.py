"""Round 30 (HARB30): Harbor multi-step trials, continued.

A step that resumed the step before's Claude Code session (``resume_trajectory``: Harbor's claude-code agent runs
``claude --continue --print`` in every step after the first, and copies the agent logs into each step's folder) is
its own turns, as a resumed Codex step is; Claude Code 2.x appends them to the same ``<session id>.jsonl``.

Real files (see each fixture folder's README.md): Claude Code 2.1.332's session after each of two steps run as
Harbor runs them (``claude-code/.harb30/resume-2.1.332``), laid out in the two-step trial of
``test_harbor_steps_subagents``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import traceback
from pathlib import Path

import pytest
from test_harbor_steps_subagents import _multi_step_trial, _resumed_trial, _runs

from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_RESUME = FIXTURES / "claude-code" / ".harb30" / "resume-2.1.332"


def _claude_resumed_trial(tmp_path: Path) -> Path:
    """The two-step trial run with ``resume_trajectory`` by Claude Code: each step's session and ``claude-code.txt``
    where Harbor keeps them (``agent/sessions/projects/-app/``, ``agent/claude-code.txt``)."""
    trial = _multi_step_trial(tmp_path)
    shutil.rmtree(trial / "steps")
    for step in ("write", "test"):
        agent = trial / "steps" / step / "agent"
        [session] = (CLAUDE_RESUME / step).glob("*.jsonl")
        (agent / "sessions" / "projects" / "-app").mkdir(parents=True)
        shutil.copy(session, agent / "sessions" / "projects" / "-app" / session.name)
        shutil.copy(CLAUDE_RESUME / step / "claude-code.txt", agent / "claude-code.txt")
    return trial


def test_a_claude_code_step_continued_from_the_one_before_is_its_own_turns(tmp_path: Path) -> None:
    """``claude --continue`` appends the later step's turns to the session file Harbor copied into the earlier
    step's folder: the later step's run is its own prompt and commands under its own verdict (it was the whole
    session: the earlier step's task and ``echo`` graded by the later step's 0.0)."""
    runs = {r.metadata["trial_step"]: r for r in _runs(_claude_resumed_trial(tmp_path))}
    write, test = runs["write"], runs["test"]
    assert (write.task, write.reward) == ("STEP ONE: write hello.txt containing hello.", 1.0)
    assert (test.task, test.reward) == ("STEP TWO: show what hello.txt says.", 0.0)
    assert "cat hello.txt" in " ".join(str(s.arguments) for s in test.steps)
    assert "echo hello" not in " ".join(str(s.arguments) for s in test.steps)
    assert "echo hello" in " ".join(str(s.arguments) for s in write.steps)
    assert test.metadata["resumed_from_step"] == "write" and "resumed_from_step" not in write.metadata
    assert test.metadata.get("user_prompts") is None
    assert write.steps[-1].started_at < test.created_at <= test.steps[0].started_at


def _stopped_mid_step(trial: Path, step: str) -> Path:
    """``trial`` as Harbor leaves a multi-step trial an exception stopped while ``step`` ran and that it never
    finished: the step's folder made (``_create_step_dirs``) but never filled (``_archive_step_outputs``), its logs in
    the trial's own ``agent/`` (``_recover_outputs``), the exception in ``exception.txt`` (``_record_exception``:
    ``traceback.format_exc()``, here of a real ``CancelledError``, a cancelled job's) and no ``result.json`` yet."""
    shutil.move(trial / "steps" / step / "agent", trial / "agent")
    (trial / "steps" / step / "agent").mkdir()
    (trial / "result.json").unlink()
    try:
        raise asyncio.CancelledError()
    except asyncio.CancelledError:
        (trial / "exception.txt").write_text(traceback.format_exc())
    return trial


def test_an_unfinished_multi_step_trials_exception_is_the_running_steps(tmp_path: Path) -> None:
    """Harbor records each step's own agent and verifier errors in its ``step_results``; ``exception.txt`` holds
    the exception that stopped the trial while a step ran, whose logs lie in the trial's own ``agent/``. That run is
    the step's (named by it, as once the trial finishes) and the exception is its verdict; the step finished before
    takes none. It was read as the trial's whole run, named by no step."""
    runs = {r.metadata.get("trial_step"): r for r in _runs(_stopped_mid_step(_multi_step_trial(tmp_path), "test"))}
    assert set(runs) == {"test", "write"}
    test, write = runs["test"], runs["write"]
    assert test.trajectory_id == "codex.01a234a7-28a1-7d61-a3e9-85ee2685efae.test"
    assert (test.outcome, test.metadata["trial_exception"]) == (Outcome.infra_error, "CancelledError")
    assert (write.outcome, write.reward, write.failure) == (Outcome.unknown, None, None)


def test_the_running_step_that_resumed_the_one_before_is_its_own_turns(tmp_path: Path) -> None:
    """The step running when the trial stopped, resumed from the one before (``codex exec resume --last``): its
    session in the trial's ``agent/`` holds the earlier step's copy first, as a finished step's does, and no
    ``result.json`` orders the steps yet: the earlier copy is the longest one another step's folder holds."""
    runs = {r.metadata.get("trial_step"): r for r in _runs(_stopped_mid_step(_resumed_trial(tmp_path), "test"))}
    test = runs["test"]
    assert (test.task, test.metadata["resumed_from_step"]) == ("STEP TWO: show what hello.txt says.", "write")
    assert "echo hello" not in " ".join(str(s.arguments) for s in test.steps)
    assert test.metadata["trial_exception"] == "CancelledError"


def _stopped_as_step_began(trial: Path) -> Path:
    """``trial`` (run with ``resume_trajectory``) stopped by an exception as its step "test" began, before its agent
    appended anything: ``_archive_step_outputs(preserve_agent=True)`` copied step "write"'s logs into its folder and
    kept them in the trial's own ``agent/`` for "test" to resume; "test"'s folder made, empty."""
    _stopped_mid_step(trial, "test")
    shutil.rmtree(trial / "agent")
    shutil.copytree(trial / "steps" / "write" / "agent", trial / "agent")
    return trial


@pytest.mark.parametrize("built", [_resumed_trial, _claude_resumed_trial])
def test_the_copy_kept_for_the_next_step_to_resume_is_no_run(tmp_path: Path, built) -> None:
    """What the trial's own ``agent/`` holds when it stopped before the resumed step appended is the earlier step's
    copy Harbor keeps for resume: that step's run is read from its own folder, and the copy is no second run (it was
    read as the running step "test"'s: step "write"'s task and work under the exception)."""
    runs = _runs(_stopped_as_step_began(built(tmp_path)))
    assert [(r.metadata.get("trial_step"), r.task) for r in runs] == [
        ("write", "STEP ONE: write hello.txt containing hello.")]


def test_a_finished_trial_stopped_after_its_first_step_has_that_steps_run_once(tmp_path: Path) -> None:
    """A finished trial whose first step timed out (``step_results`` holds it alone, no trial exception) with the
    copy kept for resume left in the trial's own ``agent/``: the step's run, once, with its verdict (the copy was a
    second run under the same id, outcome unknown)."""
    trial = _resumed_trial(tmp_path)
    shutil.copytree(trial / "steps" / "write" / "agent", trial / "agent")
    shutil.rmtree(trial / "steps" / "test")
    result = json.loads((trial / "result.json").read_text())
    write = result["step_results"][0]
    write["verifier_result"] = None
    write["exception_info"] = {"exception_type": "AgentTimeoutError", "exception_traceback": "",
                               "exception_message": "Agent execution timed out after 600.0 seconds",
                               "occurred_at": result["finished_at"]}
    result.update(step_results=[write], verifier_result=None)
    (trial / "result.json").write_text(json.dumps(result))
    assert [(r.metadata.get("trial_step"), r.outcome) for r in _runs(trial)] == [("write", Outcome.failure)]


def test_a_finished_trial_stopped_mid_step_names_the_step_its_record_lists_last(tmp_path: Path) -> None:
    """A trial an exception stopped mid-step that Harbor finished (``result.json``: ``exception_info``, the running
    step's record last in ``step_results``, its verdict none): the session in the trial's own ``agent/`` is that
    step's run, cut to its own turns, graded by the exception."""
    trial = _resumed_trial(tmp_path)
    result = json.loads((trial / "result.json").read_text())
    _stopped_mid_step(trial, "test")
    result["step_results"][-1]["verifier_result"] = result["verifier_result"] = None
    result["exception_info"] = {"exception_type": "CancelledError", "exception_message": "", "occurred_at":
                                result["finished_at"], "exception_traceback": (trial / "exception.txt").read_text()}
    (trial / "result.json").write_text(json.dumps(result))
    runs = {r.metadata.get("trial_step"): r for r in _runs(trial)}
    test = runs["test"]
    assert test.trajectory_id == runs["write"].trajectory_id.removesuffix(".write") + ".test"
    assert (test.outcome, test.task, test.metadata["resumed_from_step"]) == (
        Outcome.infra_error, "STEP TWO: show what hello.txt says.", "write")


def test_a_resumed_step_of_a_trial_not_finished_is_its_own_turns(tmp_path: Path) -> None:
    """No ``result.json`` orders the steps of a trial not finished: a finished step that resumed the one before is
    still cut after the longest shorter copy another step holds (it was read whole: step "write"'s task and work)."""
    trial = _resumed_trial(tmp_path)
    (trial / "result.json").unlink()
    test = {r.metadata.get("trial_step"): r for r in _runs(trial)}["test"]
    assert (test.task, test.metadata["resumed_from_step"]) == ("STEP TWO: show what hello.txt says.", "write")
