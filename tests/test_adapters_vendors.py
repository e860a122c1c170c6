"""Langfuse and LangSmith on real exports (tests/fixtures/{langfuse,langsmith}/.real, sources in SOURCE.md).

Everything goes through the public reader (``read_dump`` / ``detect_format``).
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Outcome

from adapter_support import only, runs

FIXTURES = Path(__file__).parent / "fixtures"
LANGFUSE = FIXTURES / "langfuse" / ".real"  # a dot-directory: tests/test_adapters.py's walk does not count them
LANGSMITH = FIXTURES / "langsmith" / ".real"
OPENAI_AGENTS = LANGFUSE / "openai-agents-2025-09-30.json"
LANGGRAPH = LANGFUSE / "langgraph-2025-08-22.json"
PYDANTIC_AI = LANGFUSE / "pydantic-ai-tools-2025-12-04.json"
AGNO = LANGFUSE / "agno-2025-06-11.json"
MS_AGENT = LANGFUSE / "microsoft-agent-2025-10-14.json"
CREWAI = LANGFUSE / "crewai-2025-07-11.trace.json"
VERTEX = LANGFUSE / "vertex-ai-2025-08-01.trace.json"
AI_SDK = LANGFUSE / "agentprism-vercel-ai-sdk-2025-09-19.json"
LS_JS = LANGSMITH / "langsmith_js_wrap_openai_default.json"
LS_PY = LANGSMITH / "langsmith_py_wrap_openai_.json"
LS_SPLIT = LANGSMITH / "wrap_openai_chat.json"


one = partial(only, tenant="acme")


def rejected(path: Path) -> list[str]:
    return [r.error for r in read_dump(path, tenant="acme") if not r.ok]


def when(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


# -- detection ---------------------------------------------------------------------------


@pytest.mark.parametrize("path", [OPENAI_AGENTS, LANGGRAPH, PYDANTIC_AI, AGNO, MS_AGENT, CREWAI, AI_SDK])
def test_langfuse_ui_exports_are_detected(path: Path) -> None:
    assert detect_format(path) == "langfuse"


@pytest.mark.parametrize("path", [LS_JS, LS_PY, LS_SPLIT])
def test_langsmith_ingest_payloads_are_detected(path: Path) -> None:
    assert detect_format(path) == "langsmith"


def test_a_pretty_printed_export_past_the_peek_is_still_langfuse(tmp_path: Path) -> None:
    """A big download (pretty-printed, over 64 KiB) is detected from its parsed document."""
    doc = json.loads(OPENAI_AGENTS.read_text())
    doc["observations"] = doc["observations"] * 40
    big = tmp_path / "trace.json"
    big.write_text(json.dumps(doc, indent=2))
    assert big.stat().st_size > 64 * 1024
    assert detect_format(big) == "langfuse"


# -- Langfuse ----------------------------------------------------------------------------


def test_langfuse_openai_agents_export() -> None:
    """Bug 1: the UI's {trace, observations} download was not recognised. Bug 2: toxicity became the reward."""
    run = one(OPENAI_AGENTS)
    assert run.trajectory_id == "lf:fee618f96dc31e0ca38b2f7b26eb8b29"
    assert run.task == "What's the weather in Tokyo?"
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    weather, answer = run.steps
    assert weather.arguments == {"city": "Tokyo"}
    assert weather.observation == "The weather in Tokyo is sunny."
    assert answer.arguments["content"].startswith("The weather in Tokyo is currently sunny.")
    assert all(s.error is None for s in run.steps)
    assert run.model_id == "gpt-4.1-2025-04-14"  # from the Responses API generation
    assert run.created_at == when("2025-09-30T09:03:59.962")
    # toxicity 0.8 and hallucination 0 are evaluations, not a reward or a verdict
    assert (run.outcome, run.reward) == (Outcome.unknown, None)
    assert [(s["name"], s["value"]) for s in run.metadata["scores"]] == [("toxicity", 0.8), ("hallucination", 0.0)]


def test_tool_arguments_are_the_models_where_the_tracing_wrapped_them() -> None:
    """Bug (real: Langfuse's own export of a Claude Agent SDK run, traced by LangSmith's exporter): each tool's
    arguments were its tracing wrapper ``{"input": {"city": "Berlin"}}``, not the ``{"city": "Berlin"}`` the model
    sent. (A model that itself sends ``{"input": ...}``, as pydantic-ai's ``final_result`` can, keeps it.)"""
    run = one(CREWAI.parent / "claude-agent-2025-12-22.trace.json")
    assert [(s.action, s.arguments) for s in run.steps if s.action != "respond"] == [
        ("mcp__weather__get_weather", {"city": "Berlin"}), ("mcp__weather__get_weather", {"city": "New York"})]


def test_langfuse_langgraph_tools_traced_as_spans() -> None:
    """Bug 2: a tool traced as a SPAN (LangChain callback handler) was lost."""
    run = one(LANGGRAPH)
    assert run.task == "Search the web for 'example' and summarize."  # not the "Be helpful!" prompt
    assert [s.action for s in run.steps] == ["Web-Search", "respond"]
    search = run.steps[0]
    assert search.arguments == {"query": "example"}  # recorded as the Python repr "{'query': 'example'}"
    assert json.loads(search.observation) == [{"url": "https://example.com", "title": "Example Result", "q": "example"}]
    assert search.error is None
    assert run.steps[1].arguments["content"].startswith('The search for "example" primarily leads to')
    assert run.model_id == "gpt-4o-2024-08-06"
    assert (run.outcome, run.reward) == (Outcome.unknown, None)  # hallucination 0.1 is no reward


