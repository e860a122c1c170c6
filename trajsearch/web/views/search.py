"""The search page: the form, one result per run with its matched step in context, the facets."""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Mapping

from cachetools import TTLCache
from markupsafe import Markup

from ...excerpt import BLANK_TEXT, best_step, blank, excerpt, failure_error
from ...model import Trajectory, filter_value, outcome_shown, passes
from ...represent import CUT_MARK, mark_pattern
from ...results import Hit
from ...runtime import task_query_cut
from ...filtered_out import FilterGiven, filtered_out_note
from ...bounds import MAX_K, out_of_bounds
from ...search import TrajSearch, id_shaped
from ...service.auth import Principal, narrow
from ...store.filters import Filters, quote
from ...service.trace_reads import DEADLINE, TraceReads, TraceStoreBusy
from ...store.traces import TraceStore, TraceStoreError
from ...vocab import MODES, OUTCOMES
from ...weak_match import weak_match_note
from .common import _clip, no_runs_said, when, DEFAULT_LEVELS, K_CHOICES, LEVEL_CHOICES, MAX_QUERY_CHARS, NotFound, looks_like_id, looks_like_trace_uri, run_link, visible_run
from ..highlight import highlight, terms


#: The mark ``represent.clip`` leaves where it cut a text's middle (``task_query`` of a paste over the limit).
_CUT_MARK = re.compile(mark_pattern(CUT_MARK))


