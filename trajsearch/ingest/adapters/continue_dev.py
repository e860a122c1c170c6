"""Continue (continuedev/continue: the VS Code / JetBrains coding assistant and its ``cn`` CLI): its chat sessions.

Where they come from (``core/util/history.ts`` ``HistoryManager.save``; ``core/index.d.ts`` ``Session``,
``ChatHistoryItem``, ``ToolCallState``; the CLI's ``extensions/cli/src/session.ts`` saves through the same manager):
one JSON document a session, ``~/.continue/sessions/<sessionId>.json``, ``{sessionId, title, workspaceDirectory,
history: [...], mode, chatModelTitle, usage}`` (the last three since late 2025). Each history item is
``{message: {role, content, toolCalls, toolCallId}, contextItems, editorState, promptLogs: [{modelTitle,
modelProvider, prompt, completion}], reasoning: {text, startAt}, toolCallState (2024-11 to 2025-07: one call) or
toolCallStates (since: parallel calls) [{toolCallId, toolCall: {function: {name, arguments}}, parsedArgs, status:
generating|generated|calling|done|errored|canceled, output: [ContextItem {name, description, content, status}]}]}``.
``content`` is a string or parts (``{type: "text", text}``, images). Since agent mode a ``thinking`` message
holds the model's reasoning and a ``tool`` message (``toolCallId``) the text the call returned to the model. Beside
them ``sessions.json`` indexes the sessions (``{sessionId, title, dateCreated, workspaceDirectory}``, no
message): passed over in a walk, refused named alone (``side_file``), as is a session of an empty ``history``
(the ``cn`` CLI saves one on every launch, ``session.ts``, used or not), and Continue's other files under
``.continue`` (dev data, index, config: ``side_path``). Continue before 0.8 (its Python server, 2023) wrote
``{history: {timeline: [{step: {class_name, name, description, user_input, hide}, observation}]}, session_info:
{session_id, title, date_created, workspace_directory}}`` (index keys in snake case): read too.

Field mapping:

- run = the session; task = the first user message's text (its text parts); the later user messages go to
  ``metadata.user_prompts``. The ``cn`` CLI's compaction replaces the history with its summary item (an assistant
  message, ``conversationSummary`` the same text) and what follows: no step; the task where no user message is left
  (compacted automatically mid-turn; the ``continue`` the CLI adds once that turn ends is no prompt), else kept in
  ``metadata.compaction_summary``; ``metadata.compacted``.
- steps: each tool call (``toolCallStates``, else ``toolCallState``, else the message's ``toolCalls``) is a step:
  action = the function's name, arguments = ``parsedArgs`` (else its JSON ``arguments``), thought = the
  reasoning (``thinking`` messages, ``reasoning.text``) and assistant text before it, observation = the text of
  its ``output`` items (else the ``tool`` message answering it). Its error: status ``errored`` (since 2025-04)
  or a "Tool Call Error" output item (since 2025-03): the failure's message; ``canceled``: not run when the file
  says the call never started (the CLI's refusal "Permission denied by user" or its policy's block; the GUI's
  "Tool Call Rejected" item for a pending call the user skipped; a bare one, with no output, of a tool the GUI
  can cancel only while pending), else an error (the GUI also cancels a terminal command the user stops mid-run
  and an applied edit whose diff the user rejects: it may have run); a
  terminal command's output ``status`` "Command failed with exit code N" (as any shell step's exit code is
  judged); a call still ``generated``/``calling`` when the session was saved. An assistant reply with no call is
  a ``respond`` step. Pre-0.8: a ``UserInputStep`` is a user message, a chat step
  (``SimpleChatStep``) a ``respond`` step (its ``description``), any other shown step a step of its
  ``class_name`` (a traceback its error).
- outcome: unknown (a session records no verdict).
- trajectory_id = ``continue.<sessionId>`` (the file's own, however the file is named or wherever it lies).
  model_id = ``chatModelTitle`` (the model picked for the session), else the first ``promptLogs`` ``modelTitle``
  (the title the user's config gives the model); ``metadata.model_provider`` its ``modelProvider``. created_at =
  the session's ``dateCreated`` in ``sessions.json`` beside the file named ``<sessionId>.json`` (Unix ms), else
  the first reasoning's ``startAt`` (the session file keeps no other time; pre-0.8: ``date_created``). metadata:
  ``session_id``, ``title``, ``workspace`` (``workspaceDirectory``), ``mode``, ``models`` (more than one),
  ``cost_usd`` (``usage.totalCost``), ``canceled_calls``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from trajsearch.actions import NEVER_FINISHED, not_run
from trajsearch.model import Trajectory

from ._agent_cli import (
    API_ERROR_CAUSE,
    as_str,
    command_line,
    error_line,
    exit_code_error,
    first_time,
    join_thought,
    json_arguments,
    parts_text,
    prompt_list,
    session_trajectory,
    whole_file,
)
from ._common import Context, RecordError, as_dict, as_list, clip_step_text, json_kind, loads

NAME = "continue"
#: A file is one session: the reader hands over its whole document.
WHOLE_FILE = True
split = whole_file
#: Where Continue keeps its sessions (``~/.continue/sessions``; the CLI too, or under ``CONTINUE_GLOBAL_DIR``): a
#: walk of a home or of a repository that committed its ``.continue`` reads them, and no other ``.continue`` folder
#: (the index, dev data, config).
SESSION_FOLDERS = (".continue/sessions",)
#: Searched in a file's first 64 KiB only when the file is too big to parse whole for detection (over 64 MiB): the
#: keys ``HistoryManager.save`` writes first, in its order (since 2024-11, 36fc4a5da0), then the history list; or,
#: before, ``JSON.stringify(session)``'s ``history`` first, its first item a message.
SIGNATURE = re.compile(r'^\s*\{\s*(?:"sessionId"\s*:\s*"[^"]*"\s*,\s*"title"\s*:\s*"(?:[^"\\]|\\.)*"\s*,'
                       r'\s*"workspaceDirectory"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"history"\s*:\s*\['
                       r'|"history"\s*:\s*\[\s*\{\s*"message"\s*:\s*\{\s*"role")')
_SESSIONS = "~/.continue/sessions/<sessionId>.json"
#: The index beside the sessions, which holds their start (``dateCreated``).
_INDEX_FILE = "sessions.json"
#: A session file's name, its ``sessionId`` (a UUID), the key of its entry in the index.
_SESSION_NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
_INDEX = f"{_SESSIONS}, beside it, each read"
_HOME = ".continue"
#: What Continue keeps in its home's folders other than ``sessions`` (none holds a session).
_HOME_FOLDERS = {"dev_data": "dev data (its usage events)", "index": "codebase index", "logs": "logs"}
#: Statuses of a call Continue saved before it ended (the session closed or was saved mid-call).
_UNFINISHED = {"generating", "generated", "calling"}
_EXIT = re.compile(r"Command failed with exit code (\d+)")
#: The output item the GUI writes for a call that failed (since 2025-03; ``callToolById.ts``), around the message.
_CALL_ERROR = "Tool Call Error"
_FAILED_WITH = re.compile(r"failed with the message:\s*(.*?)\s*(?:Please try something else|$)", re.S)
#: A canceled call's error when the file says no more. Only two kinds of tool can be canceled after they started: a
#: running terminal command the user stops (``LumpToolbar.tsx``) and an edit whose applied diff the user rejects
#: (``AcceptRejectDiffButtons.tsx``; the tools ``callClientTool.ts`` applies, and ``search_and_replace_in_file``
#: until 2025-08; named ``builtin_<name>`` in 2025's first half): a bare ``canceled`` of one of these may have run.
#: Every other cancel hits a call still pending (a new message sent, ``Chat.tsx``; the skip button,
#: ``PendingToolCallToolbar``; a dangling ``generated`` call, ``sessionSlice.ts``): that call never ran.
_CANCELED = "tool call canceled"
_CANCELED_BY_USER = f"{_CANCELED} (the user rejected it or stopped the session)"
_CANCELED_AFTER_START = frozenset({"run_terminal_command", "edit_existing_file", "single_find_and_replace",
                                   "multi_edit", "search_and_replace_in_file"})
#: The outputs a canceled call gets only when it never ran: the CLI's refusal before running it (its permission
#: check, ``streamChatResponse.helpers.ts``) and the GUI's "Tool Call Rejected" item for a pending call the user
#: skipped (``redux/thunks/cancelToolCall.ts``, with ``continueAfterToolRejection``).
_REFUSED = ("Permission denied by user", "Command blocked by security policy")
_REJECTED = "Tool Call Rejected"


def matches(record: Any) -> bool:
    """A session: its ``history`` list beside ``sessionId`` and ``workspaceDirectory``; or a pre-0.8 session
    (``session_info`` and ``history.timeline``)."""
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("history"), list):
        return isinstance(record.get("sessionId"), str) and "workspaceDirectory" in record
    return isinstance(record.get("session_info"), dict) and isinstance(as_dict(record.get("history")).get("timeline"),
                                                                         list)


def side_file(record: Any) -> str | None:
    """``sessions.json``: the index of the sessions (an entry each, no message), in either version's keys; or a
    session whose ``history`` is empty: the ``cn`` CLI saves a session on every launch (``createSession(history:
    [])``, then ``saveSession()``), asked something or not."""
    if not isinstance(record, dict):
        return None
    if "history" not in record and (
            {"sessionId", "dateCreated", "workspaceDirectory"} <= record.keys()
            or {"session_id", "date_created", "workspace_directory"} <= record.keys()):
        return (f"Continue's index of its sessions (sessions.json: titles and dates, no message); the sessions are "
                f"{_INDEX}")
    if record.get("history") == [] and matches(record):
        return "a Continue session opened and never used (history empty)"
    return None


def side_path(path: Path, fmt: str | None) -> str | None:
    """One of Continue's own files under its home (``~/.continue``) outside ``sessions/``, which no format reads:
    its dev data, index, config, auth. Naming the home is what a Continue user types; only ``sessions/`` holds runs."""
    parts = path.absolute().parts
    if fmt is not None or path.suffix not in {".json", ".jsonl"} or _HOME not in parts[:-1]:
        return None
    below = parts[max(i for i, part in enumerate(parts[:-1]) if part == _HOME) + 1:]  # the file, folders before it
    if below[0] == "sessions":
        return None
    what = _HOME_FOLDERS.get(below[0], "config and state") if len(below) > 1 else "config and state"
    return f"Continue's own {what}, no session: those are in {_SESSIONS}"


def read_with_value(path: Path) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a session's start is its own entry's ``dateCreated`` in the
    index beside it (:func:`_created`), so an ingest's checkpoint reads a session again when that entry changed (one
    copied in after the sessions gives them their start), not when another did (Continue rewrites the index on every
    save: the whole file would re-read every session beside it after each new one). Of a ``<sessionId>.json`` alone:
    a stat of the index, parsed once while it stays the same; None where it holds no entry of the session."""
    created = _own_created(path)
    return None if created is None else repr(created)


