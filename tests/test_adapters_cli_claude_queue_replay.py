"""Claude Code's queue log replayed only for what a user typed, and a warm-up that called tools (review 1 of p42: F2,
F3, F4; each fixture's origin is in ``tests/fixtures/claude-code/.real/SOURCE.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format

from adapter_support import only

CC_REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".real"


def test_another_sessions_message_in_the_queue_log_is_not_the_users_prompt() -> None:
    """F2 (real, hannibal8856/claude_backup, Claude Code 2.1.232): a peer session's ``<cross-session-message>`` is
    enqueued with a ``hop-chain`` attribute that its ``remove`` and its ``queued_command`` attachment (origin
    ``peer``) lack; the queue replay took it for an unrecorded prompt without origin, and it became the run's task.
    The file writes its attachments itself: they are what is read, the peer's message kept as one."""
    run = only(CC_REAL / "hannibal" / "59074ea8-b704-4db7-976f-0051ba6e7126.jsonl", tenant="acme")
    assert run.task == "git diff被我指到meld, 您可能要找其他的替代"
    assert "user_prompts" not in run.metadata
    [peer] = run.metadata["peer_messages"]
    assert peer.startswith("snmp-plan-E reopen 7: ")


@pytest.mark.parametrize("name, prompts", [
    ("43708777-b33c-42a4-9bef-cef33a7ab815.jsonl", None),  # 2.0.67: a subagent's <agent-notification>
    ("396380b6-a653-4cf2-8101-87a91b3eeb41.jsonl", ["continue"]),  # 2.1.50: a background task's JSON registration
])
def test_what_the_cli_queued_itself_is_no_prompt(name: str, prompts: list[str] | None) -> None:
    """F3 (real, dagster-io/erk, Claude Code 2.0.67 and 2.1.50): the CLI queues a subagent's report
    (``<agent-notification>``) or a background task's registration (``{"task_id": ..., "task_type": ...}``), then
    ``remove``s it; both were replayed as prompts the user typed (one real file gained 19). No one typed them."""
    run = only(CC_REAL / "erk" / name, tenant="acme")
    assert run.metadata.get("user_prompts") == prompts
    assert run.task.startswith(("/erk:plan-implement", "# /erk:plan-implement"))


def test_a_warmup_alone_in_its_file_is_no_run_whatever_it_calls() -> None:
    """F4 (real, bradymholt/dotfiles, Claude Code 2.1.1): the subagent's warm-up called Bash and Glob, which the CLI
    answered "Warmup" itself; the file was read as a run with task "Warmup" and two failed steps. It holds no run."""
    with pytest.raises(SideFile, match="subagent's warm-up in session d7287e7b"):
        detect_format(CC_REAL / "bradymholt" / "agent-a0edd2b.jsonl")
