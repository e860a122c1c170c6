"""Round 44's probe H read through the public reader: the AI SDK's ``recordInputs: false`` (H1), Gemini CLI's failed
sub-agents (H2), pydantic validation errors as a step's error (H3).

Fixtures: ``fixtures/vercel-ai/.real/record-inputs-off`` (the released AI SDK 6), ``fixtures/openinference/.real/
hide-inputs`` (a real OpenInference instrumentor), ``fixtures/gemini-cli/.real/
subagent-failed`` (a real Gemini CLI session), ``fixtures/tau2-bench/.real/pydantic-validation`` (real tau2-bench
results); see each SOURCE.md.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pydantic
import pydantic.v1
import pytest

from trajsearch.ingest.adapters._common import decisive_line
from trajsearch.ingest.read import read_dump


FIXTURES = Path(__file__).parent / "fixtures"
PRIVATE = FIXTURES / "vercel-ai" / ".real" / "record-inputs-off" / "ai6.0.333-private-both.otlp.json"


# -- H1: recordInputs: false ------------------------------------------------------------------------------------


def test_ai_sdk_run_with_record_inputs_off_is_kept_with_its_tools_and_error() -> None:
    """Bug (probe H, H1): with ``experimental_telemetry.recordInputs: false`` (the AI SDK's documented privacy
    switch) the whole run was rejected "no task", though the SDK recorded every span: the call, its model calls and
    its tool calls, the failed one with its error. The run is kept; its task names the call and says no input was
    recorded, as for OTel GenAI's content capture off."""
    [parsed] = list(read_dump(PRIVATE, tenant="acme"))
    assert parsed.error is None
    run = parsed.trajectory
    assert run.task == "ai.generateText private-both (no input recorded)"
    assert run.metadata["task_source"] == "span name"
    assert run.metadata["function_id"] == "private-both"
    assert [(s.action, s.error) for s in run.steps] == [
        ("searchDocs", None), ("readDoc", "Error: 403 Forbidden: document hr-7 is restricted")]
    assert run.model_id == "mock-gpt"


HIDDEN = FIXTURES / "openinference" / ".real" / "hide-inputs" / "oai-agents-0.24-hide-inputs.otlp.json"


def test_openinference_run_with_inputs_hidden_is_kept_with_the_models_arguments() -> None:
    """H1, OpenInference's switch: with ``OPENINFERENCE_HIDE_INPUTS=true`` every ``input.value`` is written
    ``__REDACTED__`` and the input messages are left out; the run was rejected "no task". It is kept, its task
    naming the root span; a tool's arguments are the ones the model asked for, neither the ``__REDACTED__`` mark
    nor the tool's parameter schema (``tool.parameters``, read where a tool records no input)."""
    [parsed] = list(read_dump(HIDDEN, tenant="acme"))
    assert parsed.error is None
    run = parsed.trajectory
    assert run.task == "Agent workflow (no input recorded)"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("lookup_price", {"sku": "B-7"}), ("respond", {"content": '{"sku": "B-7", "price_eur": 19.9, "in_stock": false}'})]
    assert run.steps[0].error.startswith("Error running tool (non-fatal)")
    assert "__REDACTED__" not in run.model_dump_json()


# -- H2: a Gemini CLI sub-agent that failed -------------------------------------------------------------------------

SUBAGENT = FIXTURES / "gemini-cli" / ".real" / "subagent-failed" / "session-2026-04-01T11-11-5cdd2021.json"


def test_gemini_cli_subagent_that_failed_is_a_step_error() -> None:
    """Bug (probe H, H2): a sub-agent that threw is recorded ``"status": "success"`` on purpose (gemini-cli's
    ``local-invocation.ts`` leaves out the call's ``error`` so the UI shows its progress display), its failure only in
    the answer "Subagent 'generalist' failed. Error: ..." and the display's ``state: "error"``: the step was read as
    a success. Its error is the sub-agent's own."""
    [parsed] = list(read_dump(SUBAGENT, tenant="acme"))
    steps = parsed.trajectory.steps
    assert [s.action for s in steps] == ["write_file", "write_file", "generalist", "cli_help"]
    assert steps[2].error == "You have exhausted your daily quota on this model."
    assert steps[2].observation == "Subagent 'generalist' failed. Error: You have exhausted your daily quota on this model."
    assert steps[3].error is None  # the sub-agent that answered


def _with_generalist_output(tmp_path: Path, output: str, display: object) -> Path:
    """The session with the ``generalist`` call's answer and display replaced (the real file's other bytes kept)."""
    session = json.loads(SUBAGENT.read_text(encoding="utf-8"))
    [call] = [c for m in session["messages"] for c in m.get("toolCalls", []) if c["name"] == "generalist"]
    call["result"][0]["functionResponse"]["response"]["output"] = output
    call["resultDisplay"] = display
    path = tmp_path / SUBAGENT.name
    path.write_text(json.dumps(session, indent=2), encoding="utf-8")
    return path


