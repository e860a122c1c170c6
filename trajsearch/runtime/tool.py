"""``search_past_runs``: retrieval as a function-calling tool, capped per run.

The model supplies the query (and optionally ``k`` and ``kind``); the tenant,
environment and version filters come from the trusted :class:`RuntimeContext`
the executor was built with. Any other argument is refused with a tool error
the model can read, so it cannot widen its own filters. After ``cap`` searches
the tool answers with an instruction to stop searching and escalate.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from ..excerpt import excerpt, terms
from ..represent import clip
from ..search import TrajSearch
from .advice import (QUERY_END_CHARS, AdviceConfig, Exemplar, FailureWarning, Recovery, Strategy, WarningSet,
                     any_to_follow, exemplars, search, similarity, task_query, task_query_cut, warnings)
from . import tracing
from .calibration import Calibration
from .context import RuntimeContext
from .format import (FormatConfig, Rendered, TokenCounter, checked_budget, omitted_text, default_counter, for_prompt,
                     render, render_json)

log = logging.getLogger(__name__)

from ..toolspec import CAP_SCOPE, DEFAULT_CAP, DEFAULT_RESULT_TOKENS, TOOL_NAME, definition, parse

#: Characters of the query said back in an answer: enough for the model to tell which search answered; a pasted
#: issue (SWE-bench's are often 2-6 kB; a call may carry ``toolspec.MAX_CALL_TEXT_CHARS``) said back whole was ~40%
#: of a one-exemplar answer (probe E3, observation 4).
QUERY_ECHO_CHARS = 160

#: Characters of a matched step window shown to the model, widest first: the part of the window holding the
#: match (:func:`trajsearch.excerpt.excerpt`, as the CLI and web show it), narrower when the results at one
#: width do not fit the result budget, so that ``k`` results are cut shorter before any is left out.
STEP_TEXT_WIDTHS = (800, 500, 300)

#: What an empty answer's note calls the runtime context's versions: a caller that gave them names them there instead.
CONTEXT_VERSIONS = "this run's environment or policy versions"
#: Why an answer shows nothing where every run of the kind inside the context's filters was one the caller left out
#: (``exclude_trajectory_ids``: a leave-one-out evaluation, a run asking without its own earlier attempts).
EXCLUDED = "only_excluded_runs"
_LEFT_OUT = "was one the caller left out (exclude_trajectory_ids)"
#: Why an exemplars answer shows nothing where the context's filters hold successful runs, but none the runtime offers:
#: each of those nearest the query took no step to follow (no tool call, no answer: :func:`.advice.nothing_to_follow`).
NOTHING_TO_FOLLOW = "no_runs_to_follow"
#: Why a ``kind=failures`` answer holds no warning where failed runs like the query were found and every one was left
#: out as made with other tools (:attr:`~.advice.WarningSet.other_tools`): "none close enough" said the opposite.
OTHER_TOOLS = "failures_with_other_tools"
#: Why a ``kind=failures`` answer holds no warning (its ``reason``), and the ``note`` saying it.
NO_WARNINGS = {
    "no_similar_failures": "No past failure is like this query (failed runs exist here, none close enough): "
                           "nothing to warn about.",
    "no_failures_in_versions": f"No failed run is recorded for {CONTEXT_VERSIONS} (only "
                               "with other versions or none): no warning can apply.",
    "no_failed_runs": "No failed run is recorded here yet: no warning can apply.",
    # the service's answer when the context's versions are all outside its key's pins (nothing is searched)
    "versions_not_readable": f"This key may not read runs of {CONTEXT_VERSIONS}: no warning "
                             "can apply.",
    EXCLUDED: f"Every failed run recorded here for this context {_LEFT_OUT}: no warning can apply.",
    OTHER_TOOLS: "Past failures like this query exist here, but each was made with tools this agent "
                 "does not have (tools_available): none applies to it.",
}
#: The service's reason when the context's versions are all outside its key's pins, for every kind.
UNREADABLE = "versions_not_readable"
#: The same for each kind: the reasons and notes of an empty answer.
NO_RESULTS = {
    "failures": NO_WARNINGS,
    "exemplars": {
        "no_similar_runs": "No successful past run is close enough to this query: plan from scratch.",
        "no_runs_in_versions": f"No successful run is recorded for {CONTEXT_VERSIONS} (only "
                               "with other versions or none): plan from scratch.",
        "no_successful_runs": "No successful run is recorded here yet: plan from scratch.",
        UNREADABLE: f"This key may not read runs of {CONTEXT_VERSIONS}: plan from scratch.",
        EXCLUDED: f"Every successful run recorded here for this context {_LEFT_OUT}: plan from scratch.",
        NOTHING_TO_FOLLOW: "The successful runs recorded for this context nearest this query took no step to follow "
                           "(no tool call, no answer): plan from scratch.",
    },
    "steps": {
        "no_matching_steps": "No step of a past run matches this query.",
        "no_runs_in_versions": f"No run is recorded for {CONTEXT_VERSIONS} (only "
                               "with other versions or none): no step to show.",
        "no_runs": "No run is recorded here yet: no step to show.",
        UNREADABLE: f"This key may not read runs of {CONTEXT_VERSIONS}: no step to show.",
        EXCLUDED: f"Every run recorded here for this context {_LEFT_OUT}: no step to show.",
    },
}

#: Why an exemplars or warnings context shows no run though runs were found: the token budget left them all out.
BUDGET_TOO_SMALL = "budget_too_small"


def budget_said(omitted: int) -> tuple[str, str]:
    """The reason and note of a context that found ``omitted`` runs and showed none: a similarity reason
    (``no_similar_runs``, "nothing close enough") had said the opposite of what happened (review of probe 54, 1)."""
    return BUDGET_TOO_SMALL, (f"{omitted} past run(s) were found but left out to stay within the token budget: "
                              "raise the budget to see them.")


class _Provenance:
    """A tool result's provenance as a hit-like object, for its retrieval span: with its ``kind`` (exemplar, warning,
    recovery; None for a step window), as ``Runtime.warnings``' span says it. The tool's span had given a failures
    answer's documents no kind, so a recovery (a successful run) read there as one more failed run (review RRT6, 1)."""

    def __init__(self, result: Mapping[str, Any], kind: str | None = None) -> None:
        provenance = result.get("provenance") or {}
        self.kind = kind
        self.trajectory_id = provenance.get("trajectory_id", "")
        self.similarity = provenance.get("similarity")
        self.trace_uri = provenance.get("trace_uri")
        self.env_version = provenance.get("env_version")
        self.outcome = result.get("outcome")


