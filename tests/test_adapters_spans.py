"""Span formats on real files and real exporter output: OTel GenAI, OpenInference, Vercel AI SDK, OpenAI Agents SDK.

Every test goes through the public reader (``read_dump`` / ``detect_format``); the fixtures and where they
come from are described in each fixture folder's SOURCE.md.
"""

from __future__ import annotations

import base64
import json
import shutil
from functools import partial
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome, Trajectory

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
ANY_AGENT = FIXTURES / "otel-genai" / "any-agent" / "OPENAI_trace.json"
V2_NO_CONTENT = FIXTURES / "otel-genai" / "openai-v2"
V2 = FIXTURES / "otel-genai" / "openai-v2-content"
VERCEL = FIXTURES / "vercel-ai"
AGENTS = FIXTURES / "openai-agents"
PHOENIX = FIXTURES / "openinference" / "phoenix-spans.jsonl"
OI_SPEC = FIXTURES / "openinference" / ".real" / "spec-llm-span-tool-call.json"

WEATHER_TASK = "What's the weather in Paris right now? Answer in Celsius."
LYON_TASK = "What's the weather in Lyon today, and is the air clean?"


runs = partial(adapter_support.runs, tenant="acme")
one_run = partial(adapter_support.only, tenant="acme")


def actions(run: Trajectory) -> list[str | None]:
    return [s.action for s in run.steps]


def failing(run: Trajectory) -> list[str | None]:
    return [s.action for s in run.steps if s.error]


# -- OTel GenAI: any-agent -----------------------------------------------------------------


def test_any_agent_dump_is_unwrapped_and_its_attribute_names_read() -> None:
    """Bug 1: {"spans": [...]} was 'not a span'; then call_llm / gen_ai.output / gen_ai.tool.args gave 'no task'."""
    assert detect_format(ANY_AGENT) == "otel-genai"
    run = one_run(ANY_AGENT)
    trace_id = json.loads(ANY_AGENT.read_text())["spans"][0]["context"]["trace_id"]  # an integer in this dump
    assert run.trajectory_id == f"otel:{trace_id:032x}" == "otel:4bedea77bb33b9c5f280371eae21ea97"
    assert run.task == ("Find what year it is in the America/New_York timezone and write the value (single number) "
                        "to a file. Finally, return a list of the steps you have taken.")
    assert actions(run) == ["get_current_time", "write_file", "respond"]
    current, write, answer = run.steps
    assert current.arguments == {"timezone": "America/New_York"}
    assert json.loads(current.observation)["datetime"] == "2025-09-16T08:43:13-04:00"
    assert write.arguments == {"text": "2025"} and write.observation == "{}"
    assert json.loads(answer.arguments["content"])["steps"][1]["description"] == "Write the year to a file."
    assert failing(run) == []
    assert (run.outcome, run.reward, run.failure) == (Outcome.unknown, None, None)  # no verdict recorded
    assert run.model_id == "mistral/mistral-small-latest"
    assert run.created_at.isoformat() == "2025-09-16T12:43:13.209236+00:00"
    assert run.metadata["agent_name"] == "any_agent" and run.metadata["root_span"] == "invoke_agent [any_agent]"


def test_any_agent_tool_error_marks_only_that_step(tmp_path: Path) -> None:
    """any-agent sets ERROR with the tool's output as description when a tool call fails."""
    dump = json.loads(ANY_AGENT.read_text())
    write = next(s for s in dump["spans"] if s["name"] == "execute_tool write_file")
    write["status"] = {"status_code": "error", "description": "Error calling tool: disk full"}
    write["attributes"]["gen_ai.output"] = "Error calling tool: disk full"
    write["attributes"]["gen_ai.output.type"] = "text"
    (tmp_path / "trace.json").write_text(json.dumps(dump))
    run = one_run(tmp_path / "trace.json")
    assert failing(run) == ["write_file"]
    assert run.steps[1].error == "Error calling tool: disk full"
    assert run.steps[0].error is None and run.steps[2].error is None
    assert run.outcome is Outcome.unknown  # the agent span itself did not fail


def test_older_any_agent_dump_with_openinference_attributes_is_openinference(tmp_path: Path) -> None:
    spans = [{"name": "get_time", "kind": "internal", "context": {"trace_id": 7, "span_id": 2}, "parent": {"span_id": 1},
              "start_time": 1747991254373300804, "end_time": 1747991254375297492, "status": {"status_code": "ok"},
              "attributes": {"openinference.span.kind": "TOOL", "tool.name": "get_time", "input.value": "{}",
                             "output.value": "12:00"}, "events": []},
             {"name": "any_agent", "kind": "internal", "context": {"trace_id": 7, "span_id": 1}, "parent": None,
              "start_time": 1747991253176773492, "end_time": 1747991255000000000, "status": {"status_code": "ok"},
              "attributes": {"openinference.span.kind": "AGENT", "input.value": "What time is it?"}, "events": []}]
    (tmp_path / "OLD_trace.json").write_text(json.dumps({"spans": spans, "final_output": "12:00"}, indent=2))
    assert detect_format(tmp_path / "OLD_trace.json") == "openinference"
    run = one_run(tmp_path / "OLD_trace.json")
    assert (run.trajectory_id, run.task, actions(run)) == (f"oi:{7:032x}", "What time is it?", ["get_time"])


# -- OTel GenAI: opentelemetry-instrumentation-openai-v2 ----------------------------------------


def test_console_dump_without_content_is_a_run_per_trace_named_by_its_span() -> None:
    """Bug 2: ConsoleSpanExporter output gave 'no task'. Content capture was off: only the span name is there."""
    console = V2_NO_CONTENT / "console-latest.json"
    assert detect_format(console) == "otel-genai"
    first, second = runs(console)
    assert (first.trajectory_id, second.trajectory_id) == (
        "otel:97f1d2ff322a63ad86010aa30e3ffacd", "otel:a6e723f538cc2c2e4525fb10959ddc38")
    for run in (first, second):
        assert run.task == "chat gpt-4o-mini (no input recorded)"
        assert run.metadata["task_source"] == "span name"
        assert run.steps == []  # no tool call or answer text was recorded: none is made up
        assert run.model_id == "gpt-4o-mini-2024-07-18" and run.outcome is Outcome.unknown
    assert first.created_at.isoformat() == "2026-12-01T09:58:24.851231+00:00"
    # what is there is kept: the first call asked for tools, the second answered
    assert (first.metadata["finish_reasons"], second.metadata["finish_reasons"]) == (["tool_calls"], ["stop"])


def test_otlp_base64_ids_are_the_console_hex_ids_and_one_trace_read_twice_is_one_run() -> None:
    otlp = V2_NO_CONTENT / "otlp-latest.json"
    assert detect_format(otlp) == "otel-genai"
    ids = [r.trajectory_id for r in runs(otlp)]
    assert ids == [r.trajectory_id for r in runs(V2_NO_CONTENT / "console-latest.json")]
    assert [r.trajectory_id for r in runs(V2_NO_CONTENT)] == ids  # both files of the directory: 2 runs, not 4


def test_openai_v2_log_events_give_task_tool_call_and_answer() -> None:
    """Bug 3: message content lives in gen_ai.*.message / gen_ai.choice log records, joined by trace+span id."""
    console = V2 / "console-one-trace.json"
    assert detect_format(console) == "otel-genai"  # its first record is a log record
    run = one_run(console)
    assert run.task == WEATHER_TASK
    assert actions(run) == ["get_weather", "respond"]
    call, answer = run.steps
    assert call.arguments == {"city": "Paris", "unit": "celsius"}
    assert json.loads(call.observation) == {"temperature": 18, "unit": "C", "sky": "cloudy"}  # the tool message
    assert answer.arguments == {"content": "It is 18°C and cloudy in Paris right now."}
    assert failing(run) == [] and run.outcome is Outcome.unknown
    assert run.model_id == "gpt-4o-mini-2024-07-18"
    assert run.metadata["root_span"] == "weather-agent"


def test_otlp_logs_in_a_sibling_file_join_their_spans_through_the_spool() -> None:
    directory = V2 / "otlp-one-trace"
    assert detect_format(directory / "logs.json") == "otel-genai"
    assert detect_format(directory / "traces.json") == "otel-genai"
    run = one_run(directory)
    console = one_run(V2 / "console-one-trace.json")
    assert run.trajectory_id == console.trajectory_id
    assert (run.task, [s.model_dump() for s in run.steps]) == (console.task, [s.model_dump() for s in console.steps])
    # the spans alone: the chat calls, no content
    spans_only = one_run(directory / "traces.json")
    assert spans_only.metadata["task_source"] == "span name" and spans_only.steps == []


def test_two_chat_calls_of_one_trace_make_one_run_and_lone_calls_their_own() -> None:
    """Bug 4: a tool-call completion then the answer, under one parent span: one run with both steps."""
    together = one_run(V2 / "console-one-trace.json")
    assert actions(together) == ["get_weather", "respond"] and together.metadata["spans"] == 3
    first, second = runs(V2 / "console-two-traces.json")  # no parent span: each call is its own trace
    assert first.trajectory_id != second.trajectory_id
    assert (first.task, actions(first)) == (WEATHER_TASK, ["get_weather"])
    assert first.steps[0].observation is None  # its result is only in the other trace's input
    assert first.metadata["finish_reasons"] == ["tool_calls"]
    assert (second.task, actions(second)) == (WEATHER_TASK, ["respond"])


def test_server_error_fails_the_run_without_blaming_a_step() -> None:
    run = one_run(V2 / "console-server-error.json")
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == ("openai.InternalServerError: Error code: 500 - "
                                 "The server had an error while processing your request.")
    assert actions(run) == ["get_weather"] and failing(run) == []


def test_logs_alone_still_make_a_run(tmp_path: Path) -> None:
    shutil.copy(V2 / "otlp-one-trace" / "logs.json", tmp_path / "logs.json")
    run = one_run(tmp_path / "logs.json")
    assert (run.task, actions(run)) == (WEATHER_TASK, ["get_weather", "respond"])


def test_gen_ai_log_record_without_ids_is_rejected_by_name_and_the_rest_kept(tmp_path: Path) -> None:
    records = [json.loads(chunk) for chunk in _objects((V2 / "console-one-trace.json").read_text())]
    user = next(r for r in records if r.get("event_name") == "gen_ai.user.message")
    orphan = dict(user, trace_id="", span_id="")
    (tmp_path / "dump.jsonl").write_text("\n".join(json.dumps(r) for r in [orphan, *records]) + "\n")
    results = list(read_dump(tmp_path / "dump.jsonl"))
    errors = [r.error for r in results if not r.ok]
    assert errors == ["log event 'gen_ai.user.message' has no trace_id/span_id: it cannot be joined to its span"]
    assert [r.trajectory.task for r in results if r.ok] == [WEATHER_TASK]


