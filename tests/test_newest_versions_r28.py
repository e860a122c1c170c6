"""The newest releases round 28 (AUD8) found, run against local fake models: Claude Code 2.1.337 (the Claude Agent
SDK 0.3.337's CLI, newer than the claude-code package's latest; ``fixtures/claude-code/.r28/agent-sdk-0.3.337``) and
AG2 1.2.1's own OpenTelemetry spans (``fixtures/otel-genai/.r28``)."""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import harbor_output_run

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
R28 = FIXTURES / "claude-code" / ".r28" / "agent-sdk-0.3.337"
REFUSED = "refusal: the provider's safety classifier stopped this response"


def test_a_2_1_337_session_reads_its_task_calls_failing_command_and_answer() -> None:
    [result] = read_dump(R28 / "e20655e3-fa4e-4435-ba5d-7b9144d80381.jsonl", tenant="acme")
    run = result.trajectory
    assert run.task == "FIXTEST: the test in test_calc.py fails; fix it"
    assert [s.action for s in run.steps] == ["Bash", "Read", "Edit", "Bash", "respond"]
    assert run.steps[0].error == "AssertionError: add(2, 3) == -1, expected 5 (exit code 1)"
    assert [bool(s.error) for s in run.steps[1:]] == [False] * 4
    assert run.steps[0].thought == "I'll run the tests first."
    assert run.steps[-1].arguments["content"].startswith("Fixed: `add` in calc.py returned `a - b`")
    assert (run.model_id, run.outcome, run.metadata["cli_version"]) == ("claude-sonnet-4-5", Outcome.unknown, "2.1.337")
    assert run.created_at.isoformat() == "2026-12-06T22:50:57.320000+00:00"


def test_a_session_the_models_safeguards_refused_is_the_agents_failure_not_an_outage() -> None:
    """2.1.337: the model's response ended with ``stop_reason: "refusal"`` (category ``cyber``), the CLI retried once,
    was refused again and ended on its ``<synthetic>`` "API Error: Sonnet 4.5's safeguards flagged this message". That
    last error made the run an ``infra_error`` ("the provider, the network, credentials"), and the withheld fragments
    ("I'll start by") read as two clean answers. Nothing failed in the network: the provider declined what the run
    asked (its classifier may flag legitimate work, and a retry may pass), so the run is the agent's failure, each
    refused response a step error."""
    [result] = read_dump(R28 / "d34eee5f-699e-4298-8c7f-bcfc8e46bb3e.jsonl", tenant="acme")
    run = result.trajectory
    assert run.outcome is Outcome.failure
    assert run.failure.cause == "the model refused the request: its provider's safeguards stopped the response"
    assert run.failure.error.startswith("API Error: Sonnet 4.5's safeguards flagged this message.")
    assert run.failure.error.endswith("(invalid_request, refusal: cyber)")
    assert [(s.action, s.error) for s in run.steps] == [("Bash", None), ("respond", REFUSED), ("respond", REFUSED)]


def test_the_same_refused_run_read_from_its_headless_stream_has_the_same_step_errors(tmp_path: Path) -> None:
    """Review of AUD8 (1): the same run's stdout (``--output-format stream-json``), as a Harbor trial keeps it in
    ``agent/claude-code.txt``. Its records carry ``stop_reason: null``, so the refused responses read as two clean
    answers. The stream marks them as the session file does: the CLI's ``informational`` notice "Sonnet 4.5's
    safeguards stopped the response above" after the first, ``model_refusal_no_fallback`` after the second."""
    run = harbor_output_run(R28 / "refusal-stream-json-stdout.jsonl", tmp_path)
    assert [(s.action, s.error) for s in run.steps] == [("Bash", None), ("respond", REFUSED), ("respond", REFUSED)]
    assert run.metadata["cli_version"] == "2.1.337"


def test_ag2_1_x_telemetry_spans_read_as_a_run_with_its_failed_tool_call() -> None:
    """AG2 1.2.1 (a new framework, ``import ag2``): its TelemetryMiddleware's GenAI spans, a tool that raised."""
    [result] = read_dump(FIXTURES / "otel-genai" / ".r28" / "ag2-1.2.1-telemetry.otlp.jsonl", tenant="acme")
    run = result.trajectory
    assert run.task == "What is the weather in Atlantis?"
    assert [(s.action, s.error) for s in run.steps] == [
        ("get_weather", "ValueError: city not found: Atlantis"), ("respond", None)]
    assert run.steps[0].arguments == {"city": "Atlantis"}
    assert run.steps[1].arguments["content"] == "The weather could not be found for Atlantis. TERMINATE"
    assert (run.model_id, run.outcome, run.metadata["agent_name"]) == ("gpt-4o-mini", Outcome.unknown, "assistant")


def test_the_usage_policy_refusal_of_earlier_versions_is_the_agents_failure_too(tmp_path: Path) -> None:
    """The same session's last record as 1.x-2.1.3xx wrote a refusal: a ``<synthetic>`` API-error message with no
    ``stop_reason`` or ``stop_details``, only the words (as users' logs quote them)."""
    lines = (R28 / "d34eee5f-699e-4298-8c7f-bcfc8e46bb3e.jsonl").read_text().splitlines()
    last = json.loads(lines[-1])
    last["message"].pop("stop_details")
    last["message"]["stop_reason"] = "stop_sequence"
    last["message"]["content"] = [{"type": "text", "text": (
        "API Error: Claude Code is unable to respond to this request, which appears to violate our Usage Policy "
        "(https://www.anthropic.com/legal/aup). Please double press esc to edit your last message or start a new "
        "session for Claude Code to assist with a different task.")}]
    session = tmp_path / "d34eee5f-699e-4298-8c7f-bcfc8e46bb3e.jsonl"
    session.write_text("\n".join(lines[:-1] + [json.dumps(last)]) + "\n")
    [result] = read_dump(session, tenant="acme")
    assert result.trajectory.outcome is Outcome.failure
    assert result.trajectory.failure.cause.startswith("the model refused the request")


def test_a_gemini_reply_blocked_for_safety_is_the_agents_failure_not_an_outage() -> None:
    """Gemini CLI 0.61.0 headless: the API ended the reply with ``finishReason: "SAFETY"``; the CLI's "The model
    response was blocked due to safety settings." ended the run and was read as an API or CLI error, an
    ``infra_error``. As Claude Code's refusal, it is the agent's failure. The chat recording holds nothing of it."""
    gemini = FIXTURES / "gemini-cli" / ".r28"
    [result] = read_dump(gemini / "headless-stream-json-safety-blocked.jsonl", tenant="acme")
    run = result.trajectory
    assert run.outcome is Outcome.failure
    assert run.failure.error == "The model response was blocked due to safety settings."
    assert run.failure.cause.startswith("the model refused the request")
    assert [s.action for s in run.steps] == ["run_shell_command"]
    [recorded] = read_dump(gemini / "session-2026-12-06T23-05-79fdd00e.jsonl", tenant="acme")
    assert recorded.trajectory.outcome is Outcome.unknown
