"""What the pages show, computed from the library façade inside one key's tenant and pins.

Nothing here knows about HTTP: the app parses a request into a :class:`SearchForm`
or an id, calls these functions with the signed-in :class:`Principal`, and renders
the result. Every read goes through the façade with ``tenant=principal.tenant``; a
run outside the key's tenant or pins is indistinguishable from a missing one
(:class:`NotFound`, one text for every case).
"""

from __future__ import annotations

import difflib
import json
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any, Iterable, Mapping

from cachetools import TTLCache
from markupsafe import Markup

from ..fusion import resolve_mode
from ..model import ID_PATTERN, Outcome, Step, Trajectory, valid_id
from ..represent import decisive_error, render_arguments
from ..results import Hit, RunMatch
from ..search import TrajSearch
from ..service.auth import Principal
from ..store.filters import Filters, quote
from ..store.traces import TraceCorruptError, TraceNotFoundError, TraceStoreError
from ..vocab import LEVELS, MODES, OUTCOMES
from .highlight import highlight, terms

NOT_FOUND_TEXT = "No such run: it does not exist, or this key cannot see it."
_ID_RE = re.compile(ID_PATTERN)
MAX_QUERY_CHARS = 20_000
MAX_FIELD_CHARS = 100_000  # of one step field shown on a page; the JSON download has everything
PAGE_CHARS = 2_000_000  # of all the step fields of a run page: past it, the fields not matched get less
SMALL_FIELD_CHARS = 2_000
K_CHOICES = (10, 20, 50)
LEVEL_CHOICES = (("", "Steps and failures"), ("any", "Any level"), *((lv, lv.capitalize()) for lv in LEVELS))
DEFAULT_LEVELS = ("step", "failure")


class NotFound(LookupError):
    """A run (or trace) this key cannot see: missing, another tenant's, outside its pins, malformed."""


class TraceUnavailable(RuntimeError):
    """The trace store failed or did not answer in time."""


class TraceDamaged(RuntimeError):
    """This key's run has a trace, but its stored bytes are not a valid trace of it."""


def narrow(requested: tuple[str, ...], pinned: tuple[str, ...]) -> tuple[str, ...] | None:
    """Requested values ANDed with a key's pinned ones; None when nothing can match."""
    if not pinned:
        return requested
    if not requested:
        return pinned
    both = tuple(x for x in requested if x in pinned)
    return both or None


# -- the search form ---------------------------------------------------------------------------


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
    since: str = ""
    until: str = ""
    k: int = 10
    errors: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> SearchForm:
        form = cls()
        get = lambda name: (params.get(name) or "").strip()  # noqa: E731
        form.q = (params.get("q") or "").strip()
        if len(form.q) > MAX_QUERY_CHARS:
            form.errors["q"] = f"at most {MAX_QUERY_CHARS} characters (got {len(form.q)})"
            form.q = form.q[:MAX_QUERY_CHARS]
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in form.q):
            form.errors["q"] = "not valid text"
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
        for name in ("since", "until"):
            value = get(name)
            setattr(form, name, value)
            if value:
                try:
                    date.fromisoformat(value)
                except ValueError:
                    form.errors[name] = "a date, YYYY-MM-DD"
                    setattr(form, name, "")
        if form.since and form.until and form.since > form.until:
            form.errors["until"] = "on or after the start date"
            form.until = ""
        k = get("k")
        form.k = int(k) if k.isdigit() and int(k) in K_CHOICES else 10
        return form

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


def _epoch(day: str, *, end: bool = False) -> int:
    start = datetime.combine(date.fromisoformat(day), datetime.min.time(), tzinfo=timezone.utc)
    return int((start + timedelta(days=1 if end else 0)).timestamp())


