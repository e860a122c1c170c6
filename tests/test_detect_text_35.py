"""Round 35 (DETB35): a text that quotes a JSON format's words is no run of it; a JSON file under a banner still is.
Fixtures: tests/fixtures/detect/.det35b (README.md there says where each came from)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
QUOTING = FIXTURES / "detect" / ".det35b"
CODEX = (FIXTURES / "atif" / ".harb29" / "codex-0.171-spawn"
         / "rollout-2026-12-07T01-51-38-01a24e33-0fb8-7130-b7cb-8f0259463d8f.jsonl")
ATIF = FIXTURES / "atif" / ".real" / "nemo-relay" / "trajectory.json"
ZIPKIN = FIXTURES / "otel-genai" / ".real" / "probe42" / "pydantic-ai-2.68-v5-tool-raises.zipkin.json"


@pytest.mark.parametrize("name", ["humanevalfix-README.md", "60-telemetry.mdx", "opentelemetry.yml"])
def test_a_text_quoting_a_json_format_is_one_unrecognised_file(name: str) -> None:
    """Bug: a JSON format's ``SIGNATURE`` was searched in any file's head, so OpenHands' benchmark README (an event
    pasted in a code block), the Vercel AI SDK's telemetry page (``"ai.generateText"`` in a list) and Langfuse's
    OTLP API spec (``"langfuse.observation.type"`` in YAML) were openhands, vercel-ai and otel-genai files, every
    line rejected as malformed JSON. Now one rejection says the file is no dump."""
    results = list(read_inputs([QUOTING / name]))
    assert len(results) == 1 and "unrecognised dump format" in str(results[0].error), [r.error for r in results]


@pytest.mark.parametrize("source, steps", [(CODEX, 3), (ATIF, 4)])
def test_a_json_file_under_a_banner_is_still_told_by_its_signature(tmp_path: Path, source: Path, steps: int) -> None:
    """Guard of the fix above: a file whose JSON (JSON Lines, or a pretty-printed document) follows a script's note
    line opens as JSON after that banner, so its signature still names its format and its run is read (the note is
    the one line rejected), as before."""
    path = tmp_path / source.name
    path.write_bytes(b"# exported by nightly.sh\n" + source.read_bytes())
    runs = [r for r in read_inputs([path]) if r.ok]
    assert len(runs) == 1 and len(runs[0].trajectory.steps) == steps


@pytest.mark.parametrize("source, steps, warning", [(CODEX, 3, b"WARNING: retrying request\n"), (ATIF, 4, b"")])
def test_a_json_file_under_a_banner_with_text_lines_later_is_still_read(tmp_path: Path, source: Path, steps: int,
                                                                        warning: bytes) -> None:
    """Review DETB35 #1: a script's note teed above the JSON (``2>&1 | tee``) puts its other lines anywhere, a
    warning between JSON Lines records or a closing ``# done``; requiring nothing but JSON lines below the note lost
    the run (Codex: "pass --format"; ATIF: unrecognised), which main read. Only a fence or mostly text marks a
    quoting text. (A warning inside a pretty-printed document breaks its JSON, on main too.)"""
    first, rest = source.read_bytes().split(b"\n", 1)
    path = tmp_path / source.name
    path.write_bytes(b"# exported by nightly.sh\n" + first + b"\n" + warning + rest.rstrip(b"\n") + b"\n# done\n")
    runs = [r for r in read_inputs([path]) if r.ok]
    assert len(runs) == 1 and len(runs[0].trajectory.steps) == steps, [r.error for r in read_inputs([path])]


def test_a_json_document_after_nul_bytes_is_still_read(tmp_path: Path) -> None:
    """Review DETB35 #2: the NUL bytes a crash leaves before a file's text are skipped by the reader, so the file
    still opens as JSON (it was "binary, not text", its run lost)."""
    path = tmp_path / ZIPKIN.name
    path.write_bytes(b"\0" * 4 + ZIPKIN.read_bytes())
    runs = [r for r in read_inputs([path]) if r.ok]
    assert len(runs) == 1 and len(runs[0].trajectory.steps) == 1, [r.error for r in read_inputs([path])]


@pytest.mark.parametrize("head", [
    '"{""name"": ""search"", ""openinference.span.kind"": ""TOOL""}",2024-01-01,ok\n"{""name"": ""llm""}",2024,ok\n',
    '"[OpenHands]" event examples: {"source": "agent", "action": "run", "args": {}}\n' + "prose prose prose\n" * 40,
    '"{placeholder}" is how templates are written. An ATIF file has "schema_version": "ATIF-v1.2" in it.\n',
])
def test_a_text_opening_with_a_quoted_brace_is_no_json_string_of_a_format(head: str, tmp_path: Path) -> None:
    """Guard of the JSON-string opening (``"{\\"...``, ADK 1.x's double-encoded eval results): a headerless CSV row
    (``"{""key""...``) or prose opening with a quoted ``{...}`` / ``[...]`` still is no file of the format it quotes
    (the first form of that opening, ``"{`` / ``"[`` alone, read them as openinference, openhands, atif; review RVME)."""
    path = tmp_path / "quoted.txt"
    path.write_text(head, encoding="utf-8")
    with pytest.raises(ValueError, match="unrecognised dump format"):
        detect_format(path)
