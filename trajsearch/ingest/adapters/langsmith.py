"""``langsmith``: LangSmith runs: SDK ingest payloads, run exports and run trees, with their feedback.

Records, any mix (one per line, a JSON array, or one object per file):
- the SDK's batch ingest payload ``{"post": [RunCreate...], "patch":
  [RunUpdate...]}`` (``Client.batch_ingest_runs``; ``multipart_ingest`` sends
  the same runs as ``post.<id>`` / ``patch.<id>`` parts): a run is created by a
  ``post`` (``id``, ``trace_id``, ``dotted_order``, ``parent_run_id``,
  ``name``, ``run_type``, ``start_time``, ``inputs``, ``extra``, ``tags``,
  ``session_name``) and completed by a ``patch`` (``end_time``, ``outputs``,
  ``error``, ``events``, ``extra``) of the same id, in the same payload or a
  later one; a patch without ``id`` (langsmith-js) is identified by the last
  segment of its ``dotted_order``;
- a run's create and update operations as separate records (a JSONL of the
  SDK's run ops): the update (``id``, ``end_time``, ``outputs``, ``error``; no
  ``trace_id``) is merged into the create of the same id, as the API does;
- runs as ``client.list_runs`` / the export API give them, one per line (or
  ``{"runs": [...]}``), with ``id``, ``trace_id``, ``parent_run_id``,
  ``dotted_order``, ``run_type``, ``name``, ``inputs``, ``outputs``,
  ``error``, ``start_time``, ``end_time``, ``feedback_stats``; a run tree nests
  its children in ``child_runs``; a trace of its root chain run alone
  (``list_runs(is_root=True)``, the usual listing of a project's traces) is
  read as its conversation, as a UI download is: a LangGraph root's
  ``outputs.messages`` hold the agent's whole turn (grouped by conversation,
  so is each childless root of the thread); LangChain's langsmith-trace skill
  (``query_traces.py export`` / ``trace``) writes them with ``run_id`` for
  ``id`` and ``custom_metadata`` for ``extra.metadata``;
- feedback as ``client.list_feedback`` gives it: ``run_id``, ``trace_id``,
  ``key``, ``score``, ``value``, ``comment``;
- a run downloaded from the UI: ``inputs``, ``outputs``, ``metadata`` and
  ``langsmith: {organization, workspace, tracing_project}``, with no id, run
  type, times or child runs: its ``outputs.messages`` are read as an agent's
  turns (tool calls, their ``ToolMessage`` replies, handoffs, the answer),
  other outputs (``{"output": ...}``) as a graph's answer; its id is the
  ``run-<uuid>`` of the file name, else a hash of its content (not its
  metadata's ``run_id``: every run of a LangGraph Platform trace carries the root's);
- the runs langsmith-js posts for the AI SDK: ``wrapAISDK`` and
  AI SDK 7's ``registerTelemetry(new LangSmithTelemetry())``, whose runs are
  posted once, complete (no ``patch``): a ``chain`` root named by the
  ``functionId``, ``llm`` runs named by the provider (``ls_model_name``),
  ``tool`` runs; an agent run inside a tool (a sub-agent) is a ``chain`` under
  that tool run, its tools are steps of the trace's run, as every span format's;
  their runs carry ``extra.metadata.ls_integration`` (``vercel-ai-sdk``,
  ``vercel-ai-sdk-telemetry``), and only those are read by these rules: a run
  ``LangSmithTelemetry`` closed with ``{"note": "closed on finish"}`` (still
  open when a streamed call ended: a failed or cut-off step) recorded no
  output, and the root's outputs, its last finished step, are no answer where
  that step asked for tools (finish reason ``tool-calls``, whatever it said
  with them; a stream whose provider then failed marks only its ``llm`` runs:
  the last one's error decides);
- a run tree a tool kept under ``trace`` beside fields of its own (no
  ``observations``: that is Langfuse's download);
- a trace as ``langsmith-fetch trace ID --include-metadata`` writes it:
  ``{"trace_id", "messages", "metadata", "feedback"}``, its messages the root
  run's ``outputs.messages``, read as a UI download's from the trace's own
  turn on (a thread's state holds its earlier turns too), with the times,
  status, ``custom_metadata`` and feedback of ``metadata``. Its bare message
  list (without ``--include-metadata``) and its thread files (message
  previews of a whole thread) hold no run to read: named, with the command
  that writes one.
A dataset example (``dataset_id``, ``inputs``, ``outputs``) holds no run: passed
over in a folder, named when given alone.
``dotted_order`` (``<%Y%m%dT%H%M%S%fZ><run id>`` per level, root first) fills
a missing id, parent, trace id or start time. Runs are grouped into one
trajectory per trace (``trace_id``; else the root of ``dotted_order``; else the
run's own id), across every file of the input; ``group_by="conversation"``
merges the traces of one thread (``extra.metadata.thread_id`` /
``session_id`` / ``conversation_id``).

Mapping
- run role by ``run_type``: ``tool`` = step, ``llm`` / ``chat_model`` =
  model call, ``retriever`` = step, ``chain`` = container (``prompt`` /
  ``parser`` / ``embedding`` are ignored).
- steps: one per ``tool`` run: action = ``name``, arguments = ``inputs``
  (``inputs.input`` decoded when that is all there is; the tool's input of
  langsmith-js ``wrapAISDK``'s ``{"args": [input, {toolCallId, messages}]}``,
  whose ``toolCallId`` ties it to the model call), observation =
  ``outputs.output`` (``outputs.outputs`` from the JS SDK; a LangChain ``ToolMessage``'s content, whose
  ``tool_call_id`` ties it to the model call and ``status: error`` marks it
  failed), error = the last exception line of ``error`` (a traceback). Model
  outputs (Chat Completions ``choices``, LangChain ``generations``, Anthropic
  ``content``, Responses ``output``) give the thought of the tool steps they
  requested, or a ``respond`` step when they requested none (a failed call's
  empty ``generations`` say nothing).
- task: the root run's inputs (``messages``, ``input`` / ``question`` /
  ``query`` ...), else the first user message of the earliest model call.
- trajectory_id = ``ls:<trace_id>``; task_id = the root's
  ``reference_example_id``; model_id = ``invocation_params.model``, the
  request's ``model``, ``ls_model_name``, else the response's ``model``;
  tags, project and ``extra.metadata`` of the root go to metadata.
- outcome: feedback on the root run (``feedback_stats`` ``{key: {"avg": ..}}``,
  a ``feedback`` list, or feedback records) decides only when its key is
  success / correctness / reward-like (a pass/fail value, or a score that is
  also the reward, fractional ones against the operator's threshold); other
  feedback stays in metadata. Else an ``error`` on the root run, or on a
  chain run after which nothing ran (the OpenAI Agents SDK integration marks
  the agent's run, never the root; see ``_spans.assembly``) -> failure
  (infra_error for timeouts, rate limits, 5xx, connection errors); else
  ``unknown``. Chains that failed with a failed model call's error only
  passed it on: no step each. An ``error`` written as ``str()`` of the Agents
  SDK's span error (``{'message': ..., 'data': ...}``) reads as the SDK's own
  export does.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, RecordError, as_dict, decisive_line
from ._spans import Message, Node, error_text, iso_seconds, one_node_per_id, text_of
from ._spans import trajectory_id as _span_trajectory_id
from ._spans.messages import tool_message
from ._vendor import (
    Score,
    answer_in,
    as_list,
    call_id,
    decode,
    is_empty,
    message_dicts,
    output_dicts,
    result_text,
    run_task,
    says_nothing,
    this_turn,
    trace_roots,
    trajectory,
)

NAME = "langsmith"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(
    r'"run_type"\s*:\s*"(?:chain|llm|tool|retriever|prompt|parser|embedding|chat_model)"'
    r'|"(?:post|patch)"\s*:\s*\[\s*\{[\s\S]*"dotted_order"'
)
GROUPED = True
ID_PREFIX = "ls"
_ROLES = {"tool": "tool", "llm": "llm", "chat_model": "llm", "retriever": "retriever", "chain": "chain"}
_DOTTED = re.compile(r"(\d{8}T\d{6,}Z)([0-9a-fA-F-]{36})")
_THREAD_KEYS = ("thread_id", "session_id", "conversation_id")
#: ``extra.metadata.ls_integration`` of the runs langsmith-js posts for the AI SDK: ``vercel-ai-sdk`` (``wrapAISDK``,
#: js/src/experimental/vercel/wrap.ts) and ``vercel-ai-sdk-telemetry`` (AI SDK 7's ``LangSmithTelemetry``,
#: telemetry.ts). The rules below read those runs' own shapes; another integration's run of the same shape (a Python
#: function returning a model's tool-call message: the call is its answer) means something else.
_AI_SDK = "vercel-ai-sdk"
#: The outputs ``LangSmithTelemetry`` gives a step or tool run still open when the SDK's call ends (its stream
#: failed, e.g. retries spent, or was cut off): a placeholder, no output of the run's.
_UNFINISHED = ("vercel-ai-sdk-telemetry", {"note": "closed on finish"})
#: Node.info keys for the adapter's own use (all start with "_"), removed before a group is assembled.
_RUN, _SCORES = "_run", "_scores"


def _dotted(run: dict[str, Any]) -> list[tuple[str, str]]:
    """``dotted_order`` as ``[(time, run id), ...]`` from the root down to the run itself."""
    value = run.get("dotted_order")
    return _DOTTED.findall(value) if isinstance(value, str) else []


def _is_run(record: dict[str, Any]) -> bool:
    return ("run_type" in record and any(k in record for k in ("id", "run_id", "dotted_order")) and
            ("inputs" in record or "outputs" in record or "start_time" in record))


def _is_batch(record: dict[str, Any]) -> bool:
    lists = [record[k] for k in ("post", "patch") if k in record]
    return bool(lists) and all(isinstance(v, list) for v in lists) and any(
        isinstance(r, dict) and ("dotted_order" in r or "trace_id" in r or "run_type" in r) for v in lists for r in v[:5])


def _is_feedback(record: dict[str, Any]) -> bool:
    return "run_id" in record and "key" in record and "run_type" not in record and any(
        k in record for k in ("score", "value", "comment", "correction"))


def _is_download(record: dict[str, Any]) -> bool:
    """A run as the LangSmith UI downloads it: ``inputs``, ``outputs``, ``metadata`` and where it was traced
    (``langsmith: {organization, workspace, tracing_project}``), no id, run type or times."""
    where = record.get("langsmith")
    return isinstance(where, dict) and "tracing_project" in where and "inputs" in record and "outputs" in record \
        and "run_type" not in record


def _is_fetched_trace(record: dict[str, Any]) -> bool:
    """A trace as ``langsmith-fetch trace ID --include-metadata`` writes it: ``{"trace_id", "messages",
    "metadata", "feedback"}`` (``fetchers.fetch_trace_with_metadata``)."""
    return isinstance(record.get("trace_id"), str) and isinstance(record.get("messages"), list) \
        and isinstance(record.get("metadata"), dict) and "feedback" in record and "run_type" not in record


def _is_langchain_message(record: dict[str, Any]) -> bool:
    """A LangChain message as ``model_dump()`` gives it (``type: human|ai|tool|system``, ``content``, ...)."""
    return record.get("type") in ("human", "ai", "tool", "system") and "content" in record \
        and ("additional_kwargs" in record or "response_metadata" in record)


def not_a_run(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): langsmith-fetch's other files, which hold no run to read."""
    if not isinstance(record, dict):
        return None
    if isinstance(record.get("thread_id"), str) and isinstance(record.get("messages"), list) \
            and "metadata" in record and "feedback" in record:
        return ("a langsmith-fetch thread file: previews of the messages of every trace of a LangGraph thread, "
                "no run of its own; fetch its traces with 'langsmith-fetch trace ID --include-metadata' "
                "(or export their runs) to read them")
    if _is_langchain_message(record):
        return ("a bare list of LangChain messages (as 'langsmith-fetch trace ID' writes without "
                "--include-metadata): no trace id, times or status to read a run by; fetch the trace with "
                "'langsmith-fetch trace ID --include-metadata' to read it")
    return None


