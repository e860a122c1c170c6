"""Reranking with explicit features, and diversity.

score = w_similarity * similarity
      + w_tools      * tool overlap   (share of the run's tools that are available now)
      + w_recency    * recency        (0.5 ** (age_days / half_life_days))
      + w_quality    * quality        (quality_score, else reward clipped to 0..1, else 0.5)

Each feature lies in 0..1 (similarity is a cosine), so a weight reads as "how
much this feature may move a candidate against similarity". Diversity then
takes candidates best first, at most one per trajectory, skipping any whose
text embeds closer than ``max_cosine`` to one already chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Sequence

import numpy as np

from ..results import Hit
from .context import RuntimeContext

NEUTRAL = 0.5


@dataclass(frozen=True)
class RerankConfig:
    enabled: bool = True
    w_similarity: float = 1.0
    w_tools: float = 0.10
    w_recency: float = 0.05
    w_quality: float = 0.10
    half_life_days: float = 180.0
    diversity: bool = True
    max_cosine: float = 0.95


@dataclass
class Scored:
    """A candidate run: its best hit, its features, and the combined score."""

    hit: Hit
    similarity: float
    score: float
    features: dict[str, float] = field(default_factory=dict)


def tool_overlap(hit: Hit, ctx: RuntimeContext) -> float:
    if not ctx.tools_available or not hit.tools:
        return 1.0  # nothing known to be missing
    return len(set(hit.tools) & set(ctx.tools_available)) / len(set(hit.tools))


def recency(hit: Hit, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now.timestamp() - hit.created_at) / 86_400)
    return 0.5 ** (age_days / half_life_days)


def quality(hit: Hit) -> float:
    if hit.quality_score is not None:
        return float(hit.quality_score)
    if hit.reward is not None:
        return min(1.0, max(0.0, float(hit.reward)))
    return NEUTRAL


def rerank(hits: Sequence[Hit], ctx: RuntimeContext, config: RerankConfig) -> list[Scored]:
    """Candidates best first; with reranking off the order is plain similarity."""
    scored = []
    for hit in hits:
        features = {
            "similarity": hit.score,
            "tools": tool_overlap(hit, ctx),
            "recency": recency(hit, ctx.now, config.half_life_days),
            "quality": quality(hit),
        }
        score = hit.score
        if config.enabled:
            score = (
                config.w_similarity * features["similarity"]
                + config.w_tools * features["tools"]
                + config.w_recency * features["recency"]
                + config.w_quality * features["quality"]
            )
        scored.append(Scored(hit, hit.score, score, features))
    return sorted(scored, key=lambda s: -s.score)


def diversify(
    candidates: Sequence[Scored],
    k: int,
    *,
    embed: Callable[[Sequence[str]], np.ndarray],
    text_of: Callable[[Scored], str],
    max_cosine: float,
) -> list[Scored]:
    """Up to ``k`` candidates in order: one per trajectory, none a near-copy of a chosen one."""
    chosen: list[Scored] = []
    vectors: list[np.ndarray] = []
    seen: set[str] = set()
    for candidate in candidates:
        if len(chosen) == k:
            break
        if candidate.hit.trajectory_id in seen:
            continue
        vector = embed([text_of(candidate)])[0]
        if any(float(np.dot(vector, v)) > max_cosine for v in vectors):
            continue
        chosen.append(candidate)
        vectors.append(vector)
        seen.add(candidate.hit.trajectory_id)
    return chosen
