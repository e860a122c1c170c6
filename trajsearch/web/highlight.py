"""Mark a query's terms in trace text, safely: every piece of text is escaped, the marks are the only markup.

Matches are found in the raw text; the result is built from escaped pieces and
``<mark>`` tags, so a term can never match inside an entity (``&amp;``) and text
from a trace can never become markup, whatever it holds.
"""

from __future__ import annotations

from markupsafe import Markup, escape

from ..excerpt import MAX_MATCHES as MAX_MARKS, matches, terms

__all__ = ["MAX_MARKS", "highlight", "terms"]


def highlight(text: str | None, query_terms: tuple[str, ...]) -> Markup:
    """``text`` escaped, with every occurrence of ``query_terms`` wrapped in ``<mark>``."""
    text = text or ""
    pieces: list[str] = []
    last = 0
    for match in matches(text, query_terms):
        pieces.append(escape(text[last:match.start()]))
        pieces.append(Markup("<mark>") + escape(match.group(0)) + Markup("</mark>"))
        last = match.end()
    pieces.append(escape(text[last:]))
    return Markup("").join(pieces)