def _wrapped_run(record: dict[str, Any]) -> dict[str, Any] | None:
    """A run tree a tool saved under ``trace`` beside its own fields (``{"trace": {<run with child_runs>},
    "scenario_id": ...}``); not a Langfuse download, whose ``trace`` comes with ``observations``."""
    run = record.get("trace")
    return run if isinstance(run, dict) and _is_run(run) and "observations" not in record else None


def matches(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if _is_run(record) or _is_batch(record) or _is_feedback(record) or _is_download(record) \
            or _is_fetched_trace(record) or _wrapped_run(record):
        return True
    runs = record.get("runs")
    return isinstance(runs, list) and bool(runs) and isinstance(runs[0], dict) and _is_run(runs[0])


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): a dataset example (``Client.create_examples``, the examples
    export) holds a task and its reference outputs, no run."""
    if isinstance(record, dict) and "dataset_id" in record and "inputs" in record and not _is_run(record):
        return "a LangSmith dataset example (inputs and reference outputs), not a run"
    return None


# -- runs -> nodes -----------------------------------------------------------------------


def _completed(run: dict[str, Any]) -> dict[str, Any]:
    """A run with what ``dotted_order`` says filled in: id, parent, trace id, start time; and a run as the
    langsmith-trace skill exports it (``run_id``, ``custom_metadata``) with the API's ``id`` and ``extra.metadata``."""
    path = _dotted(run)
    out = dict(run)
    if not out.get("id") and out.get("run_id"):
        out["id"] = out["run_id"]
    if "extra" not in out and isinstance(out.get("custom_metadata"), dict):
        out["extra"] = {"metadata": out["custom_metadata"]}
    if not out.get("id") and path:
        out["id"] = path[-1][1]
    if not out.get("parent_run_id") and len(path) > 1:
        out["parent_run_id"] = path[-2][1]
    if not out.get("trace_id") and path:
        out["trace_id"] = path[0][1]
    if not out.get("start_time") and path:
        stamp = path[-1][0]  # 20241013T070537170001Z
        out["start_time"] = f"{stamp[:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[9:11]}:{stamp[11:13]}:{stamp[13:15]}." \
                            f"{stamp[15:-1]}+00:00"
    return out


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """A run's create and its update: the update's non-empty fields win; ``extra.metadata`` is merged."""
    out = dict(base)
    for key, value in update.items():
        if is_empty(value) or (key == "start_time" and not is_empty(out.get(key))):
            continue  # an update's start_time may be derived from its dotted order: the create's is exact
        if key == "extra" and isinstance(value, dict) and isinstance(out.get("extra"), dict):
            old, new = out["extra"].get("metadata"), value.get("metadata")
            meta = {**(old if isinstance(old, dict) else {}), **(new if isinstance(new, dict) else {})}
            out["extra"] = {**out["extra"], **value, "metadata": meta}
        else:
            out[key] = value
    return out


