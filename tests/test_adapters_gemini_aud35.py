"""Gemini CLI 0.61 recordings (round 35's audit): the CLI writes its history back under the recorded ids, the tool
calls' results as the model now sees them (every sibling's response in each parallel call's, a masked output). The
fixtures (``gemini-cli/.aud35/``) are written by the released CLI; how is in their ``README.md``."""

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
    that ``$set`` replaced the recorded messages, and every response was joined into each step: ``app.py``'s read
    failed with ``missing.py``'s error, ``missing.py``'s read showed ``app.py``."""
    missing = "File not found: /tmp/p68/wt-audgem-scratch/r3/proj/missing.py"
    assert _steps(RECORDING) == [
        ("read_file", "app.py", "def add(a, b):\n    return a - b\n", None),
        ("read_file", "missing.py", missing, missing),
        ("respond", None, None, None),
        ("respond", None, None, None)]



def test_an_output_masked_in_the_history_written_back_keeps_what_the_tool_returned() -> None:
    """Bug: with ``experimental.contextManagement`` the CLI masks a bulky older output in its history and writes that
    history back under the recorded ids before the next request; the ``$set`` replaced the recorded call, and the
    first ``read_file``'s observation was the ``<tool_output_masked>`` placeholder, not the file's text."""
    (parsed,) = list(read_dump(REAL / "session-2026-12-07T19-21-f06f27f4.jsonl", tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    run = parsed.trajectory
    assert [(s.action, (s.arguments or {}).get("file_path")) for s in run.steps] == [
        ("read_file", "big1.txt"), ("respond", None), ("read_file", "big2.txt"), ("respond", None)]
    assert run.steps[0].observation.startswith("1:00000 ")
    assert run.steps[2].observation.startswith("2:00000 ")
