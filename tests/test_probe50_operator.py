"""Probe 50 (OP): the batch indexer, the server's ingest and the trace store, as an operator meets them.

Inputs are real dumps kept under ``tests/fixtures`` (sources in each folder's ``SOURCE.md``): SWE-agent's own
test trajectory (pydicom-1458, a submission no test judged: a run with no verdict of its own) and two tau-bench
results files of task 2 (grok, and a course project's Qwen run), both named ``results.json`` as tau-bench's
``run.py`` users keep them in run folders.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import subprocess

ROOT = Path(__file__).resolve().parent.parent
SWE = Path(__file__).parent / "fixtures" / "swe-agent" / ".real" / \
    "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TRAJSEARCH_MODEL": "hashing", "COLUMNS": "400",
           **extra}
    for name in ("TRAJSEARCH_URI", "TRAJSEARCH_TRACES", "TRAJSEARCH_SERVER", "TRAJSEARCH_DEBUG", "TRAJSEARCH_API_KEY"):
        if name not in extra:
            env.pop(name, None)
    return env


def _ingest(env: dict[str, str], *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", *args, "-q"], cwd=ROOT, env=env,
                          capture_output=True, input=stdin, timeout=600)


def _upgraded(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``env`` as of the next release: REPRESENTATION_VERSION bumped, so every stored run reads as changed."""
    (tmp_path / "upgrade").mkdir(exist_ok=True)
    (tmp_path / "upgrade" / "sitecustomize.py").write_text(
        "import trajsearch.represent as r\nr.REPRESENTATION_VERSION += 1\n")
    return {**env, "PYTHONPATH": os.pathsep.join([str(tmp_path / "upgrade"), env["PYTHONPATH"]])}


def test_a_missing_trace_is_said_once_and_not_retried(tmp_path: Path) -> None:
    """Item 2: a store whose trace files were removed, re-ingested after an upgrade: each changed run with no
    verdict of its own read its stored trace four times (0.5 + 1 + 2 s of back-off, four warning lines) before
    being written as read. A missing trace is said at once, in one line naming the run and the trace's URI; the
    run is written again, and its trace with it."""
    env = _env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(SWE), "-t", "acme").returncode == 0
    traces = list((tmp_path / "home" / "traces" / "acme").glob("*.json.gz"))
    assert len(traces) == 1
    traces[0].unlink()
    started = time.monotonic()
    again = _ingest(_upgraded(env, tmp_path), str(SWE), "-t", "acme", "--restart")
    took = time.monotonic() - started
    assert again.returncode == 0 and b"ingested 1" in again.stdout, again.stdout + again.stderr
    said = again.stderr.decode()
    assert "retrying" not in said and "attempt" not in said, said
    lines = [line for line in said.splitlines() if "pydicom__pydicom-1458" in line]
    assert len(lines) == 1 and "is missing" in lines[0] and f"file://{traces[0]}" in lines[0], said
    assert traces[0].exists()  # written again with the run
    assert took < 30  # (a bound for a crawl only: the retries cost 3.5 s, the command's start more)