@dataclass
class SearchForm:
    """The search page's query string, validated; ``errors`` maps a field name to what is wrong with it."""

    q: str = ""
    mode: str = "auto"
    env: str = ""
    outcome: str = ""
    level: str = ""
    tools: str = ""
    model: str = ""
    since: str = ""  # as shown in the form (YYYY-MM-DD); the parsed day is since_day
    until: str = ""
    since_day: date | None = None
    until_day: date | None = None
    k: int = 10
    errors: dict[str, str] = field(default_factory=dict)
    #: the length of a paste over :data:`MAX_QUERY_CHARS`, searched by its head and tail (0: none was cut)
    pasted_chars: int = 0

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> SearchForm:
        form = cls()
        get = lambda name: (params.get(name) or "").strip()  # noqa: E731
        # a textarea's line breaks arrive as CRLF (the HTML form encoding): counted twice, a 15,000-character log
        # of 600 lines was refused as too long, and the box then showed it with each break doubled
        form.q = (params.get("q") or "").replace("\r\n", "\n").strip()
        # a paste cut by this page shows the marker clip() put where its middle was: searched again, the box's
        # text searched "[30123 chars cut]" as words of the query
        form.q = _CUT_MARK.sub("\n", form.q)
        if len(form.q) > MAX_QUERY_CHARS:  # a whole CI log: its head and tail, as the CLI and the runtime take it
            # its length as the search reads it, a pasted image's base64 as its placeholder: counted raw, a short
            # error with a screenshot was said to be "over the 20,000 a search takes" and cut, when it was not
            form.q, cut_from = task_query_cut(form.q)
            form.pasted_chars = cut_from or 0
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in form.q):
            form.errors["q"] = "not valid text"
            form.q = ""
        elif params.get("q") and blank(form.q):  # "%00", "%E2%80%8B" (ranked 10 runs) or "   ": said as everywhere
            form.errors["q"] = BLANK_TEXT
            form.q = ""
        form.mode = get("mode") or "auto"
        if form.mode not in MODES:
            form.errors["mode"] = f"one of {', '.join(MODES)}"
            form.mode = "auto"
        form.outcome = get("outcome")
        if form.outcome and form.outcome not in OUTCOMES:
            form.errors["outcome"] = f"one of {', '.join(OUTCOMES)}"
            form.outcome = ""
        form.level = get("level")
        if form.level not in dict(LEVEL_CHOICES):
            form.errors["level"] = f"one of {', '.join(v or 'default' for v, _ in LEVEL_CHOICES)}"
            form.level = ""
        if form.level == "passage" and form.mode == "dense":
            form.errors["mode"] = "passages are searched by their words only: lexical, hybrid or auto"
        for name in ("env", "model"):
            value = get(name)
            setattr(form, name, value)
            if value:
                try:
                    quote(value, name)
                except (TypeError, ValueError):
                    form.errors[name] = "at most 200 characters, no control characters"
                    setattr(form, name, "")
        form.tools = get("tools")
        for tool in form.tool_list:
            try:
                quote(tool, "tools")
            except (TypeError, ValueError):
                form.errors["tools"] = "tool names of at most 200 characters, separated by commas"
                form.tools = ""
                break
        for name, label in (("since", "From"), ("until", "To")):
            value = get(name)
            if not value:
                continue
            day = parse_day(value)
            if day is None:
                form.errors[name] = f"{label}: {DATE_FORMS} (got {_clip(value, 40)!r})"
                continue
            setattr(form, name, day.isoformat())
            setattr(form, f"{name}_day", day)
        if form.since_day and form.until_day and form.since_day > form.until_day:
            form.errors["until"] = f"To: on or after the start date ({form.since})"
            form.until, form.until_day = "", None
        k = get("k")
        # any count the library takes, as the CLI's -k (the page offered 10, 20 and 50 only); said, as for the other
        # fields (probe E, E3)
        if k and (said := out_of_bounds(int(k) if k.isdigit() and len(k) < 10 else _clip(k, 40), 1, MAX_K)):
            form.errors["k"] = said
        form.k = int(k) if not form.errors.get("k") and k else 10
        return form

    @property
    def k_choices(self) -> tuple[int, ...]:
        """The counts of runs the form offers: :data:`K_CHOICES`, and the one asked for where it is none of them."""
        return tuple(sorted({*K_CHOICES, self.k}))

    @property
    def tool_list(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.strip() for t in self.tools.split(",") if t.strip()))[:32]

    @property
    def levels(self) -> tuple[str, ...]:
        if self.level == "any":
            return ()
        return (self.level,) if self.level else DEFAULT_LEVELS

    def params(self, **overrides: Any) -> dict[str, str]:
        """The non-default fields as query parameters (for links that keep the filters)."""
        values = {"q": self.q, "mode": self.mode if self.mode != "auto" else "", "env": self.env,
                  "outcome": self.outcome, "level": self.level, "tools": self.tools, "model": self.model,
                  "since": self.since, "until": self.until, "k": str(self.k) if self.k != 10 else ""}
        values.update({k: str(v) for k, v in overrides.items()})
        return {k: v for k, v in values.items() if v}


DATE_FORMS = "a date, YYYY-MM-DD (or YYYYMMDD), in the years 1 to 9999"
_DATE_RES = (re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII), re.compile(r"(\d{4})(\d{2})(\d{2})", re.ASCII))
_EPOCH_DAY = date(1970, 1, 1)


def parse_day(text: str) -> date | None:
    """A calendar day written YYYY-MM-DD (what a date input sends) or YYYYMMDD; None for anything else."""
    for pattern in _DATE_RES:
        match = pattern.fullmatch(text)
        if match:
            try:
                return date(*(int(part) for part in match.groups()))
            except ValueError:  # year 0, month 13, February 30
                return None
    return None


def _epoch(day: date, *, end: bool = False) -> int:
    """Epoch seconds at the start of ``day`` (UTC), or of the next day with ``end``; days before 1970 are 0
    (no run is older), and day arithmetic on integers cannot overflow at 9999-12-31."""
    return max(0, ((day - _EPOCH_DAY).days + (1 if end else 0)) * 86400)


# -- run facts that only the trace holds ---------------------------------------------------------


