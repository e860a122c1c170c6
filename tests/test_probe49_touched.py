"""The SWE-bench harness's own edits are no work of the run (issue 11, round 16).

``git diff`` shows every uncommitted change, and the SWE-bench harness leaves its set-up edits uncommitted in some
images: ``-rA`` on ``tox.ini``'s pytest line and pins in ``setup.py`` for sphinx, pins in astropy's
``pyproject.toml``, a ``.coveragerc`` deleted or written. So they came with every submission of those repositories
and counted as what the run changed: in the summary's ``Touched:`` line, hence as shared work between runs, in
``where.likely_files`` (``tox.ini`` a likely file for every sphinx task) and in ``eval_generalise``'s ground truth.
No action of such a run names them (measured on 1,312 SWE-bench runs of four agents: 159 such files, every one
``tox.ini``, ``setup.py``, ``pyproject.toml`` or ``.coveragerc``; of the 1,152 files the runs' actions name, none is
lost), so a diffed file that no action names is left out.

``HARNESS`` is a real mini-swe-agent 1.15.0 run of gemini-3-pro-preview on SWE-bench Verified (see its SOURCE.md),
``CODER`` a real CodeR run on SWE-bench Lite whose whole submission is a ``.coveragerc`` its environment wrote.
"""

from __future__ import annotations

import sys
from pathlib import Path

from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory
from trajsearch.represent import extractive_summary
from trajsearch.touched import touched

FIXTURES = Path(__file__).parent / "fixtures"
HARNESS = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-harness-edits"
CODER = FIXTURES / "swe-agent" / ".real" / "coder" / "trajs" / "sympy__sympy-18621.traj"


def _run(path: Path) -> Trajectory:
    (parsed,) = [p for p in read_dump(path, tenant="t") if p.error is None]
    return parsed.trajectory


def _touched_line(run: Trajectory) -> str:
    return next(line for line in extractive_summary(run).split("\n") if line.startswith("Touched:"))


def test_harness_edits_in_a_submitted_diff_are_not_what_the_run_changed() -> None:
    """Bug (real gemini-3-pro run, sphinx-doc__sphinx-10323): its submission ``git add -A && git diff --cached``
    holds the fix, a test, and the harness's ``-rA`` in ``tox.ini``; the summary said it changed ``tox.ini``."""
    run = _run(HARNESS / "trajs" / "sphinx-doc__sphinx-10323" / "sphinx-doc__sphinx-10323.traj.json")
    final = run.steps[-1].observation or ""
    assert "diff --git a/tox.ini b/tox.ini" in final and "pytest -rA --durations" in final  # handed in with the fix
    assert touched(run).changed == ["sphinx/directives/code.py", "tests/test_directive_code.py"]
    line = _touched_line(run)
    assert "changed sphinx/directives/code.py, tests/test_directive_code.py (modules " in line
    assert "tox.ini" not in line


def test_a_submission_of_only_the_environments_edit_changed_nothing_where_the_record_is_whole() -> None:
    """Bug (real CodeR run, sympy__sympy-18621): the diff it handed in creates a ``.coveragerc`` "added by
    auto-code-rover" (the environment CodeR ran in), which none of its commands named (it created and edited
    ``reproduce.py``, then ran it): the summary said the run created ``.coveragerc``. Its record is trimmed (39 model
    calls, 5 steps kept), and a trimmed record cannot tell such a file from scratch files the run created in steps
    it no longer holds (review RR3: the live-swe-agent rerun's ``test_settings_minimal.py``): there it stays; with
    every step kept it is dropped."""
    run = _run(CODER)
    shown = "\n".join(s.observation or "" for s in run.steps)
    assert "diff --git a/.coveragerc b/.coveragerc\nnew file mode" in shown and "by auto-code-rover" in shown
    assert touched(run).created == [".coveragerc"]
    whole = run.model_copy(update={"metadata": {**run.metadata, "api_calls": len(run.steps)}})
    found = touched(whole)
    assert found.changed == [] and found.created == []
    assert ".coveragerc" not in extractive_summary(whole)


