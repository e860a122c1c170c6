"""One ingest worker process: ``python -m trajsearch.ingest.worker '<spec JSON>'``.

:func:`~trajsearch.ingest.batch.run_workers` starts these; the spec is
``{"job": IngestJob JSON, "uri": Milvus URI, "traces": trace store or null,
"write_lock": a lock file the workers' index writes take turns on, or null}``.
The worker opens the store, runs its shard of the job and prints the result
as JSON on stdout (an ``"error"`` key when a batch failed), with the units its
checkpoint had done (``skipped_keys``) and the warnings trajsearch logged in it
(``warnings``: what the walk passed over, what an adapter found cut), which the
parent says once for all workers (see ``batch.relay_warnings``): its stderr is a
log file nobody reads. Starting workers through this entry point, not the CLI,
keeps the library free of the CLI's flag names.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
from types import FrameType
from typing import Any

from .batch import IngestJob, run_ingest
from .interrupts import raise_when_out_of_locks
from .orphans import die_with_parent
from ..indexer import IngestError, disk_full


def _stop_after_the_batch_in_hand(signum: int, frame: FrameType | None) -> None:
    """The first SIGINT or SIGTERM ends the worker as Ctrl-C ends a single-process ingest: the batch being written
    is finished and the checkpoint saved. Later ones are ignored, so that the parent's SIGTERM after a terminal's
    Ctrl-C (which reaches the whole process group) cannot cut that batch short (probe G, G5: runs were left
    half-written). The parent waits for this; a kill of the parent still takes the worker along. A signal the
    ingest command ignores (SIGINT, for a command a script started in the background: ``ingest ... &``) the worker
    inherits ignored and keeps ignoring: a Ctrl-C in that script's terminal stopped the workers alone, and the
    command that went on reported "read 0" and a failure ("worker 0 exited with 130")."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise_when_out_of_locks(frame, SystemExit(128 + signum))


class _Kept(logging.Handler):
    """The warnings trajsearch logs in this worker, as ``[logger, level, message]``, for its result."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.kept: list[list[Any]] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.kept.append([record.name, record.levelno, record.getMessage()])
        except Exception:  # noqa: BLE001 - a malformed log call must not fail the ingest
            self.handleError(record)


def _keep_warnings() -> _Kept:
    """Keep trajsearch's warnings for the result, and still write them to stderr (the worker's log file)."""
    kept, echo = _Kept(), logging.StreamHandler(sys.stderr)
    echo.setLevel(logging.WARNING)
    root = logging.getLogger("trajsearch")
    root.addHandler(kept)
    root.addHandler(echo)
    return kept


def main(argv: list[str]) -> int:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # ignored by the ingest command too: it goes on, so do we
            signal.signal(sig, _stop_after_the_batch_in_hand)
    spec = json.loads(argv[1])
    if spec.get("parent_pid"):
        die_with_parent(int(spec["parent_pid"]), signal.SIGKILL)  # a dead ingest command takes its workers along
    job = IngestJob.from_json(spec["job"])
    kept = _keep_warnings()
    from ..search import TrajSearch

    committed = [0]  # records committed, which the parent's line on a full disk counts

    def count(n: int) -> None:
        committed[0] += n

    try:
        with TrajSearch.open(spec["uri"], traces=spec.get("traces")) as ts:
            try:
                done = run_ingest(ts, job, on_records=count, indexer_options={"write_lock": spec.get("write_lock")})
                result = {**done.to_dict(), "skipped_keys": done.skipped_keys,  # what run_workers counts inputs done by
                          "warnings": kept.kept, "committed": committed[0]}
            except IngestError as exc:
                result = _failed(exc, kept, committed[0])
    except Exception as exc:  # noqa: BLE001 - a full disk, whichever step met it (a flush, a checkpoint, the close)
        if not disk_full(exc):
            raise
        result = _failed(exc, kept, committed[0])
    sys.stdout.write(json.dumps(result, default=str) + "\n")
    return 1 if result.get("error") else 0


def _failed(exc: BaseException, kept: _Kept, committed: int) -> dict[str, Any]:
    """The result of a worker a batch failed in. A full disk is marked ``disk_full``, for the parent to say it as a
    single-process ingest does (probe 49, O1: "worker 0 exited with 1:" and pymilvus' traceback, or nothing when
    the worker's log was on the full disk too), and without the warnings that closing on a full disk logs (the
    lexical copy not saved): the one line says the disk is full."""
    if not disk_full(exc):
        return {"error": str(exc), "warnings": kept.kept, "committed": committed}
    return {"error": str(exc), "disk_full": True, "committed": committed,
            "warnings": [w for w in kept.kept if w[0] != "trajsearch.store.index"]}


if __name__ == "__main__":
    sys.exit(main(sys.argv))
