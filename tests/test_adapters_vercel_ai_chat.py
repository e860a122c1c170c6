"""Vercel AI SDK chats as apps persist them (``UIMessage[]``, the docs' ``{id, messages}``), written by ai@6.0.333
itself (tests/fixtures/vercel-ai-chat/.aud36/README.md); main refused every one as an unrecognised dump."""

from __future__ import annotations

import json
import shutil
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


def test_a_bare_message_array_keeps_its_tool_error_and_is_named_by_its_first_message(tmp_path: Path) -> None:
    """``toUIMessageStream``'s ``onFinish`` messages saved as an array: no chat id; a digest of the first message
    (the SDK gives it an id) names the run, the same wherever the file lies."""
    run = only(STREAMED)
    assert run.task == "Weather and forecast for Lyon?"
    assert [(s.action, s.error) for s in run.steps] == [
        ("weather", None), ("forecast", "forecast service down"), ("respond", None)]
    (moved := tmp_path / "elsewhere" / "saved.json").parent.mkdir()
    moved.write_text(STREAMED.read_text())
    assert run.trajectory_id.startswith("vercel-ai-chat:") and only(moved).trajectory_id == run.trajectory_id


def _user(text: str) -> dict[str, object]:
    return {"role": "user", "parts": [{"type": "text", "text": text}]}


def test_chats_whose_first_message_has_no_id_are_not_one_run(tmp_path: Path) -> None:
    """Two chats opening with the same id-less "hi": a digest of that message named both alike, and the second
    ingested replaced the first."""
    for name, answer in (("a", "Hello!"), ("b", "Hi there.")):
        (tmp_path / f"{name}.json").write_text(json.dumps(
            [_user("hi"), {"role": "assistant", "parts": [{"type": "text", "text": answer}]}]))
    ids = {r.trajectory.trajectory_id for r in read_inputs([tmp_path / "a.json"])} | \
        {r.trajectory.trajectory_id for r in read_inputs([tmp_path / "b.json"])}
    assert len(ids) == 2


def test_an_ai_sdk_4_chat_keeps_its_tool_invocations_and_reasoning(tmp_path: Path) -> None:
    """AI SDK 4.2-4.3's ``parts`` (ai@4.3.19 packages/ui-utils/src/types.ts): a ``tool-invocation`` holds the call in
    ``toolInvocation``, ``reasoning`` its text in ``reasoning``; read as a tool named "invocation", args lost."""
    path = tmp_path / "v4.json"
    path.write_text(json.dumps([
        {"id": "m1", "role": "user", "content": "Weather in Oslo?",
         "parts": [{"type": "text", "text": "Weather in Oslo?"}]},
        {"id": "m2", "role": "assistant", "content": "It is 20 degrees.", "parts": [
            {"type": "step-start"}, {"type": "reasoning", "reasoning": "Look it up.", "details": []},
            {"type": "tool-invocation", "toolInvocation": {"state": "result", "step": 0, "toolCallId": "c1",
                                                            "toolName": "weather", "args": {"city": "Oslo"},
                                                            "result": {"t": 20}}},
            {"type": "source", "source": {"sourceType": "url", "id": "s1", "url": "https://x.example"}},
            {"type": "step-start"}, {"type": "text", "text": "It is 20 degrees."}]}]))
    run = only(path)
    weather, answer = run.steps
    assert (weather.action, weather.arguments, weather.thought, weather.error) == (
        "weather", {"city": "Oslo"}, "Look it up.", None)
    assert json.loads(weather.observation) == {"t": 20} and answer.action == "respond"


