"""The line a failed command's output is read by (``_common.decisive_line``): what a result shows as the step's
error and what the lexical leg matches pasted error text against first. Weak picks seen in round 30's reviews and
measured over every real file (helper DECISIVE): pytest's tally over its summary line naming the failed test and
its error, git's ``hint:`` advice over what it refused, CMake's and apt's own error words over their later
progress or warnings, tar's closing word over the file it could not read.

Real outputs: each file's source is in the README.md beside it."""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

from trajsearch.ingest.adapters import _common
from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures"
#: A real Claude Code stream capture of one failed Bash call (see the README beside it), whose result is replaced.
CAPTURE = FIXTURES / "claude-code/.decisive30/git-add-ignored.stream-json.jsonl"


def _errors(path: Path) -> list[str]:
    """The errors of the steps of every run read from ``path``."""
    return [step.error for parsed in read_inputs([path], tenant="t") if parsed.trajectory
            for step in parsed.trajectory.steps if step.error]


def _errors_of_output(tmp_path: Path, output: str) -> list[str]:
    """The step errors read from :data:`CAPTURE` with its Bash call's failed result (``Exit code 1``) replaced by
    ``output``."""
    records = [json.loads(line) for line in CAPTURE.read_text().splitlines()]
    for record in records:
        for block in record.get("message", {}).get("content", []):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                block["content"] = "Exit code 1\n" + output
    path = tmp_path / "run.stream-json.jsonl"
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return _errors(path)


def test_pytest_summary_line_naming_the_test_beats_the_session_tally() -> None:
    """Gemini CLI ran ``python3 -m pytest -q`` (pytest 9.0.3) on a failed test: ``FAILED test_calc.py::test_add -
    assert -1 == 5`` above ``1 failed, 1 passed in 4.79s``. The tally was the error: it names neither the test nor
    the failed assertion (the summary's message has no exception's name, so only the last "failed" line was
    looked for)."""
    errors = _errors(FIXTURES / "gemini-cli/.real/probe-fm50/stream-pytest-failed.jsonl")
    assert errors == ["FAILED test_calc.py::test_add - assert -1 == 5"]


def test_a_whole_pytest_summary_line_beats_the_report_line_it_repeats() -> None:
    """goose ran a failing test: the report's ``E   AssertionError: expected 3 attempts, got 2`` and the summary's
    ``FAILED tests/test_retry.py::test_backoff - AssertionError: expected 3 attempts, got 2`` say the same error; the
    summary names the test too, so a paste of either finds it."""
    errors = _errors(FIXTURES / "goose/.goose29/20260301_1.json")
    assert "FAILED tests/test_retry.py::test_backoff - AssertionError: expected 3 attempts, got 2" in errors


def test_git_add_of_an_ignored_path_is_read_by_what_git_refused() -> None:
    """``git add`` of a path .gitignore names exits 1 with ``The following paths are ignored by one of your
    .gitignore files:``, the path, then its ``hint:`` advice: the last hint line was the error."""
    errors = _errors(FIXTURES / "claude-code/.decisive30/git-add-ignored.stream-json.jsonl")
    assert errors == ["The following paths are ignored by one of your .gitignore files: CLAUDE.md (exit code 1)"]


def test_cmake_and_apt_errors_are_read_by_their_own_error_lines() -> None:
    """Multi-SWE-bench's OpenHands run on ponyc: CMake's ``CMake Error at CMakeLists.txt:27 (find_package):`` was
    the error without the message indented under it (no tool's error words: the header was only a line mentioning
    an error), and apt-get's ``W: Some index files failed to download ...`` warning was taken over its ``E: Unable to
    locate package llvm-dev`` (apt's error prefix was no tool's error line)."""
    errors = _errors(FIXTURES / "openhands/.real/multi_swe_bench/output.jsonl")
    assert 'CMake Error at CMakeLists.txt:27 (find_package): Could not find a package configuration file provided by ' \
           '"LLVM" with any of (exit code 1)' in errors
    assert "E: Unable to locate package llvm-dev (exit code 100)" in errors
    assert not any(error.startswith(("W: ", "CMake Error at CMakeLists.txt:27 (find_package): (")) for error in errors)


