"""``scripts/eval_generalise.py`` counts calls whose rows are out of score order (issue 11: rows in score order in every
output). Search lists a tie (scores within ``SCORE_TIE`` of each other) by run id and step, so a strict comparison
counted float noise among identical rows as disorder: round 22, 3 of 373 dense task searches, each four trials of one
task scoring 1.0 give or take 1e-7 ('Deprecation warnings from numpy ...', 'Rule L060 could give ...')."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))

import eval_generalise  # noqa: E402

from trajsearch.search import SCORE_TIE  # noqa: E402


def test_a_tie_listed_by_name_is_in_score_order() -> None:
    noise = SCORE_TIE / 10
    assert not eval_generalise.out_of_order([1.0 - noise, 1.0, 1.0 + noise, 1.0, 0.7577])


def test_a_score_rising_beyond_a_tie_is_out_of_order() -> None:
    assert eval_generalise.out_of_order([0.9, 0.7, 0.7 + 10 * SCORE_TIE])
    assert not eval_generalise.out_of_order([0.9, 0.7, 0.6])