def _own_created(path: Path) -> Any:
    """The ``dateCreated`` of a session file's own entry in the index beside it, by its name as Continue names it
    (``<sessionId>.json``), else None: the one lookup the reader and the checkpoint (:func:`read_with_value`, which
    sees the name, not the record) share, so a run is never timed by an entry the checkpoint does not watch (RT1
    finding 3: a renamed copy is timed by its own reasoning, as it is with no index beside it)."""
    if path.suffix != ".json" or not _SESSION_NAME.fullmatch(path.stem):
        return None
    return _created(path.with_name(_INDEX_FILE)).get(path.stem)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if not matches(record):
        raise RecordError(f"not a Continue session (~/.continue/sessions/<sessionId>.json is a JSON object with "
                          f"sessionId, workspaceDirectory and a history list; found {json_kind(record)})")
    if not isinstance(record.get("history"), list):
        return _server_session(record, ctx)
    items = [as_dict(i) for i in record["history"]]
    prompts, summary = _prompts(items)
    if not prompts and not summary:
        raise RecordError(f"history: no user message with text ({len(items)} items): " + (
            "an item's conversationSummary is no cn CLI compaction (an assistant message of the same text) to stand "
            "for the task" if any("conversationSummary" in i for i in items) else
            "the session was opened and never asked anything"))
    session = as_str(record.get("sessionId"))
    if not session:
        raise RecordError("no sessionId: every Continue session file names its session")
    logs = [as_dict(log) for i in items for log in as_list(i.get("promptLogs"))]
    models = sorted({m for log in logs if (m := as_str(log.get("modelTitle")))})
    model = as_str(record.get("chatModelTitle")) or next((m for log in logs if (m := as_str(log.get("modelTitle")))),
                                                          None)
    steps, canceled = _steps(items)
    metadata = {
        "session_id": session,
        "title": as_str(record.get("title")),
        "workspace": as_str(record.get("workspaceDirectory")) or None,
        "mode": as_str(record.get("mode")),
        "model_provider": next((p for log in logs if (p := as_str(log.get("modelProvider")))), None),
        "models": models if len(models) > 1 else None,
        "cost_usd": cost if isinstance(cost := as_dict(record.get("usage")).get("totalCost"), (int, float))
        and not isinstance(cost, bool) and cost else None,
        "user_prompts": prompt_list(prompts[1:]) or None,
        "canceled_calls": canceled or None,
        "compacted": True if summary else None,
        "compaction_summary": clip_step_text(summary) if summary and prompts else None,  # else it is the task
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{session}", task=prompts[0] if prompts else summary, model_id=model, steps=steps,
        metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
        created_at=first_time(_number(_own_created(ctx.source)),
                              *(as_dict(i.get("reasoning")).get("startAt") for i in items)))


