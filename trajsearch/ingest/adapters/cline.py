"""Cline task folders (the VS Code extension ``saoudrizwan.claude-dev``, and its forks Roo Code and Kilo Code) and
Cline 4.x / Cline CLI sessions (``~/.cline/data/sessions/``).

Where they come from (cline/cline ``src/core/storage/disk.ts``, ``src/shared/ExtensionMessage.ts``,
``src/core/task/tools/utils/ToolResultUtils.ts``, ``src/core/prompts/responses.ts``): each task is a folder
``<globalStorage>/saoudrizwan.claude-dev/tasks/<task id>/`` (the id is the task's start in epoch milliseconds; Roo
Code and Kilo Code use a UUID) holding

- ``api_conversation_history.json``: the conversation the model saw, Anthropic-style messages (``role``, ``content``
  blocks ``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` / ``image``; newer versions add ``ts`` and the
  assistant's ``modelInfo``). The run is read from it: without it a folder is no run. Roo Code since 2026 (PR
  #11386, ``rooMessage.ts``) writes ``{"version": 2, "messages": [...]}`` with the AI SDK's parts (``tool-call``,
  ``tool`` messages of ``tool-result``, reasoning items of their own): read as the same steps.
- ``ui_messages.json`` (optional): the UI's stream of ``say`` / ``ask`` messages, each with ``ts`` (epoch ms): read
  for the run's start, how it ended (``completion_result``, ``api_req_failed``, ``mistake_limit_reached``) and its
  cost (``api_req_started``'s JSON text: ``tokensIn``, ``tokensOut``, ``cost``). Met without the history (users
  commit it alone: 4 of the 7 real Cline files found on GitHub), it is read as the run it records (``_ui_steps``):
  the task is its first message (a ``task`` or ``text`` say), the steps the calls it shows, the outcome and id by
  the same rules as the folder's; ``metadata.read_from`` says so (no tool results the model saw, no exit codes).
- ``task_metadata.json`` (optional): ``model_usage`` (``model_id``, ``model_provider_id``, ``mode``), files in
  context, ``environment_history`` (``cline_version``).

- ``history_item.json`` (Roo Code, 2026): the task's entry in its task list; its ``id`` is read, and a subtask's
  ``parentTaskId`` (``metadata.is_subagent``, ``parent_session_id``) and a parent's ``childIds``
  (``subagent_sessions``), as the other agents' sub-agents are linked.

Cline 4.x (the extension on ``@cline/core``, and the Cline CLI) writes no task folder: each session is
``~/.cline/data/sessions/<session id>/<session id>.messages.json`` (cline/cline ``sdk/packages/core/docs/
messages-contract-v1.md``), ``{"version": 1, "sessionId", "agent": "lead" | "subagent" | "teammate", "messages"}``,
the same Anthropic-style messages (assistant ``modelInfo.id``, ``metrics`` of tokens and cost; a ``tool_result``'s
``content`` a list of ``{query, result, error, success}``, its ``is_error``), with its manifest ``<session id>.json``
beside it and a sub-agent's or teammate's session as ``<stem>.messages.json`` in its root session's folder: each
file is a run of its own (``matches``), read as a history, its id the ``sessionId``; a sub-agent's is
``metadata.is_subagent`` with its root session in ``parent_session_id`` (before Aug 2026, cline/cline accd7e5809, its
file said the root's ``sessionId``: its id is then ``<root id>__<stem>``, what the SDK names it since), listed in
the lead's ``subagent_sessions``. The user's messages Cline writes itself (a reminder, ``[SYSTEM] ...`` with
``userRunSpan: 0``; a ``metadata.kind`` notice) are not prompts. The lead's manifest's ``status`` (rewritten at
shutdown) is read: ``failed`` an ``infra_error`` where no error message says more, ``cancelled`` ``unknown`` with
``metadata.interrupted``; ``completed`` says nothing of success (``unknown``); the mistake limit's notice a
``failure``. A sub-agent's (a teammate's) session has no manifest: its status, set alike when it ends, is its row in
Cline's ``db/sessions.db`` beside ``sessions/`` (``_session_status``), read the same way. Cline's data folder's own
files and folders (``cache/``, ``locks/``, ``logs/``, ``settings/``, ...)
are passed over (``side_path``).

Other files of the folder (``settings.json``, ``focus_chain_taskid_<id>.md``, ``context_history.json``) and Roo
Code's ``tasks/_index.json`` are passed over (``side_path``); before Cline 2.x the UI messages were
``claude_messages.json``, read alike; a ``task_metadata.json`` met with no history beside it, or UI messages under
another name, is refused naming the file that holds the run (``not_a_run``).

Field mapping:

- task = the first user message's text inside Cline's ``<task>`` wrapper (Roo Code's ``<user_message>``); without
  one, its text blocks that are not what the extension appends (``<environment_details>``, its todo-list and
  task_progress reminders, attached files). Later prompts (feedback after a completion attempt or a denial,
  ``<feedback>``; a resumed task's ``<user_message>``) go to ``metadata.user_prompts``. Roo Code's own user messages
  are none: its context condensing's summary (``isSummary``: since 2026 a user message, ``## Conversation Summary
  ...``, the messages it sums up kept, tagged ``condenseParent``; before, an assistant message that replaced them),
  counted in ``metadata.compactions``, the last one's text ``metadata.compaction_summary``, and its sliding window's
  marker (``isTruncationMarker``, the messages it hides kept, tagged ``truncationParent``).
- steps: each ``tool_use`` block (or, in versions before native tool calls, an XML tool tag in the assistant's text,
  ``<execute_command><command>ls</command></execute_command>``) is a step: action = its name, arguments = its input
  (the tag's parameters), thought = the ``thinking`` (Roo Code's ``reasoning``) and text before it. Its result is
  the ``tool_result`` with its id, or, where Cline writes results as text, the ``[<tool> for '<arg>'] Result:``
  block that names it (whatever follows the name up to ``] Result:``: Roo Code's ``[new_task in 💻 Code mode:
  '...']``, ``[switch_mode to 'x' because: ...]``, ``[new_task completed]``), taking the first pending call of that
  tool (in order, as Cline answers calls in order; before native tool calls the result's text follows that line in
  blocks of its own). A result no pending call of its tool takes (a subtask's second result, a call whose tag was
  cut off) is passed over, not given to another call nor taken for the user's words; so is a tool's output that
  quotes a ``<feedback>``: the user's words are a block that opens with them (or with the extension's line before
  them). Assistant text followed by no tool call is a ``respond`` step; so are the tools that speak to the user
  (``_WORDS``): 3.x's ``attempt_completion`` (its ``result``) and 4.x's ``submit_and_exit`` (its ``summary``), the
  run's closing answer (no verdict of 4.x's), and 3.x's ``ask_followup_question`` and 4.x's ``ask_question`` (its
  ``question``; the answer the observation: the user's, out of 3.x's ``<answer>``, or the first option in a
  headless run; 3.x's ``options``, JSON text, a list as 4.x's), and 3.x's ``plan_mode_respond`` and
  ``act_mode_respond`` (their ``response``).
- a step's error: ``The tool execution failed with the following error: <error>...</error>`` (its decisive line);
  ``Command failed with exit code N.`` (the output's decisive line with the code, by ``exit_code_error``, the rule
  every CLI adapter reads exit codes by; a command whose result keeps no exit code, before Cline 3.3x, by what its
  output ends on, ``ended_failing``); a missing parameter; not run (``not run: ...``): ``The user denied this
  operation.``, a path blocked by ``.clineignore``, ``Tool [x] was not executed because ...`` (one tool per
  message). Roo Code and Kilo Code answer every call with a ``tool_result`` and word results their way
  (RooCodeInc/Roo-Code ``responses.ts``, ``ExecuteCommandTool.ts``): ``{"status": "error", ...}`` (an error;
  ``access_denied`` by ``.rooignore``: not run), ``{"status": "denied", ...}`` (not run), ``Command executed in
  terminal within working directory '...'. ... Exit code: N`` (or ``Process terminated by signal ...``), their task
  and a reply to a completion in ``<user_message>``. A call left without a result (the task stopped while it ran,
  or the user resumed it before one came) says so, unless it handed the turn to the user (a question, a plan, a
  completion).
- outcome: ``success`` when the task's last tool call is ``attempt_completion`` (read as a ``respond`` step), it
  ran (no error: not a call Cline skipped), and the user said nothing after it (Cline asks after a completion; a
  reply, ``The user has provided feedback on the results`` / ``<feedback>``, or new instructions when the task is
  resumed, continues the task): the user's acceptance, as far as the folder can say (``metadata.outcome_basis``). A
  task that ended on the provider's error (``ui_messages.json`` ending on ``api_req_failed``, no completion after
  it) is an ``infra_error`` (or the agent's ``failure`` when it was its context window), and one that ended on
  Cline's ``mistake_limit_reached`` a ``failure``. Any other task ended
  without a completion the user let stand: ``unknown`` (the user may have stopped it, or gone on elsewhere).
- trajectory_id = ``cline.<task id>``, named by the files, not by where they lie: ``history_item.json``'s ``id``
  (Roo Code, 2026); else the task id the folder's name is (the extension names each task's folder by it,
  ``tasks/<epoch ms>/``, ``tasks/<uuid>/``) or holds (an export: ``exported_task_1769064454592``); else (a folder
  named otherwise, as a repository's root the files were committed to) the first message's ``ts`` (epoch ms),
  else the first UI message's, else ``task-<digest of the first message>``. Copied or cloned anywhere, the same
  id. A UI log read alone has only the UI's ``ts``: where the history's first message has one too (Cline 3.5x,
  Roo Code), such a folder and its UI log read alone are two ids (the folder's kept as it was, so a store filled
  before is not given a second copy of its runs); a folder named by its task gets one id either way.
  created_at = the first UI message's ``ts``, else the first message's, else the task id's epoch. model_id
  = ``task_metadata.json``'s first ``model_usage``, else the first assistant ``modelInfo.modelId``, else the UI's,
  else the ``<model>`` Roo Code's editor state names in the first message.
  tool_versions = ``{"cline": cline_version}``. metadata: mode, provider, cost and tokens, files edited, resumptions,
  messages Cline removed to fit its context window (``conversationHistoryDeletedRange``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sqlite3
import tempfile
from contextlib import closing
from functools import lru_cache
from pathlib import Path
from typing import Any

from trajsearch.actions import NEVER_FINISHED, RESPOND, not_run
from trajsearch.model import Failure, Outcome, Trajectory

from ..sources import parse
from ._agent_cli import (
    API_ERROR_CAUSE,
    SessionSteps,
    as_int,
    as_str,
    command_line,
    ended_on_error,
    error_line,
    exit_code_error,
    first_time,
    parts_text,
    prompt_list,
    session_trajectory,
    strip_terminal_codes,
)
from ._common import (Context, RecordError, as_dict, as_list, clip_step_text, ended_failing, json_kind, loads,
                      short)
from ._vendor import sdk_tool_output

NAME = "cline"
#: A file forced to this format is one run: its conversation (an ``api_conversation_history.json`` renamed).
WHOLE_FILE = True
HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
#: The UI messages' name before Cline 2.x (``claude_messages.json``, which it migrated on opening a task).
OLD_UI = "claude_messages.json"
#: Roo Code's (2026) entry of the task in its task list (``TaskHistoryStore.ts``): ``{id, ts, task, ...}``.
HISTORY_ITEM = "history_item.json"
FILES = (HISTORY, UI, METADATA, OLD_UI, HISTORY_ITEM)
#: Where Cline 4.x and the Cline CLI keep their sessions (``~/.cline/data/sessions``), and Cline 3.x outside VS Code
#: its task folders (``~/.cline/data/tasks``: ``legacy-state-reader.ts``): a walk of a home folder reads them.
SESSION_FOLDERS = (".cline/data/sessions", ".cline/data/tasks")
#: Cline's own files in its data folder beside ``tasks/`` and ``sessions/`` (``legacy-state-reader.ts``).
_DATA_FILES = frozenset({"globalState.json", "secrets.json"})
#: Cline's own folders beside ``tasks/`` (the extension's ``state/``, ``settings/``) or ``sessions/`` (``~/.cline/
#: data``: the CLI's ``cache/``, ``locks/``, ``logs/``, ``settings/``, ``db/``, ``teams/``, ``connectors/``).
_DATA_FOLDERS = frozenset({"state", "settings", "cache", "locks", "logs", "db", "teams", "connectors"})
#: The task folder's other files (``disk.ts``): the context-window edits' history, the task's settings, the focus
#: chain's todo list (``focus_chain_taskid_<id>.md``).
_OWN_FILES = re.compile(r"\A(?:context_history\.json|settings\.json|focus_chain_taskid_[\w-]+\.md)\Z")
#: Roo Code's index of its task list, in ``tasks/`` beside the task folders (``globalFileNames.ts``).
_TASKS_INDEX = "_index.json"

#: A task id: Cline's epoch milliseconds, Roo Code's and Kilo Code's UUID.
_TASK_ID = re.compile(r"(?<![0-9A-Za-z])(\d{10,16}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                      r"(?![0-9A-Za-z])", re.I)
#: What the extension writes into a user message beside the user's words: the editor's state, its todo-list
#: reminders (``focus-chain/prompts.ts``), attached files' contents, a resumption's preamble.
_INJECTED = re.compile(r"\A\s*(?:<environment_details>|# task_progress |# TODO LIST UPDATE REQUIRED|"
                       r"Files attached by the user:|\[TASK RESUMPTION\]|\(The user did not provide a new message|"
                       r"New message to respond to with plan_mode_respond|<hook_context |\[Continue assisting)")
#: Cline's wrapper of the task (Roo Code's before 2026; since, ``<user_message>``, its wrapper of every prompt; Cline
#: 4.x's of every prompt, ``<user_input mode="act">``: ``shared/src/prompt/format.ts``).
_TASK_TAG = re.compile(r"<(task|user_message|user_input)\b[^>]*>\s*(.*?)\s*</\1>", re.S)
_FEEDBACK = re.compile(r"<(feedback|user_message|user_input)\b[^>]*>\s*(.*?)\s*</\1>", re.S)
#: What Cline 4.x writes into a prompt of the mode it was sent in (``stripModeNotices``): not the user's words.
_MODE_NOTICE = re.compile(r"<mode_notice>.*?</mode_notice>", re.S)
#: The user's words as the extension hands them on: a block that opens with them, or with its one line before them
#: (``responses.ts``). Only so: a tool's output that quotes a ``<feedback>`` (a prompt, a log of Cline's) is output.
_SAID = re.compile(r"\A\s*(?:(?:The user has provided feedback on the results|The user (?:denied|approved) this "
                   r"operation and provided|New instructions for task continuation|New message to respond to with "
                   r"plan_mode_respond)[^\n]*\n\s*)?<(feedback|user_message|user_input)\b[^>]*>\s*(.*?)\s*</\1>", re.S)
#: ``ToolResultUtils.pushToolResult``: ``[<tool> for '<arg>'] Result:`` then the result (in the same block since
#: native tool calls; before, the result in the blocks after it). Between the tool's name and ``]``, whatever the
#: extension says of the call: Cline's ``for creating a new task``, Roo Code's ``for 'x'. Reading multiple files at
#: once is ...``, ``to 'code' because: ...``, ``in 💻 Code mode: '<message>'``, ``completed`` (a subtask's result).
_RESULT = re.compile(r"\A\[(?P<tool>[a-z][\w-]*)(?:[ :].*?)?\] Result:[ \t]*\n?", re.S)
#: What a result no pending call can take stands for while its text follows (a second result of one call, as Roo
#: Code's ``new_task`` gets when its subtask ends; the result of a call whose tag was cut off): passed over.
_UNPLACED: dict[str, Any] = {"observation": "a result no pending call takes"}
#: Where the user resumes a task: a call still pending there gets no result after it.
_RESUMED = re.compile(r"\A\s*(?:\[TASK RESUMPTION\]|New instructions for task continuation:)")
_NOT_EXECUTED = re.compile(r"\ATool \[(?P<tool>[\w-]+)\] was not executed because (?P<why>[^\n]*)")
_TOOL_ERROR = re.compile(r"\AThe tool execution failed with the following error:\s*<error>\s*(.*?)\s*</error>", re.S)
_DENIED = "The user denied this operation."
_EXIT = re.compile(r"\ACommand (?:failed with |executed successfully \()exit code (-?\d+)\)?\.[ \t]*(?:\nOutput:\n)?")
#: Roo Code's (and Kilo Code's) command result (``ExecuteCommandTool.ts``): where it ran, a note when it failed, the
#: exit code (or the signal that ended it), then the output.
_ROO_EXIT = re.compile(r"\ACommand executed in terminal within working directory '.*?'\. (?:Command execution was not "
                       r"successful[^\n]*\n)?(?:Exit code: (?P<code>-?\d+)|(?P<signal>Process terminated by signal \w+)"
                       r"[^\n]*)?[^\n]*\n(?:Output:\n)?")
_OLD_OUTPUT = re.compile(r"\ACommand executed\.[ \t]*(?:\nOutput:\n)?")
_MISSING = re.compile(r"\AMissing value for required parameter '[^']*'")
_BLOCKED = re.compile(r"\AAccess to .* is blocked by the \.clineignore file settings")
#: Roo Code's (Kilo Code's) editor state names the model under ``# Current Mode`` (``getEnvironmentDetails.ts``).
_MODE_MODEL = re.compile(r"# Current Mode\n(?:<[^>\n]+>[^\n]*\n)*?<model>([^<\n]+)</model>")
_NO_TOOL = "[ERROR] You did not use a tool in your previous response!"
_COMPLETION_FEEDBACK = "The user has provided feedback on the results."
COMPLETION = "attempt_completion"
#: Cline 4.x's messages shown apart from the conversation (``metadata.displayRole``: ``agent-runtime.ts``): a hook's
#: context or a compaction's summary the runtime adds as the user's (``system``), a status line.
_SHOWN_APART = frozenset({"system", "status"})
#: The tools that speak to the user, not act, each read as a ``respond`` step (their words, by this key, its
#: ``content``). Cline 3.x's ``attempt_completion`` (its ``result``) and ``ask_followup_question`` (its
#: ``question``; the user's answer its observation, out of ``<answer>``); Cline 4.x's (``@cline/core``,
#: ``extensions/tools/definitions.ts``) ``submit_and_exit`` (its ``summary``: ``lifecycle.completesRun``) and
#: ``ask_question`` (one ``question`` with 2-5 ``options``; the answer the user's, or in a headless run, no TTY, the
#: first option the CLI picks itself, ``approval.ts``). Cline itself shows them alike (``apps/vscode/src/sdk/
#: message-translator.ts``: ``attempt_completion`` and ``submit_and_exit`` render the same completion). A completion
#: is the run's closing answer, or, the user replying, a turn of a dialogue (``digest.is_dialogue_turn``); a question
#: answered a turn. What differs is the verdict (``_outcome``): 3.x asks the user after a completion, whose silence
#: is the acceptance read; 4.x's ``submit_and_exit`` (enabled only by ``--yolo``) asks no one, and the CLI answers it
#: "Submission recorded (verified): <summary>" whatever happened: no verdict (its echo is no observation). 3.x's
#: ``plan_mode_respond`` and ``act_mode_respond`` (their ``response``) are its words to the user in a plan, at work.
_SUBMIT, _ASK = "submit_and_exit", "ask_question"
_WORDS = {COMPLETION: "result", "ask_followup_question": "question", "plan_mode_respond": "response",
          "act_mode_respond": "response", _SUBMIT: "summary", _ASK: "question"}
#: Of those, the ones whose result is Cline's echo, no one's reply: ``submit_and_exit``'s, and 3.x's
#: ``act_mode_respond``'s "[Message displayed. Now proceed ...]" (``ActModeRespondHandler.ts``: it asks no one).
_ECHOED = frozenset({_SUBMIT, "act_mode_respond"})
#: 3.x's wrapper of the user's reply to a question (``<answer>``: ``AskFollowupQuestionToolHandler.ts``) or a plan
#: (``<user_message>``: ``PlanModeRespondHandler.ts``), then any attached files' text; 4.x's answer is bare.
_REPLY = re.compile(r"\A\s*<(answer|user_message)>\n?(.*?)\n?</\1>", re.S)
#: Calls that hand the turn to the user (a question, a plan, a completion: those with words for the user): one left
#: unanswered when the task stopped awaited the user, it did not fail.
_TO_THE_USER = frozenset(_WORDS)
#: Cline's tools, as the tags of versions before native tool calls name them (``ClineDefaultTool``).
_XML_TOOLS = ("execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
              "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
              "ask_followup_question", "plan_mode_respond", "attempt_completion", "new_task", "web_fetch",
              "load_mcp_documentation", "apply_diff", "insert_content", "search_and_replace", "switch_mode",
              "update_todo_list", "codebase_search", "fetch_instructions")
_XML_CALL = re.compile(r"<(?P<tool>" + "|".join(_XML_TOOLS) + r")>(?P<body>.*?)</(?P=tool)>", re.S)
_XML_PARAM = re.compile(r"<(?P<name>[a-z_]+)>\n?(?P<value>.*?)\n?</(?P=name)>", re.S)
#: The keys of ``task_metadata.json`` (``disk.ts`` ``TaskMetadata``).
_METADATA_KEYS = frozenset({"files_in_context", "model_usage", "environment_history"})
#: The version of Roo Code's history since 2026 (``{"version": 2, "messages": [...]}``: PR #11386).
_ROO_V2 = 2
#: Not ``_agent_cli.NEVER_ANSWERED`` ("the session ends"): a Cline call is closed so where the user resumed the task
#: too, the conversation going on after it (``_Walk.close_pending``): the task stopped, not the records.
_NEVER_ANSWERED = f"{NEVER_FINISHED} (no result recorded: the task stopped while it ran)"
MISTAKE_CAUSE = "the agent kept making mistakes (Cline's consecutive-mistake limit stopped the task)"
#: A Cline 4.x session whose manifest says ``failed`` (``finalizeSingleRun``, ``resolveInteractiveStopStatus``: the
#: run ended on an error) with no error message in its conversation to read the cause from.
_FAILED_CAUSE = "Cline's runtime stopped the session on an error (the provider's, a limit's, a tool's)"
#: Cline 4.x's user messages it writes itself (``metadata.kind``: ``user-run-messages.ts``): compactions, reminders,
#: notices; not the user's words. ``mistake_stop_notice``: its mistake limit stopped the run.
_SYNTHETIC_KINDS = frozenset({"auto_compaction", "compaction", "compaction_summary", "compaction_budget_emergency",
                              "completion_reminder", "loop_detection_notice", "manual_compaction",
                              "mistake_stop_notice", "recovery_notice"})
#: How Cline 4.x's own reminders open (``agent-runtime.ts`` ``addUserReminderMessage``, ``userRunSpan: 0`` with no
#: ``kind`` before it tagged them ``completion_reminder``): a queued message the user typed is ``userRunSpan: 0``
#: too (``consumePendingUserMessage``), so the span alone does not tell them.
_REMINDER = "[SYSTEM] "


def matches(record: Any) -> bool:
    """A Cline 4.x session (``_is_sdk_session``); never a bare message list by content: an Anthropic message list is
    many tools' format; a task folder is told by its files' names (``run_folder``)."""
    return _is_sdk_session(record)


#: The version of Cline 4.x's session messages (``messages-contract-v1.md``).
_SDK_VERSION = 1
#: Cline 4.x's session folder's own files beside ``<session id>.messages.json``: its manifest, its compaction state,
#: its hooks' log (``<id>.hooks.jsonl``, before Apr 2026: ``session-artifacts.ts``).
_SDK_SIDE = re.compile(r"\A(?P<id>[\w.-]+?)(?:(?:\.compaction)?\.json|\.hooks\.jsonl)\Z")
_SDK_MESSAGES = ".messages.json"
#: What joins a sub-agent's (a teammate's) session id to its root's: ``<root id>__<file stem>`` (``makeSubSessionId``).
_SUB_SESSION = "__"
#: How Cline 4.x's shell tool opens a failed command's result (``executors/bash.ts``).
_SDK_EXIT = re.compile(r"\A\[Command exited with code (-?\d+)\]\n?")
#: A command the run's abort killed (``bash.ts``: ``Command was aborted``, as ``Command failed: ...``).
_SDK_ABORTED = re.compile(r"\A(?:Command failed: )?Command was aborted\b")


def _is_sdk_session(record: Any) -> bool:
    """Cline 4.x's ``<session id>.messages.json``: ``{"version": 1, "sessionId", "agent", "messages": [...]}``."""
    return isinstance(record, dict) and record.get("version") == _SDK_VERSION \
        and isinstance(record.get("sessionId"), str) and isinstance(record.get("messages"), list) \
        and isinstance(record.get("agent"), str)


