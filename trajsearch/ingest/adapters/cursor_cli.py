"""``cursor-cli``: Cursor's CLI (``cursor-agent`` / ``agent``) headless ``--output-format stream-json`` output, one
run a file.

Cursor's CLI is closed source: read from whole streams it wrote (cagase/dsh-cursor ``fixtures/live/``), its
output as captured verbatim from Cursor CLI 2026.08.11 (identifying ids replaced) in ZhengyiLuo/AgentsServer
``tests/test_cursor_agent_client.py`` (see ``tests/fixtures/cursor-cli/.newcli30/README.md``) and Cursor's
output-format reference as projects quoting it describe it. It is Claude Code's stream shape with Cursor's own
events, and was read as Claude Code's, its tool calls lost:
- ``{"type": "system", "subtype": "init", "apiKeySource", "cwd", "session_id", "model", "permissionMode"}`` first
  (none of the fields one of which every Claude Code ``init`` has, ``uuid``, ``claude_code_version``, ``tools``,
  ``mcp_servers``, ``agents``: how the file is told apart);
- ``user`` / ``assistant`` lines, ``{"message": {"role", "content": [{"type": "text", "text"}]}}``: the prompt (the
  CLI echoes it) and what the model said;
- ``thinking`` lines (``subtype`` ``delta`` with ``text``, then ``completed``): the model's reasoning, in pieces;
- ``tool_call`` lines, ``subtype`` ``started`` then ``completed``, with ``call_id`` and ``tool_call``:
  ``{"<kind>ToolCall": {"args", "result": {<outcome>: {...}}}}`` (``shellToolCall``, ``readToolCall``,
  ``editToolCall``, ``globToolCall``, ``grepToolCall`` ...); the outcome ``success`` (a command's ``exitCode``,
  ``stdout``, ``stderr``) and the other ends that are no failure (``complete``, ``registered``, ``*Success``; not
  yet ended: ``async``, ``stillRunning`` ...), or ``rejected`` (the CLI refused to run it: a shell call without
  ``--force``), ``failure``, ``error``, ``timeout``, ``permissionDenied``, ``fileNotFound`` ...;
- ``{"type": "result", "subtype", "is_error", "result", "duration_ms", "session_id", "request_id", "usage"}`` last.

Mapping: task = the first user text (later ones ``metadata.user_prompts``); steps = the tool calls in the order they
started, their action the kind (``shell``, ``read``, ``edit`` ...; an MCP tool's ``mcp__<server>__<tool>``, a generic
``function`` call its ``name``), arguments its ``args`` (an MCP tool's own), observation the command's output, an MCP
result's text, a sub-agent's (``taskToolCall``) answer (the last assistant message of its ``conversationSteps``) or
the outcome's fields; failed when the outcome is a failure (its error, reason or path named; ``rejected`` not run), a
command's ``exitCode`` is not 0 (its decisive line and the code) or an MCP result says ``isError``; a call never
completed failed (never answered); the model's text after the last call a ``respond`` step; model_id = the
``init``'s ``model`` (the name Cursor shows: ``Auto``, ``Claude 4 Sonnet``); outcome unknown unless the ``result``
is an error (``is_error``: the CLI's or the provider's, ``infra_error``; out of context: the agent's failure) or the
stream ends on the CLI's ``retry`` of the model with no ``result`` (``infra_error``); trajectory_id =
``cursor-cli.<session id>.<digest of the prompt>`` (a ``--resume``d chat's next run shares its session id);
created_at = the first ``timestamp_ms``.
A sub-agent's conversation is only in its task call's result (``conversationSteps``: ``thinkingMessage``,
``toolCall``, ``assistantMessage``; nothing of it in the parent's stream): it is a run of its own (:func:`split`),
``cursor-cli.<session id>.<agentId>`` (else its task call's id, else its line), task its ``prompt``, model its
``model``, its calls read as the stream's, ``metadata.is_subagent`` and ``parent_session_id``.
``--output-format json`` (the final ``result`` alone: no prompt, no steps) is refused saying so; with
``--stream-partial-output`` the ``assistant`` lines are pieces of the text, joined as they come, then the whole
message once more, which is dropped.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Iterator, NamedTuple

from trajsearch.actions import not_run
from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, SessionSteps, as_records, as_str, command_line, error_line,
                         exit_code_error, first_time, iso_time, json_arguments, mcp_blocks_text, parts_text,
                         prompt_list, session_trajectory)
from ._common import Context, RecordError, as_dict, item_positions

NAME = "cursor-cli"
#: A file is one headless run (with its sub-agents' runs: :func:`split`).
WHOLE_FILE = True

#: Fields every Claude Code ``init`` line has one of (its stream-json, old and new, and a web session's), and
#: Cursor's has none of: Cursor's docs say fields may be added to its events, so no fixed list of its own is required.
_CLAUDE_INIT_FIELDS = frozenset({"uuid", "claude_code_version", "tools", "mcp_servers", "agents"})
_SUFFIX = "ToolCall"


def _is_init(record: Any) -> bool:
    return (isinstance(record, dict) and record.get("type") == "system" and record.get("subtype") == "init"
            and isinstance(record.get("session_id"), str) and "apiKeySource" in record
            and _CLAUDE_INIT_FIELDS.isdisjoint(record))


def _is_tool_line(record: Any) -> bool:
    return (isinstance(record, dict) and record.get("type") == "tool_call"
            and record.get("subtype") in ("started", "completed") and isinstance(record.get("tool_call"), dict))


#: The fields of Cursor's ``user`` / ``assistant`` lines. Claude Code's stream-json lines add ``uuid`` and
#: ``parent_tool_use_id`` (old ones neither), and its messages are the API's (``id``, ``model``, ``usage`` ...)
#: or, for ``user``, tool results: never a bare ``{role, content}`` of text parts.
_CONVERSATION_FIELDS = frozenset({"type", "message", "session_id", "timestamp_ms", "model_call_id"})


def _is_said_line(record: Any) -> bool:
    """A ``user`` or ``assistant`` line of Cursor's shape: ``{"message": {"role", "content": [text parts]},
    "session_id"}`` and nothing of Claude Code's."""
    if not (isinstance(record, dict) and record.get("type") in ("user", "assistant")
            and isinstance(record.get("session_id"), str) and _CONVERSATION_FIELDS.issuperset(record)):
        return False
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) and set(message) == {"role", "content"} else None
    return isinstance(content, list) and bool(content) and all(
        isinstance(part, dict) and part.get("type") == "text" for part in content)


