"""Model calls as a trace records them: which are one request recorded twice, and the order tools were asked in.

Two instrumentations of one request (a framework's and its SDK's: LangChain's ``ChatOpenAI``
and OpenAI's ``ChatCompletion``, LlamaIndex's and OpenAI's under Phoenix) give two model-call
nodes; each would make the same steps (:func:`twin_calls`); so would a tool execution traced twice
(:func:`tool_twins`). Tools the model asked for at once
start at the same instant and are read in the order they ended
(:func:`parallel_calls_in_call_order`). Apart from ``assembly`` because both are about telling
model calls apart, not about building steps.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from typing import Any

from .nodes import Node, ancestors, maybe_json, start_order


def tool_twins(group: list[Node]) -> list[Node]:
    """The nodes with each tool execution traced twice counted once: a tool node whose parent is a tool node
    of the same tool (autogen-agentchat's ``execute_tool X`` under OpenInference's ``agent.X``) joins its
    parent, which keeps what either recorded (arguments, result, call id, error)."""
    by_id = {n.id: n for n in group}

    def outer_tool(node: Node) -> Node | None:
        """The tool node this one runs inside, through plumbing (an MCP client's ``send`` span) but no model
        call or agent."""
        above = next((a for a in ancestors(node, by_id) if a.role in ("tool", "llm", "agent")), None)
        return above if above is not None and above.role == "tool" else None

    outer = {n.id: t for n in group if n.role == "tool" and n.tool and (t := outer_tool(n)) is not None
             and t.tool == n.tool}
    for node in sorted((n for n in group if n.id in outer),  # innermost first
                       key=lambda n: -sum(1 for _ in ancestors(n, by_id))):
        into = outer[node.id]
        for name in ("arguments", "result", "call_id"):
            if getattr(into, name) in (None, "", {}) and getattr(node, name) not in (None, "", {}):
                setattr(into, name, getattr(node, name))
        if node.error and len(node.error) > len(into.error or ""):  # the more telling of two error records
            into.error = node.error
    for node in group:  # what ran inside a dropped twin ran inside its outer node
        seen: set[str] = set()
        while node.parent in outer and node.parent not in seen:
            seen.add(node.parent)
            node.parent = outer[node.parent].id
    return [n for n in group if n.id not in outer]


def tool_key(name: str | None) -> str:
    """A tool's name as a model is given it: a framework that names a tool for people sends the model a function name
    made from it. CrewAI's ``sanitize_tool_name`` (``crewai/utilities/string_utils.py``): ASCII only, camelCase split,
    lower case, every other run of characters ``_``, at most 64 characters (a longer name cut, with 8 hex digits of
    its SHA-256). So "Weather Lookup" is called ``weather_lookup`` and ``getWeather`` ``get_weather``; a name already
    a function's stays as it is."""
    key = unicodedata.normalize("NFKD", name or "").encode("ascii", "ignore").decode("ascii")
    key = re.sub(r"([a-z])([A-Z])", r"\1_\2", re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", key)).lower()
    key = re.sub(r"[^a-z0-9]+", "_", re.sub(r"['\"]+", "", key)).strip("_")
    if len(key) > 64:
        key = key[:55].rstrip("_") + "_" + hashlib.sha256(key.encode()).hexdigest()[:8]
    return key


def parallel_calls_in_call_order(group: list[Node]) -> None:
    """Tool executions that started at the same instant keep the order the model asked for them in
    (read order is often the order they ended: exporters write a span when it ends, and the AI SDK
    rounds starts to the millisecond)."""
    rank: dict[tuple[str, str], int] = {}
    n = 0
    for node in sorted((g for g in group if g.role == "llm"), key=start_order):
        for msg in node.output_messages:
            for call in msg.get("calls") or []:
                if call.get("id"):
                    rank.setdefault(("id", call["id"]), n)
                rank.setdefault(("name", str(call.get("name"))), n)
                rank.setdefault(("key", tool_key(call.get("name"))), n)
                n += 1
    slots: dict[tuple[str | None, float | None], list[Node]] = {}
    for node in group:
        if node.role == "tool" and node.start is not None:
            slots.setdefault((node.parent, node.start), []).append(node)
    for tied in slots.values():
        if len(tied) > 1:
            seqs = sorted(t.seq for t in tied)
            ranked = sorted(tied, key=lambda t: (rank.get(("id", t.call_id or ""), rank.get(
                ("name", t.tool or ""), rank.get(("key", tool_key(t.tool)), n))), t.seq))
            for node, seq in zip(ranked, seqs):
                node.seq = seq


def twin_calls(order: list[Node]) -> set[str]:
    """Ids of model-call nodes that are another node's call traced a second time.

    Two instrumentations of one request (a framework's and its SDK's: LangChain's
    ``ChatOpenAI`` and OpenAI's ``ChatCompletion`` under Phoenix, Strands' ``chat`` and
    botocore's under ADOT) give two model-call spans answering with the same tool-call ids
    and arguments (and the same words, where both recorded some; not two turns with a tool run
    between them, :func:`_turns_apart`), or, without ids, over the
    same interval in different branches of the tree, or one inside the other and within its time
    (:func:`_same_call`), or side by side under one parent, named apart, asked and answering alike
    (:func:`_recorded_twice`); each would make the same steps. The one met first in ``order``
    (tree order, where its tool spans follow it) is kept, with the other's words where it
    has none and its tool-call ids where it has none (a tool span is matched by them).
    """
    position = {n.id: i for i, n in enumerate(order)}
    by_id = {n.id: n for n in order}
    twins: set[str] = set()
    by_ids: dict[tuple[Any, ...], list[Node]] = {}
    tools = [n for n in order if n.role == "tool" and n.start is not None and n.end is not None]
    for node in (n for n in order if n.role == "llm" and _call_ids(n)):  # the same calls, whenever each was timed
        text, calls = _answer(node)
        earlier = by_ids.setdefault((_call_ids(node), calls), [])  # (ADK reuses ids: args too)
        # the same words, or none on one side (botocore records a Bedrock turn's calls without them)
        kept = next((k for k in earlier if (not text or _answer(k)[0] in (text, "")) and not _turns_apart(k, node, tools)),
                    None)
        if kept is None:
            earlier.append(node)
            continue
        twins.add(node.id)
        if text and not _answer(kept)[0]:
            kept.output_messages = [dict(m) for m in node.output_messages]
    timed = sorted((n for n in order if n.role == "llm" and n.start is not None and n.end is not None
                    and n.id not in twins), key=start_order)
    for i, first in enumerate(timed):
        for other in timed[i + 1:]:
            if other.start > first.end or first.id in twins:  # type: ignore[operator]
                break
            if other.id not in twins and _same_call(first, other, by_id):
                kept, twin = sorted((first, other), key=lambda n: position[n.id])
                twins.add(twin.id)
                _lend_call_ids(twin, kept)
    for first, then in _neighbour_siblings([n for n in timed if n.id not in twins]):
        if _recorded_twice(first, then, tools):
            kept, twin = sorted((first, then), key=lambda n: position[n.id])
            twins.add(twin.id)
            _lend_call_ids(twin, kept)
    return twins


def _neighbour_siblings(calls: list[Node]) -> list[tuple[Node, Node]]:
    """Each model call that answered something, paired with the next one under the same parent (``calls`` in start
    order)."""
    by_parent: dict[str | None, list[Node]] = {}
    for call in (c for c in calls if _answer(c) != ("", ())):
        by_parent.setdefault(call.parent, []).append(call)
    return [pair for siblings in by_parent.values() for pair in zip(siblings, siblings[1:])]


def _recorded_twice(a: Node, b: Node, tools: list[Node]) -> bool:
    """Two sibling model calls without tool-call ids that are one request seen by two instrumentations: named
    apart (each names its span for its own code: LlamaIndex's ``OpenAI.astream_chat``, OpenAI's ``ChatCompletion``),
    of the same model where both name one, the later opening after the earlier closed, asked the same last message,
    answering the same, with no tool run between them. LlamaIndex closes a streamed call's span as the stream opens,
    before the SDK's span of that request starts, so neither nesting nor a shared interval shows it
    (:func:`_same_call`). Calls one code path made (votes asking the same thing, spans named alike), calls asked
    different things (classifiers answering alike) and calls of two models (a panel asking both at once, a fallback
    to another model) stay calls of their own."""
    if a.name == b.name or _call_ids(a) or _call_ids(b):
        return False
    if a.model and b.model and a.model.lower() != b.model.lower():
        return False
    if b.start < a.end:  # type: ignore[operator]  # both open at once: two requests in parallel
        return False
    asked = _last_said(a.input_messages)
    if not asked or asked != _last_said(b.input_messages) or _answer(a) != _answer(b):
        return False
    return not any(a.end <= t.start and t.end <= b.start for t in tools)  # type: ignore[operator]


def _turns_apart(a: Node, b: Node, tools: list[Node]) -> bool:
    """Whether two model calls answering with the same tool-call ids are two turns: one ended before the other
    started, and a tool it asked for ran between them. A provider that numbers its calls per response
    (``call_get_weather_0``: Xinference, TGI) gives every turn the same ids; two records of one request have no
    tool run between them."""
    if None in (a.start, a.end, b.start, b.end):
        return False
    first, then = sorted((a, b), key=lambda n: n.start)  # type: ignore[arg-type,return-value]
    if first.end > then.start:  # type: ignore[operator]
        return False
    asked = {c.get("name") for m in first.output_messages for c in m.get("calls") or []}
    return any(t.tool in asked and first.end <= t.start and t.end <= then.start for t in tools)  # type: ignore[operator]


def _lend_call_ids(source: Node, target: Node) -> None:
    ids = {}
    for call in (c for m in source.output_messages for c in m.get("calls") or [] if c.get("id")):
        ids.setdefault(call.get("name"), []).append(call["id"])
    for call in (c for m in target.output_messages for c in m.get("calls") or []):
        if not call.get("id") and ids.get(call.get("name")):
            call["id"] = ids[call["name"]].pop(0)


def _nested(a: Node, b: Node, by_id: dict[str, Node]) -> bool:
    """One model call recorded inside the other, with no agent, tool or other model call between them.

    A model call that recorded nothing between them does not part them: newer Google ADK nests ``call_llm`` ->
    ``generate_content <model>`` (no content) -> the client library's own span (OpenLLMetry's ``openai.chat``),
    all one request."""
    for inner, outer in ((a, b), (b, a)):
        if next((n for n in ancestors(inner, by_id) if _parts_calls(n)), None) is outer:
            return True
    return False


def _parts_calls(node: Node) -> bool:
    """Whether a node between two model calls makes them two: an agent, a tool, or a model call that recorded
    something."""
    return node.role in ("agent", "tool") or (node.role == "llm" and not _recorded_nothing(node))


def _recorded_nothing(node: Node) -> bool:
    return not (node.input_messages or node.output_messages or node.input_text or node.output_text)


def _same_call(a: Node, b: Node, by_id: dict[str, Node]) -> bool:
    """Calls without tool-call ids on both sides (twins that have them were found by id): in different
    branches over the same interval (each end within 10% of the shorter's length of the other's), or one
    inside the other (:func:`_nested`) over the same interval or within its time, answering the same
    (text, tool names and arguments) and, unless one is inside the other over the same interval, asked the same
    last message where both recorded one (two requests asking different things that happen to get the same short
    answer, "OK", a guard call inside a turn, are two calls).
    A model call inside a model call asked the same is one request seen by two instrumentations, however much
    longer the framework's span lasts than the HTTP call inside it (agno's ``OpenAIChat.invoke``: 5.7 ms around
    OpenAI's 2.8 ms ``ChatCompletion``); over the same interval, whatever history each recorded: ADOT moves
    Strands' ``chat`` messages into one log record grouped by role (their order lost), and those of botocore's
    ``chat`` inside it into one record per message, which CloudWatch can return out of order."""
    if _call_ids(a) and _call_ids(b):  # both carry ids and were not matched by them: two calls
        return False
    if a.parent == b.parent:  # siblings are calls of their own (a chain classifying two texts at once)
        return False
    nested = _nested(a, b, by_id)
    same_interval = _same_interval(a, b)
    if not (same_interval or (nested and _within(a, b))):
        return False
    asked_a, asked_b = _last_said(a.input_messages), _last_said(b.input_messages)
    answer_a, answer_b = _answer(a), _answer(b)
    if answer_a != answer_b or answer_a == ("", ()):
        return False
    return not (asked_a and asked_b and asked_a != asked_b) or (nested and same_interval)


def _same_interval(a: Node, b: Node) -> bool:
    """Each end within 10% of the shorter node's length of the other's."""
    slack = 0.1 * min(a.end - a.start, b.end - b.start)  # type: ignore[operator]
    return abs(a.start - b.start) <= slack and abs(a.end - b.end) <= slack  # type: ignore[operator]


def _within(a: Node, b: Node) -> bool:
    """One node's time inside the other's."""
    return (b.start <= a.start and a.end <= b.end) or (a.start <= b.start and b.end <= a.end)  # type: ignore[operator]


def prepared_request(output: str | None) -> bool:
    """An "LLM" span whose output is the request it prepared (``{"messages": [...]}``, LlamaIndex's
    ``_prepare_chat_with_tools``), not a model's answer."""
    value = maybe_json(output)
    return isinstance(value, dict) and isinstance(value.get("messages"), list)


def _call_ids(node: Node) -> frozenset[str]:
    return frozenset(str(c["id"]) for m in node.output_messages for c in m.get("calls") or [] if c.get("id"))


def _last_said(messages: list[dict[str, Any]]) -> str:
    return next((" ".join(str(m.get("text")).split()) for m in reversed(messages) if m.get("text")), "")


def _answer(node: Node) -> tuple[str, tuple[str, ...]]:
    outputs = [m for m in node.output_messages if m.get("role") != "tool"]
    text = " ".join(" ".join(str(m.get("text") or "") for m in outputs).split())
    calls = (json.dumps([c.get("name"), maybe_json(c.get("arguments"))], sort_keys=True, default=str)
             for m in outputs for c in m.get("calls") or [])
    return text, tuple(sorted(calls))