def test_eval_ground_truth_leaves_the_harness_edits_out() -> None:
    """``eval_generalise``'s relevance ("edits a same file") read every file of the submission: two sphinx runs were
    relevant to each other for sharing the harness's ``tox.ini``. ``--patch-truth`` keeps the old definition."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
    import eval_generalise  # noqa: PLC0415

    runs, truth = eval_generalise.read_swe(HARNESS, None)
    assert truth[runs[0].trajectory_id] == {"sphinx/directives/code.py", "tests/test_directive_code.py"}
    _, whole = eval_generalise.read_swe(HARNESS, None, whole_patch=True)
    assert whole[runs[0].trajectory_id] == {"sphinx/directives/code.py", "tests/test_directive_code.py", "tox.ini"}


def test_a_diff_of_upstream_history_is_no_change_of_the_run() -> None:
    """Bug (real mini-swe-agent run, deepseek-chat, pylint-dev__astroid-1333): it read upstream history with
    ``git show 51f552ce`` and ``git diff d0775d5f..e36b4388 -- astroid/builder.py``; the files of those commits'
    diffs were listed as changed beside its fix (``info.submission`` changes ``astroid/modutils.py`` alone)."""
    run = _run(FIXTURES / "mini-swe-agent" / ".real" / "deepseek-history-diffs" / "pylint-dev__astroid-1333.traj.json")
    assert touched(run).changed == ["astroid/modutils.py"]
    line = _touched_line(run)
    assert "changed astroid/modutils.py (modules astroid.modutils)" in line and "builder.py" not in line


# -- review RR11 (fix FR11): a diffed file no action names is dropped only where the record can say so ----------

BUILT = FIXTURES / "mini-swe-agent" / ".built-unnamed-writes"  # dotted: not read with the directory
REAL = FIXTURES / "mini-swe-agent" / ".real"
SWE = FIXTURES / "swe-agent" / ".real"


def test_a_record_without_its_editing_steps_keeps_what_its_diff_shows() -> None:
    """Trimmed real records (and SWE-agent trajectories whose editing steps were not kept) hold the submitted patch
    but none of the steps that made it: they name none of the project's files it shows (at most the reproduction
    script it hands in), so they cannot say the environment changed them. Dropping them left ten real fixtures
    with nothing changed, and acr's scikit-learn-13779 as "created bug_reproduction.py" alone. (Each made more model
    calls than it keeps steps: a whole record naming none of its diff's files, as seven real sphinx / CodeR runs
    that handed in only the harness's ``tox.ini`` and ``setup.py``, still drops them.)"""
    cases = {REAL / "gemini-3-pro-namesakes" / "scikit-learn__scikit-learn-10297.traj.json": "sklearn/linear_model/ridge.py",
             REAL / "gemini-3-pro-namesakes" / "sphinx-doc__sphinx-9698.traj.json": "sphinx/domains/python.py",
             SWE / "coder-fail" / "trajs" / "pytest-dev__pytest-7432.traj": "src/_pytest/skipping.py",
             SWE / "acr-swe-agent-gpt4-lite-steps" / "scikit-learn__scikit-learn-13779.traj": "sklearn/ensemble/voting.py"}
    for path, changed in cases.items():
        run = _run(path)
        assert changed in touched(run).changed, path
        assert f"changed {changed}" in _touched_line(run), path


def test_a_command_that_writes_files_it_does_not_name_keeps_them() -> None:
    """``npm install`` rewrites ``package.json`` and its lock file, ``grep -rl | xargs sed -i`` the files grep
    found: no command names them, and they are the run's own change."""
    assert touched(_run(BUILT / "npm.traj.json")).changed == ["package.json", "package-lock.json", "src/schema.ts"]
    assert touched(_run(BUILT / "rename.traj.json")).changed == ["src/app/core.py", "src/app/util.py"]


def test_writes_that_name_their_files_by_a_glob_or_a_walk_keep_them() -> None:
    """Review RR3: a whole run whose every write names its files by a glob (``sed -i ... src/app/*.py``, ``perl
    -pi``) or a script's walk (``rglob``) named none of its diff's files, and all of them were dropped: the run read
    as changing nothing."""
    for name in ("glob.traj.json", "perl.traj.json", "pyscript.traj.json"):
        assert touched(_run(BUILT / name)).changed == ["src/app/core.py", "src/app/util.py"], name


