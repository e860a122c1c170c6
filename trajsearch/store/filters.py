"""Hard applicability filters, built in exactly one place.

Milvus Lite has no filter templating, so every filter is an expression string.
The only way values get into one is through :func:`quote`, which accepts
validated values and escapes them strictly; callers never paste strings.
:class:`Filters` also evaluates itself on a plain row (``matches``) so an
index kept outside Milvus (the lexical leg) applies the very same rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..model import Outcome, filter_value, valid_id, valid_tenant
from ..vocab import LEVELS
from .fields import ONE_OF_FIELDS


def quote(value: str, field: str = "filter value") -> str:
    """Render ``value`` as a Milvus string literal; errors name ``field``.

    Backslashes and double quotes are escaped; control characters and
    over-long values are refused outright (:func:`~trajsearch.model.filter_value`,
    the rule ingest applies too: no stored value has them).
    """
    return _literal(_checked(value, field))


def _checked(value: str, field: str) -> str:
    """``value`` if it may be a filter value (:func:`~trajsearch.model.filter_value`), else the error naming ``field``."""
    if not isinstance(value, str):
        raise TypeError(f"{field} must be a string, got {type(value).__name__}")
    filter_value(value, field)
    return value


def _literal(text: str) -> str:
    """``text`` as a Milvus string literal: backslashes and double quotes escaped (checked by the caller)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _in(field_name: str, values: Iterable[str]) -> str:
    items = sorted(set(values))
    if len(items) == 1:
        return f"{field_name} == {quote(items[0])}"
    return f"{field_name} in [{', '.join(quote(v) for v in items)}]"


def starts_with(field_name: str, value: str, *, anywhere: bool = False) -> str:
    """A Milvus ``like`` expression: ``field_name`` starts with ``value`` (holds it, ``anywhere``). The pattern's
    wildcards (``%``, ``_``: every SWE-bench id holds ``__``) are escaped, then the whole written as a literal. The
    value is checked as any filter value, before its escapes: an id of 192 characters holding many ``_`` passed as a
    pattern twice as long was refused as a filter value "too long" (review RZ2)."""
    pattern = _checked(value, field_name).replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"{field_name} like {_literal(('%' if anywhere else '') + pattern + '%')}"


def as_tuple(values: str | Iterable[str] | None) -> tuple[str, ...]:
    """A filter value as callers pass it (one string, several, or None) as a tuple of values.

    A lone string is one value, not its characters; the runtime context takes its versions
    and tools the same way, through this.
    """
    if values is None:
        return ()
    if isinstance(values, str):
        return (values,)
    return tuple(values)


@dataclass(frozen=True)
class Filters:
    """Typed, validated filters. ``tenant`` is mandatory and comes from trusted context.

    Empty tuples mean "no constraint". ``tools`` keeps rows whose tool list
    contains *any* of the given tools.
    """

    tenant: str
    levels: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    env_versions: tuple[str, ...] = ()
    policy_versions: tuple[str, ...] = ()
    task_families: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    trajectory_ids: tuple[str, ...] = ()
    exclude_trajectory_ids: tuple[str, ...] = ()
    created_after: int | None = None  # epoch seconds

    def __post_init__(self) -> None:
        valid_tenant(self.tenant)
        for name in ("levels", "outcomes", "env_versions", "policy_versions", "task_families",
                     "tools", "trajectory_ids", "exclude_trajectory_ids"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        unknown = set(self.levels) - set(LEVELS)
        if unknown:
            raise ValueError(f"unknown level(s) {sorted(unknown)}: expected some of {list(LEVELS)}")
        outcomes = {o.value for o in Outcome}
        bad = set(self.outcomes) - outcomes
        if bad:
            raise ValueError(f"unknown outcome(s) {sorted(bad)}: expected some of {sorted(outcomes)}")
        for tid in self.trajectory_ids + self.exclude_trajectory_ids:
            valid_id(tid)
        for name in ("env_versions", "policy_versions", "task_families", "tools"):
            for value in getattr(self, name):
                quote(value, name)  # validates
        if self.created_after is not None and (
            isinstance(self.created_after, bool) or not isinstance(self.created_after, int)
            or not 0 <= self.created_after < 2**53
        ):
            raise ValueError(f"created_after must be epoch seconds from 0 to 2**53, got {self.created_after!r}")

    def _one_of(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(field, allowed values) of every "field is one of" constraint: one list for both evaluators."""
        return tuple((name, getattr(self, attr)) for name, attr in ONE_OF_FIELDS)

    def fields(self) -> list[str]:
        """The row fields :meth:`matches` reads for these filters (the tenant, and each field constrained)."""
        names = ["tenant", *(name for name, values in self._one_of() if values)]
        if self.exclude_trajectory_ids:
            names.append("trajectory_id")
        if self.tools:
            names.append("tools")
        if self.created_after is not None:
            names.append("created_at")
        return list(dict.fromkeys(names))

    def to_expr(self) -> str:
        """The Milvus boolean expression for these filters."""
        parts = [f"tenant == {quote(self.tenant)}"]
        for name, values in self._one_of():
            if values:
                parts.append(_in(name, values))
        if self.exclude_trajectory_ids:
            parts.append(f"not ({_in('trajectory_id', self.exclude_trajectory_ids)})")
        if self.tools:
            parts.append(f"array_contains_any(tools, [{', '.join(quote(t) for t in sorted(set(self.tools)))}])")
        if self.created_after is not None:
            parts.append(f"created_at >= {int(self.created_after)}")
        return " and ".join(parts)

    def matches(self, row: Mapping[str, Any]) -> bool:
        """The same rules as :meth:`to_expr`, evaluated on one row (a dict of fields)."""
        if row.get("tenant") != self.tenant:
            return False
        for name, values in self._one_of():
            if values and row.get(name) not in values:
                return False
        if self.exclude_trajectory_ids and row.get("trajectory_id") in self.exclude_trajectory_ids:
            return False
        if self.tools and not set(self.tools) & set(row.get("tools") or ()):
            return False
        if self.created_after is not None and int(row.get("created_at") or 0) < self.created_after:
            return False
        return True

    def ids_expr(self, ids: Iterable[str]) -> str:
        """Restrict these filters to primary keys ``ids`` (a key lookup, not a scan)."""
        return f"id in [{', '.join(quote(i) for i in ids)}] and {self.to_expr()}"
