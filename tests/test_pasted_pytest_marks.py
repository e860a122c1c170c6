"""A line pasted from a pytest report is held by runs that printed it plainly: pytest's ``E``/``>`` marks do not count.

An engineer pastes ``E   ModuleNotFoundError: No module named 'sqlfluff'`` from a pytest report; of the shared
mini-swe-agent runs, 8 printed that error, 2 of them under pytest's mark, and only those 2 held the paste verbatim
(round 25, ENG3): the 6 whose own script printed it were ranked by their words alone. Real runs:
``tests/fixtures/mini-swe-agent/.real/pytest-marked-error`` (see its SOURCE.md). Plumbing (which rows hold the paste
verbatim, ``Hit.verbatim``): the hashing embedder.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

RUNS = Path(__file__).parent / "fixtures/mini-swe-agent/.real/pytest-marked-error"
ERROR = "ModuleNotFoundError: No module named 'sqlfluff'"
REPORT = f"test/conftest.py:9: in <module>\n    from sqlfluff.cli.commands import quoted_presenter\nE   {ERROR}\n"


def _store(ts):
    parsed = list(read_dump(RUNS, tenant="acme"))
    assert len(parsed) == 3 and all(p.ok for p in parsed), [p.error for p in parsed]
    ts.add([p.trajectory for p in parsed])
    return ts


def test_a_pasted_report_line_is_held_by_runs_printing_it_without_the_mark(hashing_ts) -> None:
    ts = _store(hashing_ts)
    for mode in ("hybrid", "lexical", "auto"):
        hits = ts.search(f"E   {ERROR}", tenant="acme", levels="step", k=3, mode=mode)
        assert len(hits) == 3 and all(h.verbatim and ERROR in h.text for h in hits), (mode, hits)


def test_a_pasted_report_shows_every_run_by_the_step_that_met_its_error(hashing_ts) -> None:
    """Three lines of the report: the run that printed them holds them all (first, verbatim); the others are shown
    by the step holding the error the report ends in, as the line reads without pytest's mark."""
    ts = _store(hashing_ts)
    hits = ts.search(REPORT, tenant="acme", levels="step", k=3, mode="hybrid")
    assert hits[0].task_id == "sqlfluff__sqlfluff-2419" and hits[0].verbatim, hits[0]
    assert len(hits) == 3 and all(ERROR in h.text for h in hits), [h.text[-300:] for h in hits]
