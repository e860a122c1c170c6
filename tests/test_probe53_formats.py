"""Format leftovers and the reading of steps (probe FM4, round 53): each test a defect a user with files we had not
seen would hit, shown on a real file or one its own writer wrote (the fixture's ``SOURCE.md`` says which)."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Step, Trajectory
from trajsearch.steps import is_test_run, passed, verified

from adapter_support import gemini_shell_step

FIXTURES = Path(__file__).parent / "fixtures"
RUNNERS = FIXTURES / "test-runners"
GEMINI_RUNS = FIXTURES / "gemini-cli" / ".real" / "probe-fm53"


@pytest.mark.parametrize("name, error", [
    ("go-test-failed", "--- FAIL: TestAdd (0.00s): a_test.go:7: Add(2, 2) = 0, want 4"),
    ("mvn-test-failed", "org.opentest4j.AssertionFailedError: expected: <4> but was: <0>"),
    ("yarn-test-failed", "Tests: 1 failed, 1 passed, 2 total"),
    ("ctest-failed", "50% tests passed, 1 tests failed out of 2")])
def test_a_go_maven_or_yarn_test_run_that_failed_in_a_gemini_stream_is_a_failed_step(name: str, error: str) -> None:
    """Gemini CLI's stream-json shows a shell command's output alone, no exit code: only the words a failure ends on
    tell, and those of ``go test`` (``FAIL``), Maven (its ``[Help 1]`` link after ``BUILD FAILURE``), Yarn 1
    (``error Command failed with exit code 1.``, ``info Visit ...`` after Jest's summary) and CTest (``Errors while
    running CTest``, where the log is and how to rerun) were not read: each failed
    test run was a step without error, which failure warnings and the run's error never showed. Real gemini-cli 0.61.0
    output (``probe-fm53``)."""
    [parsed] = list(read_dump(GEMINI_RUNS / f"{name}.jsonl"))
    [shell] = [step for step in parsed.trajectory.steps if step.action == "run_shell_command"]
    assert shell.error == error
    assert is_test_run(shell) and not passed(shell)


def _run_of(command: str, output: str) -> Trajectory:
    """A run whose one step ran ``command`` and printed ``output`` (no exit code kept, as many converters do)."""
    return Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=0, action="bash", arguments={"command": command}, observation=output)])


@pytest.mark.parametrize("command, name, verdict", [
    ("mvn -o -B test", "mvn-fail", False), ("mvn -o -B test", "mvn-pass", True), ("./mvnw test", "mvn-pass", True),
    ("./gradlew test", "gradle-fail", False), ("gradle test", "gradle-fail-old", False),
    ("./gradlew :app:testDebugUnitTest", "gradle-pass", True),
    ("dotnet test", "mtp-fail", False), ("dotnet test", "mtp-pass", True)])
def test_a_jvm_or_testing_platform_run_is_read_by_its_own_tally(command: str, name: str, verdict: bool) -> None:
    """Only ``mvn test`` and ``gradle test`` written so were test runs: ``mvn -B test``, ``./mvnw test``, ``./gradlew
    test`` (as most projects run them) were not, so a Java run was never verified; and Maven's passing tally
    (``Tests run: 2, Failures: 0, Errors: 0``) and Gradle's ``BUILD SUCCESSFUL`` (its test task prints no tally when
    all pass) were no word of passing. Microsoft.Testing.Platform's passing summary was read failed: ``total: 53``
    over ``failed: 0`` read as a count of 53 failed. Real outputs (``test-runners/SOURCE.md``)."""
    run = _run_of(command, (RUNNERS / f"{name}.txt").read_text())
    assert is_test_run(run.steps[0])
    assert verified(run, reward_at_least=None) is verdict


@pytest.mark.parametrize("failed, passing", [
    ("bun-fail", "bun-pass"), ("rspec-fail", "rspec-pass"), ("dotnet-fail", "dotnet-pass"),
    ("vstest-fail", "vstest-pass"), ("mtp-fail", "mtp-pass"), ("mvn-fail", "mvn-pass"), ("gradle-fail", "gradle-pass"),
    ("gradle-fail-old", "gradle-pass"), ("go-fail", None), ("go-fail-v", None), ("ctest-fail", None),
    ("phpunit-fail", "phpunit-pass")])
def test_a_failed_runners_output_without_an_exit_code_reads_failed(failed: str, passing: str | None,
                                                                    tmp_path: Path) -> None:
    """Where no exit code was kept (Gemini CLI's stream-json, converters of OpenHands SDK and opencode runs), a
    command's failure is read from the words its output ends on: bun's, RSpec's, ``dotnet test``'s (vstest's and
    Microsoft.Testing.Platform's), Maven's, Gradle's, go's, CTest's and PHPUnit's closing tallies were not such
    words, so their failed runs were steps without error; their passing runs stay without one. Each output as a
    Gemini CLI stream carries a shell call's: the real ``go-test-failed`` stream with its output replaced."""
    assert _gemini_shell_error((RUNNERS / f"{failed}.txt").read_text(), tmp_path) is not None
    if passing:
        assert _gemini_shell_error((RUNNERS / f"{passing}.txt").read_text(), tmp_path) is None


def _gemini_shell_error(output: str, folder: Path) -> str | None:
    """The error read for a shell call that printed ``output`` in gemini-cli 0.61.0's stream-json."""
    return gemini_shell_step(output, folder).error


@pytest.mark.parametrize("fixture, edit", [
    (FIXTURES / "codex-cli" / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl",
     ('"type":"function_call","name":"shell",', '"type":"function_call",')),
    (FIXTURES / "openai-agents" / "responses.jsonl", ('"type": "function", "name": "get_weather",', '"type": "function",'))])
def test_a_call_whose_tool_the_file_does_not_name_is_no_tool(fixture: Path, edit: tuple[str, str],
                                                              tmp_path: Path) -> None:
    """Codex CLI's and the OpenAI Agents SDK's readers named a call without a name ``function``, a name no runtime
    lists and ``actions.NOT_TOOLS`` did not hold: counted as a tool the agent used, it made a run read as needing a
    tool no longer available. Neither writer omits the name (codex-rs's ``ResponseItem::FunctionCall`` requires it,
    the SDK's ``FunctionSpanData`` takes it), so only a file cut or written by another tool has such a call: it is
    now the placeholder every adapter gives one (``actions.UNNAMED_TOOL``). The real files with one name removed."""
    from trajsearch.actions import UNNAMED_TOOL, tools_of

    text = fixture.read_text()
    assert edit[0] in text
    copy = tmp_path / fixture.name
    copy.write_text(text.replace(edit[0], edit[1], 1))
    runs = [parsed.trajectory for parsed in read_dump(copy) if parsed.trajectory is not None]
    actions = [step.action for run in runs for step in run.steps]
    assert UNNAMED_TOOL in actions and "function" not in actions
    assert all(UNNAMED_TOOL not in tools_of(run.tools_used) for run in runs)


# Review RFM4 of probe 53 (FRFM4): the JVM's test runs and the runners' closing words where no exit code was kept.

_GRADLE_OK = "BUILD SUCCESSFUL in 4s\n5 actionable tasks: 2 executed, 3 up-to-date\n"


@pytest.mark.parametrize("command", [
    "./gradlew build -x test", "gradle build --exclude-task test", "./gradlew check -x test", "./gradlew testClasses",
    "./gradlew dependencies --configuration testRuntimeClasspath", "./gradlew help --task test",
    "./gradlew test --dry-run", "mvn -pl test-utils -am install -DskipTests",
    "mvn -f testing/pom.xml package -DskipTests",
    "mvn -B -Dmaven.test.skip=true verify", "mvn checkstyle:check", "mvn spotless:check", "mvn dependency:tree",
    "./gradlew assembleDebugAndroidTest", "./gradlew :app:installDebugAndroidTest"])  # (build a test: review RALL-A)
def test_a_maven_or_gradle_command_that_runs_no_test_does_not_verify_a_run_whose_tests_failed(command: str) -> None:
    """A word ``test`` of Maven's or Gradle's was taken for the task that runs the tests wherever it stood: as an
    option's value (``-x test``, ``--configuration testRuntimeClasspath``, ``-pl test-utils``), in another task's name
    (``testClasses``) or another plugin's goal (``spotless:check``), with the tests skipped (``-DskipTests``,
    ``--dry-run``). Such a command after a failed ``./gradlew test`` was the run's last test run, and its ``BUILD
    SUCCESSFUL`` verified the run. Gradle's real failed test run (``gradle-fail.txt``) then the command."""
    run = Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=0, action="bash", arguments={"command": "./gradlew test"},
             observation=(RUNNERS / "gradle-fail.txt").read_text()),
        Step(index=1, action="bash", arguments={"command": command},
             observation=_GRADLE_OK if "gradle" in command else "[INFO] BUILD SUCCESS\n")])
    assert not is_test_run(run.steps[1])
    assert verified(run, reward_at_least=None) is False


