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
from trajsearch.model import Step, Trajectory
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


# -- review RR11h: a revert the run took back, every diffed file reverted, directories, other revisions --------------

RESTORED = (FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-revert-restored" / "trajs"
            / "sympy__sympy-19346" / "sympy__sympy-19346.traj.json")
ALL_REVERTED = FIXTURES / "mini-swe-agent" / ".real" / "gemini-3-pro-reverted" / "sphinx-doc__sphinx-9281.traj.json"


def _blanked(run: Trajectory) -> Trajectory:
    """The run as Harbor's atif2otel OTLP export keeps it: every observation empty (no closing diff to read)."""
    return run.model_copy(update={"steps": [s.model_copy(update={"observation": ""}) for s in run.steps]})


def _step(run: Trajectory, command: str) -> Step:
    return run.steps[-1].model_copy(update={"action": "bash", "arguments": {"command": command}, "observation": ""})


def test_a_reverted_file_put_back_by_a_step_naming_it_stays_changed() -> None:
    """sympy-19346: ``cp repr.py repr.py.bak; git checkout repr.py``, tests, ``mv repr.py.bak repr.py``: the fix its
    submission holds. With no diff to read after the revert (observations blanked), the ``mv`` is what says so."""
    run = _run(RESTORED)
    assert "sympy/printing/repr.py" in (run.steps[-1].observation or "")  # the submission holds the fix
    assert touched(_blanked(run)).changed == ["sympy/printing/repr.py"]
    head = run.steps[:-1]
    for later in ("python apply_fix.py",):  # a script written before the revert, naming the file, run after it
        script = _step(run, "cat <<'EOF' > apply_fix.py\np = 'sympy/printing/repr.py'\nopen(p, 'w').write('x')\nEOF")
        at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
        steps = [*head[:at], script, *head[at:at + 2], _step(run, later)]
        assert "sympy/printing/repr.py" in touched(_blanked(run.model_copy(update={"steps": steps}))).changed
    # reads after the revert, and a file merely sharing its name's end, do not bring it back
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    for later in ("cat sympy/printing/repr.py", "git diff sympy/printing/repr.py",
                  "bin/test sympy/printing/tests/test_repr.py", "rm sympy/printing/repr.py.bak",
                  "sed -i 's/a/b/' sympy/core/repr.py"):
        steps = [*head[:at + 1], _step(run, later)]
        assert "sympy/printing/repr.py" not in touched(_blanked(run.model_copy(update={"steps": steps}))).changed, later


def test_a_run_whose_every_diffed_file_was_reverted_changed_what_it_wrote() -> None:
    """sphinx-9281: its only diff showed the harness's ``setup.py`` / ``tox.ini`` edits, which it reverted; its fix
    (``sed -i ... sphinx/util/inspect.py``) no diff showed. It changed inspect.py, not nothing; its scratch project
    (``rm -rf reproduce_issue``) and test file (``rm``) are gone."""
    run = _run(ALL_REVERTED)
    assert touched(run).changed == ["sphinx/util/inspect.py"]


def test_a_removed_directory_takes_its_files() -> None:
    """``rm -rf reproduce_issue`` removes ``reproduce_issue/conf.py`` written before it."""
    run = _blanked(_run(RESTORED))
    steps = [*run.steps[:-1], _step(run, "mkdir -p scratch && echo x > scratch/conf.py"), _step(run, "rm -rf scratch")]
    assert touched(run.model_copy(update={"steps": steps})).changed == ["sympy/printing/repr.py"]


def test_a_checkout_of_another_revision_is_no_revert() -> None:
    """``git checkout HEAD~1 -- F``, ``git restore --source=REV F``, ``git checkout -p F`` write other content into F:
    the file is still changed. ``git checkout HEAD -- F`` and ``git restore --source=HEAD F`` are reverts."""
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    for command, kept in (("git checkout HEAD~1 -- sympy/printing/repr.py", True),
                          ("git checkout stash@{0} -- sympy/printing/repr.py", True),
                          ("git checkout origin/main sympy/printing/repr.py", True),
                          ("git restore --source=abc123 sympy/printing/repr.py", True),
                          ("git restore -s HEAD~2 sympy/printing/repr.py", True),
                          ("git checkout -p sympy/printing/repr.py", True),
                          ("git checkout HEAD -- sympy/printing/repr.py", False),
                          ("git restore --source=HEAD sympy/printing/repr.py", False),
                          ("git checkout -- sympy/printing/repr.py", False)):
        steps = [*head[:at], _step(run, command)]
        changed = touched(run.model_copy(update={"steps": steps})).changed
        assert ("sympy/printing/repr.py" in changed) is kept, command


