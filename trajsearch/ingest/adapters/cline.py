"""Cline task folders (the VS Code extension ``saoudrizwan.claude-dev``, and its forks Roo Code and Kilo Code).

Where they come from (cline/cline ``src/core/storage/disk.ts``, ``src/shared/ExtensionMessage.ts``,
``src/core/task/tools/utils/ToolResultUtils.ts``, ``src/core/prompts/responses.ts``): each task is a folder
``<globalStorage>/saoudrizwan.claude-dev/tasks/<task id>/`` (the id is the task's start in epoch milliseconds; Roo
Code and Kilo Code use a UUID) holding

- ``api_conversation_history.json``: the conversation the model saw, Anthropic-style messages (``role``, ``content``
  blocks ``text`` / ``thinking`` / ``tool_use`` / ``tool_result`` / ``image``; newer versions add ``ts`` and the
  assistant's ``modelInfo``). The run is read from it: without it a folder is no run.
- ``ui_messages.json`` (optional): the UI's stream of ``say`` / ``ask`` messages, each with ``ts`` (epoch ms): read
  for the run's start, how it ended (``completion_result``, ``api_req_failed``, ``mistake_limit_reached``) and its
  cost (``api_req_started``'s JSON text: ``tokensIn``, ``tokensOut``, ``cost``).
- ``task_metadata.json`` (optional): ``model_usage`` (``model_id``, ``model_provider_id``, ``mode``), files in
  context, ``environment_history`` (``cline_version``).

Other files of the folder (``settings.json``, ``focus_chain_taskid_<id>.md``, ``context_history.json``) are passed
over (``side_path``); before Cline 2.x the UI messages were ``claude_messages.json``, read alike; a
``ui_messages.json`` met with no history beside it is refused naming the file that holds the run (``not_a_run``).

Field mapping:

- task = the first user message's text inside Cline's ``<task>`` wrapper (Roo Code's ``<user_message>``); without
  one, its text blocks that are not what the extension appends (``<environment_details>``, its todo-list and
  task_progress reminders, attached files). Later prompts (feedback after a completion attempt or a denial,
  ``<feedback>``; a resumed task's ``<user_message>``) go to ``metadata.user_prompts``.
- steps: each ``tool_use`` block (or, in versions before native tool calls, an XML tool tag in the assistant's text,
  ``<execute_command><command>ls</command></execute_command>``) is a step: action = its name, arguments = its input
  (the tag's parameters), thought = the ``thinking`` (Roo Code's ``reasoning``) and text before it. Its result is
  the ``tool_result`` with its id, or, where Cline writes results as text, the ``[<tool> for '<arg>'] Result:``
  block that names it (in order, as Cline answers calls in order; before native tool calls the result's text follows
  that line in blocks of its own). Assistant text followed by no tool call is a ``respond`` step.
- a step's error: ``The tool execution failed with the following error: <error>...</error>`` (its decisive line);
  ``Command failed with exit code N.`` (the output's decisive line with the code, by ``exit_code_error``, the rule
  every CLI adapter reads exit codes by; a command whose result keeps no exit code, before Cline 3.3x, by what its
  output ends on, ``ended_failing``); a missing parameter; not run (``not run: ...``): ``The user denied this
  operation.``, a path blocked by ``.clineignore``, ``Tool [x] was not executed because ...`` (one tool per
  message). Roo Code and Kilo Code answer every call with a ``tool_result`` and word results their way
  (RooCodeInc/Roo-Code ``responses.ts``, ``ExecuteCommandTool.ts``): ``{"status": "error", ...}`` (an error;
  ``access_denied`` by ``.rooignore``: not run), ``{"status": "denied", ...}`` (not run), ``Command executed in
  terminal within working directory '...'. ... Exit code: N`` (or ``Process terminated by signal ...``), their task
  and a reply to a completion in ``<user_message>``. A call left without a result (the task stopped while it ran)
  says so, unless it handed the turn to the user (a question, a plan, a completion).
- outcome: ``success`` when the task's last tool call is ``attempt_completion`` and the user said nothing after it
  (Cline asks after a completion; a reply, ``The user has provided feedback on the results`` / ``<feedback>``, or
  new instructions when the task is resumed, continues the task): the user's acceptance, as far as the folder can
  say (``metadata.outcome_basis``). A task that ended on the provider's error (``ui_messages.json`` ending on
  ``api_req_failed``, no completion after it) is an ``infra_error`` (or the agent's ``failure`` when it was its
  context window), and one that ended on Cline's ``mistake_limit_reached`` a ``failure``. Any other task ended
  without a completion the user let stand: ``unknown`` (the user may have stopped it, or gone on elsewhere).
- trajectory_id = ``cline.<task id>``: the folder's name where it is a task id (a 10+ digit epoch, a UUID), or the
  task id in it (``exported_task_1769064454592``); else the folder's name. Wherever the folder is read from, the
  same id. created_at = the first UI message's ``ts``, else the first message's, else the task id's epoch. model_id
  = ``task_metadata.json``'s first ``model_usage``, else the first assistant ``modelInfo.modelId``, else the UI's,
  else the ``<model>`` Roo Code's editor state names in the first message.
  tool_versions = ``{"cline": cline_version}``. metadata: mode, provider, cost and tokens, files edited, resumptions,
  messages Cline removed to fit its context window (``conversationHistoryDeletedRange``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trajsearch.actions import not_run
from trajsearch.model import Failure, Outcome, Trajectory

from ._agent_cli import (
    API_ERROR_CAUSE,
    as_int,
    as_str,
    ended_on_error,
    error_line,
    exit_code_error,
    first_time,
    iso_time,
    join_thought,
    prompt_list,
    session_trajectory,
    strip_terminal_codes,
)
from ._common import Context, RecordError, as_dict, as_list, ended_failing, short

NAME = "cline"
#: A file forced to this format is one run: its conversation (an ``api_conversation_history.json`` renamed).
WHOLE_FILE = True
HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
METADATA = "task_metadata.json"
#: The UI messages' name before Cline 2.x (``claude_messages.json``, which it migrated on opening a task).
OLD_UI = "claude_messages.json"
FILES = (HISTORY, UI, METADATA, OLD_UI)
#: The task folder's other files (``disk.ts``): the context-window edits' history, the task's settings, the focus
#: chain's todo list (``focus_chain_taskid_<id>.md``).
_OWN_FILES = re.compile(r"\A(?:context_history\.json|settings\.json|focus_chain_taskid_[\w-]+\.md)\Z")

#: A task id: Cline's epoch milliseconds, Roo Code's and Kilo Code's UUID.
_TASK_ID = re.compile(r"(?<![0-9A-Za-z])(\d{10,16}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
                      r"(?![0-9A-Za-z])", re.I)
#: What the extension writes into a user message beside the user's words: the editor's state, its todo-list
#: reminders (``focus-chain/prompts.ts``), attached files' contents, a resumption's preamble.
_INJECTED = re.compile(r"\A\s*(?:<environment_details>|# task_progress |# TODO LIST UPDATE REQUIRED|"
                       r"Files attached by the user:|\[TASK RESUMPTION\]|\(The user did not provide a new message|"
                       r"New message to respond to with plan_mode_respond|<hook_context |\[Continue assisting)")
#: Cline's wrapper of the task (Roo Code's before 2026; since, ``<user_message>``, its wrapper of every prompt).
_TASK_TAG = re.compile(r"<(task|user_message)>\s*(.*?)\s*</\1>", re.S)
_FEEDBACK = re.compile(r"<(?:feedback|user_message)>\s*(.*?)\s*</(?:feedback|user_message)>", re.S)
#: ``ToolResultUtils.pushToolResult``: ``[<tool> for '<arg>'] Result:`` then the result (in the same block since
#: native tool calls; before, the result in the blocks after it).
_RESULT = re.compile(r"\A\[(?P<tool>[\w-]+)(?: for '.*?')?\] Result:[ \t]*\n?", re.S)
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
#: Calls that hand the turn to the user (a question, a plan, a completion): one left unanswered when the task
#: stopped awaited the user, it did not fail.
_TO_THE_USER = frozenset({COMPLETION, "ask_followup_question", "plan_mode_respond", "act_mode_respond"})
#: Cline's tools, as the tags of versions before native tool calls name them (``ClineDefaultTool``).
_XML_TOOLS = ("execute_command", "read_file", "write_to_file", "replace_in_file", "search_files", "list_files",
              "list_code_definition_names", "browser_action", "use_mcp_tool", "access_mcp_resource",
              "ask_followup_question", "plan_mode_respond", "attempt_completion", "new_task", "web_fetch",
              "load_mcp_documentation", "apply_diff", "insert_content", "search_and_replace", "switch_mode",
              "update_todo_list", "codebase_search", "fetch_instructions")
_XML_CALL = re.compile(r"<(?P<tool>" + "|".join(_XML_TOOLS) + r")>(?P<body>.*?)</(?P=tool)>", re.S)
_XML_PARAM = re.compile(r"<(?P<name>[a-z_]+)>\n?(?P<value>.*?)\n?</(?P=name)>", re.S)
_NEVER_ANSWERED = "tool call never finished (no result recorded: the task stopped while it ran)"
MISTAKE_CAUSE = "the agent kept making mistakes (Cline's consecutive-mistake limit stopped the task)"


def matches(record: Any) -> bool:
    """Never by content: an Anthropic message list is many tools' format; a task folder is told by its files'
    names (``run_folder``)."""
    return False


def _is_ui_message(record: Any) -> bool:
    return isinstance(record, dict) and record.get("type") in ("say", "ask") and "ts" in record \
        and isinstance(record.get("say") or record.get("ask"), str)


def not_a_run(record: Any) -> str | None:
    """A ``ui_messages.json`` alone: the UI's log of a task, whose run is the history beside it."""
    if _is_ui_message(record):
        return (f"Cline's (or Roo Code's, Kilo Code's) UI messages of a task ({UI}), without the {HISTORY} that "
                f"holds its run beside it: ingest the whole task folder (.../saoudrizwan.claude-dev/tasks/<task id>/)")
    return None


