"""Round 32 (TOUCH32): ingest reads a run's steps once for its summary's ``Touched:`` line and its exemplar digest.

Each of ``touched`` (the summary), ``own_changes`` and ``changed_by`` (the digest's key actions) read every step again,
parsing its shell command: about 60% of making a mini-swe-agent run's rows. ``indexer.indexed_rows`` now makes them
inside ``touched.read_once``, where one reading of the run answers all of them. These pin what that reading may do:
answer as separate readings did, for that run object alone, and only inside its block.
Real runs: ``tests/fixtures/mini-swe-agent/.real`` (gemini-3-pro on SWE-bench; see their SOURCE.md / README.md).
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from trajsearch.digest import exemplar_digest, kept_files, ranked_decision_points, warning_digest
from trajsearch.indexer import indexed_rows
from trajsearch.ingest.outcomes import OutcomeTable
from trajsearch.ingest.read import read_dump, read_inputs
from trajsearch.model import Outcome, Trajectory
from trajsearch.represent import WindowConfig, represent
from trajsearch.touched import changed_by, own_changes, read_once, run_reading, touched

REAL = Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real"
#: A run that reverted the harness's edits its diff showed (``git checkout setup.py tox.ini``), and two runs sb-cli
#: judged unresolved.
REVERTED = (REAL / "gemini-3-pro-reverted-harness-edits" / "trajs" / "sphinx-doc__sphinx-8595"
            / "sphinx-doc__sphinx-8595.traj.json")
FAILED = REAL / "gemini-3-pro-warnings"


def _runs(path: Path) -> list[Trajectory]:
    return [p.trajectory for p in read_inputs([path], tenant="t") if p.trajectory]


def test_ingest_rows_are_those_of_separate_readings() -> None:
    """The rows ``indexed_rows`` makes with one reading are what the summary and the public digests, each reading the
    run itself, make: a successful run's exemplar digest, failed runs' warning digests."""
    report = OutcomeTable.load(FAILED / "sb-cli-report.json")
    failed = [p.trajectory for p in read_dump(FAILED, tenant="t", outcomes=report)]
    runs = _runs(REVERTED) + failed
    assert {run.outcome for run in runs} == {Outcome.success, Outcome.failure}
    digests = {"summary": exemplar_digest, "failure": warning_digest}
    for run in runs:
        separate = [(row.level, row.text, row.steps or ([digests[row.level](run).to_json()] if row.level in digests
                                                        else [])) for row in represent(run, window=WindowConfig())]
        assert [(row.level, row.text, row.steps) for row in indexed_rows(run, window=WindowConfig())] == separate


def test_a_run_read_once_answers_as_read_afresh() -> None:
    """Inside the block, every question is answered from one reading (the same object each time), and the answers are
    those of a fresh reading, whatever was asked before: nothing asked changes the shared reading."""
    (run,) = _runs(REVERTED)
    found, kept, ranked = touched(run), kept_files(run), ranked_decision_points(run)[1]
    files = [*found.changed, "setup.py", "tox.ini"]
    own = own_changes(run, files)
    assert found.changed == ["sphinx/ext/autodoc/__init__.py"] and kept == {"sphinx/ext/autodoc/__init__.py"}
    with read_once(run):
        reading = run_reading(run)
        for _ in range(2):
            assert (touched(run), kept_files(run), ranked_decision_points(run)[1]) == (found, kept, ranked)
            assert own_changes(run, files) == own
            assert run_reading(run) is reading
    assert run_reading(run) is not reading  # dropped on leaving: it outlives no block


def test_a_reading_answers_for_its_run_alone() -> None:
    """Another run inside the block, even a copy of the run, is read for itself: the run with an edit of ``setup.py``
    after its revert changed ``setup.py``; the block's run did not. A block of another run nested inside leaves the
    outer one's reading as it was."""
    (run,) = _runs(REVERTED)
    at = next(i for i, s in enumerate(run.steps) if "git checkout setup.py tox.ini" in str(s.arguments))
    edit = run.steps[at].model_copy(update={"arguments": {"command": "sed -i 's/a/b/' setup.py"}, "observation": ""})
    edited = run.model_copy(update={"steps": [*run.steps[:at + 1], edit]})
    copy = run.model_copy()
    with read_once(run):
        reading = run_reading(run)
        assert touched(run).changed == ["sphinx/ext/autodoc/__init__.py"]
        assert sorted(touched(edited).changed) == ["setup.py", "sphinx/ext/autodoc/__init__.py"]
        assert run_reading(copy) is not reading and touched(copy) == touched(run)
        with read_once(edited):
            assert run_reading(edited) is run_reading(edited) and run_reading(run) is not reading
            assert "setup.py" in own_changes(edited, ["setup.py"])
        with read_once(run):  # the same run again: the outer block's reading
            assert run_reading(run) is reading
        assert run_reading(run) is reading and touched(run).changed == ["sphinx/ext/autodoc/__init__.py"]


CORTEX = (Path(__file__).parent / "fixtures" / "atif" / ".real" / "harbor-0.26-cortex-code" / "cortex-fix-calc__Wd2Ks")


def test_a_run_read_once_reads_as_main_read_it() -> None:
    """The one reading holds what main (8c42bf22, reading the steps in turn into one and each step alone) read, values
    taken from main: the paths a ``cd`` of any step makes relative for the run (Cortex's ``cd /app`` before its edit of
    ``/app/calc.py``) but only a step's own ``cd`` for that step's changes (``changed_by``), the commands in their
    count's order, ties in first-seen order (sphinx-8595: ``ls``, ``sed``, ``rm``, ``echo`` once each)."""
    (cortex,) = _runs(CORTEX)
    edit = cortex.steps[1]
    sed = edit.model_copy(update={"action": "bash", "arguments": {"command": "cd /app && sed -i 's/ + 1//' /app/calc.py"},
                                  "observation": ""})
    own_cd = cortex.model_copy(update={"steps": [cortex.steps[0], sed, *cortex.steps[2:]]})
    (sphinx,) = _runs(REVERTED)
    expected = [  # run, touched's changed, commands and symbols, each step's changed_by
        (cortex, ["calc.py"], ["python"], [], [[], ["/app/calc.py"], [], []]),
        (own_cd, ["calc.py"], ["python", "sed"], [], [[], ["calc.py"], [], []]),
        (sphinx, ["sphinx/ext/autodoc/__init__.py"], ["git", "ls", "sed", "rm", "echo"], ["ModuleDocumenter"],
         [[], ["sphinx/ext/autodoc/__init__.py"], ["setup.py", "sphinx/ext/autodoc/__init__.py", "tox.ini"], [],
          ["sphinx/ext/autodoc/__init__.py"], ["sphinx/ext/autodoc/__init__.py"]]),
    ]
    for run, changed, commands, symbols, by_step in expected:
        for read in (nullcontext, read_once):  # each call reading the run, and one reading for all
            with read(run):
                found = touched(run)
                assert (found.changed, found.commands, found.symbols) == (changed, commands, symbols)
                assert [run_reading(run).changed_by(step) for step in run.steps] == by_step
        assert [changed_by(step) for step in run.steps] == by_step
