"""Failure modes on the real dumps, the clustering choice, and the 100k-row benchmark.

    python scripts/failure_modes.py                     # ../shared/data: ingest (real model), print the modes
    python scripts/failure_modes.py --store /tmp/fm     # the same, keeping the store for the next run
    python scripts/failure_modes.py --eval              # clustering methods compared: purity, run time
    python scripts/failure_modes.py --synthetic 100000  # benchmark: 100k failure rows, median of --repeat runs

Default: the mini-swe-agent-dev and tau-bench runs are ingested into a temporary store
with all-MiniLM-L6-v2, ``trajsearch.failures.failure_modes`` runs over every failure,
and the modes are printed with two examples each, then their purity against the exact
normalised error templates (each mode's share of its most common template) and how
many templates were merged into shared causes.

``--eval`` compares clustering methods on the meaning vectors of the templates of the
labelled corpus (``scripts/failure_corpus.py``: purity and inverse purity against known
causes) and of the real dumps (purity against templates), with run times on the corpus
and on the distinct templates of the synthetic benchmark.

``--synthetic N`` builds a store of N failure rows (synthetic runs over the corpus' causes
with a Zipf-like spread, 2% one-off errors, four env versions, three models, created over
the last 14 days; row vectors are random, the analysis does not read them; a trace per
run) and times ``failure_modes(since="7d")`` over all of them (7 days current, 7
previous), with the template-vector cache emptied before each run.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

from _common import Stopwatch, machine_note, open_store, read_real_runs, table  # noqa: I001 (sets HF offline first)
from failure_corpus import CAUSES, labelled_errors, make_error, noise_error

TENANT = "real"


def purity(labels: list, truth: list) -> float:
    """Each cluster's share of its most common true class, over all items."""
    by: dict = defaultdict(Counter)
    for label, true in zip(labels, truth):
        by[label][true] += 1
    return sum(c.most_common(1)[0][1] for c in by.values()) / max(len(truth), 1)


# -- the real dumps ----------------------------------------------------------------------


def real(args: argparse.Namespace) -> None:
    from trajsearch.embed import load_embedder
    from trajsearch.failures import failure_modes

    directory, temporary = _store_dir(args.store)
    try:
        embedder = load_embedder("all-MiniLM-L6-v2")
        with open_store(directory, embedder) as ts:
            if ts.index.count(TENANT) == 0:
                runs = read_real_runs(tenant=TENANT)
                print(f"ingesting {len(runs.runs)} runs ({len(runs.tau)} tau-bench, {len(runs.swe)} mini-swe-agent) "
                      f"into {directory} with {embedder.name} ...", file=sys.stderr)
                with Stopwatch() as sw:
                    report = ts.add(runs.runs)
                    ts.index.flush()
                print(f"ingested {report.ingested} runs, {report.rows} rows in {sw.seconds:.0f} s", file=sys.stderr)
            result = failure_modes(ts, tenant=TENANT, limit=None)
        show_report(result)
        quality(result)
    finally:
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)


def show_report(result) -> None:
    print(f"\n{result.total} failures, {result.templates} distinct error templates, {len(result.modes)} modes "
          f"({result.seconds:.2f} s)\n")
    for n, mode in enumerate(result.modes, 1):
        print(f"{n}. {mode.label}: {mode.count} failures ({mode.share:.1%}), {len(mode.templates)} template(s)")
        print(f"   env_versions {dict(mode.env_versions)}  models {dict(mode.models)} and tools {dict(mode.tools)} "
              f"(of {mode.models_sampled} traces read)  failing step {dict(mode.failing_tools)}")
        for example in mode.examples[:2]:
            print(f"   - {example.trajectory_id} (similarity {example.similarity:.2f}): {_one_line(example.error, 150)}")