@dataclass(frozen=True)
class RunFacts:
    """What a result shows that its row does not carry (the model; the task, which a step row lacks), per trace.

    ``unread`` says why the trace was not read: "" (it was, or it is missing or damaged), "busy" (the page's
    reads waited their turn in vain), "store" (the store failed or did not answer), "skipped" (an earlier
    read of the request failed)."""

    model: str | None
    task: str | None = None
    unread: str = ""
    outcome: str | None = None  # as a reader is told it (``model.outcome_shown``): "submitted, not evaluated"

    @property
    def readable(self) -> bool:
        return not self.unread


#: The web pages' own trace-read budget (see :meth:`TraceReads.budget`): permits (a tenant half of them; the
#: default of ``serve --page-reads``), how long a read waits its turn, how many reads may wait. Their own, so
#: that a page reading a model filter's hundreds of traces queues behind the other pages and never takes the
#: agents' ``GetTrace`` permits; waiting, so that a busy moment costs time, not runs silently left out. The
#: store thus sees at most ``--trace-reads`` plus ``--page-reads`` reads at once.
PAGE_READ_SLOTS = 8
PAGE_READ_WAIT = 10.0
PAGE_READ_WAITERS = 64
#: How long a page waits for one trace over a store that ``serve`` does not bound (``trajsearch ui``'s
#: ``--trace-timeout``): a run page is there to show its trace, and one of a long session on a network mount
#: takes more than the agents' 10 s (it answered 503 "did not answer" where it used to open, only slower).
#: Under ``serve`` the pages wait as long as its ``--trace-timeout``.
PAGE_READ_TIMEOUT = 120.0
#: How long a search page waits for one trace read for its model column and filter (a run's model, the task of
#: a step's run): the results are shown without them rather than wait as long as a run page may.
FACT_READ_WAIT = 10.0


def page_reads(traces: TraceStore, slots: int = PAGE_READ_SLOTS, timeout: float | None = None) -> TraceReads:
    """The pages' own bounded reads of the store behind ``traces`` (the server's bounded one, or a plain store):
    at most ``slots`` at once, each waited for ``timeout`` s (None: the server's ``--trace-timeout`` over its
    bounded store, else :data:`PAGE_READ_TIMEOUT`).

    A read given up on keeps its permit until the store answers (see :class:`TraceReads`): a local file or
    S3 (botocore's timeouts) does; a hung mount never does, and once a tenant's share of the permits waits on
    it, that tenant's pages answer 503 "busy" after :data:`PAGE_READ_WAIT` s instead of starting more reads."""
    bounded = traces if isinstance(traces, TraceReads) else TraceReads(traces, timeout=timeout or PAGE_READ_TIMEOUT)
    return bounded.budget(slots=slots, queue_wait=PAGE_READ_WAIT, waiters=PAGE_READ_WAITERS, timeout=timeout)


