"""AG2 1.x's eval run store (``ag2.eval.run_agent(store_dir=...)``), written by AG2 1.2.1 itself: each task a run."""

import json
from pathlib import Path

import adapter_support
from cli_support import run_cli, unnoted
from trajsearch.ingest.read import read_dump
from trajsearch.model import MAX_STEPS

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


AUD35 = EVAL_RUN.parent
#: Written by AG2 1.2.1's ``run_agent`` (``gen_scored.py``), scored by AG2's own ``final_answer_matches``.
SCORED = AUD35 / "ag2-1.2.1-eval-run-scored.json"
#: Written by AG2 1.2.1's ``evaluate_traces`` (``gen_missing.py``): task "b" has no trace in the source.
MISSING = AUD35 / "ag2-1.2.1-evaluate-traces-missing.json"


def _variant(tmp_path: Path, change) -> Path:
    """The real eval run store with its first task changed by ``change`` (a field wrong-typed, its events grown)."""
    store = json.loads(EVAL_RUN.read_text())
    change(store, store["tasks"][0])
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(store))
    return path


def _refusals(path: Path) -> list[str]:
    return [r.error for r in read_dump(path) if not r.ok]


def test_ag2s_own_pass_fail_feedback_decides_the_outcome_of_a_task_that_did_not_raise() -> None:
    right, wrong = adapter_support.runs(SCORED)
    assert (right.task, right.outcome.value, right.reward) == ("Capital of France?", "success", 1.0)
    assert (wrong.outcome.value, wrong.reward, wrong.failure.error) == (
        "failure", 0.0, "feedback final_answer_matches: failed")  # a true/false scorer's verdict, not "0.0"
    assert wrong.metadata["outcome_basis"] == "feedback 'final_answer_matches'"


def test_a_task_evaluate_traces_found_no_trace_for_is_refused_not_read_as_a_failed_run() -> None:
    results = list(read_dump(MISSING))
    assert [r.trajectory.task for r in results if r.ok] == ["Say hi"]
    assert [r.error for r in results if not r.ok] == [
        "an AG2 eval task with no run: the graded trace source had no trace for this task (MissingTraceError)"]


def test_an_eval_task_graded_from_traces_without_a_prompt_is_refused_for_that_reason(tmp_path: Path) -> None:
    def from_traces(store: dict, task: dict) -> None:
        store["target"], task["inputs"] = "trace-source:InMemoryTraceSource", {"question": "?"}
    [refusal] = _refusals(_variant(tmp_path, from_traces))
    assert "graded from traces kept elsewhere" in refusal and "OTel" in refusal


def test_an_eval_task_of_more_events_than_a_run_keeps_steps_is_read_clipped_not_refused(tmp_path: Path) -> None:
    def grown(store: dict, task: dict) -> None:
        call, result = task["events"][1:3]
        task["events"] = [dict(e, id=f"c{n}") if e is call else dict(e, parent_id=f"c{n}")
                          for n in range(MAX_STEPS + 100) for e in (call, result)]
    weather, _ = adapter_support.runs(_variant(tmp_path, grown))
    assert len(weather.steps) <= MAX_STEPS and weather.steps[0].observation == "Sunny in Paris"


def test_wrong_typed_eval_fields_are_taken_as_missing_and_a_string_exception_is_a_failure(tmp_path: Path) -> None:
    def wrong_typed(store: dict, task: dict) -> None:
        task |= {"events": "x", "tags": "y", "exception": "Traceback: boom"}
    weather, _ = adapter_support.runs(_variant(tmp_path, wrong_typed))
    assert (weather.steps, weather.tags, weather.outcome.value, weather.failure.error) == (
        [], [], "failure", "Traceback: boom")


def test_an_eval_tasks_otel_trace_id_is_kept_to_link_it_to_the_same_runs_spans() -> None:
    weather, _ = adapter_support.runs(EVAL_RUN)
    assert weather.metadata["otel_trace_id"] == "c385464010e9584016edf46a28b12dac"


def test_a_chatresult_carrying_the_eval_marker_key_is_still_read_as_a_chatresult(tmp_path: Path) -> None:
    chat = json.loads((AUD35.parent / ".real" / "ag2-0.14-async-chats-a.json").read_text())
    chats = chat if isinstance(chat, list) else [chat]
    path = tmp_path / "marked.json"
    path.write_text(json.dumps([{**c, "__ag2_eval_run__": "x"} for c in chats]))
    assert len(adapter_support.runs(path)) == len(chats)
