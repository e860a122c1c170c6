"""A metrics scraper that drops its connection mid-request (its timeout, a reset) is no server thread crashing:
the ``--metrics`` listener logged it as "thread crashed" at ERROR, an alert for a client's hang-up. Now a debug
record; a real crash of a request thread keeps its ERROR record."""

from __future__ import annotations

import logging
import socket
import struct
import time

import pytest

from trajsearch.service.observe import LOGGER, Metrics, start_metrics_http


@pytest.fixture
def records():
    said: list[logging.LogRecord] = []

    class Kept(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record)

    logger, handler = logging.getLogger(LOGGER), Kept(logging.DEBUG)
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    yield said
    logger.removeHandler(handler)
    logger.setLevel(level)


def _reset(port: int, request: bytes) -> None:
    """Connect, send ``request`` (maybe nothing), and close with a reset (SO_LINGER 0), as a killed scraper's kernel
    does."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.sendall(request)


def _settled(server_port: int) -> None:
    """Until the server has answered a later, whole request (the dropped ones' threads have been started)."""
    with socket.create_connection(("127.0.0.1", server_port), timeout=600) as s:
        s.sendall(b"GET /metrics.json HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        while s.recv(65536):
            pass


def _logged(records: list[logging.LogRecord], *messages: str) -> list[logging.LogRecord]:
    """The records saying one of ``messages``, waited for: the request threads are daemons no close joins, and a
    loaded machine runs them late (a fixed sleep before the assertions could miss them). 600 s: a bound for a hang,
    not a speed target."""
    deadline = time.monotonic() + 600
    while not (said := [r for r in records if r.getMessage() in messages]):
        assert time.monotonic() < deadline, f"nothing logged {messages}"
        time.sleep(0.05)
    return said


def test_a_scraper_gone_mid_request_is_a_debug_record_not_a_crash(records):
    server = start_metrics_http(Metrics(), "127.0.0.1", 0)
    try:
        for request in (b"", b"GET /metr", b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):
            _reset(server.server_port, request)
        _settled(server.server_port)
        # a reset seen only as the thread reads or writes
        _logged(records, "metrics client disconnected", "thread crashed")
    finally:
        server.shutdown()
        server.server_close()
    assert not [r for r in records if r.levelno >= logging.WARNING], [(r.getMessage(), r.__dict__.get("error"))
                                                                       for r in records]
    gone = [r for r in records if r.getMessage() == "metrics client disconnected"]
    assert gone and all(r.levelno == logging.DEBUG for r in gone)
    assert all("Connection" in r.__dict__["error"] or "Pipe" in r.__dict__["error"] for r in gone)


def test_a_request_thread_that_crashes_is_still_an_error(records, monkeypatch):
    server = start_metrics_http(Metrics(), "127.0.0.1", 0)
    monkeypatch.setattr(server, "finish_request", lambda *a: 1 / 0)  # a fault of the server's own, not the client's
    try:
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=600) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
            s.recv(1)
        _logged(records, "thread crashed")
    finally:
        server.shutdown()
        server.server_close()
    assert [(r.levelno, r.getMessage()) for r in records] == [(logging.ERROR, "thread crashed")]
