"""The streaming export: rank runs as ``search`` does, read their traces, yield and write records.

Records are produced lazily (:class:`Export` fills in its counts as it goes), so a
large export holds one run at a time and a progress bar can use ``found``.

Provenance: every record carries ``{"trajectory_id", "trace_uri", "similarity",
"rank", "outcome", "env_version", "query"}``: under ``metadata.trajsearch`` in
``jsonl`` (a trajectory's own metadata, so the line stays a valid trajectory) and
under a top-level ``metadata`` key in the chat formats. OpenAI's upload accepts only
``messages``, ``tools``, ``parallel_tool_calls`` (and the deprecated ``functions``);
``provenance="sidecar"`` writes the chat records without it and the provenance, line
for line, to a second stream (``--out FILE`` -> ``FILE.provenance.jsonl``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from .. import jsontext
from ..bounds import MAX_EXPORT_RUNS
from ..model import Trajectory
from .compress import _variants
from .formats import FORMATS, record_text, to_record


PROVENANCE = ("inline", "sidecar")
MAX_RUNS = MAX_EXPORT_RUNS
#: Runs asked for per search call (a server's default ``max_k`` is 100).
PAGE = 100


@dataclass
class ExportRecord:
    """One exported run: the record as written, and where it came from."""

    record: dict[str, Any]
    provenance: dict[str, Any]
    tokens: int | None = None  # counted when ``max_tokens`` was given
    compression: str = "none"  # none | decision_points | full | half


@dataclass
class Export:
    """A streaming export: iterate it for records; counts fill in as it goes.

    ``found`` is known once the search has run (before the first record), so a
    progress bar can use it as its total.
    """

    records: Iterator[ExportRecord]
    found: int = 0
    written: int = 0
    too_long: int = 0  # left out: over max_tokens at every compression level
    missing_trace: int = 0  # left out: the trace could not be read
    skipped: list[str] = field(default_factory=list)
    stopped: str = ""  # why fewer than k runs were asked for although more may match (a server's bounds)

    def __iter__(self) -> Iterator[ExportRecord]:
        return self.records


def export_runs(
    ts: Any,
    query: str,
    *,
    tenant: str | None,
    fmt: str = "openai-chat",
    k: int = 100,
    outcome: str | Sequence[str] = "success",
    levels: str | Sequence[str] = (),
    env_version: str | Sequence[str] = (),
    policy_version: str | Sequence[str] = (),
    task_family: str | Sequence[str] = (),
    tools: str | Sequence[str] = (),
    mode: str = "auto",
    max_tokens: int | None = None,
    system: str | None = None,
) -> Export:
    """The ``k`` runs ranked best for ``query`` inside the filters, as a stream of ``fmt`` records.

    ``ts`` is the façade or a service client (only ``search`` and ``get_trace`` are
    used). Runs are asked for ``PAGE`` at a time, excluding the runs already found,
    so an export can exceed one search's ``k``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_RUNS:
        raise ValueError(f"k must be a whole number from 1 to {MAX_RUNS}, got {k!r}")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                   or max_tokens < 16):
        raise ValueError(f"max_tokens must be a whole number >= 16, got {max_tokens!r}")
    filters = dict(levels=levels, outcome=outcome, env_version=env_version, policy_version=policy_version,
                   task_family=task_family, tools=tools, mode=mode)
    hits: list[Any] = []
    stopped = ""
    while len(hits) < k:
        want = min(PAGE, k - len(hits))
        try:
            page = ts.search(query, tenant=tenant, k=want, exclude_trajectory_ids=[h.trajectory_id for h in hits],
                             **filters)
        except ValueError as exc:
            if not hits:
                raise
            # a server bounds how many runs a request may exclude (its max_values): the first pages stand
            stopped = f"stopped after {len(hits)} runs: the next page was refused ({exc})"
            break
        hits.extend(page)
        if len(page) < want:
            break
    export = Export(records=iter(()), found=len(hits), stopped=stopped)
    export.records = _records(ts, tenant, hits, query, fmt, max_tokens, system, export)
    return export


def _records(ts: Any, tenant: str | None, hits: list[Any], query: str, fmt: str, max_tokens: int | None,
             system: str | None, export: Export) -> Iterator[ExportRecord]:
    counter = None
    if max_tokens is not None:
        from ..runtime.format import default_counter

        counter = default_counter()
    for rank, hit in enumerate(hits, 1):
        try:
            run = ts.get_trace(hit.trace_uri, tenant=tenant)
        except (LookupError, PermissionError, ValueError, OSError, ConnectionError) as exc:
            export.missing_trace += 1
            export.skipped.append(f"{hit.trajectory_id}: trace not readable ({type(exc).__name__})")
            continue
        provenance = {
            "trajectory_id": hit.trajectory_id, "trace_uri": hit.trace_uri,
            "similarity": round(float(hit.similarity if hit.similarity is not None else hit.score), 6),
            "rank": rank, "outcome": hit.outcome, "env_version": hit.env_version or None, "query": query,
        }
        made = _fit(run, fmt, system, provenance, max_tokens, counter)
        if made is None:
            export.too_long += 1
            export.skipped.append(f"{hit.trajectory_id}: over {max_tokens} tokens at every compression level")
            continue
        export.written += 1
        yield made


def _fit(run: Trajectory, fmt: str, system: str | None, provenance: dict[str, Any], max_tokens: int | None,
         counter: Any) -> ExportRecord | None:
    """The record at the richest compression level within ``max_tokens`` (None: none fits)."""
    for level, variant in _variants(run, max_tokens is not None):
        if run.steps and not variant.steps:
            continue  # a run cut down to its task teaches nothing (the runtime's "bare" level)
        record = to_record(variant, fmt, system=system, provenance=provenance)
        if counter is None:
            return ExportRecord(record, provenance, compression=level)
        tokens = counter.count(record_text(record, fmt))
        if tokens <= max_tokens:
            return ExportRecord(record, provenance, tokens=tokens, compression=level)
    return None


def write(export: Export, out: Any, *, fmt: str, provenance: str = "inline", sidecar: Any = None,
          on_record: Callable[[ExportRecord], None] | None = None) -> int:
    """Write ``export``'s records as JSON lines to ``out``; with ``provenance="sidecar"`` the
    provenance goes to ``sidecar`` line for line (chat formats). Returns the records written."""
    if provenance not in PROVENANCE:
        raise ValueError(f"provenance must be one of {list(PROVENANCE)}, got {provenance!r}")
    if provenance == "sidecar" and (fmt == "jsonl" or sidecar is None):
        raise ValueError("provenance='sidecar' applies to the chat formats and needs a sidecar stream")
    n = 0
    for item in export:
        record = item.record
        if provenance == "sidecar":
            record = {k: v for k, v in record.items() if k != "metadata"}
            sidecar.write(jsontext.dumps(item.provenance) + "\n")
        out.write(jsontext.dumps(record) + "\n")  # printed on a terminal too (stdout by default)
        n += 1
        if on_record is not None:
            on_record(item)
    return n
