"""Claude Code 2.1.3xx's marks of whether a call ran (round 33): stream-json's ``tool_result_meta``
(``non_execution_kind``, ``call_ended``) as a transcript's ``toolDenialKind`` and ``toolCallEnded``, a transcript's
``toolDenialAfterRun`` (refused once it had run), and the words of a call whose result a copied session lacks. The
real files (``claude-code/.aud33/``) are the 2.1.332 CLI's; their origin is in its ``README.md``; the other records
are those files with one result changed to what 2.1.332's SDK type description and writer give."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from trajsearch.actions import ran
from trajsearch.ingest.read import read_dump
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "claude-code" / ".aud33" / "interrupt-parallel-2.1.332"
STREAM = REAL / "stream-json-stdout.jsonl"
SESSION = REAL / "ab647a67-3ccc-4860-a21a-8b409b14bc9e.jsonl"
#: The CLI's words (2.1.332) for a call whose session ended while it ran, written when the session is resumed.
ENDED = ("[Tool call interrupted: the session ended before this call's result was recorded, so its outcome is "
         "unknown. Check whether it took effect before relying on it or running it again.]")
#: Its words for a call a copied session has no result of.
NOT_IN_COPY = ("[Tool call result not in this copy: this session was copied from another session before that session "
               "recorded this call's result. The call may have finished there, may still be running there, or may "
               "never have run. Check whether it took effect before relying on it or running it again.]")
#: Its words (``Aco``) for a call it closed before it started, the only words its writer gives with ``toolCallEnded`` /
#: ``call_ended`` ``not_started`` and no kind.
NOT_STARTED = "As far as this session knows, this call did not run. Call it again if it is still wanted."
REFUSED = "The user doesn't want to proceed with this tool use."


def _run(path: Path) -> Trajectory:
    (parsed,) = list(read_dump(path, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def _second_result_as(tmp_path: Path, source: Path, change: Callable[[dict[str, Any]], None]) -> Trajectory:
    """``source`` with the second call's result record (``toolu_fakeB0000``, never started) changed by ``change``."""
    lines = []
    for line in source.read_text().splitlines():
        record = json.loads(line)
        content = (record.get("message") or {}).get("content")
        if record.get("type") == "user" and isinstance(content, list) and \
                any(c.get("tool_use_id") == "toolu_fakeB0000" for c in content if isinstance(c, dict)):
            change(record)
        lines.append(json.dumps(record))
    (path := tmp_path / source.name).write_text("\n".join(lines) + "\n")
    return _run(path)


def test_stream_json_non_execution_kind_interrupted_never_finished(tmp_path: Path) -> None:
    """Bug: a stream-json result of the CLI's "[Tool call interrupted: ...]" (or "[Tool call result not in this copy:
    ...]"), ``non_execution_kind`` ``interrupted`` ("nobody knows whether it ran", the SDK's type description), read
    "not run: ...", where the session file's same result, ``toolDenialKind`` ``interrupted``, never finished. The
    real run first: the call that ran was stopped while it ran, the one after it never ran, in both files."""
    for path in (STREAM, SESSION):
        first, second = _run(path).steps
        assert first.error.startswith("interrupted by the user while it ran: this call was stopped while running")
        assert second.error.startswith(f"not run: {REFUSED}") and not ran(second)
    for words in (ENDED, NOT_IN_COPY):
        def ended(record: dict[str, Any], words: str = words) -> None:
            record["message"]["content"][0]["content"] = words
            record["tool_result_meta"] = [{"id": "toolu_fakeB0000", "non_execution_kind": "interrupted"}]
        second = _second_result_as(tmp_path, STREAM, ended).steps[1]
        assert second.error == f"tool call never finished: {words.strip('[]')}" and ran(second)


def test_a_transcripts_result_not_in_this_copy_never_finished(tmp_path: Path) -> None:
    """Bug: the CLI's "[Tool call result not in this copy: ... may have finished there, ... or may never have run]"
    (``toolDenialKind`` ``interrupted``, which the CLI's reader shows as stopped) read "not run: ..."."""
    def copied(record: dict[str, Any]) -> None:
        record["message"]["content"][0]["content"] = record["toolUseResult"] = NOT_IN_COPY
        record["toolDenialKind"] = "interrupted"
        del record["toolDenialBeforeRun"]
    second = _second_result_as(tmp_path, SESSION, copied).steps[1]
    assert second.error == f"tool call never finished: {NOT_IN_COPY.strip('[]')}"


