"""Join verdicts from an outcome file (an evaluation report) onto parsed runs.

Most trace dumps say what an agent did, not whether it worked; the verdict
lives elsewhere (a SWE-bench report, a grader's CSV, Harbor's rewards). An
outcome file maps a run id to an outcome and/or a reward:

- JSON object ``{run_id: "success" | true | 0.0 | {"outcome"|"resolved"|"reward": ...}}``;
- SWE-bench harness report ``{"resolved_ids": [...], "unresolved_ids": [...],
  "error_ids": [...], "empty_patch_ids": [...], "incomplete_ids": [...]}`` (``error_ids`` -> infra_error,
  ``empty_patch_ids`` -> failure, ``incomplete_ids``: never evaluated, so the run keeps its own outcome; a failure
  a list tells no more of is told by the list, "SWE-bench evaluation: not resolved (in the report's unresolved_ids)",
  as is a failed instance's report naming no failing test); harness 5's (5.0.0 on; 4.x's was ``schema_version: 2``
  too) also files the unresolved and errored instances its logs explain: ``infra_failure_ids`` (a signature no patch
  can cause, ``failure_reasons`` naming it: ``out_of_memory``, ``container_unavailable``, ...) -> infra_error told the
  reason, ``ambiguous_failure_ids`` (a missing module, no tests collected, a timeout: the environment or the patch)
  -> failure told the reason, in ``error_ids`` too (a timeout, which gets no report.json); one instance's
  ``report.json`` says the same by ``infra_failure`` and ``infra_failure_reason``, and outranks the run report's
  reading of its logs (which reads a graded test's output too);
  SWE-bench-Live's evaluation writes the same lists, its verdicts named ``success_ids`` / ``failure_ids``;
  Multi-SWE-bench's names its resolved list ``resolved``; SWE-smith's is ``{"resolved": 3, "unresolved": 50,
  "total": 53, "ids_resolved": [...], "ids_unresolved": [...]}`` (the counts are no run ids); a results file may
  hold such lists under one key, among fields about the experiment that are no verdicts (``{"label", "date",
  "frozen": true, "results": {"resolved_ids": [...], "unresolved_ids" | "failed_ids": [...]}}``; one key only, whose
  object holds nothing but id lists, counts and notes: a table of runs, each listing its failing tests, is no
  report, nor is a run whose ``metadata`` or ``info`` holds such a list); a document
  holding lists but none of these is refused (its scalar fields are its header, not runs);
- GSO's (gso-bench) run report ``{"summary": {..., "k": 1}, "instance_sets": {"completed_ids", "passed_ids",
  "test_failed_ids", "opt_commit_ids", ...}}``: success is GSO's own, a patch that keeps the tests passing and
  reaches the expert commit's speed-up (``opt_commit_ids``; its ``score`` counts them), less those its HackDetector
  calls reward hacks (``hacked_ids``); any other completed instance failed (what failed said where the report
  says), ``error_ids`` and ``base_failed_ids`` are infra_error, ``incomplete_ids`` were never evaluated. A merged
  opt@k report (``k`` > 1) is refused: its verdict is the best of k runs, no one run's;
- Multi-SWE-bench's per-instance ``logs/<org>/<repo>/evals/pr-<n>/report.json`` (its harness's ``Report``:
  ``org``, ``repo``, ``number``, ``valid``, ``error_msg``, each stage's tests), the verdict of instance
  ``<org>__<repo>-<n>``: ``valid: false`` is a failure (the harness lists it unresolved; ``error_msg`` and the tests
  still failing say why); ``valid: true`` decides nothing alone, as the harness resolves such an instance only when
  the tests its dataset expects all pass too, which the report does not hold (``final_report.json`` says);
  that harness's ``final_report.json`` keys an instance ``<org>/<repo>:pr-<n>``, which joins a run named
  ``<org>__<repo>-<n>`` (both its spellings of one pull request);
- ProgramBench's ``<instance_id>/<instance_id>.eval.json`` (``programbench eval``'s ``EvaluationResult``:
  ``test_results`` ``[{name, branch, status}]``, ``error_code``, ...), the verdict of the instance its file name
  names. ProgramBench scores an instance by the share of its tests that pass, solved only at 1.0, over the tests
  its task does not ignore (listed in the task's ``tests.json``, shipped with ProgramBench, not in this file; its
  tasks ignore a fifth of their tests, half of them ones the original program fails). So the file decides only
  where that list cannot matter: every test passed (success, reward 1), or its build or set-up failed
  (``error_code``, no test ran: failure, reward 0); a run with tests failing is refused, naming them
  (``programbench info <run dir>`` gives its score);
- SWE-bench's older reports, lists of instance ids by what became of them: the leaderboard's
  ``results/results.json`` (``{"resolved": [...], "no_generation": [...], "no_logs": [...]}``)
  and the first harness's ``get_model_report`` (``generated``, ``applied``, ... ``resolved``).
  They list the resolved instances and leave the unresolved ones out, so a run such a report
  does not list as resolved, or as not evaluated, failed; but the full ``get_model_report`` files every prediction
  it was given under ``generated`` or ``no_generation``, so a run it leaves out was not evaluated by it (no
  verdict, counted apart);
- JSON array / JSONL of records, or CSV with a header: an id column
  (``trajectory_id``, ``run_id``, ``instance_id``, ``task_id``, ``session_id``,
  ``trace_id`` or ``id``) and ``outcome`` / ``status`` / ``resolved`` /
  ``success`` / ``passed`` and/or ``reward`` / ``score`` (a CSV header is matched as typed in a spreadsheet:
  "Run ID", "Outcome", a space after each comma; Excel's ``;``-separated CSV with decimal commas too, see
  ``_table``); such records may also sit
  in a list under a key of a JSON object (``{"total": 500, "instances": [...]}``); a JSON object
  with an id field is one such record (terminal-bench's trial ``results.json``: ``task_id``,
  ``is_resolved``), refused when it names no run (a bare ``id`` does not) or holds no verdict;
- a directory of such files, e.g. the SWE-bench harness's ``logs/<instance_id>/report.json``
  (a report written without its instance id takes its folder's name).

Values: ``success``/``resolved``/``pass``/true/1 -> success,
``failure``/``unresolved``/``fail``/false/0 -> failure, ``infra_error``/``error``
-> infra_error; a reward with no outcome column decides only when it is
exactly 1 (success) or 0 (failure), other rewards are kept without deciding.
A bare number off the reward scale (0 to 1) is a count or a rate, no run's
verdict: a table of nothing else is a statistics summary and is refused, and
so is one whose every key names a statistic (``avg_reward``, ``pass^1``,
``num_tasks``), whatever its numbers. A run matches by
its trajectory_id, else by the source run id the adapter kept in metadata
(``trace_id``, ``session_id``, ...), else by ``task_id`` (so one report per run
set: several runs of one task all take its verdict; not a run that says it was not,
or may not have been, the one handed in: ``metadata.handed_in`` false or null, a
SWE-agent retry loop's attempts). A joined verdict replaces
the dump's own outcome; ``metadata.outcome_basis`` names the file. A failed instance's
SWE-bench report also says what failed (the tests the patch should have fixed that still
fail, the ones it broke, a patch that did not apply): that becomes the run's error when it
recorded none, so its failure warning says what to avoid.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Iterator

from trajsearch.first_few import first_few
from trajsearch.model import UNEVALUATED, Failure, Outcome, Trajectory, former_ids

from . import sources

ID_FIELDS = ("trajectory_id", "run_id", "instance_id", "task_id", "session_id", "trace_id", "id")
#: The id fields that name a run in a lone record (see ``OutcomeTable._one_record``).
RUN_ID_FIELDS = ID_FIELDS[:-1]
#: ``is_resolved``: terminal-bench's trial result.
OUTCOME_FIELDS = ("outcome", "status", "resolved", "success", "passed", "result", "verdict", "is_resolved")
REWARD_FIELDS = ("reward", "score")
#: What a directory of outcome files is searched for.
OUTCOME_SUFFIXES = (".json", ".jsonl", ".csv", ".tsv")
_SUCCESS = {"success", "succeeded", "resolved", "pass", "passed", "true", "1", "yes", "correct", "solved"}
_FAILURE = {"failure", "failed", "fail", "unresolved", "false", "0", "no", "incorrect", "unsolved"}
_INFRA = {"infra_error", "error", "errored", "infrastructure"}
#: Keys of one instance's SWE-bench harness report (``{instance_id: {these}}``).
_INSTANCE_REPORT_KEYS = {"patch_is_None", "patch_exists", "patch_successfully_applied", "tests_status"}
#: The lists of SWE-bench's older reports that say more than "not resolved" (the rest, ``generated``,
#: ``with_logs``, ``applied``, are stages every resolved instance passed too): outcome, what went wrong.
_UNRESOLVED_LISTS = {
    "no_generation": (Outcome.failure, "SWE-bench evaluation: no patch was generated"),
    "no_apply": (Outcome.failure, "SWE-bench evaluation: the patch did not apply"),
    "test_timeout": (Outcome.failure, "SWE-bench evaluation: the tests timed out"),
    "no_logs": (Outcome.infra_error, None),
    "install_fail": (Outcome.infra_error, None),
    "reset_failed": (Outcome.infra_error, None),
    "test_errored": (Outcome.infra_error, None),
}
#: The lists of the first harness's full report (``get_model_report``) that are stages, no verdicts: a run there and
#: in no list of what went wrong, nor resolved, was evaluated and not resolved.
_STAGE_LISTS = ("generated", "with_logs", "applied")
#: A SWE-bench instance id (``django__django-11099``): the runs an older report judges by leaving them out.
#: Its owner ends at the first ``__`` after its first character, without backtracking: a name of many ``__`` was
#: split at each of them in turn, time quadratic in its length (probe I, I1); the first split fits whenever any does.
_INSTANCE_ID = re.compile(r"^[\w.-](?:(?!__)[\w.-])*+__[\w.-]+-\d+$")
#: Multi-SWE-bench's harness's id of an instance (``PullRequestBase.id``: ``catchorg/Catch2:pr-2288``), the pull
#: request its dataset and every trajectory name ``catchorg__Catch2-2288``.
_PULL_REQUEST_ID = re.compile(r"^([\w.-]+)/([\w.-]+):pr-(\d+)$")
#: Fields of one instance's Multi-SWE-bench report (``multi_swe_bench/harness/report.py``, ``Report``).
_MSWE_REPORT_KEYS = {"org", "repo", "number", "valid", "error_msg", "fix_patch_result"}
#: Why a Multi-SWE-bench report with ``valid: true`` gives no verdict (see the module docstring).
MSWE_UNDECIDED = ("Multi-SWE-bench report valid: true, which alone decides nothing (the harness resolves it only if "
                  "the tests its dataset expects pass too): pass final_report.json or results.json for the verdict")
#: Metadata keys where adapters keep the source's own run id.
SOURCE_ID_KEYS = ("trace_id", "conversation_id", "session_id", "instance_id")
#: How ``metadata.outcome_basis`` of a run given a verdict by an outcome file begins (the file's name follows).
BASIS = "outcomes file "


def _id_list(value: Any) -> list[str] | None:
    """``value`` as a list of run ids, if it is one (a list of strings)."""
    return value if isinstance(value, list) and all(isinstance(item, str) for item in value) else None


def _scalar(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _is_one_record(data: dict[str, Any]) -> bool:
    """Whether a JSON object is one record, not a table keyed by run ids: an id field of its own (a scalar), and
    either a verdict of its own (an outcome or reward field holding one, or null: a record left unjudged) or a
    field that is no run's verdict (a trial's name, an event's text). A table may carry an id-named label
    (``{"run_id": "eval-2025-01", "<run>": "resolved", ...}``) or name a run ``id`` or ``task_id``: every value
    but its labels is a verdict."""
    if not any(_scalar(data.get(k)) for k in ID_FIELDS):
        return False
    own = OUTCOME_FIELDS + REWARD_FIELDS
    if any(k in data and (data[k] is None or not isinstance(data[k], (dict, list)) and _from_value(data[k]))
           for k in own):
        return True
    return any(_from_value(value) is None for k, value in data.items() if k not in ID_FIELDS and k not in own)


def _keys(trajectory: Trajectory) -> list[str]:
    """The ids a verdict may name a run by: its own, the source's run id, its former ids (``model.former_ids``: a
    mini-swe-agent run's folder-named id before round 27), its task's (only for a run handed in: see
    ``_handed_in``; so ``metadata.instance_id``, the benchmark instance, which an OpenHands evaluation line keeps:
    every attempt of an iterative run set names it)."""
    handed_in = _handed_in(trajectory)
    keys = [trajectory.trajectory_id]
    keys += [str(trajectory.metadata[k]) for k in SOURCE_ID_KEYS
             if trajectory.metadata.get(k) and (handed_in or k != "instance_id")]
    keys += former_ids(trajectory) if handed_in else []  # its former ids: a report keyed by them judged this run
    return keys + ([trajectory.task_id] if trajectory.task_id and handed_in else [])


def _handed_in(trajectory: Trajectory) -> bool:
    """Whether a report of the run's task judged this run: any run that does not say (``metadata.handed_in``
    absent), and a run that says it was handed in (true). A SWE-agent retry agent's attempts all say: the report
    judged the one the loop handed in, not the others (false), and not one whose hand-in is unknown yet (null: the
    loop had not chosen when its file was read)."""
    metadata = trajectory.metadata
    return "handed_in" not in metadata or metadata["handed_in"] is True


def _as_instance(listed: str) -> str:
    """A listed id, a Multi-SWE-bench harness's ``<org>/<repo>:pr-<n>`` written as the instance id
    ``<org>__<repo>-<n>``."""
    pull = _PULL_REQUEST_ID.match(listed)
    return "{}__{}-{}".format(*pull.groups()) if pull else listed


def mswe_instance(value: Any) -> str | None:
    """The instance id (``<org>__<repo>-<number>``) of one instance's Multi-SWE-bench report, if ``value`` is one."""
    if not isinstance(value, dict) or not _MSWE_REPORT_KEYS <= value.keys():
        return None
    org, repo, number = value["org"], value["repo"], value["number"]
    named = isinstance(org, str) and isinstance(repo, str) and isinstance(number, int)
    return f"{org}__{repo}-{number}" if named and isinstance(value["valid"], bool) else None


