"""A Harbor trial's run read from the agent's own files when Harbor kept no ATIF conversion (round 28, HARBORT).

A trial holds one run: Harbor's ATIF ``agent/trajectory.json`` where it converted the agent's session, else the raw
session the agent left under ``agent/`` (Claude Code's transcript ``agent/sessions/projects/<project>/<id>.jsonl``,
a Codex rollout, Qwen Code's chat). That raw run was read with outcome ``unknown``, no reward and no task id, though
the trial's ``result.json`` graded it (review of AUD8, finding 3). It now takes the verdict, task id and start from
``result.json`` as the ATIF run and the headless ``claude-code.txt`` run do (``atif.trial_of_run``).

Real files, laid out as Harbor lays out a trial (each folder's SOURCE.md / README.md says where they come from):
SkillsBench's Claude Code trial (``claude-code/.aud7``) holding Claude Code 2.1.337's real session of one ``claude
-p`` run (``claude-code/.r28``: the transcript and the same run's stream-json as ``claude-code.txt``); Harbor 0.26's
Qwen Code trial (``atif/.real/harbor-0.26-qwen-code``: a chat and its sub-agent's); a Harbor job of runme's Codex
agent (``atif/.real/harbor-runme``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
SKILLSBENCH = FIXTURES / "claude-code" / ".aud7" / "skillsbench-no-atif" \
    / "claude-code-claude-opus-4-5-skills-econ-detrending-correlation-916cde"
SDK = FIXTURES / "claude-code" / ".r28" / "agent-sdk-0.3.337"
SESSION = "e20655e3-fa4e-4435-ba5d-7b9144d80381"
QWEN = FIXTURES / "atif" / ".real" / "harbor-0.26-qwen-code" / "delegate__q2"
RUNME = FIXTURES / "atif" / ".real" / "harbor-runme" / "2026-06-30__14-22-55" / "update-minor-deps__xQmAxjA"


def _claude_trial(tmp_path: Path) -> Path:
    """The SkillsBench trial (result.json: reward 1.0) with the 2.1.337 run as Harbor keeps it: the headless output
    teed to ``agent/claude-code.txt`` and the session's transcript copied under ``agent/sessions/projects/``."""
    trial = tmp_path / SKILLSBENCH.name
    shutil.copytree(SKILLSBENCH, trial)
    shutil.copy(SDK / "stream-json-stdout.jsonl", trial / "agent" / "claude-code.txt")
    (trial / "agent" / "sessions" / "projects" / "-app").mkdir(parents=True)
    shutil.copy(SDK / f"{SESSION}.jsonl", trial / "agent" / "sessions" / "projects" / "-app" / f"{SESSION}.jsonl")
    return trial


def test_a_claude_transcript_harbor_kept_unconverted_is_the_trials_run_with_its_verdict(tmp_path: Path) -> None:
    trial = _claude_trial(tmp_path)
    runs = [p.trajectory for p in read_dump(trial, tenant="acme") if p.trajectory is not None]
    assert [r.trajectory_id for r in runs] == [f"claude-code.{SESSION}"]  # the output beside it passed over
    [run] = runs
    assert run.task.startswith("FIXTEST: the test in test_calc.py fails")
    assert (run.outcome, run.reward) == (Outcome.success, 1.0)  # was unknown, None
    assert (run.task_id, run.metadata["trial_name"]) == ("econ-detrending-correlation",
                                                         "econ-detrending-correlation__AuCQ72j")
    assert run.created_at.isoformat().startswith("2026-12-")  # its own records' time, not the trial's start


