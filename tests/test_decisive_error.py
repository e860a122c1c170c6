"""The decisive error of a failed run whose verdict carries no detail: not a slip the run got past.

Real runs, trimmed: tests/fixtures/mini-swe-agent/.real/gemini-3-pro-unresolved/ (README there).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory
from trajsearch.represent import decisive_error

RUNS = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-unresolved"


def unresolved_run(instance: str, tmp_path: Path) -> Trajectory:
    """The run failed by a grader's bare verdict, which tells nothing of why."""
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({instance: "failure"}))
    (parsed,) = read_dump(RUNS / f"{instance}.traj.json", tenant="t", outcomes=OutcomeTable.load(verdicts))
    run = parsed.trajectory
    assert run.outcome is Outcome.failure and run.failure is None  # a verdict, no detail
    return run


@pytest.mark.parametrize("instance", ["django__django-11885", "django__django-15127", "django__django-11848"])
def test_a_run_the_sb_cli_report_did_not_resolve_is_told_so_not_by_a_step_it_got_past(instance):
    """Bug (probe E2, E2-1): sb-cli's ``unresolved_ids`` gave no detail, so the decisive error of such a run was a
    slip mid-run (django-11885: ``python3 update_test.py``, a script not yet written, at message 64 of 83; sklearn-26194
    and 14 more of 31 failed runs alike), or "run ended with outcome failure (exit status Submitted)", which does not
    say the evaluation decided it. It reads as CodeR's older report does, and names no step: the run submitted."""
    report = OutcomeTable.load(RUNS / "sb-cli-report.json")
    (parsed,) = read_dump(RUNS / f"{instance}.traj.json", tenant="t", outcomes=report)
    assert decisive_error(parsed.trajectory) == (
        "SWE-bench evaluation: not resolved (in the report's unresolved_ids)", -1)


@pytest.mark.parametrize("instance, slip", [
    ("django__django-15127", "the format nag, and a script that failed and then ran"),
    ("django__django-11848", "a grep that matched nothing"),
])
def test_an_unresolved_run_is_not_explained_by_a_slip_it_got_past(instance, slip, tmp_path):
    """Bug (probe J, D1): of 129 unresolved SWE-bench runs, 32 took mini-swe-agent's format nag
    ("Please always provide EXACTLY ONE action ...", sent in 207 resolved runs too) as their decisive
    error, 10 a grep with no match (exit 1, no output); it anchored ``similar --id``, ``failures`` and
    the run page. With nothing else to tell, the verdict itself is the error."""
    error, position = decisive_error(unresolved_run(instance, tmp_path))
    assert re.fullmatch(r"run ended with outcome failure \(exit status Submitted\) after \d+ steps", error), slip
    assert position == -1


def test_a_failed_clean_up_is_passed_over_for_the_error_the_run_did_not_get_past(tmp_path):
    """django__django-11885 ends with two failed ``rm``s of scratch files (the decisive error before);
    the run's one unrecovered error is the script it never wrote."""
    run = unresolved_run("django__django-11885", tmp_path)
    error, position = decisive_error(run)
    assert error.startswith("python3: can't open file 'update_test.py'")
    assert run.steps[position].arguments == {"command": "python3 update_test.py"}
