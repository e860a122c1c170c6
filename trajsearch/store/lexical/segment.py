"""A CSC segment of term frequencies and its BM25 scoring (with coordination re-ranking)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import islice
from typing import Iterator

import numpy as np
import scipy.sparse as sp

from ..filters import Filters
from .columns import _Columns, _Counts


#: BM25 k1 and b. b is below the textbook 0.75 because whole+parts expansion
#: inflates the length of path- and code-heavy rows, which full length
#: normalisation would then over-penalise.
K1, B = 1.5, 0.5
#: Query weight of token parts relative to whole chunks and bigrams.
PART_WEIGHT = 0.3
#: Coordination re-ranks this many BM25 candidates per requested result (at least _POOL_MIN).
_POOL_FACTOR, _POOL_MIN = 10, 100
#: Query terms scored at first (the most telling ones, by weight x idf); more while too few rows are found.
_MAX_TERMS = 24
#: Postings read to check that a query term occurs inside the filter at all (see :func:`_telling`).
_CHECKED_POSTINGS = 200_000
#: Coordination counts the terms each row holds while scoring when the scored postings are at most this
#: many per pool row; past that, binary searches of the pool in each column cost less (about 240 measured).
_COUNT_WHILE_SCORING = 200


#: A term's first postings checked against the filter before all of them (see :func:`_telling`): a common
#: term's rows are nearly always found among them, and gathering all its postings was a tenth of a search.
_FIRST = 64
#: Every this many values are sampled for a threshold before finding the best ones (see :func:`_largest`).
_SAMPLE = 16


#: Term frequencies are stored as uint16 (a term repeated more often counts this much).
_TF_MAX = 65_535


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

    def lookup(self, tids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Columns of term ids (-1 where no row here holds the term) and their document frequencies."""
        if self.terms is None:
            cols = np.where(tids < self.n_cols, tids, -1)
        elif len(self.terms):
            at = np.minimum(np.searchsorted(self.terms, tids), len(self.terms) - 1)
            cols = np.where(self.terms[at] == tids, at, -1)
        else:
            cols = np.full(len(tids), -1)
        df = np.where(cols >= 0, self.indptr[cols + 1] - self.indptr[np.maximum(cols, 0)], 0)
        return np.where(df > 0, cols, -1), df


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
               limit: int, widen: bool = True) -> list[tuple[str, float]]:
        """Top ``limit`` rows for weighted query terms, among rows matching ``f``."""
        segments = [(self.base, self.norms[0])]
        if self.delta is not None:
            segments.append((self.delta, self.norms[1]))
        n = sum(len(s) for s, _ in segments)
        # Per term: its column in each segment, and idf over both (looked up for all terms at once).
        known = [t for t in weights if t in vocab]
        tids = np.array([vocab[t] for t in known], dtype=np.int64)
        looked = [s.lookup(tids) for s, _ in segments]
        dfs = sum(df for _, df in looked).tolist()
        cols: dict[str, tuple[int, ...]] = {}
        idf: dict[str, float] = {}
        for t, df, c in zip(known, dfs, zip(*(c.tolist() for c, _ in looked))):
            if df:
                cols[t], idf[t] = c, math.log((n + 1) / df)
        masks = [seg.columns.mask(f) for seg, _ in segments]  # None: no row of the segment passes
        if self.alive is not None and masks[0] is not None:
            masks[0] &= self.alive
        # The most telling terms first; a long query scored on too few of them finds too few rows
        # (each holds none of them). With ``widen`` it is scored again on twice as many terms until
        # ``limit`` rows are found, every row inside the filter is, or the terms checked against the
        # filter run out (``_telling``: what is left is common words, costly to score and telling
        # little). Rows found on fewer terms keep their places ahead of rows found only on more.
        telling = _telling(sorted(idf, key=lambda t: -weights[t] * idf[t]), cols, segments, masks)
        passing: int | None = None  # rows inside the filter: counted only when a search falls short
        terms: list[str] = []
        found: list[tuple[str, float]] = []
        while more := [t for t, _ in islice(telling, max(_MAX_TERMS, len(terms)))]:
            terms += more
            found = _after(found, self._score(terms, weights, idf, cols, segments, masks, coord, limit), limit)
            if not widen or len(found) >= limit:
                break
            if passing is None:
                passing = sum(int(m.sum()) for m in masks if m is not None)
            if len(found) >= passing:
                break
            telling = (term for term in telling if term[1])  # widen only by terms known to be inside the filter
        return found

    def _score(self, terms: list[str], weights: dict[str, float], idf: dict[str, float],
               cols: dict[str, tuple[int, ...]], segments: list[tuple[_Segment, np.ndarray]],
               masks: list[np.ndarray | None], coord: bool, limit: int) -> list[tuple[str, float]]:
        """Top ``limit`` rows inside ``masks`` by BM25 of ``terms`` (then coordination)."""
        total = sum(weights[t] for t in terms)
        k1p = self.k1 + 1
        found: list[tuple[float, int, int, str]] = []
        for rank, (seg, norm) in enumerate(segments):
            held_terms = [(t, cols[t][rank]) for t in terms if cols[t][rank] >= 0]
            mask = masks[rank]
            if not held_terms or mask is None:
                continue
            pool = max(limit * _POOL_FACTOR, _POOL_MIN)
            coordinate = coord and len(terms) > 1
            postings = sum(int(seg.indptr[j + 1] - seg.indptr[j]) for _, j in held_terms)
            counts = np.zeros(len(seg)) if coordinate and postings <= _COUNT_WHILE_SCORING * pool else None
            scores = np.zeros(len(seg), dtype=np.float32)
            for t, j in held_terms:  # cost: the term's postings, not the tenant's rows
                a, z = seg.indptr[j], seg.indptr[j + 1]
                rows = seg.rows[a:z].astype(np.intp)  # an int32 index is converted on every use: once here
                tf = seg.tf[a:z].astype(np.float32)
                tf *= np.float32(weights[t] * idf[t] * k1p) / (tf + norm[rows])
                np.add.at(scores, rows, tf)  # rows are distinct: as scores[rows] += tf, in one pass
                if counts is not None:
                    np.add.at(counts, rows, weights[t])
            hits = np.flatnonzero(mask & (scores > 0))
            if coordinate:
                # Coordination: re-rank the best BM25 rows by the weighted share of the query terms
                # they hold, counted while scoring or found by binary searches (columns are row-sorted).
                hits = _top(hits, scores[hits], pool)
                held = counts[hits] if counts is not None else _held(seg, held_terms, weights, hits)
                final = scores[hits].astype(np.float64) * (held / total)
            else:
                final = scores[hits].astype(np.float64)
            best = _top(np.arange(len(hits)), final, limit)
            at = hits[best].tolist()
            found += zip((-final[best]).tolist(), [rank] * len(at), at, [seg.ids[i] for i in at])
        found.sort()  # best first; ties: base before delta, then by position
        return [(rid, -neg) for neg, _, _, rid in found[:limit]]


