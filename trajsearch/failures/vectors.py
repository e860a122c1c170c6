"""Meaning vectors: embedded once per process, and on a thread while the rows are still read.

Embedding the distinct meanings is the analysis' largest cost after reading the
rows; :data:`_CACHE` keeps them for the process (a server asked again embeds only
what is new) and :class:`_Prefetch` overlaps embedding with reading.
:func:`~trajsearch.failures.analysis.failure_modes` looks ``_CACHE`` up here at call
time, so a benchmark can swap in an empty one (``scripts/failure_modes.py``).
"""

from __future__ import annotations

import queue
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import numpy as np


class _VectorCache:
    """Meaning-text vectors by (embedder, text): a server asked again embeds only what is new."""

    def __init__(self, size: int = 20_000) -> None:
        self.size = size
        self._items: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, embed: Any, name: str, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (name, t) not in self._items]
        fresh = embed(missing) if missing else []
        with self._lock:
            for text, vector in zip(missing, fresh):
                self._items[(name, text)] = np.asarray(vector, dtype=np.float32)
            out = []
            for text in texts:
                vector = self._items.get((name, text))
                if vector is None:  # evicted by a concurrent call
                    vector = np.asarray(embed([text])[0], dtype=np.float32)
                else:
                    self._items.move_to_end((name, text))
                out.append(vector)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return np.stack(out) if out else np.zeros((0, 1), dtype=np.float32)


_CACHE = _VectorCache()


class _Prefetch:
    """Embeds meaning texts on a thread while the rows are still being read.

    Reading waits on Milvus (a scan per page) and embedding on the model; on a
    2-core machine the two overlap instead of adding up. Whatever this misses (an
    error, the ``cap``) the caller embeds afterwards through the same cache.
    """

    def __init__(self, ts: Any, cap: int) -> None:
        self._embed, self._name = ts.embed, _embedder_name(ts)
        self._queue: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._seen: set[str] = set()
        self._cap = cap
        self._thread = threading.Thread(target=self._run, name="failure-modes-embed", daemon=True)
        self._thread.start()

    def add(self, text: str) -> None:
        if text not in self._seen and len(self._seen) < self._cap:
            self._seen.add(text)
            self._queue.put(text)

    def _run(self) -> None:
        done = False
        while not done:
            item = self._queue.get()
            if item is None:
                return
            batch = [item]
            while len(batch) < 64:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    done = True
                    break
                batch.append(item)
            try:
                _CACHE.vectors(self._embed, self._name, batch)
            except Exception:  # noqa: BLE001 - the caller embeds what is missing and sees the error itself
                return

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join()


def _embedder_name(ts: Any) -> str:
    """What cached vectors belong to: the store's embedder (its name and dimension)."""
    embedder = getattr(ts, "embedder", None)
    return f"{getattr(embedder, 'name', '') or type(ts).__name__}/{getattr(embedder, 'dim', '')}"
