"""Probe FM of round 50: format leftovers (Gemini CLI stream-json, AG2's OTel, Langfuse, Codex CLI).

Through ``read_dump`` (``adapter_support.runs``) on real files or ones written as the format's own writer writes them
(each fixture folder's SOURCE.md); no mocks.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from adapter_support import runs

FIXTURES = Path(__file__).parent / "fixtures"


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


# -- Langfuse: a retried model call's failures in time order ---------------------------------------------------------

def test_a_langfuse_chain_retrying_its_model_call_tells_each_attempts_failure_at_its_own_time(tmp_path: Path) -> None:
    """Bug: the chain retried its model call (LangChain's ``with_retry``), both attempts failed "rate limited" (the
    v2 API without ``io``). The chain's failure step, which stands for the attempt whose exception got out (the
    last: the earlier ones' steps are added), took the FIRST attempt's time; the added step then got the same time
    and sorted after it: two steps at 45.362, the second attempt (45.800) at no time, in no order."""
    source = FIXTURES / "langfuse" / ".derived" / "api-v2-chain-failed-retried"
    for name in ("traces-page.json", "default-fields.json"):
        (tmp_path / name).write_bytes((source / name).read_bytes())
    [run] = runs(tmp_path, tenant="acme")
    failed = [(s.started_at, s.ended_at, s.observation) for s in run.steps if s.error == "rate limited"]
    assert failed == [
        (_at("2026-08-21T17:36:45.362"), _at("2026-08-21T17:36:45.700"),
         "llm live-chat failed (its input and output were not exported)"),
        (_at("2026-08-21T17:36:45.800"), _at("2026-08-21T17:36:46.262"), "llm live-chat failed")]


# -- AG2's OTel: parallel failures whose words hold the separator the results are joined with ------------------------

AG2 = FIXTURES / "ag2" / ".real"


def test_ag2_parallel_failures_with_multi_paragraph_words_each_keep_their_own() -> None:
    """Bug: AG2 joins a response's parallel results with ``"\\n\\n"``; two tools failed with two-paragraph words
    (``Error: city not found: Atlantis\\n\\nKnown cities: ...``). The text split into more parts than calls, so it was
    not split: the first failed step took the whole joined text as its result and error (Paris's weather and
    Lemuria's failure in Atlantis's error) and the other kept a bare ``ExecutionError`` with no result."""
    [run] = runs(AG2 / "ag2-0.14-otel-parallel-calls-two-fail-multiline.otlp.jsonl", tenant="acme")
    known = "\n\nKnown cities: Paris, Rome, Tokyo"
    assert [(s.arguments["city"], s.observation, s.error) for s in run.steps if s.action == "get_weather"] == [
        ("Atlantis", f"Error: city not found: Atlantis{known}",
         "ExecutionError: city not found: Atlantis Known cities: Paris, Rome, Tokyo"),
        ("Paris", "The weather in Paris is 73 degrees and Sunny.", None),
        ("Lemuria", f"Error: city not found: Lemuria{known}",
         "ExecutionError: city not found: Lemuria Known cities: Paris, Rome, Tokyo")]


def test_ag2_adjacent_parallel_failures_with_multi_paragraph_words_split_where_each_failure_starts() -> None:
    """The same with the two failures next to each other: several splits keep Paris's result in place; the one
    where each failed call's part starts with AG2's ``Error: `` is theirs."""
    [run] = runs(AG2 / "ag2-0.14-otel-parallel-calls-two-fail-multiline-adjacent.otlp.jsonl", tenant="acme")
    assert [(s.arguments["city"], s.observation) for s in run.steps if s.action == "get_weather"] == [
        ("Atlantis", "Error: city not found: Atlantis\n\nKnown cities: Paris, Rome, Tokyo"),
        ("Lemuria", "Error: city not found: Lemuria\n\nKnown cities: Paris, Rome, Tokyo"),
        ("Paris", "The weather in Paris is 73 degrees and Sunny.")]


# -- Codex CLI 0.171: a refused turn leaves no item ------------------------------------------------------------------

REFUSALS = FIXTURES / "codex-cli" / ".real" / "probe-fm50"
NOT_RECORDED = "the model's reply was not recorded: the turn completed with no message or call from it"


def test_a_codex_turn_the_model_refused_says_its_reply_was_not_recorded() -> None:
    """Bug: the model refused (a Responses API message whose content is ``refusal``); Codex keeps no item it cannot
    read, so the rollout holds the prompt, the turn's token count and ``task_complete`` with no last message. The
    run read as an ordinary session (outcome unknown, no error, no step): nothing said the request went unanswered."""
    [run] = runs(REFUSALS / "refused", tenant="acme")
    assert (run.task, run.outcome.value) == ("REFUSE do something bad", "infra_error")
    assert run.failure is not None and run.failure.error == f"{NOT_RECORDED} (5 output tokens spent)"
    assert (run.failure.cause or "").startswith("infrastructure: ")  # as Gemini CLI's safety block (review RFM)
    assert [(s.action, s.error) for s in run.steps] == [(None, run.failure.error)]


def test_a_codex_session_refused_on_its_last_turn_says_so_after_an_answered_one() -> None:
    """The refusal is the session's last turn, after one the model answered: the run ends unanswered."""
    [run] = runs(REFUSALS / "answered-then-refused", tenant="acme")
    assert [(s.arguments, bool(s.error)) for s in run.steps] == [({"content": "Done."}, False), (None, True)]
    assert run.outcome.value == "infra_error" and run.failure.error.startswith(NOT_RECORDED)


