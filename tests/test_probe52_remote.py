"""Probe 52 (WEB3): the CLI over ``--server``, against a real server on 127.0.0.1, as an engineer uses it.

The runs are real dumps kept under tests/fixtures (mini-swe-agent runs handed in with no verdict: successes no one
evaluated, shown "submitted, not evaluated"; tau-bench airline runs with their rewards), ingested by the CLI into a
real Milvus Lite store with the fast test embedder and served by a real ``ServiceServer``; the CLI runs as a child
process. An older server is this one with what it lacked taken away: its Hit answers without the field added
since, or its registration without the calls added since (gRPC then answers UNIMPLEMENTED, as an old build does).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.protos import pb2_grpc
from trajsearch.service.server import ServiceServer

from process_support import cli_env
from service_support import key_ring

FIXTURES = Path(__file__).parent / "fixtures"
#: mini-swe-agent runs with gemini-3-pro on SWE-bench Verified handed in with no verdict (their SOURCE.md files: each a
#: success "submitted, not evaluated"), a deepseek run that submitted nothing (a failure), tau-bench airline runs.
REAL = FIXTURES / "mini-swe-agent" / ".real"
DUMPS = [REAL / "gemini-3-pro-namesakes", REAL / "swebench-gemini-3-pro" / "trajs", REAL / "gemini_3_pro",
         FIXTURES / "mini-swe-agent" / "deepseek_chat_dev", FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"]
SUBMITTED = "submitted, not evaluated"
_SERVICE = "trajsearch.v1.TrajSearch"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """The real dumps, ingested by the CLI into an embedded store (tenant acme)."""
    root = tmp_path_factory.mktemp("store")
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", *map(str, DUMPS), "-t", "acme",
                           "--uri", str(root / "m.db"), "--traces", str(root / "traces")],
                          env=cli_env(), capture_output=True, text=True, timeout=600, cwd=root)  # (its checkpoints)
    assert done.returncode == 0, done.stderr
    return root


@pytest.fixture(scope="module")
def keys():
    return key_ring(acme=dict(tenant="acme", role="read"), empty=dict(tenant="empty", role="read"))


def _serve(store: Path, ring, monkeypatch=None, *, lacking: tuple[str, ...] = ()) -> ServiceServer:
    """A server over ``store``; ``lacking``: the calls an older build of it did not have."""
    if lacking:
        monkeypatch.setattr(pb2_grpc, "add_TrajSearchServicer_to_server", _registered_without(lacking))
    ts = TrajSearch.open(str(store / "m.db"), traces=str(store / "traces"), embedder=HashingEmbedder())
    try:
        return ServiceServer(ts, ring, address="127.0.0.1:0", max_workers=4).start()
    except BaseException:
        ts.close()
        raise


def _registered_without(lacking: tuple[str, ...]):
    """``add_TrajSearchServicer_to_server`` of a build whose proto had no ``lacking`` calls."""
    register = pb2_grpc.add_TrajSearchServicer_to_server

    def add(servicer, server) -> None:
        class Handlers:
            def add_generic_rpc_handlers(self, handlers) -> None:
                pass

            def add_registered_method_handlers(self, service, handlers) -> None:
                self.handlers = handlers

        seen = Handlers()
        register(servicer, seen)
        kept = {name: handler for name, handler in seen.handlers.items() if name not in lacking}
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(_SERVICE, kept),))
        server.add_registered_method_handlers(_SERVICE, kept)

    return add


def _cli(server: ServiceServer, key: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args, "--server", server.address],
                          env=cli_env(TRAJSEARCH_API_KEY=key), capture_output=True, text=True, timeout=300)


def _local(store: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI over the embedded store ``store`` (tenant acme)."""
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args, "-t", "acme", "--uri", str(store / "m.db"),
                           "--traces", str(store / "traces")], env=cli_env(), capture_output=True, text=True,
                          timeout=300)


def _calls(server: ServiceServer, method: str) -> int:
    return server.metrics.snapshot(tenant="acme")["methods"].get(method, {}).get("calls", 0)


# -- leftover 1: the outcome shown, without one trace read per run ------------------------------------------------


