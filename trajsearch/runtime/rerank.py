"""Reranking with explicit features, and diversity.

score = w_similarity * similarity
      + w_touched    * touched        (how much of the code the task names the run changed)
      + w_where      * where          (how much of the code the task names lives in files the run changed)
      + w_calls      * calls          (how much of what its state-changing tool calls did the task names;
                                       only for the last exemplar, see RerankConfig.call_slots)
      + w_tools      * tool overlap   (share of the run's tools that are available now)
      + w_recency    * recency        (0.5 ** (age_days / half_life_days))
      + w_quality    * quality        (quality_score, else reward clipped to 0..1, else 0.5)

Each feature lies in 0..1 (similarity is a cosine), so a weight reads as "how
much this feature may move a candidate against similarity". ``touched`` reads
the run's summary ``Touched:`` line (files and modules it changed, functions and
classes, the state-changing tools it called; see :mod:`trajsearch.touched`).
``touched`` is the idf-weighted share of the code names the task text mentions
(those some candidate changed) that this run changed: a run that changed the
named module scores in full however much else its patch changed. ``calls`` is
the other way round: the share of the run's call names that the task mentions.
Idf is over the candidates: a name every candidate touched tells nothing. ``where``
finds the files that define what the task names (a function, class or setting seen
defined in some candidate's reads: the summaries' "definitions read" lists; a method
never seen defined, a dunder, by its class: :func:`_classes`) and gives
each run the share of them it changed: a task about ``bulk_create`` meets a run that
changed ``query.py`` for other reasons. Diversity
then takes candidates best first, at most one per trajectory and one per task
(runs of one task teach the same thing; a task is its id *and* its text, :func:`task_key`), skipping any whose text embeds closer
than ``max_cosine`` to one already chosen, and giving near ties to runs that did
other work than those chosen (other files changed, other state-changing calls; a run
sharing some of the files changed gives way by the share it shares; see
``RerankConfig.other_work_margin``), and, given where the task's work likely lies
(:mod:`.where`), counting for each candidate the likelihood of the files it changed that no run
chosen before it changed.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from ..actions import tools_of
from ..results import Hit
from ..touched import tool_kind
from .context import RuntimeContext
from ..memo import per_call

NEUTRAL = 0.5
#: A name defined in more files than this says too little about where the task's work lies.
WHERE_MAX_FILES = 3
#: What a file the task names outright counts for in ``where``, against 1 for each name it defines.
NAMED_FILE = 1.0
#: Methods of the builtin types: ``name.lower()`` in a traceback names no file of the project, though some
#: module of it may define a ``lower`` (see :func:`_project_name`).
_BUILTIN_METHODS = frozenset(name.lower() for kind in (str, bytes, int, float, list, tuple, dict, set) for name in dir(kind))
#: A class name: what says ``QuerySet.union`` is the project's ``union``, where ``name.lower`` is a string's.
_CLASS_NAME = re.compile(r"_*[A-Z]\w*")


def task_key(task_id: str, task_text: str) -> tuple[str, str] | None:
    """Which task a run did, for everything that treats runs of one task alike (diversity, curation,
    calibration): its ``task_id`` *and* its task text. Benchmarks number their tasks alike (tau-bench
    v1 and tau2 both call different airline tasks ``airline-1``), so an id alone merges unrelated
    tasks; the text alone would merge a task's runs only where a harness words it identically, which
    runs of one task id do anyway. None: the run names no task (a session), so it shares none."""
    return (task_id, task_text) if task_id else None


@dataclass(frozen=True)
class RerankConfig:
    enabled: bool = True
    w_similarity: float = 1.0
    #: The task names code the run changed (a file, module, function or class): strong evidence
    #: that the run did the work the task needs, worth more than a few points of wording. Counted as
    #: the share of the named code the run changed (it was the share of the run's changes the task
    #: names, which diluted big patches): leave-task-out on 500 mini-swe-agent runs of SWE-bench
    #: Verified (scripts/eval_generalise.py --swe, 300 findable tasks), recall@3 of a run editing a
    #: same file 0.710 -> 0.753 (-> 0.757 with paths in the task named as changed files are), @1
    #: 0.480 -> 0.500 (-> 0.510); task cosine 0.600 / 0.393. tau-bench unchanged (no code).
    #: 0.25 then; since the cover, the where-guess and the ``steps`` bonus were added, less: chosen by
    #: cross-validation (round 23), tuned on CodeR, SWE-agent cost_2_1 and cost_2_2, then checked on every
    #: set with fresh stores (exemplar-only leave-task-out recall@3): 0.20 loses no task against 0.25 on
    #: any of five sets (CodeR 0.959, cost_2_1 0.929, cost_2_2 0.917, gemini-3-pro 0.888) and wins one
    #: held out (cost_2_3 0.828 -> 0.862, flat from 0.10 to 0.20); 0.15 won CodeR's 0.007 tie but lost
    #: a gemini task. Tie-level: a name the task shares with an unrelated patch (a ``__mul__``) had
    #: lifted a run worded far from the task over the relevant run.
    w_touched: float = 0.20
    #: The task names code that lives in a file the run changed, as some candidate's reads showed
    #: (see :func:`touched_scores`, ``where``): what a task names is mostly a function, class or
    #: setting, what a run's patch names is its files. Leave-task-out on the 500 SWE-bench Verified
    #: runs (scripts/eval_generalise.py --swe), recall@1 / @3 of a run editing a same file: 0.520 /
    #: 0.787 without it (the definitions in the summaries already feed the lexical candidates:
    #: 0.780 before), 0.560 / 0.797 at 0.15, 0.563 / 0.787 at 0.25, 0.563 / 0.783 at 0.4 (chosen on
    #: these runs; 0.557 / 0.797 once scratch scripts' definitions were left out); the shared dumps
    #: unchanged (tau-bench reads no code). A source file the task names outright (a path, a link to
    #: one) is such a home too, counting ``NAMED_FILE``, and its runs are candidates of their own
    #: (``AdviceConfig.named_file_candidates``): 0.557 / 0.797 -> 0.560 / 0.807 on those runs (151 of
    #: the 500 tasks name a file their own patch changed); 0.560 / 0.803 at half the weight.
    w_where: float = 0.15
    #: The task says what the run's state-changing tools did (``cancel`` of ``cancel_reservation``):
    #: weaker evidence (a task may ask for what policy refuses), so it only decides the last
    #: ``call_slots`` exemplars, and only when no run chosen before them does that work. Measured
    #: leave-task-out (scripts/eval_generalise.py): on tau-bench retail (held out while choosing
    #: this) recall@3 of a run doing the same work 0.59 -> 0.67; airline unchanged. Added to every
    #: candidate's score instead, it also cost airline recall@1 0.66 -> 0.58 and lost same-task
    #: runs in scripts/eval_runtime.py --data ../shared/data (recall@3 0.786 -> 0.779, short queries @1
    #: 0.502 -> 0.488).
    w_calls: float = 0.10
    #: When the runs chosen before these places recorded no work at all (refusals, answers), the
    #: places go first to the best runs that did (see ``advice._last_places``). Leave-task-out
    #: recall@3: airline 0.868 -> 0.895 (all 0.875 -> 0.900), retail (held out) 0.707 unchanged,
    #: scripts/eval_runtime.py identical.
    call_slots: int = 1
    #: Those places go first to runs whose calls the task names at least this much (``calls`` at least
    #: this: the verb of ``cancel_reservation`` is about half of its idf-weighted names, the shared
    #: ``reservation`` much less), best scored first. Leave-task-out recall@3: airline 0.789 -> 0.842, retail
    #: (held out) 0.687 -> 0.707; scripts/eval_runtime.py's figures unchanged. Any mention (0) instead:
    #: 0.816 and 0.697 (a run that only shares ``reservation`` with the task took the place of a refusal).
    call_match: float = 0.5
    w_tools: float = 0.10
    w_recency: float = 0.05
    w_quality: float = 0.10
    half_life_days: float = 180.0
    diversity: bool = True
    max_cosine: float = 0.95
    #: Near ties go to other work (see :func:`work_done`): a run that changed the same files and
    #: made the same state-changing calls as one already chosen gives way to a run that did other
    #: work (or none recorded) and scores at most this much less; if the first did the wrong
    #: thing, so did its twin.
    #: Leave-task-out (scripts/eval_generalise.py), recall@3 of a run doing the work the task
    #: needs: tau-bench airline 0.763 -> 0.789, retail (held out while choosing) 0.667 -> 0.687;
    #: eval_runtime's same-task recall (``--data ../shared/data``) unchanged. Passing over twins
    #: whatever their lead (retail 0.697), and also counting runs with no recorded work as twins
    #: (airline 0.842), found more but lost same-task runs there (recall@3 of 12-word queries
    #: 0.628 -> 0.621, -> 0.561). A run that repeats part of the work chosen (one of the files it
    #: changed) loses that share of the margin (:func:`repeated`): three exemplars that changed three
    #: files cover more of what a task may need than three around one. Held-out SWE-bench Verified
    #: runs (500, mini-swe-agent + gemini-3-pro, 299 findable tasks): recall@3 0.809 -> 0.816
    #: (0.819 at 0.10, which moves tau-bench lists as well); tau-bench airline unchanged (0.895:
    #: shared calls alone count nothing). 0: off.
    other_work_margin: float = 0.05


@dataclass
class Scored:
    """A candidate run: its best hit, its features, and the combined score."""

    hit: Hit
    similarity: float
    score: float
    features: dict[str, float] = field(default_factory=dict)


def tool_overlap(hit: Hit, ctx: RuntimeContext) -> float:
    """The share of the run's tools the context has, the actions that call no tool aside (``respond``, a stop:
    :func:`~trajsearch.actions.tools_of`): counted, a tau-bench run that only talked scored 0 and lost the tools'
    weight, one that talked and called a listed tool 1/2 (probe 52, RT1's review: top-3 changed for 32 of 50
    airline tasks). Tools are compared by kind (:func:`~trajsearch.touched.tool_kind`): a context listing OpenHands'
    ``execute_bash`` has a ``bash`` run's shell."""
    tools = tool_kinds(hit.tools)
    if not ctx.tools_available or not tools:
        return 1.0  # nothing known to be missing
    return len(tools & tool_kinds(ctx.tools_available)) / len(tools)


