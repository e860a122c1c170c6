"""Trusted runtime context -> hard filters.

The context comes from the agent runtime, never from the model: which tenant
the run belongs to, which environment and policy versions apply, which tools
exist right now, and the time. Every search the runtime makes builds its
filters here, so nothing the model says can widen them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Sequence

from ..model import filter_value, valid_tenant
from ..store.filters import Filters, as_tuple


@dataclass(frozen=True)
class RuntimeContext:
    """Who and where the agent runs. ``env_version`` / ``policy_version`` may list several
    acceptable versions; empty means "any". ``tools_available`` feeds reranking, staleness,
    the strategy (runs none of whose tools exists here are never to be followed closely) and
    warnings (a failed run at most half of whose tools exist here was made elsewhere), not the hard
    filters (a run is not inapplicable because it had fewer tools)."""

    tenant: str
    env_version: str | Sequence[str] | None = None
    policy_version: str | Sequence[str] | None = None
    tools_available: Sequence[str] = ()
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def __post_init__(self) -> None:
        valid_tenant(self.tenant)
        for name in ("env_version", "policy_version", "tools_available"):
            object.__setattr__(self, name, _nameable(getattr(self, name), name))
        if self.now.tzinfo is None:
            object.__setattr__(self, "now", self.now.replace(tzinfo=timezone.utc))

    def filters(
        self,
        *,
        levels: Sequence[str] = (),
        outcomes: Sequence[str] = (),
        exclude_trajectory_ids: Sequence[str] = (),
    ) -> Filters:
        """The hard filters for one search: tenant and versions from here, the rest from trusted code."""
        return Filters(
            tenant=self.tenant,
            levels=tuple(levels),
            outcomes=tuple(outcomes),
            env_versions=self.env_version,
            policy_versions=self.policy_version,
            exclude_trajectory_ids=tuple(exclude_trajectory_ids),
        )


def _nameable(values: str | Sequence[str] | None, name: str) -> tuple[str, ...]:
    """``values`` as a tuple, each one a filter can name (:func:`~trajsearch.model.filter_value`): the tools were never
    put in a filter, so ``tools_available=["a\\nb"]`` had been taken here while every other door refuses it. An
    empty value is the library's own ("" is the runs with no version recorded), so it is taken."""
    values = as_tuple(values)
    for value in values:
        filter_value(value, name)
    return values