def test_a_claude_transcript_outside_a_trial_or_beside_a_conversion_takes_no_verdict(tmp_path: Path) -> None:
    [alone] = read_dump(SDK / f"{SESSION}.jsonl", tenant="acme")
    assert (alone.trajectory.outcome, alone.trajectory.reward, alone.trajectory.task_id) == (Outcome.unknown, None,
                                                                                            None)
    trial = _claude_trial(tmp_path)
    (trial / "agent" / "trajectory.json").write_text(
        '{"schema_version": "ATIF-v1.2", "session_id": "s1", "agent": {"name": "claude-code"}, "steps": '
        '[{"step_id": 1, "source": "user", "message": "Detrend the series."}, '
        '{"step_id": 2, "source": "agent", "message": "Done."}]}')
    runs = [p.trajectory for p in read_dump(trial, tenant="acme") if p.trajectory is not None]
    assert [r.metadata["source_format"] for r in runs] == ["atif"]  # the conversion is the trial's run, as before


def test_a_qwen_chat_harbor_kept_unconverted_takes_the_verdict_and_its_subagent_does_not(tmp_path: Path) -> None:
    """Harbor 0.26's Qwen Code trial without its ATIF conversion (Harbor writes none when converting fails): the
    chat is the trial's run; the sub-agent's session, a part of it, is read as before (no verdict of its own)."""
    trial = tmp_path / QWEN.name
    shutil.copytree(QWEN, trial)
    (trial / "agent" / "trajectory.json").unlink()
    runs = {bool(p.trajectory.metadata.get("is_subagent")): p.trajectory
            for p in read_dump(trial, tenant="acme") if p.trajectory is not None}
    assert (runs[False].outcome, runs[False].reward, runs[False].task_id) == (Outcome.success, 1.0, "delegate")
    assert (runs[True].outcome, runs[True].reward, runs[True].task_id) == (Outcome.unknown, None, None)


def test_a_codex_rollout_harbor_kept_unconverted_takes_the_trials_verdict(tmp_path: Path) -> None:
    trial = tmp_path / RUNME.name
    shutil.copytree(RUNME, trial)
    (trial / "agent" / "trajectory.json").unlink()
    [run] = [p.trajectory for p in read_dump(trial, tenant="acme") if p.trajectory is not None]
    assert run.metadata["source_format"] == "codex-cli"
    assert (run.outcome, run.reward, run.task_id) == (Outcome.success, 1.0, "runmedev/update-minor-deps")


def test_a_claude_transcript_of_another_session_than_the_trials_headless_run_takes_no_verdict(tmp_path: Path) -> None:
    """A trial has one run: where its ``claude-code.txt`` names a session whose transcript the trial did not keep (the
    SkillsBench output's own, 01169f8f...), that output is the trial's run, and another session's transcript beside it
    takes no verdict (review of AUD8's trial C: two graded runs of one trial otherwise)."""
    trial = _claude_trial(tmp_path)
    shutil.copy(SKILLSBENCH / "agent" / "claude-code.txt", trial / "agent" / "claude-code.txt")
    runs = {p.trajectory.trajectory_id.split(".")[1]: p.trajectory for p in read_dump(trial, tenant="acme")
            if p.trajectory is not None}
    assert (runs["01169f8f-14dc-401a-9d50-dfafd5957016"].outcome, runs[SESSION].outcome) == (Outcome.success,
                                                                                            Outcome.unknown)


REFUSAL = "d34eee5f-699e-4298-8c7f-bcfc8e46bb3e"


def _graded(trial: Path) -> dict[str, tuple[Outcome, float | None]]:
    """Each run read from the trial, by its session id: (outcome, reward)."""
    return {p.trajectory.metadata["session_id"]: (p.trajectory.outcome, p.trajectory.reward)
            for p in read_dump(trial, tenant="acme") if p.trajectory is not None}


def test_of_two_claude_transcripts_in_a_trial_only_the_session_its_output_names_takes_the_verdict(
        tmp_path: Path) -> None:
    """Both real 2.1.337 sessions kept in one trial (review of HARBORT, finding 3: the refusal was graded a success
    beside the run, two graded runs for one trial); ``claude-code.txt`` names e20655e3, so it alone is the run."""
    trial = _claude_trial(tmp_path)
    shutil.copy(SDK / f"{REFUSAL}.jsonl", trial / "agent" / "sessions" / "projects" / "-app" / f"{REFUSAL}.jsonl")
    graded = _graded(trial)
    assert graded[SESSION] == (Outcome.success, 1.0)
    assert graded[REFUSAL][1] is None and graded[REFUSAL][0] is not Outcome.success  # its own ending, no reward


