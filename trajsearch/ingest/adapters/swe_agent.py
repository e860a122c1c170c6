"""``swe-agent``: SWE-agent ``<instance_id>.traj`` files (one run per file, JSON).

Mapping
- task: ``replay_config.problem_statement.text`` (``replay_config`` is a JSON
  string in SWE-agent 1.x), else the issue inside the first user message of
  ``history`` (``<pr_description>`` or the text between ``ISSUE:`` and
  ``INSTRUCTIONS:``), else that whole message.
- task_id = ``replay_config.problem_statement.id``, else the file name before
  ``.traj``; task_family = the repository for SWE-bench ids
  (``astropy__astropy-12907`` -> ``astropy/astropy``).
- trajectory_id = ``swe-agent.<run directory>.<task_id>`` (the directory that
  holds the file names the run set, as for mini-swe-agent).
- steps: one per ``trajectory[]`` entry: thought = ``thought`` (else
  ``response``), arguments = ``{"command": action}``, action = the command's
  first word when it is a SWE-agent tool (``str_replace_editor``, ``open``,
  ``edit``, ``find_file``, ``search_dir``, ``submit``, ...) else ``bash``,
  observation = ``observation``; Step.error = the decisive error line when the
  observation shows one (a Python exception line, ``command not found``,
  ``No such file``, a rejected edit), since SWE-agent records no exit codes.
- outcome: there is no test result in a ``.traj``. ``info.exit_status``
  ``submitted`` -> success (metadata ``outcome_basis`` says "submitted, not
  evaluated"); ``submitted (exit_cost)`` and other ``submitted (exit_*)``
  (auto-submitted when a limit hit), ``exit_cost``, ``exit_context``,
  ``exit_format``, ``exit_command_timeout`` and the like -> failure;
  ``exit_error``, ``exit_environment_error``, ``exit_api`` and anything else
  -> infra_error; no exit status -> unknown. Join an evaluation report with
  ``--outcomes`` for real verdicts.
- model_id = ``replay_config.agent.model.name`` (else ``info.model``);
  tool_versions = ``{"swe-agent": info.swe_agent_version}``; metadata keeps
  exit_status, submission length, cost and api calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

from trajsearch.model import Failure, Outcome, Trajectory

from ._common import (
    Context, RecordError, build, clip_step_text, clip_task, content_text, decisive_line, json_object, list_field, safe_id,
    short,
)

NAME = "swe-agent"
#: A file is one run: the reader hands over its whole JSON document.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"environment"\s*:\s*"swe_main"|"swe_agent_version"\s*:|"replay_config"\s*:')
#: File names that imply this format when the content says nothing.
SUFFIXES = (".traj",)
SWE_AGENT_TOOLS = frozenset({
    "str_replace_editor", "open", "goto", "scroll_up", "scroll_down", "create", "edit", "insert", "search_dir",
    "search_file", "find_file", "submit", "filemap", "view", "str_replace_based_edit_tool", "exit_forfeit",
})
AGENT_STOPS = ("exit_cost", "exit_context", "exit_format", "exit_command_timeout", "exit_total_execution_time",
               "exit_forfeit", "exit_step_limit", "early_exit")
_PR = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S)
_ISSUE = re.compile(r"ISSUE:\s*\n(.*?)\n\s*INSTRUCTIONS:", re.S)
_ERROR_OUTPUT = re.compile(
    r"^(?:E\s+)?[A-Za-z_][\w.]*(?:Error|Exception)\b:|command not found|No such file or directory|"
    r"Your proposed edit has introduced new syntax error|^Error:|^ERROR:|Traceback \(most recent call last\)",
    re.M,
)


def matches(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("trajectory"), list) and (
        "info" in record or "history" in record
    ) and "messages" not in record


def outcome_for(exit_status: str | None) -> Outcome:
    if not exit_status:
        return Outcome.unknown
    status = exit_status.strip().lower()
    if status == "submitted":
        return Outcome.success
    if status.startswith("submitted (") or status.startswith(AGENT_STOPS):
        return Outcome.failure
    return Outcome.infra_error


def _replay(record: dict[str, Any]) -> dict[str, Any]:
    raw = record.get("replay_config")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            return {}
    return raw if isinstance(raw, dict) else {}


def _task(record: dict[str, Any], replay: dict[str, Any]) -> str:
    statement = replay.get("problem_statement")
    if isinstance(statement, dict) and isinstance(statement.get("text"), str) and statement["text"].strip():
        return clip_task(statement["text"].strip())
    for msg in record.get("history") or []:
        if isinstance(msg, dict) and msg.get("role") == "user":
            content = content_text(msg.get("content"))
            found = _PR.search(content) or _ISSUE.search(content)
            text = (found.group(1) if found else content).strip()
            if text:
                return clip_task(text)
    raise RecordError("no task: no replay_config.problem_statement and no user message in 'history'")


def _step_error(observation: str) -> str | None:
    if not observation or not _ERROR_OUTPUT.search(observation):
        return None
    return decisive_line(observation)


def _action(command: str) -> str:
    first = command.strip().split(maxsplit=1)[0] if command.strip() else ""
    return first if first in SWE_AGENT_TOOLS else "bash"


def task_family(instance_id: str) -> str | None:
    owner, sep, rest = instance_id.partition("__")
    return f"{owner}/{re.sub(r'-[0-9]+$', '', rest)}" if sep else None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    entries = list_field(record, "trajectory", "a list of steps")
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    replay = _replay(record)
    statement = replay.get("problem_statement") if isinstance(replay.get("problem_statement"), dict) else {}
    stem = ctx.source.name.removesuffix(".gz").removesuffix(".json").removesuffix(".traj")
    task_id = str(statement.get("id") or stem)
    steps = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        command = str(entry.get("action") or "").strip()
        observation = entry.get("observation")
        observation = observation if isinstance(observation, str) else ("" if observation is None else json.dumps(observation))
        thought = entry.get("thought") or entry.get("response")
        steps.append({
            "index": len(steps),
            "thought": clip_step_text(str(thought).strip()) if thought else None,
            "action": _action(command) if command else None,
            "arguments": {"command": command} if command else None,
            "observation": clip_step_text(observation) if observation else None,
            "error": _step_error(observation),
        })
    exit_status = info.get("exit_status")
    outcome = outcome_for(exit_status)
    failure = None
    if outcome in (Outcome.failure, Outcome.infra_error):
        last = next((s for s in reversed(steps) if s.get("error")), None)
        detail = f"last failing step {last['index']} (`{short(last['arguments']['command'], 120)}`): {last['error']}" if last else "no error output recorded"
        failure = Failure(
            error=f"{exit_status}: {detail}",
            cause="infrastructure: the harness or model API failed, not the agent" if outcome is Outcome.infra_error else None,
        )
    run_dir = ctx.source.parent.parent.name if ctx.source.parent.name == task_id else ctx.source.parent.name
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    model = ((replay.get("agent") or {}).get("model") or {}).get("name") if isinstance(replay.get("agent"), dict) else None
    submission = info.get("submission") or ""
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(f"swe-agent.{run_dir or 'run'}.{task_id}"),
        "task": _task(record, replay),
        "task_id": task_id,
        "task_family": task_family(task_id),
        "model_id": model or info.get("model") or info.get("model_name"),
        "tool_versions": {"swe-agent": str(info["swe_agent_version"])} if info.get("swe_agent_version") else {},
        "outcome": outcome,
        "failure": failure,
        "steps": steps,
        "metadata": {
            "source_format": NAME,
            "exit_status": exit_status,
            "submission_chars": len(submission) if isinstance(submission, str) else 0,
            "cost": stats.get("instance_cost"),
            "api_calls": stats.get("api_calls"),
            "run_dir": run_dir,
            **({"outcome_basis": "submitted, not evaluated (no test result in the dump)"} if outcome is Outcome.success else {}),
        },
    }
    return build(fields, ctx)
