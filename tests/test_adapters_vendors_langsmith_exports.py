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
