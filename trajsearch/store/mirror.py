"""The embedded lexical leg: an in-process BM25 kept consistent with the Milvus collection.

Milvus is the source of truth. The BM25 index is saved beside the data
directory and trusted on reopen only if its *generation* equals the one the
collection records (a collection property):

1. the first write of a session stamps the collection with a fresh generation
   *before* writing, so a crash at any later point leaves the saved index stale;
2. every write is mirrored into the in-memory index;
3. ``save`` (on flush and close) writes the index, then stamps its generation
   into both the file's label and the collection.

A stale or missing file is never repaired in place: the index is rebuilt from
the collection on the first lexical query, once: about 65 s at 110k rows of
~2,000 chars on 2 cores (``scripts/bench_rebuild.py``), some 40% of it reading
the rows out of Milvus Lite.
Milvus Lite allows one process per data directory, so no writer can bypass this
*locally*. A store served by ``milvus-lite server`` (``ingest --workers``) has
writers in other processes: those are not the *owner* of the saved copy. They
stamp a fresh generation before their first write (so the saved copy reads as
stale) and never save; the next owner rebuilds once from the collection. Saving
an index that holds only one worker's rows would leave a trusted, incomplete
copy behind.

The copy lives beside the data directory, at the path the owner opened the
store by (``<data dir>.lexical.npz``, worked out at each open and recorded
nowhere): a store moved or copied keeps its copy beside itself. A process
reaching the store through a server URI is no owner and has no copy.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..fsutil import atomic_write
from .filters import Filters
from .lexical import LexicalIndex

log = logging.getLogger(__name__)

GENERATION = "trajsearch.lexical_generation"
SAVE_INTERVAL_S = 30.0  # flushes closer together than this skip the save (close always saves)


class LexicalMirror:
    """Owns the in-process BM25 of one embedded store: load, mirror, save, rebuild."""

    def __init__(
        self,
        path: Path | None,
        *,
        get_generation: Callable[[], str],
        set_generation: Callable[[str], None],
        rows: Callable[[], Iterator[Mapping[str, Any]]],
        is_empty: Callable[[], bool],
        owner: bool = True,
    ) -> None:
        self.path = path  # <data dir>.lexical.npz, with its label in <...>.json (None: nowhere to save)
        self.label = path.with_suffix(".json") if path else None
        self._get_generation, self._set_generation = get_generation, set_generation
        self._rows, self._is_empty = rows, is_empty
        self.owner = owner and path is not None  # may load and save the copy (see the module docstring)
        self._lock = threading.RLock()
        self._index: LexicalIndex | None = None
        self._dirty = False  # the collection has changed since the file was written
        self._stamped = False  # this session stamped a fresh generation already
        self._saved_at = 0.0

    # -- reads ------------------------------------------------------------------------------

    def search(self, query: str, filters: Filters, limit: int, widen: bool = True) -> list[tuple[str, float]]:
        return self._loaded().search(query, filters, limit, widen=widen)

    @property
    def loaded(self) -> bool:
        """Whether the index is in memory (a search needs no load or rebuild first)."""
        return self._index is not None

    def _loaded(self) -> LexicalIndex:
        with self._lock:
            if self._index is None:
                self._index = self._load() or self._rebuild()
            return self._index

    def _load(self) -> LexicalIndex | None:
        """The saved index, if its generation is the collection's; else None."""
        if not self.owner:
            return None
        try:
            saved = json.loads(self.label.read_text())["generation"]
        except (OSError, ValueError, KeyError):
            return None
        if not saved or saved != self._get_generation():
            log.info("lexical index at %s is stale: rebuilding from the collection", self.path)
            return None
        try:
            return LexicalIndex.load(self.path)
        except Exception as exc:  # a damaged file is a stale file
            log.warning("cannot load lexical index %s (%s): rebuilding", self.path, exc)
            return None

    def _rebuild(self) -> LexicalIndex:
        started = time.monotonic()
        index = LexicalIndex.from_rows(self._rows())  # counted in batches as they stream in
        log.info("rebuilt lexical index (%d rows) in %.1f s", len(index), time.monotonic() - started)
        self._dirty = True  # worth saving: the next open loads instead of rebuilding
        return index

    # -- writes -----------------------------------------------------------------------------

    def before_write(self) -> None:
        """Call before every collection write: stamps a new generation once per session."""
        with self._lock:
            if self._stamped:
                return
            if self._index is None and self.owner:
                # keep the fast path alive: load a valid file (or start empty) so writes mirror into it
                self._index = self._load() or (LexicalIndex() if self._is_empty() else None)
            self._set_generation(uuid.uuid4().hex)
            self._stamped = self._dirty = True

    def upsert(self, rows: Iterable[Mapping[str, Any]]) -> None:
        with self._lock:
            if self._index is not None:
                self._index.upsert(rows)

    def delete_where(self, tenant: str, trajectory_id: str) -> None:
        with self._lock:
            if self._index is not None:
                self._index.delete_where(tenant, trajectory_id)

    def delete(self, ids: Iterable[str]) -> None:
        with self._lock:
            if self._index is not None:
                self._index.delete(ids)

    def save(self, *, force: bool = False) -> None:
        """Write the index and stamp its generation (skipped when clean or saved, or tried, recently)."""
        with self._lock:
            if self._index is None or not self._dirty or not self.owner:
                return
            if not force and time.monotonic() - self._saved_at < SAVE_INTERVAL_S:
                return
            # a save that fails (a full disk) counts as one too: the next is tried at close or SAVE_INTERVAL_S on,
            # not at every flush, each of which would serialise the whole index again to fail the same way
            self._saved_at = time.monotonic()
            generation = uuid.uuid4().hex
            self._index.save(self.path)
            atomic_write(self.label, json.dumps({"generation": generation}).encode())
            self._set_generation(generation)
            self._dirty = self._stamped = False
