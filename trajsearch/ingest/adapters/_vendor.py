"""What the two vendor-platform adapters (Langfuse, LangSmith) share beyond ``_spans``.

Both platforms store whatever the traced SDK handed them: model inputs and
outputs in the shapes of OpenAI Chat Completions and Responses, Anthropic
Messages, Gemini ``contents`` / ``candidates``, LangChain messages (plain or
``lc``-serialised), GenAI-semconv ``parts`` and agent frameworks' own dumps,
often as JSON text (sometimes encoded twice) or a Python ``repr``. This module
turns those into ``_spans.Message`` dicts with string call ids, finds the
user's instruction in a run's inputs, reduces scores / feedback to a verdict,
and builds the trajectory with that task and verdict.

Verdicts: only an evaluation named like success / correctness / reward
(:func:`outcome_like`) or labelled with an unambiguous resolution word decides
the outcome or becomes the reward; toxicity, hallucination, helpfulness,
relevance, user ratings and the like stay in metadata.
"""

from __future__ import annotations

import ast
import re
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable, TypeVar

from trajsearch.blobs import image_placeholder
from trajsearch.first_few import first_few
from trajsearch.model import Failure, Outcome, Trajectory

from ._common import Context, RecordError, build, last_tool_error, loads, outcome_of_reward, short
from ._spans import (FAIL_LABELS, OUTCOME_METRICS, PASS_LABELS, Message, Node, ancestors, assemble, kept_steps,
                     normalise_message, start_order, text_of, tools_offered)
from ._spans.messages import denied_error, is_object_repr
from ._spans import trajectory_id as span_trajectory_id

_LITERAL_LIMIT = 200_000
_ROLES = {
    "human": "user", "ai": "assistant", "model": "assistant", "bot": "assistant", "function": "tool",
    "chat": "user", "developer": "system", "generic": "user", "ipython": "tool",
}
_KNOWN_ROLES = frozenset({"user", "assistant", "system", "tool"})
_TRANSCRIPT = re.compile(r"^(system|developer|user|human|assistant|ai|model|tool)\s*:\s", re.I | re.M)
_AGNO_REPR = re.compile(r"""^role='(?P<role>\w+)' content=(?P<content>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|None)""", re.S)
#: ``name=`` at the start of a repr's field (pydantic's ``__repr_str__``) and a default object repr.
_TEXT_PARTS = ("text", "input_text", "output_text", "summary_text")
_REASONING_PARTS = ("reasoning", "thinking", "redacted_thinking")
#: The Vercel AI SDK's (v5+) tool-result outputs that are an error: the tool threw, or the SDK refused the call (an
#: unknown tool, input that fails its schema) and no tool ran (``ai`` ``prompt/create-tool-model-output.ts``).
_AI_SDK_ERROR_OUTPUTS = ("error-text", "error-json")
#: Every kind of the SDK's (v5+) tool-result output (``provider-utils`` ``ToolResultOutput``): each has a ``value``
#: but ``execution-denied`` (only a ``reason``).
_AI_SDK_OUTPUTS = ("text", "json", "content", "execution-denied", *_AI_SDK_ERROR_OUTPUTS)
#: Keys of an inputs object that hold the instruction itself (in this order).
INSTRUCTION_KEYS = (
    "task", "instruction", "input", "question", "query", "prompt", "goal", "user_input", "user_message",
    "message", "content", "text", "request",
)


# -- values ------------------------------------------------------------------------------


def decode(value: Any, depth: int = 3, *, literal: bool = False) -> Any:
    """JSON text decoded (several times: exports encode some fields twice), else as is.

    ``literal``: also a Python ``repr`` of a dict or list (``{'query': 'x'}``, how
    LangChain records a tool's arguments, and LangSmith's Agents SDK integration an
    error); only for arguments and errors, never for results.
    """
    for _ in range(depth):
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text or text[0] not in '{["':
            return value
        try:
            value = loads(text)
            continue
        except ValueError:
            pass
        if literal and text[0] in "{[" and len(text) <= _LITERAL_LIMIT:  # a Python repr: {'query': 'x'}
            try:
                return ast.literal_eval(text)
            except Exception:  # literal_eval raises several kinds on non-literals
                return value
        return value
    return value


