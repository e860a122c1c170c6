"""How many tokens a step window's vector should see (represent.WINDOW_TOKENS): quality and speed.

Step windows are ~90% of what ingest embeds, and nearly all are far longer than the model's 256
tokens (median ~850), so their vectors only ever saw a head. This compares heads of several
lengths on the real runs in ../shared/data, side by side in one run:

- *found by what the step did*: queries are a step's thought (its first 200 characters), its
  action's arguments (a command, a tool call) and its error (the last 200 characters), squashed to
  one line; a hit is a window of the same run holding that step among the top 1 / 5 by cosine,
  over every window of the runs (exact numpy search, one pool, as one tenant);
- *speed*: texts/s of the windows' embedding at each length (``--bulk``: ONNX Runtime fp32 by default).

    python scripts/eval_windows.py                       # caps 256 and 128, ~6 min on 2 cores
    python scripts/eval_windows.py --caps 256 192 128 96
    python scripts/eval_windows.py --caps 128 --bulk cpu-int8   # windows as ingest embeds them without AMX
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))

from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder  # noqa: E402
from trajsearch.ingest.read import read_dump  # noqa: E402
from trajsearch.represent import WindowConfig, argument_text, represent  # noqa: E402


def load_runs(swe_runs: int) -> list:
    paths = sorted((DATA / "mini-swe-agent-dev").rglob("*.traj.json"))[:swe_runs]
    paths.append(DATA / "tau-bench" / "gpt-4o-airline.json")
    runs = []
    for path in paths:
        runs += [p.trajectory for p in read_dump(path, tenant="eval") if getattr(p, "trajectory", None)]
    return runs


def squash(text: str) -> str:
    return " ".join(text.split())


def step_queries(runs: list, n: int, seed: int) -> list[tuple[str, int, int, str]]:
    """(kind, run number, step position, query text), ``n`` of them sampled with ``seed``."""
    out = []
    for number, run in enumerate(runs):
        for position, step in enumerate(run.steps):
            if step.thought and len(step.thought) > 40:
                out.append(("thought", number, position, squash(step.thought)[:200]))
            arguments = squash(argument_text(step.arguments))
            if step.action and len(arguments) > 15:
                out.append(("action", number, position, arguments[:200]))
            if step.error and len(step.error) > 20:
                out.append(("error", number, position, squash(step.error)[-200:]))
    random.Random(seed).shuffle(out)
    return out[:n]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--caps", type=int, nargs="+", default=[256, 128], help="token caps to compare (<= 256)")
    ap.add_argument("--swe-runs", type=int, default=80, help="mini-swe-agent runs (tau-bench airline: all)")
    ap.add_argument("--queries", type=int, default=900)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--bulk", default="off", help="the windows' embedding path (embed/bulk.py): off = ONNX fp32, cpu-int8, ...")
    args = ap.parse_args()
    if any(not 8 <= cap <= 256 for cap in args.caps):
        ap.error("--caps must each be 8..256 (the model's limit is 256)")

    runs = load_runs(args.swe_runs)
    windows = [(number, row.step_index, row.step_end, row.text) for number, run in enumerate(runs)
               for row in represent(run, window=WindowConfig()) if row.level == "step"]
    queries = step_queries(runs, args.queries, args.seed)
    model = OnnxMiniLMEmbedder(bulk=args.bulk)  # queries are fp32 whatever the path
    tokens = np.array([len(model.tokenizer.encode(w[3]).ids) for w in windows])
    print(f"{len(runs)} runs, {len(windows)} windows (tokens p10/p50/p90 "
          f"{' / '.join(str(int(x)) for x in np.percentile(tokens, [10, 50, 90]))}), {len(queries)} queries\n")
    query_vectors = model.encode([q[3] for q in queries])
    kinds = sorted({q[0] for q in queries}, key=["thought", "action", "error"].index)
    print("| window tokens | texts/s | " + " | ".join(f"{k} hit@1 / @5 (n={sum(q[0] == k for q in queries)})"
                                             for k in kinds) + " |")
    print("|---|---|" + "---|" * len(kinds))
    for cap in args.caps:
        start = time.perf_counter()
        vectors = model.encode_documents([w[3] for w in windows], max_tokens=cap)
        rate = len(windows) / (time.perf_counter() - start)
        top = np.argsort(-(query_vectors @ vectors.T), axis=1)[:, :5]
        cells = []
        for kind in kinds:
            at1 = at5 = 0
            mine = [i for i, q in enumerate(queries) if q[0] == kind]
            for i in mine:
                _, number, position, _ = queries[i]
                ok = [windows[t][0] == number and windows[t][1] <= position <= windows[t][2] for t in top[i]]
                at1, at5 = at1 + ok[0], at5 + any(ok)
            cells.append(f"{at1 / len(mine):.3f} / {at5 / len(mine):.3f}")
        print(f"| {cap} | {rate:.1f} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
