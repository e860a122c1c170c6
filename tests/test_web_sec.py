"""The web pages served beside gRPC (``serve --http``) under contention and with hostile stored values.

Probe D (round 40) found these on a real store; the runs here are copies of the bundled sample's real
tau-bench runs (``trajsearch/samples``), as the probe's were copies of one real run.
"""

from __future__ import annotations

import http.cookiejar
import re
import threading
import time
from datetime import datetime, timedelta, timezone
import urllib.error
import urllib.request
from urllib.parse import urlencode

import pytest

from trajsearch.cli import SAMPLE
from trajsearch.service.client import Client, ServiceError
from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch
from trajsearch.service.server import ServiceServer

from web_support import csrf_of, make_keys

MODEL_RUNS = 40  # runs of the filtered model in the scope (of 120)


@pytest.fixture(scope="module")
def keys():
    return make_keys()


def copies(env: str) -> list:
    """Three models' copies of the sample's first real run, ``MODEL_RUNS`` each, in env ``env``."""
    run = next(p.trajectory for p in read_dump(SAMPLE, tenant="demo") if p.trajectory is not None)
    return [run.model_copy(update={"trajectory_id": f"copy-{model}-{i:03d}", "model_id": model, "env_version": env})
            for model in ("m-0", "m-1", "m-2") for i in range(MODEL_RUNS)]


#: ``datetime.min`` written in a zone east of UTC (probe D's ``probe-date-plus1``), and the latest instant
#: west of it: before year 1 / after year 9999 in UTC
OUT_OF_RANGE = {"date-plus1": datetime(1, 1, 1, tzinfo=timezone(timedelta(hours=1))),
                "date-max": datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-12)))}


def stored_before_ingest_refused_them() -> list:
    """Runs with an out-of-range ``created_at``, as a store written before ingest refused them holds them
    (``model_copy`` skips the model's validation, as the old model had none for it)."""
    run = next(p.trajectory for p in read_dump(SAMPLE, tenant="demo") if p.trajectory is not None)
    return [run.model_copy(update={"trajectory_id": name, "created_at": when, "env_version": "dates"})
            for name, when in OUT_OF_RANGE.items()] + [
        run.model_copy(update={"trajectory_id": "env-with-tab", "env_version": UNSELECTABLE_ENV})]


UNSELECTABLE_ENV = "v2\t"  # probe D's (out_g4.txt): no filter can name it


@pytest.fixture(scope="module")
def server(tmp_path_factory, keys):
    tmp = tmp_path_factory.mktemp("websec")
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    ts.add(copies("cold-v4"))
    ts.add(stored_before_ingest_refused_them())
    # two workers: one trace-read permit for the whole server, so one tenant's share is one read
    server = ServiceServer(ts, keys.ring, address="127.0.0.1:0", http_address="127.0.0.1:0", max_workers=2).start()
    yield server
    server.stop(grace=1)


def signed_in(server, key: str) -> urllib.request.OpenerDirector:
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    with opener.open(server.web.url + "/signin", timeout=600) as page:
        token = csrf_of(page.read().decode())
    form = urlencode({"key": key, "csrf": token, "next": "/"}).encode()
    opener.open(urllib.request.Request(server.web.url + "/signin", data=form), timeout=600).close()
    return opener


def page(opener, server, path: str, **params: str) -> tuple[int, str]:
    try:
        with opener.open(server.web.url + path + ("?" + urlencode(params) if params else ""), timeout=600) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def runs_shown(html: str) -> list[str]:
    return re.findall(r'class="run-link">([^<]+)</a>', html)


