"""Scripts that run an ingest program (``trajsearch.cli`` or ``trajsearch.ingest.worker``) as ``python -c`` does and
have it send itself a signal at a point a signal lands on only by chance, from a profile hook: the program's code,
its handlers and its exit are the real ones. Each script's ``argv[1]`` is the signal's number, the program's own
arguments last."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from trajsearch.embed import HashingEmbedder
from trajsearch.search import TrajSearch


def committed_runs(checkpoint: Path) -> int:
    """The runs a signalled ingest's checkpoint says are stored (its stats hold no count before the first commit)."""
    return json.loads(checkpoint.read_text())["stats"].get("ingested", 0)


def stored_runs(store: Path, caplog) -> int:
    """The runs of tenant ``acme`` in ``store`` (its ``milvus.db`` and ``traces``), asserting that opening it found
    nothing half-written to clear: what a signalled ingest left."""
    with caplog.at_level(logging.WARNING, logger="trajsearch"):
        with TrajSearch.open(str(store / "milvus.db"), traces=str(store / "traces"), embedder=HashingEmbedder()) as ts:
            stored = ts.stats(tenant="acme")["trajectories"]
    assert "half-written" not in caplog.text
    return stored

#: Runs ``argv[4]`` (a module, ``argv[5:]`` its arguments), sending signal ``argv[1]`` the first time its main thread,
#: waiting to hand a batch to the indexer's full pipeline, is at profile event ``argv[2]`` of ``threading.Condition``'s
#: ``argv[3]``: the return of its ``release`` call in ``_release_save`` (the lock just let go) or the start of
#: ``_acquire_restore`` (the lock not yet taken back).
IN_A_QUEUE_S_LOCK = """
import runpy, signal, sys, threading
sig, event, method = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def hook(frame, at, arg):
    waiting = frame.f_back and frame.f_back.f_back and frame.f_back.f_back.f_back
    if (at == event and frame.f_code.co_name == method and frame.f_code.co_filename == threading.__file__
            and waiting and waiting.f_code.co_filename.endswith("indexer.py")):
        sys.setprofile(None)
        sys.stderr.write("signalled\\n")
        signal.raise_signal(sig)

sys.argv = sys.argv[4:]
sys.setprofile(hook)  # this thread's: the main one, which runs the handler
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""

#: Runs ``argv[2]`` (a module, ``argv[3:]`` its arguments) so that signal ``argv[1]`` lands as the main thread, every
#: batch handed over, waits for the indexer's writing thread (at the first lock ``acquire`` of that wait: inside
#: ``Thread.join`` when it joined the thread), while that thread is between a batch's run record and its end
#: (``end_runs``): held there (a profile hook of its own) until the main thread either waits for it again (the batch
#: then finishes) or has closed the store (the batch is then cut short); a tracer sees to that once a handler's
#: exception, raised in the main thread's profile hook, has ended the hook.
AT_THE_LAST_JOIN = """
import runpy, signal, sys, threading
sig = int(sys.argv[1])
armed, arrived, go, fired = threading.Event(), threading.Event(), threading.Event(), threading.Event()

def writer_hook(frame, at, arg):
    if (at == "call" and frame.f_code.co_name == "end_runs" and armed.is_set()
            and threading.current_thread().name == "ingest-write"):
        sys.setprofile(None)
        arrived.set()
        go.wait()

def main_hook(frame, at, arg):
    code = frame.f_code
    if at == "return" and code.co_name == "close" and code.co_filename.endswith("index.py") and fired.is_set():
        go.set()  # the store closed under the held batch
    if (at != "c_call" or getattr(arg, "__name__", None) != "acquire"
            or getattr(frame.f_locals.get("self"), "name", None) != "ingest-write"):
        return  # not a wait for the writing thread
    writer = next((t for t in threading.enumerate() if t.name == "ingest-write"), None)
    if writer is None:
        return  # not started yet
    if fired.is_set():
        go.set()  # waited for again: the held batch finishes
        return
    armed.set()
    while writer.is_alive() and not arrived.wait(0.01):
        pass
    if arrived.is_set():
        fired.set()
        sys.stderr.write("signalled\\n")
        sys.settrace(after)  # a handler raising here, in this hook, ends it: Python drops a profile hook that raised
        signal.raise_signal(sig)  # inside the wait for the writer

def after(frame, at, arg):
    code = frame.f_code
    waited = at == "call" and code.co_name in ("join", "wait")
    if waited and getattr(frame.f_locals.get("self"), "name", None) == "ingest-write":
        go.set()  # waited for again: the held batch finishes
    if code.co_name == "close" and code.co_filename.endswith("index.py"):
        if at == "return":
            go.set()  # the store closed under the held batch
        return after
    return None

threading.setprofile(writer_hook)
sys.setprofile(main_hook)
sys.argv = sys.argv[2:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""
