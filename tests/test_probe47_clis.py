"""Coding-agent CLI files found by probe C (round p47), written by the released CLIs; origins in the fixtures'
``SOURCE.md``."""

from __future__ import annotations

from pathlib import Path

from trajsearch.ingest.read import read_dump

FIXTURES = Path(__file__).parent / "fixtures"
CC = FIXTURES / "claude-code" / ".real" / "probe-c47"


def only_run(path: Path):
    [run] = [r.trajectory for r in read_dump(path, tenant="acme")]
    return run


def test_a_background_test_run_that_failed_is_an_error_where_the_agent_polled_it() -> None:
    """Bug (probe C47, C1): a command run in the background (``run_in_background``, Ctrl+B) is read by polling it,
    ``BashOutput`` (1.0.x-2.0.x) or ``TaskOutput`` (2.1.x); the CLI reports its end as ``<status>failed</status>``
    with the exit code, never as ``is_error``, and the launching call's result only says it started. The failed
    test run read as no error at all: a failure lost to the failure warnings. The poll is the failed step, its
    error read as a Bash call's exit code (the decisive line, the code)."""
    for folder, poll in (("poll-2.0.46", "BashOutput"), ("poll-2.1.40", "TaskOutput")):
        run = only_run(CC / folder)
        launch, polled, answer = run.steps
        assert launch.action == "Bash" and "<exit_code>" not in launch.observation, folder
        assert polled.action == poll and "<exit_code>1</exit_code>" in polled.observation
        assert polled.error == "E AssertionError: 3 \\!= 4 (exit code 1)", folder
        assert answer.action == "respond" and answer.error is None


def test_a_background_commands_report_the_session_ended_before_delivering_is_its_error() -> None:
    """Bug (probe C47, C2): a background task's ``<task-notification>`` that 2.1.x (here 2.1.40, ``claude -p``) queued
    while the agent worked and never delivered, as the session ended first, is logged only as an ``enqueue``
    queue-operation, and was read only once a ``remove`` took it in: the test command that failed in the background
    read as no error. It joins its launching call all the same (the model never saw it; the command did fail)."""
    run = only_run(CC / "undelivered-2.1.40")
    launch, wait, after, answer = run.steps
    assert launch.arguments["run_in_background"] is True
    assert launch.error == 'Background command "Run the test suite" failed with exit code 1'
    assert launch.observation.endswith(launch.error)
    assert (wait.error, after.error, answer.action) == (None, None, "respond")
    assert "user_prompts" not in run.metadata  # a task's report is no prompt


def test_a_polled_background_tasks_report_still_queued_joins_its_launch_once() -> None:
    """The 2.1.40 poll session also left its task's report queued (enqueued before TaskOutput marked it seen): the
    launch gets the report, the poll keeps its own error, and nothing else changes. The report is no second error
    (probe 48 L1: one failure, one failed step; the poll reported it first)."""
    run = only_run(CC / "poll-2.1.40")
    launch, polled, _ = run.steps
    assert launch.error is None
    assert launch.observation.count('Background command "Run the test suite" failed with exit code 1') == 1
    assert polled.error == "E AssertionError: 3 \\!= 4 (exit code 1)"


def test_a_post_tool_use_hooks_refusal_is_what_the_call_got_back() -> None:
    """Bug (probe C47, C3): a ``PostToolUse`` hook that exits 2 (a linter, a type check run on what the agent just
    wrote: the hooks guide's own pattern) tells the agent why in a reminder; 2.1.2xx+ records it only as a
    ``hook_blocking_error`` attachment naming the call (``toolUseID``), apart from the call's result. It was passed
    over: the call read as a clean success and the lint error the agent went on to fix was nowhere in the run. It is
    the call's error (the hook's words, without the ``[command]:`` the CLI puts first) and joins its observation; on
    a failed call (``PostToolUseFailure``) the call keeps its own error."""
    run = only_run(CC / "post-tool-use-hooks-2.1.332")
    linted, failed, answer = run.steps
    assert linted.observation == "x = 1\nPostToolUse:Bash hook blocking error: ruff: app.py:1:1: F401 os imported but unused"
    assert linted.error == "PostToolUse:Bash hook: ruff: app.py:1:1: F401 os imported but unused"
    assert failed.error == "boom: config missing (exit code 1)"
    assert failed.observation.endswith("PostToolUseFailure:Bash hook blocking error: hint: run make config first")
    assert answer.action == "respond" and "user_prompts" not in run.metadata


