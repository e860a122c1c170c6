"""The analysis' result types: what the CLI, the web page and the gRPC service show.

Plain dataclasses with ``to_dict`` and no logic of the analysis: the service
converts them to and from protobuf (``service/convert.py``), the CLI and the web
page render them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Mapping


def ranked(counts: Mapping[str, int]) -> dict[str, int]:
    """``counts`` most first, ties by name: the one order of a mode's counts (env versions, models, tools), made by
    the analysis and by the client from the server's maps (which arrive unordered). Ties kept the order the traces
    were read in here and were sorted by name there: ``failures --json`` differed over --server."""
    return dict(sorted(((name, int(n)) for name, n in counts.items()), key=lambda kv: (-kv[1], kv[0])))


@dataclass
class FailureExample:
    """One run of a mode, with where to find it."""

    trajectory_id: str
    trace_uri: str
    error: str
    task: str = ""
    env_version: str = ""
    model: str = ""  # from the run's trace ("" when the trace could not be read)
    created_at: int = 0
    similarity: float = 0.0  # cosine of its error's meaning to the mode's centroid

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class FailureMode:
    """Failures of one cause inside the filters: how many, where, how it moves, and examples."""

    mode_id: str
    label: str
    count: int
    share: float  # of the period's failures
    previous: int | None = None  # in the previous period of the same length (None: no period given)
    trend: str = ""  # new | up | down | flat ("" without a period)
    change: float | None = None  # (count - previous) / previous
    env_versions: dict[str, int] = field(default_factory=dict)
    models: dict[str, int] = field(default_factory=dict)  # of the runs whose trace was read
    models_sampled: int = 0  # how many runs of the mode ``models`` and ``tools`` count (their traces read)
    tools: dict[str, int] = field(default_factory=dict)  # of those runs: how many used each tool
    failing_tools: dict[str, int] = field(default_factory=dict)  # tool of the failing step
    templates: list[dict[str, Any]] = field(default_factory=list)  # {"template", "count"}, most first
    examples: list[FailureExample] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["examples"] = [e.to_dict() for e in self.examples]
        return data


@dataclass
class FailureReport:
    """The failure modes of one tenant inside the filters, most frequent first."""

    tenant: str
    since: int | None  # epoch seconds; None: all time
    until: int
    total: int  # failures in the period
    previous_total: int | None = None
    modes: list[FailureMode] = field(default_factory=list)
    other_modes: int = 0  # modes beyond ``limit``
    other_failures: int = 0  # failures in those
    templates: int = 0  # distinct error templates in the period
    rare: int = 0  # failures of the period whose meaning was too rare to embed (grouped by template only)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["modes"] = [m.to_dict() for m in self.modes]
        return data