def test_a_bare_pytest_summary_line_still_beats_the_tally() -> None:
    """Where the failed test's id fills pytest's 80 columns, its summary line carries no message (``FAILED
    tests/billing/test_invoice_rounding.py::test_rounded_...``) and the report's ``E   assert 4 == 4.49`` names no
    exception: the tally ``1 failed, 1 passed in 1.25s`` was the error; the line naming the test says more."""
    errors = _errors(FIXTURES / "claude-code/.decisive30/pytest-long-test-id.stream-json.jsonl")
    assert errors == ["FAILED tests/billing/test_invoice_rounding.py::"
                      "test_rounded_total_keeps_the_cents_of_every_line_item - assert 4 == 4.49 (exit code 1)"]


def test_a_bare_pytest_summary_line_gets_its_reports_message_back() -> None:
    """Round 31 (DEC31): pytest leaves the message out of a summary line the test's id fills (``FAILED
    tests/billing/test_invoice_rounding.py::test_rounded_...``), but its report above says it, the first ``E`` line
    under the test's ``____ <name> ____`` header (``E       assert 4 == 4.49``): the error names the test and says it,
    as a summary line with room for it would."""
    [error] = _errors(FIXTURES / "claude-code/.decisive30/pytest-long-test-id.stream-json.jsonl")
    assert error.endswith("::test_rounded_total_keeps_the_cents_of_every_line_item - assert 4 == 4.49 (exit code 1)")


def test_a_pytest_summary_line_takes_no_message_from_another_tests_report(tmp_path: Path) -> None:
    """A bare summary line whose test has no report kept (the output was cut above it) takes no other test's ``E``
    line; and the search for its header stays linear on a 100k-character id."""
    output = PYTEST_THEN_TRACEBACK.split("FAILED")[0].replace("test_add ___", "test_sub ___")
    [error] = _errors_of_output(tmp_path, output + "FAILED tests/test_calc.py::test_add\n1 failed in 0.01s")
    assert error == "FAILED tests/test_calc.py::test_add (exit code 1)"
    long_id = "x" * 100_000
    [error] = _errors_of_output(tmp_path, f"{'_' * 9} {long_id} {'_' * 9}\nE   a\nFAILED t.py::{long_id}\n")
    assert error.endswith("xxx - a (exit code 1)")


#: What ``python3 -m pytest -q -p no:cacheprovider tests; python3 deploy.py`` printed here (pytest 9.2.0, Python
#: 3.11): a failed test, then a script dying of its own exception.
PYTEST_THEN_TRACEBACK = """F.                                                                       [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 3) == 4
E       assert 5 == 4
E        +  where 5 = add(2, 3)

tests/test_calc.py:6: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 5 == 4
1 failed, 1 passed in 1.99s
Traceback (most recent call last):
  File "/home/cyou/proj/deploy.py", line 9, in <module>
    credentials()
  File "/home/cyou/proj/deploy.py", line 6, in credentials
    raise RuntimeError("deploy failed: no credentials")
RuntimeError: deploy failed: no credentials"""

#: What ``python3 app.py`` printed here: its log line (``logging``'s ``%(levelname)s %(filename)s - %(message)s``),
#: shaped like pytest's ``ERROR <file> - <message>``, then the traceback it died of.
LOG_LINE_THEN_TRACEBACK = """ERROR app.py - retrying upload
Traceback (most recent call last):
  File "/home/cyou/proj/app.py", line 11, in <module>
    upload()
  File "/home/cyou/proj/app.py", line 8, in upload
    raise ConnectionError("upload to s3 refused")
ConnectionError: upload to s3 refused"""


def test_an_exception_raised_after_pytest_summary_line_is_the_error(tmp_path: Path) -> None:
    """A whole summary line says what its report's ``E`` line above it says; an exception raised below it (the next
    command of the call) is what failed the call, and was the error before round 30."""
    assert _errors_of_output(tmp_path, PYTEST_THEN_TRACEBACK) == [
        "RuntimeError: deploy failed: no credentials (exit code 1)"]


