"""``crush``: sessions of Crush (charmbracelet/crush), the terminal coding agent, as JSON lines written from its
SQLite store.

Source read: charmbracelet/crush at 37f36e9 (2026-08): ``internal/db/migrations`` (the tables),
``internal/message/message.go`` (``marshalParts``: a message's ``parts`` column), ``internal/message/content.go`` (the
part types), ``internal/agent/tools/bash.go`` (``formatOutput``: how a command's exit code is written),
``internal/agent/coordinator.go`` (a sub-agent's session). Real stores: ``.crush/crush.db`` committed in 68 GitHub
repositories of the search index (the fixture is one of them, trimmed: ``tests/fixtures/crush/.newcli30/README.md``;
a session whose prompt is a paste: ``.audkrfix/README.md``).

Crush keeps a project's sessions in ``<project>/.crush/crush.db`` (SQLite: ``sessions``, ``messages``, ``files``;
Crush's predecessor opencode-ai/opencode, in Go, kept the same tables in ``.opencode/opencode.db``). The database is
not read: detection names it (``session_store``) with a standard-library command (``EXPORT_SCRIPT``) writing each
session as a JSON line, its row (``id``, ``parent_session_id``, ``title``, ``message_count``, ``prompt_tokens``,
``completion_tokens``, ``cost``, ``created_at``, ``summary_message_id``, ...) with its ``messages``: each message's row
(``id``, ``role``: ``user`` | ``assistant`` | ``tool``, ``model``, ``provider``, ``created_at``, ...) with its
``parts`` decoded, each ``{"type", "data"}``:
- ``text`` (``text``): a user's prompt, or what the model said; ``reasoning`` (``thinking``): its reasoning;
- ``tool_call`` (``id``, ``name``: ``bash``, ``view``, ``edit``, ``multiedit``, ``write``, ``grep``, ``agent`` ...,
  ``input``: its arguments as JSON text): a step;
- ``tool_result`` (``tool_call_id``, ``content``, ``is_error``), in the ``tool`` message after: the step's
  observation. The step failed when ``is_error`` is true (the tool refused: its content) or, for a command, when its
  output ends ``Exit code N`` (``formatOutput``: stdout, stderr, ``Exit code N``, then ``<cwd>...</cwd>``; Go's
  ``exit status N`` before it when the command wrote no stderr) or ``Command was aborted before completion``;
- ``finish`` (``reason``: ``end_turn``, ``tool_use``, ``stop``, ``canceled``, ``max_tokens``, ``error`` with
  ``message`` and ``details``, ``content_filter``): ``error`` is the provider refusing the turn, ``content_filter``
  (Crush of July 2026 on) its safety classifier stopping the model (a refusal: the agent's failure);
- ``binary`` (``Path``, ``MIMEType``, ``Data``: the bytes, base64 as Go writes ``[]byte``): an attachment. A text
  one (``text/*``: a file attached, or since January 2026, #1800, a long paste saved as ``paste_N.txt``, often with
  the typed text empty) is part of the prompt: ``Message.ToAIMessage`` sends it after the typed text, each in a
  ``<file path='...'>`` element (``PromptWithTextAttachments``); it is read so, a paste as the words pasted;
- ``image_url``, ``binary`` of other types (an image), ``shell_command`` (the user's own ``!`` command): no step.

Mapping: one session is one run, ``crush.<session id>`` (a UUID; a sub-agent's session is named by the id of the
``agent`` call that spawned it, since October 2025 ``<its message id>$$<call id>``, ``CreateAgentToolSessionID``);
task = the first user prompt, its text attachments with it (later ones ``metadata.user_prompts``; not the one
Crush re-queues itself after compacting a turn, ``_CONTINUED``); steps = the tool
calls with their results, and the model's text with no call after it a ``respond`` step; a call the session ends
without an answer to failed (never answered; canceled where its turn was); model_id = the last assistant message's
``model`` (``provider`` in metadata); outcome unknown (a session holds no verdict) unless it ended on a ``finish``
of reason ``error`` with no work after it (the provider's: ``infra_error``; out of context: the agent's failure); a
session with a ``parent_session_id`` is a sub-agent's (``metadata.is_subagent``, ``metadata.parent_session_id``);
the summary Crush writes when it compacts a session (``summary_message_id``, ``is_summary_message``) is no step;
created_at = the session's ``created_at``. ``crush run``'s output (the answer as plain text) records no run.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

from trajsearch.actions import not_run
from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, SessionSteps, as_str, command_line, error_line, exit_code_error,
                         export_command, first_time, iso_time, json_arguments, prompt_list, session_trajectory,
                         sqlite_export)
from ._common import Context, RecordError, as_dict, as_list

NAME = "crush"
#: Crush's session store (``<project>/.crush/crush.db``): a walk that finds no dump hands it in for detection to name,
#: with how to export its sessions (``session_store``); beside dumps, its note names it with that command. A
#: ``crush.db`` elsewhere is told by its tables.
SESSION_STORES = (".crush/crush.db",)

#: Crush's SQLite store as JSON lines of sessions (every column of a session's row, and its ``messages``: every
#: column of each message's row, ``parts`` decoded), with Python's standard library alone: the database opened
#: read-only (a wrong path fails, where sqlite3 would make an empty one there), sessions and messages in the order
#: Crush wrote them (``created_at``, in seconds, then insertion), a session with no message left out, the output
#: written once all is read. Arguments: the database, the file to write.
EXPORT_SCRIPT = sqlite_export(
    'd.row_factory=sqlite3.Row;s=[{**dict(r),"messages":m} for r in d.execute("select * from sessions order '
    'by created_at,rowid") for m in [[{**dict(x),"parts":json.loads(x["parts"])} for x in d.execute("select '
    '* from messages where session_id=? order by created_at,rowid",(r["id"],))]] if m]')

#: The end of a command's output as ``formatOutput`` writes it: ``Exit code N`` (after Go's ``exit status N`` when
#: the command wrote no stderr) or the abort note, then the working directory Crush adds.
_SHELL_END = re.compile(r"(?:\A|\n)(?:exit status -?\d+\n)?"
                        r"(?:Exit code (-?\d+)|(Command was aborted before completion))"
                        r"\s*(?:<cwd>[^\n]*</cwd>\s*)?\Z")
#: The finish reasons Crush shows as an error banner (``Message.IsErrorLike``): the provider's error, and (since July
#: 2026, ``agent.go``) its safety classifier's refusal, saved with no message: the TUI writes "Model refused to
#: continue" (``ui/chat/assistant.go``).
_ERROR_LIKE, _REFUSED = ("error", "content_filter"), "Model refused to continue"
#: The name Crush gives a long paste it keeps as a text attachment (``ui/model/ui.go``: ``paste_%d.txt``).
_PASTE = re.compile(r"paste_\d+\.txt")
#: The prompt Crush sends itself after compacting a session mid-turn (``agent.go``: a turn whose context ran out while
#: its calls were pending is summarized, then its prompt re-queued in these words): Crush's, not the user's, whose
#: request it quotes is already a prompt of the session.
_CONTINUED = re.compile(r"The previous session was interrupted because it got too long, the initial user request "
                        r"was: `.*`", re.DOTALL)
#: A call left with no result when the user stopped the turn: it may have been running, or not yet started.
CANCELED = "tool call canceled (no result recorded: the user stopped the turn before it answered)"
#: The results Crush writes (with ``is_error``) for a call it did not run: the user denied it ("Permission denied"
#: until late 2025, then ``tools.NewPermissionDeniedResponse``'s text), or a call after a denied one in the same batch.
_NOT_RUN = {"Permission denied": "denied by the user", "User denied permission": "denied by the user",
            "Tool execution canceled by user": "canceled by the user"}


def matches(record: Any) -> bool:
    """A line of ``EXPORT_SCRIPT``'s: a session's row (Crush's columns) with its ``messages``."""
    return (isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("messages"), list)
            and "parent_session_id" in record and "prompt_tokens" in record and "completion_tokens" in record)


