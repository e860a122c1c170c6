"""Cursor's agent transcripts (``~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl``, the IDE's agent
and the CLI's, 2.x and 2026): refused as an unrecognised dump before round 36. Fixtures:
tests/fixtures/cursor-transcript/.aud36 (hand-built to the writer's code and the shapes others observed: README.md
there says from where)."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

ROOT = Path(__file__).parent / "fixtures" / "cursor-transcript" / ".aud36" / "Users-dev-demo" / "agent-transcripts"
PARENT_ID = "5b0e3c1a-8d2f-4f6b-9a7e-1c2d3e4f5a6b"
CHILD_ID = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
PARENT = ROOT / PARENT_ID / f"{PARENT_ID}.jsonl"
CHILD = ROOT / PARENT_ID / "subagents" / f"{CHILD_ID}.jsonl"


def _runs(path: Path) -> dict[str, object]:
    results = list(read_inputs([path]))
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    return {r.trajectory.trajectory_id: r.trajectory for r in results}


def test_a_transcript_is_one_run_its_task_the_first_query_its_steps_the_calls() -> None:
    assert detect_format(PARENT) == "cursor-transcript"
    [run] = _runs(PARENT).values()
    assert run.trajectory_id == f"cursor-transcript.{PARENT_ID}"  # the file's name: stable
    assert run.task == "Fix the failing test in tests/test_parse.py"  # not the overview, nor the tags around it
    assert run.metadata["overview"].startswith("Fixed the failing parser test")
    assert run.created_at.isoformat() == "2026-06-02T11:20:00+08:00"
    assert [s.action for s in run.steps] == ["Shell", "ReadFile", "Subagent", "ApplyPatch", "respond", "StrReplace",
                                             "respond"]
    shell, read, task, patch = run.steps[:4]
    assert shell.arguments["command"] == "pytest -q tests/test_parse.py"
    assert shell.thought == "I'll run the tests first."  # the redacted thinking's marker left out
    assert read.thought is None and task.arguments["prompt"] == "Find every caller of parse_line"
    assert patch.arguments["input"].startswith("*** Begin Patch")  # a string input kept
    assert all(s.observation is None and s.error is None for s in run.steps)  # no result is written
    # Cursor's own "Your previous response was interrupted..." is no prompt of the user's
    assert run.metadata["user_prompts"] == ["Also add a test for CRLF lines."]
    assert run.metadata["cursor_prompts"] == 1
    # the user's stop mid-run is no error; the error the last turn ended on, with nothing after it, is the run's
    assert run.outcome == Outcome.infra_error and run.failure.error.startswith("Connection error")


def test_a_subagents_transcript_is_a_run_of_its_own_not_steps_of_its_parents() -> None:
    runs = _runs(ROOT)
    parent, child = runs[f"cursor-transcript.{PARENT_ID}"], runs[f"cursor-transcript.{CHILD_ID}"]
    assert len(runs) == 2 and "Grep" not in [s.action for s in parent.steps]
    assert child.task == "Find every caller of parse_line" and [s.action for s in child.steps] == ["Grep", "respond"]
    assert child.metadata["is_subagent"] is True and child.metadata["parent_session_id"] == PARENT_ID
    assert "is_subagent" not in parent.metadata and child.outcome == Outcome.unknown


def _write(path: Path, *lines: dict) -> Path:
    """A transcript as Cursor's writer writes it: compact JSON lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))
    return path


def _user(text: str) -> dict:
    return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}


def _said(*parts: dict) -> dict:
    return {"role": "assistant", "message": {"content": list(parts)}}


def test_a_run_stopped_by_the_user_is_no_error_and_context_alone_is_no_task(tmp_path: Path) -> None:
    def write(name: str, *lines: dict) -> Path:
        return _write(tmp_path / f"{name}.jsonl", *lines)

    user = _user
    said = {"role": "assistant", "message": {"content": [{"type": "text", "text": "Working on it."}]}}
    stopped = write("a", user("<user_query>go</user_query>"), said,
                    {"type": "turn_ended", "status": "error", "error": "User aborted request"})
    assert _runs(stopped)["cursor-transcript.a"].outcome == Outcome.unknown
    context = write("b", user("<timestamp>Friday</timestamp>\n<workspace>x</workspace>"), said)
    [result] = list(read_inputs([context]))
    assert not result.ok and "no user query in this Cursor agent transcript" in result.error


def test_a_transcript_of_turn_markers_alone_is_passed_over(newcomer, tmp_path: Path) -> None:  # noqa: F811
    """Cursor's IDE writes an agent chat's turn ends to its transcript, its messages only in its own store."""
    (tmp_path / "c1.jsonl").write_text('{"type":"turn_ended","status":"success"}\n')
    code, out, err = run_cli("ingest", "--dry-run", str(tmp_path / "c1.jsonl"))
    assert code == 0, (out, err)
    assert "runs 0; rejected 0" in out and "turn markers only" in out + err, (out, err)


