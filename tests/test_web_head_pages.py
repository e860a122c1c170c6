"""HEAD of the run, compare and one-time sign-in pages on a real server on loopback: the status and headers the GET
would give, with none of its work. Starlette answers HEAD by running the GET's endpoint: a HEAD of a run page read
its trace, of a compare page read two and searched for similar runs, and of a one-time sign-in link used the link
up, so the person it was printed for could no longer sign in with it (a chat app's preview, a link checker)."""

from __future__ import annotations

import http.client
from pathlib import Path

from web_support import build_store, make_keys, served


def _ask(web, method: str, path: str, cookie: str | None = None) -> tuple[int, dict[str, str], bytes]:
    host, port = web.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        conn.request(method, path, headers={"cookie": cookie} if cookie else {})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()


def test_head_of_run_and_compare_pages_looks_the_runs_up_and_reads_no_trace(tmp_path: Path) -> None:
    keys = make_keys()
    ts = build_store(tmp_path)
    reads: list[str] = []
    searches: list[str] = []
    get, search_filtered = ts.traces.get, ts.search_filtered

    def counted_get(uri, *args, **kwargs):  # the trace store's one read the pages use: counted, not changed
        reads.append(uri)
        return get(uri, *args, **kwargs)

    def counted_search(text, *args, **kwargs):
        searches.append(text)
        return search_filtered(text, *args, **kwargs)

    ts.traces.get, ts.search_filtered = counted_get, counted_search
    first, second = "tau-gpt-4o-airline-1-t0", "tau-gpt-4o-airline-1-t1"
    try:
        with served(ts, keys.ring, keys.demo) as (web, cookie):
            for path in (f"/runs/{first}", f"/runs/{first}?format=json", f"/compare/{first}",
                         f"/compare/{first}?with={second}"):
                status, headers, body = _ask(web, "HEAD", path, cookie)
                assert (status, body, reads, searches) == (200, b"", [], []), (path, headers)
                got, got_headers, page = _ask(web, "GET", path, cookie)
                assert got == 200 and page and reads, path  # the GET does read
                assert headers["content-type"] == got_headers["content-type"], path
                assert headers.get("content-disposition") == got_headers.get("content-disposition"), path
                assert "content-security-policy" in headers and "content-length" not in headers, path
                reads.clear()
                searches.clear()
            for path in ("/runs/no-such-run", f"/compare/{first}?with=no-such-run", "/compare/no-such-run"):
                assert _ask(web, "HEAD", path, cookie)[0] == 404 and reads == [], path
                assert _ask(web, "GET", path, cookie)[0] == 404, path
                reads.clear()
            signed_out = f"/runs/{first}"
            assert _ask(web, "HEAD", signed_out)[0] == _ask(web, "GET", signed_out)[0] == 303
    finally:
        ts.close()


def test_head_of_a_one_time_sign_in_link_does_not_use_it_up(tmp_path: Path) -> None:
    from trajsearch.service.observe import LOOPBACK_HOSTS
    from trajsearch.web.app import WebConfig, create_app
    from trajsearch.web.server import WebServer
    from trajsearch.web.session import OneTimeTokens

    keys = make_keys()
    ts = build_store(tmp_path)
    tokens = OneTimeTokens()
    web = WebServer(create_app(ts, keys.ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS), one_time=tokens),
                    "127.0.0.1:0").start()
    try:
        link = "/signin/once/" + tokens.issue(keys.ring.authenticate(keys.demo))
        status, headers, body = _ask(web, "HEAD", link)
        assert (status, headers.get("location"), body) == (303, "/", b"") and "set-cookie" not in headers
        status, headers, _ = _ask(web, "GET", link)  # still signs in, once
        assert status == 303 and headers["location"] == "/" and "set-cookie" in headers
        assert _ask(web, "HEAD", link)[0] == _ask(web, "GET", link)[0] == 403  # used: refused alike
    finally:
        web.stop()
        ts.close()