def _scores_of(run: dict[str, Any]) -> list[dict[str, Any]]:
    """``feedback_stats`` and a ``feedback`` list of a run, as scores about that run."""
    target = str(run.get("id")) if run.get("id") else None
    out = []
    stats = decode(run.get("feedback_stats"))
    for key, stat in (stats.items() if isinstance(stats, dict) else []):
        if isinstance(stat, dict):
            avg = stat.get("avg")
            values = stat.get("values") or {}
            label = next(iter(values)) if isinstance(values, dict) and len(values) == 1 else None
            number = float(avg) if isinstance(avg, (int, float)) and not isinstance(avg, bool) else None
            out.append(Score(str(key), number, label, None, None, target).to_json())
    for fb in as_list(run.get("feedback")):
        if isinstance(fb, dict) and (score := feedback_score(fb, target)) is not None:
            out.append(score.to_json())
    return out


def feedback_score(fb: dict[str, Any], target: str | None) -> Score | None:
    """A feedback ``{key, score (number or bool), value (a label), comment}`` as a ``Score``, None without a key.

    AG2's eval ``Feedback`` has this shape too (``ag2._feedback_scores``)."""
    if not fb.get("key"):
        return None
    score, value = fb.get("score"), fb.get("value")
    number = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else \
        (1.0 if score is True else 0.0 if score is False else None)
    source = fb.get("feedback_source")
    return Score(str(fb["key"]), number, value if isinstance(value, str) else None, fb.get("comment") or None,
                 (source.get("type") if isinstance(source, dict) else None), target)


