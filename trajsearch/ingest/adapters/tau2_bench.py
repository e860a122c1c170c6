"""``tau2-bench``: tau2-bench results (sierra-research/tau2-bench, ``tau2.data_model.simulation.Results``).

Shapes read:
- the ``json`` results file, one document ``{"timestamp", "info", "tasks",
  "simulations", "simulation_index"?}``: one run per ``simulations[]``
  entry (``split``), joined to its task by ``task_id``;
- the ``dir`` layout: ``results.json`` (the same without ``simulations``:
  it yields no run) beside ``simulations/<id>.json``, one ``SimulationRun``
  per file; its task and run info are read from that ``results.json``;
- a fork's export of one simulation per file (codesque16/tau2-bench
  ``scripts/export_trajectories_for_pages.py``, ``docs/data/<run>/task_<id>.json``):
  ``{"task_id", "task", "run_info", "reward_info", "messages"}``, the
  simulation's id, time, duration, termination reason and costs under
  ``run_info`` (``simulation_id``, ``timestamp``, ``duration_sec``, ...), its
  task (the results file's, joined by the exporter) as ``task``; it keeps no
  ``info``, so no model, and the domain is the one the task names;
- the simulations alone, as tau2's leaderboard keeps some submissions'
  trajectories (``web/leaderboard/public/submissions/<s>/trajectories/``:
  its viewer reads ``tasks`` as optional): a bare list of ``SimulationRun``s
  (no model but the one the agent's messages name; no domain: read from the ``submission.json`` beside
  ``trajectories/``, the policy the simulations saved or the file's or folder's name, see ``_domain_of_file``; ``--set task_family=<domain>`` names it), or a
  summary ``{"domain", "agent", "model", "total_tasks", "passed",
  "simulations"}`` (its domain, agent and model stand for ``info``'s). No
  task definitions: each run is a simulation saved without its task (below).

Mapping (``SimulationRun``, ``Task``, ``message.py``)
- task = the joined task's user scenario: ``user_scenario.instructions``
  (a string, or the structured reason for call / known info / unknown info /
  task instructions, labelled as tau2 prints them), else the task's
  ``ticket``, else its ``description.purpose``: texts its agent never saw
  (metadata ``task_seen_by_agent: false``: export starts at the steps). A solo run (agent
  ``llm_agent_solo``, user ``dummy_user``: no one talks to the agent) takes
  the ``ticket`` first, the one text its agent got. A simulation
  whose task is not in the file (saved on its own, as a fork's human
  trajectories are, in a results file with ``"tasks": []``, or among the
  simulations alone) takes a task
  it embeds (``task``), else the user's first message (metadata
  ``task_definition: "missing"`` and ``task_from`` say so); one with neither
  and no conversation (no text, tool call or tool result: a full-duplex
  run's empty chunks are none) holds no run and is rejected, naming the task id, unless the harness ended it
  (``infrastructure_error``: a 0-step ``infra_error`` run) or it has a verdict.
- task_id = ``<domain>-<task_id>``; task_family = the domain
  (``info.environment_info.domain_name``, else the task's
  ``user_scenario.instructions.domain``, else, for simulations saved alone, ``_domain_of_file``; with no domain
  found, ``tau2-<file stem>-<task_id>``, family ``tau2``: a file's tasks are not another domain's); trajectory_id =
  ``tau2.<domain>.<task_id>.t<trial>.<simulation id>`` (the simulation's
  own uuid: stable, and distinct across trials and result files); with no domain found,
  ``tau2.<task_id>.t<trial>.<simulation id>`` (until round 28 ``tau2.tau2...``, named in ``metadata.former_ids``).
- steps, in message order (``messages``, or for full-duplex runs the
  ``ticks`` flattened as tau2's ``get_messages`` does; system messages dropped):
  * each assistant tool call (``requestor: assistant``): action = ``name``,
    arguments = ``arguments``, thought = the model's reasoning (the
    message's ``reasoning_content``, else its ``raw_data.choices[0].message``'s,
    where the 2026 layout keeps a vLLM reasoning model's), then the text sent
    with it, observation = the ``tool`` message with the same ``id``
    (``MultiToolMessage`` unpacked), else the oldest unanswered call; Step.error = the reply's first line when
    the tool message says ``error: true``, or, with no ``error`` flag (tau2's leaderboard ``trim_trajectories.py``
    strips it), when the reply is tau2's wording of a tool that raised (``Error: <exception>``).
  * an assistant text: action ``respond``, arguments ``{"content": text}``,
    thought = the model's reasoning, observation = the user's next message
    (tool calls the simulated user makes on its own device, e.g. telecom, are
    appended to it as ``[user tool] ...``, their replies as ``[user tool result] ...``: a reply's ``requestor``
    says whose call it answers, else, as tau2's leaderboard ``trim_trajectories.py`` strips it and the ``id`` from
    every message, whoever made the last tool calls).
  * a user message answering nothing (the user speaks first): a step with no
    action.
- outcome: ``termination_reason`` ``infrastructure_error`` (a harness
  failure), ``user_error`` (the user simulator broke) and
  ``unexpected_error`` -> ``infra_error``; so is ``agent_error`` when the agent
  sent nothing of its own (no message at all, or only the greeting tau2 writes
  for it). tau2 ends a run ``agent_error`` when
  the agent breaks the conversation's rules (an empty message, text with tool
  calls, text in solo mode: ``Orchestrator.check_communication_error``): after
  turns of its own that is the agent's failure, read from the reward as any;
  forks also write it, with ``messages: []``, for a task that raised before
  any turn (codesque16/tau2-bench ``run.py``: e.g. the model could not be
  called) or that their solo agent skips; otherwise ``reward_info.reward``
  through the operator's success threshold (``outcome_of_reward``); no reward
  -> ``unknown``. failure (not success) names the termination reason, the
  reward breakdown, the evaluator's note (``reward_info.info.note``), unmet checks (DB mismatch, failed actions /
  NL assertions / communicated info / env assertions: only those of the task's
  ``reward_basis``, the others run for diagnostics) and the last tool error.
- model_id = ``info.agent_info.llm``, else (no ``info``) the ``raw_data.model`` of the agent's
  messages; created_at = the simulation's
  ``start_time``; step times from message ``timestamp``s.
- metadata: termination_reason, trial, seed, duration, agent/user cost, user
  simulator model, reward breakdown, the results file's timestamp.
- passed over: a leaderboard submission's ``submission.json`` beside its ``trajectories/`` (``side_file``); and
  (``side_path``) a simulation's artifacts beside its run's ``results.json`` (``artifacts/task_<id>/sim_<id>/``:
  ``sim_status.json``, ``llm_debug/`` call logs), the simulations it discarded for a hallucinating user simulator
  (``hallucination_discarded/``), each run again, the ``<stem>_trimmed.json`` copy tau2's
  ``trim_trajectories.py`` writes beside ``<stem>.json``, and the leaderboard site's ``manifest.json`` and
  ``schema.json`` beside its submissions.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import UNKNOWN_TOOL
from trajsearch.model import TASK_SEEN_BY_AGENT, Failure, Outcome, Trajectory

from ._agent_cli import join_thought, utc_time
from .tau_bench import unexpected_writes, unmet_actions
from ._common import (
    Context,
    RecordError,
    as_dict,
    as_list,
    build,
    clip_step_text,
    clip_task,
    json_object,
    last_tool_error,
    loads,
    message_reasoning,
    outcome_of_reward,
    safe_id,
    short,
    with_former_id,
    with_validation_error,
)

NAME = "tau2-bench"
#: A results file is one JSON document holding every simulation: ``split`` yields them.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(
    r'"global_simulation_guidelines"\s*:|"termination_reason"\s*:\s*"(?:user_stop|agent_stop|max_steps|timeout|'
    r'too_many_errors|agent_error|user_error|infrastructure_error|context_window_exceeded|unexpected_error)"'
)
INFRA_REASONS = {"infrastructure_error", "user_error", "unexpected_error"}
#: The first message tau2's orchestrator writes for the agent (``DEFAULT_FIRST_AGENT_MESSAGE``): not the agent's own.
CANNED_GREETING = "Hi! How can I help you today?"
#: What tau2's environment replies when a tool raises (``Environment.get_response``: ``f"Error: {e}"``, ``error=True``).
TOOL_ERROR_PREFIX = "Error: "


def _is_simulation(record: Any) -> bool:
    return (
        isinstance(record, dict)
        and "task_id" in record
        and "termination_reason" in record
        and ("messages" in record or "ticks" in record)
    )


def _is_run_export(record: Any) -> bool:
    """A fork's export of one simulation (module docstring): its run fields under ``run_info``, its task beside."""
    return (
        isinstance(record, dict)
        and "task_id" in record
        and isinstance(record.get("run_info"), dict)
        and "termination_reason" in record["run_info"]
        and isinstance(record.get("messages"), list)
    )


