"""``ag2``: AG2 (AutoGen 0.2 API) chats as users save them: initiate_chat()'s ChatResult, dumped.

Records: ``ChatResult`` (``autogen/agentchat/chat.py``) as a dict: ``dataclasses.asdict(result)`` or
``vars(result)`` dumped, ``{"chat_id", "chat_history", "summary", "cost", "human_input"}``, one per file, JSONL
line or array item (``initiate_chats()`` returns a list of them). ``chat_history`` is the chat as the initiator
(the user proxy) kept it, OpenAI-style messages with the sender's ``name``: its own messages under role
``assistant``, the other agent's under ``user``; a tool call's message carries ``tool_calls``, its result
``tool_responses`` (role ``tool``).

Mapping
- task: the first message's text (the initiator's ``message``);
- steps: one per ``tool_calls`` entry (action = the function's name, arguments decoded, thought = the
  message's text), its observation the ``tool_responses`` entry with its ``tool_call_id`` (legacy
  ``function_call`` / role ``function`` by name), failed where it reads ``Error: ...`` (what
  ``ConversableAgent.execute_function`` returns for a tool that raised, bad arguments or an unknown
  function); the other agent's text is a ``respond`` step; the initiator's later text is the observation of
  the ``respond`` before it (its reply, or a person's); a code executor's report
  (``exitcode: N (execution failed)\\nCode output: ...``), from the initiator or, in a group chat, the agent
  that runs the code: the code blocks of the ``respond`` before it ran, an ``execute_code`` step
  (``autogen_agentchat.ran_code``), failed on a non-zero exit code;
- trajectory_id = ``ag2:<chat_id>`` where AG2 drew it (``uuid4().int``); AutoGen 0.2's ``initiate_chat`` leaves
  it None and ``a_initiate_chats`` sets its caller's numbers (1, 2, ...): ``ag2:<folder>.<file name>.<item>``
  (``_common.file_run_key``: a chat's words are no id, a cache replays them); metadata keeps the
  ``summary`` and the agents' names;
- outcome: ``unknown``: a ChatResult says how the chat ended, not whether its task was done.

AG2 1.x (``import ag2``) keeps no ChatResult. Of the files it writes of its runs, besides OTel spans (read as
``otel-genai``), an eval run's store is read: ``ag2.eval.run_agent(..., store_dir=...)`` (and ``evaluate_traces``)
persist ``<run_id>.json`` (``ag2/eval/results/store.py``, ``schema_version`` "0.2"), a run of the agent per ``tasks``
item. Each is read: task = ``inputs["input"]`` (the prompt ``ask`` was given), ``task_id`` the suite's, trajectory_id
``ag2:<run_id>.<task_id>`` (a suite's ids, "0", "1", ..., repeat in every run); its ``events``
(``BaseEvent.to_dict``): a ``ToolCallEvent`` a step (thought = the ``ModelResponse`` text before it), answered by
the ``ToolResultEvent`` / ``ToolErrorEvent`` whose ``parent_id`` is its ``id`` (the latter failed), a
``ModelResponse``'s other text a ``respond`` step; a run of more than ``MAX_STEPS`` clipped as a span format's
(``kept_steps``: run_agent's events are rebuilt from its spans). Outcome: ``exception`` (the agent raised) a failure,
else the verdict of its outcome-like scorers' ``feedback`` (``_vendor.verdict``: AG2's ``final_answer_matches``,
``correctness``), else unknown; metadata keeps the eval run, suite, target, ``otel_trace_id`` and ``feedback``. A task
``evaluate_traces`` found no trace for (``MissingTraceError``, no events) is no run and is refused.
An ``Agent`` given a ``knowledge`` store (``KnowledgeConfig.write_event_log``, on by default; so did AG2 0.x's
``autogen.beta`` Agent) rewrites its stream's event log after every ``ask``: ``log/<stream_id>.jsonl``
(``ag2/knowledge/log.py``'s ``EventLogWriter``), a line ``{"type": <the event's dotted class name>, "data":
BaseEvent.to_dict}`` per event, the whole file one run: task = the first ``ModelRequest``'s text, steps as an eval
task's events (also a ``ToolNotFoundEvent``, an error, and a provider-run tool's, ``OpenAIServerToolCallEvent`` /
``AnthropicServerToolCallEvent``; a later ``ask``'s prompt the observation of the answer before it), trajectory_id
``ag2:<stream_id>`` (the file's name). Outcome: a failure where the log ends on a prompt or on tool results (none
``final``) the model was never handed: AG2 calls the model after them and logs its answer, so the model call raised
out of ``ask`` (AG2 keeps no exception: the error is the last of those results' tool error, if any); else unknown
(AG2 writes no verdict). Compaction (``KnowledgeConfig.compact``) moves a stream's earliest events to
``<stream_id>.dropped-<n>.jsonl``: read before the log beside them, as AG2's ``EventLogWriter.load`` does (the first
prompt is there; a segment with unreadable lines named in ``metadata.segments_unread``), and passed over as files of
their own while that log is beside them; ``SummarizeCompact``'s ``CompactionSummary`` is no step (the segments hold
what it sums up). Not read: ``DrainedModelRequest`` (queued input merged into one request).
"""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Any, Iterator

