"""Probe 50 (SV): the service and its web pages as a hostile or ordinary caller meets them on loopback.

Every test runs a real server (``ServiceServer`` or ``trajsearch serve``) on 127.0.0.1 and talks to it with a real
client (gRPC, or HTTP over a socket, so that the Host and Origin headers are exactly what a reverse proxy sends).
"""

from __future__ import annotations

import http.client
import json
import re
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest

from cli_support import run_cli
from web_support import csrf_of

PUBLIC = "https://search.example.com"


def _serve_pages(tmp_path: Path, key: str, **options):
    """A started server over an empty embedded store, with the web pages on a loopback port."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry
    from trajsearch.service.server import ServiceServer

    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ring = KeyRing.from_entries([key_entry(key, tenant="acme", role="read")])
    return ServiceServer(ts, ring, address="127.0.0.1:0", http_address="127.0.0.1:0", **options).start()


class Browser:
    """A browser behind a reverse proxy: every request goes to the loopback listener with the Host header the proxy
    sends, and the Origin a browser sends for the public page; cookies kept as the browser keeps them."""

    def __init__(self, address: str, host: str, origin: str) -> None:
        self.address, self.host, self.origin = address, host, origin
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: dict[str, str] | None = None) -> http.client.HTTPResponse:
        host, port = self.address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=600)
        headers = {"Host": self.host}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if body is not None:
            data = urlencode(body).encode()
            headers.update({"Origin": self.origin, "Content-Type": "application/x-www-form-urlencoded"})
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        response.text = response.read().decode()  # type: ignore[attr-defined]
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                cookie_name, _, rest = value.partition("=")
                cookie_value = rest.split(";", 1)[0]
                if cookie_value and "max-age=0" not in value.lower():
                    self.cookies[cookie_name] = cookie_value
                else:
                    self.cookies.pop(cookie_name, None)
        conn.close()
        return response

    def sign_in(self, key: str) -> http.client.HTTPResponse:
        form = self.request("GET", "/signin")
        assert form.status == 200, (form.status, form.text[:200])
        return self.request("POST", "/signin", {"key": key, "csrf": csrf_of(form.text), "next": "/"})


@pytest.mark.parametrize("proxy_host", ["search.example.com", "127.0.0.1:{port}"],
                         ids=["host-passed-through", "host-of-the-upstream"])
def test_the_pages_work_behind_a_tls_proxy_named_by_public_url(tmp_path: Path, proxy_host: str) -> None:
    """The README's advice for a shared machine: the pages under a host name of their own, a TLS proxy in front of
    ``serve --http 127.0.0.1:8080``. Neither way a proxy can send the Host header worked: Caddy and Traefik pass the
    browser's Host through by default (``search.example.com``): every page answered 421 "unknown host: open this
    page as http://127.0.0.1:8080" (the DNS-rebinding guard of a loopback listener); nginx's default sends the
    upstream's (``127.0.0.1:8080``): the pages opened, but sign-in answered 403 "This form has expired or did not
    come from this page" every time, as the browser's Origin (``https://search.example.com``) is not that Host.
    ``--public-url`` names the address the browser uses: its host is answered and its origin may post, and its
    cookies are Secure (the browser speaks https), while any other host or origin is still refused."""
    from trajsearch.service.auth import new_key

    key = new_key()
    server = _serve_pages(tmp_path, key, public_url=PUBLIC)
    try:
        address = server.web.address
        host = proxy_host.format(port=address.rsplit(":", 1)[1])
        browser = Browser(address, host, PUBLIC)
        signed = browser.sign_in(key)
        assert signed.status == 303 and signed.getheader("location") == "/", (signed.status, signed.text[:300])
        session = [v for name, v in signed.getheaders() if name.lower() == "set-cookie" and "ts_session" in v]
        assert session and "secure" in session[0].lower()
        page = browser.request("GET", "/?q=error")
        assert page.status == 200 and "Sign in" not in page.text.split("<main", 1)[-1][:2000], page.text[:300]

        # the rebinding guard and the Origin check still hold for every other name
        rebound = Browser(address, "evil.example", "http://evil.example")
        refused = rebound.request("GET", "/signin")
        assert refused.status == 421 and PUBLIC in refused.text
        cross = Browser(address, host, "https://evil.example")
        assert cross.sign_in(key).status == 403
    finally:
        server.stop(grace=1)


def test_without_public_url_a_loopback_listener_still_refuses_other_hosts(tmp_path: Path) -> None:
    """What ``--public-url`` must not loosen: a loopback listener without it answers only loopback names."""
    from trajsearch.service.auth import new_key

    key = new_key()
    server = _serve_pages(tmp_path, key)
    try:
        browser = Browser(server.web.address, "search.example.com", PUBLIC)
        assert browser.request("GET", "/signin").status == 421
        local = Browser(server.web.address, server.web.address, PUBLIC)
        assert local.sign_in(key).status == 403  # a page of another origin may not sign in
    finally:
        server.stop(grace=1)


@pytest.mark.parametrize("url, said", [
    ("search.example.com", "--public-url: expected the pages' address as a browser opens it"),
    ("https://search.example.com/trajsearch", "--public-url: the pages are served at the root of their host"),
    ("ftp://search.example.com", "--public-url: expected the pages' address as a browser opens it"),
    ("https://user@search.example.com", "--public-url: expected the pages' address as a browser opens it"),
])
def test_serve_refuses_a_public_url_it_cannot_honour_in_one_line(tmp_path: Path, monkeypatch, url: str,
                                                                 said: str) -> None:
    """A value the pages could not be reached at is refused before anything starts, naming the option."""
    monkeypatch.setenv("TRAJSEARCH_KEYS", '{"keys": [{"sha256": "' + "0" * 64 + '", "tenant": "acme", '
                                          '"role": "read"}]}')
    code, out, err = run_cli("serve", "--uri", str(tmp_path / "milvus.db"), "--traces", str(tmp_path / "traces"),
                             "--address", "127.0.0.1:0", "--http", "127.0.0.1:0", "--public-url", url)
    assert code != 0
    assert said in out + err, out + err


def test_serve_refuses_a_public_url_without_pages(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRAJSEARCH_KEYS", '{"keys": [{"sha256": "' + "0" * 64 + '", "tenant": "acme", '
                                          '"role": "read"}]}')
    code, out, err = run_cli("serve", "--uri", str(tmp_path / "milvus.db"), "--traces", str(tmp_path / "traces"),
                             "--address", "127.0.0.1:0", "--public-url", PUBLIC)
    assert code != 0
    assert "--public-url names the address of the web pages: give --http too" in out + err, out + err


def test_ingest_over_the_server_of_more_runs_than_a_stream_holds_ingests_them_all(tmp_path: Path, monkeypatch) -> None:
    """``ingest --server`` sent a whole dump as one Ingest stream, and a stream holds at most 50,000 records: a batch
    indexer's run over a bigger directory (SWE-bench submissions, tau-bench trials) was refused at record 50,001
    with ``INVALID_ARGUMENT: records: a stream holds at most 50000 records``, and the rerun it asked for sent the
    same 50,000 first (unchanged now) and was refused at the same place: the rest could never be ingested. The
    client opens a new stream at the server's bound. Real runs (two tau-bench, two mini-swe-agent 2.4.6); the bound
    is scaled down to 3 on both sides (the constant both read) so that four runs cross it."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.search import TrajSearch
    from trajsearch.service import client as client_module
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.server import ServiceServer
    from trajsearch.service.validate import Limits

    fixtures = Path(__file__).parent / "fixtures"
    inputs = [fixtures / "tau-bench" / "gpt-4o-airline-mini.json", fixtures / "mini-swe-agent" / ".real" / "batch-2.4.6"]
    monkeypatch.setattr(client_module, "MAX_STREAM_RECORDS", 3, raising=False)
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-traces"), embedder=HashingEmbedder())
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    for name in ("TRAJSEARCH_TENANT", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    with ServiceServer(ts, keys, address="127.0.0.1:0", limits=Limits(max_stream_records=3)) as server:
        monkeypatch.setenv("TRAJSEARCH_SERVER", server.address)
        monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
        code, out, err = run_cli("ingest", *map(str, inputs), "--json")
        assert code == 0, out + err
        report = json.loads(out)
        assert (report["ingested"], report["rejected"]) == (4, 0), report
        assert ts.stats(tenant="acme")["trajectories"] == 4
        code, out, err = run_cli("ingest", *map(str, inputs), "--json")  # the rerun: every run unchanged
        assert code == 0, out + err
        assert (json.loads(out)["unchanged"], json.loads(out)["ingested"]) == (4, 0)
    ts.close()


def test_run_pages_opened_at_once_read_on_the_pages_permits_not_the_agents(tmp_path: Path) -> None:
    """README: "With --http the web pages read traces on permits of their own, --page-reads (...; a page waits up to
    10 s for one)". Only the model column did: a run page, its JSON, a compare page and /trace?uri= read with the
    façade, on the agents' GetTrace permits (by default one per tenant, one caller waiting). An engineer opening eight
    results in tabs got seven "503 The trace store did not answer" in 0.1 s from a healthy local store, and the
    tenant's agents meanwhile "UNAVAILABLE: trace reads busy". Real runs: two tau-bench, two mini-swe-agent 2.4.6."""
    from concurrent.futures import ThreadPoolExecutor

    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.read import read_dump
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.client import Client
    from trajsearch.service.server import ServiceServer

    fixtures = Path(__file__).parent / "fixtures"
    runs = [p.trajectory for path in (fixtures / "tau-bench" / "gpt-4o-airline-mini.json",
                                      *sorted((fixtures / "mini-swe-agent" / ".real" / "batch-2.4.6").rglob("*.json")))
            for p in read_dump(path, tenant="acme") if p.trajectory is not None]
    assert len(runs) >= 4
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ts.add(runs)
    ring = KeyRing.from_entries([key_entry(key, tenant="acme", role="read")])
    server = ServiceServer(ts, ring, address="127.0.0.1:0", http_address="127.0.0.1:0").start()  # serve's defaults
    try:
        browser = Browser(server.web.address, server.web.address, f"http://{server.web.address}")
        assert browser.sign_in(key).status == 303
        ids = [run.trajectory_id for run in runs]
        uris = [ts.run(i, tenant="acme").trace_uri for i in ids]
        paths = [f"/runs/{i}" for i in ids] + [f"/runs/{i}?format=json" for i in ids] + \
                [f"/compare/{ids[0]}?with={ids[1]}", f"/trace?{urlencode({'uri': uris[2]})}"]

        def page(path: str) -> tuple[str, int]:
            return path, Browser.request(browser, "GET", path).status

        with Client(server.address, key) as agent, ThreadPoolExecutor(24) as pool:
            loads = [pool.submit(page, paths[n % len(paths)]) for n in range(24)]
            agent_reads = []
            while not all(f.done() for f in loads):  # the agent reads one trace at a time meanwhile
                try:
                    agent_reads.append(agent.get_trace(uris[len(agent_reads) % len(uris)], timeout=600).trajectory_id)
                except Exception as exc:  # noqa: BLE001
                    agent_reads.append(f"{type(exc).__name__}: {exc}")
            statuses = [f.result() for f in loads]
        assert all(status in (200, 303) for _, status in statuses), [s for s in statuses if s[1] not in (200, 303)]
        assert all(read in ids for read in agent_reads), agent_reads
    finally:
        server.stop(grace=1)
        ts.close()


# -- round 17 (FRSV): the pages' trace timeout, plaintext and IDN public URLs -------------------------------------


def _hang_trace(ts_traces: Path, tenant: str) -> tuple[Path, bytes]:
    """Turn one stored trace into a FIFO holding back its bytes: a read of it waits, as on a hung network mount,
    until :func:`_release` hands them over (the store itself is the real file store, unchanged)."""
    import os

    path = sorted((ts_traces / tenant).iterdir())[0]
    data = path.read_bytes()
    path.unlink()
    os.mkfifo(path)
    return path, data


def _release(path: Path, data: bytes) -> None:
    """Answer the read waiting on the FIFO (a blocking open: it returns once that reader is there)."""
    with open(path, "wb") as fifo:
        fifo.write(data)


def _ingest_for_ui(tmp_path: Path) -> tuple[dict[str, str], str]:
    """The tau-bench fixture ingested into an embedded store for ``trajsearch ui``: its env and one run's id."""
    import os
    import subprocess
    import sys

    from trajsearch.ingest.read import read_dump

    dump = Path(__file__).parent / "fixtures" / "tau-bench" / "gpt-4o-airline-mini.json"
    env = dict(os.environ, TRAJSEARCH_MODEL="hashing", TRAJSEARCH_HOME=str(tmp_path / "home"), PYTHONUNBUFFERED="1",
               TRAJSEARCH_URI=str(tmp_path / "milvus.db"), TRAJSEARCH_TRACES=str(tmp_path / "traces"))
    subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(dump), "-t", "acme"], env=env, check=True,
                   capture_output=True, timeout=600)
    return env, [p.trajectory for p in read_dump(dump, tenant="acme") if p.trajectory][0].trajectory_id


