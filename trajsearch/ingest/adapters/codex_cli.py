"""``codex-cli``: OpenAI Codex CLI rollouts, ``~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl``.

Source read: openai/codex ``codex-rs/protocol/src/models.rs`` (``ResponseItem``:
message, reasoning, local_shell_call, function_call, function_call_output,
custom_tool_call(_output), web_search_call, ghost_snapshot, compaction),
``protocol.rs`` (``RolloutLine``/``RolloutItem``, ``SessionMeta``, ``EventMsg``)
and ``core/src/rollout/policy.rs`` (which items are persisted); real rollouts
quoted in simonw/claude-code-transcripts and jazzyalex/agent-sessions.

A line is ``{"timestamp", "type", "payload"}`` with type ``session_meta``,
``response_item``, ``event_msg``, ``turn_context`` or ``compacted`` (newer
builds add ``world_state`` and others, skipped here). Rollouts written before
the envelope (mid 2025) start with a bare ``{"id", "timestamp",
"instructions"}`` meta line followed by bare response items and
``{"record_type": "state"}`` markers; both layouts are read. Before them the
TypeScript CLI (npm ``@openai/codex`` 0.1.25041x-0.1.2505xxx,
``codex-cli/src/utils/storage/save-rollout.ts``) rewrote one pretty-printed JSON
document per session, ``~/.codex/sessions/rollout-<date>-<id>.json``:
``{"session": {"timestamp", "id", "instructions"}, "items": [...]}``, the same
response items with no time of their own (``local_shell_call`` answered by a
``local_shell_call_output``; system messages are the CLI's notices), unfolded
here into a session meta and its items; its ``timestamp`` is when the document
was last written, the only time it records. The index of
thread names beside the rollouts (``session_index.jsonl``) and the history of
the prompts typed (``history.jsonl``) are passed over (``side_file``), and so
is a rollout holding no run (``side_document``): a side job of the VS Code
extension (``codex exec`` it starts to title a task from the user's prompt:
its meta and its request tell it, ``side_path`` from a big file's opening
lines) and a session opened and closed with nothing sent (injected context
only).

Mapping
- One run per file. trajectory_id = ``codex.<session id>`` (``session_meta``
  ``id``, else the UUID in the file name); created_at = the meta timestamp;
  model_id = the first ``turn_context.model``; metadata: cwd, git branch /
  commit / repository, cli_version, originator, source, model_provider,
  approval_policy, sandbox mode, the last token totals; a sub-agent's
  session (``source: {"subagent": ...}``, and Codex's own, ``{"internal":
  ...}`` or a ``thread_source`` saying so) is ``is_subagent``, with its
  ``parent_thread_id`` (an auto-review's: the session its prompt names),
  ``agent_role``, ``agent_nickname`` and (multi-agent v2) ``agent_path``.
  A sub-agent spawned with its parent's history (v1 ``fork_context``, v2's
  default ``fork_turns: all``) has a copy of the parent's thread after its
  meta, up to ``subagent_history_start_ordinal``: left out (``_own_records``;
  in 0.147 and earlier, which name no start, up to its first turn begun
  after it was made, ``_unnumbered_fork_start``).
- task: the first user prompt. Each turn's prompts are read from its
  ``event_msg`` ``user_message`` events (whose ``kind``, in older builds, is
  ``plain``), else (0.148+ in its default, paginated history mode, which
  writes none) its ``item_completed`` events of a ``UserMessage`` item of the
  session's thread; a rollout with neither reads its user ``message`` items
  that are not injected context (``<environment_context>``,
  ``<user_instructions>``, ``# AGENTS.md instructions ...``, ``<INSTRUCTIONS>``,
  ``<user_shell_command>``, a review's results ``<user_action>``, ...). A
  prompt is the words sent (not the tags Codex wraps an image in); one of
  images alone reads as ``[image]`` per image. A multi-agent v2 sub-agent's
  task is the ``agent_message`` its parent sent it, ``NEW_TASK`` (``_agent_task``;
  0.125 and 0.138 wrote that message as an assistant message of its JSON,
  others, it is said, as a top-level ``inter_agent_communication`` line:
  ``_between_agents``). A message delivered to the thread (``_is_delivery``)
  is a prompt; any other output answering no call, ``standalone_outputs``. A
  ``/goal`` thread's task is its objective (``_goal_prompt``: Codex's own
  prompts, counted in ``goal_followups``; ``goal`` / ``goal_status``, no
  verdict). Turns a ``thread_rolled_back`` undid are left out, their prompts
  ``reverted_prompts`` (``_rolled_back``).
  Developer/system messages are the harness's. A session whose only request
  was a review (``/review``, ``codex exec review``: entering review mode, no
  prompt typed) has that request as its task (``/review current changes``);
  a review asked for besides typed prompts is in ``metadata.review_requests``.
  A prompt from an IDE extension (``# Context from my IDE setup:`` ... ``## My
  request for Codex:`` ...) is cut to the request, as Codex titles threads.
  A spoken one (a realtime voice session's hand-off, ``<realtime_delegation>``)
  is the request handed off (``_spoken``); the talk handed off with it (the
  user's own words) in ``metadata.spoken_transcript`` (``_handoff_talk``).
  An auto-review (guardian) sub-session's prompt is its instruction and the
  action to assess, the reviewed session's transcript it quotes left out.
  Later prompts go to ``metadata.user_prompts``. The Codex app's answer to
  an agent's asynchronous question (``<send_user_message_question_reply>``)
  is no prompt but the result of the ``request_user_input_async`` call it
  names (``_question_reply``). A prompt whose turn the
  user aborted (``turn_aborted``) before the model wrote anything, and soon
  (``_RETYPED_WITHIN``), did nothing (sent too early, typed again): the task
  is the first prompt the model worked on, those before it go to
  ``metadata.aborted_prompts``; a request interrupted later (after thinking
  Codex does not record) stays the task.
- steps, from ``response_item``s only (``event_msg`` ``agent_message`` /
  ``agent_reasoning`` repeat them; ``compacted.replacement_history`` repeats
  old history): each ``function_call`` (arguments = its JSON string decoded,
  those its provider sealed ``[encrypted]``: ``_call_arguments``;
  a tool's name keeps its namespace, ``<namespace>__<name>`` as Codex joins them
  (``_tool_name``): ``mcp__demo__lookup``),
  ``custom_tool_call`` (named so too; ``input``: JSON if it is JSON, else ``{"input": text}``,
  e.g. an ``apply_patch`` patch), ``local_shell_call`` (``action``),
  ``web_search_call`` (``action``), ``tool_search_call`` and
  ``image_generation_call`` is a step; its ``*_output`` item with the same
  ``call_id`` is the observation (a JSON ``{"output", "metadata":
  {"exit_code"}}`` string is unwrapped; content-item lists are joined, and
  so are an MCP result's content blocks Codex wrote as a JSON string:
  ``[{"text", "type": "text"}]`` in 2025, ``{"content", "isError"}`` before).
  Reasoning (summary and content text) is the thought of the next step
  (where a rollout records it after the call it led to and that call's output,
  as 2025's chat-completions path did, the first after an output is that
  call's); an
  assistant message followed by a tool call before the next user prompt is
  narration and joins that call's thought, otherwise (or when its ``phase``
  is ``final_answer``) it is a ``respond`` step with ``{"content": text}``;
  the summarizer's reply a local compaction writes before its ``compacted``
  line (which quotes it) is neither.
- Step.error: a command Codex killed at its timeout (``command timed out after
  N milliseconds`` before its output, or alone), a non-zero exit code (JSON
  metadata, ``Exit code: N`` /
  ``Process exited with code N`` headers, or the ``exec_command_end`` event;
  exit code 1 with no output is ``rg``'s or ``grep``'s "no match", no error,
  when the command answers so: see ``exit_code_error``),
  ``success: false``, an MCP result that is ``Err`` or ``isError``, a failed
  ``patch_apply_end``, an ``item_completed`` item (0.17x) that ``failed`` (an
  MCP call's error, a command's exit code), or Codex's own failure replies
  ("failed to parse function arguments", "aborted", 2025's "failed in sandbox
  ..." (a command's non-zero exit: its decisive line and code, read from
  the reply) and "tool call error: ...", ..., after 0.17x's
  ``Wall time:`` line; those of a call it did not run, "unsupported call: shell", "execution error: Io(...)"
  of a program it could not start, a rejected command: ``not run: ...``), and a code-mode script (0.140+
  ``exec`` / ``wait``)
  that says ``Script failed``: its inner tool's report after ``Script error:``,
  read by these same rules, or that completed printing its inner
  ``exec_command``'s result object with a non-zero ``exit_code``; a
  unified-exec command that never ran (``exec_command failed ...:
  SandboxDenied {...}`` / ``CreateProcess { message: "Rejected(...)" }``,
  ``write_stdin failed: ...``): one line of why. Never on a success. The
  terminal's control codes (PowerShell 7's colours) are no part of an
  observation or an error (``strip_terminal_codes``).
- A thread reverted (``thread/revert``, the IDE's and Desktop's undo of turns,
  app-server 0.149+) goes on in a rollout of its own,
  ``rollout-<time>-<thread id>_<rollout id>.jsonl``, whose meta's
  ``history_base`` names the earlier rollout and how much of it the thread
  keeps (lines below ``end_ordinal_exclusive``, ``end_byte_offset`` bytes).
  That rollout is the thread's run, ``codex.<session id>``: the kept lines of
  the rollouts it goes back through (found by rollout id beside it, or in the
  ``sessions/YYYY/MM/DD`` tree it lies in), then its own. The turns reverted
  are left out, as Codex hides them from the thread and from the model; their
  prompts are in ``metadata.reverted_prompts``. The earlier rollouts hold no
  run of their own (``side_path``). Found nowhere, the rollout's own lines are
  a run of their own, ``codex.<session id>@<rollout id>``, with
  ``metadata.history_base`` and ``history_missing`` (under the thread's id they
  would replace its run). Once the history is found, the thread's run
  names those runs of every rollout of its chain in ``metadata.supersedes``,
  and ingest removes them (a rollout copied or synced before the one it goes
  on from would otherwise leave its turns stored twice). A fork's
  ``history_base`` (with ``forked_from_id``) is not followed.
- outcome: a rollout records no verdict -> ``unknown``; a session whose last
  turn ended in an ``error`` event (or a ``task_complete`` carrying an error)
  with no model output after it -> ``infra_error`` with that message (the agent's
  ``failure`` when it is the context window's, ``context_window_exceeded``:
  ``_agent_cli.ended_on_error``); one whose
  last turn completed with nothing of the model's recorded after its prompt
  (Codex's own items, ``_HARNESS_ITEMS``, are not the model's;
  ``last_agent_message: null``: a refusal, which Codex drops, see ``_NO_REPLY``)
  -> ``infra_error`` saying the reply was not recorded; not one whose prompt is
  a realtime session's end flush, which Codex records with no model turn and
  no token count (``_asks_no_reply``).
"""

from __future__ import annotations

import itertools
import json
import os
import re
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, NamedTuple
from xml.sax.saxutils import unescape

from trajsearch.actions import UNNAMED_TOOL, not_run
from trajsearch.model import Trajectory

from ._agent_cli import (
    CODEX_INJECTED,
    SessionSteps,
    as_int,
    as_key,
    as_records,
    as_str,
    codex_request,
    command_line,
    error_line,
    exit_code_error,
    first_time,
    iso_time,
    join_thought,
    json_arguments,
    mcp_blocks_text,
    parts_text,
    prompt_list,
    session_trajectory,
    strip_terminal_codes,
    whole_file,
)
from .. import sources
from ._common import Context, RecordError, as_dict, as_list, loads, short

NAME = "codex-cli"
#: Where Codex CLI keeps its rollouts (``~/.codex/sessions``, and archived ones): walked though hidden (see ``read``).
SESSION_FOLDERS = (".codex/sessions", ".codex/archived_sessions")
#: A file is one session: the reader hands over all its lines at once.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"type"\s*:\s*"session_meta"\s*,\s*"payload"\s*:|"originator"\s*:\s*"codex')

ENVELOPE = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})
CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call",
                   "image_generation_call"})
OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output",
                     "local_shell_call_output"})  # the last: the TypeScript CLI's (see ``_ts_lines``)

#: Who starts a session only to do a job of its own, no user's run: the VS Code extension runs ``codex exec`` (with a
#: small model) to title a task from the user's prompt, which its own session (``source: vscode``) holds.
_IDE_SIDE_JOB = {"originator": "codex_vscode", "source": "exec"}
#: What that title job is asked, in the extension's fixed words (its builds of 2026-01: the title instruction alone,
#: or after a fixed preamble), the user's prompt after them. Required beside ``_IDE_SIDE_JOB``: processes the
#: extension's agent spawns inherit its originator, so a user's own ``codex exec`` run from there has the same meta.
_TITLE_REQUEST = re.compile(
    r"\A(?:You are a helpful assistant\. You will be presented with a user prompt, and your job is to provide a short "
    r"title for a task that will be created from that prompt\.\n.*?^)?Generate a concise UI title\b", re.S | re.M)
_TITLE_JOB = ("a side session of the Codex IDE extension (`codex exec` started by codex_vscode to title a task from "
              "the user's prompt, which the user's own session holds), not a run")