def call_id(value: Any) -> str | None:
    """A tool-call id as text; a list id (Microsoft Agent Framework: ``[run id, call id]``) -> its last part."""
    if isinstance(value, (list, tuple)):
        parts = [p for p in value if p not in (None, "")]
        return call_id(parts[-1]) if parts else None
    if value in (None, ""):
        return None
    return str(value)


def result_text(value: Any) -> str | None:
    """A tool's result as text: a string as written (unwrapped when it is a JSON-encoded string), else JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        inner = decode(value, depth=1)
        return inner if isinstance(inner, str) else value
    return text_of(value)


@dataclass
class SdkToolOutput:
    """A Vercel AI SDK tool result's ``output`` (v5+ ``ToolResultOutput``) read: its text, and whether it is an
    error (``error-text`` / ``error-json``) or the user's denial (``execution-denied``: no tool ran; ``text`` its
    reason, or empty)."""
    text: str
    failed: bool = False
    denied: bool = False

    def as_result(self) -> tuple[str, bool]:
        """The output as a tool message's text and whether the call failed: a denial worded as every call the
        harness did not run is (:func:`~._spans.messages.denied_error`), so all readers of the SDK's messages agree."""
        return (denied_error(self.text), True) if self.denied else (self.text, self.failed)


def sdk_output(value: Any) -> SdkToolOutput | None:
    """``value`` read as the SDK's tool-result output (:func:`sdk_tool_output`) where it is one (a kind of
    :data:`_AI_SDK_OUTPUTS` with its ``value``, or a denial), else None: a ``{"type": "text", "text": ...}`` content
    part is no output."""
    if not isinstance(value, dict) or value.get("type") not in _AI_SDK_OUTPUTS:
        return None
    return sdk_tool_output(value) if "value" in value or value["type"] == "execution-denied" else None


def sdk_tool_output(output: dict[str, Any]) -> SdkToolOutput:
    """``output`` (``{type, value}``, ``provider-utils`` ``content-part.ts``) as text: ``text`` / ``error-text`` as
    written, ``json`` / ``error-json`` as JSON, ``content`` its text parts joined, each media part a placeholder
    (``toModelOutput``'s screenshot is base64: not the observation)."""
    kind, value = output.get("type"), output.get("value")
    if kind == "execution-denied":
        reason = output.get("reason")
        return SdkToolOutput(reason if isinstance(reason, str) else "", denied=True)
    if kind == "content" and isinstance(value, list):
        return SdkToolOutput("\n".join(t for t in map(_sdk_content_text, value) if t))
    return SdkToolOutput(result_text(value) or "", failed=kind in _AI_SDK_ERROR_OUTPUTS)


def _sdk_content_text(part: Any) -> str:
    """A ``content`` output's part: its text, or what stands for its media (``image-data`` / ``file-data`` / v5's
    ``media`` base64, a URL or file id named by its type)."""
    if not isinstance(part, dict):
        return text_of(part)
    if part.get("type") == "text":
        return text_of(part.get("text"))
    if isinstance(part.get("data"), str):
        return image_placeholder({"data": part["data"], "mimeType": part.get("mediaType")})
    return f"[{part.get('type') or 'part'}]"


def as_list(value: Any) -> list[Any]:
    """A list field that may arrive as JSON text, or missing: a list (anything else is no list)."""
    value = decode(value)
    return value if isinstance(value, list) else []


def is_empty(value: Any) -> bool:
    return value is None or value == {} or value == [] or (isinstance(value, str) and value.strip() in ("", "None", "null"))


# -- messages ----------------------------------------------------------------------------


def _role(raw: Any, default: str) -> str:
    role = str(raw or default).strip().lower()
    if role.endswith("messagechunk"):
        role = role[: -len("messagechunk")]
    elif role.endswith("message") and role != "message":
        role = role[: -len("message")]
    return _ROLES.get(role, role) or default


