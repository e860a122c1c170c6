"""Nodes -> steps, task and outcome: how every span format's run is assembled, the same way for all.

The span formats record a run as a tree of timed operations (spans, runs,
observations), each turned into a :class:`~.nodes.Node` with a role:
``agent``, ``llm``, ``tool``, ``retriever``, ``chain``, ``evaluator`` or
``other``. :func:`assemble` builds the steps, the task and the outcome from
the nodes of one run:

- order: depth first from the roots, siblings by start time (then by the order
  they were read), so a tool call sits after the model call that asked for it;
  tools one model turn asked for at once in the order it asked for them, from
  the first to start (a thread pool starts them in any order);
- a ``tool`` node is a step: action = tool name, arguments = the call's
  arguments (JSON-decoded), observation = its result, error = its error
  (error type / exception event / error status); a ``retriever`` node is a step
  whose observation is what came back;
- a CrewAI task's result (its ``TaskOutput`` on the agent span that ran it)
  is that agent's ``respond`` step where no model call below it recorded it;
- when no ``llm`` node exists, an ``agent`` node's output messages are the
  model's turns (the Claude Agent SDK's instrumentor records them so): text
  before a call is its thought, text after the last call a ``respond`` step;
- an ``llm`` node that recorded no output (only its input) said what the
  next model call's history holds right after its own input;
- an ``llm`` node that holds several model calls (tools ran inside it and its
  input history, after the user's request, holds the turns that asked for
  them: OpenInference's ADK instrumentor writes a turn's calls onto ADK 2.x's
  ``invoke_agent`` span) said those turns first, then its output;
- an ``llm`` node traced twice (a framework's span and its SDK's over the same
  interval with the same answer, :func:`twin_calls`) counts once, and so does a
  tool execution traced twice (a tool node inside one of the same tool);
- an ``llm`` node is not a step of its own: its text becomes the thought of
  the tool steps it requested (matched by tool-call id, else by tool name,
  else by the function name a framework made of a tool's display name,
  :func:`~.calls.tool_key`, else the next tool step); tool calls it
  requested that no tool node executed become steps too, with the result
  taken from a later model input message
  (role ``tool``, same call id), else from an agent span's output messages
  (a call the framework answered itself, Agent Framework's handoff: at the
  asking call's end), or, for a call an agent span named after it
  ran (a smolagents managed agent: no tool span, the sub-agent's ``<name>.run``
  beside the asking call), that agent's output and time; where none of the calls an agent's last model call asked
  for ran nor got a result (smolagents' final-answer call at its step limit), each of a tool the trace records
  running elsewhere says it was not run (its error); text that requested no tool is the agent
  talking: a ``respond`` step (arguments ``{"content": text}``), unless the
  model call sits inside a tool (an agent used as a tool) that returned after
  it, whose result already shows what it said (not a tool that launched the
  agent in the background and returned at once), or a tool no model call
  asked for runs right after it (a code agent's "Thought: ... <code>", which
  smolagents executes) or beside it once it started (Harbor's OTel export):
  then the text is that tool step's thought, and an agent root's output that
  a step holds as its thought is no answer of its own;
- a sub-agent, chain or the root call whose error refuses what its model said (``REFUSED``: a
  call of a tool it lacks, an answer not in the form asked for) gives that
  error to the call's or answer's step;
- a sub-agent or chain that failed with no failing step in its time is a step
  (action ``None``) at its end: the failure stays visible; where its error is
  that of a failed model call below it in the span tree (or beside it under its
  parent, within its time: an exception passed up the chains), the step is the
  call's, once; a failure with an error of its own is never dropped for
  another's step in its time;
- task: the first user message of the root (or of the first model call), else
  the root's input; where that is a well-known framework's rendered prompt, the
  task part of it (:func:`~trajsearch.ingest.adapters._prompts.from_markers`);
  a conversation (several traces, one per turn) keeps what its later turns
  asked in ``metadata.user_prompts``, and so does a trace of several turns
  (agent or chain spans without a parent: two invocations in one trace; spans
  an adapter marks ``RUN_START``: the Agents SDK's runs under one trace record);
- an AutoGen AgentChat ``TaskResult`` recorded as the root's output
  (OpenInference's autogen-agentchat instrumentor) fails the tool steps its
  results flag ``is_error`` (the tool spans are OK: AgentChat caught the
  exception), and its last agent message is the answer where no model call
  recorded one;
- a tool result in MCP's shape flagged ``isError`` is the step's error (an
  MCP client returns it rather than raising); an error that is a framework's
  control flow (LangGraph's ``GraphInterrupt``: a pause for a human, resumed
  in a later trace) is no error;
- outcome: from explicit evaluations only (see :func:`~.outcome.outcome_from`),
  else an error status on the root, or on the run's last model call when
  nothing answered after it, or on a sub-agent or chain after which no model
  call or tool started (failure, or infra_error for timeouts, rate
  limits, 5xx and connection errors unless the error started in a tool's own
  span: a tool's failure is the run's), else ``unknown``: a clean exit is not a
  success. The model is the first that answered (a failed attempt retried
  names only the model asked for).

:func:`span_trajectory` and :class:`SpanFormat` wrap that into the grouping
half of the span-adapter protocol (``trajectory_id``, ``assemble_trajectory``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from itertools import islice, takewhile
from typing import Any, Iterator

from trajsearch.actions import not_run, tools_of
from trajsearch.model import Failure, Outcome, Trajectory

from .. import _prompts
from .._agent_cli import prompt_list, within_step_limit
from .._common import Context, RecordError, build, clip_step_text, clip_task, last_tool_error, safe_id, short
from ..ag2 import EXECUTOR_REPORT, FAILED_RESULT
from ..autogen_agentchat import CODE_BLOCK, ran_code
from .calls import parallel_calls_in_call_order, prepared_request, tool_key, tool_twins, twin_calls
from .messages import (PROVIDER_RUN, agentchat_answer, agentchat_failed_calls, agentchat_messages, first_user_text,
                       framework_failure, is_denial, is_object_repr, mcp_error, normalise_messages,
                       provider_failure, shell_error, task_from_input, user_requests)
from .nodes import (CONTINUES, EMBEDS, OFFERED, REFUSED, RESULT_CUT, RESUMED, RUN_START, STAGE, UNTYPED_MESSAGES, Evaluation, Message, Node, ancestors,
                    latest_first, maybe_json, start_order, when)
from .outcome import INFRA_CAUSE, failed, error_outcome, outcome_from


def in_tree_order(nodes: list[Node]) -> list[tuple[Node, int]]:
    """Depth-first from the roots, siblings by (start, read order): (node, depth)."""
    by_id = {n.id: n for n in nodes}
    children: dict[str | None, list[Node]] = {}
    for n in nodes:
        parent = n.parent if n.parent in by_id and n.parent != n.id else None
        children.setdefault(parent, []).append(n)
    out: list[tuple[Node, int]] = []
    seen: set[str] = set()
    stack = [(n, 0) for n in sorted(children.get(None, []), key=start_order, reverse=True)]
    while stack:
        node, depth = stack.pop()
        if node.id in seen:
            continue
        seen.add(node.id)
        out.append((node, depth))
        stack.extend((c, depth + 1) for c in sorted(children.get(node.id, []), key=start_order, reverse=True))
    # nodes caught in a parent cycle: keep them, in time order, at the end
    out.extend((n, 0) for n in sorted((n for n in nodes if n.id not in seen), key=start_order))
    return out


def _respond(text: str, thought: str | None, start: float | None, end: float | None,
             error: str | None) -> dict[str, Any]:
    """The agent talking: a ``respond`` step whose arguments hold what it said."""
    return {"thought": thought, "action": "respond", "arguments": {"content": text},
            "started_at": when(start), "ended_at": when(end), "error": error}


def _calls_in_turn(outputs: list[Message], node: Node, pending: list[dict[str, Any]]) -> str:
    """Queue the calls a model call asked for, each message's reasoning and text (and what came before them)
    the thought of its first call (a streamed answer's parts are split per call: ``messages``); return the text
    said after the last call."""
    said: list[str] = []
    thought: list[str] = []
    for msg in (m for m in outputs if m.role != "tool"):
        calls = [c for c in msg.calls if c.get("name")]
        said.append(msg.text)
        thought += [msg.reasoning, msg.text]
        if not calls:
            continue
        for n, call in enumerate(calls):
            pending.append({"call": call, "thought": "\n".join(t for t in thought if t).strip() if n == 0 else None,
                            "at": node.end, "by": node, "turn": node.id, "rank": len(pending)})
        said, thought = [], []
    return "\n".join(t for t in said if t).strip()


def _speaking_agents(nodes: list[Node]) -> set[str]:
    """The agents whose spans hold the model's turns, read turn by turn (:func:`_agent_turns`): an instrumentation
    that records them on the agent's span with no model-call span (the Claude Agent SDK's), or one whose model-call
    spans below the agent record none of what was said (AG2's ``autogen.opentelemetry``: ``invoke_agent`` keeps
    the turn's output messages, its ``chat`` span only the model and usage): the agent's words are nowhere else.
    Not where a model-call span anywhere below the agent records them: AG2's ``chat`` span with OpenInference's
    OpenAI instrumentor under it (``ChatCompletion``, holding the content) would have the turn read twice."""
    if not any(n.role == "llm" for n in nodes):
        return {n.id for n in nodes if n.role == "agent" and n.output_messages}
    by_id = {n.id: n for n in nodes}
    calls = [n for n in nodes if n.role == "llm"]
    said = [c for c in calls if c.input_messages or c.output_messages or (c.output_text or "").strip()]
    return {n.id for n in nodes if n.role == "agent" and n.output_messages and any(c.parent == n.id for c in calls)
            and not any(_descends_from(c, n, by_id) for c in said)}


def _ran_code_asked(agent: Node, steps: list[dict[str, Any]]) -> bool:
    """Whether ``agent``'s reply is a code executor's report (``exitcode: 1 (execution failed)\nCode output: ...``) on
    the code blocks of the answer just before it, which then becomes the ``execute_code`` step it was (failed on a
    non-zero exit code), as in the ChatResult of the same chat (``ag2``): AG2's ``autogen.opentelemetry`` traces
    the classic coding chat's user proxy running the code as an ``invoke_agent`` span with the report as its output
    message, and no span of the run itself; the failing run read as the model's answer and was lost."""
    text = "\n".join(m.get("text") or "" for m in agent.output_messages if m.get("role") != "tool").strip()
    asked = steps[-1] if steps and steps[-1].get("action") == "respond" else None
    if asked is None or not EXECUTOR_REPORT.match(text) or not CODE_BLOCK.search(asked["arguments"]["content"]):
        return False
    steps[-1] = {**ran_code(asked, text, when(agent.start), (EXECUTOR_REPORT,)), "ended_at": when(agent.end)}
    return True


def _agent_turns(node: Node, pending: list[dict[str, Any]], add_step: Any) -> None:
    """The model's turns recorded on an agent's span, in order: text before a tool call is that call's
    thought; text after the last call is the answer, a ``respond`` step at the agent's end."""
    said: list[str] = []
    turns = (Message(**m) for m in node.output_messages if m.get("role") != "tool")
    for n, message in enumerate(turns):
        said.extend(t.strip() for t in (message.reasoning, message.text) if t.strip())
        for call in (c for c in message.calls if c.get("name")):
            pending.append({"call": call, "thought": "\n".join(said) or None, "at": node.end, "by": node,
                            "turn": f"{node.id}/{n}", "rank": len(pending)})
            said = []
    if said:
        add_step(_respond("\n".join(said), None, node.end, node.end, node.error))


def _answered_in_turn(history: list[dict[str, Any]], steps: list[dict[str, Any]],
                      by_call: dict[str, dict[str, Any]] | None = None) -> None:
    """Results a model's input history pairs with their calls by position where the ids do not match (ADK
    names calls and responses after their place in a message, so a call and its answer differ) or are not
    recorded (LiteLLM's, Mistral's and google-genai's instrumentors keep no ids): the k-th response after an
    assistant (or ``model``) turn answers its k-th call, given to the step of that name and arguments; not an
    answer whose id is another step's call (``by_call``): a history missing a message its exporter cut (see
    ``_otlp.shapes``) would pair the answers after it with the wrong calls."""
    asked: list[dict[str, Any]] = []
    speaking = False  # the previous message was the model's too: one turn (a streamed turn split per call)
    for n, message in enumerate(history):
        if message.get("role") in ("assistant", "model"):
            asked = (asked if speaking else []) + list(message.get("calls") or [])
            speaking = True
            continue
        speaking = False
        if len(asked) > 1 and not _is_result(message, with_id=True) and message.get("role") == "tool" \
                and not any(_is_result(m) for m in history[n + 1:n + 2]) \
                and not any(c.get(PROVIDER_RUN) for c in asked) and by_call \
                and _answered_joined([by_call.get(c.get("id") or "") for c in asked], message):
            asked = []  # one id-less result for the turn's calls (AG2 joins them): those left took their parts, if told
        elif _is_result(message) and asked:
            call = asked.pop(_answering(asked, message))
            step = next((s for s in steps if _unanswered(s) and s.get("action") == call.get("name")
                         and maybe_json(s.get("arguments")) == maybe_json(call.get("arguments"))), None)
            if step is not None and (by_call or {}).get(message.get("call_id") or "", step) is step:
                _answered(step, message)
        elif message.get("role") in ("user", "system"):
            asked = []


def _is_result(message: dict[str, Any], *, with_id: bool = False) -> bool:
    """Whether a history's message is a tool's result: one naming its call, or (unless ``with_id``) a tool's."""
    return bool(message.get("call_id")) or not with_id and message.get("role") == "tool"


def _answered_joined(steps: list[dict[str, Any] | None], message: dict[str, Any]) -> bool:
    """Whether ``message``, one id-less result for the several calls ``steps`` ran (in the order asked), is theirs
    joined: it answered the one step of them no span gave a result, or the several (or none of them, see below): AG2
    runs a response's parallel calls and joins their results into one message
    (``ConversableAgent.generate_tool_calls_reply``: ``"\\n\\n".join``; the group tool executor: ``"\\n".join``), which
    its ``autogen.opentelemetry`` writes with no call id, and records a tool span's result only where the tool did not
    fail. The step's part is the text less the others' results, where it is so joined; where several failed (review RF
    of round 49), each its part: the one way the text splits into a part a call with the others' results at their places
    (:func:`_joined_parts`; a failure's words may hold the separator: a multi-line exception); else nothing is answered
    (the text may be any of theirs, or all), and the caller does not hand it all to the first call by place either
    (``_answered_in_turn``)."""
    left = [s for s in steps if s is not None and _unanswered(s)]
    text = message.get("text")
    if None in steps or not left or not isinstance(text, str):
        return False
    reply = {k: v for k, v in message.items() if k != "failed"}
    if len(left) > 1:
        open_ = {id(s) for s in left}  # by identity: two calls may have asked alike
        for sep in ("\n\n", "\n"):
            if (parts := _joined_parts(text, steps, open_, sep)) is not None:  # type: ignore[arg-type]
                for step, part in zip(steps, parts):
                    if id(step) in open_:
                        _answered(step, reply | {"text": part})  # type: ignore[arg-type]
                return True
        return True  # the turn's joined result, no one split of it: nothing answered, not all of it by place
    at = next(n for n, s in enumerate(steps) if s is left[0])
    before = [str(s["observation"]) for s in steps[:at]]  # type: ignore[index]
    after = [str(s["observation"]) for s in steps[at + 1:]]  # type: ignore[index]
    for sep in ("\n\n", "\n"):
        head = "".join(f"{r}{sep}" for r in before)
        tail = "".join(f"{sep}{r}" for r in after)
        if text.startswith(head) and text.endswith(tail) and len(text) > len(head) + len(tail):
            part = text[len(head):len(text) - len(tail)]
            _answered(left[0], reply | {"text": part})
            return True
    return False


#: How many partial splits :func:`_joined_parts` tries before it gives up (no part then answered).
_SPLITS_TRIED = 1_000


def _joined_parts(text: str, steps: list[dict[str, Any]], open_: set[int], sep: str) -> list[str] | None:
    """The one split of ``text`` (results joined by ``sep``) into a part per step, each answered step's (not in
    ``open_``) its own result and each failed open step's starting with AG2's word for a failure
    (``ag2.FAILED_RESULT``), or None where there is none or more than one. An open step's part may hold ``sep``
    itself (a multi-line exception's words): it ends where the rest still splits so, a split that fails one of those
    conditions is dropped where it does (five adjacent failures of two paragraphs each: one split of 126, which a
    cut at the first 50 tried missed). The splits tried are bounded (``_SPLITS_TRIED``): long outputs of many lines
    would make them countless."""
    tried = [0]

    def splits(at: int, n: int) -> Iterator[list[str]]:
        tried[0] += 1
        if n == len(steps) or tried[0] > _SPLITS_TRIED:
            return
        last = n == len(steps) - 1
        if id(steps[n]) not in open_:
            known = str(steps[n]["observation"])
            if last and text[at:] == known:
                yield [known]
            elif not last and text.startswith(known + sep, at):
                yield from ([known, *rest] for rest in splits(at + len(known) + len(sep), n + 1))
            return
        if steps[n].get("error") and not text.startswith(FAILED_RESULT, at):
            return
        if last:
            yield [text[at:]]
            return
        after = steps[n + 1]  # an answered step's result is where the open part may end
        to = sep if id(after) in open_ else f"{sep}{after['observation']}{'' if n + 2 == len(steps) else sep}"
        end = text.find(to, at)
        while end != -1:
            yield from ([text[at:end], *rest] for rest in splits(end + len(sep), n + 1))
            end = text.find(to, end + 1)

    found = list(islice(splits(0, 0), 2))  # a second split: which is whose, the text does not say
    return found[0] if len(found) == 1 and tried[0] <= _SPLITS_TRIED else None


def _answering(asked: list[dict[str, Any]], message: dict[str, Any]) -> int:
    """The place in ``asked`` (a turn's calls not yet answered) of the call a result answers by place: an id-less
    result with a provider-run call before it (``PROVIDER_RUN``: Gemini's code execution, its result right after its
    code in the model's own message) answers the last such call, whatever function calls the turn made before it;
    any other the turn's first."""
    if message.get("call_id") or message.get("role") != "tool":
        return 0
    return next((n for n in reversed(range(len(asked))) if asked[n].get(PROVIDER_RUN)), 0)


def _said_in_later_history(nodes: list[Node]) -> None:
    """What a model call said, where it recorded no output (OpenLLMetry's Agents SDK instrumentation records
    only inputs): the assistant messages the next call's history holds right after this call's own input, the
    conversation compared without its system prompt (an agent handed over to has its own). Words are one
    call's: of calls given the same conversation (a guardrail agent checks the user's request beside the
    agent), the first to start said them."""
    def said(messages: list[dict[str, Any]]) -> tuple[tuple[Any, ...], ...]:
        return tuple((m.get("role"), m.get("text"), m.get("call_id"),
                      tuple((c.get("id"), c.get("name")) for c in m.get("calls") or [])) for m in messages)

    calls = sorted((n for n in nodes if n.role == "llm" and n.input_messages), key=start_order)
    histories = [[m for m in n.input_messages if m.get("role") != "system"] for n in calls]
    keys = [said(history) for history in histories]  # each call's conversation, compared as a whole
    claimed: set[tuple[Any, ...]] = set()
    for index, node in enumerate(calls):
        asked = keys[index]
        if node.output_messages or node.error or not asked:
            continue
        for history, key in zip(histories[index + 1:], keys[index + 1:]):
            if len(key) > len(asked) and key[:len(asked)] == asked:
                answer = list(takewhile(lambda m: m.get("role") in ("assistant", "model"), history[len(asked):]))
                if answer and (claim := (asked, said(answer))) not in claimed:
                    claimed.add(claim)
                    node.output_messages = [dict(m) for m in answer]
                break


def _turns_on_one_span(nodes: list[Node]) -> None:
    """The model's turns where one span recorded several model calls: Google ADK 2.x runs a turn's calls under its
    ``invoke_agent`` span, and OpenInference's ADK instrumentor writes each call's attributes onto it (kind ``LLM``),
    each call overwriting the last's keys only: the last call's text, beside the earlier call's ``tool_calls.N``.
    Such a span is told by its own input: tools ran inside it, and its history after the user's request holds the
    model turns that asked for them with their results. Those turns are what the span said first; its output is
    what it said last, without the calls and words those turns already hold."""
    by_id = {n.id: n for n in nodes}
    ran_inside: dict[str, set[str]] = {}
    for tool in (n for n in nodes if n.role == "tool" and n.tool):
        call = next((a for a in ancestors(tool, by_id) if a.role == "llm"), None)
        if call is not None:
            ran_inside.setdefault(call.id, set()).add(tool.tool)  # type: ignore[arg-type]
    for node in (n for n in nodes if n.id in ran_inside and n.output_messages):
        earlier = _turns_answered_since_request(node.input_messages, ran_inside[node.id])
        if not earlier:
            continue
        asked = {_call_key(c) for m in earlier for c in m.get("calls") or []}
        said = {m.get("text") for m in earlier if m.get("text")}
        last = [dict(m, calls=[c for c in m.get("calls") or [] if _call_key(c) not in asked],
                     text="" if m.get("text") in said else m.get("text") or "") for m in node.output_messages]
        node.output_messages = [dict(m) for m in earlier] + last


def _turns_answered_since_request(history: list[dict[str, Any]], tools: set[str]) -> list[dict[str, Any]]:
    """The model's turns after the latest user request in ``history`` when one of them asked for one of ``tools``
    and a tool result follows it (the turns a span's earlier model calls said); else none."""
    requests = [i for i, m in enumerate(history) if m.get("role") in ("user", "human") and not m.get("call_id")
                and (m.get("text") or "").strip()]
    since = history[requests[-1] + 1:] if requests else []
    turns = [i for i, m in enumerate(since) if m.get("role") in ("assistant", "model")]
    asking = [i for i in turns if any(c.get("name") in tools for c in since[i].get("calls") or [])]
    answered = asking and any(m.get("role") == "tool" or m.get("call_id") for m in since[asking[0] + 1:])
    return [since[i] for i in turns] if answered else []


def _call_key(call: dict[str, Any]) -> tuple[str, str]:
    """A tool call by name and arguments (ids differ between a call's records: ADK strips its own before sending)."""
    return str(call.get("name")), json.dumps(maybe_json(call.get("arguments")), sort_keys=True, default=str)


def _last_calls(calls: list[Node], by_id: dict[str, Node]) -> set[str]:
    """The ids of each agent's last model call (an agent: the call's nearest agent node, by its agent name where
    it has one, as OpenLIT's ``invoke_agent <name> step_N`` spans name each step of one agent; or none): after it,
    that agent's model saw nothing more."""
    last: dict[str | None, Node] = {}
    for call in sorted(calls, key=start_order):
        agent = next((a for a in ancestors(call, by_id) if a.role == "agent"), None)
        last[agent and (agent.info.get("agent_name") or agent.id)] = call
    return {n.id for n in last.values()}


def _agent_that_ran(call: dict[str, Any], asker: Node, order: list[tuple[Node, int]], ran: set[str]) -> Node | None:
    """The agent a model's call ran with no tool span of its own: a managed agent (smolagents traces no tool span
    for one, only the sub-agent's ``<name>.run`` span beside the model call that asked for it, under the same
    step): an agent node named after the call (or ``<call>.run``) under the same parent that started once the
    asking call ended, not yet matched to another call; its output is the call's result, its time the call's."""
    name = str(call.get("name") or "")
    names = {name, f"{name}.run"}
    return next((n for n, _ in order if n.role == "agent" and n.id not in ran and n.parent == asker.parent
                 and (n.name in names or n.info.get("agent_name") == name) and n.start is not None
                 and asker.end is not None and n.start + _CLOCK_SLACK >= asker.end), None) if name else None


def _arguments(recorded: Any, asked: Any) -> Any:
    """A tool step's arguments: the model's by name where the tool recorded none, a bare value (LangChain's
    single input), the model's wrapped (LangSmith's tracing of the Claude Agent SDK: ``{"input": <the model's
    arguments>}``) or the model's plus objects the framework passed in (LlamaIndex's workflow ``Context``,
    recorded as its repr: noise that differs per run); else what the tool recorded."""
    if recorded is None:
        return asked
    if not (isinstance(asked, dict) and asked):
        return recorded
    if not isinstance(recorded, (dict, list)):
        return asked
    injected = isinstance(recorded, dict) and len(recorded) > len(asked) and all(
        recorded.get(k) == v for k, v in asked.items()) and all(
        isinstance(v, str) and is_object_repr(v) for k, v in recorded.items() if k not in asked)
    return asked if recorded == {"input": asked} or injected else recorded


def _ran_on_words(tool: Node, call: Node) -> bool:
    """Whether a tool no model call asked for ran on the words of ``call``, a model call that recorded no tool call:
    it started once the call ended (a code agent's "Thought: ... <code>", which smolagents executes), or, beside it
    under the same parent, once the call started. Harbor's OTel export (harbor-atif2otel ``convert_trajectory``)
    writes an agent step as an LLM span, its ``message`` as the output and no calls, from the step's time to the next
    step's, and the step's calls as zero-length TOOL spans beside it 1 ms apart from the step's time: inside it. Never
    a stage of an app's workflow (``STAGE``): the workflow ran it after the words, on their output, not as code."""
    if tool.start is None or call.start is None or tool.info.get(STAGE):
        return False
    if tool.parent == call.parent:
        return tool.start >= call.start
    return call.end is not None and tool.start >= call.end


def _in_step_order(steps: list[dict[str, Any]], asked_by: dict[int, tuple[str, int]]) -> None:
    """Sort ``steps`` by time, a model's words after a tool step that started in the same instant (starts rounded to
    the millisecond: no tool ran on its word); tools one model call asked for at once in the order it asked, from
    the first of them to start: a framework runs such calls in a thread pool (CrewAI's native tool calls), where
    which starts first is the scheduler's doing, not the agent's."""
    never = datetime.max.replace(tzinfo=timezone.utc)
    at = {id(s): s.get("started_at") or s.get("ended_at") or never for s in steps}
    batches: dict[str, list[dict[str, Any]]] = {}
    for step in steps:
        if id(step) in asked_by:
            batches.setdefault(asked_by[id(step)][0], []).append(step)
    rank: dict[int, int] = {}
    for batch in (b for b in batches.values() if len(b) > 1):
        first = min(at[id(s)] for s in batch)
        for n, step in enumerate(sorted(batch, key=lambda s: asked_by[id(s)][1])):
            at[id(step)], rank[id(step)] = first, n
    steps.sort(key=lambda s: (at[id(s)], s.get("action") == "respond", rank.get(id(s), 0)))


def _refused(containers: list[Node], steps: list[dict[str, Any]], said_by: dict[int, Node],
             by_id: dict[str, Node]) -> None:
    """The error of a span that refused what its model said (``REFUSED``: a call of a tool it has not, an answer that
    is not the output asked for) given to that call's or answer's step, the last one a model call below the span said
    with no error yet: the step failed, the span did not (so it makes no failure step of its own)."""
    for node in (n for n in containers if n.info.get(REFUSED)):
        action = node.info[REFUSED]
        step = next((s for s in reversed(steps) if s.get("action") == action and not s.get("error")
                     and id(s) in said_by and _descends_from(said_by[id(s)], node, by_id)), None)
        if step is not None:
            step["error"] = short(node.error, 600)


def _container_failures(containers: list[Node], steps: list[dict[str, Any]], calls: list[Node],
                        by_id: dict[str, Node]) -> list[dict[str, Any]]:
    """A step for each sub-agent or chain that failed with no failing step of its own, placed where the failure
    surfaced (its end): the failure stays visible. A step is the container's when it ran within the container's
    time (another turn's failing tool, in a conversation of several traces, says nothing about this one). A
    container that failed with the error of a failed model call below it (:func:`_failed_call_passed_on`) only
    passed that call's exception on (LangChain marks every chain an exception leaves, OpenLLMetry gives each an
    error status): the step is the call's, once. Only that match joins failures: one with an error of its own (a
    parallel sibling's timeout, the root cause under a wrapper that re-raised it otherwise) keeps its step,
    whatever its time."""
    def inside(step: dict[str, Any], node: Node) -> bool:
        at = step.get("started_at") or step.get("ended_at")
        if node.start is None or node.end is None or at is None:
            return True  # no times to tell by: any failing step may be the container's
        return when(node.start) <= at <= when(node.end)

    out: list[dict[str, Any]] = []
    told: set[str] = set()  # the failed model calls already given their step
    for node in reversed(containers):  # deepest first: at one instant, the cause before what passed it on
        if any(s.get("error") and inside(s, node) for s in steps):
            continue
        origin = _failed_call_passed_on(node, calls, by_id)
        if origin is None:
            out.append(_failure_step(node, at_end=True))
        elif origin.id not in told:
            told.add(origin.id)
            out.append(_failure_step(origin))
    return out


def _failed_call_passed_on(container: Node, calls: list[Node], by_id: dict[str, Node]) -> Node | None:
    """The failed model call whose exception ``container`` passed on: one with the same error below it in the span
    tree, else below its parent within its time (OpenLLMetry hangs the runnables of a LangGraph node beside the
    node's own span, ``call_model``, not under it). Of a call retried and failing alike each time, the last attempt:
    the one whose exception got out (the others' failures are steps of their own, ``langfuse._with_failed_calls``),
    so the step is timed when the chain gave up, after the earlier attempts'. An attempt with no start is not taken
    for the last (``latest_first``): when it ran is not known."""
    same = latest_first(c for c in calls if c.error == container.error)
    below = next((c for c in same if _descends_from(c, container, by_id)), None)
    parent = by_id.get(container.parent or "")
    if below is not None or parent is None or container.start is None or container.end is None:
        return below
    return next((c for c in same if _descends_from(c, parent, by_id) and c.start is not None and c.end is not None
                 and container.start <= c.start and c.end <= container.end), None)


def _descends_from(node: Node, container: Node, by_id: dict[str, Node]) -> bool:
    """Whether ``container`` is above ``node`` in the span tree (by parent ids, not by time)."""
    return any(a is container for a in ancestors(node, by_id))


def _failure_step(node: Node, *, at_end: bool = False) -> dict[str, Any]:
    """A step (action ``None``) telling that ``node`` failed, with its error; ``at_end``: placed at the node's end,
    where a container's failure surfaced. The telling is the step's observation, as what a run's environment
    reports is: words of ours, not the agent's, so not its thought (step rows index a thought as what the agent
    thought, and an export writes it as an assistant message)."""
    return {"action": None, "observation": f"{node.role} {node.name} failed", "error": short(node.error, 600),
            "started_at": when(node.end or node.start) if at_end else when(node.start or node.end),
            "ended_at": when(node.end)}


def _failure_that_ended(containers: list[Node], nodes: list[Node], last_call: Node | None) -> Node | None:
    """The failed sub-agent or chain after whose end no model call or tool started, where the model's last word
    was no answer: the run ended on that failure even if its root is left unmarked (LangSmith's OpenAI Agents
    SDK integration marks the agent's run, never the root). A run whose last model call answered finished, unless
    work went on after the answer: a tool started after it (an ADK workflow's node run on the agent's answer), or the
    failed container did (a later turn, whose model failed before it spoke). A container's error is the one it
    ended with: an adapter gives it none for an error it went on from (an ADK ``Workflow`` node retried after its
    error event, ``adk_session._Session.recovered``), whose failed attempt is a step of its own where it came."""
    work = [n.start for n in nodes if n.role in ("llm", "tool", "retriever") and n.start is not None]
    ended = [c for c in containers if c.end is not None and not any(start > c.end for start in work)]
    if last_call is not None and any(m.get("text") and not m.get("calls") and m.get("role") != "tool"
                                     for m in last_call.output_messages):
        said = last_call.end if last_call.end is not None else last_call.start
        if said is None:
            return None
        if not any(n.start > said for n in nodes if n.role in ("tool", "retriever") and n.start is not None):
            ended = [c for c in ended if c.start is not None and c.start > said]
    return max(ended, key=lambda c: c.end or 0.0, default=None)


def _root_answer(root: Node, add_step: Any, steps: list[dict[str, Any]], run: Node | None = None) -> None:
    """The answer an agent root span recorded (``gen_ai.output.messages``, else its output: a Langfuse trace's,
    where the export kept no observation's input or output), or a crew's root its ``CrewOutput``, as a ``respond``
    step at its end; not words a step already holds as its thought (Harbor's OTel export gives its root the agent's
    last message, which came with its ``finish`` call). ``run``: the span holding an AutoGen AgentChat run's
    ``TaskResult`` (:func:`_agentchat_run`), whose answer counts where the root gave none (an app's own span
    around ``team.run()``)."""
    for node in (root, run) if run is not None and run is not root else (root,):
        text = "\n".join(m.get("text") or "" for m in node.output_messages if m.get("role") != "tool").strip() \
            or _said_last(node.output_text)
        if text and any((s.get("thought") or "").strip() == text for s in steps):
            return
        if text and (node.role == "agent" and node is root or _crew_answer(node.output_text) is not None
                     or agentchat_messages(node.output_text) is not None):
            add_step(_respond(text, None, node.end, node.end, None))
            return


def _agentchat_run(order: list[tuple[Node, int]]) -> Node | None:
    """The outermost span whose output is an AutoGen AgentChat ``TaskResult`` (OpenInference's instrumentor records
    it on the team's or agent's ``run_stream``): the root, or the team's span inside an app's own (a web request's,
    a ``tracer.start_as_current_span`` around ``team.run()``), whose output is the app's, not the run's."""
    held = [(depth, n) for n, depth in order if agentchat_messages(n.output_text) is not None]
    return min(held, key=lambda found: found[0])[1] if held else None


def _agentchat_failures(run: Node | None, steps: list[dict[str, Any]]) -> None:
    """The tool calls an AutoGen AgentChat run's ``TaskResult`` (the output of ``run``: :func:`_agentchat_run`) says
    failed fail their steps (the call of that name and arguments at its place among them): OpenInference's
    instrumentor marks the tool's span OK, since AgentChat caught what the tool raised and handed its message to the
    model as the result."""
    for name, arguments, said, before in agentchat_failed_calls(
            (agentchat_messages(run.output_text) if run else None) or []):
        # the instrumentor's tool spans keep no call id: the call is the one with as many of its name and
        # arguments before it, else the first of them not yet failed
        same = [s for s in steps if s.get("action") == name and maybe_json(s.get("arguments")) == arguments]
        step = same[before] if before < len(same) and not same[before].get("error") else next(
            (s for s in same if not s.get("error")), None)
        if step is not None:
            step["error"] = short(said.strip() or "the tool failed", 600)


#: Seconds a span's end may read early against its child's: exporters round one time to the millisecond, not the other.
_CLOCK_SLACK = 0.5


def _returned_after(tool: Node, call: Node) -> bool:
    """Whether ``tool`` returned only after the model call inside it ended (or the times do not tell), so its result
    can show what the call said. A tool that launched a background agent (Copilot CLI's ``task``: "Agent started
    in background ...") returned before its agent's calls ended: their words are in no tool result."""
    return tool.end is None or call.end is None or tool.end + _CLOCK_SLACK >= call.end


def _said_last(output: str | None) -> str:
    """What an output recorded as text says last: the text itself, the text of CrewAI's ``CrewOutput`` (``raw``), or
    the last assistant words of the messages it holds (a LangGraph state's ``{"messages": [...]}``, one message
    object); never a JSON dump of other data."""
    value = maybe_json(output)
    value = _crew_answer(output) or value
    if (said_in_run := agentchat_messages(value)) is not None:
        return agentchat_answer(said_in_run) or ""
    if isinstance(value, str):
        return value.strip()
    said = [m["text"] for m in normalise_messages(value) if m["role"] in ("assistant", "model") and m["text"].strip()]
    return said[-1].strip() if said else ""


def _crew_answer(output: str | None) -> str | None:
    """The answer of a CrewAI crew recorded as its ``CrewOutput`` (``{"raw", "tasks_output", ...}``: OpenInference's
    CrewAI instrumentor, on a ``CHAIN`` root): its ``raw`` text, the crew's final answer."""
    value = maybe_json(output)
    if isinstance(value, dict) and isinstance(value.get("raw"), str) and "tasks_output" in value:
        return value["raw"].strip() or None
    return None


def _task_answer(agent: Node, order: list[tuple[Node, int]], by_id: dict[str, Node]) -> str | None:
    """The result of a CrewAI task, recorded as its ``TaskOutput`` (``{"raw", "agent", "expected_output", ...}``) on
    the agent span that ran it (OpenInference's ``<role>._execute_core``), where no model call below it recorded
    what it said: CrewAI's instrumentor alone (crewai 1.x calls the OpenAI SDK natively, so the LiteLLM instrumentor
    the docs pair it with traces no model call); else the model's words are the answer. Not a task run inside a tool
    (a delegation), whose result shows it."""
    value = maybe_json(agent.output_text)
    if not (isinstance(value, dict) and isinstance(value.get("raw"), str) and value["raw"].strip()
            and {"agent", "expected_output"} <= set(value)) or any(a.role == "tool" for a in ancestors(agent, by_id)):
        return None
    said = any(n.role == "llm" and (n.output_messages or n.output_text) and _descends_from(n, agent, by_id)
               for n, _ in order)
    return None if said else value["raw"].strip()


#: The error of a call an agent's last model call asked for that no tool ran (smolagents' final-answer call at its
#: step limit can still ask for tools; nothing runs them): not a tool that ran and printed nothing.
_NOT_RUN = not_run("the agent stopped after its model asked for it (no tool span ran it, no later model call saw a "
                   "result)")


def _stopped_for_calls(call: Node) -> bool:
    """Whether a model call's finish reason is the AI SDK's ``tool-calls`` (its own spelling): as the agent's last
    call, the SDK stopped with its calls unrun (awaiting approval, at a step limit, or a tool it does not execute)."""
    reasons = call.info.get("finish_reasons")
    return "tool-calls" in (reasons if isinstance(reasons, list) else [reasons])


def _denied_calls(node: Node, by_call: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Steps for the calls a model input says the user denied (:func:`~.messages.denial`: the AI SDK's tool approval;
    no tool ran, and the denial arrives only in the resumed call's input) and, in a run resumed with its calls'
    results (pydantic-ai's ``deferred_tool_results``), for every call answered there, that no step holds: the call as
    the same history asked for it, its error the denial, else its result; registered in ``by_call``. A call a step
    holds (its model call is in the same run, as when a conversation groups the asking and the resumed traces) got
    the denial as its error from :func:`_answered`."""
    asked = {c.get("id"): c for m in node.input_messages for c in m.get("calls") or [] if c.get("id")}
    # a pydantic-ai run resumed with the results of the calls it asked for (``deferred_tool_results``): each call
    # its step, run or not (no other record has it). Not any history that opens with a model's response (a chat's
    # greeting): its earlier turns' calls are no steps of this run
    resumed = bool(node.info.get(RESUMED))
    out = []
    for m in node.input_messages:
        call = asked.get(m.get("call_id"))
        if call and m["call_id"] not in by_call and (resumed or is_denial(m)):  # (a call id: a result's)
            failure = bool(m.get("failed"))  # (a denial is a failed result)
            step = {"thought": None, "action": str(call.get("name")), "arguments": call.get("arguments"),
                    "observation": None if failure else clip_step_text(m.get("text")),
                    "error": short(m["text"], 600) if failure else None,
                    "started_at": when(node.start), "ended_at": when(node.start)}
            by_call[m["call_id"]] = step
            out.append(step)
    return out


#: The error of a call the AI SDK stopped before running (:func:`_stopped_for_calls`).
_NOT_RUN_AI_SDK = not_run("the run stopped after its model asked for it (the AI SDK stops so to await a tool's "
                          "approval, at its step limit, or for a tool it does not execute)")


def _answered_by_agent(agent: Node, by_call: dict[str, dict[str, Any]], tools: list[Node]) -> None:
    """Results of untraced calls that no model input holds but the agent span's output messages do: a call its
    framework answered itself, running no tool (Agent Framework's handoff middleware answers ``handoff_to_<agent>``
    with ``{"handoff_to": ...}`` and hands the next agent a history without it; ``invoke_agent``'s
    ``gen_ai.output.messages`` keeps the ``tool_call_response``). Answered when its model call ended: that is its
    time. Results with no call id answer the agent's own tool spans (``tools``, its children) in order where they
    are as many: AG2's group tool executor (``_Group_Tool_Executor``) gives its tools' results so, and its
    ``execute_tool`` span of a tool that failed records none (the tool's words were nowhere else); one such result
    for several spans is their results joined, the part of the one unanswered its own (:func:`_answered_joined`)."""
    unnamed = [m for m in agent.output_messages if m.get("role") == "tool" and not m.get("call_id")]
    ran = [by_call.get(t.call_id or "") for t in tools]
    if unnamed and len(unnamed) == len(ran):
        for step, m in zip(ran, unnamed):
            if step is not None and _unanswered(step):
                _answered(step, m)
    elif len(unnamed) == 1 and len(ran) > 1:  # the results of parallel calls joined (:func:`_answered_joined`)
        _answered_joined(ran, unnamed[0])
    for m in agent.output_messages:
        step = by_call.get(m.get("call_id") or "") if m.get("role") == "tool" else None
        if step is not None and _unanswered(step):
            _answered(step, m)
            step["started_at"] = step.get("started_at") or step.get("ended_at")


def _unanswered(step: dict[str, Any]) -> bool:
    """Whether a step has no result yet, or only one an exporter cut short (see ``RESULT_CUT``)."""
    return step.get("observation") is None or bool(step.get(RESULT_CUT))


#: A tool span's error that is a type alone, no words (AG2's ``autogen.opentelemetry`` sets ``error.type:
#: ExecutionError`` and nothing else on a tool that failed, the result only on one that did not): what the model
#: was given is the failure's words (AG2's ``f"Error: {e}"``), read into the error (:func:`_answered`), so that a
#: search for them finds the failure and one failing tool's errors are not all "ExecutionError". Only an exception
#: type's name, by its shape, not a list of endings (``ExceptionGroup``, ``httpx.ReadTimeout``,
#: ``ImproperlyConfigured``, ``NoSuchBucket`` end in none; review RF of round 49): a class's name in CamelCase (two
#: capitals and a small letter), one after a module's (``requests.Timeout``), or one ending like an exception's (ADK's
#: ``TOOL_ERROR`` too). A status word (``cancelled``, ``Timeout``, OTel's fallbacks ``_OTHER`` and ``timeout``, gRPC's
#: ``DEADLINE_EXCEEDED``) says no failure whose words the result is, and the result would read as them.
_BARE_ERROR = re.compile(r"(?:[A-Za-z_]\w*\.)+[A-Z]\w*[a-z]\w*|(?=\w*[a-z])[A-Z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*"
                         r"|(?:[A-Za-z_]\w*\.)*(?:[A-Za-z_]\w*)?(?:Error|ERROR|Exception|EXCEPTION|Exit|Interrupt)")
_ERROR_WORD = re.compile(r"^error:\s*", re.IGNORECASE)


def _answered(step: dict[str, Any], message: dict[str, Any]) -> None:
    """A step whose result only a later model input holds: that result, and its error where marked so (or
    where the result is Gemini's function-response shape, ``{"error": ...}``, ``{"result": ...}`` being its value; or
    a framework's fixed text for a tool that raised, :func:`~.messages.framework_failure`); an error its span gave
    as a type alone takes the result's words (``_BARE_ERROR``). A
    denial (:func:`~.messages.denial`) is the step's error alone: no tool ran, so it has no result."""
    text, failed = message.get("text"), message.get("failed") or framework_failure(message.get("text"))
    if is_denial(message):
        step["error"] = short(text, 600)
        step.pop(RESULT_CUT, None)
        return
    said = maybe_json(text)
    if isinstance(said, dict) and len(said) == 1 and set(said) <= {"result", "error"}:
        [(key, value)] = said.items()
        if value is not None:
            failed = failed or key == "error"
            text = value if isinstance(value, str) else json.dumps(value)
    step["observation"] = clip_step_text(text)
    step.pop(RESULT_CUT, None)
    if failed and not step.get("error"):
        step["error"] = short(provider_failure(step.get("action"), text) or text or "tool error", 600)
    elif _BARE_ERROR.fullmatch(step.get("error") or "") and isinstance(text, str) and text.strip():
        step["error"] = short(f"{step['error']}: {_ERROR_WORD.sub('', text.strip(), count=1)}", 600)


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
    nodes = tool_twins(nodes)
    _said_in_later_history(nodes)
    _turns_on_one_span(nodes)
    parallel_calls_in_call_order(nodes)
    order = in_tree_order(nodes)
    root = order[0][0]
    steps: list[dict[str, Any]] = []
    by_call: dict[str, dict[str, Any]] = {}
    pending: list[dict[str, Any]] = []  # calls requested by a model, not yet matched to a tool node
    evaluations: list[Evaluation] = []
    models: list[str] = []
    failed_containers: list[Node] = []
    fallback_models: list[str] = []

    def add_step(step: dict[str, Any]) -> dict[str, Any]:
        steps.append(step)
        return step

    unasked: tuple[dict[str, Any], Node] | None = None  # the last model words that asked for no tool, as a step
    ran_for: set[str] = set()  # the model calls some of whose calls a tool node ran
    said_by: dict[int, Node] = {}  # steps of a model's words, or of its calls no tool span ran (by id()) -> the model call
    asked_by: dict[int, tuple[str, int]] = {}  # tool steps (by id()) -> the model turn that asked, the call's rank
    twins = twin_calls([n for n, _ in order])
    by_id = {n.id: n for n, _ in order}
    parents = {n.parent for n, _ in order}
    # a model call inside a tool (an agent used as a tool): its words are the tool's work, which the tool's
    # result shows; they are not the agent talking to the user
    in_tool = {n.id for n, _ in order if n.role == "llm" and any(a.role == "tool" and a is not root
                                                                   and _returned_after(a, n)
                                                                   for a in ancestors(n, by_id))}
    speaking_agents = _speaking_agents(nodes)
    run = _agentchat_run(order)
    for node, _depth in order:
        evaluations.extend(Evaluation(**e) for e in node.evaluations)
        if node.model:  # a failed attempt names the model asked for, not the one that answered
            (fallback_models if node.role == "llm" and node.error else models).append(node.model)
        if node.role == "llm" and node.id in twins:
            continue
        if node.id in speaking_agents:
            _agent_turns(node, pending, add_step)
            continue
        if node.role == "llm":
            outputs = [Message(**m) for m in node.output_messages]
            inputs = [Message(**m) for m in node.input_messages]
            for msg in inputs:  # results of calls no tool node executed arrive as model input
                if msg.role == "tool" and msg.call_id in by_call and _unanswered(by_call[msg.call_id]):
                    _answered(by_call[msg.call_id], asdict(msg))
            text = "\n".join(m.text for m in outputs if m.role != "tool" and m.text).strip()
            if not text and not outputs and not prepared_request(node.output_text):  # not a prepared request (LlamaIndex)
                text = (node.output_text or "").strip()
            reasoning = "\n".join(m.reasoning for m in outputs if m.reasoning).strip()
            if any(c.get("name") for m in outputs for c in m.calls):
                trailing = _calls_in_turn(outputs, node, pending)
                if trailing and node.id not in in_tool:  # text after the last call (a streamed turn's parts)
                    said_by[id(add_step(_respond(trailing, None, node.end, node.end, node.error)))] = node
            elif text and node.id not in in_tool:  # a call that ran tools inside it (google-genai's automatic
                # function calling) answered when it ended, after them
                said_at = node.end if node.id in parents and node.end is not None else node.start
                said = add_step(_respond(text, reasoning or None, said_at, node.end, node.error))
                said_by[id(said)] = node
                if node.id not in parents:
                    unasked = (said, node)
            continue
        if node.role in ("tool", "retriever"):
            name = node.tool or node.name or ("retrieve" if node.role == "retriever" else "tool")
            match = next((p for p in pending if node.call_id and p["call"].get("id") == node.call_id), None)
            # by name, a call the app ran: a provider-run one (OpenAI's hosted web_search) is no app tool's of its name
            app_run = [p for p in pending if not p["call"].get(PROVIDER_RUN)]
            match = match or next((p for p in app_run if p["call"].get("name") == name), None) \
                or next((p for p in app_run if tool_key(p["call"].get("name")) == tool_key(name)), None)
            # a model call that asked for *something* just before: its text is the reason for this step
            thought = None
            if match:
                pending.remove(match)
                thought = match["thought"]
                ran_for.add(match["by"].id)
            elif unasked and steps[-1] is unasked[0] and _ran_on_words(node, unasked[1]):
                # words that asked for no tool, then a tool no model call asked for, run on them (a code agent's
                # "Thought: ... <code>", which smolagents executes): the words were the reason for it
                said = steps.pop()
                thought = clip_step_text("\n\n".join(t for t in (said.get("thought"), said["arguments"]["content"]) if t))
            unasked = None
            asked = maybe_json((match or {}).get("call", {}).get("arguments"))
            step = add_step({
                "thought": thought, "action": name, "arguments": maybe_json(_arguments(node.arguments, asked)),
                "observation": clip_step_text(node.result) if node.result is not None else None,
                "error": short(error, 600) if (error := failed(node.error) or mcp_error(node.result)
                                               or shell_error(node.arguments, node.result, name)) else None,
                "started_at": when(node.start), "ended_at": when(node.end),
                **({RESULT_CUT: True} if node.info.get(RESULT_CUT) else {}),
            })
            if node.call_id:
                by_call[node.call_id] = step
            if match:
                asked_by[id(step)] = (match["turn"], match["rank"])
            continue
        if node.role == "agent" and _ran_code_asked(node, steps):
            continue
        if node.role == "agent" and (answer := _task_answer(node, order, by_id)):
            add_step(_respond(answer, None, node.end, node.end, None))
        if node.role in ("agent", "chain") and node is not root and failed(node.error):
            failed_containers.append(node)
    # the run's last model call failed and nothing answered after it (a provider error is not a step's fault)
    last_call = max((n for n, _ in order if n.role == "llm" and n.id not in twins), key=start_order, default=None)
    answered = bool(root.output_text) or any(m.get("text") and not m.get("calls") and m.get("role") != "tool"
                                             for m in root.output_messages)  # a root with a final answer finished
    failed_call = last_call if last_call and failed(last_call.error) and not last_call.output_messages \
        and not answered else None
    ran: set[str] = set()  # the agents found to have run a call
    traced = {n.tool or n.name for n, _ in order if n.role == "tool"}  # the tools whose runs the trace records
    last_calls = _last_calls([n for n, _ in order if n.role == "llm" and n.id not in twins], by_id)
    last_asked: list[tuple[dict[str, Any], Node]] = []  # asked for by an agent's last model call, none of whose calls ran
    for p in pending:  # calls whose execution was not traced: keep them, results from model inputs
        call = p["call"]
        step = {"thought": p["thought"], "action": str(call.get("name")), "arguments": call.get("arguments"),
                "observation": None, "ended_at": when(p["at"])}
        if (agent := _agent_that_ran(call, p["by"], order, ran)) is not None:
            ran.add(agent.id)
            step.update(observation=clip_step_text(agent.result) if agent.result is not None else None,
                        error=short(error, 600) if (error := failed(agent.error)) else None,
                        started_at=when(agent.start), ended_at=when(agent.end))
        elif call.get("name") in traced and p["by"].id in last_calls and p["by"].id not in ran_for \
                or p["by"].id in last_calls and _stopped_for_calls(p["by"]):
            last_asked.append((step, p["by"]))
        steps.append(step)
        said_by[id(step)] = p["by"]
        if call.get("id"):
            by_call[call["id"]] = step
    if not any(s.get("action") == "respond" for s in steps) and not any(
            n.role == "llm" and n.output_messages for n in nodes):
        _root_answer(root, add_step, steps, run)  # model calls traced without content (Semantic Kernel): the answer
    _agentchat_failures(run, steps)
    # second pass: results of untraced calls in the output of the call that asked (a tool its provider ran:
    # ``messages._provider_results_apart``), then those that only appear in later model inputs. Id-less ones
    # (Gemini's code execution) go by place, each model call's to the steps it made, all before any input history:
    # a later call's history holds the earlier turns' runs, which would take the steps of a later run of the same code
    said: dict[int, list[dict[str, Any]]] = {}  # model call (by id()) -> the steps it said, in order: one pass
    for step in steps:
        if id(step) in said_by:
            said.setdefault(id(said_by[id(step)]), []).append(step)
    for node in (n for n, _ in order if n.role == "llm"):
        _answered_in_turn(node.output_messages, said.get(id(node), []), by_call)
    for node, _ in order:
        for m in [*node.input_messages, *(node.output_messages if node.role == "llm" else [])]:
            if m.get("role") == "tool" and m.get("call_id") in by_call and _unanswered(by_call[m["call_id"]]):
                _answered(by_call[m["call_id"]], m)
        _answered_in_turn(node.input_messages, steps, by_call)
        steps.extend(_denied_calls(node, by_call))
    tools_of: dict[str, list[Node]] = {}  # agent id -> its tool spans, in order
    for node in (n for n, _ in order if n.role == "tool" and n.parent):
        tools_of.setdefault(node.parent, []).append(node)  # type: ignore[arg-type]
    for node in (n for n, _ in order if n.role == "agent"):
        _answered_by_agent(node, by_call, tools_of.get(node.id, []))
    _refused([root, *failed_containers], steps, said_by, by_id)  # the root too: the AI SDK's generateObject
    for step, asker in last_asked:  # tools whose runs the trace records (an output tool such as pydantic-ai's
        # final_result is no such tool: the call is the answer) that did not run, nor the others asked with them,
        # and no later model call saw a result
        if step["observation"] is None and not step.get("error"):
            step["error"] = _NOT_RUN_AI_SDK if _stopped_for_calls(asker) else _NOT_RUN
    failed_calls = [n for n, _ in order if n.role == "llm" and n.id not in twins and failed(n.error)
                    and not n.output_messages]
    steps.extend(_container_failures(failed_containers, steps, failed_calls, by_id))
    # a model call that asked for no tool and started in the same instant as a tool step (starts rounded to the
    # millisecond) answered after it: no tool ran on its word
    _in_step_order(steps, asked_by)
    for index, step in enumerate(steps):
        step["index"] = index
        step.pop(RESULT_CUT, None)
        if isinstance(step.get("thought"), str):
            step["thought"] = clip_step_text(step["thought"]) or None

    task = task.strip() if task and task.strip() else _task(order)
    task = clip_task(_prompts.from_markers(task) or task)  # an agent framework's prompt: its task part
    outcome, reward, deciding = outcome_from(evaluations)
    failure = None
    basis = f"evaluation {deciding.name!r}" if deciding else None
    root_error = failed(root.error)
    if outcome is Outcome.unknown and root_error:
        basis = "error status of the root span"
    elif outcome is Outcome.unknown and failed_call is not None:  # streamText leaves its root unmarked
        root_error = failed_call.error
        basis = "error status of the last model call"
    elif outcome is Outcome.unknown and (ended := _failure_that_ended(failed_containers, nodes, last_call)) is not None:
        root_error = ended.error
        basis = f"error status of the {ended.role} {ended.name!r}, which ended the run"
    if outcome is Outcome.unknown and root_error:
        outcome = error_outcome(root_error, by_tool=_started_in_tool(root_error, order))
    if outcome in (Outcome.failure, Outcome.infra_error):
        last = last_tool_error(steps)
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
            cause = INFRA_CAUSE
        failure = Failure(error=error, cause=short(cause, 2000) if cause else None)
    starts = [n.start for n in nodes if n.start]
    later = _later_requests(order, task, every_root=what == "conversation")
    metadata: dict[str, Any] = {
        "spans": len(nodes),
        "root_span": root.name,
        **({"user_prompts": prompt_list(later)} if later else {}),
        **({"outcome_basis": basis} if basis else {}),
        **({"evaluations": [asdict(e) for e in evaluations[:10]]} if evaluations else {}),
        **_run_info(root, order),
    }
    return Assembled(
        task=task, steps=steps, outcome=outcome, reward=reward, failure=failure,
        created_at=when(min(starts)) if starts else None, model_id=(models or fallback_models or [None])[0],
        root=root, metadata=metadata,
    )


#: What an agent span knows of its run; a root that is no agent (an HTTP server span: kagent's A2A ``POST /``)
#: does not record it. Who the agent is comes from one agent, lest one agent's name be paired with another's id:
#: the outermost span that names one (the OpenAI Agents SDK's outermost, ``Agent workflow``, names none; the
#: agents it runs are below it), with what it lacks from spans naming the same agent (traceloop's LangGraph
#: ``invoke_agent LangGraph`` has no id, its ``LangGraph.workflow`` child has), then from nameless agent spans
#: around it, never from a span naming another agent. The conversation and user are the whole request's, recorded
#: by whichever agent span knows them (kagent's proxy span names the agent, the served ADK agent's span, in a tree
#: of its own, holds the conversation).
_AGENT_IDENTITY = ("agent_name", "agent_id", "provider")
_SESSION_FACTS = ("conversation_id", "user_id")


def _run_info(root: Node, order: list[tuple[Node, int]]) -> dict[str, Any]:
    """The root's info; under a root that is no agent, with what it lacks of the agent's identity taken from the
    spans of one agent (:func:`_identity_spans`) and of the session from the outermost agent span (the shallowest,
    then the earliest) that records it, so an A2A-served run still carries its agent and conversation."""
    info = {k: v for k, v in root.info.items() if v not in (None, "", [], {}) and k not in (EMBEDS, OFFERED)}
    if root.role == "agent":
        return info
    outermost_first = sorted((pair for pair in order if pair[0].role == "agent"), key=lambda p: (p[1], start_order(p[0])))
    agents = [n for n, _ in outermost_first]
    identity = _identity_spans(agents, order)
    for key in _AGENT_IDENTITY:
        _fill(info, key, identity)
    for key in _SESSION_FACTS:
        _fill(info, key, agents)
    return info


def _identity_spans(agents: list[Node], order: list[tuple[Node, int]]) -> list[Node]:
    """Of agent spans (outermost first), those of the outermost that names an agent: it, the others naming it,
    then the nameless agent spans around it, nearest first (the Agents SDK's ``Agent workflow``, the Claude Agent
    SDK's ``query``: a wrapper that records the provider); the outermost alone when none names one."""
    named = next((n for n in agents if n.info.get("agent_name")), None)
    if named is None:
        return agents[:1]
    same = [n for n in agents if n.info.get("agent_name") == named.info["agent_name"]]
    by_id = {n.id: n for n, _ in order}
    around = [a for a in ancestors(named, by_id) if a.role == "agent" and not a.info.get("agent_name")]
    return same + around


def _fill(info: dict[str, Any], key: str, nodes: list[Node]) -> None:
    """``info[key]``, if missing, from the first of ``nodes`` that records it."""
    if key not in info:
        found = next((n.info[key] for n in nodes if n.info.get(key) not in (None, "", [], {})), None)
        if found is not None:
            info[key] = found


def _started_in_tool(error: str, order: list[tuple[Node, int]]) -> bool:
    """Whether ``error`` started in a tool's (or retriever's) own span: the deepest span whose error is this one
    (the same text, or one holding the other and at least half its length: a framework re-raises a tool's
    exception on every span above it, ADK's and pydantic-ai's with the same message) is a tool's. A model
    call's timeout that a tool (an agent used as a tool) passed on started in the model call."""
    def same(own: str | None) -> bool:  # one holds the other, and is no mere fragment of it ("timed out")
        own, whole = (failed(own) or "").strip(), error.strip()
        shorter, longer = sorted((own, whole), key=len)
        return bool(own) and shorter in longer and len(shorter) >= len(longer) / 2

    carriers = [(depth, n.seq, n) for n, depth in order if same(n.error)]
    return bool(carriers) and max(carriers, key=lambda c: c[:2])[2].role in ("tool", "retriever")


def _task(order: list[tuple[Node, int]]) -> str:
    """The root's input; else the outermost agent or chain given a plain instruction before the first
    model call or around it (the run's entry point under an app's own root span: a model call's first
    user message is often a rendered prompt); else the first user message of a model call; else any
    container's input."""
    root = order[0][0]
    first_call = next((n for n, _ in order if n.role == "llm"), None)
    by_id = {n.id: n for n, _ in order}
    entry = min(((depth, n.seq, text) for n, depth in order[1:] if n.role in ("agent", "chain")
                 and _leads_to(n, first_call, by_id) and (text := _plain(task_from_input(n.input_text)))),
                default=None)
    candidates: Iterator[str | None] = (
        c
        for c in (
            first_user_text(root.input_messages),
            _plain(task_from_input(root.input_text)),  # not a framework's state dumped as JSON (LlamaIndex's)
            entry[2] if entry else None,
            *(first_user_text(n.input_messages) for n, _ in order if n.role in ("llm", "agent")),
            *(task_from_input(n.input_text) for n, _ in order if n.role in ("agent", "chain")),
        )
    )
    task = next((c for c in candidates if c and c.strip()), None)
    if not task:
        raise RecordError(f"no task: the root span {root.name!r} has no input and no model call has a user message")
    return clip_task(task.strip())


def _later_requests(order: list[tuple[Node, int]], task: str, *, every_root: bool) -> list[str]:
    """What a run's later turns asked, each once (``metadata.user_prompts``, as the agent CLIs keep a session's
    later prompts), so later steps are not read as answering the first request. With ``every_root``, each root
    starts a turn (a conversation groups several traces, each a turn under a root of its own); else only an agent
    or chain span without a parent does (one trace holding two invocations), not a span whose parent went
    unexported or a content log without its span. A span its adapter marks ``RUN_START`` starts one too, at any
    depth (several runs under one trace record); of a later run under the same parent (a trace's second
    ``Runner.run``), the request is a user's only where the run continues the conversation (:func:`_continues`):
    else it is a stage of the app's workflow (the Agents SDK's deterministic flows, a picker after parallel runs),
    given an earlier run's output or a text the app built. A trace's first run is its turn of a conversation."""
    turns: list[list[Node]] = []
    stages: set[int] = set()  # the turns that are a later run under the same parent
    run_parents: set[str | None] = set()
    for node, depth in order:
        if not turns or depth == 0 and (every_root or node.parent is None and node.role in ("agent", "chain")) \
                or node.info.get(RUN_START):
            turns.append([])
        if node.info.get(RUN_START):
            if node.parent in run_parents:
                stages.add(len(turns) - 1)
            run_parents.add(node.parent)
        turns[-1].append(node)
    asked: list[str] = []
    for index, turn in enumerate(turns[1:], 1):
        messages = _request_messages(turn)
        if index in stages and not _continues(turn, messages):
            continue
        request = _request(turn, messages)
        if request and request != task and request not in asked:
            asked.append(request)
    return asked


def _request_messages(turn: list[Node]) -> list[dict[str, Any]]:
    """The first message list of a turn that holds a user message (a later turn is given the conversation's
    history, the earlier requests first)."""
    return next((n.input_messages for n in turn
                 if (n is turn[0] or n.role in ("llm", "agent")) and first_user_text(n.input_messages)), [])


def _continues(turn: list[Node], messages: list[dict[str, Any]]) -> bool:
    """Whether a run continues the conversation before it: its input holds an earlier turn of the model's (the Agents
    SDK's ``to_input_list()`` plus the user's next message, a session's history), or it or a model call of it
    continues one kept on the server (``CONTINUES``: an ADK session's invocation, whose model may have failed before
    it spoke, or a workflow's nodes that start afresh each turn)."""
    return any(m.get("role") in ("assistant", "model") for m in messages) \
        or any(n.info.get(CONTINUES) for n in turn if n.role == "llm" or n is turn[0])


def _request(turn: list[Node], messages: list[dict[str, Any]]) -> str | None:
    """A turn's request: the latest user message of its first message list (:func:`_request_messages`), else its
    root's plain input."""
    users = user_requests(messages)
    text = users[-1] if users else _plain(task_from_input(turn[0].input_text))
    return clip_task(_prompts.from_markers(text) or text.strip()) if text and text.strip() else None


def _leads_to(node: Node, call: Node | None, by_id: dict[str, Node]) -> bool:
    """Whether ``node`` contains the run's first model call or started before it (not a sub-task the
    model handed out later)."""
    if call is None:
        return True
    if _descends_from(call, node, by_id):
        return True
    return node.start is not None and call.start is not None and node.start <= call.start


def _plain(text: str | None) -> str | None:
    """``text`` unless it is a structure dumped as JSON or an object's repr (an input that names no instruction)."""
    plain = text and text.strip() and not text.lstrip().startswith(("{", "[")) and not is_object_repr(text)
    return text if plain else None


def span_trajectory(fmt: str, prefix: str, key: str, nodes: list[Node], ctx: Context, *, by: str = "trace") -> Trajectory:
    """The Trajectory of one group of nodes (a trace, or a conversation of several traces)."""
    run = assemble(nodes, what=by)
    metadata = {"source_format": fmt, f"{by}_id": key, **run.metadata}
    steps = kept_steps(run.steps, metadata)
    fields: dict[str, Any] = {
        "trajectory_id": trajectory_id(prefix, key, by),
        "task": run.task,
        "task_id": run.root.info.get("task_id"),
        "model_id": run.model_id,
        "outcome": run.outcome,
        "reward": run.reward,
        "failure": run.failure,
        "steps": steps,
        "created_at": run.created_at,
        "metadata": metadata,
        "tools_available": tools_offered(nodes, run.steps) or None,
    }
    return build({k: v for k, v in fields.items() if v is not None}, ctx)


def kept_steps(steps: list[dict[str, Any]], metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps a span format's run keeps: all, or of a run of more than ``MAX_STEPS`` those a long CLI session
    keeps (:func:`~.._agent_cli.within_step_limit`: its start, its end, the errors between; ``metadata`` notes the
    clip), not the run refused: a session of thousands of turns (an ADK session, a long-lived LangGraph thread) is
    one run. Every span format's builder (:func:`span_trajectory`, ``_vendor.trajectory``) clips here."""
    return [step for _, step in within_step_limit(steps, metadata)]


def tools_offered(nodes: list[Node], steps: list[dict[str, Any]]) -> list[str]:
    """The tools the run's steps called, then every other tool its spans say were offered (:data:`~.nodes.OFFERED`,
    first mention first): its ``tools_available``, never narrower than what it used (a built-in the definitions leave
    out, pydantic-ai's web search; the tools of a span whose list was not exported), as the index files a run by that
    list (``--tool``), its first ``MAX_TOOLS`` (64) only: the called first, so an MCP server's hundred tools offered cut
    none of them. None where no span lists any (what a run called is no list of what it had)."""
    offered = [name for n in nodes for name in n.info.get(OFFERED, ())]
    return list(dict.fromkeys([*tools_of(s.get("action") for s in steps), *offered])) if offered else []


def trajectory_id(prefix: str, key: str, by: str = "trace") -> str:
    """``<prefix>:<key>`` for a trace, ``<prefix>:<by>:<key>`` for a conversation, as a safe id."""
    return safe_id(f"{prefix}:{key}" if by == "trace" else f"{prefix}:{by}:{key}")


def untyped_model_calls(nodes: list[Node]) -> list[Node]:
    """``nodes`` with each span no convention typed that records a model's messages (``Node.info[UNTYPED_MESSAGES]``)
    a model call only where it records the model's output and nothing below it is typed or such a span: a model
    call is a leaf of its run. Else it is a container whose messages copy its calls' (Strands' untyped
    ``execute_event_loop_cycle`` around ``chat`` and ``execute_tool``, an app's own span around a run): read as a
    model call it said the answer twice or in the wrong place, or, its calls not exported, hid the agent's answer."""
    kids: dict[str | None, list[Node]] = {}
    for node in nodes:
        kids.setdefault(node.parent, []).append(node)

    def works_below(node: Node) -> bool:
        todo, seen = list(kids.get(node.id, [])), {node.id}
        while todo:
            kid = todo.pop()
            if kid.id in seen:
                continue
            seen.add(kid.id)
            if kid.role not in ("other", "event") or kid.info.get(UNTYPED_MESSAGES):
                return True
            todo.extend(kids.get(kid.id, []))
        return False

    for node in nodes:
        if node.info.get(UNTYPED_MESSAGES) and node.role == "llm" and (not node.output_messages or works_below(node)):
            node.role = "other"
    return nodes


def no_agent_work(nodes: list[Node]) -> str | None:
    """Why a group holds no agent run though it records model work: its only model work is embedding or rerank
    calls (``Node.info[EMBEDS]``), with no agent, model call or tool around them ("embedding calls only"); None
    otherwise. A RAG app's query embedding is such a trace (one per query where each SDK call is a trace of its
    own, as the AI SDK's and OpenAI's instrumentors make them): no run to search or learn from, and nothing wrong,
    so every span adapter passes it over rather than keep a run of no steps whose task is the query."""
    if any(n.role in ("agent", "llm", "tool") for n in nodes):
        return None
    kinds = sorted({n.info[EMBEDS] for n in nodes if n.info.get(EMBEDS)})
    return f"{' and '.join(kinds)} calls only" if kinds else None


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
