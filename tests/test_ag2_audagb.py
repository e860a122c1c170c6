"""AG2 1.x Agent's event log (``KnowledgeConfig.write_event_log``: ``log/<stream_id>.jsonl``), written by AG2 1.2.1
itself (``gen_event_log.py``): the whole file is the stream's run."""

from pathlib import Path

import adapter_support
from cli_support import run_cli, unnoted
from trajsearch.ingest.read import read_dump

LOGS = Path(__file__).parent / "fixtures" / "ag2" / ".audagb"
#: A tool that raised: AG2 1.2.1 re-raised it from ``ask``, the log ends on the ``ToolErrorEvent``.
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
