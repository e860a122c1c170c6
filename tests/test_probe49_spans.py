"""Probe V of round 49: span leftovers (AI SDK 5 detached tool spans, span failure steps, AG2's own OTel).

Through ``read_dump`` and the CLI on real files or ones built from them as the writer writes them (each folder's
SOURCE.md); no mocks.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_support import runs
from trajsearch.export.formats import to_record
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.represent import failure_text

FIXTURES = Path(__file__).parent / "fixtures"
REUSED_IDS = FIXTURES / "vercel-ai" / ".real" / "probeFRT48"


def test_ai5_concurrent_runs_each_get_the_tool_span_whose_arguments_their_model_wrote() -> None:
    """Bug (review R4 of round 48): two overlapping runs reuse Kimi's call id ``functions.runSql:1``; the second's
    model wrote ``limit: 5``, the first's left ``limit`` out (the schema fills 100). The span that ran with
    ``limit: 5`` (it failed) went to the first run, whose model asked for none: a key the model left out agrees, and
    the time then chose; the second run got the first's success with ``limit: 100``. Each run showed the other's
    outcome. A span equal to exactly one stand-in's arguments in its time is that stand-in's."""
    by_task = {r.task[:12]: r for r in runs(REUSED_IDS / "overlap-limit-asked.otlp.json", tenant="acme")}
    first, second = by_task["How do I ins"], by_task["How many use"]
    assert [(s.action, s.arguments, s.error) for s in first.steps if s.action == "runSql"] == [
        ("runSql", {"sql": "select count(*) from users", "limit": 100}, None)]
    assert [(s.action, s.arguments, s.error) for s in second.steps if s.action == "runSql"] == [
        ("runSql", {"sql": "select count(*) from users", "limit": 5}, "Error: permission denied for table users")]
    assert first.steps[1].observation == '[{"count": 42}]'


# -- a span's failure step: our words are its observation, not the agent's thought ---------------------------------

AGENTS_JA = FIXTURES / "openai-agents" / ".real" / "oai-agents-ja-tool-error-then-max-turns.jsonl"
LANGGRAPH_500 = FIXTURES / "otel-genai" / ".released" / "langgraph-1.2-openllmetry-0.62-model-500.otlp.jsonl"


@pytest.mark.parametrize(("path", "said"), [(AGENTS_JA, "agent リサーチ担当 failed"),
                                            (LANGGRAPH_500, "llm ChatOpenAI.chat failed")],
                         ids=["openai-agents-max-turns", "langgraph-model-500"])
def test_a_span_failure_step_says_what_failed_as_its_observation_not_as_the_agents_thought(
        path: Path, said: str) -> None:
    """Bug: the step a failed agent, chain or model call span gives (no failing step of its own) held the ingester's
    words "agent リサーチ担当 failed" as its thought: step rows indexed them as what the agent thought, and the
    chat export wrote them as an assistant message, words no model said, in a fine-tuning set. They are the step's
    observation (what the run's environment reports), the error beside them."""
    [run] = runs(path, group_by="conversation")
    failed = run.steps[-1]
    assert (failed.action, failed.thought, failed.observation) == (None, None, said)
    assert failed.error
    messages = to_record(run, "openai-chat")["messages"]
    assert not any(said in (m.get("content") or "") for m in messages if m["role"] == "assistant")
    assert any(said in (m.get("content") or "") and failed.error[:20] in m["content"]
               for m in messages if m["role"] == "user")


# -- AG2's own OTel: a failed tool's span names its error's type only ------------------------------------------------

AG2 = FIXTURES / "ag2" / ".real"


def test_ag2_otel_failed_tool_step_carries_the_tools_words_not_only_execution_error() -> None:
    """Bug (real AG2 0.14 ``autogen.opentelemetry`` traces): AG2 marks a failed tool's ``execute_tool`` span with
    ``error.type: ExecutionError`` and nothing else (its result is recorded for a success only), so every failed
    AG2 tool step's error was "ExecutionError": a failure search for the tool's words ("city not found") could
    not match the error, and failure analysis put every AG2 tool failure in one group. The words are in what the
    model was given (AG2's ``f"Error: {e}"``): the error is the type with them."""
    for name in ("ag2-0.14-autogen-opentelemetry.otlp.jsonl", "ag2-0.14-otel-with-oi-openai.otlp.jsonl"):
        [run] = runs(AG2 / name, tenant="acme")
        [failed] = [s for s in run.steps if s.error]
        assert (failed.action, failed.error) == ("get_weather", "ExecutionError: city not found: Atlantis")
        assert failed.observation == "Error: city not found: Atlantis"


def test_ag2_otel_group_pattern_tool_step_has_the_tools_result_its_executor_gave() -> None:
    """Bug (real AG2 0.14 ``initiate_group_chat`` traced by ``instrument_pattern``): the group's tool executor
    (``_Group_Tool_Executor``) holds the failed tool's result in its ``invoke_agent`` output as a ``tool`` message
    with no call id, and no model input is recorded: the step had no observation and the error "ExecutionError",
    the tool's words nowhere in the run. The executor's id-less result answers its own tool span."""
    [run] = runs(AG2 / "ag2-0.14-otel-pattern.otlp.jsonl", tenant="acme")
    assert [(s.action, s.observation, s.error) for s in run.steps][:1] == [
        ("get_weather", "Error: city not found: Atlantis", "ExecutionError: city not found: Atlantis")]
    assert run.steps[1].action == "respond"


def test_ag2_otel_run_that_gave_up_on_a_failing_tool_has_the_tools_words_in_its_failure_row(tmp_path: Path) -> None:
    """The chat that ended on the tool's failure (the assistant's auto-replies spent), failed by a grader's table:
    its failure row's error was "ExecutionError", which names no failure; it is the tool's words."""
    path = AG2 / "ag2-0.14-otel-tool-retries-exhausted.otlp.jsonl"
    [run] = runs(path, tenant="acme")
    (tmp_path / "grades.csv").write_text(f"trajectory_id,outcome\n{run.trajectory_id},failure\n")
    [run] = runs(path, tenant="acme", outcomes=OutcomeTable.load(tmp_path / "grades.csv"))
    assert [(s.action, s.error) for s in run.steps] == [
        ("get_weather", "ExecutionError: city not found: Atlantis")] * 2
    text, position = failure_text(run)
    assert "Error: ExecutionError: city not found: Atlantis" in text and position == 1


@pytest.mark.parametrize("name", ["ag2-0.14-otel-code-chat.otlp.jsonl", "ag2-0.14-otel-code-executor.otlp.jsonl"],
                         ids=["code-execution-config", "code-executor"])
def test_ag2_otel_coding_chat_keeps_the_code_runs_and_the_one_that_failed(name: str) -> None:
    """Bug (real AG2 0.14 ``autogen.opentelemetry`` trace of the classic coding chat): AG2 traces the user proxy
    running the assistant's code as its ``invoke_agent`` span, the executor's report (``exitcode: 1 (execution
    failed)``, the ModuleNotFoundError) its output, with no span of the run itself. Both reports were dropped: the
    code blocks read as the model's answers (three ``respond`` steps), the failed run nowhere. Each is an
    ``execute_code`` step, as the ChatResult of the same chat gives; once, where a code executor also wrote an
    ``execute_code`` span of it."""
    [run] = runs(AG2 / name, tenant="acme")
    assert [(s.action, s.error) for s in run.steps] == [
        ("execute_code", "ModuleNotFoundError: No module named 'numpy_does_not_exist' (exit code 1)"),
        ("execute_code", None), ("respond", None)]
    failed, fixed, _ = run.steps
    assert failed.arguments == {"code": "import numpy_does_not_exist\nprint(numpy_does_not_exist.one())",
                                "language": "python"}
    assert fixed.thought == "The module is missing; plain Python instead:" and fixed.observation.endswith("1")
    assert failed.started_at is not None and failed.started_at <= failed.ended_at <= fixed.started_at
    [chat_result] = runs(AG2 / "chat_results_code.json", tenant="acme")
    assert [(s.action, s.arguments, s.error) for s in chat_result.steps] == [
        (s.action, s.arguments, s.error) for s in run.steps]


# -- review RV: Langfuse's failed model call without io, passed on by its chain --------------------------------------

def test_a_langfuse_model_call_failed_without_io_and_passed_on_by_its_chain_is_one_failure_step(
        tmp_path: Path) -> None:
    """Bug (review RV): observations fetched without ``io`` where a LangChain chain failed passing on its model
    call's error ("rate limited"): the chain's failure step ("llm live-chat failed", its words in the observation
    since span failure steps stopped using the thought) and the step added for the failed call without its input
    and output were both kept, comparing thoughts: two failure steps for one failure, the run's failure counted
    twice in failure search."""
    source = FIXTURES / "langfuse" / ".derived" / "api-v2-chain-failed"
    for name in ("traces-page.json", "default-fields.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    [run] = runs(tmp_path, tenant="acme")
    assert [(s.action, s.error) for s in run.steps] == [(None, "rate limited"), ("respond", None)]
    assert run.steps[0].observation.startswith("llm live-chat failed")


# -- review RV: a detached tool span's claim when another run's span was sampled out ---------------------------------

@pytest.mark.parametrize("name", ["overlap-default-second-tool-trace-sampled-out.otlp.json",
                                  "sampled-out-plus-short-third.otlp.json"])
def test_ai5_a_run_whose_tool_trace_was_sampled_out_does_not_claim_the_other_runs_span(name: str) -> None:
    """Bug (review RV): AI SDK 5 writes each detached tool span as a trace of its own, which a sampler keeps or
    drops apart from its run. Two overlapping runs; the second run's model wrote ``limit: 100`` (the schema's
    default), the first's left it out, and the second's span was sampled out. The one span left (the first run's,
    failing, recorded with the default filled) equals exactly what the second run asked for, so the second run
    claimed it: it showed the first run's failure, and the first run read as stopped before running its query. A
    claim holds only where the key's spans in the claimant's time are as many as the runs asking then; else the
    time decides. Review R2B: a short third run of the server inside that time (its own call and span) brought its
    span into the count but not itself, and the claim came back: runs are counted over the same time as spans."""
    path = REUSED_IDS / name
    by_task = {r.task[:12]: r for r in runs(path, tenant="acme")}
    first, second = by_task["How do I ins"], by_task["How many use"]
    assert [(s.action, s.arguments, s.error) for s in first.steps if s.action == "runSql"] == [
        ("runSql", {"sql": "select count(*) from users", "limit": 100}, "Error: permission denied for table users")]
    [asked] = [s for s in second.steps if s.action == "runSql"]
    assert "permission denied" not in (asked.error or "") and asked.observation is None


# -- review RV: AG2 joins the results of parallel tool calls into one message -----------------------------------------

@pytest.mark.parametrize("name", ["ag2-0.14-otel-parallel-calls.otlp.jsonl",
                                  "ag2-0.14-otel-pattern-parallel-calls.otlp.jsonl"],
                         ids=["two-agent-chat", "group-pattern"])
def test_ag2_otel_parallel_calls_failed_tool_step_has_its_own_part_of_the_joined_result(name: str) -> None:
    """Bug (review RV; real AG2 0.14 traces): the model asked for two tools in one response, ``get_weather`` for
    Atlantis (raised) and for Paris. AG2 joins their results into ONE id-less ``tool`` message (the user proxy with
    "\\n\\n", the group's tool executor with "\\n"), and only the successful span records its result. The failed step
    got the whole joined text, the other call's result in its observation and error ("ExecutionError: city not
    found: Atlantis The weather in Paris is ..."; two-agent chat), or nothing at all, its error "ExecutionError"
    (group pattern). With one step left unanswered, its part is the joined text less the others' results."""
    [run] = runs(AG2 / name, tenant="acme")
    assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps[:2]] == [
        ("get_weather", {"city": "Atlantis"}, "Error: city not found: Atlantis",
         "ExecutionError: city not found: Atlantis"),
        ("get_weather", {"city": "Paris"}, "The weather in Paris is 73 degrees and Sunny.", None)]
    assert run.steps[2].action == "respond"


def _failed_ag2_step(tmp_path: Path, kind: str) -> tuple[str | None, str | None, str | None]:
    """The failed step (action, observation, error) of the real AG2 trace with its failed span's ``error.type``
    set to ``kind``."""
    source = AG2 / "ag2-0.14-autogen-opentelemetry.otlp.jsonl"
    (tmp_path / "trace.otlp.jsonl").write_text(source.read_text().replace('"ExecutionError"', f'"{kind}"'))
    [run] = runs(tmp_path / "trace.otlp.jsonl", tenant="acme")
    [failed] = [s for s in run.steps if s.error]
    return failed.action, failed.observation, failed.error


# -- review RV: only an exception type's name takes the result's words -----------------------------------------------

@pytest.mark.parametrize(("kind", "error"), [
    ("cancelled", "cancelled"), ("_OTHER", "_OTHER"), ("timeout", "timeout"),
    ("builtins.ValueError", "builtins.ValueError: city not found: Atlantis"),
    ("TOOL_ERROR", "TOOL_ERROR: city not found: Atlantis")],
    ids=["status-word", "otel-fallback", "otel-timeout", "dotted-exception", "adk-tool-error"])
def test_a_tool_spans_bare_error_takes_the_results_words_only_when_it_names_an_exception_type(
        tmp_path: Path, kind: str, error: str) -> None:
    """Review RV: a tool span whose error is a bare word took the words of the result the model was given (the rule
    for AG2's ``error.type: ExecutionError``), whatever the word: a status (``cancelled``), OTel's fallback
    ``_OTHER`` or ``timeout`` (which writers set on a failed span with no type to give) became "cancelled: <the
    result>", the result read as the failure's words. Only a name that is an exception type (ending Error,
    Exception, Exit or Interrupt, dotted or not; ADK's ``TOOL_ERROR``) does. The real AG2 trace, its failed span's
    ``error.type`` set to each."""
    assert _failed_ag2_step(tmp_path, kind) == ("get_weather", "Error: city not found: Atlantis", error)


# -- review RF: a claim when a third run of the server was going on since before -----------------------------------

def test_ai5_concurrent_runs_keep_their_own_spans_when_a_third_earlier_run_is_still_going_on() -> None:
    """Bug (review RF of round 49, a regression of RV's fix): R4's two overlapping runs, and a third run of the same
    server that started before both, ran its own ``runSql`` (same reused call id) before they asked and was still
    going on. It counted among the runs asking when the ``limit: 5`` span started, but its span not among the key's
    spans (counted only from the claimant's own request): fewer spans than runs asking, no claim, and the time gave
    each of the two runs the other's result again. The spans are counted from the earliest request of the runs
    asking; the sampled-out case above still claims nothing."""
    path = REUSED_IDS / "overlap-limit-asked-third-run-earlier.otlp.json"
    by_task = {r.task[:12]: r for r in runs(path, tenant="acme")}
    first, second, third = by_task["How do I ins"], by_task["How many use"], by_task["How many ord"]
    assert [(s.arguments, s.error) for s in first.steps if s.action == "runSql"] == [
        ({"sql": "select count(*) from users", "limit": 100}, None)]
    assert [(s.arguments, s.error) for s in second.steps if s.action == "runSql"] == [
        ({"sql": "select count(*) from users", "limit": 5}, "Error: permission denied for table users")]
    assert [(s.arguments, s.observation) for s in third.steps if s.action == "runSql"] == [
        ({"sql": "select count(*) from orders", "limit": 100}, '[{"count": 7}]')]


def test_ag2_otel_parallel_calls_two_failed_each_step_has_its_own_part_of_the_joined_result() -> None:
    """Bug (review RF): three parallel calls, two of them failed (Atlantis, Lemuria; Paris succeeded). With more than
    one step unanswered the joined text was given whole to the first (its observation and error held the others'
    results, "... The weather in Paris is ... Error: city not found: Lemuria") and the last was left "ExecutionError"
    with nothing. Where the text splits by AG2's separator into one part a call, the known result at its place, each
    failed step takes its own part."""
    [run] = runs(AG2 / "ag2-0.14-otel-parallel-calls-two-fail.otlp.jsonl", tenant="acme")
    assert [(s.arguments["city"], s.observation, s.error) for s in run.steps if s.action == "get_weather"] == [
        ("Atlantis", "Error: city not found: Atlantis", "ExecutionError: city not found: Atlantis"),
        ("Paris", "The weather in Paris is 73 degrees and Sunny.", None),
        ("Lemuria", "Error: city not found: Lemuria", "ExecutionError: city not found: Lemuria")]


def test_a_langfuse_model_call_retried_failing_twice_alike_keeps_both_failures(tmp_path: Path) -> None:
    """Bug (review RF): the chain retried its model call, both attempts failed "rate limited", fetched without ``io``.
    The chain's failure step stands for the attempt it passed on, but it was matched as a set: both attempts were
    taken as told and the first attempt's failure was lost. One told step covers one call."""
    source = FIXTURES / "langfuse" / ".derived" / "api-v2-chain-failed-retried"
    for name in ("traces-page.json", "default-fields.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    [run] = runs(tmp_path, tenant="acme")
    assert [(s.action, s.error) for s in run.steps] == [(None, "rate limited"), (None, "rate limited"),
                                                         ("respond", None)]
    assert sorted(s.observation.startswith("llm live-chat failed (its input") for s in run.steps[:2]) == [False, True]


# -- review RF: an exception type's name by its shape, not a list of endings -----------------------------------------

@pytest.mark.parametrize(("kind", "error"), [
    ("ExceptionGroup", "ExceptionGroup: city not found: Atlantis"),
    ("httpx.ReadTimeout", "httpx.ReadTimeout: city not found: Atlantis"),
    ("ImproperlyConfigured", "ImproperlyConfigured: city not found: Atlantis"),
    ("NoSuchBucket", "NoSuchBucket: city not found: Atlantis"),
    ("Timeout", "Timeout"), ("DEADLINE_EXCEEDED", "DEADLINE_EXCEEDED")],
    ids=["exception-group", "httpx-timeout", "django-config", "s3-bucket", "status-capitalized", "grpc-status"])
def test_a_tool_spans_bare_error_named_by_a_type_of_any_ending_takes_the_results_words(
        tmp_path: Path, kind: str, error: str) -> None:
    """Bug (review RF): only type names ending Error, Exception, Exit or Interrupt took the result's words; real types
    end otherwise (Python's ``ExceptionGroup``, ``httpx.ReadTimeout``, Django's ``ImproperlyConfigured``, botocore's
    ``NoSuchBucket``), and such a failed step's error stayed the bare name, its words unsearchable. A type's shape
    (CamelCase, or a capitalized name after a module's) takes them; a status word, capitalized or gRPC's, does not.
    The real AG2 trace of RV's test, its failed span's ``error.type`` set to each."""
    assert _failed_ag2_step(tmp_path, kind) == ("get_weather", "Error: city not found: Atlantis", error)
