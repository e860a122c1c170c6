"""Chat messages in the shapes span formats record them -> :class:`~.nodes.Message` dicts; the task in them.

A model call's inputs and outputs arrive as GenAI-semconv ``parts``
messages, OpenAI chat messages, OpenInference's flattened
``message.*`` attributes or LangChain message dicts (plain or ``lc``
serialised), often as JSON text. Every span adapter normalises them here to
the one ``Message`` shape assembly reads, and finds the user's instruction in
them (or in a root's input value). Apart from the model (``nodes``) because it
is the one part that knows the chat APIs rather than the span formats.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import asdict
from typing import Any

from trajsearch.actions import not_run
from trajsearch.blobs import image_placeholder

from .._agent_cli import exit_code_error
from .._common import as_dict, as_list, short
from .nodes import Message, indexed, maybe_json, text_of

_USERISH = ("user", "human")
#: The key marking a tool call the model's provider ran (a server tool: OpenAI's hosted tools, Gemini's code
#: execution, a provider-called MCP server): its result is in the model's own output, and no app tool ran it.
PROVIDER_RUN = "provider_run"
#: A notice an agent harness sends as a whole user message when background work it started has finished (GitHub
#: Copilot CLI's ``<system_notification>``): nobody's request, whichever app sent it.
_HARNESS_NOTICE = re.compile(r"^\s*<system_notification>.*</system_notification>\s*$", re.S)
_CONTENT_ITEM = re.compile(r"^message\.content\.\d+$")
_FIELD = re.compile(r"(?:^|(?<=\s))[A-Za-z_]\w*=(?!=)")
_OBJECT_AT = re.compile(r"<[\w.]+ object at 0x[0-9a-fA-F]+>")
_CHAT_MESSAGE = re.compile(r"^ChatMessage\(_role=<ChatRole\.\w+: '(\w+)'>")
_TEXT_CONTENT = re.compile(r"TextContent\(text=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)")
_CHAT_ROLE = re.compile(r"<ChatRole\.\w+: ('\w+')>")
#: The key :func:`_repr_fields` names a repr's type by.
_REPR_TYPE = "__repr_type__"


#: The typed content parts that are an image: OpenInference's and Anthropic's ``image``, OpenAI chat's ``image_url``
#: and Responses' ``input_image`` (an ``image_url`` that is a URL or data URI, or a ``file_id``).
_IMAGE_KINDS = frozenset({"image", "image_url", "input_image"})


def _media_list(content: str) -> list[dict[str, Any]] | None:
    """A content list of text and images that an instrumentation kept as its JSON text, else None: OpenLLMetry's older
    ``gen_ai.prompt.N.content`` holds ``json.dumps`` of a message's content list unless it is all text (the images
    as the SDK took them, base64 and all, or uploaded, ``image_url``). Only text and images: a list holding a tool's
    call or result stays the text it was, nothing in it lost."""
    parts = maybe_json(content) if content.startswith("[{") else None
    kinds = [str(p.get("type")) if isinstance(p, dict) else "" for p in parts] if isinstance(parts, list) else [""]
    return parts if all(k == "text" or k in _IMAGE_KINDS for k in kinds) and _IMAGE_KINDS & set(kinds) else None


def _content_text(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message ``content`` that may be a list of typed parts.

    Parts are typed (``{"type": "text", ...}``) or, in Amazon Bedrock's Converse shape (what
    Strands Agents records), keyed by kind: ``{"text"}``, ``{"json"}``, ``{"reasoningContent"}``,
    ``{"toolResult": {"content": [...]}}`` (its text is the message's); ``{"toolUse"}`` holds no
    text (:func:`_converse_calls`)."""
    if isinstance(content, str):
        if (parts := _media_list(content)) is None:
            return content, ""
        content = parts
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return text_of(content), ""
    texts, reasoning = [], []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and "type" not in part and _CONVERSE_KINDS & part.keys():
            if isinstance(part.get("json"), (dict, list)):
                texts.append(json.dumps(part["json"], ensure_ascii=False))
            elif isinstance(part.get("reasoningContent"), dict):
                reasoning.append(text_of(as_dict(part["reasoningContent"].get("reasoningText")).get("text")))
            elif isinstance(part.get("toolResult"), dict):
                texts.append(_content_text(part["toolResult"].get("content"))[0])
            elif isinstance(part.get("tool_call_result"), dict):
                texts.append(result_text(part["tool_call_result"].get("result")))
        elif isinstance(part, dict):
            kind = str(part.get("type") or part.get("message_content.type") or "text")
            body = part.get("content", part.get("text", part.get("message_content.text")))
            if kind in ("reasoning", "thinking"):
                reasoning.append(text_of(body if body is not None else part.get("thinking")))
            elif kind == "text" and body is not None:
                texts.append(text_of(body))
            elif kind in _IMAGE_KINDS:  # OpenInference's ``message_content.image.image.url`` (a URL or a data
                # URI), else Anthropic's / MCP's (``source``, or ``data`` and ``mimeType``), OpenAI's ``image_url``
                url = part.get("message_content.image.image.url")
                texts.append(image_placeholder({"image_url": url} if url is not None else part))
    return "\n".join(t for t in texts if t), "\n".join(r for r in reasoning if r)


def _oi_tool_call(flat: dict[str, Any]) -> dict[str, Any]:
    """An OpenInference ``tool_call.*`` object: in ``message.tool_calls``, or a ``tool_use`` part of
    ``message.contents`` (the spec's form for a call whose place among the message's parts matters)."""
    return {"id": flat.get("tool_call.id"), "name": flat.get("tool_call.function.name"),
            "arguments": maybe_json(flat.get("tool_call.function.arguments"))}


def normalise_message(raw: Any) -> Message | None:
    """One chat message in any of the shapes these formats use, or None.

    Shapes: GenAI semconv ``{"role", "parts": [text | tool_call | tool_call_response | reasoning]}``;
    OpenAI ``{"role", "content", "tool_calls": [{"id", "function": {"name", "arguments"}}], "tool_call_id"}``;
    OpenInference flattened ``{"message.role", "message.content", "message.tool_calls.N.tool_call.*"}``;
    LangChain ``{"type": "human"|"ai"|"tool", "content"|"data": {...}}`` and its ``("user", "text")`` pairs.
    """
    if isinstance(raw, str):
        return _haystack_message(raw) or Message("user", raw)
    if _role_pair(raw):  # LangChain's ("user", "text") shorthand, as LangGraph's inputs are written
        raw = {"role": raw[0], "content": raw[1]}
    if not isinstance(raw, dict):
        return None
    if any(k.startswith("message.") for k in raw):
        calls = [_oi_tool_call(c) for c in indexed(raw, "message.tool_calls.")] or [
            _oi_tool_call(p) for p in indexed(raw, "message.contents.") if p.get("message_content.type") == "tool_use"]
        text, reasoning = _content_text(raw.get("message.content") or "")
        if not text and (parts := indexed(raw, "message.contents.")):
            text, reasoning = _content_text(parts)
        if not text:  # the content as a flattened list of texts (the Claude Agent SDK instrumentor's)
            pieces = sorted((int(k.rsplit(".", 1)[1]), v) for k, v in raw.items()
                            if _CONTENT_ITEM.match(k) and isinstance(v, str))
            text = "\n".join(v for _, v in pieces)
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
            if kind == "text" and (call := _repr_call(part.get("content"))):
                msg.calls.append(call)
            elif kind == "text" and role == "assistant" and (said := _reply_repr(part.get("content"))) is not None:
                texts.append(said.text)
                msg.reasoning += said.reasoning
                msg.calls.extend(said.calls)
            elif kind == "text":
                texts.append(text_of(part.get("content")))
            elif kind in ("reasoning", "thinking"):
                msg.reasoning += text_of(part.get("content"))
            elif kind in _MEDIA_PARTS:
                texts.append(_media_placeholder(part))
            elif kind == "tool_call":
                msg.calls.append({"id": part.get("id"), "name": part.get("name"),
                                  "arguments": maybe_json(part.get("arguments")),
                                  **({PROVIDER_RUN: True} if part.get("builtin") is True else {})})
            elif kind == "server_tool_call":
                msg.calls.append({"id": part.get("id"), "name": part.get("name"), PROVIDER_RUN: True,
                                  "arguments": _server_tool_details(part.get("server_tool_call"), "arguments")})
            elif kind == "server_tool_call_response":
                msg.call_id = part.get("id")
                details = maybe_json(part.get("server_tool_call_response"))
                msg.failed = msg.failed or _server_tool_failed(details)
                texts.append(result_text(_server_tool_details(details, "output", "response", "result")))
            elif kind == "tool_call_response":
                msg.call_id = part.get("id")
                response = part.get("response", part.get("result"))
                msg.failed = msg.failed or sdk_refused(response) or denial(response) is not None \
                    or part.get("builtin") is True and _server_tool_failed(maybe_json(response))
                texts.append(denial(response) or result_text(response))
        msg.text = "\n".join(t for t in texts if t)
        return msg
    msg.text, msg.reasoning = _content_text(raw.get("content"))
    msg.calls, msg.call_id = _converse_calls(raw.get("content"))
    if role == "assistant" and not msg.calls and (listed := listed_calls(raw.get("content"))):
        msg.calls, msg.text = listed, ""
    if raw.get("reasoning_content"):
        msg.reasoning = text_of(raw["reasoning_content"])
    calls = maybe_json(raw.get("tool_calls"))  # a list, or that list as a JSON string
    listed = {c.get("id") for c in msg.calls if c.get("id")}  # a call in the content is one of the list too
    for call in calls if isinstance(calls, list) else indexed(raw, "tool_calls."):  # (botocore's, LangChain's)
        if isinstance(call, dict) and not (call.get("id") and call.get("id") in listed):
            fn = call.get("function") if isinstance(call.get("function"), dict) else call
            msg.calls.append({"id": call.get("id"), "name": fn.get("name"), "arguments": maybe_json(fn.get("arguments", fn.get("args")))})
    msg.call_id = raw.get("tool_call_id") or msg.call_id
    return msg


