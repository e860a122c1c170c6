"""A program ingesting a dump through the Python API (``TrajSearch.add``), for tests that interrupt it from a
``signal_hooks`` script: it prints, as JSON, how many runs ``on_progress`` said were committed and, when not
interrupted, how many the report says were ingested. Ctrl-C is Python's own: a library installs no handler."""

from __future__ import annotations

import json
import sys

from trajsearch.embed import HashingEmbedder
from trajsearch.ingest.read import read_inputs
from trajsearch.search import TrajSearch


def main(db: str, traces: str, dump: str) -> int:
    committed = 0

    def progress(n: int) -> None:
        nonlocal committed
        committed += n

    with TrajSearch.open(db, traces=traces, embedder=HashingEmbedder()) as ts:
        try:
            report = ts.add(read_inputs([dump], tenant="acme"), on_progress=progress)
        except KeyboardInterrupt:
            print(json.dumps({"interrupted": True, "committed": committed}), flush=True)
            return 130
    print(json.dumps({"interrupted": False, "committed": committed, "ingested": report.ingested}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
