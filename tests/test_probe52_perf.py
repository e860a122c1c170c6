"""Probe 52 (PERF): queries and tasks of the longest size the service accepts get the same answers as before, and
are answered at all.

``fusion._NOT_TITLE`` looked for a path to a file (``\\w/[\\w/.-]*\\.[a-z]{1,4}\\b``) from every ``x/`` of a run of
path characters, scanning to the run's end and back each time: a line of a few words and one 20,000-character run
of ``a/b/c/...`` without an extension took 0.8-2 s to route (measured at HEAD, load 1-6), holding the GIL against
every other caller of the service, the runtime's warnings and the web search box. It now looks once per run.

The time of each is measured by ``scripts/bench_query_regex.py`` (shape "title, then a path run"), not here: a
timed test fails on a busy machine, and none here would catch the quadratic pattern's return. These tests pin the
answers (routes, tokens, identifiers, exemplars), the tokenizer's memory and the identifiers' size, which load does not
move (review RPERF).
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
    from trajsearch.store import tokenize as tokenizer
    from trajsearch.store.tokenize import tokenize, tokenize_query

    tokenizer._tokens_of.clear()  # a word another test tokenized would be answered from the memo, making nothing
    tokenizer._wholes_of.clear()
    tracemalloc.start()
    try:
        whole, parts = tokenize_query(SLASHES)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000  # ~100 MB of sub-paths before; now 59 sub-paths of up to 120 characters made, and the
    # 9,990 one-letter parts
    assert "a/a" in whole + parts and "a/a/a" in whole + parts
    parts = ["testbed", *(f"pkg{i}" for i in range(30)), "tools.py"]  # a path of over 120 characters
    tails = ["/".join(parts[k:]) for k in range(len(parts) - 1)]
    kept = [tail for tail in tails if len(tail) <= 120]
    tokens = tokenize("/" + "/".join(parts), bigrams=False)
    assert 2 < len(kept) < len(tails)
    assert [t for t in tokens if t in tails] == kept  # every tail of up to 120 characters, longest first, as before


#: A task of the longest size the service takes, naming one long dotted chain (a pasted ``a.b.c...`` run: a
#: minified bundle's property path, an OID, a dump of dotted keys).
CHAIN = ("Fix the crash in pvlib " + "a." * MAX_QUERY_CHARS)[:MAX_QUERY_CHARS - 6].rstrip(".")


def test_a_long_dotted_chain_makes_identifiers_of_linear_size():
    """Bug (review RPERF): :func:`~trajsearch.touched.identifiers` made every prefix of a dotted chain in both
    spellings (``a.a``, ``a/a.py``, ``a.a.a``, ...), n strings of up to the chain's length: 199,470,339 characters
    for this task (~200 MB, then kept by a cache of whole tasks). Now only prefixes of up to ``PREFIX_MAX``
    characters, as the lexical index keeps no longer token: their total size is the task's and a constant."""
    from trajsearch.touched import PREFIX_MAX, identifiers

    names = identifiers(CHAIN)
    assert CHAIN.rsplit(" ", 1)[1] in names  # the chain itself, whole
    assert max(len(n) for n in names if n != CHAIN.rsplit(" ", 1)[1]) <= PREFIX_MAX + len("/.py")
    assert sum(map(len, names)) < len(CHAIN) + 2 * PREFIX_MAX ** 2  # all the prefixes: 199 M characters before
    assert "a.a" in names and "a/a.py" in names


def test_a_dotted_name_of_real_length_yields_the_same_identifiers():
    """The same prefixes as before for names of real length, and for a chain past ``PREFIX_MAX`` every prefix up
    to it, longest first, as before."""
    from trajsearch.touched import PREFIX_MAX, identifiers

    assert identifiers("Fix pvlib.irradiance.reindl()") == [
        "pvlib.irradiance.reindl", "pvlib.irradiance", "pvlib/irradiance.py"]
    parts = [f"mod{i}" for i in range(40)]  # 40 parts of 4-5 characters: 194 characters
    names = identifiers("In " + ".".join(parts) + " it fails")
    prefixes = [".".join(parts[:n]) for n in range(len(parts) - 1, 1, -1)]
    kept = [p for p in prefixes if len(p) <= PREFIX_MAX]
    assert 2 < len(kept) < len(prefixes)
    assert names == [".".join(parts), *(x for p in kept for x in (p, p.replace(".", "/") + ".py"))]


def test_exemplars_answer_a_task_of_a_long_dotted_chain(hashing_ts):
    """Bug (review RPERF): the exemplars of :data:`CHAIN` failed "query text too long (199470339 > 20000 chars)"
    after 7 s and 400 MB: the task's identifiers, joined unclipped into the lexical query for the runs whose
    ``Touched:`` line names them. Now answered, the lexical query clipped as the step rows' one was."""
    from conftest import BASE_TIME, make_run

    from trajsearch.runtime import AdviceConfig, NoveltyConfig, Runtime, RuntimeConfig, RuntimeContext

    hashing_ts.add([make_run("fix", task="Fix the crash in pvlib irradiance", steps=[
        ("bash", {"command": "cat pvlib/irradiance.py"}, "def reindl(a):\n    return a\n"),
        ("bash", {"command": "sed -i 's/a/b/' pvlib/irradiance.py"}, ""),
        ("bash", {"command": "git diff"}, "diff --git a/pvlib/irradiance.py b/pvlib/irradiance.py\n"
                                          "--- a/pvlib/irradiance.py\n+++ b/pvlib/irradiance.py\n@@ -1 +1 @@\n-a\n+b\n"),
    ])])
    gate = NoveltyConfig(follow_closely=1.0, inspiration=0.0, per_tenant=False)  # always look
    found = Runtime(hashing_ts, RuntimeConfig(advice=AdviceConfig(novelty=gate))).exemplars(
        CHAIN, RuntimeContext(tenant="acme", now=BASE_TIME), k=3)
    assert [e.trajectory_id for e in found.items] == ["fix"]
