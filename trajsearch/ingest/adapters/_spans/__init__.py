"""Span-shaped traces -> trajectories: what OTel GenAI, OpenInference, LangSmith and Langfuse share.

Those formats record a run as a tree of timed operations (spans, runs,
observations). Each adapter turns its own records into :class:`Node` objects;
from there on every span format is read the same way. The pieces, one module
each because each answers a different question and changes for a different
reason:

- ``nodes``: the format-neutral model (:class:`Node`, :class:`Message`,
  :class:`Evaluation`) and the value helpers raw attributes pass through
  (JSON text, flattened attributes, timestamps);
- ``messages``: chat messages in the shapes the chat APIs and frameworks
  write them -> one ``Message`` shape, and the user's instruction in them;
- ``outcome``: the verdict of explicit evaluations (labels, metric names)
  and of an error status;
- ``calls``: which model calls are one request recorded twice (two
  instrumentors), and the order the model asked for parallel tools in;
- ``assembly``: a run's nodes -> its steps, task and outcome (the mapping
  rules are in that module's docstring), and :class:`SpanFormat`, the
  grouping half of a span adapter.

Everything is importable from here, as it was when this was one module.
"""

from __future__ import annotations

from .assembly import (Assembled, SpanFormat, assemble, in_tree_order, kept_steps, no_agent_work, span_trajectory,
                       tools_offered, trajectory_id, untyped_model_calls)
from .messages import (
    denial,
    first_user_text,
    found_tools,
    normalise_message,
    normalise_messages,
    response_output,
    responses_messages,
    retry_feedback,
    task_from_input,
    user_requests,
)
from .nodes import (
    ANSWER,
    CONTINUES,
    EMBEDS,
    OFFERED,
    STAND_IN,
    STAGE,
    UNTYPED_MESSAGES,
    REFUSED,
    RESULT_CUT,
    RESUMED,
    ROLES,
    RUN_START,
    Evaluation,
    evaluation,
    Message,
    Node,
    ancestors,
    error_text,
    flatten,
    indexed,
    iso_seconds,
    latest_first,
    maybe_json,
    one_node_per_id,
    start_order,
    text_of,
    when,
)
from .outcome import FAIL_LABELS, INFRA_CAUSE, OUTCOME_METRICS, PASS_LABELS, error_outcome, outcome_from

__all__ = [
    "ANSWER",
    "CONTINUES",
    "EMBEDS",
    "OFFERED",
    "RESUMED",
    "STAND_IN",
    "STAGE",
    "UNTYPED_MESSAGES",
    "FAIL_LABELS",
    "OUTCOME_METRICS",
    "PASS_LABELS",
    "REFUSED",
    "RESULT_CUT",
    "ROLES",
    "RUN_START",
    "Assembled",
    "Evaluation",
    "evaluation",
    "Message",
    "Node",
    "SpanFormat",
    "ancestors",
    "assemble",
    "denial",
    "error_outcome",
    "INFRA_CAUSE",
    "error_text",
    "first_user_text",
    "found_tools",
    "flatten",
    "in_tree_order",
    "indexed",
    "iso_seconds",
    "kept_steps",
    "latest_first",
    "maybe_json",
    "no_agent_work",
    "untyped_model_calls",
    "normalise_message",
    "normalise_messages",
    "one_node_per_id",
    "outcome_from",
    "response_output",
    "responses_messages",
    "span_trajectory",
    "start_order",
    "task_from_input",
    "tools_offered",
    "text_of",
    "trajectory_id",
    "retry_feedback",
    "user_requests",
    "when",
]
