"""Probe 47 (area I: security of the service, its pages and filters): what a key sees beyond its bounds.

A real server on 127.0.0.1 (gRPC, real Milvus Lite, the fast hashing test embedder) fed by ``trajsearch
ingest --server`` from real tau-bench results files kept under ``tests/fixtures/tau-bench`` (see their
SOURCE.md), each ingest tagging its runs with ``--set policy_version=...`` as an operator does for one
agent fleet's runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trajsearch.client import Client
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.server import ServiceServer

from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
#: two real tau-bench airline results files: task 0 failed and then passed (gpt-4o), and two failed runs
POLICY_1 = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
POLICY_2 = FIXTURES / "tau-bench" / ".real" / "gpt-4o-airline-failed-calls.json"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A server whose tenant holds the runs of two policy versions; the keys: a writer, and readers pinned
    to policy p1, to policy p2, and to env e9 (which no run has)."""
    tmp = tmp_path_factory.mktemp("fleet")
    made = {name: new_key() for name in ("writer", "p1", "p2", "e9")}
    ring = KeyRing.from_entries([
        key_entry(made["writer"], tenant="acme", role="write"),
        dict(key_entry(made["p1"], tenant="acme", role="read", key_id="acme-p1"), policy_versions=["p1"]),
        dict(key_entry(made["p2"], tenant="acme", role="read", key_id="acme-p2"), policy_versions=["p2"]),
        dict(key_entry(made["e9"], tenant="acme", role="read", key_id="acme-e9"), env_versions=["e9"]),
    ])
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    with ServiceServer(ts, ring, address="127.0.0.1:0") as srv, pytest.MonkeyPatch.context() as env:
        env.setenv("TRAJSEARCH_MODEL", "hashing")
        env.setenv("TRAJSEARCH_SERVER", srv.address)
        env.setenv("TRAJSEARCH_API_KEY", made["writer"])
        for path, policy in ((POLICY_1, "p1"), (POLICY_2, "p2")):
            code, out, err = run_cli("ingest", str(path), "--set", f"policy_version={policy}")
            assert code == 0 and "ingested 2 runs" in out, out + err
        yield srv.address, made
    ts.close()


def _policies(address: str, key: str, ids: list[str]) -> dict[str, str | None]:
    with Client(address, key) as full:
        return {i: full.run(i).policy_version for i in ids}


def test_similar_runs_of_a_policy_pinned_key_stay_inside_its_pins(fleet):
    """Bug: ``SimilarRuns`` narrowed its search by the key's pinned env versions only, never by its pinned
    policy versions, so a key pinned to policy p1 (``Run``, ``Search``, ``GetTrace`` all blind to p2) was
    answered p2 runs' ids, tasks, matched step text and trace URIs, by text and by the id of its own p1
    run alike. Now a pinned policy bounds the matches as it bounds every other read."""
    address, keys = fleet
    with Client(address, keys["p1"]) as pinned:
        own = [h.trajectory_id for h in pinned.search("cancel the reservation", k=20)]
        assert own and set(_policies(address, keys["writer"], own).values()) == {"p1"}
        by_text = pinned.similar_runs(text="cancel the reservation", k=10)
        by_id = pinned.similar_runs(own[0], k=10)
    matched = [m.trajectory_id for m in by_text + by_id]
    assert matched, "the p1 runs are like each other and like the text"
    assert set(_policies(address, keys["writer"], matched).values()) == {"p1"}
    assert all(m.best.policy_version == "p1" for m in by_text + by_id)
    with Client(address, keys["p2"]) as other:  # and the other way round
        seen = [m.trajectory_id for m in other.similar_runs(text="cancel the reservation", k=10)]
    assert seen and set(_policies(address, keys["writer"], seen).values()) == {"p2"}


