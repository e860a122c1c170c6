"""Key actions rank the edits of the files a run left changed, not those of a diff it only looked at, nor edits it
undid later (review 2, F4), and choosing them builds no run per step (review 2, F2).

``REVERTED`` is a real mini-swe-agent 1.15.0 run of gemini-3-pro-preview on SWE-bench Verified,
sphinx-doc__sphinx-9281 (gruckion/mini-swe-agent @ d12a71affd95403b036b2bdbd827349b77bfffb9,
``swebench_results/20251118_gemini-3-pro-74pct/trajs/sphinx-doc__sphinx-9281/sphinx-doc__sphinx-9281.traj.json``),
trimmed to the system and task messages and the turns of steps 2, 3, 4, 20, 32, 33, 36, 48, 52, 53, 54, 55 and 56
(``info.config`` dropped), otherwise unchanged: step 20's ``sed -i`` of ``sphinx/util/inspect.py`` is the fix
``info.submission`` holds; the run writes scratch files and removes them (``rm -rf reproduce_issue ...``), shows
``git diff setup.py tox.ini`` and reverts both with ``git checkout setup.py tox.ini``. The submit turn (57) is left
out, so the run ends, as a Claude Code or Codex session does, with no closing diff: its last diff is that of the
reverted files.

``SESSION`` is a real Claude Code 2.1.5x session (an Entire checkpoint transcript of MoonshotAI/kimi-cli @
6fe7d1fb08404aa24ab01797081d23152215f444, branch ``entire/checkpoints/v1``, ``29/77bc73228c/0/full.jsonl``), trimmed
to 40 of its 404 records, kept verbatim and in order except that ``toolUseResult``'s copies of the file and output
(``originalFile``, ``structuredPatch``, ``content``, ``stdout``) are dropped: six ``Edit`` calls of
``web/src/features/chat/useFileMentions.ts`` (the fix), a ``git diff`` showing them, the commit; then a second
investigation that reads upstream history with ``git show 416bc1b -- web/src/hooks/useSessionStream.ts`` and edits
only a plan file under ``~/.claude/plans``. The last diff the session shows is that ``git show``: taken as the run's
final change, it kept the plan edits and ``git checkout main`` first and the fix last.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.digest import exemplar_digest
from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome, Trajectory
from trajsearch.runtime import Runtime, RuntimeConfig, RuntimeContext
from trajsearch.runtime.advice import AdviceConfig
from trajsearch.runtime.novelty import NoveltyConfig
from trajsearch.search import TrajSearch

from conftest import BASE_TIME

REVERTED = (Path(__file__).parent / "fixtures" / "mini-swe-agent" / ".real" / "gemini-3-pro-reverted"
            / "sphinx-doc__sphinx-9281.traj.json")
FIX = "sed -i '460i\\    if isinstance(object, enum.Enum):"

SESSION = (Path(__file__).parent / "fixtures" / "claude-code" / ".real" / "kimi-entire"
           / "116e5aa5-77ff-42f7-b1e4-067c43f61818.jsonl")
FIXED = "web/src/features/chat/useFileMentions.ts"
OPEN = RuntimeConfig(advice=AdviceConfig(novelty=NoveltyConfig(0.99, 0.0, per_tenant=False)))


def _run(path: Path) -> Trajectory:
    return next(parsed.trajectory for parsed in read_dump(path, tenant="acme") if parsed.ok)


def _session() -> Trajectory:
    return _run(SESSION)


def _key_actions(ts: TrajSearch, run: Trajectory, budget: int) -> str:
    ts.add([run.model_copy(update={"created_at": BASE_TIME})])
    context = Runtime(ts, OPEN).context_for(run.task, RuntimeContext(tenant="acme", now=BASE_TIME), budget=budget)
    return context.text.split("Key actions:", 1)[1].split("Outcome:", 1)[0]


@pytest.mark.parametrize("budget", [32000, 600])  # 600: the 4-action level
def test_edits_a_revert_undid_do_not_push_out_the_fix(hashing_ts: TrajSearch, budget: int) -> None:
    shown = _key_actions(hashing_ts, _run(REVERTED), budget)
    assert FIX in shown  # however few actions the budget leaves


def test_the_fix_ranks_first_when_the_last_diff_shown_was_reverted() -> None:
    digest = exemplar_digest(_run(REVERTED))
    first = min(digest.actions, key=lambda action: action.rank)
    assert first.arguments is not None and FIX in first.arguments.text()


def test_an_exemplar_shows_the_fix_not_what_a_git_show_of_history_names(hashing_ts: TrajSearch) -> None:
    run = _session().model_copy(update={"outcome": Outcome.success})  # it committed and pushed the fix
    shown = _key_actions(hashing_ts, run, 2000)  # room for one key action after its long goal
    assert FIXED in shown
    assert "git checkout main" not in shown  # a branch switch changed no file of the fix


def test_the_key_actions_rank_the_edits_of_the_file_left_changed_first() -> None:
    run = _session()
    digest = exemplar_digest(run)
    first = sorted(digest.actions, key=lambda action: action.rank)[:4]
    assert all(action.action == "Edit" and FIXED in action.arguments.text() for action in first)


def _shell_run(commands: list[str]) -> Trajectory:
    """A run of shell steps (plumbing for the undo rule: the commands are the shapes real runs type)."""
    from trajsearch.model import Step  # noqa: PLC0415

    steps = [Step(index=i, action="bash", arguments={"command": c}, observation="") for i, c in enumerate(commands)]
    return Trajectory.model_construct(trajectory_id="t", tenant="x", task="fix", steps=steps,
                                      outcome=Outcome.success, metadata={})


@pytest.mark.parametrize("undo", [
    "git checkout pkg/mod.py && sed -i 's/x == 1/x in (1, 2)/' pkg/mod.py",  # start over, then the fix
    "git checkout pkg/mod.py && python3 patch_mod.py",  # the fix written by a script (review 3, N2)
    "cd /tmp/buildtest && rm -rf pkg",  # another tree's pkg/
    "cd /tmp/upstream && git checkout .",
])
def test_an_undo_followed_by_a_write_or_run_elsewhere_keeps_the_file(undo: str) -> None:
    """Review 3 (N2): an undo counts only in the run's own directory and when nothing after it in the same command
    may write the file again; it cut the fix file out of what the run left changed."""
    from trajsearch.digest import kept_files  # noqa: PLC0415

    run = _shell_run(["sed -i 's/a/b/' pkg/mod.py", undo, "python -m pytest tests -x"])
    assert kept_files(run) == {"pkg/mod.py"}


def test_a_plain_revert_still_undoes() -> None:
    from trajsearch.digest import kept_files  # noqa: PLC0415

    run = _shell_run(["sed -i 's/a/b/' pkg/mod.py", "sed -i 's/c/d/' pkg/other.py", "git checkout pkg/other.py",
                      "git status"])
    assert kept_files(run) == {"pkg/mod.py"}
