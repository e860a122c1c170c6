"""Round p49, area N2: what the newest releases of the coding-agent CLIs write, read through the public readers.

Fixtures are real writers' output (each folder's SOURCE.md says how it was produced).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.read import read_dump
from trajsearch.model import Outcome

import adapter_support

FIXTURES = Path(__file__).parent / "fixtures"
GEMINI = FIXTURES / "gemini-cli" / ".real"


def test_a_gemini_stream_turn_that_got_an_empty_reply_errs_with_the_clis_reason() -> None:
    """N2-1 (real ``@google/gemini-cli@0.61.0`` stream-json, the model's reply empty): since 0.55 the CLI says why in
    an ``error`` event and ends with a ``result`` of status ``error`` carrying no ``error``; the run's error was the
    bare word "error"."""
    run = adapter_support.only(GEMINI / "headless-stream-json-empty-response.jsonl", tenant="acme")
    assert run.outcome == Outcome.infra_error
    assert run.failure.error.startswith("The model returned an empty response with no text or thoughts.")
    assert run.metadata["errors"] == [run.failure.error]


def test_a_gemini_stream_command_that_failed_printing_nothing_is_an_error() -> None:
    """N2-2 (real ``@google/gemini-cli@0.61.0`` stream-json, ``ls /nonexistent-dir 2>/dev/null``): the stream's
    ``tool_result`` is the tool's display, ``status: "success"`` with "Command exited with code: 2"; the step had no
    error, so a failed command read as a success."""
    run = adapter_support.only(GEMINI / "headless-stream-json-silent-exit.jsonl", tenant="acme")
    shell = run.steps[0]
    assert shell.action == "run_shell_command"
    assert shell.error == "exit code 2"
    assert run.steps[1].error is None


def test_a_gemini_session_that_ended_on_a_reply_the_cli_could_not_use_is_an_infra_error() -> None:
    """N2-3 (real ``@google/gemini-cli@0.61.0`` interactive recordings): since 0.55 a turn whose reply was empty
    (or thoughts only, cut at the token limit, blocked) is an ``error`` record in the CLI's own words, not an
    ``[API Error: ...]``; a session that ended on one read as ``unknown`` with no failure, though the same turn
    under ``gemini -p`` reads as an infrastructure error."""
    ended = adapter_support.only(GEMINI / "invalid-stream" / "session-2026-12-05T08-52-c1132522.jsonl", tenant="acme")
    assert ended.outcome == Outcome.infra_error
    assert ended.failure.error.startswith("The model returned an empty response with no text or thoughts.")
    assert ended.task == "hello, just say done"
    went_on = adapter_support.only(GEMINI / "invalid-stream" / "session-2026-12-05T08-50-871d3434.jsonl",
                                   tenant="acme")
    assert went_on.outcome == Outcome.unknown  # answered after it: the session went on
    assert went_on.metadata["error_records"][0].startswith("The model returned an empty response")


def test_gemini_json_output_is_refused_naming_the_recording_to_ingest() -> None:
    """N2-4 (real ``gemini -p --output-format json`` stdout, 0.61.0): the answer and statistics only, no prompt or
    steps; it was refused as "unrecognised dump format", as if Gemini CLI were not supported."""
    with pytest.raises(ValueError, match=r"no run in this file: this is the final result of a headless Gemini CLI "
                                         r"run .*chats/session-\*-3577006b\.json\* "):
        list(read_dump(GEMINI / "headless-json-result.json", tenant="acme"))


def test_a_gemini_session_that_ended_on_a_malformed_function_call_is_an_infra_error() -> None:
    """FN2-1 (real ``@google/gemini-cli@0.61.0`` interactive recording, the model's reply ended
    ``MALFORMED_FUNCTION_CALL``): the CLI records its own words, "Model stream ended with malformed function call."
    (so for a reply with no finish reason or an unexpected tool call); the session read as ``unknown`` with no
    failure, while the same turn under ``gemini -p --output-format stream-json`` reads as an infrastructure error."""
    run = adapter_support.only(GEMINI / "invalid-stream" / "session-2026-12-05T09-17-3a064652.jsonl", tenant="acme")
    assert run.outcome == Outcome.infra_error
    assert run.failure.error == "Model stream ended with malformed function call."
    assert run.task == "hello, just say done"


def test_a_gemini_stream_command_whose_own_output_is_command_failed_is_no_error() -> None:
    """FN2-2 (real ``@google/gemini-cli@0.61.0`` stream-json, ``tail -n 1 ci.log`` printing the log's last line,
    "Command failed: npm test"): the display of a command that printed something is its output; the shell tool shows
    its own "Command failed: ..." only with an execution error, whose ``tool_result`` is ``status: "error"``. A
    command that succeeded read as failed."""
    run = adapter_support.only(GEMINI / "headless-stream-json-tail-command-failed.jsonl", tenant="acme")
    assert run.steps[0].action == "run_shell_command"
    assert run.steps[0].observation == "Command failed: npm test"
    assert run.steps[0].error is None


def test_a_gemini_stream_in_debug_mode_keeps_a_silent_failure() -> None:
    """FN2-3 (real ``@google/gemini-cli@0.61.0`` stream-json under ``gemini -d``, ``ls /nonexistent-dir 2>/dev/null``):
    in debug mode the shell's display is the report the model gets ("Output: (empty)\\nExit Code: 2\\nProcess Group
    PGID: ..."); the failure read as a success."""
    run = adapter_support.only(GEMINI / "headless-stream-json-debug-silent-exit.jsonl", tenant="acme")
    assert run.steps[0].action == "run_shell_command"
    assert run.steps[0].error == "exit code 2"


@pytest.mark.parametrize("path", ["headless-stream-json-shell-timeout.jsonl",
                                  "shell-timeout/session-2026-12-05T09-18-2a5a279a.jsonl"])
def test_a_gemini_command_cancelled_at_the_inactivity_timeout_is_an_error(path: str) -> None:
    """FN2-6 (real ``@google/gemini-cli@0.61.0``, ``tools.shell.inactivityTimeout`` 3 s, ``sleep 30``; the same turn's
    stream-json and chat recording): the shell tool killed the command and told the model "Command was automatically
    cancelled because it exceeded the timeout ..." with status ``success``; the step had no error, as if it ran."""
    run = adapter_support.only(GEMINI / path, tenant="acme")
    shell = run.steps[0]
    assert shell.action == "run_shell_command"
    assert shell.error == ("Command was automatically cancelled because it exceeded the timeout of 0.1 minutes "
                           "without output.")


@pytest.mark.parametrize("name", ["headless-json-result-v0.20.json", "headless-json-error-v0.20.json"])
def test_gemini_json_output_without_a_session_id_is_refused_too(name: str) -> None:
    """FN2-4 (real ``@google/gemini-cli@0.20.0`` ``gemini -p --output-format json``: the answer and statistics on
    stdout; the error it ended on, max session turns, on stderr): before 0.21 the document has no ``session_id``; it
    was "unrecognised dump format". FN2-5: recordings were ``.json`` before 0.39, so the name is ``.json*`` (one
    shell glob for both) where the result names its session, and the minute the run started where it does not."""
    with pytest.raises(ValueError, match=r"no run in this file: this is the final result of a headless Gemini CLI "
                                         r"run .*chats/session-<YYYY-MM-DDTHH-MM it started>-\*\.json "):
        list(read_dump(GEMINI / name, tenant="acme"))


def test_gemini_json_refusal_names_a_recording_a_shell_finds_in_either_extension(tmp_path: Path) -> None:
    """Review RG-3: the name said ``session-*-<id8>.json[l]``, a glob matching ``.jsonl`` only; a 0.21-0.38 result's
    recording is ``.json``: pasted into a shell it found nothing."""
    import glob
    import re

    with pytest.raises(ValueError) as refused:
        list(read_dump(GEMINI / "headless-json-result.json", tenant="acme"))
    pattern = re.search(r"chats/(\S+)", str(refused.value)).group(1)
    for name in ("session-2026-01-01T22-12-3577006b.json", "session-2026-12-05T08-50-3577006b.jsonl"):
        (tmp_path / name).write_text("{}")
    assert len(glob.glob(str(tmp_path / pattern))) == 2, pattern