# -- a server's address as people write it ------------------------------------------------------


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The same store served twice on loopback: in plaintext, and with TLS (a self-signed certificate)."""
    from test_service import _self_signed
    from trajsearch.service.server import TLS

    tmp = tmp_path_factory.mktemp("addresses")
    cert, pem_key = _self_signed(tmp)
    key = new_key()
    ring = KeyRing.from_entries([key_entry(key, tenant="acme", role="read")])
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    with ServiceServer(ts, ring, address="127.0.0.1:0") as plain, \
            ServiceServer(ts, ring, address="127.0.0.1:0", tls=TLS(cert, pem_key)) as secure:
        yield plain.address.rsplit(":", 1)[1], secure.address.rsplit(":", 1)[1], cert, key
    ts.close()


def _whoami(monkeypatch, key: str, server: str, *args: str) -> tuple[int, str]:
    monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
    monkeypatch.setenv("TRAJSEARCH_SERVER", server)
    code, out, err = run_cli("whoami", *args)
    return code, " ".join((out + err).split())


def test_a_server_given_as_a_url_is_reached(servers, monkeypatch):
    """Bug: ``--server`` / ``$TRAJSEARCH_SERVER`` as a URL (``http://127.0.0.1:50051``, as this CLI's own
    ``--uri http://host:19530`` is written, or ``https://search.example.com`` from a TLS proxy's address)
    went to gRPC's resolver as one DNS name: ``UNAVAILABLE: errors resolving ...: Misformatted domain
    name``; and TLS came only with ``--ca`` (a file), so a server behind a proxy with a public certificate
    was out of reach. ``http://`` is plaintext, ``https://`` TLS (the system's roots, or ``--ca``)."""
    plain, secure, cert, key = servers
    for address in (f"http://127.0.0.1:{plain}", f"http://127.0.0.1:{plain}/", f"grpc://127.0.0.1:{plain}"):
        code, text = _whoami(monkeypatch, key, address)
        assert code == 0 and '"tenant": "acme"' in text, (address, text)
    code, text = _whoami(monkeypatch, key, f"https://127.0.0.1:{secure}", "--ca", str(cert))
    assert code == 0 and '"tenant": "acme"' in text, text
    # without --ca, https:// is TLS verified against the system's roots, which do not hold a self-signed certificate
    code, text = _whoami(monkeypatch, key, f"https://127.0.0.1:{secure}")
    assert code == 1 and "CERTIFICATE_VERIFY_FAILED" in text and "give its CA certificate (--ca" in text, text


def test_a_url_naming_more_than_a_server_is_refused_in_one_line(servers, monkeypatch):
    """A path, a query or a user part has no place in a gRPC address: refused before any call, and a user
    part (which may hold a secret) is not echoed."""
    plain, _, _, key = servers
    code, text = _whoami(monkeypatch, key, f"https://127.0.0.1:{plain}/trajsearch")
    assert code == 2 and "give HOST:PORT" in text and "without a path" in text, text
    code, text = _whoami(monkeypatch, key, f"https://admin:s3cret@127.0.0.1:{plain}")
    assert code == 2 and "user part" in text and "s3cret" not in text, text


def test_a_client_of_the_wrong_transport_is_told_which_one_the_server_speaks(servers, monkeypatch):
    """Bug: a plaintext client of a TLS server was told only ``UNAVAILABLE: ... Socket closed``, and a TLS
    client of a plaintext server ``Tls handshake failed ... WRONG_VERSION_NUMBER``: neither said to add or drop
    TLS. Each now says what to change."""
    plain, secure, cert, key = servers
    code, text = _whoami(monkeypatch, key, f"127.0.0.1:{secure}")
    assert code == 1 and "if the server speaks TLS, connect with TLS" in text and "https://HOST:PORT" in text, text
    code, text = _whoami(monkeypatch, key, f"127.0.0.1:{plain}", "--ca", str(cert))
    assert code == 1 and "the server does not speak TLS" in text, text


def test_a_key_in_quotes_is_named_as_such(servers, monkeypatch):
    """Bug: ``TRAJSEARCH_API_KEY="ts_..."`` in an env file read by ``docker run --env-file`` (which keeps the quotes
    as part of the value, moby/moby#46773) was sent quotes and all, and the server's answer said only that the
    key is not one of its keys. The client now says what is wrong before any call."""
    plain, _, _, key = servers
    for quoted in (f'"{key}"', f"'{key}'"):
        code, text = _whoami(monkeypatch, quoted, f"127.0.0.1:{plain}")
        assert code == 2 and "$TRAJSEARCH_API_KEY is wrapped in quotes" in text and key not in text, text
    code, text = _whoami(monkeypatch, f" {key}\r", f"127.0.0.1:{plain}")  # whitespace alone is still stripped
    assert code == 0 and '"tenant": "acme"' in text, text


# -- the web pages over a trace store that lacks a run's trace -----------------------------------


def test_a_run_whose_trace_is_missing_says_so_instead_of_not_existing(tmp_path):
    """Bug: the pages answered a run whose trace the trace store lacks with "No such run: it does not exist, or
    this key cannot see it.", right after listing it among the results. ``trajsearch ui --uri DIR/milvus.db``
    without its ``--traces`` (the pages then read ``$TRAJSEARCH_HOME/traces``) made every run do so. The run's
    index row is already this key's to see, so the page now says its trace is missing and how to mend that; a
    run outside the key's pins is still the one 404 of a run that does not exist."""
    from starlette.testclient import TestClient

    from trajsearch.ingest.read import read_dump
    from trajsearch.web import WebConfig, create_app
    from trajsearch.web.app import LOOPBACK_HOSTS
    from trajsearch.web.views import NOT_FOUND_TEXT
    from web_support import csrf_of

    ingested = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"),
                               embedder=HashingEmbedder())
    assert ingested.add(read_dump(POLICY_2, tenant="acme", defaults={"env_version": "airline-v1"})).ingested == 2
    ingested.close()
    made = {name: new_key() for name in ("reader", "elsewhere")}
    ring = KeyRing.from_entries([
        key_entry(made["reader"], tenant="acme", role="read"),
        dict(key_entry(made["elsewhere"], tenant="acme", role="read", key_id="acme-v9"), env_versions=["v9"]),
    ])
    # the index ingested above, read with another trace store: the default one, as `ui --uri` alone does
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "home" / "traces"),
                         embedder=HashingEmbedder())
    app = create_app(ts, ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS))
    try:
        pages = {}
        for name, key in made.items():
            client = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
            form = client.get("/signin")
            assert client.post("/signin", data={"key": key, "csrf": csrf_of(form.text), "next": "/"}).status_code == 303
            pages[name] = client
        results = pages["reader"].get("/", params={"q": "cancel the reservation"})
        run_id = "tau-gpt-4o-airline-failed-calls-23-t3"
        assert results.status_code == 200 and f"/runs/{run_id}" in results.text
        for path in (f"/runs/{run_id}", f"/runs/{run_id}?format=json", f"/compare/{run_id}"):
            page = pages["reader"].get(path)
            assert page.status_code == 404 and "The trace of this run is missing" in page.text, (path, page.text)
            assert NOT_FOUND_TEXT not in page.text and str(tmp_path) not in page.text
        hidden = pages["elsewhere"].get(f"/runs/{run_id}")  # outside this key's pins: no word of a trace
        assert hidden.status_code == 404 and NOT_FOUND_TEXT in hidden.text and "trace" not in hidden.text.lower()
    finally:
        ts.close()


