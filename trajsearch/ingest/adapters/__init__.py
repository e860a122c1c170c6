"""Format adapters: one module per dump format, each turning a parsed record into a Trajectory.

Every adapter module exposes ``NAME``, ``matches(record) -> bool`` (used by
format detection) and ``to_trajectory(record, ctx) -> Trajectory``, and
documents its field mapping in its module docstring. File handling (JSONL,
arrays, gzip, positions, error messages) lives in ``trajsearch.ingest.read``.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from trajsearch.model import Trajectory

from . import mini_swe_agent, native, tau_bench
from ._common import DEFAULT_TENANT, Context, RecordError

ADAPTERS: dict[str, ModuleType] = {m.NAME: m for m in (native, mini_swe_agent, tau_bench)}
FORMATS: tuple[str, ...] = tuple(ADAPTERS)


def adapter_for(fmt: str) -> ModuleType:
    """The adapter module for ``fmt``; ValueError naming the supported formats otherwise."""
    try:
        return ADAPTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}: supported formats are {', '.join(FORMATS)}") from None


def format_of(record: Any) -> str | None:
    """The format whose records look like ``record`` (by its keys), or None."""
    return next((name for name, mod in ADAPTERS.items() if mod.matches(record)), None)


def to_trajectory(fmt: str, record: Any, ctx: Context) -> Trajectory:
    return adapter_for(fmt).to_trajectory(record, ctx)


__all__ = [
    "ADAPTERS",
    "DEFAULT_TENANT",
    "FORMATS",
    "Context",
    "RecordError",
    "adapter_for",
    "format_of",
    "to_trajectory",
]
