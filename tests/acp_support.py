"""Gemini CLI's shell calls as the OpenHands SDK records them over ACP (its ``ACPToolCallEvent``), built from the real
ACP fixture's own call events: a test hands in the calls' titles and displays, and reads the run.

gemini-cli's ACP server sends no ``rawInput``: a call is its title (the invocation's description) and kind; a
``completed`` call's content is the shell tool's display (``acpSession.ts``: ``toToolCallContent(toolResult)``).
"""

from __future__ import annotations

import json
from pathlib import Path

OH_ACP = Path(__file__).parent / "fixtures" / "openhands" / ".real" / "sdk-acp" / "0a1b2c3d00004000800000000000ac01"


def acp_events() -> list[dict]:
    """The real ACP run's events, in order (its first two, a call's start and end at 4 and 5, its last two)."""
    return [json.loads(p.read_text()) for p in sorted((OH_ACP / "events").glob("event-*.json"))]


def gemini_shell_run(path: Path, calls: list[tuple[str, str]]) -> Path:
    """A run file at ``path``: the real run's first two events, then for each (title, display) of ``calls`` a shell
    call started (``in_progress``) and ``completed`` showing that display, then its last two events."""
    events = acp_events()
    start, end = events[4], events[5]
    built: list[dict] = []
    for n, (title, shown) in enumerate(calls, 1):
        call = {"tool_call_id": f"run_shell_command-176484000000{n}", "title": title, "raw_input": None}
        said = [{"type": "content", "content": {"type": "text", "text": shown, "annotations": None,
                                                "field_meta": None}, "field_meta": None}]
        built += [{**start, **call, "id": f"ff000000-0000-4000-8000-00000000000{n}", "status": "in_progress",
                   "content": []},
                  {**end, **call, "id": f"ff000000-0000-4000-8000-00000000001{n}", "status": "completed",
                   "is_error": False, "raw_output": None, "content": said}]
    path.write_text("".join(json.dumps(e) + "\n" for e in events[:2] + built + events[-2:]))
    return path
