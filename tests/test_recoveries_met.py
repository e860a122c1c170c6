"""A recovery is a successful run that met the pasted error itself, in what a step got back (review RRT5): its next
step is shown as how it got past the error, so a near match (another name, another format code) or a line the run's
own script printed is no recovery. Plumbing: the hashing test embedder (``hashing_ts``), real mini-swe-agent runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
#: a real successful run (sqlfluff-2419): step 10 met ``No module named 'pytest'``, step 12 pytest's
#: ``E   ModuleNotFoundError: No module named 'yaml'``
RECOVERED = REAL / "recovered-pytest"
#: a real successful run (marshmallow-1343) whose script printed ``=== Testing the fix for TypeError: ... ===``
PRINTED = REAL / "printed-error"


@pytest.fixture
def rt(hashing_ts):
    hashing_ts.add([p.trajectory for path in (RECOVERED, PRINTED) for p in read_dump(path, tenant="acme")])
    return Runtime(hashing_ts)


def _met(rt: Runtime, line: str) -> list[str]:
    """The steps the recoveries shown for ``line`` met it at."""
    return [r.step_holding for r in rt.warnings(line, RuntimeContext(tenant="acme")).recoveries]


def test_an_error_met_verbatim_is_a_recovery_whatever_its_line_starts_with(rt):
    [pytest_missing] = _met(rt, "ModuleNotFoundError: No module named 'pytest'")
    assert pytest_missing.startswith("[step 10]")
    [yaml_missing] = _met(rt, "ModuleNotFoundError: No module named 'yaml'")  # pytest's "E   " before it
    assert yaml_missing.startswith("[step 12]") and yaml_missing.endswith("E   ModuleNotFoundError: No module named 'yaml'")


def test_a_near_match_for_another_name_is_no_recovery(rt):
    """Bug: ``NameError: name 'parse_config' is not defined`` was shown a run that met ``name 'warnings_start' is not
    defined`` under "met the same error", its next step a fix for that other name; here ``yaml.cyaml`` was shown the
    run that met ``No module named 'yaml'``."""
    assert _met(rt, "ModuleNotFoundError: No module named 'yaml.cyaml'") == []


def test_a_header_the_runs_script_printed_is_no_error_met(rt):
    """Bug: ``TypeError: 'NoneType' object is not subscriptable`` was shown a run whose script printed
    ``=== Testing the fix for TypeError: ...`` as having met it; its next step was no fix."""
    assert _met(rt, "TypeError: 'NoneType' object is not subscriptable") == []


def test_the_tools_failures_kind_shows_the_recovery_the_warnings_call_shows(rt, hashing_ts):
    """The MCP tool's ``kind=failures`` (what its description tells an agent stuck on an error to ask) showed failed
    runs only, and answered ``no_similar_failures`` where ``Runtime.warnings`` showed a run that got past the error
    (review of round 22, RT6 4; tests/test_answers_alike.py asks it over MCP). It makes the searches of
    ``Runtime.warnings`` with recoveries on, and shows the recovery, labelled."""
    from dataclasses import replace

    from trajsearch.runtime import AdviceConfig, SearchPastRuns

    line, ctx = "ModuleNotFoundError: No module named 'pytest'", RuntimeContext(tenant="acme")
    searches = [0]
    search_filtered = hashing_ts.search_filtered

    def counted(*a, **kw):  # counts the searches a call makes; the store answers them
        searches[0] += 1
        return search_filtered(*a, **kw)

    hashing_ts.search_filtered = counted

    def spent(call) -> int:
        searches[0] = 0
        call()
        return searches[0]

    on = Runtime(hashing_ts, replace(rt.config, advice=AdviceConfig(recoveries_k=1)))
    tool = SearchPastRuns(hashing_ts, ctx, advice=AdviceConfig(recoveries_k=1))
    answer: dict = {}
    assert spent(lambda: answer.update(tool({"query": line, "kind": "failures"}))) == spent(
        lambda: on.warnings(line, ctx))
    assert [r["label"] for r in answer["results"]] == ["how a past run got past this"]
    assert answer["results"][0]["step_holding"].startswith("[step 10]")


def test_a_recovery_comes_before_the_second_warning_in_a_tight_budget(hashing_ts):
    """A recovery shares the context's budget after the first exemplar and warning and before the second (README): at
    the budget two warnings need exactly, the recovery is shown and the second warning left out."""
    from trajsearch.ingest.outcomes import OutcomeTable
    from trajsearch.runtime.format import render

    failed = REAL / "gemini-3-pro-warnings"  # two real failed runs that met ``No module named 'reproduce_app'``
    report = OutcomeTable.load(failed / "sb-cli-report.json")
    hashing_ts.add([p.trajectory for p in read_dump(failed, tenant="acme", outcomes=report)]
                   + [p.trajectory for p in read_dump(RECOVERED, tenant="acme")])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant="acme")
    warned = rt.warnings("ModuleNotFoundError: No module named 'reproduce_app'", ctx, k=3)
    recovered = rt.warnings("ModuleNotFoundError: No module named 'pytest'", ctx).recoveries
    assert len(warned) == 2 and warned.recoveries == [] and len(recovered) == 1
    low, budget = 0, 4000  # the least budget showing both warnings (nothing else given)
    while low + 1 < budget:
        mid = (low + budget) // 2
        low, budget = (low, mid) if len(render(None, [], warned, counter=rt.counter, budget=mid).data["warnings"]) == 2 \
            else (mid, budget)
    alone = render(None, [], warned, counter=rt.counter, budget=budget)
    assert [len(alone.data["warnings"]), alone.omitted] == [2, 0]
    shared = render(None, [], warned, counter=rt.counter, budget=budget, recoveries=recovered)
    assert [len(shared.data["warnings"]), len(shared.data["recoveries"])] == [1, 1] and shared.omitted
    assert shared.data["warnings"][0]["provenance"] == alone.data["warnings"][0]["provenance"]
