"""Milvus Lite's dense search without its per-row Python loops and its copy of the vectors.

Why: milvus-lite 3.2.2 (pure Python) answers a dense search by walking every row of the
searched partitions in Python twice (once to map each primary key to its newest version, once
to mark the live rows: newest version, no tombstone after it), ~2 us a row, then copies the
partition's whole vector matrix (``vectors[arange(n)]``) before a product that takes a tenth of
the copy's time, and reads every column of each hit, the vector's 384 floats included, to keep
the few asked for. In a 44k-row tenant that was ~80 of ~100 ms, where the distances take ~5 ms
(issue 12). :func:`search_with_index` is the engine's ``execute_search_with_index``
(Apache-2.0) with those steps done otherwise:

- liveness by set operations over the keys the segments already index (``Segment.pk_to_row``):
  almost every row is live and has one version, and only keys with two versions (an upsert
  not yet compacted away) or a tombstone are checked row by row, by the engine's own rule;
- and that answer kept until the data changes (:class:`LiveRows`): between writes every search
  of a partition asks the same question;
- with every row of a segment valid, the product is taken on the segment's own matrix (same
  shape and values as the copy: the same distances bit for bit);
- the hits' rows are read as their key and the fields asked for, when those are all columns,
  in one ``take`` per segment, or cell by cell where it holds few of them (:func:`read_hits`,
  :func:`read_records`; gets by key likewise, :func:`get_rows`);
- a filter testing array membership (the ``tools`` filter), which the engine evaluates row by row
  after turning the whole table into Python dicts (~2.5 s in a 44k-row tenant), is evaluated
  column-wise (:func:`columnar_filter`, mask for mask the engine's).

Recall per segment, merge order and projection are the engine's, so the answers are too (a
test compares them whole, with upserts, deletes, unflushed rows, filters and a reopen).
:func:`install` puts it in the engine's place for the executor it was written against
(milvus-lite 3.2.2, checked by a hash of its source); any other keeps the engine's own.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import logging
import threading
import weakref
from typing import Any, Callable, Iterable, Sequence

import numpy as np

log = logging.getLogger(__name__)

#: The engine this was written against (its segments', tombstones' and indexes' attributes are read too)
#: and the sha256 of the source of each function replaced.
_VERSION = "3.2.2"
_REPLACES = "e22ce49c5ee11c9535792072df8ac5d07fe48f7a76888f1063d46adc14a6022f"  # execute_search_with_index
_REPLACES_GET = "e69627c753fcc3c82613c0f98fd284841f45c49e2596cff817702a445bd80b28"  # Collection.get


@functools.cache  # a file read and a hash: once per function
def _is_known(function: Callable, digest: str) -> bool:
    """Whether ``function`` is milvus-lite 3.2.2's, source for source (what this module replaces)."""
    import milvus_lite

    try:
        source = hashlib.sha256(inspect.getsource(function).encode()).hexdigest()
    except (OSError, TypeError):  # no source to compare: keep the engine's
        return False
    return getattr(milvus_lite, "__version__", "") == _VERSION and source == digest


def install() -> bool:
    """Answer this process's Milvus Lite dense searches with :func:`search_with_index`; True if
    they are. Only where the engine's function is the one replaced (milvus-lite 3.2.2)."""
    from milvus_lite.engine import collection
    from milvus_lite.search import executor_indexed

    if installed():
        return True
    original = executor_indexed.execute_search_with_index
    if not _is_known(original, _REPLACES) or collection.execute_search_with_index is not original:
        log.info("milvus-lite's search executor is not the one trajsearch replaces: keeping the engine's")
        return False
    collection.execute_search_with_index = search_with_index
    return True


def installed() -> bool:
    """Whether this process's Milvus Lite dense searches (and gets by key) are this module's."""
    from milvus_lite.engine import collection

    return collection.execute_search_with_index is search_with_index


def uninstall() -> None:
    """Give dense searches and gets by key back to the engine's own code."""
    from milvus_lite.engine import collection
    from milvus_lite.search import executor_indexed

    collection.execute_search_with_index = executor_indexed.execute_search_with_index


class _Source:
    """One place rows come from (a segment or the memtable): keys, versions and key -> row."""

    __slots__ = ("pks", "seqs", "rows")

    def __init__(self, pks: Sequence[Any], seqs: np.ndarray, rows: dict[Any, int]) -> None:
        self.pks, self.seqs, self.rows = pks, seqs, rows


