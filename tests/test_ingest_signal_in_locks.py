"""Ctrl-C or SIGTERM of a single-process ``trajsearch ingest`` landing inside ``threading``/``queue`` code.

The command's own handlers (Ctrl-C's "stopping" line, SIGTERM's exit 143) raised wherever the main thread was. The
main thread hands batches to the indexer's pipeline through ``queue.Queue`` and, every batch handed over, waits for
its threads with ``Thread.join``. Raised inside a queue's ``Condition.wait`` (between its lock's release and its
retaking), the exception released the lock again: "RuntimeError: release unlocked lock" (CPython gh-118433), not the
signal's exit. Raised inside ``Thread.join`` on Python 3.11, it marked the writing thread stopped while it still
wrote (``_wait_for_tstate_lock`` releases the thread's lock on any exception): the wait ended, the store was closed
under the batch being written, whose runs were then stored but not in the checkpoint, or half-written. A signal
lands there only by chance, so the command sends it to itself at that point from a profile hook: the command's code,
its handlers and its exit are the real ones (``signal_hooks``, as for a worker).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cli_support import run_cli
from process_support import launched
from signal_hooks import AT_THE_LAST_JOIN, IN_A_QUEUE_S_LOCK, committed_runs, stored_runs
from test_ingest_pipeline import tau_dump

ROOT = Path(__file__).parents[1]
RUNS = 600  # batches enough for the pipeline's queues to fill, and to be writing at the last wait

def _ingest(tmp_path: Path, launch: str, *args: str) -> tuple[subprocess.CompletedProcess, list[str], dict[str, str]]:
    """The ingest of a dump of ``RUNS`` runs, run by ``launch`` with ``args`` before its own (as from a terminal:
    SIGINT Python's), and the command line of its rerun."""
    dump = tau_dump(tmp_path / "airline-runs.jsonl", RUNS)
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"), "COLUMNS": "400",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    ingest = ["ingest", str(dump), "-t", "acme", "-q", "--uri", str(tmp_path / "milvus.db"),
              "--traces", str(tmp_path / "traces")]
    proc = subprocess.run(launched([sys.executable, "-c", launch, *args, "trajsearch.cli", *ingest], sigint="default"),
                          env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=600)  # a bound for a hang, not a target
    return proc, ingest, env


def _committed(tmp_path: Path) -> int:
    [checkpoint] = (tmp_path / "home" / "ingest").glob("checkpoint-*.json")
    return committed_runs(checkpoint)


def _rerun_ingests_the_rest(tmp_path: Path, caplog, ingest: list[str], env: dict[str, str], committed: int) -> None:
    rerun = subprocess.run([sys.executable, "-m", "trajsearch.cli", *ingest, "--json"], env=env, capture_output=True,
                           text=True, cwd=ROOT, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    summary = json.loads(rerun.stdout)
    assert summary["ingested"] == RUNS - committed, summary  # exactly the rest: nothing the checkpoint had
    assert stored_runs(tmp_path, caplog) == RUNS


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("event, method", [("c_return", "_release_save"), ("call", "_acquire_restore")])
def test_a_signal_inside_a_queue_s_lock_stops_the_ingest_as_interrupted(tmp_path: Path, caplog, sig: int,
                                                                        event: str, method: str) -> None:
    proc, ingest, env = _ingest(tmp_path, IN_A_QUEUE_S_LOCK, str(int(sig)), event, method)
    assert "signalled" in proc.stderr, "the hook never met the lock call: " + proc.stderr[-2000:]
    assert proc.returncode == 128 + sig, proc.stderr[-3000:]
    assert "release unlocked lock" not in proc.stderr
    assert "interrupted: " in proc.stderr and "rerun the same command to resume" in proc.stderr
    committed = _committed(tmp_path)
    assert stored_runs(tmp_path, caplog) == committed
    _rerun_ingests_the_rest(tmp_path, caplog, ingest, env, committed)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_the_last_wait_lets_the_batch_being_written_finish(tmp_path: Path, caplog, sig: int) -> None:
    """The store is closed once the writing thread has ended, not under its batch: what the checkpoint says is
    stored is stored, whole, and a rerun ingests exactly the rest."""
    proc, ingest, env = _ingest(tmp_path, AT_THE_LAST_JOIN, str(int(sig)))
    assert "signalled" in proc.stderr, "the writer was not met mid-batch at the last wait: " + proc.stderr[-2000:]
    assert proc.returncode == 128 + sig, proc.stderr[-3000:]
    committed = _committed(tmp_path)
    assert f"interrupted: {committed} records committed" in proc.stderr, proc.stderr[-3000:]
    assert stored_runs(tmp_path, caplog) == committed > 0
    _rerun_ingests_the_rest(tmp_path, caplog, ingest, env, committed)


def test_an_ingest_run_in_a_host_program_keeps_its_own_sigterm_handler(tmp_path: Path, monkeypatch) -> None:
    """The ``trajsearch`` command makes SIGTERM its exit 143 and, as it ingests, raises that out of the locks; a
    program running the commands in its own process (typer's runner) keeps its own handler. That raising once took
    any Python handler's place for the ingest: the host's never ran, and the ingest ended with exit 143."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    dump = tau_dump(tmp_path / "airline-runs.jsonl", 60)
    heard: list[int] = []
    sent = threading.Event()

    def sigterm_as_a_batch_is_written(frame, event: str, arg: object) -> None:  # in the ingest's threads
        if event == "call" and frame.f_code.co_name == "end_runs" and not sent.is_set():
            sent.set()
            signal.raise_signal(signal.SIGTERM)  # its handler runs in the main thread, which waits for this one

    previous = signal.signal(signal.SIGTERM, lambda signum, frame: heard.append(signum))
    threading.setprofile(sigterm_as_a_batch_is_written)
    try:
        code, _, stderr = run_cli("ingest", str(dump), "-t", "acme", "-q", "--uri", str(tmp_path / "milvus.db"),
                                  "--traces", str(tmp_path / "traces"))
    finally:
        threading.setprofile(None)
        signal.signal(signal.SIGTERM, previous)
    assert sent.is_set()
    assert heard == [signal.SIGTERM]
    assert code == 0, stderr