def test_langfuse_pydantic_ai_one_step_per_tool_call_and_the_real_task() -> None:
    """Bug 2: the task was '{"args": ["programming"], "kwargs": {}}'; each tool call appeared twice."""
    run = one(PYDANTIC_AI)
    assert run.task == "Select and call THREE of the available tools to get joke suggestions about 'programming'."
    assert [s.action for s in run.steps] == [
        "get_pun_suggestion", "get_dad_joke_suggestion", "get_one_liner_suggestion", "respond", "respond",
        "final_result"]
    pun = run.steps[0]
    assert pun.arguments == {"topic": "programming"}
    assert pun.observation.startswith("Pun idea: Play on words related to 'programming'")
    assert run.steps[4].arguments == {"content": "Why do programmers hate nature?  \nIt has too many bugs!"}
    assert run.steps[5].arguments["quality"] == "good"  # the evaluator agent's structured output
    assert all(s.error is None for s in run.steps)
    assert run.model_id == "gpt-4o-mini-2024-07-18"
    assert run.metadata["tags"] == ["example", "joke-generator"]
    assert run.outcome is Outcome.unknown and run.reward is None


def test_langfuse_agno_double_encoded_input_and_nested_generations() -> None:
    run = one(AGNO)
    assert run.task == "What is currently trending on Twitter?"  # inside a JSON string of a JSON string
    # the SDK's generation nested in agno's is the same call: no "None" answer, no duplicate
    assert [s.action for s in run.steps] == ["duckduckgo_search", "respond"]
    search = run.steps[0]
    assert search.arguments == {"query": "currently trending on Twitter"}
    assert json.loads(search.observation)[0]["href"] == "https://twitter.com/explore/tabs/trending/"
    assert run.steps[1].arguments["content"].startswith("To find out what's currently trending on Twitter")
    assert run.model_id == "gpt-4o-mini"
    assert run.metadata["conversation_id"] == "35cc6c90-b657-4819-b66c-c931c03ad569"


def test_langfuse_vercel_ai_sdk_calls_inside_wrapping_generations() -> None:
    """Bug: the app's generation around ai.streamText around two ai.streamText.doStream calls was read as one call:
    the answer came first, timed at the trace start, and the first call's text (the reason for the search) was lost."""
    run = one(AI_SDK)
    assert run.trajectory_id == "lf:ac29be521ce79d5df06d9081b50f2cb3"
    assert run.task == "How to use langfuse for N+1 evaluations?"
    assert [s.action for s in run.steps] == ["searchLangfuseDocs", "respond"]  # once each, in time order
    search, answer = run.steps
    # the first doStream: its text is the output, its tool call only in ai.response.toolCalls
    assert search.thought == ("I\u2019ll look up the Langfuse docs for \u201cN+1 evaluations\u201d to share the recommended "
                              "approach and a minimal example.")
    assert search.arguments == {"query": "N+1 evaluations Langfuse how to implement n+1 evaluation pattern batch eval "
                                         "per prediction vs per dataset Python JS"}
    assert search.observation.startswith('{"_meta":{"id":"inkeep-chatcmpl-40fc3a6d-a341-4906-ba8f-eecf1570e0e3"')
    assert search.started_at == when("2025-09-19T06:51:20.208")
    # the second doStream recorded nothing: the answer ai.streamText (and the app's generation) recorded is its
    assert answer.arguments["content"].startswith("# N+1 evaluations in Langfuse\n\nDo you want to compare N model")
    assert answer.started_at == when("2025-09-19T06:51:25.036")
    assert answer.thought is None
    assert all(s.error is None for s in run.steps)
    assert run.model_id == "gpt-5"
    assert run.created_at == when("2025-09-19T06:51:14.794")
    assert (run.outcome, run.reward) == (Outcome.unknown, None)  # helpfulness 0, is_question 1...: no verdict
    assert run.metadata["conversation_id"] == "chat_53668515-211a-4a42-b069-554b7e1fcc60"


def test_langfuse_a_generation_around_two_calls_is_no_call_whatever_they_are_named(tmp_path: Path) -> None:
    """Two generations under one make it a container even without the AI SDK's doStream names."""
    export = json.loads(AI_SDK.read_text())
    for obs in export["observations"]:
        if obs["name"] == "ai.streamText.doStream":
            obs["name"] = "chat gpt-5"
    renamed = tmp_path / "renamed.json"
    renamed.write_text(json.dumps(export))
    run = one(renamed)
    assert [(s.action, s.started_at) for s in run.steps] == [
        ("searchLangfuseDocs", when("2025-09-19T06:51:20.208")), ("respond", when("2025-09-19T06:51:25.036"))]
    assert run.steps[0].thought.startswith("I\u2019ll look up the Langfuse docs")


