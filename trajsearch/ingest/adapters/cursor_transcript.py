"""``cursor-transcript``: the agent transcripts Cursor (the IDE's agent and the ``agent`` CLI, 2.x and 2026) writes
for its hooks and tools, ``~/.cursor/projects/<project>/agent-transcripts/<id>/<id>.jsonl`` (older builds:
``agent-transcripts/<id>.jsonl``), a sub-agent's in ``<parent id>/subagents/<id>.jsonl``.

A reader beside :mod:`cursor_cli`, not its sessions: the CLI's ``stream-json`` is events (``init``, ``tool_call``
with results, ``result``) keyed by a ``session_id``; a transcript is bare messages with no id, time or result, and no
line of it is one of the stream's. Read from its writer, Cursor's ``TranscriptStore`` (``packages/agent-transcript``,
``formatSingleMessageJsonl``, as recovered from Cursor's bundle in a public repository: see
``tests/fixtures/cursor-transcript/.aud36/README.md``), and the readers of it (agentsview, cass, AI-Engineering-Coach):

- ``{"role": "user" | "assistant", "message": {"content": [...]}}`` a message, its parts ``{"type": "text",
  "text"}`` (an assistant's thinking joined after its text) and ``{"type": "tool_use", "name", "input"}``; the
  ``tool`` messages (results) are left out by the writer, and so is a first user message followed by another (the
  context Cursor sends first); a user's text is ``<user_query>...</user_query>``, often after a
  ``<timestamp>`` tag (``Tuesday, May 26, 2026, 10:57 PM (UTC+2)``) or other context tags;
- ``{"type": "turn_ended", "status": "success" | "error" | "aborted", "error"?}`` after a turn;
- ``{"type": "metadata", "metadata": {"overview"}}`` first, sometimes: a summary of the chat.

Mapping (a file is one run): task = the first user query (later ones ``metadata.user_prompts``; a user message of
context tags alone is none, nor is a text Cursor writes itself, counted in ``metadata.cursor_prompts``; a forked
sub-agent's task is its parent's brief after ``You are the forked subagent; ...``, the parent's history copied before
it left out, ``metadata.forked_subagent``); steps = each ``tool_use`` (action its ``name``, arguments its ``input``, a
string one as ``{"input": ...}``, thought the text before it less a redacted thought's ``[REDACTED]``; no observation:
none is written), the text after the last call a ``respond`` step; outcome unknown unless the last turn ended
``error`` with nothing after it, no message nor a turn ended well (its error, an infrastructure error; not the user's
stop, ``User aborted request``, nor ``aborted``); trajectory_id = ``cursor-transcript.<id>`` (the file's name, the
conversation's id); created_at = the earliest ``<timestamp>`` (a sub-agent's has none: the file's time);
``metadata.overview``, ``last_turn_status``; a sub-agent's (``subagents/``) ``is_subagent``
and ``parent_session_id`` (its parent's id, the folder's name), a run of its own. No model is written. A file of
markers alone (the IDE's chat, its messages in ``state.vscdb``: :mod:`cursor_ide`) holds no run: passed over.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, PromptedSteps, as_records, as_str, blocks, parts_text, prompt_list,
                         session_trajectory, whole_file)
from ._common import Context, PassedOver, RecordError, as_dict

NAME = "cursor-transcript"
#: A file is one conversation.
WHOLE_FILE = True
split = whole_file

_ROLES = ("user", "assistant")
#: A transcript with no message: the writer writes a turn's end even when it has none of its messages (Cursor's IDE
#: writes an agent chat's turns' ends there, its messages only in its own store, as a reader of both found).
_MARKERS_ONLY = "turn markers only"

_TURN_STATUSES = ("success", "error", "aborted")
#: A context block's opening tag, of those Cursor puts in a user's message (``<timestamp>``, ``<workspace>``,
#: ``<user_info>`` ...).
_OPENING = re.compile(r"<([a-z_]+)>")
_SPACE = re.compile(r"\s*")
#: Redacted reasoning: the writer joins an assistant's thinking after its text, and writes ``[REDACTED]`` for one it
#: was not given (alone, or after the text).
_REDACTED = re.compile(r"(?:\A|\n\n)\[REDACTED\](?:\n\[REDACTED\])*\s*\Z")
#: The openings of the user texts Cursor writes itself (to wake the agent after a sub-agent or background task, or
#: after an interruption), no prompt of the user's: as observed on real transcripts (Einsia/agent-git's
#: ``samples/cursor/synthetic-user-text.txt``, 104 files of Cursor IDE 3.13.25; potsherd's format note).
_CURSOR_OPENINGS = (
    "Perform any necessary follow-up actions in response to the subagent completion above.",
    "Briefly inform the user about the task result and perform any follow-up action",
    "The above subagent result is already visible to the user",
    "Your previous response was interrupted. Continue from where you left off.",
)
#: A forked sub-agent's first own prompt (Cursor's "Start multitasking"): its transcript holds a copy of its
#: parent's history before it, and the parent's brief after the opening is the sub-agent's task.
_FORKED = "You are the forked subagent; continue executing your task."
_USER_STOP = re.compile(r"\bUser aborted\b", re.I)
#: A ``<timestamp>`` block's body (matched within one block: see :func:`_timestamp`).
_TIMESTAMP = re.compile(r"\s*(.*?)\s*\((UTC|GMT)([+-]\d{1,2})?(?::(\d\d))?\)\s*", re.S)


def _is_message(record: Any) -> bool:
    return (isinstance(record, dict) and record.get("role") in _ROLES and set(record) == {"role", "message"}
            and isinstance(record["message"], dict) and set(record["message"]) == {"content"}
            and isinstance(record["message"]["content"], list))


def _is_marker(record: Any) -> bool:
    """A ``turn_ended`` or ``metadata`` line, the writer's two others."""
    if not isinstance(record, dict):
        return False
    if record.get("type") == "turn_ended":
        return record.get("status") in _TURN_STATUSES and set(record) <= {"type", "status", "error"}
    return (record.get("type") == "metadata" and set(record) == {"type", "metadata"}
            and isinstance(as_dict(record["metadata"]).get("overview"), str))


