"""The actions the adapters record that are no tool, and the one judge of which of a run's actions are tools
(:func:`is_tool`, :func:`tools_of`: the runtime's staleness and tool overlap). Several adapters import these
names; others still write them as literals (``"respond"``), which must stay equal to these.

A step's ``action`` is the tool an agent called, but a run also holds steps that called none: the agent's words
to the user, its harness stopping it, its way of saying it is done, a call whose tool the file does not name. A
runtime lists the tools its agent has; judged against that list, these read as tools "no longer available", and
``prune`` deleted every run that held one (probe 52, RT1 and its review: every tau-bench run for ``respond``, every
SWE-agent run stopped at a limit for ``exit_cost``), while the reranker's tool overlap scored a run that only
talked below one that called tools the context has.

Below the model only: the adapters (ingest), the digest and the runtime all import it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from .model import Step

#: How every adapter begins the error of a call its harness did not run (refused by the user, a hook or a policy, a
#: tool or arguments it could not take, a program it could not start, a call padded after the turn ended): the one
#: mark the rules read (:func:`ran`; :func:`trajsearch.represent.recoveries`: such a read found nothing because it
#: never ran).
NOT_RUN = "not run: "


#: How an adapter begins the error of a call its harness cut off before it exited: the user stopped it
#: (:data:`INTERRUPTED`), or the session ended while it ran, or a refusal came once it had started (Claude Code's
#: ``toolDenialAfterRun``) (:data:`NEVER_FINISHED`). It ran (:func:`ran`), but its error is not the command's own
#: (``trajsearch.represent._NOT_THE_COMMANDS`` reads these marks).
INTERRUPTED = "interrupted by the user"
NEVER_FINISHED = "tool call never finished"


def not_run(reason: str) -> str:
    """``reason`` worded as the error of a call the harness did not run (once: a reason already so worded is kept)."""
    return reason if reason.startswith(NOT_RUN) else NOT_RUN + reason


def ran(step: Step) -> bool:
    """Whether the harness ran a step's call: the one judge, so a call it did not run (:data:`NOT_RUN`) reads,
    writes, runs no tests and touches nothing for every rule (steps' ``is_read`` ... ``verified``, ``touched``)."""
    return not (step.error or "").startswith(NOT_RUN)


#: The action every adapter gives an agent's words to the user: a Q&A run's answer, a coding run's report, a
#: tau-bench agent's turn of its dialogue (whose reply from the user the adapters keep as its observation).
RESPOND = "respond"
#: SWE-agent stopping a run itself, recorded as the run's last action: a limit hit (``exit_cost``, ``exit_context``),
#: a format error, an API or runtime error (0.x ``forward_with_error_check``: ``exit_api``, ``exit_error``), CodeR's
#: ``early_exit``; EnIGMA's ``exit_forfeit``, the agent giving up.
AGENT_STOP = re.compile(r"^(?:exit_\w+|early_exit)$")
#: Those stops by name, for judging any run's actions: other agents have tools named so (Gemini CLI's and Qwen
#: Code's ``exit_plan_mode``), which the pattern would take for a stop (review R2-FRT of probe 52).
STOP_ACTIONS = frozenset({"exit_cost", "exit_context", "exit_format", "exit_api", "exit_error", "exit_forfeit",
                         "exit_command_timeout", "exit_total_execution_time", "exit_step_limit", "early_exit"})
#: The command ``exit`` typed alone: SWE-agent 1.x ends the run (``exit_command``), no tool ran.
QUIT = "exit"
#: Terminus' ``"task_complete": true`` (JSON) or ``<task_complete>true`` (XML), as Harbor itself maps it to a call.
TASK_COMPLETE = "mark_task_complete"
#: A call whose tool the file does not name: the placeholders the adapters give it.
UNNAMED_TOOL = "tool"
UNKNOWN_TOOL = "unknown_tool"  # tau-bench, tau2: a tool result answering no recorded call, or a call with no name
NOT_TOOLS = frozenset({RESPOND, QUIT, TASK_COMPLETE, UNNAMED_TOOL, UNKNOWN_TOOL})
#: The actions that call nothing, so change no file, whatever their words name ("Restored calc.py.").
CALLS_NOTHING = frozenset({RESPOND, QUIT, TASK_COMPLETE}) | STOP_ACTIONS


def is_tool(action: str | None) -> bool:
    """Whether ``action`` names a tool the agent called (see the module docstring), as a runtime's tool list would."""
    return bool(action) and action not in NOT_TOOLS and action not in STOP_ACTIONS


def tools_of(actions: object) -> list[str]:
    """The tools among ``actions`` (a run's ``tools_used``, a row's ``tools``), in order, each once."""
    return [a for a in dict.fromkeys(actions or ()) if isinstance(a, str) and is_tool(a)]


#: The actions that end a run and do nothing else: a harness's or agent's stop, ``exit`` typed alone, the mark of
#: being done (:func:`acted`).
ENDS = frozenset({QUIT, TASK_COMPLETE}) | STOP_ACTIONS


def acted(actions: Iterable[str | None]) -> bool:
    """Whether a run whose steps took ``actions`` did anything an agent shown it could do again: called a tool (named
    or not) or answered the user. An exemplar is shown to be followed, and a run of no such step has nothing to
    follow: a Harbor trial whose model API died before its first step (mini-swe-agent's ``RetryError``) yet whose
    verifier passed the untouched workspace (reward 1) is a success of 0 steps, and was offered as ``follow_closely``
    for its own task. A run that only answered is kept: 4 of the 84 successful tau-bench airline runs of
    ../shared/data refused the user in words alone, and for 2 of those tasks (29, 47) it is the only success, the
    other trials cancelling what policy forbade. A stop or a step of no action (a system prompt, an error the harness
    recorded) alone is nothing to follow."""
    return any(action and action not in ENDS for action in actions)
