"""``browser-use``: browser-use (browser-use/browser-use) agent histories, one run per file.

Source read: browser-use/browser-use ``browser_use/agent/views.py`` (``AgentHistory.model_dump``,
``AgentHistoryList.save_to_file``, ``ActionResult``, ``StepMetadata``), ``browser/views.py``
(``BrowserStateHistory.to_dict``) and ``agent/prompts.py`` (``AgentMessagePrompt``), 0.1.12 (2024-11) to the head
of 2026; real files: jakkaj/tools ``AgentHistory.json`` and MaromSv/Pentest_agent ``agent_history.json`` (see
``tests/fixtures/browser-use/.browseruse30/README.md``); the ``state_message`` path checked on a real 0.9.5 history
(hireshBrem/browserbrain-ai ``server/main.py``, not committed: no licence); a run that used its ``max_steps``
written by browser-use 0.13.14 itself (``tests/fixtures/browser-use/.aud33/README.md``).

``agent.save_history(path)`` (``AgentHistoryList.save_to_file``, default ``AgentHistory.json``) writes
``{"history": [...]}``, one item per agent step: ``model_output`` (None for a step that failed before the model
answered), ``result`` (an ``ActionResult`` per action run: ``is_done``, ``success``, ``error``,
``extracted_content``, ``long_term_memory`` ...), ``state`` (the page the model saw: ``url``, ``title``,
``tabs``, ``interacted_element``, ``screenshot`` (base64, before 0.5.8) or ``screenshot_path``), ``metadata``
(``step_start_time`` / ``step_end_time`` in Unix seconds, ``step_number``; from 0.1.40) and, from 0.7.11,
``state_message`` (the state prompt the model got). ``model_output`` holds the model's ``action`` list
(``[{<action name>: {params}}]``; one such object, and one result, a step from 0.1.12 to 0.1.16) and its reasoning:
``current_state`` ``{evaluation_previous_goal, memory, next_goal}`` before 0.3.2 (2025-06), then those keys flat
beside ``action``, with ``thinking`` where the model gave it, and from 0.12 its plan (``plan_update``,
``current_plan_item``).
The conversation log (``save_conversation_path``) and the GIF are other outputs, not read.

Mapping
- task: the ``<user_request>`` of the last ``state_message`` (0.7.11 on; a follow-up ``add_new_task`` added is a
  ``Follow-up:`` line). A history without one (older, or whose steps failed before their state prompt) keeps no task:
  the task is then a placeholder, labelled first (``[no task recorded ...] first goal: ...``): the model's first
  ``next_goal`` (a sub-goal mostly, not the task), or with none the first page; ``metadata.task_from`` says which,
  ``metadata.task_seen_by_agent`` is False.
- steps: each action of a step with its result (``result[i]`` answers ``action[i]``; an action past the results was
  not run, its error ``not run: ...``: browser-use stops a step's actions at an error, ``done`` or a page change),
  its observation the ``extracted_content`` (else ``long_term_memory``, else the error); a result's ``error`` is the
  step's error (its decisive line). The model's ``thinking``, ``evaluation_previous_goal``, ``memory``,
  ``next_goal`` and plan are the thought of the step's first action (none for the step 0 of ``initial_actions``,
  which browser-use ran itself).
  ``done`` is a ``respond`` step with its ``text`` (structured output: its ``data`` as JSON). A step without model
  output (the model call or the step raised) is an ``agent_error`` step carrying its results' error.
  started_at / ended_at: the step's ``step_start_time`` / ``step_end_time``.
- outcome: the last step's last result: ``is_done`` and ``success`` true -> success; ``success`` false (the agent
  said it did not finish the task) -> failure, the done text its error; a run that used its ``max_steps``
  -> failure (the agent's own step limit, as in ``trae_agent`` and ``openhands``): from 0.1.42 ``Agent.run`` then
  appends a history item of its own, ``model_output`` and ``metadata`` null, an empty page and the one result
  ``error: "Failed to complete task in maximum steps"``, which is that verdict, not a step (the last page is the
  agent's last step's; a note before a rerun or a follow-up is no step either, and a history of notes alone, as
  ``run(max_steps=0)`` writes, is refused: no step of the agent's); done without ``success`` (before it was
  recorded) or not done (an error, interrupted) -> unknown, ``metadata.ended_by`` says which. The LLM judge's
  ``judgement`` on that result (0.9.6 on, ``use_judge`` by default) is kept as ``metadata.judgement``, its
  ``failure_reason`` the failure's cause; like browser-use, it does not override the agent's own ``success``.
- metadata: ``history_steps``, the agent's history items (not browser-use's notes); ``last_url``, its last page.
- trajectory_id: ``browser-use.<digest of the first step>``: the history keeps no run id, and its file is mostly
  ``AgentHistory.json``; the first step (its start time, page and model output) names the run in any copy, and
  stays while a run saved after each step grows. created_at: the first ``step_start_time``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

from trajsearch.actions import not_run
from trajsearch.model import TASK_SEEN_BY_AGENT, Failure, Outcome, Trajectory

from ._agent_cli import error_line, finish_steps, in_trial, iso_time
from ._common import Context, RecordError, as_dict, as_list, clip_task, json_object, short

NAME = "browser-use"
ID_PREFIX = "browser-use"
#: The keys every version's ``AgentHistory.model_dump`` writes for a step.
_STEP_KEYS = frozenset({"model_output", "result", "state"})
#: A history's head as ``save_to_file`` writes it (``json.dump(..., indent=2)``): a file too big to parse for
#: detection (base64 screenshots before 0.5.8) is told by it.
SIGNATURE = re.compile(r'\A\ufeff?\s*\{\s*"history"\s*:\s*\[\s*\{\s*"model_output"\s*:')
#: The task in the state prompt recorded as ``state_message`` (``AgentMessagePrompt``, 0.7.11 on), between these.
_USER_REQUEST = ("<user_request>\n", "\n</user_request>")
#: A task with follow-ups (``Agent.add_new_task``): the first request and each one added, in one ``<user_request>``.
_INITIAL_REQUEST = ("<initial_user_request>", "</initial_user_request>")
_FOLLOW_UP = ("<follow_up_user_request>", "</follow_up_user_request>")
#: The model's reasoning keys, in the order a reader follows them.
_REASONING = (("thinking", "Thinking"), ("evaluation_previous_goal", "Evaluation"), ("memory", "Memory"),
              ("next_goal", "Next goal"))
#: An action past a step's results: browser-use stops a step's actions at an error, ``done`` or a page change.
_NOT_RUN = not_run("browser-use ended the step's actions before it (an earlier one errored, finished or changed "
                   "the page)")
#: The error of the item ``Agent.run`` appends when the run used its ``max_steps`` without ``done`` (0.1.42 on).
_MAX_STEPS = "Failed to complete task in maximum steps"
#: ``state.title`` of the step 0 that records the ``initial_actions`` browser-use ran itself (0.7.8 on), with
#: reasoning of its own ("Initial navigation"), not the model's.
_INITIAL = "Initial Actions"


def matches(record: Any) -> bool:
    if not isinstance(record, dict) or not isinstance(record.get("history"), list) or not record["history"]:
        return False
    first = record["history"][0]
    return isinstance(first, dict) and _STEP_KEYS <= first.keys()


def _initial(item: dict[str, Any]) -> bool:
    """Whether a step is the ``initial_actions`` browser-use ran before the model's first step."""
    return as_dict(item.get("state")).get("title") == _INITIAL and as_dict(item.get("metadata")).get("step_number") == 0


