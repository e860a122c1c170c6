"""Round 29's reader-side read-through (RT-ING): what the merge of the round's adapters left to fix.

A Harbor trial's aider history and Trae Agent trajectory take the trial's verdict as every CLI session does; goose's
sub-agents are sub-agents and its run ids no longer collide across machines; a history lying where its place says
it is no run is passed over; a forced text format's walk takes its files alone; a coloured test output's error line
is the line, not its colour codes. The trials are laid out as Harbor 0.26 lays them out (``agents/installed/aider.py``:
``--chat-history-file=/logs/agent/aider.chat.history.md``, ``| tee /logs/agent/aider.txt``, no ATIF), with the real
config.json / result.json of runme's Harbor job (``atif/.real/harbor-runme``) and the round's fixtures in ``agent/``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"
RUNME = FIXTURES / "atif" / ".real" / "harbor-runme" / "2026-06-30__14-22-55" / "update-minor-deps__xQmAxjA"
AIDER = FIXTURES / "aider" / ".aider29" / "calculator" / ".aider.chat.history.md"
TRAE = FIXTURES / "atif" / ".real" / "harbor-0.26-trae-agent" / "trae-fix-calc__Qp3Ld" / "agent" \
    / "trae-trajectory.json"
GOOSE = FIXTURES / "goose" / ".goose29" / "20260301_1.json"
TASK = "runmedev/update-minor-deps"


def _trial(tmp_path: Path, files: dict[str, Path | str], reward: int = 1) -> Path:
    """A Harbor trial whose ``agent/`` holds ``files`` (a fixture to copy, or text) and no ATIF conversion;
    ``result.json`` grading it ``reward``."""
    trial = tmp_path / "job" / "x__Ab1Cd"
    (trial / "agent").mkdir(parents=True)
    shutil.copy(RUNME / "config.json", trial / "config.json")
    result = json.loads((RUNME / "result.json").read_text())
    result["verifier_result"]["rewards"]["reward"] = reward
    (trial / "result.json").write_text(json.dumps(result))
    for name, source in files.items():
        target = trial / "agent" / name
        if isinstance(source, Path):
            shutil.copy(source, target)
        else:
            target.write_text(source)
    return trial


def _runs(path: Path) -> list[Trajectory]:
    return [p.trajectory for p in read_dump(path, tenant="acme") if p.trajectory is not None]


def test_harbors_aider_trial_is_walked_and_its_history_takes_the_trials_verdict(tmp_path: Path) -> None:
    """Harbor's aider agent writes its history as ``agent/aider.chat.history.md`` and no ATIF: a walk of the trial
    read no run (``no run in the input``), and the history named alone had no verdict."""
    trial = _trial(tmp_path, {"aider.chat.history.md": AIDER, "aider.txt": "Aider v0.82.2\nApplied edit to calc.py\n"})
    [run] = _runs(tmp_path / "job")
    assert run.trajectory_id.startswith("aider.")
    assert (run.outcome, run.reward, run.task_id) == (Outcome.success, 1.0, TASK)  # was unknown, None, None
    with pytest.raises(SideFile, match="aider's terminal output Harbor kept"):
        detect_format(trial / "agent" / "aider.txt")
    # outside a trial the name is no aider history's: a walk does not take it
    (tmp_path / "notes").mkdir()
    shutil.copy(AIDER, tmp_path / "notes" / "aider.chat.history.md")
    assert _runs(tmp_path / "notes") == []


def test_an_aider_history_beside_a_trials_conversion_is_no_second_run(tmp_path: Path) -> None:
    trial = _trial(tmp_path, {"aider.chat.history.md": AIDER})
    shutil.copy(RUNME / "agent" / "trajectory.json", trial / "agent" / "trajectory.json")
    assert [r.metadata["source_format"] for r in _runs(tmp_path / "job")] == ["atif"]


def test_a_trae_trajectory_in_a_trial_harbor_did_not_convert_takes_the_verifiers_verdict(tmp_path: Path) -> None:
    """Trae's own ``success`` (it called ``task_done``) is its word; the trial's verifier graded the work 0."""
    assert json.loads(TRAE.read_text())["success"] is True
    _trial(tmp_path, {"trae-trajectory.json": TRAE}, reward=0)
    [run] = _runs(tmp_path / "job")
    assert (run.outcome, run.reward, run.task_id) == (Outcome.failure, 0.0, TASK)  # was success, None, None


def _bundle(tmp_path: Path) -> Path:
    """goose's export with one sub-agent session in ``child_sessions`` (as test_adapters_goose builds it)."""
    session = json.loads(GOOSE.read_text())
    child = {**session, "id": "20260301_2", "session_type": "sub_agent", "parent_session_id": "20260301_1"}
    child["conversation"] = [{**child["conversation"][0], "content": [{"type": "text", "text": "read retry.py"}]}]
    path = tmp_path / "goose-session.json"
    path.write_text(json.dumps({**session, "child_sessions": [child]}))
    return path


