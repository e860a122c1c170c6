"""``droid``: sessions of Factory's Droid CLI (``droid``, ``droid exec``), as it keeps them in
``~/.factory/sessions/<project folder>/<session id>.jsonl``.

Read from files the released CLI wrote (``@factory/cli-linux-x64`` 0.225.2, ``droid exec`` against a scripted
OpenAI-compatible server configured as a custom model: ``tests/fixtures/droid/.newag35/README.md``); its code ships
as a compiled binary only, so the record types and turn outcomes below are the ones it writes and its bundled
schema names (``agent_turn_outcome``'s ``reason`` values). No real session was found committed on GitHub: tools
reading Droid's sessions quote its records (a sub-agent's ``session_start`` quoted verbatim in entireio/cli's tests).

A session file is JSON lines; the first a ``session_start`` (``id``: the session's UUID, ``title``: its first words,
``sessionTitle`` once named, ``owner``, ``version``, ``cwd``, ``hostId``; a sub-agent's, which a ``Task`` call
spawned, also ``callingSessionId`` and ``callingToolUseId``), then:
- ``message`` (``id``, ``parentId``, ``timestamp``, ``message``: ``role``, ``content`` blocks as Anthropic's, or a
  string, which its schema allows): a user's text (and images, noted) is a prompt, but for the
  ``<system-reminder>`` blocks Droid adds; no message Droid's own prompt list passes over is (one a hook wrote,
  ``hookEventName``; ``hiddenFromUserViews``; ``isUserVisible`` false), nor one of a ``visibility``: ``llm_only``
  is Droid's context for the model (its ``context-`` message: the tool catalogue, skills, system information),
  ``user_only`` its notice to the user, never sent to the model (a provider's error:
  ``BYOK Error: 401 ...``), which is the error a turn that ended on it ends on; a user's
  ``tool_result`` (``tool_use_id``, ``is_error``, ``content``) is a call's result; an assistant's ``thinking``,
  ``text`` and ``tool_use`` (``id``, ``name``: ``Execute``, ``Read``, ``Edit``, ``Create``, ``LS``, ``Grep``,
  ``Task`` ..., ``input``) with its ``modelId``;
- ``agent_turn_outcome`` (``turnId``, ``reason``: ``completed``, ``cancelled``, ``error``, ``model_rate_limited``
  ...): how a turn ended;
- ``todo_state`` (the plan), ``compaction_state`` (``summaryText``, the summary a compaction replaced the history
  with): no step.
Beside it, ``<session id>.settings.json`` (``model``, ``tokenUsage`` ...) and its ``.bak``: read with the session,
and passed over by a walk.

Mapping: one session is one run, ``droid.<session id>``; task = the first prompt (later ones
``metadata.user_prompts``); steps = the tool calls with their results, the model's text with no call after it a
``respond`` step; a call's error is its result's when ``is_error`` (an ``Execute``'s by its exit code, written
``[Process exited with code N]``: a command answering "no" is none); a call the session ends without an answer to
never was answered; model_id = the last assistant message's ``modelId`` (else the settings' ``model``); outcome
unknown, but ``infra_error`` where the last turn ended on the provider's failure (a ``model_*`` reason or
``prompt_rejected``) with no work after it, Droid's notice its error; a sub-agent's session is its own run
(``metadata.is_subagent``, ``metadata.parent_session_id``), its result the parent's ``Task`` step's observation.
``droid exec``'s ``--output-format stream-json`` / ``json`` output is refused naming the session file: detected here
(before Claude Code, whose stream it mimics), not read as another CLI's.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, SessionSteps, as_records, as_str, command_line, error_line, exit_code_error,
                         first_time, iso_time, parts_text, prompt_list, session_trajectory, strip_reminders,
                         whole_file)
from ._common import Context, RecordError, as_dict, as_list, loads

NAME = "droid"
WHOLE_FILE = True
split = whole_file
#: Where Droid keeps its sessions, under the home folder: a walk of it reads them.
SESSION_FOLDERS = (".factory/sessions",)

#: The keys of a ``session_start`` Droid writes beyond ``type`` and ``id`` (any one tells it from another tool's
#: ``session_start`` event: enso's ``model`` / ``resumed``, kelix's ``session_id``).
_START_KEYS = frozenset({"owner", "hostId", "isSessionTitleManuallySet", "sessionTitle", "callingSessionId"})
#: The turn outcomes that are the model provider's failure, not the agent's work (the binary's ``zo`` enumeration).
_PROVIDER_FAILED = frozenset({"model_usage_exhausted", "model_authentication_failed", "model_request_rejected",
                              "model_provider_unreachable", "model_provider_unavailable", "model_rate_limited",
                              "prompt_rejected"})
#: How ``Execute`` ends a command's result: its exit code (after ``Error: Command failed (exit code: N)`` and the
#: output, when it failed).
_EXIT = re.compile(r"\n*\[Process exited with code (-?\d+)\]\s*\Z")
_FAILED_HEAD = re.compile(r"\AError: Command failed \(exit code: -?\d+\)\n?")
#: The sidecar of a session (``<id>.settings.json``) and Droid's backup of it.
_SIDECAR = re.compile(r"(?P<stem>.+)\.settings\.json(?:\.bak)?")


def matches(record: Any) -> bool:
    """A session file's first record, Droid's ``session_start``; or the first of ``droid exec``'s own output
    (:func:`_headless`), named so it is refused as Droid's, not read as Claude Code's stream or Qwen Code's result."""
    return isinstance(record, dict) and (
        record.get("type") == "session_start" and isinstance(record.get("id"), str)
        and not _START_KEYS.isdisjoint(record) or _headless(record) is not None)