def test_ai_sdk_7_parts_and_every_tool_state_are_read(tmp_path: Path) -> None:
    """AI SDK 7's ``custom`` and ``reasoning-file`` parts (ui-messages.ts) rejected the whole chat; ``data-*`` parts
    are no step; a ``dynamic-tool`` is named by its ``toolName``; a call still streaming was not run."""
    path = tmp_path / "v7.jsonl"  # one message a line, as some apps append them
    path.write_text("\n".join(json.dumps(m) for m in [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "Search the docs"},
                                                {"type": "data-weather", "data": {"city": "Oslo"}}]},
        {"id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"}, {"type": "custom", "kind": "my-ui", "data": {}},
            {"type": "reasoning-file", "mediaType": "image/png", "url": "data:image/png;base64,AA=="},
            {"type": "dynamic-tool", "toolName": "mcp_search", "toolCallId": "d1", "state": "output-available",
             "input": {"q": "docs"}, "output": "3 hits"},
            {"type": "tool-fetch", "toolCallId": "t2", "state": "input-streaming", "input": {"url": "htt"}}]}]))
    run = only(path)
    assert [(s.action, s.observation, s.error) for s in run.steps] == [
        ("mcp_search", "3 hits", None),
        ("fetch", None, NOT_RUN + "the stream stopped while the model wrote its input")]


def test_an_array_of_chats_keeps_its_good_chats_beside_a_blank_one(tmp_path: Path) -> None:
    """createChat's blank ``{id, messages: []}`` beside a saved chat: the array was read as one chat's messages and
    the good chat lost with a misleading error."""
    path = tmp_path / "chats.json"
    path.write_text(json.dumps([json.loads(CHAT.read_text()), {"id": "c2", "messages": []}]))
    results = list(read_inputs([path]))
    assert [r.trajectory.trajectory_id for r in results if r.ok] == ["vercel-ai-chat:chat-7f3a"]
    assert [r.error for r in results if not r.ok] == ["an empty AI SDK chat: no messages"]


def test_a_walk_of_an_app_reads_the_chats_its_persistence_example_keeps_in_dot_chats(tmp_path: Path) -> None:
    """The docs' ``getChatFile`` writes ``.chats/<id>.json`` (the messages array): a hidden folder a walk skipped."""
    (chats := tmp_path / "app" / ".chats").mkdir(parents=True)
    (chats / "k3v9.json").write_text(json.dumps(json.loads(CHAT.read_text())["messages"]))
    [run] = [r.trajectory for r in read_inputs([tmp_path / "app"]) if r.ok]
    assert run.task == "What files are in /tmp?" and len(run.steps) == 4


def test_a_walk_of_dot_chats_leaves_other_apps_files_and_blank_chats_unrejected(tmp_path: Path) -> None:
    """Other apps name a folder ``.chats`` too (settings, notes, a history, a database), and the example's
    ``createChat`` writes a blank chat: each was a rejection naming every format."""
    (chats := tmp_path / "app" / ".chats").mkdir(parents=True)
    shutil.copy(CHAT, chats / "k3v9.json")
    (chats / "settings.json").write_text(json.dumps({"theme": "dark"}))
    (chats / "history.jsonl").write_text(json.dumps({"q": "hi"}) + "\n")
    (chats / "new2.json").write_text(json.dumps({"id": "new2", "messages": [], "createdAt": "2026-01-01"}))
    (chats / "notes").mkdir()
    (chats / "notes" / "meta.json").write_text(json.dumps({"a": 1}))
    results = list(read_inputs([tmp_path / "app"]))
    assert [r.trajectory.trajectory_id for r in results if r.ok] == ["vercel-ai-chat:chat-7f3a"]
    assert [r.error for r in results if not r.ok] == []


@pytest.mark.parametrize(("content", "said"), [
    ({"id": "new2", "messages": []}, "an AI SDK chat with no messages yet"),
    ({"theme": "dark"}, "no AI SDK chat"),
])
def test_a_file_in_dot_chats_that_holds_no_chat_says_so(tmp_path: Path, content: object, said: str) -> None:
    (chats := tmp_path / ".chats").mkdir()
    (path := chats / "x.json").write_text(json.dumps(content))
    with pytest.raises(ValueError, match=said):
        detect_format(path)


@pytest.mark.parametrize("messages", [
    [{"role": "user", "parts": [{"text": "hi"}]}, {"role": "model", "parts": [{"functionCall": {"name": "f"}}]}],
    [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
    [{"id": "m1", "role": "user", "content": "hi", "parts": [{"type": "text", "text": "hi"}, {"kind": "x"}]}],
    {"id": "c1", "messages": [{"role": "user", "content": "hi"}]},
    [{"id": "a", "role": "user", "parts": [{"type": "text", "data": {"text": "fix the bug"}}]}],
    [{"role": "user", "content": "ls"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}}]},
     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]}],
    [{"role": "user", "content": "ls"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}]},
     {"role": "tool", "tool_call_id": "c1", "content": "a.txt"}],
], ids=["gemini-contents", "openai-chat", "anthropic-messages", "untyped-part", "chat-of-model-messages",
        "crush-rows", "anthropic-tool-use", "openai-tool-calls"])
