"""Benchmark the lexical leg: tokenisation, bulk upsert, build, filtered query latency, save/load.

The corpus is synthetic but shaped like the real thing: the mini-swe-agent and
tau-bench runs in ../shared/data go through the project's adapters and
``represent()``, and each benchmark row is one of those real rows (same level,
length and tools) with 40% of its lines swapped for lines of other rows, plus
some injected exit-code and import-error lines as near-duplicate distractors.

    python scripts/bench_lexical.py                 # 100k-row tenant + 3 small ones (minutes)
    python scripts/bench_lexical.py --rows 5000 --quality --quality-rows 5000

Figures of one run, 2026-11-30, 100k rows of ~2,250 chars / 663 tokens (one tenant of
100k + three of 2k/1k/0.5k), sparse inverted index, on the shared 2-core machine under
load average 8-10 (niced; the 1e7-int sum took 0.4-0.6 s against 0.2 s at the quietest
seen, so expect 2-3x less when idle). The rebuild and query rows were measured before
two later changes (np.insert merge for rebuilds, float32 scoring + binary-search
coordination), which the 20k run printed by the script now reflects:

| measure                                               | result |
|-------------------------------------------------------|--------|
| tokenise 10k rows: cold memo / warm                   | 33.0 s / 13.9 s |
| bulk upsert 103.5k rows: total / tokenise / rest      | 427 s / 213 s / 214 s |
| build of the 100k tenant from counts                  | 15.2 s |
| RSS: after upsert (pending counts) / after build      | 565 MB / 861 MB (arrays 301 MB, 1.2M terms) |
| query top-10, tenant + level (200 queries)            | p50 21.0 ms, p95 51.6 ms |
| query top-10, tenant + 5 filters                      | p50 21.3 ms, p95 43.6 ms |
| query top-10, 2k-row tenant + level                   | p50 0.8 ms, p95 9.2 ms |
| upsert 50 rows + next search (delta segment)          | 213 ms |
| rebuild of the base after that (no re-tokenising)     | 6.7 s |
| save / load 103.5k rows (.npz, no row text)           | 2.9 s (333 MB) / 9.4 s |
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import statistics
import tempfile
import time
from pathlib import Path

from trajsearch.store.filters import Filters
from trajsearch.store.lexical import LexicalIndex
from trajsearch.store import tokenize as tokenizer_module
from trajsearch.store.tokenize import tokenize

SHARED = Path(os.environ.get("TRAJSEARCH_SHARED", Path(__file__).resolve().parents[2] / "shared"))
EXIT_CODES = (0, 1, 2, 3, 124, 126, 127, 130, 137, 139, 143, 255)
MODULES = ("yaml", "numpy", "pandas", "requests", "marshmallow", "pvlib", "astroid", "sqlfluff",
           "pydicom", "pyvista", "scipy", "toml", "attr", "six", "dateutil", "pytest")
OUTCOMES = ("success", "failure", "infra_error", "unknown")


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_ref() -> float:
    """Seconds for a fixed pure-Python loop: how busy this shared machine is right now."""
    t0 = time.perf_counter()
    sum(range(10_000_000))
    return time.perf_counter() - t0


def load_material() -> dict[str, list]:
    """Real index rows: the shared runs through the project's own adapters and represent()."""
    from trajsearch.ingest.read import read_dump
    from trajsearch.represent import represent

    rows: list[tuple[str, str, str, list[str]]] = []  # level, text, task family, tools
    for source in (SHARED / "data/mini-swe-agent-dev", SHARED / "data/tau-bench/gpt-4o-airline.json"):
        for parsed in read_dump(source):
            run = parsed.trajectory
            if parsed.error or run is None:
                continue
            every_tool = sorted({s.action for s in run.steps if s.action})
            for r in represent(run):
                tools = sorted({p["action"] for p in r.steps if p["action"]}) if r.steps else every_tool
                rows.append((r.level, r.text, run.task_family or "none", tools))
    lines = [ln for _, text, _, _ in rows for ln in text.splitlines() if ln.strip()]
    return dict(rows=rows, lines=lines)


def make_text(rng: random.Random, mat: dict[str, list]) -> tuple[str, str, str, list[str]]:
    """A new row shaped like a real one: a real row with 40% of its lines swapped for
    lines of other rows, plus some injected exit-code and import-error lines."""
    level, text, family, tools = rng.choice(mat["rows"])
    lines = [ln if rng.random() < 0.6 else rng.choice(mat["lines"]) for ln in text.splitlines()]
    if rng.random() < 0.15:
        lines.insert(rng.randint(0, len(lines)), f"Command failed with exit code {rng.choice(EXIT_CODES)}")
    if rng.random() < 0.08:
        lines.insert(rng.randint(0, len(lines)), f"ModuleNotFoundError: No module named '{rng.choice(MODULES)}'")
    return level, "\n".join(lines), family, tools


