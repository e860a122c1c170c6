"""``eval_generalise.py --named-truth``: work two runs share by a file neither run's actions name is no evidence.

Without a verdict (SWE-agent dumps: a submitted patch counts as a success) the runs that fixed nothing and handed in
only the SWE-bench harness's ``tox.ini`` / ``setup.py`` edits are relevant to each other by the default ground truth:
``touched.own_changes`` keeps every file of a diff whose project files the run never names, since a record may lack
the steps that made its change. On AutoCodeRover's ``cost_2_3`` SWE-agent run, 8 of the 29 findable tasks were
findable only so (all sphinx), each a hit; ``--named-truth`` reads only the files the run's actions name.
"""

from __future__ import annotations

import sys
from pathlib import Path

from trajsearch.touched import named_by_actions, own_changes

RUNS = Path(__file__).parent / "fixtures" / ".ex28" / "swe-agent-harness-only"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import eval_generalise  # noqa: E402


def test_runs_sharing_only_the_harness_edits_are_relevant_only_by_the_default_truth() -> None:
    runs, truth = eval_generalise.read_swe(RUNS, None)
    by_task = {run.task_id: run for run in runs}
    first, second = by_task["sphinx-doc__sphinx-7738"], by_task["sphinx-doc__sphinx-10451"]
    assert "tox.ini" in truth[first.trajectory_id] & truth[second.trajectory_id]
    assert eval_generalise.relevant_to([first], second, truth, "swe")

    _, named = eval_generalise.read_swe(RUNS, None, named_only=True)
    assert named[first.trajectory_id] == named[second.trajectory_id] == frozenset()
    assert not eval_generalise.relevant_to([first], second, named, "swe")


def test_named_by_actions_keeps_what_the_run_named() -> None:
    """The strict reading drops only what no action names: of every file 7738's diff shows, its scratch project's
    ``a.py``, ``conf.py`` and ``index.rst`` (made by its ``create`` commands) stay, the harness's edits go."""
    runs, _ = eval_generalise.read_swe(RUNS, None)
    run = next(r for r in runs if r.task_id == "sphinx-doc__sphinx-7738")
    diffed = ["a.py", "conf.py", "index.rst", "setup.py", "tox.ini"]
    assert set(own_changes(run, diffed)) >= {"setup.py", "tox.ini"}  # the record cannot tell: all kept
    kept = named_by_actions(run, diffed)
    assert kept == ["a.py", "conf.py", "index.rst"]
