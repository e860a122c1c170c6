"""Probe 53 (WEB4): the remote CLI and the engineers' search, against a real server on 127.0.0.1.

The runs are real dumps kept under tests/fixtures (a mini-swe-agent SWE-bench run of deepseek-chat, tau-bench airline
runs of gpt-4o), ingested by the CLI into a real Milvus Lite store with the fast test embedder and served by a real
``ServiceServer``; the CLI runs as a child process in the test's own folder, over ``--server`` and over the embedded
store, and what it says is compared both ways.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.server import ServiceServer

from cli_support import own_lines
from process_support import cli_env
from service_support import key_ring

FIXTURES = Path(__file__).parent / "fixtures"
DUMPS = [FIXTURES / "mini-swe-agent" / "deepseek_chat_dev", FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """The real dumps, ingested by the CLI into an embedded store (tenant acme)."""
    root = tmp_path_factory.mktemp("store")
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", *map(str, DUMPS), "-t", "acme",
                           "--uri", str(root / "m.db"), "--traces", str(root / "traces")],
                          env=cli_env(), capture_output=True, text=True, timeout=600, cwd=root)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def keys():
    return key_ring(acme=dict(tenant="acme", role="read"), empty=dict(tenant="empty", role="read"))


@pytest.fixture(scope="module")
def server(store, keys):
    ts = TrajSearch.open(str(store / "m.db"), traces=str(store / "traces"), embedder=HashingEmbedder())
    with ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=4) as srv:
        yield srv
    ts.close()


def _cli(server: ServiceServer, key: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args, "--server", server.address],
                          env=cli_env(TRAJSEARCH_API_KEY=key), capture_output=True, text=True, timeout=300, cwd=cwd)


def _local(store: Path, tenant: str, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI over the embedded store ``store``; the server must not hold it then (Milvus Lite's one opener)."""
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args, "-t", tenant, "--uri", str(store / "m.db"),
                           "--traces", str(store / "traces")], env=cli_env(), capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def _said(done: subprocess.CompletedProcess) -> str:
    return " ".join(" ".join(own_lines(done.stderr)).split())


# -- leftover 3: an export of an empty tenant ---------------------------------------------------------------------


def test_export_of_an_empty_tenant_says_the_tenant_holds_no_runs(server, keys, tmp_path):
    """``export`` of a tenant holding no run said "exported 0 of 0 matching runs to out.jsonl", exit 0, and left an
    empty file: an engineer read it as an export that failed, or a query that matched nothing, never as a key of the
    wrong tenant (or a tenant not ingested into yet). It now says so as ``search`` does, exit 1, and writes no file;
    a tenant that holds runs still exports them."""
    out = tmp_path / "out.jsonl"
    done = _cli(server, keys[0]["empty"], tmp_path, "export", "--query", "fix the failing test", "-o", str(out))
    assert done.returncode == 1, done.stderr
    assert "the key's tenant 'empty' holds no runs on this server: nothing to export" in _said(done)
    assert not out.exists()
    done = _cli(server, keys[0]["acme"], tmp_path, "export", "--query", "fix the failing test", "-o", str(out),
                "--outcome", "success", "--outcome", "failure")
    assert done.returncode == 0, done.stderr
    assert out.read_text().count("\n") >= 1


def test_export_of_an_empty_local_tenant_names_the_tenant(tmp_path):
    """The same over the embedded store: a misspelt ``-t`` is named, with the command that counts a tenant's runs."""
    out = tmp_path / "out.jsonl"
    done = _local(tmp_path / "store", "acmee", tmp_path, "export", "--query", "fix the failing test", "-o", str(out))
    assert done.returncode == 1, done.stderr
    assert "tenant 'acmee' holds no runs in this store (a misspelt tenant?" in _said(done)
    assert "nothing to export" in _said(done)
    assert not out.exists()


# -- leftover 2: health while the server starts ------------------------------------------------------------------


@pytest.fixture
def starting(store, keys, tmp_path):
    """A server in its start-up: gRPC answering calls, its health status not set yet (``ServiceServer.start`` sets it
    after the web pages are up, which ``serve --http`` takes a moment for)."""
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    srv = ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=4)
    srv.server.start()
    try:
        yield srv
    finally:
        srv.stop(grace=1)


def test_health_of_a_starting_server_says_it_is_starting(starting, keys, tmp_path):
    """``health`` in the moment between a server's gRPC start and its health status said "the server at ... is not a
    trajsearch server (it has no health status for trajsearch.v1.TrajSearch): check the address": an operator
    polling a server being (re)started was sent to check an address that was right. A server that answers
    trajsearch's calls is now said to be starting, after a brief wait for its status."""
    done = _cli(starting, keys[0]["acme"], tmp_path, "health")
    assert done.returncode == 1, done.stdout
    said = _said(done)
    assert "not a trajsearch server" not in said
    assert f"the trajsearch server at {starting.address} is starting" in said