def quality(result) -> None:
    labels, truth = [], []
    for n, mode in enumerate(result.modes):
        for item in mode.templates:
            labels += [n] * item["count"]
            truth += [item["template"]] * item["count"]
    merged = sum(len(m.templates) - 1 for m in result.modes)
    print(f"\npurity against exact normalised templates: {purity(labels, truth):.3f} "
          f"({len(labels)} failures, {len(set(truth))} templates, {len(result.modes)} modes; "
          f"{merged} template(s) merged into a shared cause)")
    for mode in result.modes:
        if len(mode.templates) > 1:
            print(f"   {mode.label}:")
            for item in mode.templates:
                print(f"      {item['count']:3d}  {_one_line(item['template'], 140)}")


# -- method comparison -------------------------------------------------------------------


def evaluate(args: argparse.Namespace) -> None:
    import numpy as np
    from sklearn.cluster import HDBSCAN, AgglomerativeClustering, Birch

    from trajsearch.embed import load_embedder
    from trajsearch.failures import error_template, meaning_text, row_error

    embedder = load_embedder("all-MiniLM-L6-v2")
    methods = [
        *[(f"agglomerative average, t={t}", lambda t=t: AgglomerativeClustering(
            n_clusters=None, distance_threshold=t, metric="cosine", linkage="average")) for t in (0.3, 0.35, 0.4, 0.45)],
        *[(f"agglomerative complete, t={t}", lambda t=t: AgglomerativeClustering(
            n_clusters=None, distance_threshold=t, metric="cosine", linkage="complete")) for t in (0.5, 0.6)],
        *[(f"agglomerative single, t={t}", lambda t=t: AgglomerativeClustering(
            n_clusters=None, distance_threshold=t, metric="cosine", linkage="single")) for t in (0.2, 0.25)],
        *[(f"HDBSCAN min_cluster_size={m}", lambda m=m: HDBSCAN(min_cluster_size=m, metric="cosine"))
          for m in (2, 3)],
        ("Birch threshold=0.6 (euclidean)", lambda: Birch(threshold=0.6, n_clusters=None)),
    ]

    def fit(make, vectors):
        if len(vectors) < 2:
            return np.zeros(len(vectors), dtype=int)
        labels = np.array(make().fit_predict(vectors))
        noise = labels < 0  # HDBSCAN: noise points are modes of their own
        labels[noise] = labels.max() + 1 + np.arange(noise.sum())
        return labels

    def vectors_of(templates):
        return embedder.encode([meaning_text(t) for t in templates])

    # labelled corpus: raw error -> template -> meaning vector; truth = cause
    pairs = labelled_errors(per_cause=30)
    corpus_templates = [error_template(e) for e, _ in pairs]
    corpus_unique = list(dict.fromkeys(corpus_templates))
    corpus_vectors = vectors_of(corpus_unique)
    corpus_index = {t: i for i, t in enumerate(corpus_unique)}
    causes = [c for _, c in pairs]
    # real dumps: failure rows' errors -> templates; truth = template
    runs = read_real_runs(tenant=TENANT)
    from trajsearch.represent import failure_text

    real_templates, failure_rows = [], []
    for run in runs.runs:
        if run.outcome.value in ("failure", "infra_error"):
            failure_rows.append(failure_text(run)[0])
            real_templates.append(error_template(row_error(failure_rows[-1])))
    real_unique = list(dict.fromkeys(real_templates))
    real_vectors = vectors_of(real_unique)
    real_index = {t: i for i, t in enumerate(real_unique)}
    # scale: the distinct templates of a synthetic 100k-row run
    rng = random.Random(11)
    weights = _zipf(len(CAUSES))
    names = list(CAUSES)
    scale_templates = list(dict.fromkeys(
        error_template(make_error(rng.choices(names, weights)[0], rng)[0] if rng.random() > 0.02 else noise_error(rng))
        for _ in range(100_000)))
    scale_vectors = vectors_of(scale_templates)
    print(f"corpus: {len(pairs)} errors, {len(set(causes))} causes, {len(corpus_unique)} templates; real: "
          f"{len(real_templates)} failures, {len(real_unique)} templates; scale: {len(scale_templates)} templates\n")
    rows = []
    for name, make in methods:
        with Stopwatch() as sw:
            labels = fit(make, corpus_vectors)
        corpus_ms = sw.seconds * 1000
        by_error = [labels[corpus_index[t]] for t in corpus_templates]
        real_labels = fit(make, real_vectors)
        by_failure = [real_labels[real_index[t]] for t in real_templates]
        with Stopwatch() as sw:
            fit(make, scale_vectors)
        rows.append([name, len(set(labels)), purity(by_error, causes), purity(causes, by_error), corpus_ms,
                     len(set(real_labels)), purity(by_failure, real_templates), sw.seconds])
    print(table(["method (on meaning vectors)", "corpus modes", "purity", "inverse purity", "ms",
                 "real modes", "real template purity", f"{len(scale_templates)} templates: s"], rows))
    # the chosen method on other vectors, for contrast: the raw template text, and the failure rows' own
    # vectors (the embedding of the row text: task + error + cause + failing step), averaged per template
    chosen = methods[2][1]
    raw_vectors = embedder.encode(corpus_unique)
    labels = fit(chosen, raw_vectors)
    by_error = [labels[corpus_index[t]] for t in corpus_templates]
    real_raw = fit(chosen, embedder.encode(real_unique))
    print(f"\nagglomerative average, t=0.4 on raw template text: corpus purity {purity(by_error, causes):.3f}, "
          f"inverse {purity(causes, by_error):.3f}, {len(set(labels))} modes; real template purity "
          f"{purity([real_raw[real_index[t]] for t in real_templates], real_templates):.3f}, "
          f"{len(set(real_raw))} modes")
    row_vectors = embedder.encode(failure_rows)
    means = np.zeros((len(real_unique), row_vectors.shape[1]), dtype=np.float32)
    for template, vector in zip(real_templates, row_vectors):
        means[real_index[template]] += vector
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    for t in (0.2, 0.4):
        labels = fit(lambda t=t: AgglomerativeClustering(n_clusters=None, distance_threshold=t, metric="cosine",
                                                         linkage="average"), means)
        print(f"agglomerative average, t={t} on the failure rows' own vectors (mean per template): real template "
              f"purity {purity([labels[real_index[x]] for x in real_templates], real_templates):.3f}, "
              f"{len(set(labels))} modes")