def _call(raw: dict[str, Any]) -> dict[str, Any] | None:
    """One tool call in OpenAI / LangChain / Anthropic / Gemini / Responses shape -> ``{id, name, arguments}``."""
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else raw
    name = fn.get("name") or fn.get("toolName")  # Vercel AI SDK: toolName / toolCallId
    if not name:
        return None
    args = next((fn[k] for k in ("arguments", "args", "input", "parameters") if k in fn), None)
    ident = raw.get("call_id") or raw.get("toolCallId") or raw.get("id") or raw.get("tool_call_id")
    return {"id": call_id(ident), "name": str(name), "arguments": decode(args, literal=True)}


def _parts(parts: list[Any], msg: Message, extra: list[Message]) -> None:
    """Content parts (OpenAI, Anthropic, GenAI semconv, Gemini, Responses, Koog) into ``msg``; results -> ``extra``."""
    texts: list[str] = [msg.text] if msg.text else []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
            continue
        if not isinstance(part, dict):
            continue
        kind = str(part.get("type") or "")
        if kind in _TEXT_PARTS or (not kind and isinstance(part.get("text"), str)):
            if part.get("thought") is True:  # Gemini thought summary
                msg.reasoning += text_of(part.get("text"))
            else:
                texts.append(text_of(part.get("text", part.get("content"))))
        elif kind == "refusal":  # OpenAI's refusal content part: the model's words
            texts.append(text_of(part.get("refusal")))
        elif kind in _REASONING_PARTS:
            body = part.get("thinking", part.get("content", part.get("text", part.get("summary"))))
            msg.reasoning += "\n".join(text_of(b.get("text") if isinstance(b, dict) else b) for b in body) \
                if isinstance(body, list) else text_of(body)
        elif kind in ("tool_use", "server_tool_use", "tool_call", "function_call", "tool-call") or \
                (kind == "function" and isinstance(part.get("function"), dict)):
            call = _call(dict(part, arguments=part.get("input", part.get("args", part.get("arguments")))) if
                         kind != "function" else part)
            if call:
                msg.calls.append(call)
        elif kind in ("tool_result", "tool_call_response", "function_call_output", "tool-result"):
            body = part.get("content", part.get("response", part.get("result", part.get("output"))))
            errored = False
            if (said := sdk_output(body)) is not None:  # Vercel AI SDK v5+ tool output
                body, errored = said.as_result()
            if isinstance(body, list):
                body = "\n".join(text_of(b.get("text")) if isinstance(b, dict) and "text" in b else text_of(b) for b in body)
            extra.append(Message("tool", text_of(decode(body)) if not isinstance(body, str) else body,
                                 call_id=call_id(part.get("tool_use_id") or part.get("id") or part.get("call_id") or
                                                 part.get("toolCallId")), failed=errored))
        elif "function_call" in part or "functionCall" in part:  # Gemini part
            fc = part.get("function_call") or part.get("functionCall") or {}
            if isinstance(fc, dict) and fc.get("name"):
                msg.calls.append({"id": call_id(fc.get("id")), "name": str(fc["name"]),
                                  "arguments": decode(fc.get("args"), literal=True)})
        elif "function_response" in part or "functionResponse" in part:
            fr = part.get("function_response") or part.get("functionResponse") or {}
            if isinstance(fr, dict):
                extra.append(Message("tool", text_of(fr.get("response")), call_id=call_id(fr.get("id"))))
        elif kind not in ("image", "image_url", "input_image", "file", "input_file", "audio", "input_audio") \
                and isinstance(part.get("content"), str):
            texts.append(part["content"])
    msg.text = "\n".join(t for t in texts if t)


