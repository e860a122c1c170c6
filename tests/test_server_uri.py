"""The server code path: the same façade against ``http://127.0.0.1:P``.

No Milvus >= 2.5 server can run on these machines; ``milvus-lite server`` speaks
the Milvus gRPC protocol over a real socket, so pymilvus takes its remote path.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.store.filters import Filters

from conftest import failing_run, free_port, make_run


@pytest.fixture(scope="module")
def milvus_server(tmp_path_factory):
    exe = shutil.which("milvus-lite") or str(Path(sys.executable).parent / "milvus-lite")
    port = free_port()
    data = tmp_path_factory.mktemp("milvus-server")
    proc = subprocess.Popen(
        [exe, "server", "--data-dir", str(data), "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 600
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None:
                pytest.fail("milvus-lite server exited at start")
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("milvus-lite server did not start listening in 600 s")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=600)


def test_same_code_path_against_a_server_uri(milvus_server, tmp_path):
    traces = str(tmp_path / "traces")
    with TrajSearch.open(milvus_server, traces=traces, embedder=HashingEmbedder()) as ts:
        report = ts.add([make_run("a1"), failing_run("a2", "OSError: [Errno 28] No space left on device"),
                         make_run("b1", tenant="beta")])
        assert report.ingested == 3
        hits = ts.search("No space left on device", tenant="acme", k=5)
        assert {h.trajectory_id for h in hits} == {"a1", "a2"}
        assert hits[0].trajectory_id == "a2"
        assert ts.expand(hits[0], before=1, after=1)
        # the runtime's narrow reads: BM25 ids to runs, and per-run rows scored by key
        assert ts.lexical_runs("No space left on device", Filters(tenant="acme", levels=("failure",)), k=5) == ["a2"]
        scored = ts.score_runs("No space left on device", ["a1", "a2", "b1"], Filters(tenant="acme", levels=("task",)))
        assert sorted(h.trajectory_id for h in scored) == ["a1", "a2"]
        assert scored[0].score >= scored[1].score
    # a second client (another process would do the same) sees the rows, and re-ingest is a no-op
    with TrajSearch.open(milvus_server, traces=traces, embedder=HashingEmbedder()) as ts:
        assert ts.add([make_run("a1")]).unchanged == 1
        assert ts.stats(tenant="beta")["trajectories"] == 1
