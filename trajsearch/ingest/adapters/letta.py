"""``letta``: Letta agent files (``.af``): an agent's state as Letta exports it, with its message history; and Letta
Code's transcripts (``~/.letta/transcripts/<agent>/<conversation>/transcript.jsonl``: see the end).

Source read: letta-ai/letta ``letta/schemas/agent_file.py`` (``AgentFileSchema``, ``AgentSchema``,
``MessageSchema``, ``GroupSchema``), ``letta_message.py`` (``ApprovalReturn``, ``ToolReturn``) and the legacy
export (``letta/serialize_schemas/pydantic_agent_schema.py``'s ``AgentSchema``, 0.6.x); real files:
letta-ai/agent-file (Apache-2.0) ``ezra.af``, ``lettabot-builder.af``, ``memgpt_agent_with_convo.af`` and
``composio_github_star_agent.af`` (see ``tests/fixtures/letta/.newb31/README.md``), and letta-ai/letta's own
``tests/test_agent_files/*.af``. letta-ai/letta was archived in August 2026 (its server on branch ``archive``;
``services/conversation_manager.py`` makes each conversation its own system message); current Letta is
letta-ai/letta-code, whose ``/export`` (``cli/app/use-submit-handler.ts``) saves the cloud's ``export_file`` of the
agent or of one conversation (``<conversation-id>.af``: its messages, its own system message first, so a run and id
per conversation) with a ``skills`` list added; its local backend exports none.

Two shapes. Since Letta 0.8 (``AgentFileSchema``, the ADE's and ``client.agents.export_file``'s download) a file
is ``{"agents": [...], "groups", "blocks", "files", "sources", "tools", "mcp_servers", "metadata", "created_at"}``:
each agent with its ``messages`` (``role`` system / user / assistant / tool / approval, ``content`` parts, an
assistant's ``tool_calls`` in OpenAI's shape, a tool message's ``tool_returns`` with ``status`` success / error
and the call's ``stderr``), every id renumbered for the file (``agent-0``, ``message-1``: the same in every file);
a sleep-time agent is a second agent of the file, in a group its conversation agent manages. Before it (0.6.x, the
``/v1/agents/{id}/export`` of early 2025) a file is one agent: ``{"agent_type", "core_memory", "llm_config",
"embedding_config", "messages", ...}`` (each message's ``in_context`` in 0.6.43, ``in_context_message_indices``
later), its tool results in the tool message's text, and (0.6.45 to 0.10.0) in a ``tool_returns`` list whose entries
carry no ``tool_call_id`` of their own: the message's (letta-ai/letta's ``tests/test_agent_files/max_messages.af``).

Mapping (run = one agent's conversation; a file of several agents is a run each)
- task: the first user message a person sent: its text, or the ``message`` of the ``{"type": "user_message"}``
  envelope Letta 0.6.x wrapped it in, without Letta Code's ``<system-reminder>`` blocks; Letta's own user-role
  messages (``heartbeat``, ``login``, ``system_alert``: a summary of evicted messages) are none. Later ones are
  ``metadata.user_prompts``. An agent with no user message (a template: its system prompt and greeting) holds no
  run and is passed over, as is a file of no agents.
- steps: one per tool call (action = the function's name, arguments decoded, thought = the assistant's reasoning
  and text before it), its observation the tool message with its ``tool_call_id``: the ``message`` of Letta's
  ``{"status", "message", "time"}`` envelope, else the text. A call failed where its ``tool_returns`` say
  ``status: error`` or the envelope ``"status": "Failed"``: the error is the decisive line of its ``stderr``
  (a tool's traceback) or of the message. ``send_message`` is the agent's reply, a ``respond`` step with its
  ``message``; assistant text no call follows (``letta_v1_agent`` answers in text) is a ``respond`` step too.
  A call that asked the user's approval (Letta Code's client-side tools: a ``role: approval`` message with
  ``tool_calls``) is a step alike; one the user denied (the response's ``approvals`` entry with ``approve: false``,
  or before them the message's ``approve`` / ``approval_request_id`` / ``denial_reason``) was not run: its error
  ``not run: denied by the user, saying: <reason>`` (OpenCode's words); a client-side tool's result there answers
  its call as a tool message does (a real one: letta-ai/letta's ``tests/test_agent_files/test_agent.af``; the
  legacy fields follow ``schemas/message.py``).
- model_id: the last assistant message's ``model``, else the agent's ``llm_config.model``; created_at: the first
  message's ``created_at``.
- trajectory_id: ``letta:<digest>``: the file's ids are positions, not the agent's, and the name is often the
  file's. A legacy agent's own ``created_at`` (0.6.43 exported a window of the messages); else (0.8+, no agent
  time) its first system message's ``created_at``, to the microsecond, and role: Letta made it with the agent and
  rebuilds it in place, and the exporter writes it first. So every copy and later export of the file names its runs
  alike (read together, one kept). Letta's import keeps the messages' times: an agent imported from a shared file
  (agent-file's purpose) and talked to is exported with its original's id; ingested from separate files, the later
  replaces the earlier (the ingest says so); ingested together, ``DistinctIds`` tells them apart.
  ``metadata.session_id`` is the digest; a sleep-time (or other group) agent managed by another agent of the file
  is ``metadata.is_subagent`` with its manager's as ``metadata.parent_session_id``.
- outcome: ``unknown``: an agent file holds a conversation, not whether its task was done.
- an agent file saved as a JSON string of itself (double-encoded, as four templates of letta-ai/agent-file were
  committed) is read as the document it holds.

Letta Code's transcripts. Letta Code (since 9041e600, March 2026) appends each completed turn of its TUI, its
bidirectional headless mode and its listener to ``~/.letta/transcripts/<agent-id>/<conversation-id>/transcript.jsonl``
(``$LETTA_TRANSCRIPT_ROOT`` instead, if set; ``cli/helpers/reflection-transcript.ts``: ``appendTranscriptDeltaJsonl``,
``lineToTranscriptEntry``), beside its ``state.json`` and ``payload-*.json`` (its memory reflection's, no run): one
JSON row a line, ``{"kind": "user" | "assistant" | "reasoning" | "error", "text", "captured_at", ...}`` or ``{"kind":
"tool_call", "name", "argsText", "resultText", "resultOk", "captured_at", ...}``, a turn's rows stamped alike. A file
is one run, ``letta.<agent-id>.<conversation-id>`` from its two folders (``metadata.session_id`` the conversation's,
``metadata.agent_id``; a file renamed elsewhere: its name): task = the first ``user`` row without Letta Code's
``<system-reminder>`` blocks (later ones ``metadata.user_prompts``); each ``tool_call`` a step (arguments decoded,
observation ``resultText``, failed where ``resultOk`` is false: the decisive line of its result; neither a result
nor ``resultOk``: never answered), ``reasoning`` its thought, ``assistant`` text no call follows a ``respond`` step;
an ``error`` row with no work after it the run's end (``infra_error``, or the agent's for its context window);
outcome otherwise ``unknown``; no model recorded. The same conversation exported as ``.af`` is another run (its
ids renumbered): nothing in either names the other.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import not_run
from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, NEVER_ANSWERED, SessionSteps, as_records, error_line, iso_time, parts_text,
                         prompt_list, session_trajectory, strip_reminders)
from ._common import (PassedOver, RecordError, Context, as_dict, as_list, double_encoded, file_stem, json_dict,
                      json_kind, named_path, short, tool_arguments)

NAME = "letta"
ID_PREFIX = "letta"
#: A file is read whole: its agents are its runs (``split``).
WHOLE_FILE = True
#: The members every ``AgentFileSchema`` dump writes (Letta 0.8 on).
_FILE_KEYS = frozenset({"agents", "groups", "blocks", "files", "sources", "tools", "mcp_servers"})
#: Its head as Letta writes it (``agents`` first, each agent's ``name`` first): a file cut short, which no parse
#: reads, is still told as Letta's, its error naming what broke.
SIGNATURE = re.compile(r'\A\ufeff?\s*\{\s*"agents"\s*:\s*\[\s*\{\s*"name"\s*:')
#: The keys of a legacy (0.6.x) agent export: one agent, its memory, model settings and messages.
_LEGACY_KEYS = frozenset({"agent_type", "core_memory", "llm_config", "embedding_config", "messages"})
#: The envelopes of the user-role messages Letta writes itself (``system/prompt`` helpers ``get_heartbeat``,
#: ``get_login_event``, ``package_summarize_message``), not a person's words.
_LETTA_SAID = frozenset({"heartbeat", "login", "system_alert"})
#: The tool a MemGPT-style agent answers the user with: its ``message`` is the reply.
_REPLY_TOOL = "send_message"
#: Where ``split`` leaves the session id of the agent that manages an agent (a sleep-time agent's).
_PARENT = "__letta_parent__"


def _document(record: Any) -> Any:
    """An agent file saved as a JSON string of itself (double-encoded) as the document it holds."""
    return double_encoded(record, '"agents"', '"agent_type"')


#: What a Letta Code transcript row (``TranscriptEntry``) of each kind holds besides ``kind`` and ``captured_at``, by
#: which its first line is told: one of these strings (a text row's ``text``; a tool call's every field is optional,
#: its ``name`` "in the very first chunk"). Other keys are neither required nor refused: ``source_line_id`` and
#: ``source_message_id`` came later, and more may.
_ROW_KEYS = {"user": ("text",), "assistant": ("text",), "reasoning": ("text",), "error": ("text",),
             "tool_call": ("name", "argsText", "resultText")}
#: Where Letta Code keeps its transcripts: a walk of a home reads them.
SESSION_FOLDERS = (".letta/transcripts",)
#: A transcript's own name (``getReflectionTranscriptPaths``).
_TRANSCRIPT = "transcript.jsonl"
#: The folder of an agent's multi-conversation reflection payloads, beside its conversations' folders
#: (``ensureAgentPayloadRoot``; Letta Code's own walk of the transcripts skips it by this name).
_PAYLOADS = "multi-reflection-payloads"


def _row(record: Any) -> bool:
    """A Letta Code transcript row: a ``kind`` it writes, with its string ``captured_at`` and its kind's fields
    (``_ROW_KEYS``), whatever keys a later version adds (one more had made every transcript unrecognised)."""
    kind = record.get("kind") if isinstance(record, dict) else None
    return (isinstance(kind, str) and kind in _ROW_KEYS and isinstance(record.get("captured_at"), str)
            and any(isinstance(record.get(key), str) for key in _ROW_KEYS[kind]))


def matches(record: Any) -> bool:
    if _row(record):
        return True
    record = _document(record)
    if not isinstance(record, dict):
        return False
    return _FILE_KEYS <= record.keys() or _LEGACY_KEYS <= record.keys() and isinstance(record["messages"], list)


#: How an agent file opens, either shape, pretty-printed or not, or saved as a JSON string of itself: a walk takes an
#: ``.af`` file that opens so (another program's ``.af``, a sound or a note, is no dump of any format).
_AF_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*"?\{(?:\s|\\[nrt])*\\?"(?:agents|agent_type)\\?"\s*:')


def walked_file(path: Path) -> bool:
    """Whether a walk reads a file not named as a dump: Letta's ``.af`` files, told by how they open."""
    if not path.name.endswith(".af"):
        return False
    try:
        with path.open("rb") as f:
            return bool(_AF_HEAD.match(f.read(256)))
    except OSError:
        return False


