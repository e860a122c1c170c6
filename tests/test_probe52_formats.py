"""Format leftovers and the shared reading rules (probe FM3, round 52): each test a defect a user with files we had
not seen would hit, shown on a real file or one its own writer wrote (the fixture's ``SOURCE.md`` says which)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from trajsearch.ingest import sources
from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Step, Trajectory
from trajsearch.runtime.curate import QualityRules, check
from trajsearch.ingest.adapters._common import ended_failing
from trajsearch.steps import is_test_run, passed, verified

FIXTURES = Path(__file__).parent / "fixtures"
ZSTD_CLI = FIXTURES / "zstd" / ".real"


def test_a_zstd_file_written_with_a_dictionary_is_told_as_needing_it() -> None:
    """``zstd -D codex.dict`` writes a sound file whose frame names the dictionary it needs (``DictID`` in its
    header); without it the decoder says "Dictionary mismatch", and trajsearch said "truncated or corrupt zstd",
    which sends the user looking for damage. It is told what it is, by the id, with the command that reads it."""
    written = ZSTD_CLI / "rollout-with-dictionary.jsonl.zst"
    told = (r"zstd written with a dictionary \(dictionary id 575650545\), which trajsearch is not given: "
            rf"{{}}decompress it first with that dictionary \(zstd -d -D DICTIONARY {re.escape(written.name)}\) "
            r"and ingest that")
    with pytest.raises(ValueError, match=told.format("")):
        detect_format(written)
    [parsed] = list(read_dump(written, fmt="codex-cli"))  # the format forced: the reader's own error
    assert re.fullmatch(told.format(""), parsed.error) and "corrupt" not in parsed.error
    [(_, _, error, _)] = list(sources.lines(written))
    assert error == parsed.error


HARBOR_COPILOT = FIXTURES / "atif" / ".real" / "harbor-0.26-cursor-copilot" / "hello-copilot-1070__Qm4Wd" / "agent"


def test_a_passing_cargo_test_run_verifies_the_run() -> None:
    """cargo's tally of a passing run counts what did not happen (``test result: ok. 2 passed; 0 failed; 0 ignored``):
    "0 failed" was read as a failure tally, so no Rust run was ever verified and curation turned every one away
    ("no verification step"). The real Copilot CLI run (Harbor 0.26) fixes a failing test, then ``cargo test`` passes."""
    [parsed] = list(read_dump(HARBOR_COPILOT / "trajectory.json"))
    run = parsed.trajectory
    tests = [step for step in run.steps if is_test_run(step)]
    assert [passed(step) for step in tests] == [False, True]  # the first run failed (exit 101), the last passed
    assert verified(run, reward_at_least=None)
    assert "no verification step" not in " ".join(check(run, QualityRules(require_success=False)))


_LOGGING_TESTS = '''
import logging, unittest

logging.basicConfig()  # Python's default format: ERROR:root:...


class Import(unittest.TestCase):
    def test_a_bad_row_is_skipped(self):
        logging.error("row 17: missing id, skipped")
        try:
            int("x")
        except ValueError:
            logging.exception("row 18 unreadable")


if __name__ == "__main__":
    unittest.main()
'''


def test_a_passing_unittest_run_that_logs_errors_verifies_the_run(tmp_path: Path) -> None:
    """unittest does not capture logging: a passing run prints the code's own ``ERROR:root:row 17 ... skipped`` and
    a ``logger.exception``'s traceback before its ``OK``, which read as a failed test run. Only what comes after
    the runner's last word of passing tells that it crashed; a failed run still is one. The outputs are unittest's
    own, run here."""
    (tmp_path / "test_import.py").write_text(_LOGGING_TESTS)
    done = subprocess.run([sys.executable, "-m", "unittest", "test_import"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode == 0 and "ERROR:root:row 17" in output and "Traceback" in output and output.strip()[-2:] == "OK"
    (tmp_path / "test_import.py").write_text(_LOGGING_TESTS.replace('int("x")', 'self.assertEqual(1, 2)'))
    failed = subprocess.run([sys.executable, "-m", "unittest", "test_import"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=600)
    assert failed.returncode == 1
    command = {"command": "python -m unittest test_import"}
    runs = [Trajectory(trajectory_id=f"unittest-{n}", tenant="default", task="import the rows", steps=[
        Step(index=0, action="bash", arguments=command, observation=text)]) for n, text in
        enumerate((output, failed.stdout + failed.stderr, output + "Traceback (most recent call last):\n  File "
                   '"x.py", line 1\nKeyError: 1\n'))]
    assert [verified(run, reward_at_least=None) for run in runs] == [True, False, False]


RUNNERS = FIXTURES / "test-runners"


@pytest.mark.parametrize("command, output", [
    ("npx jest", "jest"), ("npx mocha", "mocha"), ("node --test", "node-test"), ("npm test", "node-test"),
    ("cargo test", "cargo")])
def test_a_javascript_or_rust_test_run_is_read_by_its_runners_own_tally(command: str, output: str) -> None:
    """Only Python's, npm's and a few more runners' commands were test runs: a run that ended on a passing ``npx
    jest``, ``npx mocha`` or ``node --test`` was never verified. And Node's TAP tally was read by its ``ok`` lines
    alone: ``npm test`` running ``node --test`` with a test failing (``not ok 1 - adds``, ``# fail 1``) passed wherever
    the exit code was not kept. Each runner's own output, passing and failing (``test-runners/SOURCE.md``)."""
    runs = {verdict: Trajectory(trajectory_id=f"{output}-{verdict}", tenant="default", task="make the tests pass",
                                steps=[Step(index=0, action="bash", arguments={"command": command},
                                            observation=(RUNNERS / f"{output}-{verdict}.txt").read_text())])
            for verdict in ("pass", "fail")}
    assert all(is_test_run(run.steps[0]) for run in runs.values())
    assert verified(runs["pass"], reward_at_least=None) and not verified(runs["fail"], reward_at_least=None)


def test_a_runners_config_file_read_is_no_test_run() -> None:
    """A runner's name is a test run as a program, not in a file's name read after the tests passed."""
    assert not is_test_run(Step(index=0, action="bash", arguments={"command": "cat jest.config.js"}))
    assert is_test_run(Step(index=0, action="bash", arguments={"command": "npx vitest run"}))


GEMINI_RUNS = FIXTURES / "gemini-cli" / ".real" / "probe-fm52"


@pytest.mark.parametrize("name, error", [
    ("npm-test-jest-failed", "Tests: 1 failed, 1 passed, 2 total"),
    ("node-test-failed", "not ok 1 - adds: Expected values to be strictly equal: 2 !== 3"),
    ("npx-mocha-failed", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 2 !== 3"),
    ("node-test-passed", None)])
def test_a_javascript_test_run_that_failed_in_a_gemini_stream_is_a_failed_step(name: str, error: str | None) -> None:
    """Gemini CLI's stream-json shows a shell command's output alone, no exit code: only words a failure ends on
    tell. ``npm test`` over jest (its summary, then npm's notices) and ``node --test`` (TAP's counts) that failed
    ended on their summaries, ``npx mocha`` on its report of the failure: each read as a passing step. Real gemini-cli 0.61.0 output (``probe-fm52``)."""
    [parsed] = list(read_dump(GEMINI_RUNS / f"{name}.jsonl"))
    shell = [step for step in parsed.trajectory.steps if step.action == "run_shell_command"]
    assert [step.error for step in shell] == [error]


def _run_of(command: str, output: str) -> Trajectory:
    """A run whose one step ran ``command`` and printed ``output`` (no exit code kept, as many converters do)."""
    return Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=0, action="bash", arguments={"command": command}, observation=output)])


