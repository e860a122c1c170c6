"""A store for the web tests: the bundled sample (tenant ``demo``), another tenant's runs, a hostile run.

Real Milvus Lite in a temp dir and file traces, with the fast deterministic test embedder.
"""

from __future__ import annotations

import http.client
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from trajsearch.cli import SAMPLE
from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_dump
from trajsearch.model import Failure, Step, Trajectory
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing
from trajsearch.web import WebConfig, WebServer, create_app
from trajsearch.web.app import LOOPBACK_HOSTS
from trajsearch.web.session import OneTimeTokens

from conftest import BASE_TIME, failing_run, make_run
from service_support import key_ring

SECRET = "zebracorn quasar payload"  # only tenant "other" has these words
SAMPLE_ERROR = "Error: flight HAT223 not available on date 2024-05-14"  # a step error in the sample
BROKEN = "tau-gpt-4o-airline-13-t0"  # the run holding it; tau-gpt-4o-airline-13-t1 succeeded at the same task
SUCCESS = "tau-gpt-4o-airline-13-t1"
HOSTILE = "xss-run"
PAYLOAD = '<script>window.__pwned = 1; document.title = "pwned";</script><img src=x onerror="window.__pwned = 2">'


@dataclass
class Keys:
    demo: str
    other: str
    pinned: str  # tenant demo, env_versions = ["swe-dev-v1"]
    writer: str  # tenant demo, role write
    ring: KeyRing


def make_keys() -> Keys:
    made, ring = key_ring(demo=dict(tenant="demo", role="read"), other=dict(tenant="other", role="read"),
                          pinned=dict(tenant="demo", role="read", key_id="demo-swe-only", env_versions=["swe-dev-v1"]),
                          writer=dict(tenant="demo", role="write"))
    return Keys(made["demo"], made["other"], made["pinned"], made["writer"], ring)


def hostile_run() -> Trajectory:
    """A failed run whose step output, arguments, thought, task and error all hold markup."""
    return Trajectory(
        trajectory_id=HOSTILE, tenant="demo", task=f"Render the report {PAYLOAD}", outcome="failure",
        env_version="swe-dev-v1", model_id="<b>model</b>", created_at=BASE_TIME,
        failure=Failure(error=f"renderer crashed {PAYLOAD}", cause="</pre><script>alert(1)</script>"),
        steps=[
            Step(index=0, thought=f"think {PAYLOAD}", action="bash", arguments={"command": f"echo '{PAYLOAD}'"},
                 observation=f"htmlrender output {PAYLOAD} & more"),
            Step(index=1, action="bash", arguments={"command": "cat report.html"}, observation=PAYLOAD,
                 error=f"htmlrender failed: {PAYLOAD}"),
        ],
    )


def build_store(tmp) -> TrajSearch:
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    report = ts.add(read_dump(SAMPLE, tenant="demo"))
    assert report.ingested == 23, report.to_dict()
    ts.add([
        hostile_run(),
        make_run("other-ok", tenant="other", task=f"Deploy the {SECRET} service", env_version="airline-v1"),
        failing_run("other-broken", f"RuntimeError: {SECRET} exploded at flight HAT223", tenant="other",
                    env_version="airline-v1"),
        # the same id as a demo run, in the other tenant: must never show up for demo's key
        make_run(SUCCESS, tenant="other", task=f"The other tenant's {SECRET} copy", env_version="airline-v1"),
    ])
    return ts


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', html)
    assert match, "no csrf field in the page"
    return match.group(1)


@contextmanager
def served(ts: TrajSearch, ring: KeyRing, key: str) -> Iterator[tuple[WebServer, str]]:
    """The pages of ``ts`` served by real uvicorn on a loopback port, and the session cookie (``name=value``) of
    ``key`` signed in through a one-time link, as ``trajsearch ui`` prints it."""
    tokens = OneTimeTokens()
    app = create_app(ts, ring, config=WebConfig(allowed_hosts=LOOPBACK_HOSTS), one_time=tokens)
    web = WebServer(app, "127.0.0.1:0").start()
    try:
        host, port = web.address.rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=600)  # a bound for a hang only
        conn.request("GET", "/signin/once/" + tokens.issue(ring.authenticate(key)))
        reply = conn.getresponse()
        reply.read()
        assert reply.status == 303
        conn.close()
        yield web, reply.getheader("set-cookie").split(";", 1)[0]
    finally:
        web.stop()


def ask(web: WebServer, method: str, path: str, cookie: str | None = None) -> tuple[int, dict[str, str], bytes]:
    """``method path`` over a real connection to ``web``: the status, the headers (lower-cased names), the body."""
    host, port = web.address.rsplit(":", 1)
    conn = http.client.HTTPConnection(host, int(port), timeout=600)  # a bound for a hang only
    try:
        conn.request(method, path, headers={"cookie": cookie} if cookie else {})
        reply = conn.getresponse()
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read()
    finally:
        conn.close()