def _is_ui_message(record: Any) -> bool:
    return isinstance(record, dict) and record.get("type") in ("say", "ask") and "ts" in record \
        and isinstance(record.get("say") or record.get("ask"), str)


def not_a_run(record: Any) -> str | None:
    """A ``task_metadata.json`` alone (a task's bookkeeping, whose run is the history beside it), or UI messages
    under another name than ``ui_messages.json`` (so named, read alone: ``run_folder``)."""
    if _is_ui_message(record):
        what = f"UI messages of a task ({UI})"
    elif isinstance(record, dict) and record and set(record) <= _METADATA_KEYS:
        what = f"metadata of a task ({METADATA})"
    else:
        return None
    return (f"Cline's (or Roo Code's, Kilo Code's) {what}, without the {HISTORY} that holds its run beside it: "
            f"ingest the whole task folder (.../saoudrizwan.claude-dev/tasks/<task id>/)"
            + (f", or save this file as {UI} (so named, it is read alone, as the UI showed the run)"
               if what.startswith("UI") else ""))


def run_folder(path: Path) -> Path | None:
    """The task folder ``path`` stands for: a folder holding ``api_conversation_history.json``, or one of the files
    read with it (``FILES``); or, without the history, a folder holding Cline's UI messages (``_ui_alone``)."""
    folder = path.parent if path.is_file() and path.name in FILES else path
    if not folder.is_dir():
        return None
    return folder if (folder / HISTORY).is_file() or _ui_alone(folder) is not None else None


