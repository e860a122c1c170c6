"""The library façade: a handful of verbs over the index, the embedder and the trace store.

``search`` finds rows, ``expand`` shows the steps around a hit, ``similar_runs``
answers "runs like this broken one", ``get_trace`` returns a full run. The CLI,
the agent runtime and the service all call these and nothing below them.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, OrderedDict
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from pathlib import Path

from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping, Sequence, TypeVar

import numpy as np

from . import config
from .digest import ExemplarDigest, from_row_steps
from .embed import Embedder, load_embedder
from .excerpt import BLANK_TEXT, blank, names_what_broke, pasted_error_line, query_text
from .failures.rows import row_own_lines, verdict_only
from .fusion import FusionConfig, lifted, resolve_mode
from .indexer import Indexer
from .model import Outcome, Trajectory, outcomes_shown, passes, valid_id
from .results import Hit, IngestReport, RunMatch, StepView
from .represent import WindowConfig, row_id
from .bounds import MAX_GROUP_SIZE, MAX_K, MAX_QUERY_CHARS, check_count
from .store.filters import Filters, as_tuple, starts_with
from .store.index import OUTPUT_FIELDS, IndexSettings, TrajectoryIndex, is_server_uri
from .store.layout import MAX_LIMIT, unit_vector
from .store.lock import StoreOpenError, diagnose, held_here
from .store.traces import TraceStore, TraceStoreError, TraceStoreSetupError, open_trace_store
from .vocab import DENSE_LEVELS, LEVELS, RUN_LEVELS

if TYPE_CHECKING:
    from .ingest.read import Parsed

log = logging.getLogger(__name__)

def _beside(call: Callable[[], T]) -> Future[T]:
    """``call`` run in a thread of its own, started now: a hybrid search's lexical leg while the search's thread runs
    the dense leg, which on Milvus Lite is mostly a numpy product leaving the GIL to the in-process BM25 (two cores:
    the legs overlap). A thread per leg, not a pool: a forked child copied the pool without its threads (its first leg
    waited for ever), and one forked after concurrent hybrid searches died of SIGSEGV at its normal exit (milvus-lite's
    server release) with a pool, not with a thread per leg (tests/test_hybrid.py). A daemon: the exit waits for none."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(call())
        except BaseException as exc:  # handed to the search that waits for it, as if it ran in its thread
            future.set_exception(exc)

    threading.Thread(target=run, name="lexical-leg", daemon=True).start()
    return future


