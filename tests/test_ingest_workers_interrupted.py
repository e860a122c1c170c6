"""Probe G (G5): Ctrl-C of ``ingest --workers`` says what the workers committed, and it is what the store holds.

The line named the count of the last half-second poll of the workers' checkpoints (80), and "each batch whole"
while the workers were being killed mid-batch: the next open of the store removed 22 half-written runs and held
105. Now the workers stop after the batch in hand (as a single process does) and the count is read from their
final checkpoints. As from a terminal, the Ctrl-C goes to the whole process group (the ingest, its workers and its
loopback Milvus Lite server). The dump: the real tau-bench fixture's runs, replicated.
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

from test_ingest_pipeline import tau_dump

ROOT = Path(__file__).parents[1]


def _committed(home: Path) -> int:
    total = 0
    for ckpt in (home / "ingest").glob("checkpoint-workers-*.json"):
        try:
            total += (json.loads(ckpt.read_text()).get("stats") or {}).get("ingested") or 0
        except ValueError:
            continue
    return total


def test_a_ctrl_c_of_workers_names_what_the_store_holds(tmp_path: Path) -> None:
    dump = tau_dump(tmp_path / "airline-runs.jsonl", 3000)  # far more than the 60 awaited: the signal lands mid-run
    home = tmp_path / "home"
    env = {**os.environ, "TRAJSEARCH_MODEL": "hashing", "TRAJSEARCH_HOME": str(home), "COLUMNS": "400"}
    proc = subprocess.Popen([sys.executable, "-m", "trajsearch.cli", "ingest", str(dump), "-t", "acme", "-q",
                             "--workers", "2"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, start_new_session=True,  # a process group of its own, as a terminal's job
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 900  # a bound for a hung ingest, not a speed target
    while time.monotonic() < deadline and proc.poll() is None and _committed(home) < 60:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGSTOP)  # all held where they are, so the signal cannot race the end of the ingest
    assert proc.poll() is None, "the ingest finished before it could be interrupted: make the dump larger"
    os.killpg(proc.pid, signal.SIGINT)
    os.killpg(proc.pid, signal.SIGCONT)
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 130, stderr
    [line] = [line for line in stderr.splitlines() if line.strip()]
    said = re.fullmatch(r"interrupted: (\d+) runs committed by the workers, each batch whole; rerun the same command "
                        r"to resume \(what is done is skipped\)", line)
    assert said, line
    stats = subprocess.run([sys.executable, "-m", "trajsearch.cli", "stats", "-t", "acme", "--json"], env=env,
                           capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert stats.returncode == 0, stats.stderr
    assert "half-written" not in stats.stderr  # nothing for the next open to clear
    assert json.loads(stats.stdout)["trajectories"] == int(said.group(1)) >= 60
