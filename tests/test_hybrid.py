"""Hybrid (dense + BM25) search through the façade: filters, consistency, both code paths."""

from __future__ import annotations

import os

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.fusion import FusionConfig, looks_like_log, resolve_mode, rrf
from trajsearch.search import TrajSearch
from trajsearch.store.index import lexical_text

from conftest import failing_run, make_run
from test_server_uri import milvus_server  # noqa: F401 - the module-scoped server fixture

OOM = "Killed: process exited with exit code 137"
EXIT1 = "make: *** [all] Error 1, exit code 1"


def _runs():
    return [
        failing_run("oom", OOM, task="Build the docker image", env_version="v1"),
        failing_run("exit1", EXIT1, task="Build the project", env_version="v1"),
        make_run("ok", task="Build the docker image", env_version="v2"),
        failing_run("other-tenant", OOM, tenant="beta", task="Build the docker image", env_version="v1"),
    ]


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_exact_error_strings_rank_first(hashing_ts, mode):
    hashing_ts.add(_runs())
    hits = hashing_ts.search("exit code 137", tenant="acme", levels=["step", "failure"], k=3, mode=mode)
    assert hits[0].trajectory_id == "oom"
    hits = hashing_ts.search("exit code 1", tenant="acme", levels=["step", "failure"], k=3, mode=mode)
    assert hits[0].trajectory_id == "exit1"
    assert all(h.similarity is not None for h in hits) or mode == "lexical"


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_lexical_leg_respects_every_filter(hashing_ts, mode):
    hashing_ts.add(_runs())
    hits = hashing_ts.search(OOM, tenant="acme", k=10, mode=mode)
    assert "other-tenant" not in {h.trajectory_id for h in hits}
    assert {h.tenant for h in hits} == {"acme"}
    v2 = hashing_ts.search(OOM, tenant="acme", env_version="v2", k=10, mode=mode)
    assert {h.trajectory_id for h in v2} <= {"ok"}
    ok = hashing_ts.search(OOM, tenant="acme", outcome="success", k=10, mode=mode)
    assert {h.outcome for h in ok} <= {"success"}
    assert hashing_ts.search(OOM, tenant="nobody", k=10, mode=mode) == []


def test_lexical_index_follows_reingest_delete_and_reopen(tmp_path):
    uri, traces = str(tmp_path / "m.db"), str(tmp_path / "traces")
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        ts.add(_runs())
        assert ts.search("exit code 137", tenant="acme", k=1, mode="lexical")[0].trajectory_id == "oom"
        # re-ingest "oom" with a different error: the old string must no longer match it
        ts.add([failing_run("oom", "OSError: No space left on device", task="Build the docker image")])
        assert "oom" not in {h.trajectory_id for h in ts.search("exit code 137", tenant="acme", k=5, mode="lexical")}
        assert ts.search("No space left on device", tenant="acme", k=1, mode="lexical")[0].trajectory_id == "oom"
        ts.delete("exit1", tenant="acme")
        assert "exit1" not in {h.trajectory_id for h in ts.search(EXIT1, tenant="acme", k=5, mode="lexical")}
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:  # rebuilt from the collection
        assert ts.search("No space left on device", tenant="acme", k=1, mode="lexical")[0].trajectory_id == "oom"
        assert "exit1" not in {h.trajectory_id for h in ts.search(EXIT1, tenant="acme", k=5, mode="lexical")}


def test_hybrid_on_the_server_path_uses_native_bm25(milvus_server, tmp_path):  # noqa: F811
    # milvus-lite server stands in for a Milvus server: the native BM25 leg is asked for explicitly
    with TrajSearch.open(milvus_server, traces=str(tmp_path / "t"), embedder=HashingEmbedder(dim=48),
                         lexical="milvus") as ts:
        assert ts.stats(tenant="acme")["lexical"] == "milvus"
        ts.add(_runs())
        for mode in ("lexical", "hybrid"):
            hits = ts.search("exit code 137", tenant="acme", levels=["step", "failure"], k=3, mode=mode)
            assert hits[0].trajectory_id == "oom", mode
            assert "other-tenant" not in {h.trajectory_id for h in ts.search(OOM, tenant="acme", k=10, mode=mode)}
        matches = ts.similar_runs("oom", tenant="acme", k=2)
        assert matches and "oom" not in {m.trajectory_id for m in matches}