#: How far ``_opening`` reads for the first prompt: the meta, the harness's messages and the injected context come
#: before it.
_OPENING_LINES = 50
#: An auto-review (guardian) sub-session is asked about a planned action of the session it reviews, which it quotes
#: between these lines (whole, then what was added since) as untrusted evidence, and names below them.
_REVIEWED_TRANSCRIPT = re.compile(r"^(>>> TRANSCRIPT(?: DELTA)? START)$.*?^(>>> TRANSCRIPT(?: DELTA)? END)$",
                                  re.S | re.M)
_REVIEWED_SESSION = re.compile(r"^Reviewed Codex session id: (\S+)$", re.M)
#: A turn that completed (``task_complete``, no error, ``last_agent_message: null``) with nothing of the model's
#: recorded after its prompt: Codex keeps only the output items it can read (``ContentItem`` has no ``refusal``), so
#: a refusal (a message whose content is ``{"type": "refusal", ...}``) leaves no item, only the turn's token count
#: (0.171: checked with the real CLI). A step (no action: the words are ours) and, on the last turn, the run's error
#: say so, since nothing else in the rollout does: a later prompt's answer would read as the refused prompt's.
_NO_REPLY = "the model's reply was not recorded: the turn completed with no message or call from it"
_NO_REPLY_CAUSE = ("infrastructure: the turn ended with no reply Codex could record (a refusal, which Codex drops, or "
                   "none), as Gemini CLI's safety block ends a run: no work of the agent's on the task")
#: What ``request_user_input_async`` answers at once: the question was shown; its answer comes later.
_ACCEPTED = '{"accepted":true}'
_UUID = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})", re.I)
_EXIT_LINE = re.compile(r"^(?:Exit code:?\s*|Process exited with code\s+)(-?\d+)\s*$", re.M)
_WALL_TIME = re.compile(r"^Wall time: [^\n]*\n")
#: Code mode (0.140+): an ``exec`` script's (or ``wait``'s) reply opens with its verdict; on failure the inner
#: tool's report follows ``Script error:``.
_SCRIPT_FAILED = re.compile(r"^Script failed\nWall time ")
_SCRIPT_ERROR = "Script error:"
#: A script that ran to its end ("Script completed") may print what its inner ``tools.exec_command`` returned (the
#: model's usual ``text(JSON.stringify(r))``): unified exec's result object (codex-rs ``UnifiedExecOutput``:
#: ``chunk_id``, ``wall_time_seconds``, ``exit_code`` once the process ended, ``session_id`` while it runs,
#: ``original_token_count``, ``output``), whose ``exit_code`` is the command's, as when that tool is called directly.
_SCRIPT_COMPLETED = re.compile(r"^Script completed\nWall time ")
#: Unified exec (0.5x+) answers a command it could not start, or a write to a process that has ended, with
#: ``<tool> failed[ for `<command>`]: <detail>``: the detail a Rust debug print of codex-rs' error, e.g. ``SandboxDenied
#: { message, output: ExecToolCallOutput { exit_code, ... } }``, ``CreateProcess { message: "Rejected(\"<why>\")" }``
#: (the user or the auto-reviewer refused) or ``CreateProcess { message: "Codex(Sandbox(Denied { output: ... }))" }``;
#: no ``exec_command_end`` is written for it, so this reply is the only mark of the failure.
_UNIFIED_EXEC_FAILED = re.compile(r"^(exec_command|write_stdin) failed(?: for `.*?`)?: (.*)", re.S)
_DEBUG_STRING = r'"((?:[^"\\]|\\.)*)"'
_DEBUG_MESSAGE = re.compile(r"\bmessage: " + _DEBUG_STRING, re.S)
_DEBUG_REJECTED = re.compile(r"^Rejected\(" + _DEBUG_STRING + r"\)", re.S)
_DEBUG_EXIT_CODE = re.compile(r"ExecToolCallOutput \{ exit_code: (-?\d+)")
_DEBUG_OUTPUT = re.compile(r"aggregated_output: StreamOutput \{ text: " + _DEBUG_STRING, re.S)
_DEBUG_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|.)", re.S)
_DEBUG_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "0": "\0"}
#: What Codex puts before the output of a command it killed at its timeout (codex-rs ``build_content_with_timeout``:
#: exit code 124), or (2025, ``SandboxErr::Timeout``) answers alone: the output's last line is no reason.
_TIMED_OUT = re.compile(r"^command timed out after \d+ milliseconds(?=\r?\n|\Z)")
#: Codex 0.2x-0.3x (2025) answered any command that exited non-zero inside its sandbox (seccomp, Seatbelt) with the
#: sandbox's error (codex-rs ``SandboxErr::Denied``), the command's output inside it:
#: ``failed in sandbox <kind> with execution error: sandbox denied exec error, exit code: N, stdout: ..., stderr: ...``.
_SANDBOX_DENIED = re.compile(r"^(failed in sandbox \w+ with execution error): sandbox denied exec error, "
                             r"exit code: (-?\d+), stdout: (.*?), stderr: ?(.*)\Z", re.S)
_FAILED_REPLY = re.compile(
    r"^(?:failed to parse function arguments|unsupported call|unsupported custom tool call|execution error|"
    r"exec command rejected|patch rejected|apply_patch verification failed|aborted\b|"
    r"failed in sandbox |tool call error: |"  # 2025 rollouts: a sandboxed command's failure, an MCP call's
    r"invalid arguments: |no function found$|"  # the TypeScript CLI's: arguments it could not read, an unknown tool
    r"error: |Error: |err: )"
)

#: The failure replies of a call Codex did not run (``_FAILED_REPLY``'s first words): arguments or a tool it could not
#: take, a command or patch the user rejected, a program it could not start (``execution error: Io(Os { code: 2,
#: kind: NotFound ...``: no ``fish`` or ``powershell.exe`` on the machine). Worded ``not run: ...`` (``actions.not_run``).
_NOT_RUN_REPLY = re.compile(
    r"^(?:failed to parse function arguments|unsupported call|unsupported custom tool call|execution error: Io\(|"
    r"exec command rejected|patch rejected|invalid arguments: |no function found$)"
)


#: codex-rs' ``ThreadSource`` of a session that is not a root one (``SessionSource::is_non_root_agent``), which a
#: session meta may give beside its ``source`` (``thread_source``): a sub-agent's, an auto-review's, Codex's own.
_NON_ROOT_THREADS = frozenset({"subagent", "guardian_review", "memory_consolidation"})


def _session_source(meta: dict[str, Any]) -> dict[str, Any]:
    """What started the session (``session_meta.source``, codex-rs' ``SessionSource``): a string (``cli``,
    ``vscode``, ``exec``), or a sub-agent's object, ``{"subagent": "review" | "compact" | {"thread_spawn":
    {parent_thread_id, depth, agent_role, agent_nickname, ...}} | {"other": "guardian"}}``, or Codex's own
    (``{"internal": "guardian" | "memory_consolidation"}``, where newer builds put the auto-review), or a
    ``thread_source`` of :data:`_NON_ROOT_THREADS`: then the run is a sub-agent's (``is_subagent``: codex-rs'
    ``is_non_root_agent``), linked to the thread that started it (``parent_thread_id``)."""
    source = meta.get("source")
    key = next((k for k in ("subagent", "internal") if isinstance(source, dict) and k in source), None)
    if key is None:
        named = {"source": source if isinstance(source, str) else None}
        return named if meta.get("thread_source") not in _NON_ROOT_THREADS else {
            **named, "is_subagent": True, "parent_thread_id": as_str(meta.get("parent_thread_id"))}
    kind = source[key]
    spawn = as_dict(as_dict(kind).get("thread_spawn"))
    if isinstance(kind, dict):  # {"thread_spawn": {...}} or {"other": "guardian"}
        kind = next(iter(kind), "") + (f":{other}" if isinstance(other := kind.get("other"), str) else "")
    return {"source": f"{key}:{kind}" if kind and isinstance(kind, str) else key, "is_subagent": True,
            "parent_thread_id": as_str(meta.get("parent_thread_id")) or as_str(spawn.get("parent_thread_id")),
            "agent_role": as_str(spawn.get("agent_role")), "agent_nickname": as_str(spawn.get("agent_nickname")),
            "agent_path": as_str(spawn.get("agent_path"))}  # multi-agent v2's address of it (/root/<task_name>)


def _is_review(meta: dict[str, Any]) -> bool:
    """Whether a session is an auto-review (guardian) sub-agent's: ``source: {"subagent": {"other": "guardian"}}``,
    as Codex wrote it first, ``{"internal": "guardian"}``, as it does since, or ``thread_source: guardian_review``."""
    source = as_dict(meta.get("source"))
    return as_dict(source.get("subagent")).get("other") == "guardian" or source.get("internal") == "guardian" \
        or meta.get("thread_source") == "guardian_review"


def _review_request(prompt: str) -> str:
    """What an auto-review (guardian) sub-session is asked: its instruction and the action to assess, the reviewed
    session's transcript it quotes left out (that session's own run; an IDE request quoted there is its user's, not
    this run's task)."""
    return _REVIEWED_TRANSCRIPT.sub(r"\1\n[the reviewed session's transcript]\n\2", prompt)


def _reviewed_session(prompts: list[str]) -> str | None:
    """The session an auto-review sub-session reviews, as its first prompt names it (its meta does not)."""
    found = _REVIEWED_SESSION.search(prompts[0]) if prompts else None
    return found.group(1) if found else None


def matches(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    kind = as_str(record.get("type"))
    if kind in ENVELOPE and isinstance(record.get("payload"), dict):
        return True
    if _is_ts_rollout(record):
        return True
    # a rollout written before the {type, payload} envelope starts with its bare session meta
    legacy_keys = {"id", "timestamp", "instructions", "git", "cwd", "originator", "cli_version"}
    return "instructions" in record and {"id", "timestamp"} <= record.keys() and record.keys() <= legacy_keys


def side_document(document: Any) -> str | None:
    """The adapter hook for a whole small file (see ``detect``): a rollout with no run in it (see ``_no_run``)."""
    try:
        return _no_run(_lines(document))
    except RecordError:
        return None


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The file's one run, or none when it holds none (``side_document``; a file detection passed as a run, read
    under a forced ``--format``: listed with 0 runs, as detection passes it over, never a rejection)."""
    if side_document(document) is None:
        yield from whole_file(document)


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a title job (``_is_title_job``) too big for detection to read
    whole (``side_document``: a job whose model looked at files), told by its opening lines alone, so it is passed
    over saying what it is, not listed as a file of no run."""
    if fmt != NAME:
        return None
    if (later := _continued_by(path)) is not None:
        return (f"the history of a Codex thread before a revert (thread/revert), which its rollout {later.name} "
                "goes on from: that rollout is read as the thread's run")
    meta, prompt = _opening(path)
    return _TITLE_JOB if _is_title_job(meta, prompt) else None


def subagent_file(path: Path) -> bool:
    """The adapter hook (see ``adapters/__init__``): whether a rollout is a sub-agent's, as its session meta says
    (``source: {"subagent": ...}``, or Codex's own ``{"internal": ...}``: ``_session_source``). Codex writes a
    spawned agent's rollout, and an auto-review's, beside its parent's under ``sessions/YYYY/MM/DD/``: a part of the
    parent's run, not a second run of a Harbor trial that holds both (``atif.trial_sessions``)."""
    return bool(_session_source(_opening(path)[0]).get("is_subagent"))


def _opening(path: Path) -> tuple[dict[str, Any], str | None]:
    """A rollout's session meta and first prompt, read no further than that prompt, and only the meta line unless
    it has the IDE side job's mark (``_IDE_SIDE_JOB``): detection asks this of every Codex file."""
    meta: dict[str, Any] = {}
    try:
        for _, record, error, _ in itertools.islice(sources.lines(path), _OPENING_LINES):
            kind, payload, _ = _normal(record) if error is None and isinstance(record, dict) else ("", {}, None)
            if kind == "session_meta" and not meta:
                meta = payload
                if not _has_side_job_mark(meta):
                    break
            elif prompt := _typed_prompt(kind, payload, meta.get("id")):
                return meta, prompt
    except OSError:  # unreadable now: the reader says so
        pass
    return meta, None


def _has_side_job_mark(meta: dict[str, Any]) -> bool:
    return all(meta.get(key) == value for key, value in _IDE_SIDE_JOB.items())


def _is_title_job(meta: dict[str, Any], prompt: str | None) -> bool:
    """Whether a rollout is the IDE extension's title job: its mark (``_IDE_SIDE_JOB``) and its request as the
    first prompt (``_TITLE_REQUEST``); either alone is a run (a user's own ``codex exec`` started from the IDE's
    agent, a user asking for a title)."""
    return _has_side_job_mark(meta) and prompt is not None and _TITLE_REQUEST.match(prompt.strip()) is not None


def _no_run(lines: list[tuple[str, dict[str, Any], Any]]) -> str | None:
    """Why a rollout holds no run, else None: an IDE extension's title job (``_is_title_job``), or a session
    opened and closed with nothing sent (only the context Codex injects, no prompt, nothing from the model)."""
    meta = next((payload for kind, payload, _ in lines if kind == "session_meta"), {})
    if _history_base(meta) is not None:  # after a revert: the thread's run, with the history it goes on from
        return None
    talk = [(kind, payload) for kind, payload, _ in lines if kind in ("response_item", "event_msg")]
    said = [(prompt, _prompt_said(kind, payload, meta.get("id"))) for kind, payload in talk
            if (prompt := _typed_prompt(kind, payload, meta.get("id")))]
    prompts = [prompt for prompt, _ in said]
    if _is_title_job(meta, prompts[0] if prompts else None):
        return _TITLE_JOB
    if not talk or any(_from_model(kind, payload) or _review_request_made(kind, payload) for kind, payload in talk):
        return None
    if not prompts:
        return "a Codex session opened and closed with no prompt sent (only the context Codex injects), not a run"
    asked = any(kind == "event_msg" and payload.get("type") == "token_count" for kind, payload in talk)
    if not asked and all(_asks_no_reply(text) for _, text in said):  # no model turn ran
        return ("a realtime voice session that handed Codex nothing: only its talk's end flush, which Codex records "
                "with no model turn (transcript_tail.rs), so its agent never ran; not a run")
    return None