def tool_kinds(actions: object) -> set[str]:
    """The kinds of the tools among ``actions`` (:func:`~trajsearch.actions.tools_of`, :func:`~trajsearch.touched.tool_kind`)."""
    return {tool_kind(tool) for tool in tools_of(actions)}


def recency(hit: Hit, now: datetime, half_life_days: float) -> float:
    age_days = max(0.0, (now.timestamp() - hit.created_at) / 86_400)
    return 0.5 ** (age_days / half_life_days)


def quality(hit: Hit) -> float:
    if hit.quality_score is not None:
        return float(hit.quality_score)
    if hit.reward is not None:
        return min(1.0, max(0.0, float(hit.reward)))
    return NEUTRAL


_TOUCHED = re.compile(r"^Touched: (.*)$", re.M)
_TOUCHED_PARTS = {"changed": "changed ", "created": "created ", "symbols": "functions/classes ", "calls": "calls ",
                  "defined": "definitions read "}


def _touched_lists(summary: str) -> dict[str, list[str]]:
    """The lists a summary row's ``Touched:`` line holds, as written: the files ``changed`` (or, of a run
    whose diffs only create files, ``created``: :func:`trajsearch.touched.touched`), their ``modules``, the
    ``symbols`` (functions and classes), the state-changing ``calls``, and what its reads showed ``defined``
    (``path: name name ...`` per file). Fresh lists, the caller's to keep; the line is read once
    (:func:`_touched_parsed`)."""
    return {kind: list(items) for kind, items in _touched_parsed(summary).items()}