from trajsearch.model import Outcome, Trajectory

from ..sources import whole_document
from ._common import (ITEM_AT, Context, PassedOver, RecordError, as_list, build, clip_task, content_text,
                      file_run_key, file_stem, item_positions, json_object, named_path, safe_id, timestamp,
                      tool_arguments)
from .autogen_agentchat import CODE_BLOCK, ran_code

NAME = "ag2"
ID_PREFIX = "ag2"
#: A file is read whole (see ``split``): a run's id may be where in its file it is.
WHOLE_FILE = True
#: The keys every ``ChatResult`` dumps.
_KEYS = frozenset({"chat_id", "chat_history", "summary", "cost"})
#: ``ConversableAgent``'s report of code it ran (``execute_code_blocks``, and its reply using a code executor); AG2's
#: own OpenTelemetry records it as the user proxy's reply (``_spans.assembly``).
EXECUTOR_REPORT = re.compile(r"\Aexitcode: (-?\d+) \([^)\n]*\)\nCode output: ?")
#: What ``execute_function`` hands back for a call that failed (``f"Error: {e}"``); public: AG2's OTel joins such
#: results of parallel calls into one message, which ``_spans.assembly`` splits.
FAILED_RESULT = "Error: "


#: The keys of AG2 1.x's eval run store (``ag2/eval/results/store.py``'s ``to_dict``), whose ``tasks`` are its runs.
_EVAL_KEYS = frozenset({"schema_version", "run_id", "suite", "target", "tasks"})
#: Where a task of an eval run store keeps what its run says of them all (``split``).
_EVAL_RUN = "__ag2_eval_run__"


def _eval_store(record: Any) -> bool:
    return isinstance(record, dict) and _EVAL_KEYS <= record.keys() and isinstance(record["tasks"], list)


#: Where the events of an AG2 1.x Agent's event log (a line each, ``split``) are handed over as one run.
_EVENT_LOG = "__ag2_event_log__"
#: AG2's packages (before 1.0, its ``autogen.beta`` API, which wrote the same log): an event log line's ``type`` is a
#: class of one - ``ag2.events.types.ModelResponse``, but also compaction's ``ag2.compact.CompactionSummary`` (a
#: SummarizeCompact'ed log starts on it) and a provider's ``ag2.config.openai.events.OpenAIServerToolCallEvent``.
_EVENTS_MODULES = ("ag2.", "autogen.beta.")
#: Event classes (by name) of a tool call, and of its result or error: AG2's own and the provider-run built-ins
#: (``BuiltinToolCallEvent``'s subclasses, a web search the model ran); ``ToolNotFoundEvent`` is a ``ToolErrorEvent``.
_TOOL_CALLS = ("ToolCallEvent", "BuiltinToolCallEvent", "OpenAIServerToolCallEvent", "AnthropicServerToolCallEvent")
_TOOL_ERRORS = ("ToolErrorEvent", "ToolNotFoundEvent")
_TOOL_RESULTS = ("ToolResultEvent", "BuiltinToolResultEvent", "OpenAIServerToolResultEvent",
                 "AnthropicServerToolResultEvent") + _TOOL_ERRORS


