"""``claude-code``: Claude Code session transcripts, ``~/.claude/projects/<project>/<session-id>.jsonl``.

Source read: the transcripts themselves (Claude Code's source is not public):
real lines quoted by log tools and bug reports (versions 1.0.43 to 2.1.2xx),
the record catalogue of jazzyalex/agent-sessions' schema-drift fixture, and
daaain/claude-code-log's models. Each line is one record: ``user``,
``assistant``, ``system``, ``summary``, ``file-history-snapshot``,
``attachment``, ``progress``, ``queue-operation``, ``custom-title``, ... with
``uuid``/``parentUuid``, ``sessionId``, ``isSidechain``, ``isMeta``, ``cwd``,
``gitBranch``, ``version`` and ``timestamp``. Only ``user``, ``assistant`` and
``system`` records carry the conversation; the rest are bookkeeping and are
read for metadata only.

A Claude Code *web* (remote) session is one JSON document, ``{"loglines": [...]}``: Anthropic's session API
(``/v1/session_ingress/session/<id>``) answers so, the session's records whole, and simonw/claude-code-transcripts
``web --json`` saves that answer as ``<session>.json`` (its ``local``/``json --json`` copy the file read, a transcript
stays a transcript). Its ``loglines`` are read as a transcript's lines; so are message records cut to ``type``,
``timestamp`` and ``message``, the shape of that project's sample (``tests/sample_session.json``) and of the
conversion it makes of a transcript in memory. Its live events (``/v1/sessions/ws/<id>/subscribe``, as
webedt's ``claude web execute --jsonl`` writes them) open with the environment manager's ``env_manager_log`` lines
(fetching the repository, starting Claude Code), then the CLI's ``stream-json`` output: read as that output.

Mapping
- One run per file. A file holding main-conversation records is the main
  session: records with ``isSidechain: true`` (a subagent's turns, which
  older versions wrote into the main file) are left out of its steps -- the
  ``Task``/``Agent`` call that spawned the subagent already carries the
  subagent's report as its result, or, for a background agent (2.1+), gets it
  from the later ``<task-notification>`` naming the call (a background shell
  command's notification, naming its task id, adds how it ended: an error
  when it failed) -- and counted in
  ``metadata.sidechain_records``.
  Headless ``stream-json`` output writes a background task's end only as a
  ``system`` ``task_notification`` record (its ``tool_use_id``, ``status``,
  ``summary``), read as that notification.
  Headless ``stream-json`` output of a session an SDK drives opens with the CLI's
  ``control_response`` to ``initialize`` (the SDK's ``SDKControlInitializeResponse``: its ``commands``,
  ``output_style``; only some 2.1.332 answers name ``claude_code_version``). It never
  echoes the prompt a scheduled task or a ``/loop`` wakeup fires (only the transcript holds it): a turn a scheduler
  started (``command_lifecycle`` ``wakeup_source``) is counted in
  ``metadata.scheduled_turns``, and output of such turns alone is refused saying so, but for a dynamic
  ``/loop``'s wakeup, echoed (2.1.337) as the user's ``/loop``, its task (``task_from: "loop_wakeup"``); a
  ``CronCreate`` task's fire
  answers the prompt the stream's ``CronCreate`` calls set, where they set one, less the tasks a ``CronDelete``
  cancelled (:meth:`_Session.fired`). A ``/clear``
  in it (``conversation_reset``) starts a new session: each conversation is a run (``split``).
  Headless ``stream-json`` output marks a subagent's lines by their
  ``parent_tool_use_id`` (the Task call's id), not ``isSidechain``: they are
  left out the same way, and the prompt the main agent wrote for its subagent
  is no task of the run.
  An agent team's teammate is a session of its own the lead spawned, its file beside
  the lead's, its records naming ``agentName`` and ``teamName``: a sub-agent's run
  (``is_subagent``, ``agent_name``, ``team_name``; the lead's session is not named).
  A file holding only sidechain records (``agent-<id>.jsonl``, or
  ``<session>/subagents/agent-<id>.jsonl``) is the subagent's own run, except
  a compaction's (``agent-acompact-<id>.jsonl``: the CLI asking the model to
  sum up the session so far, which the session's own file records as its
  compaction summary), a prompt suggestion's (``agent-aprompt_suggestion-<id>``,
  2.1.x: the CLI asking the model what the user might type next), or a 2.0.x-2.1.x
  subagent's warm-up (the CLI's own "Warmup" prompt at startup, whatever the
  reply calls: the CLI answers each call "Warmup"; under
  ``claude -p`` the file holds the reply only; a session file may open with
  it, the session following): no run, passed over (``side_document``). A /btw
  side question's file (``agent-aside_question-<id>.jsonl``, 2.1.x) opens
  with the CLI's copy of the parent conversation so far (the parent's
  records, re-stamped as the side agent's): its run starts at the question
  (``metadata.copied_parent_records`` counts what was left out). So are a
  subagent's ``agent-<id>.meta.json``, a session's todo list
  (``~/.claude/todos/*.json``) and task list (2.1.x,
  ``~/.claude/tasks/<session>/<n>.json``), the spool of telemetry events the
  CLI could not send (``~/.claude/telemetry/``), a project's ``sessions-index.json``,
  a 2.1.x workflow's ``journal.jsonl`` (its agents' start and result
  records), an empty ``agent-<id>.jsonl`` / ``.meta.json`` (``side_path``:
  a workflow agent that never wrote), and (``side_document``, for a file of
  up to 64 KiB) a session file of
  summaries or bookkeeping only, or of local commands only (``/clear``,
  ``/exit``, or one the CLI answered "Unknown skill: usage": no prompt, no
  model reply but to the warm-up).
- The conversation is the chain of ``parentUuid`` from the last message (across
  a compaction, the boundary's ``logicalParentUuid``), as the CLI loads a
  session, read in that order (each record after its parent: 2.1.x does not
  always write its lines so). A truncating resume (``--resume-session-at``, the Agent SDK's
  ``resumeSessionAt``) or a rewind writes its new turn under an earlier record:
  a branch off that chain holding a model reply of its own is what the user
  went back on, left out of the steps and prompts (the model never saw it
  again), its calls (they ran: their effects stay) in
  ``metadata.abandoned_calls``, its prompts in ``abandoned_prompts``, its
  record count in ``abandoned_records``. A parallel call's result, which
  hangs under its own call's record, stays.
- task: the first real user prompt: a ``user`` record whose text is not
  ``isMeta`` (caveats, skill banners, expanded command bodies; but 2.1.2xx
  marks every prompt of an Agent SDK session ``isMeta`` with
  ``promptSource: "sdk"``: the SDK caller's prompt, kept, as is the prompt a
  scheduled task fires, :func:`_scheduled_prompt`; a dynamic ``/loop``'s wakeup, :func:`_loop_wakeup`, is the
  CLI's; a prompt the model's safeguards refused that the CLI then withdrew, :func:`_withdrawn_prompts`, is in
  ``metadata.withdrawn_prompts``) nor, in stream-json, ``isSynthetic`` (the Skill tool's
  expansion of a skill's instructions, "Base directory for this skill: ..."), not a tool
  result, not a ``<command-name>`` wrapper, ``<local-command-stdout>``,
  ``<bash-input>`` or hook output, not "[Request interrupted by user]" and not
  a compaction summary; ``<system-reminder>`` blocks are cut out, and so is
  the context an IDE extension adds (``<ide_opened_file>``,
  ``<ide_selection>``: a message of that only is no prompt), and a fork
  worker's ``<fork-boilerplate>`` (2.1.2xx: its task is its directive). A slash
  command that expands to a prompt (a custom ``.claude/commands`` file,
  ``/init``, ``/review``: the next user record holds the expanded body, 1.0.x
  wrote it into the command's own record as ``<command-contents>``) is an
  instruction: ``/name args`` when it has arguments, else the expanded body.
  A skill's command (``/superpowers:using-superpowers``, 2.1.x: the expansion
  is the skill's own instructions, "Base directory for this skill: ...")
  loads the skill: without arguments it asks nothing, the next prompt is the
  user's request. A prompt of punctuation only (".", which users type to open a
  session) asks nothing either: the first prompt with words is the task, the "."
  one of ``metadata.user_prompts``.
  Local commands (``/model``, ``/clear``: no expansion) are not; a prompt
  command answered by ``<local-command-stderr>`` (its ``!`...``` pre-run
  failed: ``/pr-review 157``, then ``proceed``) is, unless a later request
  retypes the same ``/name`` (``_agent_cli.RefusedCommands``, SpecStory's rule
  too). Fallbacks:
  the first command, then the compaction summary; a file that starts
  mid-conversation (1.0.x: its first record a tool result) with no prompt is
  still a run of its calls (``metadata.starts_mid_conversation``), its task
  the summary or title of its conversation, else the agent's first words,
  marked as such; so is a subagent's file of 2.0.x ``claude -p``, which opens
  with the agent's reply (its prompt is only in the parent's Task call:
  ``metadata.prompt_not_recorded``). Later prompts of a
  multi-prompt session do not start new runs: they are listed in
  ``metadata.user_prompts``; so is a prompt typed while the agent worked,
  which 2.1.x delivers as a ``queued_command`` attachment (its background
  tasks' reports come the same way, and join their calls; 2.1.5x-2.1.9x log
  such a message only in the queue's ``queue-operation`` records, ``enqueue``
  with its text then ``remove`` when the turn takes it in: read the same, where
  it was taken in, when the file writes no attachment and the text is a typed
  prompt or a task's report, not a subagent's ``<agent-notification>``,
  another session's message or a background task's JSON registration; a task's
  report still queued when the session ended, never taken in, joins its call all
  the same: the task ended so), and a
  coordinator's follow-up to its running subagent (2.1.2xx, ``isMeta`` with
  ``origin.kind: "coordinator"``: the subagent's next request). Another
  session's message (``origin.kind: "peer"``) is no request of this run's
  user: ``metadata.peer_messages``, with its sender. So too in an agent team
  (2.1.x, records marked ``teamName``), whose agents' messages are user records
  of ``<teammate-message teammate_id="<sender>">`` blocks: the lead's
  (``team-lead``) is its teammate's request (of a JSON ``task_assignment``, its
  subject and description), another's a peer's message, and the team's other
  JSON (idle notices, shutdown requests) no one's.
- steps: assistant records are merged by ``message.id`` (the CLI writes one
  content part per line, several lines per API response; a part seen twice is
  kept once; records repeated with the same ``uuid`` are read once). In each
  response, in order: ``thinking`` text and narration text that precedes a
  tool call become that call's ``thought``; each ``tool_use`` (or
  ``server_tool_use``) is a step (action = tool name, arguments = ``input``);
  its result is the ``tool_result`` with the same ``tool_use_id`` in a later
  user record (observation = its text, without the notices the CLI appends
  in ``<system-reminder>`` blocks, unless a reminder is all there is: a Read
  past the end of a file; of an Agent call (2.1.3xx), the subagent's report
  without the "[Subagent hand-back]" frame the CLI puts around it; of a
  deferred MCP tool (2.1.3xx), without the advice the CLI appends when it was
  called without its schema loaded ("This tool's input schema was not in your
  prompt ... call ToolSearch with query ..."); of
  ToolSearch, the names of the tools it loaded;
  ended_at = that record's time). Text
  left at the end of a response is a ``respond`` step with
  ``{"content": text}``; thinking with nothing after it becomes the thought
  of the next step (at the session's end, it joins the last step's thought). A Stop hook that refuses to let a turn end ("Stop hook
  feedback: ..." in a user record) is what that turn's last step got back: its
  observation (the agent's next steps answer it). A hook that refuses a call's
  result (``PostToolUse`` exiting 2: a linter on the file just written;
  ``PostToolUseFailure``), recorded (2.1.2xx+) as a ``hook_blocking_error``
  attachment naming the call, joins that call's observation and is its error
  when it has none.
- Step.error: only when the result says it failed: ``is_error: true`` (the
  decisive line of the result, e.g. "Exit code 1 ... AssertionError: ..." or
  "The user doesn't want to proceed with this tool use", with all the words the user typed with it, not the note
  to the model 2.1.8x+ appends when a feature gate is on, "Note: The user's next message may contain a correction
  ..."; "interrupted by the user while it ran" for a call the user stopped then (2.1.3xx: the same refusal, then
  "Correction to the text above: this call was stopped while running ..."), not "not run"; "tool call never
  finished: " and the CLI's words for a call it ended once started or that may have run (``_ENDED_RUNNING``: the
  session ended while it ran, its resume then writing "[Tool call interrupted: ...]"); whether the CLI ran a call is
  read from its marks (2.1.3xx): a transcript's ``toolDenialKind`` / ``toolCallEnded`` or stream-json's
  ``tool_result_meta`` ``non_execution_kind`` / ``call_ended`` (only its known value ``not_started``, not run;
  :func:`_denial_kind`), kind ``interrupted`` never finished; a refusal stamped ``toolDenialAfterRun`` (once the tool
  had been entered) "tool call never finished (refused once it had started): " and its words, not "not run" and
  not the user's interrupt; of a call the CLI refused (``<tool_use_error>``) its message, not the ``String: ...``
  an Edit's refusal quotes from its input; "Exit code 1" with no output is grep's "no match", no error, when the
  command answers so: grep, rg, which, test, ...; a script whose output went to a file failed; of a long
  output 2.1.3xx kept only the start of, an error line in it, else the code:
  its last line is where the cut fell), or an interrupted Bash call
  (``toolUseResult.interrupted``), or a poll of a background task (``BashOutput``, 2.1.x ``TaskOutput``)
  that reports it ``failed``: a shell command's exit code and output read as a Bash call's, an agent's
  error; one failure is one error, on the last poll that reports it (a later poll of a finished task reads
  all its output: it is the most detailed report, and a poll left with the error before the same poll without
  one would read as a failure recovered from), else on the launch, from the ``<task-notification>``'s summary
  (which never takes the error from a poll); the other reports keep what they say, with no error of their own.
  A parallel call the CLI cancelled because another one failed ("Sibling tool call errored")
  never ran: no error of its own, its observation says so.
- outcome: a transcript records no verdict -> ``unknown``. When the session
  ended on an API error (a synthetic assistant message with
  ``isApiErrorMessage``/``error``, or a ``system`` ``api_error`` record, with
  no model reply after it) -> ``infra_error`` with that error; "Prompt is too long"
  (the conversation outgrew the model's window and compaction did not save it) is the agent's
  ``failure`` instead, as every CLI's context-window stop is (``_agent_cli.ended_on_error``), and so is the
  model's refusal (the CLI's "... appears to violate our Usage Policy", 2.1.337's "<model>'s safeguards flagged
  this message"); each refused response's step has the error ``REFUSED_STEP``, the response told by its
  ``stop_reason: "refusal"`` or, in headless stream-json too, by the CLI's marks after it (``_refusal_mark``).
  Headless output that Harbor's claude-code agent kept in a trial (``agent/claude-code.txt``) with neither a
  transcript nor an ATIF conversion naming the task beside it is the trial's run: the verdict is ``result.json``'s
  (``atif.trial_verdict``), so are its task_id / task_family (``atif.trial_task``) and, where stream-json has no
  times (2.1.19's records carry none; 2.1.337's do), created_at (the agent's start); the task, which stream-json
  never echoes, is the instruction the ``claude -p`` command in ``agent/command-<n>/command.txt`` was given as
  written (``metadata.task_from``; not one the shell expands from a variable), else names the Harbor task and the
  agent's first words (``metadata.prompt_not_recorded``; an output with no work and no such command stays
  rejected). The transcript Harbor kept in a trial it did not convert is the trial's run the same way, as every CLI's
  raw session there is (``_agent_cli.session_trajectory``, ``atif.trial_of_run``): the session ``claude-code.txt``
  names, and no other; where it names none, the trial's only top-level transcript (``_named_run``). In a step of a
  multi-step trial that resumed the step before (``resume_trajectory``: ``claude --continue``, which 2.x appends to
  the same ``<session id>.jsonl``), the run is the step's own records, after the copy the earlier step's folder
  holds (``atif.resumed_part``; ``metadata.resumed_from_step``).
- trajectory_id = ``claude-code.<session id>``: the file name when it is a
  session UUID (the CLI names files by session id; a resumed session's file
  can also hold lines copied from the session it continued), else the last
  ``sessionId`` of its records; ``.agent-<agentId>`` is appended for a
  subagent file, whose records carry the parent's session id; headless
  stream-json output (``claude -p``) gets ``.stream-<digest of its task>``, apart
  from the transcript of the same session. created_at =
  the first timestamp;
  model_id = the first real ``message.model`` (``<synthetic>`` is the CLI's own).
- metadata: cwd, git_branch, cli_version, entrypoint, summary (of this file's
  conversation: a ``summary`` record whose ``leafUuid`` is one of its messages;
  the others sum up other sessions) / title,
  user_prompts, peer_messages, agent_name / team_name, sidechain_records, api_errors, interrupted,
  abandoned_records / abandoned_prompts / abandoned_calls, withdrawn_prompts, scheduled_turns.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import shlex
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import INTERRUPTED, NEVER_FINISHED, UNNAMED_TOOL, not_run
from trajsearch.model import Trajectory

from ._agent_cli import (
    API_ERROR_CAUSE,
    CLAUDE_INJECTED,
    add_report,
    background_task,
    task_notifications,
    CLAUDE_INTERRUPT,
    LOCAL_OUTPUT,
    RefusedCommands,
    POLL_TOOLS,
    command_instruction,
    loads_skill,
    command_line,
    exit_code_error,
    as_records,
    first_time,
    iso_time,
    join_thought,
    slash_command,
    as_key,
    as_str,
    parts_text,
    poll_error,
    prompt_list,
    session_trajectory,
    strip_reminders,
    strip_terminal_codes,
    user_words,
    whole_file,
)
from .. import sources
from ._common import Context, RecordError, as_dict, as_list, decisive_line, loads, short
from .atif import (converted_run, harbor_trial, resumed_part, trial_label, trial_of_run, trial_sessions,
                   trial_task)

NAME = "claude-code"
#: Where Claude Code keeps its sessions (``~/.claude/projects``): walked though hidden (see ``read``).
SESSION_FOLDERS = (".claude/projects",)
#: A file is one session: the reader hands over all its lines at once.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"parentUuid"\s*:\s*(?:null|"[^"]*")\s*,\s*"(?:logicalParentUuid"\s*:\s*(?:null|"[^"]*")\s*,\s*")?'
                       r'isSidechain"\s*:\s*(?:true|false)|'
                       r'"isSidechain"\s*:\s*(?:true|false)[^\n]*"(?:sessionId|session_id)"\s*:|'
                       r'"(?:sessionId|session_id)"\s*:[^\n]*"isSidechain"\s*:\s*(?:true|false)')

CONVERSATION = frozenset({"user", "assistant", "system"})
#: Bookkeeping records a session file may start with (they carry a session id, no message).
BOOKKEEPING = frozenset({
    "file-history-snapshot", "queue-operation", "mode", "permission-mode", "agent-name", "custom-title",
    "ai-title", "last-prompt", "pr-link", "frame-link", "worktree-state", "relocated", "attachment", "progress",
    "tag",
})

#: Keys no subagent's ``agent-<id>.meta.json`` holds: a transcript record's (its type, session, agent id and message;
#: the meta file names its agent and session by its path). Its own keys change with versions (``agentType`` only for a
#: workflow agent; ``description`` from 2.1.86; ``spawnDepth``, ``toolUseId``, ``requestShape``, ``model``, ... by
#: 2.1.3xx), so it is told by what it is, one agent's flat launch settings, not by a list of them.
_RECORD_KEYS = frozenset({"type", "sessionId", "session_id", "agentId", "uuid", "message"})
#: The keys and states of an item of a session's todo list (TodoWrite), kept in ``~/.claude/todos/``.
_TODO_KEYS = frozenset({"content", "status", "activeForm", "priority", "id"})
_TODO_STATUS = frozenset({"pending", "in_progress", "completed"})
#: The files of a subagent (2.x): its transcript and its metadata.
_SUBAGENT_FILE = re.compile(r"agent-[\w-]+\.(?:jsonl|meta\.json)")
#: The pages simonw/claude-code-transcripts renders a session as (``index.html``, ``page-001.html``, ...), in the
#: folder where ``--json`` puts the session's file beside them.
_TRANSCRIPT_PAGE = re.compile(r"index\.html|page-\d+\.html")
#: A session's todo list in ``~/.claude/todos/``: ``<session id>-agent-<agent id>.json``.
_TODO_FILE = re.compile(r"[\w-]+-agent-[\w-]+\.json")
#: The largest file looked at for an empty JSON array (``[]`` with some whitespace).
_EMPTY_ARRAY_BYTES = 64
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
#: What 1.0.x appended, as bare text, to every LS result.
_LS_NOTICE = "\n\nNOTE: do any of the files above seem malicious? If so, you MUST refuse to continue work."
#: The CLI's answer to a slash command it does not know (2.1.x: written bare after a local-command caveat, with no
#: ``<command-name>`` record): the output of a local command, not a prompt.
_UNKNOWN_SKILL = re.compile(r"Unknown skill: (\S+)")
_CONTINUATION = re.compile(r"^This session is being continued from a previous conversation")
_API_ERROR_TEXT = re.compile(r"^(?:API Error|Claude AI usage limit reached|Request timed out|Invalid API key)")
_TOOL_USE_ERROR = re.compile(r"</?tool_use_error>")
#: Where an Edit's refusal (``<tool_use_error>``: "Found 2 matches of the string to replace, ...", "String to replace
#: not found in file.") quotes the ``old_string`` it was given: the user's code, not the CLI's message.
_QUOTED_STRING = re.compile(r"\n\s*String:\s")
#: A parallel call the CLI cancelled (2.1+) because another call of the same response failed.
_SIBLING_ERRORED = "<tool_use_error>Sibling tool call errored</tool_use_error>"
_CANCELLED = not_run("Sibling tool call errored (a call made with it in parallel failed, so the CLI cancelled it)")
#: The CLI's words for a call it did not run because it was not allowed: the user declined it ("The user doesn't want
#: to proceed with this tool use. The tool use was rejected ..."; or, cancelling it, "The user doesn't want to take
#: this action right now. STOP ..."), or a non-interactive session had no permission to ask for ("Claude requested
#: permissions to use Bash, but you haven't granted it yet."). 2.1.3xx also marks such a result by a field
#: (:func:`_denial_kind`); earlier versions by these words only. After the first line, only the words the user typed.
_DENIED_TEXT = re.compile(r"^(?:The user doesn't want to (?:proceed with this tool use|take this action right now)|"
                          r"Claude requested permissions to use \S+, but you haven't granted it yet)")
#: What 2.1.3xx writes after that first sentence of a call the user stopped while it ran (``toolDenialKind``
#: ``user-rejected`` as for a refusal): "... Correction to the text above: this call was stopped while running, not
#: refused before it ran. It may have run in part or in full, ...": a call that ran, not one that did not.
_STOPPED_RUNNING = re.compile(r" Correction to the text above: (this call was stopped while running\b.*)")
#: What 2.1.3xx writes for a call it ended with no result of its own (``toolDenialKind`` ``interrupted`` or
#: ``cancelled``) where its words say the call had started or may have run, from the 2.1.332 binary's strings: the
#: session ended while it ran ("[Tool call interrupted: the session ended before this call's result was recorded, so
#: its outcome is unknown. ...]", written on the next resume; "[Agent call interrupted: ...]", "[Request interrupted:
#: the session ended before this agent finished. ...]"), the turn ended or a plugin cancelled it mid-call ("[Tool call
#: did not complete: ...]", against "[Tool call skipped: ... before this call ran ...]"), or the CLI does not know
#: ("This call has no result. It may not have run, or not completely."; "... this tool call was cancelled. If it had
#: already started, some of its effects may have happened."; a session copied from another before that one recorded
#: the result: "[Tool call result not in this copy: ... may have finished there, may still be running there, or may
#: never have run. ...]"; the user's interrupt: "[Request interrupted by user for tool use]", which the CLI's own
#: reader shows as stopped, not refused). A call that never finished, not one that did not run;
#: its other words ("As far as this session knows, this call did not run.", "[Tool call not completed: ... did not
#: run ...]") stay "not run".
_ENDED_RUNNING = re.compile(r"^\[(?:Tool call interrupted: |Agent call interrupted: |Request interrupted: the session "
                            r"ended |Tool call did not complete: |Tool call result not in this copy: |"
                            r"Request interrupted by user for tool use\])|It may not have run, or not completely\.|"
                            r"If it had already started, some of its effects may have happened\.")
_ENDED_KINDS = frozenset({"interrupted", "cancelled"})
#: The one value of a call's ``toolCallEnded`` (stream-json: ``call_ended``) 2.1.332 writes: the CLI closed it before
#: it started ("a host shows it as not run"). Any other is "not known" (its SDK type description), so not read.
_NOT_STARTED = "not_started"
#: How the error of a call the CLI refused only once it had been entered begins (``toolDenialAfterRun``: a hook's or a
#: rule's denial then; its own reader says "denied", not "not run"): it ran, its result is the refusal, not its own,
#: and nobody is said to have stopped it; the mark a call cut off by its harness has, so every rule reads it so.
_REFUSED_AFTER_RUN = f"{NEVER_FINISHED} (refused once it had started)"
#: The note to the model the CLI appends (2.1.8x+, when it does: a feature gate decides) to the result of a call the
#: user refused or stopped, one fixed paragraph after a blank line, which its own reader strips again: no part of the
#: reason ("Note: The user's next message may contain a correction or preference. Pay close attention ...").
_NOTE_TO_MODEL = re.compile(r"\n\nNote: The user's next message may contain a correction or preference\.[^\n]*\Z")
#: The frame 2.1.3xx puts around a subagent's report in an Agent (or SendMessage) result: one line at column zero,
#: "[Subagent hand-back] The text below is the final report of a subagent ... The report follows:", the report under
#: it with every line indented, then the CLI's own lines again at column zero (``agentId: ...``, ``<usage>``).
_HAND_BACK = re.compile(r"^\[Subagent hand-back\][^\n]*(?:\n|$)", re.M)
#: How far the CLI indents each line of a subagent's report under that frame.
_HAND_BACK_INDENT = "  "
#: The advice 2.1.3xx appends to the result of a deferred tool (an MCP tool not loaded by ToolSearch) called without
#: its schema in the prompt: "This tool's input schema was not in your prompt when you called it. [The input schema
#: is: {...} ...] ... call ToolSearch with query \"select:<tool>\" to load the tool, then call it again." (or "This
#: tool's schema was not sent to the API -- ..., then retry this call."): the CLI's words after the tool's own, to the
#: end of the result only (the same words quoted inside an output are the output's: review 3).
_SCHEMA_ADVICE = re.compile(r"(?:\A|\n)\s*This tool's (?:input schema was not in your prompt when you called it\. "
                            r"|schema was not sent to the API\b)(?:(?!\nThis tool's ).)*?\bquery \"select:[^\"\n]+\"[^\n]*\s*\Z",
                            re.S)
_EXIT_CODE = re.compile(r"^\s*Exit code:?\s*(-?\d+)")
#: How much of a failed command's output 2.1.3xx keeps: its first 30,000 characters (the default of
#: ``BASH_MAX_OUTPUT_LENGTH``; "Claude Code kept only the first ... bytes, so the end of the output is missing"), of
#: which the result shows the start and the end with the middle cut out (``_MIDDLE_CUT``), so the "end" shown is
#: where the cut fell. Earlier versions cut out the middle of the whole output: its end is the command's.
_HEAD_KEPT = 30_000
_MIDDLE_CUT = re.compile(r"\n\n\.\.\. \[(\d+) characters truncated\] \.\.\.\n\n")
#: A prompt that asks something: one with a word in it, not punctuation only ("." typed to open a session, which the
#: model answers "How can I help you?").
_WORDED = re.compile(r"\w")
#: The task of a file that starts mid-conversation with no prompt, before the agent's first words: not the user's.
_CONTINUED = "(this session file starts mid-conversation, with no prompt; the agent's first words:) "
#: The task of Harbor's headless output with no transcript beside it (``claude -p`` got the task's instruction as an
#: argument, which stream-json does not echo): what the trial names, before the agent's first words.
_HARBOR_PROMPT = ("(Claude Code's headless output in a Harbor trial does not record the instruction Harbor gave it; "
                  "Harbor task: {task}; the agent's first words:) ")
#: The task of a subagent's file without its prompt (2.0.x `claude -p`), before the agent's first words.
_UNRECORDED_PROMPT = ("(this subagent's file does not record the prompt it was given, which is in its parent's Task "
                      "call; the agent's first words:) ")
#: How the CLI opens a /btw side question (2.1.x), the one prompt of an ``agent-aside_question-<id>`` file.
_SIDE_QUESTION = "<system-reminder>This is a side question from the user."
#: What the CLI tells the agent when a Stop (or SubagentStop) hook blocks the end of its turn.
_STOP_HOOK = re.compile(r"^(?:Subagent)?Stop hook feedback:")
#: How the CLI (2.1.2xx) hands a running subagent its coordinator's follow-up (``origin.kind: "coordinator"``).
_COORDINATOR_SAID = re.compile(r"^The coordinator sent a message while you were working:\s*(.*?)\s*"
                               r"(?:Address this before completing your current task\.)?\s*$", re.S)
#: Another session's message (2.1.2xx, ``origin.kind: "peer"``), when its origin does not hold the ``body``.
_CROSS_SESSION = re.compile(r"<cross-session-message\b[^>]*>\s*(.*?)\s*(?:</cross-session-message>|\Z)", re.S)
#: A message between the agents of a team (agent teams, 2.1.x: real in 2.1.62, the same in 2.1.332's binary; records
#: marked ``teamName``): the CLI hands each to its recipient as a user message (or queued command) of one or more
#: ``<teammate-message teammate_id="<sender>" [color] [summary] [verified]>`` blocks, after a line of its own at most
#: (2.1.332: "Another Claude session sent a message[ while you were working]:"; a prompt that only quotes such a block
#: is the user's). The lead is ``team-lead``.
_TEAMMATE_MESSAGE = re.compile(r"\s*(?:[^\n<]*:\s*)?<teammate-message\b")
#: Its attributes are quoted free text (a ``summary`` the model wrote may hold ``>``): the tag ends after the last.
_TEAMMATE_SAID = re.compile(r'<teammate-message\s+teammate_id="([^"]*)"(?:\s+[\w-]+="[^"]*")*\s*>\s*(.*?)\s*'
                            r'(?:</teammate-message>|\Z)', re.S)
_TEAM_LEAD = "team-lead"
#: How many records of a session :func:`subagent_file` reads: a teammate's first names its team.
_TEAM_OPENING_LINES = 10
#: The modes of a queued command (2.1.x, ``queued_command`` attachment) read: what a user typed, a task's report.
_QUEUED_PROMPT, _QUEUED_NOTIFICATION = "prompt", "task-notification"
#: How the CLI logs its queue of messages typed (or reported) while the agent works (``queue-operation`` records):
#: ``enqueue`` (with the ``content``, before 2.1.1xx), ``dequeue`` (the next turn's prompt, recorded as a user record),
#: ``remove`` (taken into the running turn) and ``popAll`` (pulled back into the input box to edit: not sent).
_ENQUEUE, _DEQUEUE, _REMOVE, _POP_ALL = "enqueue", "dequeue", "remove", "popAll"
#: A slash command in the queue (``/rate-limit-options``, which the CLI queues itself at a usage limit): run between
#: turns, never taken into a running one.
_QUEUED_COMMAND = re.compile(r"\s*/[\w:-]+(?:\s|$)")
#: What the CLI queues itself, no one's prompt: a subagent's report (2.0.x ``<agent-notification>``), another
#: session's message (2.1.2xx ``<cross-session-message>``, its origin written only in the attachment).
_QUEUED_BY_CLI = re.compile(r"\s*<(?:agent-notification|cross-session-message)\b")
#: The CLI's notice of durable one-shot tasks whose time passed while it was not running (2.1.332's template, "task
#: was" / "tasks were"): marked ``wakeupSource: "schedule_wakeup"`` as a task's fire is, but the CLI's own text
#: (it asks the model to ask the user first), no prompt.
_MISSED_TASKS = re.compile(r"\s*The following one-shot scheduled tasks? (?:was|were) missed while")
#: The sentinel a ``/loop`` with no prompt of the user's schedules (2.1.337), expanded at fire time
#: (``_cli_loop_tick``).
_LOOP_SENTINEL = re.compile(r"\s*<<(?:autonomous-loop|loop\.md)(?:-dynamic)?>>\s*\Z")
#: The heading of the CLI's own instructions such a sentinel fires (after its once-only preamble, if any).
_LOOP_TICK = re.compile(r"^# (?:Autonomous loop tick|/loop tick)\b", re.MULTILINE)
#: The CLI's notice (2.1.337) that the prompts its safeguards blocked are withdrawn from the conversation.
_WITHDRAWN_NOTICE = "Claude no longer sees the earlier message that was flagged."


def matches(record: Any) -> bool:
    if (web := _web_lines(record)) is not None:
        return any(_is_web_record(r) for r in web[:LATER_WEB_LINES])
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        return False
    kind = record["type"]
    session = "sessionId" in record or "session_id" in record
    message = record.get("message")
    if isinstance(message, dict) and "parts" in message and "content" not in message:
        return False  # Gemini's message shape in Claude Code's records: Qwen Code's sessions (``qwen_code``)
    if "qwen_code_version" in record or "systemPayload" in record:
        return False  # Qwen Code's headless output (Claude Code's stream-json shape), its sessions' system records
    if kind in CONVERSATION:
        if "isSidechain" in record or "parentUuid" in record:
            return True
        # the Claude Agent SDK's stream-json lines: the same messages, keyed by session_id; a stream opens with
        # ``init``, or with the ``hook_started`` / ``hook_response`` of a SessionStart hook
        return session and (isinstance(record.get("message"), dict) or record.get("subtype") in (
            "init", "hook_started", "hook_response"))
    if kind == "command_lifecycle":  # 2.1.332 stream-json opened by a scheduler's fire: its start, before ``init``
        return session and "command_uuid" in record
    if kind == "control_response":  # stream-json of an SDK session opens with its answer to ``initialize``
        answer = as_dict(as_dict(record.get("response")).get("response"))  # the SDK's SDKControlInitializeResponse
        return isinstance(answer.get("commands"), list) and (
            isinstance(answer.get("output_style"), str) or isinstance(answer.get("available_output_styles"), list))
    if kind == "summary":
        return "leafUuid" in record and "summary" in record
    if kind == "env_manager_log":  # a web session's events open with its environment manager's log, then stream-json
        return isinstance(record.get("data"), dict) and "uuid" in record
    if kind == "file-history-snapshot":
        return "snapshot" in record or "messageId" in record
    return kind in BOOKKEEPING and session and ("uuid" in record or "isSidechain" in record or len(record) <= 6)


split = whole_file

#: How many of a web session's first ``loglines`` detection looks at for a conversation record (bookkeeping such
#: as ``queue-operation`` or ``file-history-snapshot`` may come first, as in a transcript file).
LATER_WEB_LINES = 20


def _web_lines(document: Any) -> list[Any] | None:
    """The records of a Claude Code *web* (remote) session, else None: Anthropic's session API
    (``GET /v1/session_ingress/session/<id>``) answers ``{"loglines": [...]}``, one transcript record per item, and
    simonw/claude-code-transcripts ``web --json`` saves that answer as the file."""
    if isinstance(document, dict) and isinstance(lines := document.get("loglines"), list):
        return lines
    return None


def _is_web_record(record: Any) -> bool:
    """Whether a ``loglines`` item is a transcript record: one a session file holds (``matches``), or a message
    record stripped of its bookkeeping (no ``uuid`` nor ``sessionId``: claude-code-transcripts' sample of the shape,
    and its in-memory conversion of a transcript, which a user's own script may save)."""
    if not isinstance(record, dict):
        return False
    message = record.get("message")
    return matches(record) or (record.get("type") in ("user", "assistant") and isinstance(message, dict)
                               and "content" in message)


def _records(document: Any) -> list[dict[str, Any]]:
    """A session's records: a transcript file's lines, or a web session's ``loglines`` (``_web_lines``)."""
    web = _web_lines(document)
    return as_records(document if web is None else web, "Claude Code session")


_TRANSCRIPT = "~/.claude/projects/<project>/{session}.jsonl"


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a compaction's own file, a prompt suggestion's, a subagent's
    metadata, a session's todo list and task list, the CLI's telemetry spool, the index of a project's sessions and
    the entry of a session's process hold no run of the agent. (A subagent's warm-up is told from the whole file, see
    ``_no_run``: a session may follow it.)"""
    if not isinstance(record, dict):
        return None
    if str(record.get("agentId") or "").startswith("acompact"):
        return (f"a Claude Code compaction of session {record.get('sessionId')} (the CLI's summary of it so far, "
                "also recorded in the session's own file), not a run")
    if str(record.get("agentId") or "").startswith("aprompt_suggestion"):
        return (f"a Claude Code prompt suggestion in session {record.get('sessionId')} (the CLI asking the model "
                "what the user might type next, \"[SUGGESTION MODE: ...]\"; no user asked anything), not a run")
    if _is_subagent_meta(record):
        return ("a Claude Code subagent's metadata (agent-<id>.meta.json: its type, beside its transcript "
                "agent-<id>.jsonl), not a run")
    if _is_todo(record):
        return ("Claude Code's todo list of a session (~/.claude/todos/<session>-agent-<id>.json: TodoWrite's "
                "state), not a run")
    if isinstance(record.get("entries"), list) and "originalPath" in record:
        return "Claude Code's index of a project's sessions (sessions-index.json), not a run"
    if _is_telemetry_event(record):
        return ("Claude Code's spool of usage events it could not send (~/.claude/telemetry/1p_failed_events."
                "<session>.<id>.json: event names, model, environment), not a run")
    if _is_task_item(record):
        return ("an item of Claude Code's task list of a session (~/.claude/tasks/<session>/<n>.json: the state the "
                "TaskCreate and TaskUpdate tools keep), not a run")
    if _is_process_entry(record):
        return (f"Claude Code's record of the process running session {record['sessionId']} (~/.claude/sessions/"
                "<pid>.json: its pid, cwd, start; the session is ~/.claude/projects/<project>/<session id>.jsonl), "
                "not a run")
    if record.get("type") in ("started", "result") and isinstance(record.get("key"), str) \
            and isinstance(record.get("agentId"), str) and set(record) <= {"type", "key", "agentId", "result"}:
        return ("a Claude Code workflow's journal (journal.jsonl: which of its agents started and what each "
                "returned; their transcripts are the agent-<id>.jsonl beside it), not a run")
    return None


def _is_subagent_meta(record: dict[str, Any]) -> bool:
    """A subagent's ``agent-<id>.meta.json`` (2.1.x): its ``agentType`` with other settings of its launch
    (``{"agentType", "description", "toolUseId", "spawnDepth", "requestShape", "model", "finished", ...}``), every
    value a string, number or flag, and none of a transcript record's keys. A run of another format that carries an
    ``agentType`` holds its steps or messages, which no such file does."""
    return isinstance(record.get("agentType"), str) and not record.keys() & _RECORD_KEYS \
        and all(value is None or isinstance(value, (str, int, float)) for value in record.values())


def _is_process_entry(record: dict[str, Any]) -> bool:
    """An entry of Claude Code's registry of running sessions (2.1.14x, ``~/.claude/sessions/<pid>.json``):
    ``{"pid", "sessionId", "cwd", "startedAt", "version", "kind", "entrypoint", ...}``, no record type."""
    return "type" not in record and isinstance(record.get("sessionId"), str) and \
        all(isinstance(record.get(key), int) and not isinstance(record.get(key), bool) for key in ("pid", "startedAt"))


def _is_telemetry_event(record: dict[str, Any]) -> bool:
    """An event of Claude Code's telemetry spool (2.1.x, ``~/.claude/telemetry/1p_failed_events.*.json``, the events
    it could not send): ``{"event_type": "ClaudeCodeInternalEvent", "event_data": {"event_name": "tengu_exit",
    "session_id", ...}}``, nothing else."""
    return set(record) == {"event_type", "event_data"} and isinstance(record["event_type"], str) \
        and isinstance(record["event_data"], dict) and isinstance(record["event_data"].get("event_name"), str)


def _is_task_item(record: dict[str, Any]) -> bool:
    """An item of a session's task list (2.1.x, ``~/.claude/tasks/<session>/<n>.json``): ``{"id", "subject",
    "description", "activeForm", "status", "blocks", "blockedBy"}``, no record type."""
    return "type" not in record and isinstance(record.get("subject"), str) and record.get("status") in _TODO_STATUS \
        and isinstance(record.get("blocks"), list) and isinstance(record.get("blockedBy"), list)


def _is_todo(record: dict[str, Any]) -> bool:
    """An item of a session's todo list (``~/.claude/todos/*.json``, the first a directory walk sees): ``{"content",
    "status", "activeForm"}`` (1.0.x also ``{"content", "status", "priority", "id"}``). Asked of the first record of
    every file, before its format is known: any other value of ``status`` (an object, a list) is no todo."""
    status = record.get("status")
    return isinstance(record.get("content"), str) and isinstance(status, str) and status in _TODO_STATUS \
        and ("activeForm" in record or {"priority", "id"} <= set(record)) and set(record) <= _TODO_KEYS


def walked_file(path: Path) -> bool:
    """The adapter hook (see ``adapters/__init__``): a Harbor trial's ``agent/claude-code.txt``, where Harbor's
    claude-code agent tees ``claude -p``'s stream-json. A walk reads it: in a trial that kept no transcript and no
    ATIF conversion it is the trial's run (the stored copy of SkillsBench's January-2026 Claude Code trials lists
    neither in any trial, and a walk of one read no run); beside either it is passed over (``side_path``,
    ``atif.side_path``)."""
    return _output_trial(path) is not None


def subagent_file(path: Path) -> bool:
    """The adapter hook (see ``adapters/__init__``): whether a session is an agent team's teammate's
    (:func:`_teammate`), which the CLI writes beside its lead's in the project folder: a part of the lead's run, not a
    second run of a Harbor trial that holds both (``atif.trial_sessions``). A teammate's records name its team from
    its first; the lead's only after it makes the team, so the first records tell them apart."""
    try:
        opening = [r for _, r, error, _ in itertools.islice(sources.lines(path), _TEAM_OPENING_LINES)
                   if error is None and isinstance(r, dict)]
    except OSError:  # unreadable now: the reader says so
        return False
    return _teammate(opening) is not None