def _message(raw: dict[str, Any], default: str) -> list[Message]:
    """One message object in any of the shapes above; a tool result inside it becomes its own message."""
    if isinstance(raw.get("kwargs"), dict) and isinstance(raw.get("id"), list) and raw["id"]:  # LangChain "lc"
        raw = dict(raw["kwargs"], type=str(raw["id"][-1]))
    elif isinstance(raw.get("data"), dict) and "type" in raw:  # LangChain message dict
        raw = dict(raw["data"], type=raw["type"])
    if any(str(k).startswith("message.") for k in raw):  # OpenInference flattened message
        found = normalise_message(raw)
        return [_clean(found)] if found else []
    kind = raw.get("type")
    if kind in ("function_call", "custom_tool_call", "tool-call") or (
            "toolName" in raw and "role" not in raw and kind != "tool-result"):  # Responses / Vercel AI SDK items
        call = _call(raw)
        return [Message("assistant", calls=[call])] if call else []
    if kind in ("function_call_output", "custom_tool_call_output"):
        return [Message("tool", text_of(decode(raw.get("output"))) if not isinstance(raw.get("output"), str)
                        else raw["output"], call_id=call_id(raw.get("call_id")))]
    if kind == "reasoning" and "role" not in raw:
        summary = raw.get("summary") or raw.get("content") or []
        text = "\n".join(text_of(s.get("text")) if isinstance(s, dict) else text_of(s) for s in summary) \
            if isinstance(summary, list) else text_of(summary)
        return [Message("assistant", reasoning=text)] if text else []
    typed = _role(kind, default) if isinstance(kind, str) else None
    role = _role(raw.get("role") or (typed if typed in _KNOWN_ROLES else None), default)
    msg, extra = Message(role), []
    content = raw.get("content")
    if isinstance(content, dict) and "parts" in content:  # Gemini candidate / ADK event content
        return _message(dict(content, role=content.get("role") or role), default)
    if isinstance(raw.get("parts"), list):
        _parts(raw["parts"], msg, extra)
    if isinstance(content, str):
        msg.text = "\n".join(t for t in (msg.text, content) if t)
    elif isinstance(content, list):
        _parts(content, msg, extra)
    elif isinstance(content, dict):
        if content.get("type") or "text" in content:
            _parts([content], msg, extra)
        else:
            msg.text = text_of(content)
    for key in ("reasoning_content", "reasoning", "thinking"):
        if isinstance(raw.get(key), str) and raw[key]:
            msg.reasoning = raw[key]
    if not msg.text and (refusal := _refusal(raw)):
        msg.text = refusal
    calls = decode(raw.get("tool_calls", raw.get("toolCalls")))  # Vercel AI SDK output: a JSON string
    if not calls and isinstance(raw.get("additional_kwargs"), dict):  # LangChain AIMessage from OpenAI
        calls = raw["additional_kwargs"].get("tool_calls")
        if not calls and isinstance(raw["additional_kwargs"].get("function_call"), dict):
            calls = [raw["additional_kwargs"]["function_call"]]
    if not calls and isinstance(raw.get("function_call"), dict):  # legacy OpenAI function calling
        calls = [raw["function_call"]]
    # LangChain keeps an Anthropic tool_use / Responses function_call block in ``content`` *and* in ``tool_calls``
    in_content = {c["id"]: c for c in msg.calls if c.get("id")}
    for item in calls if isinstance(calls, list) else []:
        if not (isinstance(item, dict) and (call := _call(item))):
            continue
        twin = in_content.get(call["id"]) if call["id"] else None
        if twin is None:
            msg.calls.append(call)
        elif is_empty(twin.get("arguments")):  # a streamed block's input is {} (its JSON in partial_json)
            twin["arguments"] = call["arguments"]
    if role == "tool" or raw.get("tool_call_id"):
        msg.call_id = call_id(raw.get("tool_call_id") or raw.get("tool_use_id") or raw.get("call_id"))
        msg.failed = str(raw.get("status") or "").lower() == "error"  # a LangChain ToolMessage's tool error
    if role == "tool" and not msg.text and not extra and not is_empty(content):
        msg.text = text_of(content)
    out = [msg] if (msg.text or msg.reasoning or msg.calls or msg.call_id) else []
    return out + extra


def _refusal(raw: dict[str, Any]) -> str | None:
    """The words of a model's refusal, which OpenAI gives beside a null ``content`` (LangChain keeps them in
    ``additional_kwargs``): often a run's last words, so they are its reply."""
    kwargs = raw.get("additional_kwargs") if isinstance(raw.get("additional_kwargs"), dict) else {}
    refusal = raw.get("refusal") or kwargs.get("refusal")
    return (refusal.strip() or None) if isinstance(refusal, str) else None


def _clean(msg: Message) -> Message:
    msg.call_id = call_id(msg.call_id)
    msg.calls = [dict(c, id=call_id(c.get("id"))) for c in msg.calls]
    return msg


