"""Web page latency on the embedded default at ~10k rows: search, run and compare pages over real HTTP.

Store. The real runs of ../shared/data (tau-bench airline and mini-swe-agent, parsed with
``read_dump``) go through the real ingest (``TrajSearch.add``: embeddings, rows, BM25,
file traces) into one tenant, then again as copies (new ids, a month later) until
``--rows`` rows exist (284 runs make ~5.1k rows, so 10k is two passes; env versions ``airline-v1`` and ``swe-dev-v1``). The copies reuse
their original's vectors (a text cache), so the build embeds each text once. The store is
kept in ``--workdir`` and reused when it already holds enough rows.

Timing. The store is reopened with the real model (queries are embedded for real, as an
engineer's would be) and served exactly as ``trajsearch ui`` serves it (``create_app`` +
uvicorn on 127.0.0.1); a client signs in with a key and times each GET, start to the end
of the body, over a real socket. Queries: exact lines from the runs' outputs (error lines,
tool errors; auto mode makes them hybrid), task texts (prose: dense), trajectory ids (runs
like this one), exact lines with filters (outcome and env). Each is asked once in a
shuffled order ("first": its embedding and most trace facts not cached yet), then all again
("again"); then run pages at the matched step and compare pages of failed runs.

    python scripts/bench_web.py                      # build (first time: ~10 min here) and time
    python scripts/bench_web.py --queries 20 --json
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import json
import random
import re
import sys
import time
import urllib.request
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote, urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # pymilvus' keepalive pings make milvus-lite log GOAWAY noise

from _common import CachedEmbedder, machine_note, p50, p95, read_real_runs, spread, table  # noqa: E402

TENANT = "acme"
_LINE = re.compile(r"^.*\b(?:[A-Z]\w*Error|Exception|Error:|error:|FAILED|No such file)\b.*$", re.M)


def build(workdir: Path, rows_wanted: int) -> None:
    from trajsearch.embed import load_embedder
    from trajsearch.search import TrajSearch

    real = read_real_runs(TENANT)
    embedder = CachedEmbedder(load_embedder("all-MiniLM-L6-v2"))
    with TrajSearch.open(str(workdir / "milvus.db"), traces=str(workdir / "traces"), embedder=embedder) as ts:
        from trajsearch.store.filters import Filters

        stored = list(ts.rows(Filters(tenant=TENANT), ["text", "embedding"]))  # a rerun embeds nothing twice
        embedder.add([r["text"] for r in stored], [r["embedding"] for r in stored])
        from trajsearch.represent import represent

        envs = {id(t): "airline-v1" for t in real.tau} | {id(t): "swe-dev-v1" for t in real.swe}
        per_pass = sum(len(represent(t, window=ts.window)) for t in real.runs)
        for copy in range(-(-rows_wanted // per_pass)):  # every pass, so a rerun brings old copies up to date
            runs = [t.model_copy(update={"env_version": envs[id(t)]}) if copy == 0 else
                    t.model_copy(update={"trajectory_id": f"{t.trajectory_id}@copy{copy}", "env_version": envs[id(t)],
                                         "created_at": t.created_at + timedelta(days=30 * copy)})
                    for t in real.runs]
            started = time.perf_counter()
            report = ts.add(runs)
            print(f"pass {copy}: ingested {report.ingested} runs, {report.rows} rows in "
                  f"{time.perf_counter() - started:.0f} s ({embedder.misses} texts embedded so far)", flush=True)


def queries(ts, n: int, rng: random.Random) -> dict[str, list[dict[str, str]]]:
    from trajsearch.store.filters import Filters

    rows = list(ts.rows(Filters(tenant=TENANT, levels=("task", "step")),
                        ["trajectory_id", "level", "text", "outcome", "env_version"]))
    lines, tasks, ids, failed = [], [], [], []
    for row in rows:
        if "@copy" in row["trajectory_id"]:
            continue
        if row["level"] == "task":
            tasks.append(" ".join(row["text"].split()[:40]))
            ids.append(row["trajectory_id"])
            if row["outcome"] != "success":
                failed.append(row["trajectory_id"])
        else:
            lines.extend(m.group(0).strip()[:200] for m in _LINE.finditer(row["text"]) if len(m.group(0).strip()) > 12)
    lines = sorted(set(lines))
    envs = sorted({r["env_version"] for r in rows if r["env_version"]})
    exact = spread(lines, n)
    return {
        "exact line": [{"q": q} for q in exact],
        "prose task": [{"q": q} for q in spread(sorted(set(tasks)), n)],
        "trajectory id": [{"q": q} for q in spread(sorted(ids), n)],
        "exact line + filters": [{"q": q, "outcome": "failure", "env": rng.choice(envs)}
                                 for q in spread(lines[1:], n)],
        "_failed": [{"id": i} for i in spread(sorted(failed), n)],
    }


class Browserless:
    """A signed-in HTTP client (cookie jar), timing each GET to the end of its body."""

    def __init__(self, base: str, key: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        page = self.opener.open(base + "/signin", timeout=60).read().decode()
        csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
        body = urlencode({"key": key, "csrf": csrf, "next": "/"}).encode()
        self.opener.open(urllib.request.Request(base + "/signin", data=body), timeout=60).read()

    def get(self, path: str) -> tuple[float, str]:
        started = time.perf_counter()
        with self.opener.open(self.base + path, timeout=120) as response:
            body = response.read().decode()
            assert response.status == 200 and "/signin" not in response.url, (path, response.status)
        return (time.perf_counter() - started) * 1000, body


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/trajsearch-bench-web"))
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=30, help="per query class")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from trajsearch.embed import load_embedder
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.web import WebConfig, WebServer, create_app
    from trajsearch.web.app import LOOPBACK_HOSTS

    args.workdir.mkdir(parents=True, exist_ok=True)
    build(args.workdir, args.rows)
    rng = random.Random(15)
    ts = TrajSearch.open(str(args.workdir / "milvus.db"), traces=str(args.workdir / "traces"),
                         embedder=load_embedder("all-MiniLM-L6-v2"))
    stats = ts.stats(tenant=TENANT)
    asked = queries(ts, args.queries, rng)
    key = new_key()
    app = create_app(ts, KeyRing.from_entries([key_entry(key, tenant=TENANT, role="read")]),
                     config=WebConfig(allowed_hosts=LOOPBACK_HOSTS))
    web = WebServer(app, "127.0.0.1:0").start()
    try:
        client = Browserless(web.url, key)
        client.get("/?q=warm+up")  # the model's and the index's one-off costs, untimed
        timings: dict[str, list[float]] = {}
        work = [(kind, q) for kind, qs in asked.items() if not kind.startswith("_") for q in qs]
        for phase in ("first", "again"):
            rng.shuffle(work)
            for kind, params in work:
                ms, body = client.get("/?" + urlencode(params))
                timings.setdefault(f"search: {kind} ({phase})", []).append(ms)
                if phase == "first" and kind == "exact line":
                    link = re.search(r'class="run-link" href="([^"]+)"|href="([^"]+)" class="run-link"', body)
                    if link:
                        asked.setdefault("_run_links", []).append(
                            {"path": (link.group(1) or link.group(2)).replace("&amp;", "&")})
        for item in asked.get("_run_links", []):
            timings.setdefault("run page at the matched step", []).append(client.get(item["path"])[0])
        for item in asked["_failed"]:
            timings.setdefault("compare page (failed run)", []).append(
                client.get("/compare/" + quote(item["id"], safe=""))[0])
    finally:
        web.stop()
        ts.close()
    for phase in ("first", "again"):
        timings[f"search: every query ({phase})"] = [ms for name, v in list(timings.items())
                                                     if name.startswith("search: ") and name.endswith(f"({phase})")
                                                     and "every query" not in name for ms in v]
    order = lambda name: (not name.startswith("search"), "every query" not in name, name.endswith("(again)"), name)  # noqa: E731
    rows = [(name, len(timings[name]), p50(timings[name]), p95(timings[name]), max(timings[name]))
            for name in sorted(timings, key=order)]
    if args.json:
        print(json.dumps({"rows": stats["rows"], "runs": stats["trajectories"],
                          "ms": {name: {"n": n, "p50": a, "p95": b, "max": c} for name, n, a, b, c in rows}}, indent=2))
        return 0
    print(f"\n{stats['rows']} rows, {stats['trajectories']} runs in tenant {TENANT}; {machine_note()}\n")
    print(table(["page", "n", "p50 ms", "p95 ms", "max ms"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
