"""What the pages show, computed from the library façade inside one key's tenant and pins.

Nothing here knows about HTTP: the app parses a request into a form or an id,
calls these functions with the signed-in :class:`Principal`, and renders the
result. Every read goes through the façade with ``tenant=principal.tenant``; a
run outside the key's tenant or pins is indistinguishable from a missing one
(:class:`NotFound`, one text for every case). One module per page (search,
run, compare, failures) and what they share (common).
"""

from __future__ import annotations

from ...service.auth import narrow
from .common import (
    K_CHOICES, LEVEL_CHOICES, NOT_FOUND_TEXT, NotFound, TraceDamaged, TraceMissing, TraceUnavailable, no_runs_said, run_link,
    visible_run, when,
)
from .compare import align, compare_view, first_divergence
from .failures import PERIODS, FailuresForm, failures_view
from .run import SIMILAR_RANKING, load_trace, run_for_trace_uri, run_view, trace_held
from .search import PAGE_READ_SLOTS, SCORE_MEANINGS, Facets, SearchForm, TraceFacts, search

__all__ = [
    "K_CHOICES", "LEVEL_CHOICES", "NOT_FOUND_TEXT", "PAGE_READ_SLOTS", "PERIODS", "SCORE_MEANINGS", "SIMILAR_RANKING", "Facets", "FailuresForm", "NotFound", "SearchForm",
    "TraceDamaged", "TraceFacts", "TraceMissing", "TraceUnavailable", "align", "compare_view", "failures_view", "first_divergence",
    "load_trace", "narrow", "no_runs_said",
    "run_for_trace_uri", "run_link", "run_view", "search", "trace_held", "visible_run", "when",
]
