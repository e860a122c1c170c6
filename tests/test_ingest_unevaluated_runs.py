"""A run an evaluation report enumerates nowhere was not evaluated by it, and the join's summary adds up.

Real files: CodeR's ``results.json`` (the first SWE-bench harness's ``get_model_report``: every prediction it was
given is under ``generated`` or ``no_generation``) and a trimmed CodeR run it lists nowhere
(tests/fixtures/swe-agent/.real/coder-unevaluated/SOURCE.md).
"""

from __future__ import annotations

from pathlib import Path

from cli_support import run_cli
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

REAL = Path(__file__).parent / "fixtures"
REPORT = REAL / "outcomes" / ".real" / "coder" / "results.json"
UNEVALUATED = REAL / "swe-agent" / ".real" / "coder-unevaluated" / "trajs"
CODER_RUNS = REAL / "swe-agent" / ".real" / "coder" / "trajs"


def test_a_run_the_full_report_lists_nowhere_keeps_its_own_outcome() -> None:
    """Bug (probe E2, E2-4): sympy__sympy-21847 submitted the upstream fix, and CodeR's report lists it in none of
    its lists, not even ``generated``: it was never evaluated, yet it was recorded failed, "not resolved (not among
    the report's resolved instances)". The runs the report did evaluate and not resolve still fail."""
    table = OutcomeTable.load(REPORT)
    (parsed,) = read_dump(UNEVALUATED / "sympy__sympy-21847.traj", tenant="t", outcomes=table)
    run = parsed.trajectory
    assert (run.outcome, run.failure) == (Outcome.success, None)  # SWE-agent's own: submitted, not evaluated
    assert "outcome_basis" not in run.metadata or "results.json" not in run.metadata["outcome_basis"]
    assert table.counts()["not_evaluated"] == 1 and "unlisted" not in table.counts()
    (evaluated,) = read_dump(CODER_RUNS / "sympy__sympy-18621.traj", tenant="t", outcomes=table)
    assert evaluated.trajectory.outcome is Outcome.failure  # in ``generated``, not ``resolved``
    assert evaluated.trajectory.failure.error == (
        "SWE-bench evaluation: not resolved (not among the report's resolved instances)")


def test_the_join_summary_counts_each_verdict_and_the_runs_not_evaluated_apart(tmp_path: Path, monkeypatch) -> None:
    """Bug (probe E2, E2-4): "a verdict for 62 of 62 run(s) read (44 not listed as resolved in it: failed)": the
    unevaluated run was among them, and the verdicts named (44 failed, 16 resolved) fell 2 short of 62, the runs
    the report says did not apply or timed out left uncounted."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path))
    code, out, err = run_cli("ingest", "--dry-run", str(CODER_RUNS), str(UNEVALUATED), "--outcomes", str(REPORT))
    assert code == 0, err
    assert ("outcomes file results.json: a verdict for 3 of 4 run(s) read: 2 failure, 1 success; 1 not evaluated "
            "by it (their own outcome kept)") in " ".join(out.split())
