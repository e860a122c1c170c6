"""Codex rollouts found by probe C (round p42) in committed ``~/.codex`` folders: unified-exec commands that never
ran. The fixtures (``codex-cli/.real/probe-c/``) are trimmed real rollouts; their origin is in
``codex-cli/.real/SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump

PROBE_C = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c"
#: BearTDK6/ba-pro, Codex Desktop 0.118 (the user asked for a ``docker build``).
DOCKER_BUILD = PROBE_C / "rollout-2026-04-09T23-43-58-019d7321-08b9-7972-a543-73a8d01f6822.jsonl"
#: taturou/codex-chrome-extension, Codex CLI 0.104 on Linux.
APP_SERVER = PROBE_C / "rollout-2026-02-22T23-33-35-019c85c5-2346-7870-acb2-814f3c6068dd.jsonl"
#: olivia215215/cabinet-governance, Codex Desktop 0.126 with automatic approval review.
AUTO_REVIEWED = PROBE_C / "rollout-2026-04-29T14-22-18-019dd7e7-1344-7142-aeae-20e633ab2cfc.jsonl"

DOCKER_DENIED = ('exec_command failed: sandbox denied: ERROR: permission denied while trying to connect to the Docker '
                 'daemon socket at unix:///Users/kane/.docker/run/docker.sock: Head "http://%2FUsers%2Fkane%2F.docker'
                 '%2Frun%2Fdocker.sock/_ping": dial unix /Users/kane/.docker/run/docker.sock: connect: operation not '
                 'permitted (exit code 1)')
REVIEW_REJECTED = ("exec_command failed: rejected: This action was rejected due to unacceptable risk. Reason: "
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
    (DOCKER_BUILD, [DOCKER_DENIED, "exec_command failed: rejected: rejected by user", None]),
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
