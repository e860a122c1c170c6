"""Load test of the gRPC service on loopback: throughput, latency, errors; then a kill and a restart.

    python scripts/load_test.py                      # 8 clients x 150 queries, then kill -9 + restart
    python scripts/load_test.py --clients 4 --queries 50 --signal TERM

Everything is bounded: a fixed number of queries per client, a time cap per
phase (``--max-seconds`` in all), one server subprocess on 127.0.0.1 that is
always killed at exit, data in a temp directory. The server uses the fast
*test* embedder (``--model hashing``) so the figures measure the service and
the index, not the embedding model (see FACTS.md for model costs).

Phase 1: N concurrent clients (one channel each) x M mixed queries (search
with varied filters, similar runs, expand, run, get trace, warnings): throughput,
p50 / p99 latency per kind and overall, error count (target 0).

Phase 2: clients keep querying and one writer keeps ingesting while the server
is killed (SIGKILL by default) and restarted on the same data directory and
port. Every error a client sees must be a clean UNAVAILABLE (or a deadline);
after the restart every acknowledged write is there and the row count equals
the count before plus the rows of acknowledged writes: no data lost.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from trajsearch.client import Client, ServiceError
from trajsearch.model import Failure, Step, Trajectory
from trajsearch.service.auth import key_entry, new_key

ERRORS = [
    "ModuleNotFoundError: No module named 'yaml'", "OSError: [Errno 28] No space left on device",
    "TimeoutError: deploy timed out after 300s", "AssertionError: expected 200, got 503",
    "PermissionError: [Errno 13] Permission denied: '/etc/app.conf'", "KeyError: 'user_id'",
    "ConnectionRefusedError: [Errno 111] Connection refused", "exit code 137 (out of memory)",
]
TASKS = [
    "Fix the failing unit test in the {0} service", "Add retries to the {0} client",
    "Upgrade the {0} dependency and fix the breakage", "Deploy {0} to staging",
    "Write a migration for the {0} table", "Investigate slow responses from {0}",
]
NAMES = ["payments", "billing", "auth", "search", "inventory", "shipping", "reports", "gateway"]
TOOLS = ["bash", "edit", "pytest", "kubectl", "psql", "curl"]


def synthetic_run(i: int, rng: random.Random, tenant: str, prefix: str = "r") -> Trajectory:
    name = rng.choice(NAMES)
    failed = rng.random() < 0.35
    error = rng.choice(ERRORS)
    steps = []
    for s in range(rng.randint(3, 9)):
        tool = rng.choice(TOOLS)
        steps.append(Step(index=s, action=tool, arguments={"command": f"{tool} {name} step {s}"},
                          observation=error if failed and s >= 2 and rng.random() < 0.5 else f"ok {name} {s}"))
    return Trajectory(
        trajectory_id=f"{prefix}{i:05d}", tenant=tenant, task=rng.choice(TASKS).format(name),
        outcome="failure" if failed else "success", env_version=rng.choice(["v1", "v2", "v3"]),
        task_family=name, created_at=datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(hours=i),
        steps=steps, failure=Failure(error=error) if failed else None,
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The server subprocess: start, wait for health, kill / terminate."""

    def __init__(self, workdir: Path, address: str, keys_file: Path, workers: int) -> None:
        self.workdir, self.address, self.keys_file, self.workers = workdir, address, keys_file, workers
        self.proc: subprocess.Popen | None = None
        self.log = open(workdir / "server.log", "a")

    def start(self, probe_key: str, timeout: float = 120) -> float:
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trajsearch.service", "serve", "--address", self.address,
             "--uri", str(self.workdir / "milvus.db"), "--traces", str(self.workdir / "traces"),
             "--model", "hashing", "--keys", str(self.keys_file), "--workers", str(self.workers),
             "--log-level", "WARNING"],
            stdout=subprocess.DEVNULL, stderr=self.log,
        )
        with Client(self.address, probe_key, retries=1, timeout=2) as probe:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"server exited with {self.proc.returncode}; see {self.workdir / 'server.log'}")
                try:
                    if probe.health() == "SERVING":
                        return time.perf_counter() - started
                except ServiceError:
                    pass
                if time.perf_counter() - started > timeout:
                    raise RuntimeError("server did not become healthy")
                time.sleep(0.2)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def ok(self, kind: str, ms: float) -> None:
        with self.lock:
            self.latencies[kind].append(ms)

    def error(self, kind: str, exc: BaseException) -> None:
        code = exc.code.name if isinstance(exc, ServiceError) else type(exc).__name__
        with self.lock:
            self.errors[(kind, code)] += 1


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q / 100 * len(ordered) + 0.5)) - 1))]


