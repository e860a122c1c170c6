"""OTel span exports of probe D (round 45) read through the public reader and the CLI: a Semantic Kernel
orchestration over its agent runtime's linked traces, and Microsoft Agent Framework's ``workflow.build`` traces
(plain OTLP and under OpenInference's Agent Framework processor).

The fixtures (``fixtures/otel-genai/.real/probeD45-runtime`` and ``fixtures/openinference/.real/probeD45-runtime``,
see their SOURCE.md) are files the released packages wrote, whole or as a subset of their spans with every span
left as written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
OTEL = FIXTURES / "otel-genai" / ".real" / "probeD45-runtime"
OI = FIXTURES / "openinference" / ".real" / "probeD45-runtime"
SK_SEQUENTIAL = OTEL / "sk-1.45-sequential-orchestration-de.otlp.json"


def test_a_semantic_kernel_orchestration_over_linked_traces_is_one_run_with_each_agents_answer() -> None:
    """D1 (semantic-kernel 1.45 ``SequentialOrchestration`` on ``InProcessRuntime``): SK's agent runtime, a port of
    autogen-core's, starts a trace for every message it sends (``agent_runtime send|process|ack ...``), linked to
    the trace that sent it. Each trace was read alone: the Writer's became a 0-step run named after a runtime span,
    5 were rejected, and no agent's answer was kept (SK writes the model calls' content to log records; only the
    ``invoke_agent`` spans hold what each agent said). It is one run, with both answers, the Writer's last."""
    [run] = adapter_support.runs(SK_SEQUENTIAL)
    assert run.task == "Finde Wetter und Hotelpreise für Lissabon und schreibe drei Sätze Reisetipp."
    assert [s.action for s in run.steps] == ["Travel-get_weather", "Travel-get_hotel_prices", "respond", "respond"]
    assert run.steps[0].observation == "Sonnig, 24 °C in Lissabon"
    assert run.steps[1].error == "ConnectionError: hotel API unreachable for Lissabon"
    assert run.steps[2].arguments["content"].endswith("Hotelpreise: nicht verfügbar (API nicht erreichbar)")
    assert run.steps[3].arguments["content"].startswith("Lissabon lockt mit Sonne und 24 °C.")
    assert run.metadata["spans"] == 21  # every span of the 8 linked traces, no more


def test_ingesting_a_semantic_kernel_orchestration_exits_0_with_no_rejection(home: Path) -> None:
    """D1: the same file through the CLI: one run, no dead letter, no exit status 3."""
    code, out, err = run_cli("ingest", str(SK_SEQUENTIAL), "-t", "d", "--json", "--quiet")
    assert code == 0, out + err
    report = json.loads(out)
    assert (report["read"], report["ingested"], report["rejected"]) == (1, 1, 0)


@pytest.mark.parametrize("path, run_id", [
    (OTEL / "af-1.26-sequential-de.subset.otlp.json", "otel:e4890e7c02d7b02ff7c72f38876fa843"),
    (OI / "af-1.26-oi-af-0.1.13-handoff-de.subset.otlp.json", "oi:4bfbc04bd6e0ba21957922808413594e"),
])
def test_agent_framework_workflow_build_traces_are_passed_over(path: Path, run_id: str,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """D3 (agent-framework 1.26; the second file through openinference-instrumentation-agent-framework 0.1.13):
    ``WorkflowBuilder.build()`` writes a ``workflow.build`` span, a trace of its own, each time a workflow (every
    orchestration) is built; the run is the ``invoke_workflow`` trace. The build trace was rejected ("not an agent
    run") in OTel GenAI and became a 0-step run "workflow.build (no input recorded)" under OpenInference. Building
    a workflow is no run and nothing wrong: passed over, saying so at info level, as building an agent is."""
    with caplog.at_level(logging.INFO):
        [run] = adapter_support.runs(path)
    assert run.trajectory_id == run_id
    passed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("passed over trace")]
    assert [m.split(": ", 1)[1] for m in passed] == ["it only builds a workflow (workflow.build), no run of it"]