def test_a_codex_session_answered_after_a_refused_turn_ends_on_no_error() -> None:
    """Not the run's error where the model answered a later prompt: the session went on. The refused turn is a step
    of its own: else the later prompt's answer ("Done.") read as the answer to the refused task."""
    [run] = runs(REFUSALS / "refused-then-answered", tenant="acme")
    assert (run.outcome.value, run.failure) == ("unknown", None)
    assert [(s.action, s.arguments, s.error) for s in run.steps] == [
        (None, None, f"{NOT_RECORDED} (5 output tokens spent)"), ("respond", {"content": "Done."}, None)]


# -- Gemini CLI stream-json: a shell command that failed printing something ------------------------------------------

GEMINI_SHELL = FIXTURES / "gemini-cli" / ".real" / "probe-fm50"


def _shell_steps(name: str) -> list[tuple[str | None, str | None]]:
    [run] = runs(GEMINI_SHELL / name, tenant="acme")
    return [(s.arguments["command"], s.error) for s in run.steps if s.action == "run_shell_command"]


def test_gemini_stream_shell_command_dying_of_a_python_traceback_is_failed() -> None:
    """Bug: the ``tool_result`` of a command that failed printing something is ``success`` with its output and no
    exit code (gemini-cli 0.20 to 0.61). ``python3 load.py`` died of a JSONDecodeError and read as a success: a
    failure search missed it. Its output ends with a Python traceback: the exception line is the step's error."""
    assert _shell_steps("stream-python-traceback.jsonl") == [(
        "python3 load.py",
        "json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 2 column 1 (char 17)")]


def test_gemini_stream_shell_command_not_found_is_failed() -> None:
    """The same for a program that is not installed: bash's ``command not found`` is the last (only) line."""
    assert _shell_steps("stream-command-not-found.jsonl") == [
        ("deployctl deploy --prod", "/usr/bin/bash: line 4: deployctl: command not found")]


def test_gemini_stream_shell_output_with_a_traceback_inside_is_no_failure() -> None:
    """Only the output's end tells: a log with a traceback followed by other lines is the command's success."""
    assert _shell_steps("stream-log-with-traceback-ok.jsonl") == [("cat app.log", None)]


def test_gemini_stream_cat_of_a_missing_file_is_failed() -> None:
    """The real stream of round 49 (``cat missing.txt``): the step read as a success; its error is cat's line."""
    [run] = runs(FIXTURES / "gemini-cli" / ".real" / "headless-stream-json.jsonl", tenant="acme")
    assert [s.error for s in run.steps if s.action == "run_shell_command"] == [
        None, None, "cat: missing.txt: No such file or directory"]


def test_ag2_group_executor_parallel_failures_with_two_line_words_each_keep_their_own() -> None:
    """The group tool executor joins with one ``"\\n"``: failures of two lines each (a pydantic error, a message and
    a hint) split the text into more parts than calls. Both failed steps kept a bare ``ExecutionError`` and no
    result; each now has its own two lines."""
    [run] = runs(AG2 / "ag2-0.14-otel-pattern-parallel-calls-two-fail-multiline.otlp.jsonl", tenant="acme")
    assert [(s.arguments["city"], s.observation) for s in run.steps if s.action == "get_weather"] == [
        ("Atlantis", "Error: city not found: Atlantis\nKnown cities: Paris, Rome, Tokyo"),
        ("Paris", "The weather in Paris is 73 degrees and Sunny."),
        ("Lemuria", "Error: city not found: Lemuria\nKnown cities: Paris, Rome, Tokyo")]


def test_gemini_stream_pytest_session_with_a_failed_test_is_failed() -> None:
    """The coding agent's commonest failing command: pytest with a failed test exits 1, the stream shows its output
    alone. Its last line is pytest's tally of a failed session (``1 failed, 1 passed in 4.79s``): failed, said by the
    summary line above it that names the test and its error."""
    assert _shell_steps("stream-pytest-failed.jsonl") == [
        ("python3 -m pytest -q -p no:cacheprovider", "FAILED test_calc.py::test_add - assert -1 == 5")]


