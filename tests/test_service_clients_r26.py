"""The service's surfaces as their clients meet them on loopback (round 26, SVC3): a web client that leaves before
its answer, and the log a host reads line by line from ``trajsearch mcp`` over stdio.

Real uvicorn on 127.0.0.1 over Milvus Lite in a temp dir with the fast hashing *test* embedder; the clients are raw
sockets and ``trajsearch mcp`` run as a child process.
"""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from test_probe52_service import _eventually
from web_support import build_store, make_keys, served


@pytest.fixture(scope="module")
def pages_store(tmp_path_factory):
    ts = build_store(tmp_path_factory.mktemp("svc3"))
    yield ts
    ts.close()


class HeldEmbedding:
    """The store's query embedding held until ``gate`` is set (a slow model, a busy machine): ``arrived`` is set when
    a search reached it. The real embedding runs once released."""

    def __init__(self, ts) -> None:
        self.ts, self.embed = ts, ts.query_vector
        self.gate, self.arrived = threading.Event(), threading.Event()
        ts.query_vector = self.held

    def held(self, *args, **kwargs):
        self.arrived.set()
        assert self.gate.wait(600), "never released"
        return self.embed(*args, **kwargs)

    def close(self) -> None:
        self.gate.set()
        self.ts.query_vector = self.embed


def test_a_web_client_that_left_before_its_answer_is_logged_499_not_200(pages_store, caplog) -> None:
    """Bug (round 25's list): a search whose client closed its connection while the page was being made (a tab
    closed, a browser's Stop, a script's timeout) was logged "status": 200: uvicorn drops the answer of a client gone
    without a word, and the request's one log line took the status the app handed it. An operator counting what
    users got saw a page nobody received. Now the line says 499 (nginx's "client closed request")."""
    keys = make_keys()
    caplog.set_level(logging.INFO)
    held = HeldEmbedding(pages_store)
    try:
        with served(pages_store, keys.ring, keys.demo) as (web, cookie):
            host, port = web.address.rsplit(":", 1)
            with socket.create_connection((host, int(port)), timeout=600) as sock:
                sock.sendall(f"GET /?q=left+before+its+answer+HAT223 HTTP/1.1\r\nHost: {web.address}\r\n"
                             f"Cookie: {cookie}\r\n\r\n".encode())
                assert held.arrived.wait(600), "the search never reached the index"
            connections = web.server.server_state.connections
            _eventually(lambda: not connections, "the server saw the connection close")
            held.gate.set()
            _eventually(lambda: _lines(caplog, "/"), "the request's log line")
        [line] = _lines(caplog, "/")
        assert line.status == 499, line.status
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    finally:
        held.close()


def _lines(caplog, path: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.getMessage() == "http" and getattr(r, "path", None) == path]


def test_mcp_over_stdio_logs_one_json_record_per_line_even_a_traceback(tmp_path, refusing_address) -> None:
    """Bug (round 25's list): ``trajsearch mcp`` over stdio wrote a record on many lines, where a host reading stderr
    line by line (each line one log entry) expects one: the MCP SDK's ``MCPServer()`` puts a RichHandler on the root
    logger, so an unknown prompt asked by a client was an ERROR with a boxed traceback of ~150 lines at 80 columns,
    and each refused tool call an INFO of nine lines quoting its arguments. Now every line is one JSON record, the
    traceback inside it, and other libraries log only their warnings and errors. Driven by the official MCP python
    SDK client; the server it names is never reached (no call here needs it)."""
    import json
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from process_support import cli_env

    env = cli_env(TRAJSEARCH_API_KEY="ts_unused", COLUMNS="80")
    params = StdioServerParameters(command=sys.executable, args=["-m", "trajsearch.service", "mcp", "--server",
                                                                 refusing_address], env=env)
    errlog = tmp_path / "mcp.err"

    async def session() -> None:
        with errlog.open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                with pytest.raises(Exception, match="Unknown prompt"):
                    await client.get_prompt("no-such-prompt")
                refused = await client.call_tool("search_past_runs", {"query": "x", "tenant": "other"})
                assert refused.is_error and "cannot be changed" in refused.content[0].text

    anyio.run(session)
    lines = errlog.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # (a line of a record on many lines is no JSON)
    assert any(r["logger"] == "trajsearch.mcp" for r in records)  # (the server did not answer at start-up)
    [failed] = [r for r in records if not r["logger"].startswith("trajsearch")]
    assert failed["level"] == "ERROR" and "Unknown prompt: no-such-prompt" in failed["exc_info"]
    assert not any("tenant" in line for line in lines)  # the refused call's INFO (its arguments) is not logged


