"""Export paging over a server, before and after page tokens, side by side in one run.

``export --server`` read its runs 100 at a time by sending every run already read as an exclusion
(``exclude_trajectory_ids``): the request grew with the export, and each page filtered the tenant by all of them.
It now sends the previous page's ``next_page_token`` (``trajsearch.paging``). A server still takes exclusions (an
older client's export), so both ways are timed against the same server, alternating:

- **exclusions**: a Search of k=100 excluding the first ``n`` runs of the ranking (the page an export asked for
  after ``n`` runs);
- **token, kept**: the Search of the page after ``n`` runs by its page token, the ranking kept from earlier pages
  (an export's case);
- **token, dropped**: the same page with the server's kept rankings dropped first (a token outliving its ranking:
  the server ranks again to its depth).

Request size is the serialised SearchRequest; time is the call's wall time through the client (median of
``--repeat``). Then one whole export of ``--runs`` runs each way through ``export_runs`` (exclusions: the
previous client's loop, timed once, ``--whole-before`` only: it takes minutes at 10k).

Store: ``--runs`` small runs (a task and one step each, ``tests/conftest.make_run``'s shape) in tenant ``acme``,
embedded with the *hashing test embedder* (paging costs do not depend on what vectors mean), kept in ``--work``.

    python scripts/bench_export_pages.py                  # 10,200 runs, pages after 1,000 and 9,900 runs

Figures of 2026-12-06 (shared 2-core machine, other sessions' tests running; 10,200 runs; median of 5, ms):

| page        | exclusions: bytes, ms | token, kept: bytes, ms | token, dropped: ms | same runs |
|-------------|-----------------------|------------------------|--------------------|-----------|
| after 1,000 | 11,046, 518           | 117, 12                | 1,554              | yes       |
| after 9,900 | 108,946, 2,064        | 117, 22                | 7,227              | yes       |

Whole ranking of 10,000 runs, pages of 100: exclusions 134.3 s, tokens 4.8 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import table  # noqa: E402  (sets the model environment first)

QUERY = "fix the failing refund test"
WORDS = "refund payments ledger cancel reservation flight bug test parser index cache retry".split()


def build(ts, runs: int) -> None:
    """``runs`` small distinct runs in tenant acme, unless the store holds them already."""
    from trajsearch.model import Step, Trajectory

    if ts.stats(tenant="acme").get("trajectories", 0) >= runs:
        return
    made = [Trajectory(trajectory_id=f"run-{i:05d}", tenant="acme", outcome="success",
                       task=f"Fix the {WORDS[i % 12]} {WORDS[(i // 12) % 12]} issue number {i}",
                       created_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
                       steps=[Step(index=0, action="bash", arguments={"command": f"pytest tests/test_{i}.py"},
                                   observation=f"{i % 7} failed")]) for i in range(runs)]
    for start in range(0, runs, 1000):
        ts.add(made[start:start + 1000])


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_200)
    parser.add_argument("--after", type=int, nargs="+", default=[1_000, 9_900])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/tmp/trajsearch-bench-export"))
    parser.add_argument("--whole-before", action="store_true", help="also time a whole export by exclusions")
    args = parser.parse_args()

    from trajsearch.embed import HashingEmbedder
    from trajsearch.export import export_runs
    from trajsearch.paging import page_token, question_digest
    from trajsearch.search import TrajSearch
    from trajsearch.service.auth import KeyRing, key_entry, new_key
    from trajsearch.service.client import Client
    from trajsearch.service.protos import pb2
    from trajsearch.store.filters import Filters

    args.work.mkdir(parents=True, exist_ok=True)
    ts = TrajSearch.open(str(args.work / "m.db"), traces=str(args.work / "traces"), embedder=HashingEmbedder())
    build(ts, args.runs)
    ranking = [h.trajectory_id for h in ts._ranked(QUERY, Filters(tenant="acme", outcomes=("success",)),
                                                   max(args.after) + 100, 1, "auto")]
    key = new_key()
    from trajsearch.service.server import ServiceServer

    rows = []
    with ServiceServer(ts, KeyRing.from_entries([key_entry(key, tenant="acme", role="read")]),
                       address="127.0.0.1:0") as srv, Client(srv.address, api_key=key, timeout=600) as client:
        filters = Filters(tenant="acme", outcomes=("success",))
        digest = question_digest(text=QUERY, mode="auto", filters=sorted(vars(filters).items()))
        for n in args.after:
            excluded = ranking[:n]
            token = page_token(n, digest)
            sizes = {
                "exclusions": pb2.SearchRequest(text=QUERY, outcomes=["success"], k=100, mode="auto",
                                                exclude_trajectory_ids=excluded).ByteSize(),
                "token": pb2.SearchRequest(text=QUERY, outcomes=["success"], k=100, mode="auto",
                                           page_token=token).ByteSize(),
            }
            times: dict[str, list[float]] = {"exclusions": [], "token, kept": [], "token, dropped": []}
            pages: dict[str, list[str]] = {}
            for _ in range(args.repeat):
                times["exclusions"].append(timed(lambda: pages.__setitem__("exclusions", [
                    h.trajectory_id for h in client.search(QUERY, outcome="success", k=100,
                                                           exclude_trajectory_ids=excluded)])))
                ts._rankings._kept.clear()
                times["token, dropped"].append(timed(lambda: pages.__setitem__("token", [
                    h.trajectory_id for h in client.search_page(QUERY, outcome="success", k=100,
                                                                page_token=token).hits])))
                times["token, kept"].append(timed(lambda: client.search_page(QUERY, outcome="success", k=100,
                                                                             page_token=token)))
            same = pages["exclusions"] == pages["token"] == ranking[n:n + 100]
            for way, values in times.items():
                size = sizes["exclusions" if way == "exclusions" else "token"]
                rows.append([f"after {n:,}", way, f"{size:,}", f"{statistics.median(values) * 1000:.0f}",
                             "yes" if same else "NO"])
        whole = []
        start = time.perf_counter()
        export = export_runs(client, QUERY, tenant=None, k=args.runs if args.runs <= 10_000 else 10_000,
                             fmt="jsonl")
        whole.append(["token", export.found, f"{time.perf_counter() - start:.1f}"])
        if args.whole_before:
            start, hits = time.perf_counter(), []
            while len(hits) < export.found:
                page = client.search(QUERY, outcome="success", k=min(100, export.found - len(hits)),
                                     exclude_trajectory_ids=[h.trajectory_id for h in hits])
                hits += page
                if not page:
                    break
            whole.append(["exclusions", len(hits), f"{time.perf_counter() - start:.1f}"])
    ts.close()
    print(f"runs in tenant: {args.runs:,}; pages of 100; median of {args.repeat}")
    print(table(["page", "how", "request bytes", "ms", "same runs"], rows))
    print()
    print(table(["whole export (ranking only)", "runs", "s"], whole))


if __name__ == "__main__":
    main()
