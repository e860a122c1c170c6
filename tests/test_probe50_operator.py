"""Probe 50 (OP): the batch indexer, the server's ingest and the trace store, as an operator meets them.

Inputs are real dumps kept under ``tests/fixtures`` (sources in each folder's ``SOURCE.md``): SWE-agent's own
test trajectory (pydicom-1458, a submission no test judged: a run with no verdict of its own) and two tau-bench
results files of task 2 (grok, and a course project's Qwen run), both named ``results.json`` as tau-bench's
``run.py`` users keep them in run folders.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.server import ServiceServer
from process_support import cli_env
from test_traces import s3_endpoint  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parent.parent
TAU = Path(__file__).parent / "fixtures" / "tau-bench" / ".real"
REACT_GROK = TAU / "react-grok-4-fast-reasoning-0.0_range_0--1_user-grok-4-fast-reasoning-llm_1129215652.json"
REACT_QWEN = TAU / "react-qwen-think-airline.json"  # task 2, trial 0 as in REACT_GROK: another model's run of it
SWE = Path(__file__).parent / "fixtures" / "swe-agent" / ".real" / \
    "gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1"


def _ingest(env: dict[str, str], *args: str, stdin: bytes | None = None, cwd: Path = ROOT
            ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", *args, "-q"], cwd=cwd, env=env,
                          capture_output=True, input=stdin, timeout=600)


def _two_run_folders(tmp_path: Path) -> None:
    """``runA/results.json`` (grok's runs of tasks 2 and 14) and ``runB/results.json`` (Qwen's run of task 2):
    tau-bench takes run ids from the file name, so both hold ``tau-results-2-t0``."""
    for name, source in (("runA", REACT_GROK), ("runB", REACT_QWEN)):
        (tmp_path / name).mkdir()
        shutil.copy(source, tmp_path / name / "results.json")


def _said(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return " ".join(done.stderr.decode().split())


REPLACED = "1 stored run(s) replaced by a different run of the same id from another file"


def test_a_piped_dump_replacing_another_files_run_is_said(tmp_path: Path) -> None:
    """Item 1: ``cat runB/results.json | trajsearch ingest - --stream-name runB/results.json`` after the same of
    runA replaced runA's run of task 2 in silence (the stream's copy is no file the indexer could tell apart); a
    stream given no name is a dump never seen before. Piping the same dump under its name again says nothing, and
    neither does the file itself ingested by its path after it was piped under that name."""
    _two_run_folders(tmp_path)
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))

    def piped(name: str, *named: str) -> subprocess.CompletedProcess:
        return _ingest(env, "-", "-t", "acme", *named, stdin=(tmp_path / name / "results.json").read_bytes(),
                       cwd=tmp_path)

    assert REPLACED not in _said(piped("runA", "--stream-name", "runA/results.json"))
    said = _said(piped("runB", "--stream-name", "runB/results.json"))
    assert REPLACED in said and "tau-results-2-t0: now from standard input" in said, said
    assert "replaced" not in _said(piped("runB", "--stream-name", "runB/results.json"))  # the same dump again
    regraded = json.loads((tmp_path / "runB" / "results.json").read_text())
    regraded[0]["reward"] = 1.0 - regraded[0]["reward"]
    (tmp_path / "runB" / "results.json").write_text(json.dumps(regraded))
    update = _ingest(env, "runB/results.json", "-t", "acme", cwd=tmp_path)  # the file it was piped as: an update
    assert b"ingested 1" in update.stdout and "replaced" not in _said(update), update.stdout
    assert REPLACED not in _said(piped("runA"))  # no name (ids of the copy's: tau-stdin-...)
    said = _said(piped("runB"))  # nor here: which dump it is cannot be told, and its run differs
    assert REPLACED in said and "tau-stdin-2-t0: now from standard input" in said, said


def test_an_ingest_over_the_server_replacing_another_files_run_is_said(tmp_path: Path) -> None:
    """Item 1: ``ingest runB --server`` after ``ingest runA --server`` replaced runA's run of task 2 in silence
    (the server sees no file). The client marks each run with the file it read (a digest of its path); the server
    compares it with the stored run's as a local ingest does and marks the record in its answer. A re-ingest of
    the same file (its run re-graded) is an update, said nothing of; the stored trace keeps a digest, no mark."""
    _two_run_folders(tmp_path)
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-t"), embedder=HashingEmbedder())
    with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                       address="127.0.0.1:0") as srv:
        env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "client"), TRAJSEARCH_SERVER=srv.address, TRAJSEARCH_API_KEY=key)
        assert REPLACED not in _said(_ingest(env, str(tmp_path / "runA")))
        said = _said(_ingest(env, str(tmp_path / "runB")))
        assert REPLACED in said and f"tau-results-2-t0: now from {tmp_path / 'runB' / 'results.json'}" in said, said
        report = json.loads(_ingest(env, str(tmp_path / "runA"), "--json").stdout)
        assert report["other_runs_replaced"] == 1, report
        regraded = json.loads((tmp_path / "runA" / "results.json").read_text())
        for run in regraded:
            run["reward"] = 1.0 - run["reward"]
        (tmp_path / "runA" / "results.json").write_text(json.dumps(regraded))
        update = _ingest(env, str(tmp_path / "runA"))
        assert b"ingested 2" in update.stdout and "replaced" not in _said(update), update.stdout
        stored = ts.get_trace(ts.run("tau-results-2-t0", tenant="acme").trace_uri, tenant="acme")
    ts.close()
    assert stored.metadata["ingested_from"].isalnum() and len(stored.metadata["ingested_from"]) == 16


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
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
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


def _stored_trace(home: Path, run_id: str) -> tuple[Any, Path]:
    from trajsearch.store.traces import decode_trace, trace_name

    path = home / "traces" / "acme" / trace_name(run_id)
    return decode_trace(path.read_bytes(), path.as_uri(), tenant="acme", name=path.name), path


def test_the_file_a_run_was_read_from_is_kept_keyed_by_the_store(tmp_path: Path) -> None:
    """Item 3: a trace kept a bare digest of the dump file's resolved path, which a tenant reading the trace (GetTrace,
    export, the web's JSON) could check a guessed path of the operator's disk against. It keeps the digest keyed by
    a secret of the store, made once in its folder (0600, no tenant's); a store written before keys (its traces
    hold bare digests, no key file) still tells a re-ingest of the same file from another file's run."""
    from trajsearch.represent import file_digest
    from trajsearch.store.traces import FileTraceStore

    _two_run_folders(tmp_path)
    home = tmp_path / "home"
    env = cli_env(TRAJSEARCH_HOME=str(home))
    assert _ingest(env, str(tmp_path / "runA"), "-t", "acme").returncode == 0
    stored, path = _stored_trace(home, "tau-results-2-t0")
    guessed = file_digest(str(tmp_path / "runA" / "results.json"))
    assert stored.metadata["ingested_from"] != guessed and len(stored.metadata["ingested_from"]) == 16
    key = home / "traces" / ".digest-key"
    assert key.is_file() and (key.stat().st_mode & 0o777) == 0o600 and len(key.read_bytes()) == 32

    # as a store written before keys holds it: a bare digest, no key
    key.unlink()
    for run_id in ("tau-results-2-t0", "tau-results-14-t0"):
        run, _ = _stored_trace(home, run_id)
        bare = {**run.metadata, "ingested_from": guessed}
        FileTraceStore(home / "traces").put(run.model_copy(update={"metadata": bare}))
    regraded = json.loads((tmp_path / "runA" / "results.json").read_text())
    for run in regraded:
        run["reward"] = 1.0 - run["reward"]
    (tmp_path / "runA" / "results.json").write_text(json.dumps(regraded))
    update = _ingest(env, str(tmp_path / "runA"), "-t", "acme")  # the same file: an update, said nothing of
    assert b"ingested 2" in update.stdout and "replaced" not in _said(update), update.stdout
    stored, _ = _stored_trace(home, "tau-results-2-t0")
    assert stored.metadata["ingested_from"] != guessed  # written again: keyed now
    said = _said(_ingest(env, str(tmp_path / "runB"), "-t", "acme"))
    assert REPLACED in said and f"was from {tmp_path / 'runA' / 'results.json'}" not in said, said  # (another process)