def _typed_prompt(kind: str, payload: dict[str, Any], thread: Any = None) -> str | None:
    """The text of a prompt sent to the agent (``_prompt_text``): a ``user_message`` event (whose ``kind``, in older
    builds, is ``plain``; its attached images in ``images`` and ``local_images``), a ``UserMessage`` item's
    ``item_completed`` event (0.148+, see ``_completed_prompt``; ``thread``: the session's id) or a user
    ``message`` item (not the context Codex injects as one, ``CODEX_INJECTED``), or the ``agent_message`` item that
    gives a multi-agent v2 sub-agent its task (``_agent_task``)."""
    return _typed_from(_prompt_said(kind, payload, thread))


def _typed_from(said: str | None) -> str | None:
    """A prompt line's text (``_prompt_said``) as the prompt typed (``_typed_prompt``), None for none."""
    text = _spoken(said) if said else ""
    return text if text and not CODEX_INJECTED.match(text) and _reply_body(text) is None else None


def _prompt_said(kind: str, payload: dict[str, Any], thread: Any = None) -> str | None:
    """The text a line of a prompt (``_typed_prompt``) holds, as sent (a spoken one still in its markup); "" for an
    event or item of a prompt's kind that holds none (another item's ``item_completed``, an assistant's
    ``agent_message``), None for any other line."""
    if kind == "event_msg" and payload.get("type") == "user_message" and payload.get("kind") in (None, "plain"):
        images = [*as_list(payload.get("images")), *as_list(payload.get("local_images"))]
        return _prompt_text(str(payload.get("message") or ""), images=len(images))
    if kind == "event_msg" and payload.get("type") == "item_completed":
        return _completed_prompt(payload, thread) or ""
    if kind == "response_item" and payload.get("type") == "message" and payload.get("role") == "user":
        return _prompt_text(payload.get("content"))
    if kind == "response_item" and payload.get("type") == "agent_message":
        return _agent_task(payload) or ""
    if kind == "response_item" and _is_delivery(payload):
        return _output(payload)[0]
    return None


#: The tool a message delivered to a thread goes by (``send_message_to_thread``, from the Codex app, the TUI or
#: another thread), recorded as a ``function_call_output`` with no ``call_id`` (codex-rs ``is_delivery``).
_DELIVERY_TOOL = "send_message_to_thread"


def _standalone_output(payload: dict[str, Any]) -> bool:
    """Whether an item is a tool output that answers no call: ``function_call_output`` with no ``call_id`` (0.171's
    ``ResponseItem`` makes it optional), which Codex writes for what is delivered to the thread."""
    return payload.get("type") == "function_call_output" and not as_key(payload.get("call_id"))


def _is_delivery(payload: dict[str, Any]) -> bool:
    """Whether an item is a message delivered to this thread (``_DELIVERY_TOOL``), which Codex admits as task input
    (codex-rs ``is_delivery``/``is_request``): a prompt, not a call's result."""
    return _standalone_output(payload) and payload.get("name") == _DELIVERY_TOOL


#: A spoken prompt (a realtime voice session, 0.16x+): the voice model hands the user's request on to Codex as a
#: prompt, ``<input>`` (XML-escaped) with the ``<transcript_delta>`` of the talk since the last hand-off, and at the
#: session's end Codex sends the rest of the talk, ``<source>transcript_tail_flush</source>``, under an ``<input>``
#: of its own ("The user just ended their realtime session ..."): codex-rs ``core/src/context/realtime_delegation.rs``.
#: Codex escapes ``<`` in both texts, so no group holds one: ``[^<]*``, not ``.*?``, which is quadratic on a pasted
#: prompt that repeats the tags (400 KB: minutes).
_DELEGATION = re.compile(r"\A\s*<realtime_delegation>\s*(?:<source>([^<]*)</source>\s*)?<input>([^<]*)</input>\s*"
                         r"(?:<transcript_delta>([^<]*)</transcript_delta>\s*)?</realtime_delegation>\s*\Z")


#: Codex's own ``<input>`` of a tail flush (``REALTIME_SESSION_ENDED_HANDOFF_INSTRUCTION``, codex-rs
#: ``core/src/realtime_conversation.rs``): the only mark of a flush from builds of 2026-07-06 to 07-17, before
#: ``<source>`` was written.
_SESSION_ENDED = ("The user just ended their realtime session. Here is the remaining handoff/transcript tail. You "
                  "probably do not have to do anything; acknowledge the handoff unless the transcript itself asks "
                  "for something.")


class _Handoff(NamedTuple):
    """A spoken prompt (``_DELEGATION``), unescaped: the request handed off, the talk beside it, and whether it is
    the flush of the talk's rest at the session's end (its ``<source>``, or before that Codex's own ``<input>``)."""
    request: str
    talk: str
    flush: bool


@lru_cache(maxsize=64)
def _handoff(text: str) -> _Handoff | None:
    """``text`` read as a spoken prompt (``_Handoff``), None for any other; parsed once per text, as each prompt line
    is asked about several times."""
    found = _DELEGATION.match(text)
    if not found:
        return None
    source, request, talk = found.groups()
    flush = source == "transcript_tail_flush" or request.strip() == _SESSION_ENDED
    return _Handoff(unescape(request).strip(), unescape(talk or "").strip(), flush)


def _spoken(text: str) -> str:
    """A spoken prompt (``_handoff``) as what was said: the request handed off, or for a tail flush the rest of the
    talk, its ``user: ...`` and ``assistant: ...`` (the voice model's) lines both, as Codex's canned instruction
    around it was said by no one; any other text as it is."""
    spoken = _handoff(text)
    if spoken is None:
        return text
    return (spoken.talk if spoken.flush and spoken.talk else spoken.request) or text


def _handoff_talk(said: str | None) -> str | None:
    """The talk a spoken request was handed off with (``_DELEGATION``'s ``<transcript_delta>``: codex-rs
    ``realtime_conversation.rs`` joins the session's lines since the last hand-off as ``user: ...`` and
    ``assistant: ...``), both speakers' words beside ``<input>``, the voice model's wording of the request, which
    is the prompt (``_spoken``). Codex ends the talk with that request as a ``user:`` line unless the user said
    exactly it (codex-api ``append_handoff_input``): the prompt already, left out. None for a flush (whose talk is
    its prompt) or a talk that is the request itself (Codex's ``<input>`` when the voice model gave none)."""
    spoken = _handoff(said) if said else None
    if spoken is None or spoken.flush or not spoken.talk:
        return None
    request, talk = spoken.request, spoken.talk
    head, _, last = talk.rpartition("\n")
    if last.strip() == f"user: {request}" and head.strip():
        talk = head.strip()
    return talk if talk and talk != request and not _bounded_same(request, talk) else None


#: How Codex marks a field of a spoken prompt it cut to 4 KiB (``context/realtime_delegation.rs``
#: ``TRUNCATION_MARKER``): ``<input>`` keeps its start, ``<transcript_delta>`` its end.
_CUT = "…"
_TALK_LINE = re.compile(r"\A(?:user|assistant): ")


def _bounded_same(request: str, talk: str) -> bool:
    """Whether a long talk handed on with no request of the voice model's is both ``<input>`` and
    ``<transcript_delta>``, each cut to 4 KiB (``_CUT``): its head and its tail, so unequal. A request cut there that
    starts as the talk does (a ``user:`` / ``assistant:`` line, no wording of the voice model's) is that talk."""
    return request.endswith(_CUT) and talk.startswith(_CUT) and _TALK_LINE.match(request) is not None


def _asks_no_reply(said: str | None) -> bool:
    """Whether a prompt is one Codex may give the model no turn for: a session-end flush (``_Handoff.flush``), which
    0.171 records "without inference" when no turn is running (codex-rs ``realtime_conversation/transcript_tail.rs``:
    a turn started and completed at once, ``last_agent_message: null``, no token count), so that turn's silence is
    no lost reply; one the model was asked about (a token count after it, as every flush before that code) is."""
    spoken = _handoff(said) if said else None
    return spoken is not None and spoken.flush


#: A ``/goal`` thread's own prompts (0.17x; the real 0.171.0 writes them, ``codex-cli/.fix37``): the user's setting of
#: the goal, ``<codex_internal_context source="user_goal">`` around ``User set the goal: "<objective>"``, and at
#: the start of each turn the goal drives ``source="goal"`` around its continuation instructions (codex-rs
#: ``templates/goals/continuation.md``; ``objective_updated.md`` names the objective in ``<untrusted_objective>``).
#: The user typed none of it (``CODEX_INJECTED``).
_GOAL_CONTEXT = re.compile(r'\A\s*<codex_internal_context source="(user_goal|goal)">\s*(.*?)\s*'
                           r"(?:</codex_internal_context>\s*)?\Z", re.S)
_GOAL_SET = re.compile(r'\AUser set the goal: "(.*)"\Z', re.S)
_GOAL_OBJECTIVE = re.compile(r"<(untrusted_objective|objective)>\s*(.*?)\s*</\1>", re.S)
#: The tools that answer with the goal (``{"goal": ThreadGoal, ...}``): the model's ``update_goal`` marking it
#: ``complete`` writes no ``thread_goal_updated`` (0.171.0, ``.fix37``), so its status is in the answer only.
_GOAL_TOOLS = frozenset({"update_goal", "create_goal", "get_goal"})
#: The objective as 0.171 hands it to the model at a goal turn's start: a ``function_call_output`` answering no
#: call, ``agent`` ``goal_objective`` (``_standalone_output``).
_GOAL_OBJECTIVE_OUTPUT = "agent__goal_objective"
#: The task of a ``/goal`` thread whose rollout names no objective: the goal's text is in Codex's state database
#: (its ``thread_goals`` table), not the rollout.
_GOAL_UNNAMED = "[a /goal thread's goal; its objective is not in the rollout]"


def _goal_prompt(kind: str, payload: dict[str, Any]) -> tuple[bool, str] | None:
    """A goal's own prompt (``_GOAL_CONTEXT``): (whether it starts a turn the goal drives, the objective it names or
    ""); None for any other line."""
    if kind != "response_item" or payload.get("type") != "message" or payload.get("role") != "user":
        return None
    found = _GOAL_CONTEXT.match(_prompt_text(payload.get("content")))
    if found is None:
        return None
    named = _GOAL_SET.match(found.group(2)) if found.group(1) == "user_goal" else _GOAL_OBJECTIVE.search(found.group(2))
    return found.group(1) == "goal", (named.group(named.lastindex or 0) if named else "")


def _goal_fields(goal: Any) -> tuple[str | None, str | None] | None:
    """(objective, status) of a ``ThreadGoal`` (camelCase: ``objective``, ``status`` active / paused / blocked /
    budget_limited / complete ...), None for no goal."""
    goal = as_dict(goal)
    return (as_str(goal.get("objective")), as_str(goal.get("status"))) if goal else None


def _goal_update(kind: str, payload: dict[str, Any]) -> tuple[str | None, str | None] | None:
    """(objective, status) of a ``thread_goal_updated`` event (codex-rs ``ThreadGoalUpdatedEvent``, which
    ``rollout/src/policy.rs`` persists: the user's ``thread/goal/set``, budget limits), None for any other line."""
    if kind != "event_msg" or payload.get("type") != "thread_goal_updated":
        return None
    return _goal_fields(payload.get("goal"))


def _goal_answer(kind: str, payload: dict[str, Any],
                 calls: dict[str, dict[str, Any]]) -> tuple[str | None, str | None] | None:
    """(objective, status) a goal tool's output (``_GOAL_TOOLS``; ``calls``: the steps by call id) reports, None for
    any other line."""
    step = calls.get(str(payload.get("call_id"))) if kind == "response_item" and payload.get("type") in OUTPUTS \
        else None
    if step is None or str(step["action"]).rsplit("__", 1)[-1] not in _GOAL_TOOLS:
        return None
    try:
        return _goal_fields(as_dict(loads(_output(payload)[0])).get("goal"))
    except ValueError:
        return None


#: The Codex app's reply to an agent's asynchronous question (``request_user_input_async``, whose own output says
#: only ``{"accepted":true}``): a user message, mostly mid-turn (a steer), ``<send_user_message_question_reply>``
#: around a JSON list of ``{"questionItemId": "[\"request_user_input_async\", <call id>, <index>]", "question",
#: "answer"}`` (an IDE extension's context may come before it).
_QUESTION_REPLY_TAG = "send_user_message_question_reply"


def _reply_body(text: str) -> str | None:
    """What a question reply's envelope (``_QUESTION_REPLY_TAG``) holds; None for any other text, one with words
    after the envelope too (those are the user's, read as a prompt). No JSON is parsed: this runs on every user
    message, on detection's path too."""
    request = codex_request(text).strip()
    if not request.startswith(f"<{_QUESTION_REPLY_TAG}>"):
        return None
    body, _, after = request[len(_QUESTION_REPLY_TAG) + 2:].partition(f"</{_QUESTION_REPLY_TAG}>")
    return None if after.strip() else body.strip()


