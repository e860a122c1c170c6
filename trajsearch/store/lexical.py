"""In-process BM25 index per tenant, kept consistent with the Milvus collection.

Why not Milvus' own BM25: on milvus-lite 3.2.2 it costs 70-170 ms per query after
flush (seconds before) and computes IDF per segment. This index answers in
milliseconds and computes IDF per tenant. Milvus stays the source of truth: the
store rebuilds this index from the collection on open and mirrors every upsert and
delete into it.

Design:

* One partition per tenant: IDF is per tenant, and a query can only ever score
  its own tenant's rows (isolation is structural, not a filter).
* BM25 is ``rank_bm25_rs.BM25Plus`` with ``delta=0``: that is classic BM25 with
  ``idf = ln((N + 1) / df)``, almost Lucene's ``ln((N + 1) / (df + 0.5))`` and
  always positive. ``BM25Okapi`` from rank_bm25 gives a term found in half of a
  small tenant's rows an IDF of 0 (and negative ones are floored to a fraction of
  the average), so in a two-row tenant ``exit code 1`` could not beat
  ``exit code 137``. With ``delta=0`` a row holding no query term scores exactly 0.
* Scoring on top of BM25 (each measured in ``scripts/bench_lexical.py --quality``):
  query parts (``module`` in ``ModuleNotFoundError``) weigh ``PART_WEIGHT``,
  ``b`` is 0.5, and the best candidates are re-ranked by coordination (the
  weighted share of query terms a row holds), so the row holding a whole error
  line beats a shorter row holding most of it.
* rank_bm25 indexes are immutable and rebuilding one costs seconds at 100k rows of
  a few hundred tokens, so a tenant is a large *base* segment plus, after changes,
  a small *delta* segment: changed rows are masked out of the base and served,
  in their current version, from the delta, scored with the base's IDF and
  average length. Both are built lazily on the next search. When the delta
  outgrows ``max(_DELTA_MIN, _DELTA_SHARE * N)`` rows the next search rebuilds
  the base from cached token lists (no re-tokenisation); :meth:`LexicalIndex.refresh`
  does it on demand, e.g. from a maintenance thread after an ingest batch.
  A search always reflects every mutation that finished before it started.
* Filters run as numpy masks over per-segment columns (dictionary-encoded
  strings, an ``int64`` ``created_at``, a tool -> rows posting list), with the
  same semantics as :meth:`Filters.matches`.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, Callable, Iterable, Mapping

import numpy as np
from rank_bm25_rs import BM25Plus

from .filters import Filters
from .tokenize import TOKENIZER_VERSION, tokenize, tokenize_query

__all__ = ["LexicalIndex"]

#: Single-valued string columns a filter can constrain, with their Filters attribute.
_COLUMNS = (
    ("level", "levels"),
    ("outcome", "outcomes"),
    ("env_version", "env_versions"),
    ("policy_version", "policy_versions"),
    ("task_family", "task_families"),
    ("trajectory_id", "trajectory_ids"),
)
_TRAJECTORY = 5  # position of trajectory_id in _COLUMNS
#: BM25 k1 and b. b is below the textbook 0.75 because whole+parts expansion
#: inflates the length of path- and code-heavy rows, which full length
#: normalisation would then over-penalise.
K1, B = 1.5, 0.5
#: Query weight of token parts relative to whole chunks and bigrams.
PART_WEIGHT = 0.3
#: Coordination re-ranks this many BM25 candidates per requested result (at least _POOL_MIN).
_POOL_FACTOR, _POOL_MIN = 10, 100
#: Most query terms scored (each costs a pass over the tenant's rows).
_MAX_TERMS = 24
#: Changed rows a delta segment may hold before the base is rebuilt.
_DELTA_MIN, _DELTA_SHARE = 500, 0.01
_NUMPY_DEFAULT_ERRSTATE = dict(divide="warn", over="warn", under="ignore", invalid="warn")


@dataclass(frozen=True, slots=True)
class _Row:
    tokens: tuple[str, ...]
    fields: tuple[Any, ...]  # values of _COLUMNS, in order
    tools: tuple[str, ...]
    created_at: int
    digest: int  # of the text: a saved token list is reused only for the same text


def _digest(text: str) -> int:
    raw = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little")


class _Segment:
    """An immutable BM25 index plus filter columns over a fixed list of rows."""

    def __init__(self, items: list[tuple[str, _Row]], k1: float, b: float) -> None:
        self.ids = [rid for rid, _ in items]
        self.pos = {rid: i for i, rid in enumerate(self.ids)}
        rows = [row for _, row in items]
        corpus = [row.tokens for row in rows]
        self.doc_len = np.fromiter(map(len, corpus), dtype=np.float64, count=len(corpus))
        self.bm25 = BM25Plus(corpus, k1=k1, b=b, delta=0.0) if self.doc_len.any() else None
        self.avgdl = float(self.bm25.avgdl) if self.bm25 is not None else 0.0
        self.columns: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}
        for i, (name, _) in enumerate(_COLUMNS):
            vocab: dict[Any, int] = {}
            codes = np.fromiter((vocab.setdefault(r.fields[i], len(vocab)) for r in rows),
                                dtype=np.int32, count=len(rows))
            self.columns[name] = (codes, vocab)
        self.created_at = np.fromiter((r.created_at for r in rows), dtype=np.int64, count=len(rows))
        postings: dict[str, list[int]] = {}
        for pos, row in enumerate(rows):
            for tool in row.tools:
                postings.setdefault(tool, []).append(pos)
        self.tool_rows = {t: np.asarray(p, dtype=np.int64) for t, p in postings.items()}

    def __len__(self) -> int:
        return len(self.ids)

    def _isin(self, name: str, values: tuple[str, ...]) -> np.ndarray | None:
        """Mask of rows whose ``name`` is one of ``values``; None if no row can match."""
        codes, vocab = self.columns[name]
        wanted = [vocab[v] for v in set(values) if v in vocab]
        if not wanted:
            return None
        return codes == wanted[0] if len(wanted) == 1 else np.isin(codes, wanted)

    def mask(self, f: Filters) -> np.ndarray | None:
        """Rows satisfying ``f`` (tenant aside: the partition is the tenant); None if none."""
        mask = np.ones(len(self.ids), dtype=bool)
        for name, attr in _COLUMNS:
            values = getattr(f, attr)
            if values:
                m = self._isin(name, values)
                if m is None:
                    return None
                mask &= m
        if f.exclude_trajectory_ids:
            m = self._isin("trajectory_id", f.exclude_trajectory_ids)
            if m is not None:
                mask &= ~m
        if f.tools:
            tmask = np.zeros(len(self.ids), dtype=bool)
            for tool in set(f.tools):
                pos = self.tool_rows.get(tool)
                if pos is not None:
                    tmask[pos] = True
            mask &= tmask
        if f.created_after is not None:
            mask &= self.created_at >= f.created_after
        return mask

    # rank_bm25_rs' Rust index answers idf and tf look-ups in O(1) without copying the
    # vocabulary; the fallbacks cover an index built by rank_bm25's Python code.

    def idf(self, term: str) -> float | None:
        """BM25 idf of ``term`` here, None if no row holds it."""
        if self.bm25 is None:
            return None
        core = self.bm25._core
        return core.idf_of(term) if core is not None else self.bm25.idf.get(term)

    def tfs(self, term: str, rows: list[int]) -> np.ndarray:
        core = self.bm25._core
        tfs = core.tfs(term, rows) if core is not None else [self.bm25.doc_freqs[i].get(term, 0) for i in rows]
        return np.asarray(tfs, dtype=np.float64)

    def scores(self, by_weight: dict[float, list[str]]) -> np.ndarray:
        """Weighted BM25 of every row, from the Rust index (one pass per term)."""
        # rank_bm25_rs quietly falls back to pure Python (100x slower) under any
        # non-default numpy error state, so pin the default for the call.
        with np.errstate(**_NUMPY_DEFAULT_ERRSTATE):
            return sum((w * self.bm25.get_scores(ts) for w, ts in by_weight.items() if ts),
                       np.zeros(len(self.ids)))


@dataclass(frozen=True)
class _View:
    """What searches read at one version: the base segment without the rows changed
    since it was built (``alive``), plus a delta segment with their current versions."""

    version: int
    base: _Segment
    alive: np.ndarray | None  # None: every base row is current
    delta: _Segment | None
    k1: float
    b: float

    @property
    def clean(self) -> bool:
        return self.alive is None and self.delta is None

    def idf(self, term: str) -> float | None:
        """The base's idf; a term only the delta holds gets ``ln((N + 1) / df)`` over both."""
        idf = self.base.idf(term)
        if idf is None and self.delta is not None:
            delta_idf = self.delta.idf(term)
            if delta_idf is not None:
                n = len(self.delta)
                df = max(1, round((n + 1) / math.exp(delta_idf)))
                idf = math.log((len(self.base) + n + 1) / df)
        return idf

    def _delta_scores(self, by_weight: dict[float, list[str]], idf: dict[str, float]) -> np.ndarray:
        """BM25 of the delta rows with the base's statistics (same formula as BM25Plus, delta=0)."""
        d = self.delta
        avgdl = self.base.avgdl or d.avgdl
        norm = self.k1 * (1 - self.b + self.b * d.doc_len / avgdl)
        rows = list(range(len(d)))
        scores = np.zeros(len(d))
        for w, terms in by_weight.items():
            for t in terms:
                if d.idf(t) is not None:
                    tf = d.tfs(t, rows)
                    scores += w * idf[t] * tf * (self.k1 + 1) / (tf + norm)
        return scores

    def search(self, weights: dict[str, float], coord: bool, f: Filters, limit: int) -> list[tuple[str, float]]:
        """Top ``limit`` rows for weighted query terms, among rows matching ``f``."""
        # BM25 costs one pass over the rows per query term, so score only terms the
        # tenant holds, and at most _MAX_TERMS of them, the most telling (weight x idf).
        idf = {t: v for t in weights if (v := self.idf(t)) is not None}
        terms = sorted(idf, key=lambda t: -weights[t] * idf[t])[:_MAX_TERMS]
        if not terms:
            return []
        total = sum(weights[t] for t in terms)
        found: list[tuple[float, int, int, str]] = []
        for rank, segment in enumerate((self.base, self.delta)):
            if segment is None or segment.bm25 is None:
                continue
            mask = segment.mask(f)
            if mask is None:
                continue
            held_terms = [t for t in terms if segment.idf(t) is not None]
            if not held_terms:
                continue
            by_weight: dict[float, list[str]] = {}
            for t in held_terms:
                by_weight.setdefault(weights[t], []).append(t)
            if segment is self.base:
                scores = segment.scores(by_weight)
                if self.alive is not None:
                    mask &= self.alive
            else:
                scores = self._delta_scores(by_weight, idf)
            hits = np.flatnonzero(mask & (scores > 0))
            if coord and len(terms) > 1:
                # Coordination: re-rank the best BM25 rows by the weighted share of
                # the query terms they hold.
                hits = _top(hits, scores[hits], max(limit * _POOL_FACTOR, _POOL_MIN))
                rows = hits.tolist()
                held = sum(weights[t] * (segment.tfs(t, rows) > 0) for t in held_terms)
                final = scores[hits] * (held / total)
            else:
                final = scores[hits]
            for i in _top(np.arange(len(hits)), final, limit):
                found.append((-float(final[i]), rank, int(hits[i]), segment.ids[hits[i]]))
        found.sort()  # best first; ties: base before delta, then by position
        return [(rid, -neg) for neg, _, _, rid in found[:limit]]


