"""Ctrl-C of ``TrajSearch.add`` (the Python API, Python's own SIGINT handling) as its last batches are written.

Every batch handed over, the indexer waits for its pipeline's threads. It waited with ``Thread.join`` and trusted
``Thread.is_alive()``; a KeyboardInterrupt raised inside ``join`` on Python 3.11 marks the thread stopped while it
still runs (``_wait_for_tstate_lock`` releases the thread's lock on any exception): ``add`` raised at once, and the
caller closed the store under the batch being written, whose runs were then stored though ``on_progress`` never
counted them. The CLI's handlers keep their exception out of ``threading`` code; a library's caller has none. The
signal lands there only by chance, so the program sends it to itself at that point (``signal_hooks``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from process_support import launched
from signal_hooks import AT_THE_LAST_JOIN, stored_runs
from test_ingest_pipeline import tau_dump

ROOT = Path(__file__).parents[1]
RUNS = 600  # batches enough to be writing at the last wait


def _program(tmp_path: Path, *launch: str) -> subprocess.CompletedProcess:
    """``api_ingest_program`` on a dump of ``RUNS`` runs, run by ``launch`` (Ctrl-C Python's, as from a terminal)."""
    dump = tau_dump(tmp_path / "airline-runs.jsonl", RUNS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    program = ["api_ingest_program", str(tmp_path / "milvus.db"), str(tmp_path / "traces"), str(dump)]
    command = [sys.executable, *launch, *program] if launch else [sys.executable, "-m", *program]
    return subprocess.run(launched(command, sigint="default"), env=env, capture_output=True, text=True, cwd=ROOT,
                          timeout=600)  # a bound for a hang, not a target


def test_ctrl_c_at_the_last_wait_stores_what_on_progress_counted_and_no_more(tmp_path: Path, caplog) -> None:
    """``add`` raises KeyboardInterrupt once the batch being written has ended: the runs stored are the ones
    ``on_progress`` counted, whole, and adding the same input again ingests exactly the rest."""
    proc = _program(tmp_path, "-c", AT_THE_LAST_JOIN, str(int(signal.SIGINT)))
    assert "signalled" in proc.stderr, "the writer was not met mid-batch at the last wait: " + proc.stderr[-2000:]
    assert proc.returncode == 130, proc.stderr[-3000:]
    said = json.loads(proc.stdout)
    assert said["interrupted"]
    assert stored_runs(tmp_path, caplog) == said["committed"] > 0

    again = _program(tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert json.loads(again.stdout)["ingested"] == RUNS - said["committed"]
    assert stored_runs(tmp_path, caplog) == RUNS
