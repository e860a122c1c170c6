"""Gemini CLI and Claude Code metadata that pointed nowhere: defects found by round 40's code review
(``/tmp/p40/review1/REPORT.md``: F4 and a quality note), read through the public reader on real files."""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"


def test_gemini_skill_extraction_recording_names_no_parent_session() -> None:
    """F4: Gemini CLI's memory service writes its background skill-extraction agent (``kind: "subagent"``) into
    ``chats/skill-extraction-<n>/``; the folder name became ``parent_session_id``, a session that does not exist.
    Real: LAF-US/IDAHO-VAULT's recording, trimmed (``gemini-cli/SOURCE.md``)."""
    chats = FIXTURES / "gemini-cli" / ".real" / "idaho-vault-memory" / "chats"
    run = only(chats / "skill-extraction-67084600" / "mrp1k5.json")
    assert run.metadata["is_subagent"] is True
    assert run.metadata.get("parent_session_id") is None
    assert run.task.startswith("Analyze the session index above.")  # its instruction, not the listing (AUDGEM36)
    assert run.metadata["initial_context"].startswith("# Existing Skills")


def test_claude_code_peer_message_without_a_sender_name_is_from_another_session(tmp_path: Path) -> None:
    """A peer message's ``origin`` without ``name`` was credited to its ``from``, a socket path
    (``uds:/run/user/1000/cc-socks/<pid>.sock``). The real hannibal session's peer message, its ``name`` removed."""
    real = FIXTURES / "claude-code" / ".real" / "hannibal" / "43e7d642-30bc-4598-813c-34286ed31a9d.jsonl"
    records = [json.loads(line) for line in real.read_text().splitlines() if line.strip()]
    for record in records:
        origin = record.get("origin") or (record.get("attachment") or {}).get("origin") or {}
        origin.pop("name", None)
    path = tmp_path / real.name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    [message] = only(path).metadata["peer_messages"]
    assert message.startswith("another session: **是,我在同一棵樹。**")