def matches(record: Any) -> bool:
    """A stream's first line: Cursor's ``init`` (or, cut before it, a ``tool_call``, ``user`` or ``assistant`` line of
    Cursor's shape: the line after ``init`` is the prompt, which Claude Code's reader took, losing every call)."""
    return _is_init(record) or _is_tool_line(record) or _is_said_line(record)


def not_a_run(record: Any) -> str | None:
    """``--output-format json``: the final ``result`` alone, told from Claude Code's by Cursor's ``request_id`` (and
    no ``num_turns``)."""
    if (isinstance(record, dict) and record.get("type") == "result" and isinstance(record.get("session_id"), str)
            and "request_id" in record and "num_turns" not in record):
        return ("this is the final result of a headless Cursor CLI run (`cursor-agent -p --output-format json`): the "
                "answer, not the prompt or the steps; run it with `--output-format stream-json` and ingest that "
                f"(session {record['session_id']}; Cursor's own chat store is not read)")
    return None


def tool_kind(key: str) -> str:
    """A tool's name as Cursor's stream keys its call, ``shellToolCall``, as the kind it is, ``shell``."""
    return key.removesuffix(_SUFFIX) or key


def tool_name(key: str, args: Any) -> tuple[str, Any]:
    """(name, arguments) of a call Cursor keys ``key`` with ``args``: ``shellToolCall`` -> ``shell`` with its
    ``args``; an MCP tool's (``mcpToolCall``, ``args`` ``{name: "<server>-<tool>", toolName, providerIdentifier,
    args}``) named as Claude Code and Codex name one, ``mcp__<server>__<tool>``, with the tool's own ``args``. The
    one naming of Cursor's calls: this stream's and Harbor's ATIF of it (``atif``, which keeps the key as the
    call's name and ``args`` as its arguments), so a search by tool finds a call read from either."""
    if key == "mcpToolCall" and isinstance(args, dict) and args:
        server = as_str(args.get("providerIdentifier")) or as_str(args.get("serverIdentifier"))
        tool = as_str(args.get("toolName"))
        name = f"mcp__{server}__{tool}" if server and tool else as_str(args.get("name")) or tool
        if name:
            return name, as_dict(args.get("args")) if "args" in args else args
    return tool_kind(key), args