def one_query(c: Client, rng: random.Random, known: list[tuple[str, str]], tally: Tally) -> bool:
    roll = rng.random()
    name = rng.choice(NAMES)
    started = time.perf_counter()
    kind = "search"
    try:
        if roll < 0.45:
            filters = rng.choice([{}, {"outcome": "failure"}, {"levels": ["step"]}, {"env_version": "v2"},
                                  {"task_family": name}, {"tools": ["kubectl"]}])
            c.search(f"{rng.choice(ERRORS)} {name}", k=rng.choice([3, 5, 10]), **filters)
        elif roll < 0.60:
            kind = "similar_runs"
            c.similar_runs(text=rng.choice(ERRORS), k=5)
        elif roll < 0.72:
            kind = "expand"
            hits = c.search(f"{name} step", k=1, levels="step")
            if hits:
                c.expand(hits[0], before=2, after=2)
        elif roll < 0.84:
            kind = "run"
            c.run(rng.choice(known)[0])
        elif roll < 0.95:
            kind = "get_trace"
            c.get_trace(rng.choice(known)[1])
        else:
            kind = "warnings"
            c.warnings(f"{rng.choice(TASKS).format(name)}: {rng.choice(ERRORS)}", k=2)
    except (ServiceError, ConnectionError) as exc:
        tally.error(kind, exc)
        return False
    tally.ok(kind, (time.perf_counter() - started) * 1000)
    return True


