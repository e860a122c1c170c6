"""Codex 0.171 lines that change a thread's run beside its prompts and calls: a message delivered to the thread,
a ``/goal`` thread's goal and its continuations, and a rollback of turns.

No public rollout holds one. The goal and the rollback are read from rollouts the real Codex wrote (``.fix37``: see
its README); their variants, and the delivery, which no Codex run here can make, are written into the real 0.171.0
rollout ``.real/...01a2343e...`` (three turns of ``codex exec``) in the shape codex-rs writes them; each helper names
its source."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from adapter_support import runs

REAL = Path(__file__).parent / "fixtures" / "codex-cli" / ".real"
ROLLOUT = REAL / "rollout-2026-12-02T00-54-18-01a2343e-c43a-71b0-8325-96dd5e2db5fe.jsonl"
SECOND = "What is on line 2 of notes.txt?"


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROLLOUT.read_text().splitlines()]


def _written(tmp_path: Path, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / ROLLOUT.name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _turn_ends(lines: list[dict[str, Any]]) -> list[int]:
    return [at for at, line in enumerate(lines) if line["payload"].get("type") == "task_complete"]


def _line(at: str, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": at, "type": kind, "payload": payload}


def _delivered(text: str, name: str = "send_message_to_thread", namespace: str = "codex_app") -> dict[str, Any]:
    """A message delivered to the thread as codex-rs records it (``core/src/compact/requests.rs`` ``is_delivery``,
    its test's ``admitted_delivery``): a ``function_call_output`` with an ``id``, no ``call_id``, a name and
    namespace (0.171's ``ResponseItem`` makes ``call_id`` optional and gives the output both)."""
    return {"type": "function_call_output", "id": "fco_delivery_1", "name": name, "namespace": namespace,
            "output": text}


def test_a_message_delivered_to_the_thread_is_a_prompt_and_no_output_is_dropped(tmp_path):
    """A delivery answers no call: read as one, it was dropped, and its turn's reply was the last prompt's."""
    lines = _lines()
    end = _turn_ends(lines)[-1]
    at = lines[end]["timestamp"]
    lines[end + 1:end + 1] = [
        _line(at, "event_msg", {"type": "task_started", "turn_id": "delivery-turn"}),
        _line(at, "response_item", _delivered("Also count the words in notes.txt.")),
        _line(at, "response_item", {"type": "function_call_output", "id": "fco_2", "name": "notify",
                                    "namespace": "slack", "output": "build finished"}),
        _line(at, "response_item", {"type": "message", "role": "assistant",
                                    "content": [{"type": "output_text", "text": "It has 12 words."}]}),
        _line(at, "event_msg", {"type": "task_complete", "turn_id": "delivery-turn",
                                "last_agent_message": "It has 12 words."})]
    (run,) = runs(_written(tmp_path, lines), tenant="acme")
    (before,) = runs(ROLLOUT, tenant="acme")
    assert run.metadata["user_prompts"] == [*before.metadata["user_prompts"], "Also count the words in notes.txt."]
    assert run.metadata["standalone_outputs"] == ["slack__notify: build finished"]
    assert run.steps[-1].action == "respond" and run.steps[-1].arguments == {"content": "It has 12 words."}
    assert len(run.steps) == len(before.steps) + 1


GOAL = "Fix the greeting in main.py to say hello and run it"


def _goal_context(objective: str = "") -> str:
    """A goal's own prompt as 0.171 writes it (the binary's ``<codex_internal_context source="goal">`` and
    ``goals/continuation.md`` text; codex-rs ``templates/goals/objective_updated.md`` names the objective in
    ``<untrusted_objective>``)."""
    named = f"\n<untrusted_objective>\n{objective}\n</untrusted_objective>" if objective else ""
    return (f'<codex_internal_context source="goal">\nContinue working toward the active thread goal.{named}\n'
            "</codex_internal_context>")


def _goal_update(at: str, status: str) -> dict[str, Any]:
    """``thread_goal_updated``, which ``rollout/src/policy.rs`` persists: codex-rs ``ThreadGoalUpdatedEvent``,
    camelCase."""
    return _line(at, "event_msg", {"type": "thread_goal_updated", "threadId": "01a2343e-c43a-71b0-8325-96dd5e2db5fe",
                                   "turnId": None, "goal": {"threadId": "01a2343e-c43a-71b0-8325-96dd5e2db5fe",
                                                            "objective": GOAL, "status": status, "tokensUsed": 0,
                                                            "timeUsedSeconds": 0, "createdAt": 1, "updatedAt": 1}})


def _goal_driven(tmp_path: Path, objective: str = "") -> Path:
    """The rollout as a thread ``/goal`` started (``thread/goal/set``: the goal recorded, no user message; codex-rs
    keeps the objective in the goal, not in a prompt): its first prompt the goal's own, the goal set before it and
    ``complete`` after its turn (the user's ``thread/goal/set``), and its second prompt a continuation the goal
    drove."""
    lines = _lines()
    for line in lines:
        payload = line["payload"]
        if line["type"] == "response_item" and payload.get("role") == "user" and GOAL in json.dumps(payload):
            payload["content"] = [{"type": "input_text", "text": _goal_context(objective)}]
        if line["type"] == "response_item" and payload.get("role") == "user" and SECOND in json.dumps(payload):
            payload["content"] = [{"type": "input_text", "text": _goal_context()}]
    lines = [line for line in lines if not (line["payload"].get("type") == "item_completed" and line["payload"][
        "item"].get("type") == "UserMessage" and (GOAL in json.dumps(line) or SECOND in json.dumps(line)))]
    first_end = _turn_ends(lines)[0]
    lines.insert(first_end + 1, _goal_update(lines[first_end]["timestamp"], "complete"))
    lines.insert(1, _goal_update(lines[1]["timestamp"], "active"))
    return _written(tmp_path, lines)


def test_a_goal_thread_has_its_objective_as_task_and_its_own_turns_apart(tmp_path):
    """Codex's goal prompt is no user's: read as one, the markup was the task (or a later prompt), the goal and its
    status lost."""
    (run,) = runs(_goal_driven(tmp_path), tenant="acme")
    assert run.task == GOAL
    assert run.metadata["goal"] == GOAL and run.metadata["goal_status"] == "complete"
    assert run.metadata["goal_followups"] == 2
    assert run.metadata["user_prompts"] == ["TRIGGER_FAIL summarize everything"]
    assert not any("codex_internal_context" in json.dumps(value) for value in run.metadata.values())
    (named,) = runs(_goal_driven(tmp_path, objective="Say hello"), tenant="acme")
    assert named.metadata["goal"] == GOAL  # the last update's objective, after the prompt's


def test_a_goal_continuation_after_a_typed_task_is_no_later_prompt(tmp_path):
    lines = _lines()
    for line in lines:
        if line["type"] == "response_item" and line["payload"].get("role") == "user" and SECOND in json.dumps(line):
            line["payload"]["content"] = [{"type": "input_text", "text": _goal_context()}]
    lines = [line for line in lines if not (line["payload"].get("type") == "item_completed" and SECOND in json.dumps(
        line))]
    (run,) = runs(_written(tmp_path, lines), tenant="acme")
    assert run.task == GOAL and run.metadata["user_prompts"] == ["TRIGGER_FAIL summarize everything"]
    assert run.metadata["goal_followups"] == 1


def _rolled_back_after(tmp_path: Path, turn: int, num_turns: Any) -> Path:
    """The rollout with a ``thread_rolled_back`` event (codex-rs ``ThreadRolledBackEvent``, ``{num_turns}``, which
    ``rollout/src/policy.rs`` persists) after its ``turn``-th turn (0-based)."""
    lines = _lines()
    end = _turn_ends(lines)[turn]
    lines.insert(end + 1, _line(lines[end]["timestamp"], "event_msg",
                                {"type": "thread_rolled_back", "num_turns": num_turns}))
    return _written(tmp_path, lines)


def test_turns_a_rollback_undid_are_left_out_as_a_reverts_are(tmp_path):
    """Codex drops the last ``num_turns`` user turns when it replays the rollout (``drop_last_n_user_turns``): read
    whole, the undone prompt stayed a prompt and its call and answer steps of the run."""
    (whole,) = runs(ROLLOUT, tenant="acme")
    (run,) = runs(_rolled_back_after(tmp_path, 1, 1), tenant="acme")
    assert run.metadata["reverted_prompts"] == [SECOND]
    assert run.metadata["user_prompts"] == ["TRIGGER_FAIL summarize everything"]
    assert [step.action for step in run.steps] == [step.action for step in whole.steps][:3]
    assert run.task == whole.task and run.outcome == whole.outcome


def test_a_rollback_of_more_turns_than_there_are_undoes_all_and_none_undoes_nothing(tmp_path):
    (run,) = runs(_rolled_back_after(tmp_path, 1, 5), tenant="acme")
    assert run.metadata["reverted_prompts"] == [GOAL, SECOND]
    assert run.task == "TRIGGER_FAIL summarize everything" and "user_prompts" not in run.metadata
    (whole,) = runs(ROLLOUT, tenant="acme")
    for nothing in (0, "x", None):
        (run,) = runs(_rolled_back_after(tmp_path, 1, nothing), tenant="acme")
        assert run.steps == whole.steps and "reverted_prompts" not in run.metadata


FIX37 = Path(__file__).parent / "fixtures" / "codex-cli" / ".fix37"
GOAL_THREAD = FIX37 / "rollout-2026-12-08T01-06-49-01a25330-6393-7e73-8381-9fe29bec27dd.jsonl"
ROLLED_BACK = FIX37 / "rollout-2026-12-08T01-07-05-01a25330-9ec2-7f90-81c0-b48e7ca04c90.jsonl"


def test_a_goal_thread_the_real_codex_wrote_reads_its_goal_and_the_models_word_on_it():
    """0.171.0's ``/goal`` thread: its objective a standalone ``agent`` ``goal_objective`` output and the user's
    ``source="user_goal"`` context, the goal marked ``complete`` in ``update_goal``'s output only."""
    (run,) = runs(GOAL_THREAD, tenant="acme")
    assert run.task == "Create hello.txt saying hi"
    assert run.metadata["goal"] == "Create hello.txt saying hi" and run.metadata["goal_status"] == "complete"
    assert run.metadata["goal_followups"] == 1 and run.metadata["user_prompts"] == ["What does hello.txt say?"]
    assert "standalone_outputs" not in run.metadata and run.outcome.value == "unknown"
    assert [step.action for step in run.steps] == ["exec_command", "update_goal", "respond", "respond"]


def test_a_rollback_the_real_codex_wrote_leaves_out_the_turn_it_undid():
    (run,) = runs(ROLLED_BACK, tenant="acme")
    assert run.task == "How many lines does notes.txt have?"
    assert run.metadata["reverted_prompts"] == [SECOND]
    assert run.metadata["user_prompts"] == ["What is on line 3 of notes.txt?"]
    assert [step.arguments for step in run.steps] == [{"content": "notes.txt has 3 lines."},
                                                      {"content": "Line 3 is gamma."}]
