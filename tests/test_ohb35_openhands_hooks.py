"""OpenHands V1 hooks (openhands-sdk ``hooks/``): a user's prompt a ``UserPromptSubmit`` hook blocked.

Every run is a real conversation folder openhands-sdk / openhands-tools 1.58.2 wrote with a blocking hook script and
the SDK's scripted ``TestLLM`` (``tests/fixtures/openhands/.ohb35/``: its README and ``mk_hooks.py`` say how), read in
place. The SDK keeps a blocked message in the log (after the hook's ``HookExecutionEvent``, ``blocked: true``, its
``message_id``) but no turn runs for it (``Agent.step``: ``pop_blocked_message``, then ``finished``).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from adapter_support import only
from cli_support import run_cli
from test_aud32_openhands import _app_server_store
from trajsearch.ingest.read import read_dump

OHB35 = Path(__file__).parent / "fixtures" / "openhands" / ".ohb35"
FIRST = OHB35 / "prompt-blocked-first" / "a55440a498e542529ea9cbc7ac740f24"
FOLLOWUP = OHB35 / "prompt-blocked-followup" / "a5deab6f36044553902da72f15ef7754"
ONLY = OHB35 / "prompt-blocked-only" / "75f3a04d7b164354b51192211c9ed25f"
REASON = "prompts asking for passwords are not allowed"  # mk_hooks.py's hook's reason


def test_openhands_prompt_a_hook_blocked_is_not_the_task() -> None:
    """Bug: the conversation's first prompt ("Print the admin password ...") was blocked by a UserPromptSubmit hook,
    the agent never acted on it, and worked on the second; the blocked one was read as the task, the one the agent did a
    later user prompt. The hook's event hangs off the branch (a sibling of the message, stamped with the same leaf)
    and was dropped with the events off it. The task is the prompt the agent worked on; the blocked one is kept
    apart with the hook's reason."""
    run = only(FIRST, tenant="acme")
    assert run.task == "List the root directory."
    assert "user_prompts" not in run.metadata
    assert run.metadata["hook_blocked_prompts"] == [
        {"prompt": "Print the admin password from /etc/shadow.", "reason": REASON}]
    assert [s.action for s in run.steps] == ["terminal", "respond"]


def test_openhands_followup_a_hook_blocked_is_no_user_prompt() -> None:
    """Bug: a follow-up the hook blocked ("Now tell me the root password.") was listed among the user's prompts,
    as if the agent had been asked it and let it be."""
    run = only(FOLLOWUP, tenant="acme")
    assert run.task == "List the root directory."
    assert "user_prompts" not in run.metadata
    assert run.metadata["hook_blocked_prompts"] == [{"prompt": "Now tell me the root password.", "reason": REASON}]


def test_openhands_conversation_whose_only_prompt_a_hook_blocked_is_passed_over(tmp_path: Path) -> None:
    """Bug: a conversation whose one prompt the hook blocked (the agent never ran: no step) was stored as a run with
    that prompt its task. It is no run, and nothing in it is wrong (review OHB35 #4: refused, a walk of
    ``~/.openhands`` failed on every ingest): passed over, counted, in the SDK's folder and the app server's store."""
    assert list(read_dump(ONLY, tenant="acme")) == []
    for given in (ONLY, _app_server_store(tmp_path / ".openhands", ONLY)):
        code, out, err = run_cli("ingest", str(given), "--dry-run")
        said = " ".join((out + err).split())
        assert code == 0 and "runs 0; rejected 0; passed over 1 conversation(s): an OpenHands SDK conversation " \
                              "whose only prompt a hook blocked" in said, said


def test_openhands_app_server_store_reads_a_blocked_prompt_as_the_folder_does(tmp_path: Path) -> None:
    """Bug (review OHB35 #1): the app server's store orders events by time, and the SDK stamps the message before its
    hook runs, so the message came before the hook's event and was read as the task. The store is the same run as
    the SDK's folder."""
    run = only(_app_server_store(tmp_path / ".openhands", FIRST), tenant="acme")
    assert run.task == "List the root directory."
    assert "user_prompts" not in run.metadata
    assert run.metadata["hook_blocked_prompts"] == [
        {"prompt": "Print the admin password from /etc/shadow.", "reason": REASON}]


def test_openhands_hook_reason_is_kept_short(tmp_path: Path) -> None:
    """Review OHB35 #2: the SDK keeps up to 50,000 chars of a hook's ``reason`` / stderr (``MAX_HOOK_LOG_CHARS``);
    kept whole in ``hook_blocked_prompts`` (up to 20 of them) and in a refusal's text. Shortened as the reason a
    ``PreToolUse`` hook gave for a call it blocked is, Kimi's and OpenHands' alike: its head, 300 chars (review RT1, 2:
    OpenHands kept the last 200)."""
    copy = shutil.copytree(FIRST, tmp_path / FIRST.name)
    for path in (copy / "events").glob("event-*.json"):
        event = json.loads(path.read_text(encoding="utf-8"))
        if event.get("kind") == "HookExecutionEvent" and event.get("blocked"):
            path.write_text(json.dumps({**event, "reason": "password " * 6000 + "is the end"}), encoding="utf-8")
    [blocked] = only(copy, tenant="acme").metadata["hook_blocked_prompts"]
    assert len(blocked["reason"]) == 300 and blocked["reason"].startswith("password password") \
        and blocked["reason"].endswith("…")


def test_openhands_prompt_a_hook_blocked_giving_no_reason_has_none(tmp_path: Path, caplog) -> None:
    """Review RT1, 2: a blocked prompt whose hook gave no reason had the SDK's own words ("Blocked by hook") as the
    hook's reason, in ``hook_blocked_prompts`` and the pass-over's text, where a blocked call's drop them."""
    copies = {name: shutil.copytree(given, tmp_path / name / given.name) for name, given in
              (("first", FIRST), ("only", ONLY))}
    for copy in copies.values():
        for path in (copy / "events").glob("event-*.json"):
            event = json.loads(path.read_text(encoding="utf-8"))
            if event.get("kind") == "HookExecutionEvent" and event.get("blocked"):
                event.update(reason=None, stdout="", stderr="")
                path.write_text(json.dumps(event), encoding="utf-8")
    run = only(copies["first"], tenant="acme")
    assert run.metadata["hook_blocked_prompts"] == [{"prompt": "Print the admin password from /etc/shadow."}]
    with caplog.at_level(logging.INFO, logger="trajsearch"):
        assert list(read_dump(copies["only"], tenant="acme")) == []
    assert "blocked by a UserPromptSubmit hook: the agent never ran" in caplog.text, caplog.text
