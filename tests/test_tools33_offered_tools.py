"""Round 33: the tools a run was offered, for the Vercel AI SDK and Langfuse adapters (``Node.info[OFFERED]``, as the
OTel span formats), and a failed model call's message from its ``gen_ai.client.operation.exception`` log (LiteLLM).

The index files a run by ``tools_available`` (``--tool``); these runs had none. Fixtures: the real files named
below, and ``fixtures/otel-genai/.tools33`` (README.md there).
"""

from __future__ import annotations

from pathlib import Path

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
    """LiteLLM's model-call span names only the error's class (``error.type``, an ERROR status with no
    description); its ``gen_ai.client.operation.exception`` log record holds the message, which the run's error
    now carries (it was ``RateLimitError`` alone)."""
    (run,) = runs(FIXTURES / "otel-genai/.tools33/litellm-1.93-rate-limit-exception-log.otlp.jsonl")
    assert run.outcome is Outcome.infra_error and run.failure is not None
    assert run.failure.error.startswith("RateLimitError: litellm.RateLimitError: RateLimitError: OpenAIException - "
                                        "Rate limit reached for gpt-4o-mini")
