"""The read commands: ``search``, ``similar``, ``show``, ``stats`` and ``exemplars``.

Each asks the backend one question and renders the answer: readable by default, JSON with ``--json``.
"""

from __future__ import annotations

import json
import re
from typing import Callable, Iterable, List, Mapping, Optional, Sequence

import typer
from rich.markup import escape
from rich.table import Table

from .connect import connect
from .options import (
    AsJson, Ca, ContextEnvVersions, ContextPolicyVersions, ContextTools, EnvVersions, Levels, Mode, Outcomes, Server,
    TaskFamilies, Tenant, Tools, Traces, Uri, run_ids, searched,
)
from ..bounds import MAX_GROUP_SIZE, MAX_K, SERVER_K_NOTE, out_of_bounds
from ..excerpt import best_step, failure_error, terms
from ..model import valid_id
from .output import err, fail, fail_naming, matched_line, one_line, out, print_json, where
from ..results import Hit
from ..weak_match import WEAK_SIMILARITY, weak_match_note


#: ``--since`` of ``search`` and ``similar``: the web page's "From" day, or a period as ``failures --since`` takes it.
SINCE_HELP = ("Only runs started then or later: a date or time (2026-05-01 or 20260501, UTC) or a period back from now "
              "with its unit (7d, 24h). A run whose dump gives no start time counts as started when it was ingested.")


