"""Whether a search's hits are alike the text at all: the one note saying they are not.

Every search returns its k nearest rows, however far: a 120 KB random paste, a Java stack trace searched among Python
runs, or a question about cooking was answered with k runs and nothing said (round 25). Ranks (hybrid) and BM25
(lexical) have no absolute scale; a cosine has one. The verdict is on the closest row the search's dense leg found
inside its filters (``Hit.closest``, the same on every hit of one answer), not on the hits shown: hybrid shows the
fused ranking's rows, whose cosines are lower and change with ``k`` (a pasted sqlfluff error was noted at ``-k 1``,
its first hit an astroid row at 0.31, while dense found sqlfluff-1763 at 0.46; no note at ``-k 5``). Both, and
whether a hit holds the text verbatim, are carried by the wire, so the CLI (either backend), the search page and the
gRPC answers say the same words for the same search, decided here alone.
"""

from __future__ import annotations

from typing import Iterable

from .results import Hit

#: Below this cosine between the text and the closest row inside the filters, the hits are not like the text. Measured
#: on the gemini-3-pro store (500 runs, 12 tenants, the real model, default search; ``scripts/eval_paraphrases.py``):
#: real error lines held by a run, 0 of 60 noted (median 0.621, the lowest 0.319); reworded ones 0.289 at least (1 of
#: 39 noted, median 0.534); pastes sharing nothing with the runs mostly below (74 of 79 noted: 40 out-of-domain tasks,
#: 15 other ecosystems' errors, 24 random pastes up to 120 KB; medians 0.17-0.25, at most 0.418). The runtime's
#: novelty floor (``NoveltyConfig.inspiration``, a task to a task) is this number, splitting the same two kinds: kept
#: here, light, so the CLI's client path reads it without the runtime's imports (pymilvus).
WEAK_SIMILARITY = 0.314


def closest_cosine(hits: Iterable[Hit], *, shown_only: bool = False) -> float | None:
    """The cosine the note judges ``hits`` by: the closest row's inside the search's filters (``Hit.closest``), or
    where unknown (an older server) the best hit's (``Hit.similarity``); None with no cosine (lexical mode).
    ``shown_only``: the best hit's alone, for hits some of those found were dropped from after the search (the
    search page's model and end-date filters past its scope, ``web.views.search.MODEL_SCOPE_RUNS``): the closest
    row may be a dropped run's, which the reader is not shown and which is not like what they are shown."""
    return max((c for h in hits for c in ((h.similarity,) if shown_only else (h.closest, h.similarity))
                if c is not None), default=None)


def weak_match_note(hits: Iterable[Hit], *, shown_only: bool = False) -> str | None:
    """The note for ``hits`` none of which holds their text (``Hit.verbatim``: a short line a row holds word for word
    is met there whatever its cosine) when the closest row inside the search's filters is not alike it
    (:func:`closest_cosine` under :data:`WEAK_SIMILARITY`), or None: alike, held, no hit, or no cosine to judge by
    (lexical mode). ``shown_only``: judged by the hits' own cosines (see :func:`closest_cosine`)."""
    hits = list(hits)
    best = closest_cosine(hits, shown_only=shown_only)
    if best is None or best >= WEAK_SIMILARITY or any(h.verbatim for h in hits):
        return None
    # at the cut's own precision: at two places a cosine of 0.305 read "only 0.31 similar ... under 0.31"
    return (f"weak match: the closest row found is only {best:.3f} similar to what was searched (cosine; under "
            f"{WEAK_SIMILARITY:.3f} where text that has nothing to do with these runs scores) and none holds it: "
            "these are the nearest rows, not runs like it")