def test_a_log_line_shaped_like_pytest_summary_line_does_not_beat_the_traceback_below(tmp_path: Path) -> None:
    assert _errors_of_output(tmp_path, LOG_LINE_THEN_TRACEBACK) == [
        "ConnectionError: upload to s3 refused (exit code 1)"]


def test_a_long_output_line_is_read(tmp_path: Path) -> None:
    """A 100,000-character line (``cat`` of minified JSON) with no error word is read, its end the error; so is a
    summary-shaped line whose id has a ``.py`` every few characters (``_PYTEST_SUMMARY`` and ``_EXC_ANYWHERE`` each
    rescanned such a run at each of its words: over a minute). No time bound: the pattern test below keeps the
    reading linear by construction where it can tell."""
    minified = json.dumps({"items": [{"id": n, "name": f"item {n}"} for n in range(4000)]}, separators=(",", ":"))
    assert len(minified) > 100_000
    [error] = _errors_of_output(tmp_path, minified)
    assert error.endswith('"item 3999"}]} (exit code 1)')
    [error] = _errors_of_output(tmp_path, "FAILED " + "a.py." * 20_000 + " x")
    assert error.startswith("FAILED a.py.a.py.")


def test_no_pattern_rescans_the_rest_of_a_line_at_every_position() -> None:
    """A lookahead over the rest of the line (``(?!.*...)``) in a pattern that may match anywhere in a line runs at
    every position it is tried at: quadratic in the line's length (round 30's ``_ERRORISH`` took 49 s on one
    100,000-character line). Such a lookahead is only in a pattern anchored at the line's start, tried once."""
    for name, pattern in vars(_common).items():
        if isinstance(pattern, re.Pattern) and re.search(r"\(\?<?[=!][^)]*\.\*", pattern.pattern):
            assert pattern.pattern.startswith("^") and "\n" not in pattern.pattern and not pattern.flags & re.M, name


#: Outputs of real mini-swe-agent runs (../shared/data/mini-swe-agent-dev, MIT, Kilian A. Lieret and Carlos E.
#: Jimenez), cut to their failing part: the run's folder and step. Round 31 (DEC31) read every step error of the shared
#: data and fixtures by hand; each of these was the wrong line, or a better one was above it.
#: deepseek_chat_dev/pydicom__pydicom-1139, step 64: ``pytest -v -x`` (pytest 9.0.3).
PYTEST_CLASS_TEST = """pydicom/tests/test_valuerep.py::TestBadValueRead::test_read_bad_value_in_VR_default FAILED

=================================== FAILURES ===================================
______________ TestBadValueRead.test_read_bad_value_in_VR_default ______________

self = <pydicom.tests.test_valuerep.TestBadValueRead object at 0x7081f618cc10>

    def test_read_bad_value_in_VR_default(self):
        # found a conversion
>       assert "1A" == convert_value("SH", self.tag)
                                           ^^^^^^^^
E       AttributeError: 'TestBadValueRead' object has no attribute 'tag'

pydicom/tests/test_valuerep.py:228: AttributeError
=========================== short test summary info ============================
FAILED pydicom/tests/test_valuerep.py::TestBadValueRead::test_read_bad_value_in_VR_default
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
========================= 1 failed, 18 passed in 0.05s =========================
"""
#: deepseek_chat_dev/sqlfluff__sqlfluff-1763, step 41: ``patch -p1 < x.patch`` (exit 2); its fatal error on stderr
#: came out before the stdout of the file it went on to patch.
PATCH_MALFORMED = """patch: **** malformed patch at line 35:      @staticmethod

patching file src/sqlfluff/core/linter/linted_file.py
Hunk #1 succeeded at 485 (offset -1 lines).
"""
#: deepseek_chat_dev_rerun/marshmallow-code__marshmallow-1343, step 108: a two-file patch already applied to the first.
PATCH_REJECTED = """patching file src/marshmallow/marshalling.py
Reversed (or previously applied) patch detected!  Assume -R? [n] 
Apply anyway? [n] 
Skipping patch.
2 out of 2 hunks ignored -- saving rejects to file src/marshmallow/marshalling.py.rej
patching file src/marshmallow/schema.py
"""
#: deepseek_chat_dev_rerun/sqlfluff__sqlfluff-1733, step 69: ``sqlfluff lint`` (exit 65), descriptions wrapped.
SQLFLUFF_LINT = """== [test_simple_with.sql] FAIL
L:   1 | P:   1 | L045 | Query defines a CTE (common-table expression) but does
                       | not use it.
L:   7 | P:   1 | L022 | Blank line expected but not found after CTE closing
                       | bracket.
All Finished 📜 🎉!
"""


