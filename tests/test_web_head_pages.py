"""HEAD of the run, compare and one-time sign-in pages on a real server on loopback: the status and headers the GET
would give, with none of its work. Starlette answers HEAD by running the GET's endpoint: a HEAD of a run page read
its trace, of a compare page read two and searched for similar runs, and of a one-time sign-in link used the link
up, so the person it was printed for could no longer sign in with it (a chat app's preview, a link checker)."""

from __future__ import annotations

from pathlib import Path

from web_support import ask, build_store, make_keys, served


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
                status, headers, body = ask(web, "HEAD", path, cookie)
                assert (status, body, reads, searches) == (200, b"", [], []), (path, headers)
                got, got_headers, page = ask(web, "GET", path, cookie)
                assert got == 200 and page and reads, path  # the GET does read
                assert headers["content-type"] == got_headers["content-type"], path
                assert headers.get("content-disposition") == got_headers.get("content-disposition"), path
                assert "content-security-policy" in headers and "content-length" not in headers, path
                reads.clear()
                searches.clear()
            for path in ("/runs/no-such-run", f"/compare/{first}?with=no-such-run", "/compare/no-such-run"):
                assert ask(web, "HEAD", path, cookie)[0] == 404 and reads == [], path
                assert ask(web, "GET", path, cookie)[0] == 404, path
                reads.clear()
            signed_out = f"/runs/{first}"
            assert ask(web, "HEAD", signed_out)[0] == ask(web, "GET", signed_out)[0] == 303
    finally:
        ts.close()


def test_head_of_a_page_whose_trace_is_gone_is_404_as_its_get(tmp_path: Path) -> None:
    """The run is indexed, its trace deleted (or the pages serve another --traces): the GET says "the trace is
    missing" (404), and so must a HEAD, a link checker's, which had been told 200 for a dead link."""
    keys = make_keys()
    ts = build_store(tmp_path)
    gone, kept = "tau-gpt-4o-airline-1-t0", "tau-gpt-4o-airline-1-t1"
    ts.traces.delete(ts.run(gone, tenant="demo").trace_uri, tenant="demo")
    try:
        with served(ts, keys.ring, keys.demo) as (web, cookie):
            for path in (f"/runs/{gone}", f"/runs/{gone}?format=json", f"/compare/{gone}",
                         f"/compare/{gone}?with={kept}", f"/compare/{kept}?with={gone}"):
                assert ask(web, "HEAD", path, cookie)[0] == ask(web, "GET", path, cookie)[0] == 404, path
            for path in (f"/runs/{kept}", f"/compare/{kept}"):
                assert ask(web, "HEAD", path, cookie)[0] == ask(web, "GET", path, cookie)[0] == 200, path
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
        status, headers, body = ask(web, "HEAD", link)
        assert (status, headers.get("location"), body) == (303, "/", b"") and "set-cookie" not in headers
        status, headers, _ = ask(web, "GET", link)  # still signs in, once
        assert status == 303 and headers["location"] == "/" and "set-cookie" in headers
        assert ask(web, "HEAD", link)[0] == ask(web, "GET", link)[0] == 403  # used: refused alike
    finally:
        web.stop()
        ts.close()
