"""Benchmark-harness outputs (tau-bench, tau2-bench, Harbor's ATIF trials) on real files a probe found misread.

Each test reads a real file (or a trimmed excerpt of one) through the public reader; the sources are in the
``SOURCE.md`` beside each fixture.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

FIXTURES = Path(__file__).parent / "fixtures"
TAU = FIXTURES / "tau-bench/.real"


def test_tau_bench_crash_with_an_empty_message_is_an_infra_error_named_by_its_traceback() -> None:
    """Bug (real: arnursabet/tau-bench-a2a's human-user run, whose ``input()`` hit EOF): ``run.py`` writes
    ``"error": str(e)``, and ``str(EOFError())`` is ""; the run was rejected for a missing instruction."""
    run = only(TAU / "rule-based-rule-based-0.0_range_0--1_user-gpt-4o-human_1022210038.json")
    assert (run.outcome, run.reward, run.steps) == (Outcome.infra_error, None, [])
    assert run.failure.error == "run crashed: EOFError"
    assert "crashed" in run.task and run.task_id.endswith("-0")
