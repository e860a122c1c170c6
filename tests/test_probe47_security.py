"""Probe 47 (area I: security of the service, its pages and filters): what a key sees beyond its bounds.

A real server on 127.0.0.1 (gRPC, real Milvus Lite, the fast hashing test embedder) fed by ``trajsearch
ingest --server`` from real tau-bench results files kept under ``tests/fixtures/tau-bench`` (see their
SOURCE.md), each ingest tagging its runs with ``--set policy_version=...`` as an operator does for one
agent fleet's runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.client import Client
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.service.auth import KeyRing, key_entry, new_key
from trajsearch.service.server import ServiceServer

from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
#: two real tau-bench airline results files: task 0 failed and then passed (gpt-4o), and two failed runs
POLICY_1 = FIXTURES / "tau-bench" / "gpt-4o-airline-mini.json"
POLICY_2 = FIXTURES / "tau-bench" / ".real" / "gpt-4o-airline-failed-calls.json"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """A server whose tenant holds the runs of two policy versions; the keys: a writer, and readers pinned
    to policy p1, to policy p2, and to env e9 (which no run has)."""
    tmp = tmp_path_factory.mktemp("fleet")
    made = {name: new_key() for name in ("writer", "p1", "p2", "e9")}
    ring = KeyRing.from_entries([
        key_entry(made["writer"], tenant="acme", role="write"),
        dict(key_entry(made["p1"], tenant="acme", role="read", key_id="acme-p1"), policy_versions=["p1"]),
        dict(key_entry(made["p2"], tenant="acme", role="read", key_id="acme-p2"), policy_versions=["p2"]),
        dict(key_entry(made["e9"], tenant="acme", role="read", key_id="acme-e9"), env_versions=["e9"]),
    ])
    ts = TrajSearch.open(str(tmp / "milvus.db"), traces=str(tmp / "traces"), embedder=HashingEmbedder())
    with ServiceServer(ts, ring, address="127.0.0.1:0") as srv, pytest.MonkeyPatch.context() as env:
        env.setenv("TRAJSEARCH_MODEL", "hashing")
        env.setenv("TRAJSEARCH_SERVER", srv.address)
        env.setenv("TRAJSEARCH_API_KEY", made["writer"])
        for path, policy in ((POLICY_1, "p1"), (POLICY_2, "p2")):
            code, out, err = run_cli("ingest", str(path), "--set", f"policy_version={policy}")
            assert code == 0 and "ingested 2 runs" in out, out + err
        yield srv.address, made
    ts.close()


def _policies(address: str, key: str, ids: list[str]) -> dict[str, str | None]:
    with Client(address, key) as full:
        return {i: full.run(i).policy_version for i in ids}


def test_similar_runs_of_a_policy_pinned_key_stay_inside_its_pins(fleet):
    """Bug: ``SimilarRuns`` narrowed its search by the key's pinned env versions only, never by its pinned
    policy versions, so a key pinned to policy p1 (``Run``, ``Search``, ``GetTrace`` all blind to p2) was
    answered p2 runs' ids, tasks, matched step text and trace URIs, by text and by the id of its own p1
    run alike. Now a pinned policy bounds the matches as it bounds every other read."""
    address, keys = fleet
    with Client(address, keys["p1"]) as pinned:
        own = [h.trajectory_id for h in pinned.search("cancel the reservation", k=20)]
        assert own and set(_policies(address, keys["writer"], own).values()) == {"p1"}
        by_text = pinned.similar_runs(text="cancel the reservation", k=10)
        by_id = pinned.similar_runs(own[0], k=10)
    matched = [m.trajectory_id for m in by_text + by_id]
    assert matched, "the p1 runs are like each other and like the text"
    assert set(_policies(address, keys["writer"], matched).values()) == {"p1"}
    assert all(m.best.policy_version == "p1" for m in by_text + by_id)
    with Client(address, keys["p2"]) as other:  # and the other way round
        seen = [m.trajectory_id for m in other.similar_runs(text="cancel the reservation", k=10)]
    assert seen and set(_policies(address, keys["writer"], seen).values()) == {"p2"}
