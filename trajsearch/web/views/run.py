"""The run page: a whole trace as a timeline, the matched step marked, the failure summary on top."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from markupsafe import Markup

from ...model import Outcome, Step, Trajectory
from ...represent import decisive_error, failure_cause, indexed_text, render_arguments
from ...results import Hit, RunMatch
from ...search import TrajSearch
from ...service.auth import Principal, narrow
from ...store.traces import TraceCorruptError, TraceNotFoundError, TraceStore, TraceStoreError
from .common import (
    MAX_FIELD_CHARS, MAX_QUERY_CHARS, PAGE_CHARS, SMALL_FIELD_CHARS, NotFound, TraceDamaged, TraceMissing, TraceUnavailable,
    run_link, visible_run,
)
from .common import _clip, when
from .search import TraceFacts
from ..highlight import highlight, terms


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
    #: the similar runs' outcomes as a reader is told them (``model.outcome_shown``, from their traces), by run:
    #: the row's "success" of a run no one evaluated read as a fix beside a header saying "submitted, not evaluated"
    similar_outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def when(self) -> str:
        return when(self.trajectory.created_at.timestamp())

    @property
    def verdict(self) -> str | None:
        """Where the outcome came from (an outcome file, a score, a submission nobody evaluated), when recorded."""
        basis = self.trajectory.metadata.get("outcome_basis")
        return str(basis) if basis else None


def load_trace(ts: TrajSearch, principal: Principal, run: Hit, reads: TraceStore | None = None) -> Trajectory:
    """The run's trace, read with ``reads`` (the pages' own permits, :func:`.search.page_reads`) when given: a page
    read with the façade's takes the agents' ``GetTrace`` permits of a served store (one per tenant by default), so
    that a few run pages opened at once answered 503 and the agents' reads "trace reads busy"."""
    try:
        trajectory = (reads or ts.traces).get(run.trace_uri, tenant=principal.tenant)
    except TraceNotFoundError:
        raise TraceMissing(run.trajectory_id) from None
    except TraceCorruptError as exc:  # only ever read inside this tenant's own part of the store
        raise TraceDamaged(str(exc), run.trajectory_id) from None
    except TraceStoreError as exc:
        if isinstance(exc, ValueError):  # not a URI of this tenant
            raise NotFound(run.trajectory_id) from None
        raise TraceUnavailable(str(exc)) from None
    if not principal.sees(trajectory.env_version, trajectory.policy_version):
        raise NotFound(run.trajectory_id)
    return trajectory


def trace_held(ts: TrajSearch, principal: Principal, run: Hit, reads: TraceStore | None = None) -> None:
    """What :func:`load_trace` would raise for the run's trace, found by asking the store whether it holds it (a
    stat of a file, an S3 HEAD), not by reading it: a HEAD of a run or compare page, whose link a checker should
    see dead when the GET says "the trace is missing" (404). A trace held but damaged is seen only by reading it.
    Asked with ``reads`` as :func:`load_trace` reads (the pages' permits and wait)."""
    try:
        held = (reads or ts.traces).exists(run.trace_uri, tenant=principal.tenant)
    except TraceStoreError as exc:
        if isinstance(exc, ValueError):  # not a URI of this tenant
            raise NotFound(run.trajectory_id) from None
        raise TraceUnavailable(str(exc)) from None
    if not held:
        raise TraceMissing(run.trajectory_id)


def run_for_trace_uri(ts: TrajSearch, principal: Principal, uri: str, reads: TraceStore | None = None) -> str:
    """The id of the run at ``uri`` if it is one of this key's (else :class:`NotFound`); read as :func:`load_trace`."""
    if not isinstance(uri, str) or not uri or len(uri) > 1024:
        raise NotFound(uri)
    try:
        trajectory = (reads or ts.traces).get(uri, tenant=principal.tenant)
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
    failure = trajectory.failure  # an outcomes file that judged the run is its verdict (the header), not a cause
    return FailureView(error, failure_cause(trajectory), failure.fix if failure else None, position,
                       trajectory.what_failed)


def parse_match(value: str | None) -> tuple[int, int] | None:
    m = re.fullmatch(r"(\d{1,6})(?:-(\d{1,6}))?", value or "")
    if not m:
        return None
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else first
    return (first, last) if last >= first else None


def run_view(ts: TrajSearch, principal: Principal, trajectory_id: str, *, q: str = "", match: str | None = None,
             facts: TraceFacts | None = None, similar: bool = True, reads: TraceStore | None = None) -> RunView:
    run = visible_run(ts, principal, trajectory_id)
    trajectory = load_trace(ts, principal, run, reads or (facts.reads if facts is not None else None))
    if facts is not None:
        facts.remember(principal.tenant, run.trace_uri, trajectory)
    trajectory = indexed_text(trajectory)  # an image's placeholder, not its base64, on the page (the trace keeps it)
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
        if facts is not None:
            read = facts.many(principal.tenant, [m.trace_uri for m, _ in view.similar])
            view.similar_outcomes = {m.trajectory_id: f.outcome for (m, _), f in zip(view.similar, read) if f.outcome}
    return view


#: What orders the similar runs beside a run (and the compare page's menu), said above them: the fused score that
#: ``similar --id`` prints, not the cosine, which the list showed alone and unnamed (out of order on 37 of 40 run
#: pages of the real runs: probe ENG).
SIMILAR_RANKING = ("Ranked by score, as trajsearch similar --id ranks them: dense and word ranks fused. Cosine: the "
                   "dense similarity of the best matching row alone.")


def similar_runs(ts: TrajSearch, principal: Principal, trajectory_id: str, *, outcome: str | None = None,
                 k: int = 5) -> tuple[list[tuple[RunMatch, str]], str]:
    env = narrow((), principal.env_versions)
    if env is None:
        return [], ""
    try:  # the key's pinned policy versions bound the search, so that k runs it may see come back
        matches = ts.similar_runs(trajectory_id, tenant=principal.tenant, k=k, env_version=env,
                                  policy_version=principal.policy_versions, outcome=(outcome,) if outcome else ())
    except LookupError:
        return [], ""
    shown = [m for m in matches if principal.sees(m.best.env_version or None, m.best.policy_version or None)]
    return [(m, run_link(m.trajectory_id, match=(m.best.step_index, m.best.step_end))) for m in shown], ""


# -- compare -----------------------------------------------------------------------------------
