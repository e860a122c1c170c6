"""``braintrust``: Braintrust logs and experiments: span rows, as the SDK logs them and the API / UI export them.

Records (one per line, a JSON array, or the fetch API's ``{"events": [...]}``): one row per span, as
``project_logs/{id}/fetch`` / ``experiment/{id}/fetch``, a BTQL ``select: *`` and the UI's JSON download list them,
and as the SDK uploads them (``logger.py``: ``id``, ``span_id``, ``root_span_id``, ``span_parents``,
``span_attributes {name, type}``, ``input``, ``output``, ``expected``, ``error``, ``scores``, ``metadata``,
``metrics {start, end, prompt_tokens, ...}``, ``tags``, ``created``, ``project_id`` / ``experiment_id``).
Spans are grouped by ``root_span_id`` across the whole input: one trajectory per trace.
Rows the SDK sends apart from any span (``log_feedback``'s merge row of scores on a row ``id``, a comment with
an ``origin``) name no trace: the export merges them into the span's own row, which is read; alone they are
passed over.

Mapping
- role by ``span_attributes.type``: ``llm`` = model call, ``tool`` = step, ``task`` / ``function`` / ``eval`` =
  container; ``score`` spans (an experiment's scorers, children of the ``eval`` root) are evaluations of the
  run, not steps: their ``scores`` are the run's, as the root row's are.
- steps: one per ``tool`` span in time order (``metrics.start``): action = ``span_attributes.name``,
  arguments = ``input``, observation = ``output``, error = the decisive line of ``error`` (the SDK logs a
  Python traceback, or an object); model outputs (Chat Completions ``choices``, Anthropic ``content``...)
  give the thought of the tool steps they requested, or a ``respond`` step when they requested none.
- task: the root span's ``input`` (its ``messages``, question, ...), else the first user message of the
  earliest model call (``_vendor.run_task``).
- trajectory_id = ``bt:<root_span_id>``; model_id = a model span's ``metadata.model``; the root's
  ``project_id`` / ``experiment_id``, ``tags`` and scalar ``metadata`` go to metadata.
- outcome: the scores of the root row and of its ``score`` spans decide only when their name is success /
  correctness / reward-like (``exact_match``, ``accuracy``...: ``_vendor.verdict``); else an ``error`` on the root
  -> failure; else ``unknown``. Every score goes to ``metadata.scores``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, RecordError, decisive_line
from ._spans import Node, error_text, iso_seconds, start_order, text_of
from ._spans import trajectory_id as _span_trajectory_id
from ._vendor import Score, as_list, decode, is_empty, message_dicts, output_dicts, result_text, run_task, trajectory

NAME = "braintrust"
GROUPED = True
ID_PREFIX = "bt"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"root_span_id"\s*:\s*"[^"]+"[\s\S]{0,20000}?"span_attributes"\s*:\s*\{'
                       r'|"span_attributes"\s*:\s*\{[\s\S]{0,20000}?"root_span_id"\s*:\s*"')
_ROLES = {"llm": "llm", "tool": "tool", "task": "chain", "function": "chain", "eval": "chain", "score": "evaluator"}
#: Node.info key of a root row's scores (removed before a group is assembled).
_SCORES = "_scores"


def _is_span(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("span_attributes"), dict) \
        and bool(record.get("root_span_id")) and bool(record.get("span_id") or record.get("id"))


def _is_detached(record: dict[str, Any]) -> bool:
    """A row the SDK sends apart from a span's own (``log_feedback``'s ``_is_merge`` scores, a comment on an
    ``origin``): it names no trace."""
    return "root_span_id" not in record and "span_attributes" not in record and \
        (record.get("_is_merge") is True or isinstance(record.get("origin"), dict))


def matches(record: Any) -> bool:
    if _is_span(record):
        return True
    events = record.get("events") if isinstance(record, dict) else None
    return isinstance(events, list) and bool(events) and _is_span(events[0])


def _scores(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A row's ``scores`` (``{name: number | null}``) as :class:`Score` dicts about the whole run."""
    found = decode(row.get("scores"))
    return [Score(str(name), float(value)).to_json() for name, value in (found or {}).items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)] if isinstance(found, dict) else []


def _node(row: dict[str, Any], seq: int) -> Node:
    attributes = row["span_attributes"]
    role = _ROLES.get(str(attributes.get("type") or "").lower(), "other")
    metrics = row.get("metrics") if isinstance(row.get("metrics"), dict) else {}
    metadata = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
    parents = [str(p) for p in as_list(row.get("span_parents")) if p]
    inputs, outputs = decode(row.get("input")), decode(row.get("output"))
    error = error_text(decode(row.get("error")))
    node = Node(
        id=str(row.get("span_id") or row["id"]), parent=parents[0] if parents else None, role=role,
        name=str(attributes.get("name") or role), seq=seq,
        start=iso_seconds(metrics.get("start")) or iso_seconds(row.get("created")), end=iso_seconds(metrics.get("end")),
        error=(decisive_line(error) or error.strip()[:600]) if error and error.strip() else None,
        input_text=None if is_empty(inputs) else text_of(inputs),
        output_text=None if is_empty(outputs) else text_of(outputs),
    )
    if role == "tool":
        node.tool, node.arguments = node.name, inputs
        node.result = None if node.error and is_empty(outputs) else result_text(outputs)
    elif role == "llm":
        node.input_messages = message_dicts(inputs)
        node.output_messages = output_dicts(outputs)
        model = metadata.get("model")
        node.model = model.strip() if isinstance(model, str) and model.strip() else None
    if role == "evaluator":
        node.info[_SCORES] = _scores(row)
    if not parents:
        node.info.update({k: v for k, v in {
            _SCORES: _scores(row),
            "project": row.get("experiment_id") or row.get("project_id"),
            "tags": row.get("tags") or None,
            "run_metadata": {k: v for k, v in metadata.items() if isinstance(v, (str, int, float, bool))} or None,
        }.items() if v})
    return node


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    if not isinstance(record, dict):
        raise RecordError(f"expected a Braintrust span row (or {{'events': [...]}}), got {type(record).__name__}")
    rows = record["events"] if isinstance(record.get("events"), list) and not _is_span(record) else [record]
    for n, row in enumerate(rows, seq):
        if isinstance(row, dict) and _is_detached(row):
            continue
        if not _is_span(row):
            keys = ", ".join(sorted(row)[:8]) if isinstance(row, dict) else type(row).__name__
            raise RecordError("not a Braintrust span row: it needs 'span_attributes', 'root_span_id' and 'span_id' "
                              f"(found {keys})")
        yield str(row["root_span_id"]), _node(row, n), None


def trajectory_id(key: str, by: str = "trace") -> str:
    return _span_trajectory_id(ID_PREFIX, key, by)


def assemble_trajectory(key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
    scores = [Score(**s) for n in group for s in n.info.pop(_SCORES, None) or []]
    group = [n for n in group if n.role != "evaluator"]
    if not group:
        raise RecordError(f"trace {key}: only scorer spans, none of the run's own")
    ids = {n.id for n in group}
    root = min((n for n in group if n.parent is None or n.parent not in ids), key=start_order)
    return trajectory(NAME, ID_PREFIX, key, group, ctx, by=by, task=run_task(group, root, "span"), scores=scores)
