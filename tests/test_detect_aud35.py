"""Round 35 (DET35): a file that merely quotes a format's words is no run of it, and no sub-agent is dropped unsaid.
Fixtures: tests/fixtures/mini-swe-agent/.aud35 (mini-swe-agent's own docs and prompt config),
tests/fixtures/cursor-cli/.aud35 (README.md there says where from)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini-swe-agent" / ".aud35"
REAL_MINI = FIXTURES / "mini-swe-agent" / ".real"
CURSOR = FIXTURES / "cursor-cli" / ".aud35" / "subagent-no-agentid.jsonl"


@pytest.mark.parametrize(
    "path", [MINI / "output_files.md", MINI / "default.yaml", REAL_MINI / "mini-2.4.6-colours" / "script.json"])
def test_a_file_quoting_mini_swe_agent_is_no_run(path: Path) -> None:
    """Bug: mini-swe-agent's signature (its submit marker, its action fence, ``"mini_version"``) was searched in any
    file's head, so its own docs page and prompt template were "mini-swe-agent" runs, rejected line by line as
    malformed JSON, and a fake model's script (a JSON list of ``[prompt, command]`` pairs, quoting the marks outside
    any message) was a run too. Only a JSON document's head, the marks in a message's text, is looked in now: the
    user sees one "unrecognised" rejection for the file."""
    results = list(read_inputs([path]))
    assert len(results) == 1 and "unrecognised dump format" in str(results[0].error), [r.error for r in results]


def test_a_bare_mini_swe_agent_message_list_not_named_traj_json_is_still_a_run(tmp_path: Path) -> None:
    """Guard of the fix above: a real run saved as a bare message list (no envelope keys) under another name than
    ``.traj.json`` is told by its messages quoting the prompt's marks."""
    path = tmp_path / "issue.json"
    path.write_bytes((REAL_MINI / "test_data" / "github_issue.traj.json").read_bytes())
    assert detect_format(path) == "mini-swe-agent"
    results = list(read_inputs([path]))
    assert len(results) == 1 and results[0].ok and len(results[0].trajectory.steps) == 10


def test_a_cursor_sub_agent_without_agent_id_is_its_own_run_named_by_its_call() -> None:
    """Bug: a ``taskToolCall`` whose result holds the sub-agent's conversation but no ``agentId`` was dropped unsaid:
    one run read where the stream holds two. It is a run of its own, named by the task call's id (fixed in the
    file: reading it again gives the same id)."""
    results = list(read_inputs([CURSOR]))
    assert all(r.ok for r in results), [r.error for r in results]
    run, sub = (r.trajectory for r in results)
    assert sub.trajectory_id == f"{run.trajectory_id.rsplit('.', 1)[0]}.toolu_01FR6cpkKa7wuac2prxDRYJZ"
    assert sub.metadata["is_subagent"] is True and sub.metadata["parent_session_id"] == run.metadata["session_id"]
    assert [s.action for s in sub.steps] == ["shell", "respond"] and sub.steps[0].observation == "master\n"
    assert [r.trajectory.trajectory_id for r in read_inputs([CURSOR])] == [run.trajectory_id, sub.trajectory_id]


def test_cursor_sub_agents_without_any_id_are_told_apart_by_where_they_stand(tmp_path: Path) -> None:
    """Review of DET35: a sub-agent with neither ``agentId`` nor a call id was named by a digest of its task call's
    args, so the same task run twice was one run read twice (the second dropped as a repeat) and a rejection named
    a digest nobody finds in the file. It is named by the line of the call that ran it."""
    lines = [json.loads(line) for line in CURSOR.read_text().splitlines()]
    for line in lines:
        if "taskToolCall" in line.get("tool_call", {}):
            line.pop("call_id")
    stream = tmp_path / "twice.jsonl"
    stream.write_text("".join(json.dumps(line) + "\n" for line in lines[:10] + lines[8:10] + lines[10:]))
    results = list(read_inputs([stream]))
    assert all(r.ok for r in results), [r.error for r in results]
    session = results[0].trajectory.trajectory_id.rsplit(".", 1)[0]
    assert [r.trajectory.trajectory_id for r in results[1:]] == [f"{session}.line10", f"{session}.line12"]
