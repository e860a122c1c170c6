"""``qwen-code``: Qwen Code (``@qwen-code/qwen-code``, a Gemini CLI fork) sessions; its headless output is refused.

Source read: QwenLM/qwen-code ``packages/core/src/services/chatRecordingService.ts`` (the records, their
``subtype``s, ``rewindRecording``), the CLI 0.24.4 bundle, and files written by the real CLI (see
``tests/fixtures/qwen-code/SOURCE.md``).

A session is ``~/.qwen/projects/<project>/chats/<session id>.jsonl``: one record a line, each with ``uuid``,
``parentUuid``, ``sessionId``, ``timestamp``, ``cwd``, ``version``, ``type`` (``user``, ``assistant``,
``tool_result``, ``system``) and, from 0.2x, ``provenance``. Messages are Gemini's (``message.parts``: ``text``,
``thought``, ``functionCall``, ``functionResponse``) and are read by Gemini CLI's ``Recording``; the records are Claude
Code's look-alikes, which Claude Code's adapter leaves alone (no ``content``). A sub-agent writes its own file,
``subagents/<parent session id>/agent-<agent id>.jsonl`` (``isSidechain``, ``agentId``), with an
``agent-<id>.meta.json`` beside it (its launch settings: passed over, ``side_path``), and a session has its
sidecars (``<id>.ledger.jsonl``, ``.pr.json``, ``.worktree.json``, ``.runtime.json``: passed over too). The
project's ``workflows/`` keeps a workflow run's records (passed over: its agents' transcripts are sub-agents' files,
``subagents/<session>/agent-workflow-agent-<id>.jsonl``). The project's folder also holds the auto-memory's
``meta.json`` and ``extract-cursor.json`` (passed over, ``side_file``) and its ``memory/``; ``~/.qwen`` its usage
files and extension store (``side_file``), its settings, credentials and extensions' manifests (``side_path``): none
a run.

Mapping
- The conversation is the ``parentUuid`` chain from the last record, as the CLI rebuilds a session
  (``reconstructHistory``): a ``/rewind`` (or ACP's ``qwen/control/session/rewind``) re-roots the chain, and what
  it undid is left out (its record count in ``metadata.rewound_records``, its prompts in ``rewound_prompts``). The
  metadata the CLI appends off the chain on purpose (``_OFF_CHAIN``: a ``custom_title`` re-appended every 32 KB, a
  hosted session's ``turn_result`` written with no parent) is neither the chain's tail nor an undone record.
- task: the first ``user`` record the user typed (no ``subtype``, or ``mid_turn_user_message``; ``provenance``
  ``real_user`` where recorded): its ``systemPayload.displayText`` where recorded (what was typed: a custom slash
  command as typed, not its expansion; written when a ``UserPromptSubmit`` hook added context), else its text
  without what the CLI added after the words: the content of its ``@file`` references (``--- Content from
  referenced files --- ... --- End of content ---``) and a hook's ``<qwen:user-prompt-submit-context>`` part; later
  ones go to ``metadata.user_prompts``. A prompt the cron scheduler fired (``user``, ``subtype`` ``cron``: one the
  user scheduled) is a prompt too, as the model was sent it, counted in ``metadata.scheduled_prompts``. A
  ``/goal <objective>`` writes no ``user`` record: its ``system``
  ``goal_state`` record (``cause`` ``create``, ``replace``, ``edit``) is the prompt, worded as the CLI replays it,
  and the turns the goal drives open with the CLI's own ``goal_runtime`` user records (no prompt; the goal's last
  ``status``, ``active``, ``paused``, ``complete``, ..., in ``metadata.goal_status``, no verdict). A
  ``notification`` user record (``<task-notification>``: a background agent or command finished) is no prompt: its
  report joins the observation of the call that launched it (``add_report``).
- steps: each ``functionCall`` part a step (action = its ``name``: ``run_shell_command``, ``read_file``, ``edit``,
  ``write_file``, ``grep_search``, ``agent``, ...; arguments = ``args``); ``thought`` parts are its thought, text
  before it narration; text with no call after it is a ``respond`` step. A ``tool_result`` record's
  ``functionResponse`` is the observation (``response.output``, else ``response.error``). Step.error: the
  ``toolCallResult.status`` ``error`` or ``cancelled`` (its ``response.error``); a shell command (its
  ``resultDisplay`` a ``shell_result``) by its ``exitCode`` as every CLI adapter reads exit codes
  (``exit_code_error``: grep's exit 1 with no output is no error; Qwen records it ``success``); an ``agent`` call
  whose sub-agent failed (its ``resultDisplay`` ``task_execution`` ``status: failed``, the call ``success``) by its
  ``terminateReason``. A call with no
  result when the file ends (a kill; ``--max-tool-calls`` aborting the run before it ran) -> "tool call never
  finished", as OpenCode's call left ``running``.
- a compression (``system`` ``chat_compression``: the CLI summed up the history, on a context overflow or its token
  threshold) is counted in ``metadata.compactions``; its summary is no step.
- outcome: a session holds no verdict -> ``unknown``; a session whose last record is a call's result ``cancelled``
  (the user pressed Esc or Ctrl-C, or ``qwen -p`` got SIGINT) says so in ``metadata.ended_by``, no verdict; one
  whose last API error (``system`` ``ui_telemetry`` ``qwen-code.api_error``: its ``error_message``, 0.5's
  ``error``) has no model reply after it ended on the provider -> ``infra_error`` with its message, or on its
  context window ("maximum context length") -> the agent's ``failure`` (``_agent_cli.ended_on_error``); every API
  error's text is in ``metadata.api_errors``.
- trajectory_id = ``qwen-code.<sessionId>`` (a sub-agent's: ``.agent-<agentId>`` added, ``is_subagent`` and
  ``parent_session_id`` in metadata); created_at = the first record's time; model_id = the first assistant
  record's ``model``; tool_versions = ``{"qwen-code": version}``.

Before 0.3 Qwen Code wrote Gemini CLI's recording (``~/.qwen/tmp/<hash>/chats/session-*.json``), its replies
typed ``qwen``: read by Gemini CLI's reader (``gemini_cli.read_recording``), as ``qwen-code``; one with no reply (the
provider failed on the first request) has only its place to say so (``format_by_place``).

Headless output (``qwen -p --output-format stream-json``, one JSON line an event; ``json``, the same events as one
array; Claude Code's stream shape, its ``init`` naming ``qwen_code_version``) is refused: it never records the prompt
(``--input-format stream-json`` does not echo it either), and the session file holds the same run with it; the
refusal names that file (``~/.qwen/projects/<the cwd, lower-cased on Windows, each character not a letter or digit a
dash>/chats/<session
id>.jsonl``), once a file however many runs it holds. A lone ``result`` line (no ``init``: the run failed at
startup, no API key) is refused saying so. The output of a command the CLI answered itself (``qwen -p
"/compress"``: no model turn) is passed over (``side_document``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import NEVER_FINISHED
from trajsearch.model import Trajectory

from . import gemini_cli
from ._agent_cli import (
    API_ERROR_CAUSE,
    add_report,
    as_records,
    as_str,
    command_line,
    exit_code_error,
    first_time,
    prompt_list,
    session_trajectory,
    task_notifications,
    whole_file,
)
from ._common import Context, RecordError, as_dict, as_list, loads, short
from .gemini_cli import FAILED, Recording, shell_report_error

NAME = "qwen-code"
#: Where Qwen Code keeps its sessions (``~/.qwen/projects``): walked though hidden.
SESSION_FOLDERS = (".qwen/projects", ".qwen/tmp")  # (the second: before 0.3, Gemini CLI's layout)
#: A file is one session (or one headless run's output).
WHOLE_FILE = True

_RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
#: User records the user typed: a prompt (no subtype) or a message sent while a turn ran.
_TYPED = (None, "mid_turn_user_message")
#: A scheduled prompt the cron scheduler fired (``recordCronPrompt``: a ``user`` record, ``subtype`` ``cron``,
#: ``provenance`` ``system``): written by the user beforehand (``/loop``, the cron tools), sent to the model as it
#: was written, so a prompt of the run; a session a cron job started holds no other.
_CRON = "cron"
#: A sub-agent's launch settings beside its file (``agent-<id>.meta.json``), by its name and keys.
_SUBAGENT_META = re.compile(r"agent-[\w-]+\.meta\.json")
_META_KEYS = frozenset({"agentId", "parentSessionId", "toolUseId"})
#: The auto-memory's files in a project's folder: its state's keys (``meta.json``), its cursor's
#: (``extract-cursor.json``).
_MEMORY_STATE = frozenset({"lastDreamAt", "lastDreamStatus", "lastDreamSessionId", "recentSessionIdsSinceDream"})
_EXTRACT_CURSOR = frozenset({"sessionId", "processedOffset", "updatedAt"})
#: The usage files in ``~/.qwen``, by their keys: the token ledger (``usage/token-usage-<month>.jsonl``, a line per
#: model request, ``tokenUsageService``) and the per-session summary (``usage_record.jsonl``, a line per session,
#: ``usageHistoryService``).
_TOKEN_LEDGER = frozenset({"schemaVersion", "localDate", "localMonth", "sessionId", "inputTokens", "totalTokens"})
_USAGE_RECORD = frozenset({"version", "sessionId", "startTime", "project", "durationMs", "models", "tools"})
#: The extension store in ``~/.qwen/extension-store/`` (``extension/extension-store.ts``): its state (``state.json``,
#: ``state.previous.json``: an ``ExtensionStoreSnapshot``, which extensions are on where) and an install's, update's or
#: uninstall's journal (``transactions/<id>.json``: ``ExtensionTransactionJournal``).
_EXTENSION_STATE = frozenset({"version", "generation", "legacyProjectionHash", "extensions"})
_EXTENSION_JOURNAL = frozenset({"version", "transactionId", "operation", "phase", "targetSnapshot"})
#: The CLI's files in a ``.qwen`` folder that hold no run, by name (``config/storage.ts``: ``Storage``'s settings
#: path, the user's ``~/.qwen`` and a project's ``.qwen`` alike; its Qwen OAuth and Google account files), and an
#: installed extension's manifest, ``~/.qwen/extensions/<name>/qwen-extension.json``
#: (``EXTENSIONS_CONFIG_FILENAME``). A walk of ``~/.qwen`` met each as an unrecognised dump.
_QWEN_DIR = ".qwen"
_QWEN_FILES = {"settings.json": "Qwen Code's settings (.qwen/settings.json), no run",
               "oauth_creds.json": "Qwen Code's Qwen OAuth credentials (~/.qwen/oauth_creds.json), no run: not read",
               "google_accounts.json": "Qwen Code's Google accounts (~/.qwen/google_accounts.json), no run"}
_EXTENSION_MANIFEST = "qwen-extension.json"
#: A session's sidecars beside it in ``chats/`` (and ``chats/archive/``, where archiving a session moves them with it),
#: ``SessionService`` of the CLI 0.24.4 bundle: the prompt ledger ``<id>.ledger.jsonl`` (``qwen serve``'s record of
#: each prompt's end: ``{v, promptId, state | terminal, code, stopReason, at}``), the pull requests the session opened
#: ``<id>.pr.json`` (``{prs: [{number, url, createdAt, state}]}``), its git worktree ``<id>.worktree.json``
#: (``{slug, worktreePath, worktreeBranch, originalCwd, ...}``) and the process running it ``<id>.runtime.json``
#: (``Storage.getRuntimeStatusPath``: ``{schema_version, pid, session_id, work_dir, hostname, started_at,
#: qwen_version}``). A walk of ``~/.qwen`` refused each as an unrecognised dump.
_SESSION_SIDECARS = {".ledger.jsonl": "the prompt ledger (when each prompt ended, as `qwen serve` records it)",
                     ".pr.json": "the pull requests it opened", ".worktree.json": "the git worktree it works in",
                     ".runtime.json": "the process running it"}
#: A workflow run's records in ``projects/<project>/workflows/`` (``Storage.getWorkflowRunsDir`` of the CLI 0.24.4
#: bundle; run ids ``wf_<hex>``, ``isWorkflowRunId``): a finished run's snapshot ``wf_<hex>.json`` (``toSnapshot``:
#: script, dispatches, events, result; the 30 newest kept) and, in ``wf_<hex>/``, its resume journal ``journal.jsonl``
#: (``{"type": "launched", "version": 1}``, ``started`` / ``result`` / ``failed`` by key) and, while it runs or once
#: interrupted, ``checkpoint.json`` (``checkpointFromTask``: ``{v, runId, sessionId, pid, hostname, ...}``). Each
#: agent the workflow dispatched writes its own transcript under ``subagents/<session>/``
#: (``attachDispatchTranscript``), read as a sub-agent's run, so these hold no run; a walk of ``~/.qwen`` refused each
#: as an unrecognised dump.
_WORKFLOW_RUN_ID = re.compile(r"wf_[0-9a-f]+")
_WORKFLOW_DIR = "workflows"
_WORKFLOW_RUN_FILES = {"journal.jsonl": "resume journal", "checkpoint.json": "checkpoint"}
#: The keys of the ``result`` line ending headless output (``buildResultMessage``): Claude Code's, without its cost.
_RESULT_KEYS = frozenset({"type", "subtype", "uuid", "session_id", "is_error", "duration_ms", "duration_api_ms",
                          "num_turns", "usage", "permission_denials", "error", "result", "stats", "structured_result"})
#: A ``UserPromptSubmit`` hook's context, a text part after the prompt's (``wrapUserPromptSubmitContext``).
_HOOK_CONTEXT = re.compile(r"\s*<qwen:user-prompt-submit-context>\n.*\n</qwen:user-prompt-submit-context>\s*", re.S)
_TURN_RESULT = "turn_result"  # a hosted turn's settlement (see _OFF_CHAIN)
#: System records the CLI appends off the ``parentUuid`` chain on purpose (``appendRecord(record, {updateActiveTail:
#: false})``): the title and source it re-appends every 32 KB for the session picker's tail scan, artifact records;
#: and a turn's settlement, ``turn_result`` (``systemPayload``: ``promptId``, ``state`` ``completed`` / ``cancelled``
#: / ``error``, ``stopReason``, ``endedAt``), which ``qwen serve``'s hosted (ACP) sessions write with no parent, and
#: which their own replay of the transcript leaves out: read as the chain's tail, it was the whole conversation. The
#: last one's ``state`` is kept (``metadata.last_turn_state``), no verdict: ``error`` is a hosted turn the harness
#: failed, ``cancelled`` one aborted, neither what the agent did.
_OFF_CHAIN = frozenset({"custom_title", "session_source", "session_sources_snapshot", "session_artifact_event",
                        "session_artifact_snapshot", _TURN_RESULT})
#: What an ``@file`` / ``@server:resource`` reference adds to a prompt (the CLI's ``REFERENCED_FILES_BLOCK`` and
#: ``MCP_RESOURCE_BLOCK``, ``atCommandProcessor``): the referenced content, no words of the user's.
_ADDED = re.compile(r"--- Content from referenced files ---.*?(?:--- End of content ---|\Z)|"
                    r"--- Content from MCP resource .*? \[([^\]\n]+)\] ---.*?(?:--- End of MCP resource .*? "
                    r"\[\1\] ---|\Z)", re.S)
#: A Windows path: a drive's (``C:\\``, ``C:/``) or a share's (``\\\\server``).
_WINDOWS_PATH = re.compile(r"[A-Za-z]:[\\/]|\\\\")
_CANCELLED = "the user: the last call was cancelled (Esc / Ctrl-C, or SIGINT to `qwen -p`)"
#: The ``goal_state`` causes that set the goal's objective, and how the CLI words them back as the user's ``/goal``
#: (its transcript replay, ``projectGoalControlCommand``). ``pause``, ``resume`` and ``clear`` are replayed too (as
#: ``/goal <cause>``; newer versions replay a ``pause`` only when the user typed it, not the runtime's), but they hold
#: no objective, so are no task; the other causes (``turn_finished``, ``checkpoint``, ``complete``, ...) are no command.
_GOAL_COMMANDS = {"create": "/goal ", "replace": "/goal ", "edit": "/goal edit "}


def _is_session_record(record: Any) -> bool:
    """A chat record: Claude Code's keys with Gemini's message (``parts``) or a ``systemPayload``."""
    if not isinstance(record, dict) or record.get("type") not in _RECORD_TYPES:
        return False
    if not ("uuid" in record and "parentUuid" in record and "sessionId" in record):
        return False
    message = record.get("message")
    return (isinstance(message, dict) and "parts" in message) or "systemPayload" in record


def _is_headless(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("qwen_code_version"), str)


def _is_result(record: Any) -> bool:
    """The ``result`` line of headless output: Claude Code's keys without its cost (``_RESULT_KEYS``)."""
    return isinstance(record, dict) and record.get("type") == "result" and isinstance(record.get("session_id"), str) \
        and "is_error" in record and record.keys() <= _RESULT_KEYS


