"""Where a task's work lies: the source files it will likely change, guessed from the runs around it.

Exemplars help most when one of them changed a file the task will change, and which file that is
is seldom in the task's words (a bug report names a behaviour, not ``query.py``). Two kinds of
neighbour know it:

- the candidate runs: the files each changed (its summary's ``Touched:`` line), weighted by how
  well the run scores for the task (``exp(score / TEMPERATURE)`` over the best ``POOL`` of them);
- the step rows nearest the task, of any run and outcome: the source files their commands and
  outputs name (``cat django/db/models/query.py``, a grep hit, a traceback line), each row's weight
  shared among its files. A failed run also looked in the right place.

A third vote is the task's own words, where they name code: the files the candidates' reads showed
defining a function or class the task names, and a file it names outright
(:func:`~.rerank.task_homes`), shares summing to 1, counting ``HOME_WEIGHT`` times the candidates.
A fourth is where the code the task names shows up: the step rows (and passages of long outputs) the
lexical leg ranks best for the task's identifiers (a file view, a grep hit, a traceback holding
``execute_sql_flush``), of any run and outcome, each row's weight ``1/rank`` shared among the source
files it names, counting ``NAMED_STEP_WEIGHT`` times the candidates. The nearest step rows are found by
the task's wording; these by its names, which the wording's embedding hardly weighs.
A fifth is the task's own traceback: the file its innermost frame is in (:func:`failing_frames`), where the
error was raised, counting ``FRAME_WEIGHT`` times the candidates.

Each kind's weights sum to 1 over all its voters (those naming no file included); the steps count
``STEP_WEIGHT`` times the candidates. Files are keyed by their last two path parts
(:func:`~.rerank.file_key`), as runs in other working directories name them. Test files vote for
nothing (:func:`is_test_file`): the commands that run tests name them (``pytest tests/test_x.py``), so the
nearest step rows pile onto them, and a test a run changed beside its fix is not where a new task's fix
lies; they only crowded source files out of the likeliest few.
Measured leave-task-out on 500 held-out mini-swe-agent runs of SWE-bench Verified (299 tasks with a
run of another task editing a same file): a file the task's own patch changed is among the three
heaviest for 0.736 of the tasks from the candidates alone, 0.809 with the steps, 0.823 with the
task's named code. Without test files, exemplar recall@3 on those runs 0.883 -> 0.890 (0.893 with the
runs that changed the likeliest files as candidates, ``AdviceConfig.likely_file_runs``).
"""

from __future__ import annotations

import math
import re
from typing import AbstractSet, Mapping, Sequence

from ..results import Hit
from ..touched import SOURCE_EXTENSIONS
from ..tracebacks import traceback_frames
from ..memo import per_call
from .rerank import file_key