@per_call
def _touched_parsed(summary: str) -> dict[str, tuple[str, ...]]:
    """:func:`_touched_lists`, worked out once per summary in a call (:mod:`trajsearch.memo`): an exemplars call reads the
    same candidates' summaries again for every candidate it weighs without its own vote (probe 52, PERF: 22,578
    reads in 76 calls, a tenth of their time)."""
    lists: dict[str, list[str]] = {"changed": [], "created": [], "modules": [], "symbols": [], "calls": [],
                                   "defined": []}
    found = _TOUCHED.search(summary or "")
    for part in found.group(1).rstrip(".").split("; ") if found else ():
        for kind, prefix in _TOUCHED_PARTS.items():
            if part.startswith(prefix):
                body, _, modules = part[len(prefix):].partition(" (modules ")
                lists[kind] += [item.strip() for item in body.split(",") if item.strip()]
                lists["modules"] += [m.strip() for m in modules.rstrip(")").split(",") if m.strip()]
    return {kind: tuple(items) for kind, items in lists.items()}


def _file_names(path: str) -> set[str]:
    """How a file is named, on both sides of the match: its stem and its last two path parts without
    the extension (``django/db/backends/base/schema.py`` -> ``schema``, ``base/schema``). A package's
    ``__init__.py`` is named by its package (``django/core/management/__init__.py`` -> ``management``,
    ``core/management``), as its module is: the stem ``__init__`` is what a task names as a method
    (``ResolverMatch.__init__``), so every run that changed some package's ``__init__.py`` scored ``touched``
    and ``named`` in full for such a task (round 21: on CodeR's and SWE-agent's ``cost_2_2`` runs of
    SWE-bench Lite, django-14155's first two places went to runs that changed ``management/__init__.py`` and
    ``fields/__init__.py``)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    pieces = [p for p in stem.split("/") if p]
    if pieces[-1:] == ["__init__"]:
        pieces.pop()
    return set(pieces[-1:]) | ({"/".join(pieces[-2:])} if len(pieces) >= 2 else set())


#: Calls that are an agent's verdict on its own run, not work done in the world (CodeR's sub-agents call ``succeed``
#: and ``fail``; SWE-agent-like loops ``submit``): every bug report "names" one ("should fail when ..."), so runs
#: making them took the place kept for runs making the calls a task asks for (on CodeR's held-out SWE-bench Lite
#: runs django-11964 and -14580 lost the relevant run to a run that called ``fail``).
VERDICT_CALLS = frozenset({"fail", "failed", "succeed", "success", "submit", "finish", "finished", "done", "give_up"})


def touched_names(summary: str) -> dict[str, set[str]]:
    """What a summary row's ``Touched:`` line says the run changed, lowercased, in two kinds:
    ``code``: each changed file's stem and last two path parts, its module, the functions and
    classes changed; ``calls``: the words of the state-changing tools it called
    (``cancel_reservation`` -> ``cancel``, ``reservation``), but an agent's verdict on its run
    (:data:`VERDICT_CALLS`)."""
    return _names_changed(_touched_lists(summary))


def _names_changed(parsed: dict[str, list[str]]) -> dict[str, set[str]]:
    """:func:`touched_names` of a ``Touched:`` line already parsed (:func:`_touched_lists`)."""
    lists = {kind: [item.lower() for item in items] for kind, items in parsed.items()}
    code = set(lists["modules"]) | set(lists["symbols"])
    for item in lists["changed"]:
        code |= _file_names(item)
    calls = {word for item in lists["calls"] if item not in VERDICT_CALLS for word in re.split(r"[_\W]+", item)}
    return {"code": {n for n in code if len(n) > 2}, "calls": {n for n in calls if len(n) > 2}}


def changed_files(summary: str) -> list[str]:
    """The files a summary row's ``Touched:`` line says its run changed, as written."""
    return _touched_lists(summary)["changed"]