def matches(record: Any) -> bool:
    return _is_session_record(record) or _is_headless(record) or _is_result(record) \
        or gemini_cli.qwen_recording(record)


def side_file(record: Any) -> str | None:
    """What a file Qwen Code keeps beside a project's sessions is (``~/.qwen/projects/<project>/``): its auto-memory's
    state (``meta.json``: the last "dream", the sessions since) and extraction cursor (``extract-cursor.json``: how
    far it has read a session), ``packages/core/src/memory/paths.ts``; and the usage files in ``~/.qwen``
    (``_TOKEN_LEDGER``, ``_USAGE_RECORD``), whose ledger read as Langfuse traces with no task, and its extension
    store's state and journals (``_EXTENSION_STATE``, ``_EXTENSION_JOURNAL``). No run."""
    if not isinstance(record, dict):
        return None
    if "version" in record and record.keys() & _MEMORY_STATE:
        return "Qwen Code's auto-memory state of a project (meta.json), no run"
    if "processedOffset" in record and record.keys() <= _EXTRACT_CURSOR:
        return "Qwen Code's auto-memory extraction cursor (extract-cursor.json: how far it read a session), no run"
    if _TOKEN_LEDGER <= record.keys():
        return "Qwen Code's token usage ledger (~/.qwen/usage/token-usage-<month>.jsonl, a line a request), no run"
    if _USAGE_RECORD <= record.keys():
        return "Qwen Code's usage summary of its sessions (~/.qwen/usage_record.jsonl: a line per session), no run"
    if _EXTENSION_STATE <= record.keys() or _EXTENSION_JOURNAL <= record.keys():
        return "Qwen Code's extension store (~/.qwen/extension-store/: which extensions are on where), no run"
    return None


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a sub-agent's ``subagents/<session>/agent-<id>.meta.json`` (its
    launch settings, no run) is passed over naming its run; the CLI's own files in a ``.qwen`` folder and an
    installed extension's manifest (``_QWEN_FILES``), a session's sidecars in ``projects/<project>/chats/``
    (``_SESSION_SIDECARS``: by name, naming the session's file beside them without looking for it) and a workflow
    run's records in ``projects/<project>/workflows/`` (``_WORKFLOW_RUN_ID``) are passed over by their place. By
    place and keys, after the other formats' hooks: a Harbor trial's copy of a session is the trial's (``atif``).
    Under ``--format qwen-code`` too (``fmt`` forced): forcing the format says how to read the project's sessions,
    not that this file is one."""
    if fmt not in (None, NAME):
        return None
    if path.parent.name == _QWEN_DIR and (what := _QWEN_FILES.get(path.name)):
        return what
    chats = path.parent.parent if path.parent.name == "archive" else path.parent
    if _project_folder_of(chats, "chats") and (what := _session_sidecar(path.name)):
        return what
    if what := _workflow_record(path):
        return what
    if path.name == _EXTENSION_MANIFEST and path.parent.parent.name == "extensions":
        return f"a Qwen Code extension's manifest (~/.qwen/extensions/{path.parent.name}/{path.name}), no run"
    if not _SUBAGENT_META.fullmatch(path.name) or path.parent.parent.name != "subagents":
        return None
    try:
        meta = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(meta, dict) and _META_KEYS <= meta.keys():
        return (f"a Qwen Code sub-agent's settings, no run: its run is {path.name.removesuffix('.meta.json')}.jsonl "
                "beside it")
    return None


def _session_sidecar(name: str) -> str | None:
    """What a session's sidecar in ``projects/<project>/chats/`` is, by its name (:data:`_SESSION_SIDECARS`),
    naming the session's file."""
    for suffix, what in _SESSION_SIDECARS.items():
        if name.endswith(suffix) and (session := name.removesuffix(suffix)):
            return f"Qwen Code's record of {what} for session {session}, no run: its run is {session}.jsonl beside it"
    return None


def _project_folder_of(folder: Path, name: str) -> bool:
    """Whether ``folder`` is a project's ``name`` folder, ``projects/<project>/<name>``: the folder's name alone
    would take another tool's files (Claude Code keeps a workflow's ``journal.jsonl`` in
    ``subagents/<session>/workflows/wf_<id>/``) for Qwen Code's (review RT2, 5)."""
    return folder.name == name and folder.parent.parent.name == "projects"


def _workflow_record(path: Path) -> str | None:
    """What a workflow run's record in ``projects/<project>/workflows/`` is, by its place and name
    (:data:`_WORKFLOW_RUN_ID`), naming where its agents' runs are."""
    if _project_folder_of(path.parent, _WORKFLOW_DIR) and path.suffix == ".json" \
            and _WORKFLOW_RUN_ID.fullmatch(path.stem):
        run, what = path.stem, "snapshot"
    elif (_project_folder_of(path.parent.parent, _WORKFLOW_DIR) and _WORKFLOW_RUN_ID.fullmatch(path.parent.name)
          and path.name in _WORKFLOW_RUN_FILES):
        run, what = path.parent.name, _WORKFLOW_RUN_FILES[path.name]
    else:
        return None
    return (f"Qwen Code's {what} of workflow run {run}, no run: each agent it dispatched is a sub-agent's run, "
            "subagents/<session>/agent-workflow-agent-<id>.jsonl")


def side_document(document: Any) -> str | None:
    """The adapter hook for a whole small file (see ``detect``): the headless output of a command the CLI answered
    itself (``qwen -p "/compress"``: its ``result`` counts no model turn, its one text is the CLI's), no run."""
    records = document if isinstance(document, list) else []
    result = next((r for r in reversed(records) if isinstance(r, dict) and r.get("type") == "result"), None)
    if records and _is_headless(records[0]) and result is not None and result.get("num_turns") == 0:
        said = short(str(result.get("result") or ""), 120)
        return f"the headless output of a command Qwen Code answered itself ({said!r}): no model turn, no run"
    return None


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """One session a file (headless ``--output-format json`` output: one JSON array of events, one run); none in a
    local command's output (``side_document``: a file too big for detection to have looked at whole)."""
    if side_document(document) is None:
        yield from whole_file(document)


def _chain(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records on the ``parentUuid`` chain ending at the last record, in file order (what ``/rewind`` cut off
    left out). A parent the file does not hold (a line lost: a writer killed mid-line, a cut file) goes on at the
    record before, so that a lost line loses no more."""
    with_ids = [r for r in records if isinstance(r.get("uuid"), str) and r.get("subtype") not in _OFF_CHAIN]
    by_uuid = {r["uuid"]: n for n, r in enumerate(with_ids)}
    keep: set[str] = set()
    at = len(with_ids) - 1
    while at >= 0 and with_ids[at]["uuid"] not in keep:
        keep.add(with_ids[at]["uuid"])
        parent = with_ids[at].get("parentUuid")
        at = by_uuid.get(parent, at - 1) if isinstance(parent, str) else -1
    return [r for r in records if r.get("uuid") in keep] if keep else records


def _message(record: dict[str, Any]) -> dict[str, Any]:
    """The record's message in the shape ``Recording`` reads (Gemini CLI's message record)."""
    message = as_dict(record.get("message"))
    return {"content": as_list(message.get("parts")), "timestamp": record.get("timestamp"),
            "model": record.get("model")}


def _prompt(record: dict[str, Any]) -> bool:
    """Whether a record is a prompt: one the user typed (``_TYPED``; ``real_user`` where its provenance is recorded)
    or scheduled (``_CRON``), as the chain and a rewind's undone records alike hold them."""
    if record.get("type") != "user":
        return False
    return record.get("subtype") == _CRON or (record.get("subtype") in _TYPED
                                               and record.get("provenance", "real_user") == "real_user")


def _users_words(record: dict[str, Any]) -> str:
    """What the user typed: the ``displayText`` recorded with it (a custom command as typed), else the prompt's text
    without a hook's context part (``_HOOK_CONTEXT``) and the files and MCP resources its ``@`` references put after
    it (``_ADDED``), as the CLI itself shows a prompt (``projectUserTranscriptForDisplay``) and reads its words
    (``extractTurnBudgetDirectiveText``)."""
    shown = as_dict(record.get("systemPayload")).get("displayText")
    if isinstance(shown, str) and shown.strip() and record.get("subtype") != _CRON:  # a cron's: the UI's notice
        return shown.strip()
    text = "".join(str(p["text"]) for p in as_list(as_dict(record.get("message")).get("parts"))
                   if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
                   and not _HOOK_CONTEXT.fullmatch(p["text"]))
    return _ADDED.sub("", text).strip()


def _tool_result(rec: Recording, record: dict[str, Any]) -> None:
    """A ``tool_result`` record: the observation (``Recording``), then its error by what Qwen recorded of it: a
    shell command's exit code (its ``resultDisplay``; a sub-agent's records keep only the shell tool's report, read
    as Gemini CLI's); a sub-agent that failed (its display's ``status``, the call recorded ``success``); else the call's
    ``status``."""
    rec.user(_message(record))
    result = as_dict(record.get("toolCallResult"))
    step = rec.by_call.get(str(result.get("callId")))
    if step is None:
        return
    display = as_dict(result.get("resultDisplay"))
    code, command = display.get("exitCode"), command_line(step.get("arguments"))
    failed = result.get("status") in FAILED
    if display.get("type") == "shell_result" and isinstance(code, int) and not isinstance(code, bool):
        output = as_str(display.get("output")) or ""
        step["error"] = exit_code_error(output, code, command) if code else None
        step["observation"] = output or step.get("observation")
    elif command and isinstance(step.get("observation"), str) and (
            error := shell_report_error(step["observation"], command, failed=failed or bool(step.get("error")))):
        step["error"] = error
    elif display.get("type") == "task_execution" and display.get("status") == "failed":
        step["error"] = short(str(display.get("terminateReason") or "sub-agent failed"), 300)
    elif failed and not step.get("error"):
        step["error"] = short(str(result.get("resultDisplay") or result["status"]), 300)


def _goal(record: dict[str, Any]) -> dict[str, Any]:
    """The goal a ``goal_state`` record holds (``systemPayload.snapshot.goal``: ``objective``, ``status``)."""
    return as_dict(as_dict(as_dict(record.get("systemPayload")).get("snapshot")).get("goal"))


def _goal_command(record: dict[str, Any], goal: dict[str, Any]) -> str | None:
    """The ``/goal <objective>`` the user typed, from the ``goal_state`` record it wrote (``_GOAL_COMMANDS``) and the
    goal it holds (:func:`_goal`): the CLI records the command no other way, and the turns it drives are its own
    ``goal_runtime`` prompts."""
    prefix = _GOAL_COMMANDS.get(str(as_dict(record.get("systemPayload")).get("cause")))
    objective = as_str(goal.get("objective"))
    return prefix + objective.strip() if prefix and objective and objective.strip() else None


def _notification(rec: Recording, record: dict[str, Any]) -> None:
    """A ``<task-notification>``: a background agent's or command's report, to the call that launched it."""
    rec.flush()  # the model's answer before the report is one, any after it another
    text = "\n".join(str(p["text"]) for p in as_list(as_dict(record.get("message")).get("parts"))
                     if isinstance(p, dict) and isinstance(p.get("text"), str))
    for note in task_notifications(text):
        step = rec.by_call.get(note.get("tool-use-id", ""))
        if step is not None:
            add_report(step, note)


def _unfinished(steps: list[dict[str, Any]]) -> None:
    """A call with no result when the file ends: the session stopped while it ran (killed; ``--max-tool-calls`` or
    ``--max-wall-time`` aborting the run before it), as OpenCode's call left ``running`` is read."""
    for step in steps:
        if step["action"] != "respond" and step.get("observation") is None and not step.get("error"):
            step["error"] = f"{NEVER_FINISHED} (no result recorded: the session stopped while it ran)"


def _api_error(record: dict[str, Any]) -> str | None:
    event = as_dict(as_dict(record.get("systemPayload")).get("uiEvent"))
    if record.get("subtype") == "ui_telemetry" and event.get("event.name") == "qwen-code.api_error":
        return short(str(event.get("error_message") or event.get("error") or "API error"), 500, keep="head")
    return None


def _session(records: list[dict[str, Any]], ctx: Context) -> Trajectory:
    chain = _chain(records)
    on_chain = {id(r) for r in chain}
    undone = [r for r in records if id(r) not in on_chain and r.get("subtype") not in _OFF_CHAIN]  # a rewind's
    rec = Recording()
    api_errors: list[str] = []
    compactions = 0
    cancelled = False  # the last record a call's result, cancelled: the session was stopped there
    goal_status = None
    scheduled = 0  # the prompts the cron scheduler fired (_CRON)
    for record in chain:
        kind, subtype = record.get("type"), record.get("subtype")
        if _prompt(record) and (words := _users_words(record)):
            rec.flush()  # what the user typed is what the model was sent: a prompt, "/tmp/x.py fails" too
            rec.prompts.append(words)
            scheduled += subtype == _CRON
        elif kind == "system" and subtype == "goal_state":
            goal = _goal(record)
            goal_status = as_str(goal.get("status")) or goal_status
            if command := _goal_command(record, goal):
                rec.flush()
                rec.prompts.append(command)
        elif kind == "user" and subtype == "notification":
            _notification(rec, record)
        elif kind == "user" and subtype == "goal_runtime":
            rec.flush()  # the CLI's own "Continue working on the active Goal": a new turn, no prompt of the user's
        elif kind == "assistant":
            rec.gemini(_message(record))
            cancelled = False
        elif kind == "tool_result":
            _tool_result(rec, record)
            cancelled = as_dict(record.get("toolCallResult")).get("status") == "cancelled"
        elif kind == "system" and subtype == "chat_compression":
            compactions += 1
        elif kind == "system" and (error := _api_error(record)):
            rec.flush()
            api_errors.append(error)
            rec.last_error = error
    rec.flush()
    _unfinished(rec.steps)
    if not rec.prompts:
        raise RecordError("no user prompt in this Qwen Code session (no user record with text)")
    first = chain[0] if chain else records[0]
    session_id = as_str(first.get("sessionId"))
    if not session_id:
        raise RecordError("missing field 'sessionId'")
    agent_id = next((as_str(r.get("agentId")) for r in chain if r.get("isSidechain") is True and r.get("agentId")),
                    None)
    versions = [v for r in chain if (v := as_str(r.get("version")))]
    settled = [as_dict(r.get("systemPayload")) for r in records if r.get("subtype") == _TURN_RESULT]
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": session_id,
        "cwd": as_str(first.get("cwd")),
        "git_branch": as_str(first.get("gitBranch")),
        "is_subagent": True if agent_id else None,
        "agent_id": agent_id,
        "agent_name": next((as_str(r.get("agentName")) for r in chain if r.get("agentName")), None),
        "parent_session_id": session_id if agent_id else None,
        "user_prompts": prompt_list(rec.prompts[1:]) or None,
        "compactions": compactions or None,
        "goal_status": goal_status,
        "scheduled_prompts": scheduled or None,
        "api_errors": api_errors[-10:] or None,
        "rewound_records": len(undone) or None,
        "rewound_prompts": prompt_list([w for r in undone if _prompt(r) and (w := _users_words(r))]) or None,
        "last_turn_state": as_str(settled[-1].get("state")) if settled else None,  # no verdict: see _TURN_RESULT
        "ended_by": _CANCELLED if cancelled and not rec.last_error else None,
        "models": rec.models if len(rec.models) > 1 else None,
    }
    return session_trajectory(
        ctx, run_id=f"qwen-code.{session_id}" + (f".agent-{agent_id}" if agent_id else ""), task=rec.prompts[0],
        model_id=rec.models[0] if rec.models else None, steps=rec.steps, metadata=metadata,
        last_error=rec.last_error, error_cause=API_ERROR_CAUSE,
        tool_versions={"qwen-code": versions[-1]} if versions else {},
        created_at=first_time(*(r.get("timestamp") for r in chain)),
    )


