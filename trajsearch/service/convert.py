"""Library objects <-> protobuf messages, both directions, in one place."""

from __future__ import annotations

from typing import Any

from ..results import Hit, RunMatch, StepView
from .protos import pb2


def hit_to_pb(hit: Hit) -> Any:
    """Every field :class:`Hit` and the ``Hit`` message share, by name (the proto is the wire's field table)."""
    msg = pb2.Hit()
    for name, field in pb2.Hit.DESCRIPTOR.fields_by_name.items():
        value = getattr(hit, name)
        if value is None:
            continue  # an optional field left unset: "not known", not zero
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            getattr(msg, name).update({str(k): str(v) for k, v in value.items()})
        elif field.is_repeated:
            getattr(msg, name).extend(value)
        else:
            setattr(msg, name, value)
    return msg


def hit_from_pb(msg: Any) -> Hit:
    values: dict[str, Any] = {}
    for name, field in pb2.Hit.DESCRIPTOR.fields_by_name.items():
        if field.has_presence and not msg.HasField(name):
            values[name] = None
        elif field.message_type is not None and field.message_type.GetOptions().map_entry:
            values[name] = dict(getattr(msg, name))
        elif field.is_repeated:
            values[name] = list(getattr(msg, name))
        else:
            values[name] = getattr(msg, name)
    return Hit(**values)


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
