"""Where a query shows in a text: the terms to look for, and the part of a long text to show around them.

One place for every interface that shows a hit (the web page marks the terms, the CLI prints a line):
an error sits at the tail of a long output, so a text cut from its head drops the very line that
was pasted; these pick the part that holds it.
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/'-]*[A-Za-z0-9_]|[A-Za-z0-9_]")
_STOP = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its no not of on or "
    "that the then there this to was were what when where which while who why will with you your".split()
)
MAX_TERMS = 40
MAX_MATCHES = 200  # per text: a term found everywhere in a 1 MB output counts its first 200


def terms(query: str) -> tuple[str, ...]:
    """What to look for of ``query``: its last line first (a pasted line matched whole: what a pasted
    traceback or log is about, see :func:`excerpt`), then its other lines and its words, longest first.

    A line is one of 8 characters or more holding a space (only lines hold a space); the first term is the
    last such line not seen earlier in the query: the last line itself unless it is short (``Killed``) or a
    repeat, when it is a line above it, which :func:`excerpt` keeps in view only if it is specific."""
    if not query:
        return ()
    lines: dict[str, None] = {}
    for line in query.splitlines():
        line = " ".join(line.split())
        if len(line) >= 8 and " " in line:
            lines[line.lower()] = None
    last = list(lines)[-1:]
    found: dict[str, None] = dict(lines)
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
    rest = sorted((term for term in found if term not in last), key=len, reverse=True)
    return tuple(last + rest)[:MAX_TERMS]


def _last_line(query_terms: tuple[str, ...]) -> str:
    """The query's last line, as :func:`terms` puts it first ("" when the query has no such line)."""
    return query_terms[0] if query_terms and " " in query_terms[0] else ""


@lru_cache(maxsize=256)
def term_pattern(query_terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for ``query_terms``, longest first (a pasted line wins over its words at the same place)."""
    if not query_terms:
        return None
    # whitespace inside a pasted line matches any run of whitespace in the text; a term starts a word
    # ("date" matches "date" and "dates", not "update")
    alternatives = [(r"(?<![A-Za-z0-9])" if term[:1].isalnum() else "")
                    + r"\s+".join(re.escape(part) for part in term.split(" "))
                    for term in sorted(query_terms, key=len, reverse=True)]
    return re.compile("|".join(alternatives), re.IGNORECASE)


def matches(text: str, query_terms: tuple[str, ...]) -> list[re.Match[str]]:
    """The first :data:`MAX_MATCHES` places ``text`` holds one of ``query_terms``, in order."""
    pattern = term_pattern(query_terms)
    if pattern is None:
        return []
    found = []
    for match in pattern.finditer(text):
        if len(found) >= MAX_MATCHES:
            break
        if match.end() > match.start():
            found.append(match)
    return found


def excerpt(text: str, query_terms: tuple[str, ...], limit: int) -> str:
    """At most ``limit`` characters of ``text``: all of it if it fits, else the part holding the most of the
    query (a pasted line counts by its length), centred on its best match, "…" where it was cut.

    Where the text holds the query's last line and that line is specific (see :func:`_specific`), the part
    holds it, with what led to it: a pasted traceback ends in its exception, the line the reader wants, and
    its frames outweighed that line in a terminal's few hundred characters (probe p42 D4: 10 of 12 whole
    tracebacks printed without it). A generic last line (make's ``*** [all] Error 2``) only counts as much
    as it weighs: the compiler error above it is what the paste is about (review 2, F7).
    A text holding none of the terms keeps its head, as before."""
    if len(text) <= limit:
        return text
    last = _last_line(query_terms)
    found = matches(text, query_terms)
    anchors = [match for match in found if last and _term(match) == last]
    tail = _last_occurrence(text, last)
    if tail and (not found or tail.start() > found[-1].start()):  # beyond the matches counted (review 2, F1)
        found.append(tail)
        anchors.append(tail)
    if not found:
        return text[: limit - 1] + "…"
    width = limit - 2  # room for an ellipsis on each side
    anchors = anchors if _specific(last) else []
    starts = [match.start() - (width - (match.end() - match.start())) // 2 for match in found]
    starts += [match.end() - width for match in anchors]  # ending at the last line: what led to it
    best_start, best_score = 0, (False, -1)
    for start in starts:
        start = max(0, min(start, len(text) - width))
        score = (any(start <= a.start() and a.end() <= start + width for a in anchors),
                 _weight(found, start, start + width))
        if score > best_score:
            best_start, best_score = start, score
    end = best_start + width
    return ("…" if best_start > 0 else "") + text[best_start:end] + ("…" if end < len(text) else "")


#: An error named with its detail (``ValueError: column 'flux' ...``, ``error: 'SO_REUSEPORT' undeclared``,
#: a Rust panic), unlike a run's generic closing line (``make: *** [all] Error 2``, ``1 failed in 0.12s``).
_NAMED_ERROR = re.compile(r"(?:error|exception|fault):\s*\S|panicked at ", re.IGNORECASE)
_SPECIFIC_WORDS = 8  # a sentence this long says what went wrong, error name or not
#: A closing line a tool prints after whatever failed, however it words it: its detail is an exit code or a count
#: (GitHub Actions' ``Error: Process completed with exit code 1.``, cargo's ``error: could not compile `x` ... due to
#: 1 previous error``, ``Error: Command failed with exit code 1``).
_GENERIC_CLOSE = re.compile(r"exit (?:code|status)\s*\d+|due to \d+ previous errors?|could not compile|"
                            r"command failed|process completed|\berror \d+\s*$", re.IGNORECASE)


def _specific(line: str) -> bool:
    """Whether a pasted last line says what went wrong, so that it is worth keeping in view above all."""
    if not line or _GENERIC_CLOSE.search(line):
        return False
    return bool(_NAMED_ERROR.search(line)) or len(_WORD.findall(line)) >= _SPECIFIC_WORDS


def _last_occurrence(text: str, line: str) -> re.Match[str] | None:
    """Where ``text`` last holds ``line``, searched in the whole text: one pattern, one pass, however many
    other terms the text holds before it (a long test output's frames used up :data:`MAX_MATCHES`)."""
    if not line:
        return None
    last = None
    for last in term_pattern((line,)).finditer(text):
        pass
    return last


def _term(match: re.Match[str]) -> str:
    """The term a match is of, as :func:`terms` writes it (lower case, single spaces)."""
    return " ".join(match.group(0).lower().split())


def _weight(found: list[re.Match[str]], start: int, end: int) -> int:
    """How much of the query the window [start, end) shows: the lengths of the distinct terms inside it."""
    inside = {_term(m) for m in found if start <= m.start() and m.end() <= end}
    return sum(len(term) for term in inside)


def failure_error(failure_text: str) -> str:
    """The ``Error:`` line of a failure row's text: what a run is matched on when it is the query
    ("runs like this one")."""
    for line in failure_text.splitlines():
        if line.startswith("Error: "):
            return line[len("Error: "):].strip()
    return ""
