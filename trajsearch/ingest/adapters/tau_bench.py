"""``tau-bench``: a results file (JSON array or JSONL) of tool-calling runs.

Mapping
- task = ``info.task.instruction`` (the simulated user's goal).
- task_family = the domain (``airline``, ``retail``...): ``defaults["task_family"]``
  if the operator gives one, else a domain word in the file name, else "tau".
- task_id = ``<domain>-<task_id>``; trajectory_id = ``tau-<file stem>-<task_id>-t<trial>``
  (the stem names the result set, so two models' files never overwrite each other).
- steps, in conversation order (the system policy prompt is dropped):
  * each assistant tool call: action = function name, arguments = parsed JSON,
    thought = the assistant text sent with it (rare), observation = the tool
    reply matched by ``tool_call_id`` (else the oldest unanswered call).
    A reply starting with "Error" sets Step.error to its first line.
  * an assistant message without tool calls: action ``respond`` (tau-bench's
    own name for talking to the user), arguments ``{"content": text}``, and the
    user's answer as its observation, so a step window reads as one exchange.
  * the user's opening message (answering nothing): a step with no action and
    the message as observation.
- outcome: reward >= 1 -> success, else failure; reward is kept.
- failure: error says why the reward is 0 (database state differs from the
  expected one / expected outputs never given to the user / no evaluation
  because the episode hit the step limit) plus the last tool error; cause
  lists expected write actions the agent did not perform as specified
  (never called, or which arguments differed) and writes of a kind the task
  did not expect.
- created_at: the results carry no time; the file's modification time stands in
  (stable across re-ingests).
- metadata: trial, ended_by (``info.source``), user_cost, r_actions/r_outputs,
  expected action names.
"""

from __future__ import annotations

import json
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
    json_object,
    list_field,
    safe_id,
    short,
    tool_arguments,
)