def _simulation_of_export(record: dict[str, Any]) -> dict[str, Any]:
    """The ``SimulationRun`` fields of a run export, under tau2's own names (the exporter renamed and moved them)."""
    run = record["run_info"]
    return {"id": run.get("simulation_id"), "task_id": record["task_id"], "timestamp": run.get("timestamp"),
            "duration": run.get("duration_sec"), "termination_reason": run.get("termination_reason"),
            "agent_cost": run.get("agent_cost"), "user_cost": run.get("user_cost"),
            "reward_info": record.get("reward_info"), "messages": record["messages"]}


def _not_a_run(record: dict[str, Any]) -> str:
    """Why a record read as tau2-bench is neither a results document nor a simulation: what it lacks."""
    lacking = [f"'{key}'" for key in ("task_id", "termination_reason") if key not in record]
    if "messages" not in record and "ticks" not in record:
        lacking.append("'messages'")
    return ("expected a tau2 results document ('tasks' with 'simulations') or a simulation run "
            f"('task_id', 'termination_reason', 'messages'): this object has no {', '.join(lacking)}")


def _simulations(value: Any) -> bool:
    """Whether ``value`` is a list of simulation runs (its first ones read as such)."""
    return isinstance(value, list) and bool(value) and all(_is_simulation(sim) for sim in value[:3])


