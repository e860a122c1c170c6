"""Export matching runs as a few-shot or fine-tuning dataset, one record per run, each pointing back to its run.

:func:`export_runs` ranks runs exactly as ``search`` does (the same filters,
mode and grouping: one hit per run; ``outcome="success"`` by default), reads each
run's trace and writes it in one of three formats:

``openai-chat``
    OpenAI's fine-tuning chat format, one JSON object per line (the API reference's
    ``FineTuneChatRequestInput``; the fine-tuning guide's tool-calling examples)::

        {"messages": [...], "tools": [...], "parallel_tool_calls": false}

    ``messages``: an optional ``system`` message (``system=``), the task as the
    ``user`` message, then per step an ``assistant`` message whose ``tool_calls`` hold
    ``{"id", "type": "function", "function": {"name", "arguments": <JSON string>}}``
    (its ``content`` the step's thought, or null) followed by a ``tool`` message with
    that ``tool_call_id`` and the observation (and error) as ``content``. tau-bench's
    ``respond`` action (the agent talking to the user) becomes a plain ``assistant``
    message and the user's reply a ``user`` message. ``tools``: a function definition
    per tool the run called, its ``parameters`` a JSON Schema inferred from the
    arguments seen (the dumps carry no tool schemas). The schema is written down in
    :data:`OPENAI_CHAT_SCHEMA` and checked by :func:`validate_openai_chat`.
``sharegpt``
    ``{"conversations": [{"from": ..., "value": ...}], "system": ..., "tools": ...}`` as
    LLaMA-Factory reads it (``formatting: sharegpt``, its default tags; axolotl reads
    the same field names): ``human`` / ``observation`` turns at odd positions,
    ``gpt`` / ``function_call`` at even ones, an even count (consecutive turns of one
    side are joined, a trailing observation dropped); a tool call is a
    ``function_call`` turn holding ``{"name", "arguments"}`` as JSON and its result an
    ``observation``; ``tools`` is the function list as a JSON string. Checked by
    :func:`validate_sharegpt`.
``jsonl``
    Our own trajectory JSON (``schemas/trajectory.schema.json``), one per line: it
    ingests again as ``native``.

Provenance: every record carries ``{"trajectory_id", "trace_uri", "similarity",
"rank", "outcome", "env_version", "query"}``: under ``metadata.trajsearch`` in
``jsonl`` (a trajectory's own metadata, so the line stays a valid trajectory) and
under a top-level ``metadata`` key in the chat formats. OpenAI's upload accepts only
``messages``, ``tools``, ``parallel_tool_calls`` (and the deprecated ``functions``);
``provenance="sidecar"`` writes the chat records without it and the provenance, line
for line, to a second stream (``--out FILE`` -> ``FILE.provenance.jsonl``).

``max_tokens``: each record is compressed as the agent runtime compresses a run for
its prompt (:mod:`trajsearch.runtime.format`): all steps if they fit; else the
run's decision points (each read once, only the last attempt of a retry); else the
runtime's detail levels (at most 8, then 4 decision points kept by priority: the
end, writes, errors and tests, the rest; arguments, outputs, thoughts and the task
cut to head and tail; the runtime's third level keeps no steps, which teaches
nothing, so it is not used); a run that fits at none is left out and counted. Tokens are counted
with the runtime's counter (all-MiniLM-L6-v2's WordPiece) on the record's text
(message contents, tool names and arguments), not on the JSON punctuation.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

from .model import Step, Trajectory
from .represent import clip

FORMATS = ("openai-chat", "sharegpt", "jsonl")
PROVENANCE = ("inline", "sidecar")
MAX_RUNS = 10_000
#: Runs asked for per search call (a server's default ``max_k`` is 100).
PAGE = 100
RESPOND = "respond"  # tau-bench's action for the agent talking to the user


@dataclass
class ExportRecord:
    """One exported run: the record as written, and where it came from."""

    record: dict[str, Any]
    provenance: dict[str, Any]
    tokens: int | None = None  # counted when ``max_tokens`` was given
    compression: str = "none"  # none | decision_points | full | half


@dataclass
class Export:
    """A streaming export: iterate it for records; counts fill in as it goes.

    ``found`` is known once the search has run (before the first record), so a
    progress bar can use it as its total.
    """

    records: Iterator[ExportRecord]
    found: int = 0
    written: int = 0
    too_long: int = 0  # left out: over max_tokens at every compression level
    missing_trace: int = 0  # left out: the trace could not be read
    skipped: list[str] = field(default_factory=list)
    stopped: str = ""  # why fewer than k runs were asked for although more may match (a server's bounds)

    def __iter__(self) -> Iterator[ExportRecord]:
        return self.records


def export_runs(
    ts: Any,
    query: str,
    *,
    tenant: str | None,
    fmt: str = "openai-chat",
    k: int = 100,
    outcome: str | Sequence[str] = "success",
    levels: str | Sequence[str] = (),
    env_version: str | Sequence[str] = (),
    policy_version: str | Sequence[str] = (),
    task_family: str | Sequence[str] = (),
    tools: str | Sequence[str] = (),
    mode: str = "auto",
    max_tokens: int | None = None,
    system: str | None = None,
) -> Export:
    """The ``k`` runs ranked best for ``query`` inside the filters, as a stream of ``fmt`` records.

    ``ts`` is the façade or a service client (only ``search`` and ``get_trace`` are
    used). Runs are asked for ``PAGE`` at a time, excluding the runs already found,
    so an export can exceed one search's ``k``.
    """
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {list(FORMATS)}, got {fmt!r}")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_RUNS:
        raise ValueError(f"k must be a whole number from 1 to {MAX_RUNS}, got {k!r}")
    if max_tokens is not None and (isinstance(max_tokens, bool) or not isinstance(max_tokens, int)
                                   or max_tokens < 16):
        raise ValueError(f"max_tokens must be a whole number >= 16, got {max_tokens!r}")
    filters = dict(levels=levels, outcome=outcome, env_version=env_version, policy_version=policy_version,
                   task_family=task_family, tools=tools, mode=mode)
    hits: list[Any] = []
    stopped = ""
    while len(hits) < k:
        want = min(PAGE, k - len(hits))
        try:
            page = ts.search(query, tenant=tenant, k=want, exclude_trajectory_ids=[h.trajectory_id for h in hits],
                             **filters)
        except ValueError as exc:
            if not hits:
                raise
            # a server bounds how many runs a request may exclude (its max_values): the first pages stand
            stopped = f"stopped after {len(hits)} runs: the next page was refused ({exc})"
            break
        hits.extend(page)
        if len(page) < want:
            break
    export = Export(records=iter(()), found=len(hits), stopped=stopped)
    export.records = _records(ts, tenant, hits, query, fmt, max_tokens, system, export)
    return export


def _records(ts: Any, tenant: str | None, hits: list[Any], query: str, fmt: str, max_tokens: int | None,
             system: str | None, export: Export) -> Iterator[ExportRecord]:
    counter = None
    if max_tokens is not None:
        from .runtime.format import default_counter

        counter = default_counter()
    for rank, hit in enumerate(hits, 1):
        try:
            run = ts.get_trace(hit.trace_uri, tenant=tenant)
        except (LookupError, PermissionError, ValueError, OSError, ConnectionError) as exc:
            export.missing_trace += 1
            export.skipped.append(f"{hit.trajectory_id}: trace not readable ({type(exc).__name__})")
            continue
        provenance = {
            "trajectory_id": hit.trajectory_id, "trace_uri": hit.trace_uri,
            "similarity": round(float(hit.similarity if hit.similarity is not None else hit.score), 6),
            "rank": rank, "outcome": hit.outcome, "env_version": hit.env_version or None, "query": query,
        }
        made = _fit(run, fmt, system, provenance, max_tokens, counter)
        if made is None:
            export.too_long += 1
            export.skipped.append(f"{hit.trajectory_id}: over {max_tokens} tokens at every compression level")
            continue
        export.written += 1
        yield made


def _fit(run: Trajectory, fmt: str, system: str | None, provenance: dict[str, Any], max_tokens: int | None,
         counter: Any) -> ExportRecord | None:
    """The record at the richest compression level within ``max_tokens`` (None: none fits)."""
    for level, variant in _variants(run, max_tokens is not None):
        if run.steps and not variant.steps:
            continue  # a run cut down to its task teaches nothing (the runtime's "bare" level)
        record = to_record(variant, fmt, system=system, provenance=provenance)
        if counter is None:
            return ExportRecord(record, provenance, compression=level)
        tokens = counter.count(record_text(record, fmt))
        if tokens <= max_tokens:
            return ExportRecord(record, provenance, tokens=tokens, compression=level)
    return None


def _variants(run: Trajectory, compress: bool) -> Iterator[tuple[str, Trajectory]]:
    """The run as is, then ever more compressed as the runtime compresses runs for a prompt."""
    yield "none", run
    if not compress:
        return
    from .digest import observation_text, priority
    from .runtime.format import FormatConfig, _levels
    from .steps import decision_points

    points = decision_points(run.steps)
    if len(points) < len(run.steps):
        yield "decision_points", run.model_copy(update={"steps": points})
    for name, detail in zip(("full", "half", "bare"), _levels(FormatConfig())):
        ranked = sorted(range(len(points)), key=lambda i: (-priority(points[i], i == len(points) - 1), -i))
        kept = [points[i] for i in sorted(ranked[: detail.actions])]
        steps = [
            step.model_copy(update={
                "thought": clip(step.thought, detail.note // 2, detail.note // 2) if step.thought else None,
                "arguments": _clip_arguments(step.arguments, detail.argument),
                "observation": clip(observation_text(step.observation), detail.observation // 3, detail.observation * 2 // 3)
                if step.observation else None,
                "error": clip(step.error, detail.observation // 3, detail.observation * 2 // 3) if step.error else None,
            })
            for step in kept
        ]
        yield name, run.model_copy(update={"task": clip(run.task, detail.goal // 2, detail.goal // 2),
                                           "steps": steps})


def _clip_arguments(arguments: Any, chars: int) -> Any:
    """Long string values cut to head and tail; the arguments stay JSON of the same shape."""
    if isinstance(arguments, str):
        return clip(arguments, chars // 2, chars // 2)
    if isinstance(arguments, dict):
        return {k: _clip_arguments(v, chars) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [_clip_arguments(v, chars) for v in arguments]
    return arguments


# -- formats -----------------------------------------------------------------------------


def to_record(run: Trajectory, fmt: str, *, system: str | None = None,
              provenance: dict[str, Any] | None = None) -> dict[str, Any]:
    """One run as a record of ``fmt`` (provenance inline when given)."""
    if fmt == "jsonl":
        data = run.model_dump(mode="json")
        if provenance is not None:
            data["metadata"] = {**data.get("metadata", {}), "trajsearch": provenance}
        return data
    turns = _turns(run)
    record = _openai_chat(run, turns, system) if fmt == "openai-chat" else _sharegpt(turns, system)
    if provenance is not None:
        record["metadata"] = provenance
    return record


@dataclass
class _Turn:
    kind: str  # user | assistant | call | result
    text: str = ""
    name: str = ""
    arguments: Any = None
    call_id: str = ""


def _turns(run: Trajectory) -> list[_Turn]:
    """The run as a neutral conversation: the task, then per step what the agent did and got back."""
    turns = [_Turn("user", run.task)]
    for n, step in enumerate(run.steps):
        if not step.action:
            if step.thought:
                turns.append(_Turn("assistant", step.thought))
            if step.observation or step.error:
                turns.append(_Turn("user", _result_text(step)))
            continue
        if step.action == RESPOND and isinstance(step.arguments, dict) and isinstance(
                step.arguments.get("content"), str):
            turns.append(_Turn("assistant", step.arguments["content"]))
            if step.observation or step.error:
                turns.append(_Turn("user", _result_text(step)))
            continue
        call_id = f"call_{n}"
        turns.append(_Turn("call", step.thought or "", name=tool_name(step.action),
                           arguments=_arguments(step.arguments), call_id=call_id))
        turns.append(_Turn("result", _result_text(step), call_id=call_id))
    return turns


_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]")


def tool_name(action: str) -> str:
    """A recorded action as a function name OpenAI accepts (``^[A-Za-z0-9_-]{1,64}$``): other
    characters become ``_`` (``functions.bash`` -> ``functions_bash``), at most 64 of them."""
    return _NOT_NAME.sub("_", action)[:64] or "tool"


def _arguments(arguments: Any) -> dict[str, Any]:
    """Function arguments are a JSON object; anything else is wrapped as ``{"input": ...}``."""
    if isinstance(arguments, dict):
        return arguments
    return {} if arguments is None else {"input": arguments}


def _result_text(step: Step) -> str:
    parts = [step.observation or ""]
    if step.error and step.error not in parts[0]:
        parts.append(f"error: {step.error}")
    return "\n".join(p for p in parts if p)


def _openai_chat(run: Trajectory, turns: list[_Turn], system: str | None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for turn in turns:
        if turn.kind in ("user", "assistant"):
            messages.append({"role": turn.kind, "content": turn.text})
        elif turn.kind == "call":
            messages.append({
                "role": "assistant", "content": turn.text or None,
                "tool_calls": [{"id": turn.call_id, "type": "function", "function": {
                    "name": turn.name, "arguments": json.dumps(turn.arguments, ensure_ascii=False)}}],
            })
        else:
            messages.append({"role": "tool", "tool_call_id": turn.call_id, "content": turn.text})
    record: dict[str, Any] = {"messages": messages}
    functions = tool_schemas(turns)
    if functions:
        record["tools"] = [{"type": "function", "function": f} for f in functions]
        record["parallel_tool_calls"] = False  # one call per assistant turn, as the runs made them
    return record


_HUMAN_SIDE = ("human", "observation")


def _sharegpt(turns: list[_Turn], system: str | None) -> dict[str, Any]:
    conversation: list[dict[str, str]] = []
    for turn in turns:
        if turn.kind == "call":
            item = {"from": "function_call",
                    "value": json.dumps({"name": turn.name, "arguments": turn.arguments}, ensure_ascii=False)}
        else:
            item = {"from": {"user": "human", "assistant": "gpt", "result": "observation"}[turn.kind],
                    "value": turn.text}
        last = conversation[-1] if conversation else None
        if last is None or (last["from"] in _HUMAN_SIDE) != (item["from"] in _HUMAN_SIDE):
            conversation.append(item)  # the sides alternate: as it should be
        elif item["from"] == "function_call":
            conversation[-1] = item  # words and then a call in one model turn: the call is the turn
        elif last["from"] != "function_call":
            last["value"] = f"{last['value']}\n\n{item['value']}".strip()  # one side twice in a row: one turn
        # (a reply right after a call, with no result between, cannot happen: every call has its result)
    if conversation and conversation[-1]["from"] in _HUMAN_SIDE:
        conversation.pop()  # the final tool result or user reply has no answer to learn from
    record: dict[str, Any] = {"conversations": conversation}
    if system:
        record["system"] = system
    functions = tool_schemas(turns)
    if functions:
        record["tools"] = json.dumps(functions, ensure_ascii=False)
    return record


_JSON_TYPES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def tool_schemas(turns: list[_Turn]) -> list[dict[str, Any]]:
    """A function definition per tool called, its parameters inferred from the arguments seen."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for turn in turns:
        if turn.kind == "call":
            seen.setdefault(turn.name, []).append(turn.arguments)
    out = []
    for name, calls in seen.items():
        properties: dict[str, Any] = {}
        for arguments in calls:
            for key, value in arguments.items():
                kind = next((t for cls, t in _JSON_TYPES if isinstance(value, cls)), None)
                known = properties.setdefault(key, {"type": kind} if kind else {})
                if kind and known.get("type") not in (None, kind):
                    known.pop("type")  # seen with two types: leave it open
        required = [key for key in properties if all(key in arguments for arguments in calls)]
        out.append({"name": name, "description": f"The {name} tool, as the recorded runs called it.",
                    "parameters": {"type": "object", "properties": properties, "required": required}})
    return out


