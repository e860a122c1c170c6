"""``moatless``: Moatless Tools trajectory files (aorwall/moatless-tools, its 2024 state-machine ``AgenticLoop``, and
the node trees it has written since), one run each.

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

Since November 2024 (moatless-tree-search's ``SearchTree``, then moatless-tools' ``AgenticFlow``, source read at
011ead57 of 2025-09) a file is a node tree: a ``root`` node whose ``children`` nest (real files: moatless-tree-search's
committed integration-test runs, ``tests/fixtures/moatless/.aud33/README.md``), from 2025 ``{trajectory_id,
project_id, metadata, nodes}``, each node once with its ``parent_id`` (``Node.dump_as_list``). A node: ``node_id``,
``user_message`` (the root's: the task), ``assistant_message`` / ``thoughts``, ``action_steps`` (each ``{action:
{thoughts, ..., action_args_class}, observation: {message, summary, terminal, error, properties}, completion}``),
``completions``, ``error``, ``terminal``, ``reward``, ``evaluation_result`` (``resolved``), ``timestamp`` (until
mid-December 2024 no ``action_steps``: each node, the root too, its own ``action`` and ``output``, the task the root's
``message``). Beside a 2025 ``trajectory.json`` lie ``flow.json`` and ``events.jsonl``: side files (``side_file``).
- the run: the line from the root to the node it ended on (the one Moatless chose, ``root.discriminator_result``;
  else the last judged, else the last that ended its branch, else the last made); steps each of its nodes' action
  steps, named by the arguments class.
- outcome: ``evaluation_result.resolved``; else ``Finish`` (``VerifiedFinish``) a success "submitted, not evaluated",
  ``Reject`` a failure, an ``ActionError`` (no action built from the model's reply; its ``error`` the step's) asking
  for the tool call the model did not make, and 2025's "Completion validation error" (the reply refused), a failure;
  a node ``error`` or another ``ActionError`` (its first line) as ``ended_on_error`` says (infra_error, a context
  overflow the agent's failure); else unknown.
- trajectory_id: ``moatless.<project_id>/<trajectory_id>``, else (2024: neither) a digest of the task, the
  model and the first step (runs that never left the root differ by their model alone). created_at: the root's
  ``timestamp``, else (2025) the first action step's ``start_time``.
"""

from __future__ import annotations

import hashlib
import json
import re
from itertools import chain
from typing import Any

from trajsearch.model import UNEVALUATED, Failure, Outcome, Trajectory

from ._agent_cli import ended_on_error, finish_steps, iso_time
from ._common import (Context, RecordError, as_dict, as_list, build, clip_task, json_kind, json_object, safe_id,
                      short)

NAME = "moatless"
ID_PREFIX = "moatless"
_KEYS = frozenset({"initial_message", "transitions"})
#: What names the loop's file: its ``workspace`` (from July 2024), or the ``info`` its evaluation wrote (June 2024).
_OWN_KEYS = frozenset({"workspace", "info"})
#: ``AgenticLoop``'s abort on a limit of its own (``loop.py``: "The loop was aborted because the cost exceeded the
#: limit."): the run used its budget, the agent's failure, as SWE-agent's ``exit_cost``.
_LIMIT = re.compile(r"The loop was aborted because (?:the )?(.+?) exceeded the limit")


def matches(record: Any) -> bool:
    return isinstance(record, dict) and (_KEYS <= record.keys() and bool(_OWN_KEYS & record.keys())
                                         and isinstance(record["transitions"], list)
                                         and isinstance(record["initial_message"], str)
                                         or _tree_root(record) is not None)


#: What a line of a 2025 run's ``events.jsonl`` holds (``BaseEvent.model_dump()``, moatless ``events.py``).
_EVENT_KEYS = frozenset({"timestamp", "scope", "trajectory_id", "project_id", "event_type"})