#: How much of a UI log is read to tell it (its first message, unless the task holds images: then the whole file).
_UI_HEAD = 65536


def _ui_alone(folder: Path) -> Path | None:
    """The UI messages of a task folder without its history (``ui_messages.json``, ``claude_messages.json``), when
    its first message is one of Cline's (``_is_ui_message``: whatever its keys' order, after a BOM or not, as the
    loader reads it): another tool's file of that name is left to detection."""
    for name in (UI, OLD_UI):
        if (folder / name).is_file():
            with (folder / name).open(encoding="utf-8-sig", errors="replace") as f:
                head = f.read(_UI_HEAD)
                if not (opening := re.match(r"\s*\[\s*(?=\{)", head)):
                    return None
                try:
                    first = _first_value(head, opening.end())
                except ValueError:  # cut off by the head: the first message is longer
                    try:
                        first = _first_value(head + f.read(), opening.end())
                    except ValueError:
                        return None
            return folder / name if _is_ui_message(first) else None
    return None


def _first_value(text: str, at: int) -> Any:
    """The JSON value at ``at``; a ValueError, as for any malformed one, where it is nested deeper than Python reads
    (its RecursionError made the whole data folder unreadable, the good tasks beside it lost)."""
    try:
        return json.JSONDecoder(strict=False).raw_decode(text, at)[0]
    except RecursionError:
        raise ValueError("JSON nested deeper than Python reads") from None


