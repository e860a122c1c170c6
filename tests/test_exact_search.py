"""Filtered and grouped search are exact (issue 12): checked against numpy on the same rows.

Real Milvus Lite in a temp dir, through ``TrajectoryIndex`` and ``TrajSearch``. Rows are
written with chosen vectors (runs of many near rows, runs near each other), the shape where
an approximate index under a filter, and Milvus' best-effort group_by, came back short.
Query vectors come from the project's hashing test embedder, or are drawn near a row.
"""

from __future__ import annotations

import copy
import logging
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from pymilvus import MilvusClient, MilvusException

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.batch import LocalServer
from trajsearch.represent import row_id
from trajsearch.search import TrajSearch
from trajsearch.store import layout
from trajsearch.store.fields import OUTPUT_FIELDS
from trajsearch.store.filters import Filters
from trajsearch.store.index import TrajectoryIndex
from trajsearch.store.layout import (
    COLLECTION, EPISODES, EPISODES_APART, MIGRATING, PASSAGES, STEPS, IndexSettings, StoreNeedsMigrationError,
    partition_name,
)
from trajsearch.store import lite_search
from trajsearch.store.lite import InProcessReads

DIM = 64  # the hashing test embedder's
SETTINGS = IndexSettings(embedder=HashingEmbedder.name, dim=DIM, window=3, stride=2)
LEVELS = ("task", "summary", "step", "failure")
OUTCOMES = ("success", "failure", "infra_error", "unknown")
ENVS = ("env-1", "env-2", "env-3")
TOOLS = ("bash", "edit", "search", "browser", "python")
TOL = 1e-5


def _unit(v):
    v = np.asarray(v, dtype=np.float32)
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


class Rows:
    """Runs of near rows, crowded around a few centres; the records and the same rows in numpy."""

    def __init__(self, n_runs: int, *, seed: int = 7, tenants=("acme", "beta")) -> None:
        self.rng = np.random.default_rng(seed)
        self.centres = _unit(self.rng.normal(size=(4, DIM)))
        self.records: dict[str, dict] = {}
        for t in range(n_runs):
            self.add_run(f"run-{t:04d}", tenants[t % len(tenants)] if t % 5 else tenants[0])

    def add_run(self, tid: str, tenant: str, *, outcome: str | None = None, n_steps: int | None = None) -> None:
        rng = self.rng
        outcome = outcome or OUTCOMES[int(rng.choice(4, p=(0.5, 0.3, 0.15, 0.05)))]
        env, tools = ENVS[int(rng.integers(3))], sorted(rng.choice(TOOLS, size=int(rng.integers(1, 3)), replace=False))
        n_steps = n_steps or int(rng.integers(8, 30))
        levels = ["task", "summary"] + ["step"] * n_steps + (["failure"] if outcome == "failure" else [])
        steps = [-1, -1] + [2 * i for i in range(n_steps)] + ([-1] if outcome == "failure" else [])
        vectors = self.vectors(len(levels))
        for level, step, vector in zip(levels, steps, vectors):
            rid = row_id(tenant, tid, level, step)
            self.records[rid] = {
                "id": rid, "tenant": tenant, "trajectory_id": tid, "level": level, "step_index": step,
                "step_end": step + 2 if level == "step" else -1, "task_id": tid, "task_family": "",
                "policy_version": "p1", "env_version": env, "tool_versions": {}, "tools": list(tools),
                "outcome": outcome, "reward": None, "quality_score": None, "created_at": 1_767_225_600,
                "text": f"{level} {step} of {tid}", "steps": [], "trace_uri": f"file:///none/{tid}",
                "content_hash": "t", "embedding": vector.tolist(),
            }

    def vectors(self, n: int) -> np.ndarray:
        centre = self.centres[self.rng.integers(len(self.centres))]
        run = _unit(centre + self.rng.normal(scale=0.5 / np.sqrt(DIM), size=DIM))
        return _unit(run + self.rng.normal(scale=0.45 / np.sqrt(DIM), size=(n, DIM)))

    def rewrite_run(self, tid: str, outcome: str) -> list[dict]:
        rows = [r for r in self.records.values() if r["trajectory_id"] == tid]
        for row, vector in zip(rows, self.vectors(len(rows))):
            row.update(embedding=vector.tolist(), outcome=outcome if row["level"] != "failure" else row["outcome"])
        return rows

    def delete_run(self, tid: str) -> None:
        self.records = {k: r for k, r in self.records.items() if r["trajectory_id"] != tid}

    def query(self, tenant: str = "acme") -> np.ndarray:
        ids = [k for k, r in self.records.items() if r["tenant"] == tenant]
        base = np.asarray(self.records[ids[int(self.rng.integers(len(ids)))]]["embedding"])
        return _unit(base + self.rng.normal(scale=0.4 / np.sqrt(DIM), size=DIM))

    # -- ground truth --

    def scored(self, q: np.ndarray, f: Filters) -> list[tuple[float, dict]]:
        rows = [r for r in self.records.values() if f.matches(r)]
        return sorted(((float(np.dot(q, r["embedding"])), r) for r in rows), key=lambda x: -x[0])

    def true_groups(self, q: np.ndarray, f: Filters, k: int, group_size: int) -> list[tuple[str, list[tuple[float, str]]]]:
        groups: dict[str, list[tuple[float, str]]] = {}
        for score, row in self.scored(q, f):
            members = groups.setdefault(row["trajectory_id"], [])
            if len(members) < group_size:
                members.append((score, row["id"]))
        return list(groups.items())[:k]


