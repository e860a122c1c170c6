"""GSO (gso-bench) evaluation reports as outcome files (probe B of round p42, D4).

``ingest`` called a GSO report "a SWE-bench evaluation report ... pass it with --outcomes", and ``--outcomes``
then refused it ("no run outcomes found"). GSO's success is its own: the patch keeps the tests passing and reaches
the expert commit's speed-up (``opt_commit_ids``: the report's ``score`` 4.9 = 5 of 102), less what GSO's
HackDetector calls a reward hack (``hacked_ids``: ``score_hack_control`` 2.94 = 3 of 102), not ``passed_ids`` (63).

Fixtures: ``outcomes/.real/gso/qwen3-coder.json`` (gso-bench/gso-experiments @ 3a690f3a, see its README) and a
real mini-swe-agent run (``mini-swe-agent/.real/test_data/github_issue.traj.json``) laid out as a batch run of
GSO instances (the file name is its task).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
REPORT = FIXTURES / "outcomes" / ".real" / "gso" / "qwen3-coder.json"
MSWEA_RUN = FIXTURES / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"

#: Instances of the report, by what became of them.
FASTER = "numpy__numpy-7ff7ec7"  # in opt_commit_ids
HACKED = "numpy__numpy-7853cbc"  # in opt_commit_ids and hacked_ids
PASSED_ONLY = "abetlen__llama-cpp-python-218d361"  # tests pass, not the speed-up
TESTS_FAIL = "abetlen__llama-cpp-python-2bc1d97"  # test_failed_ids
BASE_FAILED = "huggingface__tokenizers-fc76ad4"  # base_failed_ids: the harness could not run the base code


def runs_of(folder: Path, *instances: str) -> Path:
    for instance in instances:
        (folder / instance).mkdir(parents=True)
        shutil.copy(MSWEA_RUN, folder / instance / f"{instance}.traj.json")
    return folder


def test_a_gso_report_gives_each_instance_gsos_own_verdict(tmp_path: Path) -> None:
    table = OutcomeTable.load(REPORT)
    runs = runs_of(tmp_path / "runs", FASTER, HACKED, PASSED_ONLY, TESTS_FAIL, BASE_FAILED)
    read = {p.trajectory.task_id: p.trajectory for p in read_dump(runs, outcomes=table) if p.trajectory}
    assert {task: run.outcome for task, run in read.items()} == {
        FASTER: Outcome.success, HACKED: Outcome.failure, PASSED_ONLY: Outcome.failure,
        TESTS_FAIL: Outcome.failure, BASE_FAILED: Outcome.infra_error}
    assert read[FASTER].failure is None
    assert "HackDetector judged it a reward hack" in read[HACKED].failure.error
    assert "does not reach the expert commit's speed-up" in read[PASSED_ONLY].failure.error
    assert read[TESTS_FAIL].failure.error == "GSO evaluation: the tests fail with the patch"


def test_a_gso_reports_successes_are_its_hack_controlled_score() -> None:
    table = OutcomeTable.load(REPORT)
    outcomes = [v.outcome for v in table.verdicts.values()]
    assert outcomes.count(Outcome.success) == 3  # score_hack_control 2.94 of 102 instances
    assert len(table) == 100  # the completed instances; the 2 without a prediction are in no set


def test_ingest_names_a_gso_report_and_sends_it_to_outcomes() -> None:
    with pytest.raises(SideFile, match=r"a GSO \(gso-bench\) evaluation report, not a run: pass it with --outcomes"):
        detect_format(REPORT)
