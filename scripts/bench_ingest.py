"""Benchmark the batch indexer: ingest rate before and after (issue 12), next to the raw model rate,
and peak memory at 1x and 4x.

1. Rate. The same real runs from ../shared/data (``--rate-runs``, default 200: every mini-swe-agent
   run and a spread of tau-bench runs, as the dump files those tools write) are ingested twice with
   the real model into fresh embedded stores, through the CLI's ``run_ingest``:
   - *before*: every text embedded whole (up to the model's 256 tokens) by ONNX Runtime fp32, each
     occurrence (the previous versions' embedding; the rest of the pipeline is today's);
   - *after*: the default: step windows from their first 128 tokens (represent.WINDOW_TOKENS), each
     distinct text embedded once, by the machine's bulk path (trajsearch/embed/bulk.py: bfloat16
     on AMX, fp16 on a GPU, else ONNX Runtime fp32).
   Which goes first alternates with ``--order``; figures are rows/s of the whole ingest. The
   raw model then embeds exactly the texts the *before* ingest embedded, same batch size,
   straight through ONNX Runtime: before/raw shows the pipeline hides behind the model.
2. Memory. Dumps 1x and 4x as large (tau-bench + mini-swe-agent runs,
   replicated with new ids, gzipped JSONL) are ingested by a fresh process
   each, against a ``milvus-lite server`` process (as in production the store
   is another process, so its own growth with the data is not counted); the
   ingest process reports its peak RSS (VmHWM). Target: flat. The hashing test
   embedder is used here (the model's weights are a constant offset, and the
   4x run would take long with it).

    python scripts/bench_ingest.py                 # both parts, figures as Markdown
    python scripts/bench_ingest.py --skip-memory   # the rate only
    TRAJSEARCH_BULK=off python scripts/bench_ingest.py --skip-memory   # after: ONNX fp32 (no bulk path)
"""


from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import peak_rss_mb, raw_encode, raw_encoder_name  # noqa: E402

from trajsearch.embed import document_encoder  # noqa: E402
from trajsearch.represent import WINDOW_TOKENS  # noqa: E402


def tau_runs() -> list[dict]:
    return json.loads((DATA / "tau-bench" / "gpt-4o-airline.json").read_text())


def mini_runs() -> list[tuple[str, str, dict]]:
    out = []
    for path in sorted((DATA / "mini-swe-agent-dev").rglob("*.traj.json")):
        out.append((path.parent.parent.name, path.parent.name, json.loads(path.read_text())))
    return out


def build_dump(directory: Path, copies: int) -> tuple[Path, int]:
    """tau-bench runs as gzipped JSONL, mini-swe-agent runs as files, ``copies`` times with new ids."""
    directory.mkdir(parents=True, exist_ok=True)
    tau = tau_runs()
    minis = mini_runs()
    n = 0
    with gzip.open(directory / "airline.jsonl.gz", "wt") as f:
        for c in range(copies):
            for run in tau:
                f.write(json.dumps(dict(run, task_id=f"{run['task_id']}-c{c}")) + "\n")
                n += 1
    for c in range(copies):
        for config, instance, record in minis:
            target = directory / f"{config}-c{c}" / instance / f"{instance}.traj.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(record))
            n += 1
    return directory, n


def rate_dump(directory: Path, n_runs: int) -> Path:
    """``n_runs`` real runs as their tools wrote them: every mini-swe-agent run file, then a spread
    of tau-bench runs in one results file (JSONL)."""
    directory.mkdir(parents=True, exist_ok=True)
    minis = mini_runs()[:n_runs]
    tau = tau_runs()
    n_tau = max(0, n_runs - len(minis))
    picked = [tau[int(i * len(tau) / n_tau)] for i in range(n_tau)] if n_tau else []
    with open(directory / "airline.jsonl", "w") as f:
        for run in picked:
            f.write(json.dumps(run) + "\n")
    for config, instance, record in minis:
        target = directory / config / instance / f"{instance}.traj.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(record))
    return directory


