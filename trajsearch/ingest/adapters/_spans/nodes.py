"""The format-neutral model of a span-shaped run: :class:`Node`, :class:`Message`, :class:`Evaluation`.

Each span adapter turns its own records (OTel spans, LangSmith runs, Langfuse
observations, Agents SDK spans...) into ``Node`` objects, one per operation,
and the spool stores them as JSON between reading and assembly; everything
after that (``messages``, ``outcome``, ``assembly``) reads nodes only. The
small value helpers every span adapter uses on raw attributes (JSON text,
nested or flattened attribute dicts, timestamps) live here with the model
since they are what a record must pass through to become a node.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Iterator

from .._agent_cli import utc_time
from .._common import clip

ROLES = ("agent", "llm", "tool", "retriever", "chain", "evaluator", "other")
#: ``Node.info`` key of a tool node whose result an exporter cut short: a whole copy of it in a later model input
#: is read over it.
RESULT_CUT = "result_cut"
#: ``Node.info`` key of a span that starts one run of several in a trace below the trace's root (the OpenAI Agents
#: SDK's ``Runner.run`` calls inside one ``trace()``): its request is a later turn's when it differs from the task.
RUN_START = "run_start"
#: ``Node.info`` key of a model call that continues a conversation its input does not hold (the Responses API's
#: ``previous_response_id`` / ``conversation``: the server keeps the history), or of a ``RUN_START`` span that does
#: (an ADK invocation the user's message started: the session keeps the conversation, whether or not a model call of
#: the turn spoke): a ``RUN_START`` run's request is a user's next message, as when its input carries the earlier
#: turns.
CONTINUES = "continues"
#: ``Node.info`` key of a tool node that is a stage of an app's workflow (an ADK 2 ``Workflow``'s function or tool
#: node): the workflow runs it after the node before it, on its output, so the model words before it are the agent's
#: answer, not the thought of code it wrote (a smolagents code agent's words, which the tool after them runs).
STAGE = "stage"
#: ``Node.info`` key of a span whose error is the framework refusing what its model said below it, not a failure of
#: its own: the name of the tool call it found no such tool for, or :data:`ANSWER` for an answer that is not the
#: structured output asked for (the OpenAI Agents SDK's "Tool not found" and "Invalid JSON provided" on its turn or
#: agent span). That call's or answer's step carries the error, as a call the AI SDK refused carries its
#: ``AI_NoSuchToolError`` (``messages.sdk_refused``): no tool ran, no chain failed on its own.
REFUSED = "refused"
ANSWER = "respond"
#: ``Node.info`` key of an embedding or rerank call (its value "embedding" or "rerank"): model work that answers no
#: one, so a trace of such calls alone holds no agent run (see ``assembly.no_agent_work``).
EMBEDS = "embeds"
#: ``Node.info`` key of a span no convention typed that records a model's messages, read as a model call: it is one
#: only where it is a leaf of the run (see ``assembly.untyped_model_calls``).
UNTYPED_MESSAGES = "untyped_messages"
#: ``Node.info`` key of the names of the tools a span says its model or agent was offered (the GenAI semantic
#: conventions' ``gen_ai.tool.definitions``): the run's ``tools_available`` (see ``assembly.span_trajectory``).
OFFERED = "tools_offered"
#: ``Node.info`` key of a stand-in: a node a run's group holds for a span traced apart from it (AI SDK 5's detached
#: ``ai.toolCall``), filed under the stand-in's id as its group key. The spool puts each such span in the place of
#: one stand-in, by time (see ``spool``); a stand-in left over stands for a span that is not in the input.
STAND_IN = "stand_in"
#: ``Node.info`` key of an agent run resumed with the results of the calls its history's last response asked for
#: (pydantic-ai's ``deferred_tool_results``; see ``conventions._new_messages``): those calls are the run's steps.
#: Known only where the run's own messages are told from its history, not from a history's first message, which
#: a chat's greeting or a trimmed window makes an assistant's too (see ``assembly._denied_calls``).
RESUMED = "resumed"


@dataclass
class Evaluation:
    name: str
    label: str | None = None
    score: float | None = None
    explanation: str | None = None


#: Longest verdict label and explanation kept: a judge's text is free, and a 100,000-character label would ride in
#: every copy of the run's metadata.
_LABEL_CHARS, _EXPLANATION_CHARS = 200, 2_000


def evaluation(name: Any, label: Any, score: Any, explanation: Any = None) -> dict[str, Any] | None:
    """An :class:`Evaluation` (as a dict) of a verdict with a label or a score; None for one with neither. The one
    reading of a verdict for every span format (a GenAI evaluation event or log, an evaluator span's output, an
    OpenInference evaluation or Phoenix annotation): a number or numeric text is the score, a bool 1.0 or none,
    a non-finite one none; a name that is no text is ``evaluation``; over-long texts are clipped."""
    if label is None and score is None:
        return None
    try:
        value = float(score) if score is not None and not isinstance(score, bool) else (1.0 if score else None)
    except (TypeError, ValueError):
        value = None
    return vars(Evaluation(
        clip(str(name), _LABEL_CHARS) if name and isinstance(name, (str, int, float)) else "evaluation",
        clip(str(label), _LABEL_CHARS) if label is not None else None,
        value if value is None or math.isfinite(value) else None,
        clip(str(explanation), _EXPLANATION_CHARS) if explanation else None))


@dataclass
class Message:
    role: str
    text: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)  # {"id", "name", "arguments"}
    call_id: str | None = None  # a tool result answering this call
    failed: bool = False  # a tool result its producer marked as an error (the AI SDK's ``error-text``)


@dataclass
class Node:
    """One operation of a run, in a format-neutral shape (JSON-serialisable for the spool)."""

    id: str
    parent: str | None
    role: str
    name: str
    start: float | None = None  # unix seconds
    end: float | None = None
    seq: int = 0  # read order, breaks start-time ties
    tool: str | None = None
    call_id: str | None = None
    arguments: Any = None
    result: str | None = None
    error: str | None = None
    input_messages: list[dict[str, Any]] = field(default_factory=list)
    output_messages: list[dict[str, Any]] = field(default_factory=list)
    input_text: str | None = None
    output_text: str | None = None
    model: str | None = None
    evaluations: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # agent name/id, conversation id, tags...

    def to_json(self) -> str:
        return json.dumps(asdict(self), default=str, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> Node:
        return cls(**json.loads(raw))


def one_node_per_id(group: list[Node], merge: Callable[[list[Node]], Node]) -> list[Node]:
    """``group`` with the nodes that share an id merged into one, in the order the ids first occur.

    An operation may be sent more than once (created in one payload, completed or updated in
    another), so a run's group can hold several versions of one node. ``merge`` gets every
    version of such an id, in the group's order, and returns the node that stands for them; how
    versions combine is the format's own rule. A group with no repeated id comes back as it is.
    """
    by_id: dict[str, list[Node]] = {}
    for node in group:
        by_id.setdefault(node.id, []).append(node)
    if all(len(v) == 1 for v in by_id.values()):
        return group
    return [versions[0] if len(versions) == 1 else merge(versions) for versions in by_id.values()]


# -- value helpers -----------------------------------------------------------------------


def text_of(value: Any) -> str:
    """Any JSON value as readable text (strings as they are)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def error_text(error: Any) -> str | None:
    """An error as text: a string as it is; the object ``{"message", "data"}`` (the Agents SDK's span error,
    which LangSmith's integration posts too) as ``message: detail``, the detail being ``data.error`` /
    ``data.message`` where present, else the rest of ``data`` as JSON; None for no error."""
    if not isinstance(error, dict) or "message" not in error:
        return text_of(error) or None if error else None
    message = text_of(error.get("message")) or "error"
    data = error.get("data")
    if isinstance(data, dict):
        detail = data.get("error") or data.get("message")
        if detail:
            return f"{message}: {text_of(detail)}"
        rest = {k: v for k, v in data.items() if v not in (None, "", [], {})}
        return f"{message}: {json.dumps(rest, ensure_ascii=False, default=str)}" if rest else message
    return f"{message}: {text_of(data)}" if data else message


