"""A run's outcome from explicit evaluations (and from an error status), never from a clean exit.

Which evaluation labels and metric names decide success or failure, and
which errors are the infrastructure's rather than the agent's. Kept apart from
assembly because the vendor adapters (``_vendor``) judge scores and feedback
with the same vocabulary before they assemble anything.
"""

from __future__ import annotations

import re
from typing import Iterable

from trajsearch.model import Outcome

from .nodes import Evaluation

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
    r"time.?out|timed out|rate.?limit|\b429\b|\b5\d\d\b|(?:service|server|temporarily)\W?unavailable|connection|"
    r"internal.?server|overloaded|"
    r"apierror|api_error|service.?error|gateway|"
    r"ai_retryerror|server had an error",  # the AI SDK spends its retries on retryable errors only
    re.I,
)


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


#: Exceptions a framework raises to pause or redirect a run, not because anything failed: LangGraph's
#: ``interrupt()`` (human in the loop, resumed in a later trace) and ``Command(graph=PARENT)``, named by their type
#: (a traceback, LangSmith's ``error``) or told only by ``str(error)``, as Langfuse's LangChain handler writes its
#: ``statusMessage`` (``(Interrupt(value=...),)``, ``Command(graph='__parent__', ...)``).
_CONTROL_FLOW = re.compile(r"^\s*(?:(?:[\w.]+\.)?(?:GraphInterrupt|NodeInterrupt|GraphBubbleUp|ParentCommand)\b"
                           r"|\(Interrupt\(|Command\(graph='__parent__')")


def failed(error: str | None) -> str | None:
    """``error`` unless it is control flow (an error that *is* one of ``_CONTROL_FLOW``'s, not one that mentions
    it): what a span's error status says went wrong."""
    return None if not error or _CONTROL_FLOW.search(error) else error


#: Errors a framework raises *because a tool raised*: the AI SDK's ``AI_ToolExecutionError`` ("Error executing tool
#: X: ..."), the Agents SDK's "Error running tool X: ...", LangChain's ``ToolException``. The run's tool failed,
#: whatever its message says (a 503 from the tool's own backend): an agent should be warned of that; an outage is
#: the model provider's or the infrastructure's. The message may come after the labels of what passed it on (an
#: exception type, the Agents SDK's agent span "Error in agent run: Error running tool X: ...").
_TOOL_RAISED = re.compile(
    r"^\s*(?:[\w.]+\.)?(?:AI_ToolExecutionError|ToolExecutionError|ToolException)\b"
    r"|^\s*(?:[\w.]+(?: [\w.]+){0,5}:\s*){0,3}Error (?:executing|running) tool\b"
)


#: The cause of a run read ``infra_error`` by its error (:func:`error_outcome`), where nothing says more.
INFRA_CAUSE = "infrastructure: a timeout, rate limit or service error, not the agent's reasoning"


def error_outcome(error: str, *, by_tool: bool = False) -> Outcome:
    """infra_error for an outage (:data:`_INFRA`: timeouts, rate limits, 5xx, connection errors) unless the error
    is a tool's own (``by_tool``: it started in a tool's span, or :data:`_TOOL_RAISED` says so), else failure."""
    tools = by_tool or _TOOL_RAISED.search(error)
    return Outcome.infra_error if _INFRA.search(error) and not tools else Outcome.failure