def test_search_and_similar_over_server_show_the_outcome_without_reading_traces(store, keys):
    """``search`` and ``similar`` over --server showed each successful run's outcome by reading its whole trace, one
    GetTrace per run shown (a SWE-bench run's trace is megabytes; ten hits, ten reads). The server's hits now carry
    the outcome shown, known from the run's summary row: no trace is read, and what is shown is what the embedded
    store's own lookup says ("submitted, not evaluated" for the runs handed in with no verdict)."""
    server = _serve(store, keys[1])
    try:
        found = _cli(server, keys[0]["acme"], "search", "fix the bug in the code", "-k", "10", "--json")
        assert found.returncode == 0, found.stderr
        hits = json.loads(found.stdout)
        similar = _cli(server, keys[0]["acme"], "similar", "--id", hits[0]["trajectory_id"], "-k", "5", "--json")
        assert similar.returncode == 0, similar.stderr
        matches = json.loads(similar.stdout)
        assert _calls(server, "GetTrace") == 0
        local = server.ts.search("fix the bug in the code", tenant="acme", k=10)
        assert {h["trajectory_id"]: h["outcome_shown"] for h in hits} == server.ts.outcomes_shown(local, tenant="acme")
        assert SUBMITTED in {h["outcome_shown"] for h in hits}
        local = [m.best for m in server.ts.similar_runs(hits[0]["trajectory_id"], None, tenant="acme", k=5)]
        assert {m["trajectory_id"]: m["outcome_shown"] for m in matches} == server.ts.outcomes_shown(local,
                                                                                                     tenant="acme")
    finally:
        server.stop(grace=2)


def test_an_older_server_without_the_outcome_field_still_shows_the_outcome(store, keys, monkeypatch):
    """A new CLI against a server older than the field (its hits carry no outcome shown) reads the traces of the
    successful runs as before: the runs handed in with no verdict are still "submitted, not evaluated", not
    "success"."""
    server = _serve(store, keys[1])
    monkeypatch.setattr(server.ts, "outcomes_known", lambda hits, tenant: {})  # what an older server sends: nothing
    try:
        found = _cli(server, keys[0]["acme"], "search", "fix the bug in the code", "-k", "10", "--json")
        assert found.returncode == 0, found.stderr
        hits = json.loads(found.stdout)
        local = server.ts.search("fix the bug in the code", tenant="acme", k=10)
        assert {h["trajectory_id"]: h["outcome_shown"] for h in hits} == server.ts.outcomes_shown(local, tenant="acme")
        assert SUBMITTED in {h["outcome_shown"] for h in hits}
        assert _calls(server, "GetTrace") >= 1
    finally:
        server.stop(grace=2)


# -- leftover 2: a new CLI against a server without a call ----------------------------------------------------------


def test_a_call_the_server_lacks_is_said_to_need_a_newer_server(store, keys, monkeypatch):
    """``failures --server`` against a server built before the Failures call said only "UNIMPLEMENTED: Method not
    found!". It now names the call and what to upgrade."""
    server = _serve(store, keys[1], monkeypatch, lacking=("Failures", "Metrics"))
    try:
        done = _cli(server, keys[0]["acme"], "failures")
        assert done.returncode == 1
        said = " ".join(done.stderr.split())
        assert "has no Failures call" in said and "older trajsearch" in said and "upgrade the server" in said, said
        assert "Traceback" not in done.stderr
        assert _cli(server, keys[0]["acme"], "stats").returncode == 0  # the calls it has still answer
    finally:
        server.stop(grace=2)


# -- the same answers both ways ---------------------------------------------------------------------------------------

#: What an engineer asks: a pasted error, free text, a run by id, and what an agent would be given.
ASKED = [
    ("search", "ValueError: Invalid frequency: H", "--level", "step", "--expand", "2", "-k", "3", "--json"),
    ("similar", "AttributeError: 'NoneType' object has no attribute", "-k", "5", "--json"),
    ("similar", "--id", "tau-gpt-4o-airline-mini-0-t0", "-k", "3", "--json"),
    ("exemplars", "I want to cancel my reservation", "--json"),
]


