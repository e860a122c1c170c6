"""What ingest embeds and how (issue 12): each distinct text once, through the embedder's bulk
path where it has one (embed/bulk.py), with vectors that match the query path's."""

from __future__ import annotations

import numpy as np
import pytest

from trajsearch.embed import HashingEmbedder, document_encoder
from trajsearch.embed.bulk import choose, cpu_has_amx, cpu_has_vnni
from trajsearch.represent import WINDOW_TOKENS
from trajsearch.search import TrajSearch

from conftest import make_run

TEXTS = [
    "Fix the failing unit test in the payments service",
    "ModuleNotFoundError: No module named 'yaml'",
    "[step 3] action: bash pytest -x tests/test_payments.py\nresult: 1 failed: AssertionError: 3 != 4",
    "Cancel my reservation ABC123 and refund the unused segments to the original card. " * 12,
    "ls",
] * 8


class DocumentCounter(HashingEmbedder):
    """The hashing test embedder with a bulk path that records what it was given."""

    def __init__(self) -> None:
        super().__init__()
        self.documents: list[str] = []
        self.caps: dict[str, int | None] = {}  # text -> the token cap it was embedded with

    def encode_documents(self, texts, *, batch_size: int = 64, max_tokens: int | None = None):
        self.documents.extend(texts)
        self.caps.update(dict.fromkeys(texts, max_tokens))
        return self.encode(texts, batch_size=batch_size)


def test_each_distinct_text_is_embedded_once(tmp_path):
    embedder = DocumentCounter()
    trials = [make_run(f"trial-{n}") for n in range(4)]  # one task, four runs with the same steps
    other = make_run("other", task="Add a dark mode toggle to the settings page")
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=embedder) as ts:
        indexer = ts.indexer()
        report = indexer.add([*trials[:2], other])
        later = indexer.add(trials[2:])  # a later batch: its texts were embedded already
        rows = list(ts.index.iterate(["trajectory_id", "level", "text", "embedding"], tenant="acme"))
    assert report.ingested == 3 and later.ingested == 2 and len(rows) == report.rows + later.rows
    texts = [r["text"] for r in rows]
    assert sorted(embedder.documents) == sorted(set(texts))  # every distinct text, once, through the bulk path
    assert indexer.texts_embedded == len(set(texts))
    for row in rows:  # step windows from their first WINDOW_TOKENS tokens; the rest whole, as queries
        assert embedder.caps[row["text"]] == (WINDOW_TOKENS if row["level"] == "step" else None), row["level"]
    by_text: dict[str, list] = {}
    for row in rows:
        by_text.setdefault(row["text"], []).append(row["embedding"])
    for text, vectors in by_text.items():
        assert all(np.allclose(v, vectors[0]) for v in vectors)
        np.testing.assert_allclose(vectors[0], embedder.encode([text])[0], atol=1e-6)


def test_embedders_without_a_bulk_path_encode_documents_as_queries():
    hashing = HashingEmbedder()
    assert document_encoder(hashing) == hashing.encode
    np.testing.assert_array_equal(document_encoder(hashing)(TEXTS[:5]), hashing.encode(TEXTS[:5]))


def test_the_bulk_path_choice(monkeypatch):
    monkeypatch.setenv("TRAJSEARCH_BULK", "fastest")
    with pytest.raises(ValueError, match="TRAJSEARCH_BULK"):
        choose()
    monkeypatch.setenv("TRAJSEARCH_BULK", "off")
    assert choose() == "off"
    assert choose("cpu-bf16") == "cpu-bf16"
    assert choose("cpu-int8") == "cpu-int8"
    monkeypatch.delenv("TRAJSEARCH_BULK")
    assert choose() in ("cuda", "cpu-bf16" if cpu_has_amx() else "cpu-int8" if cpu_has_vnni() else "off")


@pytest.mark.model
def test_bulk_vectors_match_the_query_path(real_embedder):
    """On this machine's bulk path (bfloat16 on AMX: the default here), the vectors ingest stores are
    within cosine 0.9999 of the ones queries get, and rank the texts alike."""
    if choose() in ("off", "cpu-int8"):
        pytest.skip("no bfloat16 / fp16 path on this machine (no AMX, no GPU): whole texts go through encode")
    queries = real_embedder.encode(TEXTS[:5])
    documents = real_embedder.encode_documents(TEXTS)
    assert documents.shape == (len(TEXTS), 384) and documents.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(documents, axis=1), 1.0, rtol=1e-5)
    assert (documents[:5] * queries).sum(axis=1).min() >= 0.9999
    np.testing.assert_array_equal(np.argsort(-(documents[:5] @ queries.T), axis=0),
                                  np.argsort(-(queries @ queries.T), axis=0))