def _headless_refusal(records: list[dict[str, Any]]) -> str:
    """Why headless output is no run, and where its run is: the session file of each ``init`` (one a prompt)."""
    inits = [r for r in records if _is_headless(r)]
    if not inits:
        result = next((r for r in records if _is_result(r)), {})
        said = as_dict(result.get("error")).get("message") or result.get("result") or "no error recorded"
        return ("the headless output of a Qwen Code run that failed before its first model turn "
                f"({short(str(said), 300)}): no prompt, no steps, no session file; no run")
    files = list(dict.fromkeys(
        f"~/.qwen/projects/{_project_folder(as_str(r.get('cwd')) or '') or '<project>'}/chats/"
        f"{as_str(r.get('session_id')) or '<session id>'}.jsonl" for r in inits))
    runs = f"; this file holds {len(inits)} runs (one per prompt)" if len(inits) > 1 else ""
    return ("headless Qwen Code output (`qwen -p --output-format stream-json` / `json`) does not record the prompt"
            f"{runs}; ingest the session file instead: " + ", ".join(files))


def _project_folder(cwd: str) -> str:
    """The folder under ``~/.qwen/projects/`` that holds the sessions run in ``cwd``: each character not a letter or
    digit a dash, a Windows path (a drive's or a share's) lower-cased first, as the CLI names it (``sanitizeCwd``
    in its 0.24.4 bundle: ``os.platform() === "win32" ? cwd.toLowerCase() : cwd``)."""
    windows = _WINDOWS_PATH.match(cwd) is not None
    return re.sub(r"[^a-zA-Z0-9]", "-", cwd.lower() if windows else cwd)


