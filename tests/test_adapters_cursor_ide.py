"""Cursor (the IDE)'s chat store, ``state.vscdb``: refused by name with the command that writes its chats as JSON
lines, and those lines read, a run per chat. The global store is built here with Cursor's schema (hand-built rows:
the real tool-call rows found, AdamEps/urpg_app's, are unlicensed); the workspace store around a real chat of one
(tests/fixtures/cursor-ide/.aud35, README.md there says where from)."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from trajsearch.ingest.adapters.cursor_ide import _WORKSPACE_KEY
from trajsearch.ingest.detect import detect_format
from trajsearch.ingest.read import read_inputs
from trajsearch.model import Outcome

from adapter_support import run_export
from cli_support import newcomer, run_cli  # noqa: F401 - the fixture

AUD35 = Path(__file__).parent / "fixtures" / "cursor-ide" / ".aud35"
#: Cursor's tables, as its stores declare them.
KV = "CREATE TABLE {} (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"
CHAT = "5c0ae86b-7f5e-4f6f-9d6e-2b1d1b7a9a10"


def _tool(name: str, params: dict[str, Any], status: str, result: Any = None, **more: Any) -> dict[str, Any]:
    """An assistant message making a tool call, as Cursor 1.x writes it (params and result JSON as strings)."""
    return {"_v": 3, "type": 2, "text": "", "capabilityType": 15, "createdAt": "2026-06-01T10:00:05.000Z",
            "toolFormerData": {"tool": 15, "toolCallId": f"toolu_{name}", "name": name, "status": status,
                               "params": json.dumps(params),
                               **({"result": json.dumps(result)} if result is not None else {}), **more}}


BUBBLES = [
    {"_v": 3, "type": 1, "text": "make the login tests pass", "createdAt": "2026-06-01T10:00:00.000Z"},
    {"_v": 3, "type": 2, "text": "Let me run them.", "thinking": {"text": "Run the suite first."},
     "modelInfo": {"modelName": "claude-4.5-sonnet"}, "createdAt": "2026-06-01T10:00:02.000Z"},
    _tool("run_terminal_command_v2", {"command": "pytest tests/test_login.py"}, "completed",
          {"output": "E   AssertionError: 401 != 200\n1 failed", "exitCode": 1, "rejected": False}),
    _tool("read_file_v2", {"targetFile": "app/login.py"}, "completed", {"contents": "def login(): ..."}),
    _tool("edit_file_v2", {"relativeWorkspacePath": "app/login.py"}, "error",
          {"error": "Error: file is read-only"}),
    _tool("run_terminal_command_v2", {"command": "rm -rf build"}, "completed",
          {"output": "", "rejected": True}, userDecision="rejected"),
    _tool("delete_file", {"relativeWorkspacePath": "old.py"}, "cancelled"),
    _tool("run_terminal_command_v2", {"command": "npm run dev"}, "cancelled", {"output": "ready on :3000"}),
    {"_v": 3, "type": 2, "text": "The token check was inverted; fixed.", "createdAt": "2026-06-01T10:01:00.000Z"},
    {"_v": 3, "type": 1, "text": "now the signup ones", "createdAt": "2026-06-01T10:02:00.000Z"},
    _tool("run_terminal_command_v2", {"command": "pytest tests/test_signup.py"}, "loading"),
]


def _global_store(path: Path) -> None:
    """A global ``state.vscdb``: one chat of split storage, one opened and never sent, one whose value is NULL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.execute(KV.format("ItemTable"))
        db.execute(KV.format("cursorDiskKV"))
        ids = [f"b{at}" for at in range(len(BUBBLES))]
        composer = {"_v": 10, "composerId": CHAT, "name": "Fix login tests", "createdAt": 1780308000000,
                    "status": "completed", "unifiedMode": "agent",
                    "modelConfig": {"modelName": "default", "maxMode": False},
                    "fullConversationHeadersOnly": [{"bubbleId": b, "type": x["type"]} for b, x in zip(ids, BUBBLES)]}
        rows = [(f"composerData:{CHAT}", json.dumps(composer)),
                ("composerData:empty", json.dumps({"_v": 10, "composerId": "empty", "fullConversationHeadersOnly": [],
                                                   "status": "none"})),
                ("composerData:gone", None),
                # an image sent alone: no text to be its task
                ("composerData:image", json.dumps({"_v": 10, "composerId": "image",
                                                   "fullConversationHeadersOnly": [{"bubbleId": "i1", "type": 1}]})),
                ("bubbleId:image:i1", json.dumps({"_v": 3, "type": 1, "text": "", "bubbleId": "i1"})),
                # stored out of order: the headers say the chat's order
                *reversed([(f"bubbleId:{CHAT}:{b}", json.dumps({**x, "bubbleId": b})) for b, x in zip(ids, BUBBLES)])]
        db.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", rows)
        db.commit()


