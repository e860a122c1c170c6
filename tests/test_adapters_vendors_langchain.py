"""LangSmith and Langfuse on LangChain / LangGraph agents as the real SDKs record them.

Fixtures: tests/fixtures/{langsmith,langfuse}/.real (sources in SOURCE.md). Most were produced by the real,
unmodified SDKs (langsmith 0.15.1, langfuse 2.60.10, langfuse-langchain 3.39.2) against a fake model server,
trimmed to whole runs / observations; the Langfuse pointer files are real repository files. Everything goes through
the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
LANGFUSE = FIXTURES / "langfuse" / ".real"
LANGSMITH = FIXTURES / "langsmith" / ".real"


@pytest.mark.parametrize("name", ["ls_create_agent_anthropic.batch.jsonl", "ls_create_agent_responses.batch.jsonl"])
def test_langsmith_a_call_in_content_and_in_tool_calls_is_one_step(name: str) -> None:
    """D1 (langsmith 0.15.1, ``create_agent`` over ChatAnthropic / ChatOpenAI on the Responses API, fake model): the
    AIMessage holds its call as a ``tool_use`` / ``function_call`` block and again in ``tool_calls``; each became a
    step, one of them with no time."""
    run = only(LANGSMITH / name)
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    assert run.steps[0].started_at is not None and run.steps[0].observation == "Sunny, 22C in Paris"


@pytest.mark.parametrize("name", ["lf2_langchain_responses_api.ingestion.jsonl",
                                  "lfjs_langchain_responses_api.ingestion.jsonl"])
def test_langfuse_langchain_on_the_responses_api_keeps_the_tool_call(name: str) -> None:
    """D2 (langfuse 2.60.10 and langfuse-langchain 3.39.2 ``CallbackHandler``, ReAct agent over
    ``ChatOpenAI(use_responses_api=True)``, fake model): the generation's output is an empty assistant message (the
    handler drops ``tool_calls``; its chain's output keeps them). The call and its ``ToolMessage`` result were lost
    and the empty message's JSON became a first "answer"."""
    run = only(LANGFUSE / name)
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    tool, answer = run.steps
    assert (tool.arguments, tool.observation) == ({"city": "Paris"}, "Sunny, 22C in Paris")
    assert answer.arguments == {"content": "FINAL ANSWER: The weather in Paris is sunny, 22C."}


def test_langfuse_observe_trace_that_raised_is_a_failure() -> None:
    """D3 (langfuse 2.60.10 ``@observe``, fake model): the outermost decorated function is the trace, so its
    uncaught ``ConnectionError`` rides on the ``trace-create`` (``level: ERROR``, ``status_message``); the run read
    as ``unknown``. The error started in the tool's own span: the agent's failure, not infrastructure."""
    run = only(LANGFUSE / "lf2_observe_uncaught_error.ingestion.jsonl")
    assert run.outcome is Outcome.failure and run.failure is not None
    assert run.failure.error == "orders DB unreachable"
    assert [(s.action, s.error) for s in run.steps] == [("lookup_order", "orders DB unreachable")]


@pytest.mark.parametrize("path", [LANGFUSE / "lf2_langchain_react_429.ingestion.jsonl",
                                  LANGSMITH / "ls_react_agent_429.batch.jsonl"])
def test_one_rate_limit_is_one_error_not_a_step_per_chain_and_no_answer(path: Path) -> None:
    """D4 / D5 (langfuse 2.60.10 and langsmith 0.15.1 over a LangGraph ReAct agent, the fake model answering 429):
    the one exception became a "chain X failed" step per chain it passed through; Langfuse's trace output (the
    exception text) and LangSmith's empty ``generations`` of the failed call became a ``respond`` step."""
    run = only(path)
    assert run.steps == []
    assert run.outcome is Outcome.infra_error and run.failure is not None and "429" in run.failure.error


@pytest.mark.parametrize("path", sorted((LANGFUSE / "side-files").iterdir()) +
                         sorted((LANGSMITH / "side-files").iterdir()), ids=lambda p: p.name)
def test_langfuse_and_langsmith_files_without_runs_are_passed_over(path: Path) -> None:
    """D6: Langfuse's trace pointers (real: langfuse/langfuse-docs ``.langfuse/``), and dataset, dataset item,
    prompt and LangSmith example bodies (the SDKs', langfuse 2.60.10 / langsmith 0.15.1) were rejected as
    "unrecognised dump format". Named alone they say what they are; in a folder they are passed over."""
    with pytest.raises(SideFile, match="no run in this file: a (pointer to a )?(Langfuse|LangSmith) "):
        detect_format(path)


@pytest.mark.parametrize("folder", [LANGFUSE / "side-files", LANGSMITH / "side-files"])
def test_a_folder_of_vendor_side_files_reads_as_nothing(folder: Path) -> None:
    assert list(read_dump(folder, tenant="acme")) == []
