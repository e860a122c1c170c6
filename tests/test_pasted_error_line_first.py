"""A pasted traceback is about its last line: the runs that met that error come before runs sharing its frames only.

On gemini-3-pro's 231 django runs a traceback of Django's sqlite backend ending in ``no such table: __main___author``
ranked the one other run that met that error below runs printing the same frames for other tables (a near match of
all but one word): of 46 sampled tracebacks whose last line names what broke, the runs holding it came first in 18
(round 25, ENG3). Real runs: ``tests/fixtures/mini-swe-agent/.real/gemini-3-pro-error-line-first`` (see its SOURCE.md).
An error worded alike for any code (``IndentationError: unexpected indent``) keeps the frames deciding: probe 49's
``test_a_pasted_tracebacks_error_line_does_not_pull_other_tasks_runs_in``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.excerpt import names_what_broke
from trajsearch.search import TrajSearch

from conftest import real_runs_store

RUNS = Path(__file__).parent / "fixtures/mini-swe-agent/.real/gemini-3-pro-error-line-first"
ERROR = "sqlite3.OperationalError: no such table: __main___author"
MET_IT = "django__django-16263"


store = real_runs_store(RUNS, "errline")  # the five runs with the real model (built once)


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "auto"])
def test_the_run_that_met_the_pasted_error_comes_first(store: TrajSearch, mode: str) -> None:
    paste = (RUNS / "pasted-traceback.txt").read_text()
    assert paste.rstrip().endswith(ERROR)
    matches = store.similar_runs(text=paste, tenant="acme", k=5, mode=mode)
    assert len(matches) == 5
    assert matches[0].best.task_id == MET_IT, [m.trajectory_id for m in matches]
    assert ERROR in matches[0].best.text  # shown by the step that met it
    assert all(ERROR not in m.best.text for m in matches[1:])


def test_which_error_lines_name_what_broke() -> None:
    """The lines of the sampled tracebacks, as the rule reads them: a name (a table, a module in quotes, a dotted
    class) says what broke; plain words, or numbers only (with a unit too), say a kind of failure many tasks' runs
    meet (RENG3: ``30s`` and ``e.g.`` had counted as names)."""
    named = [ERROR, "ModuleNotFoundError: No module named 'test_app'",
             "django.db.utils.OperationalError: no such table: auth_user",
             "RuntimeError: Model class __main__.MyModel doesn't declare an explicit app_label"]
    kinds = ["IndentationError: unexpected indent", "SyntaxError: invalid syntax", "AssertionError: 0 != 1",
             "RuntimeError: Settings already configured.", "IndexError: tuple index out of range",
             "TimeoutError: timed out after 30s", "AssertionError: expected e.g. a list"]  # a unit, an abbreviation
    assert [names_what_broke(line) for line in named] == [True] * len(named)
    assert [names_what_broke(line) for line in kinds] == [False] * len(kinds)


ELSEWHERE = Path(__file__).parent / "fixtures/mini-swe-agent/.real/deepseek-error-line-elsewhere"
elsewhere = real_runs_store(ELSEWHERE, "errline-elsewhere")  # five whole real pvlib runs, built once


def test_a_traceback_from_another_machine_still_finds_the_run_that_met_its_error(elsewhere: TrajSearch) -> None:
    """No run holds the pasted last line word for word (its path's ``python3.10``, the run's ``python3.11``): the
    run that met the error, nearly holding the paste, comes first still, not the runs sharing only its frames
    (round 25, RENG3: it came 4th, below three runs that never met it)."""
    paste = (ELSEWHERE / "pasted-traceback.txt").read_text()
    assert "python3.10" in paste.splitlines()[-1]
    matches = elsewhere.search(paste, tenant="acme", levels=("step", "failure"), k=3, mode="hybrid")
    met = [m.trajectory_id for m in matches if "cannot import name 'derivative' from 'scipy.misc'" in m.text]
    assert matches and met == [matches[0].trajectory_id], [(m.trajectory_id, m.text[-120:]) for m in matches]
    assert "noparallel" in met[0]
