"""Span exports of agent tools read through the public reader: GitHub Copilot CLI, VeADK / ADK, bare OTLP objects.

Each test names the real file its fixture comes from (see the fixture folder's README.md).
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from trajsearch.ingest.read import detect_format, read_dump

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
COPILOT = FIXTURES / "otel-genai" / ".real" / "copilot-cli"
WARNINGS_TASK = "Oh I don't like warnings; they will come back to bite us later.  Look into those."


def _objects(path: Path) -> list[dict]:
    """The JSON objects of a file of pretty-printed objects, one after another."""
    text, decoder, objects, at = path.read_text(), json.JSONDecoder(), [], 0
    while text[at:].strip():
        value, at = decoder.raw_decode(text, len(text) - len(text[at:].lstrip()))
        objects.append(value)
    return objects


runs = partial(adapter_support.runs, tenant="acme")
one_run = partial(adapter_support.only, tenant="acme")


def test_a_harness_notice_sent_as_the_latest_user_message_is_not_the_task() -> None:
    """Bug (Copilot CLI 1.0.12, MattGertz/OTEL-test ``watson-output/otel-raw.jsonl``): the root's input messages are
    the user's request then ``<system_notification>`` user messages the CLI sent as background work finished; the
    latest user message was taken as the task, so the run was filed under "Shell command ... has completed" and the
    request was nowhere in it."""
    run = one_run(COPILOT / "background-agent.otlp.jsonl")
    assert run.task.startswith(WARNINGS_TASK)
    assert "system_notification" not in run.task


def test_a_conversations_later_turn_is_its_request_not_a_harness_notice(tmp_path: Path) -> None:
    """Bug (same file), ``--group-by conversation``: the turn's entry in ``metadata.user_prompts`` was a notice."""
    objects = [{"resourceSpans": [o]} for o in _objects(COPILOT / "bare-resource-spans.jsonl")]  # as OTLP requests
    later = (COPILOT / "background-agent.otlp.jsonl").read_text().splitlines()
    wrapped = tmp_path / "turns.otlp.jsonl"
    wrapped.write_text("\n".join([json.dumps(o) for o in objects] + later) + "\n")
    run = one_run(wrapped, group_by="conversation")
    assert run.task == "list the commands in the MCP server"
    [later_request] = run.metadata["user_prompts"]
    assert later_request.startswith("Oh I don't like warnings; they will come back to bite us later.")


def test_a_background_sub_agents_report_is_kept() -> None:
    """Bug (same file): a sub-agent launched by the ``task`` tool in the background; its report was dropped as "the
    tool's result shows it", but the tool returned at once with "Agent started in background ...": the report was in
    no step. A tool that returned before the model call inside it ended shows nothing of what it said."""
    run = one_run(COPILOT / "background-agent.otlp.jsonl")
    [task] = [s for s in run.steps if s.action == "task"]
    assert task.observation.startswith("Agent started in background with agent_id: azure-core-ops.")
    reports = [s.arguments["content"] for s in run.steps if s.action == "respond"]
    assert any(r.startswith("Perfect! Now I have all the information needed. Let me provide a comprehensive answer.")
               for r in reports)


VEADK = FIXTURES / "otel-genai" / ".real" / "veadk"


def test_span_ids_written_as_integers_of_2_to_the_63_or_more_are_read() -> None:
    """Bug (VeADK's ``tracer.dump()``, volcengine/veadk-python ``tests/test_evaluator.py``): Python OTel ids dumped
    as ints (a 128-bit trace id, a span id >= 2**63) stopped ijson's C parser ("integer overflow"), and the file was
    said to be of an "unrecognised dump format"."""
    path = VEADK / "trace-set-data-9eec0c8.json"
    assert detect_format(path) == "otel-genai"
    run = one_run(path)
    assert run.task == "How is the weather like in BeiJing?"
    assert run.metadata["trace_id"] == f"{142655176138954930885272077198014871976:032x}"


