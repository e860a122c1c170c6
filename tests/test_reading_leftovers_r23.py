"""Round 23's reading leftovers (FM7): real files other readers mis-read or refused without saying why."""
from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"


def test_tau_bench_few_shot_examples_are_refused_as_such() -> None:
    """tau-bench's ``few_shot_data/MockAirlineDomainEnv-few_shot.jsonl`` (real, cut to 2 lines) was refused as an
    "unrecognised dump format": it is prompt material, whose tool calls show as ``assistant: None`` (no tool name,
    no arguments) and which keeps no task id or reward; the refusal says so and where tau-bench's runs are."""
    [parsed] = read_inputs([FIXTURES / "tau-bench/.real/MockAirlineDomainEnv-few_shot.jsonl"])
    assert parsed.trajectory is None
    assert "no run in this file: tau-bench's few-shot examples" in parsed.error
    assert "'assistant: None'" in parsed.error and "results/*.json" in parsed.error
