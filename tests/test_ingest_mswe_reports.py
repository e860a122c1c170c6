"""Multi-SWE-bench's evaluation files, read from real files (probe B of round p44: B1, B2, B3).

Fixture ``outcomes/.real/mswe-cpp-codearts`` (see its SOURCE.md): two per-instance ``report.json`` of a C++
submission (multi-swe-bench/experiments @ 3a1e61b), ``catchorg__Catch2-1422`` (``valid: false``) and
``fmtlib__fmt-3272`` (``valid: true``, resolved), and the ``final_report.json`` the harness (multi-swe-bench 1.1.2)
writes from them, keyed ``<org>/<repo>:pr-<n>``.

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
MSWE = FIXTURES / "outcomes" / ".real" / "mswe-cpp-codearts"
FAILED_REPORT = MSWE / "logs" / "catchorg" / "Catch2" / "evals" / "pr-1422" / "report.json"
VALID_REPORT = MSWE / "logs" / "fmtlib" / "fmt" / "evals" / "pr-3272" / "report.json"
MSWEA_RUN = FIXTURES / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"
FAILED, VALID = "catchorg__Catch2-1422", "fmtlib__fmt-3272"


def runs_of(folder: Path, *instances: str) -> Path:
    """``folder/<instance>/<instance>.traj.json`` for each instance: runs laid out as a batch run writes them."""
    for instance in instances:
        (folder / instance).mkdir(parents=True)
        shutil.copy(MSWEA_RUN, folder / instance / f"{instance}.traj.json")
    return folder


def read_with(runs: Path, outcomes: Path | None) -> dict[str, Trajectory]:
    """The runs under ``runs``, by task id, with the verdicts of ``outcomes`` joined."""
    table = OutcomeTable.load(outcomes) if outcomes else None
    return {p.trajectory.task_id: p.trajectory for p in read_dump(runs, outcomes=table) if p.trajectory}


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))


def test_instance_report_is_that_instances_verdict(tmp_path: Path) -> None:
    """B1: a per-instance report was read as a table keyed by its field names (``'org': unknown outcome
    'catchorg'``), joining nothing. ``valid: false`` is a failure, saying why; ``valid: true`` decides nothing alone
    (the harness also checks the tests its dataset expects), so that run keeps its own outcome, and the file says so."""
    runs = runs_of(tmp_path / "runs", FAILED, VALID)
    own = read_with(runs, None)
    table = OutcomeTable.load(MSWE / "logs")
    read = {p.trajectory.task_id: p.trajectory for p in read_dump(runs, outcomes=table) if p.trajectory}
    failed = read[FAILED]
    assert failed.outcome is Outcome.failure
    assert failed.failure.error == (
        "Multi-SWE-bench evaluation: After applying the fix patch, no test cases transitioned from failed to passed; "
        "2 test(s) fail with the patch: approvaltests, runtests")
    assert read[VALID].outcome is own[VALID].outcome
    [(undecided, why)] = table.invalid
    assert undecided == VALID and "valid: true, which alone decides nothing" in why
    # one report given alone
    assert read_with(runs, FAILED_REPORT)[FAILED].outcome is Outcome.failure
    with pytest.raises(ValueError, match="valid: true, which alone decides nothing"):
        OutcomeTable.load(VALID_REPORT)


def test_final_report_ids_join_the_runs_of_their_instances(tmp_path: Path) -> None:
    """B2: the harness's ``final_report.json`` keys an instance ``catchorg/Catch2:pr-1422``; the runs of it,
    ``catchorg__Catch2-1422``, joined nothing."""
    runs = runs_of(tmp_path / "runs", FAILED, VALID)
    read = read_with(runs, MSWE / "final_report.json")
    assert {task: run.outcome for task, run in read.items()} == {FAILED: Outcome.failure, VALID: Outcome.success}
    # with the per-instance reports: the final report decides the valid one, and the failed one says why
    table = OutcomeTable.load(MSWE)
    read = {p.trajectory.task_id: p.trajectory for p in read_dump(runs, outcomes=table) if p.trajectory}
    assert {task: run.outcome for task, run in read.items()} == {FAILED: Outcome.failure, VALID: Outcome.success}
    assert "approvaltests, runtests" in read[FAILED].failure.error
    assert table.invalid == []


def test_instance_report_met_in_a_walk_is_a_side_file(cli_env) -> None:
    """B3: a walk of a submission rejected each per-instance report as an unrecognised dump (exit 4)."""
    with pytest.raises(SideFile, match="evaluation report, not a run"):
        detect_format(FAILED_REPORT)
    code, out, err = run_cli("ingest", "--dry-run", "--json", str(MSWE))
    assert code == 0, err
    assert json.loads(out)["files"] == []


def test_a_refusal_stays_where_another_file_judges_the_run_unless_it_is_moot(tmp_path: Path) -> None:
    """Review rev1, D4: in a folder, every refused entry of a run another file judged was dropped, so a grader's
    typo beside another file's verdict went unsaid. Only a report that decides nothing alone is moot, where the
    folder's other files decide its instance one way (the final report beside the per-instance reports)."""
    folder = tmp_path / "eval"
    shutil.copytree(MSWE, folder)
    (folder / "grades.csv").write_text(f"instance_id,outcome\n{FAILED},resolvd\n{VALID},resolved\n")  # a typo
    assert OutcomeTable.load(folder).invalid == [(FAILED, "unknown outcome 'resolvd'")]
    # another model's final report, disagreeing on the valid one: its report's refusal is no longer moot
    final = json.loads((MSWE / "final_report.json").read_text())
    final["resolved_ids"], final["unresolved_ids"] = [], final["submitted_ids"]
    (folder / "other-model").mkdir()
    (folder / "other-model" / "final_report.json").write_text(json.dumps(final))
    told = dict(OutcomeTable.load(folder).invalid)
    assert told.keys() == {FAILED, VALID} and "valid: true, which alone decides nothing" in told[VALID]


def test_a_report_that_decides_nothing_says_so_not_that_it_is_not_understood(tmp_path: Path, cli_env) -> None:
    """Review rev1, D5: a ``valid: true`` report alone was "1 verdict(s) not understood", ending with the hint on
    outcome synonyms and rewards, the wrong fix: it is an evaluation report that decides nothing alone, and says
    which file does."""
    with pytest.raises(ValueError) as alone:
        OutcomeTable.load(VALID_REPORT)
    assert "1 evaluation report(s) without a verdict" in str(alone.value)
    assert str(alone.value).endswith("pass final_report.json or results.json for the verdict")
    assert "not understood" not in str(alone.value) and "synonyms" not in str(alone.value)
    # beside a report that decides: the run keeps its own outcome, and the warning does not call it not understood
    runs = runs_of(tmp_path / "runs", FAILED, VALID)
    code, out, err = run_cli("ingest", str(runs), "--outcomes", str(MSWE / "logs"), "-t", "mswe")
    assert code == 0, err
    warning = " ".join(err.split())
    assert "1 verdict(s) left out (those runs keep their own outcome): 'fmtlib__fmt-3272'" in warning
    assert "not understood" not in warning