def _brain(output: dict[str, Any]) -> dict[str, Any]:
    """A step's model output with its reasoning keys flat: beside ``action`` (0.3.2 on) or under ``current_state``."""
    return {**as_dict(output.get("current_state")), **output}


def _reasoning(output: dict[str, Any]) -> str | None:
    said = _brain(output)
    parts = [f"{label}: {str(said[key]).strip()}" for key, label in _REASONING if str(said.get(key) or "").strip()]
    if plan := "; ".join(str(p).strip() for p in as_list(said.get("plan_update")) if str(p).strip()):
        parts.append(f"Plan: {plan}")
    if isinstance(said.get("current_plan_item"), int):
        parts.append(f"At plan item: {said['current_plan_item']}")
    return "\n".join(parts) or None


def _results(item: dict[str, Any]) -> list[dict[str, Any]]:
    """A step's results: a list (0.1.17 on), or one object (0.1.12 to 0.1.16, one action a step)."""
    results = item.get("result")
    return [r for r in ([results] if isinstance(results, dict) else as_list(results)) if isinstance(r, dict)]


def _observation(result: dict[str, Any]) -> str | None:
    for key in ("extracted_content", "long_term_memory", "error"):
        if text := str(result.get(key) or "").strip():
            return text
    return None


def _error(said: str) -> str | None:
    """A step's error: the decisive line of what browser-use said (a traceback's last exception, mostly one line)."""
    return error_line(said, short(said, 300, keep="head")) if said else None


