"""``health`` without an API key: a liveness probe holds none.

Against a real server on 127.0.0.1 (``serve_store``: real Milvus Lite and file traces, the fast hashing test
embedder) and the real CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from trajsearch.service.validate import Limits

from cli_support import own_lines
from conftest import make_run
from process_support import cli_env
from service_support import key_ring, serve_store


@pytest.fixture(scope="module")
def keys():
    return key_ring(acme=dict(tenant="acme", role="read"))


@pytest.fixture(scope="module")
def server(tmp_path_factory, keys):
    srv = serve_store(tmp_path_factory.mktemp("health"), keys[1], [make_run("run-1")], Limits())
    yield srv
    srv.stop(grace=1)
    srv.ts.close()


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


def test_health_with_a_stale_key_says_the_status_and_that_the_key_was_refused(server, tmp_path) -> None:
    """Review RALL-B: a liveness probe where an old key lingers exited 2 ("refused the API key") and printed no
    status, reporting a serving server as down."""
    done = subprocess.run([sys.executable, "-m", "trajsearch.cli", "health", "--server", server.address],
                          env=cli_env(TRAJSEARCH_API_KEY="stale-key-0123456789abcdef"), capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"status": "SERVING"}
    assert "refused" in " ".join(own_lines(done.stderr))
