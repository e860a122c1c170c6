"""Coding-agent CLI files found by probe C (round p47), written by the released CLIs; origins in the fixtures'
``SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
CC = FIXTURES / "claude-code" / ".real" / "probe-c47"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_a_background_test_run_that_failed_is_an_error_where_the_agent_polled_it() -> None:
    """Bug (probe C47, C1): a command run in the background (``run_in_background``, Ctrl+B) is read by polling it,
    ``BashOutput`` (1.0.x-2.0.x) or ``TaskOutput`` (2.1.x); the CLI reports its end as ``<status>failed</status>``
    with the exit code, never as ``is_error``, and the launching call's result only says it started. The failed
    test run read as no error at all: a failure lost to the failure warnings. The poll is the failed step, its
    error read as a Bash call's exit code (the decisive line, the code)."""
    for folder, poll in (("poll-2.0.46", "BashOutput"), ("poll-2.1.40", "TaskOutput")):
        run = only_run(CC / folder)
        launch, polled, answer = run.steps
        assert (launch.action, launch.error) == ("Bash", None), folder
        assert polled.action == poll and "<exit_code>1</exit_code>" in polled.observation
        assert polled.error == "E AssertionError: 3 \\!= 4 (exit code 1)", folder
        assert answer.action == "respond" and answer.error is None