def matches(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if isinstance(record.get("tasks"), list) and isinstance(record.get("info"), dict) and (
        "simulations" in record or "simulation_index" in record
    ):
        return True
    return _is_simulation(record) or _is_run_export(record) or (
        "tasks" not in record and _simulations(record.get("simulations")))


def _summary_info(document: dict[str, Any]) -> dict[str, Any]:
    """The run info a leaderboard summary wrapper states (``{"domain", "agent", "model", "simulations", ...}``, no
    ``info``), under the names of tau2's ``info``: the domain, and the agent and its model."""
    given = {"domain_name": document.get("domain"), "implementation": document.get("agent"),
             "llm": document.get("model")}
    given = {k: v for k, v in given.items() if isinstance(v, str) and v.strip()}
    agent = {k: given[k] for k in ("implementation", "llm") if k in given}
    return {**({"agent_info": agent} if agent else {}),
            **({"environment_info": {"domain_name": given["domain_name"]}} if "domain_name" in given else {})}


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """One record per simulation of a results document; a single simulation file is itself one."""
    if isinstance(document, dict) and isinstance(document.get("tasks"), list):
        sims = document.get("simulations")
        if sims is None:  # the dir layout's metadata: its runs are the files under simulations/
            return
        if not isinstance(sims, list):
            raise RecordError("field 'simulations' must be a list of simulation runs")
        if not sims:
            raise RecordError(f"no simulation in this tau2-bench results file ({len(document['tasks'])} task(s), "
                              "'simulations' empty): the run recorded none")
        tasks = {str(t.get("id")): t for t in document["tasks"] if isinstance(t, dict)}
        if not isinstance(document.get("info"), (dict, type(None))):
            raise RecordError("field 'info' must be an object (the run's agent, user and environment info)")
        context = {"info": document.get("info"), "timestamp": document.get("timestamp")}
        for n, sim in enumerate(sims, 1):
            task = tasks.get(str(sim.get("task_id"))) if isinstance(sim, dict) else None
            yield _position(n, sim), {"simulation": sim, "task": task, **context}
    elif isinstance(document, dict) and "tasks" not in document and _simulations(document.get("simulations")):
        info = _summary_info(document)
        for n, sim in enumerate(document["simulations"], 1):
            yield _position(n, sim), {"simulation": sim, "task": None, "info": info, "timestamp": None}
    elif _simulations(document):
        for n, sim in enumerate(document, 1):
            yield _position(n, sim), {"simulation": sim, "task": None, "info": None, "timestamp": None}
    else:
        yield "file", document


def _position(n: int, sim: Any) -> str:
    """Where a simulation is in its file, for a rejection: its place and id."""
    return f"simulation {n}" + (f" ({sim.get('id')})" if isinstance(sim, dict) and sim.get("id") else "")


@lru_cache(maxsize=8)
def _results_beside(path: str, mtime: float) -> tuple[dict[str, Any], dict[str, Any]]:
    """(tasks by id, results context) of the ``results.json`` of a dir-layout run."""
    data = loads(Path(path).read_text(encoding="utf-8"))
    tasks = {str(t.get("id")): t for t in data.get("tasks") or [] if isinstance(t, dict)}
    return tasks, {"info": data.get("info"), "timestamp": data.get("timestamp")}


def _sibling_results(source: Path) -> Path | None:
    for candidate in (source.parent.parent / "results.json", source.parent / "results.json"):
        if candidate.is_file():
            return candidate
    return None


#: tau2's folder of one simulation's artifacts, beside its run's ``results.json`` (``runner/batch.py``
#: ``_TaskLogContext``): ``<save dir>/artifacts/task_<task id>/sim_<simulation id>/``.
ARTIFACTS = "artifacts"
#: What tau2's leaderboard ``trim_trajectories.py`` adds to a results file's name for the copy it writes beside it
#: (``<stem>_trimmed.json``: every message's ``raw_data``, ids, voice fields and error flags stripped).
TRIMMED = "_trimmed"
#: Where tau2 keeps the simulations it threw away for a user simulator that hallucinated (full-duplex runs with
#: ``hallucination_retries``: ``<save dir>/hallucination_discarded/results_user_hallucination.json``, a results
#: file), each run again in its place.
DISCARDED = "hallucination_discarded"


#: The leaderboard site's own files beside its submissions (``web/leaderboard/public/submissions/``), what each is.
LEADERBOARD_FILES = {"manifest.json": "the list of submissions tau2's leaderboard site shows",
                     "schema.json": "the JSON Schema of a submission's submission.json"}
#: The fields every real leaderboard ``submission.json`` has (tau2's ``web/leaderboard/public/submissions/schema.json``
#: requires them, with ``contact_info`` and ``results``, which forks' submissions leave out).
_SUBMISSION_KEYS = frozenset({"model_name", "model_organization", "submitting_organization", "submission_date"})


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a tau2 leaderboard submission's ``submission.json`` (model,
    organisation, scores by domain, the trajectory file of each domain) sits beside its ``trajectories/`` and holds
    no run; a walk of the leaderboard's submissions had rejected one per submission as of no known format. Told by
    the keys all have and their scores (``results``) or trajectory files (``trajectory_files``): tau2's 67 have
    both or scores only, a fork's 2026-06 "legal" ones (pdhoolia/tau2-bench) trajectory files only. Where it names
    none, its ``trajectories_available`` says whether any are committed (in ``trajectories/`` beside it, as
    ToolOrchestra's are)."""
    if not (isinstance(record, dict) and _SUBMISSION_KEYS <= record.keys() and (
            isinstance(record.get("results"), dict) or isinstance(record.get("trajectory_files"), dict))):
        return None
    said = ("a tau2 leaderboard submission's metadata (submission.json: the model, its scores or trajectory files), "
            "not a run: ")
    if isinstance(record.get("trajectory_files"), dict):
        return said + "the runs are the files its 'trajectory_files' names, in trajectories/ beside it when committed"
    if record.get("trajectories_available") is False:
        return said + "it says no trajectories are available ('trajectories_available': false)"
    return said + "its runs, if committed, are the files in trajectories/ beside it"


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): what tau2 keeps of a simulation beside its results, under
    ``ARTIFACTS`` (with ``--verbose-logs``, and for voice runs): ``sim_status.json`` (the simulation used, discarded
    for a hallucinating user simulator, or failed), ``llm_debug/<time>_<call>_<id>.json`` (one LLM call's request
    and response), ``task.log``, audio. The run is the simulation in the results file (or ``simulations/``). And
    the results file of the simulations it discarded (``DISCARDED``): not runs to learn from, each was run again.
    And the copy ``trim_trajectories.py`` writes beside a results file (``TRIMMED``): the same runs, with less (the
    reasoning some models keep only in ``raw_data``), so a walk read each twice, the copy under an id of its own.
    And the leaderboard site's files beside its submissions (``LEADERBOARD_FILES``), each rejected in a walk."""
    if path.parent.name == DISCARDED and (path.parent.parent / "results.json").is_file():
        return ("tau2's simulations discarded because the user simulator hallucinated (hallucination_discarded/): "
                "each was run again, and the run that counts is in the results.json beside this folder")
    original = path.with_name(path.stem.removesuffix(TRIMMED) + path.suffix)
    if fmt == NAME and path.stem.endswith(TRIMMED) and original.is_file():
        return (f"tau2's trimmed copy of {original.name} beside it (trim_trajectories.py): read {original.name} "
                "instead: the same runs with more (the models' raw responses)")
    if fmt is None and path.name in LEADERBOARD_FILES and any(path.parent.glob("*/submission.json")):
        return f"{LEADERBOARD_FILES[path.name]} (beside submissions/<s>/submission.json), not a run"
    if fmt is not None or ARTIFACTS not in path.parts[:-1]:
        return None
    at = len(path.parts) - 1 - path.parts[::-1].index(ARTIFACTS)
    task, sim = (path.parts[at + 1:at + 3] + ("", ""))[:2]
    if not (task.startswith("task_") and sim.startswith("sim_")) or len(path.parts) < at + 4:
        return None
    if not (Path(*path.parts[:at]) / "results.json").is_file():
        return None
    return (f"tau2's artifacts of simulation {sim.removeprefix('sim_')} ({ARTIFACTS}/{task}/{sim}/: its status, LLM "
            "call logs), not a run: the simulation is in the results.json beside artifacts/")


