"""A run's ever more compressed variants, tried in turn until its record fits ``max_tokens``.

``max_tokens``: each record is compressed as the agent runtime compresses a run for
its prompt (:mod:`trajsearch.runtime.format`): all steps if they fit; else the
run's decision points (each read once, only the last attempt of a retry); else the
runtime's detail levels (at most 8, then 4 decision points kept as an exemplar keeps
them, :func:`trajsearch.digest.ranked_decision_points`: the changes of the files the run's
final diff holds, the end, writes, errors and tests, the rest; arguments, outputs, thoughts and the task
cut to head and tail; the runtime's third level keeps no steps, which teaches
nothing, so it is not used); a run that fits at none is left out and counted. Tokens are counted
with the runtime's counter (all-MiniLM-L6-v2's WordPiece) on the record's text
(message contents, tool names and arguments), not on the JSON punctuation. A run whose task the agent never
saw keeps its opening user turn (tau2: with the greeting it answers) at every level (:func:`_opening`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from ..model import TASK_SEEN_BY_AGENT, Step, Trajectory
from ..represent import clip, indexed_text
from .formats import RESPOND


def _variants(run: Trajectory, compress: bool) -> Iterator[tuple[str, Trajectory]]:
    """The run as is, then ever more compressed as the runtime compresses runs for a prompt. Compressed, every
    level is made for a prompt, as digests are: each encoded blob is its placeholder (:func:`~trajsearch.represent.
    indexed_text`), where clipping left a fragment of an image's base64, neither the image nor its name (review
    RT3, 3); uncompressed, the record is the trace as kept."""
    if not compress:
        yield "none", run
        return
    run = indexed_text(run)
    yield "none", run
    from ..digest import observation_text, ranked_decision_points
    from ..runtime.format import FormatConfig, _levels

    points, ranked = ranked_decision_points(run)
    opening = _opening(run)
    if len(decisions := opening(points)) < len(run.steps):
        yield "decision_points", run.model_copy(update={"steps": decisions})
    for name, detail in zip(("full", "half", "bare"), _levels(FormatConfig())):
        kept = opening([points[i] for i in sorted(ranked[: detail.actions])])
        steps = [
            step.model_copy(update={
                "thought": clip(step.thought, detail.note // 2, detail.note // 2) if step.thought else None,
                "arguments": _clip_arguments(step.arguments, detail.argument),
                "observation": clip(observation_text(step.observation), detail.observation // 3, detail.observation * 2 // 3)
                if step.observation else None,
                "error": clip(step.error, detail.observation // 3, detail.observation * 2 // 3) if step.error else None,
            })
            for step in kept
        ]
        yield name, run.model_copy(update={"task": clip(run.task, detail.goal // 2, detail.goal // 2),
                                           "steps": steps})


def _opening(run: Trajectory) -> Callable[[list[Step]], list[Step]]:
    """What puts back the run's opening user turn where compression left it out, for a run whose task the agent
    never saw: that turn, not the task, opens its record (``formats._turns``), and a record that starts with the
    agent answering nobody (or calling a tool mid-conversation) teaches nothing. The opening is the first step when
    its observation is what the user said first: a step with no action (tau-bench's first user message) or a
    ``respond`` (tau2's greeting, the user's first line its reply). A level that kept no step stays empty (the
    export passes it over)."""
    first = run.steps[0] if run.steps else None
    if run.metadata.get(TASK_SEEN_BY_AGENT) is not False or first is None \
            or first.action not in (None, RESPOND) or not first.observation:
        return lambda steps: steps
    return lambda steps: steps if not steps or any(s is first for s in steps) else [first, *steps]


def _clip_arguments(arguments: Any, chars: int) -> Any:
    """Long string values cut to head and tail; the arguments stay JSON of the same shape."""
    if isinstance(arguments, str):
        return clip(arguments, chars // 2, chars // 2)
    if isinstance(arguments, dict):
        return {k: _clip_arguments(v, chars) for k, v in arguments.items()}
    if isinstance(arguments, list):
        return [_clip_arguments(v, chars) for v in arguments]
    return arguments
