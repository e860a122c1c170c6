"""OTel span exports of probe D (round 46) read through the public reader and the CLI: pydantic-ai 2.78's output
retries and deferred (approval) tools, natively and through OpenInference's processor, and the trace Haystack 2.x
writes at import.

The fixtures (``fixtures/otel-genai/.real/probeD46`` and ``fixtures/openinference/.real/probeD46``, see their
SOURCE.md) are files the released packages wrote, whole or as a subset of their spans with every span left as
written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
OTEL = FIXTURES / "otel-genai" / ".real" / "probeD46"
OI = FIXTURES / "openinference" / ".real" / "probeD46"
HAYSTACK = OTEL / "haystack-2.31-oll-0.62.4-agent-de.otlp.json"


@pytest.mark.parametrize("path", [OTEL / "pa-2.78-outval-de.otlp.json",
                                  OI / "pa-2.78-oi-pa-0.1.30-outval-de.otlp.json"])
def test_an_output_validators_retry_feedback_is_the_rejected_answers_error_not_the_task(path: Path) -> None:
    """A4: pydantic-ai sends an output validator's ``ModelRetry`` to the model as a user message ("Your previous
    response failed the application's validation ..." and a ``<pyai:retry_feedback>`` fence). It became the run's
    task, and the answer it rejected a plain answer. The task is the user's question; the rejected answer carries the
    feedback as its error; the accepted one none."""
    run = adapter_support.only(path)
    assert run.task == "Was kostet ein Nachtzug von Hamburg nach Wien?"
    assert [(s.action, s.arguments["content"], s.error) for s in run.steps] == [
        ("respond", "Etwa 90 Euro.", "rejected by the application: Bitte den Betrag in EUR angeben."),
        ("respond", "Etwa 89,90 EUR im Liegewagen.", None)]


def test_a_final_result_call_answered_by_validation_errors_failed() -> None:
    """A4: an output tool call (``final_result``) whose arguments fail the output type is answered with pydantic's
    ``ValidationError`` list, the model asked again: that call failed. It was stored as a success with the list as
    its result."""
    run = adapter_support.only(OTEL / "pa-2.78-structured-de.otlp.json")
    first, second = run.steps
    assert first.action == second.action == "final_result"
    assert first.error is not None and "Input should be greater than 0" in first.error
    assert second.error is None and second.observation == "Final result processed."


def test_a_call_awaiting_approval_is_marked_not_run_and_the_run_stopped_for_it() -> None:
    """A6: a tool declared ``requires_approval=True`` is not run; the run ends with ``DeferredToolRequests`` (the
    agent span's ``final_result``: ``approvals``). The call looked like one that ran and returned nothing. It is
    marked not run, awaiting approval, and the run's outcome basis says it stopped for that approval; the tool that
    ran keeps its result."""
    run = adapter_support.only(OTEL / "pa-2.78-approval-de.otlp.json")
    lookup, refund = run.steps
    assert (lookup.action, lookup.observation, lookup.error) == ("lookup_order", "A-1042: 129.90 EUR, bezahlt", None)
    assert refund.action == "refund_order" and refund.arguments == {"order_id": "A-1042", "amount": 129.9}
    assert refund.observation is None and refund.error is not None and "awaiting the user's approval" in refund.error
    assert run.metadata["outcome_basis"] == "stopped awaiting approval of refund_order"


def test_haystacks_import_time_tracing_probe_is_passed_over(home: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A5: ``import haystack`` (2.x) starts a ``haystack.tracing.auto_enable`` span, a trace of its own, to test
    whether tracing records; every traced Haystack process writes one. Each was rejected ("not an agent run"), the
    ingest exiting 3 with a dead letter. It is no run and nothing wrong: passed over at info level, as a trace that
    only builds an agent is; the agent's run beside them is read."""
    with caplog.at_level(logging.INFO):
        [run] = adapter_support.runs(HAYSTACK)
    assert run.task == "Wetter und Einwohnerzahl von Hamburg?"
    passed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("passed over trace")]
    assert len(passed) == 2 and all("haystack.tracing.auto_enable" in m for m in passed)
    code, out, err = run_cli("ingest", str(HAYSTACK), "-t", "d", "--json", "--quiet")
    assert code == 0, out + err
    report = json.loads(out)
    assert (report["read"], report["ingested"], report["rejected"]) == (1, 1, 0)
    assert report["passed_over"] == {"trace": {"only tests tracing": 2}}


def test_only_pydantic_ais_own_retry_prompt_is_read_as_feedback() -> None:
    """Review 4 (D3): any user message ending in "Fix the errors and try again." was taken for pydantic-ai's feedback
    (an OpenAI Agents JS trace's follow-up question became an error). ``RetryPromptPart.model_response()`` opens its
    text "Validation feedback:" or "N validation error(s):" (pydantic_ai/messages.py, 2.68-2.78)."""
    from trajsearch.ingest.adapters._spans import retry_feedback

    assert retry_feedback("Validation feedback:\nBitte den Betrag in EUR angeben.\n\nFix the errors and try again.") \
        == "Bitte den Betrag in EUR angeben."
    assert retry_feedback('2 validation errors:\n```json\n[]\n```\n\nFix the errors and try again.')
    assert retry_feedback("And what about Berlin's weather?\n\nFix the errors and try again.") is None
