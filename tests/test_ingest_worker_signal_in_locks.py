"""A worker's SIGTERM landing while its main thread juggles a queue's lock ends it as any SIGTERM does (exit 143).

CI at f198fa74: after a SIGTERM to the ingest's process group, "worker 1 exited with 1" and no result. The worker's
handler raised SystemExit wherever the main thread was; the main thread spends its time handing batches to the
indexer's pipeline through ``queue.Queue``, whose ``Condition.wait`` releases and retakes the queue's lock in Python
code. Raised after the release and before the lock was taken back, the exception left through the queue's ``with``,
which released the lock again: "RuntimeError: release unlocked lock", exit 1, no result. A signal lands there only
by chance (once in 5,003 tests of CI), so the test has the worker send it to itself at that point, from a profile
hook (``signal_hooks``): the worker's code, its signal handler and its exit are the real ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.ingest.batch import IngestJob
from signal_hooks import AT_THE_LAST_JOIN, IN_A_QUEUE_S_LOCK, committed_runs, stored_runs
from test_ingest_pipeline import tau_dump

ROOT = Path(__file__).parents[1]

@pytest.mark.parametrize("event, method", [("c_return", "_release_save"), ("call", "_acquire_restore")])
def test_a_sigterm_inside_a_queue_s_lock_ends_the_worker_as_interrupted(tmp_path: Path, event: str,
                                                                        method: str) -> None:
    dump = tau_dump(tmp_path / "airline-runs.jsonl", 600)  # batches enough for the pipeline's queues to fill
    job = IngestJob(paths=[dump], tenant="acme", state_dir=tmp_path / "state")
    spec = json.dumps({"job": job.to_json(), "uri": str(tmp_path / "milvus.db"), "traces": str(tmp_path / "traces"),
                       "write_lock": None})
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(tmp_path / "home"),
           "PYTHONPATH": os.pathsep.join(sys.path)}
    worker = subprocess.run([sys.executable, "-c", IN_A_QUEUE_S_LOCK, str(int(signal.SIGTERM)), event, method,
                             "trajsearch.ingest.worker", spec], env=env, capture_output=True,
                            text=True, cwd=ROOT, timeout=600)  # a bound for a hung worker, not a speed target
    assert "signalled" in worker.stderr, "the hook never met the lock call: " + worker.stderr[-2000:]
    assert worker.returncode == 128 + signal.SIGTERM, worker.stderr[-3000:]
    assert worker.stdout == ""  # an interrupted worker prints no result: the parent reads its checkpoint


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
    worker = subprocess.run([sys.executable, "-c", AT_THE_LAST_JOIN, str(int(signal.SIGTERM)),
                             "trajsearch.ingest.worker", spec], env=env, capture_output=True, text=True,
                            cwd=ROOT, timeout=600)  # a bound for a hung worker, not a speed target
    assert "signalled" in worker.stderr, "the writer was not met mid-batch at the last wait: " + worker.stderr[-2000:]
    assert worker.returncode == 128 + signal.SIGTERM, worker.stderr[-3000:]
    [checkpoint] = state.glob("checkpoint-*.json")
    assert stored_runs(tmp_path, caplog) == committed_runs(checkpoint) > 0