def test_a_bare_pytest_summary_line_with_its_report_beats_the_reports_e_line(tmp_path: Path) -> None:
    """The summary line given its message back from the report (``TestBadValueRead.test_...`` heading a class's test)
    says the ``E`` line's error and names the test: it ranks as a whole summary line, the last of them winning."""
    assert _errors_of_output(tmp_path, PYTEST_CLASS_TEST) == [
        "FAILED pydicom/tests/test_valuerep.py::TestBadValueRead::test_read_bad_value_in_VR_default - "
        "AttributeError: 'TestBadValueRead' object has no attribute 'tag' (exit code 1)"]


def test_gnu_patchs_own_errors_are_tool_errors(tmp_path: Path) -> None:
    """GNU patch's fatal ``patch: **** ...`` and a file's ``N out of M hunks ignored -- saving rejects ...`` said what
    failed; the line after them (the next file patched, a hunk that applied) was the error."""
    assert _errors_of_output(tmp_path, PATCH_MALFORMED) == [
        "patch: **** malformed patch at line 35: @staticmethod (exit code 1)"]
    assert _errors_of_output(tmp_path, PATCH_REJECTED) == [
        "2 out of 2 hunks ignored -- saving rejects to file src/marshmallow/marshalling.py.rej (exit code 1)"]
    [error] = _errors_of_output(tmp_path, "patch: **** malformed patch at line 79:\n\npatching file a.py\n")
    assert error == "patch: **** malformed patch at line 79: (exit code 1)"  # the quoted line was blank


def test_sqlfluffs_first_violation_with_its_wrapped_description(tmp_path: Path) -> None:
    """sqlfluff's lint ends on ``All Finished 📜 🎉!``, which was the error; its first violation, as a compiler's
    first diagnostic, is, with the rest of its description wrapped under ``| ``."""
    assert _errors_of_output(tmp_path, SQLFLUFF_LINT) == [
        "L: 1 | P: 1 | L045 | Query defines a CTE (common-table expression) but does not use it. (exit code 1)"]
    long = "== [a.sql] FAIL\nL: 1 | P: 1 | L01 | " + "x | " * 25_000 + "\n| z\nL:" + " " * 100_000 + "|\nAll Finished!"
    [error] = _errors_of_output(tmp_path, long)  # read at once, its head kept (where its words are)
    assert error.startswith("L: 1 | P: 1 | L01 | x | x |")