# -- task ----------------------------------------------------------------------------------


def task_text(task: dict[str, Any], solo: bool = False) -> str | None:
    """The user's goal in a tau2 task (module docstring); in solo mode the ticket, the one text the agent got."""
    if solo and isinstance(task.get("ticket"), str) and task["ticket"].strip():
        return task["ticket"].strip()
    scenario = task.get("user_scenario") if isinstance(task.get("user_scenario"), dict) else {}
    instructions = scenario.get("instructions")
    if isinstance(instructions, str) and instructions.strip():
        return instructions.strip()
    if isinstance(instructions, dict):
        parts = []
        for key, label in (("reason_for_call", "Reason for call"), ("known_info", "Known info"),
                           ("unknown_info", "Unknown info"), ("task_instructions", "Task instructions")):
            value = instructions.get(key)
            if isinstance(value, str) and value.strip():
                parts.append(f"{label}:\n{value.strip()}")
        if parts:
            return "\n\n".join(parts)
    if isinstance(task.get("ticket"), str) and task["ticket"].strip():
        return task["ticket"].strip()
    description = task.get("description") if isinstance(task.get("description"), dict) else {}
    purpose = description.get("purpose")
    return purpose.strip() if isinstance(purpose, str) and purpose.strip() else None


# -- messages ------------------------------------------------------------------------------


def _messages(sim: dict[str, Any]) -> list[dict[str, Any]]:
    """The simulation's messages; full-duplex runs store ticks instead (flattened like ``Tick.get_all_messages``)."""
    if isinstance(sim.get("messages"), list):
        return [m for m in sim["messages"] if isinstance(m, dict)]
    out: list[dict[str, Any]] = []
    for tick in as_list(sim.get("ticks")):
        if not isinstance(tick, dict):
            continue
        for side in ("agent", "user"):
            chunk = tick.get(f"{side}_chunk") if isinstance(tick.get(f"{side}_chunk"), dict) else None
            calls = [c for c in as_list(tick.get(f"{side}_tool_calls")) if isinstance(c, dict)]
            if chunk or calls:
                out.append({"role": "assistant" if side == "agent" else "user",
                            "content": (chunk or {}).get("content"), "tool_calls": calls or None,
                            "timestamp": (chunk or {}).get("timestamp") or tick.get("timestamp")})
            out.extend(r for r in as_list(tick.get(f"{side}_tool_results")) if isinstance(r, dict))
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else json.dumps(value)


