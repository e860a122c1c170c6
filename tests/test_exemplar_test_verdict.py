"""An exemplar's test run shows its verdict (round 25, RT8).

Django's test runner prints one ``Destroying test database for alias ...`` line per alias and parallel clone after
its ``Ran N tests`` and ``OK``; a key action keeps the head and tail of a step's output, and those lines filled the
tail: the verification step an agent should copy was shown without its result (179 of the 374 such outputs of the
gemini-3-pro runs that resolved). Plumbing: the hashing test embedder, a real mini-swe-agent run and its real
harness report."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

#: django-16255, resolved: step 14 runs ``./tests/runtests.py sitemaps_tests``: 60 tests, OK, then 8 teardown lines
REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "swebench-gemini-3-pro"


def test_an_exemplars_django_test_run_shows_how_many_tests_ran_and_the_verdict(hashing_ts):
    [run] = [OutcomeTable.load(REAL / "logs").apply(p.trajectory) for p in read_dump(REAL / "trajs", tenant="acme")]
    assert run.outcome.value == "success"
    assert run.steps[14].observation.rstrip().endswith(
        "Ran 60 tests in 0.733s\n\nOK\n" + "Destroying test database for alias 'default'...\n" * 8 + "</output>")
    hashing_ts.add([run])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    [shown] = rt.advice("exemplars", run.task, ctx).items
    [tests] = [a for a in shown["view"]["key_actions"] if a["step"] == 14]
    assert tests["observation"].endswith("Ran 60 tests in 0.733s\n\nOK")
    text = rt.context_for(run.task, ctx).text
    assert "Ran 60 tests in 0.733s" in text and "Destroying test database" not in text