class TraceFacts:
    """Per-tenant cache of :class:`RunFacts` read from traces (the index has no ``model_id`` field).

    Reads use the pages' own budget (:func:`page_reads`); once the store fails or a read waits in vain
    in a request, the rest of that request does without (a slow store costs one read's wait, at most
    :data:`FACT_READ_WAIT` s).
    """

    def __init__(self, ts: TrajSearch, *, size: int = 50_000, ttl: float = 300.0,
                 reads: int = PAGE_READ_SLOTS, timeout: float | None = None) -> None:
        self.reads = page_reads(ts.traces, reads, timeout)
        self._cache: TTLCache = TTLCache(maxsize=size, ttl=ttl)
        self._lock = threading.Lock()
        # tenant -> (env version, policy version) -> models: suggestions are narrowed to a key's pins
        self._models: dict[str, dict[tuple[str | None, str | None], set[str]]] = {}

    def get(self, tenant: str, trace_uri: str, *, read: bool = True) -> RunFacts:
        key = (tenant, trace_uri)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None or not read:
            return cached or RunFacts(None, None, unread="skipped")
        # at most FACT_READ_WAIT s (or what is left of a call's deadline): the run pages' timeout is far longer
        deadline = time.monotonic() + FACT_READ_WAIT
        token = DEADLINE.set(min(DEADLINE.get() or deadline, deadline))
        try:
            trajectory = self.reads.get(trace_uri, tenant=tenant)
        except TraceStoreBusy:
            return RunFacts(None, None, unread="busy")
        except (ValueError, KeyError):  # this run's trace is missing or damaged, not the store: no model known
            return RunFacts(None, None)
        except TraceStoreError:
            return RunFacts(None, None, unread="store")
        finally:
            DEADLINE.reset(token)
        return self.remember(tenant, trace_uri, trajectory)

    def many(self, tenant: str, trace_uris: list[str]) -> list[RunFacts]:
        """:meth:`get` of each of ``trace_uris``, in order, read in parallel within a tenant's share of
        the pages' permits (a model filter reads every run in scope: one store round trip each)."""
        if not trace_uris:
            return []
        failed = threading.Event()

        def one(uri: str) -> RunFacts:
            facts = self.get(tenant, uri, read=not failed.is_set())
            if not facts.readable:
                failed.set()
            return facts

        with ThreadPoolExecutor(max_workers=min(self.reads.per_tenant, len(trace_uris))) as pool:
            return list(pool.map(one, trace_uris))

    def remember(self, tenant: str, trace_uri: str, trajectory: Trajectory) -> RunFacts:
        facts = RunFacts(trajectory.model_id, trajectory.task[:400], outcome=outcome_shown(trajectory))  # task: 260
        versions = (trajectory.env_version or None, trajectory.policy_version or None)
        with self._lock:
            self._cache[(tenant, trace_uri)] = facts
            if facts.model:
                self._models.setdefault(tenant, {}).setdefault(versions, set()).add(facts.model)
        return facts

    def models(self, principal: Principal) -> list[str]:
        """Models seen so far in the traces of runs this key sees (suggestions for the model filter):
        its tenant's, inside its pins."""
        with self._lock:
            by_versions = list(self._models.get(principal.tenant, {}).items())
        return sorted({model for (env, policy), models in by_versions if principal.sees(env, policy)
                       for model in models})


def selectable(value: str) -> bool:
    """Whether a filter can name ``value`` (a store written before ingest refused the others may hold some)."""
    return passes(filter_value, value)


class Facets:
    """Values to suggest in the filters (env versions, tools), per tenant, refreshed every few minutes."""

    def __init__(self, ts: TrajSearch, *, ttl: float = 300.0) -> None:
        self.ts = ts
        self._cache: TTLCache = TTLCache(maxsize=1024, ttl=ttl)
        self._lock = threading.Lock()

    def get(self, principal: Principal) -> dict[str, list[str]]:
        key = (principal.tenant, principal.env_versions, principal.policy_versions)
        with self._lock:
            found = self._cache.get(key)
        if found is not None:
            return found
        envs: set[str] = set()
        tools: set[str] = set()
        filters = Filters(tenant=principal.tenant, levels=("task",), env_versions=principal.env_versions,
                          policy_versions=principal.policy_versions)
        for row in self.ts.rows(filters, ["env_version", "tools"]):
            if row.get("env_version") and selectable(row["env_version"]):
                envs.add(row["env_version"])
            tools.update(tool for tool in row.get("tools") or () if selectable(tool))
        found = {"envs": sorted(envs), "tools": sorted(tools)}
        with self._lock:
            self._cache[key] = found
        return found


# -- search ------------------------------------------------------------------------------------


@dataclass
class StepLine:
    position: int
    index: int
    action: str
    text: Markup
    matched: bool


