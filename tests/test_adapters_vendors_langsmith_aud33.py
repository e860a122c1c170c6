"""LangSmith runs langsmith-js's ``LangSmithTelemetry`` posts for AI SDK 7 (audit AUDLS33, round 33; the files,
their scripts and the SDK versions in ``fixtures/langsmith/.aud33/README.md``).

Everything goes through the public reader (``detect_format`` / ``read_dump`` via ``adapter_support.only``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajsearch.ingest.read import detect_format
from trajsearch.model import Outcome

from adapter_support import only

AUD = Path(__file__).parent / "fixtures" / "langsmith" / ".aud33"
STREAM_503 = AUD / "lsjs0.12.0-LangSmithTelemetry-ai7-stream-503-exhausted.batch.jsonl"
WRAP_STREAM_503 = AUD / "lsjs0.12.0-wrapAISDK-ai7-stream-503-exhausted.batch.jsonl"
#: The same wrapAISDK stream whose first step says a sentence with its tool call (review of AUDLS33, finding 2).
WRAP_PREAMBLE_503 = Path(__file__).parent / "fixtures" / "langsmith" / ".audls33fix" / \
    "lsjs0.12.0-wrapAISDK-ai7-stream-preamble-503-exhausted.batch.jsonl"


def test_a_step_the_telemetry_closed_on_finish_is_no_answer() -> None:
    """Bug: ``ToolLoopAgent.stream`` whose second model call failed (503, retries spent) ends without the SDK's
    error reaching the telemetry, which closes that step's ``llm`` run with ``{"note": "closed on finish"}``: that
    placeholder was read as the agent's answer, a ``respond`` step the model never said."""
    assert detect_format(STREAM_503) == "langsmith"
    run = only(STREAM_503, tenant="acme")
    assert run.task == "What is the weather in Lyon?"
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("weather", {"city": "Lyon"}, '{"city": "Lyon", "tempC": 14}')]


def test_a_wrapaisdk_stream_whose_provider_failed_after_a_tool_call_is_an_infra_error() -> None:
    """Bug: ``wrapAISDK``'s ``ToolLoopAgent.stream`` whose second model call failed (503 on each attempt) records
    the error on both ``llm`` runs but not on the root, whose outputs are its last finished step (a tool call and
    its result): read as an answer, the run looked finished, ``unknown``."""
    run = only(WRAP_STREAM_503, tenant="acme")
    assert [(s.action, s.error) for s in run.steps] == [("weather", None)]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and "Service Unavailable" in str(run.failure)


def test_a_wrapaisdk_step_that_spoke_before_its_tool_call_is_no_answer_either() -> None:
    """Bug (review of AUDLS33, 2): the same failed stream, its first step saying "Let me check the weather in
    Lyon." with its call (usual for Claude): the root's outputs held that text, so the run still read as
    finished, ``unknown``. Their finish reason, ``tool-calls``, says the step asked for tools: no answer."""
    run = only(WRAP_PREAMBLE_503, tenant="acme")
    assert [(s.action, s.thought, s.error) for s in run.steps] == [
        ("weather", "Let me check the weather in Lyon.", None)]
    assert run.outcome is Outcome.infra_error
    assert run.failure is not None and "Service Unavailable" in str(run.failure)


#: openai-python's ``ChatCompletionMessage`` of a function-calling reply (``model_dump()``): a call, no text.
_CALL_MESSAGE = {"content": None, "refusal": None, "role": "assistant", "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "Person", "arguments": '{"name":"Ada","age":36}'}}]}


def _python_run(tmp_path: Path, root_outputs: Any, tool_outputs: Any) -> Path:
    """A Python ``@traceable`` function's trace (no ``ls_integration``): a chain root returning ``root_outputs``, a
    model call asking for a tool, the tool returning ``tool_outputs``, then a best-effort model call whose provider
    failed and which the function swallowed. Runs as langsmith-python posts them, one per line."""
    root, llm, tool, late = (f"00000000-0000-4000-8000-00000000000{i}" for i in range(1, 5))

    def run(ident: str, second: int, **fields: Any) -> dict[str, Any]:
        dotted = "20260301T100000000000Z" + root + ("" if ident == root else f".20260301T10000{second}000000Z{ident}")
        return {"id": ident, "trace_id": root, "parent_run_id": None if ident == root else root,
                "start_time": f"2026-03-01T10:00:0{second}.000000", "end_time": f"2026-03-01T10:00:0{second}.500000",
                "extra": {"metadata": {}}, "dotted_order": dotted, "error": None, **fields}

    rows = [run(root, 0, name="extract_person", run_type="chain", inputs={"text": "Ada Lovelace is 36."},
                outputs=root_outputs),
            run(llm, 1, name="ChatOpenAI", run_type="llm", outputs=_CALL_MESSAGE,
                inputs={"messages": [{"role": "user", "content": "Ada Lovelace is 36."}]}),
            run(tool, 2, name="Person", run_type="tool", inputs={"name": "Ada", "age": 36}, outputs=tool_outputs),
            run(late, 3, name="ChatOpenAI", run_type="llm", outputs=None, error="APIConnectionError('Connection error.')",
                inputs={"messages": [{"role": "user", "content": "Summarise"}]})]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_python_function_whose_answer_is_a_tool_call_still_answered(tmp_path: Path) -> None:
    """Bug (review of AUDLS33, 1): the AI SDK root's rule (a root holding only tool calls is no answer) was applied
    to every chain run: a Python function returning ``resp.choices[0].message`` (function-calling extraction, the
    call *is* the answer) then let a later, swallowed model failure decide the run, ``infra_error``. The rule is for
    langsmith-js's AI SDK runs (``ls_integration``) only; this run answered, as on main."""
    run = only(_python_run(tmp_path, _CALL_MESSAGE, {"ok": True}), tenant="acme")
    assert run.outcome is not Outcome.infra_error


def test_a_tool_that_returned_the_telemetry_placeholder_keeps_its_output(tmp_path: Path) -> None:
    """Bug (review of AUDLS33, 3): ``{"note": "closed on finish"}`` is ``LangSmithTelemetry``'s placeholder only
    on its own runs (``ls_integration: vercel-ai-sdk-telemetry``); a Python tool that returned that dict returned
    it, and its step keeps it as the observation."""
    run = only(_python_run(tmp_path, {"output": "Ada, 36"}, {"note": "closed on finish"}), tenant="acme")
    assert [(s.action, s.observation) for s in run.steps if s.action == "Person"] == [
        ("Person", '{"note": "closed on finish"}')]