def write(index: TrajectoryIndex, records) -> None:
    records = list(records)
    for start in range(0, len(records), 500):
        index.upsert(records[start:start + 500])


def assert_top_k(rows: Rows, q: np.ndarray, f: Filters, hits: list[dict], k: int) -> None:
    """``hits`` are the true top-k inside ``f``: as many as match (up to k), each inside the filters
    and among the top k (a tie with the k-th score counts)."""
    truth = rows.scored(q, f)
    assert len(hits) == min(k, len(truth)), f"{len(hits)} hits, {len(truth)} rows match {f}"
    if not truth:
        return
    kth = truth[: k][-1][0]
    top = {r["id"] for _, r in truth[:k]}
    for hit in hits:
        row = rows.records[hit["id"]]
        assert f.matches(row), f"{hit['id']} is outside {f}"
        assert hit["id"] in top or np.dot(q, row["embedding"]) >= kth - TOL, f"{hit['id']} is not in the top {k}"


def assert_groups(rows: Rows, q: np.ndarray, f: Filters, hits: list[dict], k: int, group_size: int) -> None:
    """``hits`` are the true top-k runs inside ``f``, best first, each with its best ``group_size`` rows."""
    truth = rows.true_groups(q, f, k, group_size)
    got: dict[str, list[dict]] = {}
    for hit in hits:
        assert f.matches(rows.records[hit["id"]])
        got.setdefault(hit["trajectory_id"], []).append(hit)
    assert len(got) == len(truth), f"{len(got)} runs, want {len(truth)}"
    for (tid, members), (got_tid, got_members) in zip(truth, got.items()):
        assert abs(members[0][0] - got_members[0]["score"]) < TOL, f"run {got_tid} in the place of {tid}"
        assert len(got_members) == len(members), f"run {got_tid}: {len(got_members)} rows, want {len(members)}"
        for (score, _), hit in zip(members, got_members):
            assert abs(score - hit["score"]) < TOL


CASES = [
    Filters(tenant="acme"),
    Filters(tenant="acme", levels=("step", "failure")),
    Filters(tenant="acme", outcomes=("failure", "infra_error")),
    Filters(tenant="acme", levels=("step",), env_versions=("env-2",), outcomes=("failure",)),
    Filters(tenant="acme", tools=("browser", "python")),
    Filters(tenant="acme", levels=("step",), outcomes=("success", "unknown"), exclude_trajectory_ids=("run-0000", "run-0005")),
    Filters(tenant="acme", levels=("task", "summary"), outcomes=("success",)),  # exemplar candidates: one partition
    Filters(tenant="acme", levels=("failure", "task")),  # warnings and novelty: the same partition
    Filters(tenant="acme", levels=("summary", "step")),  # both partitions
]


@pytest.fixture
def rows():
    return Rows(80)


@pytest.fixture
def index(tmp_path, rows):
    idx = TrajectoryIndex(str(tmp_path / "milvus.db"), SETTINGS)
    write(idx, rows.records.values())
    idx.flush()
    yield idx
    idx.close()


def check_all(index: TrajectoryIndex, rows: Rows, queries: int = 6) -> None:
    for f in CASES:
        for _ in range(queries):
            q = rows.query()
            assert_top_k(rows, q, f, index.search(q, f, limit=10), 10)
    for group_size in (1, 3):
        for f in CASES[1:4]:
            for _ in range(queries):
                q = rows.query()
                hits = index.search(q, f, limit=10, group_by_trajectory=True, group_size=group_size)
                assert_groups(rows, q, f, hits, 10, group_size)


