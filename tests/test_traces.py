"""Trace store: real files, and a real S3-compatible server (moto server mode) on loopback."""

from __future__ import annotations

import gzip
import json
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

from trajsearch.model import Trajectory
from trajsearch.store import traces
from trajsearch.store.traces import (
    FileTraceStore,
    S3TraceStore,
    TraceAccessError,
    TraceCorruptError,
    TraceNotFoundError,
    TraceStore,
    TraceStoreError,
    encode_trace,
    open_trace_store,
    trace_name,
)

from process_support import serving

BUCKET = "traces"


def make_traj(trajectory_id: str = "run/2024:01@a+b=c", tenant: str = "acme", **extra) -> Trajectory:
    data = {
        "trajectory_id": trajectory_id,
        "tenant": tenant,
        "task": "Fix the flaky test in repo ✓",
        "outcome": "failure",
        "reward": 0.25,
        "created_at": datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc),
        "tags": ["ci", "python"],
        "tool_versions": {"bash": "5.2"},
        "failure": {"error": "ImportError", "cause": "missing dep", "fix": "pip install x"},
        "metadata": {"nested": {"list": [1, 2.5, None, "s"]}},
        "steps": [
            {"index": 0, "thought": "look around", "action": "bash", "arguments": {"cmd": "ls -la"},
             "observation": "a\nb\n", "started_at": datetime(2024, 5, 1, 12, 30, 1, tzinfo=timezone.utc)},
            {"index": 3, "action": "edit", "arguments": ["f.py", {"line": 3}], "error": "boom"},
        ],
    }
    data.update(extra)
    return Trajectory.model_validate(data)


def all_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() or p.is_symlink())


# ---------------------------------------------------------------- keys / URIs


def test_trace_name_is_one_safe_segment_and_deterministic():
    a, b = trace_name("a/b"), trace_name("a:b")
    assert a.startswith("a_b-") and b.startswith("a_b-") and a != b
    assert a == trace_name("a/b")
    long_id = "x" + "/.." * 60 + "y" * 10
    name = trace_name(long_id)
    assert "/" not in name and ".." not in name.split("-")[-1]
    assert len(name) == 64 + 1 + 16 + len(".json.gz")
    with pytest.raises(ValueError):
        trace_name("../etc")


# ---------------------------------------------------------------- file store


@pytest.fixture
def fstore(tmp_path: Path) -> FileTraceStore:
    return FileTraceStore(tmp_path / "store")


def test_file_round_trip(fstore: FileTraceStore):
    traj = make_traj()
    uri = fstore.put(traj)
    expected = fstore.root / "acme" / trace_name(traj.trajectory_id)
    assert uri == expected.as_uri() == fstore.uri_for("acme", traj.trajectory_id)
    assert uri.startswith("file:///")
    raw = expected.read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert json.loads(gzip.decompress(raw))["trajectory_id"] == traj.trajectory_id
    got = fstore.get(uri, tenant="acme")
    assert got == traj
    assert got.steps[1].arguments == ["f.py", {"line": 3}]
    assert isinstance(fstore, TraceStore)


def test_file_overwrite_in_place(fstore: FileTraceStore):
    traj = make_traj()
    uri = fstore.put(traj)
    uri2 = fstore.put(traj.model_copy(update={"task": "second version"}))
    assert uri2 == uri
    assert fstore.get(uri, tenant="acme").task == "second version"
    assert [p.name for p in all_files(fstore.root)] == [trace_name(traj.trajectory_id)]


def test_same_bytes_for_same_trajectory():
    traj = make_traj()
    assert encode_trace(traj) == encode_trace(traj.model_copy())


def test_atomic_write_leaves_no_temp_files(fstore: FileTraceStore):
    for i in range(5):
        fstore.put(make_traj(f"run-{i}"))
        fstore.put(make_traj(f"run-{i}", tenant="beta"))
    files = all_files(fstore.root)
    assert len(files) == 10
    assert all(p.name.endswith(".json.gz") and not p.name.startswith(".") for p in files)