def side_file(record: Any) -> str | None:
    """The files Moatless (2025, ``AgenticFlow``) writes beside each run's ``trajectory.json``, which carry its
    ``trajectory_id`` and so looked like broken native runs: ``flow.json``, the flow's settings (as its own
    ``.moatless/flows/*.json``), and ``events.jsonl``, the flow's event log (a line an event, no step's text)."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("flow_class"), str) and {"agent", "max_iterations"} <= record.keys():
        return "Moatless' flow settings (flow.json beside a run's trajectory.json, or .moatless/flows/): no run"
    if _EVENT_KEYS <= record.keys() and isinstance(record.get("event_type"), str):
        return "a line of Moatless' event log (events.jsonl): the run is the trajectory.json beside it"
    return None


def _tree_root(record: dict[str, Any]) -> dict[str, Any] | None:
    """The root node of a tree-search / flow file (2024: ``root``, a node whose ``children`` nest; from
    2025 ``nodes``, each node once with its ``parent_id``, the root's ``None``), else None. Either layout's root must
    hold the task's key (``user_message``, November 2024's ``message``), as every real one does: a node id and
    children alone are any tree dump's, which stays unrecognised rather than refused as a Moatless run."""
    root = record.get("root")
    if isinstance(root, dict) and root.get("node_id") == 0 and isinstance(root.get("children"), list) \
            and ("user_message" in root or "message" in root):
        return root
    nodes = record.get("nodes")
    first = nodes[0] if isinstance(nodes, list) and nodes else None
    if isinstance(first, dict) and "node_id" in first and first.get("parent_id", 0) is None \
            and ("action_steps" in first or "user_message" in first):
        return first
    return None


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


#: An action's arguments class names it (``moatless.actions.find_class.FindClassArgs`` -> ``FindClass``,
#: ``moatless.actions.edit.EditActionArguments`` -> ``Edit``).
_ARGS_SUFFIX = re.compile(r"(?:ActionArguments|Arguments|Args)$")
#: The actions that end a run handing its work in (``Node.is_finished``: ``Finish``; ``VerifiedFinish`` its variant).
_FINISH = frozenset({"Finish", "VerifiedFinish"})


def _not_a_node(node: Any) -> str:
    """Why an entry of either layout is no node: what its ``node_id`` is (the usual slip), or what it is."""
    if isinstance(node, dict):
        return f"its `node_id` is {json_kind(node.get('node_id'))}, not an integer"
    return f"expected a node object, found {json_kind(node)}"


def _tree_nodes(record: dict[str, Any], root: dict[str, Any]) -> tuple[dict[int, dict[str, Any]], dict[int, Any]]:
    """(each node by its ``node_id``, each node's parent id): from the flat ``nodes`` (2025) or the nested ``root``
    (2024)."""
    nodes: dict[int, dict[str, Any]] = {}
    parents: dict[int, Any] = {}
    if isinstance(record.get("nodes"), list):
        for n, node in enumerate(record["nodes"], 1):
            if not isinstance(node, dict) or not isinstance(node.get("node_id"), int):
                raise RecordError(f"`nodes` entry {n}: {_not_a_node(node)}")
            nodes[node["node_id"]], parents[node["node_id"]] = node, node.get("parent_id")
        return nodes, parents
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        node, parent = stack.pop()
        if not isinstance(node, dict) or not isinstance(node.get("node_id"), int):
            raise RecordError(f"a child of node {parent}: {_not_a_node(node)}")
        nodes[node["node_id"]], parents[node["node_id"]] = node, parent
        stack.extend((child, node["node_id"]) for child in as_list(node.get("children")))
    return nodes, parents


def _action_name(step: dict[str, Any]) -> str:
    """The action's name: its arguments class (``_node_steps`` gives it the node's where the step kept none)."""
    cls = str(as_dict(step.get("action")).get("action_args_class") or "")
    return _ARGS_SUFFIX.sub("", cls.rsplit(".", 1)[-1]) or "action"


#: The model's reply Moatless refused, the agent's failure (each marker in the error, and what it means): December
#: 2024's ``ActionError`` asking for the tool call the reply lacked; 2025's node error for a ``CompletionRejectError``
#: (``agent.py``: "Completion validation error: <message>", then the traceback).
_REFUSED_REPLY = (("Please provide a tool call", "the model answered with no tool call"),
                  ("Completion validation error", "the model's reply failed Moatless' validation"))


def _action_error(step: dict[str, Any]) -> str | None:
    """The error of an action Moatless could not build from the model's reply (``ActionError``: its ``error``)."""
    action = as_dict(step.get("action"))
    if str(action.get("action_args_class") or "").endswith(".ActionError") and action.get("error"):
        return str(action["error"])
    return None


