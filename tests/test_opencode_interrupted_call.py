"""A call OpenCode cut off when its turn ended ("Tool execution aborted", ``session/processor.ts``) is interrupted,
not failed by its own error: read as the command's error, it blamed the user's Ctrl-C on the command, and the output
it printed before was lost (tests/fixtures/opencode/.aud35/README.md: a real OpenCode 1.2.5 session, trimmed)."""

from __future__ import annotations

import json
from pathlib import Path

from trajsearch.actions import INTERRUPTED, NEVER_FINISHED

from adapter_support import only

ABORTED = Path(__file__).parent / "fixtures" / "opencode" / ".aud35" / "hidden-moon.user-abort.trimmed.json"


def test_a_call_the_users_abort_cut_off_is_interrupted_with_its_output_so_far() -> None:
    run = only(ABORTED)
    [step] = run.steps
    assert step.action == "bash" and step.arguments["command"] == "bun run start"
    assert step.error == INTERRUPTED
    assert "Core // HTTP // Listening" in step.observation and "terminated by signal SIGTERM" in step.observation
    assert run.metadata["ended_by"] == "the user's interrupt (MessageAbortedError)"


def test_a_call_its_turns_own_error_cut_off_never_finished(tmp_path: Path) -> None:
    """The same cut on a turn that ended on the provider's error (the processor marks every running call alike)."""
    raw = ABORTED.read_text()
    assert '"name": "MessageAbortedError"' in raw
    turned = tmp_path / "api-error.json"
    turned.write_text(raw.replace('"name": "MessageAbortedError"', '"name": "APIError"'))
    run = only(turned)
    assert run.steps[0].error == f"{NEVER_FINISHED} (Tool execution aborted)"
    assert run.outcome.value == "infra_error"


def test_a_call_marked_interrupted_is_interrupted_whatever_its_error_says(tmp_path: Path) -> None:
    """OpenCode's 2026 processor also marks the cut call ``metadata.interrupted``: that mark, not only the English
    sentence, says the call was cut off (here the sentence reworded, the mark kept)."""
    export = json.loads(ABORTED.read_text())
    [call] = [p for m in export["messages"] for p in m["parts"] if p["type"] == "tool"]
    call["state"]["error"] = "The tool call was cancelled"
    call["state"]["metadata"]["interrupted"] = True
    marked = tmp_path / "marked.json"
    marked.write_text(json.dumps(export))
    [step] = only(marked).steps
    assert step.error == INTERRUPTED and "Core // HTTP // Listening" in step.observation


def test_a_cut_call_that_printed_nothing_has_no_observation(tmp_path: Path) -> None:
    """A cut ``task`` call printed nothing: its observation is none, not the error's sentence repeated."""
    export = json.loads(ABORTED.read_text())
    [call] = [p for m in export["messages"] for p in m["parts"] if p["type"] == "tool"]
    del call["state"]["metadata"]["output"]
    silent = tmp_path / "silent.json"
    silent.write_text(json.dumps(export))
    [step] = only(silent).steps
    assert step.error == INTERRUPTED and step.observation is None