def test_langfuse_crewai_task_is_the_instruction_not_the_agents_repr() -> None:
    """Bug: the task span's input ``{"agent": "id=UUID(...) role='Software developer' ...", ...}`` gave
    the agent's Python repr as the task; the instruction is in the generation's user message."""
    run = one(CREWAI)
    # cut out of CrewAI's prompt ("\nCurrent Task: {input}\n\nThis is the expected criteria ...\n\nBegin! ...")
    assert run.task == "Define the HTML for making a simple website with heading- Hello World! Langfuse monitors your CrewAI agent!"


def test_a_vertex_ai_model_resource_path_is_its_model_name() -> None:
    """The generation records ``projects/<p>/locations/<l>/publishers/google/models/gemini-2.5-flash``."""
    run = one(VERTEX)
    assert run.model_id == "gemini-2.5-flash" and run.task == "What is Langfuse?"


def test_langfuse_ingestion_trace_creates_merge_and_decorator_arguments_are_the_call() -> None:
    """Bugs (real langfuse 2.60 SDK bodies): a later ``trace-create`` (output only) replaced the first, losing the
    name, user, session and tags; an ``@observe`` tool's arguments were the decorator's ``{"args", "kwargs"}``."""
    [handler] = [r.trajectory for r in read_dump(LANGFUSE / "lf2_langchain_handler_langgraph.ingestion.jsonl")]
    assert (handler.metadata["trace_name"], handler.metadata["user_id"], handler.metadata["conversation_id"],
            handler.metadata["tags"]) == ("city_agent", "carol", "lf2-lg-session", ["langgraph"])
    [decorated] = [r.trajectory for r in read_dump(LANGFUSE / "lf2_observe_openai.ingestion.jsonl")]
    assert decorated.metadata["trace_name"] == "city-agent"
    assert [s.arguments for s in decorated.steps if s.action == "get_weather"] == [{"city": "Paris"}]


def test_langsmith_graph_interrupt_is_no_failure_and_js_outputs_are_unwrapped() -> None:
    """Bugs (real SDK payloads): LangGraph's ``interrupt()`` (``GraphInterrupt`` on a chain run) became a failed
    step; the JS SDK's ``{"outputs": "..."}`` wrapper of a tool's string result stayed in the observation."""
    paused, _resumed = [r.trajectory for r in read_dump(LANGSMITH / "langgraph_subgraph_interrupt_resume.batch.jsonl")]
    assert not [s for s in paused.steps if s.error] and paused.outcome is Outcome.unknown
    [js] = [r.trajectory for r in read_dump(LANGSMITH / "js_traceable_wrap_openai.batch.jsonl")]
    assert js.steps[0].observation == "Sunny, 22 C in Paris"


def test_langfuse_tool_paused_by_a_graph_interrupt_did_not_fail() -> None:
    """Bug (real langfuse 2.60 handler bodies): a tool that asks a human (LangGraph's ``interrupt()``) is written
    at level ERROR with ``str(GraphInterrupt)``, ``(Interrupt(value=...),)``, as its statusMessage; the pause
    was read as the tool failing."""
    run = one(FIXTURES / "langfuse" / ".aud32" / "lf2_react_tool_interrupt.ingestion.jsonl")
    assert [(s.action, s.arguments, s.error) for s in run.steps] == [("drop_table", {"table": "orders_2019"}, None)]
    assert run.outcome is Outcome.unknown


def test_langsmith_feedback_on_a_child_run_joins_its_trace() -> None:
    """Bug (real SDK payload): feedback on a child run carries its ``run_id`` only; it was rejected as "only
    feedback, none of its runs" and its score lost."""
    results = list(read_dump(LANGSMITH / "react_agent_tool_raises.batch.jsonl"))
    assert [r.error for r in results if not r.ok] == []
    [run] = [r.trajectory for r in results]
    child = [s for s in run.metadata["scores"] if s.get("target")]
    assert [(s["name"], s["value"]) for s in child] == [("correctness", 0.0)]


def test_langfuse_list_valued_call_ids_do_not_crash() -> None:
    """Bug 2: Microsoft Agent Framework's call id ["run_…", "call_…"] crashed with 'unhashable type: list'."""
    run = one(MS_AGENT)
    assert run.task == "What's the weather like in Portland?"
    assert [s.action for s in run.steps] == ["get_weather", "respond"]
    assert run.steps[0].arguments == {"location": "Portland"}
    assert run.steps[0].observation == "The weather in Portland is stormy with a high of 19°C."
    assert run.model_id == "gpt-4o"  # the generation's, not the agent's "unknown"
    assert (run.outcome, run.reward) == (Outcome.unknown, None)  # hallucination = 1 is not success


SNAKE = {"traceId": "trace_id", "parentObservationId": "parent_observation_id", "startTime": "start_time",
         "endTime": "end_time", "statusMessage": "status_message", "model": "provided_model_name",
         "sessionId": "session_id", "userId": "user_id", "dataType": "data_type", "stringValue": "string_value",
         "observationId": "observation_id"}


