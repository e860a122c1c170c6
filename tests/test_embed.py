"""Embedders: the ONNX path must give the torch path's vectors, and load without torch."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from trajsearch.embed import HashingEmbedder, load_embedder
from trajsearch.embed.sentence_transformer import SentenceTransformerEmbedder

os.environ.setdefault("HF_HUB_OFFLINE", "1")

TRACEBACK = """Traceback (most recent call last):
  File "/testbed/src/marshmallow/fields.py", line 1148, in _deserialize
    return self._validated(value)
  File "/testbed/src/marshmallow/fields.py", line 1121, in _validated
    raise self.make_error("invalid") from error
marshmallow.exceptions.ValidationError: Not a valid datetime.
"""

TEXTS = [
    "hello",
    "ok",
    "ModuleNotFoundError: No module named 'numpy'",
    "pytest tests/test_fields.py -x -q  ->  exit code 1, 3 failed, 120 passed",
    "cd /testbed && grep -rn 'def _serialize' src/marshmallow/fields.py | head -20",
    "The agent edited the wrong file and the tests kept failing until it reverted the change.",
    "Book a flight from JFK to SFO on May 20 in economy, then add one checked bag.",
    "Customer wants to cancel reservation ABC123 because of a change of plans; refund to gift card.",
    "def add(a: int, b: int) -> int:\n    return a + b\n\nprint(add(2, 3))",
    "for i in range(10):\n    if i % 2 == 0:\n        continue\n    print(i ** 2)",
    'sed -i \'s/return value/return int(value)/\' src/pvlib/irradiance.py && python -c "import pvlib"',
    "Ünïcödé: naïve café, Grüße aus München, 東京で会いましょう, Привет мир, emoji 🚀✅",
    "数据库连接失败：超时 30 秒后重试",
    "   leading and trailing whitespace   \n\n\t",
    TRACEBACK,
    TRACEBACK * 12,  # well past 256 tokens: truncation must match
    " ".join(f"word{i}" for i in range(600)),  # long, many word pieces
    "diff --git a/src/sqlfluff/rules/L031.py b/src/sqlfluff/rules/L031.py\n"
    + "-    if alias_name:\n+    if alias_name and not is_self_join:\n" * 30,
    "Cooking pasta: boil salted water, add spaghetti, stir, cook 9 minutes, drain.",
    "Filing taxes: collect W-2 forms, check deductions, submit before April 15.",
    "x" * 3000,  # one giant token run
]


@pytest.fixture(scope="module")
def onnx_embedder():
    from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(threads=2)


@pytest.fixture(scope="module")
def torch_embedder():
    embedder = load_embedder("torch:all-MiniLM-L6-v2")
    assert isinstance(embedder, SentenceTransformerEmbedder)  # the reference must really be torch
    return embedder


# --- the hashing test embedder (no model) -------------------------------------


def test_hashing_embedder_is_deterministic_and_normalised():
    a = HashingEmbedder(64).encode(TEXTS)
    b = HashingEmbedder(64).encode(TEXTS)
    assert a.shape == (len(TEXTS), 64) and a.dtype == np.float32
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    assert load_embedder("hashing:32").dim == 32


def test_default_model_runs_on_onnx():
    from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder

    assert isinstance(load_embedder("all-MiniLM-L6-v2"), OnnxMiniLMEmbedder)


def test_weights_fingerprint_tracks_content(tmp_path: Path):
    from trajsearch.embed.onnx_runtime import weights_fingerprint

    def fingerprint(payload: bytes) -> str:
        header = b'{"w":{}}'
        (tmp_path / "model.safetensors").write_bytes(
            len(header).to_bytes(8, "little") + header + payload
        )
        return weights_fingerprint(tmp_path)

    base = fingerprint(b"\x00" * 500_000)
    assert fingerprint(b"\x00" * 500_000) == base
    assert fingerprint(b"\x00" * 250_000 + b"\x01" + b"\x00" * 249_999) != base
    assert fingerprint(b"\x00" * 500_001) != base


# --- ONNX vs torch -------------------------------------------------------------


@pytest.mark.model
def test_onnx_matches_torch(onnx_embedder, torch_embedder):
    assert onnx_embedder.name == torch_embedder.name == "all-MiniLM-L6-v2"
    assert onnx_embedder.dim == torch_embedder.dim == 384
    ours = onnx_embedder.encode(TEXTS, batch_size=8)
    theirs = torch_embedder.encode(TEXTS, batch_size=8)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert ours.dtype == np.float32
    cosine = (ours * theirs).sum(axis=1)
    assert cosine.min() >= 0.9999, cosine
    # Same nearest neighbours for every text used as a query.
    ours_rank = np.argsort(-(ours @ ours.T), axis=1)[:, :4]
    theirs_rank = np.argsort(-(theirs @ theirs.T), axis=1)[:, :4]
    np.testing.assert_array_equal(ours_rank, theirs_rank)


@pytest.mark.model
def test_a_token_cap_embeds_each_texts_head_alike_on_both_paths(onnx_embedder, torch_embedder):
    """Step windows are embedded from their first 128 tokens (represent.WINDOW_TOKENS): a long text's
    capped vector is its head's, the same on ONNX and torch; a text shorter than the cap is unchanged."""
    from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder

    onnx = OnnxMiniLMEmbedder(threads=2, bulk="off")  # the capped fp32 path itself, on any CPU
    ours = onnx.encode_documents(TEXTS, batch_size=8, max_tokens=128)
    theirs = torch_embedder.encode_documents(TEXTS, batch_size=8, max_tokens=128)
    assert (ours * theirs).sum(axis=1).min() >= 0.9999
    counts = [len(onnx.tokenizer.encode(t).ids) for t in TEXTS]
    whole = onnx_embedder.encode(TEXTS)
    for text, count, capped, full in zip(TEXTS, counts, ours, whole):
        if count <= 128:
            assert float(capped @ full) >= 0.9999, text[:40]
        else:  # the head the cap keeps: its first 126 word pieces, between [CLS] and [SEP]
            head = text[: onnx.tokenizer.encode(text, add_special_tokens=False).offsets[125][1]]
            assert float(capped @ onnx_embedder.encode([head])[0]) >= 0.9999, text[:40]
    assert any(count > 256 for count in counts)
    long = [i for i, count in enumerate(counts) if count > 160]
    assert (ours[long] * whole[long]).sum(axis=1).min() < 0.999  # the cap did cut


