"""Probe 52 (PERF): queries of the longest size the service accepts route in linear time.

``fusion._NOT_TITLE`` looked for a path to a file (``\\w/[\\w/.-]*\\.[a-z]{1,4}\\b``) from every ``x/`` of a run of
path characters, scanning to the run's end and back each time: a line of a few words and one 20,000-character run
of ``a/b/c/...`` without an extension took 0.8-2 s to route (measured at HEAD, load 1-6), holding the GIL against
every other caller of the service, the runtime's warnings and the web search box. It now looks once per run.

The time of each is measured by ``scripts/bench_query_regex.py`` (shape "title, then a path run"), not here: a
timed test fails on a busy machine. These tests pin the answers and the tokenizer's memory, which load does not move.
"""

from __future__ import annotations

import tracemalloc

from trajsearch.fusion import looks_like_log, resolve_mode
from trajsearch.search import MAX_QUERY_CHARS

#: A title-like line (four to twenty words) whose last word is one long run of path characters with no extension.
SLASHES = "Fix the bug in the " + "a/" * ((MAX_QUERY_CHARS - 20) // 2)


def test_a_long_run_of_slashes_routes_as_before():
    """The route of the old, quadratic pattern (0.8-2 s for this query; timed by scripts/bench_query_regex.py)."""
    assert len(SLASHES) <= MAX_QUERY_CHARS
    assert resolve_mode("auto", SLASHES) == "dense"  # as before: a title-like line, no file path in it


def test_a_path_to_a_file_anywhere_in_a_run_still_rules_out_a_title():
    """The same rule as before: a path to a file (``x/y.py``), wherever it stands in its run of path characters,
    makes a line no title; the linear pattern finds it from the run's start."""
    title = "Crash saving the form"  # a title (no sentence: too short), so only the title rule decides
    assert looks_like_log(title) is False
    for path in ("pkg/forms.py", "a.b/c-d/forms.py", "./x/y/z.json", "-x/y.sh", "a..b/c.py/d", "a/b.c1/x.py",
                 "é/x.py"):
        assert looks_like_log(f"{title} {path}") is True, path
    assert looks_like_log(f"{title} pkg/forms/py") is False  # no extension: as before, a title


def test_a_long_path_tokenizes_in_little_memory_with_the_same_tokens():
    """Bug: the lexical tokenizer made every trailing sub-path of a path (``a/b/c`` -> ``b/c``, ``a/b/c``), each as
    long as the rest of the path, and kept only those of up to 120 characters: for a query of a 20,000-character
    ``a/b/c/...`` run (an ``auto`` search of a title-like line looks it up lexically) ~100 MB of strings and 2-7 s
    at HEAD. Now only the kept ones are made: the same tokens, in the same order."""
    from trajsearch.store.tokenize import tokenize, tokenize_query

    tracemalloc.start()
    try:
        whole, parts = tokenize_query(SLASHES)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000  # ~100 MB of sub-paths before; the kept ones are ~10,000 of up to 120 characters
    assert "a/a" in whole + parts and "a/a/a" in whole + parts
    parts = ["testbed", *(f"pkg{i}" for i in range(30)), "tools.py"]  # a path of over 120 characters
    tails = ["/".join(parts[k:]) for k in range(len(parts) - 1)]
    kept = [tail for tail in tails if len(tail) <= 120]
    tokens = tokenize("/" + "/".join(parts), bigrams=False)
    assert 2 < len(kept) < len(tails)
    assert [t for t in tokens if t in tails] == kept  # every tail of up to 120 characters, longest first, as before