def test_latest_semconv_operation_details_event(tmp_path: Path) -> None:
    """gen_ai.client.inference.operation.details (opentelemetry-util-genai, experimental semconv) as OTLP logs."""
    def kv(obj: dict) -> dict:
        return {"kvlistValue": {"values": [{"key": k, "value": _any(v)} for k, v in obj.items()]}}

    def _any(v: object) -> dict:
        if isinstance(v, dict):
            return kv(v)
        if isinstance(v, list):
            return {"arrayValue": {"values": [_any(x) for x in v]}}
        return {"stringValue": str(v)}

    trace_id, span_id = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
    inputs = [{"role": "user", "parts": [{"type": "text", "content": "Summarise the incident report."}]}]
    outputs = [{"role": "assistant", "parts": [{"type": "text", "content": "The outage lasted 12 minutes."}],
                "finish_reason": "stop"}]
    logs = {"resourceLogs": [{"resource": {"attributes": []}, "scopeLogs": [{"logRecords": [{
        "timeUnixNano": "1767261600000000000", "eventName": "gen_ai.client.inference.operation.details",
        "traceId": trace_id, "spanId": span_id,
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                       {"key": "gen_ai.input.messages", "value": _any(inputs)},
                       {"key": "gen_ai.output.messages", "value": _any(outputs)}]}]}]}]}
    spans = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [{
        "traceId": trace_id, "spanId": span_id, "name": "chat gpt-4.1", "startTimeUnixNano": "1767261599000000000",
        "endTimeUnixNano": "1767261600000000000", "status": {},
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                       {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4.1"}}]}]}]}]}
    (tmp_path / "otel.jsonl").write_text(json.dumps(logs) + "\n" + json.dumps(spans) + "\n")
    run = one_run(tmp_path / "otel.jsonl")
    assert (run.trajectory_id, run.task, run.model_id) == (f"otel:{trace_id}", "Summarise the incident report.", "gpt-4.1")
    assert [s.arguments for s in run.steps] == [{"content": "The outage lasted 12 minutes."}]


def _objects(text: str) -> list[str]:
    decoder, pos, out = json.JSONDecoder(), 0, []
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        value, end = decoder.raw_decode(text, pos)
        out.append(text[pos:end])
        pos = end
    return out


# -- OpenInference keeps working ------------------------------------------------------------


def test_openinference_is_not_taken_by_the_new_adapters() -> None:
    assert detect_format(PHOENIX) == "openinference"
    assert {r.trajectory_id for r in runs(PHOENIX)} == {
        "oi:6a5f1d0c2e8b4b7a9c3d2e1f0a9b8c7d", "oi:7b6e2e1d3f9c5c8b0d4e3f2a1b0c9d8e"}


def test_openinference_messages_held_whole_as_the_spec_writes_them() -> None:
    """Bug: ``llm.input_messages`` as a list of ``{"message.role", ...}`` (the spec's own span JSON,
    Phoenix exports) was not read: "no task: the root span 'llm' has no input"."""
    assert detect_format(OI_SPEC) == "openinference"
    run = one_run(OI_SPEC)
    assert run.task == "what is 23 times 87"
    [step] = run.steps
    assert step.action == "multiply" and step.arguments == {"a": 23, "b": 87}  # nested in message.tool_calls
    assert run.model_id == "gpt-3.5-turbo-0613"


# -- Vercel AI SDK ---------------------------------------------------------------------------


def test_vercel_real_capture_one_run_per_call_and_embeddings_passed_over() -> None:
    sample = VERCEL / "all-spans-trimmed.json"
    assert detect_format(sample) == "vercel-ai"  # not otel-genai, though its do* spans carry gen_ai.* too
    results = list(read_dump(sample))
    ok = {r.trajectory.trajectory_id: r.trajectory for r in results if r.ok}
    assert len(ok) == 8
    assert [r.error for r in results if not r.ok] == []  # the two embedding traces: no run, nothing wrong (probe H, A7)
    haiku = ok["vercel:b3e700af9eab81e19f72f964d62a35af"]  # ai.generateText.doGenerate alone in its trace
    assert haiku.task == "Write a haiku about programming."
    assert haiku.steps[0].arguments["content"].startswith("Lines of code align,")
    assert (actions(haiku), haiku.model_id, haiku.outcome) == (["respond"], "gpt-4o-mini-2024-07-18", Outcome.unknown)
    # a multi-turn call answers its latest user message, not the first one of the history
    follow_up = ok["vercel:edff2fc5854be6170e8cccccec0c82cf"]
    assert (follow_up.task, follow_up.steps[0].arguments["content"]) == ("And what is 3 + 3?", "3 + 3 equals 6.")
    # ai.generateText exported without its doGenerate span stands for its own model call
    call = ok["vercel:700d5f98fe2420adcf6ab0822f7a323c"]
    assert (call.task, actions(call), call.model_id) == ("Write a haiku about programming.", ["respond"], "gpt-4o-mini")
    assert call.metadata["function_id"] == "test-generate-text"
    assert call.metadata["telemetry_metadata"] == {"testCategory": "text-generation", "customField": "custom-value"}
    recipe = ok["vercel:f99cc53c9bb8fe40462f7a48999e7088"]  # ai.generateObject: the object is the answer
    assert json.loads(recipe.steps[0].arguments["content"])["name"] == "Scrambled Eggs"


def test_vercel_tool_loop_tool_step_then_answer() -> None:
    run = one_run(VERCEL / "stream-text-tool-loop.json")
    assert run.trajectory_id == "vercel:5f6c2a9e0b1d4c3e8a7f6e5d4c3b2a19"
    assert run.task == "test-input"
    assert actions(run) == ["tool1", "respond"]
    tool, answer = run.steps
    assert (tool.arguments, tool.observation, tool.thought) == ({"value": "value"}, "result1", "thinking")
    assert answer.arguments == {"content": "Hello, world!"}
    assert failing(run) == [] and run.outcome is Outcome.unknown
    assert run.model_id == "mock-model-id"
    assert run.created_at.isoformat() == "2026-02-03T15:19:52+00:00"


def test_vercel_tool_exception_is_that_steps_error_only() -> None:
    run = one_run(VERCEL / "generate-text-tool-error.json")
    assert (run.task, actions(run)) == ("test-input", ["tool1"])
    assert run.steps[0].error == "Error: Tool execution failed" and run.steps[0].observation is None
    assert run.outcome is Outcome.unknown  # the call itself ended OK


def test_vercel_spans_as_otlp_are_still_vercel(tmp_path: Path) -> None:
    spans = json.loads((VERCEL / "stream-text-tool-loop.json").read_text())

    def value(v: object) -> dict:
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        if isinstance(v, int):
            return {"intValue": str(v)}
        return {"stringValue": str(v)}

    otlp = [{"traceId": s["spanContext"]["traceId"], "spanId": s["spanContext"]["spanId"],
             **({"parentSpanId": s["parentSpanId"]} if "parentSpanId" in s else {}), "name": s["name"],
             "startTimeUnixNano": str(s["startTime"][0] * 10**9 + s["startTime"][1]),
             "endTimeUnixNano": str(s["endTime"][0] * 10**9 + s["endTime"][1]), "status": {},
             "attributes": [{"key": k, "value": value(v)} for k, v in s["attributes"].items()]} for s in spans]
    (tmp_path / "vercel.json").write_text(json.dumps(
        {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "ai"}, "spans": otlp}]}]},
        indent=2))
    assert detect_format(tmp_path / "vercel.json") == "vercel-ai"
    run = one_run(tmp_path / "vercel.json")
    assert (run.task, actions(run), run.steps[0].observation) == ("test-input", ["tool1", "respond"], "result1")


def test_vercel_spans_converted_by_openinference_stay_openinference(tmp_path: Path) -> None:
    spans = json.loads((VERCEL / "stream-text-tool-loop.json").read_text())
    for span in spans:
        span["attributes"]["openinference.span.kind"] = "LLM" if "doStream" in span["name"] else "CHAIN"
    (tmp_path / "spans.json").write_text(json.dumps(spans))
    assert detect_format(tmp_path / "spans.json") == "openinference"
    assert detect_format(ANY_AGENT) == "otel-genai" and detect_format(PHOENIX) == "openinference"


# -- OpenAI Agents SDK ---------------------------------------------------------------------


def test_agents_sdk_chat_completions_run_with_handoff_and_failing_tool() -> None:
    dump = AGENTS / "chat-handoff.jsonl"
    assert detect_format(dump) == "openai-agents"
    run = one_run(dump)
    assert run.trajectory_id == "oai-agents:trace_73929ece9e584c6f952aca2393e65ff3"
    assert run.task == LYON_TASK
    assert actions(run) == ["transfer_to_weather_agent", "get_weather", "get_air_quality", "respond"]
    handoff, weather, air, answer = run.steps
    assert handoff.arguments == {"from_agent": "Triage agent", "to_agent": "Weather agent"}
    assert handoff.observation == '{"assistant": "Weather agent"}'  # what the SDK told the model
    assert (weather.arguments, weather.thought) == ({"city": "Lyon"}, "Let me look that up.")
    assert json.loads(weather.observation) == {"city": "Lyon", "sky": "sunny", "temperature_c": 24}
    assert failing(run) == ["get_air_quality"]
    assert air.error == "Error running tool (non-fatal): Tool execution failed. Error details are redacted."
    assert air.observation == "An error occurred while running the tool. Please try again."
    assert answer.arguments == {"content": "Lyon is sunny at 24°C; I could not get the air quality right now."}
    assert (run.outcome, run.reward, run.failure) == (Outcome.unknown, None, None)
    assert run.model_id == "gpt-4.1-mini"
    assert run.created_at.isoformat() == "2026-12-01T11:56:21.080930+00:00"
    meta = run.metadata
    assert (meta["workflow_name"], meta["group_id"]) == ("Weather workflow", "thread_42")
    assert meta["trace_metadata"] == {"user": "u-7"}
    assert meta["agents"] == ["Triage agent", "Weather agent"] and meta["task_source"] == "model input"


def test_agents_sdk_backend_batch_payload_is_the_same_run_and_read_twice_counts_once(tmp_path: Path) -> None:
    batch = AGENTS / "chat-handoff-backend-batch.json"
    assert detect_format(batch) == "openai-agents"
    from_batch, from_lines = one_run(batch), one_run(AGENTS / "chat-handoff.jsonl")
    assert from_batch.model_dump(exclude={"metadata"}) == from_lines.model_dump(exclude={"metadata"})
    for name in ("chat-handoff.jsonl", "chat-handoff-backend-batch.json"):
        shutil.copy(AGENTS / name, tmp_path / name)
    both = one_run(tmp_path)
    assert actions(both) == actions(from_lines) and both.metadata["spans"] == from_lines.metadata["spans"] == 15


def test_agents_sdk_responses_model_exports_no_input_so_the_workflow_names_the_run() -> None:
    run = one_run(AGENTS / "responses.jsonl")
    assert run.task == "Weather workflow (Weather agent) (no input recorded)"
    assert run.metadata["task_source"] == "workflow name"
    assert run.metadata["response_ids"] == ["resp_001", "resp_002"]
    assert actions(run) == ["get_weather"] and run.model_id is None and failing(run) == []


def test_agents_sdk_response_spans_with_input_and_response_are_read() -> None:
    run = one_run(AGENTS / "responses-with-input.jsonl")
    assert (run.task, actions(run)) == (LYON_TASK, ["get_weather", "respond"])
    assert run.steps[1].arguments == {"content": "Lyon is sunny at 24°C."}
    assert run.model_id == "gpt-4.1-mini-2025-04-14"


def test_agents_sdk_agent_error_is_the_runs_failure() -> None:
    run = one_run(AGENTS / "model-server-error.jsonl")
    assert run.outcome is Outcome.infra_error
    assert run.failure.error == "Error in agent run: Error code: 500 - The server had an error while processing your request."
    assert actions(run) == ["transfer_to_weather_agent", "get_weather", None]  # the failure comes last
    assert failing(run) == [None] and run.steps[-1].observation == "agent Weather agent failed"


def test_agents_sdk_group_by_conversation_uses_group_id(tmp_path: Path) -> None:
    for name in ("chat-handoff.jsonl", "responses.jsonl"):
        shutil.copy(AGENTS / name, tmp_path / name)
    [run] = runs(tmp_path, group_by="conversation")
    assert run.trajectory_id == "oai-agents:conversation:thread_42"


def test_agents_sdk_span_without_trace_id_is_rejected_by_field(tmp_path: Path) -> None:
    lines = (AGENTS / "chat-handoff.jsonl").read_text().splitlines()
    broken = json.loads(lines[1])
    broken.pop("trace_id")
    (tmp_path / "spans.jsonl").write_text("\n".join([lines[0], json.dumps(broken), *lines[2:]]) + "\n")
    results = list(read_dump(tmp_path / "spans.jsonl", fmt="openai-agents"))
    assert [(r.position, r.error) for r in results if not r.ok] == [
        ("line 2", "span span_a4dc759240974444be7d6997 has no 'trace_id' or 'id'")]
    assert [r.trajectory.task for r in results if r.ok] == [LYON_TASK]
    (tmp_path / "other.jsonl").write_text(json.dumps({"object": "response", "id": "resp_1"}) + "\n")
    [other] = read_dump(tmp_path / "other.jsonl", fmt="openai-agents")
    assert other.error.startswith("not an Agents SDK trace or span: expected 'object': 'trace' / 'trace.span'")


