"""Probe 49 (area X2): OpenHands V1 / ACP leftovers and the names of a stream's copy.

Real files only: the ACP-backed SDK conversation ``openhands/.real/sdk-acp/`` (built as the SDK writes it, see its
SOURCE.md) and the ACP sub-agent events of the fork that adds them (see ``openhands/.real/sdk-acp-subagents/
SOURCE.md``); mini-swe-agent's ``.real/test_data/github_issue.traj.json`` and Harbor's ATIF
``.real/terminus_2/hello-world-invalid-json.trajectory.json`` (see their folders' SOURCE.md). Plumbing: the fast
hashing test embedder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import run_cli
from trajsearch.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
MINI = FIXTURES / "mini-swe-agent" / ".real" / "test_data" / "github_issue.traj.json"
ATIF = FIXTURES / "atif" / ".real" / "terminus_2" / "hello-world-invalid-json.trajectory.json"


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch) -> None:
    """The embedded store, tenant ``acme``, the hashing embedder."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
    monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))
    monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")


def _stream(data: bytes, *args: str) -> str:
    """``trajsearch ingest - ARGS --json`` with ``data`` on standard input: its summary."""
    result = CliRunner().invoke(app, ["ingest", "-", "-q", "--json", *args], input=data)
    assert result.exit_code == 0, result.stderr
    return result.stdout


# -- item 5: a stream's copy is named as the operator named it ------------------------------------------------------


@pytest.mark.parametrize("dump, name", [(MINI, "github_issue.traj.json"), (ATIF, "hello.trajectory.json")])
def test_a_named_stream_streamed_twice_is_one_run_not_two(embedded, dump: Path, name: str) -> None:
    """Bug: mini-swe-agent (a trajectory without an ``instance_id``) and ATIF name a file's run by its folders; a
    stream's copy lives in a random temporary folder (``trajsearch-streams-<host>-<pid>-<random>/stream-0/``), so its
    run's id held that folder, even with ``--stream-name``: every rerun of ``zcat dump | trajsearch ingest -`` added
    the run again. Now the copy's own folders name nothing: the second ingest finds the run unchanged."""
    first = json.loads(_stream(dump.read_bytes(), "--stream-name", name))
    again = json.loads(_stream(dump.read_bytes(), "--stream-name", name))
    assert first["ingested"] == 1 and again["ingested"] == 0 and again["unchanged"] == 1
    code, out, err = run_cli("stats", "--json")
    assert code == 0 and json.loads(out)["trajectories"] == 1, err