def rate(args: argparse.Namespace, dump: Path, fast: bool) -> dict:
    """Ingest ``dump`` into a fresh store; ``fast``: today's default embedding path, else the previous one."""
    from trajsearch.embed import load_embedder
    from trajsearch.ingest.batch import IngestJob, run_ingest
    from trajsearch.search import TrajSearch

    work = Path(tempfile.mkdtemp(prefix="bench-ingest-rate-"))
    embedder = load_embedder(args.model)
    texts: list[str] = []

    class Recording:  # what the model was asked to embed
        name, dim = embedder.name, embedder.dim

        def encode(self, batch, *, batch_size=64):  # noqa: ANN001
            texts.extend(batch)
            return embedder.encode(batch, batch_size=batch_size)

        if fast:
            def encode_documents(self, batch, *, batch_size=64, max_tokens=None):  # noqa: ANN001
                texts.extend(batch)
                return document_encoder(embedder, max_tokens=max_tokens)(batch, batch_size=batch_size)

    document_encoder(embedder)(["warm up the model"] * 8)  # loads the bulk path, if any, untimed
    embedder.encode(["warm up the model"] * 8)
    options = {"embed_batch_size": args.batch_size}
    with TrajSearch.open(str(work / "milvus.db"), traces=str(work / "traces"), embedder=Recording()) as ts:
        if not fast:  # every occurrence embedded, as before: nothing remembered across texts
            original = ts.indexer

            def indexer(**kw):  # noqa: ANN003, ANN202
                made = original(**kw)
                made.encode_documents = lambda batch, batch_size=None, max_tokens=None: made.embedder.encode(
                    batch, batch_size=batch_size or made.embed_batch_size)  # whole windows, as before
                return made

            ts.indexer = indexer
        start = time.perf_counter()
        result = run_ingest(ts, IngestJob([dump], tenant="bench", state_dir=work / "state"), indexer_options=options)
        ingest_s = time.perf_counter() - start
    rows = result.report.rows
    figures = {
        "path": (f"after: windows from {WINDOW_TOKENS} tokens, {getattr(embedder, 'bulk', 'n/a')}, each text once"
                 if fast else "before: ONNX fp32, every text whole"),
        "runs": result.report.ingested, "rows": rows, "texts_embedded": len(texts), "distinct_texts": len(set(texts)),
        "ingest_seconds": round(ingest_s, 1), "ingest_rows_per_s": round(rows / ingest_s, 1),
    }
    if not fast:
        start = time.perf_counter()  # the model with nothing of ours around it, where it can be reached
        for i in range(0, len(texts), 256):
            raw_encode(embedder, texts[i : i + 256], batch_size=args.batch_size)
        raw_s = time.perf_counter() - start
        figures["raw_model_texts_per_s"] = round(len(texts) / raw_s, 1)
        figures["raw"] = raw_encoder_name(embedder)
    shutil.rmtree(work, ignore_errors=True)
    return figures


def measure_one(dump: str, uri: str, state: str) -> None:
    """Child process: ingest ``dump`` into ``uri`` with the hashing embedder; print runs, rows, seconds, peak RSS."""
    from trajsearch.embed import HashingEmbedder
    from trajsearch.ingest.batch import IngestJob, run_ingest
    from trajsearch.search import TrajSearch

    with TrajSearch.open(uri, traces=str(Path(state) / "traces"), embedder=HashingEmbedder()) as ts:
        start = time.perf_counter()
        result = run_ingest(ts, IngestJob([Path(dump)], tenant="bench", state_dir=Path(state)))
        seconds = time.perf_counter() - start
    print(json.dumps({"runs": result.report.ingested, "rows": result.report.rows, "seconds": round(seconds, 1),
                      "peak_rss_mb": round(peak_rss_mb(), 1)}))


def memory(args: argparse.Namespace) -> list[dict]:
    from trajsearch.ingest.batch import LocalServer

    out = []
    for copies in (1, 4):
        work = Path(tempfile.mkdtemp(prefix=f"bench-ingest-{copies}x-"))
        dump, runs = build_dump(work / "dump", copies)
        size = sum(p.stat().st_size for p in dump.rglob("*") if p.is_file())
        with LocalServer(str(work / "milvus.db")) as server:
            proc = subprocess.run([sys.executable, __file__, "--measure-one", str(dump), server.uri, str(work / "state")],
                                  capture_output=True, text=True, check=True, cwd=ROOT)
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
        out.append({"dump": f"{copies}x", "runs_in_dump": runs, "dump_mb": round(size / 2**20, 1), **figures})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rate-runs", type=int, default=200,
                        help="real runs for the rate part (every mini-swe-agent run, then tau-bench)")
    parser.add_argument("--order", choices=("before-first", "after-first"), default="before-first")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--skip-rate", action="store_true")
    parser.add_argument("--skip-memory", action="store_true")
    parser.add_argument("--measure-one", nargs=3, metavar=("DUMP", "URI", "STATE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_one:
        measure_one(*args.measure_one)
        return
    print(f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f} (shared machine: timings are noisy)")
    if not args.skip_rate:
        dump = rate_dump(Path(tempfile.mkdtemp(prefix="bench-ingest-dump-")), args.rate_runs)
        order = [False, True] if args.order == "before-first" else [True, False]
        found = {fast: rate(args, dump, fast) for fast in order}
        before, after = found[False], found[True]
        print(f"\n## Ingest rate, before and after, same {before['runs']} real runs ({before['rows']} rows), "
              f"{args.model}, batch {args.batch_size}; {args.order}; load average now {os.getloadavg()[0]:.2f}\n")
        print("| path | ingest s | rows/s | texts embedded (distinct) | vs before |")
        print("|---|---|---|---|---|")
        for r in (before, after):
            print(f"| {r['path']} | {r['ingest_seconds']} | {r['ingest_rows_per_s']} | "
                  f"{r['texts_embedded']} ({r['distinct_texts']}) | "
                  f"{r['ingest_rows_per_s'] / before['ingest_rows_per_s']:.2f}x |")
        print(f"\nraw model ({before['raw']}) on the before path's texts: {before['raw_model_texts_per_s']} texts/s; "
              f"texts/s inside the before ingest / raw: "
              f"{before['texts_embedded'] / before['ingest_seconds'] / before['raw_model_texts_per_s']:.1%}")
    if not args.skip_memory:
        rows = memory(args)
        print("\n## Peak memory of the ingest process (store served by a separate milvus-lite server)\n")
        print("| dump | runs | size (gz/json) | rows | seconds | peak RSS MiB |")
        print("|---|---|---|---|---|---|")
        for m in rows:
            print(f"| {m['dump']} | {m['runs']} | {m['dump_mb']} MiB | {m['rows']} | {m['seconds']} | {m['peak_rss_mb']} |")


if __name__ == "__main__":
    main()