def as_blob_rows(export: dict[str, Any]) -> list[dict[str, Any]]:
    """A UI download as the blob-storage export writes it: snake_case rows, ClickHouse times, JSON-text I/O."""
    rows = []
    for obs in export["observations"]:
        row = {SNAKE.get(k, k): v for k, v in obs.items()}
        for key in ("start_time", "end_time"):
            row[key] = row[key].replace("T", " ").rstrip("Z") if row.get(key) else row.get(key)
        for key in ("input", "output", "metadata"):
            row[key] = json.dumps(row[key]) if row.get(key) is not None else None
        rows.append(row)
    trace = dict(export["trace"])
    scores = json.loads(trace.pop("scores")) if isinstance(trace.get("scores"), str) else trace.pop("scores", [])
    rows += [{SNAKE.get(k, k): v for k, v in s.items()} for s in scores]
    rows.append({SNAKE.get(k, k): v for k, v in trace.items()})  # the trace row after its observations
    return rows


@pytest.mark.parametrize("path", [OPENAI_AGENTS, LANGGRAPH, PYDANTIC_AI, MS_AGENT])
def test_langfuse_flat_blob_rows_give_the_same_run(tmp_path: Path, path: Path) -> None:
    export = json.loads(path.read_text())
    rows = tmp_path / "observations.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in as_blob_rows(export)))
    assert detect_format(rows) == "langfuse"
    flat, ui = one(rows), one(path)
    assert flat.trajectory_id == ui.trajectory_id
    assert (flat.task, flat.model_id, flat.outcome, flat.reward) == (ui.task, ui.model_id, ui.outcome, ui.reward)
    assert [s.model_dump() for s in flat.steps] == [s.model_dump() for s in ui.steps]


def test_langfuse_public_api_trace_with_nested_observations(tmp_path: Path) -> None:
    export = json.loads(PYDANTIC_AI.read_text())
    trace = dict(export["trace"], observations=export["observations"])
    trace["input"] = json.loads(json.loads(trace["input"]))  # the API gives JSON values, not JSON text
    api = tmp_path / "trace.json"
    api.write_text(json.dumps(trace))
    run = one(api)
    assert run.task.startswith("Select and call THREE")
    assert len(run.steps) == 6


def test_langfuse_server_download_without_trace_object(tmp_path: Path) -> None:
    """The newer download route writes {observations, scores}: trace fields ride on each observation,
    and Langfuse's own extraction of a generation's tool calls (toolCallNames / toolCalls) may stand in
    for an output it left out."""
    export = json.loads(LANGGRAPH.read_text())
    scores = export["trace"]["scores"]
    observations = []
    for obs in export["observations"]:
        obs = dict(obs, traceName="LangGraph", sessionId="sess-1", tags=["demo"])
        if obs["type"] == "GENERATION" and obs["output"].get("additional_kwargs", {}).get("tool_calls"):
            obs["toolCallNames"] = ["Web-Search"]
            obs["toolCalls"] = [json.dumps({"id": "call_1oGK863sxQHlPreFhDdEs3yl", "arguments": '{"query": "example"}',
                                            "type": "function", "index": 0})]
            obs["output"] = None
        observations.append(obs)
    path = tmp_path / "trace-e1fde3efec57ce8a69bafd3fb928a7eb.json"
    path.write_text(json.dumps({"observations": observations, "scores": scores}, indent=2))
    assert detect_format(path) == "langfuse"
    run = one(path)
    assert run.trajectory_id == "lf:e1fde3efec57ce8a69bafd3fb928a7eb"
    assert run.task == "Search the web for 'example' and summarize."
    assert [(s.action, s.arguments) for s in run.steps][0] == ("Web-Search", {"query": "example"})
    assert [s.action for s in run.steps] == ["Web-Search", "respond"]
    assert (run.metadata["trace_name"], run.metadata["conversation_id"]) == ("LangGraph", "sess-1")
    assert run.reward is None and [s["name"] for s in run.metadata["scores"]] == ["hallucination", "toxicity"]


def with_scores(tmp_path: Path, scores: list[dict[str, Any]]) -> Path:
    export = json.loads(OPENAI_AGENTS.read_text())
    base = json.loads(export["trace"]["scores"]) if isinstance(export["trace"]["scores"], str) else export["trace"]["scores"]
    template = base[0]  # a real score row: only name / value / data type change
    export["trace"]["scores"] = json.dumps(base + [dict(template, comment=None, **s) for s in scores])
    path = tmp_path / "scored.json"
    path.write_text(json.dumps(export))
    return path