def test_filtered_top_k_is_exact(index, rows):
    assert index.count() == len(rows.records) > 1_500
    for f in CASES:
        for _ in range(12):
            q = rows.query()
            assert_top_k(rows, q, f, index.search(q, f, limit=10), 10)
            assert_top_k(rows, q, f, index.search(q, f, limit=37), 37)


def test_scores_are_cosines_whatever_length_the_vectors_come_in(tmp_path, rows):
    # the embedded index ranks by inner product: it must scale what it is handed to unit length
    idx = TrajectoryIndex(str(tmp_path / "scaled.db"), SETTINGS)
    try:
        scale = np.linspace(0.2, 7.0, len(rows.records))
        write(idx, [dict(r, embedding=list(np.asarray(r["embedding"]) * s)) for r, s in zip(rows.records.values(), scale)])
        idx.flush()
        for f in CASES[:3]:
            q = rows.query()
            hits = idx.search(q * 4.5, f, limit=10)
            assert_top_k(rows, q, f, hits, 10)
            for hit in hits:
                assert abs(hit["score"] - float(np.dot(q, rows.records[hit["id"]]["embedding"]))) < TOL
    finally:
        idx.close()


def test_a_handful_of_matching_rows_all_come_back(index, rows):
    # the 10k-row report: 8 rows matched and 1 came back; here 2 runs of 4 rows match, far from the query
    for t in ("few-1", "few-2"):
        rows.add_run(t, "acme", outcome="infra_error", n_steps=2)
    for row in rows.records.values():
        if row["trajectory_id"].startswith("few-"):
            row["env_version"] = "env-rare"
    write(index, [r for r in rows.records.values() if r["trajectory_id"].startswith("few-")])
    f = Filters(tenant="acme", env_versions=("env-rare",))
    for _ in range(5):
        q = rows.query()
        hits = index.search(q, f, limit=10)
        assert len(hits) == 8
        assert_top_k(rows, q, f, hits, 10)
        assert_groups(rows, q, f, index.search(q, f, limit=10, group_by_trajectory=True, group_size=3), 10, 3)


def test_grouped_search_returns_the_true_top_runs_filled(index, rows, monkeypatch):
    calls = []
    nearest = index._nearest
    monkeypatch.setattr(index, "_nearest", lambda *a, **kw: calls.append(a) or nearest(*a, **kw))
    asked = 0
    for group_size in (1, 3, 5):
        for f in (Filters(tenant="acme", levels=("step", "failure")), Filters(tenant="acme", outcomes=("failure",))):
            for _ in range(8):
                q = rows.query()
                hits = index.search(q, f, limit=10, group_by_trajectory=True, group_size=group_size)
                assert_groups(rows, q, f, hits, 10, group_size)
                asked += 1
    # these rows crowd Milvus' own group_by: the follow-up searches ran, and were needed
    assert len(calls) > asked


def test_facade_grouped_search_is_exact(tmp_path, rows):
    embedder = HashingEmbedder()
    with TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=embedder) as ts:
        write(ts.index, rows.records.values())
        for text in ("pytest failed on payments", "deploy timed out", "edit the config file", "browser login"):
            q = embedder.encode([text])[0]
            for group_size in (1, 3):
                hits = ts.search(text, tenant="acme", levels=["step", "failure"], k=10, group_size=group_size,
                                 mode="dense")
                f = Filters(tenant="acme", levels=("step", "failure"))
                assert_groups(rows, q, f, [h.to_dict() for h in hits], 10, group_size)
            hits = ts.search(text, tenant="acme", outcome=["failure", "infra_error"], k=10, group_by_trajectory=False,
                             mode="dense")
            assert_top_k(rows, q, Filters(tenant="acme", outcomes=("failure", "infra_error")),
                         [h.to_dict() for h in hits], 10)


def test_exact_after_upserts_deletes_and_reopen(tmp_path, rows):
    path = str(tmp_path / "writes.db")
    index = TrajectoryIndex(path, SETTINGS)
    try:
        write(index, rows.records.values())
        index.flush()
        check_all(index, rows, queries=3)
        acme = sorted({r["trajectory_id"] for r in rows.records.values() if r["tenant"] == "acme"})
        for tid in acme[:6]:  # new vectors and another outcome, same ids: old versions must not match
            write(index, rows.rewrite_run(tid, "unknown"))
        for tid in acme[6:10]:
            index.delete_trajectory("acme", tid)
            rows.delete_run(tid)
        rows.add_run("late-1", "acme")
        write(index, [r for r in rows.records.values() if r["trajectory_id"] == "late-1"])
        assert index.count() == len(rows.records)
        check_all(index, rows, queries=3)  # unflushed
    finally:
        index.close()
    reopened = TrajectoryIndex(path, SETTINGS)
    try:
        assert reopened.count() == len(rows.records)
        check_all(reopened, rows, queries=3)
    finally:
        reopened.close()


