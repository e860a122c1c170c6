"""``auto`` routing of whole pasted tracebacks and pytest reports, against issue texts that quote one.

Real excerpts: tests/fixtures/mini-swe-agent/.real/pasted-traces/ (README there names the runs they come from).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode

FIXTURE = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "pasted-traces" / "pasted_traces_and_issues.json"
PASTES = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("paste", PASTES["logs"], ids=lambda p: p["source"].split("/")[-1].split(",")[0])
def test_a_pasted_whole_traceback_or_pytest_report_is_searched_as_a_log(paste):
    """Bug (probe J, D2): a traceback whose source or message lines read as sentences
    (``raise TypeError("Legend needs either Axes or Figure as parent")``, the exception's message, a
    comment in the source pytest lists) went to dense: 28 of 70 real pastes, and the window shown held
    the pasted exception line in 1 of those 28. Those lines are the program's words, not the writer's."""
    assert resolve_mode("auto", paste["text"]) == "hybrid", paste["source"]


@pytest.mark.parametrize("task", PASTES["tasks"], ids=lambda t: t["source"].split("/")[-1].split(",")[0])
def test_an_issue_quoting_a_traceback_is_still_a_task(task):
    """A SWE-bench issue's own prose decides, whatever the length of the traceback or code it quotes."""
    assert resolve_mode("auto", task["text"]) == "dense", task["source"]


#: Queries of the longest size the service accepts (20,000 characters) that took seconds each to route,
#: holding the GIL against every other caller: one unbroken token, or a run of blank lines (probe I, I1).
LONG = 20_000
LONG_QUERIES = {
    "hex dump": "0123456789abcdef" * (LONG // 16),
    "non-ASCII token": ("é日ß" * LONG)[:LONG],
    "dunder token": ("__a" * LONG)[:LONG],
    "dotted-dashed token": ("a.b-c" * LONG)[:LONG],
    "run of dots": "a" + "." * (LONG - 1),
    "pytest report padded with blank lines": "pytest -x tests/test_a.py" + "\n \t" * 6000 + "\nE   AssertionError: 3 != 4",
}


@pytest.mark.parametrize("query", LONG_QUERIES.values(), ids=LONG_QUERIES.keys())
def test_a_long_token_or_many_blank_lines_route_as_before(query):
    """Bug (probe I, I1): ``_LOG_SIGNS`` scanned a token to its end from each of its characters, and
    ``_MARKDOWN`` the blank lines below from each of their starts (quadratic: 5 s for a 20,000-character
    hex dump). Both now look once per token or line; these routes are the ones the old patterns gave."""
    assert resolve_mode("auto", query) == "hybrid"


def test_an_issue_with_many_blank_lines_is_still_a_task():
    """Blank lines between the paragraphs of a written task count for nothing, however many there are."""
    issue = ("The payment service rejects a refund when the amount is zero, and it should accept it instead."
             + "\n \n" * 3000 + "This blocks our release, so please fix it before the end of the week.")
    assert resolve_mode("auto", issue) == "dense"
