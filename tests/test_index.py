"""The core index through the façade, on real Milvus Lite (plumbing: the hashing test embedder)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.store.index import SchemaMismatchError

from conftest import failing_run, make_run


def _step_run(tid: str, n: int, **kw):
    steps = [("bash", {"command": f"echo step-{i}"}, f"output of step number {i} token{i}") for i in range(n)]
    return make_run(tid, steps=steps, **kw)


def test_reingest_is_idempotent(hashing_ts):
    runs = [make_run("r1"), failing_run("r2", "ModuleNotFoundError: No module named 'yaml'")]
    first = hashing_ts.add(runs)
    rows = hashing_ts.index.count()
    assert (first.ingested, first.unchanged) == (2, 0)
    # r1: task, summary, windows [0-2],[2-3]; r2: task, summary, window [0-1], failure
    assert rows == 4 + 4

    again = hashing_ts.add(runs)
    assert (again.ingested, again.unchanged) == (0, 2)
    assert hashing_ts.index.count() == rows


def test_changed_run_replaces_its_rows(hashing_ts):
    hashing_ts.add([_step_run("r1", 9)])
    assert hashing_ts.stats(tenant="acme")["rows_by_level"]["step"] == 4  # starts 0,2,4,6 (6-8)
    hashing_ts.add([_step_run("r1", 3)])
    stats = hashing_ts.stats(tenant="acme")
    assert stats["rows_by_level"] == {"task": 1, "summary": 1, "step": 1}
    assert stats["trajectories"] == 1


def test_changed_runs_of_a_batch_lose_their_old_rows_together_and_nothing_else(hashing_ts):
    """Changed runs are deleted a batch at a time (one delete per tenant): each keeps only its new rows,
    while an unchanged run and a namesake in another tenant keep theirs, dense and lexical."""
    old = [_step_run("r1", 9), _step_run("r2", 9), _step_run("same", 9),
           _step_run("r1", 9).model_copy(update={"tenant": "beta"})]
    hashing_ts.add(old)
    report = hashing_ts.add([_step_run("r1", 3), _step_run("r2", 3), _step_run("same", 9)])
    assert (report.ingested, report.unchanged) == (2, 1)
    windows = Counter(r["trajectory_id"] for r in hashing_ts.index.iterate(["trajectory_id"], tenant="acme", levels=("step",)))
    assert windows == {"r1": 1, "r2": 1, "same": 4}
    assert hashing_ts.stats(tenant="beta")["rows_by_level"]["step"] == 4
    stale = [h for h in hashing_ts.search("step 7", tenant="acme", levels="step", k=20, mode="lexical",
                                          group_by_trajectory=False) if h.trajectory_id in ("r1", "r2")]
    assert all(h.step_index < 3 for h in stale)


def test_tenant_isolation_and_injection(hashing_ts):
    hashing_ts.add([make_run("a1", tenant="acme"), make_run("b1", tenant="beta"), make_run("b2", tenant="beta")])
    hits = hashing_ts.search("pytest payments", tenant="acme", k=10)
    assert {h.trajectory_id for h in hits} == {"a1"}
    assert {h.tenant for h in hits} == {"acme"}
    for evil in ['acme" or tenant != "acme', 'acme" || tenant like "%', "acme\\", "acme\n"]:
        with pytest.raises(ValueError):
            hashing_ts.search("pytest", tenant=evil, k=10)
    # a hostile value in any other filter field cannot widen the result set either
    hits = hashing_ts.search("pytest", tenant="acme", env_version='x" or tenant == "beta', k=10)
    assert hits == []
    with pytest.raises(ValueError):
        hashing_ts.similar_runs('b1" or trajectory_id != "', tenant="acme")


def test_env_version_and_outcome_filters(hashing_ts):
    hashing_ts.add([
        make_run("ok-v1", env_version="v1"),
        make_run("ok-v2", env_version="v2"),
        failing_run("bad-v1", "TimeoutError: deploy timed out", env_version="v1"),
    ])
    v1 = hashing_ts.search("deploy payments", tenant="acme", env_version="v1", k=10)
    assert {h.trajectory_id for h in v1} == {"ok-v1", "bad-v1"}
    failed = hashing_ts.search("deploy payments", tenant="acme", outcome="failure", k=10)
    assert {h.trajectory_id for h in failed} == {"bad-v1"}
    assert all(h.outcome == "failure" for h in failed)
    levels = hashing_ts.search("deploy", tenant="acme", levels=["failure"], k=10)
    assert [h.level for h in levels] == ["failure"]
    with pytest.raises(ValueError, match="unknown outcome"):
        hashing_ts.search("x", tenant="acme", outcome="succeeded")


def test_group_by_caps_hits_per_run(hashing_ts):
    hashing_ts.add([_step_run(f"r{i}", 12) for i in range(4)])
    for group_size in (1, 2, 3):
        hits = hashing_ts.search("output of step number", tenant="acme", levels="step", k=3, group_size=group_size)
        per_run: dict[str, int] = {}
        for h in hits:
            per_run[h.trajectory_id] = per_run.get(h.trajectory_id, 0) + 1
        assert len(per_run) == 3
        assert max(per_run.values()) <= group_size
        assert sum(per_run.values()) == 3 * group_size
    ungrouped = hashing_ts.search("output of step number", tenant="acme", levels="step", k=8, group_by_trajectory=False)
    assert len(ungrouped) == 8


def test_expand_returns_neighbour_steps_in_order(hashing_ts):
    hashing_ts.add([_step_run("long", 11), _step_run("other", 11)])
    hits = hashing_ts.search("echo step-6 token6", tenant="acme", levels="step", k=1)
    hit = hits[0]
    assert hit.trajectory_id in {"long", "other"}
    assert hit.step_index <= 6 <= hit.step_end
    around = hashing_ts.expand(hit, before=2, after=2)
    positions = [s.position for s in around]
    assert positions == list(range(max(0, hit.step_index - 2), min(10, hit.step_end + 2) + 1))
    assert all(f"token{s.position}" in s.text for s in around)
    edge = hashing_ts.expand(hit, before=0, after=50)
    assert edge[-1].position == 10  # clipped at the run's end
    with pytest.raises(PermissionError):
        hashing_ts.expand(hit, tenant="beta")


def test_similar_runs_one_per_run_and_excludes_itself(hashing_ts):
    error = "ModuleNotFoundError: No module named 'yaml'"
    hashing_ts.add([
        failing_run("broken", error),
        failing_run("same-error", error, task="Run the config loader"),
        failing_run("other-error", "ZeroDivisionError: division by zero", task="Compute averages"),
        make_run("fine"),
    ])
    matches = hashing_ts.similar_runs("broken", tenant="acme", k=5)
    ids = [m.trajectory_id for m in matches]
    assert "broken" not in ids
    assert ids[0] == "same-error"
    assert len(ids) == len(set(ids))
    assert matches[0].task == "Run the config loader"
    with pytest.raises(LookupError):
        hashing_ts.similar_runs("nope", tenant="acme")
    with pytest.raises(LookupError):  # another tenant's run is invisible
        hashing_ts.similar_runs("broken", tenant="beta")


def test_trace_round_trip_and_tenant_guard(hashing_ts):
    run = failing_run("r1", "KeyError: 'user_id'")
    hashing_ts.add([run])
    hit = hashing_ts.run("r1", tenant="acme")
    assert hit.trace_uri.startswith("file://")
    assert hashing_ts.get_trace(hit.trace_uri, tenant="acme") == run
    with pytest.raises(ValueError):
        hashing_ts.get_trace(hit.trace_uri, tenant="beta")


def test_reopen_persists_and_checks_embedder(tmp_path):
    uri, traces = str(tmp_path / "m.db"), str(tmp_path / "traces")
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        ts.add([make_run("r1")])
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        assert [h.trajectory_id for h in ts.search("pytest", tenant="acme")] == ["r1"]
    with pytest.raises(SchemaMismatchError, match="dim"):
        TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder(dim=32))


def test_delete_removes_rows_and_trace(hashing_ts):
    hashing_ts.add([make_run("r1"), make_run("r2")])
    uri = hashing_ts.run("r1", tenant="acme").trace_uri
    hashing_ts.delete("r1", tenant="acme")
    assert {h.trajectory_id for h in hashing_ts.search("pytest", tenant="acme", k=5)} == {"r2"}
    assert not hashing_ts.traces.exists(uri, tenant="acme")


def test_query_validation(hashing_ts):
    for kwargs in ({"k": 0}, {"k": 10_000}, {"group_size": 0}):
        with pytest.raises(ValueError):
            hashing_ts.search("x", tenant="acme", **kwargs)
    with pytest.raises(ValueError):
        hashing_ts.search("   ", tenant="acme")
    with pytest.raises(ValueError, match="unknown level"):
        hashing_ts.search("x", tenant="acme", levels="episode")


class CountingEmbedder(HashingEmbedder):
    """The hashing test embedder, counting the texts it is asked to embed and the calls."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.calls = 0

    def encode(self, texts, batch_size: int = 64):
        self.calls += 1
        self.texts.extend(texts)
        return super().encode(texts, batch_size=batch_size)