def test_failed_replace_keeps_old_trace_and_cleans_up(fstore: FileTraceStore, monkeypatch):
    traj = make_traj()
    uri = fstore.put(traj)

    def boom(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(traces.os, "replace", boom)
    with pytest.raises(TraceStoreError, match="No space left"):
        fstore.put(traj.model_copy(update={"task": "new"}))
    monkeypatch.undo()
    assert fstore.get(uri, tenant="acme").task == traj.task
    assert [p.name for p in all_files(fstore.root)] == [trace_name(traj.trajectory_id)]


def test_kill_mid_write_never_leaves_torn_trace(fstore: FileTraceStore):
    """SIGKILL a writer that rewrites a big trace in a loop; the trace stays readable."""
    script = textwrap.dedent(
        """
        import os, sys
        from trajsearch.model import Trajectory
        from trajsearch.store.traces import FileTraceStore
        store = FileTraceStore(sys.argv[1])
        i = 0
        while True:
            steps = [{"index": n, "observation": os.urandom(400_000).hex()} for n in range(4)]
            store.put(Trajectory(trajectory_id="big", tenant="acme", task=f"v{i}", steps=steps))
            i += 1
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(fstore.root)])
    target = fstore.root / "acme" / trace_name("big")
    try:
        deadline = time.monotonic() + 300  # a bound for a hung writer: a busy machine starts Python slowly
        while not target.exists():
            assert proc.poll() is None, "writer died"
            assert time.monotonic() < deadline, "writer never wrote"
            time.sleep(0.05)
        time.sleep(0.4)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=600)
    got = fstore.get(target.as_uri(), tenant="acme")
    assert got.trajectory_id == "big" and [len(s.observation) for s in got.steps] == [800_000] * 4
    # A killed writer may leave a hidden temp file; it is never a valid trace name.
    for p in all_files(fstore.root):
        assert p == target or (p.name.startswith(".") and p.name.endswith(".tmp"))


def test_file_delete_and_missing(fstore: FileTraceStore):
    uri = fstore.put(make_traj())
    assert fstore.exists(uri, tenant="acme")
    fstore.delete(uri, tenant="acme")
    assert not fstore.exists(uri, tenant="acme")
    assert all_files(fstore.root) == []
    with pytest.raises(TraceNotFoundError) as err:
        fstore.get(uri, tenant="acme")
    assert isinstance(err.value, KeyError)
    assert str(err.value) == f"no trace at {uri}"
    fstore.delete(uri, tenant="acme")  # idempotent


def test_missing_never_written(fstore: FileTraceStore):
    uri = fstore.uri_for("acme", "never")
    with pytest.raises(TraceNotFoundError, match="never"):
        fstore.get(uri, tenant="acme")


@pytest.mark.parametrize(
    "content, match",
    [
        (b"not gzip at all", "not valid gzip"),
        (gzip.compress(b"{not json", mtime=0), "not a valid trajectory"),
        (gzip.compress(b'{"tenant": "acme"}', mtime=0), "not a valid trajectory"),
        (gzip.compress(b"\x1f\x8b", mtime=0)[:-4], "not valid gzip"),
    ],
)
def test_corrupt_trace(fstore: FileTraceStore, content: bytes, match: str):
    uri = fstore.put(make_traj())
    Path(fstore.root / "acme" / trace_name(make_traj().trajectory_id)).write_bytes(content)
    with pytest.raises(TraceCorruptError, match=match) as err:
        fstore.get(uri, tenant="acme")
    assert uri in str(err.value)


def test_trace_content_must_match_its_uri(fstore: FileTraceStore):
    uri = fstore.put(make_traj("one"))
    other = encode_trace(make_traj("two"))
    (fstore.root / "acme" / trace_name("one")).write_bytes(other)
    with pytest.raises(TraceCorruptError, match="'two'"):
        fstore.get(uri, tenant="acme")


@pytest.fixture
def hostile(tmp_path: Path, fstore: FileTraceStore):
    """A store with acme + other tenants, and a valid-looking acme trace *outside* the root."""
    fstore.put(make_traj("mine"))
    other_uri = fstore.put(make_traj("theirs", tenant="other"))
    secret = tmp_path / trace_name("secret")  # perfect content: only the path check stops it
    secret.write_bytes(encode_trace(make_traj("secret")))
    return fstore, other_uri, secret


def _refusals(root: Path, other_uri: str, secret: Path) -> list[str]:
    r = root.as_uri()
    other_name = trace_name("theirs")
    return [
        "file:///etc/passwd",
        f"{r}/../{secret.name}",
        f"{r}/acme/../other/{other_name}",
        f"{r}/acme/%2e%2e/other/{other_name}",
        f"{r}/acme/%2E%2E/%2e%2E/{secret.name}",
        f"{r}/acme/..%2fother/{other_name}",
        f"{r}/acme/./{trace_name('mine')}",
        secret.as_uri(),
        str(root / "acme" / trace_name("mine")),  # bare path, not a URI
        f"file://evil.example{root}/acme/{trace_name('mine')}",
        f"{r}/acme/{trace_name('mine')}?x=1",
        f"{r}/acme/{trace_name('mine')}#frag",
        f"{r}/acme/nested/{trace_name('mine')}",
        f"{r}/acme/passwd",
        "http://127.0.0.1/x",
        f"s3://{BUCKET}/acme/{trace_name('mine')}",
        other_uri,  # another tenant's genuine URI
        "",
        f"file:acme/{trace_name('mine')}",  # relative: no moved store names its traces so
        f"file:///{trace_name('mine')}",
        f"file:///acme/{trace_name('mine')}",  # a root of "/": not a store directory that moved
    ]


def test_file_refuses_foreign_uris(hostile):
    fstore, other_uri, secret = hostile
    for uri in _refusals(fstore.root, other_uri, secret):
        for op in (fstore.get, fstore.exists, fstore.delete):
            with pytest.raises(TraceAccessError) as err:
                op(uri, tenant="acme")
            assert isinstance(err.value, ValueError), uri
    # Nothing was deleted by the refused calls.
    assert fstore.get(other_uri, tenant="other").trajectory_id == "theirs"
    assert secret.exists()


def test_file_refuses_symlinks_out_of_tenant(hostile):
    fstore, other_uri, secret = hostile
    outside = fstore.root / "acme" / trace_name("secret")
    outside.symlink_to(secret)
    cross = fstore.root / "acme" / trace_name("theirs")
    cross.symlink_to(fstore.root / "other" / trace_name("theirs"))
    for link in (outside, cross):
        with pytest.raises(TraceAccessError, match="resolves outside"):
            fstore.get(link.as_uri(), tenant="acme")
        with pytest.raises(TraceAccessError):
            fstore.delete(link.as_uri(), tenant="acme")
    # Whole tenant directory swapped for a symlink out of the root: reads and writes refuse.
    elsewhere = secret.parent / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / trace_name("x")).write_bytes(encode_trace(make_traj("x", tenant="evil")))
    (fstore.root / "evil").symlink_to(elsewhere)
    with pytest.raises(TraceAccessError):
        fstore.get(fstore.uri_for("evil", "x"), tenant="evil")
    with pytest.raises(TraceAccessError):
        fstore.put(make_traj("y", tenant="evil"))
    assert sorted(p.name for p in elsewhere.iterdir()) == [trace_name("x")]


def test_invalid_caller_tenant(fstore: FileTraceStore):
    uri = fstore.put(make_traj())
    with pytest.raises(ValueError, match="invalid tenant"):
        fstore.get(uri, tenant="../acme")


def test_percent_encoded_root_round_trips(tmp_path: Path):
    store = FileTraceStore(tmp_path / "with space%")
    uri = store.put(make_traj())
    assert "%20" in uri and "%25" in uri
    assert store.get(uri, tenant="acme") == make_traj()


# ---------------------------------------------------------------- open_trace_store


def test_open_trace_store_file(tmp_path: Path):
    a = open_trace_store(str(tmp_path / "s"))
    b = open_trace_store((tmp_path / "s").as_uri())
    assert isinstance(a, FileTraceStore) and isinstance(b, FileTraceStore)
    assert a.root == b.root == (tmp_path / "s").resolve()
    assert a.location == (tmp_path / "s").resolve().as_uri()


def test_open_trace_store_s3():
    store = open_trace_store("s3://my-bucket/some/prefix/")
    assert isinstance(store, S3TraceStore)
    assert (store.bucket, store.prefix, store.location) == ("my-bucket", "some/prefix", "s3://my-bucket/some/prefix")
    assert open_trace_store("s3://my-bucket").location == "s3://my-bucket"


@pytest.mark.parametrize(
    "location",
    ["", "  ", "http://127.0.0.1/x", "gs://bucket/p", "file://host/abs", "s3://", "s3://Bad_Bucket/p",
     "s3://bucket/../up", "s3://bucket/p?x=1", "s3://user@bucket/p"],
)
def test_open_trace_store_rejects(location: str):
    with pytest.raises(ValueError) as err:
        open_trace_store(location)
    assert str(err.value)


# ---------------------------------------------------------------- S3 (moto server)


@pytest.fixture(scope="module")
def s3_endpoint(tmp_path_factory):
    """A moto S3 server on loopback, with dummy credentials in the environment."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.setenv("AWS_DEFAULT_REGION", "us-east-1")
        nowhere = str(tmp_path_factory.mktemp("aws") / "none")
        mp.setenv("AWS_CONFIG_FILE", nowhere)
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", nowhere)
        for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3",
                    traces.S3_ENDPOINT_ENV):
            mp.delenv(var, raising=False)
        log = tmp_path_factory.mktemp("moto") / "moto.log"
        with open(log, "wb") as fh:
            proc = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", "0"],
                stdout=fh, stderr=subprocess.STDOUT,
            )
        try:  # (werkzeug says where it runs once it listens)
            endpoint = serving(proc, log, says=re.compile(r"Running on (http://127\.0\.0\.1:\d+)"), timeout=300)[1]
            import boto3

            client = boto3.client("s3", endpoint_url=endpoint)
            client.create_bucket(Bucket=BUCKET)
            client.create_bucket(Bucket="other-bucket")
            yield endpoint
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=600)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture
def s3store(s3_endpoint) -> S3TraceStore:
    return S3TraceStore(BUCKET, f"t/{uuid.uuid4().hex[:8]}", endpoint_url=s3_endpoint)


