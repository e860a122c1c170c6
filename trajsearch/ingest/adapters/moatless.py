"""``moatless``: Moatless Tools trajectory files (aorwall/moatless-tools, its 2024 state-machine ``AgenticLoop``), one
run each.

Source read: aorwall/moatless-tools ``moatless/trajectory.py`` and ``moatless/benchmark/evaluation.py`` (2024-06 to
2024-09); real files: the repository's own ``tests/trajectories/`` (runs of its SWE-bench evaluations
``20240815_code_gpt-4o``, ``20240815_code_claude-3-5-sonnet-20240620``, ``20240818_moatless_verified``; see
``tests/fixtures/moatless/.sweexp30/README.md``), the loop its 2024 SWE-bench leaderboard submissions ran.

A file is one JSON object (June 2024: ``name`` ``AgenticLoop``, ``initial_message``, ``transitions``, ``info``; from
July: ``MoatlessTools`` and also ``transition_rules`` (the state machine, its ``global_params.model``),
``workspace``, ``initial_message`` (the issue), ``current_transition_id``, ``transitions`` (each state the loop
entered: ``id``, ``name`` (``SearchCode``, ``IdentifyCode``, ``DecideRelevance``, ``PlanToCode``, ``EditCode``,
``ClarifyCodeChange``, ``Finished``, ``Rejected`` ...), ``timestamp``, ``properties`` (its model), ``actions``:
each ``{request, response, completion}``, in June ``{action, output, completion_cost}``) and ``info`` (the
evaluation's: ``instance_id``, ``evaluation_name``, ``trace_id``, ``status``, ``error``, ``submission``,
``total_cost``).

Mapping
- task: ``initial_message``; task_id and ``metadata.instance_id``: ``info.instance_id``; model_id: the first
  state's ``properties.model``, else ``transition_rules.global_params.model``.
- steps: each action of each state, its action the state's name; its request (June 2024: ``action``) without
  ``scratch_pad`` (``thoughts``) the arguments (the search requests, the planned change, the edit), that the
  thought; the response's (June: the action's) output the observation (an edit's ``message`` and ``diff``); a
  response asking for a retry (``retry_message``: Moatless refused the request) is the step's error.
- outcome: ``info.status`` (June 2024: ``completed`` true for ``finished``) ``finished`` with a ``submission`` ->
  success "submitted, not evaluated" (as SWE-agent's) until an outcome file says; ``finished`` with none and
  ``rejected`` (the agent gave the task up) -> failure; ``error`` (the loop raised: ``info.error`` is its
  traceback) -> infra_error, unless its last line is the loop's abort on its own limit ("The loop was aborted
  because the cost exceeded the limit.": a failure, the run used its budget); no status -> unknown.
- trajectory_id: ``moatless.<info.trace_id>`` (``coder_<instance>_<start>``), else a digest of the task and the
  first state's time. created_at: the first state's ``timestamp``.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from trajsearch.model import UNEVALUATED, Failure, Outcome, Trajectory

from ._agent_cli import finish_steps, iso_time
from ._common import Context, RecordError, as_dict, build, clip_task, json_kind, json_object, safe_id, short

NAME = "moatless"
ID_PREFIX = "moatless"
_KEYS = frozenset({"initial_message", "transitions"})
#: What names the loop's file: its ``workspace`` (from July 2024), or the ``info`` its evaluation wrote (June 2024).
_OWN_KEYS = frozenset({"workspace", "info"})
#: ``AgenticLoop``'s abort on a limit of its own (``loop.py``: "The loop was aborted because the cost exceeded the
#: limit."): the run used its budget, the agent's failure, as SWE-agent's ``exit_cost``.
_LIMIT = re.compile(r"The loop was aborted because (?:the )?(.+?) exceeded the limit")


def matches(record: Any) -> bool:
    return isinstance(record, dict) and _KEYS <= record.keys() and bool(_OWN_KEYS & record.keys()) \
        and isinstance(record["transitions"], list) and isinstance(record["initial_message"], str)


_THOUGHTS = ("scratch_pad", "thoughts")


def _observation(response: dict[str, Any]) -> str | None:
    output = response.get("output")
    if isinstance(output, dict) and ("message" in output or "diff" in output):
        return "\n".join(str(output[k]) for k in ("message", "diff") if output.get(k)) or None
    if output:
        return json.dumps(output, ensure_ascii=False)
    return response.get("retry_message") or None


def _states(transitions: Any) -> list[dict[str, Any]]:
    """The loop's states, each an object whose ``actions`` are a list: anything else is no Moatless run (read, it
    was a run of no steps with the outcome ``info`` gave, unsaid)."""
    if not isinstance(transitions, list):
        raise RecordError(f"`transitions` is {json_kind(transitions)}, not a list of states")
    for n, state in enumerate(transitions, 1):
        if not isinstance(state, dict):
            raise RecordError(f"`transitions` entry {n}: expected a state object, found {json_kind(state)}")
        if not isinstance(state.get("actions") or [], list):
            raise RecordError(f"`transitions` entry {n}: `actions` is {json_kind(state['actions'])}, not a list")
    return transitions


def _steps(states: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps = []
    for state in states:
        for action in (as_dict(a) for a in state.get("actions") or []):
            # from July 2024 {request, response}; in June {action, output} (its thought ``thoughts``)
            request = as_dict(action.get("request") if "request" in action else action.get("action"))
            response = as_dict(action.get("response")) if "response" in action else action
            retry = response.get("retry_message")
            steps.append({"thought": request.get("scratch_pad") or request.get("thoughts") or None,
                          "action": str(state.get("name") or "state"),
                          "arguments": {k: v for k, v in request.items() if k not in _THOUGHTS},
                          "observation": _observation(response),
                          "error": short(str(retry), 300, keep="head") if retry else None,
                          "ended_at": iso_time(state.get("timestamp"))})
    return steps


def _verdict(info: dict[str, Any]) -> tuple[Outcome, Failure | None, dict[str, Any]]:
    status, error = info.get("status"), str(info.get("error") or "").strip()
    if status is None and info.get("completed") is True:  # June 2024: ``completed`` where later files say status
        status = "finished"
    if status == "finished" and str(info.get("submission") or "").strip():
        return Outcome.success, None, {"outcome_basis": UNEVALUATED}
    if status in ("finished", "rejected"):
        return Outcome.failure, Failure(error=short(error, 300, keep="head") if error else f"{status} with no patch",
                                        cause="the agent handed in no patch" if status == "finished"
                                        else "the agent rejected the task"), {}
    if status == "error":
        last = next((line for line in reversed(error.splitlines()) if line.strip()), "the loop raised")
        if limit := _LIMIT.search(last):
            return Outcome.failure, Failure(error=short(last, 300),
                                            cause=f"the run used its {limit.group(1)} limit"), {}
        return Outcome.infra_error, Failure(error=short(last, 300), cause="Moatless' loop raised (info.error)"), {}
    return Outcome.unknown, None, {}


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    task = record.get("initial_message")
    if not isinstance(task, str) or not task.strip():
        raise RecordError("a Moatless trajectory with no `initial_message` text: the loop was given no task")
    info = as_dict(record.get("info"))
    states = _states(record.get("transitions"))
    model = next((as_dict(s.get("properties")).get("model") for s in states
                  if as_dict(s.get("properties")).get("model")), None) \
        or as_dict(as_dict(record.get("transition_rules")).get("global_params")).get("model")
    started = next((s["timestamp"] for s in states if s.get("timestamp")), None)
    key = str(info.get("trace_id") or "") or hashlib.blake2b(f"{started}\0{task}".encode(), digest_size=8).hexdigest()
    outcome, failure, basis = _verdict(info)
    metadata = {k: v for k, v in {"instance_id": info.get("instance_id"),
                                  "evaluation_name": info.get("evaluation_name"), "status": info.get("status"),
                                  "cost": info.get("total_cost"), **basis}.items() if v is not None}
    fields: dict[str, Any] = {
        "trajectory_id": f"{ID_PREFIX}.{safe_id(key)}",
        "task": clip_task(task.strip()),
        "task_id": info.get("instance_id") or None,
        "model_id": model if isinstance(model, str) else None,
        "outcome": outcome,
        "failure": failure,
        "steps": finish_steps(_steps(states), metadata),
        "metadata": metadata,
    }
    if started_at := iso_time(started):
        fields["created_at"] = started_at
    return build(fields, ctx)
