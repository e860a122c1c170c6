"""Probe G (G3): ``ingest --server`` says its progress when stderr is no terminal, and honours --log-every.

Over --server it said nothing until the summary (12 minutes on the probe's dump) and ignored --log-every. Now a
line counts the input read and the records sent to the server (which writes a stream's batches as they arrive).
A real server on loopback; the input real tau-bench results (tests/fixtures/tau-bench/.real: 14 runs).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.server import ServiceServer

TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real"


def test_an_ingest_over_a_server_logs_its_progress_at_the_asked_pace(tmp_path: Path) -> None:
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-t"), embedder=HashingEmbedder())
    with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                       address="127.0.0.1:0") as srv:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TRAJSEARCH_SERVER": srv.address,
               "TRAJSEARCH_API_KEY": key, "COLUMNS": "400"}

        def ingest(every: str) -> list[str]:
            done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(TAU), "--log-every", every],
                                  capture_output=True, text=True, timeout=600, env=env)  # a bound for a hang only
            assert done.returncode == 0, done.stderr
            return [line for line in done.stderr.splitlines() if line.startswith("ingesting over --server: ")]

        every_update, none = ingest("0"), ingest("86400")
    ts.close()
    assert len(every_update) >= 14
    # 16 runs: 14, and the 2 of gpt-4o-airline-failed-calls.json (probe E, E1)
    assert every_update[-1].startswith("ingesting over --server: 0.5 of 0.5 MB done, 16 runs and records sent to the server")
    assert none == []  # --log-every honoured: nothing within a day
