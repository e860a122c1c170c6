"""``kimi-cli``: sessions of Kimi Code CLI (MoonshotAI/kimi-cli, ``kimi``), the terminal coding agent, as its context
file keeps them.

Source read: MoonshotAI/kimi-cli at 4a550ef (1.49.0, 2026) and at 0b88d48 (Oct 2025): ``src/kimi_cli/soul/context.py``
(the file's lines), ``soul/message.py`` (``tool_result_to_message``: how a tool's result is written),
``tools/shell`` (``tools/bash`` in 2025: a command's failure), ``session.py`` and ``subagents/store.py`` (where the
files lie), ``soul/kimisoul.py`` (a ``UserPromptSubmit`` hook's block: in the wire log alone). Real files: the five
committed in MoonshotAI/kimi-cli at 0b88d48 (``outputs/``, two SWE-bench runs of one task and their three
context-gathering sub-agents; the fixture is trimmed from them: ``tests/fixtures/kimi-cli/.newfmt2-30/README.md``).

Kimi Code, its TypeScript rewrite (MoonshotAI/kimi-code at d723cc4, 2026-08, ``kimi`` 0.x; ``packages/agent-core``:
``agent/records/types.ts``, ``loop/events.ts``, ``loop/types.ts``), keeps no context file: each agent of a session has
one wire log, ``~/.kimi-code/sessions/<work dir>/<session id>/agents/<main | agent-n>/wire.jsonl`` (``state.json``
beside the agents), its lines records ``{"type", ..., "time": <Unix ms>}`` opening with ``{"type": "metadata",
"protocol_version", "created_at"}``: ``turn.prompt`` and ``turn.steer`` (``input`` parts, ``origin.kind``: ``user``
for what was typed), ``context.append_loop_event`` (``event``: ``content.part`` text or think, ``tool.call``
{toolCallId, name, args}, ``tool.result`` {toolCallId, result: {output, isError}}; the v2 engine, wire protocol 1.5,
writes them alike), ``context.apply_compaction`` (``summary``), ``usage.record`` (``model``), ``llm.request``
(``model``) and others passed over (``context.append_message`` repeats the prompts, ``context.clear`` is not a new
run here; but a ``UserPromptSubmit`` hook's words, a message of origin ``hook_result`` before the prompt (agent-core
v1: after it and its message): the prompt it blocked, which no turn ran for, is none, ``metadata.hook_blocked_prompts``,
and the context it added is ``metadata.hook_prompt_contexts``, as OpenHands' are, ``_CodeSession.hook_message``).
Read alike (``_code_trajectory``): the task the first prompt typed (else the first of any origin: a sub-agent's), a
result with ``isError`` failed with the message ending its output (a command's ``Command failed with exit code: N.``:
its output's decisive line and the code, as above; a call rejected or denied, and one the user
stopped, as ``actions`` marks them: ``_CODE_NOT_RUN``), the model the last one recorded, the start the log's
``created_at`` (else its first record's ``time``); a log of its set-up alone passed over; the run ``kimi-cli.<session
id>`` (an agent other than ``main``: ``kimi-cli.<session id>.<agent>``, a sub-agent's). A session Kimi Code imported
from the Python CLI (``packages/migration-legacy``: ``ses_<old id>``) is a log of ``context.append_message`` records
alone, the old context file's messages (protocol 1.0: ``toolCalls`` [{type, id, function}], a tool's ``toolCallId``):
the messages before any turn, naming no ``origin`` (every message the agent writes names one), are read as the Python
CLI's (``_CodeSession.message``).

Kimi keeps a session's model context as JSON lines, appended as the session runs:
``~/.kimi/sessions/<work dir hash>/<session id>/context.jsonl`` (a sub-agent's beside its session's, in
``subagents/<agent id>/context.jsonl``; ``/clear`` and a compaction rotate the file to ``context_<n>.jsonl`` and
start anew, a compaction's with its summary; a session named by ``--session`` has a folder of that name); until
late 2025 ``<work dir hash>/<session id>.jsonl``, rotated to ``<session id>_<n>.jsonl``, a sub-agent's
``<session id>_<name>.jsonl`` (``sub_<n>``, ``read_<n>``). Each line is a
message (``role`` ``user``, ``assistant``, ``tool``, its ``content`` a string or typed parts, ``text``, ``think``,
``image_url``...; an assistant's ``tool_calls`` ``[{type: function, id, function: {name, arguments}}]``; a tool's
``tool_call_id``) or one of Kimi's own records: ``{"role": "_system_prompt", "content"}``, ``{"role":
"_checkpoint", "id"}`` (before each turn and step) and ``{"role": "_usage", "token_count"}`` (the context's size);
any role opening with ``_`` is Kimi's own, as its ``Session.is_empty`` takes it, and is passed over.
A tool's result opens with ``<system>message</system>``: ``<system>ERROR: message</system>`` for a tool that failed
(then its output); Kimi before 2025-10-30 wrote a failure's bare message, told by the tools' own words (the shell's
``Command failed with exit code: N.``, ``Command killed by timeout (Ns)``, a file tool's ``... is not a file.``,
``Failed to ...``: ``_TOOL_ERROR_2025``); a call the user rejected, ``The tool call is rejected by the user.`` in either
form, was not run (``not_run``, the user's feedback kept), as was one a ``PreToolUse`` hook blocked (``_HOOK_BLOCKED``:
told by the wire log's ``ToolResult`` where the result agrees, by a Kimi Code import's ``toolCallDisplays``, else by
Kimi's own words for a block giving no reason).

Mapping: a file is one run; task = the first user text (later ones ``metadata.user_prompts``; Kimi's own user
messages, each opening with ``<system>`` or ``<system-reminder>``, are none: checkpoints, D-Mail, ``/init``; nor is a
``Stop`` hook's reason, a user message in the turn after the answer that the wire log begins no turn with: the
answer's observation, ``_Wire.stop_hook_said``; a
compacted file's task is its summary, "(continued after compaction) ...", ``metadata.compacted``); steps = the tool
calls with their results (thought: the ``think`` parts and text before the call), a reply with no call a
``respond`` step; a failed tool's step error is its message (a command's: its output's decisive line and exit code,
``exit_code_error``), a call the file ends without an answer to failed; outcome unknown (a session records no
verdict); model: not recorded (the file names none); times: from the ``wire.jsonl`` beside it (``_wire``), since
2025-11-26, the run's start its task's ``TurnBegin``, a call's start and end its ``ToolCall`` and ``ToolResult``, a
prompt a ``UserPromptSubmit`` hook blocked a turn ending before any step (``metadata.hook_blocked_prompts``, with
what Kimi said, the hook's reason; a session of that prompt alone passed over, ``_Wire.event``); else
none (the run dated by its file; a session folder's file without it, moved there from 2025's layout by Kimi, or
trimmed or copied, says what that lacks: ``metadata.wire_log_missing``). The file holds no session id: the id is the one
Kimi gives the session, its folder's or file's name, ``kimi-cli.<session id>`` (a sub-agent's
``kimi-cli.<session id>.<agent>``, ``metadata.is_subagent``, ``metadata.parent_session_id``; a rotated file's
``.context_<n>`` after it, in either layout; a folder not named by a UUID is a session's if Kimi's other files lie
beside), so a copy keeping its name is the same run; a file otherwise named is named by its place
(``file_run_key``): what was said cannot be the id (two runs of one task open alike, as the real ones do).
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice, zip_longest
from pathlib import Path
from typing import Any

from trajsearch.actions import INTERRUPTED, UNNAMED_TOOL, not_run
from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, SessionSteps, as_records, as_str, command_line, error_line,
                         exit_code_error, first_time, iso_time, json_arguments, parts_text, prompt_list,
                         session_trajectory, whole_file)
from ..sources import first_line_record, peek
from ._common import (Context, PassedOver, RecordError, as_dict, as_list, blocked_by_hook, file_run_key, file_stem,
                      hook_blocked_prompt, hook_prompt_context, loads, named_path, short, timestamp)

log = logging.getLogger(__name__)

NAME = "kimi-cli"
WHOLE_FILE = True
#: Where Kimi keeps its sessions: a walk of a home reads them.
SESSION_FOLDERS = (".kimi/sessions", ".kimi-code/sessions")
#: Kimi's own records among a context file's messages: any role opening with ``_`` (``Session.is_empty`` passes
#: them over so), these the ones it writes now; a later one is passed over too.
_OWN_ROLES = frozenset({"_system_prompt", "_checkpoint", "_usage"})
_MESSAGE_ROLES = ("assistant", "tool", "user")
#: A session's id as Kimi names it (a UUID), and a file of 2025 named by it: a session's, one rotated
#: (``utils/path.next_available_rotation``: ``<id>_<n>``), or a sub-agent's (``<id>_sub_<n>``, ``<id>_read_<n>``).
_SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SESSION_FILE = re.compile(rf"(?P<session>{_SESSION_ID.pattern})(?:_(?P<rotation>\d+)|_(?P<agent>.+))?")
_CONTEXT_FILE = re.compile(r"context(?:_(?P<rotation>\d+))?\.jsonl")
#: The wire log Kimi keeps beside a session's (and, since 2026, a sub-agent's) context file, since 2025-11-26
#: (``wire/file.py``): a ``{"type": "metadata", "protocol_version"}`` head (since 2026-01), then a line per event,
#: ``{"timestamp": <Unix seconds>, "message": {"type", "payload"}}``; the times the context file lacks.
WIRE = "wire.jsonl"
#: What a context file read without its wire log lacks (:func:`_wire`): the times; for a session of 2026, hooks' marks
#: too. A session of 2025 Kimi moved into a folder (``session.py``: ``_migrate_session_context_file``, as its session
#: list runs) never had one: the log is only written as a session runs.
_WIRE_MISSING = ("{}: the run is dated by its file and no call is timed (a session older than 2025-11-26 that Kimi "
                 "moved into a folder has none; a later one was trimmed or copied, and a call a hook blocked with a "
                 "reason of its own reads as the tool's failure)")
#: The wire events whose times are read; a line naming none of them is no such event.
_WIRE_TIMED = re.compile(r'"(?:TurnBegin|ToolCall|ToolResult|StepBegin|TurnEnd|SteerInput)"')
#: The reason Kimi gives a prompt a ``UserPromptSubmit`` hook blocked without one of its own (``kimisoul.py``).
_PY_PROMPT_BLOCKED = "Prompt blocked by hook."
#: Files Kimi keeps beside a session's context file (a session named by ``--session`` needs no UUID: these tell it).
_SESSION_SIDE = (WIRE, "state.json")
#: Kimi's files beside a context file that hold no run: a session's, and a sub-agent's meta, prompt and output.
_NO_RUN_FILES = frozenset({*_SESSION_SIDE, "meta.json", "prompt.txt", "output"})
#: Kimi Code's folders of a session's (or an agent's) background tasks and cron jobs, one JSON file each: no run.
_CODE_NO_RUN_FOLDERS = frozenset({"tasks", "cron"})
#: The message opening a tool's result, and a failure in it: Kimi's ``ERROR:``; before cc9121d5 (2025-10-30) a
#: failure's bare message, told by the tools' own words (``tools/bash``, ``tools/file``, ``tools/web``,
#: ``tools/task``, ``tools/dmail`` at cc9121d5~1: each ``ToolError``'s message; a success's says none of these).
_SYSTEM = re.compile(r"\A<system>(?P<message>.*?)</system>", re.S)
_ERROR = re.compile(r"\AERROR: (?P<message>.*)\Z", re.S)
_EXIT = re.compile(r"\ACommand failed with exit code: (?P<code>-?\d+)\.")
_KILLED = re.compile(r"\ACommand killed by timeout")
#: A call the user rejected when asked to approve it (``tools/utils.ToolRejectedError``, ``soul/approval.py``): not
#: run; its message the same in the 2025 bare form, the user's feedback after it since 2026.
_REJECTED = re.compile(r"\AThe tool call is rejected by the user\.(?: User feedback: (?P<feedback>.+))?", re.S)
#: A call a ``PreToolUse`` hook blocked (``soul/toolset.py``, since 1.28.0, 2026-03: a hook exiting 2, its stderr the
#: reason, or denying in JSON, its ``permissionDecisionReason``): never run, its result a ``ToolError`` of the hook's
#: reason, this message when it gave none, and of the brief ``Hook blocked``, which only the wire log's ``ToolResult``
#: keeps. Kimi Code writes the same message (``session/hooks/engine.ts``), else the hook's reason alone, unmarked.
_HOOK_BLOCKED = "Blocked by PreToolUse hook"
#: What Kimi Code's ``UserPromptSubmit`` hook said, as it appends it to the context before the prompt
#: (``agent-core-v2`` ``externalHooks/internal/userPrompt.ts``: ``renderHookResult``, one block per hook), in a message
#: of origin ``{kind: hook_result, event, blocked?}``: an assistant's, the hook's reason, where it blocked the prompt
#: (no turn runs: the prompt is appended after it, ``promptService.ts``), else a user's, the context it added.
#: agent-core v1 (``agent/turn/index.ts``) writes them after the typed prompt and its message instead.
_PROMPT_HOOK_SAID = re.compile(r'<hook_result hook_event="UserPromptSubmit">\n(?P<said>.*?)\n</hook_result>', re.S)
_PROMPT_HOOK_BLOCKED = "Blocked by UserPromptSubmit hook"
_HOOK_BRIEF = "Hook blocked"
_TOOL_ERROR_2025 = re.compile(
    r"\A(?:`[^`]*` (?:is not an absolute path|(?:parent directory )?does not exist|is not a (?:file|directory)"
    r"|is outside the working directory)\.|Pattern `[^`]*` starts with '\*\*'|Failed to |No valid hunks found"
    r"|No (?:changes|replacements) were made\.|Invalid write mode: |Subagent not found: |Max steps \d+ reached"
    r"|Search service is not configured|If you see this message, the D-Mail was not sent)")
#: What Kimi Code's shell writes as a failed command's output when it printed nothing (``tools/builtin/shell/bash.ts``).
_NO_OUTPUT = re.compile(r"Process exited with code -?\d+")
#: A call Kimi Code did not run (``agent/permission``: the user rejected it, or a rule or policy denied it, the
#: message its result's output holds whole), and one the user stopped (Esc or Ctrl+C, ``loop/tool-call.ts``).
_CODE_NOT_RUN = re.compile(r'\A(?P<reason>Tool "[^"]*" was (?:not run because|denied by) [^\n]*?\.)(?:\s|\Z)')
_CODE_INTERRUPTED = re.compile(r'\AThe user manually interrupted "')
#: The result Kimi Code's import writes for a call the Python CLI's file left unanswered
#: (``migration-legacy/src/sessions/close-tool-calls.ts``): no answer, the call never answered here too.
_IMPORT_UNANSWERED = "[tool result unavailable \u2014 session imported from kimi-cli]"
#: The records of a Kimi Code agent only set up (its head and configuration): a sub-agent's log holding no more
#: (as Kimi Code's own sample session's ``agent-0``) holds no run and nothing wrong, as an empty sub-agent file.
_CODE_SET_UP = frozenset({"metadata", "config.update"})
#: The folder Kimi Code's import gives a session of the Python CLI (``migrate-one.ts``: ``ses_<its id>``).
_IMPORTED_FOLDER = re.compile(r"ses_(?P<session>.+)")
#: User messages Kimi writes itself, each opening with ``<system>`` (a checkpoint's note, a compaction's summary,
#: a D-Mail's, ``/init``'s, background tasks') or a ``<system-reminder>``.
_OWN_USER_TEXT = re.compile(r"\A\s*<system(?:>|-reminder>)")
#: A compaction's summary opening the context file it rotated the old one for (``soul/compaction.py``).
_COMPACTED = re.compile(r"\A\s*<system>Previous context has been compacted\. Here is the compaction output:</system>"
                        r"\s*(?P<summary>.*)\Z", re.S)


def matches(record: Any) -> bool:
    """A context file's first line: one of Kimi's own records (``_checkpoint`` opens every session it writes, a
    ``_system_prompt`` since 2026); or Kimi Code's wire log head (``_code_head``)."""
    return isinstance(record, dict) and (_own(record.get("role")) and (
        "id" in record or "token_count" in record or isinstance(record.get("content"), str)) or _code_head(record))


