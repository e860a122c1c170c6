"""The Milvus collection: one code path for Milvus Lite (a local path) and a Milvus server URI.

One collection holds every row (task, summary, step window, failure) of every
tenant; ``tenant`` is the partition key, so a tenant filter prunes partitions.
The collection is the source of truth: anything derived from it (the
in-process lexical index) is rebuilt from it and updated through this class.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from pymilvus import DataType, MilvusClient

from .filters import Filters, quote

log = logging.getLogger(__name__)
# query_iterator warns on every call against milvus-lite ("failed to get mvccTs"): harmless there.
logging.getLogger("pymilvus").setLevel(logging.ERROR)

SCHEMA_VERSION = "1"
COLLECTION = "trajectories"

#: Requested index parameters. milvus-lite 3.x accepts HNSW/COSINE but applies its
#: own build defaults (it drops build params silently); a Milvus server honours them.
INDEX_PARAMS = {"index_type": "HNSW", "metric_type": "COSINE", "params": {"M": 16, "efConstruction": 200}}
SEARCH_PARAMS = {"metric_type": "COSINE", "params": {"ef": 128}}

MAX_TEXT = 16_384
#: Every field but the vector: what a hit carries back.
OUTPUT_FIELDS = [
    "id", "tenant", "trajectory_id", "level", "step_index", "step_end", "task_id", "task_family",
    "policy_version", "env_version", "tool_versions", "tools", "outcome", "reward", "quality_score",
    "created_at", "text", "steps", "trace_uri", "content_hash",
]
#: What the lexical index needs of a row: its text and every field a filter can name.
LEXICAL_FIELDS = [
    "id", "tenant", "text", "level", "outcome", "env_version", "policy_version", "task_family",
    "trajectory_id", "tools", "created_at",
]


class SchemaMismatchError(RuntimeError):
    """The collection on disk was made by another schema version or embedding model."""


@dataclass(frozen=True)
class IndexSettings:
    """What a collection is bound to for life: vectors and window keys depend on these."""

    embedder: str
    dim: int
    window: int
    stride: int


def is_server_uri(uri: str) -> bool:
    return uri.startswith(("http://", "https://", "tcp://", "grpc://"))


def _schema(dim: int):
    s = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    s.add_field("id", DataType.VARCHAR, is_primary=True, max_length=64)
    s.add_field("tenant", DataType.VARCHAR, max_length=64, is_partition_key=True)
    s.add_field("trajectory_id", DataType.VARCHAR, max_length=200)
    s.add_field("level", DataType.VARCHAR, max_length=16)
    s.add_field("step_index", DataType.INT64)
    s.add_field("step_end", DataType.INT64)
    s.add_field("task_id", DataType.VARCHAR, max_length=200)
    s.add_field("task_family", DataType.VARCHAR, max_length=200)
    s.add_field("policy_version", DataType.VARCHAR, max_length=100)
    s.add_field("env_version", DataType.VARCHAR, max_length=100)
    s.add_field("tool_versions", DataType.JSON)
    s.add_field("tools", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=64, max_length=200)
    s.add_field("outcome", DataType.VARCHAR, max_length=16)
    s.add_field("reward", DataType.FLOAT, nullable=True)
    s.add_field("quality_score", DataType.FLOAT, nullable=True)
    s.add_field("created_at", DataType.INT64)
    s.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT)
    s.add_field("steps", DataType.JSON)
    s.add_field("trace_uri", DataType.VARCHAR, max_length=1024)
    s.add_field("content_hash", DataType.VARCHAR, max_length=64)
    s.add_field("embedding", DataType.FLOAT_VECTOR, dim=dim)
    return s


class TrajectoryIndex:
    """Create/open the collection, write rows, and read them back by vector or by key."""

    def __init__(self, uri: str, settings: IndexSettings, *, token: str = "", lexical: Any = None) -> None:
        if not is_server_uri(uri):
            Path(uri).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        self.uri = uri
        self.client = MilvusClient(uri=uri, token=token) if token else MilvusClient(uri=uri)
        self.settings = self._open_or_create(settings)
        self.lexical = lexical
        if lexical is not None:
            self.rebuild_lexical()

    # -- lifecycle ---------------------------------------------------------------------------

    def _open_or_create(self, wanted: IndexSettings) -> IndexSettings:
        if not self.client.has_collection(COLLECTION):
            index_params = self.client.prepare_index_params()
            index_params.add_index("embedding", **INDEX_PARAMS)
            self.client.create_collection(
                COLLECTION,
                schema=_schema(wanted.dim),
                index_params=index_params,
                properties={
                    "trajsearch.schema_version": SCHEMA_VERSION,
                    "trajsearch.embedder": wanted.embedder,
                    "trajsearch.dim": str(wanted.dim),
                    "trajsearch.window": str(wanted.window),
                    "trajsearch.stride": str(wanted.stride),
                },
            )
            log.info("created collection %s at %s", COLLECTION, self.uri)
        props = self.client.describe_collection(COLLECTION).get("properties", {})
        found_version = props.get("trajsearch.schema_version")
        if found_version != SCHEMA_VERSION:
            raise SchemaMismatchError(
                f"collection {COLLECTION!r} at {self.uri} has schema version {found_version!r}, "
                f"this trajsearch needs {SCHEMA_VERSION!r}: re-index into a new location"
            )
        found = IndexSettings(
            embedder=props["trajsearch.embedder"],
            dim=int(props["trajsearch.dim"]),
            window=int(props["trajsearch.window"]),
            stride=int(props["trajsearch.stride"]),
        )
        if (found.embedder, found.dim) != (wanted.embedder, wanted.dim):
            raise SchemaMismatchError(
                f"collection at {self.uri} holds {found.embedder} vectors (dim {found.dim}); "
                f"cannot query it with {wanted.embedder} (dim {wanted.dim})"
            )
        self.client.load_collection(COLLECTION)  # a reopened store must be loaded before search
        return found  # window/stride: the collection's own, whatever was asked

    def close(self) -> None:
        self.client.close()

    def flush(self) -> None:
        """Seal the memtable: unflushed rows make milvus-lite searches 10-30x slower."""
        self.client.flush(COLLECTION)

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        self.client.upsert(COLLECTION, data=list(rows))
        if self.lexical is not None:
            self.lexical.upsert(rows)

    def delete_trajectory(self, tenant: str, trajectory_id: str) -> None:
        filters = Filters(tenant=tenant, trajectory_ids=(trajectory_id,))
        self.client.delete(COLLECTION, filter=filters.to_expr())
        if self.lexical is not None:
            self.lexical.delete_where(tenant, trajectory_id)

    # -- reads -------------------------------------------------------------------------------

    def get(self, ids: Iterable[str], filters: Filters, fields: list[str] | None = None) -> list[dict]:
        """Rows by primary key, still inside ``filters`` (a key lookup, not a scan)."""
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        return list(
            self.client.query(COLLECTION, filter=filters.ids_expr(ids), output_fields=fields or OUTPUT_FIELDS)
        )

    def search(
        self,
        vector: Sequence[float],
        filters: Filters,
        *,
        limit: int,
        group_by_trajectory: bool = False,
        group_size: int = 1,
    ) -> list[dict]:
        """Dense nearest neighbours inside ``filters``; each hit has ``score`` (cosine) and its fields."""
        kwargs: dict[str, Any] = {}
        if group_by_trajectory:
            kwargs = {"group_by_field": "trajectory_id", "group_size": group_size}
        result = self.client.search(
            COLLECTION,
            data=[list(map(float, vector))],
            filter=filters.to_expr(),
            limit=limit,
            output_fields=OUTPUT_FIELDS,
            search_params=SEARCH_PARAMS,
            **kwargs,
        )
        return [dict(hit["entity"], id=hit["id"], score=float(hit["distance"])) for hit in result[0]]

    def iterate(self, fields: list[str], batch_size: int = 2_000, expr: str = "") -> Iterator[dict]:
        """Every row (optionally filtered), in batches; used to rebuild derived indexes."""
        iterator = self.client.query_iterator(COLLECTION, batch_size=batch_size, filter=expr, output_fields=fields)
        try:
            while batch := iterator.next():
                yield from batch
        finally:
            iterator.close()

    def rebuild_lexical(self) -> None:
        """Reload the lexical index from the collection (the source of truth)."""
        batch: list[dict] = []
        for row in self.iterate(LEXICAL_FIELDS):
            batch.append(row)
            if len(batch) >= 5_000:
                self.lexical.upsert(batch)
                batch = []
        self.lexical.upsert(batch)

    def count(self, tenant: str | None = None) -> int:
        expr = f"tenant == {quote(tenant)}" if tenant else ""
        result = self.client.query(COLLECTION, filter=expr, output_fields=["count(*)"])
        return int(result[0]["count(*)"])

    def count_by(self, field: str, tenant: str) -> dict[str, int]:
        """Row counts per value of a scalar field within one tenant (for stats)."""
        counts: dict[str, int] = {}
        for row in self.iterate([field], expr=f"tenant == {quote(tenant)}"):
            key = str(row[field])
            counts[key] = counts.get(key, 0) + 1
        return counts

    def tenants(self) -> list[str]:
        seen: set[str] = set()
        for row in self.iterate(["tenant"], expr='level == "task"'):
            seen.add(row["tenant"])
        return sorted(seen)
