"""``autogen-agentchat``: AutoGen AgentChat (0.4+) runs as users save them: TaskResult, team state, messages.

Records: ``TaskResult`` as pydantic dumps it (``result.model_dump_json()`` /
``model_dump()``: ``{"messages": [...], "stop_reason"}``), one per file or one
per JSONL line; a run's messages alone, a JSON array of them (``result.messages``
dumped) or a line each (``run_stream()``'s items, the TaskResult that ends it
holding them again: one run; a run that raised before yielding it, the messages
the next one does not hold); a team's ``await team.save_state()``
(``{"type": "TeamState", "agent_states": {...}}``), whose group chat manager keeps the same messages as
its ``message_thread`` (and a ``SocietyOfMindAgent``'s inner team its own, saved mid-turn: ``_inner``): of every
``run`` since the team's last ``reset()``, so the thread is cut into runs
before each task (``_runs_of_thread``: a ``user`` message after another source's, unless a participant is
named ``user``). Each message is a dumped ``BaseChatMessage`` /
``BaseAgentEvent`` (``autogen_agentchat/messages.py``): ``type``, ``source``,
``content``, ``id``, ``created_at``. An agent's own ``save_state()`` (its model
context) and Autogen Studio's team configs are no run.

Mapping
- task: the first ``TextMessage`` / ``MultiModalMessage`` whose source is
  ``user`` (``team.run(task=...)``), else the first chat message;
- steps: one per ``FunctionCall`` of a ``ToolCallRequestEvent`` (action = its
  ``name``, arguments = its ``arguments`` decoded, id = its ``id``, thought =
  the ``ThoughtEvent`` before it), whose observation is the
  ``FunctionExecutionResult`` with that ``call_id`` in a later
  ``ToolCallExecutionEvent`` (error = its content where ``is_error``); a
  ``CodeExecutionEvent`` (``CodeExecutorAgent``) is an ``execute_code`` step
  (the code of the ``CodeGenerationEvent`` before it; error where the exit code
  is not 0), as is a model-less agent's reply to code that reads as its output
  (``_code_executors``); an agent's ``TextMessage`` / ``MultiModalMessage`` /
  ``StructuredMessage`` / ``StopMessage`` is a ``respond`` step; a later user
  message is the observation of the ``respond`` it answers. A
  ``ToolCallSummaryMessage`` repeats the results already read, a
  ``HandoffMessage`` the transfer call already read: neither is a step; but a
  summary whose calls no event held (a MagenticOne orchestrator's thread keeps
  its agents' chat messages alone) is their steps, from its ``tool_calls`` and
  ``results`` (0.6.1 on). A MagenticOne team state's task is its orchestrator's
  ``task`` (its thread never holds the task's message: a ``user`` message there
  is a participant's reply; its id is that of the orchestrator's first message,
  not the TaskResult's).
- trajectory_id = ``autogen:<id of the first message>`` (a fresh UUID per run,
  the same in the run's ``TaskResult`` and in its team's state, so either file
  is one run); messages dumped before 0.6 have no ``id`` (nor ``created_at``):
  ``autogen:<folder>.<file name>.<the run's first item in it>``
  (``file_run_key``), as a run that said what another said (a replayed or
  cached model, two models answering alike) is a run of its own; a team's
  state of then, saved beside its run's file, is passed over (``side_path``);
  created_at = the first message's ``created_at``.
- refused: a ``TaskResult`` whose messages dump without ``type`` and
  ``content`` (``result.model_dump_json()`` in 0.5 and 0.6, the messages typed as
  their base class until 0.7's ``SerializeAsAny``): no run left in it; the error says how to save one.
- outcome: ``unknown``: a ``TaskResult`` records why the run stopped
  (``stop_reason``, kept in the metadata), not whether it did the task.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from trajsearch.actions import UNNAMED_TOOL
from trajsearch.model import Trajectory

from ..sources import COMPRESSED_SUFFIXES, peek, whole_document
from ._common import (ITEM_AT, Context, RecordError, as_dict, as_list, build, clip_task, content_text,
                      decisive_line, file_run_key, json_object, safe_id, tool_arguments)
from ._spans.messages import agentchat_users

NAME = "autogen-agentchat"
#: A file is read whole (see ``split``): a run's messages may be saved a line or an array item each.
WHOLE_FILE = True
ID_PREFIX = "autogen"

#: The ``type`` of every message and event AgentChat dumps (``autogen_agentchat.messages``), chat messages first.
_CHAT = frozenset({"TextMessage", "MultiModalMessage", "StopMessage", "HandoffMessage", "ToolCallSummaryMessage",
                   "StructuredMessage"})
_EVENTS = frozenset({"ToolCallRequestEvent", "ToolCallExecutionEvent", "CodeGenerationEvent", "CodeExecutionEvent",
                     "UserInputRequestedEvent", "MemoryQueryEvent", "ModelClientStreamingChunkEvent", "ThoughtEvent",
                     "SelectSpeakerEvent", "SelectorEvent"})
_SAID = frozenset({"TextMessage", "MultiModalMessage", "StopMessage"})


def _message(item: Any) -> bool:
    """A dumped AgentChat message or event: its ``type`` one of AgentChat's, with a ``source``. A
    ``StructuredMessage[T]`` dumps its type as ``StructuredMessage`` (a custom one under its own name)."""
    return isinstance(item, dict) and isinstance(item.get("source"), str) and (
        item.get("type") in _CHAT or item.get("type") in _EVENTS)


def _manager(state: dict[str, Any]) -> dict[str, Any]:
    """The state of a ``TeamState``'s group chat manager (``RoundRobinManagerState``, ``SelectorManagerState``,
    ``SwarmManagerState``, ``MagenticOneOrchestratorState``, GraphFlow's untyped one: the one agent state with a
    ``message_thread``), empty when none has."""
    return next((agent for agent in as_dict(state.get("agent_states")).values()
                 if isinstance(agent, dict) and isinstance(agent.get("message_thread"), list)), {})


def _thread(state: dict[str, Any]) -> list[Any] | None:
    """The messages of a ``TeamState``: its group chat manager's ``message_thread``, then those of a
    ``SocietyOfMindAgent``'s inner team it does not hold (``_inner``)."""
    thread = _manager(state).get("message_thread")
    if not isinstance(thread, list):
        return thread
    inner = [m for m in _inner(state) if not any(_same(m, kept) for kept in thread)]
    return thread + inner if inner else thread