class _Call(NamedTuple):
    """A ``tool_call`` line's call: the tool's name, its arguments, its ``result``, the id that pairs its lines."""

    name: str
    arguments: dict[str, Any]
    result: Any
    call_id: str | None


def _call(record: dict[str, Any]) -> _Call:
    """The call of a ``tool_call`` line (``started`` or ``completed``) or of a sub-agent's ``toolCall``: the one
    ``<kind>ToolCall`` key (:func:`tool_name`), else a generic ``function`` call (``{name, arguments}``, its
    arguments a JSON string: Cursor's output-format reference; no real stream with one was found). Its id is the
    line's ``call_id``, else the ``toolCallId`` the newest CLI writes beside the call (cagase/dsh-cursor
    ``stream-json-events.txt``, 2026-10) or in its ``args``."""
    tool_call = record["tool_call"]
    key, body = _keyed(tool_call)
    if body is None:
        function = as_dict(tool_call.get("function"))
        arguments = json_arguments(function.get("arguments"))
        name = as_str(function.get("name")) or "function"
        body = {"result": function.get("result")}
        named = name, arguments if isinstance(arguments, dict) else {"input": arguments}
    else:
        named = tool_name(key, as_dict(body.get("args")))
    return _Call(*named, body.get("result"), _call_id(record.get("call_id"), tool_call))