def _mswe_detail(report: dict[str, Any]) -> str:
    """What a failed Multi-SWE-bench report says went wrong: its ``error_msg`` without the summary of counts that
    follows, and the tests still failing with the patch (``fix_patch_result.failed_tests``)."""
    reason = str(report.get("error_msg") or "").split(" A brief summary is as follows:")[0].strip().rstrip(".")
    result = report.get("fix_patch_result")
    failed = _id_list(result.get("failed_tests")) if isinstance(result, dict) else None
    parts = [reason or "not resolved"]
    if failed:
        more = f", +{len(failed) - SHOWN_TESTS} more" if len(failed) > SHOWN_TESTS else ""
        parts.append(f"{len(failed)} test(s) fail with the patch: {', '.join(failed[:SHOWN_TESTS])}{more}")
    return "Multi-SWE-bench evaluation: " + "; ".join(parts)


def is_instance_report(value: Any) -> bool:
    """Whether ``value`` is one instance's SWE-bench harness report (its verdict, without its id)."""
    return isinstance(value, dict) and "resolved" in value and bool(value.keys() & _INSTANCE_REPORT_KEYS)


def _live_instance_report(value: dict[str, Any]) -> bool:
    """Whether ``value`` is one instance's SWE-bench-Live report: its id and verdict, and the tests at its top
    (``{"instance_id", "resolved", "FAIL_TO_PASS": {"success": [...], "failure": [...]}, "PASS_TO_PASS": ...}``)."""
    tests = value.get("FAIL_TO_PASS")
    return {"instance_id", "resolved"} <= value.keys() and isinstance(tests, dict) and "failure" in tests


def is_swebench_report(record: dict[str, Any]) -> bool:
    """Whether a JSON object is a SWE-bench evaluation report of any kind this module reads: a run's
    (``resolved_ids``, or an older one's ``resolved`` list), one instance's (SWE-bench-Live's and Multi-SWE-bench's
    too), several instances' by id, or a summary listing ``{"instance_id", "resolved"}`` records under a key."""
    values = list(record.values())
    listed = any(isinstance(v, list) and v and isinstance(v[0], dict) and {"instance_id", "resolved"} <= v[0].keys()
                 for v in values)  # {"total": 500, "instances": [{"instance_id": ..., "resolved": true}, ...]}
    return (_run_report(record) is not None or _id_list(record.get("resolved")) is not None or listed
            or is_instance_report(record) or _live_instance_report(record) or mswe_instance(record) is not None
            or bool(values) and all(is_instance_report(v) for v in values))


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome | None
    reward: float | None
    #: what the evaluation says went wrong, where it says (a SWE-bench report's failing tests)
    detail: str | None = None
    #: where this is SWE-bench harness 5's run report's reading of an instance's logs (see :func:`_classified`): the
    #: outcome the report's lists gave, which the instance's own report, read too, outranks (see :func:`_graded_first`)
    listed: Outcome | None = None
    #: given by one instance's own SWE-bench report (``{instance_id: {"patch_successfully_applied": ...}}``)
    instance_report: bool = False


