"""Codex's shell steps read as commands (round 22, AUD2), reviewed (RAUD2). Reading Codex's ``cmd`` and argv lists
changed what the digests of real Codex runs say with their trajectories unchanged, so it is a representation change
(a store indexed before it re-makes their rows); a read's error is passed over only where the command ran and exited
non-zero, not where Codex refused the call or its sandbox or shell failed; and what a run touched reads the command
as the read/write rules do (``steps.command_line``), a shell's script rather than ``bash -lc ...`` joined."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trajsearch.embed import HashingEmbedder
from trajsearch.digest import WarningDigest, from_row_steps
from trajsearch.ingest.read import read_dump
from trajsearch import steps as S
from trajsearch.model import Outcome, Step, Trajectory
from trajsearch.search import TrajSearch
from trajsearch.touched import touched

from conftest import make_run

FIXTURES = Path(__file__).parent / "fixtures" / "codex-cli"
#: A real rollout of codex 0.58: its shell tool's ``["bash", "-lc", "ls lib/ai"]`` exits 2 (no such directory).
ROLLOUT = FIXTURES / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
#: A real rollout of codex 0.171 (probe ZS) whose one shell call Codex answered "unsupported call: shell".
UNSUPPORTED = (FIXTURES / ".real" / "probe-zs" / "compressed"
               / "rollout-2026-12-05T15-14-03-01a246c4-f73a-7321-87da-101aa0aa661b.jsonl.zst")


def _failed(path: Path) -> Trajectory:
    """The one run of the real rollout at ``path``, as a grader that failed it would record it: a failed run's
    failure row holds its warning digest (Codex records no outcome)."""
    (run,) = [r.trajectory for r in read_dump(path, tenant="acme") if r.ok]
    return run.model_copy(update={"outcome": Outcome.failure})


def _warning(ts: TrajSearch, run: Trajectory) -> WarningDigest:
    digest = from_row_steps(ts.run(run.trajectory_id, tenant="acme", level="failure").steps)
    assert isinstance(digest, WarningDigest)
    return digest


def _before_round_22(arguments: Any) -> str | None:
    """A step's command as version 17 read it: a ``command`` string only (Codex's ``cmd`` and argv lists unread)."""
    found = arguments.get("command") if isinstance(arguments, dict) else None
    return found if isinstance(found, str) else None


def test_a_codex_run_indexed_before_its_shell_steps_were_read_is_re_made(tmp_path, monkeypatch):
    """Review RAUD2, 1: the run's trajectory is the same, its warning digest is not (version 17 took the shell's
    ``ls lib/ai`` for no read and its exit 2 for the decisive error): a re-ingest re-makes its rows, not "unchanged"."""
    import trajsearch.represent as represent_module
    import trajsearch.steps as steps_module

    run = _failed(ROLLOUT)
    with TrajSearch.open(str(tmp_path / "m.db"), traces=str(tmp_path / "t"), embedder=HashingEmbedder()) as ts:
        with monkeypatch.context() as old:
            old.setattr(represent_module, "REPRESENTATION_VERSION", 17)
            old.setattr(steps_module, "command_line", _before_round_22)
            ts.add([run])
        assert _warning(ts, run).error.head == "ls: cannot access 'lib/ai': No such file or directory (exit code 2)"
        assert ts.add([run]).ingested == 1
        assert _warning(ts, run).error.head == "run ended with outcome failure after 7 steps"
        assert ts.add([run]).unchanged == 1


def test_a_shell_call_codex_refused_stays_the_runs_error(hashing_ts):
    """Review RAUD2, 2: ``ls /nonexistent-dir`` is a read, but Codex never ran it ("unsupported call: shell"): that
    is the run's error, not a read that found nothing; the real ``ls`` that exited 2 is still passed over."""
    refused, exited = _failed(UNSUPPORTED), _failed(ROLLOUT)
    hashing_ts.add([refused, exited])
    assert _warning(hashing_ts, refused).error.head == "not run: unsupported call: shell"
    assert _warning(hashing_ts, exited).error.head == "run ended with outcome failure after 7 steps"


@pytest.mark.parametrize("error", [
    "bwrap: Failed to make / slave: Permission denied (exit code 1)",
    "failed in sandbox LinuxSeccomp with execution error: /bin/bash: -c: line 1: unexpected EOF while looking for "
    "matching `\"' (exit code 2)",
    "bash: -c: line 1: syntax error near unexpected token `)' (exit code 2)",
    "/bin/sh: 1: Syntax error: \"(\" unexpected (exit code 2)",
    "command timed out after 10000 milliseconds (exit code 124)",
    "Killed (exit code 137)",
])
def test_a_read_the_sandbox_or_shell_could_not_run_stays_the_runs_error(hashing_ts, error):
    """Review RAUD2, 2: the sandbox's refusal, the shell's syntax error, a timeout or a kill are no "no match"."""
    run = make_run("r", outcome="failure", steps=[
        ("shell", {"command": ["bash", "-lc", "cat setup.py"]}, None),
        ("shell", {"command": ["bash", "-lc", "grep -rn TODO src"]}, "src/a.py:3: # TODO"),
    ])
    run.steps[0].error = error
    hashing_ts.add([run])
    assert _warning(hashing_ts, run).error.head == error


