"""Streamed inputs and the ingest's exit statuses, as a scheduler meets them (review 2 of round p40: F2, F5, F7, F8).

Real files only: ``tau-bench/gpt-4o-airline-mini.json`` (two airline runs of tau-bench's own ``gpt-4o-airline.json``,
see ``tests/test_ingest_operation.py``) and ``tau-bench/.real/tool-calling-grok-3-...json`` (three retail runs of a
tau-bench fork's results file, see ``tau-bench/.real/SOURCE.md``): two different dumps of a format that takes run ids
from the file name. A cut-off dump is the head of a real file. Plumbing: the fast hashing test embedder.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_support import backend, run_cli  # noqa: F401  (backend: a fixture)
from trajsearch.cli import app

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parents[1]
AIRLINE = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
RETAIL = FIXTURES / "tau-bench" / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json"


def stream(*args: str, data: bytes) -> tuple[int, str, str]:
    """``trajsearch ingest - ARGS`` with ``data`` on standard input: exit code, stdout, stderr."""
    result = CliRunner().invoke(app, ["ingest", "-", "-q", *args], input=data)
    return result.exit_code, result.stdout, result.stderr


def stored_runs() -> int:
    code, out, err = run_cli("stats", "--json")
    assert code == 0, err
    return json.loads(out)["trajectories"]


# -- F5: --dry-run exits as the ingest would -----------------------------------------------------


def test_a_dry_run_exits_as_the_ingest_would(tmp_path: Path) -> None:
    """Bug (F5): ``--dry-run`` exited 0 whatever it found, so it could not serve as a scheduler's pre-flight
    check. Now 4 when nothing would land, 3 when some records would be rejected, 0 when all would land."""
    cut = tmp_path / "cut" / AIRLINE.name
    cut.parent.mkdir()
    cut.write_bytes(AIRLINE.read_bytes()[:3000])
    code, _, err = run_cli("ingest", str(cut.parent), "--dry-run")
    assert code == 4, err
    code, _, err = run_cli("ingest", str(cut.parent), str(AIRLINE), "--dry-run", "--json")
    assert code == 3, err
    code, _, err = run_cli("ingest", str(AIRLINE), "--dry-run")
    assert code == 0, err
    code, out, _ = run_cli("ingest", "--help")
    assert "--dry-run exits 0, 3 or 4 as the ingest would" in " ".join(out.split())


# -- F8: --server reports an unreadable input as a rejection --------------------------------------


def test_an_unreadable_input_over_server_is_a_rejection_as_locally(backend, tmp_path: Path) -> None:
    """Bug (F8): with --server a truncated file made the reader raise inside the gRPC request stream: "error:
    ServiceError: UNKNOWN: Exception iterating requests!" and exit 1 ("rerun to resume": a scheduler retried
    forever). Locally it is a rejection, exit 4. Now both backends name the rejection and exit alike."""
    cut = tmp_path / RETAIL.name  # cut inside its first record: not even its format can be told
    cut.write_bytes(RETAIL.read_bytes()[:3000])
    code, _, err = run_cli("ingest", str(cut), "-q")
    told = "".join(err.split())  # the console wraps a long path anywhere
    assert code == 4, err
    assert f"rejected{cut}" in told and "UNKNOWN" not in told
    again = tmp_path / "again" / cut.name  # not the input the checkpoint has done
    again.parent.mkdir()
    again.write_bytes(cut.read_bytes())
    code, out, err = run_cli("ingest", str(again), str(AIRLINE), "-q")
    assert code == 3 and "ingested 2 runs" in out, err
    code, _, err = stream(data=RETAIL.read_bytes()[:3000])
    assert code == 4 and "rejected standard input" in " ".join(err.split()), err