class SearchPastRuns:
    """The executor for one agent run: build one per run (the cap counts per instance)."""

    name = TOOL_NAME

    def __init__(
        self,
        ts: TrajSearch,
        ctx: RuntimeContext,
        *,
        cap: int = DEFAULT_CAP,
        advice: AdviceConfig = AdviceConfig(),
        fmt: FormatConfig = FormatConfig(),
        result_tokens: int = DEFAULT_RESULT_TOKENS,
        counter: TokenCounter | None = None,
        calibrations: Callable[[str], Calibration] | None = None,
    ) -> None:
        self.ts, self.ctx, self.cap = ts, ctx, cap
        self.calibrations = calibrations  # the tenant's novelty threshold (see .calibration); none: the configured one
        # refused here: taken, every call spent a search and answered "the search failed" (review RRT2, 4)
        self.advice, self.fmt, self.result_tokens = advice, fmt, checked_budget("result_tokens", result_tokens)
        self.counter = counter or default_counter()
        self.used = 0
        #: The versions (env, policy) the caller may read at most, () meaning every one: as far as
        #: ``_why_none`` looks past the context's. In-process the tenant is the caller's whole; the service
        #: sets its key's pins here.
        self.readable: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def definition(self) -> dict[str, Any]:
        return definition(self.cap)

    def __call__(self, arguments: Mapping[str, Any] | str, *, readable: bool = True) -> dict[str, Any]:
        """Run one search; always returns a JSON-able dict with a ``status``, never raises. ``readable=False``: the
        caller may read none of the context's versions (the service's key pins), so nothing is searched and the
        answer says so (:data:`UNREADABLE`), a search spent like any other empty one."""
        if self.used >= self.cap:
            return {
                "status": "limit_reached",
                "instruction": (
                    f"You have used all {self.cap} searches of past runs {CAP_SCOPE}. Stop searching. "
                    "Continue with what you have; if you cannot proceed safely, escalate to a human."
                ),
                "searches_left": 0,
            }
        try:
            args = parse(arguments)
        except ValueError as exc:  # refused: spends no search
            return {"status": "error", "error": str(exc), "searches_left": self.cap - self.used}
        query, k, kind = args.query.strip(), args.k, args.kind
        # a pasted issue or log past the search's limit: its head and tail
        searched, cut_from = task_query_cut(query)
        # the model is told what was searched, not left to think every line of it was; said in the answer's frame,
        # so counted before the results' room (added after, it took 2 of 87 steps answers over result_tokens)
        told = ({"query_searched": f"its first and last {QUERY_END_CHARS:,} of {cut_from:,} characters"}
                if cut_from else {})
        self.used += 1
        with tracing.retrieval(f"tool:{kind}", searched, self.ctx, k=k) as span:
            seen: list[_Provenance] = []  # the results with their trace URIs, for the span (the answer has none)
            try:
                result, seen = (self._run(searched, k, kind, told) if readable
                                else (self._unreadable(searched, kind), []))
            except Exception:  # the model gets a readable error, the operator the traceback
                log.exception("%s failed for tenant %s", TOOL_NAME, self.ctx.tenant)
                result = {"status": "error", "error": "the search failed; continue without it"}
            tracing.record_results(span, seen, strategy=result.get("strategy"))
            span.set_attribute("trajsearch.tool.status", result["status"])
        result |= told
        result["searches_left"] = self.cap - self.used
        return result

    def _unreadable(self, query: str, kind: str) -> dict[str, Any]:
        """The empty answer of a search the caller's key may not make: the reason and note of every kind, and the
        strategy an empty exemplars answer states. Only ``kind=failures`` had said why; exemplars and steps over a
        pinned key answered ``[]`` with no word, no strategy, and through the service no ``searches_left``, which
        gRPC read as 0 with ``capped`` false (probe 52, RT3's review)."""
        base: dict[str, Any] = {"status": "ok", "kind": kind, "query": echoed(query), "results": []}
        if kind == "exemplars":
            base["strategy"] = Strategy.plan_from_scratch.value
        return base | {"reason": UNREADABLE, "note": NO_RESULTS[kind][UNREADABLE]}

    def _run(self, query: str, k: int, kind: str,
             told: Mapping[str, Any]) -> tuple[dict[str, Any], list[_Provenance]]:
        """The answer, and its results with their kinds and trace URIs (the answer names each run by its id:
        :data:`~trajsearch.runtime.format.PROMPT_LEAVES_OUT`). ``told``: fields said about the query (its
        ``query_searched``), in the frame the results' room is counted from."""
        base: dict[str, Any] = {"status": "ok", "kind": kind, "query": echoed(query), **told}
        room = self._room(base, k)
        if kind == "steps":
            results, omitted = self._steps(query, k, room)
            if not results:  # why none: the runtime (and the model) can tell
                base["reason"], base["note"] = self._why_empty(query, kind, omitted)
            if omitted:  # the model is told, not left to think there were no more (probe E, E1)
                base["omitted"] = omitted
                base["note"] = base.get("note") if not results else omitted_text(omitted)
            return base | {"results": [for_prompt(r) for r in results]}, [_Provenance(r) for r in results]
        if kind == "exemplars":
            found = exemplars(self.ts, query, self.ctx, k=k, config=self.advice, calibrations=self.calibrations)
            strategy, shown, warned, held = found.strategy, found.items, WarningSet(held=False), \
                found.best_similarity is not None
            none_to_follow = found.none_to_follow
        else:  # failed runs, and for a pasted error the runs that got past it, as the Warnings call answers
            warned = warnings(self.ts, query, self.ctx, k=k, config=self.advice)
            strategy, shown, held, none_to_follow = None, [], warned.held, False
        while True:
            rendered = render(strategy, shown, warned, config=self.fmt, fmt="json", counter=self.counter, budget=room,
                              recoveries=warned.recoveries)
            answer, results = self._said(dict(base), rendered, strategy, query, held, none_to_follow,
                                         warned.other_tools)
            # the sentence saying how many runs were left out is not in the room: 2 of 636 answers on the real
            # mini-swe-agent runs were over result_tokens (301, 306 of 300). Rendered again in less room where the
            # whole answer is over: reserving the sentence always showed 102 of 137 results in 477 answers (RALL-B, 2)
            over = self.counter.count(render_json(answer | {"searches_left": self.cap})) - self.result_tokens
            if over <= 0 or room == 1:
                return answer, results
            room = max(1, room - over)

    def _said(self, base: dict[str, Any], rendered: Rendered, strategy: Strategy | None, query: str,
              held: bool, none_to_follow: bool = False,
              other_tools: bool = False) -> tuple[dict[str, Any], list[_Provenance]]:
        """An exemplars (``strategy`` given) or failures answer from its rendered results: the note, and the reason
        where none is shown (:func:`why_empty`, as ``Runtime.advice`` says it), or how many were left out."""
        kind = base["kind"]
        # a failures answer's recoveries after its warnings, each labelled (``how a past run got past this``)
        results = [(Exemplar.kind, view) for view in rendered.data["exemplars"]] if strategy is not None else \
            [*((FailureWarning.kind, view) for view in rendered.data["warnings"]),
             *((Recovery.kind, view) for view in rendered.data.get("recoveries", []))]
        if strategy is not None:
            base["strategy"] = rendered.stated(strategy).value
        if results:
            base["note"] = rendered.data["header"]
            if rendered.omitted:  # "more" beside the runs shown
                base["note"] += " " + omitted_text(rendered.omitted)
        else:  # why none: the runtime (and the model) can tell
            base["reason"], base["note"] = self._why_empty(query, kind, rendered.omitted, held, none_to_follow,
                                                           other_tools)
        if rendered.omitted:
            base["omitted"] = rendered.omitted
        return (base | {"results": [for_prompt(view) for _, view in results]},
                [_Provenance(view, item_kind) for item_kind, view in results])

    def _room(self, base: dict[str, Any], k: int) -> int:
        """The tokens the results may take: ``result_tokens`` less the rest of the answer (its status, kind, query said
        back, searches left and a left-out note), so that the whole answer the model reads fits ``result_tokens``.
        Only the results were counted: 10 of 30 exemplars answers on the shared dumps were over it (median 1,188,
        at most 1,232 of 1,200 tokens), 2 of 30 steps answers (1,273)."""
        frame = base | {"searches_left": self.cap}
        return max(1, self.result_tokens - self.counter.count(render_json(frame)))

    def _why_empty(self, query: str, kind: str, omitted: int, held: bool | None = None,
                   none_to_follow: bool = False, other_tools: bool = False) -> tuple[str, str]:
        """Why an answer shows no result: :func:`why_empty` in this executor's context and readable versions."""
        return why_empty(self.ts, query, self.ctx, kind, omitted=omitted, held=held, readable=self.readable,
                         warning_outcomes=self.advice.warning_outcomes, none_to_follow=none_to_follow,
                         other_tools=other_tools)

    def _steps(self, query: str, k: int, room: int) -> tuple[list[dict[str, Any]], int]:
        """The best step windows, each shown around the match, and how many were left out to fit the budget.

        A window is up to ~2,000 characters and a pasted error line sits anywhere in it: its head and tail
        (what was shown before) dropped the line from 79 of 126 top results (probe E, E1)."""
        filters = self.ctx.filters(levels=("step",))
        hits = search(self.ts, query, filters, k=k, mode="auto")  # exact error strings: the lexical leg helps
        query_terms = terms(query)
        shown = self.ts.outcomes_shown(hits, tenant=self.ctx.tenant)  # a success no one evaluated is said so
        for width in STEP_TEXT_WIDTHS:
            results = [_step_result(h, excerpt(h.text.strip(), query_terms, width), shown[h.trajectory_id])
                       for h in hits]
            if self._fits(results, room):
                return results, 0
        omitted = 0
        room -= self.counter.count(render_json({"omitted": k, "note": omitted_text(k)}))  # the answer will say it
        while results and not self._fits(results, room):
            results.pop()
            omitted += 1
        return results, omitted

    def _fits(self, results: list[dict[str, Any]], room: int) -> bool:
        return self.counter.count(render_json({"results": [for_prompt(r) for r in results]})) <= room


