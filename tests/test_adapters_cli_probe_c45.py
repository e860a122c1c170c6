"""Claude Code 2.1.332 and Codex 0.171 files found by probe C (round p45): a sub-agent's newer ``.meta.json``, the
CLI's frame around a sub-agent's report, a ``/review`` session's synthetic turn. The fixtures
(``claude-code/.real/probe-c45/``, ``codex-cli/.real/probe-c45/``) are written by the released CLIs, trimmed; their
origin is in each folder's ``SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
CC = FIXTURES / "claude-code" / ".real" / "probe-c45"


@pytest.mark.parametrize("meta", [
    CC / "bg-agent" / "subagents" / "agent-aa125eb4df964d3e8.meta.json",
    CC / "fg-agent" / "subagents" / "agent-a786a39ac5909245e.meta.json",
], ids=["background-12-keys", "foreground-11-keys"])
def test_a_2_1_3xx_subagents_metadata_is_passed_over(meta: Path) -> None:
    """Bug (probe C, C2): 2.1.332 writes 11-12 keys into ``agent-<id>.meta.json`` (``toolUseId``, ``spawnDepth``,
    ``requestShape``, ``model``, ``finished``, ...); it was told by its key count, so every sub-agent's file was
    "unrecognised dump format" and each ingest of a user's projects exited 3. It is one agent's flat launch
    settings, whatever keys a version adds: passed over."""
    with pytest.raises(SideFile, match="no run in this file: a Claude Code subagent's metadata"):
        detect_format(meta)
    assert list(read_dump(meta.parent, tenant="acme")) == []  # walked: passed over, not a rejection


HAND_BACK = "[Subagent hand-back]"


@pytest.mark.parametrize("session, before", [
    ("2e7ee923-4923-48c2-9a69-c94699d52a44.jsonl", ""),
    ("e2be68a6-9399-47a4-8754-e336d3444edd.jsonl", "<tools-used-before-summary>Bash</tools-used-before-summary>\n"),
], ids=["agent", "agent-with-a-note"])
def test_a_subagents_report_is_the_agent_calls_observation_without_the_clis_frame(session: str, before: str) -> None:
    """Bug (probe C, C5): 2.1.332 frames a foreground subagent's report ("[Subagent hand-back] The text below is the
    final report of a subagent ... The report follows:", the report indented under it); the ~500 characters, the same
    in every Agent result, were the observation, ten times the report, and drew unrelated Agent steps together in
    search. The frame is the CLI's: the report (un-indented) is the observation; the CLI's notes above the frame and
    its ``agentId`` / ``<usage>`` lines after it stay, as in earlier versions' results."""
    [run] = [r.trajectory for r in read_dump(CC / "hand-back" / session, tenant="acme")]
    [agent] = [s for s in run.steps if s.action == "Agent"]
    assert HAND_BACK not in agent.observation
    assert agent.observation.startswith(before + "The folder holds notes.txt only.\nagentId: a")
    assert agent.observation.endswith("</usage>")


CODEX = FIXTURES / "codex-cli" / ".real" / "probe-c45"
REVIEW_ROLLOUT = "rollout-2026-12-04T22-17-26-01a24322-3a20-74c1-b45c-b3f17cb052e7.jsonl"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_a_codex_review_sessions_task_is_the_review_asked_for_not_its_results() -> None:
    """Bug (probe C, C1): after ``codex exec review`` (``/review``), Codex writes the review's results into the parent
    session as a user message, ``<user_action><context>User initiated a review task. ...<results>...``, which its
    own turn rebuilding skips as synthetic; it was the run's task, the answer presented as the question. The task is
    the review asked for, as Codex shows it (``/review`` and its ``user_facing_hint``)."""
    run = only_run(CODEX / "review" / REVIEW_ROLLOUT)
    assert run.task == "/review current changes"
    assert not run.metadata.get("user_prompts")
    assert "The new mean() crashes on an empty list." in run.steps[-1].arguments["content"]  # the answer stays


def test_a_prompt_typed_after_a_review_is_the_task_and_the_synthetic_block_no_prompt() -> None:
    """Bug (probe C, C1): resumed with a typed request, the session's task was still the ``<user_action>`` block and
    the user's request only in ``user_prompts``. Nothing was typed before it: it is the task; the review asked for
    before it is kept as a review request."""
    run = only_run(CODEX / "review-resumed" / REVIEW_ROLLOUT)
    assert run.task == "Fix the finding and list the folder"
    assert not run.metadata.get("user_prompts")
    assert run.metadata["review_requests"] == ["/review current changes"]
    assert [s.action for s in run.steps] == ["respond", "exec_command", "respond"]
