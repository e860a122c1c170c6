"""AG2 1.x Agent's event log (``KnowledgeConfig.write_event_log``: ``log/<stream_id>.jsonl``), written by AG2 1.2.1
itself (``gen_event_log.py``): the whole file is the stream's run."""

from pathlib import Path

import adapter_support
from cli_support import run_cli, unnoted
from trajsearch.ingest.read import read_dump

LOGS = Path(__file__).parent / "fixtures" / "ag2" / ".audagb"
#: A tool that raised, the model (AG2's scripted double, ``raise_tool_errors=True``) raising in turn when handed the
#: error: ``ask`` raised, the log ends on the ``ToolErrorEvent`` the model never answered.
CRASHED = LOGS / "c94c6ca1-7af4-40f4-ac56-5b3049d76012.jsonl"
#: Two ``ask`` calls on one stream: two tool calls and an answer, then a follow-up question and its answer.
TWO_ASKS = LOGS / "874dd5c9-c456-43c6-a958-51310c6b062a.jsonl"


def test_an_ag2_agent_event_log_is_one_run_with_its_tool_calls_answers_and_follow_up() -> None:
    [run] = adapter_support.runs(TWO_ASKS)
    assert (run.trajectory_id, run.task, run.outcome.value) == (
        "ag2:874dd5c9-c456-43c6-a958-51310c6b062a", "What is the weather in Paris and Atlantis?", "unknown")
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}, "Sunny in Paris"),
        ("get_weather", {"city": "Atlantis"}, "Sunny in Atlantis"),
        ("respond", {"content": "Paris is sunny; Atlantis is not a city I know."}, "Should I take sunglasses?"),
        ("respond", {"content": "Yes, take sunglasses."}, None)]


def test_an_ag2_event_log_that_ends_on_a_tool_error_is_a_failed_run() -> None:
    [run] = adapter_support.runs(CRASHED)
    assert (run.trajectory_id, run.outcome.value, run.failure.error) == (
        "ag2:c94c6ca1-7af4-40f4-ac56-5b3049d76012", "failure", "RuntimeError: city not found: Atlantis")
    assert [(s.action, s.error) for s in run.steps] == [
        ("get_weather", None), ("get_weather", "RuntimeError: city not found: Atlantis")]


def test_trajsearch_ingest_takes_an_ag2_event_log_as_ag2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path))
    code, out, err = run_cli("ingest", "--dry-run", str(CRASHED), str(TWO_ASKS))
    assert code == 0, err
    text = out + err
    assert text.count("format ag2; runs 1; rejected 0") == 2 and not [l for l in unnoted(err) if "rejected" in l]


#: ``gen_compacted.py``: three asks, ``TailWindowCompact`` moving the earliest events to two ``.dropped-<n>`` files.
COMPACTED = LOGS / "compacted"
STREAM = "6c155143-71b6-402b-a450-8c1b2f643d33"


def test_a_compacted_ag2_stream_is_one_run_from_its_first_prompt_and_its_dropped_segments_no_runs() -> None:
    [run] = adapter_support.runs(COMPACTED / f"{STREAM}.jsonl")
    assert (run.trajectory_id, run.task) == (f"ag2:{STREAM}", "What is the weather in Paris?")
    assert [(s.action, s.observation) for s in run.steps] == [
        ("get_weather", "Sunny in Paris"), ("respond", "And in Rome?"), ("get_weather", "Sunny in Rome"),
        ("respond", "Compare them."), ("respond", None)]
    for n in (1, 2):
        assert list(read_dump(COMPACTED / f"{STREAM}.dropped-{n}.jsonl")) == []


def test_ag2_0_14s_autogen_beta_agent_writes_the_same_event_log_and_it_is_read_alike() -> None:
    [run] = adapter_support.runs(LOGS / "ag2-0.14" / "274e495b-a193-48e9-811e-67e7ec5d4639.jsonl")
    assert (run.trajectory_id, run.task, run.outcome.value, run.failure.error) == (
        "ag2:274e495b-a193-48e9-811e-67e7ec5d4639", "What is the weather in Paris and Atlantis?", "failure",
        "RuntimeError: city not found: Atlantis")
    assert [(s.action, s.arguments) for s in run.steps] == [("get_weather", {"city": "Paris"}),
                                                            ("get_weather", {"city": "Atlantis"})]


SUMMARIZED = LOGS / "summarized"
SUMMARY_STREAM = "7edfa707-abea-4889-8c43-38e95ae49315"


