"""Gemini CLI's background skill-extraction agent (round 36, AUDGEM36): its one prompt is the skills it knows and an
index of past sessions, then what it is asked. The fixture (``gemini-cli/.aud36/``) is hand-built in the layout of
real recordings; how is in its ``README.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

RECORDING = (Path(__file__).parent / "fixtures" / "gemini-cli" / ".aud36" / "chats" / "skill-extraction-5e2a91c4"
             / "q7m2ka.json")


def test_the_skill_extraction_agents_task_is_its_instruction_not_the_session_index() -> None:
    """Bug: the agent's query (``SkillExtractionAgent``'s ``promptConfig.query``, ``agents/skill-extraction-agent.ts``)
    is ``# Existing Skills`` / ``# Session Index`` listings the memory service builds, then the instruction; the
    whole was the task, its head a list of skills. The instruction is the task; the listings stay in metadata."""
    (parsed,) = list(read_dump(RECORDING, tenant="acme"))
    run = parsed.trajectory
    assert run is not None, parsed.error
    assert run.task == ("Analyze the session index above. Read sessions that suggest repeated workflows using "
                        "read_file. Extract reusable skills to /home/dev/.gemini/tmp/proj/memory/skills/.")
    assert run.trajectory_id == "gemini-cli.q7m2ka.2026-04-10T09-30-00-000Z"
    assert run.metadata["is_subagent"] is True and "parent_session_id" not in run.metadata
    context = run.metadata["initial_context"]
    assert context.startswith("# Existing Skills") and context.endswith("session-2026-04-10T09-00-1a2b3c4d.json")
    assert [s.action for s in run.steps] == ["read_file", "complete_task"]
