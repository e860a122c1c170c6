"""Whether a search's hits are alike the text at all: the one note saying they are not.

Every search returns its k nearest rows, however far: a 120 KB random paste, a Java stack trace searched among Python
runs, or a question about cooking was answered with k runs and nothing said (round 25). Ranks (hybrid) and BM25
(lexical) have no absolute scale; the cosine of the query and each hit (``Hit.similarity``, computed in dense and
hybrid modes and carried by the wire, as is whether a hit holds the text verbatim) has one. Decided here alone from the hits, so the CLI (either backend), the
search page and the gRPC answers say the same words for the same hits.
"""

from __future__ import annotations

from typing import Iterable

from .results import Hit

#: Below this cosine between the text and its closest hit, the hits are not like the text. Measured on the
#: gemini-3-pro store (500 runs, 12 tenants, the real model, default search; ``scripts/eval_paraphrases.py``): real
#: error lines held by a run, 0 of 60 noted (median 0.544; the lowest, 0.174, held verbatim); reworded ones 0.289 at
#: least (1 of 39 noted, median 0.526); pastes sharing nothing with the runs at most 0.342 (75 of 79 noted: 40
#: out-of-domain tasks, 15 other ecosystems' errors, 24 random pastes up to 120 KB; medians 0.17-0.21). The runtime's
#: novelty floor (``NoveltyConfig.inspiration``, a task to a task) is the same number, splitting the same two kinds.
WEAK_SIMILARITY = 0.314


def weak_match_note(hits: Iterable[Hit]) -> str | None:
    """The note for ``hits`` none of which is alike their text (the closest's cosine under :data:`WEAK_SIMILARITY`)
    or holds it (``Hit.verbatim``: a short line a row holds word for word is met there whatever its cosine), or
    None: alike, held, no hit, or no cosine to judge by (lexical mode, an older server)."""
    hits = list(hits)
    similarities = [h.similarity for h in hits if h.similarity is not None]
    if not similarities or any(h.verbatim for h in hits) or (best := max(similarities)) >= WEAK_SIMILARITY:
        return None
    return (f"weak match: the closest hit is only {best:.2f} similar to what was searched (cosine; under "
            f"{WEAK_SIMILARITY:.2f} where text that has nothing to do with these runs scores) and none holds it: "
            "these are the nearest rows, not runs like it")
