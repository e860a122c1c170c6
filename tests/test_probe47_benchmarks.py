"""Benchmark result files as their harnesses leave them after evaluation (probe 47, area B).

Each test reads a real file, or one built from a real file exactly as the harness's own script rewrites it (named
in the test and in the fixture folder's SOURCE.md), through the public reader.
"""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

OPENHANDS = Path(__file__).parent / "fixtures/openhands/.real"
#: A real OpenHands (V0) Multi-SWE-bench output line: the agent hit its iteration limit with a patch in hand.
MULTI_SWE_LINE = OPENHANDS / "multi_swe_bench/output.jsonl"


def _evaluated(tmp_path: Path, line: Path, **status: bool) -> Path:
    """``line`` after OpenHands' ``scripts/eval/update_output_with_eval.py`` (run by ``eval_infer.sh`` once the
    SWE-bench harness has judged the file): every line gets a top-level ``report``, the defaults of its
    ``instance_id_to_status`` with the harness's findings set, written back with ``json.dumps``."""
    data = json.loads(line.read_text().splitlines()[0])
    data["report"] = {"empty_generation": False, "resolved": False, "failed_apply_patch": False,
                      "error_eval": False, "test_timeout": False, **status}
    out = tmp_path / "output.jsonl"
    out.write_text(json.dumps(data) + "\n")
    return out


def test_openhands_output_line_judged_by_the_harness_report_update_output_with_eval_writes(tmp_path: Path) -> None:
    """Bug: the verdict OpenHands' evaluation writes into output.jsonl is a top-level ``report`` (both the
    SWE-bench and Multi-SWE-bench ``update_output_with_eval.py``); only ``test_result.report`` was read, so a
    resolved run that had hit its iteration limit was a failure, its error the limit."""
    run = only(_evaluated(tmp_path, MULTI_SWE_LINE, resolved=True))
    assert (run.outcome, run.failure) == (Outcome.success, None)


def test_openhands_output_line_not_resolved_says_why_from_the_report(tmp_path: Path) -> None:
    """The report's flags say why a run was not resolved (its patch failed to apply), not 'the tests failed'."""
    run = only(_evaluated(tmp_path, MULTI_SWE_LINE, failed_apply_patch=True, error_eval=True))
    assert run.outcome is Outcome.failure
    assert run.failure.error == "not resolved: the patch did not apply"
