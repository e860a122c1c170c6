"""``braintrust``: Braintrust logs and experiments: span rows, as the API and ``bt`` export them and the SDK uploads
them.

Records (one per line, a JSON array, or an envelope listing them: the fetch API's ``{"events"}``, BTQL's
``{"data", "schema", "cursor"}``, ``bt view trace --json``'s ``{"meta", "paging", "items"}``, the SDK's logs3 payload
``{"rows", "api_version"}``): one row per span, as ``project_logs/{id}/fetch`` / ``experiment/{id}/fetch``, a BTQL
``select: *`` and ``bt sync pull`` list them, and as the SDK uploads them (``logger.py``: ``id``, ``span_id``,
``root_span_id``, ``span_parents``, ``span_attributes {name, type}``, ``input``, ``output``, ``expected``, ``error``,
``scores``, ``metadata``, ``metrics {start, end, prompt_tokens, ...}``, ``tags``, ``created``, ``project_id`` /
``experiment_id``). Spans are grouped by ``root_span_id`` across the whole input: one trajectory per trace.
What a span gets after the SDK flushed its first row comes as an ``_is_merge`` row of its ids without
``span_attributes``: merged into the span's row as Braintrust merges it (nested objects key by key).
Rows the SDK sends apart from any span (``log_feedback``'s merge row of scores on a row ``id``, a comment with an
``origin``) name no trace: the export merges them into the span's own row, which is read; alone they are passed over.
Log records (``span_attributes.type: "log"`` with a ``log_level``, the SDK's ``logger.info`` / ``error``) reuse the
``span_id`` of the span they were logged in: no version of that span, left out of it; a trace of log records only
(logged outside any span) is passed over as such. Rows without ``span_id`` / ``root_span_id`` /
``span_attributes`` (a flat copy of the logs) are refused: they name no trace to rebuild. A row that is no span is
refused by its place; the rows around it are read.

Mapping
- role by ``span_attributes.type`` only (a span ingested over OpenTelemetry whose ``type`` is not set is a
  container, whatever ``openinference.span.kind`` its metadata keeps): ``llm`` = model call, ``tool`` = step,
  ``task`` / ``function`` / ``eval`` = container; ``score`` spans (an experiment's scorers, children of the ``eval``
  root) are evaluations of the run, not steps: their ``scores`` are the run's, as the root row's are. A span marked
  ``span_attributes.purpose: "scorer"`` (wherever it lies: a Go SDK classifier scorer's too) is a scorer as well, and
  every span under a scorer is the scorer's (an LLM judge's model call and tool), dropped: the SDK propagates the
  purpose to every span under a scorer and leaves those spans out of a trace's own (``js/src/trace.ts``).
- steps: one per ``tool`` span in time order (``metrics.start``): action = ``span_attributes.name``,
  arguments = ``input``, observation = ``output``, error = the decisive line of ``error`` (the SDK logs a
  Python traceback, or an object); model outputs (Chat Completions ``choices``, Anthropic ``content``...)
  give the thought of the tool steps they requested, or a ``respond`` step when they requested none.
- task: the root span's ``input`` (its ``messages``, question, ...), else the first user message of the
  earliest model call (``_vendor.run_task``).
- trajectory_id = ``bt:<root_span_id>``; model_id = a model span's ``metadata.model`` (not ``gen_ai.*`` keys);
  the root's ``project_id`` (``project``), ``experiment_id`` (``experiment``), ``tags`` and scalar ``metadata`` go to
  metadata.
- outcome: the scores of the root row and of its ``score`` spans decide only when their name is success /
  correctness / reward-like (``exact_match``, ``accuracy``...: ``_vendor.verdict``); else an ``error`` on the root
  -> failure; else ``unknown``. Every score goes to ``metadata.scores``.
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, PassedOver, RecordError, decisive_line, json_kind
from ._spans import Node, ancestors, error_text, iso_seconds, one_node_per_id, text_of
from ._spans import trajectory_id as _span_trajectory_id
from ._vendor import (Score, as_list, decode, is_empty, message_dicts, output_dicts, result_text, run_task,
                      trace_roots, trajectory)

NAME = "braintrust"
GROUPED = True
ID_PREFIX = "bt"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"root_span_id"\s*:\s*"[^"]+"[\s\S]{0,20000}?"span_attributes"\s*:\s*\{'
                       r'|"span_attributes"\s*:\s*\{[\s\S]{0,20000}?"root_span_id"\s*:\s*"')
_ROLES = {"llm": "llm", "tool": "tool", "task": "chain", "function": "chain", "eval": "chain", "score": "evaluator"}
#: Node.info keys of a root row's scores and of the row itself (removed before a group is assembled).
_SCORES, _ROW = "_scores", "_row"
#: The keys under which an envelope lists span rows (see ``_listed``).
_LISTS = ("events", "data", "items", "rows")


def _names_span(record: Any) -> bool:
    """Whether a row names its trace and its span: ``root_span_id``, and ``span_id`` (else its ``id``)."""
    return isinstance(record, dict) and bool(record.get("root_span_id")) \
        and bool(record.get("span_id") or record.get("id"))


def _is_span(record: Any) -> bool:
    return _names_span(record) and isinstance(record.get("span_attributes"), dict)


def _is_part(record: Any) -> bool:
    """A later part of a span's row: the SDK logs what a span gets after a flush (its output, scores, end time) as
    an ``_is_merge`` row of the span's ids without ``span_attributes`` (``logger.py`` ``SpanImpl.log_internal``)."""
    return _names_span(record) and record.get("_is_merge") is True