def matches(record: Any) -> bool:
    """A transcript's first line: a message of the writer's bare shape (no ``type``, ``id`` or time, which Claude
    Code's lines all have) or its ``metadata`` / ``turn_ended`` line."""
    return _is_message(record) or _is_marker(record)


def _prompt(text: str) -> str:
    """What the user typed: the ``<user_query>`` blocks, else the text less its context blocks (none: context). A
    block ends at the last ``</user_query>`` before the next block: the user's words may hold the tag's text."""
    queries = [body.rpartition("</user_query>")[0].strip() for body in text.split("<user_query>")[1:]
               if "</user_query>" in body]
    return "\n\n".join(q for q in queries if q) if queries else _less_context(text).strip()


def _less_context(text: str) -> str:
    """``text`` less its context blocks (``<tag>...</tag>``, each with the space around it, as a line break), found
    by position: linear however many tags never close (a paste of markup), where a regex looking for each opening's
    close took minutes on a few hundred KB (review RT1, 1)."""
    kept, at, look = [], 0, 0
    unclosed: set[str] = set()  # tags with no close ahead: none lies ahead of a later opening either
    while opening := _OPENING.search(text, look):
        tag = opening[1]
        end = -1 if tag in unclosed else text.find(f"</{tag}>", opening.end())
        if end == -1:
            unclosed.add(tag)
            look = opening.end()
            continue
        kept += [text[at:opening.start()].rstrip(), "\n"]
        at = look = _SPACE.match(text, end + len(tag) + 3).end()
    kept.append(text[at:])
    return "".join(kept)


