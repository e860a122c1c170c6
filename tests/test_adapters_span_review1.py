"""OTel span files with several requests, and the agent a run is credited to: defects found by round 40's code review
(``/tmp/p40/review1/REPORT.md``, F1-F3), read through the public reader.

The files are built in ``tmp_path`` from real fixtures (sources in ``fixtures/otel-genai/.real/SOURCE.md`` and
``.derived/SOURCE.md``): only their layout changes (one request per line, ``jq .``-style pretty requests one after
another), plus the changes each docstring names.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump

from adapter_support import only

OTEL = Path(__file__).parent / "fixtures" / "otel-genai"
#: ADK 2.10 ``v2_event_only``: one pretty OTLP object, its spans without content, the words in its log record.
EVENT_ONLY = OTEL / ".derived" / "adk-2.10-event-only-content-in-logs.pretty.otlp.json"
EVENT_ONLY_TRACE = "c1f9676654114ff45b1aa738ccf1989a"
KAGENT_TEMPO = OTEL / ".real" / "kagent" / "helm-agent-adk-openllmetry.tempo.json"


def _requests() -> tuple[dict, dict]:
    """The event-only capture's spans request and logs request."""
    whole = json.loads(EVENT_ONLY.read_text())
    return {"resourceSpans": whole["resourceSpans"]}, {"resourceLogs": whole["resourceLogs"]}


def _runs(path: Path) -> dict[str, tuple[str, list[tuple[str, dict]]]]:
    """trajectory id -> (task, [(action, arguments)]); fails on any rejected record."""
    results = list(read_dump(path))
    assert [r.error for r in results if not r.ok] == []
    return {r.trajectory.trajectory_id: (r.trajectory.task, [(s.action, s.arguments) for s in r.trajectory.steps])
            for r in results}


ANSWER = [("respond", {"content": "I am a helpful assistant built with ADK."})]


@pytest.mark.parametrize("first", ["logs", "spans"])
def test_pretty_otlp_requests_one_after_another_are_all_read(tmp_path: Path, first: str) -> None:
    """F1: ``jq .`` of a collector's output gives pretty requests one after another. A file whose first request is
    an OTLP object was streamed with ijson, which stops at the second value ("trailing garbage"): logs first, the
    whole file was rejected; spans first, its log records (the run's only words) were lost."""
    spans, logs = _requests()
    path = tmp_path / "export.json"
    ordered = [logs, spans] if first == "logs" else [spans, logs]
    path.write_text("\n".join(json.dumps(r, indent=2) for r in ordered) + "\n")
    assert _runs(path) == {f"otel:{EVENT_ONLY_TRACE}": ("Hello, who are you?", ANSWER)}


def test_collector_logs_jsonl_whose_first_line_is_over_64_kib_is_read_whole(tmp_path: Path) -> None:
    """F1: the collector file exporter writes a logs pipeline one request per line, and a GenAI event batch holding
    a whole prompt is easily over 64 KiB. Such a first line was taken for one huge request: the file was rejected
    with "trailing garbage" and the spans file beside it gave a run with no task. Line 2 is the capture's own logs
    request; line 1 a copy under trace id ...02 whose prompt is padded past 64 KiB (as the review built it)."""
    spans, logs = _requests()
    (tmp_path / "spans.jsonl").write_text(json.dumps(spans) + "\n")
    real = json.dumps(logs)
    padded = real.replace("Hello, who are you?", "Hello, who are you?" + " please read this long context." * 2400)
    big = padded.replace(EVENT_ONLY_TRACE, "0" * 31 + "2")
    assert len(big) > 64 * 1024 and big.count("0" * 31 + "2") == 1
    (tmp_path / "logs.jsonl").write_text(big + "\n" + real + "\n")
    runs = _runs(tmp_path)
    assert runs[f"otel:{EVENT_ONLY_TRACE}"] == ("Hello, who are you?", ANSWER)
    task, steps = runs["otel:" + "0" * 31 + "2"]
    assert task.startswith("Hello, who are you? please read this long context.") and steps == ANSWER


def test_tempo_traces_one_per_line_are_all_read_when_the_first_is_over_64_kib(tmp_path: Path) -> None:
    """F2: Tempo traces saved one per line (``curl .../api/traces/$id >> traces.jsonl``): the real kagent trace is
    80 KB, and a first line over 64 KiB was streamed as one trace, so every later trace was lost with "trailing
    garbage". Line 2 is the same trace under another trace id."""
    trace = KAGENT_TEMPO.read_text().strip()
    path = tmp_path / "traces.jsonl"
    path.write_text(trace + "\n" + trace.replace("dd547580319ab031", "ee547580319ab031") + "\n")
    runs = _runs(path)
    assert sorted(runs) == ["otel:dd547580319ab0312cee07f1def50dad", "otel:ee547580319ab0312cee07f1def50dad"]
    assert {task for task, _ in runs.values()} == {"list all helm releases"}


def test_a_runs_agent_identity_comes_from_one_agent() -> None:
    """F3: under a root that is no agent (``POST /``), each agent fact was taken from the first agent span that had
    it, so the run was credited to the ``guard`` agent by name and to ``travel_planner`` by id, conversation and
    provider: a pair that names no agent. Who the agent is now comes from one agent, the outermost agent span that
    names one (the shallowest, then the earliest; real Agents SDK runs: ``test_adapters_span_review3.py``); the
    conversation, the whole request's, from any (kagent's real trace needs it:
    ``test_the_agent_span_gives_the_run_its_agent_and_conversation_under_an_http_root``). The file is the review's
    hand-built input; ``fixtures/otel-genai/.edge/SOURCE.md``."""
    run = only(OTEL / ".edge" / "two-agents-under-http-root.json")
    assert run.task == "Plan a trip to Rome"
    assert run.metadata["agent_name"] == "guard"
    assert not {"agent_id", "provider"} & set(run.metadata)
    assert run.metadata["conversation_id"] == "conv-777"