def test_langfuse_only_outcome_like_scores_decide(tmp_path: Path) -> None:
    run = one(with_scores(tmp_path, [{"name": "correctness", "value": 0.3, "dataType": "NUMERIC"}]))
    assert (run.outcome, run.reward) == (Outcome.failure, 0.3)
    assert run.metadata["outcome_basis"] == "score 'correctness'"
    assert run.failure.error.startswith("score correctness: 0.3")
    run = one(with_scores(tmp_path, [{"name": "correctness", "value": 0.3, "dataType": "NUMERIC"}]),
              success_threshold=0.25)
    assert (run.outcome, run.reward) == (Outcome.success, 0.3)
    run = one(with_scores(tmp_path, [{"name": "task_success", "value": 1, "dataType": "BOOLEAN",
                                      "stringValue": "True"}]))
    assert (run.outcome, run.reward) == (Outcome.success, 1.0)
    run = one(with_scores(tmp_path, [{"name": "resolution", "value": 0, "dataType": "CATEGORICAL",
                                      "stringValue": "unresolved"}]))
    assert run.outcome is Outcome.failure
    # a categorical "fail" of a safety check and a helpfulness score say nothing about the task
    run = one(with_scores(tmp_path, [{"name": "safety", "value": 0, "dataType": "CATEGORICAL", "stringValue": "fail"},
                                     {"name": "helpfulness", "value": 0.9, "dataType": "NUMERIC"}]))
    assert (run.outcome, run.reward) == (Outcome.unknown, None)
    assert [s["name"] for s in run.metadata["scores"]] == ["toxicity", "hallucination", "safety", "helpfulness"]
    # a score about one observation is not the run's verdict
    run = one(with_scores(tmp_path, [{"name": "correctness", "value": 0.0, "observationId": "5b99c3e3411ed17b"}]))
    assert run.outcome is Outcome.unknown


def test_langfuse_failed_tool_and_ingestion_events(tmp_path: Path) -> None:
    """An ingestion batch: creates completed by updates; the error sits on the failed step only."""
    batch = {"batch": [
        {"id": "e1", "type": "trace-create", "timestamp": "2025-03-01T10:00:00Z",
         "body": {"id": "t-1", "name": "agent", "timestamp": "2025-03-01T10:00:00Z",
                  "input": {"question": "Convert 3 km to miles"}}},
        {"id": "e2", "type": "generation-create", "timestamp": "2025-03-01T10:00:01Z",
         "body": {"id": "g-1", "traceId": "t-1", "name": "llm", "startTime": "2025-03-01T10:00:01Z",
                  "model": "gpt-4o", "input": [{"role": "user", "content": "Convert 3 km to miles"}]}},
        {"id": "e3", "type": "generation-update", "timestamp": "2025-03-01T10:00:02Z",
         "body": {"id": "g-1", "traceId": "t-1", "endTime": "2025-03-01T10:00:02Z",
                  "output": {"role": "assistant", "content": "Let me convert.", "tool_calls": [
                      {"id": "c-1", "type": "function", "function": {"name": "convert", "arguments": "{\"km\": 3}"}}]}}},
        {"id": "e4", "type": "tool-create", "timestamp": "2025-03-01T10:00:03Z",
         "body": {"id": "x-1", "traceId": "t-1", "parentObservationId": None, "name": "convert",
                  "startTime": "2025-03-01T10:00:03Z", "input": {"km": 3}}},
        {"id": "e5", "type": "span-update", "timestamp": "2025-03-01T10:00:04Z",
         "body": {"id": "x-1", "traceId": "t-1", "endTime": "2025-03-01T10:00:04Z", "level": "ERROR",
                  "statusMessage": "ValueError: unit table missing"}},
        {"id": "e6", "type": "span-create", "timestamp": "2025-03-01T10:00:05Z",
         "body": {"id": "x-2", "traceId": "t-1", "name": "convert", "startTime": "2025-03-01T10:00:05Z",
                  "input": {"km": 3}, "output": "1.864 miles", "level": "WARNING", "statusMessage": "slow"}},
    ]}
    path = tmp_path / "ingestion.json"
    path.write_text(json.dumps(batch))
    assert detect_format(path) == "langfuse"
    run = one(path)
    assert run.task == "Convert 3 km to miles"
    assert [(s.action, s.error) for s in run.steps] == [
        ("convert", "ValueError: unit table missing"), ("convert", None)]
    assert run.steps[0].thought == "Let me convert."
    assert run.steps[0].arguments == {"km": 3}
    assert run.steps[1].observation == "1.864 miles"
    assert run.outcome is Outcome.unknown  # a failed tool is not a failed run


