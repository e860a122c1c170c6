"""An OpenHands evaluation's run set: its output files read once, and its iterative mode's attempt files beside
``output.jsonl``, for the ``openhands`` adapter.

With ``ITERATIVE_EVAL_MODE=true`` (OpenHands V0 ``evaluation/benchmarks/*/run_infer.py``; it defaults to false) or
``--n-critic-runs`` (OpenHands/benchmarks, ``benchmarks/utils/evaluation.py``, which writes attempt files even
with one critic run) the runner writes attempt N's lines to ``<stem>.critic_attempt_<N>.jsonl``, retries the
instances its critic failed (no finish action, an empty patch), and then writes the chosen attempt of each instance
to ``<stem>.jsonl`` (``aggregate_results``: the line copied whole; V0 the latest attempt with a patch,
OpenHands/benchmarks the best by its critic, the latest of equals, none that ended in an error). That aggregate is
what the benchmark's harness judges: its verdict goes into its lines (``update_output_with_eval.py``'s ``report``)
or its report names its instances.

A run's id depends on which attempt it is, never on whether the aggregate exists yet (a run set ingested while it
runs and again once aggregated stores each run once): attempt 1 keeps the run id (an OpenHands/benchmarks run set
of one critic run, the default of most of its runners, reads as it always did), attempt N > 1 is
``<id>.attempt_<N>``. V0 lines share their run set's settings (output directory, start time, model), the run id's
parts, so without the suffix every attempt of an instance had one id. The aggregate's line is a copy of one
attempt's (the same events: ``_fingerprint``) and takes that attempt's id, and the attempt line the aggregate's
verdict, so both copies read as one run (one id, one content: stored once); a plain ``output.jsonl`` (no attempt
files beside) keeps the run id. ``metadata.handed_in`` says what the aggregate makes of an attempt: true (its run),
false (another run of the instance is: a failure where its own events say nothing, not judged by its instance's
report), null (no aggregate, or it leaves the instance out: not known, so no instance report judges it either).
"""

from __future__ import annotations

import glob
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

from trajsearch.model import Failure, Outcome

from .. import sources
from ._common import version

#: The ends of a run set's files' names: ``.jsonl``, or compressed (``gzip -r``, ``zstd -r``: ``.jsonl.gz``, ...).
_JSONL = tuple(f".jsonl{suffix}" for suffix in ("", *sources.COMPRESSED_SUFFIXES))
ATTEMPT_FILE = re.compile(r"(?P<stem>.+)\.critic_attempt_(?P<n>\d+)(?:"
                          + "|".join(map(re.escape, _JSONL)) + ")")
#: OpenHands/benchmarks' copy of each line that ended in an error (``evaluation_utils.get_default_on_result_writer``:
#: ``output.jsonl`` -> ``output_errors.jsonl``), beside its attempt files (``<stem>.critic_attempt_<N>.jsonl``).
ERRORS_FILE = re.compile(r"(?P<stem>.+)_errors(?:" + "|".join(map(re.escape, _JSONL)) + ")")
#: What a line keeps of the harness's verdict on it: the key ``update_output_with_eval.py`` writes, and the
#: ``test_result`` OpenHands' own evaluator (``eval_infer.py``) fills.
_VERDICT_KEYS = ("report", "test_result")


class Line(NamedTuple):
    """What a run set's file says of one of its lines: its events' ids in order (None unless every event has one),
    the run's ``_fingerprint``, its verdict fields and its ``error`` (which tells apart two lines of no events)."""

    event_ids: tuple[str, ...] | None
    fingerprint: tuple[Any, ...]
    verdict: dict[str, Any]
    error: str | None = None


@dataclass(frozen=True)
class Attempt:
    """Where a line stands in an iterative run set: the attempt it is, whether the aggregate hands it in (None: not
    known), the aggregate line's verdict fields where it is that line's run, and the attempt the aggregate hands in
    for its instance (None where no attempt file holds it)."""

    number: int
    handed_in: bool | None
    verdict: dict[str, Any]
    chosen: int | None = None


def output_lines(path: Path) -> dict[str, tuple[Line, ...]]:
    """``{instance_id: its lines}`` of an evaluation output or attempt file (compressed or not), read once per version;
    {} for a file that cannot be read."""
    try:
        return _lines(path, path.stat().st_mtime_ns)
    except (OSError, ValueError):
        return {}