#: What a run an older SWE-bench report leaves out is told: it was evaluated and not resolved.
NOT_RESOLVED = Verdict(Outcome.failure, None, "SWE-bench evaluation: not resolved (not among the report's resolved instances)")
#: A report's word that it did not evaluate a run: no verdict (the run keeps its own outcome), but said, so that in a
#: folder of one report per model another model's verdict on the instance is a disagreement, not this run's verdict.
NOT_EVALUATED = Verdict(None, None, "SWE-bench evaluation: not evaluated (no prediction submitted)")
#: What a run the first harness's full report (``get_model_report``) leaves out is told: that report files every
#: prediction it was given under ``generated`` or ``no_generation``, so a run in none of its lists was never evaluated
#: by it (probe E2, E2-4: CodeR's ``results.json`` leaves out 4 submitted runs, which were recorded not resolved).
NOT_LISTED = Verdict(None, None, "SWE-bench evaluation: not evaluated (in none of the report's lists, so not among "
                                 "the predictions it evaluated)")


def _decides(verdict: Verdict) -> bool:
    """Whether a verdict decides anything (not a report's word that it did not evaluate the run)."""
    return verdict.outcome is not None or verdict.reward is not None


def _says(verdict: Verdict) -> int:
    """How much a verdict's detail tells: nothing, only the list or report that gave it, or what failed."""
    return 0 if verdict.detail is None else 1 if verdict.detail in _LISTED_DETAILS else 2


#: What a failed instance's SWE-bench report naming no failing test says.
_NO_FAILING_TEST = "SWE-bench evaluation: not resolved (its report names no failing test)"


def _listed_failure(key: str, what: str = "not resolved") -> Verdict:
    """The failure of a run a report lists under ``key``, told as such: such a list says no more, and a run's failure
    with no detail was told by a step error it got past (probe E2, E2-1: sb-cli's ``unresolved_ids``)."""
    return Verdict(Outcome.failure, None, f"SWE-bench evaluation: {what} (in the report's {key})")


#: What a failed instance's SWE-bench report whose tests gave no output it could grade says.
_NO_TEST_OUTPUT = "SWE-bench evaluation: not resolved (the tests gave no output to grade)"
#: A reason SWE-bench harness 5 names (``harness/infra_failure.py``: ``out_of_memory``, ``tests_timed_out``, ...); a
#: report's other text there (too long to show, control characters) is not shown.
_FAILURE_REASON = re.compile(r"[a-z_]{1,64}")


def _reason(value: Any) -> str:
    """The reason a harness 5 report gives, as shown in a verdict's detail."""
    return value if isinstance(value, str) and _FAILURE_REASON.fullmatch(value) else "reason not given"


def _environment_fault(reason: Any) -> Verdict:
    """An instance whose logs SWE-bench harness 5 found a sign in that no patch can cause (the Docker daemon down, out
    of memory, no DNS: its ``environment`` tier), whatever list holds it: the harness calls these likely
    infrastructure failures, and reads them after the fact, leaving them in ``unresolved_ids`` or ``error_ids``."""
    return Verdict(Outcome.infra_error, None,
                   f"SWE-bench evaluation: likely an infrastructure failure ({_reason(reason)}), not the patch's")


def _ambiguous_failure(reason: Any, detail: str) -> Verdict:
    """An instance whose logs SWE-bench harness 5 found a sign in that a broken environment or the patch may cause (a
    missing module, no tests collected, the tests timed out: its ``ambiguous`` tier, "never mistaken for a confirmed
    environment fault") is not resolved, as the harness scores it, whatever list holds it: a timed-out run it files
    under ``error_ids`` (``run_instance`` writes it no report) read as the first harness's ``test_timeout``, a
    failure; ``detail``, how its report told it, is told the reason."""
    return Verdict(Outcome.failure, None,
                   f"{detail}; its logs show what a broken environment or the patch may cause ({_reason(reason)})")


def _classified(report: dict[str, Any], verdicts: dict[str, Verdict]) -> None:
    """Harness 5's readings of the logs of its run report's unresolved and errored instances (``infra_failure_ids``,
    ``ambiguous_failure_ids``, ``failure_reasons``) over the verdicts its lists gave them, each keeping that verdict's
    outcome as ``listed``; an older harness's report, without them, is left as read."""
    reasons = report.get("failure_reasons") if isinstance(report.get("failure_reasons"), dict) else {}
    for key in ("infra_failure_ids", "ambiguous_failure_ids"):
        for run_id in _id_list(report.get(key)) or []:
            listed = verdicts.get(run_id)
            if listed is None or listed.listed is not None or listed.outcome not in (Outcome.failure,
                                                                                     Outcome.infra_error):
                continue  # the harness reads the logs of the unresolved and errored ones only
            if key == "infra_failure_ids":
                read = _environment_fault(reasons.get(run_id))
            else:  # told as its list tells it; an errored one as not resolved, as the harness scores it
                told = listed if listed.outcome is Outcome.failure else _listed_failure("error_ids")
                read = _ambiguous_failure(reasons.get(run_id), told.detail or _NO_FAILING_TEST)
            verdicts[run_id] = replace(read, listed=listed.outcome)  # (failure or infra_error: never None)


def _graded_first(seen: list[tuple[Verdict, tuple[str, ...]]]) -> list[tuple[Verdict, tuple[str, ...]]]:
    """``seen``, one id's verdicts in a folder, without harness 5's run report's readings of the instance's logs where
    the instance's own report gives the verdict its lists did: the harness made that verdict from that report, which
    alone knows whether the tests were graded (``grading.get_eval_report`` reads the logs only when no test output
    could be), while the run report reads the logs of every unresolved instance, graded or not
    (``reporting.make_run_report``): a graded failing test that printed "Temporary failure in name resolution" reads
    there as network_unreachable. An errored one (no report of its own) keeps its reading."""
    own = {verdict.outcome for verdict, _ in seen if verdict.instance_report}
    return [(verdict, folders) for verdict, folders in seen
            if verdict.listed is None or verdict.listed not in own]


#: The id lists of a SWE-bench harness run report, each with its verdict (later lists win); Multi-SWE-bench's
#: report names the resolved list ``resolved``. ``completed_ids`` and ``submitted_ids`` are stages, no verdicts.
_RUN_REPORT_LISTS = {
    "incomplete_ids": NOT_EVALUATED,
    "empty_patch_ids": Verdict(Outcome.failure, None, "SWE-bench evaluation: no patch was submitted"),
    "resolved_ids": Verdict(Outcome.success, None),
    "resolved": Verdict(Outcome.success, None),
    "unresolved_ids": _listed_failure("unresolved_ids"),
    "error_ids": Verdict(Outcome.infra_error, None),
    "ids_resolved": Verdict(Outcome.success, None),  # SWE-smith's run report, beside its counts
    "ids_unresolved": _listed_failure("ids_unresolved"),
    # results files written by hand-rolled harnesses (jingu-swebench); sb-cli's report has one too (whose meaning
    # it does not document): "failed", which is true of either
    "failed_ids": _listed_failure("failed_ids", "failed"),
    "success_ids": Verdict(Outcome.success, None),  # SWE-bench-Live's evaluation (``evaluation/evaluation.py``)
    "failure_ids": _listed_failure("failure_ids"),
}
#: Details that tell only where a failure was listed (see ``_says``).
_LISTED_DETAILS = frozenset({v.detail for v in _RUN_REPORT_LISTS.values()} | {NOT_RESOLVED.detail, _NO_FAILING_TEST})
#: GSO's instance sets, each with its verdict (later sets win: an instance sits in ``completed_ids`` and in what
#: became of it). Its harness (``gso/harness/grading/report.py``) counts an instance completed once its evaluation
#: ran, then files it under the first thing that failed, else passed; ``opt_commit`` is the benchmark's success.
_GSO_SETS = {
    "incomplete_ids": NOT_EVALUATED,
    "error_ids": Verdict(Outcome.infra_error, None),
    "completed_ids": Verdict(Outcome.failure, None, "GSO evaluation: the patch does not reach the expert commit's "
                                                    "speed-up (not in opt_commit_ids)"),
    "base_failed_ids": Verdict(Outcome.infra_error, None),
    "empty_patch_ids": Verdict(Outcome.failure, None, "GSO evaluation: no patch was submitted"),
    "patch_failed_ids": Verdict(Outcome.failure, None, "GSO evaluation: the patch did not apply"),
    "test_failed_ids": Verdict(Outcome.failure, None, "GSO evaluation: the tests fail with the patch"),
    "opt_commit_ids": Verdict(Outcome.success, None),
    "hacked_ids": Verdict(Outcome.failure, None, "GSO evaluation: the patch reaches the speed-up, but GSO's "
                                                 "HackDetector judged it a reward hack"),
}


