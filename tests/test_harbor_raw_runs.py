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
