"""Round 46's probe B read through the public reader: SWE-agent 1.x's retry agent (``agent.type: retry``, the agent of
SWE-agent's own SWE-bench submissions), which writes ``<run>/<id>/<id>.traj`` (``attempts`` merged with the attempt
handed in) and each attempt's own ``<run>/<id>/attempt_N/<id>.traj`` (``RetryAgent`` in ``sweagent/agent/agents.py``).

Fixtures: ``fixtures/swe-agent/.real/sa-1.1.0-retry`` (runs written by SWE-agent 1.1.0 itself, trimmed; see its
SOURCE.md). Other layouts (a second batch, attempt files without their top level) are copies of them in ``tmp_path``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_support import run_cli
from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_inputs
from trajsearch.model import UNEVALUATED, Outcome

from adapter_support import runs

REAL = Path(__file__).parent / "fixtures" / "swe-agent" / ".real" / "sa-1.1.0-retry"
CHOOSER = REAL / "chooser" / "run2"
INSTANCE = "demo__greet-retry2"
SCORE = REAL / "score" / "run1"
#: The chooser run's top level as SWE-agent saves it while the loop runs (``save_trajectory(choose=False)``).
RUNNING = REAL / "chooser-running" / "run2" / INSTANCE / f"{INSTANCE}.traj"
#: A chooser run's top level where ``get_best()`` raised: attempt 0 handed in, ``info.chooser`` ``{}``.
CHOOSER_FAILED = REAL / "chooser-failed" / "run9"


def _by_id(path: Path, **kwargs) -> dict:
    return {run.trajectory_id: run for run in runs(path, **kwargs)}


def _batch(tmp_path: Path, name: str, *, top_level: bool = True) -> Path:
    """The chooser run copied as the output folder ``name`` (another batch of the same instance)."""
    folder = Path(shutil.copytree(CHOOSER, tmp_path / name))
    if not top_level:  # a loop that crashed before it wrote its top level, or a top level deleted
        (folder / INSTANCE / f"{INSTANCE}.traj").unlink()
    return folder


def test_retry_run_is_one_run_per_attempt_each_under_its_attempt_id() -> None:
    """Bug (probe B, B2): the top level (the chosen attempt merged in) and ``attempt_1/`` were both read: the chosen
    attempt was two runs, each the other's "similar run"."""
    got = _by_id(CHOOSER)
    assert sorted(got) == [f"swe-agent.run2.{INSTANCE}.attempt_0", f"swe-agent.run2.{INSTANCE}.attempt_1"]
    chosen = got[f"swe-agent.run2.{INSTANCE}.attempt_1"]
    assert chosen.metadata["attempt"] == 1 and chosen.metadata["handed_in"] is True
    assert chosen.steps[0].thought == "Attempt 1: look at the file."
    with pytest.raises(SideFile, match="attempt 1 of a SWE-agent retry run"):
        detect_format(CHOOSER / INSTANCE / "attempt_1" / f"{INSTANCE}.traj")


def test_retry_attempt_files_keep_the_run_folder(tmp_path: Path) -> None:
    """Bug (probe B, B1): ``attempt_N/<id>.traj`` was read as the run ``swe-agent.attempt_N.<id>`` (the attempt folder
    taken for the run set), so two output folders of the same instance overwrote each other's attempts."""
    folders = [_batch(tmp_path, name, top_level=False) for name in ("run2", "run3")]
    got = {r.trajectory.trajectory_id for r in read_inputs(folders)}
    assert got == {f"swe-agent.{run}.{INSTANCE}.attempt_{n}" for run in ("run2", "run3") for n in (0, 1)}


