"""LexicalIndex: exact-string ranking, tenant isolation, filters, upsert/delete semantics."""

from __future__ import annotations

import random
import threading
from typing import Any

import pytest

from trajsearch.store.filters import Filters
from trajsearch.store.lexical import LexicalIndex

DISTRACTORS = [
    "Running pytest on tests/test_models.py: 12 passed, 1 warning in 0.53s",
    "ImportError: cannot import name 'Mapping' from 'collections'",
    "KeyError: 'user_id' raised in get_user_details",
    "ModuleNotFoundError: No module named 'numpy'",
    "ModuleNotFoundError: No module named 'requests'",
    "Command failed with exit code 2 after 3 retries",
    "TypeError: unsupported operand type(s) for +: 'int' and 'str'",
    "grep -rn 'def physical' pvlib/iam.py returned 1 match",
    "python reproduce_issue.py printed nan for aoi 137 degrees",
    "sed -i 's/foo/bar/' src/app/models.py",
]


def row(rid: str, text: str, tenant: str = "acme", **kw: Any) -> dict[str, Any]:
    base = dict(id=rid, tenant=tenant, text=text, level="step", outcome="failure", env_version="env-1",
                policy_version="p-1", task_family="swe", trajectory_id=f"traj-{rid}", tools=["bash"],
                created_at=1_000)
    base.update(kw)
    return base


def ids(hits: list[tuple[str, float]]) -> list[str]:
    return [i for i, _ in hits]


@pytest.fixture
def index() -> LexicalIndex:
    ix = LexicalIndex()
    ix.upsert(row(f"d{i}", text) for i, text in enumerate(DISTRACTORS))
    return ix


def test_exit_code_1_vs_137_both_ways() -> None:
    ix = LexicalIndex()
    ix.upsert([row("one", "Process finished with exit code 1"), row("big", "Process finished with exit code 137")])
    f = Filters(tenant="acme")
    assert ids(ix.search("exit code 1", f, 10))[0] == "one"
    assert ids(ix.search("exit code 137", f, 10))[0] == "big"


def test_exit_code_among_distractors(index: LexicalIndex) -> None:
    index.upsert([row("one", "tests failed: exit code 1"), row("big", "container killed (OOM): exit code 137")])
    f = Filters(tenant="acme")
    assert ids(index.search("exit code 1", f, 10))[0] == "one"
    assert ids(index.search("exit code 137", f, 10))[0] == "big"


def test_exact_error_line_finds_its_doc(index: LexicalIndex) -> None:
    index.upsert([row("yaml", "Traceback (most recent call last):\n  File \"/testbed/src/app/main.py\", line 3\n"
                              "ModuleNotFoundError: No module named 'yaml'")])
    f = Filters(tenant="acme")
    assert ids(index.search("ModuleNotFoundError: No module named 'yaml'", f, 5))[0] == "yaml"
    assert ids(index.search("src/app/main.py", f, 5))[0] == "yaml"
    assert ids(index.search("app/main.py", f, 5))[0] == "yaml"
    assert ids(index.search("get_user_details", f, 5))[0] == "d2"
    assert ids(index.search("pytest tests/test_models.py", f, 5))[0] == "d0"


def test_scores_are_positive_and_sorted(index: LexicalIndex) -> None:
    hits = index.search("ModuleNotFoundError exit code", Filters(tenant="acme"), 20)
    scores = [s for _, s in hits]
    assert hits and all(s > 0 for s in scores) and scores == sorted(scores, reverse=True)
    assert len(index.search("error", Filters(tenant="acme"), 2)) == 2  # limit respected


def test_rows_without_query_terms_are_not_returned(index: LexicalIndex) -> None:
    hits = ids(index.search("numpy", Filters(tenant="acme"), 10))
    assert hits == ["d3"]


def test_tenant_isolation_with_identical_text() -> None:
    ix = LexicalIndex()
    ix.upsert([row("a1", "exit code 137", tenant="a"), row("b1", "exit code 137", tenant="b"),
               row("b2", "exit code 1", tenant="b")])
    assert ids(ix.search("exit code 137", Filters(tenant="a"), 10)) == ["a1"]
    assert set(ids(ix.search("exit code 137", Filters(tenant="b"), 10))) == {"b1", "b2"}
    assert ix.search("exit code 137", Filters(tenant="c"), 10) == []


