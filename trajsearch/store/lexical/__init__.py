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
  holding most of it. The shares are added up per row in the scoring loop, a pass
  over postings already read (0.06-0.3 ms a query up to 100k postings); binary
  searches of the candidates in each term's column cost 0.2-0.45 ms whatever the
  postings, so they take over only past ``_COUNT_WHILE_SCORING`` postings per
  candidate (log lines in a 209k-row tenant). Both add in term order: same shares.
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
A search for 50 rows (a fused search's pool) in bench_scale's 100k-row store, warm,
2 shared cores at load 1.6-2.0: 1.0 ms p50 in its 68k-row tenant (44k rows + 24k
passages; exact log lines 1.4 ms, task texts 0.7), 0.6 ms in a 10.6k-row one; 2.3 ms
in the 209k-row tenant of the 300k store. Most of it is scoring the postings (numpy
scatters: an ``int32`` index is cast to ``intp`` once per term, not on every use)
and choosing the pool (``argpartition``).
"""

from __future__ import annotations

from .index import LexicalIndex

__all__ = ["LexicalIndex"]
