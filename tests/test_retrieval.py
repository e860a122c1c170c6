"""Retrieval quality with the real all-MiniLM-L6-v2 model (outcomes depend on semantics)."""

from __future__ import annotations

import pytest

from conftest import failing_run, make_run

pytestmark = pytest.mark.model

RUNS = [
    make_run("book-1", task="Book a one-way economy flight from JFK to SEA on May 20 for Mia Li",
             steps=[("search_direct_flight", {"origin": "JFK", "destination": "SEA"}, "HAT136 09:00 $250"),
                    ("book_reservation", {"flight": "HAT136"}, "reservation 4WQ150 confirmed")]),
    make_run("cancel-1", task="Cancel my reservation 4WQ150 because my plans changed and refund me",
             steps=[("get_reservation_details", {"id": "4WQ150"}, "economy, booked 2024-05-10"),
                    ("cancel_reservation", {"id": "4WQ150"}, "cancelled; refund to credit card")]),
    make_run("bag-1", task="Add two checked bags to my existing reservation",
             steps=[("update_reservation_baggages", {"total": 2}, "baggage updated, $50 charged")]),
    failing_run("py-1", "ModuleNotFoundError: No module named 'yaml'",
                task="Load the YAML configuration file at startup of the CLI"),
    failing_run("py-2", "ModuleNotFoundError: No module named 'yaml'",
                task="Parse settings.yaml in the deploy script"),
    failing_run("py-3", "ZeroDivisionError: division by zero", task="Compute the average latency per endpoint"),
]


@pytest.fixture
def loaded(model_ts):
    model_ts.add(RUNS)
    return model_ts


def test_task_query_finds_the_semantically_closest_run(loaded):
    hits = loaded.search("I need to cancel a booking and get my money back", tenant="acme", levels="task", k=3)
    assert hits[0].trajectory_id == "cancel-1"
    hits = loaded.search("reserve a plane ticket to Seattle", tenant="acme", levels="task", k=3)
    assert hits[0].trajectory_id == "book-1"


def test_similar_runs_of_a_broken_run_ranks_the_same_failure_first(loaded):
    matches = loaded.similar_runs("py-1", tenant="acme", k=3)
    assert matches[0].trajectory_id == "py-2"
    assert matches[0].score > matches[-1].score
    assert "py-1" not in {m.trajectory_id for m in matches}


def test_pasted_error_text_finds_failed_runs(loaded):
    matches = loaded.similar_runs(text="division by zero when computing averages", tenant="acme", k=2)
    assert matches[0].trajectory_id == "py-3"
    assert matches[0].best.level in {"step", "failure"}
