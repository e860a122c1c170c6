"""The agentic retrieval loop: RETRIEVE, REFINE_QUERY, CHECK_SUFFICIENCY, GENERATE, STOP.

Each iteration takes one action, chosen by :func:`next_action` in this order:

1. the first iteration retrieves;
2. no documents yet (nothing retrieved for the current query, e.g. just
   after a refinement) retrieves;
3. at ``max_iterations - 1`` it generates, whatever the state;
4. with documents, sufficiency checking on and the current documents not yet
   checked, it checks sufficiency;
5. with a low average score (below ``min_confidence``), refinement on, not
   judged sufficient, and still early (a retrieval still fits before the forced
   generation, and refinements left for the ``reasoning_depth``) it refines;
6. otherwise it generates.

After GENERATE the loop STOPs. With no LLM, refinement keeps error tokens,
identifiers and content words and drops filler; sufficiency means at least
``min_docs_required`` documents with an average similarity of at least
``min_confidence``; "generation" is the formatted, budgeted context.
Self-correction: a refined query whose documents score lower than those it
replaces is abandoned (its documents dropped, the previous query kept).
Documents of several queries are merged by each query's own ranking, never
re-sorted by cosine (see :func:`merge`): exemplars place by place, those of the
retrieval whose strategy the context states first at each place; warnings query
by query, the caller's whole ranking first (the runs that met a pasted error, as
``Runtime.context_for`` shows them), a refinement's only filling places left free.
The strategy reported is the one the context leaves the agent with
(:meth:`~trajsearch.runtime.format.Rendered.stated`, where the formatter says).
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any, Callable, Hashable, Protocol, Sequence

import cachetools
import tenacity

from ..excerpt import BLANK_TEXT, blank
from .advice import FILLER, Exemplar, FailureWarning, Recovery
from .context import RuntimeContext
from .format import Rendered
from .novelty import Strategy


class Action(str, Enum):
    RETRIEVE = "RETRIEVE"
    REFINE_QUERY = "REFINE_QUERY"
    CHECK_SUFFICIENCY = "CHECK_SUFFICIENCY"
    GENERATE = "GENERATE"
    STOP = "STOP"


class RetrievalError(RuntimeError):
    """Retrieval kept failing after every retry."""


class GenerationError(RuntimeError):
    """The LLM (or the formatter) failed to produce the answer."""


class MaxIterationsExceeded(RuntimeError):
    """The loop ran out of iterations without generating (a real overrun, not a forced GENERATE)."""


@dataclass(frozen=True)
class Depth:
    refinements: int
    exemplars: int


#: reasoning_depth -> how many refinements the loop may try, how many exemplars it gathers
DEPTHS = {"shallow": Depth(1, 2), "medium": Depth(2, 3), "deep": Depth(3, 5)}
MAX_WARNINGS = 2


@dataclass(frozen=True)
class LoopConfig:
    max_iterations: int = 5
    min_confidence: float = 0.7
    min_docs_required: int = 2
    enable_refinement: bool = True
    enable_self_correction: bool = True
    enable_sufficiency_check: bool = True
    reasoning_depth: str = "medium"
    cache_ttl_seconds: float = 300.0
    retry_attempts: int = 2
    retry_backoff_base: float = 0.5

    def __post_init__(self) -> None:
        if self.max_iterations < 2:
            raise ValueError("max_iterations must be at least 2 (one retrieval, one generation)")
        if self.reasoning_depth not in DEPTHS:
            raise ValueError(f"reasoning_depth must be one of {sorted(DEPTHS)}")
        if self.retry_attempts < 0 or self.retry_backoff_base < 0 or self.cache_ttl_seconds < 0:
            raise ValueError("retry_attempts, retry_backoff_base and cache_ttl_seconds must be >= 0")

    @property
    def depth(self) -> Depth:
        return DEPTHS[self.reasoning_depth]


@dataclass
class Retrieval:
    """What one retrieval returns (and what the cache holds)."""

    strategy: Strategy
    best_similarity: float | None
    exemplars: list[Exemplar] = field(default_factory=list)
    warnings: list[FailureWarning] = field(default_factory=list)
    #: successful runs that got past a pasted log line: shown, but no document (they judge no sufficiency)
    recoveries: list[Recovery] = field(default_factory=list)


@dataclass
class Document:
    kind: str  # "exemplar" | "warning"
    #: the item's own (its cosine to ``query``): a run found twice is one copy of it, whole (see :func:`merge`)
    similarity: float
    item: Exemplar | FailureWarning
    query: str
    #: where it stands among its kind in the retrieval that found it (0: first), and which retrieval that was
    #: (0: the caller's own query): the documents keep each retrieval's ranking (see :func:`merge`)
    rank: int = 0
    round: int = 0

    @property
    def key(self) -> tuple[str, str]:
        return self.kind, self.item.trajectory_id

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "query": self.query, **self.item.provenance()}


@dataclass
class ActionRecord:
    iteration: int
    action: Action
    query: str
    details: str
    duration: float
    confidence: float
    refined_query: str | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["action"] = self.action.value
        return data


@dataclass
class LoopResult:
    answer: str
    context: str
    documents: list[Document]
    actions: list[ActionRecord]
    iterations: int
    reasoning: str
    confidence: float
    cached: bool
    strategy: Strategy
    #: the runs that got past a pasted error, as the context shows them (no document: they judge no sufficiency)
    recoveries: list[Recovery] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.answer,
            "strategy": self.strategy.value,
            "confidence": round(self.confidence, 3),
            "iterations": self.iterations,
            "cached": self.cached,
            "documents": [d.to_dict() for d in self.documents],
            "recoveries": [{"kind": r.kind, **r.provenance()} for r in self.recoveries],
            "actions": [a.to_dict() for a in self.actions],
            "reasoning": self.reasoning,
        }


class LLM(Protocol):
    """What the loop asks of a language model. Any method may be backed by rules instead."""

    def refine_query(self, query: str, documents: Sequence[Document]) -> str: ...

    def check_sufficiency(self, query: str, documents: Sequence[Document]) -> bool: ...

    def generate(self, query: str, context: str) -> str: ...


Retriever = Callable[[str, RuntimeContext, int], Retrieval]
#: the context for a strategy and the runs chosen: its text, or the :class:`Rendered` context, which also says
#: which strategy it leaves the agent with (none where no exemplar fits its budget, see ``Rendered.stated``)
Formatter = Callable[[Strategy, list[Exemplar], list[FailureWarning], list[Recovery]], "str | Rendered"]

# -- rules used when no LLM is configured ----------------------------------------------------

_TOKEN = re.compile(r"\"[^\"]{1,80}\"|'[^']{1,80}'|[A-Za-z0-9_][\w./:@+-]*")
_ERRORISH = re.compile(r"(Error|Exception|Errno|Warning|Timeout|Fault)\b|^(E\d+|\d{2,})$|exit", re.I)
MAX_REFINED_TOKENS = 32


def _is_identifier(token: str) -> bool:
    return bool(re.search(r"[_./:@]|\d|[a-z][A-Z]", token)) or token.startswith(("'", '"'))


def refine_query(query: str) -> str:
    """Keep error tokens, identifiers and content words (in order), drop filler; error tokens
    and identifiers first when the query has to be shortened."""
    tokens = list(dict.fromkeys(t.strip(".,:;") or t for t in _TOKEN.findall(query)))
    kept = [t for t in tokens if t.lower() not in FILLER and len(t) > 1]
    if len(kept) > MAX_REFINED_TOKENS:
        strong = [t for t in kept if _ERRORISH.search(t) or _is_identifier(t)][:MAX_REFINED_TOKENS]
        rest = [t for t in kept if t not in strong][: MAX_REFINED_TOKENS - len(strong)]
        keep = set(strong) | set(rest)
        kept = [t for t in kept if t in keep]
    return " ".join(kept) or query


def merge(documents: Sequence[Document], found: Sequence[Document], *, lead: int = 0) -> list[Document]:
    """The documents of the retrievals so far and ``found``, exemplars then warnings, each kind best first by the
    rankings of the retrievals that found them, never by cosine: each retrieval is already ranked (exemplars
    reranked and diversified, warnings holding a pasted error line first, whatever their cosine). Sorted by
    cosine, a pasted error's warnings of the runs that met it gave way to closer-worded ones a refinement found,
    and reranked exemplars lost their order (probe 48 U1).

    Exemplars go place by place: the first of each retrieval before the second of any, those of retrieval
    ``lead`` (the one whose strategy the context states: ``follow_closely`` means the first example) first at
    each place, then the earlier retrieval's. Warnings go retrieval by retrieval: the caller's query's whole
    ranking first, a refinement's only filling the places left free, since a refinement drops words and with
    them what marked the runs that met the caller's error (place by place, the refinement's cosine-ranked top
    hit took the second place from a run that had met it: review RU, 1).

    A run found twice is the copy found at the better place, whole: its item (what the context shows), its
    similarity (what :func:`confidence` averages) and its query agree (review RU, 3)."""
    def place(d: Document) -> tuple[int, ...]:
        if d.kind == "exemplar":
            return d.rank, int(d.round != lead), d.round
        return d.round, d.rank

    merged: dict[tuple[str, str], Document] = {}
    for d in [*documents, *found]:
        seen = merged.get(d.key)
        merged[d.key] = d if seen is None else min(seen, d, key=place)
    return sorted(merged.values(), key=lambda d: (d.kind != "exemplar", *place(d)))


def confidence(documents: Sequence[Document], top: int) -> float:
    """Average similarity of the ``top`` best documents (0 with none)."""
    best = sorted((d.similarity for d in documents), reverse=True)[: max(1, top)]
    return sum(best) / len(best) if best else 0.0


# -- the cache --------------------------------------------------------------------------------


class TTLCache(cachetools.TTLCache):
    """A small thread-safe TTL cache (cachetools'). Keys always include the tenant (see
    :meth:`RetrievalLoop.cache_key`). Entries hold whole runs (for formatting), so the default size is small.
    """

    def __init__(self, ttl_seconds: float, *, max_entries: int = 128, clock: Callable[[], float] = time.monotonic):
        super().__init__(maxsize=max_entries, ttl=ttl_seconds, timer=clock)
        self._lock = threading.Lock()

    def get(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            return super().get(key, default)

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self[key] = value


# -- the loop ---------------------------------------------------------------------------------


@dataclass
class LoopState:
    query: str
    iteration: int = 0
    retrieved: bool = False  # documents fetched for the current query
    documents: list[Document] = field(default_factory=list)
    checked: bool = False  # sufficiency judged for the current documents
    sufficient: bool | None = None
    refinements: int = 0
    rounds: int = 0  # retrievals whose documents were kept
    refine_exhausted: bool = False
    previous_query: str | None = None  # the query a refinement replaced (for self-correction)
    best: Retrieval | None = None  # the retrieval with the best similarity: its strategy applies
    best_round: int = 0  # which retrieval that was (its exemplars go first: see merge)
    recoveries: list[Recovery] = field(default_factory=list)  # of every kept retrieval, one per run, first found first
    stated: Strategy | None = None  # the strategy the generated context leaves the agent with, where it says
    cached: bool = False
    context: str = ""
    answer: str | None = None

    @property
    def strategy(self) -> Strategy:
        return self.best.strategy if self.best else Strategy.plan_from_scratch


def next_action(state: LoopState, config: LoopConfig) -> Action:
    """The priority order of the module docstring, as code."""
    if state.answer is not None:
        return Action.STOP
    if state.iteration == 0 or not state.retrieved:
        return Action.RETRIEVE
    if state.iteration >= config.max_iterations - 1:
        return Action.GENERATE
    if state.documents and config.enable_sufficiency_check and not state.checked:
        return Action.CHECK_SUFFICIENCY
    low = confidence(state.documents, config.min_docs_required) < config.min_confidence
    early = state.iteration < config.max_iterations - 2 and state.refinements < config.depth.refinements
    if low and config.enable_refinement and state.sufficient is not True and early and not state.refine_exhausted:
        return Action.REFINE_QUERY
    return Action.GENERATE


class RetrievalLoop:
    """Runs the loop for one query inside one trusted context. Reusable; share ``cache`` across loops."""

    def __init__(
        self,
        retriever: Retriever,
        formatter: Formatter,
        *,
        config: LoopConfig = LoopConfig(),
        llm: LLM | None = None,
        cache: TTLCache | None = None,
        on_action: Callable[[ActionRecord], None] | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.retriever, self.formatter, self.config, self.llm = retriever, formatter, config, llm
        self.cache = cache if cache is not None else TTLCache(config.cache_ttl_seconds)
        self.on_action, self.sleep = on_action, sleep

    # -- public ------------------------------------------------------------------------------

    def run(self, query: str, ctx: RuntimeContext) -> LoopResult:
        if not isinstance(query, str):  # refused in the library's words
            raise ValueError(f"query: must be a string, got {type(query).__name__}")
        if blank(query):
            raise ValueError(f"query: {BLANK_TEXT}")
        state = LoopState(query=query.strip())
        records: list[ActionRecord] = []
        notes: list[str] = []
        while True:
            action = next_action(state, self.config)
            if action is not Action.STOP and state.iteration >= self.config.max_iterations:
                raise MaxIterationsExceeded(f"no answer after {self.config.max_iterations} iterations")
            started, before = time.perf_counter(), state.query
            details, refined = self._step(action, state, ctx)
            record = ActionRecord(
                iteration=state.iteration, action=action, query=before, details=details,
                duration=time.perf_counter() - started,
                confidence=confidence(state.documents, self.config.min_docs_required), refined_query=refined,
            )
            records.append(record)
            notes.append(f"{state.iteration}: {action.value}: {details}")
            if self.on_action is not None:
                self.on_action(record)
            if action is Action.STOP:
                break
            state.iteration += 1
        return LoopResult(
            answer=state.answer or "",
            context=state.context,
            documents=state.documents,
            actions=records,
            iterations=state.iteration,
            reasoning="\n".join(notes),
            confidence=confidence(state.documents, self.config.min_docs_required),
            cached=state.cached,
            strategy=state.stated or state.strategy,
            recoveries=state.recoveries,
        )

    async def arun(self, query: str, ctx: RuntimeContext) -> LoopResult:
        """The same loop off the event loop's thread (retrieval and embedding block)."""
        return await asyncio.to_thread(self.run, query, ctx)

    def cache_key(self, query: str, ctx: RuntimeContext) -> Hashable:
        """Query + the exact filters + tenant (+ what else changes the result)."""
        return (ctx.tenant, query, ctx.filters(), tuple(ctx.tools_available), self.config.depth.exemplars)

    # -- actions -----------------------------------------------------------------------------

    def _step(self, action: Action, state: LoopState, ctx: RuntimeContext) -> tuple[str, str | None]:
        if action is Action.RETRIEVE:
            return self._do_retrieve(state, ctx), None
        if action is Action.CHECK_SUFFICIENCY:
            state.checked = True
            if self.llm is not None:
                state.sufficient = bool(self.llm.check_sufficiency(state.query, state.documents))
            else:
                state.sufficient = (
                    len(state.documents) >= self.config.min_docs_required
                    and confidence(state.documents, self.config.min_docs_required) >= self.config.min_confidence
                )
            return ("sufficient" if state.sufficient else "insufficient") + f" ({len(state.documents)} documents)", None
        if action is Action.REFINE_QUERY:
            refined = (self.llm.refine_query(state.query, state.documents) if self.llm else refine_query(state.query)).strip()
            state.refinements += 1
            if not refined or refined == state.query:
                state.refine_exhausted = True
                return "nothing to refine", None
            state.previous_query, state.query, state.retrieved = state.query, refined, False
            return "query refined", refined
        if action is Action.GENERATE:
            return self._do_generate(state), None
        return "done", None

    def _do_retrieve(self, state: LoopState, ctx: RuntimeContext) -> str:
        retrieval, cached = self._fetch(state.query, ctx)
        state.cached |= cached
        round_ = state.rounds
        found = [Document("exemplar", e.similarity, e, state.query, n, round_)
                 for n, e in enumerate(retrieval.exemplars)]
        found += [Document("warning", w.similarity, w, state.query, n, round_)
                  for n, w in enumerate(retrieval.warnings)]
        recovered = f", {len(retrieval.recoveries)} recoveries" if retrieval.recoveries else ""
        note = f"{len(found)} documents{recovered} ({retrieval.strategy.value}){' from cache' if cached else ''}"
        top = self.config.min_docs_required
        state.retrieved = True
        if (
            state.previous_query is not None
            and self.config.enable_self_correction
            and state.documents
            and confidence(found, top) < confidence(state.documents, top)
        ):
            state.query, state.previous_query, state.refine_exhausted = state.previous_query, None, True
            return note + "; self-correction: the refined query scored lower, kept the previous query and documents"
        state.previous_query, state.checked, state.sufficient = None, False, None
        if state.best is None or (retrieval.best_similarity or 0) > (state.best.best_similarity or 0):
            state.best, state.best_round = retrieval, round_
        state.documents = merge(state.documents, found, lead=state.best_round)
        seen = {r.trajectory_id for r in state.recoveries}
        state.recoveries += [r for r in retrieval.recoveries if r.trajectory_id not in seen]
        state.rounds += 1
        return note

    def _fetch(self, query: str, ctx: RuntimeContext) -> tuple[Retrieval, bool]:
        key = self.cache_key(query, ctx)
        hit = self.cache.get(key)
        if hit is not None:
            return hit, True
        attempts = self.config.retry_attempts + 1
        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_not_exception_type(ValueError),  # the input's fault: the same again
            stop=tenacity.stop_after_attempt(attempts),
            wait=tenacity.wait_exponential(multiplier=self.config.retry_backoff_base, min=0),
            sleep=self.sleep,
        )
        try:
            retrieval = retrying(self.retriever, query, ctx, self.config.depth.exemplars)
        except tenacity.RetryError as exc:
            last = exc.last_attempt.exception()
            raise RetrievalError(f"retrieval failed after {attempts} attempts: {last}") from last
        self.cache.put(key, retrieval)
        return retrieval, False

    def _do_generate(self, state: LoopState) -> str:
        # documents merged over several queries, each query's ranking kept: the best few of each kind
        exemplars = [d.item for d in state.documents if d.kind == "exemplar"][: self.config.depth.exemplars]
        warnings = [d.item for d in state.documents if d.kind == "warning"][:MAX_WARNINGS]
        try:
            context = self.formatter(state.strategy, exemplars, warnings, state.recoveries)
            if isinstance(context, Rendered):  # it says which strategy it leaves the agent with (probe 48 U3)
                context, state.stated = context.text, context.stated(state.strategy)
            state.context = context
            state.answer = self.llm.generate(state.query, state.context) if self.llm else state.context
        except Exception as exc:
            raise GenerationError(f"generation failed: {exc}") from exc
        given = f"{len(exemplars)} exemplars, {len(warnings)} warnings, {len(state.recoveries)} recoveries"
        return given + ("" if self.llm else " (context only, no LLM)")
