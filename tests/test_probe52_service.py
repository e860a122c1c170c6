"""Probe 52 (SV3): the service's connections and queues, as a careless or hostile caller uses them.

Real uvicorn serving the web pages on 127.0.0.1, and a real gRPC server (``ServiceServer``) with real Milvus Lite and
file traces and the fast test embedder, reached by real clients over loopback. A slow tenant is made slow by holding
its searches in the index until the test lets them go (events, no timing asserts): what is tested is how the server
shares its connections and workers, not how fast anything is.
"""

from __future__ import annotations

import http.client
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest

from trajsearch.web import WebConfig, WebServer, create_app
from trajsearch.web.app import LOOPBACK_HOSTS

from web_support import build_store, make_keys


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    ts = build_store(tmp_path_factory.mktemp("probe52"))
    yield ts
    ts.close()


@pytest.fixture(scope="module")
def keys():
    return make_keys()


def _pages(store, keys) -> WebServer:
    return WebServer(create_app(store, keys.ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS)),
                     "127.0.0.1:0").start()


def _get(web: WebServer, target: str) -> tuple[int, bytes]:
    host, port = web.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=600)
    try:
        conn.request("GET", target)
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def _eventually(predicate, what: str, timeout: float = 600) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"never: {what}"
        time.sleep(0.02)


# -- the web pages' connections ----------------------------------------------------------------------


def test_idle_connections_do_not_cost_a_real_user_a_page(store, keys) -> None:
    """uvicorn's ``limit_concurrency`` (128) counts open connections, not requests: 127 connections that sent nothing
    (a browser's spare sockets, kept-alive ones, a careless client's pool) made the sign-in page answer a bare 503
    "Service Unavailable" until they were closed, up to 30 s later. Idle connections now wait for no answer and
    cost none: 300 of them, and pages that answered and were kept alive, leave the page served."""
    web = _pages(store, keys)
    host, port = web.address.rsplit(":", 1)
    idle: list[socket.socket] = []
    kept: list[http.client.HTTPConnection] = []
    try:
        for _ in range(300):
            idle.append(socket.create_connection((host, int(port)), timeout=600))
        for _ in range(20):  # answered once, kept alive
            conn = http.client.HTTPConnection(host, int(port), timeout=600)
            conn.request("GET", "/healthz")
            reply = conn.getresponse()
            reply.read()
            assert reply.status == 200
            kept.append(conn)
        status, body = _get(web, "/signin")
        assert status == 200, body[:200]
        assert b"<form" in body
    finally:
        for sock in idle:
            sock.close()
        for conn in kept:
            conn.close()
        web.stop()


def test_requests_past_the_most_at_once_are_refused_in_words(store, keys, monkeypatch) -> None:
    """What ``limit_concurrency`` was for still holds, counted on requests: past the most at once a request is
    answered 503 at once, saying why and when to retry (uvicorn said "Service Unavailable"), and served once the
    others end."""
    from trajsearch.web import server

    monkeypatch.setattr(server, "MAX_PAGES_AT_ONCE", 3, raising=False)
    web = _pages(store, keys)
    host, port = web.address.rsplit(":", 1)
    posting: list[socket.socket] = []
    try:
        for _ in range(3):  # requests in progress: sign-in forms whose bodies have not all arrived
            sock = socket.create_connection((host, int(port)), timeout=600)
            sock.sendall(f"POST /signin HTTP/1.1\r\nHost: {web.address}\r\nContent-Type: application/"
                         "x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nkey=".encode())
            posting.append(sock)
        _eventually(lambda: web.config.app.in_progress == 3, "the three posts were in progress")
        host_, port_ = web.address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host_, int(port_), timeout=600)
        conn.request("GET", "/signin")
        reply = conn.getresponse()
        assert reply.status == 503
        assert reply.getheader("retry-after") == "5"
        assert b"answering 3 requests at once, the most it takes: try again in a few seconds" in reply.read()
        conn.close()
    finally:
        for sock in posting:
            sock.close()
    try:
        _eventually(lambda: web.config.app.in_progress == 0, "the posts ended with their connections")
        assert _get(web, "/signin")[0] == 200
    finally:
        web.stop()


