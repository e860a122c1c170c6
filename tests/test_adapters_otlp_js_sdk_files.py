"""Files the OpenTelemetry JS SDK's objects are written to by ``JSON.stringify`` (probe C of round p43, C1).

Gemini CLI's ``telemetry.outfile`` (``packages/core/src/telemetry/file-exporters.ts``) writes each ``ReadableSpan``,
``LogRecord`` (``hrTime``, ``_body``, ``spanContext``) and metrics export (``{resource, scopeMetrics}``) as
pretty JSON. The fixture (``fixtures/otel-genai/.real/gemini-cli-telemetry``, see its SOURCE.md) is an unmodified
excerpt of the file Gemini CLI 0.61.0 wrote.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

TELEMETRY = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "gemini-cli-telemetry" / "telemetry.log"


def test_js_sdk_log_records_and_metrics_are_no_not_a_span_rejections() -> None:
    """Bug: read as spans (``--format otel-genai``), every JS ``LogRecord`` (``hrTime`` / ``_body``, no
    ``timestamp``) and the metrics export were rejected "not a span"; the log records are read as log records now
    (Gemini CLI's own events name no GenAI event and are passed over), the metrics passed over. What is left is
    the tool-call trace, which holds no run."""
    errors = [p.error for p in read_dump(TELEMETRY, fmt="otel-genai", tenant="acme") if p.error]
    assert errors == ["not an agent run: the trace holds only schedule_tool_calls, tool_call spans and no input"]