def run_folder(path: Path) -> Path | None:
    """The task folder ``path`` stands for: a folder holding ``api_conversation_history.json``, or one of the files
    read with it (``FILES``)."""
    folder = path.parent if path.is_file() and path.name in FILES else path
    return folder if folder.is_dir() and (folder / HISTORY).is_file() else None


def folder_files(folder: Path) -> list[Path]:
    return [folder / name for name in FILES if (folder / name).is_file()]


def side_path(path: Path, fmt: str | None) -> str | None:
    """Another file of a task folder (``_OWN_FILES``): the task's own bookkeeping."""
    if _OWN_FILES.match(path.name) and (path.parent / HISTORY).is_file():
        return f"a Cline task's own file beside its {HISTORY} (read with the task folder)"
    return None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    """A file forced to this format: its conversation alone (a renamed ``api_conversation_history.json``)."""
    return read_folder({HISTORY: record}, ctx)


def read_folder(files: dict[str, Any], ctx: Context) -> Trajectory:
    history = files.get(HISTORY)
    if not isinstance(history, list) or not history:
        raise RecordError(f"{HISTORY} holds no messages (a Cline task's conversation is a JSON array of "
                          f"{{role, content}} messages; found {_kind(history)})")
    for n, message in enumerate(history):
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            raise RecordError(f"{HISTORY}: message {n} is not a {{role: user|assistant, content}} message "
                              f"(found {_kind(message)})")
    if history[0]["role"] != "user":
        raise RecordError(f"{HISTORY}: the conversation opens with an assistant message, not the user's task")
    ui = [m for m in as_list(files.get(UI, files.get(OLD_UI))) if isinstance(m, dict)]
    meta = as_dict(files.get(METADATA))
    task = _task(history[0].get("content"))
    if not task:
        raise RecordError(f"{HISTORY}: the first user message holds no task text (only what Cline appends to it)")
    walk = _Walk()
    for message in history[1:]:
        walk.message(message)
    walk.close()
    task_id = _task_id(ctx.source)
    outcome, failure, basis = _outcome(walk, ui)
    usage = [as_dict(u) for u in as_list(meta.get("model_usage"))]
    model = next((as_str(u.get("model_id")) for u in usage if as_str(u.get("model_id"))), None) \
        or next((as_str(as_dict(m.get("modelInfo")).get("modelId")) for m in [*history, *ui]
                 if as_str(as_dict(m.get("modelInfo")).get("modelId"))), None) \
        or next((found.group(1).strip() for b in _blocks(history[0].get("content"))
                 if isinstance(b.get("text"), str) and (found := _MODE_MODEL.search(b["text"]))), None)
    version = next((as_str(as_dict(e).get("cline_version")) for e in as_list(meta.get("environment_history"))
                    if as_str(as_dict(e).get("cline_version"))), None)
    metadata = {
        "cline_task_id": task_id,
        "provider": next((as_str(u.get("model_provider_id")) for u in usage), None),
        "modes": sorted({m for u in usage if (m := as_str(u.get("mode")))}) or None,
        "user_prompts": prompt_list(list(dict.fromkeys(walk.prompts))) or None,  # a resumed prompt is repeated
        "resumptions": walk.resumptions or None,
        "no_tool_nudges": walk.nudges or None,
        "files_edited": sorted({as_str(as_dict(f).get("path")) for f in as_list(meta.get("files_in_context"))
                                if as_dict(f).get("record_source") == "cline_edited"} - {None}) or None,
        "history_truncated": any("conversationHistoryDeletedRange" in m for m in ui) or None,
        **_usage(ui),
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{task_id}", task=task, model_id=model, steps=walk.steps, metadata=metadata,
        last_error=None, error_cause=API_ERROR_CAUSE,
        verdict=(outcome, None, failure, basis) if outcome is not Outcome.unknown else None,
        created_at=first_time(*(m.get("ts") for m in ui[:1]), history[0].get("ts"),
                              int(task_id) if task_id.isdigit() and len(task_id) == 13 else None),
        tool_versions={"cline": version} if version else None)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an empty array" if value == [] else "an array", str: "a string",
            type(None): "nothing"}.get(type(value), type(value).__name__)