def test_the_global_store_is_named_with_a_command_whose_chats_are_read_with_their_calls(tmp_path: Path) -> None:
    store = tmp_path / "Cursor" / "User" / "globalStorage" / "state.vscdb"
    _global_store(store)
    with pytest.raises(ValueError, match=r"Cursor's chat store .* python3 -I -c") as no:
        detect_format(store)
    out = tmp_path / "cursor-chats.jsonl"
    run_export(str(no.value), store, "cursor-chats-globalStorage.jsonl", out)
    assert len(out.read_text().splitlines()) == 2 and detect_format(out) == "cursor-ide"  # the never-sent chat left out
    result, refused = read_inputs([out])
    assert not refused.ok and "chat image holds no user message with text" in refused.error  # the good chat kept
    run = result.trajectory
    assert run.trajectory_id == f"cursor-ide.{CHAT}" and run.task == "make the login tests pass"
    assert run.model_id == "claude-4.5-sonnet" and run.outcome is Outcome.unknown
    assert run.metadata["user_prompts"] == ["now the signup ones"] and run.metadata["title"] == "Fix login tests"
    assert run.metadata["mode"] == "agent" and run.created_at.isoformat().startswith("2026-06-01T10:00:00")
    steps = run.steps
    assert [s.action for s in steps] == ["run_terminal_command_v2", "read_file_v2", "edit_file_v2",
                                        "run_terminal_command_v2", "delete_file", "run_terminal_command_v2", "respond",
                                        "run_terminal_command_v2"]
    shell = steps[0]
    assert shell.arguments == {"command": "pytest tests/test_login.py"} and "401 != 200" in shell.observation
    assert "Run the suite first." in shell.thought and "Let me run them." in shell.thought
    assert "exit code 1" in shell.error or "exit 1" in shell.error, shell.error
    assert steps[1].observation == "def login(): ..." and steps[1].error is None
    assert "read-only" in steps[2].error
    assert steps[3].error.startswith("not run") and steps[4].error.startswith("not run")
    assert steps[5].error == "interrupted by the user" and steps[5].observation == "ready on :3000"
    assert steps[6].arguments == {"content": "The token check was inverted; fixed."}
    assert "never answered" in steps[7].error


def test_a_workspace_store_of_2024_is_read_from_its_inline_chats(tmp_path: Path) -> None:
    store = tmp_path / "workspaceStorage" / "0a1b" / "state.vscdb"
    store.parent.mkdir(parents=True)
    with closing(sqlite3.connect(store)) as db:
        db.execute(KV.format("ItemTable"))
        db.execute("INSERT INTO ItemTable VALUES (?, ?)",
                   ("composer.composerData", (AUD35 / "workspace-composer.composerData.json").read_text()))
        db.commit()
    with pytest.raises(ValueError, match=r"Cursor's chat store .* python3 -I -c") as no:
        detect_format(store)
    out = tmp_path / "cursor-chats.jsonl"
    run_export(str(no.value), store, "cursor-chats-0a1b.jsonl", out)
    [result] = read_inputs([out])  # the chat listed by its headers alone is no run here
    run = result.trajectory
    assert run.trajectory_id == "cursor-ide.cf2ead9f-6bf9-41d0-829e-a7fcae7ddb5a"
    assert run.task.startswith("create a dedicated page for the copilot icon")
    assert run.metadata["user_prompts"] == ["ion footer is not a known element"]
    assert [s.action for s in run.steps] == ["respond", "respond"]


def test_a_workspace_store_of_2025_on_exports_no_chat_and_says_where_they_are(tmp_path: Path) -> None:
    """Built as choigoyoon/Oifunding's real workspace store (Cursor, March 2025) is: ``composer.composerData`` lists
    its chats by their headers alone (``type: head``), its ``cursorDiskKV`` is empty. Its export wrote an empty file
    and said nothing before round 36."""
    store = tmp_path / "workspaceStorage" / "9f8e" / "state.vscdb"
    store.parent.mkdir(parents=True)
    heads = [{"type": "head", "composerId": f"c{n}", "name": f"chat {n}", "createdAt": 1741715620446,
              "unifiedMode": "agent"} for n in range(3)]
    with closing(sqlite3.connect(store)) as db:
        db.execute(KV.format("ItemTable"))
        db.execute(KV.format("cursorDiskKV"))
        db.execute("INSERT INTO ItemTable VALUES (?, ?)", (_WORKSPACE_KEY, json.dumps({"allComposers": heads})))
        db.commit()
    with pytest.raises(ValueError, match=r"Cursor's chat store") as no:
        detect_format(store)
    out = tmp_path / "cursor-chats.jsonl"
    done = run_export(str(no.value), store, "cursor-chats-9f8e.jsonl", out)
    assert out.read_text() == ""
    assert done.stderr.startswith("no chat written: 3 chats listed here by their headers alone; Cursor keeps their "
                                  "messages in its global store, User/globalStorage/state.vscdb"), done.stderr