def _teammate(records: list[dict[str, Any]]) -> str | None:
    """The agent an agent team's teammate's session (2.1.x, a session of its own the lead spawned) is: the
    ``agentName`` of its first record naming a ``teamName``; None for the lead's (named no agent, or ``team-lead``)
    and a session of no team."""
    named = next((r for r in records if r.get("teamName")), None)
    agent = as_str(named.get("agentName")) if named is not None else None
    return agent if agent and agent != _TEAM_LEAD else None


def _output_trial(path: Path) -> Path | None:
    """The Harbor trial whose headless output ``path`` is (its ``agent/claude-code.txt``), else None."""
    return harbor_trial(path) if path.name == "claude-code.txt" and path.parent.name == "agent" else None


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): an empty file of the names Claude Code gives a subagent's
    transcript and metadata (``agent-<id>.jsonl``, ``agent-<id>.meta.json``: 2.1.x creates them for a workflow's
    agents, and leaves them empty when the agent never ran) or a workflow's journal, and a file of no format holding
    only ``[]`` (see ``_empty_array``); the HTML pages claude-code-transcripts renders a session as; a Harbor trial's
    headless output beside the session transcript Harbor kept and did not convert (that is the trial's run), and the
    CLI's debug log Harbor copies with the sessions (``agent/sessions/debug/<session id>.txt``)."""
    if fmt == NAME and (trial := _output_trial(path)) is not None \
            and (transcript := _harbor_transcript(trial, path)) is not None:
        return (f"Claude Code's headless output in Harbor trial {trial_label(trial)}, which kept the session's "
                f"transcript: the trial's run is {transcript}")
    if fmt is None and path.parent.name == "debug" and path.parent.parent.name == "sessions" \
            and (trial := harbor_trial(path)) is not None:
        return f"Claude Code's debug log in Harbor trial {trial_label(trial)} (its agent/sessions/debug/), not a run"
    if fmt is None and (what := _empty_array(path)):
        return what
    if fmt is None and _TRANSCRIPT_PAGE.fullmatch(path.name) and (path.parent / "index.html").is_file() \
            and (path.parent / "page-001.html").is_file():
        return f"a page claude-code-transcripts rendered of a session ({path.name}), not a run"
    if fmt is not None or not (_SUBAGENT_FILE.fullmatch(path.name) or (
            path.name == "journal.jsonl" and path.parent.name.startswith("wf_"))):
        return None
    try:
        empty = path.stat().st_size == 0
    except OSError:
        return None
    return f"an empty Claude Code {'workflow journal' if path.name == 'journal.jsonl' else 'subagent file'} " \
           "(the agent wrote nothing), not a run" if empty else None


def _empty_array(path: Path) -> str | None:
    """Why a small file of no known format holds no run when it is an empty JSON array: most of a ``~/.claude/todos/``
    folder is ``[]`` (the todo list of a session that has none; detection sees no first record in it, so
    ``side_file`` is never asked). Any such file is passed over, and called a todo list only where Claude Code keeps
    them, since another producer's empty output looks the same; a file detected as a known format (by its name)
    keeps that format's own reading."""
    try:
        if path.stat().st_size > _EMPTY_ARRAY_BYTES or loads(path.read_bytes().decode("utf-8-sig")) != []:
            return None
    except (OSError, ValueError):
        return None
    if path.parent.name == "todos" and _TODO_FILE.fullmatch(path.name):
        return "an empty JSON array (Claude Code's todo list of a session, with no item)"
    return "an empty JSON array"


def side_document(document: Any) -> str | None:
    """The adapter hook for a whole small file (see ``detect``): a session file the CLI wrote with no run in it
    (see ``_no_run``)."""
    try:
        return _no_run(_records(document))
    except RecordError:
        return None


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The file's one run, or none when it holds none (a file of that kind too big for detection to have looked
    at whole, see ``side_document``: listed with 0 runs, as a small one is passed over, never a rejection).
    Headless stream-json that a ``/clear`` reset (``conversation_reset``, 2.1.332) holds a run per conversation:
    the CLI discards the conversation and goes on in a new session (a new transcript file), whose model never saw
    the one before; each conversation that asks something (not a ``/clear`` alone) is a run, the first
    conversation at ``file``, a later one at ``conversation <n>``; when none asks, the whole file is refused once."""
    if side_document(document) is not None:
        return
    if not isinstance(document, list) or not any(_is_reset(r) for r in document):
        yield "file", document
        return
    parts: list[list[Any]] = [[]]
    for record in document:
        parts[-1].append(record)
        if _is_reset(record):  # the reset names the session it ends: the conversation before it
            parts.append([])
    asking = [n for n, part in enumerate(parts) if _asks(part)]
    if not asking:
        yield "file", document
    for n in asking:
        yield ("file" if n == 0 else f"conversation {n + 1}"), parts[n]


def _asks(part: list[Any]) -> bool:
    """Whether a conversation of a stream ``split`` cuts asks something: not one of a ``/clear`` alone (the stream's
    opening one, as an SDK host that clears between its conversations writes, or one that ends it)."""
    records = [r for r in part if isinstance(r, dict)]
    return any(r.get("type") in ("user", "assistant") for r in records) and _no_run(records) is None


def _is_reset(record: Any) -> bool:
    """A headless stream-json ``conversation_reset`` record of a ``/clear`` (``trigger: "clear"``, or none: older
    emitters name none): the user's conversation is discarded and the CLI's next turn opens a new session, on a new
    task. Its other triggers (2.1.332's schema: ``plan_mode_exit``, ``fresh_session`` implementing an approved plan,
    ``onboarding``) go on with the task the user set, in a shape no real file shows yet: they split nothing."""
    return isinstance(record, dict) and record.get("type") == "conversation_reset" and "new_conversation_id" in record \
        and record.get("trigger", "clear") == "clear"


def _no_run(records: list[dict[str, Any]]) -> str | None:
    """Why a session file holds no run, else None: summaries (1.x and 2.0 wrote a project's into files of their
    own) or other bookkeeping only, or local commands only (``/clear``, ``/exit``: no prompt, no model reply)."""
    talk = [r for r in records if as_str(r.get("type")) in CONVERSATION]
    if not talk:
        if any(r.get("type") == "summary" for r in records):
            return "a Claude Code file of summaries of sessions only (no conversation), not a run"
        kinds = sorted({r["type"] for r in records if isinstance(r.get("type"), str)})
        return f"no conversation in this Claude Code session file (only {', '.join(kinds) or 'untyped'} records)"
    if _warmup_reply(talk):
        return (f"a Claude Code subagent's warm-up in session {talk[0].get('sessionId')} (its reply to the CLI's own "
                "\"Warmup\" prompt, which 2.0.x `claude -p` did not write down; no user asked anything), not a run")
    warmup = _warmup(talk)
    if len(warmup) == len(talk):
        return (f"a Claude Code subagent's warm-up in session {talk[0].get('sessionId')} (the CLI's own \"Warmup\" "
                "prompt at startup; no user asked anything), not a run")
    talk = [r for r in talk if not any(r is w for w in warmup)]
    if any(r.get("type") == "assistant" or _api_error_text(r) for r in talk):
        return None
    said = [_classify(_record_text(r)) for r in talk]
    commands = [body if kind == "command" else f"/{unknown.group(1)}" for kind, body in said
                if kind == "command" or (unknown := _UNKNOWN_SKILL.fullmatch(body))]
    if not commands or any(kind in ("prompt", "compact") for kind, _ in said):
        return None
    besides = " but to the CLI's own \"Warmup\"" if warmup else ""
    return (f"a Claude Code session file of slash commands only ({', '.join(dict.fromkeys(commands))}: no "
            f"prompt sent, no model reply{besides}), not a run")


def _warmup(talk: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records of a subagent's warm-up in a session file (2.0.x-2.1.x: the CLI's own "Warmup" prompt at startup,
    a sidechain opening the file or following its summaries, and the reply), else none: the session that follows
    it, if any, is what the file holds. Alone in its file it is the warm-up whatever it calls (2.1.1: the CLI
    answers each call "Warmup" itself); before a session, only a reply without calls is told apart from it."""
    sidechain = [r for r in talk if r.get("isSidechain")]
    opening = sidechain[0] if sidechain else {}
    if opening.get("type") != "user" or opening.get("parentUuid") is not None \
            or as_dict(opening.get("message")).get("content") != "Warmup":
        return []
    if len(sidechain) == len(talk):
        return sidechain
    replies = sidechain[1:]
    return [] if _calls_a_tool(replies) or any(r.get("type") != "assistant" for r in replies) else sidechain


