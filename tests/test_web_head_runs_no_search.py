"""A signed-in HEAD of a search or ``/failures`` URL is answered as the GET would be, with no search run."""

from __future__ import annotations

from pathlib import Path

from web_support import ask


def test_a_head_of_a_search_url_checks_the_key_and_arguments_and_searches_nothing(tmp_path: Path) -> None:
    """Starlette answers HEAD by running the GET's endpoint: a signed-in HEAD of a search URL (a link checker, a
    chat app's preview) ran the whole search, for no body sent. It is answered as the GET would be, status and
    headers, with no search run: the sign-in and the arguments are still checked."""
    from urllib.parse import quote

    from web_support import SAMPLE_ERROR, build_store, make_keys, served

    keys = make_keys()
    ts = build_store(tmp_path)
    searches: list[str] = []
    search_filtered = ts.search_filtered

    def counted(text: str, *args, **kwargs):  # the store's one search entry the page uses: counted, not changed
        searches.append(text)
        return search_filtered(text, *args, **kwargs)

    ts.search_filtered = counted
    analysed: list[object] = []  # the failure analysis reads the store's rows (its first public verb)
    rows = ts.rows

    def counted_rows(*args, **kwargs):
        analysed.append(args)
        return rows(*args, **kwargs)

    ts.rows = counted_rows
    try:
        with served(ts, keys.ring, keys.demo) as (web, cookie):
            url = "/?q=" + quote(SAMPLE_ERROR)
            status, headers, body = ask(web, "HEAD", url, cookie)
            assert (status, body, searches) == (200, b"", []), headers
            assert headers["content-type"].startswith("text/html") and "content-security-policy" in headers
            got, _, page = ask(web, "GET", url, cookie)
            assert got == 200 and searches == [SAMPLE_ERROR] and page  # the GET does search
            searches.clear()
            assert ask(web, "HEAD", "/?q=x&mode=bogus", cookie)[0] == ask(web, "GET", "/?q=x&mode=bogus", cookie)[0] \
                == 400
            signed_out = ask(web, "HEAD", url, None)
            assert signed_out[0] == ask(web, "GET", url, None)[0] != 200
            assert ask(web, "HEAD", "/failures?env=" + "x" * 1000, cookie)[0] == 400
            analysed.clear()
            status, headers, body = ask(web, "HEAD", "/failures", cookie)
            assert (status, body, analysed) == (200, b"", []), headers
            assert headers["content-type"].startswith("text/html")
            assert ask(web, "GET", "/failures", cookie)[0] == 200 and analysed  # the GET does analyse
            assert searches == []
    finally:
        ts.close()