def test_s3_round_trip(s3store: S3TraceStore):
    traj = make_traj()
    uri = s3store.put(traj)
    key = f"{s3store.prefix}/acme/{trace_name(traj.trajectory_id)}"
    assert uri == f"s3://{BUCKET}/{key}" == s3store.uri_for("acme", traj.trajectory_id)
    body = s3store.client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    assert json.loads(gzip.decompress(body))["tenant"] == "acme"
    assert s3store.get(uri, tenant="acme") == traj
    assert isinstance(s3store, TraceStore)


def test_s3_overwrite_delete_missing(s3store: S3TraceStore):
    traj = make_traj()
    uri = s3store.put(traj)
    assert s3store.put(traj.model_copy(update={"task": "v2"})) == uri
    assert s3store.get(uri, tenant="acme").task == "v2"
    listed = s3store.client.list_objects_v2(Bucket=BUCKET, Prefix=s3store.prefix + "/")
    assert [o["Key"] for o in listed["Contents"]] == [uri.removeprefix(f"s3://{BUCKET}/")]
    assert s3store.exists(uri, tenant="acme")
    s3store.delete(uri, tenant="acme")
    assert not s3store.exists(uri, tenant="acme")
    with pytest.raises(TraceNotFoundError) as err:
        s3store.get(uri, tenant="acme")
    assert uri in str(err.value)
    s3store.delete(uri, tenant="acme")  # idempotent


