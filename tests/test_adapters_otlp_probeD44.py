"""OTel span exports of probe D (round 44) read through the public reader: values the SDK cut at
``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT`` in OTLP files, Jaeger 2's query API output, LangGraph handoff tools
returning a ``Command``, the Collector's debug exporter output.

The fixtures (``fixtures/otel-genai/.real/probeD44``, see its SOURCE.md) are files the released packages wrote,
whole or as a subset of their spans with every span left as written (the Jaeger file in Jaeger's envelope).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import adapter_support
from trajsearch.ingest.detect import detect_format

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "probeD44"
CUT = "… [cut at 1024 characters by the SDK]"


def test_a_tool_result_the_sdk_cut_is_kept_as_cut_text_not_another_calls_result() -> None:
    """A1 (Strands 1.62, limit 1024, latest conventions): the ``read_log`` result was the content-block JSON cut
    and escaped, read as if whole, and the run said nothing. It is the cut text, marked as cut, and not the next
    call's result that a history missing the cut message pairs with it by position; the run says what was cut."""
    [run] = adapter_support.runs(PROBE / "strands-1.62-latest-attr-limit-1024.otlp.json")
    assert run.task == "Why are payments failing? Check /var/log/app/errors.log"
    read_log, count = run.steps[:2]
    assert read_log.action == "read_log" and read_log.observation.endswith(CUT)
    assert read_log.observation.startswith('[{"text": "2026-12-04T12:00:00 ERROR payments Timeout')
    assert count.action == "count_errors" and count.observation == "120"
    assert "cut at 1024 characters by the SDK" in run.metadata["tags_cut"]
    assert "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT" in run.metadata["tags_cut"]


def test_a_tool_result_cut_in_a_span_event_is_kept_as_cut_text() -> None:
    """A1 (Strands' default conventions: the result in the tool span's ``gen_ai.choice`` event): kept, cut."""
    [run] = adapter_support.runs(PROBE / "strands-1.62-default-attr-limit-1024.otlp.json")
    assert run.steps[0].action == "read_log" and run.steps[0].observation.endswith(CUT)
    assert run.steps[1].observation == "120"


def test_tool_arguments_the_sdk_cut_are_cut_text_and_no_message_list_is_a_thought() -> None:
    """A1 (a ``write_file`` call with 3.7 kB of code): the thought was the whole cut output-message list; the
    arguments are the cut call, marked as cut, and no JSON fragment is read as words."""
    [run] = adapter_support.runs(PROBE / "strands-1.62-latest-limit-1024-big-args.otlp.json")
    write = run.steps[0]
    assert write.action == "write_file" and write.observation == "wrote 3700 bytes to src/handlers.py"
    assert isinstance(write.arguments, str) and write.arguments.endswith(CUT)
    assert not (write.thought or "").startswith("[{")
    assert run.task == "Create src/handlers.py with 60 event handlers."


def test_openai_v2_says_its_message_list_was_cut() -> None:
    """A1 (openai-v2 2.4b0: the tool result only in the next call's cut ``gen_ai.input.messages``): the result is
    lost with the cut, and the run now says so."""
    [run] = adapter_support.runs(PROBE / "openai-v2-2.4b0-limit-1024-big-tool-result.otlp.json")
    assert run.steps[0].action == "check_shard"
    assert run.metadata["tags_cut"].startswith("gen_ai.input.messages cut at 1024 characters by the SDK")


def test_a_tool_result_of_json_lines_is_not_taken_as_cut_by_the_sdk() -> None:
    """Review 2, D2: a span's longest value starting ``{"`` that did not parse was taken as cut by the SDK, so a tool
    returning three NDJSON lines (no limit set) got "cut at 228 characters by the SDK" and advice to unset a limit
    never set. JSON lines fail before their end: they are read as the tool's whole output."""
    path = PROBE.parent / "probeADK" / "adk-2.13-ndjson-tool-result.derived.otlp.json"
    run = adapter_support.only(path)
    [weather] = [s for s in run.steps if s.action == "get_weather"]
    assert weather.observation.count("\n") == 2 and weather.observation.endswith('"source": "tagesanzeiger.ch"}')
    assert "tags_cut" not in run.metadata


def test_values_trimmed_and_marked_by_hand_are_not_taken_as_cut_by_the_sdk() -> None:
    """Review 2, D2: an export whose long values were cut at 1,500 characters and marked " …[cut by trajsearch]"
    (SOURCE.md) was said cut by the SDK at 1521 characters, and each tool result got a second cut mark. The SDK
    keeps ``value[:limit]`` and adds nothing, so a value saying it was cut was cut by whoever said so."""
    path = PROBE.parent.parent.parent / "openinference" / ".real" / "agentprism_quo_tav_agent.trimmed.json"
    runs = adapter_support.runs(path)
    assert runs and not any("tags_cut" in run.metadata for run in runs)
    results = [s.observation for run in runs for s in run.steps if (s.observation or "").endswith("[cut by trajsearch]")]
    assert results and not any("by the SDK" in text for text in results)


def test_jaeger_2_query_api_chunks_are_read_as_the_otlp_they_hold() -> None:
    """A2: ``/api/v3/traces`` streams ``{"result": TracesData}``; it was rejected as lacking 'resourceSpans'."""
    path = PROBE / "jaeger-v3-wrapped-pydai.stream.json"
    [run] = adapter_support.runs(path)
    assert detect_format(path) == "otel-genai"
    assert run.task == "What is the weather in London and Berlin?" and run.steps


def test_a_handoff_tools_command_gives_its_tool_message_as_the_result() -> None:
    """B1 (langgraph-supervisor 0.0.31, OpenInference LangChain 0.1.80): ``transfer_to_researcher`` returns a
    ``Command`` whose update holds the whole message history; its result was that Command's JSON."""
    [run] = adapter_support.runs(PROBE / "langgraph-supervisor-0.0.31-oi-lc-0.1.80-handoff.otlp.json")
    step = next(s for s in run.steps if s.action == "transfer_to_researcher")
    assert step.observation == "Successfully transferred to researcher" and step.error is None


def test_the_collectors_debug_exporter_output_is_named_with_how_to_export_json() -> None:
    """C1: the Collector's ``debug`` exporter text was "unrecognised dump format"."""
    with pytest.raises(ValueError, match="OpenTelemetry Collector's debug exporter output") as caught:
        detect_format(PROBE / "otelcol-0.147-debug-exporter-detailed.excerpt.log")
    assert "file exporter" in str(caught.value)