@pytest.mark.parametrize("path, fmt", [
    (ANY_AGENT, "otel-genai"), (V2 / "console-two-traces.json", "otel-genai"),
    (VERCEL / "generate-text-tool-error.json", "vercel-ai"), (AGENTS / "responses.jsonl", "openai-agents"),
    (PHOENIX, "openinference"),
])
def test_detection_survives_renaming(tmp_path: Path, path: Path, fmt: str) -> None:
    renamed = tmp_path / "dump.json"
    renamed.write_bytes(path.read_bytes())
    assert detect_format(renamed) == fmt


def test_base64_decoding_only_touches_ids_of_the_right_length() -> None:
    from trajsearch.ingest.adapters._otlp import normal_id

    trace = bytes.fromhex("97f1d2ff322a63ad86010aa30e3ffacd")
    assert normal_id(base64.b64encode(trace).decode(), 16) == trace.hex()
    assert normal_id("0x755060B45C0F95BE", 8) == "755060b45c0f95be"
    assert normal_id(12324293800750531911, 8) == "ab08afea3548c547"
    assert normal_id("fixture-trace-1", 16) == "fixture-trace-1" and normal_id("s01", 8) == "s01"


def test_strands_tool_spans_give_arguments_and_results_and_converse_blocks_the_calls() -> None:
    """Strands Agents (real AgentCore fixture): a tool span's gen_ai.tool.message event is the call's input
    and its gen_ai.choice the result; the chat span's Bedrock toolUse blocks are its calls."""
    path = FIXTURES / "otel-genai" / ".real" / "strands_tool_call_spans.json"
    assert detect_format(path) == "otel-genai"
    runs = {r.trajectory.task: r.trajectory for r in read_dump(path, tenant="acme") if r.ok}
    run = runs["Book the cheapest flight from SEA to NYC for 2025-03-15 and book the most expensive hotel "
               "for the next 3 days"]
    assert [s.action for s in run.steps] == ["search_flights", "search_hotels", "book_flight", "book_hotel", "respond"]
    search = run.steps[0]
    assert search.arguments == {"origin": "SEA", "destination": "NYC", "date": "2025-03-15"}
    assert "'flight_id': 'AA101'" in search.observation  # the tool's result, not its input again
    assert search.thought.startswith("I'll help you find and book those!")
    assert run.steps[2].arguments == {"flight_id": "DL420"} and "'status': 'confirmed'" in run.steps[2].observation
    assert run.steps[-1].arguments["content"].startswith("Great! I've successfully booked both for you")
    assert run.model_id == "us.anthropic.claude-sonnet-4-20250514-v1:0"


def test_agentcore_adot_content_logs_give_task_arguments_and_results() -> None:
    """Bedrock AgentCore under ADOT: each span's content is a log record beside it (real Strands fixture)."""
    path = FIXTURES / "otel-genai" / ".real" / "strands_qa_spans.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task.startswith("I'm 45 years old, weigh 80kg, 180cm tall, and have diabetes. Calculate my BMI")
    assert "task_source" not in run.metadata  # the input was recorded, in the logs
    assert [s.action for s in run.steps] == ["calculate_bmi"] + ["calculate_daily_calories"] * 3 + ["respond"]
    bmi = run.steps[0]
    assert bmi.arguments == {"weight_kg": 80, "height_m": 1.8}
    assert bmi.observation == "BMI: 24.7 (Normal weight). Normal range is 18.5-24.9."
    assert bmi.thought.startswith("I'll help you calculate your BMI and daily caloric needs")
    assert run.steps[2].arguments["activity_level"] == "moderate" and "2741 calories" in run.steps[2].observation
    assert run.steps[-1].arguments["content"].startswith("Let me break down the results")


def test_agentcore_adot_content_logs_of_openinference_spans() -> None:
    """The same log records for OpenInference's LangChain spans: attribute values as text (real fixture)."""
    path = FIXTURES / "openinference" / ".real" / "agentcore_openinference_langchain_spans.json"
    assert detect_format(path) == "openinference"
    runs = {r.trajectory.task: r.trajectory for r in read_dump(path, tenant="acme")}
    assert set(runs) == {"What is the weather in Sunnyvale", "What will be the weather in the next week in Delhi?"}
    weather = runs["What is the weather in Sunnyvale"]
    assert [(s.action, s.observation) for s in weather.steps][0] == ("get_weather", "It's always sunny in Sunnyvale!")
    assert weather.steps[-1].action == "respond" and "sunny" in weather.steps[-1].arguments["content"]


def test_one_model_request_traced_by_two_instrumentors_makes_its_steps_once() -> None:
    """LangChain's ChatOpenAI span and OpenAI's ChatCompletion span of the same request (real Phoenix export)."""
    path = FIXTURES / "openinference" / ".real" / "agentprism_quo_tav_agent.trimmed.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "What are the latest AI trends in 2024?"
    assert [s.action for s in run.steps] == ["tavily_search", "tavily_extract", "respond"]
    assert run.steps[0].observation.startswith('{"output": {"query": "latest AI trends 2024"')
    assert run.steps[-1].arguments["content"].startswith("In 2024, several key trends have emerged")


@pytest.mark.parametrize("name, task", [
    ("agentprism_smol_deep_research_agent.json", "what are the AI trends in 2025"),  # smolagents' planning prompt
    ("agentprism_rag_earnings_agent.json", "what was meta's revenue in Q4 2023"),  # the chain's input, not the RAG prompt
    ("anyagent_LANGCHAIN_trace.json", "Use the tools to find what year it is in the America/New_York timezone and write "
                                      "the value (single number) to a file"),  # LangGraph's ("user", text) input
])
def test_task_under_an_apps_own_root_span_is_the_request_not_the_rendered_prompt(name: str, task: str) -> None:
    [run] = [r.trajectory for r in read_dump(FIXTURES / "openinference" / ".real" / name, tenant="acme")]
    assert run.task == task


def test_smolagents_tool_spans_give_the_call_s_keyword_arguments() -> None:
    """OpenInference's smolagents tool spans wrap the arguments in smolagents' call record (real any-agent trace)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "openinference" / ".real" / "anyagent_SMOLAGENTS_trace.json",
                                            tenant="acme")]
    assert [(s.action, s.arguments) for s in run.steps][:2] == [
        ("get_current_time", {"timezone": "America/New_York"}), ("write_file", {"text": "2025"})]
    assert run.steps[2].action == "final_answer" and run.steps[2].arguments["answer"].startswith("The current year")


def test_one_tool_message_answering_two_calls_gives_each_call_its_own_result() -> None:
    """AI SDK 7's GenAI spans: one tool message with a tool_call_response part per call (real SDK output)."""
    path = FIXTURES / "otel-genai" / ".real" / "ai-sdk-7-semconv-two-tools.otlp.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    steps = {s.action: s for s in run.steps}
    assert steps["getWeather"].observation == '{"city": "Lyon", "tempC": 18, "sky": "cloudy"}'
    assert steps["getAirQuality"].observation == "Error: air quality service unavailable for Lyon"


def test_agents_sdk_tripped_guardrail_fails_the_run() -> None:
    """The tripwire's error is on the turn span and the guardrail span says triggered (real SDK output)."""
    path = AGENTS / ".real" / "agents-as-tools-parallel.jsonl"
    runs = {r.trajectory.task: r.trajectory for r in read_dump(path, tenant="acme")}
    blocked = runs["Solve my math homework: integrate x^2 from 0 to 3"]
    assert blocked.outcome.value == "failure" and "Guardrail tripwire triggered" in blocked.failure.error
    [allowed] = [run for task, run in runs.items() if task.startswith("Say 'Hello, how is the weather?' in French")]
    assert allowed.outcome.value == "unknown" and allowed.metadata["guardrails"] == [
        {"guardrail": "homework_guard", "triggered": False}]


def test_agents_sdk_guardrail_and_agent_tool_models_are_not_the_agent_talking() -> None:
    """Bug (real SDK output): a guardrail agent's verdict and an agent-as-tool's answer were respond steps."""
    path = AGENTS / ".real" / "agents-as-tools-parallel.jsonl"
    for run in (r.trajectory for r in read_dump(path, tenant="acme")):
        said = [s.arguments["content"] for s in run.steps if s.action == "respond"]
        assert not [text for text in said if "is_homework" in text or text == "Bonjour, quel temps fait-il ?"]


def test_agents_sdk_streamed_chat_handoff_override_and_approval_read_as_run() -> None:
    """Bugs (real SDK 0.24 output): a streamed Chat Completions generation (a Responses object as output) lost
    every thought and the answer; a handoff with ``tool_name_override`` was two steps, one a made-up
    ``transfer_to_...``; a tool paused for approval and resumed was run twice."""
    [streamed] = adapter_support.runs(AGENTS / ".real" / "parallel-tools-streamed-chat.jsonl")
    assert [s.action for s in streamed.steps] == ["get_weather", "get_population", "get_stock", "respond"]
    assert streamed.steps[0].thought == "Let me look all three up."
    assert streamed.steps[-1].arguments["content"].startswith("Paris: sunny, 22 C.")
    [handoff] = adapter_support.runs(AGENTS / ".real" / "handoff-override-chat.jsonl")
    assert [s.action for s in handoff.steps] == ["escalate_to_refunds", "issue_refund", "respond"]
    assert handoff.steps[0].arguments == {"reason": "duplicate charge on INV-2041", "priority": "high"}
    [approved] = adapter_support.runs(AGENTS / ".real" / "approval-resume-one-trace.jsonl")
    assert [(s.action, s.observation) for s in approved.steps] == [("delete_file", "deleted /srv/app/run/app.lock")]


def test_vercel_tool_result_marked_as_error_text_is_that_steps_error() -> None:
    """AI SDK 5 streamText: the failed call is known only from the next prompt's error-text result (real SDK output,
    without the ``ai.toolCall`` spans that v5 writes as traces of their own: an input that lacks them)."""
    path = VERCEL / ".real" / "probeT48" / "ai5-runs-without-their-tool-traces.otlp.json"
    runs = {r.trajectory.task: r.trajectory for r in read_dump(path, tenant="acme") if r.ok}
    steps = {s.action: s for s in runs["How do I install it, and how many users do we have?"].steps}
    assert steps["runSql"].error == "permission denied for table users"
    assert steps["searchDocs"].error is None and "Install guide" in steps["searchDocs"].observation


def test_vercel_ai6_provider_failures_mcp_errors_and_telemetry_under_an_app_root() -> None:
    """Bugs (real AI SDK 6 output): a streamText whose provider failed (root left unmarked) was a clean run; spent
    retries on a 500 were the agent's failure; a retried call's model was the failed attempt's; an MCP tool's
    ``isError`` result was no error; functionId and metadata were lost under an app's own root span."""
    real = VERCEL / ".real"
    [stream] = adapter_support.runs(real / "ai6-streamText-tool-loop-then-500-exhausted.otlp.json")
    assert stream.outcome is Outcome.infra_error and "server had an error" in stream.failure.error
    assert [s.action for s in stream.steps] == ["get_weather"]
    retried, spent = adapter_support.runs(real / "ai6-http500-retry-then-ok-and-exhausted.otlp.json")
    assert (retried.outcome, retried.model_id) == (Outcome.unknown, "gpt-4o-mini-2024-07-18")
    assert spent.outcome is Outcome.infra_error and spent.failure.error.startswith("AI_RetryError")
    [mcp] = adapter_support.runs(real / "ai6-mcp-tools.otlp.json")
    assert [(s.action, s.error) for s in mcp.steps[:2]] == [("add", None), ("read_note", "note missing.txt not found")]
    [route] = adapter_support.runs(real / "ai6-vercel-otel-next-route-streamText.otlp.json")
    assert route.metadata["root_span"] == "POST /api/chat" and route.metadata["function_id"] == "chat-route"
    assert route.metadata["telemetry_metadata"] == {"chatId": "chat-123", "userId": "user-7"}


