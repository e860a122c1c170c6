"""Library objects <-> protobuf messages, both directions, in one place."""

from __future__ import annotations

from typing import Any

from ..results import Hit, RunMatch, StepView
from .protos import pb2


def hit_to_pb(hit: Hit) -> Any:
    msg = pb2.Hit(
        id=hit.id,
        score=float(hit.score),
        level=hit.level,
        text=hit.text,
        tenant=hit.tenant,
        trajectory_id=hit.trajectory_id,
        step_index=int(hit.step_index),
        step_end=int(hit.step_end),
        trace_uri=hit.trace_uri,
        outcome=hit.outcome,
        task_id=hit.task_id or "",
        task_family=hit.task_family or "",
        env_version=hit.env_version or "",
        policy_version=hit.policy_version or "",
        tools=list(hit.tools or ()),
        tool_versions={str(k): str(v) for k, v in (hit.tool_versions or {}).items()},
        created_at=int(hit.created_at or 0),
    )
    if hit.reward is not None:
        msg.reward = float(hit.reward)
    if hit.quality_score is not None:
        msg.quality_score = float(hit.quality_score)
    if hit.similarity is not None:
        msg.similarity = float(hit.similarity)
    return msg


def hit_from_pb(msg: Any) -> Hit:
    return Hit(
        id=msg.id,
        score=msg.score,
        level=msg.level,
        text=msg.text,
        tenant=msg.tenant,
        trajectory_id=msg.trajectory_id,
        step_index=msg.step_index,
        step_end=msg.step_end,
        trace_uri=msg.trace_uri,
        outcome=msg.outcome,
        reward=msg.reward if msg.HasField("reward") else None,
        quality_score=msg.quality_score if msg.HasField("quality_score") else None,
        task_id=msg.task_id,
        task_family=msg.task_family,
        env_version=msg.env_version,
        policy_version=msg.policy_version,
        tools=list(msg.tools),
        tool_versions=dict(msg.tool_versions),
        created_at=msg.created_at,
        similarity=msg.similarity if msg.HasField("similarity") else None,
    )


def step_to_pb(step: StepView) -> Any:
    return pb2.StepView(position=step.position, index=step.index, action=step.action or "", text=step.text)


def step_from_pb(msg: Any) -> StepView:
    return StepView(position=msg.position, index=msg.index, action=msg.action, text=msg.text)


def match_to_pb(match: RunMatch) -> Any:
    return pb2.RunMatch(
        trajectory_id=match.trajectory_id,
        score=float(match.score),
        outcome=match.outcome,
        task=match.task,
        trace_uri=match.trace_uri,
        best=hit_to_pb(match.best),
    )


def match_from_pb(msg: Any) -> RunMatch:
    return RunMatch(msg.trajectory_id, msg.score, msg.outcome, msg.task, msg.trace_uri, hit_from_pb(msg.best))


def provenance_to_pb(data: dict[str, Any]) -> Any:
    """A runtime provenance dict (``trajectory_id``, ``trace_uri``, ``similarity`` ...) as a message."""
    return pb2.Provenance(
        trajectory_id=str(data.get("trajectory_id", "")),
        trace_uri=str(data.get("trace_uri", "")),
        env_version=str(data.get("env_version") or ""),
        policy_version=str(data.get("policy_version") or ""),
        outcome=str(data.get("outcome") or ""),
        similarity=float(data.get("similarity") or data.get("score") or 0.0),
        level=str(data.get("level") or ""),
        step_index=int(data.get("step_index", -1) if data.get("step_index") is not None else -1),
    )
