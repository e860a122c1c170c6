"""In-process BM25 index per tenant, kept consistent with the Milvus collection.

Why not Milvus' own BM25: on milvus-lite 3.2.2 it costs 70-170 ms per query after
flush (seconds before) and computes IDF per segment. This index answers in
milliseconds and computes IDF per tenant. Milvus stays the source of truth: the
store rebuilds this index from the collection on open (or :meth:`LexicalIndex.load`\\ s
a saved copy it knows to be current) and mirrors every upsert and delete into it.

Design (a sparse inverted index):

* One partition per tenant: IDF is per tenant, and a query can only ever score
  its own tenant's rows (isolation is structural, not a filter). Each partition
  has its own vocabulary (term -> id, ids in order of first sight).
* A row is kept as term-frequency counts, never as a token list: tokenising, then
  ``Counter`` per row, happen outside any lock; only mapping the distinct terms to
  ids takes the partition's vocabulary lock.
* A tenant is a *base* segment plus, after changes, a small *delta* segment. A
  segment is a CSC matrix of term frequencies (rows = docs, columns = term ids:
  ``indptr`` / ``rows`` / ``tf`` arrays, ``uint16`` counts), doc lengths and filter
  columns. Scoring a term slices its column (cost proportional to its postings,
  not to the tenant) and scatters BM25 into a score array. Changed rows are masked
  out of the base (``alive``) and served, in their current version, from the delta
  (local columns for the delta's own terms). When the delta outgrows
  ``max(_DELTA_MIN, _DELTA_SHARE * N)`` rows the next search rebuilds the base,
  vectorised from the old base's arrays plus the delta's counts (no
  re-tokenisation); :meth:`LexicalIndex.refresh` does it on demand.
  A search always reflects every mutation that finished before it started.
* BM25 is classic BM25 with ``idf = ln((N + 1) / df)`` (always positive; the
  ``BM25Plus(delta=0)`` of rank_bm25), ``k1`` 1.5, ``b`` 0.5; N and df count the
  base (replaced rows included until the next rebuild) plus the delta, and
  lengths are normalised by the base's average length. A row holding no query
  term scores exactly 0 and is never returned.
* Scoring on top of BM25 (each measured in ``scripts/bench_lexical.py --quality``):
  query parts (``module`` in ``ModuleNotFoundError``) weigh ``PART_WEIGHT``, and
  the best candidates are re-ranked by coordination (the weighted share of query
  terms a row holds), so the row holding a whole error line beats a shorter row
  holding most of it.
* Filters run as numpy masks over per-segment columns (dictionary-encoded
  strings, an ``int64`` ``created_at``, a tool -> rows posting list), with the
  same semantics as :meth:`Filters.matches`.
* :meth:`LexicalIndex.save` / :meth:`LexicalIndex.load` write and read the whole
  index (vocabularies, CSC arrays, lengths, ids, filter columns) as one numpy
  ``.npz`` (no pickle); loading needs no row text.
* :meth:`LexicalIndex.from_rows` builds the index of many rows in one pass (a
  rebuild from the collection): the same index as upserting them, but counted per
  distinct whitespace word and batch with numpy instead of per token and row, and
  each tenant's base built once (``scripts/bench_rebuild.py``: 30k rows in 12 s
  instead of 40 s).

Costs (``scripts/bench_lexical.py``, rows of ~2,250 chars / 663 tokens, ~450
distinct): about 3 KB of arrays per row (int32 row + uint16 tf per posting) plus the
vocabulary (1.2M terms at 100k rows, bigrams mostly); a query costs the postings of
its (at most ``_MAX_TERMS``) terms plus a few passes over the tenant's filter
columns; upsert is tokenising plus ``Counter`` and vocabulary look-ups per row.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import scipy.sparse as sp

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
#: Most query terms scored (the most telling ones, by weight x idf).
_MAX_TERMS = 24
#: Changed rows a delta segment may hold before the base is rebuilt.
_DELTA_MIN, _DELTA_SHARE = 500, 0.01
#: Term frequencies are stored as uint16 (a term repeated more often counts this much).
_TF_MAX = 65_535
#: Rows :meth:`LexicalIndex.from_rows` counts together.
_BULK_BATCH = 4_096
_FORMAT = "trajsearch-lexical/2"


@dataclass(frozen=True, slots=True)
class _Meta:
    """The filterable fields of one row."""

    fields: tuple[Any, ...]  # values of _COLUMNS, in order
    tools: tuple[str, ...]
    created_at: int


@dataclass(frozen=True, slots=True)
class _Counts:
    """A row's distinct term ids (partition vocabulary) and their counts."""

    terms: np.ndarray  # int32
    tf: np.ndarray  # uint16
    length: int  # tokens in the row


