"""GitHub Copilot CLI sessions (``@github/copilot``, 2025-): the event log it keeps of each session.

Where they come from (github/copilot-sdk ``python/copilot/generated/session_events.py``, the events' generated
types; real logs: microsoft/vscode-copilot-chat's test fixtures of Copilot CLI 0.0.354): one JSON event a line,
``{type, data, id, timestamp, parentId}``, in ``~/.copilot/session-state/<session id>.jsonl`` (since late 2025
``~/.copilot/session-state/<session id>/events.jsonl``). The first is ``session.start`` (``data``: ``sessionId``,
``producer: "copilot-agent"``, ``copilotVersion``, ``startTime``, ``selectedModel``, ``context`` {cwd, branch,
repository}); then ``user.message`` (``content``), ``assistant.reasoning`` (``content``), ``assistant.message``
(``content``, ``reasoningText``, ``toolRequests``: ``[{toolCallId, name, arguments}]``, ``model``),
``tool.execution_start`` (``toolCallId``, ``toolName``, ``arguments``), ``tool.execution_complete`` (``toolCallId``,
``success``, ``result`` {content}, ``error`` {message, code}, ``model``), ``session.model_change`` (``newModel``),
``session.error`` (``errorType``, ``message``), ``abort``, and bookkeeping (``session.info``, ``assistant.turn_*``,
``session.idle``, ``subagent.*``, ...) passed over. VS Code's Copilot Chat writes its transcripts in this shape too
(``session.start`` with ``vscodeVersion``): read alike (as its readers' tests show them; no real one found). A session
folder's other files (``workspace.yaml``, ``session.db``, ``plan.md``, ``checkpoints/``, ``files/``) are passed over
(``side_path``).

Field mapping:

- task = the first ``user.message``'s ``content``; later ones go to ``metadata.user_prompts``.
- steps: each tool request (``assistant.message``'s ``toolRequests``, or a ``tool.execution_start`` no request
  announced) is a step: action = its name, arguments = its JSON ``arguments``, thought = the reasoning and the
  message's text before it, observation = its ``tool.execution_complete``'s ``result.content``. Its error: the
  ``error.message`` of a call that did not succeed (``success: false``), else, for a shell command, what its output
  says with its exit code (``toolTelemetry.metrics.exit_code``, else the line the CLI appends: ``<exited with exit code
  N>``, 1.0.x ``<shellId: N completed with exit code N>``; by ``exit_code_error``, the rule every CLI adapter reads
  exit codes by). An assistant message with no tool request is a ``respond`` step.
- outcome: unknown (a session records no verdict), unless it ended on a ``session.error`` with no work after it:
  an ``infra_error``, or the agent's ``failure`` when its context window stopped it.
- trajectory_id = ``copilot-cli.<sessionId>`` (``session.start``'s: the log's own, wherever it lies); model_id =
  ``selectedModel``, else the first model a message, call or ``session.model_change`` names; created_at =
  ``startTime``; tool_versions = ``{"copilot-cli": copilotVersion}`` (VS Code's: ``{"copilot-chat": ...}``);
  metadata: cwd, branch, repository, the models used (more than one), aborted turns.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajsearch.model import Trajectory

from ._agent_cli import (
    API_ERROR_CAUSE,
    SessionSteps,
    as_records,
    as_str,
    error_line,
    exit_code_error,
    first_time,
    iso_time,
    join_thought,
    json_arguments,
    prompt_list,
    session_trajectory,
    whole_file,
)
from ._common import Context, RecordError, as_dict, as_list, last_part

NAME = "copilot-cli"
#: Where Copilot CLI keeps its sessions: walked though hidden (see ``read``).
SESSION_FOLDERS = (".copilot/session-state",)
#: A file is one session: the reader hands over all its lines.
WHOLE_FILE = True
split = whole_file
PRODUCER = "copilot-agent"
#: A session's log in its folder (``session-state/<id>/events.jsonl``, since late 2025).
_EVENTS = "events.jsonl"
#: What the shell tool appends to a command's output (``bash``, ``powershell``): its exit code, as 0.0.x wrote it
#: (``<exited with exit code 1>``) and as 1.0.x does (``<shellId: 0 completed with exit code 1>``).
_EXIT = re.compile(r"\n?<(?:exited|shellId: \d+ completed) with exit code (-?\d+)>\s*\Z")
#: The shell tools, whose output ends saying the command's exit code.
SHELLS = frozenset({"bash", "powershell"})


def matches(record: Any) -> bool:
    """A log's first event: ``session.start`` by Copilot's agent."""
    if not isinstance(record, dict) or record.get("type") != "session.start":
        return False
    data = as_dict(record.get("data"))
    return data.get("producer") == PRODUCER or "copilotVersion" in data


def side_path(path: Path, fmt: str | None) -> str | None:
    """Another file of a session's folder (``session-state/<id>/``, 1.0.x) than its ``events.jsonl``: the CLI's own
    (``workspace.yaml``, ``session.db``, ``plan.md``, ``checkpoints/``) and the agent's work (``files/``,
    ``research/``, often JSON). None is a run, so a walk of ``~/.copilot/session-state`` is not stopped by them."""
    parts = path.parts
    at = last_part(parts, "session-state")
    if at is None or len(parts) < at + 3 or path.name == _EVENTS and len(parts) == at + 3:
        return None
    session = Path(*parts[:at + 2])
    if not (session / _EVENTS).is_file():
        return None
    return f"a Copilot CLI session's own file, beside its {_EVENTS} (the session's run)"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    events = as_records(record, "Copilot CLI session")
    start = as_dict(events[0].get("data"))
    session = as_str(start.get("sessionId"))
    if events[0].get("type") != "session.start" or not session:
        raise RecordError("the log does not open with session.start naming its sessionId (Copilot CLI's "
                          "session-state/<id>.jsonl opens so)")
    walk = _Walk()
    for event in events[1:]:
        walk.event(event)
    walk.flush()
    if walk.task is None:
        raise RecordError("no user.message: a session started and never given a prompt")
    models = list(dict.fromkeys(walk.models))
    context = as_dict(start.get("context"))
    version = as_str(start.get("copilotVersion"))
    metadata = {
        "copilot_session_id": session,
        "cwd": as_str(context.get("cwd")),
        "branch": as_str(context.get("branch")),
        "repository": as_str(context.get("repository")),
        "models": models if len(models) > 1 else None,
        "user_prompts": prompt_list(walk.prompts) or None,
        "aborted": walk.aborted or None,
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{session}", task=walk.task, model_id=as_str(start.get("selectedModel"))
        or next(iter(models), None), steps=walk.steps, metadata=metadata, last_error=walk.last_error,
        error_cause=API_ERROR_CAUSE, created_at=first_time(start.get("startTime"), events[0].get("timestamp")),
        tool_versions={"copilot-chat" if "vscodeVersion" in start else NAME: version} if version else None)


class _Walk(SessionSteps):
    """The session's events in order: its prompts, steps by call id, the models named, the error it ended on."""

    def __init__(self) -> None:
        super().__init__()
        self.task: str | None = None
        self.prompts: list[str] = []
        self.models: list[str] = []
        self.aborted = 0

    def event(self, event: dict[str, Any]) -> None:
        kind, data = event.get("type"), as_dict(event.get("data"))
        if model := as_str(data.get("model")) or as_str(data.get("newModel")):
            self.models.append(model)
        if kind == "user.message":
            self.flush()
            text = (as_str(data.get("content")) or "").strip()
            if self.task is None:
                self.task = text or None
            elif text:
                self.prompts.append(text)
            self.last_error = None
        elif kind == "assistant.reasoning":
            self.thought.append(as_str(data.get("content")) or "")
        elif kind == "assistant.message":
            self._message(data, event.get("timestamp"))
        elif kind == "tool.execution_start":
            self._call(data.get("toolCallId"), data.get("toolName"), data.get("arguments"), event.get("timestamp"))
        elif kind == "tool.execution_complete":
            self._result(data)
        elif kind == "session.error":
            self.flush()
            self.last_error = as_str(data.get("message")) or as_str(data.get("errorType")) or "session error"
        elif kind == "abort":
            self.aborted += 1

    def _message(self, data: dict[str, Any], at: Any) -> None:
        if reasoning := as_str(data.get("reasoningText")):
            self.thought.append(reasoning)
        if text := (as_str(data.get("content")) or "").strip():
            if not self.narration:
                self.narration_at = at
            self.narration.append(text)
        requests = [r for r in as_list(data.get("toolRequests")) if isinstance(r, dict) and as_str(r.get("name"))]
        for request in requests:
            self._call(request.get("toolCallId"), request.get("name"), request.get("arguments"), at)
        if not requests:
            self.flush()
        self.last_error = None

    def _call(self, call_id: Any, name: Any, arguments: Any, at: Any) -> None:
        key = as_str(call_id)
        if key is not None and key in self.by_call:
            return  # announced by the message's tool request already
        step = {"thought": join_thought(self.thought + self.narration), "action": as_str(name) or "tool",
                "arguments": json_arguments(arguments, key="arguments"), "started_at": iso_time(at)}
        self.thought, self.narration, self.narration_at = [], [], None
        self.steps.append(step)
        if key is not None:
            self.by_call[key] = step

    def _result(self, data: dict[str, Any]) -> None:
        step = self.by_call.get(as_str(data.get("toolCallId")) or "")
        if step is None:  # a result of a call the log never announced: nothing to attach it to
            return
        output = as_str(as_dict(data.get("result")).get("content"))
        step["observation"] = output
        if data.get("success") is False:
            said = as_str(as_dict(data.get("error")).get("message")) or output
            step["error"] = error_line(said, said or "the tool failed")
        elif step["action"] in SHELLS and (code := exit_code(data, output)) is not None and code[0] != 0:
            command = as_str(as_dict(step["arguments"]).get("command"))
            step["error"] = exit_code_error(code[1], code[0], command)
        self.last_error = None


def exit_code(data: dict[str, Any], output: str | None) -> tuple[int, str] | None:
    """A shell call's exit code and its output without the closing line that says it: the call's telemetry
    (``toolTelemetry.metrics.exit_code``, 1.0.x) where kept, else that closing line (``_EXIT``)."""
    closing = _EXIT.search(output or "")
    said = (output or "")[:closing.start()] if closing else output or ""
    code = as_dict(as_dict(data.get("toolTelemetry")).get("metrics")).get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code, said
    return (int(closing.group(1)), said) if closing else None
