"""The engineer's search on a real store: errors in other words (hit@1/@5 per mode), and how alike related and
unrelated pastes score (the weak-match note's cut, ``trajsearch.weak_match``).

Run on a store of real runs (``--store DIR``: ``milvus.db`` and ``traces/`` as ``ingest`` leaves them; round 26
measured the gemini-3-pro store of 500 mini-swe-agent runs, tenant = repository), with the real model:

- ``paraphrase``: ``tests/fixtures/.eng-search-r26/paraphrases.jsonl``, real error lines of that store each written
  again in other words; a hit is a run among the top 1 / 5 whose steps printed the original line (case aside);
- ``exact``: up to 60 other Python exception lines the store's runs printed, searched as printed;
- ``cross-tenant``: 40 of those searched in another repository's tenant (the same language, other runs);
- ``ood prose`` (scripts/ood_tasks.txt), ``foreign errors`` (the fixture's unrelated.txt), ``random`` (per tenant,
  random words of 120 KB clipped as the CLI clips, and of 8 words): pastes that share nothing with the runs.

For each class: the cosine the note judges (the closest row inside the filters: ``weak_match.closest_cosine``; min /
p10 / median / max), how many the note would flag, the modes auto ran.
``python scripts/eval_paraphrases.py --store /path/to/store``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import string
from collections import Counter
from pathlib import Path

from _common import ROOT, load_model, ood_tasks, open_store

FIXTURES = ROOT / "tests/fixtures/.eng-search-r26"
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit): .{8,160}$")
MODES = ("dense", "lexical", "hybrid", "auto")


def printed(store: Path) -> dict[str, dict[str, str]]:
    """Each tenant's runs: run id -> what its steps got back (observations and errors)."""
    runs: dict[str, dict[str, str]] = {}
    for path in sorted((store / "traces").glob("*/*.json.gz")):
        run = json.load(gzip.open(path))
        runs.setdefault(run["tenant"], {})[run["trajectory_id"]] = "\n".join(
            f"{s.get('observation') or ''}\n{s.get('error') or ''}" for s in run["steps"])
    return runs


def exception_lines(runs: dict[str, dict[str, str]], skip: set[str], n: int, rng: random.Random) -> list[tuple]:
    """Up to ``n`` distinct exception lines the runs printed (tenant, line), none of ``skip``."""
    found = {(t, line.strip()) for t, texts in runs.items() for text in texts.values()
             for line in text.splitlines() if EXCEPTION_LINE.match(line.strip()) and line.strip() not in skip}
    return rng.sample(sorted(found), min(n, len(found)))


def random_words(chars: int, rng: random.Random) -> str:
    return " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(2, 9)))
                    for _ in range(chars // 3))[:chars]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    from trajsearch.runtime import task_query
    from trajsearch.store.filters import Filters
    from trajsearch.weak_match import WEAK_SIMILARITY, closest_cosine, weak_match_note

    rng = random.Random(args.seed)
    model, _ = load_model(args.model)
    ts = open_store(args.store, model)
    runs = printed(args.store)
    tenants = sorted(runs)
    lowered = {t: {rid: text.lower() for rid, text in texts.items()} for t, texts in runs.items()}

    def ask(text: str, tenant: str, mode: str = "auto") -> dict:
        text = task_query(text)
        hits = ts.search(text, tenant=tenant, k=5, mode=mode)
        return dict(runs=[h.trajectory_id for h in hits], best=closest_cosine(hits),
                    noted=weak_match_note(hits) is not None, ran=ts.mode_used(text, Filters(tenant=tenant), mode))

    para = [json.loads(line) for line in (FIXTURES / "paraphrases.jsonl").read_text().splitlines() if line.strip()]
    print(f"paraphrases: {len(para)} (hit: a run among the top 1 / 5 printed the original line)")
    for mode in MODES:
        at1 = at5 = 0
        for p in para:
            held = {rid for rid, text in lowered[p["tenant"]].items() if p["line"].lower() in text}
            got = ask(p["paraphrase"], p["tenant"], mode)["runs"]
            at1 += bool(got[:1] and got[0] in held)
            at5 += bool(held & set(got))
        print(f"  {mode:8s} hit@1 {at1}/{len(para)}  hit@5 {at5}/{len(para)}")
    exact = exception_lines(runs, {p["line"] for p in para}, 60, rng)
    classes = {
        "exact": [ask(line, t) for t, line in exact],
        "paraphrase": [ask(p["paraphrase"], p["tenant"]) for p in para],
        "cross-tenant": [ask(line, rng.choice([o for o in tenants if o != t])) for t, line in exact[:40]],
        "ood prose": [ask(task, rng.choice(tenants)) for task in ood_tasks()],
        "foreign errors": [ask(line, rng.choice(tenants)) for line in ood_tasks(FIXTURES / "unrelated.txt")],
        "random": [ask(random_words(size, rng), t) for t in tenants for size in (120_000, 60)],
    }
    print(f"closest row's cosine per class (the note's: closest_cosine), and how many the weak-match note "
          f"(< {WEAK_SIMILARITY}) flags:")
    for name, rows in classes.items():
        best = sorted(r["best"] for r in rows if r["best"] is not None)
        print(f"  {name:15s} n={len(rows):3d} noted {sum(r['noted'] for r in rows):3d}  min {best[0]:.3f}  "
              f"p10 {best[len(best) // 10]:.3f}  median {statistics.median(best):.3f}  max {best[-1]:.3f}  "
              f"auto ran {dict(Counter(r['ran'] for r in rows))}")
    ts.close()


if __name__ == "__main__":
    main()