def when(epoch: int | float | None) -> str:
    if not epoch:
        return ""
    return datetime.fromtimestamp(int(epoch), tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# -- run facts that only the trace holds ---------------------------------------------------------


@dataclass(frozen=True)
class RunFacts:
    """What a result shows that its row does not carry (the model; the task, which a step row lacks), per trace."""

    model: str | None
    task: str | None = None
    readable: bool = True


class TraceFacts:
    """Per-tenant cache of :class:`RunFacts` read from traces (the index has no ``model_id`` field).

    Reads go through the façade (the service bounds them); once a read fails in a
    request, the rest of that request does without (a slow store costs one read).
    """

    def __init__(self, ts: TrajSearch, *, size: int = 50_000, ttl: float = 300.0) -> None:
        self.ts = ts
        self._cache: TTLCache = TTLCache(maxsize=size, ttl=ttl)
        self._lock = threading.Lock()
        self._models: dict[str, set[str]] = {}

    def get(self, tenant: str, trace_uri: str, *, read: bool = True) -> RunFacts:
        key = (tenant, trace_uri)
        with self._lock:
            cached = self._cache.get(key)
        if cached is not None or not read:
            return cached or RunFacts(None, None, readable=False)
        try:
            trajectory = self.ts.get_trace(trace_uri, tenant=tenant)
        except (TraceStoreError, ValueError, KeyError):
            return RunFacts(None, None, readable=False)
        return self.remember(tenant, trace_uri, trajectory)

    def remember(self, tenant: str, trace_uri: str, trajectory: Trajectory) -> RunFacts:
        facts = RunFacts(trajectory.model_id, trajectory.task[:400])  # shown clipped to 260
        with self._lock:
            self._cache[(tenant, trace_uri)] = facts
            if facts.model:
                self._models.setdefault(tenant, set()).add(facts.model)
        return facts

    def models(self, tenant: str) -> list[str]:
        """Models seen so far in this tenant's traces (suggestions for the model filter)."""
        with self._lock:
            return sorted(self._models.get(tenant, ()))


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
            if row.get("env_version"):
                envs.add(row["env_version"])
            tools.update(row.get("tools") or ())
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

    @property
    def matched_step(self) -> StepLine | None:
        return next((line for line in self.context if line.matched), None)

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


def looks_like_id(text: str) -> bool:
    return bool(text) and len(text.split()) == 1 and _ID_RE.match(text) is not None


def looks_like_trace_uri(text: str) -> bool:
    return len(text.split()) == 1 and text.startswith(("file://", "s3://")) and text.endswith(".json.gz")


def visible_run(ts: TrajSearch, principal: Principal, trajectory_id: str, level: str = "task") -> Hit:
    """The run's row (task by default) if this key can see it, else :class:`NotFound`."""
    try:
        valid_id(trajectory_id)
    except ValueError:
        raise NotFound(trajectory_id) from None
    hit = ts.run(trajectory_id, tenant=principal.tenant, level=level)
    if hit is None or not principal.sees(hit.env_version or None, hit.policy_version or None):
        raise NotFound(trajectory_id)
    return hit


def run_link(trajectory_id: str, *, q: str = "", match: tuple[int, int] | None = None) -> str:
    from urllib.parse import quote as urlquote, urlencode

    path = "/runs/" + urlquote(trajectory_id, safe="")
    params = {}
    if q:
        params["q"] = q[:500]
    if match is not None and match[0] >= 0:
        params["match"] = f"{match[0]}-{match[1]}"
    link = path + (("?" + urlencode(params)) if params else "")
    if match is not None and match[0] >= 0:
        link += f"#step-{match[0]}"
    return link


def search(ts: TrajSearch, principal: Principal, form: SearchForm, facts: TraceFacts) -> SearchOutcome:
    """The search page: a pasted id means "runs like this one"; anything else is searched as text."""
    started = time.perf_counter()
    out = SearchOutcome(form=form)
    if not form.q or form.errors:
        return out
    out.searched = True
    tenant = principal.tenant
    text = form.q
    exclude: tuple[str, ...] = ()
    anchor_id = None
    if looks_like_trace_uri(text):
        try:
            anchor_id = ts.get_trace(text, tenant=tenant).trajectory_id
        except (TraceStoreError, ValueError, KeyError):
            out.notes.append("No run of yours has that trace URI; searched it as text.")
    elif looks_like_id(text):
        anchor_id = text
    if anchor_id is not None:
        try:
            out.anchor = visible_run(ts, principal, anchor_id)
        except NotFound:
            out.anchor = None
        if out.anchor is not None:  # runs like this one: its failure, else its task
            try:
                text = visible_run(ts, principal, anchor_id, level="failure").text
            except NotFound:
                text = out.anchor.text
            exclude = (anchor_id,)
    env = narrow((form.env,) if form.env else (), principal.env_versions)
    policy = narrow((), principal.policy_versions)
    out.mode_used = resolve_mode(form.mode, text)
    if env is None or policy is None:  # the key's pins exclude the asked env version
        out.ms = (time.perf_counter() - started) * 1000
        return out
    filters = Filters(
        tenant=tenant, levels=form.levels, outcomes=(form.outcome,) if form.outcome else (),
        env_versions=env, policy_versions=policy, tools=form.tool_list, exclude_trajectory_ids=exclude,
        created_after=_epoch(form.since) if form.since else None,
    )
    post_filtered = bool(form.model or form.until)
    k = min(200, form.k * 5) if post_filtered else form.k
    hits = ts.search_filtered(text, filters, k=k, group_by_trajectory=True, group_size=1, mode=form.mode)
    if form.until:
        before = _epoch(form.until, end=True)
        hits = [h for h in hits if h.created_at < before]
    read_ok = True
    kept: list[tuple[Hit, RunFacts]] = []
    for hit in hits:
        if len(kept) >= form.k:
            break
        run_facts = facts.get(tenant, hit.trace_uri, read=read_ok)
        read_ok = read_ok and run_facts.readable
        if form.model and run_facts.model != form.model:
            continue
        kept.append((hit, run_facts))
    if not read_ok:
        out.notes.append("The trace store did not answer: models are not shown"
                         + (" and the model filter may miss runs." if form.model else "."))
    if post_filtered and len(hits) >= k and len(kept) < form.k:
        out.notes.append(f"The model and end-date filters are applied to the best {k} runs only.")
    marked = form.q if out.anchor is None else _error_line(text)  # an id marks its run's error, not itself
    hl = terms(marked)
    for rank, (hit, run_facts) in enumerate(kept, 1):
        task = hit.text if hit.level == "task" else (run_facts.task or _task_text(ts, tenant, hit))
        context: list[StepLine] = []
        snippet = None
        match = None
        if hit.step_index >= 0 and hit.level in ("step", "failure"):
            steps = ts.expand(hit, before=1, after=1, tenant=tenant)
            best = best_step(steps, hit, marked, hl)
            for step in steps:
                if abs(step.position - best) > 1:
                    continue  # the matching step and one neighbour on each side
                matched = step.position == best
                shown = _clip(step.text, 1500 if matched else 320)
                context.append(StepLine(step.position, step.index, step.action, highlight(shown, hl), matched))
            match = (best, best)
        if not context:
            snippet = highlight(_clip(hit.text, 1200), hl)
        out.results.append(ResultView(rank, hit, task, run_facts.model, context, snippet,
                                      run_link(hit.trajectory_id, q=marked, match=match)))
    out.ms = (time.perf_counter() - started) * 1000
    return out


def best_step(steps: list[Any], hit: Hit, query: str, hl: tuple[str, ...]) -> int:
    """Which step of a matched window holds the match: the one with the pasted text verbatim, else the
    one with the most distinct query terms, else the window's first step."""
    needle = " ".join(query.split()).lower()
    best, best_score = hit.step_index, -1
    for step in steps:
        if not hit.step_index <= step.position <= hit.step_end:
            continue
        flat = " ".join(step.text.split()).lower()
        score = (1000 if len(needle) >= 8 and needle in flat else 0) + sum(1 for t in hl if t in flat)
        if score > best_score:
            best, best_score = step.position, score
    return best


def _error_line(failure_text: str) -> str:
    """The ``Error:`` line of a failure row's text (what to mark for "runs like this one")."""
    for line in failure_text.splitlines():
        if line.startswith("Error: "):
            return line[len("Error: "):].strip()
    return ""


def _task_text(ts: TrajSearch, tenant: str, hit: Hit) -> str:
    if hit.level == "task":
        return hit.text
    row = ts.run(hit.trajectory_id, tenant=tenant)
    return row.text if row is not None else ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- a run -------------------------------------------------------------------------------------


@dataclass
class FieldView:
    text: Markup
    cut: int  # characters not shown


@dataclass
class StepRow:
    position: int
    step: Step
    matched: bool
    failing: bool
    summary: str
    thought: FieldView | None
    arguments: FieldView | None
    observation: FieldView | None
    error: FieldView | None


@dataclass
class FailureView:
    error: str
    cause: str | None
    fix: str | None
    position: int  # the failing step (-1: unknown)
    what_failed: str | None = None


@dataclass
class RunView:
    run: Hit
    trajectory: Trajectory
    failure: FailureView | None
    steps: list[StepRow]
    match: tuple[int, int] | None
    similar: list[tuple[RunMatch, str]] = field(default_factory=list)  # (match, link)
    similar_error: str = ""
    q: str = ""

    @property
    def when(self) -> str:
        return when(self.trajectory.created_at.timestamp())


def load_trace(ts: TrajSearch, principal: Principal, run: Hit) -> Trajectory:
    try:
        trajectory = ts.get_trace(run.trace_uri, tenant=principal.tenant)
    except TraceNotFoundError:
        raise NotFound(run.trajectory_id) from None
    except TraceCorruptError as exc:  # only ever read inside this tenant's own part of the store
        raise TraceDamaged(str(exc)) from None
    except TraceStoreError as exc:
        if isinstance(exc, ValueError):  # not a URI of this tenant
            raise NotFound(run.trajectory_id) from None
        raise TraceUnavailable(str(exc)) from None
    if not principal.sees(trajectory.env_version, trajectory.policy_version):
        raise NotFound(run.trajectory_id)
    return trajectory


def run_for_trace_uri(ts: TrajSearch, principal: Principal, uri: str) -> str:
    """The id of the run at ``uri`` if it is one of this key's (else :class:`NotFound`)."""
    if not isinstance(uri, str) or not uri or len(uri) > 1024:
        raise NotFound(uri)
    try:
        trajectory = ts.get_trace(uri, tenant=principal.tenant)
    except TraceStoreError as exc:
        if isinstance(exc, (ValueError, KeyError)):
            raise NotFound(uri) from None
        raise TraceUnavailable(str(exc)) from None
    except ValueError:
        raise NotFound(uri) from None
    if not principal.sees(trajectory.env_version, trajectory.policy_version):
        raise NotFound(uri)
    return trajectory.trajectory_id


def _field(text: str | None, hl: tuple[str, ...], limit: int = MAX_FIELD_CHARS) -> FieldView | None:
    if not text:
        return None
    shown = text[:limit]
    return FieldView(highlight(shown, hl), len(text) - len(shown))


def pretty_arguments(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    if isinstance(arguments, dict) and len(arguments) == 1:
        (value,) = arguments.values()
        if isinstance(value, str):
            return value  # {"command": "ls -la"} reads best as the bare command
    return json.dumps(arguments, ensure_ascii=False, indent=2, sort_keys=True)


def step_summary(step: Step, limit: int = 110) -> str:
    """One line for a step's ``<summary>``: its tool and arguments, else its first line of output."""
    if step.action:
        line = f"{step.action} {render_arguments(step.arguments)}".strip()
    else:
        line = (step.observation or step.thought or step.error or "").strip()
    line = " ".join(line.split())
    return _clip(line, limit) or "(empty step)"


def failure_of(trajectory: Trajectory) -> FailureView | None:
    if trajectory.outcome in (Outcome.success, Outcome.unknown) and trajectory.failure is None:
        return None
    error, position = decisive_error(trajectory)
    failure = trajectory.failure
    return FailureView(error, failure.cause if failure else None, failure.fix if failure else None, position,
                       trajectory.what_failed)


def parse_match(value: str | None) -> tuple[int, int] | None:
    m = re.fullmatch(r"(\d{1,6})(?:-(\d{1,6}))?", value or "")
    if not m:
        return None
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else first
    return (first, last) if last >= first else None


def run_view(ts: TrajSearch, principal: Principal, trajectory_id: str, *, q: str = "", match: str | None = None,
             facts: TraceFacts | None = None, similar: bool = True) -> RunView:
    run = visible_run(ts, principal, trajectory_id)
    trajectory = load_trace(ts, principal, run)
    if facts is not None:
        facts.remember(principal.tenant, run.trace_uri, trajectory)
    q = q[:MAX_QUERY_CHARS] if q and not any(0xD800 <= ord(c) <= 0xDFFF for c in q) else ""
    hl = terms(q)
    failure = failure_of(trajectory)
    span = parse_match(match)
    rows = []
    total = sum(len(s.thought or "") + len(s.observation or "") + len(s.error or "") for s in trajectory.steps)
    # a huge trace (up to 5,000 steps of 1 MB fields) still makes a page a browser can open
    limit = MAX_FIELD_CHARS if total <= PAGE_CHARS else SMALL_FIELD_CHARS
    for position, step in enumerate(trajectory.steps):
        matched = span is not None and span[0] <= position <= span[1]
        failing = failure is not None and failure.position == position
        cap = MAX_FIELD_CHARS if matched or failing else limit
        rows.append(StepRow(
            position, step, matched, failing, step_summary(step),
            _field(step.thought, hl, cap), _field(pretty_arguments(step.arguments), hl, cap),
            _field(step.observation, hl, cap), _field(step.error, hl, cap),
        ))
    view = RunView(run, trajectory, failure, rows, span, q=q)
    if similar:
        view.similar, view.similar_error = similar_runs(ts, principal, trajectory_id)
    return view


def similar_runs(ts: TrajSearch, principal: Principal, trajectory_id: str, *, outcome: str | None = None,
                 k: int = 5) -> tuple[list[tuple[RunMatch, str]], str]:
    env = narrow((), principal.env_versions)
    if env is None:
        return [], ""
    try:
        matches = ts.similar_runs(trajectory_id, tenant=principal.tenant, k=k, env_version=env,
                                  outcome=(outcome,) if outcome else ())
    except LookupError:
        return [], ""
    shown = [m for m in matches if principal.sees(m.best.env_version or None, m.best.policy_version or None)]
    return [(m, run_link(m.trajectory_id, match=(m.best.step_index, m.best.step_end))) for m in shown], ""


# -- compare -----------------------------------------------------------------------------------


@dataclass
class Side:
    position: int
    step: Step
    summary: str
    arguments: str
    observation: str
    error: str


@dataclass
class CompareRow:
    tag: str  # equal | replace | delete (only the broken run) | insert (only the other run)
    left: Side | None
    right: Side | None
    args_differ: bool = False
    first_divergence: bool = False


@dataclass
class CompareView:
    left: RunView
    right: RunView | None
    rows: list[CompareRow]
    divergence: CompareRow | None
    divergence_kind: str  # "actions" | "arguments" | ""
    candidates: list[tuple[RunMatch, str]]


def _side_of(position: int, step: Step, limit: int = 4000) -> Side:
    return Side(position, step, step_summary(step, 90), _clip(pretty_arguments(step.arguments), limit),
                _clip(step.observation or "", limit), _clip(step.error or "", limit))


def action_key(step: Step) -> str:
    return step.action or "(no tool)"


def align(left: list[Step], right: list[Step]) -> list[CompareRow]:
    """Both runs' steps side by side, aligned on their sequence of actions (difflib)."""
    a = [action_key(s) for s in left]
    b = [action_key(s) for s in right]
    limit = 4000 if len(a) + len(b) <= 400 else 600  # long runs: shorter cells (the run pages have it all)

    def _side(position: int, step: Step) -> Side:
        return _side_of(position, step, limit)

    rows: list[CompareRow] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2)):
                differ = _canon(left[i].arguments) != _canon(right[j].arguments)
                rows.append(CompareRow("equal", _side(i, left[i]), _side(j, right[j]), args_differ=differ))
        elif tag == "replace":
            for n in range(max(i2 - i1, j2 - j1)):
                i, j = i1 + n, j1 + n
                rows.append(CompareRow(
                    "replace" if i < i2 and j < j2 else ("delete" if i < i2 else "insert"),
                    _side(i, left[i]) if i < i2 else None, _side(j, right[j]) if j < j2 else None,
                ))
        elif tag == "delete":
            rows.extend(CompareRow("delete", _side(i, left[i]), None) for i in range(i1, i2))
        else:
            rows.extend(CompareRow("insert", None, _side(j, right[j])) for j in range(j1, j2))
    return rows


