"""Codex's unified exec (``exec_command`` / ``write_stdin``, 0.5x+) read from a real rollout of Codex 0.125.0 that
the audit AUD2 (round 22) found outside our data: a command that outlives its first reply is polled with
``write_stdin`` on its process, and its failure is told twice, by the ``exec_command_end`` event (with the command's
call id) and by the poll that saw the process exit. The fixture (``codex-cli/.real/codemie/``) is a cut of the real
file; its origin is in ``codex-cli/.real/SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch import steps as S
from trajsearch.ingest.read import read_dump

#: codemie-ai/codemie-code's Codex plugin test fixture: ``rg`` exiting 2, then a focused ``npm test`` failing.
ROLLOUT = (Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "codemie"
           / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")


def _run():
    [parsed] = list(read_dump(ROLLOUT, tenant="acme"))
    assert parsed.error is None
    return parsed.trajectory


def test_a_polled_commands_failure_is_one_error_the_commands() -> None:
    """The ``rg`` and the ``npm test`` each failed once; each was read as two step errors (the command's, from its
    end event, and its poll's, from "Process exited with code N"), so a run's error count and its failure windows
    doubled. The failure is the command's, where Codex's end event puts it; a poll that only saw the exit is none."""
    run = _run()
    assert [(s.action, s.error is not None) for s in run.steps] == [
        ("exec_command", True), ("write_stdin", False),
        ("exec_command", True), ("write_stdin", False), ("write_stdin", False)]
    assert run.steps[0].error.startswith("rg: node_modules/opencode: No such file or directory")
    assert run.steps[2].error.startswith("AssertionError: expected undefined to deeply equal")
    assert "Process exited with code 1" in run.steps[4].observation  # the poll keeps what it saw


def test_a_unified_exec_command_is_a_command_to_the_step_rules() -> None:
    """``exec_command`` names its command ``cmd`` (codex-rs ``ExecCommandArgs``), which the step rules did not read:
    the failing ``npm test`` was no test run and ``rg`` no read, so no Codex run of 0.5x+ could be verified or
    fail its tests."""
    run = _run()
    rg, npm_test = run.steps[0], run.steps[2]
    assert S.command_of(rg).startswith("rg -n ") and S.is_read(rg)
    assert S.is_test_run(npm_test) and not S.passed(npm_test)
    assert not S.verified(run)


def test_a_shell_calls_script_is_its_command() -> None:
    """Codex's ``shell`` tool (2025) runs each command as ``["bash", "-lc", "<script>"]``; joined, ``bash -lc ls`` was
    no read to the step rules, so none of its reads counted. The script is the command, as codex-rs shows it. The
    real rollout is ``codex-cli/rollout-2025-11-17T15-30-28-….jsonl`` (its origin in ``codex-cli/SOURCE.md``)."""
    rollout = ROLLOUT.parents[2] / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
    [parsed] = list(read_dump(rollout, tenant="acme"))
    listing, search = parsed.trajectory.steps[0], parsed.trajectory.steps[3]
    assert listing.arguments["command"] == ["bash", "-lc", "ls"] and S.command_of(listing) == "ls"
    assert S.is_read(listing) and S.is_read(search) and not S.is_write(search)