def test_a_method_a_page_does_not_take_is_answered_405_saying_which_it_does(pages_store) -> None:
    """Bug (curl -X PUT on loopback): a method a page does not take was answered 405 without an ``Allow`` header,
    which RFC 9110 (15.5.6) says a 405 MUST carry: the app's error page replaced Starlette's answer and dropped the
    header it held. A client (or a proxy probing what a page takes) now reads which methods it does."""
    import http.client

    from test_probe52_service import _pages

    web = _pages(pages_store, make_keys())
    host, port = web.address.rsplit(":", 1)
    try:
        for method, path, allowed in (("PUT", "/", {"GET", "HEAD"}), ("DELETE", "/signin", {"GET", "HEAD", "POST"}),
                                      ("OPTIONS", "/", {"GET", "HEAD"})):
            conn = http.client.HTTPConnection(host, int(port), timeout=600)
            try:
                conn.request(method, path)
                reply = conn.getresponse()
                page = reply.read().decode()
            finally:
                conn.close()
            assert reply.status == 405, (method, path, reply.status)
            assert {m.strip() for m in (reply.getheader("allow") or "").split(",")} == allowed, (method, path)
            assert "Method Not Allowed" in page  # (still the pages' own error page)
    finally:
        web.stop()


@pytest.mark.parametrize("query", ["q=%ED%A0%80", "q=error+%E2%82", "q=ok&env=%FF"])
def test_a_query_string_that_is_not_utf8_is_refused_naming_its_parameter(pages_store, query) -> None:
    """Bug (curl on loopback): a search address whose text is not UTF-8 once percent-decoded (a lone surrogate as a
    script encodes it, a multi-byte character cut by a truncated link, a Latin-1 byte) was searched as replacement
    characters ("Search: ���", 200, hits for nothing anyone wrote), where MCP and gRPC refuse such text. A browser's
    form is always UTF-8: such an address is a client's mistake, now answered 400 naming the parameter."""
    import http.client

    keys = make_keys()
    with served(pages_store, keys.ring, keys.demo) as (web, cookie):
        host, port = web.address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=600)
        try:
            conn.request("GET", "/?" + query, headers={"Cookie": cookie})
            reply = conn.getresponse()
            text = reply.read().decode()
        finally:
            conn.close()
    name = query.rsplit("&", 1)[-1].split("=")[0]
    assert reply.status == 400, (reply.status, text[:200])
    assert f"'{name}'" in text and "UTF-8" in text, text


@pytest.mark.parametrize("status, request_head", [
    (400, "GET /?q=error+%E2%82 HTTP/1.1\r\nHost: {address}\r\n"),  # a query that is not UTF-8
    (413, "POST /?q=big HTTP/1.1\r\nHost: {address}\r\nContent-Length: 999999999\r\n"),  # a body too large
    (421, "GET /?q=elsewhere HTTP/1.1\r\nHost: elsewhere.example\r\n"),  # a Host not the pages'
])
def test_a_request_refused_before_the_pages_see_it_has_its_log_line(pages_store, caplog, status,
                                                                   request_head) -> None:
    """Bug (curl on loopback, round 26's 400): a request the pages' guard refused before the app saw it (a query
    that is not UTF-8, a body too large, a Host not the pages') was answered and never logged, where every other
    request has its one line: an operator's count of refused clients, or of a link misdirected by a proxy, was
    none. Each now has its line, with the status the client got."""
    keys = make_keys()
    caplog.set_level(logging.INFO)
    with served(pages_store, keys.ring, keys.demo) as (web, _):
        host, port = web.address.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=600) as sock:
            sock.sendall((request_head.format(address=web.address) + "Connection: close\r\n\r\n").encode())
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:200]
        _eventually(lambda: _lines(caplog, "/"), "the request's log line")
    [line] = _lines(caplog, "/")
    assert (line.status, line.method) == (status, request_head.split()[0])