def _code_head(record: dict[str, Any]) -> bool:
    """Kimi Code's wire log head, ``{"type": "metadata", "protocol_version", "created_at"}`` (the Python CLI's wire
    log, a side file of its context file, opens with no ``created_at``)."""
    return record.get("type") == "metadata" and isinstance(record.get("protocol_version"), str) \
        and isinstance(record.get("created_at"), (int, float))


def _code_log(lines: list[dict[str, Any]]) -> bool:
    """Kimi Code's wire log: its head (``_code_head``), or a ``metadata`` head without ``created_at`` (as third-party
    readers write it) whose next record's ``type`` is dotted (``config.update``, ``turn.prompt``: the Python CLI's
    wire records are ``{"timestamp", "message"}``)."""
    head, second = lines[0], (lines[1] if len(lines) > 1 else {})
    return _code_head(head) or head.get("type") == "metadata" and "." in str(second.get("type", ""))


def format_by_place(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): ``<session>/agents/<agent>/wire.jsonl`` opening on a
    ``metadata`` record is Kimi Code's wire log though its head lacks ``created_at`` (``matches`` asks for it, the one
    key the Python CLI's wire log head lacks; that CLI never writes under ``agents/``)."""
    if fmt is not None or path.name != WIRE or path.parent.parent.name != "agents":
        return None
    head, _ = first_line_record(peek(path).split("\n", 1)[0])
    return NAME if isinstance(head, dict) and head.get("type") == "metadata" else None