def test_the_model_filter_shows_every_run_of_that_model_and_leaves_the_agents_their_trace_reads(server, keys):
    """Bug (probe D, D1): with the server's one trace-read permit per tenant, the page read a model filter's
    scope 8 traces at a time; all but two reads were refused at once, so the page showed 1 of the 800 runs of
    model ``m-1`` in env ``cold-v4``, said "The trace store did not answer", and the tenant's agents' own
    ``GetTrace`` calls were refused "trace reads busy" meanwhile. The page now reads on its own budget,
    waiting its turn."""
    opener = signed_in(server, keys.demo)
    uri = server.ts.run("copy-m-0-000", tenant="demo").trace_uri
    refused: list[str] = []
    loading = threading.Event()

    def agent() -> None:
        with Client(server.address, keys.demo) as client:
            while loading.is_set():
                try:
                    client.get_trace(uri)
                except ServiceError as exc:
                    refused.append(str(exc))

    loading.set()
    worker = threading.Thread(target=agent)
    worker.start()
    try:
        status, html = page(opener, server, "/", q="cancel my reservation", env="cold-v4", model="m-1", k="50")
    finally:
        loading.clear()
        worker.join()
    assert status == 200
    shown = runs_shown(html)
    assert len(shown) == MODEL_RUNS and all(run.startswith("copy-m-1-") for run in shown), shown
    assert "did not answer" not in html and "busy" not in html
    assert refused == []


