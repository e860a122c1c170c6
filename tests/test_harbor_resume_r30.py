"""Round 30 (HARB30): Harbor multi-step trials, continued.

A step that resumed the step before's Claude Code session (``resume_trajectory``: Harbor's claude-code agent runs
``claude --continue --print`` in every step after the first, and copies the agent logs into each step's folder) is
its own turns, as a resumed Codex step is; Claude Code 2.x appends them to the same ``<session id>.jsonl``.

Real files (see each fixture folder's README.md): Claude Code 2.1.332's session after each of two steps run as
Harbor runs them (``claude-code/.harb30/resume-2.1.332``), laid out in the two-step trial of
``test_harbor_steps_subagents``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from test_harbor_steps_subagents import _multi_step_trial, _runs

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE_RESUME = FIXTURES / "claude-code" / ".harb30" / "resume-2.1.332"


def _claude_resumed_trial(tmp_path: Path) -> Path:
    """The two-step trial run with ``resume_trajectory`` by Claude Code: each step's session and ``claude-code.txt``
    where Harbor keeps them (``agent/sessions/projects/-app/``, ``agent/claude-code.txt``)."""
    trial = _multi_step_trial(tmp_path)
    shutil.rmtree(trial / "steps")
    for step in ("write", "test"):
        agent = trial / "steps" / step / "agent"
        [session] = (CLAUDE_RESUME / step).glob("*.jsonl")
        (agent / "sessions" / "projects" / "-app").mkdir(parents=True)
        shutil.copy(session, agent / "sessions" / "projects" / "-app" / session.name)
        shutil.copy(CLAUDE_RESUME / step / "claude-code.txt", agent / "claude-code.txt")
    return trial


def test_a_claude_code_step_continued_from_the_one_before_is_its_own_turns(tmp_path: Path) -> None:
    """``claude --continue`` appends the later step's turns to the session file Harbor copied into the earlier
    step's folder: the later step's run is its own prompt and commands under its own verdict (it was the whole
    session: the earlier step's task and ``echo`` graded by the later step's 0.0)."""
    runs = {r.metadata["trial_step"]: r for r in _runs(_claude_resumed_trial(tmp_path))}
    write, test = runs["write"], runs["test"]
    assert (write.task, write.reward) == ("STEP ONE: write hello.txt containing hello.", 1.0)
    assert (test.task, test.reward) == ("STEP TWO: show what hello.txt says.", 0.0)
    assert "cat hello.txt" in " ".join(str(s.arguments) for s in test.steps)
    assert "echo hello" not in " ".join(str(s.arguments) for s in test.steps)
    assert "echo hello" in " ".join(str(s.arguments) for s in write.steps)
    assert test.metadata["resumed_from_step"] == "write" and "resumed_from_step" not in write.metadata
    assert test.metadata.get("user_prompts") is None
    assert write.steps[-1].started_at < test.created_at <= test.steps[0].started_at
