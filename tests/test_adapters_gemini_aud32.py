"""Gemini CLI 0.61 recordings (round 32's audit): since 0.44 the text the CLI adds to the history by itself -- the
IDE's editor context, a shell-mode command's report -- is recorded as a ``user`` message. The fixtures
(``gemini-cli/.aud32/``) are written by the released CLI, whole; their origin is in its ``README.md``."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajsearch.ingest.detect import SideFile
from trajsearch.ingest.read import detect_format, read_dump
from trajsearch.model import Trajectory

REAL = Path(__file__).parent / "fixtures" / "gemini-cli" / ".aud32"


def _run(name: str) -> Trajectory:
    (parsed,) = list(read_dump(REAL / name, tenant="acme"))
    assert parsed.trajectory is not None, parsed.error
    return parsed.trajectory


def test_the_editor_context_before_a_prompt_is_not_the_task() -> None:
    """Bug: in VS Code the CLI records "Here is the user's editor context as a JSON object. ..." before each prompt;
    it was the task, the prompt typed after it a later one, and the `!ls` run after that a prompt too."""
    run = _run("session-2026-12-07T10-49-c718ec95.jsonl")
    assert run.task == "fix add in app.py"
    assert run.metadata.get("user_prompts") is None
    assert [s.action for s in run.steps] == ["read_file", "respond"]


def test_a_session_of_shell_mode_commands_alone_is_passed_over_as_no_run() -> None:
    """Bug: a session of one `!ls` had the CLI's report of it ("I ran the following shell command: ...") for its
    task, then (round 32's first fix) the command: a run of no step, though no prompt was sent and the model never
    replied. It holds no run, as Claude Code's session of slash commands only, and says which commands it holds."""
    with pytest.raises(SideFile, match=r"shell-mode commands only \(!ls: no prompt sent, no model reply\)"):
        detect_format(REAL / "session-2026-12-07T10-50-0f1a87c7.jsonl")


def test_the_recording_a_resume_leaves_with_the_context_alone_is_passed_over() -> None:
    """Bug: `gemini -r latest -p ...` starts a recording of its own (its header and the CLI's `<session_context>`,
    the session's id) before it goes on writing the session's file, and leaves it so; a walk of the chats folder
    rejected it ("no user prompt in this Gemini CLI recording") beside the session's run. Any session started and
    left with nothing asked leaves the same file."""
    folder = REAL / "resumed"
    with pytest.raises(SideFile, match=r"no run in this file: a Gemini CLI recording with nothing asked \(the CLI's "
                                       r"context alone: a session started or resumed and left\)"):
        detect_format(folder / "session-2026-12-07T10-57-ea2dcbb6.jsonl")
    (parsed,) = list(read_dump(folder, tenant="acme"))  # walked: the session's run, nothing rejected
    assert parsed.error is None and parsed.trajectory.metadata["user_prompts"] == ["and now say hi"]


def test_a_recording_cut_short_after_the_context_keeps_its_malformed_line_error() -> None:
    """Bug: the leftover recording's header and context, then the user's first prompt cut short (a copy taken while
    the CLI wrote it): the hook, asked of what was left, passed the file over as one of nothing asked, and the
    malformed line was never told. It is the rejection it was: the line cut short, and no prompt."""
    errors = [str(parsed) for parsed in read_dump(REAL / "truncated", tenant="acme")]
    assert any("line 3: error: malformed JSON: cut short" in e for e in errors), errors