def live_masks(sources: Sequence[_Source], deleted: dict[Any, int], mt_deletes: dict[Any, tuple]) -> list[np.ndarray]:
    """Per source, which rows are live: the newest version of their key across ``sources``, with
    no tombstone newer than it (``deleted``: flushed, key -> delete seq; ``mt_deletes``: not yet
    flushed, key -> (seq, partition)). The engine's rule, checked only where it can say no: keys
    found in two sources (an upsert's old version stays in its segment until compaction merges
    four files of a size) or with a tombstone."""
    seen: set[Any] = set()
    doubled: set[Any] = set()
    for source in sources:
        keys = source.rows.keys()
        doubled.update(seen.intersection(keys))
        seen.update(keys)
    suspect = doubled | seen.intersection(deleted) | seen.intersection(mt_deletes)
    masks = [np.ones(len(source.pks), dtype=bool) for source in sources]
    if not suspect:
        return masks
    newest: dict[Any, int] = {}
    found = []  # per source: its suspect keys, their rows and versions
    for n, source in enumerate(sources):
        rows = source.rows
        keys = [pk for pk in suspect if pk in rows] if len(suspect) < len(rows) else [pk for pk in rows if pk in suspect]
        at = [rows[pk] for pk in keys]
        seqs = source.seqs[at].tolist()
        for pk, seq in zip(keys, seqs):
            if seq > newest.get(pk, -1):
                newest[pk] = seq
        found.append((n, keys, at, seqs))
    for n, keys, at, seqs in found:
        dead = [row for pk, row, seq in zip(keys, at, seqs)
                if newest[pk] != seq or deleted.get(pk, -1) > seq or mt_deletes.get(pk, (-1,))[0] > seq]
        masks[n][dead] = False
    return masks