#: A ``/chat save <tag>`` checkpoint's file name (``checkpoint-<tag, encoded>.json``).
_CHECKPOINT = re.compile(r"checkpoint-.+\.json")


def format_by_place(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a Gemini CLI recording in Qwen Code's folder of them before 0.3
    (``.qwen/tmp/<project hash>/chats/``) is Qwen Code's. One the model never replied to (the provider failed on the
    first request: real 0.1.4) holds the prompt alone, nothing of Qwen's own, and read as Gemini CLI's. So is a
    ``/chat save`` checkpoint in the project's folder (``.qwen/tmp/<project hash>/checkpoint-<tag>.json``, 0.1.4's
    ``Logger.saveCheckpoint``: Gemini ``Content[]``, no mark of Qwen's)."""
    if fmt != gemini_cli.NAME:
        return None
    parts = path.absolute().parts
    chats = len(parts) >= 5 and (parts[-5], parts[-4], parts[-2]) == (_QWEN_DIR, "tmp", "chats")
    saved = len(parts) >= 4 and (parts[-4], parts[-3]) == (_QWEN_DIR, "tmp") and _CHECKPOINT.fullmatch(parts[-1])
    return NAME if chats or saved else None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if gemini_cli.recording(record) or gemini_cli.saved_history(record) is not None:
        return gemini_cli.read_recording(record, ctx, name=NAME, label="Qwen Code", reply="qwen")
    records = as_records(record, "Qwen Code session")
    if any(_is_headless(r) or _is_result(r) for r in records[:3]):
        raise RecordError(_headless_refusal(records))
    return _session([r for r in records if _is_session_record(r)], ctx)
