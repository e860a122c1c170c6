"""Fusing the dense and lexical legs, and deciding when a query needs both.

One small place for every fusion decision (after txtai's ``hybrid.py``):
reciprocal rank fusion by default, a weighted score blend as the option, the
query classifier that picks ``hybrid`` for pasted log lines, and
:class:`FusionConfig` (weights per kind of query, pool depth, verbatim-first);
the façade only fetches the legs and the rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .vocab import MODES


#: RRF's constant: large enough that rank 1 vs 2 is not decisive on its own.
RRF_K = 60

_LOG_SIGNS = re.compile(
    r"""(
        \b[A-Z][A-Za-z]*(Error|Exception|Exit|Warning)\b   # exception class names
      | \b(exit|return)\s*code\b | \breturncode\b | \berrno\b
      | Traceback | \bFAILED\b | \bERROR\b | \bfatal:
      | [\w.-]+/[\w./-]+                                   # paths
      | \b\w+\.(py|js|ts|go|rs|java|rb|sh|yaml|yml|json|toml)\b
      | \b[a-z]+_[a-z_]+\b                                 # snake_case identifiers / tool names
      | \s--?[a-z][\w-]*                                   # command-line flags
      | \b\d{3,}\b                                         # codes, ports, line numbers
      | [(){}\[\]<>=`'"]
    )""",
    re.X,
)


#: Signs that a *short* line is a log record: a leading ``Name:`` label (``Error: not found``,
#: ``KeyError: 'x'``, ``fatal: ...``), a code such as ``E501``, a dunder name.
_SHORT_LOG_SIGNS = re.compile(r"^\s*[A-Za-z_][\w.]*:(\s|$) | \b[A-Z]{2,}\d+\b | \b__\w+__\b", re.X)


def looks_like_log(text: str) -> bool:
    """True for pasted error lines, commands, paths and identifiers; False for prose tasks.

    Calibrated with ``scripts/eval_exact.py``: the short-line signs route tool errors
    such as ``Error: Reservation not found`` to hybrid (dense alone finds the run
    holding the exact line for about a quarter of them) without routing more prose.
    """
    signs = len(_LOG_SIGNS.findall(text))
    words = max(1, len(text.split()))
    return (signs >= 2 or (signs >= 1 and words <= 8)
            or (words <= 16 and _SHORT_LOG_SIGNS.search(text) is not None))


def resolve_mode(mode: str, text: str) -> str:
    """``auto`` becomes ``hybrid`` for log-like queries and ``dense`` for prose."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: expected one of {list(MODES)}")
    if mode != "auto":
        return mode
    return "hybrid" if looks_like_log(text) else "dense"


def rrf(rankings: Sequence[Sequence[str]], weights: Sequence[float] | None = None, k: int = RRF_K) -> dict[str, float]:
    """Weighted reciprocal rank fusion: ``sum_i w_i / (k + rank_i)``.

    Args:
        rankings: one list of ids per leg, best first.
        weights: one weight per leg (default: equal).
        k: the RRF constant.
    Returns:
        id -> fused score (higher is better).
    """
    weights = weights or [1.0] * len(rankings)
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, rid in enumerate(ranking, 1):
            fused[rid] = fused.get(rid, 0.0) + weight / (k + rank)
    return fused


def weighted(scores: Sequence[dict[str, float]], weights: Sequence[float]) -> dict[str, float]:
    """Convex blend of min-max normalised scores, one dict (id -> score) per leg.

    Args:
        scores: raw scores per leg (cosine for dense, BM25 for lexical).
        weights: one weight per leg.
    Returns:
        id -> fused score in [0, sum(weights)].
    """
    fused: dict[str, float] = {}
    for leg, weight in zip(scores, weights):
        if not leg:
            continue
        low, high = min(leg.values()), max(leg.values())
        span = (high - low) or 1.0
        for rid, score in leg.items():
            fused[rid] = fused.get(rid, 0.0) + weight * (score - low) / span
    return fused


@dataclass(frozen=True)
class FusionConfig:
    """How hybrid search fuses its legs: RRF weights (dense, lexical) per kind of query.

    Pasted log lines, commands and paths lean on the lexical leg: equal-weight RRF
    dilutes exact matches (FACTS.md: below plain BM25 on two of three query classes).
    """

    prose_weights: tuple[float, float] = (1.0, 1.0)
    log_weights: tuple[float, float] = (1.0, 3.0)
    pool: int = 50  # candidates per leg
    #: Rows holding the whole query verbatim (whitespace-normalised, at least
    #: ``verbatim_min_chars`` long) rank above all others: a pasted error line or
    #: command wants the run where exactly that happened. On ../shared/data this took
    #: hybrid hit@1 on exact lines from 0.57-0.65 to 1.00 (scripts/eval_exact.py).
    verbatim_first: bool = True
    verbatim_min_chars: int = 8

    def weights(self, text: str) -> tuple[float, float]:
        return self.log_weights if looks_like_log(text) else self.prose_weights

    def pool_size(self, k: int, group_size: int) -> int:
        """Candidates asked of each leg: enough for k runs of group_size rows after fusion."""
        return max(self.pool, k * max(group_size, 1) * 5)

    def fuse(self, text: str, dense: Sequence[str], lexical: Sequence[tuple[str, float]], mode: str) -> dict[str, float]:
        """id -> fused score: BM25 alone in lexical mode, else weighted RRF of the two rankings."""
        if mode == "lexical":
            return dict(lexical)
        return rrf([list(dense), [rid for rid, _ in lexical]], weights=self.weights(text))

    def shortlist_size(self, k: int, group_size: int) -> int:
        """How many of the best fused candidates are fetched by key up front and checked for the
        query verbatim (grouping walks further when these hold fewer than ``k`` runs)."""
        return k * max(group_size, 1) * 4

    def verbatim_lift(self, text: str, scores: dict[str, float], texts: dict[str, str]) -> dict[str, float]:
        """Rows whose text holds the whole query (whitespace-normalised) above every other row."""
        needle = " ".join(text.split())
        if not self.verbatim_first or len(needle) < self.verbatim_min_chars:
            return scores
        lift = max(scores.values(), default=0.0)
        return {rid: score + (lift if rid in texts and needle in " ".join(texts[rid].split()) else 0.0)
                for rid, score in scores.items()}