def folder_files(folder: Path) -> list[Path]:
    return [folder / name for name in FILES if (folder / name).is_file()]


def _beside_data(folder: Path) -> bool:
    """Whether ``folder`` is Cline's data folder: it holds ``tasks/`` (3.x outside VS Code) or ``sessions/`` (4.x)."""
    return (folder / "tasks").is_dir() or (folder / "sessions").is_dir()


def side_path(path: Path, fmt: str | None) -> str | None:
    """Another file of a task folder (``_OWN_FILES``): the task's own bookkeeping; Roo Code's index of its tasks
    (``_index.json``) beside the task folders; the extension's own ``state/``, ``settings/`` JSON beside its
    ``tasks/`` (``taskHistory.json``, ``cline_mcp_settings.json``: written by every install), and its data folder's
    ``globalState.json`` and ``secrets.json`` (``~/.cline/data``: Cline 3.x outside VS Code, 4.x)."""
    if _OWN_FILES.match(path.name) and (path.parent / HISTORY).is_file():
        return f"a Cline task's own file beside its {HISTORY} (read with the task folder)"
    if (own := _SDK_SIDE.match(path.name)) and not path.name.endswith(_SDK_MESSAGES) \
            and (path.parent / (own.group("id") + _SDK_MESSAGES)).is_file():
        return f"a Cline 4.x session's own file beside its {own.group('id')}{_SDK_MESSAGES} (the run)"
    if path.name == _TASKS_INDEX and any((d / HISTORY).is_file() for d in path.parent.iterdir() if d.is_dir()):
        return "Roo Code's index of the task folders beside it (each read as its own run)"
    if any(a.name in _DATA_FOLDERS and _beside_data(a.parent) for a in path.parents):
        return "Cline's own state, settings, logs or caches beside its tasks/ or sessions/ (each task folder or " \
               "session there is read as its own run)"
    if path.name in _DATA_FILES and _beside_data(path.parent):
        return "Cline's own state beside its tasks/ or sessions/ (each task folder or session there is read as a run)"
    return None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    """A Cline 4.x session (``_is_sdk_session``), or a file forced to this format: its conversation alone (a renamed
    ``api_conversation_history.json``)."""
    if not _is_sdk_session(record):
        return read_folder({HISTORY: record}, ctx)
    origin = as_dict(record.get("origin"))
    folder = ctx.source if ctx.source.is_dir() else ctx.source.parent
    stem = ctx.source.name.removesuffix(_SDK_MESSAGES)
    session_id, parent, children, status = record["sessionId"], None, None, {}
    if record["agent"] != "lead":
        parent = as_str(origin.get("parentThreadId"))
        if _SUB_SESSION not in session_id and stem != session_id:  # before Aug 2026: the root's id, no origin
            parent, session_id = parent or session_id, f"{session_id}{_SUB_SESSION}{stem}"
        parent = parent or folder.name
    else:
        children = [f"{session_id}{_SUB_SESSION}{p.name.removesuffix(_SDK_MESSAGES)}"
                    for p in sorted(folder.glob("*" + _SDK_MESSAGES)) if p.name != ctx.source.name]
    status = _session_status(folder, stem)
    return read_folder({HISTORY: record["messages"], HISTORY_ITEM: {
        "id": session_id, "parentTaskId": parent, "childIds": children}}, ctx,
        {"agent": record["agent"], "cline_version": as_str(origin.get("version")), **status})


#: Cline 4.x's session database beside ``sessions/`` (``~/.cline/data/db/sessions.db``: ``resolveDbDataDir``,
#: ``sqlite-session-store.ts``), its ``sessions`` table a row per session, a sub-agent's and a teammate's too.
_SESSIONS_DB = Path("db") / "sessions.db"


def _session_status(folder: Path, stem: str) -> dict[str, Any]:
    """How a Cline 4.x session ended: ``{"session_status", "session_exit_code", "session_status_from"}``
    (``manifest``, ``sessions.db``), empty where nothing says. A lead's manifest ``<id>.json``
    (``SessionManifestSchema``, rewritten at shutdown: ``local-runtime-host.ts``); a sub-agent (a teammate), which
    has none, its row in ``db/sessions.db`` (its id ``<root id>__<file stem>``, ``makeSubSessionId``), whose
    ``status`` Cline sets as a lead's when the sub-agent ends (``team-child-session-manager.ts``: ``failed`` on its
    error, ``cancelled`` aborted, else ``completed``), in Cline's default layout (``CLINE_DB_DATA_DIR`` or
    ``CLINE_SESSION_DATA_DIR`` set, the database is elsewhere: none is read). A manifest or a database there that
    cannot be read (a manifest cut short while Cline rewrote it, or nested past what JSON is read to) leaves
    ``session_status_unread``, why, so a status not read is told from one Cline never wrote; the run is kept."""
    unread = None
    if (manifest := folder / f"{stem}.json").is_file():
        try:
            said, why = parse(manifest.read_text(encoding="utf-8"), "file")
        except (OSError, ValueError) as e:  # (a ValueError: not UTF-8)
            return {"session_status_unread": f"{manifest}: {e}"}
        if not isinstance(said, dict):
            return {"session_status_unread": f"{manifest}: {why or 'not a JSON object'}"}
        status, code, where = as_str(said.get("status")), as_int(said.get("exit_code")), "manifest"
    else:
        rows, unread = _db_statuses(folder.parent.parent / _SESSIONS_DB)
        row = rows.get(stem if stem == folder.name else f"{folder.name}{_SUB_SESSION}{stem}", (None, None))
        status, code, where = as_str(row[0]), as_int(row[1]), _SESSIONS_DB.name
    return {"session_status": status, **({"session_exit_code": code} if code else {}),
            "session_status_from": where} if status else {"session_status_unread": unread} if unread else {}


def _db_statuses(path: Path) -> tuple[dict[str, tuple[Any, Any]], str | None]:
    """Every session's ``(status, exit_code)`` in Cline's ``sessions.db`` (none where there is none), and why it
    could not be read, if so; read once while the database and its write-ahead log stay as they were
    (``_db_rows``)."""
    try:
        stamps = tuple((p.stat().st_mtime_ns, p.stat().st_size) if p.is_file() else None
                       for p in (path, path.with_name(path.name + "-wal")))
    except OSError as e:
        return {}, f"{path}: {e}"
    return _db_rows(path, stamps) if stamps[0] else ({}, None)


@lru_cache(maxsize=4)
def _db_rows(path: Path, stamps: tuple[Any, ...]) -> tuple[dict[str, tuple[Any, Any]], str | None]:
    """``_db_statuses``' read (``stamps``: the files' sizes and times, the cache's key). Cline keeps the database in
    WAL mode, its rows in the ``-wal`` until a checkpoint (all of them in the real one cline@3.0.65 left): read with
    it, but from a copy, as SQLite opening it in place would write a ``-shm`` into Cline's folder (a walk, a dry run
    too, writes nothing where it reads: ``detect._sqlite_tables``)."""
    with tempfile.TemporaryDirectory(prefix="trajsearch-cline-") as scratch:
        try:
            for name in (path.name, path.name + "-wal"):
                if (path.parent / name).is_file():
                    shutil.copyfile(path.parent / name, Path(scratch) / name)
            with closing(sqlite3.connect(Path(scratch, path.name))) as db:
                return {sid: (status, code) for sid, status, code in db.execute(
                    "SELECT session_id, status, exit_code FROM sessions")}, None
        except (OSError, sqlite3.Error) as e:
            return {}, f"{path}: {e}"


