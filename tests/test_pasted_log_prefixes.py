"""A traceback pasted from a CI log or ``docker compose logs``: every line carries the viewer's prefix (a timestamp, a
service name), which the run that printed it never wrote. Searched as the lines the program printed.

Kept, no step held a pasted line: on the shared runs (round 27, ENG5) ``similar`` of an astroid traceback ending in
``ModuleNotFoundError: No module named 'wrapt'``, each line behind ``worker-1  | ``, ranked first a run whose step
showed the traceback's head and not the error (score 0.063; the same paste plain: 0.242, the error line shown).
Real runs: ``tests/fixtures/mini-swe-agent/.real/deepseek-error-line-elsewhere`` (see its SOURCE.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.excerpt import BLANK_TEXT, blank, query_text, unseen
from trajsearch.ingest.read import read_dump

from cli_support import backend, run_cli  # noqa: F401 - the fixture

RUNS = Path(__file__).parent / "fixtures/mini-swe-agent/.real/deepseek-error-line-elsewhere"
ERROR = ("ImportError: cannot import name 'derivative' from 'scipy.misc' "
         "(/opt/miniconda3/lib/python3.11/site-packages/scipy/misc/__init__.py)")


def _traceback() -> str:
    """The traceback ``deepseek_lite_dev_noparallel/pvlib__pvlib-python-1606`` printed, to its error line."""
    run = next(p.trajectory for p in read_dump(RUNS / "deepseek_lite_dev_noparallel") if p.ok)
    output = next(step.observation for step in run.steps if ERROR in (step.observation or ""))
    end = output.index(ERROR) + len(ERROR)
    return output[output.rindex("Traceback (most recent call last):", 0, end):end]


#: Each line as a log viewer shows it: GitHub Actions' raw log (and ``docker logs -t``), docker compose v2 and v1.
PREFIXED = {
    "ci timestamps": lambda n: f"2026-12-06T19:45:{n % 60:02d}.{1234567 + n}Z ",
    "compose v2": lambda n: "worker-1  | ",
    "compose v1": lambda n: "web_1     | ",
}


def _prefixed(text: str, kind: str) -> str:
    return "".join(PREFIXED[kind](n) + line for n, line in enumerate(text.splitlines(keepends=True)))


@pytest.mark.parametrize("kind", sorted(PREFIXED))
def test_a_prefixed_paste_is_searched_as_the_lines_the_run_printed(backend, kind) -> None:
    """Bug: the prefixes reached the search: no step held the pasted lines verbatim, and the step shown was not
    the one printing the error. (Plumbing, on the hashing embedder: the same answer as the plain paste.)"""
    code, out, err = run_cli("ingest", str(RUNS), "--quiet")
    assert code == 0, err
    plain = _traceback()
    assert plain.count("\n") >= 4
    answers = {}
    for name, pasted in (("plain", plain), (kind, _prefixed(plain, kind))):
        code, out, err = run_cli("search", pasted, "--level", "step", "-k", "3", "--json")
        assert code == 0, err
        hits = json.loads(out)
        answers[name] = [(h["trajectory_id"], h["verbatim"]) for h in hits]
        assert hits[0]["verbatim"] and ERROR in hits[0]["text"], (name, hits[0])
    assert answers[kind] == answers["plain"]


def test_only_a_prefix_every_line_carries_goes() -> None:
    """A line of the paste's own that looks like one (a shell's pipe, a date the program logged) stays, and so does
    every prefix where one line lacks it: they may be the program's."""
    assert query_text("ls -1 | grep x") == "ls -1 | grep x"
    assert query_text("web-1 | x\nplain line") == "web-1 | x\nplain line"
    logged = "2026-12-06 19:45:01 INFO started\nTraceback (most recent call last):\nKeyError: 'x'"
    assert query_text(logged) == logged
    assert query_text("2026-12-06T19:45:01Z a\n\n2026-12-06T19:45:02Z\n2026-12-06T19:45:03Z b") == "a\n\n\nb"


def test_one_line_keeps_what_looks_like_a_prefix() -> None:
    """Bug (review of ENG5, 2): a paste of one line lost its head, evidence of no log viewer: a date the program
    logged (on the shared runs the step printing it fell from 0.355 to 0.121), a table row's first cell, a pipe."""
    for line in ("2026-04-10 04:32:06,551 :: WARNING :: pydicom :: Test warning message",
                 "col_1 | col_2 | x", "py-3 | grep foo", "\n2026-04-10T04:32:06Z started\n\n"):
        assert query_text(line) == line


def test_a_paste_of_prefixes_only_is_searched_as_written(backend) -> None:
    """Bug (review of ENG5, 1): a bare timestamp (a step printing it was found first at 0.295) or a compose prefix
    alone was refused as holding no visible character, which it does."""
    for text in ("2026-04-10 04:32:06", "web-1 |", "web-1 |\nweb-1 |", "2026-04-10T04:32:06Z\n2026-04-10T04:32:07Z"):
        assert not blank(text) and query_text(text) == text
    assert run_cli("ingest", str(RUNS), "--quiet")[0] == 0
    code, out, err = run_cli("search", "2026-04-10 04:32:06", "--level", "step")
    assert code == 0 and BLANK_TEXT not in err, err


def test_a_paste_from_windows_loses_its_prefixes_too() -> None:
    """Bug (review of ENG5, 5): a line holding only its time ended in ``\\r\\n``, matched no prefix, and the whole
    paste kept every one."""
    pasted = "2026-12-06T19:45:01Z a\r\n2026-12-06T19:45:02Z\r\n2026-12-06T19:45:03Z b\r\n"
    assert query_text(pasted) == "a\r\n\r\nb\r\n"


def test_a_prefixed_row_is_read_as_a_query_is() -> None:
    """Bug (review of ENG5, 3): a caller comparing rows with a query reads through :func:`query_text` only the rows
    :func:`unseen` names; a row of compose lines was not named, so it kept its prefixes against a paste that had lost
    them, unless it also held a colour code."""
    rows = ("web-1  | Traceback (most recent call last):\nweb-1  | ModuleNotFoundError: No module named 'wrapt'",
            "  2026-12-06T19:45:01Z a\n2026-12-06T19:45:02Z b", "plain\nlines", "col_1 | col_2 | x")
    for row in rows:
        assert query_text(row) == row or unseen(row), row
    assert unseen(rows[0]) and not unseen(rows[2])
