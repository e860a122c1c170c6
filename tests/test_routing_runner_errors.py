"""Round 21, GEN2: ``auto`` routing of program lines that read like a title or a sentence (issue 11).

Real lines only: tests/fixtures/runner-errors holds failure lines of compilers, build tools, test runners and shells,
run on this machine or quoted from their users' reports (its SOURCE.md names each); the task texts are real tasks of
tests/fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode

FIXTURES = Path(__file__).parent / "fixtures"
LINES = [line for line in (FIXTURES / "runner-errors" / "lines.txt").read_text().splitlines() if line.strip()]

#: Program lines that are plain English sentences, no sign in them of a program's but their provenance: routed as
#: prose for now (a rule taking them would take task texts with them).
NOT_YET = {
    "The system cannot find the path specified.",
    "Check the spelling of the name, or if a path was included, verify that the path is correct and try again.",
    "The build failed. Fix the build errors and run again.",
    "Run with --info or --debug option to get more log output. Run with --scan to get full insights.",
    "> Compilation failed; see the compiler error output for details.",
    "Errors while running CTest",
    "operable program or batch file.",
    "'userid' 不是内部或外部命令，也不是可运行的程序",
}


@pytest.mark.parametrize("line", [line for line in LINES if line not in NOT_YET])
def test_a_program_failure_line_is_a_log_line(line):
    """Bug (round 21, GEN2): 19 of the 73 lines went to dense, read as titles or sentences; these 10 of them by a
    program's shape a general rule tells (the 8 of :data:`NOT_YET` are plain sentences; rustc's ``try `rustc
    --explain E0308``` is a pointer at help since round 22): Gradle's ``Execution failed for
    task ':compileJava'.``, ctest's ``33% tests passed, 2 tests failed out of 3``, Windows cmd's ``'C:\\Program' is
    not recognized as an internal or external command, ...``, PowerShell's ``foo: The term 'foo' is not recognized
    ...``, the Java launcher's ``Erreur : impossible de trouver ou charger la classe principale X`` / ``Erro: ...``."""
    assert resolve_mode("auto", line) == "hybrid"


@pytest.mark.parametrize("line", ["Test run summary: Failed!", "50% tests passed, 1 tests failed out of 2",
                                  "com.adaptavist.cloud.interviews.DynamicModulesRegistrarSpec > should return a "
                                  "promise of true if a dynamic module is registered successfully FAILED"])
def test_a_runners_summary_or_test_report_is_a_log_line(line):
    """tests/fixtures/test-runners' held-out outputs (Microsoft.Testing.Platform, ctest, Gradle's test events):
    an outcome under its label, a tally with a noun between count and outcome, a test reported FAILED."""
    assert resolve_mode("auto", line) == "hybrid"


def _task(path: str) -> str:
    """The task of the first run the mini-swe-agent fixture at ``path`` holds."""
    from trajsearch.ingest.read import read_dump

    return next(p.trajectory.task for p in read_dump(FIXTURES / path, tenant="t") if p.error is None)


def test_an_issue_titled_with_an_english_error_label_stays_prose():
    """A real SWE-bench issue whose title is ``Error : a bytes-like object is required, not 'MultiValue'``: a writer's
    blank before the colon (an English program prints none; a French catalogue prints ``Erreur :``), and a quoted
    name that is no path: the issue is searched as prose, with its title alone too."""
    task = _task("mini-swe-agent/.real/pasted-failure-ends/pydicom__pydicom-1413.traj.json")
    assert task.startswith("Error : a bytes-like object")
    assert resolve_mode("auto", task) == "dense"
    assert resolve_mode("auto", task.splitlines()[0]) == "dense"


@pytest.mark.parametrize("task", [
    "You're a helpful agent named 'weather_agent'.",  # tests/fixtures' real prompts quoting a name
    "Search the web for 'example' and summarize.",
    "hello.py must print 'hello world' instead of 'hello'.",
])
def test_a_task_quoting_a_name_stays_prose(task):
    assert resolve_mode("auto", task) == "dense"


@pytest.mark.parametrize("title", [
    "All tests in Gradle build are SKIPPED",  # junit-team/junit-framework#2736
    "SkipException results in FAILED test instead of SKIPPED",  # telekom/testerra#161
    "skiped tests are now reported as SKIPPED",  # OndraZizka/junitdiff#3
    "404 response on requests to root '/'",  # Bernie-2016/ground-control#272
    "CI pipeline status: failed",  # the rest: titles the review RGEN2 gave
    "Route '/' returns 404 when APPEND_SLASH is set",
    "FORCE_SCRIPT_NAME set to '/' breaks reverse()",
    "Fix 3 type errors in utils module",
    "sqlite ':memory:' database not shared across threads",
    "Mark test as SKIPPED",
])
def test_an_issue_title_naming_an_outcome_a_tally_or_a_quoted_path_stays_prose(title):
    """Bug (round 21, RGEN2): the rules for program lines took real issue titles to hybrid: an outcome in capitals at
    the end (a runner's shape before it is what tells Gradle's ``Spec > should ... FAILED``), an outcome under a label
    (MTP prints ``Test run summary: Failed!``), a tally with any noun (ctest's is ``tests``), a quoted root path
    anywhere (cmd opens its message with one, Gradle ends its sentence with a task path). The runner lines above stay
    hybrid."""
    assert resolve_mode("auto", title) == "dense"