def _said(msg: dict[str, Any]) -> str:
    """A message's text; an audio message's is the script it was spoken from (``audio_script_gold``)."""
    return _text(msg.get("audio_script_gold") if msg.get("is_audio") else msg.get("content"))


def _reasoning(msg: dict[str, Any]) -> str | None:
    """The agent's reasoning: on the message, else in the model's response tau2 keeps with it (``raw_data``; the
    2026 layout keeps a vLLM reasoning model's only there)."""
    choices = as_list(as_dict(msg.get("raw_data")).get("choices"))
    return message_reasoning(msg) or message_reasoning(as_dict(choices[0]).get("message") if choices else None)


def _agent_model(messages: list[dict[str, Any]]) -> str | None:
    """The model the agent's own responses name (``raw_data.model`` of an assistant message), for simulations saved
    without ``info`` (a leaderboard's bare list): the user simulator's messages name its model, not the agent's."""
    for msg in messages:
        model = as_dict(msg.get("raw_data")).get("model") if msg.get("role") == "assistant" else None
        if isinstance(model, str) and model.strip():
            return model.strip()
    return None


def _tool_failed(result: dict[str, Any], content: str) -> bool:
    """Whether a tool reply is a failed call: its ``error`` flag, else tau2's own wording of a tool that raised
    (leaderboard trajectories lose the flag: tau2's ``trim_trajectories.py`` strips it from every message)."""
    flag = result.get("error")
    return flag if isinstance(flag, bool) else content.startswith(TOOL_ERROR_PREFIX)


def _requestor(result: dict[str, Any], caller: str | None) -> str | None:
    """Whose tool a reply answers: its ``requestor`` (tau2 writes it on every tool message since its first release),
    else, as tau2's leaderboard ``trim_trajectories.py`` strips it (and the ``id``) from every message, whoever made
    the last tool calls (``caller``): tau2 writes a call's replies right after the message that made it."""
    requestor = result.get("requestor")
    return requestor if isinstance(requestor, str) else caller


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    waiting: dict[str, list[dict]] = {}  # call id -> its unanswered steps, oldest first
    replying: dict[str, Any] | None = None  # the respond step the user's turn answers

    def hear(text: str, when: datetime | None) -> None:
        """The user's turn: the observation of the agent's last ``respond``, else a step of its own."""
        nonlocal replying
        if not text.strip():
            return
        if replying is not None:
            before = replying.get("observation")
            replying["observation"] = f"{before}\n{text}" if before else text
            replying["ended_at"] = when or replying.get("ended_at")
        else:
            replying = {"action": None, "observation": text, "started_at": when}
            steps.append(replying)

    def answer(result: dict[str, Any], caller: str | None) -> None:
        content = _text(result.get("content"))
        when = utc_time(result.get("timestamp"))
        if _requestor(result, caller) == "user":  # the simulated user's own device tool
            hear(f"[user tool result] {content}", when)
            return
        queue = waiting.get(str(result.get("id")))
        step = queue.pop(0) if queue else next(
            (s for s in steps if s["action"] not in (None, "respond") and "observation" not in s), None)
        if step is None:  # a reply to no recorded call: keep it rather than lose it
            step = {"action": UNKNOWN_TOOL, "started_at": when}
            steps.append(step)
        step["observation"] = content
        step["ended_at"] = when
        if _tool_failed(result, content):
            first = with_validation_error(content.strip().splitlines(), 0) if content.strip() else "tool call failed"
            step["error"] = short(first)

    caller: str | None = None  # who made the last tool calls: the replies after them answer them
    for msg in messages:
        role, when = msg.get("role"), utc_time(msg.get("timestamp"))
        if role == "tool":
            for result in as_list(msg.get("tool_messages")) or [msg]:
                if isinstance(result, dict):
                    answer(result, caller)
            continue
        content = _said(msg)
        calls = [c for c in as_list(msg.get("tool_calls")) if isinstance(c, dict)]
        caller = (role if isinstance(role, str) else None) if calls else caller
        if role == "assistant":
            replying = None
            reasoning = _reasoning(msg)
            for n, call in enumerate(calls):
                step = {"thought": join_thought([reasoning, content]) if n == 0 else None,
                        "action": str(call.get("name") or UNKNOWN_TOOL),
                        "arguments": call.get("arguments"), "started_at": when}
                steps.append(step)
                waiting.setdefault(str(call.get("id")), []).append(step)
            if not calls and content.strip():
                replying = {"thought": reasoning, "action": "respond", "arguments": {"content": content},
                            "started_at": when}
                steps.append(replying)
        elif role == "user":
            hear(content, when)
            for call in calls:
                hear(f"[user tool] {call.get('name')} {json.dumps(call.get('arguments'), sort_keys=True)}", when)
    for index, step in enumerate(steps):
        step["index"] = index
        for key in ("thought", "observation"):
            step[key] = clip_step_text(step.get(key))
    return steps


