"""Span-shaped traces -> trajectories: what OTel GenAI, OpenInference, LangSmith and Langfuse share.

Those four formats record a run as a tree of timed operations (spans, runs,
observations). Each adapter turns its own records into :class:`Node` objects
(one per operation, with a role: ``agent``, ``llm``, ``tool``, ``retriever``,
``chain``, ``evaluator`` or ``other``); :func:`assemble` then builds the steps,
the task and the outcome the same way for all of them:

- order: depth first from the roots, siblings by start time (then by the order
  they were read), so a tool call sits after the model call that asked for it;
- a ``tool`` node is a step: action = tool name, arguments = the call's
  arguments (JSON-decoded), observation = its result, error = its error
  (error type / exception event / error status); a ``retriever`` node is a step
  whose observation is what came back;
- an ``llm`` node is not a step of its own: its text becomes the thought of
  the tool steps it requested (matched by tool-call id, else by tool name,
  else the next tool step); tool calls it requested that no tool node executed
  become steps too, with the result taken from a later model input message
  (role ``tool``, same call id); text that requested no tool is the agent
  talking: a ``respond`` step (arguments ``{"content": text}``);
- task: the first user message of the root (or of the first model call), else
  the root's input;
- outcome: from explicit evaluations only (see :func:`outcome_from`), else an
  error status on the root (failure, or infra_error for timeouts, rate limits,
  5xx and connection errors), else ``unknown``: a clean exit is not a success.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator

from trajsearch.model import Failure, Outcome, Trajectory

from ._common import Context, RecordError, build, clip_step_text, clip_task, safe_id, short

ROLES = ("agent", "llm", "tool", "retriever", "chain", "evaluator", "other")

#: Evaluation labels that decide an outcome (lower-cased, compared whole).
PASS_LABELS = frozenset(
    {"pass", "passed", "success", "succeeded", "successful", "correct", "resolved", "accepted", "completed",
     "complete", "solved"}
)
FAIL_LABELS = frozenset(
    {"fail", "failed", "failure", "incorrect", "unresolved", "rejected", "wrong", "not_resolved", "unsolved",
     "not_completed", "incomplete"}
)
#: Evaluations whose numeric score of exactly 1 / 0 means success / failure.
OUTCOME_METRICS = frozenset(
    {"success", "task_success", "correctness", "correct", "resolved", "pass", "passed", "outcome",
     "task_completion", "task_completed", "goal_completion", "solved"}
)
_INFRA = re.compile(
    r"time.?out|timed out|rate.?limit|\b429\b|\b5\d\d\b|unavailable|connection|internal.?server|overloaded|"
    r"apierror|api_error|service.?error|gateway",
    re.I,
)
_USERISH = ("user", "human")


@dataclass
class Evaluation:
    name: str
    label: str | None = None
    score: float | None = None
    explanation: str | None = None


@dataclass
class Message:
    role: str
    text: str = ""
    reasoning: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)  # {"id", "name", "arguments"}
    call_id: str | None = None  # a tool result answering this call


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


# -- value helpers -----------------------------------------------------------------------


def text_of(value: Any) -> str:
    """Any JSON value as readable text (strings as they are)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def maybe_json(value: Any) -> Any:
    """Decode a JSON string (arguments, messages are often stored as strings); else unchanged."""
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"'):
            try:
                return json.loads(stripped)
            except ValueError:
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
    """Flattened list attributes (``p.0.a``, ``p.0.b``, ``p.1.a``) -> ``[{"a", "b"}, {"a"}]``."""
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
        try:
            when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        return (when if when.tzinfo else when.replace(tzinfo=timezone.utc)).timestamp()
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


# -- messages ----------------------------------------------------------------------------