def _headless(record: dict[str, Any]) -> str | None:
    """The ``--output-format`` of ``droid exec`` whose first record this is: ``stream-json``'s ``init`` (in Claude
    Code's shape, but Droid's tools: ``Execute``, no ``Bash``) or ``json``'s ``result`` (its usage in
    ``factory_credits`` too); None for any other."""
    tools = record.get("tools")
    if record.get("subtype") == "init" and isinstance(tools, list) and "Execute" in tools and "Bash" not in tools:
        return "stream-json"
    if record.get("type") == "result" and "factory_credits" in as_dict(record.get("usage")):
        return "json"
    return None


#: How a session file Droid wrote opens (its first record's first key), told from the first bytes alone.
_SESSION_HEAD = re.compile(rb'\A\s*\{\s*"type"\s*:\s*"session_start"')


def _sidecar(path: Path) -> Path:
    return path.with_name(f"{path.stem}.settings.json")


def _pair(session: Path, sidecar: Path) -> bool:
    """Whether ``sidecar`` is Droid's settings of ``session``: both there, and the session opening as Droid's does
    (its first bytes read only where the sidecar is there: by name alone, another tool's session copied beside a
    same-named settings file had it in its checkpoint fingerprint, and the settings named Droid's)."""
    if not (sidecar.is_file() and session.is_file()):
        return False
    try:
        with session.open("rb") as file:
            return _SESSION_HEAD.match(file.read(64)) is not None
    except OSError:
        return False


def read_with(path: Path) -> tuple[Path, ...]:
    """A session's settings beside it (its model and token usage), which Droid rewrites as the session goes on. Only
    where it is there: asked of every file of every format, a settings file named for each JSON lines file would
    change every checkpoint's fingerprint of them (and have them read again)."""
    return (sidecar,) if path.suffix == ".jsonl" and _pair(path, sidecar := _sidecar(path)) else ()


def side_path(path: Path, fmt: str | None) -> str | None:
    """A session's settings file (or Droid's ``.bak`` of it) beside its session file: read with it, no run."""
    found = _SIDECAR.fullmatch(path.name)
    if fmt not in (None, NAME) or found is None or not _pair(path.with_name(f"{found['stem']}.jsonl"), path):
        return None
    return f"Droid's settings of session {found['stem']} (model, token usage), read with its session file"


