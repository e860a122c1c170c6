"""Round 22 (RT4): the agent runtime and the service's edges as an agent runtime meets them.

Real gRPC servers on 127.0.0.1 over real Milvus Lite and file traces, reached by real clients. No timing asserts.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import tomli_w

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.client import Client
from trajsearch.service.server import ServiceServer

WAIT = 120  # seconds: a bound on a wait, not a speed target


def test_a_key_file_nested_too_deeply_keeps_the_keys_and_fails_no_call(tmp_path: Path, caplog) -> None:
    """A key file rewritten with arrays nested thousands deep made both parsers raise RecursionError, which neither
    the reload (it caught KeyConfigError and OSError) nor the interceptor (authentication ran outside its try)
    caught: one call a second failed ``UNKNOWN: Exception calling application: maximum recursion depth exceeded``,
    unlogged. It is now a key file that does not load: the keys read before stay in use, the operator is told."""
    acme = new_key()
    keys = tmp_path / "keys.toml"
    keys.write_text(tomli_w.dumps({"keys": [key_entry(acme, tenant="acme", role="read")]}))
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    caplog.set_level(logging.INFO, logger="trajsearch.service")
    server = ServiceServer(ts, KeyRing.load(keys), address="127.0.0.1:0").start()
    try:
        with Client(server.address, acme, timeout=WAIT) as client:
            assert client.whoami()["tenant"] == "acme"
            keys.write_text("keys = " + "[" * 5000 + "]" * 5000 + "\n")
            end = time.monotonic() + WAIT
            while not any("nested too deeply" in r.getMessage() for r in caplog.records):
                assert client.whoami()["tenant"] == "acme"  # every call answered, by the keys read before
                assert time.monotonic() < end, "the log never said the key file does not load"
            assert client.whoami()["tenant"] == "acme"
    finally:
        server.stop(grace=1)
        ts.close()
