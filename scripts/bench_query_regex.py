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
"""

from __future__ import annotations

import argparse
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--against", help="a commit whose fusion.py and store/tokenize.py are timed too")
    ap.add_argument("--sizes", type=int, nargs="+", default=[5_000, 20_000])
    args = ap.parse_args()
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
