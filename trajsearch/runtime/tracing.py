"""Retrieval spans: what the agent asked trajsearch and what it was shown, in the agent's own trace.

Every runtime retrieval (``context_for``, ``exemplars``, ``warnings``, the
``search_past_runs`` tool, a loop step) runs inside one OpenTelemetry span
when the application has OpenTelemetry configured; with only
``opentelemetry-api`` installed and no SDK, the tracer is a no-op and costs
nothing measurable.

Attributes follow the GenAI semantic conventions' retrieval span
(``gen_ai.operation.name = "retrieval"``, ``gen_ai.data_source.id``,
``gen_ai.request.top_k``, ``gen_ai.retrieval.query.text``,
``gen_ai.retrieval.documents`` as JSON of ``{id, score}``) and, for what
those do not cover, OpenInference's retriever attributes
(``openinference.span.kind = RETRIEVER``, ``input.value``,
``retrieval.documents.{i}.document.{id,score,metadata}``), plus
``trajsearch.*``: kind, mode, filters (the applicability filters from the
trusted context: versions, levels, outcomes, tools; never keys or secrets),
strategy and tokens rendered.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from opentelemetry import trace

from .context import RuntimeContext

DATA_SOURCE = "trajsearch"
_tracer = trace.get_tracer("trajsearch.runtime")


@contextmanager
def retrieval(kind: str, query: str, ctx: RuntimeContext, *, k: int | None = None,
              mode: str | None = None) -> Iterator[trace.Span]:
    """A span around one retrieval; record what came back with :func:`record_results`."""
    with _tracer.start_as_current_span("retrieval", kind=trace.SpanKind.INTERNAL) as span:
        if span.is_recording():
            filters = {
                "env_versions": list(ctx.env_version), "policy_versions": list(ctx.policy_version),
                "tools_available": list(ctx.tools_available),
            }
            span.set_attributes({
                "gen_ai.operation.name": "retrieval",
                "gen_ai.data_source.id": DATA_SOURCE,
                "gen_ai.retrieval.query.text": query,
                "openinference.span.kind": "RETRIEVER",
                "input.value": query,
                "trajsearch.kind": kind,
                "trajsearch.tenant": ctx.tenant,
                "trajsearch.filters": json.dumps(filters, sort_keys=True),
            })
            if k is not None:
                span.set_attribute("gen_ai.request.top_k", k)
            if mode:
                span.set_attribute("trajsearch.mode", mode)
        yield span


def record_results(span: trace.Span, items: Sequence[Any], *, strategy: str | None = None,
                   tokens: int | None = None) -> None:
    """Hits (anything with ``trajectory_id`` and a similarity or score) and what was rendered. An item's ``kind``
    (exemplar, warning, recovery) goes in its metadata: a recovery is a successful run shown beside failed ones."""
    if not span.is_recording():
        return
    documents = []
    for n, item in enumerate(items):
        doc_id = str(getattr(item, "trajectory_id", "") or getattr(item, "id", ""))
        score = getattr(item, "similarity", None)
        score = float(score if score is not None else getattr(item, "score", 0.0) or 0.0)
        documents.append({"id": doc_id, "score": round(score, 4)})
        metadata = {k: getattr(item, k) for k in ("kind", "trace_uri", "outcome", "level", "step_index", "env_version")
                    if getattr(item, k, None) not in (None, "")}
        span.set_attributes({
            f"retrieval.documents.{n}.document.id": doc_id,
            f"retrieval.documents.{n}.document.score": score,
            f"retrieval.documents.{n}.document.metadata": json.dumps(metadata, default=str),
        })
    span.set_attribute("gen_ai.retrieval.documents", json.dumps(documents))
    span.set_attribute("trajsearch.hits", len(documents))
    if strategy:
        span.set_attribute("trajsearch.strategy", strategy)
    if tokens is not None:
        span.set_attribute("trajsearch.tokens", tokens)
