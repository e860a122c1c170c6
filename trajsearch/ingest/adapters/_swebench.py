"""What SWE-bench's agents and harness write beside the runs: predictions and evaluation reports.

SWE-agent writes ``all_preds.jsonl`` and mini-swe-agent ``preds.json`` (``instance_id``,
``model_name_or_path``, ``model_patch``: the patch each run submitted) next to the ``.traj``
files, Multi-SWE-bench's are ``{"org", "repo", "number", "fix_patch"}`` per instance (its harness's
``patch_files``; OpenHands converts its ``output.jsonl`` into ``output_converted.jsonl`` beside it), SWE-bench
Pro's ``{"instance_id", "patch", "prefix"}`` (its harness's patch file; OpenHands/benchmarks writes
``output.swebenchpro.json``), and that harness writes ``eval_results.json``, ``{instance_id: passed}``, and each
instance's test results, ``<instance>/<prefix>_output.json`` (``{"tests": [{"name", "status"}]}``); the harness and ``sb-cli`` write reports (``resolved_ids``, an older harness's ``resolved``
list, one instance's ``{"patch_is_None": ..., "resolved": ...}``, or a summary listing
``{"instance_id", "resolved"}`` records; Multi-SWE-bench's harness one instance's
``logs/<org>/<repo>/evals/pr-<n>/report.json``, ``{"org", "repo", "number", "valid", ...}``);
SWE-smith's validation writes each instance's tests
(``{"FAIL_TO_PASS": [...], "PASS_TO_PASS": [...], "FAIL_TO_FAIL": [...], "PASS_TO_FAIL": [...]}``);
SWE-PolyBench's evaluation writes each instance's ``logs/<instance_id>_result.json`` (its verdict:
``resolved``, ``all_f2p_passed``, ``no_p2p_failed``, ...) and ``_metrics.json`` (how well the run found
the code to change: ``file_retrieval_metrics``).
Beside them may sit the task itself: a SWE-bench dataset row (``instance_id``, ``problem_statement``, the gold
``patch`` and ``test_patch``, ``FAIL_TO_PASS``/``PASS_TO_PASS``; SWE-bench-Live's adds its build and test
commands), saved per instance as ``instance_data.json`` or as the dataset's JSONL.
GSO's harness (gso-bench, a benchmark of optimisation tasks built like SWE-bench's) writes a run report of
instance sets (``summary`` and ``instance_sets``: ``completed_ids``, ``opt_commit_ids``, ...).
None holds a run, so a directory walk passes them over; a report is what ``--outcomes`` reads.
"""

from __future__ import annotations

from typing import Any

from ..outcomes import gso_sets, is_swebench_report

_PREDICTION_KEYS = {"instance_id", "model_patch"}
#: Multi-SWE-bench's prediction of one instance (a pull request of a repository: ``org/repo`` ``number``); its
#: dataset rows hold the same fields beside the issue and the tests (``test_patch``), which a prediction does not.
_MSWE_PREDICTION_KEYS = {"org", "repo", "number", "fix_patch"}
#: SWE-bench Pro's prediction of one instance (``swe_bench_pro_eval.py``'s patch file); its dataset rows hold a
#: ``patch`` too (the gold one), beside the issue (``problem_statement``), which a prediction does not.
_PRO_PREDICTION_KEYS = {"instance_id", "patch", "prefix"}
#: A SWE-smith validation report's lists: how each test fared once the instance's fix was applied.
_VALIDATION_KEYS = {"FAIL_TO_PASS", "PASS_TO_PASS", "FAIL_TO_FAIL", "PASS_TO_FAIL"}
#: What SWE-PolyBench's evaluation writes of one instance: its verdict, and its retrieval metrics.
_POLYBENCH_RESULT_KEYS = {"instance_id", "resolved", "all_f2p_passed", "no_p2p_failed"}
_POLYBENCH_METRICS_KEYS = {"instance_id", "file_retrieval_metrics"}
#: A SWE-bench task instance (a dataset row): the issue, and the gold patch with its tests.
_TASK_INSTANCE_KEYS = {"instance_id", "problem_statement", "patch", "test_patch"}


def _prediction(value: Any) -> bool:
    return isinstance(value, dict) and (_PREDICTION_KEYS <= value.keys() or _MSWE_PREDICTION_KEYS <= value.keys()
                                        and "test_patch" not in value
                                        or _PRO_PREDICTION_KEYS <= value.keys() and "problem_statement" not in value)


def _test_results(record: dict[str, Any]) -> bool:
    """SWE-bench Pro's test results of one instance (its ``parser.py``'s ``output.json``): ``{"tests": [...]}``, each
    test a ``{"name", "status"}``."""
    tests = record.get("tests")
    return record.keys() == {"tests"} and isinstance(tests, list) and all(
        isinstance(t, dict) and {"name", "status"} <= t.keys() for t in tests)


def _passed_by_instance(record: dict[str, Any]) -> bool:
    """SWE-bench Pro's ``eval_results.json``: every value a bool, every key a SWE-bench-style instance id."""
    return all(isinstance(v, bool) for v in record.values()) and all("__" in k for k in record)


def _task_instance(record: dict[str, Any]) -> bool:
    """Whether ``record`` is a SWE-bench task instance: its fields, and nothing a run is made of (a list of
    steps, messages or events: objects), as a trajectory dataset's rows carry beside the same fields."""
    runs_in_it = any(isinstance(v, list) and any(isinstance(item, dict) for item in v) for v in record.values())
    return _TASK_INSTANCE_KEYS <= record.keys() and not runs_in_it


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): what this file is, when it is one of these."""
    if not isinstance(record, dict) or not record:
        return None
    values = list(record.values())
    if _prediction(record) or all(_prediction(v) for v in values):
        return ("SWE-bench predictions (the patch each run submitted), not runs: the runs are the trajectory "
                "files beside it")
    if _passed_by_instance(record):
        return ("an evaluation's verdicts by instance (SWE-bench Pro's eval_results.json), not runs: pass it with "
                "--outcomes to join them")
    if _test_results(record):
        return "an instance's test results (SWE-bench Pro's <instance>/<prefix>_output.json), not a run"
    if gso_sets(record) is not None:
        return "a GSO (gso-bench) evaluation report, not a run: pass it with --outcomes to join its verdicts"
    if is_swebench_report(record):
        return "a SWE-bench evaluation report, not a run: pass it (or its folder) with --outcomes to join its verdicts"
    if "FAIL_TO_PASS" in record and record.keys() <= _VALIDATION_KEYS and all(isinstance(v, list) for v in values):
        return "a SWE-smith validation report (the tests an instance's fix makes pass and keeps passing), not a run"
    if _task_instance(record):
        return ("a SWE-bench task instance (a dataset row: the issue, the gold patch and its tests), not a run: "
                "the runs of it are the trajectory files beside it")
    if _POLYBENCH_RESULT_KEYS <= record.keys():
        return ("a SWE-PolyBench evaluation result (one instance's verdict), not a run: pass its folder with "
                "--outcomes to join its verdicts")
    if _POLYBENCH_METRICS_KEYS <= record.keys():
        return "SWE-PolyBench retrieval metrics (how well a run found the code to change), not a run nor a verdict"
    return None
