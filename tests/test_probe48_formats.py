"""Probe T of round 48: the least-covered formats (native JSONL, tau-bench / tau2-bench, Vercel AI SDK, LangSmith).

Through ``read_dump`` and the CLI on real files (``fixtures/vercel-ai/.real``: the unmodified AI SDK's own output,
see its SOURCE.md) or trimmed excerpts of them; no mocks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from adapter_support import runs
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

FIXTURES = Path(__file__).parent / "fixtures"
AI5 = FIXTURES / "vercel-ai" / ".real" / "ai5-streamText-tools-and-429.otlp.json"
AI5_TOOLS_ALONE = FIXTURES / "vercel-ai" / ".real" / "probeT48" / "ai5-tool-call-traces-alone.otlp.json"
AI5_RUNS_ALONE = FIXTURES / "vercel-ai" / ".real" / "probeT48" / "ai5-runs-without-their-tool-traces.otlp.json"


# -- Vercel AI SDK 5: streamText's tool calls are traces of their own ---------------------------------------


def test_ai5_stream_text_tool_calls_are_steps_of_their_run_not_runs_of_their_own() -> None:
    """Bug (real ``ai@5.0.277`` output): ``streamText`` runs tools outside the call's context, so each ``ai.toolCall``
    span is a trace of its own, and each was ingested as a run "ai.toolCall (no input recorded)" beside the real one:
    two junk runs for one conversation, the failed tool's a *failure* run that failure warnings would show."""
    read = runs(AI5, tenant="acme")
    assert sorted(r.task for r in read) == ["How do I install it, and how many users do we have?",
                                            "Summarise the quarterly report"]
    assert not any("ai.toolCall" in r.task for r in read)


def test_ai5_detached_tool_span_gives_its_step_its_own_error_and_times() -> None:
    """The joined span is the step's record: the tool's exception and start time (before: no time, and the error
    known only from the next prompt's ``error-text``, which a run that stops after the call, v5's default
    ``stepCountIs(1)``, never writes)."""
    [run] = [r for r in runs(AI5, tenant="acme") if r.task.startswith("How do I install")]
    steps = {s.action: s for s in run.steps}
    assert [s.action for s in run.steps] == ["searchDocs", "runSql", "respond"]
    assert steps["runSql"].error == "Error: permission denied for table users"
    assert steps["runSql"].arguments == {"sql": "select count(*) from users"}
    assert steps["searchDocs"].error is None and "Install guide" in steps["searchDocs"].observation
    assert all(steps[name].started_at is not None for name in ("searchDocs", "runSql"))
    assert run.outcome is Outcome.unknown  # the agent answered; the SDK records no verdict


def test_ai5_tool_call_traces_without_their_run_are_passed_over_not_runs() -> None:
    """An input holding only the detached tool-call traces (their run exported elsewhere) has no task to read: they
    are passed over, not two runs titled "ai.toolCall (no input recorded)" (one of them a failure)."""
    assert list(read_dump(AI5_TOOLS_ALONE, tenant="acme")) == []


def test_ai5_tool_call_traces_join_their_run_across_the_files_of_an_input(tmp_path: Path) -> None:
    """The exporter wrote the run and its detached tool calls to different files (another batch): read as one input
    (a folder), the calls join the run that requested them, in the order it asked for them."""
    for path in (AI5_TOOLS_ALONE, AI5_RUNS_ALONE):
        shutil.copy(path, tmp_path / path.name)
    read = runs(tmp_path, tenant="acme")
    assert len(read) == 2
    [run] = [r for r in read if r.task.startswith("How do I install")]
    assert [(s.action, s.error) for s in run.steps] == [
        ("searchDocs", None), ("runSql", "Error: permission denied for table users"), ("respond", None)]
    assert run.steps[0].started_at is not None
