"""OpenHands V1 hooks (openhands-sdk ``hooks/``): the context a ``UserPromptSubmit`` hook adds to a user's prompt
(its ``additionalContext``), which the SDK appends to the message as its last ``extended_content`` part.

Every run is a real conversation folder openhands-sdk / openhands-tools 1.58.2 wrote with a hook script and the SDK's
scripted ``TestLLM`` (``tests/fixtures/openhands/.ohc37/``: its README and ``mk_hook_context.py`` say how), read in
place and as the app server's store of its events.
"""

from __future__ import annotations

from pathlib import Path

from adapter_support import only
from test_aud32_openhands import _app_server_store

OHC37 = Path(__file__).parent / "fixtures" / "openhands" / ".ohc37"
FIRST = OHC37 / "context-first" / "e8a60fbda07d47008412256d6bb92aec"
FOLLOWUP = OHC37 / "context-followup" / "efc9b00a24014c0a96e7bedfca8a911c"
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