def report(title: str, tally: Tally, seconds: float) -> dict:
    every = [ms for values in tally.latencies.values() for ms in values]
    n_err = sum(tally.errors.values())
    summary = {
        "phase": title, "queries_ok": len(every), "errors": n_err, "seconds": round(seconds, 2),
        "throughput_qps": round(len(every) / seconds, 1) if seconds else 0,
        "p50_ms": round(pct(every, 50), 1), "p99_ms": round(pct(every, 99), 1),
        "by_kind": {k: {"n": len(v), "p50_ms": round(pct(v, 50), 1), "p99_ms": round(pct(v, 99), 1)}
                    for k, v in sorted(tally.latencies.items())},
        "error_codes": {f"{k}:{c}": n for (k, c), n in sorted(tally.errors.items())},
    }
    print(json.dumps(summary, indent=1))
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--queries", type=int, default=150, help="queries per client in phase 1")
    parser.add_argument("--runs", type=int, default=300, help="runs indexed before the load")
    parser.add_argument("--workers", type=int, default=8, help="server RPC threads")
    parser.add_argument("--signal", choices=["KILL", "TERM"], default="KILL", help="how the server dies in phase 2")
    parser.add_argument("--max-seconds", type=float, default=240, help="cap on the whole run")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    deadline = time.monotonic() + args.max_seconds
    rng = random.Random(args.seed)

    workdir = Path(tempfile.mkdtemp(prefix="trajsearch-load-"))
    writer_key, reader_key = new_key(), new_key()
    keys_file = workdir / "keys.json"
    keys_file.write_text(json.dumps({"keys": [key_entry(writer_key, tenant="load", role="write"),
                                              key_entry(reader_key, tenant="load", role="read")]}))
    server = Server(workdir, f"127.0.0.1:{free_port()}", keys_file, args.workers)
    results: dict = {"config": vars(args), "workdir": str(workdir)}
    try:
        results["startup_s"] = round(server.start(reader_key), 2)
        with Client(server.address, writer_key, timeout=120) as w:
            t = time.perf_counter()
            ingest = w.add((synthetic_run(i, rng, "load") for i in range(args.runs)), batch_size=64)
            results["seed_ingest"] = {"runs": ingest.ingested, "rows": ingest.rows,
                                      "seconds": round(time.perf_counter() - t, 2)}
            known = [(f"r{i:05d}", w.run(f"r{i:05d}").trace_uri) for i in range(0, args.runs, max(1, args.runs // 50))]

        # -- baseline: one client alone, for scale ------------------------------------------------
        alone = Tally()
        t = time.perf_counter()
        with Client(server.address, reader_key, timeout=30) as c:
            local = random.Random(args.seed)
            for _ in range(min(60, args.queries)):
                one_query(c, local, known, alone)
        results["baseline"] = report("1 client alone", alone, time.perf_counter() - t)

        # -- phase 1: N clients x M mixed queries -------------------------------------------------
        tally = Tally()

        def client_loop(n: int) -> None:
            local = random.Random(args.seed * 1000 + n)
            with Client(server.address, reader_key, timeout=30) as c:
                for _ in range(args.queries):
                    if time.monotonic() > deadline:
                        return
                    one_query(c, local, known, tally)

        t = time.perf_counter()
        threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(args.clients)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        results["phase1"] = report(f"{args.clients} clients x {args.queries} mixed queries", tally,
                                   time.perf_counter() - t)
        with Client(server.address, reader_key) as c:
            results["server_metrics"] = {m: {k: round(v, 1) if isinstance(v, float) else v for k, v in s.items()}
                                         for m, s in c.metrics()["methods"].items()}

        # -- phase 2: kill mid-load, restart, check nothing is lost -------------------------------
        with Client(server.address, reader_key) as c:
            rows_before = c.stats()["rows"]
        stop = threading.Event()
        killed = threading.Event()
        outage = Tally()
        after = Tally()
        acked: list[tuple[list[str], int]] = []
        write_errors = Counter()

        def load_loop(n: int) -> None:
            local = random.Random(args.seed * 7 + n)
            with Client(server.address, reader_key, timeout=10, retries=1) as c:
                while not stop.is_set() and time.monotonic() < deadline:
                    if not one_query(c, local, known, outage if killed.is_set() and not restarted.is_set() else after):
                        time.sleep(0.1)  # a real client backs off instead of spinning on a dead server

        def write_loop() -> None:
            i = 0
            with Client(server.address, writer_key, timeout=30, retries=1) as c:
                while not stop.is_set() and time.monotonic() < deadline:
                    batch = [synthetic_run(100_000 + i + j, random.Random(i + j), "load", prefix="w") for j in range(4)]
                    i += 4
                    try:
                        rep = c.add(batch, batch_size=4)
                        acked.append(([t.trajectory_id for t in batch], rep.rows))
                    except (ServiceError, ConnectionError) as exc:
                        write_errors[exc.code.name if isinstance(exc, ServiceError) else type(exc).__name__] += 1
                        time.sleep(0.2)

        restarted = threading.Event()
        threads = [threading.Thread(target=load_loop, args=(n,)) for n in range(args.clients)]
        threads.append(threading.Thread(target=write_loop))
        for th in threads:
            th.start()
        time.sleep(3)
        sig = signal.SIGKILL if args.signal == "KILL" else signal.SIGTERM
        killed.set()
        t_kill = time.perf_counter()
        exit_code = server.stop(sig)
        stop_s = time.perf_counter() - t_kill
        time.sleep(1.5)  # clients run against a dead port
        restart_s = server.start(reader_key)
        restarted.set()
        time.sleep(3)
        stop.set()
        for th in threads:
            th.join(60)
        down_s = time.perf_counter() - t_kill

        unclean = {f"{k}:{c}": n for (k, c), n in outage.errors.items() if c not in ("UNAVAILABLE", "DEADLINE_EXCEEDED")}
        results["phase2"] = {
            "signal": args.signal, "server_exit": exit_code, "stop_s": round(stop_s, 2), "restart_s": round(restart_s, 2),
            "outage_window_s": round(down_s, 2),
            "errors_while_down": {f"{k}:{c}": n for (k, c), n in sorted(outage.errors.items())},
            "unclean_errors": unclean, "queries_ok_while_down": sum(len(v) for v in outage.latencies.values()),
            "queries_ok_before_kill_and_after_restart": sum(len(v) for v in after.latencies.values()),
            "errors_before_kill_and_after_restart": {f"{k}:{c}": n for (k, c), n in sorted(after.errors.items())},
            "writes_acknowledged": len(acked), "write_errors": dict(write_errors),
        }
        with Client(server.address, reader_key) as c:
            rows_after = c.stats()["rows"]
            missing = [tid for ids, _ in acked for tid in ids if c.run(tid) is None]
            # a write in flight at the kill may or may not have landed (it was not acknowledged);
            # re-sending it is safe: ingest is idempotent
        acked_rows = sum(rows for _, rows in acked)
        results["phase2"].update({
            "rows_before": rows_before, "rows_acknowledged": acked_rows, "rows_after": rows_after,
            "acknowledged_runs_missing": len(missing),
            "no_data_lost": not missing and rows_after >= rows_before + acked_rows,
        })
        print(json.dumps(results["phase2"], indent=1))
        ok = (results["phase1"]["errors"] == 0 and results["baseline"]["errors"] == 0 and not unclean and results["phase2"]["no_data_lost"])
        results["verdict"] = "PASS" if ok else "FAIL"
        print(json.dumps({"verdict": results["verdict"], "results_file": str(workdir / "results.json")}))
        (workdir / "results.json").write_text(json.dumps(results, indent=1))
        return 0 if ok else 1
    finally:
        server.stop(signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
