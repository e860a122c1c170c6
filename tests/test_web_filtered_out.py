"""The search page over loopback, when a filter value matches no run: it says which filter left nothing, as the CLI's
``search`` does, instead of "No runs match inside these filters" alone.

The store is the bundled sample's real runs (tau-bench airline, ``env_version`` ``airline-v1``; mini-swe-agent,
``swe-dev-v1``) in real Milvus Lite, with the fast test embedder (``web_support.build_store``); the pages are served
by real uvicorn on 127.0.0.1 and read over HTTP as a browser gets them.
"""

from __future__ import annotations

import html
import http.client
import re
from urllib.parse import urlencode

import pytest

from web_support import SAMPLE_ERROR, build_store, make_keys, served


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The sample's runs under tenant demo, and the keys (demo's read key among them)."""
    ts = build_store(tmp_path_factory.mktemp("web-filtered-out"))
    yield ts, make_keys()
    ts.close()


@pytest.fixture(scope="module")
def site(store):
    """The pages on a loopback port, and a signed-in session cookie of tenant demo's read key."""
    ts, keys = store
    with served(ts, keys.ring, keys.demo) as (web, cookie):
        host, port = web.address.rsplit(":", 1)
        yield (host, int(port)), cookie


def _search(site, **params: str) -> str:
    """The search page's text as a reader sees it (tags dropped, entities read)."""
    (host, port), cookie = site
    conn = http.client.HTTPConnection(host, port, timeout=600)
    conn.request("GET", "/?" + urlencode(params), headers={"Cookie": cookie})
    reply = conn.getresponse()
    body = reply.read().decode()
    assert reply.status == 200, body[:500]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


def test_an_env_version_no_run_has_is_named_as_what_left_nothing(site) -> None:
    page = _search(site, q=SAMPLE_ERROR, env="airline-v2")  # the sample's runs are airline-v1
    assert "0 runs" in page and "No runs match inside these filters." in page
    assert ("Nothing found inside env version airline-v2, but this tenant's runs match without it: is a value "
            "misspelt, or not recorded for these runs?") in page


def test_the_ingest_set_hint_is_plain_text_on_the_page(site) -> None:
    """Review of CLI7, 2: the note worded in one place carried the CLI's Markdown backticks onto the page, which shows
    its notes as plain text: "(`ingest --set env_version=...` records one)", the backticks shown. Each interface marks
    the command its own way (the CLI's own test keeps its backticks)."""
    page = _search(site, q=SAMPLE_ERROR, env="airline-v2")  # the sample's runs are airline-v1
    assert "recorded for these runs? (ingest --set env_version=... records one)" in page, page
    assert "`" not in page


def test_a_misspelt_tool_and_outcome_are_both_named(site) -> None:
    page = _search(site, q=SAMPLE_ERROR, tools="cancel_reservaton", outcome="failure")
    assert "Nothing found inside outcome failure, tools cancel_reservaton, but this tenant's runs match without them" in page


def test_filters_that_find_runs_say_nothing_of_the_kind(site) -> None:
    page = _search(site, q=SAMPLE_ERROR, env="airline-v1")
    assert "Nothing found inside" not in page and "No runs match" not in page
    assert "1 run" in page or re.search(r"\b\d+ runs\b", page)


def test_a_period_no_run_started_in_is_not_called_a_misspelt_value(site) -> None:
    page = _search(site, q=SAMPLE_ERROR, since="2090-01-01")
    assert "No runs match inside these filters." in page and "misspelt" not in page
    page = _search(site, q=SAMPLE_ERROR, env="airline-v2", since="2090-01-01")  # which one left nothing: not known
    assert "No runs match inside these filters." in page and "misspelt" not in page


#: A word only the sample's mini-swe-agent runs (env version swe-dev-v1) hold: pydicom-1256's task.
OUTSIDE_AIRLINE = "BulkDataURI"