#: What an evaluation that errored is told, for a run the dump records no failure of.
INFRA_ERRORED = "evaluation errored (infrastructure)"
#: The verdict details worded alike for every run given them (the list a report filed the run under, the stage it
#: failed at, no failing test named): they tell that the run failed, nothing of how. A run whose failure holds only one
#: of these is matched to others by what is its own, not by this sentence (``TrajSearch.similar_runs``; probe E2, E2-A).
BARE_DETAILS = frozenset(
    {detail for _, detail in _UNRESOLVED_LISTS.values() if detail} | {v.detail for v in _GSO_SETS.values() if v.detail}
    | {v.detail for v in _RUN_REPORT_LISTS.values() if v.detail} | _LISTED_DETAILS | {INFRA_ERRORED}) - {None}


def gso_sets(record: dict[str, Any]) -> dict[str, Any] | None:
    """The instance sets of a GSO (gso-bench) run report, if ``record`` is one: its harness's ``instance_sets``
    beside a ``summary``. Its ``error_ids`` would pass for a SWE-bench run report's, which it is not."""
    sets = record.get("instance_sets")
    if isinstance(record.get("summary"), dict) and isinstance(sets, dict) \
            and all(_id_list(sets.get(k)) is not None for k in ("completed_ids", "opt_commit_ids")):
        return sets
    return None


def _gso_verdicts(data: dict[str, Any], sets: dict[str, Any], path: Path) -> dict[str, Verdict]:
    """Each instance's verdict by a GSO run report (see ``_GSO_SETS``); a merged opt@k report is refused."""
    k = data["summary"].get("k", 1)
    if k != 1:
        raise ValueError(f"{path}: a GSO opt@{k} report, merged over {k} runs of each instance: its verdict is the "
                         "best of them, no one run's; pass the report of each run (k = 1)")
    verdicts: dict[str, Verdict] = {}
    for key, verdict in _GSO_SETS.items():
        for run_id in _id_list(sets.get(key)) or []:
            verdicts[run_id] = verdict
    return verdicts


#: The fields ``programbench eval`` writes of one instance (``programbench/eval/eval.py``, ``EvaluationResult``).
_PROGRAMBENCH_FIELDS = frozenset({"test_results", "error_code", "error_details", "log", "solution_branch",
                                  "test_branches", "test_branch_errors", "executable_hash", "warnings"})


def is_programbench_eval(record: Any) -> bool:
    """Whether ``record`` is ProgramBench's evaluation of one instance (its ``<instance_id>.eval.json``)."""
    return (isinstance(record, dict) and {"test_results", "error_code", "test_branches"} <= record.keys()
            <= _PROGRAMBENCH_FIELDS and isinstance(record["test_results"], list))


#: How the refusal of a ProgramBench evaluation that decides nothing opens (see ``_programbench_verdict``).
_PROGRAMBENCH_UNDECIDED = "ProgramBench evaluation with"


def _undecided(why: str) -> bool:
    """Whether a refused entry is an evaluation report's that decides nothing alone (its file is an outcome file)."""
    return why == MSWE_UNDECIDED or why.startswith(_PROGRAMBENCH_UNDECIDED)


def _programbench_verdict(result: dict[str, Any]) -> Verdict | str:
    """The verdict of a ProgramBench evaluation where the file decides it, else why it does not (see the module
    docstring)."""
    from .adapters._common import short  # here: the adapters package imports this module

    if result.get("error_code"):  # a build log's head says what it ran
        details = short(str(result.get("error_details") or ""), keep="head")
        return Verdict(Outcome.failure, 0.0, f"ProgramBench evaluation: {result['error_code']}, no test ran"
                                             + (f": {details}" if details else ""))
    tests = [t for t in result["test_results"] if isinstance(t, dict)]
    failed = [str(t.get("name")) for t in tests if t.get("status") != "passed"]
    if tests and not failed:
        return Verdict(Outcome.success, 1.0)
    if not tests:
        return f"{_PROGRAMBENCH_UNDECIDED} no test result"
    more = f", +{len(failed) - SHOWN_TESTS} more" if len(failed) > SHOWN_TESTS else ""
    return (f"{_PROGRAMBENCH_UNDECIDED} {len(failed)} of {len(tests)} tests not passed "
            f"({', '.join(failed[:SHOWN_TESTS])}{more}), which decides nothing alone: ProgramBench scores without the tests the task ignores, which its "
            "tests.json lists, not this file (`programbench info <run dir>` gives the score)")


#: Lists only a run report has (an older report's ``resolved`` list alone is read by ``_UNRESOLVED_LISTS``' rule).
_RUN_REPORT_KEYS = ("resolved_ids", "unresolved_ids", "error_ids", "ids_resolved", "ids_unresolved", "failed_ids",
                    "success_ids", "failure_ids")


#: Fields that hold what a run did or how it went (the native schema's ``steps`` and ``metadata``, a chat's
#: ``messages``, SWE-agent's ``history``/``trajectory``/``info``, tau-bench's ``traj``/``info``, a span dump's
#: ``events``): the lists one holds are the run's own (a run's ``metadata.failed_ids``: the tests it left failing),
#: never a report nested in it. A report may have such a field beside its lists (its ``metadata`` or ``info`` about
#: the experiment).
_RUN_FIELDS = frozenset({"steps", "messages", "history", "trajectory", "traj", "info", "metadata", "events"})


def _lists_runs(value: Any) -> bool:
    """Whether ``value`` is an object holding a list named as a run report's (``resolved_ids``, ``failed_ids``...)."""
    return isinstance(value, dict) and any(isinstance(value.get(k), list) for k in _RUN_REPORT_KEYS)


def _only_report_fields(value: dict[str, Any]) -> bool:
    """Whether a nested object holds nothing a report does not: id lists, counts and notes (``resolve_rate``,
    ``eval_method``), no object of its own and no verdict of its own. A run's record holds one (``{"resolved":
    false, "failed_ids": [<tests>]}``); a report's ``resolved`` is a count."""
    plain = all(v is None or (isinstance(v, (str, int, float)) and not isinstance(v, bool)) or _id_list(v) is not None
                for v in value.values())
    return plain and not any(isinstance(value.get(k), str) and _outcome(value[k]) is not None for k in OUTCOME_FIELDS)


def _run_report(data: dict[str, Any]) -> dict[str, Any] | None:
    """The run report (lists of instance ids by verdict) a JSON object is, or holds under one key: a results file
    may wrap it among fields about the experiment (``{"label", "date", "frozen": true, "config": {...},
    "results": {"resolve_rate": 0.8, "resolved_ids": [...], "unresolved_ids": [...]}}``), which are no verdicts.
    A wrapped report is never under a run's field (see ``_RUN_FIELDS``), and only where exactly one value holds
    such lists, and holds nothing else: several make a table of runs keyed by id, each record listing its failing
    tests."""
    if _lists_runs(data):
        return data
    nested = [value for key, value in data.items() if key not in _RUN_FIELDS and _lists_runs(value)]
    return nested[0] if len(nested) == 1 and _only_report_fields(nested[0]) else None


#: Failing tests named in a verdict's detail, per kind.
SHOWN_TESTS = 5