def attempt_of(line: dict[str, Any], source: Path) -> Attempt | None:
    """The attempt a line read from ``source`` is: of an attempt file, or of the aggregate beside attempt files
    (the attempt it copies); None for a line of any other file (a plain ``output.jsonl``)."""
    instance = str(line.get("instance_id"))
    found = ATTEMPT_FILE.fullmatch(source.name)
    if found is None:
        stem = _aggregate_stem(source.name)
        chosen = _chosen(source.parent, stem, instance, _fingerprint(line)) if stem else None
        return Attempt(chosen, True, {}, chosen) if chosen is not None else None
    number, stem = int(found.group("n")), found.group("stem")
    kept = next((lines for suffix in _JSONL
                 if (lines := output_lines(source.with_name(stem + suffix)).get(instance))), None)
    if kept is None:  # no aggregate, or it leaves the instance out: not aggregated yet (or never: none had a patch)
        return Attempt(number, True if number == 1 and _alone(source, stem) else None, {})
    mine = _fingerprint(line)
    if (held := next((k for k in kept if k.fingerprint == mine), None)) is not None:
        return Attempt(number, True, held.verdict, number)
    return Attempt(number, False, {}, _chosen(source.parent, stem, instance, kept[-1].fingerprint))


def copied_from(line: dict[str, Any], source: Path) -> Path | None:
    """The attempt file that holds ``line`` too, where ``source`` is the runner's copy of the lines that ended in an
    error (``ERRORS_FILE``): both are written from one ``EvalOutput`` (``attempt_on_result_async``), so the run is read
    from the attempt file (as attempt N: ``output_errors.jsonl`` says ``attempt: 1`` of every attempt). None for
    a line of any other file, or one no attempt file holds (no iterative run set)."""
    found = ERRORS_FILE.fullmatch(source.name)
    if found is None:
        return None
    instance, mine = str(line.get("instance_id")), (_fingerprint(line), _error(line))
    return next((path for _, path in _attempt_files(source.parent, found.group("stem"), version(source.parent))
                 if any((k.fingerprint, k.error) == mine for k in output_lines(path).get(instance, ()))), None)


def read_with(path: Path) -> tuple[Path, ...]:
    """The files an attempt file's runs are read with: its aggregate, present or not (it says which attempt is handed
    in), and the other attempt files of its run set (a retry's makes attempt 1's hand-in unknown, and names the
    attempt chosen); of the runner's file of error lines, its attempt files (``copied_from``); none for any other
    file. The ingest's checkpoint reads an attempt file again when they change: one ingested before its run set was
    aggregated kept ``handed_in: null`` otherwise."""
    if errors := ERRORS_FILE.fullmatch(path.name):
        return tuple(p for _, p in _attempt_files(path.parent, errors.group("stem"), version(path.parent)))
    found = ATTEMPT_FILE.fullmatch(path.name)
    if found is None:
        return ()
    stem = found.group("stem")
    others = tuple(p for _, p in _attempt_files(path.parent, stem, version(path.parent)) if p != path)
    return (*(path.with_name(stem + suffix) for suffix in _JSONL), *others)


def _alone(source: Path, stem: str) -> bool:
    """Whether attempt file ``source`` is the run set's only file of attempts, with no aggregate beside: what
    OpenHands/benchmarks writes with one critic run (its usual default) when the aggregate is not kept, where the
    first attempt is the one handed in (a retry would have written ``<stem>.critic_attempt_2.jsonl``). An instance
    report then judges it, as it did before attempts were told apart (review R2B, D1)."""
    others = (p for p in source.parent.glob(f"{glob.escape(stem)}.*") if p != source)
    return not any(p.name in [stem + suffix for suffix in _JSONL] or ATTEMPT_FILE.fullmatch(p.name) for p in others)


def judged(line: dict[str, Any], attempt: Attempt | None) -> dict[str, Any]:
    """``line`` with the verdict the aggregate's copy of it carries (the line as the harness left it)."""
    return {**line, **attempt.verdict} if attempt is not None and attempt.handed_in else line


def run_id(base: str, attempt: Attempt | None) -> str:
    """Attempt 1 (and a line of no attempt) keeps the run id; attempt N > 1 is ``<id>.attempt_<N>``."""
    return base if attempt is None or attempt.number == 1 else f"{base}.attempt_{attempt.number}"


