"""``atif``: Agent Trajectory Interchange Format (Harbor's ``trajectory.json``, ATIF-v1.0 ... v1.8).

One file is one trajectory; several files may share a ``session_id`` (the
RFC scopes it to the *run*: Terminus-2 writes ``trajectory.json``, its
``trajectory.cont-N.json`` continuations and its
``trajectory.summarization-N-{summary,questions,answers}.json`` subagents in
one directory under one session). An ATIF-v1.7 file may embed subagent
trajectories (``subagent_trajectories``): ``split`` yields each as a run of
its own after the root. A file may also hold several trajectories, one per
JSONL line (HarnessHop's export of several rollouts; a dataset of runs) or as
a JSON array: each is read as a file of its own would be (``line N`` of a JSONL
file, ``record N`` of an array).

Mapping
- trajectory_id = ``atif.<trajectory_id or session_id>.<where>`` where
  ``<where>`` is the file's last two directories and its stem
  (``hello-world__Ab3xQ/agent/trajectory``; a multi-step trial's step adds the
  trial: ``<trial>/<step>/agent/trajectory``), so files sharing a session stay
  distinct runs and a re-ingest of the same file gives the same id (the reader
  resolves the path first, however it was written); an
  embedded subagent adds ``.sub.<its trajectory_id>``.
- task: the first ``source: "user"`` step's message is the agent's rendered
  prompt. The instruction is cut out of it: by the saved
  ``agent.extra.agent_config.instance_template`` (Harbor's mini-swe-agent
  conversion), else by the delimiters of the known templates (Terminus'
  "Task Description:" ... "Current terminal state:", OpenHands'
  "NEW TASK DESCRIPTION" block after its in-context example, Terminus-2's
  hand-off "**Original Task:**", ``<pr_description>``, see ``_prompts``),
  else the whole message. Copied-context steps count here: a continuation's
  task is the one it continues.
- model_id = ``agent.model_name``, else ``agent.model``, passing over Claude
  Code's ``<synthetic>`` (no model: a message the CLI made up), else in a
  Harbor trial the model its config ran the agent with; but where
  ``agent.model_name`` is a subagent's (``extra.is_sidechain``) that no
  main-thread step names (Harbor's Claude Code conversion sets it from the
  first step, the warm-up of Claude Code's Haiku subagent), the
  ``model_name`` the main-thread agent steps give most; tool_versions = ``{agent.name: agent.version}``;
  created_at = the first step ``timestamp`` (the task's step included; not
  copied context).
- task_id / task_family, in a Harbor trial: its ``result.json``'s
  ``task_name`` and ``source`` where it names a dataset (a registry's or a
  package's; for a local task Harbor records only its folder's name, no
  family), so the trials of one task group together; elsewhere none.
- steps, in ``step_id`` order; system steps and steps flagged
  ``is_copied_context`` (context replayed from an earlier trajectory, already
  a step there) are dropped, and so are a subagent's turns that Harbor's
  Claude Code conversion interleaves (``extra.is_sidechain``: the subagent's
  report is its call's result) and user messages the CLI wrote itself
  (Codex's ``<environment_context>`` / AGENTS.md, Claude Code's command
  output and notifications, empty ones; but a background task's report, a
  ``<task-notification>`` of Claude Code or Qwen Code, joins the observation
  of the call its ``<tool-use-id>`` names, else of the call whose result
  launched its ``<task-id>``, as the Claude Code reader joins it, an error
  when it failed; ``_agent_cli.typed_prompt``, which
  also gives a ``<command-name>`` wrapper as ``/name args`` and a Codex IDE
  extension's prompt as the request after its ``# Context from my IDE
  setup:``, as the Codex reader does; Claude Code's "[Request interrupted by
  user]", which marks the run ``interrupted``; Codex's ``<turn_aborted>``
  marker, counted in ``turns_aborted`` as the Codex reader counts its
  ``turn_aborted`` events); the first user step left is
  the task (of Antigravity's, the request inside its ``<USER_REQUEST>`` tags). Where a converter marks Claude
  Code's own user messages
  (atif-make: ``extra.meta``, its ``isMeta``), the one after a slash command
  is the prompt it expanded to, read as the Claude Code reader reads it:
  ``/name args`` when it has arguments, else the expansion (the task, or that
  step's observation; a skill it only loads asks nothing); a bare command answered by
  ``<local-command-stderr>`` (its ``!`...``` pre-run failed) stays the task unless
  retyped (``_agent_cli.RefusedCommands``). Agent steps that
  Claude Code made up itself (``model_name: "<synthetic>"``: "Not logged in",
  "Prompt is too long", API errors; "No response requested.") are no steps
  either (``_agent_cli.synthetic_error``; see outcome), nor is a turn whose model call failed (pi-ai's
  ``stopReason: "error"``, as pi's and OpenClaw's conversions keep it: ``extra.stop_reason`` (Harbor's pi),
  ``extra.openclaw.stop_reason`` / ``error_message`` (openclaw-atif), the message ``(error) <errorMessage>``
  (Harbor's openclaw; its goose and trae-agent ones: ``[error] ...``, goose's only as the last agent step,
  trae-agent's only without ``metrics``); ``_stopped``): counted in ``api_errors`` as those are (a turn that said
  words before failing stays, a ``respond`` step with the failure as its error; ``aborted``, and openclaw's
  ``(error) Request was aborted``, marks the run ``interrupted``):
  * an agent step with ``tool_calls``: one step per call: action =
    ``function_name``, arguments = ``arguments``, observation = the
    ``observation.results[]`` entries whose ``source_call_id`` is the call's
    ``tool_call_id`` (results without a call id go to the first call);
    thought = ``reasoning_content`` then ``message`` (what the agent said with
    the calls), joined, on the first call; a converter's placeholder for no
    text (Harbor's ``(tool calls)``, ``(tool use)``, ``[tool call]``,
    ``[tool call: NAMES]``, ``[empty response]``) is no message.
  * an agent step without ``tool_calls`` whose message holds the agent's own
    action syntax: mini-swe-agent's fenced command (its ``action_regex``, else
    the stock fences) -> a ``bash`` step, Terminus' JSON / XML response (``commands[].keystrokes``
    -> ``bash_command`` steps, ``task_complete`` -> ``mark_task_complete``,
    as Harbor itself maps them) or OpenHands' ``<function=NAME>
    <parameter=K>V</parameter>`` text calls; a turn its agent rejected
    ("Previous response had parsing errors") is not parsed.
  * any other agent step: a ``respond`` step (arguments ``{"content":
    message}``) with any observation it carries; one with no message and no
    observation (reasoning only) is none: its reasoning is the next step's
    thought (at the end, the last action's).
  * a later user step: a step with no action and the message as observation.
  * a system step's results (RFC v1.2; an older NeMo-Relay put tool results
    there) go to the earlier calls their ``source_call_id`` names.
  Message and result content may be text or ContentPart lists (v1.6+: text
  parts joined, images named by path; a list of chat messages, as an older
  NeMo-Relay wrote, gives their contents). A message written as a chat-API
  object (NeMo-Relay's first exports: the request sent to the model, the
  assistant message it returned) gives its messages' contents, its content;
  such an assistant message's ``reasoning`` is the thought.
- Step.error: a result flagged as an error (``is_error``, its ``extra``'s
  ``*is_error``, a nested ``is_error`` or ``success: false`` (Copilot CLI), the
  step's ``extra`` ``*is_error`` /
  ``status: error``), a non-zero exit code as each agent prints it
  (``[Command finished with exit code N]`` (OpenHands), ``Exit code N`` /
  ``[exit_code] N`` (Claude Code), ``Exit code: N`` / ``Process exited with
  code N`` (Codex), ``Exit Code: N`` (Gemini CLI), ``Command exited with
  code N`` (pi), ``<exited with exit code N>`` (GitHub Copilot CLI), ``The command
  exited with code N.`` (Antigravity CLI; also its record's ``exit_code``, kept in the result's ``extra``), a JSON
  result's ``exit_code`` (strands' shell, hermes' ``terminal``) or ``exitCode``
  (Cursor CLI's ``{"failure": {...}}``; its ``error`` and ``rejected`` results
  are errors too)) or
  ``<returncode>N</returncode>`` (mini-swe-agent; 1 without output is "no
  match", not an error; its 2.x CLI's "action was not executed" placeholder
  on a submitting turn is none either: the call ran, and submitted), else (no exit code shown) an exception /
  ``Error:`` / ``ERROR`` line (not Gemini CLI's ``Error: (none)``) (Terminus: "Previous response had parsing
  errors"), or a last line only a failed command ends on, said behind a program's
  name (``cat: x: No such file or directory``, ``bash: foo: command not found``,
  ``python3: can't open file 'x': [Errno 2] ...``, ``FileNotFoundError: [Errno 2] ...``;
  not a log's or grep's line saying so: ``_common.ended_failing``); for a call whose command only prints a file
  or a log (``tail -n 20 worker.log``, Terminus' keystrokes too), only that program's or the shell's own
  complaint, not the logged traceback or ``ERROR`` line it printed (converters that drop
  the exit code: opencode's, openhands-sdk's): the decisive line; but first, for a converted Codex or Gemini CLI
  session (``agent.name`` ``codex`` / ``gemini-cli``), the CLI's own failure
  replies as its reader reads them (Codex's "unsupported call: ...",
  "apply_patch verification failed: ...", "aborted by user", ...; Gemini
  CLI's "Subagent '<name>' failed. Error: ..."): ``_cli_reply_error``.
- outcome: ATIF carries no verdict: ``unknown``, unless the root ``extra``
  holds one (``extra.outcome``, or ``extra.reward`` through the operator's
  success threshold), or the file sits in a Harbor trial directory
  (``<trial>/agent/``, or a multi-step trial's ``<trial>/steps/<step>/agent/``)
  whose ``result.json`` records the verifier's reward
  (``verifier_result.rewards.reward``; a step's own in ``step_results``) or
  the trial's exception (``exception_info``: ``infra_error``, the agent's own
  failure ``failure`` as Harbor's error policy groups them, its timeout, context
  overflow, non-zero exit...: ``_harbor_errors.agents_own``; the decisive line of its message; in a trial Harbor
  never finished, no ``result.json``, the exception its ``exception.txt``
  records: :func:`_exception_file`); else, with no
  trial verdict, a root ``extra.error`` (Harbor's strands converter: the exception
  the agent died of) fails it, an outage as ``infra_error``; else
  ``infra_error`` when the run ended on
  Claude Code's own error (a ``<synthetic>`` message with no model turn after
  it: metadata ``api_errors`` counts them), as the Claude Code reader reads the
  session (its "Prompt is too long" the agent's ``failure``: ``_agent_cli.ended_on_error``),
  or on a failed model call of pi / OpenClaw; a failed trial's failure names the tests the
  verifier says failed (its CTRF report ``verifier/ctrf.json``, else
  pytest's ``FAILED`` lines in ``verifier/test-stdout.txt``), else the
  decisive line of that output. A trial with
  both (Harbor grades what an agent that crashed or timed out left) keeps its
  reward and, short of a success, the exception as its failure; metadata
  ``trial_exception`` names its type. But where Harbor's error policy counts
  that reward invalid (the model provider's or the sandbox's failure:
  ``ApiRateLimitError``, ``ApiOverloadedError``, ...; as the file records
  that verdict, ``exception_info.policy`` / ``reward_valid``, else by a copy
  of Harbor 0.26's table; ``_harbor_errors``), the trial is an
  ``infra_error`` short of a success (metadata ``trial_reward_valid: false``).
  So is a converted mini-swe-agent run whose raw trajectory beside it (``agent/mini-swe-agent.trajectory.json``)
  exited on the harness's or the model API's exception, which Harbor never saw (1.x exits 0) or saw only as the
  agent's exit code (2.x re-raises it), unless it ended at the new-limits prompt (up to 2.3.0, its own limit:
  ``mini_swe_agent.limit_before_prompt_exit``): ``_agent_exit``, its error the raw file's text of the exception
  (2.x keeps it in the ``exit`` message), else Harbor's; metadata ``agent_exit_status``, recorded under a passing
  verdict too.
- beside it, in a Harbor job directory (``side_path``): the agent's raw
  session that Harbor converted (Codex's ``agent/sessions/**/rollout-*.jsonl``,
  Claude Code's ``agent/sessions/projects/**.jsonl``, OpenHands' saved
  ``agent/openhands.trajectory.json`` and its conversation folder
  ``agent/sessions/<id>/``, Qwen Code's ``agent/qwen-sessions/**``, ...: a
  file, or a run folder the reader reads as one), and any file there of no format (the agent's own: strands'
  ``strands-events.jsonl``, hermes' ``hermes-session.jsonl``, Kimi's
  ``kimi/share/**``, ...) is passed over when the trial has its ATIF ``agent/trajectory.json``
  naming the task, the trial's one run (else it is read); so are
  Harbor's own ``config.json``, ``result.json``, ``result.harbor.json``,
  ``lock.json`` and what the verifier wrote (``verifier/reward.json``, ...).
  So in a trial Harbor never finished (its job stopped: no ``result.json``, its ``config.json``
  naming the folder), whose run is read with outcome ``unknown``.
  But where the conversion holds no task (Harbor's SWE-agent converter keeps
  only the system prompt and the agent's turns) and the raw session is there
  (``agent/swe-agent-output/**/*.traj``), the conversion is passed over and
  the raw session is the trial's run, read with the trial's verdict
  (:func:`trial_verdict`). Harbor's kimi-cli and trae-agent converters drop the prompt too:
  the task is kimi-cli's ``TurnBegin`` of the wire log it converted
  (``agent/kimi-cli.txt``), trae-agent's ``task`` of its trajectory file
  (``agent/trae-trajectory.json``).
- not a run: a row of Harbor's traces export (``harbor traces export``: an
  episode as a chat transcript rebuilt from a trial's ATIF) is named as such,
  and the job directory it came from pointed at (``not_a_run``).
- metadata: ``schema_version``, agent name, session id, ``final_metrics``
  totals, continuation / subagent links, notes, ``api_errors``, ``interrupted``,
  ``turns_aborted``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from trajsearch.actions import TASK_COMPLETE, not_run
from trajsearch.first_few import first_few
from trajsearch.model import Failure, Outcome, Trajectory

from . import _prompts
from ._agent_cli import (
    API_ERROR_CAUSE, CLAUDE_INTERRUPT, LOCAL_OUTPUT, SYNTHETIC_MODEL, add_report, background_task, command_instruction,
    command_line, ended_on_error, join_thought, loads_skill, printing_program, retypes, slash_command, synthetic_error,
    task_notifications, typed_prompt, user_words, utc_time,
)
from ._common import (
    Context, RecordError, as_dict, as_list, build, clip_step_text, clip_task, decisive_line, ended_failing, file_stem,
    item_positions, json_dict, json_object, list_field, loads, named_path, outcome_of_reward, PassedOver, safe_id,
    short, with_former_id,
)
from ._harbor_errors import agents_own, reward_void
from ._mini_swe_agent.commands import DEFAULT_ACTION_REGEXES, NOT_EXECUTED, SUBMIT, text_action
from . import codex_cli, cursor_cli, gemini_cli, mini_swe_agent
from ._spans.outcome import error_outcome

NAME = "atif"
#: A file is one run: the reader hands over its whole JSON document.
WHOLE_FILE = True
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'"schema_version"\s*:\s*"ATIF', re.I)
_ERRORISH = re.compile(r"^(?:[A-Za-z_][\w.]*(?:Error|Exception)\b:|Error:|ERROR\b|Traceback)", re.M)
#: The exit code as each converted agent prints it: OpenHands' ``[Command finished with exit code N]``,
#: Claude Code's ``Exit code N`` (Harbor adds ``[exit_code] N``), Codex's ``Exit code: N`` / ``Process exited
#: with code N``, Gemini CLI's ``Exit Code: N``, GitHub Copilot CLI's ``<exited with exit code N>`` (its bash
#: tool's last line, ``<shellId: ID completed with exit code N>`` for a shell it ran detached; the call itself is
#: recorded a success whatever the command did), Antigravity's tab-indented ``The command exited with code N.`` under
#: its ``Created At:`` / ``Completed At:`` lines (its step status is ``DONE`` whatever the command did).
_EXIT_CODE = re.compile(r"\[(?:Command finished|The command completed) with exit code (-?\d+)\.?\]|"
                        r"^(?:Exit [Cc]ode:?|\[exit_code\]|(?:Process|Command) exited with code) *(-?\d+)\s*$|"
                        r"^<(?:exited|shellId: \S+ completed) with exit code (-?\d+)>\s*$|"
                        r"^[ \t]*The command exited with code (-?\d+)\.[ \t]*$", re.M)
#: Lines a result holds that say nothing failed (Gemini CLI's ``Error: (none)``), or only that something did
#: (Harbor's ``[error] tool reported failure`` under a flagged Claude Code result).
_NOT_THE_ERROR = re.compile(r"^(?:[A-Z][\w ]*: \((?:none|empty)\)|\[error\] tool reported failure)\s*$", re.M)
#: Antigravity's ``Created At: ...`` / ``Completed At: ...`` lines heading a step's result: no words of the tool's.
_TIMES = re.compile(r"^(?:Created|Completed) At: \S+[ \t]*\n?", re.M)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")  # mini-swe-agent's observation (Harbor converts it)
_REJECTED = re.compile(r"^\s*Previous response had parsing errors", re.I)
#: What Harbor's converters write as an agent turn's message when the model said nothing (ATIF asks for one): strands'
#: ``(tool calls)``, kimi-cli's and mimo's ``(tool use)``, hermes' and goose's ``[tool call]``, goose's
#: ``[tool call: NAME]``, trae's ``[tool call: NAMES]`` / ``[empty response]``, openclaw's ``(no assistant text)`` /
#: ``(no assistant text in JSON output)``. No words of the agent: no thought.
_PLACEHOLDER = re.compile(r"\((?:tool calls|tool use|no assistant text(?: in JSON output)?)\)|"
                          r"\[(?:tool call(?:: [^\]\n]*)?|empty response)\]")
#: The agent message Harbor's conversions write for the run's own failure, by ``agent.name``: openclaw's for an
#: assistant message that is only the model call's failure (pi-ai's ``stopReason: "error"``, its ``errorMessage``):
#: ``(error) 529 {...}``; goose's for its stream's ``{"type": "error", "error": ...}`` event (the reply stream
#: failed: the provider's error); trae-agent's for a step that failed with no model call recorded. goose's and
#: trae-agent's look like an answer that quotes a log line: see :func:`_run_error`.
_RUN_ERROR = {"openclaw": re.compile(r"^\(error\) (.+)", re.S), "goose": re.compile(r"^\[error\] (.+)", re.S),
              "trae-agent": re.compile(r"^\[error\] (.+)", re.S)}
#: pi-ai's ``errorMessage`` of a turn it aborted (``stopReason: "aborted"``, which Harbor's openclaw conversion drops,
#: writing ``(error) <errorMessage>`` as for a failed call): its own "Request was aborted", fetch's AbortError "This
#: operation was aborted", a bridge's "Operation aborted". The run was stopped, no model call failed.
_ABORTED = re.compile(r"(?:Request was|This operation was|Operation) aborted\b", re.I)
_OH_CALL = re.compile(r"<function=([\w.-]+)>(.*?)</function>", re.S)
_OH_PARAM = re.compile(r"<parameter=([\w.-]+)>(.*?)</parameter>", re.S)
_XML_KEYS = re.compile(r"<keystrokes(?:\s+duration=\"([\d.]+)\")?\s*>(.*?)</keystrokes>", re.S)
_XML_DONE = re.compile(r"<task_complete>\s*true\s*</task_complete>", re.I)
#: The marker Codex writes into the history as a user message when the user interrupts a turn (beside its
#: ``turn_aborted`` event, which the Codex reader counts and Harbor's conversion drops).
_CODEX_ABORTED = re.compile(r"^\s*<turn_aborted>")


def matches(record: Any) -> bool:
    if not isinstance(record, dict):
        return False
    if str(record.get("schema_version", "")).upper().startswith("ATIF"):
        return True
    return (("session_id" in record or "trajectory_id" in record) and isinstance(record.get("steps"), list)
            and isinstance(record.get("agent"), dict) and "name" in record["agent"])


def split(document: Any) -> Iterator[tuple[str, Any]]:
    """The file's trajectory, then each embedded subagent trajectory (ATIF-v1.7) as a run of its own; in a file of
    several trajectories (JSONL lines, an array), each in turn, with its subagents, at its own ``line N`` (as the
    reader names the line it could not parse; ``sources.Values``), an array's at ``record N``."""
    if isinstance(document, list) and any(_is_trajectory(item) for item in document):
        positions = item_positions(document)
        for position, item in zip(positions, document):
            yield from _with_subagents(item, position)
    else:
        yield from _with_subagents(document, "file")