def test_retry_top_level_without_attempt_files_gives_every_attempt_and_the_reviewers_verdict() -> None:
    """Bug (probe B, B3): an attempt SWE-agent's reviewer scored below ``accept_score`` (it retried, and handed in
    the other attempt) was a "submitted" success, feeding exemplars."""
    got = _by_id(SCORE)
    assert sorted(got) == ["swe-agent.run1.demo__greet-score.attempt_0", "swe-agent.run1.demo__greet-score.attempt_1"]
    rejected = got["swe-agent.run1.demo__greet-score.attempt_0"]
    assert rejected.outcome is Outcome.failure and rejected.metadata["handed_in"] is False
    assert rejected.failure.error == "submitted: not handed in"
    assert rejected.failure.cause == ("SWE-agent's reviewer scored it 2 (attempt 1, handed in: 9): The patch hardcodes "
                                      "the name; the typo is not fixed.")
    assert got["swe-agent.run1.demo__greet-score.attempt_1"].outcome is Outcome.success


def test_retry_attempt_the_chooser_passed_over_is_not_a_success_nor_given_the_report_verdict(tmp_path: Path) -> None:
    """Bug (probe B, B3): the chooser's unchosen attempt was a success; with ``--outcomes`` a report of the instance
    (it judged the patch handed in, attempt 1's) must not judge it."""
    report = tmp_path / "report.json"
    report.write_text(json.dumps({INSTANCE: "resolved"}))
    got = _by_id(CHOOSER, outcomes=OutcomeTable.load(report))
    passed_over = got[f"swe-agent.run2.{INSTANCE}.attempt_0"]
    assert passed_over.outcome is Outcome.failure
    assert passed_over.failure.cause == ("SWE-agent's chooser picked attempt 1: Submission 1 fixes the typo; "
                                         "submission 0 hardcodes the name.")
    assert got[f"swe-agent.run2.{INSTANCE}.attempt_1"].outcome is Outcome.success
    assert got[f"swe-agent.run2.{INSTANCE}.attempt_1"].metadata["outcome_basis"].startswith("outcomes file")


def test_retry_attempts_read_before_the_loop_chose_take_no_report_verdict(tmp_path: Path) -> None:
    """Bug (review 2 of round 46, D1): while the loop runs no attempt is known to be the one handed in, so a report
    of the instance (an earlier batch's) judges none of them."""
    folder = _batch(tmp_path, "run2")
    shutil.copyfile(RUNNING, folder / INSTANCE / f"{INSTANCE}.traj")
    report = tmp_path / "report.json"
    report.write_text(json.dumps({INSTANCE: "unresolved"}))
    got = _by_id(folder, outcomes=OutcomeTable.load(report))
    assert sorted(got) == [f"swe-agent.run2.{INSTANCE}.attempt_{n}" for n in (0, 1)]
    assert [(run.outcome, run.metadata["outcome_basis"]) for run in got.values()] == [
        (Outcome.success, UNEVALUATED)] * 2
    assert [run.metadata["handed_in"] for run in got.values()] == [None, None]


def test_retry_run_ingested_while_the_loop_runs_then_after_it_chose_stores_each_attempt_once(
        tmp_path: Path, monkeypatch) -> None:
    """Bug (review 2 of round 46, D1): SWE-agent saves ``{"attempts": [...]}`` after every step and the choice only at
    the end; the attempt handed in turned from ``...attempt_1`` into the instance's id once chosen, its first copy
    never retired: stored twice, its success counted twice. Ingesting the same folder before and after the loop
    chose leaves one run per attempt, the unchosen one now a failure."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    folder = _batch(tmp_path / "out", "run2")
    top = folder / INSTANCE / f"{INSTANCE}.traj"
    shutil.copyfile(RUNNING, top)
    code, out, err = run_cli("ingest", str(folder), "-t", "prog")
    assert code == 0, out + err
    shutil.copyfile(CHOOSER / INSTANCE / f"{INSTANCE}.traj", top)
    code, out, err = run_cli("ingest", str(folder), "-t", "prog", "--restart")
    assert code == 0, out + err
    code, out, err = run_cli("stats", "-t", "prog", "--json")
    assert code == 0, err
    stats = json.loads(out)
    assert stats["trajectories"] == 2 and stats["runs_by_outcome"] == {"failure": 1, "success": 1}
    code, out, err = run_cli("show", f"swe-agent.run2.{INSTANCE}.attempt_0", "-t", "prog", "--json")
    assert code == 0, err
    assert json.loads(out)["outcome"] == "failure"


def test_retry_attempt_handed_in_after_the_chooser_failed_is_not_said_to_be_its_pick() -> None:
    """Bug (review 2 of round 46, D6): when ``get_best()`` raises SWE-agent hands in attempt 0 and writes
    ``info.chooser: {}``; the other attempt's cause said "SWE-agent's chooser picked attempt 0"."""
    got = _by_id(CHOOSER_FAILED)
    assert got[f"swe-agent.run9.{INSTANCE}.attempt_0"].metadata["handed_in"] is True
    passed_over = got[f"swe-agent.run9.{INSTANCE}.attempt_1"]
    assert passed_over.outcome is Outcome.failure
    assert passed_over.failure.cause == "SWE-agent handed in attempt 0 (no chooser verdict recorded)"