def test_a_json_array_that_is_not_valid_json_says_so(tmp_path: Path) -> None:
    """Found with the same file: a JSON array whose first item cannot be parsed was "unrecognised dump format",
    as though it were valid JSON of another kind; it is reported as malformed JSON (here a truncated copy)."""
    text = (VEADK / "trace-set-data-9eec0c8.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[:text.index('"attributes"')] + "}")
    with pytest.raises(ValueError, match="malformed JSON"):
        detect_format(cut)


def test_bare_resource_spans_objects_read_as_the_otlp_request_holding_them(tmp_path: Path) -> None:
    """Bug (Copilot CLI 1.0.12 spans as MattGertz/OTEL-test's receiver stored them, one ``ResourceSpans`` after
    another; Lunary's ``out.json`` holds them as an array): each object was rejected as "not a span", so the file
    gave no run. They read as the request holding them does, as JSON lines and as a JSON array alike."""
    bare = COPILOT / "bare-resource-spans.jsonl"
    wrapped, array = tmp_path / "wrapped.jsonl", tmp_path / "array.json"
    wrapped.write_text("".join(json.dumps({"resourceSpans": [o]}) + "\n" for o in _objects(bare)))
    array.write_text(json.dumps(_objects(bare)))
    run = one_run(bare)
    assert detect_format(bare) == detect_format(array) == "otel-genai"
    assert run.task == "list the commands in the MCP server"
    assert [s.action for s in run.steps] == ["report_intent", "powershell", "respond"]
    assert one_run(wrapped) == run
    assert one_run(array) == run


def test_veadk_runner_input_and_last_event_give_the_task_and_the_answer() -> None:
    """Bug (VeADK at volcengine/veadk-python 31a2c41): the root ``invocation`` span's ``input.value`` is the ADK
    runner's arguments, the user's message a genai ``Content`` as JSON in ``new_message``, and its ``output.value``
    the last event; the run was named "invocation [veadk_default_app] (no input recorded)" and had no answer."""
    run = one_run(VEADK / "trace-set-data-31a2c41.json")
    assert run.task == "How is the weather like in Xi'an?"
    assert "task_source" not in run.metadata
    assert [(s.action, s.arguments) for s in run.steps] == [
        ("get_city_weather", {"city": "Xi'an"}),
        ("respond", {"content": "The weather in Xi'an is cool, with a temperature of 18°C."})]


def test_veadk_tool_input_with_the_tools_declaration_gives_the_parameters_as_arguments() -> None:
    """Bug (VeADK at volcengine/veadk-python 9eec0c8): ``gen_ai.tool.input`` holds the call with the tool's
    declaration, ``{"name", "description", "parameters": {...}}``; the whole was kept as the step's arguments."""
    run = one_run(VEADK / "trace-set-data-9eec0c8.json")
    assert run.steps[0].action == "get_city_weather"
    assert run.steps[0].arguments == {"city": "Beijing"}


MONOCLE = FIXTURES / "otel-genai" / ".real" / "monocle"


def test_a_file_of_monocle_spans_is_said_to_be_one() -> None:
    """Bug (monocle2ai/monocle ``apptrace/tests/integration/test_crewai_single_agent.json``): a file of spans in
    Monocle's own convention was an "unrecognised dump format", though its spans are read in other conventions."""
    with pytest.raises(ValueError, match=r"Monocle spans \(monocle2ai: span.type agentic.request"):
        detect_format(MONOCLE / "crewai-single-agent.json")


@pytest.mark.parametrize("name", ["adk-single-agent.json", "crewai-single-agent.json"])
def test_a_trace_of_monocle_spans_is_refused_for_its_convention_not_for_want_of_input(name: str) -> None:
    """Bug (monocle2ai/monocle ``test_adk_single_agent.json``: ADK's own spans beside Monocle's of the same run; and
    ``test_crewai_single_agent.json`` read as otel-genai): the Monocle trace was refused as "not an agent run ... and
    no input", which is false (its events hold the request, the tool calls and the answer)."""
    results = list(read_dump(MONOCLE / name, tenant="acme", fmt="otel-genai"))
    refused = [r.error for r in results if not r.ok]
    assert refused and all("Monocle spans" in e and "no input" not in e for e in refused)
    assert [r.trajectory.task for r in results if r.ok] == (
        ["What is the current weather in New York?"] if name.startswith("adk") else [])