def _opens_with_reply(talk: list[dict[str, Any]]) -> bool:
    """Whether a subagent's file opens with the agent's reply, its prompt not written down (2.0.x `claude -p`
    wrote a subagent's transcript so: the prompt is only in the parent's Task call)."""
    first = next((r for r in talk if r.get("type") in ("user", "assistant")), None)
    return first is not None and first.get("type") == "assistant" and bool(first.get("isSidechain")) \
        and first.get("parentUuid") is None


def _warmup_reply(talk: list[dict[str, Any]]) -> bool:
    """A subagent's warm-up without its prompt (2.0.x `claude -p`): replies only, no prompt, no tool call."""
    return _opens_with_reply(talk) and all(r.get("type") == "assistant" and r.get("isSidechain") for r in talk) \
        and not _calls_a_tool(talk)


def _calls_a_tool(records: list[dict[str, Any]]) -> bool:
    """Whether any of these assistant records calls a tool."""
    return any(isinstance(p, dict) and p.get("type") == "tool_use"
               for r in records for p in as_list(as_dict(r.get("message")).get("content")))


def _record_text(record: dict[str, Any]) -> str:
    """The text of a user record, or of a ``system`` ``local_command`` record (2.0.x wrote local commands so)."""
    if record.get("type") == "system":
        return as_str(record.get("content")) or "" if record.get("subtype") == "local_command" else ""
    return parts_text(as_dict(record.get("message")).get("content"))


