"""Retrieval that generalises (issue 11), measured on the real runs in ../shared/data.

Every run is ingested with the real model, one tenant per repository (mini-swe-agent:
``task_family``, e.g. ``pylint-dev/astroid``) or tau-bench domain (``airline``), the way
a team would keep them. Four measurements, each through the public API only (so this
script runs unchanged against an older checkout: compare before and after):

1. **Exemplars, leave-task-out.** For every task, all of its runs are withheld
   (``exclude_trajectory_ids``) and the task's text is the query. Relevant: a
   successful run of a *different* task that needs the same work: for mini-swe-agent and
   SWE-agent one whose submission (``info.submission``) changes a file that a submission of
   the query's task changes (files a patch creates, such as SWE-agent's ``reproduce_bug.py``,
   do not count, nor do files the run's actions never name: the harness's set-up edits that ``git diff`` hands in
   with the fix, ``-rA`` in sphinx's ``tox.ini`` (``touched.own_changes``); ``--patch-truth``: every file the
   patch changes, as before round 16; ``--named-truth``: only the files the run's actions name, even where its
   record cannot tell, so that runs handing in nothing but the harness's edits are relevant to none); for
   tau-bench one whose task has the same set of write actions (``info.task.actions`` minus the read-only tools).
   A task is *findable* when its tenant holds such a run. Reported: recall@1 / recall@3 over findable tasks for the
   runtime's ``exemplars`` (as configured; an empty set, e.g. ``plan_from_scratch``,
   is a miss) next to a plain task-cosine baseline in the same run (dense search of
   ``task`` rows of successful runs, top 3 runs). Each miss is sorted by kind
   (``miss_kind``): no writes needed, a near-twin task's run shown first, several
   writes, other.
2. **Exact lines from the middle of long outputs.** Lines of observations longer than
   head + tail (700 + 1,100 characters) lying wholly in characters 700..len-1,100 (the
   part step rows clip away), and lines from anywhere in any output. Query: the line,
   tenant-wide, ``levels=step+failure``, one hit per run, k=5, in every mode. hit@1: the
   first row returned holds the line (row level); run@1: the first run holds it in its
   full trace.
3. **Short results.** ``search(k)`` for task texts (every level) and lines (step +
   failure) in every mode, k = 5 and 10, and ``similar_runs(k=5)`` by id: the share of
   calls returning fewer runs than exist inside the filters (dense / hybrid: every run
   with a row at those levels; lexical: every run with a row holding a query term), and
   the share whose rows are out of score order.
4. **auto routing.** What ``fusion.resolve_mode("auto", q)`` does with log lines taken
   from real observations (traceback last lines, failed commands' decisive lines, tool
   errors, commands, tool calls, lines from the middle of outputs: hybrid expected) and
   task texts (each real task, its first 12 words, its first line: an issue's title, scripts/ood_tasks.txt: dense
   expected). ``--routing-only`` measures this alone, without a store or a model.
   The sampled output lines that are a tau-bench user's words (the observation of a
   ``respond``, or of the opening step with no tool) are prose: dense expected, counted
   on their own.
5. **Novelty margins**: the best applicable task similarity of held-out in-domain tasks
   and of the out-of-domain tasks, against the configured ``inspiration`` threshold and
   against each tenant's own (``Runtime.calibrations``): how many of each side land on the
   wrong side of it.

Query and row vectors are cached on disk by text (``--store``/emb-cache.npz), so a second
checkout or a rerun embeds nothing it has seen.

    python scripts/eval_generalise.py                   # store in /tmp/trajsearch-eval-generalise-<inputs>
    python scripts/eval_generalise.py --fresh --json /tmp/generalise.json
    python scripts/eval_generalise.py --tau ../shared/data/real-formats/tau-bench/tool-calling-grok-3-*.json --no-swe
    python scripts/eval_generalise.py --tau ../shared/data/real-formats/tau-bench/tau2/airline_run1.json --no-swe
    python scripts/eval_generalise.py --tau --swe RUNS/ --outcomes RUNS/report.json   # SWE-bench runs only (mini-swe-agent
        # <config>/<instance>/<instance>.traj.json or a SWE-agent run directory), verdicts from their SWE-bench report
    python scripts/eval_generalise.py --tau --swe RUNS/ --exemplars-only   # measurement 1 alone (the others take
        # most of the time on a large dump and do not move with a ranking change)
    python scripts/eval_generalise.py --tau --swe RUNS/ --routing-only     # measurement 4 alone: no store, no model
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (  # noqa: E402
    SWE_DIR,
    TAU_FILE,
    DiskCachedEmbedder,
    Stopwatch,
    is_tau_bench,
    load_model,
    machine_note,
    ood_tasks,
    open_store,
    read_runs,
    store_dir,
    store_for,
    table,
    ungated_runtime,
)

from trajsearch import config  # noqa: E402
from trajsearch.fusion import resolve_mode  # noqa: E402
from trajsearch.ingest.outcomes import OutcomeTable  # noqa: E402
from trajsearch.ingest.read import read_dump  # noqa: E402
from trajsearch.model import Trajectory  # noqa: E402
from trajsearch.runtime import NoveltyConfig, Runtime, RuntimeContext  # noqa: E402
from trajsearch.search import in_score_order  # noqa: E402
from trajsearch.store.filters import Filters  # noqa: E402
from trajsearch.touched import named_by_actions, own_changes  # noqa: E402
from trajsearch.vocab import LEVELS  # noqa: E402

K = 3
HEAD, TAIL = 700, 1_100  # what step rows keep of an output (represent.OBSERVATION_HEAD / _TAIL before issue 11)
LINE_MIN, LINE_MAX = 8, 400
MODES = ("dense", "lexical", "hybrid", "auto")
#: tau-bench tools that change nothing (the rest are write actions).
READ_ONLY = re.compile(r"^(get_|search_|list_|find_|calculate$|think$|transfer_to_human)")
_DIFF_BLOCK = re.compile(r"^(?=diff --git )", re.M)
_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/")


# -- data and ground truth -----------------------------------------------------------------


def tenant_of(run: Trajectory) -> str:
    """One tenant per repository / domain (``pylint-dev/astroid`` -> ``pylint-dev.astroid``)."""
    return re.sub(r"[^A-Za-z0-9_.-]", ".", run.task_family or "default")[:64]


def swe_files_under(root: Path) -> list[Path]:
    """The run files under ``root``: mini-swe-agent's ``<config>/<instance>/<instance>.traj.json``, else
    SWE-agent's ``.traj`` files (one per instance, in a run directory)."""
    return sorted(root.glob("*/*/*.traj.json")) or sorted(root.rglob("*.traj"))


