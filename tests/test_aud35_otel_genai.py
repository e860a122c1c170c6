"""Round 35 audit of the OTel GenAI span adapter (AUDOT35) on spans the official ``genai-*`` instrumentations wrote:
``opentelemetry-instrumentation-genai-openai-agents`` 1.3b0 and ``-genai-openai`` 1.3b0 (util-genai 1.3b0) around
openai-agents 0.25.0 (fixtures: ``fixtures/otel-genai/.aud35``, see its README)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import only

AUD35 = Path(__file__).parent / "fixtures" / "otel-genai" / ".aud35"


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
