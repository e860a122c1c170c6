"""``openinference``: OpenInference spans (Arize Phoenix and compatible tracers), OTLP/JSON or flat JSONL.

Records: OTLP/JSON export requests, or flat span objects as Phoenix exports
them (``name``, ``context.trace_id`` / ``span_id``, ``parent_id``,
``start_time``, ``status_code``, ``attributes`` flat or nested, ``events``);
its spans dataframe as pandas writes it in any orient (``records`` rows are
flat spans; ``to_json()``'s default ``columns``, ``index``, ``split`` and
``table`` are turned back into those rows).
Phoenix's REST API lists a project's spans a page at a time, ``{"data":
[...], "next_cursor"}``: as such flat spans (``GET /v1/projects/{p}/spans``,
which moves ``openinference.span.kind`` out of the attributes into
``span_kind``) or as OTLP spans with protobuf's field names (``.../spans/otlpv1``,
read by ``_otlp``). A page with a ``next_cursor`` is not all of the project's
spans: its traces may go on in the next page, and reading it says so; an
empty page holds no spans and is no run.
Under the AWS Distro for OpenTelemetry (Bedrock AgentCore's ``sessionSpans``) the
content attributes live in one log record per span, read back into it.
Spans are grouped into one trajectory per trace, or with
``group_by="conversation"`` per ``session.id``.

Mapping
- span role by ``openinference.span.kind``: ``AGENT`` / ``CHAIN`` = container,
  ``TOOL`` = step, ``LLM`` = model call, ``RETRIEVER`` = step,
  ``EVALUATOR`` = verdict; ``EMBEDDING`` / ``RERANKER`` = neither: a trace
  of those alone (a RAG app's query embedding) holds no agent run and is
  passed over (``_spans.no_agent_work``); a span without a kind (the spec
  requires one) recording ``llm.output_messages`` is a model call where nothing
  typed runs below it, else a container (``UNKNOWN`` too).
- steps: one per ``TOOL`` span: action = ``tool.name``, arguments = the call's
  ``input.value`` (JSON-decoded; ``tool.parameters`` when there is no input:
  OpenInference defines it as the tool's parameter schema, some tracers put the
  call's arguments there; the model's arguments by name where the tool recorded a
  bare value, as LangChain does), observation = ``output.value`` (a LangChain
  ``ToolMessage``'s content, its ``status: error`` the step's error; a Gemini
  ``FunctionResponse``'s ``response``, as ADK's instrumentor records it), id = ``tool.id``,
  error = the ``exception`` event (where its message says only its class, beeai's
  ``ToolError: Tool Error``, or was redacted: the output's decisive line, the cause
  it wraps) or the ERROR status message. ``RETRIEVER``
  spans: action = span name, observation = the ``retrieval.documents``
  contents. The thought of a tool step is the text of the ``LLM`` span whose
  ``llm.output_messages.N.message.tool_calls.M.tool_call``, or its ordered
  ``message.contents.M`` part of type ``tool_use``, requested it (by
  ``tool_call.id``, else by name); model text that requested no tool is a
  ``respond`` step; untraced calls get their results from later
  ``llm.input_messages`` with role ``tool`` and ``message.tool_call_id`` (by
  position after the assistant turn where no ids are recorded: LiteLLM's,
  Mistral's, google-genai's instrumentors), failed where the request in
  ``input.value`` marks an Anthropic ``tool_result`` ``is_error``. A Haystack
  ``Agent`` is one ``CHAIN`` span (``Agent.run``) with no model call or tool
  span below it: its ``output.value`` messages (``ChatMessage`` reprs) after
  the last user one are its turns, calls and results. One model call seen by
  two instrumentors (LlamaIndex's and OpenAI's) is one turn, whether nested,
  over one interval or side by side (``_spans.calls.twin_calls``).
- task: the root span's ``input.value`` (a string, or the ``input`` /
  ``query`` / ``question`` / ``messages`` of a JSON input; CrewAI's crew root
  has none: its ``crew_tasks`` descriptions, and its ``CrewOutput``'s ``raw``
  is the answer), else the first user
  message of the first ``LLM`` span -- unless that span's input is a
  conversation (several user turns) starting with it: then its latest user
  message, what this run was asked (a session's follow-up turn).
- a trace whose spans record no input (``OPENINFERENCE_HIDE_INPUTS``: every
  ``input.value`` written ``__REDACTED__``, the input messages left out; a
  redacted value is read as none recorded) is still a run: its task names
  the root span and says no input was recorded; a tool's arguments are then
  the model's request, not its parameter schema.
- trajectory_id = ``oi:<trace_id>`` (``oi:conversation:<session.id>`` when
  grouped by session); model_id = ``llm.model_name``; metadata keeps the
  session and user ids and the agent's ``agent.name``; tools_available = the names of ``llm.tools.<i>.tool.json_schema``
  (and of GenAI ``gen_ai.tool.definitions``), read as ``otel-genai`` reads them.
- outcome: ``trace.evaluations`` / ``evaluations`` / ``annotations``
  attributes, ``EVALUATOR`` span outputs and Phoenix annotations exported
  beside the spans (``span_annotations`` / ``trace_annotations`` pages of its
  REST API, or the client's lists: ``{span_id | trace_id, name,
  annotator_kind, result: {label, score, explanation}}``; those on the trace or
  its root span only: another span's judges that span) with a pass/fail label
  (or a 1/0 score on a success/correctness metric); else an ERROR status on the root
  span -> failure (infra_error for timeouts, rate limits, 5xx, connection
  errors); else ``unknown``.
"""

