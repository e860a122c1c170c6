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

import re

from pymilvus import DataType, Function, FunctionType, MilvusClient

from .filters import Filters, quote
from .tokenize import tokenize

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
#: Every field a filter can name (what Filters.matches needs to see).
FILTER_FIELDS = [
    "tenant", "level", "outcome", "env_version", "policy_version", "task_family", "trajectory_id", "tools",
    "created_at",
]

#: The lexical leg. On a Milvus server: its native BM25 (a BM25 Function over a
#: pre-tokenised field), which scales with the cluster. On embedded Milvus Lite: an
#: in-process BM25 (store/lexical.py), because milvus-lite's BM25 costs 70-170 ms a
#: query after flush (seconds before) and computes IDF per segment.
LEXICAL_MEMORY, LEXICAL_MILVUS = "memory", "milvus"
MAX_LEXICAL = 65_000
_NON_WORD = re.compile(r"\W")

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


def lexical_text(text: str) -> str:
    """Our log/code tokens, each made one word for Milvus' ``standard`` analyzer.

    Milvus Lite and Milvus offer no custom tokenizer for BM25; joining our tokens
    with their non-word characters turned into ``_`` makes the analyzer keep them
    whole (``src/app/main.py`` -> ``src_app_main_py``), so both legs see the same terms.
    """
    return " ".join(_NON_WORD.sub("_", token) for token in tokenize(text))[:MAX_LEXICAL]


def _schema(dim: int, lexical: str):
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
    if lexical == LEXICAL_MILVUS:
        analyzer = {"tokenizer": "standard", "filter": ["lowercase"]}
        s.add_field("lexical", DataType.VARCHAR, max_length=MAX_LEXICAL + 1_000, enable_analyzer=True,
                    analyzer_params=analyzer)
        s.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        s.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                input_field_names=["lexical"], output_field_names=["sparse"]))
    return s