def session_store(path: Path, tables: dict[str, set[str]]) -> str | None:
    """What Crush's session database is and how to read its runs, given its tables and their columns (``detect``
    reads them); None for any other database."""
    if not ({"id", "parent_session_id", "title", "prompt_tokens"} <= tables.get("sessions", set())
            and {"session_id", "role", "parts", "created_at"} <= tables.get("messages", set())):
        return None
    return ("Crush's session database (SQLite; Crush keeps a project's sessions in .crush/crush.db, its "
            "predecessor opencode-ai/opencode in .opencode/opencode.db): write its sessions as JSON lines and ingest "
            f"those: {export_command(EXPORT_SCRIPT, path, 'crush-sessions.jsonl')}")


def _finish_error(data: dict[str, Any]) -> str:
    """What a ``finish`` Crush shows as an error banner says: the provider's message and details; a refusal, saved
    with neither, in the TUI's words, marked as one so ``ended_on_error`` tells it from the provider failing."""
    message, details = as_str(data.get("message")), as_str(data.get("details"))
    if data.get("reason") == "content_filter":
        return f"{': '.join(filter(None, (message, details))) or _REFUSED} (refusal: content_filter)"
    return ": ".join(filter(None, (message or "Crush error", details)))


def _data(part: dict[str, Any]) -> dict[str, Any]:
    return as_dict(part.get("data"))


