"""The index row's fields, once: the collection schema and every field list are derived from here.

A row is one searchable piece of a run (see :mod:`trajsearch.represent`); what
it carries is chosen for search only (the full run lives in the trace store).
Each :class:`Column` says how Milvus stores the field and which of the
derived lists it belongs to:

- ``OUTPUT_FIELDS``: what a hit brings back (everything but the vector; a
  :class:`~trajsearch.results.Hit` is built from these);
- ``FILTER_FIELDS``: what a :class:`~trajsearch.store.filters.Filters` may
  constrain (and the lexical index keeps as filter columns, ``ONE_OF_FIELDS``
  being the single-valued ones, in ``Filters``' order);
- ``LEXICAL_FIELDS``: what the in-process lexical index needs of a row.

This module is plain data (no pymilvus), so light modules can read it.
"""

from __future__ import annotations

from dataclasses import dataclass

#: Longest ``text`` a row keeps (characters).
MAX_TEXT = 16_384


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # "text" | "int" | "float" | "json" | "tags" (array of short strings) | "vector"
    max_length: int = 0  # text / tags: characters per value
    nullable: bool = False
    output: bool = True  # returned with a hit
    filter: bool = False  # a Filters constraint may name it
    one_of: str = ""  # the Filters attribute of a single-valued "one of" constraint


COLUMNS: tuple[Column, ...] = (
    Column("id", "text", 64),
    Column("tenant", "text", 64, filter=True),
    Column("trajectory_id", "text", 200, filter=True, one_of="trajectory_ids"),
    Column("level", "text", 16, filter=True, one_of="levels"),
    Column("step_index", "int"),
    Column("step_end", "int"),
    Column("task_id", "text", 200),
    Column("task_family", "text", 200, filter=True, one_of="task_families"),
    Column("policy_version", "text", 100, filter=True, one_of="policy_versions"),
    Column("env_version", "text", 100, filter=True, one_of="env_versions"),
    Column("tool_versions", "json"),
    Column("tools", "tags", 200, filter=True),
    Column("outcome", "text", 16, filter=True, one_of="outcomes"),
    Column("reward", "float", nullable=True),
    Column("quality_score", "float", nullable=True),
    Column("created_at", "int", filter=True),
    Column("text", "text", MAX_TEXT),
    Column("steps", "json"),
    Column("trace_uri", "text", 1024),
    Column("content_hash", "text", 64),
    Column("embedding", "vector", output=False),
)
#: Most tools a row lists.
MAX_TOOLS = 64

OUTPUT_FIELDS: list[str] = [c.name for c in COLUMNS if c.output]
FILTER_FIELDS: list[str] = [c.name for c in COLUMNS if c.filter]
#: (row field, Filters attribute) of every single-valued "field is one of" constraint.
ONE_OF_FIELDS: tuple[tuple[str, str], ...] = tuple((c.name, c.one_of) for c in COLUMNS if c.one_of)
LEXICAL_FIELDS: list[str] = ["id", "text", *FILTER_FIELDS]
