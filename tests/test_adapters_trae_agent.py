"""Trae Agent trajectory files (``TrajectoryRecorder``'s ``trajectories/trajectory_<time>.json``), read from real
runs an evaluation committed (ISO-Bench/ISO-Bench, trimmed: tests/fixtures/trae-agent/.trae29/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest import detect
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import only
from cli_support import run_cli, unnoted

TRAE = Path(__file__).parent / "fixtures" / "trae-agent" / ".trae29"


def test_a_run_that_called_task_done_is_a_success_with_its_calls_results_and_errors() -> None:
    path = TRAE / "success_task_done.json"
    assert detect_format(path) == "trae-agent"
    run = only(path)
    assert run.outcome is Outcome.success and run.failure is None
    assert run.model_id == "gpt-5" and run.metadata["provider"] == "openai" and run.metadata["max_steps"] == 120
    assert run.task.startswith("I've uploaded a python code repository")
    assert run.tools_available[:4] == ["bash", "str_replace_based_edit_tool", "sequentialthinking", "task_done"]
    first = run.steps[0]
    assert first.action == "bash" and first.thought.startswith("I will first inspect the repository")
    assert first.arguments["command"].startswith("ls -la ") and first.observation.startswith("total 224")
    # the call that ended the run is recorded unrun (Trae stops on it), its message the run's result
    assert run.steps[-1].action == "task_done" and run.steps[-1].observation is None
    assert run.metadata["final_result"].startswith("Completed performance optimization")
    # a command's stderr with a failed grep, and the edit tool's refusal, are the steps' errors
    errors = {s.index: s.error for s in run.steps if s.error}
    assert sorted(errors) == [1, 3]
    assert errors[1] == "grep: benchmarks/kernels/benchmark_moe_align_block_size.py: No such file or directory"
    assert errors[3].startswith("File already exists at: /home/raven/")


def test_how_a_run_ended_is_its_outcome() -> None:
    runs = {Path(p.source).name: p.trajectory for p in read_inputs([TRAE])}
    assert {name: run.outcome for name, run in runs.items()} == {
        "success_task_done.json": Outcome.success,
        "quota_429.json": Outcome.infra_error,  # the provider refused: the quota was used up
        "bad_tool_json.json": Outcome.failure,  # the model's tool call was not JSON
        "max_steps.json": Outcome.failure,
        "refused_task_done.json": Outcome.failure,  # a 400 mid-run: the refused call's missing output (Trae's bug)
        "unfinished.json": Outcome.unknown}
    assert runs["quota_429.json"].failure.error.startswith("Error code: 429") and \
        "infrastructure" in runs["quota_429.json"].failure.cause
    assert "Trae Agent built from the run's own history" in runs["refused_task_done.json"].failure.cause
    assert runs["bad_tool_json.json"].failure.cause == "the model's tool call was not valid JSON"
    assert runs["max_steps.json"].failure.error == "Task execution exceeded maximum steps without completion."
    assert "max_steps (120)" in runs["max_steps.json"].failure.cause
    assert "no end_time" in runs["unfinished.json"].metadata["ended_by"]
    # grep matching nothing (success false, no output, no error: Trae keeps no exit code) is no error
    [quiet] = [s for s in runs["unfinished.json"].steps if s.index == 2]
    assert quiet.action == "bash" and quiet.arguments["command"].startswith("grep ") and quiet.error is None


def test_a_rejected_request_is_the_agent_s_failure_mid_run_and_the_setup_s_at_its_first_turn(tmp_path: Path) -> None:
    """A 400 after the agent's first turn answers the history Trae built (394 of 816 real runs: a refused task_done
    sent on with no tool output, an empty error result), which a retry repeats: the agent's failure, not an outage.
    At the first turn it is the setup's (a tool schema the provider refuses), as an expired credential is."""
    document = json.loads((TRAE / "refused_task_done.json").read_text())
    bedrock = "Client error '400 Bad Request' for url 'https://bedrock-runtime.us-east-1.amazonaws.com/model/x/invoke'"
    document["agent_steps"][-1]["error"] = bedrock
    (tmp_path / "bedrock.json").write_text(json.dumps(document))
    first = "Error code: 400 - {'error': {'message': \"Missing required parameter: 'tools[0].type'.\"}}"
    document["agent_steps"] = [{**document["agent_steps"][-1], "error": first}]
    (tmp_path / "first.json").write_text(json.dumps(document))
    assert only(tmp_path / "bedrock.json").outcome is Outcome.failure
    at_first = only(tmp_path / "first.json")
    assert at_first.outcome is Outcome.infra_error and at_first.failure.error == first


def test_only_the_last_step_s_error_ended_the_run(tmp_path: Path) -> None:
    """Trae's loop stops on a step whose model call raised, so an error on an earlier step did not end the run: a
    file with no end_time after it is still unfinished."""
    document = json.loads((TRAE / "unfinished.json").read_text())
    document["agent_steps"][0]["error"] = "Error code: 429 - {'error': {'message': 'Rate limit reached'}}"
    (tmp_path / "run.json").write_text(json.dumps(document))
    assert only(tmp_path / "run.json").outcome is Outcome.unknown