def _done_text(params: Any) -> str:
    """What the agent answered with ``done``: its ``text``, or a structured output's ``data`` as JSON."""
    if isinstance(params, str):  # not what browser-use writes, but it is the answer
        return params
    params = as_dict(params)
    if isinstance(params.get("text"), str):
        return params["text"]
    data = params.get("data", {k: v for k, v in params.items() if k not in ("success", "files_to_display")})
    return data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)


def _steps(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for n, item in enumerate(history):
        output = item.get("model_output")
        results = _results(item)
        timing = as_dict(item.get("metadata"))
        began, when = iso_time(timing.get("step_start_time")), iso_time(timing.get("step_end_time"))
        if output is None:  # the step raised before (or while) the model answered
            said = "\n".join(text for r in results if (text := str(r.get("error") or "").strip()))
            if said:
                steps.append({"action": "agent_error", "observation": said, "error": _error(said),
                              "started_at": began, "ended_at": when})
            continue
        if not isinstance(output, dict):
            raise RecordError(f"history[{n}].model_output is {type(output).__name__}, not an object")
        actions = output.get("action")
        if isinstance(actions, dict):  # 0.1.12 to 0.1.16: one action a step
            actions = [actions]
        if not isinstance(actions, list):
            raise RecordError(f"history[{n}].model_output.action is {type(actions).__name__}, not a list of actions")
        thought = None if _initial(item) else _reasoning(output)
        for i, action in enumerate(actions):
            # pydantic's own dump (``model_dump_json``) writes every action's key, the ones not taken null
            chosen = {k: v for k, v in action.items() if v is not None} if isinstance(action, dict) else {}
            if len(chosen) != 1 or not next(iter(chosen)):
                raise RecordError(f"history[{n}].model_output.action[{i}] is not one {{<action name>: params}}")
            [(name, params)] = chosen.items()
            result = results[i] if i < len(results) else None
            step: dict[str, Any] = {"thought": thought if i == 0 else None, "started_at": began, "ended_at": when}
            if name == "done":
                step.update(action="respond", arguments={"content": _done_text(params)})
            else:
                step.update(action=str(name), arguments=params,
                            observation=_observation(result) if result is not None else None)
            step["error"] = _error(str(result.get("error") or "").strip()) if result is not None else _NOT_RUN
            steps.append(step)
    return steps


def _tagged(text: str, tags: tuple[str, str]) -> Iterator[str]:
    """What each ``<tag>...</tag>`` of ``text`` holds, in order: found with ``str.find``, as a lazy pattern would
    (``<tag>(.*?)</tag>``), which rescanned the text to its end from each opener left unclosed (RT2 4)."""
    opener, closer = tags
    at = 0
    while (start := text.find(opener, at)) >= 0 and (end := text.find(closer, start + len(opener))) >= 0:
        yield text[start + len(opener):end]
        at = end + len(closer)


def _request(said: str) -> str:
    """The task a ``<user_request>`` holds: the request, with each follow-up the user added on a line of its own."""
    if (first := next(_tagged(said, _INITIAL_REQUEST), None)) is None:
        return said.strip()
    return "\n".join([first.strip(), *(f"Follow-up: {more.strip()}" for more in _tagged(said, _FOLLOW_UP))])


def _task(history: list[dict[str, Any]]) -> tuple[str, str | None]:
    """(the task, where it came from if not the user's request): the last state prompt's ``<user_request>`` (it holds
    the request and every follow-up), else a placeholder, labelled first so a clipped task shows the label."""
    for item in reversed(history):
        if isinstance(item.get("state_message"), str) and \
                (found := next(_tagged(item["state_message"], _USER_REQUEST), None)) is not None:
            if task := _request(found):
                return task, None
    # from 0.7.11 every step writes the key, null where the step failed before its state prompt was built
    why = ": no state prompt was recorded" if any("state_message" in item for item in history) else \
        " before browser-use 0.7.11"
    goal = next((g for item in history if isinstance(item.get("model_output"), dict) and not _initial(item)
                 if (g := str(_brain(item["model_output"]).get("next_goal") or "").strip())), None)
    if goal:  # a sub-goal mostly ("Fill the 'First Name' field ..."), not the task restated
        return f"[no task recorded{why}] first goal: {goal}", "the model's first next_goal"
    url = next((u for item in history if (u := str(as_dict(item.get("state")).get("url") or "")) and
                u != "about:blank"), "")
    return f"[no task recorded{why}] first page: {url or 'none recorded'}", "the first page"


def _ran_out(item: dict[str, Any]) -> bool:
    """Whether a history item is browser-use's note that the run used its ``max_steps`` (no model output, no step
    metadata, its one result that error), not a step of the agent's."""
    return item.get("model_output") is None and item.get("metadata") is None and \
        [r.get("error") for r in _results(item)] == [_MAX_STEPS]


def _verdict(last: dict[str, Any], ran_out: bool) -> tuple[Outcome, Failure | None, str | None]:
    """(outcome, failure, how the run ended where no success is recorded) from the last step's last result, or the
    note that the run used its ``max_steps``."""
    if ran_out:
        return Outcome.failure, Failure(error=_MAX_STEPS, cause="the agent used its max_steps without calling done"), \
            "max steps"
    if last.get("is_done") is not True:
        return Outcome.unknown, None, "not done: the run stopped before the agent called done (max steps, an " \
                                      "error or an interruption)"
    if last.get("success") is True:
        return Outcome.success, None, None
    if last.get("success") is False:
        said = str(last.get("extracted_content") or "").strip()
        judged = str(as_dict(last.get("judgement")).get("failure_reason") or "").strip()
        return Outcome.failure, Failure(error=short(said, 500, keep="head") if said else "done with success false",
                                        cause=judged or "the agent reported it did not complete the task"), None
    if last.get("success") is not None:
        return Outcome.unknown, None, f"done, success {last['success']!r} is not true or false"
    return Outcome.unknown, None, "done, no success recorded (browser-use before it recorded one)"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    history = record.get("history")
    if history == []:
        raise RecordError("a browser-use history with no steps: it was saved before the agent's first step")
    if not matches(record):  # ``--format browser-use`` on another tool's file: refused by name, not read as a run
        if not isinstance(history, list):
            held = "it has no `history`" if history is None else f"its `history` is {type(history).__name__}"
        elif isinstance(history[0], dict):
            held = f"its first `history` item has keys {sorted(history[0])}"
        else:
            held = f"its first `history` item is {type(history[0]).__name__}"
        raise RecordError(f"not a browser-use history (agent.save_history() writes "
                          f"{{\"history\": [{{\"model_output\", \"result\", \"state\", ...}}]}}); {held}")
    for n, item in enumerate(history):
        if not isinstance(item, dict):
            raise RecordError(f"history[{n}] is {type(item).__name__}, not a step object")
    # every max-steps note is browser-use's, not a step: a rerun of an agent out of steps (``n_steps`` is never reset)
    # appends another at once, a follow-up (``add_new_task``) run after one leaves it mid-history; the last decides
    taken = [item for item in history if not _ran_out(item)]
    if not taken:
        raise RecordError(f"a browser-use history with no agent step: only browser-use's note that the run used its "
                          f"max_steps ({len(history)}), as after run(max_steps=0)")
    first = json.dumps(taken[0], sort_keys=True, ensure_ascii=False).encode()
    task, task_from = _task(history)
    last = (_results(taken[-1]) or [{}])[-1]  # the last step's last result: verdict, judge's
    outcome, failure, ended_by = _verdict(last, _ran_out(history[-1]))
    state = as_dict(taken[-1].get("state"))  # the page the agent saw at its last step
    judgement = as_dict(last.get("judgement"))
    metadata = {"ended_by": ended_by, "last_url": state.get("url") or None, "judgement": judgement or None,
                "history_steps": len(taken), "task_from": task_from,
                TASK_SEEN_BY_AGENT: False if task_from else None}
    metadata = {k: v for k, v in metadata.items() if v is not None}
    return in_trial(ctx, {
        "trajectory_id": f"{ID_PREFIX}.{hashlib.blake2b(first, digest_size=8).hexdigest()}",
        "task": clip_task(task),
        "outcome": outcome,
        "failure": failure,
        "steps": finish_steps(_steps(taken), metadata),
        "created_at": iso_time(as_dict(taken[0].get("metadata")).get("step_start_time")),
        "metadata": metadata,
    })