def test_a_body_sent_too_slowly_is_answered_and_closed(store, keys, monkeypatch) -> None:
    """A posted form whose bytes trickle (or stop) was awaited for good: its connection, its place among the
    requests in progress and its buffer held while the client lived. Past its time it is answered 408 saying why
    and closed, and its place is free."""
    from trajsearch.web import server

    monkeypatch.setattr(server, "BODY_TIMEOUT_S", 0.5, raising=False)
    web = _pages(store, keys)
    host, port = web.address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=600) as sock:
            sock.sendall(f"POST /signin HTTP/1.1\r\nHost: {web.address}\r\nContent-Type: application/"
                         "x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\nkey=ts_".encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer[:300]
        assert answer.endswith(b"This request's body did not arrive within 0.5 seconds of its head. Send it again.")
        _eventually(lambda: web.config.app.in_progress == 0, "the post ended")
        assert _get(web, "/signin")[0] == 200
    finally:
        web.stop()


def test_past_the_most_connections_the_idle_ones_are_closed_not_a_request(store, keys, monkeypatch) -> None:
    """Past the pages' bound of open connections, the one idle the longest is closed: 30 idle connections with a
    bound of 10 leave at most 10 open, and a sign-in posted before them, its body still arriving, is answered."""
    from trajsearch.web import server

    monkeypatch.setattr(server, "MAX_CONNECTIONS", 10, raising=False)
    web = _pages(store, keys)
    host, port = web.address.rsplit(":", 1)
    idle: list[socket.socket] = []
    try:
        with socket.create_connection((host, int(port)), timeout=600) as posting:
            form = b"key=ts_not_a_key&csrf=x&next=%2F"
            posting.sendall(f"POST /signin HTTP/1.1\r\nHost: {web.address}\r\nContent-Type: application/"
                            f"x-www-form-urlencoded\r\nContent-Length: {len(form)}\r\n"
                            "Connection: close\r\n\r\n".encode() + form[:5])
            _eventually(lambda: web.config.app.in_progress == 1, "the post was in progress")
            for _ in range(30):
                idle.append(socket.create_connection((host, int(port)), timeout=600))
            closed = 0
            for sock in idle[:20]:  # the oldest idle ones were closed for the newer
                sock.settimeout(600)  # a bound for a hang: each of these is closed
                try:
                    closed += sock.recv(100) == b""
                except (ConnectionResetError, TimeoutError):
                    pass
            assert closed >= 10
            posting.sendall(form[5:])
            answer = b""
            while chunk := posting.recv(65536):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 "), answer[:200]
            assert int(answer[9:12]) < 500
    finally:
        for sock in idle:
            sock.close()
        web.stop()



def test_past_the_most_connections_a_head_arriving_outlasts_those_quiet_before_it(store, keys, monkeypatch) -> None:
    """A search of a pasted log arrives in segments; with the connection bound reached, a connection counted as
    quiet from its opening was closed first, its head half-sent, for connections opened after it that sent nothing:
    the user's search was lost unanswered. A head counts from its last bytes: those quiet longer are closed."""
    from trajsearch.web import server

    monkeypatch.setattr(server, "MAX_CONNECTIONS", 10, raising=False)
    web = _pages(store, keys)
    host, port = web.address.rsplit(":", 1)
    idle: list[socket.socket] = []
    head = f"GET /search?q={'timeout+' * 500} HTTP/1.1\r\nHost: {web.address}\r\nConnection: close\r\n\r\n".encode()
    try:
        with socket.create_connection((host, int(port)), timeout=600) as user:
            _eventually(lambda: len(_connections(web)) == 1, "the user's connection was taken")
            for _ in range(9):  # opened after the user's, quiet since
                idle.append(socket.create_connection((host, int(port)), timeout=600))
            _eventually(lambda: len(_connections(web)) == 10, "the quiet ones were taken")
            user.sendall(head[:2000])  # the rest still on its way
            _eventually(lambda: any(getattr(c, "_head_bytes", 0) for c in _connections(web)), "the head began")
            for _ in range(5):
                idle.append(socket.create_connection((host, int(port)), timeout=600))
            for sock in idle[:5]:  # 15 open, 10 kept: the five quiet the longest closed
                sock.settimeout(600)  # a bound for a hang: each of these is closed
                try:
                    assert sock.recv(100) == b""
                except ConnectionResetError:
                    pass
            user.sendall(head[2000:])
            answer = b""
            while chunk := user.recv(65536):
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 "), answer[:200]
            assert int(answer[9:12]) < 500, answer[:200]
    finally:
        for sock in idle:
            sock.close()
        web.stop()


def test_heads_trickled_a_byte_at_a_time_do_not_keep_visitors_out(store, keys, monkeypatch) -> None:
    """Review R2-FSV: counted as busy, a head begun was never closed for a newcomer, so sockets sending one byte
    each filled the bound and every visitor's connection was closed unanswered (``Connection reset by peer``) for
    30 s at a time, for good by reconnecting. Quiet from their last byte, they are closed for the visitor."""
    from trajsearch.web import server

    monkeypatch.setattr(server, "MAX_CONNECTIONS", 10, raising=False)
    web = _pages(store, keys)
    host, port = web.address.rsplit(":", 1)
    trickled: list[socket.socket] = []
    try:
        for _ in range(12):
            sock = socket.create_connection((host, int(port)), timeout=600)
            sock.sendall(b"G")
            trickled.append(sock)
        _eventually(lambda: sum(bool(getattr(c, "_head_bytes", 0)) for c in _connections(web)) >= 10,
                    "the trickled heads were taken")
        visitor = http.client.HTTPConnection(host, int(port), timeout=600)
        try:
            visitor.request("GET", "/signin")
            assert visitor.getresponse().status == 200
        finally:
            visitor.close()
    finally:
        for sock in trickled:
            sock.close()
        web.stop()


def _connections(web: WebServer) -> set:
    """The connections uvicorn's server holds open (its ``server_state``)."""
    return web.server.server_state.connections


# -- the gRPC workers' queues ------------------------------------------------------------------------


from trajsearch.embed import HashingEmbedder  # noqa: E402
from trajsearch.search import TrajSearch  # noqa: E402
from trajsearch.service.client import Client, ResourceExhausted, Unavailable  # noqa: E402
from trajsearch.service.protos import pb2, pb2_grpc  # noqa: E402
from trajsearch.service.server import ServiceServer  # noqa: E402

from conftest import make_run  # noqa: E402
from service_support import HeldIngest, SlowIndex, key_ring  # noqa: E402


@pytest.fixture(scope="module")
def tenants():
    return key_ring(acme=dict(tenant="acme", role="write"), beta=dict(tenant="beta", role="read"))


def _serve(tmp_path, ring, slow_tenant: str = "acme", **options):
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1"), make_run("b1", tenant="beta")])
    slow = SlowIndex(ts, slow_tenant)
    return ServiceServer(ts, ring, address="127.0.0.1:0", **options).start(), slow


def test_calls_whose_client_gave_up_while_queued_neither_count_nor_run(tmp_path, tenants) -> None:
    """Four workers (acme alone may use three), acme's bound of calls 5: three searches held in the index, two
    queued. Their clients give up (an agent's timeout, then its retry). The two still counted toward acme's bound
    until a worker reached them, so acme's next call was refused RESOURCE_EXHAUSTED for calls nobody awaited; and
    once dequeued each ran its search for nobody. Now they leave the queue with their client: the next call is
    served, and the index sees only the calls someone awaits."""
    made, ring = tenants
    server, slow = _serve(tmp_path, ring, max_workers=4, max_concurrent_rpcs=10)
    channel = grpc.insecure_channel(server.address)
    stub = pb2_grpc.TrajSearchStub(channel)
    metadata = (("authorization", f"Bearer {made['acme']}"),)
    try:
        with Client(server.address, made["acme"], timeout=600) as acme, ThreadPoolExecutor(4) as pool:
            try:
                held = [pool.submit(acme.search, "payments", k=3) for _ in range(3)]
                _eventually(lambda: slow.arrived == 3, "three searches reached the index")
                queued = [stub.Search.future(pb2.SearchRequest(text="payments", k=3), metadata=metadata)
                          for _ in range(2)]
                _eventually(lambda: server.calls._queues.get("acme") and len(server.calls._queues["acme"]) == 2,
                            "two searches queued")
                for call in queued:
                    assert call.cancel()
                _eventually(lambda: server.calls.waiting("acme") == 0, "the given-up calls left the queue", 600)
                late = pool.submit(acme.search, "payments", k=3)  # not refused: nobody awaits the two
                _eventually(lambda: late.done() or server.calls.waiting("acme") == 1, "the late call queued")
                assert not late.done(), late.exception()
            finally:
                slow.gate.set()
            assert [h.trajectory_id for h in late.result(600)] == ["a1"]
            assert all([h.trajectory_id for h in f.result(600)] == ["a1"] for f in held)
            assert slow.arrived == 4  # the given-up calls never ran
    finally:
        slow.gate.set()
        channel.close()
        server.stop(grace=2)


def test_a_tenant_s_open_ingest_streams_leave_its_searches_their_workers(tmp_path, tenants) -> None:
    """Four workers (a tenant's share 2, three write slots). acme's batch indexer has two Ingest streams open (each
    sent a batch and reads its next file); beta has a slow search running. An Ingest stream ran on its tenant's share
    of the workers for as long as it lasted (hours for a big dump, ``--ingest-idle`` for a frozen client), so acme's
    agents' searches waited while beta had anything running: none was left for them. Writes have a bound of their
    own (the write slots) and no longer take the tenant's share: acme's search is answered meanwhile, and the
    streams end OK."""
    made, ring = tenants
    # (three write slots: a tenant holds all but one of them, probe 53)
    server, slow = _serve(tmp_path, ring, slow_tenant="beta", max_workers=4, write_slots=3)
    held_ingest = HeldIngest(server.address, made["acme"])
    more, sent = held_ingest.more, held_ingest.sent
    streams = [held_ingest.open(f"new{n}") for n in range(2)]
    try:
        with Client(server.address, made["acme"], timeout=600) as acme, \
                Client(server.address, made["beta"], timeout=600) as beta, ThreadPoolExecutor(1) as pool:
            try:
                for _ in streams:
                    assert sent.acquire(timeout=600)
                held = pool.submit(beta.search, "payments", k=3)
                _eventually(lambda: slow.arrived == 1, "beta's search reached the index")
                assert "a1" in [h.trajectory_id for h in acme.search("payments", k=3)]  # (with the streams' runs)
                assert not held.done() and not any(s.done() for s in streams)
            finally:
                slow.gate.set()
                more.set()
            assert [h.trajectory_id for h in held.result(600)] == ["b1"]
            assert [s.result(600).ingested for s in streams] == [1, 1]
    finally:
        slow.gate.set()
        held_ingest.close()
        server.stop(grace=2)


def test_with_one_worker_an_open_ingest_stream_leaves_health_checks_and_searches_answered(tmp_path, tenants) -> None:
    """Writes run on grpcio's own pool, beside the health service: with ``--workers 1`` (one write slot) an Ingest
    stream open for hours must not hold its only thread, or a liveness probe would restart the server mid-ingest.
    The health check, a search and a second stream's refusal are all answered while the stream is open."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    made, ring = tenants
    server, slow = _serve(tmp_path, ring, slow_tenant="nobody", max_workers=1)
    channel = grpc.insecure_channel(server.address)
    stub = pb2_grpc.TrajSearchStub(channel)
    metadata = (("authorization", f"Bearer {made['acme']}"),)
    more, sent = threading.Event(), threading.Semaphore(0)

    def batches():
        yield pb2.IngestBatch(records=[pb2.TrajectoryRecord(json=make_run("new").model_dump_json(), source="d")])
        sent.release()
        more.wait(600)

    stream = stub.Ingest.future(batches(), metadata=metadata)
    try:
        assert sent.acquire(timeout=600)
        _eventually(lambda: server.service._writes == 1, "the stream holds its write slot")
        checked = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=600)
        assert checked.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as refused:
            stub.Ingest(iter([pb2.IngestBatch()]), metadata=metadata, timeout=600)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        with Client(server.address, made["acme"], timeout=600) as acme:
            assert "a1" in [h.trajectory_id for h in acme.search("payments", k=3)]
        more.set()
        assert stream.result(600).ingested == 1
    finally:
        more.set()
        channel.close()
        server.stop(grace=2)


# -- file descriptors: one process for gRPC, the pages, the index and the traces ---------------------


import subprocess  # noqa: E402
import sys  # noqa: E402

from trajsearch.cli import SAMPLE  # noqa: E402
from trajsearch.service.auth import key_entry, new_key  # noqa: E402

from process_support import cli_env, launched, serving  # noqa: E402


@pytest.fixture
def served_with_few_files(tmp_path):
    """``trajsearch serve --http`` over the bundled sample, in a process allowed 256 open files (systemd's default
    for a service is 1024: the same at a quarter of the scale); yields (grpc address, web address, env)."""
    yield from _served_with_few_files(tmp_path)


def _served_with_few_files(tmp_path, *options: str):
    key = new_key()
    keys = tmp_path / "keys.toml"
    entry = key_entry(key, tenant="demo", role="read")
    keys.write_text(f'[[keys]]\nid = "{entry["id"]}"\nsha256 = "{entry["sha256"]}"\ntenant = "demo"\nrole = "read"\n')
    store = ["--uri", str(tmp_path / "m.db"), "--traces", str(tmp_path / "t")]
    env = cli_env()
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(SAMPLE), "-t", "demo", *store],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)  # (its checkpoints)
    assert done.returncode == 0, done.stderr
    err = (tmp_path / "serve.err").open("w")
    serve = subprocess.Popen(launched([sys.executable, "-m", "trajsearch.cli", "serve", "--keys", str(keys), *store,
                                       "--address", "127.0.0.1:0", "--http", "127.0.0.1:0", "--grace", "1",
                                       *options],
                                      nofile=256), env=env, stdout=subprocess.DEVNULL, stderr=err, text=True,
                             cwd=tmp_path)
    try:
        found = serving(serve, tmp_path / "serve.err")
        yield found["address"], found["web"], {**env, "TRAJSEARCH_API_KEY": key, "TRAJSEARCH_SERVER": found["address"]}
    finally:
        serve.terminate()
        try:
            serve.wait(600)
        except subprocess.TimeoutExpired:
            serve.kill()
        err.close()


def _search_over_grpc(env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trajsearch.cli", "search", "flight not available", "-k", "2"],
                          env=env, capture_output=True, text=True, timeout=300)


def _flood(address: str, n: int) -> list[socket.socket]:
    host, port = address.rsplit(":", 1)
    opened = []
    for _ in range(n):
        try:
            opened.append(socket.create_connection((host, int(port)), timeout=30))  # (a full backlog ends the flood)
        except OSError:  # (the backlog full: what is open is enough)
            break
    return opened


def test_idle_connections_to_the_pages_leave_the_process_its_files(served_with_few_files) -> None:
    """A client holding 400 idle connections to the pages (a careless pool, a hostile one) took every file
    descriptor of the process: gRPC accepted no connection ("UNAVAILABLE: failed to connect to all addresses"), for
    every tenant, and the index and the trace files could not be opened, until it let go. The pages keep at most a
    quarter of the process's descriptors open, closing the idle ones first: gRPC serves, and so do the pages."""
    grpc_address, web_address, env = served_with_few_files
    flood = _flood(web_address, 400)
    try:
        time.sleep(1)  # (the server accepts them all, closing what is past its bound)
        found = _search_over_grpc(env)
        assert found.returncode == 0, found.stdout + found.stderr
        assert "flight" in found.stdout
        host, port = web_address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=600)
        conn.request("GET", "/signin")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        for sock in flood:
            sock.close()


