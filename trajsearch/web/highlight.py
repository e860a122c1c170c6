"""Mark a query's terms in trace text, safely: every piece of text is escaped, the marks are the only markup.

Matches are found in the raw text; the result is built from escaped pieces and
``<mark>`` tags, so a term can never match inside an entity (``&amp;``) and text
from a trace can never become markup, whatever it holds.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markupsafe import Markup, escape

_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/'-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_STOP = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its no not of on or "
    "that the then there this to was were what when where which while who why will with you your".split()
)
MAX_TERMS = 40
MAX_MARKS = 200  # per text: a term found everywhere in a 1 MB output marks the first 200


def terms(query: str) -> tuple[str, ...]:
    """What to mark for ``query``: its lines (a pasted line matched whole), then its words, longest first."""
    if not query:
        return ()
    found: dict[str, None] = {}
    for line in query.splitlines():
        line = " ".join(line.split())
        if len(line) >= 8 and " " in line:
            found[line.lower()] = None
    for word in _WORD.findall(query):
        word = word.strip(".:/'-")
        if len(word) < 3 and not word.isdigit():
            continue
        if word.lower() in _STOP:
            continue
        found[word.lower()] = None
        for part in re.split(r"[.:/'_-]+", word):  # parts of dotted names, paths, snake_case
            if len(part) >= 3 and part.lower() not in _STOP:
                found[part.lower()] = None
    return tuple(sorted(found, key=len, reverse=True)[:MAX_TERMS])


@lru_cache(maxsize=256)
def _pattern(query_terms: tuple[str, ...]) -> re.Pattern[str] | None:
    if not query_terms:
        return None
    # whitespace inside a pasted line matches any run of whitespace in the text; a term starts a word
    # ("date" marks "date" and "dates", not "update")
    alternatives = [(r"(?<![A-Za-z0-9])" if term[:1].isalnum() else "")
                    + r"\s+".join(re.escape(part) for part in term.split(" ")) for term in query_terms]
    return re.compile("|".join(alternatives), re.IGNORECASE)


def highlight(text: str | None, query_terms: tuple[str, ...]) -> Markup:
    """``text`` escaped, with every occurrence of ``query_terms`` wrapped in ``<mark>``."""
    text = text or ""
    pattern = _pattern(query_terms)
    if pattern is None:
        return escape(text)
    pieces: list[str] = []
    last = 0
    for n, match in enumerate(pattern.finditer(text)):
        if n >= MAX_MARKS:
            break
        if match.end() == match.start():
            continue
        pieces.append(escape(text[last:match.start()]))
        pieces.append(Markup("<mark>") + escape(match.group(0)) + Markup("</mark>"))
        last = match.end()
    pieces.append(escape(text[last:]))
    return Markup("").join(pieces)
