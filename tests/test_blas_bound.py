"""Once an embedded store is open, its dense product runs under the BLAS bound (store/blas.py).

Plumbing: what is observed is the thread count numpy's BLAS reports while Milvus Lite computes the
distances (a wrapper records it and calls the engine's own function). Each test starts BLAS at 2
threads, as on a 2-core machine, whatever this one has, and puts back what it found. No wall-clock
figure is asserted (those are in README, "Speed and scale", round 24).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import pytest
from milvus_lite.index import brute_force
from milvus_lite.search import distance
from threadpoolctl import OpenBLASController, ThreadpoolController, threadpool_info, threadpool_limits

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
from trajsearch.store.filters import Filters

from conftest import make_run


def _blas_threads() -> int:
    """The thread count of numpy's own BLAS (the engine's distances are numpy products; faiss, which
    milvus-lite installs, brings another OpenBLAS that FLAT searches do not use)."""
    ours = [lib for lib in threadpool_info() if lib["user_api"] == "blas" and "numpy" in lib["filepath"]]
    assert len(ours) == 1, threadpool_info()
    return ours[0]["num_threads"]


def _watch_products(monkeypatch: pytest.MonkeyPatch, also: Callable[[], None] = lambda: None) -> list[int]:
    """BLAS threads at each distance computation of the engine (then ``also``, then the real one)."""
    seen: list[int] = []
    real = distance.compute_distances

    def watched(*args: Any, **kwargs: Any) -> Any:
        seen.append(_blas_threads())
        also()
        return real(*args, **kwargs)

    monkeypatch.setattr(distance, "compute_distances", watched)  # trajsearch's executor reads it here
    monkeypatch.setattr(brute_force, "compute_distances", watched)  # the engine's, for masked searches
    return seen


def _open(tmp_path, runs: int = 3) -> TrajSearch:
    ts = TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
    ts.add([make_run(f"r{i}", task=f"task {i}: fix the parser") for i in range(runs)])
    return ts


def _counts_in_dense_search(where, monkeypatch: pytest.MonkeyPatch, setting: str | None) -> set[int]:
    """numpy's BLAS threads in the product of a dense search of a store opened at ``where`` with
    TRAJSEARCH_BLAS_THREADS at ``setting`` (None: unset)."""
    if setting is None:
        monkeypatch.delenv("TRAJSEARCH_BLAS_THREADS", raising=False)
    else:
        monkeypatch.setenv("TRAJSEARCH_BLAS_THREADS", setting)
    ts = _open(where)
    try:
        seen = _watch_products(monkeypatch)
        assert ts.search("fix the parser", k=3, mode="dense", tenant="acme")
        return set(seen)
    finally:
        ts.close()


def _in_a_thread(work: Callable[[], Any]) -> Any:
    """``work``'s answer, run in a thread of its own (its error raised here)."""
    with ThreadPoolExecutor(1) as other:
        return other.submit(work).result()


@pytest.fixture
def two_blas_threads():
    """BLAS at 2 threads for the test; what it was before, after (the bound is process-wide). No
    thread keeps threadpoolctl's control of OpenBLAS, as in a process that never limited it."""
    limiter = threadpool_limits(2, user_api="blas")
    OpenBLASController.clear_controlling_thread()
    yield
    limiter.restore_original_limits()
    OpenBLASController.clear_controlling_thread()


def test_dense_product_runs_on_one_blas_thread(tmp_path, monkeypatch, two_blas_threads):
    monkeypatch.delenv("TRAJSEARCH_BLAS_THREADS", raising=False)
    ts = _open(tmp_path)
    try:
        seen = _watch_products(monkeypatch)
        dense = ts.search("fix the parser", k=3, mode="dense", tenant="acme")
        hybrid = ts.search("pytest -x tests/test_payments.py", k=3, mode="hybrid", tenant="acme")
        assert dense and hybrid
        assert seen and set(seen) == {1}
    finally:
        ts.close()


def test_the_setting_sizes_the_bound_and_zero_leaves_blas_its_own(tmp_path, monkeypatch, two_blas_threads):
    found = {setting: _counts_in_dense_search(tmp_path / setting, monkeypatch, setting) for setting in ("0", "3")}
    assert found == {"0": {2}, "3": {3}}  # 0: as the fixture left it


def test_concurrent_searches_both_run_on_the_bound(tmp_path, monkeypatch, two_blas_threads):
    """Two searches inside the product at once, from threads other than the one that opened the
    store (the service serves several at once): both bounded, and still after they left."""
    monkeypatch.delenv("TRAJSEARCH_BLAS_THREADS", raising=False)
    ts = _open(tmp_path)
    both_inside = threading.Barrier(2, timeout=600)
    try:
        seen = _watch_products(monkeypatch, also=both_inside.wait)
        errors: list[BaseException] = []

        def search() -> None:
            try:
                ts.index.search(ts.query_vector("fix the parser"), Filters(tenant="acme"), limit=3)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=search) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, [str(e) for e in errors]
        assert len(seen) >= 2 and set(seen) == {1}
        assert _blas_threads() == 1
    finally:
        ts.close()


