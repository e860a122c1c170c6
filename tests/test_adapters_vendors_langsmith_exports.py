"""LangSmith traces as LangChain's own export tools write them, found by probe p43 probeA (sources in the
fixtures' SOURCE.md): the langsmith-trace skill's run export (``run_id``, ``custom_metadata``) and langsmith-fetch's
trace files (``{"trace_id", "messages", "metadata", "feedback"}``, or the bare message list).

Everything goes through the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format, read_dump

from adapter_support import only

REAL = Path(__file__).parent / "fixtures" / "langsmith" / ".real"
SKILL_EXPORT = REAL / "langsmith-skills" / "01a24196-448f-72f3-a26e-99fa67d7785a.trimmed.jsonl"
FETCHED = REAL / "langsmith-fetch"


def _check_skill_run(path: Path) -> None:
    assert detect_format(path) == "langsmith"
    run = only(path, tenant="acme")
    assert run.trajectory_id == "ls:01a24196-448f-72f3-a26e-99fa67d7785a"
    assert run.task == "What is the weather and the air quality in Lyon?"
    assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps] == [
        ("get_weather", {"city": "Lyon"}, "It is 18C and cloudy in Lyon.", None),
        ("get_air_quality", {"city": "Lyon"}, None, "ConnectionError: AQI service unreachable for Lyon")]
    assert run.outcome.value == "failure"
    assert run.failure.error == "ConnectionError: AQI service unreachable for Lyon"
    assert run.metadata["run_metadata"]["LANGSMITH_PROJECT"] == "probe-a"  # its custom_metadata


def test_the_langsmith_trace_skills_export_keyed_run_id_is_read() -> None:
    """Bug (p43 probeA A1): every run of ``query_traces.py export --full`` was rejected ("LangSmith run without
    'id'"): the script writes the run's id as ``run_id`` and its ``extra.metadata`` as ``custom_metadata``."""
    _check_skill_run(SKILL_EXPORT)


def test_the_langsmith_trace_skills_single_trace_file_is_read(tmp_path: Path) -> None:
    """p43 probeA A1: ``query_traces.py trace ID --format json --full -o F`` writes the same runs as
    ``{"trace_id", "runs": [...]}`` (indented)."""
    lines = [json.loads(line) for line in SKILL_EXPORT.read_text().splitlines()]
    path = tmp_path / "trace_full.json"
    path.write_text(json.dumps({"trace_id": lines[0]["trace_id"], "runs": lines}, indent=2))
    _check_skill_run(path)


def test_a_langsmith_fetch_trace_with_metadata_is_read_as_its_turn() -> None:
    """Bug (p43 probeA A2): ``langsmith-fetch trace ID --include-metadata`` was "unrecognised" (``-f langsmith``:
    "run without 'id'"). Its ``messages`` are the root run's output, the thread's state: trace 2 reads as its own
    turn, as the SDK's runs of that trace do; the tool's ``ToolMessage`` with ``status: error`` is a failed step."""
    first, second = FETCHED / "trace1.meta.json", FETCHED / "trace2.meta.json"
    assert detect_format(second) == "langsmith"
    run = only(second, tenant="acme")
    assert run.trajectory_id == "ls:01a24197-987d-74b8-a54e-39b3b2537ad3"
    assert run.task == "And in Paris?"
    assert [(s.action, s.arguments, s.observation) for s in run.steps] == [
        ("get_weather", {"city": "Paris"}, "It is 18C and cloudy in Paris."),
        ("respond", {"content": "Paris is 18C and cloudy too."}, None)]
    assert run.metadata["conversation_id"] == "thread-lyon-1"
    assert run.created_at.isoformat().startswith("2026-12-04T15:06:23")

    turn = only(first, tenant="acme")
    assert turn.task == "What is the weather and the air quality in Lyon?"
    assert [s.action for s in turn.steps] == ["get_weather", "get_air_quality", "respond"]
    assert turn.steps[0].thought == "Let me check."
    assert turn.steps[1].error.startswith("Error: ConnectionError('AQI service unreachable for Lyon')")
    assert turn.metadata["conversation_id"] == "thread-lyon-1"


def test_a_langsmith_fetch_trace_whose_status_is_error_is_a_failure(tmp_path: Path) -> None:
    """p43 probeA A2: the file keeps the root run's ``status`` but not its error: an ``error`` status is a
    failure that says so."""
    fetched = json.loads((FETCHED / "trace1.meta.json").read_text())
    fetched["metadata"]["status"] = "error"
    path = tmp_path / "failed.json"
    path.write_text(json.dumps(fetched, indent=2))
    run = only(path, tenant="acme")
    assert run.outcome.value == "failure"
    assert "status: error" in run.failure.error


def test_a_bare_langsmith_fetch_message_list_is_named_not_unrecognised() -> None:
    """p43 probeA A2: ``langsmith-fetch trace ID --format raw`` writes the bare message list: no trace id, times
    or status. It is named, with the command that writes a readable file; forced, the same words."""
    bare = FETCHED / "trace2.messages.json"
    with pytest.raises(ValueError, match="a bare list of LangChain messages .*--include-metadata"):
        detect_format(bare)
    results = list(read_dump(bare, tenant="acme", fmt="langsmith"))
    assert results and all(not r.ok for r in results)
    assert "a bare list of LangChain messages" in results[0].error
