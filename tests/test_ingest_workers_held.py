"""Probe G (G4, G1): ``ingest --workers N`` on a store another process holds fails as a single-process ingest does.

The workers' server found the store held, waited 60 s in silence and failed as a crash ("error: RuntimeError: ...
(run with --debug for the traceback)"). A live holder is no killed run's server about to close: the error is the
single-process one, a clean line naming the holder, exit 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real" / \
    "tool-calling-gpt-oss-20B-1.0_range_0--1_user-Gemma-3-12B-llm_1007041735.json"


def _ingest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TRAJSEARCH_MODEL": "hashing",
           "TRAJSEARCH_HOME": str(tmp_path / "home"), "TRAJSEARCH_URI": str(tmp_path / "home" / "milvus.db"),
           "TRAJSEARCH_TRACES": str(tmp_path / "home" / "traces")}
    env.pop("TRAJSEARCH_SERVER", None)
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(TAU), "-t", "acme", *args],
                          capture_output=True, text=True, timeout=600, env=env)  # a bound for a hang only


def test_workers_on_a_store_in_use_fail_with_the_single_process_error(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    with TrajSearch.open(str(tmp_path / "home" / "milvus.db"), traces=str(tmp_path / "home" / "traces"),
                         embedder=HashingEmbedder()):  # this test process holds the store
        single = _ingest(tmp_path, "-q")
        workers = _ingest(tmp_path, "-q", "--workers", "2")
    said = [" ".join(result.stderr.split()) for result in (single, workers)]
    for result, text in zip((single, workers), said):
        assert result.returncode == 1, result.stderr
        assert text.startswith("error: the data directory ") and f"is in use by process {os.getpid()}" in text
        assert f"kill {os.getpid()}" in text and "Traceback" not in text
        assert "RuntimeError" not in text and "--debug" not in text
    assert said[1] == said[0]