def test_s3_corrupt_object(s3store: S3TraceStore):
    uri = s3store.uri_for("acme", "bad")
    s3store.client.put_object(Bucket=BUCKET, Key=uri.removeprefix(f"s3://{BUCKET}/"), Body=b"plain text")
    with pytest.raises(TraceCorruptError, match="not valid gzip") as err:
        s3store.get(uri, tenant="acme")
    assert uri in str(err.value)


def test_s3_via_open_trace_store_and_env(s3_endpoint, monkeypatch):
    monkeypatch.setenv(traces.S3_ENDPOINT_ENV, s3_endpoint)
    store = open_trace_store(f"s3://{BUCKET}/env-{uuid.uuid4().hex[:8]}")
    uri = store.put(make_traj("via-env"))
    assert store.get(uri, tenant="acme").trajectory_id == "via-env"


def test_s3_empty_prefix(s3_endpoint):
    store = S3TraceStore("other-bucket", endpoint_url=s3_endpoint)
    uri = store.put(make_traj("root-level"))
    assert uri == f"s3://other-bucket/acme/{trace_name('root-level')}"
    assert store.get(uri, tenant="acme").trajectory_id == "root-level"
    with pytest.raises(TraceAccessError):
        store.get(f"s3://other-bucket/x/acme/{trace_name('root-level')}", tenant="acme")