def test_tenants_have_their_own_partitions(index, rows):
    names = set(index.client.list_partitions(COLLECTION))
    assert {partition_name("acme"), partition_name("beta")} <= names
    assert {partition_name("acme", EPISODES), partition_name("beta", EPISODES)} <= names
    assert partition_name("acme", PASSAGES) not in names  # no passage rows written: no partition for them
    assert index.search(rows.query(), Filters(tenant="nobody"), limit=5) == []
    assert index.count("nobody") == 0
    assert partition_name("nobody") not in index.client.list_partitions(COLLECTION)  # reads create nothing
    tenants = ["a", "A", "a.b", "a-b", "a_b", "a_2eb", "0x", "a" * 64]
    made = [partition_name(t) for t in tenants]
    assert len(set(made)) == len(tenants)
    assert all(n.startswith("t_") and n.replace("_", "").isalnum() for n in made)


def test_reading_rows_of_some_levels_reads_every_such_row_and_no_other(index, rows):
    for levels in [("failure",), ("task", "summary"), ("step",), ("summary", "step"), ()]:
        f = Filters(tenant="acme", levels=levels)
        got = sorted(r["id"] for r in index.iterate(["id"], expr=f.to_expr(), tenant="acme", levels=levels or LEVELS))
        assert got == sorted(k for k, r in rows.records.items() if f.matches(r)), levels


# -- stores made by the previous version --------------------------------------------------------


def make_old_store(path: Path, rows: Rows, *, partition_key: bool = True, index_type: str = "HNSW",
                   episodes_apart: bool = False) -> None:
    """A store as an earlier version made it (its ``_open_or_create``, written out with pymilvus),
    rows written as its ``upsert`` did: by default the first one (``tenant`` the partition key,
    HNSW); ``partition_key=False``: a partition per tenant holding all its rows, and with
    ``episodes_apart`` task, summary and failure rows in a partition of their own."""
    client = MilvusClient(str(path))
    index_params = client.prepare_index_params()
    index_params.add_index("embedding", index_type=index_type, metric_type="COSINE",
                           params={"M": 16, "efConstruction": 200} if index_type == "HNSW" else {})
    client.create_collection(
        COLLECTION, schema=layout.schema(DIM, layout.LEXICAL_MEMORY, partition_key=partition_key),
        index_params=index_params,
        properties={"trajsearch.schema_version": layout.SCHEMA_VERSION, "trajsearch.embedder": SETTINGS.embedder,
                    "trajsearch.dim": str(DIM), "trajsearch.window": "3", "trajsearch.stride": "2",
                    "trajsearch.lexical": layout.LEXICAL_MEMORY, **({EPISODES_APART: "1"} if episodes_apart else {})},
    )
    records = list(rows.records.values())
    for start in range(0, len(records), 500):
        if partition_key:
            client.upsert(COLLECTION, data=records[start:start + 500])
            continue
        for name, some in layout.by_partition(records[start:start + 500], episodes_apart).items():
            if not client.has_partition(COLLECTION, name):
                client.create_partition(COLLECTION, name)
            client.upsert(COLLECTION, data=some, partition_name=name)
    client.flush(COLLECTION)
    client.close()
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(path))


def assert_current_layout(index: TrajectoryIndex) -> None:
    fields = index.client.describe_collection(COLLECTION)["fields"]
    assert not any(f.get("is_partition_key") for f in fields)
    dense = index.client.describe_index(COLLECTION, "embedding")
    assert (dense["index_type"], dense["metric_type"]) == ("FLAT", "IP")
    assert not index.client.has_collection(MIGRATING)


def test_store_of_the_previous_version_is_migrated_on_open(tmp_path, rows, caplog):
    path = tmp_path / "old.db"
    make_old_store(path, rows)
    with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"):
        index = TrajectoryIndex(str(path), SETTINGS)
    try:
        assert "migrating" in caplog.text and "the current layout" in caplog.text
        assert_current_layout(index)
        assert index.count() == len(rows.records)
        assert index.count("beta") == sum(r["tenant"] == "beta" for r in rows.records.values())
        check_all(index, rows, queries=2)
        got = index.get([next(iter(rows.records))], Filters(tenant=next(iter(rows.records.values()))["tenant"]))
        assert got and got[0]["text"] == next(iter(rows.records.values()))["text"]  # every field came over
    finally:
        index.close()
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"):
        again = TrajectoryIndex(str(path), SETTINGS)  # once only
    try:
        assert "migrat" not in caplog.text
        assert again.count() == len(rows.records)
    finally:
        again.close()


