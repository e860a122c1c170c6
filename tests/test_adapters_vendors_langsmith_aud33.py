"""LangSmith runs langsmith-js's ``LangSmithTelemetry`` posts for AI SDK 7 (audit AUDLS33, round 33; the files,
their scripts and the SDK versions in ``fixtures/langsmith/.aud33/README.md``).

Everything goes through the public reader (``detect_format`` / ``read_dump`` via ``adapter_support.only``).
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import detect_format
from trajsearch.model import Outcome

from adapter_support import only

AUD = Path(__file__).parent / "fixtures" / "langsmith" / ".aud33"
STREAM_503 = AUD / "lsjs0.12.0-LangSmithTelemetry-ai7-stream-503-exhausted.batch.jsonl"
WRAP_STREAM_503 = AUD / "lsjs0.12.0-wrapAISDK-ai7-stream-503-exhausted.batch.jsonl"


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