def read_swe(root: Path, outcomes: Path | None, whole_patch: bool = False,
             named_only: bool = False) -> tuple[list[Trajectory], dict[str, frozenset[str]]]:
    """The runs under ``root``, and what each one's submission edits (``info.submission`` of its own file), the
    files the run never names left out unless ``whole_patch``: its environment changed them (``own_changes``; where
    the record cannot tell, it keeps them all). ``named_only``: only the files the run's actions name, whatever the
    record (``named_by_actions``): a run handing in nothing but the harness's edits shares no work."""
    runs, truth = [], {}
    table = OutcomeTable.load(outcomes) if outcomes else None  # read once, joined onto every file's runs
    for path in swe_files_under(root):
        found = [p.trajectory for p in read_dump(path, tenant="x", outcomes=table) if p.error is None]
        try:
            info = json.loads(path.read_text())["info"]
        except (OSError, KeyError, ValueError):
            info = None
        for run in found:
            runs.append(run)
            if isinstance(info, dict):
                edited = edited_files(info.get("submission") or "")
                own = edited if whole_patch else frozenset(own_changes(run, edited))
                truth[run.trajectory_id] = frozenset(named_by_actions(run, own)) if named_only else own
    return runs, truth


def edited_files(patch: str) -> frozenset[str]:
    """The files a patch changes that existed before it: a file it creates (SWE-agent's runs hand in their
    ``reproduce_bug.py`` with the fix) is no work two tasks can share."""
    blocks = _DIFF_BLOCK.split(patch)[1:]
    return frozenset(found.group(1) for block in blocks
                     if (found := _DIFF_FILE.match(block)) and "new file mode" not in block.split("\n@@", 1)[0])


def tau_truth(runs: list[Trajectory], files: Sequence[Path]) -> dict[str, frozenset[str]]:
    """trajectory_id -> the write actions its *task* needs: tau-bench's ``info.task.actions``
    (joined by instruction), tau2-bench's ``tasks[].evaluation_criteria.actions`` (joined by the
    adapter's ``task_id``, ``<domain>-<id>``)."""
    needs: dict[str, frozenset[str]] = {}

    def writes(actions: Any) -> frozenset[str]:
        return frozenset(a["name"] for a in actions or [] if not READ_ONLY.match(a["name"]))

    for path in files:
        data = json.loads(Path(path).read_text())
        if isinstance(data, dict) and "tasks" in data:  # tau2-bench results
            domain = ((data.get("info") or {}).get("environment_info") or {}).get("domain_name", "")
            for task in data["tasks"]:
                needs[f"{domain}-{task['id']}"] = writes((task.get("evaluation_criteria") or {}).get("actions"))
            continue
        for record in data:
            task = record.get("info", {}).get("task") or {}
            needs[str(task.get("instruction", ""))] = writes(task.get("actions"))
    return {r.trajectory_id: needs[key] for r in runs
            for key in (r.task, r.task_id) if key in needs}