def test_an_unfinished_migration_is_discarded_and_redone(tmp_path, rows):
    path = tmp_path / "old.db"
    make_old_store(path, rows)
    client = MilvusClient(str(path))  # a copy that died part-way: some rows, no "complete" mark
    client.create_collection(MIGRATING, schema=layout.schema(DIM, layout.LEXICAL_MEMORY, partition_key=False))
    client.insert(MIGRATING, data=list(rows.records.values())[:10])
    client.close()
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(path))
    index = TrajectoryIndex(str(path), SETTINGS)
    try:
        assert_current_layout(index)
        assert index.count() == len(rows.records)
        check_all(index, rows, queries=1)
    finally:
        index.close()


@pytest.mark.parametrize("earlier, message", [
    # task, summary and failure rows in the step rows' partition: copied into the current layout
    (dict(partition_key=False, index_type="FLAT"), "migrating"),
    # the layout is current but the index approximate: the index alone is replaced
    (dict(partition_key=False, episodes_apart=True), "replacing the dense index (HNSW COSINE) with FLAT IP"),
    # the layout is current, the index exact, but by COSINE (milvus-lite re-normalises every row per query)
    (dict(partition_key=False, episodes_apart=True, index_type="FLAT"), "replacing the dense index (FLAT COSINE)"),
])
def test_a_store_of_an_earlier_partition_layout_is_brought_up_to_date(tmp_path, rows, caplog, earlier, message):
    path = tmp_path / "earlier.db"
    make_old_store(path, rows, **earlier)
    with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"):
        index = TrajectoryIndex(str(path), SETTINGS)
    try:
        assert message in caplog.text
        assert_current_layout(index)
        assert partition_name("acme", EPISODES) in index.client.list_partitions(COLLECTION)
        assert index.count() == len(rows.records)
        check_all(index, rows, queries=1)
    finally:
        index.close()


def test_an_empty_store_of_the_previous_index_is_brought_up_to_date(tmp_path, rows, caplog):
    path = tmp_path / "empty.db"  # made by the previous version, never written to
    make_old_store(path, SimpleNamespace(records={}), partition_key=False, index_type="FLAT", episodes_apart=True)
    with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"):
        index = TrajectoryIndex(str(path), SETTINGS)
    try:
        assert "replacing the dense index (FLAT COSINE) with FLAT IP" in caplog.text
        assert_current_layout(index)
        write(index, rows.records.values())
        index.flush()
        check_all(index, rows, queries=1)
    finally:
        index.close()


def _scaled(rows: Rows) -> SimpleNamespace:
    """The same rows with vectors not of unit length (an embedder that does not normalise)."""
    return SimpleNamespace(records={k: dict(r, embedding=list(np.asarray(r["embedding"]) * 3.0))
                                    for k, r in rows.records.items()})


def test_an_old_store_of_vectors_not_unit_length_is_copied_at_unit_length(tmp_path, rows, caplog):
    # inner product ranks by cosine only on unit vectors: such a store cannot keep its rows under a new index
    path = tmp_path / "scaled.db"
    make_old_store(path, _scaled(rows), partition_key=False, index_type="FLAT", episodes_apart=True)
    with caplog.at_level(logging.WARNING, logger="trajsearch.store.index"):
        index = TrajectoryIndex(str(path), SETTINGS)
    try:
        assert "migrating" in caplog.text
        assert_current_layout(index)
        check_all(index, rows, queries=1)  # scores are the unit rows' cosines
    finally:
        index.close()


def test_a_served_store_of_vectors_not_unit_length_keeps_ranking_by_cosine(tmp_path, rows):
    path = tmp_path / "scaled.db"
    make_old_store(path, _scaled(rows), partition_key=False, episodes_apart=True)  # HNSW: replaced over the socket
    with LocalServer(str(path)) as server:
        index = TrajectoryIndex(server.uri, SETTINGS)
        try:
            assert index.client.describe_index(COLLECTION, "embedding")["metric_type"] == "COSINE"
            check_all(index, rows, queries=1)
        finally:
            index.close()


def test_a_served_old_store_is_refused_with_the_command_that_migrates_it(tmp_path, rows):
    path = tmp_path / "old.db"
    make_old_store(path, rows)
    with LocalServer(str(path)) as server:
        with pytest.raises(StoreNeedsMigrationError, match="trajsearch stats --uri") as err:
            TrajectoryIndex(server.uri, SETTINGS)
        assert "\n" not in str(err.value)