def test_a_query_is_embedded_once_and_similar_runs_reuses_the_stored_vector(tmp_path):
    embedder = CountingEmbedder()
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=embedder)
    try:
        error = "ModuleNotFoundError: No module named 'yaml'"
        ts.add([failing_run("broken", error), failing_run("same-error", error, task="Run the config loader"),
                make_run("fine")])
        embedder.texts.clear()
        for mode in ("dense", "hybrid", "dense"):
            ts.search("pytest failing in payments", tenant="acme", mode=mode)
        assert embedder.texts == ["pytest failing in payments"]

        by_id = ts.similar_runs("broken", tenant="acme", k=5)
        assert embedder.texts == ["pytest failing in payments"]  # the anchor's stored vector, no new embedding
        anchor = ts.run("broken", tenant="acme", level="failure")
        by_text = ts.similar_runs(text=anchor.text, tenant="acme", k=5)
        assert [m.trajectory_id for m in by_id] == [m.trajectory_id for m in by_text if m.trajectory_id != "broken"]
    finally:
        ts.close()


def test_embed_takes_stored_vectors_and_embeds_the_rest_in_one_call(tmp_path):
    embedder = CountingEmbedder()
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=embedder)
    try:
        ts.add([make_run("fine"), make_run("other", task="Refund the duplicate charge")])
        summaries = ts.runs(["fine", "other"], tenant="acme", level="summary")  # brings their stored vectors
        embedder.texts.clear()
        embedder.calls = 0
        stored = [hit.text for hit in summaries.values()]
        fresh = ["meaning one", "meaning two", "meaning one"]
        vectors = ts.embed([stored[0], *fresh, stored[1]])
        assert embedder.texts == ["meaning one", "meaning two"] and embedder.calls == 1  # stored ones not at all
        assert vectors.shape == (5, embedder.dim)
        assert np.allclose(vectors[1], vectors[3]) and np.allclose(vectors[1:3], HashingEmbedder().encode(fresh[:2]))
        assert np.allclose(vectors[[0, 4]], HashingEmbedder().encode(stored), atol=1e-6)
        assert ts.embed([]).shape == (0, embedder.dim)
    finally:
        ts.close()