def _tool_output(outputs: Any) -> tuple[Any, str | None, str | None]:
    """(result, call id, error) of a tool run's outputs; a LangChain ``ToolMessage`` gives all three."""
    out = outputs
    if isinstance(out, dict) and out and set(out) <= {"output", "outputs", "documents"}:  # JS wraps as "outputs"
        out = next(iter(out.values()))
    found = tool_message(decode(out))
    if found is None:
        return out, None, None
    content, call, failed = found
    content = decode(content)
    return content, call_id(call), text_of(content) if failed else None


def _ai_sdk_tool_call(inputs: Any) -> tuple[Any, str] | None:
    """(arguments, call id) of a Vercel AI SDK tool's ``execute`` as langsmith-js ``wrapAISDK`` traces it, else None.

    ``wrapAISDK`` wraps each tool's ``execute(input, options)`` in ``traceable``, which records a function called
    with more than one argument as ``{"args": [...]}`` (``traceable.ts`` ``runInputsToMap``). The AI SDK's second
    argument is its ``ToolExecutionOptions``: ``{toolCallId, messages, abortSignal?, experimental_context?}``, whose
    ``messages`` are the conversation so far, not the call's arguments. Only that shape: any other function traced
    with two arguments keeps its ``{"args": [...]}``."""
    listed = inputs.get("args") if isinstance(inputs, dict) and set(inputs) == {"args"} else None
    if not (isinstance(listed, list) and len(listed) == 2 and isinstance(listed[1], dict)):
        return None
    options = listed[1]
    ident = options.get("toolCallId")
    if not (isinstance(ident, str) and ident and isinstance(options.get("messages"), list)):
        return None
    return listed[0], ident