#: The GenAI semantic conventions' parts for what is not text: data inline (``blob``: ``content`` base64, ``mime_type``),
#: by address (``uri``) or by a provider's file id (``file``), each of a ``modality`` (``image``, ``audio``, ``video``).
_MEDIA_PARTS = frozenset({"blob", "uri", "file"})


def _media_placeholder(part: dict[str, Any]) -> str:
    """What stands for a GenAI ``blob`` / ``uri`` / ``file`` part in its message's text, as the other formats' images
    are noted (``[image/png, 3 KB base64]`` for data worth naming, else ``[image]``, ``[audio]`` by its modality): a
    user's question about a picture keeps saying it had one, and the picture's base64 stays out of the text."""
    carried = {"data": part.get("content"), "mimeType": part.get("mime_type")} if part.get("type") == "blob" \
        else {"image_url": part.get("uri")}  # a data URI in ``uri`` (an instrumentation's fallback) is data too
    if (named := image_placeholder(carried)) != "[image]":
        return named
    modality = part.get("modality")
    modality = modality.lower() if isinstance(modality, str) else ""
    return f"[{modality if re.fullmatch(r'[a-z_]{1,20}', modality) else 'file'}]"


#: A tool call the AI SDK refused, as ``@ai-sdk/otel`` writes its ``error-text`` result: the error's ``toString()``,
#: named by the SDK's error class (``AI_NoSuchToolError: Model tried to call unavailable tool ...``,
#: ``AI_InvalidToolInputError: ...``); no tool ran, so no span says it failed.
_AI_SDK_ERROR = re.compile(r"^AI_[A-Za-z]+Error: ")


def sdk_refused(response: Any) -> bool:
    """Whether a GenAI ``tool_call_response`` is the AI SDK's error for a call it refused (``_AI_SDK_ERROR``): AI SDK 7
    flattens ``error-text`` to its bare value, so the class name is the one mark of the failure left."""
    return isinstance(response, str) and bool(_AI_SDK_ERROR.match(response))


#: What CrewAI hands its model in place of the result of a tool that raised (``f"Error executing tool: {e}"``:
#: ``crewai/utilities/agent_utils.py`` and ``agents/agent_executor.py``, its native tool-call paths); where no span
#: traced the tool (OpenLLMetry's CrewAI instrumentation traces none), the one mark of the failure.
_CREWAI_TOOL_RAISED = re.compile(r"^Error executing tool: ")
#: What Haystack's ``ToolInvoker`` hands its model for a tool that raised (``raise_on_tool_invocation_failure=False``):
#: ``ToolInvocationError``'s text, ``Failed to invoke Tool `<name>` with parameters {...}. Error: <e>``
#: (``haystack/tools/tool.py``; "tool" and no ``Error:`` in early 2.x), in a tool message whose ``error`` flag no
#: model request carries.
_HAYSTACK_TOOL_RAISED = re.compile(r"^Failed to invoke [Tt]ool `[^`]+` with parameters ")


#: How pydantic-ai tells its model that a response failed: ``RetryPromptPart.model_response()`` (every version)
#: ends with this line; 2.78's ``RetryFeedbackPart`` opens a user message with ``_RETRY_FEEDBACK_FRAMING`` before a
#: ``<pyai:retry_feedback>`` (an output validator's or function's ``ModelRetry``) or ``<pyai:validation_errors>``
#: fence (``pydantic_ai/messages.py``).
_PYDANTIC_AI_RETRY_END = "\n\nFix the errors and try again."
#: ... and opens it so, as a user-role message (``tool_name`` None): any message ending as above is not one (a user
#: may write that line; review 4, D3).
_PYDANTIC_AI_RETRY_START = re.compile(r"\s*(?:(Validation feedback:)|\d+ validation errors?:\n```json\n)")
_PYDANTIC_AI_FRAMING = re.compile(r"^\s*Your previous response failed the application's validation "
                                  r"\(this is automated feedback, not a message from the user\):\s*\n"
                                  r"<pyai:(retry_feedback|validation_errors)>\n?(.*?)\n?</pyai:\1>\s*$", re.S)


def retry_feedback(text: Any) -> str | None:
    """What the application said of the model's last response, where ``text`` (a user message) is pydantic-ai's
    feedback asking for another (an output validator's ``ModelRetry``, output that failed validation): no request
    of the user's. Else None."""
    if not isinstance(text, str):
        return None
    if framed := _PYDANTIC_AI_FRAMING.match(text):
        return framed.group(2).strip()
    if text.rstrip().endswith(_PYDANTIC_AI_RETRY_END) and (opening := _PYDANTIC_AI_RETRY_START.match(text)):
        said = text.rstrip()[: -len(_PYDANTIC_AI_RETRY_END)].strip()
        return said[opening.end():].strip() if opening.group(1) else said
    return None


def _validation_errors(result: Any) -> bool:
    """Whether ``result`` is a pydantic ``ValidationError``'s ``errors()`` list (``type``, ``loc``, ``msg`` each): what
    pydantic-ai 2.78 answers an output tool call (``final_result``) whose arguments failed the output type."""
    value = maybe_json(result)
    return isinstance(value, list) and bool(value) \
        and all(isinstance(e, dict) and {"type", "loc", "msg"} <= set(e) for e in value)


def framework_failure(result: Any) -> bool:
    """Whether a tool result a framework gave its model is that framework's fixed text for a tool that raised
    (``_CREWAI_TOOL_RAISED``, ``_HAYSTACK_TOOL_RAISED``), or pydantic-ai's answer to a call it refused (a retry
    prompt, arguments that failed validation), not what a tool returned."""
    return isinstance(result, str) and (any(p.match(result) for p in (_CREWAI_TOOL_RAISED, _HAYSTACK_TOOL_RAISED))
                                        or retry_feedback(result) is not None or _validation_errors(result))


#: The error of a tool call the user denied (:func:`denial`): its text, then ``: <reason>`` where one was given;
#: worded as every call the harness did not run is (``not run: denied: <reason>``).
DENIED = not_run("denied")


def denied_error(reason: Any) -> str:
    """The error of a call the user denied, with their ``reason`` where they gave one (:data:`DENIED`)."""
    return f"{DENIED}: {reason}" if isinstance(reason, str) and reason.strip() else DENIED


#: What pydantic-ai hands its model for a call the user denied (``ToolDenied()``'s default ``message``,
#: ``pydantic_ai/tools.py``, from 1.0; a run resumed with ``DeferredToolResults(approvals={id: ToolDenied()})``):
#: in its spans and, before ``outcome`` (1.67), in its message histories the denial's only mark (a message of the
#: app's own cannot be told from a result).
PYDANTIC_AI_DENIED = "The tool call was denied."


def denial(value: Any) -> str | None:
    """The error of a tool result that is the user's denial of the call (an AI SDK tool approval, ``needsApproval``:
    no tool ran), else None. AI SDK 6 writes it in ``ai.prompt.messages`` as the tool-result output
    ``{"type": "execution-denied", "reason"?}``; ``@ai-sdk/otel`` (AI SDK 7) as the GenAI ``tool_call_response``
    ``{"denied": true, "reason"?}``. Only those keys: a tool's own dict that says more is its result. Pydantic AI
    writes ``ToolDenied``'s words, its default ones known (``PYDANTIC_AI_DENIED``; a reason of the app's own is
    read as the call's result)."""
    if value == PYDANTIC_AI_DENIED:
        return DENIED
    value = maybe_json(value)
    if not isinstance(value, dict):
        return None
    sdk6 = value.get("type") == "execution-denied" and set(value) <= {"type", "reason", "providerOptions"}
    sdk7 = value.get("denied") is True and set(value) <= {"denied", "reason"}
    if not (sdk6 or sdk7):
        return None
    return denied_error(value.get("reason"))