def _shell_error(output: str, command: str | None) -> str | None:
    """A command's failure as ``formatOutput`` wrote it (``_SHELL_END``): its decisive line and exit code, or the
    abort; None for a command that exited 0 or answered "no" (``exit_code_error``)."""
    end = _SHELL_END.search(output)
    if end is None:
        return None
    if end.group(2):  # stopped (a timeout, the user): what it printed last, and that it was stopped
        line = error_line(output[:end.start()], "")
        return f"{line} (aborted before completion)" if line else "command aborted before completion"
    return exit_code_error(output[:end.start()], int(end.group(1)), command)


def _text_attachment(data: dict[str, Any]) -> str | None:
    """A text attachment of a prompt (a ``binary`` part of a ``text/*`` type): a paste Crush kept as ``paste_N.txt``
    (``_PASTE``) as the words the user pasted, a file as Crush sends it to the model (``PromptWithTextAttachments``);
    None for any other (an image), or one whose ``Data`` is not base64 or holds only blanks."""
    if not (as_str(data.get("MIMEType")) or "").startswith("text/") or not isinstance(data.get("Data"), str):
        return None
    try:
        content = base64.b64decode(data["Data"], validate=True).decode("utf-8", "replace")
    except ValueError:  # binascii.Error: not base64
        return None
    if not content.strip():
        return None
    path = as_str(data.get("Path"))
    if path and _PASTE.fullmatch(path):
        return content.strip()
    return f"<file path='{path}'>\n{content.strip()}\n</file>" if path else f"<file>\n{content.strip()}\n</file>"


