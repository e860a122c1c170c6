"""``trajsearch ingest --server`` of span formats (round 21, found by FM5 on the way to leftover 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import backend, run_cli  # noqa: F401 - the fixture

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.mark.parametrize("path", [
    FIXTURES / "otel-genai" / ".real" / "adk-2.10-parallel-tools-merged.otlp.json",
    FIXTURES / "openai-agents" / ".real" / "runstate" / "runstate-finished.json"])
def test_a_span_file_ingests_over_the_server_as_into_the_embedded_store(backend, path: Path) -> None:  # noqa: F811
    """Bug: over ``--server`` every span format (OTLP, OpenAI Agents, ...) failed whole with ``UNKNOWN: Exception
    iterating requests!``: the reader groups spans in an sqlite spool, made in the thread gRPC reads the request
    stream in and closed from another, which sqlite refused (``SQLite objects created in a thread can only be used
    in that same thread``). Real files (their folders' SOURCE.md)."""
    code, out, err = run_cli("ingest", str(path), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("stats", "-t", "acme", "--json")
    assert code == 0 and json.loads(out)["trajectories"] == 1, out + err