def is_denial(message: dict[str, Any]) -> bool:
    """Whether a normalised tool message is a denial (:func:`denial`)."""
    text = message.get("text") or ""
    return bool(message.get("failed")) and (text == DENIED or text.startswith(f"{DENIED}: "))


def listed_calls(content: Any) -> list[dict[str, Any]]:
    """Tool calls an assistant message's content holds as OpenAI's ``tool_calls`` list (``[{"id", "type":
    "function", "function": {"name", "arguments"}}]``, or its JSON text: Koog's messages as Langfuse keeps
    them); none for any other content."""
    listed = maybe_json(content)
    if not isinstance(listed, list) or not listed or not all(
            isinstance(c, dict) and isinstance(c.get("function"), dict) and c["function"].get("name") for c in listed):
        return []
    return [{"id": c.get("id"), "name": c["function"]["name"], "arguments": maybe_json(c["function"].get("arguments"))}
            for c in listed]


#: Content blocks without a ``type`` that are not ``{"text"}``: Bedrock Converse's, and Haystack's ``ChatMessage``
#: tool result as its ``to_dict`` writes it (its ``tool_call`` part holds no text: :func:`_converse_calls`).
_CONVERSE_KINDS = {"json", "reasoningContent", "toolResult", "toolUse", "tool_call_result"}


def _converse_calls(content: Any) -> tuple[list[dict[str, Any]], str | None]:
    """(tool calls, id of the call answered) of Bedrock Converse blocks in ``content``:
    ``{"toolUse": {"toolUseId", "name", "input"}}`` and ``{"toolResult": {"toolUseId", ...}}``; and of Haystack's:
    ``{"tool_call": {"id", "tool_name", "arguments"}}`` and ``{"tool_call_result": {"result", "origin": <the call>}}``."""
    calls, answered = [], None
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and "type" not in part:
            use, result = as_dict(part.get("toolUse")), as_dict(part.get("toolResult"))
            if use.get("name"):
                calls.append({"id": use.get("toolUseId"), "name": use["name"], "arguments": maybe_json(use.get("input"))})
            call, called = as_dict(part.get("tool_call")), as_dict(as_dict(part.get("tool_call_result")).get("origin"))
            if call.get("tool_name"):
                calls.append({"id": call.get("id"), "name": call["tool_name"], "arguments": maybe_json(call.get("arguments"))})
            answered = answered or result.get("toolUseId") or called.get("id")
    return calls, answered


#: The repr of an OpenAI Responses tool call, which some instrumentations write as a text part.
_FUNCTION_CALL_REPR = re.compile(r"^ResponseFunctionToolCall\((.*)\)$", re.S)
_PY_STR = r"'(?:[^'\\]|\\.)*'" + r'|"(?:[^"\\]|\\.)*"'  # a Python string literal, as a repr writes it
#: A ``name=<string literal or None>`` field of a repr (a Responses call's, a LangChain ``ToolMessage``'s).
_REPR_FIELD = re.compile(rf"(?:^|\s)(\w+)=({_PY_STR}|None)", re.S)


#: The repr of a Responses shell call (``ResponseFunctionShellToolCall(id=.., action=Action(commands=[...],
#: max_output_length=.., timeout_ms=..), call_id='call_..', ..., type='shell_call')``): the Agents SDK's ``ShellTool``.
_SHELL_CALL_REPR = re.compile(r"^ResponseFunctionShellToolCall\(.*\btype='shell_call'.*\)$", re.S)


def _repr_list(field: str) -> re.Pattern[str]:
    """``<field>=[...]`` of a repr, a list of string literals (a ``]`` inside one of them is no end of the list)."""
    return re.compile(rf"\b{field}=(\[(?:{_PY_STR}|[\s,])*\])")


_SHELL_COMMANDS = _repr_list("commands")
_SHELL_LIMITS = re.compile(r"\b(max_output_length|timeout_ms)=(\d+)")
_CALL_ID = re.compile(r"\bcall_id='([^']*)'")


def _shell_repr_call(content: str) -> dict[str, Any] | None:
    """A shell call's repr (``_SHELL_CALL_REPR``) as the call of the SDK's ``shell`` tool, with the arguments its
    span records (``{"commands", "timeout_ms", "max_output_length"}``)."""
    commands = _SHELL_COMMANDS.search(content)
    if not _SHELL_CALL_REPR.match(content) or commands is None:
        return None
    try:
        arguments: dict[str, Any] = {"commands": ast.literal_eval(commands.group(1))}
    except (ValueError, SyntaxError):
        return None
    arguments.update((k, int(v)) for k, v in _SHELL_LIMITS.findall(content))
    call_id = _CALL_ID.search(content)
    return {"id": call_id.group(1) if call_id else None, "name": "shell", "arguments": arguments}


def _repr_call(content: Any) -> dict[str, Any] | None:
    """``ResponseFunctionToolCall(arguments='{...}', call_id='call_..', name='..', ...)`` as a tool call: what
    opentelemetry-instrumentation-openai-agents records for a Responses model's function call (and its shell call,
    ``_shell_repr_call``)."""
    if isinstance(content, str) and content.startswith("ResponseFunctionShellToolCall("):
        return _shell_repr_call(content.strip())
    found = _FUNCTION_CALL_REPR.match(content.strip()) if isinstance(content, str) else None
    if not found:
        return None
    try:
        fields = {k: ast.literal_eval(v) for k, v in _REPR_FIELD.findall(found.group(1))}
    except (ValueError, SyntaxError):
        return None
    if not isinstance(fields.get("name"), str):
        return None
    return {"id": fields.get("call_id"), "name": fields["name"], "arguments": maybe_json(fields.get("arguments"))}


def _responses_parts_text(content: Any) -> str:
    """The text of a Responses message item's content parts (``output_text``, ``input_text``, refusals)."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text", "refusal"):
            texts.append(text_of(part.get("text", part.get("refusal"))))
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(t for t in texts if t)


def responses_messages(items: Any, *, output: bool = False) -> list[dict[str, Any]]:
    """Responses API input items or ``response.output`` items -> message dicts."""
    items = maybe_json(items)
    if isinstance(items, str):
        return [asdict(Message("user", items))] if items.strip() else []
    out: list[dict[str, Any]] = []
    pending: Message | None = None  # consecutive assistant calls/text/reasoning make one message
    searches: list[str] = []  # the tool searches OpenAI ran not yet answered, oldest first
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind in ("function_call", "custom_tool_call", "mcp_call"):
            pending = pending or Message("assistant")
            pending.calls.append({"id": item.get("call_id") or item.get("id"), "name": item.get("name"),
                                  "arguments": maybe_json(item.get("arguments", item.get("input"))),
                                  **({PROVIDER_RUN: True} if kind == "mcp_call" else {})})
            failed = kind == "mcp_call" and (bool(item.get("error")) or _server_tool_failed(item))
            if kind == "mcp_call" and (item.get("output") is not None or failed):  # (HostedMCPTool: OpenAI called it)
                out.append(asdict(pending))
                pending = None
                said = (item.get("error") or item.get("output") or item.get("status")) if failed else item["output"]
                out.append(asdict(Message("tool", text_of(said), call_id=item.get("id"), failed=failed)))
            continue
        if (hosted := _hosted_call(item)) is not None:  # a tool the provider ran: its call, then its result
            call, result = hosted
            pending = pending or Message("assistant")
            pending.calls.append(call)
            out.append(asdict(pending))
            pending = None
            out.append(asdict(Message("tool", result, call_id=call["id"], failed=_server_tool_failed(item))))
            continue
        if kind == "tool_search_call":  # OpenAI searched the agent's deferred tools: a tool_search_output answers
            pending = pending or Message("assistant")
            search = str(item.get("call_id") or item.get("id") or f"tool_search {len(out)}.{len(pending.calls)}")
            searches.append(search)
            pending.calls.append({"id": search, "name": "tool_search", "arguments": maybe_json(item.get("arguments")),
                                  PROVIDER_RUN: True})
            continue
        if kind == "reasoning":
            pending = pending or Message("assistant")
            summary = item.get("summary") or []
            pending.reasoning += "\n".join(text_of(s.get("text")) for s in summary if isinstance(s, dict))
            continue
        if kind == "message" and (item.get("role") or ("assistant" if output else "user")) == "assistant":
            pending = pending or Message("assistant")
            pending.text = "\n".join(t for t in (pending.text, _responses_parts_text(item.get("content"))) if t)
            continue
        if pending is not None:
            out.append(asdict(pending))
            pending = None
        if kind in ("function_call_output", "custom_tool_call_output"):
            out.append(asdict(Message("tool", text_of(maybe_json(item.get("output"))), call_id=item.get("call_id"))))
        elif kind == "tool_search_output":  # a server search has no call_id: it answers the oldest search unanswered
            called = str(item["call_id"]) if item.get("call_id") else (searches[0] if searches else None)
            if called in searches:
                searches.remove(called)
            out.append(asdict(Message("tool", found_tools(item), call_id=called)))
        elif kind == "message":
            role = str(item.get("role") or "user")
            out.append(asdict(Message("system" if role == "developer" else role,
                                      _responses_parts_text(item.get("content")))))
    if pending is not None:
        out.append(asdict(pending))
    return out


def found_tools(raw: dict[str, Any]) -> str:
    """A tool search's result (``tool_search_output``): the names of the tools it loaded (the Responses tool
    definitions' ``name``; the JS SDK's ``tool_reference`` items', ``functionName``)."""
    tools = raw.get("tools") if isinstance(raw.get("tools"), list) else []
    names = [str(t.get("name") or t.get("functionName") or t.get("function_name") or t.get("type"))
             for t in tools if isinstance(t, dict)]
    return ", ".join(names) if names else "no tool found"


