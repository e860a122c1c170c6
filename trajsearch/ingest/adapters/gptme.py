"""``gptme``: conversations of gptme (gptme/gptme), the terminal agent, as its log file keeps them.

Source read: gptme/gptme at d27f98d (2026-08): ``gptme/message.py`` (``Message.to_dict``: a line's keys),
``gptme/logmanager`` (the file and its folder), ``gptme/tools/base.py`` (``ToolUse``: how a call is written in a
message), ``gptme/tools/shell.py`` (``_format_shell_output``: a command's result), ``gptme/tools/python.py`` (an
``ipython`` block's result) and ``gptme/prompts`` (the system prompt, ``pinned`` and ``hide``). No real log was
found committed on GitHub (see ``tests/fixtures/gptme/.newa31/README.md``): the fixture is written by gptme
0.35.1's own code (its ``LogManager``, its tools executing the calls).

gptme keeps a conversation as JSON lines, appended as it runs:
``~/.local/share/gptme/logs/<conversation id>/conversation.jsonl`` (a branch ``branches/<name>.jsonl`` beside it,
``config.toml`` its settings). Each line is a message: ``role`` (``system``, ``user``, ``assistant``), ``content``
(text), ``timestamp`` (ISO), and where set ``pinned``, ``hide``, ``files``, ``file_hashes``, ``call_id``,
``ephemeral_ttl``, ``metadata`` (``model``, ``usage``). The file opens with the system prompt, ``pinned`` (and
``hide``). A tool call is written in the assistant's text: a Markdown code block whose language is the tool's
block type (```` ```shell ````, ```` ```ipython ````, ```` ```save path ````), or in gptme's ``tool`` format
``@<tool>(<call id>): {json}``; its result is the ``system`` message(s) after it (the ``tool`` format's carry its
``call_id``): a command's ``Ran command: `...``` with its stdout and stderr blocks and ``Return code: N`` when not
0, Python's ``Executed code block.`` with an ``Exception during execution ...`` line when it raised, a tool's
``Error executing tool '...': ...``.

Mapping: a file is one run; task = the first user message (later ones ``metadata.user_prompts``); steps = the tool
calls with their results (thought: the assistant's text before the call; a ``python`` block, a call until 2024-09,
only where a system message answers it), a reply with no call a ``respond`` step; a
failed call's error: a command's output's decisive line and exit code (``exit_code_error``), a raised exception's
line, a tool's error message; a call the file ends without an answer to failed; model: the assistant messages'
``metadata.model`` where recorded (gptme since 2025-12), else none; outcome unknown (a conversation records no
verdict). The file holds no id: the run's is gptme's conversation id, the name of its folder,
``gptme.<conversation id>`` (a branch's ``gptme.<conversation id>.<branch>``), so a copy keeping its folder is the
same run; a file otherwise named is named by its place (``file_run_key``): what was said cannot be the id (two
conversations asked alike open alike).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trajsearch.model import Trajectory

from ._agent_cli import (API_ERROR_CAUSE, NEVER_ANSWERED, SessionSteps, as_records, as_str, exit_code_error,
                         first_time, iso_time, join_thought, prompt_list, session_trajectory, whole_file)
from ._common import Context, RecordError, as_dict, file_run_key, json_kind, named_path, short

NAME = "gptme"
WHOLE_FILE = True
#: Where gptme keeps its conversations (``dirs.get_logs_dir``): a walk of a home reads them.
SESSION_FOLDERS = (".local/share/gptme/logs",)
#: gptme's files beside a conversation's log that hold no run: its event log (the same messages as events).
_NO_RUN_FILES = frozenset({"events.jsonl"})
#: The keys ``Message.to_dict`` writes: a line with another is not gptme's.
_KEYS = frozenset({"role", "content", "timestamp", "files", "file_hashes", "pinned", "hide", "ephemeral_ttl",
                   "call_id", "metadata", "quiet"})
_ROLES = ("system", "user", "assistant")
#: The tools' block types (their ``ToolSpec.block_types``): a code block of another language is text the model wrote,
#: not a call. ``python`` was ipython's too until 2024-09 (e0c79a41): such a block is a call where a system message
#: answers its message (``_OLD_PYTHON``), text otherwise (an example in a reply).
_OLD_PYTHON = "python"
_TOOLS = frozenset({"shell", "ipython", "py", "save", "append", "patch", "patch_many", "patch_anchored",
                    "view_anchored", "hashline_edit", "morph", "read", "tmux", "gh", "mcp", "todo", "choice",
                    "clarify", "complete", "elicit", "form", "progress", "restart", "vent", "browser", "subagent",
                    "computer", "screenshot", "rag", "chats", "gptme", "tts", "youtube", "vision"})
#: A Markdown code block at a line's start (``Codeblock.iter_from_markdown``) and a ``tool``-format call
#: (``toolcall_re``).
_BLOCK = re.compile(r"^```(?P<lang>[^\s`]+)(?:[ \t]+(?P<args>[^\n]*))?\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_TOOLCALL = re.compile(r"^@(?P<tool>[\w.]+)\((?P<call>[\w\-:.]+)\):\s*(?P<json>\{.*)", re.M | re.S)
_RETURN_CODE = re.compile(r"^(?:Return code: |Process interrupted \(return code: )(?P<code>-?\d+)\)?\s*$", re.M)
_EXCEPTION = re.compile(r"^Exception during execution on line \d+:\n\s*(?P<error>.+)$", re.M)
_TOOL_ERROR = re.compile(r"\A(?:Error executing tool |Error: |Error during |Error running |Command denied: )")


def matches(record: Any) -> bool:
    """A log's first line: gptme's system prompt (``pinned``, a message of its keys only, timed in ISO)."""
    return (isinstance(record, dict) and record.get("role") == "system" and record.get("pinned") is True
            and isinstance(record.get("content"), str) and isinstance(record.get("timestamp"), str)
            and set(record) <= _KEYS and iso_time(record["timestamp"]) is not None)


split = whole_file


def _place(ctx: Context) -> tuple[str, str | None]:
    """The run's id (after ``gptme.``) and its conversation's id: the conversation's folder (and a branch's name),
    else the file's place and none."""
    path = named_path(ctx.source)
    if path.name == "conversation.jsonl" and path.parent.name:
        return path.parent.name, path.parent.name
    if path.parent.name == "branches" and path.suffix == ".jsonl" and path.parent.parent.name:
        return f"{path.parent.parent.name}.{path.stem}", path.parent.parent.name
    return file_run_key(ctx, 1), None