def test_searches_in_other_threads_run_on_the_bound_where_blas_counts_per_thread(tmp_path, monkeypatch,
                                                                                  two_blas_threads):
    """OpenBLAS on OpenMP (conda's, Debian's; MKL likewise) keeps a thread count per calling thread: a
    bound set by the opening thread would not reach the service's request threads. faiss' OpenBLAS,
    which milvus-lite loads, is one: its count in a search's thread, inside the engine's product."""
    monkeypatch.delenv("TRAJSEARCH_BLAS_THREADS", raising=False)
    ts = _open(tmp_path)
    per_thread = ThreadpoolController().select(threading_layer="openmp")  # BLAS libraries on OpenMP
    if not per_thread.lib_controllers:
        pytest.skip("no BLAS with a per-thread count loaded in this process")
    inside: list[int] = []
    try:
        _watch_products(monkeypatch, also=lambda: inside.extend(
            lib.get_num_threads() for lib in per_thread.lib_controllers))

        def search() -> list[int]:
            per_thread.limit(limits=2)  # this thread's own count, as a new thread's default may be
            assert ts.search("fix the parser", k=3, mode="dense", tenant="acme")
            return [lib.get_num_threads() for lib in per_thread.lib_controllers]

        after = _in_a_thread(search)
        assert inside and set(inside) == {1}
        assert set(after) == {2}  # put back: the thread's own setting outlives the search
    finally:
        ts.close()


@pytest.mark.parametrize("variable", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"])
def test_blas_threads_set_by_the_environment_are_left_alone(tmp_path, monkeypatch, two_blas_threads, variable):
    """Someone chose them (the fixture's 2 stands for what the variable set at start); an explicit
    TRAJSEARCH_BLAS_THREADS still applies."""
    monkeypatch.setenv(variable, "2")
    assert _counts_in_dense_search(tmp_path / "unset", monkeypatch, None) == {2}
    assert _counts_in_dense_search(tmp_path / "set", monkeypatch, "1") == {1}


def test_a_count_this_thread_holds_through_threadpoolctl_is_kept_and_logged(tmp_path, monkeypatch, caplog,
                                                                          two_blas_threads):
    """A store opened inside someone's ``with threadpool_limits`` block: the block's count holds
    (threadpoolctl gives OpenBLAS's pool to the thread holding it), the bound says it did not take,
    and the block still puts its count back when it ends."""
    caplog.set_level(logging.WARNING, logger="trajsearch.store.blas")
    with threadpool_limits(3, user_api="blas"):
        assert _counts_in_dense_search(tmp_path, monkeypatch, None) == {3}
    assert _blas_threads() == 2
    assert any("stays at 3 threads, not TRAJSEARCH_BLAS_THREADS=1" in r.getMessage() for r in caplog.records)


def test_a_later_open_in_another_thread_sets_its_count(tmp_path, monkeypatch, two_blas_threads):
    """The opening thread keeps no hold on OpenBLAS's count (threadpoolctl lets the thread that set it
    change it, alone, while it lives): a store opened after, from another thread, sets its own."""
    monkeypatch.delenv("TRAJSEARCH_BLAS_THREADS", raising=False)
    first = _open(tmp_path / "first")
    try:
        assert _in_a_thread(lambda: _counts_in_dense_search(tmp_path / "second", monkeypatch, "3")) == {3}
    finally:
        first.close()


def test_a_blas_library_loaded_after_an_open_is_bounded_at_the_next(tmp_path):
    """scikit-learn (failure clustering) loads scipy's own OpenBLAS; a store opened after it bounds it
    too. In a process of its own: this one may have loaded scipy's already."""
    script = textwrap.dedent(f"""
        import os
        from threadpoolctl import OpenBLASController, threadpool_info, threadpool_limits
        from trajsearch.embed import HashingEmbedder
        from trajsearch.search import TrajSearch

        def scipys():
            return [lib["num_threads"] for lib in threadpool_info()
                    if lib["user_api"] == "blas" and "scipy.libs" in lib["filepath"]]

        TrajSearch.open({str(tmp_path / "a.db")!r}, traces={str(tmp_path / "a")!r}, embedder=HashingEmbedder()).close()
        assert not scipys(), "scipy's BLAS was loaded before the first open"
        import sklearn.cluster  # noqa: F401
        assert scipys(), "no scipy BLAS after importing scikit-learn"
        threadpool_limits({{lib["filepath"]: 2 for lib in threadpool_info() if "scipy.libs" in lib["filepath"]}})
        OpenBLASController.clear_controlling_thread()  # as in a process that never limited it
        assert scipys() == [2], scipys()
        TrajSearch.open({str(tmp_path / "b.db")!r}, traces={str(tmp_path / "b")!r}, embedder=HashingEmbedder()).close()
        print(scipys())
    """)
    env = {k: v for k, v in os.environ.items() if k not in (
        "TRAJSEARCH_BLAS_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[1]"


@pytest.mark.parametrize("setting", ["two", "²", "-1"])
def test_a_bad_setting_is_refused_when_the_store_opens(tmp_path, monkeypatch, setting):
    monkeypatch.setenv("TRAJSEARCH_BLAS_THREADS", setting)
    with pytest.raises(ValueError, match="TRAJSEARCH_BLAS_THREADS must be a whole number of threads .* got"):
        TrajSearch.open(str(tmp_path / "milvus.db"), traces=str(tmp_path / "traces"), embedder=HashingEmbedder())