def read_with_value(path: Path) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a Cline 4.x session's outcome is read beside it
    (``_session_status``: its manifest, a sub-agent's row of ``db/sessions.db``), so an ingest's checkpoint reads the
    session again when that changed (a run ingested while Cline ran, read again once it ended), not when another
    session's row did."""
    if not path.name.endswith(_SDK_MESSAGES):
        return None
    status = _session_status(path.parent, path.name.removesuffix(_SDK_MESSAGES))
    return repr(status) if status else None


def read_folder(files: dict[str, Any], ctx: Context, session: dict[str, Any] | None = None) -> Trajectory:
    """A task folder's run; ``session``: what a Cline 4.x session file says of itself (its agent)."""
    if HISTORY not in files and (UI in files or OLD_UI in files):
        if (ctx.source / HISTORY).exists():  # there, but it could not be read: the run is in it, not in the UI log
            raise RecordError(f"{HISTORY}: could not be read (not whole JSON: cut short, or being written?), and "
                              f"the run is read from it, not from the {UI if UI in files else OLD_UI} beside it")
        return _read_ui(files, ctx)
    history = files.get(HISTORY)
    where = ctx.source.name if session else HISTORY  # Cline 4.x's ``<session id>.messages.json``
    if session is not None and history == []:  # ``writeEmptyMessagesFile``: at every session's start
        raise RecordError(f"{where}: a Cline session with no messages yet (Cline writes the file empty when a "
                          f"session starts; this one never sent its first prompt)")
    if isinstance(history, dict) and history.get("version") == _ROO_V2 and isinstance(history.get("messages"), list):
        history = history["messages"]
    if not isinstance(history, list) or not history:
        raise RecordError(f"{HISTORY} holds no messages (a Cline task's conversation is a JSON array of "
                          f"{{role, content}} messages, Roo Code's since 2026 {{\"version\": 2, \"messages\": "
                          f"[...]}}; found {'an empty array' if history == [] else json_kind(history)})")
    for n, message in enumerate(history):
        if not isinstance(message, dict) or (message.get("role") not in ("user", "assistant", "tool")
                                             and message.get("type") != "reasoning"):
            raise RecordError(f"{where}: message {n} is not a {{role: user|assistant, content}} message "
                              f"(found {json_kind(message)})")
    history = [m for m in map(_anthropic, history) if m is not None]
    if history[0]["role"] != "user":
        raise RecordError(f"{where}: the conversation opens with an assistant message, not the user's task")
    ui = [m for m in as_list(files.get(UI, files.get(OLD_UI))) if isinstance(m, dict)]
    task = _task(history[0].get("content"))
    if not task:
        raise RecordError(f"{where}: the first user message holds no task text (only what Cline appends to it)")
    walk = _Walk()
    for message in history[1:]:
        walk.message(message)
    walk.close()
    return _trajectory(files, ctx, task, walk, history[0], ui, history, session or {})


def _read_ui(files: dict[str, Any], ctx: Context) -> Trajectory:
    """A task whose UI messages lie without its history: the run as the UI showed it (``_ui_steps``)."""
    name = UI if UI in files else OLD_UI
    ui = files[name]
    if not isinstance(ui, list) or not ui or not _is_ui_message(ui[0]):
        raise RecordError(f"{name} holds no UI messages (Cline's are a JSON array of {{ts, type: say|ask, say|ask, "
                          f"text}}; found {'an empty array' if ui == [] else json_kind(ui)})")
    ui = [m for m in ui if isinstance(m, dict)]
    task = as_str(ui[0].get("text")) if ui[0].get("say") in ("task", "text") else None
    if not task or not task.strip():
        raise RecordError(f"{name}: the first message is not the task (a say of kind task or text with its text; "
                          f"found {ui[0].get('type')} {ui[0].get('say') or ui[0].get('ask')!r})")
    walk = _ui_steps(ui[1:])
    return _trajectory(files, ctx, task.strip(), walk, ui[0], ui, [], {
        "read_from": f"{name} alone (no {HISTORY} beside it): the steps as the UI showed them, without the tool "
                     "results the model saw"})


def _trajectory(files: dict[str, Any], ctx: Context, task: str, walk: _Walk, first: dict[str, Any],
                ui: list[dict[str, Any]], history: list[dict[str, Any]], read_from: dict[str, Any]) -> Trajectory:
    """The run of a task folder, from its walked steps: id, outcome, model, metadata (see the module docstring)."""
    meta = as_dict(files.get(METADATA))
    item = as_dict(files.get(HISTORY_ITEM))
    task_id = _task_id(ctx.source, item, first, ui)
    parent = as_str(item.get("parentTaskId"))
    outcome, failure, basis = _outcome(walk, ui, read_from)
    usage = [as_dict(u) for u in as_list(meta.get("model_usage"))]
    model = next((as_str(u.get("model_id")) for u in usage if as_str(u.get("model_id"))), None) \
        or next((said for m in [*history, *ui] if (said := as_str(as_dict(m.get("modelInfo")).get("modelId"))
                                                       or as_str(as_dict(m.get("modelInfo")).get("id")))), None) \
        or next((found.group(1).strip() for b in _blocks(first.get("content"))
                 if isinstance(b.get("text"), str) and (found := _MODE_MODEL.search(b["text"]))), None)
    version = next((as_str(as_dict(e).get("cline_version")) for e in as_list(meta.get("environment_history"))
                    if as_str(as_dict(e).get("cline_version"))), None) or read_from.pop("cline_version", None)
    metadata = {
        "cline_task_id": task_id,
        "provider": next((as_str(u.get("model_provider_id")) for u in usage), None)
        or next((said for m in history if (said := as_str(as_dict(m.get("modelInfo")).get("provider")))), None),
        "modes": sorted({m for u in usage if (m := as_str(u.get("mode")))}) or None,
        "user_prompts": prompt_list(list(dict.fromkeys(walk.prompts))) or None,  # a resumed prompt is repeated
        "resumptions": walk.resumptions or None,
        "is_subagent": True if parent else None,  # a subtask (Roo Code's new_task), a sub-agent (Cline 4.x)
        "parent_session_id": parent,
        "subagent_sessions": [c for c in as_list(item.get("childIds")) if isinstance(c, str)] or None,
        "no_tool_nudges": walk.nudges or None,
        "compactions": walk.compactions or None,
        "compaction_summary": clip_step_text(walk.summary),
        "files_edited": sorted({as_str(as_dict(f).get("path")) for f in as_list(meta.get("files_in_context"))
                                if as_dict(f).get("record_source") == "cline_edited"} - {None}) or None,
        "history_truncated": any("conversationHistoryDeletedRange" in m for m in ui) or None,
        "interrupted": True if read_from.get("session_status") == "cancelled" else None,  # Cline 4.x: stopped
        **(_metrics(history) if "agent" in read_from else _usage(ui)),  # 3.x's own ``metrics`` are not these
        **read_from,
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{task_id}", task=task, model_id=model, steps=walk.steps, metadata=metadata,
        last_error=None, error_cause=API_ERROR_CAUSE,
        verdict=(outcome, None, failure, basis) if outcome is not Outcome.unknown else None,
        created_at=first_time(*(m.get("ts") for m in ui[:1]), first.get("ts"),
                              int(task_id) if task_id.isdigit() and len(task_id) == 13 else None),
        tool_versions={"cline": version} if version else None)


def _anthropic(message: Any) -> Any:
    """A message of Roo Code's v2 history (AI SDK parts, ``rooMessage.ts``) in the Anthropic shape Cline's is:
    ``tool-call`` parts as ``tool_use``, a ``tool`` message's ``tool-result`` parts as a user's ``tool_result``, a
    reasoning item of its own as the assistant's reasoning (None where it keeps no text: encrypted). Cline's and
    Roo Code's older messages are this shape already: unchanged."""
    if not isinstance(message, dict):
        return message
    if message.get("type") == "reasoning" and "role" not in message:
        said = "\n".join(as_str(as_dict(s).get("text")) or "" for s in as_list(message.get("summary"))).strip()
        return {"role": "assistant", "content": [{"type": "reasoning", "text": said}], "ts": message.get("ts")} \
            if said else None
    blocks = _blocks(message.get("content"))
    if message.get("role") == "tool":
        return {**message, "role": "user", "content": [
            {"type": "tool_result", "tool_use_id": p.get("toolCallId"), "content": _output(p.get("output"))}
            for p in blocks if p.get("type") == "tool-result"]}
    if message.get("role") == "assistant" and any(p.get("type") == "tool-call" for p in blocks):
        return {**message, "content": [
            {"type": "tool_use", "id": p.get("toolCallId"), "name": p.get("toolName"), "input": p.get("input")}
            if p.get("type") == "tool-call" else p for p in blocks]}
    return message


def _output(output: Any) -> str:
    """The text of an AI SDK tool result's ``output`` (``sdk_tool_output``; a denial as Cline words it)."""
    if isinstance(output, str):
        return output
    said = sdk_tool_output(as_dict(output))
    return _DENIED if said.denied else said.text


def _task_id(source: Path, item: Any, first: dict[str, Any], ui: list[dict[str, Any]]) -> str:
    """The task's id, as the files name it, not where they lie (see the module docstring). ``first``: the first
    message of the history (of the UI, read alone)."""
    if found := as_str(as_dict(item).get("id")):
        return found
    if found := _TASK_ID.search((source if source.is_dir() else source.parent).name):
        return found.group(1)
    started = next((t for t in (first.get("ts"), *(m.get("ts") for m in ui[:1]))
                    if isinstance(t, int) and not isinstance(t, bool)), None)
    if started is not None:
        return str(started)
    said = json.dumps(first.get("content", first.get("text")), sort_keys=True, ensure_ascii=False)
    return "task-" + hashlib.sha1(said.encode()).hexdigest()[:12]


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in as_list(content) if isinstance(b, dict)]


