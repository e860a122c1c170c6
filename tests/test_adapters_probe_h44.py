"""Round 44's probe H read through the public reader: the AI SDK's ``recordInputs: false`` (H1), Gemini CLI's failed
sub-agents (H2), pydantic validation errors as a step's error (H3).

Fixtures: ``fixtures/vercel-ai/.real/record-inputs-off`` (the released AI SDK 6), ``fixtures/gemini-cli/.real/
subagent-failed`` (a real Gemini CLI session), ``fixtures/tau2-bench/.real/pydantic-validation`` (real tau2-bench
results); see each SOURCE.md.
"""

from __future__ import annotations

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