# -- outcome -------------------------------------------------------------------------------


def _agent_never_spoke(messages: list[dict[str, Any]]) -> bool:
    """Whether no message is the agent's own, tau2's canned greeting aside. An empty message the agent did send
    counts: sending one is the rule it broke (``check_communication_error``), its own failure."""
    return not any(m.get("role") == "assistant" and not (n == 0 and m.get("content") == CANNED_GREETING)
                   for n, m in enumerate(messages))


def _reason(sim: dict[str, Any]) -> str | None:
    reason = sim.get("termination_reason")
    return str(reason) if reason is not None else None


def _not_the_agents_doing(reason: str | None, messages: list[dict[str, Any]]) -> bool:
    """Whether the run ended on something other than the agent's work (module docstring: ``infra_error``)."""
    return reason in INFRA_REASONS or (reason == "agent_error" and _agent_never_spoke(messages))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


#: The ``reward_basis`` component (tau2 ``RewardType``) each kind of check belongs to.
_BASIS_OF = {"db_check": "DB", "action_checks": "ACTION", "nl_assertions": "NL_ASSERTION",
             "communicate_checks": "COMMUNICATE", "env_assertions": "ENV_ASSERTION"}


def _database_differences(task: dict[str, Any], reward_info: dict[str, Any], steps: list[dict]) -> list[str]:
    """What made the final database differ, as far as the file says: the task's expected write calls
    (``evaluation_criteria.actions``; only their ``compare_args``, as tau2 compares them) that its
    ``action_checks`` do not mark matched (no checks recorded: each), with how the closest call differed, then
    writes no action expected, as tau-bench v1's causes say (:func:`.tau_bench.unmet_actions`). tau2 records the
    checks even where they do not decide the reward (airline's basis is DB and COMMUNICATE); the cause had read
    only "final database differs from the expected one"."""
    criteria = as_dict(task.get("evaluation_criteria"))
    actions = [a for a in as_list(criteria.get("actions"))
               if isinstance(a, dict) and a.get("requestor", "assistant") == "assistant"]  # not the user's own tools
    matched = {as_dict(c.get("action")).get("action_id") for c in as_list(reward_info.get("action_checks"))
               if isinstance(c, dict) and c.get("action_match") is True}
    expected = [{"name": a.get("name"), "kwargs": _compared(a), "id": a.get("action_id")} for a in actions]
    return unmet_actions([a for a in expected if a["id"] not in matched], steps) + unexpected_writes(expected, steps)


def _compared(action: dict[str, Any]) -> dict[str, Any]:
    """The arguments of an expected action tau2 compares: its ``compare_args`` where set, else all."""
    arguments = as_dict(action.get("arguments"))
    keys = action.get("compare_args")
    return arguments if not isinstance(keys, list) else {k: v for k, v in arguments.items() if k in keys}


def _failure(reason: str | None, reward_info: dict[str, Any], steps: list[dict], sim: dict[str, Any],
             outcome: Outcome, task: dict[str, Any]) -> Failure:
    parts = [f"termination {reason}" if reason else "no termination reason"]
    reward = _number(reward_info.get("reward"))
    if reward is not None:
        parts.append(f"reward {reward:g}")
    breakdown = reward_info.get("reward_breakdown")
    if isinstance(breakdown, dict) and breakdown:
        parts.append("breakdown " + ", ".join(f"{k} {v}" for k, v in breakdown.items()))
    evaluator = reward_info.get("info") if isinstance(reward_info.get("info"), dict) else {}
    if isinstance(evaluator.get("note"), str) and evaluator["note"].strip():  # the evaluator's own word on it
        parts.append(f"evaluator: {short(evaluator['note'].strip(), 300, keep='head')}")
    unmet = []
    # only the checks of the reward's basis decide it (the rest run for diagnostics: a telecom task is scored on
    # its env assertions alone, and its successful runs fail the database check too); no basis recorded: all
    basis = {str(b).upper() for b in as_list(reward_info.get("reward_basis"))} or set(_BASIS_OF.values())
    db = reward_info.get("db_check")
    if "DB" in basis and isinstance(db, dict) and db.get("db_match") is False:
        unmet += ["final database differs from the expected one", *_database_differences(task, reward_info, steps)]
    for key, what, flag in (("action_checks", "action", "action_match"), ("nl_assertions", "nl_assertion", "met"),
                            ("communicate_checks", "info", "met"), ("env_assertions", "env_assertion", "met")):
        if _BASIS_OF[key] not in basis:
            continue
        for check in as_list(reward_info.get(key)):
            if isinstance(check, dict) and check.get(flag) is False:
                item = check.get(what)  # an env assertion names its check ``func_name``
                label = (item.get("name") or item.get("func_name")) if isinstance(item, dict) else item
                unmet.append(f"{key.removesuffix('s').replace('_', ' ')} not met: {short(str(label), 160, keep='head')}")
    error = "; ".join(parts)
    info = sim.get("info") if isinstance(sim.get("info"), dict) else {}
    if info.get("error"):
        error += f"; {short(str(info['error']), 300)}"
    last = last_tool_error(steps)
    if last:
        error += f"; last tool error: {last['action']} -> {last['error']}"
    cause = None
    if outcome is Outcome.infra_error and reason == "agent_error":
        cause = "infrastructure: the run ended before the agent's first turn; it never attempted the task"
    elif outcome is Outcome.infra_error:
        cause = "infrastructure: the harness or the user simulator failed, not the agent"
    elif unmet:
        cause = "; ".join(unmet[:8])
    return Failure(error=short(error, 2000, keep="head"), cause=cause)