#: Responses output items of the tools OpenAI runs itself (hosted tools), and the name the model calls each by.
_HOSTED_TOOLS = {"web_search_call": "web_search", "file_search_call": "file_search",
                 "code_interpreter_call": "code_interpreter", "image_generation_call": "image_generation"}


def _hosted_call(item: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    """(the call, its result) of a hosted tool's Responses item, else None. The item holds both: OpenAI ran the
    tool inside the response, so no later input carries a result and no app span ran it. A web search's ``action``
    (the query; its ``sources`` are the result), a file search's ``queries`` and ``results``, the interpreter's
    ``code`` and ``outputs`` (logs, image URLs); a generated image only as said (its base64 is no text)."""
    name = _HOSTED_TOOLS.get(str(item.get("type")))
    if name is None:
        return None
    status = item.get("status")
    if name == "web_search":
        action = as_dict(item.get("action"))
        arguments: Any = {k: v for k, v in action.items() if k != "sources" and v is not None}
        result: Any = {"status": status, **({"sources": action["sources"]} if action.get("sources") else {})}
    elif name == "file_search":
        arguments, result = {"queries": item.get("queries")}, item.get("results") or {"status": status}
    elif name == "code_interpreter":
        outputs = [o for o in as_list(item.get("outputs")) if isinstance(o, dict)]
        arguments = {"code": item.get("code")}
        result = "\n".join(text_of(o.get("logs") if o.get("type") == "logs" else o.get("url")) for o in outputs) \
            or {"status": status}
    else:
        arguments = {k: item[k] for k in ("revised_prompt", "size", "quality") if item.get(k)}
        result = f"image generated ({status})" if item.get("result") else {"status": status}
    call = {"id": item.get("id"), "name": name, "arguments": arguments, PROVIDER_RUN: True}
    return call, text_of(result)


def response_output(value: Any) -> list[dict[str, Any]] | None:
    """The output messages of Responses objects (``{"object": "response", "output": [...]}``, alone or listed with
    output items, or their JSON text), None for anything else: the Agents SDK records a streamed Chat
    Completions (LiteLLM, AnyLLM) generation's output as ``[response.model_dump()]``, and instrumentations
    copy it as it is."""
    value = maybe_json(value)
    items = value if isinstance(value, list) else [value]
    if not any(isinstance(i, dict) and i.get("object") == "response" for i in items):
        return None
    return [m for i in items if isinstance(i, dict)
            for m in responses_messages(i.get("output") if i.get("object") == "response" else [i], output=True)]


#: The longest text parsed as a reply's dict repr (``ast.literal_eval`` takes about 0.6 s and 160 bytes of memory
#: a byte: a 3 MB text, 2 s and 0.5 GB); a longer one stays text.
_REPR_PARSE_CHARS = 256 * 1024


def _reply_repr(content: Any) -> Message | None:
    """A model reply written as ``str()`` of its dict, what opentelemetry-instrumentation-openai-agents-v2 puts in
    a text part for a Chat Completions model: a Responses object (``response.model_dump()``, streamed) or a
    ``ChatCompletionMessage`` (``{'content': ..., 'role': 'assistant', 'tool_calls': [...]}``); None for anything
    else, a literal that does not parse and one too long to parse cheaply included (it stays text). Parsed with
    ``ast.literal_eval``: never run."""
    text = content.strip() if isinstance(content, str) else ""
    if len(text) > _REPR_PARSE_CHARS or not text.startswith("{'") or not text.endswith("}"):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    if (output := response_output(value)) is not None:  # an mcp_call's output is the tool's words, not the model's
        said = [m for m in output if m["role"] == "assistant"]
        return Message("assistant", "\n".join(m["text"] for m in said if m["text"]),
                       "\n".join(m["reasoning"] for m in said if m["reasoning"]),
                       [c for m in said for c in m["calls"]])
    if value.get("role") == "assistant" and {"content", "tool_calls"} <= value.keys():
        return normalise_message({**value, "content": value["content"] or ""})
    return None


_ROLES = frozenset({"user", "human", "assistant", "ai", "system", "tool", "developer"})


def _role_pair(raw: Any) -> bool:
    return isinstance(raw, (list, tuple)) and len(raw) == 2 and isinstance(raw[0], str) and raw[0] in _ROLES \
        and isinstance(raw[1], (str, list))


def _haystack_message(text: str) -> Message | None:
    """A Haystack ``ChatMessage`` as its repr (what OpenInference's Haystack instrumentor records of a component's
    input and an Agent's output): ``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='...')],
    ...)``, with ``ToolCall(tool_name, arguments, id)`` parts as calls, a ``ToolCallResult(result, origin, error)``
    as the result of its origin's call and ``ReasoningContent(reasoning_text)`` as reasoning. Read as the Python
    call it is once the role's enum repr is its value (:func:`_repr_fields`); a repr cut short keeps its texts."""
    found = _CHAT_MESSAGE.match(text)
    if not found:
        return None
    message = _repr_fields(_CHAT_ROLE.sub(r"\1", text, count=1)) if len(text) <= _REPR_PARSE_CHARS else None
    if message is None:  # cut by an attribute limit: what its whole texts say
        parts = []
        for literal in _TEXT_CONTENT.findall(text):
            try:
                parts.append(str(ast.literal_eval(literal)))
            except (ValueError, SyntaxError):
                continue
        return Message(found.group(1), "\n".join(parts))
    content = [p for p in as_list(message.get("_content")) if isinstance(p, dict)]
    said = {kind: [p for p in content if p.get(_REPR_TYPE) == kind]
            for kind in ("TextContent", "ReasoningContent", "ToolCall", "ToolCallResult")}
    calls = [{"id": c.get("id"), "name": c.get("tool_name"), "arguments": c.get("arguments")} for c in said["ToolCall"]]
    reasoning = "\n".join(str(p.get("reasoning_text") or "") for p in said["ReasoningContent"]).strip()
    if said["ToolCallResult"]:  # Haystack gives each result a message of its own
        result = said["ToolCallResult"][0]
        origin = result.get("origin") if isinstance(result.get("origin"), dict) else {}
        return Message("tool", text_of(result.get("result")), call_id=origin.get("id"), failed=bool(result.get("error")))
    return Message(found.group(1), "\n".join(str(p.get("text") or "") for p in said["TextContent"]), reasoning, calls)


def haystack_agent_turns(output: Any) -> list[dict[str, Any]]:
    """The turns of a Haystack ``Agent`` traced by OpenInference's Haystack instrumentor, which records the Agent as
    one CHAIN span and none of the model calls and tool runs inside it: its output (``{"messages": [ChatMessage
    reprs]}``) is the whole conversation, system prompt and input first, so the model's turns and the tools'
    results are the messages after the last user one. [] where the output is no such list or has no model turn."""
    value = maybe_json(output)
    raw = value.get("messages") if isinstance(value, dict) else None
    if not isinstance(raw, list) or not raw or not all(isinstance(m, str) and _CHAT_MESSAGE.match(m) for m in raw):
        return []
    messages = normalise_messages(raw)
    asked = max((n for n, m in enumerate(messages) if m["role"] == "user"), default=-1)
    turns = messages[asked + 1:]
    return turns if any(m["role"] == "assistant" for m in turns) else []


def _repr_fields(text: str) -> dict[str, Any] | None:
    """A repr written as a Python call (``Name(field=value, ...)``) as ``{_REPR_TYPE: Name, field: value}``, the calls
    among its values likewise, or None if it is no such call; a value that is no literal (an object's own repr) is
    None. An object's default repr (``_meta={'u': <Foo object at 0x7f00>}``) is no Python at all: where the text
    parses only without them, each is None (not before: one inside a string literal is the string's)."""
    tries = (text, _OBJECT_AT.sub("None", text)) if _OBJECT_AT.search(text) else (text,)
    for attempt in tries:
        try:
            node = ast.parse(attempt, mode="eval").body
            break
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
    else:
        return None
    value = _repr_value(node)
    return value if isinstance(value, dict) and _REPR_TYPE in value else None


def _repr_value(node: ast.AST) -> Any:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return {_REPR_TYPE: node.func.id, **{k.arg: _repr_value(k.value) for k in node.keywords if k.arg}}
    if isinstance(node, ast.List):
        return [_repr_value(e) for e in node.elts]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None


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
    if isinstance(raw, list) and len(raw) == 1 and isinstance(raw[0], list) and not _role_pair(raw[0]):
        raw = raw[0]
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return []
    out = []
    for item in (one for item in raw for one in _one_per_result(item)):
        msg = normalise_message(item)
        if msg is not None:
            out.append(asdict(msg))
    return out


def _one_per_result(raw: Any) -> list[Any]:
    """A message answering several tool calls (GenAI ``tool_call_response`` parts, Bedrock ``toolResult``
    blocks) as one message per answer, so that each result goes to its own call, and what else it says its own
    message, even beside a single answer (a pydantic-ai run resumed with ``deferred_tool_results`` and a new
    ``user_prompt``: the prompt follows the results), so that it is no call's result; a streamed turn whose GenAI
    parts say something after a tool call (google-genai: text, call, text, call, text) as one message per
    call, so each text is its own call's thought and the last one the answer."""
    if not isinstance(raw, dict):
        return [raw]
    if (pieces := _provider_results_apart(raw)) is not None:
        return [one for piece in pieces for one in _one_per_result(piece)]
    if _said_after_a_call(raw.get("parts")):
        segments: list[list[Any]] = [[]]
        for part in raw["parts"]:
            if isinstance(part, dict) and part.get("type") == "text" and any(
                    isinstance(p, dict) and p.get("type") == "tool_call" for p in segments[-1]):
                segments.append([])
            segments[-1].append(part)
        return [{**raw, "parts": segment} for segment in segments]
    for key, is_result in (("parts", lambda p: p.get("type") == "tool_call_response"),
                           ("content", lambda p: "type" not in p and isinstance(p.get("toolResult"), dict))):
        parts = raw.get(key)
        results = [p for p in parts if isinstance(p, dict) and is_result(p)] if isinstance(parts, list) else []
        rest = [p for p in parts if not (isinstance(p, dict) and is_result(p))] if results else []
        if len(results) > 1 or results and rest:
            return ([{**raw, key: rest}] if rest else []) + [{**raw, key: [p]} for p in results]
    return [raw]


def _provider_ran(part: Any, role: Any) -> bool:
    """Whether a GenAI part is the result of a tool the model's provider ran (a server tool: OpenAI's or
    Anthropic's ``web_search``, ``code_execution``): the semconv's ``server_tool_call_response``, or a
    ``tool_call_response`` in the model's own message (pydantic-ai marks it ``builtin: true``; the semconv's
    ``ToolCallResponsePart`` is "a built-in tool call outcome" there)."""
    return isinstance(part, dict) and (part.get("type") == "server_tool_call_response" or part.get(
        "type") == "tool_call_response" and (part.get("builtin") is True or role in ("assistant", "model")))


def _provider_results_apart(raw: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A model's message holding the results of tools its provider ran, in the order said: the parts before each
    result (the call and the words that asked for it), the result as a ``tool`` message of its own, and the words
    after it (the answer, where the model stopped there); None for a message holding no such result. Kept in the
    model's message, the result was read as the model's words, and with the answer after it, the call's thought:
    the run had no answer and the call no result."""
    parts, role = raw.get("parts"), str(raw.get("role") or "").lower()
    if isinstance(parts, list) and role in ("assistant", "model"):
        parts = [one for part in parts for one in _hosted_repr_parts(part)]
    if role == "tool" or not isinstance(parts, list) or not any(_provider_ran(p, role) for p in parts):
        return None
    pieces: list[dict[str, Any]] = []
    said: list[Any] = []
    for part in parts:
        if _provider_ran(part, role):
            if said:
                pieces.append({**raw, "parts": said})
            pieces.append({"role": "tool", "parts": [part]})
            said = []
        else:
            said.append(part)
    if said:
        pieces.append({**raw, "parts": said})
    return pieces


#: The repr of an OpenAI hosted tool's Responses item (``ResponseFunctionWebSearch(id='ws_..', action=ActionSearch(
#: ..., query='...', sources=[...]), status='completed', type='web_search_call')``), told by its ``type``.
_HOSTED_REPR = re.compile(r"^\w+\(.*\btype='(?P<type>%s)'.*\)$" % "|".join(_HOSTED_TOOLS), re.S)
_HOSTED_FIELD = re.compile(r"(\w+)=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_REPR_LIST = _repr_list("queries")


def _hosted_repr_parts(part: Any) -> list[Any]:
    """A text part holding the repr of a hosted tool's Responses item as the tool's call and result parts
    (``server_tool_call`` / ``server_tool_call_response``), read by :func:`_hosted_call`; any other part as it is.
    opentelemetry-instrumentation-openai-agents-v2 writes ``str(item)`` of a response's items when it has no output
    text (a turn that calls tools), so a web search the turn made read as the words of the call after it."""
    content = part.get("content") if isinstance(part, dict) and part.get("type") == "text" else None
    found = _HOSTED_REPR.match(content.strip()) if isinstance(content, str) else None
    if found is None:
        return [part]
    try:
        fields = [(k, ast.literal_eval(v)) for k, v in _HOSTED_FIELD.findall(content)]
        queries = ast.literal_eval(q.group(1)) if (q := _REPR_LIST.search(content)) else None
    except (ValueError, SyntaxError):
        return [part]
    first = {k: v for k, v in reversed(fields)}  # each name's first value (an item's own fields come first)
    kind, urls = found.group("type"), [v for k, v in fields if k == "url"]
    statuses = [v for k, v in fields if k == "status"]  # the item's own is its last field but its type
    item: dict[str, Any] = {"type": kind, "id": first.get("id"), "status": statuses[-1] if statuses else None}
    if kind == "web_search_call":
        item["action"] = {"query": first["query"], "sources": [{"type": "url", "url": u} for u in urls]} \
            if "query" in first else {"url": urls[0]} if urls else {}
    elif kind == "file_search_call":  # its results' texts (``Result(..., filename=.., text=..)``): what it found
        item.update(queries=queries, results=[{"text": v} for k, v in fields if k == "text"] or None)
    elif kind == "code_interpreter_call":
        item.update(code=first.get("code"), outputs=[{"type": "logs", "logs": v} for k, v in fields if k == "logs"])
    else:
        item["result"] = first.get("result")
    call, result = _hosted_call(item) or ({}, "")
    return [{"type": "server_tool_call", "id": call.get("id"), "name": call.get("name"),
             "server_tool_call": {"type": call.get("name"), "arguments": call.get("arguments")}},
            {"type": "server_tool_call_response", "id": call.get("id"),
             "server_tool_call_response": {"type": call.get("name"), "output": result, "status": item["status"]}}]


def _server_tool_details(details: Any, *named: str) -> Any:
    """What a semconv server tool call (or response) holds: its details are typed by the tool (``{"type":
    "code_interpreter", "code"}``, ``{"type": "mcp", "server_name", "arguments"}``; a response's ``{"type",
    "output"}``): the first of the ``named`` members it has, else the details without the ``type`` naming the tool
    again."""
    details = maybe_json(details)
    if not isinstance(details, dict):
        return details
    if (key := next((k for k in named if k in details), None)) is not None:
        return maybe_json(details[key])
    return {k: v for k, v in details.items() if k != "type"} or None


#: How a server tool's response says it failed: Gemini's code execution ``outcome`` (``OUTCOME_FAILED``,
#: ``OUTCOME_DEADLINE_EXCEEDED``; ``OUTCOME_OK`` when it ran), a ``status`` of ``failed`` (OpenAI's hosted tools).
_SERVER_TOOL_OK = ("OUTCOME_OK", "OUTCOME_UNSPECIFIED")


def _server_tool_failed(details: Any) -> bool:
    """Whether a provider-run tool's result says it failed (``_SERVER_TOOL_OK``): a semconv
    ``server_tool_call_response``'s details, pydantic-ai's built-in ``tool_call_response`` result, a hosted tool's
    Responses item; or, of OpenAI's code interpreter, whose item is ``completed`` when the code raised, an output
    that ends in the exception (:func:`interpreter_error`)."""
    if not isinstance(details, dict):
        return False
    outcome, status = details.get("outcome"), details.get("status")
    return isinstance(outcome, str) and outcome not in _SERVER_TOOL_OK or status in ("failed", "error") \
        or _anthropic_tool_error(details) or interpreter_error(_interpreter_output(details)) is not None


#: How IPython, the kernel of OpenAI's code interpreter, reports a cell that raised: a rule of dashes, ``<Class>``
#: and ``Traceback (most recent call last)`` on one line over the frames (``Cell In[N], line L``), then, last,
#: ``<Class>: <message>`` (a chained exception's report comes before, each under its own rule). A syntax error has
#: no traceback: ``Cell In[N], line L`` over the line and its caret, then ``SyntaxError: ...``.
_CELL_RAISED = re.compile(r"^-{20,}\n(?P<cls>[^\W\d][\w.]*) +Traceback \(most recent call last\)[ \t]*$", re.M)
_CELL_SYNTAX = re.compile(r"^ *Cell In\[\d+\], line \d+\n(?:.*\n){0,3}?(?P<line>(?:SyntaxError|IndentationError|TabError)"
                          r"(?::.*)?)\s*\Z", re.M)


def _interpreter_output(details: dict[str, Any]) -> str:
    """What OpenAI's code interpreter printed, from its Responses item (``code_interpreter_call``: its ``logs``
    outputs) or a semconv response of it (``{"type": "code_interpreter", "output"}``); "" for any other tool."""
    kind = details.get("type")
    if kind == "code_interpreter_call":
        return "\n".join(text_of(o.get("logs")) for o in as_list(details.get("outputs"))
                         if isinstance(o, dict) and o.get("type") == "logs")
    return text_of(details.get("output")) if kind == "code_interpreter" else ""


def interpreter_error(output: str | None) -> str | None:
    """The exception a code interpreter's code ended in: the exception's line of IPython's last report (``KeyError:
    'revenue'``, see ``_CELL_RAISED``), else None. The Responses API marks the call ``completed`` all the same (the
    interpreter ran; the code failed), so a cell that raised read as a step that worked. A kernel's cell stops
    where it raised, so the report ends the output, but for the later lines of a message of several (a pydantic
    ``ValidationError``, a ``ValueError`` with a newline, an exception's notes): lines after the exception's are
    taken for those. So a report the code had IPython print itself (``get_ipython().showtraceback()`` in an
    ``except``) and went on after reads as the cell's failure too: no text tells its output from a message's lines,
    and a cell that raised a message of several lines read as one that worked is the worse miss. A traceback in
    Python's own words (``Traceback (most recent call last):``, ``traceback.print_exc()``) is no failure of the
    cell."""
    if not output:
        return None
    headers = list(_CELL_RAISED.finditer(output))
    if headers:
        cls = headers[-1].group("cls")
        raised = [line.rstrip() for line in output[headers[-1].end():].splitlines()
                  if line.rstrip() == cls or line.startswith(f"{cls}: ")]  # a message's later lines may follow
        if raised:
            return short(raised[-1], 600)
    found = _CELL_SYNTAX.search(output)
    return short(found.group("line"), 600) if found else None


def _anthropic_tool_error(details: dict[str, Any]) -> bool:
    """Anthropic's error result of a server tool, as pydantic-ai dumps it: ``{"error_code": "max_uses_exceeded",
    "type": "web_search_tool_result_error"}`` (``code_execution_tool_result_error`` alike)."""
    kind = details.get("type")
    return isinstance(kind, str) and kind.endswith("_tool_result_error") and isinstance(details.get("error_code"), str)


def provider_failure(tool: str | None, result: Any) -> str | None:
    """The words of a provider-run tool's failure where its result is the provider's JSON (``{"status": "failed",
    "sources": [...]}`` of a hosted search, ``{"outcome": "OUTCOME_FAILED", "output": "<traceback>"}`` of Gemini's
    code execution, as pydantic-ai records it): what it printed, else that the tool failed; None for any other
    result, an app tool's own dict (``{"status": "error", "message": ...}``) included: its words are all of it. The
    JSON itself said it in braces and quotes."""
    if tool == "code_interpreter" and isinstance(result, str) and (raised := interpreter_error(result)):
        return raised
    said = maybe_json(result)
    shaped = isinstance(said, dict) and ("outcome" in said and set(said) <= {"outcome", "output"}
                                         or set(said) <= {"status", "sources", "results"})
    if isinstance(said, dict) and _anthropic_tool_error(said):
        return f"{tool or 'tool'} failed: {said['error_code']}"
    if not (shaped and _server_tool_failed(said)):
        return None
    if printed := text_of(said.get("output") or "").strip():
        return printed
    how = said.get("status") if said.get("status") in ("failed", "error") else said.get("outcome")
    return f"{tool or 'tool'} failed" + ("" if how in ("failed", "error") else f" ({how})")


def _said_after_a_call(parts: Any) -> bool:
    """Whether parts interleave text and calls (text, call, text ...): a streamed turn in the order it was said.
    A message that only puts its text after its calls (openai-v2 writes a chat message's ``tool_calls``
    first, then its ``content``) says it before them."""
    kinds = [p.get("type") for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []
    if "tool_call" not in kinds:
        return False
    first = kinds.index("tool_call")
    return "text" in kinds[:first] and "text" in kinds[first:]


def failed_tool_results(request: Any) -> set[str]:
    """Ids of the tool results an Anthropic Messages request marks ``is_error: true`` (``{"type": "tool_result",
    "tool_use_id", "is_error"}`` blocks): OpenInference's Anthropic instrumentor keeps the request whole in
    ``input.value`` but drops the flag from the flattened messages."""
    value = maybe_json(request)
    messages = value.get("messages") if isinstance(value, dict) else None
    return {str(block["tool_use_id"]) for msg in as_list(messages) if isinstance(msg, dict)
            for block in as_list(msg.get("content")) if isinstance(block, dict)
            and block.get("type") == "tool_result" and block.get("is_error") is True and block.get("tool_use_id")}


def user_requests(messages: list[dict[str, Any]]) -> list[str]:
    """What the user asked in a message list, in order: user messages as written, without a tool result sent in a
    user message nor a harness notice (see ``_HARNESS_NOTICE``) nor pydantic-ai's retry feedback
    (:func:`retry_feedback`), so the latest is the latest request.

    Only the notice is left out: the coding CLIs' injected context (``_agent_cli.typed_prompt``) is read where their
    sessions are; in any other app an XML-tagged prompt (``<INSTRUCTIONS>``, ``<skill>``) is the user's request."""
    texts = (m.get("text") for m in messages if m.get("role") in _USERISH and not m.get("call_id"))
    return [text for text in texts if isinstance(text, str) and text.strip() and not _HARNESS_NOTICE.match(text)
            and retry_feedback(text) is None]