def test_the_cli_ingests_a_projects_transcripts(newcomer) -> None:  # noqa: F811 - the fixture
    code, out, err = run_cli("ingest", "--dry-run", str(ROOT))
    assert code == 0, err
    assert out.count("format cursor-transcript; runs 1; rejected 0") == 2, out


def test_an_error_turn_followed_by_a_turn_that_ended_well_is_no_error(tmp_path: Path) -> None:
    """Turn ends come back to back at times (Einsia/agent-git's turn-boundaries.txt): the last one tells."""
    path = _write(tmp_path / "e.jsonl", _user("<user_query>go</user_query>"), _said({"type": "text", "text": "ok"}),
                  {"type": "turn_ended", "status": "error", "error": "You have hit your usage limit."},
                  {"type": "turn_ended", "status": "success"})
    run = _runs(path)["cursor-transcript.e"]
    assert run.outcome == Outcome.unknown and run.metadata["last_turn_status"] == "success"


def test_cursors_own_texts_are_no_prompts_and_a_forked_subagents_task_is_its_brief(tmp_path: Path) -> None:
    """Cursor writes a user text itself to wake the agent after a sub-agent; a sub-agent it forked ("Start
    multitasking") has its parent's history copied before the brief its parent gave it (texts as observed on real
    transcripts: Einsia/agent-git's synthetic-user-text.txt, a real sub-agent transcript rendered to Markdown)."""
    parent = _write(tmp_path / "p" / "p.jsonl", _user("<user_query>Start multitasking</user_query>"),
                    _said({"type": "tool_use", "name": "Task", "input": {"prompt": "You are the forked subagent"}}),
                    _user("<user_query>\nPerform any necessary follow-up actions in response to the subagent "
                          "completion above.\n</user_query>"), _said({"type": "text", "text": "Done."}))
    run = _runs(parent)["cursor-transcript.p"]
    assert run.task == "Start multitasking" and "user_prompts" not in run.metadata
    assert run.metadata["cursor_prompts"] == 1
    child = _write(tmp_path / "p" / "subagents" / "c.jsonl", _user("<user_query>Start multitasking</user_query>"),
                   _said({"type": "tool_use", "name": "Shell", "input": {"command": "ls"}}),
                   _user("<user_query>\nYou are the forked subagent; continue executing your task.\n\n"
                         "Context: verify the Sessions refactor.\n</user_query>"),
                   _said({"type": "tool_use", "name": "Grep", "input": {"pattern": "sessions/"}}))
    run = _runs(child)["cursor-transcript.c"]
    assert run.task == "Context: verify the Sessions refactor." and [s.action for s in run.steps] == ["Grep"]
    assert run.metadata["forked_subagent"] is True and run.metadata["parent_session_id"] == "p"


def test_redacted_thoughts_a_call_with_no_input_and_a_name_with_a_newline(tmp_path: Path) -> None:
    """The writer joins thinking parts with a newline (two redacted ones: two markers), leaves an undefined
    ``input`` out, and once wrote a tool name with a path after a newline (potsherd's note); a user may type the
    query tag's text."""
    path = _write(tmp_path / "r.jsonl", _user("<user_query>go</user_query>"),
                  _said({"type": "text", "text": "Looking.\n\n[REDACTED]\n[REDACTED]"},
                        {"type": "tool_use", "name": "NoInput"}),
                  _said({"type": "tool_use", "name": "Grep path\n/Users/example", "input": {"pattern": "x"}}),
                  _user("<user_query>\nwhy does </user_query> end it?\n</user_query>\n<user_query>and</user_query>"))
    run = _runs(path)["cursor-transcript.r"]
    assert run.metadata["user_prompts"] == ["why does </user_query> end it? and"]  # the tag's text in a query
    first, second = run.steps
    assert (first.thought, first.action, first.arguments) == ("Looking.", "NoInput", {})
    assert second.action == "Grep path"  # its first line: the name as written, less the path


def test_a_big_paste_of_unclosed_tags_is_read_at_once(tmp_path: Path) -> None:
    """A user message of context alone (no ``<user_query>``) whose lowercase tags and ``<timestamp>`` tags never
    close is read as typed, at once: looking for each tag's close from every opening took minutes (review RT1, 1)."""
    pasted = "<timestamp>x " * 15000 + "<li>item\n" * 22000  # about 400 KB
    path = _write(tmp_path / "big.jsonl", _user(pasted), _said({"type": "text", "text": "ok"}))
    run = _runs(path)["cursor-transcript.big"]
    assert run.task.startswith("<timestamp>x <timestamp>x ") and run.task.endswith("<li>item")  # as typed


def test_a_transcript_whose_only_user_texts_are_cursors_own_is_refused_for_that(tmp_path: Path) -> None:
    """The refusal names the cause: the file has user texts, but Cursor wrote them (review RT1, 6)."""
    path = _write(tmp_path / "w.jsonl", _user("<user_query>Perform any necessary follow-up actions in response to "
                                               "the subagent completion above.</user_query>"),
                  _said({"type": "text", "text": "Done."}))
    [result] = list(read_inputs([path]))
    assert not result.ok and "its 1 user text(s) are Cursor's own" in result.error, result.error
