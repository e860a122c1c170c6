"""Pages of runs continued by a page token (``search_page``, the Search call's ``page_token``), how ``export`` reads
more runs than one search returns; and ``health`` without an API key.

Against a real server on 127.0.0.1 (``serve_store``: real Milvus Lite and file traces, the fast hashing test
embedder) and the real CLI. An export paged by resending every run it had read as an exclusion: at 10,000 runs a page
took seconds and its request grew without bound (``scripts/bench_export_pages.py`` has the figures).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.export import export_runs
from trajsearch.export import stream as export_stream  # export_runs reads PAGE there
from trajsearch.service.client import Client
from trajsearch.service.protos import pb2
from trajsearch.service.validate import Limits

from cli_support import own_lines
from conftest import make_run
from process_support import cli_env
from service_support import key_ring, serve_store

QUERY = "fix the failing payments test"
RUNS = [make_run(f"run-{n}", task=f"Fix the failing payments test number {n}", env_version=("v1", "v2")[n % 2])
        for n in range(7)]


@pytest.fixture(scope="module")
def keys():
    return key_ring(acme=dict(tenant="acme", role="read"), other=dict(tenant="other", role="read"),
                    pinned=dict(tenant="acme", role="read", key_id="acme-pinned", env_versions=["v2"]))


@pytest.fixture(scope="module")
def server(tmp_path_factory, keys):
    srv = serve_store(tmp_path_factory.mktemp("pages"), keys[1], RUNS + [make_run("other-1", tenant="other")],
                      Limits())
    yield srv
    srv.stop(grace=1)
    srv.ts.close()


def _pages(client: Client, k: int, **filters) -> list[list[str]]:
    """Every page of ``k`` runs for QUERY, following the tokens to the end."""
    pages, token = [], ""
    while True:
        page = client.search_page(QUERY, k=k, page_token=token, **filters)
        pages.append([h.trajectory_id for h in page.hits])
        token = page.next_page_token
        if not token:
            return pages


def test_pages_follow_one_ranking_without_resending_runs(server, keys) -> None:
    """Pages of 2 read every run once, in the order one search of 7 ranks them; the last page names no next."""
    with Client(server.address, api_key=keys[0]["acme"]) as client:
        whole = [h.trajectory_id for h in client.search(QUERY, k=7)]
        pages = _pages(client, 2)
    assert sorted(whole) == sorted(r.trajectory_id for r in RUNS)
    assert [run for page in pages for run in page] == whole
    assert [len(page) for page in pages] == [2, 2, 2, 1]


def test_a_token_cannot_widen_the_tenant_or_the_filters(server, keys) -> None:
    """A token carries no tenant or filter: given by another tenant's key, by a key pinned to fewer versions, or with
    other filters, it is refused as continuing another search, and a token not made by the server as not one."""
    with Client(server.address, api_key=keys[0]["acme"]) as acme:
        token = acme.search_page(QUERY, k=2).next_page_token
        with pytest.raises(ValueError, match="page_token: it continues another search"):
            acme.search_page(QUERY, k=2, page_token=token, env_version="v1")
        with pytest.raises(ValueError, match="page_token: not a page token"):
            acme.search_page(QUERY, k=2, page_token=token[:-3] + "x!y")
    for other in ("other", "pinned"):
        with Client(server.address, api_key=keys[0][other]) as client:
            with pytest.raises(ValueError, match="page_token: it continues another search"):
                client.search_page(QUERY, k=2, page_token=token)
    with Client(server.address, api_key=keys[0]["pinned"]) as pinned:
        seen = [run for page in _pages(pinned, 2) for run in page]
    assert seen and all(int(run.split("-")[1]) % 2 == 1 for run in seen)  # v2 only: the key's pin


def test_a_page_of_rows_takes_no_token(server, keys) -> None:
    """Pages are of runs (one hit each): a search of several rows per run is refused a token, naming the field."""
    with Client(server.address, api_key=keys[0]["acme"]) as client:
        token = client.search_page(QUERY, k=2).next_page_token
        assert token and client.search(QUERY, k=2, group_size=2)
        with pytest.raises(ValueError, match="page_token: pages are of runs"):
            client._invoke("Search", pb2.SearchRequest(text=QUERY, k=2, group_size=2, page_token=token))


def test_export_over_the_server_pages_by_token_as_the_embedded_store_does(server, keys, monkeypatch) -> None:
    """``export_runs`` through the client, pages of 2: the same runs, in the same order, as the façade's own."""
    monkeypatch.setattr(export_stream, "PAGE", 2)
    with Client(server.address, api_key=keys[0]["acme"]) as client:
        remote = export_runs(client, QUERY, tenant=None, k=5, fmt="jsonl")
        remote_ids = [r.provenance["trajectory_id"] for r in remote]
    local_ids = [r.provenance["trajectory_id"]
                 for r in export_runs(server.ts, QUERY, tenant="acme", k=5, fmt="jsonl")]
    assert remote_ids == local_ids and len(set(remote_ids)) == 5 and not remote.stopped


# -- health needs no key ------------------------------------------------------------------------------------------


def test_health_needs_no_key_and_shows_no_tenant_figures(server, keys, tmp_path) -> None:
    """A liveness probe has no tenant: ``health`` without $TRAJSEARCH_API_KEY said "no API key" and exited 2. It now
    answers the server's status; the per-method counters are a tenant's, so they come only with a key."""
    env = cli_env()
    env.pop("TRAJSEARCH_API_KEY", None)
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "health", "--server", server.address], env=env,
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    assert said["status"] == "SERVING" and "metrics" not in said
    assert "TRAJSEARCH_API_KEY" in " ".join(own_lines(done.stderr))  # says how to see the counters
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "health", "--server", server.address],
                          env=cli_env(TRAJSEARCH_API_KEY=keys[0]["acme"]), capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout)) == {"status", "metrics"}
