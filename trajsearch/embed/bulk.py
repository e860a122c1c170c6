"""Bulk encoding for ingest: all-MiniLM-L6-v2 on the fastest path the machine has, used when one is faster.

Ingest embeds thousands of texts, most of them step windows (embedded from their first 128 tokens
since represent.WINDOW_TOKENS; 256 when these figures were taken), and is bound by the model (31
rows/s on the 2-core machines, 94% of ONNX Runtime's own rate). Two paths beat ONNX Runtime fp32
there, measured on real rows (scripts/bench_ingest.py):

- a CPU with AMX (``amx_bf16`` in /proc/cpuinfo: Intel Sapphire Rapids and later): torch with
  bfloat16 autocast, so the matrix products run on the AMX tiles (layer norms, softmax and the
  pooling stay fp32): about 2x ONNX Runtime fp32 on 256-token windows, vectors within cosine
  0.99996 of fp32 (the same texts' top-10 unchanged; int8 quantisation, the other candidate,
  was 1.5x at cosine 0.98). SDPA attention, batches of 64 (32 or 16 were slower). One batch per
  core at a time, each on one thread, rather than every core on each batch: 512 real windows,
  57-60 -> 63-65 texts/s on 2 cores (the batches are the same, so are the vectors' inputs).
  Ingest's windows are nearly all at their token cap (91.5% of 4,158 real ones at 256), so
  padding costs little and larger or merged batches gain nothing: the model's arithmetic is the cost.
- a CUDA GPU, where torch sees one: fp16 autocast. Used when present, never required
  (``torch`` is a dependency already; a CUDA build of it is the user's choice).

- a CPU with VNNI but no AMX (``avx512_vnni`` or ``avx_vnni``): ONNX Runtime with the graph's
  MatMul and Attention nodes quantised to int8 (weights per channel, activations per batch;
  onnx_runtime.quantise_onnx), for step windows only (the texts embedded from a head,
  ``max_tokens``): 1.8x fp32 on 128-token windows (96 vs 53 texts/s), vectors at cosine 0.993
  median (min 0.98) from fp32's, and, since an activation scale is the batch's, ~0.99 from the
  same text's in another batch. Task, summary and failure rows, which queries are held against
  thresholds, stay fp32. On short texts int8 was not faster (../shared/FACTS.md).

Elsewhere (no AMX, no VNNI, no GPU) nothing changes: ONNX Runtime fp32 embeds everything.
Queries are always embedded by ONNX Runtime fp32 (one text at a time, where it is fastest).
``TRAJSEARCH_BULK`` overrides the choice: ``auto`` (default), ``off``, ``cpu-bf16``, ``cpu-int8``,
``cuda``.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import batch_tokenizer

log = logging.getLogger(__name__)

CHOICES = ("auto", "off", "cpu-bf16", "cpu-int8", "cuda")


def cpu_flags() -> set[str]:
    """The CPU's feature flags (``/proc/cpuinfo``; empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_has_amx() -> bool:
    return "amx_bf16" in cpu_flags()


def cpu_has_vnni() -> bool:
    """int8 dot products in one instruction (AVX512-VNNI or AVX-VNNI): what makes int8 pay."""
    return bool({"avx512_vnni", "avx_vnni"} & cpu_flags())


def choose(spec: str | None = None) -> str:
    """``cuda``, ``cpu-bf16``, ``cpu-int8`` or ``off``: the bulk path for this machine (``spec`` or
    $TRAJSEARCH_BULK)."""
    spec = (spec or os.environ.get("TRAJSEARCH_BULK") or "auto").strip().lower()
    if spec not in CHOICES:
        raise ValueError(f"TRAJSEARCH_BULK must be one of {', '.join(CHOICES)}, got {spec!r}")
    if spec != "auto":
        return spec
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return "off"
    if torch.cuda.is_available():
        return "cuda"
    if cpu_has_amx():
        return "cpu-bf16"
    return "cpu-int8" if cpu_has_vnni() else "off"


class TorchBulkEncoder:
    """all-MiniLM-L6-v2 on torch, reduced-precision autocast: tokenizer, BERT, mean pooling, L2."""

    def __init__(self, model_dir: Path, *, device: str) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        hf_logging.set_verbosity_error()
        hf_logging.disable_progress_bar()
        self._torch = torch
        self.device = "cuda" if device == "cuda" else "cpu"
        self.dtype = torch.float16 if self.device == "cuda" else torch.bfloat16
        self._model = AutoModel.from_pretrained(str(model_dir), attn_implementation="sdpa").eval().to(self.device)
        self._tokenizer_file = str(Path(model_dir) / "tokenizer.json")

    def encode_documents(self, texts: Sequence[str], *, batch_size: int = 64, max_tokens: int = 256) -> np.ndarray:
        """Each text's first ``max_tokens`` tokens, embedded."""
        torch = self._torch
        tok = batch_tokenizer(self._tokenizer_file, max_tokens)
        out = np.empty((len(texts), self._model.config.hidden_size), dtype=np.float32)
        order = np.argsort([-len(text) for text in texts], kind="stable")  # similar lengths share a batch
        batches = [order[start : start + batch_size] for start in range(0, len(texts), batch_size)]

        def run(rows: np.ndarray) -> None:
            with torch.inference_mode(), torch.autocast(self.device, dtype=self.dtype):
                encodings = tok.encode_batch([texts[i] for i in rows])
                ids = torch.tensor([e.ids for e in encodings], device=self.device)
                mask = torch.tensor([e.attention_mask for e in encodings], device=self.device)
                hidden = self._model(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids))
                weights = mask[..., None].float()
                pooled = (hidden.last_hidden_state.float() * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
                out[rows] = torch.nn.functional.normalize(pooled, dim=1).cpu().numpy()

        cores = torch.get_num_threads()
        if self.device == "cuda" or cores < 2 or len(batches) < 2:
            for rows in batches:
                run(rows)
            return out
        torch.set_num_threads(1)  # a batch per core (see the module docstring); restored below
        try:
            with ThreadPoolExecutor(min(cores, len(batches)), thread_name_prefix="bulk-encode") as pool:
                list(pool.map(run, batches))
        finally:
            torch.set_num_threads(cores)
        return out
