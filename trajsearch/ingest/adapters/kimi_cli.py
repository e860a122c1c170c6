"""``kimi-cli``: sessions of Kimi Code CLI (MoonshotAI/kimi-cli, ``kimi``), the terminal coding agent, as its context
file keeps them.

Source read: MoonshotAI/kimi-cli at 4a550ef (1.49.0, 2026) and at 0b88d48 (Oct 2025): ``src/kimi_cli/soul/context.py``
(the file's lines), ``soul/message.py`` (``tool_result_to_message``: how a tool's result is written),
``tools/shell`` (``tools/bash`` in 2025: a command's failure), ``session.py`` and ``subagents/store.py`` (where the
files lie). Real files: the five committed in MoonshotAI/kimi-cli at 0b88d48 (``outputs/``, two SWE-bench runs of one
task and their three context-gathering sub-agents; the fixture is trimmed from them:
``tests/fixtures/kimi-cli/.newfmt2-30/README.md``).

Kimi keeps a session's model context as JSON lines, appended as the session runs:
``~/.kimi/sessions/<work dir hash>/<session id>/context.jsonl`` (a sub-agent's beside its session's, in
``subagents/<agent id>/context.jsonl``; ``/clear`` rotates the file to ``context_<n>.jsonl`` and starts anew); until
late 2025 ``<work dir hash>/<session id>.jsonl``, a sub-agent's ``<session id>_<name>.jsonl``. Each line is a
message (``role`` ``user``, ``assistant``, ``tool``, its ``content`` a string or typed parts, ``text``, ``think``,
``image_url``...; an assistant's ``tool_calls`` ``[{type: function, id, function: {name, arguments}}]``; a tool's
``tool_call_id``) or one of Kimi's own records: ``{"role": "_system_prompt", "content"}``, ``{"role":
"_checkpoint", "id"}`` (before each turn and step) and ``{"role": "_usage", "token_count"}`` (the context's size).
A tool's result opens with ``<system>message</system>``: ``<system>ERROR: message</system>`` for a tool that failed
(then its output); Kimi of October 2025 wrote a failure's message without ``ERROR:``, told by the shell's own words
(``Command failed with exit code: N.``, ``Command killed by timeout (Ns)``).

Mapping: a file is one run; task = the first user text (later ones ``metadata.user_prompts``; Kimi's own user
messages, ``<system>CHECKPOINT n</system>`` and ``<system-reminder>`` blocks, are none); steps = the tool calls with
their results (thought: the ``think`` parts and text before the call), a reply with no call a ``respond`` step; a
failed tool's step error is its message (a command's: its output's decisive line and exit code,
``exit_code_error``), a call the file ends without an answer to failed; outcome unknown (a session records no
verdict); model: not recorded (the file names none). The file holds no session id and no time: the id is the one
Kimi gives the session, its folder's or file's name, ``kimi-cli.<session id>`` (a sub-agent's
``kimi-cli.<session id>.<agent>``, ``metadata.is_subagent``, ``metadata.parent_session_id``; a rotated file's
``.context_<n>`` after it), so a copy keeping its name is the same run; a file otherwise named is named by its place
(``file_run_key``): what was said cannot be the id (two runs of one task open alike, as the real ones do).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, SessionSteps, as_records, as_str, error_line, exit_code_error,
                         join_thought, json_arguments, parts_text, prompt_list, session_trajectory, whole_file)
from ._common import Context, RecordError, as_dict, as_list, file_run_key, file_stem, named_path, short

NAME = "kimi-cli"
WHOLE_FILE = True
#: Where Kimi keeps its sessions: a walk of a home reads them.
SESSION_FOLDERS = (".kimi/sessions",)
#: Kimi's own records among a context file's messages.
_OWN_ROLES = frozenset({"_system_prompt", "_checkpoint", "_usage"})
_MESSAGE_ROLES = frozenset({"user", "assistant", "tool"})
#: A session's id as Kimi names it (a UUID), and a file named by it: a session's, or a sub-agent's of it (2025).
_SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SESSION_FILE = re.compile(rf"(?P<session>{_SESSION_ID.pattern})(?:_(?P<agent>.+))?")
_CONTEXT_FILE = re.compile(r"context(?:_(?P<rotation>\d+))?\.jsonl")
#: The message opening a tool's result, and a failure in it: Kimi's ``ERROR:``, or the shell's own words (2025).
_SYSTEM = re.compile(r"\A<system>(?P<message>.*?)</system>", re.S)
_ERROR = re.compile(r"\AERROR: (?P<message>.*)\Z", re.S)
_EXIT = re.compile(r"\ACommand failed with exit code: (?P<code>-?\d+)\.")
_KILLED = re.compile(r"\ACommand killed by timeout")
#: User messages Kimi writes itself: a checkpoint's note, a reminder, its note on a tool's images.
_OWN_USER_TEXT = re.compile(r"\A\s*(?:<system>CHECKPOINT \d+</system>|<system-reminder>)")


def matches(record: Any) -> bool:
    """A context file's first line: one of Kimi's own records (``_checkpoint`` opens every session it writes, a
    ``_system_prompt`` since 2026)."""
    return isinstance(record, dict) and record.get("role") in _OWN_ROLES and (
        "id" in record or "token_count" in record or isinstance(record.get("content"), str))


split = whole_file


def _place(ctx: Context) -> tuple[str, str | None]:
    """The run's id (after ``kimi-cli.``) and, for a sub-agent's file, its session's id, as the file's place names
    them (module docstring)."""
    path = named_path(ctx.source)
    if context := _CONTEXT_FILE.fullmatch(path.name):
        folder = path.parent
        rotated = f".context_{context['rotation']}" if context["rotation"] else ""
        if folder.parent.name == "subagents" and _SESSION_ID.fullmatch(folder.parent.parent.name):
            session = folder.parent.parent.name
            return f"{session}.{folder.name}{rotated}", session
        if _SESSION_ID.fullmatch(folder.name):
            return f"{folder.name}{rotated}", None
    elif named := _SESSION_FILE.fullmatch(file_stem(ctx.source, (".jsonl",))):
        if named["agent"]:
            return f"{named['session']}.{named['agent']}", named["session"]
        return named["session"], None
    return file_run_key(ctx, 1), None


def _failure(message: str, output: str, command: str | None) -> str | None:
    """A failed tool's error from its result's message (``ERROR:`` taken off) and output; None for a command whose
    exit code answers "no" (grep's 1 with no output: ``exit_code_error``)."""
    if exit_code := _EXIT.match(message):
        return exit_code_error(output, int(exit_code["code"]), command)
    if _KILLED.match(message):
        line = error_line(output, "")
        return f"{line} ({message})" if line else message
    return short(message.strip().splitlines()[0], 500, keep="head") if message.strip() else error_line(output)


class _Session(SessionSteps):
    """A context file's messages walked in order: prompts, and steps by tool call id."""

    def user(self, content: Any) -> None:
        text = parts_text(content).strip()
        if text and not _OWN_USER_TEXT.match(text):
            self.flush()
            self.prompts.append(text)

    def assistant(self, message: dict[str, Any]) -> None:
        content = message.get("content")
        for part in as_list(content) if not isinstance(content, str) else [{"type": "text", "text": content}]:
            part = as_dict(part)
            if part.get("type") == "think" and (think := as_str(part.get("think"))):
                self.thought.append(think)
            elif part.get("type") == "text" and (text := as_str(part.get("text"))) and text.strip():
                self.narration.append(text.strip())
        for call in as_list(message.get("tool_calls")):
            function = as_dict(as_dict(call).get("function"))
            step = {"thought": join_thought(self.thought + self.narration),
                    "action": as_str(function.get("name")) or "(unnamed tool)",
                    "arguments": json_arguments(function.get("arguments"))}
            self.thought, self.narration = [], []
            self.steps.append(step)
            if isinstance(call_id := as_dict(call).get("id"), str):
                self.by_call[call_id] = step

    def result(self, message: dict[str, Any]) -> None:
        step = self.by_call.pop(message.get("tool_call_id"), None) if isinstance(message.get("tool_call_id"),
                                                                                   str) else None
        if step is None:
            return  # an answer to no recorded call
        text = parts_text(message.get("content"))
        step["observation"] = text or None
        head = _SYSTEM.match(text)
        said = head["message"] if head else ""
        output = text[head.end():].lstrip("\n") if head else text
        failed = _ERROR.match(said)
        command = as_str(as_dict(step.get("arguments")).get("command"))
        if failed or _EXIT.match(said) or _KILLED.match(said):
            step["error"] = _failure(failed["message"] if failed else said, output, command)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    lines = as_records(record, "Kimi CLI context")
    if not any(line.get("role") in _OWN_ROLES for line in lines[:1]):
        raise RecordError("not a Kimi CLI context file: expected JSON lines opening with Kimi's own record "
                          '({"role": "_checkpoint", ...} or "_system_prompt"), then the messages')
    walk = _Session()
    tokens = None
    for number, line in enumerate(lines, 1):
        role = line.get("role")
        if role == "_usage" and isinstance(line.get("token_count"), int):
            tokens = line["token_count"]
        elif role == "user":
            walk.user(line.get("content"))
        elif role == "assistant":
            walk.assistant(line)
        elif role == "tool":
            walk.result(line)
        elif role not in _OWN_ROLES:
            raise RecordError(f"line {number}: a message of role {role!r}; a Kimi CLI context line is a "
                              f"{', '.join(sorted(_MESSAGE_ROLES))} message or one of {', '.join(sorted(_OWN_ROLES))}")
    walk.close()
    if not walk.prompts:
        raise RecordError("no user prompt in this Kimi CLI context file: the session was opened and never asked "
                          "anything")
    run, parent = _place(ctx)
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": run if parent is None and _SESSION_ID.fullmatch(run) else None,
        "context_tokens": tokens,
        "is_subagent": parent is not None or None,
        "parent_session_id": parent,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
    }
    return session_trajectory(ctx, run_id=f"{NAME}.{run}", task=walk.prompts[0], model_id=None, steps=walk.steps,
                              metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE, created_at=None)


def side_path(path: Path, fmt: str | None) -> str | None:
    """Kimi's other files in a session's folder (its wire log, state, a sub-agent's meta, prompt and output): the
    run is the ``context.jsonl`` beside them."""
    if fmt is not None or not _SESSION_ID.fullmatch(path.parent.name if path.parent.parent.name != "subagents"
                                                    else path.parent.parent.parent.name):
        return None
    if path.name in {"wire.jsonl", "state.json", "meta.json", "prompt.txt", "output"}:
        return f"Kimi CLI's {path.name} of a session, no run: the run is the context.jsonl beside it"
    return None
