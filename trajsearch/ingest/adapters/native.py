"""``native``: our own JSONL, one ``Trajectory`` JSON object per line.

Mapping: the record *is* the trajectory; it is validated by
``Trajectory.model_validate``, except where every adapter's output is mended
the same way, so that a run is not rejected for what other formats keep:

- an over-long text (a task over ``MAX_TASK_CHARS``; a step's thought,
  observation or error over ``MAX_STEP_FIELD_CHARS``) is clipped, head and tail
  kept and the cut marked in the text (the ingest summary names it); so are
  the longest strings of a step's ``arguments`` over that limit as JSON
  (``_common.clip_arguments``: a tool call carrying a whole file);
- a lone UTF-16 surrogate (``\\ud83d``: a JS writer cut a character in two) in
  free text becomes U+FFFD; in an id it is an error naming the field
  (``_common.mend_surrogates``);
- a run of more than ``MAX_STEPS`` steps keeps ``MAX_STEPS`` of them, as a CLI session does
  (``_agent_cli.within_step_limit``): its start, its end (where a run that failed failed) and the steps with an
  error between, each beside the step that got past it if one did, each with its own ``index``; how many it had
  and which were left out are in ``metadata.steps_truncated_from`` and ``metadata.steps_dropped``. An exporter of a long run (days of a coding
  agent's session) lost the whole run;
- a run with a ``reward`` in [0, 1] and no ``outcome`` is a success at or above
  the operator's ``--success-threshold``, else a failure (``outcome_of_reward``);
- ``null`` for a field every run has a value of (``outcome``, ``tags``,
  ``tool_versions``, ``tools_available``, ``metadata``, ``steps``, ``created_at``)
  is the field left out, as a writer of optional fields puts it (Python's
  ``None``), not a wrong type that costs the run; so is ``NaN`` for a number
  (``reward``, ``quality_score``): Python's ``json`` writes a missing float so
  (a pandas frame's empty cell), and the run was rejected as "quality_score
  should be less than or equal to 1". ``Infinity`` is a value, not a missing
  one (a grader that divided by zero): a quality score of it is out of range
  and refused so, naming the field (a reward of it is no reward, the model's
  rule for every format).

A line of ``trajsearch export -f jsonl`` ingests again as the run it was: the
export's provenance (``metadata.trajsearch``: its query, rank, similarity) is no
part of the run and is passed over, so a run exported and ingested unchanged
counts as unchanged; its texts clipped by the first ingest are not named as
clipped again. A line of ``export -f openai-chat`` / ``-f sharegpt`` is no run
(a fine-tuning transcript): it is named so, and ``-f jsonl`` pointed at.
Operator defaults fill fields the record leaves empty. Tenant:
the operator's ``tenant`` wins; a record naming a different tenant is rejected
rather than silently moved (it may be a misrouted dump). With ``tenant=None``
the record's own tenant is kept. A missing ``created_at`` becomes the dump
file's modification time, so re-reading an unchanged file yields identical
trajectories.
"""

from __future__ import annotations

import math
import re
from typing import Any

from trajsearch.model import MAX_STEPS, Trajectory, passes, valid_tenant

from ._agent_cli import within_step_limit
from ._common import (TENANT_SET_BY, Context, RecordError, apply_defaults, clip_task, date_by_file, json_object,
                      outcome_of_reward, readable_fields, validated, with_clipped_before)

NAME = "native"
#: Searched in a file's first 64 KiB when no record can be parsed from them (see ``detect``).
SIGNATURE = re.compile(r'^[\[\s]*\{\s*"trajectory_id"\s*:')
#: Where ``trajsearch export -f jsonl`` puts a record's provenance (``export.formats.to_record``).
EXPORT_PROVENANCE = "trajsearch"


def matches(record: Any) -> bool:
    return isinstance(record, dict) and "trajectory_id" in record


#: The fields every run has a value of (a list, an object, an outcome, a time): ``null`` there is a writer's way of
#: leaving one out (Python's ``None`` for an optional field, pandas' missing value), read as the field's absence.
_NEVER_NULL = frozenset(name for name, field in Trajectory.model_fields.items()
                        if not field.is_required() and (field.default_factory is not None or field.default is not None))


def _not_a_number(value: Any) -> bool:
    """Whether ``value`` is ``NaN``: how Python's ``json`` writes a float that is missing (pandas' empty cell)."""
    return isinstance(value, float) and math.isnan(value)


