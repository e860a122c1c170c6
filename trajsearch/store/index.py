"""The Milvus collection: one code path for Milvus Lite (a local path) and a Milvus server URI.

One collection holds every row (task, summary, step window, failure) of every
tenant. The collection is the source of truth: anything derived from it (the
in-process lexical index) is rebuilt from it and updated through this class.

Filtered search is exact where the engine allows it (issue 12). The layout and
the dense index are chosen per engine, below this class's API:

- Milvus Lite (a local path, or one served by ``milvus-lite server``): a FLAT
  index (exact numpy brute force over the rows that pass the filter) and one
  partition per tenant, searched by name. Its HNSW (faiss with an id selector)
  lost up to 31% of the true top-10 under ``in``-list and combined filters, and
  returned short lists; FLAT answered every filter exactly at the same speed.
  Lite's search loops in Python over every row in scope, so naming the tenant's
  partition makes a search cost the tenant's rows, not the collection's (100k
  rows, a tenant of 5%: 169 -> 34 ms; with a tools filter 4.5 -> 0.24 s). A tenant's
  few rows per run (task, summary, failure) and its passages have partitions of their
  own too, so a search of those levels costs only their rows (store/layout.py).
- A Milvus server: HNSW, and ``tenant`` as the partition key (its own pruning).

Grouped search (one or ``group_size`` hits per run) completes Milvus' best-effort
``group_by`` with follow-up searches, see :meth:`TrajectoryIndex.search`.

On a local path, searches and gets are asked of the Milvus Lite engine running in this process
(store/lite.py) instead of crossing gRPC to it, and its dense search skips two Python loops over
every row in scope (store/lite_search.py); everything else goes through ``MilvusClient``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence
from urllib.parse import urlsplit

from pymilvus import MilvusClient, MilvusException

from .. import config
from ..fsutil import private_dir
from ..vocab import DENSE_LEVELS, LEVELS
from .fields import FILTER_FIELDS, LEXICAL_FIELDS, OUTPUT_FIELDS
from .filters import Filters, quote
from .layout import (
    COLLECTION, EPISODES_APART, INDEX_PARAMS, LEXICAL_MEMORY, LEXICAL_MILVUS, LITE_INDEX_PARAMS,
    LITE_DENSE, MAX_LIMIT, SCHEMA_VERSION, SEARCH_PARAMS, IndexSettings, SchemaMismatchError, StoreNeedsMigrationError,
    by_partition, is_server_uri, lexical_text, part_of, partition_name, schema, unit,
)
from . import blas, lite_search
from .lite import InProcessReads
from .migrate import finish_migration, migrate

#: Collection property listing the runs a writer has begun and not finished (see begin_runs).
PENDING = "trajsearch.pending_runs"
#: Runs per filtered delete (their ids make up its expression).
DELETE_RUNS = 100

__all__ = [  # the layout's names are part of this module's API (scripts and the façade import them here)
    "COLLECTION", "FILTER_FIELDS", "LEXICAL_FIELDS", "OUTPUT_FIELDS", "SEARCH_PARAMS", "IndexSettings",
    "SchemaMismatchError", "StoreNeedsMigrationError", "TrajectoryIndex", "is_server_uri", "lexical_text",
]

log = logging.getLogger(__name__)
#: pymilvus pings an idle channel every 10 s; Milvus Lite's in-process server, whose channel sits idle
#: while reads go to the engine directly (store/lite.py), answers the third ping with GOAWAY
#: "too_many_pings", which gRPC logs to stderr. Within one process there is nothing to keep alive.
_LOCAL_CHANNEL = {"grpc_options": {"grpc.keepalive_permit_without_calls": 0}}
# query_iterator warns on every call against milvus-lite ("failed to get mvccTs"): harmless there.
logging.getLogger("pymilvus").setLevel(logging.ERROR)


def local_store_path(uri: str) -> str:
    """The path Milvus Lite is handed for the local store ``uri`` (``~`` expanded, a trailing ``/`` dropped), or
    ValueError before anything is created. Milvus Lite opens as an embedded store only a path ending in ``.db`` and
    takes anything else for a server address, so ``--uri ./store`` was refused in pymilvus' words ("needs start with
    [unix, http, https, tcp] or a local file endswith [.db]") after an empty ``./store`` folder had been made (round
    24, NEWB); and it expands no ``~``: ``--uri '~/x.db'`` made the folder under the home, then failed "dir: ~ not
    exists" (review FRCLI2, 3)."""
    if len(urlsplit(uri).scheme) > 1:  # grpc://host:19530 (the service's), UNIX:/sock: no server pymilvus takes
        raise ValueError(f"{uri!r} is no Milvus address: a Milvus server's starts with http://, https://, tcp:// or "
                         "unix: (a socket), and the embedded store is a path ending in .db (--uri, $TRAJSEARCH_URI)")
    path = str(Path(uri.rstrip("/") or uri).expanduser())
    if not path.endswith(".db"):
        suggested = f"{uri.rstrip('/')}.db" if uri.rstrip("/") else "milvus.db"
        raise ValueError(f"the store path {uri!r} does not end in .db: Milvus Lite, which keeps the embedded store, "
                         f"opens only a path ending in .db (a folder it makes, named like a file), and takes any "
                         f"other for a server address; give one such as {suggested!r}, or http://host:19530 for a "
                         "Milvus server (--uri, $TRAJSEARCH_URI)")
    return path