def test_an_env_version_runs_hold_is_not_asked_whether_it_is_misspelt(site) -> None:
    """review RENG 1: ``env=airline-v1`` (15 of the sample's runs hold it, the page's own env suggestions offer it)
    with a word only the swe-dev-v1 runs hold was asked "is a value misspelt, or not recorded for these runs?".
    It is now said that no run inside it matches; with a tool no run has beside it, only the tool is asked about."""
    page = _search(site, q=OUTSIDE_AIRLINE, mode="lexical", env="airline-v1")
    assert "No runs match inside these filters." in page
    assert "No run inside env version airline-v1 matches this search; this tenant's runs outside it do" in page
    assert "misspelt" not in page and "ingest --set" not in page
    page = _search(site, q=OUTSIDE_AIRLINE, mode="lexical", env="airline-v1", tools="cancel_reservaton")
    assert ("Nothing found inside env version airline-v1, tools cancel_reservaton, but this tenant's runs match "
            "without them: is tools cancel_reservaton misspelt, or not recorded for these runs?") in page
    assert "ingest --set" not in page  # the env version is held: no advice to record one


def test_values_each_held_but_never_together_are_said_to_leave_nothing_to_match(site) -> None:
    """review RFIX2 1: the sample's only infra_error runs are swe-dev-v1; each value is held, no row holds both (at
    the levels the page searches by default, named), and a successful run has no failure row: the page said "no
    run inside them matches this search" of both."""
    page = _search(site, q="flight", mode="dense", outcome="infra_error", env="airline-v1")
    assert "No runs match inside these filters." in page
    assert ("No step or failure row of this tenant's lies inside env version airline-v1, outcome infra_error "
            "together, so there was nothing to match; this tenant's runs outside them match") in page, page
    page = _search(site, q="reservation cancelled", mode="dense", level="failure", outcome="success")
    assert ("No failure row of this tenant's lies inside outcome success, so there was nothing to match; this tenant's "
            "runs outside it match") in page, page


@pytest.mark.parametrize("query, mode, page_filters, cli_flags", [
    (SAMPLE_ERROR, "hybrid", {"env": "airline-v2"}, ("--env-version", "airline-v2")),  # no run holds it: asked about
    (OUTSIDE_AIRLINE, "lexical", {"env": "airline-v1"}, ("--env-version", "airline-v1")),  # held, no run in it matches
    ("reservation cancelled", "dense", {"level": "failure", "outcome": "success"},  # no row lies inside it
     ("--level", "failure", "--outcome", "success")),
])
def test_the_page_and_the_cli_over_the_service_say_the_same_note(store, site, monkeypatch, query, mode, page_filters,
                                                                   cli_flags) -> None:
    """Round 23, CLI7 2: the note was put together by the CLI and the page each (the page's said "(ingest --set
    env_version=... records one)", the CLI's "(`ingest --set env_version=...` records one)"); it is decided and worded
    in one place (``trajsearch.filtered_out``), each naming its filters its own way. The CLI asks the page's own store
    through the service (gRPC over loopback, tenant demo's read key)."""
    from cli_support import run_cli
    from trajsearch.service.server import ServiceServer

    ts, keys = store
    with ServiceServer(ts, keys.ring, address="127.0.0.1:0", close_index=False) as srv:  # the page's store stays open
        monkeypatch.setenv("TRAJSEARCH_SERVER", srv.address)
        monkeypatch.setenv("TRAJSEARCH_API_KEY", keys.demo)
        monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
        code, out, err = run_cli("search", query, "--mode", mode, *cli_flags)
    assert code == 0 and "no matches" in out, out + err
    # the note's paragraph, wherever it stands in stderr (the server's threads may log there in a full run)
    said = re.search(r"(?ms)^note: (.*?)(?:\n\n|\Z)", err)
    note = " ".join(said.group(1).split()) if said else err
    note = note.replace("--env-version ", "env version ").replace("--outcome ", "outcome ")
    note = note.replace("`", "")  # the CLI marks a command as code; the page's notes are plain text
    assert note.startswith(("nothing found", "no run inside", "no failure row")), err
    assert note[0].upper() + note[1:] in _search(site, q=query, mode=mode, **page_filters)
