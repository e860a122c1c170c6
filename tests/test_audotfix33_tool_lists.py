"""Review of round 33's OTel tool lists and evaluation logs (reviews/AUDOT33.md, findings 1 to 7).

A span run's ``tools_available`` is what the index files it by (``indexer``: ``tools_available or tools_used``, the
column ``--tool`` selects), so a list that lacks a tool the run called hides the run from ``--tool <that tool>``;
a tool name no filter could take must cost the name, not the run. Files: the real fixtures named below, some with
one value changed in the test (said where).
"""

from __future__ import annotations

import json
from pathlib import Path

from adapter_support import runs
from cli_support import newcomer, run_cli, unnoted  # noqa: F401 (a fixture)

FIXTURES = Path(__file__).parent / "fixtures"
#: OpenInference's ADK export through the Zipkin exporter, which cut ``gen_ai.tool.definitions`` at 128 characters
#: after its first tool (``get_weather``); the runs call ``get_population`` too.
ADK_ZIPKIN = FIXTURES / "openinference/.real/probe43/adk-2.13-openinference-adk-1.0.5.zipkin.json"
#: pydantic-ai lists its function tool in the definitions, not the built-in web search the run called.
PA_WEB_SEARCH = FIXTURES / "otel-genai/.real/probeD47/pa-2.78-web-search-then-tool.otlp.json"
AUD33 = FIXTURES / "otel-genai/.aud33"
SPLUNK = AUD33 / "splunk-util-genai-0.1.15-evaluation-log.otlp.jsonl"


def test_a_cut_tool_list_names_no_tools() -> None:
    """The cut list, repaired to its whole items, named ``get_weather`` alone as all the run had."""
    found = runs(ADK_ZIPKIN)
    assert [run.tools_available for run in found] == [[], [], []]
    assert [run.tools_used for run in found][:2] == [["get_weather", "get_population", "respond"],
                                                     ["get_weather", "get_population"]]


def test_a_tool_list_holds_every_tool_the_run_called() -> None:
    (run,) = runs(PA_WEB_SEARCH)
    assert run.tools_available == ["web_search", "to_fahrenheit"]  # the called first


def test_a_search_by_a_called_tool_finds_the_run(newcomer) -> None:  # noqa: F811
    """End to end, as on main: ``--tool get_population`` finds the two runs that called it."""
    code, out, err = run_cli("ingest", str(ADK_ZIPKIN), "-t", "acme")
    assert code == 0, out + err
    code, out, err = run_cli("search", "weather and population of a city", "-t", "acme", "--tool", "get_population",
                             "--json")
    assert code == 0 and not [line for line in unnoted(err) if "nothing found" in line], out + err
    assert sorted(hit["trajectory_id"] for hit in json.loads(out)) == sorted(
        run.trajectory_id for run in runs(ADK_ZIPKIN) if "get_population" in run.tools_used)


def _with_definitions(tmp_path: Path, definitions: object,
                      source: Path = AUD33 / "util-genai-1.1-model-500-before-any-tool.otlp.jsonl") -> Path:
    """A util-genai fixture whose agent spans list ``get_weather``, with that list replaced."""
    text = source.read_text()
    record = json.loads(text.splitlines()[0])
    for span in (s for rs in record["resourceSpans"] for ss in rs["scopeSpans"] for s in ss["spans"]):
        for attr in span["attributes"]:
            if attr["key"] == "gen_ai.tool.definitions":
                attr["value"] = definitions
    path = tmp_path / source.name
    path.write_text("\n".join([json.dumps(record), *text.splitlines()[1:]]) + "\n")
    return path


def test_a_tool_name_no_filter_could_take_costs_the_name_not_the_run(tmp_path: Path) -> None:
    """An over-long name, one with a newline, and a list of JSON-encoded tool objects (an SDK that sets only
    string arrays as attributes): the run is read; a JSON object's name is its ``name``."""
    cases = {
        json.dumps([{"type": "function", "name": "x" * 300}, {"type": "function", "name": "get_weather"}]):
            ["get_weather"],
        json.dumps([{"type": "function", "name": "get\nweather"}, {"type": "function", "name": "ok"}]): ["ok"]}
    for definitions, tools in cases.items():
        (run,) = runs(_with_definitions(tmp_path, {"stringValue": definitions}))
        assert run.tools_available == tools, definitions
    encoded = [json.dumps({"type": "function", "name": name, "description": "d" * 250, "parameters": {}})
               for name in ("get_weather", "get_population")]
    (run,) = runs(_with_definitions(tmp_path, {"arrayValue": {"values": [{"stringValue": t} for t in encoded]}}))
    assert run.tools_available == ["get_weather", "get_population"]


