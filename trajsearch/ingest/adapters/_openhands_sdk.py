"""OpenHands software-agent-sdk (V1) conversations, read for the ``openhands`` adapter.

Where they come from (OpenHands/software-agent-sdk, ``openhands-sdk/openhands/sdk``):
``conversation/persistence_const.py`` + ``event_store.py``: a conversation persists as a folder
``<conversation id hex>/`` holding ``base_state.json`` (``ConversationState``: ``id``, ``agent.llm.model``,
``workspace.working_dir``, ``execution_status``, ``stats``, ``leaf_event_id``) and ``events/event-NNNNN-<event
id>.json``, one event per file (``model_dump_json``, each with its ``kind``; OpenHands-CLI's recorded conversations
keep the event files in the folder itself, with or without ``base_state.json``); the same events also travel as JSON
lines (a stream or a test fixture) and as the ``history`` of an OpenHands/benchmarks ``output.jsonl`` line; the V1
app server keeps its own copy of them, ``v1_conversations/<id hex>/<event id hex>.json`` (before, ``v1/events/<id>/``:
:data:`STORE_EVENT_NAME`).
Event classes read (``event/``): ``SystemPromptEvent`` (``tools``), ``SystemPromptUpdateEvent`` (the tools
after a change mid-conversation, ``reason: tools_changed``), ``MessageEvent`` (``llm_message`` of role
user/assistant), ``ActionEvent`` (``tool_name``, ``tool_call`` with the LLM's ``arguments``, ``action`` with its
``kind``; ``action`` is null for a tool the agent does not have), ``ObservationEvent`` (``action_id``,
``observation``: ``content[].text``, ``is_error``, a command's ``exit_code``/``timeout``; before 1.0:
``output``, ``error``), ``AgentErrorEvent`` (a tool call's scaffold error, ``error``), ``UserRejectObservation``
(``rejection_reason``, ``rejection_source`` user/hook), ``ConversationErrorEvent`` (the run loop broke:
``code``, ``detail``), ``ConversationStateUpdateEvent`` (``key``/``value``: ``execution_status``, ``stats``,
``full_state``); the rest (``Condensation``, ``CondensationRequest``, ``CondensationSummaryEvent``,
``PauseEvent``, token, streaming-delta and hook events, ...) are bookkeeping, but for a ``UserPromptSubmit`` hook's
block of the user's message (:func:`prompt_block`) and the context it adds to one (:func:`adds_prompt_context`).
Events carry ``parent_id`` since the SDK keeps a tree of branches; the run read is the branch ending at
``base_state.json``'s ``leaf_event_id`` (and, where the state still says ``running``, the one step a killed process
appended past it; the calls of a step a crash recovery left beside the branch: ``active_branch``).
An ``ACPAgent`` (1.12+: Claude Code, Codex or Gemini CLI driven over the Agent Client Protocol, ``agent/acp_agent.py``)
makes no ``ActionEvent`` for its tools: each tool call is an ``ACPToolCallEvent`` (``tool_call_id``, ``title``,
``tool_kind``, ``status``, ``raw_input``, ``raw_output``, ``content`` blocks, ``is_error``), written once when it starts
and again when it ends (``completed`` / ``failed``; older logs hold every progress frame), the same ``tool_call_id``
reused within a turn only (a server counts its ids afresh per session: a ``MessageEvent`` ends their scope, as the
SDK's ``resume_transcript`` reads them; a call still running when a user's message comes goes on). Its reply is a
``finish`` ``ActionEvent``; a turn that broke is an agent ``MessageEvent`` of the SDK's (``ACP prompt timed out ...``,
``ACP error: ...``, see ``ACP_FAILED``), the calls then in flight closed ``failed`` just before it
(``_cancel_inflight_tool_calls``; so too before the ``InterruptEvent`` of a run cancelled, and before
the next attempt of a turn retried after a server error: ``acp_copy``); its ``llm.model`` is ``acp-managed``
unless ``acp_model`` named one, the model its server reported in ``base_state.json``'s ``agent_state`` (``acp_current_model_id``).
The V1 agent server serves a conversation's events in pages (``GET /api/conversations/<id>/events/search``:
``EventPage``, ``{"items", "next_page_id"}``, 100 at most, ``sort_order`` ``TIMESTAMP`` or ``TIMESTAMP_DESC``,
filters ``kind``, ``source``, ``body``, ``timestamp__gte``/``__lt``; ``openhands-agent-server`` ``event_router.py``).
An ``ACPAgent`` whose server runs sub-agent sessions (``acp_subagents``: the SDK fork that stores ACP schema 1.24.1's
unstable sub-agent sessions, michaeltheologitis/software-agent-sdk ``event/acp_subagent.py``,
``agent/acp_subagents.py``) writes a child's calls as ``ACPToolCallEvent`` with its ``acp_session_id``, and
``ACPSubagentEvent`` / ``ACPSessionMessageEvent`` / ``ACPSessionTextEvent`` for the rest of its life
(``ACP_SUBAGENT_KINDS``).
A sub-agent's conversation (openhands-tools ``task/manager.py`` and ``delegate/impl.py``: ``_SUBAGENTS_DIR``) persists
under its parent's, ``<parent id hex>/subagents/<its id hex>/`` (its ``persistence_dir`` says so), its first message
the ``prompt`` of the parent's ``task`` call (a ``delegate`` call's ``tasks`` entry).
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from trajsearch.actions import UNNAMED_TOOL, not_run

from .. import sources
from ._agent_cli import (as_int, as_str, command_line, exit_code_error, iso_time, printing_program,
                         strip_terminal_codes)
from ._common import (RecordError, as_dict, as_list, blocked_by_hook, decisive_line, ended_failing, finite,
                      loads, short, thinking_blocks_text, tool_arguments as decoded_arguments)
from .claude_code import result_error as claude_result_error  # Claude Code's rule for its own results
from ._gemini_stream import SILENT_FAILURE as GEMINI_SILENT_FAILURE
from .gemini_cli import shell_report_error as gemini_shell_error  # gemini-cli's shell report, shown in debug mode
from .gemini_cli import shell_timeout_error as gemini_shell_timeout  # its inactivity timeout's notice

BASE_STATE = "base_state.json"
#: The agent server's details of a conversation it ran, beside ``base_state.json`` (``ConversationService``:
#: ``<conversations>/<id hex>/meta.json``, a ``StoredConversation``: its title, its ``parent_conversation_id``).
SERVER_META = "meta.json"
EVENTS_DIR = "events"
SUBAGENTS_DIR = "subagents"
#: Where OpenHands/benchmarks keeps each instance's conversation, beside its run set's output files
#: (``benchmarks/utils/evaluation.py`` ``_capture_conversation_archive``: ``conversations/<instance_id>.tar.gz``, the
#: agent server's ``workspace/conversations`` tarred from ``/``).
ARCHIVES_DIR = "conversations"
#: ``persistence_const.EVENT_NAME_RE``: the writer pads the index to five digits or more.
EVENT_NAME = re.compile(r"^event-(?P<idx>\d{5,})-(?P<event_id>[0-9a-fA-F\-]{8,})\.json$")
#: How the OpenHands app server (V1, OpenHands/OpenHands ``openhands/app_server/event/event_service_base.py``
#: ``save_event``) stores the events it keeps of a conversation: ``<persistence dir>/[<user id>/]v1_conversations/<id
#: hex>/<event id hex>.json``, one ``model_dump_json`` each, no index in the name and no ``base_state.json`` beside
#: them; the server orders them by their ``timestamp``. Its older store (``filesystem_event_service.py`` at d6fab190,
#: November 2025): ``<persistence dir>/v1/events/<conversation uuid>/<YYYYMMDDHHMMSS>_<kind>_<event id hex>``, no
#: suffix, the same ``model_dump`` each (the server sorted them by name: by the second, then by kind).
STORE_EVENT_NAME = re.compile(r"^(?:(?P<event_id>[0-9a-fA-F]{32})\.json|\d{14}_[A-Za-z]+_(?P<old_id>[0-9a-fA-F]{32}))$")
ROOT_PARENT_ID = "__root__"  # ``event/types.py``: an explicit root
STATE_UPDATE = "ConversationStateUpdateEvent"  # a state sync the SDK logs: stamped with the leaf, no tree node
#: What a hook wrote when it ran (``hooks/conversation_hooks.py``, ``emit_hook_events``): logged just before the event
#: it judged was, so stamped with the leaf that event then hangs off too, a sibling of it off the branch.
HOOK_EVENT = "HookExecutionEvent"
#: The SDK's reason for a hook's block when the hook gave none (``hooks/manager.py``, ``conversation_hooks.py``).
HOOK_BLOCKED = "Blocked by hook"
SOURCES = frozenset({"agent", "user", "environment", "hook"})
KINDS = frozenset({
    "SystemPromptEvent", "SystemPromptUpdateEvent", "MessageEvent", "ActionEvent", "ObservationEvent", "AgentErrorEvent",
    "UserRejectObservation", "ConversationStateUpdateEvent", "ConversationErrorEvent", "Condensation",
    "CondensationRequest", "CondensationSummaryEvent", "PauseEvent", "InterruptEvent", "TokenEvent",
    "LLMCompletionLogEvent", "HookExecutionEvent", "ACPToolCallEvent", "StreamingDeltaEvent",
})
#: What an ``ACPAgent`` with ``acp_subagents`` stores of its server's sub-agent sessions (ACP schema 1.24.1's unstable
#: ``subagent_update``, ``session_message``, a child's own text; the SDK fork that adds them,
#: ``event/acp_subagent.py``): each child's association with its parent, the messages between sessions, a
#: child's streamed text. None is a step of the run (see :func:`subagent_session`).
ACP_SUBAGENT_KINDS = frozenset({"ACPSubagentEvent", "ACPSessionMessageEvent", "ACPSessionTextEvent"})
KINDS = KINDS | ACP_SUBAGENT_KINDS
#: ``ACPToolCallEvent.status`` once the call has ended (``acp_agent._TERMINAL_TOOL_CALL_STATUSES``).
ACP_ENDED = frozenset({"completed", "failed"})
#: The placeholder model of an ``ACPAgent`` that was not told which model its server runs (``ACP_SENTINEL_USAGE_ID``).
ACP_NO_MODEL = "acp-managed"
#: The kinds of an ACP tool call that name no tool (``ToolKind``): its title is all there is to name it by.
_ACP_UNNAMED = frozenset({"other", ""})
#: What an ``ACPAgent`` says, as an agent ``MessageEvent``, when its turn broke (``_emit_turn_timeout``: no
#: ``ConversationErrorEvent`` follows it; ``_emit_turn_error``: one does): the run's error, not a reply.
ACP_FAILED = re.compile(r"\AACP (?:prompt timed out after \d+s\b|error: )")
#: What the SDK itself says to the model as a ``source: "user"`` ``MessageEvent`` (``agent/agent.py``; where it
#: stands tells it from a user's own words: :func:`own_message`), no prompt of the user's: a reply it could not turn
#: into a tool call, the model's mistake (``FunctionCallValidationError``, ``llm/mixins/fn_call_converter.py``, a
#: model without native tool calling: a parameter not allowed or of the wrong type, a required one missing, a tool it
#: lacks; the reply itself is not kept) ...
MALFORMED_CALL = re.compile(r"\A(?:Parameter '[^'\n]*' is (?:not allowed for function '|expected to be )|"
                            r"Missing required parameters for function '|Function '[^'\n]*' not found in available "
                            r"tools: )")
#: ... and its nudge after the provider's content filter blocked the model's reply (``LLMContentPolicyViolationError``,
#: 1.2x: the run goes on).
CONTENT_FILTERED = re.compile(r"\AYour previous response was blocked by the model's content filter\. ")
#: ... and its critic's iterative-refinement follow-up when it judged a finished turn incomplete (``critic/base.py``
#: ``get_followup_prompt``; "(iteration N/M, ..." before 1.x's "(iteration N, ...").
CRITIC_FOLLOWUP = re.compile(r"\AThe task appears incomplete \(iteration \d+(?:/\d+)?, predicted success likelihood: ")
#: ... and the agent server's ``/goal`` loop's (1.2x+, ``conversation/goal/prompts.py``): after a round its judge found
#: the objective not done, ``FOLLOWUP_PROMPT``; on ``/goal/resume``, ``RESUME_PROMPT``. The loop says it runs in a
#: ``ConversationStateUpdateEvent`` of key :data:`GOAL_KEY` before each (``event_service._run_goal_loop``).
GOAL_NUDGE = re.compile(r"\A(?:The goal is NOT yet complete \(audit iteration \d+\)\.\nOutstanding: |"
                        r"Resuming a goal that was paused or interrupted\. )")
#: The state key of the ``/goal`` loop's status (``GoalStatus``: ``active``, ``status`` running / complete / capped /
#: interrupted, ``iteration``, ``max_iterations``, ``objective``, the judge's last ``verdict``: ``score``,
#: ``complete``, ``missing``), persisted among the events at its start, after each round and at its end.
GOAL_KEY = "goal"
#: Where a command's record in ``raw_output`` keeps its output (codex-acp: ``formatted_output``, its ``exit_code``
#: beside it), the first that is not empty; of a failed call, ``stderr`` before ``stdout`` (codex-acp's failed
#: ``apply_patch``: its ``PatchApplyEndEvent`` says why in ``stderr``, ``stdout`` empty).
_ACP_OUTPUT_KEYS = ("formatted_output", "output", "stdout", "aggregated_output", "stderr")
_ACP_FAILED_OUTPUT_KEYS = ("formatted_output", "aggregated_output", "stderr", "output", "stdout")
#: The keys of an MCP ``CallToolResult`` (codex-acp's ``end_mcp_tool_call`` puts it in ``raw_output`` whole).
_MCP_RESULT_KEYS = frozenset({"content", "isError", "is_error", "structuredContent", "structured_content", "_meta",
                              "meta"})
#: (In debug mode it shows, for every command, the report it gives the model: ``gemini_cli.shell_report_error``.)
#: How gemini-cli's shell tool titles a call (``ShellToolInvocation.getDescription``): the command, then where it
#: ran, its description, ``[background]``.
_GEMINI_SHELL_TITLE = re.compile(r"\A(?P<command>.+?) \[(?:current working directory|in) [^\]]*\]"
                                 r"(?: \([^\n]*\))?(?: \[background\])?\Z")
#: The model ids an ACP server reports that name no model (``ACPModelInfo``: "an opaque alias (e.g. ``default``,
#: ``auto``)"; Claude Code's ``default`` is whatever its account defaults to).
_ACP_MODEL_ALIASES = frozenset({"default", "auto", ""})
#: ``InterruptEvent.reason`` when the user gave none.
_INTERRUPTED = "User requested interrupt"
#: The status of a conversation whose agent asked the user to confirm its calls (``confirmation_policy``
#: ``AlwaysConfirm``, or ``ConfirmRisky`` and a call's ``security_risk`` at its threshold): the calls are written, run
#: once confirmed (``run()`` again), answered by a ``UserRejectObservation`` each if rejected.
AWAITING_CONFIRMATION = "waiting_for_confirmation"
#: The statuses that say the run broke (``ConversationExecutionStatus``); ``finished`` is the agent's own stop.
BROKEN = frozenset({"error", "stuck"})


def is_event(record: Any) -> bool:
    """One serialized SDK event: its ``kind`` names an event class, with an ``id`` and a ``source``."""
    return isinstance(record, dict) and record.get("kind") in KINDS and isinstance(record.get("id"), str) \
        and record.get("source") in SOURCES


def is_base_state(record: Any) -> bool:
    """``base_state.json``: a ``ConversationState`` (its id, the agent, the execution status)."""
    return isinstance(record, dict) and isinstance(record.get("id"), str) and isinstance(record.get("agent"), dict) \
        and "execution_status" in record


def _event_names(folder: Path) -> list[str]:
    """The names of the SDK event files directly in ``folder`` (``event-NNNNN-<id>.json``), sorted; else the app
    server's (``<event id hex>.json``, :data:`STORE_EVENT_NAME`). Names alone (``os.listdir``), matched and only the
    matches sorted, nothing stat'ed: a folder may hold thousands of other files, and telling one must cost a listing
    and the few files :func:`_has_events` opens (a folder so named is no file: opening it fails there)."""
    try:
        listed = os.listdir(folder)
    except OSError:
        return []
    for name in (EVENT_NAME, STORE_EVENT_NAME):
        if found := sorted(n for n in listed if name.match(n)):
            return found
    return []


def _event_files(folder: Path) -> list[Path]:
    """The event files directly in ``folder`` (:func:`_event_names`), by name: the files of them, a run's to read."""
    return [path for name in _event_names(folder) if (path := folder / name).is_file()]