def _zipf(n: int, s: float = 1.1) -> list[float]:
    return [1.0 / (rank ** s) for rank in range(1, n + 1)]


# -- benchmark ---------------------------------------------------------------------------


def synthetic(args: argparse.Namespace) -> None:
    from trajsearch import failures
    from trajsearch.embed import load_embedder
    from trajsearch.failures import traces, vectors

    directory, temporary = _store_dir(args.store)
    try:
        embedder = load_embedder("all-MiniLM-L6-v2")
        with open_store(directory, embedder) as ts:
            present = ts.index.count("bench")
            if present < args.synthetic:
                with Stopwatch() as sw:
                    build(ts, args.synthetic, seed=args.seed)
                print(f"built {args.synthetic} failure rows in {sw.seconds:.0f} s", file=sys.stderr)
            end = _END
            seconds, results = [], []
            for attempt in range(args.repeat):
                vectors._CACHE = vectors._VectorCache()
                traces._RUN_CACHE.clear()
                with Stopwatch() as sw:
                    result = failures.failure_modes(ts, tenant="bench", since="7d", until=end)
                seconds.append(sw.seconds)
                results.append(result)
                print(f"run {attempt + 1}: {sw.seconds:.1f} s", file=sys.stderr)
            with Stopwatch() as warm:
                failures.failure_modes(ts, tenant="bench", since="7d", until=end)
        result = results[-1]
        print(f"\n{result.total + (result.previous_total or 0)} failure rows read ({result.total} in the last 7 days, "
              f"{result.previous_total} the 7 before), {result.templates} templates this period, "
              f"{len(result.modes) + result.other_modes} modes; {result.rare} failures ({result.rare / result.total:.1%}) "
              f"of meanings too rare to embed, grouped by template only")
        print(f"analysis, template vectors not cached: median {statistics.median(seconds):.1f} s "
              f"(runs: {', '.join(f'{s:.1f}' for s in seconds)}); cached (same process, asked again): "
              f"{warm.seconds:.1f} s")
        print(machine_note())
        print(table(["mode", "count", "share", "previous", "trend"],
                    [[m.label[:50], m.count, f"{m.share:.1%}", m.previous, m.trend] for m in result.modes[:12]]))
    finally:
        if temporary:
            shutil.rmtree(directory, ignore_errors=True)