def record_text(record: dict[str, Any], fmt: str) -> str:
    """What of a record a model reads: message contents, tool names and arguments (for counting tokens)."""
    if fmt == "jsonl":
        lines = [record.get("task", "")]
        for step in record.get("steps", []):
            lines += [step.get("thought") or "", step.get("action") or "",
                      json.dumps(step.get("arguments"), ensure_ascii=False) if step.get("arguments") is not None
                      else "", step.get("observation") or "", step.get("error") or ""]
        return "\n".join(line for line in lines if line)
    if fmt == "sharegpt":
        return "\n".join([record.get("system", ""), *(t["value"] for t in record["conversations"])]).strip()
    lines = []
    for message in record["messages"]:
        lines.append(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            lines.append(f"{call['function']['name']} {call['function']['arguments']}")
    return "\n".join(line for line in lines if line)


# -- the formats' schemas ----------------------------------------------------------------

#: OpenAI's fine-tuning chat example (API reference: ``FineTuneChatRequestInput``; fine-tuning guide,
#: "function calling" examples), as a JSON Schema: only these top-level keys, these roles, tool calls
#: of type ``function`` whose ``arguments`` is a string; assistant ``weight`` 0 or 1.
OPENAI_CHAT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["messages"],
    "additionalProperties": False,
    "properties": {
        "messages": {"type": "array", "minItems": 1, "items": {"oneOf": [
            {"type": "object", "additionalProperties": False, "required": ["role", "content"],
             "properties": {"role": {"enum": ["system", "developer"]}, "content": {"type": "string"},
                            "name": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["role", "content"],
             "properties": {"role": {"const": "user"}, "content": {"type": "string"}, "name": {"type": "string"}}},
            {"type": "object", "additionalProperties": False, "required": ["role"],
             "anyOf": [{"required": ["content"], "properties": {"content": {"type": "string"}}},
                       {"required": ["tool_calls"]}],
             "properties": {
                 "role": {"const": "assistant"}, "content": {"type": ["string", "null"]},
                 "name": {"type": "string"}, "weight": {"enum": [0, 1]},
                 "tool_calls": {"type": "array", "minItems": 1, "items": {
                     "type": "object", "additionalProperties": False, "required": ["id", "type", "function"],
                     "properties": {
                         "id": {"type": "string"}, "type": {"const": "function"},
                         "function": {"type": "object", "additionalProperties": False,
                                      "required": ["name", "arguments"],
                                      "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}}},
                     }}},
             }},
            {"type": "object", "additionalProperties": False, "required": ["role", "content", "tool_call_id"],
             "properties": {"role": {"const": "tool"}, "content": {"type": "string"},
                            "tool_call_id": {"type": "string"}}},
        ]}},
        "tools": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["type", "function"],
            "properties": {"type": {"const": "function"}, "function": {
                "type": "object", "required": ["name"],
                "properties": {"name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"},
                               "description": {"type": "string"}, "parameters": {"type": "object"},
                               "strict": {"type": "boolean"}}}}}},
        "parallel_tool_calls": {"type": "boolean"},
        "functions": {"type": "array"},
    },
}


