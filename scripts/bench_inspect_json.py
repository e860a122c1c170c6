"""Inspect AI JSON logs read whole against streamed sample by sample, side by side: peak memory and time.

The log: the real ``agent-demo.json.gz`` of tests/fixtures/inspect-ai/.r28 (inspect-ai 0.3.285 against its mockllm,
8 samples) scaled to ``--mb`` by repeating its samples, each copy with its own ``id`` and ``uuid`` (written one sample
at a time, as Inspect's JSON writer lays a log out: header fields, then ``samples``, then ``reductions``); or a log of
your own with ``--log``.

Each read runs in a fresh process (``read_dump`` alone, every run converted, nothing stored), alternating the two ways,
``--repeat`` times; the table gives medians of the peak resident set (VmHWM) and of the read's wall and CPU time
(the CPU time is the steadier on a shared machine). "whole" is
the reader as it was before streaming: the adapter without its ``read_streamed`` hook and ``LISTED_RUNS``, so a log
is parsed whole by detection (up to 64 MB) and again by the reader (``sources.whole_document``), then split. Both
ways must give the same runs: the script checks their positions, ids and outcomes. ``--base`` measures a second
checkout's streamed read in the same rounds ("streamed (base)"): a change against the code before it, side by side.

    python scripts/bench_inspect_json.py                 # an 84 MB log, 3 rounds
    python scripts/bench_inspect_json.py --mb 300 --repeat 5
    python scripts/bench_inspect_json.py --log nan.json --base /work/main   # a log with NaN scores, before/after
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_note, table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
REAL_LOG = ROOT / "tests/fixtures/inspect-ai/.r28/agent-demo.json.gz"
WAYS = ("whole", "streamed")

#: What each measuring process runs: read every run of the log one way, then print its figures as JSON.
_READ = """
import hashlib, json, sys, time
from trajsearch.ingest.adapters import inspect_ai
from trajsearch.ingest.read import read_dump
if sys.argv[2] == "whole":
    del inspect_ai.read_streamed, inspect_ai.LISTED_RUNS
started, cpu = time.perf_counter(), time.process_time()
runs = [(p.position, p.trajectory.trajectory_id if p.trajectory else None,
         p.trajectory.outcome.value if p.trajectory else p.error) for p in read_dump(sys.argv[1], fmt="inspect-ai")]
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak, "runs": len(runs),
                  "digest": hashlib.sha256(json.dumps(runs).encode()).hexdigest()}))
"""


def scaled_log(target: Path, megabytes: float) -> int:
    """Write the real log with its samples repeated until it holds ``megabytes``; the samples it holds."""
    with gzip.open(REAL_LOG, "rt", encoding="utf-8") as fh:
        log = json.load(fh)
    samples = log.pop("samples")
    after = {key: log.pop(key) for key in list(log) if key in ("reductions",)}
    size = sum(len(json.dumps(sample, indent=2).encode()) + 2 for sample in samples) / len(samples)  # as written
    copies = max(1, round(megabytes * 1e6 / size / len(samples)))
    written = 0
    with target.open("w", encoding="utf-8") as out:
        head = json.dumps(log, indent=2)
        out.write(head[:-2] + ',\n  "samples": [\n')
        for copy in range(copies):
            for sample in samples:
                renamed = {**sample, "id": f"{sample['id']}-{copy}", "uuid": f"{sample['uuid']}-{copy}"}
                out.write((",\n" if written else "") + json.dumps(renamed, indent=2))
                written += 1
        out.write("\n  ]" + "".join(f',\n  "{k}": {json.dumps(v, indent=2)}' for k, v in after.items()) + "\n}\n")
    return written


def measure(log: Path, way: str, root: Path = ROOT) -> dict[str, float]:
    """One read of ``log`` in a fresh process, ``way`` ("whole" or "streamed"), with the code of checkout ``root``."""
    env = {"PYTHONPATH": str(root), "TRAJSEARCH_MODEL": "hashing", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", _READ, str(log), way.split()[0]], env=env, capture_output=True,
                          text=True, check=True, cwd=root)  # ``-c`` puts its working folder first on the path
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=84.0, help="size of the scaled log (default: 84, the README's)")
    ap.add_argument("--log", type=Path, help="an Inspect AI JSON log to read instead of the scaled one")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--base", type=Path, help="another checkout (the code before a change) whose streamed read is "
                                              "measured too")
    args = ap.parse_args()
    ways = WAYS + (("streamed (base)",) if args.base else ())
    with tempfile.TemporaryDirectory(prefix="bench-inspect-json-") as scratch:
        log = args.log or Path(scratch) / "scaled.json"
        if args.log is None:
            samples = scaled_log(log, args.mb)
            print(f"log: {log.stat().st_size / 1e6:.1f} MB, {samples} samples (agent-demo.json.gz scaled)")
        results: dict[str, list[dict[str, float]]] = {way: [] for way in ways}
        for _ in range(args.repeat):
            for way in ways:
                results[way].append(measure(log, way, args.base if way.endswith("(base)") else ROOT))
        digests = {r["digest"] for way in ways for r in results[way]}
        print(table(["read", "runs", "peak RSS MB (median)", "seconds (median)", "CPU seconds (median)"],
                    [(way, int(results[way][0]["runs"]), *(statistics.median(r[key] for r in results[way])
                                                           for key in ("peak_mb", "seconds", "cpu")))
                     for way in ways]))
        print("same runs, ids and outcomes every way" if len(digests) == 1 else "THE WAYS DIFFER")
        print(machine_note())


if __name__ == "__main__":
    main()
