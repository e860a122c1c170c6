"""Defects found by round p47's probes and left open, fixed in round p48 (area L); each fixture's origin is in its
folder's ``SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_a_background_tasks_one_failure_is_one_failed_step_however_often_it_is_reported() -> None:
    """Bug (probe 47, left open; L1): Claude Code 2.1.40 ran the tests in the background, the agent polled the task
    twice with ``TaskOutput`` (both polls: ``failed``, exit code 1) and the CLI queued the task's failed
    ``<task-notification>``: the launch and both polls were each an error step, three failed steps (three failure
    rows, three runtime warnings) for one failed test run. The first poll, where the agent learnt of it, is the
    failed step; the second poll and the launch keep what they were told, with no error of their own."""
    run = only_run(FIXTURES / "claude-code" / ".real" / "probe-l48" / "poll-twice-2.1.40")
    launch, first, second, answer = run.steps
    assert [s.action for s in run.steps] == ["Bash", "TaskOutput", "TaskOutput", "respond"]
    assert [s for s in run.steps if s.error] == [first]
    assert first.error == "1 failed, 9 passed in 0.42s (exit code 1)"
    assert "<status>failed</status>" in second.observation and "AssertionError" in second.observation
    assert launch.observation.endswith('Background command "Run the test suite" failed with exit code 1')