def created_files(summary: str) -> list[str]:
    """The files a summary row's ``Touched:`` line says its run created, of a run whose diffs only create files."""
    return _touched_lists(summary)["created"]


def calls_made(summary: str) -> list[str]:
    """The state-changing tools a summary row's ``Touched:`` line says its run called, as written."""
    return _touched_lists(summary)["calls"]


def work_done(summary: str) -> frozenset[str]:
    """The work a summary row's ``Touched:`` line says the run did: the files it changed and the
    state-changing tools it called, as a set (empty when it names neither: nothing to compare)."""
    lists = _touched_lists(summary)
    return frozenset(f"{kind} {item}" for kind in ("changed", "calls") for item in lists[kind])


def file_key(path: str) -> str:
    """A file as two runs name it alike whatever their working directory: its last two path parts."""
    return "/".join([part for part in path.split("/") if part][-2:])


def defined_in(summaries: Sequence[str]) -> dict[str, set[str]]:
    """Name (lowercased) -> the files (:func:`file_key`) the runs' reads showed defining it."""
    return _defined([_touched_lists(summary) for summary in summaries])


def _defined(parsed: Sequence[dict[str, list[str]]]) -> dict[str, set[str]]:
    """:func:`defined_in` of ``Touched:`` lines already parsed (:func:`_touched_lists`)."""
    where: dict[str, set[str]] = {}
    for path, name in _definitions(parsed):
        where.setdefault(name.lower(), set()).add(file_key(path))
    return where


def _definitions(parsed: Sequence[dict[str, list[str]]]) -> Iterator[tuple[str, str]]:
    """(path, name as written) of each definition the parsed ``Touched:`` lines say their runs' reads showed."""
    for lists in parsed:
        for entry in lists["defined"]:
            path, _, names = entry.partition(": ")
            for name in names.split():
                yield path, name