def side_file(record: Any) -> str | None:
    """Letta Code's headless output (``letta -p``, ``src/headless.ts``), told by the ``agent_id`` and
    ``conversation_id`` its ``--output-format stream-json`` opening ``init`` line and its ``result`` (the one line of
    ``--output-format json``) carry (Claude Code's, whose shape it copies, have neither): the agent's messages or its
    answer, never the prompt. Named before the formats, lest Claude Code's reader take the stream and point at a
    transcript it never wrote. ``agent_id`` is null under ``--ephemeral`` (nothing kept to export); the conversation
    ``default`` (``--conv default``, Letta Code's own subagents) is the agent's own history, exported as the agent."""
    if not (isinstance(record, dict) and "agent_id" in record and isinstance(record.get("conversation_id"), str)
            and (record["agent_id"] is None or isinstance(record["agent_id"], str))
            and (record.get("type") == "result" or (record.get("type"), record.get("subtype")) == ("system", "init"))):
        return None
    said = "Letta Code's headless output (`letta -p --output-format stream-json` or `json`) records no prompt: "
    if record["agent_id"] is None:
        return said + "its run was ephemeral (`--ephemeral`, no `agent_id`): Letta Code kept no agent to export"
    agent, conversation = (short(record[key], 80, keep="head") for key in ("agent_id", "conversation_id"))
    said += (f"ingest ~/.letta/transcripts/{agent}/{conversation}/{_TRANSCRIPT} if Letta Code kept it (its TUI and "
             "`--input-format stream-json` do), or ")
    if conversation == "default":
        return (said + f"export agent {agent} (its default conversation) as an agent file (`letta --agent {agent}`, "
                "then `/export`, which writes `<agent-id>.af`) and ingest that")
    return (said + f"export conversation {conversation} of agent {agent} as an agent file (`letta --agent {agent} "
            f"--conv {conversation}`, then `/export`, which writes `<conversation-id>.af`; its local backend exports "
            "none) and ingest that")