def _own(role: Any) -> bool:
    """One of Kimi's own records' roles (``_OWN_ROLES``)."""
    return isinstance(role, str) and role.startswith("_")


split = whole_file


def _session_folder(folder: Path, source: Path) -> bool:
    """Whether ``folder`` is a session's as Kimi keeps it: named by its id, or holding its other files (a session
    named by ``--session`` may have any name). ``source`` is read, ``folder`` its name as given (``named_path``)."""
    beside = source.parent
    return bool(_SESSION_ID.fullmatch(folder.name)) or (
        (beside / "context.jsonl").is_file() and any((beside / side).is_file() for side in _SESSION_SIDE))


def _place(ctx: Context) -> tuple[str, str | None, str | None]:
    """The run's id (after ``kimi-cli.``), its session's id and, for a sub-agent's file, its parent session's id, as
    the file's place names them (module docstring)."""
    path = named_path(ctx.source)
    if context := _CONTEXT_FILE.fullmatch(path.name):
        folder = path.parent
        rotated = f".context_{context['rotation']}" if context["rotation"] else ""
        if folder.parent.name == "subagents" and folder.parent.parent.name:
            session = folder.parent.parent.name
            return f"{session}.{folder.name}{rotated}", None, session
        if folder.name and _session_folder(folder, ctx.source):
            return f"{folder.name}{rotated}", folder.name, None
    elif named := _SESSION_FILE.fullmatch(file_stem(ctx.source, (".jsonl",))):
        if named["agent"]:
            return f"{named['session']}.{named['agent']}", None, named["session"]
        rotated = f".context_{named['rotation']}" if named["rotation"] else ""
        return f"{named['session']}{rotated}", named["session"], None
    return file_run_key(ctx, 1), None, None