def test_pages_loaded_at_once_all_show_the_model_column(server, keys):
    """Bug (probe D, D1): four result pages of one tenant loaded at the same moment; two of them showed
    one model and "The trace store did not answer", as their reads found the tenant's permit taken."""
    openers = [signed_in(server, keys.demo) for _ in range(4)]
    results: list[tuple[int, str]] = [(0, "")] * len(openers)

    def load(i: int) -> None:
        results[i] = page(openers[i], server, "/", q=f"reservation {i}", env="cold-v4", level="task", k="50")

    threads = [threading.Thread(target=load, args=(i,)) for i in range(len(openers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for status, html in results:
        assert status == 200 and len(runs_shown(html)) == 50
        assert "did not answer" not in html
        assert html.count("<dt>model</dt><dd>m-") == 50


def test_a_stored_run_dated_outside_the_years_1_to_9999_does_not_break_the_search(server, keys):
    """Bug (probe D, D2): one run whose ``created_at`` was 0001-01-01T00:00:00+01:00 (before year 1 in UTC)
    made every web search ranking it answer ``400 Cannot search that: year 0 is out of range``, for the
    whole tenant. Ingest refuses such dates now (test_ingest_filter_values.py); runs stored before are
    listed with their date as epoch seconds, and their run pages show them (review 2, F4: a stored run is not
    judged by ingest's rules again; they had said "the trace is damaged")."""
    opener = signed_in(server, keys.demo)
    status, html = page(opener, server, "/", q="cancel my reservation", env="dates", level="task")
    assert status == 200, html
    assert sorted(runs_shown(html)) == sorted(OUT_OF_RANGE)
    assert html.count("(outside the years 1 to 9999)") == len(OUT_OF_RANGE)
    assert "did not answer" not in html  # their traces fail the model: a damaged trace, not a failing store
    for name in OUT_OF_RANGE:
        status, html = page(opener, server, f"/runs/{name}")
        assert (status, "The trace of this run is damaged" in html) == (200, False), html
        assert f"Run {name}" in html and "outside the years 1 to 9999" in html, html


def test_values_no_filter_can_name_are_not_offered_as_suggestions(server, keys):
    """Bug (probe D, D3): the env suggestions offered ``v2\\t`` (and ``v\\x00x``, a raw NUL in the HTML)
    from runs stored before ingest refused them; choosing one searched ``v2`` or answered 400."""
    status, html = page(signed_in(server, keys.demo), server, "/")
    assert status == 200
    suggested = re.search(r'<datalist id="env-list">(.*?)</datalist>', html, re.S).group(1)
    assert "cold-v4" in suggested and "v2\t" not in suggested and "v2&#9;" not in suggested


class GatedStore:
    """The trace store, each read held at a gate until the test opens it: counts the reads in flight at once."""

    def __init__(self, store) -> None:
        self.store = store
        self.gate = threading.Event()
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def get(self, uri: str, *, tenant: str):
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        try:
            self.gate.wait(timeout=300)
            return self.store.get(uri, tenant=tenant)
        finally:
            with self.lock:
                self.now -= 1


def test_the_pages_and_the_agents_together_read_no_more_traces_at_once_than_configured(tmp_path, keys):
    """Bug (review 2, F6): the pages read traces on a budget of 8 permits of their own, fixed in code, so with
    ``serve --trace-reads 1 --http`` the store saw up to 9 reads at once. The pages' budget is now
    ``--page-reads``: the store sees at most ``--trace-reads`` plus ``--page-reads`` reads, and both an agent's
    read and a page's are at the store at the same time (neither starves the other)."""
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ts.add(copies("cold-v4"))
    store = ts.traces = GatedStore(ts.traces)
    server = ServiceServer(ts, keys.ring, address="127.0.0.1:0", http_address="127.0.0.1:0", max_workers=2,
                           trace_slots=1, page_reads=1).start()
    try:
        uri = ts.run("copy-m-0-000", tenant="demo").trace_uri
        opener = signed_in(server, keys.demo)
        loaded: list[int] = []
        pages = threading.Thread(target=lambda: loaded.append(
            page(opener, server, "/", q="cancel my reservation", env="cold-v4", model="m-1", k="50")[0]))

        def agent_reads() -> None:
            with Client(server.address, keys.demo) as client:
                client.get_trace(uri)

        agent = threading.Thread(target=agent_reads)
        pages.start()
        agent.start()
        deadline = time.monotonic() + 600
        while store.now < 2 and time.monotonic() < deadline:  # the agent's read and a page's, both at the store
            time.sleep(0.01)
        assert store.now == 2
        store.gate.set()
        pages.join()
        agent.join()
    finally:
        store.gate.set()
        server.stop(grace=1)
    assert loaded == [200]
    assert store.peak == 2


def test_the_mode_label_of_a_pinned_key_is_decided_inside_its_pins(tmp_path):
    """Review RGE 2: the page's "mode auto -> hybrid" was decided with the tenant's filters alone, so a key pinned to
    policy p1 was told hybrid whenever a p2 run held its query verbatim: a yes/no answer on text it may not see. It
    is decided on the filters the search runs with (the pins included)."""
    from starlette.testclient import TestClient

    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.web import WebConfig, create_app
    from trajsearch.web.app import LOOPBACK_HOSTS

    fixtures = __import__("pathlib").Path(__file__).parent / "fixtures" / "tau-bench"
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    try:
        ts.add(read_dump(fixtures / "gpt-4o-airline-mini.json", tenant="acme", defaults={"policy_version": "p1"}))
        ts.add(read_dump(fixtures / ".real" / "gpt-4o-airline-failed-calls.json", tenant="acme",
                         defaults={"policy_version": "p2"}))
        made = {"all": new_key(), "p1": new_key()}
        ring = KeyRing.from_entries([key_entry(made["all"], tenant="acme", role="read"), dict(
            key_entry(made["p1"], tenant="acme", role="read", key_id="acme-p1"), policy_versions=["p1"])])
        app = create_app(ts, ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS))
        said = {}
        for name, key in made.items():
            page = TestClient(app, base_url="http://127.0.0.1", follow_redirects=False)
            form = page.get("/signin")
            assert page.post("/signin", data={"key": key, "csrf": csrf_of(form.text), "next": "/"}).status_code == 303
            html = page.get("/", params={"q": "I need to book a flight for my friend Ivan"}).text  # a p2 run's line
            said[name] = re.search(r'id="search-meta">\s*mode auto → (\w+)', html).group(1)
    finally:
        ts.close()
    assert said == {"all": "hybrid", "p1": "dense"}
