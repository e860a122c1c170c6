"""Exact-string retrieval on the real runs in ../shared/data: dense vs lexical vs hybrid.

Every run of tau-bench (200) and mini-swe-agent (84) is ingested with the real
model into one tenant (the store is cached under /tmp: a rerun skips unchanged
runs and only pays for the queries). Query lines are then collected from the
runs' real observations, in classes (each line goes to the first class that
claims it, so the classes do not overlap):

- ``traceback``: the last line of every Python traceback (the exception message);
- ``returncode!=0``: the decisive line of a command that exited non-zero
  (``decisive_line``: last exception line, else the last error-looking line,
  else the last line), unless the traceback class already holds it;
- ``tool error``: the first line of a tau-bench tool reply starting "Error";
- ``command (bash)``: a one-line mini-swe-agent bash command;
- ``tool call``: a tau-bench tool call as the step windows render it
  (``name`` + arguments, e.g. ``get_user_details omar_rossi_1241``).

A line is queried only if at least one indexed ``step`` or ``failure`` row of
the tenant holds it verbatim (step windows clip long outputs to their head and
tail, so some lines survive nowhere); how many were dropped is reported.
Queries are deduplicated and sampled (up to ``--per-class``, fixed seed).

Each query is the exact line, tenant-wide, ``levels=step+failure``, grouped by
trajectory (one hit per run), k=5, in modes dense, lexical, hybrid and auto.
A hit is a returned row whose text contains the line; hit@1 / hit@5 are the
shares of queries with a hit at rank 1 / within the top 5. Query vectors are
computed once up front, so every mode sees the same vector.

A second table counts a hit at run level (the top run holds the line in some
row, though its representative row may be another one).

Diagnostics: for hybrid misses at rank 1, where the first holding row ranks in
each leg; a what-if table of hybrid hit@1 under other fusion choices, each a
re-implementation of ``TrajSearch._fused`` here with one change (RRF weights,
``fusion.weighted`` blends, verbatim-first: rows holding the query verbatim go
first), checked against ``ts.search(mode="hybrid")``; how often verbatim-first
changes the runs returned for long prose-like queries (task texts, failure
rows); and how ``fusion.looks_like_log`` routes each class in auto mode, next to
its false positives on prose.
Verbatim-first optimises exactly this metric, so read its row as "a holding
row was always among the fused candidates", not as independent evidence.

Near-verbatim pasted lines (``--near``, default on): real pasted errors rarely match
byte for byte, so each sampled line of at least ``near_min_words`` words is also
queried changed the way another version, machine or run changes it: a word
appended (``..., python, placeholder``), one inner word replaced by a word of
another query line, one number changed. A perturbed line some row holds verbatim
(among the lexical leg's best 50) is skipped: it is no longer a near match. A hit
is a row holding the original line (row level) or a run holding it (run level),
in hybrid and auto mode, with the near-verbatim lift (``FusionConfig.near_share``)
and without it (``near_share`` above 1): before and after in one run.

    python scripts/eval_exact.py                       # store in /tmp/trajsearch-eval-exact
    python scripts/eval_exact.py --fresh --json /tmp/eval_exact.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    CachedEmbedder,
    DiskCachedEmbedder,
    Stopwatch,
    load_model,
    machine_note,
    ood_tasks,
    open_store,
    peak_rss_mb,
    read_real_runs,
    store_dir,
    table,
)

from trajsearch import config  # noqa: E402
from trajsearch.fusion import looks_like_log, rrf, weighted  # noqa: E402
from trajsearch.ingest.adapters._common import decisive_line  # noqa: E402
from trajsearch.model import Trajectory  # noqa: E402
from trajsearch.represent import render_arguments  # noqa: E402
from trajsearch.search import Hit, TrajSearch  # noqa: E402
from trajsearch.store.filters import Filters  # noqa: E402

TENANT = "exact"
LEVELS = ("step", "failure")
MODES = ("dense", "lexical", "hybrid", "auto")
CLASSES = ("traceback", "returncode!=0", "tool error", "command (bash)", "tool call")
K = 5
MIN_CHARS, MAX_CHARS = 6, 400

_TB_START = "Traceback (most recent call last)"
_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning|Failure)\b.*)$")
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_OUTPUT = re.compile(r"<output(?:_tail)?>\n?(.*?)</output(?:_tail)?>", re.S)


#: What-if for auto mode: log signs fusion.looks_like_log misses, measured here (not in the package):
#: a leading ``label:`` (``Error:``, ``bash: line 1:``, ``patch:``, ``TypeError:``), upper-case codes
#: with digits (``HAT139``, ``L022``) and dunder names, enough on their own in a query of <= 16 words.
AS_CONFIGURED = "as configured (RRF + verbatim-first + near-verbatim)"


# -- query lines -------------------------------------------------------------------------


def traceback_lines(observation: str) -> list[str]:
    """The exception line closing each traceback in ``observation``."""
    lines = observation.splitlines()
    starts = [i for i, ln in enumerate(lines) if _TB_START in ln]
    found = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        closing = [ln.strip() for ln in lines[start + 1:end] if _EXC_LINE.match(ln.strip()) and not ln[:1].isspace()]
        if closing:
            found.append(closing[0])  # the first unindented exception line after the frames
    return found


def returncode_line(observation: str) -> str | None:
    code = _RETURNCODE.search(observation)
    if not code or code.group(1) == "0":
        return None
    output = _OUTPUT.search(observation)
    text = output.group(1) if output else observation[code.end():]
    line = decisive_line(text)
    if line is None or line.startswith("…"):  # shortened by decisive_line: not a real line
        return None
    return line


def collect(tau: list[Trajectory], swe: list[Trajectory]) -> dict[str, set[str]]:
    """Candidate query lines per class, from the runs' real observations and actions."""
    found: dict[str, set[str]] = {c: set() for c in CLASSES}
    for swe_run, run in [(False, r) for r in tau] + [(True, r) for r in swe]:
        for step in run.steps:
            obs = step.observation or ""
            for line in traceback_lines(obs):
                found["traceback"].add(line)
            line = returncode_line(obs)
            if line:
                found["returncode!=0"].add(line)
            if not swe_run and step.action and obs.lstrip().lower().startswith("error"):
                found["tool error"].add(obs.strip().splitlines()[0].strip())
            if step.action == "bash" and isinstance(step.arguments, dict):
                command = str(step.arguments.get("command", "")).strip()
                if command and "\n" not in command:
                    found["command (bash)"].add(command)
            elif step.action and step.action != "respond" and not swe_run:
                found["tool call"].add(f"{step.action} {render_arguments(step.arguments)}".strip())
    found["returncode!=0"] -= found["traceback"]
    for name, lines in found.items():
        found[name] = {ln for ln in lines if MIN_CHARS <= len(ln) <= MAX_CHARS}
    return found


