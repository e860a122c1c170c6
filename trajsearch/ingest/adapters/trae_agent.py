"""``trae-agent``: Trae Agent (bytedance/trae-agent) trajectory files, one run each.

Source read: bytedance/trae-agent ``trae_agent/utils/trajectory_recorder.py`` (every version, 2025-06 to 2026-02: the
keys have not changed; 0.1's default path ``trajectory_<time>.json``, later ``trajectories/trajectory_<time>.json``),
``agent/base_agent.py`` (the step loop), ``agent/trae_agent.py`` (``task_done``, ``must_patch``) and
``tools/base.py`` (``ToolResult``); real files: ISO-Bench/ISO-Bench's Trae Agent runs (816 files, see
``tests/fixtures/trae-agent/.trae29/README.md``).

The recorder rewrites one JSON object after every step: ``task``, ``start_time`` / ``end_time`` (naive local ISO
times: ``datetime.now()``), ``provider``, ``model``, ``max_steps``, ``llm_interactions`` (each request's new
messages and the response: not read, but for ``tools_available``), ``agent_steps``, ``success``,
``final_result``, ``execution_time``. A step (``step_number``, ``state``, ``llm_messages``: what Trae sends next, the
tool results or its reply; ``llm_response`` with ``content`` and
``tool_calls``, ``tool_calls`` run, ``tool_results`` ``{call_id, success, result, error}``, ``reflection``,
``error``, and with Lakeview on a ``lakeview_summary``) is one model turn.

Mapping
- task: ``task``; model_id: ``model`` (``provider`` in metadata).
- steps: each tool call of a turn a step (action = its ``name``: ``bash``, ``str_replace_based_edit_tool``,
  ``sequentialthinking``, ``json_edit_tool``, ``ckg``, ``task_done``, an MCP tool's; arguments as recorded), the
  turn's ``llm_response.content`` the thought of its first; the result with its ``call_id`` is the observation
  (``result``, then ``error``: a command's stderr is there even when it succeeded). A call that was not run (the
  ``task_done`` that ended the run: Trae ends on it before any tool runs; one refused for an empty patch) is a step
  with no observation; a turn with text and no call, a ``respond`` step. Step.error: a result ``success: false``
  (a tool's error, a command's non-zero exit, which Trae does not record): its ``error`` (of a command, its decisive
  line); with neither error nor output, a command that answers "no" so (grep's no match) is no error. A ``task_done``
  the run went on after was refused: Trae's reply (the turn's ``llm_messages``: "ERROR! Your Patch is empty. ...",
  ``must_patch`` and no patch; 288 calls in 267 of 816 real runs; in the last turn, this reply alone tells it) is its
  observation and error; a ``respond`` step's observation
  is Trae's reply to it.
- outcome: ``success`` true (the agent called ``task_done`` and, with ``must_patch``, left a patch) -> success.
  A run whose last step holds an ``error`` (the model call raised: Trae's loop stops there; the step has no
  response) ended on it: ``infra_error`` (a quota, an expired credential, a request refused at the first turn), or
  the agent's failure for its context window, the model's malformed tool-call JSON, or a request the provider
  refused (HTTP 400) after the first turn, which Trae built from the run's own history. Otherwise a finished run is a
  failure: ``final_result`` says why ("Task execution exceeded maximum steps without completion." when
  ``max_steps`` ran out); a file never finalized (no ``end_time``: the run was killed or still runs) -> unknown,
  ``metadata.ended_by`` says so.
- trajectory_id: ``trae-agent.<digest of start_time and task>``: the file's name is only its start second, and an
  evaluation names every run's file ``trajectory.json``; the start's microseconds and the task name the run in any
  copy. created_at: ``start_time``, its steps' times each turn's ``timestamp``, read in the zone the file's mtime
  gives against its ``end_time`` (the recorder saves the file as it sets it), else the one ``TRAJSEARCH_LOCAL_TZ``
  names, else as UTC (``_common.local_clock``; ``metadata.created_at_zone`` says which).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from trajsearch.model import Failure, Outcome, Trajectory

from ._agent_cli import API_ERROR_CAUSE, answers_no, ended_on_error, error_line, finish_steps, in_trial, wall_time
from ._common import (TIME_ZONE, Context, LocalClock, RecordError, as_dict, as_list, clip_task, json_object,
                      local_clock, short, tool_arguments)

NAME = "trae-agent"
ID_PREFIX = "trae-agent"
#: The keys ``TrajectoryRecorder`` writes from its start: a run's file, whichever version wrote it.
_KEYS = frozenset({"task", "start_time", "provider", "model", "max_steps", "llm_interactions", "agent_steps"})
#: A file's head as the recorder writes it (``json.dump`` of its dict, ``task`` then ``start_time`` first): a run too
#: big to parse for detection (past 64 MB; the largest of 816 real files is 2.2 MB) is told by it.
SIGNATURE = re.compile(r'\A\ufeff?\s*\{\s*"task"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"start_time"\s*:\s*"')
#: ``final_result`` of a run that used its ``max_steps`` up (``BaseAgent.execute_task``).
_MAX_STEPS = "Task execution exceeded maximum steps without completion."
#: Python's ``json`` errors on the model's tool-call arguments (the OpenAI client decodes them): the model wrote
#: malformed JSON, the agent's failure, not the provider's (20 of 816 real runs ended so).
_BAD_CALL_JSON = re.compile(r"^(?:Unterminated string starting at|Expecting (?:',' delimiter|':' delimiter|value|"
                            r"property name enclosed in double quotes)|Extra data|Invalid control character at|"
                            r"Invalid \\escape): line \d+ column \d+ \(char \d+\)$")
_BAD_CALL_CAUSE = "the model's tool call was not valid JSON"
#: An HTTP 400 (the OpenAI and Anthropic clients' "Error code: 400", httpx's "400 Bad Request" from Bedrock) after
#: the agent's first turn: the provider refused the request Trae built from the run's own history (a refused
#: ``task_done`` sent on with no tool output, an ``is_error`` result with empty content: trae-agent's bugs, fixed in
#: d135080 and e839e55; 394 of 816 real runs ended so, after a median of 36 steps), which a retry of the run repeats,
#: as no outage would. At the first turn a 400 is the setup's (a tool schema the provider refuses): infrastructure.
_REJECTED = re.compile(r"^Error code: 400\b|\b400 Bad Request\b")
_REJECTED_CAUSE = ("the provider rejected the request Trae Agent built from the run's own history "
                   "(a retry fails the same way)")
#: A ``task_done`` the run went on after, Trae's reply not recorded: refused (``must_patch`` and no patch).
_REFUSED = "task_done refused: the run went on"
#: What Trae answers a ``task_done`` it refuses (``task_incomplete_message``: TraeAgent's, with ``must_patch`` and no
#: patch, then BaseAgent's). In the run's last turn (killed before its next) this reply is the only sign of a
#: refusal: the turn of a call Trae took records the messages sent before it (a real unfinished run's: a reminder).
_REFUSALS = ("ERROR! Your Patch is empty.", "The task is incomplete. Please try again.")


def matches(record: Any) -> bool:
    return isinstance(record, dict) and _KEYS <= record.keys() and isinstance(record["agent_steps"], list)


def _result_error(name: str, arguments: Any, result: dict[str, Any]) -> str | None:
    """The error of a call whose result says ``success: false``: the tool's ``error`` (a command's stderr: its
    decisive line); none for a command that answers "no" by its exit code alone (``grep`` matching nothing), as Trae
    keeps no exit code; else that the call failed silently."""
    if result.get("success") is not False:
        return None
    said = str(result.get("error") or "").strip()
    output = str(result.get("result") or "").strip()
    command = str(as_dict(arguments).get("command") or "") if name == "bash" else ""
    if said or output:
        whole = short(said or output, 300, keep="head")
        return error_line(said or output, whole) if command else whole
    if command and answers_no(command):
        return None
    return "the command exited non-zero with no output" if command else "the tool failed with no message"


def _reply(turn: dict[str, Any]) -> str | None:
    """What Trae said back to a turn whose calls it ran none of: the user messages it recorded as the turn's
    ``llm_messages`` (the next request's), with no tool result ("ERROR! Your Patch is empty. ..." to a ``task_done``
    with ``must_patch`` and no patch; "It seems that you have not completed the task." to text with no call)."""
    said = [str(m.get("content") or "").strip() for m in as_list(turn.get("llm_messages"))
            if isinstance(m, dict) and m.get("role") == "user" and not m.get("tool_result")]
    return "\n".join(s for s in said if s) or None


def _steps(turns: list[Any], clock: LocalClock) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for position, turn in enumerate(turns):
        turn = as_dict(turn)
        response = as_dict(turn.get("llm_response"))
        said = str(response.get("content") or "").strip() or None
        ran = bool(turn.get("tool_calls"))
        calls = [c for c in as_list(turn.get("tool_calls") or response.get("tool_calls")) if isinstance(c, dict)]
        results = {r.get("call_id"): r for r in as_list(turn.get("tool_results")) if isinstance(r, dict)}
        reply = None if ran else _reply(turn)
        when = clock.at(wall_time(turn.get("timestamp")))
        if not calls and said:
            steps.append({"action": "respond", "arguments": {"content": said}, "observation": reply, "ended_at": when})
        for n, call in enumerate(calls):
            name = str(call.get("name") or "tool")
            step: dict[str, Any] = {"thought": said if n == 0 else None, "action": name,
                                    "arguments": tool_arguments(call.get("arguments")), "ended_at": when}
            result = results.get(call.get("call_id"))
            if result is not None:
                observation = "\n".join(str(result[k]) for k in ("result", "error") if str(result.get(k) or "").strip())
                step.update(observation=observation or None, error=_result_error(name, step["arguments"], result))
            elif name == "task_done" and (position < len(turns) - 1 or (reply or "").startswith(_REFUSALS)):
                step.update(observation=reply, error=short(reply, 300, keep="head") if reply else _REFUSED)
            steps.append(step)
    return steps


def _verdict(record: dict[str, Any], turns: list[Any]) -> tuple[Outcome, Failure | None, str | None]:
    """(outcome, failure, how the run ended where the file says no more)."""
    if record.get("success") is True:
        return Outcome.success, None, None
    last = as_dict(turns[-1]) if turns else {}
    if last_error := str(last.get("error") or "").strip():  # Trae's loop stops on the step whose model call raised
        outcome, failure = ended_on_error(last_error, API_ERROR_CAUSE)
        cause = _BAD_CALL_CAUSE if _BAD_CALL_JSON.match(last_error) else \
            _REJECTED_CAUSE if len(turns) > 1 and _REJECTED.search(last_error) else None
        if outcome is Outcome.infra_error and cause:
            return Outcome.failure, Failure(error=last_error, cause=cause), None
        return outcome, failure, None
    if not record.get("end_time"):
        return Outcome.unknown, None, "never finalized (no end_time): the run was killed, or still runs"
    result = str(record.get("final_result") or "").strip()
    if result == _MAX_STEPS:
        return Outcome.failure, Failure(error=result, cause=f"the agent used its max_steps ({record.get('max_steps')}) "
                                                            "without calling task_done"), None
    return Outcome.failure, Failure(error=short(result, 300) if result else "the run ended without success"), None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    task = record.get("task")
    if not isinstance(task, str):
        raise RecordError(f"a Trae Agent trajectory whose `task` is not text but {type(task).__name__}")
    if not (task := task.strip()):
        raise RecordError("a Trae Agent trajectory with an empty `task`: the recorder never started a run")
    turns = as_list(record.get("agent_steps"))
    outcome, failure, ended_by = _verdict(record, turns)
    key = f"{record.get('start_time') or ''}\0{task}".encode()
    interactions = [i for i in as_list(record.get("llm_interactions")) if isinstance(i, dict)]
    tools = next((i["tools_available"] for i in interactions if isinstance(i.get("tools_available"), list)), [])
    # ``datetime.now().isoformat()``: local, no zone; ``end_time`` is saved at once, so the file's mtime may tell it
    clock = local_clock(ctx.source, written=wall_time(record.get("end_time")))
    started = wall_time(record.get("start_time"))
    metadata = {"provider": record.get("provider") or None, "max_steps": record.get("max_steps"),
                "execution_time": record.get("execution_time") or None, "ended_by": ended_by,
                "final_result": short(str(record["final_result"]), 500, keep="head")
                if record.get("final_result") and outcome is Outcome.success else None,
                "lakeview_summaries": sum(1 for t in turns if isinstance(t, dict) and t.get("lakeview_summary"))
                or None, TIME_ZONE: clock.basis if started is not None and started.tzinfo is None else None}
    metadata = {k: v for k, v in metadata.items() if v is not None}
    return in_trial(ctx, {  # a Harbor trial's verdict is its run's where Harbor's conversion failed: not task_done's
        "trajectory_id": f"{ID_PREFIX}.{hashlib.blake2b(key, digest_size=8).hexdigest()}",
        "task": clip_task(task),
        "model_id": record.get("model") or None,
        "tools_available": [str(t) for t in tools],
        "outcome": outcome,
        "failure": failure,
        "steps": finish_steps(_steps(turns, clock), metadata),
        "created_at": clock.at(started),
        "metadata": metadata,
    })
