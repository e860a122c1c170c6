"""What the OTel GenAI and OpenInference adapters bind: ``otlp_nodes`` and :class:`OtlpFormat`.

The two halves of the span-adapter protocol for spans read through this
package: every span and GenAI log record of a record as a node
(:func:`otlp_nodes`, by ``shapes``, ``conventions`` and ``events``), and a
trace's nodes as a trajectory (:class:`OtlpFormat`: log events merged, spans
read twice kept once, the task optionally the latest user message, a trace
without any recorded input still a run when the format asks for it).
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any, Iterator

from trajsearch.actions import not_run
from trajsearch.model import Trajectory

from .._common import Context, PassedOver, RecordError, clip_task
from .._spans import (
    RESULT_CUT,
    Message,
    Node,
    SpanFormat,
    first_user_text,
    in_tree_order,
    maybe_json,
    no_agent_work,
    retry_feedback,
    span_trajectory,
    start_order,
    task_from_input,
    untyped_model_calls,
    user_requests,
)
from .conventions import MONOCLE, cut_runner_request, node_from_span
from .events import merge_events, node_from_log
from .shapes import SDK_CUT, ZIPKIN_CUT, raw_items, shared_lengths, uncut_span
from .values import attributes

log = logging.getLogger(__name__)


def otlp_nodes(record: Any, ctx: Context, seq: int = 0) -> Iterator[tuple[str, Node, str | None]]:
    """(trace id, node, conversation id) for every span and GenAI log event of one record.

    The adapter ``nodes`` of OTel GenAI and OpenInference (see the module
    docstring); ``ctx`` is unused, kept for the adapter protocol. A GenAI log
    record without ids is reported after the record's other items are kept.
    """
    orphans: list[str] = []
    items = list(raw_items(record))
    shared = shared_lengths(item for kind, _, item in items if kind == "span")  # (a cut limit: see shapes)
    for n, (kind, resource, item) in enumerate(items):
        if kind == "span":
            item = item if "tags_cut" in item else uncut_span(item, shared=shared)
            trace, node, conversation = node_from_span(item, resource, seq + n)
            if cut := item.get("tags_cut"):  # (see shapes: a span whose values the SDK or exporter cut)
                node = _read_cut(item, resource, seq + n, node, cut)
            if deferred := _deferred_requests(attributes(item.get("attributes")).get("final_result")):
                node.info[_DEFERRED] = deferred
            yield trace, node, conversation
            continue
        try:
            found = node_from_log(item, seq + n)
        except RecordError as exc:
            orphans.append(str(exc))
            continue
        if found is not None:
            yield found[0], found[1], None
    if orphans:
        more = f" (+{len(orphans) - 1} more)" if len(orphans) > 1 else ""
        raise RecordError(orphans[0] + more)


def _cut_mark(cut: dict[str, Any]) -> str:
    return f"… [cut at {cut['at']} characters by {cut['by']}]"


def _read_cut(span: dict[str, Any], resource: dict[str, Any], seq: int, node: Node, cut: dict[str, Any]) -> Node:
    """``node`` of a span whose values the SDK or exporter cut (see ``shapes``), noting the cut. A tool's span is
    read again with its cut tags as the cut texts they are, marked as cut: what a tool was given and returned stays that up to
    the cut (a message list cut into fragments is no message: only its whole messages are read, by ``shapes``).
    A cut ADK runner input (the root of an ADK trace) gives the user's words where they are whole before the cut."""
    texts: dict[str, str] = cut.get("texts") or {}
    event_texts: dict[int, dict[str, str]] = cut.get("event_texts") or {}
    if node.role == "tool" and (texts or event_texts):
        def marked(values: dict[str, Any], cut_texts: dict[str, str]) -> dict[str, Any]:
            return {**values, **{key: text + _cut_mark(cut) for key, text in cut_texts.items()}}
        events = [{**ev, "attributes": marked(ev["attributes"], event_texts.get(n, {}))}
                  for n, ev in enumerate(cut["events"])]
        again = {**span, "attributes": marked(span["attributes"], texts), "events": events}
        uncut, node = node, node_from_span(again, resource, seq)[1]
        if node.result != uncut.result:  # (a later model input holding the whole result is read over it)
            node.info[RESULT_CUT] = True
    elif node.input_text is None and "input.value" in texts \
            and (said := cut_runner_request(texts["input.value"])) is not None:
        node.input_text = said[0] if said[1] else said[0] + _cut_mark(cut)
    node.info["tags_cut"] = {"keys": cut["keys"], "at": cut["at"], "by": cut["by"]}
    return node