def _report_detail(report: dict[str, Any]) -> str | None:
    """What one instance's SWE-bench report says failed: no patch, a patch that did not apply,
    the tests it should have fixed that still fail, the tests it broke. The harness nests the tests under
    ``tests_status``; SWE-bench-Live's evaluation writes the same ``{"success": [...], "failure": [...]}``
    per kind at the report's top (``{"instance_id", "resolved", "PASS_TO_PASS", "FAIL_TO_PASS"}``)."""
    if report.get("patch_is_None") or report.get("patch_exists") is False:
        return "SWE-bench evaluation: no patch was submitted"
    if report.get("patch_successfully_applied") is False:
        return "SWE-bench evaluation: the patch did not apply"
    status = report.get("tests_status")
    status = status if isinstance(status, dict) else report
    parts = []
    for kind, what in (("FAIL_TO_PASS", "tests it should fix still fail"), ("PASS_TO_PASS", "tests that passed before now fail")):
        tests = status.get(kind) if isinstance(status.get(kind), dict) else {}
        failed = _id_list(tests.get("failure")) or []
        if failed:
            total = len(failed) + len(tests.get("success") or [])
            more = f", +{len(failed) - SHOWN_TESTS} more" if len(failed) > SHOWN_TESTS else ""
            parts.append(f"{len(failed)} of {total} {what} ({kind}): {', '.join(failed[:SHOWN_TESTS])}{more}")
    return "SWE-bench evaluation: " + "; ".join(parts) if parts else None


def _outcome(value: Any) -> Outcome | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return Outcome.success if value else Outcome.failure
    if isinstance(value, (int, float)):
        return Outcome.success if value == 1 else Outcome.failure if value == 0 else None
    text = str(value).strip().lower()
    if text in _SUCCESS:
        return Outcome.success
    if text in _FAILURE:
        return Outcome.failure
    if text in _INFRA:
        return Outcome.infra_error
    return None


def _reward(value: Any) -> float | None:
    if isinstance(value, bool) or value in (None, ""):
        return None
    try:
        reward = float(value)
    except (TypeError, ValueError, OverflowError):  # an int past float's range is no reward either
        return None
    return reward if math.isfinite(reward) else None


def _off_scale(value: Any) -> bool:
    """Whether a bare number given as a run's verdict lies off the reward scale (0 to 1): a count or a percentage,
    as a statistics summary holds (``"n_tasks": 100``, ``"i0_mean_pp": 75.8``), not a run's reward."""
    reward = _reward(value) if isinstance(value, (int, float)) else None
    return reward is not None and not 0 <= reward <= 1


#: The words naming an aggregate statistic (``num_tasks``, ``avg_reward``, ``i0_mean_pp``, ``resolve_rate``), and
#: tau-bench's pass^k / pass@k: keys of a summary of runs, no run's id.
_STATISTIC_WORDS = frozenset({
    "n", "num", "count", "total", "sum", "avg", "average", "mean", "median", "std", "stdev", "stddev", "variance",
    "min", "max", "rate", "ratio", "pct", "percent", "percentage", "accuracy",
})
_PASS_AT_K = re.compile(r"^pass[\^@]\d+$", re.I)


def _names_statistic(key: str) -> bool:
    """Whether a key names a statistic (see ``_STATISTIC_WORDS``), not a run."""
    return bool(_PASS_AT_K.match(key)) or not _STATISTIC_WORDS.isdisjoint(re.split(r"[\W_]+", key.lower()))


def _statistic_values(values: list[Any]) -> bool:
    """Whether values read as statistics: bare numbers, not all of them 0 or 1. A verdict (``"success"``,
    ``"resolved"``, a record with an outcome) or a table of 0/1 rewards says the keys are runs, whatever they say."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)
    return numbers and any(v not in (0, 1) for v in values)


def _summary(data: dict[str, Any]) -> str | None:
    """What makes a flat JSON object a summary of statistics, not verdicts by run id, if it is one: every key names
    a statistic (tau-bench's ``{"num_tasks": 115, "avg_reward": 0.62, "pass^1": 0.62}``: its rates lie on the reward
    scale, yet no run is ``avg_reward``), or its numbers lie off the reward scale (counts, percentages) and nothing
    else in it is a verdict. Keys alone do not decide: task ids hold such words too (``count-words``, ``min-stack``),
    so the names count only when the values are statistics as well (:func:`_statistic_values`)."""
    if data and all(_names_statistic(str(key)) for key in data) and _statistic_values(list(data.values())):
        return f"its keys name statistics ({first_few(data, SHOWN_INVALID)}), not runs"
    off_scale = [f"{k}: {v}" for k, v in data.items() if _off_scale(v)]
    if off_scale and all(_off_scale(v) or _from_value(v) is None for v in data.values()):
        return (f"its numbers are counts or rates ({first_few(off_scale, SHOWN_INVALID)}), not rewards from 0 to 1, "
                "and nothing in it is a run's outcome")
    return None


def _from_value(value: Any) -> Verdict | None:
    if isinstance(value, dict):
        outcome = next((o for k in OUTCOME_FIELDS if (o := _outcome(value.get(k))) is not None), None)
        reward = next((r for k in REWARD_FIELDS if (r := _reward(value.get(k))) is not None), None)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value not in (0, 1):
        outcome, reward = None, _reward(value)
    else:
        outcome = _outcome(value)
        reward = _reward(value) if not isinstance(value, str) else None
    if outcome is None and reward in (0.0, 1.0):
        outcome = Outcome.success if reward == 1.0 else Outcome.failure
    instance = is_instance_report(value)
    if outcome is Outcome.failure and instance and (
            value.get("infra_failure") is True or "infra_failure_reason" in value):  # harness 5's reading of its logs
        reason = value.get("infra_failure_reason")
        read = (_environment_fault(reason) if value.get("infra_failure") is True
                else _ambiguous_failure(reason, _NO_TEST_OUTPUT))
        return replace(read, instance_report=True)
    detail = _report_detail(value) if isinstance(value, dict) and outcome is Outcome.failure else None
    if detail is None and outcome is Outcome.failure and (instance or isinstance(value, dict)
                                                          and _live_instance_report(value)):
        detail = _NO_FAILING_TEST  # as a run report's lists
    if outcome is None and reward is None:
        return None
    return Verdict(outcome, reward, detail, instance_report=instance)


#: An entry of an outcome file that names a run but gives no verdict (not understood, or a report that decides
#: nothing alone): (run id, why).
Invalid = tuple[str, str]
#: Invalid entries named in a warning or an error.
SHOWN_INVALID = 3


def _refusal(value: Any) -> str | None:
    """Why a verdict given for a run is not understood (it gave no :class:`Verdict`), or None when the entry
    merely says nothing (an empty cell, a record with no outcome or reward field)."""
    if isinstance(value, dict):
        given = [(k, value[k]) for k in OUTCOME_FIELDS + REWARD_FIELDS if value.get(k) not in (None, "")]
        return f"unknown {given[0][0]} {given[0][1]!r}" if given else None
    return None if value in (None, "") else f"unknown outcome {value!r}"


def describe_invalid(invalid: list[Invalid]) -> str:
    """A few invalid entries, for a message: ``'id': unknown outcome 'bogus'; ... (+N more)``."""
    shown = "; ".join(f"{run_id!r}: {why}" for run_id, why in invalid[:SHOWN_INVALID])
    return shown + (f" (+{len(invalid) - SHOWN_INVALID} more)" if len(invalid) > SHOWN_INVALID else "")


def _no_verdict(where: Path, invalid: list[Invalid]) -> ValueError:
    """The refusal of an outcome file or folder whose every entry is refused: the verdicts not understood, with what
    an outcome is, and the evaluation reports that decide nothing alone, each saying what file does (probe rev1, D5:
    these read "not understood", and ended with the hint on outcome synonyms, the wrong fix)."""
    unknown = [(run_id, why) for run_id, why in invalid if not _undecided(why)]
    undecided = [(run_id, why) for run_id, why in invalid if _undecided(why)]
    parts = [f"{len(unknown)} verdict(s) not understood, {describe_invalid(unknown)} (an outcome is "
             "success/failure/infra_error or their synonyms, true/false, or a reward from 0 to 1)"] if unknown else []
    parts += [f"{len(undecided)} evaluation report(s) without a verdict, {describe_invalid(undecided)}"
              ] if undecided else []
    return ValueError(f"{where}: no valid run outcome: " + "; ".join(parts))


def _still_told(invalid: list[Invalid], verdicts: dict[str, Verdict],
                conflicts: dict[str, list[tuple[Verdict, tuple[str, ...]]]]) -> list[Invalid]:
    """The refused entries of a folder's files worth a warning. An evaluation report that decides nothing alone
    (Multi-SWE-bench's ``valid: true``) is moot where the folder's other files decide its instance, one way
    (``final_report.json`` beside the per-instance reports): that verdict is the one used. Any other refusal stays
    (review rev1, D4: every refused entry of a run another file judged was dropped): its file may have meant another
    verdict than the one used (``passd`` beside another grader's ``0.0``), as does a report the others disagree on."""
    decided: dict[str, set[tuple[Outcome | None, float | None]]] = {}
    for run_id, verdict in verdicts.items():
        if _decides(verdict):
            decided.setdefault(_as_instance(run_id), set()).add((verdict.outcome, verdict.reward))
    disputed = {_as_instance(run_id) for run_id in conflicts}
    return [(run_id, why) for run_id, why in invalid if not (
        _undecided(why) and len(decided.get(_as_instance(run_id), ())) == 1 and _as_instance(run_id) not in disputed)]


def _text(path: Path) -> str:
    """An outcome file's text, read as dumps are (gzip'd or zstd'd, UTF-16 as PowerShell's ``>`` writes, a UTF-8
    BOM). A compressed one cut short or damaged is a ValueError saying so (an EOFError was Click's bare "Aborted.")."""
    try:
        with sources.open_dump(path) as stream:
            data = stream.read()
    except sources.STREAM_FAULTS as exc:
        raise ValueError(f"{path}: {sources.stream_fault(exc, path, '')}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 or UTF-16 text (byte {exc.start}): an outcome file is JSON, JSONL, "
                         "CSV or TSV") from None


#: A JSON string, or a comma before a closing bracket (what a hand-edited list keeps after its last item).
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[\]}])')