def test_a_goose_sub_agent_is_marked_so_and_takes_no_trials_verdict(tmp_path: Path) -> None:
    _trial(tmp_path, {"goose-session.json": _bundle(tmp_path)})
    parent, sub = _runs(tmp_path / "job")
    assert (parent.outcome, parent.reward, parent.task_id) == (Outcome.success, 1.0, TASK)
    assert sub.metadata["is_subagent"] is True and "is_subagent" not in parent.metadata
    assert (sub.outcome, sub.reward, sub.task_id) == (Outcome.unknown, None, None)  # was the trial's verdict
    assert sub.metadata["parent_session_id"] == parent.metadata["session_id"] == "20260301_1"


def test_two_machines_first_goose_sessions_of_a_day_are_two_runs(tmp_path: Path) -> None:
    """goose numbers sessions per database (``20260301_1`` is every user's first of the day): two users' exports
    were one run id, the second ingested replacing the first."""
    other = json.loads(GOOSE.read_text())
    other["conversation"][0]["created"] += 3600
    other["conversation"][0]["content"] = [{"type": "text", "text": "make the build faster"}]
    (tmp_path / "alice").mkdir()
    (tmp_path / "bob").mkdir()
    shutil.copy(GOOSE, tmp_path / "alice" / "20260301_1.json")
    (tmp_path / "bob" / "20260301_1.json").write_text(json.dumps(other))
    ids = [r.trajectory_id for r in _runs(tmp_path)]
    assert len(set(ids)) == 2 and all(i.startswith("goose.20260301_1.") for i in ids), ids
    # the same session in another shape (a JSONL file of its messages named by its id) is the same run
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "20260301_1.jsonl").write_text(
        "".join(json.dumps(m) + "\n" for m in json.loads(GOOSE.read_text())["conversation"]))
    assert [r.trajectory_id for r in _runs(tmp_path / "copy")] == [_runs(tmp_path / "alice")[0].trajectory_id]


def test_an_aider_history_where_its_place_says_no_run_is_passed_over(tmp_path: Path) -> None:
    """aider's ``HEAD`` named the format before the place checks every other format passes: a history in a Copilot
    CLI session's ``files/`` (the agent's work) was read as a run."""
    session = tmp_path / ".copilot" / "session-state" / "c8963ad7-e7b1-414c-a9fc-930905e76708"
    (session / "files").mkdir(parents=True)
    shutil.copy(FIXTURES / "copilot" / ".copilot29" / "cli" / "c8963ad7-e7b1-414c-a9fc-930905e76708.jsonl",
                session / "events.jsonl")
    shutil.copy(AIDER, session / "files" / ".aider.chat.history.md")
    with pytest.raises(SideFile, match="a Copilot CLI session's own file"):
        detect_format(session / "files" / ".aider.chat.history.md")


def test_a_walk_under_format_aider_takes_the_history_alone(tmp_path: Path, newcomer: None) -> None:
    """A project's JSON files were each read as a history under ``--format aider`` and refused (exit 3)."""
    project = tmp_path / "myproject"
    (project / "node_modules" / "left-pad").mkdir(parents=True)
    shutil.copy(AIDER, project / ".aider.chat.history.md")
    for name in ("package.json", "tsconfig.json", "node_modules/left-pad/package.json"):
        (project / name).write_text('{"name": "x"}')
    code, out, err = run_cli("ingest", str(project), "--format", "aider", "-t", "acme")
    assert code == 0 and "rejected 0" in out + err, (code, out, err)


def test_a_coloured_test_outputs_error_is_its_line_without_colour_codes(tmp_path: Path) -> None:
    """aider runs ``/test`` through a pty, where tools colour their output; trae's bash too. The decisive line kept
    the codes (``\\x1b[31m===== 1 failed ...``); ``_agent_cli.error_line`` strips them, as goose's steps had."""
    failed = "\x1b[31m===== 1 failed in 0.1s =====\x1b[0m"
    history = tmp_path / ".aider.chat.history.md"
    history.write_text("\n# aider chat started at 2025-05-04 17:02:36\n\n> Aider v0.82.2\n\n#### fix the test  \n\n"
                       f"Done.\n\n#### tests/test_calc.py F  \n#### {failed}  \n####   \n"
                       "#### See the testing errors above.  \n")
    [run] = _runs(history)
    assert [s.error for s in run.steps if s.action == "test"] == ["===== 1 failed in 0.1s ====="]
    record = json.loads(TRAE.read_text())
    turn = next(t for t in record["agent_steps"] if t.get("tool_results"))
    result = turn["tool_results"][0]
    result.update(success=False, error=failed, result="")
    turn["tool_calls"][0].update(name="bash", arguments={"command": "pytest -q"})
    path = tmp_path / "trae.json"
    path.write_text(json.dumps(record))
    [trae] = _runs(path)
    assert "===== 1 failed in 0.1s =====" in [s.error for s in trae.steps]