def _failure(said: str, output: str, command: str | None) -> str | None:
    """A failed tool's error from its result's message (``ERROR:`` taken off) and output; None for a tool that did
    not fail, and for a command whose exit code answers "no" (grep's 1 with no output: ``exit_code_error``); a call
    the user rejected is not run (``not_run``), as Kimi Code's (``_CODE_NOT_RUN``)."""
    failed = _ERROR.match(said)
    message = failed["message"] if failed else said
    if exit_code := _EXIT.match(message):
        return exit_code_error(output, int(exit_code["code"]), command)
    if _KILLED.match(message):
        line = error_line(output, "")
        return f"{line} ({message})" if line else message
    if rejected := _REJECTED.match(message):
        feedback = (rejected["feedback"] or "").strip()
        return not_run("rejected by the user" + (f": {short(feedback, 300, keep='head')}" if feedback else ""))
    if failed and message.strip() == _HOOK_BLOCKED:  # a hook's block that gave no reason (the wire log tells others)
        return _hook_blocked("")
    if not failed and not _TOOL_ERROR_2025.match(message):
        return None
    return short(message.strip().splitlines()[0], 500, keep="head") if message.strip() else error_line(output)


def _said_error(observation: str | None) -> str | None:
    """The message of a failed tool's result as the context file keeps it (``<system>ERROR: message</system>``);
    None for a result that is no failure."""
    head = _SYSTEM.match(observation or "")
    failed = _ERROR.match(head["message"]) if head else None
    return failed["message"] if failed else None


def _hook_blocked(reason: str) -> str:
    """The error of a call a ``PreToolUse`` hook blocked (:data:`_HOOK_BLOCKED`): not run, the hook's reason kept."""
    return blocked_by_hook(reason, _HOOK_BLOCKED)


class _Session(SessionSteps):
    """A context file's messages walked in order: prompts, and steps by tool call id."""

    summary: str | None = None

    def __init__(self, wire: _Wire | None = None) -> None:
        super().__init__()
        #: every call's steps by its id, in order, answered or not: the wire log's times are set on them
        self.calls: dict[str, list[dict[str, Any]]] = {}
        self.wire = wire  # the wire log beside the file: the words the user gave each turn
        self.answered = False  # the last message the agent's answer, no call in it: the model had stopped

    def user(self, content: Any) -> None:
        text = parts_text(content).strip()
        if (compacted := _COMPACTED.match(text)) and self.summary is None and not self.prompts:
            self.summary = compacted["summary"].strip()
        if text and not _OWN_USER_TEXT.match(text):
            self.flush()
            if self.answered and self.wire and self.prompts and self.steps \
                    and self.wire.stop_hook_said(text, self.prompts[-1]):
                last = self.steps[-1]  # what the turn's last step got back, as Claude Code's Stop hook feedback
                last["observation"] = "\n".join(t for t in (last.get("observation"), text) if t)
            else:
                self.prompts.append(text)
        self.answered = False

    def part(self, part: dict[str, Any], at: Any = None) -> None:
        """One part of the agent's message: a ``think`` part the next step's thought, a ``text`` part words said."""
        if part.get("type") == "think" and (think := as_str(part.get("think"))):
            self.thought.append(think)
        elif part.get("type") == "text" and (text := as_str(part.get("text"))) and text.strip():
            self.say(text.strip(), at)

    def assistant(self, message: dict[str, Any]) -> None:
        self.answered = not as_list(message.get("tool_calls"))
        content = message.get("content")
        for part in as_list(content) if not isinstance(content, str) else [{"type": "text", "text": content}]:
            self.part(as_dict(part))
        for call in as_list(message.get("tool_calls")):
            function = as_dict(as_dict(call).get("function"))
            call_id = as_str(as_dict(call).get("id"))
            step = self.open_call(call_id, as_str(function.get("name")) or UNNAMED_TOOL,
                                  json_arguments(function.get("arguments")))
            if call_id:
                self.calls.setdefault(call_id, []).append(step)

    def result(self, message: dict[str, Any]) -> None:
        self.answered = False
        step = self.by_call.pop(message.get("tool_call_id"), None) if isinstance(message.get("tool_call_id"),
                                                                                   str) else None
        if step is None:
            return  # an answer to no recorded call
        text = parts_text(message.get("content"))
        step["observation"] = text or None
        head = _SYSTEM.match(text)
        said = head["message"] if head else ""
        output = text[head.end():].lstrip("\n") if head else text
        step["error"] = _failure(said, output, command_line(step.get("arguments")))