def _lacks(row: dict[str, Any]) -> str:
    """What of a span's identity a row that is no span lacks, key by key (``no 'span_id'``, ``'root_span_id' is
    null``): a list of the keys it has, cut to a few, could leave out the one that was null."""
    said = []
    for key in ("span_attributes", "root_span_id", "span_id"):
        value = row.get(key, row.get("id")) if key == "span_id" else row.get(key)
        if value is None:
            said.append(f"'{key}' is null" if key in row else f"no '{key}'")
        elif key == "span_attributes" and not isinstance(value, dict):
            said.append(f"'{key}' is {json_kind(value)}")
        elif not value:
            said.append(f"'{key}' is empty")
    return "; ".join(said)


def _is_detached(record: dict[str, Any]) -> bool:
    """A row the SDK sends apart from a span's own (``log_feedback``'s ``_is_merge`` scores, a comment on an
    ``origin``): it names no trace."""
    return "root_span_id" not in record and "span_attributes" not in record and \
        (record.get("_is_merge") is True or isinstance(record.get("origin"), dict))


def _is_log(record: dict[str, Any]) -> bool:
    """A log record (``logger.info`` / ``warn`` / ``error``, SDK 0.48): a row of its own that reuses the ``span_id``
    of the span active when it was logged (``logger.py`` ``_emit_log_record``), no version of that span; read as one,
    it replaced the span's row (its input, error, scores). The SDK types it ``"log"`` and always gives it a
    ``log_level``: ``type="log"`` alone may be a span a user typed so (``SpanTypeAttribute.LOG`` is public)."""
    attributes = record.get("span_attributes")
    return isinstance(attributes, dict) and attributes.get("type") == "log" and "log_level" in attributes


def _is_flat(record: Any) -> bool:
    """A Braintrust row stripped of its span identity (``id``, ``created``, ``metrics.start``, input / output, but no
    ``span_id`` / ``root_span_id`` / ``span_attributes``), as third-party importers describe a copy of the logs
    taken from the UI: refused (no trace can be rebuilt from it) rather than read as another format's run."""
    metrics = record.get("metrics") if isinstance(record, dict) else None
    return isinstance(metrics, dict) and isinstance(metrics.get("start"), (int, float)) and "root_span_id" not in \
        record and "span_attributes" not in record and bool(record.get("id")) and "created" in record and \
        ("input" in record or "output" in record)


def _listed(record: Any) -> tuple[str, list[Any]] | None:
    """The rows an envelope lists, with its key: ``events`` (the fetch API), ``data`` (BTQL's answer,
    ``{"data", "schema", "cursor"}``), ``items`` (``bt view trace --json``), ``rows`` (the SDK's logs3 payload,
    ``{"rows", "api_version"}``, which it writes to ``BRAINTRUST_ALL_PUBLISH_PAYLOADS_DIR``)."""
    if not isinstance(record, dict) or _is_span(record) or _is_part(record):
        return None
    return next(((key, record[key]) for key in _LISTS if isinstance(record.get(key), list)), None)


def matches(record: Any) -> bool:
    if _is_span(record) or _is_part(record) or _is_flat(record):
        return True
    listed = _listed(record)
    return listed is not None and bool(listed[1]) and (_is_span(listed[1][0]) or _is_part(listed[1][0]))


