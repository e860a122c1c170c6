"""CLI start-up: how long each command takes before it says anything, and to its end, per code tree, side by side.

Each command is run as a user runs it (a fresh ``python -m trajsearch.cli`` process) against one embedded store
holding the sample dump, embedded with the default model (the one a user's store has: ``search`` loads it, ``show``
and ``stats`` open the store with it). Timed: to the first byte on stdout or stderr (what a user waits for), and to
the process's exit. Medians of ``--runs`` rounds, the trees alternating within a round and taking turns to go
first (the second of two runs finds the page cache warmed by the first), so a busy machine's load falls on both alike.

    python scripts/bench_startup.py                               # this tree
    python scripts/bench_startup.py --tree main=/work/main --tree branch=.   # two trees (each needs its gRPC stubs)
"""

from __future__ import annotations

import argparse
import os
import selectors
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, machine_note, table  # noqa: E402

TENANT = "demo"
RUN = "tau-gpt-4o-airline-1-t0"  # a run of the sample dump
COMMANDS = {
    "--help": ["--help"],
    "search --help": ["search", "--help"],
    "show": ["show", RUN, "-t", TENANT],
    "stats": ["stats", "-t", TENANT],
    "search": ["search", "exit code 137", "-t", TENANT],
    "similar --id": ["similar", "--id", RUN, "-t", TENANT],
}


def timed(tree: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds to the command's first output byte and to its exit (``python -m trajsearch.cli ARGS`` in ``tree``)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "trajsearch.cli", *args], cwd=tree, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env={**env, "PYTHONPATH": str(tree)})
    first, said = None, []
    with selectors.DefaultSelector() as sel:
        for stream in (proc.stdout, proc.stderr):
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select():
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                first = first or time.perf_counter()
                said.append(chunk)
    code = proc.wait()
    end = time.perf_counter()
    if code != 0:
        raise SystemExit(f"{' '.join(args)} in {tree} exited {code}: {b''.join(said).decode(errors='replace')[-500:]}")
    return (first or end) - start, end - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", default=[], help="NAME=PATH of a trajsearch checkout (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default=os.environ.get("TRAJSEARCH_MODEL", "all-MiniLM-L6-v2"))
    options = parser.parse_args()
    trees = dict(t.split("=", 1) for t in options.tree) or {"this": str(ROOT)}
    trees = {name: Path(path).resolve() for name, path in trees.items()}
    home = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TRAJSEARCH_")}
        env.update(TRAJSEARCH_HOME=str(home), TRAJSEARCH_MODEL=options.model, COLUMNS="200")
        first_tree = next(iter(trees.values()))
        subprocess.run([sys.executable, "-m", "trajsearch.cli", "ingest", str(first_tree / "trajsearch/samples"),
                        "-t", TENANT, "-q"], cwd=first_tree, env={**env, "PYTHONPATH": str(first_tree)}, check=True)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(options.runs):
            for command, args in COMMANDS.items():
                turn = round_ % len(trees)
                for name, tree in list(trees.items())[turn:] + list(trees.items())[:turn]:
                    times.setdefault((command, name), []).append(timed(tree, args, env))
    finally:  # its Milvus Lite store and traces
        shutil.rmtree(home, ignore_errors=True)
    rows = []
    for command in COMMANDS:
        row: list[object] = [command]
        for name in trees:
            got = times[(command, name)]
            row += [f"{statistics.median(t[0] for t in got):.2f}", f"{statistics.median(t[1] for t in got):.2f}"]
        rows.append(row)
    headers = ["command"] + [f"{name} {what}" for name in trees for what in ("first output s", "exit s")]
    print(f"medians of {options.runs} runs, model {options.model}, store: the sample dump ({machine_note()})")
    print(table(headers, rows))


if __name__ == "__main__":
    main()
