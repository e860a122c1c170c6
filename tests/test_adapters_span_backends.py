"""OTel GenAI span files as trace back-ends and exporters write them, read through the public reader.

Each test is one defect found on a real file (probe of round 40): the fixture is that file or the smallest
excerpt of it that shows the defect, under tests/fixtures/otel-genai/.real (sources in SOURCE.md there) or
.derived (a real capture with one documented change, see SOURCE.md there).
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import detect_format

from adapter_support import only

OTEL = Path(__file__).parent / "fixtures" / "otel-genai"
REAL = OTEL / ".real"
DERIVED = OTEL / ".derived"
KAGENT_TEMPO = REAL / "kagent" / "helm-agent-adk-openllmetry.tempo.json"


def test_a_pretty_otlp_file_with_spans_and_logs_keeps_its_log_records() -> None:
    """One pretty-printed OTLP object holding ``resourceSpans`` and ``resourceLogs`` (ADK 2.10 in
    ``v2_event_only`` mode, its span content attributes removed so the words are only in the
    ``gen_ai.client.inference.operation.details`` log event): only the spans were streamed, so the task became the
    root span's name "(no input recorded)" and the answer was lost, without a warning."""
    run = only(DERIVED / "adk-2.10-event-only-content-in-logs.pretty.otlp.json")
    assert run.task == "Hello, who are you?"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("respond", {"content": "I am a helpful assistant built with ADK."})]


def test_a_grafana_tempo_trace_export_is_read() -> None:
    """Tempo's trace JSON (``{"batches": [ResourceSpans...]}`` with ``instrumentationLibrarySpans``: its
    ``/api/traces/<id>`` answer, Grafana's trace-view export) of a kagent run was rejected as "not a span"."""
    assert detect_format(KAGENT_TEMPO) == "otel-genai"
    run = only(KAGENT_TEMPO)
    assert run.trajectory_id == "otel:dd547580319ab0312cee07f1def50dad"
    assert run.task == "list all helm releases" and run.model_id == "gpt-4.1-mini"
    assert run.steps[0].action == "helm_list_releases" and "kagent" in (run.steps[0].observation or "")


def test_one_reply_is_one_step_under_an_empty_generate_content_span() -> None:
    """Newer ADK nests ``call_llm`` -> ``generate_content gpt-4.1-mini`` (no content) -> OpenLLMetry's
    ``openai.chat``: the empty span between them made the two records of one request two calls, so the final
    answer was two identical ``respond`` steps."""
    steps = only(KAGENT_TEMPO).steps
    assert [s.action for s in steps] == ["helm_list_releases", "respond"]
    assert steps[-1].arguments["content"].startswith("There are two Helm releases currently deployed")


def test_adks_elided_event_content_is_no_answer() -> None:
    """ADK's GenAI events with message-content capture off (its default) hold ``{"content": "<elided>"}``: read
    as the model's words, the call that only asked for a tool gave a phantom "<elided>" answer step before it."""
    run = only(REAL / "adk-2.10-tool-raises-elided-events.otlp.jsonl")
    assert run.task == "What is the price of XYZ?"
    assert [s.action for s in run.steps] == ["get_stock_price"]
    assert run.steps[0].error == "ValueError: ticker not found: XYZ"


def test_adks_merged_parallel_tools_span_is_no_step() -> None:
    """After two parallel ``get_weather`` calls ADK writes an ``execute_tool (merged)`` summary span (tool name
    ``(merged tools)``, arguments "N/A"); it was a third tool step."""
    run = only(REAL / "adk-2.10-parallel-tools-merged.otlp.json")
    assert [s.action for s in run.steps] == ["get_weather", "get_weather"]


def test_go_stdouttrace_spans_are_read() -> None:
    """The OpenTelemetry Go SDK's ``stdouttrace`` exporter prints ``tracetest.SpanStub`` JSON (``Name``,
    ``SpanContext.TraceID``, ``Attributes: [{Key, Value: {Type, Value}}]``, RFC 3339 times): a Blades agent's
    ``invoke_agent`` span was rejected as "not a span"."""
    path = REAL / "blades-go-stdouttrace.jsonl"
    assert detect_format(path) == "otel-genai"
    run = only(path)
    assert run.trajectory_id == "otel:6c0b148c407979350ba1fb3a1a5dd557"
    assert run.model_id == "deepseek-chat"
    assert run.metadata["conversation_id"] == "5233e8c9-6513-42fe-b647-fcb8b27e7c24"
    assert run.metadata["agent_name"] == "OpenTelemetry Agent"
    assert run.created_at is not None and run.created_at.isoformat().startswith("2025-11-13T15:04:10")


def test_the_agent_span_gives_the_run_its_agent_and_conversation_under_an_http_root() -> None:
    """kagent's root is the A2A proxy's HTTP span (``POST /api/a2a/kagent/helm-agent/``): only the root's facts were
    kept, so the run had no agent name and no conversation id, though its ``invoke_agent`` spans record them."""
    metadata = only(KAGENT_TEMPO).metadata
    assert metadata["root_span"] == "POST /api/a2a/kagent/helm-agent/"
    assert metadata["agent_name"] == "helm-agent" and metadata["agent_id"] == "kagent/helm-agent"
    assert metadata["conversation_id"] == "ctx-eff35888-55ab-4eb0-b90d-7b21f711f91f"
