"""Probe 53 (R11h): what a run reverted is not what it changed.

A mini-swe-agent run on SWE-bench sees the harness's uncommitted set-up edits (``setup.py`` pins, ``-rA`` in
``tox.ini``) in a ``git diff``, reverts them (``git checkout setup.py tox.ini``) and hands in its fix alone. The summary's
``Touched:`` line said it changed all three: every diff a run showed counted, the revert did not. Those files then voted
for where a new sphinx task's work lies (``setup.py`` led the guess for sphinx-7757 at 0.82) and made the run an exemplar
for tasks it shares nothing with. Real run: ``tests/fixtures/mini-swe-agent/.real/gemini-3-pro-reverted-harness-edits``.
"""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.represent import extractive_summary
from trajsearch.touched import touched

FIXTURES = Path(__file__).parent / "fixtures"
REVERTED = (FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-reverted-harness-edits" / "trajs"
            / "sphinx-doc__sphinx-8595" / "sphinx-doc__sphinx-8595.traj.json")


def _run(path: Path) -> Trajectory:
    (parsed,) = [p for p in read_dump(path, tenant="t") if p.error is None]
    return parsed.trajectory


def test_files_a_run_reverted_after_its_diff_showed_them_are_not_what_it_changed() -> None:
    run = _run(REVERTED)
    shown = [s.observation or "" for s in run.steps if "diff --git a/setup.py" in (s.observation or "")]
    assert shown and "diff --git a/tox.ini" in shown[0]  # a diff of the run showed the harness's edits
    assert "diff --git a/setup.py" not in (run.steps[-1].observation or "")  # and its submission does not hold them
    assert touched(run).changed == ["sphinx/ext/autodoc/__init__.py"]
    line = next(x for x in extractive_summary(run).split("\n") if x.startswith("Touched:"))
    assert line.startswith("Touched: changed sphinx/ext/autodoc/__init__.py (modules ")
    assert "changed setup.py" not in line and "tox.ini, " not in line.split(" (modules")[0]


def test_a_file_written_again_after_its_revert_stays_changed() -> None:
    """The same run, its revert followed by a new edit of one of the files and no diff after: still changed."""
    run = _run(REVERTED)
    at = next(i for i, s in enumerate(run.steps) if "git checkout setup.py tox.ini" in (s.action or "") + str(s.arguments))
    edit = run.steps[at].model_copy(update={"action": "bash", "arguments": {"command": "sed -i 's/a/b/' setup.py"},
                                            "observation": ""})
    steps = [*run.steps[:at + 1], edit]
    assert sorted(touched(run.model_copy(update={"steps": steps})).changed) == ["setup.py", "sphinx/ext/autodoc/__init__.py"]
