"""Probe G (G2): a file trace store that no retry can mend (a path that is a file, a read-only or unwritable
directory) fails at once with one line naming the trace store and what mends it.

Each trace put was retried 4 times (28-31 "retrying" lines), then the advice was "rerun the same command to
resume", which fails the same way. A read-only mount (EROFS) needs root to make; a path that is a regular file
(EEXIST, ENOTDIR) fails alike for any user, and an unwritable directory (EACCES) is checked where the tests are
not run as root. The input: a real tau-bench results file (tests/fixtures/tau-bench/.real).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cli_support import run_cli

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real" / \
    "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


@pytest.fixture
def store(tmp_path: Path, monkeypatch) -> Path:
    for name, value in (("TRAJSEARCH_MODEL", "hashing"), ("TRAJSEARCH_HOME", str(tmp_path / "home")),
                        ("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))):
        monkeypatch.setenv(name, value)
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def _flat(text: str) -> str:
    """``text`` without whitespace: the console wraps a long path anywhere."""
    return "".join(text.split())


def _ingest_fails_at_once(traces: Path) -> str:
    """The ingest's stderr, flat; it failed at once (no retry), wrote nothing and said what mends it."""
    code, out, err = run_cli("ingest", str(TAU), "-t", "acme", "-q", "--traces", str(traces))
    said = _flat(err)
    assert code == 1, err
    assert "retrying" not in said and _flat("rerun the same command") not in said, err
    assert _flat("no row of this batch was written") in said and _flat("point --traces (TRAJSEARCH_TRACES)") in said
    code, out, _ = run_cli("stats", "-t", "acme", "--json")
    assert code == 0 and json.loads(out)["trajectories"] == 0  # nothing of the batch landed
    return said


def test_a_trace_path_that_is_a_file_is_said_so_once(store: Path) -> None:
    results = store / "results.json"  # the mistake of the probe: --traces given the dump's own file
    results.write_text("{}")
    said = _ingest_fails_at_once(results)
    assert _flat(f"the trace store {results} is a file, not a directory") in said and _flat("move that file") in said


def test_a_trace_path_under_a_file_names_the_file(store: Path) -> None:
    results = store / "results.json"
    results.write_text("{}")
    said = _ingest_fails_at_once(results / "traces")
    assert _flat(f"the trace store {results / 'traces'} cannot hold traces: {results} is a file") in said


def test_a_tenant_folder_that_is_a_file_names_it(store: Path) -> None:
    (store / "traces").mkdir()
    (store / "traces" / "acme").write_text("")
    said = _ingest_fails_at_once(store / "traces")
    assert _flat(f"cannot hold traces: {store / 'traces' / 'acme'} is a file") in said


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into any directory: EACCES needs another user")
def test_an_unwritable_trace_directory_is_said_so_once(store: Path) -> None:
    traces = store / "traces"
    traces.mkdir(mode=0o500)
    try:
        said = _ingest_fails_at_once(traces)
    finally:
        traces.chmod(0o700)
    assert _flat(f"the trace store {traces} is not writable by this user") in said
    assert _flat("give this user write access") in said