OI_REAL = FIXTURES / "openinference" / ".real"


def test_openinference_autogen_tools_traced_twice_count_once_with_their_thoughts() -> None:
    """Bug (real autogen-agentchat 0.7 spans): every tool run was two steps (OpenInference's TOOL span and
    autogen-core's ``execute_tool`` inside it), the error on the empty twin; no step had a thought."""
    run = adapter_support.only(OI_REAL / "autogen_single.otlp.json")  # its create_agent trace holds no run
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "convert_temperature", "respond"]
    assert run.steps[1].error.startswith("RuntimeError: population service unavailable")
    assert run.steps[0].arguments == {"city": "Paris"} and run.steps[0].thought == "I'll check the weather in Paris first."


def test_openinference_follow_up_turns_haystack_pipelines_stream_order_and_phoenix_exports() -> None:
    """Bugs (real instrumentor output): a pydantic-ai follow-up run had the first run's task; a Haystack pipeline's
    task was a rendered prompt or a ChatMessage repr, its retriever's result the documents' reprs; a streamed JS
    run's answer came before the tool started in the same millisecond; Phoenix's spans dataframe was refused."""
    first, second = adapter_support.runs(OI_REAL / "pydai_two_turns.otlp.json")
    assert (first.task.startswith("What's the weather in Paris"), second.task) == (True, "And what about Berlin's weather?")
    [rag] = adapter_support.runs(OI_REAL / "haystack_rag.otlp.json")
    assert rag.task == "How many people live in Paris?"
    assert rag.steps[0].observation.startswith("The Eiffel Tower in Paris is 330 metres tall.")
    [agent] = adapter_support.runs(OI_REAL / "haystack_agent.otlp.json")
    assert agent.task.startswith("What's the weather in Paris, what's its population")
    [stream] = adapter_support.runs(OI_REAL / "js_openai_stream.otlp.json")
    assert [s.action for s in stream.steps][:4] == ["get_weather", "get_population", "convert_temperature", "respond"]
    assert detect_format(OI_REAL / "phoenix_spans_df.jsonl") == "openinference"
    exported = {r.trajectory_id: r for r in adapter_support.runs(OI_REAL / "phoenix_spans_df.jsonl")}
    assert exported[second.trajectory_id].task == "And what about Berlin's weather?"
    assert exported[rag.trajectory_id].task == rag.task


def test_a_haystack_agent_traced_by_openinference_gives_its_turns_from_its_one_span() -> None:
    """Bug (real haystack-ai 3.4.1 + openinference-instrumentation-haystack 0.1.46 run): the instrumentor traces an
    Agent as one CHAIN span, with no model call or tool run below it; its output, the conversation as ChatMessage
    reprs, holds the calls (ToolCall parts) and results (ToolCallResult), and the run read as 0 steps."""
    [agent] = adapter_support.runs(OI_REAL / "haystack_agent.otlp.json")
    assert [s.action for s in agent.steps] == ["get_weather", "get_population", "convert_temperature", "respond"]
    weather, population, convert, answer = agent.steps
    assert (weather.arguments, weather.thought) == ({"city": "Paris"}, "I'll check the weather in Paris first.")
    assert weather.observation == '{"city": "Paris", "condition": "sunny", "celsius": 22}' and weather.error is None
    assert population.error.endswith("Error: population service unavailable for Paris (HTTP 503)")  # error=True
    assert (convert.arguments, convert.observation) == ({"celsius": 22}, "71.6 F")
    assert answer.arguments["content"].startswith("Paris is sunny at 22 C (71.6 F).")


def test_an_object_repr_in_a_haystack_message_keeps_its_tool_calls(tmp_path: Path) -> None:
    """Bug (review RFM6): one value in a ChatMessage repr that is an object's default repr (``<Foo object at
    0x7f...>``, here put in the real Agent span's usage) is no Python, so the whole message read as its texts alone
    and its ToolCall parts were lost: the run's three tool steps were gone, silently."""
    real = OI_REAL / "haystack_agent.otlp.json"
    text = real.read_text()
    odd = "'completion_tokens_details': <openai_usage.Details object at 0x7f3a2c1d5e90>"
    assert text.count("'completion_tokens_details': None") >= 3
    path = tmp_path / "haystack_agent.otlp.json"
    path.write_text(text.replace("'completion_tokens_details': None", odd))
    [agent] = adapter_support.runs(path)
    assert [s.action for s in agent.steps] == ["get_weather", "get_population", "convert_temperature", "respond"]
    assert [s.arguments for s in agent.steps] == [s.arguments for s in adapter_support.runs(real)[0].steps]


def test_openinference_results_without_ids_and_follow_up_turns() -> None:
    """Bugs (real LiteLLM and google-genai instrumentor output): tool results recorded without call ids (only in
    the next call's input) were lost, Gemini's ``{"error": ...}`` result was no error, and a session's follow-up
    turn had the first turn's question as its task."""
    litellm = adapter_support.runs(OI_REAL / "litellm_two_turns.otlp.json", group_by="conversation")
    steps = {s.action: s for run in litellm for s in run.steps if s.action != "respond"}
    assert steps["get_population"].observation.startswith("Error: RuntimeError: population service unavailable")
    assert steps["convert_temperature"].observation == "71.6 F"
    turns = adapter_support.runs(OI_REAL / "google_genai_two_turns.otlp.json")  # one model call per trace
    session = adapter_support.runs(OI_REAL / "google_genai_two_turns.otlp.json", group_by="conversation")
    assert [run.task for run in turns][-1] == "And what about Berlin's weather?"
    [failed] = [s for run in session for s in run.steps if s.error]
    assert failed.action == "get_population" and failed.error.startswith("Failed to invoke function get_population")


def test_an_mcp_call_traced_on_both_sides_is_one_step_with_the_servers_error() -> None:
    """Bug (real MCP client + server spans): every call was two steps (client and server tool spans, an MCP
    send span between them), the error a bare 'tool_error', the result an MCP content block's JSON."""
    results = list(read_dump(OI_REAL / "oai_agents_mcp_client_server.otlp.jsonl"))
    assert [r.error for r in results if not r.ok] == [  # the server's own tool discovery
        "not an agent run: the trace holds only MCP, server/discover spans and no input"]
    first, _second = [r.trajectory for r in results if r.ok]
    assert [s.action for s in first.steps] == ["get_weather", "get_population", "convert_temperature", "respond"]
    assert first.steps[1].error.startswith("RuntimeError: population service unavailable")
    assert first.steps[2].observation == "71.6 F"


def test_files_of_kinds_trajsearch_does_not_read_say_what_they_are() -> None:
    """A CSV file (a real outcomes file here) is refused naming it, not as an 'unrecognised dump format', and
    saying how the platforms users export tables from write JSON instead (Langfuse's CSV export was told only
    Phoenix's way)."""
    with pytest.raises(ValueError, match="a CSV file") as refused:
        detect_format(FIXTURES / "outcomes" / "rewards.csv")
    assert all(name in str(refused.value) for name in ("Phoenix", "Langfuse", "LangSmith"))


def test_openinference_beeai_arguments_and_its_error_span() -> None:
    """Bug (real BeeAI output): arguments were BeeAI's ``{"input", "options"}`` record, and a failing tool's own
    ``error`` span was a second, failed step."""
    first, _ = adapter_support.runs(OI_REAL / "beeai_requirement.otlp.json")
    assert [s.action for s in first.steps] == ["get_weather", "get_population", "convert_temperature", "final_answer"]
    assert first.steps[0].arguments == {"city": "Paris"} and [s.action for s in first.steps if s.error] == ["get_population"]


def test_a_jaeger_json_export_reads_as_its_otlp_source() -> None:
    """Jaeger's JSON (its API, the UI's "Download JSON") was refused; it reads as the same run as the OTLP file."""
    real = FIXTURES / "otel-genai" / ".real"
    path = real / "jaeger-ggenai_latest_span.json"
    assert detect_format(path) == "otel-genai"
    [jaeger] = adapter_support.runs(path)
    [otlp] = adapter_support.runs(real / "ggenai_latest_span.traces.jsonl")
    assert (jaeger.trajectory_id, jaeger.task) == (otlp.trajectory_id, otlp.task)
    assert [(s.action, s.arguments, s.error) for s in jaeger.steps] == [(s.action, s.arguments, s.error) for s in otlp.steps]


EDGE = FIXTURES / "otel-genai" / ".edge"


def test_span_edge_cases_a_review_found() -> None:
    """A self-parented tool span is read (it hung); sequential trace ids that equal span ids stay apart; results
    without ids after a streamed turn go to their own calls; a root that answered is not failed by a side call
    failing after it; a tool root keeps the answer of the model call inside it."""
    [own] = adapter_support.runs(EDGE / "self-parent-tool.jsonl")
    assert [s.action for s in own.steps] == ["search", "respond"]  # the agent span's output.value: its answer
    assert [r.task for r in adapter_support.runs(EDGE / "sequential-ids.jsonl")] == ["first task", "second task"]
    [turn] = adapter_support.runs(EDGE / "interleaved-turn-no-ids.jsonl")
    assert [(s.action, s.observation) for s in turn.steps][:2] == [("search", "SEARCH RESULT"), ("lookup", "LOOKUP RESULT")]
    [side] = adapter_support.runs(EDGE / "answered-then-side-call-fails.jsonl")
    assert side.outcome is Outcome.unknown
    [tool_root] = adapter_support.runs(EDGE / "tool-root.jsonl")
    assert [s.action for s in tool_root.steps][-1] == "respond"


def test_a_trace_that_only_builds_an_agent_is_no_run() -> None:
    """AutoGen traces create_agent apart from the run (real recorded spans): that trace holds no run and nothing
    wrong, so it is passed over, not rejected (probe D, D4)."""
    run = adapter_support.only(FIXTURES / "otel-genai" / ".real" / "autogen_live_spans.json", tenant="acme")
    assert run.task == "invoke_agent math_assistant (no input recorded)" and [s.action for s in run.steps] == ["calculate"]


def test_a_responses_function_call_written_as_its_repr_is_a_call_not_speech() -> None:
    """opentelemetry-instrumentation-openai-agents writes ResponseFunctionToolCall(...) reprs as text (real spans)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "openai_agents_genai_adot_spans.json",
                                            tenant="acme")]
    assert not any("ResponseFunctionToolCall" in json.dumps(s.arguments) for s in run.steps)
    [multiply] = [s for s in run.steps if s.action == "multiply_numbers"]
    assert multiply.arguments == {"a": 42, "b": 7} and multiply.observation == "294.0"
    assert {s.action for s in run.steps} >= {"transfer_to_math_specialist", "transfer_to_research_specialist"}
    assert [s.action for s in run.steps].count("respond") == 1


def test_model_turns_recorded_on_the_agent_span_give_thoughts_and_the_answer() -> None:
    """The Claude Agent SDK instrumentor: no LLM span, the turns are the AGENT span's output messages (recorded spans)."""
    path = FIXTURES / "openinference" / ".real" / "claude_agent_sdk_live_spans.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "Look up the weather in New York and Seattle, then calculate the temperature difference."
    assert [s.action for s in run.steps] == ["Agent", "Agent", "Bash", "Bash", "Agent", "Bash", "respond"]
    assert run.steps[0].thought == "I'll look up the weather in both cities and then calculate the difference."
    [math] = [s for s in run.steps if s.action == "Agent" and s.arguments["subagent_type"] == "math-specialist"]
    assert math.thought == "Got both temperatures! Now let me calculate the difference."
    assert run.steps[-1].arguments["content"].startswith("New York is 89°F and Seattle is 72°F.")


