"""``similar_runs`` by id of a failed run whose failure is an outcome file's bare verdict, on real runs.

tests/fixtures/mini-swe-agent/.real/gemini-3-pro-similar/ (SOURCE.md there): three gemini-3-pro mini-swe-agent runs of
SWE-bench Verified joined with their sb-cli report, as ``ingest --outcomes`` joins them.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump

RUNS = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-similar"


def add_runs(ts) -> None:
    parsed = list(read_dump(RUNS, tenant="acme", outcomes=OutcomeTable.load(RUNS / "sb-cli-report.json")))
    assert all(p.trajectory is not None for p in parsed), [p.error for p in parsed]
    ts.add([p.trajectory for p in parsed])
    assert {p.trajectory.task_id: p.trajectory.outcome.value for p in parsed} == {
        "django__django-16263": "failure", "pylint-dev__pylint-4604": "failure", "django__django-14122": "success"}


def test_a_run_failed_by_a_bare_verdict_is_matched_on_its_own_work_not_the_verdicts_wording(model_ts):
    """Bug (probe E2, E2-A): django-16263 (strip unused annotations from count queries, in ``sql/query.py``) was
    anchored on its failure row, whose error is sb-cli's "not resolved (in the report's unresolved_ids)", the same
    sentence in every failed run: its runs like it were failures of other tasks, of other repositories too (pylint's
    unused-import check here). django-14122, a success working in ``sql/query.py`` and ``compiler.py`` on what
    aggregation queries group by, is the run like it; every mode agrees, as for a run with no failure."""
    add_runs(model_ts)
    for mode in ("hybrid", "dense", "auto"):
        matches = model_ts.similar_runs("gemini-3-pro-preview.django__django-16263.7db9769226", tenant="acme", k=2,
                                        mode=mode)
        assert [m.trajectory_id for m in matches][0] == "gemini-3-pro-preview.django__django-14122.39220c01ca", mode
