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
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request("GET", target)
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def _eventually(predicate, what: str, timeout: float = 60) -> None:
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
            idle.append(socket.create_connection((host, int(port)), timeout=60))
        for _ in range(20):  # answered once, kept alive
            conn = http.client.HTTPConnection(host, int(port), timeout=60)
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
            sock = socket.create_connection((host, int(port)), timeout=60)
            sock.sendall(f"POST /signin HTTP/1.1\r\nHost: {web.address}\r\nContent-Type: application/"
                         "x-www-form-urlencoded\r\nContent-Length: 100\r\n\r\nkey=".encode())
            posting.append(sock)
        _eventually(lambda: web.config.app.in_progress == 3, "the three posts were in progress")
        host_, port_ = web.address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host_, int(port_), timeout=60)
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
        with socket.create_connection((host, int(port)), timeout=60) as sock:
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
