"""Files the OpenTelemetry JS SDK's objects are written to by ``JSON.stringify`` (probe C of round p43, C1).

Gemini CLI's ``telemetry.outfile`` (``packages/core/src/telemetry/file-exporters.ts``) writes each ``ReadableSpan``,
``LogRecord`` (``hrTime``, ``_body``, ``spanContext``) and metrics export (``{resource, scopeMetrics}``) as
pretty JSON. The fixture (``fixtures/otel-genai/.real/gemini-cli-telemetry``, see its SOURCE.md) is an unmodified
excerpt of the file Gemini CLI 0.61.0 wrote.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

TELEMETRY = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "gemini-cli-telemetry" / "telemetry.log"


def test_gemini_cli_telemetry_file_says_what_it_is_and_where_the_run_is() -> None:
    """Bug: detected as ``otel-genai``, the file gave no run and a "not a span" rejection per log record and
    metrics export (26 for one session), the prompt, calls and answer lost. Its traces do not follow the session
    (each model call and each batch of tool calls starts its own); the chat recording beside it holds the run."""
    with pytest.raises(SideFile, match=r"no run in this file: Gemini CLI's telemetry file of session "
                                       r"1a17e89c-9830-4736-a50d-121c73fe6da0 .*chats/session-\*\.json\[l\]"):
        detect_format(TELEMETRY)
    assert list(read_dump(TELEMETRY.parent, tenant="acme")) == []  # in a folder walk: passed over, no rejection


def _as_another_service(tmp_path: Path) -> Path:
    """The telemetry file's records, as JSON lines, with the resource's ``service.name`` another app's: the JS SDK's
    shapes as a file exporter of any other service writes them."""
    text, records, decoder, at = TELEMETRY.read_text(encoding="utf-8"), [], json.JSONDecoder(), 0
    while (at := len(text) - len(text[at:].lstrip())) < len(text):
        record, at = decoder.raw_decode(text, at)
        for pair in record.get("resource", {}).get("_rawAttributes", []):
            if pair[0] == "service.name":
                pair[1] = "my-js-agent"
        records.append(record)
    path = tmp_path / "telemetry.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_js_sdk_log_records_and_metrics_are_no_not_a_span_rejections(tmp_path: Path) -> None:
    """Bug: read as spans (``--format otel-genai``), every JS ``LogRecord`` (``hrTime`` / ``_body``, no
    ``timestamp``) and the metrics export were rejected "not a span"; the log records are read as log records now
    (Gemini CLI's own events name no GenAI event and are passed over), the metrics passed over. What is left is
    the tool-call trace, which holds no run. Gemini CLI's own file, forced, is still told what it is."""
    with pytest.raises(SideFile, match=r"no run in this file: Gemini CLI's telemetry file"):
        list(read_dump(TELEMETRY, fmt="otel-genai", tenant="acme"))
    errors = [p.error for p in read_dump(_as_another_service(tmp_path), fmt="otel-genai", tenant="acme") if p.error]
    assert errors == ["not an agent run: the trace holds only schedule_tool_calls, tool_call spans and no input"]