# -- Review RFM: a command that only prints a file or a log succeeded whatever the file's last line says --------------

def test_gemini_stream_tail_of_a_log_ending_on_a_logged_traceback_is_no_failure() -> None:
    """Review bug: ``tail -n 5 logs/worker.log`` succeeded; the log's last lines are a traceback the worker logged.
    The output ends on the traceback's exception line, so the step read as failed with ``ConnectionError: upstream
    reset``: a failure search found a successful look at a log. A command that only prints a file is read by its
    own complaint alone."""
    assert _shell_steps("stream-tail-log-traceback-ok.jsonl") == [("tail -n 5 logs/worker.log", None)]


def test_gemini_stream_grep_for_errno_in_a_log_is_no_failure() -> None:
    """``grep -n Errno logs/worker.log`` found logged ``[Errno 111]`` lines: it read as failed with grep's last
    match. ``[Errno N]`` counts only in a program's own complaint or an exception's line."""
    assert _shell_steps("stream-grep-errno-ok.jsonl") == [("grep -n Errno logs/worker.log", None)]


def test_gemini_stream_grep_for_no_such_file_in_logs_is_no_failure() -> None:
    """``grep -rn 'No such file or directory' logs/`` found a logged line ending so: it read as failed."""
    assert _shell_steps("stream-grep-nosuch-ok.jsonl") == [("grep -rn 'No such file or directory' logs/", None)]


def test_gemini_stream_pipe_of_a_log_through_tail_is_no_failure() -> None:
    """``grep -rn Errno logs/ | tail -n 1``: the output is a log's line, grep's print that tail filtered."""
    assert _shell_steps("stream-pipe-tail-ok.jsonl") == [("grep -rn Errno logs/ | tail -n 1", None)]


def test_gemini_stream_pytest_piped_through_tail_is_still_failed() -> None:
    """``python3 -m pytest ... 2>&1 | tail -n 3``, how agents keep a test run short: tail only filters pytest's output,
    so the tally of a failed session still tells (a pipe is read by its first stage, the others being filters); the
    failed test's summary line, kept by the tail, says it."""
    assert _shell_steps("stream-pytest-piped-tail.jsonl") == [
        ("python3 -m pytest -q -p no:cacheprovider 2>&1 | tail -n 3", "FAILED test_calc.py::test_add - assert -1 == 5")]


def test_gemini_stream_printing_command_that_failed_still_says_why() -> None:
    """A printing command that failed says so behind its own name: ``tail`` of a missing log is still failed (exit
    code 1), as is ``cat`` of one (``test_gemini_stream_cat_of_a_missing_file_is_failed``)."""
    assert _shell_steps("stream-tail-missing.jsonl") == [
        ("tail -n 5 logs/missing.log", "tail: cannot open 'logs/missing.log' for reading: No such file or directory")]


def test_gemini_stream_python_of_a_missing_script_is_failed() -> None:
    """Python's own complaint (exit code 2) is still failed: ``[Errno 2]`` behind the interpreter's path."""
    [(command, error)] = _shell_steps("stream-python-missing-script.jsonl")
    assert command == "python3 nope.py"
    assert error is not None and error.endswith("python3: can't open file '/tmp/p50/FRFM/gem/proj/nope.py': "
                                                "[Errno 2] No such file or directory")


# -- Review RFM: AG2's joined failures, five adjacent, and a text that splits two ways -------------------------------

def test_ag2_five_adjacent_parallel_failures_each_keep_their_own_words() -> None:
    """Review bug: five adjacent failures of two paragraphs each, then Paris's result (ag2 0.14). The splits were cut
    at the first 50 before the check that a failed call's part starts with ``Error: ``; the right one was not among
    them, so the split gave up and the text was paired by place: Atlantis's step took all six results as its error,
    the four other failed steps kept a bare ``ExecutionError``."""
    [run] = runs(AG2 / "ag2-0.14-otel-parallel-calls-five-fail-multiline-adjacent.otlp.jsonl", tenant="acme")
    known = "Known cities: Paris, Rome, Tokyo"
    failed = ("Atlantis", "Lemuria", "Mu", "Thule", "Hyperborea")
    assert [(s.arguments["city"], s.observation, s.error) for s in run.steps if s.action == "get_weather"] == [
        *((city, f"Error: city not found: {city}\n\n{known}", f"ExecutionError: city not found: {city} {known}")
          for city in failed),
        ("Paris", "The weather in Paris is 73 degrees and Sunny.", None)]


