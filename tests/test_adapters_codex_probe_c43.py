"""Codex rollouts found by probe C (round p43) in committed ``~/.codex`` folders: PowerShell 7's coloured error view,
code-mode scripts that completed though their command failed, a prompt sent too early and typed again, a search
whose errors went to /dev/null. The fixtures (``codex-cli/.real/probe-c43/``) are trimmed real rollouts; their origin
is in that folder's ``SOURCE.md``."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.ingest.read import read_dump

PROBE_C43 = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c43"
#: akhileswar18/behaviour_lab, Codex Desktop 0.108 on Windows, ``shell_command`` through PowerShell 7.
POWERSHELL_7 = PROBE_C43 / "rollout-2026-03-05T22-50-24-019cc1e9-6537-70a3-a8cd-d2957e043dd4.jsonl"
#: seokhyeonhong/motion-jepa, Codex 0.146 in code mode (``exec`` scripts calling ``tools.exec_command``).
CODE_MODE = PROBE_C43 / "rollout-2026-08-01T07-19-28-019fba42-ce37-78e1-a43b-ca31d6ad2dbe.jsonl"
#: seokhyeonhong/motion-jepa, Codex 0.145, ``exec_command`` called directly.
DIRECT_EXEC = PROBE_C43 / "rollout-2026-07-26T06-37-23-019f9b36-1e6d-7651-9801-5450483871e2.jsonl"
#: h-morishita-esol/devenv, Codex 0.104 codex-tui: two prompts interrupted at once, then the request typed whole.
INTERRUPTED = PROBE_C43 / "rollout-2026-02-19T22-39-36-019c7620-a34f-7273-bd59-a56de1f6c921.jsonl"

BWRAP = "bwrap: Failed to make / slave: Permission denied (exit code 1)"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_terminal_colour_codes_are_not_kept_in_observations_or_errors() -> None:
    """PowerShell 7 colours its error view (``ESC[31;1m`` ...) and its tables' headers; the codes were kept in the
    observations and errors (``…\\x1b[36;1m | \\x1b[31;1mProgram 'rg.exe' failed …``), recolouring a terminal that
    shows the step and indexed as words (``31;1mProgram``). They are presentation: dropped, as for OpenHands, and
    the error view's ``| `` gutter is not part of the message."""
    run = only_run(POWERSHELL_7)
    assert not any("\x1b" in (s.observation or "") + (s.error or "") for s in run.steps)
    rg, agents_md, table = run.steps
    # the message as PowerShell heads its error view (the category or command before the ``Line |`` view; round 29)
    assert rg.error.startswith("ResourceUnavailable: Program 'rg.exe' failed to run: An error occurred trying to start")
    assert rg.error.endswith("Access is denied.At line:2 char:1 (exit code 1)")
    assert agents_md.error == \
        r"Get-ChildItem: Cannot find path 'C:\Users\akhil\AGENTS.md' because it does not exist. (exit code 1)"
    assert "\nCount Name      Group\r\n----- ----      -----\r\n" in table.observation and table.error is None


def test_a_command_that_failed_inside_a_completed_code_mode_script_is_an_error() -> None:
    """In code mode the model runs ``tools.exec_command`` inside an ``exec`` script and prints its result object
    (``JSON.stringify(r)``); the script completes whatever the command's exit code. The sandbox's ``bwrap``
    refusal (exit 1) and a node ``SyntaxError`` (exit 1) were no errors, though the same refusal through
    ``exec_command`` called directly is one: now both are, and a command that exited 0 is not."""
    assert [s.error for s in only_run(CODE_MODE).steps] == [
        BWRAP, None, "SyntaxError: Invalid or unexpected token (exit code 1)"]
    assert only_run(DIRECT_EXEC).steps[0].error == BWRAP


def test_a_silent_exit_1_in_a_code_mode_result_list_does_not_hide_a_later_failure(tmp_path: Path) -> None:
    """A script may run several commands and print their result objects as a list. The first one exited 1 and
    printed nothing (no error, as a silent exit 1 through ``exec_command`` is none); the later ``bwrap`` refusal
    was then not read at all, and the script read as a success. The first of its results that is a failure is the
    step's error. (The code-mode fixture's first script, its printed result made a two-item list.)"""
    lines = CODE_MODE.read_text(encoding="utf-8").splitlines()[:3]
    output = json.loads(lines[2])
    bwrap = output["payload"]["output"][1]
    bwrap["text"] = json.dumps([{"wall_time_seconds": 0.1, "exit_code": 1, "output": ""}, json.loads(bwrap["text"])])
    rollout = tmp_path / "rollout-2026-08-01T07-19-28-019fba42-ce37-78e1-a43b-ca31d6ad2dbe.jsonl"
    rollout.write_text("\n".join([*lines[:2], json.dumps(output)]) + "\n", encoding="utf-8")
    assert [s.error for s in only_run(rollout).steps] == [BWRAP]


def test_a_prompt_whose_turn_was_aborted_before_any_answer_is_not_the_task() -> None:
    """The user sent the request too early twice (``turn_aborted`` a second later, nothing from the model) and then
    typed it whole; the first fragment was the task. The task is the prompt the model worked on; the fragments are
    kept as ``aborted_prompts``, and the later prompt stays a later one."""
    run = only_run(INTERRUPTED)
    assert run.task == (". ./.devenv/nvm.sh を実行すると、nvm (https://github.com/nvm-sh/nvm) を使ってカレントディレクトリで "
                        "LTSバージョンの node.js を使えるようにしたい。何を考慮すれば良い？")
    assert run.metadata["aborted_prompts"] == [". ./.devenv/nvm.sh を実行すると,",
                                               ". ./.devenv/nvm.sh を実行すると、nvm を使って LTSバージョンの"]
    [later] = run.metadata["user_prompts"]
    assert later.startswith("では、重たい処理は .devenv/setup.sh")


def test_a_prompt_interrupted_long_after_it_was_sent_stays_the_task(tmp_path: Path) -> None:
    """Review of C4: Codex writes reasoning only when it is complete (nothing with summaries off), so a whole request
    interrupted after half a minute of thinking also shows no model item before ``turn_aborted``; the short
    refinement typed next became the task. Only a prompt aborted soon (a retype) is dropped. (The fixture with its
    second prompt's ``turn_aborted`` 40 s after it, every other field as written.)"""
    lines = [json.loads(line) for line in INTERRUPTED.read_text(encoding="utf-8").splitlines()]
    for line in lines[8:10]:  # the second prompt's abort, sent 13:41:11.700
        line["timestamp"] = "2026-02-19T13:41:51.700Z"
    rollout = tmp_path / INTERRUPTED.name
    rollout.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    run = only_run(rollout)
    assert run.task == ". ./.devenv/nvm.sh を実行すると、nvm を使って LTSバージョンの"
    assert run.metadata["aborted_prompts"] == [". ./.devenv/nvm.sh を実行すると,"]
    assert run.metadata["user_prompts"][0].startswith(". ./.devenv/nvm.sh を実行すると、nvm (https://github.com/nvm-sh")


def test_a_command_whose_errors_went_to_dev_null_fails_with_its_exit_code_alone() -> None:
    """``rg ... 2>/dev/null`` exited 2 (a path it could not read) after 5,833 tokens of matches; its last match
    (``src/datasets/motion_dataset.py:133: return path_lst, ...``) was given as the error. What it printed is data:
    the error is the exit code."""
    assert [s.error for s in only_run(DIRECT_EXEC).steps] == [BWRAP, "exit code 2"]
