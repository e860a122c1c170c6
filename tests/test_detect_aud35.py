"""Round 35 (DET35): a file that merely quotes a format's words is no run of it, and no sub-agent is dropped unsaid.
Fixtures: tests/fixtures/mini-swe-agent/.aud35 (mini-swe-agent's own docs and prompt config),
tests/fixtures/cursor-cli/.aud35 (README.md there says where from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini-swe-agent" / ".aud35"
CURSOR = FIXTURES / "cursor-cli" / ".aud35" / "subagent-no-agentid.jsonl"


@pytest.mark.parametrize("name", ["output_files.md", "default.yaml"])
def test_a_page_or_prompt_config_quoting_mini_swe_agent_is_no_run(name: str) -> None:
    """Bug: mini-swe-agent's signature (its submit marker, its action fence, ``"mini_version"``) was searched in any
    file's head, so its own docs page and prompt template were "mini-swe-agent" runs, rejected line by line as
    malformed JSON. Only a JSON document's head (a message's text quoting the marks) is looked in now."""
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(MINI / name)


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
