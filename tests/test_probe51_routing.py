"""Probe 51, AR: ``auto`` routing of short task texts (issue titles), and the eval's store-reuse trap.

Real inputs: tests/fixtures/mini-swe-agent/.real/titles/ (SOURCE.md there names the runs they come from).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajsearch.fusion import resolve_mode

FIXTURE = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "titles" / "titles_and_log_lines.json"
CASES = json.loads(FIXTURE.read_text())


@pytest.mark.parametrize("title", [t["text"] for t in CASES["titles"]])
def test_an_issue_title_naming_code_is_searched_as_prose(title):
    """Bug (probe 51, AR): an issue's title names the code it is about (``get_FOO_display()``, ``autodoc:``,
    ```Permutation` constructor``), and ``auto`` counted those names as log signs: half of 1,300 SWE-bench titles
    went to hybrid, where dense found a relevant run of another task more often (gemini-3-pro's 116 such tasks,
    plain search of task/summary rows, k=5: 0.69 dense, 0.55 hybrid)."""
    assert resolve_mode("auto", title) == "dense"


@pytest.mark.parametrize("line", CASES["logs"], ids=lambda c: c["kind"])
def test_a_log_line_of_a_titles_length_is_still_a_log(line):
    """The same length and words as a title, but a program's message, a command, a tool call: hybrid."""
    assert resolve_mode("auto", line["text"]) == "hybrid", line["text"]


@pytest.mark.parametrize("line", [
    "rm: cannot remove 'verify_fix.py': No such file or directory",
    "grep: sklearn/datasets/tests: Is a directory",
    "FAILURE: prefetch_related returned None for 'foo'",
    "collecting ... ERROR: not found: /testbed/test/rules/std_test.py::test_rules",
    "============================ no tests ran in 0.00s =============================",
    "4ef57c7d Remove astroid.__init__.py from the isort exclude",
    "(227 more lines below)",
])
def test_a_programs_labelled_message_is_no_topic_title(line):
    """A title may open with its topic (``autodoc: ...``); a program's message opens with the program or a level
    and mostly holds a label of its own (real lines of the gemini-3-pro and shared runs' outputs)."""
    assert resolve_mode("auto", line) == "hybrid"