def _extra(run: dict[str, Any], key: str) -> dict[str, Any]:
    """``run.extra[key]`` (``metadata``, ``invocation_params``) as a dict, ``{}`` where a run has none or another type."""
    return as_dict(as_dict(run.get("extra")).get(key))


def _ends_in_calls(outputs: dict[str, Any]) -> bool:
    """Whether an AI SDK root's outputs, its last finished step, end in tool calls, whatever words came with them
    ("Let me check the weather."): then they are no answer, and a step that failed after it ended the run. The
    step's finish reason says so (``LangSmithTelemetry``'s ``finish_reason``, ``wrapAISDK``'s
    ``response_metadata.steps[-1].finishReason``, AI SDK 7's model-level ``{unified, raw}`` form too), else a
    ``tool-call`` part among ``wrapAISDK``'s step content (a ``streamText`` root keeps no steps)."""
    steps = outputs["response_metadata"].get("steps") if isinstance(outputs.get("response_metadata"), dict) else None
    last = steps[-1] if isinstance(steps, list) and steps and isinstance(steps[-1], dict) else {}
    reason = outputs.get("finish_reason") or last.get("finishReason")
    if isinstance(reason, dict):
        reason = reason.get("unified")
    content = outputs.get("content")
    return reason == "tool-calls" or reason is None and isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") == "tool-call" for part in content)


def _model(run: dict[str, Any], inputs: Any, outputs: Any) -> str | None:
    invocation, meta = _extra(run, "invocation_params"), _extra(run, "metadata")
    for value in (invocation.get("model"), invocation.get("model_name"),
                  inputs.get("model") if isinstance(inputs, dict) else None, meta.get("ls_model_name"),
                  outputs.get("model") if isinstance(outputs, dict) else None):
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _node(run: dict[str, Any], seq: int) -> Node:
    run = _completed(run)
    if not run.get("id"):
        raise RecordError("LangSmith run without 'id' or 'run_id' (and no 'dotted_order' to take it from)")
    role = _ROLES.get(str(run.get("run_type") or "").lower(), "other")
    inputs, outputs = decode(run.get("inputs")), decode(run.get("outputs"))
    meta = _extra(run, "metadata")
    integration = str(meta.get("ls_integration") or "")
    if (integration, outputs) == _UNFINISHED:
        outputs = None
    # the OpenAI Agents SDK integration posts its span error (``{"message", "data"}``) as ``str(dict)``
    error = error_text(decode(run.get("error"), literal=True))
    node = Node(
        id=str(run["id"]), parent=str(run["parent_run_id"]) if run.get("parent_run_id") else None,
        role=role, name=str(run.get("name") or role), seq=seq,
        start=iso_seconds(run.get("start_time")), end=iso_seconds(run.get("end_time")),
        error=(decisive_line(error) or error.strip()[:600]) if isinstance(error, str) and error.strip() else None,
        input_text=None if is_empty(inputs) else text_of(inputs),
        output_text=None if is_empty(outputs) else text_of(outputs),
        info={_SCORES: _scores_of(run)} if run.get("feedback_stats") or run.get("feedback") else {},
    )
    if role in ("tool", "retriever"):
        node.tool = node.name
        args = inputs
        if isinstance(inputs, dict) and len(inputs) == 1 and set(inputs) <= {"input", "tool_input"}:
            args = decode(next(iter(inputs.values())), literal=True)  # LangChain records str(kwargs) as "input"
        sdk_call = _ai_sdk_tool_call(inputs)
        if sdk_call is not None:
            args = sdk_call[0]
        node.arguments = args
        result, result_call, result_error = _tool_output(outputs)
        failed = bool(node.error or result_error)
        node.result = None if failed and result in ({}, None) else result_text(result)  # a raise leaves outputs {}
        node.call_id = call_id(meta.get("tool_call_id") or (sdk_call[1] if sdk_call else None) or result_call)
        if result_error and not node.error:
            node.error = result_error
    elif role == "llm":
        node.input_messages = message_dicts(inputs)
        if isinstance(outputs, dict) and set(outputs) == {"output"}:
            outputs = outputs["output"]  # a @traceable model function's return value
        node.output_messages = output_dicts(outputs)
        if not node.output_messages and says_nothing(outputs):
            node.output_text = None  # a failed call's empty generations are no reply
        node.model = _model(run, inputs, outputs)
    elif role == "chain" and integration.startswith(_AI_SDK) and isinstance(outputs, dict) \
            and outputs.get("role") == "assistant" and (_ends_in_calls(outputs) or not any(
                m.get("text") for m in output_dicts(outputs) if m.get("role") == "assistant")):
        # langsmith-js's AI SDK root (``wrapAISDK``, ``LangSmithTelemetry``) holds its last finished step: where
        # that asked for tools it is no answer; a step that failed after it (a stream's provider error) ended the run
        node.output_text = None
    if not run.get("parent_run_id"):
        node.info.update({k: v for k, v in {
            "task_id": str(run["reference_example_id"]) if run.get("reference_example_id") else None,
            "tags": run.get("tags") or None,
            "project": run.get("session_name") or run.get("session_id"),
            "conversation_id": next((str(meta[k]) for k in _THREAD_KEYS if meta.get(k)), None),
            "run_metadata": {k: v for k, v in meta.items()
                             if isinstance(v, (str, int, float, bool)) and not k.startswith("ls_")} or None,
        }.items() if v})
    return node


