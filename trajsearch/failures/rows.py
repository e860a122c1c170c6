"""Failure rows as the analysis reads them: the error, task and failing tool out of a row's text.

A ``failure`` row's text is written by :func:`trajsearch.represent.failure_text`
(``Task:``, ``Error:``, ``Cause:``, ``Failing step:``...); this is the one place that
reads that layout back, and the one place that decides which row fields the
analysis pays to decode (:data:`FIELDS`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..ingest.outcomes import BARE_DETAILS
from ..store.filters import Filters
from .templates import _template, meaning_text

if TYPE_CHECKING:
    from .vectors import _Prefetch


#: The labelled lines of a failure row after its error (see represent.failure_text).
_AFTER_ERROR = re.compile(r"\n(?:Cause|Fix|What failed|Failing step): ")
_FAILING_STEP = re.compile(r"\nFailing step: ([^\s]+)")


def row_error(text: str) -> str:
    """The decisive error of a ``failure`` row: the ``Error:`` section of its text."""
    start = text.find("\nError: ")
    if start < 0:
        return text[len("Error: "):].strip() if text.startswith("Error: ") else text.strip()
    body = text[start + len("\nError: "):]
    end = _AFTER_ERROR.search(body)
    return (body[: end.start()] if end else body).strip()


def verdict_only(text: str) -> bool:
    """Whether a ``failure`` row's error is only an outcome file's verdict, worded alike for every run it failed
    (``ingest.outcomes.BARE_DETAILS``: "not resolved (in the report's unresolved_ids)"): it tells that the run
    failed, nothing of how. Similar runs anchor such a run on its task, and warnings do not show it for a pasted
    log line by its task's prose (probe E2, E2-A and E2-B)."""
    return row_error(text) in BARE_DETAILS


#: Where the lines a failure row holds of the run itself begin, after its error and cause (see represent.failure_text).
_OWN_LINES = re.compile(r"\n(?:Fix|What failed|Failing step): ")


def row_own_lines(text: str) -> str:
    """The ``Fix:``, ``What failed:`` and ``Failing step:`` lines of a ``failure`` row: what it says of the run
    beside its task, its error and the error's cause (empty if none)."""
    match = _OWN_LINES.search(text)
    return text[match.start() + 1:] if match else ""


def row_task(text: str) -> str:
    """The (clipped) task of a ``failure`` row."""
    start = text.find("\nError: ")
    return text[:start].removeprefix("Task: ").strip() if start >= 0 else ""


def row_failing_tool(text: str) -> str | None:
    """The tool of the failing step named in a ``failure`` row, if any."""
    match = _FAILING_STEP.search(text)
    return match.group(1) if match else None


#: What is read of each failure row. Every field costs decoding time at 100k rows (``tools``, an
#: array, the most); a run's tools and model come from the traces of the runs sampled per mode.
FIELDS = ["trajectory_id", "text", "env_version", "created_at", "trace_uri"]


@dataclass(slots=True)
class _Failure:
    trajectory_id: str
    trace_uri: str
    error: str
    template: str
    task: str
    failing_tool: str | None
    env_version: str
    created_at: int
    current: bool


def _read(ts: Any, filters: Filters, start: int | None, end: int, prefetch: _Prefetch | None = None
          ) -> tuple[list[_Failure], dict[str, str]]:
    """The failure rows inside ``filters`` up to ``end``, marked current (from ``start``) or previous,
    and the meaning text of each template (handed to ``prefetch`` as soon as it is first seen)."""
    out = []
    templates: dict[str, str] = {}
    masked: dict[str, str] = {}
    meanings: dict[str, str] = {}
    for row in ts.rows(filters, FIELDS):
        created = int(row.get("created_at") or 0)
        if created > end:
            continue
        text = row.get("text") or ""
        error = row_error(text)
        template = templates.get(error)
        if template is None:
            template = templates[error] = _template(error, masked)
            if template not in meanings:
                meanings[template] = meaning_text(template)
                if prefetch is not None:
                    prefetch.add(meanings[template])
        out.append(_Failure(row["trajectory_id"], row.get("trace_uri") or "", error[:600], template,
                            row_task(text)[:300], row_failing_tool(text), row.get("env_version") or "", created,
                            start is None or created >= start))
    return out, meanings