def test_score_runs_equals_a_dense_search_over_those_runs(hashing_ts):
    from trajsearch.store.filters import Filters

    hashing_ts.add([make_run(f"r{i}", task=f"Fix bug number {i} in module m{i % 3}", days=i) for i in range(8)]
                   + [make_run("lost", outcome="failure"), make_run("other", tenant="beta")])
    ids = ["r1", "r4", "r6", "lost", "other", "absent"]
    filters = Filters(tenant="acme", levels=("task", "summary"), outcomes=("success",))
    scored = hashing_ts.score_runs("fix the bug in module m1", ids, filters)
    searched = hashing_ts.search_filtered("fix the bug in module m1", Filters(
        tenant="acme", levels=("task", "summary"), outcomes=("success",), trajectory_ids=tuple(ids)),
        k=50, group_by_trajectory=False, mode="dense")
    assert [(h.trajectory_id, h.level) for h in scored] == [(h.trajectory_id, h.level) for h in searched]
    assert np.allclose([h.score for h in scored], [h.score for h in searched], atol=1e-5)
    assert {h.trajectory_id for h in scored} == {"r1", "r4", "r6"}  # the failed run, another tenant's, none
    assert all(h.similarity == h.score for h in scored)
    for levels in (("step",), ()):
        with pytest.raises(ValueError, match="one row per run"):
            hashing_ts.score_runs("fix", ["r1"], Filters(tenant="acme", levels=levels))