def test_idf_is_per_tenant() -> None:
    ix = LexicalIndex()
    # "yaml" is rare in tenant a, everywhere in tenant b: its weight must differ.
    ix.upsert([row("a1", "yaml error", tenant="a")] + [row(f"a{i}", "other text", tenant="a") for i in range(2, 9)])
    ix.upsert([row("b1", "yaml error", tenant="b")] + [row(f"b{i}", "yaml text", tenant="b") for i in range(2, 9)])
    (_, score_a), = ix.search("yaml", Filters(tenant="a"), 1)
    score_b = dict(ix.search("yaml", Filters(tenant="b"), 10))["b1"]
    assert score_a > score_b


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        (dict(levels=("failure",)), {"f"}),
        (dict(levels=("step", "failure")), {"s", "f", "t2"}),
        (dict(outcomes=("success",)), {"s"}),
        (dict(env_versions=("env-2",)), {"f"}),
        (dict(policy_versions=("p-9",)), {"t2"}),
        (dict(task_families=("airline",)), {"t2"}),
        (dict(tools=("pytest",)), {"f"}),
        (dict(tools=("pytest", "grep")), {"f", "t2"}),
        (dict(trajectory_ids=("T1",)), {"s", "f"}),
        (dict(exclude_trajectory_ids=("T1",)), {"t2", "task"}),
        (dict(created_after=2_000), {"t2", "task"}),
        (dict(levels=("task",), outcomes=("success",)), set()),
        (dict(env_versions=("env-404",)), set()),
        (dict(tools=("no-such-tool",)), set()),
    ],
)
def test_filters(filters: dict[str, Any], expected: set[str]) -> None:
    ix = LexicalIndex()
    rows = [
        row("s", "exit code 137 in step", trajectory_id="T1", outcome="success"),
        row("f", "exit code 137 failure", level="failure", trajectory_id="T1", env_version="env-2",
            tools=["bash", "pytest"]),
        row("t2", "exit code 137 other run", trajectory_id="T2", policy_version="p-9", task_family="airline",
            tools=["grep"], created_at=3_000),
        row("task", "task: fix exit code 137", level="task", trajectory_id="T3", tools=[], created_at=2_000),
    ]
    ix.upsert(rows)
    f = Filters(tenant="acme", **filters)
    got = set(ids(ix.search("exit code 137", f, 10)))
    assert got == expected
    # Same semantics as Filters.matches on plain rows.
    assert got == {r["id"] for r in rows if f.matches(r)}


def test_filters_agree_with_matches_on_random_rows() -> None:
    rng = random.Random(3)
    ix = LexicalIndex()
    rows = [row(f"r{i}", f"error {rng.choice(['alpha', 'beta'])} exit code {rng.choice([1, 2, 137])}",
                level=rng.choice(["task", "summary", "step", "failure"]),
                outcome=rng.choice(["success", "failure", "unknown"]),
                env_version=rng.choice(["e1", "e2", None]), trajectory_id=f"T{rng.randrange(20)}",
                tools=rng.sample(["bash", "grep", "pytest", "sed"], rng.randrange(3)),
                created_at=rng.randrange(100)) for i in range(400)]
    ix.upsert(rows)
    for _ in range(50):
        f = Filters(tenant="acme", levels=tuple(rng.sample(["task", "summary", "step", "failure"], rng.randrange(3))),
                    outcomes=tuple(rng.sample(["success", "failure"], rng.randrange(2))),
                    env_versions=tuple(rng.sample(["e1", "e2"], rng.randrange(2))),
                    tools=tuple(rng.sample(["bash", "grep", "pytest"], rng.randrange(2))),
                    exclude_trajectory_ids=tuple(f"T{rng.randrange(20)}" for _ in range(rng.randrange(3))),
                    created_after=rng.choice([None, 50]))
        got = set(ids(ix.search("error", f, 1000)))
        assert got == {r["id"] for r in rows if f.matches(r)}