# -- evaluation --------------------------------------------------------------------------


def hit_ranks(hits: list[Any], line: str) -> int | None:
    """1-based rank of the first hit whose text holds ``line``, or None."""
    return next((i for i, h in enumerate(hits, 1) if line in h.text), None)


def run_mode(ts: TrajSearch, query: str, mode: str, k: int = K) -> list[Any]:
    return ts.search(query, tenant=TENANT, levels=LEVELS, k=k, group_by_trajectory=True, group_size=1, mode=mode)


def leg_ranks(ts: TrajSearch, line: str, containing: set[str], pool: int = 200) -> tuple[int | None, int | None]:
    """Rank of the first containing row in the dense and in the lexical leg (ungrouped, ``pool`` deep)."""
    filters = Filters(tenant=TENANT, levels=LEVELS)
    vector = ts.embedder.encode([line])[0]
    dense = [r["id"] for r in ts.index.search(vector, filters, limit=pool)]
    lexical = [rid for rid, _ in ts.index.lexical_search(line, filters, limit=pool)]
    first = lambda ids: next((i for i, rid in enumerate(ids, 1) if rid in containing), None)  # noqa: E731
    return first(dense), first(lexical)


def _norm(text: str) -> str:
    return " ".join(text.split())  # as TrajSearch._fused: whitespace-normalised, case kept