def _says_something(msg: dict[str, Any]) -> bool:
    """Whether a message holds anything of a conversation: text (an audio message's script), a tool call or a tool
    result. A full-duplex run flattens every tick's chunk into a message, as tau2's ``Tick.get_all_messages`` does,
    with or without content: a voice run saved without its speech has thousands of empty ones."""
    return bool(_said(msg).strip() or as_list(msg.get("tool_calls")) or msg.get("role") == "tool")


#: ``task_from`` of a simulation whose task is read from its user's first message.
_FIRST_MESSAGE = "the user's first message"


def _task_told(task: dict[str, Any], instruction: str, solo: bool, missing: dict[str, Any]) -> bool:
    """Whether the run's task is a message its agent got: a solo agent's ticket, or the user's first message;
    not the user scenario (the simulator's hidden script), a description or a placeholder."""
    if missing:
        return missing.get("task_from") == _FIRST_MESSAGE
    return solo and isinstance(task.get("ticket"), str) and instruction == task["ticket"].strip()


def _task_without_definition(sim: dict[str, Any]) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(the task, its text, metadata saying where it came from) of a simulation whose task is not in the file: a
    task the simulation embeds, else the user's first message, else (a conversation without one: a solo agent's;
    or none, in a run the harness ended, ``infrastructure_error``, or that has a verdict) a placeholder naming the
    task id; no conversation, no ending of the harness and no verdict is no run to read."""
    own = sim.get("task") if isinstance(sim.get("task"), dict) else None
    if own is not None and (text := task_text(own)):
        return own, text, {"task_definition": "missing", "task_from": "the simulation's own 'task'"}
    messages = _messages(sim)
    said = next((m["content"].strip() for m in messages if m.get("role") == "user"
                 and isinstance(m.get("content"), str) and m["content"].strip()), None)
    if said is not None:
        return {}, said, {"task_definition": "missing", "task_from": _FIRST_MESSAGE}
    ended = _not_the_agents_doing(_reason(sim), messages) or isinstance(sim.get("reward_info"), dict)
    if not ended and not any(_says_something(m) for m in messages):  # (a run the harness ended, or judged, is one)
        raise RecordError(f"task {sim['task_id']!r} of simulation {sim.get('id')} is not in the file ('tasks') and "
                          "the simulation has no conversation (no message with text, a tool call or a tool result): "
                          "no run to read")
    return {}, f"tau2 task {sim['task_id']} (its definition is not in the file)", {
        "task_definition": "missing", "task_from": "none: a placeholder naming the task id"}


def _domain(info: dict[str, Any], task: dict[str, Any], ctx: Context) -> str | None:
    """The run's domain: the operator's family, else the results' environment, else the one its task names (a run
    export has no ``info``); None when none says it."""
    env = as_dict(info.get("environment_info"))
    instructions = as_dict(as_dict(task.get("user_scenario")).get("instructions"))
    found = ctx.defaults.get("task_family") or env.get("domain_name") or instructions.get("domain")
    return str(found) if found else None


#: tau2's domains, as a leaderboard trajectory file's name says them (``<agent>_<domain>_<model>_1trial.json``).
_DOMAINS = ("airline", "retail", "telecom", "mock")
#: The title of a domain's policy (``# Airline Agent Policy``, ``# Medical Triage Agent Policy``), which some
#: agents save with each simulation (``policy``).
_POLICY_TITLE = re.compile(r"#\s*([A-Za-z][A-Za-z ]*?)\s+agent\s+policy\s*$", re.I | re.M)


@lru_cache(maxsize=8)
def _submission_domains(path: str, mtime: float) -> dict[str, str]:
    """A leaderboard ``submission.json``'s ``trajectory_files`` (``{domain: file name}``) as {file name: domain}."""
    files = as_dict(loads(Path(path).read_text(encoding="utf-8")).get("trajectory_files"))
    return {str(name): str(domain) for domain, name in files.items() if isinstance(name, str)}


