"""Retrieval spans: every runtime retrieval shows up in the application's OpenTelemetry trace.

Real SDK with its in-memory exporter; real Milvus Lite; the fast hashing *test* embedder.
"""

from __future__ import annotations

import json

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from trajsearch.runtime import Runtime, RuntimeContext

from conftest import failing_run, make_run
from test_empty_answers_alike import mixed  # noqa: F401  (the fixture)

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module", autouse=True)
def sdk():
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)  # once per process, as an application would
    yield


@pytest.fixture
def spans():
    _EXPORTER.clear()
    yield _EXPORTER
    _EXPORTER.clear()


def test_context_for_emits_retrieval_spans_with_query_filters_hits_and_tokens(hashing_ts, spans):
    hashing_ts.add([make_run("ok-1", env_version="v2"), failing_run("bad-1", "KeyError: 'user_id'", env_version="v2")])
    ctx = RuntimeContext(tenant="acme", env_version="v2", tools_available=["bash"])
    prompt = Runtime(hashing_ts).context_for("Fix the failing unit test in the payments service", ctx)

    by_kind = {s.attributes["trajsearch.kind"]: s for s in spans.get_finished_spans()}
    assert {"context", "exemplars", "warnings"} <= set(by_kind)
    outer = by_kind["context"]
    assert outer.name == "retrieval"
    assert outer.attributes["gen_ai.operation.name"] == "retrieval"
    assert outer.attributes["gen_ai.data_source.id"] == "trajsearch"
    assert outer.attributes["openinference.span.kind"] == "RETRIEVER"
    assert outer.attributes["input.value"] == outer.attributes["gen_ai.retrieval.query.text"]
    assert json.loads(outer.attributes["trajsearch.filters"])["env_versions"] == ["v2"]
    assert outer.attributes["trajsearch.strategy"] == prompt.strategy.value
    assert outer.attributes["trajsearch.tokens"] == prompt.tokens
    shown = {item.trajectory_id for item in [*prompt.exemplars, *prompt.warnings]}
    documents = json.loads(outer.attributes["gen_ai.retrieval.documents"])
    assert {d["id"] for d in documents} == shown and shown
    assert outer.attributes["retrieval.documents.0.document.id"] in shown
    exemplars = by_kind["exemplars"]
    assert exemplars.parent is not None and exemplars.parent.span_id == outer.context.span_id
    assert exemplars.attributes["gen_ai.request.top_k"] >= 1
    # why this strategy: the tenant's novelty threshold (too few tasks here to measure its own)
    assert exemplars.attributes["trajsearch.novelty.threshold"] == 0.314
    assert exemplars.attributes["trajsearch.novelty.basis"] == "global: fewer than 10 tasks"
    assert not any("key" in name.lower() and "api" in name.lower() for name in outer.attributes)


def test_the_tool_and_the_loop_emit_spans_too(hashing_ts, spans):
    hashing_ts.add([failing_run("bad-1", "KeyError: 'user_id'")])
    ctx = RuntimeContext(tenant="acme")
    runtime = Runtime(hashing_ts)
    result = runtime.tool(ctx)({"query": "KeyError: 'user_id'", "kind": "steps", "k": 2})
    assert result["status"] == "ok"
    runtime.loop().run("KeyError: 'user_id'", ctx)
    kinds = [s.attributes["trajsearch.kind"] for s in spans.get_finished_spans()]
    assert "tool:steps" in kinds and "loop" in kinds
    tool = next(s for s in spans.get_finished_spans() if s.attributes["trajsearch.kind"] == "tool:steps")
    assert tool.attributes["trajsearch.tool.status"] == "ok"
    assert tool.attributes["trajsearch.hits"] == len(result["results"])


def test_the_tools_answers_name_runs_by_id_and_its_spans_keep_the_trace_uri(hashing_ts, spans):
    """The tool's answers carried each run's trace URI, a path in this host's trace store the model cannot open: 18%
    of a tau-bench answer's results at 1,200 tokens, the runs' content 868 tokens where 978 fit without it (median;
    review of probe 54, 4). The answer names each run by its trajectory id; the tool's span, the audit of what
    the agent saw, keeps the URI of every result."""
    ok, bad = make_run("ok-1"), failing_run("bad-1", "KeyError: 'user_id'")
    hashing_ts.add([ok, bad])
    tool = Runtime(hashing_ts).tool(RuntimeContext(tenant="acme"), cap=3)
    for kind, query in (("exemplars", ok.task), ("failures", bad.task), ("steps", "KeyError: 'user_id'")):
        spans.clear()
        answer = tool({"query": query, "kind": kind})
        assert answer["results"] and "trace_uri" not in json.dumps(answer), kind
        (span,) = [s for s in spans.get_finished_spans() if s.attributes["trajsearch.kind"] == f"tool:{kind}"]
        for n, result in enumerate(answer["results"]):
            assert span.attributes[f"retrieval.documents.{n}.document.id"] == result["provenance"]["trajectory_id"]
            metadata = json.loads(span.attributes[f"retrieval.documents.{n}.document.metadata"])
            assert metadata["trace_uri"].startswith("file://"), kind


