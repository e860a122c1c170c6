"""OTel span exports of probe D (round 43) read through the public reader and the CLI: OpenLIT's ``create_agent``
traces, Zipkin JSON whose tags the Python exporter cut, the OTel JS SDK's ``ConsoleSpanExporter`` output.

The fixtures (``fixtures/otel-genai/.real/probeD43``, see its SOURCE.md) are files the released instrumentation
packages wrote, whole or as a subset of their spans with every span left as written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli
from trajsearch.ingest.read import read_dump

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "probeD43"
CREATE_AGENT = PROBE / "openlit-1.45-openai-agents-create-agent.console.json"


def test_openlit_create_agent_traces_are_passed_over_not_rejected(caplog: pytest.LogCaptureFixture) -> None:
    """D4 (OpenLIT 1.45 + openai-agents 0.24): OpenLIT writes a ``create_agent <name>`` span, a trace of its own,
    each time an ``Agent`` is built; each such trace was rejected ("not an agent run"), so every ingest of an agent
    app counted rejections. Building an agent is no run and nothing wrong: passed over, saying so at info level."""
    with caplog.at_level(logging.INFO):
        [run] = adapter_support.runs(CREATE_AGENT)
    assert run.trajectory_id == "otel:b68565471800a624014631e7746fcaf2" and run.outcome.value == "infra_error"
    passed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("passed over trace")]
    assert [m.split(": ", 1)[1] for m in passed] == ["it only builds an agent (create_agent WeatherAgent), no run of it",
                                                      "it only builds an agent (create_agent Triage), no run of it"]


def test_ingesting_an_openlit_agent_app_export_exits_0(home: Path) -> None:
    """D4: the same file through the CLI: no rejection, so no exit status 3 and no dead-letter record."""
    code, out, err = run_cli("ingest", str(CREATE_AGENT), "-t", "d", "--json", "--quiet")
    assert code == 0, out + err
    report = json.loads(out)
    assert (report["read"], report["ingested"], report["rejected"]) == (1, 1, 0)


def test_the_js_sdks_console_exporter_output_is_named_with_how_to_export_json(home: Path) -> None:
    """D3 (``@opentelemetry/sdk-trace-base`` 2.12 ``ConsoleSpanExporter``): Node prints each span with
    ``console.dir``, JavaScript objects, not JSON (and cuts strings past 10,000 characters). The file was refused as
    "malformed JSON", which sends the user looking for corruption in an intact file; it is now named, with the
    exporters that write JSON."""
    path = PROBE / "js-sdk-2.12-console-exporter.txt"
    code, out, err = run_cli("ingest", str(path), "-t", "d", "--dry-run")
    assert code != 0 and "malformed JSON" not in err, out + err
    assert "OpenTelemetry JS SDK's console exporter output (ConsoleSpanExporter" in " ".join(err.split()), err
    assert "@opentelemetry/exporter-trace-otlp-http" in " ".join(err.split()), err


def test_zipkin_tags_the_python_exporter_cut_are_no_task_nor_answers() -> None:
    """D2 (``opentelemetry-exporter-zipkin-json`` 1.45.1 with its defaults, openai-v2 2.4b0 spans): the Python
    exporter cuts every tag at 128 characters, so ``gen_ai.input.messages`` / ``gen_ai.output.messages`` no longer
    parse. The cut JSON was read as text: the task was a message-list fragment and both tool calls became fake
    ``respond`` steps made of JSON. A cut message list keeps only its whole messages (none of the user's here), and
    each run says what was cut and how to raise the exporter's limit."""
    cut = adapter_support.runs(PROBE / "openai-v2-2.4b0-latest-span-only.zipkin.json")
    whole = adapter_support.runs(PROBE / "openai-v2-2.4b0-latest-span-only.otlp.jsonl")
    assert [r.trajectory_id for r in cut] == [r.trajectory_id for r in whole]
    assert whole[0].task == "What's the weather and population of Oslo?"  # what the cut took away
    assert [s.action for s in whole[0].steps] == ["get_weather", "get_population", "respond"]
    for run in cut:
        assert run.task == "weather-agent (input cut by the exporter)"
        assert not any(s.action == "respond" for s in run.steps), run.steps
        assert "cut at 128 characters by the exporter" in run.metadata["tags_cut"]
        assert "max_tag_value_length" in run.metadata["tags_cut"]
    assert [r.outcome.value for r in cut] == [r.outcome.value for r in whole] == ["unknown", "unknown", "infra_error"]
    assert "tags_cut" not in whole[0].metadata


ADK_ZIPKIN = Path(__file__).parent / "fixtures" / "openinference" / ".real" / "probe43" \
    / "adk-2.13-openinference-adk-1.0.5.zipkin.json"


def test_zipkin_tags_cut_on_a_tool_span_are_kept_as_cut_text() -> None:
    """R1-1 (review of D2; ADK 2.13 under OpenInference, the same Zipkin exporter): the rule for cut message lists
    (whole messages or nothing) was applied to every cut JSON value. A tool span's ``output.value`` is what the tool
    returned, and its first 128 characters are still that: run s2's ``get_weather``, whose result no later model
    call repeats (the next tool failed), had no observation and no error, as if it had returned nothing. It is the
    cut text, marked as cut; where a later model input holds the whole result (s1), that is read over it. ADK's cut
    runner input still held the user's whole words (s3): they are the task, not a placeholder."""
    by_session = {r.metadata["conversation_id"]: r for r in adapter_support.runs(ADK_ZIPKIN)}
    weather = by_session["s2"].steps[0]
    assert weather.action == "get_weather" and weather.error is None
    assert weather.observation.startswith('{"id":"adk-8922f0be-d5e5-4836-b673-a76a4c651dcf","name":"get_weather",')
    assert weather.observation.endswith('"report":"Rainy, 8 C in Osl… [cut at 128 characters by the exporter]')
    assert [s.observation for s in by_session["s1"].steps[:2]] == [
        '{"status": "success", "report": "Rainy, 8 C in Oslo"}',
        '{"status": "error", "error_message": "No census data for Oslo"}']
    assert by_session["s3"].task == "BREAKNOW weather in Oslo"
    assert by_session["s3"].outcome.value == "infra_error"
    assert all("cut at 128 characters by the exporter" in r.metadata["tags_cut"] for r in by_session.values())