@pytest.mark.parametrize("error", [
    "ci.log:12: parse.y: syntax error near token (exit code 2)",
    "ci.log:41:/bin/sh: 1: Syntax error: \"(\" unexpected (exit code 2)",
    "ci.log:3: bwrap: Can't mount proc (exit code 2)",
    "ci.log:9: Process finished with exit code 0 (exit code 2)",
    "Process 'command 'cc'' finished with non-zero exit code 127 (exit code 1)",
])
def test_a_read_whose_printed_line_names_a_shell_or_sandbox_failure_is_passed_over(hashing_ts, error):
    """Review RALL-A 2: the sandbox's and the shell's words, and an exit code, were read anywhere in the error, so a
    grep that exited 2 on a missing path, its printed log lines holding them, was taken for a command never run and
    made the run's error over the failed build. Only the error's start says who failed, and the adapter's own
    trailing ``(exit code N)`` how the command exited."""
    run = make_run("r", outcome="failure", steps=[
        ("Bash", {"command": "make build"}, None),
        ("Bash", {"command": "grep -rn error ci.log logs/old"}, None),
    ])
    run.steps[0].error = "make: *** [Makefile:3: build] Error 1 (exit code 2)"
    run.steps[1].error = error
    hashing_ts.add([run])
    assert _warning(hashing_ts, run).error.head == run.steps[0].error


def test_a_read_that_found_nothing_is_still_passed_over(hashing_ts):
    run = make_run("r", outcome="failure", steps=[
        ("shell", {"command": ["bash", "-lc", "cat setup.cfg"]}, None),
        ("shell", {"command": ["bash", "-lc", "python -m pytest"]}, "1 failed"),
    ])
    run.steps[0].error = "cat: setup.cfg: No such file or directory (exit code 1)"
    run.steps[1].error = "AssertionError: 2 != 3 (exit code 1)"
    hashing_ts.add([run])
    assert _warning(hashing_ts, run).error.head == "AssertionError: 2 != 3 (exit code 1)"


def test_what_a_codex_run_touched_reads_its_shells_script(hashing_ts):
    """Review RAUD2, 3: the "Touched" line read Codex's argv joined (``bash -lc ls lib/ai``): the real rollout's
    commands were "bash"; they are the script's programs, as the read and write rules read them. Review RFR 2: and
    the file its ``apply_patch`` heredoc updates is what it changed (the line named no file)."""
    run = _failed(ROLLOUT)
    hashing_ts.add([run])
    summary = hashing_ts.run(run.trajectory_id, tenant="acme", level="summary").text
    assert ("Touched: changed components/chat/chat-helpers/index.ts (modules components.chat.chat-helpers.index); "
            "calls update_plan; commands ls, rg, apply_patch.") in summary.splitlines()


@pytest.mark.parametrize("path, changed", [
    # codex 0.171's freeform apply_patch tool: {"input": "*** Begin Patch\n*** Update File: main.py ..."}
    (FIXTURES / ".real" / "rollout-2026-12-02T00-54-18-01a2343e-c43a-71b0-8325-96dd5e2db5fe.jsonl", ["main.py"]),
    # a shell call's argv ["apply_patch", "*** Begin Patch\n*** Add File: hello.py ..."] (probe C44)
    (FIXTURES / ".real" / "probe-c44" / "rollout-2026-12-04-3c1262d2-f2bc-4636-8c52-672a0b75e15a.json", ["hello.py"]),
])
def test_what_codex_apply_patch_changed_is_touched(path, changed):
    """Review RFR 2: an ``apply_patch`` envelope names its files by ``*** Update File:`` / ``*** Add File:`` lines,
    no unified diff's ``+++``: the real runs' patched files were changed by no reading."""
    (run,) = [r.trajectory for r in read_dump(path, tenant="acme") if r.ok]
    assert touched(run).changed == changed


def test_an_apply_patch_that_moves_and_deletes_names_every_file():
    """codex-rs ``apply-patch`` grammar: an update may move its file (``*** Move to:``), a section may delete one."""
    patch = ("*** Begin Patch\n*** Update File: src/app.py\n*** Move to: src/main.py\n@@ def greet():\n"
             "-    print('Hi')\n+    print('Hello')\n*** Delete File: obsolete.txt\n*** End Patch\n")
    run = make_run("r", steps=[("apply_patch", {"input": patch}, "Success. Updated the following files:")])
    assert touched(run).changed == ["src/app.py", "src/main.py", "obsolete.txt"]


@pytest.mark.parametrize("undo, left", [
    ("git checkout -- setup.py", "Touched: changed app.py;"),
    ("rm -f setup.py", "Touched: changed app.py;"),
    ("cat setup.py", "Touched: changed app.py, setup.py "),
])
def test_a_codex_shell_edit_and_its_revert_are_read(hashing_ts, undo, left):
    """Review RAUD2, 3: ``["bash", "-lc", "sed -i ... F"]`` changed F, and ``["bash", "-lc", "git checkout -- F"]``
    or ``rm -f F`` undid it, as their string forms do."""
    def shell(script: str, said: str = "") -> tuple[str, dict[str, Any], str]:
        return ("shell", {"command": ["bash", "-lc", script], "workdir": "/repo"}, said)

    run = make_run("r", steps=[shell("sed -i 's/a/b/' app.py"), shell("sed -i 's/a/b/' setup.py"), shell(undo)])
    hashing_ts.add([run])
    summary = hashing_ts.run("r", tenant="acme", level="summary").text
    assert any(line.startswith(left) for line in summary.splitlines()), summary


