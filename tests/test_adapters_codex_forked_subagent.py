"""A Codex sub-agent spawned with its parent's history (``spawn_agent`` with ``fork_context``), read from a real
rollout the unmodified Codex 0.171.0 wrote (audit AUDCX32, round 32; origin in ``codex-cli/.aud32/README.md``):
the sub-agent's rollout starts with a copy of its parent's thread (the parent's meta, prompts, final answers and
events) before its own first line, ``subagent_history_start_ordinal``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures" / "codex-cli" / ".aud32"
CHILD = FIXTURES / "rollout-2026-12-07T10-31-43-01a2500f-335e-7ee2-90d9-a890bced9bf1.jsonl"


def _run():
    [parsed] = list(read_dump(CHILD, tenant="acme"))
    assert parsed.error is None
    return parsed.trajectory


def test_a_forked_sub_agent_is_its_own_steps_not_its_parents() -> None:
    """The parent's earlier answer ("Paris is the capital of France.", a final answer Codex copies into the fork)
    was read as the sub-agent's first step: the helper's run held its parent's work. Its run is its own task, its
    command and its answer."""
    run = _run()
    assert run.trajectory_id == "codex.01a2500f-335e-7ee2-90d9-a890bced9bf1"
    assert run.task == "WORKER TASK: count the lines of notes.txt and report the number."
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("exec_command", {"cmd": "wc -l notes.txt"}), ("respond", {"content": "notes.txt has 3 lines."})]
    assert run.metadata["is_subagent"] is True
    assert run.metadata["parent_thread_id"] == "01a2500f-2f28-7592-ae83-d9100c15f164"
    assert not run.metadata.get("user_prompts")  # the parent's two prompts are none of the helper's