def first_user_text(messages: list[dict[str, Any]]) -> str | None:
    """The first user message's text, not a tool result sent in a user message (the GenAI conventions' role of a
    ``tool_call_response``: a resumed pydantic-ai run's own messages start with one, its denial's words first)."""
    for msg in messages:
        if msg.get("role") in _USERISH and not msg.get("call_id") and msg.get("text", "").strip():
            return msg["text"]
    return None


_INSTRUCTION_KEYS_IN_ORDER = ("task", "instruction", "input", "question", "query", "prompt", "goal", "user_input",
                              "message", "content", "text", "input_args")
_INSTRUCTION_KEYS = frozenset((*_INSTRUCTION_KEYS_IN_ORDER, "messages"))


def task_from_input(value: Any) -> str | None:
    """The instruction inside a root input: a string, or the usual keys of an inputs dict (a Haystack
    pipeline's ``{"data": {component: inputs}}``: the first component given one)."""
    value = maybe_json(value)
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, dict) and isinstance(value.get("data"), dict) and value["data"] and set(value) <= {
            "data", "include_outputs_from"} and all(isinstance(v, dict) for v in value["data"].values()):
        found = (task_from_input(inputs) for inputs in value["data"].values() if _INSTRUCTION_KEYS & inputs.keys())
        return next((t for t in found if t), None) or json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, dict):
        for key in _INSTRUCTION_KEYS_IN_ORDER:  # input_args: DSPy's instrumentor wraps a module's inputs so
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