def test_other_message_lists_are_not_taken_for_a_chat(tmp_path: Path, messages: object) -> None:
    """Gemini's ``{role, parts}`` (parts without ``type``), chat-completion and Anthropic messages: not UIMessages."""
    path = tmp_path / "messages.json"
    path.write_text(json.dumps(messages))
    try:
        fmt = detect_format(path)
    except ValueError:
        fmt = None
    assert fmt != "vercel-ai-chat"


@pytest.mark.parametrize(("broken", "said"), [
    ({"id": "c2", "messages": None}, "chat 2: its 'messages' is null"),
    ({"id": "c2"}, "chat 2: it has no 'messages'"),
    ("c2", "expected a JSON object, got a string"),
], ids=["null", "none", "text"])
def test_an_array_of_chats_keeps_its_good_chats_beside_a_broken_one(tmp_path: Path, broken: object, said: str) -> None:
    """A chat whose ``messages`` is null or missing, or an item no chat, beside a saved chat: the array was read as
    one chat's messages, the good chat lost, the chat object called a message (RT2 3)."""
    path = tmp_path / "chats.json"
    path.write_text(json.dumps([json.loads(CHAT.read_text()), broken]))
    results = list(read_inputs([path]))
    assert [r.trajectory.trajectory_id for r in results if r.ok] == ["vercel-ai-chat:chat-7f3a"]
    assert [said in (r.error or "") for r in results if not r.ok] == [True], [r.error for r in results]


AUD37 = Path(__file__).parent / "fixtures" / "vercel-ai-chat" / ".aud37"


def test_saved_model_message_histories_are_detected_as_vercel_ai_chat() -> None:
    """``ModelMessage[]`` as ai@6.0.333 returns it (``response.messages``, after the prompt): main refused each as an
    unrecognised dump (the history opens with a system or user message chat-completion writes alike)."""
    assert {detect_format(p) for p in AUD37.glob("*.json")} == {"vercel-ai-chat"}


def test_a_model_message_history_keeps_its_calls_results_and_tool_error() -> None:
    """``[...messages, ...result.response.messages]`` of a generateText run: one model step calls two tools (its
    reasoning and text their thought), a ``tool`` message answers both, the second's ``execute`` threw
    (``error-text``), then the answer."""
    run = only(AUD37 / "model-history-tool-error.json")
    assert run.task == "What is in /tmp?"
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("listFiles", {"dir": "/tmp"}), ("readFile", {"path": "/tmp/missing.txt"}),
        ("respond", {"content": "There is a.txt; missing.txt could not be read."})]
    listed, read, _ = run.steps
    assert listed.thought == read.thought == "Check the files first.\n\nListing /tmp."
    assert json.loads(listed.observation) == ["a.txt"] and listed.error is None
    assert read.error == "ENOENT: no such file /tmp/missing.txt"
    assert run.trajectory_id.startswith("vercel-ai-chat:") and run.outcome is Outcome.unknown


def test_a_model_message_call_the_user_denied_or_has_not_answered_was_not_run() -> None:
    """``needsApproval``: the SDK adds a ``tool-approval-request``; the app's ``tool-approval-response``
    (``approved: false``) makes the next call write an ``execution-denied`` result."""
    denied = only(AUD37 / "model-history-denied.json")
    assert [(s.action, s.error) for s in denied.steps] == [
        ("deleteFile", NOT_RUN + "denied: keep the log"), ("respond", None)]
    awaiting = only(AUD37 / "model-history-awaiting-approval.json")
    assert [(s.action, s.error) for s in awaiting.steps] == [("deleteFile", NOT_RUN + "awaiting the user's approval")]