def test_of_two_claude_transcripts_in_a_trial_whose_output_names_none_neither_takes_the_verdict(
        tmp_path: Path) -> None:
    """Nothing names which of two top-level sessions is the trial's run: neither is graded, and each says why."""
    trial = _claude_trial(tmp_path)
    (trial / "agent" / "claude-code.txt").unlink()
    shutil.copy(SDK / f"{REFUSAL}.jsonl", trial / "agent" / "sessions" / "projects" / "-app" / f"{REFUSAL}.jsonl")
    runs = [p.trajectory for p in read_dump(trial, tenant="acme") if p.trajectory is not None]
    assert sorted(r.metadata["session_id"] for r in runs) == sorted([SESSION, REFUSAL])
    assert all(r.reward is None and r.outcome is not Outcome.success for r in runs)
    assert all("holds 2 top-level sessions" in r.metadata["trial_verdict_withheld"] for r in runs)


def _stderr_then_stream() -> str:
    """``2>&1 | tee``: more lines of the CLI's stderr before its ``init`` record than are read for it."""
    return "".join(f"[warn] stderr line {i}\n" for i in range(8)) + (SDK / "stream-json-stdout.jsonl").read_text()


@pytest.mark.parametrize("output", [
    "Fixed the test: add() now returns a + b.\n",  # plain text (`claude -p` with no --output-format)
    "",  # empty (the CLI died before writing)
    None,  # `--output-format json`: its one result record, which names the session but is no init record
    _stderr_then_stream,
], ids=["plain-text", "empty", "json-result", "stderr-before-init"])
def test_a_claude_output_naming_no_session_leaves_the_verdict_to_the_trials_one_transcript(
        tmp_path: Path, output: Any) -> None:
    """Review of HARBORT, finding 4: such an output took the verdict from the transcript and yielded no run itself,
    so the trial had no graded run. Now the trial's only transcript is its run, and only it is graded."""
    trial = _claude_trial(tmp_path)
    text = output() if callable(output) else output
    if text is None:
        text = (SDK / "stream-json-stdout.jsonl").read_text().splitlines()[-1] + "\n"
    (trial / "agent" / "claude-code.txt").write_text(text)
    graded = [(p.trajectory.trajectory_id, p.trajectory.outcome, p.trajectory.reward)
              for p in read_dump(trial, tenant="acme")
              if p.trajectory is not None and p.trajectory.reward is not None]
    assert graded == [(f"claude-code.{SESSION}", Outcome.success, 1.0)]


def test_of_two_codex_rollouts_in_a_trial_neither_takes_the_verdict(tmp_path: Path) -> None:
    """A second ``codex exec`` in one trial (runme's real rollout, and the same with another session id): nothing
    names which is the trial's run, so neither is graded, and each run says why."""
    trial = tmp_path / RUNME.name
    shutil.copytree(RUNME, trial)
    (trial / "agent" / "trajectory.json").unlink()
    [rollout] = (trial / "agent" / "sessions").rglob("rollout-*.jsonl")
    first = "019f1a69-e753-7a60-9727-4c3ca0640fd0"
    second = "019f1a69-e753-7a60-9727-4c3ca0640fd1"
    (rollout.parent / rollout.name.replace(first, second)).write_text(rollout.read_text().replace(first, second))
    runs = [p.trajectory for p in read_dump(trial, tenant="acme") if p.trajectory is not None]
    assert len(runs) == 2
    assert all(r.reward is None and r.outcome is not Outcome.success and r.task_id is None for r in runs)
    assert all("holds 2 top-level sessions" in r.metadata["trial_verdict_withheld"] for r in runs)
