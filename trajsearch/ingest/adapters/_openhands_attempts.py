"""An OpenHands evaluation's iterative mode: the attempt files beside ``output.jsonl``, for the ``openhands`` adapter.

With ``ITERATIVE_EVAL_MODE`` (OpenHands V0 ``evaluation/benchmarks/*/run_infer.py``, the default of OpenHands'
own SWE-bench runs) or ``--n-critic-runs`` > 1 (OpenHands/benchmarks, ``benchmarks/utils/evaluation.py``) the
runner writes attempt N's lines to ``<stem>.critic_attempt_<N>.jsonl``, retries the instances its critic failed
(no finish action, an empty patch), and then writes the chosen attempt of each instance to ``<stem>.jsonl``
(``aggregate_results``: the line copied whole). That aggregate is what the benchmark's harness judges: its
verdict goes into its lines (``update_output_with_eval.py``'s ``report``) or its report names its instances.

So a line of an attempt file is one of two things, which only the aggregate beside it tells apart:
- the run the aggregate holds for that instance (the same events): a copy of the aggregate's line, read with the
  aggregate line's verdict so both copies read as one run (one id, one content: stored once);
- another run of that instance (an attempt the critic failed, retried): a run of its own, ``<id>.attempt_<N>``,
  ``metadata.handed_in`` false (no report of its instance judges it), a failure where its own events say nothing.
An attempt file with no aggregate beside (the run set still going, or only its attempt file kept: with one critic
run, the default of most OpenHands/benchmarks runners, it is the only attempt) tells nothing of a hand-in: its
first attempt keeps the id, a later one is ``<id>.attempt_<N>``. V0 lines share their run set's settings (output
directory, start time, model), the run id's parts, so without the suffix every attempt of an instance had one id.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from trajsearch.model import Failure, Outcome


ATTEMPT_FILE = re.compile(r"(?P<stem>.+)\.critic_attempt_(?P<n>\d+)\.jsonl")
#: What a line keeps of the harness's verdict on it: the key ``update_output_with_eval.py`` writes, and the
#: ``test_result`` OpenHands' own evaluator (``eval_infer.py``) fills.
_VERDICT_KEYS = ("report", "test_result")
RETRIED = "not handed in: the evaluation's critic failed this attempt and ran the instance again"


@dataclass(frozen=True)
class Attempt:
    """Where a line of an attempt file stands: its number and whether the aggregate beside hands it in (None:
    no aggregate, not known); ``verdict`` is the aggregate line's verdict fields when it is that line's run."""

    number: int
    handed_in: bool | None
    verdict: dict[str, Any]


def attempt_of(line: dict[str, Any], source: Path) -> Attempt | None:
    """The attempt a line read from ``source`` is, or None for a line of any other file (the aggregate itself)."""
    found = ATTEMPT_FILE.fullmatch(source.name)
    if found is None:
        return None
    number, aggregate = int(found.group("n")), source.with_name(f"{found.group('stem')}.jsonl")
    try:
        chosen = _aggregate(aggregate, aggregate.stat().st_mtime_ns)
    except (OSError, ValueError):
        return Attempt(number, None, {})
    kept = chosen.get(str(line.get("instance_id")))
    if kept is None:  # not in the aggregate: the runner had not aggregated it (or never will: all attempts empty)
        return Attempt(number, None, {})
    fingerprint, verdict = kept
    return Attempt(number, True, verdict) if fingerprint == _fingerprint(line) else Attempt(number, False, {})


def judged(line: dict[str, Any], attempt: Attempt | None) -> dict[str, Any]:
    """``line`` with the verdict the aggregate's copy of it carries (the line as the harness left it)."""
    return {**line, **attempt.verdict} if attempt is not None and attempt.handed_in else line


def run_id(base: str, attempt: Attempt | None) -> str:
    """The aggregate's run keeps its id, and so does a first attempt with no aggregate beside; any other attempt is
    ``<id>.attempt_<N>``."""
    if attempt is None or attempt.handed_in or attempt.handed_in is None and attempt.number == 1:
        return base
    return f"{base}.attempt_{attempt.number}"


def retried(attempt: Attempt | None, outcome: Outcome, failure: Failure | None) -> tuple[Outcome, Failure | None]:
    """An attempt the runner retried failed its critic: a failure where its events said nothing of it."""
    if attempt is not None and attempt.handed_in is False and outcome is Outcome.unknown:
        return Outcome.failure, Failure(error=RETRIED)
    return outcome, failure


def metadata(attempt: Attempt | None) -> dict[str, Any]:
    """What a run says of its attempt: that it was not handed in, or which retry it is where that is unknown;
    nothing for the aggregate's run (read as its aggregate line is) nor for a first attempt not known to be retried."""
    if attempt is None or attempt.handed_in or attempt.handed_in is None and attempt.number == 1:
        return {}
    return {"critic_attempt": attempt.number, **({"handed_in": False} if attempt.handed_in is False else {})}


def _fingerprint(line: dict[str, Any]) -> tuple[Any, ...]:
    """A run's events told apart from another attempt's: how many, and the first and last one's id and time (V0
    event ids restart at 0 in every run; their times do not)."""
    events = [e for e in line.get("history") or () if isinstance(e, dict)]
    ends = [(str(e.get("id")), str(e.get("timestamp"))) for e in (events[:1] + events[-1:])]
    return len(events), *ends


@lru_cache(maxsize=8)
def _aggregate(path: Path, version: int) -> dict[str, tuple[tuple[Any, ...], dict[str, Any]]]:
    """``{instance_id: (its run's fingerprint, its verdict fields)}`` of one version of an aggregate (read once)."""
    chosen: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}
    with open(path, encoding="utf-8") as lines:
        for text in lines:
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if isinstance(line, dict) and isinstance(line.get("history"), list) and "instance_id" in line:
                verdict = {k: line[k] for k in _VERDICT_KEYS if isinstance(line.get(k), dict)}
                chosen[str(line["instance_id"])] = (_fingerprint(line), verdict)
    return chosen
