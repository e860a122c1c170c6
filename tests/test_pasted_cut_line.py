"""A traceback pasted with its last line cut short: the runs printing it are found whatever ``k``.

Rows holding the query verbatim rank first, but only rows of the shortlist were checked, and the shortlist grew with
``k`` (two rows a run asked for): on gemini-3-pro's 231 django runs, ``django__django-15525``'s traceback pasted
up to ``no such table: reproduce`` (a terminal's last line cut) showed ``15525``, which printed it, second at k=20
and not at all at k=5 (round 24, ENG2). Real runs: ``tests/fixtures/mini-swe-agent/.real/
gemini-3-pro-sqlite-tracebacks`` (see its SOURCE.md), six runs printing the same frames for their own tables.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.search import TrajSearch

from conftest import real_runs_store

RUNS = Path(__file__).parent / "fixtures/mini-swe-agent/.real/gemini-3-pro-sqlite-tracebacks"
EXCEPTION = "sqlite3.OperationalError: no such table: reproduce_app_author"


store = real_runs_store(RUNS, "cut")  # the six runs with the real model (built once)


def _cut_paste(ts: TrajSearch) -> str:
    """``15525``'s traceback as its step printed it, its exception line cut after ``no such table: reproduce``."""
    run = next(p.trajectory for p in read_dump(RUNS / "django__django-15525.traj.json") if p.ok)
    output = next(step.observation for step in run.steps if EXCEPTION in (step.observation or ""))
    start = output.index("Traceback (most recent call last):")
    return output[start:output.index(EXCEPTION, start) + len("sqlite3.OperationalError: no such table: reproduce")]


def test_runs_holding_a_cut_paste_show_whatever_k(store) -> None:
    pasted = _cut_paste(store)
    runs = {k: [m.best.task_id for m in store.similar_runs(text=pasted, tenant="acme", k=k)]
            for k in (3, 5, 20)}
    holding = {"django__django-15525", "django__django-15503"}  # both print the paste (15503 for its own table)
    assert set(runs[3][:2]) == holding, runs
    assert runs[5] == runs[20][:5] and runs[3] == runs[5][:3], runs