def test_vs_codes_own_state_store_is_not_taken_for_cursors(tmp_path: Path) -> None:
    store = tmp_path / "state.vscdb"
    with closing(sqlite3.connect(store)) as db:
        db.execute(KV.format("ItemTable"))
        db.execute("INSERT INTO ItemTable VALUES ('workbench.panel.chat', '{}')")
        db.commit()
    with pytest.raises(ValueError) as no:
        detect_format(store)
    assert "Cursor" not in str(no.value)


def test_a_walk_names_the_store_where_it_lies(newcomer, tmp_path: Path) -> None:
    _global_store(tmp_path / "backup" / "globalStorage" / "state.vscdb")
    code, out, err = run_cli("ingest", str(tmp_path / "backup"), "--dry-run")
    assert "Cursor's chat store" in " ".join((out + err).split()) and "python3 -I -c" in out + err, out + err


def _run_printed(refusal: str, cwd: Path) -> None:
    """Run a refusal's printed export command as a user pasting it in ``cwd`` would (this Python for ``python3``)."""
    words = shlex.split(refusal.split("ingest those: ", 1)[1])
    at = words.index("-c")
    script, store, file = words[at + 1:at + 4]
    done = subprocess.run([sys.executable, *words[1:at], "-c", script, store, file.rstrip(";")], capture_output=True,
                          text=True, timeout=600, cwd=cwd)
    assert done.returncode == 0, done.stderr


def test_every_command_a_walk_prints_keeps_its_own_file(newcomer, tmp_path: Path) -> None:
    """A Cursor User folder: the global store and a workspace's listing its chats alone (since 2025); running every
    printed command, in order, must leave the global store's chats in a file of their own to ingest."""
    _global_store(tmp_path / "User" / "globalStorage" / "state.vscdb")
    workspace = tmp_path / "User" / "workspaceStorage" / "ab12" / "state.vscdb"
    workspace.parent.mkdir(parents=True)
    with closing(sqlite3.connect(workspace)) as db:
        db.execute(KV.format("ItemTable"))
        db.execute("INSERT INTO ItemTable VALUES (?, ?)", (_WORKSPACE_KEY, json.dumps(
            {"allComposers": [{"composerId": CHAT, "name": "Fix login tests", "type": "head"}]})))
        db.commit()
    code, out, err = run_cli("ingest", str(tmp_path / "User"), "--dry-run")
    refusals = [line for line in (out + err).splitlines() if "ingest those: " in line]
    assert len(refusals) == 2, out + err
    here = tmp_path / "here"
    here.mkdir()
    for refusal in refusals:
        _run_printed(refusal, here)
    runs = [r.trajectory.trajectory_id for r in read_inputs(sorted(here.glob("*.jsonl"))) if r.ok]
    assert runs == [f"cursor-ide.{CHAT}"]


def test_a_bad_row_is_refused_by_its_key_and_the_other_chats_are_read(tmp_path: Path) -> None:
    """One truncated, one non-object chat value, a truncated message and a non-UTF-8 one: each named by its key, the
    good chat read; and the export writes only the fields read (no ``blobEncryptionKey``, Cursor 2.x's secret)."""
    store = tmp_path / "globalStorage" / "state.vscdb"
    _global_store(store)
    good = {"_v": 10, "composerId": "{}", "blobEncryptionKey": "s3cret-key", "fullConversationHeadersOnly": [
        {"bubbleId": "u", "type": 1}, {"bubbleId": "bad", "type": 2}]}
    with closing(sqlite3.connect(store)) as db:
        db.executemany("INSERT INTO cursorDiskKV VALUES (?, ?)", [
            ("composerData:truncated", '{"_v": 10, "composerId": "truncated", "name": "cut'),
            ("composerData:text", json.dumps("a string")),
            ("composerData:badbubble", json.dumps({**good, "composerId": "badbubble"})),
            ("bubbleId:badbubble:u", json.dumps({"type": 1, "text": "hi", "secretField": "s3cret-bubble"})),
            ("bubbleId:badbubble:bad", '{"type": 2, "text'),
            ("composerData:blob", json.dumps({**good, "composerId": "blob"})),
            ("bubbleId:blob:u", json.dumps({"type": 1, "text": "hello"})),
            ("bubbleId:blob:bad", b"\xff\xfe\x00garbage"),
            ("composerData:deep", '{"a":' * 100_000 + "1" + "}" * 100_000)])  # deeper than Python parses (RT3 2)
        db.commit()
    with pytest.raises(ValueError) as no:
        detect_format(store)
    out = tmp_path / "chats.jsonl"
    run_export(str(no.value), store, "cursor-chats-globalStorage.jsonl", out)
    assert "s3cret" not in out.read_text() and not list(tmp_path.glob("*.part"))
    results = list(read_inputs([out]))
    assert [r.trajectory.trajectory_id for r in results if r.ok] == [f"cursor-ide.{CHAT}"]
    errors = " ".join(r.error for r in results if not r.ok)
    for key in ("composerData:truncated", "composerData:text", "bubbleId:badbubble:bad", "bubbleId:blob:bad",
                "composerData:deep"):
        assert key in errors, errors