#: Added to the fused score of a row holding the query verbatim: above any RRF or blend score.
VERBATIM_BOOST = 100.0


def fused_variant(ts: TrajSearch, text: str, filters: Filters, k: int, *, weights: tuple[float, float] | None = None,
                  blend: bool = False, verbatim: bool = False, near: bool = False) -> list[Hit]:
    """``TrajSearch._fused`` (hybrid, group_size 1) re-implemented with one change at a time, to measure
    proposals without touching the package: other RRF ``weights`` (default: FusionConfig's for
    this text), ``blend`` (fusion.weighted on min-max normalised cosine and BM25 instead of RRF), or
    ``verbatim`` (rows whose text holds the query, whitespace-normalised, go first, as in the package; their
    text is already fetched, so this costs a substring test on at most 4k rows), ``near`` (the lexical leg's
    best rows holding nearly all of the query in order next, ``FusionConfig.near_verbatim_lift``)."""
    weights = weights or ts.fusion.weights(text)
    pool = max(ts.fusion.pool, k * 5)
    lexical = ts.index.lexical_search(text, filters, limit=pool)
    vector = ts.embedder.encode([text])[0]
    dense = {r["id"]: r for r in ts.index.search(vector, filters, limit=pool)}
    if blend:
        scores = weighted([{rid: r["score"] for rid, r in dense.items()}, dict(lexical)], weights)
    else:
        scores = rrf([list(dense), [rid for rid, _ in lexical]], weights=weights)
    checked = [rid for rid, _ in lexical[: ts.fusion.lexical_checked]] if near else []
    best = list(dict.fromkeys(sorted(scores, key=lambda rid: -scores[rid])[: k * 4] + checked))
    rows = dense | {r["id"]: r for r in ts.index.get([rid for rid in best if rid not in dense], filters)}
    if near:
        scores = ts.fusion.near_verbatim_lift(text, scores, {rid: rows[rid]["text"] for rid in checked if rid in rows})
    needle = _norm(text)
    ranked = []
    for rid in best:
        if rid in rows:
            row = dict(rows[rid], score=scores[rid])
            if verbatim and len(needle) >= ts.fusion.verbatim_min_chars and needle in _norm(row["text"]):
                row["score"] += VERBATIM_BOOST
            ranked.append(row)
    return [Hit.from_row(r) for r in _grouped(ranked, k, 1)]



def _grouped(hits: list[dict], k: int, group_size: int) -> list[dict]:
    """At most ``group_size`` hits per trajectory and ``k`` trajectories (those with the best hits), every hit in
    score order: the ablations' own grouping (the façade groups inside its search, which they bypass)."""
    groups: dict[str, list[dict]] = {}
    for hit in sorted(hits, key=lambda h: -h["score"]):
        members = groups.setdefault(hit["trajectory_id"], [])
        if len(members) < group_size:
            members.append(hit)
    ordered = sorted(groups.values(), key=lambda g: -g[0]["score"])[:k]
    return sorted((hit for group in ordered for hit in group), key=lambda h: -h["score"])


_NUMBER = re.compile(r"\b\d+\b")
_INNER_WORD = re.compile(r"\b[A-Za-z]{3,}\b")
PERTURBATIONS = ("word appended", "word replaced", "number changed")


def perturbed(line: str, how: str, rng: random.Random, words: list[str]) -> str | None:
    """``line`` as another version, machine or run pastes it: a word appended after a comma (a
    message listing one more choice), one inner word (not the first or last) replaced by a word of
    another line, or one number changed; None when the line has nothing of that kind."""
    if how == "word appended":
        return f"{line}, {rng.choice(words)}"
    if how == "word replaced":
        inner = list(_INNER_WORD.finditer(line))[1:-1]
        if not inner:
            return None
        m = rng.choice(inner)
        other = rng.choice([w for w in words if w != m.group()])
        return line[: m.start()] + other + line[m.end():]
    numbers = list(_NUMBER.finditer(line))
    if not numbers:
        return None
    m = rng.choice(numbers)
    return line[: m.start()] + str(int(m.group()) + rng.randint(1, 9)) + line[m.end():]