#: Framework wording around the user's words in the first user message (smolagents' "New task:").
_TASK_WRAPPER = re.compile(r"^\s*New task:\s*\n")


def _user_turns(nodes: list[Node]) -> list[str] | None:
    """The user messages of the message list the task is read from (None when the task comes from a root
    input text instead, see ``_spans.assembly._task``)."""
    order = in_tree_order(nodes)
    if not order:
        return None
    root = order[0][0]
    if first_user_text(root.input_messages):
        messages = root.input_messages
    elif task_from_input(root.input_text):
        return None
    else:
        messages = next((n.input_messages for n, _ in order
                         if n.role in ("llm", "agent") and first_user_text(n.input_messages)), [])
    return user_requests(messages)


def _instruction(text: str) -> str:
    return clip_task(_TASK_WRAPPER.sub("", text).strip() or text.strip())


def current_instruction(nodes: list[Node]) -> str | None:
    """The run's own instruction: the *latest* user message of the message list the task is read from.

    A chat app sends a conversation's whole history with every call, so the
    first user message of a call is where the conversation started, not what
    this run was asked; the latest one is. None when the task comes from a
    root input text instead (see ``_spans.assembly._task``).
    """
    users = _user_turns(nodes)
    return _instruction(users[-1]) if users else None


def with_current_instruction(run: Trajectory, nodes: list[Node], *, only_over_first: bool = False) -> Trajectory:
    """``run`` with the latest user message as its task (:func:`current_instruction`); with ``only_over_first``,
    only where the task is where that conversation started (its first user message), not a task an app's
    entry span or a framework's prompt gave."""
    users = _user_turns(nodes)
    task = _instruction(users[-1]) if users else None
    if not task or task == run.task:
        return run
    if only_over_first and (len(users or []) < 2 or _instruction(users[0]) != run.task):
        return run
    return run.model_copy(update={"task": task})


def _team_turns(nodes: list[Node]) -> list[Node]:
    """An AutoGen team's turns as the runtime recorded them (``info["agent_reply"]``, see ``conventions``) made
    model answers where no model call recorded an answer (content capture off, AutoGen's default), so each agent's
    turn is a step; dropped otherwise (the model calls' own answers are those turns). Where the runtime recorded
    no turn (Semantic Kernel's), the answers the agents' spans recorded are read in a run of linked traces
    (:func:`_agent_answers`). The links that tied the team's traces together (``info["caused_by"]``, read by the
    spool) are no metadata of the run."""
    answered = any(n.role == "llm" and n.output_messages for n in nodes)
    if not answered and any(n.info.get("caused_by") for n in nodes) \
            and not any(n.info.get("agent_reply") for n in nodes):
        nodes = _agent_answers(nodes)
    out = []
    for node in nodes:
        reply, info = node.info.get("agent_reply"), {k: v for k, v in node.info.items()
                                                     if k not in ("agent_reply", "caused_by")}
        if reply and not answered:
            out.append(replace(node, role="llm", info={**info, "agent_name": reply["agent"]},
                               output_messages=[asdict(Message("assistant", reply["text"]))]))
        else:
            out.append(replace(node, info=info) if info != node.info else node)
    return out


def _agent_answers(nodes: list[Node]) -> list[Node]:
    """``nodes`` with the answer each agent below the root recorded (an ``invoke_agent`` span's
    ``gen_ai.output.messages``) as what its last model call said: Semantic Kernel's orchestrations run each agent
    in a trace of its own, below the runtime's spans, and write the model calls' content to log records, not to
    the ``chat`` spans; without those logs the agents' spans alone hold what each said (a root's answer is read
    as a root's is)."""
    ids, kids = {n.id for n in nodes}, {}
    for n in nodes:
        kids.setdefault(n.parent, []).append(n)
    last: dict[str, list[dict[str, Any]]] = {}  # the model call's id -> the answer its agent recorded
    for agent in nodes:
        said = [m for m in agent.output_messages if m.get("role") == "assistant" and (m.get("text") or "").strip()]
        if agent.role == "agent" and agent.parent in ids and said and (calls := _own_model_calls(agent, kids)):
            last[max(calls, key=lambda n: (n.end or 0, n.seq)).id] = said
    return [replace(n, output_messages=last[n.id]) if n.id in last else n for n in nodes]


