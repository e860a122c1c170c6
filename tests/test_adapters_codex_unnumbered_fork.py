"""Codex sub-agents forked with their parent's history by Codex 0.147 and earlier, which number no rollout lines and
name no ``subagent_history_start_ordinal``: real rollouts the unmodified Codex 0.114.0 (multi-agent v1,
``fork_context``) and 0.147.0 (v1, and v2's default fork) wrote (audit AUDCX33, round 33; origin in
``codex-cli/.aud33/README.md``). The parent's thread is copied after the sub-agent's meta, its spawning turn left
open; the sub-agent's own lines start with the next ``task_started``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures" / "codex-cli" / ".aud33"
TASK = "WORKER TASK: count the lines of notes.txt and report the number."


@pytest.mark.parametrize(("name", "steps"), [
    ("rollout-2026-12-07T13-21-15-01a250aa-6bdd-78c2-95b8-87d2015646a8.jsonl", ["respond"]),  # 0.114.0, v1
    ("rollout-2026-12-07T13-21-44-01a250aa-dd2b-7c31-9d9a-2451f6d98376.jsonl", ["exec_command", "respond"]),  # 0.147.0
    ("rollout-2026-12-07T13-22-13-01a250ab-4d55-7ec3-86b2-ecf9a6ad9ba9.jsonl", ["exec_command", "respond"]),  # v2
])
def test_a_sub_agent_forked_before_0_148_is_its_own_task_and_steps(name: str, steps: list[str]) -> None:
    """Read whole, the sub-agent's task was its parent's first prompt ("FIRST QUESTION: ..."), the parent's answer
    (and in 0.114 its ``ls`` and ``spawn_agent`` calls) its first steps, and the parent's later prompt one of its
    ``user_prompts``: the helper's run was filed under its parent's question."""
    [parsed] = list(read_dump(FIXTURES / name, tenant="acme"))
    assert parsed.error is None
    run = parsed.trajectory
    assert run.task == TASK
    assert [s.action for s in run.steps] == steps
    assert steps[-1] == "respond" and run.steps[-1].arguments == {"content": "notes.txt has 3 lines."}
    assert run.metadata["is_subagent"] is True and not run.metadata.get("user_prompts")


V125_CHILD = FIXTURES / "rollout-2026-12-07T13-25-40-01a250ae-736e-7be0-a690-6c55d508821b.jsonl"
V125_PARENT = FIXTURES / "rollout-2026-12-07T13-25-38-01a250ae-6d6f-7ba2-8b95-28803066724d.jsonl"


def _run(path: Path):
    [parsed] = list(read_dump(path, tenant="acme"))
    assert parsed.error is None
    return parsed.trajectory


@pytest.mark.parametrize(("child", "steps"), [
    (V125_CHILD, ["respond"]),
    (FIXTURES / "rollout-2026-12-07T13-27-33-01a250b0-3137-7de2-a630-ca5863af2092.jsonl", ["exec_command", "respond"]),
])
def test_an_early_v2_sub_agents_task_is_the_message_its_parent_sent_as_json(child: Path, steps: list[str]) -> None:
    """Codex 0.125 and 0.138's multi-agent v2 record the task sent to a sub-agent as an assistant message whose text
    is the message's JSON (``{"author", "recipient", "content", "trigger_turn"}``; 0.138 puts the words in its
    ``encrypted_content``, plain from a provider that does not encrypt them), no user message: read whole, the forked
    sub-agent's task was its parent's first prompt; without the copy, it had no prompt and was refused."""
    run = _run(child)
    assert run.task == TASK
    assert run.metadata["agent_path"] == "/root/counter" and not run.metadata.get("user_prompts")
    assert [s.action for s in run.steps] == steps


def test_an_early_v2_sub_agents_report_is_not_its_parents_answer() -> None:
    """The sub-agent's report to its parent (``<subagent_notification>`` in that JSON, recorded as an assistant
    message) was read as the parent model's answer, a step whose words were the JSON."""
    run = _run(V125_PARENT)
    assert [s.action for s in run.steps] == ["respond", "exec_command", "spawn_agent", "wait_agent", "respond"]
    assert not any('"author"' in str(s.arguments) for s in run.steps)


@pytest.mark.parametrize(("parent", "report"), [
    (V125_PARENT, "/root/counter: The helper counted 3 lines in notes.txt."),  # 0.125: <subagent_notification>
    (FIXTURES / "rollout-2026-12-07T10-34-01-01a25011-4e6d-7f42-9022-ece7c7b195c4.jsonl",  # 0.171: FINAL_ANSWER
     "/root/counter: notes.txt has 3 lines."),
])
def test_a_v2_parents_wait_ends_with_its_sub_agents_report(parent: Path, report: str) -> None:
    """A v2 parent's ``wait_agent`` output says only "Wait completed."; the sub-agent's answer comes after it as a
    message between agents, which was read as nothing (0.171) or as the parent's own answer (0.125): the parent's
    run never had its helper's answer."""
    wait = _run(parent).steps[-2]
    assert wait.action.endswith("wait_agent")
    assert wait.observation == '{"message":"Wait completed.","timed_out":false}\n\n' + report


