"""A tokenizer for agent logs and code, built for exact-string lexical search.

Generic English analyzers drop numbers and stop words and stem, so ``exit code 1``
and ``exit code 137`` look alike and ``ModuleNotFoundError`` or ``src/app/main.py``
fall apart. Here every *chunk* (a run of word characters joined by
``. / \\ : = - @ + ~``, with leading ``-``, ``./``, ``/`` or ``~`` kept) is kept
whole, lowercased, **and** split into its parts, layer by layer:

* ``key=value`` and ``--flag=value``   -> ``--tb=short``, ``--tb``, ``tb``, ``short``
* ``file:line``, ``scheme:rest``       -> ``main.py:42``, ``main.py``, ``42``, ...
* paths (``/`` or ``\\``)              -> components plus every trailing sub-path of
  two or more components, so ``./pvlib/tools.py`` and ``/testbed/pvlib/tools.py``
  share ``pvlib/tools.py``
* dotted names                         -> ``os.path.join``, ``os``, ``path``, ``join``
* hyphens and flags                    -> ``-x``, ``x``; ``pydicom-1694``, ``pydicom``, ``1694``
* snake_case                           -> ``run_tests``, ``run``, ``tests``
* CamelCase and ``word123``            -> ``modulenotfounderror``, ``module``, ``not``,
  ``found``, ``error``; ``python3``, ``python``, ``3``

Quotes and brackets are never part of a chunk (``'yaml'`` -> ``yaml``), numbers are
never dropped, nothing is stemmed or stop-worded. Adjacent chunks also yield a
bigram ``"exit code"``, ``"code 137"`` (a space can never occur inside a unigram,
so bigrams cannot collide with one); they make a phrase outrank a document that
merely holds its words somewhere (measured in ``scripts/bench_lexical.py``).
Queries go through :func:`tokenize_query`, which separates what the query says
(whole chunks, bigrams) from the parts, so the index can weight parts lower.

Speed: the text is split on whitespace and each distinct word's tokens are
memoised (log text repeats its words heavily), so a text costs one ``split`` and
C-level ``map``/``chain`` over dict lookups; only unseen words meet the regexes.
Tokens are interned, so cached token lists share their strings.
"""

from __future__ import annotations

import re
import sys
from itertools import chain

__all__ = ["TOKENIZER_VERSION", "tokenize", "tokenize_query"]

#: Bump whenever the tokens a text yields change: saved token caches of another
#: version are ignored (see LexicalIndex.save).
TOKENIZER_VERSION = "1"

#: A chunk: optional leading ``-``/``.``/``/``/``~``/``\`` (flags, relative and absolute
#: paths), then word runs joined by separators. Trailing punctuation is left out.
#: Linear in the word: a chunk starts where its run of leading marks starts (the lookbehind: from
#: inside the run it would fail as from its start, since a chunk always ends in a word character) and
#: never gives marks back (``*+``, ``++``: marks are no word characters). Before, a query or text
#: holding a long run of ``/``, ``.``, ``-`` or ``\`` took seconds per 20,000 characters (probe I, I1).
_CHUNK = re.compile(r"(?<![-./~\\])[-./~\\]*+\w+(?:[-./\\:=@+~]++\w+)*")

#: Split layers, outermost first; each piece is split again by the later layers.
_PATH = 2  # the layer whose parts also yield trailing sub-paths
_LAYERS = (
    re.compile(r"="),
    re.compile(r":+"),
    re.compile(r"[/\\]+"),
    re.compile(r"[.@+~]+"),
    re.compile(r"-+"),
    re.compile(r"_+"),
)
_LAYER_CHARS = ("=", ":", "/\\", ".@+~", "-", "_")
_HAS_WORD = re.compile(r"[^\W_]")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_WORD_NUM = re.compile(r"[A-Za-z]+\d+")

#: Longest chunk kept whole (base64 blobs, minified code); longer ones keep only parts.
_MAX_WHOLE = 120
#: Memo of whitespace-delimited word -> (tokens, chunk wholes); cleared past this size.
_CACHE_MAX = 300_000
_tokens_of: dict[str, tuple[str, ...]] = {}
_wholes_of: dict[str, tuple[str, ...]] = {}


def _split_atom(atom: str, out: list[str]) -> None:
    """CamelCase and ``word123`` parts of a separator-free piece (original case)."""
    if (atom.lower() != atom and atom.upper() != atom) or _WORD_NUM.fullmatch(atom):
        parts = _CAMEL.findall(atom)
        if len(parts) > 1:
            out.extend(p.lower() for p in parts)


