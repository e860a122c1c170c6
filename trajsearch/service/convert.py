"""Library objects <-> protobuf messages, both directions, in one place."""

from __future__ import annotations

from typing import Any

from ..failures import FailureExample, FailureMode, FailureReport
from ..failures.report import ranked
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
    return pb2.StepView(position=step.position, index=step.index, action=step.action or "", text=step.text,
                        got_past=step.got_past)


def step_from_pb(msg: Any) -> StepView:
    return StepView(position=msg.position, index=msg.index, action=msg.action, text=msg.text,
                    got_past=msg.got_past if msg.HasField("got_past") else None)


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


def failure_report_to_pb(report: FailureReport) -> Any:
    """A :class:`~trajsearch.failures.FailureReport` as a ``FailuresResponse``."""
    msg = pb2.FailuresResponse(
        tenant=report.tenant, until=int(report.until), total=int(report.total), other_modes=int(report.other_modes),
        other_failures=int(report.other_failures), templates=int(report.templates), seconds=float(report.seconds),
        rare=int(report.rare), modes=[_mode_to_pb(m) for m in report.modes],
    )
    if report.since is not None:
        msg.since = int(report.since)
    if report.previous_total is not None:
        msg.previous_total = int(report.previous_total)
    return msg


def _mode_to_pb(mode: FailureMode) -> Any:
    msg = pb2.FailureMode(
        mode_id=mode.mode_id, label=mode.label, count=int(mode.count), share=float(mode.share), trend=mode.trend,
        env_versions=mode.env_versions, models=mode.models, models_sampled=int(mode.models_sampled),
        tools=mode.tools, failing_tools=mode.failing_tools,
        templates=[pb2.TemplateCount(template=t["template"], count=int(t["count"])) for t in mode.templates],
        examples=[pb2.FailureExample(
            trajectory_id=e.trajectory_id, trace_uri=e.trace_uri, error=e.error, task=e.task,
            env_version=e.env_version, model=e.model, created_at=int(e.created_at), similarity=float(e.similarity),
        ) for e in mode.examples],
    )
    if mode.previous is not None:
        msg.previous = int(mode.previous)
    if mode.change is not None:
        msg.change = float(mode.change)
    return msg


def failure_report_from_pb(msg: Any) -> FailureReport:
    return FailureReport(
        tenant=msg.tenant,
        since=msg.since if msg.HasField("since") else None,
        until=msg.until,
        total=msg.total,
        previous_total=msg.previous_total if msg.HasField("previous_total") else None,
        modes=[FailureMode(
            mode_id=m.mode_id, label=m.label, count=m.count, share=m.share,
            previous=m.previous if m.HasField("previous") else None, trend=m.trend,
            change=m.change if m.HasField("change") else None,
            env_versions=ranked(m.env_versions), models=ranked(m.models), models_sampled=m.models_sampled,
            tools=ranked(m.tools), failing_tools=ranked(m.failing_tools),
            templates=[{"template": t.template, "count": t.count} for t in m.templates],
            examples=[FailureExample(
                trajectory_id=e.trajectory_id, trace_uri=e.trace_uri, error=e.error, task=e.task,
                env_version=e.env_version, model=e.model, created_at=e.created_at, similarity=e.similarity,
            ) for e in m.examples],
        ) for m in msg.modes],
        other_modes=msg.other_modes,
        other_failures=msg.other_failures,
        templates=msg.templates,
        rare=msg.rare,
        seconds=msg.seconds,
    )