def test_a_served_store_keeping_task_rows_with_the_steps_is_searched_as_it_is(tmp_path, rows):
    # over a socket the store cannot be copied into the current layout: it is read and written in its own
    path = tmp_path / "steps.db"
    make_old_store(path, rows, partition_key=False, index_type="FLAT")
    with LocalServer(str(path)) as server:
        index = TrajectoryIndex(server.uri, SETTINGS)
        try:
            assert not index.episodes_apart
            check_all(index, rows, queries=1)
            rows.add_run("late", "acme", outcome="success", n_steps=3)
            write(index, [r for r in rows.records.values() if r["trajectory_id"] == "late"])
            assert partition_name("acme", EPISODES) not in index.client.list_partitions(COLLECTION)
            check_all(index, rows, queries=1)
        finally:
            index.close()


def test_an_embedded_store_reads_in_process_with_the_answers_grpc_gives(index, rows):
    """Searches and gets on an embedded store skip the gRPC hop to the engine running in this
    process (store/lite.py: most of ``context_for``'s time went to it) and answer as gRPC does:
    the same rows in the same order, the same scores and fields, JSON decoded; engine errors as
    MilvusException."""
    assert isinstance(index.reads, InProcessReads)  # a milvus-lite that hides its engine fails here, not silently slower
    over_grpc = copy.copy(index)
    over_grpc.reads = index.client
    some = [r for r in rows.records.values() if r["tenant"] == "acme"][:40]
    index.upsert([dict(r, steps=[{"index": i, "action": "bash", "text": f"ls {i}"}], tool_versions={"bash": "5.2"},
                       reward=0.5) for i, r in enumerate(some)])

    def same(a: list[dict], b: list[dict]) -> None:
        assert [h["id"] for h in a] == [h["id"] for h in b]
        for x, y in zip(a, b):
            assert abs(x.pop("score") - y.pop("score")) < TOL
            assert x == y

    for f in CASES:
        q = rows.query()
        same(index.search(q, f, limit=10), over_grpc.search(q, f, limit=10))
        same(index.search(q, f, limit=5, group_by_trajectory=True, group_size=3),
             over_grpc.search(q, f, limit=5, group_by_trajectory=True, group_size=3))
    ids = [r["id"] for r in some] + ["no-such-row"]
    fields = [*OUTPUT_FIELDS, "embedding"]
    got = index.get(ids, Filters(tenant="acme"), fields=fields)
    assert got == over_grpc.get(ids, Filters(tenant="acme"), fields=fields)
    assert len(got) == len(some) and got[0]["steps"] == [{"index": 0, "action": "bash", "text": "ls 0"}]
    assert got[0]["tool_versions"] == {"bash": "5.2"}
    for reads in (index.reads, index.client):
        with pytest.raises(MilvusException):
            reads.search(COLLECTION, data=[rows.query().tolist()], filter="tenant ==", limit=3)


def test_embedded_dense_search_answers_as_the_engines_own_executor(tmp_path, rows):
    """On a local path the engine's dense search runs without its two per-row Python loops
    (store/lite_search.py: ~80 of ~100 ms in a 44k-row tenant). Its answers are the engine's own,
    bit for bit: the same rows, order, scores and fields, with the cases that make rows not
    live (upserted runs, deleted runs, flushed or not) and every filter, searched before and after
    each change (liveness is kept between writes)."""
    path = str(tmp_path / "both.db")
    index = TrajectoryIndex(path, SETTINGS)
    assert lite_search.install()  # the pinned milvus-lite: a version the replacement does not know fails here

    def both(q: np.ndarray, f: Filters, **kw) -> list[dict]:
        ours = index.search(q, f, **kw)
        lite_search.uninstall()
        try:
            engine = index.search(q, f, **kw)
        finally:
            lite_search.install()
        assert ours == engine, f"{f} {kw}"
        return ours

    def check() -> None:
        for f in CASES:
            for _ in range(2):
                q = rows.query()
                assert_top_k(rows, q, f, both(q, f, limit=10), 10)
                both(q, f, limit=7, group_by_trajectory=True, group_size=3)

    try:
        write(index, rows.records.values())
        index.flush()
        check()
        acme = sorted({r["trajectory_id"] for r in rows.records.values() if r["tenant"] == "acme"})
        for batch in (acme[9:11], acme[11:13]):  # deleted and flushed: same segments, new tombstones (liveness is kept)
            for tid in batch:
                index.delete_trajectory("acme", tid)
                rows.delete_run(tid)
            index.flush()
            check()
        for tid in acme[:4]:  # new versions of rows already flushed: two versions of each key
            write(index, rows.rewrite_run(tid, "unknown"))
        for tid in acme[4:7]:  # deleted, the deletes not flushed
            index.delete_trajectory("acme", tid)
            rows.delete_run(tid)
        check()
        index.flush()
        for tid in acme[7:9]:  # deleted after a flush of new versions
            index.delete_trajectory("acme", tid)
            rows.delete_run(tid)
        write(index, rows.rewrite_run(acme[0], "success"))  # a third version
        check()
    finally:
        index.close()
    reopened = TrajectoryIndex(path, SETTINGS)
    try:
        index = reopened
        check()
    finally:
        reopened.close()