# -- trajsearch mcp --http on a loopback address ---------------------------------------------------


def _mcp_initialize(address: str, host_header: str) -> int:
    """The HTTP status of an MCP ``initialize`` POSTed to ``address`` with this Host (and its Origin)."""
    import json
    import urllib.error
    import urllib.request

    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}})
    request = urllib.request.Request(f"http://{address}/mcp", data=body.encode(), headers={
        "Host": host_header, "Origin": f"http://{host_header}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_mcp_over_http_on_any_loopback_address_answers_only_loopback_host_names(fleet, tmp_path):
    """Bug: ``trajsearch mcp --http --host 127.0.0.2`` (a loopback address, so served without ``--insecure``)
    answered requests naming any Host: the MCP SDK checks Host and Origin for 127.0.0.1, localhost and ::1 alone.
    A page of any site the operator's browser opens can rebind its own name to 127.0.0.2 and read the tool's
    answers: searches of the tenant's runs with this process's key. Every loopback host now gets the check,
    and its own name is allowed beside the usual loopback names."""
    import os
    import socket
    import subprocess
    import sys
    import time

    from conftest import free_port

    address, keys = fleet
    port = free_port()
    log = open(tmp_path / "mcp.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "trajsearch.cli", "mcp", "--server", address, "--http",
                             "--host", "127.0.0.2", "--port", str(port)],
                            env={**os.environ, "TRAJSEARCH_API_KEY": keys["p1"]},
                            stdout=subprocess.DEVNULL, stderr=log)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                socket.create_connection(("127.0.0.2", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, (tmp_path / "mcp.log").read_text()
                time.sleep(0.2)
        assert _mcp_initialize(f"127.0.0.2:{port}", f"attacker.example:{port}") == 421
        assert _mcp_initialize(f"127.0.0.2:{port}", f"127.0.0.2:{port}") == 200
        assert _mcp_initialize(f"127.0.0.2:{port}", f"localhost:{port}") == 200
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


# -- runs larger than one request message ------------------------------------------------------------


def _huge_run(trajectory_id: str, megabytes: int = 35):
    """A run of ``megabytes`` MB of JSON: a real tau-bench results file (kept under tests/fixtures) printed by
    each of its steps, each output at the 1,000,000 characters a step keeps. Ingest takes runs up to 256 MiB."""
    from conftest import make_run

    text = (FIXTURES / "tau-bench" / ".real" / "tool-calling-grok-3-0.0_range_0--1_user-grok-3-llm_0921131646.json").read_text()
    output = (text * (1_000_000 // len(text) + 1))[:990_000]
    steps = [("bash", {"command": f"cat results-{n}.json"}, f"{n}\n{output}") for n in range(megabytes)]
    return make_run(trajectory_id, task="Summarise the tau-bench results files", steps=steps)


@pytest.fixture
def writable(tmp_path):
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="write")]),
                       address="127.0.0.1:0") as srv:
        yield ts, srv.address, key
    ts.close()


def test_the_trace_of_a_run_over_32_mib_is_read_over_the_service(writable):
    """Bug: ingest keeps runs up to 256 MiB, but every answer was bounded by the request limit (32 MiB): such a
    run was found by searches, and its trace answered ``RESOURCE_EXHAUSTED: SERVER: Sent message larger than max
    (40341062 vs. 33554432)`` (``show``, ``export`` over ``--server``, ``Client.get_trace``)."""
    from conftest import make_run

    ts, address, key = writable
    run = _huge_run("huge-1")
    # indexed from a short copy (indexing 35 MB of text takes minutes here); its trace is the whole run, as
    # ingest writes it (the same store call, at the same URI)
    assert ts.add([make_run("huge-1", task=run.task)]).ingested == 1
    assert ts.traces.put(run) == ts.run("huge-1", tenant="acme").trace_uri
    with Client(address, key) as client:
        hit = client.run("huge-1")
        trace = client.get_trace(hit.trace_uri)
    assert trace.trajectory_id == "huge-1" and [s.observation for s in trace.steps] == [s.observation for s in run.steps]


def test_ingest_over_the_server_rejects_a_run_too_large_for_a_message_and_goes_on(writable, tmp_path, monkeypatch):
    """Bug: ``trajsearch ingest --server`` sends a dump as one stream; a run whose JSON is over the 32 MiB a message
    may carry ended it with ``error: ServiceError: RESOURCE_EXHAUSTED: CLIENT: Sent message larger than max``,
    every run after it unread. It is now that run's rejection, naming its size and what to do, and the rest is
    ingested. The dump is our trajectory JSON, one run a line, as ``trajsearch export -f jsonl`` writes it."""
    from conftest import make_run

    _, address, key = writable
    dump = tmp_path / "runs.jsonl"
    runs = [make_run("small-1"), _huge_run("huge-2"), make_run("small-2", task="Rotate the gateway certificate")]
    dump.write_text("".join(run.model_dump_json() + "\n" for run in runs))
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_SERVER", address)
    monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
    code, out, err = run_cli("ingest", str(dump))
    text = " ".join((out + err).split())
    assert code == 3 and "ingested 2 runs" in text and "rejected 1" in text, text
    assert re.search(r"runs\.jsonl:line 2: the run is 3\d\.\d MiB as JSON, over the 32 MiB a message", text), text
    with Client(address, key) as client:
        assert client.run("small-1") and client.run("small-2") and client.run("huge-2") is None
