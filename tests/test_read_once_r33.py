"""Round 33 (PERF3): a shell command's split and read test are kept for a run's reading, not for the process.

``touched.read_once``'s block (where the ingest makes a run's rows) is a ``trajsearch.memo`` scope: the command split
by the reading and split again by ``steps.is_write``, and tested three or four times a step by ``steps.is_read``, is
answered once in it. A process-wide cache did that too (round 32, PERF2), but kept other tenants' commands for a
server's life. These pin the scope through the public functions: a rule of the module changed between two calls is
seen by the second outside a block (nothing kept; a process-wide cache answers by the first rule) and after one (its
answers dropped with it); inside, the block's first answer stands (kept: the rules are constants, this only shows it).
Real run: ``tests/fixtures/mini-swe-agent/.real`` (gemini-3-pro on SWE-bench; see its SOURCE.md / README.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trajsearch import steps, touched
from trajsearch.ingest.read import read_inputs
from trajsearch.steps import is_read
from trajsearch.touched import read_once, shows_history

RUN = (Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-reverted-harness-edits" / "trajs"
       / "sphinx-doc__sphinx-8595" / "sphinx-doc__sphinx-8595.traj.json")
NOTHING = re.compile(r"(?!)")  # a rule that matches no command


def test_a_commands_answers_live_in_a_reading_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    (run,) = [p.trajectory for p in read_inputs([RUN], tenant="t") if p.trajectory]
    cat = run.steps[0].model_copy(update={"action": "bash", "arguments": {"command": "cat setup.py"}})
    history = "cd /testbed; git show HEAD"  # history only when split at ";" (its second command)

    def answers() -> tuple[bool, bool]:
        return is_read(cat), shows_history(history)

    def changed_rules() -> None:  # no program only reads; no command line splits
        monkeypatch.setattr(steps, "_READ_PROGRAMS", NOTHING)
        monkeypatch.setattr(touched, "_SEPARATORS", frozenset())

    assert answers() == (True, True)
    changed_rules()
    assert answers() == (False, False)  # outside a block: asked afresh
    monkeypatch.undo()
    with read_once(run):
        assert answers() == (True, True)
        changed_rules()
        assert answers() == (True, True)  # the block's answers, kept for it
    assert answers() == (False, False)  # dropped with it
