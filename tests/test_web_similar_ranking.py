"""The similar runs beside a run say the number they are ranked by, as ``trajsearch similar --id`` prints it.

They were ranked by the fused score and showed the cosine of their best row alone, unnamed: over the real runs of
``../shared/data`` a run page listed a run above one with a higher number on 37 of 40 pages. The store is the bundled
sample's real runs in real Milvus Lite with the fast test embedder; the pages are served on 127.0.0.1 and read over
HTTP.
"""

from __future__ import annotations

import html
import http.client
import re

import pytest

from web_support import BROKEN, build_store, make_keys, served


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    ts = build_store(tmp_path_factory.mktemp("web-similar-ranking"))
    keys = make_keys()
    with served(ts, keys.ring, keys.demo) as (web, cookie):
        yield web, cookie
    ts.close()


def _page(site, path: str) -> str:
    web, cookie = site
    host, port = web.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=600)
    conn.request("GET", path, headers={"Cookie": cookie})
    reply = conn.getresponse()
    body = reply.read().decode()
    assert reply.status == 200, body[:500]
    return body


def test_the_similar_runs_show_the_score_they_are_ranked_by_in_order(site) -> None:
    aside = re.search(r'(?s)<aside class="similar".*?</aside>', _page(site, f"/runs/{BROKEN}")).group(0)
    items = re.findall(r"(?s)<li>.*?</li>", aside)
    scores = [float(s) for s in re.findall(r"score (\d+\.\d+) · cosine", aside)]
    assert len(items) >= 2 and len(scores) == len(items), aside
    assert scores == sorted(scores, reverse=True), scores
    assert "Ranked by score, as trajsearch similar --id ranks them" in html.unescape(aside)


def test_the_compare_menu_names_both_numbers(site) -> None:
    page = html.unescape(_page(site, f"/compare/{BROKEN}"))
    assert re.search(r"<option [^>]*>[^<]+ \(score \d\.\d{3}, cosine \d\.\d\d\)</option>", page), page[:2000]
