"""Rows in score order (issue 11): ``scripts/eval_generalise.py`` counts the calls whose rows are out of it by
search's own rule, ``trajsearch.search.in_score_order``. Search lists a tie (scores each within ``SCORE_TIE`` of the
one before) by run id and step, so a strict comparison counted float noise among identical rows as disorder: round 22,
3 of 373 dense task searches, each four trials of one task scoring 1.0 give or take 1e-7 ('Deprecation warnings from
numpy ...', 'Rule L060 could give ...'); and the eval's own window (each score against the one before) counted a tie
of three whose name order put its two ends side by side (review RR11D)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import eval_generalise  # noqa: E402

from trajsearch.search import SCORE_TIE, in_score_order  # noqa: E402


def test_a_tie_listed_by_name_is_in_score_order() -> None:
    noise = SCORE_TIE / 10
    assert in_score_order([1.0 - noise, 1.0, 1.0 + noise, 1.0, 0.7577])


def test_a_chain_of_near_scores_is_one_tie_in_any_order() -> None:
    """Three rows 0.9 us apart: each within the tie of the next, the ends 1.8 us apart. Search lists them by name,
    here the lowest first and the highest second; that is its order, though the second rises 1.8 us over the first."""
    step = 0.9 * SCORE_TIE
    assert in_score_order([0.8 - 2 * step, 0.8, 0.8 - step, 0.5])
    assert not in_score_order([0.8 - 3 * step, 0.8, 0.5])  # two scores 2.7 us apart, nothing between: no tie


def test_a_score_rising_beyond_a_tie_is_out_of_order() -> None:
    assert not in_score_order([0.9, 0.7, 0.7 + 10 * SCORE_TIE])
    assert in_score_order([0.9, 0.7, 0.6])
    assert not in_score_order([0.5, 0.9])


def test_the_eval_counts_disorder_by_searchs_rule() -> None:
    """The eval holds no rule of its own: what it checks each call's scores with is search's."""
    assert eval_generalise.in_score_order is in_score_order
