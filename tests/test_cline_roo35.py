"""Round 35: what Roo Code (3.52, April 2026) writes into a task's files of its own, read as its source writes them
(hand-built fixtures, tests/fixtures/cline/.aud35/README.md): its context condensing's summary and its sliding
window's marker are no prompts of the user's, and a UI log's newer tools are named and answered as the history
names and answers them."""

from __future__ import annotations

from pathlib import Path

from trajsearch.model import Outcome

from adapter_support import only

AUD35 = Path(__file__).parent / "fixtures" / "cline" / ".aud35"


def test_a_condensing_summary_after_an_accepted_completion_is_no_reply_and_the_task_stays_a_success() -> None:
    run = only(AUD35 / "roo-condensed-after-completion")
    assert [s.action for s in run.steps] == ["list_files", "respond"]
    assert "user_prompts" not in run.metadata  # the summary and its reminder were two prompts of the user's
    assert run.metadata["compactions"] == 1
    assert run.metadata["compaction_summary"].startswith("## Conversation Summary")
    assert run.outcome is Outcome.success  # read as the user's reply to the completion, it was unknown


def test_the_sliding_windows_marker_is_no_prompt_and_the_hidden_messages_still_steps() -> None:
    run = only(AUD35 / "roo-sliding-window")
    assert "user_prompts" not in run.metadata  # "[Sliding window truncation: 2 messages hidden ...]" was one
    assert [(s.action, s.error) for s in run.steps] == [
        ("execute_command", "Tests: 1 failed, 1 total (exit code 1)"), ("execute_command", None)]


def test_a_roo_ui_logs_newer_tools_are_named_as_its_history_names_them_and_get_their_results() -> None:
    run = only(AUD35 / "roo-ui-tools" / "ui_messages.json")
    assert [s.action for s in run.steps] == [
        "update_todo_list", "codebase_search", "run_slash_command", "read_command_output", "new_task",
        "generate_image", "apply_diff", "apply_diff", "apply_diff", "apply_diff",
        "respond"]  # before: codebaseSearch, runSlashCommand, ...
    search, subtask = run.steps[1], run.steps[4]
    assert search.arguments["query"] == "speculative draft context sizing"
    assert '"filePath": "common/speculative.cpp"' in search.observation  # its codebase_search_result
    assert subtask.observation == "29 call sites of the KV constructors; 2 mandatory deltas (ref-s1)."
    assert run.outcome is Outcome.success


def test_a_roo_diff_error_fails_its_edit_with_why_not_a_replace_in_file_whose_path_is_the_error() -> None:
    shown, alone = only(AUD35 / "roo-ui-tools" / "ui_messages.json").steps[6:8]
    assert shown.arguments["path"] == "common/speculative.cpp"  # the edit it showed, then failed
    assert shown.error == "No sufficiently similar match found at line: 12 (62% similar, needs 100%)"
    assert alone.action == "apply_diff" and alone.arguments == {
        "path": "c:\\Projects\\vscode\\BeeLlamaTest\\common\\common.cpp"}  # the file its error names
    assert alone.error == "ERROR: Special marker '=======' found in your diff content at line 4"


def test_a_roo_edit_file_diff_error_fails_its_edit_too_whatever_its_sentence_before_the_path() -> None:
    shown, alone = only(AUD35 / "roo-ui-tools" / "ui_messages.json").steps[8:10]
    assert shown.arguments["path"] == "common/arg.cpp"  # EditFileTool's edit, shown as appliedDiff, then failed
    assert shown.error == "The provided old_string could not be found using exact, whitespace-tolerant, or " \
                          "token-based matching."  # before: a replace_in_file whose path was this error
    assert alone.action == "apply_diff" and alone.arguments == {
        "path": "c:\\Projects\\vscode\\BeeLlamaTest\\common\\arg.cpp"}
    assert alone.error == "Expected 1 occurrence(s) but found 2 exact match(es)."


def test_a_roo_subtasks_finish_approval_is_no_call_and_its_accepted_completion_a_success() -> None:
    run = only(AUD35 / "roo-subtask-finish" / "ui_messages.json")
    assert [s.action for s in run.steps] == ["search_files", "respond"]  # before: a third step, finishTask
    assert run.outcome is Outcome.success  # before: unknown, the completion no longer the last call
