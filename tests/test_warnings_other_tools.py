"""A failed run made with another tool set is no warning where the context lists its tools (round 26, RT10).

In a tenant holding tau2 airline and tau-bench retail runs, 7 of the 279 warnings for their 165 tasks were runs of
the other domain: a retail run's ``cancel_pending_order`` pitfall told to an airline agent, who has no such tool.
The context's ``tools_available`` is the evidence: a run at most half of whose tools exist here, found beside runs
made here whose tools it lacks, was made elsewhere (``_made_elsewhere``).
Plumbing: the hashing test embedder (``hashing_ts``); real tau2 airline and grok-3 retail results."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext

from cli_support import backend, run_cli  # noqa: F401 - the fixture

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
    # no run found was made with the retail tools: the airline run's names compare with nothing, no evidence (another
    # harness may name the retail agent's own tools so; a warning lost in silence costs more than one extra)
    assert failed.trajectory_id in warned(failed.task, _tools(retail))

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
    shell was warned of mini-swe-agent's ``bash``-only failure whenever no run found had only its tools. A shell is
    known under every harness's name: a run that called only a shell is no warning for an agent listing none. One that
    called other tools too (SWE-agent's ``str_replace_editor``) stays: their names may be another harness's."""
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
    assert warned(["get_reservation_details", "cancel_reservation"]) == {swe_agent}  # an airline agent: no shell
    assert warned(["bash"]) == warned(["execute_bash"]) == warned(OPENHANDS) == {mini, swe_agent}


TERMINUS = REAL / "atif" / ".real" / "harbor-timeout-unfinished"  # a real Terminus-2 failure (``bash_command``)


def test_terminus_shell_is_a_shell(hashing_ts):
    """Review of RT11: Terminus-2's shell is ``bash_command``, a name the shell set lacked, so a run that called only it
    shared no tool with a mini-swe-agent agent's ``["bash"]`` and was dropped whatever its task (and a Terminus agent
    lost every ``bash`` run's warning); each answer then said no failure was close enough."""
    runs = [p.trajectory for path in (MINI, TERMINUS) for p in read_dump(path, tenant="acme") if p.trajectory]
    hashing_ts.add(runs)
    [terminus] = [run for run in runs if run.outcome.value == "failure" and run.trajectory_id.startswith("atif.")]
    [mini] = [run for run in runs if run.outcome.value == "failure" and "demo__greet-11" in run.trajectory_id]
    [asked] = [run for run in runs if "demo__greet-14" in run.trajectory_id]
    rt = Runtime(hashing_ts)

    def warned(task: str, tools: list[str]) -> set[str]:
        return {w.trajectory_id for w in rt.warnings(task, RuntimeContext(tenant="acme", tools_available=tools))}

    assert terminus.trajectory_id in warned(terminus.task, []) == warned(terminus.task, ["bash"])
    assert mini.trajectory_id in warned(asked.task, []) == warned(asked.task, ["bash_command", "mark_task_complete"])
    assert terminus.trajectory_id not in warned(terminus.task, ["str_replace_editor"])  # a shell-only run, no shell


def test_staleness_compares_tools_as_warnings_do(hashing_ts):
    """Review of RT11: staleness compared tool names exactly while warnings compared kinds, so under OpenHands' own
    list (``execute_bash``) every mini-swe-agent run was "used tools no longer available: bash" and ``prune`` deleted
    it, the same run warnings took for one made with this agent's shell."""
    runs = [p.trajectory for p in read_dump(MINI, tenant="acme") if p.trajectory]
    hashing_ts.add(runs)
    rt = Runtime(hashing_ts)
    assert rt.staleness_report(RuntimeContext(tenant="acme", tools_available=OPENHANDS)) == []
    no_shell = rt.staleness_report(RuntimeContext(tenant="acme", tools_available=["str_replace_editor"]))
    assert {s.trajectory_id: s.reasons for s in no_shell} == {
        run.trajectory_id: ["used tools no longer available: bash"] for run in runs}


def test_an_answer_emptied_by_the_tool_rule_says_why(hashing_ts):
    """Round 28, ENG6: where every failed run found was dropped as made with tools the agent has not, the answer said
    ``no_similar_failures``, "none close enough", of runs that were close (the runtime's, the tool's: MCP's and the
    gRPC calls' own). It says ``failures_with_other_tools``; an agent with a shell is warned as before."""
    from trajsearch.runtime.tool import NO_RESULTS, OTHER_TOOLS

    runs = [p.trajectory for p in read_dump(MINI, tenant="acme") if p.trajectory]
    hashing_ts.add(runs)
    [failed] = [run for run in runs if run.outcome.value == "failure" and "demo__greet-11" in run.trajectory_id]
    rt = Runtime(hashing_ts)
    editor = RuntimeContext(tenant="acme", tools_available=["str_replace_editor"])  # no shell: mini's runs are elsewhere
    assert rt.advice("warnings", failed.task, RuntimeContext(tenant="acme", tools_available=["bash"])).items
    said = rt.advice("warnings", failed.task, editor)
    assert (said.items, said.reason, said.note) == ([], OTHER_TOOLS, NO_RESULTS["failures"][OTHER_TOOLS])
    answer = rt.tool(editor)({"query": failed.task, "kind": "failures"})
    assert (answer["results"], answer["reason"]) == ([], OTHER_TOOLS), answer


def test_the_cli_says_why_the_tool_rule_emptied_an_answer(backend):
    """Round 28, ENG6: ``trajsearch exemplars --warnings`` printed "(nothing applicable: no similar failures)" with
    no note where every failed run found was made with tools the agent has not."""

    assert run_cli("ingest", str(MINI), "--quiet")[0] == 0
    failed = next(p.trajectory for p in read_dump(MINI) if p.trajectory and p.trajectory.outcome.value == "failure"
                  and "demo__greet-11" in p.trajectory.trajectory_id)
    code, out, err = run_cli("exemplars", failed.task, "--warnings", "--tool", "str_replace_editor")
    assert code == 0 and "other tools" in out and "tools this agent does not have" in err, (out, err)
    code, out, err = run_cli("exemplars", failed.task, "--warnings", "--tool", "str_replace_editor", "--json")
    assert json.loads(out)["reason"] == "failures_with_other_tools"