def validate_openai_chat(record: dict[str, Any], *, allow_metadata: bool = True) -> list[str]:
    """What is wrong with one openai-chat record (empty: nothing).

    The schema's shape checks plus what a schema cannot say: at least one assistant
    message; every ``tool`` message answers a tool call id of an earlier assistant
    message; ``arguments`` parse as a JSON object; tool names match ``tools``.
    ``allow_metadata`` accepts our inline provenance key.
    """
    problems = []
    data = dict(record)
    if allow_metadata:
        data.pop("metadata", None)
    problems += _schema_errors(data, OPENAI_CHAT_SCHEMA)
    if problems:
        return problems
    messages = data["messages"]
    if not any(m["role"] == "assistant" for m in messages):
        problems.append("messages: no assistant message to learn from")
    open_calls: set[str] = set()
    names = {t["function"]["name"] for t in data.get("tools", [])}
    for n, message in enumerate(messages):
        for call in message.get("tool_calls") or []:
            open_calls.add(call["id"])
            try:
                if not isinstance(json.loads(call["function"]["arguments"]), dict):
                    problems.append(f"messages[{n}]: arguments of {call['id']} are not a JSON object")
            except ValueError:
                problems.append(f"messages[{n}]: arguments of {call['id']} are not JSON")
            if names and call["function"]["name"] not in names:
                problems.append(f"messages[{n}]: tool {call['function']['name']!r} is not in tools")
        if message["role"] == "tool" and message["tool_call_id"] not in open_calls:
            problems.append(f"messages[{n}]: tool message answers no earlier tool call ({message['tool_call_id']})")
    return problems