def test_a_code_agents_words_are_the_thought_of_the_tool_its_code_ran() -> None:
    """Bug (smolagents CodeAgent, recorded spans): the model's "Thought: ... <code>" asks for no tool by name (the
    agent runs the code, which calls the tool) and was shown as the agent talking to the user, twice."""
    path = FIXTURES / "openinference" / ".real" / "smolagents_code_agent_live_spans.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "What is the population of Tokyo?"
    assert [s.action for s in run.steps] == ["web_search", "final_answer"]
    search, answer = run.steps
    assert search.arguments == {"query": "population of Tokyo"}
    assert search.thought.startswith("Thought: I need to find the current population of Tokyo.") and "<code>" in search.thought
    assert answer.thought.startswith("Thought: Based on the search results")
    assert answer.observation.startswith("The population of Tokyo is approximately 14 million")


def test_tools_started_in_the_same_millisecond_keep_the_order_the_model_asked_for_them_in() -> None:
    """The AI SDK rounds span starts to the millisecond; parallel calls tie and exporters list them as they end."""
    path = FIXTURES / "otel-genai" / ".real" / "ai-sdk-7-semconv-two-tools.otlp.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert [s.action for s in run.steps] == ["getWeather", "getAirQuality", "respond"]
    assert run.steps[0].started_at == run.steps[1].started_at  # a tie in the file
    assert run.steps[0].thought == "Let me check both."


def _oi_span(sid: str, parent: str | None, kind: str, start: str, end: str, **attrs: str) -> dict:
    """A flat OpenInference span as Phoenix exports them (hand-built: for the twin rule's limits only)."""
    return {"name": kind.lower(), "context": {"trace_id": "7" * 32, "span_id": sid}, "parent_id": parent,
            "span_kind": kind, "start_time": f"2026-01-05T09:00:{start}Z", "end_time": f"2026-01-05T09:00:{end}Z",
            "status_code": "OK", "attributes": {"openinference.span.kind": kind, **attrs}}


def _oi_call(sid: str, parent: str, start: str, end: str, asked: str, **output: str) -> dict:
    return _oi_span(sid, parent, "LLM", start, end, **{
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": asked,
        "llm.output_messages.0.message.role": "assistant",
        **{f"llm.output_messages.0.message.{k.replace('__', '.')}": v for k, v in output.items()}})


def test_model_calls_over_one_interval_that_asked_or_said_different_things_are_not_twins(tmp_path: Path) -> None:
    """Parallel calls of their own are kept: sibling classifiers answering alike, sub-agents calling with other
    arguments (the review's counter-examples to a rule matching on the answer alone)."""
    calls = "tool_calls.0.tool_call"
    spans = [
        _oi_span("r", None, "CHAIN", "00.000", "09.000", **{"input.value": "Classify two reviews, then compare cities"}),
        _oi_call("c1", "r", "00.200", "01.200", "Review A: great product", content="positive"),
        _oi_call("c2", "r", "00.205", "01.210", "Review B: love it", content="positive"),
        _oi_span("a1", "r", "AGENT", "02.000", "05.000", **{"input.value": "Paris weather"}),
        _oi_span("a2", "r", "AGENT", "02.000", "05.000", **{"input.value": "Rome weather"}),
        _oi_call("w1", "a1", "02.200", "03.200", "weather?", **{f"{calls}__id": "k1", f"{calls}__function__name": "weather",
                                                             f"{calls}__function__arguments": '{"city": "Paris"}'}),
        _oi_call("w2", "a2", "02.210", "03.190", "weather?", **{f"{calls}__id": "k2", f"{calls}__function__name": "weather",
                                                             f"{calls}__function__arguments": '{"city": "Rome"}'}),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert [s.action for s in run.steps].count("respond") == 2
    assert sorted(s.arguments["city"] for s in run.steps if s.action == "weather") == ["Paris", "Rome"]


def test_a_sub_agent_the_model_handed_work_to_later_does_not_give_the_task(tmp_path: Path) -> None:
    """Under an app's root span with no input, only a container around or before the first model call is the
    entry point (hand-built spans: the review's counter-example to the entry rule)."""
    spans = [
        _oi_span("r", None, "UNKNOWN", "00.000", "09.000"),
        _oi_call("l1", "r", "00.100", "01.000", "Plan a 5-day trip to Japan in May for two people",
                 content="I'll ask the flight agent."),
        _oi_span("a1", "r", "AGENT", "01.100", "05.000", **{"input.value": "Find flights SFO to NRT May 3"}),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "Plan a 5-day trip to Japan in May for two people"


def test_agents_sdk_guardrail_name_of_an_odd_type_is_no_crash(tmp_path: Path) -> None:
    """A triggered guardrail whose name is not a string still fails the run, by that name (review finding)."""
    trace = "trace_8890c65fd42347c1b4b7fefca6b83d88"
    lines = [{"object": "trace", "id": trace, "workflow_name": "W"},
             {"object": "trace.span", "id": "span_a", "trace_id": trace, "parent_id": None,
              "started_at": "2026-12-02T00:36:43+00:00", "ended_at": "2026-12-02T00:36:45+00:00",
              "span_data": {"type": "agent", "name": "A"}},
             {"object": "trace.span", "id": "span_g", "trace_id": trace, "parent_id": "span_a",
              "started_at": "2026-12-02T00:36:43.1+00:00", "ended_at": "2026-12-02T00:36:43.2+00:00",
              "span_data": {"type": "generation", "input": [{"role": "user", "content": "hi"}],
                            "output": [{"role": "assistant", "content": "yo"}]}},
             {"object": "trace.span", "id": "span_r", "trace_id": trace, "parent_id": "span_a",
              "started_at": "2026-12-02T00:36:43.1+00:00", "ended_at": "2026-12-02T00:36:43.2+00:00",
              "span_data": {"type": "guardrail", "name": ["a"], "triggered": True}}]
    path = tmp_path / "o.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    [run] = [r.trajectory for r in read_dump(path, tenant="acme", fmt="openai-agents")]
    assert run.outcome.value == "failure" and run.failure.error == "Guardrail tripwire triggered: ['a']"


def test_langgraph_tool_spans_give_the_tool_message_content_and_the_models_arguments() -> None:
    """OpenInference's LangChain TOOL spans hold the whole ToolMessage and LangChain's single input (real run)."""
    path = FIXTURES / "openinference" / ".real" / "langgraph-react-agent.otlp.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    weather, population = run.steps[0], run.steps[1]
    assert (weather.action, weather.arguments, weather.observation) == ("get_weather", {"city": "Paris"}, "Sunny, 22 C in Paris")
    assert population.arguments == {"city": "Paris"} and "population database unavailable" in population.error


def test_strands_latest_conventions_results_are_text_not_content_blocks() -> None:
    """gen_ai.tool.call.result holds Strands' content blocks as JSON (real strands-agents 1.62 run)."""
    path = FIXTURES / "otel-genai" / ".real" / "strands-latest-conventions.otlp.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert [s.observation for s in run.steps[:2]] == [
        "Sunny, 22 C in Paris", "Error: population database unavailable for Paris"]


def test_spans_and_their_logs_named_one_by_one_are_read_together() -> None:
    """`ingest traces.json logs.json` joins them as a folder of both does (review of real openai-v2 output)."""
    from trajsearch.ingest.preview import preview

    directory = V2 / "otlp-one-trace"
    [joined] = preview([directory / "traces.json", directory / "logs.json"], tenant="acme")
    [folder] = preview([directory], tenant="acme")
    assert (joined.runs, joined.task, joined.tools) == (folder.runs, folder.task, folder.tools) == (
        1, one_run(directory).task, folder.tools)


def test_a_tool_error_that_says_unavailable_is_a_failure_not_infrastructure() -> None:
    """"unavailable" alone is no service outage: a ValueError raised by a tool ended the run (real pydantic-ai run)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "pydantic-ai-tool-raises.otlp.json",
                                            tenant="acme")]
    assert run.outcome is Outcome.failure and "population database unavailable" in run.failure.error


@pytest.mark.parametrize("name, error", [
    ("adk-2.13-transfer-subagent-de.latest.otlp.json", "RuntimeError: UV service unavailable for München"),
    ("pydantic-ai-2.68-delegation-stream-tool-raises.otlp.json",
     "ConnectionError: inventory service unavailable: connection refused")])
def test_an_error_that_started_in_a_tools_span_is_a_failure_whatever_it_says(name: str, error: str) -> None:
    """Bug (real google-adk 2.13 and pydantic-ai 2.68 runs): a tool raised, every span above it re-raised the same
    error, and its "service unavailable" / "connection" made the run an outage, so no agent was warned of it.
    Where the error started decides, not its words."""
    [run] = [r for r in runs(FIXTURES / "otel-genai" / ".real" / name) if r.failure]
    assert (run.outcome, run.failure.error, run.failure.cause) == (Outcome.failure, error, None)
    assert run.steps[-1].error == error


def test_a_model_call_without_output_said_what_the_next_calls_history_says() -> None:
    """Bug (real OpenLLMetry openai-agents 0.62 run): the instrumentation records only model inputs, so the
    handoff call and the agent's words were lost (they are in the next call's history), and the tool error was
    the SDK's error dict as a Python repr. The guardrail agent, given the same request, said none of it."""
    run, _tripped = runs(FIXTURES / "otel-genai" / ".real" / "openllmetry-openai-agents-0.62-handoff-guardrail.otlp.json")
    assert actions(run) == ["transfer_to_refund_agent", "lookup_order", "refund_policy"]
    assert run.steps[0].observation == '{"assistant": "Refund agent"}'
    assert run.steps[1].thought == "Looking up the order and refund policy."
    assert run.steps[2].error == "Error running tool (non-fatal): Tool execution failed. Error details are redacted."


def test_a_framework_object_passed_to_a_tool_is_not_one_of_the_models_arguments() -> None:
    """Bug (real LlamaIndex 0.14 AgentWorkflow run, OpenInference): the handoff tool span's input adds the
    workflow Context LlamaIndex passes in, as its repr with a memory address, to what the model asked for."""
    [run] = runs(OI_REAL / "llamaindex-0.14-agentworkflow-handoff-de.otlp.json")
    [handoff] = [s for s in run.steps if s.action == "handoff"]
    assert handoff.arguments == {"to_agent": "WriteAgent", "reason": "facts collected"}


def test_otlp_json_with_protobufs_field_names_reads_as_with_its_json_names() -> None:
    """Bug (real ag2 1.2 spans printed by protobuf with ``preserving_proto_field_name``): ``resource_spans`` /
    ``string_value`` keys, which protobuf's parsers accept, were rejected as "not a span"."""
    path = FIXTURES / "otel-genai" / ".real" / "ag2-1.2-telemetry.snake_case-proto.otlp.json"
    assert detect_format(path) == "otel-genai"
    tools, outage = runs(path)
    assert (tools.task, actions(tools)) == ("Where is my order A-1001?", ["get_order", "track_parcel", "respond"])
    assert tools.steps[1].error == "ConnectionError: courier API unreachable"
    assert tools.steps[0].arguments == {"order_id": "A-1001"} and tools.model_id == "gpt-4.1-mini"
    assert outage.outcome is Outcome.infra_error and "500" in outage.failure.error


def test_an_mcp_result_written_as_its_repr_is_its_text() -> None:
    """Bug (real any-agent trace, ADK backend): an MCP tool's result was kept as the ``CallToolResult`` repr
    (``meta=None content=[TextContent(...)] isError=False``), not the text it holds."""
    [run] = runs(FIXTURES / "otel-genai" / ".real" / "any-agent-ab1b642a-GOOGLE_trace.json")
    [clock] = [s for s in run.steps if s.action == "get_current_time"]
    assert json.loads(clock.observation)["timezone"] == "America/New_York" and clock.error is None


