"""Coordination counted while scoring and by binary searches: the same shares, so the same results."""

from __future__ import annotations

import random

import pytest

from trajsearch.store.filters import Filters
from trajsearch.store.lexical import LexicalIndex
from trajsearch.store.lexical import segment

WORDS = ("error exit code 137 import numpy module not found traceback pytest passed failed "
         "reservation flight user details cancel respond think bash sed grep").split()


def test_both_ways_of_counting_held_terms_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(0)
    ix = LexicalIndex()
    ix.upsert(dict(id=f"r{i}", tenant="acme", text=" ".join(rng.choices(WORDS, k=rng.randint(3, 40))),
                   level=rng.choice(["step", "passage"]), outcome=rng.choice(["failure", "success"]),
                   env_version="env-1", policy_version="p-1", task_family="swe", trajectory_id=f"t{i % 37}",
                   tools=["bash"], created_at=i) for i in range(600))
    ix.refresh()
    ix.upsert(dict(id=f"r{i}", tenant="acme", text=" ".join(rng.choices(WORDS, k=9)), level="step",
                   outcome="failure", env_version="env-1", policy_version="p-1", task_family="swe",
                   trajectory_id="t0", tools=["bash"], created_at=i) for i in range(0, 600, 7))  # a delta
    queries = [" ".join(rng.choices(WORDS, k=rng.randint(2, 8))) for _ in range(40)]
    filters = [Filters(tenant="acme"), Filters(tenant="acme", levels=("step",), exclude_trajectory_ids=("t1", "t2"))]

    def run() -> list:
        return [ix.search(q, f, limit) for q in queries for f in filters for limit in (5, 50)]

    monkeypatch.setattr(segment, "_COUNT_WHILE_SCORING", 10**9)  # always counted while scoring
    counted = run()
    monkeypatch.setattr(segment, "_COUNT_WHILE_SCORING", 0)  # always binary searches
    assert run() == counted