class TrajectoryIndex:
    """Create/open the collection, write rows, and read them back by vector or by key."""

    def __init__(self, uri: str, settings: IndexSettings, *, token: str = "") -> None:
        if not is_server_uri(uri):
            Path(uri).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
        self.uri = uri
        self.client = MilvusClient(uri=uri, token=token) if token else MilvusClient(uri=uri)
        self.lexical_backend = LEXICAL_MILVUS if is_server_uri(uri) else LEXICAL_MEMORY
        self.settings = self._open_or_create(settings)
        self._mirror = self._lexical_mirror() if self.lexical_backend == LEXICAL_MEMORY else None

    # -- lifecycle ---------------------------------------------------------------------------

    def _open_or_create(self, wanted: IndexSettings) -> IndexSettings:
        if not self.client.has_collection(COLLECTION):
            index_params = self.client.prepare_index_params()
            index_params.add_index("embedding", **INDEX_PARAMS)
            if self.lexical_backend == LEXICAL_MILVUS:
                index_params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
            self.client.create_collection(
                COLLECTION,
                schema=_schema(wanted.dim, self.lexical_backend),
                index_params=index_params,
                properties={
                    "trajsearch.schema_version": SCHEMA_VERSION,
                    "trajsearch.embedder": wanted.embedder,
                    "trajsearch.dim": str(wanted.dim),
                    "trajsearch.window": str(wanted.window),
                    "trajsearch.stride": str(wanted.stride),
                    "trajsearch.lexical": self.lexical_backend,
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
        self.lexical_backend = props.get("trajsearch.lexical", LEXICAL_MEMORY)
        self.client.load_collection(COLLECTION)  # a reopened store must be loaded before search
        return found  # window/stride: the collection's own, whatever was asked

    def _lexical_mirror(self) -> Any:
        from .mirror import GENERATION, LexicalMirror  # noqa: PLC0415 - only the embedded path needs it

        def get_generation() -> str:
            props = self.client.describe_collection(COLLECTION).get("properties", {})
            return props.get(GENERATION, "")

        def set_generation(value: str) -> None:
            self.client.alter_collection_properties(COLLECTION, properties={GENERATION: value})

        return LexicalMirror(
            Path(str(Path(self.uri).expanduser().resolve()) + ".lexical.npz"),
            get_generation=get_generation,
            set_generation=set_generation,
            rows=lambda: self.iterate(LEXICAL_FIELDS, batch_size=5_000),
            is_empty=lambda: self.count() == 0,
        )

    def close(self) -> None:
        """Save the lexical index and let go of the store.

        For an embedded store this also stops milvus-lite's in-process server, which
        otherwise holds the data-directory lock until the process exits, so another
        process can open the store after us.
        """
        if self._mirror is not None:
            self._mirror.save(force=True)
        self.client.close()
        if not is_server_uri(self.uri):
            from milvus_lite.server_manager import server_manager_instance  # noqa: PLC0415

            server_manager_instance.release_server(self.uri)

    def flush(self) -> None:
        """Seal the memtable: unflushed rows make milvus-lite searches 10-30x slower."""
        self.client.flush(COLLECTION)
        if self._mirror is not None:
            self._mirror.save()

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        if self._mirror is None:
            rows = [dict(row, lexical=lexical_text(row["text"])) for row in rows]
        else:
            self._mirror.before_write()
        self.client.upsert(COLLECTION, data=list(rows))
        if self._mirror is not None:
            self._mirror.upsert(rows)

    def delete_trajectory(self, tenant: str, trajectory_id: str) -> None:
        filters = Filters(tenant=tenant, trajectory_ids=(trajectory_id,))
        if self._mirror is not None:
            self._mirror.before_write()
        self.client.delete(COLLECTION, filter=filters.to_expr())
        if self._mirror is not None:
            self._mirror.delete_where(tenant, trajectory_id)

    # -- reads -------------------------------------------------------------------------------

    def get(self, ids: Iterable[str], filters: Filters, fields: list[str] | None = None) -> list[dict]:
        """Rows by primary key, still inside ``filters``.

        A primary-key ``get`` (about 0.6 ms per id at 110k rows) with the filters applied to the
        returned rows by :meth:`Filters.matches`; an ``id in [...] and tenant == ...``
        query expression makes milvus-lite scan instead (hundreds of ms at 100k).
        """
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        wanted = list(dict.fromkeys([*(fields or OUTPUT_FIELDS), *FILTER_FIELDS]))
        rows = self.client.get(COLLECTION, ids=ids, output_fields=wanted)
        return [dict(row) for row in rows if filters.matches(row)]

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
        """Every row (optionally filtered), in pages; used to rebuild derived indexes.

        A page holds at least ``batch_size`` rows, and more while it stays near 64 MB
        (judged on a sample of rows; gRPC refuses messages over 256 MB), up to pymilvus'
        16,384. Milvus Lite scans and sorts the whole collection for every page, so
        fewer pages save much: 110k rows of ~2,000 chars took 39 s in pages of 5,000,
        28 s in pages of 16,384 (one query returning only the ids of all of them: 15 s).
        """
        sample = self.client.query(COLLECTION, filter=expr, output_fields=fields, limit=64)
        if not sample:
            return
        row_bytes = max(1, sum(len(str(row).encode()) for row in sample) // len(sample))
        page = min(16_384, max(batch_size, (64 << 20) // row_bytes))
        iterator = self.client.query_iterator(COLLECTION, batch_size=page, filter=expr, output_fields=fields)
        try:
            while batch := iterator.next():
                yield from batch
        finally:
            iterator.close()

    def lexical_search(self, query: str, filters: Filters, *, limit: int) -> list[tuple[str, float]]:
        """BM25 ids and scores inside ``filters``, best first (native on a server, in-process embedded)."""
        if self.lexical_backend == LEXICAL_MILVUS:
            terms = lexical_text(query)
            if not terms:
                return []
            result = self.client.search(
                COLLECTION, data=[terms], anns_field="sparse", filter=filters.to_expr(), limit=limit,
                output_fields=["id"], search_params={"metric_type": "BM25"},
            )
            # best first either way; milvus-lite reports BM25 as a negative distance, Milvus as a score
            return [(hit["id"], abs(float(hit["distance"]))) for hit in result[0]]
        return self._mirror.search(query, filters, limit)

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
