"""The Codex VS Code extension's title job (``codex exec`` with ``originator: codex_vscode``, ``source: exec``) is
told by that mark AND its request, and passed over saying what it is whatever its size (review 2, F9). Fixtures:
``codex-cli/.real/probe-c/`` (origin in ``codex-cli/.real/SOURCE.md``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.ingest.sources import PEEK_BYTES

PROBE_C = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c"
#: BearTDK6/ba-pro, Codex Desktop 0.118: the user asked for a ``docker build`` (3 of the session's 44 steps kept).
DOCKER_BUILD = PROBE_C / "rollout-2026-04-09T23-43-58-019d7321-08b9-7972-a543-73a8d01f6822.jsonl"
#: BearTDK6/ba-pro, a title job whose model read files first: 69 KB, whole.
BIG_TITLE_JOB = PROBE_C / "rollout-2026-01-22T00-13-10-019be18b-bdb3-7dd0-bcb6-ad19492ef754.jsonl"
TITLE_JOB_SAYS = (r"no run in this file: a side session of the Codex IDE extension "
                  r"\(`codex exec` started by codex_vscode to title a task")


def _with_side_job_meta(rollout: Path, folder: Path) -> Path:
    """A copy of a real rollout whose session meta is what a ``codex exec`` started from inside the VS Code agent
    inherits (``CODEX_INTERNAL_ORIGINATOR_OVERRIDE=codex_vscode``, ``source: exec``); every other line as is."""
    lines = [json.loads(line) for line in rollout.read_text(encoding="utf-8").splitlines() if line.strip()]
    for line in lines:
        if line.get("type") == "session_meta":
            line["payload"].update(originator="codex_vscode", source="exec")
    copy = folder / rollout.name
    copy.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return copy


def test_a_users_codex_exec_run_from_the_ide_agent_is_read(tmp_path: Path) -> None:
    """A task run as ``codex exec "<task>"`` by a command the VS Code agent runs carries the title job's meta (the
    originator is inherited from the environment). It was passed over on that meta alone (its prompt never looked
    at): a small file as a title job, a big one, or one read under ``--format``, as 0 runs. Its prompt is no title
    request: it is read."""
    delegated = _with_side_job_meta(DOCKER_BUILD, tmp_path)
    assert detect_format(delegated) == "codex-cli"
    for runs in (read_dump(delegated, tenant="acme"), read_dump(delegated, fmt="codex-cli", tenant="acme")):
        [run] = [r.trajectory for r in runs]
        assert run.trajectory_id == "codex.019d7321-08b9-7972-a543-73a8d01f6822"
        assert run.task.startswith("$ docker build -f react-remote/Dockerfile")
        assert run.metadata["originator"] == "codex_vscode" and run.metadata["source"] == "exec"


def test_a_title_job_too_big_for_detection_to_read_whole_is_passed_over_saying_what_it_is(tmp_path: Path) -> None:
    """A title job of 69 KB (its model read files first) was more than detection reads whole, so it was read as a
    run file giving 0 runs, and named alone the ingest said "its files hold no record of their format". Its opening
    lines (the meta and the title request) tell it: it is passed over as a title job, as a small one is."""
    assert BIG_TITLE_JOB.stat().st_size > PEEK_BYTES
    with pytest.raises(SideFile, match=TITLE_JOB_SAYS):
        detect_format(BIG_TITLE_JOB)
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(BIG_TITLE_JOB, folder)
    shutil.copy(DOCKER_BUILD, folder)
    assert [r.trajectory.trajectory_id for r in read_dump(folder, tenant="acme")] == [
        "codex.019d7321-08b9-7972-a543-73a8d01f6822"]
    with pytest.raises(SideFile, match=TITLE_JOB_SAYS):  # --format forced (it said "no record of their format")
        list(read_dump(BIG_TITLE_JOB, fmt="codex-cli", tenant="acme"))
    assert [r.trajectory.trajectory_id for r in read_dump(folder, fmt="codex-cli", tenant="acme")] == [
        "codex.019d7321-08b9-7972-a543-73a8d01f6822"]