def _task(content: Any) -> str:
    texts = [b["text"] for b in _blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]
    for text in texts:
        if found := _TASK_TAG.search(text):
            return _MODE_NOTICE.sub("", found.group(2)).strip()
    return "\n\n".join(t.strip() for t in texts if t.strip() and not _INJECTED.match(t)).strip()


class _Walk(SessionSteps):
    """The conversation after the task, message by message: steps, and what the user said between them."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[dict[str, Any]] = []  # calls not yet answered, in order
        self.resumptions = 0
        self.nudges = 0
        self.completion_feedback = False  # the user spoke after the last completion attempt
        self.ended_on: str | None = None  # the provider's error the task stopped on, with no work after it
        self.mistake_stop = False  # Cline 4.x's mistake limit stopped the run (``mistake_stop_notice``)
        self.completed = False  # the task's last call was an attempt_completion that ran (``close``)
        self.compactions = 0  # Roo Code's context condensing summaries (``isSummary``)
        self.summary: str | None = None  # the last one's text (before 2026 it replaced the messages it summed up)

    def message(self, message: dict[str, Any]) -> None:
        said = as_dict(message.get("metadata"))
        shown, kind = as_str(said.get("displayRole")), as_str(said.get("kind"))
        blocks = _blocks(message.get("content"))
        if shown == "error":  # Cline 4.x: the provider's error, shown as the assistant's (``displayOnly``)
            self.flush()
            self.ended_on = error_line(parts_text(blocks), "API request failed")
            return
        if (shown in _SHOWN_APART or kind in _SYNTHETIC_KINDS or said.get("userRunSpan") == 0
                and parts_text(blocks).startswith(_REMINDER)) \
                and not any(b.get("type") == "tool_result" for b in blocks):
            self.mistake_stop = self.mistake_stop or kind == "mistake_stop_notice"
            return  # Cline 4.x: a hook's context, a status, a reminder the runtime added, not the user's words
        if message.get("isSummary") or message.get("isTruncationMarker"):  # Roo Code's, not the user's or model's
            if message.get("isSummary"):
                self.compactions += 1
                self.summary = next((t for b in blocks if (t := as_str(b.get("text")))), self.summary)
            return
        if message["role"] == "assistant":
            self.ended_on = None
            self._assistant(blocks, message.get("ts"))
        else:
            self._user(blocks)

    def _assistant(self, blocks: list[dict[str, Any]], ts: Any) -> None:
        for block in blocks:
            kind = block.get("type")
            if kind == "thinking" and isinstance(block.get("thinking"), str):
                self.thought.append(block["thinking"])
            elif kind == "reasoning" and isinstance(block.get("text"), str):  # Roo Code's, of other providers
                self.thought.append(block["text"])
            elif kind == "text" and isinstance(block.get("text"), str):
                text, calls = block["text"], list(_XML_CALL.finditer(block["text"]))
                if said := (text[:calls[0].start()] if calls else text).strip():
                    self.say(said, ts)
                for call in calls:
                    params = {p.group("name"): p.group("value") for p in _XML_PARAM.finditer(call.group("body"))}
                    self.call(call.group("tool"), params, None, ts)
            elif kind == "tool_use":
                self.call(str(block.get("name") or "tool"), block.get("input"), as_str(block.get("id")), ts)

    def call(self, name: str, arguments: Any, call_id: str | None, at: Any, *, awaits_result: bool = True) -> None:
        """A call the model made at ``at``; ``awaits_result``: a result will answer it (the UI log's calls get none)."""
        step = self.open_call(call_id, name, arguments, at)
        if awaits_result:
            self.pending.append(step)
        if name == COMPLETION:
            self.completion_feedback = False

    def _user(self, blocks: list[dict[str, Any]]) -> None:
        self.flush()
        self.thought = []  # reasoning no text or call followed
        current: dict[str, Any] | None = None  # a result whose text follows in the next blocks (before native calls)
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                step = self._next(None, self.by_call.get(str(block.get("tool_use_id"))))
                operations = _operations(block.get("content"))
                body = operations[0] if operations else _RESULT.sub("", parts_text(block.get("content")), count=1)
                current = self._answer(step, body) if step is not None else None
                if current is not None and not current.get("error"):  # Cline 4.x's: its operations', is_error
                    current["error"] = operations[1] if operations else \
                        error_line(body) if block.get("is_error") is True else None
                continue
            text = block.get("text") if kind == "text" else None
            if not isinstance(text, str):
                continue
            if head := _RESULT.match(text):
                step = self._next(head.group("tool"))
                current = self._answer(step, text[head.end():]) if step is not None else _UNPLACED
            elif skipped := _NOT_EXECUTED.match(text):
                if (step := self._next(skipped.group("tool"))) is not None:
                    self._answer(step, text)
                current = None
            elif _RESUMED.match(text):
                self.close_pending()
                current = None
                if text.lstrip().startswith("[TASK RESUMPTION]"):
                    self.resumptions += 1
                if said := _FEEDBACK.search(text):
                    self.prompt(said.group(2))
            elif said := _SAID.match(text):
                self.prompt(said.group(2))
            elif text.startswith(_COMPLETION_FEEDBACK):
                self.completion_feedback = True
            elif text.startswith(_NO_TOOL):
                self.nudges += 1
            elif _INJECTED.match(text):
                current = None
            elif current is not None and not current.get("observation"):
                self._answer(current, text)  # the result's text, in a block after its ``Result:`` line
            elif current is None:
                self.prompt(text)

    def prompt(self, text: str) -> None:
        """The user's words: a later prompt, and, after a completion attempt, the user's reply to it."""
        if text := _MODE_NOTICE.sub("", text).strip():
            self.prompts.append(text)
            self.completion_feedback = True  # a new call to attempt_completion sets it back

    def _next(self, tool: str | None, step: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The call a result answers: ``step`` (by its id); else the first not yet answered of ``tool``, where the
        result names one (or one whose name ends in it: Cline answers ``use_subagents`` as ``[subagents]``), else
        none; a result naming no tool, the first not yet answered."""
        if step is None:
            candidates = [s for s in self.pending if tool is None or s["action"] == tool] \
                or [s for s in self.pending if tool is not None and s["action"].endswith("_" + tool)]
            step = candidates[0] if candidates else None
        if step in self.pending:
            self.pending.remove(step)
        return step

    def _answer(self, step: dict[str, Any], body: str) -> dict[str, Any]:
        body = strip_terminal_codes(body).strip()
        step["observation"], step["error"] = _result(step, body)
        if step["action"] == COMPLETION and (said := _SAID.match(body)):  # Roo Code's reply in the result
            self.prompt(said.group(2))
        return step

    def close_pending(self) -> None:
        """Calls still pending where the task stopped (or was resumed): none will get its result."""
        for step in self.pending:
            if step["action"] not in _TO_THE_USER:
                step["error"] = _NEVER_ANSWERED
        self.pending = []

    def close(self) -> None:
        """Not ``SessionSteps.close``: ``by_call`` keeps every call by its id, answered or not (the UI log's too,
        which await none); the calls never answered are those ``pending``. Then whether the last call was a
        completion that ran (``completed``: the verdict's rule, ``_outcome``), and the words to the user (``_WORDS``)
        become ``respond`` steps: after, as a completion is the last call, not the answer text after it."""
        self.flush()
        self.close_pending()
        calls = [s for s in self.steps if s["action"] != RESPOND]
        self.completed = bool(calls) and calls[-1]["action"] == COMPLETION and not calls[-1].get("error")
        for step in self.steps:
            words = as_dict(step["arguments"]).get(_WORDS.get(step["action"], ""))
            if isinstance(words, str) and words.strip() and not step.get("error"):
                key, reply = _WORDS[step["action"]], step.get("observation")
                if step["action"] in _ECHOED:
                    step["observation"] = None
                elif isinstance(reply, str) and (wrapped := _REPLY.match(reply)):
                    said = (wrapped[2].strip(), reply[wrapped.end():].strip())  # the reply, then any files
                    step["observation"] = "\n\n".join(t for t in said if t) or None
                rest = {k: v for k, v in step["arguments"].items() if k != key}
                if isinstance(rest.get("options"), str) and isinstance(options := _json(rest["options"]), list):
                    rest["options"] = options  # 3.x's JSON text of them, as 4.x's list
                step["action"] = RESPOND
                step["arguments"] = {**rest, "content": words.strip()}  # last: ``content`` overwrites no words


#: The UI's tool messages (``ClineSayTool.tool``) as the calls the history names: ``{"tool": "readFile", "path",
#: "content", ...}``.
_UI_TOOLS = {"editedExistingFile": "replace_in_file", "newFileCreated": "write_to_file", "readFile": "read_file",
             "listFilesTopLevel": "list_files", "listFilesRecursive": "list_files", "searchFiles": "search_files",
             "listCodeDefinitionNames": "list_code_definition_names", "webFetch": "web_fetch",
             # Roo Code's own (its ``ClineSayTool``): its subtask, mode switch, todo list, diff edit, and its
             # tools of 2025-2026 (``src/core/tools/*Tool.ts``), named as its history names them
             "newTask": "new_task", "switchMode": "switch_mode", "updateTodoList": "update_todo_list",
             "appliedDiff": "apply_diff", "codebaseSearch": "codebase_search", "runSlashCommand": "run_slash_command",
             "generateImage": "generate_image", "readCommandOutput": "read_command_output"}
#: An edit's SEARCH/REPLACE block (``replace_in_file``'s ``diff``; before Cline 3.1x ``<<<<<<< SEARCH``): an
#: ``editedExistingFile`` without one wrote the file whole (``write_to_file``).
_SEARCH_BLOCK = re.compile(r"^(?:-{3,}|<{3,}) SEARCH\s*$", re.M)
#: Of these, the ones whose ``content`` is what the tool found (the UI shows it; a read file's is its path).
_UI_FOUND = frozenset({"listFilesTopLevel", "listFilesRecursive", "searchFiles", "listCodeDefinitionNames"})
#: UI messages that end the output of the command before them: a message of the model's, a call, the user's words.
_UI_TURN = frozenset({"text", "reasoning", "command", "tool", "use_mcp_server", "completion_result", "followup",
                      "plan_mode_respond", "user_feedback", "api_req_started", "error", "diff_error",
                      "load_mcp_documentation", "browser_action_launch", "browser_action", "new_task"})
#: A ``diff_error``'s text: Cline's the file's path; Roo Code's (``ApplyDiffTool.ts``, ``EditFileTool.ts``) why its
#: edit failed, after a sentence naming the file where it names one (``Unable to apply diff to file: <path>``,
#: ``No match found in file: <path>``, ``Occurrence count mismatch in file: <path>`` ...).
_ROO_DIFF_ERROR = re.compile(r"\A(?:[^\n:]+: (?P<path>[^\n]*)\n\n)?<error_details>\n(?P<why>.*)", re.S)
_DIFF_FAILED = "the edit's diff did not apply to the file (diff_error)"
#: Calls the user's next words answer (a question, a plan, a subtask the user declined with feedback).
_UI_ANSWERED = ("ask_followup_question", "plan_mode_respond", "new_task")


def _ui_steps(ui: list[dict[str, Any]]) -> _Walk:
    """The steps of a task as its UI messages show them (``ExtensionMessage.ts``), after the task: ``reasoning`` and
    ``text`` the thought of the call they precede (else the model's answer); a ``command`` (say or ask: run
    automatically or after the user approved it) with the ``command_output`` messages that follow as its output, an
    error when the output ends as a failed command's does (``ended_failing``: the UI keeps no exit code); a ``tool``
    as the call its kind is (``_UI_TOOLS``; Roo Code's ``finishTask``, the user's approval of a subtask's completion,
    none); ``use_mcp_server`` with its ``mcp_server_response``; a
    ``completion_result`` as ``attempt_completion``; ``followup`` and ``plan_mode_respond`` as their calls, answered
    by the ``user_feedback`` after them; other ``user_feedback`` the user's prompts; ``error`` the error of the call
    before it in the same turn, ``diff_error`` an edit that did not apply (Roo Code's, its ``apply_diff`` of that turn,
    or one of its own, with why). The browser (``BrowserToolHandler.ts``):
    ``browser_action_launch`` (say or ask; its text the URL) and ``browser_action`` (``{action, coordinate,
    text}``) are ``browser_action`` calls, the ``browser_action_result`` after them (``{logs, currentUrl,
    screenshot}``) their result (the page's address and console logs; the screenshot is an image, left out). An
    ask ``new_task`` (its text the context handed on) is the ``new_task`` call, answered by the ``user_feedback``
    after it where the user declined; Roo Code's subtask's result (``subtask_result``, written into the parent's log
    when the subtask ends) answers its ``new_task``, and its ``codebase_search_result`` (``{tool, content}``) the
    ``codebase_search`` before it. What the model saw of a result (a file's text, an exit code) is not in the
    UI."""
    walk = _Walk()
    commands: list[tuple[dict[str, Any], list[str]]] = []
    output: list[str] | None = None  # the output of the command whose output messages follow
    call: dict[str, Any] = {}  # the model's last call in this turn (its error, its MCP response follow it)
    for n, m in enumerate(ui):
        kind, text = m.get("say") or m.get("ask"), as_str(m.get("text")) or ""
        if kind == "command_output":
            if output is not None:
                output.append(text)
            continue
        if kind in _UI_TURN:
            output = None
        if kind == "api_req_started":  # the model's next turn: what it said and called no tool after is its answer
            walk.flush()
            walk.thought, call = [], {}
        elif kind == "reasoning" and text.strip():
            walk.thought.append(text)
        elif kind == "text" and text.strip():
            walk.say(text, m.get("ts"))
        elif kind == "command" and text.strip():
            output = []
            call = _ui_call(walk, m, "execute_command", {"command": text})
            commands.append((call, output))
        elif kind == "tool" and isinstance(said := _json(text), dict) and said.get("tool") != "finishTask":
            # (``finishTask``: Roo Code asks the user to approve a subtask's completion, no call of the model's)
            tool = as_str(said.get("tool")) or "tool"
            arguments = {k: v for k, v in said.items() if k not in ("tool", "content", "operationIsLocatedInWorkspace")}
            action = _UI_TOOLS.get(tool, tool)
            if tool not in _UI_FOUND and tool != "readFile" and isinstance(said.get("content"), str):
                if tool == "editedExistingFile" and not _SEARCH_BLOCK.search(said["content"]):
                    action = "write_to_file"  # a file written anew over the old
                arguments["diff" if action == "replace_in_file" else "content"] = said["content"]
            call = _ui_call(walk, m, action, arguments)
            if tool in _UI_FOUND and isinstance(said.get("content"), str):
                call["observation"] = said["content"]
        elif kind == "use_mcp_server" and isinstance(said := _json(text), dict):
            call = _ui_call(walk, m, as_str(said.get("type")) or "use_mcp_tool",
                            {k: said[k] for k in ("serverName", "toolName", "arguments", "uri") if k in said})
        elif kind == "mcp_server_response" and call.get("action", "").endswith("_mcp_tool"):
            call["observation"] = text
            if text.startswith("Error:"):
                call["error"] = error_line(text[len("Error:"):])
        elif kind == "codebase_search_result" and call.get("action") == "codebase_search":
            found = as_dict(_json(text)).get("content")
            call["observation"] = json.dumps(found, ensure_ascii=False) if found is not None else text
        elif kind == "subtask_result" and (asked := next((s for s in reversed(walk.steps) if s["action"] == "new_task"
                                                           and "observation" not in s), None)):
            asked["observation"] = text
        elif kind == "load_mcp_documentation":
            call = _ui_call(walk, m, kind, {})
        elif kind == "browser_action_launch" and text.strip():
            call = _ui_call(walk, m, "browser_action", {"action": "launch", "url": text.strip()})
        elif kind == "browser_action" and isinstance(said := _json(text), dict):
            call = _ui_call(walk, m, "browser_action", {k: v for k, v in said.items() if v is not None})
        elif kind == "browser_action_result" and call.get("action") == "browser_action" \
                and isinstance(said := _json(text), dict):  # not the empty one Cline shows while the page loads
            call["observation"] = "\n".join([*([said["currentUrl"]] if as_str(said.get("currentUrl")) else []),
                                              as_str(said.get("logs")) or "(No new logs)"])
        elif kind == "new_task" and m.get("type") == "ask" and text.strip():
            call = _ui_call(walk, m, "new_task", {"context": text})
        elif kind == "completion_result" and text.strip() \
                and (m.get("type") == "say" or call.get("action") != COMPLETION):  # versions that ask it alone
            call = _ui_call(walk, m, COMPLETION, {_WORDS[COMPLETION]: text})
        elif kind in ("followup", "plan_mode_respond") and m.get("type") == "ask":
            said = _json(text)
            name = "ask_followup_question" if kind == "followup" else kind
            _ui_call(walk, m, name, said if isinstance(said, dict) else {_WORDS[name]: text})
        elif kind == "user_feedback":
            last = walk.steps[-1] if walk.steps else {}
            if last.get("action") in _UI_ANSWERED and "observation" not in last:
                last["observation"] = text  # the user's answer
            else:
                walk.prompt(text)
        elif kind == "error" and call and not call.get("error"):
            call["error"] = error_line(text)
        elif kind == "diff_error" and (roo := _ROO_DIFF_ERROR.match(text)):
            if call.get("action") != "apply_diff" or call.get("error"):  # else the edit it showed before failing
                call = _ui_call(walk, m, "apply_diff", {"path": roo["path"]} if roo["path"] else {})
            call["error"] = short(roo["why"].strip().split("\n", 1)[0], 300) or _DIFF_FAILED
        elif kind == "diff_error":  # its text is the file's path; the diff the model sent is not shown
            call = _ui_call(walk, m, "replace_in_file", {"path": text})
            call["error"] = _DIFF_FAILED
        elif kind in ("resume_task", "resume_completed_task") and n + 1 < len(ui):
            walk.resumptions += 1
    for step, said in commands:
        if joined := strip_terminal_codes("".join(said)).strip():
            step["observation"] = joined
            step["error"] = step.get("error") or ended_failing(joined)
    walk.close()  # as the history's walk ends: the same respond steps, the same verdict's rule
    return walk


def _ui_call(walk: _Walk, message: dict[str, Any], name: str, arguments: Any) -> dict[str, Any]:
    """A call the UI shows, as the history's walk takes one (its thought, and a completion's bookkeeping)."""
    at = walk.narration_at if walk.narration else message.get("ts")
    walk.call(name, arguments, None, at, awaits_result=False)  # the UI log holds no result the model saw
    return walk.steps[-1]


def _json(text: str) -> Any:
    """A message's JSON text; a raw control character in a string (as real files hold) is read, not refused."""
    try:
        return loads(text, strict=False)
    except ValueError:
        return None


def _result(step: dict[str, Any], body: str) -> tuple[str | None, str | None]:
    """(observation, error) of a call's result text."""
    if body.startswith(_DENIED):
        return body, not_run("denied by the user")
    if skipped := _NOT_EXECUTED.match(body):
        return body, not_run(skipped.group("why").split(". ")[0].rstrip("."))
    if _BLOCKED.match(body):
        return body, not_run(short(body.split("\n", 1)[0], 300))
    if (said := _status(body)) is not None:
        return body, said
    if failed := _TOOL_ERROR.match(body):
        return body, error_line(failed.group(1))
    if _MISSING.match(body):
        return body, body.split("\n", 1)[0]
    command = command_line(step.get("arguments"))
    if exited := _EXIT.match(body):
        output, code = body[exited.end():], int(exited.group(1))
        return output or body, exit_code_error(output, code, command) if code else None
    if roo := _ROO_EXIT.match(body):
        output = body[roo.end():]
        if roo.group("signal"):
            return output or body, roo.group("signal")
        code = as_int(roo.group("code"))
        return output or body, exit_code_error(output, code, command) if code else None
    if old := _OLD_OUTPUT.match(body):
        output = body[old.end():]
        return output or body, ended_failing(output) if output else None
    return body or None, None


def _operations(content: Any) -> tuple[str, str | None] | None:
    """A Cline 4.x tool result (``ToolOperationResult``: ``{query, result, error, success}``, one or a list, or that
    as JSON text): (the results' text, the first failed operation's error), None for any other content. A command
    that exited non-zero (``bash.ts``: its result ``[Command exited with code N]`` then its output) fails as every
    CLI adapter reads an exit code (``exit_code_error``)."""
    if isinstance(content, str) and content.startswith('{"query":'):
        content = _json(content)
    said = [content] if isinstance(content, dict) else content
    if not (isinstance(said, list) and said and all(isinstance(o, dict) and "query" in o and "success" in o
                                                    for o in said)):
        return None
    texts = [r if isinstance(r := o.get("result"), str) and r else json.dumps(r, ensure_ascii=False)
             if r not in (None, "") else as_str(o.get("error")) or "" for o in said]  # a failed read: its error
    return "\n\n".join(t for t in texts if t), next(
        (failed for o, text in zip(said, texts) if o.get("success") is False
         and (failed := _operation_error(o, text))), None)


def _operation_error(operation: dict[str, Any], text: str) -> str | None:
    """The error of a Cline 4.x operation that failed (``success: false``); None for a command's exit 1 that answers
    "no" (``grep``'s no match: ``exit_code_error``)."""
    if exited := _SDK_EXIT.match(text):
        return exit_code_error(text[exited.end():], int(exited.group(1)), as_str(operation.get("query")))
    error = as_str(operation.get("error")) or text
    if _SDK_ABORTED.search(error):  # the run was stopped while the command ran: not the command's failure
        return short(f"cancelled: {error.strip()}", 300)
    return error_line(error, "operation failed")


def _status(body: str) -> str | None:
    """The error a Roo Code (Kilo Code) result states as JSON (``responses.ts``: ``{"status": "denied" | "error",
    ...}``), if it is one: a denial or an access refused (``.rooignore``) is a call not run."""
    if not body.startswith('{"status":'):
        return None
    try:
        said = loads(body.split("\n\n", 1)[0])
    except ValueError:
        return None
    if not isinstance(said, dict):
        return None
    if said.get("status") == "denied":
        return not_run("denied by the user")
    if said.get("status") == "error":
        why = as_str(said.get("error")) or as_str(said.get("message")) or "tool error"
        return not_run(short(why, 300)) if said.get("type") == "access_denied" else error_line(why)
    return None


def _outcome(walk: _Walk, ui: list[dict[str, Any]], session: dict[str, Any]) -> tuple[
        Outcome, Failure | None, dict[str, Any]]:
    """The task's verdict (see the module docstring); ``session``: a Cline 4.x session's manifest status."""
    if walk.completed and not walk.completion_feedback:
        return Outcome.success, None, {"outcome_basis": "attempt_completion, and no feedback from the user after it"}
    if walk.ended_on:
        outcome, failure = ended_on_error(walk.ended_on, API_ERROR_CAUSE)
        return outcome, failure, {"ended_by": "the provider's error (Cline 4.x's error message)"}
    if walk.mistake_stop:
        return Outcome.failure, Failure(error="mistake limit reached", cause=MISTAKE_CAUSE), \
            {"ended_by": "mistake_stop_notice"}
    if session.get("session_status") == "failed":  # an error Cline did not write into the conversation
        code, where = session.get("session_exit_code"), session.get("session_status_from")
        return Outcome.infra_error, Failure(error=f"Cline ended the session on an error ({where} status failed"
                                            + (f", exit code {code})" if code is not None else ")"),
                                            cause=_FAILED_CAUSE), {"ended_by": "the session manifest's status" if
                                                                   where == "manifest" else f"its row's status in "
                                                                   f"Cline's {_SESSIONS_DB.as_posix()}"}
    asks = [m for m in ui if m.get("type") == "ask" and m.get("ask") not in ("resume_task", "resume_completed_task")]
    last = asks[-1] if asks else {}
    if last.get("ask") == "api_req_failed":
        error = _api_error(last.get("text"))
        outcome, failure = ended_on_error(error, API_ERROR_CAUSE)
        return outcome, failure, {"ended_by": "api_req_failed"}
    if last.get("ask") == "mistake_limit_reached":
        return Outcome.failure, Failure(error="mistake limit reached", cause=MISTAKE_CAUSE), \
            {"ended_by": "mistake_limit_reached"}
    return Outcome.unknown, None, {}


def _api_error(text: Any) -> str:
    """The provider's error an ``api_req_failed`` ask shows: its JSON's ``message``, or its text."""
    if not isinstance(text, str) or not text.strip():
        return "API request failed"
    try:
        said = loads(text)
    except ValueError:
        said = None
    message = as_str(as_dict(said).get("message")) if isinstance(said, dict) else None
    return short((message or text).strip().split("\n", 1)[0], 500, keep="head")


def _metrics(history: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and cost of a Cline 4.x session: each turn's last assistant message's ``metrics``, as ``_usage``
    counts the UI's."""
    turns = [as_dict(m.get("metrics")) for m in history if m.get("role") == "assistant" and m.get("metrics")]
    if not turns:
        return {}
    cost = sum(c for t in turns if isinstance(c := t.get("cost"), (int, float)) and not isinstance(c, bool))
    return {"api_requests": len(turns), "tokens_in": sum(as_int(t.get("inputTokens")) or 0 for t in turns),
            "tokens_out": sum(as_int(t.get("outputTokens")) or 0 for t in turns),
            **({"cost_usd": round(cost, 6)} if cost else {})}


def _usage(ui: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and cost of the task's API requests (``api_req_started``'s JSON text)."""
    tokens_in = tokens_out = 0
    cost = 0.0
    requests = 0
    for m in ui:
        if m.get("say") != "api_req_started" or not isinstance(m.get("text"), str):
            continue
        try:
            info = loads(m["text"])
        except ValueError:
            continue
        if not isinstance(info, dict):
            continue
        requests += 1
        tokens_in += as_int(info.get("tokensIn")) or 0
        tokens_out += as_int(info.get("tokensOut")) or 0
        if isinstance(info.get("cost"), (int, float)) and not isinstance(info.get("cost"), bool):
            cost += info["cost"]
    if not requests:
        return {}
    return {"api_requests": requests, "tokens_in": tokens_in, "tokens_out": tokens_out,
            **({"cost_usd": round(cost, 6)} if cost else {})}