def _own_model_calls(agent: Node, kids: dict[str | None, list[Node]]) -> list[Node]:
    """The model calls below ``agent``, not below an agent of its own."""
    calls, below = [], list(kids.get(agent.id, ()))
    while below:
        node = below.pop()
        if node.role == "llm":
            calls.append(node)
        elif node.role != "agent":
            below += kids.get(node.id, ())
    return calls


def _rejected_answers(run: Trajectory, nodes: list[Node]) -> Trajectory:
    """``run`` with each answer the application rejected marked so: pydantic-ai asks its model for another answer
    when an output validator or function raised ``ModelRetry`` (or a text output failed validation) by a user
    message after that answer (:func:`~.._spans.retry_feedback`); the answer it followed carries that feedback as
    its error, as a tool call it refused does."""
    rejected: dict[str, str] = {}
    for node in nodes:
        said: str | None = None
        for m in node.input_messages:
            if m.get("role") in ("assistant", "model") and (m.get("text") or "").strip():
                said = m["text"]
            elif m.get("role") == "user" and said and (feedback := retry_feedback(m.get("text"))) is not None:
                rejected.setdefault(said.strip(), feedback)
    if not rejected:
        return run
    steps = [s.model_copy(update={"error": f"rejected by the application: {rejected[said]}"[:600]})
             if s.action == "respond" and s.error is None and isinstance(s.arguments, dict)
             and isinstance(said := s.arguments.get("content"), str) and said.strip() in rejected else s
             for s in run.steps]
    return run.model_copy(update={"steps": steps})


#: ``Node.info`` key of the calls a pydantic-ai run stopped on (:func:`_deferred_requests`), read off by the adapter.
_DEFERRED = "deferred_calls"
#: Why each kind of deferred call did not run, as its step's error.
_AWAITS = {"approvals": not_run("awaiting the user's approval (pydantic-ai stopped the run for it: "
                                 "DeferredToolRequests)"),
           "calls": not_run("left to the application to run (pydantic-ai stopped the run for it: "
                            "DeferredToolRequests)")}


def _deferred_requests(value: Any) -> list[dict[str, Any]] | None:
    """The calls a pydantic-ai run stopped on, where its agent span's ``final_result`` is a ``DeferredToolRequests``
    (``pydantic_ai/_deferred.py``: ``approvals``, calls of tools declared ``requires_approval`` or that raised
    ``ApprovalRequired``; ``calls``, external tools the application runs): each as ``{"kind", "name", "args"}``.
    Such a call never ran (no ``execute_tool`` span): the run ended waiting for it. Else None."""
    value = maybe_json(value)
    if not (isinstance(value, dict) and {"calls", "approvals"} <= set(value)):
        return None
    found = [{"kind": kind, "name": part.get("tool_name"), "args": maybe_json(part.get("args"))}
             for kind in ("approvals", "calls") for part in value.get(kind) or [] if isinstance(part, dict)]
    return found or None


def _awaiting(nodes: list[Node]) -> tuple[list[Node], list[dict[str, Any]]]:
    """The nodes without the deferred calls noted on them (see :func:`_deferred_requests`), and those calls."""
    waiting = [c for n in nodes for c in n.info.get(_DEFERRED) or []]
    return [replace(n, info={k: v for k, v in n.info.items() if k != _DEFERRED}) if _DEFERRED in n.info else n
            for n in nodes], waiting