def _text(text: str, default: str) -> list[Message]:
    """A message given as text: an agno ``Message`` repr, a ``role: text`` transcript, or plain text."""
    if (m := _AGNO_REPR.match(text)) is not None:
        try:
            content = ast.literal_eval(m.group("content"))
        except Exception:
            content = None
        return [Message(_role(m.group("role"), default), content or "")] if content else []
    if _TRANSCRIPT.match(text):
        found = list(_TRANSCRIPT.finditer(text))
        out = []
        for n, head in enumerate(found):
            body = text[head.end(): found[n + 1].start() if n + 1 < len(found) else len(text)].strip()
            if body and body != "None":
                out.append(Message(_role(head.group(1), default), body))
        return out
    return [] if is_empty(text) else [Message(default, text)]


def messages(value: Any, default: str = "user") -> list[Message]:
    """Chat messages in ``value``: a list, a request / response object of a model API, or text."""
    value = decode(value)
    if isinstance(value, str):
        return _text(value, default)
    if isinstance(value, list):
        if len(value) == 2 and all(isinstance(v, str) for v in value) and _role(value[0], "") in _KNOWN_ROLES:
            return [Message(_role(value[0], default), value[1])]  # LangChain's ("user", "text") message tuple
        return [m for item in value for m in messages(item, default)]
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("choices"), list):  # OpenAI Chat Completions (and chunks merged by the SDK)
        return [m for c in value["choices"] if isinstance(c, dict)
                for m in messages(c.get("message") or c.get("delta") or c.get("text"), "assistant")]
    if isinstance(value.get("candidates"), list):  # Gemini GenerateContentResponse
        return [m for c in value["candidates"] if isinstance(c, dict) for m in messages(c.get("content"), "assistant")]
    if isinstance(value.get("output"), list) and (value.get("object") == "response" or any(
            isinstance(i, dict) and i.get("type") in ("message", "function_call", "reasoning") for i in value["output"])):
        return messages(value["output"], "assistant")  # OpenAI Responses
    if "generations" in value:  # LangChain LLMResult
        gens = value["generations"]
        gens = [g for row in gens for g in (row if isinstance(row, list) else [row])] if isinstance(gens, list) else []
        return [m for g in gens if isinstance(g, dict) for m in messages(g.get("message") or g.get("text"), "assistant")]
    if isinstance(value.get("message"), dict) and ("index" in value or "finish_reason" in value or "event.name" in value):
        return messages(value["message"], "assistant")  # a choice event
    for key in ("messages", "contents", "new_message", "history"):
        if key in value and not is_empty(value[key]):
            found = messages(value[key], default)
            if isinstance(value.get("instructions"), str):
                found.insert(0, Message("system", value["instructions"]))
            return found
    if isinstance(value.get("input"), list):  # OpenAI Responses request
        return messages(value["input"], default)
    for key in ("input", "prompt"):  # a Responses / Completions request given as text
        if isinstance(value.get(key), str) and ("model" in value or "instructions" in value) and value[key].strip():
            found = [Message(default, value[key])]
            if isinstance(value.get("instructions"), str):
                found.insert(0, Message("system", value["instructions"]))
            return found
    if "prompts" in value and isinstance(value["prompts"], list):
        return [m for p in value["prompts"] for m in messages(p, default)]
    if "role" in value or "type" in value or "parts" in value or "content" in value or "toolName" in value or \
            any(str(k).startswith("message.") for k in value):
        return [_clean(m) for m in _message(value, default)]
    return []


def message_dicts(value: Any, default: str = "user") -> list[dict[str, Any]]:
    """:func:`messages` as the dicts ``Node.input_messages`` / ``output_messages`` hold."""
    return [asdict(_clean(m)) for m in messages(value, default)]


def output_dicts(value: Any) -> list[dict[str, Any]]:
    """A model call's output messages: anything not a tool result is the assistant speaking."""
    if is_empty(value):
        return []
    out = message_dicts(value, "assistant")
    return [dict(m, role="assistant") if m["role"] not in ("assistant", "tool") else m for m in out]


