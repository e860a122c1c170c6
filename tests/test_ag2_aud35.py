"""AG2 1.x's eval run store (``ag2.eval.run_agent(store_dir=...)``), written by AG2 1.2.1 itself: each task a run."""

from pathlib import Path

import adapter_support
from cli_support import run_cli, unnoted

EVAL_RUN = Path(__file__).parent / "fixtures" / "ag2" / ".aud35" / "ag2-1.2.1-eval-run.json"
RUN_ID = "03b7ae2130654132b6c511756ceda773"


def test_an_ag2_eval_run_store_reads_each_task_as_a_run_with_its_tool_calls_and_crash() -> None:
    weather, crash = adapter_support.runs(EVAL_RUN)
    assert [weather.trajectory_id, crash.trajectory_id] == [f"ag2:{RUN_ID}.weather", f"ag2:{RUN_ID}.crash"]
    assert (weather.task, weather.task_id, weather.outcome.value) == (
        "What is the weather in Paris and Atlantis?", "weather", "unknown")
    assert [(s.action, s.arguments, s.error) for s in weather.steps] == [
        ("get_weather", {"city": "Paris"}, None),
        ("get_weather", {"city": "Atlantis"}, "RuntimeError: city not found: Atlantis"),
        ("respond", {"content": "Paris is sunny; Atlantis is not a city I know."}, None)]
    assert weather.steps[0].observation == "Sunny in Paris"
    assert weather.metadata["suite"] == "weather-suite" and weather.metadata["feedback"][0]["key"] == "answered"
    assert (crash.outcome.value, crash.failure.error, crash.steps) == (
        "failure", "RuntimeError: model endpoint unreachable", [])


def test_trajsearch_ingest_takes_an_ag2_eval_run_store_as_ag2(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path))
    code, out, err = run_cli("ingest", "--dry-run", str(EVAL_RUN))
    assert code == 0, err
    assert "format ag2; runs 2; rejected 0" in out + err and not [l for l in unnoted(err) if "rejected" in l]