class QueryVectors:
    """The last few query embeddings, by text.

    One agent step asks several questions of the same text (exemplars search the
    task and summary levels; the loop retries; a service sees repeated queries),
    and one query embedding costs as much as the search itself: embed once. Vectors
    are kept at unit length (as the index stores rows), so an inner product with a
    stored vector is the cosine even from an embedder that does not normalise.
    """

    def __init__(self, embedder: Embedder, size: int = 256) -> None:
        self.embedder, self.size = embedder, size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, text: str) -> np.ndarray:
        with self._lock:
            if text in self._cache:
                self._cache.move_to_end(text)
                return self._cache[text]
        vector = unit_vector(self.embedder.encode([text])[0])
        self.remember(text, vector)
        return vector

    def many(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``, in order: remembered ones as they are, the rest in one model call
        (and not remembered: a bulk of texts would push the queries out)."""
        with self._lock:
            known = {text: self._cache[text] for text in texts if text in self._cache}
        missing = list(dict.fromkeys(text for text in texts if text not in known))
        if missing:
            known.update((text, unit_vector(v)) for text, v in zip(missing, self.embedder.encode(missing)))
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([known[text] for text in texts])

    def remember(self, text: str, vector: Any) -> None:
        """Store a vector known to be ``text``'s embedding (e.g. a stored row's)."""
        with self._lock:
            self._cache[text] = unit_vector(vector)
            self._cache.move_to_end(text)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)


#: Runs looked up by key at a time when deleting (their trace locations).
_DELETE_LOOKUP = 1_000


class TrajSearch:
    """Search over past agent runs. Open with :meth:`open`; every read verb takes a ``tenant``."""

    def __init__(
        self, index: TrajectoryIndex, embedder: Embedder, traces: TraceStore, fusion: FusionConfig = FusionConfig()
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.traces = traces
        self.fusion = fusion
        self.window = WindowConfig(index.settings.window, index.settings.stride)

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    @embedder.setter
    def embedder(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self.query_vector = QueryVectors(embedder)  # cached vectors belong to one embedder

    @classmethod
    def open(
        cls,
        uri: str | None = None,
        *,
        traces: str | None = None,
        model: str | None = None,
        embedder: Embedder | None = None,
        window: int = 3,
        stride: int = 2,
        lexical: str | None = None,
        warm: bool = False,
    ) -> TrajSearch:
        """Open (creating if needed) the index at ``uri`` and the trace store at ``traces``.

        Defaults: the embedded Milvus Lite under ``./.trajsearch`` (see :mod:`trajsearch.config`).
        ``lexical`` chooses the lexical leg of a *new* collection (``memory``: in-process BM25, the
        default for Milvus Lite; ``milvus``: Milvus' native BM25, the default for a Milvus server);
        an existing collection keeps the one it was created with. ``warm``: the model is made now, before the store
        is opened or created (its first embedding, else: ``show`` and ``stats`` never embed), so that a caller that
        will embed (an ingest, a server) meets a broken model file before it has created or written anything.
        """
        embedder = embedder or load_embedder(model or config.default_model())
        WindowConfig(window, stride)  # validate before anything is created (and before a warm model's session)
        if warm:
            embedder.encode(["warm-up"])
        settings = IndexSettings(embedder=embedder.name, dim=embedder.dim, window=window, stride=stride)
        uri = uri or config.default_uri()
        try:
            index = TrajectoryIndex(uri, settings, token=config.milvus_token(), lexical=lexical)
        except Exception as exc:
            # Milvus Lite says only "Open local milvus failed": find out whether a lock or the
            # file system is why, waiting briefly for a holder that was just killed to go away
            path = None if is_server_uri(uri) else Path(uri).expanduser().resolve()
            if path is None or held_here(path):  # a server, or ours opened and then failed otherwise
                raise
            why = diagnose(path)
            if why is not None:
                raise StoreOpenError(why) from exc
            index = TrajectoryIndex(uri, settings, token=config.milvus_token(), lexical=lexical)  # holder gone: again
        return cls(index, embedder, open_trace_store(traces or config.default_traces()))

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> TrajSearch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing -----------------------------------------------------------------------------

    def add(
        self,
        items: Iterable[Trajectory | Parsed],
        *,
        on_progress: Callable[[int], None] | None = None,
    ) -> IngestReport:
        """Index trajectories; unchanged ones are skipped, changed ones replaced."""
        return self.indexer().add(items, on_progress=on_progress)

    def indexer(self, **options: Any) -> Indexer:
        """The write pipeline into this store (batch jobs tune it: batch sizes, retries, queue depth)."""
        return Indexer(self.index, self.embedder, self.traces, **options)

    @property
    def location(self) -> tuple[str, str]:
        """(index URI, trace store location): what a checkpoint is tied to."""
        return self.index.uri, self.traces.location

    def rows(self, filters: Filters, fields: Sequence[str]) -> Iterable[dict[str, Any]]:
        """Every row inside ``filters``, only ``fields``: for curation and counts, never for ranking.

        Read from the partitions of the tenant's asked-for levels only (all of them, passages too,
        when none are asked for): the failure rows of a 44k-row tenant at 100k rows in 0.5 s, not
        the 1.5 s of a whole-collection scan."""
        return self.index.iterate(list(fields), expr=filters.to_expr(), tenant=filters.tenant,
                                  levels=filters.levels or LEVELS)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` with this store's embedder (e.g. to judge near-duplicates): texts of rows
        fetched by :meth:`runs` come with their stored vectors (no model call), the rest are embedded
        in one batch."""
        return self.query_vector.many(list(texts))

    def upgrade(self, *, tenant: str | None = None, batch: int = 32) -> int:
        """Bring runs indexed by an older representation (see ``represent.REPRESENTATION_VERSION``)
        up to this one from their traces, re-embedding only the rows whose vector changed; returns
        how many runs were rewritten.

        An older store needs no schema change: it is searched as it is (long outputs clipped,
        windows' vectors from 256 tokens, as before) until its runs are re-ingested or upgraded.
        Like a re-ingest of the same runs (:func:`~trajsearch.indexer.reusable_vectors`), this keeps the
        stored vector of every row whose text is unchanged (tasks, failures; step windows too when they
        were indexed since ``WINDOW_TOKENS_SINCE``), gives passages their window's vector and embeds
        the rest (the new summaries; windows whose vectors came from 256 tokens), but needs no dumps:
        it reads the trace store. The task row, which carries the content hash, is written last, as
        ingest does; the rows the new representation no longer makes are deleted just before it
        (:meth:`_delete_unmade`), so an upgraded run holds the rows a fresh ingest makes.
        """
        from .indexer import _record, indexed_rows, reusable_vectors  # noqa: PLC0415 - the one row layout
        from .represent import content_hash, embed_rows  # noqa: PLC0415

        expr = Filters(tenant=tenant, levels=("task",)).to_expr() if tenant else 'level == "task"'
        todo = list(self.index.iterate(["tenant", "trajectory_id", "content_hash", "trace_uri"], expr=expr))
        rewritten = 0
        for start in range(0, len(todo), batch):
            records: list[dict[str, Any]] = []
            for task_row in todo[start : start + batch]:
                run_tenant = task_row["tenant"]
                try:
                    run = self.traces.get(task_row["trace_uri"], tenant=run_tenant)
                except Exception as exc:  # noqa: BLE001 - a run without its trace stays as it is
                    log.warning("upgrade: trace of %s unavailable (%s): left as it is", task_row["trajectory_id"], exc)
                    continue
                chash = content_hash(run, self.window)
                if chash == task_row["content_hash"]:
                    continue
                rows = indexed_rows(run, window=self.window)
                known = reusable_vectors(self.index, run, rows, task_row["content_hash"], self.window)
                fresh = [r for r in rows if id(r) not in known and id(r.vector_of) not in known]
                vectors = dict(zip(map(id, fresh), embed_rows(self.embedder, fresh).tolist())) if fresh else {}
                vectors.update(known)
                records += [_record(run, r, trace_uri=task_row["trace_uri"], chash=chash,
                                    vector=vectors[id(r.vector_of) if r.vector_of is not None else id(r)]) for r in rows]
                rewritten += 1
            self.index.upsert([r for r in records if r["level"] != "task"])
            self._delete_unmade(records)
            self.index.upsert([r for r in records if r["level"] == "task"])
        self.index.flush()
        return rewritten

    def _delete_unmade(self, records: list[dict[str, Any]]) -> None:
        """Delete the stored rows of the runs ``records`` rewrite that are not among them: what the new
        representation no longer makes (a passage of an output now short: an image read as its placeholder).
        A re-ingest deletes the run's rows first; an upgrade deletes them after the new rows are in and
        before the task row (its content hash) is, so a run stopped half-way keeps its rows and is redone."""
        runs: dict[str, set[str]] = {}  # tenant -> trajectory ids rewritten
        for r in records:
            runs.setdefault(r["tenant"], set()).add(r["trajectory_id"])
        made = {r["id"] for r in records}
        for tenant, ids in runs.items():
            expr = Filters(tenant=tenant, trajectory_ids=tuple(sorted(ids))).to_expr()
            stored = (r["id"] for r in self.index.iterate(["id"], expr=expr, tenant=tenant, levels=LEVELS))
            self.index.delete_rows(tenant, [i for i in stored if i not in made])

    def delete(self, trajectory_id: str, *, tenant: str) -> bool:
        """Remove a run: its rows and its trace. False when the tenant holds no such run."""
        return bool(self.delete_runs([trajectory_id], tenant=tenant))

    def delete_runs(
        self, trajectory_ids: Sequence[str], *, tenant: str, done: Callable[[list[str]], None] | None = None
    ) -> list[str]:
        """Remove several runs, their traces and rows, ``_DELETE_LOOKUP`` runs at a time (their rows by one filtered
        delete per batch: Milvus takes about as long for 30 runs as for one); returns the ids removed, in order, and
        tells ``done`` of each batch's as it goes. Rows of an id without a task row (a run a killed writer left
        half-written) go too.

        Traces go first, then rows, as an ingest writes them the other way round: a delete stopped between the two
        (Ctrl-C, kill -9, a trace store that fails) leaves every run it did not finish in the index, where a rerun
        finds and finishes it (probe G, D1: rows went first, and the traces then stayed for good, a rerun saying
        "not in the index"). An id no longer indexed whose trace is still stored (an older version's interrupted
        delete, a writer killed mid-run) has that trace removed and counts as removed: its content was there."""
        ids = list(dict.fromkeys(valid_id(t) for t in trajectory_ids))
        removed: list[str] = []
        for start in range(0, len(ids), _DELETE_LOOKUP):
            chunk = ids[start:start + _DELETE_LOOKUP]
            found = self.runs(chunk, tenant=tenant, vectors=False)
            leftover = self._delete_traces(chunk, found, tenant)
            self.index.delete_runs((tenant, t) for t in chunk)
            if leftover:
                shown = ", ".join(leftover[:5]) + (" …" if len(leftover) > 5 else "")
                log.warning("removed the trace(s) of %d run(s) no longer in the index (an interrupted delete or "
                            "ingest left them): %s", len(leftover), shown)
            gone = [t for t in chunk if t in found or t in leftover]
            removed += gone
            if done is not None:
                done(gone)
        return removed

    def _delete_traces(self, ids: list[str], found: dict[str, Hit], tenant: str) -> list[str]:
        """Delete the traces of the ``found`` runs and of the other ``ids`` where one is left; those others. A
        storage failure says what it leaves."""
        try:
            leftover = [t for t in ids if t not in found and self._trace_left(t, tenant)]
            for trajectory_id in ids:
                if trajectory_id in found:
                    self.traces.delete(found[trajectory_id].trace_uri, tenant=tenant)
                elif trajectory_id in leftover:
                    self.traces.delete(self.traces.uri_for(tenant, trajectory_id), tenant=tenant)
        except TraceStoreError as exc:
            if isinstance(exc, (ValueError, KeyError)):  # a URI this store refuses: no rerun mends it
                raise
            raise type(exc)(f"{exc}: the runs not removed yet are still in the index (some may have lost their "
                            "trace already): rerun the delete to finish once the trace store works") from exc
        return leftover

    def _trace_left(self, trajectory_id: str, tenant: str) -> bool:
        """Whether the trace store still holds the trace of an id the index no longer holds."""
        return self.traces.exists(self.traces.uri_for(tenant, trajectory_id), tenant=tenant)

    # -- reading -----------------------------------------------------------------------------

    def search(
        self,
        text: str,
        *,
        tenant: str,
        levels: str | Sequence[str] = (),
        outcome: str | Sequence[str] = (),
        env_version: str | Sequence[str] = (),
        policy_version: str | Sequence[str] = (),
        task_family: str | Sequence[str] = (),
        tools: str | Sequence[str] = (),
        exclude_trajectory_ids: Sequence[str] = (),
        created_after: int | None = None,
        k: int = 10,
        group_by_trajectory: bool = True,
        group_size: int = 1,
        mode: str = "auto",
    ) -> list[Hit]:
        """Rows most similar to ``text`` inside the hard filters, best first.

        With ``group_by_trajectory`` (the default) at most ``group_size`` hits come
        from any one run, and up to ``k`` runs are returned. ``mode``: dense | lexical |
        hybrid | auto (hybrid for queries that look like log lines, else dense).
        ``created_after``: epoch seconds; only runs started then or later (the web page's "From", the CLI's
        ``--since``).
        """
        filters = Filters(
            tenant=tenant,
            levels=levels,
            outcomes=outcome,
            env_versions=env_version,
            policy_versions=policy_version,
            task_families=task_family,
            tools=tools,
            exclude_trajectory_ids=tuple(exclude_trajectory_ids),
            created_after=created_after,
        )
        return self.search_filtered(
            text, filters, k=k, group_by_trajectory=group_by_trajectory, group_size=group_size, mode=mode
        )

    def search_filtered(
        self,
        text: str,
        filters: Filters,
        *,
        k: int = 10,
        group_by_trajectory: bool = True,
        group_size: int = 1,
        mode: str = "auto",
    ) -> list[Hit]:
        """:meth:`search` with prebuilt :class:`Filters` (the runtime builds them from trusted context); ``text``
        read as :func:`trajsearch.excerpt.query_text` reads it (a paste's terminal codes left out)."""
        if isinstance(text, str):
            text = query_text(text)
        _check_query(text, k, group_size)
        mode = self.mode_used(text, filters, mode)
        if mode == "dense":
            vector = self.query_vector(text)
            rows = self._dense(vector, self._dense_filters(filters), k, group_by_trajectory, group_size)
            rows = _row_order(rows)  # grouped: runs best first, rows in score order
            closest = rows[0]["score"] if rows else None  # the nearest row inside the filters: the first
            return [Hit.from_row(dict(r, similarity=r["score"], closest=closest)) for r in rows]
        return self._fused(text, filters, k, group_size if group_by_trajectory else 0, mode)

    def mode_used(self, text: str, filters: Filters, mode: str = "auto") -> str:
        """The mode :meth:`search_filtered` runs for ``mode`` (dense, lexical or hybrid): ``auto`` is
        hybrid for log-like queries, dense for prose, and lexical over passages only (they have no
        vector; asked dense over them, a clear no). The one place deciding it: the pages say what ran, for ``text``
        as the search reads it (:func:`trajsearch.excerpt.query_text`: a coloured paste was named dense and ran
        hybrid, review of ENG2, 2)."""
        text = query_text(text)
        if self._dense_filters(filters) is None:
            if mode == "dense":
                raise ValueError(PASSAGES_NOT_DENSE)  # "no matches" would read as nothing matched
            mode = "lexical" if mode == "auto" else mode
        used = resolve_mode(mode, text)
        return "hybrid" if mode == "auto" and used == "dense" and self._held_line(text, filters) else used

    def _held_line(self, text: str, filters: Filters) -> bool:
        """Whether a one-line query of at most ``HELD_LINE_WORDS`` words that reads as prose is held verbatim by
        one of the rows the lexical leg ranks best inside ``filters``: a pasted error message without its class
        (``list index out of range``, ``gift card balance is not enough``, ``Unable to find module for ...``), which
        dense ranks by its wording alone. Probe 47, E3: of 238 error messages from the shared runs' outputs, 39
        read as prose, and for 34 of them auto's first step row did not hold the message where hybrid's did."""
        words = text.split()
        if len(text.strip().splitlines()) != 1 or len(words) > HELD_LINE_WORDS:
            return False
        lexical = self._lexical_filters(filters)
        ranked = [rid for rid, _ in self.index.lexical_search(text, lexical, limit=self.fusion.lexical_checked,
                                                              widen=False)]
        texts = {row["id"]: row["text"] for row in self.index.get(ranked, lexical, fields=["text"])} if ranked else {}
        return bool(self.fusion.verbatim_rows(text, texts))

    def _dense_filters(self, filters: Filters) -> Filters | None:
        """``filters`` for the dense leg: levels with a vector only (None: nothing left to rank).

        On Milvus Lite passages sit in partitions the dense search never names; on a server they
        share the tenant's partition, so the level filter keeps them out."""
        if not filters.levels:
            return filters if self.index.partitioned else replace(filters, levels=DENSE_LEVELS)
        levels = tuple(level for level in filters.levels if level in DENSE_LEVELS)
        return replace(filters, levels=levels) if levels else None

    @staticmethod
    def _lexical_filters(filters: Filters) -> Filters:
        """``filters`` for the lexical leg: asking for ``step`` rows asks for their passages too
        (the parts of long outputs a step row clips)."""
        if "step" in filters.levels and "passage" not in filters.levels:
            return replace(filters, levels=(*filters.levels, "passage"))
        return filters

    def _fused(self, text: str, filters: Filters, k: int, group_size: int, mode: str) -> list[Hit]:
        """Lexical or hybrid search: both legs inside the same filters, fused, then grouped.

        Each leg is asked for a pool of candidates; when the fused candidates hold fewer than
        ``k`` runs (``k`` rows ungrouped) and a leg came back full, the pools grow (x4) and the
        legs are asked again, until ``k`` are found or the candidates inside the filters run out. The
        ranks are fused at one depth whatever ``k`` (``fusion.pool``): rows only deeper pools hold
        (a larger ``k``, grown pools) rank below, so asking for more never reorders the top.
        The same for ``group_size`` rows of each run shown (as dense mode's group_by fills them):
        while a run shown has fewer, the pool of each full leg holding more of its rows deeper grows
        (that leg's only: a run's further rows mostly lie deep in the dense leg alone, and a lexical
        pool grown with it would only bring rows whose runs must be read by key).
        """
        pool = self.fusion.pool_size(k, group_size)
        pools = {"lexical": pool, "dense": pool}
        lexical: list[tuple[str, float]] = []
        dense: dict[str, dict] = {}
        dense_filters = None if mode == "lexical" else self._dense_filters(filters)
        lexical_filters = self._lexical_filters(filters)
        vector = None if dense_filters is None else self.query_vector(text)
        error_line = pasted_error_line(text)
        erring: dict[str, None] = {}  # rows of the shortlist's runs the lexical leg finds for error_line
        erring_asked: tuple[tuple[str, ...], int] = ((), 0)  # the runs and depth it was last asked for
        rows: dict[str, dict] = {}  # every candidate row fetched so far, by id
        runs_of: dict[str, str] = {}  # candidate id -> its run, where known (the dense leg gives it)
        asked = {"lexical": 0, "dense": 0}  # the depth each leg was last asked for
        while True:
            ask_dense = dense_filters is not None and asked["dense"] != pools["dense"]
            pending = None
            if asked["lexical"] != pools["lexical"]:
                # hybrid: the dense leg fills the places, so a long query's lexical leg keeps to its telling words
                leg = partial(self.index.lexical_search, text, lexical_filters, limit=pools["lexical"],
                              widen=mode == "lexical")
                # beside the dense leg (see _beside) once the BM25 is in memory: its first load or rebuild (minutes on
                # a large store) runs here, where Ctrl-C stops it, not in a thread the exit would wait out
                pending = _beside(leg) if ask_dense and self.index.lexical_ready else None
                lexical = leg() if pending is None else lexical
            if ask_dense:
                try:  # ranks and runs only: rows that may show are fetched below
                    dense = {r["id"]: r for r in self.index.search(vector, dense_filters, limit=pools["dense"],
                                                                   fields=())}
                except Exception:
                    if pending is not None:
                        pending.result()  # the lexical leg's error first, as when the legs ran one after the other
                    raise
                runs_of.update((rid, r["trajectory_id"]) for rid, r in dense.items())
            if pending is not None:
                lexical = pending.result()
            asked = dict(pools)
            scores = self.fusion.fuse(text, list(dense), lexical, mode, depth=self.fusion.pool)  # deeper: below
            ranking = sorted(scores, key=lambda rid: -scores[rid])
            # the shortlist (rows that may show, and the lexical leg's best: a passage has no dense
            # rank to lift it) is fetched by key, its run and text only, and lifted where it holds
            # the query verbatim (the lexical leg's best: nearly verbatim, a tier below)
            shortlist = self.fusion.shortlist_size(k, group_size, mode)
            best = list(dict.fromkeys(ranking[:shortlist] + [rid for rid, _ in lexical[: self.fusion.lexical_checked]]))
            self._fetch(rows, best, lexical_filters)
            runs_of.update((rid, rows[rid]["trajectory_id"]) for rid in best if rid in rows)
            if error_line:  # which row shows a run already shortlisted: the one holding the paste's error line
                erring, erring_asked = self._erring_rows(error_line, best, runs_of, lexical_filters,
                                                         max(group_size, 1), erring, erring_asked)
                best = list(dict.fromkeys(best + list(erring)))
                self._fetch(rows, best, lexical_filters)
                runs_of.update((rid, rows[rid]["trajectory_id"]) for rid in erring if rid in rows)
            texts = {rid: rows[rid]["text"] for rid in best if rid in rows}
            held = self.fusion.verbatim_rows(text, texts)  # raised above every other row
            checked = {rid: texts[rid] for rid, _ in lexical[: self.fusion.lexical_checked] if rid in texts}
            # a pasted traceback's rows holding the error it ends in show their run, in its place (below a row
            # nearly holding it all): a step cut before the error holds all the frames and says nothing failed
            ends_in = self.fusion.verbatim_rows(error_line, texts) if error_line else set()
            near = self.fusion.near_verbatim_rows(text, checked, held)
            if ends_in and names_what_broke(error_line):
                # the line says what broke: the shortlist's runs that met it come first, and a row holding the rest
                # of the paste but ending in another error (the same frames, another table) is no near match. Where
                # no row holds it word for word (a path's python3.10 from another machine, a run's python3.11) the
                # near matches stand, numbers loosened as near_verbatim_rows does: they are the runs that met it
                near = {rid: share for rid, share in near.items() if rid in ends_in}
                scores = lifted(scores, ends_in)
            scores = lifted(lifted(scores, near), self.fusion.as_pasted_first(text, texts, held))
            scores = in_their_runs_place(scores, ends_in, runs_of)  # after the lifts: no run's best score moves
            order = sorted(scores, key=lambda rid: (-scores[rid], rid not in ends_in))
            chosen = self._choose(order, len(best), runs_of, scores, k, group_size, lexical_filters)
            shown = Counter(r["trajectory_id"] for r in chosen)
            found = len(shown) if group_size else len(chosen)
            full = {leg for leg, got in (("lexical", len(lexical)), ("dense", len(dense)))
                    if got >= pools[leg] and pools[leg] < MAX_LIMIT}
            if found < k:  # both grow, to the deeper of the two
                if not full:
                    break
                pools = dict.fromkeys(pools, min(MAX_LIMIT, max(pools.values()) * 4))
                continue
            short = [tid for tid, n in shown.items() if n < group_size]
            deeper = self._deeper_legs(short, runs_of, text, full, (lexical, lexical_filters),
                                       (dense, dense_filters, vector)) if short and full else set()
            if not deeper:
                break
            pools.update((leg, min(MAX_LIMIT, pools[leg] * 4)) for leg in deeper)
        # the rows shown, whole, in one get: with their vectors when the dense leg did not rank one of them
        unscored = vector is not None and any(row["id"] not in dense for row in chosen)
        fields = [*OUTPUT_FIELDS, "embedding"] if unscored else OUTPUT_FIELDS
        whole = {r["id"]: r for r in self.index.get([r["id"] for r in chosen], lexical_filters, fields=fields)}
        shown = [dict(whole[r["id"]], score=r["score"], verbatim=r["id"] in held) for r in chosen if r["id"] in whole]
        if vector is not None:  # the cosine: the dense leg's score, else from the row's stored vector
            unranked = [row for row in shown if row["id"] not in dense]
            stored = np.asarray([row["embedding"] for row in unranked], dtype=np.float64)  # one conversion
            for row, embedding in zip(unranked, stored):
                row["similarity"] = float(np.dot(vector, embedding))
            # the dense leg's nearest row, shown or not (the weak-match note's verdict: Hit.closest)
            closest = max((r["score"] for r in dense.values()), default=None)
            for row in shown:
                if row["id"] in dense:
                    row["similarity"] = dense[row["id"]]["score"]
                row["closest"] = closest
        return [Hit.from_row(r) for r in _row_order(shown)]

    def _erring_rows(self, error_line: str, best: list[str], runs_of: dict[str, str], filters: Filters, per_run: int,
                     erring: dict[str, None], asked: tuple[tuple[str, ...], int],
                     ) -> tuple[dict[str, None], tuple[tuple[str, ...], int]]:
        """The rows of the runs of ``best`` (the shortlist) the lexical leg finds for a pasted traceback's
        ``error_line``, ``per_run`` rows a run deep (the rows it may show: each is fetched, its text read), and
        the runs and depth asked (asked again only when they change).

        Only the shortlist's runs: the line lifts the row a run shows, never a run no leg ranked (asked of
        the whole store a short common line, ``IndentationError: unexpected indent``, pulled every other
        task's run ending in it into the top 5 over a same-task run; probe 49, RU2)."""
        runs = tuple(sorted({runs_of[rid] for rid in best if rid in runs_of}))
        depth = len(runs) * per_run
        if (runs, depth) == asked:
            return erring, asked
        if not runs:
            return {}, (runs, depth)
        inside = replace(filters, trajectory_ids=runs)
        found = self.index.lexical_search(error_line, inside, limit=depth)
        return dict.fromkeys(rid for rid, _ in found), (runs, depth)

    #: What choosing reads of a candidate row: its run (one place per run) and its text (verbatim lift).
    _CHOICE_FIELDS = ["trajectory_id", "text"]

    def _fetch(self, rows: dict[str, dict], ids: Sequence[str], filters: Filters) -> None:
        """The run and text of the rows of ``ids`` not fetched yet, by key, inside ``filters`` (the
        lexical leg's: passages included), into ``rows``; the rows shown are read whole afterwards."""
        missing = [rid for rid in ids if rid not in rows]
        if missing:
            rows.update({r["id"]: r for r in self.index.get(missing, filters, fields=self._CHOICE_FIELDS)})

    def _choose(self, order: list[str], shortlist: int, runs_of: dict[str, str], scores: dict[str, float], k: int,
                group_size: int, filters: Filters) -> list[dict]:
        """The rows to show (id, run and score), walking ``order`` (reading the runs of candidates not
        known yet in chunks, as needed): the first ``k`` rows, or with ``group_size`` the rows of the
        first ``k`` runs, at most ``group_size`` each. Their further rows are looked for among every
        candidate, not the shortlist only: a run's second and third best rows sit deep in the fused
        ranking of a short keyword query (probe 47: `get_reservation_details`, k=5, group_size=3 on
        tau-bench airline showed runs of [2, 1, 1, 1, 1] rows where the candidates held [3, 3, 2, 1, 1])."""
        chosen: list[dict] = []
        groups: dict[str, int] = {}
        start, chunk = 0, max(shortlist, 16)
        while start < len(order):
            part = order[start : start + chunk]
            start, chunk = start + chunk, chunk * 2  # a walk past the shortlist reads runs in a few gets, not dozens
            missing = [rid for rid in part if rid not in runs_of]
            if missing:  # their runs only: the rows shown are read whole afterwards
                runs_of.update((r["id"], r["trajectory_id"])
                               for r in self.index.get(missing, filters, fields=["trajectory_id"]))
            for rid in part:
                tid = runs_of.get(rid)
                if tid is None:
                    continue
                if not group_size:
                    chosen.append({"id": rid, "trajectory_id": tid, "score": scores[rid]})
                    if len(chosen) == k:
                        return chosen
                    continue
                if tid not in groups and len(groups) == k:
                    continue  # k runs already: only their further rows may join
                if groups.get(tid, 0) < group_size:
                    groups[tid] = groups.get(tid, 0) + 1
                    chosen.append({"id": rid, "trajectory_id": tid, "score": scores[rid]})
            if len(groups) == k and all(n == group_size for n in groups.values()):
                return chosen
        return chosen

    def _deeper_legs(self, short: list[str], runs_of: dict[str, str], text: str, full: set[str],
                     lexical_leg: tuple[list[tuple[str, float]], Filters],
                     dense_leg: tuple[dict[str, dict], Filters | None, Any]) -> set[str]:
        """The legs of ``full`` (those that came back as deep as asked) ranking rows of the runs ``short``
        (shown with fewer than ``group_size`` rows) below their pool: a deeper pool would show more of them.

        Each full leg is asked again over those runs alone, one row more than its pool holds of them:
        restricted to them a leg ranks their rows by the same scores, so a row it returns that its pool
        lacks lies deeper (nearly always: a query of more lexical terms than the in-process index scores is
        scored on its most telling terms among the rows it may match, which the restriction can change, so
        such a row may lie in no depth of the pool; the pool then grows for nothing, up to its limit). A run
        with no further row inside the filters (a task-level search: one row per run) is not searched deeper
        for (every pool would grow to the limit for nothing). The lexical
        leg is asked without widening: a long query over a few runs falls short of its telling words
        and would widen to rows the leg's pool never holds, however deep."""
        lexical, lexical_filters = lexical_leg
        dense, dense_filters, vector = dense_leg
        runs, deeper = set(short), set()
        if "lexical" in full:
            have = {rid for rid, _ in lexical}
            held = sum(runs_of.get(rid) in runs for rid in have)
            ranked = self.index.lexical_search(text, replace(lexical_filters, trajectory_ids=tuple(short)),
                                               limit=held + 1, widen=False)
            if any(rid not in have for rid, _ in ranked):
                deeper.add("lexical")
        if "dense" in full and dense_filters is not None:
            held = sum(r["trajectory_id"] in runs for r in dense.values())
            ranked = self.index.search(vector, replace(dense_filters, trajectory_ids=tuple(short)), limit=held + 1,
                                       fields=())
            if any(r["id"] not in dense for r in ranked):
                deeper.add("dense")
        return deeper

    def _dense(self, vector: Any, filters: Filters, k: int, grouped: bool, group_size: int) -> list[dict]:
        # grouped: the index returns the k best runs, each filled to group_size where the rows
        # exist (it completes Milvus' best-effort group_by itself, exact on Milvus Lite)
        return self.index.search(vector, filters, limit=k, group_by_trajectory=grouped, group_size=group_size)

    def expand(self, hit: Hit, *, before: int = 2, after: int = 2, tenant: str | None = None) -> list[StepView]:
        """The steps around a step or failure hit, in order, fetched by key (no scan)."""
        tenant = tenant or hit.tenant
        if tenant != hit.tenant:
            raise PermissionError("a hit can only be expanded inside its own tenant")
        if hit.step_index < 0:
            raise ValueError(f"a {hit.level} hit has no step position to expand around")
        if before < 0 or after < 0 or before + after > 50:
            raise ValueError("before/after must be >= 0 and at most 50 steps together")
        first, last = max(0, hit.step_index - before), hit.step_end + after
        ids = [row_id(tenant, hit.trajectory_id, "step", s) for s in self.window.starts_covering(first, last)]
        by_position: dict[int, dict] = {}
        for row in self.index.get(ids, Filters(tenant=tenant), fields=["step_index", "steps"]):
            for position, step in enumerate(row["steps"] or [], start=row["step_index"]):
                by_position[position] = step
        return [
            StepView(position=p, index=s["index"], action=s["action"], text=s["text"], got_past=s.get("got_past"))
            for p, s in sorted(by_position.items())
            if first <= p <= last
        ]

    def run(self, trajectory_id: str, *, tenant: str, level: str = "task") -> Hit | None:
        """A run's ``task`` (or ``summary`` / ``failure``) row, by key."""
        valid_id(trajectory_id)
        rows = self.index.get([row_id(tenant, trajectory_id, level, -1)], Filters(tenant=tenant))
        return Hit.from_row(rows[0]) if rows else None

    def runs(self, trajectory_ids: Sequence[str], *, tenant: str, level: str = "task",
             vectors: bool = True) -> dict[str, Hit]:
        """The ``level`` row of each of several runs, by key in one lookup (runs without one are left out).

        Their stored vectors are remembered as their texts' embeddings (``query_vector``), so
        comparing the rows by embedding (exemplar diversity) calls no model. ``vectors`` off: the rows
        only (a narrower read), and no stored vector stands in for a later query of the same text.
        """
        ids = [row_id(tenant, valid_id(t), level, -1) for t in dict.fromkeys(trajectory_ids)]
        rows = self.index.get(ids, Filters(tenant=tenant), fields=[*OUTPUT_FIELDS, *(["embedding"] if vectors else [])])
        for row in rows if vectors else ():
            self.query_vector.remember(row["text"], row["embedding"])
        return {row["trajectory_id"]: Hit.from_row(row) for row in rows}

    def outcomes_shown(self, hits: Iterable[Hit], *, tenant: str) -> dict[str, str]:
        """Each hit's run's outcome as a reader is told it (:func:`~trajsearch.model.outcome_shown`), by run: a
        success no one evaluated (a SWE-bench run handed in, no verdict joined) is "submitted, not evaluated", as
        the web pages and the agents' context say, where the row's ``outcome`` (the filter value) says "success".

        From the successful runs' summary rows (:meth:`outcomes_known`); a run's trace is read only where its row
        holds no digest (written before digests existed)."""
        hits = list(hits)
        return outcomes_shown(hits, lambda uri: self.get_trace(uri, tenant=tenant), read_failed=TraceStoreError,
                              store_down=_store_down, known=self.outcomes_known(hits, tenant=tenant))

    def outcomes_known(self, hits: Iterable[Hit], *, tenant: str) -> dict[str, str]:
        """The outcome shown of each hit's run that is known without reading its trace, by run: a run that did not
        succeed is told its row's outcome; a successful one, its summary row's exemplar digest's (one lookup by key
        for them all). A successful run whose row holds no digest is left out. What a server's answers carry
        (``Hit.outcome_shown``), so that a client shows the outcomes without one trace read per run."""
        hits = list(hits)
        known = {h.trajectory_id: h.outcome for h in hits if h.outcome != Outcome.success.value}
        asked = [h.trajectory_id for h in hits if h.outcome == Outcome.success.value]
        rows = self.runs(asked, tenant=tenant, level="summary", vectors=False) if asked else {}
        digests = {run: from_row_steps(row.steps) for run, row in rows.items()}
        known.update((run, digest.outcome) for run, digest in digests.items() if isinstance(digest, ExemplarDigest))
        return known

    def nearest_run_ids(self, text: str, filters: Filters, *, n: int = 3) -> list[str]:
        """The ids of the runs inside ``filters`` that an id typed as ``text`` most likely meant, best first: those
        holding it (a SWE-bench instance id, ``astropy__astropy-12907``, inside its runs' ids; for a text
        :func:`id_shaped` only), then those of its family (:func:`id_family`) at most :data:`NEAR_ID_EDITS` edits
        from it (a digit or two mistyped), fewest edits first.

        One or two queries the store filters by pattern (ids holding it or its siblings', sharing all up to its
        last separator; then, none near, its family's), each of at most :data:`NEAR_ID_READS` ids: it read every
        run id of the tenant and ranked them all with difflib, 20 s a query on a 60k-run tenant (probe 50, REN D1).
        Not found: a typo inside the family's own name (``deepseek_chta_dev.``), or among more ids than that."""
        text = text.strip()
        if not id_shaped(text, min_chars=1):
            return []
        siblings, family = text[:max(text.rfind(c) for c in ID_SEPARATORS) + 1], id_family(text)
        found = self._run_ids_like(filters, NEAR_ID_READS, [siblings], [text] if id_shaped(text) else [])
        if family != siblings and not any(id_edits(text, i) <= NEAR_ID_EDITS for i in found):
            # a typo before its last separator: the family's ids
            found = [*found, *self._run_ids_like(filters, NEAR_ID_READS, [family])]
        return nearest_ids(text, found, n=n)

    def id_family_held(self, text: str, filters: Filters) -> bool:
        """Whether ``text`` reads as an id (:func:`id_shaped`) and some run inside ``filters`` has an id of its
        family (:func:`id_family`): an id typed wrong, worth saying no run has it, where an error name or a path
        (``sqlite3.OperationalError``, ``tests/unittest_python3.py``) is only searched words."""
        return id_shaped(text) and bool(self._run_ids_like(filters, 1, [id_family(text.strip())]))

    def _run_ids_like(self, filters: Filters, limit: int, heads: Sequence[str],
                      held: Sequence[str] = ()) -> list[str]:
        """Up to ``limit`` ids of the runs inside ``filters`` starting with one of ``heads`` or holding one of
        ``held``, in one query (each a scan of the tenant's task rows inside the engine)."""
        likes = [starts_with("trajectory_id", h) for h in heads] + [
            starts_with("trajectory_id", h, anywhere=True) for h in held]
        inside = replace(filters, levels=()).to_expr()  # task rows: one per run (``some`` adds the level)
        rows = self.index.some(["trajectory_id"], f"{inside} and ({' or '.join(likes)})", tenant=filters.tenant,
                               levels=("task",), limit=limit)
        ids = dict.fromkeys(row["trajectory_id"] for row in rows)  # (a like escaped as no engine reads it: matches only)
        return [i for i in ids if any(i.startswith(h) for h in heads) or any(h in i for h in held)]

    def lexical_runs(self, text: str, filters: Filters, *, k: int) -> list[str]:
        """The runs of the ``k`` rows inside ``filters`` that BM25 alone ranks best for ``text``,
        best first: ids only (a narrow lookup by key), where a lexical :meth:`search` fetches
        each candidate row whole."""
        _check_query(text, k, 1)
        filters = self._lexical_filters(filters)  # step rows bring their passages, as in search
        ranked = [rid for rid, _ in self.index.lexical_search(text, filters, limit=k)]
        runs = {row["id"]: row["trajectory_id"] for row in self.index.get(ranked, filters, fields=["trajectory_id"])}
        return list(dict.fromkeys(runs[rid] for rid in ranked if rid in runs))

    def score_runs(self, text: str, trajectory_ids: Sequence[str], filters: Filters) -> list[Hit]:
        """The rows of these runs at ``filters.levels`` (task, summary, failure: one row per run
        each) inside ``filters``, scored by cosine to ``text``, best first.

        By key and stored vector: what a dense search restricted to these runs returns, without
        its scan of every row of the levels.
        """
        if not filters.levels or any(level not in RUN_LEVELS for level in filters.levels):
            raise ValueError(f"score_runs reads one row per run and level: task, summary or failure, "
                             f"not {filters.levels or 'every level'}")
        ids = [row_id(filters.tenant, valid_id(t), level, -1)
               for t in dict.fromkeys(trajectory_ids) for level in filters.levels]
        rows = self.index.get(ids, filters, fields=[*OUTPUT_FIELDS, "embedding"])
        if not rows:
            return []
        query = self.query_vector(text)
        scores = np.asarray([row.pop("embedding") for row in rows], dtype=np.float32) @ query
        hits = [Hit.from_row(dict(row, score=float(s), similarity=float(s))) for row, s in zip(rows, scores)]
        return _in_score_order(hits, lambda h: h.score, lambda h: (h.trajectory_id,))

    def similar_runs(
        self,
        trajectory_id: str | None = None,
        text: str | None = None,
        *,
        tenant: str,
        k: int = 5,
        outcome: str | Sequence[str] = (),
        env_version: str | Sequence[str] = (),
        policy_version: str | Sequence[str] = (),
        created_after: int | None = None,
        mode: str = "hybrid",
    ) -> list[RunMatch]:
        """Runs like this one (by id: its failure, else its task; see :func:`_anchor`) or like ``text``; one per run.

        Hybrid by default: a broken run is best matched on its exact error strings *and* its situation.
        ``policy_version`` as ``env_version``: the service passes a key's pinned policy versions here, as it does
        to every other read. ``created_after`` as :meth:`search`'s.
        """
        if (trajectory_id is None) == (text is None):
            raise ValueError("give exactly one of trajectory_id or text")
        exclude: tuple[str, ...] = ()
        if trajectory_id is not None:
            text = self.anchor_text(trajectory_id, tenant=tenant)
            if text is None:
                raise LookupError(f"no trajectory {trajectory_id!r} in tenant {tenant!r}")
            exclude = (trajectory_id,)
        filters = Filters(
            tenant=tenant,
            levels=("step", "failure"),
            outcomes=outcome,
            env_versions=env_version,
            policy_versions=policy_version,
            exclude_trajectory_ids=exclude,
            created_after=created_after,
        )
        hits = self.search_filtered(text, filters, k=k, group_by_trajectory=True, group_size=1, mode=mode)
        tasks = {
            row["trajectory_id"]: row["text"]
            for row in self.index.get(
                [row_id(tenant, h.trajectory_id, "task", -1) for h in hits],
                Filters(tenant=tenant),
                fields=["trajectory_id", "text"],
            )
        }
        return [
            RunMatch(h.trajectory_id, h.score, h.outcome, tasks.get(h.trajectory_id, ""), h.trace_uri, h)
            for h in hits
        ]

    def anchor_text(self, trajectory_id: str, *, tenant: str) -> str | None:
        """The text runs like ``trajectory_id`` are matched on (:func:`_anchor`: its failure, else its task), its
        stored vector remembered as that text's embedding; None when the tenant has no such run. The one choice of
        :meth:`similar_runs` and the web page's "runs like this one" (which anchored on the failure row even when it
        was only an evaluation's verdict, matching other repositories' failures)."""
        valid_id(trajectory_id)
        rows = self.index.get([row_id(tenant, trajectory_id, level, -1) for level in ("failure", "task")],
                              Filters(tenant=tenant), fields=["level", "text", "embedding"])
        if not rows:
            return None
        text, vector = _anchor({row["level"]: row for row in rows})
        self.query_vector.remember(text, vector)  # a stored vector: no re-embedding
        return text

    def get_trace(self, trace_uri: str, *, tenant: str) -> Trajectory:
        """The full stored trajectory; refuses URIs outside the store or of another tenant."""
        return self.traces.get(trace_uri, tenant=tenant)

    def stats(self, *, tenant: str, env_version: str | Sequence[str] | None = None,
              policy_version: str | Sequence[str] | None = None) -> dict[str, Any]:
        """Row and run counts of ``tenant``; with versions, of the runs of those versions only."""
        versions = dict(env_versions=as_tuple(env_version), policy_versions=as_tuple(policy_version))
        levels = self.index.count_by("level", tenant, levels=LEVELS, **versions)  # passages too: ingest counts them
        return {
            "tenant": tenant,
            "uri": self.index.uri,
            "embedder": self.index.settings.embedder,
            "lexical": self.index.lexical_backend,  # memory: in-process BM25 (Milvus Lite); milvus: native BM25
            "window": {"size": self.window.size, "stride": self.window.stride},
            "trajectories": levels.get("task", 0),
            "rows": sum(levels.values()),
            "rows_by_level": levels,
            "runs_by_outcome": self.index.count_by("outcome", tenant, levels=("task",), **versions),
        }