def _domain_of_file(sim: dict[str, Any], source: Path) -> tuple[str, str] | None:
    """(domain, where it was read) of simulations saved without tau2's ``info`` (tau2's leaderboard
    ``submissions/<s>/trajectories/``): the ``trajectory_files`` of the ``submission.json`` beside ``trajectories/``,
    else the title of the policy the simulation saved, else the one tau2 domain the file name says, or its folder's
    (``human-trajectories/airline/``); None."""
    listing = source.parent.parent / "submission.json"
    if source.parent.name == "trajectories" and listing.is_file():
        try:
            if domain := _submission_domains(str(listing), listing.stat().st_mtime).get(source.name):
                return domain, "submission.json"
        except (OSError, ValueError, AttributeError):
            pass
    if isinstance(sim.get("policy"), str) and (title := _POLICY_TITLE.match(sim["policy"].lstrip())):
        return "_".join(title.group(1).lower().split()), "the policy's title"
    for name, where in ((source.stem, "the file name"), (source.parent.name, "the folder name")):
        named = [d for d in _DOMAINS if d in re.split(r"[^a-z0-9]+", name.lower())]
        if named:
            return (named[0], where) if len(named) == 1 else None
    return None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    if "simulation" in record:
        sim, task, info, stamp = record["simulation"], record.get("task"), record.get("info"), record.get("timestamp")
    elif _is_simulation(record):  # a dir-layout simulations/<id>.json
        sim, task, info, stamp = record, None, None, None
        beside = _sibling_results(ctx.source)
        if beside is not None:
            try:
                tasks, context = _results_beside(str(beside), beside.stat().st_mtime)
            except (OSError, ValueError) as exc:
                raise RecordError(f"cannot read the task list in {beside.name}: {exc}") from None
            task, info, stamp = tasks.get(str(record.get("task_id"))), context["info"], context["timestamp"]
    elif _is_run_export(record):  # its task is the results file's, as the exporter joined it
        sim, task, info, stamp = _simulation_of_export(record), record.get("task"), None, None
    else:
        raise RecordError(_not_a_run(record))
    sim = json_object(sim)
    if sim.get("task_id") is None:
        raise RecordError("missing field 'task_id' in the simulation")
    info = info if isinstance(info, dict) else {}
    agent = info.get("agent_info") if isinstance(info.get("agent_info"), dict) else {}
    user = info.get("user_info") if isinstance(info.get("user_info"), dict) else {}
    solo = "solo" in str(agent.get("implementation") or "")  # ``LLMSoloAgent`` (and its ``_gt``) read the ticket
    missing: dict[str, Any] = {}
    if isinstance(task, dict):
        instruction = task_text(task, solo)
        if not instruction:
            raise RecordError(f"task {sim['task_id']!r} has no 'user_scenario.instructions', 'ticket' or description")
    else:
        task, instruction, missing = _task_without_definition(sim)
    domain = _domain(info, task, ctx)
    if domain is None and (found := _domain_of_file(sim, ctx.source)) is not None:
        domain, missing = found[0], {**missing, "domain_from": found[1]}
    task_key, known = f"{domain}-{sim['task_id']}", domain is not None
    if domain is None:  # not one id for tasks of different domains: this file's tasks
        domain, missing = "tau2", {**missing, "domain_from": "none: the task id is this file's"}
        task_key = f"tau2-{ctx.source.stem}-{sim['task_id']}"
    messages = _messages(sim)
    steps = _steps(messages)
    reward_info = sim.get("reward_info") if isinstance(sim.get("reward_info"), dict) else {}
    reward = _number(reward_info.get("reward"))
    reason = _reason(sim)
    outcome = Outcome.infra_error if _not_the_agents_doing(reason, messages) else outcome_of_reward(reward, ctx)
    trial = sim.get("trial")
    description = task.get("description") if isinstance(task.get("description"), dict) else {}
    run_key = f"{sim['task_id']}.t{trial if trial is not None else 0}.{sim.get('id') or ctx.source.stem}"
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(f"tau2.{domain}.{run_key}" if known else f"tau2.{run_key}"),
        "task": clip_task(instruction),
        "task_id": task_key[:200],
        "task_family": domain,
        "model_id": agent.get("llm") or _agent_model(messages),
        "outcome": outcome,
        "reward": reward,
        "failure": None if outcome in (Outcome.success, Outcome.unknown) else _failure(
            reason, reward_info, steps, sim, outcome, task),
        "steps": steps,
        "created_at": utc_time(sim.get("start_time")) or utc_time(sim.get("timestamp")),
        "metadata": {
            "source_format": NAME,
            "termination_reason": reason,
            "trial": trial,
            "seed": sim.get("seed"),
            "duration": sim.get("duration"),
            "agent_cost": sim.get("agent_cost"),
            "user_cost": sim.get("user_cost"),
            "agent_implementation": agent.get("implementation"),
            "user_model": None if user.get("implementation") == "dummy_user" else user.get("llm"),  # it has none
            "reward_basis": reward_info.get("reward_basis"),
            "reward_breakdown": reward_info.get("reward_breakdown"),
            "task_purpose": description.get("purpose"),
            "results_timestamp": stamp,
            "simulation_id": sim.get("id"),
            "mode": sim.get("mode"),
            **({} if _task_told(task, instruction, solo, missing) else {TASK_SEEN_BY_AGENT: False}),
            **missing,
        },
    }
    run = build(fields, ctx)
    # until round 28 a run of no known domain was ``tau2.tau2.<task>...``, its domain the placeholder: that copy moves
    return run if known else with_former_id(run, safe_id(f"tau2.tau2.{run_key}"))
