"""The service as its clients meet it on loopback (round 25, SVC2): what the server's log says of a call that ended
early, and what ``serve`` says of the listeners it was asked for.

A real server on 127.0.0.1 (grpcio, Milvus Lite in a temp dir, the fast hashing *test* embedder); the clients are
grpcio stubs and ``trajsearch serve`` run as a child process, waited on by its own lines, never by the clock.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request

import grpc
import pytest

from trajsearch.client import Client
from trajsearch.service.auth import key_entry, new_key
from trajsearch.service.protos import pb2, pb2_grpc
from trajsearch.service.validate import Limits

from conftest import make_run
from process_support import cli_env, serving
from service_support import key_ring, rpc_log, serve_store  # noqa: F401 (fixture)

LIMITS = Limits(max_batch_records=50)


@pytest.fixture(scope="module")
def keys():
    return key_ring(acme_w=dict(tenant="acme", role="write"))


@pytest.fixture(scope="module")
def server(tmp_path_factory, keys):
    srv = serve_store(tmp_path_factory.mktemp("loopback"), keys[1], [make_run("seed-1")], LIMITS)
    yield srv
    srv.stop(grace=2)


def _record(run_id: str) -> pb2.TrajectoryRecord:
    return pb2.TrajectoryRecord(json=make_run(run_id).model_dump_json(), source=f"{run_id}.json")


def test_an_ingest_stream_refused_midway_is_logged_with_what_it_committed(server, keys, rpc_log):
    """A batch indexer's stream whose second batch the server refuses: its first batch is written (the client's
    RecordResults never come), and the log line of the call is the operator's only account of it. It named no
    record ("code": "INVALID_ARGUMENT", the error, nothing more), as for a stream the client cancelled or lost
    midway (probed by killing the client after its first batch: "the request stream broke off", no counts)."""
    first = [_record("early-1"), _record("early-2"), pb2.TrajectoryRecord(json="{not json", source="bad.json")]
    too_many = [_record(f"late-{n}") for n in range(LIMITS.max_batch_records + 1)]
    metadata = (("authorization", f"Bearer {keys[0]['acme_w']}"), ("x-request-id", "early-end-1"))
    with grpc.insecure_channel(server.address) as channel:
        with pytest.raises(grpc.RpcError) as refused:
            pb2_grpc.TrajSearchStub(channel).Ingest(
                iter([pb2.IngestBatch(records=first), pb2.IngestBatch(records=too_many)]),
                metadata=metadata, timeout=600)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
    line = rpc_log.wait("early-end-1")
    assert line.code == "INVALID_ARGUMENT" and "records" in line.error
    logged = {name: getattr(line, name, None) for name in ("records", "ingested", "unchanged", "rejected")}
    assert logged == {"records": 3, "ingested": 2, "unchanged": 0, "rejected": 1}, logged
    with Client(server.address, keys[0]["acme_w"]) as client:  # what the log says is what the index holds
        assert client.run("early-1") is not None and client.run("early-2") is not None
        assert client.run("late-0") is None


def test_serve_says_where_its_metrics_listen(tmp_path):
    """``--metrics 127.0.0.1:0`` (a free port, as for every other listener): the "serving" line named the gRPC and
    web addresses but not this one, nor did any log line, so the operator could not find the counters."""
    (tmp_path / "keys.json").write_text(json.dumps({"keys": [key_entry(new_key(), tenant="acme", role="read")]}))
    with open(tmp_path / "serve.log", "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "trajsearch.service", "serve", "--address", "127.0.0.1:0", "--metrics",
             "127.0.0.1:0", "--uri", str(tmp_path / "milvus.db"), "--traces", str(tmp_path / "traces"), "--model",
             "hashing", "--keys", str(tmp_path / "keys.json")],
            env=cli_env(), stdout=subprocess.DEVNULL, stderr=log)
    try:
        said = serving(proc, tmp_path / "serve.log", says=re.compile(r"trajsearch serving on .*"))[0]
        url = re.search(r", metrics on (http://127\.0\.0\.1:\d+/metrics)[ ,]", said)
        assert url, said
        with urllib.request.urlopen(url[1], timeout=600) as answer:
            assert answer.status == 200 and b"trajsearch" in answer.read()
    finally:
        proc.kill()
        proc.wait()
