"""The engineer's pages on the bundled sample's real runs (``trajsearch/samples``: tau-bench gpt-4o airline runs
of 2024-05, mini-swe-agent deepseek runs of 2026-04): the compare page's first divergence for single-tool runs
(probe p42 D2) and the failure-modes page's default period (probe p42 D3).

Real Milvus Lite in a temp dir (``web_support.build_store``), the app over loopback as the other web tests use it.
"""

from __future__ import annotations

import html
import re

import pytest
from starlette.testclient import TestClient

from trajsearch.web import WebConfig, create_app
from trajsearch.web.app import LOOPBACK_HOSTS
from trajsearch.web.session import OneTimeTokens

from web_support import build_store, csrf_of, make_keys

#: Two mini-swe-agent runs of the same task, every step of each a ``bash`` call.
BROKEN = "deepseek_reasoner_dev.pvlib__pvlib-python-1606"
SUCCESS = "deepseek_chat_dev.pvlib__pvlib-python-1606"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    ts = build_store(tmp_path_factory.mktemp("web-users"))
    keys = make_keys()
    app = create_app(ts, keys.ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS), one_time=OneTimeTokens())
    client = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
    page = client.get("/signin")
    assert client.post("/signin", data={"key": keys.demo, "csrf": csrf_of(page.text), "next": "/"}).status_code == 303
    yield client
    ts.close()


def _text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", fragment)).split())


def test_the_first_divergence_of_single_tool_runs_names_what_the_steps_do(demo) -> None:
    """Bug: aligned on the tool name, two all-``bash`` runs were two runs of one token; the page said "the
    successful run does bash (step 4), which the broken run does not do at this point" of a broken run
    whose every step is bash. Aligned on what the commands do, the runs part at their first step: the
    broken run lists /testbed where the successful run finds the Python files."""
    page = demo.get(f"/compare/{BROKEN}", params={"with": SUCCESS}).text
    summary = _text(re.search(r'<p class="divergence-summary" role="status">(.*?)</p>', page, re.S).group(1))
    assert "<code>bash</code>" not in page and " bash " not in summary
    assert "the broken run does ls -la /testbed (step 0)" in summary, summary
    assert 'where the successful run does find . -type f -name "*.py"' in summary, summary


def test_the_tau_bench_divergence_still_names_the_call(demo) -> None:
    page = demo.get("/compare/tau-gpt-4o-airline-13-t0").text
    summary = _text(re.search(r'<p class="divergence-summary" role="status">(.*?)</p>', page, re.S).group(1))
    assert "the successful run does update_reservation_flights (step 5)" in summary, summary


def test_the_failure_modes_page_opens_on_all_time(demo) -> None:
    """Bug: the page opened on the last 7 days and said "No failed runs in this period." for a tenant whose
    failures are all older (the sample's, like the probe's 129 SWE failures ingested from last month's runs);
    ``trajsearch failures`` defaults to all time. The page now opens as the command does."""
    page = demo.get("/failures").text
    assert "No failed runs" not in page
    assert re.search(r'<option value=""\s+selected>all time</option>', page)
    assert re.findall(r'<li class="mode">', page)
    counted = _text(re.search(r'<p class="summary">(.*?)</p>', page, re.S).group(1))
    assert re.match(r"[1-9]\d* failed runs", counted), counted
    week = demo.get("/failures", params={"period": "7d"}).text  # a period with none says so, and links to all time
    assert "No failed runs in this period" in week and 'href="/failures?period=&amp;env="' in week