def test_health_waits_briefly_for_a_starting_server(starting, keys, tmp_path):
    """A server whose status comes within the wait is answered SERVING, not refused."""
    import threading

    from grpc_health.v1 import health_pb2

    timer = threading.Timer(1.0, lambda: [starting.health.set(name, health_pb2.HealthCheckResponse.SERVING)
                                          for name in ("", "trajsearch.v1.TrajSearch")])
    timer.start()
    try:
        done = _cli(starting, keys[0]["acme"], tmp_path, "health")
    finally:
        timer.cancel()
    assert done.returncode == 0, done.stderr
    assert '"status": "SERVING"' in done.stdout


# -- leftover 1: a count refused in one wording, both ways -------------------------------------------------------


def test_a_count_over_the_servers_bound_is_refused_in_the_librarys_words(server, keys, tmp_path):
    """Over --server, ``search -k 150`` (under the library's 200, over the server's --max-k of 100) was refused as
    "k: must be 1..100, got 150", ``exemplars -k 11`` as "k: must be 1..10": the embedded store says "k must be a
    whole number from 1 to 200, got 250" and "-k: must be 1..10". One wording now, the server's bound named."""
    for verb in (("search", "fix the failing test"), ("similar", "fix the failing test")):
        done = _cli(server, keys[0]["acme"], tmp_path, *verb, "-k", "150")
        assert done.returncode == 2, done.stdout
        assert "k: must be a whole number from 1 to 100 (this server's --max-k), got 150" in _said(done)
    done = _cli(server, keys[0]["acme"], tmp_path, "exemplars", "fix the failing test", "-k", "11")
    assert done.returncode == 2, done.stdout
    assert "k: must be a whole number from 1 to 10, got 11" in _said(done)


def test_a_count_refused_locally_in_the_same_words(tmp_path):
    for args, said in ((("search", "fix the failing test", "-k", "250"),
                        "-k: must be a whole number from 1 to 200, got 250"),
                       (("exemplars", "fix the failing test", "-k", "11"),
                        "-k: must be a whole number from 1 to 10, got 11")):
        done = _local(tmp_path / "store", "acme", tmp_path, *args)
        assert done.returncode == 2, done.stdout
        assert said in _said(done)


def test_failure_modes_limit_has_one_bound_in_the_library_and_over_a_server(server, keys):
    """``failure_modes(limit=5000)`` was taken by the library, refused by the client ("from 1 to 1000 over a server")
    and the server ("limit: must be 1..1000"); ``examples=25`` was "examples must be 0..20" here, "1..20 over the
    service" there. One bound (``trajsearch.bounds``), one wording."""
    from trajsearch.failures import failure_modes
    from trajsearch.service.client import Client

    with Client(server.address, api_key=keys[0]["acme"]) as client:
        for call in (lambda **kw: failure_modes(server.ts, tenant="acme", **kw), client.failures):
            with pytest.raises(ValueError,
                               match=r"^limit must be a whole number from 1 to 1000 \(or None\), got 5000$"):
                call(limit=5000)
            with pytest.raises(ValueError, match=r"^examples must be a whole number from \d to 20.*, got 25$"):
                call(examples=25)
        assert len(client.failures(limit=1000).modes) == len(failure_modes(server.ts, tenant="acme", limit=None).modes)


# -- probe: a damaged trace over --server ------------------------------------------------------------------------


@pytest.fixture
def damaged(store):
    """The stored trace of the mini-swe-agent run cut short, as a write stopped mid-way leaves it (a gzip without
    its end); put back after the test."""
    (path,) = (store / "traces" / "acme").glob("*marshmallow-code__marshmallow-1343*")
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    try:
        yield "deepseek-chat.marshmallow-code__marshmallow-1343.dad46cc6e1"
    finally:
        path.write_bytes(whole)


def test_export_over_a_server_leaves_out_a_damaged_trace_as_the_embedded_store_does(server, keys, damaged, tmp_path):
    """One damaged trace among the runs matched stopped ``export --server`` whole ("error: DATA_LOSS: stored trace is
    unreadable", nothing written), where the embedded store leaves that run out and exports the rest ("1 without a
    readable trace left out"). Over the server it is now left out the same way."""
    out = tmp_path / "out.jsonl"
    done = _cli(server, keys[0]["acme"], tmp_path, "export", "--query", "marshmallow TimeDelta serialization precision",
                "-o", str(out), "--outcome", "success", "--outcome", "failure", "-f", "jsonl")
    assert done.returncode == 0, done.stderr
    said = _said(done)
    assert "1 without a readable trace left out" in said, said
    written = [line for line in out.read_text().splitlines() if line]
    assert written and damaged not in out.read_text()


