"""Mid-task warnings: does an agent pasting its failing step's error see a run that got past it?

Queries: the last ``...Error: ...`` / ``...Exception: ...`` line of the first erroring step of each
mini-swe-agent run in ../shared/data. Each is asked of ``Runtime.warnings`` (the verb behind the gRPC
``Warnings`` call) with every run of the line's own task left out, in one process, with recoveries off
(``AdviceConfig.recoveries_k=0``: the code before them) and on, alternated. A line is *findable* when a
successful run of another task holds it in a step's observation; it is *shown* when the rendered context
(default budget) holds such a run as a recovery. Also: answers with nothing at all, the context's tokens,
searches per call (counted at ``TrajSearch.search_filtered``) and milliseconds; the error mix (the
exception names of the lines shown a recovery). ``--pairs FILE`` writes each recovery shown (the line, the step
that met it, the step after it) as JSON lines, to be read: is the next step the fix?

    python scripts/eval_recoveries.py        # the store of scripts/eval_exact.py (cached under /tmp)
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from _common import load_model, open_store, read_real_runs, store_dir

from trajsearch import config
from trajsearch.runtime import AdviceConfig, Runtime, RuntimeConfig, RuntimeContext
from trajsearch.runtime.format import render

TENANT = "exact"  # scripts/eval_exact.py's tenant: its cached store serves here unchanged
ERROR_LINE = re.compile(r"^(\w+(?:Error|Exception): .{5,200})$", re.M)


def error_lines(runs: list) -> list[tuple[object, str]]:
    """Each run's first erroring step's last error line, with the run."""
    found = []
    for run in runs:
        for step in run.steps:
            if lines := ERROR_LINE.findall(step.observation or ""):
                found.append((run, lines[-1].strip()))
                break
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", type=Path, default=Path("/tmp/trajsearch-eval-exact"))
    ap.add_argument("--model", default=config.default_model())
    ap.add_argument("--pairs", type=Path, help="write each recovery shown (recoveries on) here, as JSON lines")
    args = ap.parse_args()
    real = read_real_runs(tenant=TENANT)
    model, _ = load_model(args.model)
    ts = open_store(store_dir(args.store / args.model.replace("/", "_")), model)
    ts.add(real.runs)
    searches = [0]
    search_filtered = ts.search_filtered

    def counted(*a, **kw):
        searches[0] += 1
        return search_filtered(*a, **kw)

    ts.search_filtered = counted  # counts the searches a call makes (measurement only)
    ctx = RuntimeContext(tenant=TENANT)
    rts = {k: Runtime(ts, RuntimeConfig(advice=AdviceConfig(recoveries_k=k))) for k in (0, 1)}
    stats = {k: {"shown": 0, "empty": 0, "tokens": [], "searches": [], "ms": []} for k in rts}
    queries = error_lines(real.swe)
    findable = 0
    pairs: list[dict[str, str]] = []
    for n, (run, line) in enumerate(queries):
        own = [r.trajectory_id for r in real.swe if r.task_id == run.task_id]
        past = {r.trajectory_id for r in real.swe if r.task_id != run.task_id and r.outcome.value == "success"
                and any(line in (s.observation or "") for s in r.steps)}
        findable += bool(past)
        for k in ((0, 1) if n % 2 == 0 else (1, 0)):
            searches[0] = 0
            started = time.perf_counter()
            warned = rts[k].warnings(line, ctx, exclude_trajectory_ids=own)
            ms = (time.perf_counter() - started) * 1000
            shown = render(None, [], warned, counter=rts[k].counter, recoveries=warned.recoveries)
            ids = {v["provenance"]["trajectory_id"] for v in shown.data.get("recoveries", [])}
            s = stats[k]
            s["shown"] += bool(ids & past)
            s["empty"] += not shown.text
            s["tokens"].append(shown.tokens)
            s["searches"].append(searches[0])
            s["ms"].append(ms)
            if k:
                pairs += [{"line": line, "trajectory_id": v["provenance"]["trajectory_id"], "met": v["step_holding"],
                           "next": v.get("next_step", "")} for v in shown.data.get("recoveries", [])]
    print(f"{len(queries)} error lines; another task's successful run met {findable}")
    for k, s in stats.items():
        print(f"recoveries_k={k}: a run that got past it shown for {s['shown']} of {findable}; empty answers "
              f"{s['empty']} of {len(queries)}; median tokens {statistics.median(s['tokens'])}, searches "
              f"{statistics.median(s['searches'])}, ms p50 {statistics.median(s['ms']):.0f}")
    mix = Counter(p["line"].partition(":")[0] for p in pairs)
    print(f"recoveries shown {len(pairs)}, by error: " + ", ".join(f"{name} {n}" for name, n in mix.most_common()))
    if args.pairs:
        args.pairs.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs))
    ts.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
