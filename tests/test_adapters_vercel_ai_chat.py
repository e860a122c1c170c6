"""Vercel AI SDK chats as apps persist them (``UIMessage[]``, the docs' ``{id, messages}``), written by ai@6.0.333
itself (tests/fixtures/vercel-ai-chat/.aud36/README.md); main refused every one as an unrecognised dump."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.actions import NOT_RUN
from trajsearch.ingest.detect import detect_format
from trajsearch.model import Outcome

from adapter_support import only
from trajsearch.ingest.read import read_inputs

AUD = Path(__file__).parent / "fixtures" / "vercel-ai-chat" / ".aud36"
CHAT, AWAITING, STREAMED = AUD / "chat-7f3a.json", AUD / "chat-awaiting-approval.json", AUD / "stream-tool-error.json"


def test_every_persisted_chat_is_detected_as_vercel_ai_chat() -> None:
    assert {detect_format(p) for p in AUD.glob("*.json")} == {"vercel-ai-chat"}


def test_a_saved_chat_is_a_run_named_by_its_chat_id_whose_denied_call_was_not_run() -> None:
    """``saveChat``'s object: two turns; the second asks to delete a file, the user denies it in the UI and the SDK
    marks the call ``output-denied`` with the approval's reason."""
    run = only(CHAT)
    assert run.trajectory_id == "vercel-ai-chat:chat-7f3a"
    assert run.task == "What files are in /tmp?"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("listFiles", {"dir": "/tmp"}), ("respond", {"content": "There are two files: a.txt and b.log."}),
        ("deleteFile", {"path": "/tmp/b.log"}), ("respond", {"content": "Understood, I left b.log in place."})]
    listed, answered, deleted, _ = run.steps
    assert listed.thought == "I should list the files first." and json.loads(listed.observation) == ["a.txt", "b.log"]
    assert answered.observation == "Delete b.log please."  # the next turn answers the words before it
    assert deleted.thought == "Deleting b.log." and deleted.error == NOT_RUN + "denied: keep the log"
    assert run.metadata["user_prompts"] == ["Delete b.log please."]
    assert run.outcome is Outcome.unknown


def test_a_call_awaiting_approval_was_not_run() -> None:
    run = only(AWAITING)
    assert run.steps[-1].action == "deleteFile"
    assert run.steps[-1].error == NOT_RUN + "awaiting the user's approval"


def test_a_bare_message_array_keeps_its_tool_error_and_is_named_by_its_first_message() -> None:
    """``toUIMessageStream``'s ``onFinish`` messages saved as an array: no chat id; a digest of the first message
    names the run, the same wherever the file lies."""
    run = only(STREAMED)
    assert run.task == "Weather and forecast for Lyon?"
    assert [(s.action, s.error) for s in run.steps] == [
        ("weather", None), ("forecast", "forecast service down"), ("respond", None)]
    assert run.trajectory_id.startswith("vercel-ai-chat:") and run.trajectory_id == only(STREAMED).trajectory_id


def test_a_walk_of_an_app_reads_the_chats_its_persistence_example_keeps_in_dot_chats(tmp_path: Path) -> None:
    """The docs' ``getChatFile`` writes ``.chats/<id>.json`` (the messages array): a hidden folder a walk skipped."""
    (chats := tmp_path / "app" / ".chats").mkdir(parents=True)
    (chats / "k3v9.json").write_text(json.dumps(json.loads(CHAT.read_text())["messages"]))
    [run] = [r.trajectory for r in read_inputs([tmp_path / "app"]) if r.ok]
    assert run.task == "What files are in /tmp?" and len(run.steps) == 4


@pytest.mark.parametrize("messages", [
    [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"functionCall": {"name": "f"}}]}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    [{"id": "m1", "role": "user", "content": "hi", "parts": [{"type": "text", "text": "hi"}, {"kind": "x"}]}],
    {"id": "c1", "messages": [{"role": "user", "content": "hi"}]},
], ids=["gemini-contents", "openai-chat", "anthropic-messages", "untyped-part", "chat-of-model-messages"])
def test_other_message_lists_are_not_taken_for_a_chat(tmp_path: Path, messages: object) -> None:
    """Gemini's ``{role, parts}`` (parts without ``type``), chat-completion and Anthropic messages: not UIMessages."""
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    try:
        fmt = detect_format(path)
    except ValueError:
        fmt = None
    assert fmt != "vercel-ai-chat"