def test_a_cut_record_keeps_what_its_diff_shows() -> None:
    """A record whose middle was left out (``steps_dropped``) may have named a file in what is missing."""
    run = _run(HARNESS / "trajs" / "sphinx-doc__sphinx-10323" / "sphinx-doc__sphinx-10323.traj.json")
    assert "tox.ini" not in touched(run).changed  # whole, the harness's edit is dropped
    cut = run.model_copy(update={"metadata": {**run.metadata, "steps_truncated_from": 80,
                                              "steps_dropped": [20, 30, 49]}})
    assert "tox.ini" in touched(cut).changed


def test_history_is_judged_per_command_of_a_chained_line() -> None:
    """``git log --oneline -1 && git diff`` shows the run's own diff (matched as history at its start, the run's fix
    was lost); ``git --no-pager log -p`` shows an upstream commit's (git's global options hid it)."""
    assert touched(_run(BUILT / "logdiff.traj.json")).changed == ["src/app/core.py"]
    assert touched(_run(BUILT / "nopager2.traj.json")).changed == ["astroid/modutils.py"]


def test_a_call_word_is_named_only_by_its_inflections() -> None:
    """Review RR11: a task word naming a call's word was any longer word starting with its stem less ``e`` / ``y``,
    so "application" named ``apply``, "story" ``store``, "creative" ``create``, "replace" ``reply``, "sender"
    ``send``. Only an inflection after the stem counts now; the forms tau2 airline needs still do."""
    from trajsearch.runtime.rerank import says_call  # noqa: PLC0415

    for call, word in (("cancel", "cancelled"), ("cancel", "cancellation"), ("reservation", "reservations"),
                       ("book", "booked"), ("exchange", "exchanged"), ("modify", "modified"), ("update", "updating"),
                       ("modify", "modifications"), ("book", "bookings")):  # review RR3: tau2's own words
        assert says_call(call, {word}), (call, word)
    for call, word in (("apply", "application"), ("store", "story"), ("create", "creative"), ("reply", "replace"),
                       ("send", "sender"), ("update", "upgrade")):
        assert not says_call(call, {word}), (call, word)


def test_the_digest_does_not_keep_the_harness_edits_as_the_runs_outcome() -> None:
    """Review RR11: ``digest.kept_files`` (which steps an exemplar keeps first) counted ``tox.ini``, the harness's
    edit that ``touched`` leaves out, as a file the run's outcome kept."""
    from trajsearch.digest import kept_files  # noqa: PLC0415

    run = _run(HARNESS / "trajs" / "sphinx-doc__sphinx-10323" / "sphinx-doc__sphinx-10323.traj.json")
    assert kept_files(run) == {"sphinx/directives/code.py", "tests/test_directive_code.py"}



def test_the_digest_reads_a_trimmed_records_created_files_as_touched_does() -> None:
    """Review RZ: ``own_changes`` (the digest's and the eval's reading) filled only what steps said, never the files
    their diffs show created, so for a record not known whole whose diff only creates files ``touched`` kept both
    files and ``digest.kept_files`` dropped the one no step named: two readings of one run. Built as SWE-agent
    records such a run (create, run, submit showing the patch)."""
    from trajsearch.digest import kept_files  # noqa: PLC0415
    from trajsearch.model import Step  # noqa: PLC0415

    diff = ("diff --git a/reproduce.py b/reproduce.py\nnew file mode 100644\n--- /dev/null\n+++ b/reproduce.py\n"
            "@@ -0,0 +1,2 @@\n+import astropy\n+print(1)\n"
            "diff --git a/astropy/io/tests/test_issue.py b/astropy/io/tests/test_issue.py\nnew file mode 100644\n"
            "--- /dev/null\n+++ b/astropy/io/tests/test_issue.py\n@@ -0,0 +1,2 @@\n+def test_x():\n+    pass\n")
    steps = [Step(index=0, action="create", arguments={"command": "create reproduce.py"},
                  observation="[File: /repo/reproduce.py (1 lines total)]"),
             Step(index=1, action="python", arguments={"command": "python reproduce.py"}, observation="1"),
             Step(index=2, action="submit", arguments={"command": "submit"}, observation=diff)]
    run = Trajectory(trajectory_id="r1", tenant="t", task="fix the bug in astropy io", steps=steps)
    assert touched(run).created == ["reproduce.py", "astropy/io/tests/test_issue.py"]
    assert kept_files(run) == {"reproduce.py", "astropy/io/tests/test_issue.py"}
