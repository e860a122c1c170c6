"""AUDEVAL36: a sub-agent a solver runs with Inspect's ``run()`` (no tool call) keeps its turns in its own state, in
none of the sample's messages: its calls are steps from its events (were lost), marked as its own, in time order."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any, Callable

from adapter_support import runs

from trajsearch.ingest.sources import ZipMembers
from trajsearch.model import Outcome

LOG = Path(__file__).parent / "fixtures" / "inspect-ai" / ".aud36" / "run-subagent.eval"


def test_a_sub_agent_run_on_its_own_is_read_from_its_events_before_the_lead_s_steps():
    by_task = {run.task_id: run for run in runs(LOG)}
    planned = [("lookup", {"city": "Paris", "subagent": "planner"}, "2.1 million"),
               ("submit", {"answer": "Paris has 2.1 million; now check Rome", "subagent": "planner"},
                "Paris has 2.1 million; now check Rome")]
    lead = [("lookup", {"city": "Paris"}, "2.1 million"), ("lookup", {"city": "Rome"}, "2.8 million")]
    plan, tokens = by_task["plan"], by_task["tokens"]
    assert [(s.action, s.arguments, s.observation) for s in plan.steps] == [
        *planned, *lead, ("lookup", {"city": "Paris"}, "2.1 million"),
        ("respond", {"content": "Rome is larger.\n\nRome"}, None)]
    assert [(s.action, s.arguments, s.observation) for s in tokens.steps][:4] == [*planned, *lead]
    assert len(tokens.steps) == 6
    assert all(a.started_at <= b.started_at for a, b in zip(plan.steps[:-2], plan.steps[1:-1]))
    assert plan.outcome is Outcome.success
    assert tokens.outcome is Outcome.failure and tokens.failure.cause == "the run hit its token limit"


def test_the_sample_s_own_agent_is_not_read_twice_as_a_sub_agent():
    """The lead agent's span (``react`` as the solver, in an ``agent`` span too) wrote the sample's messages: its
    calls are read from them once, not again from its events."""
    demo = Path(__file__).parent / "fixtures" / "inspect-ai" / ".r28" / "agent-demo.eval"
    assert not any("subagent" in s.arguments for run in runs(demo) for s in run.steps)


def test_an_agent_a_scorer_runs_is_no_sub_agent_of_the_run():
    """A scorer that grades with an agent it runs with ``run()``: that agent's span lies under the ``scorers`` span,
    its calls (``check``, ``submit``) judge the run and are none of its steps."""
    [run] = runs(LOG.with_name("scorer-run.eval"))
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "Rome is larger."})]
    assert run.outcome is Outcome.success


def _damaged(folder: Path, damage: Callable[[dict[str, Any]], None]) -> Path:
    """The ``run()`` log, each sample changed by ``damage`` (re-zipped, deflated)."""
    members, damaged = ZipMembers(LOG), folder / "damaged.eval"
    with zipfile.ZipFile(damaged, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in members.names:
            data = members.read(name)
            if name.startswith("samples/"):
                sample = json.loads(data)
                damage(sample)
                data = json.dumps(sample).encode()
            archive.writestr(name, data)
    return damaged


def test_a_model_event_whose_span_id_is_a_list_is_read_as_in_no_span(tmp_path: Path):
    """Damage: a span id that is no string is no span (as for the spans themselves), not an error losing the
    sample: both samples are read, with the steps of the undamaged log."""
    def damage(sample: dict[str, Any]) -> None:
        next(e for e in sample["events"] if e.get("event") == "model")["span_id"] = ["x"]

    assert sorted((r.task_id, len(r.steps)) for r in runs(_damaged(tmp_path, damage))) == sorted(
        (r.task_id, len(r.steps)) for r in runs(LOG))


def test_an_untimed_sub_agent_step_goes_to_the_end_and_the_timed_ones_stay_in_time_order(tmp_path: Path):
    """Damage: the planner's ``lookup`` logged with no time cannot be placed by time: it goes to the end; its
    ``submit``, timed, still goes before the lead's steps (it went to the end with the untimed one)."""
    def damage(sample: dict[str, Any]) -> None:
        next(e for e in sample["events"] if e.get("event") == "tool").pop("timestamp")

    plan = next(r for r in runs(_damaged(tmp_path, damage)) if r.task_id == "plan")
    assert [(s.action, s.arguments.get("subagent")) for s in plan.steps] == [
        ("submit", "planner"), ("lookup", None), ("lookup", None), ("lookup", None), ("respond", None),
        ("lookup", "planner")]
