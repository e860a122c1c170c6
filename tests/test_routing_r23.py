"""Round 23, GEN4: ``auto`` routing on text no rule was tuned on (issue 11).

tests/fixtures/routing-r23 (see its SOURCE.md): 383 program lines (every line of the tool outputs in
../shared/data/real-formats, and lines of patch, Python, CMake, useradd, Docker, curl quoted in real GitHub issues) and
75 titles, questions and sentences of real issues. HEAD (25e4356f) sent 29 program lines to dense (now 22) and 3 of
the people's lines to hybrid (still 3); the kinds fixed are below, what is left is named. The fix of round 23 (FRGEN4)
added four titles with versions and CVE ids that GEN4's count of numbers sent to hybrid.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode

SET = Path(__file__).parent / "fixtures" / "routing-r23"

#: Program lines still routed as prose: sentences a tool writes to the agent (SWE-agent's edit messages, Terminus-2's
#: prompts), lines cut from a message CMake wraps at 80 columns, Docker's long socket error (a Go error chain read as
#: one long sentence), a program's sentence quoting a flag or a ``name:tag``.
PROSE_YET = {
    "File updated. Please review the changes and make sure they are correct (correct indentation, no duplicate lines, "
    "etc). Edit the file again if necessary.",
    "Your proposed edit has introduced new syntax error(s). Please understand the fixes and retry your edit commmand.",
    "This is how your edit would have looked if applied",
    "This is the original code before your edit",
    "Your changes have NOT been applied. Please fix your edit command and try again.",
    "You either need to 1) Specify the correct start/end line arguments or 2) Correct your edit code.",
    "DO NOT re-run the same failed edit command. Running it again will lead to the same error.",
    "Script completed successfully, no errors. Result: True",
    "Are you sure you want to mark the task as complete? This will trigger your solution to be graded and you won't be "
    'able to make any further corrections. If so, include "task_complete": true in your JSON response again.',
    "Previous response had parsing errors:",
    "WARNINGS: - Extra text detected before JSON object",
    "Please fix these issues and provide a proper JSON response.",
    'By not providing "FindGeogram.cmake" in CMAKE_MODULE_PATH this project has',
    'Could not find a package configuration file provided by "Geogram" with any',
    'Add the installation prefix of "Geogram" to CMAKE_PREFIX_PATH or set',
    '"Geogram_DIR" to a directory containing one of the above files.  If',
    '"Geogram" provides a separate development package or SDK, be sure it has',
    'but it set Imath_FOUND to FALSE so package "Imath" is considered to be NOT',
    "The following imported targets are referenced, but are missing: c4fs::c4fs",
    "Docker image isaaclab_arena:latest already exists. Not rebuilding.",
    "Use -r option to force the rebuild.",
    'Got permission denied while trying to connect to the Docker daemon socket at unix:///run/docker/docker.sock: Get '
    '"http://%2Frun%2Fdocker%2Fdocker.sock/v1.24/containers/json": dial unix /run/docker/docker.sock: connect: '
    "permission denied",
}
#: People's lines still routed as log lines: a lower-case sentence whose ``whenever I`` has a tool call's shape (a
#: first-person rule cost three of tau-bench's ``think I need to ...`` tool calls), two titles under a label no rule
#: knows as a commit type or ticket key (``Doc:``, ``Salto 2143:``).
LOG_YET = {
    "whenever I tried to run the script on my machine I got this Error , So please help me solve it.",
    "Doc: Document retry config",
    "Salto 2143: add documentation on timeout request retries",
}


def _lines(*names: str) -> list[str]:
    return [line for name in names for line in (SET / name).read_text().splitlines() if line.strip()]


@pytest.mark.parametrize(("names", "expected", "yet"), [
    (("program-lines.txt", "issue-program-lines.txt"), "hybrid", PROSE_YET),
    (("prose.txt",), "dense", LOG_YET),
])
def test_the_round_23_set_routes_as_its_kind(names: tuple[str, ...], expected: str, yet: set[str]) -> None:
    """Bug (round 23, GEN4): 29 of the 383 program lines went to dense, 7 of them of the kinds in :data:`FIXED`; the
    rest stay as :data:`PROSE_YET` / :data:`LOG_YET` say."""
    lines = _lines(*names)
    assert len(lines) == {"hybrid": 383, "dense": 75}[expected]
    wrong = {line for line in lines if resolve_mode("auto", line) != expected}
    assert wrong == yet


#: Lines HEAD sent to dense, by kind: patch's counts read as titles (three numbers or more, a third of the words);
#: an OS error's bracketed code without its class (``[Errno 2]``, ``[WinError 2]``: Python's ``OSError`` text), as
#: titles; getopt's quoted option letter counted as the article ``a``.
FIXED = [
    "Hunk #1 succeeded at 131 (offset 15 lines).",
    "Hunk #5 succeeded at 7079 with fuzz 2 (offset 42 lines).",
    "Hunk #1 succeeded at 6 (offset -2 lines).",
    "Hunk #1 succeeded at 33 with fuzz 2 (offset -3 lines).",
    "[Errno 2] No such file or directory",
    "[WinError 2] The system cannot find the file specified",
    "useradd: invalid option -- 'a'",
]


@pytest.mark.parametrize("line", FIXED)
def test_a_count_an_os_error_code_and_a_quoted_letter_are_a_programs(line: str) -> None:
    assert resolve_mode("auto", line) == "hybrid"


@pytest.mark.parametrize(("line", "expected"), [
    ("[version 2.20.0] TypeError: 'NoneType' object is not subscriptable", "hybrid"),  # by its exception label
    ("cargo test error on rust 1.32.0 and 1.35.0", "hybrid"),  # two numbers, round 22's LOG_YET
    ("fixes #2388 add maxRequestRetry and requestRetryDelay to client config", "dense"),
    ("CMake config from 3.1.9 returns not found", "dense"),
    # FRGEN4: a version, a CVE id, a word with a digit (Log4j, 32-bit, i586) is no count, nor are two small numbers
    ("Update Log4j to 2.17.1 to address CVE-2021-44832", "dense"),  # Netflix/spectator#930
    ("s2n_stuffer_network_order_test test fails on 32-bit systems (i586)", "dense"),  # aws/s2n-tls#2406
    ("Python 3.12 fails on 2 of 3 tests", "dense"),  # made up
])
def test_titles_with_a_tag_or_numbers_keep_their_route(line: str, expected: str) -> None:
    """Real titles (a SWE-bench task's first line, round 22's and this round's sets) route as at HEAD: a title's tag
    is a version, not an error code; a version or an issue's number is no count."""
    assert resolve_mode("auto", line) == expected
