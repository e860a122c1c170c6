"""OTel span exports of round 42's probe D read through the public reader: OpenLLMetry events mode, Zipkin v2 JSON,
AutoGen 0.7 team runs.

The fixtures (``fixtures/otel-genai/.real/probe42``, see its README.md) are trimmed from files the released
instrumentation packages wrote with the OTel SDK's own encoders.
"""

from __future__ import annotations

import json
from pathlib import Path

import adapter_support

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "probe42"


def _acts(run) -> list[tuple[str, str | None]]:
    return [(s.action, s.observation) for s in run.steps]


def test_openllmetry_event_mode_tool_calls_beside_the_message_are_kept() -> None:
    """Bug (OpenLLMetry ``opentelemetry-instrumentation-openai`` 0.62.4, ``use_attributes=False``): its
    ``gen_ai.choice`` body holds ``tool_calls`` beside ``message`` (``{"index", "message": {"content": null},
    "finish_reason": "tool_calls", "tool_calls": [...]}``); only ``message.tool_calls`` was read, so the run kept
    its final answer alone and lost both ``get_weather`` calls with their results."""
    run = adapter_support.only(PROBE / "openllmetry-0.62.4-events-tool-calls.otlp.jsonl")
    assert run.task == "What is the weather in London and Berlin?"
    acts = _acts(run)
    assert acts[:2] == [("get_weather", "London: 18C cloudy"), ("get_weather", "Berlin: 18C cloudy")]
    assert [s.arguments for s in run.steps[:2]] == [{"city": "London"}, {"city": "Berlin"}]
    assert acts[2][0] == "respond" and len(acts) == 3


def test_zipkin_v2_json_reads_as_the_same_run_as_its_otlp_twin() -> None:
    """Bug (pydantic-ai 2.68 spans written by ``opentelemetry-exporter-zipkin-json``'s v2 encoder, what every OTel
    SDK's Zipkin exporter sends and Zipkin's ``/api/v2/trace/<id>`` returns): each span (``traceId``, ``id``,
    ``parentId``, µs ``timestamp`` / ``duration``, attributes as text ``tags``) was rejected as "not a span"; the
    run now reads as the OTLP/JSON export of the same spans does."""
    zipkin = adapter_support.only(PROBE / "pydantic-ai-2.68-v5-parallel-tools.zipkin.json")
    otlp = adapter_support.only(PROBE / "pydantic-ai-2.68-v5-parallel-tools.otlp.jsonl")
    assert zipkin.trajectory_id == otlp.trajectory_id == "otel:16b7b93f7fe4f8f03ad9f4ae89d41bba"
    assert (zipkin.task, zipkin.model_id, zipkin.metadata) == (otlp.task, otlp.model_id, otlp.metadata)
    untimed = {"started_at", "ended_at"}  # Zipkin rounds to microseconds
    assert [s.model_dump(exclude=untimed) for s in zipkin.steps] == [s.model_dump(exclude=untimed) for s in otlp.steps]
    assert _acts(zipkin) == [("get_weather", "sunny in London"), ("get_weather", "sunny in Berlin"), ("respond", None)]
    assert abs((zipkin.created_at - otlp.created_at).total_seconds()) < 1e-5  # Zipkin keeps microseconds


def test_a_zipkin_spans_error_status_and_exception_annotation_fail_the_step() -> None:
    """Bug (same exporter, a pydantic-ai tool raising ``ValueError('database offline')``): the status is the
    ``otel.status_code: ERROR`` tag, the exception event an annotation whose value is ``{"exception": {...}}``."""
    run = adapter_support.only(PROBE / "pydantic-ai-2.68-v5-tool-raises.zipkin.json")
    assert run.task == "Look up x"
    assert run.outcome.value == "failure"
    [step] = run.steps
    assert (step.action, step.arguments, step.error) == ("lookup", {"q": "x"}, "ValueError: database offline")


def _one_span_a_line(path: Path, out: Path) -> Path:
    """The spans of an OTLP file as one request each, last first (an exporter's batches come in any order)."""
    lines = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line).get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    lines.append({"resourceSpans": [{**resource, "scopeSpans": [{**scope, "spans": [span]}]}]})
    out.write_text("".join(json.dumps(r) + "\n" for r in reversed(lines)))
    return out


def test_an_autogen_team_run_over_linked_traces_is_one_run() -> None:
    """Bug (autogen-agentchat 0.7.5 with ``opentelemetry-instrumentation-openai-v2`` content capture): AutoGen's
    runtime starts a trace per published message, linked (OTLP ``links``) to the trace that published it; one
    ``RoundRobinGroupChat([writer, critic]).run(task="Write a haiku about rain.")`` was a run per agent turn (the
    critic's task the writer's reply, "Hello there!") plus 11 traces rejected as "not an agent run". Now: one run,
    the team's task, each agent's turn a step; the single agent's unlinked run beside it stays its own."""
    runs = {r.task: r for r in adapter_support.runs(PROBE / "autogen-0.7.5-team-openai-v2-content.otlp.jsonl")}
    assert set(runs) == {"Write a haiku about rain.", "What is the weather in London and Berlin?"}
    team = runs["Write a haiku about rain."]
    assert _acts(team) == [("respond", None), ("respond", None)]
    assert [s.arguments for s in team.steps] == [{"content": "Hello there!"}] * 2
    assert team.metadata["spans"] == 36 and "caused_by" not in team.metadata
    assert [a for a, _ in _acts(runs["What is the weather in London and Berlin?"])] == ["get_weather", "get_weather",
                                                                                        "respond"]


def test_an_autogen_team_runs_id_does_not_depend_on_the_order_its_traces_were_written(tmp_path: Path) -> None:
    """The run is keyed by the trace its chain started from, however the exporter batched the spans."""
    path = PROBE / "autogen-0.7.5-team-openai-v2-content.otlp.jsonl"
    ids = {r.task: r.trajectory_id for r in adapter_support.runs(path)}
    shuffled = {r.task: r.trajectory_id for r in adapter_support.runs(_one_span_a_line(path, tmp_path / "x.jsonl"))}
    assert shuffled == ids


def test_an_autogen_team_run_without_message_content_has_its_task_and_turns() -> None:
    """Bug (autogen-agentchat 0.7.5 alone, no content capture: its default): the traces of the team's turns became
    0-step runs whose task was a pub/sub topic id (``autogen publish writer_ab82….(ab82…)-T (no input recorded)``).
    AutoGen's runtime records the messages it delivers (``message``: the ``GroupChatStart`` task, each agent's
    ``GroupChatMessage``) whatever the content setting: the team's run has its task and each turn's answer."""
    runs = adapter_support.runs(PROBE / "autogen-0.7.5-team-no-content.otlp.jsonl")
    [team] = [r for r in runs if r.task == "Write a haiku about rain."]
    assert [s.arguments for s in team.steps] == [{"content": "Hello there!"}] * 2
    assert not any("-T (no input recorded)" in r.task for r in runs)
    assert len(runs) == 2  # and the single agent's run, its honest "(no input recorded)" task kept
