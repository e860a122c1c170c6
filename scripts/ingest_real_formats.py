"""Ingest every real third-party trace file under ``../shared/data/real-formats`` and show what it became.

One line per file: detected format, runs, rejected records, steps, steps with
an error, outcomes, the first run's task (head), tools, model. Then the whole
folder is ingested for real into a fresh temporary store (the same command a
user runs), and the script checks that every run the preview counted landed
in the index: ``read = ingested + unchanged + rejected`` and the index holds
as many runs as were ingested.

    python scripts/ingest_real_formats.py [--root DIR] [--model hashing|all-MiniLM-L6-v2] [--json]

Exit status 1 when a file yields no run or a run is missing from the index.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from _common import DATA, load_model, open_store, table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=DATA / "real-formats", help="folder of trace files")
    parser.add_argument("--model", default="hashing",
                        help="embedder for the real ingest (hashing: fast test embedder; the mapping does not depend on it)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()

    from trajsearch.ingest.batch import IngestJob, run_ingest
    from trajsearch.ingest.detect import detect_format
    from trajsearch.ingest.preview import FilePreview, preview
    from trajsearch.ingest.read import plan_units

    files = preview([args.root])
    # span files are grouped by trace across a directory: a file whose spans all joined traces
    # that started in another file has no runs of its own; it still gets its line
    seen = {f.source for f in files}
    for unit in plan_units(args.root):
        for path in unit.files:
            if str(path) not in seen:
                joined = FilePreview(str(path), fmt=unit.fmt or detect_format(path))
                joined.task = "(its spans joined traces listed under another file)"
                files.append(joined)
    rows = []
    for f in sorted(files, key=lambda f: f.source):
        rel = str(Path(f.source).relative_to(args.root)) if f.source.startswith(str(args.root)) else f.source
        rel = rel if len(rel) <= 56 else rel[:20] + "…" + rel[-35:]
        task = " ".join((f.task or "").split())[:50]
        rows.append([
            rel, f.fmt or "-", f.runs, f.rejected, f.steps, f.errors,
            ", ".join(f"{k} {v}" for k, v in sorted(f.outcomes.items())) or "-",
            task or (f.first_rejection or "")[:50],
            ", ".join(list(f.tools)[:5]) + (" …" if len(f.tools) > 5 else ""),
            ", ".join(list(f.models)[:1]) or "-",
        ])

    model, _ = load_model(args.model)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="trajsearch-real-formats-") as tmp:
        with open_store(Path(tmp) / "store", model) as ts:
            result = run_ingest(ts, IngestJob(paths=[args.root], state_dir=Path(tmp) / "state"))
            indexed = ts.stats(tenant="default")["trajectories"]
    report = result.to_dict()
    previewed = sum(f.runs for f in files)
    problems = [f"{r[0]}: no run" for r in rows if r[2] == 0 and not r[7].startswith("(its spans joined")]
    if report["read"] != report["ingested"] + report["unchanged"] + report["rejected"]:
        problems.append("counts do not add up")
    if indexed != report["ingested"] or report["ingested"] + report["unchanged"] != previewed:
        problems.append(f"index holds {indexed} runs; ingest says {report['ingested']} new + "
                        f"{report['unchanged']} unchanged; the preview counted {previewed}")

    if args.json:
        print(json.dumps({"files": [f.to_dict() for f in files], "ingest": report, "indexed_runs": indexed,
                          "problems": problems}, indent=2, default=str))
    else:
        print(table(["file", "format", "runs", "rejected", "steps", "errors", "outcomes", "task (head)", "tools",
                     "model"], rows))
        print(f"\nreal ingest into a fresh store ({args.model} embedder, {time.monotonic() - started:.1f} s): "
              f"read {report['read']} = ingested {report['ingested']} + unchanged {report['unchanged']} + "
              f"rejected {report['rejected']}; index holds {indexed} runs")
        for problem in problems:
            print(f"PROBLEM: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