def _session_id(agent: dict[str, Any]) -> str | None:
    """The digest naming an agent in any copy or later export of its file: a legacy (0.6.x) agent's own
    ``created_at`` (0.6.43 exported a window of the messages, its first one a tool result mid-conversation); else,
    the agent having no time of its own (0.8+), its first system message's ``created_at`` and role (the exporter
    writes the in-context messages, the system message first, which Letta rebuilds in place, keeping its time)."""
    if isinstance(agent.get("created_at"), str):
        said = ["agent", agent["created_at"]]
    else:
        messages = [m for m in as_list(agent.get("messages")) if isinstance(m, dict)]
        first = next((m for m in messages if m.get("role") == "system"), messages[0] if messages else {})
        if not isinstance(first.get("created_at"), str):
            return None
        said = [first["created_at"], first.get("role")]
    return hashlib.blake2b(json.dumps(said).encode(), digest_size=8).hexdigest()


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """An agent file's agents, each with the session id of the agent that manages it (a group's manager)."""
    document = _document(document)
    if not isinstance(document, dict) or "agents" not in document:
        yield "file", document
        return
    agents = document["agents"]
    if not isinstance(agents, list) or not agents:  # refused, or passed over as holding no agent, by ``to_trajectory``
        yield "agents", document
        return
    by_id = {a.get("id"): a for a in agents if isinstance(a, dict)}
    managed = {member: as_dict(group.get("manager_config")).get("manager_agent_id")
               for group in as_list(document.get("groups")) if isinstance(group, dict)
               for member in as_list(group.get("agent_ids"))}
    for n, agent in enumerate(agents):
        manager = by_id.get(managed.get(agent.get("id"))) if isinstance(agent, dict) else None
        if manager is not None and manager is not agent:
            agent = {**agent, _PARENT: _session_id(manager)}
        yield f"agents[{n}]", agent


