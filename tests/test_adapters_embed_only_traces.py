"""Review 1 of round 12, D3: a trace whose only model work is embedding or rerank calls holds no agent run.

A RAG app embeds each query before it searches; where each SDK call is a trace of its own, the export holds one
trace per query of nothing but that call. Every span adapter now passes such traces over by one rule
(``_spans.no_agent_work``), as vercel-ai already did, rather than keep a run of no steps whose task is the query.

Fixtures: ``fixtures/{otel-genai,openinference}/.real/rag-embed`` (released OpenLLMetry and OpenInference OpenAI
instrumentors, see their SOURCE.md) and the real AI SDK 6 RAG export ``fixtures/vercel-ai/.real/probeH45``.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format, read_dump

from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
EMBED_ONLY = {
    "otel-genai": FIXTURES / "otel-genai" / ".real" / "rag-embed" / "openllmetry-0.62.4-embed-only.otlp.json",
    "openinference": FIXTURES / "openinference" / ".real" / "rag-embed" / "oi-openai-0.1.66-embed-only.otlp.json",
}
VERCEL_RAG = FIXTURES / "vercel-ai" / ".real" / "probeH45" / "ai6.0.333-rag.otlp.json"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An embedded store under ``tmp_path/home`` for the CLI, with the hashing test embedder."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.mark.parametrize("fmt", sorted(EMBED_ONLY))
def test_query_embedding_traces_are_passed_over(fmt: str, caplog: pytest.LogCaptureFixture) -> None:
    """Bug (review 1 of round 12, D3): OTel GenAI and OpenInference stored each query's embedding call as a run of
    no steps whose task was the query ("How long do refunds take?"), polluting search and exemplars."""
    path = EMBED_ONLY[fmt]
    assert detect_format(path) == fmt
    with caplog.at_level(logging.INFO, logger="trajsearch.ingest.adapters"):
        results = list(read_dump(path))
    assert results == []  # nothing stored, nothing rejected
    assert caplog.text.count("not an agent run: embedding calls only") == 2


@pytest.mark.parametrize("fmt", sorted(EMBED_ONLY))
def test_query_embedding_traces_ingest_nothing_and_reject_nothing(fmt: str, home: Path) -> None:
    """The CLI's view of the same: no run stored, none rejected (exit 0)."""
    code, out, err = run_cli("ingest", str(EMBED_ONLY[fmt]), "-t", "acme", "--json")
    assert code == 0, out + err
    summary = json.loads(out)
    assert (summary["ingested"], summary["rejected"]) == (0, 0)


def test_an_agent_run_that_embeds_is_still_a_run() -> None:
    """The rule is about traces of embedding calls alone: the AI SDK RAG app's agent traces (``generateText`` with
    a retrieval tool that embeds) are still runs with their steps, its query-embedding traces passed over."""
    runs = [r.trajectory for r in read_dump(VERCEL_RAG)]
    assert runs and all(r.steps for r in runs)
