"""Ctrl-C or SIGTERM of a single-process ``trajsearch ingest`` landing inside ``threading``/``queue`` code.

The command's own handlers (Ctrl-C's "stopping" line, SIGTERM's exit 143) raised wherever the main thread was. The
main thread hands batches to the indexer's pipeline through ``queue.Queue`` and, every batch handed over, waits for
its threads with ``Thread.join``. Raised inside a queue's ``Condition.wait`` (between its lock's release and its
retaking), the exception released the lock again: "RuntimeError: release unlocked lock" (CPython gh-118433), not the
signal's exit. Raised inside ``Thread.join`` on Python 3.11, it marked the writing thread stopped while it still
wrote (``_wait_for_tstate_lock`` releases the thread's lock on any exception): the wait ended, the store was closed
under the batch being written, whose runs were then stored but not in the checkpoint, or half-written. A signal
lands there only by chance, so the command sends it to itself at that point from a profile hook: the command's code,
its handlers and its exit are the real ones (as ``test_ingest_worker_signal_in_locks`` does for a worker).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from process_support import launched
from test_ingest_pipeline import tau_dump

ROOT = Path(__file__).parents[1]
RUNS = 600  # batches enough for the pipeline's queues to fill, and to be writing at the last wait

#: Run ``trajsearch ingest`` (``argv[3:]``), sending itself signal ``argv[1]`` the first time its main thread,
#: waiting to hand a batch to the indexer's full pipeline, is at profile event ``argv[2]`` of ``threading.Condition``'s
#: ``argv[3]``: the return of its ``release`` call in ``_release_save`` (the lock just let go) or the start of
#: ``_acquire_restore`` (the lock not yet taken back).
_LAUNCH_IN_QUEUE = """
import runpy, signal, sys, threading
sig, event, method = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def hook(frame, at, arg):
    waiting = frame.f_back and frame.f_back.f_back and frame.f_back.f_back.f_back
    if (at == event and frame.f_code.co_name == method and frame.f_code.co_filename == threading.__file__
            and waiting and waiting.f_code.co_filename.endswith("indexer.py")):
        sys.setprofile(None)
        sys.stderr.write("signalled\\n")
        signal.raise_signal(sig)

sys.argv = ["trajsearch", *sys.argv[4:]]
sys.setprofile(hook)  # this thread's: the main one, which runs the handler
runpy.run_module("trajsearch.cli", run_name="__main__", alter_sys=True)
"""

#: Run ``trajsearch ingest`` (``argv[2:]``) so that signal ``argv[1]`` lands inside ``Thread.join`` (at its lock's
#: ``acquire``) as the main thread, every batch handed over, waits for the indexer's writing thread, while that thread
#: is between a batch's run record and its end (``end_runs``): held there (a profile hook of its own) until the main
#: thread either waits for it again (the batch then finishes) or has closed the store (the batch is cut short).
_LAUNCH_AT_JOIN = """
import runpy, signal, sys, threading
sig = int(sys.argv[1])
armed, arrived, go, fire = threading.Event(), threading.Event(), threading.Event(), threading.Event()

def writer_hook(frame, at, arg):
    if (at == "call" and frame.f_code.co_name == "end_runs" and armed.is_set()
            and threading.current_thread().name == "ingest-write"):
        sys.setprofile(None)
        arrived.set()
        go.wait()

def main_hook(frame, at, arg):
    code = frame.f_code
    if at == "return" and code.co_name == "close" and code.co_filename.endswith("index.py") and armed.is_set():
        go.set()  # the store closed under the held batch
    if (at == "c_call" and fire.is_set() and code.co_name == "_wait_for_tstate_lock"
            and getattr(frame.f_locals.get("self"), "name", None) == "ingest-write"):
        fire.clear()
        sys.stderr.write("signalled\\n")
        signal.raise_signal(sig)  # inside the join's wait for the writer's lock
        return
    writer = frame.f_locals.get("self") if at == "call" and code.co_name == "join" else None
    if getattr(writer, "name", None) != "ingest-write" or not frame.f_back.f_code.co_filename.endswith("indexer.py"):
        return
    if armed.is_set():
        go.set()  # waited for again: the held batch finishes
    else:
        armed.set()
        while writer.is_alive() and not arrived.wait(0.01):
            pass
        if arrived.is_set():
            fire.set()