def _prompt(text: str) -> str | None:
    """A person's words in a user message: the text, or the ``message`` of Letta's ``user_message`` envelope; None
    for a message Letta wrote itself (a heartbeat, the login event, a summary of evicted messages). Letta Code puts
    ``<system-reminder>`` blocks (the device, the skills list, a sleep-time agent's instructions) before the words:
    they are the client's, word for word alike in every run, and are left out."""
    text = strip_reminders(text)
    if text.lstrip().startswith("{"):
        envelope = json_dict(text)
        if envelope is None:
            return text
        kind = envelope.get("type")
        if kind in _LETTA_SAID:
            return None
        if kind == "user_message":
            return str(envelope.get("message") or "")
    return text


def _result(message: dict[str, Any], ret: dict[str, Any]) -> tuple[str | None, str | None]:
    """(observation, error) of a tool's result: the ``message`` of Letta's envelope (else the text), and where it
    failed (``status: error``, ``"status": "Failed"``) the decisive line of its stderr or message."""
    # ``func_response`` in a tool message's returns, ``tool_return`` in an approval's (a client-side tool's result)
    text = next((ret[k] for k in ("func_response", "tool_return") if isinstance(ret.get(k), str)),
                parts_text(message.get("content")))
    said, failed = text, ret.get("status") == "error"
    envelope = json_dict(text)
    if envelope is not None and "status" in envelope and "message" in envelope:
        held = envelope["message"]
        said = held if isinstance(held, str) else None if held is None else json.dumps(held)
        failed = failed or envelope["status"] == "Failed"
    if not failed:
        return said, None
    stderr = "\n".join(str(line) for line in as_list(ret.get("stderr")))
    shown = said or text
    return said, error_line(stderr, "") or error_line(shown, shown.strip()[:300] or "tool error")


