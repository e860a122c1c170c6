"""Probe 53 (SV4): the service's leftovers: file descriptors, logs, tenants' shares, a hostile caller.

Real gRPC servers (``ServiceServer``) and real uvicorn pages on 127.0.0.1, real Milvus Lite and file traces with the
fast test embedder, reached by real clients over loopback; ``trajsearch serve`` run as a process where its file
limit matters. No timing asserts: status codes, counts and generous bounds.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import subprocess
import sys
import time

import grpc
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.client import Client
from trajsearch.service.server import TLS, ServiceServer

from conftest import make_run
from service_support import HeldIngest, key_ring
from test_service import _self_signed


@pytest.fixture(scope="module")
def tenants():
    return key_ring(acme=dict(tenant="acme", role="write"), beta=dict(tenant="beta", role="write"))


def _store(tmp_path) -> TrajSearch:
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder())
    ts.add([make_run("a1"), make_run("b1", tenant="beta")])
    return ts


# -- 3. mutual TLS asked for is asked of the pages too -------------------------------------------------


def test_pages_require_the_client_certificate_mutual_tls_asks_for(tmp_path, tenants) -> None:
    """``serve --tls-client-ca`` (mutual TLS: only machines holding a certificate of that CA may connect) was
    enforced on gRPC and not on ``--http``: the pages' TLS asked for no certificate, so any machine that could
    reach the port got the sign-in page and could try keys. Now a connection without a client certificate is
    refused in the handshake, and one with a certificate of the CA is served."""
    made, ring = tenants
    cert, key = _self_signed(tmp_path)  # (a CA certificate: the server's, and the one the client presents)
    server = ServiceServer(_store(tmp_path), ring, address="127.0.0.1:0", tls=TLS(cert, key, client_ca=cert),
                           http_address="127.0.0.1:0").start()
    host, port = server.web.address.rsplit(":", 1)
    try:
        anonymous = ssl.create_default_context(cafile=str(cert))
        with pytest.raises((ssl.SSLError, ConnectionError)):  # (the alert, or the reset after it)
            conn = http.client.HTTPSConnection(host, int(port), timeout=600, context=anonymous)
            try:
                conn.request("GET", "/signin")
                conn.getresponse().read()
            finally:
                conn.close()
        holder = ssl.create_default_context(cafile=str(cert))
        holder.load_cert_chain(str(cert), str(key))
        conn = http.client.HTTPSConnection(host, int(port), timeout=600, context=holder)
        try:
            conn.request("GET", "/signin")
            assert conn.getresponse().status == 200
        finally:
            conn.close()
        with Client(server.address, made["acme"], timeout=600, root_certificates=cert) as plain:  # (gRPC's own
            with pytest.raises(Exception):  # refusal, as before: no client certificate)
                plain.whoami()
    finally:
        server.stop(grace=1)


# -- 1. idle connections to the gRPC port ----------------------------------------------------------------


def test_idle_connections_to_grpc_leave_the_process_its_files(tmp_path) -> None:
    """A client holding 400 raw TCP connections to the gRPC port that never speak HTTP/2 (a port scanner, a load
    balancer's TCP checks left open, a hostile client) took every file descriptor of a process allowed 256: grpcio
    bounds no connections and holds one that sends nothing for its handshake timeout (120 s), so every tenant's call
    failed "failed to connect to all addresses", and the index and trace files could not be opened. The gRPC port now
    keeps at most a quarter of the process's files (the rest closed as accepted) and closes a connection that has not
    spoken HTTP/2 within 10 s: during the flood an agent's open channel and the pages are answered, and once the idle
    connections are closed a new client is too."""
    from test_probe52_service import _flood, _search_over_grpc, _served_with_few_files

    served = _served_with_few_files(tmp_path)
    grpc_address, web_address, env = next(served)
    try:
        with Client(grpc_address, env["TRAJSEARCH_API_KEY"], timeout=600) as agent:
            assert len(agent.search("flight not available", k=2)) == 2  # (its connection made before the flood)
            flood = _flood(grpc_address, 400)
            try:
                assert len(flood) == 400
                closed = _closed(flood[-100:], 30)  # (serve raised its limit: the handshake's 10 s closes them;
                assert closed >= 90, closed  # the cap itself: test_the_grpc_port_refuses_past_its_cap...)
                assert len(agent.search("flight not available", k=2)) == 2
                host, port = web_address.rsplit(":", 1)
                conn = http.client.HTTPConnection(host, int(port), timeout=600)
                conn.request("GET", "/signin")
                assert conn.getresponse().status == 200
                conn.close()
                assert _closed(flood[:64], 60) == 64  # silent past the handshake's 10 s (grpcio's: 120 s)
                found = _search_over_grpc(env)
                assert found.returncode == 0, found.stdout + found.stderr
                assert "flight" in found.stdout
            finally:
                for sock in flood:
                    sock.close()
    finally:
        served.close()


def _closed(socks: list[socket.socket], within: float) -> int:
    """How many of ``socks`` the server closed within ``within`` seconds, all watched at once (what it sent first,
    HTTP/2's settings, read and dropped)."""
    import selectors

    open_ = set(socks)
    end = time.monotonic() + within
    with selectors.DefaultSelector() as watch:
        for sock in socks:
            sock.setblocking(False)
            watch.register(sock, selectors.EVENT_READ)
        while open_ and (left := end - time.monotonic()) > 0:
            for ready, _ in watch.select(left):
                sock = ready.fileobj
                try:
                    if sock.recv(65536):
                        continue
                except BlockingIOError:
                    continue
                except ConnectionResetError:
                    pass
                watch.unregister(sock)
                open_.discard(sock)
    return len(socks) - len(open_)


def _sockets() -> int:
    """Sockets this process holds open (the server's accepted connections among them)."""
    import os

    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
        except OSError:  # (closed meanwhile)
            pass
    return count


# -- 5. a tenant's share of the write slots ----------------------------------------------------------------


def test_one_tenants_ingest_streams_leave_another_tenant_a_write_slot(tmp_path, tenants) -> None:
    """Two write slots: acme's two batch indexers (each stream holds its slot until it ends: hours for a big dump)
    took both, and beta's delete was refused UNAVAILABLE until they ended, told how many streams (other tenants')
    held them. A tenant now holds all the slots but one: acme's second stream is refused, saying it is acme's own
    writes that are at the most, and beta's delete is done while acme's stream is open."""
    made, ring = tenants
    server = ServiceServer(_store(tmp_path), ring, address="127.0.0.1:0", max_workers=4, write_slots=2).start()
    acme_streams = HeldIngest(server.address, made["acme"])
    try:
        first = acme_streams.open("new0")
        assert acme_streams.sent.acquire(timeout=600)
        end = time.monotonic() + 600  # (a batch sent is not yet a slot taken: the handler takes it, then reads; a
        while server.service._writes < 1 and time.monotonic() < end:  # second stream's handler could start first)
            time.sleep(0.02)
        assert server.service._writes == 1 and not first.done(), "acme's first stream holds no write slot"
        second = acme_streams.open("new1")
        end = time.monotonic() + 600
        while not second.done() and server.service._writes < 2 and time.monotonic() < end:
            time.sleep(0.02)
        assert second.done(), "acme's second stream took the last write slot"
        assert second.code() == grpc.StatusCode.UNAVAILABLE, second.details()
        assert "this key's tenant has 1 write in progress" in second.details()
        with Client(server.address, made["beta"], timeout=600) as beta:
            assert beta.delete("b1") is True  # (acme's stream still open)
        assert not first.done()
        acme_streams.more.set()
        assert first.result(600).ingested == 1
        with Client(server.address, made["acme"], timeout=600) as acme:  # its place is free again
            assert acme.delete("new0") is True
    finally:
        acme_streams.close()
        server.stop(grace=2)


# -- 4. a client leaving mid-request -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def pages_store(tmp_path_factory):
    from web_support import build_store

    ts = build_store(tmp_path_factory.mktemp("probe53"))
    yield ts
    ts.close()


def test_a_client_leaving_mid_post_is_one_quiet_log_line(pages_store, caplog) -> None:
    """A sign-in form whose client left before its body was whole (a tab closed, a network dropped) logged two
    tracebacks at ERROR for each request, the app's "web request failed" and uvicorn's "Exception in ASGI
    application": an operator's alerting on errors fired for what browsers do every day. Now it is the request's
    one log line, at INFO, status 499 (client closed request)."""
    import logging

    from test_probe52_service import _eventually, _pages
    from web_support import make_keys

    web = _pages(pages_store, make_keys())
    host, port = web.address.rsplit(":", 1)
    caplog.set_level(logging.INFO)
    try:
        for _ in range(2):
            with socket.create_connection((host, int(port)), timeout=600) as sock:
                sock.sendall(f"POST /signin HTTP/1.1\r\nHost: {web.address}\r\nContent-Type: application/"
                             "x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nkey=ts_".encode())
                _eventually(lambda: web.config.app.in_progress == 1, "the post was in progress")
            _eventually(lambda: web.config.app.in_progress == 0, "the post ended with its connection")
        _eventually(lambda: sum(r.getMessage() == "http" for r in caplog.records) == 2, "two request lines")
        errors = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert not errors, [(r.name, r.getMessage()) for r in errors]
        lines = [r for r in caplog.records if r.getMessage() == "http"]
        assert [(r.path, r.status) for r in lines] == [("/signin", 499), ("/signin", 499)]
        assert not any(r.exc_info for r in caplog.records)
    finally:
        web.stop()


def test_serve_refuses_a_client_ca_without_a_certificate(tmp_path) -> None:
    """``serve --tls-client-ca ca.pem`` without ``--tls-cert/--tls-key`` was ignored: the server started in plaintext,
    taking any client, while its operator believed only holders of the CA's certificates could connect. It fails at
    once saying what is missing."""
    import subprocess
    import sys

    from trajsearch.service.auth import key_entry, new_key

    from process_support import cli_env

    cert, _ = _self_signed(tmp_path)
    entry = key_entry(new_key(), tenant="demo", role="read")
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[[keys]]\nid = "{entry["id"]}"\nsha256 = "{entry["sha256"]}"\ntenant = "demo"\nrole = "read"\n')
    serve = subprocess.Popen([sys.executable, "-m", "trajsearch.cli", "serve", "--tls-client-ca", str(cert),
                              "--keys", str(keys),
                              "--uri", str(tmp_path / "m.db"), "--traces", str(tmp_path / "t"),
                              "--address", "127.0.0.1:0"],
                             env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             text=True, cwd=tmp_path)
    try:
        said = ""
        for line in serve.stderr:  # (until it fails, or serves)
            said += line
            if "error:" in line or "serving on" in line:
                break
        assert "error: --tls-client-ca needs --tls-cert and --tls-key" in said, said
        assert serve.wait(600) == 2
    finally:
        if serve.poll() is None:
            serve.terminate()
            serve.wait(600)


# -- review RSV4 of probe 53 -----------------------------------------------------------------------------------


def test_a_sole_tenant_keeps_every_write_slot(tmp_path) -> None:
    """A deployment of one team (one tenant in the key file) lost a write slot to tenants that do not exist: with
    two slots its second batch indexer was refused "1 writes in progress ... one is kept for other tenants". A slot
    is kept back only while another tenant has a key that may write: here both streams are taken."""
    made, ring = key_ring(acme=dict(tenant="acme", role="write"), reader=dict(tenant="other", role="read"))
    server = ServiceServer(_store(tmp_path), ring, address="127.0.0.1:0", max_workers=4, write_slots=2).start()
    acme_streams = HeldIngest(server.address, made["acme"])
    try:
        first, second = acme_streams.opened("new0"), acme_streams.opened("new1")
        assert not second.done(), second.details()
        assert not first.done(), first.details()
        acme_streams.more.set()
        assert first.result(600).ingested == 1 and second.result(600).ingested == 1
    finally:
        acme_streams.close()
        server.stop(grace=2)


def test_a_full_server_names_only_the_callers_own_writes(tmp_path) -> None:
    """Every write slot taken by two other tenants' streams: the third tenant's delete was refused naming them ("2
    open Ingest streams"), what other tenants do at this server told to any key. It now says none is the caller's."""
    made, ring = key_ring(acme=dict(tenant="acme", role="write"), beta=dict(tenant="beta", role="write"),
                          gamma=dict(tenant="gamma", role="write"))
    server = ServiceServer(_store(tmp_path), ring, address="127.0.0.1:0", max_workers=4, write_slots=2).start()
    acme_streams, beta_streams = HeldIngest(server.address, made["acme"]), HeldIngest(server.address, made["beta"])
    try:
        streams = [acme_streams.opened("new0"), beta_streams.opened("new1")]
        end = time.monotonic() + 600  # (a batch sent is not yet a slot taken: the handler takes it, then reads)
        while server.service._writes < 2 and time.monotonic() < end:
            time.sleep(0.02)
        assert not any(s.done() for s in streams)
        with Client(server.address, made["gamma"], timeout=600) as gamma:
            with pytest.raises(Exception) as refused:
                gamma.delete("a1")
        said = str(refused.value)
        assert "2 open Ingest streams" not in said, said
        assert "none of them this key's tenant's" in said, said
    finally:
        acme_streams.close()
        beta_streams.close()
        server.stop(grace=2)


def test_serve_raises_its_file_limit_and_names_its_connection_cap(tmp_path) -> None:
    """Under systemd's soft limit of 1024 files the gRPC port kept 256 connections: the 257th agent was closed
    unsaid. ``serve`` now raises its soft limit to the hard one (as nginx's worker_rlimit_nofile does) and says the
    cap it keeps in its "serving" line."""
    import re
    import resource
    import subprocess
    import sys

    from trajsearch.service.auth import key_entry, new_key

    from process_support import cli_env, launched

    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip("the hard file limit is no higher than the soft one the test sets")
    entry = key_entry(new_key(), tenant="demo", role="read")
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[[keys]]\nid = "{entry["id"]}"\nsha256 = "{entry["sha256"]}"\ntenant = "demo"\nrole = "read"\n')
    serve = subprocess.Popen(launched([sys.executable, "-m", "trajsearch.cli", "serve", "--keys", str(keys),
                                       "--uri", str(tmp_path / "m.db"), "--traces", str(tmp_path / "t"),
                                       "--address", "127.0.0.1:0", "--grace", "1"], nofile=256),
                             env=cli_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             cwd=tmp_path)
    try:
        said = ""
        for line in serve.stderr:
            said += line
            if "serving on" in line or "error:" in line:
                break
        limits = open(f"/proc/{serve.pid}/limits").read()
        soft = int(re.search(r"Max open files\s+(\d+|unlimited)", limits).group(1).replace("unlimited", "0") or 0)
        assert soft != 256, limits
        cap = min(4096, soft // 4) if soft else 4096
        assert f"at most {cap} gRPC connections" in said, said
    finally:
        serve.terminate()
        serve.wait(600)


def test_the_grpc_port_refuses_past_its_cap_and_the_client_says_so(tmp_path, tenants, monkeypatch) -> None:
    """The cap counted on a server in this process, the handshake's time long (60 s) so that only the cap closes
    anything: of 100 connections that never speak HTTP/2 the server keeps at most its bound (the rest closed as
    accepted: counted right after the flood), an agent's channel opened before them is answered, and a new client
    refused at the cap is told the server may be at its connection limit, not only that it may speak TLS. (Review
    RSV4: the old test passed with the cap removed, the handshake's 1 s closing every socket before it counted.)"""
    from trajsearch.service import server as service_server
    from trajsearch.service.protos import pb2, pb2_grpc

    monkeypatch.setattr(service_server, "GRPC_HANDSHAKE_S", 60.0, raising=False)
    monkeypatch.setattr(service_server, "MAX_GRPC_CONNECTIONS", 20, raising=False)
    made, ring = tenants
    server = ServiceServer(_store(tmp_path), ring, address="127.0.0.1:0").start()
    host, port = server.address.rsplit(":", 1)
    flood: list[socket.socket] = []
    # the agent's channel on a subchannel of its own: a Client made later would otherwise share its connection
    channel = grpc.insecure_channel(server.address, options=[("grpc.use_local_subchannel_pool", 1)])
    agent = pb2_grpc.TrajSearchStub(channel)
    metadata = (("authorization", f"Bearer {made['acme']}"),)
    try:
        assert agent.WhoAmI(pb2.WhoAmIRequest(), metadata=metadata, timeout=600).tenant == "acme"
        before = _sockets()
        flood = [socket.create_connection((host, int(port)), timeout=600) for _ in range(100)]
        closed_at_once = _closed(flood[-70:], 600)  # (it returns once all are closed)
        held = _sockets() - before - len(flood)  # (this process's own ends of the flood not counted)
        assert held <= 20, held
        assert closed_at_once == 70, closed_at_once
        assert agent.WhoAmI(pb2.WhoAmIRequest(), metadata=metadata, timeout=600).tenant == "acme"
        with Client(server.address, made["beta"], timeout=600) as late:
            with pytest.raises(Exception) as refused:
                late.whoami()
        assert "connection limit" in str(refused.value), refused.value
    finally:
        channel.close()
        for sock in flood:
            sock.close()
        server.stop(grace=1)


def test_a_python_client_is_quiet_about_grpcs_idle_goaway() -> None:
    """Every program using the Python client (an agent's runtime, not the CLI) printed grpc's INFO line "Got goaway
    ... connection idle" on stderr each time the server closed its idle connection. The client module sets
    GRPC_VERBOSITY=ERROR unless its user set it, as the CLI does."""
    import subprocess
    import sys

    from process_support import cli_env

    probe = "import os, trajsearch.service.client; print(os.environ.get('GRPC_VERBOSITY'))"
    env = {k: v for k, v in cli_env().items() if k != "GRPC_VERBOSITY"}
    assert subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          timeout=600).stdout.strip() == "ERROR"
    env["GRPC_VERBOSITY"] = "DEBUG"
    assert subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True,
                          timeout=600).stdout.strip() == "DEBUG"


def test_a_body_too_slow_is_one_log_line_saying_408(pages_store, caplog, monkeypatch) -> None:
    """A sign-in form whose body stopped coming (a client still there, waiting) was answered 408 and logged twice:
    the server's "web request refused 408" and the request's own line saying 499 (client closed request), which it
    had not. Now it is the request's one line, saying the 408 it was sent."""
    import logging

    from test_probe52_service import _eventually, _pages
    from trajsearch.web import server as web_server
    from web_support import make_keys

    monkeypatch.setattr(web_server, "BODY_TIMEOUT_S", 1.0)
    web = _pages(pages_store, make_keys())
    host, port = web.address.rsplit(":", 1)
    caplog.set_level(logging.INFO)
    try:
        with socket.create_connection((host, int(port)), timeout=600) as sock:
            sock.sendall(f"POST /signin HTTP/1.1\r\nHost: {web.address}\r\nContent-Type: application/"
                         "x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nkey=ts_".encode())
            assert sock.recv(4096).startswith(b"HTTP/1.1 408 ")
            _eventually(lambda: any(r.getMessage() == "http" for r in caplog.records), "the request's line")
        lines = [(r.getMessage(), getattr(r, "status", None)) for r in caplog.records
                 if r.name.startswith("trajsearch.web")]
        assert lines == [("http", 408)], lines
    finally:
        web.stop()


def test_the_pages_connection_cap_follows_a_file_limit_raised_after_import() -> None:
    """``serve --public-url`` imports the web server before it raises its file limit: the pages' cap, worked out at
    import, stayed a quarter of the old limit while gRPC's followed the new one (review RALL-B)."""
    script = ("import resource\n"
              "import trajsearch.web.server as pages\n"
              "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
              "resource.setrlimit(resource.RLIMIT_NOFILE, (min(512, hard), hard))\n"
              "from trajsearch.service.descriptors import connection_budget\n"
              "print(pages._most_connections(), connection_budget())\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=True)
    cap, budget = out.stdout.split()
    assert cap == budget == "128"
