"""Codex's asynchronous questions (audit AUDCX35): the Codex app sends the user's answer to an agent's
``request_user_input_async`` as a user message, ``<send_user_message_question_reply>`` around JSON. It is the
answer to that call, not a prompt: read as a prompt it went to ``user_prompts`` (or became the task of a rollout
holding no other), and the call's result stayed ``{"accepted":true}``, the answer lost from the steps."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

FIXTURE = (Path(__file__).parent / "fixtures" / "codex-cli" / ".aud35"
           / "rollout-2026-12-07T17-56-28-01a252b0-1a2b-7c3d-8e4f-5a6b7c8d9e0f.jsonl")
ANSWERS = "Which port should the dev server use? -> 3000\nAny name for the service? -> call it devbox"


def _run(path: Path) -> Trajectory:
    (run,) = [r.trajectory for r in read_dump(path, tenant="acme") if r.ok]
    return run


def test_a_question_reply_is_the_answer_of_the_call_that_asked_it_not_a_prompt():
    run = _run(FIXTURE)
    assert run.task == "start the dev server for this project"
    assert not run.metadata.get("user_prompts")
    asked = [step for step in run.steps if step.action == "request_user_input_async"]
    assert [step.observation for step in asked] == [ANSWERS]
    assert [step.action for step in run.steps] == ["request_user_input_async", "exec_command", "respond"]


def test_a_rollout_holding_only_the_reply_keeps_the_answers_as_its_task(tmp_path):
    """A rollout that goes on from the answer alone (the question asked in an earlier one): a run, not the JSON."""
    kept = [line for line in FIXTURE.read_text().splitlines()
            if '"fix the bug' not in line and "start the dev server" not in line
            and "request_user_input_async\",\"arguments" not in line and '"call_id":"call_q1"' not in line]
    path = tmp_path / FIXTURE.name
    path.write_text("\n".join(kept) + "\n")
    assert not any(json.loads(line)["payload"].get("name") == "request_user_input_async" for line in kept)
    run = _run(path)
    assert run.task == ANSWERS
    assert "send_user_message_question_reply" not in json.dumps(run.metadata)


REAL_058 = Path(__file__).parent / "fixtures" / "codex-cli" / \
    "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"


def test_a_turn_with_only_the_harness_s_snapshot_after_its_prompt_is_no_reply(tmp_path):
    """Codex's own items (``ghost_snapshot``, which 0.5x writes right after the prompt; 0.17x's ``additional_tools``
    and ``configuration_update``) are no reply of the model's: a turn that completed with no message of the model's
    after them is the refusal Codex drops (``infra_error``), not a run whose outcome is unknown."""
    opening = REAL_058.read_text().splitlines()[:7]  # the real prompt, its turn context, ghost snapshot, token count
    done = {"timestamp": "2025-11-17T21:32:49.000Z", "type": "event_msg",
            "payload": {"type": "task_complete", "last_agent_message": None}}
    path = tmp_path / REAL_058.name
    path.write_text("\n".join([*opening, json.dumps(done)]) + "\n")
    run = _run(path)
    assert run.outcome.value == "infra_error"
    assert run.failure is not None and "reply was not recorded" in run.failure.error