@dataclass
class ResultView:
    rank: int
    hit: Hit
    task: str
    model: str | None
    context: list[StepLine]
    snippet: Markup | None  # task / summary hits: the matched text itself
    link: str  # the run page, at the matched step
    #: the outcome as the run page says it: a success no one evaluated (a SWE-bench run handed in, no verdict
    #: joined) is "submitted, not evaluated" there and in the agents' exemplars, and was "success" here
    outcome: str | None = None

    @property
    def matched_at(self) -> str:
        """Where the run is opened, as the page marks the match: its step (``step 7``), or a window marked whole when
        no step of it holds a word of the query (``steps 0-2``); "" for a task or summary hit. Such a window's link
        had said "at step 0", claiming the match a step no step holds."""
        matched = [line.index for line in self.context if line.matched]
        if not matched:
            return ""
        return f"step {matched[0]}" if len(matched) == 1 else f"steps {matched[0]}-{matched[-1]}"

    @property
    def verbatim(self) -> bool:
        """Whether the ranking put the matched row first for holding the query whole (lexical, hybrid)."""
        return self.hit.verbatim

    @property
    def similarity(self) -> float | None:
        """Cosine to the query whatever the mode (None in lexical mode, which computes no vectors)."""
        return self.hit.similarity

    @property
    def when(self) -> str:
        return when(self.hit.created_at)


@dataclass
class SearchOutcome:
    form: SearchForm
    results: list[ResultView] = field(default_factory=list)
    anchor: Hit | None = None  # "runs like this one": the run whose id was pasted
    mode_used: str = ""
    notes: list[str] = field(default_factory=list)
    ms: float = 0.0
    searched: bool = False
    no_runs: str = ""  # said instead of "no runs match" when the key's tenant holds none (:func:`.no_runs_said`)

    @property
    def cosine(self) -> bool:
        """Whether a cosine is shown beside the score: in hybrid mode, where the search computed one (no
        vector when only passages are searched)."""
        return self.mode_used == "hybrid" and any(r.similarity is not None for r in self.results)

    @property
    def score_meaning(self) -> str:
        """What the score the results are ranked by is, for the mode the search ran."""
        if self.mode_used == "hybrid" and self.results and not self.cosine:
            return HYBRID_WORDS_ONLY
        return SCORE_MEANINGS.get(self.mode_used, "")


def search(ts: TrajSearch, principal: Principal, form: SearchForm, facts: TraceFacts, *,
           ui_tenant: bool = False) -> SearchOutcome:
    """The search page: a pasted id means "runs like this one"; anything else is searched as text. ``ui_tenant``:
    see :func:`.no_runs_said`."""
    out = _search(ts, principal, form, facts)
    if out.searched and not out.results:
        out.no_runs = no_runs_said(ts, principal, ui_tenant=ui_tenant)
        if not out.no_runs and (note := _filtered_out_note(ts, principal, form, facts, out)):
            out.notes.append(note)
    return out


