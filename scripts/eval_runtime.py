"""Evaluate the agent runtime on ../shared/data and calibrate the novelty thresholds.

    python scripts/eval_runtime.py        # the two benchmark dumps; store cached per set of --data
    python scripts/eval_runtime.py --data ../shared/data/tau-bench/gpt-4o-airline.json ../shared/data/mini-swe-agent-dev

The default ``--data`` is the two benchmark dumps, the library the novelty thresholds are
calibrated on. (``../shared/data`` as a whole also holds real-formats/: runs of other formats,
many of them one-line smoke tests, "hello world", "write a product description": with them in
the library the out-of-domain tasks find near runs and the printed margins are not the
calibration's.)

Every measurement of what an agent meeting a task is told holds the task's whole task_id group out
(leave-task-out: retries and trials of a task share its text, so with them in the library a context
is a near-copy of its own task's runs, which a new task never has); only the same-task figures,
marked leave-one-out, keep the other runs of the task in, as an agent retrying a task would.
(Leave-task-out exemplar recall, a relevant run being another task's that needed the same work, is
scripts/eval_generalise.py's.)

Reports, with and without reranking + diversity:
- recall@1 / recall@3 of a successful run of the same task (leave-one-out: query
  with a run's task, that run excluded; "same task" = same task_id), and how many tasks
  held out whole are told follow_closely (a run of another task to follow step by step);
- the share of exemplar sets holding two results from one trajectory (must be 0);
- novelty: the best applicable similarity of held-out in-domain tasks (a task's
  whole task_id group excluded; against the whole library, and against its own
  task family only, as where each repository is a tenant) and of the
  out-of-domain tasks in scripts/ood_tasks.txt; the gap between them, the
  calibrated threshold (mid-gap) and the configured one's margin on each side,
  and precision / recall of "novel" (plan_from_scratch), also 2-fold
  cross-validated;
- warnings under the agent's own tools (``tools_available``: the tools its source's runs call):
  how many show a run of the other source, whose tools the agent has not;
- token counts of the formatted contexts (real tokenizer), text and JSON;
- per budget (250, 500, 1,000, 2,000) and format: how many contexts show a past run, their median tokens and
  runs, and the share of their tokens spent on provenance and on trace URIs.

The ingested index is cached under --cache (ingest with the real model takes minutes).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    OOD_TASKS, SWE_DIR, TAU_FILE, CachedEmbedder, DiskCachedEmbedder, is_tau_bench, ood_tasks, store_for,
    ungated_runtime)
from trajsearch.embed import load_embedder  # noqa: E402
from trajsearch.actions import tools_of  # noqa: E402
from trajsearch.ingest.read import read_dump  # noqa: E402
from trajsearch.model import Trajectory  # noqa: E402
from trajsearch.runtime import AdviceConfig, NoveltyConfig, RerankConfig, Runtime, RuntimeConfig, RuntimeContext  # noqa: E402
from trajsearch.runtime.novelty import Strategy  # noqa: E402
from trajsearch.runtime.advice import search  # noqa: E402
from trajsearch.search import TrajSearch  # noqa: E402

TENANT = "eval"
K = 3


def threshold_pr(novel_scores: list[float], known_scores: list[float], t: float) -> tuple[float, float]:
    """Precision / recall of "novel" (score < t)."""
    tp = sum(s < t for s in novel_scores)
    fp = sum(s < t for s in known_scores)
    precision = tp / (tp + fp) if tp + fp else 1.0
    return precision, tp / len(novel_scores)


def best_threshold(low: list[float], high: list[float]) -> float:
    """The cut between scores that should fall below it (``low``) and above it (``high``):
    best F1 of "below", ties broken by the widest margin; the cut sits mid-gap."""
    values = sorted(set(low + high))
    best = (-1.0, -1.0, 0.5)
    for a, b in zip(values, values[1:]):
        t = (a + b) / 2
        p, r = threshold_pr(low, high, t)
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        best = max(best, (round(f1, 6), b - a, t))
    return best[2]


#: The budgets an agent's context is measured at: the service takes 50 and up, the default is 2,000.
BUDGETS = (250, 500, 1000, 2000)
#: A trace URI as the text (``trace_uri=...``) and the JSON (``"trace_uri":"..."``) write it.
TRACE_URI = re.compile(r'trace_uri=\S+|"trace_uri":"[^"]*"')


def budget_table(runtime: Runtime, queries: Sequence[Trajectory], ctx: RuntimeContext,
                 held_out: dict[str, list[str]]) -> None:
    """Per budget and format: how many contexts show a past run, their median tokens, and the share of the tokens
    spent on ``source:`` lines (text; the ``provenance`` objects in JSON) and on trace URIs within them."""
    counter = runtime.counter
    print(f"\n## Contexts by budget ({len(queries)} tasks, each held out whole; tokens: all-MiniLM-L6-v2 WordPiece)")
    print("| budget | format | show a run | median tokens | median runs shown | on provenance | on trace URIs |")
    print("|---|---|---|---|---|---|---|")
    for budget in BUDGETS:
        for fmt in ("text", "json"):
            shown, tokens, runs, provenance, uris = 0, [], [], 0, 0
            for run in queries:
                context = runtime.context_for(run.task, ctx, fmt=fmt, budget=budget,
                                              exclude_trajectory_ids=held_out[run.trajectory_id])
                n = len(context.exemplars) + len(context.warnings)
                shown += n > 0
                tokens.append(context.tokens)
                runs.append(n)
                pieces = ([line for line in context.text.splitlines() if line.startswith("source:")] if fmt == "text"
                          else re.findall(r'"provenance":\{[^{}]*\}', context.text))
                provenance += sum(counter.count(piece) for piece in pieces)
                uris += sum(counter.count(uri) for uri in TRACE_URI.findall(context.text))
            spent = sum(tokens) or 1
            print(f"| {budget} | {fmt} | {shown}/{len(queries)} | {statistics.median(tokens):.0f} | "
                  f"{statistics.median(runs):.0f} | {provenance / spent:.1%} | {uris / spent:.1%} |")


def warnings_under_own_tools(runtime: Runtime, tasks: Sequence[Trajectory], held_out: dict[str, list[str]],
                             source_of: dict[str, str]) -> None:
    """Warnings for each task held out whole, the context listing the tools its source's runs call (the agent's
    ``tools_available``): how many show a failed run of the other source, made with tools this agent has not."""
    tools: dict[str, set[str]] = defaultdict(set)
    for run in tasks:
        tools[source_of[run.trajectory_id]].update(tools_of(run.tools_used))
    shown = other = 0
    for run in tasks:
        own = source_of[run.trajectory_id]
        ctx = RuntimeContext(tenant=TENANT, tools_available=sorted(tools[own]))
        found = runtime.warnings(run.task, ctx, exclude_trajectory_ids=held_out[run.trajectory_id])
        shown += len(found)
        other += sum(source_of[w.trajectory_id] != own for w in found)
    print(f"\n## Warnings under the agent's own tools ({len(tasks)} tasks held out whole; tools: "
          + "; ".join(f"{name} {len(names)}" for name, names in sorted(tools.items())) + ")")
    print(f"warnings shown {shown}, of them runs of the other source (tools this agent has not): {other}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=[str(TAU_FILE), str(SWE_DIR)],
                        help="dump files or folders (default: the two benchmark dumps in ../shared/data)")
    parser.add_argument("--cache", help="where the store is kept between runs (default: one directory per set of "
                        "--data under /tmp, so runs of other dumps are never mixed in)")
    parser.add_argument("--ood", default=str(OOD_TASKS))
    parser.add_argument("--budget", type=int, default=2000)
    parser.add_argument("--emb-cache", type=Path, help="vectors by text kept on disk between runs (scripts/_common.py)")
    args = parser.parse_args()

    started = time.time()
    args.cache = args.cache or str(store_for("eval-runtime", args.data))
    model = load_embedder("all-MiniLM-L6-v2")
    if args.emb_cache:
        model = DiskCachedEmbedder(model, args.emb_cache)
    embedder = CachedEmbedder(model)  # each text embedded once across configs
    ts = TrajSearch.open(f"{args.cache}/milvus.db", traces=f"{args.cache}/traces", embedder=embedder)
    runs: list[Trajectory] = [p.trajectory for path in args.data for p in read_dump(path, tenant=TENANT) if p.trajectory]
    report = ts.add(runs)
    ts.index.flush()
    if args.emb_cache:
        model.save()
    print(f"store {args.cache}; ingest: {len(runs)} runs, {report.ingested} new, {report.unchanged} cached, "
          f"{ts.index.count(TENANT)} rows ({time.time() - started:.0f}s)", file=sys.stderr)

    ctx = RuntimeContext(tenant=TENANT)
    by_task: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_task[run.task_id or run.trajectory_id].append(run)
    winners = {tid: {r.trajectory_id for r in group if r.outcome.value == "success"} for tid, group in by_task.items()}
    # leave-task-out: one query per task, every run of the task held out
    new_tasks = [group[0] for group in by_task.values()]
    held_out_ids = {group[0].trajectory_id: [r.trajectory_id for r in group] for group in by_task.values()}

    def source(run: Trajectory) -> str:
        return "tau-bench" if is_tau_bench(run) else "mini-swe-agent"

    # -- novelty calibration -------------------------------------------------------------------
    probe = ungated_runtime(ts)
    held_out = {
        tid: probe.exemplars(group[0].task, ctx, k=1, exclude_trajectory_ids=[r.trajectory_id for r in group]).best_similarity or 0.0
        for tid, group in by_task.items()
    }

    def best_in_family(task: str, family: str, exclude: Sequence[str] = ()) -> float | None:
        """The best task cosine among successful runs of one task family (a repository, a domain):
        the novelty input where each repository is a tenant of its own."""
        f = replace(ctx.filters(levels=("task",), outcomes=("success",), exclude_trajectory_ids=exclude),
                    task_families=(family,))
        hits = search(ts, task, f, k=1, grouped=False)
        return hits[0].score if hits else None

    per_family = {tid: best_in_family(group[0].task, group[0].task_family or "", [r.trajectory_id for r in group])
                  for tid, group in by_task.items() if group[0].task_family}
    per_family = {tid: s for tid, s in per_family.items() if s is not None}  # a family with one task: nothing applicable
    ood = ood_tasks(Path(args.ood))
    ood_scores = [probe.exemplars(task, ctx, k=1).best_similarity or 0.0 for task in ood]
    same_task = [run for run in runs if winners[run.task_id or run.trajectory_id] - {run.trajectory_id}]
    loo_same = [probe.exemplars(run.task, ctx, k=1, exclude_trajectory_ids=[run.trajectory_id]).best_similarity or 0.0
                for run in same_task]
    # what the runtime tells them: the cosine is one of follow_closely's conditions, the run followed holding this
    # task's text another (advice._did_this_task), so a cosine count said nothing of the strategy given
    default = Runtime(ts)
    followed = sum(default.exemplars(run.task, ctx, k=1, exclude_trajectory_ids=[run.trajectory_id]).strategy
                   is Strategy.follow_closely for run in same_task)
    followed_other = sum(default.exemplars(run.task, ctx, k=1, exclude_trajectory_ids=held_out_ids[run.trajectory_id])
                         .strategy is Strategy.follow_closely for run in new_tasks)
    known = list(held_out.values())
    # the harder side of each: a task held out of its own repository (a tenant per repository) scores
    # lower than against the whole library; out-of-domain tasks score highest against the whole library
    known_worst = [min(s, per_family.get(tid, s)) for tid, s in held_out.items()]
    inspiration = best_threshold(ood_scores, known_worst)
    follow = best_threshold(known, loo_same)
    configured = NoveltyConfig()

    folds = []
    for fold in (0, 1):
        fit_ood, test_ood = ood_scores[fold::2], ood_scores[1 - fold::2]
        fit_known, test_known = known_worst[fold::2], known_worst[1 - fold::2]
        folds.append(threshold_pr(test_ood, test_known, best_threshold(fit_ood, fit_known)))

    print("\n## Novelty (best applicable task cosine, all-MiniLM-L6-v2)")
    print(f"out-of-domain tasks ({len(ood_scores)}): max {max(ood_scores):.3f}, median {statistics.median(ood_scores):.3f}")
    print(f"held-out in-domain tasks ({len(known)}): min {min(known):.3f}, median {statistics.median(known):.3f}, max {max(known):.3f}")
    print(f"held out of their own task family only ({len(per_family)}; a tenant per repository): "
          f"min {min(per_family.values()):.3f}, median {statistics.median(per_family.values()):.3f}")
    gap_low, gap_high = max(ood_scores), min(known_worst)
    print(f"gap: out-of-domain max {gap_low:.3f} .. in-domain min {gap_high:.3f} (mid {(gap_low + gap_high) / 2:.3f}); "
          f"configured inspiration {configured.inspiration:.3f}: margin {configured.inspiration - gap_low:+.3f} to "
          f"out-of-domain, {gap_high - configured.inspiration:+.3f} to in-domain")
    print(f"leave-one-out runs with a same-task success ({len(loo_same)}): min {min(loo_same):.3f}")
    print(f"calibrated: inspiration (novel below) {inspiration:.3f}; follow_closely {follow:.3f}")
    lowest = sorted(held_out.items(), key=lambda kv: kv[1])[:3]
    print("lowest in-domain: " + "; ".join(f"{tid} {s:.3f}" for tid, s in lowest))
    print("highest out-of-domain: " + "; ".join(f"{s:.3f} {t[:48]!r}" for s, t in sorted(zip(ood_scores, ood))[-3:]))
    print("| threshold for 'novel' | precision | recall |")
    print("|---|---|---|")
    for label, t in (("calibrated", inspiration), ("configured", configured.inspiration), ("published 0.5", 0.5), ("published 0.6", 0.6)):
        p, r = threshold_pr(ood_scores, known_worst, t)
        print(f"| {label} ({t:.2f}) | {p:.3f} | {r:.3f} |")
    print(f"| 2-fold cross-validated | {statistics.mean(f[0] for f in folds):.3f} | {statistics.mean(f[1] for f in folds):.3f} |")
    p, r = threshold_pr(known, loo_same, configured.follow_closely)
    print(f"follow_closely at {configured.follow_closely:.2f}: 'different task' precision {p:.3f} recall {r:.3f}; "
          f"same-task runs whose cosine >= threshold: {sum(s >= configured.follow_closely for s in loo_same)}/{len(loo_same)}, "
          f"told follow_closely (default runtime): {followed}/{len(same_task)} (leave-one-out); tasks held out "
          f"whole told follow_closely (a run of another task): {followed_other}/{len(new_tasks)}")

    def best_failure(task: str, exclude: Sequence[str] = ()) -> float:
        f = ctx.filters(levels=("failure",), outcomes=("failure",), exclude_trajectory_ids=exclude)
        hits = search(ts, task, f, k=1, grouped=False)
        return hits[0].score if hits else 0.0

    ood_fail = [best_failure(task) for task in ood]
    # only tau-bench has failed runs (the mini-swe-agent runs are all submitted, or infra errors)
    known_fail = [best_failure(g[0].task, [r.trajectory_id for r in g]) for g in by_task.values() if source(g[0]) == "tau-bench"]
    floor = AdviceConfig().warning_min_similarity
    print(f"warnings (best failure-row cosine): out-of-domain max {max(ood_fail):.3f}; held-out tau-bench "
          f"min {min(known_fail):.3f}, median {statistics.median(known_fail):.3f}; floor {floor:.2f} passes "
          f"{sum(s >= floor for s in known_fail)}/{len(known_fail)} in-domain, {sum(s >= floor for s in ood_fail)}/{len(ood_fail)} out-of-domain")

    warnings_under_own_tools(Runtime(ts), new_tasks, held_out_ids, {r.trajectory_id: source(r) for r in runs})

    # -- exemplar recall and duplicates --------------------------------------------------------
    plain = ctx.filters(levels=("task", "summary"), outcomes=("success",))
    configs = {
        "plain top-k (ungrouped, no rerank/diversity)": None,
        "grouped, no rerank/diversity": Runtime(ts, RuntimeConfig(advice=AdviceConfig(rerank=RerankConfig(enabled=False, diversity=False)))),
        "grouped + rerank + diversity (default)": Runtime(ts),
    }
    queries = [r for r in runs if winners[r.task_id or r.trajectory_id] - {r.trajectory_id}]
    print(f"\n## Exemplars: recall of a same-task successful run (leave-one-out, {len(queries)} queries)")
    print("full query = the run's task; short query = its first 12 words (same-task runs share the full text)")
    print("| config | query | recall@1 | recall@3 | recall@3 swe / tau | exemplars per set | sets with 2 hits of one run |")
    print("|---|---|---|---|---|---|---|")
    for name, runtime in configs.items():
        for query_kind in ("full", "short"):
            stats: dict[str, list[float]] = defaultdict(list)
            for run in queries:
                text = run.task if query_kind == "full" else " ".join(run.task.split()[:12])
                if runtime is None:
                    f = replace(plain, exclude_trajectory_ids=(run.trajectory_id,))
                    ids = [h.trajectory_id for h in search(ts, text, f, k=K, grouped=False)]  # dense
                else:
                    found = runtime.exemplars(text, ctx, k=K, exclude_trajectory_ids=[run.trajectory_id])
                    ids = [e.trajectory_id for e in found.items]
                targets = winners[run.task_id or run.trajectory_id] - {run.trajectory_id}
                for group in ("all", source(run)):
                    stats[f"{group}@1"].append(float(bool(set(ids[:1]) & targets)))
                    stats[f"{group}@3"].append(float(bool(set(ids[:3]) & targets)))
                stats["size"].append(len(ids))
                stats["dup"].append(float(len(ids) != len(set(ids))))
            m = {key: statistics.mean(v) for key, v in stats.items()}
            print(f"| {name} | {query_kind} | {m['all@1']:.3f} | {m['all@3']:.3f} | "
                  f"{m['mini-swe-agent@3']:.3f} / {m['tau-bench@3']:.3f} | {m['size']:.2f} | {m['dup']:.3f} |")

    # -- formatted contexts --------------------------------------------------------------------
    runtime = configs["grouped + rerank + diversity (default)"]
    text_tokens, json_tokens, empty_for_ood = [], [], 0
    for run in new_tasks:
        exclude = held_out_ids[run.trajectory_id]
        text_tokens.append(runtime.context_for(run.task, ctx, budget=args.budget, exclude_trajectory_ids=exclude).tokens)
        json_tokens.append(runtime.context_for(run.task, ctx, fmt="json", budget=args.budget, exclude_trajectory_ids=exclude).tokens)
    for task in ood:
        found = runtime.exemplars(task, ctx)
        empty_for_ood += found.strategy.value == "plan_from_scratch" and not found.items
    print(f"\n## Formatted contexts (budget {args.budget} tokens, all-MiniLM-L6-v2 WordPiece, {len(new_tasks)} tasks, "
          "each held out whole)")
    print("| output | median tokens | max tokens | over budget |")
    print("|---|---|---|---|")
    for label, counts in (("text", text_tokens), ("json", json_tokens)):
        print(f"| {label} | {statistics.median(counts):.0f} | {max(counts)} | {sum(c > args.budget for c in counts)} |")
    print(f"out-of-domain tasks given plan_from_scratch and no exemplars: {empty_for_ood}/{len(ood)}")
    budget_table(runtime, new_tasks, ctx, held_out_ids)
    print(f"\n(total {time.time() - started:.0f}s)")
    ts.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