@pytest.mark.parametrize(("name", "said"), [
    ("response-messages-only.json", "response.messages alone"),
    ("generate-text-steps.json", "their prompt is only in each step's request body"),
    ("generate-text-steps-ai5.json", "their prompt is only in each step's request body"),
], ids=["response-messages", "steps", "ai5-steps"])
def test_a_saved_result_without_its_prompt_is_refused_saying_why(name: str, said: str) -> None:
    """``response.messages`` or ``steps`` saved alone hold no user message: refused naming what to save instead,
    not as an unrecognised dump."""
    [result] = read_inputs([AUD37 / name])
    assert not result.ok and said in result.error and "[...messages, ...response.messages]" in result.error


def test_an_ai_sdk_4_core_message_history_keeps_its_calls(tmp_path: Path) -> None:
    """AI SDK 4's ``CoreMessage``: a ``tool-call`` holds ``args``, a ``tool-result`` ``result`` and ``isError``
    (ai@4.3.19 packages/ai/core/prompt/content-part.ts); built by hand from those types."""
    path = tmp_path / "v4.json"
    path.write_text(json.dumps([
        {"role": "user", "content": "Weather in Lyon and Oslo?"},
        {"role": "assistant", "content": [
            {"type": "tool-call", "toolCallId": "a", "toolName": "weather", "args": {"city": "Lyon"}},
            {"type": "tool-call", "toolCallId": "b", "toolName": "weather", "args": {"city": "Oslo"}}]},
        {"role": "tool", "content": [
            {"type": "tool-result", "toolCallId": "a", "toolName": "weather", "result": {"c": 21}},
            {"type": "tool-result", "toolCallId": "b", "toolName": "weather", "result": "timeout", "isError": True}]},
        {"role": "assistant", "content": "Lyon is 21 C; Oslo did not answer."}]))
    run = only(path)
    assert [(s.action, s.arguments, s.observation, s.error) for s in run.steps] == [
        ("weather", {"city": "Lyon"}, '{"c": 21}', None), ("weather", {"city": "Oslo"}, None, "timeout"),
        ("respond", {"content": "Lyon is 21 C; Oslo did not answer."}, None, None)]


def test_the_metadata_an_app_attached_gives_the_chats_time_model_and_tokens(tmp_path: Path) -> None:
    """``messageMetadata`` as the SDK's docs attach it (content/docs/04-ai-sdk-ui/25-message-metadata.mdx:
    ``createdAt`` ms and ``model`` at the start, ``totalTokens`` at the finish): main ignored it, the chat dated by
    the file's mtime, its model unknown."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps({"id": "c-meta", "messages": [
        _user("hi"),
        {"id": "a1", "role": "assistant",
         "metadata": {"createdAt": 1765150000000, "model": "gpt-4o", "totalTokens": 30},
         "parts": [{"type": "text", "text": "Hello!"}]},
        _user("bye"),
        {"id": "a2", "role": "assistant",
         "metadata": {"usage": {"inputTokens": 9, "outputTokens": 3, "totalTokens": 12}},
         "parts": [{"type": "text", "text": "Bye."}]}]}))
    run = only(path)
    assert run.created_at.isoformat() == "2025-12-07T23:26:40+00:00"
    assert run.model_id == "gpt-4o"
    assert run.metadata["total_tokens"] == 30  # not the cookbook's usage: set per finish-step, it is the last one's
    assert "created_at_basis" not in run.metadata


def test_a_history_mixing_model_and_ui_messages_is_refused_naming_the_message(tmp_path: Path) -> None:
    """A UIMessage appended to a ModelMessage history: each passed its own check and the reader failed on the mix."""
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps([*json.loads((AUD37 / "model-history-tool-error.json").read_text()),
                                _user("and now?")]))
    [result] = read_inputs([path])
    assert not result.ok
    assert "message 6: it has 'parts', as a UIMessage (the chat's first is a ModelMessage)" in result.error


def test_a_call_id_the_model_repeats_gets_each_call_its_own_result() -> None:
    """ai@6 (gen3.mjs) with a model that names every call ``call_0`` (as Kimi K2 or a mock do): each result answers
    the earliest call of that id still open; keyed by id over the history, all three took the last one's error."""
    run = only(AUD37 / "model-history-reused-ids.json")
    assert [(s.arguments, s.observation, s.error) for s in run.steps if s.action == "run"] == [
        ({"cmd": "ls"}, "out of ls", None), ({"cmd": "pwd"}, "out of pwd", None),
        ({"cmd": "bad"}, None, '{"code":7,"msg":"weird"}')]