def test_upsert_replaces_without_duplicates() -> None:
    ix = LexicalIndex()
    ix.upsert([row("x", "exit code 137")])
    ix.upsert([row("x", "segmentation fault exit code 139")])
    f = Filters(tenant="acme")
    assert len(ix) == 1 and ix.ids() == ["x"]
    assert ix.search("137", f, 10) == []
    assert ids(ix.search("139", f, 10)) == ["x"]
    # Re-upserting into another tenant moves the row.
    ix.upsert([row("x", "exit code 139", tenant="other")])
    assert ix.search("139", f, 10) == [] and ids(ix.search("139", Filters(tenant="other"), 10)) == ["x"]
    assert ix.ids("acme") == [] and ix.ids("other") == ["x"]


def test_upsert_replaces_filter_fields() -> None:
    ix = LexicalIndex()
    ix.upsert([row("x", "exit code 137", level="step")])
    assert ix.search("137", Filters(tenant="acme", levels=("step",)), 10)
    ix.upsert([row("x", "exit code 137", level="failure")])
    assert ix.search("137", Filters(tenant="acme", levels=("step",)), 10) == []
    assert ids(ix.search("137", Filters(tenant="acme", levels=("failure",)), 10)) == ["x"]


def test_delete_and_delete_where() -> None:
    ix = LexicalIndex()
    ix.upsert([row("a", "exit code 137", trajectory_id="T1"), row("b", "exit code 137", trajectory_id="T1"),
               row("c", "exit code 137", trajectory_id="T2"),
               row("z", "exit code 137", trajectory_id="T1", tenant="other")])
    f = Filters(tenant="acme")
    assert set(ids(ix.search("137", f, 10))) == {"a", "b", "c"}
    assert ix.delete(["c", "missing"]) == 1
    assert set(ids(ix.search("137", f, 10))) == {"a", "b"}
    assert ix.delete_where("acme", "T1") == 2
    assert ix.search("137", f, 10) == [] and len(ix) == 1
    assert ids(ix.search("137", Filters(tenant="other"), 10)) == ["z"]  # other tenant's T1 untouched
    assert ix.delete_where("acme", "T1") == 0
    ix.upsert([row("a", "exit code 137", trajectory_id="T1")])  # a deleted id can come back
    assert ids(ix.search("137", f, 10)) == ["a"]


def test_empty_index_and_no_match() -> None:
    ix = LexicalIndex()
    f = Filters(tenant="acme")
    assert ix.search("exit code 137", f, 10) == [] and len(ix) == 0 and ix.ids() == []
    ix.upsert([row("a", ""), row("b", "   ...  ")])
    assert ix.search("exit code 137", f, 10) == []
    ix.upsert([row("c", "exit code 137")])
    assert ix.search("nothing matches this", f, 10) == []
    assert ix.search("", f, 10) == [] and ix.search("137", f, 0) == []
    ix.delete(["a", "b", "c"])
    assert ix.search("137", f, 10) == []


def test_small_tenant_term_in_half_the_rows_still_scores() -> None:
    # BM25Okapi (rank_bm25) gives such a term IDF 0; the index must not.
    ix = LexicalIndex()
    ix.upsert([row("a", "yaml"), row("b", "toml")])
    assert ids(ix.search("yaml", Filters(tenant="acme"), 10)) == ["a"]


def test_rebuild_after_change_and_refresh() -> None:
    ix = LexicalIndex()
    ix.upsert([row("a", "exit code 1")])
    f = Filters(tenant="acme")
    assert ids(ix.search("exit code", f, 10)) == ["a"]
    ix.upsert([row("b", "exit code 2")])
    ix.refresh()
    assert set(ids(ix.search("exit code", f, 10))) == {"a", "b"}
    assert sorted(ix.tenants()) == ["acme"]