def test_langfuse_bad_records_are_rejected_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    rows = [
        {"trace": {"name": "no id"}, "observations": []},
        {"id": "o-1", "traceId": "t-9", "type": "SPAN", "name": "x", "startTime": "2025-01-01T00:00:00Z"},
        {"traceId": "t-8", "name": "correctness", "value": 1, "dataType": "NUMERIC"},
        {"id": "", "traceId": "t-7", "type": "TOOL", "name": "x"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    errors = rejected(path)
    assert "Langfuse trace export without 'trace.id'" in errors
    assert "Langfuse observation without 'id' or 'traceId'" in errors
    assert "trace t-8: only scores, no trace or observation" in errors
    assert any(e.startswith("no task: trace 'x'") for e in errors)
    assert not any(e.startswith(("cannot read", "cannot convert")) for e in errors)


# -- LangSmith ---------------------------------------------------------------------------


def test_langsmith_js_payload_patch_without_id() -> None:
    """Bug 3: {"post": [...], "patch": [...]} gave KeyError 'id'; the JS patch names its run by dotted_order only."""
    run = one(LS_JS)
    assert run.trajectory_id == "ls:dc34609e-3eeb-459d-bc2a-6fedb01d2e6e"
    assert run.task == "howdy"
    [answer] = run.steps
    assert (answer.action, answer.arguments) == ("respond", {"content": "Howdy! How can I assist you today?"})
    assert answer.error is None
    assert answer.ended_at == datetime.fromtimestamp(1728803138.285, tz=timezone.utc)  # the patch's end_time
    assert run.model_id == "gpt-4o-mini"
    assert run.created_at == datetime.fromtimestamp(1728803137.170, tz=timezone.utc)  # epoch ms start_time
    assert (run.outcome, run.reward) == (Outcome.unknown, None)
    assert run.metadata["project"] == "default"


def test_langsmith_python_payload() -> None:
    run = one(LS_PY)
    assert run.trajectory_id == "ls:d0d84d31-923d-4cb5-94a8-40a0a0087578"
    assert run.task == "howdy"
    assert [(s.action, s.arguments["content"]) for s in run.steps] == [("respond", "Howdy! How can I assist you today?")]
    assert run.created_at == when("2024-10-11T20:58:23.298773")
    assert run.steps[0].ended_at == when("2024-10-11T20:58:24.417106")
    assert run.model_id == "gpt-4o-mini"


def test_langsmith_post_and_patch_in_separate_payloads() -> None:
    """The run created by one payload and completed by the next is one run with the patch's outputs."""
    run = one(LS_SPLIT)
    assert run.trajectory_id == "ls:79f14713-3ed7-4dea-83f0-9fecd2303040"
    assert run.task.startswith("Write a bash script that takes a matrix represented as a string")
    [answer] = run.steps
    assert answer.action == "respond"
    assert answer.arguments["content"].startswith("Certainly! Below is a Bash script")
    assert run.model_id == "o1-mini"


TRACE = "1f0b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
LLM = "2a0b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
TOOL = "3b0b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
LLM2 = "4c0b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def dotted(*parts: tuple[str, str]) -> str:
    return ".".join(f"{stamp}{run}" for stamp, run in parts)


def agent_payloads() -> tuple[dict[str, Any], dict[str, Any]]:
    """A LangChain agent as the SDK sends it: posts first, patches later (shapes of RunCreate / RunUpdate)."""
    root = ("20250301T100000000000Z", TRACE)
    llm = ("20250301T100000100000Z", LLM)
    tool = ("20250301T100001000000Z", TOOL)
    llm2 = ("20250301T100002000000Z", LLM2)
    human = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
             "kwargs": {"content": "What is the population of Lyon?", "type": "human"}}
    post = {"post": [
        {"id": TRACE, "trace_id": TRACE, "dotted_order": dotted(root), "name": "AgentExecutor", "run_type": "chain",
         "start_time": "2025-03-01T10:00:00.000000", "inputs": {"input": "What is the population of Lyon?"},
         "extra": {"metadata": {"thread_id": "th-7"}}, "tags": ["geo"], "session_name": "geo-bot"},
        {"id": LLM, "trace_id": TRACE, "parent_run_id": TRACE, "dotted_order": dotted(root, llm), "name": "ChatOpenAI",
         "run_type": "llm", "start_time": "2025-03-01T10:00:00.100000", "inputs": {"messages": [[human]]},
         "extra": {"invocation_params": {"model": "gpt-4o-mini"}}},
        {"id": TOOL, "trace_id": TRACE, "parent_run_id": TRACE, "dotted_order": dotted(root, tool), "name": "search",
         "run_type": "tool", "start_time": "2025-03-01T10:00:01.000000", "inputs": {"input": "{'q': 'Lyon population'}"}},
    ]}
    patch = {"patch": [
        {"id": LLM, "trace_id": TRACE, "parent_run_id": TRACE, "dotted_order": dotted(root, llm),
         "end_time": "2025-03-01T10:00:00.900000", "outputs": {"generations": [[{"text": "", "message": {
             "lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
             "kwargs": {"content": "I will search.", "tool_calls": [
                 {"name": "search", "args": {"q": "Lyon population"}, "id": "call_1", "type": "tool_call"}]}}}]]}},
        {"id": TOOL, "trace_id": TRACE, "parent_run_id": TRACE, "dotted_order": dotted(root, tool),
         "end_time": "2025-03-01T10:00:01.500000", "outputs": {"output": {
             "lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
             "kwargs": {"content": "HTTPError: 503 from search backend", "tool_call_id": "call_1",
                        "status": "error", "type": "tool"}}}},
        # a run whose post never arrived: the dotted order still places it in the trace, under the root
        {"dotted_order": dotted(root, llm2), "trace_id": TRACE, "name": "ChatOpenAI", "run_type": "llm",
         "end_time": "2025-03-01T10:00:03.000000",
         "outputs": {"choices": [{"message": {"role": "assistant", "content": "I could not look it up."}}]}},
        {"id": TRACE, "trace_id": TRACE, "dotted_order": dotted(root), "end_time": "2025-03-01T10:00:03.500000",
         "error": "Traceback (most recent call last):\n  File \"agent.py\", line 9\nTimeoutError: agent timed out",
         "outputs": None},
    ]}
    return post, patch


def test_langsmith_runs_completed_across_files(tmp_path: Path) -> None:
    post, patch = agent_payloads()
    (tmp_path / "a-post.json").write_text(json.dumps(post))
    (tmp_path / "b-patch.json").write_text(json.dumps(patch))
    run = one(tmp_path)
    assert run.trajectory_id == f"ls:{TRACE}"
    assert run.task == "What is the population of Lyon?"
    # the model's call and the tool run are one step; the ToolMessage marks it failed
    assert [s.action for s in run.steps] == ["search", "respond"]
    search, answer = run.steps
    assert search.arguments == {"q": "Lyon population"}
    assert search.thought == "I will search."
    assert search.error == "HTTPError: 503 from search backend"
    assert answer.arguments == {"content": "I could not look it up."} and answer.error is None
    assert run.outcome is Outcome.infra_error  # the root run's error is a timeout
    assert run.failure.error == "TimeoutError: agent timed out"
    assert run.model_id == "gpt-4o-mini"
    assert run.metadata["conversation_id"] == "th-7" and run.metadata["tags"] == ["geo"]


LS_OPS = LANGSMITH / "run_ops_1efb27a4.trimmed.jsonl"


def _retrieval_graph_checked(run: Any) -> None:
    """The run of ``LS_OPS`` as one trace: the task from the root's create, each step completed by its update."""
    assert run.trajectory_id == "ls:1efb27a4-5264-6908-9ab5-23fc3c60ae2d"
    assert "ERROR collecting tests/test_agent.py" in run.task
    assert [s.action for s in run.steps] == ["Response", "VectorStoreRetriever"]
    retrieval = run.steps[1]
    assert retrieval.arguments == {"query": "function signature of process_claims_query"}
    assert "langgraph/tutorials/sql-agent/" in retrieval.observation  # the documents of its update op
    assert retrieval.ended_at == when("2024-12-04T19:59:34.548098")


def test_langsmith_run_ops_updates_merge_into_their_creates(tmp_path: Path) -> None:
    """Bug (langsmith-sdk ``python/bench/data/run_ops_*.jsonl``): each run's update op (``id``, ``end_time``,
    ``outputs``, ``error``; no ``trace_id``) was a trace of its own, rejected for having no task, and the
    retrievals kept no documents; with the trace ids copied onto the updates the update replaced the create."""
    assert rejected(LS_OPS) == []
    _retrieval_graph_checked(one(LS_OPS))
    lines = [json.loads(line) for line in LS_OPS.read_text().splitlines()]
    creates = {r["id"]: r for r in lines if "run_type" in r}
    traced = [dict(r, **{k: creates[r["id"]][k] for k in ("trace_id", "dotted_order")}) if "run_type" not in r else r
              for r in lines]
    (tmp_path / "ops.jsonl").write_text("".join(json.dumps(r) + "\n" for r in traced))
    _retrieval_graph_checked(one(tmp_path / "ops.jsonl"))


def test_langsmith_feedback_only_outcome_like_keys_decide(tmp_path: Path) -> None:
    post, patch = agent_payloads()
    feedback = [
        {"id": "f-1", "run_id": TRACE, "trace_id": TRACE, "key": "user_score", "score": 0.2, "comment": "meh"},
        {"id": "f-2", "run_id": TRACE, "trace_id": TRACE, "key": "correctness", "score": 1, "comment": "right"},
        {"id": "f-3", "run_id": TOOL, "trace_id": TRACE, "key": "correctness", "score": 0},  # about the tool run
    ]
    (tmp_path / "post.json").write_text(json.dumps(post))
    (tmp_path / "patch.json").write_text(json.dumps(patch))
    (tmp_path / "zz-feedback.jsonl").write_text("".join(json.dumps(f) + "\n" for f in feedback))
    assert detect_format(tmp_path / "zz-feedback.jsonl") == "langsmith"
    run = one(tmp_path)
    assert (run.outcome, run.reward) == (Outcome.success, 1.0)  # an explicit verdict beats the error status
    assert run.metadata["outcome_basis"] == "score 'correctness'"
    assert {s["name"]: s.get("value") for s in run.metadata["scores"] if "target" not in s} == {
        "user_score": 0.2, "correctness": 1.0}


def test_langsmith_run_tree_export_with_child_runs(tmp_path: Path) -> None:
    tree = {"id": TRACE, "name": "qa", "run_type": "chain", "start_time": "2025-03-01T10:00:00",
            "end_time": "2025-03-01T10:00:02", "inputs": {"question": "Capital of France?"},
            "outputs": {"output": "Paris"}, "feedback_stats": {"helpfulness": {"n": 1, "avg": 0.4}},
            "child_runs": [{"id": LLM, "name": "ChatAnthropic", "run_type": "llm", "start_time": "2025-03-01T10:00:01",
                            "inputs": {"messages": [{"role": "user", "content": "Capital of France?"}]},
                            "outputs": {"role": "assistant", "type": "message", "model": "claude-x",
                                        "content": [{"type": "text", "text": "Paris"}]}}]}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps({"runs": [tree]}) + "\n")
    run = one(path)
    assert run.task == "Capital of France?"
    assert [(s.action, s.arguments) for s in run.steps] == [("respond", {"content": "Paris"})]
    assert run.model_id == "claude-x"
    assert (run.outcome, run.reward) == (Outcome.unknown, None)  # helpfulness is no verdict