def test_lexical_runs_are_the_runs_bm25_ranks_best(hashing_ts):
    from trajsearch.store.filters import Filters

    hashing_ts.add([
        make_run("edits-parser", steps=[("edit", {"path": "src/parser.py"}, "ok"), ("bash", {"command": "pytest"}, "ok")]),
        make_run("edits-both", steps=[("edit", {"path": "src/parser.py"}, "ok"), ("edit", {"path": "src/lexer.py"}, "ok")]),
        make_run("edits-lexer", steps=[("edit", {"path": "src/lexer.py"}, "ok"), ("bash", {"command": "pytest"}, "ok")]),
        make_run("failed-parser", outcome="failure",
                 steps=[("edit", {"path": "src/parser.py"}, "ok"), ("bash", {"command": "pytest"}, "1 failed")]),
        make_run("beta-parser", tenant="beta", steps=[("edit", {"path": "src/parser.py"}, "ok")]),
    ])
    filters = Filters(tenant="acme", levels=("summary",), outcomes=("success",))
    found = hashing_ts.lexical_runs("src/parser.py src/lexer.py", filters, k=10)
    assert found[0] == "edits-both" and set(found) == {"edits-both", "edits-parser", "edits-lexer"}
    by_parser = hashing_ts.lexical_runs("src/parser.py", filters, k=10)  # lexer's run shares "src" and "py" only
    assert set(by_parser[:2]) == {"edits-parser", "edits-both"} and by_parser[2:] == ["edits-lexer"]
    lexical = hashing_ts.search_filtered("src/parser.py src/lexer.py", filters, k=10, group_by_trajectory=False,
                                         mode="lexical")
    assert found == list(dict.fromkeys(h.trajectory_id for h in lexical))
    assert hashing_ts.lexical_runs("src/parser.py", filters, k=1) == by_parser[:1]
    assert hashing_ts.lexical_runs("nothing_like_this_anywhere", filters, k=10) == []


class _ScaledHashingEmbedder(HashingEmbedder):
    """The fast deterministic *test* embedder, breaking the protocol's unit-length promise (x3),
    as a user's own embedder might."""

    def encode(self, texts, *, batch_size: int = 64):
        return super().encode(texts, batch_size=batch_size) * 3.0


def test_similarity_is_the_cosine_in_every_mode_whatever_the_embedders_scale(tmp_path):
    """A hit's similarity is the cosine of query and row, whether the dense leg found the row,
    only the lexical leg did (a passage from the middle of a long output), or score_runs scored it."""
    from trajsearch.store.filters import Filters

    noise = "\n".join(f"collecting item {i} of the suite" for i in range(400))
    log = f"{noise}\nValueError: bucket quota 7731 exceeded for tenant\n{noise}"
    ts = TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=_ScaledHashingEmbedder())
    try:
        ts.add([make_run(f"r{i}", task=f"Fix bug number {i} in module m{i % 3}") for i in range(6)]
               + [make_run("long", steps=[("bash", {"command": "pytest"}, log), ("edit", {"path": "a.py"}, "ok")])])
        tasks = Filters(tenant="acme", levels=("task",))
        query = "fix the bug in module m1"
        dense = {h.trajectory_id: h.similarity for h in ts.search_filtered(
            query, tasks, k=7, group_by_trajectory=False, mode="dense")}
        hybrid = {h.trajectory_id: h.similarity for h in ts.search_filtered(
            query, tasks, k=7, group_by_trajectory=False, mode="hybrid")}
        scored = {h.trajectory_id: h.similarity for h in ts.score_runs(query, list(dense), tasks)}
        assert set(hybrid) == set(dense) == set(scored)
        for run, cosine in dense.items():
            assert -1.0 <= cosine <= 1.0
            assert hybrid[run] == pytest.approx(cosine, abs=1e-5)
            assert scored[run] == pytest.approx(cosine, abs=1e-5)
        line = "ValueError: bucket quota 7731 exceeded for tenant"
        steps = Filters(tenant="acme", levels=("step",), trajectory_ids=("long",))
        passage = ts.search_filtered(line, steps, k=1, group_by_trajectory=False, mode="hybrid")[0]
        window = ts.search_filtered(line, steps, k=1, group_by_trajectory=False, mode="dense")[0]
        assert line in passage.text and line not in window.text  # the passage, found by BM25 alone
        assert passage.similarity == pytest.approx(window.similarity, abs=1e-5)  # it shares its window's vector
    finally:
        ts.close()