#: The file name the UI gives a run download: ``run-<run id>.json``.
_DOWNLOAD_NAME = re.compile(r"^run-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\b")


def _download_id(record: dict[str, Any], source: Path) -> str:
    """A UI run download's id. The download keeps no id field: the ``run-<uuid>`` the UI named the file after,
    else a hash of its content (the same content, the same run, whatever the file is called). Not the ``run_id``
    of its metadata: LangGraph Platform writes its root run's there, and LangChain hands metadata to every
    sub-call, so a node's download would take its root's id and the two would be one run (review 3, N1); nor a
    ``thread_id``, shared by every run of its thread."""
    named = _DOWNLOAD_NAME.match(source.name)
    return named.group(1).lower() if named else \
        "sha1-" + hashlib.sha1(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _downloaded_run(record: dict[str, Any], source: Path) -> Node:
    """A UI run download as one agent node whose messages are the run (``outputs.messages``: the model's turns,
    tool calls and their ``ToolMessage`` replies, handoffs), read as the turns an agent span records; outputs
    holding no messages (a chain's ``{"output": ...}``) give the run's answer as a graph's output does (see
    ``_vendor.answer_in``), else nothing."""
    key = _download_id(record, source)
    where = record["langsmith"]
    project = where.get("tracing_project") if isinstance(where.get("tracing_project"), dict) else {}
    return _conversation_node({"id": key, "run_type": "chain", "name": project.get("name") or "run",
                               "inputs": record["inputs"], "outputs": record["outputs"],
                               "session_name": project.get("name"), "extra": {"metadata": record.get("metadata")}})


def _fetched_run(record: dict[str, Any]) -> Node:
    """A ``langsmith-fetch`` trace (``_is_fetched_trace``) as one agent node: its ``messages`` are the root run's
    ``outputs.messages``, read as a UI download's are, from the trace's own turn on (:func:`_this_turn`); the
    task is that turn's user message; times, ``status``, thread and model metadata (``custom_metadata``: the
    run's ``extra.metadata``) and feedback come from ``metadata``. A failed run's error is not in the file:
    only its status says it failed."""
    meta = record["metadata"]
    custom = meta.get("custom_metadata") if isinstance(meta.get("custom_metadata"), dict) else {}
    feedback = [fb for fb in as_list(record.get("feedback")) if isinstance(fb, dict)]
    failed = str(meta.get("status") or "").lower() == "error"
    turn = _this_turn(record["messages"])
    asked = [m for m in turn if _is_human(m)][:1]
    return _conversation_node({
        "id": record["trace_id"], "run_type": "chain", "name": "trace", "inputs": {"messages": asked},
        "outputs": {"messages": turn}, "start_time": meta.get("start_time"),
        "end_time": meta.get("end_time"), "extra": {"metadata": custom},
        "error": "LangSmith status: error (langsmith-fetch keeps no error message)" if failed else None,
        "feedback": feedback, "feedback_stats": None if feedback else meta.get("feedback_stats")})


def _is_human(message: Any) -> bool:
    return isinstance(message, dict) and message.get("type") == "human"


def _this_turn(messages: list[Any]) -> list[Any]:
    """The raw messages of a trace's own turn (``_vendor.this_turn``, the rule Langfuse's lone traces share)."""
    return this_turn(messages, _is_human)


def _conversation_node(run: dict[str, Any]) -> Node:
    """A run whose ``outputs`` hold its messages (a LangGraph agent's state) as one agent node whose turns are
    those messages (tool calls, their ``ToolMessage`` replies, handoffs); outputs holding no messages (a chain's
    ``{"output": ...}``) give the run's answer as a graph's output does (see ``_vendor.answer_in``)."""
    node = _node(run, 0)
    conversation = message_dicts(decode(run["outputs"]))
    if not conversation and (answer := answer_in(run["outputs"])):
        conversation = [asdict(Message("assistant", answer))]
    node.role, node.input_messages = "agent", conversation
    node.output_messages = [m for m in conversation if m["role"] == "assistant"]
    node.model = _said_by_model(run["outputs"])
    return node


def _said_by_model(outputs: Any) -> str | None:
    """The model the run's first model turn names (a LangChain AIMessage's ``response_metadata.model_name``)."""
    listed = outputs.get("messages") if isinstance(outputs, dict) else None
    for message in listed if isinstance(listed, list) else []:
        meta = message.get("response_metadata") if isinstance(message, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("model_name"), str) and meta["model_name"].strip():
            return meta["model_name"].strip()
    return None


def _trace_id(run: dict[str, Any], inherited: str | None) -> str:
    if run.get("trace_id"):
        return str(run["trace_id"])
    if inherited:
        return inherited
    path = _dotted(run)
    if path:
        return path[0][1]
    return str(run.get("parent_run_id") or run["id"])


def _tree(record: dict[str, Any], seq: int, raw: bool) -> Iterator[tuple[str, Node, str | None]]:
    """A run and the runs nested in its ``child_runs``, depth first."""
    stack: list[tuple[dict[str, Any], str | None]] = [(_completed(record), None)]
    n = seq
    while stack:
        run, inherited = stack.pop()
        if not run.get("id"):
            raise RecordError("LangSmith run without 'id' or 'run_id' (and no 'dotted_order' to take it from)")
        trace = _trace_id(run, inherited)
        node = _node(run, n)
        if raw:  # a create or update: another record may complete it
            node.info[_RUN] = {k: v for k, v in run.items() if k != "child_runs"}
        n += 1
        yield trace, node, node.info.get("conversation_id")
        for child in reversed(as_list(run.get("child_runs"))):
            if isinstance(child, dict):
                stack.append((_completed(dict(child, parent_run_id=child.get("parent_run_id") or run["id"])), trace))


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    if not isinstance(record, dict):
        raise RecordError(f"expected a LangSmith run, ingest payload or feedback object, got {type(record).__name__}")
    n = seq
    if _is_batch(record):
        runs: dict[str, dict[str, Any]] = {}
        order: list[str] = []
        for op in ("post", "patch"):
            for raw in as_list(record.get(op)):
                if not isinstance(raw, dict):
                    raise RecordError(f"LangSmith ingest payload: a '{op}' entry is {type(raw).__name__}, not a run")
                run = _completed(raw)
                if not run.get("id"):
                    raise RecordError(f"LangSmith ingest payload: a '{op}' run without 'id' or 'dotted_order'")
                key = str(run["id"])
                if key not in runs:
                    order.append(key)
                runs[key] = _merge(runs[key], run) if key in runs else run
        for key in order:
            for item in _tree(runs[key], n, raw=True):
                n = max(n, item[1].seq) + 1
                yield item
        return
    if _is_download(record):
        node = _downloaded_run(record, ctx.source)
        yield node.id, node, node.info.get("conversation_id")
        return
    if _is_fetched_trace(record):
        node = _fetched_run(record)
        yield node.id, node, node.info.get("conversation_id")
        return
    if why := not_a_run(record):
        raise RecordError(f"not a LangSmith run: {why}")
    if _is_feedback(record):
        score = feedback_score(record, str(record["run_id"]))
        if score is not None:
            trace = str(record.get("trace_id") or record["run_id"])
            yield trace, Node(id=f"feedback:{record.get('id') or n}", parent=str(record["run_id"]), role="evaluator",
                              name=score.name, seq=n, info={_SCORES: [score.to_json()]}), None
        return
    runs_list = record.get("runs") if isinstance(record.get("runs"), list) and not _is_run(record) else \
        [_wrapped_run(record) or record]
    for run in runs_list:
        if not isinstance(run, dict):
            raise RecordError(f"expected a LangSmith run object, got {type(run).__name__}")
        for item in _tree(run, n, raw=True):
            n = max(n, item[1].seq) + 1
            yield item


# -- grouped nodes -> a trajectory -------------------------------------------------------


def _merged(group: list[Node]) -> list[Node]:
    """A run created in one payload and completed in another: one node from the merged run."""
    return one_node_per_id(group, _merged_run)


def _merged_run(versions: list[Node]) -> Node:
    """One node from the versions' runs merged (:func:`_merge`), creates first, each in seq order, so an update's
    outputs, end time and error win however the ops were written; the latest if a run is missing."""
    raws = [v.info.get(_RUN) for v in versions]
    if not all(isinstance(r, dict) for r in raws):
        return max(versions, key=lambda v: v.seq)
    raws = [r for _, r in sorted(zip(versions, raws), key=lambda vr: ("run_type" not in vr[1], vr[0].seq))]
    run: dict[str, Any] = {}
    for raw in raws:
        run = _merge(run, raw)
    return _node(run, min(v.seq for v in versions))


def trajectory_id(key: str, by: str = "trace") -> str:
    return _span_trajectory_id(ID_PREFIX, key, by)


def _lone_roots(group: list[Node]) -> list[Node]:
    """Each root chain run without a child of its own, read as its conversation: ``client.list_runs(is_root=True)``,
    the usual way to list a project's traces, gives each trace's root run and none of its children, and a LangGraph
    agent's root holds the whole agent turn in ``outputs.messages`` (the model's tool calls, their
    ``ToolMessage`` replies, the answer), a chain's its ``{"output": ...}``. Read as a chain with no child, it was a
    run of no step; grouped by conversation, a thread's listed roots were all such runs. Only this trace's turn of a
    thread's state (:func:`_this_turn`); a root whose outputs say nothing is left as it is."""
    parents = {n.parent for n in group if n.role != "evaluator"}
    return [_as_conversation(n) if n.parent is None and n.role == "chain" and n.id not in parents else n
            for n in group]


def _as_conversation(lone: Node) -> Node:
    """A childless root run as the turn its outputs hold (see :func:`_lone_roots`), else as it is."""
    raw = lone.info.get(_RUN)
    outputs = decode(raw.get("outputs")) if isinstance(raw, dict) else None
    if not isinstance(outputs, dict):
        return lone
    if isinstance(outputs.get("messages"), list):
        outputs = dict(outputs, messages=_this_turn(outputs["messages"]))
    node = _conversation_node(dict(raw, outputs=outputs))
    if not node.input_messages:
        return lone
    node.seq = lone.seq
    return node


def assemble_trajectory(key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
    group = _lone_roots(_merged(group))
    raw_scores = [(n, s) for n in group for s in n.info.get(_SCORES) or []]
    for n in group:
        for k in [k for k in n.info if k.startswith("_")]:
            del n.info[k]
    group = [n for n in group if n.role != "evaluator"]
    if not group:
        raise RecordError(f"trace {key}: only feedback, none of its runs")
    roots = trace_roots(group, "run")
    root = roots[0]
    root_ids = {n.id for n in roots if n.parent is None} or {root.id}
    scores = [Score(**dict(s, target=None if s.get("target") in root_ids or s.get("target") is None else s["target"]))
              for _n, s in raw_scores]
    task = run_task(group, root, "run")
    return trajectory(NAME, ID_PREFIX, key, group, ctx, by=by, task=task, scores=scores,
                      task_id=root.info.get("task_id"))
