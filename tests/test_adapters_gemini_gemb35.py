"""Gemini CLI 0.36-0.39's ``save_memory`` sub-agent (round 35, GEMB35): its only prompt is the whole GEMINI.md
memory with the user's request after it. The fixture (``gemini-cli/.gemb35/``) is hand-built from the CLI's source;
how is in its ``README.md``."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump

RECORDING = (Path(__file__).parent / "fixtures" / "gemini-cli" / ".gemb35" / "chats"
             / "5b0c1e7a-2f4d-4c8e-9a61-3d7f0e2b9c45" / "mm7q2x.json")


def test_the_memory_agents_task_is_the_request_not_the_memory_it_was_handed() -> None:
    """Bug: the ``save_memory`` sub-agent's query is ``\\n# Initial Context\\n\\n<memory>\\n<request>``
    (``MemoryManagerAgent``); the whole memory was the run's task (20,000 characters of GEMINI.md in the real
    recordings), the request lost at its end. The request is the task; the memory stays findable in metadata."""
    (parsed,) = list(read_dump(RECORDING, tenant="acme"))
    run = parsed.trajectory
    assert run is not None, parsed.error
    assert run.task == "Remember that I prefer tabs over spaces"
    assert run.trajectory_id == "gemini-cli.mm7q2x.2026-04-10T09-00-00-000Z"
    assert run.metadata["parent_session_id"] == "5b0c1e7a-2f4d-4c8e-9a61-3d7f0e2b9c45"
    context = run.metadata["initial_context"]
    assert context.startswith("--- Global --- --- Context from: /home/dev/.gemini/GEMINI.md ---")
    assert context.endswith("---[end of server instructions]---")
    assert [s.action for s in run.steps] == ["replace", "complete_task"]


def test_a_blank_request_leaves_the_memory_as_the_task_not_its_mcp_block(tmp_path: Path) -> None:
    """Bug: with the request blank (the tool's schema allows ``""``) the match backed off to an earlier block's end,
    so the task was the last MCP server's instructions, which no one asked for. With nothing after the memory's last
    block the prompt is read as before: the memory is the task, no ``initial_context``."""
    data = json.loads(RECORDING.read_text(encoding="utf-8"))
    prompt = data["messages"][0]["content"][0]
    prompt["text"] = prompt["text"].removesuffix("Remember that I prefer tabs over spaces") + "  \n"
    path = tmp_path / RECORDING.parent.name / RECORDING.name
    path.parent.mkdir()
    path.write_text(json.dumps(data), encoding="utf-8")
    (parsed,) = list(read_dump(path, tenant="acme"))
    run = parsed.trajectory
    assert run is not None, parsed.error
    assert run.task.startswith("# Initial Context")
    assert run.task.endswith("---[end of server instructions]---")
    assert run.metadata.get("initial_context") is None