def _question_reply(text: str) -> list[tuple[str | None, str]] | None:
    """The answers of a question reply (``_reply_body``), each with the call id of the question it answers
    (None where the reply names none) and ``<question> -> <answer>``; None for any other text. The user's answer
    to the agent, not a new prompt (it became one: a later prompt, or the task of a rollout it opened)."""
    body = _reply_body(text)
    if not body:  # no reply, or one with no answer in it (the call's acknowledgement is then kept)
        return None if body is None else []
    try:
        rows = loads(body)
    except ValueError:  # JSON nested deeper than Python reads is text too, not a lost batch
        return [(None, body)]
    answers: list[tuple[str | None, str]] = []
    for row in rows if isinstance(rows, list) else [rows]:
        row = as_dict(row)
        try:
            asked = loads(as_str(row.get("questionItemId")) or "null")
        except ValueError:
            asked = None
        call = as_str(asked[1]) if isinstance(asked, list) and len(asked) > 1 else None
        words = " -> ".join(filter(None, [as_str(row.get("question")), as_str(row.get("answer")) or "(no answer)"]))
        answers.append((call, words))
    return answers


#: The envelope of a message between agents (multi-agent v2): ``Message Type: NEW_TASK | MESSAGE | FINAL_ANSWER``,
#: ``Task name: <recipient>``, ``Sender: <author>``, ``Payload:``, then the payload.
_AGENT_ENVELOPE = re.compile(r"^Message Type: (\w+)\n(?:Task name: (.*)\n)?(?:Sender: .*\n)?(?:Payload:\n?)?")

#: A payload the model's provider encrypted: a Fernet token (``gAAAA...``, as OpenAI's backend seals it; codex-rs's
#: own tests), or any long unbroken base64 run; a plain task of one word, or in a script without spaces, is none.
_SEALED = re.compile(r"gAAAA[A-Za-z0-9_=-]*|[A-Za-z0-9_=+/-]{40,}")


def _agent_task(payload: dict[str, Any]) -> str | None:
    """The task a multi-agent v2 sub-agent was given, which its rollout (Codex 0.171) records as no user message but
    as the ``agent_message`` item its parent sent it, of type ``NEW_TASK``: its payload, the text after the envelope
    and what Codex keeps in an ``encrypted_content`` part (the model's words as it wrote them: plain text from a
    provider that does not encrypt them). A payload encrypted (``_SEALED``: OpenAI's backend seals every one) reads
    as ``[encrypted task] <its name>``. Other messages between agents (``MESSAGE``, a sub-agent's ``FINAL_ANSWER``
    to its parent) are none."""
    parts = [part for part in as_list(payload.get("content")) if isinstance(part, dict)]
    header = "".join(part["text"] for part in parts if isinstance(part.get("text"), str))
    found = _AGENT_ENVELOPE.match(header)
    if found and found.group(1) != "NEW_TASK":
        return None
    if not found and (payload.get("trigger_turn") is not True or header.startswith("<subagent_notification>")):
        return None  # an older build's message has no envelope (``_between_agents``): a task if it starts a turn
    sealed = [part["encrypted_content"] for part in parts if isinstance(part.get("encrypted_content"), str)]
    body = (header[found.end() if found else 0:]
            + "".join(text for text in sealed if not _SEALED.fullmatch(text.strip()))).strip()
    return body or f"[encrypted task] {(found.group(2) if found else as_str(payload.get('recipient'))) or ''}".strip()


#: What a ``function_call``'s argument the provider encrypted reads as (``_call_arguments``).
_ENCRYPTED = "[encrypted]"


#: The multi-agent v2 calls whose ``message`` OpenAI's backend seals (codex-rs ``core/src/tools/router.rs``,
#: ``direct_source``: plaintext only when ``encrypted_function_args`` is ``[]``).
_MESSAGE_TOOLS = frozenset({"spawn_agent", "send_message", "followup_task"})


def _call_arguments(payload: dict[str, Any]) -> Any:
    """A ``function_call``'s arguments (its JSON string decoded), those its ``encrypted_function_args`` names (0.17x,
    from 2026-07-28) said to be encrypted, not their ciphertext. A ``_MESSAGE_TOOLS`` call with no such list (older
    builds) is sealed as Codex takes it, but only a ``message`` that looks it (``_SEALED``): another provider's is
    plain text."""
    arguments = json_arguments(payload.get("arguments"))
    if not isinstance(arguments, dict):
        return arguments
    marked = payload.get("encrypted_function_args")
    sealed = {name for name in as_list(marked) if isinstance(name, str)}
    message = as_str(arguments.get("message"))
    direct = as_str(payload.get("name")) in _MESSAGE_TOOLS and payload.get("namespace") in (None, "collaboration")
    if marked is None and direct and message and _SEALED.fullmatch(message.strip()):
        sealed.add("message")
    return {name: _ENCRYPTED if name in sealed else value for name, value in arguments.items()}


def _tool_name(payload: dict[str, Any], unnamed: str) -> str:
    """The name a call's tool goes by, its ``namespace`` (0.17x: an MCP server's ``mcp__<server>``, the multi-agent
    ``collaboration``) before its ``name``: Codex's own flat name of the tool (codex-rs
    ``ToolName::canonical_flat_name``: ``<namespace>__<name>``, stray underscores at the join trimmed), so
    ``mcp__demo__lookup``, the name a user searches for. A ``custom_tool_call`` carries a namespace too (0.171's
    ``ResponseItem``; ``ToolRouter`` runs it as ``ToolName::new(namespace, name)``): read without it, two tools of
    one name were one."""
    name = as_str(payload.get("name")) or unnamed
    namespace = as_str(payload.get("namespace"))
    return f"{namespace.rstrip('_')}__{name.lstrip('_')}" if namespace else name


def _agent_report(payload: dict[str, Any]) -> str | None:
    """A sub-agent's report to the agent that spawned it (multi-agent v2), ``<its path>: <its words>``: the payload of
    a ``FINAL_ANSWER`` message (0.171), or the ``completed`` status of an older build's ``<subagent_notification>``
    (0.125, 0.138: ``{"agent_path", "status": {"completed": ...}}``)."""
    text = "".join(part["text"] for part in as_list(payload.get("content"))
                   if isinstance(part, dict) and isinstance(part.get("text"), str))
    found = _AGENT_ENVELOPE.match(text)
    if found:
        words = text[found.end():].strip() if found.group(1) == "FINAL_ANSWER" else ""
    elif notice := _NOTIFICATION.match(text):
        try:
            status = as_dict(as_dict(loads(notice.group(1))).get("status"))
        except ValueError:
            status = {}
        words = as_str(status.get("completed")) or ""
    else:
        return None
    return f"{as_str(payload.get('author')) or 'sub-agent'}: {words}" if words else None


#: An older multi-agent v2 build's report of a sub-agent to its parent (``_agent_report``).
_NOTIFICATION = re.compile(r"^<subagent_notification>\s*(\{.*\})\s*</subagent_notification>\s*$", re.S)


def _completed_prompt(payload: dict[str, Any], thread: Any = None) -> str | None:
    """What the user sent, as the ``item_completed`` event of a ``UserMessage`` item records it (Codex 0.148+ in
    its default, paginated history mode, which writes no ``user_message`` event): the user's input only (its
    ``text``, ``image`` and ``local_image`` parts, ``_prompt_text``), none of the context Codex sends as user
    messages beside it (the ``<recommended_plugins>`` catalogue, ``CODEX_INJECTED``, is a message item only). An
    event of another thread (a review's, which Codex writes into its parent's rollout) is none of this session's."""
    item = as_dict(payload.get("item"))
    if item.get("type") != "UserMessage":
        return None
    if thread and payload.get("thread_id") and str(payload["thread_id"]).lower() != str(thread).lower():
        return None
    return _prompt_text(item.get("content")) or None


#: The parts of a prompt that are an attached image: a ``UserMessage`` item's ``image`` (a URL) and ``local_image``
#: (a path: the TUI's pasted images, ``codex exec -i``), a message item's ``input_image``.
_IMAGE_PARTS = frozenset({"image", "local_image", "input_image"})
#: The text parts Codex wraps each image in within the message item it sends (codex-rs ``models.rs``,
#: ``from_user_input``: ``<image name=[Image #1]>``, in some builds with a ``path="..."`` too, or ``<image>``,
#: then ``</image>``): no words of the user's.
_IMAGE_TAG = re.compile(r"</?image(?: name=[^\n]*)?>")
#: What an image sent with no words reads as, once per image.
_IMAGE_MARK = "[image]"


def _prompt_text(content: Any, images: int = 0) -> str:
    """A prompt's text, the same from each record of it: the words the user sent (a message item's without the tags
    Codex wraps images in); a prompt of images alone (``images`` counted beside ``content``'s image parts) reads as
    one ``[image]`` per image, so that it stays a prompt (it was dropped, or read as Codex's tags, and the run's
    task became the next prompt while the first turn's steps stayed)."""
    parts = content if isinstance(content, list) else [content]
    words = [part for part in parts if not (isinstance(part, dict) and isinstance(part.get("text"), str)
                                            and _IMAGE_TAG.fullmatch(part["text"].strip()))]
    images += sum(1 for part in parts if isinstance(part, dict) and part.get("type") in _IMAGE_PARTS)
    return parts_text(words, images=False).strip() or "\n".join([_IMAGE_MARK] * images)


def _review_request_made(kind: str, payload: dict[str, Any]) -> str | None:
    """What a ``/review`` (``codex exec review``) was asked, as Codex shows it (``/review current changes``,
    ``/review commit abc1234: title``, ``/review <custom instructions>``: codex-rs ``review_prompts::user_facing_hint``)
    when the line records entering review mode: an ``entered_review_mode`` event, or (0.17x) an ``item_completed``
    event of an ``EnteredReviewMode`` item; else None. No user message records the request: the one Codex writes
    after the review (``<user_action>``) holds its results."""
    if kind != "event_msg":
        return None
    if payload.get("type") == "item_completed":
        payload = as_dict(payload.get("item"))
        if payload.get("type") != "EnteredReviewMode":
            return None
    elif payload.get("type") != "entered_review_mode":
        return None
    return f"/review {as_str(payload.get('user_facing_hint')) or ''}".strip()


#: Items Codex itself writes into the history, none of the model's: a turn's snapshot (0.5x, right after its
#: prompt), the tools it adds and the reasoning effort it switches to (0.17x ``additional_tools``,
#: ``configuration_update``), and the history's compaction, its trigger and its summary (``compaction``,
#: ``compaction_trigger``, ``context_compaction``: codex-rs ResponseItem variants; ``session/turn.rs`` takes them
#: from the sampling stream like the model's items, and compacts before a turn's sampling: none is work on a prompt).
_HARNESS_ITEMS = frozenset({"ghost_snapshot", "additional_tools", "configuration_update",
                            "compaction", "compaction_trigger", "context_compaction"})