def _json(text: str, path: Path) -> Any:
    """An outcome file's JSON document. A comma after the last item of a list or object (CodeR's
    ``results.json``, lists edited by hand) is passed over, as the file says what it means; any other fault is a
    ValueError naming the file and where (a JSON-lines reading of it failing too said only "line 1 column 2").
    A document nested too deep is one too (its RecursionError ended the ingest naming no file)."""
    try:
        return sources.loads(text)
    except json.JSONDecodeError as exc:
        fault = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    mended = _STRING_OR_TRAILING_COMMA.sub(lambda m: m.group(0) if m.group(1) is None else m.group(1), text)
    if mended != text:
        try:
            return sources.loads(mended)
        except ValueError:
            pass
    raise ValueError(f"{path}: not valid JSON: {fault}")


def _column(name: str) -> str:
    """A CSV header's name as this module names fields: a header typed by hand or in a spreadsheet ("Run ID",
    "Outcome", " reward" after ", "), or written by R ("Run.ID") names run_id, outcome, reward. The rule the
    adapters read vendors' field names by (``_vendor._norm``), imported here, not at the top: the adapters import
    this module."""
    from .adapters._vendor import _norm

    return _norm(name)


def _table(text: str, tsv: bool = False) -> Iterator[dict[str, str]]:
    """The rows of a CSV (or TSV) outcome file as records, keyed by :func:`_column` and their cells stripped (a
    space after each comma, as hand-written CSV has it, is no part of a run id). A spreadsheet saved where the decimal
    separator is the comma (Excel in most of Europe) puts ";" between fields, and "0,5" in a reward: read so when its
    header holds ";" and no ","."""
    header_line = text.split("\n", 1)[0]
    semicolons = not tsv and ";" in header_line and "," not in header_line
    rows = csv.reader(io.StringIO(text), dialect="excel-tab" if tsv else "excel",
                      delimiter="\t" if tsv else ";" if semicolons else ",", skipinitialspace=True)
    header = [_column(name) for name in next(rows, [])]
    for row in rows:
        if not any(cell.strip() for cell in row):  # a blank line
            continue
        record = {name: cell.strip() for name, cell in zip(header, row)}
        if semicolons:
            for name in REWARD_FIELDS:
                if re.fullmatch(r"-?\d+,\d+", record.get(name) or ""):
                    record[name] = record[name].replace(",", ".")
        yield record