def relevant_to(query: list[Trajectory], candidate: Trajectory, truth: dict[str, frozenset[str]], kind: str) -> bool:
    if candidate.outcome.value != "success" or candidate.trajectory_id not in truth:
        return False
    if kind == "swe":
        wanted = frozenset().union(*(truth.get(r.trajectory_id, frozenset()) for r in query))
        return bool(wanted & truth[candidate.trajectory_id])
    return truth[candidate.trajectory_id] == truth.get(query[0].trajectory_id)


# -- lines ---------------------------------------------------------------------------------


def output_lines(run: Trajectory) -> tuple[list[str], list[str]]:
    """(lines from the clipped-away middle of long outputs, lines from anywhere in an output)."""
    middle, anywhere = [], []
    for step in run.steps:
        text = (step.observation or "").strip()
        n, at = len(text), 0
        for line in text.split("\n"):
            start, at = at, at + len(line) + 1
            line = line.strip()
            if not LINE_MIN <= len(line) <= LINE_MAX or sum(c.isalnum() for c in line) < 4:
                continue
            anywhere.append(line)
            if n > HEAD + TAIL + 20 and start >= HEAD and start + len(line) <= n - TAIL:
                middle.append(line)
    return middle, anywhere


def share(values: list[bool]) -> float:
    return sum(values) / len(values) if values else float("nan")


