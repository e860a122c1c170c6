"""Braintrust log records (``logger.info`` / ``warn`` / ``error`` of the Python SDK 0.48.1): rows of ``span_attributes
.type: "log"`` that reuse the ``span_id`` of the span active when they were logged. They are no version of that span:
read as one, each replaced its span's row (the root's name, scores and verdict, a tool's error), and one logged
outside any span was refused as a run without a task (tests/fixtures/braintrust/.aud36/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

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