def touched_scores(query: str, summaries: Sequence[str],
                   identified: Sequence[str] | None = None) -> dict[str, list[float]]:
    """Per candidate (its summary text), per kind, 0..1:

    - ``code`` (see :func:`touched_names`): the idf-weighted share of the names ``query`` mentions
      (as a token of the log/code tokenizer or an identifier), among those some candidate touched,
      that this one touched;
    - ``named``: the same for the code ``query`` names by its identifiers only (:func:`named_code`);
    - ``calls``: the share of the names this one touched that ``query`` mentions (in any form: :func:`says_call`);
    - ``where``: the share of the files defining what ``query`` names (:func:`defined_in`, over all
      candidates; a name defined in more than ``WHERE_MAX_FILES`` files says too little, and each
      counts ``1/files``) that this one changed, its test files left out (:func:`_changed_keys`).

    Idf over the candidates. ``identified``: ``identifiers(query)`` when already at hand."""
    from ..store.tokenize import tokenize  # noqa: PLC0415
    from ..touched import identifiers  # noqa: PLC0415

    identified = identifiers(query) if identified is None else identified
    named = named_code(identified)
    words = named | set(tokenize(query, bigrams=False))
    mentioned = {"code": words, "named": named, "calls": words}
    parsed = [_touched_lists(s) for s in summaries]  # each line once, for every kind below
    per_run = [_names_changed(lists) for lists in parsed]
    out: dict[str, list[float]] = {}
    for kind in ("code", "named", "calls"):
        names = [found["code" if kind == "named" else kind] for found in per_run]
        df: dict[str, int] = {}
        for found in names:
            for name in found:
                df[name] = df.get(name, 0) + 1
        idf = {name: math.log((len(names) + 1) / count) for name, count in df.items()}
        said = {name for name in idf if name in mentioned[kind] or kind == "calls" and says_call(name, words)}
        asked = sum(idf[name] for name in said)  # named, touched by some run
        scores = []
        for found in names:
            hit = sum(idf[name] for name in found if name in said)
            if kind != "calls":  # how much of the code the task names this run changed
                scores.append(hit / asked if asked else 0.0)
            else:  # how much of what this run's calls did the task names
                total = sum(idf[name] for name in found)
                scores.append(hit / total if total else 0.0)
        out[kind] = scores
    homes = _homes(query, identified, parsed)
    total = sum(homes.values())
    out["where"] = [sum(homes.get(key, 0.0) for key in _changed_keys(lists)) / total if total else 0.0
                    for lists in parsed]
    return out


#: The shortest start of a call's word that a task's word must begin with (``book`` of ``booked``).
CALL_STEM_MIN = 4


def says_call(call_word: str, words: set[str]) -> bool:
    """Whether a task's ``words`` name this word of a state-changing call (``cancel`` of ``cancel_reservation``),
    in the form the task's grammar gives it: "which flights should be cancelled", "a cancellation", "your
    reservations", "booked", "exchanged", "modified". The exact word alone missed them: tau2 airline-42 ("let the
    agent figure out which flights should be cancelled") had its one relevant run, the only successful one that
    called ``cancel_reservation``, seventh. A word names the call's word when it is the call's word less a final
    ``e`` or ``y`` (``exchang``, ``modif``), of at least ``CALL_STEM_MIN`` letters, and an inflection
    (:func:`_inflected`); ``upgrade`` is not ``update``, nor ``application`` ``apply``, ``story`` ``store``,
    ``creative`` ``create``, ``replace`` ``reply``, ``sender`` ``send`` (any longer word matched before: review RR11).
    Only a longer word matches: ``flight`` naming ``flights`` made runs whose calls only share the task's nouns
    (``update_reservation_flights`` for "change ... to a nonstop flight") pass ``RerankConfig.call_match``, and
    took tau-bench airline-27's call place from the run that cancelled (its shared dumps' recall@3 0.900 -> 0.850)."""
    if call_word in words:
        return True
    inflected = _inflected(call_word)
    return inflected is not None and any(inflected.fullmatch(word) for word in words)


@lru_cache(maxsize=4096)
def _inflected(call_word: str) -> re.Pattern[str] | None:
    """The inflected forms of a call's word: its stem (less a final ``e`` / ``y``), the stem's last letter at times
    doubled (``cancelled``, ``stopped``), then a plural, past, participle or noun ending (``-y`` words: ``-ied``,
    ``-ies``, ``-ying``, ``-fy`` ones ``-ification``: review RR3); None when the stem is shorter than
    ``CALL_STEM_MIN``."""
    ending = call_word[-1:]
    start = call_word[:-1] if ending in ("e", "y") else call_word
    if len(start) < CALL_STEM_MIN:
        return None
    endings = ("ied|ies|ying" + ("|ication|ications" if start.endswith("f") else "") if ending == "y"
               else "s|es|ed|ing|ings|ion|ions|ation|ations")  # -fy verbs' nouns: modification, not application
    return re.compile(rf"{re.escape(start)}(?:{re.escape(start[-1])})?(?:{endings})")