class TrajectoryIndex:
    """Create/open the collection, write rows, and read them back by vector or by key."""

    def __init__(self, uri: str, settings: IndexSettings, *, token: str = "", lexical: str | None = None) -> None:
        local = not is_server_uri(uri)  # a path: Milvus Lite's engine runs in this process
        blas_threads = config.blas_threads() if local else 0  # read first: a bad setting opens nothing
        if local:
            uri = local_store_path(uri)
            data_dir = Path(uri).resolve()
            private_dir(data_dir.parent)  # the home (or --uri's directory) when this creates it
            private_dir(data_dir)  # Milvus Lite fills it with 0644 files: this directory keeps them private
        self.uri = uri
        self.client = MilvusClient(uri=uri, token=token, **(_LOCAL_CHANNEL if local else {}))
        #: Where searches and gets go: the engine itself when this process runs it (store/lite.py), else the client.
        self.reads: Any = (InProcessReads.of(uri) if local else None) or self.client
        if local:  # its dense searches and gets without per-row loops, their products on a bounded BLAS
            lite_search.install()
            blas.bound(blas_threads)
        #: Milvus Lite behind the URI (a local path, or a ``milvus-lite server``): FLAT + a partition per tenant.
        self.embedded = local or self.client.get_server_version().startswith("milvus_lite")
        #: In-process BM25 for Milvus Lite however it is reached, Milvus' own on a server; a new
        #: collection records its choice, and an existing one's is read back in _open_or_create.
        if lexical not in (None, LEXICAL_MEMORY, LEXICAL_MILVUS):
            raise ValueError(f"lexical must be {LEXICAL_MEMORY!r} or {LEXICAL_MILVUS!r}, got {lexical!r}")
        self.lexical_backend = lexical or (LEXICAL_MEMORY if self.embedded else LEXICAL_MILVUS)
        self.lexical_path: str | None = None
        self.partitioned = self.embedded  # the collection's own layout, read on open
        self.episodes_apart = self.embedded  # task, summary and failure rows in partitions of their own (read on open)
        self._partitions: set[str] = set()
        self.settings = self._open_or_create(settings)
        self._mirror = self._lexical_mirror() if self.lexical_backend == LEXICAL_MEMORY else None
        if local:  # the owner of the data directory: no other writer can be mid-batch
            self._recover_runs()

    # -- lifecycle ---------------------------------------------------------------------------

    def _open_or_create(self, wanted: IndexSettings) -> IndexSettings:
        if self.embedded and not is_server_uri(self.uri):
            finish_migration(self)
        if not self.client.has_collection(COLLECTION):
            self._create(COLLECTION, wanted.dim, self.lexical_backend, {
                "trajsearch.schema_version": SCHEMA_VERSION,
                "trajsearch.embedder": wanted.embedder,
                "trajsearch.dim": str(wanted.dim),
                "trajsearch.window": str(wanted.window),
                "trajsearch.stride": str(wanted.stride),
                "trajsearch.lexical": self.lexical_backend,
                **({EPISODES_APART: "1"} if self.embedded else {}),
            })
            log.info("created collection %s at %s", COLLECTION, self.uri)
        description = self.client.describe_collection(COLLECTION)
        props = description.get("properties", {})
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
        # Opened by its path, a store keeps its lexical copy beside its data directory where it is now; the path is
        # worked out on each open, never written into the collection. It had been recorded at creation and written
        # back at every open from another path: a moved store (`mv ~/.trajsearch`, a volume mounted elsewhere)
        # rebuilt its copy and failed saving it where it was made, a copy wrote into the original's, and a store on
        # a full disk opened from a new path (or a volume seen under two mount paths) failed to open at that write.
        # A process reaching a served store saves no copy (store/mirror.py), so it needs no path.
        self.lexical_path = (self._local_lexical_path()
                             if self.lexical_backend == LEXICAL_MEMORY and not is_server_uri(self.uri) else None)
        self.partitioned = not any(f.get("is_partition_key") for f in description.get("fields", []))
        apart = props.get(EPISODES_APART) == "1"
        if self.embedded and (not self.partitioned or self._dense_index() != LITE_DENSE
                              or not (apart or is_server_uri(self.uri))):
            migrate(self, found, props)  # a store of an earlier layout (see store/migrate.py)
            apart = self.get_property(EPISODES_APART) == "1"
        self.episodes_apart = self.partitioned and apart
        kind, metric = self._dense_index()
        self.search_params = {"metric_type": metric, "params": {}} if kind == "FLAT" else SEARCH_PARAMS
        if self.partitioned:
            self._partitions = set(self.client.list_partitions(COLLECTION))
        self.client.load_collection(COLLECTION)  # a reopened store must be loaded before search
        return found  # window/stride: the collection's own, whatever was asked

    def _create(self, name: str, dim: int, lexical: str, properties: dict[str, str]) -> None:
        """A new collection in this engine's layout: see the module docstring."""
        index_params = self.client.prepare_index_params()
        index_params.add_index("embedding", **(LITE_INDEX_PARAMS if self.embedded else INDEX_PARAMS))
        if lexical == LEXICAL_MILVUS:
            index_params.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
        self.client.create_collection(
            name,
            schema=schema(dim, lexical, partition_key=not self.embedded),
            index_params=index_params,
            properties=properties,
        )

    def _dense_index(self) -> tuple[str, str]:
        """The dense index's type and metric, e.g. ``("FLAT", "IP")`` (empty strings: no index)."""
        found = self.client.describe_index(COLLECTION, "embedding") or {}
        return str(found.get("index_type", "")).upper(), str(found.get("metric_type", "")).upper()

    def get_property(self, name: str) -> str:
        """A ``trajsearch.*`` property of the collection ("" when unset)."""
        return self.client.describe_collection(COLLECTION).get("properties", {}).get(name, "")

    def set_property(self, name: str, value: str) -> None:
        self.client.alter_collection_properties(COLLECTION, properties={name: value})

    # -- runs in flight: no half-written run is ever visible -----------------------------------

    def begin_runs(self, runs: Sequence[tuple[str, str, str, str]]) -> None:
        """Record (tenant, trajectory_id, task row id, content hash) of the runs about to be written.

        A run is complete once its task row (written last, carrying the hash) is in;
        :meth:`end_runs` clears the record. If the writer dies in between, the next
        owner of the store removes every row of the runs whose task row is missing or
        stale (:meth:`_recover_runs`), so a search never shows half a run.
        """
        self.set_property(PENDING, json.dumps([list(run) for run in runs]))

    def end_runs(self) -> None:
        self.set_property(PENDING, "")

    def _recover_runs(self) -> None:
        try:
            pending = json.loads(self.get_property(PENDING) or "[]")
        except ValueError:
            pending = []
        if not pending:
            return
        found = {r["id"]: r["content_hash"] for r in
                 self.client.get(COLLECTION, ids=[task_id for _, _, task_id, _ in pending], output_fields=["content_hash"])}
        broken = [(tenant, tid) for tenant, tid, task_id, chash in pending if found.get(task_id) != chash]
        self.delete_runs(broken)
        if broken:
            log.warning("%s: removed %d run(s) a writer left half-written: %s", self.uri, len(broken),
                        ", ".join(tid for _, tid in broken[:5]) + (" …" if len(broken) > 5 else ""))
        self.end_runs()

    def _lexical_mirror(self) -> Any:
        from .mirror import GENERATION, LexicalMirror  # noqa: PLC0415 - only the embedded path needs it

        def get_generation() -> str:
            return self.get_property(GENERATION)

        def set_generation(value: str) -> None:
            self.set_property(GENERATION, value)

        # the owner is the process that opened the data directory itself; a process reaching a
        # milvus-lite server over a socket is one of several writers (see store/mirror.py)
        return LexicalMirror(
            Path(self.lexical_path) if self.lexical_path else None,
            get_generation=get_generation,
            set_generation=set_generation,
            rows=lambda: self.iterate(LEXICAL_FIELDS, batch_size=5_000),
            is_empty=lambda: self.count() == 0,
            owner=not is_server_uri(self.uri) and self.lexical_path is not None,
        )

    def _local_lexical_path(self) -> str:
        return str(Path(self.uri).expanduser().resolve()) + ".lexical.npz"

    def close(self) -> None:
        """Save the lexical index and let go of the store.

        For an embedded store this also stops milvus-lite's in-process server, which
        otherwise holds the data-directory lock until the process exits, so another
        process can open the store after us.
        """
        self._save_lexical(force=True)
        self.client.close()
        if not is_server_uri(self.uri):
            from milvus_lite.server_manager import server_manager_instance  # noqa: PLC0415

            server_manager_instance.release_server(self.uri)

    def flush(self) -> None:
        """Seal the memtable: unflushed rows make milvus-lite searches 10-30x slower."""
        self.client.flush(COLLECTION)
        self._save_lexical()

    def _save_lexical(self, *, force: bool = False) -> None:
        """Save the lexical index's copy, and go on if the disk will not take it (full, or a file-size limit).

        The copy only spares the next open a rebuild: a save that fails leaves the copy's generation unlike the
        collection's, so the next open rebuilds from the rows, which are the truth. A full disk made every search
        of an embedded store fail after computing its answer (the read had rebuilt the index, and saving it at
        close raised ``No space left on device``), and a server stopping on one left the data directory held.
        """
        if self._mirror is None:
            return
        try:
            self._mirror.save(force=force)
        except (OSError, MilvusException) as exc:  # the file's write, or the collection's (stamping the generation)
            log.warning("%s: could not save the lexical index beside the store (%s); the next open rebuilds it "
                        "from the collection", self.uri, exc.message if isinstance(exc, MilvusException) else exc)

    # -- partitions (embedded layout) --------------------------------------------------------

    def _scope(self, tenant: str, levels: Sequence[str] = DENSE_LEVELS) -> dict[str, Any] | None:
        """Read arguments confining a call to ``tenant``'s rows of ``levels`` (all of them: every
        level a dense search ranks): the partitions that hold them where tenants have their own,
        nothing extra where ``tenant`` is the partition key (the filter prunes); None when the
        tenant has none of those partitions, hence no such rows."""
        if not self.partitioned:
            return {}
        names = [name for name in self._partition_names(tenant, levels or DENSE_LEVELS)
                 if name in self._partitions or self.client.has_partition(COLLECTION, name)]  # maybe made elsewhere
        self._partitions.update(names)
        return {"partition_names": names} if names else None

    def _partition_names(self, tenant: str, levels: Sequence[str]) -> list[str]:
        """The partitions that would hold ``tenant``'s rows of ``levels`` (embedded layout), whether or
        not they exist."""
        parts = dict.fromkeys(part_of(level, self.episodes_apart) for level in levels)
        return [partition_name(tenant, part) for part in parts]

    def _partition_for_write(self, name: str) -> str:
        if name not in self._partitions:
            try:
                if not self.client.has_partition(COLLECTION, name):
                    self.client.create_partition(COLLECTION, name)
            except MilvusException:
                if not self.client.has_partition(COLLECTION, name):  # not just another writer being first
                    raise
            self._partitions.add(name)
        return name

    # -- writes ------------------------------------------------------------------------------

    def upsert(self, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        rows = [dict(row, embedding=unit(row["embedding"])) for row in rows]
        if self._mirror is None:
            rows = [dict(row, lexical=lexical_text(row["text"])) for row in rows]
        else:
            self._mirror.before_write()
        if self.partitioned:
            for name, some in by_partition(rows, self.episodes_apart).items():
                self.client.upsert(COLLECTION, data=some, partition_name=self._partition_for_write(name))
        else:
            self.client.upsert(COLLECTION, data=list(rows))
        if self._mirror is not None:
            self._mirror.upsert(rows)

    def delete_trajectory(self, tenant: str, trajectory_id: str) -> None:
        self.delete_runs([(tenant, trajectory_id)])

    def delete_runs(self, runs: Iterable[tuple[str, str]]) -> None:
        """Every row of these (tenant, trajectory_id) runs, by one filtered delete per tenant, partition
        and ``DELETE_RUNS`` runs: Milvus Lite takes about as long for 30 runs as for one (0.12 s against
        0.06-0.14 s each), so re-ingesting changed runs deletes them a batch at a time."""
        by_tenant: dict[str, dict[str, None]] = {}  # tenant -> its trajectory ids, in order, once each
        for tenant, trajectory_id in runs:
            by_tenant.setdefault(tenant, {})[trajectory_id] = None
        if by_tenant and self._mirror is not None:
            self._mirror.before_write()
        for tenant, unique in by_tenant.items():
            ids = list(unique)
            partitions = self._delete_scopes(tenant)
            for start in range(0, len(ids), DELETE_RUNS):
                expr = Filters(tenant=tenant, trajectory_ids=tuple(ids[start : start + DELETE_RUNS])).to_expr()
                for where in partitions:
                    self.client.delete(COLLECTION, filter=expr, **where)
            if self._mirror is not None:
                for trajectory_id in ids:
                    self._mirror.delete_where(tenant, trajectory_id)

    def _delete_scopes(self, tenant: str) -> list[dict[str, str]]:
        """The partition argument of each delete of ``tenant``'s rows: one per partition it has (``{}``: the
        collection's own, where partitions are by key), none where it has none (hence no rows)."""
        scope = self._scope(tenant, LEVELS)
        return [] if scope is None else [{"partition_name": name} if name else {}
                                         for name in scope.get("partition_names", [None])]

    def delete_rows(self, tenant: str, ids: Sequence[str]) -> None:
        """Rows of ``tenant`` by primary key: those of a run that its new representation no longer makes
        (:meth:`~trajsearch.search.TrajSearch.upgrade`, which keeps the run's other rows in place)."""
        if not ids:
            return
        if self._mirror is not None:
            self._mirror.before_write()
        for where in self._delete_scopes(tenant):
            self.client.delete(COLLECTION, ids=list(ids), **where)
        if self._mirror is not None:
            self._mirror.delete(ids)

    # -- reads -------------------------------------------------------------------------------

    def get(self, ids: Iterable[str], filters: Filters, fields: list[str] | None = None) -> list[dict]:
        """Rows by primary key, still inside ``filters``: ``id``, the ``fields`` asked for (default:
        every output field) and those the filters read.

        A primary-key ``get`` (about 0.6 ms per id at 110k rows) with the filters applied to the
        returned rows by :meth:`Filters.matches`; an ``id in [...] and tenant == ...``
        query expression makes milvus-lite scan instead (hundreds of ms at 100k). Only the filter
        fields in use are read: reading all nine doubled the cost of a get of vectors. Asked in this
        process, a get looks only in the tenant's partitions (of the levels filtered): Milvus Lite
        looks each key up in every segment, 0.26 ms more per get of 10 keys at 200 tenants.
        """
        ids = list(dict.fromkeys(ids))
        if not ids:
            return []
        wanted = list(dict.fromkeys([*(fields or OUTPUT_FIELDS), *filters.fields()]))
        scope: dict[str, Any] = {}
        if self.partitioned and isinstance(self.reads, InProcessReads):  # names of no partition match nothing
            scope = {"partition_names": self._partition_names(filters.tenant, filters.levels or LEVELS)}
        rows = self.reads.get(COLLECTION, ids=ids, output_fields=wanted, **scope)
        return [dict(row) for row in rows if filters.matches(row)]

    def search(
        self,
        vector: Sequence[float],
        filters: Filters,
        *,
        limit: int,
        group_by_trajectory: bool = False,
        group_size: int = 1,
        fields: Sequence[str] = OUTPUT_FIELDS,
    ) -> list[dict]:
        """Dense nearest neighbours inside ``filters``, best first; each hit has ``score`` (cosine),
        ``id`` and ``fields`` (``trajectory_id`` always).

        Grouped: the ``limit`` runs whose best row inside ``filters`` is nearest, best first,
        each with its ``group_size`` nearest rows inside ``filters`` (fewer only where the run
        has fewer), as one flat list. On Milvus Lite (FLAT) both are exact.
        """
        scope = self._scope(filters.tenant, filters.levels)
        if scope is None:
            return []
        query = unit(vector)
        fields = list(dict.fromkeys(["trajectory_id", *fields]))
        if not group_by_trajectory:
            return self._nearest(query, filters, min(limit, MAX_LIMIT), scope, fields=fields)
        return self._nearest_runs(query, filters, limit, group_size, scope, fields)

    def _nearest(
        self, query: list[float], filters: Filters, limit: int, scope: dict[str, Any], group_size: int = 0,
        fields: list[str] = OUTPUT_FIELDS,
    ) -> list[dict]:
        """One Milvus search: the ``limit`` nearest rows inside ``filters``; with ``group_size``,
        Milvus' own group_by: up to ``limit`` runs of up to ``group_size`` rows each."""
        grouping = {"group_by_field": "trajectory_id", "group_size": group_size} if group_size else {}
        result = self.reads.search(
            COLLECTION,
            data=[query],
            filter=filters.to_expr(),
            limit=limit,
            output_fields=fields,
            search_params=self.search_params,
            **scope,
            **grouping,
        )
        return [dict(hit["entity"], id=hit["id"], score=float(hit["distance"])) for hit in result[0]]

    def _nearest_runs(
        self, query: list[float], filters: Filters, k: int, group_size: int, scope: dict[str, Any],
        fields: list[str] = OUTPUT_FIELDS,
    ) -> list[dict]:
        """Grouped search that does not stop short.

        Milvus' ``group_by`` is best effort: Milvus Lite groups the nearest
        max(10k, 3k x group_size) rows it finds, so runs with many near rows crowd others
        out (fewer than k runs come back) and a run's further rows are cut off (short
        groups). With an exact index what it does return is right as far as it goes: its
        runs are the best runs, in order, and each run's rows are its best. So:

        1. Milvus' group_by, k runs of ``group_size``. Usually that is all (one call).
        2. Fewer than k runs: plain searches for the next nearest rows, excluding the runs
           already seen, grouped here, ``n`` rows doubling, until k runs or no rows are
           left. A reply with fewer rows than asked has seen every remaining row, so the
           runs it found are complete.
        3. Runs with fewer than ``group_size`` rows (not known complete): a plain search
           over those runs only, ``group_size`` rows per run; a reply with fewer rows
           than asked holds all of their rows, else the runs still short (fewer each
           time) are asked again.
        """
        groups: dict[str, list[dict]] = {}
        complete: set[str] = set()  # runs known to hold no further row inside the filters

        def add(hits: list[dict]) -> None:
            for hit in hits:  # best first
                members = groups.setdefault(hit["trajectory_id"], [])
                if len(members) < group_size:
                    members.append(hit)

        hits = self._nearest(query, filters, k, scope, group_size=group_size, fields=fields)
        add(hits)
        n = max(10 * k, 3 * k * group_size)
        while hits and len(groups) < k:
            seen = tuple(groups)
            rest = replace(filters, exclude_trajectory_ids=filters.exclude_trajectory_ids + seen)
            want = min(n, MAX_LIMIT)
            hits = self._nearest(query, rest, want, scope, fields=fields)
            add(hits)
            if len(hits) < want:  # every row of the runs not excluded has been seen
                complete.update(t for t in groups if t not in seen)
                break
            n *= 2
        best = list(groups)[:k]
        short = [t for t in best if len(groups[t]) < group_size and t not in complete]
        while short:
            want = min(len(short) * group_size, MAX_LIMIT)
            hits = self._nearest(query, replace(filters, trajectory_ids=tuple(short)), want, scope, fields=fields)
            found: dict[str, list[dict]] = {t: [] for t in short}
            for hit in hits:
                if len(found[hit["trajectory_id"]]) < group_size:
                    found[hit["trajectory_id"]].append(hit)
            for t, members in found.items():
                if len(members) > len(groups[t]):  # both are the run's best rows: the longer one wins
                    groups[t] = members
            if len(hits) < want:
                break
            short = [t for t in short if len(found[t]) < group_size]
        return [hit for t in best for hit in groups[t]]

    def iterate(
        self, fields: list[str], batch_size: int = 2_000, expr: str = "", tenant: str | None = None,
        levels: Sequence[str] = DENSE_LEVELS,
    ) -> Iterator[dict]:
        """Every row (optionally filtered, optionally of one ``tenant`` only, then read from the
        partitions of its ``levels`` alone), in pages; used to rebuild derived indexes.

        A page holds at least ``batch_size`` rows, and more while it stays near 64 MB
        (judged on a sample of rows; gRPC refuses messages over 256 MB), up to pymilvus'
        16,384. Milvus Lite scans and sorts the whole collection for every page, so
        fewer pages save much: 110k rows of ~2,000 chars took 39 s in pages of 5,000,
        28 s in pages of 16,384 (one query returning only the ids of all of them: 15 s).
        """
        scope: dict[str, Any] | None = {}
        if tenant is not None:
            scope = self._scope(tenant, levels)
            if scope is None:
                return
            expr = " and ".join(filter(None, [f"tenant == {quote(tenant)}", expr]))
        sample = self.client.query(COLLECTION, filter=expr, output_fields=fields, limit=64, **scope)
        if not sample:
            return
        row_bytes = max(1, sum(len(str(row).encode()) for row in sample) // len(sample))
        page = min(16_384, max(batch_size, (64 << 20) // row_bytes))
        iterator = self.client.query_iterator(COLLECTION, batch_size=page, filter=expr, output_fields=fields, **scope)
        try:
            while batch := iterator.next():
                yield from batch
        finally:
            iterator.close()

    def some(self, fields: list[str], expr: str, *, tenant: str, levels: Sequence[str], limit: int) -> list[dict]:
        """Up to ``limit`` (at most 16,384) rows of ``tenant`` at ``levels`` inside ``expr``, in one query: a
        bounded look-up, where :meth:`iterate` reads a page of thousands for the first row. (A level's partition
        holds others' rows too: the level is in the filter, or each run came once per level it has rows at.)"""
        scope = self._scope(tenant, levels)
        if scope is None:
            return []
        inside = Filters(tenant=tenant, levels=tuple(levels)).to_expr()
        return self.client.query(COLLECTION, filter=f"{inside} and {expr}", output_fields=fields, limit=limit,
                                 **scope)

    @property
    def lexical_ready(self) -> bool:
        """Whether :meth:`lexical_search` answers without first loading or rebuilding the in-process BM25 (always on a
        server: Milvus' own)."""
        return self._mirror is None or self._mirror.loaded

    def lexical_search(self, query: str, filters: Filters, *, limit: int, widen: bool = True) -> list[tuple[str, float]]:
        """BM25 ids and scores inside ``filters``, best first (native on a server, in-process embedded;
        ``widen``: see :meth:`LexicalIndex.search`, Milvus' own BM25 scores every term)."""
        if self.lexical_backend == LEXICAL_MILVUS:
            terms = lexical_text(query)
            scope = self._scope(filters.tenant, filters.levels or LEVELS)
            if not terms or scope is None:
                return []
            result = self.client.search(
                COLLECTION, data=[terms], anns_field="sparse", filter=filters.to_expr(), limit=limit,
                output_fields=["id"], search_params={"metric_type": "BM25"}, **scope,
            )
            # best first either way; milvus-lite reports BM25 as a negative distance, Milvus as a score
            return [(hit["id"], abs(float(hit["distance"]))) for hit in result[0]]
        return self._mirror.search(query, filters, limit, widen)

    def count(self, tenant: str | None = None) -> int:
        scope: dict[str, Any] | None = {}
        expr = ""
        if tenant:
            scope, expr = self._scope(tenant), f"tenant == {quote(tenant)}"
            if scope is None:
                return 0
        result = self.client.query(COLLECTION, filter=expr, output_fields=["count(*)"], **scope)
        return int(result[0]["count(*)"])

    def count_by(self, field: str, tenant: str, levels: Sequence[str] = DENSE_LEVELS, *,
                 env_versions: Sequence[str] = (), policy_versions: Sequence[str] = ()) -> dict[str, int]:
        """Row counts per value of a scalar field among one tenant's rows of ``levels`` (for stats).

        Only the partitions holding those levels are read (a filter over the whole collection made
        Milvus Lite scan every tenant's rows: runs by outcome took 1.5 s in a 44k-row tenant of a
        100k-row store, 0.45 s read from its own partition). Where a tenant's step rows have a
        partition of their own (Milvus Lite), their level is counted from the partition's
        statistics: reading rows to count them made Milvus Lite build every row whole, vectors
        included (~7 s for the 44k rows of a 100k-row store). With ``env_versions`` /
        ``policy_versions`` only the rows of those versions count (an API key's pins), all read.
        """
        counts: dict[str, int] = {}
        versions = dict(env_versions=tuple(env_versions), policy_versions=tuple(policy_versions))
        if field == "level" and not (env_versions or policy_versions):
            apart = self._levels_apart(levels)
            for level in apart:
                scope = self._scope(tenant, (level,))  # the level's own partition, None if there is none
                rows = sum(int(self.client.get_partition_stats(COLLECTION, name).get("row_count", 0))
                           for name in (scope or {}).get("partition_names", ()))
                counts.update({level: rows} if rows else {})
            levels = tuple(level for level in levels if level not in apart)
        if not levels:
            return counts
        expr = Filters(tenant=tenant, levels=tuple(levels), **versions).to_expr()  # a partition may hold other levels
        for row in self.iterate([field], expr=expr, tenant=tenant, levels=levels):
            key = str(row[field])
            counts[key] = counts.get(key, 0) + 1
        return counts

    def _levels_apart(self, levels: Sequence[str]) -> tuple[str, ...]:
        """Those of ``levels`` whose rows have a partition per tenant to themselves (embedded layout):
        step rows where the run-level rows sit apart, and passages."""
        if not self.partitioned:
            return ()
        return tuple(level for level in levels if level == "passage" or (level == "step" and self.episodes_apart))

    def tenants(self) -> list[str]:
        """The tenants holding runs, read from the runs' task rows (their tenant field alone), embedded or on a server:
        the in-process lexical index knew them too, but loading it (or rebuilding it where its saved copy is absent)
        for a mistyped ``stats -t nobody`` cost seconds and hundreds of MB (FRALLB: 7,929 rows)."""
        return sorted({row["tenant"] for row in self.iterate(["tenant"], expr=f"level == {quote('task')}")})