# -- main ----------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, help="where the store is kept between runs (default: one directory "
                    "per set of inputs under /tmp, so runs of other dumps never share a tenant)")
    ap.add_argument("--fresh", action="store_true")
    ap.add_argument("--emb-cache", type=Path, help="vectors by text (default: in --store); share it between checkouts")
    ap.add_argument("--model", default=config.default_model())
    ap.add_argument("--tau", type=Path, nargs="*", default=[TAU_FILE],
                    help="tau-bench / tau2-bench result files (none after the flag: no tau-bench runs)")
    ap.add_argument("--swe", type=Path, default=SWE_DIR, help="mini-swe-agent runs (<config>/<instance>/*.traj.json) "
                    "or a SWE-agent run directory (*.traj)")
    ap.add_argument("--no-swe", action="store_true")
    truth = ap.add_mutually_exclusive_group()  # one definition of a SWE run's ground truth
    truth.add_argument("--patch-truth", action="store_true", help="a SWE run's ground truth is every file its patch "
                    "changes, the harness's set-up edits the run never names too (the definition before round 16)")
    truth.add_argument("--named-truth", action="store_true", help="a SWE run's ground truth is only the files of its "
                    "patch that its actions name: without a verdict (submitted = success) the runs that handed in "
                    "only the harness's tox.ini / setup.py edits are otherwise relevant to each other")
    ap.add_argument("--outcomes", type=Path, help="verdicts joined onto the --swe runs (e.g. a SWE-bench report: "
                    "without one a submitted patch counts as a success)")
    ap.add_argument("--lines", type=int, default=300, help="sampled lines per kind (middle / anywhere)")
    ap.add_argument("--similar", type=int, default=120, help="runs whose similar_runs are checked")
    ap.add_argument("--exemplars-only", action="store_true",
                    help="measure exemplars only (skip lines, short results, routing and novelty): for comparing "
                         "ranking changes on large dumps")
    ap.add_argument("--routing-only", action="store_true",
                    help="measure auto routing only (measurement 4: no store, no model; seconds on any dump)")
    ap.add_argument("--k", type=int, default=K, help="exemplars asked for (recall@k; the issue's target is at 3)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    started = time.perf_counter()
    rng = random.Random(args.seed)
    print(f"# trajsearch: retrieval that generalises\n\n{machine_note()}\n")

    tau, _ = read_runs(args.tau, tenant="x")
    swe, swe_edits = ([], {}) if args.no_swe else read_swe(args.swe, args.outcomes, args.patch_truth, args.named_truth)
    tau = [r.model_copy(update={"tenant": tenant_of(r)}) for r in tau]
    swe = [r.model_copy(update={"tenant": tenant_of(r)}) for r in swe]
    runs = tau + swe
    kind_of = {r.trajectory_id: "tau" for r in tau} | {r.trajectory_id: "swe" for r in swe}
    truth = tau_truth(tau, args.tau) | {run.trajectory_id: swe_edits[run.trajectory_id] for run in swe
                                          if run.trajectory_id in swe_edits}
    print(f"{len(tau)} tau-bench + {len(swe)} SWE-bench runs; {len({r.tenant for r in runs})} tenants; "
          f"ground truth for {len(truth)} runs")

    if args.routing_only:  # the same lines as a full run samples (its first use of the seeded rng)
        results = {"routing": eval_routing(runs, sample_lines(runs, args.lines, rng))}
        return finish(args, results, started)
    inputs = [*args.tau, "no-swe" if args.no_swe else args.swe, *([args.outcomes] if args.outcomes else [])]
    root = store_dir(args.store or store_for("eval-generalise", inputs), fresh=args.fresh)
    if (refusal := other_outcomes(root, args.outcomes)) is not None:
        print(refusal, file=sys.stderr)
        return 2
    model, _ = load_model(args.model)
    embedder = DiskCachedEmbedder(model, args.emb_cache or root / f"emb-cache-{args.model.replace('/', '_')}.npz")
    ts = open_store(root / "store", embedder)
    results: dict[str, Any] = {}
    try:
        with Stopwatch() as sw:
            report = ts.add(runs)
        ts.index.flush()
        embedded = embedder.new  # save() starts the count again
        embedder.save()
        print(f"store {root}; ingest: {report.ingested} new/changed, {report.unchanged} unchanged, {report.rows} rows written, "
              f"{sw.seconds:.0f} s ({embedded} texts embedded)\n")
        if kept := getattr(report, "verdicts_kept", 0):  # (an older checkout keeps no verdicts)
            print(f"{root}: {kept} runs kept the verdict an outcome file gave them in an earlier ingest into this store, "
                  f"which {'no --outcomes' if args.outcomes is None else f'--outcomes {args.outcomes}'} gives them now: "
                  "the store's successes are not this run's ground truth. Pass the --outcomes the store was made with, "
                  "or --fresh, or another --store.", file=sys.stderr)
            return 2
        outcomes_note(root).write_text(json.dumps(outcomes_input(args.outcomes)))
        results["exemplars"] = eval_exemplars(ts, runs, truth, kind_of, args.k)
        if args.exemplars_only:
            embedder.save()
            return finish(args, results, started)
        lines = sample_lines(runs, args.lines, rng)
        results["lines"] = eval_lines(ts, lines)
        results["short"] = eval_short(ts, runs, lines, args.similar, rng)
        results["routing"] = eval_routing(runs, lines)
        results["novelty"] = eval_novelty(ts, runs)
        embedder.save()
    finally:
        ts.close()
    return finish(args, results, started)


def outcomes_note(root: Path) -> Path:
    """Where the outcomes input a store was ingested with is noted (see :func:`other_outcomes`)."""
    return root / "outcomes-input.json"


def outcomes_input(outcomes: Path | None) -> str | None:
    return str(outcomes.resolve()) if outcomes else None


def other_outcomes(root: Path, outcomes: Path | None) -> str | None:
    """Why this run must not use the store in ``root``, or None: it was ingested with other ``--outcomes``.

    The indexer keeps the verdict an outcome file gave a run when the run is read again without one
    (``ingest.outcomes.keep_verdict``, on purpose), so a store reused without the ``--outcomes`` it was made with
    keeps that file's failures while the ground truth here counts each submitted patch a success: probe 51, AR,
    cost_2_3 read with its report then without measured exemplars @3 0.138 with 45% empty sets, in silence.
    """
    note = outcomes_note(root)
    if not note.exists():
        return None
    before = json.loads(note.read_text())
    if before == outcomes_input(outcomes):
        return None
    return (f"{root} was ingested with {'no --outcomes' if before is None else f'--outcomes {before}'}, this run "
            f"passes {'none' if outcomes is None else outcomes}: the store keeps the verdicts it was given, so its "
            "successes would not be this run's ground truth. Pass the same --outcomes, or --fresh, or another --store.")


def finish(args: argparse.Namespace, results: dict[str, Any], started: float) -> int:
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))
    return 0