def near_verbatim(ts: TrajSearch, queries: dict[str, list[str]], containing: dict[str, set[str]],
                  runs_of: dict[str, str], rng: random.Random) -> list[list[Any]]:
    """Hit@1 (row / run level) of perturbed lines in hybrid and auto mode, with and without the
    near-verbatim lift: one table row per class and perturbation (see the module docstring)."""
    configured, without = ts.fusion, replace(ts.fusion, near_share=float("inf"))
    words = sorted({w for qs in queries.values() for q in qs for w in _INNER_WORD.findall(q)})
    filters = Filters(tenant=TENANT, levels=LEVELS)
    table_rows = []
    totals: dict[str, list[bool]] = defaultdict(list)
    for name in CLASSES:
        for how in PERTURBATIONS:
            got: dict[str, list[bool]] = defaultdict(list)
            skipped = 0
            for line in queries[name]:
                if len(re.findall(r"\w+", line)) < configured.near_min_words:
                    continue
                query = perturbed(line, how, rng, words)
                if query is None:
                    continue
                top = [rid for rid, _ in ts.index.lexical_search(query, filters, limit=50)]
                if any(_norm(query) in _norm(r["text"]) for r in ts.index.get(top, filters, fields=["text"])):
                    skipped += 1  # some row holds the changed line itself
                    continue
                holding_runs = {runs_of[i] for i in containing[line]}
                for label, fusion in (("before", without), ("after", configured)):
                    ts.fusion = fusion
                    for mode in ("hybrid", "auto"):
                        hits = run_mode(ts, query, mode)
                        got[f"{mode} {label} row"].append(bool(hits) and line in hits[0].text)
                        got[f"{mode} {label} run"].append(bool(hits) and hits[0].trajectory_id in holding_runs)
                ts.fusion = configured
            n = len(got["hybrid after row"])
            if not n:
                continue
            for key, values in got.items():
                totals[key] += values
            table_rows.append([name, how, n, skipped, *(f"{share(got[f'{m} {b} row']):.2f} / "
                                                         f"{share(got[f'{m} {b} run']):.2f}"
                                                         for m in ("hybrid", "auto") for b in ("before", "after"))])
    table_rows.append(["all", "", len(totals["hybrid after row"]), "",
                       *(f"{share(totals[f'{m} {b} row']):.2f} / {share(totals[f'{m} {b} run']):.2f}"
                         for m in ("hybrid", "auto") for b in ("before", "after"))])
    return table_rows


def variants(spec: str) -> list[tuple[str, dict[str, Any]]]:
    """What-if fusion variants: the current config, RRF weights from ``spec``, blends, verbatim-first."""
    out: list[tuple[str, dict[str, Any]]] = [(AS_CONFIGURED, {"verbatim": True, "near": True}),
                                             ("RRF + verbatim-first, without near-verbatim", {"verbatim": True}),
                                             ("RRF as configured, without verbatim-first", {})]
    for w in filter(None, spec.split(",")):
        wd, wl = (float(x) for x in w.split(":"))
        out.append((f"RRF {wd:g}:{wl:g} for every query", {"weights": (wd, wl)}))
    out += [
        ("blend 1:1 (fusion.weighted)", {"blend": True, "weights": (1.0, 1.0)}),
        ("blend 1:3 (fusion.weighted)", {"blend": True, "weights": (1.0, 3.0)}),
        ("RRF 1:1 + verbatim-first", {"verbatim": True, "weights": (1.0, 1.0)}),
    ]
    return out