_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def named_code(identified: Sequence[str]) -> set[str]:
    """The code a task names (its :func:`~trajsearch.touched.identifiers`), lowercased and named as a run's
    changes are (:func:`touched_names`): each identifier whole, each part of a dotted name (``sql.compiler``:
    ``compiler``; ``QuerySet.union``: ``union``), a path's file by its last two parts and, when the path ends
    in a file name, by its stem (``lib/cartopy/mpl/contour.py``: ``contour``), a test id's test.

    Only identifiers: the ``python`` of a code fence or of a ``python: 3.6.7`` version banner, the ``Code`` of
    a ``Steps/Code to Reproduce`` heading, the last word of a path with no file name in it (``.venv/bin/python``)
    name no module, though some project has one of that stem (probe E2, E2-2: sphinx's ``domains/python.py``
    and ``directives/code.py`` were kept, below the novelty threshold, for scikit-learn issues). A prose word
    often does name one (``runserver``, ``makemigrations``, ``constraints``: counting identifiers only in
    ``touched`` lost 10 of 299 tasks @3 on the gemini SWE-bench runs, 2 of 32 and 2 of 40 on the SWE-agent
    sets), so ``touched`` counts the task's words too and this is the stronger evidence ``named``."""
    named: set[str] = set()
    for name in identified:
        low = name.lower()
        named.add(low)
        if "/" in low or "::" in low:
            path, _, test = low.partition("::")
            if "." in path.rsplit("/", 1)[-1]:  # a file: pkg/mod.py -> pkg/mod, mod (and mod's last two parts)
                named |= {path.rsplit(".", 1)[0], *_file_names(path)}
            else:
                named.add(file_key(path))
            if test:
                named.add(_last_part(test).split("[", 1)[0])
        elif _DOTTED.fullmatch(name):
            named |= set(low.split("."))
    return named


def task_homes(query: str, summaries: Sequence[str], identified: Sequence[str] | None = None) -> dict[str, float]:
    """File (:func:`file_key`) -> how much of what ``query`` names lives there: ``1/files`` for each name it
    names that the runs' reads (their summaries' ``Touched:`` lines) showed defined in at most
    ``WHERE_MAX_FILES`` files, ``NAMED_FILE`` for a source file it names outright. Empty: it names none.
    ``identified``: ``identifiers(query)`` when already at hand: an exemplars call asks this of one task again
    for every candidate it weighs without its own vote (568 scans of 38 tasks in 76 calls, probe 52), and works
    them out once. Not a cache of tasks: a long task's identifiers would outlive the call (review RPERF)."""
    from ..touched import identifiers  # noqa: PLC0415

    names = identifiers(query) if identified is None else identified
    return _homes(query, names, [_touched_lists(s) for s in summaries])


def _homes(query: str, identified: Sequence[str], parsed: Sequence[dict[str, list[str]]]) -> dict[str, float]:
    """:func:`task_homes` with the query's identifiers and the summaries' lines already at hand."""
    defined = _defined(parsed)
    names = [name for name in identified if _project_name(name)]
    members = {_last_part(name).lower() for name in names}
    homes: dict[str, float] = {}
    for name, files in defined.items():
        if name in members and _says_where(name, files):
            _add_home(homes, files, len(files))
    unknown = {qualifier for name in names
               if not _says_where(member := _last_part(name).lower(), defined.get(member, set()))
               and (qualifier := _qualifier(name)) and qualifier.lower() not in members}
    if unknown:  # a method never seen defined: its class says where it lives, if a module of the project defines it
        classes = _classes(parsed)
        for name in unknown:
            paths = classes.get(name, set())
            if _says_where(name, files := {file_key(path) for path in paths}):
                _add_home(homes, {file_key(path) for path in paths if _module_file(path)}, len(files))
    for path in named_files(query, identified):  # a file the task names outright is where its work lies
        homes[path] = homes.get(path, 0.0) + NAMED_FILE
    return homes


def _add_home(homes: dict[str, float], files: set[str], defining: int) -> None:
    """One name's share of ``homes``: ``1/defining`` to each of ``files``, of the ``defining`` files that define it."""
    for file in files:
        homes[file] = homes.get(file, 0.0) + 1 / defining


def _says_where(name: str, files: set[str]) -> bool:
    """Whether a name the runs' reads showed defined in ``files`` says where a task's work lies: not a short
    name, nor one defined in none or in more than ``WHERE_MAX_FILES`` files."""
    return len(name) > 3 and 0 < len(files) <= WHERE_MAX_FILES