def says_nothing(value: Any) -> bool:
    """A model call's output that is a chat message or a LangChain ``LLMResult`` holding no words and no calls.

    Its JSON is then no reply to show: LangChain records ``generations`` of empty text for a call the provider
    refused (a 429), and Langfuse's LangChain handler an empty assistant message for a turn whose tool calls it
    dropped. Text and shapes :func:`messages` does not read stay the call's words."""
    value = decode(value)
    if not isinstance(value, dict) or output_dicts(value):
        return False
    message = isinstance(value.get("lc_kwargs") or value.get("kwargs"), dict) or (
        "content" in value and ("role" in value or "type" in value))
    return message or "generations" in value


def first_user_text(found: Iterable[Message | dict[str, Any]]) -> str | None:
    for msg in found:
        role, text = (msg.role, msg.text) if isinstance(msg, Message) else (msg.get("role"), msg.get("text", ""))
        if role in ("user", "human") and text and text.strip() and text.strip() not in ("None", "null"):
            return text.strip()
    return None


# -- the task ----------------------------------------------------------------------------


def is_call_args(value: Any) -> bool:
    """A decorator's record of a function call (``{"args": [...], "kwargs": {...}}``), not an instruction."""
    return isinstance(value, dict) and bool(value) and set(value) <= {"args", "kwargs", "self", "cls"} and \
        isinstance(value.get("args", []), list)


def instruction(value: Any) -> str | None:
    """The user's instruction in a run's input, or None when the input holds none (call args, ids, config)."""
    value = decode(value)
    if isinstance(value, str):
        text = value.strip()
        if is_empty(text):
            return None
        if _TRANSCRIPT.match(text) or _AGNO_REPR.match(text):
            return first_user_text(messages(text))
        return text
    if isinstance(value, list):
        return first_user_text(messages(value))
    if not isinstance(value, dict) or is_call_args(value):
        return None
    for key in ("messages", "contents", "new_message"):
        if key in value and (text := first_user_text(messages(value[key]))):
            return text
    for key in INSTRUCTION_KEYS:
        found = value.get(key)
        if isinstance(found, str) and not is_empty(found):
            nested = instruction(found) if found.strip()[:1] in "{[" else None
            return nested or found.strip()
        if isinstance(found, (dict, list)) and (nested := instruction(found)):
            return nested
    if "role" in value or "parts" in value:
        return first_user_text(messages(value))
    texts = [v.strip() for v in value.values() if isinstance(v, str) and " " in v.strip() and not is_object_repr(v)]
    return texts[0] if len(texts) == 1 else None  # one sentence among ids and settings: the instruction


def call_args_text(value: Any) -> str | None:
    """The longest text argument of a recorded function call: the last resort for a task."""
    value = decode(value)
    if not is_call_args(value):
        return None
    texts = [a for a in value.get("args") or [] if isinstance(a, str)]
    kwargs = value.get("kwargs") if isinstance(value.get("kwargs"), dict) else {}
    texts += [a for a in kwargs.values() if isinstance(a, str)]
    texts = [t.strip() for t in texts if t.strip()]
    return max(texts, key=len) if texts else None


def run_task(group: list[Node], root: Node, what: str) -> str:
    """The task of a trace on a vendor platform: the root's instruction (a root model call's first user message,
    else the root's input), else the first user message of the earliest model call or the instruction of the
    earliest chain, else the root's longest call argument, else its whole input. ``what`` names the root in the
    error (a LangSmith "run", a Braintrust "span")."""
    if root.role == "llm" and (text := first_user_text(root.input_messages)):
        return text
    if text := instruction(root.input_text):
        return text
    for node in sorted(group, key=start_order):
        if node.role == "llm" and (text := first_user_text(node.input_messages)):
            return text
        if node.role == "chain" and (text := instruction(node.input_text)):
            return text
    if text := call_args_text(root.input_text):
        return text
    if root.input_text and root.input_text.strip():
        return root.input_text.strip()  # inputs with no recognisable instruction: keep what the run received
    raise RecordError(f"no task: the root {what} {root.name!r} has no inputs and no model call has a user message")


