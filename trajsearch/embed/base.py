"""What every embedder is: the protocol, the default model's name, L2 normalisation."""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Protocol, Sequence

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Return an array of shape (len(texts), dim), rows L2-normalised."""
        ...


def document_encoder(embedder: Embedder, *, max_tokens: int | None = None):  # type: ignore[no-untyped-def]
    """What embeds texts in bulk (ingest): the embedder's ``encode_documents`` where it has one (a
    faster path for many texts, vectors within cosine 0.9999 of ``encode``'s), else ``encode``.

    ``max_tokens``: embed each text's first so many tokens only (step windows, see represent.py).
    Embedders with ``encode_documents`` honour it; others (the hashing test embedder) embed whole texts.
    """
    documents = getattr(embedder, "encode_documents", None)
    if documents is None:
        return embedder.encode
    return partial(documents, max_tokens=max_tokens) if max_tokens else documents


@lru_cache(maxsize=8)
def batch_tokenizer(tokenizer_file: str, max_tokens: int):  # type: ignore[no-untyped-def]
    """The model's ``tokenizers.Tokenizer`` cutting each text at ``max_tokens`` tokens and padding a
    batch to its longest (one per file and cap, shared: it keeps no state between calls).

    ``tokenizer.json`` of all-MiniLM-L6-v2 ships with truncation and fixed padding at 128: both are reset.
    """
    from tokenizers import Tokenizer  # noqa: PLC0415 - the hashing test embedder needs no tokenizer

    tok = Tokenizer.from_file(tokenizer_file)
    tok.enable_truncation(max_length=max_tokens)
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)
