"""A Langfuse trace's nodes put right before assembly: what the instrumentations recorded their own way.

Once the reader has grouped a trace's observations, some need reading
together rather than one by one: an observation sent as a create and later
updates is one node; a generation whose output lost its tool calls takes
them from its chain; a childless ``SPAN`` answering a tool call a generation
made is that tool's execution (LangChain, agno); a generation nested in
one other is one model call, one wrapping several calls (the Vercel AI SDK's)
is a container; BeeAI's ReAct event spans give the tool steps; the
trace's failure is its own level, the exception written as its output, or a
top-level observation's error; and the task is looked for in the trace, the
top-level observations and the generations, in that order. Apart from the
per-record mapping (``observations``) because each of these needs the whole
trace.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .._common import RecordError
from .._spans import Node, ancestors, one_node_per_id, start_order
from .._vendor import call_args_text, decode, first_user_text, instruction, is_empty, message_dicts, output_dicts
from .observations import INFO_RAW, INFO_SCORES, INFO_TARGET, INFO_THOUGHT, INFO_TYPE, observation_node, trace_node

_ITERATION = re.compile(r"^iteration-\d+$")
#: What LangChain's handler writes as a trace's output when the graph raised: ``"<ExceptionType>: <message>"``.
_EXCEPTION_TEXT = re.compile(r"(?P<type>[A-Za-z_][\w.]*): (?P<message>.*)", re.DOTALL)
#: The Vercel AI SDK's provider call under ``ai.generateText`` / ``streamText`` / ``generateObject`` / ``streamObject``.
_PROVIDER_CALL = re.compile(r"^ai\.\w+\.do(?:Generate|Stream)$")


def merged(group: list[Node]) -> list[Node]:
    """Observations sent as a create and later updates (ingestion events): one node per id, fields merged."""
    return one_node_per_id(group, _merged_observation)


def _merged_observation(versions: list[Node]) -> Node:
    """One observation (or trace: ``trace-create`` events, the first naming it, a last one adding its output)
    from its bodies in seq order: a later value wins unless it is empty, and a generic type (SPAN,
    OBSERVATION) does not replace a specific one; the last version if a body is missing."""
    raws = [n.info.get(INFO_RAW) for n in sorted(versions, key=lambda n: n.seq)]
    if not all(isinstance(r, dict) for r in raws):
        return _with_every_score(versions)
    body: dict[str, Any] = {}
    for raw in raws:
        body.update({k: v for k, v in raw.items() if not is_empty(v) and not (k == "type" and body.get("type") and
                                                                            v in ("SPAN", "OBSERVATION"))})
    if versions[0].id.startswith("trace:"):
        return trace_node(body, versions[0].seq)
    return observation_node(body, versions[0].seq)


def _with_every_score(versions: list[Node]) -> Node:
    """The last of a trace's versions read from different records (the API's trace list beside its ``GET
    /traces/{id}`` or the UI's download, a traces-table export row), with the scores every version holds: the list's
    holds none, and its being read last dropped the verdicts the other held. A score two versions hold is one
    (:func:`_one_score_each`)."""
    last = versions[-1]
    if len(versions) == 1:
        return last
    scores = _one_score_each([n.info.get(INFO_SCORES) or [] for n in versions])
    if scores == (last.info.get(INFO_SCORES) or []):
        return last
    return replace(last, info={**last.info, INFO_SCORES: scores})


def _one_score_each(versions: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The scores of a trace's versions, each once: a score of one version that another holds too (see
    :func:`_same_score`) is that score, kept whole; scores of one version are all kept (two evaluations may well
    agree)."""
    kept: list[tuple[int, dict[str, Any]]] = []
    for version, scores in enumerate(versions):
        matched: set[int] = set()
        for score in scores:
            same = next((i for i, (v, k) in enumerate(kept)
                         if v != version and i not in matched and _same_score(k, score)), None)
            if same is None:
                kept.append((version, score))
            else:
                matched.add(same)
                kept[same] = (kept[same][0], {**score, **kept[same][1]})
    return [score for _, score in kept]