def test_rows_by_key_are_the_ones_grpc_gives_through_writes_and_reopen(tmp_path, rows):
    """Gets on a local path read each segment's rows in one take, or cell by cell when few
    (lite_search.get_rows), instead of the engine's scalar-by-scalar build; the rows are the
    engine's own (asked over gRPC): the same keys, order, versions and fields, with rows in the
    memtable, new versions, deletes flushed or not, keys that do not exist, and after a reopen."""
    path = str(tmp_path / "gets.db")
    index = TrajectoryIndex(path, SETTINGS)
    every_id = list(rows.records)[::-1] + ["no-such-row"]
    few = every_id[:: len(every_id) // 8 + 1]  # fewer than lite_search.CELL_BY_CELL rows of any one segment
    assert 0 < len(few) < lite_search.CELL_BY_CELL

    def same() -> None:
        over_grpc = copy.copy(index)
        over_grpc.reads = index.client
        for tenant in ("acme", "beta"):
            live = {i for i, r in rows.records.items() if r["tenant"] == tenant}
            for fields in ([*OUTPUT_FIELDS, "embedding"], ["trajectory_id", "outcome"], None):
                got = index.get(every_id, Filters(tenant=tenant), fields=fields)
                assert got == over_grpc.get(every_id, Filters(tenant=tenant), fields=fields)
                assert {row["id"] for row in got} == live
                assert index.get(few, Filters(tenant=tenant), fields=fields) == \
                    over_grpc.get(few, Filters(tenant=tenant), fields=fields)
        for row in index.get(every_id, Filters(tenant="acme"), fields=["embedding", "outcome"]):
            assert row["outcome"] == rows.records[row["id"]]["outcome"]
            assert np.allclose(row["embedding"], _unit(rows.records[row["id"]]["embedding"]), atol=TOL)
        # asked in this process a get looks only in the partitions of the tenant's levels filtered
        for levels in [("step",), ("task", "failure"), ("summary", "step")]:
            f = Filters(tenant="acme", levels=levels)
            got = index.get(every_id, f, fields=["level"])
            assert got == over_grpc.get(every_id, f, fields=["level"])
            assert {row["id"] for row in got} == {i for i, r in rows.records.items()
                                                  if r["tenant"] == "acme" and r["level"] in levels}
        # ... as the engine's own get does, names of no partition included (they hold nothing)
        engine = index.reads._db.get_collection(COLLECTION)
        names = [partition_name("acme", part) for part in (STEPS, EPISODES)] + [partition_name("nobody", STEPS)]
        for scope in (names, names[:1], names[2:]):
            assert lite_search.get_rows(engine, every_id, ["level", "text"], scope) == \
                engine.get(every_id, partition_names=scope, output_fields=["level", "text"])

    try:
        write(index, rows.records.values())
        same()  # every row in the memtable
        index.flush()
        same()
        acme = sorted({r["trajectory_id"] for r in rows.records.values() if r["tenant"] == "acme"})
        for tid in acme[:4]:  # new versions of flushed rows
            write(index, rows.rewrite_run(tid, "unknown"))
        for tid in acme[4:7]:  # deleted, not flushed
            index.delete_trajectory("acme", tid)
            rows.delete_run(tid)
        same()
        index.flush()
        same()  # two versions of keys in segments, tombstones flushed
        for tid in acme[7:9]:
            index.delete_trajectory("acme", tid)
            rows.delete_run(tid)
        index.flush()
        write(index, rows.rewrite_run(acme[0], "success"))  # a third version, in the memtable
        same()
    finally:
        index.close()
    index = TrajectoryIndex(path, SETTINGS)
    try:
        same()
    finally:
        index.close()


def test_an_engine_executor_other_than_the_one_replaced_is_left_in_place(monkeypatch):
    from milvus_lite.engine import collection
    from milvus_lite.search import executor_indexed

    def another_version(*args, **kwargs):
        return []

    lite_search.uninstall()
    try:
        monkeypatch.setattr(executor_indexed, "execute_search_with_index", another_version)
        monkeypatch.setattr(collection, "execute_search_with_index", another_version)
        assert not lite_search.install()
        assert collection.execute_search_with_index is another_version
    finally:
        monkeypatch.undo()
        assert lite_search.install()


def test_gets_on_an_engine_other_than_the_one_replaced_are_the_engines_own(index, rows, monkeypatch):
    from milvus_lite.engine.collection import Collection

    asked: list[list] = []
    original = Collection.get

    def another_version(self, pks, **kwargs):
        asked.append(list(pks))
        return original(self, pks, **kwargs)

    monkeypatch.setattr(Collection, "get", another_version)
    ids = [i for i, r in rows.records.items() if r["tenant"] == "acme"][:5]
    assert [row["id"] for row in index.get(ids, Filters(tenant="acme"))] == ids
    assert asked == [ids]


def test_array_filters_are_evaluated_column_wise_as_the_engine_does(index, rows):
    """The engine tests array membership (the ``tools`` filter) row by row over every column of the
    table (1.9-2.5 s a search in a 44k-row tenant); lite_search evaluates such filters column-wise,
    mask for mask the same, and leaves to the engine what it cannot promise that for."""
    from milvus_lite.search.filter import compile_filter, evaluate_mask

    no_tools = dict(next(iter(rows.records.values())), id="no-tools", trajectory_id="run-none", tools=[])
    index.upsert([no_tools])  # an empty list, unflushed: the memtable's table
    collection = index.reads._db.get_collection(COLLECTION)
    segments, _ = collection._read_snapshot()
    tables = [segment.table for segment in segments] + [collection._memtable.to_search_snapshot(
        vector_field="embedding", include_table=True)[4]]
    exprs = [
        Filters(tenant="acme", tools=("browser", "python")).to_expr(),
        Filters(tenant="acme", levels=("step",), tools=("edit",), exclude_trajectory_ids=("run-0001",)).to_expr(),
        'array_contains(tools, "edit")',
        'array_contains_all(tools, ["bash", "edit"])',
        'array_contains_any(tools, ["nothing"]) or outcome == "failure"',
        'not array_contains_any(tools, ["search", "bash"]) and level in ["step", "task"]',
    ]
    for expr in exprs:
        compiled = compile_filter(expr, collection._schema)
        assert compiled.backend == "python"  # what makes the engine walk every row
        matched = []
        for table in tables:
            got = lite_search.columnar_filter(compiled, table)
            assert got is not None, expr
            want = evaluate_mask(compiled, table)
            assert got.tolist() == want.tolist(), expr
            matched += want.tolist()
        assert 0 < sum(matched) < len(matched), expr  # the case tells rows apart
    for expr in ('array_contains(tools, "edit") and reward > 0.5',  # a field that can be null
                 'array_contains_any(tools, [])', 'array_length(tools) > 1'):
        assert lite_search.columnar_filter(compile_filter(expr, collection._schema), tables[0]) is None, expr


def test_rows_per_level_count_every_live_row_once(tmp_path, rows):
    """Stats count step rows from their partition's statistics (reading them made Milvus Lite build
    every row whole: ~7 s at 100k rows), and runs by outcome from the task rows' partition alone;
    the counts stay those of the live rows, through new versions of rows, deletes and writes not
    yet flushed."""
    from collections import Counter

    index = TrajectoryIndex(str(tmp_path / "counts.db"), SETTINGS)
    try:
        def check() -> None:
            for tenant in ("acme", "beta"):
                want = Counter(r["level"] for r in rows.records.values() if r["tenant"] == tenant)
                assert index.count_by("level", tenant) == dict(want)
                runs = Counter(r["outcome"] for r in rows.records.values() if r["tenant"] == tenant and r["level"] == "task")
                assert index.count_by("outcome", tenant, levels=("task",)) == dict(runs)
            assert index.count_by("level", "nobody") == {}

        write(index, rows.records.values())
        index.flush()
        check()
        acme = sorted({r["trajectory_id"] for r in rows.records.values() if r["tenant"] == "acme"})
        write(index, rows.rewrite_run(acme[0], "unknown"))  # new versions, not flushed
        index.delete_trajectory("acme", acme[1])
        rows.delete_run(acme[1])
        rows.add_run("late-1", "acme", n_steps=3)
        write(index, [r for r in rows.records.values() if r["trajectory_id"] == "late-1"])
        check()
        index.flush()
        check()
    finally:
        index.close()
