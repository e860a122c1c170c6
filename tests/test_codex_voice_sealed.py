"""Codex 0.171.0 rollouts (audit AUDCX36): a spoken prompt and a call whose arguments the provider encrypted.

A realtime voice session hands the user's request on to Codex as a prompt wrapped in ``<realtime_delegation>``
(``<input>``, XML-escaped, and the talk's ``<transcript_delta>``): read whole, the task was that markup. A multi-agent
v2 ``spawn_agent`` whose ``message`` OpenAI's backend sealed (``encrypted_function_args: ["message"]``) kept the
ciphertext as the step's argument."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapter_support import runs
from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

FIXTURES = Path(__file__).parent / "fixtures" / "codex-cli" / ".aud36"
VOICE = FIXTURES / "rollout-2026-12-07T22-08-17-01a2528c-f030-79c1-8dcc-9125655b452a.jsonl"
PARENT = FIXTURES / "rollout-2026-12-07T22-07-52-01a2528c-8b65-7933-a40c-4f9ff55e3e96.jsonl"
HELPER = FIXTURES / "rollout-2026-12-07T22-07-52-01a2528c-8cf9-7ef3-b22b-2e7243f4810e.jsonl"


def _runs(path: Path) -> list[Trajectory]:
    return runs(path, tenant="acme")  # a rejected record fails the test with its reason


def test_a_spoken_prompt_is_the_request_handed_off_not_its_markup():
    (run,) = _runs(VOICE)
    assert run.task == "count the lines of notes.txt & tell me if it's <10"
    # the session's end: Codex's flush of the rest of the talk (both speakers' lines), not its canned instruction
    assert run.metadata["user_prompts"] == ["user: thanks, that's all assistant: You're welcome!"]
    assert "realtime_delegation" not in json.dumps(run.metadata) and "&lt;" not in run.task
    assert [step.action for step in run.steps] == ["exec_command", "respond", "respond"]


def test_encrypted_call_arguments_are_said_to_be_encrypted_and_the_helper_stays_apart():
    (parent,) = _runs(PARENT)
    spawn = parent.steps[0]
    assert spawn.action == "collaboration__spawn_agent"
    assert spawn.arguments == {"task_name": "counter", "message": "[encrypted]"}
    assert "gAAAA" not in json.dumps([step.arguments for step in parent.steps])
    assert [step.action for step in parent.steps] == ["collaboration__spawn_agent", "collaboration__wait_agent",
                                                      "respond"]
    (helper,) = _runs(HELPER)
    assert helper.trajectory_id != parent.trajectory_id
    assert helper.metadata["parent_thread_id"] == "01a2528c-8b65-7933-a40c-4f9ff55e3e96"
    assert helper.task == "[encrypted task] /root/counter"
    assert [step.action for step in helper.steps] == ["respond"]  # the parent's copied spawn call is not its step


def _spawn_rewritten(tmp_path: Path, change) -> Trajectory:
    """The parent run with its ``spawn_agent`` call's payload changed by ``change``."""
    lines = PARENT.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"encrypted_function_args"' in line)
    record = json.loads(lines[at])
    change(record["payload"])
    lines[at] = json.dumps(record)
    path = tmp_path / PARENT.name
    path.write_text("\n".join(lines) + "\n")
    (run,) = _runs(path)
    return run


def test_a_sealed_message_with_no_marker_is_said_to_be_encrypted(tmp_path):
    """Rollouts before 03edf16f0 (2026-07-28) have no ``encrypted_function_args``, and Codex takes a collaboration
    call's ``message`` as sealed unless it is ``[]`` (``direct_source``): one that looks sealed reads so."""
    run = _spawn_rewritten(tmp_path, lambda payload: payload.pop("encrypted_function_args"))
    assert run.steps[0].arguments == {"task_name": "counter", "message": "[encrypted]"}

    def plain(payload: dict) -> None:
        del payload["encrypted_function_args"]
        payload["arguments"] = json.dumps({"task_name": "counter", "message": "count the lines of notes.txt"})

    assert _spawn_rewritten(tmp_path, plain).steps[0].arguments["message"] == "count the lines of notes.txt"


def test_only_the_arguments_named_and_present_are_sealed(tmp_path):
    def extra(payload: dict) -> None:
        payload["encrypted_function_args"] = ["message", "fork_context"]

    assert _spawn_rewritten(tmp_path, extra).steps[0].arguments == {"task_name": "counter", "message": "[encrypted]"}

