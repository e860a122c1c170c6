"""Codex's asynchronous questions (audit AUDCX35): the Codex app sends the user's answer to an agent's
``request_user_input_async`` as a user message, ``<send_user_message_question_reply>`` around JSON. It is the
answer to that call, not a prompt: read as a prompt it went to ``user_prompts`` (or became the task of a rollout
holding no other), and the call's result stayed ``{"accepted":true}``, the answer lost from the steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def _with_reply(tmp_path: Path, *texts: str, name: str = FIXTURE.name) -> Path:
    """The fixture with its reply's text (both copies: the user message item and its ``item_completed``) replaced
    by ``texts[0]``, and a user message for each later text added after it."""
    lines = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    at = next(i for i, line in enumerate(lines) if line["payload"].get("id") == "msg_01a252b0-reply")
    lines[at]["payload"]["content"][0]["text"] = texts[0]
    lines[at + 1]["payload"]["item"]["content"][0]["text"] = texts[0]
    later = [{**lines[at], "payload": {**lines[at]["payload"], "content": [{"type": "input_text", "text": text}]}}
             for text in texts[1:]]
    path = tmp_path / name
    path.write_text("\n".join(json.dumps(line) for line in [*lines[:at + 2], *later, *lines[at + 2:]]) + "\n")
    return path


def _asked(run: Trajectory) -> list[str | None]:
    return [step.observation for step in run.steps if step.action == "request_user_input_async"]


def _reply(rows: list[dict[str, str]]) -> str:
    return f"<send_user_message_question_reply>\n{json.dumps(rows)}\n</send_user_message_question_reply>"


def test_a_reply_nested_too_deep_for_json_keeps_its_run_and_the_other_files_of_the_batch(tmp_path):
    """The reply's JSON nested deeper than Python reads (RecursionError) lost the whole batch (exit 1); it is text."""
    deep = _reply([]).replace("[]", "[" * 100000 + "]" * 100000)
    _with_reply(tmp_path, deep)
    (tmp_path / REAL_058.name).write_text(REAL_058.read_text())
    runs = {r.trajectory.task[:28] for r in read_dump(tmp_path, tenant="acme") if r.ok}
    assert runs == {"start the dev server for thi", "finish up the users work by "}


def test_words_after_the_reply_are_a_prompt_and_an_empty_reply_keeps_the_acknowledgement(tmp_path):
    """Only Codex's envelope is a reply: words the user wrote after it stay theirs (a prompt), not hidden in the
    call's result; an envelope with no answer in it leaves the call's ``{"accepted":true}``."""
    row = {"questionItemId": '["request_user_input_async", "call_q1", 0]', "question": "Port?", "answer": "3000"}
    run = _run(_with_reply(tmp_path, _reply([row]) + "\nalso please use docker"))
    assert _asked(run) == ['{"accepted":true}']
    assert "also please use docker" in run.metadata["user_prompts"][0]
    run = _run(_with_reply(tmp_path, "<send_user_message_question_reply>"))
    assert _asked(run) == ['{"accepted":true}'] and not run.metadata.get("user_prompts")


def test_an_answer_naming_no_call_of_the_rollout_goes_to_the_unanswered_question_else_to_question_replies(tmp_path):
    """An id the app gave the question (no call id) answers the oldest question still waiting; once every question
    here is answered, it is an answer to one asked before this rollout: ``metadata.question_replies``."""
    row = {"questionItemId": '["request_user_input_async", "internal-id", 0]', "question": "Port?", "answer": "3000"}
    run = _run(_with_reply(tmp_path, _reply([row])))
    assert _asked(run) == ["Port? -> 3000"] and not run.metadata.get("question_replies")
    late = {**row, "question": "Disk?", "answer": "ssd"}
    (own,) = [json.loads(line)["payload"]["content"][0]["text"] for line in FIXTURE.read_text().splitlines()
              if '"id":"msg_01a252b0-reply"' in line]
    run = _run(_with_reply(tmp_path, own, _reply([late])))
    assert _asked(run) == [ANSWERS]
    assert run.metadata["question_replies"] == ["Disk? -> ssd"]


@pytest.mark.parametrize("item", ["compaction", "compaction_trigger", "context_compaction"])
def test_a_turn_with_only_codex_s_compaction_after_its_prompt_is_no_reply(tmp_path, item):
    """0.171.0's compaction items (its ResponseItem tags, beside ``configuration_update``) are Codex's, not the
    model's: a turn refused after one is ``infra_error``, as after ``ghost_snapshot``."""
    opening = REAL_058.read_text().splitlines()[:7]
    snapshot = json.loads(opening[5])
    assert snapshot["payload"]["type"] == "ghost_snapshot"
    opening[5] = json.dumps({**snapshot, "payload": {"type": item, "encrypted_content": "gAAAAB"}})
    done = {"timestamp": "2025-11-17T21:32:49.000Z", "type": "event_msg",
            "payload": {"type": "task_complete", "last_agent_message": None}}
    path = tmp_path / REAL_058.name
    path.write_text("\n".join([*opening, json.dumps(done)]) + "\n")
    assert _run(path).outcome.value == "infra_error"


def test_a_tool_output_nested_too_deep_for_json_is_text_not_a_lost_run(tmp_path):
    """A call's output read as JSON (an MCP result, a ``{"output": ...}`` envelope) nested deeper than Python reads
    raised RecursionError, and the whole run was refused; it is the call's text."""
    deep = '{"a":' + "[" * 100000 + "]" * 100000 + "}"
    rows = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    for row in rows:
        if row["payload"].get("type") == "function_call_output" and row["payload"]["call_id"] == "call_2":
            row["payload"]["output"] = deep
    path = tmp_path / FIXTURE.name
    path.write_text("\n".join(map(json.dumps, rows)) + "\n")
    (shell,) = [step for step in _run(path).steps if step.action == "exec_command"]
    assert shell.observation == deep
