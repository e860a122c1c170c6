"""A failed run that met a pasted error and got past it is no warning for that error (round 25, RT8).

An agent stuck mid-task pastes the error its step just got; warnings are failed runs to avoid. A failed run whose step
met that error and which then made the same call again without it (as a failed run's failing step is judged:
``represent.recoveries``) got past the error and failed for another reason: on the gemini-3-pro store, 15 of the 22
warnings shown with the step holding a pasted error line were of such runs. Plumbing: the hashing test embedder
(``hashing_ts``), real mini-swe-agent runs judged by their real sb-cli reports."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
#: django-16256, failed: steps 2 and 4 met ``NO_TABLE`` running ``python reproduce_issue.py``, step 6 ran it cleanly
GOT_PAST = REAL / "gemini-3-pro-got-past"
NO_TABLE = "django.db.utils.OperationalError: no such table: __main___author"
#: django-12406 and -12325, failed: each file ends its steps on ``REPRODUCE_APP`` (the step making the package after
#: it, no run of the script again)
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
    assert said.items == [] and got_past.trajectory_id not in said.text
    # the runs whose steps end on the error they met stay warnings for it
    stuck = rt.warnings(REPRODUCE_APP, ctx, k=3)
    assert sorted(w.trajectory_id for w in stuck) == ["gemini-3-pro-warnings.django__django-12325",
                                                      "gemini-3-pro-warnings.django__django-12406"]
    assert all(REPRODUCE_APP in w.step_holding for w in stuck)