def test_show_over_a_server_says_the_trace_is_damaged_once(server, keys, damaged, tmp_path):
    """``show --server`` of a run whose trace is damaged said "error: DATA_LOSS: stored trace is unreadable (request id
    X) (request id X)": the request id twice, and nothing of what to do. It now says the run's trace is damaged and
    how to write it again, with the request id once."""
    done = _cli(server, keys[0]["acme"], tmp_path, "show", damaged)
    assert done.returncode == 1, done.stderr  # the store's fault, not bad input (review RWEB4, 5)
    said = _said(done)
    assert said.count("request id") == 1, said
    # review RWEB4, 2: "a re-ingest of its dump writes it again" did nothing (an ingest writes only missing traces)
    assert "its trace on the server is damaged" in said and "writes it again" not in said, said
    assert (f"a re-ingest alone keeps the damaged file: remove it (the server's log names it) or `trajsearch delete "
            f"{damaged}`, then re-ingest its dump with --restart") in said, said
    assert "Traceback" not in done.stderr


# -- probe: an export of more runs than one page over --server ---------------------------------------------------

#: tau-bench's own gpt-4o airline results: 200 runs (/work/shared/data/real-formats/README.md names its source).
AIRLINE = Path("/work/shared/data/tau-bench/gpt-4o-airline.json")


@pytest.fixture(scope="module")
def airline(tmp_path_factory, keys):
    if not AIRLINE.exists():
        pytest.skip("the shared tau-bench dump is not on this machine")
    root = tmp_path_factory.mktemp("airline")
    ts = TrajSearch.open(str(root / "m.db"), traces=str(root / "traces"), embedder=HashingEmbedder())
    from trajsearch.ingest.read import read_inputs

    ts.add([parsed for parsed in read_inputs([AIRLINE], tenant="acme") if parsed.ok])
    with ServiceServer(ts, keys[1], address="127.0.0.1:0", max_workers=4) as srv:
        yield srv
    ts.close()


def test_export_over_a_server_pages_past_the_first_hundred_runs(airline, keys, tmp_path):
    """``export -k 300`` of a tenant of 200 runs exported 100 over --server ("stopped after 100 runs: the next page was
    refused (INVALID_ARGUMENT: exclude_trajectory_ids: at most 32 values, got 100)"), all 200 embedded: export pages
    by excluding the runs it has, and the server took at most 32 of them. A server now takes as many as one export
    may hold."""
    out = tmp_path / "out.jsonl"
    done = _cli(airline, keys[0]["acme"], tmp_path, "export", "--query", "cancel my reservation", "-k", "300",
                "-o", str(out), "--outcome", "success", "--outcome", "failure", "-f", "jsonl")
    assert done.returncode == 0, done.stderr
    assert "stopped after" not in _said(done)
    assert "exported 200 of 200 matching runs" in _said(done), _said(done)
    assert len(out.read_text().splitlines()) == 200


def test_failures_json_is_byte_identical_in_the_library_and_over_a_server(airline, keys):
    """``failures --json`` of tau-bench's airline runs listed a mode's tools of equal counts in another order over
    --server ("calculate" before "transfer_to_human_agents"): the server's maps arrive unordered and the client
    sorted ties by name, the library kept the order the traces were read in. Both now rank ties by name, so the
    two reports are the same JSON, byte for byte (the time taken apart)."""
    import json

    from trajsearch.failures import failure_modes
    from trajsearch.service.client import Client

    def shown(report) -> str:
        data = report.to_dict()
        data.pop("seconds", None)
        return json.dumps(data, indent=2)

    until = 4_102_444_800  # 2100-01-01: every run, the same instant both ways
    with Client(airline.address, api_key=keys[0]["acme"]) as client:
        remote = shown(client.failures(until=until, limit=50))
    local = shown(failure_modes(airline.ts, tenant="acme", until=until, limit=50))
    assert '"tools": {' in local
    assert local == remote


