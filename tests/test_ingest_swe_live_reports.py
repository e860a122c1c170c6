"""SWE-bench-Live's evaluation files and the SWE-bench files kept beside runs, read from real files (probes A and B
of round p43: A3, A4, B7, B8).

Fixtures (see each folder's SOURCE.md):
- ``outcomes/.real/swebench-live-openhands-java``: what SWE-bench-Live's ``evaluation/evaluation.py`` wrote for four
  OpenHands runs (nunu0404/Python_OpenHands @ 9e1ba07): the summary ``results.json`` (``success_ids`` /
  ``failure_ids`` / ``error_ids`` / ``empty_patch_ids``) and two flat per-instance ``report.json``.
- ``outcomes/.real/christsakm-monai-5416``: two models' SWE-bench harness reports of ``Project-MONAI__MONAI-5416``,
  keyed in lower case (christsakm/Trajectories @ b4703a7).
- ``swe-agent/.real/christsakm-mypy-10430/instance_data.json``: a SWE-bench task instance (a dataset row) kept beside
  the runs of it (same commit).

The runs are a real mini-swe-agent run (``mini-swe-agent/.real/test_data/github_issue.traj.json``, which records no
error of its own) laid out as a batch run writes it: its file name is its task, the instance.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_support import run_cli
from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory

FIXTURES = Path(__file__).parent / "fixtures"
REAL_OUTCOMES = FIXTURES / "outcomes" / ".real"
LIVE = REAL_OUTCOMES / "swebench-live-openhands-java"
MONAI_REPORTS = REAL_OUTCOMES / "christsakm-monai-5416"
TASK_INSTANCE = FIXTURES / "swe-agent" / ".real" / "christsakm-mypy-10430" / "instance_data.json"
MSWEA_RUN = FIXTURES / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"
#: The instances of the SWE-bench-Live evaluation (all four in its ``failure_ids``).
LIVE_INSTANCES = ("spotbugs__spotbugs-3552", "spotbugs__spotbugs-3557", "mapstruct__mapstruct-3492",
                  "spotbugs__spotbugs-2844")
MONAI = "Project-MONAI__MONAI-5416"


def run_of(folder: Path, instance: str) -> Path:
    """``folder/<instance>/<instance>.traj.json``: a run laid out as a batch run writes it."""
    (folder / instance).mkdir(parents=True)
    return Path(shutil.copy(MSWEA_RUN, folder / instance / f"{instance}.traj.json"))


def read_with(runs: Path, outcomes: Path) -> dict[str, Trajectory]:
    """The runs under ``runs``, by trajectory id, with the verdicts of ``outcomes`` joined."""
    return {p.trajectory.trajectory_id: p.trajectory
            for p in read_dump(runs, outcomes=OutcomeTable.load(outcomes)) if p.trajectory}


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))


def test_swebench_live_results_json_gives_its_verdicts(tmp_path: Path, cli_env) -> None:
    """A3: SWE-bench-Live's ``results.json`` was refused ("no run outcomes found") and the ingest aborted, though
    it lists a verdict for every run: its harness names the lists ``success_ids`` / ``failure_ids``."""
    for instance in LIVE_INSTANCES:
        run_of(tmp_path / "runs", instance)
    code, out, err = run_cli("ingest", "--dry-run", str(tmp_path / "runs"), "--outcomes", str(LIVE / "results.json"))
    assert code == 0, err
    assert "a verdict for 4 of 4 run(s) read" in " ".join(out.split() + err.split())
    read = read_with(tmp_path / "runs", LIVE / "results.json")
    assert {run.task_id: run.outcome for run in read.values()} == dict.fromkeys(LIVE_INSTANCES, Outcome.failure)


def test_swebench_live_success_ids_are_successes(tmp_path: Path) -> None:
    """A3: the same report with one instance moved to ``success_ids`` (as the harness files a resolved one)."""
    report = json.loads((LIVE / "results.json").read_text())
    report["failure_ids"].remove("spotbugs__spotbugs-3557")
    report["success_ids"].append("spotbugs__spotbugs-3557")
    (tmp_path / "results.json").write_text(json.dumps(report))
    verdicts = OutcomeTable.load(tmp_path / "results.json").verdicts
    assert verdicts["spotbugs__spotbugs-3557"].outcome is Outcome.success
    assert verdicts["spotbugs__spotbugs-3552"].outcome is Outcome.failure


def test_swebench_live_instance_report_says_what_still_fails(tmp_path: Path) -> None:
    """A4: SWE-bench-Live writes one instance's ``FAIL_TO_PASS`` / ``PASS_TO_PASS`` at the report's top, not under
    ``tests_status`` as the harness does; the test left failing did not become the failed run's error."""
    run_of(tmp_path / "runs", "spotbugs__spotbugs-3557")
    run_of(tmp_path / "runs", "spotbugs__spotbugs-2844")
    read = {run.task_id: run for run in read_with(tmp_path / "runs", LIVE).values()}
    failed = read["spotbugs__spotbugs-3557"]
    assert failed.outcome is Outcome.failure
    assert failed.failure.error == ("SWE-bench evaluation: 1 of 1 tests it should fix still fail (FAIL_TO_PASS): "
                                    "edu.umd.cs.findbugs.detect.Issue1928Test.testIssue()")
    # a report naming no failing test (its tests never ran) says no more than the verdict, which is told as such
    # (probe E2, E2-1: a failure with no error took a step the run got past as its error)
    assert read["spotbugs__spotbugs-2844"].outcome is Outcome.failure
    assert read["spotbugs__spotbugs-2844"].failure.error.startswith("SWE-bench evaluation: not resolved (")