def why_empty(ts: TrajSearch, query: str, ctx: RuntimeContext, kind: str, *, omitted: int, held: bool | None,
              readable: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()),
              warning_outcomes: tuple[str, ...] | list[str] = AdviceConfig().warning_outcomes,
              excluded: Sequence[str] = (), none_to_follow: bool = False,
              other_tools: bool = False) -> tuple[str, str]:
    """Why an answer shows no run (``reason``, ``note``), the one place the runtime's verbs and the tool decide it:
    ``omitted`` runs found but all left out by the token budget (:func:`budget_said`), else :func:`why_none` of
    ``kind`` (``exemplars``, ``failures``, ``steps``). The tool had decided it itself: an answer whose runs
    ``result_tokens`` all left out said no reason where ``Runtime.advice`` and gRPC said ``budget_too_small``
    (review RRT6, 4: all 77 pasted error lines at ``result_tokens=150``)."""
    if omitted:
        return budget_said(omitted)
    return why_none(ts, query, ctx, kind, warning_outcomes=warning_outcomes, readable=readable, held=held,
                    excluded=excluded, none_to_follow=none_to_follow, other_tools=other_tools)


def why_none(ts: TrajSearch, query: str, ctx: RuntimeContext, kind: str, *,
             warning_outcomes: tuple[str, ...] | list[str] = AdviceConfig().warning_outcomes,
             readable: tuple[tuple[str, ...], tuple[str, ...]] = ((), ()), held: bool | None = None,
             excluded: Sequence[str] = (), none_to_follow: bool = False,
             other_tools: bool = False) -> tuple[str, str]:
    """Why a search found nothing, as a label (:data:`NO_RESULTS`) and its sentence: an empty answer read alike
    whether the query was like nothing, the context's versions held no run of the kind, or the tenant had
    none, so an agent (and whoever reads its trace) could not tell "nothing like this" from "nothing was there
    to look at". Two searches for the nearest row of the kind, inside the context's filters and then inside
    the versions the caller may read (``readable``: env and policy versions, () meaning every one), on an empty
    answer only: widened to the tenant's whole, a key pinned to some versions learnt that runs existed in others
    (probe 50, D4). Exemplars and steps had said nothing: an MCP server started with the README's
    ``--env-version v2`` over runs recorded with no version answered every exemplars and steps search with no run
    and no word why (probe 52, RT3). The service's ``Exemplars`` and ``Warnings`` answer an empty context with it
    too: only a pinned key's had said why (review RRT2, 2). ``held``: whether the caller's own search inside the
    context's filters found a row of the kind (an exemplars or warnings search has just asked), so the first search
    is not made again: an empty answer cost 1-2 searches more than the advice (RT4: exemplars under an unknown
    version 3 searches where a full answer took 2 and a lexical look-up); None: not known, searched here.
    ``excluded``: the runs the caller's search left out (``held`` says whether the rest held a row); where that held
    none, one search more asks whether the excluded runs were all there was (:data:`EXCLUDED`): ``context_for`` with
    every run excluded had said ``no_successful_runs``, "No successful run is recorded here yet" (review RRT6, 2).
    ``none_to_follow``: the caller's exemplars search found successful runs, but none that took a step to follow
    (:attr:`~.advice.ExemplarSet.none_to_follow`), said as :data:`NOTHING_TO_FOLLOW`: a real Harbor trial whose model
    never answered, passed by its verifier, had read "No successful run is recorded here yet" (round 25, RT8).
    ``other_tools``: the caller's warnings search found failed runs like the query, every one made with tools the agent
    has not (:attr:`~.advice.WarningSet.other_tools`), said as :data:`OTHER_TOOLS`: it had said
    ``no_similar_failures``, "none close enough", of runs that were close (round 28, ENG6)."""
    query = task_query(query)  # a task over the search's limit is clipped as the advice that found nothing clipped it
    levels, outcomes = {"exemplars": (("task",), ("success",)), "steps": (("step",), ()),
                        "failures": (("failure",), tuple(warning_outcomes))}[kind]
    nothing_close, only_others, nothing = list(NO_RESULTS[kind])[:3]  # failures' fourth is the service's
    tenant = ctx.filters(levels=levels, outcomes=outcomes)
    widened = replace(tenant, env_versions=readable[0], policy_versions=readable[1])
    if held is None:
        inside = ctx.filters(levels=levels, outcomes=outcomes, exclude_trajectory_ids=excluded)
        held = bool(search(ts, query, inside, k=1, grouped=False))
    if other_tools:
        reason = OTHER_TOOLS
    elif held:
        reason = nothing_close
    elif none_to_follow and not (widened != tenant and any_to_follow(ts, search(ts, query, widened, k=10,
                                                                                grouped=False), ctx.tenant)):
        reason = NOTHING_TO_FOLLOW  # unless other versions hold a run to follow: those are said (only_others)
    elif excluded and search(ts, query, tenant, k=1, grouped=False):
        reason = EXCLUDED
    elif widened != tenant and search(ts, query, widened, k=1, grouped=False):
        reason = only_others
    else:
        reason = nothing
    return reason, NO_RESULTS[kind][reason]


def _step_result(hit: Any, text: str, outcome: str) -> dict[str, Any]:
    """A step window as the model sees it, with what ranked it: ``holds_query`` (the window holds the query
    whole, which ranks it first) and ``score`` (the ranking's own number), beside ``similarity`` (the
    embedding cosine alone, which a pasted line's exact hit may have lowest: probe rev2, R2-1). ``outcome`` as a
    reader is told it: "submitted, not evaluated" for a success no one evaluated, as the exemplars say it."""
    return {
        "provenance": {"trajectory_id": hit.trajectory_id, "trace_uri": hit.trace_uri,
                       "env_version": hit.env_version, "holds_query": hit.verbatim, "score": round(hit.score, 3),
                       "similarity": round(similarity(hit), 3)},
        "outcome": outcome,
        "steps": f"{hit.step_index}-{hit.step_end}",
        "text": text,
    }


def echoed(query: str) -> str:
    """``query`` as an answer says it back: its first :data:`QUERY_ECHO_CHARS` characters, `` …`` marking a cut."""
    return clip(query, QUERY_ECHO_CHARS)
