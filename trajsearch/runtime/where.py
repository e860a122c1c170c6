"""Where a task's work lies: the source files it will likely change, guessed from the runs around it.

Exemplars help most when one of them changed a file the task will change, and which file that is
is seldom in the task's words (a bug report names a behaviour, not ``query.py``). Two kinds of
neighbour know it:

- the candidate runs: the files each changed (its summary's ``Touched:`` line), weighted by how
  well the run scores for the task (``exp(score / TEMPERATURE)`` over the best ``POOL`` of them);
- the step rows nearest the task, of any run and outcome: the source files their commands and
  outputs name (``cat django/db/models/query.py``, a grep hit, a traceback line), each row's weight
  shared among its files. A failed run also looked in the right place.

Each kind sums to 1; the steps count ``STEP_WEIGHT`` times the candidates. Files are keyed by their
last two path parts (:func:`~.rerank.file_key`), as runs in other working directories name them.
Measured leave-task-out on 500 held-out mini-swe-agent runs of SWE-bench Verified (299 tasks with a
run of another task editing a same file): a file the task's own patch changed is among the three
heaviest for 0.736 of the tasks from the candidates alone, 0.809 with the steps.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

from ..results import Hit
from .rerank import Scored, file_key, changed_files

#: The candidates whose changed files vote (best scored first), and the softness of their weights.
POOL = 15
TEMPERATURE = 0.05
#: What the step rows' votes count against the candidates' (each kind sums to 1).
STEP_WEIGHT = 2.0
#: A source file as a command or an output names it, with at least one directory (a bare ``utils.py``
#: could be any of a repository's).
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+\.(?:py|pyi|pyx|js|jsx|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|"
                   r"cpp|hpp|scala|swift))\b")


def likely_files(ranked: Sequence[Scored], summaries: Mapping[str, Hit], steps: Sequence[Hit]) -> dict[str, float]:
    """File key -> how likely the task's work lies there (see the module). ``ranked``: the candidates
    best first; ``summaries``: their summary rows by run; ``steps``: the step rows nearest the task,
    with their cosine as ``score``. Empty when no candidate changed a file (nothing to cover)."""
    pool: dict[str, float] = {}
    top = ranked[0].score if ranked else 0.0
    for scored in ranked[:POOL]:
        row = summaries.get(scored.hit.trajectory_id)
        for key in {file_key(path) for path in changed_files(row.text if row else "")}:
            pool[key] = pool.get(key, 0.0) + math.exp((scored.score - top) / TEMPERATURE)
    if not pool:
        return {}
    shown: dict[str, float] = {}
    nearest = max((hit.score for hit in steps), default=0.0)
    for hit in steps:
        files = {file_key(path) for path in _PATH.findall(hit.text)}
        for key in files:
            shown[key] = shown.get(key, 0.0) + math.exp((hit.score - nearest) / TEMPERATURE) / len(files)
    weights: dict[str, float] = {}
    for votes, weight in ((pool, 1.0), (shown, STEP_WEIGHT)):
        total = sum(votes.values())
        for key, vote in votes.items():  # an empty kind adds nothing
            weights[key] = weights.get(key, 0.0) + weight * vote / total
    return weights