#: How many of a folder's event files (by name) :func:`_has_events` looks into for the first one that parses: the
#: app server's names are random ids, so the first by name is any event, and may be the one a killed server cut short.
_EVENTS_TRIED = 3


def _has_events(folder: Path) -> bool:
    """Whether ``folder`` holds SDK event files: named so, and the first of them that parses (of the first
    :data:`_EVENTS_TRIED`) one by its content."""
    for name in _event_names(folder)[:_EVENTS_TRIED]:
        try:
            return is_event(loads((folder / name).read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue
    return False


def conversation_files(folder: Path) -> list[Path]:
    """The files an SDK conversation folder's run is read from: its ``base_state.json`` (with the agent server's
    ``meta.json`` beside it) and its event files (in ``events/``, else flat in the folder); anything else below it is
    no part of it (a sub-agent's folder, other runs kept beside it)."""
    state = [folder / name for name in (BASE_STATE, SERVER_META) if (folder / name).is_file()] \
        if (folder / BASE_STATE).is_file() else []
    return state + (_event_files(folder / EVENTS_DIR) or _event_files(folder))


def run_folder(path: Path) -> Path | None:
    """The conversation folder that ``path`` stands for: the folder, its ``events/`` or its ``base_state.json``;
    or a folder holding the event files themselves (OpenHands-CLI's recorded conversations)."""
    if path.is_file():
        return path.parent if path.name == BASE_STATE else None
    if (path / BASE_STATE).is_file() or ((path / EVENTS_DIR).is_dir() and _has_events(path / EVENTS_DIR)):
        return path
    if _has_events(path):
        return path.parent if path.name == EVENTS_DIR else path
    return None


def subagent_link(folder: Path, state: dict[str, Any], prompt: str) -> dict[str, Any]:
    """How a sub-agent's conversation (``<parent>/subagents/<id>/``, where it is or where its ``persistence_dir`` says
    it was written) links to its parent: ``is_subagent``, the parent's conversation id (its folder's name) and, where
    the parent's folder is beside it, the id of the call that started it (:func:`_starting_call`); empty for any other
    conversation."""
    persisted = state.get("persistence_dir")
    written = Path(persisted) if isinstance(persisted, str) and persisted.strip() else None
    beside = folder.parent.name == SUBAGENTS_DIR and run_folder(folder.parent.parent) is not None  # its parent's
    where = folder if beside else written
    if where is None or where.parent.name != SUBAGENTS_DIR or not where.parent.parent.name:
        return {}
    call = _starting_call(folder.parent.parent, prompt) if beside else None
    return {"is_subagent": True, "parent_conversation_id": where.parent.parent.name,
            **({"parent_tool_call_id": call[0], "parent_tool": call[1]} if call else {})}


def _starting_call(parent: Path, prompt: str) -> tuple[str, str] | None:
    """(tool_call_id, tool name) of the parent's first call that asked for ``prompt``: a ``task`` call's ``prompt``,
    a ``delegate`` call's ``tasks`` entry (the words the sub-agent's conversation opens with)."""
    for path in _event_files(parent / EVENTS_DIR) or _event_files(parent):
        try:
            event = loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(event, dict) or event.get("kind") != "ActionEvent" or not event.get("tool_call_id"):
            continue
        asked = tool_arguments(event)
        tasks = asked.get("tasks") if isinstance(asked.get("tasks"), dict) else {}
        if _said(asked.get("prompt"), prompt) or any(_said(t, prompt) for t in tasks.values()):
            return str(event["tool_call_id"]), str(event.get("tool_name") or "")
    return None


def _said(asked: Any, prompt: str) -> bool:
    """Whether a call's argument is the prompt a conversation opened with (as ``message_text`` gives it, stripped)."""
    return isinstance(asked, str) and asked.strip() == prompt


def folder_events(files: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(base state, events in the order they were appended) of a folder's files, by the writer's file index: those in
    ``events/``, else those saved flat in the folder itself; else, the app server's event files (no index in their
    names), by their ``timestamp`` as the server orders them (``search_events``)."""
    nested, flat, stored = [], [], []
    for name, value in files.items():
        parts = name.split("/")
        found = EVENT_NAME.match(parts[-1]) if len(parts) == 1 or (len(parts) == 2 and parts[0] == EVENTS_DIR) else None
        if found and isinstance(value, dict):
            (nested if len(parts) == 2 else flat).append((int(found.group("idx")), value))
        elif len(parts) == 1 and STORE_EVENT_NAME.match(name) and isinstance(value, dict):
            stored.append((str(value.get("timestamp") or ""), value))
    indexed = nested or flat or stored
    state = files.get(BASE_STATE)
    return (state if isinstance(state, dict) else {}), [event for _, event in sorted(indexed, key=lambda x: x[0])]


def archived_conversation(archive: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(base state, the run's branch of events) of the conversation in an instance's archive (``ARCHIVES_DIR``:
    ``workspace/conversations/<id hex>/base_state.json`` and ``events/``, read in place, nothing unpacked). A
    sub-agent's conversation (under ``subagents/``) is no part of it. Raises a RecordError naming the archive and
    why where it holds no conversation, or more than one (no telling which was the run), none with an event, a
    member over ``sources.MAX_MEMBER_BYTES`` (4 MB of archive can hold 4 GB), a file that is not JSON, or it cannot
    be read (cut short, not a gzipped tar)."""
    shown = f"{ARCHIVES_DIR}/{archive.name}"
    conversations: dict[str, dict[str, Any]] = {}
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:
                parts = member.name.split("/")
                if not member.isfile() or SUBAGENTS_DIR in parts[:-1]:
                    continue
                if parts[-1] == BASE_STATE:
                    folder, name = "/".join(parts[:-1]), BASE_STATE
                elif len(parts) > 2 and parts[-2] == EVENTS_DIR and EVENT_NAME.match(parts[-1]):
                    folder, name = "/".join(parts[:-2]), f"{EVENTS_DIR}/{parts[-1]}"
                else:
                    continue
                if conversations and folder not in conversations:
                    raise RecordError(f"its conversation archive {shown} holds more than one conversation "
                                      f"({next(iter(conversations))}/, {folder}/): no telling which was the run")
                if member.size > sources.MAX_MEMBER_BYTES:
                    raise RecordError(f"its conversation archive {shown}: {member.name} holds {member.size} bytes, "
                                      f"over the {sources.MAX_MEMBER_BYTES / (1 << 30):g} GiB a member is read up to")
                if (handle := tar.extractfile(member)) is not None:
                    try:
                        conversations.setdefault(folder, {})[name] = loads(handle.read().decode("utf-8"))
                    except ValueError as exc:  # (bad UTF-8 is a ValueError too)
                        raise RecordError(f"its conversation archive {shown}: {member.name} is not JSON "
                                          f"({type(exc).__name__}: {str(exc)[:120]})") from None
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise RecordError(f"its conversation archive {shown} cannot be read ({type(exc).__name__}: {exc})") from None
    if not conversations:
        raise RecordError(f"its conversation archive {shown} holds no conversation")
    state, events = folder_events(next(iter(conversations.values())))
    if not events:
        raise RecordError(f"its conversation archive {shown} holds no event")
    return state, active_branch(events, state.get("leaf_event_id"), state.get("execution_status"))


def active_branch(events: list[dict[str, Any]], leaf: Any, status: Any = None) -> list[dict[str, Any]]:
    """The branch ending at ``leaf`` (``EventStore.path_to_root``): an event's ``parent_id``, else the one
    before it (events older than the tree); all the events when the leaf is not among them. With it, in log order,
    the state updates stamped with one of its events (or the root) as their parent: ``ConversationState.append_event``
    stamps a ``ConversationStateUpdateEvent`` with the leaf but does not move it ("a state-sync artifact, not a tree
    node"), so the execution statuses and an agent server's ``/goal`` loop's statuses hang off the branch, the
    first ones off the root; so do the hooks' events (:data:`HOOK_EVENT`). A conversation whose ``status`` is still
    ``running`` on disk was cut off mid-step, its leaf older than its log (see :func:`_unsaved_tail`): the events its
    last step appended after the leaf are read too."""
    at = {e.get("id"): n for n, e in enumerate(events)}
    if not isinstance(leaf, str) or leaf not in at or not any("parent_id" in e for e in events):
        return events
    chain, seen, n = [], set(), at[leaf]
    while n is not None and n not in seen:
        seen.add(n)
        chain.append(events[n])
        parent = events[n].get("parent_id")
        n = None if parent == ROOT_PARENT_ID or (parent is None and n == 0) else (
            at.get(parent) if parent is not None else n - 1)
    on, nodes = {id(e) for e in chain}, {e.get("id") for e in chain} | {ROOT_PARENT_ID, None}
    branch = [e for e in events if id(e) in on or (e.get("kind") in (STATE_UPDATE, HOOK_EVENT)
                                                   and e.get("parent_id") in nodes)]
    branch += _unsaved_tail(events, at[leaf]) if status == "running" else []
    return _with_orphaned_calls(branch, events)


_ANSWERS = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})