@dataclass
class _Wire:
    """The times of a wire log: each turn's start and its user's words, each tool call's starts and ends by id, in
    order (a provider numbering calls per turn, ``Shell:0``, uses an id again); and the calls a hook blocked."""

    turns: list[tuple[datetime, str]] = field(default_factory=list)
    called: dict[str, list[datetime]] = field(default_factory=dict)
    answered: dict[str, list[datetime]] = field(default_factory=dict)
    #: each ToolResult's hook block by call id, in order: the hook's reason (``_HOOK_BRIEF``; "" when not a string),
    #: else None
    blocked: dict[str, list[str | None]] = field(default_factory=dict)
    #: why the log beside a session's context file was not read, for ``metadata.wire_log_missing``, else None
    missing: str | None = None
    #: the words of each steer, typed while a turn ran (``SteerInput``: a user message of the context file too)
    steers: set[str] = field(default_factory=set)
    #: the turns (by index in :attr:`turns`) a ``UserPromptSubmit`` hook blocked, with what Kimi said (its reason)
    blocked_turns: dict[int, str] = field(default_factory=dict)
    #: the turn begun whose first step is still to come, and what it said so far: a hook's block says its reason
    #: and ends the turn with no step (``kimisoul.py``: ``TurnBegin``, its ``ContentPart``, ``TurnEnd``)
    stepless: tuple[int, list[str]] | None = None

    def event(self, kind: Any, payload: dict[str, Any]) -> None:
        """A turn's begin, step, words and end: a turn ending before any step, having said something, on a prompt
        that is no slash command (``/clear`` and others run no step either) is one a hook blocked."""
        if kind == "TurnBegin":
            self.stepless = (len(self.turns), [])  # (called before the turn is added)
        elif kind == "StepBegin":
            self.stepless = None
        elif kind == "ContentPart" and self.stepless and payload.get("type") == "text":
            self.stepless[1].append(as_str(payload.get("text")) or "")
        elif kind == "TurnEnd" and self.stepless:
            index, said = self.stepless
            if said and not self.turns[index][1].startswith("/"):
                self.blocked_turns[index] = "".join(said)
            self.stepless = None

    def stop_hook_said(self, text: str, prompt: str) -> bool:
        """Whether a context file's user message ``text``, after the model's answer to ``prompt``, is what a ``Stop``
        hook said (``kimisoul.py``: its reason is run as a user message in the turn, no ``TurnBegin`` of its own): no
        turn or steer began with it, and the turn of ``prompt`` is no slash command's neighbour (a skill's text,
        ``/skill:x``, is the same shape, its turn the slash command's)."""
        words = [w for _, w in self.turns]
        if not words or text in words or text in self.steers or prompt not in words:
            return False
        ran = [w for i, w in enumerate(words) if i not in self.blocked_turns]
        return not any(a == prompt and b.startswith("/") for a, b in zip(ran, ran[1:]))

    def blocked_prompts(self, prompts: list[str]) -> list[dict[str, str]]:
        """The prompts a hook blocked in this context file's turns (each context file of a session is read with its
        one wire log): those the nearest turn that ran before (else after) is one of ``prompts``, or no turn ran."""
        ours, kept = set(prompts), []
        ran = [index for index, (_, words) in enumerate(self.turns)
               if index not in self.blocked_turns and not words.startswith("/")]
        for index, reason in self.blocked_turns.items():
            near = [i for i in ran if i < index][-1:] or [i for i in ran if i > index][:1]
            if not near or self.turns[near[0]][1] in ours:
                kept.append(hook_blocked_prompt(self.turns[index][1], reason, _PY_PROMPT_BLOCKED))
        return kept

    def time(self, calls: dict[str, list[dict[str, Any]]]) -> None:
        """Each call's ``started_at`` / ``ended_at``: the n-th step of an id takes its n-th ToolCall and ToolResult;
        a call the n-th ToolResult says a hook blocked was not run (the context file holds the hook's reason alone),
        if its context result agrees: Kimi numbers ids again after ``/clear`` (``Shell:0``), and every context file
        of a session is read with its one wire log, so the n-th result of an id may be another file's call."""
        for call_id, steps in calls.items():
            started, ended = self.called.get(call_id, ()), self.answered.get(call_id, ())
            for step, start, end in islice(zip_longest(steps, started, ended), len(steps)):
                step.update(started_at=start, ended_at=end)
            for step, reason in zip(steps, self.blocked.get(call_id, ())):
                said = _said_error(step.get("observation"))
                if reason is not None and said is not None and (not reason or said.strip() == reason.strip()):
                    step["error"] = _hook_blocked(said)

    def start(self, task: str, calls: dict[str, list[dict[str, Any]]]) -> datetime | None:
        """The run's start: the turn its task was typed in; a task the user typed in no turn (a compacted file's
        summary) starts at the last turn begun before its first call the log times."""
        if said := next((when for when, words in self.turns if words == task), None):
            return said
        first = min((self.called[c][0] for c in calls if c in self.called), default=None)
        return max((when for when, _ in self.turns if when <= first), default=None) if first else None


