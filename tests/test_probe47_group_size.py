"""``group_size`` in lexical and hybrid search: up to ``group_size`` rows of each run shown, as dense mode's
group_by gives them, on real tau-bench airline runs (tests/fixtures/tau-bench/.group-size/SOURCE.md).

A run's further rows were looked for among the first k x group_size x 4 fused candidates only, and the pools
grew for k runs but never for a run's rows: a short keyword query, held by many rows of many runs, showed a
run's best row and not its next ones (probe 47: `get_reservation_details`, k=5, group_size=3, hybrid, on the
whole gpt-4o airline file: [2, 1, 1, 1, 1] rows per run where the candidates held [3, 3, 2, 1, 1])."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cli_support import run_cli
from trajsearch.ingest.read import read_dump

AIRLINE = Path(__file__).parent / "fixtures" / "tau-bench" / ".group-size" / "gpt-4o-airline-10-19.json"


@pytest.fixture
def airline(hashing_ts):
    parsed = list(read_dump(AIRLINE, tenant="acme"))
    assert all(p.trajectory is not None for p in parsed), [p.error for p in parsed]
    hashing_ts.add([p.trajectory for p in parsed])
    return hashing_ts


def per_run(hits) -> list[int]:
    return runs_counted([h.trajectory_id for h in hits])


def runs_counted(trajectory_ids: list[str]) -> list[int]:
    """Rows per run, runs in the order they first show."""
    counts = Counter(trajectory_ids)
    return [counts[t] for t in dict.fromkeys(trajectory_ids)]


@pytest.mark.parametrize("mode", ["hybrid", "lexical"])
@pytest.mark.parametrize("query", ["get_user_details", "get_reservation_details", "cancel_reservation"])
@pytest.mark.parametrize("k, group_size", [(1, 3), (2, 3), (3, 3), (2, 5)])
def test_each_run_shows_group_size_rows_where_it_has_them(airline, mode, query, k, group_size):
    # every row the mode matches (lexical: a row holding a query word; hybrid: any row), all of them: the
    # ten runs have fewer than MAX_K, so this ungrouped list is whole
    every = airline.search(query, tenant="acme", k=200, group_by_trajectory=False, mode=mode)
    assert 0 < len(every) < 200
    held = Counter(h.trajectory_id for h in every)

    hits = airline.search(query, tenant="acme", k=k, group_size=group_size, mode=mode)
    runs = list(dict.fromkeys(h.trajectory_id for h in hits))
    assert len(runs) == k
    assert per_run(hits) == [min(group_size, held[t]) for t in runs]
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_the_first_run_of_a_keyword_query_shows_three_rows_not_one(airline):
    """The case as a user meets it: the best run for a pasted tool name, its three best rows."""
    for mode in ("hybrid", "lexical"):
        hits = airline.search("get_user_details", tenant="acme", k=1, group_size=3, mode=mode)
        assert per_run(hits) == [3], mode  # before: [2] in both modes


def test_runs_with_one_row_inside_the_filters_are_shown_with_it_and_not_searched_deeper(airline):
    """Task rows: one per run, so group_size 3 shows one row of each of k runs (the check that a run has
    no further rows keeps the pools from growing to the limit for nothing)."""
    for mode in ("hybrid", "lexical"):
        hits = airline.search("get_user_details", tenant="acme", levels="task", k=3, group_size=3, mode=mode)
        assert per_run(hits) == [1, 1, 1], mode


def test_the_cli_shows_group_size_rows_of_each_run(home):
    """`trajsearch search ... --group-size 3` as an engineer types it, on the ingested dump."""
    code, out, err = run_cli("ingest", str(AIRLINE), "-t", "acme", "-q")
    assert code == 0, out + err
    for mode in ("hybrid", "lexical"):
        code, out, err = run_cli("search", "get_user_details", "-t", "acme", "-k", "1", "--group-size", "3",
                                 "--mode", mode, "--json")
        assert code == 0, out + err
        assert runs_counted([h["trajectory_id"] for h in json.loads(out)]) == [3], mode
