"""Kimi Code CLI sessions (MoonshotAI/kimi-cli): a session's context file, its model context as JSON lines. Fixtures:
tests/fixtures/kimi-cli/.newfmt2-30 (real files Kimi wrote, trimmed; README.md there says where from)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from cli_support import newcomer, run_cli, unnoted  # noqa: F401 - the fixture

KIMI = Path(__file__).parent / "fixtures" / "kimi-cli" / ".newfmt2-30"
SESSION = "d8447fa8-9d8e-41af-9fc6-a12e4a196b6c"
MAIN, SUB = KIMI / f"{SESSION}.jsonl", KIMI / f"{SESSION}_read_1.jsonl"
NEW_ID = "0f2c9a4e-1b7d-4c8e-9a35-6d2e8f1b7c40"


def _runs(*paths: Path) -> dict:
    results = list(read_inputs(list(paths)))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def test_a_context_file_is_a_run_of_its_tool_calls_with_the_commands_that_failed() -> None:
    runs = _runs(MAIN, SUB)
    run = runs[f"kimi-cli.{SESSION}"]
    assert run.task.startswith("You will be provided with a partial code base and an issue statement")
    assert len(run.steps) == 47 and run.outcome is Outcome.unknown and run.model_id is None
    assert run.metadata["session_id"] == SESSION and run.metadata["context_tokens"] == 36444
    assert [s.action for s in run.steps[:2]] == ["ReadContext", "Bash"]
    assert run.steps[1].arguments == {"command": "cd /testbed && find . -name \"_column_transformer.py\" -type f"}
    failed = {s.index: s.error for s in run.steps if s.error}
    assert failed == {23: "ERROR: not found: /testbed/sklearn/compose/tests/test_column_transformer.py::"
                          "test_column_transformer_mixed_types (exit code 4)",
                      37: "E NameError: name 'VarianceThreshold' is not defined (exit code 1)"}
    # grep's exit code 1 with no output answers "no": Kimi wrote it as a failure, the step did not fail
    grep = run.steps[4]
    assert grep.arguments["command"].startswith("cd /testbed && grep -n") and grep.error is None
    assert grep.observation == "<system>Command failed with exit code: 1.</system>"
    assert run.steps[-1].action == "respond"
    sub = runs[f"kimi-cli.{SESSION}.read_1"]
    assert sub.metadata["is_subagent"] is True and sub.metadata["parent_session_id"] == SESSION
    assert sub.task.startswith("You are assisting the main agent by gathering project context.")
    assert len(sub.steps) == 20 and not any(s.error for s in sub.steps)


def _line(**record) -> str:
    return json.dumps(record)


def _session_folder(home: Path) -> Path:
    """A session as Kimi 1.x keeps it (``soul/context.py``, ``subagents/store.py``): a folder named by its id."""
    folder = home / ".kimi" / "sessions" / "5d41402abc4b2a76b9719d911017c592" / NEW_ID
    (folder / "subagents" / "a1").mkdir(parents=True)
    call = {"type": "function", "id": "tool_1", "function": {"name": "ReadFile", "arguments": '{"path": "app.py"}'}}
    (folder / "context.jsonl").write_text("\n".join([
        _line(role="_system_prompt", content="You are Kimi Code CLI"),
        _line(role="_checkpoint", id=0),
        _line(role="user", content=[{"type": "text", "text": "fix the crash in app.py"}]),
        _line(role="_usage", token_count=1200),
        _line(role="assistant", content=[{"type": "think", "think": "read it first", "encrypted": None},
                                         {"type": "text", "text": "Reading app.py."}], tool_calls=[call]),
        _line(role="tool", tool_call_id="tool_1", content=[
            {"type": "text", "text": "<system>ERROR: `app.py` does not exist.</system>"}]),
        _line(role="user", content=[{"type": "text", "text": "<system>CHECKPOINT 1</system>"}]),
        _line(role="user", content="it is in src/"),
        _line(role="assistant", content=[{"type": "text", "text": "Found it in src/app.py."}]),
    ]) + "\n")
    (folder / "wire.jsonl").write_text(_line(type="metadata", protocol_version="1.3") + "\n")
    (folder / "state.json").write_text("{}")
    (folder / "subagents" / "a1" / "context.jsonl").write_text("\n".join([
        _line(role="_checkpoint", id=0), _line(role="user", content="look for tests"),
        _line(role="assistant", content="None found.")]) + "\n")
    return folder


def test_a_home_walk_reads_a_session_folder_its_sub_agent_and_passes_its_other_files_over(tmp_path: Path) -> None:
    _session_folder(tmp_path)
    runs = _runs(tmp_path)
    assert set(runs) == {f"kimi-cli.{NEW_ID}", f"kimi-cli.{NEW_ID}.a1"}
    run = runs[f"kimi-cli.{NEW_ID}"]
    assert run.task == "fix the crash in app.py" and run.metadata["user_prompts"] == ["it is in src/"]
    read, answer = run.steps
    assert read.action == "ReadFile" and read.arguments == {"path": "app.py"}
    assert read.thought == "read it first\n\nReading app.py." and read.error == "`app.py` does not exist."
    assert answer.action == "respond" and answer.arguments == {"content": "Found it in src/app.py."}
    assert runs[f"kimi-cli.{NEW_ID}.a1"].metadata["parent_session_id"] == NEW_ID
    # a copy keeping the session's folder is the same run
    copy = tmp_path / "backup" / NEW_ID
    shutil.copytree(tmp_path / ".kimi" / "sessions" / "5d41402abc4b2a76b9719d911017c592" / NEW_ID, copy)
    assert set(_runs(copy / "context.jsonl")) == {f"kimi-cli.{NEW_ID}"}


def test_a_bad_context_file_is_refused_naming_the_file_and_the_line(newcomer, tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text(_line(role="_checkpoint", id=0) + "\n" + _line(role="system", content="x") + "\n")
    empty = tmp_path / f"{NEW_ID}.jsonl"
    empty.write_text(_line(role="_checkpoint", id=0) + "\n" + _line(role="_usage", token_count=3) + "\n")
    code, out, err = run_cli("ingest", str(odd), str(empty), "--dry-run")
    said = " ".join((out + err).split())
    assert f"{odd}: format kimi-cli; runs 0; rejected 1" in said, said
    assert "line 2: a message of role 'system'" in said, said
    assert f"{empty}: format kimi-cli; runs 0; rejected 1" in said and "no user prompt" in said, said
    wire = _session_folder(tmp_path / "home") / "wire.jsonl"
    code, out, err = run_cli("ingest", str(wire), "--dry-run")
    assert "the run is the context.jsonl beside it" in " ".join((out + err).split()), out + err


def test_the_cli_reads_the_sessions_and_finds_a_run_by_its_tool_error(newcomer) -> None:
    code, out, err = run_cli("ingest", str(KIMI), "--dry-run")
    said = out + err
    assert code == 0 and f"{MAIN}: format kimi-cli; runs 1; rejected 0; steps 47; errors 2" in said, said
    assert run_cli("ingest", str(KIMI))[0] == 0
    code, out, err = run_cli("search", "NameError: name 'VarianceThreshold' is not defined", "--json")
    assert code == 0 and not [line for line in unnoted(err) if "error" in line.lower()], err
    assert json.loads(out)[0]["trajectory_id"] == f"kimi-cli.{SESSION}"
    code, out, _ = run_cli("formats", "--json")
    [kimi] = [f for f in json.loads(out) if f["format"] == "kimi-cli"]
    assert "Kimi" in kimi["description"], kimi
