"""Memos that live for one call or one run's reading, not for the process; here, below the runtime, so that the
reading of a run (:func:`trajsearch.touched.read_once`) can open one as well as a runtime call.

An exemplars call parses the same summaries' ``Touched:`` lines and scans the same step rows' files again for every
candidate it weighs without its own vote (probe 52, PERF: 90% of its regex work); an ingest splits each shell command
of a run again after reading it (``steps.is_write`` after ``touched``'s reading) and tests whether it only reads
three or four times a step (round 33, PERF3). A process-wide ``lru_cache`` did each once, but kept up to a thousand
rows' or commands' text (other tenants', deleted runs') for the life of a server (review RPERF). :func:`call_memo`
scopes the memo to a call or a run's reading (a context variable: each thread, each call of its own); outside one, a
:func:`per_call` function computes every time.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Hashable, Iterator, TypeVar

T = TypeVar("T")

_MEMO: ContextVar[dict[tuple[Callable[..., object], Hashable], object] | None] = ContextVar("trajsearch_memo",
                                                                                              default=None)


@contextmanager
def call_memo() -> Iterator[None]:
    """Within: each :func:`per_call` function answers an argument once; the memo is dropped on leaving (a nested
    call shares the outer one)."""
    token = _MEMO.set({}) if _MEMO.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _MEMO.reset(token)


def per_call(fn: Callable[[str], T]) -> Callable[[str], T]:
    """``fn`` (of one hashable argument, whose answer the caller must not change) memoised inside a
    :func:`call_memo` only."""

    @functools.wraps(fn)
    def memoised(arg: str) -> T:
        memo = _MEMO.get()
        if memo is None:
            return fn(arg)
        key = (fn, arg)
        try:  # one lookup for an answer kept (most asks in a memo's scope): the cost of the memo on a hit
            return memo[key]  # type: ignore[return-value]
        except KeyError:
            memo[key] = answer = fn(arg)
            return answer

    return memoised