@pytest.mark.parametrize("command, name, verdict", [
    ("go test ./...", "go-fail", False), ("go test -v ./...", "go-fail-v", False),
    ("dotnet test -v m --nologo", "dotnet-fail", False), ("dotnet test -v m --nologo", "dotnet-pass", True),
    ("dotnet test", "vstest-fail", False), ("dotnet test", "vstest-pass", True),
    ("bun test", "bun-fail", False), ("bun test", "bun-pass", True), ("bundle exec rspec", "rspec-fail", False),
    ("bundle exec rspec", "rspec-pass", True),
    ("npm test", "node-test-todo-pass", True), ("npx jest", "jest-pass-titled", True), ("npx mocha", "mocha-none", False),
    ("npx tape test/*.js", "tape-fail", False)])
def test_a_runners_own_tally_tells_a_failed_run_from_a_passing_one(command: str, name: str, verdict: bool) -> None:
    """Each runner listed as a test command is read by its own tally. A failing ``go test ./...`` read verified:
    another package's ``ok  pkg`` line follows the failed one's, and go's column-0 ``--- FAIL:`` / ``FAIL`` lines
    were no failure. A failing ``dotnet test`` read verified (``Failed!  - Failed:     1, Passed: ...``: its
    ``Passed`` a word of passing, its failure no tally read); ``Test Run Failed.`` likewise; bun's `` 1001 fail``
    was not read, nor its `` 1 pass``. TAP's ``not ok ... # TODO`` is no failure (the TAP spec; ``# fail 0``), a
    jest test titled ``reports 2 failing jobs`` is not mocha's ``2 failing``, mocha's ``0 passing`` ran nothing.
    Real outputs (``test-runners/SOURCE.md``)."""
    run = _run_of(command, (RUNNERS / f"{name}.txt").read_text())
    assert is_test_run(run.steps[0])
    assert verified(run, reward_at_least=None) is verdict