def test_swebench_live_instance_report_met_in_a_walk_is_a_side_file(tmp_path: Path, cli_env) -> None:
    """A4: a walk of the evaluation folder listed each per-instance report as rejected, "unrecognised"."""
    with pytest.raises(SideFile, match="a SWE-bench evaluation report, not a run"):
        detect_format(LIVE / "spotbugs__spotbugs-3557" / "report.json")
    code, out, err = run_cli("ingest", "--dry-run", "--json", str(LIVE))
    assert code == 0, err
    assert json.loads(out)["files"] == []


def test_a_report_beside_the_run_joins_when_its_instance_id_differs_in_case(tmp_path: Path) -> None:
    """B7: the reports key the instance ``project-monai__monai-5416``, the run names it ``Project-MONAI__MONAI-5416``
    (GitHub's own spelling); the run kept its own outcome, though the report beside it says unresolved."""
    for model in ("trace_01_gpt-5-2025-08-07", "trace_02_kimi-k2-instruct-0905"):
        run_of(tmp_path / "runs" / model, MONAI)
    read = {run_id.split(".")[0]: run for run_id, run in read_with(tmp_path / "runs", MONAI_REPORTS).items()}
    assert {model: run.outcome for model, run in read.items()} == {
        "trace_01_gpt-5-2025-08-07": Outcome.success, "trace_02_kimi-k2-instruct-0905": Outcome.failure}
    assert "2 of 2 tests it should fix still fail" in read["trace_02_kimi-k2-instruct-0905"].failure.error
    # one report given alone
    single = read_with(tmp_path / "runs" / "trace_02_kimi-k2-instruct-0905",
                       MONAI_REPORTS / "trace_02_kimi-k2-instruct-0905" / "report.json")
    assert [run.outcome for run in single.values()] == [Outcome.failure]


def test_instance_ids_in_another_case_join_only_where_unambiguous(tmp_path: Path) -> None:
    """B7: ids are case-sensitive; another case joins only a SWE-bench instance id, and only when the file spells
    the instance one way. A file keying it both ways gives each spelling its own verdict."""
    report = json.loads((MONAI_REPORTS / "trace_02_kimi-k2-instruct-0905" / "report.json").read_text())
    [(key, verdict)] = report.items()
    resolved = {**verdict, "resolved": True}
    run_of(tmp_path / "runs", MONAI)
    run_of(tmp_path / "runs", "Some-Task")
    both = tmp_path / "both.json"
    both.write_text(json.dumps({key: verdict, "project-monai__MONAI-5416": resolved, "some-task": "success"}))
    assert {run.task_id: run.outcome for run in read_with(tmp_path / "runs", both).values()} == {
        MONAI: Outcome.unknown, "Some-Task": Outcome.unknown}
    exact = tmp_path / "exact.json"
    exact.write_text(json.dumps({key: verdict, MONAI: resolved}))
    assert {run.task_id: run.outcome for run in read_with(tmp_path / "runs", exact).values()} == {
        MONAI: Outcome.success, "Some-Task": Outcome.unknown}


def test_a_swebench_task_instance_beside_the_runs_is_a_side_file(tmp_path: Path, cli_env) -> None:
    """B8: ``instance_data.json`` (a SWE-bench dataset row) beside the runs was rejected, "unrecognised dump format",
    and the ingest of a clean dump exited 3."""
    with pytest.raises(SideFile, match=r"a SWE-bench task instance \(a dataset row"):
        detect_format(TASK_INSTANCE)
    run_of(tmp_path / "runs", "python__mypy-10430")
    shutil.copy(TASK_INSTANCE, tmp_path / "runs" / "python__mypy-10430")
    code, out, err = run_cli("ingest", "--dry-run", "--json", str(tmp_path / "runs"))
    assert code == 0, err
    assert [(Path(f["source"]).name, f["runs"], f["rejected"]) for f in json.loads(out)["files"]] == [
        ("python__mypy-10430.traj.json", 1, 0)]