def test_langfuse_sdk_v3_and_later_otel_spans_are_read() -> None:
    """Bug (real langfuse 5.2 Python SDK spans, OTLP/JSON): the SDK (OpenTelemetry-based since v3) writes
    ``langfuse.observation.*`` attributes only, and the file was not even recognised as spans."""
    path = FIXTURES / "otel-genai" / ".real" / "langfuse-py5.2-observe-openai-zh.otlp.json"
    assert detect_format(path) == "otel-genai"
    answered, failed = runs(path)
    assert answered.task == "CA1234 航班准点吗？北京天气怎么样？" and answered.model_id == "gpt-4.1-mini-2025-04-14"
    assert [(s.action, s.arguments, s.error) for s in answered.steps] == [
        ("flight_status", {"flight": "CA1234"}, None), ("weather", {"city": "北京"}, "weather API timed out after 10s"),
        ("respond", {"content": "CA1234 航班准点，预计 18:05 到达；北京天气暂时无法获取。"}, None)]
    assert answered.steps[0].thought == "我先查询航班状态和天气。" and answered.outcome is Outcome.unknown
    assert answered.metadata["conversation_id"] == "sess-zh-1"
    assert failed.outcome is Outcome.failure and failed.failure.error == "'unknown flight XX0000'"


def test_openinference_handoff_span_is_the_transfer_the_model_asked_for() -> None:
    """'handoff to X' TOOL spans (OpenInference's Agents SDK instrumentor) answer the model's transfer_to_x call."""
    path = FIXTURES / "openinference" / ".real" / "openai_agents_openinference_adot_spans.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    actions = [s.action for s in run.steps]
    assert actions.count("transfer_to_math_specialist") == 1 and "handoff to math_specialist" not in actions
    [handoff] = [s for s in run.steps if s.action == "transfer_to_math_specialist"]
    assert handoff.arguments == {"from_agent": "coordinator", "to_agent": "math_specialist"}


def test_the_agent_roots_answer_when_no_model_call_recorded_content() -> None:
    """Semantic Kernel's spans alone: chat spans without content, the answer on the agent root (real SK run)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "semantic-kernel-spans.otlp.json",
                                            tenant="acme")]
    assert [s.action for s in run.steps] == ["WeatherPlugin-get_weather", "WeatherPlugin-get_weather",
                                             "WeatherPlugin-convert_temperature", "respond"]
    assert run.steps[-1].arguments["content"].startswith("Paris is sunny at 18 C (64.4 F).")
    assert run.steps[1].error == "ValueError: No weather station found for Atlantis"


def test_results_are_paired_with_their_calls_by_turn_where_ids_do_not_match() -> None:
    """Google ADK's content events name a call and its response after their places in a message (real ADK run)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "adk-event-only-logs.console.json",
                                            tenant="acme")]
    weather = {s.arguments["city"]: s for s in run.steps if s.action == "get_weather"}
    assert weather["Paris"].observation == '{"city": "Paris", "condition": "sunny", "temperature_c": 18}'
    assert "No weather station found for Atlantis" in weather["Atlantis"].observation
    [convert] = [s for s in run.steps if s.action == "convert_temperature"]
    assert convert.observation == '{"fahrenheit": 64.4}'


def test_llamaindex_agent_task_steps_and_calls_seen_by_two_instrumentors() -> None:
    """LlamaIndex's workflow state is no task, a prepared request no answer, and one call seen twice is one."""
    path = FIXTURES / "openinference" / ".real" / "llamaindex-function-agent-plus-openai.otlp.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert run.task == "What is the weather in Paris, in Fahrenheit too, and how many people live there?"
    tools = [s.action for s in run.steps if s.action != "respond"]
    assert tools == ["get_weather", "get_population", "convert_temperature"]
    assert not any("ChatMessage(" in json.dumps(s.arguments) for s in run.steps)
    assert run.steps[0].thought == "I'll check the weather in Paris first."
    assert run.steps[0].observation == "Paris: sunny, 22 C"  # the ToolOutput's text, not its JSON


def test_llamaindex_streamed_final_answer_seen_by_two_instrumentors_is_said_once() -> None:
    """Bug (real llama-index 0.14 + OpenAI instrumentor run): the answer, asking for no tool, carries no call ids,
    and LlamaIndex's streamed ``OpenAI.astream_chat`` span ends before OpenAI's ``ChatCompletion`` span of the same
    request starts, beside it under one agent step: the final answer was two respond steps."""
    path = FIXTURES / "openinference" / ".real" / "llamaindex-function-agent-plus-openai.otlp.json"
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert [s.action for s in run.steps] == ["get_weather", "get_population", "convert_temperature", "respond"]
    assert run.steps[-1].arguments["content"].startswith("Paris is sunny at 22 C (71.6 F).")


def test_sibling_calls_one_code_path_made_stay_two_however_alike(tmp_path: Path) -> None:
    """Sibling calls asked and answering alike are one request only when named apart, by two instrumentations
    (hand-built spans: two votes of one code path, named alike, are calls of their own)."""
    spans = [
        _oi_span("r", None, "CHAIN", "00.000", "09.000", **{"input.value": "Is this review positive?"}),
        _oi_call("v1", "r", "00.100", "00.200", "Is this review positive?", content="yes"),
        _oi_call("v2", "r", "00.300", "00.400", "Is this review positive?", content="yes"),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert [s.arguments["content"] for s in run.steps if s.action == "respond"] == ["yes", "yes"]


def _named(span: dict, name: str, model: str | None = None) -> dict:
    """``span`` renamed (its instrumentor's name for it), with the model it records, if any."""
    attributes = {**span["attributes"], **({"llm.model_name": model} if model else {})}
    return {**span, "name": name, "attributes": attributes}


@pytest.mark.parametrize("first, then", [
    (("00.100", "01.000", "gpt-4o"), ("00.100", "01.200", "claude-3-5-sonnet")),  # a panel asking both at once
    (("00.100", "01.000", None), ("00.100", "01.200", None)),  # both open at once, models unrecorded
    (("00.100", "01.000", "gpt-4o-mini"), ("02.100", "03.200", "gpt-4o")),  # a fallback to another model
], ids=["parallel-two-models", "parallel", "sequential-two-models"])
def test_sibling_calls_named_apart_of_two_models_or_open_at_once_stay_two(
        tmp_path: Path, first: tuple[str, str, str | None], then: tuple[str, str, str | None]) -> None:
    """Bug (review RFM6): sibling calls named apart, asked and answering alike were one request even when they ran
    at the same time or named two models, so a panel of ChatOpenAI and ChatAnthropic both answering "yes" was one
    step. Two instrumentors' records of one request name one model, and one closes before the other opens."""
    spans = [
        _oi_span("r", None, "CHAIN", "00.000", "09.000", **{"input.value": "Is this review positive?"}),
        _named(_oi_call("g", "r", *first[:2], "Is this review positive?", content="yes"), "ChatOpenAI", first[2]),
        _named(_oi_call("c", "r", *then[:2], "Is this review positive?", content="yes"), "ChatAnthropic", then[2]),
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in spans))
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    assert [s.arguments["content"] for s in run.steps if s.action == "respond"] == ["yes", "yes"]


@pytest.mark.parametrize("after", [False, True], ids=["same-time", "after-it"])
def test_a_second_models_generation_answering_alike_is_a_step_of_its_own(tmp_path: Path, after: bool) -> None:
    """Bug (review RFM6, a real Langfuse 5.2 trace with its generation cloned as another model's, renamed
    ``Anthropic-generation``, claude-3-5-sonnet, at the same time or just after it): the two models' answers were
    taken for one request seen twice, and the run said its answer once."""
    doc = json.loads((FIXTURES / "otel-genai" / ".real" / "langfuse-py5.2-observe-openai-zh.otlp.json").read_text())
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    clone = json.loads(json.dumps(next(s for s in spans if s["spanId"] == "ou8/kD4+foY=")))
    start, end = int(clone["startTimeUnixNano"]), int(clone["endTimeUnixNano"])
    shift = end - start + 1000 if after else 0
    clone.update(spanId="AAAAAAAAAAA=", name="Anthropic-generation",
                 startTimeUnixNano=str(start + shift), endTimeUnixNano=str(end + shift))
    for attribute in clone["attributes"]:
        if attribute["key"] == "langfuse.observation.model.name":
            attribute["value"] = {"stringValue": "claude-3-5-sonnet"}
    spans.append(clone)
    path = tmp_path / "two-models.otlp.json"
    path.write_text(json.dumps(doc))
    first = next(r.trajectory for r in read_dump(path, tenant="acme") if r.trajectory)
    assert [s.action for s in first.steps] == ["flight_status", "weather", "respond", "respond"]


def test_an_error_type_repeated_as_its_message_is_said_once() -> None:
    """ADK sets error.type and the status description alike for a handled tool error (real ADK spans)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "adk-tool-error-callback.otlp.json",
                                            tenant="acme")]
    assert [s.error for s in run.steps] == [None, "TOOL_ERROR", None]


def test_dspy_react_task_and_tool_names() -> None:
    """DSPy wraps a module's inputs in input_args and names tool spans after __call__ (real dspy.ReAct run)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "openinference" / ".real" / "dspy-react.otlp.json", tenant="acme")]
    assert run.task == "What is the weather in Paris, in Fahrenheit too, and how many people live there?"
    assert [s.action for s in run.steps if s.action != "respond"] == [
        "get_weather", "get_population", "convert_temperature", "finish"]


AGENTS_JA = AGENTS / ".real" / "oai-agents-ja-tool-error-then-max-turns.jsonl"
LANGSMITH_JA = FIXTURES / "langsmith" / ".real" / "oai-agents-via-langsmith.batch.jsonl"


@pytest.mark.parametrize("path", [AGENTS_JA, LANGSMITH_JA], ids=["openai-agents", "langsmith"])
def test_a_conversation_keeps_its_later_requests_and_a_later_turns_failure(path: Path) -> None:
    """Bugs (real openai-agents 0.24 run, and the same through LangSmith's integration), ``--group-by
    conversation``: the second turn's request was nowhere, and its MaxTurnsExceeded step was dropped because the
    first turn's unrelated tool error counted as its failing step."""
    [run] = runs(path, group_by="conversation")
    assert run.task == "東京の年間平均気温と、トヨタ(7203.T)の株価を教えてください。"
    assert run.metadata["user_prompts"] == ["What is the rainfall in Osaka?"]
    assert actions(run) == ["search_docs", "get_stock", "respond", "search_docs", "search_docs", None]
    assert run.steps[-1].observation == ("agent" if path == AGENTS_JA else "chain") + " リサーチ担当 failed"
    assert "Max turns exceeded" in run.steps[-1].error


def test_js_agents_sdk_completion_objects_give_the_thought_the_answer_and_the_handoff_the_model_called() -> None:
    """Bug (real @openai/agents 0.20 run, Chat Completions): a generation's output is the raw completion object
    (``choices[].message``), so the agent's text and its final answer were lost; the handoff step was named
    ``transfer_to_refunds_agent`` where the JS SDK (keeping the agent name's case) had the model call
    ``transfer_to_Refunds_agent``."""
    [run] = runs(AGENTS / ".real" / "openai-agents-js-0.20-handoff-refund-ja.jsonl")
    assert actions(run) == ["transfer_to_Refunds_agent", "lookup_order", "issue_refund", "respond"]
    assert run.steps[1].thought == "注文を確認します。"
    assert run.steps[-1].arguments == {
        "content": "注文 JP-552 を確認しましたが、返金処理でエラーが発生しました。担当者から連絡します。"}
    assert run.steps[2].error and run.steps[3].error is None


