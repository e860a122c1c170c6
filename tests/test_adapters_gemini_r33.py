"""Gemini CLI, round 33 (GEM33): the rest of the CLI's own files in ``~/.gemini`` (a walk of it through the CLI), and
a skill activated by its slash command, which the CLI records twice. Shapes from google-gemini/gemini-cli's source
(``config/storage.ts`` and the files it names; ``ui/hooks/useGeminiStream.ts``, ``core/geminiChat.ts``,
``services/chatRecordingService.ts``); the real ``~/.gemini`` files and session are round 32's (their ``README.md``s)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_support import newcomer, own_lines, run_cli  # noqa: F401  (newcomer: a fixture)
from trajsearch.ingest.read import read_inputs

FIXTURES = Path(__file__).parent / "fixtures" / "gemini-cli"
#: Files the CLI writes or reads in ``~/.gemini`` that round 32 did not pass over, by their place, as its source
#: writes them: a walk rejected the two JSON ones (exit 3) and named the others as files passed over.
WRITTEN = {
    "user_id": "0b5c8a9e-4f0c-4a53-9d1e-2f6f1f0f6a11",  # 0.1.x, utils/user_id.ts
    "commands/git/commit.toml": 'description = "Commit"\nprompt = "Write a commit message for {{args}}"\n',
    "policies/auto-saved.toml": '[[rule]]\ntoolName = "run_shell_command"\ndecision = "allow"\npriority = 100\n',
    "skills/code-review/SKILL.md": "---\nname: code-review\ndescription: Review code\n---\nReview the diff.\n",
    "skills/code-review/scripts/config.json": json.dumps({"strict": True}),
    "agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews\n---\nYou review code.\n",
    "tmp/bin/rg": "\x7fELF",
    "tmp/proj/shell_history": "ls\ngit status\n",
    "tmp/proj/tool-outputs/session-c718ec95/read_file_1.txt": "def add(a, b):\n",
    "tmp/proj/logs/session-c718ec95.jsonl": json.dumps({"type": "console", "payload": {"type": "log", "content": "hi"},
                                                        "timestamp": 1796640561675}) + "\n",
    "tmp/proj/tracker/a1b2c3.json": json.dumps({"id": "a1b2c3", "title": "fix add", "description": "", "type": "task",
                                                "status": "open", "dependencies": []}),
    "tmp/proj/c718ec95-3a57-4a07-87cb-537b98ef7ed2/tracker/d4e5f6.json": json.dumps(
        {"id": "d4e5f6", "title": "test add", "description": "", "type": "task", "status": "closed",
         "dependencies": ["a1b2c3"]}),
}


def test_a_walk_of_the_gemini_folder_reads_its_session_and_passes_over_the_rest(tmp_path: Path, newcomer) -> None:
    """Bug: ``trajsearch ingest ~/.gemini`` exited 3 rejecting a session's activity log (``tmp/<project>/logs/
    session-<id>.jsonl``) and the task tracker's tasks as unrecognised dumps, and named the custom commands,
    policies, the usage id, the downloaded ripgrep and the shell history as files passed over: the CLI's own, no
    runs, passed over unsaid by their place."""
    gemini = tmp_path / "u" / ".gemini"
    shutil.copytree(FIXTURES / ".small2" / "dot-gemini", gemini)
    for name, content in WRITTEN.items():
        (gemini / name).parent.mkdir(parents=True, exist_ok=True)
        (gemini / name).write_text(content)
    chats = gemini / "tmp" / "proj" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(FIXTURES / ".aud32" / "session-2026-12-07T10-49-c718ec95.jsonl", chats)
    code, out, err = run_cli("ingest", "--dry-run", str(gemini))
    assert code == 0, out + err
    assert "runs 1; rejected 0" in out and "first task fix add in app.py" in out
    assert "rejected" not in err and "passed over" not in err, err
    assert [line for line in own_lines(out) if "format ?" in line] == []


def test_the_sessions_of_a_project_named_bin_are_read_beside_the_downloaded_ripgrep(tmp_path: Path, newcomer) -> None:
    """The CLI names a project's temp folder after the project's (``~/bin`` -> ``tmp/bin``), the folder it once
    downloaded ripgrep to: only ``tmp/bin/rg`` is the CLI's tool; the project's chats there are runs (review GEM33:
    a ``tmp/bin/**`` place passed them over silently)."""
    gemini = tmp_path / "u" / ".gemini"
    (gemini / "tmp" / "bin" / "chats").mkdir(parents=True)
    (gemini / "tmp" / "bin" / "rg").write_text("\x7fELF")
    shutil.copy(FIXTURES / ".aud32" / "session-2026-12-07T10-49-c718ec95.jsonl", gemini / "tmp" / "bin" / "chats")
    code, out, err = run_cli("ingest", "--dry-run", str(gemini))
    assert code == 0, out + err
    assert "runs 1; rejected 0" in out and "first task fix add in app.py" in out
    assert "passed over" not in err, err


def _skill_session(folder: Path) -> Path:
    """A session whose user typed ``/code-review check app.py`` as its first command, as 0.6x records it: the
    completed call in ``toolCalls`` (``recordCompletedToolCalls``, a new ``gemini`` message after the context), then
    the CLI's own copy of it for the model's history (``addHistory``: a ``gemini`` message of the ``functionCall``
    alone, no id, no model) and its response (a ``user`` message), then the words typed after the command."""
    call = "activate_skill_1796640561675_0"
    output = {"output": '<activated_skill name="code-review">Review the diff.</activated_skill>'}
    response = [{"functionResponse": {"id": call, "name": "activate_skill", "response": output}}]
    tokens = {"input": 10, "output": 5, "cached": 0, "thoughts": 0, "tool": 0, "total": 15}
    records = [
        {"sessionId": "5c111a00-1111-4a07-87cb-537b98ef7ed2", "projectHash": "71a6ba62", "kind": "main",
         "startTime": "2026-12-07T14:00:00.000Z", "lastUpdated": "2026-12-07T14:00:00.000Z"},
        {"id": "u0", "timestamp": "2026-12-07T14:00:00.100Z", "type": "user",
         "content": [{"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"}]},
        {"id": "g1", "timestamp": "2026-12-07T14:00:05.000Z", "type": "gemini", "content": "", "thoughts": [],
         "model": "gemini-2.5-flash", "toolCalls": [
             {"id": call, "name": "activate_skill", "args": {"name": "code-review"}, "result": response,
              "status": "success", "timestamp": "2026-12-07T14:00:05.000Z",
              "resultDisplay": "Skill **code-review** activated.", "displayName": "Activate Skill",
              "description": '"code-review"', "renderOutputAsMarkdown": True}]},
        {"id": "s1", "timestamp": "2026-12-07T14:00:05.100Z", "type": "gemini",
         "content": [{"functionCall": {"name": "activate_skill", "args": {"name": "code-review"}}}]},
        {"id": "s2", "timestamp": "2026-12-07T14:00:05.200Z", "type": "user", "content": response},
        {"id": "u1", "timestamp": "2026-12-07T14:00:05.300Z", "type": "user", "content": [{"text": "check app.py"}]},
        {"id": "g2", "timestamp": "2026-12-07T14:00:07.000Z", "type": "gemini", "content": "add is fine.",
         "thoughts": [], "tokens": tokens, "model": "gemini-2.5-flash"},
    ]
    path = folder / "session-2026-12-07T14-00-5c111a00.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_skill_activated_by_its_command_is_one_step(tmp_path: Path) -> None:
    """Bug: the CLI's copy of a client-initiated ``activate_skill`` call for the model's history (id-less, or a
    ``synth_`` id of its own, never the call's) was read as a second call, with no observation (its response is
    the first's): every skill typed as a command counted twice."""
    [run] = read_inputs([_skill_session(tmp_path)], tenant="acme")
    assert run.ok, run.error
    steps = run.trajectory.steps
    assert [s.action for s in steps] == ["activate_skill", "respond"]
    assert steps[0].arguments == {"name": "code-review"}
    assert steps[0].observation == '<activated_skill name="code-review">Review the diff.</activated_skill>'
    assert run.trajectory.task == "check app.py"