def make_rows(rng: random.Random, mat: dict[str, list], tenant: str, n: int, start: int = 0) -> list[dict]:
    rows, traj, meta = [], None, {}
    for i in range(n):
        if traj is None or rng.random() < 1 / 40:  # about 40 rows per trajectory
            traj = f"{tenant}-traj-{start + i}"
            meta = dict(outcome=rng.choice(OUTCOMES), env_version=f"env-{rng.randint(1, 4)}",
                        policy_version=f"policy-{rng.randint(1, 6)}")
        level, text, family, tools = make_text(rng, mat)
        rows.append(dict(id=f"{tenant}-{start + i}", tenant=tenant, text=text, level=level,
                         task_family=family, trajectory_id=traj, tools=tools,
                         created_at=1_700_000_000 + start + i, **meta))
    return rows


def make_queries(rng: random.Random, rows: list[dict], n: int) -> list[str]:
    """Exact error / command lines from rows, short log probes, and tool-call phrases."""
    queries: list[str] = []
    while len(queries) < n:
        kind = rng.random()
        if kind < 0.5:
            lines = [ln.strip() for ln in rng.choice(rows)["text"].splitlines() if len(ln.split()) >= 3]
            if lines:
                queries.append(rng.choice(lines)[:200])
        elif kind < 0.8:
            queries.append(rng.choice([
                f"exit code {rng.choice(EXIT_CODES)}",
                f"ModuleNotFoundError: No module named '{rng.choice(MODULES)}'",
                "pytest -x tests/test_api.py", "AttributeError: module 'collections' has no attribute 'Mapping'",
                "src/app/main.py", "python reproduce_issue.py", "Traceback (most recent call last)",
                "get_reservation_details", "update_reservation_flights cabin economy",
            ]))
        else:
            words = rng.choice(rows)["text"].split()
            i = rng.randrange(max(1, len(words) - 6))
            queries.append(" ".join(words[i:i + rng.randint(2, 6)]))
    return queries


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def time_queries(index: LexicalIndex, queries: list[str], filters: Filters, limit: int = 10) -> tuple[float, float]:
    index.search("warm up", filters, limit)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        index.search(q, filters, limit)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), pct(times, 0.95)


class _TimedTokenizer:
    """The project tokenizer, timing itself: separates tokenising from storing in upsert."""

    __module__ = tokenize.__module__
    __qualname__ = tokenize.__qualname__  # same tokenizer id, so load() accepts its files

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self, text: str) -> list[str]:
        t0 = time.perf_counter()
        out = tokenize(text)
        self.seconds += time.perf_counter() - t0
        return out


def _index_mb(index: LexicalIndex) -> float:
    """Bytes held by the index's numpy arrays (CSC, lengths, filter columns), in MB."""
    total = 0
    for part in index._parts.values():
        seg = part.base
        if seg is not None:
            total += seg.indptr.nbytes + seg.rows.nbytes + seg.tf.nbytes + seg.doc_len.nbytes
            total += seg.columns.created_at.nbytes + sum(c.nbytes for c, _ in seg.columns.codes.values())
    return total / 1e6


