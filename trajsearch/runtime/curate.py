"""Curation, the flywheel: admit good runs, report and prune stale ones, resolve duplicates.

- :func:`add_run` admits a finished run only if it passes the :class:`QualityRules`
  (success; a step to follow, :func:`~trajsearch.actions.acted`; at most 15 steps; at most 2 retries; verified; see :mod:`trajsearch.steps` for
  how retries and verification are detected), then resolves it against earlier
  successful runs of the same task (same ``task_id`` and task text, :func:`~.rerank.task_key`;
  without an id, the same task text; same env version): each run is valued ``quality * recency``; every run within
  ``close_margin`` (relative) of the best is kept (alternatives), the others are deleted,
  and the new run is not added if it is the one left behind.
- :func:`staleness_report` lists runs older than N days, runs that used tools no
  longer available, and runs of retired env versions; :func:`prune` deletes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Sequence

from ..actions import acted, is_tool
from ..model import Outcome, Trajectory
from ..represent import MAX_ROW_CHARS
from ..search import TrajSearch
from ..store.filters import Filters
from ..store.traces import TraceStoreError
from ..touched import tool_kind
from .context import RuntimeContext
from .rerank import NEUTRAL, task_key
from ..steps import retry_positions, verified

_RUN_FIELDS = ["trajectory_id", "task_id", "text", "env_version", "quality_score", "reward", "created_at", "tools", "trace_uri"]


@dataclass(frozen=True)
class QualityRules:
    require_success: bool = True
    #: a tool call or an answer to the user, something an agent shown the run can follow (:func:`~trajsearch.actions.acted`)
    require_action: bool = True
    max_steps: int | None = 15
    max_retries: int | None = 2
    require_verification: bool = True
    #: an environment reward at or above this counts as verification (None: tests only)
    reward_verifies_at: float | None = 1.0


@dataclass(frozen=True)
class DuplicatePolicy:
    enabled: bool = True
    close_margin: float = 0.05  # relative: within 5% of the best value counts as close
    half_life_days: float = 180.0


@dataclass
class CurationResult:
    accepted: bool
    trajectory_id: str
    reasons: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # worse runs of the same task, deleted
    kept_alongside: list[str] = field(default_factory=list)  # close runs of the same task, kept


def check(trajectory: Trajectory, rules: QualityRules = QualityRules()) -> list[str]:
    """Why ``trajectory`` should not enter the library (empty: it may)."""
    reasons = []
    if rules.require_success and trajectory.outcome is not Outcome.success:
        reasons.append(f"outcome is {trajectory.outcome.value}, not success")
    if rules.require_action and not acted(s.action for s in trajectory.steps):
        reasons.append(f"no step to follow (no tool call, no answer) in its {len(trajectory.steps)} steps")
    if rules.max_steps is not None and len(trajectory.steps) > rules.max_steps:
        reasons.append(f"{len(trajectory.steps)} steps > {rules.max_steps}")
    retries = len(retry_positions(trajectory.steps))
    if rules.max_retries is not None and retries > rules.max_retries:
        reasons.append(f"{retries} retries > {rules.max_retries}")
    if rules.require_verification and not verified(trajectory, reward_at_least=rules.reward_verifies_at):
        reasons.append("no verification step (no passing test run as the last test run, no full reward)")
    return reasons


def _value(quality_score: float | None, reward: float | None, created_at: float, now: datetime, half_life: float) -> float:
    quality = quality_score if quality_score is not None else (
        min(1.0, max(0.0, reward)) if reward is not None else NEUTRAL
    )
    age_days = max(0.0, (now.timestamp() - created_at) / 86_400)
    return quality * 0.5 ** (age_days / half_life)


def _runs(ts: TrajSearch, filters: Filters) -> list[dict[str, Any]]:
    return list(ts.rows(filters, _RUN_FIELDS))


def add_run(
    ts: TrajSearch,
    trajectory: Trajectory,
    rules: QualityRules = QualityRules(),
    *,
    duplicates: DuplicatePolicy = DuplicatePolicy(),
    now: datetime | None = None,
) -> CurationResult:
    """Gate, de-duplicate against the same task, and index ``trajectory``."""
    result = CurationResult(False, trajectory.trajectory_id, reasons=check(trajectory, rules))
    if result.reasons:
        return result
    if duplicates.enabled:
        now = now or datetime.now(trajectory.created_at.tzinfo)
        same = [r for r in _same_task_runs(ts, trajectory) if r["trajectory_id"] != trajectory.trajectory_id]
        values = {r["trajectory_id"]: _value(r["quality_score"], r["reward"], r["created_at"], now, duplicates.half_life_days) for r in same}
        mine = _value(trajectory.quality_score, trajectory.reward, trajectory.created_at.timestamp(), now, duplicates.half_life_days)
        best = max([mine, *values.values()])
        floor = best * (1 - duplicates.close_margin)
        if mine < floor:
            leader = max(values, key=values.__getitem__)
            result.reasons.append(f"a better run of the same task is already kept: {leader}")
            return result
        for tid, value in values.items():
            (result.removed if value < floor else result.kept_alongside).append(tid)
    ts.add([trajectory])  # add first: a failed add must not leave the task with no run at all
    for tid in result.removed:
        ts.delete(tid, tenant=trajectory.tenant)
    result.accepted = True
    return result


def _same_task_runs(ts: TrajSearch, trajectory: Trajectory) -> list[dict[str, Any]]:
    filters = Filters(
        tenant=trajectory.tenant, levels=("task",), outcomes=("success",),
        env_versions=(trajectory.env_version or "",),
    )
    text = trajectory.task[:MAX_ROW_CHARS]  # what its task row will hold
    mine = task_key(trajectory.task_id or "", text)
    return [r for r in _runs(ts, filters)
            if (task_key(r["task_id"], r["text"]) == mine if mine else not r["task_id"] and r["text"] == text)]


@dataclass(frozen=True)
class StalenessRules:
    max_age_days: float | None = None
    retired_env_versions: tuple[str, ...] = ()
    #: flag runs that used a tool missing from the context's ``tools_available`` (if it lists any)
    check_tools: bool = True


@dataclass
class StaleRun:
    trajectory_id: str
    reasons: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"trajectory_id": self.trajectory_id, "reasons": self.reasons}


def staleness_report(ts: TrajSearch, ctx: RuntimeContext, rules: StalenessRules = StalenessRules()) -> list[StaleRun]:
    """Runs of ``ctx``'s tenant and policy versions that are too old, need a missing tool, or ran on a
    retired env, among the runs of ``ctx``'s env versions and of the retired ones (naming an env retired
    is asking for its runs, which the agent's own new-env context leaves out). Only runs of ``ctx``'s
    env versions are judged by its tools: ``ctx.tools_available`` is what exists where *this* context
    runs, and judging another env's runs by it condemned a coding agent's runs for the ``bash`` an airline
    agent lacks. Runs of other, unnamed envs are not read."""
    available = set(ctx.tools_available)
    judged = ctx.filters(levels=("task",))
    if judged.env_versions:  # any env: every run of the tenant is read already
        judged = replace(judged, env_versions=(*judged.env_versions, *rules.retired_env_versions))
    report = []
    for row in _runs(ts, judged):
        reasons = []
        age_days = (ctx.now.timestamp() - row["created_at"]) / 86_400
        if rules.max_age_days is not None and age_days > rules.max_age_days:
            reasons.append(f"older than {rules.max_age_days:g} days ({age_days:.0f})")
        if row["env_version"] and row["env_version"] in rules.retired_env_versions:
            reasons.append(f"env version {row['env_version']} is retired")
        in_context = not ctx.env_version or row["env_version"] in ctx.env_version
        if rules.check_tools and available and in_context and _missing(row["tools"] or (), available):
            missing = _missing_tools(ts, row, ctx.tenant, available)
            if missing:
                reasons.append("used tools no longer available: " + ", ".join(missing))
        if reasons:
            report.append(StaleRun(row["trajectory_id"], reasons))
    return sorted(report, key=lambda s: s.trajectory_id)


def _missing_tools(ts: TrajSearch, row: dict[str, Any], tenant: str, available: set[str]) -> list[str]:
    """The row lists the tools a run *had*; the trace says which it *used*."""
    try:
        used = ts.get_trace(row["trace_uri"], tenant=tenant).tools_used
    except (TraceStoreError, LookupError, OSError):
        used = list(row["tools"] or ())
    return _missing(used, available)


def _missing(tools: Sequence[str], available: set[str]) -> list[str]:
    """The tools of ``tools`` that are not ``available``, the actions that call no tool aside
    (:func:`~trajsearch.actions.is_tool`): the agent's replies (``respond``), SWE-agent's stops (``exit_cost``), a
    runtime lists none of them, so a context naming every tool its agent has flagged each run that ever spoke as
    "used tools no longer available: respond", and ``prune`` deleted them all (probe 52, RT1: 365 of 365
    tau-bench and tau2 runs against the airline and retail envs' own tool lists), and so every SWE-agent run
    stopped at a limit, for its ``exit_cost`` (RT1's review). Tools compare by kind, as warnings compare them
    (:func:`~trajsearch.touched.tool_kind`): under OpenHands' ``execute_bash`` a ``bash`` run misses no tool."""
    kinds = {tool_kind(tool) for tool in available}
    return [t for t in tools if tool_kind(t) not in kinds and is_tool(t)]


def prune(ts: TrajSearch, tenant: str, stale: Sequence[StaleRun]) -> list[str]:
    """Delete the runs of a staleness report (rows and traces); returns their ids."""
    for run in stale:
        ts.delete(run.trajectory_id, tenant=tenant)
    return [run.trajectory_id for run in stale]