def _inner(state: dict[str, Any]) -> list[Any]:
    """The messages a team's ``SocietyOfMindAgent`` s keep in their inner team's state (``SocietyOfMindAgentState``'s
    ``inner_team_state``, a ``TeamState``), in the order of ``agent_states``. The agent resets its inner team at the
    end of its turn (``on_messages_stream``: ``await self._team.reset()``), so a state holds them only where it was
    saved mid-turn: the society's own model (or an inner agent's) failed, or the state was saved while the team ran
    (``save_state`` allows it). The outer thread then holds nothing of the turn (of it, it keeps the society's
    summary alone, not yet written), so the inner team's work is the run's last steps. Its first messages are the
    outer ones handed to it as its task (the same ids), which ``_thread`` leaves out."""
    found: list[Any] = []
    for agent in as_dict(state.get("agent_states")).values():
        nested = as_dict(as_dict(as_dict(agent).get("agent_state")).get("inner_team_state"))
        if nested.get("type") == "TeamState":
            found += _thread(nested) or []
    return found


#: The source AgentChat gives the task of ``run(task="...")`` (``BaseGroupChat.run_stream``: ``TextMessage(content=task,
#: source="user")``; the docs' Swarm resumes with a ``HandoffMessage`` of that source).
_TASK_SOURCE = "user"