def validate_sharegpt(record: dict[str, Any]) -> list[str]:
    """What is wrong with one sharegpt record as LLaMA-Factory's converter reads it (empty: nothing).

    ``conversations`` of ``{"from", "value"}`` strings; after an optional leading
    ``system`` turn, ``human``/``observation`` at odd positions and
    ``gpt``/``function_call`` at even ones, an even count; ``function_call`` values
    are JSON ``{"name", "arguments"}``; ``tools`` (if any) a JSON string of a list.
    """
    problems = []
    turns = record.get("conversations")
    if not isinstance(turns, list) or not turns:
        return ["conversations: missing or empty"]
    if turns[0].get("from") == "system":
        turns = turns[1:]
    for n, turn in enumerate(turns):
        if set(turn) != {"from", "value"} or not isinstance(turn.get("value"), str):
            problems.append(f"conversations[{n}]: expected {{'from', 'value'}} with a string value")
            continue
        allowed = ("human", "observation") if n % 2 == 0 else ("gpt", "function_call")
        if turn["from"] not in allowed:
            problems.append(f"conversations[{n}]: {turn['from']!r} where {' or '.join(allowed)} must be")
        if turn["from"] == "function_call":
            try:
                call = json.loads(turn["value"])
                if not isinstance(call, dict) or set(call) != {"name", "arguments"}:
                    problems.append(f"conversations[{n}]: a function_call is JSON {{'name', 'arguments'}}")
            except ValueError:
                problems.append(f"conversations[{n}]: function_call value is not JSON")
    if len(turns) % 2:
        problems.append("conversations: an odd number of turns (the last must be gpt or function_call)")
    if "tools" in record:
        try:
            if not isinstance(json.loads(record["tools"]), list):
                problems.append("tools: not a JSON list")
        except (TypeError, ValueError):
            problems.append("tools: not a JSON string")
    if "system" in record and not isinstance(record["system"], str):
        problems.append("system: not a string")
    return problems


