"""AI SDK and OpenAI Agents SDK files of probe H (round 45), read through the public reader and the CLI.

The fixtures (``fixtures/vercel-ai/.real/probeH45``, ``fixtures/openai-agents/.real/probeH45``, see their SOURCE.md)
are what the released SDKs wrote, whole or as a subset of their traces with every span left as written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli
from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
AI6 = FIXTURES / "vercel-ai" / ".real" / "probeH45"
AGENTS = FIXTURES / "openai-agents" / ".real" / "probeH45"


# -- AI SDK: embedding traces (A7) ------------------------------------------------------------


def test_ai_sdk_embedding_traces_are_passed_over_not_rejected(caplog: pytest.LogCaptureFixture) -> None:
    """A7: a RAG route's ``embedMany`` and ``embed`` calls are traces of their own; each was rejected ("not an agent
    run"), a dead letter per query. They hold no agent run and nothing wrong: passed over, saying so at info level."""
    with caplog.at_level(logging.INFO):
        results = list(read_dump(AI6 / "ai6.0.333-rag.otlp.json"))
    assert [r.error for r in results if not r.ok] == []
    assert [r.trajectory.trajectory_id for r in results] == ["vercel:0db08e3efb9e2bc00a555ff8b8d17c92"]
    passed = sorted(r.getMessage() for r in caplog.records if r.getMessage().startswith("passed over trace"))
    assert passed == [
        "passed over trace 0c237638c6637fbe44b6fb1d0f7d9d1b: not an agent run: embedding calls only",
        "passed over trace 67041784511be68894d96545283c11db: not an agent run: embedding calls only"]


def test_ingesting_a_rag_apps_export_exits_0(home: Path) -> None:
    """A7 through the CLI: no rejection, so no exit status 3 and no dead-letter record."""
    code, out, err = run_cli("ingest", str(AI6 / "ai6.0.333-rag.otlp.json"), "-t", "h", "--json", "--quiet")
    assert code == 0, out + err
    report = json.loads(out)
    assert (report["read"], report["ingested"], report["rejected"]) == (1, 1, 0)


# -- AI SDK: provider-executed tools (A1) -----------------------------------------------------


@pytest.mark.parametrize("name", ["ai6.0.333-provider-executed-tool-answer.otlp.json",
                                  "ai6.0.333-stream-provider-executed-tool.otlp.json"])
def test_text_after_a_provider_executed_tool_is_the_answer(name: str) -> None:
    """A1: a model response holding a provider tool's call (``web_search`` declared ``{"type": "provider"}``, run by
    the provider, not the SDK) and text, finish reason ``stop``: the SDK runs nothing more and returns the text as
    ``result.text``. It was read as the call's thought and the run had no answer; now the call, then the answer."""
    run = adapter_support.only(AI6 / name)
    assert [s.action for s in run.steps] == ["web_search", "respond"]
    search, answer = run.steps
    assert (search.arguments, search.thought) == ({"query": "Lyon weather"}, None)
    assert answer.arguments == {"content": "It is 12C and cloudy in Lyon."}


# -- Agents SDK: a run ended by its own tool raising (A2, A4) ---------------------------------


def test_agents_024_run_ended_by_its_tool_timing_out_is_a_failure_not_an_outage() -> None:
    """A2 (openai-agents 0.24.0): a ``failure_error_function=None`` tool raised ``ConnectionError("payment gateway timed
    out after 30s")``; the SDK re-raised it as ``UserError("Error running tool charge_card: ...")`` and marked the agent
    span "Error in agent run" with that text. The words look like an outage, and the tool's name the SDK inserted hid
    that the error is the tool's: the run was ``infra_error``. It is the run's own failure, no infrastructure cause."""
    run = adapter_support.only(AGENTS / "oai-agents-0.24.0-tool-raised-timeout.jsonl")
    assert run.outcome.value == "failure"
    assert run.failure.error == "Error in agent run: Error running tool charge_card: payment gateway timed out after 30s"
    assert run.failure.cause is None
    [step] = run.steps
    assert (step.action, step.error) == ("charge_card", "Error running tool: payment gateway timed out after 30s")


def test_agents_042_run_ended_by_its_tool_raising_is_a_failure_with_that_tools_error() -> None:
    """A4 (openai-agents 0.4.2, ``Runner.run`` not streamed): the SDK marks no agent span when a tool's exception ends
    the run, only the function span ("Error running tool", the fatal message; a tool error given back to the model
    is "Error running tool (non-fatal)"). The run read as ``unknown``, though it raised and never answered. It is the
    run's failure, with the error as the SDK raised it, and no outage (the tool's own timeout)."""
    run = adapter_support.only(AGENTS / "oai-agents-0.4.2-tool-raised-timeout.jsonl")
    assert run.outcome.value == "failure"
    assert run.failure.error == "Error running tool charge_card: payment gateway timed out after 30s"
    assert run.failure.cause is None
    assert run.metadata["outcome_basis"] == "error status of the tool 'charge_card', which ended the run"
    [step] = run.steps
    assert (step.action, step.error) == ("charge_card", "Error running tool: payment gateway timed out after 30s")


def test_agents_tool_errors_given_back_to_the_model_do_not_fail_the_run() -> None:
    """A4's other side: "Error running tool (non-fatal)" (the SDK's default ``failure_error_function``: the model was
    told and answered) stays a step's error; the run's outcome is not decided by it."""
    run = adapter_support.runs(FIXTURES / "openai-agents" / ".real" / "agents-as-tools-parallel.jsonl")[0]
    assert run.steps[2].error == "Error running tool (non-fatal): Tool execution failed. Error details are redacted."
    assert (run.outcome.value, run.failure, run.steps[-1].action) == ("unknown", None, "respond")