def _canon(arguments: Any) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)


def first_divergence(rows: Iterable[CompareRow]) -> tuple[CompareRow | None, str]:
    """The first row where the actions differ; failing that, the first where the arguments do."""
    rows = list(rows)
    for row in rows:
        if row.tag != "equal":
            row.first_divergence = True
            return row, "actions"
    for row in rows:
        if row.args_differ:
            row.first_divergence = True
            return row, "arguments"
    return None, ""


def compare_view(ts: TrajSearch, principal: Principal, trajectory_id: str, other_id: str | None) -> CompareView:
    left = run_view(ts, principal, trajectory_id, similar=False)
    candidates, _ = similar_runs(ts, principal, trajectory_id, outcome="success", k=10)
    # a success of the very same task first: the closest thing to "what should have happened"
    task_id = left.trajectory.task_id
    candidates.sort(key=lambda c: not (task_id and c[0].best.task_id == task_id))
    candidates = candidates[:6]
    if not other_id and candidates:
        other_id = candidates[0][0].trajectory_id
    right = run_view(ts, principal, other_id, similar=False) if other_id else None
    rows = align(left.trajectory.steps, right.trajectory.steps) if right else []
    divergence, kind = first_divergence(rows)
    return CompareView(left, right, rows, divergence, kind, candidates)
