"""The words every interface shares: row levels, outcomes, search modes, tool kinds.

Declared once here and imported by the store, the façade, the runtime tool,
the service's validation and the CLI, so a new mode or level cannot be known
to one door and refused by another.
"""

from __future__ import annotations

from typing import Literal

from .model import Outcome

#: Index row levels: the instruction, the extractive summary, a window of steps, a failure summary,
#: and a passage: a piece of a long output its step window clips (lexical leg only, no vector of its own).
LEVELS = ("task", "summary", "step", "failure", "passage")
#: Levels with a vector of their own: what dense search ranks.
DENSE_LEVELS = ("task", "summary", "step", "failure")
#: Levels with one row per run, keyed by the run alone (``represent.row_id``): fetched by key.
RUN_LEVELS = ("task", "summary", "failure")
#: How a run ended (see :class:`~trajsearch.model.Outcome`).
OUTCOMES = tuple(o.value for o in Outcome)
#: The outcomes of failed runs: the runs that get a failure row, so the outcomes failure analysis takes.
FAILED_OUTCOMES: tuple[str, ...] = (Outcome.failure.value, Outcome.infra_error.value)
#: Search modes: dense vectors, the lexical (BM25) leg, both fused, or chosen per query.
Mode = Literal["dense", "lexical", "hybrid", "auto"]
MODES: tuple[str, ...] = ("dense", "lexical", "hybrid", "auto")
#: How span formats' spans are grouped into runs at ingest: one per trace, or per conversation (session).
GROUP_BY: tuple[str, ...] = ("trace", "conversation")
#: The thresholds of the log lines a serving process writes (``--log-level``), least severe first.
LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
#: The other names Python's ``logging`` takes for a level (``logging._nameToLevel``), taken by ``--log-level`` as
#: they were before it checked its word: NOTSET (the trajsearch logger then follows the root logger's level).
LOG_LEVEL_ALIASES: dict[str, str] = {"WARN": "WARNING", "FATAL": "CRITICAL", "NOTSET": "NOTSET"}
#: What the agent's ``search_past_runs`` tool may ask for.
Kind = Literal["exemplars", "failures", "steps"]
KINDS: tuple[str, ...] = ("exemplars", "failures", "steps")
