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