def maybe_json(value: Any) -> Any:
    """Decode a JSON string (arguments, messages are often stored as strings); else unchanged. A text nested too
    deep for Python's parser (RecursionError) is left a text like any other that does not parse: one attribute's
    value must not cost the record its run."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"'):
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):
                return value
    return value


def flatten(attrs: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attribute dicts -> dotted keys (``{"input": {"value": x}}`` -> ``input.value``)."""
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def indexed(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flattened list attributes (``p.0.a``, ``p.0.b``, ``p.1.a``) -> ``[{"a", "b"}, {"a"}]``.

    The same list held whole under ``p`` (``{"p": [{"a", "b"}, {"a"}]}``: the OpenInference spec's
    span JSON and Phoenix exports write ``llm.input_messages`` so) is read alike, its items flattened.
    """
    nested = attrs.get(prefix.rstrip("."))
    if isinstance(nested, list) and nested and all(isinstance(item, dict) for item in nested):
        return [flatten(item) for item in nested]
    items: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not isinstance(key, str) or not key.startswith(prefix):
            continue
        head, _, rest = key[len(prefix):].partition(".")
        if head.isdigit() and rest:
            items.setdefault(int(head), {})[rest] = value
    return [items[i] for i in sorted(items)]


def iso_seconds(value: Any) -> float | None:
    """ISO-8601 text, unix seconds/ms/ns numbers or numeric strings -> unix seconds."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str) and value.strip().isdigit():
        number = float(value.strip())
    elif isinstance(value, str):
        when = utc_time(value)
        return when.timestamp() if when is not None else None
    else:
        return None
    if number <= 0:
        return None
    for threshold, divisor in ((1e17, 1e9), (1e14, 1e6), (1e11, 1e3)):  # ns, us, ms since the epoch
        if number > threshold:
            return number / divisor
    return number


def when(seconds: float | None) -> datetime | None:
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc) if seconds else None
    except (OverflowError, OSError, ValueError):  # a timestamp beyond any calendar is no timestamp
        return None


def ancestors(node: Node, by_id: dict[str, Node]) -> Iterator[Node]:
    """The nodes above ``node``, nearest first (each once: a parent cycle ends the walk)."""
    parent, seen = by_id.get(node.parent or ""), {node.id}
    while parent is not None and parent.id not in seen:
        yield parent
        seen.add(parent.id)
        parent = by_id.get(parent.parent or "")


def start_order(node: Node) -> tuple[float, int]:
    """Sort key of nodes in time: by start (a node without one last), then by the order they were read."""
    return (node.start if node.start is not None else float("inf"), node.seq)


def latest_first(nodes: Iterable[Node]) -> list[Node]:
    """``nodes`` the latest to start first (the last of a call's attempts: the one whose failure got out), those
    with no start after every other: when they ran is not known, so none is taken for the last."""
    return sorted(nodes, key=lambda n: (n.start is not None, start_order(n)), reverse=True)
