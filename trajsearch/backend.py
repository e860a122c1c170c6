"""Where a CLI command runs: the embedded store (the façade) or a trajsearch server (the client).

The gRPC :class:`~trajsearch.service.client.Client` mirrors the façade's
verbs on purpose, so every command is written once against :class:`Backend`
and renders once; ``--server`` (or ``$TRAJSEARCH_SERVER``) picks the remote
one, with the API key from ``$TRAJSEARCH_API_KEY``. Remotely the tenant is
the key's: a command passes ``tenant=None`` and the server decides.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from .failures import FailureReport

if TYPE_CHECKING:
    from .export import Export
from .model import Trajectory, outcomes_shown
from .results import ContextResult, Hit, RunMatch, StepView
from .store.filters import Filters

DEFAULT_TENANT = "default"

#: How a dump already ingested is read again: without ``--restart`` its checkpoint passes over it, and a trace the
#: store lost was said to be written again by "a re-ingest of its dump" that read nothing.
REINGEST = "with --restart (its checkpoint passes over a dump it has read)"


def damaged_trace_advice(trajectory_id: str | None = None, *, logged: bool = True) -> str:
    """What to do about a damaged stored trace. A re-ingest writes only the traces its store lacks (it does not read
    the ones it has), so "re-ingest it" alone changed nothing: the damaged file must go first, removed or with its
    run; and the re-ingest needs ``--restart``: the ingest's checkpoint passes over a dump it has read. ``logged``:
    the file is named in the server's log, not in the message (a server's, the web pages')."""
    which = "it (the server's log names it)" if logged else "that file"
    return (f"a re-ingest alone keeps the damaged file: remove {which} or `trajsearch delete "
            f"{trajectory_id or 'ID'}`, then re-ingest its dump {REINGEST}")


