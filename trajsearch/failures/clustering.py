"""Grouping meanings into modes: agglomerative clustering at a cosine threshold, and the analysis' settings.

:class:`ModeConfig` lives here because its main defaults (``threshold``,
``max_cluster``, ``max_embed``) are the figures below.

Why this clustering (``scripts/failure_modes.py --eval``, all-MiniLM-L6-v2; the
labelled corpus ``scripts/failure_corpus.py``: 1,230 errors of 41 causes written
95 ways, 143 templates; the real dumps: 126 failures, 15 templates; times on
this shared 2-core machine)::

    method (meaning vectors)      corpus modes  purity  inverse  real modes  real purity  2,201 templates
    agglomerative average t=0.4        75        0.967    0.752       10         0.944         0.7 s
    agglomerative average t=0.3        96        0.977    0.658       11         0.960         0.8 s
    agglomerative average t=0.45       65        0.902    0.789       10         0.944         0.7 s
    agglomerative complete t=0.5       65        0.927    0.802        9         0.921         0.7 s
    agglomerative single t=0.2        112        0.985    0.589       12         0.968         0.6 s
    HDBSCAN min_cluster_size=2         67        0.841    0.812        5         0.770         0.5 s
    HDBSCAN min_cluster_size=3         72        0.849    0.679        9         0.921         0.4 s
    Birch threshold=0.6                51        0.780    0.843        7         0.841         1.2 s

Purity: each mode's share of its most common cause (corpus) or exact template
(real), over all failures; inverse purity: each cause's share in its largest mode
(how completely paraphrases merged). Average linkage at 0.4 keeps purity at 0.97
and 0.94 while merging most paraphrases; HDBSCAN merges more but mixes causes
(0.84) and, on the 15 real templates, folds different tau-bench causes together
(0.77): density has little to work with when most causes have one or two
wordings, and its noise points need a rule of their own. A distance threshold
says what it means ("at most this far apart on average") and needs no number of
modes. Clustering all of a 100k-row analysis' distinct meanings takes under a
second; past ``max_cluster`` (3,000) distinct meanings, further ones join the
nearest mode within the threshold or are clustered among themselves, and past
``max_embed`` (1,000) the rarest are grouped by exact template only (counted in
``FailureReport.rare``: 1.1% of the failures in the 100k-row benchmark).

What is embedded matters more than the algorithm: the same clustering on the raw
template text gets purity 0.756 (corpus) and 0.754 (real: 4 modes; shared
``reward 0.0: final database state differs...`` preambles pull different tau-bench
causes together), and on the failure rows' own vectors (task + error + cause,
averaged per template) 0.659 at this threshold and 0.881 at 0.2: the task text
dominates them. So the rows' vectors are not used for grouping, only the
templates' meanings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ModeConfig:
    """How failures are grouped (the figures behind the defaults are in the module docstring)."""

    #: Average-linkage cosine distance below which two groups of templates are one cause.
    threshold: float = 0.4
    #: Distinct meanings clustered together at once (agglomerative clustering is quadratic in
    #: them); rarer ones join the nearest mode within ``threshold`` or are clustered in turn.
    max_cluster: int = 3000
    #: Distinct meanings embedded at most (the most frequent): embedding is the analysis' largest cost that
    #: grows with the tail of one-off errors (1,000 short texts: ~5 s of model time here). Rarer meanings
    #: are grouped by their exact template only; ``FailureReport.rare`` counts their failures.
    max_embed: int = 1000
    #: Runs per mode whose trace is read to name its models (rows carry no model id).
    model_sample: int = 10
    #: Traces read at most to apply a ``model`` filter (every failure in scope needs its trace).
    max_model_traces: int = 20_000
    trace_workers: int = 8
    #: Up-or-down changes smaller than this fraction of the previous count are "flat".
    flat_band: float = 0.1


def cluster(vectors: np.ndarray, threshold: float, max_cluster: int = 3000) -> np.ndarray:
    """Cluster labels for unit ``vectors`` (rows in priority order: most frequent first).

    Agglomerative clustering, average linkage, cosine distance, cut at ``threshold``.
    Past ``max_cluster`` rows, each further block first joins the existing cluster whose
    centroid is within ``threshold`` and clusters what is left among itself.
    """
    import numpy as np

    n = len(vectors)
    labels = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return labels
    next_label = 0
    centroids = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    for start in range(0, n, max_cluster):
        block = np.arange(start, min(n, start + max_cluster))
        if len(centroids):
            sims = vectors[block] @ centroids.T
            best = sims.argmax(axis=1)
            near = sims[np.arange(len(block)), best] >= 1.0 - threshold
            labels[block[near]] = best[near]
            block = block[~near]
        if len(block) == 1:
            local = np.zeros(1, dtype=np.int64)
        elif len(block):
            from sklearn.cluster import AgglomerativeClustering

            local = AgglomerativeClustering(
                n_clusters=None, distance_threshold=threshold, metric="cosine", linkage="average"
            ).fit_predict(vectors[block])
        else:
            continue
        labels[block] = local + next_label
        next_label += int(local.max()) + 1
        sums = np.zeros((next_label, vectors.shape[1]), dtype=np.float32)
        np.add.at(sums, labels[labels >= 0], vectors[labels >= 0])
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
    return labels