def trace_roots(group: list[Node], what: str) -> list[Node]:
    """The roots of a trace's nodes, earliest first: those with no parent, or a parent not in the trace (an export
    of part of a trace). None when every node's parent is in the trace: their parents form a cycle, which no
    exporter writes but a hand-edited or corrupt file may; a clear error then, not an empty ``min``. ``what`` names
    the nodes (a LangSmith "run", a Braintrust "span")."""
    ids = {n.id for n in group}
    roots = sorted((n for n in group if n.parent is None or n.parent not in ids), key=start_order)
    if not roots:
        raise RecordError(f"no root {what}: the parents of the trace's {len(group)} {what}s form a cycle "
                          f"({first_few(sorted(ids), 3)})")
    return roots


# -- verdicts ----------------------------------------------------------------------------

#: Words that make a score's name a verdict wherever they stand in it (``task_success_rate``): the span formats'
#: exact names (``_spans.outcome.OUTCOME_METRICS``, one list) and the vendors' own.
_OUTCOME_WORDS = re.compile(r"(^|_)(" + "|".join(sorted(OUTCOME_METRICS | {
    "successful", "succeeded", "accuracy", "accurate", "reward", "goal_achieved", "exact_match", "is_correct",
    "pass_rate", "final_answer_matches"})) + r")($|_)")
#: Labels that are a verdict on the run whatever the evaluation is called.
RESOLUTION_LABELS = frozenset(
    {"resolved", "unresolved", "not_resolved", "solved", "unsolved", "success", "succeeded", "successful",
     "correct", "incorrect", "completed", "not_completed", "incomplete"}
)


def _norm(text: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(text or "").strip().lower()).strip("_")


def outcome_like(name: str) -> bool:
    """Whether an evaluation of this name says if the run succeeded (not toxicity, relevance, ratings...)."""
    key = _norm(name)
    return bool(_OUTCOME_WORDS.search(key))


@dataclass
class Score:
    """One evaluation of a run: a Langfuse score or a LangSmith feedback."""

    name: str
    value: float | None = None
    label: str | None = None
    comment: str | None = None
    source: str | None = None
    target: str | None = None  # the observation / child run it is about, when not the whole run

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Verdict:
    outcome: Outcome = Outcome.unknown
    reward: float | None = None
    basis: Score | None = None


def verdict(scores: Iterable[Score], ctx: Context) -> Verdict:
    """The run's outcome and reward from its outcome-like scores (a failing one wins); else no verdict."""
    found: list[Verdict] = []
    for score in scores:
        label = _norm(score.label)
        named = outcome_like(score.name)
        if label and (named or label in RESOLUTION_LABELS) and (label in FAIL_LABELS or label in PASS_LABELS):
            found.append(Verdict(Outcome.failure if label in FAIL_LABELS else Outcome.success,
                                 score.value if named else None, score))
        elif named and score.value is not None:
            decided = outcome_of_reward(score.value, ctx) if 0.0 <= score.value <= 1.0 else Outcome.unknown
            found.append(Verdict(decided, score.value, score))
    return next((v for v in found if v.outcome is Outcome.failure), None) or \
        next((v for v in found if v.outcome is Outcome.success), None) or \
        next(iter(found), Verdict())


# -- the trajectory ----------------------------------------------------------------------


def _failed_by_a_model_call(nodes: list[Node]) -> None:
    """A chain or agent that failed with the error of a failed model call failed because that call did.

    LangChain marks every chain an exception passes through (a 429 reaches the
    graph through the prompt-and-model sequence, the node function and the
    agent; Langfuse's handler does not even nest them all around the call):
    one exception is one error, the call's, not a "chain X failed" step per
    level. The run's root keeps its error: it decides the outcome. A root that
    did not fail (the app caught the exception and answered) leaves the
    outermost chain's copy, the one step that still tells of the failed call.
    """
    raised = {n.error for n in nodes if n.role == "llm" and n.error}
    by_id = {n.id: n for n in nodes}
    root_failed = any(n.error for n in nodes if n.parent not in by_id)
    carriers = [n for n in nodes if n.role in ("chain", "agent") and n.parent in by_id and n.error in raised]
    carrier_ids = {n.id for n in carriers}
    for node in carriers:
        outermost = not any(a.id in carrier_ids for a in ancestors(node, by_id))
        if root_failed or not outermost:
            node.error = None


