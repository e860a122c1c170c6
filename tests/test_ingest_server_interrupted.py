"""Probe G (G4): an ingest over --server that stops early (Ctrl-C, SIGTERM, the server killed) says what it sent
and what a rerun does.

Ctrl-C and SIGTERM exited 130 and 143 with nothing after the progress lines, and a server killed mid-ingest was
a bare ``UNAVAILABLE: Stream removed`` line, though the server had written whole batches of what was sent and a
rerun re-sends everything with those runs counted unchanged. Each test checks that rerun too. The server is real
(``python -m trajsearch.service serve`` on loopback), so is the client (``python -m trajsearch.cli``); the dump is
the real tau-bench fixture's runs, replicated (as the other interruption tests do).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from process_support import launched, serving
from test_ingest_pipeline import tau_dump
from trajsearch.service.auth import key_entry, new_key
from trajsearch.service.client import Client

ROOT = Path(__file__).parents[1]
RUNS = 600
DEADLINE = 900  # seconds: a bound for a hung process, not a speed target


def _serve(tmp: Path, keys: Path) -> tuple[subprocess.Popen, str]:
    """A ``serve`` child over the store in ``tmp`` (again after a kill: its log appended to), and its address."""
    log = tmp / "serve.log"
    since = log.stat().st_size if log.exists() else 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "trajsearch.service", "serve", "--address", "127.0.0.1:0", "--uri",
         str(tmp / "milvus.db"), "--traces", str(tmp / "traces"), "--model", "hashing", "--keys", str(keys), "--grace",
         "5"],
        stdout=subprocess.DEVNULL, stderr=open(log, "a"), cwd=ROOT)
    try:
        return proc, serving(proc, log, since=since)["address"]
    except BaseException:
        _stop(proc)
        raise


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()


@pytest.fixture
def setup(tmp_path: Path):
    key = new_key()
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [key_entry(key, tenant="acme", role="write")]}))
    dump = tau_dump(tmp_path / "airline-runs.jsonl", RUNS)
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"),
           "TRAJSEARCH_API_KEY": key, "COLUMNS": "400"}
    env.pop("TRAJSEARCH_SERVER", None)
    server, address = _serve(tmp_path, keys)
    with Client(address, key) as client:
        client.wait_ready(timeout=600)
    yield tmp_path, keys, key, dump, env, server, address
    _stop(server)


def _ingest(dump: Path, address: str, env: dict[str, str], stderr: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        # as from a terminal: a job started in the background inherits SIGINT ignored (see test_ingest_interrupted)
        launched([sys.executable, "-m", "trajsearch.cli", "ingest", str(dump), "--server", address, "-q"],
                 sigint="default"),
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=open(stderr, "w") if stderr else subprocess.PIPE, text=True)


def _when_some_landed(proc: subprocess.Popen, address: str, key: str) -> int:
    """Wait until the server has written runs of the ingest (at least one batch), then hold the ingest (SIGSTOP,
    so that it cannot finish meanwhile); the runs written by then."""
    landed, deadline = 0, time.monotonic() + DEADLINE
    with Client(address, key) as client:
        while time.monotonic() < deadline and proc.poll() is None and not landed:
            landed = client.stats()["trajectories"]
            time.sleep(0.05)
    proc.send_signal(signal.SIGSTOP)
    assert proc.poll() is None, "the ingest finished before it could be stopped: make the dump larger"
    assert landed, "nothing landed"
    return landed


def _rerun_counts_landed_runs_unchanged(dump: Path, address: str, env: dict[str, str], landed: int) -> None:
    rerun = _ingest(dump, address, env)
    out, err = rerun.communicate(timeout=DEADLINE)
    assert rerun.returncode == 0, err
    ingested, unchanged = map(int, re.search(rf"read {RUNS}: ingested (\d+) runs .*, unchanged (\d+)", out).groups())
    assert ingested + unchanged == RUNS and unchanged >= landed


def _said(line: str, landed: int) -> None:
    flat = " ".join(line.split())
    sent = int(re.search(r"(\d+) runs and records sent to the server", flat).group(1))
    assert sent >= landed
    assert "writes them in whole batches" in flat and "rerun the same command" in flat
    assert "the runs already written counted unchanged" in flat


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_ingest_over_a_server_says_what_it_sent(setup, sig: int) -> None:
    tmp, _, key, dump, env, _, address = setup
    proc = _ingest(dump, address, env, tmp / "ingest.err")
    landed = _when_some_landed(proc, address, key)
    proc.send_signal(sig)
    proc.send_signal(signal.SIGCONT)
    proc.communicate(timeout=DEADLINE)
    stderr = (tmp / "ingest.err").read_text()
    assert proc.returncode == 128 + sig, stderr
    # one line says it (gRPC's C core may log a line of its own on a loaded machine: not ours to judge)
    said = [line for line in stderr.splitlines() if line.startswith("interrupted: ")]
    assert len(said) == 1, stderr
    _said(said[0], landed)
    _rerun_counts_landed_runs_unchanged(dump, address, env, landed)


def test_a_server_killed_mid_ingest_is_said_with_what_was_sent(setup) -> None:
    tmp, keys, key, dump, env, server, address = setup
    proc = _ingest(dump, address, env, tmp / "ingest.err")
    landed = _when_some_landed(proc, address, key)
    server.kill()
    server.wait()
    proc.send_signal(signal.SIGCONT)
    proc.communicate(timeout=DEADLINE)
    stderr = (tmp / "ingest.err").read_text()
    assert proc.returncode == 1, stderr
    said = " ".join(stderr[stderr.find("error: "):].split())
    assert said.startswith(f"error: the server at {address} stopped the ingest (UNAVAILABLE: "), stderr
    assert "TLS" not in said, said  # the server had answered the stream: no hint that it may speak another transport
    _said(said, landed)
    again, address = _serve(tmp, keys)  # the server back, on the store it was killed over
    try:
        with Client(address, key) as client:
            client.wait_ready(timeout=600)
        _rerun_counts_landed_runs_unchanged(dump, address, env, landed)
    finally:
        _stop(again)