def test_server_lexical_text_keeps_our_tokens_whole():
    text = lexical_text("ModuleNotFoundError in src/app/main.py")
    assert "src_app_main_py" in text.split()
    assert "modulenotfounderror" in text.split()


def test_auto_mode_picks_hybrid_for_log_lines_only():
    for line in ["ModuleNotFoundError: No module named 'yaml'", "exit code 137", "pytest -x tests/test_api.py",
                 "src/app/main.py", "run_tests failed", "Error: Reservation not found for this user",
                 "AttributeError: __enter__"]:
        assert looks_like_log(line), line
        assert resolve_mode("auto", line) == "hybrid"
    for prose in ["Book a flight from New York to Seattle next Tuesday",
                  "Fix the bug where the login page shows a blank screen for some users",
                  "Note: the user wants a refund to the original payment method and a confirmation email "
                  "sent once the refund has been processed by the airline"]:
        assert resolve_mode("auto", prose) == "dense", prose
    with pytest.raises(ValueError):
        resolve_mode("fuzzy", "x")


def test_rrf_rewards_agreement_and_honours_weights():
    fused = rrf([["a", "b", "c"], ["b", "d"]])
    assert max(fused, key=fused.get) == "b"
    lexical_heavy = rrf([["a", "b"], ["b", "a"]], weights=[1.0, 3.0])
    assert lexical_heavy["b"] > lexical_heavy["a"]


CRASH_AFTER_WRITE = """
import os, sys
sys.path.insert(0, {tests!r})
from conftest import failing_run
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch
ts = TrajSearch.open({uri!r}, traces={traces!r}, embedder=HashingEmbedder())
ts.add([failing_run("zebra", "ZebraStripeError: stripes out of order")])   # flushes and saves
from trajsearch.indexer import Indexer
run = failing_run("quagga", "QuaggaError: extinct since 1883")
# killed right after the batch is written to Milvus, before any flush, save or close
Indexer(ts.index, ts.embedder, ts.traces).add([run], on_commit=lambda items, report: os._exit(0))
raise SystemExit("not reached")
"""


def test_saved_lexical_index_is_reused_and_never_trusted_after_a_crash(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    uri, traces = str(tmp_path / "m.db"), str(tmp_path / "traces")
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        ts.add(_runs())
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        assert ts.index._mirror._load() is not None  # a clean close leaves a loadable index
        assert ts.search("exit code 137", tenant="acme", k=1, mode="lexical")[0].trajectory_id == "oom"
    script = CRASH_AFTER_WRITE.format(tests=str(Path(__file__).parent), uri=uri, traces=traces)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=300)
    with TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder()) as ts:
        assert ts.index._mirror._load() is None  # the crash left the saved index stale
        found = {h.trajectory_id for h in ts.search("QuaggaError extinct", tenant="acme", k=3, mode="lexical")}
        assert "quagga" in found
        assert ts.search("ZebraStripeError", tenant="acme", k=1, mode="lexical")[0].trajectory_id == "zebra"


def test_a_row_holding_the_pasted_line_verbatim_ranks_first(hashing_ts):
    line = "ERROR: file or directory not found: test/rules/L060_test.py"
    noise = "\n".join(f"collected item {i} from the rule registry" for i in range(12))
    hashing_ts.add([
        # the exact line, buried in a long output (BM25 length normalisation works against it)
        make_run("verbatim", task="Run the rule tests",
                 steps=[("bash", {"command": "pytest test/rules/L060_test.py"}, f"{noise}\n{line}\n{noise}")]),
        # every word of the line, shuffled and repeated in a short output: not what happened
        make_run("near", task="Run the rule tests",
                 steps=[("bash", {"command": "ls test/rules"},
                         "ERROR: file or directory not found: test/rules/L061_test.py\n"
                         "ERROR: file or directory not found: test/rules/L061_test.py")]),
    ])
    for mode in ("hybrid", "lexical"):
        hits = hashing_ts.search(line, tenant="acme", levels=["step"], k=2, mode=mode)
        assert hits[0].trajectory_id == "verbatim", mode


