"""Per-input checkpoints and the dead-letter file: what makes an ingest safe to kill and rerun.

A checkpoint is one small JSON file per job (what is ingested where: store,
tenant, format options, shard). For every unit (a file, or the span files of
one format under an input) it records the unit's fingerprint and how far the
committed records reach: their count (``seq``, of which ``landed`` and ``rejected``)
and, for JSONL, the byte offset and line number after the last one (``cursor``), or ``done``. It is
updated only after a batch is durably written, and atomically (temp file,
fsync, rename), so after ``kill -9`` it never claims more than was written.
A rerun writes nothing of done units and resumes the others after their ``seq``
(batch.run_ingest parses what it skips, for the run ids: see ``batch._plan``),
redoing at most the batches written after the last save: rows are idempotent
(same ids, same content hash), so that costs time, never duplicates.

Rejected records go to a JSONL dead-letter file (``source``, ``position``,
``format``, ``reason``). Their lines are held until the checkpoint that covers
their batch is saved, then appended (one write) and synced just before it: a
job killed earlier has written none of the lines its rerun writes again, so
the file is only ever appended to. Several jobs may name one file (tenants,
``--restart``, the shards of ``--shard``): none drops the lines of another
(probe G, G3; it used to be truncated to the size this job's checkpoint
recorded, 0 for a new job). A kill between that sync and the checkpoint's
rename repeats those lines once, which loses nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..fsutil import atomic_write, own_private, private_dir

VERSION = 1


def job_id(identity: dict[str, Any]) -> str:
    """A short stable id of a job's identity (what a checkpoint belongs to)."""
    raw = json.dumps(identity, sort_keys=True, default=str).encode()
    return hashlib.blake2b(raw, digest_size=8).hexdigest()


@dataclass
class Checkpoint:
    """Progress of one job, unit by unit (see the module docstring)."""

    path: Path
    identity: dict[str, Any]
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    min_interval: float = 1.0
    #: A save waits at least this many times as long as the last one took: writing the checkpoint stays a tenth of
    #: an ingest's time however many units it holds (see :meth:`save`).
    cost_factor: float = 9.0
    _saved_at: float = 0.0
    _cost: float = 0.0
    _dirty: bool = False

    @classmethod
    def open(cls, path: Path, identity: dict[str, Any], *, resume: bool = True) -> Checkpoint:
        """The job's checkpoint (empty when absent, unreadable, of another job, or ``resume`` is off)."""
        if resume and path.exists():
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                data = {}
            if data.get("version") == VERSION and data.get("identity") == json.loads(json.dumps(identity, default=str)):
                return cls(path, identity, units=data.get("units") or {}, stats=data.get("stats") or {})
        return cls(path, identity)

    # -- reading -------------------------------------------------------------------------

    def resume_point(self, unit: str, fingerprint: str) -> tuple[bool, int, tuple[int, int] | None]:
        """(done, records to skip, cursor) for a unit; from the start if its content changed."""
        entry = self.units.get(unit)
        if not entry or entry.get("fingerprint") != fingerprint:
            self.reset(unit, fingerprint)
            return False, 0, None
        cursor = entry.get("cursor")
        return bool(entry.get("done")), int(entry.get("seq") or 0), tuple(cursor) if cursor else None

    # -- writing -------------------------------------------------------------------------

    def reset(self, unit: str, fingerprint: str) -> None:
        """Mark ``unit`` as to be read from its start (its content changed, or the ids of its runs may have)."""
        self.units[unit] = {"fingerprint": fingerprint, "seq": 0, "cursor": None, "done": False}

    def advance(self, unit: str, seq: int, cursor: tuple[int, int] | None, *, rejected: bool = False) -> None:
        """Record ``unit``'s record ``seq`` as committed, landed or ``rejected`` (counted in the unit's ``landed`` or
        ``rejected``: see :meth:`committed`)."""
        entry = self.units.setdefault(unit, {"fingerprint": None, "seq": 0, "cursor": None, "done": False})
        if seq + 1 > entry.get("seq", 0):
            entry["seq"] = seq + 1
            entry["cursor"] = list(cursor) if cursor else None
            what = "rejected" if rejected else "landed"
            entry[what] = entry.get(what, 0) + 1
        self._dirty = True

    def committed(self, unit: str) -> tuple[int, int]:
        """(landed, rejected): the records of ``unit`` committed so far, which a rerun does not write again. The exit
        status is the inputs': a rerun that skips a unit whose bad lines an earlier run rejected must still say so (it
        exited 0 where the same rerun over --server, reading everything again, exited 3)."""
        entry = self.units.get(unit) or {}
        return int(entry.get("landed") or 0), int(entry.get("rejected") or 0)

    def finish(self, unit: str) -> None:
        entry = self.units.setdefault(unit, {"fingerprint": None, "seq": 0, "cursor": None})
        entry["done"] = True
        entry["cursor"] = None
        self._dirty = True

    def save(self, *, force: bool = False, before: Callable[[], None] | None = None) -> None:
        """Write the checkpoint (at most once a ``min_interval``, and once a ``cost_factor`` times the last write's
        time, unless ``force``), calling ``before`` first when it does: what must be durable before the checkpoint
        covers it (the dead-letter lines).

        A checkpoint keeps every unit its job ever read (a store's inputs, day after day), and each save rewrites it
        whole: 100k inputs make 18 MB and about a second and a half a save, which at one save a second took most of
        an ingest's time (probe 48, L5). Spacing saves by their cost bounds that to a tenth; a kill then redoes a
        little more, which rows being idempotent makes cost time only."""
        now = time.monotonic()
        wait = max(self.min_interval, self.cost_factor * self._cost)
        if not (force or (self._dirty and now - self._saved_at >= wait)):
            return
        if before is not None:
            before()
        data = {"version": VERSION, "identity": self.identity, "units": self.units,
                "stats": self.stats, "saved_at": time.time()}
        payload = json.dumps(data, default=str, separators=(",", ":")).encode()
        private_dir(self.path.parent)
        atomic_write(self.path, payload)
        self._saved_at = time.monotonic()
        self._cost = self._saved_at - now
        self._dirty = False


class DeadLetter:
    """Append-only JSONL of rejected records, each line appended once the checkpoint covering it is saved (see
    the module docstring): never truncated, whichever jobs share the file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        private_dir(path.parent)
        # 0600 as the checkpoint beside it: a line quotes the rejected value, a tenant's text (probe I, I3)
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        own_private(self._fd, 0o600)  # as a file an older version made 0644 (O_CREAT's mode is a new file's)
        self._pending: list[bytes] = []
        self.count = 0

    def write(self, source: str, position: str, fmt: str | None, reason: str) -> None:
        line = json.dumps({"source": source, "position": position, "format": fmt, "reason": reason}, ensure_ascii=False)
        self._pending.append(line.encode() + b"\n")
        self.count += 1

    def sync(self) -> None:
        """Append the held lines, whole lines in one write (another job appending meanwhile cannot split one), and
        make them durable: call it just before saving the checkpoint that covers them."""
        data = b"".join(self._pending)
        while data:
            data = data[os.write(self._fd, data):]
        os.fsync(self._fd)
        self._pending.clear()

    def close(self) -> None:
        """Close the file, dropping the lines not synced: no saved checkpoint covers their batches, which a rerun
        redoes (with their rejections)."""
        self._pending.clear()
        os.close(self._fd)
