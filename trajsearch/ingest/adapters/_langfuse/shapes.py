"""The shapes a Langfuse export comes in -> one kind per record, camelCase fields, scores.

Langfuse data leaves the platform four ways (see ``langfuse`` for the list):
the UI's trace download, the public API (a trace, or a list page), the
blob-storage / table exports (flat rows, camelCase or snake_case) and
ingestion batches (``trace-create``, ``span-update``, ``score-create``...).
This module tells them apart (:func:`record_kind`), puts snake_case export
columns under the API's camelCase names, unrolls an ingestion batch into
export records and reads a score row. Apart from the observation mapping
(``observations``) because a new export shape changes only this.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from .._vendor import Score, as_list, decode

OBSERVATION_TYPES = {
    "TOOL": "tool", "GENERATION": "llm", "RETRIEVER": "retriever", "AGENT": "agent", "CHAIN": "chain",
    "SPAN": "chain", "EVALUATOR": "evaluator", "EVENT": "other", "EMBEDDING": "other", "GUARDRAIL": "other",
}
_SNAKE = {
    "trace_id": "traceId", "parent_observation_id": "parentObservationId", "start_time": "startTime",
    "end_time": "endTime", "status_message": "statusMessage", "provided_model_name": "providedModelName",
    "model_parameters": "modelParameters", "observation_id": "observationId", "data_type": "dataType",
    "string_value": "stringValue", "session_id": "sessionId", "user_id": "userId", "trace_name": "traceName",
}
_INGESTION = re.compile(r"^(trace|score|span|generation|event|agent|tool|chain|retriever|evaluator|embedding|guardrail|"
                        r"observation)-(create|update)$")


def as_camel(record: dict[str, Any]) -> dict[str, Any]:
    """Snake_case export columns under the camelCase names the API uses (a camelCase key wins)."""
    if not any(k in record for k in _SNAKE):
        return record
    out = dict(record)
    for snake, camel in _SNAKE.items():
        if snake in out:
            value = out.pop(snake)
            out.setdefault(camel, value)
    return out


def record_kind(record: dict[str, Any]) -> str | None:
    """Which record this is (``export``, ``download``, ``ingestion``, ``page``, ``trace``, ...); None: not ours."""
    if isinstance(record.get("trace"), dict) and ("observations" in record or (
            "id" in record["trace"] and "run_type" not in record["trace"])):  # not a LangSmith run kept as "trace"
        return "export"
    if "id" not in record and isinstance(record.get("observations"), list) and any(
            isinstance(o, dict) and ("traceId" in o or "trace_id" in o) for o in record["observations"][:5]):
        return "download"  # the server-side download: observations and scores, no trace object
    if isinstance(record.get("batch"), list) and any(
            isinstance(e, dict) and _INGESTION.match(str(e.get("type", ""))) for e in record["batch"][:20]):
        return "ingestion"
    if isinstance(record.get("data"), list) and isinstance(record.get("meta"), dict):
        return "page" if any(isinstance(d, dict) and record_kind(as_camel(d)) for d in record["data"][:5]) else None
    record = as_camel(record)
    if "traceId" in record and str(record.get("type", "")).upper() in OBSERVATION_TYPES:
        return "observation"
    if "traceId" in record and "name" in record and ("value" in record or "dataType" in record):
        return "score"
    if "id" in record and ("observations" in record or "scores" in record or (
            "timestamp" in record and ("sessionId" in record or "input" in record) and "run_type" not in record)):
        return "trace"
    return None


#: What a session tool keeps to point at a Langfuse trace (langfuse-docs' ``.langfuse/`` files): the pointer's own
#: fields, and the file's around a nested ``langfuse`` pointer. Only a record of nothing else is a pointer: a run
#: file of another format may record its trace's id and URL too.
_POINTER_FIELDS = frozenset({"trace_id", "trace_url", "session_id", "session_url", "host", "created_at", "updated_at"})
_POINTER_FILE_FIELDS = frozenset({"schema_version", "langfuse", "git", "created_at", "updated_at"})
#: Fields of the SDK's create-dataset body (``POST /api/public/v2/datasets``).
_DATASET_FIELDS = frozenset({"name", "description", "metadata", "inputSchema", "expectedOutputSchema"})


def side_kind(record: Any) -> str | None:
    """What a Langfuse file that holds no run is: a pointer to a trace, a dataset, a dataset item or a prompt."""
    if not isinstance(record, dict):
        return None
    if _is_trace_pointer(record):
        return ("a pointer to a Langfuse trace (its id and URL, as a session tool keeps them in .langfuse/), not a "
                "run: ingest the trace itself (the UI's download, an API or blob-storage export)")
    if {"countTraces", "sessionDuration", "userIds"} <= record.keys():
        return ("a row of Langfuse's sessions table export (a session's users, trace count and costs), not a run: "
                "export the traces or observations table, or fetch the session's traces")
    if {"datasetItemId", "traceId", "datasetName"} <= record.keys() and "input" not in record:
        return ("a row of Langfuse's dataset run items export (which trace ran which dataset item), not a run: "
                "ingest the traces themselves")
    if "datasetName" in record and "input" in record and ("expectedOutput" in record or "sourceTraceId" in record):
        return "a Langfuse dataset item (an input and its expected output), not a run"
    if "description" in record and isinstance(record.get("name"), str) and set(record) <= _DATASET_FIELDS:
        return "a Langfuse dataset (its name and description), not a run"
    if isinstance(record.get("name"), str) and "prompt" in record and record.get("type") in ("text", "chat") and (
            "labels" in record or "config" in record):
        return "a Langfuse prompt (a template and its labels), not a run"
    return None


def _is_trace_pointer(record: dict[str, Any]) -> bool:
    nested = isinstance(record.get("langfuse"), dict) and set(record) <= _POINTER_FILE_FIELDS
    pointer = record["langfuse"] if nested else record
    return isinstance(pointer.get("trace_url"), str) and "trace_id" in pointer and set(pointer) <= _POINTER_FIELDS


def score_of(raw: Any) -> Score | None:
    raw = decode(raw)
    if not isinstance(raw, dict):
        return None
    raw = as_camel(raw)
    kind = str(raw.get("dataType") or "NUMERIC").upper()
    value = raw.get("value")
    number = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else \
        (1.0 if value is True else 0.0 if value is False else None)
    label = raw.get("stringValue") if isinstance(raw.get("stringValue"), str) else None
    if label is None and isinstance(value, str):
        label = value
    if kind == "BOOLEAN" and label is not None and number is None:
        flag = label.strip().lower()
        number = 1.0 if flag in ("true", "1", "yes") else 0.0 if flag in ("false", "0", "no") else None
    if kind == "BOOLEAN":
        label = None  # "True"/"False" is not a pass/fail label; the value decides
    return Score(str(raw.get("name") or "score"), number, label, raw.get("comment") or None,
                 raw.get("source") or None, str(raw["observationId"]) if raw.get("observationId") else None)


def scores_of(raw: Any) -> list[dict[str, Any]]:
    return [s.to_json() for item in as_list(raw) if (s := score_of(item)) is not None]


#: A trace row's own fields in the UI's batch export of the traces table (Langfuse's worker, ``trace-stream.ts`` /
#: ``getDatabaseReadStream.ts``) and in the API; any other key of a row without ``scores`` is a score's column.
_TRACE_ROW_FIELDS = frozenset({
    "id", "projectId", "timestamp", "name", "userId", "sessionId", "release", "version", "environment", "tags",
    "bookmarked", "public", "input", "output", "metadata", "comments", "latency", "usage", "inputCost", "outputCost",
    "totalCost", "level", "errorCount", "warningCount", "defaultCount", "debugCount", "observationCount",
    "inputTokens", "outputTokens", "totalTokens", "htmlPath", "externalId", "createdAt", "updatedAt", "observations",
    "scores", "traceTags", "userIds"})


def score_columns(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The scores of a row of the UI's batch export of the traces table (CSV / JSON / JSONL): Langfuse writes no
    ``scores`` there but one column per score name of the project, a list of the trace's values (``[1]``,
    ``["fail"]``; the average of each NUMERIC / BOOLEAN name, the label of a CATEGORICAL one or BOOLEAN's
    ``"True"`` / ``"False"``) or null where the trace has none (``prepareScoresForOutput`` also drops a value that is
    0 or empty: such a score reads as absent). Score rows in the API's shape, for :func:`scores_of`; none when the
    row has a ``scores`` field (every other shape of a trace)."""
    if "scores" in trace:
        return []
    rows: list[dict[str, Any]] = []
    for name, values in trace.items():
        if name in _TRACE_ROW_FIELDS or not isinstance(values, list) or not values:
            continue
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            rows += [{"name": name, "value": v, "dataType": "NUMERIC"} for v in values]
        elif all(isinstance(v, str) for v in values):
            rows += [{"name": name, "stringValue": v, "dataType": "BOOLEAN" if v in ("True", "False") else
                      "CATEGORICAL"} for v in values]
    return rows


def ingestion_records(record: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """An ingestion batch's events as export records (observation rows carry their raw body for merging)."""
    for event in record["batch"]:
        if not isinstance(event, dict) or not isinstance(event.get("body"), dict):
            continue
        found = _INGESTION.match(str(event.get("type", "")))
        if not found:
            continue
        what, body = found.group(1), as_camel(event["body"])
        if what == "trace":
            yield {"_trace": body}
        elif what == "score":
            yield {"_score": body}
        else:
            kind = str(body.get("type") or what).upper() if what == "observation" else what.upper()
            yield {"_observation": dict(body, type=kind)}
