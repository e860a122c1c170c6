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
    with caplog.at_level(logging.INFO):
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


# -- D4: what was passed over is counted, in the summary and the dry run ----------------------------------------




@pytest.mark.parametrize("fmt", sorted(EMBED_ONLY))
def test_an_input_whose_traces_were_all_passed_over_says_so(fmt: str, home: Path) -> None:
    """Bug (review 1 of round 12, D4): an export whose traces were all passed over ended with "no run in the input:
    its files hold no record of their format (... a tau2-bench results.json ...)", and the dry run said "runs 0;
    rejected 0": an empty export and one read and passed over looked alike. They are counted, by reason."""
    path = EMBED_ONLY[fmt]
    code, out, err = run_cli("ingest", str(path), "-t", "acme")
    said = " ".join((out + err).split())
    assert code == 0, said
    assert "read 0: ingested 0 runs" in said and "2 trace(s) passed over: embedding calls only" in said
    assert "no record of their format" not in said
    code, out, err = run_cli("ingest", str(path), "-t", "acme", "--dry-run")
    assert code == 0 and f"{path}: " in out
    assert "runs 0; rejected 0; passed over 2 trace(s): embedding calls only" in " ".join(out.split())
    code, out, _ = run_cli("ingest", str(path), "-t", "acme", "--dry-run", "--json")
    [entry] = json.loads(out)["files"]
    assert (entry["runs"], entry["rejected"], entry["passed_over"]) == (0, 0, {"trace": {"embedding calls only": 2}})


def test_the_traces_passed_over_beside_runs_are_counted(home: Path) -> None:
    """The AI SDK RAG app's export: its agent run is ingested, its two query-embedding traces counted (as a JSON
    summary field too), and a workflow's build trace beside its run likewise."""
    code, out, err = run_cli("ingest", str(VERCEL_RAG), "-t", "acme", "--json")
    assert code == 0, out + err
    summary = json.loads(out)
    assert (summary["ingested"], summary["passed_over"]) == (1, {"trace": {"embedding calls only": 2}})
    build = FIXTURES / "otel-genai" / ".real" / "probeD45-runtime" / "af-1.26-sequential-de.subset.otlp.json"
    code, out, err = run_cli("ingest", str(build), "-t", "acme")
    assert code == 0, out + err
    assert "1 trace(s) passed over: only builds a workflow" in " ".join(out.split())
