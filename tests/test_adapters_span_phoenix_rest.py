"""Phoenix's own REST span exports read as the runs they hold (probe A, A1).

``GET /v1/projects/{p}/spans`` answers ``{"data": [Span...], "next_cursor"}``, each span flat with its kind moved
out of the attributes into ``span_kind``; ``.../spans/otlpv1`` answers the same page as OTLP spans with protobuf's
field names, every ``AnyValue`` member written, the unset ones null. The fixtures
(``fixtures/openinference/.real/phoenix-rest``, see its SOURCE.md) are answers of a local ``arize-phoenix==20.26.1``
fed the project's real OpenInference fixtures, saved unchanged; each is read as the fixture it was fed.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import adapter_support
from trajsearch.ingest.adapters._otlp import attributes
from trajsearch.ingest.detect import SideFile, detect_format
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "openinference" / ".real"
PHOENIX = REAL / "phoenix-rest"


def _same_run(run: Trajectory) -> dict:
    """A run as read, but for what Phoenix does not keep: the resource (``metadata.service``)."""
    dumped = run.model_dump(mode="json")
    dumped["metadata"].pop("service", None)
    return dumped


def test_a_page_of_phoenix_spans_is_the_run_phoenix_was_sent() -> None:
    """``GET /v1/projects/langgraph/spans`` (one JSON line of 90 kB: detected by its head): "unrecognised dump
    format", since Phoenix moves ``openinference.span.kind`` into each span's ``span_kind``. It is the LangGraph
    run Phoenix was sent, step for step."""
    page = PHOENIX / "langgraph.spans.json"
    assert detect_format(page) == "openinference"
    run = adapter_support.only(page)
    sent = adapter_support.only(REAL / "langgraph-react-agent.otlp.json")
    assert [(s.action, s.error) for s in run.steps][:2] == [
        ("get_weather", None), ("get_population", "ValueError: population database unavailable for Paris")]
    assert _same_run(run) == _same_run(sent)


def test_phoenix_otlp_spans_are_the_run_phoenix_was_sent() -> None:
    """``GET /v1/projects/anthropic/spans/otlpv1``: protobuf's field names (``string_value``,
    ``start_time_unix_nano``) on bare spans; the trace was rejected as "not an agent run ... no input". It is the
    Anthropic run Phoenix was sent, its failed ``get_air_quality`` call and times included."""
    page = PHOENIX / "anthropic.spans-otlpv1.json"
    assert detect_format(page) == "openinference"
    run = adapter_support.only(page)
    sent = adapter_support.only(REAL / "anthropic-3.1-tool-result-is-error.otlp.jsonl")
    assert [s.action for s in run.steps] == ["get_weather", "get_air_quality", "respond"]
    assert run.steps[1].error == "Error: No sensor data for Paris" and run.steps[0].ended_at is not None
    assert _same_run(run) == _same_run(sent)


def test_phoenix_otlp_values_other_than_text_are_kept() -> None:
    """Phoenix writes every ``AnyValue`` member, the unset ones null: an int value comes after
    ``"string_value": null``, which was taken for the value (the token counts read as None)."""
    spans = json.loads((PHOENIX / "anthropic.spans-otlpv1.json").read_text())["data"]
    llm = [attributes(s["attributes"]) for s in spans if s["name"] == "messages.create"]
    assert [(a["llm.token_count.prompt"], a["llm.token_count.completion"]) for a in llm] == [(20, 7), (20, 7)]
    assert [a["openinference.span.kind"] for a in llm] == ["LLM", "LLM"]


def test_an_empty_phoenix_page_says_it_holds_no_spans() -> None:
    """Phoenix's answer for a project with no spans, ``{"data": [], "next_cursor": null}``: "unrecognised dump
    format" with advice to force one. It holds no spans, and says so."""
    with pytest.raises(SideFile, match=r"no run in this file: an empty page of Phoenix's REST API .*no spans"):
        detect_format(PHOENIX / "default.empty.spans.json")


def test_a_page_with_more_pages_after_it_says_so(caplog: pytest.LogCaptureFixture) -> None:
    """``?limit=2`` of a 3-span trace: the page was read as a whole run, its ``get_weather`` call silently lost.
    Its ``next_cursor`` says more pages exist: reading it warns, naming the cursor."""
    with caplog.at_level(logging.WARNING):
        run = adapter_support.only(PHOENIX / "anthropic.spans.limit2.json")
    assert run.task == "What's the weather and air quality in Paris right now?"
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("'U3BhbjoxMw=='" in w and "more pages exist" in w for w in warned), warned