def test_the_cli_says_the_same_over_a_server_as_over_the_store(store, keys, tmp_path):
    """Each question's ``--json`` is the same text over --server as over the embedded store holding the same runs:
    ``exemplars --json`` wrote each item's provenance with its keys in another order over --server (outcome before
    similarity), so a script diffing or hashing the two saw every item changed."""
    local = tmp_path / "local"
    shutil.copytree(store, local)  # the server owns its store: the embedded CLI reads a copy of it
    server = _serve(store, keys[1])
    try:
        for asked in ASKED:
            here, there = _local(local, *asked), _cli(server, keys[0]["acme"], *asked)
            assert here.returncode == there.returncode == 0, (asked, here.stderr, there.stderr)
            assert json.loads(here.stdout), asked
            assert there.stdout == here.stdout, asked
    finally:
        server.stop(grace=2)


def _web_runs(ts: TrajSearch, ring, key: str, query: str) -> list[str]:
    """The runs the web search page lists for ``query``, in order (the run an id names, shown first, left out)."""
    from starlette.testclient import TestClient

    from trajsearch.web import WebConfig, create_app
    from trajsearch.web.app import LOOPBACK_HOSTS
    from trajsearch.web.session import OneTimeTokens
    from web_support import csrf_of

    app = create_app(ts, ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS), one_time=OneTimeTokens())
    client = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
    page = client.get("/signin")
    assert client.post("/signin", data={"key": key, "csrf": csrf_of(page.text), "next": "/"}).status_code == 303
    page = client.get("/", params={"q": query})
    assert page.status_code == 200, page.text[:500]
    shown = dict.fromkeys(re.findall(r'href="/runs/([^"?#]+)', page.text))
    shown.pop(query, None)
    return list(shown)


@pytest.mark.parametrize("anchor", ["tau-gpt-4o-airline-mini-0-t0",
                                    "gemini-3-pro-preview.django__django-16255.88563d52e3"])
def test_the_web_page_finds_the_runs_like_one_that_similar_finds(store, keys, tmp_path, anchor):
    """A run's id pasted in the web page's box lists "runs like this one"; ``similar --id`` answers the same question.
    The page searched its own way (the failure row's text even where that is only an evaluation's verdict, and
    ``auto`` mode, which takes a task written as prose for dense only), so the two listed other runs, in another
    order. Both now match on the run's anchor (``TrajSearch.anchor_text``), hybrid by default."""
    local = tmp_path / "local"
    shutil.copytree(store, local)
    similar = _local(local, "similar", "--id", anchor, "-k", "10", "--json")
    assert similar.returncode == 0, similar.stderr
    ts = TrajSearch.open(str(store / "m.db"), traces=str(store / "traces"), embedder=HashingEmbedder())
    try:
        assert _web_runs(ts, keys[1], keys[0]["acme"], anchor) == [m["trajectory_id"] for m in json.loads(similar.stdout)]
    finally:
        ts.close()


def test_a_count_of_zero_is_refused_over_a_server_as_over_the_store(store, keys, tmp_path):
    """``search -k 0`` (a script's count of nothing) was refused by the embedded store ("k must be a whole number")
    and answered over --server with 10 hits: 0 on the wire asks for the server's default. Refused both ways now,
    as bad input (exit 2), ``--group-size 0`` too."""
    local = tmp_path / "local"
    shutil.copytree(store, local)
    server = _serve(store, keys[1])
    try:
        for asked in (("search", "fix the bug", "-k", "0"), ("similar", "fix the bug", "-k", "0"),
                      ("search", "fix the bug", "--group-size", "0")):
            here, there = _local(local, *asked), _cli(server, keys[0]["acme"], *asked)
            assert here.returncode == 2, (asked, here.stdout)
            assert there.returncode == 2 and "must be a whole number from 1" in there.stderr, (asked, there.stdout)
            assert _calls(server, "Search") + _calls(server, "SimilarRuns") == 0
    finally:
        server.stop(grace=2)


# -- review of probe 52 RWEB3 ----------------------------------------------------------------------------------------


