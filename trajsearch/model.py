"""The trajectory model: one agent run and its ordered steps.

This module is the single source of truth for the trace-dump format: the JSON
Schema in ``schemas/trajectory.schema.json`` is generated from it
(``python -m trajsearch.model > schemas/trajectory.schema.json``) and a test
keeps the two in sync.
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timezone
from enum import Enum
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationInfo, field_validator, model_validator

#: Identifiers that reach Milvus filters are restricted to a safe alphabet, so a
#: value can never change the meaning of a filter expression (see store/filters.py).
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:@/+=-]{0,191}$"
TENANT_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
_ID_RE = re.compile(ID_PATTERN)
_TENANT_RE = re.compile(TENANT_PATTERN)

#: An RFC 3339 time within a leap second (``2016-12-31T23:59:60Z``; in another offset another hour, ``18:59:60-05:00``):
#: the JSON Schema's ``date-time`` allows it, Python's ``datetime`` holds no second 60.
_LEAP_SECOND = re.compile(r"^(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d):60(?:[.,]\d+)?(?=[Zz+-]|$)")


def _leap_second(value: Any) -> Any:
    """A time within a leap second as the last instant of the second before it (``23:59:59.999999``), so that it
    still sorts after that second. Such a ``created_at``, valid by the schema, cost its run ("unexpected extra
    characters at the end of the input"; probe 51, NC2); other values are left for validation."""
    if isinstance(value, str) and (leap := _LEAP_SECOND.match(value)):
        return f"{leap.group(1)}:59.999999{value[leap.end():]}"
    return value


#: A time whose UTC offset is written as pydantic does not read it, and says one instant all the same: in hours alone
#: (``+00``, ``-07``: PostgreSQL's text of a ``timestamptz``, what ``psql``, ``COPY ... TO`` and ``::text`` give), or
#: after a space (``10:00:00 +0530``: Ruby's ``Time#to_s``, which its json gem writes for a ``Time``; for a UTC time
#: ``10:00:00 UTC``, its ``"%Y-%m-%d %H:%M:%S UTC"``). Only an offset of -23:59 to +23:59: another (``+24``) is left as
#: written, for validation to quote it so (review RNC4, Q2: it was quoted as ``+24:00``, which the file does not say).
_LOOSE_OFFSET = re.compile(r"^(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?)"
                           r"(?: ([+-](?:[01]\d|2[0-3]))(?::?([0-5]\d))?|([+-](?:[01]\d|2[0-3]))| (UTC))$")


def _time_text(value: Any) -> Any:
    """A time as RFC 3339 writes it, for pydantic: a leap second as :func:`_leap_second` says, and a UTC offset
    written as PostgreSQL or Ruby write it (:data:`_LOOSE_OFFSET`) as ``+HH:MM``. Such a ``created_at`` rejected its
    run ("unexpected extra characters at the end of the input"; probe 53, NC4; Ruby's UTC, review RNC4); other
    values are left for validation, which quotes them as written."""
    value = _leap_second(value)
    if isinstance(value, str) and (loose := _LOOSE_OFFSET.match(value)):
        clock, hours, minutes, bare, utc = loose.groups()
        return f"{clock}{'+00' if utc else hours or bare}:{minutes or '00'}"
    return value


#: Longest value a filter can name (env and policy versions, task families, tools, models).
MAX_FILTER_VALUE_CHARS = 200
#: Most values one filter may name (the service's bound on a repeated field), and the larger one for tools where an
#: agent's tools are named (a runtime context's, ``failures --tool``): :func:`given_filter_values` applies them.
MAX_FILTER_VALUES = 32
MAX_TOOL_VALUES = 256

#: Upper bounds that keep one record from flooding the index or the trace store.
MAX_TASK_CHARS = 20_000
MAX_STEP_FIELD_CHARS = 1_000_000
MAX_STEPS = 5_000
#: Highest step index: a signed 64-bit integer's, what the index's INT64 columns, the service's ``int64`` fields and
#: most JSON readers (Go's, Java's) hold. A higher one passed the reader and failed the whole batch at the index
#: ("Integer exceeds 64-bit range" at 2**64), its good runs with it (review AUDNT34, 2).
MAX_STEP_INDEX = 2**63 - 1
#: Deepest nesting kept in a step's ``arguments`` (deeper values break JSON encoders downstream).
MAX_ARGUMENT_DEPTH = 64


def argument_chars(arguments: Any) -> int:
    """How long a step's ``arguments`` is: a string's length, else its JSON text's (what the index reads of it).
    Bounded by :data:`MAX_STEP_FIELD_CHARS`, as the step's texts are: a tool call may carry a whole file."""
    if isinstance(arguments, str):
        return len(arguments)
    return len(json.dumps(arguments, ensure_ascii=False, default=str))


def json_strings(value: Any) -> Iterator[str]:
    """The strings in a JSON value (not its keys), depth first: what a step's arguments say, for clipping them and
    for the paths a run touched."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from json_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from json_strings(item)


def json_depth(value: Any, limit: int = 1_000) -> int:
    """How deep a JSON value nests (a scalar is 0), counted without recursion; stops past ``limit``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return deepest


#: A control character (C0 or DEL), the one spelling of the rule: :func:`filter_value` looks for it (one scan in C),
#: as does the service's filter check, and the JSON Schema states it (both read its ``\\x`` escapes alike).
CONTROL_CHARACTERS = "[\\x00-\\x1f\\x7f]"

#: :func:`filter_value`'s control-character rule as the JSON Schema states it: on the fields it guards (a tool name, a
#: model id, ...), where the schema took a step action ``"bash\\n"`` that ingest refuses, and on the id and tenant,
#: whose pattern's ``$`` a Python validator lets end before a newline (``"r1\\n"``). Ingest applies the rule itself
#: (to the guarded fields at ingest only, :data:`STORED`). A ``not`` of a bare character class, not a lookahead: Go's
#: and Java's RE2 validators refuse a lookahead, and with it the whole schema (review AUDNT34, 1). The ``type``
#: inside lets ``null`` pass where a field is nullable.
NO_CONTROL_CHARACTERS: dict[str, Any] = {"not": {"type": "string", "pattern": CONTROL_CHARACTERS}}

#: What ``str.strip()`` removes (``str.isspace()``; none lies past U+3000), spelled out for the schema's task rule:
#: ``\\S`` means other sets in other validators (ECMA's leaves out U+001C-U+001F and U+0085 and adds U+FEFF, RE2's is
#: ASCII), so a task the reader calls blank passed them (review AUDNT34, 4).
_WHITESPACE = "".join(ch for ch in map(chr, range(0x3001)) if ch.isspace())


def filter_value(value: str, field: str = "filter value") -> str:
    """``value`` if a filter can name it, else ValueError naming ``field``: at most
    :data:`MAX_FILTER_VALUE_CHARS` characters and no control characters. The one rule for both sides:
    store/filters.py refuses any other value in a filter, so a run holding one could never be selected."""
    if len(value) > MAX_FILTER_VALUE_CHARS:
        raise ValueError(f"{field} too long ({len(value)} > {MAX_FILTER_VALUE_CHARS} chars): {value[:40]!r}…")
    if re.search(CONTROL_CHARACTERS, value):
        raise ValueError(f"{field} {value[:60]!r} contains control characters")
    return value


def given_filter_value(value: str, field: str = "filter value") -> str:
    """``value`` if a caller may name it as a filter value: :func:`filter_value`, and not empty or blank. An empty one
    is most often an unset ``$VAR`` (``--env-version "$VAR"``), and what it would select is no one's guess (in
    :class:`~trajsearch.store.filters.Filters`, "" is the runs with no version recorded): the service refuses it, so
    the CLI and the MCP server refuse it too, before either backend is asked. Spaces alone are refused as well (they
    were searched literally, while the web form trims them away); a value with spaces around a word is kept as given,
    since a stored version may hold them."""
    if not value:
        raise ValueError(f"{field} must not be empty (an unset $VAR?): leave the option out not to filter by it")
    if not value.strip():
        raise ValueError(f"{field} {value[:40]!r} is blank: leave the option out not to filter by it")
    return filter_value(value, field)


def given_filter_values(values: Sequence[str], field: str, most: int = MAX_FILTER_VALUES) -> tuple[str, ...]:
    """``values`` if a caller may name them as one filter: at most ``most`` of them, each a
    :func:`given_filter_value`. The one rule the CLI and the MCP server apply before either backend is asked: the CLI
    had checked each value, never how many, so 33 ``--tool`` found "no matches" embedded and were refused over
    --server (review RT2, 2)."""
    if len(values) > most:
        raise ValueError(f"{field}: at most {most} values, got {len(values)}")
    return tuple(given_filter_value(value, field) for value in values)


#: The validation context of a run read back from the trace store (or a server's): the rules ingest applies to a
#: new run (:func:`filter_value`, the date range) are not applied again, so a run stored before a rule existed
#: stays readable (shown, exported) instead of going dark.
STORED: dict[str, Any] = {"stored": True}


def _stored(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get("stored"))


def _filterable(value: str | None, info: ValidationInfo) -> str | None:
    return value if value is None or _stored(info) else filter_value(value, info.field_name or "value")


class Outcome(str, Enum):
    success = "success"
    failure = "failure"
    infra_error = "infra_error"
    unknown = "unknown"


#: ``metadata["outcome_basis"]`` of a run counted a success because it handed its work in (a SWE-bench
#: agent's submitted patch) with no verdict in the dump: shown as such, never as "successful", until an
#: outcome file (``ingest --outcomes``) says.
UNEVALUATED = "submitted, not evaluated (no test result in the dump)"
#: How such a run's outcome is shown (:func:`outcome_shown`).
SUBMITTED = "submitted, not evaluated"
#: The ``metadata`` key an adapter sets to ``False`` when the run's task is no message the agent got: a user
#: simulator's hidden script (tau-bench's ``instruction``, tau2's ``user_scenario``) or a placeholder naming the
#: task. The task still says what the run was about (search, exemplars); an export starts the conversation at
#: the steps instead (``export.formats._turns``).
TASK_SEEN_BY_AGENT = "task_seen_by_agent"


def outcome_shown(run: Trajectory) -> str:
    """A run's outcome as a reader is told it: :data:`SUBMITTED` for an :data:`UNEVALUATED` success."""
    if run.outcome is Outcome.success and run.metadata.get("outcome_basis") == UNEVALUATED:
        return SUBMITTED
    return run.outcome.value


def outcomes_shown(hits: Iterable[Any], read_trace: Callable[[str], Trajectory], *,
                   read_failed: type[Exception] | tuple[type[Exception], ...],
                   store_down: Callable[[Exception], bool],
                   known: Mapping[str, str] | None = None) -> dict[str, str]:
    """Each hit's run's outcome as a reader is told it (:func:`outcome_shown`), by run id: ``known`` (a run's
    outcome shown, read without its trace), else from its trace, by ``read_trace(trace_uri)``, for a successful
    run only (the only outcome told otherwise), one read per run however many of its hits were found.

    A read that fails (``read_failed``, or ``LookupError``, ``ValueError``, ``PermissionError``: a trace gone,
    refused, damaged) leaves its row's outcome: one bad trace failed a whole search. One that ``store_down`` says
    is the store or the server unreachable or slow leaves the rows' outcomes for the rest too, rather than each
    waiting for the same failure; any other (a damaged trace, answered DATA_LOSS by a server) is that run's only:
    taken for the server failing, it left every later run handed in with no verdict shown "success".
    The one loop of the façade (:meth:`~trajsearch.search.TrajSearch.outcomes_shown`) and the CLI's remote backend.
    """
    hits = list(hits)
    shown = {h.trajectory_id: h.outcome for h in hits}
    known = known or {}
    asked = {h.trajectory_id: h.trace_uri for h in hits if h.outcome == Outcome.success.value}
    failed = read_failed if isinstance(read_failed, tuple) else (read_failed,)
    for run, trace_uri in asked.items():
        if run in known:
            shown[run] = known[run]
            continue
        try:
            shown[run] = outcome_shown(read_trace(trace_uri))
        except (LookupError, ValueError, PermissionError, *failed) as exc:  # the row's outcome stands
            if store_down(exc):  # the store or the server: no wait on each of the rest
                break
    return shown


class Failure(BaseModel):
    """What went wrong in a run, why, and what fixed it (each where known)."""

    model_config = ConfigDict(extra="forbid")

    error: str = Field(max_length=MAX_TASK_CHARS)
    cause: str | None = Field(default=None, max_length=MAX_TASK_CHARS)
    fix: str | None = Field(default=None, max_length=MAX_TASK_CHARS)


class Step(BaseModel):
    """One agent turn: why (thought), what (action + arguments), and what came back."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=0, description="Position in the run, 0-based, strictly increasing.",
                       json_schema_extra={"maximum": MAX_STEP_INDEX})
    thought: str | None = Field(default=None, max_length=MAX_STEP_FIELD_CHARS)
    action: str | None = Field(default=None, max_length=MAX_FILTER_VALUE_CHARS, description="Tool name.",
                               json_schema_extra=NO_CONTROL_CHARACTERS)
    arguments: Any = Field(default=None, description=f"Tool arguments as JSON, nested at most {MAX_ARGUMENT_DEPTH} "
                           "levels deep.")
    observation: str | None = Field(
        default=None, max_length=MAX_STEP_FIELD_CHARS, description="Tool result / environment reply."
    )
    error: str | None = Field(default=None, max_length=MAX_STEP_FIELD_CHARS)
    started_at: datetime | None = None
    ended_at: datetime | None = None

    _action_filterable = field_validator("action")(_filterable)

    @field_validator("index")
    @classmethod
    def _held(cls, value: int, info: ValidationInfo) -> int:
        """At most :data:`MAX_STEP_INDEX`, at ingest only: a run stored before the rule stays readable."""
        if value > MAX_STEP_INDEX and not _stored(info):
            raise ValueError(f"{value} is over {MAX_STEP_INDEX} (2**63 - 1), the highest step index the store takes")
        return value
    _time_texts = field_validator("started_at", "ended_at", mode="before")(_time_text)

    @field_validator("arguments")
    @classmethod
    def _shallow(cls, value: Any, info: ValidationInfo) -> Any:
        if json_depth(value, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
            raise ValueError(f"nested deeper than {MAX_ARGUMENT_DEPTH} levels")
        if not _stored(info) and value is not None and (size := argument_chars(value)) > MAX_STEP_FIELD_CHARS:
            raise ValueError(f"{size:,} characters as JSON, over the limit of {MAX_STEP_FIELD_CHARS:,}")
        return value


class Trajectory(BaseModel):
    """One agent run: the task, the steps taken, and how it ended."""

    model_config = ConfigDict(extra="forbid")

    trajectory_id: str = Field(pattern=ID_PATTERN, json_schema_extra=NO_CONTROL_CHARACTERS)
    tenant: str = Field(pattern=TENANT_PATTERN, json_schema_extra=NO_CONTROL_CHARACTERS)
    task: str = Field(min_length=1, max_length=MAX_TASK_CHARS, description="Instruction / user goal; not blank.",
                      json_schema_extra={"pattern": f"[^{_WHITESPACE}]"})
    task_id: str | None = Field(default=None, max_length=200)
    task_family: str | None = Field(default=None, max_length=MAX_FILTER_VALUE_CHARS,
                                    json_schema_extra=NO_CONTROL_CHARACTERS)
    policy_version: str | None = Field(default=None, max_length=100, json_schema_extra=NO_CONTROL_CHARACTERS)
    env_version: str | None = Field(default=None, max_length=100, json_schema_extra=NO_CONTROL_CHARACTERS)
    tool_versions: dict[str, str] = Field(default_factory=dict)
    tools_available: list[str] = Field(default_factory=list, json_schema_extra={
        "items": {"type": "string", "maxLength": MAX_FILTER_VALUE_CHARS, **NO_CONTROL_CHARACTERS}})
    outcome: Outcome = Outcome.unknown
    reward: float | None = None
    created_at: datetime = Field(default_factory=lambda: datetime.now(timezone.utc),
                                 description="An instant within the years 1 to 9999 in UTC.")
    model_id: str | None = Field(default=None, max_length=MAX_FILTER_VALUE_CHARS,
                                 json_schema_extra=NO_CONTROL_CHARACTERS)
    tags: list[str] = Field(default_factory=list)
    quality_score: float | None = Field(default=None, ge=0.0, le=1.0)
    failure: Failure | None = None
    what_worked: str | None = Field(default=None, max_length=MAX_TASK_CHARS)
    what_failed: str | None = Field(default=None, max_length=MAX_TASK_CHARS)
    metadata: dict[str, Any] = Field(default_factory=dict,
                                     description=f"Nested at most {MAX_ARGUMENT_DEPTH} levels deep.")
    steps: list[Step] = Field(default_factory=list, max_length=MAX_STEPS, description=(
        f"At most {MAX_STEPS:,} in a stored run. A record of more is read, not rejected (as a long CLI session "
        f"is): it keeps its first and last {MAX_STEPS // 4:,} steps, every step with an error between them, and "
        "fills the rest of the limit from both ends, each step keeping its index; metadata.steps_truncated_from "
        "(how many it had) and metadata.steps_dropped ([count, first index, last index] of the stretch left out) "
        "say so."))
    #: The texts that came in already clipped (a run exported with ``-f jsonl`` and read again): not part of the
    #: run, only for the ingest summary to name what this read clipped (``ingest.adapters._common.clipped_fields``).
    _clipped_before: frozenset[str] = PrivateAttr(default=frozenset())

    _created_as_written = field_validator("created_at", mode="before")(_time_text)

    @field_validator("created_at")
    @classmethod
    def _aware(cls, value: datetime, info: ValidationInfo) -> datetime:
        """Naive times are UTC; an instant outside the years 1 to 9999 in UTC (``datetime.min`` written in a
        zone east of UTC: 0001-01-01T00:00:00+01:00) is refused at ingest, as no date of Python's can hold it for a
        page (a stored one is shown as best the pages can)."""
        value = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        if _stored(info):
            return value
        try:
            value.astimezone(timezone.utc)
        except OverflowError:
            raise ValueError(f"{value.isoformat()} is outside the years 1 to 9999 in UTC") from None
        return value

    _filterable_fields = field_validator("env_version", "policy_version", "task_family", "model_id")(_filterable)

    @field_validator("task")
    @classmethod
    def _worded(cls, value: str, info: ValidationInfo) -> str:
        """A task of whitespace alone is no task: nothing to find the run by (probe F, F7: one was a success)."""
        if not _stored(info) and not value.strip():
            raise ValueError("the task is blank (whitespace only)")
        return value

    @field_validator("reward")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        """``NaN`` / ``Infinity`` (Python's json writes them) is no reward: unknown, as the store keeps it, so a
        dry run's ``--json`` stays JSON (probe F, F8)."""
        return value if value is None or math.isfinite(value) else None

    @field_validator("tools_available")
    @classmethod
    def _filterable_tools(cls, value: list[str], info: ValidationInfo) -> list[str]:
        for tool in () if _stored(info) else value:
            filter_value(tool, "tools_available")
        return value

    @field_validator("metadata", "tool_versions")
    @classmethod
    def _shallow_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        if json_depth(value, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
            raise ValueError(f"nested deeper than {MAX_ARGUMENT_DEPTH} levels")
        return value

    @model_validator(mode="after")
    def _ordered_steps(self) -> Trajectory:
        """Steps in order, each index once; the first out of place is named (in a run of hundreds of steps, "not
        increasing" alone leaves the writer to search)."""
        indexes = [s.index for s in self.steps]
        at = next((n for n in range(1, len(indexes)) if indexes[n] <= indexes[n - 1]), None)
        if at is not None:
            again = "repeats" if indexes[at] == indexes[at - 1] else "is below"
            raise ValueError(f"steps must have strictly increasing 'index' values: steps[{at}].index {indexes[at]} "
                             f"{again} steps[{at - 1}].index {indexes[at - 1]}")
        return self

    @property
    def tools_used(self) -> list[str]:
        """Distinct tool names in order of first use."""
        return list(dict.fromkeys(s.action for s in self.steps if s.action))


def valid_tenant(value: str) -> str:
    """Return ``value`` if it is a well-formed tenant name, else raise ValueError."""
    if not isinstance(value, str) or not _TENANT_RE.fullmatch(value):
        raise ValueError(f"invalid tenant {value!r}: expected {TENANT_PATTERN}")
    return value


def valid_id(value: str, what: str = "trajectory_id") -> str:
    """Return ``value`` if it is a well-formed identifier, else raise ValueError."""
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise ValueError(f"invalid {what} {value!r}: expected {ID_PATTERN}")
    return value


#: How many runs one run may name as superseded (no adapter names more: a Codex thread's reverts are followed
#: through at most 100 rollouts).
MAX_SUPERSEDED = 100


def superseded(run: Trajectory) -> list[str]:
    """The ids of the runs ``run`` takes the place of: ``metadata["supersedes"]``, well-formed ids other than its own,
    at most ``MAX_SUPERSEDED``. Ingest removes those runs whatever they hold (``trajsearch.indexer``): a Codex
    thread's rollouts read alone, a SWE-agent attempt's earlier copy."""
    return _named_ids(run, "supersedes")


#: Metadata naming the ids older versions of trajsearch gave this run (a mini-swe-agent run's folder-named
#: ``<output folder>.<instance_id>`` before round 27, a domainless tau2 run's ``tau2.tau2...`` before round 28, a
#: Harbor multi-step trial's step session, or its step conversion named as if the step's folder were the trial,
#: before round 29, and the session of the step it was running when it stopped (in the trial's own ``agent/``) before
#: round 30; each with its ``+<digest>`` form, set by ``ingest.adapters._common.with_former_id``). Unlike
#: ``supersedes`` an id says nothing of what is stored under it now: another attempt whose folder bore the same name
#: may hold it. So ingest removes the run stored under one only when it is this run
#: (``ingest.read.same_run_anywhere``), ``delete --from`` likewise, and an outcomes file keyed by one judges this run.
FORMER_IDS = "former_ids"


def former_ids(run: Trajectory) -> list[str]:
    """``metadata["former_ids"]`` (see :data:`FORMER_IDS`): well-formed ids other than the run's own."""
    return _named_ids(run, FORMER_IDS)


def _named_ids(run: Trajectory, key: str) -> list[str]:
    ids = run.metadata.get(key)
    found: list[str] = []
    for old in ids[:MAX_SUPERSEDED] if isinstance(ids, list) else []:
        try:
            if valid_id(old) != run.trajectory_id:
                found.append(old)
        except ValueError:
            continue
    return found


def passes(check: Callable[[Any], object], value: Any) -> bool:
    """Whether ``check`` (a validator raising ValueError: :func:`valid_tenant`, :func:`valid_id`, a filter's value
    check) takes ``value``: for a suggestion or a choice offered only where the value could be used."""
    try:
        check(value)
    except ValueError:
        return False
    return True


def json_schema() -> dict[str, Any]:
    schema = Trajectory.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://trajsearch.dev/schemas/trajectory.schema.json"
    return schema


if __name__ == "__main__":
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