def share(values: list[bool]) -> float:
    return sum(values) / len(values) if values else float("nan")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=Path("/tmp/trajsearch-eval-exact"))
    ap.add_argument("--fresh", action="store_true", help="delete the cached store first")
    ap.add_argument("--model", default=config.default_model())
    ap.add_argument("--per-class", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sweep", default="1:3,1:10,0:1",
                    help="RRF weights dense:lexical to try in the what-if table ('' for none)")
    ap.add_argument("--no-what-if", action="store_true", help="skip the what-if fusion variants")
    ap.add_argument("--show-misses", type=int, default=6, help="hybrid misses at rank 1 to print per class")
    ap.add_argument("--no-near", dest="near", action="store_false",
                    help="skip the near-verbatim pasted lines (one word or number changed)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--emb-cache", type=Path, help="vectors by text kept on disk between runs (scripts/_common.py)")
    args = ap.parse_args()
    started = time.perf_counter()
    rng = random.Random(args.seed)
    print(f"# trajsearch exact-string evaluation\n\n{machine_note()}\n")

    store = store_dir(args.store / args.model.replace("/", "_"), fresh=args.fresh)
    real = read_real_runs(tenant=TENANT)
    tau, swe, runs = real.tau, real.swe, real.runs
    print(f"parsed {len(tau)} tau-bench + {len(swe)} mini-swe-agent runs ({len(real.rejected)} rejected) "
          f"in {real.seconds:.1f} s")
    model, _ = load_model(args.model)
    if args.emb_cache:
        model = DiskCachedEmbedder(model, args.emb_cache)
    cached = CachedEmbedder(model)
    ts = open_store(store, cached)
    try:
        with Stopwatch() as sw:
            report = ts.add(runs)
        ts.index.flush()
        if args.emb_cache:
            model.save()
        print(f"ingest: {report.ingested} new/changed, {report.unchanged} unchanged, {report.rows} rows written, "
              f"{sw.seconds:.0f} s (store {store})")

        # -- which indexed rows hold which line
        rows = list(ts.index.iterate(["id", "trajectory_id", "level", "text"],
                                     expr=Filters(tenant=TENANT, levels=LEVELS).to_expr()))
        print(f"{len(rows)} step/failure rows in tenant {TENANT!r}\n")
        candidates = collect(tau, swe)
        queries: dict[str, list[str]] = {}
        containing: dict[str, set[str]] = {}
        counts = {}
        for name in CLASSES:
            lines = sorted(candidates[name])
            alive = []
            for line in lines:
                ids = {r["id"] for r in rows if line in r["text"]}
                if ids:
                    containing[line] = ids
                    alive.append(line)
            picked = sorted(rng.sample(alive, min(args.per_class, len(alive))))
            queries[name] = picked
            counts[name] = (len(lines), len(lines) - len(alive), len(picked))

        # -- query vectors once (every mode then gets the same vector from the cache)
        every = sorted({q for qs in queries.values() for q in qs})
        with Stopwatch() as sw:
            cached.add(every, model.encode(every, batch_size=64))
        print(f"embedded {len(every)} query lines in {sw.seconds:.1f} s\n")
        misses_before = cached.misses

        results: dict[str, dict[str, list[int | None]]] = {c: {m: [] for m in MODES} for c in CLASSES}
        run_hit1: dict[str, dict[str, list[int | None]]] = {c: {m: [] for m in MODES} for c in CLASSES}
        runs_of = {r["id"]: r["trajectory_id"] for r in rows}
        misses: dict[str, list[dict]] = defaultdict(list)
        ts.index.lexical_search("warm up", Filters(tenant=TENANT), limit=1)  # build the in-process BM25
        with Stopwatch() as sw_q:
            for name in CLASSES:
                for line in queries[name]:
                    holding_runs = {runs_of[i] for i in containing[line]}
                    for mode in MODES:
                        hits = run_mode(ts, line, mode)
                        results[name][mode].append(hit_ranks(hits, line))
                        run_hit1[name][mode].append(1 if hits and hits[0].trajectory_id in holding_runs else None)
                    if results[name]["hybrid"][-1] != 1:
                        dense_rank, lexical_rank = leg_ranks(ts, line, containing[line])
                        misses[name].append({
                            "line": line, "hybrid_rank": results[name]["hybrid"][-1],
                            "dense_rank": results[name]["dense"][-1], "lexical_rank": results[name]["lexical"][-1],
                            "dense_leg_row_rank": dense_rank, "lexical_leg_row_rank": lexical_rank,
                            "rows_holding": len(containing[line]),
                            "runs_holding": len({r["trajectory_id"] for r in rows if r["id"] in containing[line]}),
                            "log_like": looks_like_log(line),
                        })

        # -- tables
        print("## hit@1 / hit@5 (k=5, grouped by run, levels step+failure, tenant-wide)\n")
        head = ["class", "lines", "not in any row", "queries", "log-like"]
        for mode in MODES:
            head += [f"{mode} @1", f"{mode} @5"]
        body = []
        total: dict[str, list[int | None]] = {m: [] for m in MODES}
        for name in CLASSES:
            n_lines, dropped, n = counts[name]
            row: list[Any] = [name, n_lines, dropped, n, f"{share([looks_like_log(q) for q in queries[name]]):.0%}"]
            for mode in MODES:
                ranks = results[name][mode]
                total[mode] += ranks
                row += [share([r == 1 for r in ranks]), share([r is not None and r <= 5 for r in ranks])]
            body.append(row)
        all_q = [q for c in CLASSES for q in queries[c]]
        row = ["all", sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values()), len(all_q),
               f"{share([looks_like_log(q) for q in all_q]):.0%}"]
        for mode in MODES:
            row += [share([r == 1 for r in total[mode]]), share([r is not None and r <= 5 for r in total[mode]])]
        body.append(row)
        print(table(head, body))
        print(f"\n{len(all_q)} queries x {len(MODES)} modes in {sw_q.seconds:.0f} s; "
              "'log-like': share that auto mode sends to hybrid (fusion.looks_like_log)\n")

        targets = []
        for name in CLASSES:
            h1 = share([r == 1 for r in results[name]["hybrid"]])
            d1 = share([r == 1 for r in results[name]["dense"]])
            targets.append([name, h1, "yes" if h1 >= 0.95 else "NO", d1, "yes" if h1 >= d1 else "NO"])
        print(table(["class", "hybrid @1", ">= 0.95", "dense @1", "hybrid >= dense"], targets))

        print("\n## hybrid misses at rank 1 (ranks: grouped results; leg ranks: first holding row, ungrouped, "
              "200 deep)\n")
        miss_rows = []
        for name in CLASSES:
            for m in misses[name][: args.show_misses]:
                miss_rows.append([name, m["line"][:70], m["rows_holding"], m["runs_holding"], m["log_like"],
                                  m["dense_rank"] or "-", m["lexical_rank"] or "-", m["hybrid_rank"] or "-",
                                  m["dense_leg_row_rank"] or "-", m["lexical_leg_row_rank"] or "-"])
        print(table(["class", "line", "rows", "runs", "log-like", "dense", "lexical", "hybrid", "dense leg",
                     "lexical leg"], miss_rows) if miss_rows else "(none)")

        # -- run-level hit@1: the top run holds the line somewhere (the representative row may not)
        run_rows = []
        for name in CLASSES:
            row = [name]
            for mode in MODES:
                row.append(share([r is not None for r in run_hit1[name][mode]]))
            run_rows.append(row)
        print("\n## run-level hit@1 (the top-ranked run holds the line in some row; row-level above is stricter)\n")
        print(table(["class", *MODES], run_rows))

        # -- near-verbatim pasted lines: one word appended or replaced, one number changed
        near_rows: list[list[Any]] = []
        if args.near:
            with Stopwatch() as sw_n:
                near_rows = near_verbatim(ts, queries, containing, runs_of, random.Random(args.seed))
            print("\n## near-verbatim pasted lines: hit@1 row / run, without the near-verbatim lift (before) and "
                  f"with it (after); {sw_n.seconds:.0f} s\n")
            print(table(["class", "changed", "queries", "skipped (held verbatim)", "hybrid before", "hybrid after",
                         "auto before", "auto after"], near_rows))

        # -- what-if: fusion variants re-implemented here (the package is not changed)
        what_if: list[list] = []
        variant_ranks: dict[str, dict[str, list[int | None]]] = {}
        if not args.no_what_if:
            filters = Filters(tenant=TENANT, levels=LEVELS)
            same = total_q = 0
            with Stopwatch() as sw_w:
                for label, kw in variants(args.sweep):
                    variant_ranks[label] = {}
                    row = [label]
                    every_ranks = []
                    for name in CLASSES:
                        ranks = []
                        for i, q in enumerate(queries[name]):
                            hits = fused_variant(ts, q, filters, K, **kw)
                            ranks.append(hit_ranks(hits, q))
                            if label == AS_CONFIGURED:
                                total_q += 1
                                same += ranks[-1] == results[name]["hybrid"][i]
                        row.append(share([r == 1 for r in ranks]))
                        variant_ranks[label][name] = ranks
                        every_ranks += ranks
                    row.append(share([r == 1 for r in every_ranks]))
                    what_if.append(row)
            what_if.append(["(dense only, for reference)", *[share([r == 1 for r in results[c]["dense"]]) for c in CLASSES],
                            share([r == 1 for r in total["dense"]])])
            what_if.append(["(lexical only, for reference)",
                            *[share([r == 1 for r in results[c]["lexical"]]) for c in CLASSES],
                            share([r == 1 for r in total["lexical"]])])
            print("\n## what-if: hybrid hit@1 under fusion variants (re-implemented in this script)\n")
            print(f"(FusionConfig: log {ts.fusion.log_weights}, prose {ts.fusion.prose_weights}, pool "
                  f"{ts.fusion.pool}; '{AS_CONFIGURED}' agrees with ts.search(mode='hybrid') on the hit rank of "
                  f"{same}/{total_q} queries; {sw_w.seconds:.0f} s)\n")
            print(table(["variant", *CLASSES, "all"], what_if))

        # -- side effects of verbatim-first on prose-like hybrid queries: task texts and failure rows
        #    (the anchors similar_runs uses); how often do the top-5 runs change?
        if variant_ranks:
            filters = Filters(tenant=TENANT, levels=LEVELS)
            failure_texts = [r["text"] for r in rows if r["level"] == "failure"]
            probes = {"task texts": sorted({r.task for r in runs}),
                      "failure rows (similar_runs anchors)": sorted(set(failure_texts))}
            side = []
            for what, texts in probes.items():
                changed = top1 = 0
                for text in texts:
                    a = [h.trajectory_id for h in fused_variant(ts, text, filters, K)]
                    b = [h.trajectory_id for h in fused_variant(ts, text, filters, K, verbatim=True, near=True)]
                    changed += a != b
                    top1 += a[:1] != b[:1]
                side.append([what, len(texts), changed, top1])
            print("\n## side effects of verbatim-first and near-verbatim on long, prose-like hybrid queries\n")
            print(table(["queries", "n", "top-5 runs changed", "top-1 run changed"], side))

        # -- auto-mode routing: what fusion.looks_like_log sends to hybrid (pure computation)
        prose = [r.task for r in runs] + ood_tasks()
        prose = list(dict.fromkeys(prose))
        route_rows = [[name, share([looks_like_log(q) for q in queries[name]]),
                       share([r == 1 for r in results[name]["auto"]])] for name in CLASSES]
        route_rows.append(["prose: task texts + scripts/ood_tasks.txt (false positives)",
                           share([looks_like_log(t) for t in prose]), ""])
        print("\n## auto mode: share routed to hybrid (fusion.looks_like_log), and auto hit@1\n")
        print(table(["class", "routed to hybrid", "auto @1"], route_rows))

        print(f"\nvector-cache misses during queries: {cached.misses - misses_before}; peak RSS {peak_rss_mb():.0f} MiB; "
              f"total {time.perf_counter() - started:.0f} s")
        if args.json:
            args.json.write_text(json.dumps({
                "counts": {c: dict(zip(["lines", "dropped", "queries"], counts[c])) for c in CLASSES},
                "results": {c: {m: {"hit1": share([r == 1 for r in results[c][m]]),
                                    "hit5": share([r is not None and r <= 5 for r in results[c][m]])}
                                for m in MODES} for c in CLASSES},
                "misses": misses,
                "what_if": what_if,
                "near_verbatim": near_rows,
            }, indent=2, default=str))
    finally:
        ts.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