def eval_exemplars(ts: Any, runs: list[Trajectory], truth: dict, kind_of: dict, k: int = K) -> dict:
    groups: dict[tuple[str, str], list[Trajectory]] = defaultdict(list)
    for run in runs:
        groups[(run.tenant, run.task_id or run.trajectory_id)].append(run)
    by_tenant: dict[str, list[Trajectory]] = defaultdict(list)
    for run in runs:
        by_tenant[run.tenant].append(run)
    by_id = {run.trajectory_id: run for run in runs}
    rt = Runtime(ts)
    stats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    misses = []
    with Stopwatch() as sw:
        for (tenant, task_id), group in sorted(groups.items()):
            kind = kind_of[group[0].trajectory_id]
            exclude = [r.trajectory_id for r in group]
            relevant = {c.trajectory_id for c in by_tenant[tenant]
                        if (c.task_id or c.trajectory_id) != task_id and relevant_to(group, c, truth, kind)}
            for label in (kind, "all"):
                stats[label]["tasks"].append(1.0)
                stats[label]["findable"].append(float(bool(relevant)))
            if not relevant:
                continue
            text = group[0].task
            base = [h.trajectory_id for h in ts.search(text, tenant=tenant, levels="task", outcome="success",
                                                       exclude_trajectory_ids=exclude, k=k, mode="dense")]
            found = rt.exemplars(text, RuntimeContext(tenant=tenant), k=k, exclude_trajectory_ids=exclude)
            got = [e.trajectory_id for e in found.items]
            for label in (kind, "all"):
                for name, ids in (("baseline", base), ("exemplars", got)):
                    stats[label][f"{name}@1"].append(float(bool(set(ids[:1]) & relevant)))
                    stats[label][f"{name}@{k}"].append(float(bool(set(ids[:k]) & relevant)))
                stats[label]["empty"].append(float(not got))
            if not set(got[:k]) & relevant:
                misses.append({"task": task_id, "tenant": tenant, "relevant": len(relevant),
                               "strategy": found.strategy.value, "got": got, "baseline": base,
                               "kind": miss_kind(ts, group, [by_id[t] for t in got], truth, kind),
                               "deeper": deeper_rank(rt, text, tenant, exclude, relevant)})
    rows, out = [], {}
    for label in ("tau", "swe", "all"):
        s = stats.get(label)
        if not s:
            continue
        m = {key: (sum(v) if key in ("tasks", "findable") else statistics.mean(v) if v else float("nan"))
             for key, v in s.items()}
        out[label] = m
        rows.append([label, int(m["tasks"]), int(m["findable"]), m.get("baseline@1", float("nan")),
                     m.get(f"baseline@{k}", float("nan")), m.get("exemplars@1", float("nan")),
                     m.get(f"exemplars@{k}", float("nan")), m.get("empty", float("nan"))])
    print(f"## Exemplars, leave-task-out (k={k}; recall over findable tasks; {sw.seconds:.0f} s)\n")
    print(table(["runs", "tasks", "findable", "task-cosine @1", f"task-cosine @{k}", "exemplars @1", f"exemplars @{k}",
                 "empty sets"], rows))
    kinds = Counter(miss["kind"] for miss in misses)
    print(f"\nmisses by kind ({len(misses)}): " + ", ".join(f"{kind}: {n}" for kind, n in kinds.most_common()))
    for miss in misses[:12]:
        print(f"  miss: {miss['tenant']}/{miss['task']} ({miss['relevant']} relevant runs, {miss['strategy']}, "
              f"{miss['kind']}, first relevant at {miss['deeper'] or f'none of {DEEP}'}): got {miss['got']}")
    deeper = Counter("not among them" if m["deeper"] is None else "4th-5th" if m["deeper"] <= 5 else
                     "6th-10th" if m["deeper"] <= 10 else f"11th-{DEEP}th" for m in misses)
    print(f"misses by where the first relevant run comes in exemplars(k={DEEP}): "
          + ", ".join(f"{where}: {n}" for where, n in deeper.most_common()))
    out["misses"] = misses
    out["miss_kinds"] = dict(kinds)
    return out


#: How deep a miss is looked for: the same call with this k (its pool is deeper too, so this places a
#: miss roughly: ranked just below the third, far below, or not found at all).
DEEP = 20


def deeper_rank(rt: Runtime, text: str, tenant: str, exclude: list[str], relevant: set[str]) -> int | None:
    """Where the first relevant run comes in ``exemplars(k=DEEP)`` (1-based), None if not among them."""
    found = rt.exemplars(text, RuntimeContext(tenant=tenant), k=DEEP, exclude_trajectory_ids=exclude)
    return next((i for i, e in enumerate(found.items, 1) if e.trajectory_id in relevant), None)


