"""Exemplars for tau2 airline tasks worded in another form than the calls that do the work (round 16, R11c).

On the real model (all-MiniLM-L6-v2) and real tau2-bench runs: the fixture is nine simulations of
``airline_run1.json`` (see ``tests/fixtures/tau2-bench/.probe49/SOURCE.md``). A run is worth showing for a
task when it made the state-changing calls the task needs; the task words them in its own grammar.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.runtime import Runtime, RuntimeContext
from trajsearch.search import TrajSearch

pytestmark = pytest.mark.model

FIXTURE = Path(__file__).parent / "fixtures/tau2-bench/.probe49/airline_run1.cancel.json"


@pytest.fixture(scope="module")
def airline(tmp_path_factory, real_embedder):
    root = tmp_path_factory.mktemp("probe49-tau2")
    ts = TrajSearch.open(str(root / "milvus.db"), traces=str(root / "traces"), embedder=real_embedder)
    runs = [r.trajectory for r in read_dump(FIXTURE, tenant="airline")]
    ts.add(runs)
    yield Runtime(ts), {r.task_id: r for r in runs}
    ts.close()


def test_a_task_asking_for_flights_to_be_cancelled_gets_the_run_that_cancelled(airline):
    """airline-42 ("let the agent figure out which flights should be cancelled") needs ``cancel_reservation``;
    the one successful run that called it (airline-19, "cancel all of your upcoming flights") came seventh, below
    six runs that changed nothing: "cancelled" was no word of ``cancel_reservation``, so no place went by calls."""
    runtime, runs = airline
    query = runs["airline-42"]
    found = runtime.exemplars(query.task, RuntimeContext(tenant="airline"), k=3,
                              exclude_trajectory_ids=[query.trajectory_id])
    shown = [e.trajectory_id for e in found.items]
    assert runs["airline-19"].trajectory_id in shown, [runs_by_id(runs)[t] for t in shown]


def runs_by_id(runs: dict) -> dict[str, str]:
    return {r.trajectory_id: task for task, r in runs.items()}
