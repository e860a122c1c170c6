"""``native``: our own JSONL, one ``Trajectory`` JSON object per line.

Mapping: the record *is* the trajectory; it is validated by
``Trajectory.model_validate``, except that an over-long text (a task over
``MAX_TASK_CHARS``; a step's thought, observation or error over
``MAX_STEP_FIELD_CHARS``) is clipped as every adapter clips it, head and tail
kept and the cut marked in the text (the ingest summary names it), rather than
the whole run rejected for one big ``cat`` or a pasted log. A lone UTF-16
surrogate (``\\ud83d``: a JS writer cut a character in two) in free text becomes U+FFFD, in an id it is an
error naming the field, as in every format (``_common.mend_surrogates``). A run with a ``reward`` in
[0, 1] and no ``outcome`` is a success at or above the operator's ``--success-threshold``, else a failure
(``outcome_of_reward``). Operator defaults fill fields the record leaves empty. Tenant: the operator's
``tenant`` wins; a record naming a different tenant is rejected rather than silently moved (it may be a
misrouted dump).
With ``tenant=None`` the record's own tenant is kept. A missing ``created_at``
becomes the dump file's modification time, so re-reading an unchanged file
yields identical trajectories.
"""

from __future__ import annotations

import re
from typing import Any

from trajsearch.model import Trajectory

from ._common import (Context, RecordError, apply_defaults, clip_task, date_by_file, json_object, outcome_of_reward,
                      readable_fields)

NAME = "native"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'^[\[\s]*\{\s*"trajectory_id"\s*:')


def matches(record: Any) -> bool:
    return isinstance(record, dict) and "trajectory_id" in record


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    fields = dict(record)
    own = fields.get("tenant")
    if ctx.tenant is not None:
        if own is not None and own != ctx.tenant:
            raise RecordError(
                f"record tenant {own!r} does not match the operator-given tenant {ctx.tenant!r}"
            )
        fields["tenant"] = ctx.tenant
    if isinstance(fields.get("task"), str):
        fields["task"] = clip_task(fields["task"])
    fields = apply_defaults(readable_fields(fields), ctx.defaults)
    run = Trajectory.model_validate(date_by_file(fields, ctx.source))
    return _graded(run, ctx) if fields.get("outcome") is None else run


def _graded(run: Trajectory, ctx: Context) -> Trajectory:
    """A run that gives a reward in [0, 1] and no outcome, judged by the operator's ``--success-threshold``
    as graded runs of every format are (``outcome_of_reward``); with no reward, or one on another scale, it
    stays ``unknown``."""
    if run.reward is None or not 0.0 <= run.reward <= 1.0:
        return run
    return run.model_copy(update={"outcome": outcome_of_reward(run.reward, ctx)})