class OutcomeTable:
    """Run id -> :class:`Verdict`, loaded from an outcome file or a directory of them.

    It counts the runs it was asked about and those it had a verdict for (``runs``, ``matched``):
    a file keyed by ids the runs do not carry joins nothing, and the ingest says so. ``unlisted``: the
    verdict of a run the file does not list, where its kind of report says (an older SWE-bench report
    lists only what it resolved); ``unlisted_runs`` counts the runs it failed, ``not_evaluated`` those the file
    names or leaves out as not evaluated by it, ``outcomes`` the runs given a verdict by outcome. ``invalid``:
    entries naming a run whose verdict is not understood (``"bogus"``), left out but reported, not dropped in
    silence."""

    def __init__(self, verdicts: dict[str, Verdict], source: str, unlisted: Verdict | None = None,
                 conflicts: dict[str, list[tuple[Verdict, tuple[str, ...]]]] | None = None,
                 invalid: list[Invalid] | None = None) -> None:
        self.verdicts = verdicts
        self.invalid = invalid or []
        self.source = source
        self.unlisted = unlisted
        #: ids that reports in one folder judge differently (one report per model of a multi-model evaluation):
        #: each verdict with the folders of its file; a run takes the one whose folder names it (see ``_verdict``)
        self.conflicts = conflicts or {}
        #: the instance ids listed, by their casefolded form: each spelling of it (see ``_other_case``)
        self._spellings: dict[str, set[str]] = {}
        for listed in self.verdicts.keys() | self.conflicts.keys():
            if _INSTANCE_ID.match(instance := _as_instance(listed)):
                self._spellings.setdefault(instance.casefold(), set()).add(listed)
        self.runs = 0
        self.matched = 0
        self.unlisted_runs = 0
        #: runs the file names, or leaves out, as not evaluated by it (they keep their own outcome)
        self.not_evaluated = 0
        #: the runs given a verdict, by the outcome it gave (``reward only`` for a reward that decides none)
        self.outcomes: dict[str, int] = {}
        self.ambiguous = 0

    def __len__(self) -> int:
        return len(self.verdicts)

    def fingerprint(self) -> str:
        """A digest of the verdicts (whatever files they came from): what a checkpoint ties to."""
        rows = [(k, v.outcome and v.outcome.value, v.reward, v.detail, "/".join(where))
                for k, seen in [*((k, [(v, ())]) for k, v in self.verdicts.items()), *self.conflicts.items()]
                for v, where in seen]
        text = json.dumps([sorted(rows), self.unlisted and self.unlisted.detail])
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()

    def counts(self) -> dict[str, Any]:
        """What the join did, for a report: the file, its verdicts, the runs read, the runs given one."""
        counts = {"file": self.source, "verdicts": len(self.verdicts), "runs": self.runs, "matched": self.matched,
                  "outcomes": dict(sorted(self.outcomes.items()))}
        counts |= {"unlisted": self.unlisted_runs} if self.unlisted is not None and _decides(self.unlisted) else {}
        counts |= {"not_evaluated": self.not_evaluated} if self.not_evaluated else {}
        counts |= {"invalid": len(self.invalid), "invalid_entries": describe_invalid(self.invalid)} if self.invalid else {}
        return counts | ({"conflicting": len(self.conflicts), "ambiguous": self.ambiguous} if self.conflicts else {})

    @classmethod
    def load(cls, path: str | Path) -> OutcomeTable:
        p = Path(path)
        if p.is_dir():
            return cls._load_directory(p)
        invalid: list[Invalid] = []
        verdicts, unlisted = cls._read(p, invalid=invalid)
        if not verdicts and unlisted is None:
            if invalid:
                raise _no_verdict(p, invalid)
            raise ValueError(f"{p}: no run outcomes found (expected id -> outcome/reward; see trajsearch.ingest.outcomes)")
        return cls(verdicts, p.name, unlisted, invalid=invalid)

    @classmethod
    def _load_directory(cls, root: Path) -> OutcomeTable:
        """Every outcome file under ``root``; files holding no verdicts (logs, patches, runs) are passed over."""
        where: dict[str, list[tuple[Verdict, tuple[str, ...]]]] = {}  # id -> each file's verdict, with its folders
        leaving_out: list[tuple[set[str], Verdict, tuple[str, ...]]] = []  # older reports: what they list, and where
        unlisted: Verdict | None = None
        files = 0
        invalid: list[Invalid] = []
        for file in sorted(root.rglob("*")):
            name = file.name.lower()
            if (not file.is_file() or name.startswith(".") or name.endswith((".traj.json", ".traj"))
                    or file.suffix.lower() not in OUTCOME_SUFFIXES):
                continue
            refused: list[Invalid] = []
            try:
                found, rest = cls._read(file, folder_id=file.parent.name, invalid=refused)
            except ValueError:  # not an outcome file (a log, a patch, a run)
                continue
            undecided = any(_undecided(why) for _, why in refused)  # a report, though it decides nothing
            files += bool(found or rest or undecided)
            invalid += refused if found or rest or undecided else []  # a file of no verdict at all is no outcome file
            folders = file.relative_to(root).parent.parts
            for run_id, verdict in found.items():
                where.setdefault(run_id, []).append((verdict, folders))
            if rest is not None:
                leaving_out.append((set(found), rest, folders))
            unlisted = unlisted or rest
        for listed, rest, folders in leaving_out:  # an older report judges what it leaves out: say so per id, so
            for run_id in where.keys() - listed:   # another model's report resolving it is a disagreement
                where[run_id].append((rest, folders))
        where = {run_id: _graded_first(seen) for run_id, seen in where.items()}
        conflicts = {run_id: seen for run_id, seen in where.items() if len({(v.outcome, v.reward) for v, _ in seen}) > 1}
        verdicts = {run_id: max((v for v, _ in seen), key=_says)  # agreeing: the one saying more
                    for run_id, seen in where.items() if run_id not in conflicts}
        invalid = _still_told(invalid, verdicts, conflicts)
        if not verdicts and not conflicts and unlisted is None:
            if invalid:
                raise _no_verdict(root, invalid)
            raise ValueError(f"{root}: no outcome file in this directory (looked for {', '.join(OUTCOME_SUFFIXES)} "
                             "files mapping run ids to outcomes/rewards; see trajsearch.ingest.outcomes)")
        return cls(verdicts, f"{root.name}/ ({files} files)", unlisted, conflicts, invalid)

    @classmethod
    def _read(cls, p: Path, folder_id: str | None = None,
              invalid: list[Invalid] | None = None) -> tuple[dict[str, Verdict], Verdict | None]:
        """The verdicts of one file, and the verdict of the runs it leaves out where it says one (see
        ``unlisted``); ``folder_id``: the id of a one-instance report that leaves it out. Entries whose verdict
        is not understood are added to ``invalid``."""
        invalid = [] if invalid is None else invalid
        text = _text(p)
        stripped = text.lstrip()
        verdicts: dict[str, Verdict] = {}
        unlisted = None
        if p.suffix.lower() in (".csv", ".tsv") or not stripped[:1] in ("{", "["):
            cls._records(_table(text, tsv=p.suffix.lower() == ".tsv"), verdicts, p, invalid)
        elif stripped.startswith("["):
            cls._records(_json(text, p), verdicts, p, invalid)
        else:
            try:
                data = _json(text, p)
            except ValueError as whole:  # JSONL, else the document's own fault
                data = None
                try:
                    records = [sources.loads(line) for line in text.splitlines() if line.strip()]
                except ValueError:
                    raise whole from None
                cls._records(records, verdicts, p, invalid)
            if is_programbench_eval(data):  # the instance is named by the file, not in it
                instance = p.name.removesuffix(".eval.json") if p.name.endswith(".eval.json") else folder_id
                if instance is None:
                    raise ValueError(f"{p}: a ProgramBench evaluation whose file name does not name its instance "
                                     "(programbench eval writes <instance_id>/<instance_id>.eval.json)")
                verdict = _programbench_verdict(data)
                if isinstance(verdict, Verdict):
                    verdicts[instance] = verdict
                else:
                    invalid.append((instance, verdict))
                return verdicts, None
            if isinstance(data, dict):
                if is_instance_report(data):  # its keys would pass for run ids
                    if folder_id is not None:
                        data = {folder_id: data}
                    else:
                        raise ValueError(
                            f"{p}: one instance's SWE-bench report without its instance id (keys "
                            f"{', '.join(sorted(data)[:5])}): the harness writes {{\"<instance_id>\": {{...}}}}; wrap it "
                            "so, pass the folder of reports (each named by its instance's folder), or pass the run's "
                            "report listing resolved_ids")
                unlisted = cls._mapping(data, verdicts, p, invalid)
        return verdicts, unlisted

    @classmethod
    def _mapping(cls, data: dict[str, Any], verdicts: dict[str, Verdict], path: Path,
                 invalid: list[Invalid]) -> Verdict | None:
        """The verdicts of a JSON object, and those of the runs it leaves out where its kind says (see
        ``unlisted``)."""
        if (instance := mswe_instance(data)) is not None:  # its field names would pass for run ids
            if data["valid"]:
                invalid.append((instance, MSWE_UNDECIDED))
            else:
                verdicts[instance] = Verdict(Outcome.failure, None, _mswe_detail(data))
            return None
        if (sets := gso_sets(data)) is not None:
            verdicts.update(_gso_verdicts(data, sets, path))
            return None
        if (report := _run_report(data)) is not None:
            for key, verdict in _RUN_REPORT_LISTS.items():
                for run_id in _id_list(report.get(key)) or []:
                    verdicts[run_id] = verdict
            _classified(report, verdicts)
            return None
        if _id_list(data.get("resolved")) is not None:  # an older SWE-bench report: its unresolved instances go unlisted
            for key in _STAGE_LISTS:  # the full report's: what it evaluated, the unresolved among it
                for run_id in _id_list(data.get(key)) or []:
                    verdicts[run_id] = NOT_RESOLVED
            for key, (outcome, detail) in _UNRESOLVED_LISTS.items():
                for run_id in _id_list(data.get(key)) or []:
                    verdicts[run_id] = Verdict(outcome, None, detail)
            for run_id in data["resolved"]:
                verdicts[run_id] = Verdict(Outcome.success, None)
            return NOT_LISTED if _id_list(data.get("generated")) is not None else NOT_RESOLVED
        nested = [value for value in data.values() if isinstance(value, list) and value
                  and all(isinstance(item, dict) for item in value) and value[0].keys() & set(ID_FIELDS)]
        if nested:  # records under a key, beside totals that are no run ids: {"total": 500, "instances": [...]}
            for records in nested:
                cls._records(records, verdicts, path, invalid)
            return None
        if _is_one_record(data):  # its field names would pass for run ids (``total_input_tokens``: 0 -> failure)
            run_id, verdict = cls._one_record(data, path)
            verdicts[run_id] = verdict
            return None
        if (why := _summary(data)) is not None:
            raise ValueError(f"{path}: a summary of statistics, not verdicts: {why}; pass the report that lists the "
                             "runs (e.g. the SWE-bench harness's, with resolved_ids)")
        if lists := [str(k) for k, v in data.items() if isinstance(v, list)]:
            raise ValueError(f"{path}: a document about runs, not verdicts keyed by run ids: it holds lists "
                             f"({first_few(lists, SHOWN_INVALID)}), which no run's verdict is, so its other fields "
                             f"are its header, not runs; and it holds no list of run ids by verdict "
                             f"({', '.join(_RUN_REPORT_KEYS)}, at its top or under one key)")
        for run_id, value in data.items():
            if _off_scale(value):
                invalid.append((str(run_id), f"{value!r} is no reward (rewards run from 0 to 1)"))
            elif (verdict := _from_value(value)) is not None:
                verdicts[str(run_id)] = verdict
            elif (why := _refusal(value)) is not None:
                invalid.append((str(run_id), why))
        return None

    @staticmethod
    def _one_record(data: dict[str, Any], path: Path) -> tuple[str, Verdict]:
        """The run a lone record names (a bare ``id`` is as often an event's, a job's or a trial's) and its verdict;
        a record naming none, or with no verdict, is refused: it is no table of run ids either."""
        run_id = next((str(data[k]) for k in RUN_ID_FIELDS if _scalar(data.get(k)) and data[k] != ""), None)
        verdict = _from_value(data)
        if run_id is not None and verdict is not None:
            return run_id, verdict
        named = f" of run {run_id!r}" if run_id is not None else ""
        missing = (f"no verdict (one of {', '.join(OUTCOME_FIELDS + REWARD_FIELDS)})" if run_id is not None
                   else f"no field naming its run (one of {', '.join(RUN_ID_FIELDS)})")
        raise ValueError(f"{path}: one record{named}, not a table keyed by run ids, with {missing}; pass a report "
                         "of the runs or a folder of such results")

    @staticmethod
    def _records(records: Iterable[Any], verdicts: dict[str, Verdict], path: Path, invalid: list[Invalid]) -> None:
        for n, record in enumerate(records, 1):
            if not isinstance(record, dict):
                raise ValueError(f"{path}: record {n} is not an object")
            run_id = next((str(record[k]) for k in ID_FIELDS if record.get(k) not in (None, "")), None)
            verdict = _from_value(record)
            if run_id is None:
                raise ValueError(f"{path}: record {n} has no id column (one of {', '.join(ID_FIELDS)})")
            if verdict is not None:
                verdicts[run_id] = verdict
            elif (why := _refusal(record)) is not None:
                invalid.append((run_id, why))

    def _other_case(self, keys: list[str]) -> str | None:
        """The id the file lists a run's SWE-bench instance by, spelt in another case (``project-monai__monai-5416``
        for ``Project-MONAI__MONAI-5416``) or as Multi-SWE-bench's harness names it (``catchorg/Catch2:pr-2288`` for
        ``catchorg__Catch2-2288``), where the file spells it only one way. Ids are case-sensitive, but an
        instance id is ``<owner>__<repo>-<number>`` of a GitHub repository, whose names are not: the harness
        lowercases it in its image names, and tools that key reports by such names write it so."""
        found = {spelt for k in keys if _INSTANCE_ID.match(k) for spelt in self._spellings.get(k.casefold(), ())}
        return found.pop() if len(found) == 1 else None

    def _verdict(self, trajectory: Trajectory) -> Verdict | None:
        """The file's verdict for the run: its own (by an id as written, else by its instance id in another case,
        see ``_other_case``), else what the file says of the runs it leaves out, for a run of a SWE-bench instance
        (``<owner>__<repo>-<number>``: a run of anything else is not its to judge)."""
        keys = _keys(trajectory)
        if not any(k in self.verdicts or k in self.conflicts for k in keys) and (spelt := self._other_case(keys)):
            keys = [spelt]
        verdict = next((self.verdicts[k] for k in keys if k in self.verdicts), None)
        if verdict is None and (key := next((k for k in keys if k in self.conflicts), None)):
            verdict = self._named(trajectory, self.conflicts[key], key)
        elif verdict is None and self.unlisted is not None and _INSTANCE_ID.match(trajectory.task_id or "") \
                and _handed_in(trajectory):
            verdict = self.unlisted
            self.unlisted_runs += _decides(verdict)
        if verdict is not None and not _decides(verdict):  # the report says it did not evaluate the run
            self.not_evaluated += 1
            return None
        return verdict

    def _named(self, trajectory: Trajectory, seen: list[tuple[Verdict, tuple[str, ...]]],
               run_id: str) -> Verdict | None:
        """Of verdicts that disagree on ``run_id``, the one whose report's folder names the run (its run directory,
        config or model: ``trace_01_gpt-5/report.json`` beside the run, the harness's ``<run>/<model>/<instance>/``);
        several that agree there (a run report and its instances' reports) give the one saying more; none when no
        single verdict does (the run keeps its own outcome, counted ``ambiguous``). Only the folders that
        tell the reports apart count: the instance's own folder, and any other every report sits in
        (``logs/run_evaluation/``), name every run of the instance alike."""
        names = {part for part in trajectory.trajectory_id.split(".") if part} | {
            str(trajectory.metadata[k]) for k in ("run_dir", "config") if trajectory.metadata.get(k)}
        names |= {trajectory.model_id, (trajectory.model_id or "").rsplit("/", 1)[-1]} - {None, ""}
        shared = set.intersection(*(set(folders) for _, folders in seen)) | {run_id}
        named = [verdict for verdict, folders in seen if names & (set(folders) - shared)]
        if len({(verdict.outcome, verdict.reward) for verdict in named}) == 1:  # agreeing: the one saying more
            return max(named, key=_says)
        self.ambiguous += 1
        return None

    def apply(self, trajectory: Trajectory) -> Trajectory:
        """The trajectory with the file's verdict (unchanged when the file has none for it)."""
        verdict = self._verdict(trajectory)
        self.runs += 1
        if verdict is None:
            return trajectory
        self.matched += 1
        given = verdict.outcome.value if verdict.outcome is not None else "reward only"
        self.outcomes[given] = self.outcomes.get(given, 0) + 1
        update: dict[str, Any] = {"metadata": {**trajectory.metadata, "outcome_basis": f"{BASIS}{self.source}"}}
        if verdict.reward is not None:
            update["reward"] = verdict.reward
        if verdict.outcome is not None:
            update["outcome"] = verdict.outcome
            if verdict.outcome is Outcome.success:
                update["failure"] = None
            elif trajectory.failure is None and (verdict.detail or verdict.outcome is Outcome.infra_error):
                # an infra error, or a handed-in run the tests failed: say how
                update["failure"] = Failure(error=verdict.detail or INFRA_ERRORED, cause=f"{BASIS}{self.source}")
        return trajectory.model_copy(update=update)