#: Scores this close are one score: two rows of the same words (runs that failed alike) differ by float noise
#: (0.4902018 and 0.4902017 for two identical failure rows), which a fresh install of the same libraries flipped.
SCORE_TIE = 1e-6
T = TypeVar("T")


def _in_score_order(rows: Iterable[T], score: Callable[[T], float], name: Callable[[T], tuple]) -> list[T]:
    """``rows`` best first; each tie (:func:`_ties`) ordered by ``name`` (run id, step), so which of two alike rows is
    shown hangs neither on float noise nor on the order Milvus returned them in. (Rounding to a number of places
    would split two such scores that straddle a rounding edge: review RALL-B.)"""
    return [row for tie in _ties(rows, score) for row in sorted(tie, key=name)]


def _ties(rows: Iterable[T], score: Callable[[T], float]) -> list[list[T]]:
    """``rows`` best first, in ties: a run of rows whose scores each lie within :data:`SCORE_TIE` of the one before
    is one tie, however far its first and last lie apart."""
    ties: list[list[T]] = []
    for row in sorted(rows, key=lambda r: -score(r)):
        if ties and score(ties[-1][-1]) - score(row) <= SCORE_TIE:
            ties[-1].append(row)
        else:
            ties.append([row])
    return ties


def in_score_order(scores: Sequence[float]) -> bool:
    """Whether scores, in the order shown, are in the order search lists rows: best first, each tie (:func:`_ties`)
    together, in any order within it. What an evaluation checks every output against (issue 11: rows in score order
    in every output), by search's own rule: comparing each score with the one before (``b > a + SCORE_TIE``) counted
    a tie of three or more as disorder wherever its name order put its ends side by side (review RR11D)."""
    shown = list(scores)
    start = 0
    for tie in _ties(shown, float):
        if sorted(shown[start:start + len(tie)]) != sorted(tie):
            return False
        start += len(tie)
    return True