#: A shown run whose task embeds at least this close to the query's is a near-twin: the same
#: request in other words or with other numbers (tau-bench writes variants of one scenario).
TWIN_COSINE = 0.90


def miss_kind(ts: Any, query: list[Trajectory], shown: list[Trajectory], truth: dict, kind: str) -> str:
    """Why a task's exemplars missed, as far as the data tells (first that applies):
    ``no writes needed`` (tau-bench: the task needs only reads or a refusal, which its words
    rarely say), ``near-twin shown`` (a run shown first did a task worded like this one that
    needed other work: wording cannot tell them apart), ``several writes`` (the task needs a set
    of two or more writes, and only the whole set counts), ``names no file it changed``
    (mini-swe-agent: no file the task's own patches changed is named in its text, not even by its
    stem: only wording can find the runs), else ``other``."""
    needs = truth.get(query[0].trajectory_id, frozenset())
    if kind == "tau" and not needs:
        return "no writes needed"
    if shown:
        vectors = ts.embed([query[0].task, shown[0].task])
        if float(vectors[0] @ vectors[1]) >= TWIN_COSINE:
            return "near-twin shown"
    if kind == "tau" and len(needs) >= 2:
        return "several writes"
    if kind == "swe":
        changed = frozenset().union(*(truth.get(r.trajectory_id, frozenset()) for r in query))
        stems = {Path(f).stem.lower() for f in changed} - {"__init__", "setup", "tox", "pyproject", "conftest"}
        if not any(re.search(rf"\b{re.escape(stem)}\b", query[0].task.lower()) for stem in stems):
            return "names no file it changed"
    return "other"


def sample_lines(runs: list[Trajectory], n: int, rng: random.Random) -> dict[str, list[tuple[str, str]]]:
    """(tenant, line) samples: from the middle of long outputs, and from anywhere."""
    middle, anywhere = set(), set()
    for run in runs:
        m, a = output_lines(run)
        middle.update((run.tenant, line) for line in m)
        anywhere.update((run.tenant, line) for line in a)
    return {"middle": sorted(rng.sample(sorted(middle), min(n, len(middle)))),
            "anywhere": sorted(rng.sample(sorted(anywhere), min(n, len(anywhere))))}


def holders(ts: Any, tenant: str) -> dict[str, str]:
    """line lookups need every run's full outputs: trajectory_id -> all observation text."""
    out = {}
    for row in ts.index.iterate(["trajectory_id", "trace_uri"], expr=Filters(tenant=tenant, levels=("task",)).to_expr(),
                                tenant=tenant):
        run = ts.get_trace(row["trace_uri"], tenant=tenant)
        out[row["trajectory_id"]] = "\n".join((s.observation or "") for s in run.steps)
    return out


def eval_lines(ts: Any, lines: dict[str, list[tuple[str, str]]]) -> dict:
    full: dict[str, dict[str, str]] = {}
    out: dict[str, Any] = {}
    rows = []
    with Stopwatch() as sw:
        for kind, sample in lines.items():
            hit: dict[str, list[bool]] = {m: [] for m in MODES}
            run_hit: dict[str, list[bool]] = {m: [] for m in MODES}
            for tenant, line in sample:
                if tenant not in full:
                    full[tenant] = holders(ts, tenant)
                for mode in MODES:
                    hits = ts.search(line, tenant=tenant, levels=("step", "failure"), k=5, mode=mode)
                    hit[mode].append(bool(hits) and line in hits[0].text)
                    run_hit[mode].append(bool(hits) and line in full[tenant].get(hits[0].trajectory_id, ""))
            out[kind] = {m: {"hit1": share(hit[m]), "run1": share(run_hit[m])} for m in MODES}
            rows.append([kind, len(sample), *[f"{share(hit[m]):.3f} / {share(run_hit[m]):.3f}" for m in MODES]])
    print(f"\n## Exact lines of outputs (k=5, levels step+failure, one hit per run; hit@1 row / run; {sw.seconds:.0f} s)\n")
    print(table(["lines", "n", *MODES], rows))
    return out


