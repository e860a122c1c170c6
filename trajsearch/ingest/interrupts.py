"""Raising a signal's exception where the indexer's pipeline can take it: out of ``threading`` and ``queue`` code.

The handlers of an ingest worker (:mod:`.worker`) and of a single-process ``trajsearch ingest`` (Ctrl-C, SIGTERM)
raise through :func:`raise_when_out_of_locks`: the main thread spends an ingest in those modules' code, handing
batches to the pipeline through queues and waiting for its threads.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

#: The standard library's modules whose code juggles locks the signal's exception must not land in.
_LOCKING = {threading.__file__, queue.__file__}


def raise_when_out_of_locks(frame: FrameType | None, exc: BaseException) -> None:
    """Raise ``exc`` now, or, when the main thread is inside ``threading`` or ``queue`` (the indexer hands its
    batches over through queues), at the next line of the code that called them. A Condition's ``wait`` releases its
    lock and takes it back in Python code, and the lock's ``with`` releases it again on the way out: an exception
    raised between those (an asynchronous one: a signal's) ended the worker with "RuntimeError: release unlocked
    lock", exit 1 and no result (CI at f198fa74: "worker 1 exited with 1"), and the single-process command likewise
    (exit 1, no "interrupted:" line); one raised just after a ``with`` took the lock can leave it held, and the
    pipeline's thread that next takes it waits forever (CPython's gh-118433 and gh-78667: those locks are not safe
    from a signal's exception). One raised inside ``Thread.join`` marks the thread ended on Python 3.11 while it
    runs (``_wait_for_tstate_lock`` releases its lock on any exception): the wait for the writing thread ended and
    the store was closed under its batch, stored but not in the checkpoint. Not in a frame begun meanwhile either (a
    finalizer's, whose exception would be dropped), hence only the caller's frames are traced."""
    stack = list(_stack(frame))
    inside = [i for i, f in enumerate(stack) if f.f_code.co_filename in _LOCKING]
    if not inside:
        raise exc
    callers = stack[inside[-1] + 1:]

    def trace(at: FrameType, event: str, arg: object) -> Callable[..., Any] | None:
        if event == "call":
            return None  # a frame begun meanwhile: not traced
        sys.settrace(None)
        for f in callers:
            f.f_trace = None
        raise exc

    for f in callers:
        f.f_trace = trace
    sys.settrace(trace)


def _stack(frame: FrameType | None) -> Iterator[FrameType]:
    while frame is not None:
        yield frame
        frame = frame.f_back