def agentchat_messages(value: Any) -> list[dict[str, Any]] | None:
    """The messages of an AutoGen AgentChat ``TaskResult`` (``{"messages": [...], "stop_reason"}``, each message a
    dumped ``BaseChatMessage`` / ``BaseAgentEvent`` with its ``type`` and ``source``), else None: what OpenInference's
    autogen-agentchat instrumentor records as a team's or agent's ``run_stream`` output, and the record of the
    ``autogen-agentchat`` adapter."""
    value = maybe_json(value)
    if not (isinstance(value, dict) and "stop_reason" in value and isinstance(value.get("messages"), list)):
        return None
    found = [m for m in value["messages"] if isinstance(m, dict) and isinstance(m.get("type"), str)
             and isinstance(m.get("source"), str)]
    return found if found and len(found) == len(value["messages"]) else None


def agentchat_users(messages: list[dict[str, Any]]) -> set[str]:
    """The sources of an AgentChat run that are a person: ``user`` (the task ``run(task=...)`` gives, or a Swarm's
    ``HandoffMessage`` resuming it), and any agent that asked for input (``UserInputRequestedEvent``: a
    ``UserProxyAgent``, whose words are what the person typed, "APPROVE" among them)."""
    return {"user"} | {m["source"] for m in messages if m.get("type") == "UserInputRequestedEvent"
                       and isinstance(m.get("source"), str)}