def test_export_inside_a_misspelt_filter_says_the_runs_match_without_it(server, keys, tmp_path):
    """``export --env-version v9`` (no run recorded with it) said "exported 0 of 0 matching runs", as if the runs had
    been searched and none matched, where ``search`` with the same filter says what it is. It now says the same (the
    default ``--outcome success`` named too: a tenant of failures only exports none by it)."""
    out = tmp_path / "out.jsonl"
    done = _cli(server, keys[0]["acme"], tmp_path, "export", "--query", "fix the failing test", "-o", str(out),
                "--env-version", "v9")
    assert done.returncode == 0, done.stderr
    assert ("note: nothing found inside --outcome success (the default: add --outcome failure, repeatable, to export "
            "others), --env-version v9, but this tenant's runs match without them: is --env-version v9 misspelt, or "
            "not recorded for these runs?") in _said(done), _said(done)  # its runs succeeded: only v9 is asked about


def test_export_says_a_typed_outcome_without_calling_it_the_default(server, keys, tmp_path):
    """review RWEB4, 4: the default ``--outcome success`` is marked as the default only where the user did not type
    it; one typed is named as typed."""
    out = tmp_path / "out.jsonl"
    done = _cli(server, keys[0]["acme"], tmp_path, "export", "--query", "fix the failing test", "-o", str(out),
                "--outcome", "success", "--env-version", "v9")
    assert "note: nothing found inside --outcome success, --env-version v9, but" in _said(done), _said(done)


# -- review RWEB4: health of another gRPC service behind an auth gateway ------------------------------------------


class _Gateway(grpc.ServerInterceptor):
    """An API gateway's interceptor, as grpc's own examples write one: every call but the health service needs a
    token, refused UNAUTHENTICATED (with no ``x-request-id`` of trajsearch's)."""

    def intercept_service(self, continuation, details):
        if details.method.startswith("/grpc.health.v1.Health/"):
            return continuation(details)

        def refuse(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "invalid token")
        return grpc.unary_unary_rpc_method_handler(refuse)


@pytest.fixture
def other_service():
    """Another team's gRPC server: the standard health service open (``""`` and its own service SERVING), every other
    call behind a token."""
    from concurrent import futures

    from grpc_health.v1 import health, health_pb2, health_pb2_grpc

    srv = grpc.server(futures.ThreadPoolExecutor(2), interceptors=[_Gateway()])
    status = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(status, srv)
    status.set("other.v1.Billing", health_pb2.HealthCheckResponse.SERVING)
    port = srv.add_insecure_port("127.0.0.1:0")
    srv.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        srv.stop(0)


def test_health_of_another_grpc_service_behind_a_gateway_is_not_a_starting_trajsearch(other_service, keys, tmp_path):
    """``health --server`` of another gRPC service whose gateway refuses every call UNAUTHENTICATED said, after 5 s,
    "the trajsearch server at ... is starting": the refusal was taken for trajsearch's. Only an answer with
    trajsearch's echo of the request id is, so it is now said at once not to be a trajsearch server."""
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "health", "--server", other_service],
                          env=cli_env(TRAJSEARCH_API_KEY=keys[0]["acme"]), capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    said = _said(done)
    assert done.returncode != 0, done.stdout
    assert "is starting" not in said, said
    assert f"{other_service} is not a trajsearch server" in said, said


def test_show_of_a_damaged_trace_in_the_embedded_store_exits_1_and_says_how_to_replace_it(tmp_path):
    """``show`` of a run whose stored trace is cut short exited 2 (bad input) with the store's bare "trace ... is not
    valid gzip": the command's input was right. It now exits 1 and says what replaces the trace, which a re-ingest
    alone does not (it writes only the traces its store lacks): shown by doing it."""
    mini = [DUMPS[0]]
    ingest = ("ingest", *map(str, mini))
    assert _local(tmp_path, "acme", tmp_path, *ingest).returncode == 0
    (path,) = (tmp_path / "traces" / "acme").glob("*marshmallow-code__marshmallow-1343*")
    path.write_bytes(path.read_bytes()[:200])
    run = "deepseek-chat.marshmallow-code__marshmallow-1343.dad46cc6e1"
    done = _local(tmp_path, "acme", tmp_path, "show", run)
    said = _said(done)
    assert done.returncode == 1, said
    assert "its trace is damaged" in said, said
    assert f"or `trajsearch delete {run}`, then re-ingest its dump with --restart" in said, said
    assert _local(tmp_path, "acme", tmp_path, *ingest, "--restart").returncode == 0  # a re-ingest alone: damaged
    assert _local(tmp_path, "acme", tmp_path, "show", run).returncode == 1
    path.unlink()  # the advice followed: the file removed, then re-ingested with --restart
    missing = _local(tmp_path, "acme", tmp_path, "show", run)  # (without it the checkpoint passed over the dump)
    assert "a re-ingest of its dump with --restart" in _said(missing), _said(missing)
    assert _local(tmp_path, "acme", tmp_path, *ingest, "--restart").returncode == 0
    assert _local(tmp_path, "acme", tmp_path, "show", run).returncode == 0
