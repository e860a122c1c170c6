"""A long pasted query marks and excerpts what the one regex of its terms found, found in linear time (probe I, I1).

``excerpt.matches`` ran ``term_pattern`` over each shown text: a pasted line of many words costs, from every place
of the text, the length of its partial match there (a 10,000-word query against 64 KB of its words took 9 s).
Terms longer in all than ``REGEX_TERMS_CHARS`` are now looked for one by one with ``str.find``; these check that
the places found are the regex's, on real outputs (``tests/fixtures/mini-swe-agent/.real/pasted-failure-ends``,
see its README.md) and on what ``re.IGNORECASE`` and ``\\s+`` make subtle. No timing is asserted:
``scripts/bench_query_regex.py`` times it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.excerpt import REGEX_TERMS_CHARS, excerpt, matches, term_pattern, terms
from trajsearch.ingest.read import read_dump
from trajsearch.web.highlight import highlight

FILES = Path(__file__).parent / "fixtures/mini-swe-agent/.real/pasted-failure-ends"


def _regex_spans(text: str, query_terms: tuple[str, ...]) -> list[tuple[int, int]]:
    """What the one regex of ``query_terms`` finds in ``text`` (the first 200, as ``matches`` keeps)."""
    pattern = term_pattern(query_terms)
    return [(m.start(), m.end()) for m in pattern.finditer(text) if m.end() > m.start()][:200]


def _spans(text: str, query_terms: tuple[str, ...]) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in matches(text, query_terms)]


def _outputs() -> list[str]:
    runs = [p.trajectory for f in sorted(FILES.glob("*.traj.json")) for p in read_dump(f) if p.trajectory]
    return [s.observation for run in runs for s in run.steps if s.observation and len(s.observation) > 2000]


def test_a_long_pasted_output_marks_what_the_regex_marked() -> None:
    """A paste of an output's last lines (a long query: looked for term by term) marks the regex's places, in
    its whitespace as pasted (spaces for its newlines and indents) and upper-cased, and its excerpt shows some."""
    outputs = _outputs()
    assert outputs
    for text in outputs:
        lines = [line for line in text.splitlines() if line.strip()]
        paste = "\n".join(lines[-12:])
        for query in (paste, paste.upper(), " ".join(paste.split())):
            query_terms = terms(query)
            assert sum(map(len, query_terms)) > REGEX_TERMS_CHARS  # the path under test
            found = _spans(text, query_terms)
            assert found and found == _regex_spans(text, query_terms)
            shown = excerpt(text, query_terms, 1200)
            assert "<mark>" in str(highlight(shown, query_terms))


#: Texts where folding case or whitespace could go wrong: what re.IGNORECASE takes for one another (ſ and s,
#: K and k, İ and i, Σ σ ς), whitespace other than spaces, a word's start (``date`` is not in ``update``), NUL.
TRICKY = [
    "Update the date: DATE\u00a0\u2003 dates  ſtate KELVIN İI ıi ΣΑΣ σας ẞß ß",
    "x\x00date\x00 date\n\n\tdates update-date _date 9date date9",
    "a" * 300 + " " + "ab" * 200 + "\r\n" + "AB" * 150,
]


@pytest.mark.parametrize("text", TRICKY)
def test_long_terms_find_what_the_regex_finds_in_tricky_text(text: str) -> None:
    """Long and short terms together (so the long path runs), each written as a query's words or line would be."""
    filler = "z" * (REGEX_TERMS_CHARS + 1)  # a term found nowhere that makes the terms long
    for extra in (("date",), ("state",), ("kelvin", "ii i"), ("σας",), ("ß",), ("ẞ",), ("date dates",),
                  ("ab" * 10,), ("a" * 50,), ("x\x00date",), ("_date",), ("update-date",), ("9date", "date9")):
        query_terms = (filler, *extra)
        assert _spans(text, query_terms) == _regex_spans(text, query_terms), extra