def _filtered_out_note(ts: TrajSearch, principal: Principal, form: SearchForm, facts: TraceFacts,
                       out: SearchOutcome) -> str | None:
    """When no run matched inside the form's filters but the same search without them (in the mode the search ran)
    finds one of the key's runs, say so, as the CLI's ``search`` does: an env version or tool misspelt, or never
    recorded for these runs, was answered "No runs match inside these filters" alone, where the CLI named the filter
    and asked whether it was misspelt (the note is :func:`~trajsearch.filtered_out.filtered_out_note`'s). None
    when no such filter was given, or nothing matches without them either, or dates were given: a period no run
    started in is no value misspelt, and the search without it could not tell which filter left nothing."""
    if not (form.env or form.outcome or form.tool_list or form.model) or form.since or form.until:
        return None
    text, exclude = form.q, ()
    if out.anchor is not None:  # runs like a pasted id's run: its own text, the run left out, as the search ran
        text, exclude = ts.anchor_text(out.anchor.trajectory_id, tenant=principal.tenant) or out.anchor.text, (
            out.anchor.trajectory_id,)
    bare = Filters(tenant=principal.tenant, levels=form.levels, env_versions=principal.env_versions,
                   policy_versions=principal.policy_versions, exclude_trajectory_ids=exclude)

    def search(*, levels: tuple[str, ...], k: int, mode: str, **inside: tuple[str, ...]) -> list[Hit]:
        """The key's search of ``text`` inside the filters given alone (:mod:`trajsearch.filtered_out`)."""
        inside_only = replace(bare, levels=levels, exclude_trajectory_ids=(), **inside)
        return ts.search_filtered(text, inside_only, k=k, mode=mode)

    given: list[FilterGiven] = []  # each filter as said, the rows' fields it holds them by (no row holds a model)
    if form.env:
        env = narrow((form.env,), principal.env_versions)  # None: a version the key may not read
        given.append(FilterGiven(f"env version {form.env}", {"env_versions": env or ()},
                                 held=False if env is None else None, recorded="env_version"))
    if form.outcome:
        given.append(FilterGiven(f"outcome {form.outcome}", {"outcomes": (form.outcome,)}))
    if form.tool_list:
        given.append(FilterGiven(f"tools {', '.join(form.tool_list)}", {"tools": tuple(form.tool_list)}))
    if form.model:  # no row holds a model: the traces read so far (the model filter's own suggestions)
        given.append(FilterGiven(f"model {form.model}", {}, held=form.model in facts.models(principal)))
    note = filtered_out_note(search, given, levels=form.levels, found_without=lambda: ts.search_filtered(
        text, bare, k=1, mode=out.mode_used or form.mode))
    if note is None:
        return None
    return note[0].upper() + note[1:]