@pytest.mark.parametrize("command, name, verdict", [
    ("mvn -B install", "mvn-pass", True), ("mvn -B clean package", "mvn-fail", False),
    ("./gradlew build", "gradle-fail", False), ("./gradlew test --tests com.x.CalcTest", "gradle-fail", False),
    ("mvn -Dtest=CalcTest test", "mvn-pass", True), ("bash -c 'cd app && ./gradlew test'", "gradle-fail", False),
    ("docker exec app mvn -B verify", "mvn-pass", True)])
def test_maven_and_gradle_phases_that_run_the_tests_are_test_runs(command: str, name: str, verdict: bool) -> None:
    """``mvn install`` / ``package`` run surefire's tests before they package (Maven's lifecycle), ``./gradlew build``
    depends on ``check`` and so on ``test``: test runs, read by their tallies; so a failed ``mvn package`` after a
    passing ``mvn test`` is the run's last word. Real Maven 3.8.7 / Gradle outputs (``test-runners/SOURCE.md``)."""
    run = _run_of(command, (RUNNERS / f"{name}.txt").read_text())
    assert is_test_run(run.steps[0])
    assert verified(run, reward_at_least=None) is verdict


@pytest.mark.parametrize("output, verdict", [
    ("> Task :compileJava\n> Task :test NO-SOURCE\n\n" + _GRADLE_OK, False),
    ("> Task :test UP-TO-DATE\n\n" + _GRADLE_OK, True), (_GRADLE_OK, False)])