def _stopped_for(run: Trajectory, waiting: list[dict[str, Any]]) -> Trajectory:
    """``run`` with each call it stopped on (see :func:`_deferred_requests`) that no later step answered marked not
    run, why in its error, and, where nothing else decided its outcome, its ``outcome_basis`` saying the run stopped
    for them (a conversation whose next run got the approval and ran the call keeps it as it ran)."""
    if not waiting:
        return run
    steps, left, marked = list(run.steps), list(waiting), []
    for i, step in enumerate(steps):
        call = next((c for c in left
                     if c["name"] == step.action and (c["args"] is None or c["args"] == step.arguments)), None)
        if call is not None and step.observation is None and step.error is None:  # (answered later: it ran)
            steps[i] = step.model_copy(update={"error": _AWAITS[call["kind"]]})
            left.remove(call)
            marked.append(call)
    if not marked:
        return run
    approvals = sorted({str(c["name"]) for c in marked if c["kind"] == "approvals"})
    external = sorted({str(c["name"]) for c in marked if c["kind"] == "calls"})
    said = "; ".join([*([f"stopped awaiting approval of {', '.join(approvals)}"] if approvals else []),
                      *([f"stopped for the application to run {', '.join(external)}"] if external else [])])
    metadata = run.metadata if run.metadata.get("outcome_basis") else {**run.metadata, "outcome_basis": said}
    return run.model_copy(update={"steps": steps, "metadata": metadata})


def _builds_agent(node: Node) -> bool:
    """A ``create_agent`` span: OpenLIT writes one each time an agent object is built (``Agent.__init__``),
    AutoGen when it registers one; or a ``workflow.build`` span: Microsoft Agent Framework writes one each time a
    workflow is built (``WorkflowBuilder.build()``, so every orchestration builder's ``build()``; the run is an
    ``invoke_workflow`` trace of its own). Built outside a run (at start-up, per request) it is a trace of its own."""
    return node.name.startswith("create_agent") or node.name == "workflow.build"


#: The span Haystack 2.x starts at ``import haystack`` to test whether an OTel tracer provider records
#: (``haystack/tracing/tracer.py`` ``_auto_configured_opentelemetry_tracer``): a trace of its own in every traced
#: Haystack process, before and apart from any run (an ImportError on it is Haystack's import, not a run's failure).
_HAYSTACK_PROBE = "haystack.tracing.auto_enable"


#: How to keep each cutter from cutting: said with every cut it made.
_UNCUT = {ZIPKIN_CUT: "the OpenTelemetry Python Zipkin exporter cuts every tag at 128 characters unless told "
                      "otherwise: export with ZipkinExporter(max_tag_value_length=...) raised, or with OTLP",
          SDK_CUT: "the OpenTelemetry SDK cuts every attribute value at OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT characters "
                   "when it is set (or SpanLimits(max_attribute_length=...) in code): export with it unset or raised"}


def _cut_note(nodes: list[Node]) -> tuple[list[Node], str | None, str]:
    """The nodes without the cuts they noted (see ``shapes``: a span's values the SDK or exporter cut), what
    the run's metadata says of them (None when nothing was cut), and who cut them."""
    cuts = [n.info["tags_cut"] for n in nodes if n.info.get("tags_cut")]
    if not cuts:
        return nodes, None, ""
    notes, cutters = [], sorted({cut["by"] for cut in cuts}, reverse=True)  # (the exporter's 128 first, as it was)
    for by in cutters:
        mine = [cut for cut in cuts if cut["by"] == by]
        keys = ", ".join(sorted({k for cut in mine for k in cut["keys"]}))
        notes.append(f"{keys} cut at {max(cut['at'] for cut in mine)} characters by {by}; {_UNCUT[by]}")
    return [replace(n, info={k: v for k, v in n.info.items() if k != "tags_cut"}) if "tags_cut" in n.info else n
            for n in nodes], "; ".join(notes), " and ".join(cutters)


@lru_cache(maxsize=64)
def _warn_of_cut(source: str) -> None:
    """Says once per file that the SDK or exporter cut span attributes (each run read from it says which, in its
    metadata ``tags_cut``)."""
    log.warning("%s: span attributes cut by the SDK or exporter (see each run's metadata 'tags_cut', which says "
                "how to keep them whole): only the whole messages of a cut message list are read, a tool's cut "
                "input and output as cut", source)


def _noted(run: Trajectory, note: str | None, ctx: Context) -> Trajectory:
    """``run`` with the SDK's or exporter's cuts (see :func:`_cut_note`) in its metadata, ``tags_cut``."""
    if note is None:
        return run
    _warn_of_cut(str(ctx.source))
    return run.model_copy(update={"metadata": {**run.metadata, "tags_cut": note}})