def _task_id(source: Path) -> str:
    """The task's id, by its folder (a file forced to this format: the folder it lies in)."""
    folder = source if source.is_dir() else source.parent
    found = _TASK_ID.search(folder.name)
    return found.group(1) if found else folder.name


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in as_list(content) if isinstance(b, dict)]


def _task(content: Any) -> str:
    texts = [b["text"] for b in _blocks(content) if b.get("type") == "text" and isinstance(b.get("text"), str)]
    for text in texts:
        if found := _TASK_TAG.search(text):
            return found.group(2).strip()
    return "\n\n".join(t.strip() for t in texts if t.strip() and not _INJECTED.match(t)).strip()


class _Walk:
    """The conversation after the task, message by message: steps, and what the user said between them."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.by_id: dict[str, dict[str, Any]] = {}
        self.pending: list[dict[str, Any]] = []  # calls not yet answered, in order
        self.thought: list[str] = []
        self.narration: list[str] = []
        self.at: Any = None
        self.prompts: list[str] = []
        self.resumptions = 0
        self.nudges = 0
        self.completion_feedback = False  # the user spoke after the last completion attempt

    def message(self, message: dict[str, Any]) -> None:
        if message["role"] == "assistant":
            self._assistant(_blocks(message.get("content")), message.get("ts"))
        else:
            self._user(_blocks(message.get("content")))

    def _assistant(self, blocks: list[dict[str, Any]], ts: Any) -> None:
        self.at = ts
        for block in blocks:
            kind = block.get("type")
            if kind == "thinking" and isinstance(block.get("thinking"), str):
                self.thought.append(block["thinking"])
            elif kind == "reasoning" and isinstance(block.get("text"), str):  # Roo Code's, of other providers
                self.thought.append(block["text"])
            elif kind == "text" and isinstance(block.get("text"), str):
                text, calls = block["text"], list(_XML_CALL.finditer(block["text"]))
                self.narration.append(text[:calls[0].start()] if calls else text)
                for call in calls:
                    params = {p.group("name"): p.group("value") for p in _XML_PARAM.finditer(call.group("body"))}
                    self._call(call.group("tool"), params, None)
            elif kind == "tool_use":
                self._call(str(block.get("name") or "tool"), block.get("input"), as_str(block.get("id")))

    def _call(self, name: str, arguments: Any, call_id: str | None) -> None:
        step = {"thought": join_thought(self.thought + self.narration), "action": name, "arguments": arguments,
                "started_at": iso_time(self.at)}
        self.thought, self.narration = [], []
        self.steps.append(step)
        self.pending.append(step)
        if call_id:
            self.by_id[call_id] = step
        if name == COMPLETION:
            self.completion_feedback = False

    def _flush(self) -> None:
        """Assistant text no tool call followed: the model's answer."""
        if join_thought(self.narration):
            self.steps.append({"thought": join_thought(self.thought), "action": "respond",
                               "arguments": {"content": join_thought(self.narration)}, "started_at": iso_time(self.at)})
        self.thought, self.narration = [], []

    def _user(self, blocks: list[dict[str, Any]]) -> None:
        self._flush()
        current: dict[str, Any] | None = None  # a result whose text follows in the next blocks (before native calls)
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_result":
                step = self._next(None, self.by_id.get(str(block.get("tool_use_id"))))
                body = _RESULT.sub("", _text(block.get("content")), count=1)
                current = self._answer(step, body) if step is not None else None
                continue
            text = block.get("text") if kind == "text" else None
            if not isinstance(text, str):
                continue
            if head := _RESULT.match(text):
                step = self._next(head.group("tool"))
                current = self._answer(step, text[head.end():]) if step is not None else None
            elif skipped := _NOT_EXECUTED.match(text):
                if (step := self._next(skipped.group("tool"))) is not None:
                    self._answer(step, text)
                current = None
            elif text.startswith(_COMPLETION_FEEDBACK):
                self.completion_feedback = True
            elif text.startswith("[TASK RESUMPTION]"):
                self.resumptions += 1
                current = None
                if said := _FEEDBACK.search(text):
                    self._prompt(said.group(1))
            elif text.startswith(_NO_TOOL):
                self.nudges += 1
            elif said := _FEEDBACK.search(text):
                self._prompt(said.group(1))
            elif _INJECTED.match(text):
                current = None
            elif current is not None and not current.get("observation"):
                self._answer(current, text)  # the result's text, in a block after its ``Result:`` line
            elif current is None:
                self._prompt(text)

    def _prompt(self, text: str) -> None:
        """The user's words: a later prompt, and, after a completion attempt, the user's reply to it."""
        if text.strip():
            self.prompts.append(text.strip())
            self.completion_feedback = True  # a new call to attempt_completion sets it back

    def _next(self, tool: str | None, step: dict[str, Any] | None = None) -> dict[str, Any] | None:
        """The call a result answers: ``step`` (by its id), else the first not yet answered (of ``tool``, where the
        result names it)."""
        step = step or next((s for s in self.pending if tool is None or s["action"] == tool), None) \
            or (self.pending[0] if self.pending else None)
        if step in self.pending:
            self.pending.remove(step)
        return step

    def _answer(self, step: dict[str, Any], body: str) -> dict[str, Any]:
        body = strip_terminal_codes(body).strip()
        step["observation"], step["error"] = _result(step, body)
        if step["action"] == COMPLETION and (said := _FEEDBACK.search(body)):  # Roo Code's reply in the result
            self._prompt(said.group(1))
        return step

    def close(self) -> None:
        self._flush()
        for step in self.pending:
            if step["action"] not in _TO_THE_USER:
                step["error"] = _NEVER_ANSWERED


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b["text"] for b in _blocks(content) if isinstance(b.get("text"), str))


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
    command = as_str(as_dict(step.get("arguments")).get("command"))
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


