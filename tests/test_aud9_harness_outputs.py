"""Audit AUD9 (round 29): benchmark harnesses' newest output read as the tools write it.

OpenHands/benchmarks (2026) writes an instance that failed after its retries (the agent's iteration limit, a stuck or
broken conversation) as an evaluation line with ``history: []`` and keeps the run in
``conversations/<instance_id>.tar.gz`` beside the run set's files (``benchmarks/utils/evaluation.py``:
``_create_error_output``, ``_capture_conversation_archive``). Such lines were a large share of real run sets (200
of 500 in one) and were rejected as runs that "recorded nothing". Fixture: ``fixtures/openhands/.aud9/`` (README.md).
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

from trajsearch.ingest.read import read_dump, read_inputs
from trajsearch.model import Outcome

ARCHIVED = Path(__file__).parent / "fixtures/openhands/.aud9/v1-error-archive"
LINE = json.loads((ARCHIVED / "output_errors.jsonl").read_text(encoding="utf-8"))


def test_an_error_line_without_events_is_read_from_its_conversation_archive() -> None:
    """Bug: the line was rejected ("no event in its history (the run recorded nothing ...)") while the run's events
    lay in ``conversations/demo__ticks-1.tar.gz`` beside it: the run was lost. It is the line's run, named by its
    instance, its steps the archive's, its failure the agent's limit."""
    (read,) = read_dump(ARCHIVED / "output_errors.jsonl", tenant="acme")
    run = read.trajectory
    assert run is not None, read.error
    assert (run.task_id, run.task, run.model_id) == ("demo__ticks-1", "S_MAXITER: print ticks forever.",
                                                     "openai/gpt-4o-mini")
    assert run.trajectory_id.startswith("openhands.demo__ticks-1.")
    assert [s.arguments["command"] for s in run.steps] == ["echo tick 0", "echo tick 1", "echo tick 2"]
    assert run.outcome is Outcome.failure
    assert run.failure.error == "MaxIterationsReached: Agent reached maximum iterations limit (3)."
    assert run.metadata["events_from"] == "conversations/demo__ticks-1.tar.gz"


def test_the_archive_is_only_the_latest_attempts_run(tmp_path: Path) -> None:
    """Each attempt at an instance overwrites its archive: attempt 2's line (the latest) reads it, attempt 1's stays
    a run that kept no events (the archive is another run's). On the code before, both were rejected."""
    shutil.copytree(ARCHIVED / "conversations", tmp_path / "conversations")
    for n in (1, 2):
        (tmp_path / f"output.critic_attempt_{n}.jsonl").write_text(json.dumps(LINE) + "\n", encoding="utf-8")
    (first,) = read_dump(tmp_path / "output.critic_attempt_1.jsonl", tenant="acme")
    (second,) = read_dump(tmp_path / "output.critic_attempt_2.jsonl", tenant="acme")
    assert first.trajectory is None and "no event in its history" in first.error
    assert second.trajectory is not None and second.trajectory.trajectory_id.endswith(".attempt_2")
    assert len(second.trajectory.steps) == 3


def test_a_walk_does_not_ask_to_unpack_an_archive_read_with_its_line(caplog) -> None:
    """Bug: a walk of the run set said "passed over 1 archive(s) ... unpack them to read their runs" of the archive,
    whose run unpacked would have been read apart from its line (another id, no instance, no verdict)."""
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs([ARCHIVED], tenant="acme"))
    assert [p.ok for p in read] == [True]
    assert "archive" not in caplog.text


PROGRAMBENCH = Path(__file__).parent / "fixtures/mini-swe-agent/.aud9/programbench-submission"


def test_a_programbench_solution_beside_its_run_is_no_file_to_unpack(tmp_path: Path, caplog) -> None:
    """Bug: a walk of a ProgramBench run set (mini-swe-agent 2.4.5's runner, a leaderboard submission) named each
    instance's solution, the workspace ``submission.tar.gz`` ("unpack them to read their runs": source code, no run)
    and a submission's ``submission.tar.gz.url`` / ``.sha256``, two or three files per instance, beside the runs."""
    shutil.copytree(PROGRAMBENCH, tmp_path / "run", dirs_exist_ok=True)
    instance = tmp_path / "run" / "abishekvashok__cmatrix.5c082c6"
    shutil.copy(ARCHIVED / "conversations" / "demo__ticks-1.tar.gz", instance / "submission.tar.gz")  # any tarball
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs([tmp_path / "run"], tenant="acme"))
    assert [p.trajectory.task_id for p in read] == ["abishekvashok__cmatrix.5c082c6"]
    assert read[0].trajectory.steps[-1].arguments["command"] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    assert "submission.tar.gz" not in caplog.text
