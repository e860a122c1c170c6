"""Benchmark all-MiniLM-L6-v2 on torch (sentence-transformers) vs ONNX Runtime, side by side.

Why: query latency and ingest throughput decide which embedding path trajsearch
uses. Both paths run in one process on the same texts, interleaved repeat by
repeat so background load hits both alike; cold start is measured in fresh
subprocesses. Machines here are shared: read the ratios, not the absolute numbers.

    python scripts/bench_embed.py [--threads 2] [--repeats 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "mini-swe-agent-dev"

LOADERS = {
    "torch": "from trajsearch.embed.sentence_transformer import SentenceTransformerEmbedder as E; e = E()",
    "onnx": "from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder as E; e = E(threads={threads})",
}


def _messages(data: Path) -> list[list[str]]:
    """Message texts per mini-swe-agent run (content lists flattened to text)."""
    runs = []
    for path in sorted(data.glob("*/*/*.traj.json")):
        texts = []
        for message in json.loads(path.read_text())["messages"]:
            content = message.get("content") or ""
            if isinstance(content, list):
                content = " ".join(part.get("text", "") for part in content if isinstance(part, dict))
            texts.append(f"{message['role']}: {content}")
        runs.append(texts)
    return runs


def short_texts(runs: list[list[str]], n: int = 1000, words: int = 30) -> list[str]:
    """~30-word chunks of real messages: the FACTS.md benchmark shape, and query-like."""
    out = []
    for texts in runs:
        for text in texts[2:]:  # skip system prompt and task
            tokens = text.split()
            out.extend(" ".join(tokens[i : i + words]) for i in range(0, len(tokens) - words + 1, words))
    step = max(1, len(out) // n)
    return out[::step][:n]


def window_texts(runs: list[list[str]], n: int = 300, chars: int = 1500, steps: int = 3) -> list[str]:
    """Step windows like ingest makes: 3 consecutive action+observation turns, ~1,500 chars."""
    out = []
    for texts in runs:
        turns = texts[2:]
        for i in range(0, max(0, len(turns) - 2 * steps), 2 * steps):
            out.append("\n".join(turns[i : i + 2 * steps])[:chars])
    step = max(1, len(out) // n)
    return out[::step][:n]


def throughput(encode: Callable[[Sequence[str]], np.ndarray], texts: list[str]) -> float:
    start = time.perf_counter()
    encode(texts)
    return len(texts) / (time.perf_counter() - start)


def latencies_ms(encode: Callable[[Sequence[str]], np.ndarray], queries: list[str]) -> list[float]:
    out = []
    for query in queries:
        start = time.perf_counter()
        encode([query])
        out.append((time.perf_counter() - start) * 1000)
    return out


def cold_start(path: str, threads: int) -> tuple[float, float]:
    """Seconds from interpreter start to a loaded embedder (its session made by a first encode), and ms for its first
    query."""
    code = (
        "import time; t0 = time.perf_counter()\n"
        + LOADERS[path].format(threads=threads)
        + "\ne.encode(['warm-up']); t1 = time.perf_counter(); e.encode(['first query']); t2 = time.perf_counter()\n"
        "print(t1 - t0, (t2 - t1) * 1000)"
    )
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    load_s, first_ms = map(float, out.stdout.split()[-2:])
    return load_s, first_ms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from trajsearch.embed.sentence_transformer import SentenceTransformerEmbedder
    from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder

    runs = _messages(args.data)
    workloads = {"short ~30 words": short_texts(runs), "windows ~1500 chars": window_texts(runs)}
    queries = short_texts(runs, n=50)
    embedders = {"torch": SentenceTransformerEmbedder(), "onnx": OnnxMiniLMEmbedder(threads=args.threads)}
    for name, texts in workloads.items():
        mean_chars = statistics.mean(map(len, texts))
        print(f"# {name}: {len(texts)} texts, mean {mean_chars:.0f} chars", file=sys.stderr)

    results: dict[str, dict[str, list[float]]] = {path: {} for path in embedders}
    for repeat in range(args.repeats):  # interleaved: both paths see the same background load
        for path, embedder in embedders.items():
            encode = lambda texts, e=embedder: e.encode(texts, batch_size=args.batch_size)  # noqa: E731
            row = results[path]
            encode(queries[:2])  # warm-up
            for name, texts in workloads.items():
                row.setdefault(name, []).append(throughput(encode, texts))
            lat = latencies_ms(encode, queries)
            row.setdefault("query p50 ms", []).append(float(np.percentile(lat, 50)))
            row.setdefault("query p95 ms", []).append(float(np.percentile(lat, 95)))
            load_s, first_ms = cold_start(path, args.threads)
            row.setdefault("load s", []).append(load_s)
            row.setdefault("first query ms", []).append(first_ms)
            print(f"# repeat {repeat + 1} {path}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in row.items()), file=sys.stderr)

    sample = workloads["windows ~1500 chars"][:64] + queries
    agree = (embedders["torch"].encode(sample) * embedders["onnx"].encode(sample)).sum(axis=1)

    median = {path: {k: statistics.median(v) for k, v in row.items()} for path, row in results.items()}
    metrics = [f"texts/s, {name}" for name in workloads] + ["query p50 ms", "query p95 ms", "load s", "first query ms"]
    keys = list(workloads) + ["query p50 ms", "query p95 ms", "load s", "first query ms"]
    print(f"\nall-MiniLM-L6-v2, {args.threads} threads, batch {args.batch_size}, median of {args.repeats}")
    print("| metric | torch fp32 | ONNX fp32 | ONNX / torch |")
    print("|---|---|---|---|")
    for label, key in zip(metrics, keys):
        t, o = median["torch"][key], median["onnx"][key]
        print(f"| {label} | {t:.1f} | {o:.1f} | {o / t:.2f}x |")
    print(f"\ncosine torch vs ONNX on {len(sample)} texts: min {agree.min():.6f}")
    if args.json:
        args.json.write_text(json.dumps({"raw": results, "median": median, "min_cosine": float(agree.min())}, indent=1))


if __name__ == "__main__":
    main()