def _timestamp(text: str) -> datetime | None:
    """A user message's ``<timestamp>`` tag (``Saturday, Aug 01, 2026, 9:30 AM (UTC+8)``), else None. Each block is
    matched alone, found by position (:func:`_agent_cli.blocks`): linear however many openings never close."""
    opening = len("<timestamp>")
    found = next(filter(None, (_TIMESTAMP.fullmatch(text, start + opening, end - opening - 1)
                               for start, end in blocks(text, "timestamp"))), None)
    if not found:
        return None
    offset = timedelta(hours=int(found[3] or 0))
    offset += timedelta(minutes=int(found[4] or 0)) * (-1 if offset < timedelta(0) else 1)
    for pattern in ("%A, %B %d, %Y, %I:%M %p", "%A, %b %d, %Y, %I:%M %p"):
        try:
            return datetime.strptime(found[1], pattern).replace(tzinfo=timezone(offset))
        except ValueError:
            continue
    return None


class _Walk(PromptedSteps):
    """The transcript's lines in order: prompts, the assistant's text and calls, how each turn ended."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[datetime] = []
        self.overview: str | None = None
        self.turn_status: str | None = None
        self.cursor_prompts = 0
        self.forked = False

    def line(self, record: dict[str, Any]) -> None:
        if record.get("type") == "metadata":
            self.overview = as_str(as_dict(record.get("metadata")).get("overview"))
        elif record.get("type") == "turn_ended":
            self.turn_status = as_str(record.get("status"))
            error = as_str(record.get("error")) or "Cursor ended the turn on an error"
            # the user's stop is no error of the run's (``aborted``, or ``error`` saying so: "User aborted request")
            self.last_error = error if self.turn_status == "error" and not _USER_STOP.search(error) else None
        elif _is_message(record):
            self.last_error = None  # work after an error: it was not the run's end
            content = record["message"]["content"]
            if record["role"] == "user":
                text = parts_text(content, images=False)
                if at := _timestamp(text):
                    self.times.append(at)
                prompt = _prompt(text)
                if prompt.startswith(_FORKED):
                    self._fork(prompt)
                elif prompt.startswith(_CURSOR_OPENINGS):
                    self.cursor_prompts += 1
                elif prompt:
                    self.flush()
                    self.prompt(prompt)
                return
            for part in content:
                part = as_dict(part)
                if part.get("type") == "text" and (said := _REDACTED.sub("", as_str(part.get("text")) or "").strip()):
                    self.say(said)
                elif part.get("type") == "tool_use":
                    given = part.get("input")  # ApplyPatch's is the patch's text; none is left out
                    name = (as_str(part.get("name")) or "").strip().partition("\n")[0] or "tool"
                    self.open_call(None, name, given if isinstance(given, dict) else {} if given is None
                                   else {"input": given})

    def _fork(self, prompt: str) -> None:
        """A forked sub-agent's own start: what came before is its parent's history copied, not its run."""
        overview = self.overview
        _Walk.__init__(self)
        self.overview, self.forked = overview, True
        self.prompt(prompt.removeprefix(_FORKED).strip() or prompt)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    records = as_records(record, "Cursor agent transcript")
    walk = _Walk()
    for line in records:
        walk.line(line)
    walk.close()
    if not any(_is_message(line) for line in records):
        raise PassedOver(_MARKERS_ONLY, f"a Cursor agent transcript of {_MARKERS_ONLY}: the IDE keeps the chat in its "
                         "state.vscdb (format cursor-ide)", unit="transcript")
    if walk.task is None and walk.cursor_prompts:
        raise RecordError(f"no user query in this Cursor agent transcript: its {walk.cursor_prompts} user text(s) "
                          "are Cursor's own (a wake-up after a sub-agent or an interruption), none the user's")
    if walk.task is None:
        raise RecordError("no user query in this Cursor agent transcript (a `user` message with text that is not "
                          "context tags alone)")
    path = ctx.source
    subagent = path.parent.name == "subagents"
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": path.stem,
        "is_subagent": subagent or None,
        "parent_session_id": path.parent.parent.name if subagent else None,
        "overview": walk.overview,
        "last_turn_status": walk.turn_status,
        "user_prompts": prompt_list(walk.prompts) or None,
        "cursor_prompts": walk.cursor_prompts or None,
        "forked_subagent": walk.forked or None,
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{path.stem}", task=walk.task, model_id=None, steps=walk.steps, metadata=metadata,
        last_error=walk.last_error, error_cause=API_ERROR_CAUSE, created_at=min(walk.times, default=None))