@pytest.mark.parametrize("command", [
    "grep -n jest package.json", "cat phpunit.xml.dist", "cat .rspec", "ls node_modules/.bin | grep -E 'jest|mocha'",
    "npm install --save-dev mocha", "pip install pytest", "git commit -m 'run pytest on CI'", "echo pytest",
    "cat > run.sh <<EOF\npytest -q\nEOF"])
def test_reading_or_installing_a_runner_is_no_test_run(command: str) -> None:
    """A runner's name is a test run only as what a command part runs: reading its config (``cat .rspec``), grepping
    for it, installing it came after a passing ``npm test`` as the last "test run", and unverified the run."""
    run = Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=0, action="bash", arguments={"command": "npm test"}, observation=(RUNNERS / "jest-pass.txt").read_text()),
        Step(index=1, action="bash", arguments={"command": command}, observation="")])
    assert not is_test_run(run.steps[1])
    assert verified(run, reward_at_least=None)


@pytest.mark.parametrize("command", [
    "cd /repo && python -m pytest tests/ 2>&1 | tail -20", "timeout 300 python3 -m pytest -x", "PYTHONPATH=. pytest > out.txt",
    "python tests/runtests.py auth", "bash -c 'cd /x && pytest'", "pip install -e . && pytest -q", "uv run pytest",
    "source venv/bin/activate && tox -e py39", "npm run test", "npx jest", "go test ./...", "make test",
    "cd /testbed && find pydicom/tests -name 'test_json*.py' -exec python -m pytest -q {} +",
    "find tests -name 'test_*.py' -exec pytest -q {} \\;", "git bisect run pytest -x", "git rebase -x 'pytest -q' main"])
def test_a_runner_run_through_a_wrapper_or_after_other_commands_is_a_test_run(command: str) -> None:
    """Also a runner ``find`` or ``git`` runs (``-exec``, ``bisect run``, ``rebase -x``): those programs only read
    otherwise, and a failing ``find ... -exec pytest`` had been no test run, so the passing one before it verified
    the run (review R2-FFM, a real mini-swe-agent run of pydicom-1694 with that step added)."""
    assert is_test_run(Step(index=0, action="bash", arguments={"command": command}))


def test_a_failing_test_run_find_runs_is_the_runs_last_word() -> None:
    passing, failing = (RUNNERS / "jest-pass.txt").read_text(), "F.\n1 failed, 7 passed in 0.31s\n"
    run = Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=0, action="bash", arguments={"command": "npm test"}, observation=passing),
        Step(index=1, action="bash", arguments={"command": "find tests -name 'test_*.py' -exec pytest -q {} +"},
             observation=failing)])
    assert not verified(run, reward_at_least=None)
    assert not any(is_test_run(Step(index=0, action="bash", arguments={"command": command})) for command in (
        "find . -name '*.py' -exec grep -l pytest {} +", "find . -name test_x.py", "git log --grep pytest"))