def test_an_s3_trace_store_keeps_the_digest_keyed_too(tmp_path: Path, s3_endpoint) -> None:  # noqa: F811
    """Item 3 on S3 (a real S3 API: moto's server on loopback, as ``test_traces``): the key is one object beside the
    tenants' folders, made by the first writer and read by the next; the trace keeps no bare digest of the path."""
    import boto3

    from test_traces import BUCKET
    from trajsearch.represent import file_digest

    _two_run_folders(tmp_path)
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"), TRAJSEARCH_S3_ENDPOINT=s3_endpoint,
               TRAJSEARCH_TRACES=f"s3://{BUCKET}/p50")
    assert _ingest(env, str(tmp_path / "runA"), "-t", "acme").returncode == 0
    client = boto3.client("s3", endpoint_url=s3_endpoint)
    key = client.get_object(Bucket=BUCKET, Key="p50/.digest-key")["Body"].read()
    assert len(key) == 32
    said = _said(_ingest(env, str(tmp_path / "runB"), "-t", "acme"))  # another process: the same key read
    assert REPLACED in said, said
    assert client.get_object(Bucket=BUCKET, Key="p50/.digest-key")["Body"].read() == key
    names = [o["Key"] for o in client.list_objects_v2(Bucket=BUCKET, Prefix="p50/acme/")["Contents"]]
    body = client.get_object(Bucket=BUCKET, Key=next(n for n in names if "results-2-t0" in n))["Body"].read()
    stored = json.loads(gzip.decompress(body))["metadata"]["ingested_from"]
    assert stored != file_digest(str(tmp_path / "runB" / "results.json")) and len(stored) == 16


