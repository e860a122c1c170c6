"""Per-input checkpoints and the dead-letter file: what makes an ingest safe to kill and rerun.

A checkpoint is one small JSON file per job (what is ingested where: store,
tenant, format options, shard). For every unit (a file, or the span files of
one format under an input) it records the unit's fingerprint and how far the
committed records reach: their count (``seq``) and, for JSONL, the byte
offset and line number after the last one (``cursor``), or ``done``. It is
updated only after a batch is durably written, and atomically (temp file,
fsync, rename), so after ``kill -9`` it never claims more than was written.
A rerun writes nothing of done units and resumes the others after their ``seq``
(batch.run_ingest parses what it skips, for the run ids: see ``batch._plan``),
redoing at most the batches written after the last save: rows are idempotent
(same ids, same content hash), so that costs time, never duplicates.

Rejected records go to a JSONL dead-letter file (``source``, ``position``,
``format``, ``reason``), written before the checkpoint that covers them; the
checkpoint also records the dead-letter file's size, and a resumed run first
truncates the file back to it, so each rejection appears exactly once.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..fsutil import atomic_write, private_dir

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
    dead_letter_bytes: int = 0
    stats: dict[str, Any] = field(default_factory=dict)
    min_interval: float = 1.0
    _saved_at: float = 0.0
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
                return cls(path, identity, units=data.get("units") or {},
                           dead_letter_bytes=int(data.get("dead_letter_bytes") or 0), stats=data.get("stats") or {})
        return cls(path, identity)

    # -- reading -------------------------------------------------------------------------

    def resume_point(self, unit: str, fingerprint: str) -> tuple[bool, int, tuple[int, int] | None]:
        """(done, records to skip, cursor) for a unit; from the start if its content changed."""
        entry = self.units.get(unit)
        if not entry or entry.get("fingerprint") != fingerprint:
            self.units[unit] = {"fingerprint": fingerprint, "seq": 0, "cursor": None, "done": False}
            return False, 0, None
        cursor = entry.get("cursor")
        return bool(entry.get("done")), int(entry.get("seq") or 0), tuple(cursor) if cursor else None

    # -- writing -------------------------------------------------------------------------

    def advance(self, unit: str, seq: int, cursor: tuple[int, int] | None) -> None:
        entry = self.units.setdefault(unit, {"fingerprint": None, "seq": 0, "cursor": None, "done": False})
        if seq + 1 > entry.get("seq", 0):
            entry["seq"] = seq + 1
            entry["cursor"] = list(cursor) if cursor else None
        self._dirty = True

    def finish(self, unit: str) -> None:
        entry = self.units.setdefault(unit, {"fingerprint": None, "seq": 0, "cursor": None})
        entry["done"] = True
        entry["cursor"] = None
        self._dirty = True

    def save(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not (force or (self._dirty and now - self._saved_at >= self.min_interval)):
            return
        data = {"version": VERSION, "identity": self.identity, "units": self.units,
                "dead_letter_bytes": self.dead_letter_bytes, "stats": self.stats, "saved_at": time.time()}
        payload = json.dumps(data, default=str, separators=(",", ":")).encode()
        private_dir(self.path.parent)
        atomic_write(self.path, payload)
        self._saved_at = now
        self._dirty = False


class DeadLetter:
    """Append-only JSONL of rejected records, kept in step with a :class:`Checkpoint`."""

    def __init__(self, path: Path, checkpoint: Checkpoint) -> None:
        self.path = path
        self.checkpoint = checkpoint
        private_dir(path.parent)
        if path.exists() and path.stat().st_size > checkpoint.dead_letter_bytes:
            # lines written after the last checkpoint save belong to batches that will be redone
            with open(path, "r+b") as fh:
                fh.truncate(checkpoint.dead_letter_bytes)
        elif not path.exists() or path.stat().st_size < checkpoint.dead_letter_bytes:
            checkpoint.dead_letter_bytes = path.stat().st_size if path.exists() else 0
        # 0600 as the checkpoint beside it: a line quotes the rejected value, a tenant's text (probe I, I3)
        self._fh: IO[bytes] = os.fdopen(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "ab")
        self.count = 0

    def write(self, source: str, position: str, fmt: str | None, reason: str) -> None:
        line = json.dumps({"source": source, "position": position, "format": fmt, "reason": reason}, ensure_ascii=False)
        self._fh.write(line.encode() + b"\n")
        self.count += 1

    def sync(self) -> None:
        """Make the lines durable and record the file's size in the checkpoint (before it is saved)."""
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self.checkpoint.dead_letter_bytes = self._fh.tell()

    def close(self) -> None:
        self.sync()
        self._fh.close()
