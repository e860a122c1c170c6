"""Gemini CLI 0.61 recordings (round 35's audit): parallel calls whose recorded ``result`` holds every sibling's
response. The fixture (``gemini-cli/.aud35/``) is written by the released CLI; how is in its ``README.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

REAL = Path(__file__).parent / "fixtures" / "gemini-cli" / ".aud35"
RECORDING = REAL / "session-2026-12-07T19-17-2fe9a405.jsonl"


def _steps(path: Path) -> list[tuple[str, str | None, str | None, str | None]]:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    assert parsed.trajectory.task == "PAR read app.py and missing.py"
    return [(s.action, (s.arguments or {}).get("file_path"), s.observation, s.error) for s in parsed.trajectory.steps]


def test_each_parallel_call_keeps_its_own_response_when_the_history_is_recorded_again() -> None:
    """Bug: with ``experimental.contextManagement`` the CLI records its history again before each request
    (``updateMessagesFromHistory``), each parallel call's ``result`` the whole user turn, its sibling's response too;
    that ``$set`` replaces the recorded messages, and every response was joined into each step: ``app.py``'s read
    failed with ``missing.py``'s error, ``missing.py``'s read showed ``app.py``."""
    missing = "File not found: /tmp/p68/wt-audgem-scratch/r3/proj/missing.py"
    assert _steps(RECORDING) == [
        ("read_file", "app.py", "def add(a, b):\n    return a - b\n", None),
        ("read_file", "missing.py", missing, missing),
        ("respond", None, None, None),
        ("respond", None, None, None)]