def test_logfire_openai_agents_spans_read_as_the_agents_sdks_own_export() -> None:
    """Bug (real logfire 5.4 ``instrument_openai_agents()`` run, OTLP/JSON): Logfire's spans carry the Agents
    SDK's span data as attributes under message-template names, with no GenAI operation name, so every run was
    rejected as "not an agent run"; they read as the SDK's own export: handoff, tools, error, answers."""
    path = AGENTS / ".real" / "logfire-openai-agents-handoff-de.otlp.json"
    assert detect_format(path) == "openai-agents"
    first, streamed = runs(path)
    assert first.task == "Ist meine Rechnung RE-2024-0815 schon bezahlt?"
    assert actions(first) == ["transfer_to_rechnungs_agent", "get_invoice", "get_payment_status", "respond"]
    assert first.steps[1].thought == "Ich prüfe die Rechnung und den Zahlungsstatus."
    assert first.steps[2].error.startswith("Error running tool (non-fatal)") and first.steps[1].error is None
    assert first.metadata["group_id"] == "conv-77" and first.metadata["agents"] == ["Triage", "Rechnungs-Agent"]
    assert actions(streamed) == ["get_invoice", "respond"]  # a streamed generation's output: a Responses object
    assert streamed.steps[-1].arguments == {"content": "Invoice RE-2024-0999 does not exist."}


def test_vercel_ai4_tool_that_throws_503_is_a_failure_not_an_outage() -> None:
    """Bug (real ai@4.3.19 run): the tool's exception aborts an AI SDK 4 run (``AI_ToolExecutionError`` on the
    ``ai.generateText`` span); its message "census service returned 503" made it an infrastructure error, so no
    agent was warned of the failing tool. An outage is the model provider's, not a tool's backend's."""
    failed, german = runs(VERCEL / ".real" / "ai4-generateText-streamText-tools.otlp.json")
    assert failed.outcome is Outcome.failure
    assert failed.failure.error == "AI_ToolExecutionError: Error executing tool getPopulation: census service returned 503"
    assert [(s.action, s.error) for s in failed.steps] == [
        ("getWeather", None), ("getPopulation", "Error: census service returned 503")]
    assert german.outcome is Outcome.unknown and german.task == "Hallo! Wie ist das Wetter in Zürich?"


# -- edge cases from the review of stop 36's diff (synthetic OTLP: the shapes are the spec's) ----------------------


def _otlp_file(path: Path, spans: list[tuple[str, str | None, str, dict, float, float, dict | None]]) -> Path:
    """An OTLP/JSON file of one trace: (span id, parent, name, string attributes, start s, end s, status)."""
    def one(sid, parent, name, attrs, start, end, status):
        span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": sid, "name": name, "kind": 1,
                "startTimeUnixNano": str(int(start * 1e9)), "endTimeUnixNano": str(int(end * 1e9)),
                "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()]}
        return span | ({"parentSpanId": parent} if parent else {}) | ({"status": status} if status else {})
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [one(*s) for s in spans]}]}]}
    path.write_text(json.dumps(doc))
    return path


def test_a_model_timeout_after_a_tool_timed_out_is_still_an_outage(tmp_path: Path) -> None:
    """A tool's earlier error "timed out" is a fragment of the model call's "APITimeoutError: Request timed out.",
    not where that error started: the run is an outage, not the agent's failure."""
    outage = {"code": 2, "message": "openai.APITimeoutError: Request timed out."}
    path = _otlp_file(tmp_path / "t.json", [
        ("b7ad6b7169203331", None, "invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "input.value": "fetch"},
         1, 9, outage),
        ("c7ad6b7169203332", "b7ad6b7169203331", "call_llm", {"gen_ai.operation.name": "chat"}, 1.1, 2, None),
        ("d7ad6b7169203333", "c7ad6b7169203332", "execute_tool fetch",
         {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "fetch"}, 1.5, 1.9, {"code": 2, "message": "timed out"}),
        ("e7ad6b7169203334", "b7ad6b7169203331", "call_llm", {"gen_ai.operation.name": "chat"}, 3, 9, outage)])
    [result] = read_dump(path, tenant="acme")
    assert result.trajectory.outcome is Outcome.infra_error


def test_a_status_message_that_looks_like_a_literal_but_is_none_is_kept_as_text(tmp_path: Path) -> None:
    """A status message such as ``{[1]: 2}`` made the literal parser raise a TypeError that rejected the trace."""
    path = _otlp_file(tmp_path / "s.json", [
        ("b7ad6b7169203331", None, "invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "input.value": "do it"},
         1, 5, {"code": 2, "message": "{[1]: 2}"}),
        ("c7ad6b7169203332", "b7ad6b7169203331", "execute_tool t",
         {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}, 2, 3, None)])
    [result] = read_dump(path, tenant="acme")
    assert result.ok and result.trajectory.failure.error.startswith("{[1]: 2}")


def test_a_reply_repr_too_long_to_parse_cheaply_stays_text(tmp_path: Path) -> None:
    """Bug (review): a model reply written as ``str()`` of its dict was parsed with ``ast.literal_eval`` however
    long (3 MB: 2 s and 0.5 GB; a hostile trace could take the ingest out). A text longer than 256 KiB is not
    parsed: it stays the step's text, read at once."""
    calls = ", ".join(["{'id': 'c', 'function': {'name': 'f', 'arguments': '{}'}, 'type': 'function'}"] * 40_000)
    said = "{'content': 'Done.', 'role': 'assistant', 'tool_calls': [" + calls + "]}"
    out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": said}]}])
    path = _otlp_file(tmp_path / "big.json", [
        ("b7ad6b7169203331", None, "invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "input.value": "do it"},
         1, 5, None),
        ("c7ad6b7169203332", "b7ad6b7169203331", "chat m",
         {"gen_ai.operation.name": "chat", "gen_ai.output.messages": out}, 2, 3, None)])
    [result] = read_dump(path, tenant="acme")  # its speed: scripts/, not a timed assert (busy machines)
    [step] = result.trajectory.steps
    assert step.action == "respond" and step.arguments["content"].startswith("{'content': 'Done.', 'role': ")