def _keyed(tool_call: dict[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """A ``tool_call``'s one ``<kind>ToolCall`` key and its body, else (None, None)."""
    return next(((k, v) for k, v in tool_call.items() if k.endswith(_SUFFIX) and isinstance(v, dict)), (None, None))


def _call_id(line_id: Any, tool_call: dict[str, Any]) -> str | None:
    """The id that pairs a call's lines (see :func:`_call`): its line's ``call_id`` (none for a sub-agent's step),
    else the ``tool_call``'s own; on its own, so :func:`split` pairs them without reading the whole call."""
    return as_str(line_id) or as_str(tool_call.get("toolCallId")) or as_str(
        as_dict(as_dict(_keyed(tool_call)[1]).get("args")).get("toolCallId"))


def _outcome(result: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The one outcome a completed call's ``result`` names (``success``, ``rejected``, ``failure`` ...) and its
    fields; other keys (``pid``, ``sandboxPolicy``) are no outcome."""
    for key, value in result.items():
        if isinstance(value, dict):
            return key, value
    return None, {}


def _observation(kind: str, fields: dict[str, Any]) -> str | None:
    """What a call gave back: a command's output (stdout, then stderr), an MCP result's text, a sub-agent's
    answer, else the outcome's fields as JSON."""
    if kind == "shell" or "stdout" in fields or "stderr" in fields:
        text = "\n".join(t for t in (as_str(fields.get("stdout")), as_str(fields.get("stderr"))) if t and t.strip())
        return text or None
    if isinstance(fields.get("content"), list):  # an MCP tool's result
        return _mcp_text(fields["content"]) or None
    if isinstance(fields.get("conversationSteps"), list):  # a sub-agent's (``taskToolCall``): its last word
        said = [as_str(as_dict(as_dict(s).get("assistantMessage")).get("text")) for s in fields["conversationSteps"]]
        return next((t.strip() for t in reversed(said) if t and t.strip()), None)
    return json.dumps(fields, ensure_ascii=False) if fields else None


def _mcp_text(content: list[Any]) -> str:
    """The text of an MCP result's ``content``: Cursor writes each block keyed by its type, ``{"text": {"text":
    "..."}}`` (a verbatim completed ``mcpToolCall``, Cursor CLI's "Composer 2.5 Fast", quoted in a ``cursorbuild``
    package's ``tests/test_sidecar.py``), read as the MCP block it stands for, ``{"type": "text", "text": "..."}``."""
    return mcp_blocks_text([_mcp_block(block) for block in content if isinstance(block, dict)])


def _mcp_block(block: dict[str, Any]) -> dict[str, Any]:
    if "type" not in block and len(block) == 1:
        [(kind, value)] = block.items()
        if isinstance(value, dict):
            return {"type": kind, **value}
    return block


#: Outcomes that end a call well (ZhengyiLuo/AgentsServer's captured lines name them: ``awaitToolCall`` ends
#: ``complete``, a PR tool ``registered``, screen recording ``startSuccess`` / ``saveSuccess`` / ``discardSuccess``),
#: and outcomes that are no end yet (the call goes on, or waits): neither is a failure.
_SUCCEEDED = frozenset({"success", "complete", "registered"})
_NOT_ENDED = frozenset({"approved", "async", "stillRunning", "needsConfirmation"})


def outcome_error(outcome: str | None, fields: dict[str, Any], command: str | None) -> str | None:
    """Why a Cursor CLI call failed, given the outcome its ``result`` names and that outcome's fields: a command's
    non-zero ``exitCode`` (its decisive line and the code), ``rejected`` (not run: a headless run without
    ``--force`` refuses commands; its reason), or any other outcome not a success (its error, reason or path).
    The one reading of Cursor's outcomes: this stream's and Harbor's ATIF of it (``atif``) both use it."""
    code = fields.get("exitCode")
    exited = code if isinstance(code, int) and not isinstance(code, bool) else None
    if outcome in _SUCCEEDED or (outcome or "").endswith("Success") or outcome in _NOT_ENDED:
        # an MCP tool that ran and answered with an error: the MCP spec's ``CallToolResult.isError``, which Cursor
        # keeps (``"isError": false`` in real lines); no real line with ``true`` was found
        if fields.get("isError") is True:
            said = _mcp_text(fields["content"]) if isinstance(fields.get("content"), list) else ""
            return error_line(said, "the MCP tool returned an error")
        if exited:
            return exit_code_error("\n".join(filter(None, (as_str(fields.get("stdout")),
                                                           as_str(fields.get("stderr"))))), exited, command)
        return None
    if outcome is None:
        return "no outcome recorded"
    detail = next((s for key in ("error", "errorMessage", "message", "reason", "stderr", "path", "command")
                   if (s := as_str(fields.get(key))) and s.strip()), "")
    if outcome == "rejected":
        reason = as_str(fields.get("reason"))
        return not_run(f"rejected: {error_line(reason)}" if reason and reason.strip() else "rejected")
    if outcome == "failure" and exited is not None:
        return exit_code_error(as_str(fields.get("stderr")) or as_str(fields.get("stdout")), exited, command) or \
            f"exit code {exited}"
    return error_line(detail, outcome) if outcome in ("failure", "error") else \
        f"{outcome}: {error_line(detail, '')}".rstrip(": ")


class _Stream(SessionSteps):
    """A stream's lines walked in order: prompts, reasoning, text, and steps by call id."""

    def __init__(self) -> None:
        super().__init__()
        self.reasoning = ""
        self.text = ""
        self.retrying: str | None = None

    def said(self) -> None:
        """The reasoning and the text built up so far, each one piece of the step they lead to."""
        if self.reasoning.strip():
            self.thought.append(self.reasoning.strip())
        if self.text.strip():
            self.narration.append(self.text.strip())
        self.reasoning = self.text = ""

    def flush(self) -> None:
        self.said()
        super().flush()

    def line(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "user":
            text = parts_text(as_dict(record.get("message")).get("content")).strip()
            if text:
                self.flush()
                self.prompts.append(text)
        elif kind == "thinking":
            if record.get("subtype") == "delta" and isinstance(record.get("text"), str):
                self.reasoning += record["text"]
            elif self.reasoning.strip():  # completed: one thought
                self.thought.append(self.reasoning.strip())
                self.reasoning = ""
        elif kind == "assistant":
            # With --stream-partial-output each line is a piece of the text (joined as they come, as Cursor's
            # ``result`` joins them), then the whole message once more: a line equal to what has built up.
            text = parts_text(as_dict(record.get("message")).get("content"))
            if text and text != self.text:
                self.text += text
                self.narration_at = self.narration_at or record.get("timestamp_ms")
        elif _is_tool_line(record):
            self.tool(record)
        elif kind == "result" and record.get("is_error") is True:
            self.last_error = as_str(record.get("result")) or f"Cursor CLI error ({record.get('subtype')})"
        elif kind == "retry":  # the CLI retrying the model: the run's end when nothing comes after it
            attempt = record.get("attempt")
            tried = f" (attempt {attempt})" if isinstance(attempt, int) else ""
            self.retrying = f"Cursor CLI ended retrying the model{tried}, no result"
        if kind in ("user", "assistant", "thinking", "tool_call", "result"):
            self.retrying = None

    def tool(self, record: dict[str, Any]) -> None:
        name, arguments, result, call_id = _call(record)
        step = self.by_call.get(call_id) if call_id else None
        if step is None:
            self.said()
            step = self.open_call(call_id, name, arguments, record.get("timestamp_ms"))
        if record.get("subtype") != "completed":
            return
        self.by_call.pop(call_id, None)
        if not step["arguments"] and arguments:
            step["arguments"] = arguments
        if result is not None and not isinstance(result, dict):  # a generic call's result: its text, no outcome
            step.update(observation=as_str(result) or json.dumps(result, ensure_ascii=False),
                        ended_at=iso_time(record.get("timestamp_ms")))
            return
        outcome, fields = _outcome(as_dict(result))
        if not step["arguments"] and as_str(fields.get("command")):
            # a command refused (``rejected``, ``permissionDenied``: a sub-agent's has no ``args``) names itself there
            step["arguments"] = {"command": fields["command"]}
        step["observation"] = _observation(name, fields)
        step["ended_at"] = iso_time(record.get("timestamp_ms"))
        if error := outcome_error(outcome, fields, command_line(step["arguments"])):
            step["error"] = error


@dataclass(frozen=True)
class _SubAgent:
    """A sub-agent's conversation, which Cursor keeps whole in the ``result`` of the ``taskToolCall`` that ran it
    (``success.conversationSteps``: its reasoning, its calls, what it said), none of it in the parent's stream."""

    session_id: str | None  # the stream's session
    parent: str | None  # the session id of the run that called it: the stream's, or an outer sub-agent's
    agent_id: str
    args: dict[str, Any]  # the task call's: ``prompt``, ``model``, ``description``, ``subagentType``
    steps: list[Any]
    started: Any  # the ``timestamp_ms`` of the task call's first line


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The stream's run, then each sub-agent's as a run of its own (a sub-agent's sub-agents too), at the line of
    the completed ``taskToolCall`` that holds it: its calls are no steps of the parent's, as other readers keep a
    sub-agent's session apart (Claude Code's, Crush's, Kimi's)."""
    yield "file", document
    if not isinstance(document, list):
        return
    session = next((s for r in document if isinstance(r, dict) and (s := as_str(r.get("session_id")))), None)
    started: dict[str | None, Any] = {}
    for position, line in zip(item_positions(document), document):
        if _is_tool_line(line):
            call_id = _call_id(line.get("call_id"), line["tool_call"])
            started.setdefault(call_id, line.get("timestamp_ms"))
            if line.get("subtype") == "completed":
                for where, agent in _subagents(line["tool_call"], call_id or position.replace(" ", ""), session,
                                               session, started[call_id]):
                    yield f"{position} {where}", agent


def _subagents(tool_call: dict[str, Any], call_id: str, session: str | None, parent: str | None,
               started: Any) -> Iterator[tuple[str, _SubAgent]]:
    """The sub-agent a completed call ran (a ``taskToolCall`` whose result holds its ``conversationSteps``), then
    those its own calls ran. Its id is the ``agentId`` Cursor gives it, else ``call_id``: the id of the call that ran
    it, else where that call stands (``line7``, ``<agent id>.step3``), both fixed in the file and one per call (a
    conversation saved without ``agentId`` was dropped unsaid)."""
    task = as_dict(tool_call.get("taskToolCall"))
    fields = _outcome(as_dict(task.get("result")))[1]
    if not isinstance(fields.get("conversationSteps"), list) or not fields["conversationSteps"]:
        return  # no sub-agent's conversation here (an empty one: nothing it did or said to read)
    args = as_dict(task.get("args"))
    agent_id = as_str(fields.get("agentId")) or as_str(args.get("agentId")) or call_id
    yield f"sub-agent {agent_id}", _SubAgent(session, parent, agent_id, args, fields["conversationSteps"], started)
    for n, step in enumerate(fields["conversationSteps"], 1):
        inner_call = as_dict(as_dict(step).get("toolCall"))
        inner_id = _call_id(None, inner_call) or f"{agent_id}.step{n}"
        for where, inner in _subagents(inner_call, inner_id, session, agent_id, started):
            yield f"sub-agent {agent_id} {where}", inner


def _as_lines(step: Any) -> list[dict[str, Any]]:
    """A sub-agent's conversation step as the stream's lines it stands for, so one walk reads both."""
    step = as_dict(step)
    if isinstance(thought := as_dict(step.get("thinkingMessage")).get("text"), str):
        return [{"type": "thinking", "subtype": "delta", "text": thought}, {"type": "thinking", "subtype": "completed"}]
    if isinstance(said := as_dict(step.get("assistantMessage")).get("text"), str):
        return [{"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": said}]}}]
    if isinstance(step.get("toolCall"), dict):
        return [{"type": "tool_call", "subtype": "completed", "tool_call": step["toolCall"]}]
    return []


def _subagent_trajectory(agent: _SubAgent, ctx: Context) -> Trajectory:
    """A sub-agent's run: task = the task call's ``prompt``, model its ``model``, steps its conversation's calls
    (read as the stream's), ``metadata.is_subagent`` and the caller's session as ``parent_session_id``."""
    walk = _Stream()
    for step in agent.steps:
        for line in _as_lines(step):
            walk.line(line)
    walk.close()
    task = as_str(agent.args.get("prompt")) or as_str(agent.args.get("description"))
    if not task or not task.strip():
        raise RecordError(f"Cursor CLI sub-agent {agent.agent_id}: its task call names no prompt")
    kind = next(iter(as_dict(agent.args.get("subagentType"))), None)
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": agent.agent_id,
        "is_subagent": True,
        "parent_session_id": agent.parent,
        "agent_name": kind if kind != "unspecified" else None,
        "description": as_str(agent.args.get("description")),
    }
    return session_trajectory(
        ctx, run_id=f"cursor-cli.{agent.session_id}.{agent.agent_id}", task=task.strip(),
        model_id=as_str(agent.args.get("model")), steps=walk.steps, metadata=metadata, last_error=None,
        error_cause=API_ERROR_CAUSE, created_at=iso_time(agent.started))


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if isinstance(record, _SubAgent):
        return _subagent_trajectory(record, ctx)
    records = as_records(record, "Cursor CLI stream")
    if not any(matches(r) for r in records):  # a file forced on this reader: say what it is not, not what it lacks
        raise RecordError("not a Cursor CLI stream (`cursor-agent -p --output-format stream-json` opens with a "
                          "`system` `init` line with `apiKeySource`, then `user`, `assistant` and `tool_call` lines)")
    init = next((r for r in records if _is_init(r)), {})
    walk = _Stream()
    for line in records:
        walk.line(line)
    walk.close()
    if not walk.prompts:
        raise RecordError("no user prompt in this Cursor CLI stream (its `user` line, which the CLI echoes, is "
                          "missing: the stream was cut before it)")
    result = next((r for r in reversed(records) if r.get("type") == "result"), {})
    session_id = as_str(init.get("session_id")) or next(
        (s for r in records if (s := as_str(r.get("session_id")))), None)
    if session_id is None:
        raise RecordError("no session_id in this Cursor CLI stream")
    usage = as_dict(result.get("usage"))
    tokens = sum(v for k in ("inputTokens", "outputTokens") if isinstance(v := usage.get(k), int))
    digest = hashlib.blake2b(walk.prompts[0].encode(), digest_size=6).hexdigest()
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": session_id,
        "working_dir": as_str(init.get("cwd")),
        "permission_mode": as_str(init.get("permissionMode")),
        "request_id": as_str(result.get("request_id")),
        "duration_ms": result.get("duration_ms") if isinstance(result.get("duration_ms"), int) else None,
        "total_tokens": tokens or None,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
    }
    return session_trajectory(
        ctx, run_id=f"cursor-cli.{session_id}.{digest}", task=walk.prompts[0], model_id=as_str(init.get("model")),
        steps=walk.steps, metadata=metadata, last_error=walk.last_error or walk.retrying,
        error_cause=API_ERROR_CAUSE,
        created_at=first_time(*(r.get("timestamp_ms") for r in records if "timestamp_ms" in r)))