def _node_steps(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The node's action steps, each ``{action, observation, ...}``: its ``action_steps``, else (the first tree
    layout, November to mid-December 2024: no ``action_steps``, the root too holding an action) its own ``action`` and
    ``output``, as Moatless' own loader still reads that layout (``Node._reconstruct_node``)."""
    if "action_steps" not in node and isinstance(node.get("action"), dict):
        return [{"action": node["action"], "observation": as_dict(node.get("output") or node.get("observation"))}]
    steps = [as_dict(a) for a in as_list(node.get("action_steps"))]
    if len(steps) == 1 and as_dict(steps[0].get("action")).keys() <= {"thoughts"}:
        # mid-December 2024 dumped the step's action as its thoughts alone, the action itself as the node's
        steps = [{**steps[0], "action": {**as_dict(node.get("action")), **as_dict(steps[0].get("action"))}}]
    return steps


def _ended(node: dict[str, Any]) -> bool:
    """Whether the node ended its branch: its last action's observation says ``terminal`` (Finish, Reject)."""
    steps = _node_steps(node)
    return bool(steps) and as_dict(steps[-1].get("observation")).get("terminal") is True


def _line(root: dict[str, Any], nodes: dict[int, dict[str, Any]], parents: dict[int, Any]) -> list[dict[str, Any]]:
    """The run: the path from the root to the node it ended on. A search tree holds branches the search left; the
    run's answer is the node Moatless chose (``root.discriminator_result.selected_node_id``: ``SearchTree.run``
    returns it, the evaluation judges the instance by it though it judges every leaf), else the last node the
    evaluation judged (``evaluation_result``), else the last that ended its branch, else the last node made
    (``Node.get_last_node``: a loop's only branch, cut short)."""
    order = sorted(nodes)
    chosen = as_dict(root.get("discriminator_result")).get("selected_node_id")
    leaf = next(chain([chosen] if isinstance(chosen, int) and chosen in nodes else [],  # node 0 (the root) too
                      (i for i in reversed(order) if nodes[i].get("evaluation_result")),
                      (i for i in reversed(order) if _ended(nodes[i]))), order[-1])
    line: list[dict[str, Any]] = []
    seen: set[int] = set()
    while leaf is not None:
        if leaf not in nodes:  # Moatless' own loader would fail on either: a line that lost its start
            raise RecordError(f"node {line[-1]['node_id']}'s parent {leaf} is not in `nodes`")
        if leaf in seen:
            raise RecordError(f"the parents of node {leaf} form a cycle: no line from the root")
        seen.add(leaf)
        line.append(nodes[leaf])
        leaf = parents.get(leaf)
    if line[-1] is not root:  # a second root (Moatless writes none): the line would take another tree's verdict
        raise RecordError(f"node {line[0]['node_id']}'s line does not reach the root node {root['node_id']}")
    return line[::-1]