def test_call_ended_not_started_did_not_run_in_either_file(tmp_path: Path) -> None:
    """Bug: ``call_ended: "not_started"`` with no ``non_execution_kind`` (a call closed unrun; "a host shows it as not
    run", the SDK's type description) read as the tool's own failure; then (review AUDCC33 1) the session file's
    twin of that mark, ``toolCallEnded``, of which the stream's is built, still did, so the two files of one call
    disagreed. The CLI's words for that mark are its "As far as this session knows, ..." (``Aco``)."""
    def stream(record: dict[str, Any]) -> None:
        record["message"]["content"][0]["content"] = NOT_STARTED
        record["tool_result_meta"] = [{"id": "toolu_fakeB0000", "call_ended": "not_started"}]

    def session(record: dict[str, Any]) -> None:
        record["message"]["content"][0]["content"] = NOT_STARTED
        record["toolUseResult"] = f"Error: {NOT_STARTED}"
        record["toolCallEnded"] = "not_started"
        del record["toolDenialKind"], record["toolDenialBeforeRun"]
    for source, change in ((STREAM, stream), (SESSION, session)):
        second = _second_result_as(tmp_path, source, change).steps[1]
        assert second.error == f"not run: {NOT_STARTED}" and not ran(second), source.name


def test_a_call_ended_value_it_does_not_know_is_no_proof_it_did_not_run(tmp_path: Path) -> None:
    """Bug (review AUDCC33 6): any ``call_ended`` value read "not run", where the SDK's type description says a host
    reads a value it does not know "as not known, and never as proof that the call ran" (nor that it did not)."""
    def later(record: dict[str, Any]) -> None:
        record["message"]["content"][0]["content"] = "Exit code 2\nboom"
        record["tool_result_meta"] = [{"id": "toolu_fakeB0000", "call_ended": "ended_while_running"}]
    second = _second_result_as(tmp_path, STREAM, later).steps[1]
    assert second.error == "boom (exit code 2)" and ran(second)


def test_kind_interrupted_never_finished_whatever_its_words(tmp_path: Path) -> None:
    """Bug (review AUDCC33 5): ``toolDenialKind`` ``interrupted`` ("nobody knows whether it ran"; the CLI's reader
    never calls it not run unless it also ended ``not_started``) read "not run" when its words were not the CLI's
    own of an ended call (a hook's, or the refusal's)."""
    for words in ("PostToolUse:Bash hook error: Blocked by policy", REFUSED):
        def interrupted(record: dict[str, Any], words: str = words) -> None:
            record["message"]["content"][0]["content"] = words
            record["toolDenialKind"] = "interrupted"
            del record["toolDenialBeforeRun"]
        second = _second_result_as(tmp_path, SESSION, interrupted).steps[1]
        assert second.error == f"tool call never finished: {words}" and ran(second)


def test_a_refusal_recorded_after_the_call_ran_is_no_call_not_run(tmp_path: Path) -> None:
    """Bug: a transcript's refusal marked ``toolDenialAfterRun: true`` (the CLI stamps it when the tool had been
    entered; its own reader then never counts the call as not run, but "denied") read "not run: ..."; then (review
    AUDCC33 3) "interrupted by the user while it ran", which the record does not say: it was refused once it had
    started, and its result is not the command's own (the mark of a call its harness cut off)."""
    for words in (REFUSED, "PostToolUse:Bash hook error: Blocked by policy"):
        def after_run(record: dict[str, Any], words: str = words) -> None:
            record["message"]["content"][0]["content"] = words
            record["toolDenialKind"] = "permission-rule"
            del record["toolDenialBeforeRun"]
            record["toolDenialAfterRun"] = True
        second = _second_result_as(tmp_path, SESSION, after_run).steps[1]
        assert second.error == f"tool call never finished (refused once it had started): {words}" and ran(second)
