"""Format leftovers and the reading of steps (probe FM4, round 53): each test a defect a user with files we had not
seen would hit, shown on a real file or one its own writer wrote (the fixture's ``SOURCE.md`` says which)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Step, Trajectory
from trajsearch.steps import is_test_run, passed, verified

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
    events = [json.loads(line) for line in (GEMINI_RUNS / "go-test-failed.jsonl").read_text().splitlines()]
    for event in events:
        if event.get("type") == "tool_result":
            event["output"] = output.strip()  # as gemini-cli shows it: trimmed
    path = folder / "stream.jsonl"
    path.write_text("".join(json.dumps(event) + "\n" for event in events))
    [parsed] = list(read_dump(path, fmt="gemini-cli"))
    [shell] = [step for step in parsed.trajectory.steps if step.action == "run_shell_command"]
    return shell.error


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
