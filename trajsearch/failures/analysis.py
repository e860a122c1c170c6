"""The analysis: failure rows inside the filters -> modes, counted, trended, with examples.

:func:`failure_modes` reads the rows (:mod:`.rows`), templates and embeds their
errors' meanings (:mod:`.templates`, :mod:`.vectors`), clusters them
(:mod:`.clustering`), and builds one :class:`~.report.FailureMode` per group with
its label (:mod:`.labels`), trend (:mod:`.periods`) and the models and tools of a
sample of its runs (:mod:`.traces`).

Cost at 100k failure rows (``scripts/failure_modes.py --synthetic 100000``, since=7d
over 14 days of rows, 2,300 distinct meanings): median 43.5 s over 5 runs (36.5-61.2 s)
on this 2-core machine at load average 6-7 from other jobs; 27.9 s when the process
has embedded the meanings before. Reading the rows dominates (Milvus Lite scans the
collection once per 16k-row page: ~12 s of CPU, twice that under load); the
distinct meanings are embedded on a thread while the rows are still being read,
and a process that asks again embeds only what is new (:data:`.vectors._CACHE`). Reading
5 row fields instead of 9, caching templates on digit-masked errors and capping
the embedded meanings at 1,000 are what keep it under a minute under that load
(the first version took a median 83 s at load average 10).
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from datetime import datetime, timedelta
from typing import Any, Sequence

from ..bounds import MAX_EXAMPLES, MAX_MODES, check_count, out_of_bounds
from ..store.filters import Filters
from ..vocab import FAILED_OUTCOMES
from . import vectors as meaning_vectors
from .clustering import ModeConfig, cluster
from .labels import known_cause, label_for
from .periods import _trend, parse_duration, parse_time
from .report import FailureExample, FailureMode, FailureReport, ranked
from .rows import _Failure, _read
from .templates import unstyled
from .traces import _runs
from .vectors import _embedder_name, _Prefetch


def failure_modes(
    ts: Any,
    *,
    tenant: str,
    since: str | int | timedelta | None = None,
    until: str | int | datetime | None = None,
    env_version: str | Sequence[str] = (),
    policy_version: str | Sequence[str] = (),
    model: str | Sequence[str] = (),
    tools: str | Sequence[str] = (),
    outcome: str | Sequence[str] = (),
    limit: int | None = 20,
    examples: int = 3,
    config: ModeConfig = ModeConfig(),
) -> FailureReport:
    """The failure modes of ``tenant``'s failed runs inside the filters, most frequent first.

    ``since`` (``7d``, ``24h``...) limits the analysis to that period before ``until``
    (default now) and compares each mode with the period of the same length before it
    (``previous``, ``trend``); without it every failure counts and there is no trend.
    ``model`` keeps runs of those model ids: index rows carry none, so every failure in
    scope has its trace read (at most ``config.max_model_traces``). ``limit`` modes are
    returned (at most ``MAX_MODES``; None: all); the rest are counted in ``other_modes`` / ``other_failures``.
    Uses only the façade's public verbs: ``rows``, ``embed`` and ``get_trace``.
    """
    started = time.perf_counter()
    if limit is not None:
        check_count("limit", limit, MAX_MODES, " (or None)")
    if said := out_of_bounds(examples, 0, MAX_EXAMPLES):
        raise ValueError(f"examples {said}")
    outcomes = _strings(outcome) or FAILED_OUTCOMES
    bad = set(outcomes) - set(FAILED_OUTCOMES)
    if bad:
        raise ValueError(f"outcome: failure rows exist for {' and '.join(FAILED_OUTCOMES)} runs only, "
                         f"got {sorted(bad)}")
    end = parse_time(until) or int(time.time())
    length = parse_duration(since) if since is not None else None
    start = end - length if length else None
    filters = Filters(
        tenant=tenant, levels=("failure",), outcomes=outcomes, env_versions=_strings(env_version),
        policy_versions=_strings(policy_version), tools=_strings(tools),
        created_after=max(0, start - length) if start is not None and length else None,
    )
    prefetch = _Prefetch(ts, config.max_embed)
    try:
        failures, meaning = _read(ts, filters, start, end, prefetch)
    finally:
        prefetch.close()
    runs: dict[str, tuple[str, tuple[str, ...]] | None] = {}  # every run's, when a model filter needed them
    wanted_models = _strings(model)
    if wanted_models:
        if len(failures) > config.max_model_traces:
            raise ValueError(
                f"model: {len(failures)} failures in scope and rows carry no model id, so each needs its trace "
                f"read (at most {config.max_model_traces}): narrow with since / env_version first"
            )
        runs = _runs(ts, tenant, failures, config)
        failures = [f for f in failures if (runs.get(f.trace_uri) or ("",))[0] in wanted_models]
    current = [f for f in failures if f.current]
    report = FailureReport(tenant=tenant, since=start, until=end, total=len(current),
                           previous_total=len(failures) - len(current) if start is not None else None)
    if not current:
        report.seconds = time.perf_counter() - started
        return report

    # distinct meanings, most frequent first; rows of one template always share a mode, and so do the
    # rows of one well-known cause (labels.known_cause): only the other meanings are clustered
    cause_of_text = {meaning[t]: c for t in meaning if (c := known_cause(t))}
    weight: Counter[str] = Counter()
    for f in failures:
        weight[meaning[f.template]] += 1
    texts = [text for text, _ in weight.most_common()]
    embedded, rest = texts[: config.max_embed], texts[config.max_embed:]
    import numpy as np

    # looked up at call time: a benchmark swaps in an empty cache (scripts/failure_modes.py)
    vectors = meaning_vectors._CACHE.vectors(ts.embed, _embedder_name(ts), embedded)
    vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    free = [n for n, text in enumerate(embedded) if text not in cause_of_text]
    labels = cluster(vectors[free], config.threshold, config.max_cluster)
    mode_of_text: dict[str, tuple[str, object]] = {embedded[n]: ("meaning", label)
                                                   for n, label in zip(free, labels.tolist())}
    mode_of_text.update({text: ("rare", text) for text in rest})  # too rare to embed: their own
    mode_of_text.update({text: ("cause", name) for text, name in cause_of_text.items()})
    report.rare = sum(1 for f in current if mode_of_text[meaning[f.template]][0] == "rare")
    vector_of_text = dict(zip(embedded, vectors))

    members: dict[tuple[str, object], list[_Failure]] = {}
    for f in failures:
        members.setdefault(mode_of_text[meaning[f.template]], []).append(f)
    ranked = sorted(
        (m for m in members.values() if any(f.current for f in m)),
        key=lambda m: (-sum(f.current for f in m), min(f.template for f in m)),
    )
    shown = ranked if limit is None else ranked[:limit]
    report.other_modes = len(ranked) - len(shown)
    report.other_failures = sum(sum(f.current for f in m) for m in ranked[len(shown):])
    report.templates = len({f.template for f in current})
    for group in shown:
        report.modes.append(_mode(ts, tenant, group, report, start is not None, meaning, vector_of_text,
                                  runs, examples, config))
    report.seconds = time.perf_counter() - started
    return report


def _strings(value: str | Sequence[str] | None) -> tuple[str, ...]:
    if not value:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _mode(ts: Any, tenant: str, group: list[_Failure], report: FailureReport, periods: bool,
          meaning: dict[str, str], vector_of_text: dict[str, Any],
          runs: dict[str, tuple[str, tuple[str, ...]] | None], examples: int, config: ModeConfig) -> FailureMode:
    import numpy as np

    now = [f for f in group if f.current]
    templates = Counter(f.template for f in now)
    top = templates.most_common(1)[0][0]
    # representativeness: the cosine of a template's meaning to the mode's centroid (weighted by count)
    weights = Counter(meaning[f.template] for f in now)
    if all(t in vector_of_text for t in weights):
        centroid = sum(vector_of_text[t] * n for t, n in weights.items())
        centroid = centroid / max(float(np.linalg.norm(centroid)), 1e-12)
        closeness = {t: float(vector_of_text[meaning[t]] @ centroid) for t in templates}
    else:  # a meaning too rare to embed is a mode of its own
        closeness = dict.fromkeys(templates, 1.0)
    mode = FailureMode(
        mode_id=hashlib.blake2b(top.encode(), digest_size=6).hexdigest(),
        label=label_for(top),
        count=len(now),
        share=len(now) / report.total,
        env_versions=ranked(Counter(f.env_version or "(none)" for f in now)),
        failing_tools=ranked(Counter(f.failing_tool for f in now if f.failing_tool)),
        templates=[{"template": t, "count": n} for t, n in templates.most_common()],
    )
    if periods:
        mode.previous = len(group) - len(now)
        mode.trend, mode.change = _trend(mode.count, mode.previous, config.flat_band)
    # examples: the most representative template first, its latest run; then the next templates
    order = sorted(templates, key=lambda t: (-closeness[t], -templates[t], t))
    by_template: dict[str, list[_Failure]] = {t: [] for t in order}
    for f in now:
        by_template[f.template].append(f)
    for members in by_template.values():
        members.sort(key=lambda f: (-f.created_at, f.trajectory_id))
    picked: list[_Failure] = []
    depth = 0
    while len(picked) < min(examples, len(now)):
        for t in order:
            if depth < len(by_template[t]) and len(picked) < examples:
                picked.append(by_template[t][depth])
        depth += 1
    chosen = {id(f): f for f in [*picked, *_spread(now, config.model_sample)]}
    sample = list(chosen.values())[: max(config.model_sample, len(picked))]
    read = now if runs else sample  # with a model filter every run's trace has been read already
    known = runs or _runs(ts, tenant, sample, config)
    infos = [known.get(f.trace_uri) for f in read]
    mode.models_sampled = len(read)
    mode.models = ranked(Counter((info[0] if info else "") or "(unknown)" for info in infos))
    mode.tools = ranked(Counter(tool for info in infos if info for tool in info[1]))
    mode.examples = [
        FailureExample(
            trajectory_id=f.trajectory_id, trace_uri=f.trace_uri, error=unstyled(f.error), task=f.task,
            env_version=f.env_version, model=(known.get(f.trace_uri) or ("",))[0], created_at=f.created_at,
            similarity=round(closeness[f.template], 4),
        )
        for f in picked
    ]
    return mode


def _spread(items: list[_Failure], n: int) -> list[_Failure]:
    if n <= 0:
        return []
    if len(items) <= n:
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]