def _with_orphaned_calls(branch: list[dict[str, Any]], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``branch`` with the events of its steps that a crash recovery left off it put back, each after its parent:
    the calls of a model response one of whose calls (or answers) is on the branch, and the answers to them, where
    they hang off the branch. An agent server's crash recovery answers only the first call a killed process left
    running (``get_unmatched_actions`` over the whole log, ``event_service.py``) with an ``AgentErrorEvent`` ("A
    restart occurred while this tool was in progress ..."): before software-agent-sdk #4488 stamped onto the stale
    leaf (see :func:`_unsaved_tail`), the calls and the error siblings; since, parented to that first call, the
    response's later calls its siblings. Either way the branch the conversation went on from holds the error but not
    all of the step's calls: one model response's calls are one step, whichever of them the branch names."""
    on = {id(e) for e in branch}
    calls = {e.get("tool_call_id"): e for e in events if e.get("kind") == "ActionEvent" and e.get("tool_call_id")}
    responses = {e.get("llm_response_id") for e in branch if e.get("kind") == "ActionEvent"} | {
        calls[e["tool_call_id"]].get("llm_response_id") for e in branch
        if e.get("kind") in _ANSWERS and e.get("tool_call_id") in calls}
    responses.discard(None)

    def of_step(event: dict[str, Any]) -> bool:
        call = event if event.get("kind") == "ActionEvent" else (
            calls.get(event.get("tool_call_id")) if event.get("kind") in _ANSWERS else None)
        return call is not None and call.get("llm_response_id") in responses

    children: dict[Any, list[dict[str, Any]]] = {}
    for event in events:
        if id(event) not in on and "parent_id" in event and of_step(event):
            children.setdefault(event["parent_id"], []).append(event)
    out: list[dict[str, Any]] = []

    def put(event: dict[str, Any]) -> None:
        out.append(event)
        for child in children.pop(event.get("id"), []):
            put(child)

    for event in branch:
        put(event)
    return out


def _unsaved_tail(events: list[dict[str, Any]], leaf: int) -> list[dict[str, Any]]:
    """The events appended after the ``leaf`` at index ``leaf`` that continue it to the end of the log, one after
    the other, where they are one step's, else none. The SDK saves ``base_state.json`` (its ``leaf_event_id``) once
    per step, when the step lets go of the state (``ConversationState.__exit__``), while each event file is written
    as it comes: a process killed in the middle of a step (a closed terminal, a harness's hard timeout, an agent
    server that died) leaves the step's events, its calls of the command that was running, past a leaf that still
    says ``running`` (software-agent-sdk #4488). A ``ConversationStateUpdateEvent`` is stamped with the leaf but does
    not move it, and is no node of the branch. One step writes the calls of one model response and their answers,
    or one message: more past the leaf is a branch the user went back from (``navigate_to``) in a conversation whose
    status was left ``running``, not read."""
    head, tail = events[leaf].get("id"), []
    for event in events[leaf + 1:]:
        if event.get("parent_id") != head:
            return []
        if event.get("kind") != STATE_UPDATE:
            head = event.get("id")
            tail.append(event)
    return tail if _one_step(tail) else []


def _one_step(events: list[dict[str, Any]]) -> bool:
    """Whether ``events`` can be what one step of the SDK's agent writes: the calls of one model response and the
    answers to them, at most one message (the reply with no call, the SDK's refusal or nudge, the critic's follow-up
    after a ``finish``), and bookkeeping (a ``TokenEvent`` before the calls, hook events)."""
    calls = {e.get("tool_call_id") for e in events if e.get("kind") == "ActionEvent"}
    return len({e.get("llm_response_id") for e in events if e.get("kind") == "ActionEvent"}) <= 1 and \
        sum(e.get("kind") == "MessageEvent" for e in events) <= 1 and \
        all(e.get("tool_call_id") in calls for e in events if e.get("kind") in _ANSWERS)


def page_order(events: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """(the agent server's page of events in the order they were appended, whether it came newest first): a page
    asked for with ``sort_order=TIMESTAMP_DESC`` (the app server's "latest message" look-ups ask so) runs
    backwards, and the server lists it by walking its log from the end, so reversed it is the log's order.
    Which way a page runs is read from the tree where its events carry one (an event's ``parent_id`` names the one
    appended before it: next to it going forwards, after it going backwards), else from times that never rise
    across the page. Not from its first and last times alone: the SDK stamps naive local time, so a conversation
    resumed in another time zone, or across a daylight-saving fall-back, steps back an hour mid-log; read as newest
    first, the whole run was reversed (every observation before its action, lost)."""
    ids = [e.get("id") for e in events]
    forwards = sum(1 for n in range(1, len(events)) if events[n].get("parent_id") == ids[n - 1])
    backwards_links = sum(1 for n in range(len(events) - 1) if events[n].get("parent_id") == ids[n + 1])
    if forwards or backwards_links:
        backwards = backwards_links > forwards
    else:
        stamps = [e["timestamp"] for e in events if isinstance(e.get("timestamp"), str) and e["timestamp"]]
        # ISO times of one server sort as text; a list merely unsorted (one step back) is left as it is
        backwards = len(set(stamps)) > 1 and all(a >= b for a, b in zip(stamps, stamps[1:]))
    return (events[::-1] if backwards else events), backwards


def page_not_first(events: list[dict[str, Any]], backwards: bool) -> str | None:
    """Why an agent server's page of events (in append order) is not its conversation from the start, else None.
    The start is a page whose first event is the tree's root (no ``parent_id``, or the explicit root) and, where no
    event names a parent (SDKs before the tree), the ``SystemPromptEvent`` every conversation opens with. A page that
    holds one kind or one source of events is a filtered search (``?kind=``, ``?source=``), whatever it starts
    with."""
    kinds = {e.get("kind") for e in events}
    sources = {e.get("source") for e in events}
    if len(events) > 1 and (len(kinds) == 1 or len(sources) == 1):
        which = f"kind={next(iter(kinds))}" if len(kinds) == 1 else f"source={next(iter(sources))}"
        return (f"a search of the agent server's events filtered by {which.split('=')[0]} (?{which}): it holds only "
                "those, not the conversation")
    first = events[0] if events else {}
    root = first.get("parent_id") in (None, ROOT_PARENT_ID)
    if root and (first.get("kind") == "SystemPromptEvent" or any(e.get("parent_id") for e in events)):
        return None
    if backwards:
        return ("a page of the conversation's newest events (sort_order=TIMESTAMP_DESC), without its start: save "
                "all pages as one list")
    return ("one page of the agent server's events (GET /api/conversations/<id>/events/search, 100 at most), not its "
            "first: it starts after the conversation's start, on an earlier page; save all pages as one list")


def own_message(text: str, first: bool, turn_end: dict[str, Any] | None, goal: bool = False) -> str | None:
    """What a ``source: "user"`` message is when the SDK itself wrote it, by what it says and where it stands, else
    None (the user's): ``refused`` (:data:`MALFORMED_CALL`), ``filtered`` (:data:`CONTENT_FILTERED`), ``critic``
    (:data:`CRITIC_FOLLOWUP`), ``goal`` (:data:`GOAL_NUDGE`). ``first``: the conversation's first user message, always
    the task; ``turn_end``: the agent's reply or ``finish`` call the message follows, if its turn had ended; ``goal``:
    whether a ``/goal`` loop said it runs (:func:`goal_status`), which re-prompts after any run's end (a stuck one
    too) or on resume. The SDK refuses a reply and nudges after a blocked one only in the middle of a run
    (``Agent.step``, right after the model's reply, whatever the step follows), never after the agent ended its turn:
    a message there is the user's, one pasting such an error too. Its critic follows up only a turn's end it scored
    (``critic_result`` on the reply or the ``finish`` call)."""
    if first:
        return None
    if goal and GOAL_NUDGE.match(text):
        return "goal"
    if turn_end is None:
        return "refused" if MALFORMED_CALL.match(text) else "filtered" if CONTENT_FILTERED.match(text) else None
    return "critic" if turn_end.get("critic_result") and CRITIC_FOLLOWUP.match(text) else None


def prompt_block(event: dict[str, Any]) -> tuple[str, str] | None:
    """A ``UserPromptSubmit`` hook's ``HookExecutionEvent`` that blocked the user's message: the message's id and the
    hook's reason (``HookManager.get_blocking_reason``: its ``reason``, else its stderr, which the SDK keeps up to
    50,000 chars of: kept by :func:`._common.hook_blocked_prompt`; "" for none), else None. The SDK logs it just
    before the message, which it keeps (a later turn's model call sees it in the history), but no turn runs for that
    message (``Agent.step``: ``pop_blocked_message``, the conversation set ``finished``): no prompt of the run's. A
    hook that also added context has the SDK write the message anew, under a new id: the block misses it, and the
    agent runs it (1.58.2, ``.ohc37/block-with-context``)."""
    if event.get("kind") != HOOK_EVENT or event.get("hook_event_type") != "UserPromptSubmit" \
            or event.get("blocked") is not True or not as_str(event.get("message_id")):
        return None
    return event["message_id"], as_str(event.get("reason")) or as_str(event.get("stderr")) or ""


def adds_prompt_context(event: dict[str, Any]) -> bool:
    """Whether ``event`` is a ``UserPromptSubmit`` hook's ``HookExecutionEvent`` that added context to the user's
    message (its ``additionalContext``): the SDK appends that text, the hooks' parts joined, to the message as its
    last ``extended_content`` part, which the model reads after the prompt (``_handle_user_prompt_submit``), and
    writes the message anew, under a new id, after the hook's event (:func:`prompt_context`)."""
    return event.get("kind") == HOOK_EVENT and event.get("hook_event_type") == "UserPromptSubmit" \
        and bool(as_str(event.get("additional_context")))


def prompt_context(event: dict[str, Any]) -> str:
    """The context a ``UserPromptSubmit`` hook added to the user's message ``event`` (:func:`adds_prompt_context`):
    its last ``extended_content`` text; the prompt is its ``llm_message`` alone."""
    parts = [b["text"] for b in as_list(event.get("extended_content")) if isinstance(b, dict)
             and isinstance(b.get("text"), str)]
    return parts[-1].strip() if parts else ""


def ends_turn(event: dict[str, Any]) -> bool:
    """Whether the agent's ``event`` ended its turn: a reply with no call (the SDK sets ``finished``), a ``finish``
    call."""
    if event.get("kind") == "ActionEvent":
        return event.get("tool_name") == "finish" or as_dict(event.get("action")).get("kind") == "FinishAction"
    return event.get("kind") == "MessageEvent" and event.get("source") == "agent"


def texts(blocks: Any) -> str:
    """The text of a list of content blocks (``TextContent``), joined."""
    return "\n".join(b["text"] for b in as_list(blocks) if isinstance(b, dict) and isinstance(b.get("text"), str))


def message_text(event: dict[str, Any]) -> str:
    return texts(as_dict(event.get("llm_message")).get("content")).strip()


def tool_arguments(event: dict[str, Any]) -> dict[str, Any]:
    """The LLM's tool-call arguments (decoded JSON), else the parsed action's fields."""
    raw = as_dict(event.get("tool_call")).get("arguments")
    decoded = decoded_arguments(raw)
    if isinstance(decoded, dict):
        return decoded
    return {k: v for k, v in as_dict(event.get("action")).items() if k != "kind" and v is not None}


def reasoning(holder: dict[str, Any]) -> str | None:
    """The model's reasoning an ``ActionEvent`` (or a ``Message``) carries: ``reasoning_content`` (chat completions,
    LiteLLM's), else the OpenAI Responses API's ``responses_reasoning_item`` (its ``summary`` texts, else its
    ``content``: what GPT-5 and Codex models give through ``api_mode`` responses, ``reasoning_content`` then null),
    else Anthropic's ``thinking_blocks`` (``thinking``; a redacted block has none)."""
    said = holder.get("reasoning_content")
    if isinstance(said, str) and said.strip():
        return said.strip()
    item = as_dict(holder.get("responses_reasoning_item"))
    for key in ("summary", "content"):
        parts = [t.strip() for t in as_list(item.get(key)) if isinstance(t, str) and t.strip()]
        if parts:
            return "\n\n".join(parts)
    return thinking_blocks_text(holder.get("thinking_blocks"))


def thought(event: dict[str, Any]) -> str | None:
    """The text the model wrote with the call (``thought``); its reasoning is added once per response."""
    return texts(event.get("thought")).strip() or None


def observation_text(observation: dict[str, Any]) -> str:
    """What the tool answered: ``content[].text`` (1.x), else the older ``output`` / ``message``; the terminal's
    control codes the shell wrote into it (the bracketed-paste switches ``ESC[?2004l``/``h``, colours) dropped."""
    text = texts(observation.get("content"))
    if not text:
        text = next((observation[key] for key in ("output", "message", "text") if isinstance(observation.get(key), str)),
                    "")
    return strip_terminal_codes(text)


def observation_error(observation: dict[str, Any], text: str) -> str | None:
    """The step's error: a command's non-zero exit code or timeout, ``is_error`` (older: ``error``)."""
    code = as_int(observation.get("exit_code"))
    if code is None:
        code = as_int(as_dict(observation.get("metadata")).get("exit_code"))
    if observation.get("timeout") is True:
        return "command timed out" + (f": {decisive_line(text)}" if decisive_line(text) else "")
    if code == -1:
        return "command did not finish (exit code -1)" + (f": {decisive_line(text)}" if decisive_line(text) else "")
    if code:
        return exit_code_error(text, code)
    flag = observation.get("is_error", observation.get("error"))
    if isinstance(flag, str) and flag.strip():
        return short(flag.strip(), 300)
    if flag is True:
        return short(decisive_line(text) or "tool error", 300)
    return None


def rejection(event: dict[str, Any]) -> str:
    """The error of a call the user or a hook rejected (``UserRejectObservation``): it never ran; a hook's block
    that gave no reason has the SDK's own words (:data:`HOOK_BLOCKED`), dropped."""
    if event.get("rejection_source") == "hook":
        return blocked_by_hook(str(event.get("rejection_reason") or ""), HOOK_BLOCKED)
    reason = short(str(event.get("rejection_reason") or "").strip(), 200)
    return not_run("rejected by the user" + (f": {reason}" if reason else ""))


def status_of(event: dict[str, Any]) -> str | None:
    """The execution status a ``ConversationStateUpdateEvent`` sets (alone, or in a ``full_state``)."""
    if event.get("key") == "execution_status" and isinstance(event.get("value"), str):
        return event["value"]
    if event.get("key") == "full_state":
        status = as_dict(event.get("value")).get("execution_status")
        return status if isinstance(status, str) else None
    return None


def goal_status(event: dict[str, Any]) -> dict[str, Any] | None:
    """The ``/goal`` loop's status a ``ConversationStateUpdateEvent`` of key :data:`GOAL_KEY` sets, else None."""
    value = event.get("value") if event.get("key") == GOAL_KEY else None
    return value if isinstance(value, dict) and isinstance(value.get("status"), str) else None


def goal_summary(goal: dict[str, Any]) -> dict[str, Any]:
    """What ``metadata.goal`` keeps of a ``/goal`` loop's status (:func:`goal_status`): its status and rounds, and
    its judge's last verdict's ``score``, ``complete`` and ``missing`` (clipped), each only where the SDK's type:
    a verdict's other keys, or its own ``status``, say nothing of the loop."""
    verdict = as_dict(goal.get("verdict"))
    missing = verdict.get("missing")
    summary = {"status": goal.get("status"), "rounds": as_int(goal.get("iteration")),
               "max_rounds": as_int(goal.get("max_iterations")), "score": finite(verdict.get("score")),
               "complete": verdict.get("complete") if isinstance(verdict.get("complete"), bool) else None,
               "missing": short(missing.strip(), 500, keep="head") if isinstance(missing, str) else None}
    return {key: value for key, value in summary.items() if value not in (None, "")}


def stats_model(stats: Any) -> tuple[str | None, float | None]:
    """(model, cost) of the agent's LLM in a state's ``stats.usage_to_metrics`` (the agent's usage id first)."""
    usage = as_dict(as_dict(stats).get("usage_to_metrics"))
    for key in sorted(usage, key=lambda k: k not in ("agent", "default")):
        metrics = as_dict(usage[key])
        model = metrics.get("model_name")
        if isinstance(model, str) and model and model not in ("default", ACP_NO_MODEL):
            cost = metrics.get("accumulated_cost")
            return model, cost if isinstance(cost, (int, float)) else None
    return None, None


def tool_names(event: dict[str, Any]) -> list[str]:
    """The tools a ``SystemPromptEvent`` (or ``SystemPromptUpdateEvent``) offered (each definition's ``name``, else its ``title``)."""
    names = []
    for tool in as_list(event.get("tools")):
        if isinstance(tool, dict):
            name = tool.get("name") or tool.get("title") or as_dict(tool.get("function")).get("name")
            if isinstance(name, str) and name:
                names.append(name)
    return names


def lone_event(event: dict[str, Any], source: Path) -> str:
    """Why one event is not a run, and the folder to ingest instead (the one above ``events/``, else the one that
    holds the event files)."""
    if source.parent.name == EVENTS_DIR:
        folder = source.parent.parent
        where = f"in {folder}/events/ beside {folder}/{BASE_STATE}"
    else:
        folder = source.parent
        where = f"in {folder}"
    return (f"this is one event ({event.get('kind')}) of an OpenHands SDK conversation, which keeps one event per "
            f"file {where}: ingest the conversation folder {folder}")


def subagent_session(event: dict[str, Any]) -> str | None:
    """The sub-agent session an ``ACPToolCallEvent`` ran in (its ``acp_session_id``; None: the root's, as every call
    of an agent without ``acp_subagents``), else None. A child's call is its own work, which the root's call that
    spawned it answers for (as Claude Code's sidechain records are left out of its session): read as the root's, a
    child's calls were the run's steps, a child's cancelled call its failed one, and a child's ids (a server counts
    them per session) could take over a root call's step. The bridge writes a child's events from the conversation's
    emitter, between the root's, wherever they fall."""
    if event.get("kind") != "ACPToolCallEvent":
        return None
    session = event.get("acp_session_id")
    return session if isinstance(session, str) and session else None


def acp_call(step: dict[str, Any] | None, event: dict[str, Any]) -> dict[str, Any]:
    """An ``ACPToolCallEvent`` put on the step of its call (a new one when ``step`` is None): the tool (its
    ``tool_kind``, else its ``title``), its input (``raw_input``; a placeholder's empty one leaves what is known),
    and, once the call has ended (``_ended``), what it gave back and its error (see ``acp_result``)."""
    if step is None:
        step = {"action": UNNAMED_TOOL, "arguments": {}, "started_at": iso_time(event.get("timestamp"))}
    kind = event.get("tool_kind") if isinstance(event.get("tool_kind"), str) else ""
    title = event.get("title").strip() if isinstance(event.get("title"), str) else ""
    step["action"] = kind if kind not in _ACP_UNNAMED else (title or step["action"])
    raw = event.get("raw_input")
    if isinstance(raw, dict) and raw:
        step["arguments"] = raw
    elif raw not in (None, {}, "", []):
        step["arguments"] = {"input": raw}
    elif not step["arguments"] and title:
        step["arguments"] = {"title": title}
    if event.get("status") in ACP_ENDED or event.get("is_error") is True:
        text, error = acp_result(event, step["arguments"])
        step.update(observation=text or None, error=error, ended_at=iso_time(event.get("timestamp")), _ended=True)
    return step


#: How long before its "ACP prompt timed out" / "ACP error" notice (its ``InterruptEvent``) the SDK closes the calls
#: in flight: at once, one ``on_event`` after the other in one thread (``_emit_turn_timeout``, ``_emit_turn_error``).
#: Only a close that shows more than the call had shown needs it (see ``closed_with``).
_CANCEL_WINDOW = timedelta(seconds=1)
#: Why a call the SDK closed with no notice after it did not end: ``_cancel_inflight_tool_calls`` runs, after the
#: sleep, before each retry of a turn that met a retriable error (the next attempt's calls have new ids).
ABANDONED = "the SDK gave the call up before it ended (its attempt of the turn was dropped, as before a retry)"


def _news(event: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """The text of an ACP call's ``content`` that is not its input echoed (Claude Code sends a command's
    description as content) nor an edit's diff: what the server said of the call."""
    echoes = {v.strip() for v in arguments.values() if isinstance(v, str)}
    return [b for b in (_acp_block(c) for c in as_list(event.get("content")) if as_dict(c).get("type") != "diff")
            if b and b.strip() not in echoes]


def acp_copy(closing: dict[str, Any], before: dict[str, Any] | None, arguments: dict[str, Any]) -> bool:
    """Whether a call's ``failed`` event without ``raw_output`` says nothing the call's event ``before`` it (still
    running) had not: the SDK's close, whatever follows it. ``_cancel_inflight_tool_calls`` re-emits a call's state
    as it gathered it, ``failed``; a server's own failure says why (gemini-cli's error text as content). Not an
    equality of the two events: the progress frames the SDK gathers without writing them change a call's title and
    input (Claude Code's, once the input is known) and add its description as content."""
    if before is None:
        return False
    seen = set(_news(before, arguments))
    return all(text in seen for text in _news(closing, arguments))


#: The ACP servers that end every call they gave an input (``raw_input``) with ``raw_output`` (Claude Code's
#: ``rawOutput``, codex-acp's end record): ``ACPAgent.acp_server``'s keys, and their packages in ``acp_command``
#: (an agent built without ``ACPAgentSettings`` names no server; the SDK itself spots codex-acp by its command).
#: Not gemini-cli (no input), nor Qwen Code (``qwen --acp``: a call that threw ends ``failed`` with no output).
_ENDS_OWN_CALLS = frozenset({"claude-code", "codex"})
#: Their executables and npm packages' names (``claude-agent-acp``, ``@agentclientprotocol/claude-agent-acp``,
#: ``@zed-industries/claude-code-acp``, ``codex-acp``, ``@zed-industries/codex-acp``), matched whole: a path's last
#: part, a package's name after its scope and before its version, a Windows shim's ``.cmd``/``.exe`` cut (review RF:
#: a substring took ``codex-acp-proxy`` or ``/opt/claude-code-acp-fork/run.sh``, other servers).
_ENDS_OWN_CALLS_PACKAGES = frozenset({"claude-agent-acp", "claude-code-acp", "codex-acp"})
_PACKAGE_VERSION = re.compile(r"(?<=.)@[^/@]*$")  # ``name@1.2.0``, ``@scope/name@latest``
_SHIM = re.compile(r"\.(?:cmd|exe|ps1)$", re.IGNORECASE)
#: A package's own folder in a path run by node (``node .../node_modules/@zed-industries/claude-code-acp/dist/...``).
_NODE_MODULE = re.compile(r"node_modules/(?:@[^/]+/)?([^/]+)")


def ends_own_calls(agent: dict[str, Any]) -> bool:
    """Whether an ``ACPAgent``'s server (``base_state.json``'s ``agent``) ends its own calls with ``raw_output``
    (``_ENDS_OWN_CALLS``): a ``failed`` event of one of its calls without it is the SDK's close."""
    if agent.get("acp_server") in _ENDS_OWN_CALLS:
        return True
    words = [word.replace("\\", "/") for part in as_list(agent.get("acp_command")) if isinstance(part, str)
             for word in part.split()]
    return any(_SHIM.sub("", _PACKAGE_VERSION.sub("", word).rsplit("/", 1)[-1]) in _ENDS_OWN_CALLS_PACKAGES
               or any(name in _ENDS_OWN_CALLS_PACKAGES for name in _NODE_MODULE.findall(word)) for word in words)


def closed_with(closing: dict[str, Any], notice: dict[str, Any], copied: bool, ends_own: bool = False) -> bool:
    """Whether a call's ``failed`` event just before the SDK's notice that it gave the turn up (its message, its
    ``InterruptEvent``) is the SDK's close: a copy of what the call had shown (``acp_copy``), else one written at
    once before it (a server's output streamed as content, codex-acp's, which the SDK gathered without writing);
    without times, it is. A failure the server reported, then a model call that broke, comes longer before.
    Before an ``InterruptEvent`` the SDK does more than write: ``astep`` closes the calls, then flushes the ACP
    agent's file credentials (Codex's ChatGPT ``auth.json``: read twice with a pause and, when Codex rotated its
    token, saved to the credential store over HTTP, 5 s at most, a conflict another 5 s) before ``arun`` takes the
    state lock to write it. There a call given an input (``raw_input``) by a server that ends its own calls with
    ``raw_output`` (``ends_own``: see :func:`ends_own_calls`) is the SDK's close however long before; any other
    server's (Qwen Code's failure, gemini-cli's), or one not known (events read alone), keeps the window."""
    at, then = iso_time(closing.get("timestamp")), iso_time(notice.get("timestamp"))
    given = closing.get("raw_input") not in (None, {}, "", [])
    return copied or at is None or then is None or timedelta(0) <= then - at <= _CANCEL_WINDOW or (
        notice.get("kind") == "InterruptEvent" and ends_own and given and then >= at)


def turn_broke(notice: str) -> str:
    """Why a call closed with the SDK's "ACP prompt timed out ..." / "ACP error: ..." notice did not end."""
    first = re.split(r"(?<=\.)\s", notice.strip(), maxsplit=1)[0]
    return f"the turn broke before the call ended ({first})"


def interrupted(event: dict[str, Any]) -> str:
    """Why the calls closed just before an ``InterruptEvent`` did not end: ``LocalConversation.arun`` writes it once
    the run was cancelled (the user stopped the agent, or a new message superseded the turn)."""
    reason = event.get("reason") if isinstance(event.get("reason"), str) else ""
    return "the turn was interrupted" + (f" ({reason.strip()})" if reason.strip() not in ("", _INTERRUPTED) else "")


def acp_cancelled(step: dict[str, Any], event: dict[str, Any], why: str) -> None:
    """A call the SDK closed as ``failed`` (``_cancel_inflight_tool_calls``) because the turn broke (just before its
    "ACP prompt timed out ..." / "ACP error: ..." notice) or was interrupted (just before the ``InterruptEvent``):
    it was cancelled (``why``), not failed on its own; what the server had sent for it (Claude Code's description of
    a command, an edit's diff) is its input, no answer: the observation is only the text that is not (output a
    server streamed as content before the turn stopped)."""
    said = _news(event, step["arguments"])
    step.update(observation="\n".join(t for t in said if t.strip()) or None, error=short(f"cancelled: {why}", 300))


def acp_result(event: dict[str, Any], arguments: dict[str, Any]) -> tuple[str, str | None]:
    """(what an ended ACP tool call gave back, its error). ``raw_output``: a string as it is (Claude Code's); a
    command's record, its first output that is not empty (Codex's ``{"formatted_output", "exit_code"}``, its failed
    patch's ``stderr``); content blocks (Claude Code's Task / MCP results) or an MCP ``CallToolResult`` (Codex's,
    ``isError`` its failure), their text; any other value as JSON; none: the text of the ``content`` blocks (a diff
    as its path and new text). The error: a non-zero exit code (the record's, Claude Code's ``Exit code N`` first
    line, gemini-cli's "Command exited with code: N", or in debug mode the ``Exit Code: N`` of the report it shows; a
    search's "no match" is none), the ``error`` the record names, a gemini-cli command's output ending as only a failed
    command's does (``_common.ended_failing``: it sends no exit code for a command that printed something),
    else a failed call's decisive line (by ``claude_code``'s rule for Claude Code's results)."""
    raw = event.get("raw_output")
    record = raw if isinstance(raw, dict) else {}
    failed = event.get("status") == "failed" or event.get("is_error") is True or record.get("isError") is True
    keys = _ACP_FAILED_OUTPUT_KEYS if failed else _ACP_OUTPUT_KEYS
    outputs = [record[k] for k in keys if isinstance(record.get(k), str)]
    said = next((o for o in outputs if o.strip()), "" if outputs else None)
    blocks = _result_blocks(raw)
    if isinstance(raw, str) or said is not None:
        text = raw if isinstance(raw, str) else said
    elif blocks is not None:
        text = blocks
    elif raw is not None:
        text = json.dumps(raw, ensure_ascii=False)
    else:
        text = "\n".join(filter(None, (_acp_block(b) for b in as_list(event.get("content")))))
    text = strip_terminal_codes(text)
    code = as_int(record.get("exit_code", record.get("exitCode")))
    command = command_line(arguments)
    if code:
        return text, exit_code_error(text, code, command)
    shell = code is None and event.get("tool_kind") == "execute"
    # gemini-cli's display of a command that printed nothing and did not succeed (``_gemini_stream.SILENT_FAILURE``,
    # the stream reader's rule): the exit code is only there; its "Command failed: ..." comes as a ``failed`` call
    shown = GEMINI_SILENT_FAILURE.fullmatch(text.strip()) if shell else None
    if shown:  # its exit code, else the signal it names
        return text, exit_code_error("", int(shown.group(1)), command or _gemini_command(event)) if shown.group(1) \
            else short(text.strip(), 300)
    if shell and (timed_out := gemini_shell_timeout(text)):  # killed at its inactivity timeout, sent "completed"
        return text, timed_out
    if shell and text.startswith("Output: ") and (reported := gemini_shell_error(text, command or _gemini_command(
            event), failed)):  # gemini-cli in debug mode shows the model's report, its exit code in it
        return text, reported
    if isinstance(record.get("error"), str) and record["error"].strip():
        return text, short(record["error"].strip(), 300)
    if shell and not failed and (gemini := _gemini_command(event)) is not None:
        # gemini-cli shows a command that failed printing something as ``completed`` with that output alone (its
        # display, as in its stream-json: ``_gemini_stream._shell_failure``): only the output's end tells
        return text, ended_failing(text, printing_program(command or gemini))
    if not failed:
        return text, None
    # Claude Code's results read as its own transcripts are (an ``Exit code N`` first line, the ``<tool_use_error>``
    # tags of a call it refused, the head it keeps of a long output); any other server's text has none of those
    error = claude_result_error({"is_error": True}, text, {}, command) if text.strip() else "tool call failed"
    return text, short(error, 300) if error else None  # none: a search's "Exit code 1" alone, no match


def _result_blocks(raw: Any) -> str | None:
    """The text of a ``raw_output`` that is content blocks (Claude Code's ``rawOutput``: a Task's or an MCP tool's
    result, ``[{"type": "text", "text"}]``) or an MCP ``CallToolResult`` (``{"content": [...], "isError"}``); None
    for anything else."""
    if isinstance(raw, dict) and isinstance(raw.get("content"), list) and set(raw) <= _MCP_RESULT_KEYS:
        structured = raw.get("structuredContent", raw.get("structured_content"))
        raw = raw["content"]
        if not raw:  # a result of structured content only
            return json.dumps(structured, ensure_ascii=False) if structured is not None else ""
    if not isinstance(raw, list) or not raw or not all(isinstance(b, dict) and isinstance(b.get("type"), str)
                                                       for b in raw):
        return None
    return "\n".join(filter(None, (_acp_block(b) for b in raw)))


def _gemini_command(event: dict[str, Any]) -> str | None:
    """The command a gemini-cli shell call ran, from its title (it sends no ``rawInput``)."""
    title = event.get("title")
    found = _GEMINI_SHELL_TITLE.match(title.strip()) if isinstance(title, str) else None
    return found.group("command") if found else None


def acp_model(agent: dict[str, Any], agent_state: dict[str, Any]) -> str | None:
    """The model an ``ACPAgent`` ran: the ``acp_model`` it was told, else the one its server reported
    (``agent_state.acp_current_model_id``, SDK 2026-05+), unless that is an alias naming none."""
    for found in (agent.get("acp_model"), agent_state.get("acp_current_model_id")):
        if isinstance(found, str) and found.strip() not in _ACP_MODEL_ALIASES:
            return found.strip()
    return None


def _acp_block(block: Any) -> str | None:
    """The text of one ACP tool-call content block: ``text``, a ``content`` block wrapping one, a ``diff`` (path and
    new text); snake_case as the SDK dumps them, camelCase as the wire has them."""
    block = as_dict(block)
    if block.get("type") == "content":
        return _acp_block(block.get("content"))
    if block.get("type") == "diff":
        new = block.get("new_text", block.get("newText"))
        return "\n".join(str(p) for p in (block.get("path"), new) if isinstance(p, str) and p) or None
    text = block.get("text")
    return text if isinstance(text, str) and text else None
