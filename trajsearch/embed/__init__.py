"""Text embedders: a small protocol, the implementations trajsearch ships, and ``load_embedder``.

``base`` holds the protocol; ``onnx_runtime`` (the default) and ``sentence_transformer`` the real
models, imported only when asked for; the hashing *test* embedder is here.

Vectors are L2-normalised float32, so inner product equals cosine similarity.
The collection records the embedder's ``name`` and ``dim`` and refuses to open
with a different one (vectors from two models are not comparable).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import Sequence

import numpy as np

from .base import DEFAULT_MODEL, Embedder, document_encoder, normalise

__all__ = ["DEFAULT_MODEL", "Embedder", "HashingEmbedder", "document_encoder", "load_embedder", "normalise"]


class HashingEmbedder:
    """A fast, deterministic, *non-semantic* embedder for plumbing tests only.

    Hashes word tokens into ``dim`` buckets (signed feature hashing). Texts that
    share words get similar vectors, which is enough to test storage, filters
    and grouping without loading a model. Never use it to judge retrieval quality.
    """

    name = "hashing-test-embedder"

    def __init__(self, dim: int = 64) -> None:
        self.dim = dim

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            if not out[row].any():
                out[row, 0] = 1.0
        return normalise(out)


@lru_cache(maxsize=4)
def load_embedder(spec: str = DEFAULT_MODEL) -> Embedder:
    """Build an embedder from a spec string (cached per process: models are heavy).

    - ``all-MiniLM-L6-v2`` (the default): ONNX Runtime on the same weights. Identical
      vectors to torch (cosine 1.000), a tenth of the single-query latency and a
      1 s start instead of 10-30 s (scripts/bench_embed.py); exported once per machine.
    - ``torch:<model>``: sentence-transformers on torch, for any other model too.
    - ``hashing[:dim]``: the fast deterministic *test* embedder (not semantic).
    """
    if spec.startswith("hashing"):
        _, _, dim = spec.partition(":")
        return HashingEmbedder(int(dim) if dim else 64)
    if spec in (DEFAULT_MODEL, "onnx", f"onnx:{DEFAULT_MODEL}"):
        from .onnx_runtime import OnnxMiniLMEmbedder  # imported on use: keeps onnxruntime out of every import

        return OnnxMiniLMEmbedder()
    from .sentence_transformer import SentenceTransformerEmbedder  # imported on use: torch takes seconds to load

    return SentenceTransformerEmbedder(spec.removeprefix("torch:"))