def _runs_of_thread(state: dict[str, Any], thread: list[Any]) -> list[list[Any]]:
    """A team state's ``message_thread`` cut into its runs. A team not reset between ``run`` calls keeps one thread
    on, each run's task appended where the last run stopped; each ``run`` is a run of its own in its TaskResult
    (the task's message first, its id the run's), so the thread is cut before each task: a chat message from
    ``user`` after a message of another source. Not when a participant is named ``user`` (``agent_states`` is keyed
    by the participants' names, ``<name>/<team_id>`` before 0.4.9): its replies would read as tasks. A run resumed
    without a task (``run()``) starts with no message of its own and stays with the run before it."""
    if any(str(key).split("/", 1)[0] == _TASK_SOURCE for key in as_dict(state.get("agent_states"))):
        return [thread]
    runs: list[list[Any]] = []
    for n, msg in enumerate(thread):
        starts = n and _message(msg) and msg["source"] == _TASK_SOURCE and msg.get("type") in _CHAT \
            and _message(thread[n - 1]) and thread[n - 1]["source"] != _TASK_SOURCE
        if starts or not runs:
            runs.append([])
        runs[-1].append(msg)
    return runs


def _typeless(record: Any) -> bool:
    """A ``TaskResult`` as ``model_dump_json()`` wrote it in autogen-agentchat 0.5 and 0.6: its ``messages`` typed as
    their base classes, each dumped as ``{"source", "models_usage", "metadata"}`` (0.6: with ``id`` and
    ``created_at``) alone, no ``type`` or ``content``."""
    found = record.get("messages") if isinstance(record, dict) and "stop_reason" in record else None
    return bool(found) and isinstance(found, list) and all(
        isinstance(m, dict) and isinstance(m.get("source"), str) and "type" not in m and "content" not in m
        for m in found)


#: How to save a run with an autogen-agentchat 0.5 or 0.6, whose ``TaskResult.model_dump_json()`` loses it.
_TYPELESS = ("this is an AutoGen AgentChat TaskResult dumped by autogen-agentchat 0.5 or 0.6 "
             "(`result.model_dump_json()`), which writes each message's source and usage but not its type or "
             "content: the run is not in it; save `json.dumps({\"messages\": [m.model_dump(mode=\"json\") for m in "
             "result.messages], \"stop_reason\": result.stop_reason})`, or `await team.save_state()`, instead")


def _same(one: Any, other: Any) -> bool:
    """Whether two dumps are of the same message: by ``id`` where both have one (0.6+), else by every field both
    hold (a message before 0.6, which has no id; one in a typeless TaskResult, which keeps only its source and
    usage)."""
    if not (isinstance(one, dict) and isinstance(other, dict)):
        return False
    if isinstance(one.get("id"), str) and isinstance(other.get("id"), str):
        return one["id"] == other["id"]
    return all(one[k] == other[k] for k in one.keys() & other.keys())


def _held(loose: list[Any], messages: list[Any]) -> bool:
    """Whether a TaskResult's ``messages`` hold the loose messages before it (``run_stream()``'s items, then its
    TaskResult), in their order: all but the streamed chunks (``model_client_stream=True``), which ``run_stream()``
    yields and the TaskResult does not keep; a writer that kept only some items (the chat messages) left a part."""
    rest = iter(messages)
    return all(any(_same(m, h) for h in rest) for m in loose if not _chunk(m))


def _chunk(item: Any) -> bool:
    """A streamed chunk (``model_client_stream=True``): ``run_stream()`` yields it, no TaskResult keeps it."""
    return isinstance(item, dict) and item.get("type") == "ModelClientStreamingChunkEvent"


def _unheld(loose: list[Any], messages: list[Any]) -> int:
    """How many of the loose messages before a TaskResult are not its run's: none where it holds them all; else
    those before the longest tail it holds (a run that raised before ``run_stream()`` yielded its TaskResult, the
    next task's run following in the log; all of them where it holds none). The tail is sought no longer than the
    TaskResult (it holds each of its messages once), and its leading streamed chunks are the run's before (the one
    that was streaming when it raised)."""
    if _held(loose, messages):
        return 0
    cut, fits = len(loose), 0
    while cut and fits + (not _chunk(loose[cut - 1])) <= len(messages):
        cut -= 1
        fits += not _chunk(loose[cut])
    cut = next(k for k in range(cut, len(loose) + 1) if _held(loose[k:], messages))
    while cut < len(loose) and _chunk(loose[cut]):
        cut += 1
    return cut