threading.setprofile(writer_hook)
sys.setprofile(main_hook)
sys.argv = ["trajsearch", *sys.argv[2:]]
runpy.run_module("trajsearch.cli", run_name="__main__", alter_sys=True)
"""


def _ingest(tmp_path: Path, launch: str, *args: str) -> tuple[subprocess.CompletedProcess, list[str], dict[str, str]]:
    """The ingest of a dump of ``RUNS`` runs, run by ``launch`` with ``args`` before its own (as from a terminal:
    SIGINT Python's), and the command line of its rerun."""
    dump = tau_dump(tmp_path / "airline-runs.jsonl", RUNS)
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"), "COLUMNS": "400",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    ingest = ["ingest", str(dump), "-t", "acme", "-q", "--uri", str(tmp_path / "milvus.db"),
              "--traces", str(tmp_path / "traces")]
    proc = subprocess.run(launched([sys.executable, "-c", launch, *args, *ingest], sigint="default"), env=env,
                          capture_output=True, text=True, cwd=ROOT, timeout=600)  # a bound for a hang, not a target
    return proc, ingest, env


def _committed(tmp_path: Path) -> int:
    [checkpoint] = (tmp_path / "home" / "ingest").glob("checkpoint-*.json")
    return json.loads(checkpoint.read_text())["stats"]["ingested"]


def _stored(tmp_path: Path, caplog) -> int:
    with caplog.at_level(logging.WARNING, logger="trajsearch"):
        with TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"),
                             embedder=HashingEmbedder()) as ts:
            stored = ts.stats(tenant="acme")["trajectories"]
    assert "half-written" not in caplog.text
    return stored


def _rerun_ingests_the_rest(tmp_path: Path, caplog, ingest: list[str], env: dict[str, str], committed: int) -> None:
    rerun = subprocess.run([sys.executable, "-m", "trajsearch.cli", *ingest, "--json"], env=env, capture_output=True,
                           text=True, cwd=ROOT, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    summary = json.loads(rerun.stdout)
    assert summary["ingested"] == RUNS - committed, summary  # exactly the rest: nothing the checkpoint had
    assert _stored(tmp_path, caplog) == RUNS


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("event, method", [("c_return", "_release_save"), ("call", "_acquire_restore")])
def test_a_signal_inside_a_queue_s_lock_stops_the_ingest_as_interrupted(tmp_path: Path, caplog, sig: int,
                                                                        event: str, method: str) -> None:
    proc, ingest, env = _ingest(tmp_path, _LAUNCH_IN_QUEUE, str(int(sig)), event, method)
    assert "signalled" in proc.stderr, "the hook never met the lock call: " + proc.stderr[-2000:]
    assert proc.returncode == 128 + sig, proc.stderr[-3000:]
    assert "release unlocked lock" not in proc.stderr
    assert "interrupted: " in proc.stderr and "rerun the same command to resume" in proc.stderr
    committed = _committed(tmp_path)
    assert _stored(tmp_path, caplog) == committed
    _rerun_ingests_the_rest(tmp_path, caplog, ingest, env, committed)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_inside_the_last_wait_lets_the_batch_being_written_finish(tmp_path: Path, caplog, sig: int) -> None:
    """The store is closed once the writing thread has ended, not under its batch: what the checkpoint says is
    stored is stored, whole, and a rerun ingests exactly the rest."""
    proc, ingest, env = _ingest(tmp_path, _LAUNCH_AT_JOIN, str(int(sig)))
    assert "signalled" in proc.stderr, "the writer was not met mid-batch at the last wait: " + proc.stderr[-2000:]
    assert proc.returncode == 128 + sig, proc.stderr[-3000:]
    committed = _committed(tmp_path)
    assert f"interrupted: {committed} records committed" in proc.stderr, proc.stderr[-3000:]
    assert _stored(tmp_path, caplog) == committed > 0
    _rerun_ingests_the_rest(tmp_path, caplog, ingest, env, committed)
