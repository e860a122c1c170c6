"""The agent runtime: exemplars and failure warnings as a budgeted, labelled context;
retrieval as a capped tool; the agentic retrieval loop; curation of the library.

    from trajsearch.runtime import Runtime, RuntimeContext

    rt = Runtime(ts)
    ctx = RuntimeContext(tenant="acme", env_version="v2", tools_available=["bash", "edit"])
    prompt = rt.context_for("Fix the failing payments test", ctx)   # .text, .strategy, .tokens
    tool = rt.tool(ctx)              # tool.definition() for the LLM; tool(arguments) to execute
    result = rt.loop().run("ModuleNotFoundError: yaml", ctx)

Everything reads through the :class:`~trajsearch.search.TrajSearch` façade;
tenant and version filters always come from the trusted :class:`RuntimeContext`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..model import Trajectory
from ..results import ContextResult
from ..search import TrajSearch
from . import curate, tracing
from .calibration import Calibration, Calibrations
from .advice import AdviceConfig, Exemplar, ExemplarSet, FailureWarning, Recovery, WarningSet
from .advice import exemplars as _exemplars, task_query, task_query_cut
from .advice import warnings as _warnings
from .context import RuntimeContext
from .curate import CurationResult, DuplicatePolicy, QualityRules, StaleRun, StalenessRules
from .format import FormatConfig, Rendered, TokenCounter, default_counter, render, render_json
from .loop import (
    LLM, ActionRecord, GenerationError, LoopConfig, LoopResult, MaxIterationsExceeded, Retrieval,
    RetrievalError, RetrievalLoop, TTLCache,
)
from .novelty import NoveltyConfig, Strategy
from .rerank import RerankConfig
from .tool import SearchPastRuns, definition as tool_definition, why_empty


@dataclass(frozen=True)
class RuntimeConfig:
    advice: AdviceConfig = AdviceConfig()
    format: FormatConfig = FormatConfig()
    loop: LoopConfig = LoopConfig()
    quality: QualityRules = QualityRules()
    duplicates: DuplicatePolicy = DuplicatePolicy()
    tool_cap: int = 4


@dataclass
class PromptContext:
    """What to put in front of the agent: the rendered context and what it was made of (``exemplars``,
    ``warnings``: the runs the budget let it show, so a log of what the agent saw is true)."""

    strategy: Strategy
    best_similarity: float | None
    text: str
    data: dict[str, Any]
    tokens: int
    exemplars: list[Exemplar] = field(default_factory=list)
    warnings: list[FailureWarning] = field(default_factory=list)
    recoveries: list[Recovery] = field(default_factory=list)
    #: where the context shows no run, why (``Runtime.advice``'s reasons: nothing close enough, no run in the
    #: context's versions, none at all, or ``budget_too_small``), and the sentence saying it; "" where it shows one
    reason: str = ""
    note: str = ""


class Runtime:
    """The runtime verbs over one :class:`TrajSearch`. Thread-safe for reads; the cache is shared."""

    def __init__(self, ts: TrajSearch, config: RuntimeConfig = RuntimeConfig(), *, counter: TokenCounter | None = None):
        self.ts, self.config = ts, config
        self.counter = counter or default_counter()
        self.cache = TTLCache(config.loop.cache_ttl_seconds)
        #: each tenant's novelty threshold, measured on its library on first use (see .calibration)
        self.calibrations = Calibrations(ts, config.advice.novelty)

    def exemplars(self, task: str, ctx: RuntimeContext, k: int | None = None, *,
                  exclude_trajectory_ids: Sequence[str] = ()) -> ExemplarSet:
        with tracing.retrieval("exemplars", task, ctx, k=k or self.config.advice.exemplars_k) as span:
            found = _exemplars(self.ts, task_query(task), ctx, k=k, config=self.config.advice,
                               exclude_trajectory_ids=exclude_trajectory_ids, calibrations=self.calibrations)
            tracing.record_results(span, found.items, strategy=found.strategy.value)
            if found.calibration is not None and span.is_recording():  # why this strategy: the tenant's threshold
                span.set_attributes({"trajsearch.novelty.threshold": round(found.calibration.threshold, 4),
                                     "trajsearch.novelty.basis": found.calibration.basis})
            return found

    def warnings(self, text: str, ctx: RuntimeContext, k: int | None = None, *,
                 exclude_trajectory_ids: Sequence[str] = ()) -> WarningSet:
        with tracing.retrieval("warnings", text, ctx, k=k or self.config.advice.warnings_k) as span:
            found = _warnings(self.ts, task_query(text), ctx, k=k, config=self.config.advice,
                              exclude_trajectory_ids=exclude_trajectory_ids)
            tracing.record_results(span, [*found, *found.recoveries])  # the runs that got past it too
            return found

    def context_for(self, task: str, ctx: RuntimeContext, *, fmt: str = "text", budget: int | None = None,
                    exclude_trajectory_ids: Sequence[str] = ()) -> PromptContext:
        """Exemplars + warnings for ``task``, rendered within the token budget, with the strategy. Where it shows no
        run, ``.reason`` and ``.note`` say why as :meth:`advice` (the gRPC calls, the tool) says it, the runs
        ``exclude_trajectory_ids`` left out counted as the reason where they were all there was; the text stays ""
        but where the budget left every run out: then it is the note saying how many (where even that fits)."""
        with tracing.retrieval("context", task, ctx) as span:
            found = self.exemplars(task, ctx, exclude_trajectory_ids=exclude_trajectory_ids)
            warned = self.warnings(task, ctx, exclude_trajectory_ids=exclude_trajectory_ids)
            rendered = render(found.strategy, found.items, warned, config=self.config.format, fmt=fmt,
                              counter=self.counter, budget=budget, recoveries=warned.recoveries)
            shown = PromptContext(rendered.stated(found.strategy), found.best_similarity, rendered.text, rendered.data,
                                  rendered.tokens,
                                  [item for item, _ in _shown(found.items, rendered.data["exemplars"])],
                                  [item for item, _ in _shown(warned, rendered.data["warnings"])],
                                  [item for item, _ in _shown(warned.recoveries, rendered.data.get("recoveries", []))])
            if not (shown.exemplars or shown.warnings or shown.recoveries):  # said as advice() says it
                shown.reason, shown.note = self._why_empty(task, ctx, "exemplars", rendered,
                                                           held=found.best_similarity is not None,
                                                           excluded=exclude_trajectory_ids,
                                                           none_to_follow=found.none_to_follow)
            # the runs the agent saw, as the PromptContext lists them (not every run found)
            tracing.record_results(span, [*shown.exemplars, *shown.warnings, *shown.recoveries],
                                   strategy=shown.strategy.value,
                                   tokens=rendered.tokens)
            return shown

    def advice(self, kind: str, text: str, ctx: RuntimeContext, *, k: int | None = None,
               budget: int | None = None,
               readable: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())) -> ContextResult:
        """``exemplars`` or ``warnings`` for ``text`` as one :class:`ContextResult` (what the service returns).

        The same verb behind the gRPC ``Exemplars`` / ``Warnings`` calls and the
        CLI's ``exemplars`` command, so every interface renders alike. An empty answer says why in ``reason`` and
        ``note`` (:func:`~trajsearch.runtime.tool.why_none`, looking past the context's versions only as far as
        ``readable``: the service's key pins); it had said so only through the service, the Python caller getting
        "" whether the task was like nothing or the context's versions held no run.
        Runs found but all left out by ``budget`` say :data:`~trajsearch.runtime.tool.BUDGET_TOO_SMALL` and how many.
        ``k``: how many exemplars, or failed runs; a warnings answer adds up to ``AdviceConfig.recoveries_k`` runs that
        got past a pasted error (items of kind ``recovery``), not counted inside ``k``.
        """
        if kind == "exemplars":
            found = self.exemplars(text, ctx, k)
            strategy, exemplars, warnings = found.strategy, found.items, WarningSet(held=False)
            held = found.best_similarity is not None  # (its searches answer why_none's first question)
            none_to_follow = found.none_to_follow
        elif kind == "warnings":
            strategy, exemplars, warnings = None, [], self.warnings(text, ctx, k)
            held, none_to_follow = warnings.held, False
        else:
            raise ValueError(f"kind must be 'exemplars' or 'warnings', got {kind!r}")

        # One rendering, budgeted as the text an agent's prompt gets; the JSON is that same context as data
        # (rendered apart, the more verbose JSON fit fewer runs than the text at one budget).
        context = render(strategy, exemplars, warnings, config=self.config.format, counter=self.counter,
                         budget=budget, recoveries=warnings.recoveries)
        strategy = context.stated(strategy)
        outcome = "success" if kind == "exemplars" else "failure"
        out = [{"kind": item.kind, "provenance": dict(item.provenance(), outcome=outcome),
                "text": getattr(item, "text", "") or getattr(item, "error", ""), "view": view}
               for item, view in _shown(exemplars or warnings, context.data.get(kind, []))]
        # a run that got past the pasted error: its own kind (no run to avoid), its outcome its own
        out += [{"kind": item.kind, "provenance": dict(item.provenance(), outcome=item.outcome), "text": item.text,
                 "view": view} for item, view in _shown(warnings.recoveries, context.data.get("recoveries", []))]
        said = ContextResult(strategy.value if strategy is not None else "", out, context.text,
                             render_json(context.data) if context.text else "")
        if not out:
            said.reason, said.note = self._why_empty(text, ctx, kind, context, held=held, readable=readable,
                                                     none_to_follow=none_to_follow,
                                                     other_tools=warnings.other_tools)
        return said

    def _why_empty(self, text: str, ctx: RuntimeContext, kind: str, context: Rendered, *, held: bool,
                   readable: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
                   excluded: Sequence[str] = (), none_to_follow: bool = False,
                   other_tools: bool = False) -> tuple[str, str]:
        """Why a context of ``kind`` (exemplars, warnings) shows no run, for :meth:`advice` and :meth:`context_for`
        alike: :func:`~trajsearch.runtime.tool.why_empty`, where the tool decides it too (``held``: the caller's
        search found a row of it)."""
        return why_empty(self.ts, text, ctx, "exemplars" if kind == "exemplars" else "failures",
                         omitted=context.omitted, held=held, readable=readable,
                         warning_outcomes=self.config.advice.warning_outcomes, excluded=excluded,
                         none_to_follow=none_to_follow, other_tools=other_tools)

    def tool(self, ctx: RuntimeContext, *, cap: int | None = None) -> SearchPastRuns:
        """A fresh ``search_past_runs`` executor for one agent run, bound to ``ctx``."""
        return SearchPastRuns(self.ts, ctx, cap=cap or self.config.tool_cap, advice=self.config.advice,
                              fmt=self.config.format, counter=self.counter, calibrations=self.calibrations)

    def loop(self, *, llm: LLM | None = None, config: LoopConfig | None = None,
             on_action: Callable[[ActionRecord], None] | None = None) -> RetrievalLoop:
        return RetrievalLoop(self._retrieve, self._format, config=config or self.config.loop, llm=llm,
                             cache=self.cache, on_action=on_action)

    def add_run(self, trajectory: Trajectory, rules: QualityRules | None = None) -> CurationResult:
        return curate.add_run(self.ts, trajectory, rules or self.config.quality, duplicates=self.config.duplicates)

    def staleness_report(self, ctx: RuntimeContext, rules: StalenessRules = StalenessRules()) -> list[StaleRun]:
        return curate.staleness_report(self.ts, ctx, rules)

    def prune(self, ctx: RuntimeContext, stale: Sequence[StaleRun]) -> list[str]:
        return curate.prune(self.ts, ctx.tenant, stale)

    def _retrieve(self, query: str, ctx: RuntimeContext, k: int) -> Retrieval:
        with tracing.retrieval("loop", query, ctx, k=k) as span:
            found = self.exemplars(query, ctx, k)
            warned = self.warnings(query, ctx)
            # the runs that got past a pasted error too, as the warnings span lists them (the loop's context shows them)
            tracing.record_results(span, [*found.items, *warned, *warned.recoveries], strategy=found.strategy.value)
            return Retrieval(found.strategy, found.best_similarity, found.items, list(warned), warned.recoveries)

    def _format(self, strategy: Strategy, exemplars: list[Exemplar], warnings: list[FailureWarning],
                recoveries: list[Recovery]) -> Rendered:
        """The loop's context, whole: the loop reports the strategy it states (``plan_from_scratch`` where the
        budget shows no exemplar), as ``context_for`` does; it had reported ``follow_closely`` (review RU, 2).
        The recoveries :meth:`_retrieve` found are shown too, as ``context_for`` shows them (review RALL-B, 1)."""
        return render(strategy, exemplars, warnings, config=self.config.format, counter=self.counter,
                      recoveries=recoveries)


def _shown(items: Sequence[Exemplar | FailureWarning | Recovery],
           views: Sequence[dict[str, Any]]) -> list[tuple[Exemplar | FailureWarning | Recovery, dict[str, Any]]]:
    """Each item the budgeted context holds, with its view: views come in the items' order, the left-out skipped.
    Matched by trajectory id (one item per run)."""
    pending = iter(views)
    view = next(pending, None)
    shown = []
    for item in items:
        if view is not None and view["provenance"]["trajectory_id"] == item.trajectory_id:
            shown.append((item, view))
            view = next(pending, None)
    return shown


__all__ = [
    "ActionRecord", "AdviceConfig", "Calibration", "Calibrations", "CurationResult", "DuplicatePolicy", "Exemplar",
    "ExemplarSet", "FailureWarning", "Recovery", "FormatConfig", "GenerationError", "LLM", "LoopConfig", "LoopResult",
    "MaxIterationsExceeded", "NoveltyConfig", "PromptContext", "QualityRules", "RerankConfig", "Retrieval",
    "RetrievalError", "RetrievalLoop", "Runtime", "RuntimeConfig", "RuntimeContext", "SearchPastRuns",
    "StaleRun", "StalenessRules", "Strategy", "TTLCache", "TokenCounter", "WarningSet", "tool_definition",
]