def read_with(path: Path) -> tuple[Path, ...]:
    """The adapter hook (see ``adapters/__init__``): a session's (or sub-agent's) context file is read with the wire
    log beside it, its times."""
    return (path.with_name(WIRE),) if _CONTEXT_FILE.fullmatch(path.name) else ()


def _wire(source: Path) -> _Wire:
    """The wire log beside a session's context file (``read_with``), as far as it reads: a line cut short or of
    another shape is passed over, as Kimi's own replay does (``WireFile.iter_records``); none, no times."""
    wire = _Wire()
    paths = read_with(source)
    if not paths:
        return wire
    path = paths[0]
    if not path.is_file():  # written as a session runs, since 2025-11-26: an older one moved, else trimmed or copied
        wire.missing = _WIRE_MISSING.format(f"no {WIRE} beside it")
        return wire
    try:
        with path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if not _WIRE_TIMED.search(line) and not (wire.stepless and '"ContentPart"' in line):
                    continue  # most lines are streamed parts: left unparsed
                try:
                    record = loads(line)
                except ValueError:
                    continue
                when, message = timestamp(as_dict(record).get("timestamp")), as_dict(as_dict(record).get("message"))
                payload = as_dict(message.get("payload"))
                if when is None:
                    continue
                wire.event(message.get("type"), payload)
                if message.get("type") == "TurnBegin":
                    wire.turns.append((when, parts_text(payload.get("user_input")).strip()))
                elif message.get("type") == "SteerInput":
                    wire.steers.add(parts_text(payload.get("user_input")).strip())
                elif message.get("type") == "ToolCall" and isinstance(payload.get("id"), str):
                    wire.called.setdefault(payload["id"], []).append(when)
                elif message.get("type") == "ToolResult" and isinstance(payload.get("tool_call_id"), str):
                    wire.answered.setdefault(payload["tool_call_id"], []).append(when)
                    value = as_dict(payload.get("return_value"))
                    hooked = value.get("is_error") is True and any(
                        as_dict(block).get("type") == "brief" and as_dict(block).get("text") == _HOOK_BRIEF
                        for block in as_list(value.get("display")))
                    wire.blocked.setdefault(payload["tool_call_id"], []).append(
                        (as_str(value.get("message")) or "") if hooked else None)
    except OSError as exc:
        log.warning("%s: not read (%s): the run's times stay unknown", path, exc)
        wire.missing = _WIRE_MISSING.format(f"{WIRE} not read ({exc})")
    return wire


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    lines = as_records(record, "Kimi CLI context")
    if _code_log(lines):
        return _code_trajectory(lines, ctx)
    if not _own(lines[0].get("role")):  # (as_records gives one line at least)
        raise RecordError("not a Kimi CLI context file: expected JSON lines opening with Kimi's own record "
                          '({"role": "_checkpoint", ...} or "_system_prompt"), then the messages; nor a Kimi Code '
                          'wire log, opening with its head {"type": "metadata", "protocol_version", "created_at"}')
    wire = _wire(ctx.source)
    walk = _Session(wire)
    tokens = None
    for line in lines:
        role = line.get("role")
        if role == "_usage" and isinstance(line.get("token_count"), int):
            tokens = line["token_count"]
        elif role == "user":
            walk.user(line.get("content"))
        elif role == "assistant":
            walk.assistant(line)
        elif role == "tool":
            walk.result(line)
        elif not _own(role):
            raise RecordError(f"a message of role {role!r}; a Kimi CLI context line is a message of role "
                              f"{', '.join(_MESSAGE_ROLES)} or one of Kimi's own records "
                              f"({', '.join(sorted(_OWN_ROLES))}, ...)")
    walk.close()
    if walk.summary is not None:
        walk.prompts.insert(0, f"(continued after compaction) {walk.summary}")
    blocked = wire.blocked_prompts(walk.prompts)
    if not walk.prompts and blocked:
        raise _only_prompt_blocked("Kimi CLI session", blocked[0], "session")
    if not walk.prompts:
        raise RecordError("no user prompt in this Kimi CLI context file: the session was opened and never asked "
                          "anything")
    wire.time(walk.calls)
    run, session, parent = _place(ctx)
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": session,
        "context_tokens": tokens,
        "compacted": walk.summary is not None or None,
        "is_subagent": parent is not None or None,
        "parent_session_id": parent,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
        "hook_blocked_prompts": blocked[:20] or None,
        "wire_log_missing": wire.missing,
    }
    return session_trajectory(ctx, run_id=f"{NAME}.{run}", task=walk.prompts[0], model_id=None, steps=walk.steps,
                              metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
                              created_at=wire.start(walk.prompts[0], walk.calls))


def side_path(path: Path, fmt: str | None) -> str | None:
    """Kimi's other files in a session's folder (its wire log, state, a sub-agent's meta, prompt and output): the
    run is the ``context.jsonl`` beside them. Kimi Code's background tasks and cron jobs, ``tasks/<id>.json`` and
    ``cron/<id>.json`` of a session or of an agent (``utils/per-id-json-store.ts``), hold none either."""
    if fmt not in (None, NAME):  # forced as kimi-cli, Kimi Code's files are named as when given alone
        return None
    if path.suffix == ".json" and path.parent.name in _CODE_NO_RUN_FOLDERS and (
            path.parent.parent.parent.name == "agents" or (path.parent.parent / "agents").is_dir()):
        return (f"Kimi Code's {path.parent.name}/ record (a background task or cron job), no run: the session's runs "
                "are its agents/*/wire.jsonl")
    # the name first: asked of every file no format claims, the folder test stats the files beside it
    if path.name not in _NO_RUN_FILES:
        return None
    if path.name == "state.json" and (path.parent / "agents").is_dir():
        return "Kimi Code's state.json of a session, no run: its runs are the agents/*/wire.jsonl beside it"
    if fmt is not None or not (path.parent.parent.name == "subagents" or _session_folder(path.parent, path)):
        return None
    return f"Kimi CLI's {path.name} of a session, no run: the run is the context.jsonl beside it"


