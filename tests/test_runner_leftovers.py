"""Test runners' words where no exit code was kept (round 21, FM5 leftover 3): bun's count of errors thrown between
tests, and Gradle run in a terminal (a pty), whose rich console prints no ``> Task :test`` line.

Real outputs (``fixtures/test-runners/SOURCE.md``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapter_support import gemini_shell_step
from trajsearch.model import Step, Trajectory
from trajsearch.steps import passed, verified

FIXTURES = Path(__file__).parent / "fixtures"
RUNNERS = FIXTURES / "test-runners"


@pytest.mark.parametrize("name, error", [
    ("bun-error-between-tests", "error: unhandled rejection after the tests"),
    ("bun-error-loading", "error: rejected while loading")])
def test_a_bun_run_failed_only_by_an_error_between_tests_has_that_error(name: str, error: str,
                                                                      tmp_path: Path) -> None:
    """Bug: bun 1.x fails a run (exit 1) on an error thrown between tests even when every test passed (`` 2 pass``,
    `` 0 fail``, `` 1 error``): only a `` N fail`` count was read as its failure, so where no exit code was kept the
    step had no error and the error bun printed was lost (its tally alone said the run did not pass)."""
    step = gemini_shell_step((RUNNERS / f"{name}.txt").read_text(), tmp_path)
    assert step.error == error
    assert not passed(step)


def _gradle_run(*names: str) -> Trajectory:
    """A run of ``gradle test`` in a terminal, once per output (real Gradle 4.4.1 in a pty, in this order: failed,
    passed after the fix, up to date when run again)."""
    return Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=n, action="bash", arguments={"command": "gradle test"},
             observation=(RUNNERS / f"gradle-pty-{name}.txt").read_text())
        for n, name in enumerate(names)])


def test_a_gradle_test_run_in_a_terminal_passes_only_where_its_test_task_line_is() -> None:
    """Gradle's rich console (an agent's pty) heads a test task that printed something with ``> Task :test `` (a
    blank where it writes no status): that run passed. Run again, the task up to date, it writes no task line at all:
    ``BUILD SUCCESSFUL`` alone, which a build with no test sources prints too (``gradle-pty-nosource``), says no test
    ran, so that run is no pass by its own output and the run's last test run does not verify it."""
    run = _gradle_run("fail", "pass", "uptodate")
    assert [passed(step) for step in run.steps] == [False, True, False]
    assert verified(_gradle_run("fail", "pass"), reward_at_least=None)


def test_a_gradle_rerun_in_a_terminal_that_says_nothing_of_the_tests_does_not_take_back_their_pass() -> None:
    """Bug (round 22): ``gradle test`` passed, then run again with the test task up to date (no task line, real
    Gradle 4.4.1 in a pty): that last test run decided, so the run was no longer verified. It cannot verify by its own
    output (a build with no tests run twice prints the same, ``gradle-pty-nosource-uptodate``), nor fail: the run
    before it decides. A failure after a pass still does."""
    assert verified(_gradle_run("fail", "pass", "uptodate"), reward_at_least=None)
    assert verified(_gradle_run("pass", "nosource-uptodate"), reward_at_least=None)
    assert not verified(_gradle_run("pass", "fail", "uptodate"), reward_at_least=None)
    assert not verified(_gradle_run("uptodate"), reward_at_least=None)
    assert not verified(_gradle_run("nosource-uptodate"), reward_at_least=None)


@pytest.mark.parametrize("command", ["gradle build", "gradle test", "./gradlew build --offline"])
def test_a_gradle_build_in_a_terminal_with_no_tests_passes_nothing(command: str) -> None:
    """Bug (review RFM5): where Gradle's rich console wrote no task line, the command's test task decided, so a
    project with no test sources (``BUILD SUCCESSFUL`` alone, real Gradle 4.4.1 in a pty) passed and verified its run
    after a failed test run: no pass without a line that says the tests ran."""
    run = _gradle_run("fail", "nosource")
    run.steps[1].arguments = {"command": command}
    assert not passed(run.steps[1])
    assert verified(run, reward_at_least=None) is False