def test_get_reads_the_fields_asked_for_and_still_applies_every_filter(hashing_ts):
    """A get by key returns ``id``, the fields asked for and those its filters read (no more: a get of
    vectors read all nine filter fields before), and a row outside the filters is never returned,
    whatever was asked for."""
    from trajsearch.represent import row_id
    from trajsearch.store.filters import Filters

    hashing_ts.add([make_run("ok-v1", env_version="v1"), failing_run("bad-v2", "TimeoutError: x", env_version="v2")])
    ids = [row_id("acme", tid, "task", -1) for tid in ("ok-v1", "bad-v2")]
    rows = hashing_ts.index.get(ids, Filters(tenant="acme"), fields=["embedding"])
    assert {tuple(sorted(r)) for r in rows} == {("embedding", "id", "tenant")}
    narrow = Filters(tenant="acme", env_versions=("v1",), exclude_trajectory_ids=("nope",))
    assert narrow.fields() == ["tenant", "env_version", "trajectory_id"]
    rows = hashing_ts.index.get(ids, narrow, fields=["text"])
    assert [(r["id"], sorted(r)) for r in rows] == [(ids[0], ["env_version", "id", "tenant", "text", "trajectory_id"])]
    rest = hashing_ts.index.get(ids, Filters(tenant="acme", exclude_trajectory_ids=("ok-v1",)), fields=["text"])
    assert [(r["id"], r["trajectory_id"], r["text"]) for r in rest] == \
        [(ids[1], "bad-v2", hashing_ts.run("bad-v2", tenant="acme").text)]
    assert hashing_ts.index.get(ids, Filters(tenant="beta"), fields=["text"]) == []


def test_a_run_removes_the_runs_it_supersedes_of_its_own_tenant_only(hashing_ts):
    """Review 2, D2: a run may name runs it takes the place of (``metadata["supersedes"]``, which adapters set: a
    Codex thread's run read with its history, after a rollout of it was read alone); ingest removes those of the
    run's own tenant, rows and trace, whether the run is written or unchanged (a rerun finishes an interrupted
    removal), and counts them. A record cannot reach another tenant's runs, nor fail on a malformed id."""
    hashing_ts.add([make_run("old"), make_run("kept"), make_run("old").model_copy(update={"tenant": "beta"})])
    old_trace = hashing_ts.run("old", tenant="acme").trace_uri
    new = make_run("new", metadata={"supersedes": ["old", "missing", "new", "no good/id", 7]})
    report = hashing_ts.add([new])
    assert (report.ingested, report.superseded) == (1, 1)
    assert set(hashing_ts.runs(["old", "kept", "new"], tenant="acme")) == {"kept", "new"}
    assert not hashing_ts.traces.exists(old_trace, tenant="acme")
    assert hashing_ts.stats(tenant="beta")["trajectories"] == 1

    hashing_ts.add([make_run("old")])  # read again later (elsewhere): the unchanged run removes it again
    report = hashing_ts.add([new])
    assert (report.unchanged, report.superseded) == (1, 1)
    assert set(hashing_ts.runs(["old", "new"], tenant="acme")) == {"new"}
    assert hashing_ts.add([new]).superseded == 0