def _telling(ranked: list[str], cols: dict[str, tuple[int, ...]], segments: list[tuple[_Segment, np.ndarray]],
             masks: list[np.ndarray | None]) -> Iterator[tuple[str, bool]]:
    """The terms of ``ranked`` (most telling first) that some row inside the filter holds, each with
    whether that was checked. Idf is the tenant's, so a long query's rarest terms are often words found
    only in rows the filter leaves out (the query's own run, other levels): scored, they took every
    place and the search found nothing. Each term is looked for in the filtered rows (its postings:
    cheap for the rare terms that come first) until ``_CHECKED_POSTINGS`` postings were read; later
    ones are common enough to pass unchecked."""
    budget = _CHECKED_POSTINGS
    for t in ranked:
        if budget <= 0:
            yield t, False
            continue
        for rank, ((seg, _), mask) in enumerate(zip(segments, masks)):
            j = cols[t][rank]
            if j < 0 or mask is None:
                continue
            rows = seg.rows[seg.indptr[j]:seg.indptr[j + 1]]
            budget -= len(rows)
            if mask[rows[:_FIRST]].any() or mask[rows[_FIRST:]].any():
                yield t, True
                break


def _after(first: list[tuple[str, float]], then: list[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
    """``first`` (rows found on fewer terms, best first), then the rows of ``then`` not among them, up to
    ``limit``, each scored at most as the last row before it, so scores still fall down the list."""
    seen = {rid for rid, _ in first}
    out = list(first)
    for rid, score in then:
        if len(out) >= limit:
            break
        if rid not in seen:
            out.append((rid, min(score, out[-1][1]) if out else score))
    return out


def _held(seg: _Segment, terms: list[tuple[str, int]], weights: dict[str, float], hits: np.ndarray) -> np.ndarray:
    """Weighted count of the query ``terms`` (with their columns) each row of ``hits`` holds, added
    in term order as while scoring: a binary search per term and row, the rows in order (numpy's
    searchsorted starts each search where the last one ended)."""
    by_row = np.argsort(hits)
    pool = hits[by_row].astype(seg.rows.dtype)  # searchsorted would otherwise copy the column
    counts = np.zeros(len(hits))
    for t, j in terms:
        col = seg.rows[seg.indptr[j]:seg.indptr[j + 1]]
        holds = col.take(np.searchsorted(col, pool), mode="clip") == pool
        np.add(counts, weights[t], out=counts, where=holds)
    held = np.empty(len(hits))
    held[by_row] = counts
    return held


def _top(positions: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """``positions`` of the ``k`` largest ``values``, best first, ties by position."""
    if positions.size > k:
        keep = _largest(values, k)
        positions, values = positions[keep], values[keep]
    return positions[np.lexsort((positions, -values))]


def _largest(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest ``values`` (fewer than ``values.size``), as ``argpartition`` picks them.

    Partitioning every row holding a common query term was a quarter of a search. Usually only the values
    above a threshold read off a sample (every ``_SAMPLE``-th value) need it: about twice ``k`` of them. The
    set is then the same whichever way it is found when the ``k``-th largest beats the next one; when they
    tie (or the threshold let through too few), all values are partitioned as before, so that
    ``argpartition`` breaks the tie as it always did."""
    if values.size >= 4 * _SAMPLE * k:
        sample = values[::_SAMPLE]
        rank = sample.size - 2 * (k // _SAMPLE + 1)
        above = np.flatnonzero(values >= np.partition(sample, rank)[rank])
        if above.size > k:
            negated = -values[above]
            order = np.argpartition(negated, (k - 1, k))
            if negated[order[k - 1]] < negated[order[k]]:
                return above[order[:k]]
    return np.argpartition(-values, k - 1)[:k]