def trajectory(fmt: str, prefix: str, key: str, nodes: list[Node], ctx: Context, *, by: str, task: str,
               scores: list[Score], task_id: str | None = None, extra: dict[str, Any] | None = None,
               finish: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None) -> Trajectory:
    """The trajectory of one run: ``_spans.assemble`` for steps and error status, then our task and verdict.
    ``finish``: the steps a format adds to the assembly's (Langfuse's graph answer and its failed calls exported
    without input), before a run of more than ``MAX_STEPS`` is clipped as every span format's is
    (:func:`~._spans.kept_steps`), so that the clip keeps the end they make."""
    _failed_by_a_model_call(nodes)
    run = assemble(nodes, what=by, task=task)
    outcome, failure = run.outcome, run.failure
    metadata: dict[str, Any] = {"source_format": fmt, f"{by}_id": key, **run.metadata, **(extra or {})}
    metadata.pop("evaluations", None)
    judged = verdict([s for s in scores if s.target is None], ctx)
    reward = judged.reward
    if judged.basis is not None and judged.outcome is not Outcome.unknown:
        outcome = judged.outcome
        metadata["outcome_basis"] = f"score {judged.basis.name!r}"
        failure = None
        if outcome is Outcome.failure:
            last = last_tool_error(run.steps)
            error = f"score {judged.basis.name}: {judged.basis.label or judged.basis.value}"
            if last:
                error += f"; last step error: {last.get('action')} -> {last['error']}"
            failure = Failure(error=short(error, 2000),
                              cause=short(judged.basis.comment, 2000) if judged.basis.comment else None)
    if scores:
        metadata["scores"] = [s.to_json() for s in scores[:20]]
    fields: dict[str, Any] = {
        "trajectory_id": span_trajectory_id(prefix, key, by),
        "task": run.task,
        "task_id": task_id,
        "model_id": run.model_id,
        "outcome": outcome,
        "reward": reward,
        "failure": failure,
        "steps": kept_steps(finish(run.steps) if finish else run.steps, metadata),
        "tools_available": tools_offered(nodes, run.steps) or None,  # where its spans list the tools offered
        "created_at": run.created_at,
        "metadata": metadata,
    }
    return build({k: v for k, v in fields.items() if v is not None}, ctx)


_M = TypeVar("_M")


def this_turn(messages: list[_M], is_user: Callable[[_M], bool]) -> list[_M]:
    """The messages of a trace's own turn: from its last user message(s) on. A LangGraph thread's state (what its
    root run / trace outputs, on both platforms) holds the thread's earlier turns before it, each the output of its
    own trace. ``is_user`` tells a user message in the shape given (raw LangChain messages, ``message_dicts``)."""
    last = max((i for i, m in enumerate(messages) if is_user(m)), default=0)
    while last > 0 and is_user(messages[last - 1]):
        last -= 1
    return messages[last:]


#: Keys under which a graph's state or a chain's output keeps the run's answer, most specific first.
ANSWER_KEYS = ("final_answer", "final_output", "final_response", "answer", "output", "response", "result")


def answer_in(value: Any, depth: int = 2) -> str | None:
    """The answer an output holds: text, the last words of the messages it holds (the assistant speaking, no call
    after them), or the text under an answer-like key of a state (``ANSWER_KEYS``); None where it holds other data. A Python ``repr`` of
    a message (``{'role': 'assistant', 'text': ...}``, BeeAI's trace output) is read as that message; other text
    opening like a structure that does not parse is data, not words."""
    value = decode(value, literal=True)
    if isinstance(value, str):
        return None if is_empty(value) or value.lstrip()[:1] in ("{", "[") else value.strip()
    if isinstance(value, dict) and depth > 0:
        for key in ANSWER_KEYS:
            if not is_empty(value.get(key)) and (found := answer_in(value[key], depth - 1)):
                return found
    if not isinstance(value, (dict, list)):
        return None
    said = message_dicts(value, "assistant")
    last = said[-1] if said else None
    if last is None or last["role"] != "assistant" or last["calls"]:
        return None  # the user's words, or the graph stopped after a call (the call's reply, or its preamble)
    return last["text"].strip() or None
