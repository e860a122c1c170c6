"""``gemini-cli``: Gemini CLI chat recordings (``~/.gemini/tmp/<hash>/chats/session-*.json[l]``) and stream-json output.

The headless ``--output-format stream-json`` output (one ``gemini -p`` turn) is read by ``_gemini_stream``.

Source read: google-gemini/gemini-cli ``packages/core/src/services/chatRecordingService.ts``
and ``chatRecordingTypes.ts`` (``ConversationRecord``, ``MessageRecord``,
``ToolCallRecord``), ``scheduler/types.ts`` (tool call status values),
``utils/sessionUtils.ts`` (which user content is not a prompt) and
``utils/thoughtUtils.ts``; the real recording in Harbor's trajectory RFC.

Passed over (``side_file``): the prompt log (``logs.json``) and the restore
checkpoints of ``--checkpointing`` (``checkpoints/<time>-<file>-<tool>.json``:
``{"clientHistory", "toolCall", "commitHash", ...}``, a copy of the session so
far taken before each file-changing call), and (``side_document``) a recording with nothing asked: the CLI's
``<session_context>`` alone (any session started or resumed and left: each ``--resume`` leaves one), or with
shell-mode commands only (``!ls``: no prompt sent, no model reply), and (``side_path``) the CLI's own files in a
``.gemini`` folder (settings, credentials, the registry of projects, extensions' manifests). Refused saying where its run is
(``not_a_run``): ``gemini -p --output-format json``'s one result document (the answer and statistics, or
the error it ended on; no prompt, no steps; no session id before 0.21).

Three layouts, all read:
- a checkpoint (``/chat save <tag>``'s ``checkpoint-<tag>.json``, ``logger.ts``
  ``saveCheckpoint``): the chat history as Gemini ``Content[]``, a JSON list of
  ``{"role": "user"|"model", "parts": [...]}`` (newer versions: ``{"history":
  [...], "authType"}``); no session id, so the run is
  ``gemini-cli.checkpoint.<file stem>.<digest of the task>``;
- a JSON document (CLI versions up to late 2025): ``{"sessionId",
  "projectHash", "startTime", "lastUpdated", "messages": [...]}``;
- JSONL (newer): a metadata line ``{"sessionId", "projectHash", "startTime",
  ..., "kind"}``, then message records appended as they change (a message
  written again with the same ``id`` replaces the earlier copy in place),
  ``{"$set": {...}}`` metadata updates (a ``messages`` list there is the
  model's history written back: a resume's updates the recorded messages, and
  none removes one; a compression's -- a ``<state_snapshot>`` summary and
  copies of the latest messages under new ids -- adds nothing) and
  ``{"$rewindTo": id}`` (drops that
  message and everything after it), replayed here as the CLI's loader does. A
  resume writes the header again and the history back, stamped with its own time
  and without models: the session keeps its first start, and each message the
  time and model it was first recorded with.

Mapping
- task: the first ``user`` message whose text (its ``displayContent`` -- what
  the user typed -- when recorded, else ``content``) is a prompt: not empty, not a
  ``/`` or ``?`` command, not ``<session_context>``/``<hook_context>``
  injection or a ``<state_snapshot>`` (the CLI's summary of compressed history), nor what 0.44+ records of the
  text the CLI adds by itself (an IDE's "Here is the user's editor context ...", the workspace after ``/directory
  add``, leaving plan mode; a shell-mode command's report, ``!ls``: the user's command, but no request, as Claude
  Code's ``<bash-input>`` and Codex's ``<user_shell_command>`` are not),
  not a tool response, not the CLI's own "Please continue." nor its loop feedback ("System: Potential loop
  detected. ...", ``GeminiClient._recoverFromLoop``: its details go to ``metadata.loops_detected``); the editor's
  context Gemini Code Assist appends ("Current File Path:", "User Selected
  Files:" and what follows them) is cut off. A command typed with words after
  it that submitted a prompt (``/superpowers:brainstorming I want ...``, a
  custom command's ``{{args}}``) is a prompt as typed, ``/name words``, as Claude
  Code's are read. Later prompts go to ``metadata.user_prompts``. A session with no prompt takes its first command:
  the prompt it submitted where it submitted one (``/init``), else its text.
  The ``save_memory`` sub-agent's (0.36-0.39) one prompt is the memory, then the request: the request is the task,
  the memory's head ``metadata.initial_context`` (``_MEMORY_QUERY``). The background skill-extraction agent's
  (``chats/skill-extraction-<n>/``) is the skills and sessions listed, then its instruction: the instruction is the
  task, the listings' head ``metadata.initial_context`` (``_SKILL_QUERY``).
- steps: each ``gemini`` message's ``toolCalls`` entry is a step (action = ``name``, arguments = ``args``,
  observation = the ``functionResponse`` ``response.output`` of its first recorded ``result``, not as the CLI's
  history written back gives it, ``_as_run``, else ``resultDisplay``; without the ``<untrusted_context>`` fence
  0.6x puts around shell, MCP and web_fetch results, ``wrapUntrusted`` in ``utils/textUtils.ts``: the CLI's, not
  the tool's; an output the CLI masked in the history it keeps, ``<tool_output_masked>`` (a checkpoint, and a
  0.29-0.38 JSON recording, its result rewritten so), is said to be masked, with its file and preview: ``_unmasked``);
  ``functionCall`` parts in ``content`` (newer sessions) are steps too unless
  the same id is in ``toolCalls`` or it is the CLI's copy of the call just recorded there (a skill's slash
  command: ``Recording._copied``), and their ``functionResponse`` parts in a
  later ``user`` message are the observation (a call recorded with no id -- the
  CLI before 0.4x gave it one only in its response -- takes the first response of
  its name; a response whose call the history lost is a step of its own, action
  its ``name``, arguments unknown). ``thoughts``
  (``**subject** description``) and ``thought`` parts are the thought of the
  next step; message text followed by a tool call before the next prompt is
  narration joining that call's thought, otherwise a ``respond`` step
  ``{"content": text}``; the CLI's own "Got it. Thanks for the additional
  context!" after a compression is none.
- Step.error: status ``error`` or ``cancelled`` (the ``response.error``, else
  the display text), a ``response.error`` (of an MCP tool that answered
  ``isError``, the text it said, not the CLI's frame "MCP tool '...' reported tool
  error ... with response: [...]", ``tools/mcp-tool.ts``), a sub-agent that failed (its
  error) or ended short of its goal (a ``Termination Reason`` other than
  ``GOAL``), which the CLI records as ``success``, or a shell result (in ``toolCalls``
  or a ``functionResponse`` part alike) whose
  ``Exit Code:`` is not 0 (or whose ``Error:`` line is not ``(none)``), apart
  from exit code 1 with no output (``Output: (empty)``: grep's or findstr's "no
  match", see ``exit_code_error``), or a command the shell tool cancelled at its inactivity timeout
  (``tools.shell.inactivityTimeout``, recorded as ``success``).
- outcome: no verdict is recorded -> ``unknown``; a session whose last API
  error record (``[API Error: ...]``, quota, rate limit; 0.55+: the CLI's word for a
  reply it could not use, "The model returned an empty response ...", a safety block,
  a reply cut at the token limit, "Model stream ended with malformed function call.") has no
  model reply after it -> ``infra_error`` with that text, but a safety, recitation or policy block ("The model
  response was blocked due to ...") is the agent's ``failure``, as every CLI's refusal (``_agent_cli.MODEL_REFUSAL``;
  0.61's headless output records it, its chat recording does not). The CLI's other error records answer its
  own commands ("Please provide at least one path to add.") and decide nothing.
  Every error record's text is kept in ``metadata.error_records``, also those the
  session went on after. A session whose last loop feedback has no step after it ended
  on the CLI's loop guard (the model repeated itself again: the request was halted, with
  nothing recorded): ``metadata.ended_by`` says so; no verdict on the task all the same.
  A sub-agent's recording that does not end on ``complete_task`` (e.g. the user cancelled it: only its parent's call
  says so) has no verdict either: ``metadata.ended_by`` says it stopped before it (``_stopped``).
- trajectory_id = ``gemini-cli.<sessionId>.<startTime>`` (a recording's own start: the session id is
  shared by the recordings a session writes -- its subagents', a new one after ``/clear`` -- while a
  resume goes on writing the same file, its start kept); created_at = ``startTime``;
  model_id = the first ``gemini`` message's ``model``; metadata: project
  hash, kind (main/subagent; a subagent's is ``is_subagent``, with the
  ``parent_session_id`` its folder names when that is a session id: not the
  memory service's ``skill-extraction-<n>``), summary, directories, token total.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from pathlib import Path
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._agent_cli import (
    SessionSteps,
    as_int,
    as_key,
    as_records,
    as_str,
    exit_code_error,
    first_time,
    iso_time,
    prompt_list,
    session_trajectory,
    strip_terminal_codes,
    whole_file,
)
from . import _gemini_stream as headless
from ._common import Context, RecordError, as_dict, as_list, decisive_line, file_stem, loads, safe_id, short

NAME = "gemini-cli"
#: Where Gemini CLI keeps its chat recordings (``~/.gemini/tmp/<hash>/chats``): walked though hidden (see ``read``).
SESSION_FOLDERS = (".gemini/tmp",)
#: A file is one session: the reader hands over its whole document (or all its lines).
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"sessionId"\s*:\s*"[^"]+"\s*,\s*"projectHash"\s*:\s*"[0-9a-f]{16,}"')

#: Not the user's words: a command, the CLI's own context (``<session_context>``; before it had the tag, and in Qwen
#: Code 0.1.4's saved history, its opening line alone), a hook's, a compression's summary, and what 0.44+ records
#: of the text it adds to the history by itself (``GeminiChat.addHistory``): the IDE's editor context before a
#: prompt, in full or as changes (``getIdeContextParts``, ``core/client.ts``), the workspace after ``/directory add``
#: (``getDirectoryContextString``), leaving plan mode by hand (``getPlanModeExitMessage``).
_IGNORED_PROMPT = re.compile(r"^(?:/|\?|<session_context>|<hook_context>|<state_snapshot>|This is the (?:Gemini CLI|"
                             r"Qwen Code)\. We are setting up the context for our chat\.|Here is (?:the user's editor "
                             r"context as a JSON object|a summary of changes in the user's editor context, in JSON "
                             r"format)\. This is for your information only\.|- \*\*Workspace Directories:\*\*\n|"
                             r"User has manually exited Plan Mode\. Switching to )")
#: How 0.44+ records a command the user ran in shell mode (``!ls``; ``addShellCommandToGeminiHistory``,
#: ``useExecutionLifecycle.ts``): the command in a ``sh`` fence, its backslashes and backticks escaped, then its output.
_SHELL_MODE = re.compile(r"\AI ran the following shell command:\n```sh\n(.*?)\n```\n\nThis produced the following "
                         r"result:", re.S)
#: What the CLI sends by itself for the model to go on (``client.ts``: the next-speaker check, a retry after an
#: invalid stream), recorded as a user message that carries the previous request's ``displayContent``.
_CONTINUE = re.compile(r"^(System: )?Please continue\.$")
#: What Gemini Code Assist's agent mode (VS Code) appends to the user's words, to the end of the text: the file open
#: in the editor ("Current File Path:", the path in a code fence), the files attached ("User Selected Files:", a
#: path a line), then at times a " PRIOR CHAT HISTORY: ..." of its own. The same blocks with words after them are
#: the user's (a prompt quoting them).
_IDE_BLOCK = r"(?:Current File Path:\n```[^\n`]*\n[^\n]+\n```|User Selected Files:(?:\n- [^\n]+)+)"
_IDE_TRAILER = re.compile(rf"(?:^|\n)[ \t]*{_IDE_BLOCK}(?:\s*{_IDE_BLOCK})*\s*(?:PRIOR CHAT HISTORY:.*)?\Z", re.S)
#: The closing block of the shell tool's report, its keys in the order it writes them, each once: before 0.27 all
#: of them (``(none)`` when empty, the ``Error:`` line just before), since then only those with a value (``Exit
#: Code`` only when not 0, ``Error:`` only when the command could not run: the call then failed).
_TRAILER_KEYS = ("Exit Code", "Signal", "Background PIDs", "Process Group PGID")
_TRAILER = re.compile(rf"^({'|'.join(_TRAILER_KEYS)}):\s*(.*?)\s*$")
_SHELL_ERROR = re.compile(r"^Error:\s*(.+?)\s*$")
#: What the CLI puts before a shell report too long for the model (``truncateAndSaveToFile``: the file holding it
#: all, then the report's first and last lines, its closing block among them).
_TRUNCATED = re.compile(r"\ATool output was too large and has been truncated\..*?^Truncated part of the output:\n",
                        re.S | re.M)
#: What the CLI puts before a tool's output over ``truncateToolOutputThreshold`` (40,000 characters) since 0.26
#: (``formatTruncatedToolOutput``, ``utils/fileUtils.ts``), the counts in the user's locale ("8,000", "8.000"):
#: "Showing the last N of M lines" (" (some long lines truncated)" after it when a kept line was cut) and "...",
#: then those lines (0.26-0.28; the report's start cut, its closing block kept), or "Showing first X and last Y
#: characters", then the start, "... [N characters omitted] ..." and the end (0.29 on). A user's records:
#: "Output too large. Showing first 8,000 and last 32,000 characters. For full output see:
#: /root/.gemini/tmp/project/tool-outputs/session-<id>/run_shell_command_<id>.txt\nOutput: ...".
_COUNT = r"\d[\d.,'\u00a0\u202f ]*"
_TOO_LARGE = re.compile(rf"\AOutput too large\. Showing (?:the last {_COUNT} of {_COUNT} lines(?: \([^)\n]*\))?|first "
                        rf"{_COUNT} and last {_COUNT} characters)\. For full output see: [^\n]*\n(?:\.\.\.\n)?")
#: How gemini-cli 0.29+ masks an older tool output in the history it keeps (``ToolOutputMaskingService``, what a
#: ``/chat save`` checkpoint holds, and a 0.29-0.38 JSON recording, whose recorded result the CLI rewrote with the
#: masked one: ``ChatRecordingService.updateMessagesFromHistory``): the tag, a preview (for the shell tool its report's
#: sections, the output's first and last 10 lines, the closing block whole), the file it saved the output to, the
#: closing tag.
_MASKED = re.compile(r"\A<tool_output_masked>\n(.*?)\n\nOutput too large\. Full output available at: ([^\n]*)\n"
                     r"</tool_output_masked>\s*\Z", re.S)
#: The same tag around a note alone, no preview: the context pipeline's masking of a long string in a call's response
#: or arguments (``context/processors/toolMaskingProcessor.ts``, the same in every version: "[Tool <observation|intent>
#: string (<MB>MB, <N> lines) masked to preserve context window. Full string saved to: <path>]"). It masks what is
#: sent to the model, so no saved file is known to hold it: read defensively. Group 1 is the file.
_MASKED_NOTE = re.compile(r"\A<tool_output_masked>\n\[Tool \w+ string \([^)\n]*\) masked to preserve context window\. "
                          r"Full string saved to: ([^\n]*)\]\n</tool_output_masked>\s*\Z")
#: The closing block's keys only the shell tool writes: a report whose start was cut is one when they end it.
_SHELL_ONLY_KEYS = ("Background PIDs", "Process Group PGID")
#: What the shell tool tells the model (and shows) of a command it killed after ``tools.shell.inactivityTimeout``
#: seconds without output (0.20+, default 300; ``shell.ts``), the output so far after it; the call is ``success``.
_SHELL_TIMEOUT = re.compile(r"\ACommand was automatically cancelled because it exceeded the timeout of [\d.]+ "
                            r"minutes without output\.")
#: The shell tool's own report lines around a command's output (``Command:``, ``Exit Code:``, ...).
_SHELL_HEADER = re.compile(
    r"^(?:Command|Directory|Exit Code|Signal|Background PIDs|Process Group PGID):.*$|^Error: \(none\)$"
    r"|^Output: \(empty\)\s*$|^Output: ?",  # "(empty)": the tool's word for no output
    re.M,
)
#: The fence Gemini CLI 0.6x puts around what a shell, MCP or web_fetch call returns before the model sees it
#: (``wrapUntrusted``, ``utils/textUtils.ts``): ``<untrusted_context>\n<text>\n</untrusted_context>``, a closing tag
#: inside the text escaped; an MCP result of several blocks is one fence a block, joined by newlines.
_UNTRUSTED = re.compile(r"<untrusted_context>\n(.*?)\n</untrusted_context>", re.S)
_UNTRUSTED_CLOSE_ESCAPED = "&lt;/untrusted_context&gt;"
#: The CLI's message for an MCP tool that answered ``isError`` (``tools/mcp-tool.ts``): the call (0.3x on) and the
#: tool's whole response as JSON, whose ``content`` parts' text is what the tool said.
_MCP_ERROR = re.compile(r"\AMCP tool '[^'\n]*' reported tool error (?:for function call: .*? )?with response: ", re.S)
#: The feedback the CLI sends when it detects a loop (``GeminiClient._recoverFromLoop``, ``core/client.ts``): the
#: detector's detail, then its advice. A second loop after it halts the request with nothing recorded.
_LOOP_FEEDBACK = re.compile(r"\ASystem: Potential loop detected\. Details: (.*?)\. Please take a step back and "
                            r"confirm you're making forward progress\.", re.S)
#: The ``save_memory`` sub-agent's only prompt (0.36-0.39, ``agents/memory-manager-agent.ts``, gone in 0.40): its
#: query ``\n# Initial Context\n\n${memory}\n${request}``, the memory every GEMINI.md's block (``--- Context from:
#: <path> ---`` ... ``--- End of Context from: <path> ---``, ``utils/memoryDiscovery.ts``) with the MCP servers'
#: instructions (``---[start of server instructions]---`` ... ``---[end of server instructions]---``,
#: ``tools/mcp-client-manager.ts``) after them; what follows the last block's end is the request (the parent's call's
#: ``request``; blank, the memory stays the task). Group 1 is the memory.
_MEMORY_QUERY = re.compile(r"\A# Initial Context\n\n(.*(?:--- End of Context from: [^\n]* ---|---\[end of server "
                           r"instructions\]---))(?:\n|\Z)", re.S)
#: The background skill-extraction agent's only prompt (0.3x on, ``agents/skill-extraction-agent.ts``, run by
#: ``services/memoryService.ts``): the listings the memory service builds (``# Existing Skills``, ``# Pending Memory
#: Inbox``, ``# Session Index``: the sessions to read, a line each), then its instruction, "Analyze the session index
#: above. ...". Group 1 is the listings, group 2 the instruction: the task.
_SKILL_QUERY = re.compile(r"\A(# (?:Existing Skills|Pending Memory Inbox|Session Index)\n.*)\n\n"
                          r"(Analyze the session index above\..*)\Z", re.S)
#: An error record from the model API (``parseAndFormatApiError``: ``[API Error: ...]``, quota, rate limits), or
#: (0.55+, ``useGeminiStream.handleInvalidStreamEvent``) the CLI's word for a reply it could not use: empty, thoughts
#: only, cut at the token limit, blocked (``utils/constants.ts``), else the stream's own message ("Model stream ended
#: with malformed function call." / "... with unexpected tool call." / "... without a finish reason.",
#: ``InvalidStreamError`` in ``core/geminiChat.ts``, never empty); the CLI's other error records answer its own
#: commands (``/directory add`` with no path, a failed update).
_API_ERROR = re.compile(r"^\[API Error\b|\bquota\b|rate.?limit|RESOURCE_EXHAUSTED|^The model returned (?:an empty|"
                        r"reasoning thoughts but no final)|^Model response was truncated\b|^The model response was "
                        r"blocked\b|^Model stream ended\b", re.I)
FAILED = frozenset({"error", "cancelled"})
#: What a sub-agent call answers the model when the sub-agent threw (``agents/local-invocation.ts``), recorded with
#: status ``success`` on purpose, and when it ended (``Termination Reason:`` an ``AgentTerminateMode``).
_SUBAGENT_FAILED = re.compile(r"\ASubagent '[^'\n]*' failed\. Error: (.+)", re.S)
_SUBAGENT_ENDED = re.compile(r"\ASubagent '[^'\n]*' finished\.\nTermination Reason: (\w+)(?:\nResult:\n(.*))?", re.S)
#: The call a sub-agent of the CLI's own loop (``LocalAgentExecutor``, ``agents/local-executor.ts``) hands its result
#: in with (the only way it ends well: one that stops calling tools ends ``ERROR_NO_COMPLETE_TASK_CALL``); a recording
#: of one whose last step is anything else, or none, stopped before it (see ``_stopped``).
_SUBAGENT_DONE = "complete_task"
#: How many of a session's error records its metadata keeps (the first ones).
MAX_ERROR_RECORDS = 10


#: The parts of a Gemini ``Content`` (a checkpoint's entries); OTel GenAI's ``parts`` have a ``type``.
_PART_KEYS = frozenset({"text", "functionCall", "functionResponse", "thought", "thoughtSignature", "inlineData",
                        "fileData", "executableCode", "codeExecutionResult"})


#: The model turns the CLI writes itself after its context (``getInitialChatHistory``) and after a compression's
#: summary (``chatCompressionService``): in a saved history, no answer.
_ACKNOWLEDGEMENTS = frozenset({"Got it. Thanks for the context!", "Got it. Thanks for the additional context!"})


def _saved_chat(record: Any) -> list[Any] | None:
    """The history of a ``/chat save`` file of newer versions, ``{"history": Content[], "authType"}``, else None."""
    if isinstance(record, dict) and set(record) <= {"history", "authType"} and isinstance(record.get("history"), list) \
            and record["history"] and all(_is_content(entry) for entry in record["history"]):
        return record["history"]
    return None


def saved_history(document: Any) -> list[Any] | None:
    """The history of a ``/chat save`` checkpoint (``Content[]``, or newer ``{"history": Content[], "authType"}``),
    else None. Public: Qwen Code before 0.3 saved the same (``~/.qwen/tmp/<hash>/checkpoint-<tag>.json``,
    ``qwen_code``)."""
    history = _saved_chat(document) or document
    return history if isinstance(history, list) and history and all(_is_content(e) for e in history) else None


def _is_content(record: Any) -> bool:
    """One entry of a checkpoint's history: ``{"role": "user"|"model", "parts": [...]}``."""
    return isinstance(record, dict) and set(record) <= {"role", "parts"} and record.get("role") in ("user", "model") \
        and isinstance(record.get("parts"), list) and bool(record["parts"]) and all(
            isinstance(part, dict) and part.keys() & _PART_KEYS and "type" not in part for part in record["parts"])