def eval_short(ts: Any, runs: list[Trajectory], lines: dict, n_similar: int, rng: random.Random) -> dict:
    """Calls returning fewer runs than exist inside their filters, and rows out of score order."""
    runs_of: dict[str, str] = {}
    levels_of: dict[str, str] = {}
    for row in ts.index.iterate(["id", "trajectory_id", "level"]):
        runs_of[row["id"]], levels_of[row["id"]] = row["trajectory_id"], row["level"]
    step_levels = ("step", "failure")
    lexical_levels = lambda levels: tuple(levels) + (("passage",) if "passage" in LEVELS and (  # noqa: E731
        not levels or "step" in levels) else ())
    with_rows: dict[tuple[str, tuple[str, ...]], set[str]] = defaultdict(set)
    by_id = {r.trajectory_id: r for r in runs}
    for rid, tid in runs_of.items():
        level = levels_of[rid]
        tenant = by_id[tid].tenant if tid in by_id else ""
        with_rows[(tenant, ())].add(tid)
        if level in ("step", "failure", "passage"):
            with_rows[(tenant, step_levels)].add(tid)
    queries = [(tenant, task, ()) for tenant, task in sorted({(r.tenant, r.task) for r in runs})]
    queries += [(tenant, line, step_levels) for sample in lines.values() for tenant, line in sample[:150]]
    short: dict[str, list[bool]] = defaultdict(list)
    unordered: dict[str, list[bool]] = defaultdict(list)
    examples: list[str] = []
    with Stopwatch() as sw:
        for tenant, text, levels in queries:
            exist_all = len(with_rows[(tenant, levels)])
            lexical_runs = None
            for k in (5, 10):
                for mode in MODES:
                    hits = ts.search(text, tenant=tenant, levels=levels, k=k, mode=mode)
                    if mode == "lexical" or (mode == "auto" and resolve_mode("auto", text) == "lexical"):
                        if lexical_runs is None:
                            found = ts.index.lexical_search(text, Filters(tenant=tenant, levels=lexical_levels(levels)),
                                                            limit=1_000_000)
                            lexical_runs = len({runs_of[i] for i, _ in found if i in runs_of})
                        exist = lexical_runs
                    else:
                        exist = exist_all
                    got = len({h.trajectory_id for h in hits})
                    label = f"{mode} k={k}"
                    short[label].append(got < min(k, exist))
                    scores = [h.score for h in hits]
                    unordered[label].append(not in_score_order(scores))
                    if got < min(k, exist) and len(examples) < 6:
                        examples.append(f"{label}: {got} of {min(k, exist)} runs for {text[:70]!r}")
        sims = rng.sample(runs, min(n_similar, len(runs)))
        for run in sims:
            matches = ts.similar_runs(run.trajectory_id, tenant=run.tenant, k=5)
            exist = len(with_rows[(run.tenant, step_levels)] - {run.trajectory_id})
            short["similar_runs k=5"].append(len(matches) < min(5, exist))
            scores = [m.score for m in matches]
            unordered["similar_runs k=5"].append(not in_score_order(scores))
    rows = [[label, len(v), share(v), share(unordered[label])] for label, v in short.items()]
    print(f"\n## Fewer than k runs where k exist ({len(queries)} queries: task texts, lines; "
          f"{len(sims)} similar_runs; {sw.seconds:.0f} s)\n")
    print(table(["call", "n", "short of k", "rows out of score order"], rows))
    for example in examples:
        print(f"  e.g. {example}")
    return {label: {"n": len(v), "short": share(v), "unordered": share(unordered[label])} for label, v in short.items()}


def eval_routing(runs: list[Trajectory], lines: dict) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from eval_exact import CLASSES, collect  # noqa: PLC0415 - the same log-line classes as eval_exact

    tau = [r for r in runs if is_tau_bench(r)]
    swe = [r for r in runs if not is_tau_bench(r)]
    logs = {name: sorted(found) for name, found in collect(tau, swe).items()}
    # tau-bench records the simulated user's words as observations: the opening message (a step
    # with no tool) and each answer to the agent's ``respond``. That is prose, not a log line
    # (dense is right for it), so it is counted on its own
    replies = {line.strip() for r in tau for step in r.steps if step.action in (None, "respond")
               for line in (step.observation or "").split("\n")}
    sampled = {line for _, line in lines["middle"] + lines["anywhere"]}
    logs["output line (middle)"] = sorted({line for _, line in lines["middle"]} - replies)
    logs["output line (anywhere)"] = sorted({line for _, line in lines["anywhere"]} - replies)
    tasks = sorted({r.task for r in runs})
    prose = {
        "task text (mini-swe-agent)": sorted({r.task for r in swe}),
        "task text (tau-bench)": sorted({r.task for r in tau}),
        "user's words (tau-bench)": sorted(sampled & replies),
        "task, first 12 words": sorted({" ".join(t.split()[:12]) for t in tasks}),
        "task, first line (title)": sorted({t.strip().splitlines()[0].strip() for t in tasks if "\n" in t.strip()}),
        "out-of-domain task": ood_tasks(),
    }
    rows, out = [], {}
    wrong: dict[str, list[str]] = {}  # the queries routed otherwise, in the JSON (for reading, not printed)
    for expected, groups in (("hybrid", logs), ("dense", prose)):
        for name, queries in groups.items():
            routed = [resolve_mode("auto", q) == expected for q in queries]
            out[name] = right = share(routed)
            wrong[name] = [q for q, ok in zip(queries, routed) if not ok]
            rows.append([name, expected, len(queries), right])
    for expected, groups in (("hybrid", logs), ("dense", prose)):
        queries = [q for name, qs in groups.items() if name in CLASSES or expected == "dense" or "output" in name
                   for q in qs]
        out[f"all {expected}"] = share([resolve_mode("auto", q) == expected for q in queries])
        rows.append([f"all that should be {expected}", expected, len(queries), out[f"all {expected}"]])
    print("\n## auto routing (fusion.resolve_mode): share routed as expected\n")
    print(table(["queries", "expected", "n", "accuracy"], rows))
    out["misrouted"] = wrong
    return out


