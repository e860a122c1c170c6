"""Model ids and tools of failed runs, read from their traces: index rows carry no model id.

Reading traces is slow (a store round trip each), so it is done in parallel, in the
caller's context (a server's per-call deadline reaches the reads), and remembered
per (tenant, trace) for the process.
"""

from __future__ import annotations

import contextvars
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from .clustering import ModeConfig
    from .rows import _Failure


_RUN_CACHE: OrderedDict[tuple[str, str], tuple[str, tuple[str, ...]]] = OrderedDict()
_RUN_LOCK = threading.Lock()


def _runs(ts: Any, tenant: str, failures: Iterable[_Failure], config: ModeConfig
          ) -> dict[str, tuple[str, tuple[str, ...]] | None]:
    """trace_uri -> (model id, tools used) read from the traces, in parallel; None when unreadable.

    Index rows carry no model id, so the trace is the only source. Answers are kept per
    (tenant, trace_uri) for the process (a run re-ingested with another model keeps its
    old answer until the process restarts: the LRU holds 100k).
    """
    todo, out = [], {}
    for f in failures:
        if not f.trace_uri or f.trace_uri in out:
            continue
        with _RUN_LOCK:
            known = _RUN_CACHE.get((tenant, f.trace_uri))
        out[f.trace_uri] = known
        if known is None:
            todo.append(f.trace_uri)

    def read(uri: str) -> tuple[str, tuple[str, tuple[str, ...]] | None, bool]:
        try:
            run = ts.get_trace(uri, tenant=tenant)
            return uri, (run.model_id or "", tuple(run.tools_used)), True
        except KeyError:  # no trace there (TraceNotFoundError): unknown for good
            return uri, None, True
        except Exception:  # noqa: BLE001 - unreadable now (a slow or busy store): unknown this time
            return uri, None, False

    if todo:
        with ThreadPoolExecutor(max_workers=max(1, min(config.trace_workers, len(todo)))) as pool:
            # each read in a copy of this context: a server's per-call deadline reaches the trace reads
            futures = [pool.submit(contextvars.copy_context().run, read, uri) for uri in todo]
            for future in futures:
                uri, info, final = future.result()
                out[uri] = info
                if final and info is not None:
                    with _RUN_LOCK:
                        _RUN_CACHE[(tenant, uri)] = info
                        while len(_RUN_CACHE) > 100_000:
                            _RUN_CACHE.popitem(last=False)
    return out