def bench(rows_big: int, n_queries: int, seed: int) -> None:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    mat = load_material()
    big = make_rows(rng, mat, "big", rows_big)
    small = [r for t, n in (("small-a", 2000), ("small-b", 1000), ("small-c", 500))
             for r in make_rows(rng, mat, t, n)]
    queries = make_queries(rng, big, n_queries)
    chars = sum(len(r["text"]) for r in big)
    print(f"corpus: {len(big):,} rows in 'big' (+{len(small):,} in 3 small tenants), "
          f"{chars / len(big):.0f} chars/row; built in {time.perf_counter() - t0:.1f} s")

    results: list[tuple[str, str]] = [("machine: load average / 1e7-int sum (0.2 s at the quietest seen)",
                                        f"{os.getloadavg()[0]:.1f} / {_cpu_ref():.2f} s")]
    sample = [r["text"] for r in big[:10_000]]
    tokenizer_module._tokens_of.clear()
    tokenizer_module._wholes_of.clear()
    for label, bigrams in (("cold memo", True), ("warm memo", True)):
        t0 = time.perf_counter()
        n_tok = sum(len(tokenize(t, bigrams=bigrams)) for t in sample)
        results.append((f"tokenise {len(sample):,} rows, {label}",
                        f"{time.perf_counter() - t0:.2f} s, {n_tok / len(sample):.0f} tokens/row"))
    del sample
    gc.collect()
    rss0 = _rss_mb()
    timed = _TimedTokenizer()
    index = LexicalIndex(tokenizer=timed)
    t0 = time.perf_counter()
    for i in range(0, len(big), 5_000):  # as index.py loads from Milvus: batches of 5,000
        index.upsert(big[i:i + 5_000])
    index.upsert(small)
    total = time.perf_counter() - t0
    results.append(("bulk upsert: total / of which tokenise / rest (counts, vocab, store)",
                     f"{total:.2f} s / {timed.seconds:.2f} s / {total - timed.seconds:.2f} s "
                     f"for {len(index):,} rows"))
    gc.collect()
    rss1 = _rss_mb()
    t0 = time.perf_counter()
    index.refresh("big")
    results.append(("build of 'big' from counts (CSC + filter columns)", f"{time.perf_counter() - t0:.2f} s"))
    t0 = time.perf_counter()
    index.refresh()
    results.append(("build of the 3 small tenants", f"{time.perf_counter() - t0:.2f} s"))
    gc.collect()
    rss2 = _rss_mb()
    results.append(("RSS growth: after upsert (pending counts) / after builds",
                    f"{rss1 - rss0:.0f} MB / {rss2 - rss0:.0f} MB (numpy arrays {_index_mb(index):.0f} MB, "
                    f"'big' vocabulary {len(index._parts['big'].vocab):,} terms)"))

    f_level = Filters(tenant="big", levels=("step",))
    f_sel = Filters(tenant="big", levels=("step", "failure"), outcomes=("failure",), tools=("bash", "book_reservation"),
                    exclude_trajectory_ids=(big[0]["trajectory_id"],), created_after=1_700_000_000 + rows_big // 4)
    for label, f in (("tenant + level", f_level), ("tenant + level/outcome/tools/exclude/after", f_sel),
                     ("tenant only", Filters(tenant="big"))):
        p50, p95 = time_queries(index, queries, f)
        results.append((f"query top-10, {label}", f"p50 {p50:.2f} ms, p95 {p95:.2f} ms"))
    p50, p95 = time_queries(index, queries, Filters(tenant="small-a", levels=("step",)))
    results.append(("query top-10, small tenant (2k) + level", f"p50 {p50:.2f} ms, p95 {p95:.2f} ms"))

    traj = make_rows(rng, mat, "big", 50, start=rows_big)
    t0 = time.perf_counter()
    index.upsert(traj)
    index.search("exit code 137", f_level, 10)
    results.append(("upsert 50 rows (a run) + next search (delta)", f"{(time.perf_counter() - t0) * 1000:.0f} ms"))
    p50, p95 = time_queries(index, queries, f_level)
    results.append(("query top-10, tenant + level, base + 50-row delta", f"p50 {p50:.2f} ms, p95 {p95:.2f} ms"))
    t0 = time.perf_counter()
    index.refresh("big")
    results.append(("rebuild of 'big' base after the 50-row run", f"{time.perf_counter() - t0:.2f} s"))
    hits = index.search("exit code 137", f_level, 3)
    path = Path(tempfile.mkdtemp()) / "lexical.npz"
    t0 = time.perf_counter()
    saved = index.save(path)
    results.append(("save (.npz)", f"{time.perf_counter() - t0:.2f} s, {saved:,} rows, "
                                   f"{path.stat().st_size / 1e6:.0f} MB"))
    expected = [index.search(q, f_level, 10) for q in queries[:50]]
    del index
    gc.collect()
    t0 = time.perf_counter()
    loaded = LexicalIndex.load(path, tokenizer=timed)
    results.append(("load (.npz)", f"{time.perf_counter() - t0:.2f} s, {len(loaded):,} rows"))
    same = sum(loaded.search(q, f_level, 10) == e for q, e in zip(queries[:50], expected))
    results.append(("loaded index answers as the saved one", f"{same} of 50 queries identical"))
    p50, p95 = time_queries(loaded, queries, f_level)
    results.append(("query top-10, tenant + level, loaded index", f"p50 {p50:.2f} ms, p95 {p95:.2f} ms"))
    path.unlink()
    results.append(("machine at the end: load average / int sum", f"{os.getloadavg()[0]:.1f} / {_cpu_ref():.2f} s"))
    _table(results)
    print("sample: 'exit code 137' ->", [(i, round(s, 2)) for i, s in hits])


def _contains(text: str, needle: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(needle.lower()) + r"(?!\w)", text.lower()) is not None


def make_probes(rng: random.Random, rows: list[dict]) -> dict[str, list[tuple[str, str]]]:
    """(query, needle) pairs: a hit is a returned row whose text holds the needle."""
    texts = [r["text"] for r in rows]
    probes: dict[str, list[tuple[str, str]]] = {
        "exact line": [], "phrase, 2-4 words": [], "path, other spelling": [], "sentence of a thought": [],
        "import error": [(f"ModuleNotFoundError: No module named '{m}'",) * 2 for m in MODULES],
        "exit code N": [(f"exit code {c}",) * 2 for c in EXIT_CODES],
    }
    while len(probes["exact line"]) < 300:
        lines = [ln.strip() for ln in rng.choice(texts).splitlines() if len(ln.split()) >= 4]
        if lines:
            line = rng.choice(lines)[:200]
            probes["exact line"].append((line, line))
    while len(probes["phrase, 2-4 words"]) < 300:
        words = re.findall(r"\w+", rng.choice(texts))
        if len(words) > 4:
            i = rng.randrange(len(words) - 4)
            phrase = " ".join(words[i:i + rng.randint(2, 4)])
            probes["phrase, 2-4 words"].append((phrase, phrase))
    while len(probes["path, other spelling"]) < 150:
        paths = re.findall(r"(?<![\w/.])((?:/|\./)?[\w.-]+(?:/[\w.-]+)+\.py)\b", rng.choice(texts))
        if paths:
            path = rng.choice(paths)
            comps = [c for c in path.split("/") if c not in ("", ".")]
            if path.startswith("/") and len(comps) >= 3:  # absolute -> relative
                probes["path, other spelling"].append(("/".join(comps[1:]),) * 2)
            elif not path.startswith("/"):  # relative -> absolute
                probes["path, other spelling"].append(("/testbed/" + "/".join(comps), "/".join(comps)))
    thoughts = [m.group(1) for t in texts for m in re.finditer(r"thought: ([^\n]{30,})", t)]
    while len(probes["sentence of a thought"]) < 150:
        sentence = re.split(r"(?<=[.!?:])\s", rng.choice(thoughts))[0][:150]
        if len(sentence.split()) >= 5:
            probes["sentence of a thought"].append((sentence, sentence))
    return probes


def _hit(kind: str, text: str, needle: str) -> bool:
    if kind in ("phrase, 2-4 words", "exit code N"):  # whole words, punctuation ignored
        return _contains(re.sub(r"\W+", " ", text), needle)
    return needle.lower() in text.lower()


def quality(rows_n: int, seed: int) -> None:
    """Tokenizers and scoring choices: is the top hit a row holding the query string?"""
    rng = random.Random(seed + 1)
    rows = make_rows(rng, load_material(), "q", rows_n)
    text_of = {r["id"]: r["text"] for r in rows}
    probes = make_probes(rng, rows)
    word = re.compile(r"\w+")
    configs = {
        "generic \\w+ tokens, textbook BM25": dict(
            tokenizer=lambda s: word.findall(s.lower()), query_tokenizer=lambda s: (word.findall(s.lower()), []),
            coord=False, b=0.75),
        "ours, no bigrams, textbook BM25": dict(
            tokenizer=lambda s: tokenize(s, bigrams=False),
            query_tokenizer=lambda s: (list(dict.fromkeys(tokenize(s, bigrams=False))), []), coord=False, b=0.75),
        "ours, textbook BM25 (b .75, parts weigh 1)": dict(part_weight=1.0, coord=False, b=0.75),
        "ours, b .5, parts weigh .3, no coord": dict(coord=False),
        "ours, default (b .5, parts .3, coord)": {},
    }
    f = Filters(tenant="q")
    table: dict[str, dict[str, str]] = {}
    for name, kwargs in configs.items():
        index = LexicalIndex(**kwargs)
        index.upsert(rows)
        for kind, pairs in probes.items():
            top1 = p10 = 0.0
            for query, needle in pairs:
                ok = [_hit(kind, text_of[i], needle) for i, _ in index.search(query, f, 10)]
                top1 += bool(ok and ok[0])
                p10 += sum(ok) / 10
            table.setdefault(kind, {})[name] = f"{top1 / len(pairs):.2f} / {p10 / len(pairs):.2f}"
    print(f"\nquality on {rows_n:,} rows: hit@1 / P@10, a hit holds the query string "
          f"(phrases and exit codes: as whole words, punctuation ignored)")
    names = list(configs)
    print("| probe (n) | " + " | ".join(names) + " |\n|---|" + "---|" * len(names))
    for kind, cells in table.items():
        print(f"| {kind} ({len(probes[kind])}) | " + " | ".join(cells[n] for n in names) + " |")


def _table(rows: list[tuple[str, str]]) -> None:
    width = max(len(a) for a, _ in rows)
    print(f"| {'measure'.ljust(width)} | result |\n|{'-' * (width + 2)}|--------|")
    for a, b in rows:
        print(f"| {a.ljust(width)} | {b} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000, help="rows in the big tenant")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--quality", action="store_true", help="also compare tokenizers and scoring choices")
    ap.add_argument("--quality-rows", type=int, default=20_000)
    ap.add_argument("--no-speed", action="store_true", help="skip the speed benchmark")
    args = ap.parse_args()
    if not args.no_speed:
        bench(args.rows, args.queries, args.seed)
    if args.quality:
        quality(args.quality_rows, args.seed)


if __name__ == "__main__":
    main()
