"""Export matching runs as a few-shot or fine-tuning dataset, one record per run, each pointing back to its run.

:func:`export_runs` ranks runs exactly as ``search`` does (the same filters,
mode and grouping: one hit per run; ``outcome="success"`` by default), reads each
run's trace and writes it in one of three formats (``openai-chat``, ``sharegpt``,
``jsonl``).

What a record looks like and how the run is fetched and streamed change for
different reasons (a tool's format vs the search and the traces), so they live apart:

- :mod:`.formats`: one run as a record of each format (and the formats described).
- :mod:`.schemas`: each format's schema and checks.
- :mod:`.compress`: the run cut down, level by level, to fit ``max_tokens``.
- :mod:`.stream`: :func:`export_runs`, :class:`Export` and :func:`write` (and provenance).
  Its ``PAGE`` is read there: patch ``trajsearch.export.stream.PAGE``, not this package's copy.
"""

from __future__ import annotations

from .formats import FORMATS, RESPOND, record_text, to_record, tool_name, tool_schemas
from .schemas import OPENAI_CHAT_SCHEMA, validate_openai_chat, validate_sharegpt
from .stream import MAX_RUNS, PAGE, PROVENANCE, Export, ExportRecord, export_runs, write

__all__ = [
    "FORMATS", "MAX_RUNS", "OPENAI_CHAT_SCHEMA", "PAGE", "PROVENANCE", "RESPOND", "Export", "ExportRecord",
    "export_runs", "record_text", "to_record", "tool_name", "tool_schemas", "validate_openai_chat",
    "validate_sharegpt", "write",
]