from __future__ import annotations

import logging
import re
from itertools import islice
from typing import Any, Iterator

from trajsearch.model import Trajectory

from ._common import Context, RecordError
from ._otlp import OtlpFormat, is_span_record, otlp_nodes, raw_items, sample_attribute_keys
from ._otlp.harbor import as_atif_run, ended_on_cli_error
from ._otlp.values import normal_id
from ._spans import Node, evaluation

log = logging.getLogger(__name__)

NAME = "openinference"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``): the kind attribute,
#: or Phoenix's ``span_kind`` (its REST API's spans, a page of which is one JSON line longer than that), or the
#: head of its spans dataframe as pandas' ``to_json()`` writes it by default (``{"name": {"<span id>": ...``, or
#: ``{"name": {"0": ...`` once ``reset_index(drop=True)`` numbered its rows: its first column is the span's name, and
#: a frame of a few hundred spans puts ``span_kind`` and ``context.span_id`` past the head) or split (``{"columns":
#: [... "context.span_id" ...``), one line of any length (see :func:`_frame_rows`).
SIGNATURE = re.compile(r'"openinference\.span\.kind"|"span_kind"\s*:\s*"(?:TOOL|CHAIN|LLM|RETRIEVER|EMBEDDING|AGENT|'
                       r'RERANKER|UNKNOWN|GUARDRAIL|EVALUATOR|PROMPT|DECISION)"'
                       r'|^\s*\{\s*"name"\s*:\s*\{\s*"(?:[0-9a-f]{16}|0)"\s*:'
                       r'|^\s*\{\s*"columns"\s*:\s*\[[^\]]*"context\.span_id"', re.I)
GROUPED = True
ID_PREFIX = "oi"
_FORMAT = OtlpFormat(NAME, ID_PREFIX, name_when_no_input=True, latest_user_message="over first")


def _frame_rows(record: Any) -> list[dict[str, Any]]:
    """The rows of Phoenix's spans dataframe written by pandas in an orient other than ``records`` (read as flat
    spans already): ``to_json()``'s default ``columns`` (``{column: {index: value}}``), ``index`` (``{index:
    row}``), ``split`` (``{columns, index, data}``) or ``table`` (``{schema, data}``); none for any other record.
    A row is a frame's when it has the dataframe's ``context.span_id`` column."""
    if not isinstance(record, dict) or not record:
        return []
    rows: list[Any] = []
    if isinstance(record.get("columns"), list) and isinstance(record.get("data"), list):  # split
        rows = [dict(zip(record["columns"], r)) for r in record["data"] if isinstance(r, list)]
    elif isinstance(record.get("schema"), dict) and isinstance(record.get("data"), list):  # table
        rows = record["data"]
    elif all(isinstance(v, dict) for v in record.values()):
        if "context.span_id" in record:  # columns
            index = list(record["context.span_id"])
            rows = [{col: values.get(i) for col, values in record.items()} for i in index]
        else:  # index
            rows = list(record.values())
    rows = [r for r in rows if isinstance(r, dict)]
    return rows if rows and all("context.span_id" in r for r in rows[:5]) else []


