"""Exemplars (successful runs to adapt) and warnings (failed runs: what not to do).

Both search inside the hard filters of the trusted :class:`RuntimeContext`,
one hit per trajectory, and come back with provenance and the run's *digest*
(what the formatter shows of it, stored with its summary and failure rows at
ingest: :mod:`trajsearch.digest`). The full run is read from the trace store
only where no digest can serve: a row written before digests existed, or a
format asking for more than a digest keeps.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..actions import acted
from ..blobs import without_blobs
from ..bounds import MAX_QUERY_CHARS
from ..digest import UNCAPPED, Clip, ExemplarDigest, WarningDigest, from_row_steps, exemplar_digest, warning_digest
from ..excerpt import query_text, unseen
from ..failures.rows import verdict_only
from ..fusion import FusionConfig, looks_like_log
from ..model import Trajectory
from ..ingest.adapters._common import CLIP_MARKER
from ..represent import CUT_MARK, MAX_ROW_CHARS, clip, mark_pattern
from ..results import Hit
from ..search import TrajSearch
from ..store.filters import Filters
from ..store.tokenize import tokenize_query
from ..store.traces import TraceStoreError
from ..touched import FILES_SHOWN, SHELL, identifiers
from . import where
from .context import RuntimeContext
from ..memo import call_memo
from .novelty import NoveltyConfig, Strategy, strategy_for
from .rerank import (RerankConfig, Scored, calls_made, changed_files, created_files, diversify, file_key, named_files,
                     rerank, task_homes, task_key, tool_kinds, tool_overlap, touched_names, touched_scores, work_done)

if TYPE_CHECKING:  # the calibration module caches with the loop's TTLCache, and the loop imports this
    from .calibration import Calibration

log = logging.getLogger(__name__)

#: Characters of a long task or pasted text each end keeps when it is searched (:func:`task_query`).
QUERY_END_CHARS = MAX_QUERY_CHARS // 2 - 50  # room for clip's marker


def task_query(text: str) -> str:
    """``text`` as a search takes it: a task or pasted error over ``MAX_QUERY_CHARS`` keeps its head and tail
    (:data:`QUERY_END_CHARS` each), as ingest clips a run's task, rather than the agent getting an error for its real
    task (probe E2, E2-3: 2 of SWE-bench Verified's 500 issues hold 22-25k characters, a ``pip list`` among them).
    Its length is read with each encoded blob as its placeholder, as the search reads it (:func:`~trajsearch.excerpt.
    query_text`): a screenshot's base64 is no reason to cut the words around it."""
    return task_query_cut(text)[0]


def task_query_cut(text: str) -> tuple[str, int | None]:
    """:func:`task_query`'s text and, only where it was cut, the length it was cut from (as read, each blob as its
    placeholder), for what the reader is told: the one rule of "was the query cut" for the CLI's note, the web
    form's and the tool's ``query_searched``. Each had its own (review SMALLB 4): the tool compared the raw paste and
    told the model a 2,512-character error with a screenshot was searched by "its first and last 9,950 of 2,512"."""
    text = without_blobs(text)
    if len(text) <= MAX_QUERY_CHARS:
        return text, None
    return clip(text, QUERY_END_CHARS, QUERY_END_CHARS), len(text)


@dataclass(frozen=True)
class AdviceConfig:
    exemplars_k: int = 3
    warnings_k: int = 2
    #: candidates fetched per exemplar asked for (reranking and diversity need spares)
    pool_factor: int = 5
    #: the task leg fetches this many times deeper: runs of one task share its text (retries,
    #: trials), so its nearest rows are a few tasks over and over, and diversity keeps one run per
    #: task. Leave-task-out (scripts/eval_generalise.py), recall@3 of a run doing the same work: 0.850
    #: -> 0.875 (tau-bench airline 0.842 -> 0.868), retail (held out) 0.707 either way; eval_runtime
    #: unchanged; `context_for` about 1 ms slower (one process, alternated, 10k rows). Only the rows of
    #: the first ``pool`` tasks are kept: with one run per task the deeper rows added candidates that
    #: won on reranking features alone (SWE-bench Verified, 500 runs: recall@3 0.757 -> 0.780).
    task_depth: int = 2
    #: more candidates: runs whose summary (its "Touched:" line) names what the task names, by the lexical leg
    touched_candidates: int = 10
    #: and runs whose summary names a source file the task names outright (a path, a link to one),
    #: looked up on their own (see ``RerankConfig.w_where``)
    named_file_candidates: int = 10
    #: Exemplars cover the files the task's work likely lies in (:mod:`.where`): each place goes to
    #: the best score plus this times the likelihood of the files the run changed that no exemplar
    #: before it changed (see :func:`~.rerank.diversify`). Leave-task-out on 500 held-out
    #: mini-swe-agent runs of SWE-bench Verified (scripts/eval_generalise.py --swe, 299 findable
    #: tasks), recall@3 of a run editing a same file 0.826 -> 0.863 (@1 0.569 -> 0.579), at 0.4 and 3.0 within
    #: 0.01 of it (offline, on the candidate pools); tau-bench unchanged (no files: no search). 0: off.
    cover_weight: float = 1.0
    #: The step rows nearest the task whose named source files vote on where its work lies (one dense
    #: search of the tenant's step rows, only where candidates changed files at all). 0: none.
    cover_steps: int = 60
    #: The likeliest files (:mod:`.where`) that no candidate changed are looked up: the successful runs
    #: that changed them (up to ``likely_file_runs`` each, by the lexical leg over the summaries' ``Touched:``
    #: lines) become candidates, until ``likely_files_looked_up`` of the likeliest have a run that changed them
    #: (a file no run changed gives its lookup to the next: ``likely_files_checked``). The steps and the task's
    #: named code often know where the work lies when no run near the task's wording changed that file
    #: (``urlize()`` lives in ``utils/html.py``; the runs that changed it were worded otherwise).
    #: Leave-task-out on 500 mini-swe-agent runs of SWE-bench Verified (299 findable tasks; the set the
    #: cover was tuned on), recall@3 0.890 -> 0.893, the same for the first 5 files; tau-bench unchanged (no
    #: files). 0: off.
    likely_files_looked_up: int = 3
    #: runs looked up per such file (those that only read or named it are dropped)
    likely_file_runs: int = 5
    #: How far down the likeliest files the lookups go to find ``likely_files_looked_up`` of them that some
    #: successful run changed. A file no successful run of the tenant changed is no place an exemplar can
    #: cover, yet the steps and the task's words vote for many: the user's own ``settings.py`` or
    #: ``manage.py`` named in a report, an agent's ``reproduce_app/models.py``, a scratch migration. Such a
    #: file (no candidate changed it, and no run its lookup finds did) takes no lookup's place: the next one
    #: is looked up instead, up to this many lookups (it stays among the likeliest for the cover and the
    #: grounding: review RR11). Exemplar-only leave-task-out recall@3 (@1):
    #: SWE-agent gpt-4 Lite cost_2_2 0.861 -> 0.889 (0.667; sympy-20639's one relevant run changed the sixth
    #: likeliest file, under two scratch scripts and a file no run changed); gemini-3-pro 0.871 (0.572), CodeR
    #: 0.939 (0.571), cost_2_1 0.893 (0.679), held-out cost_2_3 0.828 (0.586), the shared dumps and tau2 unchanged.
    likely_files_checked: int = 6
    #: The calls the task names decide the last places (``RerankConfig.call_slots``), but a run found
    #: only by the call it made (``book`` of ``book_reservation``; its task worded otherwise) was never
    #: a candidate (probe E, E4). So the task's words that no candidate's state-changing calls hold
    #: (the first ``named_call_words`` of them as written; filler, numbers and the parts of identifiers
    #: left out) are looked up one by one, by the lexical leg over the successful runs' summaries (which
    #: name each call in their approach, key actions and ``Touched:`` line): up to ``named_call_runs``
    #: runs per word, kept only where one of their state-changing calls holds the word. Only while call
    #: places are in use. The shared tau-bench airline tenant: 11-t0 (the one successful booking) now
    #: takes the probe's last place (17-t3 did, a ``calculate``); leave-task-out (scripts/eval_generalise.py)
    #: unchanged: tau 0.658 / 0.895, swe 0.500 / 1.000, tau2 airline 0.611 / 0.861; scripts/eval_runtime.py
    #: recall unchanged; ``exemplars`` p50 6.5 -> 8.5 ms there (303 queries). 0: off.
    named_call_words: int = 8
    named_call_runs: int = 3
    #: A candidate one of whose step rows is among the ``cover_steps`` nearest the task, at a cosine of at
    #: least the novelty threshold, scores this much more (feature ``steps``, 0 or 1): its commands and outputs
    #: read like the task, so it worked on the same things, however its task and summary were worded (a rank
    #: alone is no such evidence where the tenant holds few step rows: probe E3, A1). The rows come from the
    #: search the cover makes anyway (none where no candidate changed a file: a support desk's runs).
    #: Leave-task-out on 500 mini-swe-agent runs of SWE-bench Verified (299 findable tasks; the set the
    #: cover was tuned on), recall@3 0.893 -> 0.900 (offline on the candidate pools 0.900 at 0.05, 0.10 and
    #: 0.20, no task lost at any); tau-bench unchanged (no files: no search). 0: off.
    near_step_weight: float = 0.10
    #: The step rows (and passages of long outputs) the lexical leg ranks best for the task's identifiers
    #: (:func:`trajsearch.touched.identifiers`: paths, dotted names, CamelCase and snake_case names), of any
    #: run and outcome, vote on where its work lies too (``where.NAMED_STEP_WEIGHT``): a file view, a grep
    #: hit or a traceback showing ``execute_sql_flush`` shows where it lives, which the nearest rows by
    #: the task's wording may not. One lexical search, only where the cover searches at all and the task
    #: names something. 0: off.
    cover_named_steps: int = 20
    #: A task below the novelty threshold (the tenant's, else ``novelty.inspiration``) but at least this close
    #: to a successful run's task still gets exemplars when it names code by an identifier (a path, a class, a
    #: function: :func:`trajsearch.touched.identifiers`) that a candidate changed (feature ``named``): its
    #: wording is far from the library's, its code is not. Only the runs ``_grounded`` keeps are shown (those
    #: the work says are near). 0.29 is the out-of-domain side of the gap the global threshold was calibrated
    #: on (40 out-of-domain tasks at most 0.290, scripts/eval_runtime.py), and a task written as prose names
    #: no identifier: of those 40 and the 50 calibration probes, 4 name one (``PostgreSQL``, ``MySQL``,
    #: ``Node.js``, ``iOS``). CodeR's SWE-bench Lite runs (held out): django-14608 ("Add `nonform` CSS class
    #: for non form errors in FormSets", 0.304) and sympy-14317 ("LaTeX printer ...", 0.312) had been given
    #: nothing; recall@3 0.857 -> 0.898 (@1 0.551 -> 0.592), the other SWE sets unchanged (no task gated).
    #: 1.0 or more: off.
    named_code_floor: float = 0.29
    rerank: RerankConfig = RerankConfig()
    novelty: NoveltyConfig = NoveltyConfig()
    #: failure rows below this cosine are not shown (an unrelated failure teaches nothing)
    warning_min_similarity: float = 0.40
    #: infra errors (rate limits, crashed harness) say nothing about how to do the task
    warning_outcomes: tuple[str, ...] = ("failure",)
    #: for a pasted log line, up to this many successful runs whose steps met it, with what each did next
    #: (:func:`_recoveries`): how past runs got past the error the agent is stuck on, added to the ``warnings_k`` (or
    #: ``k``) failed runs, not counted among them (the tool's ``k`` says so): the answer is bounded by its tokens
    #: whatever ``k``, and inside ``k=1`` a recovery would cost the failed run, or the failed run the recovery (review
    #: RRT6, 3); 0: off
    recoveries_k: int = 1


@dataclass
class _Provenance:
    """Where an item came from, shown with it (the fields every exemplar and warning starts with)."""

    trajectory_id: str
    trace_uri: str
    env_version: str
    similarity: float

    def provenance(self) -> dict[str, Any]:
        shown = {name: getattr(self, name) for name in _Provenance.__dataclass_fields__}
        return dict(shown, similarity=round(self.similarity, 3))

    def load_trace(self) -> Trajectory | None:
        """The full run, read from the trace store once, on demand (None if it is gone)."""
        if self.trajectory is None and self.reader is not None:  # type: ignore[attr-defined]
            self.trajectory, self.reader = self.reader(), None  # type: ignore[attr-defined]
        return self.trajectory  # type: ignore[attr-defined]


@dataclass
class Exemplar(_Provenance):
    """A successful past run to adapt."""

    #: what the item is, as every interface names it (``Runtime.advice``'s items, gRPC's ``ContextItem.kind``, spans)
    kind = "exemplar"

    score: float
    features: dict[str, float]
    text: str
    trajectory: Trajectory | None = None  # the full run, where it had to be read (see ``digest``)
    digest: ExemplarDigest | None = None  # what is shown of the run; None: only its row (the trace is gone)
    reader: Callable[[], Trajectory | None] | None = field(default=None, repr=False, compare=False)


@dataclass
class ExemplarSet:
    strategy: Strategy
    #: the cosine of the nearest successful task inside the context's filters; None: they hold none
    best_similarity: float | None
    items: list[Exemplar] = field(default_factory=list)
    #: the tenant's novelty threshold the strategy was judged against, and why it is that (see
    #: :mod:`.calibration`)
    calibration: Calibration | None = None
    #: whether the successful runs nearest the task were there but each took no step to follow
    #: (:func:`_nothing_to_follow`): an empty answer says so, not that no successful run is recorded
    none_to_follow: bool = False


@dataclass
class FailureWarning(_Provenance):
    """A failed past run: what not to do, with the error, its cause and fix where recorded."""

    kind = "warning"  # (see Exemplar.kind)

    task: str
    error: str
    cause: str | None = None
    fix: str | None = None
    what_failed: str | None = None
    failing_step: str | None = None
    #: the step of the run holding the pasted text (found in its steps: :func:`_steps_holding`), else None
    step_holding: str | None = None
    #: what the run handed in, from its summary's ``Touched:`` line (:func:`handed_in`), else None
    handed_in: str | None = None
    trajectory: Trajectory | None = None  # the full run, where it had to be read (see ``digest``)
    digest: WarningDigest | None = None  # what is shown of the run (from its row at least)
    reader: Callable[[], Trajectory | None] | None = field(default=None, repr=False, compare=False)


def search(
    ts: TrajSearch, text: str, filters: Filters, *, k: int, grouped: bool = True, mode: str = "dense"
) -> list[Hit]:
    """One search through the façade, one hit per trajectory unless ``grouped`` is off."""
    return ts.search_filtered(text, filters, k=k, group_by_trajectory=grouped, group_size=1, mode=mode)


def similarity(hit: Hit) -> float:
    """The cosine to the query, whatever the search mode (a fused score is a rank, not a cosine)."""
    return hit.similarity if hit.similarity is not None else hit.score


def load_trace(ts: TrajSearch, hit: Hit, tenant: str) -> Trajectory | None:
    try:
        return ts.get_trace(hit.trace_uri, tenant=tenant)
    except (TraceStoreError, LookupError, OSError) as exc:  # a row whose trace is gone: show the row only
        log.warning("trace %s of %s unavailable: %s", hit.trace_uri, hit.trajectory_id, exc)
        return None


def _candidates(
    ts: TrajSearch, task: str, ctx: RuntimeContext, by_task: list[Hit], k: int, exclude: Sequence[str],
    touched_k: int, named_k: int = 0, names: Sequence[str] | None = None, known: dict[str, Hit] | None = None,
) -> tuple[list[Hit], dict[str, Hit]]:
    """One candidate per run (its better row of task and summary), and each run's summary row.

    Candidates come from three searches inside the same hard filters: the task's nearest
    ``task`` rows (``by_task``, searched first: novelty is judged on them) and nearest
    ``summary`` rows (dense: one search per level, a run has exactly one row of each, so no
    group_by is needed), and the runs whose summary names what the task names: the task's
    identifiers (paths, modules, classes, functions, test ids; :func:`trajsearch.touched.identifiers`)
    looked up by BM25 in the summaries' ``Touched:`` lines, so a run that changed the module a
    task names is a candidate even when its task was worded otherwise (and the source files it
    names outright, :func:`~.rerank.named_files`, looked up on their own: ``named_k`` runs). Their
    task and summary rows are then scored by key (:meth:`TrajSearch.score_runs`) like every other
    candidate.

    The summary rows come in one lookup by key at the end, with their stored vectors (remembered
    by ``TrajSearch.runs``, so diversity embeds nothing) and digests (what an exemplar shows).
    ``names``: the task's identifiers when already at hand; ``known``: summary rows already read (with vectors).
    """
    best: dict[str, Hit] = {}

    def keep(hit: Hit) -> None:
        if hit.trajectory_id not in best or hit.score > best[hit.trajectory_id].score:
            best[hit.trajectory_id] = hit

    summary = ctx.filters(levels=("summary",), outcomes=("success",), exclude_trajectory_ids=exclude)
    for hit in [*by_task, *search(ts, task, summary, k=k, grouped=False)]:  # dense: thresholds are cosines
        keep(hit)
    names = identifiers(task) if names is None else names
    files = sorted(named_files(task, names)) if named_k else []
    new = [t for t in ts.lexical_runs(_lexical_query(names), summary, k=touched_k) if t not in best] \
        if names and touched_k else []
    if files:  # the files it names outright, on their own: among many identifiers they weigh little
        new += [t for t in ts.lexical_runs(_lexical_query(files), summary, k=named_k)
                if t not in best and t not in new]
    if new:
        for hit in ts.score_runs(task, new, ctx.filters(levels=("task", "summary"), outcomes=("success",))):
            keep(hit)
    known = known or {}
    unread = [t for t in best if t not in known]
    summaries = {t: known[t] for t in best if t in known}
    summaries |= ts.runs(unread, tenant=ctx.tenant, level="summary") if unread else {}
    return sorted(best.values(), key=lambda h: -h.score), summaries


def exemplars(
    ts: TrajSearch,
    task: str,
    ctx: RuntimeContext,
    *,
    k: int | None = None,
    config: AdviceConfig = AdviceConfig(),
    exclude_trajectory_ids: Sequence[str] = (),
    calibrations: Callable[[str], Calibration] | None = None,
) -> ExemplarSet:
    """Up to ``k`` successful runs to adapt, reranked and diversified, with the strategy.

    Reranking weighs what each run touched against the task (see :mod:`.rerank`); diversity
    keeps one run per trajectory and per task. ``exclude_trajectory_ids`` is for trusted
    callers (the current run, evaluation). ``calibrations`` gives the tenant's novelty threshold
    (a :class:`~.calibration.Calibrations`); none: the configured one.
    """
    with call_memo():  # each summary's Touched: line and step row's files read once in the call (trajsearch.memo)
        return _exemplars(ts, task, ctx, k, config, exclude_trajectory_ids, calibrations)


def _exemplars(ts: TrajSearch, task: str, ctx: RuntimeContext, k: int | None, config: AdviceConfig,
               exclude_trajectory_ids: Sequence[str], calibrations: Callable[[str], Calibration] | None) -> ExemplarSet:
    """:func:`exemplars`, ``task`` read as every search reads a query (:func:`~trajsearch.excerpt.query_text`)."""
    task = query_text(task)
    k = k or config.exemplars_k
    pool = min(200, k * config.pool_factor)
    nearest = search(ts, task, ctx.filters(levels=("task",), outcomes=("success",),
                                           exclude_trajectory_ids=exclude_trajectory_ids),
                     k=min(200, pool * config.task_depth), grouped=False)
    by_task, known = _followable(ts, nearest, ctx.tenant)
    by_task = _first_tasks(by_task, pool)
    best_task = by_task[0].score if by_task else None  # the cosine novelty is calibrated on
    calibration = calibrations(ctx.tenant) if calibrations is not None else None
    floor = calibration.threshold if calibration else config.novelty.inspiration
    strategy = strategy_for(best_task, config.novelty, floor)
    # just below the threshold, a task naming code is looked at further: exemplars if a candidate changed that code
    names = identifiers(task)  # once: every step below weighs them (task_homes for each candidate left out)
    rescue = (strategy is Strategy.plan_from_scratch and best_task is not None
              and best_task >= config.named_code_floor and any(map(_specific, names)))
    if strategy is Strategy.plan_from_scratch and not rescue:  # nothing close enough to show: no further search
        return ExemplarSet(strategy, best_task, [], calibration, none_to_follow=bool(nearest) and not by_task)
    candidates, summaries = _candidates(ts, task, ctx, by_task, pool, exclude_trajectory_ids,
                                        config.touched_candidates, config.named_file_candidates, names, known)
    # the last ``call_slots`` places are filled in their own order (see _last_places); the first by
    # the ranking without the calls feature (weak evidence: a task may ask for what policy refuses)
    slots = min(config.rerank.call_slots, k - 1) if config.rerank.enabled and config.rerank.w_calls else 0
    if slots:
        candidates += _runs_making_named_calls(ts, task, ctx, summaries, exclude_trajectory_ids, config)
        candidates.sort(key=lambda h: -h.score)
    ranked, by_calls = _rankings(task, names, candidates, summaries, ctx, config, slots)
    if rescue:  # named code some candidate changed, or nothing after all
        if not any(s.features.get("named", 0.0) > 0 for s in ranked):
            return ExemplarSet(strategy, best_task, [], calibration)
        strategy = Strategy.use_as_inspiration
    if config.rerank.diversity:
        cover, near, without = _likely_files(ts, task, names, ctx, ranked, summaries, exclude_trajectory_ids, config,
                                             floor)
        more = _runs_changing_likely_files(ts, task, ctx, cover, ranked, summaries, exclude_trajectory_ids, config)
        if more:  # ranked again with them: the features' idf is over all candidates
            candidates = sorted([*candidates, *more], key=lambda h: -h.score)
            ranked, by_calls = _rankings(task, names, candidates, summaries, ctx, config, slots)
        if near and config.near_step_weight:
            ranked = _near_steps(ranked, near, config.near_step_weight)
            by_calls = _near_steps(by_calls, near, config.near_step_weight, config.rerank.call_match) \
                if slots else ranked
        tasks = _task_keys(ts, candidates, by_task, ctx.tenant)

        def pick(order: list[Scored], n: int, covering: bool = True) -> list[Scored]:
            return diversify(order, n, embed=ts.embed, text_of=lambda s: _summary(s, summaries),
                             max_cosine=config.rerank.max_cosine, other_work_margin=config.rerank.other_work_margin,
                             cover=cover if covering else None, cover_weight=config.cover_weight,
                             task_of=lambda s: tasks.get(s.hit.trajectory_id))
        def likely(run: str) -> set[str]:  # the likeliest files but for the run's own vote
            return _likeliest(without(run), config.likely_files_looked_up)
        ranked, by_calls = _grounded(ranked, floor, likely, summaries), _grounded(by_calls, floor, likely, summaries)
        chosen = pick(ranked, k - slots)
        if slots:  # the last places in their own order; covering decides them only where the ranking does
            order = _last_places(chosen, ranked, by_calls, summaries)
            chosen = pick(chosen + [s for s in order or ranked if s not in chosen], k, covering=order is None)
    else:  # still one place per run: its copies in ``by_calls`` and ``ranked`` differ in score
        ranked, by_calls = _grounded(ranked, floor, _nothing, summaries), _grounded(by_calls, floor, _nothing, summaries)
        chosen = ranked[: k - slots]
        if slots:
            taken = {s.hit.trajectory_id for s in chosen}
            for s in _last_places(chosen, ranked, by_calls, summaries) or ranked:
                if len(chosen) < k and s.hit.trajectory_id not in taken:
                    chosen.append(s)
                    taken.add(s.hit.trajectory_id)
    if strategy is Strategy.follow_closely and chosen and all(s.features.get("tools") == 0.0 for s in chosen):
        strategy = Strategy.use_as_inspiration  # none of their tools exists here: no step can be followed as is
    if strategy is Strategy.follow_closely and chosen and not _did_this_task(chosen[0], by_task, task):
        strategy = Strategy.use_as_inspiration  # a near-identical template task: its steps are another task's
    return ExemplarSet(strategy, best_task,
                       [_exemplar(ts, s, ctx.tenant, summaries.get(s.hit.trajectory_id)) for s in chosen], calibration)


def _did_this_task(first: Scored, by_task: list[Hit], task: str) -> bool:
    """Whether the run ``follow_closely`` points to (the first chosen) did this very task: its task row holds
    the task's text (:func:`_same_text`). A task cosine of 0.96 and above does not say so: tau-bench retail
    tasks built from one template differ only in what is asked ("prefer battery > USB > AC" against "prefer
    AC adapter > battery > USB") and embed at 0.977-0.998 (grok-3 retail 3/4, 7/9, 12/13, 31/32); runs of one
    task share its text, so a run of this task is among the task leg's hits (``by_task``) at the top."""
    return any(hit.trajectory_id == first.hit.trajectory_id and _same_text(hit.text, task) for hit in by_task)


def _rankings(task: str, names: Sequence[str], candidates: list[Hit], summaries: dict[str, Hit], ctx: RuntimeContext,
              config: AdviceConfig, slots: int) -> tuple[list[Scored], list[Scored]]:
    """The candidates reranked (:func:`~.rerank.rerank`) for the first places (without the calls feature when
    the last ``slots`` places go by it) and for those last places (runs making the calls the task names first)."""
    candidates = [h for h in candidates if not _nothing_to_follow(summaries.get(h.trajectory_id))]
    touched = touched_scores(task, [row.text if (row := summaries.get(h.trajectory_id)) else "" for h in candidates],
                             names)
    ranked = rerank(candidates, ctx, replace(config.rerank, w_calls=0.0) if slots else config.rerank, touched)
    by_calls = rerank(candidates, ctx, config.rerank, touched) if slots else ranked
    return ranked, _calls_first(by_calls, config.rerank.call_match) if slots else by_calls


def _followable(ts: TrajSearch, hits: list[Hit], tenant: str) -> tuple[list[Hit], dict[str, Hit]]:
    """``hits`` without the runs that took no step to follow (:func:`_nothing_to_follow`), told by their summary
    rows in one lookup by key, and those rows (with their vectors: :func:`_candidates` reads them no more). Novelty
    is judged on the nearest task of a run that can be followed, so a run of no step neither is offered nor makes
    the strategy ``follow_closely``."""
    summaries = ts.runs([h.trajectory_id for h in hits], tenant=tenant, level="summary") if hits else {}
    return [h for h in hits if not _nothing_to_follow(summaries.get(h.trajectory_id))], summaries


def any_to_follow(ts: TrajSearch, hits: list[Hit], tenant: str) -> bool:
    """Whether any of ``hits`` (successful runs) took a step to follow (:func:`_followable`): an empty answer whose
    context's runs took none, while runs of other versions did, says those versions (review of RT8, 5)."""
    return bool(_followable(ts, hits, tenant)[0])


def _nothing_to_follow(summary: Hit | None) -> bool:
    """Whether a successful run's summary row says it took no step an agent could follow (:func:`nothing_to_follow`)."""
    return summary is not None and nothing_to_follow(summary.steps)


def nothing_to_follow(summary_steps: Any) -> bool:
    """Whether a successful run's summary row's ``steps`` field (its digest) says it took no step an agent could follow
    (:func:`~trajsearch.actions.acted` over the decision points its digest shows, up to 8: only a run of more bare
    errors than that could hide its calls behind them; on each of the 418 real successful runs of ../shared/data and
    the fixtures it judges as the run's whole steps do). A row without a digest (written before digests) says
    nothing, and its run stays a candidate. Such a run is never offered, so novelty is not measured against it either
    (:mod:`.calibration`)."""
    digest = from_row_steps(summary_steps)
    return isinstance(digest, ExemplarDigest) and not acted(a.action for a in digest.actions)


def _grounded(order: list[Scored], floor: float, likely: Callable[[str], set[str]],
              summaries: dict[str, Hit]) -> list[Scored]:
    """``order`` without the runs below the novelty threshold (``floor``) that nothing but their bonuses lifted.

    A run whose task and summary are further from the task than the threshold novelty is judged on
    is no "related task" by the measure that called the task related; recency, quality and tools
    raise every candidate alike and say nothing of the work (probe p43 E2: an airline booking
    dialogue at cosine 0.19 came third for a short coding task in a tenant holding both). Such a
    run stays when its work says it is near: it changed code the task names by an identifier or where
    that code lives (features ``named``, ``where``; a word of its prose is no such evidence: probe E2,
    E2-2, sphinx's ``domains/python.py`` was kept for a scikit-learn issue for its ``python: 3.6.7``),
    one of its step rows is among those nearest the task and as close as the threshold (``steps``: in a tenant of
    227 step rows the 60 nearest reached down to 0.17, and 44 of 46 runs below the threshold shown, most of other
    repositories, were kept by a rank alone; probe E3, A1), it changed one of the files the task's work likeliest
    lies in (``likely``, see :mod:`.where`: runs found by those files often word their task otherwise), or it made calls
    the task names (``calls``). ``likely(run)`` gives those files by every vote but the run's own (the files
    it changed, its step rows, its reads): a candidate votes for the files it changed, so a distant run's own
    files were among the likeliest few and kept it (probe E2, E2-E: django-16938, at cosine 0.186, came first
    for a seaborn legend issue for its ``serializers/python.py``). Exemplar-only leave-task-out on SWE-bench runs (gemini 299, CodeR
    49, two SWE-agent sets 32 and 40 findable tasks): recall@1 and @3 unchanged; 2 of the 49 CodeR
    lists lost a third run that did other work, no other list changed."""
    def near(s: Scored) -> bool:
        f = s.features
        return (s.similarity >= floor or f.get("named", 0.0) > 0 or f.get("where", 0.0) > 0
                or f.get("steps", 0.0) > 0 or f.get("calls", 0.0) > 0
                or bool({file_key(path) for path in changed_files(_summary(s, summaries))}
                        & likely(s.hit.trajectory_id)))
    return [s for s in order if near(s)]


def _nothing(run: str) -> set[str]:
    """No likely files (covering off)."""
    return set()


def _likeliest(cover: dict[str, float], n: int) -> set[str]:
    """The ``n`` files of ``cover`` the task's work likeliest lies in."""
    return set(sorted(cover, key=lambda key: -cover[key])[:n])


def _calls_first(order: list[Scored], call_match: float) -> list[Scored]:
    """``order`` with the runs making the calls the task names (feature ``calls`` at least ``call_match``) first;
    stable: each part keeps its order."""
    return sorted(order, key=lambda s: s.features.get("calls", 0.0) < call_match)


def _runs_changing_likely_files(ts: TrajSearch, task: str, ctx: RuntimeContext, cover: dict[str, float],
                                ranked: list[Scored], summaries: dict[str, Hit], exclude: Sequence[str],
                                config: AdviceConfig) -> list[Hit]:
    """More candidates (their better row of task and summary, scored like the others): the successful runs that
    changed one of the likeliest files (``cover``, the first ``likely_files_looked_up``) that no candidate
    changed, ``likely_file_runs`` looked up per file. A file no successful run changed (no candidate, nor any
    run its lookup found) takes no place among those looked up: the next one is looked up in its place,
    ``likely_files_checked`` lookups at most (see ``AdviceConfig``). It stays a likely file for the cover and for
    ``_grounded`` (dropping it there lifted lower files, a scratch script among them, into the three likeliest and
    let runs below the novelty floor through: review RR11; no recall@3 moved by it). The new runs' summary rows
    join ``summaries``."""
    if not cover or not config.likely_files_looked_up or not config.likely_file_runs:
        return []
    changed = {file_key(path) for s in ranked for path in changed_files(_summary(s, summaries))}
    summary = ctx.filters(levels=("summary",), outcomes=("success",), exclude_trajectory_ids=exclude)
    known = {s.hit.trajectory_id for s in ranked}
    order = iter(sorted(cover, key=lambda key: -cover[key]))
    likely, lookups, keep = 0, 0, []
    while likely < config.likely_files_looked_up and lookups < config.likely_files_checked:
        batch = []  # the next files no candidate changed, as many as likely files are still wanted
        for key in order:
            if key in changed:
                likely += 1
            else:
                batch.append(key)
            if likely + len(batch) == config.likely_files_looked_up or lookups + len(batch) == config.likely_files_checked:
                break
        if not batch:
            break
        lookups += len(batch)
        # each file on its own: one lookup of several files ranks runs by their rarest
        found = {key: [t for t in ts.lexical_runs(key, summary, k=config.likely_file_runs) if t not in known]
                 for key in batch}
        wanted = sorted({t for runs in found.values() for t in runs})
        rows = ts.runs(wanted, tenant=ctx.tenant, level="summary") if wanted else {}
        for key in batch:  # the lexical leg also matches a file a run read or only named: keep the runs that changed it
            changers = [t for t in found[key] if t in rows and key in {file_key(p) for p in changed_files(rows[t].text)}]
            if not changers:
                continue
            likely += 1
            for t in changers:
                if t not in summaries:
                    summaries[t] = rows[t]
                    keep.append(t)
    return _better_rows(ts, task, ctx, keep) if keep else []


def _better_rows(ts: TrajSearch, task: str, ctx: RuntimeContext, runs: list[str]) -> list[Hit]:
    """Each of these successful runs as a candidate: its better row of task and summary, scored by cosine."""
    best: dict[str, Hit] = {}
    for hit in ts.score_runs(task, runs, ctx.filters(levels=("task", "summary"), outcomes=("success",))):
        if hit.trajectory_id not in best or hit.score > best[hit.trajectory_id].score:
            best[hit.trajectory_id] = hit
    return list(best.values())


def _runs_making_named_calls(ts: TrajSearch, task: str, ctx: RuntimeContext, summaries: dict[str, Hit],
                             exclude: Sequence[str], config: AdviceConfig) -> list[Hit]:
    """More candidates (their better row of task and summary, scored like the others): the successful runs
    one of whose state-changing calls holds a word of the task that no candidate's calls hold (see
    ``AdviceConfig.named_call_words``; :func:`~.rerank.touched_scores` then gives them their ``calls``).
    Their summary rows join ``summaries`` (the candidates' summary rows, by run)."""
    if not config.named_call_words or not config.named_call_runs:
        return []
    held = {word for row in summaries.values() for word in touched_names(row.text)["calls"]}
    words = [w for w in tokenize_query(task)[0]  # its words as written: not the parts of a user id
             if w.isalpha() and len(w) > 2 and w not in FILLER and w not in held][:config.named_call_words]
    if not words:
        return []
    summary = ctx.filters(levels=("summary",), outcomes=("success",), exclude_trajectory_ids=exclude)
    found: dict[str, str] = {}  # run -> the word it was looked up by
    for word in words:  # each word on its own: one lookup of several words ranks runs by their rarest
        found.update((t, word) for t in ts.lexical_runs(word, summary, k=config.named_call_runs)
                     if t not in summaries and t not in found)
    rows = ts.runs(list(found), tenant=ctx.tenant, level="summary") if found else {}
    # the lexical leg also matches the word in a run's task or reads: keep the runs whose calls hold it
    keep = [t for t, row in rows.items() if found[t] in touched_names(row.text)["calls"]]
    if not keep:
        return []
    summaries.update((t, rows[t]) for t in keep)
    return _better_rows(ts, task, ctx, keep)


def _likely_files(ts: TrajSearch, task: str, names: Sequence[str], ctx: RuntimeContext, ranked: list[Scored],
                  summaries: dict[str, Hit], exclude: Sequence[str], config: AdviceConfig, floor: float
                  ) -> tuple[dict[str, float], set[str], Callable[[str], dict[str, float]]]:
    """Where the task's work likely lies (:func:`~.where.likely_files`), the runs one of whose step rows is
    among the ``cover_steps`` nearest the task (any outcome) at a cosine of at least ``floor`` (the novelty
    threshold: a rank alone is no evidence in a tenant of few step rows, where the 60 nearest reach far
    down; probe E3, A1), and where it likely lies by the same votes but a run's own (the candidates' vote
    taken again without it; for :func:`_grounded`); nothing to cover, and no search, when covering is off or
    no candidate changed a file (a support desk's runs). The step rows holding the task's identifiers
    (``cover_named_steps``, by the lexical leg) vote too."""
    changed = where.changed_votes([(s.score, changed_files(_summary(s, summaries))) for s in ranked]) \
        if config.cover_weight else {}
    if not changed:
        return {}, set(), lambda run: {}
    steps = search(ts, task, ctx.filters(levels=("step",), exclude_trajectory_ids=exclude),
                   k=config.cover_steps, grouped=False) if config.cover_steps else []
    query = _lexical_query(names) if config.cover_named_steps else ""
    named = search(ts, query, ctx.filters(levels=("step",), exclude_trajectory_ids=exclude),
                   k=config.cover_named_steps, grouped=False, mode="lexical") if query.strip() else []
    frames = where.failing_frames(task)  # once per query: the task's text is long, and ``without`` asks per run
    cover = _cover(task, names, ranked, summaries, steps, named, frames)

    @functools.cache
    def without(run: str) -> dict[str, float]:  # its changed files, step rows and reads vote for nothing
        return _cover(task, names, [s for s in ranked if s.hit.trajectory_id != run], summaries,
                      [hit for hit in steps if hit.trajectory_id != run], [hit for hit in named if hit.trajectory_id != run],
                      frames)
    return cover, {hit.trajectory_id for hit in steps if similarity(hit) >= floor}, without


def _cover(task: str, names: Sequence[str], ranked: list[Scored], summaries: dict[str, Hit], steps: list[Hit],
           named: list[Hit], frames: frozenset[str]) -> dict[str, float]:
    """:func:`~.where.likely_files` by the votes of these candidates (the files they changed, their reads of the
    code the task names), of these step rows and of ``frames``, the files the task's own tracebacks failed in
    (:func:`~.where.failing_frames`)."""
    changed = where.changed_votes([(s.score, changed_files(_summary(s, summaries))) for s in ranked])
    return where.likely_files(changed, steps, task_homes(task, [_summary(s, summaries) for s in ranked], names),
                              named, frames)


def _lexical_query(names: Sequence[str]) -> str:
    """The task's identifiers (or the files it names) as one lexical query, clipped to what a search takes
    (``MAX_QUERY_CHARS``): a task of a long dotted chain names more than that (probe 52, review RPERF: "query
    text too long")."""
    return " ".join(names)[:MAX_QUERY_CHARS]


def _near_steps(ranked: list[Scored], near: set[str], weight: float, call_match: float | None = None) -> list[Scored]:
    """The candidates with feature ``steps``: 1 for a run among ``near`` (one of its step rows is among
    those nearest the task), scoring ``weight`` more, else 0; best first again (``call_match``: the runs
    whose ``calls`` reach it first, as in :func:`_rankings`)."""
    out = [replace(s, score=s.score + weight * (s.hit.trajectory_id in near),
                   features={**s.features, "steps": float(s.hit.trajectory_id in near)}) for s in ranked]
    out.sort(key=lambda s: -s.score)  # stable: equals keep their order
    return out if call_match is None else _calls_first(out, call_match)


def _task_keys(ts: TrajSearch, candidates: list[Hit], by_task: list[Hit],
               tenant: str) -> dict[str, tuple[str, str] | None]:
    """Each candidate's :func:`~.rerank.task_key`, from its task text: the task leg's own hits', the
    others' read from their task rows by key (a candidate may have come by its summary; a filtered scan
    of the table took 30 ms of a 60 ms call; rows only, so no stored vector stands in for a query's
    embedding)."""
    texts = {hit.trajectory_id: hit.text for hit in by_task}
    missing = [h.trajectory_id for h in candidates if h.trajectory_id not in texts and h.task_id]
    if missing:
        texts.update((tid, row.text) for tid, row in ts.runs(missing, tenant=tenant, level="task", vectors=False).items())
    return {h.trajectory_id: task_key(h.task_id, texts[h.trajectory_id]) if h.trajectory_id in texts else None
            for h in candidates}


def _first_tasks(hits: list[Hit], n: int) -> list[Hit]:
    """The hits (task rows), best first, up to the first ``n`` tasks (runs of one task share its text:
    a deeper leg is only there to reach ``n`` tasks; candidates beyond them only add noise to reranking)."""
    tasks: set[tuple[str, str]] = set()
    out = []
    for hit in hits:
        key = task_key(hit.task_id, hit.text) or (hit.trajectory_id, "")
        if key not in tasks and len(tasks) == n:
            break
        tasks.add(key)
        out.append(hit)
    return out


def _last_places(chosen: Sequence[Scored], ranked: list[Scored], by_calls: list[Scored],
                 summaries: dict[str, Hit]) -> list[Scored] | None:
    """The order the last places are filled in, after the runs ``chosen`` first.

    Runs making the state-changing calls the task names come first when no chosen run does that
    work (:func:`_covered`), but not a twin of a chosen run (the same work recorded): it shows nothing
    new, and as the first of that part it gave way to any run scoring within the other-work margin
    (:func:`~.rerank.diversify`), though that run makes none of the calls (tau-bench airline-27: a run
    that only changed a flight took the place of one that cancelled, as the task asks). Else, when no
    chosen run recorded any work at all (no file changed, no state-changing call: a request refused, a
    question answered), the runs that did come first:
    an agent shown only refusals learns nothing of how to do the work where it is allowed. Else
    None: the ranking decides. Each part best first.
    """
    if not _covered(chosen, by_calls):
        shown = {work for s in chosen if (work := work_done(_summary(s, summaries)))}
        return [s for s in by_calls if work_done(_summary(s, summaries)) not in shown] + ranked
    if not any(work_done(_summary(s, summaries)) for s in chosen):
        return [s for s in ranked if work_done(_summary(s, summaries))] + ranked
    return None


def _covered(chosen: Sequence[Scored], candidates: Sequence[Scored]) -> bool:
    """Whether a chosen run already does the state-changing work the task names as well as any
    candidate does (then no place goes by tool calls)."""
    best = max((c.features.get("calls", 0.0) for c in candidates), default=0.0)
    return best <= 0.0 or max((c.features.get("calls", 0.0) for c in chosen), default=0.0) >= best


def _summary(scored: Scored, summaries: dict[str, Hit]) -> str:
    """What a run did (its summary row): the text near-duplicates are judged on."""
    row = summaries.get(scored.hit.trajectory_id)
    return row.text if row else scored.hit.text


def _exemplar(ts: TrajSearch, scored: Scored, tenant: str, summary: Hit | None) -> Exemplar:
    """The exemplar of a chosen candidate, from its summary row's digest (the trace only without one)."""
    hit = scored.hit
    exemplar = Exemplar(
        trajectory_id=hit.trajectory_id,
        trace_uri=hit.trace_uri,
        env_version=hit.env_version,
        similarity=scored.similarity,
        score=scored.score,
        features=scored.features,
        text=hit.text,
        reader=lambda: load_trace(ts, hit, tenant),
    )
    digest = from_row_steps(summary.steps) if summary is not None else None
    if isinstance(digest, ExemplarDigest):
        exemplar.digest = digest
    elif (run := exemplar.load_trace()) is not None:  # a row written before digests existed
        exemplar.digest = exemplar_digest(run, UNCAPPED)
    return exemplar


@dataclass
class Recovery(_Provenance):
    """A past run that met the pasted log line in a step and got past it: the step holding the line and the step
    after it (what the run did next), apart from the failed runs: it is no run to avoid. Most are successful runs; a
    failed run that got past the line (``outcome`` "failure") failed later, for another reason (:func:`_recoveries`)."""

    kind = "recovery"  # (see Exemplar.kind)

    task: str
    step_holding: str
    next_step: str | None = None
    outcome: str = "success"  # the run's: a failed run's recovery says it failed later (:data:`FAILED_LATER`)

    @property
    def text(self) -> str:
        """The step that met the line and the step after it: an item's text carries the fix with the error (a client
        reading a gRPC item's provenance and text saw the failing step alone, review RRT5 4)."""
        return "\n".join([self.step_holding, *([f"Then did: {self.next_step}"] if self.next_step else [])])


class WarningSet(list):
    """The warnings :func:`warnings` chose (a list of :class:`FailureWarning`), and ``held``: whether the context's
    filters held any failure row at all, which an empty answer's reason turns on (:func:`~.tool.why_none` need not
    search for it again); ``recoveries``: the successful runs that got past a pasted log line (:func:`_recoveries`);
    ``other_tools``: failed runs like the text were found, and every one was made with tools this agent has not
    (:func:`_made_elsewhere`), which an empty answer says (:data:`~.tool.OTHER_TOOLS`)."""

    def __init__(self, items: Sequence[FailureWarning] = (), *, held: bool,
                 recoveries: Sequence[Recovery] = (), other_tools: bool = False) -> None:
        super().__init__(items)
        self.held = held
        self.recoveries = list(recoveries)
        self.other_tools = other_tools


def warnings(
    ts: TrajSearch,
    text: str,
    ctx: RuntimeContext,
    *,
    k: int | None = None,
    config: AdviceConfig = AdviceConfig(),
    exclude_trajectory_ids: Sequence[str] = (),
) -> WarningSet:
    """The failed runs most similar to a task or to the current step's context, one per task.

    In this order: failed runs of this very task (its text, whitespace and case aside: a failure
    row's vector is mostly its error boilerplate, so a task's own failures can rank below another
    task's with a like error); failure rows holding the text verbatim (an error line pasted whole:
    dense cosine scores short exact strings lowest, so the floor must not veto them); failed runs whose
    steps hold a pasted log line verbatim or nearly (:func:`_steps_holding`), each shown with that step;
    then failure rows at least ``warning_min_similarity`` close, but for a log line not those whose error
    is only a verdict (:func:`_bare`). The floor is applied to a pool before the ``k`` are taken, so a
    larger ``k`` never shows fewer. For a log line, also the successful runs that met it and got past it
    (:func:`_recoveries`, ``.recoveries``). Every lookup stays inside the context's filters and leaves
    ``exclude_trajectory_ids`` out. ``text`` is read as every search reads a query (:func:`~trajsearch.excerpt.query_text`):
    the steps holding it are judged on what the search was given.
    """
    text = query_text(text)
    k = k or config.warnings_k
    pool = k * config.pool_factor
    filters = ctx.filters(levels=("failure",), outcomes=config.warning_outcomes, exclude_trajectory_ids=exclude_trajectory_ids)
    # one failure row per run: no grouping needed; the lexical leg for error-like text, a line that reads like an
    # issue's title too (a pasted error may: ``Permission denied while opening file config.yaml``)
    log_line = looks_like_log(text, titles=False)
    hits = search(ts, text, filters, k=pool, grouped=False, mode="hybrid" if log_line else "dense")
    holding = [h for h in hits if _holds(h.text, text)]
    similar = [h for h in hits if similarity(h) >= config.warning_min_similarity and not (log_line and _bare(h))]
    in_steps = _steps_holding(ts, text, ctx, config, exclude_trajectory_ids, pool)
    own, passed = _this_task(ts, text, ctx, config, exclude_trajectory_ids, pool)
    found = [*own, *holding, *(row for row, _ in in_steps.values()), *similar]
    elsewhere = _made_elsewhere(found, ctx)
    other_tools = bool(found) and {hit.trajectory_id for hit in found} <= elsewhere
    found = [hit for hit in found if hit.trajectory_id not in elsewhere]
    chosen = _distinct_warnings(ts, found, k, ctx.tenant)
    in_failure_rows = {h.trajectory_id for h in holding}  # their error is the text: no step to point to
    for warning in chosen:
        if warning.trajectory_id in in_steps and warning.trajectory_id not in in_failure_rows:
            warning.step_holding = in_steps[warning.trajectory_id][1]
    _fix_from_successes(ts, chosen, {h.trajectory_id: h for h in found}, ctx, exclude_trajectory_ids, passed,
                        config.pool_factor)
    _what_was_handed_in(ts, chosen, ctx.tenant)
    recovered = _recoveries(ts, text, ctx, config, exclude_trajectory_ids, pool) if log_line else []
    return WarningSet(chosen, held=bool(hits), recoveries=recovered, other_tools=other_tools)


def _made_elsewhere(found: Sequence[Hit], ctx: RuntimeContext) -> set[str]:
    """The failed runs among ``found`` made in another environment than the context's, whose pitfalls are of tools this
    agent has not: those that called only a shell where the context lists none, and those at most half of whose tools
    it lists (:func:`~.rerank.tool_overlap`) that never called some tool the runs found made here called (those every
    tool of which the context lists). Tools compare by kind (:func:`~trajsearch.touched.tool_kind`).

    Names are evidence only where the two vocabularies compare: beside a run found made here, or for a shell, which is
    known under every harness's name (round 27, RT11: an agent listing no shell was warned of mini-swe-agent's
    ``bash``-only failures). Elsewhere a run sharing no tool may name the agent's own tools as another harness does
    (Terminus-2's ``bash_command``, Claude Code's ``Edit`` for OpenHands' ``str_replace_editor``), and a warning lost
    in silence costs more than one extra: it stays. Review of RT10: one tenant of real SWE-agent, mini-swe-agent and
    OpenHands runs lost every warning under OpenHands' own tool list (``execute_bash``, compared by name then), and 12
    of 13 SWE-agent ones under ``["bash"]``. Round 26, RT10: of tau2 airline and tau-bench retail runs, 7 of 279
    warnings were of the other domain, each with 0 to 0.5 of its tools in the domain's tool set."""
    if not ctx.tools_available:
        return set()
    share = {hit.trajectory_id: tool_overlap(hit, ctx) for hit in found}
    kinds = {hit.trajectory_id: tool_kinds(hit.tools) for hit in found}  # (a row's tools are its run's)
    here = {kind for run, part in share.items() if part == 1.0 for kind in kinds[run]}
    return {run for run, part in share.items()
            if (part == 0.0 and kinds[run] == {SHELL}) or (part <= 0.5 and not here <= kinds[run])}


def _recoveries(ts: TrajSearch, text: str, ctx: RuntimeContext, config: AdviceConfig, exclude: Sequence[str],
                pool: int) -> list[Recovery]:
    """Up to ``recoveries_k`` runs, one per task, whose steps met the pasted log line (:func:`_step_meeting`), each
    with the step that met it and the step that got it past (:func:`_last_meeting`): successful runs first, then failed runs that got past it
    (:func:`_got_past`, marked at ingest), which failed later for another reason. An agent stuck on an error asks how
    to get past it; warnings show only failed runs, and most runs that met an error went on and succeeded (probe RT4:
    25 of 29 error lines pasted from real failing steps came from successful runs, and every answer was
    ``no_similar_failures``). A failed run that got past the line is no warning for it (:func:`_steps_holding`), so
    it is shown here or nowhere (review of RT8: 8 of 18 pasted lines had shown no recovery at all)."""
    k = config.recoveries_k
    if k <= 0:
        return []
    steps = ctx.filters(levels=("step",), outcomes=("success", *config.warning_outcomes), exclude_trajectory_ids=exclude)
    held: dict[str, tuple[Hit, str, int]] = {}  # run -> (its best step row, the step holding the text, its position)
    task_ids: set[str] = set()  # successful runs of k task ids are k tasks: no need to read further (failed runs
    for hit in search(ts, text, steps, k=pool, mode="hybrid"):  # come after them; each read costs ~3 ms)
        if hit.trajectory_id in held or (step := _step_meeting(hit, text)) is None:
            continue
        if hit.outcome != "success" and _got_past(ts, hit, step[1]) is None:
            continue
        held[hit.trajectory_id] = (hit, *step)
        if hit.outcome == "success":
            task_ids.add(hit.task_id or hit.trajectory_id)
        if len(task_ids) == k:
            break
    held = dict(sorted(held.items(), key=lambda item: item[1][0].outcome != "success"))  # stable: best first within
    tasks = ts.runs(list(held), tenant=ctx.tenant, level="task", vectors=False) if held else {}
    seen: set[Any] = set()
    out: list[Recovery] = []
    for run, (hit, shown, position) in held.items():
        task = tasks[run].text if run in tasks else ""
        key = task_key(hit.task_id, task)
        if len(out) == k or (key is not None and key in seen):
            continue
        seen.add(key)
        out.append(Recovery(trajectory_id=run, trace_uri=hit.trace_uri, env_version=hit.env_version,
                            similarity=similarity(hit), task=task, step_holding=shown,
                            next_step=_next_step(ts, hit, _last_meeting(ts, hit, position, text)),
                            outcome=hit.outcome))
    return out


def _last_meeting(ts: TrajSearch, hit: Hit, position: int, text: str) -> int:
    """The last step that met ``text`` as an error (:func:`_met`) before the step by which the run got past the
    meeting at ``position`` (:func:`_got_past`): the step after it is what got the run past, where the step after the
    first meeting may be a fix that met the error again. ``position`` itself where the run did not get past it or
    needed no step to (a read that found nothing). Round 25 left it: gemini-3-pro's django-16256 met ``no such table``
    at steps 2 and 4; step 3's ``schema_editor`` script was shown, step 5's on-disk database got it past. At most the
    50 steps before ``by`` are read (one fetch, bounded): a meeting further back is not seen, and where none of them
    met it ``position`` is returned, silently, as if the run had met the error once. Round 27, RT11 measured whether
    that bound cuts on real long runs: of the 84 mini-swe-agent runs of ../shared/data (median 77 steps, 13 over 100,
    the longest 188), 96 meetings were got past by a later step, 4 of them more than 50 steps later (the farthest
    65), and in none of the 4 did a later meeting lie before the window: the answer was the same as unbounded."""
    by = _got_past(ts, hit, position)
    if by is None or by <= position:
        return position
    views = ts.expand(replace(hit, step_index=by, step_end=by), before=min(by - position, 50), after=0)
    return max((view.position for view in views if position <= view.position < by
                and _met([line for line in view.text.splitlines() if line.strip()], text)), default=position)


#: The fields a step's text starts a line with (``represent.step_text``).
_STEP_FIELDS = ("thought: ", "action: ", "result: ", "error: ")


def _next_step(ts: TrajSearch, hit: Hit, position: int) -> str | None:
    """What the run did after the step at ``position``: that step's thought and action, each with its later lines
    (clipped whole, so a cut says so), from the row's window, else fetched by key (:meth:`TrajSearch.expand`); None
    after its last step. Round 24, RT7: only a field's first line was kept, unmarked, so a heredoc read as the whole
    command ``cat <<'EOF' > reproduce_issue.py``, the script that got past the error left out."""
    following = [step for offset, step in enumerate(hit.steps or [], start=hit.step_index) if offset == position + 1]
    if not following and position + 1 > hit.step_end:
        following = [{"text": view.text} for view in ts.expand(replace(hit, step_index=position, step_end=position),
                                                              before=0, after=1) if view.position == position + 1]
    if not following:
        return None
    lines = [line.rstrip() for line in following[0]["text"].splitlines() if line.strip()]
    label, first = _step_label(lines[0].strip())
    fields: list[str] = []  # a field's later lines are its own: a heredoc's body is part of the action
    for line in [first, *lines[1:]]:
        if line.startswith(_STEP_FIELDS) or not fields:
            fields.append(line)
        else:
            fields[-1] += "\n" + line
    said = [field for field in fields if field.startswith(("thought: ", "action: "))][:2]
    shown = [clip(field, ACTION_CHARS) for field in said] or [clip(first, ACTION_CHARS)]
    return "\n".join([f"{label}] {shown[0]}" if label else shown[0], *shown[1:]])


def _what_was_handed_in(ts: TrajSearch, chosen: list[FailureWarning], tenant: str) -> None:
    """Each warning's ``handed_in``, from its run's summary row (one lookup). A failure an outcome file gave
    ("not resolved") holds no error of the run, so this is what the warning can say the run did (probe E3, A4:
    71 of 80 warnings showed only the task and the verdict; 15 of 35 failed runs had handed in only a
    reproduction script)."""
    rows = ts.runs([w.trajectory_id for w in chosen], tenant=tenant, level="summary", vectors=False) if chosen else {}
    for warning in chosen:
        if warning.trajectory_id in rows:
            warning.handed_in = handed_in(rows[warning.trajectory_id].text)


def handed_in(summary: str) -> str | None:
    """What a summary row's ``Touched:`` line says the run handed in, in a few words: the files it changed, or the
    only files it created (a reproduction script: then it changed no file of the project, see
    :mod:`trajsearch.touched`); None when it names neither (no diff: a support desk's run)."""
    if changed := changed_files(summary):
        return "changes to " + _some(changed)
    if created := created_files(summary):
        return f"only {_some(created)} (created); changed no existing file"
    return None


def _some(items: list[str], n: int = 4) -> str:
    """The first ``n`` files, and how many more: "and more" where the summary's list was full (it lists at most
    ``touched.FILES_SHOWN``: a run that changed 40 files would say "and 8 more", review 3)."""
    if len(items) <= n:
        return ", ".join(items)
    more = "more" if len(items) >= FILES_SHOWN else f"{len(items) - n} more"
    return ", ".join(items[:n]) + f" and {more}"


#: A file's name alone (``base.py``, ``__init__.py``): every project has one, so it tells no project's code apart.
_BARE_FILE = re.compile(r"[\w.-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|kt|rb|c|h|cc|cpp|hpp|cs|php|swift|scala|sh|json|"
                        r"ya?ml|toml|cfg|ini|md|rst|txt|html|css)")


def _specific(name: str) -> bool:
    """Whether an identifier a task names can tell one project's code from another's (for the novelty rescue):
    not a bare file name (review 3 of round 12, D1: "Add type hints to base.py of the game engine prototype"
    got scikit-learn runs that changed ``sklearn/base.py``)."""
    return not _BARE_FILE.fullmatch(name)


def _bare(hit: Hit) -> bool:
    """Whether a failure row's error is only an outcome file's verdict, worded alike for every run it failed
    (``BARE_DETAILS``): the row holds the run's task and no error of it, so a log line's cosine to it is the
    task prose's. Probe E2, E2-B: over 37 error lines pasted from held-out SWE-bench runs, 14 such rows passed
    the 0.40 floor (0.40-0.57), none of a run that met the error (the step leg finds those)."""
    return verdict_only(hit.text)


def _steps_holding(ts: TrajSearch, text: str, ctx: RuntimeContext, config: AdviceConfig, exclude: Sequence[str],
                   pool: int) -> dict[str, tuple[Hit, str]]:
    """The failed runs whose steps hold a pasted log line (an error, a command) verbatim or nearly
    (``FusionConfig.nearly_holds``), best first: each run's failure row, carrying the step's cosine as its similarity,
    and the step holding it (:func:`_step_holding_at`), but for the runs that got past it (:func:`_got_past`). Probe
    E2, E2-B: a failure row an outcome file wrote holds its verdict, no step error, so the runs that met a pasted error
    were found only in their steps (of 8 errors of 37 that failed runs had met, 6 were not shown). Prose (a task) is no
    log line: not looked for."""
    if not looks_like_log(text, titles=False):
        return {}
    steps = ctx.filters(levels=("step",), outcomes=config.warning_outcomes, exclude_trajectory_ids=exclude)
    held = {}  # run -> its best step row holding the text (passages too: the lexical leg reads them)
    for hit in search(ts, text, steps, k=pool, mode="hybrid"):
        found = _step_holding_at(hit, text, ts.fusion)
        if found is not None and hit.trajectory_id not in held and _got_past(ts, hit, found[1]) is None:
            held[hit.trajectory_id] = (hit, found[0])
    rows = ts.runs(list(held), tenant=ctx.tenant, level="failure", vectors=False) if held else {}
    return {run: (replace(rows[run], similarity=similarity(hit)), shown)
            for run, (hit, shown) in held.items() if run in rows}


def _step_holding_at(hit: Hit, text: str, fusion: FusionConfig) -> tuple[str, int] | None:
    """The step of a step row (or passage) holding ``text`` verbatim or nearly, shown (:func:`_shown_step`: its
    ``[step n]`` label, its action and the line holding the text), and its position in its run (the row's first, for a
    passage); None if no step of the row holds it."""
    for position, part in enumerate(hit.steps or [{"text": hit.text}], start=hit.step_index):  # a passage: one step
        whole = part["text"]
        lines = [line for line in whole.splitlines() if line.strip()]
        held = [line for line in lines if _holds(line, text) or fusion.nearly_holds(text, line)]
        if not (held or _step_holds(whole, text, fusion)):
            continue
        return _shown_step(lines, held[:1]), position
    return None


def _step_holds(step: str, text: str, fusion: FusionConfig) -> bool:
    """Whether a step's text holds ``text`` verbatim or nearly (``FusionConfig.nearly_holds``)."""
    return _holds(step, text) or fusion.nearly_holds(text, step)


def _got_past(ts: TrajSearch, hit: Hit, position: int) -> int | None:
    """Where the run of ``hit``, whose step at ``position`` holds a pasted text, got past the error that step met: the
    position of the step that did, as ingest marked it (:func:`~trajsearch.represent.got_past`: the same call made
    again later without error, that error met no more after), or None. A failed run that got past the error failed
    for another reason: no warning for it (round 24, RT7; on the gemini-3-pro store 15 of 22 warnings shown with the
    step holding a pasted error were of such runs). Read from the step row, a passage's from its window by key: no
    trace is read (review of RT8: one read per hit, 0.04 s to 0.78 s at 50 ms a read)."""
    part = next((step for offset, step in enumerate(hit.steps or [], start=hit.step_index) if offset == position), None)
    if part is not None:
        return part.get("got_past")
    views = ts.expand(replace(hit, step_index=position, step_end=position), before=0, after=0)
    return next((view.got_past for view in views if view.position == position), None)


def _shown_step(lines: list[str], held: list[str]) -> str:
    """A step as a warning or recovery shows it: its ``[step n]`` label, its action and the line holding the text."""
    label, first = _step_label(lines[0])
    action = next((line[len("action: "):] for line in [first, *lines[1:]] if line.startswith("action: ")), "")
    shown = [f"{label}] {clip(action, ACTION_CHARS)}" if label else clip(action, ACTION_CHARS),
             *[clip(line.strip(), LINE_CHARS) for line in held]]
    return "\n".join(line.strip() for line in shown if line.strip())


def _step_label(line: str) -> tuple[str, str]:
    """A step's first line split into its ``[step n`` label (without the ``] ``; empty where it has none) and the rest,
    as a warning's and a recovery's steps are shown under that label."""
    label, _, rest = line.partition("] ") if line.startswith("[step ") else ("", "", line)
    return label, rest


def _step_meeting(hit: Hit, text: str) -> tuple[str, int] | None:
    """The first step of a step row (or passage) that met ``text`` as an error, shown (:func:`_shown_step`), and its
    position: a line of what the step got back (its result or error, not its thought or command) that holds the text
    verbatim (case and whitespace aside) and starts with it but for labels (:func:`_error_lead`), the command not
    holding it. A recovery is the step after it, so it must be the same error: of 56 recoveries shown
    (review RRT5), 3 had met a near match only (``name 'warnings_start' is not defined`` for ``name 'parse_config'
    ...``, whose next step fixed another name) and 1 a header the run's own script printed (``=== Testing the fix
    for TypeError: ...``)."""
    for position, part in enumerate(hit.steps or [{"text": hit.text}], start=hit.step_index):  # a passage: one step
        lines = [line for line in part["text"].splitlines() if line.strip()]
        if met := _met(lines, text):
            return _shown_step(lines, met[:1]), position
    return None


def _met(lines: list[str], text: str) -> list[str]:
    """The lines of a step's text (its non-blank ``lines``) by which it met ``text`` as an error (:func:`_step_meeting`)."""
    start = next((n for n, line in enumerate(lines) if line.startswith(("result: ", "error: "))), None)
    if start is None and not any(line.startswith(("[step ", "action: ")) for line in lines):
        start = 0  # a passage of a step's output: no labels
    said = next((n for n, line in enumerate(lines) if line.startswith(("action: ", "[step "))), 0)
    if start is None or _holds("\n".join(lines[said:start]), text):  # the command's own text: no error met
        return []
    return [line for line in lines[start:] if _holds(line, text) and _error_lead(line, text)]


def _error_lead(line: str, text: str) -> bool:
    """Whether ``text`` starts ``line`` but for labels (``result:``, ``error:``, ``/usr/bin/python:``), pytest's
    ``E``, marks (``>``, ``===``) and a module path (``pkg.mod.``): the line is that error, not a sentence naming it."""
    lead = _normalised(line).partition(_normalised(text))[0]
    return all(not any(c.isalnum() for c in word) or word.endswith((":", ".")) or word == "e"
               for word in lead.split())


#: How much of a step's action, and of the line holding a pasted text, a warning shows.
ACTION_CHARS = 200
LINE_CHARS = 400


def _fix_from_successes(ts: TrajSearch, chosen: list[FailureWarning], hits: dict[str, Hit], ctx: RuntimeContext,
                        exclude: Sequence[str], passed: dict[tuple[str, str], str | None], depth: int) -> None:
    """Where a warning records no fix, what a successful run of the same task (:func:`~.rerank.task_key`,
    inside the same filters) did: the files it changed and the state-changing tools it called, from its
    summary's ``Touched:`` line. Adapters seldom know a fix (a harness reports that a run failed, not what
    would have passed); another run of the task that passed shows it.

    ``passed``: the tasks already looked up (:func:`_this_task`), each with its successful run or None; one
    search for each other task (the first ``depth`` task rows near its text). A blank task text names no
    task to look up (the search would refuse it)."""
    wanting = {w.trajectory_id: hits[w.trajectory_id] for w in chosen
               if w.fix is None and w.trajectory_id in hits and hits[w.trajectory_id].task_id}
    if not wanting:
        return
    tasks = ts.runs(list(wanting), tenant=ctx.tenant, level="task")  # the full task texts, with their vectors
    successes = ctx.filters(levels=("task",), outcomes=("success",), exclude_trajectory_ids=exclude)
    by_failed: dict[str, str] = {}  # failed run -> a successful run of its task
    for failed, row in tasks.items():
        key = task_key(wanting[failed].task_id, row.text)
        if key not in passed and row.text.strip():
            passed[key] = next((h.trajectory_id for h in search(ts, row.text, successes, k=depth, grouped=False)
                                if task_key(h.task_id, h.text) == key), None)
        if passed.get(key):
            by_failed[failed] = passed[key]
    summaries = ts.runs(sorted(set(by_failed.values())), tenant=ctx.tenant, level="summary") if by_failed else {}
    for warning in chosen:
        summary = summaries.get(by_failed.get(warning.trajectory_id, ""))
        if summary is None:
            continue
        did = [f"changed {', '.join(files[:FIX_ITEMS])}" for files in [changed_files(summary.text)] if files]
        did += [f"called {', '.join(calls[:FIX_ITEMS])}" for calls in [calls_made(summary.text)] if calls]
        if did:
            warning.fix = f"a successful run of this task ({summary.trajectory_id}) {'; '.join(did)}"


#: How many changed files, and how many calls, a fix taken from a successful run names.
FIX_ITEMS = 5


def _this_task(ts: TrajSearch, text: str, ctx: RuntimeContext, config: AdviceConfig, exclude: Sequence[str],
               pool: int) -> tuple[list[Hit], dict[tuple[str, str], str | None]]:
    """The failure rows of failed runs whose task is this text (:func:`_same_text`: a tau-bench task
    asking for sneakers instead of a speaker embeds at 0.98 but is another task), best first, each
    carrying its task row's cosine as its similarity; and, from the same search, each such task's
    (:func:`~.rerank.task_key`) successful run, or None (the fix lookup then needs no search of its own)."""
    outcomes = (*config.warning_outcomes, "success")
    tasks = ctx.filters(levels=("task",), outcomes=outcomes, exclude_trajectory_ids=exclude)
    same = [h for h in search(ts, text, tasks, k=2 * pool, grouped=False) if _same_text(h.text, text)]  # successes share it
    passed: dict[tuple[str, str], str | None] = {}
    for hit in same:
        key = task_key(hit.task_id, hit.text)
        if key is not None and not passed.get(key):
            passed[key] = hit.trajectory_id if hit.outcome == "success" else None
    failed = [h for h in same if h.outcome in config.warning_outcomes]
    rows = ts.runs([h.trajectory_id for h in failed], tenant=ctx.tenant, level="failure") if failed else {}
    return [replace(rows[h.trajectory_id], similarity=h.score) for h in failed if h.trajectory_id in rows], passed


def _same_text(row: str, text: str) -> bool:
    """Whether a task row holds ``text`` as its task (whitespace and case aside; the row keeps the first
    ``MAX_ROW_CHARS`` of a task). A task over ``MAX_TASK_CHARS`` was cut at ingest (its head, a mark, its tail) and
    a query over ``MAX_QUERY_CHARS`` by :func:`task_query` (a shorter head): where either was cut, their heads must
    agree as far as both go (review RRT9: a 24,834-character issue never matched its own runs' rows)."""
    row_head, row_cut = _head(row)
    text_head, text_cut = _head(text[:MAX_ROW_CHARS])
    a, b = _normalised(row_head), _normalised(text_head)
    if not (row_cut or text_cut):
        return a == b
    both = min(len(a), len(b))
    return both > 0 and a[:both] == b[:both]


#: Where ingest's ``clip_task`` (``[... N characters clipped ...]``) or ``represent.clip`` (`` …[N chars cut]… ``)
#: cut a text's middle.
_CUT = re.compile(f"{mark_pattern(CLIP_MARKER.strip())}|{mark_pattern(CUT_MARK)}")


def _head(text: str) -> tuple[str, bool]:
    """``text`` up to where its middle was cut, and whether it was."""
    cut = _CUT.search(text)
    return (text[:cut.start()], True) if cut else (text, False)


def _normalised(text: str) -> str:
    """``text`` as a query is read (:func:`~trajsearch.excerpt.query_text`), case and runs of whitespace aside: a row
    and a paste compare as a reader sees them (a failure row keeps a native dump's terminal codes, which the paste's
    reading left out). Only a text ``query_text`` may read otherwise (:func:`~trajsearch.excerpt.unseen`: an ESC, a
    control, a zero-width space, a BOM, a variation selector, a log viewer's prefix) is read through it: reading every
    text cost 14.5 ms of a warnings call (review of RT10); a colour code that lost its ESC stays in a row (2 of 40,276
    step texts held two or more, see ``query_text``). Not cached: 10,105 of 15,539 texts a warnings run met occur once.
    ``str.isprintable`` had chosen which to read, and U+FE0F, which it calls printable, stayed in the row a paste
    had lost it from (review of RT10: a pasted ``No module named ⚠️ 'reproduce_app'`` got 0 warnings, not 2)."""
    seen = query_text(text) if unseen(text) else text
    return " ".join(seen.split()).casefold()


#: Words that say nothing of a task or an error: a query loses them on refinement (:func:`.loop.refine_query`),
#: and a text held verbatim needs words besides them (:func:`_holds`). Not negations: "user not found" without "not" says the opposite.
FILLER = frozenset(
    """a an the and or but so to of in on at for with from by as into about over under is are was were be been
    being am this that these those there here it its i we you he she they me my our your their us them please
    can could would should will shall may might must do does did done doing have has had having how what why
    when where which who whom whose help need needs want wants trying try tried get gets got getting make makes
    let lets just also still some any all very really currently now then than if yes like seems seem
    appears way thing things something anything someone hi hello thanks thank issue problem fix fixing named
    running using""".split()
)
#: A text held verbatim passes the cosine floor only if it is a phrase (one word, ``error``, says little) and a
#: specific one: this many words that are not filler (``you want to`` is held by many failure rows and says
#: nothing), or an error line (:data:`_ERROR_LIKE`).
_MIN_HELD_WORDS = 3
#: An error line pasted whole: a ``Label: message`` line, an exception's name, or a path.
_ERROR_LIKE = re.compile(r"\w:\s|\w(?:Error|Exception|Errno|Fault)\b|\w/\w|\w\.(?:py|js|ts|go|rs|java|c|h)\b")


def _holds(row: str, text: str) -> bool:
    """Whether a row holds ``text`` verbatim (case and runs of whitespace aside), ``text`` being a
    specific phrase (:data:`_MIN_HELD_WORDS`)."""
    words = text.split()
    specific = len(words) >= _MIN_HELD_WORDS and (
        sum(word.lower() not in FILLER for word in words) >= _MIN_HELD_WORDS or _ERROR_LIKE.search(text) is not None)
    return specific and _normalised(text) in _normalised(row)


def _distinct_warnings(ts: TrajSearch, hits: Sequence[Hit], k: int, tenant: str) -> list[FailureWarning]:
    """Up to ``k`` warnings in the hits' order: one per run and per task (:func:`~.rerank.task_key`), and
    no block saying word for word what one already does (runs of one task often fail alike: a second
    copy spends half the warning budget and hides another pitfall)."""
    runs: set[str] = set()
    seen: set[Any] = set()
    out: list[FailureWarning] = []
    for hit in hits:
        if len(out) == k:
            break
        if hit.trajectory_id in runs:
            continue
        runs.add(hit.trajectory_id)
        warning = _warning(ts, hit, tenant)
        keys = {("block", warning.task, warning.error, warning.cause, warning.fix),
                ("task", task_key(hit.task_id, warning.task))} - {("task", None)}
        if keys & seen:
            continue
        seen |= keys
        out.append(warning)
    return out


def _warning(ts: TrajSearch, hit: Hit, tenant: str) -> FailureWarning:
    """The warning of a failure row: from its digest; else from the full run (a row written before
    digests existed); else, the trace gone, from the row's own clipped text."""
    digest = from_row_steps(hit.steps)
    warning = FailureWarning(
        trajectory_id=hit.trajectory_id,
        trace_uri=hit.trace_uri,
        env_version=hit.env_version,
        similarity=similarity(hit),
        task="",
        error="",
        reader=lambda: load_trace(ts, hit, tenant),
    )
    if not isinstance(digest, WarningDigest):
        run = warning.load_trace()
        digest = warning_digest(run, UNCAPPED) if run is not None else _row_digest(hit.text)
    warning.digest = digest
    warning.task, warning.error = digest.task.text(), digest.error.text()
    for name in ("cause", "fix", "what_failed", "failing_step"):
        value = getattr(digest, name)
        setattr(warning, name, value.text() if value is not None else None)
    return warning


def _row_digest(text: str) -> WarningDigest:
    """What a failure row's text says (see represent.failure_text), whole, as a digest."""
    fields = dict(_parse_failure_row(text))

    def clip_of(label: str) -> Clip | None:
        return Clip.whole(fields[label]) if fields.get(label) else None

    return WarningDigest(UNCAPPED, clip_of("task") or Clip(""), clip_of("error") or Clip(""), clip_of("cause"),
                         clip_of("fix"), clip_of("what failed"), clip_of("failing step"))


def _parse_failure_row(text: str) -> list[tuple[str, str]]:
    """``Label: value`` lines of a failure row (see represent.failure_text)."""
    labels = ("task", "error", "cause", "fix", "what failed", "failing step")
    fields: list[tuple[str, str]] = []
    for line in text.splitlines():
        label, sep, value = line.partition(":")
        if sep and label.strip().lower() in labels:
            fields.append((label.strip().lower(), value.strip()))
        elif fields:
            name, previous = fields[-1]
            fields[-1] = (name, previous + "\n" + line)
    return fields
