"""Round 28's read-through of the query and service code (review RT-SERVE): what it found, each fixed here.

1. ``excerpt.unseen`` said a text ending in a CI system's closing line reads as written, while ``query_text`` drops
   the line: a task row with GitHub's closing line was compared as written with the query read without it, and the
   rerun of that very task lost ``follow_closely``.
2. ``scripts/eval_pasted_framing.py`` searched an empty store and printed ``hit@1 0/143``, exit 0.
3. The scripts' ``load_model`` timed a load that no longer makes the ONNX session (made at the first encode), so the
   session's cost went into the first measured step.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.excerpt import query_text, unseen
from trajsearch.runtime import Runtime, RuntimeContext

from conftest import failing_run, make_run
from test_pasted_ci_fixed_point import RAW_TAILS, _real_pastes
from test_pasted_ci_framing import CLOSINGS

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "scripts"
#: A task pasted from a CI job's page, GitHub's closing line under the failure.
CI_TASK = ("CI is red on main, please fix it:\nFAILED tests/test_payments.py::test_refund - KeyError: 'currency'\n"
           "Error: Process completed with exit code 1.")


def test_unseen_says_a_text_is_read_otherwise_exactly_where_query_text_changes_it() -> None:
    """Bug: 19 of 20,000 fuzzed pastes (every one ending in a closing line) were changed by ``query_text`` while
    ``unseen`` said False. Here: real step outputs, as pasted (their last 40 lines), alone and under each CI system's
    closing lines and a whole job's raw tail."""
    checked = changed = 0
    for paste in _real_pastes():
        for closing in ("", *CLOSINGS.values(), *RAW_TAILS.values()):
            text = paste + ("\n" + closing if closing else "")
            read_otherwise = query_text(text) != text
            assert unseen(text) is read_otherwise, text[-300:]
            checked, changed = checked + 1, changed + read_otherwise
    assert checked > 2000 and changed > 1000


def test_a_rerun_of_a_task_ending_in_a_ci_closing_line_follows_its_own_run_closely(model_ts) -> None:
    """Bug (real model): the task's own successful run was found at 0.989 but not seen to be of this very task
    (its row holds the closing line, the query had lost it): ``use_as_inspiration`` where the same task without the
    line got ``follow_closely``."""
    model_ts.add([make_run("ok-1", task=CI_TASK), make_run("other", task="Add a CSV export to the reports page"),
                  failing_run("bad-1", "KeyError: 'currency'", task=CI_TASK)])
    answer = Runtime(model_ts).exemplars(CI_TASK, RuntimeContext(tenant="acme"))
    assert answer.strategy.value == "follow_closely"
    assert answer.items[0].trajectory_id == "ok-1"


def test_eval_pasted_framing_refuses_an_empty_store_saying_how_to_build_it(tmp_path) -> None:
    """Bug: it never built its store (its docstring said it did) and an empty one printed ``plain: hit@1 0/143``,
    exit 0, a plausible regression."""
    done = subprocess.run([sys.executable, str(SCRIPTS / "eval_pasted_framing.py"), "--store", str(tmp_path / "none"),
                           "--model", "hashing", "--forms", "plain"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "TRAJSEARCH_HOME": str(tmp_path)})
    assert done.returncode != 0
    assert "no runs in the store" in done.stderr and "scripts/eval_exact.py" in done.stderr, done.stderr
    assert "hit@1" not in done.stdout


def test_the_scripts_load_model_makes_the_model_session_inside_its_time() -> None:
    """Bug: ``load_model`` said 0.04 s and the first measured encode paid the session's 0.3 s. A fresh process: the
    embedders are cached per process, and another test's may have encoded already."""
    code = ("from _common import load_model\n"
            "model, _ = load_model('all-MiniLM-L6-v2')\n"
            "print(model._loaded is not None)")  # the session, made at the first encode, made inside the timed load
    done = subprocess.run([sys.executable, "-c", code], cwd=SCRIPTS, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": f"{SCRIPTS}:{ROOT}"})
    assert done.stdout.split()[-1:] == ["True"], done.stderr[-2000:]


def test_the_model_session_takes_its_threads_from_omp_num_threads_where_set() -> None:
    """Bug (pre-existing): ``ingest --workers`` sets each worker's ``OMP_NUM_THREADS`` to its share of the cores, and
    ONNX Runtime's pool, which ignores it, took every core in each worker. (This machine has 2: 1 is a share.)"""
    code = ("from trajsearch.embed import load_embedder\n"
            "model = load_embedder('all-MiniLM-L6-v2'); model.encode(['a query'])\n"
            "print(model._loaded[1].get_session_options().intra_op_num_threads)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    assert done.stdout.split()[-1:] == ["1"], done.stderr[-2000:]


def test_a_trace_existence_check_takes_a_read_permit_as_a_read_does(hashing_ts) -> None:
    """Bug: ``TraceReads`` passed ``exists`` (a HEAD of a run or compare page: an S3 HEAD) straight to the store, with
    no permit and no deadline. One permit, held by a read kept in the store: the check is refused "busy" at once."""
    from concurrent.futures import ThreadPoolExecutor

    from trajsearch.service.trace_reads import TraceReads, TraceStoreBusy
    from test_service_edges import GatedStore

    hashing_ts.add([make_run("a1")])
    uri = hashing_ts.run("a1", tenant="acme").trace_uri
    gated = GatedStore(hashing_ts.traces, "acme")
    reads = TraceReads(gated, slots=1, timeout=600, queue_wait=0)
    with ThreadPoolExecutor(1) as pool:
        try:
            held = pool.submit(reads.get, uri, tenant="acme")
            with gated.changed:
                assert gated.changed.wait_for(lambda: gated.arrived == 1, 600)
            with pytest.raises(TraceStoreBusy):
                reads.exists(uri, tenant="acme")
        finally:
            gated.gate.set()
        assert held.result(600).trajectory_id == "a1"
    assert reads.exists(uri, tenant="acme") is True and reads.in_flight == 0