def test_langsmith_bad_records_are_rejected_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    rows = [
        {"post": [{"trace_id": TRACE, "run_type": "chain", "name": "no id, no dotted order"}]},
        {"post": ["not a run"], "patch": [{"dotted_order": "x", "trace_id": TRACE}]},
        {"run_id": "r-404", "key": "correctness", "score": 1},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    errors = rejected(path)
    assert "LangSmith ingest payload: a 'post' run without 'id' or 'dotted_order'" in errors
    assert "LangSmith ingest payload: a 'post' entry is str, not a run" in errors
    assert "trace r-404: only feedback, none of its runs" in errors
    assert not any(e.startswith(("cannot read", "cannot convert")) for e in errors)


def test_reading_twice_gives_identical_runs() -> None:
    """No 'now' leaks into a run and ids come from the runs themselves."""
    for path in (OPENAI_AGENTS, PYDANTIC_AI, LS_JS, LS_SPLIT):
        assert one(path).model_dump() == one(path).model_dump()


def test_langsmith_failed_tool_has_its_error_and_no_empty_object_as_result() -> None:
    """A tool run that raised records outputs {} (real LangGraph run, captured from the SDK's /runs/batch)."""
    [run] = [r.trajectory for r in read_dump(LANGSMITH / "langgraph-react-runs-batch.json", tenant="acme")]
    steps = {s.action: s for s in run.steps}
    assert steps["get_air_quality"].error == "ValueError: No sensor data for Lyon"
    # not '{}' (the raise left outputs empty): the message the model was given about it
    assert steps["get_air_quality"].observation.startswith("Error: ValueError('No sensor data for Lyon')")
    assert steps["get_weather"].observation == "It's always sunny in Lyon."


def test_langsmith_openai_agents_integration_run_that_raised_is_a_failure() -> None:
    """Bugs (real langsmith 0.14.17 ``OpenAIAgentsTracingProcessor`` over openai-agents 0.24): the integration
    marks the agent's chain run with MaxTurnsExceeded, never the root, so the run was ``unknown`` (the Agents SDK's
    own export of it is a failure), and its errors, ``str()`` of the SDK's error dict, were shown as that repr."""
    first, second = runs(LANGSMITH / "oai-agents-via-langsmith.batch.jsonl")
    assert first.outcome is Outcome.unknown  # a non-fatal tool error, then an answer
    assert first.steps[1].error == "Error running tool (non-fatal): Tool execution failed. Error details are redacted."
    assert second.outcome is Outcome.failure
    assert second.failure.error == second.steps[-1].error == 'Max turns exceeded: {"max_turns": 2}'


def test_koog_tool_calls_kept_as_json_text_in_the_message_are_calls_in_the_order_asked() -> None:
    """Bug (real Langfuse UI download of a Koog agent): each call is an assistant message whose content is the JSON
    text of its ``tool_calls`` list, so the calls became the thought and the two tools, started in the same
    millisecond, came out in reverse order."""
    [run] = runs(LANGFUSE / "koog-2025-08-26.trace.json")
    assert [(s.action, s.arguments, s.thought) for s in run.steps] == [
        ("HelloTool", {"name": "Bob"}, None), ("ByeTool", {"name": "Bob"}, None),
        ("respond", {"content": "Hello my darling Bob! And, bye my dear Bob!"}, None)]


def test_a_model_turns_reasoning_and_words_before_a_call_are_both_its_thought() -> None:
    """Bug (real: Langfuse's test trace of Anthropic's Messages API with thinking on): a turn holding reasoning, text
    said to the user and a tool call kept the reasoning as the call's thought and dropped the text."""
    run = only(LANGFUSE / "anthropic-messages-api-2026-03-25.trace.json")
    assert run.steps[0].action == "Read"
    assert run.steps[0].thought == ("The user wants help with the repository. Let me explore the project structure "
                                    "first.\nOf course! Let me first take a look at the repository structure.")


def test_a_trace_whose_observations_kept_no_output_is_answered_by_the_trace_output() -> None:
    """Bug (real: agent-prism's copy of a Langfuse "download trace as JSON", every observation's input and output
    null): the run had no step at all, as if the agent had said nothing; the answer is in the trace's output."""
    run = only(LANGFUSE / "agentprism-langfuse-3.json")
    assert run.task == "what is AI?"
    [answer] = run.steps
    assert answer.action == "respond"
    assert answer.arguments["content"].startswith("I can help with Langfuse and building/observing LLM apps.")


@pytest.mark.parametrize("output", [
    {"role": "assistant", "content": "It is 4."},  # one message object
    {"messages": [{"role": "user", "content": "what is AI?"}, {"role": "assistant", "content": "It is 4."}]},  # a state
])
def test_a_trace_output_holding_messages_answers_with_their_last_words(tmp_path: Path, output: dict) -> None:
    """Found by review: where the trace's output (the answer of last resort) is not text, its JSON was the answer:
    a message object, or a LangGraph state with the whole conversation, the user's question included."""
    export = json.loads((LANGFUSE / "agentprism-langfuse-3.json").read_text())
    export["trace"]["output"] = output
    (tmp_path / "trace.json").write_text(json.dumps(export))
    [answer] = only(tmp_path / "trace.json").steps
    assert answer.arguments["content"] == "It is 4."