def _schema_errors(data: Any, schema: dict[str, Any]) -> list[str]:
    try:
        import jsonschema
    except ImportError:  # pragma: no cover - jsonschema ships with the test extras
        return []
    validator = jsonschema.Draft202012Validator(schema)
    return [f"{'/'.join(str(p) for p in e.absolute_path) or 'record'}: {e.message[:200]}"
            for e in validator.iter_errors(data)]


def write(export: Export, out: Any, *, fmt: str, provenance: str = "inline", sidecar: Any = None,
          on_record: Callable[[ExportRecord], None] | None = None) -> int:
    """Write ``export``'s records as JSON lines to ``out``; with ``provenance="sidecar"`` the
    provenance goes to ``sidecar`` line for line (chat formats). Returns the records written."""
    if provenance not in PROVENANCE:
        raise ValueError(f"provenance must be one of {list(PROVENANCE)}, got {provenance!r}")
    if provenance == "sidecar" and (fmt == "jsonl" or sidecar is None):
        raise ValueError("provenance='sidecar' applies to the chat formats and needs a sidecar stream")
    n = 0
    for item in export:
        record = item.record
        if provenance == "sidecar":
            record = {k: v for k, v in record.items() if k != "metadata"}
            sidecar.write(json.dumps(item.provenance, ensure_ascii=False) + "\n")
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        n += 1
        if on_record is not None:
            on_record(item)
    return n