def test_concurrent_upserts_and_searches() -> None:
    ix = LexicalIndex()
    f = Filters(tenant="acme")
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for i in range(100):
                ix.upsert([row(f"w{k}-{i}", f"exit code {i} writer {k}")])
                if i % 10 == 0:
                    ix.delete([f"w{k}-{i - 5}"])
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(100):
                hits = ix.search("exit code writer", f, 5)
                assert len(hits) <= 5
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(3)] + [
        threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = 3 * (100 - 9)  # ids w-5, w5, ..., w85 deleted (w-5 never existed)
    assert len(ix) == expected == len(ix.ids("acme"))
    assert len(ix.search("writer", f, 1000)) == expected


def test_full_error_line_beats_shorter_row_holding_most_of_it() -> None:
    # Coordination: the long traceback with the whole line outranks the short near-miss.
    ix = LexicalIndex()
    ix.upsert([row("near", "ModuleNotFoundError: No module named 'numpy'"),
               row("full", "Traceback (most recent call last):\n"
                           "  File \"/testbed/src/app/main.py\", line 3, in <module>\n"
                           "    import yaml\nModuleNotFoundError: No module named 'yaml'")]
              + [row(f"x{i}", text) for i, text in enumerate(DISTRACTORS)])
    hits = ix.search("ModuleNotFoundError: No module named 'yaml'", Filters(tenant="acme"), 3)
    assert ids(hits)[0] == "full"


def test_path_in_another_spelling_finds_its_row(index: LexicalIndex) -> None:
    index.upsert([row("rel", "edited pvlib/tools.py and reran"), row("abs", "opened /testbed/src/app/views.py")])
    f = Filters(tenant="acme")
    assert ids(index.search("/testbed/pvlib/tools.py", f, 3))[0] == "rel"
    assert ids(index.search("src/app/views.py", f, 3))[0] == "abs"


def test_search_survives_strict_numpy_errstate() -> None:
    import numpy as np

    ix = LexicalIndex()
    ix.upsert([row("a", "exit code 1"), row("b", "exit code 137"), row("c", "")])
    expected = ix.search("exit code 137", Filters(tenant="acme"), 10)
    with np.errstate(all="raise"):
        assert ix.search("exit code 137", Filters(tenant="acme"), 10) == expected
        ix.upsert([row("d", "exit code 2")])
        assert len(ix.search("exit code", Filters(tenant="acme"), 10)) == 3
        ix.refresh()


def test_long_query_finds_its_row_first_and_k_rows_in_all(index: LexicalIndex) -> None:
    """Scored on its most telling terms first (all of them only in its own row), then widened by
    the next ones until k rows hold some: the distractors share only its numbers."""
    long_line = " ".join(f"word{i}" for i in range(80)) + " unique_marker_xyz"
    index.upsert([row("long", long_line)])
    found = ids(index.search(long_line, Filters(tenant="acme"), 3))
    assert found[0] == "long" and len(found) == 3


def test_long_query_whose_rarest_words_lie_outside_the_filter_still_finds_rows_inside_it() -> None:
    """Idf is the tenant's: a pasted task's rarest words are in its own task row. Searched among step
    rows (or with its own run left out) it must find the steps that share its other words."""
    task = ("Migrations crash when a ForeignKey points to a renamed model; " +
            " ".join(f"detail{i}" for i in range(60)))
    ix = LexicalIndex()
    ix.upsert([row("own-task", task, level="task", trajectory_id="own"),
               row("step-a", "ForeignKey to a renamed model: migrations crash in the autodetector"),
               row("step-b", "renamed model, ForeignKey updated"),
               row("step-c", "unrelated output of ls")])
    for f in (Filters(tenant="acme", levels=("step",)), Filters(tenant="acme", exclude_trajectory_ids=("own",))):
        assert ids(ix.search(task, f, 2)) == ["step-a", "step-b"]


WORDS = ["exit", "code", "137", "1", "error", "yaml", "pytest", "src/app/main.py", "run_tests", "KeyError"]


def _random_row(rng: random.Random, rid: str) -> dict[str, Any]:
    return row(rid, " ".join(rng.choices(WORDS, k=rng.randint(1, 6))), tenant=rng.choice(["a", "b"]),
               level=rng.choice(["step", "failure"]), trajectory_id=f"T{rng.randrange(6)}",
               tools=rng.sample(["bash", "grep", "pytest"], rng.randrange(3)), created_at=rng.randrange(10))


@pytest.mark.parametrize("tiny_delta", [False, True])
def test_random_mutations_match_a_reference_model(tiny_delta: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every search, through delta segments and rebuilds, returns exactly the rows a
    plain model says match: the filters hold and the row shares a query term."""
    from trajsearch.store.lexical import index as lexical
    from trajsearch.store.tokenize import tokenize, tokenize_query

    if tiny_delta:  # rebuild the base every few changes
        monkeypatch.setattr(lexical, "_DELTA_MIN", 3)
        monkeypatch.setattr(lexical, "_DELTA_SHARE", 0.0)
    rng = random.Random(11)
    ix = LexicalIndex()
    model: dict[str, dict[str, Any]] = {}
    for step in range(300):
        op = rng.random()
        if op < 0.6:
            r = _random_row(rng, f"r{rng.randrange(60)}")
            ix.upsert([r])
            model[r["id"]] = r
        elif op < 0.8 and model:
            rid = rng.choice(sorted(model))
            assert ix.delete([rid]) == 1
            del model[rid]
        elif op < 0.85:
            tenant, traj = rng.choice(["a", "b"]), f"T{rng.randrange(6)}"
            gone = [rid for rid, r in model.items() if r["tenant"] == tenant and r["trajectory_id"] == traj]
            assert ix.delete_where(tenant, traj) == len(gone)
            for rid in gone:
                del model[rid]
        elif op < 0.9:
            ix.refresh()
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        f = Filters(tenant=rng.choice(["a", "b"]), levels=tuple(rng.sample(["step", "failure"], rng.randrange(2))),
                    tools=tuple(rng.sample(["bash", "pytest"], rng.randrange(2))),
                    exclude_trajectory_ids=(f"T{rng.randrange(6)}",) if rng.random() < 0.3 else ())
        primary, parts = tokenize_query(query)
        terms = set(primary) | set(parts)
        expected = {rid for rid, r in model.items() if f.matches(r) and terms & set(tokenize(r["text"]))}
        got = ix.search(query, f, 1000)
        assert {rid for rid, _ in got} == expected, (step, query, f)
        assert len(got) == len(expected)
        assert len(ix) == len(model)


def test_delta_and_rebuild_agree_with_a_fresh_index() -> None:
    rng = random.Random(5)
    rows = [row(f"r{i}", " ".join(rng.choices(WORDS, k=rng.randint(2, 8)))) for i in range(300)]
    ix = LexicalIndex()
    ix.upsert(rows)
    f = Filters(tenant="acme")
    ix.search("exit", f, 1)  # builds the base
    changes = [row(f"r{i}", "exit code 137 KeyError yaml") for i in range(0, 40, 4)] + [row("new", "exit code 1")]
    ix.upsert(changes)
    ix.delete(["r1", "r2"])
    final = {r["id"]: r for r in rows}
    final.update({r["id"]: r for r in changes})
    del final["r1"], final["r2"]
    fresh = LexicalIndex()
    fresh.upsert(final.values())
    for query in ("exit code 137", "KeyError yaml", "exit code 1", "run_tests src/app/main.py"):
        served = ix.search(query, f, 20)  # base + delta, scored with the base's statistics
        want = dict(fresh.search(query, f, 1000))
        # Stale IDF may swap near-ties, never promote a clearly worse row.
        assert want[served[0][0]] >= 0.95 * max(want.values())
        assert {i for i, _ in ix.search(query, f, 1000)} == {i for i, _ in fresh.search(query, f, 1000)}
    ix.refresh()
    for query in ("exit code 137", "KeyError yaml", "pytest"):
        assert dict(ix.search(query, f, 1000)) == pytest.approx(dict(fresh.search(query, f, 1000)))


def test_save_and_load_round_trip(tmp_path: Any) -> None:
    rows = [row("a", "exit code 137"), row("b", "ModuleNotFoundError: No module named 'yaml'", level="failure",
                                            tools=["pytest", "bash"], env_version=None),
            row("c", "pytest -x tests/test_api.py", tenant="other", tools=[]), row("e", "")]
    ix = LexicalIndex()
    ix.upsert(rows)
    ix.search("exit", Filters(tenant="acme"), 1)  # a base
    ix.upsert([row("d", "exit code 1", created_at=5_000)])  # plus a delta
    ix.delete(["e"])
    path = tmp_path / "lexical.npz"
    assert ix.save(path) == 4
    loaded = LexicalIndex.load(path)
    assert sorted(loaded.ids()) == sorted(ix.ids()) and sorted(loaded.tenants()) == ["acme", "other"]
    for query, f in (("exit code 137", Filters(tenant="acme")), ("yaml", Filters(tenant="acme")),
                     ("yaml", Filters(tenant="acme", tools=("pytest",), levels=("failure",))),
                     ("exit", Filters(tenant="acme", created_after=2_000)),
                     ("tests/test_api.py", Filters(tenant="other")), ("exit code 1", Filters(tenant="acme"))):
        assert loaded.search(query, f, 10) == ix.search(query, f, 10)
    # A loaded index keeps taking changes, and deletes by trajectory.
    loaded.upsert([row("b", "KeyError: 'user_id'")])
    assert loaded.search("yaml", Filters(tenant="acme"), 10) == []
    assert ids(loaded.search("user_id", Filters(tenant="acme"), 10)) == ["b"]
    assert loaded.delete_where("acme", "traj-a") == 1 and "a" not in loaded.ids()
    loaded.refresh()
    assert ids(loaded.search("exit code 1", Filters(tenant="acme"), 10)) == ["d"]


def test_load_refuses_unusable_files(tmp_path: Any) -> None:
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(b"not a zip file")
    with pytest.raises(Exception):
        LexicalIndex.load(damaged)
    with pytest.raises(OSError):
        LexicalIndex.load(tmp_path / "missing.npz")
    ix = LexicalIndex(tokenizer=lambda s: s.lower().split())
    ix.upsert([row("a", "exit code 137")])
    saved = tmp_path / "saved.npz"
    ix.save(saved)
    with pytest.raises(ValueError):  # another tokenizer: its counts do not fit
        LexicalIndex.load(saved)
    empty = tmp_path / "empty.npz"
    assert LexicalIndex().save(empty) == 0 and len(LexicalIndex.load(empty)) == 0


#: Texts that stress the word-by-word counting of from_rows: chunks split many ways,
#: several chunks per whitespace word, a chunk too long to keep whole, punctuation-only
#: words, non-ASCII, repeated words and lines.
TRICKY = [
    "ModuleNotFoundError: No module named 'yaml' (exit code 137)",
    "File \"/testbed/pvlib/tools.py\", line 42, in run_tests: KeyError: 'user_id'",
    "--tb=short -x ./src/app/main.py:12:5 os.path.join(a,b) pydicom-1694 python3 --- | >>> ...",
    "key=value,other=thing;x=y foo,foo,foo getUserDetails HTTPServerError v2.0.1-rc1",
    "a" * 130 + "_" + "b" * 30 + " " + "c/" * 70 + "tail.py",
    "naïve café → résumé 東京 Straße İstanbul ÆØÅ",
    "exit code 1\nexit code 1\nexit code 1\n" * 20,
    "", "   ", "!!! ??? ...",
]


def _mixed_rows(rng: random.Random, n: int) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        parts = rng.choices(TRICKY + DISTRACTORS, k=rng.randint(1, 4)) + rng.choices(WORDS, k=rng.randint(0, 5))
        rng.shuffle(parts)
        rows.append(row(f"r{i}", "\n".join(parts), tenant=rng.choice(["a", "b", "c"]),
                        level=rng.choice(["step", "failure"]), trajectory_id=f"T{rng.randrange(8)}",
                        tools=rng.sample(["bash", "grep", "pytest"], rng.randrange(3)), created_at=rng.randrange(10)))
    return rows


def _same_results(a: LexicalIndex, b: LexicalIndex, queries: list[str]) -> None:
    assert sorted(a.ids()) == sorted(b.ids()) and sorted(a.tenants()) == sorted(b.tenants())
    for tenant in a.tenants():
        assert sorted(a.ids(tenant)) == sorted(b.ids(tenant))
        for f in (Filters(tenant=tenant), Filters(tenant=tenant, levels=("failure",), tools=("bash",)),
                  Filters(tenant=tenant, exclude_trajectory_ids=("T1", "T2"), created_after=5)):
            for query in queries:
                assert a.search(query, f, 50) == b.search(query, f, 50), (tenant, f, query)


@pytest.mark.parametrize("batch", [7, 4_096])
def test_from_rows_equals_upserting_the_same_rows(batch: int) -> None:
    """The bulk build gives the very index upsert + refresh gives: same rows, same scores, same order."""
    rng = random.Random(21)
    rows = _mixed_rows(rng, 300)
    # ids that come again (a later row replaces an earlier one, also across tenants)
    rows += [dict(r, text=r["text"] + " replaced yaml", tenant=rng.choice(["a", "b", "c"]))
             for r in rng.sample(rows, 40)]
    rows += [row("lone", "exit code 137", tenant="tiny"), row("blank", "", tenant="blank")]  # small tenants
    incremental = LexicalIndex()
    incremental.upsert(rows)
    incremental.refresh()
    bulk = LexicalIndex.from_rows(iter(rows), batch=batch)
    queries = [*TRICKY[:6], *DISTRACTORS, "exit code 1", "replaced yaml", "os.path.join", "tools.py", "résumé",
               "a" * 130, "src/app/main.py run_tests", "exit code 1 exit code 1"]
    _same_results(incremental, bulk, queries)
    # ... and it carries on like any index: changes, deletes, save and load
    for ix in (incremental, bulk):
        ix.upsert([row("new", "exit code 137 brand new", tenant="a")])
        ix.delete(["r1", "r2"])
        ix.delete_where("b", "T3")
    _same_results(incremental, bulk, queries + ["brand new"])


def test_from_rows_counts_every_token_like_tokenize() -> None:
    """Scores depend on each term's count and the row length: a term-by-term check on tricky texts."""
    from trajsearch.store.tokenize import tokenize

    rows = [row(f"t{i}", text) for i, text in enumerate(TRICKY)] + [row("many", "ab " * 70_000)]  # tf capped
    bulk, incremental = LexicalIndex.from_rows(rows), LexicalIndex()
    incremental.upsert(rows)
    f = Filters(tenant="acme")
    for text in TRICKY + ["ab ab"]:
        for term in dict.fromkeys(tokenize(text)):
            assert bulk.search(term, f, 100) == incremental.search(term, f, 100), term


def test_from_rows_with_another_tokenizer_and_no_rows() -> None:
    tok = lambda s: s.lower().split()  # noqa: E731
    rows = _mixed_rows(random.Random(4), 60)
    incremental = LexicalIndex(tokenizer=tok)
    incremental.upsert(rows)
    _same_results(incremental, LexicalIndex.from_rows(rows, tokenizer=tok, batch=16), ["exit code 1", "keyerror:"])
    empty = LexicalIndex.from_rows([])
    assert len(empty) == 0 and empty.search("exit", Filters(tenant="acme"), 10) == []


def test_widening_keeps_the_rows_found_on_the_telling_terms_ahead() -> None:
    """A long query is scored on its 24 rarest terms first; rows holding those (long rows) stay first when
    it widens to reach k, though rows holding many of its common words outscore them on all terms."""
    def words(prefix: str, n: int) -> list[str]:
        return [prefix + a + b for a in "abcdefgh" for b in "abcdefgh"][:n]

    rare, common, neutral = words("rare", 24), words("common", 40), words("neutral", 60)

    def spaced(ws: list[str]) -> str:  # no two query words side by side: no bigram of the query
        return " ".join(f"{w} {n}" for w, n in zip(ws, neutral))

    ix = LexicalIndex()
    ix.upsert([row(f"own{i}", spaced(rare[8 * i: 8 * i + 8]) + " " + " ".join(neutral)) for i in range(3)])
    ix.upsert([row(f"filler{i}", spaced(common)) for i in range(20)])
    ix.upsert([row(f"other{i}", "unrelated words only here") for i in range(100)])
    found = ids(ix.search(" ".join(rare + common), Filters(tenant="acme"), 10))
    assert found[:3] == ["own0", "own1", "own2"] and len(found) == 10
    scores = [score for _, score in ix.search(" ".join(rare + common), Filters(tenant="acme"), 10)]
    assert scores == sorted(scores, reverse=True)
