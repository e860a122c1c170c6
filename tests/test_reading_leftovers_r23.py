"""Round 23's reading leftovers (FM7): real files other readers mis-read or refused without saying why."""
from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.digest import WarningDigest, from_row_steps
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome, Step, Trajectory
from trajsearch.steps import is_read, is_test_run, is_write
from trajsearch.touched import command_line, touched

FIXTURES = Path(__file__).parent / "fixtures"


def test_tau_bench_few_shot_examples_are_refused_as_such() -> None:
    """tau-bench's ``few_shot_data/MockAirlineDomainEnv-few_shot.jsonl`` (real, cut to 2 lines) was refused as an
    "unrecognised dump format": it is prompt material, whose tool calls show as ``assistant: None`` (no tool name,
    no arguments) and which keeps no task id or reward; named alone, the refusal says so and where tau-bench's runs
    are (a side file: a folder walk passes it over, below)."""
    with pytest.raises(ValueError) as refused:
        list(read_inputs([FIXTURES / "tau-bench/.real/MockAirlineDomainEnv-few_shot.jsonl"]))
    said = str(refused.value)
    assert "no run in this file: tau-bench's few-shot examples" in said
    assert "'assistant: None'" in said and "results/*.json" in said


def test_a_folder_holding_tau_bench_few_shot_examples_passes_them_over() -> None:
    """A tau-bench checkout ships its few-shot examples beside its results: a folder walk passes them over as it
    does a fault analysis (a side file), where they had been a rejected input that made ``ingest --server`` of
    tests/fixtures/tau-bench/.real exit 3 (the fresh-clone CI of round 23)."""
    parsed = list(read_inputs([FIXTURES / "tau-bench/.real"]))
    assert not [p.error for p in parsed if p.error and "few-shot" in p.error]
    assert sum(p.trajectory is not None for p in parsed) >= 14


QWEN = FIXTURES / "qwen-code/.real"
#: Codex 0.58 (real) asked for ``["fish", "-c", "cat calc.py"]`` and ``["powershell.exe", "-NoProfile", "-Command",
#: "Get-Content calc.py"]``; neither program was on the machine ("execution error: Io(... NotFound ...)").
CODEX_SHELLS = (FIXTURES / "codex-cli/.real/probe-fm7"
                / "rollout-2026-12-06T06-57-55-01a24a25-1adf-7810-a1ef-1898a776a577.jsonl")


def _only(path: Path) -> Trajectory:
    [parsed] = read_inputs([path])
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_fish_and_powershell_argvs_are_read_as_their_scripts() -> None:
    """A shell argv is read as the script it runs (``command_line``): fish's ``-c`` and PowerShell's ``-Command``
    were joined whole (``fish -c 'cat calc.py'``), so the ``cat`` was no read."""
    fish, powershell, _ = _only(CODEX_SHELLS).steps
    assert command_line(fish.arguments) == "cat calc.py" and fish.error.startswith("not run: ")
    assert is_read(fish.model_copy(update={"error": None})) and not is_read(fish)  # never started: read nothing
    assert command_line(powershell.arguments) == "Get-Content calc.py"


def test_a_call_codex_could_not_start_is_worded_not_run_and_stays_the_runs_error(hashing_ts) -> None:
    """Codex's "execution error: Io(...)" (no ``fish`` on the machine) is a call it did not run, worded so as every
    adapter words one (``not run: ``); so the read it was is no read that found nothing, passed over: it stays the
    failed run's error. Codex's other refusals ("unsupported call: ...") are worded the same."""
    run = _only(CODEX_SHELLS).model_copy(update={"outcome": Outcome.failure, "tenant": "acme"})
    assert run.steps[0].error == ('not run: execution error: Io(Os { code: 2, kind: NotFound, message: '
                                  '"No such file or directory" })')
    hashing_ts.add([run])
    digest = from_row_steps(hashing_ts.run(run.trajectory_id, tenant="acme", level="failure").steps)
    assert isinstance(digest, WarningDigest)
    assert digest.error.head.startswith("not run: execution error: Io(")


