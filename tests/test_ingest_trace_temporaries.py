"""Probe G (G6): the temp files of a trace write that was killed (``kill -9`` of ``ingest --workers``) are removed
by the next ingest; those of live writers are left alone.

The killed writer is real: a process putting a trace with ``FileTraceStore.put``, killed with SIGKILL between
writing its temp file and renaming it (its ``os.replace`` waits for the kill). The input: real tau-bench results
(tests/fixtures/tau-bench/.real).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from cli_support import run_cli

from conftest import make_run

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real" / \
    "tool-calling-gpt-oss-20B-1.0_range_0--1_user-Gemma-3-12B-llm_1007041735.json"

KILLED_MID_WRITE = """
import os, sys, time
from trajsearch.store.traces import FileTraceStore
from trajsearch.model import Trajectory

def stuck(src, dst):  # the temp file is written and fsynced: the writer dies before the rename
    print("written", flush=True)
    time.sleep(600)

os.replace = stuck
FileTraceStore(sys.argv[1]).put(Trajectory.model_validate_json(sys.stdin.read()))
"""


def _killed_mid_write(root: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", KILLED_MID_WRITE, str(root)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    proc.stdin.write(make_run("killed", tenant="acme").model_dump_json())
    proc.stdin.close()
    assert proc.stdout.readline() == "written\n"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=600)


def test_the_next_ingest_removes_what_a_killed_trace_write_left(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    for name, value in (("TRAJSEARCH_MODEL", "hashing"), ("TRAJSEARCH_HOME", str(home)),
                        ("TRAJSEARCH_URI", str(home / "milvus.db")), ("TRAJSEARCH_TRACES", str(home / "traces"))):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    _killed_mid_write(home / "traces")
    [left] = [p for p in (home / "traces" / "acme").iterdir() if p.name.endswith(".tmp")]
    os.utime(left, (time.time() - 600, time.time() - 600))  # killed a while ago: a fresh one may be another
    # pid namespace's live write under the same host name (review 3, D3), so the same writer's fresh one stays
    fresh = left.with_name(re.sub(r"-[^-.]+\.tmp$", "-fresh0.tmp", left.name))
    fresh.write_bytes(b"\x1f\x8b")
    old = home / "traces" / "acme" / ".killed-0123456789abcdef.json.gz.k2j4h1x0.tmp"  # an older version's, 2 h old
    young = home / "traces" / "acme" / ".other-0123456789abcdef.json.gz.q8w7e6r5.tmp"  # perhaps being written
    for path, age in ((old, 7200), (young, 0)):
        path.write_bytes(b"\x1f\x8b")
        os.utime(path, (time.time() - age, time.time() - age))

    code, out, err = run_cli("ingest", str(TAU), "-t", "acme", "-q")
    assert code == 0, err
    names = {p.name for p in (home / "traces" / "acme").iterdir()}
    assert left.name not in names and old.name not in names and young.name in names and fresh.name in names
    assert len([n for n in names if n.endswith(".json.gz")]) == 1  # the ingested run's trace