@dataclass
class Backend:
    """One door for the CLI: ``api`` is a TrajSearch or a Client; ``tenant`` None means "the key's"."""

    api: Any
    tenant: str | None
    remote: bool

    def tenant_name(self) -> str:
        """The tenant this command reads: the one named, or over a server its key's (asked of the server), so that a
        command names the tenant it looked in with the same words on both backends."""
        return self.tenant if self.tenant is not None else self.api.whoami()["tenant"]

    def search(self, text: str, **options: Any) -> list[Hit]:
        return self.api.search(text, tenant=self.tenant, **options)

    def similar_runs(self, trajectory_id: str | None, text: str | None, **options: Any) -> list[RunMatch]:
        return self.api.similar_runs(trajectory_id, text, tenant=self.tenant, **options)

    def expand(self, hit: Hit, *, before: int, after: int) -> list[StepView]:
        return self.api.expand(hit, before=before, after=after, tenant=self.tenant)

    def run(self, trajectory_id: str, *, level: str = "task") -> Hit | None:
        """A run's ``task`` (or ``summary`` / ``failure``) row, or None."""
        return self.api.run(trajectory_id, tenant=self.tenant, level=level)

    def outcomes_shown(self, hits: Sequence[Hit]) -> dict[str, str]:
        """Each hit's run's outcome as a reader is told it, by run ("submitted, not evaluated" for a success no one
        evaluated): see :meth:`TrajSearch.outcomes_shown`. Over the service, as each hit carries it
        (``Hit.outcome_shown``, known to the server from the run's row); where it does not (an older server, a row
        written before digests), from the trace of the successful run (:func:`~trajsearch.model.outcomes_shown`: a
        trace that cannot be read keeps its row's outcome, a damaged one (DATA_LOSS) too; a server gone or slow, or
        its trace store unavailable or busy (UNAVAILABLE, DEADLINE_EXCEEDED), the rest's too)."""
        if not self.remote:
            return self.api.outcomes_shown(hits, tenant=self.tenant)
        from .service.client import DeadlineExceeded, ServiceError, Unavailable

        known = {h.trajectory_id: h.outcome_shown for h in hits if h.outcome_shown}
        return outcomes_shown(hits, lambda uri: self.api.get_trace(uri, tenant=self.tenant), read_failed=ServiceError,
                              store_down=lambda exc: isinstance(exc, (Unavailable, DeadlineExceeded)), known=known)

    def nearest_run_ids(self, text: str) -> list[str]:
        """The ids of the tenant's runs an id typed as ``text`` most likely meant (see
        :meth:`TrajSearch.nearest_run_ids`). The service lists no ids: over it, those its NOT_FOUND answer to a
        ``SimilarRuns`` of the id names, found by the server among the key's runs as here (a guess from the runs a
        word search of the id found named other runs: a tau-bench run's task holds no word of its id)."""
        if not self.remote:
            return self.api.nearest_run_ids(text, Filters(tenant=self.tenant))
        from .search import id_shaped, meant_in
        from .service.client import NotFound, ServiceError

        if not id_shaped(text, min_chars=1):
            return []
        try:  # one run of it found (since asked, or hidden by a key's pins) is a cheap search, its answer unused
            self.api.similar_runs(text.strip(), None, tenant=self.tenant, k=1, mode="lexical")
        except NotFound as exc:
            return meant_in(exc.details)
        except ServiceError:  # a server failing: no suggestion, the error stands
            return []
        return []

    def id_family_held(self, text: str, found: Sequence[str]) -> bool:
        """Whether ``text`` reads as an id of the tenant's (see :meth:`TrajSearch.id_family_held`): over the service,
        which lists no ids, judged on the ids ``found`` by the search of it (a mistyped id's words find its
        siblings)."""
        if not self.remote:
            return self.api.id_family_held(text, Filters(tenant=self.tenant))
        from .search import id_family, id_shaped

        text = text.strip()
        family, folded = id_family(text), text.casefold()
        return id_shaped(text) and any(i.startswith(family) or folded in i.casefold() for i in found)

    def show(self, trajectory_id: str) -> tuple[Hit, Trajectory] | None:
        """A run's task row and its full trace, or None when the run is not indexed."""
        run = self.run(trajectory_id)
        if run is None:
            return None
        from .store.traces import TraceCorruptError

        if not self.remote:  # a trace missing is said by ``cli.connect``, naming the store's --traces
            try:
                return run, self.api.get_trace(run.trace_uri, tenant=self.tenant)
            except TraceCorruptError as exc:
                raise TraceCorruptError(f"the run is indexed but its trace is damaged and cannot be read ({exc}); "
                                        + damaged_trace_advice(trajectory_id, logged=False)) from None
        from .service.client import DataLoss, NotFound

        try:
            return run, self.api.get_trace(run.trace_uri, tenant=self.tenant)
        except NotFound as exc:  # said "NOT_FOUND: trace_uri: no such trace", of a run the server had just found
            raise LookupError(
                f"the run is indexed but its trace is not in the server's trace store (moved or deleted? the server "
                f"reads the traces of its --traces; a re-ingest of its dump {REINGEST} writes it again)"
                + (f" (request id {exc.request_id})" if exc.request_id else "")) from None
        except DataLoss as exc:  # said "DATA_LOSS: stored trace is unreadable", naming nothing to do
            raise TraceCorruptError(
                "the run is indexed but its trace on the server is damaged and cannot be read; "
                + damaged_trace_advice(trajectory_id)
                + (f" (request id {exc.request_id})" if exc.request_id else "")) from None

    def delete(self, trajectory_ids: Sequence[str], done: Callable[[list[str]], None] | None = None) -> list[str]:
        """Remove these runs, their traces and rows; the ids removed (the rest were not there), told to ``done`` as
        they go. Over the service one call per run (a write key's); here a batch at a time."""
        if not self.remote:
            return self.api.delete_runs(trajectory_ids, tenant=self.tenant, done=done)
        removed = []
        for trajectory_id in dict.fromkeys(trajectory_ids):
            if self.api.delete(trajectory_id, tenant=self.tenant):
                removed.append(trajectory_id)
                if done is not None:
                    done([trajectory_id])
        return removed

    def stats(self) -> dict[str, Any]:
        return self.api.stats(tenant=self.tenant)

    def failures(self, **options: Any) -> FailureReport:
        """Failure modes inside the filters (see :func:`trajsearch.failures.failure_modes`)."""
        if self.remote:
            return self.api.failures(tenant=self.tenant, **options)
        from .failures import failure_modes

        return failure_modes(self.api, tenant=self.tenant or DEFAULT_TENANT, **options)

    def export(self, query: str, **options: Any) -> Export:
        """Matching runs as a dataset stream (see :func:`trajsearch.export.export_runs`): the
        same ``search`` and ``get_trace`` calls on either backend."""
        from .export import export_runs

        return export_runs(self.api, query, tenant=self.tenant if self.remote else self.tenant or DEFAULT_TENANT,
                           **options)

    def advice(self, kind: str, text: str, *, env_version: Sequence[str], policy_version: Sequence[str],
               tools: Sequence[str], k: int | None, budget: int | None) -> ContextResult:
        """Exemplars or warnings as an agent would get them in this (trusted) context."""
        from .runtime import Runtime, RuntimeContext
        from .runtime.tool import BUDGET_TOO_SMALL

        if self.remote:
            verb = self.api.exemplars if kind == "exemplars" else self.api.warnings
            result = verb(text, env_version=list(env_version), policy_version=list(policy_version),
                          tools_available=list(tools), k=k or 0, token_budget=budget or 0)
            # the service's empty context says why in its text and json; the CLI says it in its own notes, as it does
            # over the embedded store, whose text and json are "" (see ContextResult); runs the budget left out keep
            # their note and json on both
            return replace(result, text="", json="") if result.reason not in ("", BUDGET_TOO_SMALL) else result
        ctx = RuntimeContext(tenant=self.tenant or DEFAULT_TENANT, env_version=tuple(env_version),
                             policy_version=tuple(policy_version), tools_available=tuple(tools))
        return Runtime(self.api).advice(kind, text, ctx, k=k, budget=budget)


@contextmanager
def open_backend(*, server: str | None, ca: Path | None = None, uri: str | None = None,
                 traces: str | None = None, tenant: str | None = None, require_key: bool = True,
                 warm: bool = False) -> Iterator[Backend]:
    """The server's client when ``server`` is set, else the embedded store at ``uri`` / ``traces``.

    With a server, ``uri`` and ``traces`` must not be set (the server owns its
    store) and ``tenant``, if given, must be the key's own (the server checks);
    ``require_key=False`` connects without an API key (``health``); ``warm``: the embedded store's model is made
    before the store opens (``TrajSearch.open``), for a command that will embed.
    """
    if server:
        if uri or traces:
            raise ValueError("--uri/--traces name a local store; with --server the server owns its store")
        from .service.client import Client

        with Client(server, tls=ca is not None, root_certificates=ca, require_key=require_key) as client:
            yield Backend(client, tenant, remote=True)
        return
    from .search import TrajSearch

    with TrajSearch.open(uri, traces=traces, warm=warm) as ts:
        yield Backend(ts, tenant or DEFAULT_TENANT, remote=False)