def test_a_stream_compacted_by_summarize_compact_is_one_run_though_it_starts_on_a_compaction_summary() -> None:
    [run] = adapter_support.runs(SUMMARIZED / f"{SUMMARY_STREAM}.jsonl")
    assert (run.trajectory_id, run.task) == (f"ag2:{SUMMARY_STREAM}", "What is the weather in Paris?")
    assert [s.action for s in run.steps] == ["get_weather", "respond", "get_weather", "respond", "respond"]
    for n in (1, 2):
        assert list(read_dump(SUMMARIZED / f"{SUMMARY_STREAM}.dropped-{n}.jsonl")) == []


def test_a_model_call_that_raised_after_a_tool_succeeded_is_a_failure_though_the_log_keeps_no_exception() -> None:
    [run] = adapter_support.runs(LOGS / "unanswered" / "fa57fdfe-3a3d-4ec3-9efc-2bd10bcce7d4.jsonl")
    assert (run.outcome.value, run.failure.error) == (
        "failure", "the model call after the tool results raised (AG2's log keeps no exception)")
    assert [(s.action, s.observation, s.error) for s in run.steps] == [("get_weather", "Sunny in Paris", None)]


def test_a_first_model_call_that_raised_leaves_the_prompt_alone_and_is_a_failure() -> None:
    [run] = adapter_support.runs(LOGS / "unanswered" / "ac50af56-71ed-41c4-8014-c5b9d0e93467.jsonl")
    assert (run.task, run.steps, run.outcome.value, run.failure.error) == (
        "Weather in Paris?", [], "failure", "the model call after the prompt raised (AG2's log keeps no exception)")


def test_a_tool_the_model_named_that_does_not_exist_is_the_steps_error() -> None:
    [run] = adapter_support.runs(LOGS / "notfound" / "476d3d4b-93da-4d58-ac08-d0de606c4bfb.jsonl")
    [step] = run.steps
    assert (step.action, step.error) == ("get_wether", "ToolNotFoundError: Tool `get_wether` not found")
    assert step.observation and (run.outcome.value, run.failure.error) == ("failure", step.error)


def test_a_one_event_ag2_log_is_read_as_an_event_log_and_its_compacted_stream_kept(tmp_path: Path) -> None:
    first = (COMPACTED / f"{STREAM}.jsonl").read_text().splitlines()[0]
    (tmp_path / f"{STREAM}.jsonl").write_text(first + "\n")
    for n in (1, 2):
        name = f"{STREAM}.dropped-{n}.jsonl"
        (tmp_path / name).write_bytes((COMPACTED / name).read_bytes())
    [run] = adapter_support.runs(tmp_path / f"{STREAM}.jsonl")
    assert run.task == "What is the weather in Paris?" and len(run.steps) == 4


def test_a_segment_that_cannot_be_read_is_named_in_the_runs_metadata(tmp_path: Path) -> None:
    for name in (f"{STREAM}.jsonl", f"{STREAM}.dropped-2.jsonl"):
        (tmp_path / name).write_bytes((COMPACTED / name).read_bytes())
    (tmp_path / f"{STREAM}.dropped-1.jsonl").write_bytes(b"\x00\xff\x00 not json")
    [run] = adapter_support.runs(tmp_path / f"{STREAM}.jsonl")
    assert run.metadata["segments_unread"] == [f"{STREAM}.dropped-1.jsonl"]


def test_an_openai_web_search_the_model_ran_is_a_step(tmp_path: Path) -> None:
    """Lines as ``EventLogWriter`` writes ``OpenAIServerToolCallEvent``/``...ResultEvent`` (``config/openai/events.py``;
    built from its fields: no provider here to run one)."""
    lines = (TWO_ASKS.read_text().splitlines()[:2] + [
        '{"type": "ag2.config.openai.events.OpenAIServerToolCallEvent", "data": {"created_at": 1.0, "id": "ws_1", '
        '"name": "web_search", "arguments": "{\\"query\\": \\"Paris weather\\"}", "item": {}}}',
        '{"type": "ag2.config.openai.events.OpenAIServerToolResultEvent", "data": {"created_at": 2.0, "parent_id": '
        '"ws_1", "name": "web_search", "result": {"__dataclass__": "ag2.events.tool_events.ToolResult", "data": '
        '{"parts": [{"content": "Sunny"}], "final": false, "metadata": {}}}}}'])
    log = tmp_path / "0b5e.jsonl"
    log.write_text("\n".join(lines) + "\n")
    [run] = adapter_support.runs(log)
    assert ("web_search", {"query": "Paris weather"}, "Sunny") in [(s.action, s.arguments, s.observation)
                                                                   for s in run.steps]
