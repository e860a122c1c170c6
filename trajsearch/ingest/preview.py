"""Check a mapping before indexing: what each dump file would become, without writing anything.

``trajsearch ingest --dry-run`` prints one :class:`FilePreview` per input file:
the detected format, the runs and rejections it yields (and the traces it
holds that are no run, passed over: ``read.PassedOverGroups``), the steps, the first
run's task, the tools, how many steps failed and how many calls the harness did not run, the outcomes and the
model. Reading is the same as a real ingest's (same adapters, same grouping,
same id disambiguation), so what the preview shows is what would land.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from ..actions import ran
from ..model import outcome_shown
from .adapters._common import DEFAULT_SUCCESS_THRESHOLD, clipped_fields
from .read import KEPT_REJECTIONS, Parsed, PassedOverGroups, Unit, plan_inputs, read_inputs, run_digest
from .sources import OnBytes


@dataclass
class FilePreview:
    """What one input file yields."""

    source: str
    fmt: str | None = None
    runs: int = 0
    rejected: int = 0
    steps: int = 0
    #: Steps that ran and failed; a call the harness did not run (refused by the user or a policy, ``actions.ran``) is
    #: counted in ``not_run`` instead: "errors 5" for five refused calls told a user of five failures.
    errors: int = 0
    not_run: int = 0
    task: str | None = None
    tools: Counter = field(default_factory=Counter)
    #: The runs by outcome as a reader is told it (``model.outcome_shown``): a handed-in patch no verdict judged is
    #: "submitted, not evaluated", as search and show say it, so that a dry run promises no success the index lacks.
    outcomes: Counter = field(default_factory=Counter)
    rewards: list[float] = field(default_factory=list)
    models: Counter = field(default_factory=Counter)
    #: The first :data:`KEPT_REJECTIONS` rejections, each ``{"position", "reason"}`` as an ingest's report names them
    #: (``rejected`` counts them all): a dry run that named only the first had a user fixing a hand-written dump learn
    #: of one mistake per run (probe 50, NC); strings here, dicts there, a script read one or the other (review).
    rejections: list[dict[str, str]] = field(default_factory=list)
    renamed: int = 0
    #: Runs that repeat one read before (the same id, the same content: a line written twice, a file copied into the
    #: folder twice): an ingest stores them once (it says "unchanged"), so they count in none of the numbers above.
    repeated: int = 0
    #: Runs a later save of the same session, read after them, takes the place of (``read.DistinctIds``: a Copilot
    #: chat exported while it ran, then once ended): an ingest counts them "replaced by a later copy", so they are
    #: no longer counted in ``runs`` (the file's steps and tools still say what it holds).
    replaced: int = 0
    #: Runs read with a field clipped to its limit, and the first of them (``{"trajectory_id", "fields"}``), as an
    #: ingest's summary warns of them (``read.ClippedRuns``): a dry run of a 1 MB observation said nothing of it.
    clipped: int = 0
    first_clipped: dict[str, Any] | None = None
    passed_over: dict[str, dict[str, int]] = field(default_factory=dict)  # groups of no run (read.PassedOverGroups)

    def add(self, parsed: Parsed) -> None:
        self.fmt = self.fmt or parsed.fmt
        run = parsed.trajectory
        if run is None:
            self.rejected += 1
            if len(self.rejections) < KEPT_REJECTIONS:
                self.rejections.append({"position": parsed.position, "reason": str(parsed.error)})
            return
        self.runs += 1
        self.steps += len(run.steps)
        self.errors += sum(1 for s in run.steps if s.error and ran(s))
        self.not_run += sum(1 for s in run.steps if not ran(s))
        self.task = self.task or run.task
        self.tools.update(s.action for s in run.steps if s.action)
        self.outcomes[outcome_shown(run)] += 1
        if run.reward is not None:
            self.rewards.append(run.reward)
        if run.model_id:
            self.models[run.model_id] += 1
        if "original_trajectory_id" in run.metadata:
            self.renamed += 1
        if fields := clipped_fields(run):
            self.clipped += 1
            self.first_clipped = self.first_clipped or {"trajectory_id": run.trajectory_id, "fields": fields}

    @property
    def first_rejection(self) -> str | None:
        """The first rejection as one line, "position: reason"."""
        return f"{self.rejections[0]['position']}: {self.rejections[0]['reason']}" if self.rejections else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "format": self.fmt, "runs": self.runs, "rejected": self.rejected,
            "steps": self.steps, "step_errors": self.errors, "steps_not_run": self.not_run, "task": self.task,
            "tools": dict(self.tools.most_common()), "outcomes": dict(self.outcomes),
            "rewards": self.rewards[:20], "models": dict(self.models), "renamed_ids": self.renamed,
            "repeated": self.repeated, "replaced": self.replaced, "clipped": self.clipped,
            "first_rejection": self.first_rejection, "rejections": self.rejections, "passed_over": self.passed_over,
        }


def preview_items(items: Iterable[Parsed]) -> list[FilePreview]:
    """Per-source summaries of parsed records, in order of first appearance. A run that repeats one read before is
    counted as ``repeated`` only: a dry run of a file holding a record twice said "runs 3" where the ingest said
    "ingested 2 runs, unchanged 1" (probe 52, NC3). A run sharing an id with a *different* run is no repeat: the
    reading gave it an id of its own (``read.DistinctIds``); one that keeps the id with other content is a later save
    of the run counted under it, which it replaces: that run is counted ``replaced``, as the ingest counts it."""
    files: dict[str, FilePreview] = {}
    seen: set[tuple[str, str, str]] = set()
    counted: dict[tuple[str, str], FilePreview] = {}  # the file whose run an id's runs count now
    for parsed in items:
        file = files.setdefault(parsed.source, FilePreview(parsed.source))
        run = parsed.trajectory
        if run is not None:
            key = (run.tenant, run.trajectory_id, run_digest(run))
            if key in seen:
                file.fmt = file.fmt or parsed.fmt
                file.repeated += 1
                continue
            seen.add(key)
            if (earlier := counted.get(key[:2])) is not None:
                earlier.runs -= 1
                earlier.replaced += 1
            counted[key[:2]] = file
        file.add(parsed)
    return list(files.values())


def preview(
    paths: Iterable[str | Path],
    *,
    fmt: str | None = None,
    tenant: str = "default",
    defaults: Mapping[str, Any] | None = None,
    group_by: str = "trace",
    outcomes: Any = None,
    success_threshold: float = DEFAULT_SUCCESS_THRESHOLD,
    tenant_set_by: str = "python",
    units: list[Unit] | None = None,
    on_bytes: OnBytes = None,
) -> list[FilePreview]:
    """What ingesting ``paths`` would produce, file by file (nothing is written). ``units`` and ``on_bytes`` as
    :func:`~trajsearch.ingest.read.read_inputs`' (a dry run's progress).

    Argument problems (a missing path, an unknown format, an undetectable
    single file) raise ValueError / FileNotFoundError, as ingest does.
    """
    paths = list(paths)
    if units is None:
        units = plan_inputs(paths, fmt)
    passed_over = PassedOverGroups()
    files = preview_items(read_inputs(paths, fmt=fmt, tenant=tenant, defaults=defaults, group_by=group_by,
                                      outcomes=outcomes, success_threshold=success_threshold, units=units,
                                      passed_over=passed_over, tenant_set_by=tenant_set_by,
                                      on_bytes=on_bytes))
    by_source = {f.source: f for f in files}
    for source, fmt_read in passed_over.sources().items():  # what each file held that is no run (and no rejection)
        if source not in by_source:
            files.append(by_source.setdefault(source, FilePreview(source, fmt_read)))
        by_source[source].passed_over = passed_over.of(source)
    seen = {f.source for f in files}
    # a file that holds no run is listed too, with 0 runs (e.g. a tau2 dir layout's results.json)
    return files + [FilePreview(unit.key, unit.fmt) for unit in units
                    if len(unit.files) == 1 and unit.key not in seen and str(unit.files[0]) not in seen]