@pytest.mark.parametrize(("message", "said"), [
    ({"id": "m2", "role": "assistant", "content": "", "toolInvocations": [
        {"state": "result", "toolCallId": "c1", "toolName": "listFiles", "args": {"dir": "/tmp"}, "result": ["a"]}]},
     "it has 'toolInvocations', as AI SDK 4's UIMessage, not read"),
    ({"role": "assistant", "content": "", "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
     "it has 'tool_calls', as a chat-completion message, not read"),
], ids=["v4-tool-invocations", "chat-completion"])
def test_a_forced_read_refuses_messages_whose_calls_it_would_drop(tmp_path: Path, message: dict, said: str) -> None:
    """``--format vercel-ai-chat`` on AI SDK 4's ``Message[]`` (its calls in ``toolInvocations``, built by hand from
    ai@4.3.19 packages/ui-utils/src/types.ts): each message passed as a ModelMessage with a text ``content`` and
    the calls were dropped silently."""
    path = tmp_path / "v4.json"
    path.write_text(json.dumps([{"id": "m1", "role": "user", "content": "List /tmp"}, message,
                                {"id": "m3", "role": "assistant", "content": "There is a."}]))
    [result] = read_inputs([path], fmt="vercel-ai-chat")
    assert not result.ok and f"message 2: {said}" in result.error


def test_the_answer_after_a_provider_executed_tool_is_a_respond_step(tmp_path: Path) -> None:
    """A provider-executed tool (``providerExecuted``: web search) runs within the model's step, so its text after
    the result is the answer, not the call's thought: ai@6 (gen3.mjs) as a ModelMessage history, and the same as a
    UIMessage (ui-messages.ts: the tool part's ``providerExecuted``; built by hand)."""
    model = only(AUD37 / "model-history-provider-executed.json")
    ui = tmp_path / "chat.json"
    ui.write_text(json.dumps({"id": "c-web", "messages": [_user("search the web"), {
        "id": "a1", "role": "assistant", "parts": [
            {"type": "step-start"}, {"type": "text", "text": "Searching."},
            {"type": "tool-web_search", "toolCallId": "ws1", "state": "output-available", "input": {"query": "x"},
             "output": [{"url": "https://x"}], "providerExecuted": True},
            {"type": "text", "text": "found x"}]}]}))
    assert [(s.action, s.thought) for s in model.steps] == [("web_search", None), ("respond", None)]
    assert [(s.action, s.thought) for s in only(ui).steps] == [("web_search", "Searching."), ("respond", None)]
    assert model.steps[-1].arguments == only(ui).steps[-1].arguments == {"content": "found x"}


@pytest.mark.parametrize(("part", "said"), [
    ({"type": "tool-call", "toolCallId": ["a"], "toolName": "x", "input": {}}, "its part 1's 'toolCallId' is an array"),
    ({"type": "tool-approval-request", "approvalId": {"z": 1}, "toolCallId": "a"},
     "its part 1's 'approvalId' is an object"),
], ids=["call-id", "approval-id"])
def test_a_tool_part_whose_id_is_no_string_is_refused_naming_the_message(tmp_path: Path, part: dict, said: str) -> None:
    """The SDK writes every id a string; another failed as a bare 'TypeError: unhashable type' naming no message."""
    path = tmp_path / "history.json"
    call = {"type": "tool-call", "toolCallId": "a", "toolName": "x", "input": {}}
    path.write_text(json.dumps([{"role": "user", "content": "What is in /tmp?"},
                                {"role": "assistant", "content": [call]}, {"role": "assistant", "content": [part]}]))
    [result] = read_inputs([path], fmt="vercel-ai-chat")
    assert not result.ok and f"message 3: {said}, not a string" in result.error


def _jsonb_order(value: object) -> object:
    """``value`` with its keys in Postgres ``jsonb``'s order (shorter keys first, then bytewise), as an app storing
    messages in a jsonb column gets them back."""
    if isinstance(value, dict):
        return {k: _jsonb_order(value[k]) for k in sorted(value, key=lambda k: (len(k.encode()), k.encode()))}
    return [_jsonb_order(v) for v in value] if isinstance(value, list) else value


@pytest.mark.parametrize("dump", [lambda h: json.dumps(h, sort_keys=True), lambda h: json.dumps(_jsonb_order(h))],
                         ids=["sort-keys", "jsonb"])
def test_a_history_is_detected_whatever_its_key_order(tmp_path: Path, dump) -> None:
    """The ai@6 history re-dumped in another key order: the head test wanted ``toolCallId`` right after ``type``, as
    ``JSON.stringify`` writes it, and left these unrecognised."""
    path = tmp_path / "history.json"
    path.write_text(dump(json.loads((AUD37 / "model-history-tool-error.json").read_text())))
    assert detect_format(path) == "vercel-ai-chat"
    assert [s.action for s in only(path).steps] == ["listFiles", "readFile", "respond"]


def test_a_saved_full_stream_is_not_taken_for_a_chat() -> None:
    """``streamText``'s ``fullStream`` parts a line each (ai@6, gen3.mjs): its ``tool-call`` parts hold
    ``toolCallId`` as a message's do, so it was detected and then refused as 'message 1: its role is None'; it holds
    no message (no ``role``): unrecognised, as on main."""
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(AUD37 / "stream-text-full-stream.jsonl")


def test_a_content_tool_output_keeps_its_text_and_names_its_image() -> None:
    """``toModelOutput``'s ``content`` output (ai@6, gen3.mjs: a text and an ``image-data`` screenshot): its text
    parts are the observation and the image a placeholder; the parts were kept as JSON, base64 and all."""
    run = only(AUD37 / "model-history-reused-ids.json")
    [shot] = [s for s in run.steps if s.action == "shot"]
    assert shot.observation == "a screenshot\n[image]"  # (a 4-character base64 is too short to name)


def test_an_ai_sdk_4_2_chat_is_dated_by_its_messages_created_at(tmp_path: Path) -> None:
    """AI SDK 4.2's ``Message`` carries ``createdAt`` (a ``Date``, saved as ISO text; ai@4.3.19
    packages/ui-utils/src/types.ts; built by hand): it was passed over and the chat dated by the file's mtime."""
    path = tmp_path / "chat.json"
    path.write_text(json.dumps([
        {"id": "m1", "role": "user", "content": "hi", "createdAt": "2025-03-01T10:00:00.000Z",
         "parts": [{"type": "text", "text": "hi"}]},
        {"id": "m2", "role": "assistant", "content": "Hello!", "createdAt": "2025-03-01T10:00:02.000Z",
         "parts": [{"type": "text", "text": "Hello!"}]}]))
    assert only(path).created_at.isoformat() == "2025-03-01T10:00:00+00:00"


def test_a_tool_message_with_text_content_and_a_non_ascii_error_json(tmp_path: Path) -> None:
    """A ``tool`` message's content is always an array of ``tool-result`` parts (tool-model-message.ts): a text one
    is refused saying so (the words were 'not a text or an array of parts'); an ``error-json`` keeps its
    non-ASCII text (it was dumped as ``\\u00e9``). Built by hand from the types."""
    call = {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "a", "toolName": "x", "input": {}}]}
    bad, good = tmp_path / "bad.json", tmp_path / "good.json"
    bad.write_text(json.dumps([{"role": "user", "content": "go"}, call, {"role": "tool", "content": "done"}]))
    good.write_text(json.dumps([{"role": "user", "content": "go"}, call, {"role": "tool", "content": [
        {"type": "tool-result", "toolCallId": "a", "toolName": "x", "output": {"type": "error-json",
                                                                                 "value": {"msg": "échec"}}}]}]))
    [result] = read_inputs([bad])
    assert not result.ok and "message 3: its 'content' is a string, not the array of tool-result parts" in result.error
    assert only(good).steps[0].error == '{"msg": "échec"}'
