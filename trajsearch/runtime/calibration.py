"""Per-tenant novelty thresholds: where a tenant's own tasks sit, against tasks from elsewhere.

The global ``inspiration`` threshold (:mod:`.novelty`) was set mid-gap on one library. On
others the gap moves: against the retail libraries of three other tau-bench agents,
out-of-domain tasks reached 0.36-0.38, above it, while no retail task of those libraries
held out from them scored below 0.46. A tenant whose own tasks sit that far above the global
threshold gets its own, measured on its library:

- **in domain**: up to ``sample_tasks`` of the tenant's tasks, each searched with every run of
  its task withheld (what a new task of this tenant meets): the ``quantile`` (2%) of their best
  similarities to a successful run's task;
- **out of domain**: the best similarity of any of the fifty :data:`~.probes.PROBES` to a
  successful run's task of the tenant;
- **threshold**: the middle of the two, when the tenant has ``min_tasks`` tasks, the gap is
  at least ``min_gap`` wide and its middle lies above the global threshold; else the global one.

Only ever raised: lowering it where a tenant's tasks sit low too (SWE-bench repositories)
let 2 of 40 out-of-domain tasks through on 500 SWE-bench Verified runs, for the 3 in-domain
tasks it won. Measured with ``scripts/eval_generalise.py`` (see the README).

Calibrating costs one search per sampled task and per probe; it is cached per store and
tenant for ``NoveltyConfig.recalibrate_seconds``, so a library that grows is measured again.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from typing import Callable

from ..search import TrajSearch
from ..store.filters import Filters
from .advice import nothing_to_follow
from .loop import TTLCache
from .novelty import NoveltyConfig
from .probes import PROBES
from .rerank import task_key

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Calibration:
    """A tenant's ``inspiration`` threshold and what it was measured from."""

    tenant: str
    threshold: float
    #: why this threshold: ``calibrated``, or why the global one stands
    basis: str
    tasks: int = 0
    #: the in-domain side: the quantile of held-out tasks' best similarities
    in_domain: float | None = None
    #: the out-of-domain side: the best similarity of any probe
    out_of_domain: float | None = None

    def margins(self) -> tuple[float | None, float | None]:
        """(threshold - out-of-domain side, in-domain side - threshold): how far each side clears it."""
        return (None if self.out_of_domain is None else self.threshold - self.out_of_domain,
                None if self.in_domain is None else self.in_domain - self.threshold)


def calibrate(ts: TrajSearch, tenant: str, config: NoveltyConfig = NoveltyConfig()) -> Calibration:
    """Measure ``tenant``'s threshold now (see the module docstring). Against the successful runs an exemplar can be:
    a run that took no step to follow (:func:`~.advice.nothing_to_follow`) is never offered, and a tenant whose
    successes were all such runs was calibrated against them (round 25, RT8)."""
    floor = config.inspiration
    idle = _nothing_to_follow(ts, tenant)
    runs_of: dict[tuple[str, str], list[str]] = {}
    successful = False
    for row in ts.rows(Filters(tenant=tenant, levels=("task",)), ("trajectory_id", "task_id", "text", "outcome")):
        key = task_key(row["task_id"], row["text"]) or (row["trajectory_id"], "")
        runs_of.setdefault(key, []).append(row["trajectory_id"])
        successful = successful or (row["outcome"] == "success" and row["trajectory_id"] not in idle)
    if len(runs_of) < config.min_tasks:
        return Calibration(tenant, floor, f"global: fewer than {config.min_tasks} tasks", len(runs_of))
    if not successful:
        return Calibration(tenant, floor, "global: no successful run to measure against", len(runs_of))
    sample = sorted(runs_of, key=lambda task: (hashlib.blake2b(task[0].encode(), digest_size=8).digest(), task[1]))
    sample = sample[: config.sample_tasks]
    rows = ts.runs([runs_of[task][0] for task in sample], tenant=tenant, level="task")
    best = []
    for task in sample:
        row = rows.get(runs_of[task][0])
        if row is not None and row.text.strip():
            found = _nearest(ts, row.text, Filters(tenant=tenant, levels=("task",), outcomes=("success",),
                                                   exclude_trajectory_ids=(*runs_of[task], *idle)))
            if found is not None:
                best.append(found)
    if len(best) < config.min_tasks:
        return Calibration(tenant, floor, f"global: fewer than {config.min_tasks} tasks with another task's run",
                           len(best))
    best.sort()
    in_domain = best[int((len(best) - 1) * config.quantile)]
    everyday = Filters(tenant=tenant, levels=("task",), outcomes=("success",), exclude_trajectory_ids=idle)
    out_of_domain = max((s for probe in PROBES if (s := _nearest(ts, probe, everyday)) is not None), default=0.0)
    middle = min((in_domain + out_of_domain) / 2, config.follow_closely)
    if in_domain - out_of_domain < config.min_gap:
        basis = f"global: the gap between this tenant's tasks and tasks from elsewhere is under {config.min_gap}"
    elif middle <= floor:
        basis = "global: the middle of this tenant's gap lies below it"
    else:
        return Calibration(tenant, middle, "calibrated", len(best), in_domain, out_of_domain)
    return Calibration(tenant, floor, basis, len(best), in_domain, out_of_domain)


def _nothing_to_follow(ts: TrajSearch, tenant: str) -> tuple[str, ...]:
    """The tenant's successful runs that took no step to follow, by their summary rows' digests (one read)."""
    rows = ts.rows(Filters(tenant=tenant, levels=("summary",), outcomes=("success",)), ("trajectory_id", "steps"))
    return tuple(sorted(row["trajectory_id"] for row in rows if nothing_to_follow(row["steps"])))


def _nearest(ts: TrajSearch, text: str, filters: Filters) -> float | None:
    hits = ts.search_filtered(text, filters, k=1, group_by_trajectory=False, mode="dense")
    return hits[0].score if hits else None


class Calibrations:
    """Each tenant's :class:`Calibration` for one store, measured on first use and again once it
    is ``config.recalibrate_seconds`` old. Thread-safe; two threads may measure at once (same result)."""

    def __init__(self, ts: TrajSearch, config: NoveltyConfig, *, clock: Callable[[], float] = time.monotonic):
        self.ts, self.config = ts, config
        self._known = TTLCache(config.recalibrate_seconds, max_entries=4096, clock=clock)

    def __call__(self, tenant: str) -> Calibration:
        if not self.config.per_tenant:
            return Calibration(tenant, self.config.inspiration, "global: per-tenant calibration is off")
        known = self._known.get(tenant)
        if known is not None:
            return known
        try:
            measured = calibrate(self.ts, tenant, self.config)
        except Exception as exc:  # the global threshold still judges novelty; measured again next call
            log.warning("novelty calibration of tenant %s failed, using the global threshold: %s", tenant, exc)
            return Calibration(tenant, self.config.inspiration, f"global: calibration failed ({exc})")
        self._known.put(tenant, measured)
        return measured