def _prompt_replaced(tmp_path: Path, old: str, new: str) -> Path:
    """The voice rollout with its prompt ``old`` (in every line that holds it) written as ``new``."""
    text = VOICE.read_text()
    assert json.dumps(old)[1:-1] in text
    path = tmp_path / VOICE.name
    path.write_text(text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1]))
    return path


FIRST = ("<realtime_delegation>\n  <input>count the lines of notes.txt &amp; tell me if it's &lt;10</input>\n"
         "  <transcript_delta>user: hey codex, count the lines of notes.txt and tell me if it's under ten\n"
         "assistant: Sure, I'll ask Codex to check.</transcript_delta>\n</realtime_delegation>")


def test_a_prompt_only_looking_like_a_handoff_is_read_as_typed(tmp_path):
    """Codex escapes ``<`` inside ``<input>``/``<transcript_delta>``, so markup with a raw ``<`` there is the user's own
    text (a paste), read as it is; a big paste repeating the tags is read at once, not in minutes."""
    pasted = "<realtime_delegation>\n  <input>see <b>this</b></input>\n</realtime_delegation>"
    (run,) = _runs(_prompt_replaced(tmp_path, FIRST, pasted))
    assert run.task == pasted
    big = "<realtime_delegation><input>" + "</input><transcript_delta>" * 20000 + "</realtime_delegation>"
    (run,) = _runs(_prompt_replaced(tmp_path, FIRST, big))
    assert run.task.startswith("<realtime_delegation><input></input><transcript_delta>")


def test_a_tail_flush_without_its_source_tag_is_the_talk_not_codexs_instruction(tmp_path):
    """Codex built 2026-07-06 to 07-17 (c97674112, before 22f413bdb) wrote the flush with no ``<source>``."""
    flush = next(line for line in VOICE.read_text().splitlines() if "transcript_tail_flush" in line)
    old = next(part["text"] for part in json.loads(flush)["payload"]["content"])
    new = old.replace("  <source>transcript_tail_flush</source>\n", "")
    (run,) = _runs(_prompt_replaced(tmp_path, old, new))
    assert run.metadata["user_prompts"] == ["user: thanks, that's all assistant: You're welcome!"]


def _flush_recorded_alone(tmp_path: Path) -> Path:
    """The voice rollout with its session-end flush recorded as Codex 0.171 records it when no turn is running
    (codex-rs ``core/src/realtime_conversation/transcript_tail.rs``, "without inference"): a turn started, the
    flush's user message and its ``item_completed``, and the turn completed at once with ``last_agent_message:
    null``; no turn context, no model reply, no token count (the real file's second turn, with those lines left
    out, as ``codex exec resume`` gave the flush to the model)."""
    lines = [json.loads(line) for line in VOICE.read_text().splitlines()]
    second = next(at for at, line in enumerate(lines) if at > 1 and line["payload"].get("type") == "task_started")
    kept = lines[:second] + [line for line in lines[second:] if line["payload"].get("type") in (
        "task_started", "task_complete") or "transcript_tail_flush" in json.dumps(line)]
    kept[-1]["payload"].update(last_agent_message=None, duration_ms=0, time_to_first_token_ms=None)
    path = tmp_path / VOICE.name
    path.write_text("".join(json.dumps(line) + "\n" for line in kept))
    return path


def test_a_flush_codex_records_without_a_model_turn_is_no_missing_reply(tmp_path):
    """Read as a turn the model left silent, the session ended ``infra_error`` ("the model's reply was not recorded")
    with a step saying so, though Codex never asked the model."""
    (run,) = _runs(_flush_recorded_alone(tmp_path))
    assert run.metadata["user_prompts"] == ["user: thanks, that's all assistant: You're welcome!"]
    assert [step.action for step in run.steps] == ["exec_command", "respond"]
    assert run.outcome.value == "unknown" and run.failure is None