def _top(positions: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """``positions`` of the ``k`` largest ``values``, best first, ties by position."""
    if positions.size > k:
        keep = np.argpartition(-values, k - 1)[:k]
        positions, values = positions[keep], values[keep]
    return positions[np.lexsort((positions, -values))]


@dataclass
class _Partition:
    rows: dict[str, _Row] = field(default_factory=dict)
    by_trajectory: dict[str, set[str]] = field(default_factory=dict)
    version: int = 0
    changed: dict[str, int] = field(default_factory=dict)  # id -> version of a change not in base
    base: _Segment | None = None
    view: _View | None = None
    build_lock: threading.Lock = field(default_factory=threading.Lock)


def _row(row: Mapping[str, Any], tokenizer: Callable[[str], list[str]],
         cached: Callable[[str, int], tuple[str, ...] | None] | None = None) -> _Row:
    text = row.get("text") or ""
    digest = _digest(text)
    tokens = cached(str(row["id"]), digest) if cached is not None else None
    return _Row(
        tokens=tokens if tokens is not None else tuple(tokenizer(text)),
        fields=tuple(row.get(name) for name, _ in _COLUMNS),
        tools=tuple(row.get("tools") or ()),
        created_at=int(row.get("created_at") or 0),
        digest=digest,
    )


class _TokenFile:
    """Token lists saved by :meth:`LexicalIndex.save`, looked up by row id and text digest.

    A numpy ``.npz`` (no pickle): the vocabulary as NUL-separated UTF-8 (tokens
    never contain NUL), all rows' token ids in one ``int32`` array with offsets,
    row ids, text digests, and the tokenizer it was made with.
    """

    def __init__(self, path: str | os.PathLike[str], tokenizer_id: str) -> None:
        self.rows: dict[str, int] = {}
        with np.load(path, allow_pickle=False) as data:
            if bytes(data["tokenizer"]).decode() != tokenizer_id:
                return  # made by another tokenizer: useless, not wrong
            vocab = bytes(data["vocab"]).decode("utf-8", "surrogatepass").split("\0")
            self.vocab = np.array(vocab, dtype=object)
            self.tokens, self.offsets, self.digests = data["tokens"], data["offsets"], data["digests"]
            self.rows = {rid: i for i, rid in enumerate(bytes(data["ids"]).decode().split("\0")) if rid}

    def get(self, rid: str, digest: int) -> tuple[str, ...] | None:
        i = self.rows.get(rid)
        if i is None or int(self.digests[i]) != digest:
            return None
        return tuple(self.vocab[self.tokens[self.offsets[i]:self.offsets[i + 1]]].tolist())

    @staticmethod
    def write(path: str | os.PathLike[str], items: list[tuple[str, _Row]], tokenizer_id: str) -> None:
        index: defaultdict[str, int] = defaultdict()
        index.default_factory = index.__len__  # token -> id, numbering new tokens as met
        tokens = np.fromiter(map(index.__getitem__, chain.from_iterable(row.tokens for _, row in items)),
                             dtype=np.int32)
        offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum([len(row.tokens) for _, row in items], out=offsets[1:])
        vocab, ids = "\0".join(index), "\0".join(rid for rid, _ in items)
        if vocab.count("\0") != max(len(index) - 1, 0) or ids.count("\0") != max(len(items) - 1, 0):
            raise ValueError("a token or row id contains NUL; cannot save the token cache")
        tmp = f"{os.fspath(path)}.tmp.npz"
        np.savez(tmp, tokens=tokens, offsets=offsets,
                 digests=np.fromiter((row.digest for _, row in items), dtype=np.uint64, count=len(items)),
                 vocab=np.frombuffer(vocab.encode("utf-8", "surrogatepass"), dtype=np.uint8),
                 ids=np.frombuffer(ids.encode(), dtype=np.uint8),
                 tokenizer=np.frombuffer(tokenizer_id.encode(), dtype=np.uint8))
        os.replace(tmp, path)  # atomic: a crash never leaves a half-written cache


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

    # -- mutation -----------------------------------------------------------------

    def upsert(self, rows: Iterable[Mapping[str, Any]]) -> int:
        """Add or replace rows by ``id``; returns how many. Tokenises outside the lock."""
        return self._upsert(rows, None)

    def restore(self, rows: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> tuple[int, int]:
        """:meth:`upsert` for rebuilding from Milvus on open, reusing token lists that
        :meth:`save` wrote to ``path`` for rows whose id and text are unchanged.

        Returns (rows upserted, rows whose tokens came from the file). A missing,
        unreadable or other-tokenizer file only means every row is tokenised.
        """
        try:
            cache = _TokenFile(path, self._tokenizer_id)
        except Exception:  # missing or damaged: it is only a cache
            cache = None
        hits = 0

        def cached(rid: str, digest: int) -> tuple[str, ...] | None:
            nonlocal hits
            tokens = cache.get(rid, digest) if cache is not None else None
            hits += tokens is not None
            return tokens

        return self._upsert(rows, cached), hits

    def save(self, path: str | os.PathLike[str]) -> int:
        """Write every row's token list to ``path`` (atomically) for :meth:`restore`; returns rows."""
        with self._lock:
            items = [item for part in self._parts.values() for item in part.rows.items()]
        _TokenFile.write(path, items, self._tokenizer_id)
        return len(items)

    @property
    def _tokenizer_id(self) -> str:
        t = self._tokenize
        return f"{getattr(t, '__module__', '')}.{getattr(t, '__qualname__', type(t).__name__)}:{TOKENIZER_VERSION}"

    def _upsert(self, rows: Iterable[Mapping[str, Any]],
                cached: Callable[[str, int], tuple[str, ...] | None] | None) -> int:
        tok = self._tokenize
        prepared = [(str(r["id"]), str(r["tenant"]), _row(r, tok, cached)) for r in rows]
        with self._lock:
            for rid, tenant, row in prepared:
                self._remove(rid)
                part = self._parts.get(tenant)
                if part is None:
                    part = self._parts[tenant] = _Partition()
                part.rows[rid] = row
                part.by_trajectory.setdefault(row.fields[_TRAJECTORY], set()).add(rid)
                part.version += 1
                part.changed[rid] = part.version
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
        row = part.rows.pop(rid)
        traj = row.fields[_TRAJECTORY]
        members = part.by_trajectory.get(traj)
        if members is not None:
            members.discard(rid)
            if not members:
                del part.by_trajectory[traj]
        part.version += 1
        part.changed[rid] = part.version
        return True

    # -- reading ------------------------------------------------------------------

    def search(self, query: str, filters: Filters, limit: int = 10) -> list[tuple[str, float]]:
        """Ids and scores of rows matching ``filters``, best first; rows without a query term left out."""
        primary, parts = self._tokenize_query(query)
        if not (primary or parts) or limit <= 0:
            return []
        view = self._view(filters.tenant)
        if view is None:
            return []
        weights = {t: self._part_weight for t in parts} if self._part_weight else {}
        weights.update((t, 1.0) for t in primary)
        return view.search(weights, self._coord, filters, limit)

    def refresh(self, tenant: str | None = None) -> None:
        """Fold pending changes into a full rebuild now (one tenant, or all)."""
        with self._lock:
            tenants = [tenant] if tenant is not None else list(self._parts)
        for name in tenants:
            self._view(name, full=True)

    def _view(self, tenant: str, full: bool = False) -> _View | None:
        """The tenant's view at its current version, building what changed first."""
        with self._lock:
            part = self._parts.get(tenant)
            if part is None:
                return None
            if not part.rows:  # free the builds of an emptied tenant
                part.base, part.view = None, None
                part.changed.clear()
                return None
            view, version = part.view, part.version
            if view is not None and view.version == version and (view.clean or not full):
                return view
            full = full or part.base is None or len(part.changed) > max(
                _DELTA_MIN, int(_DELTA_SHARE * len(part.base)))
            if full:
                items = list(part.rows.items())
            else:
                base = part.base
                items = [(rid, part.rows[rid]) for rid in part.changed if rid in part.rows]
                dead = [base.pos[rid] for rid in part.changed if rid in base.pos]
        with part.build_lock:  # one build per tenant at a time; other tenants carry on
            current = part.view
            if current is not None and current.version >= version and (current.clean or not full):
                return current
            if full:
                base = _Segment(items, self._k1, self._b)
                view = _View(version, base, None, None, self._k1, self._b)
                with self._lock:
                    part.base = base
                    part.changed = {rid: v for rid, v in part.changed.items() if v > version}
                    part.view = view
                return view
            alive = None
            if dead:
                alive = np.ones(len(base), dtype=bool)
                alive[dead] = False
            delta = _Segment(items, self._k1, self._b) if items else None
            view = _View(version, base, alive, delta, self._k1, self._b)
            with self._lock:
                if part.view is None or part.view.version < version:
                    part.view = view
            return view

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