@pytest.mark.model
def test_onnx_output_is_normalised_and_order_preserving(onnx_embedder):
    batched = onnx_embedder.encode(TEXTS, batch_size=5)  # sorted by length inside
    np.testing.assert_allclose(np.linalg.norm(batched, axis=1), 1.0, rtol=1e-5)
    one_by_one = np.vstack([onnx_embedder.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(batched, one_by_one, atol=1e-5)


@pytest.mark.model
def test_onnx_empty_input(onnx_embedder):
    out = onnx_embedder.encode([])
    assert out.shape == (0, 384) and out.dtype == np.float32


@pytest.mark.model
def test_token_counts_match_hf_tokenizer(onnx_embedder, torch_embedder):
    for text in TEXTS:
        assert len(onnx_embedder.tokenizer.encode(text)) == len(torch_embedder.tokenizer.encode(text))
    assert len(onnx_embedder.tokenizer.encode(TRACEBACK * 12)) > 256  # counting never truncates


@pytest.mark.model
def test_export_cache_is_reused(onnx_embedder, monkeypatch):
    from trajsearch.embed import onnx_runtime as embed_onnx

    path = onnx_embedder.onnx_path
    assert path.exists() and path.stat().st_size > 50_000_000
    assert not list(path.parent.glob(path.name + ".*.tmp"))  # no leftovers of an export
    mtime = path.stat().st_mtime_ns

    def no_export(*args, **kwargs):
        raise AssertionError("exported again although the cached file exists")

    monkeypatch.setattr(embed_onnx, "export_onnx", no_export)
    again = embed_onnx.OnnxMiniLMEmbedder(threads=1)
    assert again.onnx_path == path and path.stat().st_mtime_ns == mtime
    np.testing.assert_allclose(again.encode(TEXTS[:3]), onnx_embedder.encode(TEXTS[:3]), atol=1e-6)


@pytest.mark.model
def test_cached_load_does_not_import_torch(onnx_embedder):
    code = (
        "import sys\n"
        "from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder\n"
        "OnnxMiniLMEmbedder(threads=1).encode(['hello'])\n"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