def test_the_talk_a_spoken_request_was_handed_off_with_is_kept(tmp_path):
    """The ``<transcript_delta>`` beside ``<input>`` (the voice model's wording) holds both speakers' words: read
    as the request alone, they were lost. Codex ends it with the request as a ``user:`` line (codex-api
    ``append_handoff_input``; the ``.aud36`` fixture, built before this was known, lacks it): the prompt, not kept
    twice. Where the voice model gave no request, Codex hands the talk on as ``<input>`` too: it is the prompt, kept
    once."""
    (run,) = _runs(VOICE)
    assert run.metadata["spoken_transcript"] == [
        "user: hey codex, count the lines of notes.txt and tell me if it's under ten\n"
        "assistant: Sure, I'll ask Codex to check."]
    appended = FIRST.replace("check.</transcript_delta>", "check.\nuser: count the lines of notes.txt &amp; tell me "
                             "if it's &lt;10</transcript_delta>")
    (run,) = _runs(_prompt_replaced(tmp_path, FIRST, appended))
    assert run.metadata["spoken_transcript"] == [
        "user: hey codex, count the lines of notes.txt and tell me if it's under ten\n"
        "assistant: Sure, I'll ask Codex to check."]
    talk = "user: count the lines of notes.txt"
    same = (f"<realtime_delegation>\n  <input>{talk}</input>\n  <transcript_delta>{talk}</transcript_delta>\n"
            "</realtime_delegation>")
    (run,) = _runs(_prompt_replaced(tmp_path, FIRST, same))
    assert run.task == talk and "spoken_transcript" not in run.metadata


def test_a_voice_session_that_handed_nothing_off_is_no_run(tmp_path):
    """Codex materialises a rollout for the flush alone (``transcript_tail.rs`` ``try_ensure_rollout_materialized``):
    a voice chat that never handed Codex a request, its agent never run, read as a run of no steps (before round 37
    an ``infra_error``). Passed over, as a session opened and closed with nothing sent is."""
    lines = [json.loads(line) for line in _flush_recorded_alone(tmp_path).read_text().splitlines()]
    second = next(at for at, line in enumerate(lines) if at > 1 and line["payload"].get("type") == "task_started")
    head = [line for line in lines[:second] if line["type"] in ("session_meta", "turn_context") or (
        line["payload"].get("role") == "developer") or "environment_context" in json.dumps(line)]
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / VOICE.name
    path.write_text("".join(json.dumps(line) + "\n" for line in head + lines[second:]))
    assert list(read_dump(folder, tenant="acme")) == []
    with pytest.raises(SideFile, match=r"no run in this file: a realtime voice session that handed Codex nothing"):
        list(read_dump(path, fmt="codex-cli", tenant="acme"))


def test_a_long_talk_handed_on_as_its_own_request_is_kept_once(tmp_path):
    """With no request of the voice model's, Codex hands the talk on as ``<input>`` too, each field cut to 4 KiB with
    a "…" (``context/realtime_delegation.rs``: ``<input>`` its head, ``<transcript_delta>`` its tail): unequal, the
    talk was kept twice, as the task and as ``spoken_transcript``. A request the voice model worded is no head."""
    talk = "user: " + "please count the lines " * 300
    cut = (f"<realtime_delegation>\n  <input>{talk[:4093]}…</input>\n  <transcript_delta>…{talk[-4093:]}"
           "</transcript_delta>\n</realtime_delegation>")
    (run,) = _runs(_prompt_replaced(tmp_path, FIRST, cut))
    assert run.task.startswith("user: please count") and "spoken_transcript" not in run.metadata
    worded = cut.replace(f"<input>{talk[:4093]}…", "<input>count the lines " + "and more " * 600 + "…")
    (run,) = _runs(_prompt_replaced(tmp_path, FIRST, worded))
    assert run.metadata["spoken_transcript"][0].startswith("…")


def test_a_flush_the_model_was_asked_about_and_left_silent_is_a_missing_reply(tmp_path):
    """Builds from 2026-07-17 up to ``transcript_tail.rs`` gave the flush to the model as any prompt (a turn with a
    token count): a refusal there is a reply not recorded, as for any prompt; only a flush with no model turn is
    exempt."""
    path = _flush_recorded_alone(tmp_path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    counted = next(line for line in lines if line["payload"].get("type") == "token_count")
    lines.insert(len(lines) - 1, {**counted, "timestamp": lines[-1]["timestamp"]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (run,) = _runs(path)
    assert run.outcome.value == "infra_error" and "reply was not recorded" in (run.steps[-1].observation or "")