def test_an_mcp_calls_output_in_a_reply_repr_is_not_the_models_words(tmp_path: Path) -> None:
    """Bug (review): a Responses object written as ``str()`` of its dict joined the text of every message its output
    gave, the ``mcp_call``'s tool output included: the model "said" the tool's answer. Only its assistant messages
    are the reply."""
    said = str({"object": "response", "output": [
        {"type": "mcp_call", "id": "mcp_1", "name": "search", "arguments": '{"q": "x"}', "output": "TOOL OUTPUT"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Answer."}]}]})
    out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": said}]}])
    path = _otlp_file(tmp_path / "mcp.json", [
        ("b7ad6b7169203331", None, "invoke_agent a", {"gen_ai.operation.name": "invoke_agent", "input.value": "do it"},
         1, 5, None),
        ("c7ad6b7169203332", "b7ad6b7169203331", "chat m",
         {"gen_ai.operation.name": "chat", "gen_ai.output.messages": out}, 2, 3, None)])
    [step] = one_run(path).steps
    assert (step.action, step.arguments, step.thought) == ("search", {"q": "x"}, "Answer.")


# -- probe B: AgentCore's CloudWatch records of Strands and LangGraph agents (real files) ---------------------------

AGENTCORE_STRANDS_OPENAI = FIXTURES / "otel-genai" / ".real" / "agentcore-strands-openai"


def test_a_strands_tool_that_returned_an_error_result_is_a_failed_step() -> None:
    """Strands marks a tool that returned an error result (instead of raising) ``gen_ai.tool.status: "error"``,
    its span status OK: the step failed, its error the result's words (in the content log beside the span)."""
    runs = {r.trajectory.task: r.trajectory for r in read_dump(AGENTCORE_STRANDS_OPENAI, fmt="otel-genai") if r.ok}
    run = runs["calculate currentv time in difefrent formats using code interoprter"]
    [tool] = [s for s in run.steps if s.action == "code_interpreter"]
    assert tool.error.startswith("Failed to initialize session 'cfd84bec-fec8-47a5-8a28-73b9aa5ee6c6'")
    assert "AccessDeniedException" in tool.error and tool.observation.startswith(tool.error)
    assert [s.action for s in runs["Hello"].steps if s.error] == []


def test_an_adot_log_file_of_strands_content_records_alone_is_otel_genai_so_a_folder_is_read_whole() -> None:
    """ADOT names each content record after its instrumentation scope (``event.name`` = ``strands.telemetry.tracer``,
    no ``gen_ai.*`` event): a log file holding only those was unrecognised, so a folder of spans and logs read the
    spans alone (tasks "POST /invocations (no input recorded)", no arguments, results or answers)."""
    logs = AGENTCORE_STRANDS_OPENAI / "unwrapped_st_raw_otel_strands_openai_runtime_logs.json"
    assert detect_format(logs) == "otel-genai"
    runs = {r.trajectory.task: r.trajectory for r in read_dump(AGENTCORE_STRANDS_OPENAI) if r.ok}
    assert set(runs) == {"calculate currentv time in difefrent formats using code interoprter", "Hello"}
    tool, answer = runs["calculate currentv time in difefrent formats using code interoprter"].steps[-2:]
    assert tool.action == "code_interpreter" and tool.arguments["code_interpreter_input"]["action"]["type"] == "executeCode"
    assert answer.arguments["content"].startswith("It looks like I'm currently unable to execute the code")
    assert [s.arguments["content"] for s in runs["Hello"].steps] == ["Hello! How can I assist you today?"]


def test_cloudwatch_records_are_read_inside_their_wrapper_and_app_log_lines_passed_over() -> None:
    """AgentCore's toolkit (and a CloudWatch query) gives each stored event as ``{"timestamp", "raw_otel_json":
    {<span or log record>}}``: every record was rejected as "not a span". The runtime log stream also holds the
    app's own JSON log lines (``{"timestamp", "level", "message", "logger"}``, no ids): passed over, not rejected."""
    hello, memory = sorted(adapter_support.runs(FIXTURES / "otel-genai" / ".real" / "agentcore-langgraph-cloudwatch"),
                           key=lambda r: r.task)
    assert (hello.task, memory.task) == ("Hello", "Hello, find everything about me from my memory")
    assert [s.arguments["content"] for s in hello.steps] == [
        "Hello! How can I help you today? I'm ready to assist you with calculations, answer questions, or help you "
        "with any task you might have in mind."]
    assert memory.steps[-1].arguments["content"].startswith("I apologize, but I do not have any pre-existing personal")
    assert hello.model_id == "us.anthropic.claude-3-5-haiku-20241022-v1:0"


def test_a_trace_of_two_invocations_keeps_the_later_request() -> None:
    """Two root agent spans in one trace (two user requests): the first is the task and the second was lost, so
    the booking steps read as the answer to a greeting; it is kept in ``metadata.user_prompts``, as a
    conversation grouped from several traces keeps its later turns."""
    run = one_run(OI_REAL / "agentcore_custom_nested_spans.json")
    assert run.task == "Hey, how can you help me"
    assert run.metadata["user_prompts"] == [
        "Book the cheapest flight from SEA to NYC for 2025-03-15 and book the most expensive hotel for the next 3 days"]
    assert actions(run) == ["respond", "search_flights", "search_hotels", "book_flight", "book_hotel", "respond"]


def test_a_tool_message_printed_as_its_str_is_its_content() -> None:
    """ADOT's LangChain instrumentation records a tool's result as the ``ToolMessage``'s ``str()``
    (``content='{...}' name='search_flights' tool_call_id='toolu_...'``): the observation is its content, the
    JSON the tool returned, not the repr around it."""
    run = one_run(FIXTURES / "otel-genai" / ".real" / "agentcore_opentelemetry_langchain_spans.json")
    [tool] = [s for s in run.steps if s.action == "search_flights"]
    found = json.loads(tool.observation)
    assert (found["origin"], found["destination"], found["flights"][0]["flight_id"]) == ("SEA", "NYC", "AA101")
    assert tool.error is None


def test_strands_and_botocore_chat_spans_of_one_bedrock_call_are_one_answer() -> None:
    """ADOT writes Strands' ``chat`` span and botocore's ``chat`` span inside it for every Bedrock call: the same
    interval, the same answer, but histories that end on different messages (Strands' content record groups the
    messages by role; botocore's are one log record each, stored out of order). The answer was a step twice."""
    runs = {r.trajectory.task: r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "agentcore-strands-bedrock")
            if r.ok}
    hello = runs["Hello"]
    assert [(s.action, s.arguments["content"][:40]) for s in hello.steps] == [
        ("respond", "Hello! I'm here and ready to assist you.")]
    assert hello.model_id == "us.anthropic.claude-3-7-sonnet-20250219-v1:0"


def test_langchain_callback_records_read_without_their_spans_are_no_answers_and_one_call_is_one_step() -> None:
    """ADOT's LangChain instrumentation writes each callback's arguments as a content record: a chain's (a LangGraph
    node's or edge's) ``{"inputs": ...}`` / ``{"outputs": "tools" | {"messages": [...]}, "kwargs"}``, a tool's
    ``{"input_str", "inputs", ...}`` / ``{"output": ToolMessage, "kwargs"}``. Read without their spans (the runtime
    log stream alone) each record was a model call: every envelope became a ``respond`` step, and the one
    ``calculator`` call (botocore's choice, the next call's history, the tool's record) three steps."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / "agentcore-langgraph-tool-logs")]
    assert run.task == "calculate currentv time in difefrent formats using code interoprter"
    assert actions(run) == ["calculator", "respond"]
    tool, answer = run.steps
    assert (tool.arguments, tool.observation, tool.error) == ({"expression": "1"}, "1", None)
    assert tool.thought.startswith("I'll help you calculate the current time in different formats using code.")
    assert answer.arguments["content"].startswith("Here's a comprehensive Python script to show current time")
    logs = FIXTURES / "otel-genai" / ".real" / "agentcore-langgraph-cloudwatch" / "st_raw_otel_langchain_runtime_logs.json"
    assert sorted(actions(r.trajectory) for r in read_dump(logs) if r.ok) == [["respond"], ["respond"]]


def test_a_langchain_tool_record_whose_output_is_no_message_is_read(tmp_path: Path) -> None:
    """Found by review: a tool callback's output that is a dict with a ``kwargs`` that is not one (a tool returning
    ``{"function": ..., "kwargs": None}``) raised AttributeError, so the whole record was rejected."""
    records = json.loads((FIXTURES / "otel-genai" / ".real" / "agentcore-langgraph-tool-logs" /
                          "unwrapped_st_raw_otel_langchain_tool_runtime_logs.json").read_text())
    bodies = [r["body"] for r in records if isinstance(r.get("body"), dict)]
    for said in (m for body in bodies for m in (body.get("output") or {}).get("messages", [])):
        if str(said.get("content", "")).startswith('{"output"'):  # the tool's record
            said["content"] = json.dumps({"output": {"function": "lookup", "kwargs": None}})
    (tmp_path / "logs.json").write_text(json.dumps(records))
    assert all(r.ok for r in read_dump(tmp_path / "logs.json"))


def test_openinference_agents_sdk_streamed_chat_answer_is_the_responses_text_not_its_json() -> None:
    """OpenInference copies a streamed Chat Completions generation's output, the SDK's ``[response.model_dump()]``,
    into ``output.value`` alone: the answer is the Responses object's ``output_text``, not the object's JSON."""
    [run] = [r.trajectory for r in read_dump(OI_REAL / "oai-agents-0.24-streamed-chat.otlp.jsonl", tenant="acme")]
    assert actions(run) == ["transfer_to_weatheragent", "get_weather", "get_air_quality", "respond"]
    assert run.steps[-1].arguments == {"content": "FINAL ANSWER: The weather in Paris is sunny, 22C."}
    assert failing(run) == ["get_air_quality"]


@pytest.mark.parametrize("name", ["oai-agents-otel-v2-0.1-chat-streamed.otlp.jsonl", "oai-agents-otel-v2-0.1-chat.otlp.jsonl"])
def test_a_chat_reply_written_as_its_python_dict_repr_is_its_text_and_calls(name: str) -> None:
    """opentelemetry-instrumentation-openai-agents-v2 writes a Chat Completions model's reply as ``str()`` of its
    dict (a Responses object streamed, a ChatCompletionMessage not): the answer is its text, and a turn that only
    asked for tools says nothing (no repr as a thought)."""
    [run] = [r.trajectory for r in read_dump(FIXTURES / "otel-genai" / ".real" / name, tenant="acme")]
    assert actions(run) == ["transfer_to_weatheragent", "get_weather", "get_air_quality", "respond"]
    assert [s.thought for s in run.steps] == [None, None, None, None]
    assert run.steps[-1].arguments == {"content": "FINAL ANSWER: The weather in Paris is sunny, 22C."}
    assert failing(run) == ["get_air_quality"]


def test_a_model_call_inside_a_framework_model_call_much_longer_than_it_answers_once() -> None:
    """agno's ``OpenAIChat.invoke`` and OpenAI's ``ChatCompletion`` inside it record one request: the answer,
    which carries no tool-call ids to match the two by, is said once though agno's span lasts twice as long."""
    [run] = [r.trajectory for r in read_dump(OI_REAL / "agno-3.1-plus-openai.otlp.jsonl", tenant="acme")]
    assert actions(run) == ["get_air_quality", "get_weather", "respond"]
    assert run.steps[-1].arguments == {"content": "FINAL ANSWER: The weather in Paris is sunny, 22C."}
    assert failing(run) == ["get_air_quality"]


def test_a_model_call_inside_another_asked_something_else_is_a_call_of_its_own(tmp_path: Path) -> None:
    """Bug (review): a model call nested in another's time was merged with it whenever both gave the same answer,
    whatever each was asked: a guard call asked "Is this safe?" inside a turn asked "Reply OK", both answering
    "OK", said OK once. Two requests asking different things are two calls (only over the same interval may the
    histories differ: CloudWatch's reordering, see the AgentCore tests)."""
    def llm(asked: str, said: str) -> dict:
        return {"openinference.span.kind": "LLM", "llm.input_messages.0.message.role": "user",
                "llm.input_messages.0.message.content": asked, "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.content": said, "input.value": asked, "output.value": said}
    path = _otlp_file(tmp_path / "guard.json", [
        ("b7ad6b7169203331", None, "agent", {"openinference.span.kind": "AGENT", "input.value": "Reply OK twice",
                                             "output.value": "OK"}, 1, 2, None),
        ("c7ad6b7169203332", "b7ad6b7169203331", "turn", llm("Reply OK", "OK"), 1.01, 1.9, None),
        ("d7ad6b7169203333", "c7ad6b7169203332", "guard", llm("Is this safe? answer OK or NO", "OK"), 1.02, 1.1, None)])
    [run] = runs(path)
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "OK"})] * 2


def test_an_anthropic_tool_result_marked_is_error_in_the_request_is_that_steps_error() -> None:
    """OpenInference's Anthropic instrumentor drops ``is_error`` from the flattened input messages but keeps it in
    the request JSON (``input.value``): the failed result is the step's error, the other result is not."""
    [run] = [r.trajectory for r in read_dump(OI_REAL / "anthropic-3.1-tool-result-is-error.otlp.jsonl", tenant="acme")]
    assert actions(run) == ["get_weather", "get_air_quality", "respond"]
    assert failing(run) == ["get_air_quality"]
    assert run.steps[1].error == run.steps[1].observation == "Error: No sensor data for Paris"


def _phoenix_annotation(span_id: str, name: str, label: str, score: float, n: int = 0) -> dict:
    """A span annotation as Phoenix's REST API lists it (``GET /v1/projects/{p}/span_annotations``)."""
    return {"id": f"U3BhbkFubm90YXRpb246{n}", "span_id": span_id, "name": name, "annotator_kind": "LLM",
            "result": {"label": label, "score": score, "explanation": "x"}, "metadata": {}, "identifier": "",
            "source": "API", "user_id": None, "created_at": "2026-12-02T03:10:02+00:00",
            "updated_at": "2026-12-02T03:10:02+00:00"}


def test_phoenix_verdicts_judge_a_run_only_on_a_root_span_of_any_turn(tmp_path: Path) -> None:
    """Review RA (1, 2) of the Phoenix annotations: grouped by conversation, a verdict on a later turn's root span
    was dropped (only the first root's counted); and a tool-calling eval's per-call labels on the LLM spans of a
    filtered export (their parents absent) were taken as the run's verdict (a failure from one 'incorrect' call)."""
    rows = [json.loads(line) for line in (OI_REAL / "phoenix_spans_df.jsonl").read_text().splitlines() if line.strip()]
    session = "01a234b4-086b-7601-8b63-1ac75cf24573"
    roots = [r for r in rows if r.get("attributes.session.id") == session and not r.get("parent_id")]
    later = max(roots, key=lambda r: r["start_time"])
    shutil.copy(OI_REAL / "phoenix_spans_df.jsonl", tmp_path)
    (tmp_path / "annotations.json").write_text(json.dumps({"data": [
        _phoenix_annotation(later["context.span_id"], "correctness", "incorrect", 0.0)], "next_cursor": None}))
    (conversation,) = [p.trajectory for p in read_dump(tmp_path, group_by="conversation")
                       if p.trajectory is not None and session in p.trajectory.trajectory_id]
    assert conversation.outcome is Outcome.failure

    filtered = tmp_path / "filtered"
    filtered.mkdir()
    spans = json.loads((OI_REAL / "phoenix-rest" / "langgraph.spans.json").read_text())
    spans["data"] = [s for s in spans["data"] if s["span_kind"] == "LLM"]
    first = min(spans["data"], key=lambda s: s["start_time"])["context"]["span_id"]
    (filtered / "llm_spans.json").write_text(json.dumps(spans))
    (filtered / "llm_spans.annotations.json").write_text(json.dumps({"data": [
        _phoenix_annotation(s["context"]["span_id"], "tool_calling", *(("incorrect", 0.0) if s["context"]["span_id"]
                            == first else ("correct", 1.0)), n) for n, s in enumerate(spans["data"])],
        "next_cursor": None}))
    (run,) = [p.trajectory for p in read_dump(filtered)]
    assert run.outcome is Outcome.unknown and [s.action for s in run.steps][-1] == "respond"


def test_a_phoenix_verdict_on_an_agent_root_continued_from_another_service_judges_the_run(tmp_path: Path) -> None:
    """Review RX (D1): a trace continued from an upstream service that exports elsewhere has an agent root whose
    parent is not in the file (Phoenix shows it as the root); the rule above took only parentless spans as roots and
    dropped its verdict, the run read unknown."""
    spans = json.loads((OI_REAL / "phoenix-rest" / "langgraph.spans.json").read_text())
    (root,) = [s for s in spans["data"] if not s["parent_id"]]
    root["parent_id"] = "f00dfacecafe0001"  # the upstream service's span
    (tmp_path / "agent.spans.json").write_text(json.dumps(spans))
    (tmp_path / "agent.annotations.json").write_text(json.dumps({"data": [
        _phoenix_annotation(root["context"]["span_id"], "correctness", "incorrect", 0.0)], "next_cursor": None}))
    (run,) = [p.trajectory for p in read_dump(tmp_path)]
    assert run.outcome is Outcome.failure


def test_a_binary_otlp_protobuf_export_is_named_and_json_asked_for() -> None:
    """``harbor traces export --format otel --encoding pb`` (a real export here) was refused as "binary, not text":
    it is named as OTLP protobuf, and the JSON encoding asked for."""
    with pytest.raises(ValueError, match="binary protobuf") as refused:
        detect_format(OI_REAL / "probe47w1" / "harbor-0.26-atif2otel-0.1.1-hermes.pb")
    assert "OTLP/JSON" in str(refused.value)