FIX = Path(__file__).parent / "fixtures" / "codex-cli" / ".aud33fix"


@pytest.mark.parametrize(("name", "steps"), [
    ("rollout-2026-12-07T13-40-22-01a250bb-e99a-7f50-b118-cc607868e3d2.jsonl", ["exec_command", "respond"]),  # 0.114
    ("rollout-2026-12-07T13-40-59-01a250bc-7d10-79d1-a240-cc940e919b13.jsonl", ["exec_command", "respond"]),  # 0.147
])
def test_a_sub_agent_of_a_parent_killed_mid_turn_starts_at_its_own_turn(name: str, steps: list[str]) -> None:
    """The parent was killed in its first turn, then resumed: its copy holds that turn open, so the first turn
    started while another was open was the parent's next one, "Now list the files...", taken as the sub-agent's
    task and its ``ls`` and ``spawn_agent`` as the sub-agent's steps (real 0.114.0 and 0.147.0 rollouts). The
    sub-agent's own turn is the first one made after it (its UUIDv7 turn id not older than its thread id)."""
    run = _run(FIX / name)
    assert run.task == TASK
    assert [s.action for s in run.steps] == steps and run.steps[-1].arguments == {"content": "notes.txt has 3 lines."}
    assert not run.metadata.get("user_prompts")


def test_a_nested_forked_sub_agent_is_its_own_run_not_its_parent_sub_agents() -> None:
    """A sub-agent forked by a sub-agent (``agents.max_depth`` 2) has its parent's whole rollout copied, that
    sub-agent's own turn open while it spawns: the open-turn rule took the parent's turn, and its steps, for its own
    (an edited copy of the real 0.114.0 sub-agent above, see the fixtures' README)."""
    run = _run(FIX / "rollout-2026-12-07T13-40-22-01a250bb-ea40-7c3e-9d5b-5f0e2a6b1c7d.jsonl")
    assert run.task == "GRANDCHILD TASK: say how many words notes.txt has."
    assert [s.action for s in run.steps] == ["respond"] and not run.metadata.get("user_prompts")


def test_an_answer_that_is_json_of_a_message_between_agents_stays_the_answer(tmp_path: Path) -> None:
    """A model's own answer whose text is a JSON object of ``author``, ``recipient``, ``content`` and
    ``trigger_turn`` (asked for it, say) was taken for a message between agents and vanished; 0.125 and 0.138's
    messages name ``other_recipients`` too (the 0.171 parent, its closing answer replaced)."""
    source = FIXTURES / "rollout-2026-12-07T10-34-01-01a25011-4e6d-7f42-9022-ece7c7b195c4.jsonl"
    answer = '{"author":"me","recipient":"you","content":"hello","trigger_turn":false}'
    path = tmp_path / source.name
    path.write_text(source.read_text().replace("The helper counted 3 lines in notes.txt.", json.dumps(answer)[1:-1]))
    run = _run(path)
    assert run.steps[-1].action == "respond" and run.steps[-1].arguments == {"content": answer}


def test_a_v2_report_no_wait_received_ends_the_spawn_that_named_its_sub_agent(tmp_path: Path) -> None:
    """A parent that did not wait gets its sub-agent's report later, after no ``wait_agent`` step: it was kept
    nowhere, the helper's answer lost (the 0.125 parent, its wait call and output left out)."""
    lines = V125_PARENT.read_text().splitlines(keepends=True)
    path = tmp_path / V125_PARENT.name
    path.write_text("".join(line for line in lines if '"call_7"' not in line))
    spawn = _run(path).steps[-2]
    assert spawn.action == "spawn_agent"
    assert spawn.observation.endswith("\n\n/root/counter: The helper counted 3 lines in notes.txt.")


def test_a_sub_agents_first_turn_left_open_after_a_closed_copy_is_kept(tmp_path: Path) -> None:
    """A copy whose spawning turn is closed (a ``turn_aborted`` copied), then the sub-agent's first turn left open
    and a second one: the first turn started while another was open was the second, the ``WORKER TASK`` turn lost
    (the real 0.114.0 sub-agent, edited so)."""
    source = FIXTURES / "rollout-2026-12-07T13-21-15-01a250aa-6bdd-78c2-95b8-87d2015646a8.jsonl"
    lines = source.read_text().splitlines(keepends=True)
    aborted = '{"timestamp":"2026-12-07T13:21:15.900Z","type":"event_msg","payload":{"type":"turn_aborted"}}\n'
    second = "".join(lines[23:32]).replace("WORKER TASK: count the lines of notes.txt and report the number.",
                                           "FOLLOW-UP: and words?")
    path = tmp_path / source.name
    path.write_text("".join([*lines[:23], aborted, *lines[23:31], second]))
    run = _run(path)
    assert run.task == TASK and run.metadata["user_prompts"] == ["FOLLOW-UP: and words?"]
    assert [s.action for s in run.steps] == ["respond", "respond"]
