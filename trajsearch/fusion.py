"""Fusing the dense and lexical legs, and deciding when a query needs both.

One small place for every fusion decision (after txtai's ``hybrid.py``):
reciprocal rank fusion by default, a weighted score blend as the option, and
the query classifier that picks ``hybrid`` for pasted log lines.
"""

from __future__ import annotations

import re
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