def test_gradles_build_successful_is_a_pass_only_where_a_test_task_ran(output: str, verdict: bool) -> None:
    """``BUILD SUCCESSFUL`` ends every Gradle build that did not fail, one whose test task found no tests
    (``NO-SOURCE``) too: it says the tests passed only under a test task's line (``gradle-pass.txt``'s ``> Task
    :app:testDebugUnitTest``; up to date: they passed on these inputs before));
    where Gradle wrote no task line at all (its rich console, in a terminal), no line says a test ran
    (``test_runner_leftovers.py``)."""
    assert verified(_run_of("./gradlew test", output), reward_at_least=None) is verdict


@pytest.mark.parametrize("name, error", [
    ("mvn-fail-resume", "org.opentest4j.AssertionFailedError: expected: <4> but was: <0>"),
    ("gradle9-fail", "Execution failed for task ':generateGitProperties'."),
    ("gradle-fail-cc", "Cannot resolve service by type for type 'BaseCountingService' when there are two or more "
                       "instances. Please also provide a service name. Instances found: altCountingService: "
                       "SubCountingService2, countingService: SubCountingService1."),
    ("bun-fail-error", "error: Cannot find module './qualityProfiles' from"),
    ("rspec-error-outside", "NameError: uninitialized constant Matrices")])
