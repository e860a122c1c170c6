"""What the library's verbs return: light result types, importable without Milvus, numpy or a model.

The gRPC client, the MCP server and the converters build these from the
wire; the façade builds them from index rows. Keeping them here (not beside
the code that computes them) is what lets ``import trajsearch.client`` stay
free of pymilvus and numpy.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Hit:
    """One matching row: what matched, how well, and where the full run lives."""

    id: str
    score: float  # cosine in dense mode; the fused score in hybrid, BM25 in lexical mode
    level: str
    text: str
    tenant: str
    trajectory_id: str
    step_index: int
    step_end: int
    trace_uri: str
    outcome: str
    reward: float | None = None
    quality_score: float | None = None
    task_id: str = ""
    task_family: str = ""
    env_version: str = ""
    policy_version: str = ""
    tools: list[str] = field(default_factory=list)
    tool_versions: dict[str, str] = field(default_factory=dict)
    created_at: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)
    similarity: float | None = None  # cosine to the query whatever the mode (None: not computed)
    #: ranked first for holding the whole query (fusion's verbatim-first rule, lexical and hybrid modes); carried by
    #: the wire (``Hit.verbatim``), so the weak-match note (:mod:`trajsearch.weak_match`) is judged alike over a server
    verbatim: bool = False
    #: the run's outcome as a reader is told it (``model.outcome_shown``: "submitted, not evaluated"), where the
    #: answer that brought the hit carried it (a server's, known there from the run's summary row); None: not known
    #: without a lookup (the façade's hits, an older server's). Not part of the hit's value: equal hits compare
    #: equal, and ``to_dict`` leaves it out (the CLI writes every hit's outcome shown itself, whichever backend)
    outcome_shown: str | None = field(default=None, compare=False)
    #: the highest cosine to the query of any row the search's dense leg found inside its filters (dense and hybrid
    #: modes), the same on every hit of one answer, shown or not: what the weak-match note judges
    #: (:mod:`trajsearch.weak_match`), so that its verdict hangs neither on ``k`` nor on which rows hybrid's ranks
    #: show; carried by the wire. None: no dense leg (lexical mode), or an older server's. Not part of the hit's
    #: value (a fact of the search, not of the row), and left out of ``to_dict``
    closest: float | None = field(default=None, compare=False)

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Hit:
        names = cls.__dataclass_fields__
        values = {k: v for k, v in row.items() if k in names}
        values.setdefault("score", 0.0)
        values["tools"] = list(values.get("tools") or [])
        values["steps"] = list(values.get("steps") or [])
        return cls(**values)

    def to_dict(self, *, with_steps: bool = False) -> dict[str, Any]:
        data = asdict(self)
        data.pop("outcome_shown")
        data.pop("closest")
        if not with_steps:
            data.pop("steps")
        return data


@dataclass
class StepView:
    """One step as shown around a hit: its position in the run, tool, and compact text."""

    position: int
    index: int
    action: str
    text: str
    #: where the step erred and the run got past that error: the position of the step that did
    #: (``represent.got_past``; None where it did not, or the row was written before representation 23)
    got_past: int | None = None


@dataclass
class RunMatch:
    """A whole run similar to the query, with its best matching step."""

    trajectory_id: str
    score: float
    outcome: str
    task: str
    trace_uri: str
    best: Hit

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["best"] = self.best.to_dict()
        return data


@dataclass
class Rejection:
    source: str
    position: str
    reason: str
    #: the format the record was read as (a dead-letter line's ``format``), None where no format read it
    format: str | None = None

    def __str__(self) -> str:
        return f"{self.source}:{self.position}: {self.reason}"


#: How many runs replaced by another file's an ingest report names (it counts them all).
EXAMPLES_KEPT = 20

#: The ``reason`` a server's ingest answer gives an accepted record whose run replaced a different stored run of its
#: id, read from another file (``Indexer._note_other_files``): the reply's one field per record that an accepted
#: record leaves empty, so that no field need be added to the protocol and an older client reads nothing into it.
OTHER_RUN_REPLACED = "replaced a different stored run of this id, read from another file"


@dataclass
class IngestReport:
    """What an ingest did: ingested (new or changed), unchanged (skipped), rejected (with reasons).

    ``replaced`` counts the copies of a run that another copy read by the same ingest replaced (one session
    saved twice, a run in two dumps): the run lands once, so the counts add up to what was read. Within one
    process's ingest; a run whose first copy was unchanged and a later one differs counts once unchanged and once
    ingested, and ``--workers`` that meet copies of one run in different inputs each count (and write) theirs.

    ``rejected`` keeps the rejections themselves (all of them, or the first
    ``max_kept`` when the caller writes them elsewhere); ``rejected_count``
    counts every one. ``by_format`` splits the three counts per dump format.
    """

    ingested: int = 0
    unchanged: int = 0
    replaced: int = 0
    rows: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    rejected_count: int = 0
    by_format: dict[str, dict[str, int]] = field(default_factory=dict)
    traces_restored: int = 0  # unchanged runs whose missing trace was written again (ingest --restart)
    #: runs read with no verdict of their own that kept the one an outcome file gave them before (see
    #: ``ingest.outcomes.keep_verdict``), whether unchanged or written again
    verdicts_kept: int = 0
    #: stored runs replaced by a different run that took their id from another dump file, see
    #: ``Indexer._note_other_files``; the first :data:`EXAMPLES_KEPT` of them in ``other_runs_examples``:
    #: (trajectory id, the file the stored run was written from when this process read it too, else None, the
    #: file of the run now stored). Counted, not listed: an upgrade's re-ingest may replace a million.
    other_runs_replaced: int = 0
    other_runs_examples: list[tuple[str, str | None, str]] = field(default_factory=list)
    #: stored runs removed because a run read now takes their place (``metadata["supersedes"]``, see ``indexer``)
    superseded: int = 0

    @property
    def total_rejected(self) -> int:
        return max(self.rejected_count, len(self.rejected))

    def count(self, fmt: str | None, what: str, n: int = 1) -> None:
        counts = self.by_format.setdefault(fmt or "trajectory", {"ingested": 0, "unchanged": 0, "rejected": 0})
        counts[what] = counts.get(what, 0) + n

    def merge(self, other: IngestReport, max_kept: int | None = None) -> None:
        self.ingested += other.ingested
        self.unchanged += other.unchanged
        self.replaced += other.replaced
        self.traces_restored += other.traces_restored
        self.verdicts_kept += other.verdicts_kept
        self.superseded += other.superseded
        self.note_other_runs(other.other_runs_examples, other.other_runs_replaced)
        self.rows += other.rows
        self.rejected_count = self.total_rejected + other.total_rejected
        room = len(other.rejected) if max_kept is None else max(0, max_kept - len(self.rejected))
        self.rejected.extend(other.rejected[:room])
        for fmt, counts in other.by_format.items():
            for what, n in counts.items():
                self.count(fmt, what, n)

    def note_other_runs(self, examples: list[tuple[str, str | None, str]], count: int | None = None) -> None:
        """Count ``count`` (default: as many as ``examples``) runs replaced by another file's, keeping the first
        :data:`EXAMPLES_KEPT` examples."""
        self.other_runs_replaced += len(examples) if count is None else count
        self.other_runs_examples.extend(examples[:max(0, EXAMPLES_KEPT - len(self.other_runs_examples))])

    @property
    def read(self) -> int:
        """Runs and records this ingest took in: always ingested + unchanged + replaced + rejected."""
        return self.ingested + self.unchanged + self.replaced + self.total_rejected

    def to_dict(self) -> dict[str, Any]:
        return {
            "read": self.read,
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "replaced": self.replaced,
            "rejected": self.total_rejected,
            "rows_written": self.rows,
            "traces_restored": self.traces_restored,
            "verdicts_kept": self.verdicts_kept,
            "superseded": self.superseded,
            "other_runs_replaced": self.other_runs_replaced,
            "other_runs_replaced_examples": [{"trajectory_id": i, "was_from": before, "now_from": now}
                                             for i, before, now in self.other_runs_examples],
            "by_format": self.by_format,
            "rejections": [vars(r) for r in self.rejected],
        }


@dataclass
class ContextResult:
    """Exemplars or warnings as an agent gets them: the strategy, the items with provenance, the rendered context.

    ``text`` is the context formatted for a prompt within the token budget; ``json`` is that same context as
    structured JSON (the same runs at the same detail, with each run's trace URI, which the text leaves out: the
    budget is counted on the text); ``items`` are the runs it holds, best first, each ``{"kind": exemplar | warning
    | recovery, "provenance": {trajectory_id, trace_uri, env_version, outcome, similarity}, "text": ..., "view": its
    part of ``json``}``. Where nothing was found, ``reason`` and ``note`` say why, in the tool's words
    (:func:`trajsearch.runtime.tool.why_none`: nothing close enough, no run in the context's versions, none at all);
    the Python API's ``text`` and ``json`` stay "" (a caller testing ``if not result.text`` plans from scratch as
    before), and the service's ``Exemplars`` and ``Warnings`` answer with ``text`` the note and ``json``
    ``{"reason", "note"}``. Runs found but all left out by the budget say ``budget_too_small``
    (:func:`trajsearch.runtime.tool.budget_said`), ``text`` and ``json`` the left-out note where it fits. ``json``
    is not counted on the budget (1.4-1.7 times it on the shared dumps, budgets 250-2,000): it is the budgeted
    text's runs as data, for the caller's code rather than a prompt.
    """

    strategy: str
    items: list[dict[str, Any]]
    text: str
    json: str
    #: why nothing was found (:data:`trajsearch.runtime.tool.NO_RESULTS`'s label), "" where something was
    reason: str = ""
    #: the sentence saying ``reason`` to a model or a person
    note: str = ""