def eval_novelty(ts: Any, runs: list[Trajectory]) -> dict:
    """Each task's best applicable similarity against the configured (global) threshold and against
    its tenant's own (``Runtime.calibrations``; an older checkout has none: the global one)."""
    configured = NoveltyConfig()
    probe = ungated_runtime(ts)
    calibrations = getattr(Runtime(ts), "calibrations", None)
    tenants = sorted({r.tenant for r in runs})
    own = {tenant: calibrations(tenant) if calibrations else None for tenant in tenants}
    threshold = {tenant: c.threshold if c else configured.inspiration for tenant, c in own.items()}
    groups: dict[tuple[str, str], list[Trajectory]] = defaultdict(list)
    for run in runs:
        groups[(run.tenant, run.task_id or run.trajectory_id)].append(run)
    known = []  # (tenant, best similarity)
    for (tenant, _), group in groups.items():
        found = probe.exemplars(group[0].task, RuntimeContext(tenant=tenant), k=1,
                                exclude_trajectory_ids=[r.trajectory_id for r in group])
        if found.best_similarity is not None:  # a tenant with no other task has nothing applicable: not counted
            known.append((tenant, found.best_similarity))
    ood = [{tenant: probe.exemplars(t, RuntimeContext(tenant=tenant), k=1).best_similarity or 0.0 for tenant in tenants}
           for t in ood_tasks()]
    t = configured.inspiration
    ood_best = [max(scores.values()) for scores in ood]
    known_scores = [s for _, s in known]
    low, high = max(ood_best), min(known_scores)
    print(f"\n## Novelty (best applicable task similarity; global inspiration threshold {t:.3f})\n")
    print(table(["", "n", "min", "median", "max", "margin to threshold"],
                [["out-of-domain (best over tenants)", len(ood_best), min(ood_best), statistics.median(ood_best),
                  low, t - low],
                 ["in-domain, held out with its task", len(known), high, statistics.median(known_scores),
                  max(known_scores), high - t]]))
    rows = []
    for tenant, c in own.items():
        if c is not None:
            rows.append([tenant, c.tasks, c.in_domain if c.in_domain is not None else "-",
                         c.out_of_domain if c.out_of_domain is not None else "-", c.threshold, c.basis])
    if rows:
        print("\nEach tenant's own threshold (calibrated on its library: the 2% quantile of its held-out tasks' best "
              "similarities, the best of the runtime's 50 probe tasks, none of them the 40 out-of-domain tasks "
              "here; raised mid-gap, never lowered):\n")
        print(table(["tenant", "tasks", "in-domain side", "out-of-domain side", "threshold", "basis"], rows))
    misrouted = {
        "global": (sum(s >= t for s in ood_best), sum(s < t for s in known_scores)),
        "per tenant": (sum(any(s >= threshold[tenant] for tenant, s in scores.items()) for scores in ood),
                       sum(s < threshold[tenant] for tenant, s in known)),
    }
    print("\n" + table(["threshold", "out-of-domain tasks given exemplars (any tenant)", "in-domain tasks given none"],
                       [[name, a, b] for name, (a, b) in misrouted.items()]))
    return {"threshold": t, "ood_max": low, "known_min": high, "margin_ood": t - low, "margin_known": high - t,
            "misrouted": {name: {"out_of_domain_above": a, "in_domain_below": b} for name, (a, b) in misrouted.items()},
            "tenants": {tenant: vars(c) for tenant, c in own.items() if c is not None}}


if __name__ == "__main__":
    sys.exit(main())