def _same_score(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether ``a`` and ``b`` are one score as two records keep it: the same name, the same value or label, and no
    field either has set to something else. A traces-table export row keeps only a score's value (a CATEGORICAL
    one's label, without the number the API gives beside it), the download its comment and source too."""
    common = a.keys() & b.keys()
    return a.get("name") == b.get("name") and bool(common & {"value", "label"}) and all(a[k] == b[k] for k in common)


def calls_of_the_chain(group: list[Node]) -> None:
    """A generation whose output lost its tool calls takes them from the chain it ran in.

    Langfuse's LangChain handler (Python v2, langfuse-langchain JS) writes the
    model's message without ``tool_calls``; where a model keeps its calls only
    there (OpenAI's Responses API), the generation's output is an empty
    assistant message. The chain around the call (``prompt | model``) records
    the whole AIMessage as its output, the calls included.
    """
    by_id = {n.id: n for n in group}
    for node in group:
        parent = by_id.get(node.parent or "")
        if node.role != "llm" or node.output_messages or parent is None or parent.role != "chain":
            continue
        said = message_dicts(decode(parent.output_text), "assistant")
        if said and all(m["role"] == "assistant" for m in said) and any(m["calls"] for m in said):
            node.output_messages = said


def tools_as_spans(group: list[Node]) -> None:
    """Childless SPAN observations named like (or answering) a tool call a generation made are tool executions,
    and so is one that answers a tool call by its id (its output a LangChain ``ToolMessage``)."""
    names = {c.get("name") for n in group if n.role == "llm" for m in n.output_messages for c in m.get("calls") or []}
    parents = {n.parent for n in group}
    for n in group:
        if n.role == "chain" and n.info.get(INFO_TYPE) == "SPAN" and n.id not in parents and (
                n.tool in names or n.name in names or n.call_id):
            n.role = "tool"


def one_model_call(group: list[Node]) -> None:
    """Generations nested in generations: which of them are the model calls.

    A generation wrapping several model calls (the Vercel AI SDK's
    ``ai.streamText`` around one ``ai.streamText.doStream`` per step, the app's
    own generation around that) is the run, not a call: it becomes a
    container (see :func:`_call_wrappers`). A generation nested inside one
    other generation is the same model call traced twice (agno's call around
    the SDK's): the one with an answer is kept.
    """
    by_id = {n.id: n for n in group}
    wrappers = _call_wrappers(group, by_id)
    for wrapper in wrappers:
        wrapper.role = "chain"
    for node in group:
        if node.role != "llm":
            continue
        parent = _outer_generation(node, by_id)
        if parent is None:
            continue
        if parent.output_messages:
            node.role = "other"
        else:
            parent.role = "chain"
    for wrapper in wrappers:
        _answer_of_last_call(wrapper, group, by_id)


def _outer_generation(node: Node, by_id: dict[str, Node]) -> Node | None:
    """The nearest generation ``node`` is nested in (through spans), if any."""
    return next((a for a in ancestors(node, by_id) if a.role == "llm"), None)


def _call_wrappers(group: list[Node], by_id: dict[str, Node]) -> list[Node]:
    """Generations that wrap model calls rather than being one, innermost first.

    A generation is a wrapper when two or more innermost generations lie below
    it (one model call traced twice nests one in one), or when a generation
    below it is the Vercel AI SDK's provider call (``ai.*.doStream`` /
    ``ai.*.doGenerate``): that one is the call, whatever wraps it.
    """
    outer = {n.id: _outer_generation(n, by_id) for n in group if n.role == "llm"}
    inner: dict[str, list[Node]] = {}
    for node_id, parent in outer.items():
        if parent is not None:
            inner.setdefault(parent.id, []).append(by_id[node_id])

    def nested(node: Node, seen: set[str]) -> list[Node]:  # every generation below node (a parent cycle: once)
        seen.add(node.id)
        return [d for k in inner.get(node.id, []) if k.id not in seen for d in (k, *nested(k, seen))]

    def depth(node: Node) -> int:
        n, parent = 0, outer.get(node.id)
        while parent is not None and n < len(outer):
            n, parent = n + 1, outer.get(parent.id)
        return n

    wrappers = []
    for node_id in inner:
        below = nested(by_id[node_id], set())
        if sum(d.id not in inner for d in below) >= 2 or any(_PROVIDER_CALL.match(d.name) for d in below):
            wrappers.append(by_id[node_id])
    return sorted(wrappers, key=depth, reverse=True)


def _answer_of_last_call(wrapper: Node, group: list[Node], by_id: dict[str, Node]) -> None:
    """A wrapper's answer is its last call's: given to that call when the call recorded none.

    The AI SDK's ``ai.streamText`` records the final text, its last ``doStream``
    may record nothing (a streamed answer): the answer then belongs to that
    call, at its time, rather than to the wrapper at the run's start.
    """
    if not wrapper.output_messages:
        return
    calls = [n for n in group if n.role == "llm" and _inside(n, wrapper, by_id)]
    last = max(calls, key=start_order, default=None)
    if last is not None and not last.output_messages:
        last.output_messages = wrapper.output_messages
        last.output_text = last.output_text or wrapper.output_text


def _inside(node: Node, ancestor: Node, by_id: dict[str, Node]) -> bool:
    return any(a is ancestor for a in ancestors(node, by_id))


def react_steps(group: list[Node]) -> None:
    """BeeAI's ReAct agent (``openinference-instrumentation-beeai``): steps from its event spans.

    Each ``iteration-N`` span holds ``agent.react.update`` / ``partial_update``
    events carrying ``thought``, ``tool.name``, ``tool.parameters`` and, once
    the tool ran, its output; ``agent.react.success`` carries the final answer;
    the generation of an iteration records no output (its tokens were
    streamed) and the ``tool.<name>.*`` events repeat the call. The last update
    per iteration and tool becomes the tool step, the iteration's generation
    gets the thought and the call (or the final answer) as its output.
    """
    events = [n for n in group if str(n.info.get(INFO_TARGET, "")).startswith("agent.react.")]
    if not events:
        return
    by_id = {n.id: n for n in group}

    def iteration(node: Node) -> str | None:
        seen: set[str] = set()
        current = by_id.get(node.parent or "")
        while current is not None and current.id not in seen:
            if _ITERATION.match(current.name):
                return current.id
            seen.add(current.id)
            current = by_id.get(current.parent or "")
        return node.parent

    for node in group:
        if str(node.info.get(INFO_TARGET, "")).startswith("tool."):
            node.role = "other"
    chosen: dict[tuple[str | None, str | None], Node] = {}
    finals: dict[str | None, Node] = {}
    for node in sorted(events, key=start_order):
        target = node.info[INFO_TARGET]
        if target in ("agent.react.update", "agent.react.partial_update") and INFO_THOUGHT in node.info and node.result:
            chosen[(iteration(node), node.tool)] = node
        elif target == "agent.react.success" and node.output_text:
            finals[iteration(node)] = node
    generations: dict[str | None, list[Node]] = {}
    for node in sorted(group, key=start_order):
        if node.role == "llm":
            generations.setdefault(iteration(node), []).append(node)
    for (it, _tool), node in chosen.items():
        node.role, node.call_id = "tool", f"react:{node.id}"
    for it, gens in generations.items():
        if gens[0].output_messages:
            continue
        calls = [n for (i, _t), n in chosen.items() if i == it]
        if calls:
            gens[0].output_messages = [{"role": "assistant", "text": calls[0].info.get(INFO_THOUGHT, "").strip(),
                                        "reasoning": "", "call_id": None,
                                        "calls": [{"id": n.call_id, "name": n.tool, "arguments": n.arguments} for n in calls]}]
        elif it in finals:
            gens[0].output_messages = output_dicts(decode(finals[it].output_text))


def trace_failure(root: Node, group: list[Node]) -> None:
    """The trace's own error: its level (see ``observations``), else the exception it ended on, else the error of
    a top-level observation other than a tool (a failed top-level observation is the run failing).

    When the graph raised, LangChain's handler writes the exception (``"<Type>: <message>"``) as the trace's
    output: that is no answer but the error, the message being an observation's ``statusMessage``.
    """
    said = (root.output_text or "").strip()
    if _is_a_raised_error(said, {n.error for n in group if n.error and n is not root}):
        root.output_text = None
        root.error = root.error or said
    if not root.error:
        root.error = next((n.error for n in group if n.parent == root.id and n.error and n.role != "tool"), None)


def _is_a_raised_error(said: str, errors: set[str]) -> bool:
    """Whether the trace's output is the exception an observation failed with, as the handler writes it (an
    exception class, a colon, the observation's message): an answer that merely quotes an error (the agent caught
    it and told the user) is still an answer."""
    raised = _EXCEPTION_TEXT.fullmatch(said)
    return said in errors or (raised is not None and raised["message"] in errors)


def task_of(group: list[Node]) -> str:
    ordered = sorted(group, key=start_order)
    trace = next((n for n in ordered if n.id.startswith("trace:")), None)  # a conversation's first trace
    ids = {n.id for n in group}
    top = trace.id if trace else None
    tops = [n for n in ordered if n is not trace and (n.parent is None or n.parent not in ids or n.parent == top)]
    heads = ([trace] if trace else []) + tops
    for node in heads:
        if node.role != "llm" and (text := instruction(node.input_text)):
            return text
    for node in ordered:
        if node.role == "llm":
            if text := first_user_text(node.input_messages):
                return text
        elif node.role in ("agent", "chain") and (text := instruction(node.input_text)):
            return text
    for node in heads + ordered:
        if text := call_args_text(node.input_text):
            return text
    name = trace.name if trace else (ordered[0].name if ordered else "trace")
    raise RecordError(f"no task: trace {name!r} has no input and no generation has a user message")