class _CodeSession(_Session):
    """A Kimi Code wire log's records walked in order: prompts typed and others, steps by tool call id; the messages
    imported from the Python CLI's context file read as that file's (``_Session``)."""

    def __init__(self) -> None:
        super().__init__()
        self.other_prompts: list[str] = []  # prompts of another origin (a skill's, a sub-agent's, a reminder)
        self.model: str | None = None
        self.imported = False
        self.hooked: set[str] = set()  # imported calls a hook blocked (``toolCallDisplays``)
        #: what a ``UserPromptSubmit`` hook said of the prompt to come (:data:`_PROMPT_HOOK_SAID`): blocked, its words
        self.prompt_hook: tuple[bool, str] | None = None
        self.hook_blocked: list[dict[str, str]] = []  # prompts it blocked (``_common.hook_blocked_prompt``)
        self.hook_contexts: list[dict[str, str]] = []  # prompts it added context to (``_common.hook_prompt_context``)

    def hook_message(self, message: dict[str, Any], after_prompt: bool) -> bool:
        """Whether ``message`` (a ``context.append_message``'s) is a ``UserPromptSubmit`` hook's
        (:data:`_PROMPT_HOOK_SAID`) or the prompt it blocked, which no turn ran for: taken as such. The hook's words
        ``after_prompt`` (straight after the typed prompt's own message: agent-core v1) are of that prompt, else
        (agent-core-v2) of the prompt to come."""
        origin = as_dict(message.get("origin"))
        text = parts_text(message.get("content")).strip()
        if origin.get("kind") == "hook_result" and origin.get("event") == "UserPromptSubmit":
            said = "\n\n".join(m["said"] for m in _PROMPT_HOOK_SAID.finditer(text)) or text
            self.prompt_hook = (origin.get("blocked") is True, said)
            if after_prompt and self.prompts:
                self.hook_said(self.prompts.pop() if self.prompt_hook[0] else self.prompts[-1])
            return True
        # a steer the agent took up idle has no origin (``submitSteer``): the user's, as a prompt's (``prompt``)
        if self.prompt_hook and self.prompt_hook[0] and origin.get("kind", "user") == "user" \
                and message.get("role") == "user":
            self.hook_said(text)
            return True
        return False

    def hook_said(self, prompt: str) -> None:
        """What the ``UserPromptSubmit`` hook said (:attr:`prompt_hook`) taken as of ``prompt``: the prompt it
        blocked with its reason, else the context it added."""
        if self.prompt_hook is None:
            return
        blocked, said = self.prompt_hook
        if blocked:
            self.hook_blocked.append(hook_blocked_prompt(prompt, said, _PROMPT_HOOK_BLOCKED))
        else:
            self.hook_contexts.append(hook_prompt_context(prompt, said))
        self.prompt_hook = None

    def message(self, message: dict[str, Any]) -> None:
        """A message Kimi Code imported from the Python CLI (``migration-legacy``: the Python file's messages as
        ``context.append_message`` records of protocol 1.0, a call ``toolCalls`` [{type, id, function}], a tool's
        ``toolCallId``), read as the Python CLI's own; the result the import writes for a call the Python file left
        unanswered is none, so the call stays never answered, as the Python file reads. A call a hook blocked is
        told by the wire log's brief the import keeps (``tool-call-display.ts``: ``toolCallDisplays`` {id: {kind
        generic, summary ``Hook blocked``}}), as the Python CLI's is by its wire log (:meth:`_Wire.time`)."""
        self.imported = True
        role = message.get("role")
        if role == "user":
            self.user(message.get("content"))
        elif role == "assistant":
            self.assistant({**message, "tool_calls": message.get("toolCalls")})
            self.hooked.update(call_id for call_id, display in as_dict(message.get("toolCallDisplays")).items()
                               if as_dict(display).get("kind") == "generic"
                               and as_dict(display).get("summary") == _HOOK_BRIEF)
        elif role == "tool" and parts_text(message.get("content")) != _IMPORT_UNANSWERED:
            call_id = as_str(message.get("toolCallId"))
            step = self.by_call.get(call_id) if call_id else None
            self.result({**message, "tool_call_id": call_id})
            if step is not None and call_id in self.hooked and (said := _said_error(step["observation"])) is not None:
                step["error"] = _hook_blocked(said)

    def prompt(self, record: dict[str, Any]) -> None:
        text = parts_text(record.get("input")).strip()
        if not text:
            return
        if as_dict(record.get("origin")).get("kind", "user") == "user":
            self.flush()
            self.prompts.append(text)
            if self.prompt_hook and not self.prompt_hook[0]:
                self.hook_said(text)
            self.prompt_hook = None
        else:
            self.other_prompts.append(text)

    def event(self, event: dict[str, Any], at: Any) -> None:
        kind = event.get("type")
        if kind == "content.part":
            self.part(as_dict(event.get("part")), at)
        elif kind == "tool.call":
            self.open_call(as_str(event.get("toolCallId")), as_str(event.get("name")) or UNNAMED_TOOL,
                           event.get("args"), at)
        elif kind == "tool.result" and (step := self.by_call.pop(as_str(event.get("toolCallId")) or "", None)):
            result = as_dict(event.get("result"))
            output = parts_text(result.get("output"))
            step.update(observation=output or None, ended_at=iso_time(at))
            if result.get("isError") is not True:
                return
            if rejected := _CODE_NOT_RUN.match(output):  # rejected or denied: the message is the whole output
                step["error"] = not_run(rejected["reason"])
            elif output.strip() == _HOOK_BLOCKED:  # a hook's block giving no reason (one giving its own reads as
                step["error"] = _hook_blocked("")  # a failure: the log keeps no other mark of it)
            elif _CODE_INTERRUPTED.match(output):
                step["error"] = INTERRUPTED
            else:  # the error's message ends the output (``ToolResultBuilder.error``)
                body, _, said = output.rstrip().rpartition("\n")
                if _NO_OUTPUT.fullmatch(body.strip()):  # written in place of a silent command's output
                    body = ""
                step["error"] = _failure(f"ERROR: {said or 'the tool failed'}", body,
                                         command_line(step.get("arguments")))


