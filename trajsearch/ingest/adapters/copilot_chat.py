"""GitHub Copilot Chat in VS Code: a chat saved by "Chat: Export Chat..." and the session files VS Code keeps.

Where they come from (microsoft/vscode ``src/vs/workbench/contrib/chat/common/chatModel.ts``: ``IExportableChatData``,
``ISerializableChatData``, ``toExport()``; ``chatImportExport.ts`` writes ``JSON.stringify(model.toExport())``): one
JSON document a chat, ``{requesterUsername, responderUsername: "GitHub Copilot", responderAvatarIconUri,
initialLocation, requests: [...]}``; the files VS Code keeps of each chat
(``<user data>/workspaceStorage/<hash>/chatSessions/<session id>.json``) are the same with ``version`` (3),
``sessionId``, ``creationDate``, ``lastMessageDate``, ``customTitle``. Each request is a turn of the user's:
``message.text`` (what was typed), ``response`` (the parts the chat showed: markdown ``{value}``, ``thinking``,
``prepareToolInvocation``, ``toolInvocationSerialized`` with ``toolId``, ``toolCallId``, ``invocationMessage``,
``resultDetails`` (an MCP tool's ``{input, output: [{value}], isError}``, a built-in's URIs), ``toolSpecificData``),
``result`` (``metadata.toolCallRounds``: the model's turns, each ``{response, toolCalls: [{name, arguments, id}]}``;
``metadata.toolCallResults``: what each call returned to the model, by the round's call id; ``metadata.sessionId``;
``errorDetails`` of a request that failed), ``modelId`` (``copilot/claude-sonnet-4``), ``timestamp`` (epoch ms),
``isCanceled``, ``agent.extensionVersion``. Since 2026 VS Code keeps its sessions as ``chatSessions/*.jsonl``: this
document (``{kind: 0, v}``), then the edits made to it (``_replayed``); read as the chat they make. Its transcripts in
GitHub Copilot CLI's event shape (``GitHub.copilot-chat/transcripts/``) are ``copilot_cli``'s. The workspace storage's
other files (``workspace.json``, ``chatEditingSessions/``, other extensions') are passed over (``side_path``).

Field mapping:

- run = the chat; task = the first request's ``message.text``; the later requests' texts go to
  ``metadata.user_prompts`` (not those VS Code sent itself, ``isSystemInitiated``, such as a background terminal's
  "`npm test` completed"), their steps follow the first's.
- steps: where a request's ``result.metadata.toolCallRounds`` are kept (agent mode), each call of each round is a
  step (action = its ``name``, arguments = its JSON ``arguments``, thought = the round's reasoning ``thinking.text``
  and ``response`` text, observation = ``toolCallResults[id]``'s text: an MCP tool's ``{value}`` parts, a built-in
  tool's element tree as prompt-tsx rendered it, ``{node}``) and a round's text with no call after it a ``respond``
  step; the calls a subagent made (the response's invocations with its ``subAgentInvocationId``, in no round)
  follow the ``runSubagent`` call, marked ``arguments.subagent`` (``runSubagent``); an edit made with no call (a
  ``textEditGroup`` in a response with no call) is an ``edit`` step before the last answer. Without them, the
  ``response`` parts in order: a ``toolInvocationSerialized`` is a step (arguments = ``toolSpecificData.rawInput``,
  a terminal call's command, a subagent's prompt, else ``resultDetails.input``, else the invocation message;
  observation a terminal call's output, a subagent's answer), markdown and ``thinking`` before it its thought, text
  after the last call a ``respond`` step, an edit made with no call (``textEditGroup``) an ``edit`` step. A call's
  error: its invocation (the one whose ``toolCallId`` is the round call's id without ``__vscode-<n>``, else the
  first not yet taken with its ``toolId`` whose id is no round call's) says
  ``resultDetails.isError`` (the decisive line of its output), a terminal command's non-zero exit code, or the user
  denied it (not run).
- outcome: unknown (a chat records no verdict), unless its last request failed (``result.errorDetails``: a
  provider's or the network's error, the session ended on it): an ``infra_error``, or the agent's ``failure`` when
  its context window stopped it; but one the user stopped (coded ``canceled``, ``isCanceled``, or since 2026
  ``modelState`` ``{value: 2}``: with no ``result``, stopped before its agent answered, only in a kept ``.jsonl``,
  as an export writes a request still running so) is counted as a canceled request, not one still running.
- trajectory_id = ``copilot-chat.<the first request's requestId>``, which every export and kept file holds: an
  export made while the chat ran (no ``result`` yet), one made after it ended and the file VS Code keeps are one
  chat, whose session ids differ among them (the kept file's ``sessionId``: ``metadata.vscode_session_id``; the
  Copilot extension's ``result.metadata.sessionId``: ``metadata.copilot_session_id``); the ids are the fallbacks.
  An export made while the last request ran has its steps from where that request's begin marked
  (``metadata.running_from_step``), so that one ingest of it and a later export keeps the later only.
  model_id = the first ``modelId`` a request names, without the vendor before ``/`` (``metadata.model_vendor``);
  for Auto (``copilot/auto``) the model it chose (``result.metadata.resolvedModel``, the ``autoModeResolution``
  part, the rounds' ``modelId``; ``metadata.auto_model``).
  created_at = ``creationDate``, else the first request's ``timestamp``. tool_versions = ``{"copilot-chat":
  agent.extensionVersion}``. metadata: ``requester``, ``title`` (``customTitle``), ``agent_mode``, ``canceled``
  requests, ``models`` (more than one), ``auto_model``, ``last_request_error``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from trajsearch.actions import RESPOND, not_run
from trajsearch.model import Trajectory

from ._agent_cli import (
    API_ERROR_CAUSE,
    as_int,
    as_records,
    as_str,
    error_line,
    exit_code_error,
    first_time,
    iso_time,
    join_thought,
    json_arguments,
    prompt_list,
    session_trajectory,
    whole_file,
)
from ._common import RUNNING_FROM, Context, RecordError, as_dict, as_list, json_kind, last_part, subagent_marked

NAME = "copilot-chat"
#: A file is one chat: the reader hands over its whole document.
WHOLE_FILE = True
split = whole_file
#: Searched in a file's first 64 KiB when no record can be parsed from them (a chat of megabytes): the responder's
#: name beside its icon (``IExportableChatData`` until 2026) or the chat's ``initialLocation`` (VS Code 2026, whose
#: export and kept ``.jsonl`` write no icon; the log's opening line puts the location first).
SIGNATURE = re.compile(r'"responderUsername"\s*:\s*"[^"]*"\s*,\s*"(?:responderAvatarIconUri|initialLocation)"\s*:'
                       r'|"initialLocation"\s*:\s*"[^"]*"\s*,\s*"responderUsername"\s*:')
_INVOCATION = "toolInvocationSerialized"
#: The tool that runs a subagent (its calls' ``subAgentInvocationId`` is that call's ``toolCallId``).
_SUBAGENT_TOOL = "runSubagent"
#: ``modelState.value`` of a request the user stopped (VS Code's ``ResponseModelState.Cancelled``).
_CANCELLED = 2
#: ``modelState.value`` of a request still running (``Pending``, ``NeedsInput``): written so only in a kept ``.jsonl``;
#: an export or a kept ``.json`` (``ChatResponseModel.toJSON``) writes it as ``Cancelled``, with no ``result`` yet.
_RUNNING = (0, 4)


def matches(record: Any) -> bool:
    """A chat: its ``requests`` list beside the responder's (or requester's) name; or the first line of a kept
    ``chatSessions/*.jsonl``, ``{kind: 0, v: <the chat>}``."""
    return _is_chat(record) or _is_chat(_opening(record))


def _is_chat(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("requests"), list) \
        and ("responderUsername" in record or "requesterUsername" in record)


def _opening(edit: Any) -> Any:
    """The chat a ``chatSessions/*.jsonl`` edit log opens with (its ``kind: 0`` line's ``v``), else None."""
    return edit.get("v") if isinstance(edit, dict) and edit.get("kind") == 0 else None


def side_path(path: Path, fmt: str | None) -> str | None:
    """What else VS Code keeps in a workspace's storage folder (``workspaceStorage/<hash>/``) beside the chats in its
    ``chatSessions/``: the workspace's ``workspace.json``, the chat's edit sessions (``chatEditingSessions/``), Copilot
    Chat's debug logs, every other extension's own files. Read by nobody, so a walk of ``workspaceStorage/`` is not
    stopped by them; a file there of a format trajsearch reads (Copilot Chat's ``transcripts/``, in Copilot CLI's
    shape) is still read."""
    if fmt is not None:
        return None
    if path.name == "workspace.json" and (path.parent / "chatSessions").is_dir():
        return "VS Code's record of a workspace's folder, beside the chats it keeps in chatSessions/ (each read)"
    parts = path.parts
    at = last_part(parts, "workspaceStorage")
    if at is not None and len(parts) > at + 3 and parts[at + 2] != "chatSessions":
        return (f"VS Code's storage of a workspace's {parts[at + 2]} (no chat: VS Code keeps those in the "
                "workspace's chatSessions/, each read)")
    return None


def _replayed(edits: list[dict[str, Any]]) -> Any:
    """The chat a kept ``chatSessions/*.jsonl`` (VS Code since 2026) ends as: its first line's chat (``kind: 0``,
    ``v``), then each edit at its path ``k`` of keys and indexes: ``kind: 1`` sets ``v`` there, ``kind: 2`` appends
    the items ``v`` to the list there (after cutting it at ``i`` when given), ``kind: 3`` deletes it."""
    chat = _opening(edits[0])
    if chat is None:
        raise RecordError("the chat session log does not open with its chat ({kind: 0, v: {...}}, as VS Code's "
                          "chatSessions/*.jsonl does)")
    for n, edit in enumerate(edits[1:], 2):
        kind, path = edit.get("kind"), as_list(edit.get("k"))
        try:
            *way, last = path
            parent = chat
            for key in way:
                parent = parent[key]
            if kind == 1:
                parent[last] = edit.get("v")
            elif kind == 2:
                items = parent.setdefault(last, []) if isinstance(parent, dict) else parent[last]
                if isinstance(cut := edit.get("i"), int):
                    del items[cut:]
                items.extend(as_list(edit.get("v")))
            elif kind == 3:
                del parent[last]
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise RecordError(f"edit {n} of the chat session log (kind {kind} at {path}): no such place in the "
                              "chat") from None
    return chat


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    logged = isinstance(record, list) or _opening(record) is not None  # a kept .jsonl: its lines' values, or its one
    if logged:
        record = _replayed(as_records(record, "VS Code chat session log"))
    if not _is_chat(record):
        raise RecordError(f"not a Copilot chat (an exported chat or a chatSessions file is a JSON object with "
                          f"requesterUsername / responderUsername and requests; found {json_kind(record)})")
    requests = [as_dict(r) for r in record["requests"]]
    if not requests:
        raise RecordError("the chat holds no requests (a chat opened and never used)")
    prompts = [r for r in requests if r.get("isSystemInitiated") is not True] or requests
    task = (as_str(as_dict(prompts[0].get("message")).get("text")) or "").strip()
    if not task:
        raise RecordError(f"requests[{requests.index(prompts[0])}]: no message.text (the user's words that open "
                          "the chat)")
    per_request = [_request_steps(r) for r in requests]
    first, last = requests[0], requests[-1]
    failed = None if _canceled(last, logged) else as_str(_error_details(last).get("message"))
    failure = error_line(failed, failed) if failed else None
    models_used = [m for r in requests if (m := _model(r))]
    vendor, _, model = (models_used[0] if models_used else "").rpartition("/")  # the first request may name none
    models = sorted(set(models_used))
    version = as_str(as_dict(first.get("agent")).get("extensionVersion"))
    kept_id = as_str(record.get("sessionId"))
    copilot_id = as_str(as_dict(as_dict(first.get("result")).get("metadata")).get("sessionId"))
    session = as_str(first.get("requestId")) or kept_id or copilot_id
    if not session:
        raise RecordError("no id: neither the first request's requestId nor the file's sessionId or the first "
                          "request's result.metadata.sessionId")
    metadata = {
        "vscode_session_id": kept_id,
        "copilot_session_id": copilot_id,
        "requester": as_str(record.get("requesterUsername")),
        "title": as_str(record.get("customTitle")),
        "agent_mode": next((a for r in requests if (a := as_str(as_dict(r.get("agent")).get("name")))), None),
        "model_vendor": vendor or None,
        "models": models if len(models) > 1 else None,
        "auto_model": any(_is_auto(_picked(r)) for r in requests) or None,
        "user_prompts": prompt_list([t for r in prompts[1:]
                                     if (t := as_str(as_dict(r.get("message")).get("text")))]) or None,
        "canceled_requests": sum(_canceled(r, logged) for r in requests) or None,
        "last_request_error": failure,
        RUNNING_FROM: _running_from(requests, per_request, logged),
    }
    return session_trajectory(
        ctx, run_id=f"{NAME}.{session}", task=task, model_id=model or None,
        steps=[s for steps in per_request for s in steps], metadata=metadata,
        last_error=failure if not per_request[-1] else None,  # a failed request that did work: no verdict
        error_cause=API_ERROR_CAUSE, created_at=first_time(record.get("creationDate"), first.get("timestamp")),
        tool_versions={"copilot-chat": version} if version else None)


def _request_steps(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The steps of one request: its model's rounds where kept, else the parts its response showed."""
    response = [as_dict(p) for p in as_list(request.get("response"))]
    invocations = [p for p in response if p.get("kind") == _INVOCATION]
    metadata = as_dict(as_dict(request.get("result")).get("metadata"))
    rounds = [as_dict(r) for r in as_list(metadata.get("toolCallRounds"))]
    at = iso_time(request.get("timestamp"))
    if rounds:
        results = as_dict(metadata.get("toolCallResults"))
        own = [i for i in invocations if not i.get("subAgentInvocationId")]  # a subagent's are not the rounds'
        calls_of = [[as_dict(c) for c in as_list(r.get("toolCalls"))] for r in rounds]
        ids = {_own_id(c.get("id")) for calls in calls_of for c in calls} - {""}
        steps = []
        for round_, calls in zip(rounds, calls_of):
            reasoning = _text(as_dict(round_.get("thinking")).get("text"))
            said = join_thought([reasoning or "", as_str(round_.get("response")) or ""])
            for call in calls:
                name, call_id = as_str(call.get("name")) or "tool", as_str(call.get("id")) or ""
                taken = _invocation_of(own, name, call_id, ids)
                output = _text(as_dict(results.get(call_id)).get("content"))
                steps.append(_step(name, json_arguments(call.get("arguments"), key="arguments"), said,
                                   output if output is not None else _output(taken), taken, at))
                said = None
                if taken is not None and (run_by := as_str(taken.get("toolCallId"))):
                    steps += [_invocation_step(i, [], at, name) for i in invocations
                              if i.get("subAgentInvocationId") == run_by]
            if not calls and (answer := (as_str(round_.get("response")) or "").strip()):
                steps.append(_answer([reasoning or ""], answer, at))
        if not invocations:  # the edits no call made, before the answer that ends the request
            answer = steps[-1:] if steps and steps[-1]["action"] == RESPOND else []
            steps[len(steps) - len(answer):] = [
                e for p in response if p.get("kind") == "textEditGroup" and (e := _edit_step(p, None, at))] + answer
        return steps
    steps, thought, text = [], [], []
    spawners = {as_str(i.get("toolCallId")): as_str(i.get("toolId")) or "tool" for i in invocations}
    for part in response:
        kind = part.get("kind")
        if kind == _INVOCATION:
            run_by = as_str(part.get("subAgentInvocationId"))
            steps.append(_invocation_step(part, thought + text, at, spawners.get(run_by, _SUBAGENT_TOOL) if run_by
                                          else None))
            thought, text = [], []
        elif kind == "textEditGroup" and not invocations and (edit := _edit_step(part, thought + text, at)):
            steps.append(edit)  # an edit the chat made with no call: no step else shows it
            thought, text = [], []
        elif kind == "thinking":
            thought.append(_text(part.get("value")) or "")
        elif kind in (None, "markdownContent"):
            text.append(_text(part.get("content", part.get("value"))) or "")
    if join_thought(text):
        steps.append(_answer(thought, "\n\n".join(text), at))
    return steps


def _running_from(requests: list[dict[str, Any]], per_request: list[list[dict[str, Any]]], logged: bool) -> int | None:
    """Where the steps of a request still running when the chat was saved begin: its last, with no ``result`` yet
    (VS Code sets it as the request ends; in a kept ``.jsonl``, its ``modelState`` says so), read from the parts the
    chat showed until then; its export once ended holds the model's rounds instead, and continues this one
    (``RUNNING_FROM``)."""
    last = requests[-1]
    state = _state(last)
    running = state in _RUNNING if logged and state is not None else last.get("result") is None
    return sum(map(len, per_request[:-1])) if running and not _canceled(last, logged) else None


def _error_details(request: dict[str, Any]) -> dict[str, Any]:
    return as_dict(as_dict(request.get("result")).get("errorDetails"))


def _state(request: dict[str, Any]) -> int | None:
    """The request's ``modelState.value`` (VS Code's ``ResponseModelState``, since 2026), else None."""
    value = as_dict(request.get("modelState")).get("value")
    return value if type(value) is int else None


def _canceled(request: dict[str, Any], logged: bool) -> bool:
    """Whether the user stopped the request: ``isCanceled`` (before 2026); ``modelState`` ``{value: 2}`` (VS Code's
    ``ResponseModelState.Cancelled``, which replaced ``isCanceled``) with a ``result`` (whose ``errorDetails``
    newer VS Code drops when it came after the stop), or with none in a kept ``.jsonl`` (stopped before its agent
    answered; an export writes a request still running so, see ``_RUNNING``); or (Copilot Chat 0.36) its result's
    ``errorDetails`` coded ``canceled``, which is no error of the provider's."""
    stopped = _state(request) == _CANCELLED and (logged or request.get("result") is not None)
    return request.get("isCanceled") is True or stopped or _error_details(request).get("code") == "canceled"


def _picked(request: dict[str, Any]) -> str:
    """The model the user picked for a request (``modelId``, ``<vendor>/<model>``), else ""."""
    return as_str(request.get("modelId")) or ""


def _is_auto(picked: str) -> bool:
    """Whether a picked model is Auto (``copilot/auto``), which lets Copilot choose the model a request runs with."""
    return picked.rpartition("/")[2] == "auto"


def _model(request: dict[str, Any]) -> str | None:
    """The model a request ran with: the one picked, unless that was Auto (``copilot/auto``, VS Code's default
    picker of 2026), whose choice the request keeps as ``result.metadata.resolvedModel``, the response's
    ``autoModeResolution`` part (``resolved.id``; earlier ``resolvedModel``) or its rounds' ``modelId``; with the
    picked vendor."""
    picked = _picked(request)
    if not _is_auto(picked):
        return picked or None
    vendor = picked.rpartition("/")[0]
    metadata = as_dict(as_dict(request.get("result")).get("metadata"))
    parts = [as_dict(p) for p in as_list(request.get("response")) if as_dict(p).get("kind") == "autoModeResolution"]
    chosen = next((m for m in [as_str(metadata.get("resolvedModel"))]
                   + [as_str(as_dict(p.get("resolved")).get("id")) or as_str(p.get("resolvedModel")) for p in parts]
                   + [as_str(as_dict(r).get("modelId")) for r in as_list(metadata.get("toolCallRounds"))] if m), None)
    if chosen is None:
        return picked
    return chosen if "/" in chosen or not vendor else f"{vendor}/{chosen}"


def _own_id(call_id: Any) -> str:
    """A round call's id as its invocation has it: the round's is ``<toolCallId>__vscode-<n>`` (Copilot Chat since
    2026), earlier the same."""
    return (as_str(call_id) or "").partition("__vscode-")[0]


def _invocation_of(invocations: list[dict[str, Any]], name: str, call_id: str,
                   round_ids: set[str]) -> dict[str, Any] | None:
    """The invocation the chat showed of a round's call, taken from ``invocations``: the one whose ``toolCallId`` is
    the call's id without its ``__vscode-<n>``, which need not name the same tool (the round's ``file_search`` is the
    invocation's ``copilot_findFiles``); else the first not yet taken with its tool (an MCP tool's name is its
    ``toolId``) among those whose id is no round call's (earlier chats' ids differ), so that a call the chat never
    showed does not take a later call's."""
    own_id = _own_id(call_id)
    taken = next((i for i in invocations if own_id and i.get("toolCallId") == own_id), None) or next(
        (i for i in invocations if i.get("toolId") == name and i.get("toolCallId") not in round_ids), None)
    if taken is not None:
        invocations.remove(taken)
    return taken


def _invocation_step(invocation: dict[str, Any], said: list[str], at: Any,
                     subagent: str | None = None) -> dict[str, Any]:
    """A call as the chat showed it (``toolInvocationSerialized``), ``said`` before it its thought; a subagent's
    call marked with the name of the call that ran the subagent (``arguments.subagent``, as copilot-cli marks its)."""
    arguments = _invocation_arguments(invocation)
    return _step(as_str(invocation.get("toolId")) or "tool", subagent_marked(arguments, subagent) if subagent
                 else arguments, join_thought(said), _output(invocation), invocation, at)


def _step(action: str, arguments: Any, thought: str | None, output: str | None, invocation: dict[str, Any] | None,
          at: Any) -> dict[str, Any]:
    return {"thought": thought.strip() if thought and thought.strip() else None, "action": action,
            "arguments": arguments, "observation": output, "error": _invocation_error(as_dict(invocation), output),
            "started_at": at}


def _invocation_error(invocation: dict[str, Any], output: str | None) -> str | None:
    """Why a call failed, as its invocation says: the user denied it (``isConfirmed`` false, or ``{type: 0}``,
    VS Code's ``ToolConfirmKind.Denied``) or skipped it (``{type: 5}``, ``Skipped``): not run; an MCP tool answered
    ``resultDetails.isError`` (the decisive line of its output); a terminal command exited non-zero
    (``terminalCommandState.exitCode``)."""
    confirmed = invocation.get("isConfirmed")
    kind = as_dict(confirmed).get("type")
    if confirmed is False or kind in (0, 5):
        return not_run(f"the user {'skipped' if kind == 5 else 'denied'} the tool call")
    if as_dict(invocation.get("resultDetails")).get("isError") is True:
        return error_line(output, "the tool reported an error")
    terminal = _terminal(invocation)
    code = as_int(as_dict(terminal.get("terminalCommandState")).get("exitCode"))
    return exit_code_error(output, code, _command(terminal)) if terminal and code else None


def _terminal(invocation: dict[str, Any]) -> dict[str, Any]:
    """A terminal call's ``toolSpecificData`` (``{kind: "terminal", commandLine, terminalCommandOutput,
    terminalCommandState}``, VS Code's ``IChatTerminalToolInvocationData``), else {}."""
    data = as_dict(invocation.get("toolSpecificData"))
    return data if data.get("kind") == "terminal" else {}


def _command(terminal: dict[str, Any]) -> str | None:
    """The command a terminal call ran: the user's edit of it, else the tool's, else the model's (VS Code runs
    them in that order of preference); an older chat's ``command``."""
    line = as_dict(terminal.get("commandLine"))
    return next((c for key in ("userEdited", "toolEdited", "original") if (c := as_str(line.get(key)))),
                as_str(terminal.get("command")))


def _answer(thought: list[str], text: str, at: Any) -> dict[str, Any]:
    return {"thought": join_thought(thought), "action": RESPOND, "arguments": {"content": text.strip()},
            "started_at": at}


def _edit_step(group: dict[str, Any], said: list[str] | None, at: Any) -> dict[str, Any] | None:
    """An edit the chat made with no call (``textEditGroup``: the file's ``uri``, ``edits`` as lists of ``{text,
    range}``) as an ``edit`` step: the file and the texts it put in; None if it names neither. An edit a call made
    is that call's step, so only the edits of a response with no call are read."""
    uri = group.get("uri")
    path = as_str(uri) or as_str(as_dict(uri).get("fsPath")) or as_str(as_dict(uri).get("path"))
    texts = [t for edits in as_list(group.get("edits")) for edit in as_list(edits)
             if (t := as_str(as_dict(edit).get("text")))]
    if not path and not texts:
        return None
    return _step("edit", {"path": path, "text": "\n".join(texts)}, join_thought(said or []), None, None, at)


def _invocation_arguments(invocation: dict[str, Any]) -> Any:
    """What a call was given: the tool's raw input, a terminal call's command, a subagent's name, description and
    prompt (``toolSpecificData`` of kind ``subagent``), else the MCP call's input (JSON text), else what the chat
    said it did (``invocationMessage``, which shortens a command)."""
    data = as_dict(invocation.get("toolSpecificData"))
    if data.get("rawInput") is not None:
        return data["rawInput"]
    if command := _command(_terminal(invocation)):
        return {"command": command}
    if data.get("kind") == "subagent":
        return {k: v for k in ("agentName", "description", "prompt") if (v := as_str(data.get(k)))}
    given = as_dict(invocation.get("resultDetails")).get("input")
    if isinstance(given, str):
        return json_arguments(given, key="input")
    return {"message": _text(invocation.get("invocationMessage"))}


def _output(invocation: dict[str, Any] | None) -> str | None:
    """An invocation's output as the chat kept it: an MCP call's ``resultDetails.output`` parts, a terminal
    command's output (``terminalCommandOutput.text``), a subagent's answer (``toolSpecificData.result``), else the
    built-in tool's result URIs."""
    data = as_dict(as_dict(invocation).get("toolSpecificData"))
    if text := as_str(as_dict(_terminal(as_dict(invocation)).get("terminalCommandOutput")).get("text")):
        return text
    if data.get("kind") == "subagent" and (answer := as_str(data.get("result"))):
        return answer
    details = as_dict(invocation).get("resultDetails")
    if isinstance(details, dict):
        return _text(details.get("output"))
    uris = [as_str(as_dict(u).get("external")) or as_str(as_dict(u).get("path")) for u in as_list(details)]
    return "\n".join(u for u in uris if u) or None


def _text(value: Any) -> str | None:
    """Text of a chat value: a string, a markdown string ``{value}``, a list of parts (``{value}`` each), or a
    built-in tool's result as prompt-tsx rendered it for the model (``{node: ...}``: see :func:`_rendered`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if "value" not in value and isinstance(value.get("node"), dict):
            return _rendered(value["node"]).lstrip("\n") or None
        return _text(value.get("value"))
    if isinstance(value, list):
        parts = [t for v in value if (t := _text(v)) is not None]
        return "\n".join(parts) if parts else None
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _rendered(node: dict[str, Any]) -> str:
    """The text a prompt-tsx element tree renders to (a built-in tool's result in ``toolCallResults``: ``{type: 1,
    children}`` elements, ``{type: 2, text, lineBreakBefore}`` leaves): its leaves' texts depth first, a line break
    before those that ask for one. An MCP tool's result is plain ``{value}`` text instead."""
    text = as_str(node.get("text"))
    if text is not None:
        return ("\n" if node.get("lineBreakBefore") is True else "") + text
    return "".join(_rendered(child) for child in as_list(node.get("children")) if isinstance(child, dict))
