"""One field table: the schema, the hit, the filters and the wire agree on the row's fields."""

from __future__ import annotations

from dataclasses import fields

from trajsearch.results import Hit
from trajsearch.service.protos import pb2
from trajsearch.store.fields import COLUMNS, FILTER_FIELDS, ONE_OF_FIELDS, OUTPUT_FIELDS
from trajsearch.store.filters import Filters


def test_a_hit_is_the_output_fields_plus_its_scores() -> None:
    hit = {f.name for f in fields(Hit)}
    # outcome_shown: the server's word for the run's outcome (from its summary row), carried so the remote CLI
    # reads no trace for it; closest: the search's nearest row's cosine (the weak-match note's); no column of the row
    assert hit - set(OUTPUT_FIELDS) == {"score", "similarity", "verbatim", "outcome_shown", "closest"}
    assert set(OUTPUT_FIELDS) - hit == {"content_hash"}  # bookkeeping of the writer, not shown


def test_the_wire_carries_every_hit_field_but_the_step_payload() -> None:
    assert {f.name for f in fields(Hit)} - set(pb2.Hit.DESCRIPTOR.fields_by_name) == {"steps"}


def test_every_filter_field_is_a_column_and_every_one_of_is_a_filters_attribute() -> None:
    names = {c.name for c in COLUMNS}
    assert set(FILTER_FIELDS) <= names
    blank = Filters(tenant="acme")
    assert all(hasattr(blank, attr) for _, attr in ONE_OF_FIELDS)