def _code_place(ctx: Context) -> tuple[str, str | None, str | None]:
    """The run's id (after ``kimi-cli.``), its session's id and, for a sub-agent's log, its parent session's id: a
    log at ``<session id>/agents/<agent>/wire.jsonl`` is the session's (``main``) or a sub-agent's; else its place."""
    path = named_path(ctx.source)
    agent, agents, session = path.parent, path.parent.parent, path.parent.parent.parent
    if agents.name != "agents" or not agent.name or not session.name:
        return file_run_key(ctx, 1), None, None
    if agent.name == "main":
        return session.name, session.name, None
    return f"{session.name}.{agent.name}", None, session.name


def _only_prompt_blocked(what: str, blocked: dict[str, str], unit: str) -> PassedOver:
    """A session (or agent) whose only prompt a ``UserPromptSubmit`` hook blocked (``blocked``, as
    ``hook_blocked_prompt`` keeps it): no run, and nothing wrong in it: the user's own hook stopped it."""
    why = f" ({blocked['reason']})" if blocked.get("reason") else ""
    return PassedOver(f"a {what} whose only prompt a hook blocked", f"the only prompt of this {what} was blocked "
                      f"by a UserPromptSubmit hook{why}: the agent never ran", unit=unit)


def _typed_then_appended(records: tuple[dict[str, Any], ...]) -> bool:
    """Whether ``records`` are a prompt the user typed (``turn.prompt``) and its message appended to the context:
    agent-core v1 (Kimi Code's engine 2026-05..08, still ``kimi acp``'s) runs the ``UserPromptSubmit`` hook then,
    its words after them (``agent/turn/index.ts``: ``appendUserMessage``, ``applyUserPromptHook``); agent-core-v2
    before both (``promptService.ts``)."""
    if len(records) < 2 or [r.get("type") for r in records] != ["turn.prompt", "context.append_message"]:
        return False
    typed, message = records[0], as_dict(records[1].get("message"))
    return as_dict(typed.get("origin")).get("kind", "user") == "user" and message.get("role") == "user" \
        and as_dict(message.get("origin")).get("kind", "user") == "user"


def _code_trajectory(lines: list[dict[str, Any]], ctx: Context) -> Trajectory:
    """A Kimi Code agent's wire log as a run (module docstring)."""
    walk = _CodeSession()
    turned = False  # a turn logged: later messages are the agent's own (a prompt's, a reminder), none imported
    before: tuple[dict[str, Any], ...] = ()  # the two records before this one
    for line in lines:
        kind, at = line.get("type"), line.get("time")
        previous, before = before, (*before[-1:], line)
        if kind in ("turn.prompt", "turn.steer"):  # a steer: words typed while a turn runs, taken into it
            turned = True
            walk.prompt(line)
        elif kind == "context.append_loop_event":
            turned = True
            walk.event(as_dict(line.get("event")), at)
        elif kind == "context.append_message" and walk.hook_message(as_dict(line.get("message")),
                                                                    _typed_then_appended(previous)):
            continue  # a UserPromptSubmit hook's words, or the prompt it blocked
        elif kind == "context.append_message" and not turned and "origin" not in as_dict(line.get("message")):
            walk.message(line["message"])  # imported: before any turn, and with no origin (the agent names one)
        elif kind == "context.apply_compaction" and walk.summary is None and not walk.prompts:
            walk.summary = as_str(line.get("summary"))
        elif kind in ("usage.record", "llm.request") and as_str(line.get("model")):
            walk.model = line["model"]
    walk.close()
    if walk.summary:
        walk.prompts.insert(0, f"(continued after compaction) {walk.summary}")
    prompts = walk.prompts or walk.other_prompts[:1]
    if not prompts and walk.hook_blocked:
        raise _only_prompt_blocked("Kimi Code agent", walk.hook_blocked[0], "agent log")
    if not prompts and {line.get("type") for line in lines} <= _CODE_SET_UP:
        raise PassedOver("an agent set up, never run", "a Kimi Code agent's wire log holding its set-up alone: it was "
                         "never run", unit="agent log")
    if not prompts:
        raise RecordError("no prompt in this Kimi Code wire log: the agent was started and never asked anything")
    run, session, parent = _code_place(ctx)
    imported = _IMPORTED_FOLDER.fullmatch(session or "") if walk.imported else None
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": session,
        "imported_from_session_id": imported["session"] if imported else None,
        "compacted": walk.summary is not None or None,
        "is_subagent": parent is not None or None,
        "parent_session_id": parent,
        "user_prompts": prompt_list(prompts[1:]) or None,
        "hook_blocked_prompts": walk.hook_blocked[:20] or None,
        "hook_prompt_contexts": walk.hook_contexts[:20] or None,
        "protocol_version": lines[0].get("protocol_version"),
    }
    return session_trajectory(ctx, run_id=f"{NAME}.{run}", task=prompts[0], model_id=walk.model, steps=walk.steps,
                              metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
                              # a head without created_at (third-party writers): its first record's time
                              created_at=first_time(lines[0].get("created_at"), *(x.get("time") for x in lines)))