def matches(record: Any) -> bool:
    if _annotations(record) or _frame_rows(record):
        return True
    if not is_span_record(record):
        return False
    if "resourceSpans" not in record and _phoenix_kind(record):
        return True
    return "openinference.span.kind" in sample_attribute_keys(record)


def _phoenix_kind(record: dict[str, Any]) -> bool:
    """Whether the first spans of a record carry Phoenix's ``span_kind`` (where its REST API and clients put
    ``openinference.span.kind``): a flat span, or the spans of a page of ``GET /v1/projects/{p}/spans``."""
    return any(item.get("span_kind") for _, _, item in islice(raw_items(record), 5))


def _phoenix_page(record: Any) -> bool:
    """A page of Phoenix's REST API (``PaginatedResponseBody``): ``{"data": [...], "next_cursor"}``."""
    return isinstance(record, dict) and record.keys() == {"data", "next_cursor"} and isinstance(record["data"], list)


#: What CrewAI's ``output_log_file`` is, as JSON (:func:`not_a_run`) or as text (``detect``), and where its run is.
CREW_OUTPUT_LOG = ("this is CrewAI's output_log_file (`Crew(output_log_file=...)`: each task's start and result, none "
                   "of the agents' tool or model calls); trace the crew instead and ingest the spans: "
                   "openinference-instrumentation-crewai (Phoenix, or any OTLP/JSON file exporter) or OpenLLMetry's "
                   "opentelemetry-instrumentation-crewai")
#: The keys of an entry of CrewAI's ``output_log_file`` (``crewai/utilities/file_handler.py``: ``FileHandler.log``,
#: called by ``Crew`` when a task starts and completes).
_CREW_LOG_KEYS = frozenset({"timestamp", "task_name", "task", "agent", "status", "output"})


def not_a_run(record: Any) -> str | None:
    """An entry of CrewAI's ``output_log_file`` (``Crew(output_log_file="logs.json")``: ``{timestamp, task_name,
    task, agent, status: started | completed, output}`` per task, every kickoff appended to the same list) records
    when each task started and what it returned, none of the agents' model or tool calls: no run's steps. A crew is
    read from its traces, which this adapter reads."""
    if not (isinstance(record, dict) and {"timestamp", "task", "agent", "status"} <= record.keys()
            and record.keys() <= _CREW_LOG_KEYS and record["status"] in ("started", "completed")):
        return None
    return CREW_OUTPUT_LOG


def side_file(record: Any) -> str | None:
    """The adapter hook (see ``adapters/__init__``): an empty page of Phoenix's REST API (its answer for a project
    with no spans, or none that the query matched) holds no run."""
    if _phoenix_page(record) and not record["data"]:
        return ('an empty page of Phoenix\'s REST API ({"data": [], ...}: a project with no spans, or none the '
                "query matched), no spans")
    return None


_ANNOTATION = "annotation:"
#: Roles of a span that is part of a run, never the run itself, even when its parent is not in the input.
_PART_ROLES = frozenset({"llm", "tool", "retriever", "evaluator"})


def _annotation(item: Any) -> bool:
    """A Phoenix ``SpanAnnotation`` / ``TraceAnnotation``: ``name``, ``annotator_kind`` and the span or trace it
    judges, its verdict in ``result`` (``label``, ``score``, ``explanation``; before Phoenix 9, beside the name)."""
    return isinstance(item, dict) and isinstance(item.get("name"), str) and "annotator_kind" in item and (
        isinstance(item.get("span_id"), str) or isinstance(item.get("trace_id"), str)) and (
        isinstance(item.get("result"), dict) or "label" in item or "score" in item)


def _annotations(record: Any) -> list[dict[str, Any]]:
    """Phoenix annotations a record holds: one (``{span_id | trace_id, name, annotator_kind, result: {label,
    score, explanation}}``), a list of them (``client.spans.get_span_annotations()``), or a page of its REST API
    (``GET /v1/projects/{p}/span_annotations`` / ``trace_annotations``: ``{"data": [...], "next_cursor"}``)."""
    items = record.get("data") if _phoenix_page(record) else record
    items = items if isinstance(items, list) else [items]
    return [a for a in items if _annotation(a)] if items and all(_annotation(a) for a in items[:5]) else []


