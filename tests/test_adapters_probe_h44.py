"""Round 44's probe H read through the public reader: the AI SDK's ``recordInputs: false`` (H1), Gemini CLI's failed
sub-agents (H2), pydantic validation errors as a step's error (H3).

Fixtures: ``fixtures/vercel-ai/.real/record-inputs-off`` (the released AI SDK 6), ``fixtures/gemini-cli/.real/
subagent-failed`` (a real Gemini CLI session), ``fixtures/tau2-bench/.real/pydantic-validation`` (real tau2-bench
results); see each SOURCE.md.
"""

from __future__ import annotations

import json
from pathlib import Path

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
