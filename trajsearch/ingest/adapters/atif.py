"""``atif``: Agent Trajectory Interchange Format (Harbor's ``trajectory.json``, ATIF-v1.x).

Mapping
- task: the ``message`` of the first ``source: "user"`` step.
- trajectory_id = ``atif.<session_id>``; model_id = ``agent.model_name`` (else
  the first agent step's ``model_name``); tool_versions =
  ``{agent.name: agent.version}``; created_at = the first step ``timestamp``.
- steps, in ``step_id`` order (system steps dropped, the first user step is the task):
  * an agent step with ``tool_calls``: one step per call: action =
    ``function_name``, arguments = ``arguments``, observation = the
    ``observation.results[]`` entry whose ``source_call_id`` is the call's
    ``tool_call_id`` (results without a call id go to the first call);
    thought = ``reasoning_content`` (else ``message``) on the first call;
    Step.error = the result's first line when the result is flagged
    ``is_error`` or reads as an error (a Python exception line, "Error: ...").
  * an agent step without tool calls: a ``respond`` step (arguments
    ``{"content": message}``) with any observation it carries.
  * a later user step: a step with no action and the message as observation.
- outcome: ATIF carries no verdict: ``unknown``, unless the root ``extra``
  holds one (``extra.outcome`` success/failure, or ``extra.reward``: 1 ->
  success, 0 -> failure, kept as reward). Harbor writes the verifier's reward
  into the trial's ``result.json``: join it with ``--outcomes``.
- metadata: ``schema_version``, agent name, ``final_metrics`` totals, notes.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from trajsearch.model import Outcome, Trajectory

from ._common import Context, RecordError, build, clip_step_text, clip_task, json_object, list_field, safe_id, short

NAME = "atif"
#: A file is one run: the reader hands over its whole JSON document.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"schema_version"\s*:\s*"ATIF', re.I)
_ERRORISH = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)\b:|Error:|ERROR\b|Traceback)", re.M)


def matches(record: Any) -> bool:
    return isinstance(record, dict) and str(record.get("schema_version", "")).upper().startswith("ATIF") or (
        isinstance(record, dict) and "session_id" in record and isinstance(record.get("steps"), list)
        and isinstance(record.get("agent"), dict)
    )


def _time(value: Any) -> datetime | None:
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return None


def _result_error(result: dict[str, Any], content: str) -> str | None:
    if result.get("is_error") or _ERRORISH.search(content or ""):
        lines = [ln for ln in (content or "").splitlines() if ln.strip()]
        match = next((ln for ln in reversed(lines) if _ERRORISH.search(ln)), lines[0] if lines else "tool error")
        return short(match.strip())
    return None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    raw_steps = list_field(record, "steps", "a list")
    session = record.get("session_id")
    if not session:
        raise RecordError("missing field 'session_id'")
    agent = record.get("agent") if isinstance(record.get("agent"), dict) else {}
    ordered = sorted((s for s in raw_steps if isinstance(s, dict)), key=lambda s: s.get("step_id") or 0)
    task = None
    steps: list[dict[str, Any]] = []
    models = []
    for raw in ordered:
        source = raw.get("source")
        message = raw.get("message") if isinstance(raw.get("message"), str) else ""
        at = _time(raw.get("timestamp"))
        if source == "system":
            continue
        if source == "user":
            if task is None:
                task = message
            else:
                steps.append({"action": None, "observation": clip_step_text(message), "started_at": at})
            continue
        if raw.get("model_name"):
            models.append(raw["model_name"])
        results = [r for r in ((raw.get("observation") or {}).get("results") or []) if isinstance(r, dict)]
        thought = raw.get("reasoning_content") or None
        calls = [c for c in raw.get("tool_calls") or [] if isinstance(c, dict)]
        if calls:
            unmatched = [r for r in results if not r.get("source_call_id")]
            for n, call in enumerate(calls):
                mine = [r for r in results if r.get("source_call_id") == call.get("tool_call_id")]
                if n == 0:
                    mine += unmatched
                content = "\n".join(str(r.get("content") or "") for r in mine) or None
                errors = [e for r in mine if (e := _result_error(r, str(r.get("content") or "")))]
                steps.append({
                    "thought": (thought or message or None) if n == 0 else None,
                    "action": str(call.get("function_name") or "tool")[:200],
                    "arguments": call.get("arguments"),
                    "observation": clip_step_text(content),
                    "error": errors[0] if errors else None,
                    "started_at": at,
                })
        else:
            content = "\n".join(str(r.get("content") or "") for r in results) or None
            steps.append({"thought": thought, "action": "respond", "arguments": {"content": message},
                          "observation": clip_step_text(content), "started_at": at})
    if not task or not task.strip():
        raise RecordError("no task: no step with source 'user' and a message")
    for index, step in enumerate(steps):
        step["index"] = index
        if isinstance(step.get("thought"), str):
            step["thought"] = clip_step_text(step["thought"])
    extra = record.get("extra") if isinstance(record.get("extra"), dict) else {}
    outcome, reward = Outcome.unknown, None
    if isinstance(extra.get("reward"), (int, float)) and not isinstance(extra.get("reward"), bool):
        reward = float(extra["reward"])
        outcome = Outcome.success if reward == 1 else Outcome.failure if reward == 0 else Outcome.unknown
    if str(extra.get("outcome", "")).lower() in ("success", "failure", "infra_error"):
        outcome = Outcome(str(extra["outcome"]).lower())
    final = record.get("final_metrics") if isinstance(record.get("final_metrics"), dict) else {}
    created = next((s["started_at"] for s in steps if s.get("started_at")), None) or _time(
        next((s.get("timestamp") for s in ordered if s.get("timestamp")), None))
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(f"atif.{session}"),
        "task": clip_task(task.strip()),
        "model_id": agent.get("model_name") or (models[0] if models else None),
        "tool_versions": {str(agent["name"]): str(agent.get("version"))} if agent.get("name") and agent.get("version") else {},
        "outcome": outcome,
        "reward": reward,
        "steps": steps,
        "created_at": created,
        "metadata": {
            "source_format": NAME,
            "schema_version": record.get("schema_version"),
            "agent": agent.get("name"),
            "session_id": session,
            **{k: final[k] for k in ("total_prompt_tokens", "total_completion_tokens", "total_cost_usd", "total_steps") if k in final},
            **({"notes": short(record["notes"], 500)} if isinstance(record.get("notes"), str) else {}),
        },
    }
    return build(fields, ctx)