def test_ag2_joined_failures_that_split_two_ways_give_no_one_the_whole_text() -> None:
    """Two adjacent failures whose second paragraph starts with ``Error: `` too split two ways, each part starting
    with AG2's ``Error: ``: which words are whose, the text does not say. Nothing is answered then (both keep their
    ``ExecutionError``); it was all handed to the first call by place, Lemuria's failure and Paris's weather in
    Atlantis's error."""
    [run] = runs(AG2 / "ag2-0.14-otel-parallel-calls-two-fail-ambiguous.otlp.jsonl", tenant="acme")
    assert [(s.arguments["city"], s.observation, s.error) for s in run.steps if s.action == "get_weather"] == [
        ("Atlantis", None, "ExecutionError"), ("Lemuria", None, "ExecutionError"),
        ("Paris", "The weather in Paris is 73 degrees and Sunny.", None)]


# -- Review RFM: low ones (Codex's refusal step's words and cause, a Langfuse attempt with no start) ----------------

def test_a_codex_refused_turns_step_says_its_reason_in_one_parenthesis_and_its_cause_as_gemini_safety_blocks() -> None:
    """The refused turn's step read "... (5 output tokens spent) (a refusal, which Codex drops, or none)"; its cause
    was the project's one "model: ..." cause, where Gemini CLI's safety block, the same end of a run (the provider
    answered nothing usable), is ``infra_error`` with an "infrastructure: ..." cause."""
    [run] = runs(REFUSALS / "refused", tenant="acme")
    [step] = run.steps
    assert step.observation == f"{NOT_RECORDED} (5 output tokens spent; a refusal, which Codex drops, or none)"
    assert run.outcome.value == "infra_error" and run.failure is not None
    assert (run.failure.cause or "").startswith("infrastructure: the turn ended with no reply Codex could record")


def test_a_langfuse_retried_call_whose_first_attempt_has_no_start_is_not_taken_for_the_last(tmp_path: Path) -> None:
    """The retried chain of ``test_a_langfuse_chain_retrying_its_model_call_...`` with the first attempt's
    ``startTime`` null (its end kept): sorted latest first, an attempt with no start came first, so it was taken
    for the one whose failure the chain passed on and the added step (the other attempt's) took the last attempt:
    the chain's step and the not-exported one swapped. When an attempt with no start ran is not known: the last is
    the one with the latest start."""
    source = FIXTURES / "langfuse" / ".derived" / "api-v2-chain-failed-retried"
    (tmp_path / "traces-page.json").write_bytes((source / "traces-page.json").read_bytes())
    fields = json.loads((source / "default-fields.json").read_text())
    for observation in fields["data"]:
        if observation["id"] == "f41173c41454821a":  # the first attempt
            observation["startTime"] = None
    (tmp_path / "default-fields.json").write_text(json.dumps(fields))
    [run] = runs(tmp_path, tenant="acme")
    failed = [(s.started_at, s.ended_at, s.observation) for s in run.steps if s.error == "rate limited"]
    assert failed == [
        (None, _at("2026-08-21T17:36:45.700"), "llm live-chat failed (its input and output were not exported)"),
        (_at("2026-08-21T17:36:45.800"), _at("2026-08-21T17:36:46.262"), "llm live-chat failed")]


def test_gemini_stream_printing_command_behind_a_runner_or_git_options_is_no_failure(tmp_path: Path) -> None:
    """Review RZ2: ``timeout 10 tail ...``, ``env LC_ALL=C tail ...`` and ``git -C repo log`` lost the exemption of
    a command that only prints (only ``sudo`` / ``VAR=x`` were passed over), so the same successful look at a log
    read as failed with the log's last traceback line. The words that run another program are the ones
    ``touched`` passes over (``program_words``); git's own options before its subcommand are passed over too.
    The stream is the real one of ``tail -n 5 logs/worker.log``, its command line prefixed as a user would."""
    real = (GEMINI_SHELL / "stream-tail-log-traceback-ok.jsonl").read_text()
    for command in ("timeout 10 tail -n 5 logs/worker.log", "env LC_ALL=C tail -n 5 logs/worker.log",
                    "nohup tail -n 5 logs/worker.log"):
        copy = tmp_path / "stream.jsonl"
        copy.write_text(real.replace('"command":"tail -n 5 logs/worker.log"', json.dumps({"command": command})[1:-1]))
        [run] = runs(copy, tenant="acme")
        assert [(s.arguments["command"], s.error) for s in run.steps if s.action == "run_shell_command"] == [
            (command, None)]
    from trajsearch.ingest.adapters._agent_cli import printing_program

    assert printing_program("git -C /repo --no-pager log -3") == "git"