def _content_text(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message ``content`` that may be a list of typed parts."""
    if isinstance(content, str):
        return content, ""
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return text_of(content), ""
    texts, reasoning = [], []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            kind = str(part.get("type") or part.get("message_content.type") or "text")
            body = part.get("content", part.get("text", part.get("message_content.text")))
            if kind in ("reasoning", "thinking"):
                reasoning.append(text_of(body if body is not None else part.get("thinking")))
            elif kind == "text" and body is not None:
                texts.append(text_of(body))
    return "\n".join(t for t in texts if t), "\n".join(r for r in reasoning if r)


def normalise_message(raw: Any) -> Message | None:
    """One chat message in any of the shapes these formats use, or None.

    Shapes: GenAI semconv ``{"role", "parts": [text | tool_call | tool_call_response | reasoning]}``;
    OpenAI ``{"role", "content", "tool_calls": [{"id", "function": {"name", "arguments"}}], "tool_call_id"}``;
    OpenInference flattened ``{"message.role", "message.content", "message.tool_calls.N.tool_call.*"}``;
    LangChain ``{"type": "human"|"ai"|"tool", "content"|"data": {...}}``.
    """
    if isinstance(raw, str):
        return Message("user", raw)
    if not isinstance(raw, dict):
        return None
    if any(k.startswith("message.") for k in raw):
        calls = [
            {
                "id": c.get("tool_call.id"),
                "name": c.get("tool_call.function.name"),
                "arguments": maybe_json(c.get("tool_call.function.arguments")),
            }
            for c in indexed(raw, "message.tool_calls.")
        ]
        text, reasoning = _content_text(raw.get("message.content") or "")
        if not text and (parts := indexed(raw, "message.contents.")):
            text, reasoning = _content_text(parts)
        return Message(str(raw.get("message.role") or "user"), text, reasoning, calls, raw.get("message.tool_call_id"))
    if "data" in raw and isinstance(raw["data"], dict) and "type" in raw:  # LangChain message dict
        raw = dict(raw["data"], type=raw["type"])
    elif isinstance(raw.get("kwargs"), dict) and isinstance(raw.get("id"), list):  # LangChain "lc" serialisation
        kind = str(raw["id"][-1]).lower().removesuffix("messagechunk").removesuffix("message")
        raw = dict(raw["kwargs"], type=kind)
    role = str(raw.get("role") or raw.get("type") or "user").lower()
    role = {"human": "user", "ai": "assistant", "function": "tool", "chat": "user"}.get(role, role)
    msg = Message(role)
    if isinstance(raw.get("parts"), list):
        texts = []
        for part in raw["parts"]:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(text_of(part.get("content")))
            elif kind in ("reasoning", "thinking"):
                msg.reasoning += text_of(part.get("content"))
            elif kind == "tool_call":
                msg.calls.append({"id": part.get("id"), "name": part.get("name"), "arguments": maybe_json(part.get("arguments"))})
            elif kind == "tool_call_response":
                msg.call_id = part.get("id")
                texts.append(text_of(part.get("response", part.get("result"))))
        msg.text = "\n".join(t for t in texts if t)
        return msg
    msg.text, msg.reasoning = _content_text(raw.get("content"))
    if raw.get("reasoning_content"):
        msg.reasoning = text_of(raw["reasoning_content"])
    calls = maybe_json(raw.get("tool_calls"))  # a list, or that list as a JSON string
    for call in calls if isinstance(calls, list) else indexed(raw, "tool_calls."):
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else call
            msg.calls.append({"id": call.get("id"), "name": fn.get("name"), "arguments": maybe_json(fn.get("arguments", fn.get("args")))})
    msg.call_id = raw.get("tool_call_id")
    return msg


def normalise_messages(raw: Any) -> list[dict[str, Any]]:
    """A list (or JSON string of a list, or nested LangChain ``[[...]]``) of messages -> dicts."""
    raw = maybe_json(raw)
    if isinstance(raw, dict):
        for key in ("messages", "input", "prompt"):
            if isinstance(raw.get(key), list):
                raw = raw[key]
                break
        else:
            raw = [raw]
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list):
        raw = raw[0]
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return []
    out = []
    for item in raw:
        msg = normalise_message(item)
        if msg is not None:
            out.append(asdict(msg))
    return out


def first_user_text(messages: list[dict[str, Any]]) -> str | None:
    for msg in messages:
        if msg.get("role") in _USERISH and msg.get("text", "").strip():
            return msg["text"]
    return None


def task_from_input(value: Any) -> str | None:
    """The instruction inside a root input: a string, or the usual keys of an inputs dict."""
    value = maybe_json(value)
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict):
        for key in ("task", "instruction", "input", "question", "query", "prompt", "goal", "user_input", "message", "content", "text"):
            found = value.get(key)
            if isinstance(found, str) and found.strip():
                return found.strip()
            if isinstance(found, (dict, list)):
                nested = task_from_input(found)
                if nested:
                    return nested
        messages = normalise_messages(value.get("messages")) if "messages" in value else []
        if text := first_user_text(messages):
            return text
        return json.dumps(value, ensure_ascii=False, default=str) if value else None
    if isinstance(value, list):
        if text := first_user_text(normalise_messages(value)):
            return text
    return None


# -- outcome -----------------------------------------------------------------------------


def outcome_from(evaluations: Iterable[Evaluation]) -> tuple[Outcome, float | None, Evaluation | None]:
    """(outcome, reward, deciding evaluation) from explicit evaluations; unknown without one.

    A label in :data:`FAIL_LABELS` / :data:`PASS_LABELS` decides (any failing
    verdict wins over passing ones); else a score of exactly 1 or 0 on an
    evaluation named like :data:`OUTCOME_METRICS`. Other scores are kept as the
    reward (of the first such evaluation) without deciding the outcome.
    """
    evaluations = list(evaluations)
    verdicts: list[tuple[Outcome, Evaluation]] = []
    for ev in evaluations:
        label = (ev.label or "").strip().lower().replace(" ", "_")
        if label in FAIL_LABELS:
            verdicts.append((Outcome.failure, ev))
        elif label in PASS_LABELS:
            verdicts.append((Outcome.success, ev))
        elif ev.score is not None and ev.name.strip().lower().replace(" ", "_") in OUTCOME_METRICS and ev.score in (0, 1):
            verdicts.append((Outcome.success if ev.score == 1 else Outcome.failure, ev))
    chosen = next((v for v in verdicts if v[0] is Outcome.failure), verdicts[0] if verdicts else None)
    if chosen:
        return chosen[0], chosen[1].score, chosen[1]
    scored = next((ev for ev in evaluations if ev.score is not None), None)
    return Outcome.unknown, scored.score if scored else None, None


def error_outcome(error: str) -> Outcome:
    return Outcome.infra_error if _INFRA.search(error) else Outcome.failure


# -- assembly ----------------------------------------------------------------------------


def _ordered(nodes: list[Node]) -> list[tuple[Node, int]]:
    """Depth-first from the roots, siblings by (start, read order): (node, depth)."""
    by_id = {n.id: n for n in nodes}
    children: dict[str | None, list[Node]] = {}
    for n in nodes:
        parent = n.parent if n.parent in by_id and n.parent != n.id else None
        children.setdefault(parent, []).append(n)
    key = lambda n: (n.start if n.start is not None else float("inf"), n.seq)  # noqa: E731
    out: list[tuple[Node, int]] = []
    seen: set[str] = set()
    stack = [(n, 0) for n in sorted(children.get(None, []), key=key, reverse=True)]
    while stack:
        node, depth = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        out.append((node, depth))
        stack.extend((c, depth + 1) for c in sorted(children.get(node.id, []), key=key, reverse=True))
    # nodes caught in a parent cycle: keep them, in time order, at the end
    out.extend((n, 0) for n in sorted((n for n in nodes if n.id not in seen), key=key))
    return out


@dataclass
class Assembled:
    task: str
    steps: list[dict[str, Any]]
    outcome: Outcome
    reward: float | None
    failure: Failure | None
    created_at: datetime | None
    model_id: str | None
    root: Node
    metadata: dict[str, Any]


def assemble(nodes: list[Node], *, what: str = "trace", task: str | None = None) -> Assembled:
    """Steps, task and outcome of one run from its nodes (see the module docstring).

    ``task``: the adapter already knows the run's instruction (Langfuse, LangSmith): not searched for.
    """
    if not nodes:
        raise RecordError(f"empty {what}: no spans")
    order = _ordered(nodes)
    root = order[0][0]
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    pending: list[dict[str, Any]] = []  # calls requested by a model, not yet matched to a tool node
    evaluations: list[Evaluation] = []
    models: list[str] = []
    failed_containers: list[Node] = []

    def add_step(step: dict[str, Any]) -> dict[str, Any]:
        steps.append(step)
        return step

    for node, _depth in order:
        evaluations.extend(Evaluation(**e) for e in node.evaluations)
        if node.model:
            models.append(node.model)
        if node.role == "llm":
            outputs = [Message(**m) for m in node.output_messages]
            inputs = [Message(**m) for m in node.input_messages]
            for msg in inputs:  # results of calls no tool node executed arrive as model input
                if msg.role == "tool" and msg.call_id in by_call and by_call[msg.call_id].get("observation") is None:
                    by_call[msg.call_id]["observation"] = clip_step_text(msg.text)
            text = "\n".join(m.text for m in outputs if m.role != "tool" and m.text).strip()
            if not text and not outputs:
                text = (node.output_text or "").strip()
            reasoning = "\n".join(m.reasoning for m in outputs if m.reasoning).strip()
            calls = [c for m in outputs for c in m.calls if c.get("name")]
            if calls:
                for n, call in enumerate(calls):
                    pending.append({"call": call, "thought": (reasoning or text) if n == 0 else None, "at": node.end})
            elif text:
                add_step({"thought": reasoning or None, "action": "respond", "arguments": {"content": text},
                          "started_at": when(node.start), "ended_at": when(node.end), "error": node.error})
            continue
        if node.role in ("tool", "retriever"):
            name = node.tool or node.name or ("retrieve" if node.role == "retriever" else "tool")
            match = next((p for p in pending if node.call_id and p["call"].get("id") == node.call_id), None)
            match = match or next((p for p in pending if p["call"].get("name") == name), None)
            # a model call that asked for *something* just before: its text is the reason for this step
            thought = None
            if match:
                pending.remove(match)
                thought = match["thought"]
            arguments = node.arguments if node.arguments is not None else (match or {}).get("call", {}).get("arguments")
            step = add_step({
                "thought": thought, "action": name[:200], "arguments": maybe_json(arguments),
                "observation": clip_step_text(node.result) if node.result is not None else None,
                "error": short(node.error, 600) if node.error else None,
                "started_at": when(node.start), "ended_at": when(node.end),
            })
            if node.call_id:
                by_call[node.call_id] = step
            continue
        if node.role in ("agent", "chain") and node is not root and node.error:
            failed_containers.append(node)
    for p in pending:  # calls whose execution was not traced: keep them, results from model inputs
        call = p["call"]
        step = {"thought": p["thought"], "action": str(call.get("name"))[:200], "arguments": call.get("arguments"),
                "observation": None, "ended_at": when(p["at"])}
        steps.append(step)
        if call.get("id"):
            by_call[call["id"]] = step
    if not any(s.get("error") for s in steps):
        # a sub-agent or chain failed with no failing step below it: keep the failure visible as a step,
        # placed where the failure surfaced (the container's end), after the steps it ran
        for node in failed_containers:
            steps.append({"action": None, "thought": f"{node.role} {node.name} failed", "error": short(node.error, 600),
                          "started_at": when(node.end or node.start), "ended_at": when(node.end)})
    # second pass: results of untraced calls that only appear in later model inputs
    for node, _ in order:
        for m in node.input_messages:
            if m.get("role") == "tool" and m.get("call_id") in by_call and by_call[m["call_id"]].get("observation") is None:
                by_call[m["call_id"]]["observation"] = clip_step_text(m.get("text"))
    steps.sort(key=lambda s: (s.get("started_at") or s.get("ended_at") or datetime.max.replace(tzinfo=timezone.utc)))
    for index, step in enumerate(steps):
        step["index"] = index
        if isinstance(step.get("thought"), str):
            step["thought"] = clip_step_text(step["thought"]) or None

    task = clip_task(task.strip()) if task and task.strip() else _task(order)
    outcome, reward, deciding = outcome_from(evaluations)
    failure = None
    basis = f"evaluation {deciding.name!r}" if deciding else None
    root_error = root.error
    if outcome is Outcome.unknown and root_error:
        outcome = error_outcome(root_error)
        basis = "error status of the root span"
    if outcome in (Outcome.failure, Outcome.infra_error):
        last = next((s for s in reversed(steps) if s.get("error")), None)
        if root_error:
            error = short(root_error, 600)
        elif deciding is not None:
            error = f"evaluation {deciding.name}: {deciding.label or deciding.score}"
            if last:
                error += f"; last step error: {last['action']} -> {last['error']}"
        else:
            error = f"last failing step {last['index']}: {last['error']}" if last else "failed"
        cause = deciding.explanation if deciding and deciding.explanation else None
        if outcome is Outcome.infra_error and not cause:
            cause = "infrastructure: a timeout, rate limit or service error, not the agent's reasoning"
        failure = Failure(error=error, cause=short(cause, 2000) if cause else None)
    starts = [n.start for n in nodes if n.start]
    metadata: dict[str, Any] = {
        "spans": len(nodes),
        "root_span": root.name,
        **({"outcome_basis": basis} if basis else {}),
        **({"evaluations": [asdict(e) for e in evaluations[:10]]} if evaluations else {}),
        **{k: v for k, v in root.info.items() if v not in (None, "", [], {})},
    }
    return Assembled(
        task=task, steps=steps, outcome=outcome, reward=reward, failure=failure,
        created_at=when(min(starts)) if starts else None, model_id=models[0] if models else None,
        root=root, metadata=metadata,
    )


def _task(order: list[tuple[Node, int]]) -> str:
    root = order[0][0]
    candidates: Iterator[str | None] = (
        c
        for c in (
            first_user_text(root.input_messages),
            task_from_input(root.input_text),
            *(first_user_text(n.input_messages) for n, _ in order if n.role in ("llm", "agent")),
            *(task_from_input(n.input_text) for n, _ in order if n.role in ("agent", "chain")),
        )
    )
    task = next((c for c in candidates if c and c.strip()), None)
    if not task:
        raise RecordError(f"no task: the root span {root.name!r} has no input and no model call has a user message")
    return clip_task(task.strip())


def span_trajectory(fmt: str, prefix: str, key: str, nodes: list[Node], ctx: Context, *, by: str = "trace") -> Trajectory:
    """The Trajectory of one group of nodes (a trace, or a conversation of several traces)."""
    run = assemble(nodes, what=by)
    metadata = {"source_format": fmt, f"{by}_id": key, **run.metadata}
    fields: dict[str, Any] = {
        "trajectory_id": trajectory_id(prefix, key, by),
        "task": run.task,
        "task_id": run.root.info.get("task_id"),
        "model_id": run.model_id,
        "outcome": run.outcome,
        "reward": run.reward,
        "failure": run.failure,
        "steps": run.steps,
        "created_at": run.created_at,
        "metadata": metadata,
    }
    return build({k: v for k, v in fields.items() if v is not None}, ctx)


def trajectory_id(prefix: str, key: str, by: str = "trace") -> str:
    """``<prefix>:<key>`` for a trace, ``<prefix>:<by>:<key>`` for a conversation, as a safe id."""
    return safe_id(f"{prefix}:{key}" if by == "trace" else f"{prefix}:{by}:{key}")


@dataclass(frozen=True)
class SpanFormat:
    """The grouping half of a span adapter: ``trajectory_id`` and ``assemble_trajectory``.

    Span formats differ in how records become nodes, not in how a group of
    nodes becomes a trajectory, which depends only on the format's name and id
    prefix; each span adapter binds these two methods from one instance
    instead of repeating the same two wrappers.
    """

    name: str
    prefix: str

    def trajectory_id(self, key: str, by: str = "trace") -> str:
        return trajectory_id(self.prefix, key, by)

    def assemble_trajectory(self, key: str, group: list[Node], ctx: Context, by: str = "trace") -> Trajectory:
        return span_trajectory(self.name, self.prefix, key, group, ctx, by=by)
