"""Audit AUD9 (round 29): benchmark harnesses' newest output read as the tools write it.

OpenHands/benchmarks (2026) writes an instance that failed after its retries (the agent's iteration limit, a stuck or
broken conversation) as an evaluation line with ``history: []`` and keeps the run in
``conversations/<instance_id>.tar.gz`` beside the run set's files (``benchmarks/utils/evaluation.py``:
``_create_error_output``, ``_capture_conversation_archive``). Such lines were a large share of real run sets (200
of 500 in one) and were rejected as runs that "recorded nothing". Fixture: ``fixtures/openhands/.aud9/`` (README.md).
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import shutil
import tarfile
from pathlib import Path

from cli_support import run_cli
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


def _run_set(folder: Path, *errors: str | None) -> list:
    """A run set of one instance: the fixture's archive, and attempt N's line of it with ``errors[N - 1]`` (None: the
    fixture line's, which names the archived conversation); what each attempt file reads as."""
    shutil.copytree(ARCHIVED / "conversations", folder / "conversations")
    for n, error in enumerate(errors, 1):
        line = {**LINE, "error": error or LINE["error"]}
        (folder / f"output.critic_attempt_{n}.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    return [next(read_dump(folder / f"output.critic_attempt_{n}.jsonl", tenant="acme"))
            for n in range(1, len(errors) + 1)]


def test_the_archive_is_the_run_only_of_the_line_naming_its_conversation(tmp_path: Path) -> None:
    """Bug (review AUD9 1): the archive was given to the latest attempt file holding the instance. But an attempt whose
    retries never got a runtime writes no archive, so attempt 2 took attempt 1's run (3 steps, its failure) and
    attempt 1's own line was rejected. The archive is the run of the line whose error names its conversation; a line
    naming another, or none (a runtime or timeout error), is rejected saying so."""
    first, second, third = _run_set(tmp_path, None, "Instance failed after 3 retries. Last error: Runtime not yet "
                                    "ready (HTTP 503)", LINE["error"].replace("0000000000a0", "0000000000b7"))
    assert first.trajectory is not None, first.error
    assert first.trajectory.trajectory_id.startswith("openhands.demo__ticks-1.")
    assert not first.trajectory.trajectory_id.endswith(".attempt_1") and len(first.trajectory.steps) == 3
    assert second.trajectory is None and third.trajectory is None
    assert "conversations/demo__ticks-1.tar.gz may hold another attempt's run" in second.error
    assert "Runtime not yet ready" in second.error
    assert "holds another attempt's run (conversation 31313131-0000-4000-8000-0000000000a0, not " \
           "31313131-0000-4000-8000-0000000000b7" in third.error


def _tar(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_an_archive_that_cannot_be_read_says_why(tmp_path: Path) -> None:
    """Bug (review AUD9 3, 4): an archive cut short, of two conversations, with an event that is not JSON (or nested
    200000 deep: a RecursionError), or a member of any size read whole into memory, gave "no event in its history
    (the run recorded nothing ...)" or a bare RecursionError, naming neither the archive nor why."""
    (line,) = _run_set(tmp_path, None)
    assert line.trajectory is not None, line.error
    archive = tmp_path / "conversations" / "demo__ticks-1.tar.gz"
    whole = archive.read_bytes()
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}
    state = next(name for name in members if name.endswith("/base_state.json"))
    event = next(name for name in members if "/events/event-" in name)
    cases = {
        "cannot be read (": lambda: archive.write_bytes(whole[:3000]),
        "holds more than one conversation": lambda: _tar(archive, {**members, "workspace/conversations/ff/"
                                                                   "base_state.json": members[state]}),
        f"{event} is not JSON (JSONDecodeError": lambda: _tar(archive, {**members, event: b"{"}),
        "holds no base_state.json naming its conversation": lambda: _tar(archive, {
            name: data for name, data in members.items() if name != state}),
        f"{event} is not JSON (ValueError: JSON nested deeper than 200 levels": lambda: _tar(archive, {**members, event: b"[" * 200000}),
        f"{state} holds 2147483648 bytes, over the 1 GiB": lambda: archive.write_bytes(gzip.compress(
            _big_header(state, 2 << 30))),
    }
    for said, make in cases.items():
        make()
        (line,) = read_dump(tmp_path / "output.critic_attempt_1.jsonl", tenant="acme")
        assert line.trajectory is None
        assert line.error.startswith("instance demo__ticks-1: no event in its history, and its conversation "
                                     "archive conversations/demo__ticks-1.tar.gz"), line.error
        assert said in line.error, (said, line.error)


def _big_header(name: str, size: int) -> bytes:
    """A tar member's header claiming ``size`` bytes, its data left out (what a bomb's header says before its data)."""
    info = tarfile.TarInfo(name)
    info.size = size
    return info.tobuf(tarfile.GNU_FORMAT)


def test_an_absolute_instance_id_names_no_archive(tmp_path: Path) -> None:
    """Bug (review AUD9 5): an absolute instance id replaced the run set's folder, so a conversation archive
    anywhere was read as the line's run (``events_from`` naming a wrong place)."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(ARCHIVED / "conversations", elsewhere / "conversations")
    line = {**LINE, "instance_id": str(elsewhere / "conversations" / "demo__ticks-1")}
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "output_errors.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    (read,) = read_dump(tmp_path / "run" / "output_errors.jsonl", tenant="acme")
    assert read.trajectory is None and "the run recorded nothing" in read.error


def test_a_walk_does_not_ask_to_unpack_an_archive_read_with_its_line(caplog) -> None:
    """Bug: a walk of the run set said "passed over 1 archive(s) ... unpack them to read their runs" of the archive,
    whose run unpacked would have been read apart from its line (another id, no instance, no verdict)."""
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs([ARCHIVED], tenant="acme"))
    assert [p.ok for p in read] == [True]
    assert "archive" not in caplog.text


def test_an_archive_named_alone_is_told_whose_it_is() -> None:
    """Nit (review AUD9 10): named alone, the archive was "a gzipped tar archive (unpack it first: tar xzf)", whose
    run unpacked is read apart from its line (another id, no instance, no verdict)."""
    code, out, err = run_cli("ingest", str(ARCHIVED / "conversations" / "demo__ticks-1.tar.gz"), "--dry-run")
    said = " ".join((out + err).split())
    assert "no run in this file: the conversation archive of instance demo__ticks-1" in said, said
    assert "unpack" not in said


PROGRAMBENCH = Path(__file__).parent / "fixtures/mini-swe-agent/.aud9/programbench-submission"


def test_a_programbench_solution_beside_its_run_is_no_file_to_unpack(tmp_path: Path, caplog) -> None:
    """Bug: a walk of a ProgramBench run set (mini-swe-agent 2.4.5's runner, a leaderboard submission) named each
    instance's solution, the workspace ``submission.tar.gz`` ("unpack them to read their runs": source code, no run)
    and a submission's ``submission.tar.gz.url`` / ``.sha256``, two or three files per instance, beside the runs;
    and (review AUD9 8) the ``<id>.eval.log.json.url`` / ``.sha256`` of its evaluation's raw log, hosted elsewhere."""
    shutil.copytree(PROGRAMBENCH, tmp_path / "run", dirs_exist_ok=True)
    instance = tmp_path / "run" / "abishekvashok__cmatrix.5c082c6"
    # any tarball: the rule goes by the name (a workspace's archive holds source code, no run)
    shutil.copy(ARCHIVED / "conversations" / "demo__ticks-1.tar.gz", instance / "submission.tar.gz")
    with caplog.at_level(logging.WARNING, logger="trajsearch.ingest.read"):
        read = list(read_inputs([tmp_path / "run"], tenant="acme"))
    assert [p.trajectory.task_id for p in read] == ["abishekvashok__cmatrix.5c082c6"]
    assert read[0].trajectory.steps[-1].arguments["command"] == "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
    assert "submission.tar.gz" not in caplog.text and "eval.log.json" not in caplog.text


def test_an_error_lines_copy_beside_its_attempt_file_is_passed_over(tmp_path: Path) -> None:
    """Bug (review AUD9 7): the runner writes each line that ended in an error twice, to the attempt's file and to
    ``output_errors.jsonl`` (which says ``attempt: 1`` of every attempt), from one ``EvalOutput``. The copy was read
    as a run of its own (attempt 2's run twice, under two ids), or rejected once more as a run lost. It is passed
    over, saying whose copy it is."""
    (second,) = _run_set(tmp_path, None, None)[1:]
    assert second.trajectory is not None and second.trajectory.trajectory_id.endswith(".attempt_2"), second.error
    (tmp_path / "output.critic_attempt_1.jsonl").unlink()
    shutil.copy(tmp_path / "output.critic_attempt_2.jsonl", tmp_path / "output_errors.jsonl")
    read = list(read_inputs([tmp_path], tenant="acme"))
    assert [(Path(p.source).name, p.trajectory.trajectory_id) for p in read] == [
        ("output.critic_attempt_2.jsonl", second.trajectory.trajectory_id)]
    code, out, err = run_cli("ingest", str(tmp_path / "output_errors.jsonl"), "--dry-run")
    assert code == 0 and "passed over 1 line(s): a copy of an attempt file's line" in " ".join(out.split()), out + err


def test_a_checkpointed_reingest_reads_a_line_again_once_its_archive_changed(tmp_path: Path, home) -> None:
    """Bug (review AUD9 2): the ingest's checkpoint knew only the line's file, so a line read while its archive was
    being written (cut short: rejected) was never read again once the archive was whole ("already done per the
    checkpoint"). An evaluation file is read again when the archive of a line without events changes."""
    _run_set(tmp_path / "run", None)
    archive = tmp_path / "run" / "conversations" / "demo__ticks-1.tar.gz"
    whole = archive.read_bytes()
    archive.write_bytes(whole[:3000])
    code, out, err = run_cli("ingest", str(tmp_path / "run"), "--quiet")
    assert "ingested 0 runs" in " ".join(out.split()), out + err
    archive.write_bytes(whole)
    code, out, err = run_cli("ingest", str(tmp_path / "run"), "--quiet")
    assert code == 0 and "ingested 1 run" in " ".join(out.split()), out + err


def test_only_a_run_sets_file_is_read_with_the_archives_there(tmp_path: Path) -> None:
    """Review RT-IDX 5: the checkpoint asks every file of every input which files it is read with, even one it then
    skips, and every ``.jsonl`` beside ``conversations/`` was parsed for it, naming an archive for each line without
    events, present or not (a 68 MB file: 3 s each ingest). Only a run set's file is, and only with the archives that
    lie there."""
    from trajsearch.ingest.adapters import read_with

    folder = tmp_path / "run"
    (folder / "conversations").mkdir(parents=True)
    gone = {**LINE, "instance_id": "demo__gone-1"}
    lines = "".join(json.dumps(line) + "\n" for line in (LINE, gone))
    for name in ("output.jsonl", "notes.jsonl"):
        (folder / name).write_text(lines, encoding="utf-8")
    assert read_with(folder / "output.jsonl") == () and read_with(folder / "notes.jsonl") == ()
    shutil.copy(ARCHIVED / "conversations" / "demo__ticks-1.tar.gz", folder / "conversations")
    assert read_with(folder / "output.jsonl") == (folder / "conversations" / "demo__ticks-1.tar.gz",)
    assert read_with(folder / "notes.jsonl") == ()