def test_ui_waits_for_a_slow_trace_as_long_as_its_trace_timeout(tmp_path: Path) -> None:
    """RSV D1: since the run pages read on the pages' own permits, ``trajsearch ui`` gave every trace read the
    agents' fixed 10 s: a long session on a network mount, which the page used to open (slowly), answered 503 "The
    trace store did not answer", and ``ui`` had no option to wait longer. ``ui --trace-timeout`` (default 120 s) is
    how long its pages wait; scaled down here: a hung trace answers 503 after 1 s, and a trace the store hands over
    after 1.5 s opens under a timeout of 60 s."""
    import http.cookiejar
    import signal
    import subprocess
    import sys
    import threading
    import urllib.error
    import urllib.request

    env, run_id = _ingest_for_ui(tmp_path)
    fifo, data = _hang_trace(tmp_path / "traces", "acme")
    for timeout, release_after, status in ((1.0, None, 503), (60.0, 1.5, 200)):
        ui = subprocess.Popen([sys.executable, "-m", "trajsearch.cli", "ui", "-t", "acme", "--address", "127.0.0.1:0",
                               "--trace-timeout", str(timeout)],
                              env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        try:
            lines = [ui.stderr.readline() for _ in range(2)]
            found = re.search(r"sign in once:\s+(\S+)", lines[1])
            assert found, lines + [ui.stderr.read()]
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            opener.open(found.group(1), timeout=600).read()
            base = found.group(1).split("/signin/")[0]
            if release_after:
                threading.Timer(release_after, _release, (fifo, data)).start()
            try:
                with opener.open(f"{base}/runs/{run_id}", timeout=600) as page:
                    got, text = page.status, page.read().decode()
            except urllib.error.HTTPError as exc:
                got, text = exc.code, exc.read().decode()
            assert got == status, text[:500]
            if status == 503:
                assert "The trace store did not answer" in text
                _release(fifo, data)  # the read given up on still waits: answer it
            else:
                assert run_id in text
        finally:
            ui.send_signal(signal.SIGTERM)
            assert ui.wait(timeout=600) == 0


KEYS_ENV = '{"keys": [{"sha256": "' + "0" * 64 + '", "tenant": "acme", "role": "read"}]}'


def test_serve_refuses_a_plaintext_public_url_beyond_loopback_without_insecure(tmp_path: Path, monkeypatch) -> None:
    """RSV D2: ``serve --http 127.0.0.1:8080 --public-url http://search.example.com`` started without a word: the
    browsers' sign-in keys and session cookies (not Secure) crossed the network to the proxy in the clear, which
    every other listener refuses without ``--insecure``. An http:// public URL is that listener's address as the
    browsers see it: refused beyond loopback in one line naming the https:// URL to give, whatever the listener
    itself speaks; a loopback one (a proxy on this machine) is not plaintext on a network."""
    from trajsearch.service.auth import new_key
    from trajsearch.service.server import InsecureAddressError

    monkeypatch.setenv("TRAJSEARCH_KEYS", KEYS_ENV)
    code, out, err = run_cli("serve", "--uri", str(tmp_path / "milvus.db"), "--traces", str(tmp_path / "traces"),
                             "--address", "127.0.0.1:0", "--http", "127.0.0.1:0",
                             "--public-url", "http://Search.Example.com")
    assert code == 2, out + err
    assert "refusing to serve the web pages in plaintext (--public-url) on search.example.com:80" in err, err
    assert "Give --public-url https://search.example.com" in err and "--insecure" in err
    assert not (tmp_path / "milvus.db").exists()  # refused before the index was opened

    key = new_key()
    with pytest.raises(InsecureAddressError):  # the library refuses it too
        _serve_pages(tmp_path / "lib", key, public_url="http://search.example.com:8080")
    for public, insecure in (("http://search.example.com", True), ("http://localhost:8080", False)):
        server = _serve_pages(tmp_path / public.split("//")[1].replace(":", "_"), key, public_url=public,
                              insecure=insecure)
        try:
            origin = public.lower()
            assert Browser(server.web.address, urlsplit(origin).netloc, origin).sign_in(key).status == 303
        finally:
            server.stop(grace=1)


def test_an_internationalised_public_url_is_answered_under_the_name_browsers_send(tmp_path: Path) -> None:
    """RSV D4: ``--public-url https://Bücher.example`` was taken as typed, but browsers send the host in its ASCII
    form (``Host: xn--bcher-kva.example``, and so the Origin): every page answered 421 and no one could sign in.
    The host is IDNA-encoded (UTS #46, as browsers do); a name no browser can open is refused naming the option."""
    from trajsearch.service.auth import new_key

    key = new_key()
    server = _serve_pages(tmp_path, key, public_url="https://Bücher.example")
    try:
        ascii_host = "xn--bcher-kva.example"
        browser = Browser(server.web.address, ascii_host, f"https://{ascii_host}")
        assert browser.sign_in(key).status == 303
        refused = Browser(server.web.address, "evil.example", "https://evil.example").request("GET", "/signin")
        assert refused.status == 421 and f"https://{ascii_host}" in refused.text
    finally:
        server.stop(grace=1)
    code, out, err = run_cli("serve", "--uri", str(tmp_path / "other.db"), "--address", "127.0.0.1:0",
                             "--http", "127.0.0.1:0", "--public-url", "https://bü\u200dcher.example")
    assert code == 2 and "--public-url: 'bü\\u200dcher.example' is not a host name a browser can open" in err, err


def test_a_public_url_from_the_environment_is_named_as_such(tmp_path: Path, monkeypatch) -> None:
    """RSV (low): with ``TRAJSEARCH_PUBLIC_URL`` exported for the pages' deployment, a plain gRPC ``serve`` of the
    same environment exited "--public-url names the address of the web pages: give --http too", an option its
    command line never gave. The message names the variable and its value."""
    monkeypatch.setenv("TRAJSEARCH_KEYS", KEYS_ENV)
    monkeypatch.setenv("TRAJSEARCH_PUBLIC_URL", PUBLIC)
    code, out, err = run_cli("serve", "--uri", str(tmp_path / "milvus.db"), "--address", "127.0.0.1:0")
    assert code == 2
    assert f"$TRAJSEARCH_PUBLIC_URL='{PUBLIC}'" in err and "unset it to serve gRPC alone" in err, err