def test_a_session_written_out_of_order_is_read_in_the_order_of_its_conversation() -> None:
    """Bug (probe C47, C4): 2.1.40 wrote a session's second response (lines 3-4) before its prompt, first response and
    that call's result (lines 5-8), each record naming the one it follows (``parentUuid``); the CLI loads a session
    by that chain. Read in file order, the poll of the background agent came before the call that launched it, and
    the thought of each went with the other's place. Each record is read after its parent."""
    run = only_run(CC / "lines-out-of-order-2.1.40")
    assert [(s.action, s.thought) for s in run.steps] == [
        ("Task", "Step 0."), ("TaskOutput", "Step 1."), ("respond", None)]
    assert run.task == "SCRIPT:BGAGENT survey the repo in the background"
    assert run.steps[0].started_at < run.steps[1].started_at


def test_a_failed_commands_error_is_not_the_line_its_cut_output_ends_on() -> None:
    """Bug (probe C47, C5): of a failed command's long output 2.1.332 keeps the first 30,000 characters and shows
    their start and end (the middle cut, "... [20012 characters truncated] ..."): the end shown is where the cut
    fell, mid-line, and the command's own last lines (here the linker's error on stderr) are gone. The error was that
    fragment, "line 570 o (exit code 2)". An error line among what is kept is the error; else the exit code, saying
    the output was cut. 2.1.40, which cut the middle of the whole output, keeps its end: read as before."""
    run = only_run(CC / "failed-output-cut-2.1.332")
    built = run.steps[0]
    assert built.observation.rstrip().endswith("line 570 o")
    assert built.error == "exit code 2 (the CLI kept only the start of the output)"
    old = only_run(CC / "failed-output-cut-2.1.40").steps[0]
    assert old.error == "FAILED tests/test_pay.py::test_refund - AssertionError: 3 != 4 (exit code 1)"


def test_a_head_only_cut_is_told_by_bytes_and_a_stripped_line_end():
    """Review of the head-only rule (real 2.1.332 files): the CLI keeps 30,000 *bytes*, so a test runner's ``✓`` lines
    (3 bytes each) made the characters shown and cut add up to 28,494, and a cut falling right after a newline to
    29,999 (the result's last line end is stripped): both missed the exact-30,000 rule and read the fragment where
    the cut fell as the error (``✓ src/mod_752.test.ts (3 te``, a clean build-log line)."""
    vitest = only_run(CC / "failed-output-cut-utf8-2.1.332").steps[0]
    assert "✓" in vitest.observation and "[" in vitest.observation
    assert vitest.error == "exit code 1 (the CLI kept only the start of the output)"
    build = only_run(CC / "failed-output-cut-newline-2.1.332").steps[0]
    assert build.error == "exit code 2 (the CLI kept only the start of the output)"


def test_a_report_queued_before_a_late_written_dequeue_still_joins_its_call():
    """Review of C2 (real 2.1.40 file): the CLI's writes race, and the prompt's content-less ``dequeue`` (earlier
    by its time) was written after the background agent's report's ``enqueue``: read in file order it popped the
    report, and the agent's result never reached its ``Task`` call. The queue's log is read in time order."""
    run = only_run(CC / "queue-out-of-order-2.1.40")
    launch = run.steps[0]
    assert launch.action == "Task" and launch.observation.rstrip().endswith("Prompt is too long")
