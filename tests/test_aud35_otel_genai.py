"""Round 35 audit of the OTel GenAI span adapter (AUDOT35) on spans the official ``genai-*`` instrumentations wrote:
``opentelemetry-instrumentation-genai-openai-agents`` 1.3b0 and ``-genai-openai`` 1.3b0 (util-genai 1.3b0) around
openai-agents 0.25.0, and ``-genai-langchain`` 1.3b0 around LangChain 1.5 (fixtures: ``fixtures/otel-genai/.aud35``,
see its README)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from adapter_support import only

AUD35 = Path(__file__).parent / "fixtures" / "otel-genai" / ".aud35"
MASTRA = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "mastra1.71_agent.traces.jsonl"


def _with_failed_span(source: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``source`` (OTLP/JSON, a request a line) written to ``target`` with ``change`` applied to each span that has
    an ``error.type``."""
    requests = [json.loads(line) for line in source.read_text().splitlines() if line.strip()]
    for request in requests:
        for span in (s for r in request["resourceSpans"] for scope in r["scopeSpans"] for s in scope["spans"]):
            if any(a["key"] == "error.type" for a in span.get("attributes", [])):
                change(span)
    target.write_text("".join(json.dumps(r) + "\n" for r in requests))
    return target


def test_a_failed_span_typed_only_by_the_conventions_fallback_keeps_its_words_without_the_fallback() -> None:
    """Bug: util-genai sets ``error.type: _OTHER`` (the conventions' "no type to give") on every failed agent span
    of the Agents SDK's official instrumentation, the words in the status message. The type was read as if it named
    the error: the run's failure and its error step said "_OTHER: Max turns exceeded: ...". It is no type: the
    words alone."""
    run = only(AUD35 / "oai-agents-0.25-genai-1.3b0-max-turns.otlp.jsonl")
    assert run.task == "Was INV-1042 paid?"
    assert run.outcome.value == "failure"
    assert [(s.action, s.arguments) for s in run.steps[:2]] == [
        ("lookup_invoice", {"invoice": "INV-1"}), ("lookup_invoice", {"invoice": "INV-2"})]
    assert run.steps[-1].error == 'Max turns exceeded: {"max_turns": 2}'
    assert run.failure is not None and run.failure.error == 'Max turns exceeded: {"max_turns": 2}'


def test_a_tool_that_raised_under_the_official_agents_instrumentation_is_read_with_its_words_and_the_handoff() -> None:
    """The same fallback type on a tool span (the SDK's non-fatal tool error, its words redacted by the SDK): the
    step's error is the SDK's words, the tool's reply to the model its observation; the handoff and the sub-agent's
    calls stay one run of the workflow, answered by billing."""
    run = only(AUD35 / "oai-agents-0.25-genai-1.3b0-handoff-tool-raises.otlp.jsonl")
    assert run.task == "Were invoices INV-404 and INV-1042 paid?"
    assert [s.action for s in run.steps] == ["transfer_to_billing", "lookup_invoice", "lookup_invoice", "respond"]
    failed = run.steps[1]
    assert failed.observation == "An error occurred while running the tool."
    assert failed.error == ("Error running tool (non-fatal): Tool execution failed. Error details are redacted.")
    assert run.steps[2].observation == "INV-1042: paid 2026-03-03, 120.00 EUR" and run.steps[2].error is None


def test_a_genai_retrieval_span_keeps_its_query_and_the_documents_it_found() -> None:
    """Bug: a ``retrieval`` span of the GenAI conventions records its query as ``gen_ai.retrieval.query.text`` and
    what it found as ``gen_ai.retrieval.documents`` (ids and scores); only OpenInference's ``input.value`` and
    ``retrieval.documents.N.*`` were read, so the step of LangChain's retriever under
    ``opentelemetry-instrumentation-genai-langchain`` 1.3b0 had neither query nor result."""
    run = only(AUD35 / "langchain-1.5-genai-1.3b0-agent-tool-retriever.otlp.jsonl")
    assert run.task == "How long do refunds take?"
    assert [s.action for s in run.steps] == ["search_handbook", "retrieval", "respond"]
    retrieval = run.steps[1]
    assert retrieval.arguments == "refunds paid"
    assert retrieval.observation == '[{"id": "hb-12", "score": null}, {"id": "hb-13", "score": null}]'


def test_an_error_type_that_names_no_type_gives_the_words_alone_wherever_they_are_said(tmp_path: Path) -> None:
    """Bug (review of AUDOT35): ``_OTHER`` and Mastra's ``unknown`` both name no type, but each was known to one
    reading only: Mastra's failed tool span without its ``exception`` event (the words in the status message too)
    said "unknown: population database ...", and a failed ``_OTHER`` span whose words are in ``error.message``
    (Mastra's place for them) said "_OTHER", the words lost. Real spans, the event or the status message dropped."""
    def without_exception_event(span: dict[str, Any]) -> None:
        span["events"] = [e for e in span["events"] if e["name"] != "exception"]

    def words_in_error_message(span: dict[str, Any]) -> None:
        del span["status"]["message"]
        span["attributes"].append({"key": "error.message", "value": {"stringValue": "Max turns exceeded"}})

    mastra = only(_with_failed_span(MASTRA, tmp_path / "mastra.jsonl", without_exception_event))
    [failed] = [s for s in mastra.steps if s.error]
    assert (failed.action, failed.error) == ("get_population", "population database unavailable for Paris")
    agents = only(_with_failed_span(AUD35 / "oai-agents-0.25-genai-1.3b0-max-turns.otlp.jsonl",
                                    tmp_path / "maxturns.otlp.jsonl", words_in_error_message))
    assert agents.steps[-1].error == "Max turns exceeded"
