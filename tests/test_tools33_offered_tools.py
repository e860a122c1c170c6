"""Round 33: the tools a run was offered, for the Vercel AI SDK and Langfuse adapters (``Node.info[OFFERED]``, as the
OTel span formats), and a failed model call's message from its ``gen_ai.client.operation.exception`` log (LiteLLM).

The index files a run by ``tools_available`` (``--tool``); these runs had none. Fixtures: the real files named
below, and ``fixtures/otel-genai/.tools33`` (README.md there).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from adapter_support import runs
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"


def test_vercel_ai_runs_list_the_tools_their_model_calls_were_offered() -> None:
    """``ai.prompt.tools`` on ``doGenerate`` / ``doStream`` spans (one JSON definition a tool): AI SDK 6's MCP tools,
    and a run that failed (HTTP 500, retries exhausted) after calling one of its three tools keeps the other two."""
    (mcp,) = runs(FIXTURES / "vercel-ai/.real/ai6-mcp-tools.otlp.json")
    assert mcp.tools_available == ["add", "read_note"]
    (failed,) = runs(FIXTURES / "vercel-ai/.real/ai6-streamText-tool-loop-then-500-exhausted.otlp.json")
    assert failed.outcome is Outcome.infra_error and failed.tools_used == ["get_weather"]
    assert failed.tools_available == ["get_weather", "get_population", "convert_temperature"]


def test_langfuse_runs_list_the_tools_their_observations_define() -> None:
    """Microsoft Agent Framework's ``gen_ai.tool.definitions`` (Chat Completions shape, a JSON text) in the trace's
    ``metadata.attributes`` (the root span's, repeated there), and BeeAI's ``llm.tools`` list on its
    ``agent.react.start`` observation's ``metadata.attributes``."""
    (maf,) = runs(FIXTURES / "langfuse/.real/microsoft-agent-2025-10-14.json")
    assert maf.tools_available == ["get_weather"]
    (beeai,) = runs(FIXTURES / "langfuse/.real/beeai-2025-08-01.json")
    assert beeai.tools_available == ["Wikipedia", "OpenMeteoTool"]
    assert "tools_offered" not in maf.metadata and "tools_offered" not in beeai.metadata


def test_operation_exception_log_gives_the_failed_calls_message() -> None:
    """A model-call span that names only the error's class (``error.type``, an ERROR status with no description:
    LiteLLM's own spans carry the message, an exporter or back end dropping status descriptions and span events
    leaves this; the case is built, not captured); its ``gen_ai.client.operation.exception`` log record, as LiteLLM
    writes it, holds the message, which the run's error now carries (it was ``RateLimitError`` alone)."""
    (run,) = runs(FIXTURES / "otel-genai/.tools33/litellm-1.93-rate-limit-exception-log.otlp.jsonl")
    assert run.outcome is Outcome.infra_error and run.failure is not None
    assert run.failure.error.startswith("RateLimitError: litellm.RateLimitError: RateLimitError: OpenAIException - "
                                        "Rate limit reached for gpt-4o-mini")


def _rewritten(source: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``source`` (JSON) with ``change`` applied to every object in it, written to ``target``."""
    document = json.loads(source.read_text())

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            change(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(document)
    target.write_text(json.dumps(document))
    return target


def test_a_tool_list_an_exporter_cut_names_no_tool(tmp_path: Path) -> None:
    """The real AI SDK run's ``ai.prompt.tools`` as an OTel JS exporter with ``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT=255``
    writes it (each string of the array cut; the definitions are 256, 253 and 265 characters): two definitions no
    longer parse, so the list is not whole. It names no tool rather than ``get_weather, get_population`` passed off
    as the list (``--tool convert_temperature`` would miss a run that was offered it)."""
    def cut(obj: dict[str, Any]) -> None:
        if obj.get("key") == "ai.prompt.tools":
            for item in obj["value"]["arrayValue"]["values"]:
                item["stringValue"] = item["stringValue"][:255]

    source = FIXTURES / "vercel-ai/.real/ai6-streamText-tool-loop-then-500-exhausted.otlp.json"
    (run,) = runs(_rewritten(source, tmp_path / "cut.otlp.json", cut))
    assert run.tools_used == ["get_weather"]
    assert not run.tools_available  # as a run with no list


def test_a_tool_list_nested_too_deep_keeps_its_run(tmp_path: Path) -> None:
    """A ``gen_ai.tool.definitions`` text nested deeper than Python's JSON parser goes (RecursionError) in the real
    Microsoft Agent Framework trace's ``metadata.attributes`` names no tool; the Langfuse record keeps its run (it
    was refused whole: 'cannot read langfuse record: RecursionError')."""
    def deepen(obj: dict[str, Any]) -> None:
        if isinstance(obj.get("metadata"), str) and "gen_ai.tool.definitions" in obj["metadata"]:
            metadata = json.loads(obj["metadata"])
            metadata["attributes"]["gen_ai.tool.definitions"] = "[" * 5000 + "]" * 5000
            obj["metadata"] = json.dumps(metadata)

    source = FIXTURES / "langfuse/.real/microsoft-agent-2025-10-14.json"
    (run,) = runs(_rewritten(source, tmp_path / "deep.json", deepen))
    assert len(run.steps) == 2 and not run.tools_available


def test_the_last_of_several_operation_exception_logs_is_the_calls_error(tmp_path: Path) -> None:
    """A call's rate limit logged twice for its span (a retry's record a second later, its words differing): the run's
    error is the last record's, the call's final error (it was the first)."""
    fixture = FIXTURES / "otel-genai/.tools33/litellm-1.93-rate-limit-exception-log.otlp.jsonl"
    span, log = fixture.read_text().split("\n")[:2]
    record = json.loads(log)["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]
    later = json.loads(json.dumps(record).replace("Rate limit reached", "Rate limit still reached after 3 retries"))
    later["timeUnixNano"] = later["observedTimeUnixNano"] = str(int(record["timeUnixNano"]) + 10**9)
    both = json.loads(log)
    both["resourceLogs"][0]["scopeLogs"][0]["logRecords"].append(later)
    (path := tmp_path / "two.otlp.jsonl").write_text(span + "\n" + json.dumps(both) + "\n")
    (run,) = runs(path)
    assert run.failure is not None and "Rate limit still reached after 3 retries" in run.failure.error