def _status(body: str) -> str | None:
    """The error a Roo Code (Kilo Code) result states as JSON (``responses.ts``: ``{"status": "denied" | "error",
    ...}``), if it is one: a denial or an access refused (``.rooignore``) is a call not run."""
    if not body.startswith('{"status":'):
        return None
    try:
        said = json.loads(body.split("\n\n", 1)[0])
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


def _outcome(walk: _Walk, ui: list[dict[str, Any]]) -> tuple[Outcome, Failure | None, dict[str, Any]]:
    """The task's verdict (see the module docstring)."""
    calls = [s for s in walk.steps if s["action"] != "respond"]
    if calls and calls[-1]["action"] == COMPLETION and not walk.completion_feedback:
        return Outcome.success, None, {"outcome_basis": "attempt_completion, and no feedback from the user after it"}
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
        said = json.loads(text)
    except ValueError:
        said = None
    message = as_str(as_dict(said).get("message")) if isinstance(said, dict) else None
    return short((message or text).strip().split("\n", 1)[0], 500, keep="head")


def _usage(ui: list[dict[str, Any]]) -> dict[str, Any]:
    """Tokens and cost of the task's API requests (``api_req_started``'s JSON text)."""
    tokens_in = tokens_out = 0
    cost = 0.0
    requests = 0
    for m in ui:
        if m.get("say") != "api_req_started" or not isinstance(m.get("text"), str):
            continue
        try:
            info = json.loads(m["text"])
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