def _settings(ctx: Context) -> dict[str, Any]:
    """The session's settings beside it, if there and readable JSON (``loads``: no deeper than a record may be);
    else none (a session copied alone, a settings file that is no JSON or too deep)."""
    try:
        return as_dict(loads(_sidecar(ctx.source).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _result_error(output: str, command: str | None) -> str | None:
    """A failed call's error: a command's by its exit code (``exit_code_error``: none for one answering "no"), any
    other's the line of its result saying what went wrong."""
    end = _EXIT.search(output)
    if end is None:
        return error_line(output)
    return exit_code_error(_FAILED_HEAD.sub("", output[:end.start()]), int(end.group(1)), command)


def _unseen(message: dict[str, Any]) -> bool:
    """A user message Droid's own prompt list passes over (the binary's picker): a hook's, or one hidden from the
    user's views, which a future Droid may inject with no ``visibility``."""
    return bool(message.get("hookEventName")) or message.get("hiddenFromUserViews") is True \
        or message.get("isUserVisible") is False


class _Session(SessionSteps):
    """A session's records walked in order: prompts, steps by call id, and how its last turn ended."""

    def __init__(self) -> None:
        super().__init__()
        self.notice: str | None = None  # Droid's last notice to the user since the model last worked
        self.turn_outcome: str | None = None
        self.compactions = 0
        self.model: str | None = None  # the last assistant message's modelId

    def user(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        for block in as_list(message.get("content")):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self.result(record, block)
        text = strip_reminders(parts_text(message.get("content")))  # a string or blocks: tool results not text
        if not text or message.get("visibility") == "llm_only" or _unseen(message):
            return
        if message.get("visibility") == "user_only":
            self.notice = text
            return
        self.flush()
        self.prompts.append(text)
        self.notice = self.last_error = None

    def assistant(self, record: dict[str, Any], message: dict[str, Any]) -> None:
        self.notice = self.last_error = None
        self.model = as_str(message.get("modelId")) or self.model
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content)
        for block in (b for b in blocks if isinstance(b, dict)):
            kind = block.get("type")
            if kind == "thinking" and (thinking := as_str(block.get("thinking"))) and thinking.strip():
                self.thought.append(thinking)
            elif kind == "text" and (text := as_str(block.get("text"))) and text.strip():
                self.say(text.strip(), record.get("timestamp"))
            elif kind == "tool_use":
                self.open_call(as_str(block.get("id")), as_str(block.get("name")) or "(unnamed tool)",
                               block.get("input"), record.get("timestamp"))

    def result(self, record: dict[str, Any], block: dict[str, Any]) -> None:
        step = self.by_call.pop(block.get("tool_use_id"), None) if isinstance(block.get("tool_use_id"), str) else None
        if step is None:
            return  # an answer to no recorded call (compacted away)
        output = parts_text(block.get("content"))
        step["observation"] = output or None
        step["ended_at"] = iso_time(record.get("timestamp"))
        if block.get("is_error") is True:
            step["error"] = _result_error(output, command_line(step.get("arguments")))

    def turn_ended(self, reason: str | None) -> None:
        """A turn's outcome: the provider's failure is the error the session ends on, unless work follows."""
        self.turn_outcome = reason
        if reason in _PROVIDER_FAILED:
            self.last_error = self.notice or f"the turn ended: {reason}"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    records = as_records(record, "Droid session")
    start = records[0]
    if (output := _headless(start)) is not None:
        session = as_str(start.get("session_id")) or "<session id>"
        raise RecordError(f"the output of `droid exec --output-format {output}`, not Droid's session: ingest the "
                          f"session file, ~/.factory/sessions/<project>/{session}.jsonl, which holds the run")
    if not matches(start):  # a format forced on another file
        raise RecordError("not a Droid session: expected a file opening with Droid's session_start record")
    walk = _Session()
    for line in records[1:]:
        kind, message = line.get("type"), as_dict(line.get("message"))
        if kind == "message" and message.get("role") == "user":
            walk.user(line, message)
        elif kind == "message" and message.get("role") == "assistant":
            walk.assistant(line, message)
        elif kind == "agent_turn_outcome":
            walk.turn_ended(as_str(line.get("reason")))
        elif kind == "compaction_state":
            walk.compactions += 1
    walk.close()
    if not walk.prompts:
        raise RecordError("no user prompt in this Droid session")
    settings = _settings(ctx)
    model = walk.model or as_str(settings.get("model"))
    usage = as_dict(settings.get("tokenUsage"))
    # the tokens the model read and wrote; its cache reads and writes, which the sidecar keeps apart, not again
    tokens = sum(n for k in ("inputTokens", "outputTokens") if isinstance(n := usage.get(k), int))
    parent = as_str(start.get("callingSessionId"))
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": start["id"],
        "session_name": as_str(start.get("sessionTitle")) or as_str(start.get("title")) or None,
        "cwd": as_str(start.get("cwd")),
        "turn_outcome": walk.turn_outcome,
        "compactions": walk.compactions or None,
        "total_tokens": tokens or None,
        "is_subagent": parent is not None or None,  # a part of its parent's run: never a Harbor trial's run
        "parent_session_id": parent,
        "parent_call_id": as_str(start.get("callingToolUseId")) if parent else None,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{start['id']}", task=walk.prompts[0], model_id=model, steps=walk.steps,
        metadata=metadata, last_error=walk.last_error, error_cause=API_ERROR_CAUSE,
        created_at=first_time(*(r.get("timestamp") for r in records[1:])))  # todo_state, compaction_state: none
