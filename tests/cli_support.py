"""The CLI on both backends, for the tests of any command: the ``backend`` fixture and ``run_cli``.

One CLI (``trajsearch.cli``) renders the results; ``--server`` / ``$TRAJSEARCH_SERVER`` only
changes where the verbs run, so a command's test runs once per backend with the same assertions.
The server is real (gRPC on 127.0.0.1) and so is Milvus Lite; the embedder is the fast hashing
*test* embedder. A test module uses them with ``from cli_support import backend, run_cli``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from trajsearch.cli import app
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.server import ServiceServer


#: A line gRPC's C core logs itself (absl's format: severity letter, date, time, thread, file:line]): pymilvus'
#: channel to milvus-lite may log one at exit on a loaded machine ("epoll_wait error: Bad file descriptor").
GRPC_CORE_LOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] ")


def own_lines(stderr: str) -> list[str]:
    """The lines of a command's stderr that are its own: not blank, not logged by gRPC's C core."""
    return [line for line in stderr.splitlines() if line.strip() and not GRPC_CORE_LOG.match(line)]


def unnoted(stderr: str) -> list[str]:
    """:func:`own_lines` but the search's weak-match note, which the hashing test embedder's cosines (no meaning)
    give most searches: for tests of what else a search says."""
    return [line for line in own_lines(stderr) if not line.startswith("note: weak match")]


@pytest.fixture
def newcomer(tmp_path: Path, monkeypatch) -> None:
    """The embedded store under the test's own folder, the hashing embedder, and no server, tenant or key set
    anywhere: a newcomer's shell."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT", "TRAJSEARCH_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
    monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))


@pytest.fixture(params=["embedded", "server"])
def backend(request, tmp_path: Path, monkeypatch):
    """Environment for one backend; yields its name. The server owns its own store.

    Either way the CLI's tenant is ``acme``: set for the embedded store, the key's on the server.
    """
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    monkeypatch.delenv("TRAJSEARCH_SERVER", raising=False)
    monkeypatch.delenv("TRAJSEARCH_TENANT", raising=False)
    if request.param == "embedded":
        monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("TRAJSEARCH_URI", str(tmp_path / "home" / "milvus.db"))
        monkeypatch.setenv("TRAJSEARCH_TRACES", str(tmp_path / "home" / "traces"))
        monkeypatch.setenv("TRAJSEARCH_TENANT", "acme")
        yield "embedded"
        return
    key = new_key()
    ts = TrajSearch.open(str(tmp_path / "srv.db"), traces=str(tmp_path / "srv-traces"), embedder=HashingEmbedder())
    keys = KeyRing.from_entries([key_entry(key, tenant="acme", role="write")])
    with ServiceServer(ts, keys, address="127.0.0.1:0") as srv:
        monkeypatch.setenv("TRAJSEARCH_SERVER", srv.address)
        monkeypatch.setenv("TRAJSEARCH_API_KEY", key)
        yield "server"
    ts.close()


def run_cli(*args: str) -> tuple[int, str, str]:
    """``trajsearch ARGS...`` in this process: its exit code, stdout and stderr."""
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr
