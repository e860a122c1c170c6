"""Span exports (Langfuse, LangSmith, OTel GenAI, OpenInference): cases the first fixes of their real-SDK defects
got wrong, each kept right beside the defect it was fixed for (tests/test_adapters_vendors_langchain.py,
tests/test_adapters_span_exports.py).

Fixtures: tests/fixtures/<format>/derived (each a real capture with one documented change, see SOURCE.md there).
Everything goes through the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
LANGFUSE = FIXTURES / "langfuse" / "derived"


def test_langfuse_run_that_caught_a_tool_error_and_told_the_user_is_no_failure() -> None:
    """An ``@observe`` agent caught its tool's exception and answered quoting it ("...: orders DB unreachable"):
    the trace's output is that answer, not the ``"<ExceptionType>: <message>"`` LangChain's handler writes when the
    graph raised, so the run is not failed and its answer stays its last step."""
    run = only(LANGFUSE / "lf_recovered_tool_error.ingestion.jsonl")
    assert run.outcome is Outcome.unknown and run.failure is None
    assert [s.action for s in run.steps] == ["lookup_order", "respond"]
    assert "could not look up order A1" in run.steps[-1].arguments["content"]