@pytest.mark.parametrize("path", ["/metrics", "/metrics.json"])
def test_the_metrics_listener_answers_head_as_get_and_refuses_other_methods_saying_which_it_takes(path) -> None:
    """Bug (curl on loopback against ``serve --metrics``): ``HEAD /metrics`` (an uptime check's, ``curl -I``) was
    refused 405, where RFC 9110 (9.1) says a server MUST take HEAD wherever it takes GET, and ``/metrics.json``
    answered any method at all (POST, PUT, FOO: 200). Both now answer GET and HEAD (HEAD without the body) and
    refuse the rest 405 with ``Allow: GET, HEAD``."""
    import http.client

    from trajsearch.service.observe import Metrics, start_metrics_http

    server = start_metrics_http(Metrics(), "127.0.0.1", 0, allowed_hosts=("127.0.0.1",))
    answers = {}
    try:
        for method in ("GET", "HEAD", "POST", "PUT", "FOO"):
            conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=600)
            try:
                conn.request(method, path)
                reply = conn.getresponse()
                answers[method] = (reply.status, reply.getheader("allow"), reply.getheader("content-type"),
                                   reply.read())
            finally:
                conn.close()
    finally:
        server.shutdown()
        server.server_close()
    assert answers["GET"][0] == 200 and answers["GET"][3]
    assert answers["HEAD"][:3] == answers["GET"][:3] and answers["HEAD"][3] == b""
    for method in ("POST", "PUT", "FOO"):
        assert answers[method][:2] == (405, "GET, HEAD"), (method, answers[method])


def test_mcp_over_http_on_a_port_in_use_is_one_line_naming_it(refusing_address) -> None:
    """Bug (``trajsearch mcp --http`` run twice on loopback): the second ended with exit code 3 and uvicorn's six
    lines of its own format ("INFO:     Started server process", "ERROR:    [Errno 98] error while attempting to
    bind...", "INFO:     Application shutdown complete."), where ``serve`` says one line naming the address and
    exits 1. The SDK's ``run("streamable-http")`` configures uvicorn's logging and binds late; the socket is now
    bound first and uvicorn's records go to trajsearch's JSON lines."""
    import subprocess
    import sys

    from process_support import cli_env

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "trajsearch.service", "mcp", "--server", refusing_address,
                                 "--http", "--port", str(port)], env=cli_env(TRAJSEARCH_API_KEY="ts_unused"),
                                capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.splitlines() if not line.startswith("{")]  # (JSON: the server is down)
    assert lines == [f"error: cannot listen on 127.0.0.1:{port}: Address already in use"], result.stderr


def test_mcp_over_http_logs_uvicorns_records_without_terminal_colour_codes(refusing_address, tmp_path) -> None:
    """Bug (``trajsearch mcp --http`` on loopback, started and stopped): uvicorn's "Started server process" and
    "Finished server process" records carried its ``color_message`` extra into the JSON, the message again with a
    terminal's colour codes ("[\\u001b[36m%d\\u001b[0m]"), which a log reader shows as escapes or acts on. Its
    records are the message alone; the one line that is not JSON names the address served."""
    import json
    import signal
    import subprocess
    import sys

    from process_support import cli_env

    err = tmp_path / "mcp.err"
    with err.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "trajsearch.service", "mcp", "--server", refusing_address,
                                 "--http", "--port", "0"], env=cli_env(TRAJSEARCH_API_KEY="ts_unused"),
                                stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            _eventually(lambda: "Application startup complete." in err.read_text(), "uvicorn's start-up", 600)
            proc.send_signal(signal.SIGTERM)
            proc.wait(600)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    lines = err.read_text().splitlines()
    plain = [line for line in lines if not line.startswith("{")]
    assert len(plain) == 1 and plain[0].startswith("trajsearch mcp serving on http://127.0.0.1:"), lines
    records = [json.loads(line) for line in lines if line.startswith("{")]
    said = [r["msg"] for r in records if r["logger"].startswith("uvicorn")]
    assert said[0].startswith("Started server process") and said[-1].startswith("Finished server process"), said
    assert not [r for r in records if "color_message" in r or "\x1b" in json.dumps(r, ensure_ascii=False)], records