def not_a_run(record: Any) -> str | None:
    """A record of ``trajsearch export -f openai-chat`` or ``-f sharegpt`` (a fine-tuning transcript of a run, its
    provenance as the ``metadata``): the run is in the store it was exported from, and ``-f jsonl`` exports it as a
    record that ingests again. Or native records wrapped in an object (``{"runs": [...]}``, see
    :func:`wrapped_runs`)."""
    if wrapped := wrapped_runs(record):
        return wrapped
    if not isinstance(record, dict) or not isinstance(found := record.get("metadata"), dict):
        return None
    kind = "openai-chat" if "messages" in record else "sharegpt" if "conversations" in record else None
    if kind is None or not {"trajectory_id", "trace_uri", "rank", "query"} <= found.keys():
        return None
    return (f"this is `trajsearch export -f {kind}` output, a fine-tuning transcript of run "
            f"{found['trajectory_id']!r} (rank {found['rank']} for {found['query']!r}), not the run; export with "
            "`-f jsonl` to get records that ingest again")


def wrapped_runs(record: Any) -> str | None:
    """A JSON object whose one list holds native records (``json.dump({"runs": runs}, f)``, a newcomer's first
    try): it was "unrecognised", with no word that the records in it were right and only their wrapping was not."""
    if not isinstance(record, dict) or "trajectory_id" in record:
        return None
    for key, value in record.items():
        if isinstance(value, list) and value and isinstance(value[0], dict) \
                and {"trajectory_id", "task"} <= value[0].keys():
            return (f"a JSON object whose {key!r} list holds {len(value)} native record(s): ingest the records "
                    f"themselves, one per line (jq -c '.{key}[]' FILE > runs.jsonl) or as a JSON array")
    return None


def to_trajectory(record: Any, ctx: Context) -> Trajectory:
    record = json_object(record)
    fields = {k: v for k, v in _without_export_provenance(dict(record)).items()
              if not (v is None and k in _NEVER_NULL or _not_a_number(v))}
    own = fields.get("tenant")
    if ctx.tenant is not None:
        if own is not None and own != ctx.tenant:
            raise RecordError(_other_tenant(own, ctx.tenant, ctx.tenant_set_by))
        fields["tenant"] = ctx.tenant
    if isinstance(fields.get("task"), str):
        fields["task"] = clip_task(fields["task"])
    fields = _at_most_max_steps(fields)
    fields = apply_defaults(readable_fields(fields), ctx.defaults)
    run = with_clipped_before(validated(date_by_file(fields, ctx.source)), record)
    return _graded(run, ctx) if fields.get("outcome") is None else run


def _other_tenant(own: Any, tenant: str, set_by: str) -> str:
    """Why a record naming ``own`` is refused, and what to do instead, as the caller names a tenant
    (``TENANT_SET_BY``). The schema requires a tenant, so every record a user writes names one; ingested without
    ``--tenant`` (a first try) each was refused as not "the operator-given tenant 'default'", though no operator had
    given one, and nothing said to pass ``--tenant`` (probe 50, NC)."""
    where, fix = TENANT_SET_BY[set_by]
    said = f": to keep its runs under {own!r}, {fix.format(own=own)}" if passes(valid_tenant, own) else ""
    return f"record tenant {own!r} does not match {where.format(tenant=tenant)}{said}"


def _without_export_provenance(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` without the provenance ``export -f jsonl`` added to this run's metadata (a dict naming the same
    run, its ``rank`` and ``query``): where the exported copy came from in a search, not what the run holds."""
    metadata = fields.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(found := metadata.get(EXPORT_PROVENANCE), dict):
        return fields
    if found.get("trajectory_id") != fields.get("trajectory_id") or not {"rank", "query"} <= found.keys():
        return fields
    return {**fields, "metadata": {k: v for k, v in metadata.items() if k != EXPORT_PROVENANCE}}


def _at_most_max_steps(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with at most ``MAX_STEPS`` steps (:func:`within_step_limit`: the start, the end, the failed
    steps between), the cut noted in the metadata as CLI sessions note theirs. Metadata of a wrong type is left for
    validation to name."""
    steps, metadata = fields.get("steps"), fields.get("metadata", {})
    if not isinstance(steps, list) or len(steps) <= MAX_STEPS or not isinstance(metadata, dict):
        return fields
    metadata = dict(metadata)
    kept = [step for _, step in within_step_limit(steps, metadata)]
    return {**fields, "steps": kept, "metadata": metadata}


def _graded(run: Trajectory, ctx: Context) -> Trajectory:
    """A run that gives a reward in [0, 1] and no outcome, judged by the operator's ``--success-threshold``
    as graded runs of every format are (``outcome_of_reward``); with no reward, or one on another scale, it
    stays ``unknown``."""
    if run.reward is None or not 0.0 <= run.reward <= 1.0:
        return run
    return run.model_copy(update={"outcome": outcome_of_reward(run.reward, ctx)})