def _is_trajectory(item: Any) -> bool:
    """An ATIF document with its steps (not a header line of a stream that writes its steps on lines of their own:
    OpenAgents' ``{"record": "session", "schema_version": "ATIF-v1.7"}``)."""
    return matches(item) and isinstance(item.get("steps"), list)


def _with_subagents(document: Any, position: str) -> Iterator[tuple[str, Any]]:
    """One trajectory at ``position``, then its embedded subagent trajectories."""
    yield position, document
    if not isinstance(document, dict):
        return
    prefix = "" if position == "file" else f"{position} "
    stack = [((), document)]
    while stack:
        path, parent = stack.pop(0)
        for n, sub in enumerate(as_list(parent.get("subagent_trajectories")), 1):
            if isinstance(sub, dict):
                where = (*path, str(sub.get("trajectory_id") or n))
                yield (f"{prefix}subagent {'/'.join(where)}",
                       {"atif_subagent": sub, "root": document, "path": list(where)})
                stack.append((where, sub))


# -- text ----------------------------------------------------------------------------------


def _text(value: Any) -> str:
    """A message / result content: a string, or ContentPart list (text joined, media named by path)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        out = []
        for part in value:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif isinstance(part.get("source"), dict):
                    out.append(f"[{part.get('type') or 'media'}: {part['source'].get('path')}]")
                elif "content" in part:  # a chat message (NeMo-Relay before ATIF-v1.7 wrote {role, content})
                    out.append(_text(part["content"]))
        return "\n".join(out)
    return "" if value is None else json.dumps(value)


def _chat(message: Any) -> Any:
    """A step message written as a chat-API object (off-spec: ATIF asks for text or ContentParts, but the first
    NeMo-Relay exports did it): a request ``{"messages": [...], "model", "tools", ...}`` gives its messages, an
    assistant message ``{"role", "content", "reasoning", "tool_calls"}`` its content; anything else is itself."""
    if isinstance(message, dict) and isinstance(message.get("messages"), list):
        return message["messages"]
    if isinstance(message, dict) and "role" in message:
        return message.get("content")
    return message


def _call(call: dict[str, Any]) -> dict[str, Any]:
    """A tool call as the spec names its fields, also where a producer wrote the chat API's ``name`` and ``id``
    (OpenAgents' own "ATIF v1.4" export of Claude Code runs): else every call is an anonymous "tool"."""
    return {**call, "function_name": call.get("function_name") or call.get("name"),
            "tool_call_id": call.get("tool_call_id") or call.get("id")}


def _reasoning(raw: dict[str, Any]) -> str | None:
    """The step's ``reasoning_content``, else the reasoning a chat-message ``message`` carries (NeMo-Relay)."""
    message = raw.get("message") if isinstance(raw.get("message"), dict) else {}
    found = raw.get("reasoning_content") or message.get("reasoning_content") or message.get("reasoning")
    return found if isinstance(found, str) else None


def _flagged(raw: dict[str, Any], result: dict[str, Any]) -> bool:
    """Whether the producer marked this result (or its step) as failed (Harbor's Claude Code conversion:
    ``extra.tool_result_is_error``, ``extra.tool_result_metadata.is_error``; its Copilot CLI conversion keeps the
    CLI's ``success: false`` of a tool that failed, its ``error`` message as the result; its Antigravity and opencode
    conversions keep the step's ``status`` / ``error``)."""
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    if result.get("is_error") is True or any(k.endswith("is_error") and v is True for k, v in extra.items()):
        return True
    if extra.get("success") is False or str(extra.get("status", "")).lower() in _FAILED_STATUS:
        return True  # Copilot CLI's ``success: false``; Antigravity's step record ``status: ERROR`` / ``FAILED``
    if isinstance(extra.get("error"), str) and extra["error"].strip() or extra.get("type") == "ERROR_MESSAGE":
        return True  # the call's error kept beside its text (opencode's tool ``error``; Antigravity's ``error`` and
        # its ``ERROR_MESSAGE`` step, which Harbor gives a pending call as its result: a refused, invalid call)
    if any(isinstance(v, dict) and v.get("is_error") is True for v in extra.values()):
        return True
    step_extra = raw.get("extra") if isinstance(raw.get("extra"), dict) else {}
    if any(k.endswith("is_error") and v is True for k, v in step_extra.items()):
        return True
    meta = step_extra.get("metadata") if isinstance(step_extra.get("metadata"), dict) else {}
    return meta.get("is_error") is True or str(step_extra.get("status", "")).lower() in _FAILED_STATUS


#: A ``status`` that says the call failed.
_FAILED_STATUS = frozenset({"error", "failed", "failure"})


#: Cursor CLI's tool result (``tool_call.<kind>ToolCall.result``, which Harbor's conversion writes as JSON): the
#: tool's own result under the one key that says how the call went.
_CURSOR_OUTCOMES = frozenset({"success", "failure", "error", "rejected"})
_CURSOR_FAILED = re.compile(r'\s*\{\s*"(?:failure|error|rejected)"\s*:\s*\{')


def _json_result(content: str) -> tuple[str | None, dict[str, Any]] | None:
    """(Cursor's outcome key, the object under it) of a result written as Cursor's (:data:`_CURSOR_OUTCOMES`), (None,
    the object) of another written as one JSON object; None for any other text."""
    text = content.strip()
    value = json_dict(text) if text.startswith("{") and text.endswith("}") else None
    if value is None:
        return None
    outcome = next(iter(value)) if len(value) == 1 else None
    if outcome in _CURSOR_OUTCOMES and isinstance(value[outcome], dict):
        return outcome, value[outcome]
    return None, value


def _shell_result(content: str) -> tuple[int, str] | None:
    """(exit code, what the command printed) of a result written as a JSON object with an integer ``exit_code``:
    strands' vended shell (Harbor's ``sandbox_shell``: ``{"output", "error", "exit_code"}``, stdout and stderr) and
    hermes' ``terminal`` (``{"output", "exit_code", "error"}``) return every command so, failed or not; so does
    Cursor CLI's shell (``{"success"|"failure": {"exitCode", "stdout", "stderr", ...}}``)."""
    if '"exit_code"' not in content and '"exitCode"' not in content:
        return None
    _, value = _json_result(content) or (None, {})
    code = value.get("exit_code", value.get("exitCode"))
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    return code, "\n".join(v for k in ("output", "stdout", "error", "stderr") if isinstance(v := value.get(k), str))


def _refused(content: str) -> str | None:
    """The error of a Cursor CLI call that failed with no exit code to tell (:func:`_shell_result`): its ``error``
    (``{"error": "No shell found for id 45563"}``), a ``rejected`` command (not run: its ``reason``, as a headless
    run cannot ask for approval) or another ``failure``; None for any other result."""
    if not _CURSOR_FAILED.match(content):  # no JSON parse of every result that is an object
        return None
    outcome, value = _json_result(content) or (None, {})
    if outcome not in ("failure", "error", "rejected"):
        return None
    error = cursor_cli.outcome_error(outcome, value, None)  # Cursor's outcomes read in one place
    return short(error) if error else outcome


def _without_fields_line(content: str) -> str:
    """``content`` without the JSON object Harbor's Copilot CLI conversion appends as the last line of a result's
    text: the result's other fields (``detailedContent``: the bash output again), no words of the command's own. A
    command's own JSON output (``{"error": ...}``) is kept."""
    head, _, last = content.rstrip().rpartition("\n")
    if not head or not last.startswith('{"detailedContent"'):
        return content
    return head if json_dict(last) is not None else content


def _recorded_exit_code(result: dict[str, Any]) -> int | None:
    """The exit code a result records beside its text: Copilot CLI's ``shellExecution.exitCode`` (its bash and
    powershell tools since 1.0.7x, whose text may say none), Antigravity CLI's step record's ``exit_code`` /
    ``exitCode``, which Harbor keeps in the result's ``extra``."""
    extra = as_dict(result.get("extra"))
    for code in (as_dict(extra.get("shellExecution")).get("exitCode"), extra.get("exit_code"), extra.get("exitCode")):
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return None


def _result_error(content: str, flagged: bool, recorded: int | None = None, printer: str | None = None) -> str | None:
    """The error a result shows (see the module's Step.error); ``recorded``, an exit code kept beside its text
    (:func:`_recorded_exit_code`), stands where the text shows none. ``printer``: the program of a call's command
    that only prints a file or a log (``tail -n 20 worker.log``: :func:`_printer`): with no exit code shown, its
    output is the file's text, whose logged traceback or ``ERROR`` lines are no failure of the call; only that
    program's or the shell's own complaint is (``_common.ended_failing``)."""
    if (shell := _shell_result(content or "")) is not None and shell[0]:
        number, printed = shell
        line = decisive_line(printed)
        if line is None and number == 1:  # grep / test / diff saying "no"
            return None
        return f"{line} (exit code {number})" if line else f"exit code {number}"
    if (refused := _refused(content or "")) is not None:
        return refused
    content = _NOT_THE_ERROR.sub("", _TIMES.sub("", content or ""))
    lines = content.splitlines()
    edges = "\n".join(lines[:6] + lines[-6:])  # where each agent prints its exit code (not inside a file's text)
    code = _EXIT_CODE.search(edges) or _RETURNCODE.search(content)
    number = int(next(g for g in code.groups() if g is not None)) if code else recorded or 0
    known = code is not None or recorded is not None
    if number:
        printed = _RETURNCODE.sub("", _EXIT_CODE.sub("", _without_fields_line(content)))
        line = decisive_line(printed.replace("<output>", "").replace("</output>", ""))
        if line is None and number == 1:  # grep / test / diff saying "no"
            return None
        return f"{line} (exit code {number})" if line else f"exit code {number}"
    said = [ln for ln in lines if ln.strip()]
    if not known and not flagged and (ended := ended_failing(content, printer)):  # its last words (``ended_failing``)
        return ended
    if flagged or (not known and printer is None and _ERRORISH.search(content)):
        lines = said
        match = next((ln for ln in reversed(lines) if _ERRORISH.search(ln)), lines[0] if lines else "tool error")
        return short(match.strip())
    return None


def result_error(content: str) -> str | None:
    """The error a tool result's text shows, read as this module reads an unflagged result (see Step.error in the
    module docstring): for another format that carries a Harbor trial's results as text only (its OTel export)."""
    return _result_error(content, False)


def fenced_command(message: str) -> tuple[str, str | None] | None:
    """(command, thought) of a mini-swe-agent turn that wrote its command in a fence (1.x, text-based: no tool
    calls), read with the stock fences (:func:`_written_actions`), for a format that keeps no ``agent_config``."""
    written = _written_actions(message, DEFAULT_ACTION_REGEXES)
    return (written[0][0][1]["command"], written[1]) if written and written[0][0][0] == "bash" else None


def is_placeholder(message: str) -> bool:
    """Whether an agent message is only a Harbor converter's placeholder for no text (:data:`_PLACEHOLDER`)."""
    return bool(_PLACEHOLDER.fullmatch(message.strip()))


# -- actions written in the message --------------------------------------------------------


def _terminus_json(message: str) -> dict[str, Any] | None:
    start, end = message.find("{"), message.rfind("}")
    if start < 0 or end <= start:
        return None
    value = json_dict(message[start : end + 1])
    return value if value is not None and isinstance(value.get("commands"), list) else None


def _text_calls(message: str) -> tuple[list[tuple[str, Any]], str | None] | None:
    """Actions an agent wrote as text (Terminus JSON/XML, OpenHands ``<function=...>``), and the thought."""
    response = _terminus_json(message)
    if response is not None:
        calls: list[tuple[str, Any]] = [
            ("bash_command", {"keystrokes": c.get("keystrokes"), "duration": c.get("duration")})
            for c in response["commands"] if isinstance(c, dict) and "keystrokes" in c
        ]
        if response.get("task_complete") is True:
            calls.append((TASK_COMPLETE, {}))
        thought = "\n".join(f"{k.title()}: {response[k]}" for k in ("analysis", "plan")
                            if isinstance(response.get(k), str) and response[k].strip())
        return (calls, thought or None) if calls else None
    if "<commands>" in message or "<response>" in message:
        calls = [("bash_command", {"keystrokes": k, "duration": float(d) if d else None})
                 for d, k in _XML_KEYS.findall(message)]
        if _XML_DONE.search(message):
            calls.append((TASK_COMPLETE, {}))
        parts = [f"{tag.title()}: {m.group(1).strip()}" for tag in ("analysis", "plan")
                 if (m := re.search(rf"<{tag}>(.*?)</{tag}>", message, re.S))]
        return (calls, "\n".join(parts) or None) if calls else None
    found = list(_OH_CALL.finditer(message))
    if found:
        calls = [(m.group(1), {k: v.strip("\n") for k, v in _OH_PARAM.findall(m.group(2))}) for m in found]
        thought = message[: found[0].start()].strip() or None
        return calls, thought
    return None


# -- one trajectory ------------------------------------------------------------------------


def _is_subagents(raw: dict[str, Any]) -> bool:
    """Whether a step is a subagent's turn that Harbor's Claude Code conversion interleaves (``extra.is_sidechain``)."""
    return isinstance(raw.get("extra"), dict) and raw["extra"].get("is_sidechain") is True


class _Walk:
    """What :func:`_steps` reads off a trajectory's steps: the task, the steps, and what the CLI said itself."""

    def __init__(self, agent: str | None = None) -> None:
        self.agent = agent  # ``agent.name``: whose own replies the results may be (``_cli_reply_error``)
        self.task: str | None = None
        self.task_is_command = False  # the task so far is a bare slash command, whose expansion may follow
        self.task_refused = False  # the task is a prompt command refused on stderr, a request unless retyped
        self.steps: list[dict[str, Any]] = []
        self.models: list[str] = []
        self.sidechain = 0
        self.command: str | None = None  # a slash command whose expansion may follow (and its step, if any)
        self.command_step: dict[str, Any] | None = None
        self.thought: list[str] = []  # reasoning of an agent turn that said nothing: the next step's thought
        self.by_call: dict[Any, dict[str, Any]] = {}  # tool_call_id -> its step
        self.background: dict[str, dict[str, Any]] = {}  # background task id -> the call that launched it
        self.api_errors = 0
        self.last_error: str | None = None  # a Claude Code error with no model turn after it
        self.interrupted = False
        self.turns_aborted = 0  # Codex's <turn_aborted> markers

    def add(self, step: dict[str, Any]) -> None:
        """A step, taking the reasoning left over from agent turns that said nothing as its thought."""
        if self.thought:
            step["thought"] = join_thought([*self.thought, step.get("thought") or ""])
            self.thought = []
        self.steps.append(step)

    def user(self, raw: dict[str, Any], message: str, at: datetime | None) -> None:
        """A user step: the task, a later prompt (a step with no action), a slash command's expansion (Claude Code,
        marked ``extra.meta`` as it marks its ``isMeta``: read as its reader reads it), or words the CLI wrote."""
        message = _user_request(message)
        body = user_words(message)
        if CLAUDE_INTERRUPT.match(body):
            self.interrupted = True
            return
        typed = typed_prompt(message) or ""  # context the CLI injected (Codex, Claude Code) is no prompt
        if not typed:
            self.turns_aborted += bool(_CODEX_ABORTED.match(body))
            self._reports(body)
            if output := LOCAL_OUTPUT.match(body):
                if output.group("stream") == "stderr" and self.task_is_command and self.task == self.command:
                    self.task_is_command, self.task_refused = False, True  # still the request (``RefusedCommands``)
                self.command = self.command_step = None  # a local command (/model, /clear): it expands to no prompt
            return
        command, self.command = self.command, slash_command(body)
        step, self.command_step = self.command_step, None
        retried = self.task_refused and retypes(typed, self.task or "")  # the refused task typed again: the retry
        self.task_refused = self.task_refused and not retried
        if command is not None and _is_meta(raw):
            self._expanded(command, typed, step)
        elif self.task is None or self.task_is_command and self.command is None or retried:
            self.task, self.task_is_command = typed, self.command is not None
        else:
            self.steps.append({"action": None, "observation": clip_step_text(typed), "started_at": at})
            self.command_step = self.steps[-1] if self.command is not None else None

    def call(self, step: dict[str, Any], call: dict[str, Any], results: list[dict[str, Any]]) -> None:
        """A tool call's step, kept by its id (and by the id of the background task its result says it launched)
        for the results and reports that come later."""
        if isinstance(call.get("tool_call_id"), (str, int)) and call["tool_call_id"]:
            self.by_call[call["tool_call_id"]] = step
        for result in results:
            detail = as_dict(as_dict(as_dict(result.get("extra")).get("tool_result_metadata")).get("tool_use_result"))
            if task := background_task(_text(result.get("content")), detail):
                self.background[task] = step

    def _reports(self, body: str) -> None:
        """A background task's report (``<task-notification>``, in a user message the CLI wrote: Claude Code's,
        Qwen Code's) joins the call that launched it, by its ``<tool-use-id>``, else its ``<task-id>`` (Claude
        Code 2.1.9 names only that), as the Claude Code reader joins it."""
        for note in task_notifications(body):
            step = self.by_call.get(note.get("tool-use-id", "")) or self.background.get(note.get("task-id", ""))
            if step is not None:
                add_report(step, note)
                step["observation"] = clip_step_text(step["observation"])

    def _expanded(self, command: str, expansion: str, step: dict[str, Any] | None) -> None:
        """The prompt a slash command expanded to: what the command asks (``command_instruction``), where the
        command stood; a skill it only loads asks nothing (the next prompt is the request)."""
        asked = None if loads_skill(command, expansion) else command_instruction(command, expansion)
        if step is not None:
            if asked:
                step["observation"] = clip_step_text(asked)
        elif self.task_is_command:
            self.task = asked or self.task
            self.task_is_command = asked is None

    def cli_error(self, message: str) -> None:
        """A message Claude Code made up itself (``<synthetic>``): no step, as its reader reads it; an error
        (``synthetic_error``) is counted, and is the run's when no model turn follows."""
        if (error := synthetic_error(message)) is not None:
            self.api_error(error)

    def api_error(self, error: str) -> None:
        """A model call that failed (Claude Code's own error message, pi's / OpenClaw's ``stopReason: "error"``):
        counted, and the run's error when no model turn follows."""
        self.api_errors += 1
        self.last_error = error


#: Antigravity's wrapper of what the user typed (its ``USER_INPUT`` step: ``<USER_REQUEST>...</USER_REQUEST>``, then
#: what the CLI adds: ``<USER_SETTINGS_CHANGE>``, ...), which Harbor's conversion keeps as the user step's message.
_USER_REQUEST = re.compile(r"^\s*<USER_REQUEST>\s*(.*?)\s*</USER_REQUEST>", re.S)


def _user_request(message: str) -> str:
    """The request a user message wraps in Antigravity's ``<USER_REQUEST>`` tags, else the message."""
    found = _USER_REQUEST.match(message)
    return found.group(1) if found else message


def _is_meta(raw: dict[str, Any]) -> bool:
    """Whether a converter marked a user step as Claude Code's own (atif-make keeps ``isMeta`` as ``extra.meta``)."""
    extra = as_dict(raw.get("extra"))
    return any(extra.get(k) is True for k in ("meta", "isMeta", "is_meta"))


def _steps(ordered: list[dict[str, Any]], fences: tuple[str, ...] = (), agent: str | None = None,
           logged: frozenset[str] | None = None) -> _Walk:
    """The task, the steps, the models named on agent steps, the subagent steps left out, Claude Code's own errors.

    ``fences`` are mini-swe-agent's action regexes when the trajectory is one of its runs: Harbor keeps
    its text-based turns as messages, the command in a fence. ``agent`` is ``agent.name`` (see ``_cli_reply_error``);
    ``logged`` the error events of goose's log beside (:func:`_run_error`).
    """
    walk = _Walk(agent)
    last = next((r for r in reversed(ordered) if r.get("source") == "agent" and not _is_subagents(r)), None)
    for raw in ordered:
        source = raw.get("source")
        message = _text(_chat(raw.get("message")))
        at = utc_time(raw.get("timestamp"))
        if _is_subagents(raw):
            walk.sidechain += 1  # a subagent's turn (Harbor's Claude Code conversion): its report is its call's result
            continue
        if source == "user" and walk.task is None:
            walk.user(raw, message, at)
            continue
        if source == "system":
            _late_results(raw, walk.by_call, agent)
            continue
        if raw.get("is_copied_context") is True:
            continue
        if source == "user":
            walk.user(raw, message, at)
            continue
        calls = [_call(c) for c in as_list(raw.get("tool_calls")) if isinstance(c, dict)]
        message = "" if _PLACEHOLDER.fullmatch(message.strip()) else message
        if raw.get("model_name") == SYNTHETIC_MODEL and not calls:
            walk.cli_error(message)
            continue
        walk.last_error = None
        stopped = None if calls else _stopped(raw, message, agent, final=raw is last, logged=logged)
        if stopped is not None:
            failed, said = stopped
            if failed is None:  # aborted: the user stopped the turn
                walk.interrupted = True
            else:
                walk.api_error(failed)
            if not said.strip():
                continue  # no words, no call: the failed turn is no step (as Claude Code's own errors are none)
            walk.add({"thought": _reasoning(raw), "action": "respond", "arguments": {"content": said},
                      "observation": None, "error": failed, "started_at": at})
            walk.last_error = failed
            continue
        if raw.get("model_name"):
            walk.models.append(str(raw["model_name"]))
        observation = raw.get("observation") if isinstance(raw.get("observation"), dict) else {}
        results = [r for r in as_list(observation.get("results")) if isinstance(r, dict)]
        reasoning = _reasoning(raw)
        reasoning = None if reasoning == message else reasoning  # the message repeated (Harbor's mini-swe-agent)
        submitting = bool(fences) and _submits(calls, message)
        if calls:
            unmatched = [r for r in results if not r.get("source_call_id")]
            # the call that submits ran (its placeholder is no failure); a later one of its turn never did
            submitter = next((n for n, call in enumerate(calls) if SUBMIT.search(json.dumps(call.get("arguments")))),
                             0) if submitting else None
            for n, call in enumerate(calls):
                mine = [r for r in results if r.get("source_call_id") == call.get("tool_call_id")]
                if n == 0:
                    mine += unmatched
                content, error = _observed(raw, mine, agent, call.get("arguments"))
                if submitting and NOT_EXECUTED in (content or ""):
                    error = None if n == submitter else not_run(NOT_EXECUTED)
                name, arguments = str(call.get("function_name") or "tool")[:200], call.get("arguments")
                if agent == "cursor-cli":  # Harbor keeps Cursor's call key and ``args``: named as its stream reads
                    name, arguments = cursor_cli.tool_name(name, arguments)
                filler = message.strip() in _executed(name, call.get("tool_call_id"))  # Harbor's placeholder
                walk.add({
                    "thought": join_thought([reasoning, "" if filler else message]) if n == 0 else None,
                    "action": name,
                    "arguments": arguments,
                    "observation": clip_step_text(content),
                    "error": error,
                    "started_at": at,
                })
                walk.call(walk.steps[-1], call, mine)
            continue
        content, error = _observed(raw, results, agent)
        error = None if submitting and NOT_EXECUTED in (content or "") else error
        written = None if (content and _REJECTED.search(content)) else _written_actions(message, fences)
        if written:
            actions, thought = written
            for n, (name, arguments) in enumerate(actions):
                walk.add({"thought": join_thought([reasoning, thought]) if n == 0 else None, "action": name,
                          "arguments": arguments, "observation": clip_step_text(content) if n == 0 else None,
                          "error": error if n == 0 else None, "started_at": at})
            continue
        if not message.strip() and not content and not error:  # a turn that said nothing (reasoning only): no answer
            walk.thought += [reasoning] if reasoning else []
            continue
        walk.add({"thought": reasoning, "action": "respond", "arguments": {"content": message},
                  "observation": clip_step_text(content), "error": error, "started_at": at})
    last = next((s for s in reversed(walk.steps) if s.get("action")), None)
    if walk.thought and last is not None:  # reasoning the run ended on: no step follows, the last action takes it
        last["thought"] = join_thought([last.get("thought") or "", *walk.thought])
    for index, step in enumerate(walk.steps):
        step["index"] = index
        if isinstance(step.get("thought"), str):
            step["thought"] = clip_step_text(step["thought"])
    return walk


def _submits(calls: list[dict[str, Any]], message: str) -> bool:
    """Whether a mini-swe-agent turn submits: one of its calls, or the command in its message, echoes the word."""
    return any(SUBMIT.search(json.dumps(c.get("arguments"))) for c in calls) or bool(SUBMIT.search(message))


def _executed(name: str, call_id: Any) -> tuple[str, ...]:
    """The messages Harbor's converters write for a tool call's step when the agent said nothing with it: ``Executed
    NAME ID``, Copilot CLI's and Cortex Code's ``Executed NAME``, Cortex Code's ``Executed NAME (no result)`` (a call
    the run never answered). No words of the agent: no thought."""
    return f"Executed {name} {call_id}", f"Executed {name}", f"Executed {name} (no result)"


def _stopped(raw: dict[str, Any], message: str, agent: str | None, *, final: bool,
             logged: frozenset[str] | None = None) -> tuple[str | None, str] | None:
    """(the failure, the words said) of an agent turn whose model call failed, ``(None, words)`` of one the user
    aborted; None for any other. pi-ai (pi, OpenClaw) ends such a turn with ``stopReason`` ``error`` (its
    ``errorMessage``) or ``aborted``: Harbor's pi conversion keeps it as the step's ``extra.stop_reason`` (not the
    message), OpenClaw's own exporter (openclaw-atif) as ``extra.openclaw.stop_reason`` / ``error_message``, and
    Harbor's openclaw conversion writes a failed turn that said nothing as the message ``(error) <errorMessage>``;
    its goose and trae-agent conversions write the run's failure as a ``[error] ...`` message (:data:`_RUN_ERROR`;
    :func:`_run_error`). ``final``: the turn is the run's last agent step; ``logged``: see :func:`_run_error`."""
    if (marked := _run_error(raw, message, agent, final, logged)) is not None:
        if agent == "openclaw" and _ABORTED.match(marked):
            return None, ""  # pi-ai's aborted turn, which Harbor's conversion writes as an error
        return short(marked, 500, keep="head"), ""
    extra = as_dict(raw.get("extra"))
    found = next((d for d in (extra, *extra.values()) if isinstance(d, dict) and d.get("stop_reason")), {})
    reason = str(found.get("stop_reason") or "").lower()
    if reason == "aborted":
        return None, message
    if reason != "error":
        return None
    said = found.get("error_message")
    error = said.strip() if isinstance(said, str) and said.strip() else "the model call failed (stop reason: error)"
    return short(error, 500, keep="head"), message


def _run_error(raw: dict[str, Any], message: str, agent: str | None, final: bool,
               logged: frozenset[str] | None) -> str | None:
    """The failure a Harbor conversion wrote as the agent's message (:data:`_RUN_ERROR`), if this turn is one.
    goose's ``[error] ...`` is its stream's error event, which ends the run; an answer may say the same words
    (quoting a log line: ``[error] db: connection refused``). Where goose's log lies beside (``logged``: its error
    events' messages), the message is the run's error only if the log has that event; without it, only as the last
    agent step. trae-agent's is written only for a failed step with no model call recorded, without the
    ``metrics`` every model call's step carries."""
    if agent not in _RUN_ERROR or (agent == "trae-agent" and raw.get("metrics") is not None):
        return None
    if agent == "goose" and (not final if logged is None else message.strip() not in logged):
        return None
    marked = _RUN_ERROR[agent].match(message.strip())
    return marked.group(1).strip() if marked else None


def _goose_errors(source: Path) -> frozenset[str] | None:
    """The agent messages Harbor's goose conversion writes for the ``{"type": "error"}`` events of the trial's
    ``agent/goose.txt`` (``--output-format stream-json``) beside ``source``: ``[error] <error>``; None where there
    is no such log (or none in stream-json)."""
    try:
        lines = (source.parent / "goose.txt").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    events = []
    for line in lines:
        try:
            events.append(loads(line))
        except ValueError:
            continue
    events = [e for e in events if isinstance(e, dict) and isinstance(e.get("type"), str)]
    if not events:
        return None
    return frozenset(f"[error] {e.get('error', 'Unknown error')}".strip() for e in events if e["type"] == "error")


def _cli_reply_error(agent: str | None, content: str) -> str | None:
    """The failure a converted CLI reported as a tool's plain reply, read by that CLI's reader's own rules (Harbor
    keeps the reply's text as the result): Codex's (``agent.name`` ``codex``) "unsupported call: ...", "apply_patch
    verification failed: ...", "aborted by user", a unified-exec command that never ran, a code-mode script that
    failed (``codex_cli._output_error`` with no exit code known); Gemini CLI's "Subagent '<name>' failed. Error:
    ..." and a sub-agent that ended short of its goal, recorded as successes (``gemini_cli._subagent_error``), and
    a command its shell tool cancelled at its inactivity timeout (``gemini_cli.shell_timeout_error``)."""
    if not content:
        return None
    if agent == "codex":
        return codex_cli._output_error(content, None, None, None)
    if agent == "gemini-cli":
        return gemini_cli._subagent_error(None, content) or gemini_cli.shell_timeout_error(content)
    return None


def _printer(arguments: Any) -> str | None:
    """The program of a call's command when it only prints a file or a log (``_agent_cli.printing_program``): a shell
    tool's ``command`` (opencode's, openhands-sdk's ``bash``, ...) or Terminus' ``keystrokes``."""
    keys = arguments.get("keystrokes") if isinstance(arguments, dict) else None
    return printing_program(command_line(arguments) or (keys if isinstance(keys, str) else None))


def _observed(raw: dict[str, Any], results: list[dict[str, Any]], agent: str | None = None, arguments: Any = None
              ) -> tuple[str | None, str | None]:
    """The joined text of a call's results, and the first error they show: the converted CLI's own failure reply
    (``_cli_reply_error``), else what any result shows (``_result_error``), read knowing whether the call's
    ``arguments`` ran a command that only prints a file or a log (:func:`_printer`)."""
    texts = [_text(r.get("content")) for r in results]
    printer = _printer(arguments)
    errors = [e for r, t in zip(results, texts) if (e := _cli_reply_error(agent, t) or _result_error(
        t, _flagged(raw, r), _recorded_exit_code(r), printer))]
    return "\n".join(t for t in texts if t) or None, errors[0] if errors else None


def _late_results(raw: dict[str, Any], by_call: dict[Any, dict[str, Any]], agent: str | None = None) -> None:
    """Results a system step brings for earlier calls (RFC v1.2 lets system steps carry observations;
    NeMo-Relay put tool results there), given to the calls they name that have none yet."""
    observation = raw.get("observation") if isinstance(raw.get("observation"), dict) else {}
    for result in as_list(observation.get("results")):
        key = result.get("source_call_id") if isinstance(result, dict) else None
        step = by_call.get(key) if isinstance(key, (str, int)) else None
        if step is not None and step.get("observation") is None:
            content, error = _observed(raw, [result], agent, step.get("arguments"))
            step["observation"], step["error"] = clip_step_text(content), error


def _written_actions(message: str, fences: tuple[str, ...]) -> tuple[list[tuple[str, Any]], str | None] | None:
    """Actions an agent wrote in its message: mini-swe-agent's fenced command, or :func:`_text_calls`."""
    if fences:
        command, rest = text_action(message, fences)
        if command is not None:
            return [("bash", {"command": command})], re.sub(r"^\s*THOUGHT:\s*", "", rest).strip() or None
    return _text_calls(message)


@lru_cache(maxsize=64)
def _trial_json(path: str, mtime: float) -> dict[str, Any]:
    """A JSON object Harbor wrote in a trial (read once per trial, however many runs it holds)."""
    data = loads(Path(path).read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


def _json_beside(path: Path) -> dict[str, Any]:
    """A JSON object Harbor or its verifier wrote in a trial (:func:`_trial_json`); empty when it is missing or
    unreadable: such a file only adds to a run."""
    try:
        return _trial_json(str(path), path.stat().st_mtime)
    except (OSError, ValueError):
        return {}


def _trial_dir(source: Path) -> tuple[Path, str | None] | None:
    """(the Harbor trial directory, the step) of a trajectory written to ``<trial>/agent/`` or, in a multi-step
    trial (Harbor 0.25), ``<trial>/steps/<step>/agent/`` (:func:`_agent_trial`, which tells a raw session's place
    too: a trial not finished yet holds its steps as a finished one does); None elsewhere."""
    if source.parent.name != "agent":
        return None
    trial = _agent_trial(source.parent)
    if trial is not None and trial != source.parent.parent:
        return trial, source.parent.parent.name
    return source.parent.parent, None


#: Harbor's own files in a job directory (``Job``'s ``config.json``, ``result.json``, ``lock.json`` and the log it
#: writes there, ``job.log``) and a trial directory (``config.json``, ``lock.json``, ``result.json``, its copy
#: ``result.harbor.json``, and ``TrialPaths``' ``exception.txt`` and ``trial.log``: a folder of trials that never ran
#: had these called files of no dump format, beside the JSON files said to be the trial's own: round 24, NEWB; and
#: ``job.log`` still was a job's: round 25, FRCLI2).
_HARBOR_OWN = frozenset({"config.json", "config.harbor.json", "result.json", "result.harbor.json", "lock.json",
                         "exception.txt", "trial.log", "job.log"})


def _is_trial(folder: Path) -> bool:
    """A Harbor trial directory: its ``config.json`` beside the ``agent/`` or ``verifier/`` logs (a multi-step trial's
    under ``steps/<step>/``: ``MultiStepTrial`` moves them there after each step and removes the emptied ones), and its
    ``result.json``; or a ``config.json`` naming the folder its ``trial_name``: a trial Harbor began and never finished
    (its job stopped, or still running: ``Trial.run`` writes ``config.json`` first and ``result.json`` last), or one
    that ended before its agent ran (no ``agent/`` or ``verifier/``: :func:`_agent_never_ran`); or, copied without
    its ``config.json``, the logs beside a ``result.json`` that is Harbor's ``TrialResult`` (:data:`_TRIAL_RESULT`,
    whose ``config`` is what ``config.json`` held): a published copy of trials may leave it out, and then its
    ``result.json`` had been rejected as a file of no format and a headless run beside it not read."""
    logs = (folder / "agent").is_dir() or (folder / "verifier").is_dir() or (folder / "steps").is_dir()
    if not (folder / "config.json").is_file():
        return logs and _TRIAL_RESULT <= _json_beside(folder / "result.json").keys()
    if (folder / "result.json").is_file() and logs:
        return True
    return _json_beside(folder / "config.json").get("trial_name") == folder.name


#: What every Harbor version writes in a trial's ``result.json`` (``TrialResult``; 0.1 to 0.25 as the fixtures have
#: them), and no job's ``result.json`` (``JobResult``: :data:`_JOB_RESULT`).
_TRIAL_RESULT = frozenset({"trial_name", "task_name", "agent_info", "config"})


def _agent_never_ran(trial: Path) -> str | None:
    """Why a Harbor trial holds no run, when its ``result.json`` says it ended before its agent ran: the exception
    Harbor recorded with no agent set-up or execution after it (``Trial.run`` failed in ``_setup_environment``: a
    Docker build that could not pull its base image...). Harbor leaves such a trial out of its job's reward metric
    (``stats.evals.*.n_trials``, counted only under ``exception_stats``); no agent ran, so there is no task prompt,
    step or verdict on an agent to index."""
    result = _json_beside(trial / "result.json")
    exception = as_dict(result.get("exception_info"))
    if not exception or result.get("agent_execution") or result.get("agent_setup") or (trial / "agent").is_dir():
        return None
    kind = str(exception.get("exception_type") or "exception")
    said = decisive_line(str(exception.get("exception_message") or ""))
    return f"it ended on {kind} before its agent ran" + (f" ({short(said, 200)})" if said else "")


def _is_job(folder: Path) -> bool:
    """A Harbor job directory: its ``config.json`` and ``result.json`` above its trial directories, or a job's
    own files without them (:func:`_trialless_job`)."""
    if not ((folder / "result.json").is_file() and (folder / "config.json").is_file()):
        return False
    return _holds_trials(folder) or _trialless_job(folder) is not None


def _holds_trials(folder: Path) -> bool:
    """Whether a folder holds a Harbor trial directory (:func:`_is_trial`)."""
    try:
        return any(d.is_dir() and _is_trial(d) for d in folder.iterdir())
    except OSError:
        return False


#: What every Harbor version writes in a job's ``config.json`` (``JobConfig``: 0.1's ``orchestrator`` became
#: ``n_concurrent_trials`` by 0.16) and ``result.json`` (``JobResult``).
_JOB_CONFIG = frozenset({"job_name", "jobs_dir", "n_attempts", "agents"})
_JOB_RESULT = frozenset({"id", "started_at", "n_total_trials", "stats"})


def _trialless_job(folder: Path) -> int | None:
    """How many trials a Harbor job directory's ``result.json`` counts, when the job's own files say it is one
    (:data:`_JOB_CONFIG`, :data:`_JOB_RESULT`): the job files copied without the trial folders (or the trials
    deleted) are no run, and the folder to ingest is the one Harbor wrote, with them."""
    config, result = _json_beside(folder / "config.json"), _json_beside(folder / "result.json")
    if not (_JOB_CONFIG <= config.keys() and _JOB_RESULT <= result.keys()):
        return None
    return result["n_total_trials"] if isinstance(result["n_total_trials"], int) else 0


def _no_trials(job: Path) -> str:
    """What a Harbor job directory holding no trial directory is told (empty when it holds some)."""
    if _holds_trials(job):
        return ""
    counted = _trialless_job(job)
    if counted == 0:
        return ": its result.json counts no trial, so the job has no run"
    return (f": the folder holds no trial folder ({f'its result.json counts {counted}; ' if counted else ''}each a "
            "trial's agent/trajectory.json and result.json, which are the runs): ingest the job folder Harbor wrote, "
            "with its trial folders")


#: The columns of a row of Harbor's traces export (``harbor traces export``, ``harbor.utils.traces_utils``: a
#: Hugging Face dataset of chat transcripts, one row per episode, saved as JSON lines or pushed to the Hub).
_TRACES_ROW = frozenset({"conversations", "agent", "model", "episode", "run_id", "trial_name"})


def not_a_run(record: Any) -> str | None:
    """A row of a Harbor traces export is a transcript rebuilt from a trial's ATIF file for training: the calls and
    their results flattened into chat text, the verdict cut to a reward bucket or an exception's name, and with
    ``--episodes all`` (its default) every episode of a trial a row of its own repeating the ones before it."""
    if not (isinstance(record, dict) and _TRACES_ROW <= record.keys() and isinstance(record["conversations"], list)):
        return None
    trial = record.get("trial_name") if isinstance(record.get("trial_name"), str) else "its trial"
    return (f"this is a row of a Harbor traces export (`harbor traces export`: {record.get('episode')} of {trial} "
            "as a chat transcript, rebuilt from the trial's agent/trajectory.json with its verdict cut to a reward "
            "bucket, each episode a row repeating the ones before); ingest the Harbor job directory it was exported "
            "from instead: each trial's agent/trajectory.json is read as a run, with the verdict in its result.json")


def side_path(path: Path, fmt: str | None) -> str | None:
    """The adapter hook (see ``adapters/__init__``): what a file in a Harbor job is when it holds no run of its own.
    The agent's raw session (Codex's ``agent/sessions/**/rollout-*.jsonl``, ...) beside the ATIF
    ``agent/trajectory.json`` Harbor converted it to: the trial's run is that one, which has the trial's verdict;
    but a conversion that lost the task, when the raw session is there, is passed over for it; Harbor's own
    results, configuration and lock; the verifier's output."""
    if fmt == NAME:
        return _taskless_conversion(path)
    if (agent := _copied_session(path)) is not None:
        return _raw_session(path, agent)
    if fmt is not None:
        return _raw_session(path, fmt)
    if (kept := _raw_session(path, None)) is not None:
        return kept
    if path.name in _HARBOR_OWN and ((trial := _is_trial(path.parent)) or _is_job(path.parent)):
        never = _agent_never_ran(path.parent) if trial else None
        return f"Harbor's own {path.name} of {'trial' if trial else 'job'} {path.parent.name}, not a run" + (
            f": {never}, so the trial has no run" if never else "" if trial else _no_trials(path.parent))
    verifier = next((d for d in path.parents if d.name in ("verifier", "artifacts")), None)
    if verifier is not None and _agent_trial(verifier) is not None:
        return f"the {verifier.name} output of Harbor trial {trial_label(verifier.parent)}, not a run"
    command = path.parent
    if command.parent.name == "agent" and _COMMAND_LOG.fullmatch(command.name) \
            and (trial := _agent_trial(command.parent)) is not None:
        return f"Harbor's log of the {command.name} command it ran for the agent of trial {trial.name}"
    return None


def _agent_trial(agent: Path) -> Path | None:
    """The Harbor trial whose agent logs ``agent`` holds: ``<trial>/agent/``, or a multi-step trial's (Harbor 0.25)
    ``<trial>/steps/<step>/agent/``; so too for its ``verifier/`` and ``artifacts/``, which Harbor moves alike."""
    if agent.parent.parent.name == "steps" and _is_trial(agent.parents[2]):
        return agent.parents[2]
    return agent.parent if _is_trial(agent.parent) else None


#: The folders under a trial's ``agent/`` where Harbor's installed agents log each command they run (``setup``,
#: ``command-<i>``, ``command-<turn>-<i>``: ``command.txt``, ``return-code.txt``, ``stdout.txt``, ``stderr.txt``).
_COMMAND_LOG = re.compile(r"setup|command-\d+(?:-\d+)?")


#: Where Harbor's installed agents copy a raw session folder whose files are not all runs (a sub-agent's settings),
#: by the folder under the trial's ``agent/``, and whose sessions they are: every file there is named as that
#: agent's, whatever its own format (none for the settings): Qwen Code's (``QwenCode.run``: ``cp -r
#: ~/.qwen/projects/ /logs/agent/qwen-sessions/``, each project's ``chats/<id>.jsonl`` and
#: ``subagents/<id>/agent-*.jsonl`` / ``.meta.json``, which its ``populate_context_post_run`` converts).
_COPIED_SESSIONS = {"qwen-sessions": "Qwen Code"}


def _copied_session(path: Path) -> str | None:
    """Whose raw session ``path`` is, when it lies in a folder of :data:`_COPIED_SESSIONS` under an ``agent/``."""
    return next((_COPIED_SESSIONS[d.name] for d in path.parents
                 if d.name in _COPIED_SESSIONS and d.parent.name == "agent"), None)


def _raw_session(path: Path, fmt: str | None) -> str | None:
    """Why a file or run folder (OpenHands' ``sessions/<id>/``, which Harbor's ``OpenHands._get_session_dir`` converts)
    of another format under a Harbor trial's ``agent/`` is the raw session Harbor converted, if it is. A file of no
    format (``fmt`` None) there is one of the agent's own that Harbor's converter reads or the agent left (strands'
    ``strands-events.jsonl`` / ``strands-result.json``, hermes' ``hermes-session.jsonl``, Kimi's share folder, acp's,
    copilot's, deerflow's, trae's logs...): whatever its name, the trial's run is the ATIF beside it. The trial is
    known by its own files, or, copied without them, by the log the ATIF's agent is converted from
    (:data:`_RAW_SESSIONS`: Copilot CLI's headless output, a run of its own, had been a second run of one session)."""
    agent = next((d for d in path.parents if d.name == "agent"), None)
    converted = agent / "trajectory.json" if agent is not None else None
    if converted is not None and converted != path and (trial := _trial_dir(converted)) is not None \
            and (found := _atif_file(converted)) is not None and found.task \
            and ((trial[0] / "result.json").is_file() or _is_trial(trial[0])
                 or _converted_from(path, converted, found)):
        what = f"the agent's raw {fmt} session" if fmt else f"a file the {found.agent or 'Harbor'} agent left (no run)"
        return (f"{what} in Harbor trial {trial[0].name}, which Harbor converted to ATIF: "
                f"the trial's run is {converted}, read with the trial's verdict")
    return None


#: Where Harbor's installed agents leave the raw session they convert, by the ATIF ``agent.name``, for those whose
#: converter keeps no user message, so no task (Harbor's ``convert_swe_agent_to_atif`` writes the system prompt,
#: then only ``source: "agent"`` steps; ``SweAgent._find_trajectory_file`` globs ``swe-agent-output/**/*.traj``), and
#: for those whose log is a run of its own (Copilot CLI's headless output: ``CopilotCli`` tees ``copilot -p
#: --output-format json`` to ``agent/copilot-cli.jsonl``; Cursor CLI's stream: ``CursorCli`` tees ``cursor-agent -p
#: --output-format stream-json`` to ``agent/cursor-cli.txt``), so that one session is one run.
_RAW_SESSIONS = {"swe-agent": "swe-agent-output/**/*.traj", "copilot-cli": "copilot-cli.jsonl",
                 "cursor-cli": "cursor-cli.txt"}


def _converted_from(path: Path, converted: Path, found: _Converted) -> bool:
    """Whether ``path`` is the log Harbor converted to the ATIF ``converted`` (:data:`_RAW_SESSIONS`)."""
    pattern = _RAW_SESSIONS.get(found.agent or "")
    return pattern is not None and path in converted.parent.glob(pattern)


def _kimi_turn_begin(text: str) -> str | None:
    """The instruction in kimi-cli's wire stream: its first ``TurnBegin`` event's ``user_input`` (text, or Kimi's
    content parts)."""
    for line in text.splitlines():
        try:
            event = as_dict(as_dict(loads(line, strict=False)).get("params"))
        except ValueError:
            continue
        if event.get("type") == "TurnBegin":
            return _text(as_dict(event.get("payload")).get("user_input")).strip() or None
    return None


def _trae_task(text: str) -> str | None:
    """The instruction in trae-agent's ``--trajectory-file`` (``TrajectoryRecorder``: its top-level ``task``)."""
    try:
        task = as_dict(loads(text)).get("task")
    except ValueError:
        return None
    return task.strip() or None if isinstance(task, str) else None


#: The log Harbor converted, beside the ATIF, for an installed agent whose converter writes no user step, and how
#: the instruction is read from it: kimi-cli's wire stream (``KimiCli.run`` tees it to ``agent/kimi-cli.txt``;
#: ``_convert_events_to_trajectory`` turns its ``StepBegin`` / ``ContentPart`` / ``ToolCall`` / ``ToolResult`` events
#: into steps, never its ``TurnBegin``, whose ``user_input`` is the instruction Harbor prompted it with); trae-agent's
#: trajectory file (``agent/trae-trajectory.json``; ``_convert_trajectory_to_atif`` turns only its LLM interactions
#: into agent steps, never its ``task``): without it every trae-agent trial was rejected for having no task.
_TASK_LOGS = {"kimi-cli": ("kimi-cli.txt", _kimi_turn_begin), "trae-agent": ("trae-trajectory.json", _trae_task)}


def _task_beside(agent: Any, source: Path) -> str | None:
    """The task of a Harbor trial's ATIF whose converter kept no user step, from the log it converted
    (:data:`_TASK_LOGS`)."""
    found = _TASK_LOGS.get(agent) if isinstance(agent, str) and source.parent.name == "agent" else None
    if found is None:
        return None
    log, read = found
    try:
        return read((source.parent / log).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def _taskless_conversion(path: Path) -> str | None:
    """Why a Harbor trial's ``agent/trajectory.json`` is passed over: its converter dropped the task, and the raw
    session it converted lies beside it, which holds the task and is read as the trial's run instead."""
    if path.name != "trajectory.json" or path.parent.name != "agent":
        return None
    found = _atif_file(path)
    pattern = _RAW_SESSIONS.get(found.agent or "") if found is not None and not found.task else None
    raw = sorted(path.parent.glob(pattern)) if pattern else []
    if not raw:
        return None
    return (f"Harbor's ATIF conversion in trial {path.parent.parent.name} holds no task (Harbor's converter keeps no "
            f"user message): the trial's run is the raw session it converted, {raw[0]}, read with the trial's verdict")


class _Converted(NamedTuple):
    """What an ATIF file in a Harbor trial is: whether it names its task, and its ``agent.name``."""

    task: bool
    agent: str | None


def _atif_file(path: Path) -> _Converted | None:
    """What ``path`` holds, if it is an ATIF trajectory. A raw session beside it is passed over only when it names
    its task, so a trial whose conversion is missing, broken, of another format or without the task keeps its run."""
    try:
        return _holds_atif(path, path.stat().st_mtime_ns)
    except OSError:
        return None


@lru_cache(maxsize=64)
def _holds_atif(path: Path, version: int) -> _Converted | None:
    """:func:`_atif_file` of one version of a file (parsed once per trial, however many raw files lie beside it)."""
    try:
        document = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not matches(document):
        return None
    prompt = _steps(_ordered(as_list(document.get("steps")))).task
    name = as_dict(document.get("agent")).get("name")
    name = name if isinstance(name, str) else None
    return _Converted(bool(prompt and prompt.strip() or _task_beside(name, path)), name)


def _harbor_verdict(source: Path) -> dict[str, Any] | None:
    """The Harbor trial ``result.json`` of a trajectory in a trial directory, if there is one; for one step
    of a multi-step trial, that step's own result (``step_results[step]``) over the trial's, and none where the
    trial records none of the step (a trial not finished, a ``result.json`` cut or edited)."""
    found = _trial_dir(source)
    if found is None:
        return None
    data = _trial_file(source, "result.json") or _exception_file(found[0])
    if found[1] is not None:  # a step's run: never the trial's mean or final reward, which judges every step
        step = _step_record(data, source) or {}
        if not (step.get("verifier_result") or step.get("exception_info")):
            return None
        data = {**data, "verifier_result": step.get("verifier_result"), "exception_info": step.get("exception_info"),
                "step_name": found[1]}
    return data if "verifier_result" in data or "exception_info" in data else None


def _step_record(result: dict[str, Any], source: Path) -> dict[str, Any] | None:
    """The ``step_results`` record of the step whose agent logs hold ``source``, in a multi-step trial's
    ``result.json`` (``StepResult``: the step's own verifier result, exception and agent timing); None for a trial's
    own run."""
    found = _trial_dir(source)
    step = found[1] if found is not None else None
    return next((r for r in as_list(result.get("step_results")) if isinstance(r, dict) and step is not None
                 and r.get("step_name") == step), None)


def _exception_file(trial: Path) -> dict[str, Any]:
    """A Harbor trial's ``exception_info`` as its ``exception.txt`` keeps it, for a trial Harbor never finished (no
    ``result.json``). ``Trial._record_exception`` writes ``traceback.format_exc()`` there when the exception happens,
    and ``result.json`` only in ``_finalize``: a job stopped or crashed in between (refreshdotdev's terminus-2 trial
    timed out, then Harbor failed looking for the verifier's output) leaves the exception in that file alone. The
    exception raised is the last link of the chain Python prints (:func:`_raised_link`); its exception line names the
    type (module path dropped, as ``ExceptionInfo`` records ``type(e).__name__``) and begins the message. Empty where
    there is no such file or no traceback in it."""
    try:
        lines = (trial / "exception.txt").read_text(encoding="utf-8", errors="replace").rstrip().split("\n")
    except OSError:
        return {}
    found = _raised_link(lines)
    if found is None:
        return {}
    raised, message = found
    return {"exception_info": {"exception_type": raised["type"], "exception_message": message},
            "trial_name": trial.name, "verdict_file": "exception.txt"}


def _raised_link(lines: list[str]) -> tuple[re.Match[str], str] | None:
    """(exception line, message) of the exception a printed traceback raised: from its first header, along the
    chain's separators (the cause first, the exception raised last). A message that holds a traceback of its own
    (``NonZeroAgentExitCodeError`` keeps the agent's stderr, where the agent's Python printed its chain) ends the
    chain: the headers and separators after it are that program's, and the exception holding them is the one raised,
    so the last header in the file (what an earlier reading took) may well be the agent's."""
    link = next((at for at, line in enumerate(lines) if line.startswith(_HEADER)), None)
    found = None
    while link is not None:
        at = link + 1
        while at < len(lines) and (not lines[at] or lines[at][:1].isspace()):  # the frames, indented under the header
            at += 1
        raised = _RAISED.match(lines[at]) if at < len(lines) else None
        if raised is None:
            break
        end, link = len(lines), None
        for line_at in range(at, len(lines)):
            if _HEADER in lines[line_at]:  # a traceback inside the message: the rest of the file is the message
                break
            if lines[line_at] in _CHAINED and lines[line_at + 1:line_at + 3] == ["", _HEADER]:
                end, link = line_at, line_at + 2
                break
        found = raised, "\n".join([raised["message"] or "", *lines[at + 1:end]]).strip()
    return found


#: The header of a printed traceback, and the lines Python prints between the links of an exception chain.
_HEADER = "Traceback (most recent call last):"
_CHAINED = frozenset({"The above exception was the direct cause of the following exception:",
                      "During handling of the above exception, another exception occurred:"})

#: A traceback's exception line: ``harbor.trial.trial.AgentTimeoutError: Agent execution timed out ...``.
_RAISED = re.compile(r"^(?:[A-Za-z_]\w*\.)*(?P<type>[A-Za-z_]\w*)(?::\s?(?P<message>.*))?$")


def harbor_trial(path: Path) -> Path | None:
    """The folder of the Harbor run whose agent logs hold ``path``, if any: a trial (``<trial>/agent/``), or one step
    of a multi-step trial (``<trial>/steps/<step>/agent/``: Harbor's ``MultiStepTrial`` runs the agent afresh on each
    step's instruction, verifies each step and records it in ``step_results``, so a step is a run of its own, as its
    ATIF conversion is). A raw session an adapter reads there is that run (:func:`trial_of_run`)."""
    agent = next((d for d in path.parents if d.name == "agent"), None)
    return agent.parent if agent is not None and _agent_trial(agent) is not None else None


def trial_step(run: Path) -> str | None:
    """The step of a multi-step trial a Harbor run folder (:func:`harbor_trial`) is, else None."""
    return run.name if run.parent.name == "steps" and not _is_trial(run) else None


def _step_order(trial: Path) -> list[str]:
    """The steps of a multi-step trial in the order Harbor ran them, as its ``result.json``'s ``step_results`` lists
    them (empty where it records none: a trial not finished)."""
    return [r["step_name"] for r in as_list(_json_beside(trial / "result.json").get("step_results"))
            if isinstance(r, dict) and isinstance(r.get("step_name"), str)]


def running_step(trial: Path) -> str | None:
    """The step of a multi-step Harbor trial whose agent logs lie in the trial's own ``agent/``: the step Harbor was
    running when an exception stopped the trial. ``MultiStepTrial._run_step`` makes each step's folder as the step
    begins (``_create_step_dirs``) and fills it only at its end (``_archive_step_outputs``: a move, or, where the next
    step resumes the session, a copy, the logs kept in ``agent/`` for it); a step's agent and verifier errors are its
    own (``step_results``), so an exception that stops the trial mid-step (the job cancelled, the logs not downloaded)
    is the trial's: ``Trial._record_exception`` writes it to ``exception.txt`` at once (and ``result.json``'s
    ``exception_info`` at the end), and ``_recover_outputs`` downloads that step's logs to ``<trial>/agent/``. The
    step is the last ``step_results`` record of a finished trial that records such an exception (``_run`` adds each
    step's record as it begins; a trial that finished without one emptied ``agent/`` into its last step), and in one
    not finished the only step folder holding no agent logs. None for a single-step trial, or where no one step is so
    told. What ``agent/`` holds may still be only the copy kept for resume (:func:`resumed_part`)."""
    if not (trial / "steps").is_dir():
        return None
    if order := _step_order(trial):
        stopped = _json_beside(trial / "result.json").get("exception_info") or (trial / "exception.txt").is_file()
        return order[-1] if stopped else None
    unfilled = [d.name for d in sorted((trial / "steps").iterdir())
                if d.is_dir() and not any(p.is_file() for p in (d / "agent").rglob("*"))]
    return unfilled[0] if len(unfilled) == 1 else None


def run_step(place: Path) -> str | None:
    """The step of a multi-step trial a Harbor run folder (:func:`harbor_trial`) holds the run of: a step's folder
    (:func:`trial_step`), or the trial's own, holding the logs of the step it was running when it stopped
    (:func:`running_step`)."""
    return trial_step(place) or running_step(place)


def earlier_step_copy(source: Path) -> tuple[str, Path] | None:
    """(the step, the file) of a session file ``source`` in a multi-step Harbor trial that an earlier step holds at the
    same place in its agent logs: with ``resume_trajectory`` Harbor copies the agent logs into each step's folder and
    keeps them for the next step (``MultiStepTrial._copy_agent_dir_to_step``), whose agent resumes the session
    (``codex exec resume --last``, ``claude --continue``), appending its turns to the same file. The step before, where
    the trial's ``result.json`` orders the steps; elsewhere (a trial not finished, or the trial's own ``agent/`` where
    no step is told running) the longest copy shorter than ``source`` (a step's copy opens the next one's) or, in the
    trial's own ``agent/``, as long: the copy Harbor kept there for a step that appended nothing yet. The adapter
    tells whether ``source`` goes on from it."""
    place = harbor_trial(source)
    if place is None:
        return None
    trial = place.parents[1] if trial_step(place) else place
    if not (trial / "steps").is_dir():
        return None
    step, where = run_step(place), source.relative_to(place)
    if step in (order := _step_order(trial)):
        if order.index(step) == 0:
            return None
        before = order[order.index(step) - 1]
        copy = trial / "steps" / before / where
        return (before, copy) if copy.is_file() else None
    size = source.stat().st_size
    copies = [(length, d.name, path) for d in (trial / "steps").iterdir()
              if d.name != step and (path := d / where).is_file()
              and ((length := path.stat().st_size) < size or (place == trial and length == size))]
    return max(copies)[1:] if copies else None


def resumed_part(records: list[Any], source: Path) -> tuple[list[Any], list[Any], str | None]:
    """(the earlier step's records, the step's own, the step resumed from or None) of a session file ``source``: an
    agent resuming the earlier step's session (Codex's ``codex exec resume --last``, Claude Code's ``--continue``,
    which 2.1.332 writes into the same ``<session id>.jsonl``) appends the step's turns to the file
    :func:`earlier_step_copy` finds, so that copy's records, all of them, in order, open ``records``. Those are the
    earlier step's run, graded by its verdict: read whole, this step's run had the earlier step's task and work under
    this step's verdict. Any other file is its own records whole. A file in the trial's own ``agent/`` that is that
    copy and no more is the one Harbor keeps for the next step to resume, no run of its own: passed over."""
    from trajsearch.ingest import sources  # (the ingest package imports the adapters)

    found = earlier_step_copy(source)
    before: list[Any] = []
    for _, record, error, _ in sources.lines(found[1]) if found is not None else ():
        if error is not None:  # a copy not read whole is no prefix to cut
            return [], records, None
        before.append(record)
    if not before or len(records) < len(before) or records[:len(before)] != before:
        return [], records, None
    if len(records) == len(before):
        if (place := harbor_trial(source)) is not None and trial_step(place) is None:
            raise PassedOver("an earlier step's session kept for the next to resume", f"step {found[0]!r}'s "
                             "session as Harbor keeps it in the trial's agent/ for the next step", unit="session")
        return [], records, None
    return before, records[len(before):], found[0]


def trial_label(run: Path) -> str:
    """How a message names the Harbor run folder :func:`harbor_trial` gives: the trial's name, or for a step of a
    multi-step trial ``<trial>/steps/<step>``."""
    step = trial_step(run)
    return f"{run.parents[1].name}/steps/{step}" if step else run.name


def converted_run(path: Path) -> bool:
    """Whether ``path`` (a trial's ``agent/trajectory.json``) is Harbor's ATIF conversion naming its task: then it is
    the trial's run, and a raw session or headless output beside it is not (:func:`_atif_file`)."""
    found = _atif_file(path)
    return found is not None and found.task


def trial_of_run(source: Path) -> Path | None:
    """The Harbor trial (or step of a multi-step trial: :func:`harbor_trial`) whose run ``source`` is, a session or
    output an agent left in its ``agent/`` (Claude Code's transcript or headless output, a Codex rollout...), when
    Harbor kept no ATIF conversion naming the task there (:func:`converted_run`), which is the run instead; None
    elsewhere. Its verdict is the trial's, a step's its own (:func:`trial_verdict`, :func:`trial_task`,
    :func:`trial_started`)."""
    trial = harbor_trial(source)
    return trial if trial is not None and not converted_run(trial / "agent" / "trajectory.json") else None


def trial_sessions(trial: Path, fmt: str | None, suffix: str) -> list[Path]:
    """The top-level sessions of format ``fmt`` an agent left in a Harbor trial's ``agent/``: its non-empty
    ``*<suffix>`` files read as ``fmt`` (``detect.detect_format``), a sub-agent's excepted, where its place says so
    (under a ``subagents`` folder, as Claude Code 2.1 and Qwen Code keep them, or named ``agent-<id>``, as earlier
    Claude Code did) or its own first records do (the format adapter's ``subagent_file``: a Codex sub-agent's
    rollout, which Codex writes beside its parent's, or a Claude Code agent team's teammate's session, beside its
    lead's). A trial has one run: where it holds more than one such session
    and nothing names which is its run, none takes its verdict (``_agent_cli.session_trajectory``)."""
    from trajsearch.ingest.detect import detect_format  # detect imports the adapters

    from . import adapter_for
    agent = trial / "agent"
    found = []
    for path in sorted(agent.rglob(f"*{suffix}")):
        if "subagents" in path.relative_to(agent).parts[:-1] or path.name.startswith("agent-") \
                or not path.is_file() or not path.stat().st_size:
            continue
        try:
            if detect_format(path) == fmt:
                found.append(path)
        except (ValueError, OSError):  # no format, or a side file
            continue
    subagent = getattr(adapter_for(fmt), "subagent_file", None) if fmt is not None else None
    return [p for p in found if subagent is None or not subagent(p)]


def shared_trial(trial: Path, source: Path) -> str | None:
    """Why the raw session ``source`` is not its Harbor trial's run though the trial kept no conversion: the trial
    holds other top-level sessions of its format (:func:`trial_sessions`: a second ``codex exec``, a resumed
    session) and nothing names which is the run. None where it is the only one."""
    from trajsearch.ingest.detect import detect_format  # detect imports the adapters
    if source.is_dir():  # a run kept as a folder (a Cline task): the trial's folders holding files of the same names
        names = {p.name for p in source.iterdir() if p.is_file()}
        runs, what = sorted({p.parent for n in names for p in (trial / "agent").rglob(n)} | {source}), "run folders"
    elif all(p == source for p in (trial / "agent").rglob(f"*{source.suffix}")):  # alone: nothing to read
        return None
    else:
        try:
            fmt: str | None = detect_format(source)
        except (ValueError, OSError):
            fmt = None
        runs, what = sorted({*trial_sessions(trial, fmt, source.suffix), source}), "top-level sessions"
    if len(runs) < 2:
        return None
    return (f"Harbor trial {trial_label(trial)} holds {len(runs)} {what} of this agent and nothing names which is its "
            f"run ({first_few((p.name for p in runs), 3)}): none takes its verdict")


def trial_started(trial: Path) -> datetime | None:
    """When a Harbor trial's agent began (``result.json``'s ``agent_execution.started_at``, a step's in its
    ``step_results`` record, else the trial's start): for a run whose own records carry no time (``claude -p``'s
    stream-json), rather than its file's checkout time."""
    source = trial / "agent" / "trajectory.json"
    result = _trial_file(source, "result.json")
    own = _step_record(result, source) or result
    return utc_time(as_dict(own.get("agent_execution")).get("started_at")) or utc_time(result.get("started_at"))


#: The metadata a Harbor trial's verdict sets on its run (:func:`_verdict`), a judgment of the run and its place in
#: the trial, not the run: a copy an older version read without it (a raw session in a step of a multi-step trial,
#: before round 29) is the same run (``ingest.read.same_run_anywhere``).
TRIAL_VERDICT_METADATA = frozenset({"outcome_basis", "trial_name", "task_name", "trial_step", "trial_exception",
                                    "trial_reward_valid"})


def trial_verdict(trial: Path, ctx: Context) -> tuple[Outcome, float | None, Failure | None, dict[str, Any]] | None:
    """(outcome, reward, failure, metadata) the trial's ``result.json`` records, as for its ATIF run; None when it
    records none (no reward, no exception)."""
    verdict = _verdict({}, trial / "agent" / "trajectory.json", ctx)
    return verdict if verdict[0] is not Outcome.unknown else None


def _verdict(extra: dict[str, Any], source: Path, ctx: Context) -> tuple[Outcome, float | None, Failure | None,
                                                                        dict[str, Any]]:
    reward = extra.get("reward")
    if isinstance(reward, (int, float)) and not isinstance(reward, bool):
        outcome = outcome_of_reward(float(reward), ctx)
        stated = str(extra.get("outcome", "")).lower()
        return (Outcome(stated) if stated in ("success", "failure", "infra_error") else outcome), float(reward), \
            None, {"outcome_basis": "root extra.reward"}
    stated = str(extra.get("outcome", "")).lower()
    if stated in ("success", "failure", "infra_error"):
        return Outcome(stated), None, None, {"outcome_basis": "root extra.outcome"}
    trial = _harbor_verdict(source)
    if trial is None:
        return _root_error(extra)
    basis = {"outcome_basis": f"Harbor trial {trial.get('verdict_file', 'result.json')}",
             "trial_name": trial.get("trial_name"), "task_name": trial.get("task_name"),
             **({"trial_step": trial["step_name"]} if trial.get("step_name") else {})}
    verifier = trial.get("verifier_result") if isinstance(trial.get("verifier_result"), dict) else {}
    rewards = verifier.get("rewards") if isinstance(verifier.get("rewards"), dict) else {}
    value = rewards.get("reward", next(iter(rewards.values()), None) if len(rewards) == 1 else None)
    exception = trial.get("exception_info") if isinstance(trial.get("exception_info"), dict) else None
    if exception:
        basis["trial_exception"] = str(exception.get("exception_type") or "exception")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        outcome = outcome_of_reward(float(value), ctx)
        if exception is not None and outcome is not Outcome.success:
            # the trial's recorded reward_valid judges its own exception, not one step's of a multi-step trial
            recorded = None if trial.get("step_name") else trial.get("reward_valid")
            if reward_void(exception, recorded):  # the provider or the sandbox cut the agent off: no grade
                basis["trial_reward_valid"] = False
                return Outcome.infra_error, float(value), _void_failure(exception), basis
            return outcome, float(value), _trial_failure(exception, graded=True), basis
        failed = _verifier_failure(source, float(value)) if outcome is Outcome.failure else None
        return outcome, float(value), failed, basis
    if exception:
        return Outcome.failure if agents_own(exception) else Outcome.infra_error, None, \
            _trial_failure(exception, graded=False), basis
    return Outcome.unknown, None, None, basis


def _root_error(extra: dict[str, Any]) -> tuple[Outcome, float | None, Failure | None, dict[str, Any]]:
    """The verdict a root ``extra.error`` gives (Harbor's strands converter: ``{"message", "traceback"}`` of the
    exception the agent died of; a string elsewhere): the run failed, on an outage (``Error code: 500``) an
    infrastructure error (:func:`error_outcome`, as span formats judge an error); unknown without one."""
    error = extra.get("error")
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) or not message.strip():
        return Outcome.unknown, None, None, {}
    outcome = error_outcome(message)
    cause = "infrastructure: the agent's run ended on an outage" if outcome is Outcome.infra_error else None
    return outcome, None, Failure(error=short(decisive_line(message) or message), cause=cause), {
        "outcome_basis": "root extra.error"}


def _verifier_failure(source: Path, reward: float) -> Failure | None:
    """Why the verifier graded a trial low, as it reported it beside the agent's logs: the tests it says failed (its
    CTRF report, else pytest's summary in its output), the first with what it said, else its output's decisive line;
    None where it left no output (a ``Failure`` repeating the reward would say nothing, and group apart)."""
    verifier = source.parent.parent / "verifier"
    try:
        output = (verifier / "test-stdout.txt").read_text(encoding="utf-8", errors="replace")
    except OSError:
        output = ""
    failed = _ctrf_failures(verifier / "ctrf.json") or [m.groups() for m in _PYTEST_FAILED.finditer(output)]
    if not failed:
        line = decisive_line(output)
        return Failure(error=f"reward {reward:g}: {line}") if line else None
    name, said = failed[0]
    return Failure(error=short(f"reward {reward:g}: {name} failed" + (f": {said}" if said else "")),
                   cause=short("verifier tests failed: " + ", ".join(n for n, _ in failed), 500, keep="head"))


#: pytest's short test summary line for a failed test: ``FAILED tests/test_x.py::test_y - AssertionError: ...``.
_PYTEST_FAILED = re.compile(r"^FAILED (\S+)(?: - (.+))?$", re.M)


def _ctrf_failures(path: Path) -> list[tuple[str, str | None]]:
    """(name, decisive line of its trace) of each failed test in a CTRF report (pytest's ``--ctrf``)."""
    tests = as_list(as_dict(_json_beside(path).get("results")).get("tests"))
    return [(t["name"], decisive_line(str(t.get("trace") or t.get("message") or ""))) for t in tests
            if isinstance(t, dict) and t.get("status") == "failed" and isinstance(t.get("name"), str)]


def _trial_failure(exception: dict[str, Any], *, graded: bool) -> Failure:
    """The failure a Harbor trial's ``exception_info`` records. Harbor runs the verifier even after the agent's
    process died, so a trial may have both a reward and the crash (``NonZeroAgentExitCodeError``): the reward
    grades what the dead agent left, and the crash is why. Whether the exception is the agent's own failure (its
    timeout, its context overflowing, its process exiting non-zero, ...) or the harness's is Harbor's error policy's
    call (:func:`_harbor_errors.agents_own`)."""
    kind = str(exception.get("exception_type") or "exception")
    message = str(exception.get("exception_message") or "")
    error = short(f"{kind}: {decisive_line(message) or ''}", 500)  # the agent's stderr, cut and joined by Harbor
    if agents_own(exception):
        return Failure(error=error, cause=_AGENTS_FAILURE.get(kind, f"the agent failed ({kind})") + (
            "; the verifier graded what it left" if graded else ", and no verifier graded what it left"))
    return Failure(error=error, cause="infrastructure: the agent's process failed; the verifier graded what it left"
                   if graded else "infrastructure: the trial failed before the verifier graded it")


#: How an agent's own failure (:func:`_harbor_errors.agents_own`) of these types is said; others by their type.
_AGENTS_FAILURE = {"AgentTimeoutError": "the agent ran out of time",
                   "NonZeroAgentExitCodeError": "the agent's process exited non-zero (Harbor counts it the agent's "
                                                "own failure)"}


def _void_failure(exception: dict[str, Any]) -> Failure:
    """The failure of a trial whose reward Harbor counts invalid (:func:`_harbor_errors.reward_void`): the exception,
    an infrastructure cause (the low reward grades an agent that was cut off, not its work)."""
    kind = str(exception.get("exception_type") or "exception")
    return Failure(error=_trial_failure(exception, graded=True).error,
                   cause=f"infrastructure: the trial ended on {kind}, after which Harbor counts the verifier's "
                         "reward invalid")


#: The raw trajectory Harbor's mini-swe-agent leaves beside its conversion (``MiniSweAgent.
#: _mini_swe_agent_trajectory_path``: ``/logs/agent/mini-swe-agent.trajectory.json``).
_MINI_RAW = "mini-swe-agent.trajectory.json"


def _agent_exit(agent: str | None, source: Path, harbor: Failure | None) -> tuple[str, Failure | None] | None:
    """(exit status, failure) when a Harbor trial's mini-swe-agent died of the harness or its model API, as its raw
    trajectory beside the conversion records it (``info.exit_status``, the exception's text as the mini-swe-agent
    reader finds it: :func:`mini_swe_agent.failure_of`); not one that ended at the new-limits prompt (its own limit:
    :func:`mini_swe_agent.limit_before_prompt_exit`). mini-swe-agent 1.x catches that exception (litellm's
    ``RetryError`` after an ``APIConnectionError``...), saves it and exits 0, so Harbor records no
    ``exception_info``; ``convert_mini_swe_agent_to_atif`` keeps no exit status; and the verifier grades the workspace
    the agent was cut off from. Where the raw file saved no text of it, ``harbor``'s (the failure of the exception
    Harbor recorded: the agent's output it kept) stands, else the status alone."""
    if agent != "mini-swe-agent" or _trial_dir(source) is None:
        return None
    raw = _json_beside(source.parent / _MINI_RAW)
    info, messages = as_dict(raw.get("info")), as_list(raw.get("messages"))
    status = mini_swe_agent.exit_status_of(info, messages)
    if status is None or mini_swe_agent.outcome_for(status) is not Outcome.infra_error \
            or mini_swe_agent.limit_before_prompt_exit(status, info, messages):
        return None
    kept = Failure(error=harbor.error, cause=mini_swe_agent.HARNESS_CAUSE) if harbor else None
    return status, mini_swe_agent.failure_of(status, info, messages, None if kept else "no message") or kept


#: Model names that name no model: Claude Code's ``<synthetic>``, on a message the CLI made up itself (an auth,
#: quota or API error), which Harbor's conversion copies to the agent and its steps.
_NO_MODEL = frozenset({SYNTHETIC_MODEL})


def _model(agent: dict[str, Any], models: list[str], subagent_models: set[str], source: Path) -> str | None:
    """The run's model: ``agent.model_name``, else ``agent.model`` (each but a placeholder), else the model the
    main-thread steps name most (ATIF's ``agent.model_name`` is optional, the steps' overrides it), else the Harbor
    trial's (:func:`_trial_model`). But where ``agent.model_name`` is a subagent's model that no main-thread step
    names (Harbor's Claude Code conversion sets it from the first step, Claude Code's warm-up of its Haiku
    subagent), the steps' model. Elsewhere the agent's own name stands: steps may name the model otherwise
    (Harbor's Codex conversion: ``gpt-5.5`` on the agent, its provider route ``openai/gpt-5`` on each step)."""
    named = [m for m in models if m not in _NO_MODEL]
    steps_model = Counter(named).most_common(1)[0][0] if named else None
    given = agent.get("model_name")
    if steps_model and given in subagent_models and given not in named:
        given = steps_model
    return next((str(m) for m in (given, agent.get("model"), steps_model) if m and str(m) not in _NO_MODEL),
                None) or _trial_model(source)


def _trial_file(source: Path, name: str) -> dict[str, Any]:
    """The Harbor trial's ``result.json`` or ``config.json`` beside a trajectory; empty outside a trial, or when
    the file is missing or unreadable."""
    found = _trial_dir(source)
    return _json_beside(found[0] / name) if found is not None else {}


def _trial_model(source: Path) -> str | None:
    """The model a Harbor trial ran its agent with: the trial config's ``agent.model_name`` (as ``result.json``
    keeps it, else ``config.json``), else ``result.json``'s ``agent_info.model_info`` as ``provider/name``."""
    result, config = _trial_file(source, "result.json"), _trial_file(source, "config.json")
    for given in (result.get("config"), config):
        agent = given.get("agent") if isinstance(given, dict) and isinstance(given.get("agent"), dict) else {}
        if isinstance(agent.get("model_name"), str) and agent["model_name"] and agent["model_name"] not in _NO_MODEL:
            return agent["model_name"]
    info = result.get("agent_info") if isinstance(result.get("agent_info"), dict) else {}
    model = info.get("model_info") if isinstance(info.get("model_info"), dict) else {}
    if isinstance(model.get("name"), str) and model["name"]:
        return f"{model['provider']}/{model['name']}" if isinstance(model.get("provider"), str) and model[
            "provider"] else model["name"]
    return None


def trial_task(source: Path) -> dict[str, str]:
    """A Harbor trial's task, as its ``result.json`` names it: ``task_name`` is the task id (so the trials of one
    task group together) and ``source``, where it names the dataset the task came from (``terminal-bench``), its
    family (:func:`_dataset`)."""
    result = _trial_file(source, "result.json")
    named = {"task_id": result.get("task_name"), "task_family": _dataset(result)}
    return {k: v.strip() for k, v in named.items() if isinstance(v, str) and v.strip()}


def _dataset(result: dict[str, Any]) -> Any:
    """A trial's ``source`` where it names a dataset: for a registry's or a package's task (its config's ``git_url``
    / ``name``) Harbor records the dataset's name there, but for a local one (``harbor run --path evals/tasks``)
    only the name of the folder holding the task (``tasks``), which says nothing of what the task is."""
    source = result.get("source")
    task = as_dict(as_dict(result.get("config")).get("task")) or as_dict(result.get("task_id"))
    path = task.get("path")
    local = not task.get("git_url") and not task.get("name") and isinstance(path, str)
    return None if local and Path(path).parent.name == source else source


def _started(ordered: list[dict[str, Any]]) -> datetime | None:
    """When the run began: its first step's timestamp, the task's included (context a continuation copied
    from an earlier trajectory is older than the run)."""
    own = [s for s in ordered if s.get("is_copied_context") is not True] or ordered
    return next((when for s in own if (when := utc_time(s.get("timestamp")))), None)


def _where(source: Path, trial: tuple[Path, str | None] | None) -> str:
    """Where a run lies, in its id: its two folders and file stem; a multi-step trial's step with its trial's name
    (``trial``: :func:`_trial_dir`)."""
    stem = file_stem(source, (".json",))
    if trial is not None and trial[1] is not None:  # a step of a multi-step trial: the trial names it too
        return "/".join((trial[0].name, trial[1], source.parent.name, stem))
    named = named_path(source)  # a stream's copy: not the copy's folders
    return "/".join(p for p in (named.parent.parent.name, named.parent.name, stem) if p)


def _described(value: Any) -> str:
    """What a JSON value is, for an error: an object by its first keys."""
    if isinstance(value, dict):
        return "has the keys " + first_few(value, 6)
    return f"is a {type(value).__name__}"


def _ordered(raw_steps: list[Any]) -> list[dict[str, Any]]:
    """The steps in ``step_id`` order."""
    return sorted((s for s in raw_steps if isinstance(s, dict)),
                  key=lambda s: s.get("step_id") if isinstance(s.get("step_id"), (int, float)) else 0)


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    if isinstance(record, list):  # several JSON values, none a trajectory (``split``)
        raise RecordError(f"no ATIF trajectory among the file's {len(record)} JSON values (an object with "
                          f"'schema_version' and 'steps'); the first {_described(record[0] if record else None)}")
    record = json_object(record)
    sub_path: list[str] = []
    root = record
    if "atif_subagent" in record:
        root = record.get("root") if isinstance(record.get("root"), dict) else {}
        sub_path = [str(p) for p in record.get("path") or []]
        record = json_object(record["atif_subagent"])
    raw_steps = list_field(record, "steps", "a list of ATIF steps")
    own = record.get("trajectory_id") or record.get("session_id") or root.get("trajectory_id") or root.get(
        "session_id")
    if not own or not isinstance(own, (str, int)):
        raise RecordError("missing field 'session_id' (and no 'trajectory_id')")
    root_id = root.get("trajectory_id") or root.get("session_id") or own
    agent = record.get("agent") if isinstance(record.get("agent"), dict) else {}
    ordered = _ordered(raw_steps)
    agent_extra = agent.get("extra") if isinstance(agent.get("extra"), dict) else {}
    config = agent_extra.get("agent_config") if isinstance(agent_extra.get("agent_config"), dict) else {}
    fences = ((config["action_regex"],) if isinstance(config.get("action_regex"), str) else DEFAULT_ACTION_REGEXES
              ) if agent.get("name") == "mini-swe-agent" else ()
    name = agent.get("name") if isinstance(agent.get("name"), str) else None
    walk = _steps(ordered, fences, name, _goose_errors(ctx.source) if name == "goose" else None)
    prompt, steps, models, sidechain = walk.task, walk.steps, walk.models, walk.sidechain
    if not prompt or not prompt.strip():
        prompt = _task_beside(agent.get("name"), ctx.source) if not sub_path else None
    if not prompt:
        raise RecordError("no task: no step with source 'user' and a message")
    task = _prompts.instruction(prompt, (config.get("instance_template"),), ("task",))
    extra = record.get("extra") if isinstance(record.get("extra"), dict) else {}
    outcome, reward, failure, basis = _verdict(extra, ctx.source, ctx) if not sub_path else (
        Outcome.unknown, None, None, {})
    died = _agent_exit(name, ctx.source, failure if "trial_exception" in basis else None) if not sub_path else None
    if died is not None:  # recorded even under a passing verdict: the agent did nothing that earned it
        basis["agent_exit_status"] = died[0]
    if died is not None and outcome is not Outcome.success:
        outcome, failure = Outcome.infra_error, died[1]
    elif outcome is Outcome.unknown and walk.last_error:  # it ended on Claude Code's own error (as its reader reads it)
        outcome, failure = ended_on_error(walk.last_error, API_ERROR_CAUSE)
    elif basis.get("trial_reward_valid") is False and walk.last_error and failure is not None:
        # the provider's error as the agent got it says more than Harbor's cut of the agent's whole output
        failure = Failure(error=short(f"{basis['trial_exception']}: {walk.last_error}", 500), cause=failure.cause)
    final = record.get("final_metrics") if isinstance(record.get("final_metrics"), dict) else {}
    created = _started(ordered)
    place = _trial_dir(ctx.source)
    subagent_models = {str(s["model_name"]) for s in ordered if _is_subagents(s) and s.get("model_name")}
    sub = f".sub.{'/'.join(sub_path)}" if sub_path else ""
    trajectory_id = f"atif.{root_id}.{_where(ctx.source, place)}{sub}"
    # a step of a multi-step trial not finished yet was named as if its folder were the trial, before round 29: an
    # older version may have stored it so while the trial ran, whether or not it has finished since
    step = place is not None and place[1] is not None
    fields: dict[str, Any] = {
        "trajectory_id": safe_id(trajectory_id),
        "task": clip_task(task.replace("\r\n", "\n").strip()),
        "model_id": _model(agent, models, subagent_models, ctx.source),
        **trial_task(ctx.source),
        "tool_versions": {str(agent["name"]): str(agent.get("version"))}
        if agent.get("name") and agent.get("version") not in (None, "", "unknown") else {},
        "tools_available": [str(t["function"]["name"]) for t in as_list(agent.get("tool_definitions"))
                            if isinstance(t, dict) and isinstance(t.get("function"), dict)
                            and t["function"].get("name")],
        "outcome": outcome,
        "reward": reward,
        "failure": failure,
        "steps": steps,
        "created_at": created,
        "metadata": {
            "source_format": NAME,
            "schema_version": record.get("schema_version") or root.get("schema_version"),
            "agent": agent.get("name"),
            "session_id": record.get("session_id") or root.get("session_id"),
            **({"atif_trajectory_id": record["trajectory_id"]} if record.get("trajectory_id") else {}),
            **({"continued_trajectory_ref": record["continued_trajectory_ref"]}
               if record.get("continued_trajectory_ref") else {}),
            **({"continuation_index": agent_extra["continuation_index"]}
               if "continuation_index" in agent_extra else {}),
            **({"parent_session_id": agent_extra["parent_session_id"]} if agent_extra.get("parent_session_id") else {}),
            **({"parent": str(root_id), "subagent_path": sub_path} if sub_path else {}),
            "copied_context_steps": sum(1 for s in ordered if s.get("is_copied_context") is True),
            **({"subagent_steps": sidechain} if sidechain else {}),
            **({"api_errors": walk.api_errors} if walk.api_errors else {}),
            **({"interrupted": True} if walk.interrupted else {}),
            **({"turns_aborted": walk.turns_aborted} if walk.turns_aborted else {}),
            **{k: final[k] for k in ("total_prompt_tokens", "total_completion_tokens", "total_cost_usd", "total_steps")
               if k in final},
            **({"notes": short(record["notes"], 500)} if isinstance(record.get("notes"), str) else {}),
            **basis,
            # a step of a multi-step trial, named with its verdict or without (the trial recorded none of it)
            **({"trial_step": place[1]} if place is not None and place[1] else {}),
        },
    }
    run = build(fields, ctx)
    return with_former_id(run, safe_id(f"atif.{root_id}.{_where(ctx.source, None)}{sub}")) if step else run
