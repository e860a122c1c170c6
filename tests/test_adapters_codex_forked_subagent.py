"""Codex sub-agents spawned with their parent's history, read from real rollouts the unmodified Codex 0.171.0 wrote
(audit AUDCX32, round 32; origin in ``codex-cli/.aud32/README.md``): multi-agent v1's ``spawn_agent`` with
``fork_context``, and v2's (``--enable multi_agent_v2``), which forks by default (``fork_turns: all``). A sub-agent's
rollout starts with a copy of its parent's thread (the parent's meta, prompts, answers, events; in v2 its calls
too) before its own first line, ``subagent_history_start_ordinal``; a v2 sub-agent's task is no user message but
the ``agent_message`` its parent sent it (``Message Type: NEW_TASK``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures" / "codex-cli" / ".aud32"
CHILD = FIXTURES / "rollout-2026-12-07T10-31-43-01a2500f-335e-7ee2-90d9-a890bced9bf1.jsonl"
V2_CHILD = FIXTURES / "rollout-2026-12-07T10-34-02-01a25011-52d5-76c0-b8af-33f24a63404d.jsonl"


def _derived(tmp_path: Path, task: str, envelope: str | None = None) -> Path:
    """The v2 sub-agent's rollout with its task message's encrypted part (and, if given, its envelope) replaced."""
    lines = [json.loads(line) for line in V2_CHILD.read_text().splitlines()]
    for line in lines:
        if line["payload"].get("type") == "agent_message":
            header, sealed = line["payload"]["content"]
            sealed["encrypted_content"] = task
            header["text"] = envelope or header["text"]
    path = tmp_path / V2_CHILD.name
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    return path


def _run(rollout: Path = CHILD):
    [parsed] = list(read_dump(rollout, tenant="acme"))
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


def test_a_multi_agent_v2_sub_agents_task_is_the_task_its_parent_sent() -> None:
    """A v2 sub-agent was read as its parent's run: the parent's first prompt its task, the parent's answer, ``ls``
    and ``spawn_agent`` call its first steps (and its parent's turn, marked aborted when the fork was taken, its
    abort). Read without that copy, it held no user message and was refused. Its task is its parent's
    ``NEW_TASK`` message, the payload Codex keeps in the message's ``encrypted_content`` part (plain here: the
    provider did not encrypt it)."""
    run = _run(V2_CHILD)
    assert run.task == "WORKER TASK: count the lines of notes.txt and report the number."
    assert [s.action for s in run.steps] == ["exec_command", "respond"]
    assert run.steps[0].arguments == {"cmd": "wc -l notes.txt"}
    assert run.metadata["agent_path"] == "/root/counter" and run.metadata["is_subagent"] is True
    assert not run.metadata.get("user_prompts") and not run.metadata.get("turns_aborted")


@pytest.mark.parametrize(("sent", "task"), [
    ("数一数notes.txt的行数并报告。", "数一数notes.txt的行数并报告。"),  # a plain task without spaces was read as sealed
    ("Refactor", "Refactor"),
    ("gAAAAABpNk3x_Zr8bXo1-QeYw2v0hT9cLmZtU4aFq7sRk==", "[encrypted task] /root/counter"),
])
def test_a_v2_task_is_read_as_sent_unless_its_provider_encrypted_it(tmp_path: Path, sent: str, task: str) -> None:
    """The task's words are what Codex keeps in the message's ``encrypted_content`` part: plain from a provider that
    does not encrypt them (CJK or one word, which has no space, too), a Fernet token from OpenAI's backend, which
    reads as a placeholder naming the sub-agent (the token says nothing). Derived from the real v2 rollout."""
    assert _run(_derived(tmp_path, sent)).task == task


def test_a_v2_task_whose_envelope_has_no_payload_line_is_read(tmp_path: Path) -> None:
    """An envelope that ends at its sender (no ``Payload:`` line) before the task's part was refused: no prompt."""
    envelope = "Message Type: NEW_TASK\nTask name: /root/counter\nSender: /root\n"
    assert _run(_derived(tmp_path, "Count the lines.", envelope)).task == "Count the lines."


def test_a_sub_agent_that_wrote_nothing_of_its_own_is_refused_saying_so(tmp_path: Path) -> None:
    """A sub-agent stopped before its first own line (here: the start ordinal past the file's end) holds only its
    parent's copied history; it was refused as "only session_meta lines", which hid that the file has 30."""
    lines = V2_CHILD.read_text().splitlines()
    meta = json.loads(lines[0])
    meta["payload"]["subagent_history_start_ordinal"] = 1000
    path = tmp_path / V2_CHILD.name
    path.write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    [parsed] = list(read_dump(path, tenant="acme"))
    assert "all 29 lines after its session meta come before its subagent_history_start_ordinal 1000" in parsed.error
    assert "wrote nothing of its own" in parsed.error