def test_a_jest_run_in_a_terminal_is_read_through_its_colours() -> None:
    """Jest in a terminal (a pty, as tmux-driven agents run it) colours its tally: ``Tests: ESC[31m1 failed`` has no
    word boundary before the count, and only its ``1 passed`` was read: the failed run passed. Real jest 30.5.2
    output under ``script``: the RFM3 reviewer's ``jest-fail-tty.txt`` tally lines."""
    output = ("\x1b[1mTest Suites: \x1b[22m\x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, \x1b[1m\x1b[32m1 passed\x1b[39m"
              "\x1b[22m, 2 total\r\n\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, \x1b[1m"
              "\x1b[32m1 passed\x1b[39m\x1b[22m, 2 total\r\n\x1b[1mSnapshots:   \x1b[22m0 total\r\n")
    assert not verified(_run_of("npx jest", output), reward_at_least=None)
    assert verified(_run_of("npx jest", output.replace("31m1 failed", "31m0 failed").replace("1 passed", "2 passed")),
                    reward_at_least=None)


@pytest.mark.parametrize("name, said", [
    ("jest-suite-fail", "Test Suites: 1 failed, 1 passed, 2 total"),
    ("pnpm-jest-fail", "Tests: 1 failed, 2 passed, 3 total"),
    ("npm-mocha-fail-notice", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: 1 !== 5"),
    ("tape-fail", "not ok 2 should be strictly equal"),
    ("node-test-todo-pass", None), ("jest-pass-titled", None)])
def test_a_javascript_runners_failure_is_read_where_no_exit_code_was_kept(name: str, said: str | None) -> None:
    """Where no exit code was kept, a failed run is told by what it ends on: jest's suite that failed to load (only
    ``Test Suites: 1 failed``, ``Tests: 2 passed``), pnpm's ``[ELIFECYCLE] Test failed.`` after jest's summary,
    npm's notices after mocha's report, tape's ``# fail  1`` (two spaces) each read as a command that succeeded.
    tape's is said by its failed test's line, which has no `` - `` before the name (``not ok 2 should be strictly
    equal``: DEC32), its YAML block no message (``operator``, ``expected``, ``actual``)."""
    assert ended_failing((RUNNERS / f"{name}.txt").read_text()) == said


def test_a_zstd_file_written_with_a_dictionary_it_does_not_name_is_told_it_may_need_one() -> None:
    """``zstd -D dict --no-dictID`` leaves the dictionary's id out of the frame, and the decoder says only "Data
    corruption detected", as of a damaged file: the message says both (a user who compressed with a dictionary
    knows which it is)."""
    written = ZSTD_CLI / "rollout-with-unnamed-dictionary.jsonl.zst"
    said = (r"truncated or corrupt zstd{}: Unable to decompress Zstandard data: Data corruption detected \(truncated, "
            r"corrupt, or written with a dictionary its header does not name: zstd -D DICTIONARY --no-dictID\)")
    with pytest.raises(ValueError, match=said.format("")):
        detect_format(written)
    [parsed] = list(read_dump(written, fmt="codex-cli"))
    assert re.fullmatch(said.format(" stream after line 0"), parsed.error)


@pytest.mark.parametrize("command, output", [
    ("cargo test test_fo", "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; "
                           "2 filtered out; finished in 0.00s\n"),
    ("npx jest -t nothing", "Test Suites: 2 skipped, 0 of 2 total\nTests:       2 skipped, 0 passed, 2 total\n"),
    ("node --test", "# tests 0\n# suites 0\n# pass 0\n# fail 0\n")])
def test_a_test_run_that_ran_nothing_is_no_pass(command: str, output: str) -> None:
    """``0 passed`` was a word of passing (pytest's ``PASSED`` was matched in any case): a ``cargo test`` whose filter
    was mistyped, running nothing, verified a run (review RALL-A). A count of 0 is none, in every runner's tally."""
    assert not verified(_run_of(command, output), reward_at_least=None)
