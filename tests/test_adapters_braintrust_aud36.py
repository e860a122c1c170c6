"""Braintrust log records (``logger.info`` / ``warn`` / ``error`` of the Python SDK 0.48.1): rows of ``span_attributes
.type: "log"`` that reuse the ``span_id`` of the span active when they were logged. They are no version of that span:
read as one, each replaced its span's row (the root's name, scores and verdict, a tool's error), and one logged
outside any span was refused as a run without a task (tests/fixtures/braintrust/.aud36/README.md)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from trajsearch.ingest.read import PassedOverGroups, read_inputs
from trajsearch.model import Outcome

from adapter_support import only

LOG_ROWS = Path(__file__).parent / "fixtures" / "braintrust" / ".aud36" / "log-records-sdk0.48.1-rows.jsonl"


def test_log_records_leave_the_spans_they_were_logged_in_as_they_are() -> None:
    rows = [json.loads(line) for line in LOG_ROWS.read_text().splitlines()]
    logs = [r for r in rows if r["span_attributes"]["type"] == "log"]
    spans = {r["span_id"] for r in rows if r["span_attributes"]["type"] != "log"}
    assert len(logs) == 4 and sum(r["span_id"] in spans for r in logs) == 3  # one was logged outside any span
    run = only(LOG_ROWS, tenant="acme")  # the log outside any span is no run, and no rejected one
    assert run.task == "Please refund order A-1001, it arrived broken."
    assert (run.outcome, run.reward) == (Outcome.failure, 0.0)
    assert run.metadata["outcome_basis"] == "score 'resolved'"
    assert run.metadata["root_span"] == "handle_ticket"
    assert "run_metadata" not in run.metadata  # not the template of a log record
    assert [(s.action, s.error) for s in run.steps] == [
        ("lookup_order", "ConnectionError: order service unavailable (503) for A-1001"), ("respond", None)]


def _written(rows: list[dict[str, Any]], path: Path) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_a_trace_of_log_records_only_is_passed_over_as_such(tmp_path: Path) -> None:
    """Review 1: a trace holding only log records (one logged outside any span, or a file of the log rows alone) was
    dropped without a word ("runs 0; rejected 0"): it is passed over and counted as "log records only"."""
    rows = [json.loads(line) for line in LOG_ROWS.read_text().splitlines()]
    passed = PassedOverGroups()
    assert [p.ok for p in read_inputs([LOG_ROWS], tenant="acme", passed_over=passed)] == [True]
    assert passed.to_dict() == {"trace": {"log records only": 1}}  # the one logged outside any span
    logs_alone = _written([r for r in rows if r["span_attributes"]["type"] == "log"], tmp_path / "logs.jsonl")
    passed = PassedOverGroups()
    assert list(read_inputs([logs_alone], tenant="acme", passed_over=passed)) == []
    assert passed.to_dict() == {"trace": {"log records only": 2}}  # the two traces they name, neither a run


def test_a_span_typed_log_without_a_log_level_is_read_as_a_span(tmp_path: Path) -> None:
    """Review 2: the SDK gives every log record a ``log_level``; a span a user typed ``"log"`` (``SpanTypeAttribute
    .LOG`` is public) has none and is a span: its row (the root's name, its ``resolved`` score) is kept."""
    rows = [json.loads(line) for line in LOG_ROWS.read_text().splitlines()]
    for row in rows:
        if row["span_attributes"].get("name") == "handle_ticket":
            row["span_attributes"]["type"] = "log"
    run = only(_written(rows, tmp_path / "root-typed-log.jsonl"), tenant="acme")
    assert (run.outcome, run.metadata["root_span"]) == (Outcome.failure, "handle_ticket")
    assert [s.action for s in run.steps] == ["lookup_order", "respond"]


def test_a_log_record_without_its_span_ids_is_refused_by_its_place(tmp_path: Path) -> None:
    """Review 3: a log record lacking ``span_id`` / ``root_span_id`` was skipped before the identity check, so never
    named; it is refused by its place, as any row that is no span, and the spans around it are read."""
    rows = [json.loads(line) for line in LOG_ROWS.read_text().splitlines()]
    del rows[2]["root_span_id"]  # the root's ``info`` log record
    parsed = list(read_inputs([_written(rows, tmp_path / "log-no-ids.jsonl")], tenant="acme"))
    assert sorted(p.ok for p in parsed) == [False, True]
    [refused] = [p for p in parsed if not p.ok]
    assert refused.position == "line 3" and "no 'root_span_id'" in refused.error


def test_a_trace_of_log_records_only_is_said_once_by_its_grouping(caplog) -> None:
    """Review RT1, 5: the detail said "trace <key>" after read.py's "passed over conversation <key>" under
    ``--group-by conversation``: the key twice, and the wrong grouping."""
    for group_by in ("trace", "conversation"):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="trajsearch"):
            list(read_inputs([LOG_ROWS], tenant="acme", group_by=group_by))
        [said] = [r.getMessage() for r in caplog.records if "logged outside any span" in r.getMessage()]
        key = said.split()[3].rstrip(":")
        assert said == f"passed over {group_by} {key}: 1 log record(s) logged outside any span, no span", said