def _call_arguments(tool: str, args: str | None, body: str) -> dict[str, Any]:
    """A code block's call as arguments: a command's ``command``, Python's ``code``, a file tool's ``path`` and
    ``content``, any other tool's ``input`` (and its ``args``)."""
    if tool == "shell":
        return {"command": body}
    if tool in ("ipython", "py", _OLD_PYTHON):
        return {"code": body}
    if tool in ("save", "append", "patch", "morph", "read") and args:
        return {"path": args.strip(), "content": body} if body else {"path": args.strip()}
    return {k: v for k, v in (("args", args.strip() if args else None), ("input", body)) if v}


def _tool_calls(content: str, answered: bool) -> list[tuple[str, Any, str | None, int, int]]:
    """The calls an assistant message writes, in order: (tool, arguments, call id, where the call starts and
    ends). ``answered``: a system message follows the message (an old ``python`` block is then a call)."""
    calls = [(m["lang"], _call_arguments(m["lang"], m["args"], m["body"].removesuffix("\n")), None, m.start(),
              m.end()) for m in _BLOCK.finditer(content)
             if m["lang"] in _TOOLS or (answered and m["lang"] == _OLD_PYTHON)]
    for m in _TOOLCALL.finditer(content):
        try:
            arguments, length = json.JSONDecoder().raw_decode(m["json"])
        except json.JSONDecodeError:
            arguments, length = {"input": m["json"]}, len(m["json"])
        calls.append((m["tool"], arguments, m["call"], m.start(), m.start("json") + length))
    return sorted(calls, key=lambda c: c[3])


def _failure(result: str, command: str | None) -> str | None:
    """A call's error from its result's text; None for one that did not fail (a command's "no" answers too:
    ``exit_code_error``)."""
    if code := _RETURN_CODE.search(result):
        return exit_code_error(result[:code.start()], int(code["code"]), command)
    if raised := _EXCEPTION.search(result):
        return short(raised["error"].strip(), 500, keep="head")
    if _TOOL_ERROR.match(result):
        return short(result.strip().splitlines()[0], 500, keep="head")
    return None