@pytest.mark.model
def test_bulk_batches_run_side_by_side_and_each_text_keeps_its_vector(real_embedder):
    """Many batches are encoded a batch per core at once: every text still gets its own vector
    (as when it is encoded alone), and torch's thread setting is what it was."""
    if choose() in ("off", "cpu-int8"):
        pytest.skip("no torch bulk path on this machine (no AMX, no GPU)")
    import torch

    threads = torch.get_num_threads()
    texts = [f"{text} (variant {i}: {'x' * (i * 7 % 50)})" for i, text in enumerate(TEXTS * 8)]
    together = real_embedder.encode_documents(texts, batch_size=4)  # several batches in flight
    alone = np.vstack([real_embedder.encode_documents([text]) for text in texts[::9]])
    assert (together[::9] * alone).sum(axis=1).min() >= 0.999
    assert torch.get_num_threads() == threads


@pytest.mark.model
def test_int8_windows_stay_close_to_fp32_and_whole_texts_stay_exact():
    """The int8 path (CPUs with VNNI and no AMX: embed/bulk.py) embeds only texts cut at a token cap
    (step windows), within cosine 0.97 of fp32 whatever their batch, neighbours kept; whole texts
    (task, summary and failure rows) get exactly the query path's vectors."""
    from trajsearch.embed.onnx_runtime import OnnxMiniLMEmbedder

    int8, fp32 = OnnxMiniLMEmbedder(bulk="cpu-int8"), OnnxMiniLMEmbedder(bulk="off")
    texts = list(dict.fromkeys(TEXTS))
    capped = int8.encode_documents(TEXTS, max_tokens=WINDOW_TOKENS)[: len(texts)]
    want = fp32.encode_documents(texts, max_tokens=WINDOW_TOKENS)
    alone = np.vstack([int8.encode_documents([t], max_tokens=WINDOW_TOKENS) for t in texts])
    assert int8.bulk == "cpu-int8" and capped.dtype == np.float32
    assert (capped * want).sum(axis=1).min() >= 0.97 and (alone * want).sum(axis=1).min() >= 0.97
    assert (capped * want).sum(axis=1).max() < 0.99999  # the int8 graph did the work
    np.testing.assert_array_equal(np.argmax(capped @ want.T, axis=1), np.arange(len(texts)))
    np.testing.assert_array_equal(int8.encode_documents(texts), fp32.encode(texts))


def test_the_indexer_writes_what_the_bulk_path_returned(tmp_path):
    embedder = DocumentCounter()
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=embedder) as ts:
        report = ts.add([make_run("r1")])
        assert ts.search("payments", tenant="acme", k=1, mode="dense")[0].trajectory_id == "r1"
        rows = list(ts.index.iterate(["text", "embedding"], tenant="acme"))
    assert len(rows) == report.rows > 0
    assert sorted(embedder.documents) == sorted({row["text"] for row in rows})
    for row in rows:
        np.testing.assert_allclose(row["embedding"], embedder.encode([row["text"]])[0], atol=1e-6)


@pytest.mark.model
def test_windows_are_embedded_from_their_first_tokens_and_the_rest_as_queries(tmp_path, real_embedder):
    """What ingest stores: a step window's vector is its first WINDOW_TOKENS tokens' (the lexical
    leg has all of it), a task row's is exactly what a query of the same text gets."""
    long_output = "\n".join(f"tests/test_payments.py::test_case_{i} PASSED" for i in range(60))
    run = make_run("r1", steps=[("bash", {"command": "pytest -v"}, long_output), ("bash", {"command": "ls"}, "ok")])
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=real_embedder) as ts:
        ts.add([run])
        rows = {r["level"]: r for r in ts.index.iterate(["level", "text", "embedding"], tenant="acme")}
    window, task = rows["step"], rows["task"]
    assert len(real_embedder.tokenizer.encode(window["text"]).ids) > 2 * WINDOW_TOKENS
    capped = real_embedder.encode_documents([window["text"]], max_tokens=WINDOW_TOKENS)[0]
    assert float(np.dot(window["embedding"], capped)) >= 0.999
    assert float(np.dot(window["embedding"], real_embedder.encode([window["text"]])[0])) < 0.99
    assert float(np.dot(task["embedding"], real_embedder.encode([task["text"]])[0])) >= 0.9999