def _annotation_nodes(found: list[dict[str, Any]], seq: int) -> Iterator[tuple[str, Node, str | None]]:
    """Each annotation as a verdict on the span (or trace) it names: keyed by that id, which the reader files
    under the trace holding the span; which of them judge the run is decided once the trace is whole
    (:func:`_verdicts_on_the_run`)."""
    for n, note in enumerate(found):
        span = normal_id(note.get("span_id"), 8) if note.get("span_id") else None
        trace = normal_id(note.get("trace_id"), 16) if note.get("trace_id") else None
        key = span or trace
        if not key:
            continue
        result = note["result"] if isinstance(note.get("result"), dict) else note
        said = evaluation(note["name"], result.get("label"), result.get("score"), result.get("explanation"))
        yield key, Node(
            id=f"{_ANNOTATION}{note.get('id') or seq + n}", parent=span, role="evaluator", name=str(note["name"]),
            seq=seq + n, evaluations=[said] if said else []), None


def nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    """The span-adapter hook, shared (see ``_otlp.otlp_nodes``); a page of Phoenix's REST API with more pages
    after it says so, since a trace of this page may go on in the next one. Phoenix annotations exported beside
    the spans are verdicts on them (:func:`_annotation_nodes`)."""
    if found := _annotations(record):
        yield from _annotation_nodes(found, seq)
        return
    if rows := _frame_rows(record):
        for n, row in enumerate(rows):
            yield from otlp_nodes({k: v for k, v in row.items() if k != "index"}, ctx, seq + n)
        return
    if isinstance(record, dict) and isinstance(record.get("name"), dict) and all(isinstance(v, dict) for v in
                                                                                 record.values()):
        raise RecordError("a table pandas' to_json() wrote (a column of values per name) that is not Phoenix's spans "
                          "dataframe: it has no 'context.span_id' column")  # what the head's SIGNATURE let in
    if _phoenix_page(record) and record["next_cursor"]:
        log.warning("%s: one page of Phoenix's spans (next_cursor %r): more pages exist, and a trace of this one may "
                    "go on in them; fetch them (?cursor=...) and read the pages together, or ask for a larger limit",
                    ctx.source, record["next_cursor"])
    yield from otlp_nodes(record, ctx, seq)


def _verdicts_on_the_run(key: str, group: list[Node]) -> list[Node]:
    """The group's nodes with only the annotations that judge a run: those on a trace, hung under its first root
    span, and those on a root span itself (the agent's answer: a ``correctness`` or ``task_success`` judged on the
    whole run), on every root of the group (a conversation groups several traces, each its own root). A root is a
    span with no parent, or an agent's or chain's span whose parent is not in the input (a trace continued from an
    upstream service that exports elsewhere: Phoenix shows it as the root); a model call, tool or retrieval whose
    parent is absent (a filtered export: Phoenix's tool-calling eval reads only the LLM spans) is no root, and its
    verdict judges that span alone. So does an annotation of any other span (the tool-calling eval labels each model
    call ``correct`` / ``incorrect``, a relevance eval each retrieval): it is no verdict on the run, and is left out."""
    notes = [n for n in group if n.id.startswith(_ANNOTATION)]
    if not notes:
        return group
    spans = [n for n in group if not n.id.startswith(_ANNOTATION)]
    ids = {n.id for n in spans}
    tops = [n for n in spans if n.parent is None or n.parent not in ids]
    if not tops:
        names = ", ".join(sorted({n.name for n in notes}))
        raise RecordError(f"Phoenix annotations ({names}) of span or trace {key} with none of "
                          "the spans they judge: read them with the trace's spans (its export beside them)")
    first = min(tops, key=lambda n: (n.parent is not None, n.start is None, n.start or 0.0, n.seq))
    roots = {n.id for n in tops if n.parent is None or n.role not in _PART_ROLES}
    kept = [n for n in notes if n.parent is None or n.parent in roots]
    for n in kept:
        n.parent = n.parent or first.id
    return spans + kept


def assemble_trajectory(key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
    """The shared span assembly (``_spans.SpanFormat``), with the Phoenix annotations that judge the run; a run of
    Harbor's OTel export that ended on Claude Code's own message ends on an API error (``_otlp.harbor``)."""
    group = as_atif_run(_verdicts_on_the_run(key, group))
    return ended_on_cli_error(_FORMAT.assemble_trajectory(key, group, ctx, by), group)


# The rest of the span-adapter protocol is shared: see ``_spans.SpanFormat``.
trajectory_id = _FORMAT.trajectory_id
