"""Embedded stores of an earlier layout, brought up to date once, in place.

Kept apart from :mod:`trajsearch.store.index` because it runs once per old
store: :func:`finish_migration` on every open (a copy left by a process that
died is completed or discarded) and :func:`migrate` when the collection found
predates exact filtered search (HNSW, ``tenant`` as the partition key), keeps
task, summary and failure rows with the step rows, or ranks by COSINE (the index
alone is replaced). Both take the :class:`TrajectoryIndex` being opened.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import numpy as np

from .fields import OUTPUT_FIELDS
from .layout import (
    COLLECTION, EPISODES_APART, LEXICAL_MILVUS, LITE_DENSE, LITE_INDEX_PARAMS, MIGRATING, StoreNeedsMigrationError,
    by_partition, is_server_uri, unit,
)

if TYPE_CHECKING:
    from .index import IndexSettings, TrajectoryIndex

log = logging.getLogger(__name__)

def migrate(self: TrajectoryIndex, settings: IndexSettings, props: dict[str, str]) -> None:
    """Bring an embedded store of an earlier layout to this one (FLAT over inner product; per
    tenant a partition of step rows, one of task, summary and failure rows, one of passages), in
    place, once. Where the partitions are already right, only the dense index is replaced.

    The partition layout is part of the schema and Milvus Lite deletes by primary key in every
    partition at once (a row cannot be moved), so the rows are copied into a new collection
    (vectors and all fields as stored: nothing is re-embedded), which then replaces the old
    one; a copy that stops part-way is discarded on the next open and the untouched old
    collection is migrated again (see :func:`finish_migration`). Only a process holding the
    data directory (a local path) may copy; over a socket a store whose only lag is that its
    task, summary and failure rows share the step partition is used as it is (exact, slower).
    """
    if self.partitioned and (props.get(EPISODES_APART) == "1" or is_server_uri(self.uri)):
        unit_vectors = _vectors_are_unit(self)
        if unit_vectors or is_server_uri(self.uri):  # else the copy below writes them at unit length
            replace_dense_index(self, LITE_DENSE[1] if unit_vectors else "COSINE")
            return
    if is_server_uri(self.uri):
        raise StoreNeedsMigrationError(
            f"the embedded store behind {self.uri} predates exact filtered search; migrate it once by "
            "opening it by its path, e.g. `trajsearch stats --uri <path to its milvus.db>`"
        )
    self.client.load_collection(COLLECTION)
    rows = self.count()
    log.warning(
        "%s: migrating %d rows to the current layout (exact FLAT index; per tenant one partition of step "
        "rows, one of task, summary and failure rows, one of passages); a one-off copy, nothing is re-embedded",
        self.uri, rows,
    )
    if self.client.has_collection(MIGRATING):
        self.client.drop_collection(MIGRATING)
    self._create(MIGRATING, settings.dim, self.lexical_backend,
                 {**{key: value for key, value in props.items() if key.startswith("trajsearch.")}, EPISODES_APART: "1"})
    made: set[str] = set()
    batch: list[dict] = []

    def write() -> None:
        for name, some in by_partition(batch).items():
            if name not in made:
                self.client.create_partition(MIGRATING, name)
                made.add(name)
            self.client.insert(MIGRATING, data=some, partition_name=name)
        batch.clear()

    fields = [*OUTPUT_FIELDS, "embedding", *(["lexical"] if self.lexical_backend == LEXICAL_MILVUS else [])]
    for row in self.iterate(fields, batch_size=5_000):
        batch.append(dict(row, embedding=unit(row["embedding"])))  # an inner-product index ranks them by cosine
        if len(batch) >= 2_000:
            write()
    write()
    self.client.flush(MIGRATING)
    self.client.load_collection(MIGRATING)
    copied = int(self.client.query(MIGRATING, filter="", output_fields=["count(*)"])[0]["count(*)"])
    if copied != rows:
        self.client.drop_collection(MIGRATING)
        raise RuntimeError(f"{self.uri}: migration copied {copied} of {rows} rows; the store is unchanged")
    self.client.alter_collection_properties(MIGRATING, properties={"trajsearch.migration": "complete"})
    self.client.release_collection(MIGRATING)
    finish_migration(self)
    self.partitioned = True
    log.warning("%s: migrated %d rows", self.uri, rows)

def _vectors_are_unit(self: TrajectoryIndex) -> bool:
    """Whether the stored vectors are unit length, so that inner product ranks them by cosine
    (judged on a sample: an embedder normalises all its vectors or none; every trajsearch one does)."""
    self.client.load_collection(COLLECTION)
    rows = self.client.query(COLLECTION, filter="", output_fields=["embedding"], limit=1_000)
    norms = [float(np.linalg.norm(np.asarray(row["embedding"], dtype=np.float32))) for row in rows]
    return all(abs(norm - 1.0) < 1e-3 for norm in norms)  # no rows: nothing to rank wrongly


def replace_dense_index(self: TrajectoryIndex, metric: str) -> None:
    """The dense index rebuilt as FLAT over ``metric``, rows untouched, the collection left released
    (COSINE only where the stored vectors are not unit length and cannot be rewritten: a store
    served over a socket; scripts/bench_metric.py switches between the two to time them)."""
    found = self._dense_index()
    if found == ("FLAT", metric):
        return
    log.warning("%s: replacing the dense index (%s) with FLAT %s: exact filtered search%s", self.uri,
                " ".join(found) or "none", metric,
                ", and inner product on the unit vectors stored is their cosine without milvus-lite re-normalising "
                "every row per query" if metric == "IP" else " (the stored vectors are not unit length: COSINE kept)")
    self.client.release_collection(COLLECTION)
    if any(found):
        self.client.drop_index(COLLECTION, "embedding")
    index_params = self.client.prepare_index_params()
    index_params.add_index("embedding", **{**LITE_INDEX_PARAMS, "metric_type": metric})
    self.client.create_index(COLLECTION, index_params)


def finish_migration(self: TrajectoryIndex) -> None:
    """Complete or discard a migration copy left by :meth:`_migrate` (possibly by a process that died)."""
    if not self.client.has_collection(MIGRATING):
        return
    props = self.client.describe_collection(MIGRATING).get("properties", {})
    if props.get("trajsearch.migration") != "complete":
        log.warning("%s: discarding an unfinished migration copy; the store is migrated again", self.uri)
        self.client.drop_collection(MIGRATING)
        return
    if self.client.has_collection(COLLECTION):
        self.client.drop_collection(COLLECTION)
    self.client.rename_collection(MIGRATING, COLLECTION)