class _Conversation(SessionSteps):
    """A log's messages walked in order: prompts, and steps waiting for the system messages that answer them."""

    def __init__(self) -> None:
        super().__init__()
        self.waiting: list[dict[str, Any]] = []  # the last assistant message's calls, in order, not yet answered
        self.models: list[str] = []

    def assistant(self, line: dict[str, Any], answered: bool) -> None:
        """An assistant message: its calls wait for their results; text after the last one may be the answer.
        ``answered``: a system message follows it."""
        self.settle()
        content = as_str(line.get("content")) or ""
        if model := as_str(as_dict(line.get("metadata")).get("model")):
            self.models.append(model)
        at = 0
        for tool, arguments, call_id, start, end in _tool_calls(content, answered):
            if text := content[at:start].strip():
                self.narration.append(text)
            step = {"thought": join_thought(self.thought + self.narration), "action": tool, "arguments": arguments,
                    "started_at": iso_time(line.get("timestamp")), "_results": []}
            self.thought, self.narration = [], []
            self.steps.append(step)
            self.waiting.append(step)
            if call_id:
                self.by_call[call_id] = step
            at = end
        if rest := content[at:].strip():
            self.narration.append(rest)
            self.narration_at = line.get("timestamp")

    def system(self, line: dict[str, Any]) -> None:
        """A system message after calls: the answer to the one its ``call_id`` names, else to the next waiting
        (a call's further messages join the last one's)."""
        text = as_str(line.get("content")) or ""
        call_id = line.get("call_id")
        step = self.by_call.get(call_id) if isinstance(call_id, str) else None
        if step is None and self.waiting:
            step = next((s for s in self.waiting if not s["_results"]), self.waiting[-1])
        if step is not None and text.strip():
            step["_results"].append(text)

    def settle(self) -> None:
        """The calls waiting take their results: observation and error."""
        for step in self.waiting:
            results = step.pop("_results")
            if not results:
                step["error"] = NEVER_ANSWERED
                continue
            result = "\n\n".join(results)
            step["observation"] = result
            step["error"] = _failure(result, as_str(as_dict(step.get("arguments")).get("command")))
        self.waiting, self.by_call = [], {}


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    lines = as_records(record, "gptme conversation")
    if not matches(lines[0]):
        raise RecordError("not a gptme conversation log: expected JSON lines opening with gptme's system prompt "
                          '({"role": "system", "content": ..., "timestamp": ..., "pinned": true}), then the messages')
    walk = _Conversation()
    for number, line in enumerate(lines, 1):
        role = line.get("role")
        if role not in _ROLES:
            raise RecordError(f"message {number}: role {role!r}; a gptme log line is a message of role "
                              f"{', '.join(_ROLES)}")
        if not isinstance(line.get("content"), str):
            raise RecordError(f"message {number}: a {role} message whose content is "
                              f"{json_kind(line.get('content'))}; a gptme message's content is text")
        if role == "assistant":
            walk.assistant(line, number < len(lines) and lines[number].get("role") == "system")
        elif role == "system" and number > 1:
            walk.system(line)
        elif role == "user" and (text := line["content"].strip()):
            walk.settle()
            walk.flush()
            walk.prompts.append(text)
    walk.settle()
    walk.close()
    if not walk.prompts:
        raise RecordError("no user message in this gptme conversation log: the conversation was opened and never "
                          "asked anything")
    run, conversation = _place(ctx)
    metadata: dict[str, Any] = {
        "source_format": NAME,
        "session_id": conversation,
        "models": sorted(set(walk.models)) if len(set(walk.models)) > 1 else None,
        "user_prompts": prompt_list(walk.prompts[1:]) or None,
    }
    return session_trajectory(ctx, run_id=f"{NAME}.{run}", task=walk.prompts[0],
                              model_id=walk.models[-1] if walk.models else None, steps=walk.steps,
                              metadata=metadata, last_error=None, error_cause=API_ERROR_CAUSE,
                              created_at=first_time(lines[0].get("timestamp")))


def side_path(path: Path, fmt: str | None) -> str | None:
    """gptme's event log beside a conversation's log (the same messages as ``message_append`` events): the run is the
    ``conversation.jsonl`` beside it."""
    if fmt is not None or path.name not in _NO_RUN_FILES or not (path.parent / "conversation.jsonl").is_file():
        return None
    return f"gptme's {path.name} of a conversation, no run: the run is the conversation.jsonl beside it"
