"""``mini-swe-agent``: one ``<instance_id>.traj.json`` per run.

Mapping
- task: the text inside ``<pr_description>`` of the first user message, minus
  the "Consider the following PR description:" boilerplate (whole message if
  there is no such tag).
- task_id = ``instance_id``; task_family = the repository
  (``marshmallow-code__marshmallow-1343`` -> ``marshmallow-code/marshmallow``).
- trajectory_id = ``<config dir>.<instance_id>`` (the agent configuration is the
  directory above the instance directory), so re-ingesting a dump is idempotent.
- steps: one per action. Tool-calling dumps (1.x): each ``tool_calls`` entry
  (action = function name, arguments = parsed JSON) paired with the ``tool``
  reply of the same ``tool_call_id``; the assistant content is the thought of
  the first call. Older dumps: the ```bash block in the assistant content is
  the action (``bash``, ``{"command": ...}``), the rest (minus a "THOUGHT:"
  label) is the thought, and the
  next user message is the observation. A user message that answers no action
  (a format-error nudge) becomes its own step with no action. The final
  ``exit`` message (the patch, or the crash) is the last pending step's
  observation. Timestamps in ``extra.timestamp`` give started_at/ended_at;
  the first one is created_at (else the file's modification time).
- Step.error: set when ``<returncode>`` is non-zero or an ``<exception>`` is
  reported: the decisive output line (last exception line, else last
  error-looking line, else last line) plus "exit code N". Exit code 1 with no
  output is the usual "no match"/"false" of grep, test and diff and is not an
  error.
- outcome: there is no test result in these dumps. ``Submitted`` only means a
  patch was handed in; it maps to ``success`` (metadata ``outcome_basis`` says
  "submitted, not evaluated"). Agent-side stops (LimitsExceeded,
  TimeoutExpired, FormatError, ...) -> ``failure``. Anything else is an
  exception of the harness or the model API (InternalServerError, Timeout =
  ``litellm.Timeout``, RateLimitError, ...) -> ``infra_error``.
- failure (when not success): error = exit status + the exception message, or
  else the last failing step's error; infra errors get cause "infrastructure".
- model_id = ``info.config.model.model_name`` (else the API's response model);
  tool_versions = ``{"mini-swe-agent": info.mini_version}``; metadata keeps
  exit_status, submission length, api_calls, cost and the config name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from trajsearch.model import Failure, Outcome, Trajectory

from ._common import (
    Context,
    RecordError,
    build,
    clip_step_text,
    clip_task,
    content_text,
    decisive_line,
    json_object,
    list_field,
    safe_id,
    short,
    timestamp,
    tool_arguments,
)

NAME = "mini-swe-agent"
#: A file is one run: the reader hands over its whole JSON document.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(
    r'"trajectory_format"\s*:\s*"mini-swe-agent|"mini_version"\s*:|"agent_type"\s*:\s*"minisweagent'
)
#: File names that imply this format when the content says nothing.
SUFFIXES = (".traj.json",)

SUCCESS_STATUSES = {"Submitted"}
#: Stops caused by the agent's own behaviour (budget, hung command, bad format).
AGENT_FAILURE_STATUSES = {
    "LimitsExceeded",
    "TimeoutExpired",
    "ExecutionTimeoutError",
    "FormatError",
    "ContextWindowExceededError",
    "CostLimitExceeded",
    "StepLimitExceeded",
}

_PR = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S)
_BOILERPLATE = re.compile(r"^\s*Consider the following PR description:\s*", re.I)
_BASH_BLOCK = re.compile(r"```(?:bash|sh)\s*\n(.*?)```", re.S)
_THOUGHT_LABEL = re.compile(r"^\s*THOUGHT:\s*")
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_EXCEPTION = re.compile(r"<exception>(.*?)</exception>", re.S)
_OUTPUT = re.compile(r"<output(?:_tail)?>\n?(.*?)</output(?:_tail)?>", re.S)
_DOCKER_ARGV = re.compile(r"Command '\[.*\]'", re.S)  # the harness's argv list: noise
_FORMAT_ERROR = re.compile(r"<error>\s*(.*?)\s*</error>", re.S)


def matches(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    fmt = record.get("trajectory_format")
    if isinstance(fmt, str):
        return fmt.startswith("mini-swe-agent")
    return {"messages", "info", "instance_id"} <= record.keys()


def outcome_for(exit_status: str | None) -> Outcome:
    """Exit status -> outcome (see the module docstring for why)."""
    if not exit_status:
        return Outcome.unknown
    if exit_status in SUCCESS_STATUSES:
        return Outcome.success
    if exit_status in AGENT_FAILURE_STATUSES:
        return Outcome.failure
    return Outcome.infra_error


def task_family(instance_id: str) -> str | None:
    """``owner__repo-123`` -> ``owner/repo`` (SWE-bench naming)."""
    owner, sep, rest = instance_id.partition("__")
    if not sep:
        return None
    repo = re.sub(r"-\d+$", "", rest)
    return f"{owner}/{repo}"


def _task(messages: list[dict]) -> str:
    first = next((m for m in messages if m.get("role") == "user"), None)
    if first is None or not isinstance(first.get("content"), str):
        raise RecordError("missing field 'messages': no user message holding the task")
    content = first["content"]
    found = _PR.search(content)
    text = _BOILERPLATE.sub("", found.group(1)) if found else content
    if not text.strip():
        raise RecordError("empty task: the first user message has no PR description")
    return clip_task(text.replace("\r\n", "\n").strip())


def _step_error(content: str) -> str | None:
    """Decisive error line of a command reply, or None if it succeeded."""
    exception = _EXCEPTION.search(content)
    if exception:  # the harness's own report, e.g. a command killed after its time limit
        return short(_DOCKER_ARGV.sub("Command", exception.group(1)))
    code = _RETURNCODE.search(content)
    if not code or int(code.group(1)) == 0:
        return None
    rc = int(code.group(1))
    out = _OUTPUT.search(content)
    text = out.group(1) if out else _RETURNCODE.sub("", content)
    line = decisive_line(text)
    if line is None:
        return None if rc == 1 else f"exit code {rc} (no output)"
    return f"{line} (exit code {rc})"


def _steps(messages: list[dict], exit_status: str | None) -> list[dict]:
    steps: list[dict] = []
    by_call_id: dict[str, dict] = {}

    def pending() -> dict | None:
        return next((s for s in steps if s.get("action") and s.get("observation") is None), None)

    def reply(step: dict, content: str, msg: dict) -> None:
        step["observation"] = clip_step_text(content)
        step["error"] = _step_error(content)
        if step.get("action") is None and content.strip():  # the nudge answering a malformed turn
            step["error"] = short(content.strip().splitlines()[0])
        step["ended_at"] = timestamp((msg.get("extra") or {}).get("timestamp"))

    task_seen = False
    for msg in messages:
        role, content = msg.get("role"), content_text(msg.get("content"))
        started = timestamp((msg.get("extra") or {}).get("timestamp"))
        if role == "user" and not task_seen:
            task_seen = True
        elif role == "assistant":
            thought: str | None = _THOUGHT_LABEL.sub("", content).strip() or None
            calls = msg.get("tool_calls") or []
            if calls:
                for n, call in enumerate(calls):
                    fn = call.get("function") or {}
                    step = {
                        "thought": thought if n == 0 else None,
                        "action": fn.get("name") or "bash",
                        "arguments": tool_arguments(fn.get("arguments")),
                        "started_at": started,
                    }
                    steps.append(step)
                    if call.get("id"):
                        by_call_id[call["id"]] = step
            else:
                block = _BASH_BLOCK.search(content)
                if block:
                    rest = content[: block.start()] + content[block.end() :]
                    thought = _THOUGHT_LABEL.sub("", rest).strip() or None
                steps.append(
                    {
                        "thought": thought,
                        "action": "bash" if block else None,
                        "arguments": {"command": block.group(1).strip()} if block else None,
                        "started_at": started,
                    }
                )
        elif role == "tool":
            step = by_call_id.pop(msg.get("tool_call_id"), None) or pending()
            if step is not None:
                reply(step, content, msg)
        elif role == "user":
            step = pending() or (steps[-1] if steps and steps[-1].get("observation") is None else None)
            if step is not None:
                reply(step, content, msg)
            else:  # a nudge answering no recorded action (e.g. a tool-call format error)
                nudge = _FORMAT_ERROR.search(content)
                steps.append(
                    {
                        "observation": clip_step_text(content),
                        "error": short(nudge.group(1)) if nudge else None,
                        "started_at": started,
                    }
                )
        elif role == "exit":
            step = pending()
            if step is not None:
                step["observation"] = clip_step_text(content)
                if exit_status not in SUCCESS_STATUSES:
                    step["error"] = short(content) if content else exit_status
    for index, step in enumerate(steps):
        step["index"] = index
        if isinstance(step.get("thought"), str):
            step["thought"] = clip_step_text(step["thought"])
    return steps


def _model_id(info: dict, messages: list[dict]) -> str | None:
    model = ((info.get("config") or {}).get("model") or {}).get("model_name")
    if model:
        return str(model)
    for msg in messages:
        response = (msg.get("extra") or {}).get("response") or {}
        if isinstance(response, dict) and response.get("model"):
            return str(response["model"])
    return None


def config_name(source: Path, instance_id: str) -> str:
    """The agent-configuration directory: ``<config>/<instance_id>/<file>`` or ``<config>/<file>``."""
    parent = source.parent
    return (parent.parent if parent.name == instance_id else parent).name or "run"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    messages = list_field(record, "messages", "a list of chat messages")
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    instance_id = record.get("instance_id") or ctx.source.name.split(".traj.json")[0]
    if not isinstance(instance_id, str) or not instance_id:
        raise RecordError("missing field 'instance_id'")
    exit_status = info.get("exit_status")
    outcome = outcome_for(exit_status)
    steps = _steps(messages, exit_status)
    config = config_name(ctx.source, instance_id)
    stats = info.get("model_stats") or {}

    failure = None
    if outcome in (Outcome.failure, Outcome.infra_error):
        exception = info.get("exception_str")
        last = next((s for s in reversed(steps) if s.get("error")), None)
        if exception:
            detail = short(str(exception), 500)
        elif last:
            args = last.get("arguments")
            command = args.get("command") if isinstance(args, dict) else None
            what = short(str(command or last.get("action") or "no action"), 120)
            detail = f"last failing step {last['index']} (`{what}`): {last['error']}"
        else:
            detail = "no error output recorded"
        failure = Failure(
            error=f"{exit_status}: {detail}",
            cause="infrastructure: the harness or model API failed, not the agent"
            if outcome is Outcome.infra_error
            else None,
        )

    first_ts = next((s["started_at"] for s in steps if s.get("started_at")), None)
    submission = info.get("submission") or ""
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(f"{config}.{instance_id}"),
        "task": _task(messages),
        "task_id": instance_id,
        "task_family": task_family(instance_id),
        "model_id": _model_id(info, messages),
        "tool_versions": {"mini-swe-agent": str(info["mini_version"])} if info.get("mini_version") else {},
        "tools_available": ["bash"],
        "outcome": outcome,
        "failure": failure,
        "steps": steps,
        "metadata": {
            "source_format": NAME,
            "trajectory_format": record.get("trajectory_format"),
            "config": config,
            "exit_status": exit_status,
            "submission_chars": len(submission) if isinstance(submission, str) else 0,
            "api_calls": stats.get("api_calls"),
            "cost": stats.get("instance_cost"),
            **(
                {"outcome_basis": "submitted, not evaluated (no test result in the dump)"}
                if outcome is Outcome.success
                else {}
            ),
        },
    }
    if first_ts:
        fields["created_at"] = first_ts
    return build(fields, ctx)