@dataclass(frozen=True)
class OtlpFormat(SpanFormat):
    """A span format read through this package: log events merged, spans read twice kept once.

    With ``latest_user_message`` the task is the latest user message of the
    first message list (see :func:`current_instruction`). With
    ``name_when_no_input``, a trace whose spans record no input at all
    (content capture off: ``opentelemetry-instrumentation-openai-v2`` keeps
    prompts out of spans and logs unless told otherwise) is still a run: its
    task names the operation that ran and says that no input was recorded
    (``metadata.task_source = "span name"``), rather than the run being lost;
    so is, in any span format, a trace whose input the SDK or exporter cut
    (see ``shapes``), its task saying so and its metadata ``tags_cut`` what
    was cut and how to keep it whole.
    A trace whose only model work is embedding or rerank calls (a RAG app's
    query embedding: see ``_spans.no_agent_work``) and a trace that only builds
    agents or workflows (``create_agent`` or ``workflow.build`` spans alone)
    or only tests whether tracing records (Haystack's ``haystack.tracing.auto_enable``)
    hold no run and nothing wrong: they are passed over (``PassedOver``: the
    read says so at info level and the ingest counts them by reason). Other
    traces of no agent work and no input are rejected.
    """

    name_when_no_input: bool = False
    #: True, or "over first": only where the task is the history's first user message (see with_current_instruction)
    latest_user_message: bool | str = False

    def assemble_trajectory(self, key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
        nodes, waiting = _awaiting(untyped_model_calls(merge_events(group)))
        nodes, cut, cutters = _cut_note(_team_turns(nodes))
        if (why := no_agent_work(nodes)) is not None:
            raise PassedOver(why, f"not an agent run: {why}")
        try:
            run = span_trajectory(self.name, self.prefix, key, nodes, ctx, by=by)
            run = _stopped_for(_rejected_answers(run, nodes), waiting)
            return _noted(with_current_instruction(run, nodes, only_over_first=self.latest_user_message == "over first")
                          if self.latest_user_message else run, cut, ctx)
        except RecordError as exc:
            if not (nodes and str(exc).startswith("no task")):
                raise
            if any(n.info.get("convention") == "monocle" for n in nodes):
                raise RecordError(f"not read: the {by} holds {MONOCLE}") from None
            if all(_builds_agent(n) for n in nodes):
                built = "a workflow" if all(n.name == "workflow.build" for n in nodes) else "an agent"
                names = ", ".join(sorted({n.name for n in nodes}))
                raise PassedOver(f"only builds {built}", f"it only builds {built} ({names}), no run of it") from None
            if all(n.name == _HAYSTACK_PROBE for n in nodes):
                raise PassedOver("only tests tracing", f"it only tests whether tracing records ({_HAYSTACK_PROBE}, "
                                 "written by Haystack at import), no run") from None
            if not any(n.role in ("llm", "tool", "agent", "chain", "retriever") and not _builds_agent(n)
                       for n in nodes):
                kinds = ", ".join(sorted({n.name.split(" ", 1)[0] for n in nodes}))
                raise RecordError(f"not an agent run: the {by} holds only {kinds} spans and no input") from None
            if not (self.name_when_no_input or cut):  # an input cut is no input missing: still a run
                raise
        said = f"input cut by {cutters}" if cut else "no input recorded"
        return _noted(run_named_by_root(self, key, nodes, ctx, by, said), cut, ctx)


def run_named_by_root(fmt: SpanFormat, key: str, nodes: list[Node], ctx: Context, by: str, said: str,
                      label: str | None = None) -> Trajectory:
    """The run of a trace whose spans record no input (content capture off, a privacy switch), its task the
    root span's name (or ``label``) and ``said``, why there is no input; ``metadata.task_source = "span name"``."""
    ids = {n.id for n in nodes}
    roots = [n for n in nodes if not n.parent or n.parent not in ids or n.parent == n.id]
    root = min(roots or nodes, key=start_order)
    nodes = [replace(n, input_text=f"{label or root.name} ({said})") if n is root else n for n in nodes]
    run = span_trajectory(fmt.name, fmt.prefix, key, nodes, ctx, by=by)
    return run.model_copy(update={"metadata": {**run.metadata, "task_source": "span name"}})
