"""Gemini CLI 0.61 recordings (round 35's audit): the CLI writes its history back under the recorded ids, the tool
calls' results as the model now sees them (every sibling's response in each parallel call's, a masked output). The
fixtures (``gemini-cli/.aud35/``) are written by the released CLI; how is in their ``README.md``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "gemini-cli" / ".aud35"
RECORDING = REAL / "session-2026-12-07T19-17-2fe9a405.jsonl"
MASKED = REAL / "session-2026-12-07T19-21-f06f27f4.jsonl"


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def _pushed_again(path: Path, into: Path) -> Path:
    """``path`` as 0.38-0.43 record the same history again (``updateMessagesFromHistory``, v0.40.0
    ``chatRecordingService.ts:795``): no ``$set.messages``, each ``gemini`` message with tool calls pushed again
    under its own id, its calls' results the history's parts (here the masked ones the 0.61 ``$set`` holds)."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        update = json.loads(line).get("$set", {})
        if "messages" not in update:
            lines.append(line)
            continue
        lines += [json.dumps(m) for m in update["messages"] if m.get("type") == "gemini" and m.get("toolCalls")]
        lines.append(json.dumps({"$set": {k: v for k, v in update.items() if k != "messages"}}))
    into.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return into


def test_each_parallel_call_keeps_its_own_response_when_the_history_is_recorded_again() -> None:
    """Bug: with ``experimental.contextManagement`` the CLI records its history again before each request
    (``updateMessagesFromHistory``), each parallel call's ``result`` the whole user turn, its sibling's response too;
    that ``$set`` replaced the recorded messages, and every response was joined into each step: ``app.py``'s read
    failed with ``missing.py``'s error, ``missing.py``'s read showed ``app.py``."""
    run = _run(RECORDING)
    missing = "File not found: /tmp/p68/wt-audgem-scratch/r3/proj/missing.py"
    assert run.task == "PAR read app.py and missing.py"
    assert [(s.action, (s.arguments or {}).get("file_path"), s.observation, s.error) for s in run.steps] == [
        ("read_file", "app.py", "def add(a, b):\n    return a - b\n", None),
        ("read_file", "missing.py", missing, missing),
        ("respond", None, None, None),
        ("respond", None, None, None)]


@pytest.mark.parametrize("layout", ["0.44+ $set", "0.38-0.43 pushed again"])
def test_an_output_masked_in_the_history_written_back_keeps_what_the_tool_returned(layout: str,
                                                                                  tmp_path: Path) -> None:
    """Bug: the CLI masks a bulky older output in its history and writes that history back under the recorded ids
    (0.44+: a ``$set``, before each request with ``experimental.contextManagement``; 0.38-0.43: each message pushed
    again, review of round 35); that record replaced the recorded call, and the first ``read_file``'s observation
    was the ``<tool_output_masked>`` placeholder, not the file's text. The first result recorded for a call is
    what the tool returned."""
    path = MASKED if layout.startswith("0.44") else _pushed_again(MASKED, tmp_path / MASKED.name)
    run = _run(path)
    assert [(s.action, (s.arguments or {}).get("file_path")) for s in run.steps] == [
        ("read_file", "big1.txt"), ("respond", None), ("read_file", "big2.txt"), ("respond", None)]
    assert run.steps[0].observation.startswith("1:00000 ")
    assert run.steps[2].observation.startswith("2:00000 ")
