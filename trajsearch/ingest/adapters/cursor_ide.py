"""``cursor-ide``: Cursor (the IDE)'s own chat store, ``state.vscdb``, as the command it is named with exports it.

A module of its own, not a reader beside :mod:`cursor_cli`: the CLI prints a stream of events, the IDE keeps rows of
a key-value table, and no shape is shared (nor is a run: the CLI's sessions are not in the IDE's store).

Where it comes from (Cursor is closed source: read from real stores committed on GitHub, AdamEps/urpg_app's global
``state.vscdb`` of Cursor 1.5/1.6, September 2025, and slevin48/cursor-history's workspace one of November 2024, and
the open-source readers of it, michaeldhood/chatrxiv's ``docs/cursor/storage-reference.md`` among them). Cursor keeps
its chats ("composers") in SQLite ``state.vscdb`` files, a table ``cursorDiskKV`` (``key``, ``value``: JSON text):

- the global store, ``~/.config/Cursor/User/globalStorage/state.vscdb`` (macOS: ``~/Library/Application
  Support/Cursor/...``; Windows: ``%APPDATA%\\Cursor\\...``): a key ``composerData:<composerId>`` per chat (``_v``,
  ``composerId``, ``name``, ``createdAt`` in ms, ``status``, ``unifiedMode`` ``agent`` / ``chat`` / ``edit``,
  ``modelConfig.modelName``, ``fullConversationHeadersOnly``: ``[{bubbleId, type}]`` in the chat's order; before
  split storage, ``conversation``: the messages inline; a chat opened and never sent is ``[]``; some values are
  NULL), and a key ``bubbleId:<composerId>:<bubbleId>`` per message: ``type`` 1 (user) or 2 (assistant), ``text``,
  ``createdAt`` (ISO), ``thinking.text`` / ``allThinkingBlocks``, ``modelInfo.modelName``, and on a tool call
  ``toolFormerData``: ``name`` (``run_terminal_command_v2``, ``read_file_v2``, ``edit_file_v2``, an MCP tool's
  ``mcp_<server>_<tool>``...), ``toolCallId``, ``status`` (``loading`` while it runs, then ``completed``,
  ``cancelled`` or ``error``), ``params`` / older ``rawArgs`` (JSON as a string), ``result`` (JSON as a string; a
  command's ``{output, exitCode, rejected, notInterrupted}``), ``userDecision`` (``rejected``: the user said no);
- a workspace's store, ``workspaceStorage/<hash>/state.vscdb``: ``ItemTable``'s ``composer.composerData``,
  ``{"allComposers": [...]}``, in 2024 each chat with its ``conversation`` inline (since 2025, headers alone: the
  chats are the global store's, and its export writes none, as the command's text says; checked on
  choigoyoon/Oifunding's, March 2025). Its ``workbench.panel.aichat.view.aichat.chatdata`` (the chat panel before
  Composer, ``{"tabs": [{"bubbles": [...]}]}``) is not read.

Either is refused by name, a walk's too (:func:`session_store`: a ``cursorDiskKV`` table, or an ``ItemTable`` holding
``composer.composerData``; VS Code's own ``state.vscdb`` is neither), with a standard-library command
(:data:`EXPORT_SCRIPT`) writing each chat sent a message as a JSON line ``{"key", "composerData": {...},
"bubbles": [...]}``, its messages in the chat's order (those its headers list, as Cursor shows it: a re-run turn's
first rows, outside them, are not read), read here. Real tool-call rows (AdamEps's ``read_file``, ``codebase_search``,
``grep``) have the shape read here.

Field mapping (one chat is one run): task = the first user message's text (later ones ``metadata.user_prompts``; one
with no text, an image alone, is none); steps = each assistant message's tool call (action its ``name``, arguments
its ``params``, observation a command's ``output`` or file's ``contents``, else the result; its text before it and
its thinking the thought) and its words after the last call (``respond``). A call's error: ``status`` ``error``
(the result's decisive line), the user's ``rejected`` (not run), ``cancelled`` (interrupted where it output
something, else not run), a command's non-zero ``exitCode``,
one still ``loading`` when the store was read (never answered). trajectory_id = ``cursor-ide.<composerId>``;
a message's time its ``createdAt``, else (2025) its ``timingInfo.clientRpcSendTime``;
model_id = the first message's ``modelInfo.modelName``, else ``modelConfig.modelName`` (``default``, Cursor's
Auto, names none); created_at = ``createdAt``; outcome unknown (the store keeps no verdict); metadata: the chat's
``name`` (``title``), ``unifiedMode`` (``mode``) and ``status``. A sub-agent's chat is a composer of its own, a run
of its own.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from trajsearch.actions import INTERRUPTED, not_run
from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, NEVER_ANSWERED, PromptedSteps, as_int, as_str, command_line, error_line,
                         exit_code_error, export_command, first_time, json_arguments, prompt_list, session_trajectory,
                         SQLITE_OPEN)
from ._common import Context, RecordError, as_dict, as_list, json_object

NAME = "cursor-ide"
#: Cursor's global and workspace stores share the name (``globalStorage/state.vscdb``,
#: ``workspaceStorage/<hash>/state.vscdb``), as VS Code's do: a bare name, taken where its tables say it is Cursor's.
SESSION_STORES = ("state.vscdb",)
#: The workspace store's key holding its chats (inline in 2024; headers alone since).
_WORKSPACE_KEY = "composer.composerData"

#: The fields the reader uses, the only ones exported (a chat's and a message's hold many more, Cursor 2.x's chat
#: its ``blobEncryptionKey`` among them, which is no one's to copy).
CHAT_FIELDS = ("composerId", "name", "createdAt", "status", "unifiedMode", "modelConfig", "fullConversationHeadersOnly",
               "conversation")
BUBBLE_FIELDS = ("type", "text", "createdAt", "timingInfo", "thinking", "allThinkingBlocks", "modelInfo",
                 "toolFormerData")

#: What the export says of a workspace store of 2025 on (its chats listed, their messages in the global store), which
#: it writes nothing of: an empty file alone left its user to guess why.
_HEADERS_ONLY = ("Cursor keeps their messages in its global store, User/globalStorage/state.vscdb beside "
                 "workspaceStorage: export that one")

#: The store as JSON lines, one chat sent a message a line, ``{"key", "composerData", "bubbles"}``: the global table's
#: ``composerData:`` rows (by the key's index, not a scan holding Cursor's live database longer; each message fetched by
#: its key, in ``fullConversationHeadersOnly``'s order; else the ``conversation`` inline), then a workspace store's
#: chats with their conversation inline; NULL values left out. A value that is not JSON (or is nested deeper than Python
#: parses) is written as its text, for the reader to refuse by its key while the other chats are read (``o``). Standard
#: library alone, the database opened read-only, written chat by chat (a store is often gigabytes) to ``<file>.part``,
#: renamed once all is read (a failure leaves no file); one that wrote no chat where the store lists some (a workspace's
#: since 2025) says where their messages are (:data:`_HEADERS_ONLY`).
EXPORT_SCRIPT = (
    SQLITE_OPEN
    + 'exec("def o(v):\\n try:return None if v is None else json.loads(v)\\n except (ValueError,RecursionError):'
    'return v if isinstance(v,str) else bytes(v).decode(errors=\\"replace\\")");'
    f'f=lambda x,k:{{a:x[a] for a in k if a in x}} if isinstance(x,dict) else x;C={CHAT_FIELDS!r};B={BUBBLE_FIELDS!r};'
    't={r[0] for r in d.execute("select name from sqlite_master where type=\'table\'")};'
    'k="cursorDiskKV" in t;'
    'c=((r[0],o(r[1])) for r in d.execute("select key,value from cursorDiskKV where key>=\'composerData:\' and '
    'key<\'composerData;\'")) if k else ();'
    'w=[o(r[0]) for r in d.execute("select value from ItemTable where key=\'composer.composerData\'")] '
    'if "ItemTable" in t else [];'
    'h=sum(len(y.get("allComposers") or []) for y in w if isinstance(y,dict));'
    'v=[("composer.composerData",x) for y in w for x in (y.get("allComposers") or [] if isinstance(y,dict) else [y]) '
    'if not isinstance(x,dict) or x.get("conversation")];'
    'b=lambda i,h:o((d.execute("select value from cursorDiskKV where key=?",("bubbleId:%s:%s"%(i,isinstance(h,dict) '
    'and h.get("bubbleId")),)).fetchone() or [None])[0]);'
    's=({"key":n,"composerData":f(x,C),"bubbles":[f(b(x["composerId"],h),B) for h in x["fullConversationHeadersOnly"]] '
    'if k and x.get("fullConversationHeadersOnly") else [f(y,B) for y in x.get("conversation") or []]} '
    'if isinstance(x,dict) else {"key":n,"composerData":x,"bubbles":[]} for g in (c,v) for n,x in g '
    'if x is not None and (not isinstance(x,dict) or x.get("composerId") '
    'and (x.get("fullConversationHeadersOnly") or x.get("conversation"))));'
    'p=pathlib.Path(sys.argv[2]+".part");w=p.open("w");w.writelines(json.dumps(x)+"\\n" for x in s);w.close();'
    'z=p.stat().st_size;p.replace(sys.argv[2]);'
    'z or not h or sys.stderr.write("no chat written: %d chats listed here by their headers alone; '
    f'{_HEADERS_ONLY}\\n"%h)')


def matches(record: Any) -> bool:
    """A chat as the export writes it: its store ``key``, its ``composerData`` and its ``bubbles``."""
    return (isinstance(record, dict) and "bubbles" in record and "composerData" in record
            and (isinstance(record.get("key"), str)
                 or isinstance(as_dict(record["composerData"]).get("composerId"), str)))


def session_store(path: Path, tables: dict[str, set[str]]) -> str | None:
    """What Cursor's chat store is and how to read its chats: a ``cursorDiskKV`` table (the global store, a
    workspace's since 2025), or an ``ItemTable`` holding ``composer.composerData`` (a workspace's, 2024); None for
    any other database (VS Code's own ``state.vscdb``: an ``ItemTable`` without it)."""
    if not ({"key", "value"} <= tables.get("cursorDiskKV", set()) or _holds_composers(path, tables)):
        return None
    return ("Cursor's chat store (SQLite state.vscdb: ~/.config/Cursor/User/globalStorage/state.vscdb, on macOS "
            "~/Library/Application Support/Cursor/User/globalStorage/state.vscdb; a workspace's, under "
            "workspaceStorage/<hash>/, holds its chats only until 2025, since listing them alone, the global one "
            "holding them): write its chats as JSON lines and ingest those: "
            f"{export_command(EXPORT_SCRIPT, path, export_name(path))}")


def export_name(path: Path) -> str:
    """The file a store's export writes, named by its folder (``globalStorage`` or the workspace's hash): a walk
    names each store of a Cursor User folder, and their commands, run in turn, must not overwrite each other's."""
    return f"cursor-chats-{path.parent.name or 'store'}.jsonl"


def _holds_composers(path: Path, tables: dict[str, set[str]]) -> bool:
    """Whether a database's ``ItemTable`` holds Cursor's workspace chats (its key :data:`_WORKSPACE_KEY`)."""
    if not {"key", "value"} <= tables.get("ItemTable", set()):
        return False
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?immutable=1", uri=True)) as db:
            return db.execute("SELECT 1 FROM ItemTable WHERE key = ?", (_WORKSPACE_KEY,)).fetchone() is not None
    except sqlite3.Error:
        return False


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    chat = json_object(record)
    key = as_str(chat.get("key")) or "composerData"
    composer = chat.get("composerData")
    if not isinstance(composer, dict):
        raise RecordError(f"{key}: the store's value is not a JSON object: {_start(composer)}")
    composer_id = as_str(composer.get("composerId"))
    if not composer_id:
        raise RecordError(f"{key}: no composerId: not a chat the export of Cursor's store wrote")
    headers = as_list(composer.get("fullConversationHeadersOnly"))
    walk = _Walk()
    for at, bubble in enumerate(as_list(chat.get("bubbles"))):
        if bubble is None:  # a message whose row the store no longer holds
            continue
        if not isinstance(bubble, dict):
            place = (f"bubbleId:{composer_id}:{as_dict(headers[at]).get('bubbleId')}" if at < len(headers)
                     else f"{key} conversation[{at}]")
            raise RecordError(f"{place}: the store's value is not a message object: {_start(bubble)}")
        walk.bubble(bubble)
    walk.close()
    if walk.task is None:
        raise RecordError(f"chat {composer_id} holds no user message with text")
    model = as_str(as_dict(composer.get("modelConfig")).get("modelName"))
    metadata = {
        "composer_id": composer_id,
        "title": as_str(composer.get("name")),
        "mode": as_str(composer.get("unifiedMode")),
        "status": as_str(composer.get("status")),
        "user_prompts": prompt_list(walk.prompts) or None,
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{composer_id}", task=walk.task,
        model_id=next(iter(walk.models), None) or (model if model != "default" else None),
        steps=walk.steps, metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
        created_at=first_time(composer.get("createdAt"), *walk.times))


def _start(value: Any) -> str:
    """A bad value's start, to show what the store held."""
    return repr(value)[:80]


class _Walk(PromptedSteps):
    """The chat's messages in order: prompts, the assistant's words and thinking, its tool calls with their results."""

    def __init__(self) -> None:
        super().__init__()
        self.models: list[str] = []
        self.times: list[Any] = []

    def bubble(self, bubble: dict[str, Any]) -> None:
        at = bubble.get("createdAt") or as_dict(bubble.get("timingInfo")).get("clientRpcSendTime")
        self.times.append(at)
        text = (as_str(bubble.get("text")) or "").strip()
        if bubble.get("type") == 1:
            self.flush()
            self.prompt(text)
            return
        if model := as_str(as_dict(bubble.get("modelInfo")).get("modelName")):
            self.models.append(model)
        thinking = [as_str(as_dict(bubble.get("thinking")).get("text"))]
        thinking += [as_str(as_dict(b).get("thinking") or as_dict(b).get("text"))
                     for b in as_list(bubble.get("allThinkingBlocks"))]
        self.thought += [t for t in thinking if t and t.strip()]
        if text:
            self.say(text, at)
        tool = as_dict(bubble.get("toolFormerData"))
        if tool and (name := as_str(tool.get("name")) or (f"tool-{tool['tool']}" if "tool" in tool else None)):
            self._call(name, tool, at)

    def _call(self, name: str, tool: dict[str, Any], at: Any) -> None:
        """A tool call with its result and status (see the module's mapping)."""
        arguments = json_arguments(tool.get("params") if tool.get("params") not in (None, "", "{}")
                                   else tool.get("rawArgs"))
        raw = tool.get("result")
        result = json_arguments(raw, key="text") if isinstance(raw, str) else raw
        fields = as_dict(result)
        said = next((fields[k] for k in ("output", "contents", "error") if isinstance(fields.get(k), str)), None)
        output = said if said is not None else (raw if isinstance(raw, str) else
                                                json.dumps(raw, ensure_ascii=False) if raw is not None else None)
        step = self.open_call(None, name, arguments, at, observation=output or None)
        status = as_str(tool.get("status"))
        if tool.get("userDecision") == "rejected" or fields.get("rejected") is True:
            step["error"] = not_run("the user rejected the call")
        elif status == "cancelled":  # stopped: cut off while it ran where it said something, else before it ran
            step["error"] = INTERRUPTED if output else not_run("cancelled")
        elif status == "error":
            step["error"] = error_line(output, "the tool failed")
        elif status == "loading":
            step["error"] = NEVER_ANSWERED
        elif code := as_int(fields.get("exitCode")):
            step["error"] = exit_code_error(output, code, command_line(arguments))
