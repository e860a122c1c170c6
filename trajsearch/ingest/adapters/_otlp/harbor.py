"""Harbor's OTel export (``harbor traces export --format otel``: harbor-atif2otel's ``convert_trajectory``).

It rebuilds OpenInference spans from a trial's ATIF trajectory: an LLM span per agent step (its ``message`` as the
output, its ``model_name`` as the model), a TOOL span per call (its result as the output), the root AGENT span
with the first user message as input and the last agent message as output, every span's status OK. So what the
trajectory said only in its text is all the spans say, and it is read as the ATIF reader reads it (one rule for
both, from ``atif`` and ``_agent_cli``):

- an agent step's calls are the TOOL spans written right after its LLM span (the spans carry no call ids, and a
  step with no timestamp gets its spans' times as offsets from 0, which are no times): its words are their thought;
- a tool's result shows its failure only in its text (hermes' and strands' JSON ``exit_code``, Claude Code's
  ``Exit code N``, an ``Error:`` line ...): that is the tool step's error;
- an agent step that said nothing but its calls carries the converter's placeholder as its message (``[tool
  call]``, ``(tool calls)``, ``(tool use)`` ...): no words of the agent's, so no thought and no answer;
- a message Claude Code made up itself (model ``<synthetic>``: "Not logged in", "Prompt is too long", an API
  error) is no answer but that model call's error; a run that ended on one (no model turn after it, the root's
  output that message) is an infrastructure error, as the ATIF and Claude Code readers read it, but for the
  agent's own context window ("Prompt is too long": its failure, ``_agent_cli.ended_on_error``);
- the root's input is the first user message, for Codex the CLI's ``<environment_context>``: the task is then
  the first prompt the user typed, which only the model calls' input holds;
- a mini-swe-agent 1.x turn wrote its command in a fence in its words (no tool call, so no TOOL span): that
  command is a ``bash`` step, its other words the thought (its output is lost: the export keeps only results tied
  to a call id).
"""

from __future__ import annotations

from dataclasses import asdict
from itertools import takewhile
from typing import Any

from trajsearch.model import Outcome, Trajectory

from .._agent_cli import API_ERROR_CAUSE, SYNTHETIC_MODEL, ended_on_error, synthetic_error, typed_prompt
from .._spans import Message, Node, maybe_json
from ..atif import fenced_command, is_placeholder, result_error

#: The resource's ``telemetry.sdk.name`` on every span the exporter writes.
SDK_NAME = "harbor-atif2otel"
#: ``Node.info`` key of a model call whose message Claude Code made up: the message.
_MADE_UP = "harbor_synthetic"
#: Unix seconds before which a span's time is the export's offset from 0 for a step with no timestamp (2000-01-01).
_UNTIMED_BEFORE = 946_684_800
#: ``Node.info`` key of a root span the export wrote.
_EXPORTED = "harbor_export"
#: ``Node.info`` key of a root whose input (the first user message) was no prompt the user typed.
_NO_TASK = "harbor_context_input"


def is_harbor_export(resource: dict[str, Any]) -> bool:
    """Whether a span's resource says Harbor's OTel export wrote it."""
    return resource.get("telemetry.sdk.name") == SDK_NAME


def read_as_atif(node: Node) -> None:
    """Give ``node`` what its ATIF step's text says (see the module docstring), in place."""
    if node.role == "tool" and not node.error and node.result:
        node.error = result_error(node.result)
    if node.role == "llm" and node.model == SYNTHETIC_MODEL:
        said = node.output_text or ""
        node.error = node.error or synthetic_error(said)
        node.output_text, node.output_messages = None, []
        node.info[_MADE_UP] = said.strip()
    if node.model == SYNTHETIC_MODEL:  # no model answered (the root's, when Claude Code made up every message)
        node.model = None
    if node.parent is None:
        node.info[_EXPORTED] = True
    if node.start is not None and node.start < _UNTIMED_BEFORE:  # a step with no timestamp: offsets from 0
        node.start = node.end = None
    if node.parent is None and node.input_text and typed_prompt(node.input_text) is None:
        node.input_text, node.info[_NO_TASK] = None, True  # context the CLI wrote (<environment_context>, AGENTS.md)
    if node.output_text is not None and is_placeholder(node.output_text):
        node.output_text = None
    node.output_messages = [m for m in node.output_messages if not (m.get("text") and is_placeholder(m["text"])
                                                                    and not m.get("calls"))]


