"""Asking for more results, or paging, never reorders the top: a search's top 5 is the prefix of its top 20
and top 50, on real tau-bench airline runs with the real model (tests/fixtures/tau-bench/.page/SOURCE.md).

Hybrid asked each leg for a pool growing with k (50 candidates at k=5, 100 at k=20) and fused the ranks within
it, so a row the other leg ranked 60th scored from one leg at k=5 and from both at k=20: asked for 20 runs,
ranks 3-5 differed from asking for 5 in 8 of 34 engineers' queries (round 22, ENG)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch
from trajsearch.store.filters import Filters

AIRLINE = Path(__file__).parent / "fixtures" / "tau-bench" / ".page" / "gpt-4o-airline-0-14.json"


@pytest.fixture(scope="module")
def airline(tmp_path_factory, real_embedder):
    """The fifteen runs in a store with the real model (built once: embedding them is most of the time)."""
    home = tmp_path_factory.mktemp("page")
    ts = TrajSearch.open(str(home / "milvus.db"), traces=str(home / "traces"), embedder=real_embedder)
    parsed = list(read_dump(AIRLINE, tenant="acme"))
    assert all(p.trajectory is not None for p in parsed), [p.error for p in parsed]
    ts.add([p.trajectory for p in parsed])
    yield ts
    ts.close()


@pytest.mark.parametrize("levels", [(), ("step", "failure")])
@pytest.mark.parametrize("query", ["get_user_details", "send_certificate", "transfer_to_human_agents"])
def test_the_top_runs_are_the_same_whatever_k(airline, query, levels):
    # k=50 asks for more runs than the fifteen: the legs are asked deeper until they run out, and still the
    # runs found first keep their places
    runs = {k: [h.trajectory_id for h in airline.search(query, tenant="acme", levels=levels, k=k)] for k in (5, 20, 50)}
    assert airline.mode_used(query, Filters(tenant="acme", levels=levels)) == "hybrid"
    assert len(runs[5]) == 5 and len(runs[20]) == 15 == len(runs[50])  # "k results whenever k exist"
    assert runs[20][:5] == runs[5]
    assert runs[50][:20] == runs[20]


@pytest.mark.parametrize("query", ["get_user_details", "send_certificate"])
def test_the_top_rows_are_the_same_whatever_k_ungrouped(airline, query):
    rows = {k: [h.id for h in airline.search(query, tenant="acme", k=k, group_by_trajectory=False)] for k in (5, 20, 60)}
    assert rows[20][:5] == rows[5]
    assert rows[60][:20] == rows[20]