def search(
    text: str = typer.Argument(..., help="Query: a task, free text, or a pasted error line.", callback=searched),
    tenant: Tenant = None,
    level: Levels = [],
    outcome: Outcomes = [],
    env_version: EnvVersions = [],
    task_family: TaskFamilies = [],
    tool: Tools = [],
    since: Optional[int] = typer.Option(None, "--since", parser=lambda value: _since(value), metavar="WHEN",
                                        help=SINCE_HELP),
    k: int = typer.Option(5, "-k", help="How many runs (or rows without grouping)."),
    group_size: int = typer.Option(1, "--group-size", help="Hits per run."),
    no_group: bool = typer.Option(False, "--no-group", help="Do not group hits by run."),
    expand: int = typer.Option(0, "--expand", "-e", min=0, max=25,
                               help="Show N steps before and after each step hit (0 to 25)."),
    mode: Mode = "auto",
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Find the rows most similar to TEXT inside the filters.

    Each hit's score= is the number the hits are ranked by: higher is better. Its scale is the mode's: dense, the
    cosine of the query and the row (-1 to 1); lexical, BM25 (0 and up, unbounded); hybrid, a fusion of the two
    legs' ranks (about 0.01 to 0.07). --mode auto takes hybrid or dense per query, and lexical over passages
    (--level passage: they have no vector): compare scores within one answer, not across modes or queries.
    Where no hit holds TEXT and no row inside the filters is alike it (cosine under {WEAK_SIMILARITY}), a note on
    stderr says so: weak match.
    """
    _counts(server, ("-k", k, MAX_K), ("--group-size", group_size, MAX_GROUP_SIZE))
    text = _searchable(text)
    with connect(server, ca, uri, traces, tenant) as api:
        hits = api.search(text, levels=level, outcome=outcome, env_version=env_version, task_family=task_family,
                          tools=tool, created_after=since, k=k, group_size=group_size,
                          group_by_trajectory=not no_group, mode=mode)
        context = {h.id: api.expand(h, before=expand, after=expand) for h in hits if expand and h.step_index >= 0}
        shown = api.outcomes_shown(hits)
        _tenant_holds_runs(api, hits)
        _say_run_id(api, text, [h.trajectory_id for h in hits])
        _say_weak(hits)
        if not _said_since(hits, since, lambda: api.search(
                text, levels=level, outcome=outcome, env_version=env_version, task_family=task_family, tools=tool,
                k=1, mode=mode)):
            _say_filtered_out(hits, {"--outcome": outcome, "--env-version": env_version,
                                     "--task-family": task_family, "--tool": tool},
                              lambda: api.search(text, levels=level, k=1, mode=mode),
                              lambda **options: api.search(text, **options), levels=level)
    query_terms = terms(text)
    # the step of each expanded hit's window that holds the match, as the web page marks it (None: no step holds a
    # word of the query, the window matched as a whole)
    best = {h.id: best_step(steps, h, text, query_terms) for h in hits if (steps := context.get(h.id))}
    if as_json:
        print_json([dict(h.to_dict(), outcome_shown=shown[h.trajectory_id],
                         context=[vars(s) for s in context.get(h.id, [])],
                         **({"matched_step": best[h.id]} if h.id in best else {})) for h in hits])
        return
    if not hits:
        out.print("no matches")
    for rank, h in enumerate(hits, 1):
        out.print(f"[bold]{rank}. {escape(h.trajectory_id)}[/bold]  {where(h)}  score={h.score:.3f}  "
                  f"outcome={escape(shown[h.trajectory_id])}")
        for step in context.get(h.id) or []:
            if _marked(step.position, h, best[h.id]):  # the matching step: the part that matched
                # a passage hit matched a part of the step's output that the step's row holds clipped
                matched = h.text if h.level == "passage" else step.text
                out.print(f"   > {matched_line(matched, query_terms, 240)}", markup=False)
            else:
                out.print(f"     {one_line(step.text, 160)}", markup=False)
        if h.id not in context:
            out.print(f"   {matched_line(h.text, query_terms, 300)}", markup=False)


def similar(
    text: Optional[str] = typer.Argument(None, help="Error text or description of the broken run.",
                                         callback=searched),
    trajectory_id: Optional[str] = typer.Option(
        None, "--id", help="Find runs like this indexed run.", callback=run_ids),
    tenant: Tenant = None,
    outcome: Outcomes = [],
    since: Optional[int] = typer.Option(None, "--since", parser=lambda value: _since(value), metavar="WHEN",
                                        help=SINCE_HELP),
    k: int = typer.Option(5, "-k", help="How many runs."),
    mode: Mode = "hybrid",
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Runs like this broken one: one result per run, with its best matching step.

    A run's score= is its best row's, the number the runs are ranked by: higher is better, on the mode's scale (see
    `trajsearch search --help`; the default, hybrid, fuses ranks: about 0.01 to 0.07). Compare scores within one
    answer, not across modes or queries. Where no step inside the filters is alike what was searched (cosine under
    {WEAK_SIMILARITY}) and none holds it, a note on stderr says so.
    """
    if (text is None) == (trajectory_id is None):
        fail("give either text or --id")
    _counts(server, ("-k", k, MAX_K))
    text = None if text is None else _searchable(text)
    with connect(server, ca, uri, traces, tenant) as api:
        if trajectory_id is not None and api.run(trajectory_id) is None:
            fail(_no_run(api, trajectory_id), code=1)
        matches = api.similar_runs(trajectory_id, text, k=k, outcome=outcome, created_after=since, mode=mode)
        matched = text if trajectory_id is None else _anchor_error(api, trajectory_id)
        shown = api.outcomes_shown([m.best for m in matches])
        _tenant_holds_runs(api, matches)
        _say_weak(m.best for m in matches)
        if text is not None:
            _say_run_id(api, text, [m.trajectory_id for m in matches])
        if not _said_since(matches, since, lambda: api.similar_runs(trajectory_id, text, k=1, outcome=outcome,
                                                                     mode=mode)):
            _say_filtered_out(matches, {"--outcome": outcome},
                              lambda: api.similar_runs(trajectory_id, text, k=1, mode=mode),
                              lambda **options: api.search(text or trajectory_id, **options))
    if as_json:
        print_json([dict(m.to_dict(), outcome_shown=shown[m.trajectory_id]) for m in matches])
        return
    if not matches:
        out.print("no similar runs")
    query_terms = terms(matched)
    for rank, m in enumerate(matches, 1):
        out.print(f"[bold]{rank}. {escape(m.trajectory_id)}[/bold]  score={m.score:.3f}  "
                  f"outcome={escape(shown[m.trajectory_id])}")
        out.print(f"   task: {one_line(m.task, 200)}", markup=False)
        out.print(f"   best {where(m.best)}: {matched_line(m.best.text, query_terms, 240)}", markup=False)


for _command in (search, similar):  # the note's cut as --help says it, read from its one place (help built at import)
    _command.__doc__ = _command.__doc__.replace("{WEAK_SIMILARITY}", f"{WEAK_SIMILARITY}")


def _since(value: str) -> int:
    """``--since`` as epoch seconds (:func:`~trajsearch.failures.periods.parse_since`), or the reason it is refused, in
    one line as :func:`~trajsearch.cli.options.searched`."""
    from ..failures.periods import parse_since

    try:
        return parse_since(value)
    except ValueError as exc:
        fail_naming("--since", exc)


def _said_since(found: Sequence, since: int | None, without: Callable[[], Sequence]) -> bool:
    """Where ``--since`` was given, nothing was found and the same question without it (``without``, one hit asked)
    finds something, say on stderr from when runs were searched (a period no run started in is no value misspelt, so
    the filtered-out note, which names one, is not asked: as the web page). Where it finds nothing too, --since hid
    nothing and is not said: the filtered-out note may name the value that did."""
    if found or since is None or not without():
        return False
    from datetime import datetime, timezone

    when = datetime.fromtimestamp(since, timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    err.print(f"note: only runs started since {when} were searched (--since)", markup=False, soft_wrap=True)
    return True


def _counts(server: str | None, *counts: tuple[str, int, int]) -> None:
    """Refuse a count outside 1..top as a usage error naming the option as typed (``-k``, ``--group-size``), in the
    words of every count refused (:func:`~trajsearch.bounds.out_of_bounds`, as ``exemplars -k`` says it): left to the
    library, ``search -k 0`` said "k must be ..." and exited 1 as a failure, naming a parameter the CLI has not.
    With a ``server``, ``-k``'s words add that the server's own bound may be lower (:data:`SERVER_K_NOTE`, as the
    client says it): "from 1 to 200" alone, then ``-k 150`` refused by the server as "1 to 100", contradicted it."""
    for name, value, top in counts:
        if said := out_of_bounds(value, 1, top, SERVER_K_NOTE if server and name == "-k" else ""):
            fail(f"{name}: {said}")


def _searchable(text: str) -> str:
    """``text`` as the search takes it: a paste over the query limit (a whole CI log, an issue with its ``pip list``)
    keeps its head and tail, as the agent runtime's task does (``runtime.task_query``), and the cut is said on
    stderr; it was refused ("query text too long"), and over a server even for ``exemplars``, which the embedded
    store's runtime answered from the same head and tail."""
    from ..search import MAX_QUERY_CHARS

    if len(text) <= MAX_QUERY_CHARS:
        return text
    from ..runtime import task_query_cut  # noqa: PLC0415 - the agent runtime's one cut, loaded only for a long paste

    searched, cut_from = task_query_cut(text)  # a pasted screenshot: its placeholder is searched, nothing cut
    if cut_from:  # its length as read: the raw one counted a screenshot's base64 the search never reads
        err.print(f"note: the text is {cut_from:,} characters, over the {MAX_QUERY_CHARS:,} a search takes: "
                  "searched by its head and tail (an error is most often at its end)", markup=False, soft_wrap=True)
    return searched


def _say_run_id(api, text: str, found: Sequence[str]) -> None:
    """When the text searched is the id of one of the tenant's runs, say on stderr that it was searched as words, and
    which command takes it as a run: a pasted id (``search RUN_ID``, ``similar RUN_ID``) was answered with runs that
    share its name's words (another task's run of the same repository first), with nothing to say none was that
    run, or like it (the web page takes such an id as the run)."""
    run_id = text.strip()  # copied with its line's newline
    try:
        valid_id(run_id)
    except ValueError:
        return
    if api.run(run_id) is not None:
        err.print(f"note: {run_id!r} is the id of a run of this tenant, searched here as text: "
                  f"`trajsearch similar --id {run_id}` finds runs like it, `trajsearch show {run_id}` shows it",
                  markup=False, soft_wrap=True)
        return
    from ..search import id_shaped, said_meant

    if not id_shaped(run_id):  # a word (``python3.11``) or a short id: not looked up, each search would pay for it
        return
    nearest = api.nearest_run_ids(run_id)
    if nearest or api.id_family_held(run_id, found):  # an id mistyped, not an error name or a path (probe 50, D2)
        err.print(f"note: no run of this tenant has the id {run_id!r}, searched here as text{said_meant(nearest)}",
                  markup=False, soft_wrap=True)


def _no_run(api, trajectory_id: str) -> str:
    """The error of a command given the id of no run: which tenant was looked in, and the nearest ids; where that
    tenant holds no run at all, :func:`_no_runs_said`'s words (``show ID`` of a run ingested with ``-t demo``, typed
    without it, had said "no trajectory 'ID' in tenant 'default'" where ``search`` named tenant demo)."""
    from ..search import said_meant

    if said := _no_runs_said(api):
        return f"no trajectory {trajectory_id!r}: {said}"
    return (f"no trajectory {trajectory_id!r} in tenant {api.tenant_name()!r}"
            + said_meant(api.nearest_run_ids(trajectory_id)))


def _no_runs_said(api, stats: Mapping | None = None, most: int | None = 5) -> str | None:
    """What to say when the tenant searched holds no run at all, else None: embedded, a tenant misspelt or not
    ingested into yet, naming the tenants the store holds runs of (runs ingested with ``-t acme`` and searched
    without it were answered "tenant 'default' holds no runs" and no more), up to ``most`` (None: all, as ``stats``
    names them); over a server, the key's tenant (the only one it may read, and no other is named). ``stats``: the
    tenant's, when asked already."""
    stats = stats if stats is not None else api.stats()
    if stats.get("trajectories"):
        return None
    tenant = stats.get("tenant")
    if api.remote:  # a key reads its own tenant only: the server names no other
        return f"the key's tenant {tenant!r} holds no runs on this server"
    held = api.api.index.tenants()
    if held:  # the runs ingested with -t acme, searched without it (tenant 'default'): which tenant to name
        name = f"-t {held[0]}" if len(held) == 1 else "-t TENANT"
        return (f"tenant {tenant!r} holds no runs in this store, which holds runs of {_listed(held, tenant, most)}: "
                f"name it with {name} (or $TRAJSEARCH_TENANT)")
    return (f"tenant {tenant!r} holds no runs in this store (a misspelt tenant? 'trajsearch stats -t TENANT' counts "
            "a tenant's runs)")


def _listed(tenants: Sequence[str], empty: str, most: int | None) -> str:
    """The ``tenants`` a note names ("tenant 'acme'", "tenants 'acme', 'demo'"), up to ``most`` (None: all); the
    rest counted, with the command that names them all (``stats`` of the tenant ``empty``, which holds none): "and
    7 more" had been the end of it, with no way to read the seven."""
    named = ", ".join(repr(t) for t in tenants[:most])
    if most is not None and len(tenants) > most:
        named += f" and {len(tenants) - most} more ('trajsearch stats -t {empty}' names them all)"
    return f"tenant{'s' if len(tenants) > 1 else ''} {named}"


def _marked(position: int, hit: Hit, best: int | None) -> bool:
    """Whether ``search --expand`` marks the step at ``position`` as matched: the step of the hit's window holding
    the match, or each step of the window when none holds a word of the query
    (:func:`~trajsearch.excerpt.best_step`)."""
    return position == best if best is not None else hit.step_index <= position <= hit.step_end


def _say_weak(hits: Iterable[Hit]) -> None:
    """Say on stderr (with --json too, as every note) when no hit is alike what was searched: a paste sharing
    nothing with the runs was answered with k of them and no word (:mod:`~trajsearch.weak_match`)."""
    if note := weak_match_note(hits):
        err.print(f"note: {note}", markup=False, soft_wrap=True)


def _tenant_holds_runs(api, found: list) -> None:
    """Fail, when nothing was found, if the tenant holds no run at all: a tenant misspelt (or not ingested into
    yet) is told so, not answered "no matches" as if its runs had been searched."""
    if not found and (said := _no_runs_said(api)):
        fail(f"{said}: nothing to search", code=1)


def _say_filtered_out(found: Sequence, filters: Mapping[str, Sequence[str]], unfiltered: Callable[[], Sequence],
                      search: Callable[..., Sequence], noted: Mapping[str, str] | None = None,
                      levels: Sequence[str] = ()) -> None:
    """When nothing was found inside the ``filters`` given (flag -> values) but the same question without them
    (``unfiltered``) finds something, say why on stderr (:func:`~trajsearch.filtered_out.filtered_out_note`, the
    page's words too). ``search``: the tenant's search with the query given, its keyword options free (the backend's:
    over --server the service answers); ``noted``: words said after a flag's values (export's default outcome);
    ``levels``: those searched (all when empty)."""
    if found:
        return
    from ..filtered_out import FilterGiven, filtered_out_note

    given = [FilterGiven(f"{flag} {value}{(noted or {}).get(flag, '')}", {_KEYWORDS[flag]: (value,)},
                         recorded=_KEYWORDS[flag] if flag in _SET_AT_INGEST else "")
             for flag, values in filters.items() for value in values]
    note = filtered_out_note(search, given, found_without=unfiltered, levels=levels, code=lambda said: f"`{said}`")
    if note:
        err.print(f"note: {note}", markup=False, soft_wrap=True)


def _given(filters: Mapping[str, Sequence[str]]) -> list[str]:
    """The filters given (flag -> values) as the user typed them: ``--env-version v2``."""
    return [f"{flag} {value}" for flag, values in filters.items() for value in values]


#: How ``show`` marks a step whose call waits for a person's approval (``metadata.awaiting_approval_steps``).
AWAITING_APPROVAL = "awaiting approval: the run paused here for a person to approve or reject this call"
#: Filters on a value ingest records from ``--set`` where a dump has none.
_SET_AT_INGEST = ("--env-version", "--policy-version", "--task-family")
#: Each filter flag's keyword in ``search``.
_KEYWORDS = {"--outcome": "outcome", "--env-version": "env_version", "--policy-version": "policy_version",
             "--task-family": "task_family", "--tool": "tools"}


def _anchor_error(api, trajectory_id: str) -> str:
    """What runs like ``trajectory_id`` were matched on, to show in theirs: its failure's error, else its task."""
    failure = api.run(trajectory_id, level="failure")
    if failure is not None:
        return failure_error(failure.text)
    task = api.run(trajectory_id)
    return task.text if task is not None else ""


def show(
    trajectory_id: str = typer.Argument(..., help="The run to show.", callback=run_ids),
    tenant: Tenant = None,
    steps: Optional[str] = typer.Option(None, "--steps", help="Step positions to show, from 0: N, N:M or N-M (M included), N: or :M (default: all)."),
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Show a run (or a step range of it) from the trace store."""
    with connect(server, ca, uri, traces, tenant) as api:
        found = api.show(trajectory_id)
        if found is None:
            fail(_no_run(api, trajectory_id), code=1)
    run, trajectory = found
    first, last = _range(steps, len(trajectory.steps))
    chosen = trajectory.steps[first:last]
    if as_json:
        data = trajectory.model_dump(mode="json")
        data["steps"] = [s.model_dump(mode="json") for s in chosen]
        data["trace_uri"] = run.trace_uri
        print_json(data)
        return
    from ..model import outcome_shown
    from ..represent import failure_cause, indexed_text, step_text

    trajectory = indexed_text(trajectory)  # an image's placeholder, not its base64 (--json prints the trace as kept)
    chosen = trajectory.steps[first:last]

    out.print(f"[bold]{escape(trajectory.trajectory_id)}[/bold]  outcome={escape(outcome_shown(trajectory))}  "
              f"reward={trajectory.reward}  env={escape(str(trajectory.env_version))}")
    if basis := trajectory.metadata.get("outcome_basis"):  # who judged the run (an outcomes file): as the run page
        out.print(f"verdict: {basis}", markup=False)
    out.print(f"task: {_task_shown(trajectory.task, steps)}", markup=False)
    if later := trajectory.metadata.get("user_prompts"):  # a multi-prompt session's later requests
        out.print("later prompts: " + " | ".join(str(p) for p in later), markup=False)
    if trajectory.failure is not None:
        cause = f" (cause: {why})" if (why := failure_cause(trajectory)) else ""
        out.print(f"failure: {trajectory.failure.error}{cause}", markup=False)
    out.print(f"trace: {run.trace_uri}", markup=False)
    paused = set(trajectory.metadata.get("awaiting_approval_steps") or ())
    for step in chosen:
        out.print(step_text(step), markup=False)
        if step.index in paused:  # no result yet, not a lost one: the run waits for a person (a saved RunState)
            out.print(AWAITING_APPROVAL, markup=False)


#: How much of a run's task ``show --steps`` prints, on one line: the steps asked for are what it was run for, and a
#: SWE-bench issue (6,281 characters in the shared mini-swe-agent runs, 14 kB and more elsewhere) printed whole above
#: them pushed them off the screen.
SHOWN_TASK_CHARS = 300


def _task_shown(task: str, steps: str | None) -> str:
    """A run's task as ``show`` prints it: whole, but with ``--steps`` (``steps``) cut to :data:`SHOWN_TASK_CHARS`,
    saying so and how to see all of it (``--json`` keeps it whole)."""
    if steps is None or len(task) <= SHOWN_TASK_CHARS:
        return task
    return (f"{one_line(task, SHOWN_TASK_CHARS)}\n  (cut: the task has {len(task):,} characters; show without --steps, "
            "or with --json, prints all of it)")


def stats(
    tenant: Tenant = None,
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """Counts of runs and rows in the index for a tenant."""
    with connect(server, ca, uri, traces, tenant) as api:
        data = api.stats()
        empty = _no_runs_said(api, data, most=None) if not as_json else None  # every tenant, named
    if as_json:
        print_json(data)
        return
    where = data.get("uri") or server
    # a line of its own: as the table's title it wrapped to the table's 19 columns, a path cut in four pieces
    out.print(f"trajsearch @ {where} (tenant {data['tenant']})", soft_wrap=True, highlight=False, markup=False)
    table = Table()
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("runs", str(data["trajectories"]))
    for name, n in sorted(data["runs_by_outcome"].items()):
        table.add_row(f"  {name}", str(n))
    table.add_row("rows", str(data["rows"]))
    for name, n in sorted(data["rows_by_level"].items()):
        table.add_row(f"  {name}", str(n))
    out.print(table)
    if empty:
        err.print(f"note: {empty}", markup=False, soft_wrap=True)


def exemplars(
    task: str = typer.Argument(..., help="The task the agent is about to do (or, with --warnings, an error).",
                               callback=searched),
    tenant: Tenant = None,
    env_version: ContextEnvVersions = [],
    policy_version: ContextPolicyVersions = [],
    tool: ContextTools = [],
    k: int = typer.Option(0, "-k", help="How many, 1..10 (0: the runtime's default)."),
    budget: int = typer.Option(0, "--budget", help="Token budget of the rendered context, 50..32000 (0: the runtime's default); --json holds the same runs."),
    warnings: bool = typer.Option(False, "--warnings", help="Similar failed runs (what not to do) instead."),
    server: Server = None,
    ca: Ca = None,
    uri: Uri = None,
    traces: Traces = None,
    as_json: AsJson = False,
) -> None:
    """The exemplar (or warning) context an agent would get for TASK, exactly as rendered for its prompt."""
    from ..service.validate import advice_size

    try:  # the server's own check, so both backends refuse alike
        k_asked, budget_asked = advice_size(k, budget, names=("-k", "--budget"))
    except ValueError as exc:
        fail(str(exc))
    task = _searchable(task)
    with connect(server, ca, uri, traces, tenant) as api:
        result = api.advice("warnings" if warnings else "exemplars", task, env_version=env_version,
                            policy_version=policy_version, tools=tool, k=k_asked, budget=budget_asked)
        empty = _operator_note(api, result, "failures" if warnings else "exemplars",
                           {"--env-version": env_version, "--policy-version": policy_version})
    if empty:  # an answer still (a new tenant's agent plans from scratch), but the operator is told why
        err.print(f"note: {empty}", markup=False, soft_wrap=True)
    if as_json:
        print_json({"strategy": result.strategy, "items": result.items, "context": json.loads(result.json or "{}"),
                    "reason": result.reason, "note": result.note})
    else:
        # an empty warnings answer says its reason (``failures with other tools``, ``budget too small``, ...)
        why = result.strategy or result.reason.replace("_", " ") or "no similar failures"
        out.print(result.text or f"(nothing applicable: {why})", markup=False,
                  soft_wrap=True)  # the prompt's own lines, not wrapped to the terminal's width


def _operator_note(api, result, kind: str, versions: Mapping[str, Sequence[str]]) -> str | None:
    """What to tell the operator of an empty exemplars or warnings answer, from the answer's own ``reason`` (decided
    once, by the runtime's :func:`~trajsearch.runtime.tool.why_empty`, on both backends alike): nothing when nothing
    was close enough (review RGE 4: the versions were not why) or the text says it (a budget too small); the
    tenant's name when it holds no run at all; else the answer's note (with the versions given, when no run of the
    kind lies inside them, named in its sentence). The CLI had asked again itself, without the versions, and said
    nothing when that found nothing close either: an ``--env-version`` no run carries was answered
    "plan_from_scratch" with no word of it."""
    from ..runtime.tool import CONTEXT_VERSIONS, NO_RESULTS

    close, in_versions, nothing = list(NO_RESULTS[kind])[:3]  # the labels' order (see why_none)
    if result.items or result.reason in ("", close) or result.text:
        return None
    if result.reason == nothing and (said := _no_runs_said(api)):
        return said
    if result.reason == in_versions:  # the note's "this run's" versions are the ones the CLI's user gave: named
        return result.note.replace(CONTEXT_VERSIONS, ", ".join(_given(versions)))
    return result.note


def _range(spec: str | None, n: int) -> tuple[int, int]:
    """``--steps`` as a slice of a run of ``n`` steps; bounds are inclusive positions from 0.

    Negative, reversed or out-of-run bounds are refused: read Python's way they silently showed other steps. ``N-M``
    is ``N:M``: ``search`` and ``similar`` label a hit ``step 48-50``, which was copied here and refused.
    """
    if not spec:
        return 0, n
    a, colon, b = spec.partition(":")
    if not colon and (dashed := re.fullmatch(r"\s*(\d+)\s*-\s*(\d+)\s*", spec)):
        a, colon, b = dashed[1], ":", dashed[2]
    try:
        first = int(a) if a else 0
        last = int(b) if b else (max(n - 1, first) if colon else first)
    except ValueError:
        fail(f"--steps {spec!r}: expected N, N:M (or N-M), N: or :M")
    if first < 0 or last < 0:
        fail(f"--steps {spec!r}: positions count from 0; negative ones are not allowed")
    if first > last:
        fail(f"--steps {spec!r}: reversed range (from {first} to {last})")
    if first >= n:
        fail(f"--steps {spec!r}: the run has {n} step(s), positions 0 to {n - 1}" if n else
             f"--steps {spec!r}: the run has no steps")
    return first, min(n, last + 1)