def test_a_failed_jvm_bun_or_rspec_run_ending_on_more_words_reads_failed(name: str, error: str, tmp_path: Path) -> None:
    """Where no exit code was kept (a Gemini CLI stream), the words a failed run ends on were read only as their
    plainest form: Maven's multi-module failure ends after its ``[Help 1]`` link on ``mvn <args> -rf :core``, Gradle
    with the configuration cache on ``Configuration cache entry stored.``, Gradle 9 on its deprecation notice and
    tasks line after ``BUILD FAILED``, bun 1.x on `` 1 error`` between `` 1 fail`` and ``Ran 1 test``, RSpec on ``0
    examples, 0 failures, 1 error occurred outside of examples`` (a spec file that did not load): each a step without
    error. Real outputs (``test-runners/SOURCE.md``)."""
    assert _gemini_shell_error((RUNNERS / f"{name}.txt").read_text(), tmp_path) == error


@pytest.mark.parametrize("coverage", [
    "Coverage report generated for RSpec to /app/coverage. 120 / 130 LOC (92.31%) covered.",
    "Coverage report generated for RSpec to /app/coverage.\nLine Coverage: 98.27% (910 / 926)"])
def test_rspecs_coverage_line_after_a_failed_run_and_an_exceptions_message_are_read(coverage: str,
                                                                                     tmp_path: Path) -> None:
    """SimpleCov prints ``Coverage report generated for RSpec to ...`` after RSpec's rerun list (0.22 on two lines,
    ``Line Coverage: ...`` under it), so a failed run with coverage on (most Rails apps) read as no failure; and
    RSpec's ``NoMethodError:`` was its error without the message under it. SimpleCov's lines as its users quote them
    (``test-runners/SOURCE.md``)."""
    output = (RUNNERS / "rspec-fail.txt").read_text().rstrip("\n") + f"\n{coverage}\n"
    expected = "NoMethodError: undefined method `=~' for #<Pathname:0x00005588a608e420>"
    assert _gemini_shell_error(output, tmp_path) == expected


def test_a_passing_run_that_prints_failed_and_a_count_stays_passed() -> None:
    """``failed: 1`` on a line of its own was a failure for any runner (Microsoft.Testing.Platform's count, which its
    ``Test run summary: Failed!`` already says): a ``pytest -s`` whose code printed its own stats read failed."""
    output = "stats\n  failed: 1\n  total: 3\n.\n1 passed in 0.01s\n"
    assert verified(_run_of("pytest -q -s", output), reward_at_least=None)


def test_swe_agents_stops_of_the_agent_are_the_ones_chosen() -> None:
    """``AGENT_STOPS`` is derived from ``actions.STOP_ACTIONS``: a stop added there becomes a verdict on the agent
    (a failure, not an infrastructure error) unless it is added to ``INFRA_STOPS`` too. Pinned, so that whoever adds
    one makes that choice where this test fails, not silently."""
    from trajsearch.ingest.adapters.swe_agent import AGENT_STOPS, INFRA_STOPS, outcome_for

    assert set(AGENT_STOPS) == {"early_exit", "exit_command", "exit_command_timeout", "exit_context", "exit_cost",
                                "exit_forfeit", "exit_format", "exit_step_limit", "exit_total_execution_time"}
    assert INFRA_STOPS == {"exit_api", "exit_error"}
    assert outcome_for("exit_environment_error").value == "infra_error"


def test_yarns_own_error_is_the_error_of_a_yarn_command_that_ran_no_script(tmp_path: Path) -> None:
    """Yarn 1 ends on ``info Visit https://yarnpkg.com/...`` after its own ``error ...`` too, with no ``error Command
    failed`` where no script ran (``yarn test`` with no ``test`` script): the step's error was a made-up ``yarn: the
    script failed``, not yarn's words. A real Yarn 1.15.2 output (``test-runners/SOURCE.md``)."""
    output = (RUNNERS / "yarn-no-script.txt").read_text()
    assert _gemini_shell_error(output, tmp_path) == 'error Command "test" not found.'
