"""The lexical index: tenant partitions, mutation under locks, base/delta rebuilds, save and load."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import scipy.sparse as sp

from ..filters import Filters
from ..tokenize import TOKENIZER_VERSION, tokenize, tokenize_query
from .bulk import _BULK_BATCH, _Bulk, _Staged
from .columns import _COLUMNS, _Columns, _Counts, _Meta, _TRAJECTORY, _meta
from .segment import B, K1, PART_WEIGHT, _Segment, _TF_MAX, _View, _pending_triplets


#: Changed rows a delta segment may hold before the base is rebuilt.
_DELTA_MIN, _DELTA_SHARE = 500, 0.01


_FORMAT = "trajsearch-lexical/2"


@dataclass
class _Partition:
    rows: dict[str, _Meta] = field(default_factory=dict)
    by_trajectory: dict[str, set[str]] = field(default_factory=dict)
    vocab: dict[str, int] = field(default_factory=dict)
    version: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # id -> version of a change not in base
    pending: dict[str, _Counts] = field(default_factory=dict)  # counts of changed rows not in base
    base: _Segment | None = None
    view: _View | None = None
    build_lock: threading.Lock = field(default_factory=threading.Lock)
    vocab_lock: threading.Lock = field(default_factory=threading.Lock)


def _bytes(items: Iterable[str], what: str) -> np.ndarray:
    items = list(items)
    joined = "\0".join(items)
    if joined.count("\0") != max(len(items) - 1, 0):
        raise ValueError(f"a {what} contains NUL; cannot save the lexical index")
    return np.frombuffer(joined.encode("utf-8", "surrogatepass"), dtype=np.uint8)


def _strings(data: np.ndarray) -> list[str]:
    text = bytes(data).decode("utf-8", "surrogatepass")
    return text.split("\0") if text else []


class LexicalIndex:
    """BM25 over index rows, one partition per tenant; thread-safe.

    Rows are mappings with ``id``, ``tenant``, ``text`` and the filterable fields
    ``level``, ``outcome``, ``env_version``, ``policy_version``, ``task_family``,
    ``trajectory_id``, ``tools`` (list of str) and ``created_at`` (epoch seconds).
    Scores are BM25 with query-term weights (1 for what the query says: whole
    chunks and bigrams; ``part_weight`` for their parts, see
    :func:`~trajsearch.store.tokenize.tokenize_query`), times coordination when
    ``coord``. The tokenizers and parameters are swappable for experiments.
    """

    def __init__(self, tokenizer: Callable[[str], list[str]] = tokenize,
                 query_tokenizer: Callable[[str], tuple[list[str], list[str]]] = tokenize_query,
                 *, part_weight: float = PART_WEIGHT, coord: bool = True, k1: float = K1, b: float = B) -> None:
        self._tokenize = tokenizer
        self._tokenize_query = query_tokenizer
        self._part_weight = part_weight
        self._coord = coord
        self._k1, self._b = k1, b
        self._lock = threading.Lock()  # guards _parts, _tenant_of and partition contents
        self._parts: dict[str, _Partition] = {}
        self._tenant_of: dict[str, str] = {}

    @classmethod
    def from_rows(cls, rows: Iterable[Mapping[str, Any]], tokenizer: Callable[[str], list[str]] = tokenize,
                  query_tokenizer: Callable[[str], tuple[list[str], list[str]]] = tokenize_query, *,
                  batch: int = _BULK_BATCH, **kwargs: Any) -> LexicalIndex:
        """An index of ``rows``, built in one pass: the same index as :meth:`upsert` of them
        into an empty one, then :meth:`refresh`, several times faster.

        Rows are counted ``batch`` at a time (see :class:`_Bulk`) and each tenant's base
        segment is built once at the end; nothing is merged along the way. A row whose id
        comes again is replaced, keeping its first place, as :meth:`upsert` does.
        """
        index = cls(tokenizer, query_tokenizer, **kwargs)
        bulk = _Bulk(tokenizer)
        staged: dict[str, _Staged] = {}
        latest: dict[str, tuple[str, int]] = {}  # id -> (tenant, its row there)
        arrived = 0
        it = iter(rows)
        while chunk := list(islice(it, batch)):
            arrival = [(str(r["id"]), str(r["tenant"])) for r in chunk]
            order = sorted(range(len(chunk)), key=lambda i: arrival[i][1])  # stable: tenants contiguous, in order
            row, gid, tf, lengths = bulk.count([chunk[i].get("text") or "" for i in order])
            tenants = [arrival[i][1] for i in order]
            starts = [k for k in range(len(order)) if k == 0 or tenants[k] != tenants[k - 1]] + [len(order)]
            cuts = np.searchsorted(row, starts)
            at = [0] * len(chunk)  # each row's place in its tenant
            for k in range(len(starts) - 1):
                start, end, tenant = starts[k], starts[k + 1], tenants[starts[k]]
                stage = staged.setdefault(tenant, _Staged())
                first = len(stage.ids)
                for pos, i in enumerate(order[start:end], first):
                    rid = arrival[i][0]
                    stage.ids.append(rid)
                    stage.metas.append(_meta(chunk[i]))
                    stage.first.setdefault(rid, pos)
                    at[i] = pos
                stage.chunks.append((row[cuts[k]:cuts[k + 1]] + (first - start), gid[cuts[k]:cuts[k + 1]],
                                     tf[cuts[k]:cuts[k + 1]]))
                stage.lengths.append(lengths[start:end])
            for (rid, tenant), pos in zip(arrival, at):  # in arrival order: the last one wins
                latest[rid] = (tenant, pos)
            arrived += len(chunk)
        current: dict[str, list[tuple[int, int]]] | None = None
        if len(latest) < arrived:  # ids came again: keep each one's latest row, in its first place
            current = {}
            for rid, (tenant, pos) in latest.items():
                current.setdefault(tenant, []).append((staged[tenant].first[rid], pos))
        terms = bulk.terms()
        for tenant, stage in staged.items():
            keep = None if current is None else np.array([p for _, p in sorted(current.get(tenant, []))], np.int64)
            index._install(tenant, stage, keep, terms)
        return index

    def _install(self, tenant: str, stage: _Staged, keep: np.ndarray | None, terms: np.ndarray) -> None:
        """Make a staged tenant a partition with a fresh base (``keep``: its rows to keep, in order)."""
        rows = np.concatenate([c[0] for c in stage.chunks])
        gids = np.concatenate([c[1] for c in stage.chunks])
        tf = np.concatenate([c[2] for c in stage.chunks])
        stage.chunks.clear()
        doc_len = np.concatenate(stage.lengths).astype(np.float64)
        ids, metas = stage.ids, stage.metas
        if keep is not None:
            if not len(keep):
                return
            new = np.full(len(ids), -1, np.int64)
            new[keep] = np.arange(len(keep))
            rows = new[rows]
            m = rows >= 0
            order = np.argsort(rows[m], kind="stable")  # rows ascending again, terms in order within
            rows, gids, tf = rows[m][order], gids[m][order], tf[m][order]
            ids, metas, doc_len = [ids[i] for i in keep], [metas[i] for i in keep], doc_len[keep]
        if 8 * len(gids) > len(terms):  # this tenant's vocabulary (as gids) and its local term ids
            used = np.flatnonzero(np.bincount(gids, minlength=len(terms)))
            local = np.zeros(len(terms), np.int32)
            local[used] = np.arange(len(used), dtype=np.int32)
            cols = local[gids]
        else:  # a small tenant: no pass over the whole build's terms
            ordered = np.sort(gids)
            used = ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered
            cols = np.searchsorted(used, gids).astype(np.int32)
        seg = _Segment.build(ids, _Columns.of(metas), doc_len, rows.astype(np.int32, copy=False), cols, tf, len(used))
        part = _Partition(vocab=dict(zip(terms[used].tolist(), range(len(used)))), base=seg)
        part.rows = dict(zip(ids, metas))
        for rid, m in part.rows.items():
            part.by_trajectory.setdefault(m.fields[_TRAJECTORY], set()).add(rid)
        part.view = _View(0, seg, None, None, self._k1, self._b)
        with self._lock:
            self._parts[tenant] = part
            self._tenant_of.update(dict.fromkeys(ids, tenant))

    # -- mutation -----------------------------------------------------------------

    def upsert(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add or replace rows by ``id``; returns how many. Tokenises outside the lock."""
        tok = self._tokenize
        prepared: list[tuple[str, str, _Meta, list[str], np.ndarray, int]] = []
        for r in rows:
            tokens = tok(r.get("text") or "")
            counts = Counter(tokens)
            tf = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
            np.minimum(tf, _TF_MAX, out=tf)
            prepared.append((str(r["id"]), str(r["tenant"]), _meta(r), list(counts), tf.astype(np.uint16),
                             len(tokens)))
        return self._apply(prepared)

    def _apply(self, prepared: list[tuple[str, str, _Meta, list[str], np.ndarray, int]]) -> int:
        with self._lock:
            parts = {}
            for tenant in {p[1] for p in prepared}:
                part = self._parts.get(tenant)
                if part is None:
                    part = self._parts[tenant] = _Partition()
                parts[tenant] = part
        counted: list[_Counts] = []
        for rid, tenant, _, terms, tf, length in prepared:
            vocab = parts[tenant].vocab
            ids = list(map(vocab.get, terms))  # reading a dict needs no lock
            if None in ids:  # new terms: numbered under the tenant's vocabulary lock only
                new = [t for t, i in zip(terms, ids) if i is None]
                with parts[tenant].vocab_lock:
                    for t in new:
                        vocab.setdefault(t, len(vocab))
                ids = list(map(vocab.__getitem__, terms))
            counted.append(_Counts(np.array(ids, dtype=np.int32), tf, length))
        with self._lock:
            for (rid, tenant, meta, *_), counts in zip(prepared, counted):
                self._remove(rid)
                part = self._parts[tenant]
                part.rows[rid] = meta
                part.by_trajectory.setdefault(meta.fields[_TRAJECTORY], set()).add(rid)
                part.version += 1
                part.changed[rid] = part.version
                part.pending[rid] = counts
                self._tenant_of[rid] = tenant
        return len(prepared)

    def delete(self, ids: Iterable[str]) -> int:
        """Remove rows by id (unknown ids are ignored); returns how many were removed."""
        with self._lock:
            return sum(self._remove(rid) for rid in ids)

    def delete_where(self, tenant: str, trajectory_id: str) -> int:
        """Remove every row of one trajectory in one tenant; returns how many."""
        with self._lock:
            part = self._parts.get(tenant)
            ids = list(part.by_trajectory.get(trajectory_id, ())) if part else []
            return sum(self._remove(rid) for rid in ids)

    def _remove(self, rid: str) -> bool:
        tenant = self._tenant_of.pop(rid, None)
        if tenant is None:
            return False
        part = self._parts[tenant]
        meta = part.rows.pop(rid)
        part.pending.pop(rid, None)
        traj = meta.fields[_TRAJECTORY]
        members = part.by_trajectory.get(traj)
        if members is not None:
            members.discard(rid)
            if not members:
                del part.by_trajectory[traj]
        part.version += 1
        part.changed[rid] = part.version
        return True

    # -- reading ------------------------------------------------------------------

    def search(self, query: str, filters: Filters, limit: int = 10, *, widen: bool = True) -> list[tuple[str, float]]:
        """Ids and scores of rows matching ``filters``, best first; rows without a query term left out.
        ``widen``: a long query short of ``limit`` rows on its most telling terms is scored on more
        (off where another leg fills the places: hybrid search)."""
        primary, parts = self._tokenize_query(query)
        if not (primary or parts) or limit <= 0:
            return []
        got = self._view(filters.tenant)
        if got is None:
            return []
        view, vocab = got
        weights = {t: self._part_weight for t in parts} if self._part_weight else {}
        weights.update((t, 1.0) for t in primary)
        return view.search(weights, vocab, self._coord, filters, limit, widen)

    def refresh(self, tenant: str | None = None) -> None:
        """Fold pending changes into a full rebuild now (one tenant, or all)."""
        with self._lock:
            tenants = [tenant] if tenant is not None else list(self._parts)
        for name in tenants:
            self._view(name, full=True)

    def _view(self, tenant: str, full: bool = False) -> tuple[_View, dict[str, int]] | None:
        """The tenant's view at its current version, building what changed first."""
        with self._lock:
            part = self._parts.get(tenant)
            if part is None:
                return None
            if not part.rows:  # free the builds of an emptied tenant
                part.base, part.view = None, None
                part.changed.clear()
                part.pending.clear()
                return None
            view, version = part.view, part.version
            if view is not None and view.version == version and (view.clean or not full):
                return view, part.vocab
            base = part.base
            full = full or base is None or len(part.changed) > max(_DELTA_MIN, int(_DELTA_SHARE * len(base)))
            changed = [rid for rid in part.changed if rid in part.rows]
            items = [(rid, part.rows[rid], part.pending[rid]) for rid in changed]
            keep = None
            if base is not None:
                dead = [base.pos[rid] for rid in part.changed if rid in base.pos]
                if dead:
                    alive = np.ones(len(base), dtype=bool)
                    alive[dead] = False
                    keep = np.flatnonzero(alive)
            if full:
                kept_ids = [] if base is None else base.ids if keep is None else [base.ids[i] for i in keep.tolist()]
                kept = [part.rows[rid] for rid in kept_ids]
                n_terms = len(part.vocab)
        with part.build_lock:  # one build per tenant at a time; other tenants carry on
            current = part.view
            if current is not None and current.version >= version and (current.clean or not full):
                return current, part.vocab
            if full:
                new = self._build_base(base, keep, kept_ids, kept, items, n_terms)
                view = _View(version, new, None, None, self._k1, self._b)
                with self._lock:
                    part.base = new
                    part.changed = {rid: v for rid, v in part.changed.items() if v > version}
                    part.pending = {rid: c for rid, c in part.pending.items() if rid in part.changed}
                    part.view = view
                return view, part.vocab
            alive = None
            if keep is not None:
                alive = np.zeros(len(base), dtype=bool)
                alive[keep] = True
            delta = None
            if items:
                rows, cols, tf = _pending_triplets([c for _, _, c in items], 0)
                delta = _Segment.build([rid for rid, _, _ in items], _Columns.of([m for _, m, _ in items]),
                                       np.array([c.length for _, _, c in items], dtype=np.float64),
                                       rows, cols, tf, None)
            view = _View(version, base, alive, delta, self._k1, self._b)
            with self._lock:
                if part.view is None or part.view.version < version:
                    part.view = view
            return view, part.vocab

    @staticmethod
    def _build_base(base: _Segment | None, keep: np.ndarray | None, kept_ids: list[str], kept: list[_Meta],
                    items: list[tuple[str, _Meta, _Counts]], n_terms: int) -> _Segment:
        """A new base: the old base's current rows (from its arrays) plus the changed rows."""
        ids = list(kept_ids) + [rid for rid, _, _ in items]
        columns = _Columns.of(kept + [m for _, m, _ in items])
        lengths = np.array([c.length for _, _, c in items], dtype=np.float64)
        rows, cols, tf = _pending_triplets([c for _, _, c in items], 0)
        if base is None:
            return _Segment.build(ids, columns, lengths, rows, cols, tf, n_terms)
        indptr, brows, btf = base.indptr, base.rows, base.tf
        doc_len = base.doc_len
        if keep is not None:  # drop replaced and deleted rows, renumber the rest
            new = np.full(len(base), -1, dtype=np.int32)
            new[keep] = np.arange(len(keep), dtype=np.int32)
            brows = new[brows]
            m = brows >= 0
            kept_before = np.zeros(len(m) + 1, dtype=np.int64)
            np.cumsum(m, out=kept_before[1:])
            indptr, brows, btf, doc_len = kept_before[indptr], brows[m], btf[m], doc_len[keep]
        if len(indptr) - 1 < n_terms:  # terms first seen since the base was built
            indptr = np.concatenate([indptr, np.full(n_terms + 1 - len(indptr), indptr[-1], dtype=np.int64)])
        if len(tf):
            # Merge column by column: the new rows come after every kept row, so each
            # new entry goes at the end of its column (np.insert: O(nnz), no sort).
            add = sp.coo_matrix((tf, (rows, cols)), shape=(len(items), n_terms)).tocsc()
            at = np.repeat(indptr[1:], np.diff(add.indptr))
            brows = np.insert(brows, at, add.indices.astype(np.int32) + len(kept_ids))
            btf = np.insert(btf, at, add.data.astype(np.uint16))
            indptr = indptr + add.indptr
        return _Segment(ids, columns, np.concatenate([doc_len, lengths]), indptr.astype(np.int64, copy=False),
                        brows, btf, None)

    # -- persistence --------------------------------------------------------------

    @property
    def _tokenizer_id(self) -> str:
        t = self._tokenize
        return f"{getattr(t, '__module__', '')}.{getattr(t, '__qualname__', type(t).__name__)}:{TOKENIZER_VERSION}"

    def save(self, path: str | os.PathLike[str]) -> int:
        """Write the whole index to ``path`` (a ``.npz``, atomically); returns rows written.

        Each tenant is first folded into a fresh base. The file holds the state as of
        those builds: a caller that also writes concurrently must record which
        generation of the collection it matches.
        """
        self.refresh()
        arrays: dict[str, np.ndarray] = {}
        tenants: list[dict[str, Any]] = []
        total = 0
        with self._lock:
            snapshot = [(name, part.view, list(part.vocab)) for name, part in self._parts.items()
                        if part.rows and part.view is not None]
        for i, (name, view, terms) in enumerate(snapshot):
            seg = view.base
            if view.delta is not None or view.alive is not None:  # changed since refresh(): fold now
                got = self._view(name, full=True)
                if got is None:
                    continue
                seg = got[0].base
                with self._lock:
                    terms = list(self._parts[name].vocab)
            indptr = np.concatenate([seg.indptr, np.full(len(terms) - seg.n_cols, seg.indptr[-1], np.int64)])
            p = f"t{i}."
            arrays.update({
                p + "terms": _bytes(terms, "term"), p + "ids": _bytes(seg.ids, "row id"),
                p + "indptr": indptr, p + "rows": seg.rows, p + "tf": seg.tf, p + "doc_len": seg.doc_len,
                p + "created_at": seg.columns.created_at,
                p + "tool_rows": np.concatenate(list(seg.columns.tool_rows.values()) or [np.zeros(0, np.int32)]),
                p + "tool_counts": np.array([len(v) for v in seg.columns.tool_rows.values()], dtype=np.int64),
            })
            for name_col, _ in _COLUMNS:
                arrays[p + "col." + name_col] = seg.columns.codes[name_col][0]
            tenants.append(dict(name=name, tools=list(seg.columns.tool_rows),
                                values={c: list(seg.columns.codes[c][1]) for c, _ in _COLUMNS}))
            total += len(seg)
        meta = dict(format=_FORMAT, tokenizer=self._tokenizer_id, k1=self._k1, b=self._b, tenants=tenants)
        arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
        tmp = f"{os.fspath(path)}.tmp.npz"
        Path(tmp).unlink(missing_ok=True)  # a leftover keeps its mode: start afresh, 0600 (every tenant's terms)
        try:
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)  # atomic: a crash never leaves a half-written file
        except BaseException:  # a full disk: its half-written copy would keep the space the save lacked
            Path(tmp).unlink(missing_ok=True)
            raise
        return total

    @classmethod
    def load(cls, path: str | os.PathLike[str], tokenizer: Callable[[str], list[str]] = tokenize,
             query_tokenizer: Callable[[str], tuple[list[str], list[str]]] = tokenize_query,
             **kwargs: Any) -> LexicalIndex:
        """An index read from a :meth:`save` file, without any row text.

        Raises ``ValueError`` if the file was made by another format or tokenizer (its
        counts would then not match what this index computes), ``OSError`` if it
        cannot be read. The file holds counts only, so ``k1``/``b`` may differ.
        """
        index = cls(tokenizer, query_tokenizer, **kwargs)
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["meta"]).decode())
            if meta.get("format") != _FORMAT:
                raise ValueError(f"{path}: not a {_FORMAT} file")
            if meta.get("tokenizer") != index._tokenizer_id:
                raise ValueError(f"{path}: made with tokenizer {meta.get('tokenizer')!r}, "
                                 f"not {index._tokenizer_id!r}")
            for i, t in enumerate(meta["tenants"]):
                p = f"t{i}."
                ids = _strings(data[p + "ids"])
                terms = _strings(data[p + "terms"])
                tool_rows = np.split(data[p + "tool_rows"], np.cumsum(data[p + "tool_counts"])[:-1]) \
                    if len(t["tools"]) else []
                codes = {}
                for name, _ in _COLUMNS:
                    values = t["values"][name]
                    codes[name] = (data[p + "col." + name], {v: k for k, v in enumerate(values)})
                columns = _Columns(len(ids), codes, data[p + "created_at"], dict(zip(t["tools"], tool_rows)))
                seg = _Segment(ids, columns, data[p + "doc_len"], data[p + "indptr"], data[p + "rows"],
                               data[p + "tf"], None)
                part = _Partition(vocab=dict(zip(terms, range(len(terms)))), base=seg)
                part.rows = dict(zip(ids, columns.metas()))
                for rid, m in part.rows.items():
                    part.by_trajectory.setdefault(m.fields[_TRAJECTORY], set()).add(rid)
                part.view = _View(0, seg, None, None, index._k1, index._b)
                index._parts[t["name"]] = part
                index._tenant_of.update(dict.fromkeys(ids, t["name"]))
        return index

    # -- inspection ---------------------------------------------------------------

    def __len__(self) -> int:
        with self._lock:
            return len(self._tenant_of)

    def ids(self, tenant: str | None = None) -> list[str]:
        """All row ids, or those of one tenant."""
        with self._lock:
            if tenant is None:
                return list(self._tenant_of)
            part = self._parts.get(tenant)
            return list(part.rows) if part else []

    def tenants(self) -> list[str]:
        """Tenants that currently hold rows."""
        with self._lock:
            return [t for t, p in self._parts.items() if p.rows]