def _row_order(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Search rows in :func:`_in_score_order`."""
    return _in_score_order(rows, lambda r: r["score"], lambda r: (r["trajectory_id"], r.get("step_index", -1), r["id"]))


def _anchor(rows: dict[str, dict[str, Any]]) -> tuple[str, Any]:
    """The text and stored vector a run is matched on, from its ``failure`` and ``task`` rows (by level): its failure;
    its task when it has none, or when the failure's error is only a verdict worded alike for every failed run of an
    evaluation (``BARE_DETAILS``: "not resolved (in the report's unresolved_ids)"), with the lines of the failure row
    that are the run's own (the step it ended on, what failed, a fix) for the lexical leg. Probe E2, E2-A: anchored on
    that sentence, 174 of the 185 runs like 37 failed SWE-bench runs were other failures, 63 of another repository."""
    failure, task = rows.get("failure"), rows.get("task")
    if task is None or failure is not None and not verdict_only(failure["text"]):
        anchor = failure or task
        return anchor["text"], anchor["embedding"]
    own = row_own_lines(failure["text"]) if failure is not None else ""
    return (f"{task['text']}\n{own}" if own else task["text"]), task["embedding"]


#: Why a dense search of passages alone is refused: they have no vector of their own (see ``_dense_filters``).
PASSAGES_NOT_DENSE = "passages are searched by their words only: use mode lexical, hybrid or auto for them"


#: Longest query ``auto`` mode looks up as a line rows may hold verbatim (``TrajSearch._held_line``): an error
#: message is a line of a few words; a task written as prose (tau-bench instructions, issues) is longer.
HELD_LINE_WORDS = 32


#: Most edits (characters typed wrong, missing or extra) between an id typed that no run has and a run's id
#: offered for it: a digit or two mistyped, not another task of the same repository.
NEAR_ID_EDITS = 2
#: Most ids of one head (its siblings', then its family's) :meth:`TrajSearch.nearest_run_ids` reads to find the
#: near ones: one query each.
NEAR_ID_READS = 5_000
#: What :func:`id_shaped` takes for a separator inside a run's id.
ID_SEPARATORS = "._:/-"
#: Shortest text :func:`id_shaped` takes for a run id.
ID_SHAPED_CHARS = 16


def _store_down(exc: Exception) -> bool:
    """Whether a trace read failed for the trace store as a whole, slow or unreachable (each read after it would
    wait alike), not for its one trace: gone (``LookupError``), refused or damaged (``ValueError``), or refused at
    once as set up (:class:`TraceStoreSetupError`: a file of another user's written with a private umask, an
    object S3 answers AccessDenied where listing is not allowed), which no read waits on."""
    return isinstance(exc, TraceStoreError) and not isinstance(exc, (LookupError, ValueError, TraceStoreSetupError))


def id_shaped(text: str, *, min_chars: int = ID_SHAPED_CHARS) -> bool:
    """Whether ``text`` reads as a run's id rather than a word: one id (``model.valid_id``) of at least
    ``min_chars`` characters holding a digit and a separator, as every id of the shared dumps does
    (``deepseek_chat_dev.pylint-dev__astroid-1268``, ``ls:dc34609e-3eeb-…``), and error words seldom
    (``ModuleNotFoundError``; ``exit_code_137`` is under the default length). ``min_chars=1``: may be a short id
    (``run-42``), worth looking up, not worth a note when nothing is near it."""
    text = text.strip()
    try:
        valid_id(text)
    except ValueError:
        return False
    return len(text) >= min_chars and any(c.isdigit() for c in text) and any(c in ID_SEPARATORS for c in text)


def id_family(text: str) -> str:
    """The head an id shares with its runs' siblings: up to its first separator (``deepseek_chat_dev.``,
    ``swebench-``, ``ls:``), or its first three characters when it has none."""
    cut = next((at for at, c in enumerate(text) if c in ID_SEPARATORS), None)
    return text[:cut + 1] if cut is not None else text[:3]


def nearest_ids(text: str, ids: Iterable[str], *, n: int = 3) -> list[str]:
    """Of the run ids ``ids``, the ``n`` an id typed as ``text`` most likely meant, best first: those holding it (a
    SWE-bench instance id inside its runs' ids), then those at most :data:`NEAR_ID_EDITS` edits from it, fewest
    first: the ranking of :meth:`TrajSearch.nearest_run_ids` (the service's NOT_FOUND answers say it too)."""
    text = text.strip()
    folded, ids = text.casefold(), list(dict.fromkeys(ids))
    holding = sorted(i for i in ids if folded in i.casefold())[:n]
    near = sorted((edits, i) for i in ids if (edits := id_edits(text, i)) <= NEAR_ID_EDITS)
    return list(dict.fromkeys([*holding, *(i for _, i in near)]))[:n]


def said_meant(nearest: Sequence[str]) -> str:
    """How the ids an id typed most likely meant are said after an error or a note that no run has it (the CLI's,
    the service's NOT_FOUND answer): ``"; did you mean 'a' or 'b'?"``, or "" when none is near."""
    return f"; did you mean {' or '.join(repr(i) for i in nearest)}?" if nearest else ""


def meant_in(message: str) -> list[str]:
    """The ids a message names as meant (:func:`said_meant`), read back: a client of the service is told them in a
    NOT_FOUND answer's words, the service's answers having no field for them. An id holds no quote
    (``model.ID_PATTERN``), so each is the text between a pair."""
    _, said, meant = message.rpartition("; did you mean ")
    if not said or not meant.endswith("?"):
        return []
    ids = [one[1:-1] for one in meant[:-1].split(" or ") if len(one) > 2 and one[0] == one[-1] == "'"]
    return [i for i in ids if passes(valid_id, i)]


def id_edits(typed: str, run_id: str) -> int:
    """Edits between two ids (Levenshtein), counted on what follows their shared head and precedes their shared
    tail; more than :data:`NEAR_ID_EDITS` is said as ``NEAR_ID_EDITS + 1`` (ids of any length stay cheap)."""
    over = NEAR_ID_EDITS + 1
    if abs(len(typed) - len(run_id)) >= over:
        return over
    head = next((at for at, (a, b) in enumerate(zip(typed, run_id)) if a != b), min(len(typed), len(run_id)))
    a, b = typed[head:], run_id[head:]
    while a and b and a[-1] == b[-1]:
        a, b = a[:-1], b[:-1]
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        if min(current) >= over:
            return over
        previous = current
    return min(previous[-1], over)


def _check_query(text: str, k: int, group_size: int) -> None:
    """Refuse what no search answers: a text that is none, too long, holding nothing a reader sees (:func:`blank`,
    the rule every interface shares) or not Unicode, and a count out of bounds."""
    if not isinstance(text, str):
        raise ValueError(f"query text must be a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise ValueError(f"query text too long ({len(text)} > {MAX_QUERY_CHARS} chars)")
    if blank(text):
        raise ValueError(f"query text: {BLANK_TEXT}")
    try:  # a lone surrogate (JSON's "\ud800" decodes) reached the tokenizer, whose TypeError named nothing passed
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"query text is not valid Unicode: a lone surrogate at position {exc.start}") from None
    check_count("k", k, MAX_K)
    check_count("group_size", group_size, MAX_GROUP_SIZE)



def in_their_runs_place(scores: dict[str, float], rows: Collection[str],
                        runs_of: Mapping[str, str]) -> dict[str, float]:
    """``scores`` with each row of ``rows`` (those holding a pasted traceback's error line) scored as its run's
    best candidate, ties going to it: the run shows that row where it ranked, and no run moves or joins.

    Lifted above every other row they pulled runs no leg ranked near the paste into the top k: a short common
    line (``IndentationError: unexpected indent``) is the last line of many tasks' runs (probe 49, RU2)."""
    best: dict[str, float] = {}
    for rid, score in scores.items():
        tid = runs_of.get(rid)
        if tid is not None and score > best.get(tid, float("-inf")):
            best[tid] = score
    placed = dict(scores)
    for rid in rows:
        tid = runs_of.get(rid)
        if tid in best:
            placed[rid] = max(placed.get(rid, best[tid]), best[tid])
    return placed


__all__ = ["Hit", "RunMatch", "StepView", "TrajSearch", "in_score_order"]