def test_codex_apply_patch_is_a_write():
    """Review RAUD2, 4: Codex's ``apply_patch`` (the real rollout's heredoc through ``bash -lc``, and the argv a
    ``shell`` call gives it) edits files: a write, as ``patch`` is."""
    patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-a\n+b\n*** End Patch\n"
    (edit,) = [s for s in _failed(ROLLOUT).steps if "apply_patch" in S.command_of(s)]
    assert S.command_of(edit).startswith("apply_patch <<'PATCH'") and S.is_write(edit) and not S.is_read(edit)
    assert S.is_write(Step(index=0, action="shell", arguments={"command": ["apply_patch", patch]}))


@pytest.mark.parametrize("argv, line", [
    (["bash", "-e", "-c", "ls src"], "ls src"),
    (["bash", "--login", "-c", "ls src"], "ls src"),
    (["/bin/zsh", "-lc", "ls src"], "ls src"),
    (["rg", "-n", "def main", "src"], "rg -n 'def main' src"),
    (["bash", "scripts/build.sh"], "bash scripts/build.sh"),
    # review RALL-A 6: an option's value before -c, a shell run by env, the script's $0 after it
    (["bash", "-o", "pipefail", "-c", "ls src"], "ls src"),
    (["/usr/bin/env", "bash", "-lc", "ls src"], "ls src"),
    (["sh", "-c", "ls src", "sh"], "ls src"),
    (["bash", "-o", "pipefail", "scripts/build.sh"], "bash -o pipefail scripts/build.sh"),
])
def test_an_argv_is_read_as_the_shell_would_run_it(argv, line):
    """Review RAUD2, 4: a shell's script after any options (not only ``bash -lc``) is the command; another argv is
    quoted as the shell would need it (``rg -n def main src`` searched ``def`` in ``main`` and ``src``)."""
    step = Step(index=0, action="shell", arguments={"command": argv})
    assert S.command_of(step) == line
    assert S.is_read(step) == line.startswith(("ls", "rg"))


@pytest.mark.parametrize("command", ["npm run -s test", "pnpm -s test", "npm test", "yarn run --silent test",
                                     "npm --prefix web test", "pnpm --filter web test", "yarn --cwd web test"])
def test_a_package_managers_silent_test_script_is_a_test_run(command):
    """Review RAUD2, 4: ``npm run -s test`` / ``pnpm -s test`` run the test script quietly: test runs."""
    failed = Step(index=0, action="exec_command", arguments={"cmd": command},
                  observation="Tests: 1 failed, 3 passed, 4 total", error="exit code 1")
    assert S.is_test_run(failed) and not S.passed(failed)


@pytest.mark.parametrize("command", ["yarn --cwd test build", "pnpm --filter test build", "npm -w test run build",
                                     "pnpm -C test run lint"])
def test_a_package_managers_option_valued_test_runs_no_test_script(command):
    """Review RALL-A 5: an option's value ``test`` (a directory, a workspace called so) was read as the test script:
    a failed build after the passing test run was the run's last test run, so the run was not verified."""
    run = make_run("r", outcome="success", steps=[
        ("exec_command", {"cmd": "npm test"}, "Tests: 4 passed, 4 total"),
        ("exec_command", {"cmd": command}, "error TS2304: Cannot find name 'x'."),
    ])
    run.steps[1].error = "error TS2304: Cannot find name 'x'. (exit code 2)"
    assert not S.is_test_run(run.steps[1])
    assert S.verified(run, reward_at_least=None)


def test_an_apply_patch_envelope_a_step_printed_is_no_change_of_the_run():
    """Review RALL-A 3: an envelope in a step's output (an agent reading Codex's own
    ``codex-rs/apply-patch/apply_patch_tool_instructions.md``, whose example adds, updates, moves and deletes files)
    was read as the run's patch: its example's files replaced the file the run really changed. Only a call's
    arguments hand an envelope to the tool."""
    shown = ("A full patch can combine several operations:\n\n*** Begin Patch\n*** Add File: example.txt\n+Hi\n"
             "*** Update File: src/sample.py\n*** Move to: src/renamed.py\n@@ def greet():\n-x = 1\n+x = 2\n"
             "*** Delete File: stale.txt\n*** End Patch\n")
    run = make_run("r", outcome="success", steps=[
        ("Bash", {"command": "cat codex-rs/apply-patch/apply_patch_tool_instructions.md"}, shown),
        ("Bash", {"command": "sed -i 's/a/b/' lib/x.py"}, ""),
    ])
    assert touched(run).changed == ["lib/x.py"]
    assert touched(run).symbols == []