def test_gemini_cli_subagent_that_ended_short_of_its_goal_is_a_step_error(tmp_path: Path) -> None:
    """H2: a sub-agent that stopped at its turn limit answers "Subagent '...' finished.\\nTermination Reason:
    MAX_TURNS" (the text of real recordings); its display, ``state: "completed"`` with that ``terminateReason``.
    It did not do what it was asked: the reason and its result are the step's error. ``GOAL`` is no error."""
    text = "Subagent 'generalist' finished.\nTermination Reason: MAX_TURNS\nResult:\nAgent reached max turns limit (20)."
    display = {"isSubagentProgress": True, "agentName": "generalist", "recentActivity": [], "state": "completed",
               "result": "Agent reached max turns limit (20).", "terminateReason": "MAX_TURNS"}
    [parsed] = list(read_dump(_with_generalist_output(tmp_path, text, display), tenant="acme"))
    assert parsed.trajectory.steps[2].error == "MAX_TURNS: Agent reached max turns limit (20)."
    done = text.replace("MAX_TURNS", "GOAL").replace("Agent reached max turns limit (20).", "Created both files.")
    [parsed] = list(read_dump(_with_generalist_output(tmp_path, done, {**display, "terminateReason": "GOAL"}),
                              tenant="acme"))
    assert parsed.trajectory.steps[2].error is None


# -- H3: a pydantic ValidationError as a step's error ----------------------------------------------------------------

TAU2 = FIXTURES / "tau2-bench" / ".real" / "pydantic-validation" / "airline_gemini2_5_flash_task8_trial0.json"


def test_tau2_tool_call_failing_validation_says_which_field_and_why() -> None:
    """Bug (probe H, H3): a tool call tau2's environment refused with a pydantic ValidationError had the error
    "Error: 1 validation error for Payment", its header only: every malformed call of any tool read the same. The
    error names the first invalid field and what was wrong with it."""
    [parsed] = list(read_dump(TAU2, tenant="acme"))
    failed = [(n, s.action, s.error) for n, s in enumerate(parsed.trajectory.steps) if s.error]
    assert failed == [(11, "book_reservation", "Error: 1 validation error for Payment: payment_id: Field required")]


class Item(pydantic.BaseModel):
    name: str


class Payment(pydantic.BaseModel):
    payment_id: str
    amount: int
    items: list[Item] = []

    @pydantic.model_validator(mode="after")
    def within_limit(self) -> "Payment":
        if self.amount > 1000:
            raise ValueError("too much")
        return self


class PaymentV1(pydantic.v1.BaseModel):
    payment_id: str
    amount: int


def said(model: type, **data: object) -> str:
    """``str()`` of the ValidationError ``model(**data)`` raises: what a tool answers with ``f"Error: {e}"``."""
    with pytest.raises((pydantic.ValidationError, pydantic.v1.ValidationError)) as raised:
        model(**data)
    return str(raised.value)


@pytest.mark.parametrize(("data", "error"), [
    ((Payment, {"payment_id": "x", "amount": "abc", "items": [{}]}),  # the first of several
     "Error: 2 validation errors for Payment: amount: Input should be a valid integer, unable to parse string as an "
     "integer"),
    ((Payment, {"payment_id": "x", "amount": 5000}), "Error: 1 validation error for Payment: Value error, too much"),
    ((PaymentV1, {"id": "c", "amount": "x"}), "Error: 2 validation errors for PaymentV1: payment_id: field required"),
])
def test_tau2_validation_errors_of_every_kind_name_their_first_error(tmp_path: Path, data: tuple, error: str) -> None:
    """H3, for the kind: pydantic v2 and v1 as they print them, several errors (the first one), a model's own check
    (which names no field)."""
    session = json.loads(TAU2.read_text(encoding="utf-8"))
    [answer] = [m for m in session["simulations"][0]["messages"] if str(m.get("content")).startswith("Error: 1 valid")]
    answer["content"] = f"Error: {said(data[0], **data[1])}"
    path = tmp_path / TAU2.name
    path.write_text(json.dumps(session), encoding="utf-8")
    [parsed] = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory.steps[11].error == error


def test_a_failed_command_printing_a_validation_error_says_which_field_and_why() -> None:
    """H3, in any command's output (the decisive line of a Claude Code Bash result, say): a traceback ending in a
    ValidationError, and the error printed alone, which names no exception (its last line was taken)."""
    try:
        Payment(id="c", amount=348)
    except pydantic.ValidationError as exc:
        printed = "".join(traceback.format_exception(exc))
    assert decisive_line(printed) == ("pydantic_core._pydantic_core.ValidationError: 1 validation error for Payment: "
                                      "payment_id: Field required")
    assert decisive_line(said(PaymentV1, amount="x")) == "2 validation errors for PaymentV1: payment_id: field required"
