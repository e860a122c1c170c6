"""A run that did nothing is no exemplar (round 24, EX0).

A real Harbor trial of mini-swe-agent whose model API died before its first step (exit status ``RetryError``) while
its verifier passed the untouched workspace (reward 1) reads as a success of 0 steps. An exemplar is shown to an
agent to follow its steps, and this run has none: it was offered for its own task as ``follow_closely``, and
curation admitted it (its reward 1 counts as verified). A run that only answered the user (tau-bench's refusals)
did something to follow, and stays an exemplar."""
from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.client import Client
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Trajectory
from trajsearch.runtime import Runtime, RuntimeContext, Strategy
from trajsearch.service.validate import Limits

from service_support import key_ring, serve_store

FIXTURES = Path(__file__).parent / "fixtures"
PASSED_IDLE = FIXTURES / "atif/.real/harbor-mini-retry/107_jawah__charset_normalizer__s__ER5Q6Zu"
ANSWERED_ONLY = FIXTURES / "tau-bench/.runtime/gpt-4o-airline-exemplars-21-31.json"


def _runs(path: Path) -> list[Trajectory]:
    return [p.trajectory for p in read_inputs([path]) if p.trajectory is not None]


@pytest.fixture
def idle_run() -> Trajectory:
    """The trial's one run: a success of no step."""
    [run] = _runs(PASSED_IDLE)
    assert run.outcome.value == "success" and run.reward == 1.0 and run.steps == []
    return run


def test_a_run_of_no_step_is_no_exemplar_for_its_own_task(hashing_ts, idle_run: Trajectory) -> None:
    hashing_ts.add([idle_run])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant=idle_run.tenant)
    found = rt.exemplars(idle_run.task, ctx)
    assert found.items == [] and found.strategy is Strategy.plan_from_scratch
    shown = rt.context_for(idle_run.task, ctx)
    assert shown.exemplars == [] and shown.strategy is Strategy.plan_from_scratch
    assert idle_run.trajectory_id not in shown.text
    said = rt.advice("exemplars", idle_run.task, ctx)
    assert said.items == [] and said.strategy == "plan_from_scratch" and said.reason
    answer = rt.tool(ctx)({"query": idle_run.task})
    assert idle_run.trajectory_id not in str(answer)


def test_curation_refuses_a_run_of_no_step(hashing_ts, idle_run: Trajectory) -> None:
    result = Runtime(hashing_ts).add_run(idle_run)
    assert not result.accepted
    assert result.reasons == ["no step to follow (no tool call, no answer) in its 0 steps"]
    assert hashing_ts.index.count(idle_run.tenant) == 0


def test_a_run_that_only_answered_the_user_stays_an_exemplar(hashing_ts, idle_run: Trajectory) -> None:
    """tau-bench airline 21 trial 1 (reward 1) never called a tool: it asked for the ids it needed, six turns of
    ``respond``. The idle trial beside it in the store does not hide it."""
    talked = next(r for r in _runs(ANSWERED_ONLY) if r.trajectory_id.endswith("21-t1"))
    assert talked.tools_used == ["respond"]
    hashing_ts.add([talked, idle_run.model_copy(update={"tenant": talked.tenant})])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant=talked.tenant)
    found = rt.exemplars(talked.task, ctx)
    assert [e.trajectory_id for e in found.items] == [talked.trajectory_id]
    assert found.strategy is Strategy.follow_closely
    assert Runtime(hashing_ts).add_run(talked).reasons == []


def test_the_service_offers_no_run_of_no_step(tmp_path: Path, idle_run: Trajectory) -> None:
    """The gRPC ``Exemplars`` call over loopback, the door an agent runtime uses: the same empty answer."""
    made, ring = key_ring(reader=dict(tenant="acme", role="read"))
    server = serve_store(tmp_path, ring, [idle_run.model_copy(update={"tenant": "acme"})], Limits())
    try:
        with Client(server.address, made["reader"]) as acme:
            said = acme.exemplars(idle_run.task)
            assert said.items == [] and said.strategy == "plan_from_scratch"
            assert acme.run(idle_run.trajectory_id) is not None  # still searchable as a run, only not to follow
    finally:
        server.stop(0)


def test_an_empty_answer_over_runs_of_no_step_says_they_took_none(hashing_ts, idle_run: Trajectory) -> None:
    """Bug (round 25, RT8): where the only successful run was the idle trial, every interface said "No successful run
    is recorded here yet" (``no_successful_runs``), though one is: it took no step to follow. An empty tenant still
    says there is none."""
    hashing_ts.add([idle_run])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant=idle_run.tenant)
    said = rt.advice("exemplars", idle_run.task, ctx)
    shown = rt.context_for(idle_run.task, ctx)
    answer = rt.tool(ctx)({"query": idle_run.task})
    assert said.reason == shown.reason == answer["reason"] == "no_runs_to_follow"
    assert said.note == shown.note == answer["note"] and "took no step to follow" in said.note
    assert rt.advice("exemplars", idle_run.task, RuntimeContext(tenant="nobody")).reason == "no_successful_runs"


def test_novelty_is_not_calibrated_against_runs_of_no_step(hashing_ts, idle_run: Trajectory) -> None:
    """Bug (round 25, RT8): a tenant's novelty threshold was measured against every successful run, those of no step
    too, which are never offered: a tenant of twelve failed tau-bench airline tasks and the idle trial was calibrated
    against the idle trial alone. It has no successful run an exemplar can be, as one without the trial has none."""
    failed = [r for r in _runs(FIXTURES / "tau-bench/.page/gpt-4o-airline-0-14.json") if r.outcome.value == "failure"]
    assert len({r.task_id for r in failed}) == 12
    hashing_ts.add([*failed, idle_run.model_copy(update={"tenant": failed[0].tenant})])
    calibration = Runtime(hashing_ts).calibrations(failed[0].tenant)
    assert calibration.basis == "global: no successful run to measure against" and calibration.tasks == 13


def test_runs_of_no_step_do_not_hide_runs_to_follow_under_other_versions(hashing_ts, idle_run: Trajectory) -> None:
    """Bug (round 25, review of RT8, 5): ``no_runs_to_follow`` was said before the versions were asked, so a context
    whose versions held only the idle trial was told to plan from scratch though runs of other versions could be
    followed; they are said (``no_runs_in_versions``). Where no version holds one, it still says ``no_runs_to_follow``."""
    others = [run.model_copy(update={"tenant": idle_run.tenant, "env_version": "v2"}) for run in _runs(ANSWERED_ONLY)]
    hashing_ts.add([idle_run.model_copy(update={"env_version": "v1"}), *others])
    rt, ctx = Runtime(hashing_ts), RuntimeContext(tenant=idle_run.tenant, env_version="v1")
    said = rt.advice("exemplars", idle_run.task, ctx)
    assert said.items == [] and said.reason == rt.tool(ctx)({"query": idle_run.task})["reason"] == "no_runs_in_versions"


def test_runs_of_no_step_under_every_version_are_said_so(hashing_ts, idle_run: Trajectory) -> None:
    """The other side of the line above: the idle trial under two versions, a context asking for one of them."""
    hashing_ts.add([idle_run.model_copy(update={"env_version": "v1"}),
                    idle_run.model_copy(update={"env_version": "v2", "trajectory_id": idle_run.trajectory_id + "-v2"})])
    ctx = RuntimeContext(tenant=idle_run.tenant, env_version="v1")
    assert Runtime(hashing_ts).advice("exemplars", idle_run.task, ctx).reason == "no_runs_to_follow"
