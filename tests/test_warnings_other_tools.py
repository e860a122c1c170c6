"""A failed run made with another tool set is no warning where the context lists its tools (round 26, RT10).

In a tenant holding tau2 airline and tau-bench retail runs, 7 of the 279 warnings for their 165 tasks were runs of
the other domain: a retail run's ``cancel_pending_order`` pitfall told to an airline agent, who has no such tool.
The context's ``tools_available`` is the evidence: a run at most half of whose tools exist here, found beside runs
made here whose tools it lacks, was made elsewhere (``_made_elsewhere``).
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
    [retail_failed] = [run.trajectory_id for run in retail if run.outcome.value == "failure"]
    assert not set(_tools([failed])) & set(_tools(retail))
    asked = next(run for run in airline if run.trajectory_id.startswith("tau2.airline.1."))  # a success's task
    rt = Runtime(hashing_ts)

    def warned(task: str, tools: list[str]) -> list[str]:
        return [w.trajectory_id for w in rt.warnings(task, RuntimeContext(tenant="acme", tools_available=tools))]

    # both failures are like the airline task; with the airline tools listed the retail one (found beside the
    # airline one, which was made here) is no warning
    assert set(warned(asked.task, [])) == {failed.trajectory_id, retail_failed}  # no tools listed: no evidence
    assert warned(asked.task, _tools(airline)) == [failed.trajectory_id]
    # a retail agent has none of the airline run's tools: its pitfalls are of tools it cannot call, though no run
    # found beside it was made with the retail tools (round 27, RT11: it was warned then)
    assert failed.trajectory_id not in warned(failed.task, _tools(retail))
    assert failed.trajectory_id in warned(failed.task, [*_tools(retail), *_tools([failed])])

MINI = REAL / "mini-swe-agent" / ".real" / "batch-2.4.6"
SWE_AGENT = REAL / "swe-agent" / ".real" / "sa-1.1.0-retry" / "score" / "run1"
#: OpenHands' own tool names (tests/fixtures/openhands): ``execute_bash``, not ``bash``
OPENHANDS = ["execute_bash", "think", "finish", "execute_ipython_cell", "task_tracker", "str_replace_editor"]


def test_tool_names_of_another_harness_are_no_evidence_of_another_environment(hashing_ts):
    """Review of RT10: SWE-agent's failed ``demo__greet`` run (``bash``, ``str_replace_editor``, ``submit``) warned a
    mini-swe-agent task only where the context listed no tools: ``["bash"]`` (the README's context, a mini-swe-agent's
    one tool) and OpenHands' own list each dropped it, the names being of another harness, not another environment."""
    runs = [p.trajectory for path in (MINI, SWE_AGENT) for p in read_dump(path, tenant="acme") if p.trajectory]
    hashing_ts.add(runs)
    failed = [run for run in runs if run.outcome.value == "failure"]
    [asked] = [run for run in failed if "demo__greet-11" in run.trajectory_id]
    [swe_agent] = [run.trajectory_id for run in failed if run.trajectory_id.startswith("swe-agent")]
    rt = Runtime(hashing_ts)

    def warned(tools: list[str]) -> list[str]:
        ctx = RuntimeContext(tenant="acme", tools_available=tools)
        return [w.trajectory_id for w in rt.warnings(asked.task, ctx, exclude_trajectory_ids=[asked.trajectory_id])]

    assert swe_agent in warned([])
    assert warned(["bash"]) == warned(["bash", "edit"]) == warned(OPENHANDS) == warned([])


def test_an_agent_without_a_shell_is_not_warned_of_a_shell_runs_failure(hashing_ts):
    """Round 27, RT11: the tool rule took names as evidence only beside a run found made here, so an agent listing no
    shell was warned of mini-swe-agent's ``bash``-only failure whenever no run found had only its tools. The context's
    ``tools_available`` is trusted: a run sharing no tool with it is no warning; one sharing some (SWE-agent's, with
    ``str_replace_editor``) stays, and a shell under any name (OpenHands' ``execute_bash``) is a shell."""
    runs = [p.trajectory for path in (MINI, SWE_AGENT) for p in read_dump(path, tenant="acme") if p.trajectory]
    hashing_ts.add(runs)
    [mini] = [run.trajectory_id for run in runs if run.outcome.value == "failure" and "demo__greet-11" in run.trajectory_id]
    [swe_agent] = [run.trajectory_id for run in runs if run.outcome.value == "failure" and run.trajectory_id.startswith("swe-agent")]
    [asked] = [run for run in runs if "demo__greet-14" in run.trajectory_id]
    rt = Runtime(hashing_ts)

    def warned(tools: list[str]) -> set[str]:
        return {w.trajectory_id for w in rt.warnings(asked.task, RuntimeContext(tenant="acme", tools_available=tools))}

    assert warned([]) == {mini, swe_agent}
    assert warned(["str_replace_editor"]) == {swe_agent}  # an editor, no shell
    assert warned(["get_reservation_details", "cancel_reservation"]) == set()  # an airline agent: none of their tools
    assert warned(["bash"]) == warned(["execute_bash"]) == warned(OPENHANDS) == {mini, swe_agent}