def test_the_context_span_records_only_the_runs_shown(hashing_ts, spans):
    """Review p39 F5: within a budget that leaves runs out, the context span listed every run found while
    ``PromptContext`` (and the text) held only those shown: the trace, the log of what the agent saw, disagreed.
    Real tau-bench failures (tests/fixtures/tau-bench/.runtime, see SOURCE.md there), hashing embedder."""
    from test_runtime_real import GROK_NOT_FOUND, OPEN, TAU_FAILED, runs

    hashing_ts.add([*runs(GROK_NOT_FOUND), *runs(TAU_FAILED)])
    prompt = Runtime(hashing_ts, OPEN).context_for("Error: user not found", RuntimeContext(tenant="acme"), budget=400)
    assert prompt.data.get("omitted") and prompt.warnings
    outer = next(s for s in spans.get_finished_spans() if s.attributes["trajsearch.kind"] == "context")
    recorded = [d["id"] for d in json.loads(outer.attributes["gen_ai.retrieval.documents"])]
    assert recorded == [item.trajectory_id for item in [*prompt.exemplars, *prompt.warnings]]


def test_the_loops_span_lists_the_recoveries_its_context_shows(hashing_ts, spans):
    """Review of round 22 (RT6, 1): the loop's context shows a run that got past the pasted error (``## Recovery 1``),
    but its span, the trace's record of what the agent was shown, listed exemplars and warnings only. Every span
    lists it, its metadata saying it is a recovery (a successful run beside failed ones). A real mini-swe-agent run
    (sqlfluff-2419, tests/fixtures/mini-swe-agent/.real/SOURCE.md) whose step 10 met the error; hashing embedder."""
    from pathlib import Path

    from trajsearch.ingest.read import read_dump

    fixture = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "recovered-pytest"
    [run] = [p.trajectory for p in read_dump(fixture, tenant="acme")]
    hashing_ts.add([run])
    line = "ModuleNotFoundError: No module named 'pytest'"
    result = Runtime(hashing_ts).loop().run(line, RuntimeContext(tenant="acme"))
    assert "## Recovery 1" in result.context
    # the loop's own record says so too: its result and its log of actions (they had said 0 exemplars, 0 warnings)
    assert [r["trajectory_id"] for r in result.to_dict()["recoveries"]] == [run.trajectory_id]
    assert "1 recoveries" in result.actions[-2].details and result.actions[-2].action.value == "GENERATE"
    # the first loop span: the caller's own query (a refinement drops the colon the error line is held by)
    span = next(s for s in spans.get_finished_spans() if s.attributes["trajsearch.kind"] == "loop")
    documents = json.loads(span.attributes["gen_ai.retrieval.documents"])
    assert [d["id"] for d in documents] == [run.trajectory_id]
    assert json.loads(span.attributes["retrieval.documents.0.document.metadata"])["kind"] == "recovery"


def test_the_tools_failures_span_says_each_documents_kind_as_the_warnings_span_does(mixed, spans):  # noqa: F811
    """Review RRT6, 1: the tool's span (``kind=failures`` over MCP, gRPC ``SearchPastRuns``, in-process) gave its
    documents no kind, so a run that got past the pasted error (a successful run) read there as one more failed run,
    where ``Runtime.warnings``' span says ``recovery``. Real mini-swe-agent runs, failed and as successes (see
    tests/test_empty_answers_alike.py); hashing embedder."""
    from test_empty_answers_alike import CTX, LINE

    def kinds(kind: str) -> list[tuple[str, str]]:
        (span,) = [s for s in spans.get_finished_spans() if s.attributes["trajsearch.kind"] == kind]
        return [(span.attributes[f"retrieval.documents.{n}.document.id"],
                 json.loads(span.attributes[f"retrieval.documents.{n}.document.metadata"])["kind"])
                for n in range(span.attributes["trajsearch.hits"])]

    answer = Runtime(mixed).tool(CTX)({"query": LINE, "kind": "failures", "k": 3})
    Runtime(mixed).warnings(LINE, CTX, k=3)
    assert [r["label"] for r in answer["results"]] == ["what not to do"] * 2 + ["how a past run got past this"]
    assert [kind for _, kind in kinds("tool:failures")] == ["warning", "warning", "recovery"]
    assert kinds("tool:failures") == kinds("warnings")