#: The candidates whose changed files vote (best scored first), and the softness of their weights.
POOL = 15
TEMPERATURE = 0.05
#: What the step rows' votes count against the candidates' (each kind's weights sum to 1 over all its
#: candidates or rows, those naming no file included: a lone distant row naming one gets little).
STEP_WEIGHT = 2.0
#: What the files holding the code a task names count against the candidates' vote. Leave-task-out on
#: the 500 held-out runs, exemplar recall@3 0.863 -> 0.883 (scripts/eval_generalise.py --swe; offline
#: on the candidate pools 0.860 without, 0.880 / 0.886 / 0.883 / 0.883 at 0.3 / 0.5 / 0.75 / 1.0);
#: tau-bench and the shared dumps unchanged (0.895, 0.900).
HOME_WEIGHT = 0.5
#: What the step rows holding the code the task names (``AdviceConfig.cover_named_steps``) count against
#: the candidates' vote. Leave-task-out (exemplar-only, on the captured searches), recall@3 (@1): gemini-3-pro
#: SWE-bench Verified (299 findable tasks, the set tuned on) 0.893 (0.589) -> 0.893 (0.599); held out,
#: CodeR 0.837 (0.551) -> 0.857 (0.551), SWE-agent gpt-4 Lite cost_2_1 0.906 (0.750) -> 0.906 (0.812),
#: cost_2_2 0.875 (0.650) -> 0.875 (0.725). At 1.0: recall@1 0.605 / 0.571 / 0.812 / 0.725, but recall@3
#: 0.893 / 0.857 / 0.875 / 0.850 (a file the names' rows show but no fix changed took a place); at 0.3:
#: 0.589 @1 on gemini.
NAMED_STEP_WEIGHT = 0.5
#: What the innermost frame of the task's tracebacks (:func:`failing_frames`) counts against the candidates'
#: vote (shared among the frames when it holds several tracebacks). Its files were the task's own: named
#: alike with a traceback's outer frames (``rerank.named_files``, one home each), it was lost among them.
#: Exemplar-only leave-task-out recall@3 (@1), round 26 (R11I), the round-23 stores: gemini-3-pro 0.888 (0.601)
#: -> 0.899 (0.608) (django-12663, -13121, -15973 won, each the file its traceback failed in; @1 -13121, -15973, -13028
#: won, xarray-3677 lost); at 0.5 0.892 (0.601); CodeR, SWE-agent cost_2_1 .. cost_2_3 and the shared dumps
#: unchanged at 0.5 and 1.0. Folded into the task's homes instead (the innermost frame one more home): no
#: set gained, gemini 0.885 at 2.0.
FRAME_WEIGHT = 1.0
#: A source file as a command or an output names it: with a directory (a bare ``utils.py`` could be any
#: of a repository's), relative or absolute (a traceback's ``/testbed/pkg/mod.py``), ``./`` or a diff's
#: ``a/`` ``b/`` before a top-level file (``--- a/setup.py``) taken off.
_PATH = re.compile(rf"(?<![\w/.-])(/?(?:[\w.-]+/)+[\w.-]+\.(?:{SOURCE_EXTENSIONS}))\b")
_TOP_LEVEL = re.compile(r"^(?:\./|[ab]/)(?=[^/]+$)")
#: A file of the Python installation itself, not of a package it holds: ``/usr/lib/python3.8/json/decoder.py``,
#: ``/usr/lib64/python3.9/`` (Fedora), PyPy's ``/usr/lib/pypy3.9/`` and ``/opt/pypy/lib-python/3/``, Windows'
#: ``C:/Python39/Lib/`` (a frame's ``\\`` read as ``/``), a conda install's or environment's
#: ``C:/.../Anaconda3/envs/x/Lib/``.
_STDLIB = re.compile(r"""(?:/lib(?:64)?/(?:python|pypy)[\d.]*/|/lib-python/[\d.]+/
                         |^[A-Za-z]:/(?:[^/]+/)*?(?i:python[\d.]*|anaconda\d*|miniconda\d*|envs/[^/]+)/(?i:lib)/
                         )(?!(?:site|dist)-packages/)""", re.X)
#: A test file, by the usual layouts: in a ``tests`` or ``__tests__`` directory, or named so: ``test_x.py``,
#: ``x_test.py`` / ``x_test.go``, ``tests.py``, ``conftest.py``, ``FooTest.java`` / ``FooTests.kt``, ``x.test.ts`` /
#: ``x.spec.js``. A ``test`` or ``testing`` directory alone is not enough: ``django/test/`` and
#: ``sphinx/testing/`` are the project's own code (its test helpers), where some tasks' work lies.
_TEST_FILE = re.compile(r"(?:^|/)(?:tests|__tests__)/|(?:^|/)(?:test_[^/]*|[^/]*_tests?\.\w+|tests\.py|conftest\.py"
                        r"|[^/]*[a-z0-9]Tests?\.\w+|[^/]*\.(?:test|spec)\.\w+)$")


def is_test_file(path: str) -> bool:
    """Whether a path (or a :func:`~.rerank.file_key`) names a test file: no place a task's work lies (see
    the module)."""
    return bool(_TEST_FILE.search(path))


def changed_votes(candidates: Sequence[tuple[float, Sequence[str]]]) -> dict[str, float]:
    """File key -> the candidates' vote: ``candidates`` are (score, the files the run changed), best first;
    the first ``POOL`` vote, each file a run changed getting its whole weight (a test file none). Empty when
    none changed a file other than a test."""
    return _votes([(score, {file_key(p) for p in changed if not is_test_file(p)})
                   for score, changed in candidates[:POOL]], shared=False)


