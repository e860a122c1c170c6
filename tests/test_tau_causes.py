"""A tau-bench failed run's cause says each difference from the task's expected actions once, and a hand-off to a
human agent as what it is (round 26, RT10).

tau-bench's ``transfer_to_human_agents`` returns "Transfer successful" without touching the data and is the domain's
terminate tool, left out when the grade replays the expected actions (``tau_bench/envs/base.py``); tau2 types it
``ToolType.GENERIC``, not ``WRITE``. Causes called it an "unexpected" write (35 of 166 tau causes over the shared
and fixture dumps) and said "never called" once per expected call (13 causes repeated a line). Real grok-3 retail
results (``tests/fixtures/tau-bench/.hand-off``, see SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

GROK3 = (Path(__file__).parent / "fixtures" / "tau-bench" / ".hand-off"
         / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json")


def test_a_tau_cause_says_each_unmet_action_once_and_a_transfer_as_a_hand_off() -> None:
    runs = {p.trajectory.trajectory_id: p.trajectory for p in read_dump(GROK3, tenant="t") if p.trajectory}
    # task 55: two orders to cancel and two to return, none done; the run transferred the user instead
    cause = runs["tau-tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646-55-t0"].failure.cause
    parts = cause.split("; ")
    assert parts[:2] == ["cancel_pending_order never called (2 expected calls)",
                         "return_delivered_order_items never called (2 expected calls)"]
    assert parts[2].startswith('transfer_to_human_agents not expected (a hand-off to a human agent, no write) {"summary"')