def test_running_a_reverted_file_does_not_bring_it_back() -> None:
    """pytest-7236: ``git checkout testing/test_unittest.py`` then ``pytest testing/test_unittest.py`` (sympy-18199:
    ``bin/test``); xarray-2905:
    ``rm apply_fix.py`` then ``python apply_fix.py``. Running a file writes nothing into it."""
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    for later in ("pytest sympy/printing/repr.py", "python3 sympy/printing/repr.py",
                  "python -m pytest sympy/printing/repr.py -q", "bin/test sympy/printing/repr.py"):
        steps = [*head[:at + 1], _step(run, later)]
        assert "sympy/printing/repr.py" not in touched(run.model_copy(update={"steps": steps})).changed, later


# -- review RALL-A of probe 53: what a later step writes is judged per command, git restore's operands, cost -------


def _after_revert(command: str) -> list[str]:
    """What sympy-19346 (observations blanked) changed when ``command`` follows its ``git checkout repr.py``."""
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    return touched(run.model_copy(update={"steps": [*head[:at + 1], _step(run, command)]})).changed


def _instead_of_revert(command: str) -> list[str]:
    """What sympy-19346 (observations blanked) changed when ``command`` stands in for its ``git checkout repr.py``."""
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    return touched(run.model_copy(update={"steps": [*head[:at], _step(run, command)]})).changed


def test_a_later_command_writing_another_file_does_not_bring_a_reverted_one_back() -> None:
    """A test run of the reverted file with its output kept (``> out.txt``, ``| tee log.txt``), a ``diff`` of it, a
    ``git add`` of it write nothing into it: what the line writes is judged per command, not for the whole step."""
    for later in ("python -m pytest sympy/printing/repr.py -q > out.txt 2>&1",
                  "python -m pytest sympy/printing/repr.py 2>&1 | tee log.txt",
                  "bin/test sympy/printing/repr.py > test_out.txt",
                  "diff sympy/printing/repr.py /tmp/repr.py.orig > d.txt",
                  "git add sympy/printing/repr.py && git commit -m fix",
                  "cp sympy/printing/repr.py /tmp/repr.py.orig"):
        assert "sympy/printing/repr.py" not in _after_revert(later), later
    for later in ("python -m pytest sympy/printing -q > out.txt; mv repr.py.bak sympy/printing/repr.py",
                  "echo ok > log.txt && sed -i 's/a/b/' sympy/printing/repr.py",
                  "cp /tmp/repr_fixed.py sympy/printing/repr.py"):
        assert "sympy/printing/repr.py" in _after_revert(later), later  # one of its commands does write it


def test_git_restore_of_several_files_undoes_each() -> None:
    """``git restore`` takes no revision operand (only ``--source`` / ``-s``): ``git restore Makefile F`` and ``git
    restore src F`` undo F. (``git checkout main F`` does name a revision: see the test above.)"""
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    for command in ("git restore Makefile sympy/printing/repr.py", "git restore src sympy/printing/repr.py",
                    "git restore --worktree doc sympy/printing/repr.py"):
        steps = [*head[:at], _step(run, command)]
        assert "sympy/printing/repr.py" not in touched(run.model_copy(update={"steps": steps})).changed, command


