"""Span exports (Langfuse, LangSmith, OTel GenAI, OpenInference): cases the first fixes of their real-SDK defects
got wrong, each kept right beside the defect it was fixed for (tests/test_adapters_vendors_langchain.py,
tests/test_adapters_span_exports.py).

Fixtures: tests/fixtures/<format>/.derived (each a real capture with one documented change, see SOURCE.md there).
Everything goes through the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import detect_format
from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
LANGFUSE = FIXTURES / "langfuse" / ".derived"
LANGSMITH = FIXTURES / "langsmith" / ".derived"
OPENINFERENCE = FIXTURES / "openinference" / ".derived"
ATIF = FIXTURES / "atif" / ".derived"
LANGFUSE_REAL = FIXTURES / "langfuse" / ".real"


def test_langfuse_run_that_caught_a_tool_error_and_told_the_user_is_no_failure() -> None:
    """An ``@observe`` agent caught its tool's exception and answered quoting it ("...: orders DB unreachable"):
    the trace's output is that answer, not the ``"<ExceptionType>: <message>"`` LangChain's handler writes when the
    graph raised, so the run is not failed and its answer stays its last step."""
    run = only(LANGFUSE / "lf_recovered_tool_error.ingestion.jsonl")
    assert run.outcome is Outcome.unknown and run.failure is None
    assert [s.action for s in run.steps] == ["lookup_order", "respond"]
    assert "could not look up order A1" in run.steps[-1].arguments["content"]


def test_langsmith_rate_limit_the_root_survived_still_shows() -> None:
    """The app caught the model call's 429 and answered with a fallback (root run without error): the chains'
    copies of the call's error were all cleared in favour of the root's, so nothing told of the 429 (0 steps,
    ``unknown``). One step keeps it and the run is an infrastructure error, as before the chains were thinned."""
    run = only(LANGSMITH / "ls_429_caught_by_app.batch.jsonl")
    assert run.outcome is Outcome.infra_error and run.failure is not None and "429" in run.failure.error
    assert len(run.steps) == 1 and "429" in run.steps[0].error


def test_an_xml_tagged_request_in_a_chat_apps_span_is_the_request() -> None:
    """A chat app's (LiteLLM's) latest user message wrapped in ``<INSTRUCTIONS>`` tags: the coding CLIs' injected-
    message patterns were applied to every span export, so the message was taken for injected context and the run
    filed under the conversation's first question."""
    run = only(OPENINFERENCE / "litellm_latest_request_in_xml_tags.otlp.json")
    assert run.task.startswith("<INSTRUCTIONS>\nAnd what about Berlin's weather?")


def test_openinference_takes_the_latest_request_when_the_first_holds_a_reminder() -> None:
    """The history's first user message opens with a ``<system-reminder>`` block: the first request was compared
    rewritten (the block stripped) with the raw task, so the two never matched and the latest request ("And what
    about Berlin's weather?") was not taken."""
    run = only(OPENINFERENCE / "litellm_first_request_with_reminder.otlp.json")
    assert run.task == "And what about Berlin's weather?"


def test_a_models_refusal_is_its_reply() -> None:
    """The run's last model call refused (OpenAI: ``content`` null, the words in ``refusal``): the message read as
    saying nothing, so the run lost its last words; the refusal is the reply."""
    run = only(LANGFUSE / "lf_refusal.ingestion.jsonl")
    assert run.steps[-1].action == "respond"
    assert run.steps[-1].arguments == {"content": "I'm sorry, but I can't help with that request."}


def test_a_run_file_that_records_its_langfuse_trace_is_read_as_its_format() -> None:
    """A Terminus-2 ATIF trajectory carrying ``"langfuse": {"trace_id", "trace_url"}``: the Langfuse pointer test,
    asked before any format, took it for a pointer file and the run was passed over as a side file."""
    assert detect_format(ATIF / "terminus_2-with-langfuse-link.trajectory.json") == "atif"


def test_a_streamed_tool_call_keeps_its_arguments_from_tool_calls() -> None:
    """A streamed ChatAnthropic message (``create_agent``, tool not traced): the ``tool_use`` block's ``input`` is
    ``{}`` (its JSON in ``partial_json``), the arguments only in ``tool_calls``. Of the call's two records the
    block's was kept, so the step had no arguments."""
    run = only(LANGSMITH / "ls_anthropic_streamed_notool.batch.jsonl")
    assert [(s.action, s.arguments) for s in run.steps][0] == ("get_weather", {"city": "Paris"})
    assert [s.action for s in run.steps] == ["get_weather", "respond"]


def test_a_lone_langfuse_batch_names_a_tool_by_its_tool_message() -> None:
    """One ingestion batch read on its own (langfuse-langchain JS, the second of two): the tool's ``span-update``
    has no name (its ``span-create`` is in the other batch), so the tool step was named ``span``; its output, a
    ``ToolMessage``, names the tool."""
    run = only(LANGFUSE_REAL / "lfjs_anthropic_second_batch.ingestion.json")
    assert [(s.action, s.observation) for s in run.steps][0] == ("get_weather", "Sunny, 22C in Paris")
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
