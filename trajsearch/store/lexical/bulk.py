"""Counting many rows at once for :meth:`LexicalIndex.from_rows` (a rebuild from the collection)."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from typing import Callable

import numpy as np

from .columns import _Meta
from .segment import _TF_MAX
from ..tokenize import tokenize


#: Rows :meth:`LexicalIndex.from_rows` counts together.
_BULK_BATCH = 4_096


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