#: An entry of the CLI's prompt log (``~/.gemini/tmp/<project>/logs.json``, ``logger.ts``): each prompt typed.
_PROMPT_LOG_ENTRY = frozenset({"sessionId", "messageId", "type", "message", "timestamp"})
#: The keys of a restore checkpoint (``checkpoints/<time>-<file>-<tool>.json``, ``--checkpointing``).
_RESTORE_CHECKPOINT = frozenset({"history", "clientHistory", "toolCall", "commitHash", "filePath", "messageId"})


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): the CLI's prompt log and its restore checkpoints hold no run
    of their own. A restore checkpoint is written before each file-changing tool call, for ``/restore``: the
    history so far (recorded in the session's ``chats/session-*.json``) and the call; read as runs, they would
    repeat the session once per call. (``/chat save``'s checkpoint, a history saved on its own, is a run.)"""
    if not isinstance(record, dict):
        return None
    if set(record) == _PROMPT_LOG_ENTRY and isinstance(record["message"], str):
        return ("Gemini CLI's log of the prompts typed in a project (logs.json; its sessions are the "
                "chats/session-*.json beside it), not a run")
    if {"clientHistory", "toolCall"} <= set(record) <= _RESTORE_CHECKPOINT and isinstance(record["toolCall"], dict):
        return (f"a Gemini CLI restore checkpoint taken before a {record['toolCall'].get('name') or 'tool'} call "
                "(checkpoints/*.json, for /restore: the session so far, recorded in its chats/session-*.json), "
                "not a run")
    return None


#: The CLI's own files in a ``.gemini`` folder, none a run, by their place under it (``*``: any one folder: an
#: extension's, a project's), read from google-gemini/gemini-cli: ``config/storage.ts`` (``Storage``: the settings, a
#: project's ``.gemini/settings.json`` too, the registry of projects, the installation id, the OAuth token files, the
#: key bindings, the acknowledged agents, the policy integrity), ``utils/paths.ts`` (the Google accounts),
#: ``services/fileKeychain.ts`` (the token store where no keychain is), ``config/trustedFolders.ts``,
#: ``hooks/trustedHooks.ts``, ``utils/persistentState.ts`` (the UI's state), ``config/mcp/mcpServerEnablement.ts``, the
#: extensions' integrity, enablement, manifests and install metadata (``config/extensions/``) and a project's
#: compression state (``context/contextCompressionService.ts``), and (round 33) the usage id of 0.1.x
#: (``utils/user_id.ts``), the custom commands, policies, skills and agents a user writes there, and what
#: ``Storage`` keeps under ``tmp``: the tools it downloads, a project's shell history, full tool outputs
#: (``utils/fileUtils.ts``), pasted images (``ui/utils/clipboardUtils.ts``), activity logs (``utils/activityLogger.ts``:
#: ``session-<id>.jsonl``, no chat), tracker tasks (``services/trackerService.ts``) and memory. A walk of ``~/.gemini``
#: met each as an unrecognised dump or named it as a file passed over.
_GEMINI_DIR = ".gemini"
_GEMINI_FILES = {
    "settings.json": "Gemini CLI's settings (.gemini/settings.json)",
    "projects.json": "Gemini CLI's registry of projects (~/.gemini/projects.json: each folder's short id)",
    "installation_id": "Gemini CLI's installation id (~/.gemini/installation_id)",
    "google_accounts.json": "Gemini CLI's Google accounts (~/.gemini/google_accounts.json)",
    "oauth_creds.json": "Gemini CLI's Google OAuth credentials (~/.gemini/oauth_creds.json)",
    "gemini-credentials.json": "Gemini CLI's encrypted token store (~/.gemini/gemini-credentials.json)",
    "mcp-oauth-tokens.json": "Gemini CLI's MCP servers' OAuth tokens (~/.gemini/mcp-oauth-tokens.json)",
    "a2a-oauth-tokens.json": "Gemini CLI's remote agents' OAuth tokens (~/.gemini/a2a-oauth-tokens.json)",
    "trustedFolders.json": "Gemini CLI's trusted folders (~/.gemini/trustedFolders.json)",
    "trusted_hooks.json": "Gemini CLI's trusted hooks (~/.gemini/trusted_hooks.json)",
    "state.json": "Gemini CLI's interface state (~/.gemini/state.json)",
    "keybindings.json": "Gemini CLI's key bindings (~/.gemini/keybindings.json)",
    "policy_integrity.json": "Gemini CLI's policy integrity hashes (~/.gemini/policy_integrity.json)",
    "extension_integrity.json": "Gemini CLI's extension integrity hashes (~/.gemini/extension_integrity.json)",
    "mcp-server-enablement.json": "Gemini CLI's MCP servers turned off (~/.gemini/mcp-server-enablement.json)",
    "acknowledgments/agents.json": "Gemini CLI's acknowledged agents (~/.gemini/acknowledgments/agents.json)",
    "extensions/extension-enablement.json": "Gemini CLI's extensions turned on where "
                                            "(~/.gemini/extensions/extension-enablement.json)",
    "extensions/*/**": "a file of an installed Gemini CLI extension (.gemini/extensions/<name>/, its folder copied "
                       "whole at install: its manifest, install source, package.json, code)",
    "tmp/*/compression_state.json": "Gemini CLI's context compression state of a project "
                                    "(~/.gemini/tmp/<project>/compression_state.json)",
    "user_id": "Gemini CLI's usage id (~/.gemini/user_id, 0.1.x)",
    "commands/**": "a Gemini CLI custom command (.gemini/commands/**.toml)",
    "policies/**": "a Gemini CLI policy file (.gemini/policies/*.toml)",
    "skills/**": "a file of a Gemini CLI skill (.gemini/skills/<name>/)",
    "agents/**": "a Gemini CLI agent definition (.gemini/agents/)",
    # ripgrep as the CLI once downloaded it, by name: a project folder named ``bin`` has its chats in tmp/bin/ now
    "tmp/bin/rg": "the ripgrep Gemini CLI downloaded (~/.gemini/tmp/bin/rg)",
    "tmp/bin/rg.exe": "the ripgrep Gemini CLI downloaded (~/.gemini/tmp/bin/rg.exe)",
    "tmp/*/shell_history": "Gemini CLI's shell-mode history of a project (~/.gemini/tmp/<project>/shell_history)",
    "tmp/*/tool-outputs/**": "a tool output Gemini CLI truncated, in full (~/.gemini/tmp/<project>/tool-outputs/)",
    "tmp/*/images/**": "an image pasted into Gemini CLI (~/.gemini/tmp/<project>/images/)",
    "tmp/*/logs/**": "Gemini CLI's activity log of a session (~/.gemini/tmp/<project>/logs/session-<id>.jsonl: "
                     "its network requests and console, not its chat)",
    "tmp/*/tracker/*": "a task of Gemini CLI's task tracker (~/.gemini/tmp/<project>/tracker/<id>.json)",
    "tmp/*/*/tracker/*": "a task of Gemini CLI's task tracker (~/.gemini/tmp/<project>/<session>/tracker/<id>.json)",
    "tmp/*/memory/**": "a file of Gemini CLI's project memory (~/.gemini/tmp/<project>/memory/)",
}


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): the CLI's own files in a ``.gemini`` folder (``_GEMINI_FILES``)
    are passed over by their place, as Qwen Code's in ``.qwen``; the same name elsewhere is no Gemini CLI file. Under
    ``--format gemini-cli`` too (``fmt`` forced): forcing the format says how to read the sessions, not that this
    file is one."""
    if fmt not in (None, NAME) or _GEMINI_DIR not in path.parts[:-1]:
        return None
    under = path.parts[len(path.parts) - path.parts[::-1].index(_GEMINI_DIR):]
    return next((f"{what}, no run" for place, what in _GEMINI_FILES.items() if _at(place, under)), None)


def _at(place: str, under: tuple[str, ...]) -> bool:
    """Whether a path below ``.gemini`` (``under``) is at ``place`` of ``_GEMINI_FILES``: ``*`` one folder's name,
    a last ``**`` anything below."""
    steps = place.split("/")
    below = steps[-1] == "**"
    steps = steps[:-1] if below else steps
    fits = len(under) > len(steps) if below else len(under) == len(steps)
    return fits and all(step in ("*", part) for step, part in zip(steps, under))


#: What ``gemini -p --output-format json`` prints (``output/json-formatter.ts``, ``JsonOutput``): the answer and the
#: session's statistics (``SessionMetrics``: ``models``, ``tools``, ``files``), or the error it ended on; never the
#: prompt or the calls. ``session_id`` since 0.21, ``warnings`` later: 0.6-0.20 print ``{"response", "stats"}`` or
#: ``{"error": {"type", "message", "code"}}`` alone.
_HEADLESS_RESULT = frozenset({"session_id", "response", "stats", "error", "warnings"})
#: A ``JsonOutput`` error's ``type``: the JavaScript error's name (``FatalTurnLimitedError``, ``Error``), at times
#: with the bundler's ``_`` before it or digit after it; other APIs' error types are snake_case.
_JS_ERROR_NAME = re.compile(r"_*[A-Z]\w*Error\d*")


def _headless_result(record: Any) -> bool:
    """Whether ``record`` is ``gemini -p --output-format json``'s document (``_HEADLESS_RESULT``). One without a
    session id (0.6-0.20) is told by the statistics' own shape, or an error of a JavaScript error's name and no other
    field, so that another tool's ``{"error": {...}}`` is not taken for it."""
    if not (isinstance(record, dict) and record and set(record) <= _HEADLESS_RESULT):
        return False
    stats, error = as_dict(record.get("stats")), as_dict(record.get("error"))
    if isinstance(record.get("session_id"), str):
        return isinstance(stats.get("models"), dict) or isinstance(error.get("message"), str)
    if "session_id" in record:
        return False
    if isinstance(stats.get("models"), dict) and isinstance(stats.get("tools"), dict):
        return True
    return "stats" not in record and set(error) <= {"type", "message", "code"} and isinstance(
        error.get("message"), str) and isinstance(error.get("type"), str) and bool(
        _JS_ERROR_NAME.fullmatch(error["type"]))


def not_a_run(record: Any) -> str | None:
    """``gemini -p --output-format json`` prints the final result only (the answer, the token counts): no prompt and
    no steps. Where the run is: the session's chat recording (``.json`` before 0.39), named by the first 8 characters
    of its session id where the result gives it (0.21+), or the same command's ``stream-json`` output."""
    if not _headless_result(record):
        return None
    session = record.get("session_id")
    # a result without an id is of 0.6-0.20, whose recordings are .json named by the minute the session started
    recording = f"session-*-{session[:8]}.json*" if session else "session-<YYYY-MM-DDTHH-MM it started>-*.json"
    return ("this is the final result of a headless Gemini CLI run (`gemini -p --output-format json`): the answer, "
            "not the prompt or the steps; ingest the session's chat recording instead, "
            f"~/.gemini/tmp/<project>/chats/{recording} (<project>: a hash or the name of the project's folder), "
            "or run with `--output-format stream-json` (0.11+), whose output is a run")


def recording(record: Any) -> bool:
    """Whether a record is a chat recording in this layout (``sessionId``, ``projectHash``), Gemini CLI's or a fork's."""
    return isinstance(record, dict) and isinstance(record.get("sessionId"), str) and isinstance(
        record.get("projectHash"), str)


def qwen_recording(record: Any) -> bool:
    """Whether a recording is Qwen Code's from before 0.3 (``~/.qwen/tmp/<hash>/chats/session-*.json``): this
    layout, its replies typed ``qwen`` (``qwen_code`` reads it with :func:`read_recording`; one with no reply is told
    by its place, ``qwen_code.format_by_place``)."""
    return recording(record) and any(isinstance(m, dict) and m.get("type") == "qwen"
                                     for m in as_list(record.get("messages")))


def matches(record: Any) -> bool:
    return (recording(record) and not qwen_recording(record)) or _is_content(record) or \
        headless.is_stream(record) or _saved_chat(record) is not None


def side_document(document: Any) -> str | None:
    """The adapter hook for a whole small file (see ``detect``): a recording with nothing asked. A session appends
    its header as it starts (``ChatRecordingService.initialize``) and the ``<session_context>`` with it, so any
    ``gemini`` started and left, and each ``--resume`` (which starts a recording of its own, under the same session
    id, before it goes on writing the session's file), leaves one; so does a session of shell-mode commands alone
    (``!ls``: the model never called). The CLI's session list skips the first (0.61 ``hasResumableContent``,
    ``isResumableMessageRecord``, ``isIgnoredUserContent``): no run, passed over as other CLIs' files of no
    conversation are, as Claude Code's of slash commands only are."""
    first = document[0] if isinstance(document, list) and document else document
    if not recording(first):
        return None
    try:
        _, messages = _replay(document)
    except RecordError:
        return None
    if not messages or any(m.get("type") not in ("user", "info", "warning") for m in messages):
        return None  # (one of no message at all is told as such: an unusable file, see ``read_recording``)
    rec = Recording()
    for message in messages:
        if message.get("type") == "user":
            rec.user(message)
    if rec.prompts or rec.commands or rec.steps:
        return None
    if rec.shell:
        return f"a Gemini CLI recording of shell-mode commands only ({_shell_list(rec)}), not a run"
    return ("a Gemini CLI recording with nothing asked (the CLI's context alone: a session started or resumed and "
            "left), not a run")


def _shell_list(rec: Recording) -> str:
    """The shell-mode commands of a recording of no prompt, as its reason says so."""
    return f"{', '.join(dict.fromkeys(rec.shell))}: no prompt sent, no model reply"


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The file's one run; of stream-json output, one per ``gemini -p`` appended to it (see ``_gemini_stream``)."""
    if isinstance(document, list) and document and headless.is_stream(document[0]):
        yield from headless.invocations(document)
    else:
        yield from whole_file(document)


def _replay(document: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(metadata, messages) of a recording in any layout, after updates and rewinds."""
    if (history := saved_history(document)) is not None:  # the model's turns typed "model", whoever's fork saved it
        return {"checkpoint": True}, [{"id": f"#{n}", "type": entry["role"], "content": entry["parts"]}
                                      for n, entry in enumerate(history)]
    if isinstance(document, dict) and isinstance(document.get("messages"), list):
        meta = {k: v for k, v in document.items() if k != "messages"}
        messages: dict[str, dict[str, Any]] = {}
        for n, msg in enumerate(document["messages"]):
            if isinstance(msg, dict):
                messages[str(as_key(msg.get("id")) or f"#{n}")] = msg
        return meta, list(messages.values())
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    first: dict[str, dict[str, Any]] = {}  # each message as first recorded, by id
    results: dict[tuple[str, str], Any] = {}  # each tool call's first result, by message and call id (``_as_run``)
    copies: set[str] = set()  # the ids of masking's copies of earlier messages (see ``_recorded_again``)
    for n, rec in enumerate(as_records(document, "Gemini CLI recording")):
        if isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in messages else 0
            messages = {k: messages[k] for k in ids[:cut]}
        elif isinstance(rec.get("$set"), dict):
            update = rec["$set"]
            if isinstance(update.get("messages"), list) and not _compressed(update["messages"]):
                # a resume writes the history back; a reset of the model's context (a ``/compress`` with little to
                # compress) leaves less of it: what was recorded stays the run's either way. Masking's copies stay
                # out once dropped: the CLI's view after masking is the copies and the later turns, and a resume
                # writes that view back under the same ids
                rebuilt = {k: m for k, m in _rebuilt(update["messages"], first, results, n).items()
                           if k not in copies}
                if _recorded_again(rebuilt, messages):
                    copies |= rebuilt.keys()
                    messages = {k: m for k, m in messages.items() if k not in rebuilt}
                else:
                    messages = rebuilt if messages.keys() <= rebuilt.keys() else {
                        **messages, **{k: m for k, m in rebuilt.items() if k not in messages}}
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(rec.get("id"), str) and ("type" in rec or "content" in rec):
            messages[rec["id"]] = _as_run(rec, rec["id"], results)
            first.setdefault(rec["id"], rec)
        elif isinstance(rec.get("sessionId"), str):
            start = meta.get("startTime")  # a resumed session writes its header again: it started at the first
            meta.update({k: v for k, v in rec.items() if k != "messages"})
            meta["startTime"] = start or meta.get("startTime")
            for i, m in enumerate(as_list(rec.get("messages"))):
                if isinstance(m, dict):
                    messages[str(as_key(m.get("id")) or f"#{n}.{i}")] = m
    return meta, list(messages.values())


def _recorded_again(history: dict[str, dict[str, Any]], recorded: dict[str, dict[str, Any]]) -> bool:
    """Whether a ``$set.messages`` is the history recorded again under new ids, just before it: the CLI's masking
    of bulky tool outputs (0.5x+, ``tryMaskToolOutputs``: ``GeminiChat.setHistory`` records each turn as a new
    message, then writes the list) copies the earlier messages, the masked outputs put in the copies. The messages
    first recorded are the run's; read too, the copies were each call and reply a second time. Its ids being the
    newest recorded is not enough (a reset after a cancel records a new context, then a ``$set`` of it alone): the
    copies must repeat older messages, masking's of at least one tool call, every call id already recorded before
    them and every other text (the CLI's context aside) said before; else the ``$set`` is merged as any other."""
    ids, keys = list(history), list(recorded)
    if not ids or len(keys) <= len(ids) or keys[-len(ids):] != ids:
        return False
    older = [recorded[k] for k in keys[:-len(ids)]]
    older_calls = set().union(*(_call_ids(m) for m in older))
    said = {(m.get("type"), _text_of(m.get("content")).strip()) for m in older}
    masked = False
    for copy in history.values():
        if calls := _call_ids(copy):
            if not calls <= older_calls:
                return False
            masked = True
        elif not _IGNORED_PROMPT.match(text := _text_of(copy.get("content")).strip()) and (
                copy.get("type"), text) not in said:
            return False
    return masked


def _call_ids(message: dict[str, Any]) -> set[str]:
    """The ids of the tool calls a recorded message makes or answers (its ``toolCalls``, its parts)."""
    calls = [c for c in as_list(message.get("toolCalls")) if isinstance(c, dict)]
    calls += [as_dict(p.get(k)) for p in _parts(message.get("content")) for k in ("functionCall", "functionResponse")]
    return {str(c["id"]) for c in calls if c.get("id")}


def _compressed(history: list[Any]) -> bool:
    """Whether a ``$set.messages`` is a compression's (``/compress`` or automatic): the model's new context,
    a ``<state_snapshot>`` summary, the CLI's "Got it" and copies of the latest messages under new ids. The
    messages recorded so far stay the run's."""
    return any(isinstance(m, dict) and m.get("type") == "user" and _text_of(m.get("content")).lstrip().startswith(
        "<state_snapshot>") for m in history)


def _rebuilt(history: list[Any], first: dict[str, dict[str, Any]], results: dict[tuple[str, str], Any],
             n: int) -> dict[str, dict[str, Any]]:
    """The history a resume writes back (``$set.messages``): every message stamped with the resume's time
    and without its model, a call's response under the call's id. Each keeps its own key, the time and
    model it was first recorded with, and its tool calls' first results (``_as_run``)."""
    out: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(m for m in history if isinstance(m, dict)):
        key = str(as_key(m.get("id")) or f"#{n}.{i}")
        was = first.get(key)
        if was is not None and was.get("type") == m.get("type"):
            m = {**m, "timestamp": was.get("timestamp", m.get("timestamp")), "model": m.get("model") or was.get("model")}
        out[key if key not in out else f"{key}#{i}"] = _as_run(m, key, results)
    return out


def _as_run(message: dict[str, Any], key: str, results: dict[tuple[str, str], Any]) -> dict[str, Any]:
    """``message`` with each tool call's result the first one recorded for it (kept in ``results`` by message and
    call id): what the tool returned. The CLI records a completed call once (``recordCompletedToolCalls``), then
    writes its history back under the recorded ids (``updateMessagesFromHistory``: 0.38-0.43 push each message again,
    0.44+ write a ``$set``; on start, on a rollback, and before each request with ``experimental.contextManagement``)
    with the results the model now sees: an output masked to a placeholder, and from 0.44 a parallel batch's every
    response as each call's."""
    if not isinstance(message.get("toolCalls"), list):
        return message
    calls = []
    for call in message["toolCalls"]:
        if isinstance(call, dict) and call.get("id") is not None:
            ids = (key, str(call["id"]))
            if call.get("result") and ids not in results:
                results[ids] = call["result"]
            call = {**call, "result": results[ids]} if ids in results else call
        calls.append(call)
    return {**message, "toolCalls": calls}


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, dict):
        return [content]
    if isinstance(content, list):
        return [p if isinstance(p, dict) else {"text": str(p)} for p in content if p is not None]
    return []


def _untrusted_removed(text: str) -> str:
    """``text`` without the CLI's ``<untrusted_context>`` fences (``_UNTRUSTED``): what the tool returned."""
    return _UNTRUSTED.sub(lambda m: m.group(1).replace(_UNTRUSTED_CLOSE_ESCAPED, "</untrusted_context>"), text)


def _mcp_tool_error(error: str) -> str:
    """What an MCP tool said when it answered ``isError``: the text of the ``content`` parts in the CLI's message
    (``_MCP_ERROR``), as Claude Code and Codex record it; the message itself when it holds none."""
    found = _MCP_ERROR.match(error)
    try:
        parts = loads(error[found.end():]) if found else None
    except ValueError:
        return error
    said = [text for part in as_list(parts) if isinstance(part, dict)
            for text in _texts(as_dict(as_dict(part.get("functionResponse")).get("response")))]
    return "\n".join(said) if said else error


def _texts(response: dict[str, Any]) -> list[str]:
    """The text blocks of an MCP tool's answer in the CLI's frame: ``{"content": [...], "isError": true}`` (0.6x), or
    that object under ``error`` (versions whose MCP results came through @google/genai's ``mcpToTool``: a user's
    report, chrome-devtools-mcp issue 292: ``{"error": {"content": [...], "isError": true}}``), or a string error."""
    error = response.get("error")
    if isinstance(error, str):
        return [error] if error.strip() else []
    blocks = as_list(response.get("content")) or as_list(as_dict(error).get("content"))
    return [str(b["text"]) for b in blocks
            if isinstance(b, dict) and isinstance(b.get("text"), str) and b["text"].strip()]


def _response_text(response: Any) -> tuple[str, str | None]:
    """(output text, error text) of a ``functionResponse.response``, without the CLI's fences around a tool's
    output and its frame around an MCP tool's error."""
    if isinstance(response, dict):
        error = response.get("error")
        error_text = _mcp_tool_error(error if isinstance(error, str) else json.dumps(error)) if error else None
        error_text = error_text and _unmasked(error_text)
        if "output" in response:
            output = response["output"]
            return _untrusted_removed(output if isinstance(output, str) else json.dumps(output)), error_text
        if "content" in response and isinstance(response["content"], (str, list)):
            return _untrusted_removed(_text_of(response["content"])), error_text
        rest = {k: v for k, v in response.items() if k != "error"}
        return (json.dumps(rest) if rest else ""), error_text
    return ("" if response is None else str(response)), None


def _text_of(content: Any) -> str:
    return "\n".join(str(p["text"]) for p in _parts(content) if isinstance(p.get("text"), str) and not p.get("thought"))


def _result(result: Any) -> tuple[str, str, list[str]]:
    """(text, shown, errors) of a tool call ``result`` (a PartListUnion): ``shown`` is the text with each part the CLI
    masked said so (``_unmasked``: a part at a time, as a steering note's text may come before a masked response);
    ``text`` keeps the masks for the error checks (a masked shell report's preview still has its exit code)."""
    if isinstance(result, str):
        text = _untrusted_removed(result)
        return text, _unmasked(text), []
    texts: list[str] = []
    errors: list[str] = []
    for part in _parts(result):
        response = part.get("functionResponse")
        if isinstance(response, dict):
            text, error = _response_text(response.get("response"))
            if text:
                texts.append(text)
            if error:
                errors.append(error)
        elif isinstance(part.get("text"), str):
            texts.append(_untrusted_removed(part["text"]))
        elif "inlineData" in part or "fileData" in part:
            texts.append("[file]")
    return "\n".join(texts), "\n".join(map(_unmasked, texts)), errors


def _display(value: Any) -> str | None:
    if isinstance(value, str):
        return value or None
    if isinstance(value, dict):
        for key in ("fileDiff", "summary", "output", "message"):
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
    return None


def _subagent_error(display: Any, text: str) -> str | None:
    """The error of a sub-agent call that failed, or ended short of its goal, though recorded ``success``.

    A sub-agent that throws answers "Subagent '<name>' failed. Error: <message>" with its ``SubagentProgress``
    display in ``state: "error"`` and no ``error`` of the call, "so that the UI renders our rich returnDisplay"
    (gemini-cli ``agents/local-invocation.ts``): its message is the step's error. One that ended with a
    ``terminateReason`` other than ``GOAL`` (``MAX_TURNS``, ``TIMEOUT``, ``ERROR``, ...) did not do what it was
    asked: that reason is, with the first line of its result ("Agent reached max turns limit (10).")."""
    progress = display if isinstance(display, dict) and display.get("isSubagentProgress") else {}
    who = f"subagent {as_str(progress.get('agentName')) or ''}".strip()
    if failed := _SUBAGENT_FAILED.match(text.strip()):
        return short(decisive_line(failed.group(1)) or failed.group(1), 300)
    if progress.get("state") == "error":
        said = [as_str(a.get("content")) for a in as_list(progress.get("recentActivity"))
                if isinstance(a, dict) and a.get("type") == "thought" and a.get("status") == "error"]
        return short(said[-1].removeprefix("Error: "), 300) if said and said[-1] else f"{who} failed"
    ended = _SUBAGENT_ENDED.match(text.strip())
    reason = as_str(progress.get("terminateReason")) or (ended.group(1) if ended else "")
    if not reason or reason.upper() == "GOAL":
        return None
    result = (ended.group(2) if ended else None) or as_str(progress.get("result"))
    said = result.strip().splitlines()[0] if result and result.strip() else f"{who} did not reach its goal"
    return short(f"{reason}: {said}", 300)


def _call_error(status: Any, text: str, errors: list[str], display: str | None) -> str | None:
    if as_str(status) in FAILED:
        detail = errors[0] if errors else (display or text)
        if status == "cancelled":
            return short(f"cancelled: {detail}", 300) if detail else "cancelled by the user"
        return short(decisive_line(detail) or detail, 300) if detail else "tool call failed"
    if errors:
        return short(errors[0], 300)
    return shell_timeout_error(text) or shell_report_error(text)


def shell_timeout_error(text: str) -> str | None:
    """The error of a command the shell tool cancelled at its inactivity timeout (``_SHELL_TIMEOUT``): it did not
    finish, though the call is recorded as ``success`` (as Codex's commands killed at their timeout are read)."""
    found = _SHELL_TIMEOUT.match(text.strip())
    return found.group(0) if found else None


def _unmasked(text: str) -> str:
    """A tool's output as the step shows it: one the CLI masked in its history (``_MASKED``, ``_MASKED_NOTE``: what
    a ``/chat save`` checkpoint holds of an older output) said to be masked, with the preview it kept, rather than
    the placeholder read as what the tool returned."""
    if masked := _MASKED.match(text):
        return f"[output masked by Gemini CLI to save context; in full in {masked.group(2)}; its preview:]\n" \
            + masked.group(1)
    if masked := _MASKED_NOTE.match(text):
        return f"[output masked by Gemini CLI to save context; in full in {masked.group(1)}]"
    return text


def shell_report_error(text: str, command: str | None = None, failed: bool = False) -> str | None:
    """The error of a command by the report gemini-cli's shell tool gives the model (``shell.ts``'s ``llmContent``:
    ``Output: ...``, then its closing block, ``_TRAILER_KEYS``; before 0.27 ``Command:`` first and an ``Error:`` line
    before the block): a non-zero exit code with the output's decisive line (see ``exit_code_error``: exit 1 with no
    output from a command that answers "no" so is none), else the report's own ``Error:`` line; None without a
    failure; a report cut short (``_TRUNCATED``, ``_TOO_LARGE``) or masked in the history (``_MASKED``) by what it
    kept, its closing block when its start was cut. Only the closing block is the report's (``_report_end``): a
    command's output prints "Exit Code: 1" or "Error: ..." lines of its own (a grep of a build log, a CI
    summary); the ``Error:`` line since 0.27 only of a call that ``failed`` (written only then). Public because
    gemini-cli also shows this report as the call's display in debug mode (``--debug``, or ``DEBUG`` /
    ``DEBUG_MODE`` set to ``1`` / ``true`` in its environment): what an OpenHands ``ACPAgent`` records of its
    calls, the exit code nowhere else (``_openhands_sdk.acp_result``)."""
    text = masked.group(1) if (masked := _MASKED.match(text)) else text
    text = _TRUNCATED.sub("", text, count=1)
    cut = _TOO_LARGE.match(text)
    text = text[cut.end():] if cut else text
    lines = text.rstrip().splitlines()
    at, block = _report_end(lines)
    if not text.startswith(("Command:", "Output:")) and not (cut and any(k in block for k in _SHELL_ONLY_KEYS)):
        return None  # not the shell tool's report (or only its cut end, and that not the shell tool's block)
    code = as_int(block.get("Exit Code"))
    if code:
        return exit_code_error(_SHELL_HEADER.sub("", "\n".join(lines[:at])), code, command)
    if at and (failed or text.startswith("Command:")):  # the report's own "Error:" line, just before the block
        found = _SHELL_ERROR.match(lines[at - 1])
        return short(found.group(1), 300) if found and found.group(1) != "(none)" else None
    return None


def _report_end(lines: list[str]) -> tuple[int, dict[str, str]]:
    """(where the shell report's closing block begins in ``lines``, its values by key): the last lines naming its
    keys (``_TRAILER_KEYS``), each once and in the order the tool writes them, read from the end."""
    block: dict[str, str] = {}
    at, rank = len(lines), len(_TRAILER_KEYS)
    while at and (found := _TRAILER.match(lines[at - 1])) and _TRAILER_KEYS.index(found.group(1)) < rank:
        rank = _TRAILER_KEYS.index(found.group(1))
        block[found.group(1)] = found.group(2)
        at -= 1
    return at, block


def _thoughts(message: dict[str, Any]) -> list[str]:
    out = []
    for thought in as_list(message.get("thoughts")):
        if isinstance(thought, dict):
            subject = str(thought.get("subject") or "").strip()
            description = str(thought.get("description") or "").strip()
            text = f"**{subject}** {description}".strip() if subject else description
            if text:
                out.append(text)
        elif isinstance(thought, str) and thought.strip():
            out.append(thought)
    return out


def _continued(text: str, message: dict[str, Any], shown: str) -> bool:
    """The CLI's own "Please continue." (marked "System: ", or shown as something else: the previous
    request's display), not a user who typed it."""
    found = _CONTINUE.match(text)
    return bool(found) and (bool(found.group(1)) or ("displayContent" in message and shown != text))


def _typed(text: str) -> str:
    """A prompt without what Gemini Code Assist appended after the user's words (``_IDE_TRAILER``); empty when the
    text is that alone (the editor's context: nothing asked)."""
    trailer = _IDE_TRAILER.search(text)
    return (text[:trailer.start()] if trailer else text).strip()


class Recording(SessionSteps):
    """A recording's messages walked in order into steps. Public: Qwen Code (a Gemini CLI fork) records the same
    Gemini ``parts`` in its own session records, read through this (``qwen_code``)."""

    def __init__(self) -> None:
        super().__init__()
        self.commands: list[str] = []
        self.shell: list[str] = []  # shell-mode commands as typed (``!ls``): the user's, but no request to the model
        self.models: list[str] = []
        self.tokens = 0
        self.unnamed: list[dict[str, Any]] = []  # the steps of calls recorded with no id, in order
        self.loops: list[str] = []  # the details of the CLI's loop feedback (``_LOOP_FEEDBACK``), in order
        self.after_loop: tuple[int, int] | None = None  # (steps, prompts) when the last one was sent
        self.recorded: dict[str, Any] | None = None  # the step of the last ``toolCalls`` entry (see _copied)

    def ended_on_loop(self) -> bool:
        """Whether the session ended on the CLI's loop guard: its last loop feedback had no step or prompt after it
        (the model repeated itself again and the CLI halted the request, ``LoopDetected``)."""
        return self.after_loop is not None and self.after_loop == (len(self.steps), len(self.prompts))

    def open_call(self, call_id: Any, action: Any, arguments: Any, at: Any = None, **fields: Any) -> dict[str, Any]:
        """As :meth:`SessionSteps.open_call`, of a call as the history holds it (any id, name or arguments); one
        with no id is kept in ``unnamed``, for a response to find by its name (:meth:`call_of`)."""
        step = super().open_call(str(call_id) if call_id else None, str(action or "tool"),
                                 arguments if arguments is not None else {}, at, **fields)
        if not call_id:
            self.unnamed.append(step)
        return step

    def _copied(self, call: dict[str, Any]) -> bool:
        """Whether a ``functionCall`` part is the CLI's copy of the call just recorded in ``toolCalls``: a call the
        CLI ran itself (a skill's slash command runs ``activate_skill``) is recorded there, then added to the model's
        history as a ``gemini`` message of its own (``useGeminiStream``'s client-initiated tools, ``addHistory``),
        with no id or one the CLI makes, ``synth_<name>_...``, never the call's; its response has the call's id. Read
        as a call, each such skill was a second step without an observation."""
        step, call_id = self.recorded, str(call.get("id") or "")
        return step is not None and bool(self.steps) and step is self.steps[-1] \
            and (not call_id or call_id.startswith("synth_")) and step["action"] == str(call.get("name")) \
            and step["arguments"] == (call.get("args") if call.get("args") is not None else {})

    def call_of(self, response: dict[str, Any], at: Any) -> dict[str, Any] | None:
        """The step a ``functionResponse`` answers (None: answered already). By id; else the first call of its
        name still unanswered that had no id (the CLI before 0.4x gave an id-less call an id of its own making,
        ``<name>-<time>-<random>``, that only the response kept); else a step of its own, its action the
        response's name and its arguments unknown (a call the history lost: the result is kept all the same)."""
        key = str(response.get("id"))
        if key in self.by_call:
            step = self.by_call[key]
            return step if step.get("observation") is None else None
        name = str(response.get("name") or "tool")
        step = next((s for s in self.unnamed if s["action"] == name and s.get("observation") is None), None)
        if step is None:  # the text and thoughts before it are left to what they went with before
            step = {"action": name, "arguments": None, "started_at": iso_time(at)}
            self.steps.append(step)
        else:
            self.unnamed.remove(step)
        if response.get("id"):
            self.by_call[key] = step
        return step

    def user(self, message: dict[str, Any]) -> None:
        texts = []
        for part in _parts(message.get("content")):
            response = part.get("functionResponse")
            if isinstance(response, dict):
                step = self.call_of(response, message.get("timestamp"))
                if step is not None:
                    text, error = _response_text(response.get("response"))
                    text, error = strip_terminal_codes(text), error and strip_terminal_codes(error)
                    step["error"] = step.get("error") or _call_error(None, text, [error] if error else [], None) \
                        or _subagent_error(None, text)
                    step["observation"] = _unmasked(text) or error or None
                    step["ended_at"] = iso_time(message.get("timestamp"))
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
        text = "\n".join(texts).strip()
        # what the user typed, before ``@file`` references were expanded into the content
        shown = _text_of(message.get("displayContent")).strip() if message.get("displayContent") else ""
        if not text or _continued(text, message, shown):
            return
        if loop := _LOOP_FEEDBACK.match(text):  # the CLI's, recorded with the prompt's display: not a prompt
            self.flush()
            self.loops.append(short(loop.group(1), 300))
            self.after_loop = (len(self.steps), len(self.prompts))
            return
        self.flush()
        if shown.startswith("/") and not _IGNORED_PROMPT.match(text):
            if len(shown.split(None, 1)) > 1:  # /skill <request>, a custom command's {{args}}: the user's words
                self.prompts.append(_typed(shown))  # the command kept before them: how they were asked
            else:
                self.commands.append(text)  # a command that submitted a prompt (/init): what the model was asked
            return
        text = _typed(shown or text)
        if not text:
            return  # the editor's context alone: nothing asked
        if _IGNORED_PROMPT.match(text):
            if text.startswith("/"):
                self.commands.append(text)
            return
        if shell := _SHELL_MODE.match(text):  # the user's own command, not a request: kept to say so
            self.shell.append("!" + re.sub(r"\\([\\`])", r"\1", shell.group(1)))
            return
        self.prompts.append(text)

    def gemini(self, message: dict[str, Any]) -> None:
        if isinstance(message.get("model"), str) and message["model"] and message["model"] not in self.models:
            self.models.append(message["model"])
        tokens = message.get("tokens")
        if isinstance(tokens, dict) and isinstance(tokens.get("total"), (int, float)):
            self.tokens += int(tokens["total"])
        at = message.get("timestamp")
        self.thought.extend(_thoughts(message))
        calls = [c for c in as_list(message.get("toolCalls")) if isinstance(c, dict)]
        known = {str(c.get("id")) for c in calls if c.get("id")}
        texts = []
        for part in _parts(message.get("content") if "content" in message else message.get("parts")):
            if part.get("thought") and isinstance(part.get("text"), str):
                self.thought.append(part["text"])
            elif isinstance(part.get("text"), str) and part["text"].strip():
                texts.append(part["text"])
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                if str(call.get("id")) not in known and not self._copied(call):
                    if texts:
                        self.say("\n".join(texts), at)
                        texts = []
                    self.open_call(call.get("id"), call.get("name"), call.get("args"), at)
        if texts:
            self.say("\n".join(texts), at)
        for call in calls:
            step = self.open_call(call.get("id"), call.get("name"), call.get("args"), call.get("timestamp") or at)
            self.recorded = step
            text, shown, errors = _result(call.get("result"))
            text, errors = strip_terminal_codes(text), [strip_terminal_codes(e) for e in errors]
            display = _display(call.get("resultDisplay"))
            display = display and strip_terminal_codes(display)
            step["observation"] = strip_terminal_codes(shown) or (errors[0] if errors else None) or display
            step["error"] = _call_error(call.get("status"), text, errors, display) \
                or _subagent_error(call.get("resultDisplay"), text)
            if call.get("result") is not None:
                step["ended_at"] = iso_time(call.get("timestamp"))
        if texts or calls or message.get("content"):
            self.last_error = None


def _subagent(meta: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """A subagent's recording (``kind: "subagent"``, 0.3x: the ``cli_help`` agent) is linked to its session as
    Claude Code's and Codex's subagents are: the CLI writes it into a folder named by that session's id,
    ``chats/<parent session id>/<its own id>.json``; its own ``sessionId`` is a short id of its own. The memory
    service's background skill-extraction agent is written into ``chats/skill-extraction-<n>/``: no session spawned
    it, so it has no parent."""
    if meta.get("kind") != "subagent":
        return {}
    folder = ctx.source.parent
    in_session = folder.parent.name == "chats" and _is_session_id(folder.name)
    return {"is_subagent": True, "parent_session_id": folder.name if in_session else None}


def _stopped(meta: dict[str, Any], steps: list[dict[str, Any]], parent: str | None) -> str | None:
    """What ended a sub-agent whose recording does not end on ``complete_task`` (``_SUBAGENT_DONE``), else None. Its
    own recording never says why, and no verdict is recorded either way. A sub-agent a session spawned (``parent``)
    may have been cancelled by the user (Esc: the parent's call ``cancelled``, "[Operation Cancelled] Operation
    cancelled.", ``scheduler/tool-executor.ts``; a timeout ends that call ``success``, "Termination Reason: TIMEOUT",
    ``_subagent_error``), the CLI closed, an error thrown, or a limit's last turn spent without handing in (a text reply
    last: ``ERROR_NO_COMPLETE_TASK_CALL``): its parent's call tells which. A background agent (the skill extractor, no
    parent) has no call to cancel, and nothing records why it stopped."""
    if meta.get("kind") != "subagent" or (steps and steps[-1].get("action") == _SUBAGENT_DONE):
        return None
    if parent:
        return ("stopped before complete_task: e.g. cancelled by the user, the CLI closed, an error or a limit (its "
                "parent session's call says which)")
    return ("stopped before complete_task: e.g. the CLI closed, an error or a limit (a background agent: no call "
            "records why)")


def _is_session_id(name: str) -> bool:
    """Gemini CLI's session ids are UUIDs."""
    try:
        uuid.UUID(name)
    except ValueError:
        return False
    return True


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if isinstance(record, list) and record and headless.is_stream(record[0]):
        return headless.to_trajectory(record, ctx)
    if qwen_recording(record):  # forced so: read as Gemini CLI's, its replies would be lost
        raise RecordError("this is a Qwen Code session from before 0.3 (Gemini CLI's layout, its replies typed "
                          "\"qwen\"): read it with --format qwen-code")
    return read_recording(record, ctx)


def read_recording(record: Any, ctx: Context, *, name: str = NAME, label: str = "Gemini CLI",
                   reply: str = "gemini") -> Trajectory:
    """A recording in any layout -> its run. Public: Qwen Code before 0.3 wrote the same, its replies typed
    ``qwen`` (``qwen_code``); ``name`` is the run's format, ``label`` the producer errors name, ``reply`` the
    type of the model's messages."""
    meta, messages = _replay(record)
    if not messages:
        raise RecordError(f"no messages in this {label} recording")
    rec = Recording()
    infos = 0
    errors: list[str] = []  # every error record, in order: a session that went on after one still had it
    for message in messages:
        kind = message.get("type")
        if kind == "user":
            rec.user(message)
        elif kind in (reply, "model") and _text_of(message.get("content")).strip() not in _ACKNOWLEDGEMENTS:
            rec.gemini(message)
        elif kind == "error":
            rec.flush()
            text = short(_text_of(message.get("content")) or "error", 500, keep="head")
            errors.append(text)
            if _API_ERROR.search(text):
                rec.last_error = text
        elif kind in ("info", "warning"):
            infos += 1
    rec.flush()
    task = rec.prompts[0] if rec.prompts else (rec.commands[0] if rec.commands else None)
    context = None  # without a request after the memory's last block, the memory stays the task, as any prompt
    if meta.get("kind") == "subagent" and (memory := _MEMORY_QUERY.match(task or "")) \
            and (request := task[memory.end():].strip()):
        task, context = request, memory.group(1)  # the save_memory agent's request, not the ~100 kB of memory
    elif meta.get("kind") == "subagent" and (listed := _SKILL_QUERY.match(task or "")):
        task, context = listed.group(2).strip(), listed.group(1)  # the skill extractor's instruction, not its index
    if not task:
        raise RecordError(f"no user prompt in this {label} recording" + (f" ({_shell_list(rec)})" if rec.shell else ""))
    session_id = meta.get("sessionId")
    if meta.get("checkpoint"):
        stem = file_stem(ctx.source, (".json",))
        run_id = f"{name}.checkpoint.{stem}.{hashlib.sha1(task.encode()).hexdigest()[:10]}"
    elif not session_id:
        raise RecordError("missing field 'sessionId'")
    else:  # one session id, several recordings: its subagents', and a new one after each /clear
        start = re.sub(r"[^0-9A-Za-z]+", "-", str(meta.get("startTime") or "")).strip("-")
        run_id = f"{name}.{session_id}" + (f".{start}" if start else "")

    metadata: dict[str, Any] = {
        "source_format": name,
        "session_id": session_id,
        "project_hash": meta.get("projectHash"),
        "kind": meta.get("kind"),
        **(spawned := _subagent(meta, ctx)),
        "summary": short(str(meta["summary"]), 500, keep="head") if meta.get("summary") else None,
        "initial_context": short(context, 2000, keep="head") if context else None,
        "directories": meta.get("directories") or None,
        "last_updated": meta.get("lastUpdated"),
        "total_tokens": rec.tokens or None,
        "user_prompts": prompt_list(rec.prompts[1:]) or None,
        "info_messages": infos or None,
        "error_records": errors[:MAX_ERROR_RECORDS] or None,
        "models": rec.models if len(rec.models) > 1 else None,
        "loops_detected": rec.loops or None,
        "ended_by": "Gemini CLI's loop detection: the model repeated itself after the CLI's loop feedback and the "
                    "request was halted" if rec.ended_on_loop()
                    else _stopped(meta, rec.steps, spawned.get("parent_session_id")),
    }
    return session_trajectory(
        ctx, run_id=safe_id(run_id), task=task, model_id=rec.models[0] if rec.models else None,
        steps=rec.steps, metadata=metadata, last_error=rec.last_error,
        error_cause="infrastructure: the session ended on an error record",
        created_at=first_time(meta.get("startTime"), *(m.get("timestamp") for m in messages)),
    )