def _tree_steps(line: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps = []
    for node in line:  # the root holds the task, and (November 2024) the first action
        said = as_dict(node.get("thoughts")).get("text") or node.get("assistant_message")
        actions = _node_steps(node)
        for n, step in enumerate(actions):
            action = as_dict(step.get("action"))
            observation = as_dict(step.get("observation"))
            unbuilt = _action_error(step)  # its ``error`` the step's error, not an argument
            error = observation.get("error") or unbuilt or (node.get("error") if n == len(actions) - 1 else None)
            dropped = (*_THOUGHTS, "action_args_class", *(("error",) if unbuilt else ()))
            steps.append({"thought": action.get("thoughts") or action.get("scratch_pad") or (said if n == 0 else None)
                          or None,
                          "action": _action_name(step),
                          "arguments": {k: v for k, v in action.items() if k not in dropped and v is not None},
                          "observation": observation.get("message") or observation.get("summary") or None,
                          "error": short(str(error), 300, keep="head") if error else None,
                          "ended_at": iso_time(step.get("end_time") or node.get("timestamp"))})
        if not actions and node.get("error"):  # the node raised before any action (a completion that failed)
            steps.append({"thought": said or None, "action": "error", "arguments": {},
                          "error": short(str(node["error"]), 300, keep="head"),
                          "ended_at": iso_time(node.get("timestamp"))})
    return steps


def _tree_verdict(leaf: dict[str, Any]) -> tuple[Outcome, Failure | None, dict[str, Any]]:
    judged = as_dict(leaf.get("evaluation_result"))
    if isinstance(judged.get("resolved"), bool):
        basis = {"outcome_basis": f"{judged.get('evaluation') or 'evaluation'}: resolved {judged['resolved']}"}
        return (Outcome.success, None, basis) if judged["resolved"] else \
            (Outcome.failure, Failure(error="the evaluation did not resolve the task",
                                      cause=f"{judged.get('evaluation') or 'the evaluation'}'s tests failed"), basis)
    steps = _node_steps(leaf)
    if error := str(leaf.get("error") or (_action_error(as_dict(steps[-1])) if steps else "") or "").strip():
        # Moatless' own line first ("<Class>: <message>", "Completion validation error: ..."), its traceback after
        said = short(next((line for line in error.splitlines() if line.strip()), error), 300)
        if cause := next((cause for marker, cause in _REFUSED_REPLY if marker in said), None):
            return Outcome.failure, Failure(error=said, cause=cause), {}
        outcome, failure = ended_on_error(said, "Moatless raised building or running the node's action "
                                                "(node.error, ActionError)")
        return outcome, failure, {}
    name = _action_name(steps[-1]) if steps else None
    ended = _ended(leaf)
    if name in _FINISH and ended:
        return Outcome.success, None, {"outcome_basis": UNEVALUATED}
    if name == "Reject" and ended:
        reason = as_dict(as_dict(steps[-1]).get("action")).get("rejection_reason")
        return Outcome.failure, Failure(error=short(str(reason), 300) if reason else "rejected",
                                        cause="the agent rejected the task"), {}
    return Outcome.unknown, None, {}


def _tree_model(record: dict[str, Any], line: list[dict[str, Any]]) -> str | None:
    """The model of the run's first completion, else the agent's (2024's ``agent.completion``)."""
    for node in line:
        for completion in as_dict(node.get("completions")).values():
            if isinstance(as_dict(completion).get("model"), str):
                return completion["model"]
    model = as_dict(as_dict(record.get("agent")).get("completion")).get("model")
    return model if isinstance(model, str) else None


def _tree_trajectory(record: dict[str, Any], root: dict[str, Any], ctx: Context) -> Trajectory:
    """A tree-search / flow file (moatless-tree-search from November 2024, moatless-tools' ``AgenticFlow`` of 2025:
    its ``trajectory.json``)."""
    task = root.get("user_message") or root.get("message")
    if not isinstance(task, str) or not task.strip():
        raise RecordError("a Moatless trajectory whose root node has no `user_message` (November 2024: `message`) "
                          "text: the flow was given no task")
    nodes, parents = _tree_nodes(record, root)
    line = _line(root, nodes, parents)
    outcome, failure, basis = _tree_verdict(line[-1])
    meta = as_dict(record.get("metadata"))
    steps = _tree_steps(line)
    model = _tree_model(record, line)
    inner = set(parents.values())  # once: a tree search keeps thousands of nodes
    metadata = {k: v for k, v in {"instance_id": meta.get("instance_id"), "project_id": record.get("project_id"),
                                  "nodes": len(nodes), "end_node": line[-1].get("node_id"),
                                  "branches": sum(1 for i in nodes if i not in inner), **basis}.items()
                if v is not None}
    if trajectory_id := record.get("trajectory_id"):
        key = "/".join(str(k) for k in (record.get("project_id"), trajectory_id) if k)
    else:  # 2024 wrote no id nor time: the task and what the run did name it
        first = steps[0] if steps else {}
        key = hashlib.blake2b(f"{task}\0{model}\0{first.get('thought')}\0"
                              f"{json.dumps(first.get('arguments'), sort_keys=True, default=str)}".encode(),
                              digest_size=8).hexdigest()
    fields: dict[str, Any] = {
        "trajectory_id": f"{ID_PREFIX}.{safe_id(key)}",
        "task": clip_task(task.strip()),
        "task_id": meta.get("instance_id") or None,
        "model_id": model,
        "outcome": outcome,
        "failure": failure,
        "steps": finish_steps(steps, metadata),
        "metadata": metadata,
    }
    # 2025 files keep no node ``timestamp`` (dumped ``exclude_unset``, never assigned); the agent sets each action
    # step's ``start_time`` and ``end_time`` (``agent.py``)
    first_step = next((step for node in line for step in _node_steps(node)), {})
    if started_at := iso_time(root.get("timestamp") or first_step.get("start_time") or first_step.get("end_time")):
        fields["created_at"] = started_at
    return build(fields, ctx)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    if (root := _tree_root(record)) is not None:
        return _tree_trajectory(record, root, ctx)
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
