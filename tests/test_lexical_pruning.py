"""The lexical leg's shortcuts (best rows found above a sampled threshold, a term checked against the filter on its
first postings first) return exactly what the plain scan returns: same rows, scores and order, on a store of real
runs (/work/shared/data: 200 tau-bench airline runs and 100 mini-swe-agent runs), for many real queries and filters."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from trajsearch.fusion import looks_like_log
from trajsearch.ingest.read import read_dump
from trajsearch.represent import represent
from trajsearch.store.filters import Filters
from trajsearch.store.lexical import LexicalIndex
from trajsearch.store.lexical import segment

REAL = [Path("/work/shared/data/tau-bench/gpt-4o-airline.json"),
        Path("/work/shared/data/mini-swe-agent-dev/deepseek_chat_dev")]


def test_shortcuts_return_what_the_plain_scan_returns(monkeypatch: pytest.MonkeyPatch) -> None:
    if not all(p.exists() for p in REAL):
        pytest.skip("the shared real data is not here")
    runs = [p.trajectory for path in REAL for p in read_dump(path, tenant="acme") if p.trajectory is not None]
    rows = [(run, row) for run in runs for row in represent(run)]
    # Each real row twice, as two runs' rows: rows then tie exactly, as repeated runs' rows do.
    ix = LexicalIndex.from_rows(
        dict(id=f"{copy}-{i}", tenant="acme", text=row.text, level=row.level,
             outcome=("failure", "success")[(i + copy) % 2], env_version=f"env-{i % 3}", policy_version="p-1",
             task_family="real", trajectory_id=f"{run.trajectory_id}-{copy}", tools=[], created_at=i)
        for copy in range(2) for i, (run, row) in enumerate(rows))
    rng = random.Random(23)
    lines = [ln.strip() for _, row in rng.sample(rows, 400) for ln in row.text.splitlines()
             if 12 <= len(ln.strip()) <= 200 and looks_like_log(ln.strip())]
    queries = rng.sample(lines, 40) + [run.task[:300] for run in rng.sample(runs, 10)]
    queries += ["exit code 1", "Traceback (most recent call last):", "get_user_details"]
    filters = [Filters(tenant="acme"),
               Filters(tenant="acme", levels=("step", "failure"), outcomes=("failure",), env_versions=("env-1",)),
               Filters(tenant="acme", exclude_trajectory_ids=tuple(f"{r.trajectory_id}-0" for r in runs[:150]))]

    def run() -> list[list[tuple[str, float]]]:
        return [ix.search(q, f, limit) for q in queries for f in filters for limit in (1, 10, 50)]

    monkeypatch.setattr(segment, "_SAMPLE", 10**9)  # every best-rows search partitions all rows
    monkeypatch.setattr(segment, "_FIRST", 10**9)  # every term is checked on all its postings at once
    plain = run()
    assert sum(map(len, plain)) > 3000  # the searches find rows
    monkeypatch.undo()
    assert run() == plain
    monkeypatch.setattr(segment, "_SAMPLE", 2)  # thresholds from every other value: the shortcut on more searches
    monkeypatch.setattr(segment, "_FIRST", 1)
    assert run() == plain