def test_a_revert_followed_by_another_in_one_line_stays_undone() -> None:
    """Bug: ``git checkout F; git restore nosuch.py`` (real git 2.39.5's words below) left F changed: the later
    ``git restore`` was taken for a command that may write F again, and its refusal for the checkout's. Another
    revert writes no change into a file; a switch of branch, another revision's content or a stash brought back may."""
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    at = next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments))
    said = "Updated 1 path from the index\nerror: pathspec 'nosuch.py' did not match any file(s) known to git\n"

    def changed(command: str, observation: str = "") -> bool:
        step = _step(run, command).model_copy(update={"observation": observation})
        return "sympy/printing/repr.py" in touched(run.model_copy(update={"steps": [*head[:at], step]})).changed

    assert not changed("git checkout sympy/printing/repr.py; git restore nosuch.py", said)
    for command in ("git restore sympy/printing/repr.py && git checkout setup.py",
                    "git checkout -- sympy/printing/repr.py && rm -f out.txt",
                    "git checkout sympy/printing/repr.py && git reset --hard"):
        assert not changed(command), command
    for command in ("git checkout sympy/printing/repr.py; git stash pop",
                    "git checkout sympy/printing/repr.py && git checkout fix-branch",
                    "git checkout sympy/printing/repr.py; git checkout HEAD~1 -- sympy/printing/repr.py"):
        assert changed(command), command


def test_a_hard_reset_to_another_revision_or_a_tags_checkout_writes_a_reverted_file_again() -> None:
    """Bugs (review RFM6): ``git checkout F; git reset --hard HEAD~1`` read F undone, the reset taken for another
    revert, but a reset to a revision other than HEAD writes that revision's files; ``git checkout v1.2 F`` was
    taken for a restore of two files, the tag having a dot."""
    for command, kept in (("git checkout sympy/printing/repr.py; git reset --hard HEAD~1", True),
                          ("git checkout sympy/printing/repr.py && git reset --hard origin/main", True),
                          ("git checkout sympy/printing/repr.py; git checkout v1.2 sympy/printing/repr.py", True),
                          ("git checkout 2.0.1 sympy/printing/repr.py", True),
                          ("git checkout sympy/printing/repr.py; git reset --hard HEAD", False),
                          ("git checkout sympy/printing/repr.py; git reset --hard", False),
                          ("git checkout setup.py sympy/printing/repr.py", False)):
        assert ("sympy/printing/repr.py" in _instead_of_revert(command)) is kept, command


def test_a_switch_to_a_branch_with_a_slash_is_no_file_restored_and_may_write_a_reverted_file() -> None:
    """Bug (review RALL-A 4): ``git checkout F && git checkout feature/x`` read F undone: the branch's slash made it a
    file that git restored, so the switch, which writes the branch's files, was taken for another revert. A hard
    reset to a commit's id is one to the commit the agent started from (its edits are gone whichever it is)."""
    for command, kept in (("git checkout sympy/printing/repr.py && git checkout feature/x", True),
                          ("git checkout sympy/printing/repr.py && git checkout fix/repr-printing", True),
                          ("git checkout sympy/printing/repr.py && git checkout main", True),
                          ("git checkout sympy/printing/repr.py && git checkout sympy/core/basic.py", False),
                          ("git checkout sympy/printing/repr.py && git reset --hard 9f3b2c1", False),
                          ("git checkout sympy/printing/repr.py && git reset --hard HEAD~1", True)):
        assert ("sympy/printing/repr.py" in _instead_of_revert(command)) is kept, command


def test_reading_a_long_run_after_a_revert_takes_linear_work(monkeypatch) -> None:
    """Each later step running a script looked again at every earlier step's writes: a run removing one scratch file
    early and writing and running 600 scripts after it took ~90,000 name matches (4,000 steps: 4.4 s per ingest)."""
    import trajsearch.touched as module

    calls = 0
    real = module.mentions

    def counted(text: str, path: str) -> bool:
        nonlocal calls
        calls += 1
        return real(text, path)

    monkeypatch.setattr(module, "mentions", counted)
    run = _blanked(_run(RESTORED))
    head = run.steps[:-1]
    steps = head[:next(i for i, s in enumerate(head) if "git checkout" in str(s.arguments)) + 1]
    for k in range(600):
        steps.append(_step(run, f"cat > s_{k}.py << 'EOF'\nimport sympy\nEOF" if k % 2 == 0 else f"python3 s_{k - 1}.py"))
    result = touched(run.model_copy(update={"steps": steps}))
    assert "sympy/printing/repr.py" not in result.changed
    assert calls < 10 * len(steps), calls