def test_an_exception_line_ending_in_a_colon_takes_its_message_below() -> None:
    """Node's ``AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:`` (a real Gemini CLI session's
    ``node --test``) and Claude Code's ``InputValidationError: Task failed due to the following issue:`` say what
    was unequal, what was missing, on the next line."""
    errors = _errors(FIXTURES / "gemini-cli/session-2026-04-29T21-39-3f0c2a1b.jsonl")
    assert "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal: -1 !== 1 (exit code 1)" in errors
    errors = _errors(FIXTURES / "claude-code/5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    assert "InputValidationError: Task failed due to the following issue: The required parameter `prompt` is " \
           "missing" in errors


#: What pytest 9.2.0 (Python 3.11) printed for a test raising ``RuntimeError`` while handling a ``FileNotFoundError``
#: (review of DEC31: the test ``raise``s in an ``except``), its id too long for the summary line to carry the message.
PYTEST_CHAINED = """=================================== FAILURES ===================================
_ test_settings_are_loaded_from_the_environment_when_the_config_file_is_missing_entirely _

    def test_settings_are_loaded_from_the_environment_when_the_config_file_is_missing_entirely():
        try:
>           load("/etc/app.toml")

tests/test_chain.py:6: 
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ 

path = '/etc/app.toml'

    def load(path):
>       raise FileNotFoundError(f"no config at {path}")
E       FileNotFoundError: no config at /etc/app.toml

tests/test_chain.py:2: FileNotFoundError

During handling of the above exception, another exception occurred:

    def test_settings_are_loaded_from_the_environment_when_the_config_file_is_missing_entirely():
        try:
            load("/etc/app.toml")
        except FileNotFoundError:
>           raise RuntimeError("settings could not be loaded")
E           RuntimeError: settings could not be loaded

tests/test_chain.py:8: RuntimeError
=========================== short test summary info ============================
FAILED tests/test_chain.py::test_settings_are_loaded_from_the_environment_when_the_config_file_is_missing_entirely
============================== 1 failed in 0.50s ===============================
"""


def test_a_bare_pytest_summary_line_of_a_chained_exception_gets_the_raised_ones_message(tmp_path: Path) -> None:
    """pytest's report of a chained exception shows the cause first, then ``During handling of the above exception
    ...`` and the exception raised; its summary line says the raised one, so that is the message given back."""
    [error] = _errors_of_output(tmp_path, PYTEST_CHAINED)
    assert error.endswith("_missing_entirely - RuntimeError: settings could not be loaded (exit code 1)")


def test_bare_pytest_summary_lines_are_given_their_messages_in_linear_time(tmp_path: Path) -> None:
    """Each of 50,000 bare summary lines of a test whose report (50,000 lines) has no ``E`` line looks the report up
    once read, not by rescanning it: a rescan per line took 18 s at 8,000 (about 12 minutes here); linear, well
    under a second. The alarm only bounds a regression, it waits for nothing."""
    n = 50_000
    output = "___ test_y ___\n" + "x\n" * n + "FAILED t.py::test_y\n" * n
    def too_slow(signum: int, frame: object) -> None:
        raise TimeoutError("300 s reading 50,000 bare summary lines: quadratic")

    previous = signal.signal(signal.SIGALRM, too_slow)  # a failure of this test, not pytest's KeyboardInterrupt
    signal.alarm(300)
    try:
        [error] = _errors_of_output(tmp_path, output)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert error == "FAILED t.py::test_y (exit code 1)"


#: deepseek_lite_dev_noparallel/sqlfluff__sqlfluff-1763 (mini-swe-agent, shared data; MIT), step 5418 of the review's
#: list: a grep of test/cli/commands_test.py showing the lint output it expects, cut; then a failing pytest session's
#: tally, as a command going on to run the tests prints it.
SQLFLUFF_EXPECTED_THEN_TALLY = '''expected_output = """== [test/fixtures/linter/indentation_error_simple.sql] FAIL
L:   2 | P:   4 | L003 | Indentation not hanging or a multiple of 4 spaces
L:   5 | P:  10 | L010 | Keywords must be consistently upper case.
--
    result = invoke_assert_code(
        ret_code=65,
=== 1 failed, 3 passed in 0.52s ===
'''


def test_sqlfluff_violations_count_only_under_its_files_fail_line(tmp_path: Path) -> None:
    """A violation is sqlfluff's error only in its lint of a file, under the file's own ``== [<file>] FAIL`` line:
    its expected output in a test's source (behind ``expected_output = \"\"\"``) is text, and beat the tally below."""
    assert _errors_of_output(tmp_path, SQLFLUFF_EXPECTED_THEN_TALLY) == [
        "=== 1 failed, 3 passed in 0.52s === (exit code 1)"]


#: tests/fixtures/mini-swe-agent/.real/gemini-3-pro-sqlite-tracebacks/django__django-15525.traj.json (see the README
#: beside it), a step's output cut to its last traceback: Django's ``DeserializationError`` with a blank message (the
#: line ends in ``': '``), then the script's own prints.
DJANGO_BLANK_MESSAGE = """Traceback (most recent call last):
  File "/testbed/reproduce_issue.py", line 67, in <module>
    call_command('loaddata', 'books.json', database='other', format='json')
  File "/testbed/django/core/management/__init__.py", line 198, in call_command
    return command.execute(*args, **defaults)
  File "/testbed/django/core/management/base.py", line 448, in execute
    output = self.handle(*args, **options)
  File "/testbed/django/core/management/commands/loaddata.py", line 102, in handle
    self.loaddata(fixture_labels)
  File "/testbed/django/core/management/commands/loaddata.py", line 163, in loaddata
    self.load_label(fixture_label)
  File "/testbed/django/core/management/commands/loaddata.py", line 251, in load_label
    for obj in objects:
  File "/testbed/django/core/serializers/json.py", line 74, in Deserializer
    raise DeserializationError() from exc
django.core.serializers.base.DeserializationError: Problem installing fixture '/testbed/books.json':\x20
Loading data into other database...
FAILURE: Problem installing fixture '/testbed/books.json':\x20
"""


def test_an_exception_line_with_a_blank_message_takes_no_line_below() -> None:
    """Python prints an exception whose message is blank as ``<class>: `` (its ``"%s: %s"``): the colon ends no label,
    the line below is other output (a print, mini-swe-agent's ``</output>``, pytest's tally), not its message."""
    assert _common.decisive_line(DJANGO_BLANK_MESSAGE) == \
        "django.core.serializers.base.DeserializationError: Problem installing fixture '/testbed/books.json':"
    for below in ("</output>", "1 failed, 2 passed in 0.10s"):
        assert _common.decisive_line(f"ValueError: Missing required elements:\n{below}") == \
            "ValueError: Missing required elements:", below


#: deepseek_lite_dev_noparallel/sqlfluff__sqlfluff-2419 (mini-swe-agent, shared data; MIT): ``pytest -v`` of a test
#: file that is not there. pytest's ``collecting ... `` (printed while it collects) carries its usage error.
PYTEST_COLLECTING_ERROR = """============================= test session starts ==============================
platform linux -- Python 3.11.5, pytest-9.0.3, pluggy-1.6.0 -- /opt/miniconda3/bin/python
cachedir: .pytest_cache
rootdir: /testbed
configfile: pytest.ini (WARNING: ignoring pytest config in tox.ini!)
collecting ... ERROR: file or directory not found: test/rules/L060_test.py

collected 0 items

============================ no tests ran in 0.00s =============================
"""


def test_pytests_collecting_prefix_is_read_off_its_line(tmp_path: Path) -> None:
    """``collecting ... `` is pytest's progress, which the next thing it prints goes on: the error is pytest's own
    ``ERROR: ...``, read as a tool's error line (it was a mere mention of one, the prefix kept)."""
    assert _errors_of_output(tmp_path, PYTEST_COLLECTING_ERROR) == [
        "ERROR: file or directory not found: test/rules/L060_test.py (exit code 1)"]


#: ESLint's ``-f tap`` output as its documentation shows it, made by ESLint's release build linting
#: ``fullOfProblems.js`` (eslint/eslint, docs/src/use/formatters/index.md at 3ef58140550cf8ff34af35fc4d9a1f9a124fe0e6,
#: its ``### tap``; MIT), cut to three of its nine problems. Each file is a test; its first problem is its YAML
#: block's ``message:``.
ESLINT_TAP = """TAP version 13
1..1
not ok 1 - /var/lib/jenkins/workspace/Releases/ESLint Release/eslint/fullOfProblems.js
  ---
  message: '''addOne'' is defined but never used.'
  severity: error
  data:
    line: 1
    column: 10
    ruleId: no-unused-vars
  messages:
    - message: Use the isNaN function to compare with NaN.
      severity: error
      data:
        line: 2
        column: 9
        ruleId: use-isnan
    - message: Unnecessary semicolon.
      severity: error
      data:
        line: 7
        column: 2
        ruleId: no-extra-semi
  ...
"""


def test_a_failed_tap_test_is_said_by_its_yaml_blocks_message(tmp_path: Path) -> None:
    """TAP's ``not ok`` test with what its YAML block says (the TAP 13 spec's ``message:``, as ESLint writes it): the
    block's ``severity: error`` was the error, a line that only mentions one. A ``# TODO`` test's ``not ok`` is no
    failure (the spec), so its message (``can't`` mentions one too) is not the error either. A block is read up to its
    end (``...``) or the next test line: 20,000 ``not ok`` lines each over an open block with no message are read once
    each, not to the output's end (quadratic: minutes; the alarm only bounds a regression, it waits for nothing)."""
    [error] = _errors_of_output(tmp_path, ESLINT_TAP)
    assert error == "not ok 1 - /var/lib/jenkins/workspace/Releases/ESLint Release/eslint/fullOfProblems.js: " \
        "'addOne' is defined but never used. (exit code 1)"
    todo = ESLINT_TAP + "not ok 2 - summary # TODO not written yet\n  ---\n  message: \"Can't make it yet\"\n  ...\n"
    assert _common.decisive_line(todo) == \
        "not ok 1 - /var/lib/jenkins/workspace/Releases/ESLint Release/eslint/fullOfProblems.js: " \
        "'addOne' is defined but never used."

    def too_slow(signum: int, frame: object) -> None:
        raise TimeoutError("300 s reading 20,000 TAP blocks: quadratic")

    previous = signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(300)
    try:
        assert _common.decisive_line("not ok 1 - x\n---\n" * 20_000 + "severity: error\n") == "not ok 1 - x"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


#: Real TAP of failed runs (``test-runners``, its SOURCE.md; ``test-runners/.fix-dec32``, the README.md there).
RUNNERS = FIXTURES / "test-runners"


def test_node_tests_failed_test_is_said_by_its_yaml_blocks_error_with_an_exit_code(tmp_path: Path) -> None:
    """``node --test`` prints TAP where its output is no terminal (an agent's shell): its block's ``error: |-`` was the
    step's error (a tool's error line, the block scalar's indicator for its message), the parent's ``error: '1 subtest
    failed'`` over the subtest's; the block's rows are the test's details, no error line of the output's own. The
    failed test is said with its block's message, its first line's colon joined with the next (review of DEC32, 2)."""
    def error_of(name: str) -> list[str]:
        return _errors_of_output(tmp_path, (RUNNERS / name).read_text())

    assert error_of("node-test-fail.txt") == [
        "not ok 1 - adds: Expected values to be strictly equal: 2 !== 3 (exit code 1)"]
    assert error_of(".fix-dec32/node-test-subtest-fail.tap") == [  # the subtest's, not its parent's count
        "not ok 1 - totals: Expected values to be strictly equal: 4 !== 5 (exit code 1)"]
    assert error_of(".fix-dec32/node-test-quoted-fail.tap") == [  # node's backticks are quotes
        """not ok 1 - quotes: can't parse "price" field (exit code 1)"""]
    assert _common.ended_failing((RUNNERS / ".fix-dec32/node-test-subtest-fail.tap").read_text()) == \
        "not ok 1 - totals: Expected values to be strictly equal: 4 !== 5"  # no exit code: its end tells


def test_mochas_tap_is_said_by_its_failed_tests_message(tmp_path: Path) -> None:
    """Mocha's TAP reporter (TAP12 by default) prints a failed test's message indented under its ``not ok``, no YAML
    block, and its plan ``1..2`` last: the output was not seen to end failing, and a block-less ``not ok`` was said
    without its message (review of DEC32, 3). TAP13 (``tapVersion=13``) puts it in a ``message: |-`` block. A block
    scalar's value is the lines indented under its key: a line at the key's indent is none of it."""
    for name in ("mocha-tap12-fail.txt", "mocha-tap13-fail.txt"):
        assert _common.ended_failing((RUNNERS / ".fix-dec32" / name).read_text()) == \
            "not ok 1 cart totals: Expected values to be strictly equal: 4 !== 5", name
    assert _common.ended_failing("not ok 1 - x\n---\nmessage: |\n# fail 1") == "not ok 1 - x"


#: A recipe printing docs, then failing: the docs are zc.recipe.cmmi's doctest README.txt (buildout's output under a
#: failed patch, indented as doctest quotes it; ZPL 2.1), cut to that example; make's line is GNU make's for a
#: recipe that failed.
PATCH_QUOTED_IN_DOCS = """    >>> write('patches/config.patch', "dgdgdfgdfg")

    >>> res =  system('bin/buildout')
    >>> print res
    Installing foo.
    foo: Downloading http://localhost/foo.tgz
    foo: Unpacking and configuring
    patch unexpectedly ends in middle of line
    foo: cmmi failed: /.../...buildout-foo
    patch: **** Only garbage was found in the patch input.
    While:
      Installing foo.
sh: 1: buildout-docs: not found
make: *** [Makefile:4: docs] Error 127
"""


def test_gnu_patchs_error_quoted_indented_in_docs_is_no_error(tmp_path: Path) -> None:
    """GNU patch prints its ``patch: **** ...`` at the margin; indented, it is quoted (a doctest, a man page, a
    docstring printed), and as a tool's error line it outranked what failed the command below it."""
    assert _errors_of_output(tmp_path, PATCH_QUOTED_IN_DOCS) == [
        "make: *** [Makefile:4: docs] Error 127 (exit code 1)"]
    [error] = _errors_of_output(tmp_path, PATCH_QUOTED_IN_DOCS.replace("    patch: ****", "patch: ****"))
    assert error == "patch: **** Only garbage was found in the patch input. (exit code 1)"  # patch's own


#: deepseek_chat_dev_rerun/pylint-dev__astroid-1333 (mini-swe-agent, shared data; MIT), a script's output cut to its
#: last two cases: it prints each failure as ``<call> failed: <str(exc)>``, and astroid's ``AstroidImportError`` says
#: ``Failed to import module <name> with error:`` over the error's own words.
ASTROID_WITH_ERROR = """5. Loading module src.project:
   ast_from_module_name failed: Failed to import module src.project with error:
No module named src.project.

6. Loading module project with path=[src_dir]:
   ast_from_module_name returned: project
"""


def test_a_line_ending_on_an_errors_label_takes_its_message_below(tmp_path: Path) -> None:
    """A line whose last word labels an error (``... with error:``, ``The error is:``) says what failed on the next
    line, as an ``Error:`` label does; a label of anything else (``Expected:``, a heading) keeps its line alone."""
    assert _errors_of_output(tmp_path, ASTROID_WITH_ERROR) == [
        "ast_from_module_name failed: Failed to import module src.project with error: No module named src.project. "
        "(exit code 1)"]
    assert _common.decisive_line("Testing with invalid data:\nExpected:\n  3\nfailed") == "failed"


def test_a_label_whose_interpolated_error_was_blank_takes_no_line_below() -> None:
    """``f"... with error: {e}"`` of an error whose ``str`` is blank (``TimeoutError()``, asyncio's) ends in ``: ``:
    the label says nothing, and the line below is the script's next print, not its message (review of DEC32)."""
    traceback = ("Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n"
                 "    raise RuntimeError(f'fetch failed with error: {e}')\n"
                 "RuntimeError: fetch failed with error: \nRetrying in 5 seconds...\n")
    assert _common.decisive_line(traceback) == "RuntimeError: fetch failed with error:"
    assert _common.decisive_line("Fetching data...\nRequest failed with error: \nDone.\n") == \
        "Request failed with error:"


def test_a_span_exception_that_says_only_its_class_gives_way_to_its_outputs_error() -> None:
    """beeai's tool span records ``ToolError: Tool Error`` as its exception, the class's name in words; its output
    renders the cause it wraps (``RuntimeError(builtins): population service unavailable for Paris (HTTP 503)``),
    which the other frameworks' spans give as their exception's message. A real span (see the SOURCE.md beside it)."""
    assert _errors(FIXTURES / "openinference/.real/beeai_requirement.otlp.json") == [
        "RuntimeError(builtins): population service unavailable for Paris (HTTP 503)"]


def test_a_span_exception_whose_message_is_a_lists_repr_keeps_it(tmp_path: Path) -> None:
    """A message in brackets is a redacted placeholder (``[sanitized exception message]``) only where it is words: a
    list's repr (``['a', 'b']``, a ``ValueError`` of the missing keys) says what was wrong (review of DEC32, 6). The
    real beeai span, its exception's message replaced."""
    spans = (FIXTURES / "openinference/.real/beeai_requirement.otlp.json").read_text()
    path = tmp_path / "beeai.otlp.json"
    path.write_text(spans.replace('"stringValue": "Tool Error"', '"stringValue": "[\'a\', \'b\']"'))
    assert _errors(path) == ["beeai_framework.tools.errors.ToolError: ['a', 'b']"]
