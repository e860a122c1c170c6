"""Trajectories -> trace store + index rows, in batches, idempotently.

Order of writes per batch: traces first, then rows, so no row ever points at
a missing trace. Row ids are deterministic and each run carries a content
hash, so re-ingesting an unchanged run is skipped and a changed one replaces
its old rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..embed import Embedder
from ..model import Trajectory
from ..represent import Row, Summarizer, WindowConfig, content_hash, extractive_summary, represent, row_id
from ..store.filters import Filters
from ..store.index import TrajectoryIndex
from ..store.traces import TraceStore

if TYPE_CHECKING:
    from .read import Parsed


@dataclass
class Rejection:
    source: str
    position: str
    reason: str

    def __str__(self) -> str:
        return f"{self.source}:{self.position}: {self.reason}"


@dataclass
class IngestReport:
    """What an ingest did: ingested (new or changed), unchanged (skipped), rejected (with reasons)."""

    ingested: int = 0
    unchanged: int = 0
    rows: int = 0
    rejected: list[Rejection] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "rejected": len(self.rejected),
            "rows_written": self.rows,
            "rejections": [vars(r) for r in self.rejected],
        }


def _record(
    trajectory: Trajectory, row: Row, *, trace_uri: str, chash: str, vector: Any
) -> dict[str, Any]:
    return {
        "id": row_id(trajectory.tenant, trajectory.trajectory_id, row.level, row.step_index),
        "tenant": trajectory.tenant,
        "trajectory_id": trajectory.trajectory_id,
        "level": row.level,
        "step_index": row.step_index,
        "step_end": row.step_end,
        "task_id": trajectory.task_id or "",
        "task_family": trajectory.task_family or "",
        "policy_version": trajectory.policy_version or "",
        "env_version": trajectory.env_version or "",
        "tool_versions": trajectory.tool_versions,
        "tools": (trajectory.tools_available or trajectory.tools_used)[:64],
        "outcome": trajectory.outcome.value,
        "reward": trajectory.reward,
        "quality_score": trajectory.quality_score,
        "created_at": int(trajectory.created_at.timestamp()),
        "text": row.text,
        "steps": row.steps,
        "trace_uri": trace_uri,
        "content_hash": chash,
        "embedding": vector,
    }


class Indexer:
    """Writes trajectories into the index and the trace store."""

    def __init__(
        self,
        index: TrajectoryIndex,
        embedder: Embedder,
        traces: TraceStore,
        *,
        summarizer: Summarizer | Callable[[Trajectory], str] = extractive_summary,
        batch_size: int = 32,
        embed_batch_size: int = 64,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.traces = traces
        self.summarizer = summarizer
        self.window = WindowConfig(index.settings.window, index.settings.stride)
        self.batch_size = batch_size
        self.embed_batch_size = embed_batch_size

    def add(
        self,
        items: Iterable[Trajectory | Parsed],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Index trajectories (or parsed dump records, whose errors become rejections)."""
        report = IngestReport()
        accepted = (t for t in (self._accept(item, report) for item in items) if t is not None)
        for batch in batched(accepted, self.batch_size):
            self._write(batch, report)
            if on_progress:
                on_progress(len(batch))
        self.index.flush()
        return report

    @staticmethod
    def _accept(item: Trajectory | Parsed, report: IngestReport) -> Trajectory | None:
        if isinstance(item, Trajectory):
            return item
        if item.error is not None:
            report.rejected.append(Rejection(item.source, item.position, item.error))
            return None
        return item.trajectory

    def _write(self, batch: list[Trajectory], report: IngestReport) -> None:
        batch = list({(t.tenant, t.trajectory_id): t for t in batch}.values())  # last one wins
        hashes = {(t.tenant, t.trajectory_id): content_hash(t, self.window) for t in batch}
        stored = self._stored_hashes(batch)
        todo = []
        for t in batch:
            key = (t.tenant, t.trajectory_id)
            if stored.get(key) == hashes[key]:
                report.unchanged += 1
                continue
            if key in stored:  # changed: its old rows may not all be overwritten (fewer steps)
                self.index.delete_trajectory(*key)
            todo.append(t)
        if not todo:
            return
        uris = {(t.tenant, t.trajectory_id): self.traces.put(t) for t in todo}
        pending = [(t, row) for t in todo for row in represent(t, window=self.window, summarizer=self.summarizer)]
        vectors = self.embedder.encode([row.text for _, row in pending], batch_size=self.embed_batch_size)
        records = [
            _record(
                t, row,
                trace_uri=uris[(t.tenant, t.trajectory_id)],
                chash=hashes[(t.tenant, t.trajectory_id)],
                vector=vector.tolist(),
            )
            for (t, row), vector in zip(pending, vectors)
        ]
        self.index.upsert(records)
        report.ingested += len(todo)
        report.rows += len(records)

    def _stored_hashes(self, batch: list[Trajectory]) -> dict[tuple[str, str], str]:
        """Content hashes of runs already indexed, read from their task rows by key."""
        found: dict[tuple[str, str], str] = {}
        for tenant in {t.tenant for t in batch}:
            ids = [row_id(tenant, t.trajectory_id, "task", -1) for t in batch if t.tenant == tenant]
            for row in self.index.get(ids, Filters(tenant=tenant), fields=["trajectory_id", "content_hash"]):
                found[(tenant, row["trajectory_id"])] = row["content_hash"]
        return found


def batched(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