class _Session(SessionSteps):
    """A session's messages walked in order: prompts, and steps by tool call id."""

    def user(self, parts: list[dict[str, Any]]) -> None:
        """A prompt: the typed text, then its text attachments, which Crush sends with it (a paste alone is one)."""
        typed = "\n".join(t for p in parts if p.get("type") == "text" and (t := as_str(_data(p).get("text"))))
        if _CONTINUED.fullmatch(typed.strip()):
            return  # Crush resuming the turn after compacting it (``_CONTINUED``; its attachments re-sent too)
        attached = [a for p in parts if p.get("type") == "binary" and (a := _text_attachment(_data(p)))]
        text = "\n".join(filter(None, (typed.strip(), *attached)))
        if text.strip():
            self.flush()
            self.prompts.append(text.strip())
            self.last_error = None

    def assistant(self, message: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        calls = []
        for part in parts:
            kind, data = part.get("type"), _data(part)
            if kind == "reasoning" and (thinking := as_str(data.get("thinking"))):
                self.thought.append(thinking)
            elif kind == "text" and (text := as_str(data.get("text"))) and text.strip():
                self.say(text.strip(), message.get("created_at"))
                self.last_error = None
            elif kind == "tool_call":
                calls.append(self.call(message, data))
            elif kind == "finish" and data.get("reason") in _ERROR_LIKE:
                self.last_error = _finish_error(data)
            elif kind == "finish" and data.get("reason") == "canceled":
                for step in calls:  # the user stopped the turn before these answered: no result will come
                    if self.by_call.pop(step.get("_id"), None) is not None:
                        step["error"] = CANCELED

    def call(self, message: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        step = self.open_call(as_str(data.get("id")), as_str(data.get("name")) or "(unnamed tool)",
                              json_arguments(data.get("input")), message.get("created_at"), _id=data.get("id"))
        self.last_error = None
        return step

    def result(self, message: dict[str, Any], data: dict[str, Any]) -> None:
        step = self.by_call.pop(data.get("tool_call_id"), None) if isinstance(data.get("tool_call_id"), str) else None
        if step is None:
            return  # an answer to no recorded call (the call compacted away)
        output = as_str(data.get("content")) or ""
        step["observation"] = output or None
        step["ended_at"] = iso_time(message.get("created_at"))
        if data.get("is_error") is True:
            step["error"] = not_run(_NOT_RUN[output.strip()]) if output.strip() in _NOT_RUN else error_line(output)
        elif error := _shell_error(output, command_line(step.get("arguments"))):
            step["error"] = error


def _summary(message: dict[str, Any], session: dict[str, Any]) -> bool:
    """The summary Crush writes when it compacts a session: no work of the agent's."""
    return bool(message.get("is_summary_message")) or (
        message.get("id") is not None and message.get("id") == session.get("summary_message_id"))


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if not matches(record):  # a format forced on another file
        raise RecordError("not a Crush session: expected a session's row with its messages, as the command named for "
                          "a .crush/crush.db writes them")
    walk = _Session()
    messages = [m for m in record["messages"] if isinstance(m, dict) and not _summary(m, record)]
    for message in messages:
        parts = [p for p in as_list(message.get("parts")) if isinstance(p, dict)]
        if message.get("role") == "user":
            walk.user(parts)
        elif message.get("role") == "assistant":
            walk.assistant(message, parts)
        elif message.get("role") == "tool":
            for part in parts:
                if part.get("type") == "tool_result":
                    walk.result(message, _data(part))
    walk.close()
    if not walk.prompts:
        raise RecordError("no user prompt in this Crush session")
    answered = [m for m in messages if m.get("role") == "assistant"]
    model = next((name for m in reversed(answered) if (name := as_str(m.get("model")))), None)
    parent = as_str(record.get("parent_session_id"))
    tokens = _count(record.get("prompt_tokens")) + _count(record.get("completion_tokens"))
    cost = record.get("cost")
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": record["id"],
        "session_name": as_str(record.get("title")) or None,
        "provider": next((name for m in reversed(answered) if (name := as_str(m.get("provider")))), None),
        "total_tokens": tokens or None,
        "cost_usd": round(cost, 6) if isinstance(cost, (int, float)) and cost > 0 else None,
        "is_subagent": parent is not None or None,  # a part of its parent's run: never a Harbor trial's run
        "parent_session_id": parent,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
    }
    return session_trajectory(
        ctx, run_id=f"crush.{record['id']}", task=walk.prompts[0], model_id=model, steps=walk.steps,
        metadata=metadata, last_error=walk.last_error, error_cause=API_ERROR_CAUSE,
        created_at=first_time(record.get("created_at"), *(m.get("created_at") for m in messages[:1])))
