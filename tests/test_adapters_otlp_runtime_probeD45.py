"""OTel span exports of probe D (round 45) read through the public reader and the CLI: a Semantic Kernel
orchestration over its agent runtime's linked traces.

The fixture (``fixtures/otel-genai/.real/probeD45-runtime``, see its SOURCE.md) is a file the released packages
wrote, whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli

FIXTURES = Path(__file__).parent / "fixtures"
OTEL = FIXTURES / "otel-genai" / ".real" / "probeD45-runtime"
SK_SEQUENTIAL = OTEL / "sk-1.45-sequential-orchestration-de.otlp.json"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An embedded store under ``tmp_path/home`` for the CLI, with the hashing test embedder."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


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
