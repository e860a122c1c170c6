"""Step classification shared by formatting, curation and the indexer: reads, retries, verification.

Definitions (each a plain rule, so a reviewer can argue with it):
- a *write* changes state: ``sed -i``, a redirect into a file, ``cp``/``mv``/``rm``,
  ``pip install``, ``git apply`` ..., or a tool named like ``edit``/``update``/``book``;
- a *removal* is a shell command made only of ``rm``/``rmdir`` (and ``cd``): clean-up;
- a *read* only looks at state: a shell command starting with a read-only program
  (``cat``, ``ls``, ``grep``, ``sed -n`` ...) or a tool named like ``get_*``,
  ``search_*``, ``list_*``, ``view``, ``read*``;
- a *retry* repeats the exact action + arguments of an earlier step with no
  state-changing (non-read, different) step in between: the same thing again,
  nothing changed;
- a run is *verified* when its last test-runner step passed (``pytest``,
  ``unittest``, ``npm test`` ... whose output shows passes and no failures), or
  the environment rewarded it at or above a threshold (tau-bench style rewards).
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Iterable

from .actions import ran
from .memo import per_call
from .model import Step, Trajectory
from .touched import _READ_ONLY, _READERS, _SEARCHERS, _segments, _words, command_line, program_words

_READ_PROGRAMS = re.compile(
    r"^\s*(?:cd\s+\S+\s*&&\s*)?(cat|ls|ll|head|tail|less|more|grep|rg|egrep|find|tree|wc|nl|file|stat|pwd|"
    r"which|echo|git\s+(?:status|log|diff|show|grep)|sed\s+-n|awk)\b"
)
_READ_TOOLS = re.compile(r"^(get|search|list|find|read|view|show|lookup|fetch|open|describe)(_|$)|^(view|read|cat|ls)", re.I)
#: ``git restore`` writes its files back but with ``--staged`` (``-S``) and no ``--worktree`` (``-W``), in either
#: order: that only unstages them.
_WRITE_COMMAND = re.compile(
    r"\bsed\s+-i|(?<![<>2&])>{1,2}\s*[\w./-]|\btee\b|^\s*(?:cd\s+\S+\s*&&\s*)?(cp|mv|rm|mkdir|touch|patch|apply_patch|"
    r"git\s+(?:apply|checkout|commit|am|revert"
    r"|restore(?!(?=[^;&|\n]*\s(?:--staged|-S)\b)(?![^;&|\n]*\s(?:--worktree|-W)\b)))"
    r"|pip\s+install|npm\s+install|apt(?:-get)?\s+install)\b"
)
_WRITE_TOOLS = re.compile(
    r"(edit|write|create|update|replace|insert|delete|remove|patch|apply|cancel|book|modify|set|send|transfer)", re.I
)
#: The parts of a shell command (split at ``&&``, ``||``, ``;`` and unescaped new lines); a removal, a ``cd``.
_COMMAND_PARTS = re.compile(r"&&|\|\||;|(?<!\\)\n")
_REMOVAL = re.compile(r"^\s*(?:rm|rmdir)\b")
_CD = re.compile(r"^\s*cd\b")
#: A test runner's command: Python's, JavaScript's (npm / yarn / pnpm / bun scripts, jest, vitest, mocha, tape, Node's
#: own ``node --test``), Go's, Rust's, Ruby's, PHP's, .NET's, CMake's, each read by its own tally (``_PASSED``,
#: ``_FAILED``). jest / vitest / mocha / tape not in a file's name (``jest.config.js``); and only as what a command
#: part runs (:func:`is_test_run`). Maven's and Gradle's (``_JVM_TOOL``) are read by their goals and tasks instead
#: (:func:`_jvm_runs_tests`): a word ``test`` of theirs may be an option's value (``-x test``).
#: A package manager's options before its script: one of those that take the next word as their value (npm's
#: ``-w``/``--workspace``, ``--prefix``; yarn's and bun's ``--cwd``; pnpm's ``--filter``/``-F``, ``-C``/``--dir``)
#: with it, or a flag (``-s``, ``--silent``, ``--if-present``, ``--key=value``): ``yarn --cwd test build`` runs no
#: test script (review RALL-A: the value ``test`` was read as one). pnpm's ``-w`` is a flag (``--workspace-root``).
#: Yarn runs a workspace's script as ``yarn workspace <name> [run] test`` (round 23: ``yarn workspace web test``
#: was no test run).
_PM_VALUED = r"--cwd|--prefix|--filter|-F|--dir|-C|--workspace|--registry|--loglevel|--userconfig|--cache"
_PM_OPTIONS = {pm: rf"(?:\s+(?:(?:{valued})\s+\S+|(?!(?:{valued})\s)-[\w-]+(?:=\S+)?))*"
               for pm, valued in (("npm", f"{_PM_VALUED}|-w"), ("other", _PM_VALUED))}
_TEST_COMMAND = re.compile(
    rf"\b(pytest|py\.test|unittest|tox|nox|(?:npm{_PM_OPTIONS['npm']}\s+(?:run{_PM_OPTIONS['npm']}\s+)?|"
    rf"(?:pnpm|yarn|bun){_PM_OPTIONS['other']}\s+(?:workspace\s+\S+{_PM_OPTIONS['other']}\s+)?"
    rf"(?:run{_PM_OPTIONS['other']}\s+)?)test|"
    r"deno\s+test|node\s+--test|"
    r"(?:jest|vitest|mocha|tape)(?![.\w-])|make\s+(?:test|check)|go\s+test|cargo\s+test|"
    r"rspec|phpunit|dotnet\s+test|ctest|run_tests?|runtests)\b"
)
#: Maven and Gradle, as their wrappers too (``./mvnw``, ``./gradlew``, as most projects run them): a program's name.
_JVM_TOOL = re.compile(r"(?:mvnw?|gradlew?)(?:\.cmd|\.bat)?")
_JVM_MENTION = re.compile(rf"(?<![\w.-]){_JVM_TOOL.pattern}\s")
#: Maven's lifecycle phases that run the tests (surefire's ``test`` and every phase after it: ``mvn package`` /
#: ``install`` run them first, unless skipped) and the plugin goals that are test runs (``surefire:test``,
#: ``failsafe:integration-test``; a goal by its plugin's coordinates too). Not ``checkstyle:check``,
#: ``spotless:check``, ``dependency:tree``: goals of other plugins.
_MAVEN_TESTS = re.compile(r"(?:test|prepare-package|package|pre-integration-test|integration-test|"
                          r"post-integration-test|verify|install|deploy)|"
                          r"(?:[\w.-]+:)*(?:maven-)?(?:surefire|failsafe)(?:-plugin)?(?::[\w.-]+)?:"
                          r"(?:test|integration-test)")
#: Maven's options that take the next word as their value (``-pl test-utils``, ``-f testing/pom.xml``, ``-D x=y``).
_MAVEN_VALUED = frozenset({"-pl", "--projects", "-f", "--file", "-D", "--define", "-P", "--activate-profiles", "-s",
                           "--settings", "-gs", "--global-settings", "-t", "--toolchains", "-rf", "--resume-from",
                           "-T", "--threads", "-l", "--log-file", "-b", "--builder", "-gt", "--global-toolchains"})
#: Maven's switches that skip the tests a phase would run.
_MAVEN_SKIPS = re.compile(r"-D(?:skipTests|maven\.test\.skip(?:\.exec)?)(?:=(?:true)?)?$")
#: Gradle's tasks that run tests: ``test``, a test task of its own name (``integrationTest``, ``jvmTest``, Android's
#: ``testDebugUnitTest``, ``connectedAndroidTest``), Kotlin Multiplatform's ``allTests``, and ``check`` / ``build``,
#: which depend on ``test``; a project's task by its path (``:app:test``). Not ``testClasses``, ``compileTestJava``,
#: nor Android's tasks that build a test rather than run it (``assembleDebugAndroidTest``, ``installDebugAndroidTest``,
#: ``javaPreCompileDebugAndroidTest``: review RALL-A).
_GRADLE_TEST_TASK = re.compile(r"(?::?[\w-]+:)*:?(?:test|(?!(?:assemble|install|uninstall|compile|javaPreCompile|pre|"
                               r"process|merge|generate|bundle|package|lint|kapt|ksp)[A-Z])[a-z]\w*Test|"
                               r"test\w+UnitTest|allTests)")
_GRADLE_TESTS = re.compile(rf"{_GRADLE_TEST_TASK.pattern[:-1]}|check|build|connectedCheck)")
#: Gradle's options that take the next word as their value (``-x test``, ``--configuration testRuntimeClasspath``,
#: ``--task test``, ``--tests com.x.FooTest``).
_GRADLE_VALUED = frozenset({"-x", "--exclude-task", "--configuration", "--task", "--tests", "-p", "--project-dir",
                            "-b", "--build-file", "-c", "--settings-file", "-I", "--init-script", "-g",
                            "--gradle-user-home", "-D", "--system-prop", "-P", "--project-prop", "--max-workers",
                            "--console", "--warning-mode", "--priority", "--include-build", "-F",
                            "--dependency-verification", "-M", "--write-verification-metadata",
                            "--project-cache-dir", "--dependency", "--scan-id"})
#: Programs that only read, print, search or edit files, or talk to git: a runner's name in their words is a file's or
#: a pattern's (``grep -n jest package.json``, ``cat .rspec``, ``git commit -m 'fix pytest'``), no test run.
_NO_RUNNER = _READERS | _SEARCHERS | _READ_ONLY | frozenset({
    "git", "sed", "vi", "vim", "nano", "emacs", "code", "man", "which", "type", "diff", "cp", "mv", "rm", "mkdir",
    "touch", "chmod", "file", "stat", "tree", "ll", "less", "more", "str_replace_editor"})
#: A package manager installing or adding a runner (``npm install --save-dev mocha``, ``pip install pytest``).
_INSTALLS = re.compile(r"^(?:\S*/)?(?:(?:npm|pnpm|yarn|bun)\s+(?:install|i|add|ci|remove|uninstall)\b|"
                       r"(?:pip\d*(?:\.\d+)?|python\d*(?:\.\d+)?\s+-m\s+pip|uv\s+pip)\s+install\b|"
                       r"(?:uv|poetry|pdm|cargo|dotnet)\s+add\b|(?:gem|brew|conda|apt|apt-get|go|cargo)\s+(?:install|get)\b|"
                       r"composer\s+require\b)")
#: A runner's word of passing: pytest's / jest's ``2 passed``, mocha's ``2 passing`` (a count of 0 is none: mocha's
#: ``0 passing`` ran nothing; pytest's ``PASSED`` in capitals only: ``0 passed`` of a typo'd ``cargo test`` filter is
#: none, review RALL-A; the count after anything but a digit: a tool result kept as JSON text reads ``..\\n2
#: passed``), unittest's ``OK``, the TAP tally of ``node --test`` (``# pass 2``), ctest's ``100%
#: tests passed``, go's ``ok  pkg``, dotnet's ``Passed!`` / ``Passed: 5``, bun's `` 2 pass``, rspec's ``3 examples, 0
#: failures``, Maven's (Surefire's) ``Tests run: 2, Failures: 0, Errors: 0`` (``Tests run: 0`` ran none). Gradle's
#: ``BUILD SUCCESSFUL`` is one only under a test task's line (``_GRADLE_TESTED``): its test task prints no tally when
#: every test passed, but ``BUILD SUCCESSFUL`` ends any build, one whose test task had no tests (``NO-SOURCE``) too.
_PASSED = re.compile(r"(?<!\d)[1-9]\d*\s+(?:passed|passing)\b|\bOK\b(?!\S)|\ball tests passed\b|"
                     r"(?-i:\bPASSED\b|\bPassed!|\bPassed:\s*[1-9])|\btests? passed\b|"
                     r"^# pass\s+[1-9]\d*$|^\s*[1-9]\d* pass$|\b[1-9]\d* examples?, 0 failures\b|"
                     r"(?-i:\bTests run: [1-9]\d*, Failures: 0, Errors: 0\b)", re.I | re.M)
_GRADLE_PASSED = re.compile(r"^BUILD SUCCESSFUL\b", re.M)
#: Gradle's line of a test task that ran (its ``--console=plain`` output, an agent's piped shell): ``> Task :test``,
#: ``> Task :app:testDebugUnitTest``, up to date or from the build cache (passed before, on the same inputs); the rich
#: console's header of a task that printed something ends on a blank where it writes no status (``> Task :test ``).
#: Gradle's rich console (a terminal: an agent's pty) writes a task's line only for a task that printed something or
#: failed: a passing or up-to-date test task leaves none, and neither does one with no test sources (the plain
#: console's ``> Task :test NO-SOURCE``), only ``BUILD SUCCESSFUL`` (real Gradle 4.4.1, ``test-runners/gradle-pty-*``).
#: So there ``BUILD SUCCESSFUL`` without the test task's line is no evidence that a test ran, and passes nothing.
_GRADLE_TESTED = re.compile(rf"^> Task {_GRADLE_TEST_TASK.pattern}(?: (?:UP-TO-DATE|FROM-CACHE))?[ \t]*$", re.M)
#: A runner's tally or verdict of failure, wherever it is: a count of failed tests or errors that is not 0 (cargo's
#: passing ``test result: ok. 2 passed; 0 failed; 0 ignored`` counts none; ctest's ``1 tests failed out of 2``),
#: mocha's summary line ``  1 failing`` (not a test's title that says ``2 failing``), ``FAILED`` (pytest's,
#: unittest's ``FAILED (failures=1)``, cargo's ``test result: FAILED``), TAP's ``not ok 1 - adds`` unless a ``# TODO``
#: or ``# SKIP`` directive says it is none (the TAP spec), and ``# fail 1`` (``node --test``, whose ``ok`` lines
#: pass), phpunit's ``FAILURES!``; go's column-0 ``--- FAIL: TestX`` and ``FAIL`` / ``FAIL\tpkg`` (another package's
#: ``ok`` line follows a failed one's in ``go test ./...``), dotnet's ``Failed!  - Failed:     1`` and vstest's ``Test
#: Run Failed.``, bun's `` 1 fail``, rspec's ``3 examples, 1 failure`` (a spec file that did not load: ``0 examples, 0
#: failures, 1 error occurred outside of examples``, its count of errors). A count and its word on one line: not
#: Microsoft.Testing.Platform's passing ``total: 53`` over ``failed: 0``. Maven's (Surefire's) ``Tests run: 2, Failures: 1,
#: Errors: 0`` and its own ``[INFO] BUILD FAILURE`` line (Gradle's ``BUILD FAILED`` and ``2 tests completed, 1 failed``
#: are read above), Microsoft.Testing.Platform's ``Test run summary: Failed!`` (its ``failed: 1`` under it says no
#: more, and alone may be any program's words: a ``pytest -s`` printing ``  failed: 1``), and Yarn 1's ``error Command
#: failed with exit code 1.`` (the script it ran failed).
_FAILED = re.compile(r"\b[1-9]\d*[ \t]+(?:tests?[ \t]+)?(?:failed|errors?)\b|^\s*[1-9]\d* failing$|\bFAILED\b|"
                     r"^not ok\b(?![^\n]*#\s*(?i:todo|skip)\b)|^# fail\s+[1-9]|\bFAILURES!|\bERRORS!|"
                     r"^--- FAIL: |^FAIL(?:[ \t]|$)|^\s*Failed!\s+-\s+Failed:\s+[1-9]|^\s*Test Run Failed\.|"
                     r"^\s*[1-9]\d* fail$|\b\d+ examples?, [1-9]\d* failures?\b|"
                     r"\bTests run: \d+, (?:Failures: [1-9]|Failures: \d+, Errors: [1-9])|^(?:\[\w+\] )?BUILD FAILURE$|"
                     r"^\s*Test run summary: Failed!|^error Command failed with exit code [1-9]", re.M)
#: Words of a crash or a failed test that tell only after the runner's last word of passing: before it they are the
#: tests' own output, which unittest and ``pytest -s`` print (Python logging's ``ERROR:root:row 17 skipped``, a
#: ``logger.exception``'s traceback, an app's ``ERROR: ...``); a runner that crashed after, or never got to its
#: tally, prints them last.
_CRASHED = re.compile(r"\bFAIL:|\bERROR:|Traceback \(most recent call last\)")


#: The terminal's control codes a shell or a CLI writes into a command's output: CSI sequences (the bracketed-paste
#: switches ``ESC[?2004l``/``h``, colours ``ESC[01;34m`` (PowerShell 7 colours its error view so), cursor moves), OSC
#: sequences (window titles), the other escapes (``ESC(B``, the character-set switch ``tput sgr0`` writes before
#: ``ESC[m``; ``ESC=``). They are presentation: kept, they recolour a terminal showing the step and end up in errors
#: and search tokens (``31;1mProgram``), and hide a runner's tally from its words (Jest in a terminal: ``Tests:
#: ESC[31m1 failed``, no word boundary before the count). A CSI sequence ends on any final byte but ``[``: ``ESC[``
#: then ``[`` is a code cut short before the text's own bracket (``ESC[[INFO]``), and only ``ESC[`` goes.
_TERMINAL_CODES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-Z\\-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])")


def strip_terminal_codes(text: str) -> str:
    """A tool's output without the terminal's control codes (``_TERMINAL_CODES``): what every coding-CLI adapter
    keeps as a step's observation and reads its error from, and what a test run's tally is read from."""
    return _TERMINAL_CODES.sub("", text) if "\x1b" in text else text


def command_of(step: Step) -> str:
    """The shell command of a step (:func:`command_line`; a bare string argument is one), else ``""``: what the
    read, write, removal and test-run rules read. Codex's ``cmd`` and argv lists were not read (probe AUD2, round
    22): its unified-exec ``npm test`` was no test run, so no Codex run could be verified or fail its tests."""
    if isinstance(step.arguments, str):
        return step.arguments
    return command_line(step.arguments) or ""


def signature(step: Step) -> tuple[str, str]:
    """What makes two steps "the same action": tool name + canonical arguments."""
    return step.action or "", json.dumps(step.arguments, sort_keys=True, ensure_ascii=False, default=str)


def is_read(step: Step) -> bool:
    """A step that only looks at state (see the module docstring); a call the harness did not run (:func:`ran`) is
    none."""
    if not step.action or not ran(step):
        return False
    command = command_of(step)
    return _reads(command) if command else bool(_READ_TOOLS.match(step.action))


@per_call
def _reads(command: str) -> bool:
    """Whether a shell command only reads: asked of a step three or four times as a run's digest is made
    (``priority``, ``by_priority``, ``decision_points``), so answered once a command in a run's reading
    (``touched.read_once``, a :mod:`.memo` scope)."""
    return bool(_READ_PROGRAMS.match(command)) and not re.search(r"(>|\btee\b|\bsed\s+-i\b)", command)


def is_write(step: Step) -> bool:
    """A step that changes state: edits a file, installs, moves; or a tool named like edit/update/book. Not a call
    the harness did not run (:func:`ran`)."""
    if not step.action or not ran(step):
        return False
    command = command_of(step)
    if command:  # each command of the line (``git restore --staged F; git restore F``: the second writes)
        return any(_WRITE_COMMAND.search(part) for part in [command, *_segments(command)])
    return bool(_WRITE_TOOLS.search(step.action))


def is_removal(step: Step) -> bool:
    """A shell command that only removes files or directories: an agent's clean-up of its scratch
    files, whose failure (the file was never made, the directory is not empty) changes no result."""
    parts = [part for part in _COMMAND_PARTS.split(command_of(step)) if part.strip() and not _CD.match(part)]
    return bool(parts) and all(_REMOVAL.match(part) for part in parts)


def is_test_run(step: Step) -> bool:
    """A step that runs a test runner (``_TEST_COMMAND``): in a shell command, as what one of its parts runs
    (:func:`_runs_tests`); else a tool named so (``run_tests``). Not a call the harness did not run (:func:`ran`): a
    refused ``pytest`` after a passing one takes no verdict back."""
    if not ran(step):
        return False
    command = command_of(step)
    if not command:
        return bool(_TEST_COMMAND.search(step.action or ""))
    return bool(_TEST_COMMAND.search(command) or _JVM_MENTION.search(command)) \
        and any(_runs_tests(part) for part in _segments(command))


def _runs_tests(part: str) -> bool:
    """Whether one simple command (a part of a command line, a pipe's stage) runs a test runner: its words from its
    program on (past ``timeout``, ``env``, ``VAR=value``) name one, and that program neither only reads, prints or
    edits files (``_NO_RUNNER``: ``grep -n jest package.json``) nor installs the runner (``_INSTALLS``)."""
    words = program_words(_words(part))
    if not words:
        return False
    if words[0].rsplit("/", 1)[-1] in _NO_RUNNER:  # but for the commands it runs: find's -exec, git bisect run
        return any(_runs_tests(" ".join(shlex.quote(w) for w in run)) for run in _commands_run_by(words))
    line = " ".join(words)
    if _TEST_COMMAND.search(line):
        return not _INSTALLS.match(line)
    jvm = next((at for at, word in enumerate(words) if _JVM_TOOL.fullmatch(word.rsplit("/", 1)[-1])), None)
    if jvm is not None:  # run as it is or by another program (``docker exec app mvn test``, ``xvfb-run ./gradlew``)
        return _jvm_runs_tests(words[jvm].rsplit("/", 1)[-1], words[jvm + 1:])
    return any(_runs_tests(inner) for word in words[1:] if _JVM_MENTION.search(f"{word} ")  # ``sh -c './gradlew test'``
               for inner in _segments(word))


def _jvm_runs_tests(program: str, args: list[str]) -> bool:
    """Whether Maven or Gradle run with ``args`` runs tests: a goal or task of its own (a word that is no option nor
    an option's value, ``_MAVEN_VALUED`` / ``_GRADLE_VALUED``) that runs them (``_MAVEN_TESTS``, ``_GRADLE_TESTS``),
    and they are not skipped (Maven's ``-DskipTests``; Gradle's ``-x test`` for ``build`` / ``check``, ``--dry-run``).
    A phase after ``test`` runs the tests first, so ``mvn install`` and ``./gradlew build`` are test runs, read by the
    tallies they print. Review RFM4 of probe 53: ``./gradlew build -x test``, ``./gradlew dependencies --configuration
    testRuntimeClasspath``, ``mvn -pl test-utils install -DskipTests`` were test runs, whose ``BUILD SUCCESSFUL``
    verified a run whose last real test run failed."""
    maven = program.startswith("mvn")
    valued = _MAVEN_VALUED if maven else _GRADLE_VALUED
    goals, excluded, skipped = [], [], False
    it = iter(args)
    for word in it:
        if word in valued:
            value = next(it, "")
            if word in ("-x", "--exclude-task"):
                excluded.append(value)
            elif maven and word in ("-D", "--define"):
                skipped = skipped or bool(_MAVEN_SKIPS.match(f"-D{value}"))
        elif word.startswith("-"):
            skipped = skipped or bool(_MAVEN_SKIPS.match(word) if maven else word in ("--dry-run", "-m"))
            if not maven and word.startswith("--exclude-task="):
                excluded.append(word.split("=", 1)[1])
        else:
            goals.append(word)
    if skipped:
        return False
    if maven:
        return any(_MAVEN_TESTS.fullmatch(goal) for goal in goals)
    if any(_GRADLE_TEST_TASK.fullmatch(task) for task in excluded):  # ``build -x test``: no test task is left
        goals = [goal for goal in goals if _GRADLE_TEST_TASK.fullmatch(goal) and goal not in excluded]
    return any(_GRADLE_TESTS.fullmatch(goal) for goal in goals)


def _commands_run_by(words: list[str]) -> list[list[str]]:
    """The commands a program otherwise kept from running tests runs for its caller: ``find ... -exec CMD {} +``
    (``-execdir``, ``-ok``; to ``;`` or ``+``), ``git bisect run CMD``, ``git rebase -x CMD`` (review R2-FFM of probe
    52: a failing ``find tests -name 'test_*.py' -exec pytest -q {} +`` was no test run, so an earlier passing one
    verified the run)."""
    program, rest = words[0].rsplit("/", 1)[-1], words[1:]
    if program == "find":
        runs: list[list[str]] = []
        run: list[str] | None = None
        for word in rest:
            if run is None:
                run = [] if word in ("-exec", "-execdir", "-ok", "-okdir") else None
            elif word in (";", "\\;", "\\", "+"):  # the -exec ends (``\;`` is cut at its ``;`` already)
                runs.append(run)
                run = None
            else:
                run.append(word)
        return [found for found in (*runs, run) if found]
    if program == "git":
        for at, word in enumerate(rest):
            if word == "run" and at and rest[at - 1] == "bisect":
                return [rest[at + 1:]]
            if word in ("-x", "--exec") and at + 1 < len(rest):
                return [_words(rest[at + 1])]
            if word.startswith("--exec="):
                return [_words(word[len("--exec="):])]
    return []


def retry_positions(steps: Iterable[Step]) -> list[int]:
    """Positions of steps that repeat an earlier action + arguments with nothing changed since."""
    seen: set[tuple[str, str]] = set()
    retries: list[int] = []
    for position, step in enumerate(steps):
        if not step.action:
            continue
        sig = signature(step)
        if sig in seen:
            retries.append(position)
        elif ran(step) and not is_read(step):
            seen = set()  # a state change (by a call that ran): repeating earlier steps is no longer a plain retry
        seen.add(sig)
    return retries


def passed(step: Step) -> bool:
    """A test run that passed: no error, a word of passing (``_PASSED``; Gradle's ``BUILD SUCCESSFUL`` under its test
    task's line: ``_GRADLE_TESTED``), no tally of failures (``_FAILED``), and no crash after its last word of
    passing (``_CRASHED``)."""
    output = _output(step)
    ends = [found.end() for found in _PASSED.finditer(output)]
    if _GRADLE_TESTED.search(output):
        ends += [found.end() for found in _GRADLE_PASSED.finditer(output)]
    return not step.error and bool(ends) and not _FAILED.search(output) and not _CRASHED.search(output, max(ends))


def _output(step: Step) -> str:
    """A step's output as lines, a terminal's (a pty's) control codes and carriage returns off."""
    return strip_terminal_codes(step.observation or "").replace("\r\n", "\n")


def _gradle_said_nothing(step: Step) -> bool:
    """A Gradle build in a terminal that ended ``BUILD SUCCESSFUL`` with no test task's line: its test task was up to
    date (passed before, on the same inputs: Gradle keeps no failed task's outputs), passed printing nothing, or had
    no tests, which its rich console does not tell apart (``BUILD SUCCESSFUL`` and ``N actionable tasks: N
    up-to-date`` either way: ``test-runners/gradle-pty-*``, real Gradle 4.4.1). No pass (:func:`passed`), and no
    failure either: Gradle fails the build on a failing test. Only a step that told no other runner's pass
    (``_PASSED``) either: ``./gradlew assemble && python -m pytest -q`` said how its tests went (review RALL-A)."""
    output = _output(step)
    return not step.error and bool(_GRADLE_PASSED.search(output)) and not _GRADLE_TESTED.search(output) \
        and not _FAILED.search(output) and not _PASSED.search(output)


def verified(trajectory: Trajectory, *, reward_at_least: float | None = 1.0) -> bool:
    """The last test run that said how its tests went passed, or the environment's reward says the task was done.
    A Gradle build in a terminal that said nothing of them (:func:`_gradle_said_nothing`: a rerun of the passing
    tests, up to date) neither verifies a run nor takes back the pass before it."""
    if reward_at_least is not None and trajectory.reward is not None and trajectory.reward >= reward_at_least:
        return True
    test_runs = [s for s in trajectory.steps if is_test_run(s) and not _gradle_said_nothing(s)]
    return bool(test_runs) and passed(test_runs[-1])


def decision_points(steps: list[Step]) -> list[Step]:
    """Steps worth showing: each read once, only the last attempt of a retry, no empty turns."""
    kept: list[Step] = []
    since_change: dict[tuple[str, str], Step] = {}  # state-changing steps since the last different one
    reads_seen: set[tuple[str, str]] = set()
    for step in steps:
        if not step.action:
            if step.error:
                kept.append(step)
            continue
        sig = signature(step)
        if is_read(step):
            if sig not in reads_seen:
                reads_seen.add(sig)
                kept.append(step)
            continue
        if sig in since_change:  # a retry: the later attempt replaces the earlier one
            earlier = since_change[sig]
            kept = [s for s in kept if s is not earlier]
        else:
            since_change = {}
        since_change[sig] = step
        kept.append(step)
    return kept