# -- review ROP (round 17): the operator fixes, reviewed ------------------------------------------------------------


def _server(tmp_path: Path, key: str) -> tuple[TrajSearch, ServiceServer]:
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-t"), embedder=HashingEmbedder())
    return ts, ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                             address="127.0.0.1:0")


def test_a_tenant_cannot_confirm_a_guessed_dump_path_through_a_mark_it_sends(tmp_path: Path) -> None:
    """ROP 1: the server stored a client's ``read-from:<digest>`` keyed by the store's secret as it stores a file's it
    read itself, so a tenant with a write key sent the digest of a guessed path of the operator's disk and compared
    the trace it read back with the operator's run of that dump: equal for the right guess. A client's mark is kept
    in a domain of its own; an ``ingested_from`` that is no mark (a path) is not stored at all."""
    from trajsearch.represent import file_digest
    from trajsearch.service.client import Client

    dump = tmp_path / "dumps" / "airline-2026-12" / "results.json"
    dump.parent.mkdir(parents=True)
    shutil.copy(REACT_QWEN, dump)
    env = cli_env(TRAJSEARCH_URI=str(tmp_path / "srv.db"), TRAJSEARCH_TRACES=str(tmp_path / "srv-t"),
               TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(dump), "-t", "acme").returncode == 0  # the operator's, on the server's store
    key = new_key()
    ts, server = _server(tmp_path, key)
    with server as srv:
        client = Client(srv.address, api_key=key)
        operators = ts.get_trace(ts.run("tau-results-2-t0", tenant="acme").trace_uri, tenant="acme")
        target = operators.metadata["ingested_from"]
        sent = {"probe-right": "read-from:" + file_digest(str(dump)),
                "probe-path": "/home/op/secret/dumps/x.json"}
        client.add([operators.model_copy(update={"trajectory_id": run_id,
                                                 "metadata": {**operators.metadata, "ingested_from": mark}})
                    for run_id, mark in sent.items()])
        stored = {run_id: ts.get_trace(ts.run(run_id, tenant="acme").trace_uri, tenant="acme").metadata
                  for run_id in sent}
    ts.close()
    assert len(target) == 16 and stored["probe-right"]["ingested_from"] != target, (target, stored)
    assert "ingested_from" not in stored["probe-path"], stored["probe-path"]