def _typed_prompts(node: Node) -> list[str]:
    """What the user typed among a model call's input (``input.value``: the turn's user and system messages)."""
    messages = maybe_json(node.input_text) if node.input_text else None
    return [typed for m in (messages if isinstance(messages, list) else []) if isinstance(m, dict)
            and m.get("role") == "user" and isinstance(m.get("content"), str) and (typed := typed_prompt(m["content"]))]


def as_atif_run(group: list[Node]) -> list[Node]:
    """``group`` with its root as the ATIF reader would read the trajectory's ends: its output no message Claude Code
    made up (the root's output is the last agent message, whatever said it), so that a run that ended on one ends
    on that model call's error; its input, where the first user message was context the CLI wrote, the first
    prompt the user typed (the export writes each later user message only into its turn's model calls' input)."""
    made_up = {n.info[_MADE_UP] for n in group if n.info.get(_MADE_UP)}
    calls = sorted((n for n in group if n.role == "llm"), key=lambda n: n.seq)
    for root in (n for n in group if n.parent is None):
        if made_up and (root.output_text or "").strip() in made_up:
            root.output_text = None
        if root.info.get(_NO_TASK):
            root.input_text = next((p[0] for n in calls if (p := _typed_prompts(n))), None)
        if not root.info.get(_EXPORTED):
            continue
        asked = _calls_asked(group)
        for call in calls:
            if call.id not in asked and root.name == "mini-swe-agent":  # the export's ``agent.name``: its root's name
                _fenced_call(call)
    return group


def _calls_asked(group: list[Node]) -> set[str]:
    """The model calls (by id) whose step's tool calls the export wrote as the TOOL spans right after it, each given
    those calls, so that its words are their thought: the spans carry no call ids, and a step with no timestamp
    gives no time to tie them by (the export writes the LLM span from 0, its TOOL spans 1 ms apart from 0)."""
    asked: set[str] = set()
    ordered = sorted(group, key=lambda n: n.seq)
    for n, call in enumerate(ordered):
        if call.role != "llm" or call.error or any(m.get("calls") for m in call.output_messages):
            continue
        tools = list(takewhile(lambda t: t.role == "tool" and t.parent == call.parent, ordered[n + 1:]))
        if tools:
            said = call.output_text or "".join(m.get("text") or "" for m in call.output_messages)
            call.output_messages = [asdict(Message("assistant", text=said or "", calls=[
                {"id": None, "name": t.tool, "arguments": t.arguments} for t in tools]))]
            call.output_text = None
            asked.add(call.id)
    return asked


def _fenced_call(call: Node) -> None:
    """A mini-swe-agent 1.x turn (its command in a fence in its words: the export has no TOOL span for it) as a model
    call that asked for that ``bash`` command, its other words the thought, as the ATIF reader reads the turn."""
    written = fenced_command(call.output_text) if call.output_text and not call.output_messages else None
    if written is not None:
        command, thought = written
        call.output_messages = [asdict(Message("assistant", text=thought or "", calls=[
            {"id": f"{call.id}-command", "name": "bash", "arguments": {"command": command}}]))]
        call.output_text = None


def ended_on_cli_error(run: Trajectory, group: list[Node]) -> Trajectory:
    """``run``, whose outcome a failed last model call decided, read as the ATIF reader reads it when that call's
    message was Claude Code's own (see the module docstring: an infrastructure error, or the agent's context window),
    with its ``api_errors`` count."""
    errors = [n for n in group if n.info.get(_MADE_UP) and n.error]
    if not errors:
        return run
    update: dict[str, Any] = {"metadata": {**run.metadata, "api_errors": len(errors)}}
    if run.outcome is Outcome.failure and run.metadata.get("outcome_basis") == "error status of the last model call":
        outcome, failure = ended_on_error(run.failure.error if run.failure else errors[-1].error, API_ERROR_CAUSE)
        update |= {"outcome": outcome, "failure": failure}
    return run.model_copy(update=update)