NAME = "tau-bench"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"traj"\s*:\s*\[')
KNOWN_DOMAINS = ("airline", "retail", "telecom")
_READ_ONLY = re.compile(r"^(get|search|list|find|calculate|think)")


def matches(record: Any) -> bool:
    return isinstance(record, dict) and "traj" in record and "task_id" in record


def file_stem(source: Path) -> str:
    name = source.name.removesuffix(".gz")
    for suffix in (".jsonl", ".json", ".ndjson"):
        name = name.removesuffix(suffix)
    return name


def guess_domain(source: Path) -> str:
    """A known domain word in the file name (``gpt-4o-airline.json`` -> airline), else "tau"."""
    words = re.split(r"[^a-z]+", file_stem(source).lower())
    return next((d for d in KNOWN_DOMAINS if d in words), "tau")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def _steps(traj: list[Any]) -> list[dict]:
    steps: list[dict] = []
    by_call_id: dict[str, dict] = {}
    for msg in traj:
        if not isinstance(msg, dict):
            continue
        role, content = msg.get("role"), _text(msg.get("content"))
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            for n, call in enumerate(calls):
                fn = call.get("function") or {}
                step = {
                    "thought": (content.strip() or None) if n == 0 else None,
                    "action": fn.get("name") or "unknown_tool",
                    "arguments": tool_arguments(fn.get("arguments")),
                }
                steps.append(step)
                if call.get("id"):
                    by_call_id[call["id"]] = step
            if not calls:
                steps.append({"action": "respond", "arguments": {"content": content}})
        elif role == "tool":
            step = by_call_id.pop(msg.get("tool_call_id"), None) or next(
                (s for s in steps if s["action"] not in (None, "respond") and "observation" not in s),
                None,
            )
            if step is None:  # a reply to no recorded call: keep it rather than lose it
                step = {"action": msg.get("name") or "unknown_tool"}
                steps.append(step)
            step["observation"] = content
            if content.lstrip().lower().startswith("error"):
                step["error"] = short(content.strip().splitlines()[0])
        elif role == "user":
            last = steps[-1] if steps else None
            if last and last["action"] == "respond" and "observation" not in last:
                last["observation"] = content
            else:
                steps.append({"action": None, "observation": content})
    for index, step in enumerate(steps):
        step["index"] = index
        for key in ("thought", "observation"):
            step[key] = clip_step_text(step.get(key))
    return steps


def _brief(value: Any) -> str:
    return short(json.dumps(value, separators=(",", ":")), 160, keep="head")


def _action_diffs(expected: list[Any], steps: list[dict]) -> list[str]:
    """Expected write actions not performed as specified, then writes nobody expected."""
    calls = [(s["action"], s.get("arguments")) for s in steps if s["action"] not in (None, "respond")]
    out = []
    for action in expected:
        if not isinstance(action, dict) or _READ_ONLY.match(str(action.get("name", ""))):
            continue
        name, kwargs = action.get("name"), action.get("kwargs") or {}
        same = [args for called, args in calls if called == name]
        if any(args == kwargs for args in same):
            continue
        if not same:
            out.append(f"{name} never called")
            continue
        best = max(
            (a for a in same if isinstance(a, dict)),
            key=lambda a: sum(a.get(k) == v for k, v in kwargs.items()),
            default={},
        )
        differ = [k for k, v in kwargs.items() if best.get(k) != v]
        parts = [f"{k} expected {_brief(kwargs[k])} got {_brief(best.get(k))}" for k in differ[:3]]
        out.append(f"{name} called with different arguments: " + "; ".join(parts))
    wanted = [(a.get("name"), a.get("kwargs") or {}) for a in expected if isinstance(a, dict)]
    for step in steps:
        call = (step["action"], step.get("arguments"))
        if step["action"] in (None, "respond") or _READ_ONLY.match(step["action"]) or step.get("error"):
            continue
        if call not in wanted and step["action"] not in {name for name, _ in wanted}:
            out.append(f"unexpected {step['action']} {_brief(step.get('arguments'))}")
    return out


def _failure(run: dict, info: dict, steps: list[dict], n_messages: int) -> Failure:
    reward = run.get("reward")
    reward_info = info.get("reward_info") or {}
    judged = reward_info.get("info") or {}
    if not reward_info:
        why = (
            f"no reward evaluation: the episode stopped after {n_messages} messages "
            "without the user ending it (step limit?)"
        )
    elif isinstance(judged.get("r_outputs"), (int, float)) and judged["r_outputs"] < 1:
        missing = [k for k, ok in (judged.get("outputs") or {}).items() if not ok]
        why = f"expected outputs never given to the user: {', '.join(missing) or '?'}"
    elif isinstance(judged.get("r_actions"), (int, float)) and judged["r_actions"] < 1:
        why = "final database state differs from the expected one"
    else:
        why = "task not completed"
    error = f"reward {reward}: {why}"
    last = next((s for s in reversed(steps) if s.get("error")), None)
    if last:
        error += f"; last tool error: {last['action']} -> {last['error']}"
    expected = reward_info.get("actions") or (info.get("task") or {}).get("actions") or []
    diffs = _action_diffs(expected, steps) if reward_info else []
    return Failure(error=error, cause="; ".join(diffs) if diffs else None)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    info = record.get("info") if isinstance(record.get("info"), dict) else {}
    task = info.get("task") if isinstance(info.get("task"), dict) else {}
    instruction = task.get("instruction")
    if not isinstance(instruction, str) or not instruction.strip():
        raise RecordError("missing field 'info.task.instruction'")
    if record.get("task_id") is None:
        raise RecordError("missing field 'task_id'")
    traj = list_field(record, "traj", "a list of chat messages")
    domain = str(ctx.defaults.get("task_family") or guess_domain(ctx.source))
    trial = record.get("trial", 0)
    reward = record.get("reward")
    reward = float(reward) if isinstance(reward, (int, float)) else None
    steps = _steps(traj)
    outcome = Outcome.success if reward is not None and reward >= 1 else Outcome.failure
    judged = (info.get("reward_info") or {}).get("info") or {}
    expected = (info.get("reward_info") or {}).get("actions") or task.get("actions") or []
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(f"tau-{file_stem(ctx.source)}-{record['task_id']}-t{trial}"),
        "task": clip_task(instruction.strip()),
        "task_id": f"{domain}-{record['task_id']}",
        "task_family": domain,
        "outcome": outcome,
        "reward": reward,
        "failure": None if outcome is Outcome.success else _failure(record, info, steps, len(traj)),
        "steps": steps,
        "metadata": {
            "source_format": NAME,
            "trial": trial,
            "ended_by": info.get("source"),
            "user_cost": info.get("user_cost"),
            **{k: judged[k] for k in ("r_actions", "r_outputs") if k in judged},
            "expected_actions": [a.get("name") for a in expected if isinstance(a, dict)],
        },
    }
    return build(fields, ctx)
