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


MASKED = Path(__file__).parent / "fixtures" / "gemini-cli" / ".aud36" / "checkpoint-masked.json"


def test_an_output_masked_in_a_saved_history_says_so_and_is_no_result_nor_error() -> None:
    """Bug: a ``/chat save`` checkpoint holds the history as the CLI keeps it, older outputs masked
    (``ToolOutputMaskingService``: ``<tool_output_masked>``, a preview, the file with the whole output; the context
    pipeline's ``toolMaskingProcessor``: the tag around a note alone); the placeholder was the step's observation as if
    the tool had returned it. The step now says the output was masked and where it is, with the preview kept."""
    (parsed,) = list(read_dump(MASKED, tenant="acme"))
    run = parsed.trajectory
    assert run is not None, parsed.error
    first, second = run.steps[0], run.steps[1]
    assert first.observation.startswith(
        "[output masked by Gemini CLI to save context; in full in /home/dev/.gemini/tmp/proj/tool-outputs/"
        "session-1a2b3c4d-0000-4000-8000-000000000001/read_file_read_file_1779870544687_0_9nzvvp.txt; its preview:]\n"
        '{\n  "output": "@startuml')
    assert "<tool_output_masked>" not in first.observation and "Output too large" not in first.observation
    assert second.observation == (
        "[output masked by Gemini CLI to save context; in full in /home/dev/.gemini/tmp/proj/tool-outputs/"
        "session-1a2b3c4d/read_file_read_file_1779870545004_1_response_3f9c.txt]")
    assert first.error is None and second.error is None


def test_the_real_masked_output_of_a_maintainers_checkpoint_says_so() -> None:
    """The same in a real checkpoint: google-gemini/gemini-cli's committed ``trajectory.json``
    (``.real/checkpoint-agent-teams.json``, ``SOURCE.md``), whose first ``read_file`` output was masked."""
    real = Path(__file__).parent / "fixtures" / "gemini-cli" / ".real" / "checkpoint-agent-teams.json"
    (parsed,) = list(read_dump(real, tenant="acme"))
    first = parsed.trajectory.steps[0]
    assert first.action == "read_file" and first.error is None
    assert first.observation.startswith("[output masked by Gemini CLI to save context; in full in /Users/")
    assert "</tool_output_masked>" not in first.observation