def test_client_add_of_parsed_runs_says_it_replaced_another_files_run(tmp_path: Path) -> None:
    """ROP 3: ``Client.add(read_dump(runB/results.json))`` after the same of runA replaced runA's run of task 2 in
    silence: only the CLI marked runs with their file, and the server had nothing to compare. ``Client.add`` marks a
    parsed run with the file it was read from (as ``TrajSearch.add`` of the same says it)."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.service.client import Client

    _two_run_folders(tmp_path)
    key = new_key()
    ts, server = _server(tmp_path, key)
    with server as srv:
        client = Client(srv.address, api_key=key)
        first = client.add(read_dump(tmp_path / "runA" / "results.json", tenant="acme"))
        again = client.add(read_dump(tmp_path / "runA" / "results.json", tenant="acme"))
        other = client.add(read_dump(tmp_path / "runB" / "results.json", tenant="acme"))
    ts.close()
    assert first.other_runs_replaced == 0 and again.other_runs_replaced == 0, (first, again)
    assert other.other_runs_replaced == 1, other


def test_an_unreadable_trace_is_said_once_and_not_retried(tmp_path: Path) -> None:
    """ROP 5: a trace that is there but that the ingesting account may not read (a store written by another account,
    its traces left 0600) was read four times (0.5 + 1 + 2 s of back-off, a warning a try) before each changed run
    was written as read: a permission no retry mends. It is said at once, in one line naming the trace. Root reads
    any file: as root the ingest runs without the capabilities that let it (``setpriv``), as a file's mode binds."""
    import pytest

    jail: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("root, and no setpriv to give up reading any file")
        jail = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
                "--inh-caps", "-dac_override,-dac_read_search"]
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    assert _ingest(env, str(SWE), "-t", "acme").returncode == 0
    traces = list((tmp_path / "home" / "traces" / "acme").glob("*.json.gz"))
    assert len(traces) == 1
    traces[0].chmod(0)
    started = time.monotonic()
    again = subprocess.run([*jail, sys.executable, "-m", "trajsearch.cli", "ingest", str(SWE), "-t", "acme",
                            "--restart", "-q"], cwd=ROOT, env=_upgraded(env, tmp_path), capture_output=True,
                           timeout=600)
    took = time.monotonic() - started
    said = again.stderr.decode()
    assert again.returncode == 0 and b"ingested 1" in again.stdout, again.stdout + again.stderr
    assert "retrying" not in said and "attempt" not in said, said
    lines = [line for line in said.splitlines() if "pydicom__pydicom-1458" in line]
    assert len(lines) == 1 and "not readable" in lines[0], said
    assert took < 60  # (a bound for a crawl only: the retries cost 3.5 s, the command's start more)


def test_a_loose_digest_key_is_made_private(tmp_path: Path) -> None:
    """ROP 8: a store's digest key left readable by others (copied in, restored from a backup, or made by the version
    that set its mode after writing it, under a umask of 022) stayed so, and with it any local account could confirm
    guessed dump paths against the traces. The next writer makes it 0600, and a new key is 0600 from its creation."""
    _two_run_folders(tmp_path)
    home = tmp_path / "home"
    env = cli_env(TRAJSEARCH_HOME=str(home))
    assert _ingest(env, str(tmp_path / "runA"), "-t", "acme").returncode == 0
    key = home / "traces" / ".digest-key"
    made = key.read_bytes()
    assert (key.stat().st_mode & 0o777) == 0o600
    key.chmod(0o644)
    assert _ingest(env, str(tmp_path / "runB"), "-t", "acme").returncode == 0
    assert (key.stat().st_mode & 0o777) == 0o600 and key.read_bytes() == made
    assert not list((home / "traces").glob(".digest-key.*"))  # no temporary left behind


