"""OTel span exports of probe D (round 43) read through the public reader and the CLI: OpenLIT's ``create_agent``
traces, Zipkin JSON whose tags the Python exporter cut, the OTel JS SDK's ``ConsoleSpanExporter`` output.

The fixtures (``fixtures/otel-genai/.real/probeD43``, see its SOURCE.md) are files the released instrumentation
packages wrote, whole or as a subset of their spans with every span left as written.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

import adapter_support
from cli_support import run_cli
from trajsearch.ingest.read import read_dump

PROBE = Path(__file__).parent / "fixtures" / "otel-genai" / ".real" / "probeD43"
CREATE_AGENT = PROBE / "openlit-1.45-openai-agents-create-agent.console.json"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An embedded store under ``tmp_path/home`` for the CLI, with the hashing test embedder."""
    monkeypatch.setenv("TRAJSEARCH_MODEL", "hashing")
    for name in ("TRAJSEARCH_SERVER", "TRAJSEARCH_TENANT", "TRAJSEARCH_URI", "TRAJSEARCH_TRACES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TRAJSEARCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_openlit_create_agent_traces_are_passed_over_not_rejected(caplog: pytest.LogCaptureFixture) -> None:
    """D4 (OpenLIT 1.45 + openai-agents 0.24): OpenLIT writes a ``create_agent <name>`` span, a trace of its own,
    each time an ``Agent`` is built; each such trace was rejected ("not an agent run"), so every ingest of an agent
    app counted rejections. Building an agent is no run and nothing wrong: passed over, saying so at info level."""
    with caplog.at_level(logging.INFO):
        [run] = adapter_support.runs(CREATE_AGENT)
    assert run.trajectory_id == "otel:b68565471800a624014631e7746fcaf2" and run.outcome.value == "infra_error"
    passed = [r.getMessage() for r in caplog.records if r.getMessage().startswith("passed over trace")]
    assert [m.split(": ", 1)[1] for m in passed] == ["it only builds an agent (create_agent WeatherAgent), no run of it",
                                                      "it only builds an agent (create_agent Triage), no run of it"]


def test_ingesting_an_openlit_agent_app_export_exits_0(home: Path) -> None:
    """D4: the same file through the CLI: no rejection, so no exit status 3 and no dead-letter record."""
    code, out, err = run_cli("ingest", str(CREATE_AGENT), "-t", "d", "--json", "--quiet")
    assert code == 0, out + err
    report = json.loads(out)
    assert (report["read"], report["ingested"], report["rejected"]) == (1, 1, 0)


def test_the_js_sdks_console_exporter_output_is_named_with_how_to_export_json(home: Path) -> None:
    """D3 (``@opentelemetry/sdk-trace-base`` 2.12 ``ConsoleSpanExporter``): Node prints each span with
    ``console.dir``, JavaScript objects, not JSON (and cuts strings past 10,000 characters). The file was refused as
    "malformed JSON", which sends the user looking for corruption in an intact file; it is now named, with the
    exporters that write JSON."""
    path = PROBE / "js-sdk-2.12-console-exporter.txt"
    code, out, err = run_cli("ingest", str(path), "-t", "d", "--dry-run")
    assert code != 0 and "malformed JSON" not in err, out + err
    assert "OpenTelemetry JS SDK's console exporter output (ConsoleSpanExporter" in " ".join(err.split()), err
    assert "@opentelemetry/exporter-trace-otlp-http" in " ".join(err.split()), err