def test_the_verbatim_lift_matches_across_any_whitespace_and_nothing_looser():
    line = "make: *** [all] Error (1) in src/a.c"
    texts = {
        "wrapped": "building\nmake:  ***\t[all]\n    Error (1) in src/a.c\ndone",  # pasted across lines
        "other": "make: *** [all] Error (2) in src/a.c",
        "pattern-like": "make: xxx [a] Error 1 in src/abc",  # what the line would match read as a regex
        "shuffled": "Error (1) in src/a.c make: *** [all]",
    }
    scores = {rid: 1.0 for rid in texts}
    lifted = FusionConfig().verbatim_lift(line, scores, texts)
    assert {rid for rid, score in lifted.items() if score > 1.0} == {"wrapped"}


def test_a_long_pasted_block_is_lifted_where_a_row_holds_it_across_any_whitespace_and_nowhere_else():
    """Bug (probe I, I1): the lift's regex, tried from each place of a row, walked as many of the query's
    words as the row repeated there (11 s: a 10,000-word query against a 64 KB row of the same words).
    A query of many words is looked for in the rows' whitespace-normalised text: the same rows."""
    block = "\n".join(f"  File \"/srv/app/mod{i}.py\", line {i}, in handler_{i}" for i in range(12))
    texts = {
        "wrapped": "log start\n" + block.replace(" ", "\t ").replace("\n", "\n\n") + "\nlog end",
        "one frame off": block.replace("line 7,", "line 8,"),
        "repeats": "a " * 32_000,
    }
    scores = {rid: 1.0 for rid in texts}
    assert len(block.split()) > 32
    lifted = FusionConfig().verbatim_lift(block, scores, texts)
    assert {rid for rid, score in lifted.items() if score > 1.0} == {"wrapped"}
    lifted = FusionConfig().verbatim_lift("a " * 9_999 + "b", scores, texts)
    assert lifted == scores


def test_rows_come_in_score_order_in_every_mode_grouped_or_not(hashing_ts):
    hashing_ts.add(_runs())
    for mode in ("dense", "lexical", "hybrid"):
        for grouped in (True, False):
            hits = hashing_ts.search("exit code 137 Killed", tenant="acme", k=8, mode=mode,
                                     group_by_trajectory=grouped)
            scores = [h.score for h in hits]
            assert scores == sorted(scores, reverse=True), (mode, grouped)


def test_hybrid_runs_its_lexical_leg_beside_the_dense_leg(hashing_ts):
    """Round 25 (LEXH): the lexical leg runs in a thread of its own while the dense leg runs (two cores: on Milvus
    Lite the dense leg is mostly a numpy product, free of the GIL). Each leg here waits for the other to have
    started: run one after the other, the first waits out its bound alone and the legs never met."""
    import threading

    hashing_ts.add(_runs())
    index = hashing_ts.index
    started = {"lexical": threading.Event(), "dense": threading.Event()}
    met = {}

    def leg(name, other, call):
        def waiting(*args, **kwargs):
            started[name].set()
            met[name] = started[other].wait(timeout=600)  # a bound, not a timing: the legs meet at once or never
            return call(*args, **kwargs)
        return waiting

    index.lexical_search = leg("lexical", "dense", index.lexical_search)
    index.search = leg("dense", "lexical", index.search)
    hits = hashing_ts.search(OOM, tenant="acme", levels=["step", "failure"], k=2, mode="hybrid")
    assert met == {"lexical": True, "dense": True}
    assert hits[0].trajectory_id == "oom"


def test_an_error_of_the_lexical_leg_is_the_searchs_error(hashing_ts):
    """The lexical leg's thread hands its error to the search that asked, as when it ran in the search's thread."""
    hashing_ts.add(_runs())

    def broken(*args, **kwargs):
        raise RuntimeError("lexical index unreadable")

    hashing_ts.index.lexical_search = broken
    with pytest.raises(RuntimeError, match="lexical index unreadable"):
        hashing_ts.search(OOM, tenant="acme", k=2, mode="hybrid")


def test_where_both_legs_fail_the_lexical_legs_error_is_the_searchs_as_before_the_legs_overlapped(hashing_ts):
    """Run one after the other, the lexical leg failed first; beside the dense leg, a dense error won and the lexical
    one was never seen. The search still fails with the dense leg's error where only that leg fails."""
    hashing_ts.add(_runs())

    def broken(name):
        def call(*args, **kwargs):
            raise RuntimeError(f"{name} leg broken")
        return call

    hashing_ts.index.search = broken("dense")
    with pytest.raises(RuntimeError, match="dense leg broken"):
        hashing_ts.search(OOM, tenant="acme", k=2, mode="hybrid")
    hashing_ts.index.lexical_search = broken("lexical")
    with pytest.raises(RuntimeError, match="lexical leg broken"):
        hashing_ts.search(EXIT1, tenant="acme", k=2, mode="hybrid")


