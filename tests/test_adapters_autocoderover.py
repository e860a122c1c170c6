"""AutoCodeRover's task output folders (``<instance>_<start>/`` of ``conversation_round_<n>.json`` and
``debug_agent_write_patch_<n>.json``), read from a real run its repository committed (nus-apr/auto-code-rover
``results/acr-run-1``, trimmed: tests/fixtures/autocoderover/.sweexp30/README.md), the version of AutoCodeRover's
``autocoderover-v20240408`` SWE-bench leaderboard submission."""

from __future__ import annotations

import json
import logging
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_inputs
from trajsearch.model import SUBMITTED, Outcome, outcome_shown

from adapter_support import only
from cli_support import run_cli

ACR = Path(__file__).parent / "fixtures" / "autocoderover" / ".sweexp30" / "acr-run-1"
TASK = ACR / "applicable_patch" / "django__django-10914_2024-04-06_13-19-51"


def test_a_task_folder_is_one_run_read_from_its_longest_thread() -> None:
    # the earlier round's file is part of the same run, not a second one; the run set's stats.json is no run
    [parsed] = list(read_inputs([ACR]))
    run = parsed.trajectory
    assert run is not None, parsed.error
    assert run.trajectory_id == "autocoderover.django__django-10914_2024-04-06_13-19-51"
    assert run.task.startswith("Set default FILE_UPLOAD_PERMISSION to 0o644.") and "</issue>" not in run.task
    assert run.task_id == run.metadata["instance_id"] == "django__django-10914"
    assert run.metadata["repo"] == "django/django" and run.model_id == "gpt-4-0125-preview"
    assert run.metadata["cost"] == 0.31962 and run.metadata["extract_status"] == "APPLICABLE_PATCH"
    # ACR handed in a patch it did not test: submitted, not evaluated, until an outcome file says
    assert run.outcome is Outcome.success and outcome_shown(run) == SUBMITTED
    assert run.created_at == datetime(2024, 4, 6, 13, 19, 51, tzinfo=timezone.utc)
    # the search rounds, the bug locations, and the patch the patch agent wrote (its thread extends the search's)
    assert [s.action for s in run.steps] == ["search_class", "respond", "search_method_in_class", "respond"]
    first = run.steps[0]
    assert first.arguments["calls"][:2] == ['search_class("FileSystemStorage")', 'search_class("MemoryUploadedFile")']
    assert first.observation.startswith('Result of search_class("FileSystemStorage"):')
    assert "<file>django/core/files/storage.py</file>" in run.steps[-1].arguments["content"]
    assert run.steps[-1].observation.startswith("Extracted a patch.")


def test_a_round_file_named_alone_reads_its_task_folder() -> None:
    run = only(TASK / "conversation_round_1.json")
    assert run.trajectory_id == "autocoderover.django__django-10914_2024-04-06_13-19-51" and len(run.steps) == 4


def test_a_folder_without_its_meta_is_named_by_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / TASK.name
    shutil.copytree(TASK, folder)
    (folder / "meta.json").unlink()  # some of ACR's task folders hold none
    run = only(folder)
    assert run.task_id == "django__django-10914" and run.task.startswith("Set default FILE_UPLOAD_PERMISSION")


def test_a_run_that_extracted_no_applicable_patch_handed_in_nothing(tmp_path: Path) -> None:
    folder = tmp_path / TASK.name
    shutil.copytree(TASK, folder)
    # django__django-11039's statuses (acr-run-1/raw_patch_but_unmatched): three patches, none ACR could apply
    (folder / "extract_status.json").write_text(json.dumps({"extract_status": [
        "RAW_PATCH_BUT_UNMATCHED", "RAW_PATCH_BUT_UNPARSED", "RAW_PATCH_BUT_UNMATCHED"]}))
    run = only(folder)
    assert run.outcome is Outcome.failure and run.failure.cause == "AutoCodeRover handed in no patch"
    assert run.failure.error == "no applicable patch extracted (RAW_PATCH_BUT_UNMATCHED)"


def test_cli_dry_run_judges_the_run_by_its_run_sets_report(home: Path) -> None:
    # new_eval_results/report.json: the lists SWE-bench's leaderboard keeps as a submission's results.json
    results = ACR / "new_eval_results" / "report.json"
    code, out, err = run_cli("ingest", str(ACR), "-t", "acme", "--dry-run", "--outcomes", str(results))
    assert code == 0, out + err
    assert "format autocoderover; runs 1; rejected 0; steps 4; errors 0; outcomes failure 1" in out, out


def test_a_task_folders_own_file_named_alone_is_no_run(home: Path) -> None:
    code, out, err = run_cli("ingest", str(TASK / "tool_call_sequence.json"), "-t", "acme", "--dry-run")
    assert code != 0 and "no run in this file: an AutoCodeRover task folder's own file" in out + err, out + err


def test_a_run_set_with_sbfl_rankings_rejects_nothing(home: Path, tmp_path: Path) -> None:
    # ACR's acr-val-sbfl set: each task folder also holds SBFL's ranked suspicious lines and methods (JSON lists)
    folder = tmp_path / "acr-val-sbfl" / "applicable_patch" / TASK.name
    shutil.copytree(TASK, folder)
    (folder / "sbfl_result.json").write_text(json.dumps([["django/core/files/storage.py", 60, 63, 0.47]]))
    (folder / "sbfl_result_method.json").write_text(json.dumps([["django/core/files/storage.py", "", "save", 0.47]]))
    (folder / "run_developer_tests.log").write_text("Ran 12 tests in 0.1s\n")
    code, out, err = run_cli("ingest", str(tmp_path / "acr-val-sbfl"), "-t", "acme", "--dry-run")
    assert code == 0 and "runs 1; rejected 0; steps 4" in out, out + err


def test_a_task_folders_meta_cost_or_status_named_alone_is_no_run(home: Path) -> None:
    for name in ("meta.json", "cost.json", "extract_status.json"):
        code, out, err = run_cli("ingest", str(TASK / name), "-t", "acme", "--dry-run")
        assert code != 0 and "no run in this file: an AutoCodeRover task folder's own file" in out + err, out + err


def test_a_cut_short_thread_is_named_in_the_folders_error(tmp_path: Path) -> None:
    folder = tmp_path / TASK.name
    shutil.copytree(TASK, folder)
    (folder / "debug_agent_write_patch_1.json").unlink()
    thread = folder / "conversation_round_1.json"
    thread.write_bytes(thread.read_bytes()[:3000])  # a run killed while it saved its thread
    [parsed] = list(read_inputs([folder]))
    assert parsed.trajectory is None
    assert "no conversation_round_<n>.json" in parsed.error and "not read: conversation_round_1.json: " \
        in parsed.error and "malformed JSON" in parsed.error, parsed.error


def test_a_cut_short_longest_thread_is_said(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / TASK.name
    shutil.copytree(TASK, folder)
    thread = folder / "debug_agent_write_patch_1.json"
    thread.write_bytes(thread.read_bytes()[:4000])  # the patch agent's thread cut short: the round's is read
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        [parsed] = list(read_inputs([folder]))
    assert parsed.trajectory is not None and len(parsed.trajectory.steps) == 2
    assert "run read without debug_agent_write_patch_1.json: malformed JSON" in caplog.text, caplog.text


def test_a_respond_step_holds_its_text_once() -> None:
    [parsed] = list(read_inputs([TASK]))
    last = parsed.trajectory.steps[-1]
    assert last.action == "respond" and last.thought is None
    assert "<file>django/core/files/storage.py</file>" in last.arguments["content"]
