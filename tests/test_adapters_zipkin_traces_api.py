"""Zipkin's search endpoint ``/api/v2/traces`` (the usual way to dump many traces) returns a JSON array of traces,
each an array of v2 spans (review 2, F5). The spans are probe D's real Zipkin fixtures
(``fixtures/otel-genai/.real/probe42``, see its README.md), put in that array as the endpoint returns them."""

from __future__ import annotations

import json
from pathlib import Path

import adapter_support

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "probe42"
TRACES = [PROBE / "pydantic-ai-2.68-v5-parallel-tools.zipkin.json",
          PROBE / "pydantic-ai-2.68-v5-tool-raises.zipkin.json"]


def test_zipkins_list_of_traces_reads_each_trace_as_its_own_file_does(tmp_path: Path) -> None:
    """Each trace of the list was rejected ("expected a JSON object holding spans, got list"); now each is read as
    its ``/api/v2/trace/<id>`` array alone is."""
    listed = tmp_path / "traces.json"
    listed.write_text(json.dumps([json.loads(trace.read_text()) for trace in TRACES]))
    runs = {run.trajectory_id: run for run in adapter_support.runs(listed)}
    alone = [adapter_support.only(trace) for trace in TRACES]
    assert sorted(runs) == sorted(run.trajectory_id for run in alone)
    for run in alone:
        assert runs[run.trajectory_id].model_dump(exclude={"ingested_at"}) == run.model_dump(exclude={"ingested_at"})
