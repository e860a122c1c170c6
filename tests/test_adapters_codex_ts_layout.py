"""The TypeScript Codex CLI's session files (npm ``@openai/codex`` 0.1.25041x-0.1.2505xxx): one JSON document
``{"session": {...}, "items": [...]}`` per session, rejected as an unrecognised format until it was read (probe C,
round p44: C1, O3). The fixtures (``codex-cli/.real/probe-c44/``) are whole files the released CLI wrote; their
origin is in that folder's ``SOURCE.md``."""

from __future__ import annotations

import shutil
from pathlib import Path

from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_dump, read_inputs

PROBE_C44 = Path(__file__).parent / "fixtures" / "codex-cli" / ".real" / "probe-c44"
#: ``@openai/codex@0.1.2504172351``: four ``shell`` function calls.
TS_0417 = PROBE_C44 / "rollout-2026-12-04-3c1262d2-f2bc-4636-8c52-672a0b75e15a.json"
#: ``@openai/codex@0.1.2505291658``: ``local_shell_call`` items, an unknown tool called.
TS_0529 = PROBE_C44 / "rollout-2026-12-04-3024d4c7-16e3-4e0f-b09d-fee80138ef8e.json"
#: A Gemini CLI session: a JSON document of no Codex layout.
GEMINI_SESSION = (Path(__file__).parent / "fixtures" / "gemini-cli" / ".real" / "code-assist"
                  / "session-2026-03-30T19-51-4f2a591d.json")


def only_run(path: Path, **kwargs):
    [parsed] = list(read_dump(path, tenant="acme", **kwargs))
    assert parsed.error is None, parsed.error
    return parsed.trajectory


def test_the_typescript_cli_session_document_is_detected_and_read_as_a_codex_run() -> None:
    """The document was "unrecognised dump format" (and, forced, "only unknown lines"): it is one run, its task
    the first user message, its four shell calls steps in order (the reasoning summary the first one's thought,
    exit code 1 of the JSON ``metadata`` the second one's error), the final message a ``respond`` step; the id and
    time are the session's."""
    assert detect_format(TS_0417) == "codex-cli"
    run = only_run(TS_0417)
    assert run.trajectory_id == "codex.3c1262d2-f2bc-4636-8c52-672a0b75e15a"
    assert run.created_at.isoformat() == "2026-12-04T17:59:15.620000+00:00"
    assert run.task == "Create hello.py that prints a greeting, and read missing_config.toml if present"
    assert [s.action for s in run.steps] == ["shell", "shell", "shell", "shell", "respond"]
    assert run.steps[0].arguments == {"command": ["bash", "-lc", "ls -la"]}
    assert run.steps[0].thought == "**Listing the repo**\n\nI should look at the files first."
    assert [s.error for s in run.steps] == [
        None, "cat: missing_config.toml: No such file or directory (exit code 1)", None, None, None]
    assert run.steps[2].observation == "Done!" and run.steps[3].observation == "hello from codex\n"
    assert run.steps[4].arguments["content"].startswith("I created hello.py")
    assert only_run(TS_0417, fmt="codex-cli") == run


def test_local_shell_calls_and_the_clis_own_failure_reply_are_read() -> None:
    """The late-May TypeScript CLI answers a ``local_shell_call`` with a ``local_shell_call_output`` (its result
    was lost: no observation, exit code 1 no error), and answers a call it cannot run with plain text (``invalid
    arguments: ...``, ``no function found``): a failure, worded as a call not run."""
    run = only_run(TS_0529)
    assert run.task == "List the files here and show nope.txt"
    assert [s.action for s in run.steps] == ["local_shell", "python", "local_shell", "respond"]
    ls, python, cat, _ = run.steps
    assert ls.arguments["command"] == ["bash", "-lc", "ls"] and ls.observation == "README.md\n"
    assert ls.error is None
    assert python.error == 'not run: invalid arguments: {"code": "print(1)"}'
    assert cat.error == "cat: nope.txt: No such file or directory (exit code 1)"


def test_a_walk_of_the_typescript_clis_codex_folder_reads_its_sessions(tmp_path: Path) -> None:
    """``~/.codex`` as that CLI leaves it: its ``config.json`` and ``instructions.md`` beside ``sessions/``; the
    walk rejected the session file, now it reads both sessions and passes the rest over."""
    sessions = tmp_path / "home" / ".codex" / "sessions"
    sessions.mkdir(parents=True)
    (sessions.parent / "config.json").write_text('{\n  "model": ""\n}', encoding="utf-8")
    (sessions.parent / "instructions.md").write_text("", encoding="utf-8")
    for path in (TS_0417, TS_0529):
        shutil.copy(path, sessions / path.name)
    parsed = list(read_inputs([tmp_path / "home"], tenant="acme"))
    assert [p.error for p in parsed] == [None, None]
    assert sorted(p.trajectory.trajectory_id for p in parsed) == [
        "codex.3024d4c7-16e3-4e0f-b09d-fee80138ef8e", "codex.3c1262d2-f2bc-4636-8c52-672a0b75e15a"]


def test_a_document_forced_to_codex_that_it_cannot_read_is_named_by_its_keys() -> None:
    """Forced on a JSON document of no Codex layout, the reader said "only unknown lines"; it names the document's
    keys and the layouts it reads."""
    [parsed] = list(read_dump(GEMINI_SESSION, fmt="codex-cli", tenant="acme"))
    assert parsed.trajectory is None
    assert "one JSON document with keys lastUpdated, messages, projectHash, sessionId, startTime" in parsed.error
    assert "{session, items}" in parsed.error