def test_ctrl_c_stops_the_first_hybrid_search_while_it_rebuilds_the_lexical_index(tmp_path):
    """The first hybrid search of a store whose BM25 copy is missing rebuilds it (minutes at 172k rows). Ctrl-C there
    stops it: the rebuild ran in a lexical-leg thread, holding the mirror's lock, so the KeyboardInterrupt in the
    search's thread left it running and the close (which saves under that lock) waited for its end, then wrote the
    copy (a 7,929-row store: the CLI left 4.7-6.4 s after Ctrl-C, 0.75-0.9 s before the thread). The SIGINT is sent
    as the rebuild reads its first rows; the copy not written after the close says it did not run to its end."""
    import signal

    uri, traces = str(tmp_path / "milvus.db"), str(tmp_path / "traces")
    ts = TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder())
    ts.add(_runs())
    ts.close()
    (tmp_path / "milvus.db.lexical.json").unlink()  # the copy's label gone: the next first search rebuilds
    ts = TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder())
    mirror = ts.index._mirror
    rows = mirror._rows

    def interrupted():
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, as the rebuild starts reading
        yield from rows()

    mirror._rows = interrupted
    # Python's own Ctrl-C for the test, whatever the session inherited: a suite started as a background job (`cmd &`
    # in a script, nohup) has SIGINT ignored, Python then installs no KeyboardInterrupt, and without this line the
    # test failed "DID NOT RAISE KeyboardInterrupt" in 12 of 12 runs so started (the round-25 interim CI's one
    # failure, which passed alone), in 0 of 20 under two CPU burners with SIGINT as a terminal has it
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            ts.search(OOM, tenant="acme", k=2, mode="hybrid")
    finally:
        signal.signal(signal.SIGINT, previous)
        ts.close()
    assert not (tmp_path / "milvus.db.lexical.json").exists()  # the rebuild stopped: nothing to save
    ts = TrajSearch.open(uri, traces=traces, embedder=HashingEmbedder())
    try:  # and the next search rebuilds it whole
        assert ts.search(OOM, tenant="acme", k=2, mode="hybrid")[0].trajectory_id == "oom"
    finally:
        ts.close()


#: A process that opens a store, runs hybrid searches from 12 threads at once, then forks: the child runs one hybrid
#: search and leaves as a program does (sys.exit: atexit handlers, milvus-lite's server release among them). Prints
#: the child's exit code.
FORKING = """
import os, sys
from concurrent.futures import ThreadPoolExecutor
from test_hybrid import OOM, _runs
from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch

ts = TrajSearch.open(sys.argv[1] + "/milvus.db", traces=sys.argv[1] + "/traces", embedder=HashingEmbedder())
ts.add(_runs())
with ThreadPoolExecutor(12) as threads:
    list(threads.map(lambda _: ts.search(OOM, tenant="acme", k=2, mode="hybrid"), range(111)))
child = os.fork()
if child == 0:
    hits = ts.search(OOM, tenant="acme", k=2, mode="hybrid")
    sys.stdout.flush()
    os._exit(0 if hits and hits[0].trajectory_id == "oom" else 2)  # not milvus-lite's atexit: see the docstring
print(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]))
ts.close()
"""


def test_a_forked_child_runs_hybrid_searches(tmp_path):
    """A process forked after hybrid searches from many threads (a pre-forking server's worker) answers its own: with
    a pool of lexical-leg threads the pool it copied counted its parent's threads as idle, and its first hybrid search
    waited for ever. A thread per lexical leg needs no pool. The child leaves by ``os._exit``: at a normal exit
    milvus-lite's atexit stops the in-process server the child copied, which died of SIGSEGV in 1 of 23 such children
    (6 of 6 with the pool; cause not pinned, README "Round 25 (LEXH)"), a crash this test would only make flaky."""
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tests.parent), str(tests)])}
    done = subprocess.run([sys.executable, "-c", FORKING, str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=600)  # a bound for a hung child, not a timing
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0", done.stdout + done.stderr
