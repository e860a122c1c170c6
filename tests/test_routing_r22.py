"""Round 22, GEN3: ``auto`` routing on a set gathered for it (issue 11), program lines and real task titles.

tests/fixtures/routing-r22 (see its SOURCE.md): 547 program lines (git, make, coreutils, apt, bash, ... under 15 message
languages, gcc, javac, rustc, node, python, npm, cmake, pip run on this machine; npm, rustc and tsc lines quoted in
real GitHub issues) and 71 titles of real GitHub issues and pull requests, each cut in a half the rules were written
from (``.dev.txt``) and a half only counted (``.held-out.txt``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode

SET = Path(__file__).parent / "fixtures" / "routing-r22"

#: Program lines still routed as prose: plain sentences (one naming an environment variable), a label no rule knows
#: (``su:``, ``用法：``, Bulgarian git's ``фатална грешка:``), two sentences of a program's, a one-word object.
PROSE_YET = {
    "Stopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).",
    "用法：useradd [選項] 帳號",
    "No SOURCES given to target: x",
    "CMake Generate step failed.  Build files cannot be regenerated correctly.",
    "su: user nosuchuser does not exist or the user entry does not contain all the required fields",
    "use --help for a list of possible options",
    "фатална грешка: нито тази, нито която и да е от по-горните директории, не е хранилище на git: .git",
}
#: Titles still routed as log lines: two paste the compiler's error as their title, three hold no function word
#: beside a command, a quoted message or an error code.
LOG_YET = {
    'TypeScript "Cannot find name" errors',
    "cargo test error on rust 1.32.0 and 1.35.0",
    "error E0382 use of moved value could be improved",
    "TypeScript@next compile error: Cannot find name 'Omit'",
    "tsc: ERROR <filename> Cannot find name 'module' after upgrading to 0.8.17",
}


def _lines(name: str) -> list[str]:
    return [line for part in ("dev", "held-out") for line in (SET / f"{name}.{part}.txt").read_text().splitlines()
            if line.strip()]


@pytest.mark.parametrize(("name", "expected", "yet"), [("program-lines", "hybrid", PROSE_YET), ("titles", "dense", LOG_YET)])
def test_the_round_22_set_routes_as_its_kind(name: str, expected: str, yet: set[str]) -> None:
    """Bug (round 22, GEN3): 30 of the 547 program lines went to dense and 9 of the 71 titles to hybrid. Fixed by
    shapes: a Conventional Commits or ticket title (``fix(ci): better fix for the windows-only test flake``,
    ``EVG-14427: fix flaky windows test``), a program's pointer at its help (``Try 'chmod --help' for more
    information.`` in 8 languages, ``try `rustc --explain E0382```), a step in progress (apt's ``Reading state
    information...``, localised), rustc's ``= note:`` and gutter lines, ``tsc exited with code 2``, a lead-in line
    (``Cannot find source file:``), a line mostly not words. The rest stay as :data:`PROSE_YET` / :data:`LOG_YET` say."""
    lines = _lines(name)
    assert len(lines) == {"program-lines": 547, "titles": 71}[name]
    wrong = {line for line in lines if resolve_mode("auto", line) != expected}
    assert wrong == yet & set(lines)


@pytest.mark.parametrize("line", ["CI pipeline status: failed", "Fix flaky test on Windows.",
                                  "Refactor configuration loading to eliminate side effects on import an…",
                                  "`npm install --save` fails on Windows"])
def test_a_title_with_a_label_an_ellipsis_or_a_quoted_command_stays_prose(line: str) -> None:
    """The new shapes take no title: a label on one word, GitHub's cut title ending in ``…`` (ten words: a progress
    report is shorter), a quoted command whose flag is no pointer at help."""
    assert resolve_mode("auto", line) == "dense"



#: Round 22, review of GEN3: real lines of programs (Oracle's, SQL*Plus's, RMAN's, Ruby's) whose code stands where a
#: ticket's key would, their help pointers and progress reports of shapes the set had not, GNU time's exit line,
#: git's hint label in five more languages.
PROGRAM_LINES = [
    "ORA-00942: table or view does not exist",
    "ORA-01017: invalid username/password; logon denied",
    "ORA-12154: TNS:could not resolve the connect identifier specified",
    "TNS-12541: TNS:no listener",
    "RMAN-06054: media recovery requesting unknown archived log for thread 1 with sequence 10",
    'SP2-0734: unknown command beginning "selct * fr..." - rest of line ignored.',
    "ORA-06512: at line 1",
    "UTF-8: invalid byte sequence in input",
    "For more information, try '--help'.",
    "Try 'python -h' for more information.",
    'Use "go help build" for more information.',
    "Try `cargo install --help` for more information.",
    "Run 'docker COMMAND --help' for more information on a command.",
    "See 'git help config' for more information.",
    "Installing build dependencies ... done",
    "Setting up curl (7.81.0-1ubuntu1.15) ...",
    "Processing triggers for man-db (2.10.2-1) ...",
    "Command exited with non-zero status 1",
    "Hinweis: Verwenden Sie 'git config --global init.defaultBranch <Name>'",
    "ayuda: Usa 'git config --global init.defaultBranch <nombre>' para configurar el nombre de la rama inicial",
    "dica: Usando 'master' como nome do ramo inicial.",
    "suggerimento: Utilizzo di 'master' come nome del branch iniziale.",
    "подсказка: Используется «master» как имя для начальной ветки.",
]
#: Prose of those shapes: sentences and titles quoting a help command, titles ending in ``...``, a task's lead-in
#: (``Consider the following model:``, a real mini-swe-agent task's first line; ``Implement the following plan:``,
#: a real Claude Code task's), and a ticket's title whose subject is a verb's.
PROSE = [
    "Currently, if you call `py.test --version` or `py.test --help` (e.g. to check the version), the conftest is "
    "loaded.",
    "When I run `django-admin --help` the list of commands is missing my custom command.",
    "Calling 'pytest --help' crashes when a conftest.py raises ImportError",
    "tests fail after upgrading to pytest 8...",
    "WIP: Adding support for Python 3.13...",
    "Consider the following model:",
    "Implement the following plan:",
    "Here is the error I get:",
    "Wie behebe ich den Fehler:",
    "SUBTASK-7: list /nonexistent-dir and report what is there.",
]


@pytest.mark.parametrize(("line", "expected"), [(line, "hybrid") for line in PROGRAM_LINES]
                         + [(line, "dense") for line in PROSE])
def test_a_programs_code_pointer_or_progress_and_prose_of_their_shapes(line: str, expected: str) -> None:
    """Bug (round 22, review of GEN3): the ticket rule took a program's code before its message (``ORA-00942: table
    or view does not exist``) for a ticket's title; the help-pointer rule searched anywhere, so a sentence quoting
    ``--help`` went to hybrid, while ``Try 'python -h' ...`` and ``Use "go help build" ...`` did not; ``...`` after a
    number (a title's version) counted as progress, pip's and apt's spaced `` ... done`` did not; any line ending
    in ``:`` was a lead-in. Fixed by the whole line's shape: a zero-padded code or one before a word of what is wrong
    is no ticket's key; a help pointer's quoted command is followed only by what it is for."""
    assert resolve_mode("auto", line) == expected