@pytest.fixture
def other_grpc_server():
    """A gRPC server that is not trajsearch's, on 127.0.0.1: only the standard health service, as Milvus (19530),
    etcd or any gRPC service has (RWEB3's fake.py)."""
    from concurrent import futures

    from grpc_health.v1 import health, health_pb2_grpc

    server = grpc.server(futures.ThreadPoolExecutor(2))
    health_pb2_grpc.add_HealthServicer_to_server(health.HealthServicer(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)


def _cli_at(address: str, key: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", *args, "--server", address],
                          env=cli_env(TRAJSEARCH_API_KEY=key), capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("asked", [("search", "fix the bug"), ("stats",), ("failures",), ("health",)])
def test_a_server_that_is_not_trajsearch_is_not_said_to_be_an_older_one(other_grpc_server, asked):
    """``--server`` pointing at another gRPC service (a Milvus port pasted for trajsearch's) was told "it runs an older
    trajsearch than this client; upgrade the server" for every call, and ``health`` said only "NOT_FOUND: ". Only a
    call added since the first release (Failures) can be missing from a trajsearch server, and only on one that
    answers the others: anything else is an address to check."""
    done = _cli_at(other_grpc_server, "k" * 32, *asked)
    said = " ".join(done.stderr.split())
    assert done.returncode == 1, (done.stdout, said)
    assert f"the server at {other_grpc_server} is not a trajsearch server" in said, said
    assert "--server, $TRAJSEARCH_SERVER" in said and "upgrade" not in said and "older" not in said, said
    assert "Traceback" not in done.stderr


def test_failures_limit_zero_is_refused_over_a_server_as_by_the_library(store, keys):
    """``Client.failures(limit=0)`` answered every mode (0 was sent as None is, the server's "all") where the library's
    ``failure_modes(limit=0)`` refuses it; a negative one was the server's "limit: must be 1..1000". Checked here as
    the library checks it, with the server's top; None is still every mode the server returns."""
    from trajsearch.failures import failure_modes
    from trajsearch.service.client import Client

    server = _serve(store, keys[1])
    try:
        with Client(server.address, api_key=keys[0]["acme"]) as client:
            every = failure_modes(server.ts, tenant="acme", limit=None)
            assert every.modes
            for limit in (0, -1, 1.5, True):
                with pytest.raises(ValueError, match=r"limit must be a whole number from 1 to 1000 \(or None\)"):
                    client.failures(limit=limit)
                with pytest.raises(ValueError, match="limit must be a whole number"):
                    failure_modes(server.ts, tenant="acme", limit=limit)
            assert _calls(server, "Failures") == 0
            assert [m.label for m in client.failures(limit=None).modes] == [m.label for m in every.modes]
            with pytest.raises(ValueError, match=r"from 1 to 1000 \(or None\)"):
                client.failures(limit=5000)
            assert len(client.failures(limit=1).modes) == 1
    finally:
        server.stop(grace=2)


def test_a_count_out_of_bounds_is_refused_in_the_embedded_stores_words_over_a_server(store, keys, tmp_path):
    """``search -k 0`` over --server said "k must be a whole number from 1, got 0", the embedded store "from 1 to
    200"; ``-k 3000000000`` failed as protobuf's "Value out of range". Both are refused in the store's words now,
    with the server's own bound (its --max-k) said beside the library's; ``--group-size`` word for word."""
    local = tmp_path / "local"
    shutil.copytree(store, local)
    server = _serve(store, keys[1])
    try:
        # the options as typed (round 26: the CLI checks them first), the server's bound beside -k's over --server
        for asked, words in ((("search", "fix the bug", "-k", "0"), "-k: must be a whole number from 1 to 200"),
                             (("similar", "fix the bug", "-k", "3000000000"),
                              "-k: must be a whole number from 1 to 200"),
                             (("search", "fix the bug", "--group-size", "11"),
                              "--group-size: must be a whole number from 1 to 10, got 11")):
            here, there = _local(local, *asked), _cli(server, keys[0]["acme"], *asked)
            assert here.returncode == there.returncode == 2, (asked, here.stderr, there.stderr)
            assert words in here.stderr and words in there.stderr, (asked, here.stderr, there.stderr)
            assert "Value out of range" not in there.stderr
            assert ("-k" not in asked) or "a server takes at most its --max-k: 100 unless set" in there.stderr
        assert _calls(server, "Search") + _calls(server, "SimilarRuns") == 0
    finally:
        server.stop(grace=2)