def agentchat_answer(messages: list[dict[str, Any]]) -> str | None:
    """What an AgentChat run answered: its last chat message's text (``TextMessage``, ``StopMessage``) from an
    agent, if nothing but events, or a person's words (:func:`agentchat_users`: "APPROVE" ending a human-in-the-loop
    team), came after it (a run ending on a tool call answered nothing)."""
    users = agentchat_users(messages)
    for m in reversed(messages):
        if m["source"] in users and m["type"] in ("TextMessage", "UserInputRequestedEvent"):
            continue
        if m["type"] in ("TextMessage", "StopMessage") and isinstance(m.get("content"), str):
            return m["content"].strip() or None
        if m["type"] not in ("ThoughtEvent", "ModelClientStreamingChunkEvent", "MemoryQueryEvent",
                             "UserInputRequestedEvent"):
            return None
    return None


def agentchat_failed_calls(messages: list[dict[str, Any]]) -> list[tuple[str, Any, str, int]]:
    """The tool calls of an AgentChat run whose result says they failed (a ``ToolCallExecutionEvent`` result with
    ``is_error``: AgentChat catches what a tool raises and hands the model its message): (name, arguments decoded,
    the result's text, how many calls of that name and arguments came before it: a retry of a call that had
    worked, or a status check asked twice, is the later one), the call found by its ``call_id`` in the
    ``ToolCallRequestEvent`` before."""
    calls: dict[str, tuple[dict[str, Any], int]] = {}
    asked: list[tuple[str, str]] = []
    failed: list[tuple[str, Any, str, int]] = []
    for m in messages:
        content = m.get("content") if isinstance(m.get("content"), list) else []
        if m["type"] == "ToolCallRequestEvent":
            for c in content:
                if isinstance(c, dict) and isinstance(c.get("id"), str):
                    key = (str(c.get("name")), json.dumps(maybe_json(c.get("arguments")), sort_keys=True, default=str))
                    calls[c["id"]] = (c, asked.count(key))
                    asked.append(key)
        elif m["type"] == "ToolCallExecutionEvent":
            for r in content:
                if isinstance(r, dict) and r.get("is_error") is True and (found := calls.get(r.get("call_id"))):
                    call, before = found
                    failed.append((str(call.get("name")), maybe_json(call.get("arguments")), str(r.get("content")),
                                   before))
    return failed


def crew_task_descriptions(tasks: Any) -> str | None:
    """What a CrewAI crew was asked: its tasks' descriptions (``crewai.crew.tasks`` / ``crew_tasks``, as JSON text or
    a list: ``[{"description", "agent", "expected_output", ...}]``), one a line, in the order the crew runs them;
    None for any other value. Only for those attributes: elsewhere a list of records with a ``description``
    (an app's tickets, tool specs) is data, not the run's request."""
    tasks = maybe_json(tasks)
    if not isinstance(tasks, list):
        return None
    said = [t.get("description") for t in tasks if isinstance(t, dict)]
    if not said or len(said) < len(tasks) or not all(isinstance(d, str) and d.strip() for d in said):
        return None
    return "\n".join(d.strip() for d in said)


def is_object_repr(text: str) -> bool:
    """Whether ``text`` is a Python object's repr, not words: pydantic's ``name=value name=value ...``
    (CrewAI records its agent so, as a task span's input; LangChain a message as ``content='...'
    additional_kwargs={} ...``) or ``<module.Class object at 0x...>``."""
    text = text.strip()
    return bool(_OBJECT_AT.search(text)) or (bool(_FIELD.match(text)) and len(_FIELD.findall(text)) >= 3)


def tool_message(value: Any) -> tuple[Any, str | None, bool] | None:
    """(content, call id, failed) of a LangChain ``ToolMessage`` in any of its serialised forms (flat,
    ``{"type": "tool", "data": {...}}``, ``lc``), as tracers record a tool's output; also the one a LangGraph
    ``Command`` a tool returned answers with (``{"graph", "update": {"messages": [..., ToolMessage]}, "goto"}``:
    every supervisor / swarm handoff tool; the update's last ToolMessage is this call's answer, the messages before
    it the state's history); None for anything else."""
    msg = maybe_json(value)
    if isinstance(msg, str):
        msg = _tool_message_repr(msg)
    if not isinstance(msg, dict):
        return None
    update = msg.get("update") if "goto" in msg and set(msg) <= {"graph", "update", "resume", "goto"} else None
    if isinstance(update, dict) and isinstance(update.get("messages"), list):
        return next((found for found in map(tool_message, reversed(update["messages"])) if found), None)
    if isinstance(msg.get("kwargs"), dict) and isinstance(msg.get("id"), list) and msg["id"]:  # "lc" form
        msg = dict(msg["kwargs"], type=str(msg["id"][-1]).lower().removesuffix("message"))
    elif isinstance(msg.get("data"), dict) and "type" in msg:
        msg = dict(msg["data"], type=msg["type"])
    if "content" in msg and (msg.get("type") == "tool" or "tool_call_id" in msg):
        call = msg.get("tool_call_id")
        return msg["content"], str(call) if call else None, str(msg.get("status") or "").lower() == "error"
    return None


#: A LangChain ``ToolMessage`` written as ``str()`` prints it (``content='...' name='search_flights'
#: tool_call_id='toolu_...'``: ADOT's LangChain instrumentation's ``gen_ai.tool.call.result``): text fields only.
_TOOL_MESSAGE_REPR = re.compile(rf"^content=(?:{_PY_STR})(?:\s+\w+=(?:{_PY_STR}|None))*\s*$", re.S)


def _tool_message_repr(text: str) -> dict[str, Any] | None:
    """The fields of a ``ToolMessage`` printed as its ``str()`` (string content, a ``tool_call_id``), else None."""
    if not text.startswith("content=") or "tool_call_id=" not in text or not _TOOL_MESSAGE_REPR.match(text):
        return None
    try:
        fields = {name: ast.literal_eval(literal) for name, literal in _REPR_FIELD.findall(text)}
    except (ValueError, SyntaxError):
        return None
    return fields if isinstance(fields.get("content"), str) and fields.get("tool_call_id") else None


#: An MCP ``CallToolResult`` written as its repr (``meta=None content=[TextContent(type='text', text='...',
#: annotations=None)] isError=False``: any-agent's ADK backend): its text blocks' literals, and its error flag.
_MCP_REPR = re.compile(r"^\s*(?:meta=\S+\s+)?content=\[.*\]\s+(?:structuredContent=.*\s+)?isError=(True|False)\s*$", re.S)
_MCP_REPR_TEXT = re.compile(r"TextContent\(type='text', text=('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")


def _mcp_repr(value: Any) -> tuple[str, bool] | None:
    """(text, is error) of an MCP tool result written as its Python repr; None for anything else."""
    ends_so = isinstance(value, str) and value.rstrip().endswith(("isError=True", "isError=False"))
    found = _MCP_REPR.match(value) if ends_so else None  # (else its greedy parts backtrack over a long text)
    if not found:
        return None
    try:
        texts = [ast.literal_eval(literal) for literal in _MCP_REPR_TEXT.findall(value)]
    except (ValueError, SyntaxError):
        return None
    return "\n".join(t for t in texts if isinstance(t, str)), found.group(1) == "True"


#: The fields of google-genai's ``FunctionResponse`` (``types.FunctionResponse``), as ``model_dump_json`` writes them.
_FUNCTION_RESPONSE_FIELDS = frozenset({"id", "name", "response", "will_continue", "scheduling", "parts"})