class LiveRows:
    """Each partition scope's live-row masks, kept while its segments and tombstones stay the same.

    Segments are immutable (a flush or a compaction makes new ones) and tombstones only grow or
    are collected, so the same segment objects and the same tombstones give the same answer:
    a store that was written and flushed once (trajsearch's ingest flushes) works it out once,
    not per search (a thousand keys with two versions took 1.5 ms a search at 10k rows). With
    unflushed rows or deletes in the memtable nothing is kept. Entries hang off the collection's
    memtable, which every flush replaces (weakly: a closed store leaves nothing behind), one per
    scope, the newest; the segments and tombstones are compared as well, and an entry holding
    segments a compaction replaced is let go at the next mask worked out.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_memtable: weakref.WeakKeyDictionary[Any, dict] = weakref.WeakKeyDictionary()

    def masks(self, memtable: Any, scope: frozenset | None, segments: Sequence[Any], sources: Sequence[_Source],
              deleted: dict[Any, int], mt_deletes: dict[Any, tuple], every_segment: Sequence[Any]) -> list[np.ndarray]:
        """The live-row masks of ``sources`` (``segments``, then the memtable's rows if any), kept or
        worked out; ``every_segment``: the collection's segments now, to let go of entries holding
        segments a compaction has replaced (they would keep the old files' vectors in memory)."""
        if len(sources) != len(segments) or mt_deletes:  # unflushed writes: worked out each time
            return live_masks(sources, deleted, mt_deletes)
        with self._lock:
            entry = self._by_memtable.get(memtable, {}).get(scope)
        if entry is not None and len(entry[0]) == len(segments) \
                and all(a is b for a, b in zip(entry[0], segments)) and entry[1] == deleted:
            return entry[2]
        masks = live_masks(sources, deleted, mt_deletes)
        for mask in masks:
            mask.flags.writeable = False  # shared by later searches: nobody may change one
        current = {id(segment) for segment in every_segment}
        with self._lock:
            entries = self._by_memtable.setdefault(memtable, {})
            for stale in [key for key, (kept, _, _) in entries.items() if any(id(s) not in current for s in kept)]:
                del entries[stale]
            entries[scope] = (tuple(segments), dict(deleted), masks)
        return masks


_live_rows = LiveRows()


def search_with_index(
    query_vectors: np.ndarray,
    segments: Iterable[Any],
    memtable: Any,
    delta_index: Any,
    top_k: int,
    metric_type: str,
    pk_field: str,
    vector_field: str,
    partition_names: list[str] | None = None,
    compiled_filter: Any = None,
    output_fields: list[str] | None = None,
    indexed_filter_plan: Any = None,
    project_record_fn: Callable[[dict], dict] | None = None,
    search_params: dict[str, Any] | None = None,
) -> list[list[dict]]:
    """``execute_search_with_index`` of milvus-lite 3.2.2: the same arguments and answers (see the module)."""
    from milvus_lite.index.brute_force import BruteForceIndex
    from milvus_lite.search.executor_indexed import execute_search_with_index

    if query_vectors.ndim == 1:
        query_vectors = query_vectors.reshape(1, -1)
    if query_vectors.dtype != np.float32:
        query_vectors = query_vectors.astype(np.float32, copy=False)
    nq = int(query_vectors.shape[0])
    if nq == 0 or top_k <= 0:
        return [[] for _ in range(nq)]

    partitions = set(partition_names) if partition_names else None
    segments = tuple(segments)
    # the partition first: ``num_rows`` is a property, and most segments of a store of many tenants are others'
    in_scope = [s for s in segments if (partitions is None or s.partition in partitions) and s.num_rows > 0]
    # the unflushed rows, with the table the filter is evaluated on only when there are some: the
    # engine builds an empty table of the schema otherwise, 150 us of every search of a flushed store
    snapshot = functools.partial(memtable.to_search_snapshot, vector_field=vector_field,
                                 partition_names=partition_names)
    mt_pks, mt_seqs, mt_vecs, mt_row_refs, mt_table = snapshot(
        include_table=compiled_filter is not None and memtable.size() > 0)
    if compiled_filter is not None and mt_pks and mt_table is None:  # rows written since: again, with their table
        mt_pks, mt_seqs, mt_vecs, mt_row_refs, mt_table = snapshot(include_table=True)
    if not in_scope and not mt_pks:
        return [[] for _ in range(nq)]

    if any(len(s.pk_to_row) != s.num_rows for s in in_scope):
        # a key twice in one segment (flush and compaction write one row per key): the engine's own walk decides
        return execute_search_with_index(
            query_vectors, in_scope, memtable, delta_index, top_k, metric_type, pk_field, vector_field,
            partition_names, compiled_filter, output_fields, indexed_filter_plan, project_record_fn, search_params)
    sources = [_Source(s.pks, s.seqs, s.pk_to_row) for s in in_scope]
    if mt_pks:
        sources.append(_Source(mt_pks, mt_seqs, {pk: i for i, pk in enumerate(mt_pks)}))
    masks = _live_rows.masks(memtable, partitions and frozenset(partitions), in_scope, sources,
                             getattr(delta_index, "_map"), memtable.delete_index_snapshot(), segments)

    # per source: the live rows that pass the filter (and have a vector), then its top_k
    candidates: list[list[tuple[float, int, int]]] = [[] for _ in range(nq)]

    def recall(source_idx: int, vectors: np.ndarray, mask: np.ndarray, index: Any) -> None:
        if not mask.any():
            return
        index = index if index is not None else BruteForceIndex.build(vectors, metric_type)
        if type(index) is BruteForceIndex and mask.all():
            ids, dists = nearest_of_all(index, query_vectors, top_k)
        else:
            ids, dists = index.search(query_vectors, top_k, valid_mask=None if mask.all() else mask,
                                      params=search_params)
        for q in range(nq):
            for j in range(top_k):
                lid = int(ids[q, j])
                if lid < 0:
                    break
                candidates[q].append((float(dists[q, j]), source_idx, lid))

    for i, seg in enumerate(in_scope):
        vectors, has_vector = seg.vector_data(vector_field)
        mask = masks[i]
        if compiled_filter is not None:
            mask = mask & segment_filter(seg, compiled_filter, indexed_filter_plan)
        if has_vector is not None:
            mask = mask & has_vector.astype(bool)
        recall(i, vectors, mask, seg.indexes.get(vector_field))
    if mt_pks:
        mask = masks[-1]
        if compiled_filter is not None and mt_table is not None:
            mask = mask & table_filter(compiled_filter, mt_table)
        recall(len(in_scope), mt_vecs, mask, None)

    project = project_record_fn or _projection(output_fields, pk_field, vector_field)
    chosen = []
    for found in candidates:
        found.sort()  # by (distance, source, row): the engine's order, ties included
        chosen.append(found[:top_k])
    wanted: dict[int, set[int]] = {}
    for found in chosen:
        for _, source_idx, local_id in found:
            wanted.setdefault(source_idx, set()).add(local_id)
    read: dict[tuple[int, int], tuple[Any, dict]] = {}  # (source, row) -> (key, entity)
    for source_idx, local_ids in wanted.items():
        order = sorted(local_ids)
        if source_idx < len(in_scope):
            hits = read_hits(in_scope[source_idx], order, pk_field, output_fields, project)
        else:
            hits = []
            for local_id in order:
                record = memtable.materialize_row(*mt_row_refs[local_id])
                hits.append((record[pk_field] if pk_field in record else mt_pks[local_id], project(record)))
        read.update(((source_idx, local_id), hit) for local_id, hit in zip(order, hits))
    results: list[list[dict]] = []
    for found in chosen:
        hits = []
        for dist, source_idx, local_id in found:
            pk, entity = read[(source_idx, local_id)]  # a row found by two queries: each its own copy, as there
            hits.append({"id": pk, "distance": dist, "entity": entity if nq == 1 else copy.deepcopy(entity)})
        results.append(hits)
    return results


def segment_filter(segment: Any, compiled: Any, plan: Any) -> np.ndarray:
    """The engine's ``evaluate_segment_filter``: its scalar indexes where they cover the filter,
    else :func:`table_filter` over the segment's rows."""
    from milvus_lite.search.indexed_filter import evaluate_segment_filter

    if plan is not None and plan.required_fields <= segment.scalar_indexes.keys():
        return evaluate_segment_filter(segment, compiled, plan).astype(bool)
    return table_filter(compiled, segment.table)


def table_filter(compiled: Any, table: Any) -> np.ndarray:
    """The engine's ``evaluate_mask``, with :func:`columnar_filter` where it applies."""
    from milvus_lite.search.filter import evaluate_mask

    found = columnar_filter(compiled, table)
    return found if found is not None else evaluate_mask(compiled, table).astype(bool)


def columnar_filter(compiled: Any, table: Any) -> np.ndarray | None:
    """A filter the engine evaluates row by row because it tests array membership
    (``array_contains``, ``_any``, ``_all``: e.g. the ``tools`` filter), evaluated column-wise with
    the same result; None where this cannot promise that (then the engine evaluates it).

    The engine's row-wise backend turns the whole table into Python dicts first, vectors and texts
    included: 1.9-2.5 s per search in a 44k-row tenant. Here an array test is a membership test
    over the flattened lists (a row with no list matches nothing, as there), ``and``/``or``/``not``
    combine masks, and every other part goes to the engine's own column backend, only over
    fields that cannot be null (so no three-valued logic can make the two backends differ).
    """
    if getattr(compiled, "backend", None) != "python":
        return None
    try:
        return _mask(compiled.ast, table, compiled.fields)
    except _NotColumnar:
        return None


class _NotColumnar(Exception):
    """A part of a filter that :func:`columnar_filter` leaves to the engine."""


def _mask(node: Any, table: Any, fields: dict[str, Any]) -> np.ndarray:
    from milvus_lite.search.filter import ast

    if isinstance(node, ast.And):
        return np.logical_and.reduce([_mask(part, table, fields) for part in node.operands])
    if isinstance(node, ast.Or):
        return np.logical_or.reduce([_mask(part, table, fields) for part in node.operands])
    if isinstance(node, ast.Not):
        return ~_mask(node.operand, table, fields)
    if isinstance(node, ast.ArrayContainsOp):
        return _contains(node, table)
    if not _plain_fields(node, fields):
        raise _NotColumnar
    import pyarrow as pa
    import pyarrow.compute as pc
    from milvus_lite.search.filter.eval.arrow_backend import _eval

    try:
        result = _eval(node, table)
    except Exception as exc:  # a node the column backend does not know
        raise _NotColumnar from exc
    if isinstance(result, pa.Scalar) or not pa.types.is_boolean(result.type):
        raise _NotColumnar
    return np.asarray(pc.fill_null(result, False).to_numpy(zero_copy_only=False), dtype=bool)


def _plain_fields(node: Any, fields: dict[str, Any]) -> bool:
    """Whether every field ``node`` reads is a schema field that cannot be null (and it reads no
    dynamic or JSON path)."""
    from milvus_lite.search.filter import ast

    if isinstance(node, ast.FieldRef):
        info = fields.get(node.name)
        return info is not None and not info.nullable
    if isinstance(node, (ast.MetaAccess, ast.PathAccess, ast.ArrayContainsOp)):
        return False
    children = [getattr(node, name) for name in getattr(node, "__dataclass_fields__", {}) if name != "pos"]
    return all(_plain_fields(child, fields) for value in children
               for child in (value if isinstance(value, tuple) else (value,)) if hasattr(child, "pos"))


def _contains(node: Any, table: Any) -> np.ndarray:
    """``array_contains(f, v)``, ``array_contains_any(f, [..])``, ``array_contains_all(f, [..])`` on
    a list column of strings or integers, with literal values."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from milvus_lite.search.filter import ast

    if not isinstance(node.value, ast.FieldRef) or node.value.name not in table.column_names:
        raise _NotColumnar
    literals = node.values.elements if isinstance(node.values, ast.ListLit) else (node.values,)
    column = table.column(node.value.name).combine_chunks()
    if not pa.types.is_list(column.type) and not pa.types.is_large_list(column.type):
        raise _NotColumnar
    kind = column.type.value_type
    if not all((isinstance(v, ast.StringLit) and pa.types.is_string(kind))
               or (isinstance(v, ast.IntLit) and not isinstance(v.value, bool) and pa.types.is_integer(kind))
               for v in literals):
        raise _NotColumnar
    values, rows = pc.list_flatten(column), pc.list_parent_indices(column).to_numpy()

    def rows_holding(targets: list[Any]) -> np.ndarray:
        held = np.zeros(len(table), dtype=bool)
        hit = pc.is_in(values, value_set=pa.array(targets, type=kind)).to_numpy(zero_copy_only=False)
        held[rows[np.asarray(hit, dtype=bool)]] = True
        return held

    targets = [v.value for v in literals]
    if not targets:  # the engine's answer differs for rows without a list: leave it to the engine
        raise _NotColumnar
    if node.mode == "all":
        return np.logical_and.reduce([rows_holding([t]) for t in dict.fromkeys(targets)])
    return rows_holding(targets)


def nearest_of_all(index: Any, queries: np.ndarray, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """``BruteForceIndex.search`` with every row valid, on the index's own matrix: the engine
    first copies it whole (``vectors[arange(n)]``, 15 ms at 44k rows for a 1.4 ms product).
    Same shape and values, so the same distances bit for bit, and the same selection."""
    from milvus_lite.search.distance import compute_distances

    nq, n = int(queries.shape[0]), index.num_vectors
    ids = np.full((nq, top_k), -1, dtype=np.int64)
    dists = np.full((nq, top_k), np.inf, dtype=np.float32)
    if n == 0:
        return ids, dists
    every = compute_distances(queries, index._vectors, index.metric)
    every = every.reshape(1, -1) if every.ndim == 1 else every
    k = min(top_k, n)
    for q in range(nq):
        row = every[q]
        if k < n:
            part = np.argpartition(row, k - 1)[:k]
            order = part[np.argsort(row[part])]
        else:
            order = np.argsort(row)
        ids[q, :k] = order[:k]
        dists[q, :k] = row[order[:k]]
    return ids, dists


def read_hits(segment: Any, rows: list[int], pk_field: str, output_fields: list[str] | None,
              project: Callable[[dict], dict]) -> list[tuple[Any, dict]]:
    """Each hit row's key and entity (the fields asked for, the key not among them: the engine's
    search projection). When every field asked for is a column of the segment, only those columns
    (:func:`read_records`); else the engine's way, every column of each row (``row_to_dict``) projected.
    The engine reads every column, the 384 floats of the vector included, scalar by scalar, then
    drops what was not asked for: 9 ms for the 100 rows a grouped search of 10 runs reads."""
    names = set(output_fields or ()) | {pk_field}
    columns = set(segment.table.schema.names) - {"_seq", "$meta"}
    if output_fields is None or not columns.issuperset(names):
        found = []
        for row in rows:
            record = segment.row_to_dict(row)
            found.append((record[pk_field] if pk_field in record else segment.pks[row], project(record)))
        return found
    shown = [name for name in segment.table.schema.names if name in names and name != pk_field]
    records = read_records(segment.table, rows, [pk_field, *shown])
    return [(record.pop(pk_field), record) for record in records]


#: Fewer rows than this of one segment are read cell by cell: an Arrow ``take`` of the 22 display
#: fields costs ~0.3 ms whatever its size, a row read cell by cell ~35 us (one row 305 -> 76 us,
#: even at ~12 rows; measured on scripts/bench_hybrid.py's 100k-row store, whose ~40 segments
#: hold one or two of a hybrid search's rows by key each).
CELL_BY_CELL = 10


def read_records(table: Any, rows: list[int], names: list[str]) -> list[dict]:
    """The ``names`` fields of ``rows`` of an Arrow table, one dict each, keys in ``names``' order
    (``table.take(rows).select(names).to_pylist()``: the same values, read the cheaper way). A take
    copies only the columns asked for: taking every column first made a take of a run and text 3x dearer."""
    if len(rows) >= CELL_BY_CELL:
        return table.select(names).take(rows).to_pylist()
    columns = _columns_of(table)
    return [{name: columns[name][row].as_py() for name in names} for row in rows]


_COLUMNS: dict[int, tuple[weakref.ref, dict[str, Any]]] = {}


def _columns_of(table: Any) -> dict[str, Any]:
    """A segment table's columns by name, looked up once while the table lives: a lookup costs
    ~1 us a column, as much as reading a cell (segment tables are never changed in place)."""
    key = id(table)
    entry = _COLUMNS.get(key)
    if entry is not None and entry[0]() is table:
        return entry[1]
    columns = dict(zip(table.column_names, table.columns))
    _COLUMNS[key] = (weakref.ref(table, lambda _, key=key: _COLUMNS.pop(key, None)), columns)
    return columns


def _projection(output_fields: list[str] | None, pk_field: str, vector_field: str) -> Callable[[dict], dict]:
    if output_fields is None:
        return lambda record: {k: v for k, v in record.items() if k not in (pk_field, vector_field)}
    keep = set(output_fields) - {pk_field}
    return lambda record: {k: record[k] for k in keep if k in record}


def get_rows(collection: Any, pks: list[Any], output_fields: list[str] | None,
             partition_names: Sequence[str] | None = None) -> list[dict]:
    """``collection.get(pks, partition_names, output_fields=output_fields)`` of milvus-lite 3.2.2, the
    same rows in the same order, with each segment's hits read as the fields asked for (:func:`read_records`),
    and only the segments of ``partition_names`` (names of no partition match nothing) looked in.

    The engine builds each row scalar by scalar, every column (the vector's 384 floats
    included), then drops what was not asked for: 2.3 ms for the 45 rows a ``context_for`` reads
    at 10k rows, 0.85 ms in one take per segment. Which version of a key is live is decided as
    there: the memtable's row, else none if the memtable deleted it, else the segments' newest
    version unless a tombstone is newer. Anything else (dynamic fields, fields that are not
    columns, another engine, the executor uninstalled) is the engine's own ``get``."""
    from milvus_lite.engine.projection import build_projection_plan, project_record

    schema = collection._schema
    columns = [f.name for f in schema.fields]
    if not installed() or output_fields is None or schema.enable_dynamic_field \
            or not set(output_fields) <= set(columns) or not _is_known(type(collection).get, _REPLACES_GET):
        return collection.get(pks, partition_names=list(partition_names) if partition_names else None,
                              output_fields=output_fields)
    collection._require_loaded()
    partitions = set(partition_names) if partition_names else None
    pk_field, memtable = collection._pk_name, collection._memtable
    plan = build_projection_plan(output_fields, schema, api_kind="get")
    wanted = [*plan.response_schema_fields, *([pk_field] if pk_field not in plan.response_schema_fields else [])]
    segments, tombstones = collection._read_snapshot()
    if partitions is not None:  # a key is looked up in every segment: at 400 segments, 0.26 ms for 10 keys
        segments = [segment for segment in segments if segment.partition in partitions]
    found: list[Any] = [None] * len(pks)  # per key: its row (from the memtable), or (segment, row), or None
    for i, pk in enumerate(pks):
        row = memtable.get(pk, partition_filter=partitions)
        if row is not None:
            found[i] = project_record(row, schema, plan)
            continue
        if memtable.is_locally_deleted(pk):
            continue
        best, best_seq = None, -1
        for segment in segments:
            at = segment.pk_to_row.get(pk)  # Segment.find_row, without a call per segment and key
            if at is not None and int(segment.seqs[at]) > best_seq:
                best, best_seq = (segment, at), int(segment.seqs[at])
        if best is not None and not tombstones.is_deleted(pk, best_seq):
            found[i] = best
    by_segment: dict[int, list[int]] = {}
    for i, place in enumerate(found):
        if isinstance(place, tuple):
            by_segment.setdefault(id(place[0]), []).append(i)
    for positions in by_segment.values():
        segment = found[positions[0]][0]
        present = set(segment.table.schema.names)
        records = read_records(segment.table, [found[i][1] for i in positions], [n for n in wanted if n in present])
        for i, row in zip(positions, records):
            found[i] = row
    return [row for row in found if row is not None]
