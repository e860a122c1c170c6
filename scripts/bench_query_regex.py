"""Time the query-side regex work on the worst queries the service accepts (20,000 characters).

Every search routes its query (``fusion.resolve_mode``: ``_LOG_SIGNS``, ``_MARKDOWN`` ...), tokenises it
(``store.tokenize.tokenize_query``: ``_CHUNK``) and lifts the rows holding it verbatim
(``FusionConfig.verbatim_lift``). Python's ``re`` holds the GIL for a whole match, so one query that
costs seconds stalls every other caller of the process (probe I, I1). Each is timed here on crafted
inputs (long tokens of ``[\\w.-]``, runs of slashes, dots, spaces, blank lines, punctuation, non-ASCII)
at 5,000 and 20,000 characters: linear work grows 4x between the two, quadratic 16x.

    python scripts/bench_query_regex.py                  # this checkout
    python scripts/bench_query_regex.py --against HEAD~3 # and the modules of another commit, side by side

Medians of 3 (tokenising with its memo emptied first: a repeated word would be answered from it).

A second table times the patterns run on ingested or shown text (a dump ingested through the server reaches
them): the excerpt of a hit (``excerpt.excerpt``: ``matches``, a 10,000-word pasted line against 64 KB of its
words), BERT's sure tokens (``runtime.format._SURE_TOKENS``, CJK), a traceback's last line
(``represent._TRACEBACK_TAIL``, blank lines), an exit note (``failures.templates._EXIT_NOTE``, spaces), an
instance id (``ingest.outcomes._INSTANCE_ID``, ``__``) and a source file's name (``touched._SOURCE``, dots).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from trajsearch import fusion  # noqa: E402
from trajsearch.store import tokenize  # noqa: E402


def worst(n: int) -> dict[str, str]:
    """Crafted queries of ``n`` characters, each a shape some query-side pattern once scanned quadratically."""
    return {
        "hex token": ("0123456789abcdef" * n)[:n],
        "x token": "x" * n,
        "dotted-dashed token": ("a.b-c" * n)[:n],
        "dunder token": ("__a" * n)[:n],
        "non-ASCII token": ("é日ß" * n)[:n],
        "slashes": "/" * n,
        "title, then a path run": ("Fix the bug in the " + "a/" * n)[:n],
        "dots": "a" + "." * (n - 1),
        "dashes": "-" * n,
        "backslashes": "\\" * n,
        "spaces": "a" + " " * (n - 2) + "b",
        "blank lines": "x" + "\n \t" * ((n - 2) // 3) + "y",
        "punctuation": ("(){}[]<>=`'\"" * n)[:n],
        "words": ("a " * n)[: n - 1] + "b",
    }


def module_at(rev: str, path: str, name: str) -> types.ModuleType:
    """``path`` as it was at commit ``rev``, imported under ``name`` (its relative imports made absolute)."""
    source = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout
    source = source.replace("from .vocab import", "from trajsearch.vocab import")
    module = types.ModuleType(name)
    module.__package__ = str(Path(path).parent).replace("/", ".")  # its relative imports: this checkout's
    sys.modules[name] = module
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)  # noqa: S102 - this repository's own code
    return module


def median(fn: Callable[[int], object], repeat: int = 3) -> float:
    times = []
    for i in range(repeat):
        started = time.perf_counter()
        fn(i)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def timings(fus: types.ModuleType, tok: types.ModuleType, query: str) -> tuple[float, float, float]:
    """Seconds to route, tokenise (a fresh word each time) and lift rows for ``query``."""
    row = {"row": query[: len(query) // 2] * 3}  # a candidate row repeating the query's start
    route = median(lambda i: fus.resolve_mode("auto", query))
    tokens = median(lambda i: (tok._tokens_of.clear(), tok._wholes_of.clear(), tok.tokenize_query(query)))
    lift = median(lambda i: fus.FusionConfig().verbatim_lift(query, {"row": 1.0}, row))
    return route, tokens, lift


def text_timings(rev: str | None, n: int) -> dict[str, float]:
    """Seconds for each ingested-text pattern on its worst input of about ``n`` characters, as at ``rev``
    (this checkout when None). A 10,000-word query is timed against ``n * 8`` characters of its words."""
    def load(path: str, name: str) -> types.ModuleType:
        if rev is None:
            return importlib.import_module("trajsearch." + path.removeprefix("trajsearch/").removesuffix(".py")
                                           .replace("/", "."))
        return module_at(rev, path, f"{name}_{rev}")
    excerpt = load("trajsearch/excerpt.py", "excerpt")
    fmt = load("trajsearch/runtime/format.py", "format")
    rep = load("trajsearch/represent.py", "represent")
    tpl = load("trajsearch/failures/templates.py", "templates")
    out = load("trajsearch/ingest/outcomes.py", "outcomes")
    tch = load("trajsearch/touched.py", "touched")
    query_terms = excerpt.terms(" ".join(["word"] * 10_000) + " end")  # a line the text holds all but the end of
    shown = ("word " * (2 * n))[: n * 8]
    cases = {
        "excerpt 10k-word line": lambda i: excerpt.excerpt(shown, query_terms, 1200),
        "sure tokens, CJK": lambda i: fmt._SURE_TOKENS.findall("日本語" * (n // 3)),
        "traceback tail, blank lines": lambda i: rep._TRACEBACK_TAIL.findall("x" + "\n " * (n // 2)),
        "exit note, spaces": lambda i: tpl._EXIT_NOTE.sub("", "a" + " " * n + "b"),
        "instance id, __": lambda i: out._INSTANCE_ID.match("__a" * (n // 3)),
        "source file, dots": lambda i: tch._SOURCE.search("." * n),
    }
    return {name: median(fn) for name, fn in cases.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", help="a commit whose modules are timed too")
    ap.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000])
    ap.add_argument("--text-sizes", type=int, nargs="+", default=[2_000, 8_000])
    ap.add_argument("--text-only", action="store_true", help="only the table of ingested-text patterns")
    args = ap.parse_args()
    if not args.text_only:
        query_table(args)
    revs = ([args.against] if args.against else []) + [None]
    print("\n| ingested-text pattern | chars | " + " | ".join("old" if r else "new" for r in revs) + " |")
    print("|---" * (2 + len(revs)) + "|")
    for n in args.text_sizes:
        cells = [text_timings(rev, n) for rev in revs]
        for name in cells[0]:
            print(f"| {name} | {n} | " + " | ".join(f"{c[name]:.3f}" for c in cells) + " |", flush=True)
    return 0


def query_table(args: argparse.Namespace) -> None:
    """The table of query-side patterns (routing, tokenising, lifting)."""
    versions = {"new": (fusion, tokenize)}
    if args.against:
        versions = {"old": (module_at(args.against, "trajsearch/fusion.py", "old_fusion"),
                            module_at(args.against, "trajsearch/store/tokenize.py", "old_tokenize")), **versions}
    print("| input | chars | " + " | ".join(f"{what} {v}" for what in ("route", "tokenise", "lift")
                                           for v in versions) + " |")
    print("|---" * (2 + 3 * len(versions)) + "|")
    for n in args.sizes:
        for name, query in worst(n).items():
            cells = {v: timings(fus, tok, query) for v, (fus, tok) in versions.items()}
            print(f"| {name} | {n} | " + " | ".join(f"{cells[v][k]:.3f}" for k in range(3) for v in versions) + " |",
                  flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