def _classes(parsed: Sequence[dict[str, list[str]]]) -> dict[str, set[str]]:
    """Class name, as written (``ResolverMatch``) -> the paths the runs' reads showed define it: where a method the
    reads never showed defined lives (a dunder, ``ResolverMatch.__repr__``; an attribute, ``Field.max_length``:
    ``touched._definitions`` records neither). On SWE-agent's ``cost_2_2`` runs of SWE-bench Lite django-14155 had
    no home, though its one relevant run's reads showed ``class ResolverMatch`` in ``urls/resolvers.py``, and that
    run came 12th (round 22).

    Weaker evidence than the method itself, so the case is kept: ``Path`` of ``Path.exists()`` is no ``def path``
    of pytest's ``nodes.py``, ``README`` of ``README.md`` no ``def readme``; and :func:`_homes` counts only a
    module of the project (:func:`_module_file`): a bug report's model class (``Product.objects``,
    ``MyModel.objects``) is defined in the reproduction scripts the runs read, a ``replicate_bug.py`` or a test;
    Django's ``class Meta`` in more than ``WHERE_MAX_FILES`` files (review RR11D)."""
    where: dict[str, set[str]] = {}
    for path, name in _definitions(parsed):
        if _CLASS_NAME.fullmatch(name):
            where.setdefault(name, set()).add(path)
    return where


def _module_file(path: str) -> bool:
    """Whether a path may be a module of the project: no test file, nor a script at the top of the checkout
    (``reproduce.py``, ``/django__django/reproduce_bug.py``, ``/testbed/replicate_bug.py``), where the runs write
    theirs. A class the task names through one of its members is looked for in the project's modules only
    (:func:`_classes`): the fallback would otherwise place a bug report's model in another run's scratch script."""
    from .where import is_test_file  # noqa: PLC0415 (where keys files by this module's file_key)

    return not is_test_file(path) and path.lstrip("/").count("/") > (1 if path.startswith("/") else 0)


def _qualifier(name: str) -> str | None:
    """What qualifies the code an identifier names: ``QuerySet`` of ``QuerySet.union``, ``name`` of ``name.lower``."""
    parts = name.split("::")[-1].rsplit(".", 2)
    return parts[-2] if len(parts) > 1 else None


def _last_part(name: str) -> str:
    """The function, method or class an identifier names: ``QuerySet.bulk_create`` -> ``bulk_create``."""
    return name.split("::")[-1].rsplit(".", 1)[-1].removesuffix("()")


def _project_name(name: str) -> bool:
    """Whether an identifier may name the project's code: not a builtin type's method (``name.lower``), unless
    something in it says it is the project's: a class qualifies it (``QuerySet.union``, ``Query.join``,
    ``DataArray.copy``) or it is a test or file path (``tests/test_x.py::test_copy``)."""
    if _last_part(name).lower() not in _BUILTIN_METHODS:
        return True
    qualifier = _qualifier(name)
    return "/" in name or "::" in name or bool(qualifier and _CLASS_NAME.fullmatch(qualifier))


def named_files(text: str, names: Sequence[str] | None = None) -> set[str]:
    """The source files a task names as written (a path, a file name, a link to one), each as
    :func:`file_key` keys it: ``admin/options.py`` and ``.../django/contrib/admin/options.py#L1634`` are
    one file; a bare ``options.py`` is its own key. ``names``: ``identifiers(text)`` when already at hand
    (about 1 ms for an issue-length task)."""
    from ..touched import identifiers, source_file  # noqa: PLC0415

    return {file_key(path) for name in (identifiers(text) if names is None else names)
            if name in text and (path := source_file(name))}  # not a module path guessed from a dotted name


def _changed_keys(parsed: dict[str, list[str]]) -> set[str]:
    """The files a parsed ``Touched:`` line says its run changed, by :func:`file_key` and by bare file name, but
    test files (:func:`~.where.is_test_file`): as in :mod:`.where`, a test a run changed is not where a task's work
    lies. Its bare name met what a task names as a user would: on SWE-agent's ``cost_2_2`` runs django-10924 (make
    ``FilePathField``'s path a callable; "run manage.py makemigrations") had ``where`` 1.0 for django-11422, whose one
    change was ``tests/i18n/sampleproject/manage.py``, and showed it first."""
    from .where import is_test_file  # noqa: PLC0415 (where keys files by this module's file_key)

    changed = [path for path in parsed["changed"] if not is_test_file(path)]
    return {file_key(p) for p in changed} | {p.rsplit("/", 1)[-1] for p in changed}


