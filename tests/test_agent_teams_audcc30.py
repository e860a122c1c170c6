"""Claude Code agent teams (2.1.x), read from real transcripts (``fixtures/claude-code/.audcc30``, Claude Code
2.1.62): a teammate is a session of its own the lead spawned, and the agents' messages to each other arrive as user
records of ``<teammate-message>`` blocks, which were read as the user's prompts: a teammate's run had the wrapper and
the team's JSON as its task and stood as a top-level run, and the lead's run took a teammate's report (or, in a file
that starts mid-conversation, its idle notice) as its task or as a prompt of its user."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

TEAM = Path(__file__).parent / "fixtures" / "claude-code" / ".audcc30" / "agent-team"
LEAD = "35ef783f-75ce-4018-8f1f-de32c96867ff.jsonl"


def test_a_teammates_session_is_a_sub_agent_run_whose_task_is_the_leads_request() -> None:
    """The teammate's first record holds two blocks from ``team-lead``: a ``task_assignment`` (JSON) and the lead's
    briefing. Its task is what they ask, the subject and description of the assignment, then the briefing; the run is
    a sub-agent's, named by its agent and team."""
    [result] = read_dump(TEAM / "1dfef963-31ee-4d66-8147-29765f618a32.jsonl", tenant="acme")
    run = result.trajectory
    assert run.task.startswith("Red-cell review of architecture and final integration\n\nRed-Cell Navigator Vaas. ")
    assert "== CREW BRIEFING ==" in run.task
    assert "<teammate-message" not in run.task and '"task_assignment"' not in run.task
    assert (run.metadata["is_subagent"], run.metadata["agent_name"], run.metadata["team_name"]) == \
        (True, "vaas", "nelson-memory")
    assert run.trajectory_id == "claude-code.1dfef963-31ee-4d66-8147-29765f618a32"


def test_a_teammates_report_to_the_lead_is_a_peer_message_not_the_users_prompt() -> None:
    [result] = read_dump(TEAM / LEAD, tenant="acme")
    run = result.trajectory
    assert run.metadata["starts_mid_conversation"] is True
    assert not run.task.startswith("<teammate-message") and "HMS Astute returning" not in run.task
    [peer] = run.metadata["peer_messages"]
    assert peer.startswith("astute: Admiral, HMS Astute returning to harbor with critical intelligence.")
    assert "user_prompts" not in run.metadata
    assert "is_subagent" not in run.metadata and "team_name" not in run.metadata  # the lead's is the top-level run
    assert [s.action for s in run.steps] == ["Task", "TaskUpdate", "respond", "respond"]


def test_a_teammates_idle_notice_is_no_ones_message() -> None:
    """The team's protocol messages (``idle_notification``, ``shutdown_request``) are the CLI's, between the agents."""
    [result] = read_dump(TEAM / "idle" / LEAD, tenant="acme")
    run = result.trajectory
    assert "idle_notification" not in run.task and "<teammate-message" not in run.task
    assert "peer_messages" not in run.metadata and "user_prompts" not in run.metadata