def test_a_task_done_the_run_went_on_after_was_refused_with_trae_s_reply() -> None:
    """With ``must_patch`` and no patch Trae refuses ``task_done`` (it never runs it) and says so in the turn's
    ``llm_messages``: 267 of 816 real runs hold such a call (288 calls), read as a plain call before."""
    run = only(TRAE / "refused_task_done.json")
    [done] = [s for s in run.steps if s.action == "task_done"]
    assert done.index == 4 and done.observation == done.error
    assert done.error.startswith("ERROR! Your Patch is empty. Please provide a patch that fixes the problem.")
    assert run.failure.error.startswith("Error code: 400 - {'error': {'message': 'No tool output found for function")


def test_a_task_done_refused_in_the_last_turn_is_told_by_trae_s_reply(tmp_path: Path) -> None:
    """A run killed right after Trae refused its task_done did not go on, but Trae's reply says it refused (a real
    ISO-Bench run ends so); a call Trae took records the messages sent before it (a reminder), no refusal."""
    document = json.loads((TRAE / "refused_task_done.json").read_text())
    document.update(agent_steps=document["agent_steps"][:5], end_time="")
    (tmp_path / "refused.json").write_text(json.dumps(document))
    [done] = [s for s in only(tmp_path / "refused.json").steps if s.action == "task_done"]
    assert done.error.startswith("ERROR! Your Patch is empty.") and done.observation == done.error
    document["agent_steps"][4]["llm_messages"] = [{"role": "user", "content": "<system-reminder>Please continue"}]
    (tmp_path / "taken.json").write_text(json.dumps(document))
    [done] = [s for s in only(tmp_path / "taken.json").steps if s.action == "task_done"]
    assert done.error is None and done.observation is None


def test_a_runs_id_is_its_content_not_its_path(tmp_path: Path) -> None:
    """An evaluation names every run's file ``trajectory.json``; a copy elsewhere is the same run."""
    copy = tmp_path / "elsewhere" / "vllm_core-0027" / "trajectory.json"
    copy.parent.mkdir(parents=True)
    shutil.copy(TRAE / "success_task_done.json", copy)
    original = only(TRAE / "success_task_done.json")
    assert only(copy).trajectory_id == original.trajectory_id
    assert original.trajectory_id.startswith("trae-agent.")
    assert original.trajectory_id != only(TRAE / "unfinished.json").trajectory_id
    # the recorder rewrites its file after every step: a copy taken mid-run is the same run, not yet finished
    document = json.loads((TRAE / "success_task_done.json").read_text())
    document.update(agent_steps=document["agent_steps"][:3], end_time="", success=False, final_result=None)
    (tmp_path / "mid-run.json").write_text(json.dumps(document))
    mid_run = only(tmp_path / "mid-run.json")
    assert mid_run.trajectory_id == original.trajectory_id and mid_run.outcome is Outcome.unknown


def test_a_bad_file_is_rejected_by_name_and_the_good_ones_kept(tmp_path: Path) -> None:
    """A run the recorder never started (``task`` empty) and a file cut mid-write are each one rejection naming the
    file and why; the run beside them is read."""
    shutil.copy(TRAE / "success_task_done.json", tmp_path / "good.json")
    document = json.loads((TRAE / "unfinished.json").read_text())
    (tmp_path / "never-started.json").write_text(json.dumps({**document, "task": "", "agent_steps": []}))
    (tmp_path / "cut.json").write_text((TRAE / "unfinished.json").read_text()[:5000])
    (tmp_path / "listed-task.json").write_text(json.dumps({**document, "task": ["fix", "it"]}))
    parsed = {Path(p.source).name: p for p in read_inputs([tmp_path])}
    assert parsed["good.json"].trajectory.outcome is Outcome.success
    assert "empty `task`" in str(parsed["never-started.json"].error)
    assert parsed["cut.json"].trajectory is None and "malformed JSON" in str(parsed["cut.json"].error)
    assert parsed["listed-task.json"].trajectory is None
    assert "`task` is not text but list" in str(parsed["listed-task.json"].error)


def test_cli_dry_run_names_the_format_and_an_ingest_finds_a_run_by_its_tools_error(home: Path) -> None:
    code, out, err = run_cli("ingest", str(TRAE), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert "quota_429.json: format trae-agent; runs 1; rejected 0; steps 10; errors 1; outcomes infra_error 1" in out
    code, out, err = run_cli("ingest", str(TRAE), "-t", "acme", "--json", "--quiet")
    assert code == 0 and json.loads(out)["ingested"] == 6, out + err
    code, out, err = run_cli("search", "Cannot overwrite files using command `create`", "-t", "acme", "--json")
    assert code == 0 and not unnoted(err), out + err
    assert json.loads(out)[0]["trajectory_id"] == only(TRAE / "success_task_done.json").trajectory_id, out
    code, out, err = run_cli("formats")
    assert code == 0 and "trae-agent" in out, out + err


def test_a_file_too_big_to_parse_for_detection_is_told_by_its_head(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Detection parses a document whole up to ``WHOLE_PARSE_BYTES``; past it, a Trae file (pretty-printed as the
    recorder writes it, or compact) was "unrecognised", not read. The recorder's first keys tell it."""
    monkeypatch.setattr(detect, "WHOLE_PARSE_BYTES", 10_000)
    compact = tmp_path / "compact.json"
    document = json.loads((TRAE / "quota_429.json").read_text())
    compact.write_text(json.dumps({**document, "final_result": "x" * 80_000}))  # one line past the 64 KiB peek
    assert detect_format(TRAE / "quota_429.json") == detect_format(compact) == "trae-agent"
    assert only(compact).outcome is Outcome.infra_error