def _scheduled_prompt(record: dict[str, Any]) -> bool:
    """Whether a user record is the prompt a scheduled task fired (``CronCreate``; the CLI marks it ``isMeta``, as its
    own injections): 2.1.27x names the task (``scheduledTaskId``), 2.1.332 (measured) only ``wakeupSource:
    "schedule_wakeup"``. It is the prompt the task was set to send. A dynamic ``/loop``'s wakeup naming no task
    (``loop_wakeup``) repeats the ``/loop`` the user typed, or sends the CLI's own check instructions: the CLI's. So is
    the notice of tasks missed while the CLI was not running (``_MISSED_TASKS``), though marked as a fire."""
    fired = (isinstance(record.get("scheduledTaskId"), str) and bool(record["scheduledTaskId"])) \
        or record.get("wakeupSource") == "schedule_wakeup"
    return fired and not _MISSED_TASKS.match(_record_text(record)) and not _cli_loop_tick(_record_text(record))


def _cli_loop_tick(prompt: str) -> bool:
    """Whether a scheduled task's prompt is the CLI's, not a request: the sentinel a ``/loop`` with no prompt
    schedules (2.1.337: ``<<autonomous-loop>>``, ``<<loop.md>>`` and their ``-dynamic`` forms), or the instructions
    the CLI expands it to at fire time (headed ``# Autonomous loop tick`` or ``# /loop tick``)."""
    return bool(_LOOP_SENTINEL.match(prompt) or _LOOP_TICK.search(prompt))


def _loop_wakeup(record: dict[str, Any]) -> bool:
    """Whether a user record is a dynamic ``/loop``'s wakeup (``ScheduleWakeup``): the CLI's, never the user's request
    (:func:`_scheduled_prompt`). 2.1.337 (measured) writes the ``/loop`` it re-runs as a command record marked
    ``wakeupSource: "loop_wakeup"``, not ``isMeta`` (its expansion follows, ``isMeta``), and echoes it in stream-json
    marked ``wakeup_source``; 2.1.332's plain wakeup is ``isMeta``."""
    return record.get("wakeupSource") == "loop_wakeup" or record.get("wakeup_source") == "loop_wakeup"


def _withdrawn_prompts(records: list[dict[str, Any]]) -> frozenset[str]:
    """The uuids of the user's prompts the CLI withdrew (2.1.337, measured): a prompt the model's safeguards refused
    (no answer) is, once the user prompts again, replaced for the model by the CLI's stand-in ("A message from the
    user stood here. A safety check blocked it ..."), and the user told "Claude no longer sees the earlier message
    that was flagged": the model never saw it again, so it is no request of the run (its task was the prompt that
    came instead). A transcript names them in a ``blocked_prompts_withdrawn`` attachment (``prompts``); stream-json
    only shows the notice (``system`` ``informational``), after the refusals (``model_refusal_no_fallback``) naming
    each refused prompt (``refused_user_message_uuid``). The CLI (``LR``) withdraws only the prompts of the refused
    turns just before the notice: none whose turn got a reply (a call, an answer, a fallback model's), none before an
    answered turn."""
    withdrawn: set[str] = set()
    refused: set[str] = set()
    replied: set[str] = set()  # the prompts (echoed in stream-json) a reply answered
    prompt: str | None = None
    reply = False  # a reply since the last record, unless a refusal mark after it says it was refused
    for record in records:
        kind = record.get("type")
        if kind == "assistant":
            reply = reply or _replied(record)
            continue
        if _refusal_mark(record):  # stream-json's refused reply carries no ``stop_reason``: it was no answer
            reply = False
        if reply:
            replied.add(prompt or "")
            refused, reply = set(), False
        attachment = as_dict(record.get("attachment")) if kind == "attachment" else {}
        if attachment.get("type") == "blocked_prompts_withdrawn":
            withdrawn.update(u for u in as_list(attachment.get("prompts")) if isinstance(u, str))
        elif kind == "user" and record.get("isReplay") and isinstance(record.get("uuid"), str):
            prompt = record["uuid"]
        elif kind == "system" and record.get("subtype") == "model_refusal_no_fallback" \
                and isinstance(uuid := record.get("refused_user_message_uuid"), str) and uuid not in replied:
            refused.add(uuid)
        elif kind == "system" and record.get("subtype") == "informational" and "session_id" in record \
                and (as_str(record.get("content")) or "").startswith(_WITHDRAWN_NOTICE):
            withdrawn |= refused  # stream-json's notice (a transcript's, ``sessionId``, follows its attachment)
            refused = set()
    return frozenset(withdrawn)


def _replied(record: dict[str, Any]) -> bool:
    """Whether an assistant record is the model's reply: not the CLI's ``<synthetic>`` error nor a refused one."""
    message = as_dict(record.get("message"))
    return message.get("model") != "<synthetic>" and message.get("stop_reason") != "refusal"


def _is_task_fire(record: dict[str, Any]) -> bool:
    """A stream-json ``command_lifecycle`` record starting a turn a scheduled task fired (``schedule_wakeup``: a
    ``CronCreate`` task, or the CLI's notice of tasks missed, which comes before any call of this process)."""
    return record.get("type") == "command_lifecycle" and record.get("state") == "started" \
        and record.get("wakeup_source") == "schedule_wakeup"


def _scheduled_turns(records: list[dict[str, Any]]) -> int:
    """How many turns of headless stream-json a scheduler started (2.1.332: a ``command_lifecycle`` ``started``
    record with a ``wakeup_source``: ``schedule_wakeup``, a task's fire or the CLI's notice of tasks missed, or
    ``loop_wakeup``, a dynamic ``/loop``'s): stream-json never echoes a plain prompt such a turn answers, not even
    with ``--replay-user-messages`` (2.1.337 echoes a fired ``/`` command, marked ``wakeup_source``); only the
    transcript holds it (a task's, where the stream's ``CronCreate`` set one: :meth:`_Session.fired`). (A
    ``loop_wakeup`` prompt is the CLI's, never the task: :func:`_loop_wakeup`; here both count.)"""
    return sum(1 for r in records if r.get("type") == "command_lifecycle" and r.get("state") == "started"
               and isinstance(r.get("wakeup_source"), str))


def _stream_result(record: Any) -> bool:
    """The ``result`` record that ends headless output (``claude -p --output-format json`` / ``stream-json``): it
    has a ``subtype`` (``success``, ``error_max_turns``) and the ``session_id``; a transcript's record typed
    ``result`` otherwise (a simulator's tool result) is not one."""
    return isinstance(record, dict) and record.get("type") == "result" and isinstance(record.get("session_id"), str) \
        and "subtype" in record


def not_a_run(record: Any) -> str | None:
    """``claude -p --output-format json`` prints the final result only: the answer, not the steps."""
    if _stream_result(record):
        return ("this is the final result of a headless Claude Code run (`claude -p --output-format json`): the "
                "answer, not the steps; ingest the session transcript instead: "
                + _TRANSCRIPT.format(session=record["session_id"]))
    return None


def _in_sidechain(record: dict[str, Any]) -> bool:
    """Whether a record is a subagent's: ``isSidechain`` in a transcript; in headless stream-json, which has no such
    flag, a ``parent_tool_use_id`` naming the ``Task``/``Agent`` call the subagent works for."""
    return bool(record.get("isSidechain") or as_key(record.get("parent_tool_use_id")))


def _is_queued(record: dict[str, Any]) -> bool:
    """A message queued while the agent worked (2.1.x: an ``attachment`` of type ``queued_command``)."""
    return record.get("type") == "attachment" and as_dict(record.get("attachment")).get("type") == "queued_command"


def _is_hook_block(record: dict[str, Any]) -> bool:
    """A hook's refusal of a call's result (2.1.2xx+: an ``attachment`` of type ``hook_blocking_error`` naming the
    call by ``toolUseID``), which the CLI writes apart from the call's result (see ``_Session.hook_blocked``)."""
    attachment = as_dict(record.get("attachment")) if record.get("type") == "attachment" else {}
    return attachment.get("type") == "hook_blocking_error" and isinstance(attachment.get("toolUseID"), str)