class _Columns:
    """Filter columns over a fixed list of rows."""

    def __init__(self, n: int, codes: dict[str, tuple[np.ndarray, dict[Any, int]]],
                 created_at: np.ndarray, tool_rows: dict[str, np.ndarray]) -> None:
        self.n, self.codes, self.created_at, self.tool_rows = n, codes, created_at, tool_rows

    @classmethod
    def of(cls, metas: list[_Meta]) -> _Columns:
        codes: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}
        for i, (name, _) in enumerate(_COLUMNS):
            vocab: dict[Any, int] = {}
            arr = np.fromiter((vocab.setdefault(m.fields[i], len(vocab)) for m in metas),
                              dtype=np.int32, count=len(metas))
            codes[name] = (arr, vocab)
        created = np.fromiter((m.created_at for m in metas), dtype=np.int64, count=len(metas))
        postings: dict[str, list[int]] = {}
        for pos, m in enumerate(metas):
            for tool in m.tools:
                postings.setdefault(tool, []).append(pos)
        tool_rows = {t: np.asarray(p, dtype=np.int32) for t, p in postings.items()}
        return cls(len(metas), codes, created, tool_rows)

    def metas(self) -> list[_Meta]:
        """The rows' fields back as :class:`_Meta` (for a loaded index)."""
        cols = []
        for name, _ in _COLUMNS:
            arr, vocab = self.codes[name]
            values = np.empty(len(vocab), dtype=object)
            values[:] = list(vocab)
            cols.append(values[arr].tolist() if len(vocab) else [None] * self.n)
        tools: list[list[str]] = [[] for _ in range(self.n)]
        for tool, rows in self.tool_rows.items():
            for r in rows.tolist():
                tools[r].append(tool)
        created = self.created_at.tolist()
        return [_Meta(tuple(f), tuple(t), c) for f, t, c in zip(zip(*cols), tools, created)] if cols else []

    def _isin(self, name: str, values: tuple[str, ...]) -> np.ndarray | None:
        """Mask of rows whose ``name`` is one of ``values``; None if no row can match."""
        codes, vocab = self.codes[name]
        wanted = [vocab[v] for v in set(values) if v in vocab]
        if not wanted:
            return None
        return codes == wanted[0] if len(wanted) == 1 else np.isin(codes, wanted)

    def mask(self, f: Filters) -> np.ndarray | None:
        """Rows satisfying ``f`` (tenant aside: the partition is the tenant); None if none."""
        mask = np.ones(self.n, dtype=bool)
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
            tmask = np.zeros(self.n, dtype=bool)
            for tool in set(f.tools):
                pos = self.tool_rows.get(tool)
                if pos is not None:
                    tmask[pos] = True
            mask &= tmask
        if f.created_after is not None:
            mask &= self.created_at >= f.created_after
        return mask


class _Segment:
    """Immutable term-frequency CSC matrix (rows = docs, columns = terms) of a fixed
    list of rows, with their lengths and filter columns.

    ``terms`` is None when column j is term id j (a base), else the sorted term
    ids of the columns (a delta: only the terms it holds).
    """

    def __init__(self, ids: list[str], columns: _Columns, doc_len: np.ndarray, indptr: np.ndarray,
                 rows: np.ndarray, tf: np.ndarray, terms: np.ndarray | None) -> None:
        self.ids = ids
        self.pos = {rid: i for i, rid in enumerate(ids)}
        self.columns = columns
        self.doc_len = doc_len
        self.indptr, self.rows, self.tf, self.terms = indptr, rows, tf, terms
        self.avgdl = float(doc_len.mean()) if len(doc_len) else 0.0

    @classmethod
    def build(cls, ids: list[str], columns: _Columns, doc_len: np.ndarray, rows: np.ndarray,
              cols: np.ndarray, tf: np.ndarray, n_cols: int | None) -> _Segment:
        """From (row, term id, tf) triplets, rows ascending; ``n_cols`` None: local columns."""
        terms = None
        if n_cols is None:
            terms, cols = np.unique(cols, return_inverse=True)
            n_cols = len(terms)
        if len(tf):
            m = sp.coo_matrix((tf, (rows, cols)), shape=(len(ids), n_cols)).tocsc()  # counting sort: O(nnz)
            indptr, r, t = m.indptr.astype(np.int64), m.indices.astype(np.int32, copy=False), m.data
        else:
            indptr, r, t = np.zeros(n_cols + 1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint16)
        return cls(ids, columns, doc_len, indptr, r, t.astype(np.uint16, copy=False), terms)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def n_cols(self) -> int:
        return len(self.indptr) - 1

    def column(self, tid: int) -> int:
        """Column of term id ``tid``, -1 if no row here holds it."""
        if self.terms is None:
            return tid if tid < self.n_cols and self.indptr[tid + 1] > self.indptr[tid] else -1
        j = int(np.searchsorted(self.terms, tid))
        return j if j < len(self.terms) and self.terms[j] == tid else -1

    def df(self, col: int) -> int:
        return int(self.indptr[col + 1] - self.indptr[col]) if col >= 0 else 0