_END = int(datetime(2026, 6, 1, tzinfo=timezone.utc).timestamp())
_MODELS = ["gpt-4o", "claude-sonnet-4", "deepseek/deepseek-chat"]
_ENVS = ["env-1", "env-2", "env-3", "env-4"]
_TOOLS = ["bash", "edit", "python", "search", "submit"]


def build(ts, n: int, *, seed: int) -> None:
    """``n`` synthetic failed runs: index rows written directly (random vectors), one small trace each."""
    import numpy as np

    from trajsearch.indexer import _record
    from trajsearch.model import Failure, Outcome, Step, Trajectory
    from trajsearch.represent import Row, failure_text
    from trajsearch.store.traces import encode_trace, trace_name

    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    names = list(CAUSES)
    weights = _zipf(len(names))
    root = Path(ts.traces.root) / "bench"
    root.mkdir(parents=True, exist_ok=True)
    batch = []
    for number in range(n):
        error = make_error(rng.choices(names, weights)[0], rng)[0] if rng.random() > 0.02 else noise_error(rng)
        tool = rng.choice(_TOOLS)
        trajectory = Trajectory(
            trajectory_id=f"bench-{number:06d}", tenant="bench", task=f"Synthetic task {rng.randint(1, 500)}: "
            f"make the {rng.choice(['payments', 'search', 'billing', 'auth', 'export'])} tests pass",
            env_version=rng.choice(_ENVS), model_id=rng.choice(_MODELS), outcome=Outcome.failure,
            created_at=datetime.fromtimestamp(_END - rng.randint(0, 14 * 86400 - 1), timezone.utc),
            failure=Failure(error=error),
            steps=[Step(index=0, action="bash", arguments={"command": "ls"}, observation="src tests"),
                   Step(index=1, action=tool, arguments={"command": "run"}, error=error)],
        )
        text, position = failure_text(trajectory)
        uri = (root / trace_name(trajectory.trajectory_id)).as_uri()
        (root / trace_name(trajectory.trajectory_id)).write_bytes(encode_trace(trajectory))  # no fsync: a benchmark
        vector = np_rng.normal(size=384).astype(np.float32)
        batch.append(_record(trajectory, Row("failure", position, position, text), trace_uri=uri, chash="bench",
                             vector=(vector / np.linalg.norm(vector)).tolist()))
        if len(batch) >= 1000:
            ts.index.upsert(batch)
            batch = []
    ts.index.upsert(batch)
    ts.index.flush()


# -- plumbing ----------------------------------------------------------------------------


def _store_dir(path: str | None) -> tuple[Path, bool]:
    if path:
        directory = Path(path)
        directory.mkdir(parents=True, exist_ok=True)
        return directory, False
    return Path(tempfile.mkdtemp(prefix="failure-modes-")), True


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", help="keep the store in this directory (reused when it holds the runs)")
    parser.add_argument("--eval", action="store_true", help="compare clustering methods (purity, run time)")
    parser.add_argument("--synthetic", type=int, default=0, metavar="N", help="benchmark N synthetic failure rows")
    parser.add_argument("--repeat", type=int, default=3, help="benchmark runs (the median is reported)")
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    if args.eval:
        evaluate(args)
    elif args.synthetic:
        synthetic(args)
    else:
        real(args)


if __name__ == "__main__":
    main()
