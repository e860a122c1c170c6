"""Commands as agents write them (round 21, FM5 leftover 2): a subshell's test run, and ``git checkout A B`` without
``--``, which git reads by what ``A`` is.

The subshell idiom ``(cd backend && mvn test)`` is how projects tell agents to run their tests (their AGENTS.md /
CLAUDE.md / README "Test" sections, e.g. ``(cd backend && ./gradlew test)``, ``(cd sql-tools && mvn test)``), and
agents copy it. The outputs are the runners' real ones (``fixtures/test-runners/SOURCE.md``); the checkouts run the
real ``git`` on a scratch repository.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from trajsearch.model import Step, Trajectory
from trajsearch.steps import is_test_run, verified
from trajsearch.touched import touched, undone_by

RUNNERS = Path(__file__).parent / "fixtures" / "test-runners"


def _run(*steps: tuple[str, str]) -> Trajectory:
    """A run of these shell commands and what each printed (no exit code kept, as many converters do)."""
    return Trajectory(trajectory_id="run", tenant="default", task="make the tests pass", steps=[
        Step(index=n, action="bash", arguments={"command": command}, observation=output)
        for n, (command, output) in enumerate(steps)])


@pytest.mark.parametrize("command, name, verdict", [
    ("(cd backend && mvn test)", "mvn-pass", True), ("(cd backend && mvn -B test)", "mvn-fail", False),
    ("(cd backend && ./gradlew test)", "gradle-fail", False), ("(cd app; ./gradlew test) 2>&1 | tail -40", "gradle-fail",
                                                               False),
    ('bash -c "(cd backend && mvn test)"', "mvn-pass", True), ("(cd web && npx jest)", "jest-fail", False)])
def test_a_test_run_in_a_subshell_is_a_test_run(command: str, name: str, verdict: bool) -> None:
    """Bug: ``(cd x && mvn test)`` split into ``(cd x`` and ``mvn test)``: Maven's goal read as ``test)``, so the
    step was no test run and its ``BUILD FAILURE`` never decided whether the run's tests passed (Gradle alike; a
    Python or JavaScript runner, matched by name, was read all the same)."""
    run = _run((command, (RUNNERS / f"{name}.txt").read_text()))
    assert is_test_run(run.steps[0])
    assert verified(run, reward_at_least=None) is verdict


@pytest.mark.parametrize("command, name, verdict", [
    ("for d in backend api; do (cd $d && mvn test); done", "mvn-fail", False),
    ("for d in backend api; do\n  (cd $d && mvn test)\ndone", "mvn-pass", True),
    ("time (cd backend && mvn -B test)", "mvn-fail", False), ("time (cd backend && mvn test)", "mvn-pass", True),
    ("if ! (cd backend && mvn test); then echo FAILED; fi", "mvn-fail", False),
    ("{ (cd app && ./gradlew test); } 2>&1", "gradle-fail", False),
    ("out=$(cd backend && mvn test 2>&1); echo \"$out\" | tail -60", "mvn-fail", False),
    ("export OUT=$(cd backend && mvn -B test); echo \"$OUT\"", "mvn-fail", False),
    ("local out=$(cd backend && mvn test)", "mvn-pass", True),
    ("declare -r out=$(cd backend && mvn -B test)", "mvn-fail", False),
    ("readonly out=$(cd backend && mvn test)", "mvn-pass", True),
    ("for d in api; do out=$(cd $d && mvn test); done", "mvn-pass", True)])
def test_a_subshell_after_a_keyword_is_a_test_run(command: str, name: str, verdict: bool) -> None:
    """Bug (review RFM5): a subshell was read as one only at a command's very start: after ``do``, ``time``, ``if
    !``, ``{`` (or as an assignment's command substitution) its parenthesis stayed, and Maven's goal read as
    ``test)``: no test run, its ``BUILD FAILURE`` or ``BUILD SUCCESS`` decided nothing. And (review RALL-A 3) an
    assignment's substitution made by ``export`` / ``local`` / ``declare`` / ``readonly`` was split as text."""
    run = _run((command, (RUNNERS / f"{name}.txt").read_text()))
    assert is_test_run(run.steps[0])
    assert verified(run, reward_at_least=None) is verdict


@pytest.mark.parametrize("command", ["find . \\( -name '*.py' -o -name '*.txt' \\) | xargs grep -n mvn",
                                     'echo "(mvn test)"', "diff <(mvn -v) <(echo none)",
                                     "echo $(mvn -v) | head -1", "if (mvn.test) {\n  run();\n}"])
def test_parentheses_that_open_no_subshell_run_no_tests(command: str) -> None:
    """An escaped or quoted parenthesis, or a process substitution's, is no subshell: no test run is read into it."""
    assert not is_test_run(_run((command, "")).steps[0])


def _git(repo: Path, *args: str) -> str:
    """Run the real git in ``repo``: stdout and stderr together, as an agent's shell tool keeps them."""
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A committed project with a branch, ``Makefile`` (no extension) and ``setup.py``."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    _git(tmp_path, "init", "-q", "-b", "main")
    for key, value in (("user.email", "t@example.com"), ("user.name", "t")):
        _git(tmp_path, "config", key, value)
    (tmp_path / "Makefile").write_text("all:\n\techo hi\n")
    (tmp_path / "setup.py").write_text("x = 1\n")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-qm", "init")
    _git(tmp_path, "branch", "feature")
    return tmp_path


#: The run's edit of both files (run for real by :func:`_edited_then`).
EDIT = "sed -i s/hi/changed/ Makefile && sed -i s/1/2/ setup.py"


def _edited_then(repo: Path, checkout: str) -> Trajectory:
    """A run that edited both files (its diff shows them), then ran ``checkout`` (real git's words)."""
    subprocess.run(EDIT, shell=True, cwd=repo, check=True)
    diff = _git(repo, "diff")
    said = _git(repo, *checkout.split()[1:])
    return _run((EDIT, ""), ("git diff", diff), (checkout, said))


@pytest.mark.parametrize("checkout, kept", [
    ("git checkout Makefile setup.py", []),  # git: "Updated 2 paths from the index"
    ("git checkout HEAD Makefile setup.py", []),
    ("git checkout feature Makefile", ["Makefile", "setup.py"]),  # another revision's content: a change stays
    ("git checkout setup.py nosuch.py", ["Makefile", "setup.py"]),  # git refused: nothing written
    ("git checkout -- Makefile", ["setup.py"])])
def test_git_checkout_of_files_is_read_as_git_read_it(repo: Path, checkout: str, kept: list[str]) -> None:
    """Bug: without ``--``, a first operand with no extension was taken for a revision: ``git checkout Makefile
    setup.py`` undid nothing and the run still changed both, where git restored both ("from the index"); and ``git
    checkout setup.py nosuch.py``, which git refused whole (exit 1), undid ``setup.py``."""
    run = _edited_then(repo, checkout)
    assert sorted(touched(run).changed) == kept


@pytest.mark.parametrize("line", [
    "git checkout other Makefile && git checkout setup.py",  # git: "Updated 1 path from <hash>", "... the index"
    "git checkout nosuch.py; git checkout setup.py"])  # the first refused, the second restored setup.py
def test_git_words_after_several_checkouts_are_no_one_checkouts(repo: Path, line: str) -> None:
    """Bug (review RFM5): git's words were read as every checkout's on the line: ``git checkout other Makefile &&
    git checkout setup.py`` printed "Updated 1 path from the index" (the second's), so the first's Makefile, written
    from another branch, was read as restored too; ``git checkout nosuch.py; git checkout setup.py`` printed the
    first's refusal, so the second's restore of setup.py was lost. What the run left is what ``git status`` says
    (``other`` a branch whose Makefile differs)."""
    _git(repo, "checkout", "-q", "-b", "other")
    (repo / "Makefile").write_text("all:\n\techo other\n")
    _git(repo, "commit", "-qam", "other")
    _git(repo, "checkout", "-q", "main")
    subprocess.run(EDIT, shell=True, cwd=repo, check=True)
    diff = _git(repo, "diff")
    done = subprocess.run(line, shell=True, cwd=repo, capture_output=True, text=True, check=False)
    left = sorted(entry.split()[-1] for entry in _git(repo, "status", "--short").splitlines())
    assert left == ["Makefile"]
    run = _run((EDIT, ""), ("git diff", diff), (line, done.stdout + done.stderr))
    assert sorted(touched(run).changed) == left


@pytest.mark.parametrize("redirect", ["2>&1", "> {out}", ">{out}", "2> {out}", ">> {out}", "&> {out}"])
def test_a_checkouts_redirections_are_no_files_it_restored(repo: Path, tmp_path: Path, redirect: str) -> None:
    """Bug (review RALL-A 3): where git said ``Updated 1 path from the index``, every operand of the checkout was
    taken for a file it restored, its redirections too: ``git checkout Makefile 2>&1`` restored ``Makefile`` and
    ``2>&1``, ``git checkout setup.py > out.txt`` restored ``>`` (real git's words, the line run by the shell)."""
    out = tmp_path / "out.txt"
    line = f"git checkout setup.py {redirect.format(out=out)}"
    subprocess.run(EDIT, shell=True, cwd=repo, check=True)
    done = subprocess.run(line, shell=True, cwd=repo, capture_output=True, text=True, check=False)
    said = done.stdout + done.stderr + (out.read_text() if out.exists() else "")
    assert "Updated 1 path from the index" in said
    assert undone_by(Step(index=0, action="bash", arguments={"command": line}, observation=said)).files == ("setup.py",)