def rerank(hits: Sequence[Hit], ctx: RuntimeContext, config: RerankConfig,
           touched: Mapping[str, Sequence[float]] | None = None) -> list[Scored]:
    """Candidates best first; with reranking off the order is plain similarity.

    ``touched``: per kind (``code``, ``named``, ``calls``, ``where``), per hit, how much of what its run touched
    the task names (see :func:`touched_scores`); none given counts as 0 for every hit.
    """
    scored = []
    for i, hit in enumerate(hits):
        features = {
            "similarity": hit.score,
            "touched": touched["code"][i] if touched else 0.0,
            "named": touched["named"][i] if touched else 0.0,
            "calls": touched["calls"][i] if touched else 0.0,
            "where": touched["where"][i] if touched else 0.0,
            "tools": tool_overlap(hit, ctx),
            "recency": recency(hit, ctx.now, config.half_life_days),
            "quality": quality(hit),
        }
        score = hit.score
        if config.enabled:
            score = (
                config.w_similarity * features["similarity"]
                + config.w_touched * features["touched"]
                + config.w_where * features["where"]
                + config.w_calls * features["calls"]
                + config.w_tools * features["tools"]
                + config.w_recency * features["recency"]
                + config.w_quality * features["quality"]
            )
        scored.append(Scored(hit, hit.score, score, features))
    return sorted(scored, key=lambda s: -s.score)


def diversify(
    candidates: Sequence[Scored],
    k: int,
    *,
    embed: Callable[[Sequence[str]], np.ndarray],
    text_of: Callable[[Scored], str],
    task_of: Callable[[Scored], tuple[str, str] | None],
    max_cosine: float,
    other_work_margin: float = 0.0,
    cover: Mapping[str, float] | None = None,
    cover_weight: float = 0.0,
) -> list[Scored]:
    """Up to ``k`` candidates: one per trajectory and per task (``task_of``: its :func:`task_key`, read
    from its task row: a candidate's own row may be its summary), none a near-copy of a
    chosen one, in the candidates' order, except that a candidate repeating work already chosen
    (:func:`work_done` of ``text_of``: files changed, state-changing calls) competes with those
    scoring at most ``other_work_margin`` less after it, each counted at its score less the margin
    times how much of its work they did (:func:`repeated`). 0: the candidates' order.

    ``cover``: how likely the task's work lies in each file (:func:`~.where.likely_files`, by
    :func:`file_key`). Each place then goes to the candidate whose score, plus ``cover_weight``
    times the likelihood of the files it changed that no run chosen before it changed, is highest:
    three exemplars around the three likeliest files rather than three around one."""
    chosen: list[Scored] = []
    vectors: list[np.ndarray] = []
    seen: set[str] = set()
    tasks: set[tuple[str, str]] = set()
    works: set[frozenset[str]] = set()  # the work of each run chosen so far
    covered: set[str] = set()  # the files they changed
    known: dict[int, frozenset[str]] = {}
    covering = bool(cover) and cover_weight > 0

    def work(c: Scored) -> frozenset[str]:  # read from its text when first needed: most candidates never are
        if id(c) not in known:
            known[id(c)] = work_done(text_of(c)) if other_work_margin > 0 or covering else frozenset()
        return known[id(c)]

    def adjusted(c: Scored) -> float:
        return c.score - other_work_margin * repeated(work(c), works)

    def files(c: Scored) -> set[str]:
        return {file_key(item[len("changed "):]) for item in work(c) if item.startswith("changed ")}

    def value(c: Scored) -> float:
        gain = sum(cover.get(key, 0.0) for key in files(c) - covered) if cover else 0.0
        return adjusted(c) + cover_weight * gain

    remaining = list(candidates)
    while len(chosen) < k:
        remaining = [c for c in remaining if c.hit.trajectory_id not in seen
                     and task_of(c) not in tasks]
        if not remaining:
            break
        candidate = remaining[0]
        if covering:
            candidate = max(remaining, key=value)  # the first of equals: the candidates' order
        elif adjusted(candidate) < candidate.score:  # it repeats work chosen: a near tie may do other work
            near = [c for c in remaining if c.score >= candidate.score - other_work_margin]
            candidate = max(near, key=adjusted)
        remaining.remove(candidate)
        vector = embed([text_of(candidate)])[0]
        if any(float(np.dot(vector, v)) > max_cosine for v in vectors):
            continue
        chosen.append(candidate)
        vectors.append(vector)
        seen.add(candidate.hit.trajectory_id)
        works.add(work(candidate))
        covered |= files(candidate)
        if (task := task_of(candidate)) is not None:
            tasks.add(task)
    return chosen


def repeated(work: frozenset[str], chosen: set[frozenset[str]]) -> float:
    """How much of a run's recorded work (:func:`work_done`) runs already chosen did, 0..1: all of it
    for a twin of one (the same files changed, the same state-changing calls); else the share of the
    files it changed that they changed (a run sharing one of its three files: a third). Shared calls
    alone count nothing: two runs that both cancelled a reservation may have done other writes each.
    A run with no work recorded: 0 (it is not known to have done the same)."""
    if not work:
        return 0.0
    if work in chosen:
        return 1.0
    files = {item for item in work if item.startswith("changed ")}
    done = set().union(*chosen)
    return len(files & done) / len(files) if files else 0.0