@pytest.mark.parametrize("command", ["gradle build -x test", "gradle compileJava"])
def test_a_gradle_build_in_a_terminal_that_ran_no_test_passes_nothing(command: str) -> None:
    """Where no task line says what ran, the command does: a build that left the tests out is no pass after the
    failed test run (the same real terminal output)."""
    run = _gradle_run("fail", "uptodate")
    run.steps[1].arguments = {"command": command}
    assert not passed(run.steps[1])
    assert verified(run, reward_at_least=None) is False


@pytest.mark.parametrize("output", ["12 error\n", "Compiling...\n  src/a.ts\n3 errors\n",
                                    " 2 pass\n 1 error\n"])
def test_a_count_of_errors_is_bun_s_only_under_its_pass_and_fail_counts(output: str, tmp_path: Path) -> None:
    """Bug (review RFM5): any output ending on a bare ``N error`` line was read as bun's tally of errors between
    tests, a failed step where no exit code was kept: bun's line is one only under its `` N pass`` and `` N fail``
    counts (``bun-error-*``, real bun 1.3.14)."""
    step = gemini_shell_step(output, tmp_path)
    assert step.error is None


@pytest.mark.parametrize("counts", [" 1 skip\n", " 1 todo\n", " 3 filtered out\n", " 1 skip\n 1 todo\n",
                                    " 3 filtered out\n 1 todo\n"])
@pytest.mark.parametrize("name, fail, error", [
    ("bun-fail-error", " 1 fail\n", "error: Cannot find module './qualityProfiles' from"),
    ("bun-error-between-tests", " 0 fail\n", "error: unhandled rejection after the tests")])
def test_bun_s_skip_todo_and_filtered_out_counts_keep_its_error_count(counts: str, name: str, fail: str, error: str,
                                                                      tmp_path: Path) -> None:
    """Bug (review RALL-A 1): bun prints its skip (or filtered-out) and todo counts between `` N pass`` and `` N
    fail`` (``test_command.zig``: pass, skip / filtered out, todo, fail, error; bun's docs' `` 2 pass``, `` 1 skip``,
    `` 0 fail``), and its `` N error`` count was read only right under pass and fail: a run with one skipped test
    lost its error, even its failed test (real bun 1.3.14 outputs, those lines put where bun prints them)."""
    output = (RUNNERS / f"{name}.txt").read_text()
    assert fail in output
    step = gemini_shell_step(output.replace(fail, counts + fail), tmp_path)
    assert step.error == error
    assert not passed(step)


@pytest.mark.parametrize("output", [" 2 pass\n 1 skip\n 1 error\n", " 2 pass\n 1 skip\n 1 skip\n 1 todo\n 1 todo\n"
                                    " 0 fail\n 1 error\n", " 2 items\n 1 skip\n 0 fail\n 1 error\n"])
def test_bun_s_error_count_still_needs_its_pass_and_fail_counts_around_the_others(output: str,
                                                                                   tmp_path: Path) -> None:
    """The counts bun prints between pass and fail make no tally of their own: no fail count, more lines than bun's
    skip / filtered-out and todo, or no pass count above them, and the bare error count is nobody's."""
    step = gemini_shell_step(output, tmp_path)
    assert step.error is None


def test_a_gradle_build_before_another_runner_that_passed_is_the_run_s_last_test_run() -> None:
    """Bug (review RALL-A): a test run whose output ended Gradle's ``BUILD SUCCESSFUL`` with no test task's line was
    dropped as one that said nothing of the tests, though the runner after the build said they passed: pytest
    failed, then ``./gradlew assemble && python -m pytest -q`` passed, and the run was not verified."""
    run = _gradle_run("fail", "uptodate")
    run.steps[0].arguments = {"command": "python -m pytest -q"}
    run.steps[0].observation = "F.\n1 failed, 1 passed in 0.10s\n"
    run.steps[1].arguments = {"command": "./gradlew assemble && python -m pytest -q"}
    run.steps[1].observation += "..\n2 passed in 0.10s\n"
    assert passed(run.steps[1])
    assert verified(run, reward_at_least=None)