def _splunk_with_second_verdict(tmp_path: Path, time: str | None) -> Path:
    """Splunk's real evaluation log, with a second verdict (``toxicity``) of the same span logged at the same time
    (``time``: that time for both, or None: the file's own)."""
    spans, logs = SPLUNK.read_text().splitlines()
    record = json.loads(logs)
    (scope,) = record["resourceLogs"][0]["scopeLogs"]
    first = scope["logRecords"][0]
    second = json.loads(json.dumps(first))
    for attr in second["attributes"]:
        value = {"gen_ai.evaluation.name": {"stringValue": "toxicity"},
                 "gen_ai.evaluation.score.value": {"doubleValue": 0.0},
                 "gen_ai.evaluation.score.label": {"stringValue": "Non-toxic"}}.get(attr["key"])
        attr["value"] = value or attr["value"]
    if time is not None:
        first["timeUnixNano"] = second["timeUnixNano"] = time
    scope["logRecords"] = [first, second]
    path = tmp_path / "evals.otlp.jsonl"
    path.write_text(spans + "\n" + json.dumps(record) + "\n")
    return path


def test_two_verdicts_of_one_span_logged_at_one_time_are_both_kept(tmp_path: Path) -> None:
    for time in (None, "0"):
        (run,) = runs(_splunk_with_second_verdict(tmp_path, time))
        assert [(e["name"], e["label"]) for e in run.metadata["evaluations"]] == [
            ("relevance", "Not Relevant"), ("toxicity", "Non-toxic")], time


def test_a_hostile_verdict_is_read_within_bounds(tmp_path: Path) -> None:
    """A score of ``NaN``, a 100,000-character label and a map for a name: the run is read, the score unknown,
    the label clipped, the name ``evaluation``."""
    spans, logs = SPLUNK.read_text().splitlines()
    record = json.loads(logs)
    (log,) = record["resourceLogs"][0]["scopeLogs"][0]["logRecords"]
    for attr in log["attributes"]:
        attr["value"] = {"gen_ai.evaluation.name": {"kvlistValue": {"values": [{"key": "a", "value": {"intValue": 1}}]}},
                         "gen_ai.evaluation.score.value": {"stringValue": "NaN"},
                         "gen_ai.evaluation.score.label": {"stringValue": "L" * 100_000}}.get(attr["key"], attr["value"])
    path = tmp_path / "hostile.otlp.jsonl"
    path.write_text(spans + "\n" + json.dumps(record) + "\n")
    (run,) = runs(path)
    (verdict,) = run.metadata["evaluations"]
    assert (verdict["name"], verdict["score"], run.reward) == ("evaluation", None, None)
    assert len(verdict["label"]) <= 200


def test_openinference_tool_schemas_name_the_tools() -> None:
    """smolagents' OpenInference spans list the model's tools as ``llm.tools.<i>.tool.json_schema`` (no GenAI
    definitions); the managed agent's run lists its agent tool and ``final_answer``."""
    probe = FIXTURES / "openinference/.real/probe43"
    (run,) = runs(probe / "smolagents-1.26-oi-0.1.43-last-step.otlp.jsonl")
    assert run.tools_available == ["get_weather", "get_population", "final_answer"]
    assert [run.tools_available for run in runs(FIXTURES / "openinference/.real/agentcore_openinference_langchain_spans.json")] \
        == [["get_weather"], ["get_weather"]]


def test_a_run_offered_more_tools_than_the_index_keeps_is_still_found_by_those_it_called(tmp_path: Path) -> None:
    """An MCP server's hundred tools offered: the index keeps a run's first 64 (``indexer``, ``MAX_TOOLS``), so the
    tools it called come first in ``tools_available`` (offered after them), never cut by the offered ones."""
    many = json.dumps([{"type": "function", "name": f"mcp_tool_{n:03}"} for n in range(100)])
    source = AUD33 / "util-genai-1.1-workflow-two-agents.otlp.jsonl"
    (run,) = runs(_with_definitions(tmp_path, {"stringValue": many}, source))
    called = [tool for tool in run.tools_used if tool != "respond"]
    assert called and run.tools_available[:len(called)] == called
    assert len(run.tools_available) == len(called) + 100