def test_a_checkout_of_the_whole_tree_is_not_read_as_undoing_the_runs_changes() -> None:
    """Qwen Code (real) ran ``git checkout -- .`` after its edit of calc.py in four sessions; in three the change
    survived it: saved with ``git diff > fix.patch`` and brought back by ``git apply fix.patch``, committed before
    it, or a new file (untracked: helpers.py) beside the edit it undid. A whole tree's undo is not counted (only an
    undo naming files is): a real fix lost is worse than an undone edit listed (``revert-all.jsonl``: calc.py set
    back, still listed; README)."""
    project = "/var/tmp/rfm7/proj/"
    assert touched(_only(QWEN / "patch-revert-apply.jsonl")).changed == [project + "calc.py"]
    # its ``echo junk >> test_calc.py && git checkout -- .`` set test_calc.py back: listed too, as any whole-tree undo's
    assert touched(_only(QWEN / "commit-then-revert-all.jsonl")).changed == [project + "calc.py", "test_calc.py"]
    assert project + "helpers.py" in touched(_only(QWEN / "new-file-then-revert-all.jsonl")).changed
    assert touched(_only(QWEN / "revert-all.jsonl")).changed == ["/var/tmp/fm7-qw/proj/calc.py"]


def test_unstaging_keeps_the_edit_and_a_yarn_workspace_test_script_is_a_test_run() -> None:
    """The same edit, then ``git add calc.py && git restore --staged calc.py`` (the index only: ``git status`` said
    `` M calc.py`` after) and ``yarn workspace web test`` (a workspace's test script; it was no test run)."""
    run = _only(QWEN / "unstage-yarn-workspace.jsonl")
    _, edit, unstage, yarn, _ = run.steps
    assert touched(run).changed == ["/var/tmp/fm7-qw/proj/calc.py"]
    assert not is_write(unstage) and is_write(edit)
    assert is_test_run(yarn)


def test_a_restored_file_stays_undone_though_the_answer_names_it() -> None:
    """Qwen Code (real) edited calc.py, ran ``git restore calc.py`` (a write: the file set back; it was no write)
    and answered "Restored calc.py.": an answer calls nothing, yet its naming the file read as writing it again, so
    the run read as having changed calc.py (``git status`` was clean)."""
    run = _only(QWEN / "restore-one.jsonl")
    _, edit, restore, answer = run.steps
    assert restore.arguments["command"] == "git restore calc.py" and is_write(restore)
    assert answer.action == "respond" and "calc.py" in answer.arguments["content"]
    assert touched(run).changed == []


def test_a_gemini_cli_prompt_after_piped_text_is_kept_as_sent() -> None:
    """Gemini CLI (real, 0.61.0: Qwen Code's parent, the same ``f"{stdinData}\\n\\n{input}"``) sent a 200-line log
    piped to it before the words typed, and recorded nothing saying the log was piped: the task is the message as
    sent, the log first (README: Known limitations), as a prompt typed with code pasted in it stays as typed."""
    run = _only(FIXTURES / "gemini-cli/.real/probe-fm7/piped-log-prompt.jsonl")
    assert run.task.startswith("log line 1\nlog line 2\n")
    assert run.task.endswith("log line 200\n\n\nwhy does this log fail")


def test_each_command_of_a_line_is_looked_at_for_a_write() -> None:
    """``git restore --staged calc.py; git restore calc.py``: the second command sets calc.py back (a write), but only
    the line's first command was looked at, an unstaging."""
    line = Step(index=0, action="run_shell_command",
                arguments={"command": "git restore --staged calc.py; git restore calc.py"})
    assert is_write(line)
    assert not is_write(line.model_copy(update={"arguments": {"command": "git restore --staged calc.py; ls"}}))


def test_powershells_script_is_every_word_after_command_and_fishs_may_follow_an_equals_sign() -> None:
    """PowerShell runs every word after ``-Command`` as its script (joined by spaces; only the first was taken);
    fish takes ``--command=SCRIPT`` as ``-c SCRIPT``."""
    assert command_line({"command": ["powershell.exe", "-Command", "Get-Content", "calc.py"]}) == "Get-Content calc.py"
    assert command_line({"command": ["fish", "--command=cat calc.py"]}) == "cat calc.py"


def test_a_call_the_harness_did_not_run_touched_nothing() -> None:
    """Codex (real) could not start ``fish -c 'cat calc.py'`` (no fish on the machine: ``not run: ...``), yet the run
    listed calc.py as read and ``cat`` as a command it ran."""
    found = touched(_only(CODEX_SHELLS))
    assert found.read == [] and found.commands == []
