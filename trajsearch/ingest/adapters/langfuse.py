"""``langfuse``: Langfuse exports: traces with their observations and scores.

Records, any mix (one per line, a JSON array, or one object per file):
- a trace as the public API returns it (``GET /api/public/traces/{id}``): ``id``,
  ``name``, ``timestamp``, ``input``, ``output``, ``sessionId``, ``userId``,
  ``tags``, ``metadata``, with ``observations`` and ``scores`` as lists of objects;
- flat rows as the blob-storage / table exports write them: observations
  (``id``, ``traceId``, ``type``, ``parentObservationId``, ``name``,
  ``startTime``, ``endTime``, ``input``, ``output``, ``level``,
  ``statusMessage``, ``model``), scores (``traceId``, ``name``, ``value``,
  ``stringValue``, ``dataType``, ``comment``) and traces without nested lists.
Everything is grouped by trace id across every file of the input
(``group_by="conversation"``: by ``sessionId``).

Mapping
- observation role by ``type``: ``TOOL`` = step, ``GENERATION`` = model call,
  ``RETRIEVER`` = step, ``AGENT`` / ``CHAIN`` / ``SPAN`` = container,
  ``EVALUATOR`` = verdict (``EVENT`` / ``EMBEDDING`` / ``GUARDRAIL`` ignored).
  A childless ``SPAN`` named like a tool a generation asked for is that tool's
  execution (older SDKs trace tools as spans).
- steps: action = observation ``name``, arguments = ``input`` (JSON-decoded),
  observation = ``output``, error = ``statusMessage`` when ``level`` is
  ``ERROR`` (``WARNING`` is not an error). Thought and ``respond`` steps come
  from ``GENERATION`` outputs (OpenAI-style messages with ``tool_calls``).
- task: the trace ``input`` (a string, or the usual ``input`` / ``query`` /
  ``messages`` keys), else the first user message of the first generation.
- trajectory_id = ``lf:<trace id>``; model_id = the first generation's
  ``model``; metadata keeps ``name``, ``sessionId``, ``userId``, ``tags``,
  ``release``, ``version``.
- outcome: trace-level scores (no ``observationId``): a ``CATEGORICAL``
  ``stringValue`` pass/fail decides; ``BOOLEAN`` / ``NUMERIC`` values of 1/0
  decide only on a success/correctness-like name (``hallucination = 1`` must not
  read as success); else the first numeric score is kept as reward; a root
  observation at level ``ERROR`` -> failure (infra_error for timeouts, rate
  limits, 5xx, connection errors); else ``unknown``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, RecordError, json_object
from ._spans import (
    Evaluation,
    Message,
    Node,
    SpanFormat,
    iso_seconds,
    maybe_json,
    normalise_messages,
    text_of,
)

NAME = "langfuse"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"traceId"\s*:[\s\S]*"type"\s*:\s*"(?:GENERATION|SPAN|EVENT|TOOL|AGENT)"')
GROUPED = True
ID_PREFIX = "lf"
_FORMAT = SpanFormat(NAME, ID_PREFIX)
OBSERVATION_TYPES = {
    "TOOL": "tool", "GENERATION": "llm", "RETRIEVER": "retriever", "AGENT": "agent", "CHAIN": "chain",
    "SPAN": "chain", "EVALUATOR": "evaluator", "EVENT": "other", "EMBEDDING": "other", "GUARDRAIL": "other",
}


def _kind(record: dict[str, Any]) -> str | None:
    if "traceId" in record and str(record.get("type", "")).upper() in OBSERVATION_TYPES:
        return "observation"
    if "traceId" in record and "name" in record and ("value" in record or "dataType" in record):
        return "score"
    if "id" in record and ("observations" in record or "scores" in record or
                           ("timestamp" in record and ("sessionId" in record or "input" in record) and "run_type" not in record)):
        return "trace"
    return None


def matches(record: Any) -> bool:
    return isinstance(record, dict) and _kind(record) is not None and "trajectory_id" not in record


def _trace_node(trace: dict[str, Any], seq: int) -> Node:
    return Node(
        id=f"trace:{trace['id']}", parent=None, role="agent", name=str(trace.get("name") or "trace"), seq=seq,
        start=iso_seconds(trace.get("timestamp")),
        input_text=text_of(trace.get("input")) if trace.get("input") is not None else None,
        output_text=text_of(trace.get("output")) if trace.get("output") is not None else None,
        input_messages=normalise_messages(trace["input"]) if isinstance(maybe_json(trace.get("input")), list) else [],
        info={k: v for k, v in {
            "trace_name": trace.get("name"), "conversation_id": trace.get("sessionId"), "user_id": trace.get("userId"),
            "tags": trace.get("tags") or None, "release": trace.get("release"), "version": trace.get("version"),
        }.items() if v},
    )


def _score(score: dict[str, Any]) -> dict[str, Any] | None:
    if score.get("observationId"):
        return None  # scores of one observation are not the run's verdict
    kind = str(score.get("dataType") or "NUMERIC").upper()
    value = score.get("value")
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    label = score.get("stringValue") if kind == "CATEGORICAL" else None
    if kind == "CATEGORICAL" and label is None and isinstance(value, str):
        label = value
    return vars(Evaluation(str(score.get("name") or "score"), label, number, score.get("comment")))


def _observation_node(obs: dict[str, Any], seq: int) -> Node:
    if not obs.get("id") or not obs.get("traceId"):
        raise RecordError("observation without 'id' or 'traceId'")
    role = OBSERVATION_TYPES.get(str(obs.get("type", "")).upper(), "other")
    level = str(obs.get("level") or "DEFAULT").upper()
    inputs, outputs = maybe_json(obs.get("input")), maybe_json(obs.get("output"))
    node = Node(
        id=str(obs["id"]), parent=str(obs.get("parentObservationId") or f"trace:{obs['traceId']}"),
        role=role, name=str(obs.get("name") or role), seq=seq,
        start=iso_seconds(obs.get("startTime")), end=iso_seconds(obs.get("endTime")),
        error=(str(obs.get("statusMessage") or "level ERROR") if level == "ERROR" else None),
        model=obs.get("model"),
        input_text=text_of(inputs) if inputs is not None else None,
        output_text=text_of(outputs) if outputs is not None else None,
    )
    if role == "llm":
        node.input_messages = normalise_messages(inputs) if inputs is not None else []
        out = normalise_messages(outputs if isinstance(outputs, (list, dict)) else [{"role": "assistant", "content": outputs}]) if outputs is not None else []
        node.output_messages = [dict(m, role="assistant") if m["role"] == "user" else m for m in out]
    else:
        node.tool = node.name
        node.arguments = inputs
        node.result = text_of(outputs) if outputs is not None else None
        meta = obs.get("metadata") if isinstance(obs.get("metadata"), dict) else {}
        node.call_id = meta.get("tool_call_id")
    return node


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    record = json_object(record)
    kind = _kind(record)
    if kind == "observation":
        yield str(record["traceId"]), _observation_node(record, seq), None
        return
    if kind == "score":
        ev = _score(record)
        if ev is not None:  # a score row alone: a bare evaluation node under the trace
            trace_id = str(record["traceId"])
            yield trace_id, Node(id=f"score:{record.get('id') or seq}", parent=f"trace:{trace_id}", role="evaluator",
                                 name=ev["name"], seq=seq, evaluations=[ev]), None
        return
    if kind != "trace":
        raise RecordError("not a Langfuse trace, observation or score")
    trace_id = str(record["id"])
    root = _trace_node(record, seq)
    root.evaluations = [e for s in record.get("scores") or [] if isinstance(s, dict) and (e := _score(s))]
    yield trace_id, root, record.get("sessionId")
    for n, obs in enumerate(record.get("observations") or [], 1):
        if isinstance(obs, dict):
            yield trace_id, _observation_node(dict(obs, traceId=obs.get("traceId") or trace_id), seq + n), None


def _tools_as_spans(group: list[Node]) -> None:
    """Childless SPAN observations named like a tool a generation asked for are tool executions."""
    asked = {c.get("name") for n in group if n.role == "llm" for m in n.output_messages for c in Message(**m).calls}
    parents = {n.parent for n in group}
    for n in group:
        if n.role == "chain" and n.name in asked and n.id not in parents:
            n.role = "tool"


trajectory_id = _FORMAT.trajectory_id


def assemble_trajectory(key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
    _tools_as_spans(group)
    root = next((n for n in group if n.id.startswith("trace:")), None)
    if root is not None and not root.error:  # a failed top-level observation is the run failing
        root.error = next((n.error for n in group if n.parent == root.id and n.error and n.role != "tool"), None)
    # the root of a trace is its trace record; without one, the observations still form a run
    if not any(n.id.startswith("trace:") for n in group):
        for n in group:
            if n.parent and n.parent.startswith("trace:"):
                n.parent = None
    return _FORMAT.assemble_trajectory(key, group, ctx, by)