def _scores(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A row's ``scores`` (``{name: number | null}``) as :class:`Score` dicts about the whole run."""
    found = decode(row.get("scores"))
    return [Score(str(name), float(value)).to_json() for name, value in (found or {}).items()
            if isinstance(value, (int, float)) and not isinstance(value, bool)] if isinstance(found, dict) else []


def _node(row: dict[str, Any], seq: int) -> Node:
    attributes = row.get("span_attributes") if isinstance(row.get("span_attributes"), dict) else {}
    role = "evaluator" if attributes.get("purpose") == "scorer" else \
        _ROLES.get(str(attributes.get("type") or "").lower(), "other")
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
    node.info[_ROW] = row
    if role == "evaluator":
        node.info[_SCORES] = _scores(row)
    if not parents:
        node.info.update({k: v for k, v in {
            _SCORES: _scores(row),
            "project": row.get("project_id"),
            "experiment": row.get("experiment_id"),
            "tags": row.get("tags") or None,
            "run_metadata": {k: v for k, v in metadata.items() if isinstance(v, (str, int, float, bool))} or None,
        }.items() if v})
    return node


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    if not isinstance(record, dict):
        raise RecordError(f"expected a Braintrust span row (or an envelope of them), got {type(record).__name__}")
    listed = _listed(record)
    rows = listed[1] if listed else [record]
    bad: list[str] = []
    flat = False
    for n, row in enumerate(rows):
        if isinstance(row, dict) and _is_detached(row):
            continue
        if not (_is_span(row) or _is_part(row)):
            keys = f"{_lacks(row)}; found {', '.join(sorted(row)[:8])}" if isinstance(row, dict) \
                else f"found {type(row).__name__}"
            bad.append(f"{listed[0]}[{n}] ({keys})" if listed else keys)
            flat = flat or _is_flat(row)
            continue
        yield str(row["root_span_id"]), _node(row, seq + n), None
    if bad:  # raised after the good rows are given: the runs keep them
        hint = " (rows without their span identity, as a flat copy of the logs holds, name no trace to rebuild: " \
            "export the spans with `bt sync pull`, BTQL `select: *` or the fetch API)" if flat else ""
        raise RecordError("not a Braintrust span row: it needs 'span_attributes', 'root_span_id' and 'span_id' "
                          f"({'; '.join(bad[:5])}{f'; {len(bad) - 5} more' if len(bad) > 5 else ''}){hint}")


def _merged_span(versions: list[Node]) -> Node:
    """One node from a span's rows in the order given: an ``_is_merge`` row merged into the row before it, key by
    key and into nested objects, any other row replacing it, as Braintrust merges them (the SDK's
    ``merge_row_batch`` / ``util.merge_dicts``)."""
    row: dict[str, Any] = {}
    for version in sorted(versions, key=lambda v: v.seq):
        raw = version.info[_ROW]
        row = _merge_into(row, raw) if raw.get("_is_merge") is True else dict(raw)
    return _node(row, min(v.seq for v in versions))


def _merge_into(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        out[key] = _merge_into(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) \
            else value
    return out


def _the_runs_own(group: list[Node]) -> list[Node]:
    """The trace's spans less its scorers (``score`` spans and any marked ``purpose: "scorer"``) and every span under
    one: an LLM judge's model call and the tool it answers with (autoevals' ``select_choice``) are the scorer's, not
    steps or model calls of the run (they gave the run its judge's model and a step of its verdict)."""
    by_id = {n.id: n for n in group}
    return [n for n in group if n.role != "evaluator" and all(a.role != "evaluator" for a in ancestors(n, by_id))]


def trajectory_id(key: str, by: str = "trace") -> str:
    return _span_trajectory_id(ID_PREFIX, key, by)


def assemble_trajectory(key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
    spans = [n for n in group if not _is_log(n.info[_ROW])]  # no version of the span whose id they reuse
    logs, group = len(group) - len(spans), spans
    if not group:  # logged outside any span: the summary says so, rather than nothing at all (read.py names the group)
        raise PassedOver("log records only", f"{logs} log record(s) logged outside any span, no span")
    group = one_node_per_id(group, _merged_span)
    scores = [Score(**s) for n in group for s in n.info.pop(_SCORES, None) or []]
    for n in group:
        n.info.pop(_ROW, None)
    group = _the_runs_own(group)
    if not group:
        raise RecordError(f"trace {key}: only scorer spans, none of the run's own")
    root = trace_roots(group, "span")[0]
    return trajectory(NAME, ID_PREFIX, key, group, ctx, by=by, task=run_task(group, root, "span"), scores=scores)
