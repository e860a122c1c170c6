"""A worker's SIGTERM landing while its main thread juggles a queue's lock ends it as any SIGTERM does (exit 143).

CI at f198fa74: after a SIGTERM to the ingest's process group, "worker 1 exited with 1" and no result. The worker's
handler raised SystemExit wherever the main thread was; the main thread spends its time handing batches to the
indexer's pipeline through ``queue.Queue``, whose ``Condition.wait`` releases and retakes the queue's lock in Python
code. Raised after the release and before the lock was taken back, the exception left through the queue's ``with``,
which released the lock again: "RuntimeError: release unlocked lock", exit 1, no result. A signal lands there only
by chance (once in 5,003 tests of CI), so the test has the worker send it to itself at that point, from a profile
hook: the worker's code, its signal handler and its exit are the real ones.
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
from trajsearch.ingest.batch import IngestJob
from trajsearch.search import TrajSearch
from test_ingest_pipeline import tau_dump

ROOT = Path(__file__).parents[1]

#: Run the worker (``argv[1]`` its spec), sending itself SIGTERM the first time its main thread, waiting to hand a
#: batch to the indexer's full pipeline, is at profile event ``argv[2]`` of ``threading.Condition``'s ``argv[3]``:
#: the return of its ``release`` call in ``_release_save`` (the lock just let go) or the start of ``_acquire_restore``
#: (the lock not yet taken back).
_LAUNCH = """
import runpy, signal, sys, threading
spec, event, method = sys.argv[1:4]

def hook(frame, at, arg):
    waiting = frame.f_back and frame.f_back.f_back and frame.f_back.f_back.f_back
    if (at == event and frame.f_code.co_name == method and frame.f_code.co_filename == threading.__file__
            and waiting and waiting.f_code.co_filename.endswith("indexer.py")):
        sys.setprofile(None)
        sys.stderr.write("signalled\\n")
        signal.raise_signal(signal.SIGTERM)

sys.argv = ["trajsearch.ingest.worker", spec]
sys.setprofile(hook)  # this thread's: the main one, which runs the handler
runpy.run_module("trajsearch.ingest.worker", run_name="__main__")
"""


@pytest.mark.parametrize("event, method", [("c_return", "_release_save"), ("call", "_acquire_restore")])
def test_a_sigterm_inside_a_queue_s_lock_ends_the_worker_as_interrupted(tmp_path: Path, event: str,
                                                                        method: str) -> None:
    dump = tau_dump(tmp_path / "airline-runs.jsonl", 600)  # batches enough for the pipeline's queues to fill
    job = IngestJob(paths=[dump], tenant="acme", state_dir=tmp_path / "state")
    spec = json.dumps({"job": job.to_json(), "uri": str(tmp_path / "milvus.db"), "traces": str(tmp_path / "traces"),
                       "write_lock": None})
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    worker = subprocess.run([sys.executable, "-c", _LAUNCH, spec, event, method], env=env, capture_output=True,
                            text=True, cwd=ROOT, timeout=600)  # a bound for a hung worker, not a speed target
    assert "signalled" in worker.stderr, "the hook never met the lock call: " + worker.stderr[-2000:]
    assert worker.returncode == 128 + signal.SIGTERM, worker.stderr[-3000:]
    assert worker.stdout == ""  # an interrupted worker prints no result: the parent reads its checkpoint


#: Run the worker (``argv[1]`` its spec) so that a SIGTERM lands as its main thread, every batch handed over, waits
#: for the indexer's writing thread (``Thread.join`` called from indexer.py), while that thread is between a batch's
#: run record and its end (``end_runs``): held there (a profile hook of its own) until the main thread either waits
#: for it again (the batch then finishes) or has closed the store (the batch is then cut short).
_LAUNCH_AT_JOIN = """
import runpy, signal, sys, threading
spec = sys.argv[1]
armed, arrived, go = threading.Event(), threading.Event(), threading.Event()

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
            sys.stderr.write("signalled\\n")
            signal.raise_signal(signal.SIGTERM)

threading.setprofile(writer_hook)
sys.setprofile(main_hook)
sys.argv = ["trajsearch.ingest.worker", spec]
runpy.run_module("trajsearch.ingest.worker", run_name="__main__")
"""


def test_a_sigterm_as_the_last_batches_are_written_lets_the_batch_in_hand_finish(tmp_path: Path, caplog) -> None:
    """Review RVME36, 3: a signal met once every batch was handed over, as the pipeline's threads were waited for,
    ended the wait: the store was closed under the batch being written, its runs left half-written (the next open
    removed them). Now the wait goes on, the batch finishes, and the exit is the signal's."""
    dump = tau_dump(tmp_path / "airline-runs.jsonl", 600)  # batches enough to be writing at the last wait
    state = tmp_path / "state"
    job = IngestJob(paths=[dump], tenant="acme", state_dir=state)
    spec = json.dumps({"job": job.to_json(), "uri": str(tmp_path / "milvus.db"), "traces": str(tmp_path / "traces"),
                       "write_lock": None})
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    worker = subprocess.run([sys.executable, "-c", _LAUNCH_AT_JOIN, spec], env=env, capture_output=True, text=True,
                            cwd=ROOT, timeout=600)  # a bound for a hung worker, not a speed target
    assert "signalled" in worker.stderr, "the writer was not met mid-batch at the last wait: " + worker.stderr[-2000:]
    assert worker.returncode == 128 + signal.SIGTERM, worker.stderr[-3000:]
    [checkpoint] = state.glob("checkpoint-*.json")
    committed = json.loads(checkpoint.read_text())["stats"]["ingested"]
    with caplog.at_level(logging.WARNING, logger="trajsearch"):
        with TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"),
                             embedder=HashingEmbedder()) as ts:
            stored = ts.stats(tenant="acme")["trajectories"]
    assert "half-written" not in caplog.text
    assert stored == committed > 0