def _with_consumed_queue(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records, each queued message the running turn took in followed by the ``queued_command`` attachment that
    other versions write for it: 2.1.5x-2.1.9x log a prompt typed while the agent worked (or a background task's
    report) only as ``enqueue`` with its ``content``, then ``remove`` when the turn takes it in. A file with
    attachments of its own is read from them (2.1.2xx: only they carry a message's ``origin``, and a peer's
    ``enqueue`` differs from its attachment by a ``hop-chain``); a message the file records otherwise (a user
    record after ``dequeue``), a slash command or what the CLI queued itself (``_queued_mode``) gets none.

    A background task's report still in the queue when the session ended (``claude -p`` ends its turn before the
    CLI delivers it: ``enqueue`` and nothing after) is read at the end all the same: the model never saw it, but the
    task ended as it says, and a command that failed in the background failed (its launching call's error)."""
    own = any(_is_queued(r) for r in records)
    recorded = {_said(_record_text(r)) for r in records if r.get("type") == "user"}
    pending: list[tuple[str, dict[str, Any]]] = []
    taken_in: dict[int, dict[str, Any]] = {}  # id of a ``remove`` record -> the attachment that follows it
    for record in _in_time_order([r for r in records if r.get("type") == "queue-operation"]):
        operation, content = record.get("operation"), parts_text(record.get("content"))
        if operation == _ENQUEUE:
            pending.append((content, record))
        elif operation == _POP_ALL:
            pending.clear()
        elif operation in (_DEQUEUE, _REMOVE) and pending:
            texts = [text for text, _ in pending]
            text, _ = pending.pop(texts.index(content) if content and content in texts else 0)  # else the first
            mode = _queued_mode(text)
            if operation == _REMOVE and mode and not own and _said(text) not in recorded:
                taken_in[id(record)] = _as_queued(record, text, mode)
    kept = [r for record in records for r in (record, taken_in.get(id(record))) if r is not None]
    kept.extend(_as_queued(record, text, _QUEUED_NOTIFICATION) for text, record in pending
                if _queued_mode(text) == _QUEUED_NOTIFICATION)
    return kept


def _in_time_order(operations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The queue's log in the order it happened: the CLI's writes race (2.1.40 wrote a prompt's ``dequeue`` after a
    background task's later ``enqueue``, and that ``dequeue`` took the report off the queue), so by ``timestamp``
    when every operation has one (ISO times of one writer), else as written."""
    times = [r.get("timestamp") for r in operations]
    if not all(isinstance(t, str) and t for t in times):
        return operations
    return [r for _, r in sorted(zip(times, operations), key=lambda pair: pair[0])]


def _as_queued(record: dict[str, Any], text: str, mode: str) -> dict[str, Any]:
    """A queue record's message as the ``queued_command`` attachment other versions write when it is taken in."""
    queued = {"type": "queued_command", "prompt": text, "commandMode": mode}
    return {**record, "type": "attachment", "attachment": queued}


def _queued_mode(text: str) -> str | None:
    """How a message in the queue's log is read when taken in, as its attachment would be: a background task's
    report (``<task-notification>``) or a prompt the user typed; None for what no user typed: a slash command,
    a subagent's report or a peer's message (``_QUEUED_BY_CLI``), a background task's registration (2.1.50, JSON
    ``{"task_id": ..., "task_type": ...}``), nothing but CLI context."""
    if text.lstrip().startswith("<task-notification>"):
        return _QUEUED_NOTIFICATION
    if _QUEUED_COMMAND.match(text) or _QUEUED_BY_CLI.match(text) or _task_registration(text):
        return None
    return _QUEUED_PROMPT if _classify(text)[0] == "prompt" else None


def _task_registration(text: str) -> bool:
    """Whether a queued text is the CLI's record of a background task it started (2.1.50), not a prompt."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        value = loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "task_id" in value and "task_type" in value


def _said(text: str) -> str:
    """A message's words with the CLI's context and spacing left out, to tell the same message written twice."""
    return " ".join(user_words(text).split())


def _queued_text(record: dict[str, Any]) -> str:
    """The text of a ``queued_command`` attachment: the prompt typed, or the report delivered."""
    return parts_text(as_dict(record.get("attachment")).get("prompt"))


def _session_of(record: dict[str, Any]) -> str | None:
    value = record.get("sessionId") or record.get("session_id")
    return str(value) if value else None


def _classify(text: str) -> tuple[str, str]:
    """(kind, text) of a user message's text: prompt, command, injected, interrupt, compact or empty."""
    body = user_words(text)
    if not body:
        return "empty", ""
    if CLAUDE_INTERRUPT.match(body):
        return "interrupt", body
    if _CONTINUATION.match(body):
        return "compact", body
    command = slash_command(body)
    if command:
        return "command", command
    if CLAUDE_INJECTED.match(body) or _UNKNOWN_SKILL.fullmatch(body):
        return "injected", body
    return "prompt", body


def _command_contents(text: str) -> str | None:
    """The prompt a slash command expanded to when Claude Code 1.0.x wrote it into the command's own record
    (``<command-contents>``, a content part as JSON), else None; found by position, as reminders are."""
    opening, closing = "<command-contents>", "</command-contents>"
    start, end = text.find(opening), text.rfind(closing)
    if start == -1 or end < start:
        return None
    contents = text[start + len(opening):end].strip()
    try:
        part = loads(contents)
    except ValueError:
        return contents or None
    return (parts_text(part) if isinstance(part, (dict, list)) else contents).strip() or None


def _result_text(part: dict[str, Any]) -> str:
    """A tool result's text; of web search results their titles and links; of ToolSearch (2.1.x) the names of the
    deferred tools it loaded (its result holds only ``tool_reference`` parts)."""
    content = part.get("content")
    if isinstance(content, list):
        parts = [c for c in content if isinstance(c, dict)]
        found = [f"{c.get('title') or ''} <{c['url']}>".strip() for c in parts if isinstance(c.get("url"), str)]
        loaded = [c["tool_name"] for c in parts
                  if c.get("type") == "tool_reference" and isinstance(c.get("tool_name"), str)]
        return parts_text([c for c in parts if c.get("type") != "tool_reference"]) or "\n".join(found) or \
            ", ".join(loaded)
    if content is None:
        return ""
    return content if isinstance(content, str) else str(content)


def _without_notices(text: str) -> str:
    """A tool's result without the CLI's own notice appended to it (Read's "Whenever you read a file, ...
    malware" in a ``<system-reminder>``; 1.0.x's bare "NOTE: do any of the files above seem malicious?" after
    LS's listing): the tool did not say it. A result that is a reminder only is the tool's answer (Read past the
    end of a file: "Warning: the file exists but is shorter than the provided offset ..."): its words are kept."""
    if "<system-reminder>" in text:
        kept = strip_reminders(text, keep_hooks=True)
        if not kept.strip():
            return text.replace("<system-reminder>", "").replace("</system-reminder>", "").strip()
        text = kept
    kept = text.rstrip()
    return kept.removesuffix(_LS_NOTICE).rstrip() if kept.endswith(_LS_NOTICE) else text


def _without_hand_back(text: str) -> str:
    """An Agent call's result without the frame Claude Code 2.1.3xx puts around the subagent's report (``_HAND_BACK``:
    the same ~500 characters for every subagent, telling the model the report carries no user authority), the report
    un-indented; the notes above it and the CLI's ``agentId`` / ``<usage>`` lines after it stay, as in the results of
    earlier versions, which have no frame. The frame is the CLI's only where every line before it is indented (its
    notes) or blank: a line at column zero is the CLI's own, so one further down is the report quoting it."""
    frame = _HAND_BACK.search(text)
    if frame is None or any(line.strip() and not line.startswith(_HAND_BACK_INDENT)
                            for line in text[:frame.start()].splitlines()):
        return text
    lines = text[frame.end():].split("\n")
    report = list(itertools.takewhile(lambda line: not line or line.startswith(_HAND_BACK_INDENT), lines))
    kept = [line.removeprefix(_HAND_BACK_INDENT) for line in report] + lines[len(report):]
    return "\n".join(part for part in (text[:frame.start()].strip(), "\n".join(kept).strip()) if part)


def result_error(part: dict[str, Any], text: str, record: dict[str, Any], command: str | None) -> str | None:
    """The error of a result: "interrupted by the user" whenever ``record``'s ``toolUseResult`` says the call was
    (an interrupted Bash call), whether or not the result is marked ``is_error``; else, of a result the CLI marked
    ``is_error`` (of a Bash call that ran ``command``), a call the CLI did not run ("not run: " and its message: a
    hook's or the user's denial, or a Bash call's ``<tool_use_error>``, its command refused before it ran; another
    tool's is that tool's answer: Read's "File does not exist."), a refusal's message without its
    ``<tool_use_error>`` tags and the input it quotes, a command's ``Exit code N`` with its decisive line (the head the CLI keeps of a long
    output); else None. Public because Claude Code's results read so wherever they are recorded: its own
    transcripts here, and its calls driven over ACP by an OpenHands ``ACPAgent`` (``_openhands_sdk.acp_result``,
    ``part`` ``{"is_error": True}``, no record)."""
    detail = record.get("toolUseResult")
    if isinstance(detail, dict) and detail.get("interrupted") is True:
        return INTERRUPTED
    if part.get("is_error") is not True:
        return None
    refused = _TOOL_USE_ERROR.search(text) is not None
    if refused:  # the CLI refused the call: its message, without the input it quotes
        text = _QUOTED_STRING.split(_TOOL_USE_ERROR.sub("", text), maxsplit=1)[0]
    text = _NOTE_TO_MODEL.sub("", text.rstrip()).strip()
    kind = _denial_kind(part, record)
    after_run = record.get("toolDenialAfterRun") is True
    if _DENIED_TEXT.match(text):
        return _denial(text, after_run, ended=kind == "interrupted")
    if kind == "interrupted" or (kind in _ENDED_KINDS and _ENDED_RUNNING.search(text)):
        return f"{NEVER_FINISHED}: {text.strip('[]')}"
    if kind and after_run:
        return f"{_REFUSED_AFTER_RUN}: {decisive_line(text) or 'refused by the CLI'}"
    if (refused and command is not None) or kind:
        return not_run(decisive_line(text) or "refused by the CLI")
    code = _EXIT_CODE.match(text)
    output = _EXIT_CODE.sub("", text, count=1).removeprefix("\n")
    if code and _head_only(output):  # its last line is where the cut fell, mid-line: no sign of what failed
        line = decisive_line(strip_terminal_codes(output), last_line=False)
        return f"{line} (exit code {code.group(1)})" if line else \
            f"exit code {code.group(1)} (the CLI kept only the start of the output)"
    if code:
        return exit_code_error(output, int(code.group(1)), command)
    return decisive_line(text) or "tool error"


def _denial(text: str, after_run: bool, ended: bool) -> str:
    """The error of a call the CLI's words (``_DENIED_TEXT``) say was refused: "not run: " and those words, with
    all the user typed with them ("... To tell you how to proceed, the user said:" and the lines after it, 2.1.9x)
    on one line; of a call the user stopped while it ran (``_STOPPED_RUNNING``), "interrupted by the user while it
    ran: " and the CLI's correction, as an interrupted Bash call reads, not "not run": it may have run; of one the
    CLI marks refused only once it had run (``after_run``: 2.1.3xx's ``toolDenialAfterRun``),
    :data:`_REFUSED_AFTER_RUN` and those words: it ran, and the record does not say the user stopped it; of one it
    marks ``interrupted`` (``ended``: "nobody knows whether it ran"), "tool call never finished: " and those words."""
    said = " ".join(line.strip() for line in text.splitlines() if line.strip())
    stopped = _STOPPED_RUNNING.search(text.partition("\n")[0])
    if stopped:
        return f"{INTERRUPTED} while it ran: {stopped.group(1).strip()}"
    if after_run:
        return f"{_REFUSED_AFTER_RUN}: {said}"
    return f"{NEVER_FINISHED}: {said}" if ended else not_run(said)


def _denial_kind(part: dict[str, Any], record: dict[str, Any]) -> str | None:
    """Why the CLI (2.1.3xx) says ``part``'s call did not run its tool, from a transcript's marks, else from
    stream-json's ``tool_result_meta`` entry for the call (built from the same marks): :data:`_NOT_STARTED` when it
    ended so (``toolCallEnded`` / ``call_ended``: the CLI closed it before it started; that wins, as in the CLI's own
    reader), else its ``toolDenialKind`` / ``non_execution_kind``: ``permission-rule`` (a PreToolUse hook or a rule
    refused it; its text, "PreToolUse:Bash hook error: ... Blocked by policy", is the hook's, any words at all),
    ``user-rejected`` (headless mode cannot ask for approval), ``interrupted`` ("nobody knows whether it ran") or
    ``cancelled`` (:data:`_ENDED_RUNNING` tells those that may have run). A transcript's ``toolDenialAfterRun`` says
    the refusal came once the tool had been entered (the caller reads it so)."""
    meta = record.get("tool_result_meta")
    entries = [e for e in meta if isinstance(e, dict) and e.get("id") == part.get("tool_use_id")] \
        if isinstance(meta, list) else []
    marks = [(record.get("toolDenialKind"), record.get("toolCallEnded")),
             *((entry.get("non_execution_kind"), entry.get("call_ended")) for entry in entries)]
    for kind, ended in marks:
        if ended == _NOT_STARTED:
            return _NOT_STARTED
        if isinstance(kind, str) and kind:
            return kind
    return None


def _head_only(output: str) -> bool:
    """Whether a failed command's output (its result without the ``Exit code N`` line) is what 2.1.3xx keeps of a
    longer one, the start only (``_HEAD_KEPT`` bytes of UTF-8): the text shown and the characters cut out of its
    middle come to the cap, not to what the command printed. The cut characters' bytes lie between what they would
    weigh at the shown head's and at the shown tail's bytes per character (a test runner's ``✓`` lines are 3 bytes
    each: 28,494 characters made the cap; an ASCII build log may turn into them midway), and the cap need only fall
    within 0.5% of that range (the result's last newline is stripped; a multi-byte character may straddle the cap).
    An output of about the cap's size read so loses nothing: its error is then an error line of its start."""
    cut = _MIDDLE_CUT.search(output)
    if cut is None:
        return False
    head, tail = output[:cut.start()], output[cut.end():]
    size = len((head + tail).encode("utf-8", "replace"))
    density = [len(part.encode("utf-8", "replace")) / len(part) for part in (head, tail) if part]
    low, high = (size + int(cut.group(1)) * d for d in (min(density, default=1), max(density, default=1)))
    slack = _HEAD_KEPT * 0.005
    return low - slack <= _HEAD_KEPT <= high + slack


#: The error of a step the model's response made when its provider's safety classifier stopped that response.
REFUSED_STEP = "refusal: the provider's safety classifier stopped this response"
#: What Claude Code (2.1.3xx) notes after a refused response it retries: "<model>'s safeguards stopped the response
#: above · continuing once with that noted" (a ``system`` ``informational`` record).
_REFUSAL_NOTICE = re.compile(r"\bsafeguards stopped the response above\b")


def _refusal_mark(record: dict[str, Any]) -> bool:
    """Whether a ``system`` record says the response before it was refused: Claude Code's notice that it retries
    (:data:`_REFUSAL_NOTICE`), or that it retried on a fallback model or had none (``model_refusal_fallback``,
    ``model_refusal_no_fallback``). A session file also ends a refused response with ``stop_reason: "refusal"``;
    headless stream-json, whose records carry ``stop_reason: null``, has only these marks, which both files hold
    alike, so a run reads the same steps from either."""
    subtype = record.get("subtype")
    return subtype in ("model_refusal_fallback", "model_refusal_no_fallback") or (
        subtype == "informational" and bool(_REFUSAL_NOTICE.search(as_str(record.get("content")) or "")))


def _team_request(body: str) -> str | None:
    """What a ``<teammate-message>`` asks or says: its text, or of the team's JSON protocol a task assignment's
    subject and description; None for the rest of that protocol (an idle notice, a shutdown request or approval,
    a plan approval), which the CLI exchanges between the agents, no one's request."""
    try:
        sent = loads(body) if body.startswith("{") else None
    except ValueError:
        sent = None
    if not isinstance(sent, dict) or not isinstance(sent.get("type"), str):
        return body or None
    if sent["type"] != "task_assignment":
        return None
    # an assignment of no text subject or description (not the CLI's) is still the lead's request: its JSON as sent
    return "\n\n".join(t for t in (as_str(sent.get("subject")), as_str(sent.get("description"))) if t) or body


def _refused(message: dict[str, Any]) -> str:
    """What a response the model's provider stopped says (the Messages API's ``stop_reason: "refusal"``: a safety
    classifier withheld the rest of it and any call in it; 2.1.3xx records the ``stop_details`` category)."""
    category = as_str(as_dict(message.get("stop_details")).get("category"))
    return f"refusal: {category}" if category else "refusal"


def _api_error_text(record: dict[str, Any]) -> str | None:
    """The error of a synthetic API-error assistant record or a ``system`` error record, else None."""
    if record.get("type") == "assistant":
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        text = parts_text(message.get("content")).strip()
        synthetic = message.get("model") == "<synthetic>"
        if record.get("isApiErrorMessage") is True or (synthetic and (
                record.get("error") or record.get("apiErrorStatus") or _API_ERROR_TEXT.match(text))):
            kind = record.get("error") if isinstance(record.get("error"), str) else None
            status = record.get("apiErrorStatus")
            refused = _refused(message) if message.get("stop_reason") == "refusal" else None
            tags = ", ".join(t for t in (kind, f"HTTP {status}" if status else None, refused) if t)
            text = text or "API error"
            return short(f"{text} ({tags})" if tags else text, 500, keep="head")
        return None
    if record.get("type") == "system" and record.get("subtype") in ("api_error", "error"):
        error = record.get("error")
        if isinstance(error, dict):
            inner = error.get("error") if isinstance(error.get("error"), dict) else {}
            nested = inner.get("error") if isinstance(inner.get("error"), dict) else {}
            text = error.get("message") or error.get("formatted") or nested.get("message") or nested.get("type") \
                or error.get("type") or "API error"
            status = error.get("status")
            return short(f"{text}{f' (HTTP {status})' if status else ''}", 500, keep="head")
        return short(str(error or record.get("content") or "API error"), 500, keep="head")
    return None


#: How detailed a background task's report of its failure is (``_Session._task_failed``): the notification's
#: one-line summary, a poll's exit code and output (or an agent's error).
_NOTIFIED, _POLLED = 0, 1


@dataclass
class _CronTask:
    """A task a stream-json session's ``CronCreate`` call scheduled: its prompt, whether it fires once, when it is
    first due (its result's ``nextFireAt``), its id, and whether it fired."""

    prompt: str
    one_shot: bool
    due: datetime | None
    job: str | None = None  # its id (the result's), which a ``CronDelete`` names
    fired: bool = False

    def could_fire(self, at: datetime | None) -> bool:
        """Whether this task could be the one firing ``at`` (unknown: it could): not a one-shot task that fired, not
        before it was due (less the CLI's early jitter, :data:`_CRON_EARLY`)."""
        return not (self.one_shot and self.fired) and (at is None or self.due is None or at >= self.due - _CRON_EARLY)


#: How much earlier than its ``nextFireAt`` a task may fire: Claude Code's scheduler fires a one-shot task due at :00
#: or :30 up to 90 s early (its jitter; a recurring task's is a delay).
_CRON_EARLY = timedelta(seconds=90)


class _FiredPrompt(str):
    """A prompt a stream-json turn answered that the stream did not echo, taken from the ``CronCreate`` call that
    scheduled it (:meth:`_Session.fired`): a follow-up, never the task (the turn that set the task came before it;
    where no prompt of it is echoed, the stream records none)."""


class _Session:
    """Walks one session's records in order, building steps as the conversation goes."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.by_call: dict[str, dict[str, Any]] = {}
        self.background: dict[str, dict[str, Any]] = {}  # background task id -> the call that launched it
        #: background task id -> the step carrying its failure, that error and how detailed its report is
        self.failed_tasks: dict[str, tuple[dict[str, Any], str, int]] = {}
        self.pending_thought: list[str] = []
        self.prompts: list[str] = []
        self.fallbacks: dict[str, str] = {}
        self.command: str | None = None  # a slash command whose expansion may follow
        self.refusals = RefusedCommands()  # the commands refused on stderr, requests unless retyped
        self.models: list[str] = []
        self.last_error: str | None = None
        self.api_errors = 0
        self.interrupted = False
        self.orphan_results = 0
        self.peer_messages: list[str] = []  # other sessions' messages (see ``from_another_agent``)
        self.last_response: list[dict[str, Any]] = []  # the steps the latest model response made
        self.cron_tasks: list[_CronTask] = []  # the tasks the session's ``CronCreate`` calls scheduled
        self.withdrawn: frozenset[str] = frozenset()  # the uuids of the prompts the CLI withdrew
        self.withdrawn_prompts: list[str] = []  # their words
        self.fire_unechoed = False  # stream-json: a scheduled task fired a turn whose prompt is not echoed yet
        self.fire_time: datetime | None = None  # when (2.1.337's ``command_lifecycle`` ``written_at``)

    def refused(self) -> None:
        """The latest response was refused (:func:`_refusal_mark`): its last step's error, unless it has one (a
        withheld call's result, "Not run: ... stopped by a safety classifier", says more)."""
        if self.last_response and not self.last_response[-1].get("error"):
            self.last_response[-1]["error"] = REFUSED_STEP

    # -- assistant -------------------------------------------------------------------
    def response(self, message: dict[str, Any], parts: list[dict[str, Any]], at: Any) -> None:
        model = message.get("model")
        if isinstance(model, str) and model and model != "<synthetic>" and model not in self.models:
            self.models.append(model)
        narration: list[str] = []
        for part in parts:
            kind = as_str(part.get("type"))
            if kind == "thinking" and isinstance(part.get("thinking"), str):
                self.pending_thought.append(part["thinking"])
            elif kind == "text" and isinstance(part.get("text"), str) and part["text"].strip():
                narration.append(part["text"])
            elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                step = {
                    "thought": join_thought(self.pending_thought + narration),
                    "action": str(part.get("name") or UNNAMED_TOOL),
                    "arguments": part.get("input") if part.get("input") is not None else {},
                    "started_at": iso_time(at),
                }
                self.pending_thought, narration = [], []
                self.steps.append(step)
                if as_key(part.get("id")) is not None:
                    self.by_call[str(part["id"])] = step
            elif isinstance(kind, str) and kind.endswith("_tool_result") and part.get("tool_use_id"):
                step = self.by_call.get(str(part["tool_use_id"]))
                if step is not None and step.get("observation") is None:
                    step["observation"] = strip_terminal_codes(_result_text(part)) or None
                    result = as_dict(part.get("content"))
                    if str(result.get("type", "")).endswith("_error"):  # e.g. web_search_tool_result_error
                        step["error"] = str(result.get("error_code") or "tool error")
        if narration:
            self.steps.append({
                "thought": join_thought(self.pending_thought),
                "action": "respond",
                "arguments": {"content": "\n\n".join(narration)},
                "started_at": iso_time(at),
            })
            self.pending_thought = []

    # -- user ------------------------------------------------------------------------
    def user(self, record: dict[str, Any]) -> None:
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        content = message.get("content")
        at = record.get("timestamp")
        texts: list[str] = []
        if isinstance(content, list):
            for part in content:
                if not isinstance(part, dict):
                    continue
                if part.get("type") == "tool_result":
                    self.tool_result(part, record, at)
                elif part.get("type") == "text" and isinstance(part.get("text"), str):
                    texts.append(part["text"])
        elif isinstance(content, str):
            texts.append(content)
        if not texts:
            return
        self.last_response = []  # a refusal mark after this is of a later response (2.1.337's writes no content)
        text = "\n".join(texts)
        if self.from_another_agent(record, text):
            return
        if record.get("isCompactSummary"):
            self.fallbacks.setdefault("compact", strip_reminders(text))
            return
        if as_str(record.get("uuid")) in self.withdrawn:  # refused by the safeguards, then withdrawn: asks nothing
            self.withdrawn_prompts.append(strip_reminders(text))
            return
        if record.get("wakeup_source") is not None:
            self.fire_unechoed = False  # stream-json's echo of what a scheduler fired: nothing to recover
        if record.get("wakeup_source") == "schedule_wakeup":
            self.fired_echo(text)
            return
        if _loop_wakeup(record):
            self.command = None  # the CLI re-running the user's ``/loop``: its expansion asks nothing new
            if not record.get("isMeta"):  # the ``/loop`` re-run (not its expansion), the user's words: a task,
                self.fallbacks.setdefault("loop_wakeup", _classify(text)[1])  # with none
            return
        kind, body = _classify(text)
        if _STOP_HOOK.match(body) and self.steps:  # a Stop hook refused to let the turn end: what it told the agent
            last = self.steps[-1]
            last["observation"] = "\n".join(t for t in (last.get("observation"), body) if t)
            return
        if kind == "prompt" and (record.get("isMeta") or record.get("isVisibleInTranscriptOnly")
                                 or record.get("isSynthetic")) \
                and record.get("promptSource") != "sdk" and not _scheduled_prompt(record):
            # 2.1.2xx marks an Agent SDK caller's prompt isMeta too, and the prompt a scheduled task fires
            kind = "meta"  # injected by the CLI (a skill banner, a command's expanded body), not typed
        if kind in ("injected", "empty") and not slash_command(text):
            self.background_result(body)
            if (output := LOCAL_OUTPUT.match(body)) and self.command is not None:
                if output.group("stream") == "stderr":  # a prompt command whose pre-run failed: still asked
                    self.refusals.refuse(self.prompts, self.command)
                self.command = None  # a local command (/model, /clear): it expands to no prompt
            return  # caveats, command output, hook output: nothing the user asked
        if kind == "command":
            self.refusals.retype(self.prompts, body)
        command, self.command = self.command, None
        if command is not None and kind == "meta" and body:  # the body a prompt-type slash command expands to
            if loads_skill(command, body):
                return  # a skill the user loaded: the agent's instructions; the user's request comes next
            self.prompts.append(command_instruction(command, body))
            return
        if kind == "prompt":
            self.prompts.append(body)
        elif kind == "command" and (expanded := _command_contents(text)):  # 1.0.x: the body in the same record
            self.prompts.append(command_instruction(body, expanded))
        elif kind == "command":
            self.command = body
            self.fallbacks.setdefault("command", body)
        elif kind == "compact":
            self.fallbacks.setdefault("compact", body)
        elif kind == "interrupt" and (self.prompts or self.steps):  # one opening the session (plan mode's "clear
            self.interrupted = True  # context" handoff, anthropics/claude-code#29243) ends the planning session's turn

    def fired_echo(self, text: str) -> None:
        """Stream-json's echo of what a scheduled task fired (2.1.337: a ``/`` command, whose expansion is not echoed;
        VS Code's panel, ``wakeup_prompt``, a plain prompt too): the fire's prompt, a follow-up as a recovered one is
        (:class:`_FiredPrompt`), unless the CLI's own (:func:`_scheduled_prompt`)."""
        body = _classify(text)[1]
        if body and not _MISSED_TASKS.match(body) and not _cli_loop_tick(body):
            self.prompts.append(_FiredPrompt(body))

    def fired(self, at: Any) -> None:
        """The prompt of the scheduled task that fired this stream-json turn (``command_lifecycle`` ``started``,
        ``wakeup_source: "schedule_wakeup"``, at :attr:`fire_time`, else ``at``, its first response's), which
        stream-json does not echo for a plain prompt (only the transcript holds it): the prompt of the stream's
        ``CronCreate`` tasks that could have fired then, where they are one, as the transcript reads the fire, a
        follow-up, never the task (:class:`_FiredPrompt`). With none, or several (which fired is not said), the turn
        answers no prompt the output records. A task the stream does not show (a durable one of an earlier launch,
        one a resumed session carried) can fire too: a fire before the stream's task was due, or after that one-shot
        task fired, is not credited to it; one after, is."""
        self.fire_unechoed = False
        when = self.fire_time or iso_time(at)
        could = [t for t in self.cron_tasks if t.could_fire(when)]
        if len({t.prompt for t in could}) == 1:
            self.prompts.append(_FiredPrompt(could[0].prompt))
            for task in could:
                task.fired = True

    def from_another_agent(self, record: dict[str, Any], text: str) -> bool:
        """Whether a message came from another agent (2.1.2xx ``origin``), and keep it as what it is: the
        coordinator's follow-up to a running subagent is that subagent's next request (as its task was the
        coordinator's prompt); another session's message (``peer``) is no request of this run's user, kept apart
        (``peer_messages``). The CLI marks both ``isMeta``, as it does its own injections. So too in an agent team
        (``<teammate-message>``, no ``origin``): the lead's message is its teammate's request, a teammate's a peer's
        message (:func:`_team_request`)."""
        if record.get("teamName") and _TEAMMATE_MESSAGE.match(text) and (said := _TEAMMATE_SAID.findall(text)):
            lead: list[str] = []  # the lead's requests to this teammate, one prompt (its task, or its next request)
            for sender, body in said:
                if (request := _team_request(body)) is None:
                    continue
                if sender == _TEAM_LEAD:
                    lead.append(request)
                else:  # a teammate's report to the lead, or to another teammate
                    self.peer_messages.append(f"{sender}: {request}")
            if lead:
                self.prompts.append("\n\n".join(lead))
            return True
        origin = as_dict(record.get("origin"))
        if origin.get("kind") == "coordinator":
            said = _COORDINATOR_SAID.match(text)
            self.prompts.append(said.group(1) if said and said.group(1) else text)
            return True
        if origin.get("kind") == "peer":
            quoted = _CROSS_SESSION.search(text)
            body = as_str(origin.get("body")) or (quoted.group(1) if quoted else text)
            sender = as_str(origin.get("name")) or "another session"  # its ``from`` is a socket path, no sender
            self.peer_messages.append(f"{sender}: {body}")
            return True
        return False

    def queued(self, record: dict[str, Any]) -> None:
        """A message that arrived while the agent worked, which 2.1.x delivers as a ``queued_command`` attachment,
        not as a user record: a prompt the user typed then (or another agent's message: its ``origin`` says), read
        as a user record is, or a background task's report (``<task-notification>``), joined to its call."""
        queued = as_dict(record.get("attachment"))
        text = _queued_text(record)
        mode = queued.get("commandMode") or _QUEUED_PROMPT
        if mode == _QUEUED_NOTIFICATION:
            self.background_result(text)
        elif mode == _QUEUED_PROMPT and text:
            self.user({**record, "message": {"role": "user", "content": text}, "origin": queued.get("origin"),
                       "isMeta": queued.get("isMeta")})

    def hook_blocked(self, record: dict[str, Any]) -> None:
        """A hook that refused a call's result (a ``PostToolUse`` hook exiting 2: a linter, a type check, a test run
        on the file just edited; ``PostToolUseFailure`` on a failed call) told the agent why, in a reminder after the
        result: what the call got back, and its error when the call had none (the agent is to fix what the hook
        found). The words are the hook's, without the ``[command]: `` the CLI puts before them; a refusal the result
        already holds (``PreToolUse``: the call never ran, its result says why) adds nothing."""
        hook = as_dict(record.get("attachment"))
        step = self.by_call.get(hook["toolUseID"])
        blocked = hook.get("blockingError")
        detail = as_dict(blocked)
        said = as_str(detail.get("blockingError")) if isinstance(blocked, dict) else as_str(blocked)
        if step is None or not said or not said.strip():
            return
        command = as_str(detail.get("command"))
        said = said.strip().removeprefix(f"[{command}]:").strip() if command else said.strip()
        if said in (step.get("observation") or ""):
            return
        name = as_str(hook.get("hookName")) or as_str(hook.get("hookEvent")) or "hook"
        told = f"{name} hook blocking error: {said}"
        step["observation"] = "\n".join(t for t in (step.get("observation"), told) if t)
        step["error"] = step.get("error") or f"{name} hook: {decisive_line(said) or said}"

    def background_result(self, body: str) -> None:
        """A background task's report (``<task-notification>``: the call's own result only says it launched)
        joins that call's observation: an agent's findings, or how a background shell command ended (an
        error when it failed)."""
        for note in task_notifications(body):
            self.task_report(note)

    def task_report(self, note: dict[str, str]) -> None:
        """One background task's report (the fields of a ``<task-notification>``) joins the call that launched it."""
        step = self.by_call.get(note.get("tool-use-id", "")) or self.background.get(note.get("task-id", ""))
        if step is not None:
            error = step.get("error")
            add_report(step, note)
            if step.get("error") != error:
                reported, step["error"] = step["error"], error
                self._task_failed(note.get("task-id") or step.get("_task"), step, reported, _NOTIFIED)

    def _task_failed(self, task: str | None, step: dict[str, Any], error: str | None, detail: int) -> None:
        """``step`` reports background ``task``'s failure as ``error`` (``detail``: ``_NOTIFIED``, ``_POLLED``).
        A task polled until it ended and polled again, also reported by its notification, failed once, and one
        failure is one failed step (each copy would count again in failed steps, failure rows and the runtime's
        warnings): the error is on the most detailed report, the last poll (which reads all the output a finished
        task wrote: an earlier one may not hold its stderr yet), else the notification's summary, and leaves the
        step that had it. Left on the first of two like polls, the second (the same call, no error) made the
        failure read as one the run got past (``represent``), and a failed run had no decisive error."""
        if error is None:
            return
        held = self.failed_tasks.get(task) if task is not None else None
        if held is not None:
            if detail < held[2]:
                return  # the notification's summary after a poll's exit code and output: it keeps what it says
            if held[0].get("error") == held[1]:
                held[0]["error"] = None
        step["error"] = error
        if task is not None:
            self.failed_tasks[task] = (step, error, detail)

    @staticmethod
    def _polled(arguments: dict[str, Any]) -> str | None:
        """The id of the background task a poll (``POLL_TOOLS``: ``task_id``, ``bash_id``, ``shell_id``) names."""
        task = arguments.get("task_id") or arguments.get("bash_id") or arguments.get("shell_id")
        return task if isinstance(task, str) and task else None

    def _launched(self, task: str | None) -> str | None:
        """The command line of the background ``task`` (a poll's, :meth:`_polled`), when its launch was read."""
        launcher = self.background.get(task) if task else None
        return command_line(launcher["arguments"]) if launcher else None

    def _scheduled(self, step: dict[str, Any], result: dict[str, Any]) -> None:
        """Keep the task a successful ``CronCreate`` call scheduled, or drop the one a ``CronDelete`` cancelled (its
        result's ``id``): a cancelled task fires no more. ``recurring`` is the result's (the CLI's default is true,
        so a call that leaves it out schedules a recurring task), else the call's."""
        arguments = as_dict(step["arguments"])
        if step["action"] == "CronDelete":
            if isinstance(job := result.get("id") or arguments.get("id"), str):
                self.cron_tasks = [t for t in self.cron_tasks if t.job != job]
            return
        if step["action"] != "CronCreate" or not isinstance(prompt := arguments.get("prompt"), str) \
                or not prompt.strip() or _cli_loop_tick(prompt):
            return
        recurring = result.get("recurring")
        if not isinstance(recurring, bool):
            recurring = arguments.get("recurring", True) is not False
        due = result.get("nextFireAt")
        job = result.get("id")
        self.cron_tasks.append(_CronTask(prompt.strip(), not recurring,
                                         iso_time(due) if isinstance(due, (int, float)) else None,
                                         job if isinstance(job, str) else None))

    def tool_result(self, part: dict[str, Any], record: dict[str, Any], at: Any) -> None:
        step = self.by_call.get(str(part.get("tool_use_id")))
        if step is None:
            self.orphan_results += 1
            return
        if step.get("_done"):
            return  # the same result written twice
        text = _without_hand_back(_without_notices(strip_terminal_codes(_result_text(part))))
        text = _SCHEMA_ADVICE.sub("", text)
        cancelled = text.strip() == _SIBLING_ERRORED  # it never ran: the failure is its sibling's, not its own
        step["observation"] = _CANCELLED if cancelled else text or None
        step["error"] = None if cancelled else result_error(part, text, record, command_line(step["arguments"]))
        if step["error"] is None and step["action"] in POLL_TOOLS:  # a background task's end, read by polling it
            task = self._polled(as_dict(step["arguments"]))
            self._task_failed(task, step, poll_error(text, as_dict(record.get("toolUseResult")), self._launched(task)),
                              _POLLED)
        if task := background_task(text, as_dict(record.get("toolUseResult"))):  # its end is reported later
            self.background[task] = step  # (``background_result``)
            step["_task"] = task
        if step["error"] is None:
            self._scheduled(step, as_dict(record.get("toolUseResult") or record.get("tool_use_result")))
        step["ended_at"] = iso_time(at)
        step["_done"] = True
        self.last_error = None  # a tool ran: the session went on after any earlier API error


def _starts_mid_conversation(chain: list[dict[str, Any]]) -> bool:
    """Whether a session file opens mid-conversation (1.0.x could start a file so): its first message is the
    result of a call made before the file began. (A file that opens with the agent's reply may be an excerpt cut
    from a session: it is not taken for one.)"""
    first = next((r for r in chain if r.get("type") in ("user", "assistant")), None)
    if first is None or first.get("type") != "user":
        return False
    content = as_dict(first.get("message")).get("content")
    return isinstance(content, list) and bool(content) and all(
        isinstance(p, dict) and p.get("type") == "tool_result" for p in content)


def _first_words(steps: list[dict[str, Any]]) -> str:
    """What the agent first said in a run (a call's thought, its words to the user), else its first call."""
    for step in steps:
        said = step.get("thought") or (step["arguments"].get("content") if step["action"] == "respond" else None)
        if isinstance(said, str) and said.strip():
            return short(said, 500, keep="head")
    first = steps[0]
    return short(f"{first['action']} {json.dumps(first['arguments'], ensure_ascii=False, default=str)}", 500,
                 keep="head")


def _merged(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The conversation as units in order: an assistant response merged over its lines, or one record."""
    units: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    open_responses: dict[str, tuple[list[dict[str, Any]], set]] = {}
    for record in records:
        if record.get("type") != "assistant":
            units.append((record, []))
            continue
        message = record.get("message") if isinstance(record.get("message"), dict) else {}
        content = message.get("content")
        parts = [p for p in content if isinstance(p, dict)] if isinstance(content, list) else (
            [{"type": "text", "text": content}] if isinstance(content, str) else [])
        mid = as_key(message.get("id")) or as_key(record.get("uuid"))
        if mid and str(mid) in open_responses and not _api_error_text(record):
            kept, seen = open_responses[str(mid)]
        else:
            kept, seen = [], set()
            units.append((record, kept))
            if mid:
                open_responses[str(mid)] = (kept, seen)
        for part in parts:
            kind = part.get("type")
            if kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
                key = ("call", part.get("id") or repr(part.get("input")))
            elif kind == "text":
                key = ("text", part.get("text"))
            elif kind == "thinking":
                key = ("thinking", part.get("thinking"))
            else:
                key = (kind, part.get("tool_use_id") or part.get("id") or repr(part)[:200])
            key = tuple(k if isinstance(k, (str, int, type(None))) else repr(k)[:200] for k in key)
            if key not in seen:
                seen.add(key)
                kept.append(part)
    return units


def _side_question_start(records: list[dict[str, Any]]) -> int:
    """Where a /btw side question's own records begin in its file (0 for any other file): at the question, as the
    CLI copies the parent conversation so far in before it, which is the parent's run, not the side agent's."""
    if not str(next((r["agentId"] for r in records if r.get("agentId")), "")).startswith("aside_question"):
        return 0
    return next((i for i in range(len(records) - 1, -1, -1) if records[i].get("type") == "user"
                 and _record_text(records[i]).startswith(_SIDE_QUESTION)), 0)


def _abandoned(records: list[dict[str, Any]], sidechain: bool) -> set[str]:
    """The uuids of the records on branches the conversation left: a truncating resume (``--resume-session-at``, the
    Agent SDK's ``resumeSessionAt``) or a rewind writes its new turn under an earlier record (``parentUuid``), and
    the CLI loads a session as the chain of parents from its last message (crossing a compaction by the boundary's
    ``logicalParentUuid``), so what hangs off that chain elsewhere is no longer the conversation. A side branch is
    left only when it holds a model reply of its own: a parallel call's result hangs under the call's record
    (``sourceToolAssistantUUID``), and other lines of the same response share its ``message.id``, both still read.
    Records whose parents never reach the chain (a file starting mid-conversation, a sidechain) are kept."""
    by_uuid = {r["uuid"]: r for r in records if isinstance(r.get("uuid"), str)}
    talk = [r for r in records if isinstance(r.get("uuid"), str) and r.get("type") in ("user", "assistant")
            and _in_sidechain(r) == sidechain]
    if not talk:
        return set()
    chain: set[str] = set()
    at: dict[str, Any] | None = talk[-1]
    while at is not None and at["uuid"] not in chain:
        chain.add(at["uuid"])
        at = by_uuid.get(_parent(at) or "")
    replies = {as_key(as_dict(by_uuid[u].get("message")).get("id") or u) for u in chain}
    roots: dict[str, str | None] = {}  # a record off the chain -> the first record of its branch
    branches: dict[str, list[str]] = {}
    for uuid in by_uuid:
        if uuid not in chain and (root := _branch_root(uuid, by_uuid, chain, roots)) is not None:
            branches.setdefault(root, []).append(uuid)
    return {uuid for members in branches.values() if any(_new_reply(by_uuid[u], replies, sidechain) for u in members)
            for uuid in members}


def _new_reply(record: dict[str, Any], replies: set[Any], sidechain: bool) -> bool:
    """Whether a record is a model reply (not the CLI's synthetic one) of none of the chain's responses."""
    message = as_dict(record.get("message"))
    return record.get("type") == "assistant" and _in_sidechain(record) == sidechain \
        and message.get("model") != "<synthetic>" and not _api_error_text(record) \
        and as_key(message.get("id") or record.get("uuid")) not in replies


def _after_parents(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records in file order, but each after the record it follows (``_parent``): the CLI does not always write
    a session's lines in the order of its conversation (2.1.x, a background agent launched: the next response's
    lines came before the prompt, the launching call and its result), and loads it by the chain of parents, not by
    line. A record whose parent is not in the file (a file starting mid-conversation) stays where it is."""
    present = {r["uuid"] for r in records if isinstance(r.get("uuid"), str)}
    done: set[str] = set()
    waiting: dict[str, list[dict[str, Any]]] = {}
    ordered: list[dict[str, Any]] = []

    def place(record: dict[str, Any]) -> None:
        due = [record]
        while due:
            at = due.pop()
            ordered.append(at)
            if isinstance(uuid := at.get("uuid"), str) and uuid not in done:
                done.add(uuid)
                due.extend(reversed(waiting.pop(uuid, [])))

    for record in records:
        parent = _parent(record)
        if parent is not None and parent in present and parent not in done and parent != record.get("uuid"):
            waiting.setdefault(parent, []).append(record)
        else:
            place(record)
    if waiting:  # parents in a loop, which no CLI writes: kept, in file order
        position = {id(r): n for n, r in enumerate(records)}
        ordered.extend(sorted((r for left in waiting.values() for r in left), key=lambda r: position[id(r)]))
    return ordered


def _parent(record: dict[str, Any]) -> str | None:
    """The record a record follows in its conversation: its ``parentUuid``, or across a compaction (whose boundary
    has none) its ``logicalParentUuid``."""
    parent = record.get("parentUuid") or record.get("logicalParentUuid")
    return parent if isinstance(parent, str) else None


def _branch_root(uuid: str, by_uuid: dict[str, dict[str, Any]], chain: set[str],
                 roots: dict[str, str | None]) -> str | None:
    """The first record of the side branch ``uuid`` lies on (the child of the chain record it hangs from), None when
    its parents never reach the chain; ``roots`` keeps what earlier calls found."""
    path: list[str] = []
    at: str | None = uuid
    while at is not None and at not in roots and at not in chain and at in by_uuid and at not in path:
        path.append(at)
        at = _parent(by_uuid[at])
    if at is not None and at in chain:
        found = path[-1] if path else None
    else:
        found = roots.get(at) if at is not None else None
    for step in path:
        roots[step] = found
    return found


def _stream_notification(record: dict[str, Any]) -> dict[str, str]:
    """A headless stream-json ``task_notification`` record (``system``, 2.1.x: ``task_id``, ``tool_use_id``,
    ``status``, ``summary``) as the fields of the ``<task-notification>`` it stands for: stream-json writes a
    background task's end only so (the session file records the user message of that block the model is given), so
    a background command that failed read, from stream-json alone, as one that succeeded."""
    fields = {"task-id": "task_id", "tool-use-id": "tool_use_id", "status": "status", "summary": "summary"}
    return {name: value for name, key in fields.items() if isinstance(value := record.get(key), str)}


def _call_line(step: dict[str, Any]) -> str:
    """A call in a line, for metadata: its tool and command line, else its arguments."""
    said = command_line(step["arguments"]) or json.dumps(step["arguments"], ensure_ascii=False, default=str)
    return short(f"{step['action']}: {said}", 300, keep="head")


def _read(records: list[dict[str, Any]], withdrawn: frozenset[str] = frozenset()) -> _Session:
    """The session the conversation's records make, read in order; the user records ``withdrawn`` names are the
    prompts the CLI withdrew (:func:`_withdrawn_prompts`)."""
    session = _Session()
    session.withdrawn = withdrawn
    for unit, parts in _merged(records):
        kind = unit.get("type")
        if kind == "assistant":
            if session.fire_unechoed:  # the fired turn's first response, whatever it is: its prompt comes first
                session.fired(unit.get("timestamp"))
            error = _api_error_text(unit)
            message = unit.get("message") if isinstance(unit.get("message"), dict) else {}
            if error or message.get("model") == "<synthetic>":
                if error:
                    session.api_errors += 1
                    session.last_error = error
                continue
            session.last_error = None
            before = len(session.steps)
            session.response(message, parts, unit.get("timestamp"))
            session.last_response = session.steps[before:]
            if message.get("stop_reason") == "refusal":
                session.refused()
        elif kind == "user":
            session.user(unit)
        elif kind == "attachment" and _is_hook_block(unit):
            session.hook_blocked(unit)
        elif kind == "attachment":
            session.queued(unit)
        elif kind == "command_lifecycle":  # stream-json: a scheduled task's fire starts the next turn
            session.fire_unechoed, session.fire_time = True, iso_time(unit.get("written_at"))
        elif kind == "system":
            error = _api_error_text(unit)
            if error:
                session.api_errors += 1
                session.last_error = error
            elif _refusal_mark(unit):
                session.refused()
            elif unit.get("subtype") == "init":  # stream-json's next turn: its refusal notice precedes the echo
                session.last_response = []
            elif unit.get("subtype") == "task_notification":  # headless stream-json's report of a background task
                session.task_report(_stream_notification(unit))
    if session.pending_thought and session.steps:  # thinking the session ended on: no step follows to take it
        last = session.steps[-1]
        last["thought"] = join_thought([t for t in (last.get("thought"),) if t] + session.pending_thought)
        session.pending_thought = []
    return session


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    # a step of a multi-step Harbor trial that ``--continue``d the step before's session: its own turns only
    _, records, resumed = resumed_part(_records(record), ctx.source)
    copied = _side_question_start(records)
    records = records[copied:]
    seen: set[tuple] = set()
    unique = []
    for rec in records:
        uid = rec.get("uuid")
        if isinstance(uid, str) and uid:  # a record written twice (same uuid, same content) is read once
            key = (uid, str(rec.get("type")), str(rec.get("timestamp")),
                   json.dumps(rec.get("message"), sort_keys=True, default=str))
            if key in seen:
                continue
            seen.add(key)
        unique.append(rec)
    unique = _with_consumed_queue(_after_parents(unique))
    talk = [r for r in unique if as_str(r.get("type")) in CONVERSATION]
    has_main = any(not _in_sidechain(r) for r in talk if r.get("type") in ("user", "assistant"))
    subagent = not has_main and any(_in_sidechain(r) for r in talk)
    chain = [r for r in unique if (as_str(r.get("type")) in CONVERSATION or _is_queued(r) or _is_hook_block(r)
                                   or _is_task_fire(r)) and _in_sidechain(r) == subagent]
    sidechain_records = sum(1 for r in talk if _in_sidechain(r) != subagent)

    left = _abandoned(unique, subagent)  # a branch a truncating resume or a rewind left: not the conversation
    off_chain = [r for r in chain if as_str(r.get("uuid")) in left]
    chain = [r for r in chain if as_str(r.get("uuid")) not in left]
    abandoned, session = _read(off_chain), _read(chain, _withdrawn_prompts(unique))

    # a summary names the conversation it sums up by its last message (leafUuid): often another session's
    uuids = {r["uuid"] for r in unique if isinstance(r.get("uuid"), str)}
    summaries = [r["summary"] for r in unique if r.get("type") == "summary" and isinstance(r.get("summary"), str)
                 and isinstance(r.get("leafUuid"), str) and r["leafUuid"] in uuids]
    titles = [t for r in unique if r.get("type") in ("custom-title", "ai-title")
              and isinstance(t := r.get("customTitle") or r.get("aiTitle"), str)]

    # a prompt of no words ("."), which users type to open a session, asks nothing: the first that asks is the task
    # a fire's prompt recovered from the stream's CronCreate call answers a later turn: never the task, which the
    # stream did not echo when no other prompt is in it
    own = [n for n, p in enumerate(session.prompts) if not isinstance(p, _FiredPrompt)]
    asking = next((n for n in own if _WORDED.search(session.prompts[n])), own[0] if own else -1)
    task = session.prompts[asking] if own else None
    fallback = None if task else next((k for k in ("command", "compact", "loop_wakeup") if session.fallbacks.get(k)),
                                      None)
    task = task or (session.fallbacks[fallback] if fallback else None)
    headless = next((r for r in unique if r.get("type") == "system" and r.get("subtype") == "init"
                     or _stream_result(r)), None)
    worked = any(s["action"] != "respond" for s in session.steps)
    fires = _scheduled_turns(unique) if headless is not None else 0
    continued = not task and headless is None and _starts_mid_conversation(chain) and worked
    if continued:  # its calls are the run; what it was about, as best the file tells
        task = (summaries[-1] if summaries else None) or (titles[-1] if titles else None) or \
            _CONTINUED + _first_words(session.steps)
    unrecorded = not task and subagent and _opens_with_reply(chain) and worked
    if unrecorded:  # its calls are the run; its prompt is in the parent's Task call, not in this file
        task = _UNRECORDED_PROMPT + _first_words(session.steps)
    if headless is not None and isinstance(version := headless.get("qwen_code_version"), str):  # forced so
        raise RecordError(f"this is Qwen Code {version}'s headless output (shaped like Claude Code's): read it with "
                          "--format qwen-code")
    trial = _unconverted_trial(ctx.source) if headless is not None else None
    harbor_command = _harbor_command(trial) if not task and trial is not None else None
    if harbor_command is not None:  # Harbor kept no transcript to read instead: this output is the trial's run
        task = harbor_command[1]
    task_key = trial_task(ctx.source) if trial is not None else None
    harbor_prompt = not task and task_key is not None and worked
    if harbor_prompt:
        task = _HARBOR_PROMPT.format(task=task_key.get("task_id", "not named")) + _first_words(session.steps)
    if not task:
        if trial is not None:
            raise RecordError(
                "no user prompt: headless `claude -p --output-format stream-json` output does not record it, and "
                f"Harbor trial {trial_label(trial)} kept no transcript, no ATIF conversion and no `claude -p` command "
                "naming it; this output holds no work to name the run by either")
        if headless is not None and fires:
            raise RecordError(
                "no user prompt: a scheduled task (or a dynamic `/loop`'s wakeup) fired this headless `claude -p` "
                "session's turn (`command_lifecycle` `wakeup_source`), and stream-json never echoes the prompt a "
                "scheduler fires, not even with `--replay-user-messages`; ingest the session transcript instead: "
                + _TRANSCRIPT.format(session=headless.get("session_id") or "<session id>"))
        if headless is not None:  # stream-json echoes the prompt only with --replay-user-messages
            raise RecordError(
                "no user prompt: headless `claude -p --output-format stream-json` output does not record it (only "
                "`--input-format stream-json --replay-user-messages` echoes it); ingest the session transcript instead: "
                + _TRANSCRIPT.format(session=headless.get("session_id") or "<session id>"))
        raise RecordError("no user prompt in this Claude Code session (no user record with text)")
    followups = [p for n, p in enumerate(session.prompts) if n != asking]

    # the CLI names a session's file by its id; a resumed session's file may also hold copied lines of
    # the session it continued, so the name decides, then the last session id the records carry
    stem = ctx.source.name.split(".")[0]
    ids = [s for r in chain if (s := _session_of(r))] or [s for r in unique if (s := _session_of(r))]
    session_id = stem if _UUID.fullmatch(stem) and not subagent else (ids[-1] if ids else stem)
    agent_ids = [str(r["agentId"]) for r in chain if r.get("agentId")]
    agent_suffix = f"agent-{agent_ids[0]}" if subagent and agent_ids else ""
    run_id = f"claude-code.{session_id}"
    if headless is not None:  # the same session's transcript is the run claude-code.<session id>
        run_id += f".stream-{hashlib.sha1(task.encode()).hexdigest()[:10]}"
    if agent_suffix and not session_id.endswith(agent_suffix):
        run_id += f".{agent_suffix}"
    if subagent and not agent_ids:
        run_id += f".{ctx.source.name.split('.')[0]}"

    def first(key: str) -> Any:
        return next((r[key] for r in chain if r.get(key)), None)

    team_agent = _teammate(chain)

    # headless stream-json records carry no ``version``; its ``init`` record names the CLI's
    versions = [str(r["version"]) for r in unique if r.get("version")] or [
        str(v) for r in unique if r.get("type") == "system" and r.get("subtype") == "init"
        and (v := r.get("claude_code_version"))]
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": session_id,
        "cwd": first("cwd"),
        "git_branch": first("gitBranch"),
        "cli_version": versions[-1] if versions else None,
        "entrypoint": first("entrypoint"),
        "is_subagent": subagent or bool(team_agent) or None,
        "agent_id": agent_ids[0] if subagent and agent_ids else None,
        "agent_name": team_agent,
        "team_name": first("teamName") if team_agent else None,
        "summary": short(summaries[-1], 500, keep="head") if summaries else None,
        "title": titles[-1] if titles else None,
        "user_prompts": prompt_list(followups) or None,
        "peer_messages": prompt_list(session.peer_messages) or None,
        "sidechain_records": sidechain_records or None,
        "api_errors": session.api_errors or None,
        "interrupted": session.interrupted or None,
        "starts_mid_conversation": continued or None,
        "prompt_not_recorded": unrecorded or harbor_prompt or None,
        "task_from": harbor_command[0] if harbor_command is not None else
        fallback if fallback == "loop_wakeup" else None,  # the stream opened at the wakeup: no prompt of its own
        "copied_parent_records": copied or None,
        "resumed_from_step": resumed,
        "abandoned_records": len(off_chain) or None,
        "abandoned_prompts": prompt_list(abandoned.prompts) or None,
        "abandoned_calls": [_call_line(s) for s in abandoned.steps if s["action"] != "respond"] or None,
        "withdrawn_prompts": prompt_list(session.withdrawn_prompts) or None,
        "models": session.models if len(session.models) > 1 else None,
        "scheduled_turns": fires or None,
    }
    return session_trajectory(
        ctx, run_id=run_id, task=task, model_id=session.models[0] if session.models else None,
        tool_versions={"claude-code": versions[-1]} if versions else {},
        steps=session.steps, metadata=metadata, last_error=session.last_error,
        error_cause=API_ERROR_CAUSE,
        created_at=first_time(*(r.get("timestamp") for r in unique if r.get("timestamp"))),
        trial_run=trial is not None if headless is not None else _named_run(ctx.source, session_id),
    )


def _harbor_command(trial: Path) -> tuple[str, str] | None:
    """(where, the instruction) Harbor gave ``claude -p``, as the trial's ``agent/command-<n>/command.txt`` records the
    command it ran (its claude-code agent of early 2026: ``claude --verbose --output-format stream-json -p
    '<instruction>' ... | tee /logs/agent/claude-code.txt``, the instruction ``shlex.quote``d); None where no command
    holds it as written: later versions, and custom agents, pass it through a shell variable (``-p "$INSTRUCTION"``)
    or a redirection, whose value the file does not hold (the task then names the Harbor task instead)."""
    for path in sorted((trial / "agent").glob("command-*/command.txt")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            words = list(shlex.shlex(text, posix=True, punctuation_chars=True))  # operators split off as words
        except (OSError, ValueError):
            continue
        claude = next((i for i, w in enumerate(words) if w == "claude"), None)
        flag = next((i for i, w in enumerate(words) if claude is not None and i > claude and w in ("-p", "--print")),
                    None)
        prompt = words[flag + 1] if flag is not None and flag + 1 < len(words) else ""
        if not prompt.strip() or prompt.startswith("-") or _SHELL_OPERATOR.fullmatch(prompt):
            continue
        if _EXPANDED.search(prompt) and shlex.quote(prompt) not in text:  # not single-quoted: the shell expanded it
            continue
        return str(path.relative_to(trial)), prompt.strip()
    return None


#: A shell operator as ``shlex`` with ``punctuation_chars`` splits it off (``|``, ``>``, ``<``, ``&&``): a quoted
#: argument holding these characters (``'<task>...</task>'``) has others too.
_SHELL_OPERATOR = re.compile(r"[();<>|&]+")
#: What the shell expands in an argument that is not single-quoted (``$INSTRUCTION``, ``${X}``, ``$(cat f)``,
#: backticks).
_EXPANDED = re.compile(r"\$[\w{(]|`")


def _unconverted_trial(source: Path) -> Path | None:
    """The Harbor trial whose agent logs hold this headless output (Harbor's claude-code agent tees ``claude -p
    --output-format stream-json`` to ``agent/claude-code.txt``), when Harbor kept no ATIF conversion naming the task
    (``agent/trajectory.json``; one missing, broken or taskless is none, ``atif.trial_of_run``) and no transcript
    that is the run instead: the transcript of the session the output names, or, where it names none, any top-level
    transcript (:func:`_named_transcripts`). The trial's run is then this output, with the verdict in its
    ``result.json``: a trial has one run."""
    trial = trial_of_run(source)
    return trial if trial is not None and not _named_transcripts(trial, source) else None


def _named_run(source: Path, session: str) -> bool | None:
    """Whether the transcript of ``session`` is its Harbor trial's run (``session_trajectory``'s ``trial_run``): where
    the trial's ``claude-code.txt`` names a session, that session's transcript is (or, not kept, the output itself
    is: :func:`_unconverted_trial`), and no other; None where nothing names the run (no output, or one naming no
    session: plain text, empty, ``--output-format json``, more stderr before the ``init`` record than
    :func:`_output_session` reads), and the trial's only top-level session is its run."""
    trial = harbor_trial(source)
    named = _output_session(trial / "agent" / "claude-code.txt") if trial is not None else None
    return None if named is None else named == session


def _harbor_transcript(trial: Path, output: Path) -> Path | None:
    """The transcript that is the trial's run in place of its headless ``output``, when Harbor copied it (under
    ``agent/sessions/projects/``) and did not convert it to ATIF: the session's the output's ``init`` record names,
    or, where it names none, the trial's only top-level transcript (:func:`_named_transcripts`)."""
    found = _named_transcripts(trial, output)
    return found[0] if len(found) == 1 else None


def _named_transcripts(trial: Path, output: Path) -> list[Path]:
    """The transcripts Harbor kept in ``trial`` and did not convert to ATIF (a conversion naming the task is the
    trial's run instead) of the session its headless ``output`` names (``agent/sessions/projects/<project>/<session
    id>.jsonl``, not empty), or, where it names none, the trial's top-level transcripts (``atif.trial_sessions``: a
    subagent's ``agent-<id>.jsonl``, empty where the agent never ran, is no run of the trial's)."""
    if converted_run(trial / "agent" / "trajectory.json"):
        return []
    session = _output_session(output)
    if session is None:
        return trial_sessions(trial, NAME, ".jsonl")
    return [p for p in (trial / "agent" / "sessions" / "projects").glob(f"*/{session}.jsonl")
            if p.is_file() and p.stat().st_size]


def _output_session(output: Path) -> str | None:
    """The session id headless stream-json names in its ``init`` record (its first record; Harbor tees the CLI's
    stderr into the same file, ``2>&1 | tee``, so a line of it may come first), else None."""
    try:
        with output.open(encoding="utf-8", errors="replace") as f:
            lines = [f.readline(_INIT_BYTES) for _ in range(_INIT_SEARCH)]
    except OSError:
        return None
    for line in lines:
        try:
            record = loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("type") == "system" and record.get("subtype") == "init":
            session = as_str(record.get("session_id"))
            return session if session and _SESSION_ID.fullmatch(session) else None
    return None


#: How far :func:`_output_session` looks for the ``init`` record: lines, and bytes of each (2.1.337's init record
#: lists tools, slash commands, skills and plugins: 2-3 KB in the fixtures, more with many plugins).
_INIT_SEARCH, _INIT_BYTES = 5, 1 << 20
#: A session id as the CLI names a transcript by it (a UUID): nothing a glob would read as a pattern.
_SESSION_ID = re.compile(r"[\w-]+")