def _search(ts: TrajSearch, principal: Principal, form: SearchForm, facts: TraceFacts) -> SearchOutcome:
    started = time.perf_counter()
    out = SearchOutcome(form=form)
    if not form.q or form.errors:
        return out
    out.searched = True
    if form.pasted_chars:
        out.notes.append(f"The text is {form.pasted_chars:,} characters, over the {MAX_QUERY_CHARS:,} a search takes: "
                         "searched by its head and tail (an error is most often at its end).")
    tenant = principal.tenant
    text = form.q
    exclude: tuple[str, ...] = ()
    anchor_id = None
    pasted_uri = looks_like_trace_uri(text)
    if pasted_uri:
        try:
            anchor_id = facts.reads.get(text, tenant=tenant).trajectory_id  # the pages' permits, not the agents'
        except (TraceStoreError, ValueError, KeyError):
            anchor_id = None
    elif looks_like_id(text):
        anchor_id = text
    if anchor_id is not None:
        try:
            out.anchor = visible_run(ts, principal, anchor_id)
        except NotFound:
            out.anchor = None
    if pasted_uri and out.anchor is None:  # missing, or outside the key's pins: the same note
        out.notes.append("No run of yours has that trace URI; searched it as text.")
    elif anchor_id is not None and out.anchor is None and (note := _no_run_note(ts, principal, anchor_id)):
        out.notes.append(note)
    mode = form.mode
    if out.anchor is not None:  # runs like this one, as `similar --id` finds them: the same anchor, hybrid by default
        text = ts.anchor_text(out.anchor.trajectory_id, tenant=tenant) or out.anchor.text
        exclude = (out.anchor.trajectory_id,)
        mode = "hybrid" if mode == "auto" else mode
    env = narrow((form.env,) if form.env else (), principal.env_versions)
    policy = narrow((), principal.policy_versions)
    if env is None or policy is None:  # the key's pins exclude the asked env version: nothing is searched
        pinned = Filters(tenant=tenant, levels=form.levels, env_versions=principal.env_versions,
                         policy_versions=principal.policy_versions)
        out.mode_used = ts.mode_used(text, pinned, mode)
        out.ms = (time.perf_counter() - started) * 1000
        return out
    filters = Filters(
        tenant=tenant, levels=form.levels, outcomes=(form.outcome,) if form.outcome else (),
        env_versions=env, policy_versions=policy, tools=form.tool_list, exclude_trajectory_ids=exclude,
        created_after=_epoch(form.since_day) if form.since_day else None,
    )
    unread = ""
    scope = None
    if form.model or form.until_day:
        scope, unread = runs_in_scope(ts, facts, filters, form)
    if scope is not None:
        filters = replace(filters, trajectory_ids=scope)
    # what the search code runs, decided on the filters it runs with: auto over passages is lexical, and a line a
    # row holds verbatim goes hybrid, a row the key's pins let it see (a label turned by a run outside them said
    # that run held the line: review RGE 2)
    out.mode_used = ts.mode_used(text, filters, mode)
    post_filtered = scope is None and bool(form.model or form.until_day)
    k = min(200, form.k * 5) if post_filtered else form.k
    hits = [] if scope == () else ts.search_filtered(text, filters, k=k, group_by_trajectory=True, group_size=1,
                                                        mode=mode)
    if form.until_day:
        before = _epoch(form.until_day, end=True)
        hits = [h for h in hits if h.created_at < before]
    kept: list[tuple[Hit, RunFacts]] = []
    for hit in hits:
        if len(kept) >= form.k:
            break
        run_facts = facts.get(tenant, hit.trace_uri, read=not unread)
        unread = unread or run_facts.unread
        if form.model and run_facts.model != form.model:
            continue
        kept.append((hit, run_facts))
    if unread:
        out.notes.append(("Trace reads are busy (other pages are reading many traces)" if unread == "busy"
                          else "The trace store did not answer") + ": models are not shown"
                         + (" and the model filter may miss runs." if form.model else "."))
    if post_filtered and len(hits) >= k and len(kept) < form.k:
        out.notes.append(f"More than {MODEL_SCOPE_RUNS:,} runs are inside the other filters: the model and "
                         f"end-date filters are applied to the best {k} runs only.")
    # filtered after the search, the closest row it found may be a run the filters hide: judged by what is shown
    if note := weak_match_note((hit for hit, _ in kept), shown_only=post_filtered):
        out.notes.append(note[0].upper() + note[1:] + ".")
    marked = form.q if out.anchor is None else failure_error(text)  # an id marks its run's error, not itself
    hl = terms(marked)
    for rank, (hit, run_facts) in enumerate(kept, 1):
        task = hit.text if hit.level == "task" else (run_facts.task or _task_text(ts, tenant, hit))
        context: list[StepLine] = []
        snippet = None
        match = None
        if hit.step_index >= 0 and hit.level in ("step", "failure", "passage"):
            steps = ts.expand(hit, before=1, after=1, tenant=tenant)
            best = best_step(steps, hit, marked, hl)  # a passage: its step, whose row holds it clipped
            # no step holds a word of the query: the window is marked whole, no step claimed
            first, last = (best, best) if best is not None else (hit.step_index, hit.step_end)
            for step in steps:
                if not first - 1 <= step.position <= last + 1:
                    continue  # the matching step(s) and one neighbour on each side
                matched = first <= step.position <= last
                step_text = hit.text if matched and hit.level == "passage" else step.text
                # the matching step around its match (an error sits at the tail of a long output)
                shown = excerpt(step_text, hl, 1500) if matched else _clip(step_text, 320)
                context.append(StepLine(step.position, step.index, step.action, highlight(shown, hl), matched))
            match = (first, last)
        if not context:  # a task or summary row (or a step the index no longer has): around its match too
            snippet = highlight(excerpt(hit.text, hl, 1200), hl)
        out.results.append(ResultView(rank, hit, task, run_facts.model, context, snippet,
                                      run_link(hit.trajectory_id, q=marked, match=match),
                                      run_facts.outcome or hit.outcome))
    out.ms = (time.perf_counter() - started) * 1000
    return out