def _split(piece: str, layer: int, out: list[str]) -> None:
    """Append the parts of ``piece`` (original case) split at ``layer`` and deeper."""
    for i in range(layer, len(_LAYERS)):
        if not any(c in piece for c in _LAYER_CHARS[i]):
            continue
        parts = [p for p in _LAYERS[i].split(piece) if _HAS_WORD.search(p)]
        if i == _PATH and len(parts) > 1:
            # Trailing sub-paths (2+ components): absolute and relative spellings meet. Only those of up to
            # _MAX_WHOLE characters, the longest token _expand keeps: made for every component, a path of n
            # components built n strings of up to its whole length (a 20,000-character a/b/c/... query: ~100 MB
            # and seconds holding the GIL, probe 52).
            lowered = [p.lower() for p in parts]
            first, size = len(lowered) - 1, len(lowered[-1])
            while first > 0 and size + 1 + len(lowered[first - 1]) <= _MAX_WHOLE:
                first -= 1
                size += 1 + len(lowered[first])
            out.extend("/".join(lowered[k:]) for k in range(first, len(lowered) - 1))
        for part in parts:
            if part != piece:
                out.append(part.lower())
            _split(part, i + 1, out)
        return
    _split_atom(piece, out)


def _expand(chunk: str) -> list[str]:
    """The whole chunk (lowercased) first, then its distinct parts."""
    out: list[str] = []
    _split(chunk, 0, out)
    whole = chunk.lower()
    if len(whole) > _MAX_WHOLE:
        return list(dict.fromkeys(p for p in out if len(p) <= _MAX_WHOLE)) or [whole[:_MAX_WHOLE]]
    return list(dict.fromkeys([whole, *out]))


def _learn(word: str, tokens_of: dict[str, tuple[str, ...]] = _tokens_of,
           wholes_of: dict[str, tuple[str, ...]] = _wholes_of) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Tokenise one whitespace-delimited word into the memos; returns (tokens, wholes)."""
    if len(tokens_of) >= _CACHE_MAX:
        tokens_of.clear()
        wholes_of.clear()
    if word.isascii() and (word.isdigit() or word.isalpha() and (word.islower() or word.isupper() or word.istitle())):
        single = (sys.intern(word.lower()),)  # a plain word or number: nothing to split
        tokens_of[word] = wholes_of[word] = single
        return single, single
    tokens: list[str] = []
    wholes: list[str] = []
    for chunk in _CHUNK.findall(word):
        exp = _expand(chunk)
        tokens.extend(exp)
        wholes.append(exp[0])
    # Interned, so the many rows holding a token share one string object.
    entry = tuple(map(sys.intern, tokens)), tuple(map(sys.intern, wholes))
    tokens_of[word], wholes_of[word] = entry
    return entry


def _flat(memo: dict[str, tuple[str, ...]], words: list[str]) -> list[str]:
    """Concatenate the memoised entries of ``words``, learning unseen words first."""
    for _ in range(2):
        try:
            return list(chain.from_iterable(map(memo.get, words)))
        except TypeError:  # some word not memoised (yet, or any more after a clear)
            for word in words:
                if word not in memo:
                    _learn(word)
    # Another thread cleared the memo in between twice; learn into a private one.
    return [t for word in words for t in _learn(word, {}, {})[memo is _wholes_of]]


def tokenize(text: str, *, bigrams: bool = True) -> list[str]:
    """Tokens of ``text`` for BM25: chunks whole and in parts, plus adjacent-chunk bigrams."""
    if not text:
        return []
    words = text.split()
    tokens = _flat(_tokens_of, words)
    if bigrams:
        wholes = _flat(_wholes_of, words)
        tokens.extend(map(sys.intern, map(" ".join, zip(wholes, wholes[1:]))))
    return tokens


def tokenize_query(text: str) -> tuple[list[str], list[str]]:
    """Distinct query tokens as (primary, parts).

    Primary: the whole chunks and the bigrams, i.e. what the query literally says.
    Parts: the remaining pieces (components, sub-paths, CamelCase and snake_case
    parts). The index weights parts lower, so ``ModuleNotFoundError`` counts as one
    strong term plus weak hints rather than five equal ones; parts still let
    ``/testbed/pvlib/tools.py`` find ``pvlib/tools.py`` and ``get_user`` find
    ``get_user_details``.
    """
    words = text.split()
    wholes = _flat(_wholes_of, words)
    primary = list(dict.fromkeys([*wholes, *map(" ".join, zip(wholes, wholes[1:]))]))
    seen = set(primary)
    parts = [t for t in dict.fromkeys(_flat(_tokens_of, words)) if t not in seen]
    return primary, parts