def _function_response(value: Any) -> Any:
    """The tool's own result inside a Gemini ``FunctionResponse`` (``{"id", "name", "response": {...}}``:
    OpenInference's ADK instrumentor records the whole envelope as a tool span's ``output.value``; the model is
    sent, and ADK's own tracing records, only its ``response``); anything else as it is."""
    if isinstance(value, dict) and {"id", "name", "response"} <= value.keys() <= _FUNCTION_RESPONSE_FIELDS \
            and isinstance(value["response"], dict) and isinstance(value["name"], str):
        return value["response"]
    return value


def result_text(value: Any) -> str:
    """A tool result as text: content parts (``[{"text": ...}]``, what Strands records) joined, one MCP content
    block (``{"type": "text", "text"}``) as its text, an MCP result's repr as its text blocks, LlamaIndex's
    ``ToolOutput`` (``{"blocks", "tool_name", "raw_output", ...}``) as its blocks' text, a Gemini
    ``FunctionResponse`` as its ``response`` (:func:`_function_response`), else as is."""
    decoded = maybe_json(value)
    if (mcp := _mcp_repr(decoded)) is not None and not mcp[1]:  # a failed one stays whole: see mcp_error
        return mcp[0]
    if isinstance(decoded, dict) and {"blocks", "tool_name", "raw_output"} <= decoded.keys():
        decoded = decoded["blocks"]
    decoded = _function_response(decoded)
    if isinstance(decoded, dict) and decoded.get("type") == "text" and isinstance(decoded.get("text"), str):
        return decoded["text"]  # one MCP content block
    if isinstance(decoded, list) and decoded and all(isinstance(p, dict) and "text" in p for p in decoded):
        return _content_text(decoded)[0]
    return text_of(decoded)


#: How the SDK's ``ShellTool`` renders a command's end after its output (``render_shell_outputs``): a non-zero exit
#: code, or a timeout. The SDK writes no ``exit code: 0``: that line is the command's own output (``...; echo "exit
#: code: $?"``), no failure.
_SHELL_END = re.compile(r"^(?:exit code: (?P<code>-?[1-9]\d*)|status: (?P<timeout>timeout))$")


#: What a ``SandboxAgent``'s shell tools (``exec_command``, ``write_stdin``: 0.2x ``sandbox/capabilities/tools/
#: shell_tool.py`` ``_format_response``) return: ``Chunk ID``, ``Wall time``, ``Process exited with code N`` once the
#: command ended, then ``Output:`` and what it printed.
_SANDBOX_EXEC = re.compile(r"Chunk ID: [^\n]*\nWall time: [^\n]*\n(?:Process exited with code (?P<code>-?\d+)\n)?"
                           r"(?:[^\n]*\n)*?Output:\n(?P<output>.*)", re.S)
#: Its output for a command that timed out (``ExecTimeoutError``), with no exit code.
_SANDBOX_TIMEOUT = re.compile(r"Command timed out after \d+(?:\.\d+)? seconds\.")


def _sandbox_exec_error(arguments: Any, output: str | None) -> str | None:
    """The error of a sandbox shell call whose command exited non-zero: the tool returns its output and exit code as
    text (:data:`_SANDBOX_EXEC`) and raises nothing, so its span records no error and a failing test run read as a
    step that succeeded. Read as any agent's shell (``exit_code_error``: grep's silent exit 1 is a "no"). A command
    that timed out has no exit code, only the SDK's sentence (:data:`_SANDBOX_TIMEOUT`): that is the error, as a
    ``ShellTool`` call's ``status: timeout`` is. None for any other output, and for a command still running
    (no exit code, a session ID to write to)."""
    if (found := _SANDBOX_EXEC.fullmatch(str(output or ""))) is None:
        return None
    arguments = maybe_json(arguments)
    command = arguments.get("cmd") if isinstance(arguments, dict) and isinstance(arguments.get("cmd"), str) else None
    if found.group("code") is None:
        timed_out = found.group("output").strip()
        return timed_out if _SANDBOX_TIMEOUT.fullmatch(timed_out) else None
    code = int(found.group("code"))
    return exit_code_error(found.group("output"), code, command) if code else None


def shell_error(arguments: Any, output: str | None, name: str | None = None) -> str | None:
    """The error of an OpenAI Agents SDK shell call whose command failed, in any span format recording the call (the
    SDK's own function span, Logfire's, opentelemetry-instrumentation-openai-agents-v2's ``execute_tool``,
    OpenInference's): a ``SandboxAgent``'s ``exec_command`` / ``write_stdin`` (by tool ``name``,
    :func:`_sandbox_exec_error`), or a ``ShellTool`` call. The SDK runs the model's ``shell_call`` commands
    (``{"commands", "timeout_ms", "max_output_length"}``) through the app's executor and writes their output as
    ``$ <command>``, its stdout, ``stderr:`` and its stderr, then ``exit code: N`` where N is not 0
    (``status: timeout``); no span records an error for it (the executor did not raise), so a failing test run read
    as a step that succeeded. The first failed command's decisive line and code (``exit_code_error``: grep's silent
    exit 1 is a "no"); None when every command exited 0, or for any other tool."""
    if name in ("exec_command", "write_stdin"):
        return _sandbox_exec_error(arguments, output)
    commands = arguments.get("commands") if isinstance(arguments, dict) else None
    if not (isinstance(commands, list) and commands and isinstance(output, str)):
        return None
    lines = output.splitlines()
    heads = {f"$ {c.splitlines()[0]}" for c in commands if isinstance(c, str) and c.strip()}  # a heredoc's first line
    starts = [n for n, line in enumerate(lines) if line in heads]
    for n, start in enumerate(starts):
        chunk = lines[start + 1:starts[n + 1] if n + 1 < len(starts) else len(lines)]
        while chunk and not chunk[-1].strip():
            chunk.pop()
        ends = []
        while chunk and (end := _SHELL_END.match(chunk[-1])):
            ends.append(end)
            chunk.pop()
        command = lines[start][2:]
        if any(e.group("timeout") for e in ends):
            return f"command timed out: {command}"
        if (code := next((int(e.group("code")) for e in ends if e.group("code")), None)) is not None:
            body = "\n".join(line for line in chunk if line != "stderr:")
            if error := exit_code_error(body, code, command):
                return error
    return None


def mcp_error(result: str | None) -> str | None:
    """The text of an MCP tool result that reports a failure (``{"content": [...], "isError": true}``, or its
    repr with ``isError=True``: an MCP client returns it rather than raising, so the tool's span shows no
    error), else None."""
    decoded = maybe_json(result) if result else None
    if (mcp := _mcp_repr(decoded)) is not None:
        return (mcp[0] or "tool error") if mcp[1] else None
    if isinstance(decoded, dict) and decoded.get("isError") is True:
        return _content_text(decoded.get("content"))[0] or "tool error"
    return None


#: The scope name of Google ADK's tracer, its ``gen_ai.system``, and the prefix of the attributes only ADK's own
#: tracing writes (``trace_tool_call`` sets ``gcp.vertex.agent.event_id`` / ``tool_response`` ...; OpenInference's ADK
#: instrumentor adds its attributes to ADK's spans, and Langfuse keeps them in ``metadata.attributes``).
_ADK = "gcp.vertex.agent"


def is_adk_tool(attrs: dict[str, Any]) -> bool:
    """Whether a tool span's attributes are Google ADK's (see ``_ADK``)."""
    return attrs.get("gen_ai.system") == _ADK or any(str(k).startswith(f"{_ADK}.") for k in attrs)


def adk_tool_error(attrs: dict[str, Any], result: Any) -> str | None:
    """The failure a Google ADK tool returned rather than raised, else None.

    ADK sends a tool's dict to the model as it is. Its docs and samples have a tool report failure with
    ``{"status": "error", "error_message": ...}`` (the span's status stays OK); ADK itself takes a dict with an
    ``error`` (``FunctionTool._detect_error_in_response``; its own answer to a call missing mandatory arguments is
    ``{"error": "<text>"}``) for a failure, and 2.x marks that span with nothing but the type ``TOOL_ERROR``. The
    error is the dict's ``error_message``, else ``message``, else ``error`` text, else the whole result. Only for
    ADK's spans (:func:`is_adk_tool`): elsewhere a ``status`` field is the tool's own data. Other statuses (ADK's
    own ``{"status": "The function is running asynchronously ..."}``, "success", "pending") are no failure."""
    if not is_adk_tool(attrs):
        return None
    said = _function_response(maybe_json(result) if isinstance(result, str) else result)
    if not isinstance(said, dict) or not (str(said.get("status") or "").strip().lower() == "error"
                                          or said.get("error")):
        return None
    detail = next((said[k] for k in ("error_message", "message", "error") if isinstance(said.get(k), str)
                   and said[k].strip()), None)
    return detail or text_of(said)