def likely_files(changed: Mapping[str, float], steps: Sequence[Hit],
                 homes: Mapping[str, float] | None = None, named_steps: Sequence[Hit] = (),
                 frames: AbstractSet[str] = frozenset()) -> dict[str, float]:
    """File key -> how likely the task's work lies there (see the module): the candidates' vote
    (:func:`changed_votes`) plus ``STEP_WEIGHT`` times the vote of ``steps``, the step rows nearest the
    task with their cosine as ``score``, plus ``HOME_WEIGHT`` times the shares of ``homes`` (file key ->
    how much of the code the task names it holds, :func:`~.rerank.task_homes`), plus ``NAMED_STEP_WEIGHT``
    times the vote of ``named_steps``, the step rows the lexical leg ranks best for the task's identifiers,
    best first (:func:`_ranked_votes`), plus ``FRAME_WEIGHT`` shared among ``frames``, the files the task's
    tracebacks failed in (:func:`failing_frames`); a test file counts in none. Empty when no candidate changed a
    file (nothing to cover)."""
    if not changed:
        return {}
    shown = _votes([(hit.score, _shown(hit)) for hit in steps], shared=True)
    kinds = [(STEP_WEIGHT, shown)]
    if named_steps and NAMED_STEP_WEIGHT:
        kinds.append((NAMED_STEP_WEIGHT, _ranked_votes([_shown(hit) for hit in named_steps])))
    if frames and FRAME_WEIGHT:
        kinds.append((FRAME_WEIGHT, {key: 1 / len(frames) for key in frames}))
    homes = {key: share for key, share in (homes or {}).items() if not is_test_file(key)}
    if homes and (named := sum(homes.values())):
        kinds.append((HOME_WEIGHT, {key: share / named for key, share in homes.items()}))
    weights = dict(changed)
    for weight, votes in kinds:
        for key, vote in votes.items():
            weights[key] = weights.get(key, 0.0) + weight * vote
    return weights


def failing_frames(text: str) -> frozenset[str]:
    """The file of the innermost frame of each Python traceback ``text`` holds (:func:`~..tracebacks.traceback_frames`:
    Python's, pytest's, IPython's frames), by :func:`~.rerank.file_key`: where the error was raised. Frames in test
    files (the test calling the code), in the Python installation (a ``json/decoder.py`` no run of a project
    changes) and in no ``.py`` file (``<frozen importlib._bootstrap>``, a Cython ``.pyx``) are passed over. A bug
    report's traceback runs from the user's call down to the fault: of the tasks of the SWE-bench dumps measured
    (gemini-3-pro, CodeR, SWE-agent ``cost_2_1`` .. ``cost_2_3``) that hold one, the innermost frame's file was one
    the task's own runs changed for 61 of 141, another file the task names (an outer frame, a path in its prose)
    alone for 32, though those are three times as many (148 innermost files, 478 others)."""
    found = set()
    for frames in traceback_frames(text):
        kept = [path for path in frames if path.endswith(".py") and not is_test_file(path) and not _STDLIB.search(path)]
        if kept:
            found.add(file_key(kept[-1]))
    return frozenset(found)


def _shown(hit: Hit) -> frozenset[str]:
    """The source files a step row names (:data:`_PATH`), by :func:`~.rerank.file_key`, test files left out."""
    return _files_named(hit.text)


@per_call
def _files_named(text: str) -> frozenset[str]:
    """:func:`_shown` of a row's text, worked out once per call (:mod:`trajsearch.memo`): an exemplars call asks it again of the same step rows for
    every candidate it weighs without its own vote (``advice._likely_files``' ``without``), which made 90% of the
    call's regex work (probe 52, PERF: 27,136 scans of rows' texts in 76 calls, half of their time)."""
    return frozenset(file_key(_TOP_LEVEL.sub("", p)) for p in _PATH.findall(text) if not is_test_file(p))


def _ranked_votes(rows: Sequence[AbstractSet[str]]) -> dict[str, float]:
    """File -> its share of the rows' weights, ``1/rank`` each (a BM25 score says how well a row matches its
    own query, not how much to trust it against another's), shared among the files a row names, over every
    row: those naming no file keep their share."""
    weights = [1 / rank for rank in range(1, len(rows) + 1)]
    total = sum(weights)
    out: dict[str, float] = {}
    for weight, files in zip(weights, rows):
        for key in files:
            out[key] = out.get(key, 0.0) + weight / total / len(files)
    return out


def _votes(voters: Sequence[tuple[float, AbstractSet[str]]], *, shared: bool) -> dict[str, float]:
    """File -> its share of the voters' weights (``exp((score - best) / TEMPERATURE)``; ``shared``: each
    voter's shared among the files it names, as a step row that lists many files says little of each;
    else each file a run changed gets it whole), over every voter: those naming no file keep their share."""
    if not voters:
        return {}
    best = max(score for score, _ in voters)
    weights = [math.exp((score - best) / TEMPERATURE) for score, _ in voters]
    total = sum(weights)
    out: dict[str, float] = {}
    for weight, (_, files) in zip(weights, voters):
        for key in files:
            out[key] = out.get(key, 0.0) + weight / total / (len(files) if shared else 1)
    return out