# -- review of probe 52 (RSV3) ------------------------------------------------------------------------


def test_queued_calls_expiring_while_others_arrive_leave_the_server_answering(tmp_path, tenants) -> None:
    """Two workers, every search a little slow, twelve clients of two tenants calling with deadlines of 5-60 ms (an
    agent's tight timeout under load): most calls expire while queued as new ones arrive. A given-up call's future
    was cancelled under the tenant pool's lock; the cancel runs grpcio's done callback, which waits for grpcio's
    server lock, held by grpcio's polling thread while it asked the pool (``admits``) about the next call: the two
    waited for each other for good, and every later call hung, the health check's too (the server froze within
    seconds of such a storm). After the storm the health check and a search are answered."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    made, ring = tenants
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1"), make_run("b1", tenant="beta")])
    search = ts.search

    def slow_search(*args, **kwargs):
        time.sleep(0.03)  # (what makes calls queue: nothing here is timed)
        return search(*args, **kwargs)

    ts.search = slow_search  # type: ignore[method-assign]
    server = ServiceServer(ts, ring, address="127.0.0.1:0", max_workers=2, max_concurrent_rpcs=200).start()
    stop = threading.Event()
    outcomes: dict[str, int] = {}

    def client(n: int) -> None:
        name = "beta" if n % 3 == 0 else "acme"
        with grpc.insecure_channel(server.address) as channel:
            stub = pb2_grpc.TrajSearchStub(channel)
            metadata = (("authorization", f"Bearer {made[name]}"),)
            while not stop.is_set():
                try:
                    stub.Search(pb2.SearchRequest(text="payments", k=3), metadata=metadata,
                                timeout=0.005 + 0.055 * (n % 12) / 11)
                    outcome = "OK"
                except grpc.RpcError as exc:
                    outcome = exc.code().name
                outcomes[outcome] = outcomes.get(outcome, 0) + 1

    channel = grpc.insecure_channel(server.address)
    try:
        with ThreadPoolExecutor(12) as pool:
            clients = [pool.submit(client, n) for n in range(12)]
            end = time.monotonic() + 20
            while outcomes.get("DEADLINE_EXCEEDED", 0) < 1500 and time.monotonic() < end:  # (a busy machine: less)
                time.sleep(0.1)
            stop.set()
            for done in clients:
                done.result(600)  # (each call has its own deadline: the clients end whatever the server does)
        checked = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=600)
        assert checked.status == health_pb2.HealthCheckResponse.SERVING, outcomes
        with Client(server.address, made["acme"], timeout=600) as acme:
            assert [h.trajectory_id for h in acme.search("payments", k=3)] == ["a1"]
        # a queued call is known given up once grpcio's polling thread has run its close callback (fair.given_up),
        # which a loaded machine may run after the clients saw their deadlines: waited for, as its queue must empty
        _eventually(lambda: server.calls.waiting("acme") == server.calls.waiting("beta") == 0,
                    "the storm's given-up calls left the queues")
    finally:
        stop.set()
        channel.close()
        stopping = threading.Thread(target=server.stop, kwargs=dict(grace=2), daemon=True)  # (a frozen server
        stopping.start()  # never stops: the test fails, not hangs)
        stopping.join(600)


def test_a_delete_refused_for_want_of_write_slots_says_open_ingest_streams_hold_them(tmp_path) -> None:
    """Two write slots, both held by the batch indexers' two open Ingest streams (each sent a batch and reads its
    next file; a stream holds its slot until it ends). beta's Delete was refused UNAVAILABLE "busy with 2 writes (a
    slow trace store or index?)": the store was idle, and beta's operator went looking for a fault that was not there.
    The refusal says what holds the slots; once the streams end, the delete is done. (The streams are two tenants':
    one tenant holds all the slots but one, probe 53.)"""
    made, ring = key_ring(acme=dict(tenant="acme", role="write"), beta=dict(tenant="beta", role="write"),
                          gamma=dict(tenant="gamma", role="write"))
    server, slow = _serve(tmp_path, ring, slow_tenant="nobody", max_workers=4, write_slots=2)
    channel = grpc.insecure_channel(server.address)
    stub = pb2_grpc.TrajSearchStub(channel)
    more, sent = threading.Event(), threading.Semaphore(0)

    def batches(run_id: str, tenant: str):
        run = make_run(run_id, tenant=tenant)
        yield pb2.IngestBatch(records=[pb2.TrajectoryRecord(json=run.model_dump_json(), source="d")])
        sent.release()
        more.wait(600)

    streams = [stub.Ingest.future(batches(f"new{n}", name), metadata=(("authorization", f"Bearer {made[name]}"),))
               for n, name in enumerate(("acme", "gamma"))]
    try:
        for _ in streams:
            assert sent.acquire(timeout=600)
        # (a batch sent is not yet a slot taken: the server reads it once its handler holds the slot)
        _eventually(lambda: server.service._writes == 2, "both streams hold their slots")
        with Client(server.address, made["beta"], timeout=600) as beta:
            with pytest.raises(Unavailable) as refused:
                beta.delete("b1")
            assert "an Ingest stream holds its slot" in str(refused.value), refused.value  # (not whose: RSV4 of 53)
            assert "slow trace store" not in str(refused.value)
            more.set()
            assert [s.result(600).ingested for s in streams] == [1, 1]
            assert beta.delete("b1") is True
    finally:
        more.set()
        channel.close()
        server.stop(grace=2)


def test_idle_connections_to_the_pages_over_tls_leave_the_process_its_files(tmp_path) -> None:
    """The same flood with the pages on TLS (``serve --tls-cert/--tls-key --http``): asyncio handed a connection to
    the pages only once its TLS handshake was done, so 400 connections that never sent a hello were counted nowhere,
    took every descriptor (each held for asyncio's 60 s handshake bound), and gRPC failed every tenant's call. The
    pages count a connection from its accept: gRPC serves over TLS, and so do the pages."""
    import ssl

    from test_service import _self_signed

    cert, key = _self_signed(tmp_path)
    served = _served_with_few_files(tmp_path, "--tls-cert", str(cert), "--tls-key", str(key))
    grpc_address, web_address, env = next(served)
    try:
        flood = _flood(web_address, 400)
        try:
            time.sleep(1)  # (the server accepts them all, closing what is past its bound)
            with Client(grpc_address, env["TRAJSEARCH_API_KEY"], timeout=600, root_certificates=cert) as client:
                assert len(client.search("flight not available", k=2)) == 2
            host, port = web_address.rsplit(":", 1)
            conn = http.client.HTTPSConnection(host, int(port), timeout=600,
                                               context=ssl.create_default_context(cafile=str(cert)))
            conn.request("GET", "/signin")
            assert conn.getresponse().status == 200
            conn.close()
        finally:
            for sock in flood:
                sock.close()
    finally:
        served.close()