def _from_model(kind: str, payload: dict[str, Any]) -> bool:
    """Whether a line records the model's doing: an item that is no user or harness message (``_HARNESS_ITEMS``),
    or its event."""
    if kind == "event_msg":
        return payload.get("type") in ("agent_message", "agent_reasoning")
    if payload.get("type") in _HARNESS_ITEMS or _standalone_output(payload):
        return False
    return payload.get("type") != "message" or payload.get("role") == "assistant"


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): ``~/.codex/session_index.jsonl`` (0.116+), one line per thread
    naming it (``{"id", "thread_name", "updated_at"}``), and ``~/.codex/history.jsonl``, one line per prompt typed
    (``{"session_id", "ts", "text"}``), hold no run; the sessions are the rollouts."""
    if not isinstance(record, dict):
        return None
    if set(record) == {"id", "thread_name", "updated_at"} and isinstance(record["thread_name"], str):
        return "Codex's index of thread names (session_index.jsonl; the threads are its rollout-*.jsonl), not a run"
    if set(record) == {"session_id", "ts", "text"} and isinstance(record["text"], str):
        return ("Codex's history of the prompts typed (history.jsonl; the sessions are its rollout-*.jsonl), "
                "not a run")
    return None


def not_a_run(record: Any) -> str | None:
    """``codex exec --json`` prints events (``thread.started``, ``item.completed``, ...) without the prompt."""
    if isinstance(record, dict) and record.get("type") == "thread.started" and isinstance(record.get("thread_id"), str):
        return ("this is `codex exec --json` output, which does not record the prompt; ingest the session's rollout "
                f"instead: ~/.codex/sessions/YYYY/MM/DD/rollout-*-{record['thread_id']}.jsonl")
    return None


def _is_ts_rollout(document: Any) -> bool:
    """Whether a whole JSON document is the TypeScript CLI's session file, ``{"session": {"timestamp", "id",
    "instructions"[, "responseId"]}, "items": [...]}`` (its writer puts nothing else at the top)."""
    return isinstance(document, dict) and document.keys() == {"session", "items"} \
        and isinstance(document["items"], list) and isinstance(document["session"], dict) \
        and {"id", "timestamp"} <= document["session"].keys()


def _lines(document: Any) -> list[tuple[str, dict[str, Any], Any]]:
    """(kind, payload, timestamp) of each line of a rollout, in any layout (see ``_normal``, ``_ts_lines``), without
    the history a sub-agent inherits (``_own_records``)."""
    if _is_ts_rollout(document):
        return _ts_lines(document)
    return [_between_agents(_normal(line)) for line in _own_records(as_records(document, "Codex rollout"))]


#: The fields of a message between agents (codex-rs ``InterAgentCommunication``) as multi-agent v2 wrote it before
#: its ``agent_message`` item: an assistant message whose text is its JSON, ``other_recipients`` too (0.125, 0.138:
#: real rollouts), and, as other readers of rollouts quote it, a top-level ``inter_agent_communication`` line (no
#: real file seen).
_AGENTS_MESSAGE = frozenset({"author", "recipient", "content", "trigger_turn"})


def _between_agents(line: tuple[str, dict[str, Any], Any]) -> tuple[str, dict[str, Any], Any]:
    """A message between agents of an older multi-agent v2 build read as the ``agent_message`` item later builds
    write (``_agent_task``; its ``encrypted_content``, 0.138's place for the words, as a part of its own): read as it
    was written, a sub-agent's task was no prompt (the sub-agent refused, or, forked, given its parent's task) and a
    sub-agent's report to its parent, recorded as an assistant message, the parent model's answer, its JSON the
    words."""
    kind, payload, at = line
    message: Any = payload if kind == "inter_agent_communication" else None
    if kind == "response_item" and payload.get("type") == "message" and payload.get("role") == "assistant":
        text = _message_text(payload)
        try:
            message = loads(text) if text.startswith("{") else None
        except ValueError:
            message = None
        if not (isinstance(message, dict) and isinstance(message.get("other_recipients"), list)):
            message = None  # an answer of those four fields is the model's: both real builds name other_recipients
    if not (isinstance(message, dict) and _AGENTS_MESSAGE <= message.keys() and isinstance(message["content"], str)):
        return line
    sealed = message.get("encrypted_content")
    parts = [{"type": "input_text", "text": message["content"]},
             *([{"encrypted_content": sealed}] if isinstance(sealed, str) else [])]
    return "response_item", {**message, "type": "agent_message", "content": parts}, at


def _own_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of the session's own thread. A sub-agent spawned with its parent's history (``spawn_agent``
    ``fork_context`` / ``fork_turns``; an auto-review's too) starts its rollout with a copy of it after its own
    meta: the parent's meta, prompts, final answers and events (codex-rs ``keep_forked_rollout_item``), up to the
    ``subagent_history_start_ordinal`` its meta names, the first line that is its own; Codex leaves that prefix out
    of the thread's turns, and so does this (read, it gave the parent's answers as the sub-agent's steps)."""
    meta = next((record for record in records if _normal(record)[0] == "session_meta"), None)
    start = _normal(meta)[1].get("subagent_history_start_ordinal") if meta else None
    if type(start) is not int or start <= 0:
        first = _unnumbered_fork_start(records, meta) if meta else None
        return records if first is None else [meta, *records[first:]]
    own = [record for record in records
           if record is meta or type(record.get("ordinal")) is not int or record["ordinal"] >= start]
    if len(own) == 1 < len(records):
        raise RecordError(f"all {len(records) - 1} lines after its session meta come before its "
                          f"subagent_history_start_ordinal {start}: history copied from its parent; this sub-agent "
                          "wrote nothing of its own")
    return own


def _unnumbered_fork_start(records: list[dict[str, Any]], meta: dict[str, Any]) -> int | None:
    """Where a forked sub-agent's own lines start in a rollout written by Codex 0.147 or earlier, which numbers no
    lines and names no start ordinal (0.171 does): the parent's thread is copied after its meta all the same (its
    meta, then its turns, the spawning one left open). Read whole, the parent's first prompt was the sub-agent's task
    and its answers and calls the sub-agent's steps (real files of 0.114 and 0.147).

    The sub-agent's first turn is the first ``task_started`` Codex began after it made the sub-agent: thread and turn
    ids are UUIDv7, their first 48 bits the millisecond they were made, so a copied turn is older than the sub-agent's
    id, even one a killed or backtracked parent left open or, nested, the turn of the sub-agent that spawned this one.
    With ids of another kind, it is the first ``task_started`` while a copied turn is open (the spawning turn; a
    copied turn left open makes that the parent's next one). None when the rollout is no fork's (no meta of the
    session it was forked from after its own) or no turn starts in it."""
    payload = _normal(meta)[1]
    if not _session_source(payload).get("is_subagent") or not payload.get("forked_from_id"):
        return None
    lines = [_normal(record)[:2] for record in records]
    copy = next((at for at, (kind, copied) in enumerate(lines)
                 if kind == "session_meta" and copied.get("id") == payload["forked_from_id"]), None)
    if copy is None:
        return None
    born, turn_open = _made_at(payload.get("id")), False
    for at, (kind, event) in enumerate(lines[copy + 1:], start=copy + 1):
        if kind == "event_msg" and event.get("type") == "task_started":
            made = _made_at(event.get("turn_id"))
            if (made >= born) if born is not None and made is not None else turn_open:
                return at
            turn_open = True
        elif kind == "event_msg" and event.get("type") in ("task_complete", "turn_aborted"):
            turn_open = False
    return None


#: A UUIDv7 (Codex's thread and turn ids): its first 48 bits the Unix millisecond it was made.
_UUID7 = re.compile(r"([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", re.I)


def _made_at(value: Any) -> int | None:
    """The millisecond a UUIDv7 id was made (``_unnumbered_fork_start``), None for an id of another kind."""
    found = _UUID7.fullmatch(value) if isinstance(value, str) else None
    return int(found.group(1) + found.group(2), 16) if found else None


def _ts_lines(document: dict[str, Any]) -> list[tuple[str, dict[str, Any], Any]]:
    """The TypeScript CLI's one document as rollout lines: its session meta, then its response items (which carry
    no time)."""
    session = document["session"]
    items = [item for item in document["items"] if isinstance(item, dict)]
    return [("session_meta", session, session.get("timestamp")),
            *(("response_item" if isinstance(item.get("type"), str) else "unknown", item, None) for item in items)]


def _no_conversation(document: Any, lines: list[tuple[str, dict[str, Any], Any]]) -> str:
    """Why a file read as a rollout holds no conversation: what it holds instead. A whole JSON document of no
    layout read here (a forced ``--format``) is named by its top-level keys."""
    if isinstance(document, dict) and [kind for kind, _, _ in lines] == ["unknown"]:
        keys = ", ".join(sorted(str(key) for key in document)[:12]) or "none"
        return (f"no conversation in this Codex rollout: one JSON document with keys {keys}, neither rollout lines "
                "({type, payload} per line) nor the TypeScript CLI's {session, items}")
    kinds = sorted({kind for kind, _, _ in lines})
    return f"no conversation in this Codex rollout (only {', '.join(kinds)} lines)"


def _normal(line: dict[str, Any]) -> tuple[str, dict[str, Any], Any]:
    """(kind, payload, timestamp) of a rollout line in either layout."""
    if isinstance(line.get("payload"), dict) and isinstance(line.get("type"), str):
        return line["type"], line["payload"], line.get("timestamp")
    if line.get("record_type"):
        return "state", line, None
    if "instructions" in line and "id" in line and "type" not in line:
        return "session_meta", line, line.get("timestamp")
    if isinstance(line.get("type"), str):
        return "response_item", line, line.get("timestamp")
    return "unknown", line, None


def _message_text(payload: dict[str, Any]) -> str:
    return parts_text(payload.get("content")).strip()


