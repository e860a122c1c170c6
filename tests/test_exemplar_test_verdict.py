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


#: the real step 14 output's verdict and teardown as Windows, ``--keepdb`` and a progress line running into the
#: teardown print them (review of RT8, 6), and the output of a run that hung after setting up its database
VARIANTS = {
    "crlf": "Ran 60 tests in 0.733s\r\n\r\nOK\r\n" + "Destroying test database for alias 'default'...\r\n" * 8,
    "keepdb": "Using existing test database for alias 'default'...\nRan 60 tests in 0.733s\n\nOK\n"
              "Preserving test database for alias 'default'...\n",
    "dots": "Using existing clone for alias 'default'...\n" + "." * 60 + "Destroying test database for alias "
            "'other'...\nRan 60 tests in 0.733s\n\nOK\n" + "Destroying test database for alias 'default'...\n" * 8,
}
HUNG = "Creating test database for alias 'default'..."


def test_an_exemplars_django_test_run_shows_its_verdict_however_the_database_lines_are_printed(hashing_ts):
    """Bug (round 25, review of RT8): the filter missed CRLF lines, ``--keepdb``'s lines and a teardown line run on
    after progress dots, so they still filled the tail; and an output of only ``Creating test database ...`` (a hang)
    was shown empty."""
    [run] = [OutcomeTable.load(REAL / "logs").apply(p.trajectory) for p in read_dump(REAL / "trajs", tenant="acme")]
    rt = Runtime(hashing_ts)
    for name, output in [*VARIANTS.items(), ("hung", HUNG)]:  # a tenant each: one exemplar per task
        steps = [s.model_copy(update={"observation": output}) if s.index == 14 else s for s in run.steps]
        hashing_ts.add([run.model_copy(update={"tenant": f"acme-{name}", "steps": steps})])
        [shown] = rt.advice("exemplars", run.task, RuntimeContext(tenant=f"acme-{name}")).items
        [tests] = [a for a in shown["view"]["key_actions"] if a["step"] == 14]
        if name == "hung":
            assert tests["observation"] == HUNG
        else:
            assert tests["observation"].replace("\r", "").endswith("Ran 60 tests in 0.733s\n\nOK"), name
            assert "test database" not in tests["observation"] and "existing clone" not in tests["observation"]