def _created(index: Path) -> dict[str, Any]:
    """Each session's ``dateCreated`` in the ``sessions.json`` beside it (Unix ms as a string): the session file keeps
    no time but a reasoning model's. Read once a folder (a walk reads its sessions one by one)."""
    try:
        stat = index.stat()
    except OSError:
        return {}
    return _index_dates(index, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _index_dates(index: Path, _mtime: int, _size: int) -> dict[str, Any]:
    try:
        entries = loads(index.read_bytes())
    except (OSError, ValueError):
        return {}
    return {e["sessionId"]: e.get("dateCreated") for e in as_list(entries)
            if isinstance(e, dict) and isinstance(e.get("sessionId"), str)}


#: The user message the cn CLI adds itself once a turn in which it compacted the history ends, to run on
#: (``extensions/cli/src/stream/streamChatResponse.ts`` ``handleAutoContinuation``): no prompt of the user's.
_AUTO_CONTINUATION = "continue"


def _prompts(items: list[dict[str, Any]]) -> tuple[list[str], str | None]:
    """The user messages' texts, and the summary of the cn CLI's compaction if the history holds one (else None).
    The ``continue`` the CLI adds next after a compaction is no prompt: a finished auto-compacted session would
    otherwise have it for its task, where the summary holds what was asked."""
    prompts: list[str] = []
    summary = None
    after_compaction = False
    for item in items:
        message = as_dict(item.get("message"))
        if compaction := _compaction_summary(item):
            summary, after_compaction = compaction, True
        elif message.get("role") == "user" and (text := parts_text(message.get("content")).strip()):
            if not (after_compaction and text == _AUTO_CONTINUATION):
                prompts.append(text)
            after_compaction = False
    return prompts, summary


def _compaction_summary(item: dict[str, Any]) -> str | None:
    """The summary of the ``cn`` CLI's compaction item, else None. Compacting (``/compact``, or automatically
    mid-turn when the context fills: ``extensions/cli/src/compaction.ts``) replaces the history, saved so, with
    ``{message: {role: "assistant", content: <summary>}, conversationSummary: <summary>}`` (its calls and replies
    after it): the prompts before it are gone. The GUI keeps the history and sets ``conversationSummary`` on a
    message it keeps (``core/util/conversationCompaction.ts``): that message stays what it is."""
    summary = item.get("conversationSummary")
    if not isinstance(summary, str) or not summary.strip():
        return None
    message = as_dict(item.get("message"))
    return summary.strip() if message.get("role") == "assistant" and parts_text(
        message.get("content")).strip() == summary.strip() else None


def _steps(items: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The steps of a session's history, in order (its calls and its replies without one), and how many calls were
    canceled."""
    answered = {as_str(m.get("toolCallId")): parts_text(m.get("content"))
                for i in items if (m := as_dict(i.get("message"))).get("role") == "tool"}
    steps: list[dict[str, Any]] = []
    thought: list[str] = []
    canceled = 0
    for item in items:
        message = as_dict(item.get("message"))
        role = message.get("role")
        if role == "user":
            thought = []
        elif role == "thinking":
            thought.append(parts_text(message.get("content")))
        elif role == "assistant" and not _compaction_summary(item):  # the summary is no reply of the run
            thought.append(as_str(as_dict(item.get("reasoning")).get("text")) or "")
            text = parts_text(message.get("content")).strip()
            calls = _calls(item, message)
            if not calls:
                if text:
                    steps.append({"thought": join_thought(thought), "action": "respond",
                                  "arguments": {"content": text}})
                    thought = []
                continue
            thought.append(text)
            for call in calls:
                steps.append(_call_step(call, join_thought(thought), answered))
                canceled += call.get("status") == "canceled"
                thought = []
    return steps, canceled


def _calls(item: dict[str, Any], message: dict[str, Any]) -> list[dict[str, Any]]:
    """An assistant item's calls as ``ToolCallState``s: ``toolCallStates``, the one ``toolCallState`` of
    2024-11 to 2025-07, else the message's bare ``toolCalls`` (no status, no output)."""
    if states := as_list(item.get("toolCallStates")):
        return [as_dict(s) for s in states]
    if isinstance(state := item.get("toolCallState"), dict):
        return [state]
    return [{"toolCallId": as_dict(c).get("id"), "toolCall": as_dict(c)} for c in as_list(message.get("toolCalls"))]


def _call_step(state: dict[str, Any], thought: str | None, answered: dict[str | None, str]) -> dict[str, Any]:
    function = as_dict(as_dict(state.get("toolCall")).get("function"))
    arguments = state.get("parsedArgs")
    if not isinstance(arguments, dict) or (not arguments and function.get("arguments")):
        arguments = json_arguments(function.get("arguments") or "{}", key="arguments")
    output = [as_dict(o) for o in as_list(state.get("output"))]
    text = "\n".join(c for o in output if (c := as_str(o.get("content")))) or None
    if text is None:
        text = answered.get(as_str(state.get("toolCallId")) or as_str(as_dict(state.get("toolCall")).get("id")))
    status, name = state.get("status"), as_str(function.get("name")) or "tool"
    error = None
    if status == "errored" or any(o.get("name") == _CALL_ERROR for o in output):
        said = _FAILED_WITH.search(text or "")
        error = error_line(said[1] if said else text, "the tool call errored")
    elif status == "canceled" and any(o.get("name") == _REJECTED for o in output):
        error = not_run(f"{_CANCELED}: the user skipped it")
    elif status == "canceled" and (refusal := (text or "").strip()) in _REFUSED:
        error = not_run(f"{_CANCELED}: {refusal}")
    elif status == "canceled" and not text and name.removeprefix("builtin_") not in _CANCELED_AFTER_START:
        error = not_run(f"{_CANCELED} before it ran (the user skipped it or moved on)")
    elif status == "canceled":  # may have run: a terminal command stopped, an applied edit's diff rejected
        error = f"{_CANCELED}: {error_line(text, text)}" if text else _CANCELED_BY_USER
    elif status in _UNFINISHED:
        error = f"{NEVER_FINISHED} (status {status} when the session was saved)"
    elif failed := next((m for o in output if (m := _EXIT.fullmatch(as_str(o.get("status")) or ""))), None):
        error = exit_code_error(text, int(failed[1]), command_line(arguments))
    return {"thought": thought, "action": name, "arguments": arguments, "observation": text, "error": error}


def _server_session(record: dict[str, Any], ctx: Context) -> Trajectory:
    """A session of Continue before 0.8 (its Python server): its timeline's steps."""
    info = as_dict(record.get("session_info"))
    prompts, steps = [], []
    for node in (as_dict(n) for n in as_list(as_dict(record.get("history")).get("timeline"))):
        step, observation = as_dict(node.get("step")), node.get("observation")
        kind, said = as_str(step.get("class_name")) or "Step", (as_str(step.get("description")) or "").strip()
        if kind == "UserInputStep":
            if text := (as_str(step.get("user_input")) or "").strip():
                prompts.append(text)
        elif step.get("hide") is not True and node.get("deleted") is not True and (said or observation):
            if kind == "SimpleChatStep":
                steps.append({"action": "respond", "arguments": {"content": said}})
                continue
            trace = as_str(as_dict(observation).get("traceback"))
            steps.append({"action": kind, "arguments": {"name": as_str(step.get("name"))}, "observation": said or None,
                          "error": error_line(trace, trace) if trace else None})
    if not prompts:
        raise RecordError("history.timeline: no UserInputStep with text: the session was opened and never asked "
                          "anything")
    session = as_str(info.get("session_id"))
    if not session:
        raise RecordError("session_info: no session_id")
    metadata = {"session_id": session, "title": as_str(info.get("title")),
                "workspace": as_str(info.get("workspace_directory")) or None,
                "user_prompts": prompt_list(prompts[1:]) or None}
    return session_trajectory(
        ctx, run_id=f"{NAME}.{session}", task=prompts[0], model_id=None, steps=steps, metadata=metadata,
        last_error=None, error_cause=API_ERROR_CAUSE, created_at=first_time(_number(info.get("date_created"))))


def _number(value: Any) -> float | None:
    """A time written as a string of a number: ``date_created`` Unix seconds (``"1697509954.2427506"``),
    ``dateCreated`` Unix ms (``"1772464780580"``)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None