def _no_run_note(ts: TrajSearch, principal: Principal, text: str) -> Markup | None:
    """What the page says when the one word searched is no run's id this key sees, but reads as one of theirs
    (:meth:`~trajsearch.search.TrajSearch.id_family_held`) or is spelt near one: an id mistyped was answered with
    the runs sharing its words, with nothing to say that it was no run (the CLI's ``similar --id`` and ``show`` say
    so). The nearest ids the key sees are linked. An error name or a path is not told it is no run's id."""
    if not id_shaped(text):  # a word (``python3.11``) or a short id: not looked up, each search would pay for it
        return None
    pinned = Filters(tenant=principal.tenant, env_versions=principal.env_versions,
                     policy_versions=principal.policy_versions)
    nearest = ts.nearest_run_ids(text, pinned)
    if not nearest and not ts.id_family_held(text, pinned):  # an error name or a path, not an id (probe 50, D2)
        return None
    note = Markup("No run of yours has the id {}; searched it as text.").format(text)
    if nearest:
        links = Markup(" or ").join(Markup('<a href="{}">{}</a>').format(run_link(i), i) for i in nearest)
        note += Markup(" Did you mean {}?").format(links)
    return note


#: Most runs a model or end-date filter is applied to inside the search: index rows carry no model id (each
#: run's trace is read) and the store filters have no end date (the runs are named by id). Past it, the
#: filters are applied to the best runs found, and the page says so.
MODEL_SCOPE_RUNS = 5_000


def runs_in_scope(ts: TrajSearch, facts: TraceFacts, filters: Filters, form: SearchForm
                  ) -> tuple[tuple[str, ...] | None, str]:
    """The runs inside ``filters`` and the form's model and end-date filters, to search among; None when
    more than :data:`MODEL_SCOPE_RUNS` are inside ``filters``. And why a trace was not read ("" if all were).

    Searching among them, not filtering the best runs found, keeps a model whose runs rank below the
    others' (probe J: the 16 runs of ``@google/gemini-3-pro-preview`` among 500)."""
    rows = []
    for row in ts.rows(replace(filters, levels=("task",)), ["trajectory_id", "trace_uri", "created_at"]):
        rows.append(row)
        if len(rows) > MODEL_SCOPE_RUNS:
            return None, ""
    if form.until_day:
        before = _epoch(form.until_day, end=True)
        rows = [row for row in rows if int(row.get("created_at") or 0) < before]
    if not form.model:
        return tuple(row["trajectory_id"] for row in rows), ""
    run_facts = facts.many(filters.tenant, [row["trace_uri"] for row in rows])
    ids = tuple(row["trajectory_id"] for row, run in zip(rows, run_facts) if run.model == form.model)
    return ids, next((run.unread for run in run_facts if run.unread not in ("", "skipped")), "")


#: What each mode's score is, said beside the results: the number shown is the one they are ranked by, and in
#: hybrid mode a run holding a pasted line verbatim, or nearly, may rank first with a low cosine (probe E, E4), its
#: score lifted above every fused one (review RGEN2).
SCORE_MEANINGS = {
    "dense": "cosine similarity to the query",
    "hybrid": ("dense and word ranks fused, rows holding the query verbatim first, then rows holding nearly all of it "
               "in order, the closest first (these scores are lifted above the fused range), then those holding the "
               "error a pasted traceback ends in; cosine: the dense similarity alone"),
    "lexical": "BM25 word match, rows holding the query verbatim first, then those holding a pasted traceback's error",
}
#: Hybrid mode over passages only: they have no vector, so the word ranks alone are fused.
HYBRID_WORDS_ONLY = "word ranks alone (passages have no vector), rows holding the query verbatim first"


def _task_text(ts: TrajSearch, tenant: str, hit: Hit) -> str:
    if hit.level == "task":
        return hit.text
    row = ts.run(hit.trajectory_id, tenant=tenant)
    return row.text if row is not None else ""


# -- a run -------------------------------------------------------------------------------------
