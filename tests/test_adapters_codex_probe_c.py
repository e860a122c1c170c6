"""Codex rollouts found by probe C (round p42) in committed ``~/.codex`` folders: unified-exec commands that never
ran, the IDE extension's title side sessions, auto-review (guardian) sub-sessions, sessions opened and closed with
nothing sent. The fixtures (``codex-cli/.real/probe-c/``) are trimmed real rollouts; their origin is in
``codex-cli/.real/SOURCE.md``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump

PROBE_C = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c"
#: BearTDK6/ba-pro, Codex Desktop 0.118 (the user asked for a ``docker build``).
DOCKER_BUILD = PROBE_C / "rollout-2026-04-09T23-43-58-019d7321-08b9-7972-a543-73a8d01f6822.jsonl"
#: taturou/codex-chrome-extension, Codex CLI 0.104 on Linux.
APP_SERVER = PROBE_C / "rollout-2026-02-22T23-33-35-019c85c5-2346-7870-acb2-814f3c6068dd.jsonl"
#: olivia215215/cabinet-governance, Codex Desktop 0.126 with automatic approval review.
AUTO_REVIEWED = PROBE_C / "rollout-2026-04-29T14-22-18-019dd7e7-1344-7142-aeae-20e633ab2cfc.jsonl"
#: BearTDK6/ba-pro, the VS Code extension titling the task of session 019be65b-1d89-... .
TITLE_JOB = PROBE_C / "rollout-2026-01-22T22-38-10-019be65b-1f77-7f20-a115-801bfeaf06c0.jsonl"
#: olivia215215/cabinet-governance, the auto-reviewer of session 019dd7e7-... (AUTO_REVIEWED).
GUARDIAN = PROBE_C / "rollout-2026-04-29T14-41-27-019dd7f8-9cc2-7bb2-9bc5-670490c52926.jsonl"
#: 7567491/Feishu_ClaudeCode, a session opened and closed: its meta and the injected environment context only.
OPENED_AND_CLOSED = PROBE_C / "rollout-2025-11-27T11-34-23-019ac360-5c21-7a01-8840-7a5de9d3da2a.jsonl"

DOCKER_DENIED = ('exec_command failed: sandbox denied: ERROR: permission denied while trying to connect to the Docker '
                 'daemon socket at unix:///Users/kane/.docker/run/docker.sock: Head "http://%2FUsers%2Fkane%2F.docker'
                 '%2Frun%2Fdocker.sock/_ping": dial unix /Users/kane/.docker/run/docker.sock: connect: operation not '
                 'permitted (exit code 1)')
REVIEW_REJECTED = ("not run: exec_command failed: rejected: This action was rejected due to unacceptable risk. Reason: "
                   "Automatic approval review failed: You've hit your usage limit. Upgrade to Pro "
                   "(https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more "
                   "credits or try again at 6:09 PM.")
SANDBOX_DENIED = "exec_command failed: sandbox denied: Error: Operation not permitted (os error 1) (exit code 1)"
STDIN_CLOSED = ("write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin "
                "open")


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


@pytest.mark.parametrize("rollout, errors", [
    (DOCKER_BUILD, [DOCKER_DENIED, "not run: exec_command failed: rejected: rejected by user", None]),
    (APP_SERVER, [None, SANDBOX_DENIED, None, STDIN_CLOSED]),
    (AUTO_REVIEWED, [None, REVIEW_REJECTED, REVIEW_REJECTED, REVIEW_REJECTED]),
])
def test_a_command_unified_exec_never_ran_is_the_steps_error(rollout: Path, errors: list[str | None]) -> None:
    """Unified exec answers a command the sandbox denied, the user or the auto-reviewer rejected, or a write to a
    process that had ended with ``exec_command failed[ for `<cmd>`]: <Rust debug print>`` / ``write_stdin failed:
    ...`` and writes no ``exec_command_end``: all 25 such steps of the probe's corpus had no error. Now each is an
    error of one line (the refusal's reason, the denied command's decisive line and exit code); the ordinary
    outputs beside them (exit 0, a process still running) stay no error."""
    assert [s.error for s in only_run(rollout).steps] == errors


def test_the_ide_extensions_title_session_is_passed_over(tmp_path: Path) -> None:
    """The Codex VS Code extension runs ``codex exec`` (``originator: codex_vscode``, ``source: exec``, a mini
    model) to title a task from the user's prompt; the rollout was a run whose task quoted that prompt (7 of one
    user's 64 runs). The user's request is its own session's task: this one is passed over, saying what it is, in a
    folder, named alone, and when read whole past detection (a file too big for it to look at whole)."""
    with pytest.raises(SideFile, match=r"no run in this file: a side session of the Codex IDE extension"):
        detect_format(TITLE_JOB)
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(TITLE_JOB, folder)
    shutil.copy(DOCKER_BUILD, folder)
    assert [r.trajectory.trajectory_id for r in read_dump(folder, tenant="acme")] == [
        "codex.019d7321-08b9-7972-a543-73a8d01f6822"]
    with pytest.raises(SideFile, match=r"no run in this file: a side session of the Codex IDE extension"):
        list(read_dump(TITLE_JOB, fmt="codex-cli", tenant="acme"))  # --format forced: still told what it is
    assert [r.trajectory.trajectory_id for r in read_dump(folder, fmt="codex-cli", tenant="acme")] == [
        "codex.019d7321-08b9-7972-a543-73a8d01f6822"]


def test_an_auto_reviews_task_is_its_own_instruction_linked_to_the_reviewed_session() -> None:
    """A guardian sub-session (``source: {"subagent": {"other": "guardian"}}``) is asked about a planned action of
    the session it reviews, whose transcript it quotes. The IDE request heading inside that quote cut the task to the
    reviewed user's request plus transcript ("我要做一个平台..."), and nothing linked the session it names. Now the
    task is the reviewer's instruction and the action to assess, the quoted transcript left out, and the reviewed
    session is its parent."""
    run = only_run(GUARDIAN)
    assert run.task.startswith("The following is the Codex agent history whose request action you are assessing.")
    assert ">>> TRANSCRIPT START\n[the reviewed session's transcript]\n>>> TRANSCRIPT END\n" in run.task
    assert run.task.rstrip().endswith(">>> APPROVAL REQUEST END") and '"tool": "exec_command"' in run.task
    assert "我要做一个平台" not in run.task
    assert (run.metadata["is_subagent"], run.metadata["source"]) == (True, "subagent:other:guardian")
    assert run.metadata["parent_thread_id"] == "019dd7e7-1344-7142-aeae-20e633ab2cfc"
    [follow_up] = run.metadata["user_prompts"]
    assert "TRANSCRIPT DELTA START [the reviewed session's transcript] >>> TRANSCRIPT DELTA END" in follow_up


def test_a_session_opened_and_closed_with_nothing_sent_is_passed_over(tmp_path: Path) -> None:
    """A rollout of the session meta and the context Codex injects (``<environment_context>``), no prompt, no model
    output, was rejected ("no user prompt in this Codex rollout", exit 3) where Claude Code's equivalent is passed
    over: 8 of 39 rollouts of two users. Now it is passed over too, saying why."""
    with pytest.raises(SideFile, match=r"no run in this file: a Codex session opened and closed with no prompt"):
        detect_format(OPENED_AND_CLOSED)
    folder = tmp_path / "sessions"
    folder.mkdir()
    shutil.copy(OPENED_AND_CLOSED, folder)
    assert list(read_dump(folder, tenant="acme")) == []
    assert list(read_dump(folder, fmt="codex-cli", tenant="acme")) == []
    with pytest.raises(SideFile, match=r"no run in this file: a Codex session opened and closed with no prompt"):
        list(read_dump(OPENED_AND_CLOSED, fmt="codex-cli", tenant="acme"))