def test_s3_refuses_foreign_uris(s3store: S3TraceStore, s3_endpoint):
    mine = s3store.put(make_traj("mine"))
    theirs = s3store.put(make_traj("theirs", tenant="other"))
    name = trace_name("mine")
    # The same object, reachable through a store with another prefix / bucket, is real data:
    s3store.client.put_object(Bucket="other-bucket", Key=f"{s3store.prefix}/acme/{name}",
                              Body=encode_trace(make_traj("mine")))
    p = s3store.prefix
    bad = [
        f"s3://other-bucket/{p}/acme/{name}",
        f"s3://{BUCKET}/elsewhere/acme/{name}",
        f"s3://{BUCKET}/{p}/acme/../other/{trace_name('theirs')}",
        f"s3://{BUCKET}/{p}/acme/%2e%2e/other/{trace_name('theirs')}",
        f"s3://{BUCKET}/{p}/acme/nested/{name}",
        f"s3://{BUCKET}/{p}//acme/{name}",
        f"s3://{BUCKET}/{p}/acme/{name}?versionId=1",
        f"s3://user@{BUCKET}/{p}/acme/{name}",
        f"S3://{BUCKET.upper()}/{p}/acme/{name}",
        f"file:///{p}/acme/{name}",
        "http://127.0.0.1/x",
        theirs,
    ]
    for uri in bad:
        for op in (s3store.get, s3store.exists, s3store.delete):
            with pytest.raises(TraceAccessError):
                op(uri, tenant="acme")
    assert s3store.get(mine, tenant="acme").trajectory_id == "mine"
    assert s3store.get(theirs, tenant="other").trajectory_id == "theirs"


def test_s3_missing_bucket_is_store_error(s3_endpoint):
    store = S3TraceStore("no-such-bucket", endpoint_url=s3_endpoint, attempts=1)
    with pytest.raises(TraceStoreError, match="no-such-bucket") as err:
        store.put(make_traj())
    assert "NoSuchBucket" in str(err.value)
    with pytest.raises(TraceStoreError) as err:
        store.get(store.uri_for("acme", "x"), tenant="acme")
    assert not isinstance(err.value, TraceNotFoundError)


def test_s3_outage_refused_port_is_fast_clear_error(s3_endpoint, refusing_address):
    store = S3TraceStore(BUCKET, "p", endpoint_url=f"http://{refusing_address}", attempts=2, timeout=1)
    start = time.monotonic()
    with pytest.raises(TraceStoreError) as err:
        store.put(make_traj())
    msg = str(err.value)
    assert msg.startswith(f"S3 put_object on s3://{BUCKET}/p/acme/") and "Could not connect" in msg
    with pytest.raises(TraceStoreError, match="get_object"):
        store.get(store.uri_for("acme", "x"), tenant="acme")
    assert time.monotonic() - start < 45  # a bound for a hang (botocore's own timeouts are 60 s), not a speed target


def test_s3_outage_silent_server_times_out(s3_endpoint):
    """A server that accepts connections but never answers must not hang us."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)  # never accept(): connects complete, requests go unanswered
        port = listener.getsockname()[1]
        store = S3TraceStore(BUCKET, "p", endpoint_url=f"http://127.0.0.1:{port}", attempts=2, timeout=0.5)
        start = time.monotonic()
        with pytest.raises(TraceStoreError, match="timeout|timed out") as err:
            store.get(store.uri_for("acme", "x"), tenant="acme")
        assert f"s3://{BUCKET}/p/acme/" in str(err.value)
        assert time.monotonic() - start < 45  # botocore's default read timeout (60 s) would hang past this


def test_a_moved_store_reads_its_traces_where_they_are_now(tmp_path: Path):
    """A store directory (index + traces) moved elsewhere: its rows still name the old root, and
    each trace is found under the new one by its <tenant>/<name> key, never outside the root."""
    import shutil

    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch

    old = tmp_path / "old" / ".trajsearch"
    ts = TrajSearch.open(str(old / "milvus.db"), traces=str(old / "traces"), embedder=HashingEmbedder())
    ts.add([make_traj("mine"), make_traj("theirs", tenant="other")])
    ts.close()
    new = tmp_path / "new" / ".trajsearch"
    shutil.move(str(old), str(new))
    ts = TrajSearch.open(str(new / "milvus.db"), traces=str(new / "traces"), embedder=HashingEmbedder())
    try:
        hit = ts.run("mine", tenant="acme")
        assert hit is not None and hit.trace_uri.startswith(old.as_uri())  # the row names the old place
        assert ts.get_trace(hit.trace_uri, tenant="acme").trajectory_id == "mine"
        theirs = ts.run("theirs", tenant="other")
        with pytest.raises(TraceAccessError, match="belongs to tenant 'other'"):
            ts.get_trace(theirs.trace_uri, tenant="acme")  # still another tenant's
    finally:
        ts.close()
