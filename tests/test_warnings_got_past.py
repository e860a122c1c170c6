"""A failed run that met a pasted error and got past it is no warning for that error (round 25, RT8).

An agent stuck mid-task pastes the error its step just got; warnings are failed runs to avoid. A failed run whose step
met that error and which then made the same call again without it (as a failed run's failing step is judged:
``represent.recoveries``) got past the error and failed for another reason: on the gemini-3-pro store, 15 of the 22
warnings shown with the step holding a pasted error line were of such runs. Plumbing: the hashing test embedder
(``hashing_ts``), real mini-swe-agent runs judged by their real sb-cli reports."""

from __future__ import annotations

import shutil
from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
#: django-16256, failed: steps 2 and 4 met ``NO_TABLE`` running ``python reproduce_issue.py``, step 6 ran it cleanly
GOT_PAST = REAL / "gemini-3-pro-got-past"
NO_TABLE = "django.db.utils.OperationalError: no such table: __main___author"
#: django-12406 and -12325, failed: each fixture, cut from the whole run, ends its steps on ``REPRODUCE_APP`` (the
#: step making the package after it, no run of the script again; the whole runs go on past it, see SOURCE.md)
STUCK = REAL / "gemini-3-pro-warnings"
REPRODUCE_APP = "ModuleNotFoundError: No module named 'reproduce_app'"


def _failed(path: Path) -> list:
    report = OutcomeTable.load(path / "sb-cli-report.json")
    return [p.trajectory for p in read_dump(path, tenant="acme", outcomes=report)]


def test_a_failed_run_that_got_past_the_pasted_error_is_no_warning_for_it(hashing_ts):
    [got_past] = _failed(GOT_PAST)
    assert got_past.outcome.value == "failure"
    met = [s.index for s in got_past.steps if NO_TABLE in (s.error or "")]
    assert met == [2, 4] and got_past.steps[6].arguments == got_past.steps[2].arguments and not got_past.steps[6].error
    hashing_ts.add([got_past, *_failed(STUCK)])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    assert [w.trajectory_id for w in rt.warnings(NO_TABLE, ctx, k=3)] == []
    said = rt.advice("warnings", NO_TABLE, ctx)
    assert [i["kind"] for i in said.items] == ["recovery"] and "## Warning" not in said.text
    # the runs whose steps end on the error they met stay warnings for it
    stuck = rt.warnings(REPRODUCE_APP, ctx, k=3)
    assert sorted(w.trajectory_id for w in stuck) == ["gemini-3-pro-preview.django__django-12325.de20a4e7ef",
                                                      "gemini-3-pro-preview.django__django-12406.9c6632a9d5"]
    assert all(REPRODUCE_APP in w.step_holding for w in stuck)


def test_a_run_that_got_past_the_pasted_error_is_told_by_its_rows_without_its_trace(hashing_ts, tmp_path):
    """Bug (round 25, review of RT8): whether a failed run got past the pasted error was decided by reading its trace
    at query time, once per step hit (0.04 s to 0.78 s at 50 ms a read, k=2), and a trace store that was busy or gone
    made the run a warning again. Ingest marks it in the step rows: with the traces gone the answer is the same."""
    [got_past] = _failed(GOT_PAST)
    hashing_ts.add([got_past, *_failed(STUCK)])
    shutil.rmtree(tmp_path / "traces")
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    assert [w.trajectory_id for w in rt.warnings(NO_TABLE, ctx, k=3)] == []
    assert len(rt.warnings(REPRODUCE_APP, ctx, k=3)) == 2


def test_a_failed_run_that_got_past_the_pasted_error_is_shown_as_a_recovery_saying_it_failed_later(hashing_ts):
    """Bug (round 25, review of RT8): a failed run that got past the pasted error was left out of warnings and shown
    nowhere else (8 of 18 pasted lines showed no recovery at all). It feeds the recoveries leg, its outcome said:
    the step that met the error, what it did next, and that it failed later for another reason."""
    [got_past] = _failed(GOT_PAST)
    hashing_ts.add([got_past, *_failed(STUCK)])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    [recovery] = rt.warnings(NO_TABLE, ctx, k=3).recoveries
    assert recovery.trajectory_id == got_past.trajectory_id and recovery.outcome == "failure"
    assert NO_TABLE in recovery.step_holding and "cat <<'EOF' > reproduce_issue.py" in recovery.next_step
    said = rt.advice("warnings", NO_TABLE, ctx)
    [item] = said.items
    assert item["kind"] == "recovery" and item["provenance"]["outcome"] == "failure"
    assert "(a failed past run that met the same error)" in said.text and "failed later for another reason" in said.text
    # runs that never got past the error they met stay warnings, no recovery
    assert rt.warnings(REPRODUCE_APP, ctx, k=3).recoveries == []


def test_a_recovery_shows_the_step_that_got_the_run_past_the_error_not_a_fix_that_did_not_work(hashing_ts):
    """Bug (round 26, RT10): a recovery showed the step after the error's first meeting. In django-16256 that is
    step 3, a ``schema_editor`` script that met the error again at step 4; step 5 (an on-disk database: ``acreate``
    runs in another thread, where ``:memory:`` is another database) is what step 6 ran cleanly. The step after the
    last meeting before the run got past it is shown."""
    [got_past] = _failed(GOT_PAST)
    assert "db.sqlite3" in got_past.steps[5].arguments["command"] and "db.sqlite3" not in got_past.steps[3].arguments["command"]
    hashing_ts.add([got_past])
    [recovery] = Runtime(hashing_ts).warnings(NO_TABLE, RuntimeContext(tenant="acme"), k=3).recoveries
    assert recovery.step_holding.startswith("[step 2]") and recovery.next_step.startswith("[step 5]")
    assert "schema_editor" in recovery.next_step  # its thought: why the step-3 fix failed