class _Steps(SessionSteps):
    """An agent's messages walked: assistant reasoning and text until a call takes them, calls answered by id."""

    def assistant(self, message: dict[str, Any]) -> None:
        for part in as_list(message.get("content")):
            if isinstance(part, dict) and part.get("type") == "reasoning" and isinstance(part.get("reasoning"), str):
                self.thought.append(part["reasoning"])
        if text := parts_text(message.get("content")).strip():
            self.say(text, message.get("created_at"))
        for call in as_list(message.get("tool_calls")):
            function = as_dict(as_dict(call).get("function"))
            name = str(function.get("name") or "tool")
            arguments = tool_arguments(function.get("arguments"))
            if name == _REPLY_TOOL and isinstance(as_dict(arguments).get("message"), str):
                # the agent's reply to the user: its answer, so no result is paired with it
                self.open_call(None, "respond", {"content": arguments["message"]}, message.get("created_at"))
                continue
            call_id = as_dict(call).get("id")
            self.open_call(None if call_id is None else str(call_id), name, arguments, message.get("created_at"))

    def answered(self, message: dict[str, Any]) -> None:
        """A tool message (or an approval's returns): each return answers the call with its ``tool_call_id``."""
        returns = [r for r in [*as_list(message.get("tool_returns")), *as_list(message.get("approvals"))]
                   if isinstance(r, dict)]
        if not returns and message.get("role") == "tool":
            returns = [{"tool_call_id": message.get("tool_call_id")}]
        elif not returns and isinstance(message.get("approve"), bool):  # an approval response before ``approvals``
            returns = [{"tool_call_id": message.get("approval_request_id"), "approve": message["approve"],
                        "reason": message.get("denial_reason")}]
        for ret in returns:
            # a return's ``tool_call_id`` is optional (the legacy export up to 0.10.0 wrote none): the message's then
            step = self.by_call.pop(str(ret.get("tool_call_id") or message.get("tool_call_id")), None)
            if step is None:
                continue
            if ret.get("approve") is False:  # an ApprovalReturn: the user denied the call (worded as OpenCode's)
                said = str(ret.get("reason") or "").strip()
                step["error"] = not_run("denied by the user" + (f", saying: {said}" if said else ""))
                continue
            step["observation"], step["error"] = _result(message, ret)
            step["ended_at"] = iso_time(message.get("created_at"))


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): Letta Code's memory-reflection bookkeeping, by its place: the
    state and payloads beside a transcript (``state.json``, ``payload-<kind>-<nonce>.json``), and the payloads of a
    reflection over several conversations in the agent's ``multi-reflection-payloads/`` (``payload-candidates-``,
    ``-slice-``, ``-multi-``: each had been rejected in a walk, review RT1, 1). The runs are the transcripts."""
    payload = path.name.startswith("payload-") and path.name.endswith(".json")
    if (path.name == "state.json" or payload) and (path.parent / _TRANSCRIPT).is_file():
        return f"Letta Code's memory-reflection bookkeeping beside {_TRANSCRIPT}, which holds the run"
    if payload and path.parent.name == _PAYLOADS:
        return (f"Letta Code's memory-reflection payload ({_PAYLOADS}/ of an agent's transcripts): the runs are the "
                f"{_TRANSCRIPT} files of its conversations' folders")
    return None


def _transcript_trajectory(rows: list[dict[str, Any]], ctx: Context) -> Trajectory:
    """A Letta Code transcript's rows (module docstring) as its run."""
    steps = SessionSteps()
    for row in rows:
        kind, text, at = row.get("kind"), row.get("text"), row.get("captured_at")
        said = text.strip() if isinstance(text, str) else ""
        if kind == "user" and (said := strip_reminders(said).strip()):
            steps.flush()
            steps.prompts.append(said)
            steps.last_error = None
        elif kind == "reasoning" and said:
            steps.thought.append(said)
        elif kind == "assistant" and said:
            steps.say(said, at)
            steps.last_error = None
        elif kind == "error" and said:
            steps.last_error = said
        elif kind == "tool_call":
            result, ok = row.get("resultText"), row.get("resultOk")
            error = (NEVER_ANSWERED if result is None and ok is None else None if ok is not False
                     else error_line(result, str(result or "").strip()[:300] or "tool error"))
            steps.open_call(None, str(row.get("name") or "tool"), tool_arguments(row.get("argsText")), at,
                            observation=result if isinstance(result, str) else None, error=error)
            steps.last_error = None
    steps.close()
    if not steps.prompts:
        raise PassedOver("no user message", "a Letta Code transcript with no user row: no task", unit="file")
    path = named_path(ctx.source)
    agent, conversation = ((path.parent.parent.name, path.parent.name) if path.name == _TRANSCRIPT
                           else (None, file_stem(path, (".jsonl",))))
    metadata = {"session_id": conversation, "agent_id": agent, "user_prompts": prompt_list(steps.prompts[1:]) or None}
    return session_trajectory(
        ctx, run_id=".".join(["letta", *filter(None, [agent, conversation])]), task=steps.prompts[0], model_id=None,
        steps=steps.steps, metadata=metadata, last_error=steps.last_error, error_cause=API_ERROR_CAUSE,
        created_at=iso_time(rows[0].get("captured_at")) if rows else None)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if _row(record) or isinstance(record, list) and any(_row(r) for r in record[:1]):
        return _transcript_trajectory(as_records(record, "Letta Code transcript"), ctx)
    if not isinstance(record, dict):
        raise RecordError(f"a Letta agent file's agent is {json_kind(record)}, not an object")
    messages = record.get("messages")
    if record.get("agents") == [] and messages is None:
        raise PassedOver("no agent", "a Letta agent file whose `agents` is empty: no agent, no conversation",
                         unit="file")
    if "agents" in record and messages is None:  # ``split`` hands over a file whose ``agents`` is no list
        raise RecordError(f"a Letta agent file whose `agents` is {json_kind(record['agents'])}, not a list of agents")
    if not isinstance(messages, list):
        held = "this has no `messages`" if messages is None else f"its `messages` is {json_kind(messages)}"
        raise RecordError("not a Letta agent file (it holds `agents`, each with its `messages`, or is one agent with "
                          f"`messages`, before Letta 0.8); {held}")
    steps = _Steps()
    model = None
    for n, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RecordError(f"messages[{n}] is {json_kind(message)}, not a message object")
        role = message.get("role")
        if role == "user":
            if (said := _prompt(parts_text(message.get("content")))) is not None:
                steps.flush()
                steps.prompts.append(said)
        elif role == "assistant" or role == "approval" and message.get("tool_calls"):  # a call asking approval
            steps.assistant(message)
            model = message.get("model") if isinstance(message.get("model"), str) else model
        elif role in ("tool", "approval"):
            steps.answered(message)
    steps.close()
    prompts = [p for p in steps.prompts if p.strip()]
    if not prompts:
        raise PassedOver("no user message", f"Letta agent {record.get('name')!r} holds no conversation (a template: "
                                            "its system prompt and greeting)", unit="agent")
    session = _session_id(record)
    if session is None:
        raise RecordError("a Letta agent with no `created_at` string (of its own, or of its first system message): "
                          "nothing names the run")
    metadata = {"agent_name": record.get("name"), "agent_type": record.get("agent_type"),
                "session_id": session, "user_prompts": prompt_list(prompts[1:]) or None,
                "is_subagent": True if record.get(_PARENT) else None, "parent_session_id": record.get(_PARENT)}
    return session_trajectory(
        ctx, run_id=f"{ID_PREFIX}:{session}", task=prompts[0],
        model_id=model or as_dict(record.get("llm_config")).get("model"), steps=steps.steps, metadata=metadata,
        last_error=None, error_cause="", created_at=iso_time(messages[0].get("created_at")) if messages else None)