def _reasoning_text(payload: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key in ("summary", "content"):
        items = payload.get(key)
        if isinstance(items, list):
            out.extend(str(i["text"]) for i in items if isinstance(i, dict) and isinstance(i.get("text"), str))
    return out


def _output(payload: dict[str, Any]) -> tuple[str, int | None, bool | None]:
    """(text, exit code, success flag) of a tool output item."""
    out = payload.get("output")
    if payload.get("type") == "tool_search_output":
        tools = payload.get("tools") if isinstance(payload.get("tools"), list) else []
        names = [str(t.get("name")) for t in tools if isinstance(t, dict) and t.get("name")]
        return ", ".join(names), None, None
    success = None
    if isinstance(out, dict):
        success = out.get("success") if isinstance(out.get("success"), bool) else None
        out = out.get("content") if "content" in out else (out.get("text") if "text" in out else json.dumps(out))
    if isinstance(out, list):
        return parts_text(out), None, success
    if not isinstance(out, str):
        return ("" if out is None else str(out)), None, success
    stripped = out.strip()
    if (mcp := _mcp_result(stripped)) is not None:
        text, is_error = mcp
        return text, None, (False if is_error else success)
    if stripped.startswith("{"):
        try:
            decoded = loads(stripped)
        except ValueError:  # a runaway output nested too deep is text, not a lost run
            decoded = None
        if isinstance(decoded, dict) and "output" in decoded:
            meta = decoded.get("metadata") if isinstance(decoded.get("metadata"), dict) else {}
            text = decoded["output"] if isinstance(decoded["output"], str) else json.dumps(decoded["output"])
            return text, as_int(meta.get("exit_code")), success
    found = _EXIT_LINE.search(_reply_parts(out)[0])
    return out, (as_int(found.group(1)) if found else None), success


#: The kinds of an MCP tool result's content blocks (MCP ``ContentBlock``).
_MCP_BLOCKS = frozenset({"text", "image", "audio", "resource", "resource_link"})
#: The fields of an MCP ``CallToolResult`` as serde writes it.
_MCP_RESULT_FIELDS = frozenset({"content", "isError", "structuredContent", "_meta"})


def _mcp_result(text: str) -> tuple[str, bool] | None:
    """(text, is error) of an MCP tool's result as Codex wrote it into a ``function_call_output``, else None. Codex
    0.2x-0.6x (2025, ``convert_call_tool_result_to_function_call_output_payload``) wrote the result's content blocks
    as a JSON string, ``[{"text": "...", "type": "text"}]``, its ``isError`` kept only in the ``success`` flag it
    does not serialize (so an error is told by its words, see ``_FAILED_REPLY``); earlier builds, and forks, wrote
    the whole result, ``{"content": [...], "isError": true}``. Either way the observation is the blocks' text, not
    their JSON with every newline escaped."""
    if not text.startswith(("[", "{")):
        return None
    try:
        decoded = loads(text)
    except ValueError:  # nested deeper than Python reads: text, as ``_common.json_dict`` has it
        return None
    is_error = False
    if isinstance(decoded, dict) and isinstance(decoded.get("content"), list) and decoded.keys() <= _MCP_RESULT_FIELDS:
        is_error, decoded = decoded.get("isError") is True, decoded["content"]
    elif not (isinstance(decoded, list) and decoded):
        return None
    if not all(isinstance(b, dict) and b.get("type") in _MCP_BLOCKS for b in decoded):
        return None
    return mcp_blocks_text(decoded), is_error


def _reply_parts(text: str) -> tuple[str, str]:
    """(header, output) of a plain-text shell reply: "Exit code: 1\nWall time: ...\nOutput:\n..." (shell_command),
    or "Chunk ID: ...\nWall time: ...\nProcess exited with code 1\n...\nOutput:\n..." (exec_command); a reply
    with no such header: (its first line, all of it)."""
    if "\nOutput:" in text[:1000]:
        head, _, body = text.partition("\nOutput:")
        return head, body
    return text.split("\n", 1)[0], text


def shell_reply(text: str) -> tuple[int | None, str]:
    """(exit code, output) of a plain-text shell reply as Codex writes it (``_reply_parts``: its header's ``Exit
    code: N`` / ``Process exited with code N``, what follows ``Output:``); code None where the header names none. A
    reply with no header is read as its first line: Claude Code's failed ``Bash`` result opens ``Exit code N``."""
    head, output = _reply_parts(text)
    found = _EXIT_LINE.search(head)
    return (int(found.group(1)) if found else None), output


def _output_error(text: str, code: int | None, success: bool | None, command: str | None) -> str | None:
    """The failure a call's output reports (of a shell call that ran ``command``), else None."""
    if timed_out := _TIMED_OUT.match(_reply_parts(text)[1].lstrip("\r\n")):
        return f"{timed_out.group(0)} (exit code {code})" if code else timed_out.group(0)
    if code is not None and code != 0:  # the reply's header is no output: exit 1 with nothing after it is no error
        return exit_code_error(_reply_parts(text)[1], code, command)
    if success is False:
        return error_line(text, "tool call failed")
    body = _WALL_TIME.sub("", text.strip(), count=1)  # 0.17x puts "Wall time: ..." before the reply
    if code is None and (denied := _SANDBOX_DENIED.match(body)):
        return _sandbox_denied(denied, command)
    if code is None and _FAILED_REPLY.match(body):
        failure = short(body.splitlines()[0], 300, keep="head")  # "<what failed>: <detail>": the head says it
        return not_run(failure) if _NOT_RUN_REPLY.match(body) else failure
    if code is None and (error := _unified_exec_error(body)):
        return error
    if code is None and _SCRIPT_FAILED.match(text):
        return _script_error(text)
    if code is None and _SCRIPT_COMPLETED.match(text):
        return _inner_exit_error(_reply_parts(text)[1])
    return None


def _sandbox_denied(found: re.Match[str], command: str | None) -> str | None:
    """The failure of a command a 2025 build reported "failed in sandbox" (see ``_SANDBOX_DENIED``): the reply's
    header and the command's decisive line and exit code (``exit_code_error``: of its stderr, else its stdout), not
    the header alone, which says nothing of why; None for a search's silent exit 1, its "no match"."""
    head, code, stdout, stderr = found.groups()
    failure = exit_code_error(stderr if stderr.strip() else stdout, int(code), command)
    return f"{head}: {failure}" if failure else None


def _unified_exec_error(body: str) -> str | None:
    """The failure in a unified-exec reply that a command never ran, or was refused (see ``_UNIFIED_EXEC_FAILED``):
    one line saying why, not the debug print."""
    found = _UNIFIED_EXEC_FAILED.match(body)
    if not found:
        return None
    tool, detail = found.groups()
    failure = _exec_failure(detail.strip())
    return not_run(f"{tool} failed: {failure}") if failure.startswith("rejected: ") else f"{tool} failed: {failure}"


def _exec_failure(detail: str) -> str:
    """Why unified exec did not run a command, from its error's debug print: the reason it was rejected (by the
    user, by the auto-reviewer), a sandbox's denial with the command's decisive output line and exit code, else the
    error's kind and message (or, for a plain message such as ``write_stdin``'s "stdin is closed ...", its line)."""
    message = _DEBUG_MESSAGE.search(detail)
    if message is None:
        return short(detail.splitlines()[0] if detail else "failed", 300, keep="head")
    text = _debug_text(message.group(1))
    if rejected := _DEBUG_REJECTED.match(text):
        reason = " ".join(_debug_text(rejected.group(1)).splitlines()[:2])  # what was refused, and why
        return f"rejected: {short(reason, 300, keep='head')}"
    for printed in (text, detail):  # Codex(Sandbox(Denied { output }) inside the message, or beside it
        if code := _DEBUG_EXIT_CODE.search(printed):
            output = _DEBUG_OUTPUT.search(printed)
            exit_code = int(code.group(1))
            failure = exit_code_error(_debug_text(output.group(1)) if output else text, exit_code)
            denied = "sandbox denied" if re.search(r"SandboxDenied|Sandbox\(Denied", detail) else _debug_kind(detail)
            return f"{denied}: {failure or f'exit code {exit_code}'}"
    return f"{_debug_kind(detail)}: {error_line(text, 'failed')}"


def _debug_kind(detail: str) -> str:
    """The variant a Rust debug print of an error names first (``CreateProcess { ... }``: ``CreateProcess``)."""
    found = re.match(r"\w+", detail)
    return found.group(0) if found else "error"


def _debug_text(escaped: str) -> str:
    """A string literal of a Rust debug print, unescaped (``\\n``, ``\\"``, ``\\u{1b}``, ...)."""
    def unescape(found: re.Match[str]) -> str:
        code = found.group(1)
        return chr(int(code[2:-1], 16)) if code.startswith("u{") else _DEBUG_ESCAPES.get(code, code)
    return _DEBUG_ESCAPE.sub(unescape, escaped)


def _script_error(text: str) -> str | None:
    """The failure of a code-mode script (``exec`` / ``wait``, "Script failed"): its inner tool's report after
    ``Script error:`` read as that tool's own reply would be (so a timeout, a rejected patch, a JS exception is an
    error, and ``rg``'s silent exit 1 still is not); a reply cut before that report still failed."""
    _, found, inner = text.partition(_SCRIPT_ERROR)
    if not found:
        return "script failed"
    inner = inner.strip()
    exit_line = _EXIT_LINE.search(_reply_parts(inner)[0])
    code = as_int(exit_line.group(1)) if exit_line else None
    if code is not None:
        return _output_error(inner, code, None, None)
    return _output_error(inner, None, None, None) or error_line(inner, "script failed")


def _inner_exit_error(printed: str) -> str | None:
    """The failure of the first command a completed code-mode script ran through ``exec_command`` that failed,
    when what the script printed is that tool's result object, or a list of them (``_SCRIPT_COMPLETED``); each read
    as that reply would be (``exit_code_error``: the script's command is not known, so a silent exit 1 is no error,
    and does not hide a later command's failure). Anything else the script printed is its own, no error."""
    try:
        found = loads(printed.strip())
    except ValueError:
        return None
    for result in found if isinstance(found, list) else [found]:
        if not (isinstance(result, dict) and "wall_time_seconds" in result and isinstance(result.get("output"), str)):
            return None
        code = as_int(result.get("exit_code"))
        if code not in (None, 0) and (failure := exit_code_error(result["output"], code)):
            return failure
    return None


def _reasoning_recorded_late(items: list[dict[str, Any]]) -> bool:
    """Whether a rollout records each reasoning after the call it led to, and after that call's output: Codex's
    chat-completions path of 2025 (codex-rs' ``AggregatedChatStream`` emitted a response's reasoning when the
    response completed, by which time its call had been passed on and run: ``user, call, output, reasoning, call,
    output, reasoning, answer``; the ocodex fork's rollouts). Told per file: its reasoning items are that path's (no
    id, no encrypted content, no summary: raw ``reasoning_text``), one comes right after an output, and none opens
    a turn's calls (``user, reasoning, call``: reasoning that comes before its call, as the Responses API's do, and a
    later build's chat path; between two calls the orders look alike)."""
    reasoning = [p for p in items if p.get("type") == "reasoning"]
    if not reasoning or any(p.get("id") or p.get("encrypted_content") or p.get("summary") for p in reasoning):
        return False
    kinds = [None, *(p.get("type") for p in items), None]
    after = [(before, following) for before, kind, following in zip(kinds, kinds[1:], kinds[2:]) if kind == "reasoning"]
    return any(before in OUTPUTS for before, _ in after) and \
        not any(following in CALLS and before not in OUTPUTS for before, following in after)


class _Rollout(SessionSteps):
    def __init__(self, reasoning_late: bool = False) -> None:
        super().__init__()
        self.reasoning_late = reasoning_late
        self.answered: dict[str, Any] | None = None  # the call whose output was the last item, when reasoning is late

    def reasoning(self, texts: list[str]) -> None:
        """Reasoning is the next step's thought; where it is recorded late (see ``_reasoning_recorded_late``), the
        first after a call's output is that call's (it came before the call: it goes before its narration)."""
        step, self.answered = self.answered, None
        if step is None:
            self.thought.extend(texts)
        else:
            step["thought"] = join_thought(texts + [step.get("thought") or ""])

    def answer(self, text: str, at: Any, final: bool) -> None:
        if not text:
            return
        self.say(text, at)
        self.last_error = None
        if final:
            self.flush()

    def report(self, text: str, author: str | None) -> None:
        """A sub-agent's report (``_agent_report``) ends the observation of the ``wait_agent`` call that waited for
        it, which Codex records right before it and whose own output says only "Wait completed." (else the parent's
        run never had its helper's answer); with no wait before it (the parent did not wait), of the ``spawn_agent``
        call whose output names the sub-agent's path."""
        def named(step: dict[str, Any], *calls: str) -> bool:
            return str(step["action"]).rsplit("__", 1)[-1] in calls
        last = self.steps[-1] if self.steps else None
        step = last if last is not None and named(last, "wait_agent", "wait") else next(
            (step for step in reversed(self.steps) if named(step, "spawn_agent") and author
             and f'"{author}"' in str(step.get("observation"))), None)
        if step is not None:
            step["observation"] = "\n\n".join(filter(None, [step.get("observation"), text]))

    def call(self, payload: dict[str, Any], at: Any) -> None:
        kind = payload["type"]
        call_id = as_key(payload.get("call_id")) or as_key(payload.get("id"))
        if kind == "function_call":
            action, arguments = _tool_name(payload, UNNAMED_TOOL), _call_arguments(payload)
        elif kind == "custom_tool_call":
            action, arguments = _tool_name(payload, "custom_tool"), json_arguments(payload.get("input"))
        elif kind == "local_shell_call":
            action = "local_shell"
            act = payload.get("action") if isinstance(payload.get("action"), dict) else {}
            arguments = {k: v for k, v in act.items() if k != "type" and v is not None} or act
        elif kind == "web_search_call":
            action, arguments = "web_search", payload.get("action") or {}
        elif kind == "tool_search_call":
            action, arguments = "tool_search", payload.get("arguments") or {}
        else:
            action, arguments = "image_generation", {"prompt": payload.get("revised_prompt")}
        if arguments is None:
            arguments = {}
        step = self.open_call(str(call_id) if call_id else None, str(action), arguments, at)
        self.last_error = None
        if kind == "web_search_call" and payload.get("status") not in (None, "completed"):
            step["error"] = f"web search {payload.get('status')}"
        if kind == "image_generation_call":
            step["observation"] = as_str(payload.get("status"))

    def question_answered(self, answers: list[tuple[str | None, str]], at: Any) -> list[str]:
        """A question reply's answers (``_question_reply``) are the result of the ``request_user_input_async``
        call they answer, in place of its ``{"accepted":true}``. An answer naming no call of this rollout (an id
        the app gave the question) goes to the oldest such call still unanswered; returns those left over, whose
        question was asked before this rollout."""
        waiting = [step for step in self.steps
                   if step["action"] == "request_user_input_async" and step.get("observation") in (None, _ACCEPTED)]
        chosen: dict[str | None, dict[str, Any]] = {}  # one reply's answers to one question id go to one call
        unasked: list[str] = []
        for call, words in answers:
            step = self.by_call.get(call) if call else None
            if step is None and call not in chosen and waiting:
                chosen[call] = waiting.pop(0)
            step = step or chosen.get(call)
            if step is None:
                unasked.append(words)
                continue
            waiting = [other for other in waiting if other is not step]
            said = step.get("observation")
            step["observation"] = "\n".join(filter(None, [None if said == _ACCEPTED else said, words]))
            step["ended_at"] = iso_time(at)
        return unasked

    def output(self, payload: dict[str, Any], at: Any) -> None:
        step = self.by_call.get(str(payload.get("call_id")))
        if step is None or step.get("_done"):
            return
        text, code, success = _output(payload)
        text = strip_terminal_codes(text)
        step["observation"] = text or None
        step["error"] = _output_error(text, code, success, command_line(step["arguments"]))
        step["ended_at"] = iso_time(at)
        step["_done"] = True
        if self.reasoning_late:
            self.answered = step


#: How soon after its prompt a turn aborted before the model wrote anything was a prompt sent too early (the user
#: pressing Esc on a half-typed line: the probe's came within a second). Codex writes reasoning only once it is
#: complete, and nothing with summaries off, so a request interrupted after long thinking also shows no model item.
_RETYPED_WITHIN = timedelta(seconds=10)


class _Prompts:
    """The prompts of a rollout (each read from one of its records: ``_counted_prompts``), and which did nothing: a
    turn the user aborted (``turn_aborted``: interrupted at once, the prompt sent too early and typed again) before
    the model wrote anything, within ``_RETYPED_WITHIN`` of the prompt (or with no time recorded)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.void: set[int] = set()
        self.pending: int | None = None  # the last prompt, while the model has not answered it
        self.sent: datetime | None = None  # when the pending prompt was sent

    def add(self, text: str, at: Any = None) -> None:
        self.pending, self.sent = len(self.texts), iso_time(at)
        self.texts.append(text)

    def answered(self) -> None:
        self.pending = None

    def aborted(self, at: Any = None) -> None:
        ended = iso_time(at)
        if self.pending is not None and (self.sent is None or ended is None or ended - self.sent <= _RETYPED_WITHIN):
            self.void.add(self.pending)
        self.pending = None

    def first_done(self) -> int:
        """Where the run's task is: the first prompt whose turn the model worked on (the first, if none was)."""
        return next((i for i in range(len(self.texts)) if i not in self.void), 0)


def _item_error(item: dict[str, Any]) -> str | None:
    """The failure an ``item_completed`` event (0.17x) reports for a call: a failed MCP call's error (a refused
    approval, or its result flagged ``isError``), a failed command's exit code (-1: interrupted)."""
    if item.get("status") != "failed":
        return None
    error, result = item.get("error"), item.get("result")
    if isinstance(error, dict) and error.get("message"):
        return short(str(error["message"]), 300)
    if item.get("type") == "McpToolCall" and isinstance(result, dict):
        return error_line(parts_text(result.get("content")), "MCP tool error")
    if item.get("type") == "CommandExecution":
        code = as_int(item.get("exit_code"))
        return exit_code_error(str(item.get("aggregated_output") or ""), code, command_line(item)) if code else \
            "command failed"
    return None


def _event_errors(events: list[dict[str, Any]]) -> dict[str, str]:
    """Failures the ``*_end`` and ``item_completed`` events report per call id (exit codes, MCP errors, rejected
    patches)."""
    found: dict[str, str] = {}
    for ev in events:
        item = ev.get("item") if ev.get("type") == "item_completed" and isinstance(ev.get("item"), dict) else None
        if item is not None and item.get("id") and (error := _item_error(item)):
            found[str(item["id"])] = error
        call_id = ev.get("call_id")
        if not call_id:
            continue
        kind = as_str(ev.get("type"))
        if kind == "exec_command_end":
            code = as_int(ev.get("exit_code"))
            if code not in (None, 0):
                text = ev.get("aggregated_output") or ev.get("stderr") or ev.get("formatted_output") or ""
                if error := exit_code_error(str(text), code, command_line(ev)):  # exit 1, no output: a "no match"?
                    found[str(call_id)] = error
        elif kind == "mcp_tool_call_end":
            result = ev.get("result")
            if isinstance(result, dict) and "Err" in result:
                found[str(call_id)] = short(str(result["Err"]), 300)
            elif isinstance(result, dict) and isinstance(result.get("Ok"), dict) and result["Ok"].get("isError"):
                found[str(call_id)] = error_line(parts_text(result["Ok"].get("content")), "MCP tool error")
        elif kind == "patch_apply_end" and ev.get("success") is False:
            found[str(call_id)] = error_line(str(ev.get("stderr") or ev.get("stdout") or ""), "patch failed to apply")
    return found


def _exits_told_once(rollout: _Rollout, events: list[dict[str, Any]]) -> None:
    """A unified-exec command that outlives its first reply (``Process running with session ID N``) is polled with
    ``write_stdin`` on process N, and its exit is told twice: by its ``exec_command_end`` event (with the command's
    call id, whose step takes the failure) and by the poll that saw it ("Process exited with code 2"). The failure is
    the command's: such a poll is no error of its own (it was a second one, doubling a run's errors; probe AUD2,
    round 22). A poll whose command is not in the run, or has no end event (before 0.5x), keeps it: it is the only
    mark of the failure; a write that failed (``write_stdin failed: ...``) is the poll's own."""
    ended = {str(ev["process_id"]): rollout.by_call.get(str(ev.get("call_id"))) for ev in events
             if ev.get("type") == "exec_command_end" and ev.get("process_id") is not None}
    for step in rollout.steps:
        arguments = step.get("arguments")
        if step.get("action") != "write_stdin" or not step.get("error") or not isinstance(arguments, dict):
            continue
        command = ended.get(str(arguments.get("session_id")))
        exited = _EXIT_LINE.search(_reply_parts(step.get("observation") or "")[0])
        if command is not None and command is not step and command.get("error") and exited:
            step["error"] = None


# A reverted thread (``thread/revert``, app-server 0.149+: the IDE's and Desktop's undo of turns). Codex keeps the
# thread's id and hides the turns reverted: it writes a new rollout, ``rollout-<time>-<thread id>_<rollout id>.jsonl``,
# whose ``session_meta`` (``history_mode: paginated``) names in ``history_base`` ({thread_id: the earlier rollout's
# id, end_ordinal_exclusive, end_byte_offset}) the part of the earlier rollout the thread keeps: its lines of
# ``ordinal`` below the end (``end_byte_offset`` bytes of that file). The earlier rollout may itself go on from
# another (a second revert). Read as codex-rs ``thread-store`` ``rollout_lineage`` reads it: by rollout id, the
# ordinals checked, and only within the same thread (a fork's ``history_base`` names another thread, with
# ``forked_from_id``: that run stands apart).

#: A rollout's file name (codex-rs ``RolloutFileName``): its thread id, and the rollout id after ``_`` a revert adds.
#: Asked of the name without a compression's suffix: Codex (``rollout/src/compression.rs``, 0.137+, with its
#: ``local_thread_store_compression`` on) rewrites a rollout idle for a week as ``rollout-*.jsonl.zst``.
_ROLLOUT_NAME = re.compile(r"^rollout-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-(" + _UUID.pattern[1:-1] + r")(?:_("
                           + _UUID.pattern[1:-1] + r"))?\.jsonl$", re.I)
#: How many earlier rollouts a thread's history is followed through (each revert adds one).
_MAX_REVERTS = 100


class _Rollouts(NamedTuple):
    """The rollouts of a folder (or of a ``sessions/YYYY/MM/DD`` tree) by their names: each by its rollout id, and
    the files of a thread that a revert wrote (named with a rollout id of their own) by thread id."""

    by_rollout: dict[str, Path]
    reverted: dict[str, list[Path]]


def _name_ids(name: str) -> tuple[str, str] | None:
    """(thread id, rollout id) from a rollout's file name (compressed or not), else None."""
    found = _ROLLOUT_NAME.match(sources.plain_name(name))
    return (found.group(1).lower(), (found.group(2) or found.group(1)).lower()) if found else None


def _indexed(files: Iterator[Path]) -> _Rollouts:
    """The rollouts among ``files``; of one both plain and compressed, the plain file, whatever the compressed one
    holds: as Codex's ``RolloutFile`` takes it (see ``sources.compressed_twin``)."""
    by_rollout: dict[str, Path] = {}
    reverted: dict[str, list[Path]] = {}
    for file in files:
        if (ids := _name_ids(file.name)) is not None and sources.plain_twin(file) is None:
            by_rollout[ids[1]] = file
            if ids[0] != ids[1]:
                reverted.setdefault(ids[0], []).append(file)
    return _Rollouts(by_rollout, reverted)


@lru_cache(maxsize=16)
def _rollouts_in(folder: Path, levels: int, stamp: tuple[int, ...]) -> _Rollouts:
    """The rollouts ``levels`` folders below ``folder`` (0: in it), as they were at ``stamp`` (see ``_stamp``)."""
    return _indexed(folder.glob("*/" * levels + "rollout-*.jsonl*"))


def _stamp(folder: Path, levels: int) -> tuple[int, ...]:
    """When ``folder`` and its newest sub-folders, ``levels`` deep, last changed: where Codex adds a rollout (today's
    folder, or a new one), so a cached listing is read again once a rollout was added."""
    stamp = []
    for level in range(levels + 1):
        stamp.append(os.stat(folder).st_mtime_ns)
        if level < levels:
            subs = sorted(p for p in folder.iterdir() if p.name.isdigit() and p.is_dir())
            if not subs:
                break
            folder = subs[-1]
    return tuple(stamp)


def _rollouts_near(path: Path) -> _Rollouts:
    """The rollouts a thread's other rollouts are looked for among: those of Codex's ``sessions/YYYY/MM/DD`` tree
    ``path`` lies in (a revert writes its rollout in the day's folder), else of its own folder."""
    folder = path.parent
    tree = folder.parents[2] if len(folder.parents) > 2 and all(
        p.name.isdigit() for p in (folder, folder.parent, folder.parent.parent)) else None
    try:
        if tree is not None:
            return _rollouts_in(tree, 3, _stamp(tree, 3))
        return _rollouts_in(folder, 0, _stamp(folder, 0))
    except OSError:
        return _Rollouts({}, {})


def _history_base(meta: dict[str, Any]) -> dict[str, Any] | None:
    """A rollout's ``history_base`` when it goes on from an earlier rollout of its own thread (a revert's), else
    None (none, or a fork's: ``forked_from_id``)."""
    base = as_dict(meta.get("history_base"))
    if meta.get("forked_from_id") or not as_str(base.get("thread_id")) \
            or not isinstance(base.get("end_ordinal_exclusive"), int):
        return None
    return base


def _read_rollout(path: Path) -> list[tuple[dict[str, Any], int]] | None:
    """A rollout's lines with the byte offset after each, or None if a line cannot be read (then no history is
    built on it)."""
    read: list[tuple[dict[str, Any], int]] = []
    for _, record, error, after in sources.lines(path):
        if error is not None or not isinstance(record, dict) or after is None:
            return None
        read.append((record, after[0]))
    return read


def _session_meta(records: list[dict[str, Any]]) -> dict[str, Any]:
    return next((payload for kind, payload, _ in map(_normal, records) if kind == "session_meta"), {})


class _History(NamedTuple):
    """A thread's lines before a rollout, those its reverts left out, and the rollouts they were read from."""

    kept: list[dict[str, Any]]
    dropped: list[dict[str, Any]]
    files: list[Path]


def _earlier(path: Path, meta: dict[str, Any], depth: int = 0) -> _History:
    """The thread's lines before the rollout ``path`` (whose session meta is ``meta``), and those its revert left out
    (with those of earlier reverts), from the rollouts its ``history_base`` goes back through. RecordError saying why
    when they cannot be had: a rollout not found beside it, or one that does not hold the position named."""
    base = _history_base(meta)
    if base is None:
        return _History([], [], [])
    rollout, end = str(base["thread_id"]).lower(), base["end_ordinal_exclusive"]
    file = _rollouts_near(path).by_rollout.get(rollout)
    read = _read_rollout(file) if file is not None and file != path and depth < _MAX_REVERTS else None
    if read is None:
        raise RecordError(f"the rollout {rollout} it goes on from is not found beside it")
    own = [record for record, _ in read]
    earlier_meta = _session_meta(own)
    if earlier_meta.get("id") != meta.get("id"):
        raise RecordError(f"the rollout {rollout} it goes on from is not of thread {meta.get('id')}")
    before = _earlier(file, earlier_meta, depth + 1)
    history = before.kept + own
    if not all(isinstance(record.get("ordinal"), int) for record in history):
        raise RecordError(f"the rollout {rollout} it goes on from has lines without an ordinal")
    kept = [record for record in history if record["ordinal"] < end]
    cut = next((offset for record, offset in reversed(read) if record["ordinal"] < end), None)
    if not kept or kept[-1]["ordinal"] != end - 1 or \
            (cut is not None and isinstance(base.get("end_byte_offset"), int) and cut != base["end_byte_offset"]):
        raise RecordError(f"the rollout {rollout} it goes on from does not end its kept part where it says")
    return _History(kept, before.dropped + [record for record in history if record["ordinal"] >= end],
                    [file, *before.files])


def _thread_history(document: Any, source: Path) -> tuple[Any, dict[str, Any]]:
    """A rollout as its thread's run: after a revert, the rollout's history (see ``_earlier``) then its own lines,
    the turns reverted left out (as Codex shows the thread, and sends it to the model) and their prompts in
    ``metadata.reverted_prompts``. Found neither beside it, its lines alone, under an id of their own (else they
    would replace the thread's run), naming the rollout they go on from (``history_base``)."""
    if _is_ts_rollout(document):
        return document, {}
    records = as_records(document, "Codex rollout")
    meta = _session_meta(records)
    if (base := _history_base(meta)) is None:
        return document, {}
    ids = _name_ids(source.name)
    rollout = ids[1] if ids else f"{str(base['thread_id']).lower()}.{base['end_ordinal_exclusive']}"
    try:
        history = _earlier(source, meta)
    except RecordError as exc:
        return document, {"rollout_id": rollout, "history_missing": str(exc),
                          "history_base": {k: base.get(k) for k in ("thread_id", "end_ordinal_exclusive")}}
    return history.kept + records, {"rollout_id": rollout,
                                    "reverted_prompts": prompt_list(_prompts_in(history.dropped, meta.get("id")))
                                    or None,
                                    "lineage": [rollout, *_rollout_ids(history.files)]}


def _resumed_step(document: Any, source: Path) -> tuple[Any, dict[str, Any]]:
    """A rollout of a step of a multi-step Harbor trial that the step before resumed (``codex exec resume --last``;
    ``atif.resumed_part``): the step's own lines after the session meta, naming that step (``resumed_from_step``).
    Any other rollout is read whole."""
    from .atif import resumed_part  # atif imports this module

    if _is_ts_rollout(document):
        return document, {}
    records = as_records(document, "Codex rollout")
    before, own, step = resumed_part(records, source)
    if step is None:
        return document, {}
    metas = [record for record in before if record.get("type") == "session_meta"]
    return metas + own, {"resumed_from_step": step}


def _rollout_ids(files: list[Path]) -> list[str]:
    """The rollout ids of the files of a thread's history that a revert wrote (not the thread's first rollout)."""
    return [ids[1] for file in files if (ids := _name_ids(file.name)) is not None and ids[0] != ids[1]]


def _prompts_in(records: list[dict[str, Any]], thread: Any) -> list[str]:
    """The prompts typed in ``records`` of ``thread`` (``_counted_prompts``)."""
    return [codex_request(prompt) for prompt in _counted_prompts(list(map(_normal, records)), thread).values()]


#: The records of a prompt, the most faithful first (``_counted_prompts``): the ``user_message`` event (up to 0.147,
#: and later in the legacy history mode), the ``item_completed`` event of its ``UserMessage`` item (0.148+ in the
#: paginated mode, the default), a multi-agent v2 sub-agent's task (``_agent_task``), the user message item (beside
#: which Codex sends its own context as user messages); a message delivered to the thread (``_is_delivery``), which
#: no other record repeats, counts in any turn.
_PROMPT_RECORDS = ("user_message", "item_completed", "agent_task", "message", "delivery")


def _prompt_record(kind: str, payload: dict[str, Any]) -> str:
    """Which of ``_PROMPT_RECORDS`` a prompt's line is: a sub-agent's task (an ``agent_message`` item, which no
    event repeats) is ranked apart from the user message items, and from the assistant's ``agent_message`` events,
    which are never prompts."""
    if kind == "event_msg":
        return as_str(payload.get("type")) or ""
    if _is_delivery(payload):
        return "delivery"
    return "agent_task" if payload.get("type") == "agent_message" else "message"


def _counted_prompts(lines: list[tuple[str, dict[str, Any], Any]], thread: Any) -> dict[int, str]:
    """The prompts of a rollout's ``lines`` of ``thread``, by line, each read from one record of it: in each turn,
    from the first of ``_PROMPT_RECORDS`` the turn holds (a thread resumed by a newer Codex has turns of both event
    records: its later prompts were lost when one record was chosen for the whole rollout); from the message items
    only in a rollout with neither event. A turn is told by the ``turn_id`` of its ``task_started`` (or
    ``turn_started``) event, which an ``item_completed`` event carries too; lines outside a started turn (rollouts
    written before turns were recorded) are one turn."""
    found: list[tuple[int, Any, int, str]] = []  # (line, turn, rank of its record, prompt)
    turn: Any = None
    for at, (kind, payload, _) in enumerate(lines):
        event = payload.get("type") if kind == "event_msg" else None
        if event in ("task_started", "turn_started"):
            turn = payload.get("turn_id")
        elif event in ("task_complete", "turn_complete", "turn_aborted"):
            turn = None
        if kind in ("response_item", "event_msg") and (prompt := _typed_prompt(kind, payload, thread)):
            record = _prompt_record(kind, payload)
            own = payload.get("turn_id") if record == "item_completed" else None
            found.append((at, own or turn, _PROMPT_RECORDS.index(record), prompt))
    events = [prompt for prompt in found if _PROMPT_RECORDS[prompt[2]] != "message"] or found
    alone = _PROMPT_RECORDS.index("delivery")
    best: dict[Any, int] = {}
    for _, turn, rank, _ in events:
        if rank != alone:
            best[turn] = min(rank, best.get(turn, rank))
    return {at: prompt for at, turn, rank, prompt in events if rank in (alone, best.get(turn))}


def _turn_starts(lines: list[tuple[str, dict[str, Any], Any]], thread: Any) -> list[tuple[int, str]]:
    """Where each user turn of ``lines`` begins, with its prompt (``_counted_prompts``): its ``task_started`` (or
    ``turn_started``) event, where one comes after the previous prompt, else its prompt's line."""
    starts: list[tuple[int, str]] = []
    after = 0
    for at, prompt in sorted(_counted_prompts(lines, thread).items()):
        began = [i for i in range(after, at) if lines[i][0] == "event_msg"
                 and lines[i][1].get("type") in ("task_started", "turn_started")]
        starts.append((began[-1] if began else at, prompt))
        after = at + 1
    return starts


def _rolled_back(lines: list[tuple[str, dict[str, Any], Any]],
                 thread: Any) -> tuple[list[tuple[str, dict[str, Any], Any]], list[str]]:
    """``lines`` without the turns a ``thread_rolled_back`` event undid (the TUI's backtrack, app-server
    ``thread/rollback``; the rollout keeps the event, ``rollout/src/policy.rs``): Codex drops the last ``num_turns``
    user turns before it from the thread when it replays the rollout (codex-rs ``drop_last_n_user_turns``: all of
    them where it names more), as it did from the model's history. Returns the lines kept, and the prompts of the
    turns dropped; their items and events go, the session's own lines stay."""
    dropped: list[str] = []
    while (at := next((i for i, (kind, payload, _) in enumerate(lines)
                       if kind == "event_msg" and payload.get("type") == "thread_rolled_back"), None)) is not None:
        turns, starts = as_int(lines[at][1].get("num_turns")) or 0, _turn_starts(lines[:at], thread)
        undone = starts[-min(turns, len(starts)):] if turns > 0 and starts else []
        cut = undone[0][0] if undone else at
        dropped += [prompt for _, prompt in undone]
        lines = [*lines[:cut], *(line for line in lines[cut:at] if line[0] not in ("response_item", "event_msg")),
                 *lines[at + 1:]]
    return lines, dropped


def _continued_by(path: Path) -> Path | None:
    """The later rollout of ``path``'s thread that goes on from it after a revert, and holds the thread's run: the
    end of the chain, when a later revert went on from a rollout that itself went on from ``path`` (the one whose
    history holds the most rollouts: each revert goes on from the thread's newest rollout)."""
    ids = _name_ids(path.name)
    found: list[tuple[int, str, Path]] = []
    for later in _rollouts_near(path).reverted.get(ids[0], []) if ids else []:
        if later == path or (read := _read_rollout(later)) is None:
            continue
        try:
            files = _earlier(later, _session_meta([record for record, _ in read])).files
        except RecordError:
            continue
        if path in files:
            found.append((len(files), later.name, later))
    return max(found)[2] if found else None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record, thread = _thread_history(record, ctx.source)
    if not thread:
        record, thread = _resumed_step(record, ctx.source)
    lines = _lines(record)
    metas = [p for kind, p, _ in lines if kind == "session_meta"]
    meta = metas[0] if metas else {}
    lines, rolled_back = _rolled_back(lines, meta.get("id") or meta.get("session_id"))
    contexts = [p for kind, p, _ in lines if kind == "turn_context"]
    events = [p for kind, p, _ in lines if kind == "event_msg"]
    items = [(p, at) for kind, p, at in lines if kind == "response_item"]
    if not items and not events:
        raise RecordError(_no_conversation(record, lines))

    rollout = _Rollout(reasoning_late=_reasoning_recorded_late([p for p, _ in items]))
    request = _review_request if _is_review(meta) else codex_request
    session_id = meta.get("id") or meta.get("session_id")  # its thread's: a review's, written here too, is another
    if not session_id:
        found = _UUID.search(ctx.source.name)
        session_id = found.group(1) if found else None
    counted = _counted_prompts(lines, session_id)  # by line
    typed = _Prompts()
    reviews: list[str] = []
    unasked: list[str] = []  # answers to questions asked before this rollout (``_Rollout.question_answered``)
    standalone: list[str] = []  # outputs answering no call that are no delivered prompt (``_standalone_output``)
    silent, spent = False, None  # nothing of the model's since the last prompt; the last call's output tokens
    uninferred = False  # the last prompt a flush no token count has followed: Codex may have run no model turn
    goal: dict[str, Any] = {"turns": 0}  # a /goal thread's objective, last status and the turns it drove
    talk: list[str] = []  # the talk each spoken request was handed off with (``_handoff_talk``)
    for line, (kind, payload, at) in enumerate(lines):
        said = _prompt_said(kind, payload, session_id) if kind in ("response_item", "event_msg") else None
        prompt = _typed_from(said)  # the prompt this line holds, if it holds one
        if line in counted and (handed := _handoff_talk(said)):
            talk.append(handed)
        if kind in ("response_item", "event_msg") and _from_model(kind, payload):
            typed.answered()
            silent = False
        elif prompt:
            silent, spent, uninferred = True, None, _asks_no_reply(said)
        if (asked := _goal_prompt(kind, payload)) is not None:
            goal.update(turns=goal["turns"] + asked[0], objective=asked[1] or goal.get("objective"))
            goal.setdefault("led", not typed.texts)  # the goal, not a typed prompt, began the run
            if asked[0]:
                silent, spent, uninferred = True, None, False
                rollout.flush()
        elif updated := _goal_update(kind, payload) or _goal_answer(kind, payload, rollout.by_call):
            goal.update(objective=updated[0] or goal.get("objective"), status=updated[1] or goal.get("status"))
        if kind == "response_item":
            item = as_str(payload.get("type"))
            if item not in OUTPUTS and item != "reasoning":
                rollout.answered = None  # late reasoning follows its call's output directly
            if item == "message" and payload.get("role") == "assistant":
                rollout.answer(_message_text(payload), at, final=payload.get("phase") == "final_answer")
            elif item == "message" and payload.get("role") == "user" and \
                    (answers := _question_reply(_prompt_text(payload.get("content")))) is not None:
                unasked += rollout.question_answered(answers, at)
            elif (item in ("message", "agent_message") or _is_delivery(payload)) and prompt:
                rollout.flush()
                if line in counted:
                    typed.add(request(counted[line]), at)
            elif item == "agent_message" and (report := _agent_report(payload)):
                rollout.report(report, as_str(payload.get("author")))
            elif item == "reasoning":
                rollout.reasoning(_reasoning_text(payload))
            elif item in CALLS:
                rollout.call(payload, at)
            elif _standalone_output(payload) and (text := _output(payload)[0]):
                if _tool_name(payload, UNNAMED_TOOL) == _GOAL_OBJECTIVE_OUTPUT:
                    goal["objective"] = text.strip() or goal.get("objective")
                else:
                    standalone.append(f"{_tool_name(payload, UNNAMED_TOOL)}: {text}")
            elif item in OUTPUTS:
                rollout.output(payload, at)
        elif kind == "event_msg":
            ev = as_str(payload.get("type"))
            if prompt:
                if line in counted:
                    typed.add(request(counted[line]), at)
                rollout.flush()
            elif review := _review_request_made(kind, payload):
                reviews.append(review)
            elif ev == "turn_aborted":
                typed.aborted(at)
            elif ev == "error" or (ev == "task_complete" and payload.get("error")):
                error = payload.get("message") if ev == "error" else payload.get("error")
                if isinstance(error, dict):
                    error = error.get("message") or json.dumps(error)
                rollout.last_error = short(str(error or "error"), 500, keep="head")
            elif ev == "task_complete" and silent and not uninferred and "last_agent_message" in payload \
                    and not payload["last_agent_message"] and not rollout.last_error:
                told = [f"{spent} output tokens spent"] if spent else []
                rollout.last_error = f"{_NO_REPLY} ({told[0]})" if told else _NO_REPLY
                why = "; ".join([*told, "a refusal, which Codex drops, or none"])  # one parenthesis, not two
                rollout.steps.append({"action": None, "observation": f"{_NO_REPLY} ({why})",
                                      "error": rollout.last_error, "started_at": iso_time(at)})
            elif ev == "token_count":
                uninferred = False  # the model was asked
                spent = as_int(as_dict(as_dict(payload.get("info")).get("last_token_usage")).get("output_tokens"))
            elif ev == "agent_message" and not items:
                rollout.answer(str(payload.get("message") or "").strip(), at, final=True)
            elif ev == "agent_reasoning" and not items:
                rollout.thought.append(str(payload.get("text") or ""))
        elif kind == "compacted" and rollout.narration and isinstance(payload.get("message"), str) and \
                payload["message"].rstrip().endswith(rollout.narration[-1].strip()):
            rollout.narration.pop()  # the summarizer's reply (local compaction), which the compacted line quotes
    rollout.flush()

    for call_id, error in _event_errors(events).items():
        step = rollout.by_call.get(call_id)
        if step is not None and not step.get("error"):
            step["error"] = error
    _exits_told_once(rollout, events)

    prompts, first = typed.texts, typed.first_done()
    if not prompts and reviews:  # the session's only request was a review: its task is that request
        prompts, first, reviews = reviews[:1], 0, reviews[1:]
    if not prompts and unasked:  # a rollout that goes on from an answer alone (its question asked before it)
        prompts, first, unasked = ["\n".join(unasked)], 0, []
    if goal.get("led") and (goal.get("objective") or not prompts):  # a thread `/goal` began: its objective the task
        prompts = [*prompts[:first], goal.get("objective") or _GOAL_UNNAMED, *prompts[first:]]
    if not prompts:
        raise RecordError("no user prompt in this Codex rollout (only injected context or no user message)")

    if not session_id:
        raise RecordError("missing field 'session_meta.payload.id' (and no session UUID in the file name)")

    git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
    first_ctx = contexts[0] if contexts else {}
    models = [str(c["model"]) for c in contexts if c.get("model")]
    models = models or ([str(meta["model"])] if meta.get("model") else [])
    sandbox = first_ctx.get("sandbox_policy")
    source = _session_source(meta)
    if source.get("is_subagent") and not source.get("parent_thread_id"):
        source["parent_thread_id"] = _reviewed_session(prompts)
    tokens = next((usage.get("total_tokens") for e in reversed(events) if e.get("type") == "token_count"
                   and (usage := as_dict(as_dict(e.get("info")).get("total_token_usage")))
                   and (usage.get("input_tokens") or usage.get("output_tokens"))), None)  # not the "window full" mark
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": str(session_id),
        "cwd": meta.get("cwd") or first_ctx.get("cwd"),
        "git_branch": git.get("branch"),
        "git_commit": git.get("commit_hash"),
        "repository_url": git.get("repository_url"),
        "cli_version": meta.get("cli_version"),
        "originator": meta.get("originator"),
        **source,
        "model_provider": meta.get("model_provider"),
        "forked_from_id": meta.get("forked_from_id"),
        "approval_policy": as_str(first_ctx.get("approval_policy")),
        "sandbox": (sandbox.get("type") or sandbox.get("mode")) if isinstance(sandbox, dict) else sandbox,
        "total_tokens": tokens,
        "user_prompts": prompt_list(prompts[first + 1:]) or None,
        "aborted_prompts": prompt_list(prompts[:first]) or None,
        "turns_aborted": sum(1 for e in events if e.get("type") == "turn_aborted") or None,
        "review_requests": reviews or None,
        "question_replies": unasked or None,
        "standalone_outputs": standalone or None,
        "goal": goal.get("objective"),
        "goal_status": goal.get("status"),  # the model's or the user's word, no verdict: no judge audits it
        "goal_followups": goal["turns"] or None,
        "spoken_transcript": talk or None,
        "models": sorted(set(models)) if len(set(models)) > 1 else None,
        **thread,
    }
    if rolled_back:  # undone as a revert's turns are
        undone = prompt_list([request(said) for said in rolled_back])
        metadata["reverted_prompts"] = [*(thread.get("reverted_prompts") or []), *undone]
    own = f"@{thread['rollout_id']}" if "history_missing" in thread else ""  # not the thread's run (see above)
    if lineage := metadata.pop("lineage", None):  # the runs its rollouts gave, read without their history
        metadata["supersedes"] = [f"codex.{session_id}@{rollout_id}" for rollout_id in lineage]
    return session_trajectory(
        ctx, run_id=f"codex.{session_id}{own}", task=prompts[first], model_id=models[0] if models else None,
        tool_versions={"codex-cli": str(meta["cli_version"])} if meta.get("cli_version") else {},
        steps=rollout.steps, metadata=metadata, last_error=rollout.last_error,
        error_cause=_NO_REPLY_CAUSE if (rollout.last_error or "").startswith(_NO_REPLY) else
        "infrastructure: the session ended on a Codex/model API error",
        # a resumed step (``_resumed_step``) began at its own first line, not when the session did
        created_at=first_time(None if "resumed_from_step" in thread else meta.get("timestamp"),
                              *(at for kind, _, at in lines if at and kind != "session_meta")),
    )
