"""AutoCodeRover 2.x task folders (AutoCodeRoverSG/auto-code-rover: ``meta.json`` and each overall retry's
``output_<n>/`` of ``conv_*.json`` threads and ``search/search_round_<n>.json``), read from real runs a repository
committed (stackcodegen/stackcodegen ``sota-comparison/autocoderover-output``, trimmed:
tests/fixtures/autocoderover/.aud36/README.md). Before, every file of such a folder was rejected on its own and no
run was read."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

from trajsearch.ingest.read import read_inputs
from trajsearch.model import SUBMITTED, Outcome, outcome_shown

from adapter_support import only
from cli_support import run_cli

META = "meta.json"
RUNS = Path(__file__).parent / "fixtures" / "autocoderover" / ".aud36"
PATCHED = RUNS / "so-24532043_2025-10-11_20-44-47"
UNMATCHED = RUNS / "so-20076195_2025-10-14_19-18-30"
REPRODUCER_ONLY = RUNS / "so-10710328_2025-10-11_20-43-03"


def test_a_task_folder_is_one_run_of_its_retries_threads() -> None:
    run = only(PATCHED)
    assert run.trajectory_id == "autocoderover.so-24532043_2025-10-11_20-44-47"
    assert run.task.startswith("Proper way to handle the close button in a main window PyQt")
    assert run.task_id == run.metadata["instance_id"] == "so-24532043"
    assert run.model_id == "gpt-4o-2024-05-13" and run.metadata["cost"] == 0.12817
    assert run.created_at == datetime(2025, 10, 11, 20, 44, 47, tzinfo=timezone.utc)
    # the reproducer's answer, then the patch agent's patch
    assert [s.action for s in run.steps] == ["respond", "respond"]
    assert '"has-reproducible-example": false' in run.steps[0].arguments["content"]
    assert run.steps[1].arguments["content"].startswith("To resolve the issue, we need to ensure that `GUIForm`")
    # an applicable patch handed in, not tested
    assert run.outcome is Outcome.success and outcome_shown(run) == SUBMITTED


def test_retries_that_extracted_no_applicable_patch_are_a_failure() -> None:
    run = only(UNMATCHED)
    assert run.outcome is Outcome.failure
    assert run.failure.error == "no applicable patch extracted (RAW_PATCH_BUT_UNMATCHED)"
    assert [s.action for s in run.steps] == ["respond", "respond"]  # the retry's two patch requests


def test_a_folder_that_ended_before_any_patch_is_unknown() -> None:
    run = only(REPRODUCER_ONLY)
    assert run.outcome is Outcome.unknown and run.task.startswith("Comparing numpy arrays containing NaN")


def test_a_walk_reads_each_task_folder_once_and_passes_its_other_files_over(home: Path) -> None:
    # empty search files as committed, the retries' meta.json copies, selected_patch.json: no rejections
    code, out, err = run_cli("ingest", str(RUNS), "-t", "acme", "--dry-run")
    assert code == 0, out + err
    assert out.count("format autocoderover; runs 1; rejected 0") == 3, out
    assert "rejected 1" not in out and "unrecognised" not in out + err, out + err


def test_a_retry_file_named_alone_reads_its_task_folder() -> None:
    [parsed] = list(read_inputs([PATCHED / "output_0" / "conv_patch_0.json"]))
    assert parsed.trajectory is not None and parsed.trajectory.trajectory_id.endswith("so-24532043_2025-10-11_20-44-47")


def test_the_search_is_read_from_its_longest_round(tmp_path: Path) -> None:
    # each search_round_<n>.json is the whole search so far (hand-built rounds: the committed ones are empty)
    folder = tmp_path / PATCHED.name
    shutil.copytree(PATCHED, folder)
    issue = {"role": "user", "content": "<issue>Closing the window</issue>"}
    asked = {"role": "assistant", "content": "search_class(\"GUIForm\")"}
    answer = {"role": "user", "content": "Result of search_class(\"GUIForm\"):\n\nFound 1 class."}
    done = {"role": "assistant", "content": "The bug is in GUIForm."}
    search = folder / "output_0" / "search"
    (search / "search_round_0.json").write_text(json.dumps([issue, asked, answer]))
    (search / "search_round_1.json").write_text(json.dumps([issue, asked, answer, done]))
    run = only(folder)
    assert [s.action for s in run.steps] == ["respond", "search_class", "respond", "respond"]


TRAE = Path(__file__).parent / "fixtures" / "trae-agent" / ".trae29" / "refused_task_done.json"


def _another_tools_output_folder(tmp_path: Path, under: str) -> Path:
    """A real Trae Agent run kept as ``exp/output_0/<under>`` beside ``exp/meta.json`` and ``exp/output_0/meta.json``
    (a seed's or sample's folder, an eval harness's): names common enough to be another tool's."""
    exp = tmp_path / "exp"
    (exp / "output_0").mkdir(parents=True)
    (exp / META).write_text(json.dumps({"task_id": "t1"}))
    (exp / "output_0" / META).write_text(json.dumps({"task_id": "t1"}))
    (exp / "output_0" / "search").mkdir()
    trajectory = exp / "output_0" / under
    trajectory.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(TRAE, trajectory)
    return trajectory


def test_another_tools_run_under_meta_and_output_0_is_left_to_its_format(tmp_path: Path, home: Path) -> None:
    # before, exp was taken as an ACR 2.x task folder with no thread: "rejected 1" and the Trae run lost
    for n, under in enumerate(("trajectory.json", "sub/deep/t.json")):
        trajectory = _another_tools_output_folder(tmp_path / str(n), under)
        for named in (trajectory, tmp_path / str(n)):
            _, out, err = run_cli("ingest", str(named), "-t", "acme", "--dry-run")  # (the toy meta.json: unrecognised)
            assert "format trae-agent; runs 1; rejected 0" in out and "autocoderover" not in out, out + err


def test_a_task_folders_meta_cost_or_status_named_alone_is_no_run_as_in_1x(home: Path) -> None:
    # as a 1.x folder's: only a thread's file stands for its task folder (before, any file of it read the whole run)
    for named in (PATCHED / META, PATCHED / "cost.json", PATCHED / "output_0" / "extract_status.json",
                  PATCHED / "output_0" / "extracted_patch_0.diff", PATCHED / "selected_patch.json"):
        code, out, err = run_cli("ingest", str(named), "-t", "acme", "--dry-run")
        assert code != 0 and ("no run in this file: an AutoCodeRover task folder's own file (its run is read from the "
                              "folder's conversation files)") in out + err, out + err


def test_reviews_are_read_after_the_patch_they_review(tmp_path: Path) -> None:
    # write_patch_iterative_with_review: patch 0, its review (conv_review_<patch>_<test>.json), patch 1, ...
    # (hand-built threads: no real folder here holds a review)
    folder = tmp_path / PATCHED.name
    shutil.copytree(PATCHED, folder)
    retry = folder / "output_0"
    (retry / "conv_reproducible.json").unlink()
    issue = {"role": "user", "content": "<issue>Closing the window</issue>"}
    for name in ("conv_patch_0", "conv_review_0_0", "conv_patch_1", "conv_review_1_0", "conv_patch_10"):
        (retry / f"{name}.json").write_text(json.dumps([issue, {"role": "assistant", "content": name}]))
    run = only(folder)
    assert [s.arguments["content"] for s in run.steps] == [
        "conv_patch_0", "conv_review_0_0", "conv_patch_1", "conv_review_1_0", "conv_patch_10"]


def test_a_walk_lists_a_task_folders_retry_once_not_once_for_each_of_its_files(tmp_path: Path, monkeypatch) -> None:
    """Each file a walk meets in ``output_0/`` asked whether the folder is ACR's, and each ask listed ``output_0/``
    (three times): a folder of 4,000 files took 36 s to walk, 1 s before 2.x was read (RT2 2). Counted, not timed:
    the listings of ``output_0/`` (``os.scandir``, ``os.listdir``: pathlib's glob and iterdir) while it is read."""
    folder = tmp_path / PATCHED.name
    shutil.copytree(PATCHED, folder)
    retry = folder / "output_0"
    for n in range(300):
        (retry / f"notes_{n}.txt").write_text("")
    listed: list[str] = []
    for name in ("scandir", "listdir"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda path=".", _real=real: listed.append(os.fspath(path)) or _real(path))
    results = list(read_inputs([tmp_path]))
    assert [r.trajectory.trajectory_id.rsplit(".", 1)[-1] for r in results if r.trajectory] == [PATCHED.name]
    # a few listings, however many files (the walk's, the thread patterns', the threads read): 325 before
    assert listed.count(str(retry)) <= 20, listed.count(str(retry))


def test_a_folder_told_by_a_thread_holds_one_its_run_is_read_from(tmp_path: Path) -> None:
    """``meta.json`` beside ``output_0/conv_a.json``: ``conv_a`` is no thread ACR saves or this reader reads, so the
    folder is not ACR's; it was taken for one and refused as missing the threads it was told by (RT2 9)."""
    folder = tmp_path / "t1"
    (folder / "output_0").mkdir(parents=True)
    (folder / META).write_text(json.dumps({"task_id": "x", "task_info": {"problem_statement": "p"}}))
    (folder / "output_0" / "conv_a.json").write_text(json.dumps([{"role": "user", "content": "hi"}]))
    errors = [r.error or "" for r in read_inputs([folder])]
    assert errors and not any("AutoCodeRover" in e for e in errors), errors
