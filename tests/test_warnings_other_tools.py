"""A failed run made with another tool set is no warning where the context lists its tools (round 26, RT10).

In a tenant holding tau2 airline and tau-bench retail runs, 7 of the 279 warnings for their 165 tasks were runs of
the other domain: a retail run's ``cancel_pending_order`` pitfall told to an airline agent, who has no such tool.
The context's ``tools_available`` is the evidence: a run at most half of whose tools exist here was made elsewhere.
Plumbing: the hashing test embedder (``hashing_ts``); real tau2 airline and grok-3 retail results."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

REAL = Path(__file__).parent / "fixtures"
AIRLINE = REAL / "tau2-bench" / ".real" / "airline_run1.json"
RETAIL = REAL / "tau-bench" / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def _tools(runs: list) -> list[str]:
    return sorted({step.action for run in runs for step in run.steps if step.action and step.action != "respond"})


def test_a_failed_run_whose_tools_this_agent_has_not_is_no_warning(hashing_ts):
    airline = [p.trajectory for p in read_dump(AIRLINE, tenant="acme") if p.trajectory]
    retail = [p.trajectory for p in read_dump(RETAIL, tenant="acme") if p.trajectory]
    hashing_ts.add([*airline, *retail])
    [failed] = [run for run in airline if run.outcome.value == "failure"]  # cancel_reservation, get_flight_status...
    assert not set(_tools([failed])) & set(_tools(retail))
    rt = Runtime(hashing_ts)

    def warned(tools: list[str]) -> list[str]:
        said = rt.warnings(failed.task, RuntimeContext(tenant="acme", tools_available=tools))
        return [w.trajectory_id for w in said]

    # its own task finds it first (failed runs of this very task), but not for an agent with the retail tools
    assert failed.trajectory_id not in warned(_tools(retail))
    assert failed.trajectory_id in warned(_tools(airline))
    assert failed.trajectory_id in warned([])  # no tools listed: no evidence