def test_retry_run_model_is_read_from_the_config_beside_it(tmp_path: Path) -> None:
    """Bug (probe B, B4): ``replay_config`` is null in every retry ``.traj``; the model is in the ``config.yaml``
    SWE-agent writes beside it (``run_single.py``: a YAML string of the config's JSON)."""
    assert {run.model_id for run in runs(CHOOSER)} == {"openai/gpt-4o"}
    attempts_only = _batch(tmp_path, "run3", top_level=False)
    assert {run.model_id for run in runs(attempts_only)} == {"openai/gpt-4o"}


def test_retry_run_cli_dry_run_reads_each_attempt_once(tmp_path: Path, monkeypatch) -> None:
    """Probe B, B1/B2/B4 through the CLI: two output folders of one instance are four attempts, four runs, read from
    the top levels (the attempt files passed over), two of them failures, all of SWE-agent's model."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    folders = [_batch(tmp_path / "out", name) for name in ("run2", "run3")]
    code, out, err = run_cli("ingest", "--dry-run", "--json", *map(str, folders))
    assert code == 0, err
    files = json.loads(out)["files"]
    assert [Path(f["source"]).relative_to(tmp_path / "out").as_posix() for f in files] == [
        f"{run}/{INSTANCE}/{INSTANCE}.traj" for run in ("run2", "run3")]
    assert [(f["runs"], f["outcomes"], f["models"]) for f in files] == [
        (2, {"failure": 1, "submitted, not evaluated": 1}, {"openai/gpt-4o": 2})] * 2  # a patch, no verdict


def test_a_retry_run_stored_whole_by_an_earlier_reading_gives_way_to_its_attempts(tmp_path: Path, monkeypatch) -> None:
    """An earlier reading stored a retry run once, as ``swe-agent.<run>.<id>`` (its top level, a copy of one attempt);
    its attempts now come in as ``.attempt_N``: each supersedes that id (``metadata.supersedes``), so no attempt is
    stored twice. Here the earlier run is written as the native record ``show --json`` gives of it."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    folder = _batch(tmp_path / "out", "run2")
    code, out, err = run_cli("ingest", str(folder), "-t", "prog")
    assert code == 0, out + err
    code, out, err = run_cli("show", f"swe-agent.run2.{INSTANCE}.attempt_1", "-t", "prog", "--json")
    assert code == 0, err
    earlier = json.loads(out) | {"trajectory_id": f"swe-agent.run2.{INSTANCE}", "metadata": {}}
    dump = tmp_path / "earlier.jsonl"
    dump.write_text(json.dumps({k: v for k, v in earlier.items() if k not in ("trace_uri", "content_hash")}) + "\n")
    code, out, err = run_cli("ingest", str(dump), "-t", "prog")
    assert code == 0, out + err
    assert json.loads(run_cli("stats", "-t", "prog", "--json")[1])["trajectories"] == 3
    code, out, err = run_cli("ingest", str(folder), "-t", "prog", "--restart")
    assert code == 0, out + err
    assert json.loads(run_cli("stats", "-t", "prog", "--json")[1])["trajectories"] == 2
    assert run_cli("show", f"swe-agent.run2.{INSTANCE}", "-t", "prog")[0] != 0