def test_an_s3_digest_key_is_made_by_a_writer_that_may_not_list() -> None:
    """ROP 2: a writer whose role lacks ``s3:ListBucket`` (a least-privilege policy granting Get/Put on the prefix)
    is answered AccessDenied, not NoSuchKey, for the missing key object: the key was never made, and the store's
    traces kept bare, guessable digests of dump paths. A refused read is tried as a missing one: made
    (``If-None-Match``), then read. S3 here is botocore's Stubber answering as AWS does for such a role (moto's
    server enforces no policy); the store under test is the real one."""
    import io

    import boto3
    from botocore.response import StreamingBody
    from botocore.stub import ANY, Stubber

    from trajsearch.store.traces import S3TraceStore

    client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    made = os.urandom(32)
    with Stubber(client) as s3:
        s3.add_client_error("get_object", service_error_code="AccessDenied", service_message="Access Denied",
                            http_status_code=403, expected_params={"Bucket": "bkt", "Key": "p50/.digest-key"})
        s3.add_response("put_object", {"ETag": '"x"'}, {"Bucket": "bkt", "Key": "p50/.digest-key", "Body": ANY,
                                                        "IfNoneMatch": "*"})
        s3.add_response("get_object", {"Body": StreamingBody(io.BytesIO(made), len(made))},
                        {"Bucket": "bkt", "Key": "p50/.digest-key"})
        assert S3TraceStore("bkt", "p50", client=client).digest_key() == made
        s3.assert_no_pending_responses()


def test_dumps_piped_under_a_bare_name_of_no_file_are_told_apart(tmp_path: Path) -> None:
    """ROP 4: ``ssh host cat runB/results.json | trajsearch ingest - --stream-name results.json`` (the help's own
    shape) after the same of runA replaced runA's run of task 2 in silence: a name of no file here was taken as the
    file it would be in the working directory, so every dump piped under it shared one mark. Only a name of an
    existing file is that file's; any other stream is a dump never seen before."""
    _two_run_folders(tmp_path)
    env = cli_env(TRAJSEARCH_HOME=str(tmp_path / "home"))
    (tmp_path / "elsewhere").mkdir()

    def piped(folder: str) -> subprocess.CompletedProcess:
        return _ingest(env, "-", "-t", "acme", "--stream-name", "results.json",
                       stdin=(tmp_path / folder / "results.json").read_bytes(), cwd=tmp_path / "elsewhere")

    assert REPLACED not in _said(piped("runA"))
    said = _said(piped("runB"))
    assert REPLACED in said and "tau-results-2-t0: now from standard input" in said, said


def test_a_run_replaced_twice_in_one_stream_is_said_twice(tmp_path: Path) -> None:
    """ROP 7: one Ingest stream (``ingest runB runA --server`` after ``ingest runA``: two folders, one stream, a batch
    each) replacing the stored run of task 2 twice, runB's over runA's and then runA's over runB's, said only the
    first: the server marked a record by the runs its indexer had flagged over all the stream's batches, new ones
    only. Each batch's flags are its own."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.service.client import Client

    _two_run_folders(tmp_path)
    key = new_key()
    ts, server = _server(tmp_path, key)
    task2 = "tau-results-2-t0"
    with server as srv:
        client = Client(srv.address, api_key=key)
        client.add(read_dump(tmp_path / "runA" / "results.json", tenant="acme"))

        def runs(folder: str) -> list[Any]:
            return [p for p in read_dump(tmp_path / folder / "results.json", tenant="acme")
                    if p.trajectory is not None and p.trajectory.trajectory_id == task2]

        report = client.add(runs("runB") + runs("runA"), batch_size=1)
    ts.close()
    assert report.other_runs_replaced == 2, report
