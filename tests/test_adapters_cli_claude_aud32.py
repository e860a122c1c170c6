"""Round 32's audit of the Claude Code adapter against real 2.1.8x-2.1.9x sessions (``fixtures/claude-code/.aud32``,
lines of Xu-Wentao/dotfile's committed ``~/.claude/projects``)."""

from __future__ import annotations

from pathlib import Path

from adapter_support import harbor_output_run

from trajsearch.actions import ran
from trajsearch.ingest.read import read_dump

AUD32 = Path(__file__).parent / "fixtures" / "claude-code" / ".aud32"
DENIED = ("not run: The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a "
          "file edit, the new_string was NOT written to the file).")


def _run(name: str):
    [result] = read_dump(AUD32 / name, tenant="acme")
    return result.trajectory


def test_a_session_opened_with_a_bare_dot_takes_its_first_real_request_as_its_task() -> None:
    """2.1.88: the user typed "." to open the session (the model: "How can I help you?"), then asked for the work.
    The run's task was ".", as in 25 of the 102 sessions of that home folder; the request it did is the task, the "."
    stays among the session's prompts."""
    run = _run("adaba13e-53b8-4796-96e4-0977e7725a8d.jsonl")
    assert run.task.startswith("你可以阅读下当前的 @pkg/backend/aisuite/ 里的代码。")
    assert run.metadata["user_prompts"] == ["."]
    assert [s.action for s in run.steps] == ["respond", "Read", "Edit"]


def test_a_call_the_user_rejected_is_worded_by_the_rejection_not_the_clis_note_after_it() -> None:
    """2.1.88 appends "Note: The user's next message may contain a correction or preference. ..." to a rejected
    call's result: that note, the result's last line, was the call's error ("not run: Note: The user's next ...")."""
    edit = _run("adaba13e-53b8-4796-96e4-0977e7725a8d.jsonl").steps[-1]
    assert edit.error == DENIED + " STOP what you are doing and wait for the user to tell you how to proceed."


#: The CLI's cancel message (2.1.x ``CANCEL_MESSAGE``; 2.1.332 appends the same note to it as to a rejection).
CANCEL = "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell " \
    "you how to proceed."


def test_a_call_the_user_cancelled_is_worded_by_the_cancel_message_not_the_note(tmp_path: Path) -> None:
    """The CLI appends its note to the cancel message as to a rejection: the adaba13e Edit's rejection swapped for the
    CLI's own cancel sentence (no real transcript of one was found) read "Note: The user's next message ...", and as
    a call that ran."""
    real = (AUD32 / "adaba13e-53b8-4796-96e4-0977e7725a8d.jsonl").read_text(encoding="utf-8")
    rejection = DENIED.removeprefix("not run: ") + " STOP what you are doing and wait for the user to tell you how to " \
        "proceed."
    assert real.count(rejection) == 1
    cancelled = tmp_path / "adaba13e-53b8-4796-96e4-0977e7725a8d.jsonl"
    cancelled.write_text(real.replace(rejection, CANCEL), encoding="utf-8")
    [result] = read_dump(cancelled, tenant="acme")
    assert result.trajectory.steps[-1].error == "not run: " + CANCEL


def test_a_plan_the_user_rejected_with_words_keeps_all_the_user_said() -> None:
    """2.1.92: the user rejected ExitPlanMode's plan and typed why in two paragraphs ("... the user said:" and their
    words on the lines after it, then the CLI's note): the error was the note, then only the first paragraph; the
    second, the actual instruction, is kept too."""
    [plan] = _run("e2e4f7f7-0e2a-443b-a3ca-f6f7956cbc06.jsonl").steps
    assert plan.action == "ExitPlanMode"
    assert plan.error == DENIED + " To tell you how to proceed, the user said: 我们在配置开发机的时候，可以根据 storage " \
        "这里的参数，把只读的这些目录放到 env 里面。 然后在开发机的 bootstrap 脚本里面从 env 读取，" \
        "env 里的目录就需要挂载到当前配置的工作目录。"


def test_a_call_the_user_stopped_while_it_ran_is_interrupted_not_a_call_not_run() -> None:
    """2.1.332 (made with the real CLI, interrupted over ``--input-format stream-json``): the Bash call the user
    stopped while it ran has the refusal's words and "Correction to the text above: this call was stopped while
    running, not refused before it ran. It may have run in part or in full ...": it read "not run: ...", so its
    command counted as never run."""
    [bash] = _run("interrupted-2.1.332/e18fcfef-3602-4ab5-8942-95ef8b4dc4b4.jsonl").steps
    assert bash.action == "Bash"
    assert bash.error.startswith("interrupted by the user while it ran: this call was stopped while running, not "
                                 "refused before it ran. It may have run in part or in full, and its changes may "
                                 "have been written.")
    assert ran(bash)


#: Claude Code 2.1.332 run headless against a local fake model: one Bash call run in the background that fails.
BG_FAIL = AUD32 / "bg-fail-2.1.332"
BG_ERROR = 'Background command "Run the failing job" failed with exit code 3'


def test_a_background_command_that_failed_fails_its_call_in_headless_stream_json(tmp_path: Path) -> None:
    """2.1.332's stdout (``--output-format stream-json``, as a Harbor trial keeps it in ``agent/claude-code.txt``)
    writes the task's end only as a ``system`` ``task_notification`` record (``tool_use_id``, ``status: failed``,
    ``summary``): the launching call read as one that succeeded, where the session file, which gives the model that
    report as a ``<task-notification>`` user record, has it fail."""
    session = _run("bg-fail-2.1.332/92e42d5c-9787-410c-a1a0-c57db75bf7e7.jsonl")
    run = harbor_output_run(BG_FAIL / "stream-json-stdout.jsonl", tmp_path)
    assert [(s.action, s.error) for s in run.steps] == [("Bash", BG_ERROR), ("respond", None), ("respond", None)]
    assert run.steps[0].observation.endswith("\n" + BG_ERROR)
    assert [(s.action, s.error, s.observation) for s in run.steps] == \
        [(s.action, s.error, s.observation) for s in session.steps]