def _pending_triplets(counts: list[_Counts], first_row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sizes = np.fromiter((len(c.terms) for c in counts), dtype=np.int64, count=len(counts))
    rows = np.repeat(np.arange(first_row, first_row + len(counts), dtype=np.int32), sizes)
    if not counts:
        return rows, np.zeros(0, np.int32), np.zeros(0, np.uint16)
    return rows, np.concatenate([c.terms for c in counts]), np.concatenate([c.tf for c in counts])


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

    def _norms(self) -> tuple[np.ndarray, np.ndarray | None]:
        avgdl = self.base.avgdl or (self.delta.avgdl if self.delta is not None else 0.0) or 1.0
        norm = lambda seg: (self.k1 * (1 - self.b + self.b * seg.doc_len / avgdl)).astype(np.float32)  # noqa: E731
        return norm(self.base), (norm(self.delta) if self.delta is not None else None)

    def __post_init__(self) -> None:
        base_norm, delta_norm = self._norms()
        object.__setattr__(self, "norms", (base_norm, delta_norm))

    def search(self, weights: dict[str, float], vocab: dict[str, int], coord: bool, f: Filters,
               limit: int) -> list[tuple[str, float]]:
        """Top ``limit`` rows for weighted query terms, among rows matching ``f``."""
        segments = [(self.base, self.norms[0])]
        if self.delta is not None:
            segments.append((self.delta, self.norms[1]))
        n = sum(len(s) for s, _ in segments)
        # Per term: its column in each segment, and idf over both.
        cols: dict[str, list[int]] = {}
        idf: dict[str, float] = {}
        for t in weights:
            tid = vocab.get(t)
            if tid is None:
                continue
            c = [s.column(tid) for s, _ in segments]
            df = sum(s.df(j) for (s, _), j in zip(segments, c))
            if df:
                cols[t], idf[t] = c, math.log((n + 1) / df)
        terms = sorted(idf, key=lambda t: -weights[t] * idf[t])[:_MAX_TERMS]
        if not terms:
            return []
        total = sum(weights[t] for t in terms)
        k1p = self.k1 + 1
        found: list[tuple[float, int, int, str]] = []
        for rank, (seg, norm) in enumerate(segments):
            held_terms = [(t, cols[t][rank]) for t in terms if cols[t][rank] >= 0]
            if not held_terms:
                continue
            mask = seg.columns.mask(f)
            if mask is None:
                continue
            if rank == 0 and self.alive is not None:
                mask &= self.alive
            scores = np.zeros(len(seg), dtype=np.float32)
            for t, j in held_terms:  # cost: the term's postings, not the tenant's rows
                a, z = seg.indptr[j], seg.indptr[j + 1]
                rows = seg.rows[a:z]
                tf = seg.tf[a:z].astype(np.float32)
                tf *= np.float32(weights[t] * idf[t] * k1p) / (tf + norm[rows])
                scores[rows] += tf
            hits = np.flatnonzero(mask & (scores > 0))
            if coord and len(terms) > 1:
                # Coordination: re-rank the best BM25 rows by the weighted share of
                # the query terms they hold (a binary search per term: columns are row-sorted).
                hits = _top(hits, scores[hits], max(limit * _POOL_FACTOR, _POOL_MIN))
                held = np.zeros(len(hits))
                pool = hits.astype(seg.rows.dtype)  # searchsorted would otherwise copy the column
                for t, j in held_terms:
                    col = seg.rows[seg.indptr[j]:seg.indptr[j + 1]]
                    at = np.minimum(np.searchsorted(col, pool), len(col) - 1)
                    held += weights[t] * (col[at] == pool)
                final = scores[hits].astype(np.float64) * (held / total)
            else:
                final = scores[hits].astype(np.float64)
            for i in _top(np.arange(len(hits)), final, limit):
                found.append((-float(final[i]), rank, int(hits[i]), seg.ids[hits[i]]))
        found.sort()  # best first; ties: base before delta, then by position
        return [(rid, -neg) for neg, _, _, rid in found[:limit]]


def _top(positions: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """``positions`` of the ``k`` largest ``values``, best first, ties by position."""
    if positions.size > k:
        keep = np.argpartition(-values, k - 1)[:k]
        positions, values = positions[keep], values[keep]
    return positions[np.lexsort((positions, -values))]


class _Numbering(dict):
    """Key -> id, ids in order of first sight: looking up a missing key numbers it."""

    def __missing__(self, key: str) -> int:
        n = self[key] = len(self)
        return n


class _Bulk:
    """Term counts of many rows at once, against build-wide term ids (*gids*).

    With the project tokenizer the work is per distinct whitespace word, not per
    token: :func:`tokenize` maps each word on its own to its tokens and its chunk
    wholes, then adds a bigram per adjacent pair of wholes across the text. So a
    word is tokenised once per build (its tokens and wholes kept as gids), a row's
    tokens are gathered with numpy, bigrams are numbered by their pair of whole
    gids (their strings made once, at the end), and counting is one ``np.unique``
    per batch. Another tokenizer is called per row, its tokens counted the same way.
    """

    def __init__(self, tokenizer: Callable[[str], list[str]]) -> None:
        self.tokenizer = tokenizer
        self.by_word = tokenizer is tokenize
        self.gid = _Numbering()  # token -> gid
        self.n_terms = 0  # gids given: tokens and bigrams
        self.token_gids: list[np.ndarray] = []  # the gid of each token in self.gid, in order
        self.word = _Numbering()  # whitespace word -> word id
        self.tok_ptr, self.tok = np.zeros(1, np.int64), np.zeros(0, np.int64)  # word id -> token gids
        self.whole_ptr, self.whole = np.zeros(1, np.int64), np.zeros(0, np.int64)  # word id -> whole gids
        self.pair_keys = np.zeros(0, np.int64)  # sorted (whole gid << 32 | whole gid) of every bigram
        self.pair_gids = np.zeros(0, np.int64)  # ... and its gid

    def _gids(self, terms: list[str]) -> np.ndarray:
        """Gids of tokens, numbering new ones."""
        known = len(self.gid)
        local = np.fromiter(map(self.gid.__getitem__, terms), np.int64, count=len(terms))
        if len(self.gid) > known:  # new tokens: their gids follow every gid given so far
            self.token_gids.append(np.arange(self.n_terms, self.n_terms + len(self.gid) - known))
            self.n_terms += len(self.gid) - known
        return self._token_gid(local)

    def _token_gid(self, local: np.ndarray) -> np.ndarray:
        if len(self.token_gids) > 1:
            self.token_gids = [np.concatenate(self.token_gids)]
        return self.token_gids[0][local] if self.token_gids else local

    def terms(self) -> np.ndarray:
        """Every gid's term (an object array)."""
        out = np.empty(self.n_terms, dtype=object)
        tokens = self._token_gid(np.arange(len(self.gid)))
        out[tokens] = list(self.gid)
        keys = self.pair_keys
        out[self.pair_gids] = list(map(" ".join, zip(out[keys >> 32].tolist(), out[keys & 0xFFFFFFFF].tolist())))
        return out

    def _learn(self, words: list[str]) -> None:
        """Tokens and chunk wholes of new words (the wholes read back from the word's bigrams)."""
        toks: list[str] = []
        wholes: list[str] = []
        n_tok = np.empty(len(words), np.int64)
        n_whole = np.empty(len(words), np.int64)
        for i, w in enumerate(words):
            full = tokenize(w)
            k = len(full)
            while k and " " in full[k - 1]:  # bigrams come last; only they hold a space
                k -= 1
            toks += full[:k]
            if k < len(full):
                pairs = [b.split(" ") for b in full[k:]]
                wholes += [a for a, _ in pairs]
                wholes.append(pairs[-1][1])
                n_whole[i] = len(pairs) + 1
            else:  # at most one chunk: its whole (or first part) leads its tokens
                wholes += full[:1]
                n_whole[i] = min(k, 1)
            n_tok[i] = k
        self.tok = np.concatenate([self.tok, self._gids(toks)])
        self.tok_ptr = np.concatenate([self.tok_ptr, self.tok_ptr[-1] + np.cumsum(n_tok)])
        self.whole = np.concatenate([self.whole, self._gids(wholes)])
        self.whole_ptr = np.concatenate([self.whole_ptr, self.whole_ptr[-1] + np.cumsum(n_whole)])

    def _bigrams(self, keys: np.ndarray) -> np.ndarray:
        """Gids of bigrams given as sorted distinct pair keys, numbering new ones."""
        at = np.searchsorted(self.pair_keys, keys)
        found = at < len(self.pair_keys)
        found[found] = self.pair_keys[at[found]] == keys[found]
        gids = np.empty(len(keys), np.int64)
        gids[found] = self.pair_gids[at[found]]
        fresh = ~found
        n = int(fresh.sum())
        if n:
            gids[fresh] = np.arange(self.n_terms, self.n_terms + n)
            self.n_terms += n
            self.pair_keys = np.insert(self.pair_keys, at[fresh], keys[fresh])
            self.pair_gids = np.insert(self.pair_gids, at[fresh], gids[fresh])
        return gids

    def count(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(row, gid, tf) of every distinct term of each text, ascending by row, and the token counts."""
        n = len(texts)
        if self.by_word:
            flat: list[str] = []
            sizes = np.empty(n, np.int64)
            for i, text in enumerate(texts):
                words = text.split()
                flat += words
                sizes[i] = len(words)
            known = len(self.word)
            wid = np.fromiter(map(self.word.__getitem__, flat), np.int64, count=len(flat))
            if len(self.word) > known:
                self._learn(list(islice(self.word, known, None)))
            word_row = np.repeat(np.arange(n, dtype=np.int64), sizes)
            tok, tok_row = _gather(self.tok_ptr, self.tok, wid, word_row)
            whole, whole_row = _gather(self.whole_ptr, self.whole, wid, word_row)
            same = whole_row[1:] == whole_row[:-1]
            keys, inverse = np.unique((whole[:-1][same] << 32) | whole[1:][same], return_inverse=True)
            gid = np.concatenate([tok, self._bigrams(keys)[inverse.ravel()]])
            row = np.concatenate([tok_row, whole_row[1:][same]])
        else:
            tokens = [self.tokenizer(text) for text in texts]
            sizes = np.fromiter(map(len, tokens), np.int64, count=n)
            gid = self._gids([t for ts in tokens for t in ts])
            row = np.repeat(np.arange(n, dtype=np.int64), sizes)
        lengths = np.bincount(row, minlength=n)
        keys, tf = np.unique((row << 32) | gid, return_counts=True)
        return ((keys >> 32).astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32),
                np.minimum(tf, _TF_MAX).astype(np.uint16), lengths)


def _gather(ptr: np.ndarray, data: np.ndarray, keys: np.ndarray, key_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``data[ptr[k]:ptr[k + 1]]`` for each of ``keys`` in turn, and the row of each element."""
    start = ptr[keys]
    sizes = ptr[keys + 1] - start
    ends = np.cumsum(sizes)
    at = np.repeat(start - (ends - sizes), sizes) + np.arange(ends[-1] if len(ends) else 0)
    return data[at], np.repeat(key_row, sizes)


@dataclass
class _Staged:
    """One tenant's rows during :meth:`LexicalIndex.from_rows`, in arrival order."""

    ids: list[str] = field(default_factory=list)
    metas: list[_Meta] = field(default_factory=list)
    first: dict[str, int] = field(default_factory=dict)  # id -> its first arrival here
    chunks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)  # (row, gid, tf)
    lengths: list[np.ndarray] = field(default_factory=list)


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


def _meta(row: Mapping[str, Any]) -> _Meta:
    return _Meta(fields=tuple(row.get(name) for name, _ in _COLUMNS), tools=tuple(row.get("tools") or ()),
                 created_at=int(row.get("created_at") or 0))


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

    def search(self, query: str, filters: Filters, limit: int = 10) -> list[tuple[str, float]]:
        """Ids and scores of rows matching ``filters``, best first; rows without a query term left out."""
        primary, parts = self._tokenize_query(query)
        if not (primary or parts) or limit <= 0:
            return []
        got = self._view(filters.tenant)
        if got is None:
            return []
        view, vocab = got
        weights = {t: self._part_weight for t in parts} if self._part_weight else {}
        weights.update((t, 1.0) for t in primary)
        return view.search(weights, vocab, self._coord, filters, limit)

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
        np.savez(tmp, **arrays)
        os.replace(tmp, path)  # atomic: a crash never leaves a half-written file
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