def has_own_verdict(run: Trajectory) -> bool:
    """Whether a run as read says how it went: a reward, a basis saying what judged it, or an outcome the dump
    holds (a test result, a verdict); not a submission no test judged (:data:`UNEVALUATED`), not ``unknown``, and not
    the failure an adapter guessed from a run stopped at a limit with its patch handed in (SWE-agent's ``submitted
    (exit_cost)``, ``exit_status`` in its metadata: an evaluation may well resolve it; review 1 of round 12, D1: a
    resolved one became a failure again on a re-ingest without its results file)."""
    basis = run.metadata.get("outcome_basis")
    if basis == UNEVALUATED:
        return False
    if run.reward is not None or basis is not None:
        return True
    if run.outcome is Outcome.unknown:
        return False
    return not str(run.metadata.get("exit_status") or "").startswith("submitted")


def file_verdict(run: Trajectory) -> str | None:
    """The basis of a run's verdict when an outcome file gave it (``outcomes file <name>``), else None."""
    basis = run.metadata.get("outcome_basis")
    return basis if isinstance(basis, str) and basis.startswith(BASIS) else None


def keep_verdict(read: Trajectory, stored: Trajectory) -> Trajectory | None:
    """``read`` with the verdict an outcome file gave ``stored`` (the same run, as an earlier ingest stored it),
    where ``read`` has no verdict of its own; else None (the read's own verdict, or none, stands).

    A dump is read again without its ``--outcomes`` (a nightly job over the same folder; a new report that does
    not cover the run): the run has not changed, only what is known of it, and an evaluation's verdict is not
    undone by a read that judges nothing (probe E2, E2-C: 37 failures became "submitted, not evaluated"
    successes in silence). A read with a verdict of its own (a dump carrying test results, a new outcome file)
    replaces the stored one. The verdict is put back as :meth:`OutcomeTable.apply` gave it: outcome, reward,
    basis, and the failure it told (the read's own error, where it holds one, first)."""
    basis = file_verdict(stored)
    if has_own_verdict(read) or basis is None:
        return None
    if not same_attempt(read, stored):  # another attempt under the id (a rerun into the same folder): unjudged
        return None
    failure = None if stored.outcome is Outcome.success else read.failure or stored.failure
    return read.model_copy(update={"outcome": stored.outcome, "reward": stored.reward, "failure": failure,
                                   "metadata": {**read.metadata, "outcome_basis": basis}})


def same_attempt(read: Trajectory, stored: Trajectory) -> bool:
    """Whether ``read`` is the attempt ``stored`` was, however a newer reader reads it: the same model; the same
    session, trace or conversation id where both have one; the same size of submission where both handed one in
    (``submission_chars``: the patch the outcome file judged; review 4 of round 12, D1: two runs of one agent on
    one task share their first commands); and at least 0.8 of the same step arguments (what the agent did: a reader
    renames tools, drops the CLI's own turns, cuts a task's preamble, and keeps the commands). A rerun of a task
    into the same output folder is another attempt, which the outcome file that judged the stored one never saw
    (probe I, I1: a failed gpt-5-mini rerun took over gemini's resolved verdict)."""
    if read.model_id != stored.model_id:
        return False
    for key in ("session_id", "trace_id", "conversation_id"):
        if read.metadata.get(key) and stored.metadata.get(key):
            return read.metadata[key] == stored.metadata[key]
    if "submission_chars" in read.metadata and "submission_chars" in stored.metadata \
            and read.metadata["submission_chars"] != stored.metadata["submission_chars"]:
        return False
    did, done = _arguments(read), _arguments(stored)
    return len(did & done) >= 0.8 * max(len(did), len(done))


def _arguments(run: Trajectory) -> set[str]:
    """The arguments of a run's steps, each as canonical JSON."""
    return {json.dumps(step.arguments, sort_keys=True, default=str) for step in run.steps
            if step.arguments not in (None, "", {}, [])}
