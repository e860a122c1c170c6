"""OpenHands V1 hooks (openhands-sdk ``hooks/``): the context a ``UserPromptSubmit`` hook adds to a user's prompt
(its ``additionalContext``), which the SDK appends to the message as its last ``extended_content`` part.

Every run is a real conversation folder openhands-sdk / openhands-tools 1.58.2 wrote with a hook script and the SDK's
scripted ``TestLLM`` (``tests/fixtures/openhands/.ohc37/``: its README and ``mk_hook_context.py`` say how), read in
place and as the app server's store of its events.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from adapter_support import only
from test_aud32_openhands import _app_server_store

OHC37 = Path(__file__).parent / "fixtures" / "openhands" / ".ohc37"
FIRST = OHC37 / "context-first" / "e8a60fbda07d47008412256d6bb92aec"
FOLLOWUP = OHC37 / "context-followup" / "efc9b00a24014c0a96e7bedfca8a911c"
BLOCK_WITH_CONTEXT = OHC37 / "block-with-context" / "71b73ec66ce24bb9a45090dd4b909648"
CONTEXT = "Policy: never list /root; the sandbox root is /workspace."  # mk_hook_context.py's hook's context


def test_openhands_context_a_hook_added_to_the_task_is_kept_apart(tmp_path: Path) -> None:
    """Bug: the text the hook injected with the first prompt, which the model read after it, was dropped: nothing
    in the run said the agent had worked under it. It is kept with its prompt, not in the task."""
    for given in (FIRST, _app_server_store(tmp_path / ".openhands", FIRST)):
        run = only(given, tenant="acme")
        assert run.task == "List the root directory."
        assert run.metadata["hook_prompt_contexts"] == [{"prompt": "List the root directory.", "context": CONTEXT}]
        assert [s.action for s in run.steps] == ["terminal", "respond"]
        assert all(CONTEXT not in (s.observation or "") for s in run.steps)


def test_openhands_context_a_hook_added_to_a_followup_is_kept_with_it() -> None:
    """Bug: the same for a follow-up prompt: its context was lost, and the prompt before it, given none, names
    none."""
    run = only(FOLLOWUP, tenant="acme")
    assert run.task == "Say hi in the shell."
    assert run.metadata["user_prompts"] == ["Now list the root directory."]
    assert run.metadata["hook_prompt_contexts"] == [{"prompt": "Now list the root directory.", "context": CONTEXT}]
    assert [s.action for s in run.steps] == ["terminal", "respond", "terminal", "respond"]


def _edited(tmp_path: Path, edits: dict[str, dict]) -> Path:
    """A copy of the follow-up conversation, its events (by id prefix) changed by ``edits``."""
    folder = tmp_path / FOLLOWUP.name
    shutil.copytree(FOLLOWUP, folder)
    for path in (folder / "events").iterdir():
        for prefix, change in edits.items():
            if path.name.split("-")[2].startswith(prefix):
                path.write_text(json.dumps(_merge(json.loads(path.read_text()), change)))
    return folder


def _merge(event: dict, change: dict) -> dict:
    """``event`` with ``change``'s keys set (a dict value merged into the event's)."""
    return {**event, **{k: {**event[k], **v} if isinstance(v, dict) and isinstance(event.get(k), dict) else v
                        for k, v in change.items()}}


def test_openhands_context_a_hook_added_to_the_sdks_own_followup_is_kept(tmp_path: Path) -> None:
    """Bug: the SDK runs the hook on every user-source message (``conversation_hooks.on_event``), its critic's and
    ``/goal`` loop's follow-ups too; the context it added to one was used up and dropped. Kept with that message.
    The real follow-up made the critic's (its reply scored, the message in the critic's words: edited)."""
    critic = "The task appears incomplete (iteration 1/3, predicted success likelihood: 20%). Keep going."
    run = only(_edited(tmp_path, {"bb8b4c95": {"critic_result": {"score": 0.2}},
                                  "2e6d11f1": {"llm_message": {"content": [{"type": "text", "text": critic}]}}}),
               tenant="acme")
    assert "user_prompts" not in run.metadata
    assert run.metadata["hook_prompt_contexts"] == [{"prompt": critic, "context": CONTEXT}]


def test_openhands_context_of_a_hook_that_blocked_the_message_goes_to_no_other(tmp_path: Path) -> None:
    """Bug: a hook that blocked a message and added context (were the SDK to keep its id) left its context waiting
    for the next user message, given to it though that message's hook added none. Edited from the real run: the
    first message's hook blocks it and adds context; the follow-up's own hook adds none (its message keeps another
    ``extended_content`` part, as one carrying a skill's knowledge does)."""
    block = {"blocked": True, "message_id": "5404e852-cb28-4444-a3c9-ec5402196cb2", "reason": "no",
             "additional_context": "not this one's"}
    run = only(_edited(tmp_path, {"5cc98efe": block, "a22463c9": {"additional_context": None}}), tenant="acme")
    assert run.metadata["hook_blocked_prompts"] == [{"prompt": "Say hi in the shell.", "reason": "no"}]
    assert "hook_prompt_contexts" not in run.metadata


def test_openhands_a_hook_that_blocks_and_adds_context_blocks_nothing() -> None:
    """A hook that denies the prompt and adds context to it (the real SDK's conversation): the SDK marks the message
    blocked under its old id but writes it anew, with the context, under a new id, which the block misses: the agent
    runs it. So it is the task with its context, and no blocked prompt."""
    run = only(BLOCK_WITH_CONTEXT, tenant="acme")
    assert run.task == "List the root directory." and not run.metadata.get("hook_blocked_prompts")
    assert run.metadata["hook_prompt_contexts"] == [{"prompt": "List the root directory.", "context": CONTEXT}]
    assert [s.action for s in run.steps] == ["terminal", "respond"]
