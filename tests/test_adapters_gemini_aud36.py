"""Gemini CLI's background skill-extraction agent (round 36, AUDGEM36): its one prompt is the skills it knows and an
index of past sessions, then what it is asked. The fixture (``gemini-cli/.aud36/``) is hand-built in the layout of
real recordings; how is in its ``README.md``."""

from __future__ import annotations

import json
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
        "session-1a2b3c4d/read_file_read_file_1779870545004_1_observation_3f9c.txt]")
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


MEMORY = (Path(__file__).parent / "fixtures" / "gemini-cli" / ".gemb35" / "chats"
          / "5b0c1e7a-2f4d-4c8e-9a61-3d7f0e2b9c45" / "mm7q2x.json")


def test_a_sub_agent_stopped_mid_work_says_so(tmp_path: Path) -> None:
    """Bug: a ``save_memory`` sub-agent the user cancelled (LAF-US/IDAHO-VAULT's ``xb7gtb.json``: its parent's call
    ``cancelled``, "[Operation Cancelled] Operation cancelled.") records nothing of it: its recording stops after a
    ``grep_search``, and read as a run like any other, outcome unknown with no word of why. It has no verdict still;
    ``metadata.ended_by`` says it stopped before ``complete_task``. One that handed its result in says nothing."""
    data = json.loads(MEMORY.read_text(encoding="utf-8"))
    data["messages"] = data["messages"][:-1]  # its complete_task turn never came
    path = tmp_path / "chats" / MEMORY.parent.name / MEMORY.name  # in its session's folder: it has a parent
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    (parsed,) = list(read_dump(path, tenant="acme"))
    run = parsed.trajectory
    assert run.outcome.value == "unknown" and [s.action for s in run.steps] == ["replace"]
    assert run.metadata["ended_by"] == ("stopped before complete_task: e.g. cancelled by the user, the CLI closed, an "
                                        "error or a limit (its parent session's call says which)")
    (whole,) = list(read_dump(MEMORY, tenant="acme"))
    assert "ended_by" not in whole.trajectory.metadata


def _rewritten(source: Path, tmp_path: Path, keep: int) -> Path:
    """A copy of a sub-agent's recording, in its own folder's name, with only its first ``keep`` messages."""
    data = json.loads(source.read_text(encoding="utf-8"))
    data["messages"] = data["messages"][:keep]
    path = tmp_path / "chats" / source.parent.name / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_background_agent_stopped_mid_work_is_not_pointed_at_a_parent(tmp_path: Path) -> None:
    """Bug (review of round 36, 1): the skill extractor has no parent session and no call that could be cancelled, yet
    its stopped recording (LAF-US/IDAHO-VAULT's ``skill-extraction-67084600/mrp1k5.json``) said "cancelled by the
    user ... its parent session's call says which". One with only its prompt stopped before ``complete_task`` too."""
    for keep in (2, 1):  # its read_file done, its complete_task turn never came; then no step at all
        (parsed,) = list(read_dump(_rewritten(RECORDING, tmp_path / str(keep), keep), tenant="acme"))
        run = parsed.trajectory
        assert run.outcome.value == "unknown"
        assert run.metadata["ended_by"] == ("stopped before complete_task: e.g. the CLI closed, an error or a limit (a "
                                            "background agent: no call records why)")


def test_a_sub_agent_ending_on_a_text_reply_did_not_hand_in(tmp_path: Path) -> None:
    """A sub-agent of the CLI's loop ends well only by ``complete_task``; one that stops calling tools ends
    ``ERROR_NO_COMPLETE_TASK_CALL`` (``agents/local-executor.ts``), as LAF-US/IDAHO-VAULT's ``twynek.json`` did at its
    turn limit: it too stopped before handing in (review of round 36, 4)."""
    data = json.loads(MEMORY.read_text(encoding="utf-8"))
    data["messages"][-1] = {"id": "r", "timestamp": "2026-04-10T09:00:09.000Z", "type": "gemini",
                            "content": "I added the preference.", "model": "gemini-3-flash-preview"}
    path = tmp_path / "chats" / MEMORY.parent.name / MEMORY.name  # in its session's folder: it has a parent
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert [s.action for s in parsed.trajectory.steps] == ["replace", "respond"]
    assert parsed.trajectory.metadata["ended_by"].startswith("stopped before complete_task: e.g. cancelled by the user")


SESSION = (Path(__file__).parent / "fixtures" / "gemini-cli" / ".aud36" / "chats"
           / "session-2026-04-20T04-27-5c1d2e3f.json")


def test_a_json_recording_whose_results_the_cli_rewrote_masked_says_so() -> None:
    """Bug (review of round 36, 2): from 0.29 (#18451) to the JSONL recording of 0.39 the CLI wrote each masked output
    back into a JSON recording's ``toolCalls[].result`` (``updateMessagesFromHistory``): LAF-US/IDAHO-VAULT's main
    sessions hold 64 such placeholders. They are said to be masked, a result of several parts a part at a time (a
    steering note before the masked response stays as it is); the masked shell report's exit code still counts."""
    (parsed,) = list(read_dump(SESSION, tenant="acme"))
    run = parsed.trajectory
    assert run is not None, parsed.error
    read, shell, topic, reply = run.steps
    said = "[output masked by Gemini CLI to save context; in full in /home/dev/.gemini/tmp/proj/tool-outputs/"
    assert read.observation.startswith(said) and read.observation.endswith("Release builds need RELEASE=1.")
    assert read.error is None
    assert shell.observation.startswith(said) and shell.error == "boom (exit code 2)"
    assert topic.observation.startswith("User steering update: <user_input>\nbuild it in release mode\n</user_input>\n"
                                        + said)
    assert topic.error is None
    assert not any("<tool_output_masked>" in s.observation for s in (read, shell, topic))


def test_a_masked_error_says_so(tmp_path: Path) -> None:
    """The context pipeline masks every long string of a response, its ``error`` too (``toolMaskingProcessor.ts``;
    review of round 36, 6): the step's error is no placeholder; the note alone says the error was masked."""
    note = ("<tool_output_masked>\n[Tool observation string (0.20MB, 4100 lines) masked to preserve context window. "
            "Full string saved to: /home/dev/.gemini/tmp/proj/tool-outputs/read_file_x_observation_1a2b.txt]\n"
            "</tool_output_masked>")
    data = json.loads(SESSION.read_text(encoding="utf-8"))
    for message, error in ((data["messages"][1], None), (data["messages"][2], note)):
        call = message["toolCalls"][0]
        response = call["result"][0]["functionResponse"]["response"]
        response["error"] = error or response["output"]
        call["status"] = "error"
    path = tmp_path / "chats" / SESSION.name
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    (parsed,) = list(read_dump(path, tenant="acme"))
    preview, alone = parsed.trajectory.steps[0].error, parsed.trajectory.steps[1].error
    assert "<tool_output_masked>" not in preview and "Output too large" not in preview
    assert alone == ("[output masked by Gemini CLI to save context; in full in /home/dev/.gemini/tmp/proj/tool-outputs/"
                     "read_file_x_observation_1a2b.txt]")