def _messages(record: Any) -> list[Any] | None:
    """The run's messages in a record of this format, or None when it is none."""
    if not isinstance(record, dict):
        return None
    if record.get("type") == "TeamState":
        return _thread(record)
    if "stop_reason" in record and isinstance(record.get("messages"), list):
        return record["messages"]
    return None


def matches(record: Any) -> bool:
    """A TaskResult or TeamState with AgentChat messages, or a message itself: the first of a list of them (a run's
    messages saved without their TaskResult) or of a stream (``run_stream()``'s items written a line each)."""
    found = _messages(record)
    return (bool(found) and all(_message(m) for m in found[:5])) or _message(record)


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The runs of a file (``WHOLE_FILE``): a TaskResult is one, a TeamState one per ``run`` its thread holds
    (``_runs_of_thread``: a team not reset between runs keeps them all); a list (JSONL lines, a JSON array)
    holds TaskResults, each a run, or loose messages, one run together (``result.messages`` saved as a list, or
    ``run_stream()``'s messages a line each), up to the TaskResult ``run_stream()`` ends with, which holds them;
    messages it does not hold (``_unheld``: a run that raised, the loop writing the items going on to its next
    task) are a run of their own, stopped for no reason told. Messages of two tasks with no TaskResult between are
    one run: a team not reset goes on with one conversation (its agents answer the next task knowing the last), a
    person's feedback given as the next ``run``'s task (the docs' human in the loop) or a ``UserProxyAgent``'s reply
    reads the same as a new task, and no message says which run it belongs to."""
    items = document if isinstance(document, list) else [document]
    loose: list[Any] = []
    for n, item in enumerate(items, 1):
        found = _messages(item)
        if found is None:
            loose.append(item)
            continue
        cut = _unheld(loose, found)
        if cut:
            yield f"messages before record {n - len(loose) + cut}", {
                "messages": loose[:cut], ITEM_AT: n - len(loose), "stop_reason": None}
        held = loose[cut:]
        loose = []
        if held and _typeless(item):  # a typeless TaskResult (0.5, 0.6) ending run_stream()'s items holds no run
            # of its own: the run is the messages before it, stopped for its reason
            yield f"messages before record {n}", {"messages": held, ITEM_AT: n - len(held),
                                                  "stop_reason": item.get("stop_reason")}
            continue
        where = f"record {n}" if isinstance(document, list) else "file"
        runs = _runs_of_thread(item, found) if item.get("type") == "TeamState" else [found]
        if len(runs) == 1:
            yield where, {**item, ITEM_AT: n}
            continue
        for k, run in enumerate(runs, 1):  # a team run again without a reset: each run is its TaskResult's
            yield f"{where}, run {k}", {"messages": run, "stop_reason": None, SAVED_AS: "TeamState", ITEM_AT: n,
                                        RUN_OF_STATE: k}
    if loose:
        yield "messages", {"messages": loose, "stop_reason": None, ITEM_AT: len(items) - len(loose) + 1}


def not_a_run(record: Any) -> str | None:
    """An agent's own ``save_state()`` (``AssistantAgentState`` and the like: its model context, the messages it
    sent the model, without the run's events or ids) or a team state saved before any run: where the run is."""
    if _typeless(record):
        return _TYPELESS
    if not isinstance(record, dict) or not isinstance(kind := record.get("type"), str):
        return None
    if kind.endswith("AgentState") and isinstance(record.get("llm_context"), dict):
        return (f"this is an AutoGen AgentChat agent's saved state (`agent.save_state()`, {kind}): the model context "
                "it would resume from, not the run; save the run's TaskResult instead "
                "(`(await agent.run(task=...)).model_dump_json()`), or a team's `await team.save_state()`")
    if kind == "TeamState" and not _thread(record):
        return ("this is an AutoGen AgentChat team's saved state (`team.save_state()`) with no messages: the team "
                "had not run, or was reset, when it was saved")
    return None


#: The biggest file ``side_path`` reads whole (a team state, a file beside it): a run's messages, not a corpus.
_BESIDE_BYTES = 16 * 2 ** 20
#: The files beside a team state that may hold its run (``json.dump``, ``model_dump_json()``, a line an item).
_BESIDE_SUFFIXES = tuple(f"{kind}{packed}" for kind in (".json", ".jsonl") for packed in ("", *COMPRESSED_SUFFIXES))


#: What a run yields and its team's ``message_thread`` does not keep: the events an agent streams as it works.
_STREAMED_ONLY = frozenset({"UserInputRequestedEvent", "ModelClientStreamingChunkEvent"})


def _said(messages: list[Any]) -> list[Any]:
    """What a run's messages hold that two dumps of one run share and two runs seldom do: each one's type, source,
    content and model usage, in order (the streamed-only events left out, which a team's state never has)."""
    return [[m.get("type"), m["source"], m.get("content"), m.get("models_usage")] for m in messages
            if _message(m) and m.get("type") not in _STREAMED_ONLY]


def _document(path: Path) -> Any:
    """A file's JSON document (its lines' values for JSONL), None when it is too big or unreadable."""
    try:
        return whole_document(path)[0] if path.stat().st_size <= _BESIDE_BYTES else None
    except (OSError, ValueError, EOFError):
        return None


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a team's ``save_state()`` of AgentChat before 0.6 saved beside
    its run's TaskResult (or messages), the same run twice. From 0.6 a message has an ``id``, and both files are the
    run of its first message's id; before, two files of one run share nothing but their messages (no id, no time),
    and two runs can say the same (a cached or replayed model), so a run's id is its file's (``file_run_key``) and
    the two are paired here, where they lie: a state is passed over when a file in its folder holds a run (not
    another state) with the very same messages (``_said``), which is read; a state of runs made without a reset
    (``_runs_of_thread``) when each of them is."""
    if fmt != NAME or not path.name.endswith(_BESIDE_SUFFIXES) or '"TeamState"' not in peek(path):
        return None  # a TaskResult, a list of messages: read whole only when it may be a state (its type first)
    state = _document(path)
    thread = _thread(state) if isinstance(state, dict) and state.get("type") == "TeamState" else None
    if not thread or not isinstance(thread[0], dict) or thread[0].get("id"):
        return None
    mine = [said for run in _runs_of_thread(state, thread) if (said := _said(run))]
    try:
        beside = sorted(p for p in path.parent.iterdir() if p != path and p.name.endswith(_BESIDE_SUFFIXES)
                        and p.is_file())
    except OSError:
        return None
    found: dict[int, str] = {}  # the state's runs read from files beside it: which file
    for other in beside:
        document = _document(other)
        if document is None:
            continue
        for _, run in split(document):
            if isinstance(run, dict) and run.get("type") != "TeamState" and SAVED_AS not in run \
                    and (said := _said(_messages(run) or [])) in mine:
                # runs that said the very same (a model-less agent, a replayed model) pair in turn, one file each
                k = next((k for k, theirs in enumerate(mine) if theirs == said and k not in found), None)
                if k is not None:
                    found[k] = other.name
    if mine and len(found) == len(mine):
        files = ", ".join(dict.fromkeys(found[k] for k in sorted(found)))
        return (f"an AutoGen AgentChat team's saved state (`team.save_state()`) of the run{'s' * (len(mine) > 1)} "
                f"read from {files} beside it (the same messages): not read twice")
    return None


def _text(msg: dict[str, Any]) -> str:
    """A chat message's text: a string content, a ``MultiModalMessage``'s text parts (an image dumps as a dict
    with its ``data``, left out), a ``StructuredMessage``'s content as JSON."""
    content = msg.get("content")
    if isinstance(content, list):
        return content_text([p for p in content if isinstance(p, str)])
    if isinstance(content, dict):
        return json.dumps(content, ensure_ascii=False)
    return content if isinstance(content, str) else ""


def _when(msg: dict[str, Any]) -> datetime | None:
    """A message's ``created_at`` (ISO 8601, as pydantic dumps a datetime); None for any other value, which costs
    the run nothing."""
    try:
        return datetime.fromisoformat(msg["created_at"])
    except (KeyError, TypeError, ValueError):
        return None


#: What ``CodeExecutorAgent`` without a model client says (``_code_executor_agent.py``): the code's output, or these
#: forms of it, fixed by AgentChat, which tell the agent from any other.
_RAN_WITH_ERROR = re.compile(
    r"\AThe script ran, then exited with an error \(POSIX exit code: (-?\d+)\)\nIts output was:\n")
_RAN_SILENT = re.compile(r"\AThe script ran but produced no output to console\. The POSIX exit code was: (-?\d+)\.")
_NO_CODE = "No code blocks found in the thread. Please provide at least one markdown-encoded code block"
#: A markdown code block, as ``CodeExecutorAgent`` extracts them (``extract_markdown_code_blocks``).
CODE_BLOCK = re.compile(r"```[ \t]*(\w+)?[ \t]*\r?\n(.*?)\r?\n```", re.S)


#: A word of two letters or more: what a person's reply has and a bare value's output (``42``, ``[1, 2]``) has not.
_WORD = re.compile(r"[^\W\d_]{2,}")


def _output_like(text: str) -> bool:
    """Whether an agent's words read as what code printed: ending on a line break (``print`` ends every line, and a
    command-line executor hands back stdout as it came) or holding no word at all (a value). A person's reply typed
    through ``input()`` (``UserProxyAgent``) never ends on one, and says words."""
    return text.endswith("\n") or not _WORD.search(text)


def _code_executors(messages: list[dict[str, Any]], users: set[str]) -> set[str]:
    """The agents of a run that are ``CodeExecutorAgent`` s running the code others write (no model of their own):
    told by the words only it says (``_RAN_WITH_ERROR``, ``_RAN_SILENT``, ``_NO_CODE``) at least once, or, where
    the code just worked (its output is all it says), by their shape: an agent, not a person (``users``), whose
    every message came from no model (``models_usage`` null), answered a message with code blocks and reads as
    code's output (``_output_like``). A ``UserProxyAgent`` has that shape too where its ``UserInputRequestedEvent``
    s were not kept (a team's ``message_thread``, a list of the chat messages): its words in reply to code are a
    person reviewing it, which ``_output_like`` tells from output."""
    fixed = {m["source"] for m in messages if m.get("type") == "TextMessage" and isinstance(m.get("content"), str)
             and (_RAN_WITH_ERROR.match(m["content"]) or _RAN_SILENT.match(m["content"])
                  or m["content"].startswith(_NO_CODE))}
    said = [m for m in messages if m.get("type") in _SAID or m.get("type") == "StructuredMessage"]
    replies: dict[str, list[bool]] = {}  # source -> for each of its messages, whether it answered code, no model's
    for before, m in zip(said, said[1:]):
        replies.setdefault(m["source"], []).append(
            "models_usage" in m and m["models_usage"] is None and m.get("type") == "TextMessage"
            and before["source"] != m["source"] and bool(CODE_BLOCK.search(_text(before))) and _output_like(_text(m)))
    return fixed | {source for source, answered in replies.items() if source not in users and all(answered)
                    and not any(m["source"] == source for m in said[:1])}


def ran_code(replying: dict[str, Any], output: str, when: datetime | None,
             forms: tuple[re.Pattern[str], ...] = (_RAN_WITH_ERROR, _RAN_SILENT)) -> dict[str, Any]:
    """A code executor's reply to the message whose code blocks it ran (``replying``, read as a ``respond`` step): an
    ``execute_code`` step, the code its arguments, the words around it (and the model's thought) the thought,
    failed on a non-zero exit code, which the executor's fixed wording (``forms``: the code in group 1, the output
    after the match) gives. Shared with ``ag2`` (AutoGen 0.2's executor, ``exitcode: 1 (execution failed)``)."""
    asked = replying["arguments"]["content"]
    blocks = [(m.group(1) or "", m.group(2)) for m in CODE_BLOCK.finditer(asked)]
    prose = "\n\n".join(t for t in (replying.get("thought"), CODE_BLOCK.sub("", asked).strip()) if t) or None
    language = blocks[0][0] if blocks else ""
    arguments = {"code": "\n\n".join(code for _, code in blocks), **({"language": language} if language else {})}
    step: dict[str, Any] = {"thought": prose, "action": "execute_code", "arguments": arguments, "observation": output,
                            "started_at": when}
    found = next((m for form in forms if (m := form.match(output))), None)
    if found and (exit_code := int(found.group(1))):
        step["error"] = (decisive_line(output[found.end():]) or output[found.end():].strip()
                         or f"exit code {exit_code}") + f" (exit code {exit_code})"
    return step


def _requested(calls: list[Any], thought: str | None, when: datetime | None, steps: list[dict[str, Any]],
               by_call: dict[str, dict[str, Any]]) -> str | None:
    """The steps of a ``ToolCallRequestEvent``'s ``FunctionCall`` s, the thought the first's; the thought left (None
    once a call took it)."""
    for call in map(as_dict, calls):
        step = {"thought": thought, "action": str(call.get("name") or UNNAMED_TOOL),
                "arguments": tool_arguments(call.get("arguments")), "started_at": when}
        thought = None
        steps.append(step)
        if isinstance(call.get("id"), str):
            by_call[call["id"]] = step
    return thought


def _executed(results: list[Any], when: datetime | None, steps: list[dict[str, Any]],
              by_call: dict[str, dict[str, Any]]) -> None:
    """A ``ToolCallExecutionEvent``'s ``FunctionExecutionResult`` s, each the result of its call's step."""
    for result in map(as_dict, results):
        step = by_call.get(result.get("call_id")) if isinstance(result.get("call_id"), str) else None
        if step is None:  # a result whose call this dump does not hold
            step = {"action": str(result.get("name") or UNNAMED_TOOL), "started_at": when}
            steps.append(step)
        output = result.get("content")
        step["observation"] = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
        step["ended_at"] = when
        if result.get("is_error") is True:
            step["error"] = step["observation"] or "the tool failed"


def _called(summary: dict[str, Any], thought: str | None, when: datetime | None, steps: list[dict[str, Any]],
            by_call: dict[str, dict[str, Any]]) -> str | None:
    """The calls a ``ToolCallSummaryMessage`` sums up, read as their events are; the thought left."""
    thought = _requested(as_list(summary.get("tool_calls")), thought, when, steps, by_call)
    _executed(as_list(summary.get("results")), when, steps, by_call)
    return thought


def _steps(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    requested: set[str] = set()  # the call ids a ToolCallRequestEvent held (a summary's own fill by_call too)
    thought: str | None = None
    code: str | None = None
    replying: dict[str, Any] | None = None
    users = agentchat_users(messages)
    executors = _code_executors(messages, users)
    for msg in messages:
        kind, when = msg.get("type"), _when(msg)
        if kind == "ThoughtEvent":
            thought = _text(msg) or thought
        elif kind == "ToolCallRequestEvent":
            thought = _requested(as_list(msg.get("content")), thought, when, steps, by_call)
            requested |= {c["id"] for c in map(as_dict, as_list(msg.get("content"))) if isinstance(c.get("id"), str)}
        elif kind == "ToolCallExecutionEvent":
            _executed(as_list(msg.get("content")), when, steps, by_call)
        elif kind == "CodeGenerationEvent":
            blocks = [as_dict(b).get("code") for b in as_list(msg.get("code_blocks"))]
            code = "\n\n".join(b for b in blocks if isinstance(b, str)) or None
            thought = _text(msg) or thought
        elif kind == "CodeExecutionEvent":
            result = as_dict(msg.get("result"))
            output = result.get("output") if isinstance(result.get("output"), str) else ""
            step = {"thought": thought, "action": "execute_code", "arguments": {"code": code}, "observation": output,
                    "started_at": when}
            if isinstance(result.get("exit_code"), int) and result["exit_code"] != 0:
                step["error"] = output.strip() or f"exit code {result['exit_code']}"
            steps.append(step)
            thought = code = None
        elif kind == "ToolCallSummaryMessage" and not any(
                isinstance(call, dict) and isinstance(call.get("id"), str) and call["id"] in requested
                for call in as_list(msg.get("tool_calls"))):
            # the calls it sums up (``tool_calls`` and ``results``, 0.6.1 on) where their events were not kept: a
            # MagenticOne orchestrator's thread holds its agents' chat messages alone. Whether they were is told by
            # the events' ids alone: ids repeat across agents (Ollama's client counts from "0" in each, llama.cpp
            # servers give ""), so an earlier agent's summary must not hide a later one's
            thought = _called(msg, thought, when, steps, by_call)
        elif kind in _SAID or kind == "StructuredMessage" or kind == "HandoffMessage" and msg["source"] in users:
            text = _text(msg)
            if msg["source"] in users:  # a person: the task, or the answer to the words before
                if replying is not None and "observation" not in replying:
                    replying["observation"] = text
                continue
            if not text and thought is None:
                continue
            if msg["source"] in executors and replying is not None and CODE_BLOCK.search(
                    replying["arguments"].get("content") or ""):
                if steps and steps[-1] is replying:  # the code was written to be run: the run's step, not words
                    steps.pop()
                steps.append(ran_code(replying, text, when))
                replying = None
                continue
            replying = {"thought": thought, "action": "respond", "arguments": {"content": text}, "started_at": when}
            thought = None
            steps.append(replying)
    for n, step in enumerate(steps):
        step["index"] = n
    return steps


def _task(messages: list[dict[str, Any]], record: dict[str, Any]) -> str:
    """In a ``TeamState`` of a MagenticOne team, whose orchestrator keeps the task apart from its thread (``task``,
    the one manager state with one), that: a person's message in its thread is a reply mid-run (a ``UserProxyAgent``
    named ``user``), never the task. Else the first thing a person said (:func:`agentchat_users`: the task given to
    ``run``, a Swarm resumed with the user's ``HandoffMessage``); else the first thing said."""
    kept = _manager(record).get("task") if record.get("type") == "TeamState" else None
    if isinstance(kept, str) and kept.strip():
        return clip_task(kept.strip())
    users = agentchat_users(messages)
    said = [m for m in messages if (m.get("type") in _SAID or m.get("type") == "HandoffMessage"
                                    and m["source"] in users) and _text(m).strip()]
    first = next((m for m in said if m["source"] in users), said[0] if said else None)
    if first is None:
        raise RecordError("an AutoGen AgentChat run with no task: none of its messages says anything")
    return clip_task(_text(first).strip())


#: A run ``split`` cut from a team state's thread (``_runs_of_thread``): that it was, and which of its runs it is.
SAVED_AS = "__autogen_saved_as__"
RUN_OF_STATE = "__autogen_run_of_state__"


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    if _typeless(record):
        raise RecordError(_TYPELESS)
    found = _messages(record)
    if not found:
        raise RecordError("not an AutoGen AgentChat TaskResult ({'messages', 'stop_reason'}) or TeamState "
                          "(team.save_state()) with messages")
    messages = [m for m in found if _message(m)]
    if not messages:
        raise RecordError("an AutoGen AgentChat run none of whose messages is an AgentChat message (type, source)")
    first = messages[0]
    key = first["id"] if isinstance(first.get("id"), str) and first["id"] else file_run_key(ctx, record.get(ITEM_AT))
    if not first.get("id") and isinstance(k := record.get(RUN_OF_STATE), int) and k > 1:
        key += f".run{k}"  # a later run of one state, before 0.6: the first keeps the id the whole state had
    users = agentchat_users(messages)
    metadata: dict[str, Any] = {"agents": sorted({m["source"] for m in messages if m["source"] not in users})}
    if isinstance(record.get("stop_reason"), str):
        metadata["stop_reason"] = record["stop_reason"]
    if record.get("type") == "TeamState" or record.get(SAVED_AS) == "TeamState":
        metadata["saved_as"] = "TeamState"
    fields: dict[str, Any] = {
        "trajectory_id": f"{ID_PREFIX}:{safe_id(key)}", "task": _task(messages, record), "steps": _steps(messages),
        "metadata": metadata,
    }
    if (created := _when(first)) is not None:
        fields["created_at"] = created
    return build(fields, ctx)