def retried(attempt: Attempt | None, outcome: Outcome, failure: Failure | None) -> tuple[Outcome, Failure | None]:
    """An attempt the aggregate passes over, where its events say nothing of how it went: a failure, saying why as
    far as the run set tells (the critic failed it and the instance ran again; or a later retry lost to it)."""
    if attempt is None or attempt.handed_in is not False or outcome is not Outcome.unknown:
        return outcome, failure
    if attempt.chosen is None:
        why = "the run set's aggregate holds another run of this instance"
    elif attempt.chosen > attempt.number:
        why = f"the evaluation's critic failed this attempt and ran the instance again (attempt {attempt.chosen} " \
              "is handed in)"
    else:
        why = f"the aggregate hands in the earlier attempt {attempt.chosen} (this retry's patch was empty, or it " \
              "ended in an error)"
    return Outcome.failure, Failure(error=f"not handed in: {why}")


def metadata(attempt: Attempt | None) -> dict[str, Any]:
    """What a run says of its attempt: which it is and whether it was handed in (null: not known, written so
    that no report of its instance judges it); nothing for a line of no iterative run set."""
    return {} if attempt is None else {"critic_attempt": attempt.number, "handed_in": attempt.handed_in}


def _aggregate_stem(name: str) -> str | None:
    """The stem of a possible aggregate's name (``output`` of ``output.jsonl`` / ``output.jsonl.gz``, ``.zst``)."""
    plain = sources.plain_name(name)
    return plain.removesuffix(".jsonl") if plain.endswith(".jsonl") and not ATTEMPT_FILE.fullmatch(name) else None


def _chosen(folder: Path, stem: str, instance: str, fingerprint: tuple[Any, ...]) -> int | None:
    """The attempt whose file holds ``instance``'s run with ``fingerprint`` (the latest where two do), if any."""
    numbers = [number for number, path in _attempt_files(folder, stem, version(folder))
               if any(k.fingerprint == fingerprint for k in output_lines(path).get(instance, ()))]
    return max(numbers, default=None)


@lru_cache(maxsize=16)
def _attempt_files(folder: Path, stem: str, version: int) -> tuple[tuple[int, Path], ...]:
    """``(N, path)`` of the attempt files ``<stem>.critic_attempt_<N>.jsonl[.gz|.zst]`` in one version of ``folder``."""
    try:
        names = [p for p in folder.iterdir() if p.name.startswith(f"{stem}.critic_attempt_")]
    except OSError:
        return ()
    return tuple(sorted((int(found.group("n")), p) for p in names
                        if (found := ATTEMPT_FILE.fullmatch(p.name)) and found.group("stem") == stem))


def _fingerprint(line: dict[str, Any]) -> tuple[Any, ...]:
    """A run's events told apart from another attempt's: how many, and the first and last one's id and time (V0
    event ids restart at 0 in every run; their times do not)."""
    events = [e for e in line.get("history") or () if isinstance(e, dict)]
    ends = [(str(e.get("id")), str(e.get("timestamp"))) for e in (events[:1] + events[-1:])]
    return len(events), *ends


def _error(line: dict[str, Any]) -> str | None:
    return str(line["error"]) if line.get("error") is not None else None


def event_ids(events: Any) -> tuple[str, ...] | None:
    """The ids of a run's events in order (none for a run that recorded nothing); None unless ``events`` is a list
    and every event in it has one."""
    if not isinstance(events, list):
        return None
    ids = tuple(str(e["id"]) for e in events if isinstance(e, dict) and e.get("id") not in (None, ""))
    return ids if len(ids) == len(events) else None


@lru_cache(maxsize=16)
def _lines(path: Path, version: int) -> dict[str, tuple[Line, ...]]:
    """``output_lines`` of one version of a file."""
    found: dict[str, list[Line]] = {}
    for _, line, _, _ in sources.lines(path):
        if isinstance(line, dict) and isinstance(line.get("history"), list) and "instance_id" in line:
            verdict = {k: line[k] for k in _VERDICT_KEYS if isinstance(line.get(k), dict)}
            found.setdefault(str(line["instance_id"]), []).append(
                Line(event_ids(line["history"]), _fingerprint(line), verdict, _error(line)))
    return {instance: tuple(lines) for instance, lines in found.items()}