def _event_line(record: Any) -> bool:
    """A line of an Agent's event log (``EventLogWriter``): ``{"type": "ag2.<module>.<Event>", "data": {...}}``."""
    return (isinstance(record, dict) and record.keys() == {"type", "data"} and isinstance(record["data"], dict)
            and isinstance(record["type"], str) and record["type"].startswith(_EVENTS_MODULES))


def _log_events(lines: list[Any]) -> list[dict[str, Any]]:
    """An event log's events as an eval task's are: the ``data`` of each line, its ``type`` the class's name."""
    return [{**line["data"], "type": line["type"].rsplit(".", 1)[-1]} for line in lines if _event_line(line)]


#: Compaction's file of a stream's earliest events (``EventLogWriter.persist_dropped``), numbered from 1.
_SEGMENT = re.compile(r"\A(?P<stream>.+)\.dropped-(?P<n>\d+)\Z")


def _dropped(log: Path, stream: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The events compaction dropped from a stream, segment after segment, found beside its log: what AG2's own
    ``EventLogWriter.load`` reads before the log (the first prompt is in segment 1); and the segments with lines that
    could not be read (the run is kept without those lines; they are named in its metadata, ``segments_unread``)."""
    segments = sorted((int(m["n"]), path) for path in log.parent.glob(f"{glob.escape(stream)}.dropped-*.jsonl")
                      if (m := _SEGMENT.match(path.name.removesuffix(".jsonl"))) and m["stream"] == stream)
    events: list[dict[str, Any]] = []
    unread: list[str] = []
    for _, path in segments:
        try:
            document, errors = whole_document(path)
        except (OSError, ValueError, EOFError):
            document, errors = None, [path]
        if errors or document is None:
            unread.append(path.name)
        if document is not None:
            events += _log_events(document if isinstance(document, list) else [document])
    return events, unread


def matches(record: Any) -> bool:
    return (isinstance(record, dict) and _KEYS <= record.keys() and isinstance(record["chat_history"], list)
            or _eval_store(record) or _event_line(record))


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The chats of a file: a ChatResult, or each of a list of them (``initiate_chats()``'s, a JSON array or a line
    each), with where it is in the file (``ITEM_AT``), which names a chat whose ``chat_id`` does not; or the tasks of
    an AG2 1.x eval run store, each with its run's (``_EVAL_RUN``); or an AG2 1.x Agent's event log, one run."""
    if _eval_store(document):
        suite = document["suite"] if isinstance(document["suite"], dict) else {}
        run = {"eval_run": document["run_id"], "suite": suite.get("name"), "target": document["target"]}
        for n, task in enumerate(document["tasks"], 1):
            yield f"task {n}", {**task, _EVAL_RUN: run} if isinstance(task, dict) else task
        return
    if _event_line(document):  # a log of one event: ``whole_document`` hands its one line over alone
        document = [document]
    if isinstance(document, list) and document and _event_line(document[0]):
        # one stream, one run; each event as an eval task's are, ``type`` its class's name
        yield "file", {_EVENT_LOG: _log_events(document)}
        return
    if not isinstance(document, list):
        yield "file", {**document, ITEM_AT: 1} if isinstance(document, dict) else document
        return
    positions = item_positions(document)
    for n, (position, item) in enumerate(zip(positions, document), 1):
        yield position, {**item, ITEM_AT: n} if isinstance(item, dict) else item


#: AG2's own ``chat_id`` (``ChatResult``'s default, ``uuid.uuid4().int``) is this big; AutoGen 0.2 leaves it None,
#: and ``initiate_chats()`` sets the number its caller gave each chat (1, 2, ...), the same in every such file.
_OWN_ID = 2 ** 64


def _chat_id(record: dict[str, Any], ctx: Context) -> str:
    """The chat's own ``chat_id`` where AG2 drew it (a UUID's number), else the file and place it was read from
    (``file_run_key``): a content hash merged the chats a cache replays (AutoGen 0.2's ``cache_seed`` 42, on by
    default) and two files' chat 1 were one run."""
    own = record.get("chat_id")
    if isinstance(own, str) and own.isdigit():
        own = int(own)
    if isinstance(own, int) and not isinstance(own, bool) and own >= _OWN_ID:
        return str(own)
    return file_run_key(ctx, record.get(ITEM_AT))


def _text(msg: dict[str, Any]) -> str:
    return content_text(msg.get("content")).strip()


def _steps(history: list[dict[str, Any]], initiator: str | None) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    replying: dict[str, Any] | None = None

    def answer(step: dict[str, Any] | None, result: Any) -> None:
        if step is not None and "observation" not in step:
            step["observation"] = result if isinstance(result, str) else content_text(result)
            if step["observation"].startswith(FAILED_RESULT):
                step["error"] = step["observation"].strip()

    for msg in history[1:]:
        calls = [c for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
        if isinstance(msg.get("function_call"), dict):
            calls.append({"function": msg["function_call"]})
        if calls:
            # a group pattern's tool executor keeps the call message's content as str(None)
            said = _text(msg) if _text(msg) not in ("", "None") else None
            for call in calls:
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                step = {"thought": said, "action": str(function.get("name") or "tool"),
                        "arguments": tool_arguments(function.get("arguments"))}
                steps.append(step)
                by_call[str(call.get("id") or function.get("name"))] = step
            replying = None
            continue
        if msg.get("role") in ("tool", "function"):
            responses = [r for r in msg.get("tool_responses") or [] if isinstance(r, dict)] or [msg]
            for r in responses:
                answer(by_call.get(str(r.get("tool_call_id") or r.get("name"))), r.get("content"))
            continue
        text = _text(msg)
        if not text:
            continue
        if replying is not None and EXECUTOR_REPORT.match(text) and CODE_BLOCK.search(replying["arguments"]["content"]):
            # the code was run: by the user proxy, or a group chat's executor agent
            if steps and steps[-1] is replying:
                steps.pop()
            steps.append(ran_code(replying, text, None, (EXECUTOR_REPORT,)))
            replying = None
            continue
        if msg.get("name") == initiator:  # the user proxy's reply: a person's (or its default) words
            if replying is not None and "observation" not in replying:
                replying["observation"] = text
            replying = None
            continue
        replying = {"action": "respond", "arguments": {"content": text}}
        steps.append(replying)
    for n, step in enumerate(steps):
        step["index"] = n
    return steps


def _parts_text(parts: Any) -> str:
    """The words of AG2's input parts (a ``ModelRequest``'s, a ``ToolResult``'s): each ``TextInput``'s ``content``."""
    return "\n".join(p["content"] for p in as_list(parts) if isinstance(p, dict) and isinstance(p.get("content"), str))


def _result_text(result: Any) -> str:
    """A ``ToolResult`` as ``to_dict`` writes it (``{"__dataclass__", "data": {"parts": [...]}}``): its parts' text."""
    data = result.get("data") if isinstance(result, dict) else None
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        return content_text(result)
    return _parts_text(data["parts"])


def _request_text(event: dict[str, Any]) -> str:
    """A ``ModelRequest``'s words."""
    return _parts_text(event.get("parts"))


def _tool_error(event: dict[str, Any]) -> str:
    """A ``ToolErrorEvent``'s error: ``error`` (``{"__exception__", "message"}``), else its result's text."""
    error = event.get("error") if isinstance(event.get("error"), dict) else {}
    if error:
        return f"{error.get('__exception__') or 'Error'}: {error.get('message') or ''}".strip()
    return _result_text(event.get("result")).strip() or "the tool failed"


def _eval_steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    said: str | None = None  # the last model response's text, a tool call's thought or else a ``respond``
    for event in events + [{"type": "ModelResponse"}]:  # the last response's text is said at the end
        kind = event.get("type")
        if kind == "ModelRequest" and said:  # a later ``ask``: the person's reply to the answer
            steps.append({"action": "respond", "arguments": {"content": said}, "observation": _request_text(event)})
            said = None
        elif kind == "ModelResponse":
            if said:
                steps.append({"action": "respond", "arguments": {"content": said}})
            message = event.get("message")
            said = content_text(message.get("content")).strip() if isinstance(message, dict) else None
        elif kind in _TOOL_CALLS:
            step = {"thought": said or None, "action": str(event.get("name") or "tool"),
                    "arguments": tool_arguments(event.get("arguments"))}
            steps.append(step)
            by_call[str(event.get("id"))] = step
            said = None
        elif kind in _TOOL_RESULTS and (step := by_call.get(str(event.get("parent_id")))):
            step["observation"] = _result_text(event.get("result"))
            if kind in _TOOL_ERRORS:
                step["error"] = _tool_error(event)
    for n, step in enumerate(steps):
        step["index"] = n
    return steps


def _bool_label(score: Any) -> str | None:
    """A true/false scorer's verdict as a label: its failure reads "failed", not "0.0" (review RT1 7)."""
    return ("passed" if score else "failed") if isinstance(score, bool) else None


def _feedback_scores(feedback: list[Any]) -> list[Any]:
    """A task's scorers' ``Feedback`` (``key``, ``score`` a number or bool - what AG2's ``pass_rate`` counts -,
    ``value`` a label, ``comment``) as the scores ``_vendor.verdict`` judges a run by."""
    from .langsmith import feedback_score  # LangSmith feedback's shape; langsmith's _spans imports this module

    scores = []
    for f in feedback:
        if isinstance(f, dict) and isinstance(f.get("key"), str) and (score := feedback_score(f, None)):
            score.label = score.label or _bool_label(f.get("score"))
            scores.append(score)
    return scores


def _events_fields(events: list[dict[str, Any]], metadata: dict[str, Any]) -> dict[str, Any]:
    """The fields both readers take from a run's events: its steps, the last response's model, the first time.

    ``e.get("type")``: an eval store's events may lack one."""
    from ._spans import kept_steps  # _spans imports this module

    fields: dict[str, Any] = {"steps": kept_steps(_eval_steps(events), metadata)}
    if models := [e["model"] for e in events if e.get("type") == "ModelResponse" and isinstance(e.get("model"), str)]:
        fields["model_id"] = models[-1]
    if started := next((t for e in events if (t := timestamp(e.get("created_at")))), None):
        fields["created_at"] = started
    return fields


def _eval_task(record: dict[str, Any], ctx: Context) -> Trajectory:
    """One task's run of an AG2 1.x eval run store (see the module's docstring)."""
    from ._vendor import verdict

    run = record[_EVAL_RUN]
    events = [e for e in as_list(record.get("events")) if isinstance(e, dict)]
    exception = record.get("exception")
    if not events and isinstance(exception, dict) and exception.get("type") == "MissingTraceError":
        raise RecordError("an AG2 eval task with no run: the graded trace source had no trace for this task "
                          "(MissingTraceError)")
    inputs = record.get("inputs") if isinstance(record.get("inputs"), dict) else {}
    task = inputs.get("input")
    if not isinstance(task, str) or not task.strip():
        if str(run["target"]).startswith("trace-source:"):
            raise RecordError("an AG2 eval task graded from traces kept elsewhere (`target` "
                              f"{str(run['target'])[:80]!r}) names no prompt: ingest those traces (e.g. their OTel "
                              "spans) instead")
        raise RecordError("an AG2 eval task whose `inputs[\"input\"]` (the prompt its agent was asked) is empty or "
                          "not text: no task")
    if not isinstance(run["eval_run"], str) or record.get("task_id") in (None, ""):
        raise RecordError("an AG2 eval task without its run's `run_id` or its own `task_id`: no id")
    metadata = {k: v for k, v in run.items() if v is not None}
    trace_ref = record.get("trace_ref")
    if isinstance(trace_ref, dict) and isinstance(trace_ref.get("trace_id"), str):
        metadata["otel_trace_id"] = trace_ref["trace_id"]
    if record.get("feedback"):
        metadata["feedback"] = record["feedback"]
    fields: dict[str, Any] = {
        "trajectory_id": f"{ID_PREFIX}:{safe_id(str(run['eval_run']) + '.' + str(record['task_id']))}",
        "task": clip_task(task.strip()), "task_id": str(record["task_id"])[:200],
        "tags": [t for t in as_list(record.get("tags")) if isinstance(t, str)], "metadata": metadata}
    fields |= _events_fields(events, metadata)
    if isinstance(exception, (dict, str)) and exception:
        fields["outcome"] = "failure"
        said = (f"{exception.get('type') or 'Error'}: {exception.get('message') or ''}".strip()
                if isinstance(exception, dict) else exception.strip())
        fields["failure"] = {"error": clip_task(said or "the agent raised")}
    elif (basis := (judged := verdict(_feedback_scores(as_list(record.get("feedback"))), ctx)).basis) and \
            judged.outcome is not Outcome.unknown:
        fields |= {"outcome": judged.outcome.value, "reward": judged.reward}
        metadata["outcome_basis"] = f"feedback {basis.name!r}"
        if judged.outcome is Outcome.failure:
            fields["failure"] = {"error": f"feedback {basis.name}: {basis.label or basis.value}"}
    return build(fields, ctx)


def _event_log(events: list[dict[str, Any]], ctx: Context) -> Trajectory:
    """An AG2 1.x Agent's event log (see the module's docstring)."""
    log = named_path(ctx.source)
    stream = file_stem(log, (".jsonl",))
    unread: list[str] = []
    if segment := _SEGMENT.match(stream):
        if log.with_name(f"{segment['stream']}.jsonl").is_file():
            raise PassedOver("compaction's earlier events of an AG2 stream, read with its log",
                             f"read with the stream's log {segment['stream']}.jsonl beside it")
    else:
        dropped, unread = _dropped(log, stream)
        events = dropped + events
    task = next((text for e in events if e["type"] == "ModelRequest" and (text := _request_text(e).strip())), "")
    if not task:
        raise RecordError("an AG2 event log with no ModelRequest text (the prompt the Agent was asked): no task")
    metadata: dict[str, Any] = {"segments_unread": unread} if unread else {}
    fields: dict[str, Any] = {
        "trajectory_id": f"{ID_PREFIX}:{safe_id(stream)}",
        "task": clip_task(task), "metadata": metadata}
    fields |= _events_fields(events, metadata)
    if events[-1]["type"] == "ModelRequest":  # ``ask`` raised: the model call after the prompt failed
        fields |= {"outcome": "failure",
                   "failure": {"error": "the model call after the prompt raised (AG2's log keeps no exception)"}}
    elif unanswered := _unanswered_results(events):  # ``ask`` raised: the model call after them failed
        error = next((_tool_error(e) for e in reversed(unanswered) if e["type"] in _TOOL_ERRORS),
                     "the model call after the tool results raised (AG2's log keeps no exception)")
        fields |= {"outcome": "failure", "failure": {"error": error}}
    return build(fields, ctx)


def _unanswered_results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool results a log ends on, when the model was never handed them: AG2 calls the model after a turn's tool
    results unless one is ``final`` (``ToolResult.final``), and logs its answer, so a log ending on them is an ``ask``
    whose model call raised (with a real provider, or AG2's test double re-raising a tool error) - the log keeps no
    exception."""
    tail: list[dict[str, Any]] = []
    for event in reversed(events):
        if event["type"] in _TOOL_RESULTS:
            tail.append(event)
        elif event["type"] not in ("ToolResultsEvent", "ToolCallsEvent"):
            break
    final = any(isinstance(r := e.get("result"), dict) and isinstance(r.get("data"), dict) and r["data"].get("final")
                is True for e in tail)
    return [] if final else tail[::-1]


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    if isinstance(record.get(_EVAL_RUN), dict):
        return _eval_task(record, ctx)
    if isinstance(record.get(_EVENT_LOG), list):
        return _event_log(record[_EVENT_LOG], ctx)
    if "chat_history" not in record and "role" in record and ({"content", "tool_calls"} & record.keys()):
        raise RecordError("this is one message of an AG2 chat's chat_history (`result.chat_history` saved alone), "
                          "not a ChatResult, and a chat is not read from its messages one by one: save the whole "
                          "ChatResult, `json.dump(dataclasses.asdict(result), f, default=str)`")
    history = [m for m in record.get("chat_history") or [] if isinstance(m, dict)]
    if not history:
        raise RecordError("an AG2 ChatResult with no chat_history: the chat had no message")
    task = _text(history[0])
    if not task:
        raise RecordError("an AG2 ChatResult whose first message says nothing: no task")
    chat_id = _chat_id(record, ctx)
    initiator = history[0].get("name") if isinstance(history[0].get("name"), str) else None
    metadata: dict[str, Any] = {"agents": sorted({m["name"] for m in history if isinstance(m.get("name"), str)})}
    if isinstance(record.get("summary"), str) and record["summary"].strip():
        metadata["summary"] = record["summary"]
    return build({"trajectory_id": f"{ID_PREFIX}:{safe_id(chat_id)}", "task": clip_task(task),
                  "steps": _steps(history, initiator), "metadata": metadata}, ctx)
